// SPDX-License-Identifier: MIT OR Apache-2.0
//! Deterministic simulation of a program's own rank code (docs/src/semantics.md §7).
//!
//! [`simulate`] runs the same rank function as [`crate::local`], with the same library, but on a
//! seeded scheduler: exactly one rank's thread runs at a time, every library call (and every
//! wait, every `test`) is a scheduling point, and the seed decides who runs next, the order in
//! which packets cross between pairs of ranks (per pair, the order they were sent in), and when
//! each survivor's detector learns of a death. Kills come from a fault plan in the grammar of
//! [`crate::fault`], given or drawn from the seed ([`Simulation::random_kills`]). The same seed
//! and plan give the same run, step for step: [`SimRun::trace_hash`] says so, and
//! [`SimRun::token`] is what reproduces it ([`Simulation::replay`]).
//!
//! [`explore`] runs many seeds across the host's cores, judges each run with the program's own
//! verdict and the library's checks (no hang, no panic), reports the lowest failing seed, and
//! shrinks its fault plan to the smallest one that still fails.
//!
//! ```
//! // Four ranks sum their ranks; up to one dies somewhere; the survivors agree and go on.
//! let run = runthrough::simulate(4).seed(7).random_kills(1).run(|world| {
//!     let mut sum = [0u32];
//!     if world.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum).is_err() {
//!         world.validate_global()?;
//!     }
//!     Ok::<_, runthrough::Error>(())
//! });
//! assert!(run.hang.is_none());
//! let again = runthrough::simulate(4).replay(&run.token()).unwrap().run(|world| {
//!     let mut sum = [0u32];
//!     if world.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum).is_err() {
//!         world.validate_global()?;
//!     }
//!     Ok::<_, runthrough::Error>(())
//! });
//! assert_eq!(run.trace_hash, again.trace_hash);
//! ```

use runthrough_core::WorldRank;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use runthrough_core::fault::{Fault, FaultPlan, InjectedBy, Trigger};
use runthrough_core::Rank;

use crate::comm::Comm;
use crate::endpoint::Endpoint;
use crate::transport::simulated::Simulated;
use crate::transport::Transport;
use crate::universe::{run_rank, RankOutcome};

/// The environment variable that makes [`Explorer::run`] run one replay token instead of its
/// seeds (`RUNTHROUGH_REPLAY='SEED/PLAN' cargo test …`).
pub const ENV_REPLAY: &str = "RUNTHROUGH_REPLAY";

/// Default step budget of a simulated run: a run that takes more steps is reported as a hang.
pub const DEFAULT_STEP_BUDGET: u64 = 20_000_000;

/// Default span of the steps at which false suspicions start (1..=this).
pub const DEFAULT_SUSPICION_HORIZON: u64 = 5_000;

/// Default range of the call numbers at which [`Simulation::random_kills`] kills (`call:K`
/// with K in 1..=horizon).
pub const DEFAULT_KILL_HORIZON: u64 = 40;

/// Starts building a simulated job of `n` ranks (`n >= 1`).
pub fn simulate(n: u32) -> Simulation {
    assert!(n >= 1, "a job has at least one rank");
    Simulation {
        size: n,
        seed: 0,
        plan: FaultPlan::new(),
        random_kills: 0,
        suspicions: 0,
        suspicion_horizon: DEFAULT_SUSPICION_HORIZON,
        horizon: DEFAULT_KILL_HORIZON,
        trace: false,
        budget: DEFAULT_STEP_BUDGET,
        unexpected_cap: None,
    }
}

/// A simulated job being set up: its size, seed, kills and limits.
#[derive(Debug, Clone)]
pub struct Simulation {
    size: u32,
    seed: u64,
    plan: FaultPlan,
    random_kills: u32,
    suspicions: u32,
    suspicion_horizon: u64,
    horizon: u64,
    trace: bool,
    budget: u64,
    unexpected_cap: Option<usize>,
}

/// A replay token that does not parse ([`Simulation::replay`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenError(String);

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TokenError {}

impl Simulation {
    /// The seed of the schedule (and of the kills [`Simulation::random_kills`] draws).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Plans the faults of `plan`, as [`crate::LocalUniverse::faults`] does; a timed fault
    /// (`RANK@SECONDS`) counts virtual time.
    ///
    /// # Panics
    /// On a fault of a rank outside the job, or at an application's step (`iteration:K`,
    /// `recovery:N`), which only the program can inject.
    pub fn faults(mut self, plan: &FaultPlan) -> Self {
        crate::universe::check_plan(plan, self.size);
        for fault in plan.faults() {
            self.plan.push(*fault);
        }
        self
    }

    /// Adds up to `max` kills drawn from the seed (at most `n - 1`): each
    /// kills a different rank (of those the given plan does not name), half of the time as it starts its K-th library call (K in
    /// 1..=the horizon), a quarter before its K-th packet of any kind (K in 1..=twice the
    /// horizon: inside a collective, between a message and its credit...), a quarter inside its
    /// first to third agreement on the world communicator (`validate_global`, `agree`,
    /// `shrink`), before one of its first four messages there.
    /// The drawn kills join the run's plan ([`SimRun::plan`]), so its token replays them.
    pub fn random_kills(mut self, max: u32) -> Self {
        self.random_kills = max.min(self.size - 1);
        self
    }

    /// Adds up to `max` false suspicions drawn from the seed: at a step the seed picks (in
    /// 1..=[`Simulation::suspicion_horizon`]), one live rank's detector reports another live rank
    /// failed, which runs on until it is fenced (killed) 50 to 2,000 steps later, or halts on
    /// learning from an agreement that its peers declared it failed. A fence counts as a death
    /// in [`SimRun::fired`] (as `RANK@SECONDS`, virtual time). The token carries the setting.
    pub fn false_suspicions(mut self, max: u32) -> Self {
        self.suspicions = max;
        self
    }

    /// False suspicions start at steps 1..=`steps` (default [`DEFAULT_SUSPICION_HORIZON`]);
    /// [`SimRun::steps`] tells how many steps a program takes. Not part of the token: replay
    /// with the same setting.
    pub fn suspicion_horizon(mut self, steps: u64) -> Self {
        self.suspicion_horizon = steps.max(1);
        self
    }

    /// The call numbers random kills land at: 1..=`calls` (default [`DEFAULT_KILL_HORIZON`]).
    pub fn kill_horizon(mut self, calls: u64) -> Self {
        self.horizon = calls.max(1);
        self
    }

    /// A run that takes more than `steps` scheduling steps is a hang ("the step budget ran
    /// out"; default [`DEFAULT_STEP_BUDGET`]).
    pub fn step_budget(mut self, steps: u64) -> Self {
        self.budget = steps;
        self
    }

    /// Keeps the run's steps in words in [`SimRun::trace`] (who ran, each delivery, each death
    /// and suspicion), to read a replayed failure.
    pub fn trace(mut self, keep: bool) -> Self {
        self.trace = keep;
        self
    }

    /// Caps each rank's unexpected bytes, as [`crate::LocalUniverse::unexpected_cap`].
    pub fn unexpected_cap(mut self, cap: usize) -> Self {
        self.unexpected_cap = Some(cap);
        self
    }

    /// The run that `token` ([`SimRun::token`]: `SEED/PLAN`) names: its seed and its whole fault
    /// plan, with no random kills on top.
    ///
    /// # Errors
    /// A [`TokenError`] naming what does not parse, or a fault of a rank outside the job.
    pub fn replay(mut self, token: &str) -> Result<Self, TokenError> {
        let (seed, rest) = token
            .trim()
            .split_once('/')
            .ok_or_else(|| TokenError(format!("{token:?}: a replay token is SEED/PLAN")))?;
        let (plan, suspicions) = match rest.split_once('/') {
            None => (rest, 0),
            Some((plan, mode)) => {
                let max = mode
                    .strip_prefix("suspicions:")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| {
                        TokenError(format!(
                            "{token:?}: {mode:?} is not suspicions:N (SEED/PLAN/suspicions:N)"
                        ))
                    })?;
                (plan, max)
            }
        };
        self.seed = seed
            .parse()
            .map_err(|_| TokenError(format!("{token:?}: {seed:?} is not a seed")))?;
        let plan: FaultPlan = if plan.trim().is_empty() {
            FaultPlan::new()
        } else {
            plan.parse()
                .map_err(|e| TokenError(format!("{token:?}: {e}")))?
        };
        plan.check_ranks(self.size)
            .map_err(|e| TokenError(format!("{token:?}: {e}")))?;
        if let Some(fault) = plan
            .faults()
            .iter()
            .find(|f| f.trigger.injected_by() == InjectedBy::Application)
        {
            return Err(TokenError(format!(
                "{token:?}: `{fault}` is a point of the application's, which the program injects"
            )));
        }
        self.plan = plan;
        self.random_kills = 0;
        self.suspicions = suspicions;
        Ok(self)
    }

    /// The whole plan of the run: the given faults, then those drawn from the seed.
    fn whole_plan(&self) -> FaultPlan {
        let mut plan = self.plan.clone();
        if self.random_kills == 0 {
            return plan;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x004b_115e_ed0f_f417);
        let kills = rng.gen_range(0..=self.random_kills) as usize;
        let mut ranks: Vec<Rank> = (0..self.size)
            .filter(|r| plan.triggers_of(*r).next().is_none())
            .collect();
        ranks.shuffle(&mut rng);
        for &rank in ranks.iter().take(kills) {
            let trigger = match rng.gen_range(0..4) {
                0 => Trigger::Agreement {
                    call: rng.gen_range(1..=3),
                    message: rng.gen_range(1..=4),
                },
                1 => Trigger::Packet(rng.gen_range(1..=self.horizon.saturating_mul(2))),
                _ => Trigger::Call(rng.gen_range(1..=self.horizon)),
            };
            plan.push(Fault { rank, trigger });
        }
        plan
    }

    /// The steps at which false suspicions start, drawn from the seed.
    fn suspicion_steps(&self) -> Vec<u64> {
        if self.suspicions == 0 {
            return Vec::new();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x5005_9ec7_0f00_0001);
        let count = rng.gen_range(0..=self.suspicions);
        (0..count)
            .map(|_| rng.gen_range(1..=self.suspicion_horizon))
            .collect()
    }

    /// Runs `f` on every rank under the scheduler and returns what became of the run. Returns
    /// when every rank's function has ended (a hang ends them: see [`SimRun::hang`]).
    pub fn run<T, F>(self, f: F) -> SimRun<T>
    where
        T: Send,
        F: Fn(&Comm) -> T + Sync,
    {
        let plan = self.whole_plan();
        let endpoints: Vec<Arc<Endpoint>> = (0..self.size)
            .map(|r| Arc::new(Endpoint::new(WorldRank(r), self.size)))
            .collect();
        for endpoint in &endpoints {
            if let Some(cap) = self.unexpected_cap {
                endpoint.set_unexpected_cap(cap, self.size);
            }
            endpoint.plan_faults(
                plan.triggers_of(endpoint.world_rank.0)
                    .filter(|t| !matches!(t, Trigger::After(_))),
            );
        }
        let timed: Vec<(Duration, Rank)> = plan
            .faults()
            .iter()
            .filter_map(|f| match f.trigger {
                Trigger::After(delay) => Some((delay, f.rank)),
                _ => None,
            })
            .collect();
        let simulated = Arc::new(Simulated::new(
            endpoints.clone(),
            self.seed,
            self.budget,
            timed,
            self.suspicion_steps(),
        ));
        if self.trace {
            simulated.keep_trace();
        }
        let transport: Arc<dyn Transport> = simulated.clone();
        let (outcomes, report) = std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(endpoints.len());
            for endpoint in &endpoints {
                let started = {
                    let world =
                        Comm::world(Arc::clone(endpoint), Arc::clone(&transport), self.size);
                    let f = &f;
                    let simulated = Arc::clone(&simulated);
                    if crate::universe::spawn_refused(endpoint.world_rank) {
                        Err(std::io::Error::other("refused by the test"))
                    } else {
                        spawn_rank(scope, endpoint.world_rank.0, world, f, simulated)
                    }
                };
                match started {
                    Ok(handle) => handles.push(handle),
                    Err(error) => {
                        // The ranks already started wait for a turn that never comes: release
                        // them before saying why (a panic here would wait for them for ever).
                        simulated.call_off();
                        for handle in handles {
                            let _ = handle.join();
                        }
                        panic!(
                            "runthrough::simulate: could not start the thread of rank {} of {}: \
                             {error}",
                            endpoint.world_rank, self.size
                        );
                    }
                }
            }
            let report = simulated.drive();
            let outcomes: Vec<RankOutcome<T>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or(RankOutcome::Killed))
                .collect();
            (outcomes, report)
        });
        SimRun {
            outcomes,
            seed: self.seed,
            suspicions: self.suspicions,
            plan,
            fired: report.fired,
            violations: report.violations,
            decisions_checked: report.decisions,
            trace: report.trace,
            hang: report.hang.map(|h| h.to_string()),
            steps: report.steps,
            trace_hash: report.trace_hash,
        }
    }
}

/// Starts the thread of simulated rank `rank`: it waits for its first turn, runs `f` and
/// gives the turn up for good; or returns at once if the run is called off before its turn.
fn spawn_rank<'scope, T, F>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    rank: u32,
    world: Comm,
    f: &'scope F,
    simulated: Arc<Simulated>,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, RankOutcome<T>>>
where
    T: Send + 'scope,
    F: Fn(&Comm) -> T + Sync,
{
    std::thread::Builder::new()
        .name(format!("{RANK_THREAD}{rank}"))
        .spawn_scoped(scope, move || {
            if !simulated.rank_starts(rank) {
                return RankOutcome::Killed;
            }
            let outcome = run_rank(&world, f);
            drop(world);
            simulated.rank_done(rank);
            outcome
        })
}

fn token_of(seed: u64, plan: &FaultPlan, suspicions: u32) -> String {
    match suspicions {
        0 => format!("{seed}/{plan}"),
        n => format!("{seed}/{plan}/suspicions:{n}"),
    }
}

/// What became of a simulated run.
#[derive(Debug)]
pub struct SimRun<T> {
    /// What became of each rank, in rank order. After a hang, the ranks that were still running
    /// are [`RankOutcome::Killed`].
    pub outcomes: Vec<RankOutcome<T>>,
    /// The run's seed.
    pub seed: u64,
    /// Its setting of [`Simulation::false_suspicions`].
    pub suspicions: u32,
    /// Its whole fault plan: the given faults and those drawn from the seed.
    pub plan: FaultPlan,
    /// The faults that fired, in the order they did.
    pub fired: Vec<Fault>,
    /// Rules of docs/src/semantics.md the library saw broken: two ranks returning different
    /// decisions from one agreement (`validate_global`, `agree`, `shrink`, a creation), or a
    /// live rank agreed failed on the world communicator that no false suspicion named. Empty
    /// unless the library is wrong.
    pub violations: Vec<String>,
    /// How many decisions returned from agreements the library's check compared.
    pub decisions_checked: u64,
    /// The run's steps in words, with [`Simulation::trace`] (empty otherwise).
    pub trace: Vec<String>,
    /// A hang, if the run had one: why ("every rank still running waits, and nothing is in
    /// flight", or "the step budget ran out") and where each rank was.
    pub hang: Option<String>,
    /// Scheduling steps taken (each moved virtual time by one microsecond).
    pub steps: u64,
    /// A hash of everything that happened, step by step: equal for runs of the same token.
    pub trace_hash: u64,
}

impl<T> SimRun<T> {
    /// The replay token, `SEED/PLAN` (the plan in the fault-plan grammar), with
    /// `/suspicions:N` when the run had [`Simulation::false_suspicions`]: what
    /// [`Simulation::replay`] and [`ENV_REPLAY`] take.
    pub fn token(&self) -> String {
        token_of(self.seed, &self.plan, self.suspicions)
    }

    /// The library's own checks: no broken rule ([`SimRun::violations`]), no hang, no rank
    /// panicked.
    ///
    /// # Errors
    /// What went wrong, in words.
    pub fn check(&self) -> Result<(), String> {
        if let Some(violation) = self.violations.first() {
            return Err(format!("the library broke its rules: {violation}"));
        }
        if let Some(hang) = &self.hang {
            return Err(format!("hang: {hang}"));
        }
        for (rank, outcome) in self.outcomes.iter().enumerate() {
            if let RankOutcome::Panicked(message) = outcome {
                return Err(format!("rank {rank} panicked: {message}"));
            }
        }
        Ok(())
    }
}

/// Starts building an exploration of `n`-rank simulated runs ([`Explorer::run`]).
pub fn explore(n: u32) -> Explorer {
    Explorer {
        simulation: simulate(n),
        schedules: 1000,
        first_seed: 0,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        shrink_runs: 200,
        replay: None,
    }
}

/// Many simulated runs of one program, one per seed.
#[derive(Debug, Clone)]
pub struct Explorer {
    simulation: Simulation,
    schedules: u64,
    first_seed: u64,
    threads: usize,
    shrink_runs: u32,
    replay: Option<String>,
}

/// A failing run an exploration found: its token, why it failed, and the smallest plan found
/// that still fails with the same seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The run's seed.
    pub seed: u64,
    /// The run's token as it failed.
    pub token: String,
    /// Why it failed.
    pub why: String,
    /// The token after shrinking (fewer kills, earlier kills), which still fails.
    pub shrunk: String,
    /// Why the shrunk run fails.
    pub shrunk_why: String,
}

impl Failure {
    /// The command line that replays the shrunk failure in the same test.
    pub fn replay_command(&self) -> String {
        format!("{ENV_REPLAY}='{}' cargo test …", self.shrunk)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} failed: {} (token {}); shrunk to {}: {}; replay: {}",
            self.seed,
            self.why,
            self.token,
            self.shrunk,
            self.shrunk_why,
            self.replay_command()
        )
    }
}

/// What an exploration found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exploration {
    /// Runs made (the shrinking's not counted).
    pub runs: u64,
    /// How many of them failed.
    pub failed: u64,
    /// The lowest failing seed, shrunk; `None` when every run passed.
    pub lowest: Option<Failure>,
}

impl Explorer {
    /// How many seeds to run (default 1,000).
    pub fn schedules(mut self, schedules: u64) -> Self {
        self.schedules = schedules;
        self
    }

    /// The first seed (default 0); the seeds run are `seed..seed + schedules`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.first_seed = seed;
        self
    }

    /// How many runs go at once (default: the host's cores).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Up to `max` kills per run, drawn from each seed ([`Simulation::random_kills`]).
    pub fn random_kills(mut self, max: u32) -> Self {
        self.simulation = self.simulation.random_kills(max);
        self
    }

    /// Up to `max` false suspicions per run ([`Simulation::false_suspicions`]).
    pub fn false_suspicions(mut self, max: u32) -> Self {
        self.simulation = self.simulation.false_suspicions(max);
        self
    }

    /// As [`Simulation::suspicion_horizon`].
    pub fn suspicion_horizon(mut self, steps: u64) -> Self {
        self.simulation = self.simulation.suspicion_horizon(steps);
        self
    }

    /// As [`Simulation::kill_horizon`].
    pub fn kill_horizon(mut self, calls: u64) -> Self {
        self.simulation = self.simulation.kill_horizon(calls);
        self
    }

    /// As [`Simulation::step_budget`].
    pub fn step_budget(mut self, steps: u64) -> Self {
        self.simulation = self.simulation.step_budget(steps);
        self
    }

    /// As [`Simulation::unexpected_cap`].
    pub fn unexpected_cap(mut self, cap: usize) -> Self {
        self.simulation = self.simulation.unexpected_cap(cap);
        self
    }

    /// Runs only `token` ([`SimRun::token`]) instead of the seeds, as [`ENV_REPLAY`] does
    /// (which it takes precedence over).
    pub fn replay(mut self, token: &str) -> Self {
        self.replay = Some(token.to_string());
        self
    }

    /// At most this many runs go into shrinking a failure (default 200).
    pub fn shrink_runs(mut self, runs: u32) -> Self {
        self.shrink_runs = runs;
        self
    }

    /// Runs `f` under every seed and judges each run with [`SimRun::check`] and then `verdict`.
    /// With a token to replay ([`Explorer::replay`], or [`ENV_REPLAY`] set), runs only that
    /// (and shrinks it if it fails). Returns what it found; [`Exploration::lowest`] is the lowest failing seed, whatever order the runs
    /// finished in.
    pub fn run<T, F, V>(&self, f: F, verdict: V) -> Exploration
    where
        T: Send,
        F: Fn(&Comm) -> T + Sync,
        V: Fn(&SimRun<T>) -> Result<(), String> + Sync,
    {
        let _quiet = QuietRankPanics::begin();
        let judge = |simulation: Simulation| {
            let run = simulation.run(&f);
            let outcome = run.check().and_then(|()| verdict(&run));
            (run.token(), outcome)
        };
        if let Some(token) = self
            .replay
            .clone()
            .or_else(|| std::env::var(ENV_REPLAY).ok())
        {
            let simulation = match self.simulation.clone().replay(&token) {
                Ok(simulation) => simulation,
                Err(error) => panic!("replay: {error}"),
            };
            let seed = simulation.seed;
            let (token, outcome) = judge(simulation);
            let lowest = outcome
                .err()
                .map(|why| self.shrink(seed, token, why, &judge));
            return Exploration {
                runs: 1,
                failed: u64::from(lowest.is_some()),
                lowest,
            };
        }
        let next = AtomicU64::new(0);
        let failures: Mutex<Vec<(u64, String, String)>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..self.threads {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= self.schedules {
                        return;
                    }
                    let seed = self.first_seed.wrapping_add(i);
                    let (token, outcome) = judge(self.simulation.clone().seed(seed));
                    if let Err(why) = outcome {
                        failures
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((seed, token, why));
                    }
                });
            }
        });
        let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
        failures.sort();
        let failed = failures.len() as u64;
        let lowest = failures
            .into_iter()
            .next()
            .map(|(seed, token, why)| self.shrink(seed, token, why, &judge));
        Exploration {
            runs: self.schedules,
            failed,
            lowest,
        }
    }

    /// Shrinks a failing run's plan: drops kills and moves them earlier while the run, with the
    /// same seed, still fails.
    fn shrink(
        &self,
        seed: u64,
        token: String,
        why: String,
        judge: &dyn Fn(Simulation) -> (String, Result<(), String>),
    ) -> Failure {
        let Ok(failing) = self.simulation.clone().replay(&token) else {
            unreachable!("a run's own token parses");
        };
        let mut plan = failing.plan.clone();
        let mut shrunk_why = why.clone();
        let mut budget = self.shrink_runs;
        'better: loop {
            for candidate in smaller_plans(&plan) {
                if budget == 0 {
                    break 'better;
                }
                budget -= 1;
                let mut simulation = failing.clone();
                simulation.plan = candidate.clone();
                if let (_, Err(why)) = judge(simulation) {
                    plan = candidate;
                    shrunk_why = why;
                    continue 'better;
                }
            }
            break;
        }
        Failure {
            seed,
            token,
            why,
            shrunk: token_of(seed, &plan, failing.suspicions),
            shrunk_why,
        }
    }
}

/// Explorations running now: while there is one, a panic on a simulated rank's thread prints
/// nothing (the run reports it in [`SimRun::check`]; thousands of runs would print thousands).
static EXPLORING: AtomicU64 = AtomicU64::new(0);

/// Silences simulated ranks' panic messages while it lives ([`EXPLORING`]); panics of every
/// other thread go to the hook that was installed before.
struct QuietRankPanics;

impl QuietRankPanics {
    fn begin() -> Self {
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                let simulated = std::thread::current()
                    .name()
                    .is_some_and(|name| name.starts_with(RANK_THREAD));
                if !(simulated && EXPLORING.load(Ordering::SeqCst) > 0) {
                    previous(info);
                }
            }));
        });
        EXPLORING.fetch_add(1, Ordering::SeqCst);
        QuietRankPanics
    }
}

impl Drop for QuietRankPanics {
    fn drop(&mut self) {
        EXPLORING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The name of a simulated rank's thread, before its rank.
const RANK_THREAD: &str = "sim-rank-";

/// Plans one step smaller than `plan`: each fault left out, then each moved earlier.
fn smaller_plans(plan: &FaultPlan) -> Vec<FaultPlan> {
    let faults = plan.faults();
    let mut smaller = Vec::new();
    for skip in 0..faults.len() {
        smaller.push(
            faults
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, f)| *f)
                .collect(),
        );
    }
    for (i, fault) in faults.iter().enumerate() {
        let earlier: Vec<Trigger> = match fault.trigger {
            Trigger::Call(k) if k > 1 => vec![Trigger::Call(k / 2), Trigger::Call(k - 1)],
            Trigger::Packet(k) if k > 1 => vec![Trigger::Packet(k / 2), Trigger::Packet(k - 1)],
            Trigger::Agreement { call, message } if call > 1 || message > 1 => {
                let mut t = Vec::new();
                if call > 1 {
                    t.push(Trigger::Agreement {
                        call: call - 1,
                        message,
                    });
                }
                if message > 1 {
                    t.push(Trigger::Agreement {
                        call,
                        message: message - 1,
                    });
                }
                t
            }
            _ => Vec::new(),
        };
        for trigger in earlier {
            let mut moved: Vec<Fault> = faults.to_vec();
            moved[i] = Fault {
                rank: fault.rank,
                trigger,
            };
            smaller.push(moved.into_iter().collect());
        }
    }
    smaller.dedup();
    smaller
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A rank thread that cannot be spawned ends the run with a panic that says why, after the
    /// ranks already started are released (they waited for a first turn that never comes: the
    /// panic used to wait for them for ever).
    #[test]
    fn a_rank_thread_that_cannot_start_ends_the_run_with_a_clear_panic() {
        let ran = AtomicU32::new(0);
        let message = crate::universe::tests::panic_of_refused_spawn(2, || {
            super::simulate(4).seed(1).run(|world| {
                ran.fetch_add(1, Ordering::SeqCst);
                world.barrier()
            });
        });
        assert!(
            message.contains("could not start the thread of rank 2 of 4"),
            "{message}"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 0, "no rank ran");
        // The next run on this thread is whole again.
        let run = super::simulate(4).seed(1).run(|world| world.barrier());
        assert!(run.check().is_ok(), "{:?}", run.check());
    }
}

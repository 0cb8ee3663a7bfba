// SPDX-License-Identifier: MIT OR Apache-2.0
//! A fault-tolerant 2D Jacobi heat solver, with the seed's pattern.
//!
//! The `n x n` interior is cut once into one block per initial rank ([`Decomposition`]); ranks
//! own blocks ([`Placement`]) and exchange halos between owners (a rank that owns two
//! neighbouring blocks copies the halo itself). Each pass of the main loop is either one Jacobi
//! iteration or a checkpoint, and ends with `validate_global`:
//!
//! - **No new failure in G**: the pass counts. A step advances the iteration; a checkpoint is
//!   committed. Every `checkpoint_every` iterations a checkpoint pass sends each block's cells to
//!   its `buddies` holders (the next OK ranks after the owner, on other hosts than the owner's
//!   where there are any, see [`Placement`]); each rank keeps its own blocks' copies and its
//!   buddies'. Because `validate_global` is a uniform agreement, every survivor commits the
//!   same checkpoint or none does.
//! - **New failures in G** (`RankState::NULL | RankState::NEW`): every survivor moves the dead
//!   ranks' blocks to the first surviving holder of their committed copy, rolls every block back
//!   to the committed iteration and, before going on, checkpoints again so that every block has
//!   its copies on live ranks (the recovery is done when that checkpoint commits). A failure
//!   during that recovery starts another one from the same committed checkpoint. A block whose
//!   every copy was on a failed rank (a buddy pair died together) is lost: every survivor reports
//!   [`HeatError::Unrecoverable`] at the same pass. With `buddies = 2` a block survives the loss
//!   of any two ranks.
//!
//! - **The output pass**, after the last iteration: every owner sends its blocks to every
//!   survivor, so that each holds the whole field; it counts only if its `validate_global` finds
//!   no new failure (otherwise: recovery, and the iterations since the checkpoint are redone).
//!   A field kept by one writer would be lost with it if it died after the last agreement.
//!
//! - **Hosts**: the first pass that counts also tells every rank where the others run: each
//!   rank contributes its [`host_key`] to an all-gather in its first step pass (redone with the
//!   step while a failure interrupts it), so that no two copies of a block share a host while
//!   another host is left, and losing a whole host loses no block (`Config::hosts` gives the
//!   map instead, e.g. a made-up one for in-process ranks, which all share one host).
//!
//! Iteration 0 needs no copies: anyone can regenerate it, so a failure in the first checkpoint
//! interval moves blocks to the next OK rank and restarts from the initial field.
//!
//! Within a pass, every rank sends all it has to send before it receives (sends are eager), and
//! goes on receiving after an error, so no live rank ever waits for a message that a live peer
//! gave up sending; tags carry the pass number, so nothing from an abandoned pass is matched
//! later. The final field is compared with the sequential [`reference()`] bit for bit.
//!
//! [`run`] runs every rank in-process; [`run_rank`] is the same solver as one rank of a
//! multi-process job (each survivor then compares the field it assembled with the reference).
//!
//! ```
//! use runthrough_examples::heat::{self, Config, KillPoint};
//! let config = Config {
//!     ranks: 4,
//!     size: 24,
//!     iterations: 12,
//!     checkpoint_every: 4,
//!     kills: vec![(2, KillPoint::Iteration(6))],
//!     ..Config::default()
//! };
//! let report = heat::run(&config).unwrap();
//! assert!(report.matches_reference());
//! assert_eq!(report.recoveries[0].new_in_g, vec![2]);
//! ```

mod grid;
mod hosts;
mod placement;
mod respawn;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use runthrough::fault::InjectedBy;
use runthrough::{Comm, Error, FailureView, Fault, FaultPlan, Op, Rank, RankOutcome, RankState};

pub use grid::{initial_field, reference, stencil, Block, Decomposition, Side};
pub use hosts::{host_key, key_of};
pub use placement::{Committed, LostBlock, Move, Placement};

use crate::checksum::{bitwise_equal, fnv1a_f64};
use crate::held::Held;
use crate::kills::Death;

/// Where an injected failure strikes a rank: a trigger of the one fault grammar
/// ([`runthrough::fault`]). heat injects the application's points itself:
/// [`KillPoint::Iteration`] (`3@20`: when the rank starts computing that iteration, the first
/// time it gets there) and [`KillPoint::Recovery`] (`5@r1`, 1 = the first: in the checkpoint
/// pass that restores the copies after the rollback, just after the rank's first message of
/// that pass; a recovery to the initial field needs no such pass, so there this point is never
/// reached). The runtime's points (`2@v7.1`, i.e. `2@validate_global:7:1`, `1@call:K`, a
/// collective, a time) are planned on the in-process universe; under a launcher they come from
/// the launcher (`rtrun --kill`).
pub use runthrough::Trigger as KillPoint;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Ranks (and blocks: one per initial rank).
    pub ranks: u32,
    /// The interior is `size x size` cells.
    pub size: usize,
    /// Jacobi iterations.
    pub iterations: u64,
    /// A checkpoint every this many iterations.
    pub checkpoint_every: u64,
    /// Copies of each block besides its owner's (1: one buddy; 2 survives any two failures).
    pub buddies: usize,
    /// Injected failures.
    pub kills: Vec<(Rank, KillPoint)>,
    /// A progress line every this many iterations (0: none).
    pub progress_every: u64,
    /// Print progress and events while running.
    pub verbose: bool,
    /// Where each rank runs, `hosts[rank]` a key of its host (equal keys: one host; see
    /// [`key_of`]). `None`: every rank names its own host ([`host_key`]) and the ranks exchange
    /// the names in their first pass.
    pub hosts: Option<Vec<u64>>,
    /// Non-shrinking recovery (`--recovery respawn`): after a death, the survivors start a
    /// new rank for each dead one (`Comm::respawn`), restore its block and its checkpoint
    /// copies onto it from the buddies' copies, and go on with the original number of ranks,
    /// each block on its own rank: in-process, or under rtrun (which starts the new
    /// processes). Without it, the dead ranks' blocks move to their buddies (run-through
    /// recovery, the default).
    pub respawn: bool,
    /// A bug planted for the simulation's tests (`runthrough::explore` must find it): after a
    /// recovery the blocks are restored from the checkpoint but the iteration count is not
    /// rolled back. Never set it otherwise.
    #[doc(hidden)]
    pub planted_skip_rollback: bool,
    /// A bug planted for the simulation's tests: after the first recovery, the lowest survivor
    /// skips the `validate_global` of its next pass (it takes its last G as the answer). Never
    /// set it otherwise.
    #[doc(hidden)]
    pub planted_skip_validate: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ranks: 8,
            size: 256,
            iterations: 100,
            checkpoint_every: 10,
            buddies: 1,
            kills: Vec::new(),
            progress_every: 10,
            verbose: false,
            hosts: None,
            respawn: false,
            planted_skip_rollback: false,
            planted_skip_validate: false,
        }
    }
}

/// One recovery, as the reporting survivor saw it.
#[derive(Debug, Clone)]
pub struct RecoveryRecord {
    /// 1 for the first recovery.
    pub number: u32,
    /// The iteration the interrupted pass was at.
    pub at_iteration: u64,
    /// The ranks that `validate_global` returned as `NULL | NEW`.
    pub new_in_g: Vec<Rank>,
    /// |G| after it.
    pub failed_in_all: usize,
    /// Blocks that changed owner.
    pub moves: Vec<Move>,
    /// The committed iteration everyone rolled back to.
    pub rolled_back_to: u64,
    /// Whether this failure struck while an earlier recovery was still in progress.
    pub during_recovery: bool,
    /// From the (first) injected kill among `new_in_g` to the `validate_global` that reported it,
    /// when the kill time is known (kills at an iteration or in a recovery).
    pub kill_to_agreement: Option<Duration>,
    /// From that `validate_global` to the recovery checkpoint's commit (`None` when another
    /// failure interrupted this recovery).
    pub agreement_to_recovered: Option<Duration>,
    /// With [`Config::respawn`]: the ranks that new ranks replaced (their numbers), and the
    /// time from that `validate_global` to the replacements running with their state restored
    /// (their blocks and copies received, a `validate_global` over the full communicator
    /// passed).
    pub respawned: Option<(Vec<Rank>, Duration)>,
}

/// The outcome of a run that finished.
#[derive(Debug, Clone)]
pub struct Report {
    /// The final field, boundary included, `(size + 2)^2` values.
    pub field: Vec<f64>,
    /// The failure-free field, computed sequentially.
    pub reference: Vec<f64>,
    /// FNV-1a over `field`'s bits.
    pub checksum: u64,
    /// FNV-1a over `reference`'s bits.
    pub reference_checksum: u64,
    /// The recoveries, as the lowest surviving rank saw them.
    pub recoveries: Vec<RecoveryRecord>,
    /// The ranks that returned the field, as world ranks (a rank started by a respawn has a
    /// world rank of the job's size or more).
    pub survivors: Vec<Rank>,
    /// The ranks killed by injection.
    pub killed: Vec<Rank>,
    /// How many `validate_global` calls each survivor made (passes).
    pub passes: u64,
    /// Wall time of the distributed run.
    pub elapsed: Duration,
}

impl Report {
    /// Whether the final field equals the failure-free one bit for bit.
    pub fn matches_reference(&self) -> bool {
        bitwise_equal(&self.field, &self.reference)
    }
}

/// Why a run did not produce a field.
#[derive(Debug, Clone)]
pub enum HeatError {
    /// The configuration cannot run.
    Config(String),
    /// Every copy of a block was on a failed rank; reported by every survivor at the same pass.
    Unrecoverable {
        /// The lost block and its holders.
        lost: LostBlock,
        /// The iteration of the interrupted pass.
        at_iteration: u64,
        /// The checkpoint the copies were of.
        checkpoint: u64,
    },
    /// A runtime call failed in a way the solver does not recover from.
    Runtime {
        /// The rank that saw it.
        rank: Rank,
        /// The error.
        error: Error,
    },
    /// A rank's function panicked.
    Panicked {
        /// The rank.
        rank: Rank,
        /// The panic message.
        message: String,
    },
    /// Survivors disagree, or a pass failed while `validate_global` saw no new failure: a bug.
    Inconsistent(String),
}

impl fmt::Display for HeatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeatError::Config(reason) => write!(f, "bad configuration: {reason}"),
            HeatError::Unrecoverable {
                lost,
                at_iteration,
                checkpoint,
            } => write!(
                f,
                "unrecoverable at iteration {at_iteration}: every copy of block {} (of checkpoint {checkpoint}) was on a failed rank {:?}",
                lost.block, lost.holders
            ),
            HeatError::Runtime { rank, error } => write!(f, "rank {rank}: {error}"),
            HeatError::Panicked { rank, message } => write!(f, "rank {rank} panicked: {message}"),
            HeatError::Inconsistent(reason) => write!(f, "inconsistent run: {reason}"),
        }
    }
}

impl std::error::Error for HeatError {}

/// Runs the solver on `config.ranks` in-process ranks with the injected failures, then checks
/// the field against the sequential reference (see [`Report::matches_reference`]).
///
/// # Errors
/// See [`HeatError`]; a run whose field differs from the reference is not an error here (the
/// caller decides), but its report says so.
pub fn run(config: &Config) -> Result<Report, HeatError> {
    let decomposition = check(config)?;
    let runtime: FaultPlan = config
        .kills
        .iter()
        .filter(|(_, point)| point.injected_by() != InjectedBy::Application)
        .map(|&(rank, trigger)| Fault { rank, trigger })
        .collect();
    let universe = runthrough::local(config.ranks).faults(&runtime);
    let shared = Shared {
        config,
        decomposition: &decomposition,
        death: Death::Thread(universe.fault_handle()),
        kill_times: Mutex::new(Vec::new()),
        started: Instant::now(),
        tags: Tags::new(decomposition.blocks()),
    };
    let outcomes = universe.run(|world| match world.parent() {
        Some(parents) => Solver::replacement(&parents, &shared),
        None => Solver::new(Held::Borrowed(world), &shared)
            .run(false)
            .map(Some),
    });
    let elapsed = shared.started.elapsed();

    let mut survivors = Vec::new();
    let mut killed = Vec::new();
    let mut results = Vec::new();
    let mut unrecoverable = Vec::new();
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        let rank = rank as Rank;
        match outcome {
            RankOutcome::Returned(Ok(Some(result))) => {
                survivors.push(rank);
                results.push(result);
            }
            // A rank started by a recovery attempt that met another failure: it ended.
            RankOutcome::Returned(Ok(None)) => {}
            RankOutcome::Returned(Err(error @ HeatError::Unrecoverable { .. })) => {
                survivors.push(rank);
                unrecoverable.push(error);
            }
            RankOutcome::Returned(Err(error)) => return Err(error),
            RankOutcome::Killed => killed.push(rank),
            RankOutcome::Panicked(message) => return Err(HeatError::Panicked { rank, message }),
        }
    }
    if let Some(first) = unrecoverable.first() {
        if !results.is_empty() {
            return Err(HeatError::Inconsistent(format!(
                "{} survivors report `{first}`, {} finished",
                unrecoverable.len(),
                results.len()
            )));
        }
        return Err(first.clone());
    }
    let first = results
        .first()
        .ok_or_else(|| HeatError::Inconsistent("no rank survived".into()))?;
    if let Some(other) = results
        .iter()
        .position(|r| !bitwise_equal(&r.field, &first.field))
    {
        return Err(HeatError::Inconsistent(format!(
            "survivors {} and {} assembled different fields",
            survivors[0], survivors[other]
        )));
    }
    let reference = reference(config.size, config.iterations);
    Ok(Report {
        checksum: fnv1a_f64(&first.field),
        reference_checksum: fnv1a_f64(&reference),
        field: first.field.clone(),
        reference,
        recoveries: first.recoveries.clone(),
        passes: first.passes,
        survivors,
        killed,
        elapsed,
    })
}

/// The decomposition of a configuration that can run.
fn check(config: &Config) -> Result<Decomposition, HeatError> {
    let decomposition =
        Decomposition::new(config.size, config.ranks as usize).map_err(HeatError::Config)?;
    if config.checkpoint_every == 0 {
        return Err(HeatError::Config("--checkpoint must be at least 1".into()));
    }
    if let Some(hosts) = config
        .hosts
        .as_ref()
        .filter(|h| h.len() != config.ranks as usize)
    {
        return Err(HeatError::Config(format!(
            "a host map of {} ranks for a job of {}",
            hosts.len(),
            config.ranks
        )));
    }
    if config.buddies >= config.ranks as usize && config.ranks > 1 {
        return Err(HeatError::Config(format!(
            "--buddies {}: at most {} on {} ranks (each copy is on another rank)",
            config.buddies,
            config.ranks - 1,
            config.ranks
        )));
    }
    let plan: FaultPlan = config
        .kills
        .iter()
        .map(|&(rank, trigger)| Fault { rank, trigger })
        .collect();
    plan.check_ranks(config.ranks)
        .map_err(|e| HeatError::Config(format!("--kill {e}")))?;
    if let Some((rank, i)) = config.kills.iter().find_map(|&(rank, point)| match point {
        KillPoint::Iteration(i) if i >= config.iterations => Some((rank, i)),
        _ => None,
    }) {
        return Err(HeatError::Config(format!(
            "--kill `{rank}@{i}`: iteration {i} is never reached (the iterations are 0..{})",
            config.iterations
        )));
    }
    Ok(decomposition)
}

/// Runs one rank of the solver on `world`, whichever way the world was obtained: this is the
/// body that [`run`] gives each in-process rank, and what each process of a multi-process job
/// (`runthrough::init()`, under rtrun) runs. `config.ranks` must be `world.size()`; `death`
/// says how the planned kills of this rank strike. Kills at the runtime's points (inside
/// `validate_global`, [`KillPoint::Agreement`], at a call, a collective, a time) are the
/// runtime's to inject: in-process [`run`] plans them; a multi-process job gets them from its
/// launcher (`rtrun --kill R@validate_global:C:M`), so here they are a configuration error.
///
/// Every survivor returns the whole final field; comparing it with [`reference()`] is the
/// caller's (see [`RankRun`]).
///
/// # Errors
/// As [`run`]: [`HeatError::Unrecoverable`] at every survivor at the same pass, the others
/// at the rank that saw them.
pub fn run_rank(world: &Comm, config: &Config, death: Death) -> Result<Option<RankRun>, HeatError> {
    let parents = world.parent();
    // A replacement's job: the survivors that started it and the ranks started with it.
    let size = parents
        .as_ref()
        .map_or(world.size(), |p| p.remote_size() + world.size());
    if config.ranks != size {
        return Err(HeatError::Config(format!(
            "the configuration is for {} ranks, the job has {size}",
            config.ranks,
        )));
    }
    let decomposition = check(config)?;
    if matches!(death, Death::Runtime) && !config.kills.is_empty() {
        return Err(HeatError::Config(
            "kills of the application's own with Death::Runtime (only the runtime's plan kills)"
                .into(),
        ));
    }
    if let Some((rank, point)) = config
        .kills
        .iter()
        .find(|(_, p)| p.injected_by() != InjectedBy::Application)
    {
        return Err(HeatError::Config(format!(
            "--kill {rank}@{point}: the runtime's faults are injected by the launcher here \
             (rtrun --kill {rank}@{point})"
        )));
    }
    let shared = Shared {
        config,
        decomposition: &decomposition,
        death,
        kill_times: Mutex::new(Vec::new()),
        started: Instant::now(),
        tags: Tags::new(decomposition.blocks()),
    };
    let result = match &parents {
        Some(parents) => match Solver::replacement(parents, &shared)? {
            Some(result) => result,
            None => return Ok(None),
        },
        None => Solver::new(Held::Borrowed(world), &shared).run(false)?,
    };
    Ok(Some(RankRun {
        checksum: fnv1a_f64(&result.field),
        field: result.field,
        rank: result.rank,
        recoveries: result.recoveries,
        passes: result.passes,
        final_g: result.final_g,
        elapsed: shared.started.elapsed(),
    }))
}

/// What one surviving rank of [`run_rank`] ends with.
#[derive(Debug, Clone)]
pub struct RankRun {
    /// The whole final field, boundary included (every survivor assembles it).
    pub field: Vec<f64>,
    /// This rank's number at the end (a replacement's is the number of the rank it replaced).
    pub rank: Rank,
    /// FNV-1a over `field`'s bits.
    pub checksum: u64,
    /// The recoveries, as this rank saw them (the same at every survivor but for the times;
    /// the kill times are not known across processes, so `kill_to_agreement` is `None` for
    /// kills of other processes).
    pub recoveries: Vec<RecoveryRecord>,
    /// The `validate_global` calls this rank made (passes).
    pub passes: u64,
    /// G after the output pass: the survivors are its OK ranks, the failed ranks its NULL ones.
    pub final_g: FailureView,
    /// Wall time of this rank's run.
    pub elapsed: Duration,
}

impl RankRun {
    /// Whether the final field equals `reference` bit for bit.
    pub fn matches(&self, reference: &[f64]) -> bool {
        bitwise_equal(&self.field, reference)
    }

    /// Whether this rank is the lowest survivor (the one that reports the job).
    pub fn is_lowest_survivor(&self) -> bool {
        self.final_g.ranks(RankState::OK).next().map(|i| i.rank) == Some(self.rank)
    }
}

/// What every rank's thread reads.
struct Shared<'a> {
    config: &'a Config,
    decomposition: &'a Decomposition,
    death: Death,
    kill_times: Mutex<Vec<(Rank, Instant)>>,
    started: Instant,
    tags: Tags,
}

/// Message tags: the pass number and what the message is (a halo for one side of one block,
/// one block's checkpoint copy, or its final cells), so that nothing from an abandoned pass matches later.
struct Tags {
    blocks: u64,
    codes: u64,
    period: u64,
}

impl Tags {
    fn new(blocks: usize) -> Self {
        let codes = 5 * blocks as u64;
        Tags {
            blocks: blocks as u64,
            codes,
            period: ((runthrough::TAG_UB as u64 + 1) / codes).max(1),
        }
    }

    fn tag(&self, pass: u64, code: u64) -> i32 {
        ((pass % self.period) * self.codes + code) as i32
    }

    /// The halo that fills the ghosts on `side` of `block`.
    fn halo(&self, pass: u64, block: usize, side: Side) -> i32 {
        self.tag(pass, (block * 4 + side.index()) as u64)
    }

    /// A checkpoint copy of `block`.
    fn checkpoint(&self, pass: u64, block: usize) -> i32 {
        self.tag(pass, self.blocks * 4 + block as u64)
    }
}

/// What a surviving rank returns.
struct RankResult {
    /// The whole final field (every survivor assembles it in the output pass).
    field: Vec<f64>,
    /// The rank's number in the communicator it ended on.
    rank: Rank,
    recoveries: Vec<RecoveryRecord>,
    passes: u64,
    /// G after the output pass.
    final_g: FailureView,
}

/// What a pass did, before `validate_global` says whether it counts.
enum Pass {
    /// One Jacobi iteration of every owned block, and every rank's host key while the hosts are
    /// not known yet.
    Step(Option<Vec<u64>>),
    /// Copies sent to and received from buddies.
    Checkpoint(PendingCheckpoint),
    /// The whole final field, assembled here.
    Output(Vec<f64>),
}

/// A checkpoint pass's result before `validate_global` says whether it counts.
struct PendingCheckpoint {
    holders: Vec<Vec<Rank>>,
    copies: BTreeMap<usize, Vec<f64>>,
}

/// One rank's solver.
struct Solver<'a> {
    /// The communicator the solver runs on: the job's world, or the communicator of the last
    /// respawn.
    world: Held<'a>,
    /// Whether this rank was started by a respawn: the kills planned for its number were its
    /// predecessor's.
    replacement: bool,
    shared: &'a Shared<'a>,
    me: Rank,
    /// The last G: placement and checkpoint holders are computed over its OK ranks.
    g: FailureView,
    placement: Placement,
    /// Whether `placement` knows every rank's host (from the configuration, or from a pass that
    /// counted).
    hosts_known: bool,
    committed: Committed,
    /// The blocks this rank owns, at `iteration`.
    blocks: BTreeMap<usize, Block>,
    /// Committed checkpoint copies this rank holds (its own blocks' and its buddies').
    store: BTreeMap<usize, Vec<f64>>,
    iteration: u64,
    pass: u64,
    recoveries: Vec<RecoveryRecord>,
    /// The `validate_global` return of the recovery in progress (not yet re-checkpointed).
    recovering_since: Option<Instant>,
    /// Whether this rank already sent a message in the current pass (for `KillPoint::Recovery`).
    sent_in_pass: bool,
    /// The first error of the current pass, and when it was seen.
    pass_error: Option<Error>,
    /// Whether the planted bug `Config::planted_skip_validate` has struck.
    skipped_validate: bool,
}

impl<'a> Solver<'a> {
    fn new(world: Held<'a>, shared: &'a Shared<'a>) -> Self {
        let (me, size) = (world.rank(), world.size());
        let mut placement = Placement::one_per_rank(size);
        if let Some(hosts) = &shared.config.hosts {
            placement.set_hosts(hosts);
        }
        Solver {
            world,
            replacement: false,
            shared,
            me,
            g: FailureView::empty(size),
            placement,
            hosts_known: shared.config.hosts.is_some(),
            committed: Committed::Initial,
            blocks: [(me as usize, shared.decomposition.initial_block(me as usize))].into(),
            store: BTreeMap::new(),
            iteration: 0,
            pass: 0,
            recoveries: Vec::new(),
            recovering_since: None,
            sent_in_pass: false,
            pass_error: None,
            skipped_validate: false,
        }
    }

    fn config(&self) -> &Config {
        self.shared.config
    }

    /// The planted bug `Config::planted_skip_validate`: true once, for the lowest survivor's
    /// first pass after its first recovery.
    fn skips_this_validate(&mut self) -> bool {
        let lowest = self.g.ranks(RankState::OK).next().map(|i| i.rank) == Some(self.me);
        let strikes = self.config().planted_skip_validate
            && !self.skipped_validate
            && self.recoveries.len() == 1
            && lowest;
        self.skipped_validate |= strikes;
        strikes
    }

    /// Whether this rank prints the job's lines: the lowest OK rank of `view`.
    fn is_leader(&self, view: &FailureView) -> bool {
        self.config().verbose && view.ranks(RankState::OK).next().map(|i| i.rank) == Some(self.me)
    }

    fn say(&self, line: std::fmt::Arguments<'_>) {
        println!("[{:>8.2?}] {line}", self.shared.started.elapsed());
    }

    fn runtime(&self, error: Error) -> HeatError {
        HeatError::Runtime {
            rank: self.me,
            error,
        }
    }

    /// The main loop: passes (a step, a checkpoint, or the final output), each ended by
    /// `validate_global`.
    fn run(mut self, mut checkpoint_due: bool) -> Result<RankResult, HeatError> {
        let iterations = self.config().iterations;
        loop {
            self.pass += 1;
            self.sent_in_pass = false;
            self.pass_error = None;
            let pass = if checkpoint_due {
                Pass::Checkpoint(self.checkpoint_exchange())
            } else if self.iteration < iterations {
                self.kill_if_planned(KillPoint::Iteration(self.iteration));
                let hosts = (!self.hosts_known).then(|| self.exchange_hosts());
                self.step();
                Pass::Step(hosts)
            } else {
                Pass::Output(self.output_exchange())
            };
            // The seed's pattern: validate at the iteration boundary.
            let after = if self.skips_this_validate() {
                self.g.clone()
            } else {
                self.world.validate_global().map_err(|e| self.runtime(e))?
            };
            let agreed_at = Instant::now();
            if after.new_failures() {
                if self.config().respawn {
                    self.respawn(&after, agreed_at)?; // leaves `g` the new communicator's
                } else {
                    self.recover(&after, agreed_at)?;
                    self.g = after;
                }
                checkpoint_due = self.committed != Committed::Initial;
                if !checkpoint_due {
                    self.recovered(agreed_at);
                }
                continue;
            }
            if let Some(error) = self.pass_error.take() {
                return Err(HeatError::Inconsistent(format!(
                    "rank {}: `{error}` in pass {} at iteration {}, which validate_global found failure-free",
                    self.me, self.pass, self.iteration
                )));
            }
            match pass {
                Pass::Checkpoint(pending) => {
                    self.commit(pending, &after);
                    checkpoint_due = false;
                }
                Pass::Step(hosts) => {
                    if let Some(hosts) = hosts {
                        self.learn_hosts(&hosts, &after);
                    }
                    self.iteration += 1;
                    self.progress(&after);
                    let every = self.config().checkpoint_every;
                    checkpoint_due =
                        self.iteration.is_multiple_of(every) && self.iteration < iterations;
                }
                Pass::Output(field) => {
                    return Ok(RankResult {
                        field,
                        rank: self.me,
                        recoveries: self.recoveries,
                        passes: self.pass,
                        final_g: after,
                    })
                }
            }
            self.g = after;
        }
    }

    /// Every rank's host key, by an all-gather over the ranks OK in G (the slots of the others
    /// stay 0, at every rank alike). A failure is noted: the pass will not count.
    fn exchange_hosts(&mut self) -> Vec<u64> {
        let mut hosts = vec![0u64; self.world.size() as usize];
        if let Err(e) = self.world.all_gather(&[host_key()], &mut hosts) {
            self.note(format_args!("host exchange"), e);
        }
        hosts
    }

    /// The pass that exchanged the host keys counted: every survivor has the same map.
    fn learn_hosts(&mut self, hosts: &[u64], after: &FailureView) {
        self.placement.set_hosts(hosts);
        self.hosts_known = true;
        if self.is_leader(after) {
            let count = self.placement.host_count();
            self.say(format_args!(
                "{} ranks on {count} host{}: {}",
                self.world.size(),
                if count == 1 { "" } else { "s" },
                if count == 1 {
                    "each block's buddy copies on the next ranks"
                } else {
                    "each block's buddy copies on other hosts than its owner's"
                }
            ));
        }
    }

    /// The output pass: every rank assembles the whole field, so that the result survives any
    /// one rank (a single writer that died after the last agreement would take it along). One
    /// all-gather of what each rank owns (each block after its number, the shares padded with
    /// NaN to the longest, which an all-reduce finds first): Bruck's algorithm, ⌈log₂ n⌉
    /// rounds, instead of every owner sending each block to every rank (n² messages, and on a
    /// crowded host n² connections). Each block is taken from its owner only; a block missing
    /// at the end fails the pass.
    fn output_exchange(&mut self) -> Vec<f64> {
        let decomposition = self.shared.decomposition;
        let mut field = initial_field(decomposition.n());
        let mut mine = Vec::new();
        for (&block, state) in &self.blocks {
            decomposition.paste(block, state.cells(), &mut field);
            mine.push(block as f64);
            mine.extend_from_slice(state.cells());
        }
        let mut longest = [0u64];
        if let Err(e) = self
            .world
            .all_reduce(&[mine.len() as u64], &mut longest, Op::Max)
        {
            self.note(format_args!("the output's size"), e);
            return field;
        }
        let share = (longest[0] as usize).max(1);
        mine.resize(share, f64::NAN);
        let mut all = vec![f64::NAN; share * self.world.size() as usize];
        if let Err(e) = self.world.all_gather(&mine, &mut all) {
            self.note(format_args!("the output's all-gather"), e);
            return field;
        }
        let blocks = decomposition.blocks();
        let mut have = vec![false; blocks];
        for &block in self.blocks.keys() {
            have[block] = true;
        }
        for (rank, chunk) in all.chunks(share).enumerate() {
            let mut at = 0;
            while at < chunk.len() && !chunk[at].is_nan() {
                let block = chunk[at] as usize;
                let end = at + 1 + decomposition.cells_len(block.min(blocks - 1));
                if block >= blocks || end > chunk.len() {
                    self.note(
                        format_args!("the output from rank {rank}"),
                        Error::Internal {
                            reason: format!("a malformed share (block {block} at {at})"),
                        },
                    );
                    break;
                }
                if !have[block] && self.placement.owner(block) == rank as Rank {
                    decomposition.paste(block, &chunk[at + 1..end], &mut field);
                    have[block] = true;
                }
                at = end;
            }
        }
        if let Some(block) = have.iter().position(|&h| !h) {
            let owner = self.placement.owner(block);
            self.note(
                format_args!("final block {block} from rank {owner}"),
                Error::Internal {
                    reason: "not in the output's all-gather".into(),
                },
            );
        }
        field
    }

    /// Kills this rank if the plan says so at `point`.
    fn kill_if_planned(&self, point: KillPoint) {
        if !self.replacement && self.config().kills.contains(&(self.me, point)) {
            if self.config().verbose {
                self.say(format_args!(
                    "rank {} dies at iteration {}{} (injected)",
                    self.me,
                    self.iteration,
                    match point {
                        KillPoint::Recovery(n) => format!(", in recovery #{n}"),
                        _ => String::new(),
                    }
                ));
            }
            self.shared
                .kill_times
                .lock()
                .expect("kill log")
                .push((self.me, Instant::now()));
            self.shared.death.strike(self.me);
        }
    }

    /// Called after each send of a pass: a `KillPoint::Recovery` strikes after the first one.
    fn after_send(&mut self) {
        if !self.sent_in_pass {
            self.sent_in_pass = true;
            self.kill_in_recovery();
        }
    }

    fn kill_in_recovery(&self) {
        if self.recovering_since.is_some() {
            self.kill_if_planned(KillPoint::Recovery(self.recoveries.len() as u64));
        }
    }

    /// Records the first error of the pass and says so.
    fn note(&mut self, what: std::fmt::Arguments<'_>, error: Error) {
        if self.pass_error.is_none() {
            if self.config().verbose {
                self.say(format_args!(
                    "rank {} iteration {}: {what} failed: {error}",
                    self.me, self.iteration
                ));
            }
            self.pass_error = Some(error);
        }
    }

    /// One Jacobi iteration of every owned block: send every halo, copy the internal ones,
    /// receive the others, then sweep. A missing halo leaves the blocks as they were (the pass
    /// will be rolled back).
    fn step(&mut self) {
        let decomposition = self.shared.decomposition;
        let mut internal = Vec::new();
        let mut outgoing = Vec::new();
        for (&block, state) in &self.blocks {
            for side in Side::ALL {
                let Some(neighbor) = decomposition.neighbor(block, side) else {
                    continue;
                };
                let edge = state.edge(side);
                let owner = self.placement.owner(neighbor);
                if owner == self.me {
                    internal.push((neighbor, side.opposite(), edge));
                } else {
                    outgoing.push((owner, neighbor, side.opposite(), edge));
                }
            }
        }
        for (owner, neighbor, side, edge) in outgoing {
            let tag = self.shared.tags.halo(self.pass, neighbor, side);
            if let Err(e) = self.world.send(&edge, owner, tag) {
                self.note(format_args!("halo to rank {owner} (block {neighbor})"), e);
            }
            self.after_send();
        }
        if !self.sent_in_pass {
            self.kill_in_recovery();
        }
        for (neighbor, side, edge) in internal {
            self.blocks
                .get_mut(&neighbor)
                .expect("owned")
                .set_ghost(side, &edge);
        }
        let owned: Vec<usize> = self.blocks.keys().copied().collect();
        for block in owned {
            for side in Side::ALL {
                let Some(neighbor) = decomposition.neighbor(block, side) else {
                    continue;
                };
                let owner = self.placement.owner(neighbor);
                if owner == self.me {
                    continue;
                }
                let mut edge = vec![0.0f64; self.blocks[&block].edge_len(side)];
                let tag = self.shared.tags.halo(self.pass, block, side);
                match self.world.recv(&mut edge, owner, tag) {
                    Ok(status) if status.source.is_some() && status.count == edge.len() => {
                        self.blocks
                            .get_mut(&block)
                            .expect("owned")
                            .set_ghost(side, &edge);
                    }
                    Ok(status) => self.note(
                        format_args!("halo from rank {owner} (block {neighbor})"),
                        Error::Internal {
                            reason: format!("unexpected halo {status:?}"),
                        },
                    ),
                    Err(e) => {
                        self.note(format_args!("halo from rank {owner} (block {neighbor})"), e)
                    }
                }
            }
        }
        if self.pass_error.is_none() {
            self.blocks.values_mut().for_each(Block::sweep);
        }
    }

    /// A checkpoint pass: every owned block's cells to its buddies over the ranks OK in G, and
    /// the buddies' cells from their owners. Counts only if `validate_global` then finds no new
    /// failure.
    fn checkpoint_exchange(&mut self) -> PendingCheckpoint {
        let holders = self
            .placement
            .checkpoint_holders(&self.g, self.config().buddies);
        let mut copies = BTreeMap::new();
        let mut outgoing = Vec::new();
        for (&block, state) in &self.blocks {
            copies.insert(block, state.cells().to_vec());
            for &buddy in &holders[block][1..] {
                outgoing.push((block, buddy));
            }
        }
        for (block, buddy) in outgoing {
            let tag = self.shared.tags.checkpoint(self.pass, block);
            if let Err(e) = self.world.send(self.blocks[&block].cells(), buddy, tag) {
                self.note(
                    format_args!("checkpoint copy to rank {buddy} (block {block})"),
                    e,
                );
            }
            self.after_send();
        }
        if !self.sent_in_pass {
            self.kill_in_recovery();
        }
        for (block, block_holders) in holders.iter().enumerate() {
            if !block_holders[1..].contains(&self.me) {
                continue;
            }
            let owner = self.placement.owner(block);
            let tag = self.shared.tags.checkpoint(self.pass, block);
            let expected = self.shared.decomposition.cells_len(block);
            match self.world.recv_vec::<f64>(owner, tag) {
                Ok((cells, status)) if status.source.is_some() && cells.len() == expected => {
                    copies.insert(block, cells);
                }
                Ok((_, status)) => self.note(
                    format_args!("checkpoint copy from rank {owner} (block {block})"),
                    Error::Internal {
                        reason: format!("unexpected copy {status:?}"),
                    },
                ),
                Err(e) => self.note(
                    format_args!("checkpoint copy from rank {owner} (block {block})"),
                    e,
                ),
            }
        }
        PendingCheckpoint { holders, copies }
    }

    /// Every survivor commits the same checkpoint (the pass's `validate_global` was uniform).
    fn commit(&mut self, pending: PendingCheckpoint, after: &FailureView) {
        let copies = pending.holders.first().map_or(0, Vec::len);
        self.store = pending.copies;
        self.committed = Committed::Stored {
            iteration: self.iteration,
            holders: pending.holders,
        };
        if self.is_leader(after) {
            self.say(format_args!(
                "checkpoint of iteration {} committed: each block on {copies} rank{}",
                self.iteration,
                if copies == 1 { " (no buddy left)" } else { "s" }
            ));
        }
        if let Some(since) = self.recovering_since {
            self.recovered(since);
        }
    }

    /// The recovery in progress is complete: redundancy is back.
    fn recovered(&mut self, since: Instant) {
        self.recovering_since = None;
        let elapsed = since.elapsed();
        let leader = self.is_leader(&self.world.global_view().unwrap_or_else(|_| self.g.clone()));
        let Some(record) = self.recoveries.last_mut() else {
            return;
        };
        record.agreement_to_recovered = Some(elapsed);
        if leader {
            let record = record.clone();
            self.say(format_args!(
                "recovery #{} done: back at iteration {} on {} ranks; kill -> agreed {}, agreed -> recovered {:.2?}",
                record.number,
                record.rolled_back_to,
                self.placement.load().len(),
                record
                    .kill_to_agreement
                    .map_or("(unknown)".to_string(), |d| format!("{d:.2?}")),
                elapsed
            ));
        }
    }

    /// New failures in G: move the dead ranks' blocks to surviving holders and roll back.
    fn recover(&mut self, after: &FailureView, agreed_at: Instant) -> Result<(), HeatError> {
        let new_in_g: Vec<Rank> = after
            .ranks(RankState::NULL | RankState::NEW)
            .map(|info| info.rank)
            .collect();
        let leader = self.is_leader(after);
        if leader {
            self.say(format_args!(
                "iteration {}: validate_global: ranks {new_in_g:?} are NULL|NEW in G ({} failed in all, {} OK)",
                self.iteration,
                after.num_failed(),
                after.count(RankState::OK)
            ));
        }
        let checkpoint = self.committed.iteration();
        let moves = self
            .placement
            .recover(after, &self.committed)
            .map_err(|lost| {
                if leader {
                    self.say(format_args!(
                        "UNRECOVERABLE: block {} of checkpoint {checkpoint} had its copies on ranks {:?}, all failed",
                        lost.block, lost.holders
                    ));
                }
                HeatError::Unrecoverable {
                    lost,
                    at_iteration: self.iteration,
                    checkpoint,
                }
            })?;
        let decomposition = self.shared.decomposition;
        let mut blocks = BTreeMap::new();
        for block in self.placement.blocks_of(self.me) {
            let state = match &self.committed {
                Committed::Initial => decomposition.initial_block(block),
                Committed::Stored { .. } => {
                    let cells = self.store.get(&block).cloned().ok_or_else(|| {
                        HeatError::Inconsistent(format!(
                            "rank {} owns block {block} but holds no copy of it",
                            self.me
                        ))
                    })?;
                    decomposition.block_from_cells(block, cells)
                }
            };
            blocks.insert(block, state);
        }
        self.blocks = blocks;
        let kill_to_agreement = {
            let kills = self.shared.kill_times.lock().expect("kill log");
            kills
                .iter()
                .filter(|(rank, _)| new_in_g.contains(rank))
                .map(|(_, at)| *at)
                .min()
                .map(|at| agreed_at.saturating_duration_since(at))
        };
        let record = RecoveryRecord {
            number: self.recoveries.len() as u32 + 1,
            at_iteration: self.iteration,
            new_in_g,
            failed_in_all: after.num_failed(),
            moves,
            rolled_back_to: checkpoint,
            during_recovery: self.recovering_since.is_some(),
            kill_to_agreement,
            agreement_to_recovered: None,
            respawned: None,
        };
        if leader {
            let moves: Vec<String> = record
                .moves
                .iter()
                .map(|m| format!("block {}: rank {} -> {}", m.block, m.from, m.to))
                .collect();
            self.say(format_args!(
                "recovery #{}{}: {}; rolling back from iteration {} to {} ({})",
                record.number,
                if record.during_recovery {
                    " (a failure during recovery)"
                } else {
                    ""
                },
                moves.join(", "),
                self.iteration,
                checkpoint,
                if checkpoint == 0 {
                    "the initial field, regenerated"
                } else {
                    "the committed checkpoint"
                }
            ));
        }
        self.recoveries.push(record);
        self.recovering_since = Some(agreed_at);
        if !self.config().planted_skip_rollback {
            self.iteration = checkpoint;
        }
        Ok(())
    }

    fn progress(&self, after: &FailureView) {
        let every = self.config().progress_every;
        if every == 0 || !self.iteration.is_multiple_of(every) || !self.is_leader(after) {
            return;
        }
        let load = self.placement.load();
        self.say(format_args!(
            "iteration {:>5}/{}: {} ranks alive, at most {} block(s) per rank",
            self.iteration,
            self.config().iterations,
            load.len(),
            load.values().max().copied().unwrap_or(0)
        ));
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A master–worker bag of tasks that loses workers and still returns exactly the failure-free
//! results.
//!
//! Rank 0 is the master; ranks `1..n` are workers. The master keeps up to `window` tasks in
//! flight per worker and receives results on `Source::Any`. When a worker dies:
//!
//! 1. the master's wildcard receive returns `Error::ProcFailedPending` (semantics §3.2), once no
//!    buffered result matches (a send of a task to the dead worker that returns
//!    `Error::ProcFailed` only stops the master from sending it more; the acknowledgement waits
//!    for the wildcard receive, the one place where failures are handled);
//! 2. the master acknowledges with `validate_local`, and looks the newly failed workers up in the
//!    returned view (`RankState::FAILED | RankState::NEW`);
//! 3. it puts their outstanding tasks back at the front of the queue and hands them to live
//!    workers; wildcard receives work again at once.
//!
//! With [`Config::replace`] (`--replace`), the master then also replaces the dead workers: it
//! tells every live worker to recover (after the tasks it holds), receives their results, and
//! all of them call `Comm::respawn`, which starts a new worker for each dead one with its
//! number; the new workers (`Comm::parent`, `InterComm::join_respawn`) take tasks like the
//! others, so the bag keeps its number of workers.
//!
//! A result that a worker sent before it died is still received (complete messages from a dead
//! rank stay receivable, semantics §1); a task whose result arrives twice is counted once (results
//! are deterministic, and the two must be equal). When no worker is left, the master computes the
//! remaining tasks itself. The master is the single point of failure: it is never killed.
//!
//! ```
//! use runthrough_examples::bag_of_tasks::{self, Config};
//! let config = Config { ranks: 4, tasks: 40, work: 1_000, kills: vec![(2, 3)], ..Config::default() };
//! let report = bag_of_tasks::run(&config).unwrap();
//! assert_eq!(report.results, report.reference);
//! assert_eq!(report.events[0].new_failed, vec![2]);
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use runthrough::{Comm, Error, FailureView, Rank, RankOutcome, RankState, Source};

use crate::checksum::fnv1a;
use crate::held::Held;
use crate::kills::{die_now, Death};

/// A task for a worker (one `u64`), or, empty, the order to stop, or, two words, the order to
/// recover with the master (`Comm::respawn`, [`Config::replace`]); each after the tasks sent
/// before it (messages from one sender on one tag are not overtaken).
const TAG_TASK: i32 = 1;
const TAG_RESULT: i32 = 2;
/// Multi-process only: `[1]` tells a worker's process to die now (an injected kill), `[0]`
/// that no kill is coming.
const TAG_KILL: i32 = 3;
/// A tag nobody sends on: the master's receive on it from a worker it told to die returns
/// once the death is known.
const TAG_DEATH: i32 = 4;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Ranks: the master and `ranks - 1` workers.
    pub ranks: u32,
    /// Tasks in the bag.
    pub tasks: u64,
    /// Tasks in flight per worker.
    pub window: usize,
    /// Cost of one task (rounds of a mixing function).
    pub work: u32,
    /// Injected failures: `(worker, k)` kills the worker once the master has `k` results, just
    /// before its next wildcard receive (`k = 0`: once the first tasks are out), wherever the
    /// worker is then: computing, waiting for a task, or with a result in flight. In-process,
    /// kills are by the job's fault handle, as a launcher kills a process, so they strike at
    /// the same point of the master's progress whatever the thread scheduling; in a
    /// multi-process job ([`run_rank`]) the master sends the worker an order to die, which a
    /// thread of the worker's process obeys at once (so a little later, in the master's
    /// progress, than in-process).
    pub kills: Vec<(Rank, u64)>,
    /// A progress line every this many results (0: none).
    pub progress_every: u64,
    /// Print progress and events while running.
    pub verbose: bool,
    /// Replace dead workers (`--replace`): after each failure the master and the live workers
    /// call `Comm::respawn`, which starts a new worker in each dead one's place, so the bag
    /// keeps its number of workers. Planned kills name the job's first workers.
    pub replace: bool,
    /// A bug planted for the simulation's tests (`runthrough::explore` must find it): the
    /// master forgets to re-issue a dead worker's tasks. Never set it otherwise.
    #[doc(hidden)]
    pub planted_forget_reissue: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ranks: 8,
            tasks: 400,
            window: 2,
            work: 200_000,
            kills: Vec::new(),
            progress_every: 50,
            verbose: false,
            replace: false,
            planted_forget_reissue: false,
        }
    }
}

/// One task's result: deterministic, so the failure-free results are known.
pub fn task_result(task: u64, work: u32) -> u64 {
    let mut x = task.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851_f42d_4c95_7f2d;
    for _ in 0..work {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    x ^ (x >> 29)
}

/// The failure-free results, computed sequentially.
pub fn reference(config: &Config) -> Vec<u64> {
    (0..config.tasks)
        .map(|t| task_result(t, config.work))
        .collect()
}

/// One acknowledged failure, as the master handled it.
#[derive(Debug, Clone)]
pub struct FailureEvent {
    /// Results the master had when its wildcard receive returned `ProcFailedPending`.
    pub after_results: u64,
    /// The ranks `validate_local` returned as `FAILED | NEW`.
    pub new_failed: Vec<Rank>,
    /// |L| after it.
    pub failed_in_all: usize,
    /// The dead workers' outstanding tasks, put back in the bag.
    pub reissued: Vec<u64>,
    /// From the `ProcFailedPending` to the re-issued tasks being handed out again (or queued,
    /// when every live worker's window is full).
    pub reissue_time: Duration,
    /// With [`Config::replace`]: the worker numbers new workers took (the dead ones, and any
    /// that died during the recovery), and the time from the `ProcFailedPending` to the new
    /// workers being ready.
    pub replaced: Option<(Vec<Rank>, Duration)>,
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every task's result, in task order.
    pub results: Vec<u64>,
    /// The failure-free results.
    pub reference: Vec<u64>,
    /// FNV-1a over `results`.
    pub checksum: u64,
    /// FNV-1a over `reference`.
    pub reference_checksum: u64,
    /// The failures the master handled, in order.
    pub events: Vec<FailureEvent>,
    /// Results counted per rank (the master's own included, as rank 0).
    pub by_rank: BTreeMap<Rank, u64>,
    /// Results received twice (a dead worker's buffered result and its re-issue).
    pub duplicates: u64,
    /// Ranks killed by injection.
    pub killed: Vec<Rank>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Report {
    /// Whether the results equal the failure-free ones.
    pub fn matches_reference(&self) -> bool {
        self.results == self.reference
    }
}

/// Why a run produced no results.
#[derive(Debug, Clone)]
pub enum BagError {
    /// The configuration cannot run.
    Config(String),
    /// A runtime call failed in a way the application does not recover from.
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
    /// Two results of one task differ, or a message made no sense: a bug.
    Inconsistent(String),
}

impl fmt::Display for BagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BagError::Config(reason) => write!(f, "bad configuration: {reason}"),
            BagError::Runtime { rank, error } => write!(f, "rank {rank}: {error}"),
            BagError::Panicked { rank, message } => write!(f, "rank {rank} panicked: {message}"),
            BagError::Inconsistent(reason) => write!(f, "inconsistent run: {reason}"),
        }
    }
}

impl std::error::Error for BagError {}

/// Runs the bag on `config.ranks` in-process ranks with the injected failures.
///
/// # Errors
/// See [`BagError`]. Results that differ from the reference are reported by
/// [`Report::matches_reference`], not as an error.
pub fn run(config: &Config) -> Result<Report, BagError> {
    check(config)?;
    let universe = runthrough::local(config.ranks);
    let shared = Shared {
        config,
        death: Death::Thread(universe.fault_handle()),
        started: Instant::now(),
        lines: Mutex::new(()),
    };
    let outcomes = universe.run(|world| {
        if let Some(parents) = world.parent() {
            replacement(&parents, &shared).map(|_| None)
        } else if world.rank() == 0 {
            Master::new(world, &shared).run().map(Some)
        } else {
            worker(world, &shared).map(|_| None)
        }
    });
    let elapsed = shared.started.elapsed();
    let mut master = None;
    let mut killed = Vec::new();
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        let rank = rank as Rank;
        match outcome {
            RankOutcome::Returned(Ok(Some(done))) => master = Some(done),
            RankOutcome::Returned(Ok(None)) => {}
            RankOutcome::Returned(Err(error)) => return Err(error),
            RankOutcome::Killed => killed.push(rank),
            RankOutcome::Panicked(message) => return Err(BagError::Panicked { rank, message }),
        }
    }
    let master =
        master.ok_or_else(|| BagError::Inconsistent("the master did not return".into()))?;
    let reference = reference(config);
    Ok(Report {
        checksum: fnv1a(master.results.iter().copied()),
        reference_checksum: fnv1a(reference.iter().copied()),
        results: master.results,
        reference,
        events: master.events,
        by_rank: master.by_rank,
        duplicates: master.duplicates,
        killed,
        elapsed,
    })
}

fn check(config: &Config) -> Result<(), BagError> {
    if config.ranks < 1 {
        return Err(BagError::Config("at least one rank (the master)".into()));
    }
    if config.window == 0 {
        return Err(BagError::Config("--window must be at least 1".into()));
    }
    if let Some((rank, _)) = config
        .kills
        .iter()
        .find(|(r, _)| *r == 0 || *r >= config.ranks)
    {
        return Err(BagError::Config(format!(
            "cannot kill rank {rank}: kills name workers 1..={} (the master is not fault tolerant)",
            config.ranks.saturating_sub(1)
        )));
    }
    Ok(())
}

/// Runs one rank of the bag on `world`, whichever way the world was obtained: the body that
/// [`run`] gives each in-process rank, and what each process of a multi-process job
/// (`runthrough::init()`, under rtrun) runs. `config.ranks` must be `world.size()`. The master
/// (rank 0) returns its results, to be compared with [`reference()`] by the caller; a worker
/// returns `None` once told to stop.
///
/// With [`Death::Process`], each worker's process also runs a thread that waits for the
/// master's order to die (the master's planned kills), and ends the process at once when it
/// comes; the master releases those threads at the end.
///
/// # Errors
/// See [`BagError`].
pub fn run_rank(
    world: &Comm,
    config: &Config,
    death: Death,
) -> Result<Option<MasterRun>, BagError> {
    if let Some(parents) = world.parent() {
        // A new worker of `--replace`: its job's size is its parents' and its own.
        let size = parents.remote_size() + world.size();
        if config.ranks != size {
            return Err(BagError::Config(format!(
                "the configuration is for {} ranks, the job has {size}",
                config.ranks
            )));
        }
        let shared = Shared {
            config,
            death,
            started: Instant::now(),
            lines: Mutex::new(()),
        };
        return replacement(&parents, &shared).map(|_| None);
    }
    if config.ranks != world.size() {
        return Err(BagError::Config(format!(
            "the configuration is for {} ranks, the job has {}",
            config.ranks,
            world.size()
        )));
    }
    check(config)?;
    if matches!(death, Death::Runtime) && !config.kills.is_empty() {
        return Err(BagError::Config(
            "kills of the application's own with Death::Runtime (only the runtime's plan kills)"
                .into(),
        ));
    }
    let by_message = matches!(death, Death::Process);
    let shared = Shared {
        config,
        death,
        started: Instant::now(),
        lines: Mutex::new(()),
    };
    if world.rank() == 0 {
        let done = Master::new(world, &shared).run()?;
        // The workers it told to die (every planned kill below the task count was given) do
        // die: a receive on a tag nobody sends returns once this rank knows of the death, so
        // the summary holds every planned failure however fast the tasks went (a kill order
        // can land after the last result).
        for &(worker, at) in &shared.config.kills {
            if at < shared.config.tasks {
                let _ = world.recv(&mut [0u8; 1], worker, TAG_DEATH);
            }
        }
        return Ok(Some(MasterRun {
            checksum: fnv1a(done.results.iter().copied()),
            results: done.results,
            events: done.events,
            by_rank: done.by_rank,
            duplicates: done.duplicates,
            // Every failure known by now (some may have struck after the last result).
            failed: world
                .validate_local()
                .unwrap_or(done.local)
                .ranks(RankState::FAILED | RankState::NULL)
                .map(|i| i.rank)
                .collect(),
            elapsed: shared.started.elapsed(),
        }));
    }
    if !by_message {
        return worker(world, &shared).map(|_| None);
    }
    std::thread::scope(|scope| {
        scope.spawn(|| obey_kill_orders(world));
        worker(world, &shared).map(|_| None)
    })
}

/// What the master of [`run_rank`] ends with.
#[derive(Debug, Clone)]
pub struct MasterRun {
    /// Every task's result, in task order.
    pub results: Vec<u64>,
    /// FNV-1a over `results`.
    pub checksum: u64,
    /// The failures the master handled, in order.
    pub events: Vec<FailureEvent>,
    /// Results counted per rank (the master's own included, as rank 0).
    pub by_rank: BTreeMap<Rank, u64>,
    /// Results received twice.
    pub duplicates: u64,
    /// The failed ranks the master knew of at the end (its L after a last `validate_local`).
    pub failed: Vec<Rank>,
    /// Wall time of the master's run.
    pub elapsed: Duration,
}

/// A worker process's thread that waits for the master's order: `[1]` ends the process (an
/// injected death), `[0]` (or an error: the master is gone) ends the thread.
fn obey_kill_orders(world: &Comm) {
    let mut order = [0u64];
    if let Ok(status) = world.recv(&mut order, 0u32, TAG_KILL) {
        if status.source.is_some() && order[0] == 1 {
            die_now();
        }
    }
}

struct Shared<'a> {
    config: &'a Config,
    death: Death,
    started: Instant,
    lines: Mutex<()>,
}

impl Shared<'_> {
    fn say(&self, line: fmt::Arguments<'_>) {
        if self.config.verbose {
            let _one_at_a_time = self.lines.lock();
            println!("[{:>8.2?}] {line}", self.started.elapsed());
        }
    }
}

/// A worker: receive a task from the master, compute, send the result, until told to stop;
/// told to recover, it takes part in the master's `Comm::respawn` and goes on on the new
/// communicator.
fn worker(world: &Comm, shared: &Shared<'_>) -> Result<u64, BagError> {
    work(Held::Borrowed(world), shared)
}

/// A new worker started by the master's `Comm::respawn`: it joins the new communicator and
/// works there. A worker of a recovery attempt that met another failure ends at once (the
/// others start another).
fn replacement(parents: &runthrough::InterComm, shared: &Shared<'_>) -> Result<u64, BagError> {
    match parents.join_respawn() {
        Ok(comm) => {
            shared.say(format_args!("worker {}: a replacement, ready", comm.rank()));
            work(Held::Owned(comm), shared)
        }
        Err(_) => Ok(0),
    }
}

fn work(mut comm: Held<'_>, shared: &Shared<'_>) -> Result<u64, BagError> {
    let me = comm.rank();
    let runtime = |error| BagError::Runtime { rank: me, error };
    let mut received = 0u64;
    loop {
        let mut task = [0u64; 2];
        let status = comm.recv(&mut task, 0u32, TAG_TASK).map_err(runtime)?;
        match (status.source, status.count) {
            (Some(_), 1) => {}
            (Some(_), 0) => return Ok(received),
            (Some(_), 2) => {
                comm = Held::Owned(comm.respawn().map_err(runtime)?);
                continue;
            }
            _ => {
                return Err(BagError::Inconsistent(format!(
                    "worker {me}: unexpected message from the master: {status:?}"
                )))
            }
        }
        received += 1;
        let value = task_result(task[0], shared.config.work);
        comm.send(&[task[0], value], 0, TAG_RESULT)
            .map_err(runtime)?;
    }
}

/// What the master returns.
struct MasterResult {
    results: Vec<u64>,
    events: Vec<FailureEvent>,
    by_rank: BTreeMap<Rank, u64>,
    duplicates: u64,
    /// L at the end.
    local: FailureView,
}

struct Master<'a> {
    /// The job's world: the kill orders of a multi-process job go over it.
    world: &'a Comm,
    /// The communicator the bag runs on: the world, or the last respawn's.
    comm: Held<'a>,
    shared: &'a Shared<'a>,
    /// Tasks not handed out, re-issued ones first.
    queue: VecDeque<u64>,
    /// Live workers (as far as L knows) and their tasks in flight.
    outstanding: BTreeMap<Rank, VecDeque<u64>>,
    results: Vec<Option<u64>>,
    done: u64,
    /// L as of the last `validate_local`.
    local: FailureView,
    events: Vec<FailureEvent>,
    /// The event whose re-issued tasks are waiting to be handed out, and when it was noticed.
    reissuing: Option<(usize, Instant)>,
    by_rank: BTreeMap<Rank, u64>,
    duplicates: u64,
    alone: bool,
    /// Injected kills not yet done.
    kills: Vec<(Rank, u64)>,
    /// Workers a send found dead, not yet acknowledged: they get no more tasks.
    unreachable: BTreeSet<Rank>,
}

impl<'a> Master<'a> {
    fn new(world: &'a Comm, shared: &'a Shared<'a>) -> Self {
        let tasks = shared.config.tasks;
        Master {
            world,
            comm: Held::Borrowed(world),
            shared,
            queue: (0..tasks).collect(),
            outstanding: (1..world.size()).map(|w| (w, VecDeque::new())).collect(),
            results: vec![None; tasks as usize],
            done: 0,
            local: FailureView::empty(world.size()),
            events: Vec::new(),
            reissuing: None,
            by_rank: BTreeMap::new(),
            duplicates: 0,
            alone: false,
            kills: shared.config.kills.clone(),
            unreachable: BTreeSet::new(),
        }
    }

    fn runtime(&self, error: Error) -> BagError {
        BagError::Runtime { rank: 0, error }
    }

    fn run(mut self) -> Result<MasterResult, BagError> {
        let config = self.shared.config;
        self.shared.say(format_args!(
            "master: {} tasks, {} workers, {} in flight per worker",
            config.tasks,
            self.outstanding.len(),
            config.window
        ));
        while self.done < config.tasks {
            self.dispatch()?;
            if let Some((event, noticed)) = self.reissuing.take() {
                let elapsed = noticed.elapsed();
                self.events[event].reissue_time = elapsed;
                self.shared.say(format_args!(
                    "master: tasks {:?} back in flight {elapsed:.2?} after the notice",
                    self.events[event].reissued
                ));
            }
            if self.outstanding.is_empty() {
                self.compute_one_locally()?;
                continue;
            }
            self.inject_kills();
            let mut message = [0u64; 2];
            match self.comm.recv(&mut message, Source::Any, TAG_RESULT) {
                Ok(status) => {
                    let worker = status.source.ok_or_else(|| {
                        BagError::Inconsistent("a wildcard receive completed as PROC_NULL".into())
                    })?;
                    self.accept(worker, message[0], message[1])?;
                }
                Err(Error::ProcFailedPending) => self.acknowledge()?,
                Err(error) => return Err(self.runtime(error)),
            }
        }
        let release = matches!(self.shared.death, Death::Process);
        for &worker in self.outstanding.keys() {
            // A worker that died since is no concern of ours any more.
            let _ = self.comm.send::<u64>(&[], worker, TAG_TASK);
        }
        if release {
            // The job's first workers' kill-order threads (new workers have none).
            for worker in 1..self.world.size() {
                let _ = self.world.send(&[0u64], worker, TAG_KILL);
            }
        }
        self.shared.say(format_args!(
            "master: all {} results in ({} duplicates ignored); results per rank {:?}",
            self.done, self.duplicates, self.by_rank
        ));
        Ok(MasterResult {
            results: self.results.into_iter().map(|r| r.unwrap_or(0)).collect(),
            events: self.events,
            by_rank: self.by_rank,
            duplicates: self.duplicates,
            local: self.local,
        })
    }

    /// Hands queued tasks to the least-loaded live workers, up to `window` each.
    fn dispatch(&mut self) -> Result<(), BagError> {
        let window = self.shared.config.window;
        while let Some(&task) = self.queue.front() {
            let Some(worker) = self
                .outstanding
                .iter()
                .filter(|(w, tasks)| tasks.len() < window && !self.unreachable.contains(w))
                .min_by_key(|(&w, tasks)| (tasks.len(), w))
                .map(|(&w, _)| w)
            else {
                return Ok(());
            };
            match self.comm.send(&[task], worker, TAG_TASK) {
                Ok(()) => {
                    self.queue.pop_front();
                    self.outstanding
                        .get_mut(&worker)
                        .expect("live worker")
                        .push_back(task);
                }
                Err(Error::ProcFailed { .. }) => {
                    // Dead, but not acknowledged yet: send it nothing more; the wildcard receive
                    // will report the failure and the task stays queued.
                    self.shared.say(format_args!(
                        "master: sending task {task} to worker {worker} returned ProcFailed after {} results; sending it nothing more",
                        self.done
                    ));
                    self.unreachable.insert(worker);
                }
                Err(error) => return Err(self.runtime(error)),
            }
        }
        Ok(())
    }

    /// Kills the workers planned to die by now (just before the master's wildcard receive, so
    /// that the receive is what usually notices).
    fn inject_kills(&mut self) {
        let done = self.done;
        let (due, later): (Vec<_>, Vec<_>) = self.kills.iter().partition(|(_, at)| *at <= done);
        self.kills = later;
        for (worker, _) in due {
            match &self.shared.death {
                // Refused by `run_rank` (no kill of the application's own is planned).
                Death::Runtime => self.shared.death.strike(worker),
                Death::Thread(_) => {
                    self.shared.say(format_args!(
                        "worker {worker} killed after {done} results (injected)"
                    ));
                    self.shared.death.strike(worker);
                }
                Death::Process => {
                    self.shared.say(format_args!(
                        "worker {worker} told to die after {done} results (injected)"
                    ));
                    // A worker that is dead already needs no telling.
                    let _ = self.world.send(&[1u64], worker, TAG_KILL);
                }
            }
        }
    }

    /// A result from `worker`.
    fn accept(&mut self, worker: Rank, task: u64, value: u64) -> Result<(), BagError> {
        let slot = self.results.get_mut(task as usize).ok_or_else(|| {
            BagError::Inconsistent(format!("worker {worker} returned unknown task {task}"))
        })?;
        if let Some(tasks) = self.outstanding.get_mut(&worker) {
            tasks.retain(|&t| t != task);
        }
        match *slot {
            Some(earlier) if earlier == value => self.duplicates += 1,
            Some(earlier) => {
                return Err(BagError::Inconsistent(format!(
                    "task {task}: results {earlier:#x} and {value:#x} differ"
                )))
            }
            None => {
                *slot = Some(value);
                self.done += 1;
                *self.by_rank.entry(worker).or_insert(0) += 1;
                // A dead worker's result that was still buffered: no need to redo the task.
                self.queue.retain(|&t| t != task);
                let every = self.shared.config.progress_every;
                if every > 0 && self.done.is_multiple_of(every) {
                    self.shared.say(format_args!(
                        "results {:>5}/{}: {} workers alive",
                        self.done,
                        self.shared.config.tasks,
                        self.outstanding.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Acknowledges the failures the detector knows (`validate_local`) and re-issues the tasks
    /// of the workers that are newly failed in the returned view.
    fn acknowledge(&mut self) -> Result<(), BagError> {
        let noticed = Instant::now();
        self.shared.say(format_args!(
            "master: receive on Source::Any returned ProcFailedPending after {} results",
            self.done
        ));
        let view = self.comm.validate_local().map_err(|e| self.runtime(e))?;
        let new_failed: Vec<Rank> = view
            .ranks(RankState::FAILED | RankState::NEW)
            .map(|info| info.rank)
            .collect();
        let mut reissued = Vec::new();
        for worker in &new_failed {
            self.unreachable.remove(worker);
            if let Some(tasks) = self.outstanding.remove(worker) {
                reissued.extend(tasks);
            }
        }
        if self.shared.config.planted_forget_reissue {
            reissued.clear();
        }
        for &task in reissued.iter().rev() {
            self.queue.push_front(task);
        }
        self.shared.say(format_args!(
            "master: validate_local: ranks {new_failed:?} are FAILED|NEW in L ({} failed in all); re-issuing their tasks {reissued:?}",
            view.num_failed()
        ));
        self.local = view;
        self.events.push(FailureEvent {
            after_results: self.done,
            new_failed,
            failed_in_all: self.local.num_failed(),
            reissued,
            reissue_time: Duration::ZERO,
            replaced: None,
        });
        self.reissuing = Some((self.events.len() - 1, noticed));
        if self.shared.config.replace {
            let replaced = self.replace_workers()?;
            let event = self.events.last_mut().expect("just pushed");
            event.replaced = Some((replaced, noticed.elapsed()));
        }
        Ok(())
    }

    /// `--replace`: every live worker is told to recover once its tasks are done, their
    /// results are received, and all call `Comm::respawn`: a new worker in each dead one's
    /// place. Returns the numbers replaced.
    fn replace_workers(&mut self) -> Result<Vec<Rank>, BagError> {
        let live: Vec<Rank> = self.outstanding.keys().copied().collect();
        for &worker in &live {
            // A worker that died meanwhile gets no order: the respawn replaces it.
            let _ = self.comm.send(&[0u64, 0u64], worker, TAG_TASK);
        }
        for &worker in &live {
            while self.outstanding.get(&worker).is_some_and(|t| !t.is_empty()) {
                let mut message = [0u64; 2];
                match self.comm.recv(&mut message, worker, TAG_RESULT) {
                    Ok(status) if status.source.is_some() => {
                        self.accept(worker, message[0], message[1])?
                    }
                    // Dead meanwhile: its tasks go back in the bag; the respawn replaces it.
                    _ => {
                        let tasks = self.outstanding.remove(&worker).unwrap_or_default();
                        for &task in tasks.iter().rev() {
                            self.queue.push_front(task);
                        }
                    }
                }
            }
        }
        let before = self.comm.group();
        let comm = self.comm.respawn().map_err(|e| self.runtime(e))?;
        let after = comm.group();
        let replaced: Vec<Rank> = (1..comm.size())
            .filter(|&r| before.world_ranks()[r as usize] != after.world_ranks()[r as usize])
            .collect();
        for worker in &replaced {
            let tasks = self.outstanding.remove(worker).unwrap_or_default();
            for &task in tasks.iter().rev() {
                self.queue.push_front(task);
            }
        }
        self.shared.say(format_args!(
            "master: workers {replaced:?} replaced by new ones; {} workers again",
            comm.size() - 1
        ));
        self.outstanding = (1..comm.size())
            .map(|w| (w, self.outstanding.remove(&w).unwrap_or_default()))
            .collect();
        self.unreachable.clear();
        self.local = FailureView::empty(comm.size());
        self.comm = Held::Owned(comm);
        Ok(replaced)
    }

    /// No worker is left: the master works through the bag itself.
    fn compute_one_locally(&mut self) -> Result<(), BagError> {
        if !self.alone {
            self.alone = true;
            self.shared.say(format_args!(
                "master: no worker left; computing the remaining {} tasks itself",
                self.shared.config.tasks - self.done
            ));
        }
        let task = self.queue.pop_front().ok_or_else(|| {
            BagError::Inconsistent("no worker, no queued task, results missing".into())
        })?;
        let value = task_result(task, self.shared.config.work);
        self.accept(0, task, value)
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A fault-tolerant 2D Jacobi heat solver, with the seed's pattern, its data kept safe by the
//! resilience library ([`runthrough::resilience::Store`]).
//!
//! The `n x n` interior is cut once into one block per initial rank ([`Decomposition`]); ranks
//! own blocks and exchange halos between owners (a rank that owns two neighbouring blocks
//! copies the halo itself). Each pass of the main loop is either one Jacobi iteration, a
//! checkpoint or the output, and ends with `validate_global`:
//!
//! - **No new failure in G**: the pass counts. A step advances the iteration; a checkpoint
//!   stands. Every `checkpoint_every` iterations a checkpoint pass hands each rank's blocks
//!   (with the iteration they are at) to the store, which keeps `buddies` copies of them on
//!   other ranks, on other hosts than the owner's where there are any
//!   ([`Store::with_hosts`](runthrough::resilience::Store::with_hosts), each rank giving its
//!   [`host_key`]), and commits them with one agreement: every survivor has the same
//!   checkpoint or none has.
//! - **New failures in G** (`RankState::NULL | RankState::NEW`): every survivor shrinks the
//!   world to the live ranks and has the store restore the last committed checkpoint over
//!   them ([`Store::recover`](runthrough::resilience::Store::recover)): the dead ranks' blocks
//!   go to the first surviving holders of their copies, every block comes back as it was at
//!   that checkpoint, and the store checkpoints them again on the live ranks before it
//!   returns (redundancy back). The iteration rolls back to the checkpoint's, and a
//!   `validate_global` says whether the recovery stands: a failure during it starts another
//!   one from the same committed checkpoint. A block whose every copy was on a failed rank (a
//!   buddy pair died together) is lost: the store says so at every survivor, and every
//!   survivor reports [`HeatError::Unrecoverable`]. With `buddies = 2` a block survives the
//!   loss of any two ranks.
//! - **Respawn** ([`Config::respawn`]): instead of the shrink, `Comm::respawn` starts a new
//!   rank for each dead one, which joins the store
//!   ([`Store::join_with_hosts`](runthrough::resilience::Store::join_with_hosts)) and gets its
//!   predecessor's block; every block stays on the rank of its number.
//! - **The output pass**, after the last iteration: every owner sends its blocks to every
//!   survivor, so that each holds the whole field; it counts only if its `validate_global` finds
//!   no new failure (otherwise: recovery, and the iterations since the checkpoint are redone).
//!   A field kept by one writer would be lost with it if it died after the last agreement.
//!
//! Iteration 0 needs no copies: anyone can regenerate it, so the store is made in the first
//! checkpoint pass, and a failure before the first checkpoint moves the dead ranks' blocks to
//! the next OK ranks and restarts from the initial field. A store's data is cut into slots,
//! one per rank of the communicator it is made on; here a slot holds the blocks that rank owns
//! then, and a rank that takes over a dead rank's slot takes over all of its blocks.
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
mod respawn;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use runthrough::fault::InjectedBy;
use runthrough::resilience::{Error as StoreError, Redundancy, Slots, Store};
use runthrough::{Comm, Error, FailureView, Fault, FaultPlan, Op, Rank, RankOutcome, RankState};

pub use grid::{initial_field, reference, stencil, Block, Decomposition, Side};
pub use hosts::{host_key, key_of};

use crate::checksum::{bitwise_equal, fnv1a_f64};
use crate::held::Held;
use crate::kills::Death;

/// A block whose every checkpoint copy was on a failed rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostBlock {
    /// The block.
    pub block: usize,
    /// The ranks that held its copies, all failed (its owner first).
    pub holders: Vec<Rank>,
}

/// A block that changed hands in a recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The block.
    pub block: usize,
    /// Its failed owner.
    pub from: Rank,
    /// The survivor that takes it over.
    pub to: Rank,
}

/// Where an injected failure strikes a rank: a trigger of the one fault grammar
/// ([`runthrough::fault`]). heat injects the application's points itself:
/// [`KillPoint::Iteration`] (`3@20`: when the rank starts computing that iteration, the first
/// time it gets there) and [`KillPoint::Recovery`] (`5@r1`, 1 = the first: in that recovery's
/// restore, once the survivors have repaired the communicator (shrunk it, or respawned the dead
/// ranks) and before the store gives the blocks back, so that the restore fails at every
/// survivor and another recovery follows; a recovery to the initial field restores nothing, so
/// there this point is never reached). The runtime's points (`2@v7.1`, i.e. `2@validate_global:7:1`, `1@call:K`, a
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
    /// Copies of each block besides its owner's (1: one buddy; 2 survives any two failures):
    /// the store's `Redundancy::Copies`, at least 1.
    pub buddies: usize,
    /// Injected failures.
    pub kills: Vec<(Rank, KillPoint)>,
    /// A progress line every this many iterations (0: none).
    pub progress_every: u64,
    /// Print progress and events while running.
    pub verbose: bool,
    /// Where each rank runs, `hosts[rank]` a key of its host (equal keys: one host; see
    /// [`key_of`]). `None`: every rank names its own host ([`host_key`]). Each rank gives its
    /// key to the store, which puts the copies of a block on other hosts than its owner's.
    pub hosts: Option<Vec<u64>>,
    /// Non-shrinking recovery (`--recovery respawn`): after a death, the survivors start a
    /// new rank for each dead one (`Comm::respawn`), which joins the store and gets its
    /// predecessor's block from the buddies' copies, and go on with the original number of
    /// ranks, each block on its own rank: in-process, or under rtrun (which starts the new
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
    /// Blocks that changed owner (empty when this recovery was interrupted by another
    /// failure: the next one says where they went).
    pub moves: Vec<Move>,
    /// The committed iteration everyone rolled back to.
    pub rolled_back_to: u64,
    /// Whether this failure struck while an earlier recovery was still in progress.
    pub during_recovery: bool,
    /// From the (first) injected kill among `new_in_g` to the `validate_global` that reported it,
    /// when the kill time is known (kills at an iteration or in a recovery).
    pub kill_to_agreement: Option<Duration>,
    /// From that `validate_global` to the end of the recovery: the blocks restored, their
    /// copies on live ranks again and a `validate_global` that found no new failure (`None`
    /// when another failure interrupted this recovery).
    pub agreement_to_recovered: Option<Duration>,
    /// With [`Config::respawn`]: the ranks that new ranks replaced (their numbers), and the
    /// time from that `validate_global` to the new ranks started (the respawn's communicator
    /// made; `agreement_to_recovered` says when their blocks were restored).
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
    /// The passes each survivor made (steps, checkpoints and the output, each ended by a
    /// `validate_global`; recoveries not counted).
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
        None => Solver::new(Held::Borrowed(world), &shared).run().map(Some),
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
    if config.buddies == 0 {
        return Err(HeatError::Config(
            "--buddies 0: the store keeps at least one copy of each block".into(),
        ));
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
        None => Solver::new(Held::Borrowed(world), &shared).run()?,
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

/// Message tags: the pass number and the halo (one side of one block), so that nothing from an
/// abandoned pass matches later. (The store's messages travel on a communicator of its own.)
struct Tags {
    codes: u64,
    period: u64,
}

impl Tags {
    fn new(blocks: usize) -> Self {
        let codes = 4 * blocks as u64;
        Tags {
            codes,
            period: ((runthrough::TAG_UB as u64 + 1) / codes).max(1),
        }
    }

    /// The halo that fills the ghosts on `side` of `block`.
    fn halo(&self, pass: u64, block: usize, side: Side) -> i32 {
        ((pass % self.period) * self.codes + (block * 4 + side.index()) as u64) as i32
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
    /// One Jacobi iteration of every owned block.
    Step,
    /// The store's checkpoint: its version, or why it was not committed.
    Checkpoint(Result<u64, StoreError>),
    /// The whole final field, assembled here.
    Output(Vec<f64>),
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
    /// The last G: who is alive, for the pre-checkpoint recovery and the progress lines.
    g: FailureView,
    /// The owner of each block.
    owners: Vec<Rank>,
    /// This rank's host key, given to the store.
    host: u64,
    /// The store of the checkpoints, made in the first checkpoint pass.
    store: Option<Store>,
    /// The blocks each slot of the store holds (slot `i`: what rank `i` of the communicator
    /// the store was made on owned then).
    slot_blocks: Vec<Vec<usize>>,
    /// The iteration of the last committed checkpoint (`None`: none yet, the initial field).
    committed: Option<u64>,
    /// Every world rank seen in `world`, with its number there (for the store's holders).
    numbers: BTreeMap<u32, Rank>,
    /// The blocks this rank owns, at `iteration`.
    blocks: BTreeMap<usize, Block>,
    iteration: u64,
    pass: u64,
    recoveries: Vec<RecoveryRecord>,
    /// The `validate_global` return of the recovery in progress.
    recovering_since: Option<Instant>,
    /// The first error of the current pass.
    pass_error: Option<Error>,
    /// Whether the planted bug `Config::planted_skip_validate` has struck.
    skipped_validate: bool,
}

/// A recovery attempt that a failure interrupted (a `validate_global` then says who died).
type Attempt = Result<(), StoreError>;

impl<'a> Solver<'a> {
    fn new(world: Held<'a>, shared: &'a Shared<'a>) -> Self {
        let (me, size) = (world.rank(), world.size());
        let host = shared
            .config
            .hosts
            .as_ref()
            .map_or_else(host_key, |hosts| hosts[me as usize]);
        let mut solver = Solver {
            world,
            replacement: false,
            shared,
            me,
            g: FailureView::empty(size),
            owners: (0..size).collect(),
            host,
            store: None,
            slot_blocks: Vec::new(),
            committed: None,
            numbers: BTreeMap::new(),
            blocks: [(me as usize, shared.decomposition.initial_block(me as usize))].into(),
            iteration: 0,
            pass: 0,
            recoveries: Vec::new(),
            recovering_since: None,
            pass_error: None,
            skipped_validate: false,
        };
        solver.learn_numbers();
        solver
    }

    fn config(&self) -> &Config {
        self.shared.config
    }

    /// Remembers the number of every rank of `world` by its world rank.
    fn learn_numbers(&mut self) {
        let group = self.world.group();
        for (number, &world_rank) in group.world_ranks().iter().enumerate() {
            self.numbers.insert(world_rank, number as Rank);
        }
    }

    /// The numbers in `world` of the ranks of `comm` (a communicator of some of them).
    fn numbers_of(&self, comm: &Comm) -> Vec<Rank> {
        comm.group()
            .world_ranks()
            .iter()
            .map(|w| self.numbers.get(w).copied().unwrap_or(Rank::MAX))
            .collect()
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

    /// The blocks `rank` owns, in increasing order.
    fn blocks_of(&self, rank: Rank) -> Vec<usize> {
        (0..self.owners.len())
            .filter(|&b| self.owners[b] == rank)
            .collect()
    }

    /// The main loop: passes (a step, a checkpoint, or the final output), each ended by
    /// `validate_global`.
    fn run(mut self) -> Result<RankResult, HeatError> {
        let iterations = self.config().iterations;
        let mut checkpoint_due = false;
        loop {
            self.pass += 1;
            self.pass_error = None;
            let pass = if checkpoint_due {
                Pass::Checkpoint(self.checkpoint())
            } else if self.iteration < iterations {
                self.kill_if_planned(KillPoint::Iteration(self.iteration));
                self.step();
                Pass::Step
            } else {
                Pass::Output(self.output_exchange())
            };
            // The seed's pattern: validate at the iteration boundary.
            let after = if self.skips_this_validate() {
                self.g.clone()
            } else {
                self.world.validate_global().map_err(|e| self.runtime(e))?
            };
            if after.new_failures() {
                // The store checkpoints the restored blocks before its recovery returns.
                self.recover(after, Instant::now())?;
                checkpoint_due = false;
                continue;
            }
            if let Some(error) = self.pass_error.take() {
                return Err(HeatError::Inconsistent(format!(
                    "rank {}: `{error}` in pass {} at iteration {}, which validate_global found failure-free",
                    self.me, self.pass, self.iteration
                )));
            }
            match pass {
                Pass::Checkpoint(Ok(_)) => {
                    self.commit(&after);
                    checkpoint_due = false;
                }
                Pass::Checkpoint(Err(error)) => {
                    return Err(HeatError::Inconsistent(format!(
                        "rank {}: the checkpoint of iteration {} failed (`{error}`) in a pass \
                         that validate_global found failure-free",
                        self.me, self.iteration
                    )));
                }
                Pass::Step => {
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

    /// A checkpoint pass: this rank's blocks to the store (made here the first time, over the
    /// live ranks), which commits them at every rank or at none.
    fn checkpoint(&mut self) -> Result<u64, StoreError> {
        if self.store.is_none() {
            self.make_store()?;
        }
        let store = self.store.as_mut().expect("made above");
        let data: Vec<(u32, Vec<u8>)> = store
            .owned()
            .into_iter()
            .map(|slot| {
                (
                    slot,
                    encode(
                        self.iteration,
                        &self.slot_blocks[slot as usize],
                        &self.blocks,
                    ),
                )
            })
            .collect();
        let parts: Vec<(u32, &[u8])> = data.iter().map(|(s, d)| (*s, d.as_slice())).collect();
        store.checkpoint(&parts)
    }

    /// The store, over the live ranks (the world itself while none has failed, else its
    /// shrink): one slot per rank, holding the blocks that rank owns now.
    fn make_store(&mut self) -> Result<(), StoreError> {
        let redundancy = Redundancy::Copies(self.config().buddies as u32);
        let shrunk;
        let comm: &Comm = if self.g.num_failed() == 0 {
            &self.world
        } else {
            shrunk = self.world.shrink()?;
            &shrunk
        };
        let store = Store::with_hosts(comm, redundancy, self.host)?;
        if let Some(count) = store.host_count() {
            if self.is_leader(&self.g) {
                self.say(format_args!(
                    "{} ranks on {count} host{}: {}",
                    comm.size(),
                    if count == 1 { "" } else { "s" },
                    if count == 1 {
                        "each block's buddy copies on the next ranks"
                    } else {
                        "each block's buddy copies on other hosts than its owner's"
                    }
                ));
            }
        }
        self.slot_blocks = self
            .numbers_of(comm)
            .into_iter()
            .map(|rank| self.blocks_of(rank))
            .collect();
        self.store = Some(store);
        Ok(())
    }

    /// Every survivor has the same checkpoint (the store's agreement is uniform).
    fn commit(&mut self, after: &FailureView) {
        self.committed = Some(self.iteration);
        if self.is_leader(after) {
            let copies = 1 + self.config().buddies.min(after.count(RankState::OK) - 1);
            self.say(format_args!(
                "checkpoint of iteration {} committed: each block on {copies} rank{}",
                self.iteration,
                if copies == 1 { " (no buddy left)" } else { "s" }
            ));
        }
    }

    /// New failures in G: recovery attempts (shrink or respawn, then the store's restore, then
    /// a `validate_global`) until one meets no new failure.
    fn recover(&mut self, mut after: FailureView, mut agreed_at: Instant) -> Result<(), HeatError> {
        loop {
            self.record(&after, agreed_at);
            let attempt = if self.config().respawn {
                self.respawn_round(agreed_at)?
            } else {
                self.shrink_round(&after)?
            };
            match self.settle(attempt)? {
                Some(view) => {
                    after = view;
                    agreed_at = Instant::now();
                }
                None => return Ok(()),
            }
        }
    }

    /// The `validate_global` that ends a recovery attempt: the view if it found new failures
    /// (another attempt follows), `None` when the recovery is done.
    fn settle(&mut self, attempt: Attempt) -> Result<Option<FailureView>, HeatError> {
        let view = self.world.validate_global().map_err(|e| self.runtime(e))?;
        if view.new_failures() {
            return Ok(Some(view));
        }
        if let Err(error) = attempt {
            return Err(HeatError::Inconsistent(format!(
                "rank {}: the restore failed (`{error}`), but validate_global found no new failure",
                self.me
            )));
        }
        self.g = view;
        if let Some(since) = self.recovering_since.take() {
            self.recovered(since);
        }
        Ok(None)
    }

    /// Notes a failure that `validate_global` reported: a new recovery record.
    fn record(&mut self, after: &FailureView, agreed_at: Instant) {
        let new_in_g: Vec<Rank> = after
            .ranks(RankState::NULL | RankState::NEW)
            .map(|info| info.rank)
            .collect();
        if self.is_leader(after) {
            self.say(format_args!(
                "iteration {}: validate_global: ranks {new_in_g:?} are NULL|NEW in G ({} failed in all, {} OK)",
                self.iteration,
                after.num_failed(),
                after.count(RankState::OK)
            ));
        }
        let kill_to_agreement = {
            let kills = self.shared.kill_times.lock().expect("kill log");
            kills
                .iter()
                .filter(|(rank, _)| new_in_g.contains(rank))
                .map(|(_, at)| *at)
                .min()
                .map(|at| agreed_at.saturating_duration_since(at))
        };
        self.recoveries.push(RecoveryRecord {
            number: self.recoveries.len() as u32 + 1,
            at_iteration: self.iteration,
            new_in_g,
            failed_in_all: after.num_failed(),
            moves: Vec::new(),
            rolled_back_to: self.committed.unwrap_or(0),
            during_recovery: self.recovering_since.is_some(),
            kill_to_agreement,
            agreement_to_recovered: None,
            respawned: None,
        });
        self.recovering_since = Some(agreed_at);
    }

    /// A run-through recovery attempt: before any checkpoint, the dead ranks' blocks to the
    /// next OK ranks and every block back to the initial field; after, the store's restore
    /// over the shrunk world.
    fn shrink_round(&mut self, after: &FailureView) -> Result<Attempt, HeatError> {
        if self.committed.is_none() {
            // A store made in a checkpoint pass that did not commit holds nothing.
            self.store = None;
            let size = self.world.size();
            let mut owners = self.owners.clone();
            for owner in &mut owners {
                if after.is_failed(*owner) {
                    *owner = (1..size)
                        .map(|step| (*owner + step) % size)
                        .find(|&r| !after.is_failed(r))
                        .expect("this rank is alive");
                }
            }
            self.regenerate(owners);
            return Ok(Ok(()));
        }
        let shrunk = self.world.shrink().map_err(|e| self.runtime(e))?;
        self.kill_in_recovery();
        let restored = self.store.as_mut().expect("committed").recover(&shrunk);
        let numbers = self.numbers_of(&shrunk);
        self.restored(numbers, restored)
    }

    /// Everyone's blocks back to the initial field, with these owners.
    fn regenerate(&mut self, owners: Vec<Rank>) {
        self.note_moves(&owners);
        self.owners = owners;
        let decomposition = self.shared.decomposition;
        self.blocks = self
            .blocks_of(self.me)
            .into_iter()
            .map(|block| (block, decomposition.initial_block(block)))
            .collect();
        self.roll_back(0);
    }

    /// What the store's restore gave this rank, over a communicator whose ranks have these
    /// `numbers` in `world` (the shrunk world, or the respawn's communicator): its blocks,
    /// everyone's owners, the iteration.
    fn restored(
        &mut self,
        numbers: Vec<Rank>,
        restored: Result<Slots, StoreError>,
    ) -> Result<Attempt, HeatError> {
        let slots = match restored {
            Ok(slots) => slots,
            Err(StoreError::Lost { slots }) => return Err(self.unrecoverable(&slots)),
            Err(StoreError::Usage(reason)) => {
                return Err(HeatError::Inconsistent(format!(
                    "rank {}: the store refused the restore: {reason}",
                    self.me
                )))
            }
            Err(error) => return Ok(Err(error)),
        };
        let store = self.store.as_ref().expect("restored");
        let mut owners = self.owners.clone();
        for (slot, &owner) in store.owners().iter().enumerate() {
            for &block in &self.slot_blocks[slot] {
                owners[block] = numbers[owner as usize];
            }
        }
        let decomposition = self.shared.decomposition;
        let mut blocks = BTreeMap::new();
        let mut at = None;
        for (slot, bytes) in &slots {
            let Some((iteration, cells)) =
                decode(bytes, &self.slot_blocks[*slot as usize], decomposition)
            else {
                return Err(HeatError::Inconsistent(format!(
                    "rank {}: slot {slot} came back malformed",
                    self.me
                )));
            };
            at = Some(iteration);
            for (block, cells) in cells {
                blocks.insert(block, decomposition.block_from_cells(block, cells));
            }
        }
        let iteration = at.or(self.committed).unwrap_or(0);
        self.note_moves(&owners);
        self.owners = owners;
        self.blocks = blocks;
        self.committed = Some(iteration);
        self.roll_back(iteration);
        Ok(Ok(()))
    }

    /// Every survivor reports the same lost slot (a new rank whose join found it lost does not
    /// know its holders: it names none).
    fn unrecoverable(&self, slots: &[u32]) -> HeatError {
        let slot = slots.first().copied().unwrap_or(0);
        let block = self
            .slot_blocks
            .get(slot as usize)
            .and_then(|b| b.first().copied())
            .unwrap_or(slot as usize);
        let holders: Vec<Rank> = self
            .store
            .iter()
            .flat_map(|store| store.holders(slot))
            .map(|w| self.numbers.get(&w).copied().unwrap_or(w))
            .collect();
        let checkpoint = self.committed.unwrap_or(0);
        if self.is_leader(&self.g) {
            self.say(format_args!(
                "UNRECOVERABLE: block {block} of checkpoint {checkpoint} had its copies on ranks {holders:?}, all failed"
            ));
        }
        HeatError::Unrecoverable {
            lost: LostBlock { block, holders },
            at_iteration: self.iteration,
            checkpoint,
        }
    }

    /// Records which blocks change owner from `self.owners` to `owners`, in the recovery in
    /// progress, and says so.
    fn note_moves(&mut self, owners: &[Rank]) {
        let moves: Vec<Move> = (0..owners.len())
            .filter(|&b| owners[b] != self.owners[b])
            .map(|block| Move {
                block,
                from: self.owners[block],
                to: owners[block],
            })
            .collect();
        let leader = self.is_leader(&self.g_after_failures()) && !self.config().respawn;
        let Some(record) = self.recoveries.last_mut() else {
            return;
        };
        record.moves = moves;
        let record = record.clone();
        if leader {
            let moves: Vec<String> = record
                .moves
                .iter()
                .map(|m| format!("block {}: rank {} -> {}", m.block, m.from, m.to))
                .collect();
            let checkpoint = self.committed.unwrap_or(0);
            self.say(format_args!(
                "recovery #{}{}: {}; rolling back from iteration {} to {} ({})",
                record.number,
                if record.during_recovery {
                    " (a failure during recovery)"
                } else {
                    ""
                },
                if moves.is_empty() {
                    "no block changed owner".to_string()
                } else {
                    moves.join(", ")
                },
                self.iteration,
                checkpoint,
                if self.committed.is_none() {
                    "the initial field, regenerated"
                } else {
                    "the committed checkpoint"
                }
            ));
        }
    }

    /// The live ranks as this rank knows them now (its communicator's view).
    fn g_after_failures(&self) -> FailureView {
        self.world.global_view().unwrap_or_else(|_| self.g.clone())
    }

    /// The iteration goes back to `to` (but for the planted bug).
    fn roll_back(&mut self, to: u64) {
        if !self.config().planted_skip_rollback {
            self.iteration = to;
        }
    }

    /// The recovery in progress is complete: the blocks restored, redundancy back.
    fn recovered(&mut self, since: Instant) {
        let elapsed = since.elapsed();
        let leader = self.is_leader(&self.g);
        let alive = self.g.count(RankState::OK);
        let Some(record) = self.recoveries.last_mut() else {
            return;
        };
        record.agreement_to_recovered = Some(elapsed);
        if leader {
            let record = record.clone();
            self.say(format_args!(
                "recovery #{} done: back at iteration {} on {alive} ranks; kill -> agreed {}, agreed -> recovered {:.2?}",
                record.number,
                self.iteration,
                record
                    .kill_to_agreement
                    .map_or("(unknown)".to_string(), |d| format!("{d:.2?}")),
                elapsed
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
                if !have[block] && self.owners[block] == rank as Rank {
                    decomposition.paste(block, &chunk[at + 1..end], &mut field);
                    have[block] = true;
                }
                at = end;
            }
        }
        if let Some(block) = have.iter().position(|&h| !h) {
            let owner = self.owners[block];
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

    /// A `KillPoint::Recovery` strikes here, in the restore of the recovery in progress.
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
                let owner = self.owners[neighbor];
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
                let owner = self.owners[neighbor];
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

    fn progress(&self, after: &FailureView) {
        let every = self.config().progress_every;
        if every == 0 || !self.iteration.is_multiple_of(every) || !self.is_leader(after) {
            return;
        }
        let mut load: BTreeMap<Rank, usize> = BTreeMap::new();
        for &owner in &self.owners {
            *load.entry(owner).or_insert(0) += 1;
        }
        self.say(format_args!(
            "iteration {:>5}/{}: {} ranks alive, at most {} block(s) per rank",
            self.iteration,
            self.config().iterations,
            load.len(),
            load.values().max().copied().unwrap_or(0)
        ));
    }
}

/// A slot's bytes: the iteration, then the cells of its blocks, in order.
fn encode(iteration: u64, blocks: &[usize], state: &BTreeMap<usize, Block>) -> Vec<u8> {
    let cells: usize = blocks.iter().map(|b| state[b].cells().len()).sum();
    let mut bytes = Vec::with_capacity(8 + 8 * cells);
    bytes.extend_from_slice(&iteration.to_le_bytes());
    for block in blocks {
        for value in state[block].cells() {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
    }
    bytes
}

/// Blocks and their cells.
type BlockCells = Vec<(usize, Vec<f64>)>;

/// The iteration and the blocks' cells of a slot's bytes ([`encode`]), if they fit.
fn decode(
    bytes: &[u8],
    blocks: &[usize],
    decomposition: &Decomposition,
) -> Option<(u64, BlockCells)> {
    let (iteration, mut rest) = bytes.split_at_checked(8)?;
    let iteration = u64::from_le_bytes(iteration.try_into().ok()?);
    let mut out = Vec::with_capacity(blocks.len());
    for &block in blocks {
        let (cells, tail) = rest.split_at_checked(8 * decomposition.cells_len(block))?;
        let cells = cells
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        out.push((block, cells));
        rest = tail;
    }
    rest.is_empty().then_some((iteration, out))
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The in-process universe: n ranks as threads of this process (semantics §4, the embedded
//! default).

use runthrough_core::WorldRank;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use runthrough_core::fault::{Collective, Fault, FaultPlan, InjectedBy, Trigger};
use runthrough_core::Rank;

use crate::comm::Comm;
use crate::endpoint::Endpoint;
use crate::rank::Killed;
use crate::timeline::{self, Recorder, What};
use crate::transport::{InProcess, Launch, Transport};

/// Starts building an in-process job of `n` ranks (`n >= 1`).
///
/// ```
/// let outcomes = runthrough::local(4).run(|world| {
///     let next = (world.rank() + 1) % world.size();
///     world.send(&[world.rank()], next, 0)?;
///     let mut got = [0u32];
///     world.recv(&mut got, runthrough::Source::Any, 0)?;
///     Ok::<u32, runthrough::Error>(got[0])
/// });
/// for (rank, outcome) in outcomes.into_iter().enumerate() {
///     let from = outcome.returned().unwrap().unwrap();
///     assert_eq!(from, (rank as u32 + 3) % 4);
/// }
/// ```
pub fn local(n: u32) -> LocalUniverse {
    LocalUniverse::new(n)
}

/// An in-process job being set up: its size and its fault plan.
#[derive(Debug)]
pub struct LocalUniverse {
    size: u32,
    transport: Arc<InProcess>,
    endpoints: Vec<Arc<Endpoint>>,
    plan: FaultPlan,
    /// Where [`LocalUniverse::run`] draws the job's timeline.
    timeline: Option<PathBuf>,
}

/// What became of one rank of an in-process job.
#[derive(Debug)]
pub enum RankOutcome<T> {
    /// The rank's function returned this value.
    Returned(T),
    /// The rank was killed by fault injection.
    Killed,
    /// The rank's function panicked (the rank counted as failed for its peers).
    Panicked(String),
}

impl<T> RankOutcome<T> {
    /// The returned value, if the rank returned.
    pub fn returned(self) -> Option<T> {
        match self {
            RankOutcome::Returned(value) => Some(value),
            _ => None,
        }
    }

    /// Whether the rank was killed.
    pub fn is_killed(&self) -> bool {
        matches!(self, RankOutcome::Killed)
    }
}

/// Kills ranks of a running in-process job on demand (from any thread, a rank's included).
#[derive(Debug, Clone)]
pub struct FaultHandle {
    transport: Arc<InProcess>,
}

impl FaultHandle {
    /// Kills `rank` now: it sends nothing more, its peers' detectors learn of it at once, and its
    /// thread unwinds at its next call into runthrough (or at once if it is waiting in one).
    pub fn kill(&self, rank: Rank) {
        self.transport.kill(WorldRank(rank));
    }
}

impl LocalUniverse {
    fn new(size: u32) -> Self {
        assert!(size >= 1, "a job has at least one rank");
        let endpoints: Vec<Arc<Endpoint>> = (0..size)
            .map(|r| Arc::new(Endpoint::new(WorldRank(r), size)))
            .collect();
        let transport = Arc::new(InProcess::new(endpoints.clone(), size.saturating_mul(2)));
        LocalUniverse {
            size,
            transport,
            endpoints,
            plan: FaultPlan::new(),
            timeline: None,
        }
    }

    /// Draws the job's timeline in the SVG file `path` when [`LocalUniverse::run`] ends, as
    /// `rtrun --timeline` does for processes ([`crate::timeline`]): one lane per rank with its
    /// start, the faults that fired, its death or its end, each failure its detector learned
    /// of, what each `validate_global`, `agree` and `shrink` returned. Times are from the start
    /// of `run`. A rank's death is drawn when its thread ends: at the fault for one at a point
    /// of its calls, at its next call for a timed or on-demand kill (its peers may learn of it
    /// earlier). A file that cannot be written is reported on standard error.
    ///
    /// ```no_run
    /// let outcomes = runthrough::local(4)
    ///     .kill_at_operation(2, 1)
    ///     .timeline("job.svg")
    ///     .run(|world| world.validate_global().map(|g| g.num_failed()));
    /// assert!(outcomes[2].is_killed());
    /// ```
    pub fn timeline(mut self, path: impl Into<PathBuf>) -> Self {
        self.timeline = Some(path.into());
        self
    }

    /// Plans the faults of `plan` ([`crate::fault`] has the grammar): timed ones as
    /// [`LocalUniverse::kill_after`], the others at the points of the rank's calls they name.
    /// Faults add up: a rank dies at the first of its faults that fires.
    ///
    /// ```
    /// // Rank 2 dies as it starts its first call, rank 1 as it enters its first barrier.
    /// let plan = "2@call:1, 1@barrier:1".parse().unwrap();
    /// let outcomes = runthrough::local(4).faults(&plan).run(|world| {
    ///     world.barrier()?;
    ///     let mut sum = [0u32];
    ///     world.all_reduce(&[1u32], &mut sum, runthrough::Op::Sum)
    /// });
    /// assert!(outcomes[2].is_killed() && outcomes[1].is_killed());
    /// ```
    ///
    /// # Panics
    /// On a fault of a rank outside the job, or at an application's step (`iteration:K`,
    /// `recovery:N`, which only the program can inject): a test that names a fault that cannot
    /// happen should not pass quietly.
    pub fn faults(mut self, plan: &FaultPlan) -> Self {
        check_plan(plan, self.size);
        for fault in plan.faults() {
            self.plan.push(*fault);
        }
        self
    }

    fn fault(self, rank: Rank, trigger: Trigger) -> Self {
        self.faults(&FaultPlan::from_iter([Fault { rank, trigger }]))
    }

    /// Kills `rank` when it starts its `k`-th communication call (1 = the first); that call never
    /// happens (`RANK@call:K`).
    pub fn kill_at_operation(self, rank: Rank, k: u64) -> Self {
        self.fault(rank, Trigger::Call(k))
    }

    /// Kills `rank` inside its `call`-th agreement on the world communicator (1 = the first;
    /// `validate_global`, `agree` and `shrink` are counted together, communicator creations
    /// have a series of their own and are not counted), just before it sends its `message`-th
    /// protocol message of that call (1 = the first): a chosen point of the protocol
    /// (`RANK@validate_global:CALL:MESSAGE`). Failure-free, a leaf's first message is its
    /// contribution and its second its acknowledgement of the proposal; the root's first
    /// messages are the proposal to each child, then the commit to each child.
    pub fn kill_in_agreement(self, rank: Rank, call: u64, message: u64) -> Self {
        self.fault(rank, Trigger::Agreement { call, message })
    }

    /// Kills `rank` just before it sends its `message`-th revocation packet (1 = the first),
    /// whether it revoked a communicator itself or forwards another rank's revocation: a death
    /// in the middle of a revocation's propagation (semantics §3.5; `RANK@revoke:MESSAGE`).
    pub fn kill_in_revoke(self, rank: Rank, message: u64) -> Self {
        self.fault(
            rank,
            Trigger::Revoke {
                message: message.max(1),
            },
        )
    }

    /// Kills `rank` inside its `call`-th call (1 = the first, counted over every communicator)
    /// of the collective `operation` (`barrier`, `broadcast`/`bcast`, `reduce`,
    /// `all_reduce`/`allreduce`, `gather`, `all_gather`, `scatter`, `all_to_all`, `scan`,
    /// `exscan`), just before it sends that call's `message`-th message (1 = the first), or as
    /// soon as it enters the call with `message` 0 (`RANK@OPERATION:CALL:MESSAGE`). A call
    /// that sends fewer messages is survived.
    ///
    /// # Panics
    /// On an operation name not in the list: a test that names a fault that cannot happen
    /// should not pass quietly.
    pub fn kill_in_collective(self, rank: Rank, operation: &str, call: u64, message: u64) -> Self {
        let Some(operation) = Collective::from_name(operation) else {
            panic!("kill_in_collective: {operation:?} is not a collective operation");
        };
        self.fault(
            rank,
            Trigger::Collective {
                operation,
                call: call.max(1),
                message,
            },
        )
    }

    /// Caps the bytes of unexpected messages (arrived before a receive wanted them) that each
    /// rank buffers, all senders together (default [`crate::DEFAULT_UNEXPECTED_CAP`], 64 MiB).
    /// Each sender's share at a receiver is `cap / n`; a sender that has that much unreceived
    /// at a receiver waits (a blocking send) or leaves its request pending (`isend`) until the
    /// receiver takes some (flow control, semantics §6). A message larger than the share travels
    /// alone. At least one byte.
    ///
    /// ```
    /// // A window of 4 KiB per sender: 1,000 messages of 100 bytes cannot all be buffered.
    /// let outcomes = runthrough::local(2).unexpected_cap(8 << 10).run(|world| {
    ///     if world.rank() == 0 {
    ///         for i in 0..1000u32 {
    ///             world.send(&[i; 25], 1, 0)?; // waits while rank 1 holds 4 KiB of them
    ///         }
    ///     } else {
    ///         for i in 0..1000u32 {
    ///             let mut got = [0u32; 25];
    ///             world.recv(&mut got, 0u32, 0)?;
    ///             assert_eq!(got, [i; 25]);
    ///         }
    ///         assert!(world.flow_stats().peak_unexpected_bytes <= 4 << 10);
    ///     }
    ///     Ok::<_, runthrough::Error>(())
    /// });
    /// assert!(outcomes.into_iter().all(|o| o.returned().unwrap().is_ok()));
    /// ```
    pub fn unexpected_cap(self, cap: usize) -> Self {
        for endpoint in &self.endpoints {
            endpoint.set_unexpected_cap(cap, self.size);
        }
        self.transport.set_spawn_cap(cap);
        self
    }

    /// How many ranks the job may hold in all, its first ranks and those that spawns add
    /// (`MPI_UNIVERSE_SIZE`; [`Comm::spawn`]): twice the job's size unless set. A spawn past
    /// it fails with `Error::Spawn`. World ranks are never reused: each spawned rank takes the
    /// next one. Call it before [`LocalUniverse::fault_handle`] and
    /// [`LocalUniverse::unexpected_cap`].
    ///
    /// # Panics
    /// When called after [`LocalUniverse::fault_handle`] (the handle would hold the old
    /// transport) or with a size below the job's.
    pub fn universe_size(mut self, size: u32) -> Self {
        assert!(
            size >= self.size,
            "universe_size: {size} is smaller than the job ({} ranks)",
            self.size
        );
        assert!(
            Arc::strong_count(&self.transport) == 1,
            "universe_size: call it before fault_handle"
        );
        self.transport = Arc::new(InProcess::new(self.endpoints.clone(), size));
        self
    }

    /// Kills `rank` `delay` after the job starts (`RANK@SECONDS`).
    pub fn kill_after(self, rank: Rank, delay: Duration) -> Self {
        self.fault(rank, Trigger::After(delay))
    }

    /// A handle that kills ranks on demand while the job runs.
    pub fn fault_handle(&self) -> FaultHandle {
        FaultHandle {
            transport: Arc::clone(&self.transport),
        }
    }

    /// Runs `f` on every rank, each on its own thread with its world communicator, and returns
    /// what became of each rank, in rank order. Returns when every rank's function has ended.
    pub fn run<T, F>(self, f: F) -> Vec<RankOutcome<T>>
    where
        T: Send,
        F: Fn(&Comm) -> T + Sync,
    {
        let transport: Arc<dyn Transport> = self.transport.clone();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let mut timed: Vec<(Duration, Rank)> = self
            .plan
            .faults()
            .iter()
            .filter_map(|f| match f.trigger {
                Trigger::After(delay) => Some((delay, f.rank)),
                _ => None,
            })
            .collect();
        timed.sort();
        for endpoint in &self.endpoints {
            endpoint.plan_faults(self.plan.triggers_of(endpoint.world_rank.0));
        }
        let recorder = self.timeline.as_ref().map(|_| Arc::new(Recorder::new()));
        let (launch_tx, launch_rx) = mpsc::channel::<Launch>();
        self.transport.set_launcher(Some(launch_tx.clone()));
        if let Some(recorder) = &recorder {
            for endpoint in &self.endpoints {
                timeline::record(endpoint, recorder);
            }
        }
        let outcomes = std::thread::scope(|scope| {
            let killer = self.transport.clone();
            let timer_recorder = recorder.clone();
            let timer = (!timed.is_empty()).then(|| {
                scope.spawn(move || {
                    let start = Instant::now();
                    for (delay, rank) in timed {
                        let remaining = delay.saturating_sub(start.elapsed());
                        match done_rx.recv_timeout(remaining) {
                            Err(mpsc::RecvTimeoutError::Timeout) => {
                                if let Some(recorder) = &timer_recorder {
                                    let fault = Fault {
                                        rank,
                                        trigger: Trigger::After(delay),
                                    };
                                    recorder.note(
                                        rank,
                                        What::Fired {
                                            fault: fault.to_string(),
                                            call: None,
                                        },
                                    );
                                }
                                killer.kill(WorldRank(rank));
                            }
                            _ => return,
                        }
                    }
                })
            });
            let mut handles = Vec::with_capacity(self.endpoints.len());
            for endpoint in &self.endpoints {
                let world = Comm::world(Arc::clone(endpoint), Arc::clone(&transport), self.size);
                let f = &f;
                let recorder = recorder.clone();
                let ended = Ended(launch_tx.clone());
                let spawned = if spawn_refused(endpoint.world_rank) {
                    Err(std::io::Error::other("refused by the test"))
                } else {
                    std::thread::Builder::new()
                        .name(format!("rank-{}", endpoint.world_rank))
                        .spawn_scoped(scope, move || {
                            let _ended = ended;
                            let rank = world.rank;
                            if let Some(recorder) = &recorder {
                                recorder.note(rank, What::Started);
                            }
                            let outcome = run_rank(&world, f);
                            if let Some(recorder) = &recorder {
                                note_end(recorder, &world, &outcome);
                            }
                            outcome
                        })
                };
                match spawned {
                    Ok(handle) => handles.push((endpoint.world_rank, handle)),
                    Err(error) => {
                        // The ranks already running would wait for ever for the ones that never
                        // started: kill every rank (each unwinds at its next library call), then
                        // say why.
                        for rank in 0..self.size {
                            self.transport.kill(WorldRank(rank));
                        }
                        self.transport.set_launcher(None);
                        for (_, handle) in handles {
                            let _ = handle.join();
                        }
                        drop(done_tx);
                        if let Some(timer) = timer {
                            let _ = timer.join();
                        }
                        panic!(
                            "runthrough::local: could not start the thread of rank {} of {}: \
                             {error}",
                            endpoint.world_rank, self.size
                        );
                    }
                }
            }
            // This thread starts the threads of spawned ranks until every rank has ended.
            let mut running = handles.len();
            while running > 0 {
                match launch_rx.recv() {
                    Ok(Launch::Ended) | Err(_) => running -= 1,
                    Ok(Launch::Start { ranks, gate, reply }) => {
                        let mut started = Ok(());
                        for (endpoint, link) in ranks {
                            let me = endpoint.world_rank;
                            let world = Comm::spawned_world(endpoint, Arc::clone(&transport), link);
                            let (f, gate) = (&f, Arc::clone(&gate));
                            let ended = Ended(launch_tx.clone());
                            let thread = if spawn_refused(me) {
                                Err(std::io::Error::other("refused by the test"))
                            } else {
                                std::thread::Builder::new()
                                    .name(format!("rank-{me}"))
                                    .spawn_scoped(scope, move || {
                                        let _ended = ended;
                                        if gate.wait() {
                                            run_rank(&world, f)
                                        } else {
                                            RankOutcome::Killed // its spawn failed: never ran
                                        }
                                    })
                            };
                            match thread {
                                Ok(handle) => {
                                    handles.push((me, handle));
                                    running += 1;
                                }
                                Err(error) => {
                                    started = Err(format!(
                                        "could not start the thread of spawned rank {me}: {error}"
                                    ));
                                }
                            }
                        }
                        let _ = reply.send(started);
                    }
                }
            }
            self.transport.set_launcher(None);
            let mut outcomes: Vec<RankOutcome<T>> = Vec::with_capacity(handles.len());
            handles.sort_by_key(|(rank, _)| *rank);
            for (rank, handle) in handles {
                // A spawned rank whose thread never started has no handle: killed.
                while outcomes.len() < rank.index() {
                    outcomes.push(RankOutcome::Killed);
                }
                outcomes.push(handle.join().unwrap_or(RankOutcome::Killed));
            }
            drop(done_tx);
            if let Some(timer) = timer {
                let _ = timer.join();
            }
            outcomes
        });
        if let (Some(path), Some(recorder)) = (&self.timeline, &recorder) {
            for endpoint in &self.endpoints {
                timeline::uninstall(endpoint);
            }
            if let Err(e) = recorder.timeline(self.size).write_svg(path) {
                eprintln!("runthrough: timeline {}: {e}", path.display());
            }
        }
        outcomes
    }
}

/// Tells the thread that runs the job that a rank's thread ended, however it ends.
struct Ended(mpsc::Sender<Launch>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(Launch::Ended);
    }
}

/// Whether the spawn of world rank `rank`'s thread is to fail: how a test reaches that failure
/// path of [`LocalUniverse::run`] and the simulation's run (`tests::FAIL_SPAWN_OF`); never
/// outside the crate's own tests.
#[inline]
pub(crate) fn spawn_refused(rank: WorldRank) -> bool {
    #[cfg(test)]
    {
        tests::FAIL_SPAWN_OF.with(|r| r.get()) == Some(rank)
    }
    #[cfg(not(test))]
    {
        let _ = rank;
        false
    }
}

/// Records how `world`'s rank ended: a planned fault that fired, and its death or its return.
fn note_end<T>(recorder: &Recorder, world: &Comm, outcome: &RankOutcome<T>) {
    let rank = world.rank;
    let what = match outcome {
        RankOutcome::Returned(_) => What::Ended {
            description: "returned".into(),
        },
        RankOutcome::Killed => {
            if let Some((trigger, call)) = world.process.endpoint.fired_fault() {
                let fault = Fault { rank, trigger };
                recorder.note(
                    rank,
                    What::Fired {
                        fault: fault.to_string(),
                        call: Some(call),
                    },
                );
            }
            What::Died {
                how: "injected".into(),
                description: "killed by fault injection".into(),
            }
        }
        RankOutcome::Panicked(message) => What::Died {
            how: "panic".into(),
            description: format!("panicked: {message}"),
        },
    };
    recorder.note(rank, what);
}

pub(crate) fn run_rank<T>(world: &Comm, f: &(impl Fn(&Comm) -> T + Sync)) -> RankOutcome<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| f(world))) {
        Ok(value) => RankOutcome::Returned(value),
        Err(payload) if payload.is::<Killed>() => RankOutcome::Killed,
        // Killed while another of its threads was in a call: that thread unwound with `Killed`
        // and `std::thread::scope` re-raised it as its own panic.
        Err(_) if world.process.endpoint.is_killed() => RankOutcome::Killed,
        Err(payload) => {
            // A panicking rank is a crashed process: its peers must learn of it.
            world.process.transport.kill(world.process.world_rank());
            let message = panic_message(payload.as_ref());
            RankOutcome::Panicked(message)
        }
    }
}

/// The message a panic carried (`"panic"` when it carried none).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// Checks a plan given to a job builder (`local(n).faults`, `simulate(n).faults`).
///
/// # Panics
/// On a fault of a rank outside a job of `size` ranks, or at an application's step
/// (`iteration:K`, `recovery:N`), which only the program can inject: a test that names a fault
/// that cannot happen should not pass quietly.
pub(crate) fn check_plan(plan: &FaultPlan, size: u32) {
    if let Err(error) = plan.check_ranks(size) {
        panic!("faults: {error}");
    }
    if let Some(fault) = plan
        .faults()
        .iter()
        .find(|f| f.trigger.injected_by() == InjectedBy::Application)
    {
        panic!("faults: `{fault}` is a point of the application's, for the program to inject");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU32, Ordering};

    use runthrough_core::WorldRank;

    thread_local! {
        /// The rank whose thread the next run started on this thread fails to spawn
        /// ([`super::spawn_refused`]).
        pub(crate) static FAIL_SPAWN_OF: Cell<Option<WorldRank>> = const { Cell::new(None) };
    }

    /// Runs `run` with the spawn of `rank`'s thread refused and returns the message of the
    /// panic it must end with (the refusal is lifted whatever happens).
    pub(crate) fn panic_of_refused_spawn(rank: u32, run: impl FnOnce()) -> String {
        FAIL_SPAWN_OF.with(|r| r.set(Some(WorldRank(rank))));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
        FAIL_SPAWN_OF.with(|r| r.set(None));
        let payload = outcome.expect_err("the run cannot start");
        super::panic_message(payload.as_ref())
    }

    /// A rank thread that cannot be spawned ends the run with a panic that names it, after the
    /// ranks already running are killed (they waited for ever for the rank that never started:
    /// the panic used to wait for them).
    #[test]
    fn a_rank_thread_that_cannot_start_ends_the_run_with_a_clear_panic() {
        let finished = AtomicU32::new(0);
        let message = panic_of_refused_spawn(2, || {
            super::local(4).run(|world| {
                let result = world.barrier();
                // A barrier may return `ProcFailed` (a rank killed before this one learned of
                // it) before this rank's own kill stops it; none may succeed without rank 2.
                if result.is_ok() {
                    finished.fetch_add(1, Ordering::SeqCst);
                }
                result
            });
        });
        assert!(
            message.contains("could not start the thread of rank 2 of 4"),
            "{message}"
        );
        assert_eq!(finished.load(Ordering::SeqCst), 0, "no barrier succeeded");
        let outcomes = super::local(4).run(|world| world.barrier());
        assert!(outcomes
            .iter()
            .all(|o| matches!(o, crate::RankOutcome::Returned(Ok(())))));
    }

    /// A spawned rank whose thread cannot be started fails the spawn at every parent with
    /// `Error::Spawn` naming it; the spawn's other ranks are killed before they run, and the
    /// job goes on.
    #[test]
    fn a_spawned_rank_whose_thread_cannot_start_fails_the_spawn_everywhere() {
        let children_ran = AtomicU32::new(0);
        FAIL_SPAWN_OF.with(|r| r.set(Some(WorldRank(3))));
        let outcomes = super::local(3).universe_size(5).run(|world| {
            if world.parent().is_some() {
                children_ran.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            let refused = world.spawn(2, &[]).map(|_| ());
            world.barrier()?;
            refused
        });
        FAIL_SPAWN_OF.with(|r| r.set(None));
        assert_eq!(children_ran.load(Ordering::SeqCst), 0);
        assert_eq!(outcomes.len(), 5);
        for (rank, outcome) in outcomes.into_iter().enumerate() {
            if rank < 3 {
                match outcome.returned() {
                    Some(Err(crate::Error::Spawn { reason })) => assert!(
                        reason.contains("could not start the thread of spawned rank 3"),
                        "{reason}"
                    ),
                    other => panic!("rank {rank}: {other:?}"),
                }
            } else {
                assert!(outcome.is_killed(), "spawned rank {rank}");
            }
        }
    }
}

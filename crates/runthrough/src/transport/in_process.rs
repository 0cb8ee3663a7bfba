// SPDX-License-Identifier: MIT OR Apache-2.0
//! The in-process transport: every rank is a thread of this process, and the world can grow
//! (`Comm::spawn`) up to the job's universe size.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock, RwLock};

use runthrough_core::packet::{Outgoing, Packet};
use runthrough_core::{Error, Rank, Result, WorldRank};

use super::{SpawnKey, SpawnRequest, Transport};
use crate::endpoint::Endpoint;
use crate::signal::Signal;
use crate::spawn::ParentLink;

/// The in-process transport: every rank is a thread of this process.
///
/// A send locks the destination's engine on the sending thread and delivers there, so a message
/// costs one copy into a buffer and one lock. A rank's liveness is a read-write lock held for
/// reading across each of its sends: [`Transport::kill`] takes it for writing, so a kill happens
/// between two sends, never during one, and every peer's detector learns of the death after the
/// last message the rank sent (semantics §1: complete messages sent before a failure stay
/// receivable).
///
/// It also counts the ranks still running (neither killed nor ended), for the wait policy's
/// oversubscription rule: more running ranks than cores, and waiters yield instead of spinning.
///
/// Its tables have a slot per world rank of the job's *universe* (the job's ranks and those
/// that spawns may add, `LocalUniverse::universe_size`): a spawned rank's endpoint fills its
/// slot once, so a send reads its peer's endpoint with one load and no lock.
#[derive(Debug)]
pub(crate) struct InProcess {
    endpoints: Vec<OnceLock<Arc<Endpoint>>>,
    alive: Vec<RwLock<bool>>,
    /// Per rank: killed or its thread ended (counted out of `running` once).
    stopped: Vec<AtomicBool>,
    /// Ranks not yet stopped.
    running: AtomicUsize,
    /// `running` outnumbers the cores (kept up to date by `stop`, read by every wait).
    oversubscribed: AtomicBool,
    /// World ranks below this one have an endpoint (the job's first ranks and spawned ones).
    registered: AtomicU32,
    /// How many ranks the job started with (their flow-control share is every rank's).
    job_size: u32,
    /// Whether agreements begin with their coordinator-free first round, at every rank of the
    /// job and at the ranks it spawns (off when the job's threads outnumber the cores).
    first_round: bool,
    spawns: Mutex<Spawns>,
}

/// The spawns of a job: who started what, and the thread that starts ranks.
#[derive(Debug, Default)]
struct Spawns {
    /// Every spawn asked for, by key, with its outcome (the same for every parent).
    records: BTreeMap<SpawnKey, Record>,
    /// The unexpected-message cap the job's ranks use, if not the default.
    cap: Option<usize>,
    /// Where to ask for the threads of new ranks (the thread running `LocalUniverse::run`),
    /// while a run is in progress.
    launcher: Option<mpsc::Sender<Launch>>,
}

#[derive(Debug)]
struct Record {
    outcome: Result<(WorldRank, u32)>,
    /// The world ranks given to the spawn (also when its start failed: they are never reused).
    children: Vec<WorldRank>,
    parents: Vec<WorldRank>,
    gate: Arc<SpawnGate>,
}

/// Where a spawned rank's thread waits until its parents decided whether it runs.
#[derive(Debug, Default)]
pub(crate) struct SpawnGate {
    decided: Mutex<Option<bool>>,
    changed: Condvar,
}

impl SpawnGate {
    /// Decides (once; later calls change nothing).
    fn decide(&self, run: bool) {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        if decided.is_none() {
            *decided = Some(run);
            self.changed.notify_all();
        }
    }

    /// Waits for the decision: whether the rank runs. A start-up gate, passed once per spawned
    /// rank, not a message wait.
    pub(crate) fn wait(&self) -> bool {
        let mut decided = self.decided.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(run) = *decided {
                return run;
            }
            decided = self
                .changed
                .wait(decided)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// What the transport asks of the thread that runs the job (`LocalUniverse::run`).
#[derive(Debug)]
pub(crate) enum Launch {
    /// Start a thread for each of `ranks`; each waits at `gate`, then runs the job's function
    /// on its world communicator. The reply says whether every thread started.
    Start {
        ranks: Vec<(Arc<Endpoint>, ParentLink)>,
        gate: Arc<SpawnGate>,
        reply: mpsc::Sender<std::result::Result<(), String>>,
    },
    /// A rank's thread has ended.
    Ended,
}

impl InProcess {
    /// The transport of `endpoints` (world ranks 0..n, in order), with room for `universe`
    /// ranks in all (at least n).
    pub(crate) fn new(endpoints: Vec<Arc<Endpoint>>, universe: u32) -> Self {
        let n = endpoints.len();
        let universe = (universe as usize).max(n);
        let slots = (0..universe)
            .map(|r| match endpoints.get(r) {
                Some(endpoint) => OnceLock::from(Arc::clone(endpoint)),
                None => OnceLock::new(),
            })
            .collect();
        // Rank threads that outnumber the cores wait in turn for every message: the agreement's
        // first round (2 ceil(log2 n) messages per rank, each waited for) costs more there than
        // the fewer messages of the coordinated ballots (measured 1.3-1.5x at 8 to 32 ranks on
        // two cores). One choice for every rank, made here before any runs.
        let first_round = !crate::wait::oversubscribed(n);
        if !first_round {
            for endpoint in &endpoints {
                endpoint.lock().set_agreement_first_round(false);
            }
        }
        InProcess {
            endpoints: slots,
            alive: (0..universe).map(|r| RwLock::new(r < n)).collect(),
            stopped: (0..universe).map(|r| AtomicBool::new(r >= n)).collect(),
            running: AtomicUsize::new(n),
            oversubscribed: AtomicBool::new(crate::wait::oversubscribed(n)),
            registered: AtomicU32::new(n as u32),
            job_size: n as u32,
            first_round,
            spawns: Mutex::default(),
        }
    }

    /// The endpoint of world rank `rank`, if it has one.
    #[inline]
    fn endpoint(&self, rank: WorldRank) -> Option<&Arc<Endpoint>> {
        self.endpoints.get(rank.index()).and_then(OnceLock::get)
    }

    /// Sets the unexpected-message cap that spawned ranks use (the job's ranks' own).
    pub(crate) fn set_spawn_cap(&self, cap: usize) {
        self.spawns().cap = Some(cap);
    }

    /// Where spawns ask for threads while a run is in progress (`None` after it).
    pub(crate) fn set_launcher(&self, launcher: Option<mpsc::Sender<Launch>>) {
        self.spawns().launcher = launcher;
    }

    fn spawns(&self) -> std::sync::MutexGuard<'_, Spawns> {
        self.spawns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `rank` out of the running ranks (once, whether killed or ended).
    fn stop(&self, rank: WorldRank) {
        let Some(stopped) = self.stopped.get(rank.index()) else {
            return;
        };
        if !stopped.swap(true, Ordering::Relaxed) {
            let running = self.running.fetch_sub(1, Ordering::Relaxed) - 1;
            self.oversubscribed
                .store(crate::wait::oversubscribed(running), Ordering::Relaxed);
        }
    }

    /// Delivers one packet if both ends are alive; returns what it caused.
    fn deliver_one(&self, from: WorldRank, to: WorldRank, packet: Packet) -> Outgoing {
        let (Some(sender), Some(sending)) = (self.alive.get(from.index()), self.endpoint(from))
        else {
            return Outgoing::new();
        };
        if sending.dies_before_sending(&packet) {
            self.kill(from);
            return Outgoing::new();
        }
        let Some(receiver) = self.endpoint(to) else {
            return Outgoing::new();
        };
        let sender_alive = sender.read().unwrap_or_else(|e| e.into_inner());
        // The receiver's liveness is read without its lock: holding two liveness locks at once
        // deadlocks against kills (a waiting writer blocks new readers), e.g. a self-send while
        // the rank is killed from another thread. A packet that reaches a rank in the middle of
        // being killed is harmless: nothing reads it, and what it makes the dead rank send is
        // dropped by the sender check above.
        if !*sender_alive || receiver.is_killed() {
            return Outgoing::new();
        }
        receiver.deliver(from, packet)
    }

    fn route(&self, mut queue: VecDeque<(WorldRank, WorldRank, Packet)>) {
        while let Some((from, to, packet)) = queue.pop_front() {
            let caused = self.deliver_one(from, to, packet);
            queue.extend(caused.into_iter().map(|(next, p)| (to, next, p)));
        }
    }

    /// Makes the endpoints of a spawn's ranks and fills their slots. Called with the spawns'
    /// lock held; [`InProcess::learn_dead`] follows once it is released.
    fn make_ranks(
        &self,
        request: &SpawnRequest,
        children: &[WorldRank],
        cap: Option<usize>,
    ) -> Vec<Arc<Endpoint>> {
        let mut made = Vec::with_capacity(children.len());
        for &me in children {
            let engine = crate::spawn::spawned_engine(
                me,
                &request.parents,
                children,
                request.key.0,
                self.job_size,
                cap,
                self.first_round,
            );
            let endpoint = Arc::new(Endpoint::with_engine(me, engine, Signal::default()));
            *self.alive[me.index()]
                .write()
                .unwrap_or_else(|e| e.into_inner()) = true;
            self.stopped[me.index()].store(false, Ordering::Relaxed);
            let _ = self.endpoints[me.index()].set(Arc::clone(&endpoint));
            made.push(endpoint);
        }
        let running = self.running.fetch_add(children.len(), Ordering::Relaxed) + children.len();
        self.oversubscribed
            .store(crate::wait::oversubscribed(running), Ordering::Relaxed);
        let end = children.last().map_or(0, |w| w.0 + 1);
        self.registered.fetch_max(end, Ordering::SeqCst);
        made
    }

    /// The detectors of new ranks `children` learn of every rank already dead: a kill that did
    /// not see their slots happened before their liveness reads here (twice is harmless).
    /// Called without the spawns' lock (what it sends may kill a rank with a planned fault).
    fn learn_dead(&self, children: &[WorldRank]) {
        let end = self.registered.load(Ordering::SeqCst);
        let mut queue = VecDeque::new();
        for dead in (0..end).map(WorldRank).filter(|&w| !self.is_alive(w)) {
            for &child in children {
                if let Some(endpoint) = self.endpoint(child) {
                    queue.extend(
                        endpoint
                            .peer_failed(dead)
                            .into_iter()
                            .map(|(to, p)| (child, to, p)),
                    );
                }
            }
        }
        self.route(queue);
    }

    /// The first parent to ask starts a spawn: world ranks, endpoints, threads (which wait at
    /// the spawn's gate). Called with the spawns' lock held.
    fn start(&self, spawns: &mut Spawns, request: &SpawnRequest, gate: &Arc<SpawnGate>) -> Record {
        let base = self.registered.load(Ordering::SeqCst);
        let fail = |reason: String, children: Vec<WorldRank>| Record {
            outcome: Err(Error::Spawn { reason }),
            children,
            parents: request.parents.clone(),
            gate: Arc::clone(gate),
        };
        let Some(launcher) = spawns.launcher.clone() else {
            return fail("the job is not running".into(), Vec::new());
        };
        if request.programs != super::Programs::Job {
            return fail(
                "in-process ranks run the job's function: a spawn cannot start a program here                  (under rtrun it can)"
                    .into(),
                Vec::new(),
            );
        }
        let end = u64::from(base) + u64::from(request.count);
        if end > self.endpoints.len() as u64 {
            return fail(
                format!(
                    "the job's universe holds {} ranks and {base} are taken, {} more asked for \
                     (LocalUniverse::universe_size sets it)",
                    self.endpoints.len(),
                    request.count
                ),
                Vec::new(),
            );
        }
        let children: Vec<WorldRank> = (base..end as u32).map(WorldRank).collect();
        let made = self.make_ranks(request, &children, spawns.cap);
        let args: Arc<[String]> = Arc::from(request.args.clone());
        let parents = request.parents.len() as u32;
        let ranks = made
            .into_iter()
            .enumerate()
            .map(|(i, endpoint)| {
                let link = ParentLink {
                    context: request.key.0,
                    parents,
                    rank: i as Rank,
                    count: request.count,
                    args: Arc::clone(&args),
                    disconnected: Arc::default(),
                };
                (endpoint, link)
            })
            .collect();
        let (reply, answer) = mpsc::channel();
        let asked = launcher.send(Launch::Start {
            ranks,
            gate: Arc::clone(gate),
            reply,
        });
        let started = match asked {
            Ok(()) => answer
                .recv()
                .unwrap_or_else(|_| Err("the job ended".into())),
            Err(_) => Err("the job ended".into()),
        };
        match started {
            Ok(()) => Record {
                outcome: Ok((WorldRank(base), request.count)),
                children,
                parents: request.parents.clone(),
                gate: Arc::clone(gate),
            },
            Err(reason) => fail(reason, children),
        }
    }

    /// Spawns whose parents all died before deciding: their ranks are killed (nobody is left
    /// to decide), and the ranks to kill are returned.
    fn orphaned(&self) -> Vec<WorldRank> {
        let spawns = self.spawns();
        let mut orphans = Vec::new();
        for record in spawns.records.values() {
            let undecided = record
                .gate
                .decided
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_none();
            if undecided && record.parents.iter().all(|&p| !self.is_alive(p)) {
                record.gate.decide(false);
                orphans.extend(record.children.iter().copied());
            }
        }
        orphans
    }
}

impl Transport for InProcess {
    fn send(&self, from: WorldRank, to: WorldRank, packet: Packet) {
        let caused = self.deliver_one(from, to, packet);
        if !caused.is_empty() {
            self.route(caused.into_iter().map(|(next, p)| (to, next, p)).collect());
        }
    }

    fn kill(&self, rank: WorldRank) {
        let (Some(lock), Some(killed)) = (self.alive.get(rank.index()), self.endpoint(rank)) else {
            return;
        };
        {
            let mut alive = lock.write().unwrap_or_else(|e| e.into_inner());
            if !*alive {
                return;
            }
            *alive = false;
        }
        self.stop(rank);
        killed.mark_killed();
        let mut queue = VecDeque::new();
        let registered = self.registered.load(Ordering::SeqCst);
        for peer in (0..registered).map(WorldRank) {
            let Some(endpoint) = self.endpoint(peer) else {
                continue;
            };
            if peer != rank && self.is_alive(peer) {
                queue.extend(
                    endpoint
                        .peer_failed(rank)
                        .into_iter()
                        .map(|(to, p)| (peer, to, p)),
                );
            }
        }
        self.route(queue);
        for orphan in self.orphaned() {
            self.kill(orphan);
        }
    }

    fn is_alive(&self, rank: WorldRank) -> bool {
        self.alive
            .get(rank.index())
            .is_some_and(|lock| *lock.read().unwrap_or_else(|e| e.into_inner()))
    }

    #[inline]
    fn oversubscribed(&self) -> bool {
        self.oversubscribed.load(Ordering::Relaxed)
    }

    fn rank_ended(&self, rank: WorldRank) {
        self.stop(rank);
    }

    fn spawn(&self, request: &SpawnRequest) -> Result<(WorldRank, u32)> {
        let (outcome, children) = {
            let mut spawns = self.spawns();
            if let Some(record) = spawns.records.get(&request.key) {
                return record.outcome.clone();
            }
            let gate = Arc::new(SpawnGate::default());
            let record = self.start(&mut spawns, request, &gate);
            let made = (record.outcome.clone(), record.children.clone());
            spawns.records.insert(request.key, record);
            made
        };
        self.learn_dead(&children);
        outcome
    }

    fn spawn_verdict(&self, key: SpawnKey, start: bool) {
        let children = {
            let spawns = self.spawns();
            let Some(record) = spawns.records.get(&key) else {
                return;
            };
            record.gate.decide(start);
            record.children.clone()
        };
        if !start {
            for child in children {
                self.kill(child);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job of `n` ranks whose launcher answers every start with `answer`; returns the
    /// transport and the gates of the starts it was asked for.
    fn job(n: u32, answer: std::result::Result<(), String>) -> (InProcess, mpsc::Receiver<Launch>) {
        let endpoints = (0..n)
            .map(|r| Arc::new(Endpoint::new(WorldRank(r), n)))
            .collect();
        let transport = InProcess::new(endpoints, 2 * n);
        let (tx, rx) = mpsc::channel();
        transport.set_launcher(Some(tx));
        let (asked_tx, asked_rx) = mpsc::channel();
        std::thread::spawn(move || {
            while let Ok(Launch::Start { ranks, gate, reply }) = rx.recv() {
                let _ = reply.send(answer.clone());
                let _ = asked_tx.send(Launch::Start {
                    ranks,
                    gate,
                    reply: mpsc::channel().0,
                });
            }
        });
        (transport, asked_rx)
    }

    fn request(n: u32, count: u32) -> SpawnRequest {
        SpawnRequest {
            key: (7, WorldRank(0)),
            count,
            parents: (0..n).map(WorldRank).collect(),
            args: Vec::new(),
            programs: super::super::Programs::Job,
        }
    }

    fn gate_of(asked: &mpsc::Receiver<Launch>) -> Arc<SpawnGate> {
        match asked.recv().unwrap() {
            Launch::Start { gate, .. } => gate,
            Launch::Ended => unreachable!(),
        }
    }

    /// A job whose rank threads outnumber the cores runs its agreements without the first
    /// round, at every rank and at the ranks it spawns; a job with a core per rank runs it.
    #[test]
    fn the_first_round_is_off_where_threads_outnumber_the_cores() {
        let n = crate::wait::cores() as u32 + 1;
        let (crowded, _asked) = job(n, Ok(()));
        assert_eq!(crowded.spawn(&request(n, 1)), Ok((WorldRank(n), 1)));
        for rank in 0..=n {
            let endpoint = crowded.endpoint(WorldRank(rank)).expect("started");
            assert!(!endpoint.lock().agreement_first_round(), "rank {rank}");
        }
        let (alone, _asked) = job(1, Ok(()));
        assert_eq!(alone.spawn(&request(1, 1)), Ok((WorldRank(1), 1)));
        for rank in 0..=1 {
            let endpoint = alone.endpoint(WorldRank(rank)).expect("started");
            assert!(endpoint.lock().agreement_first_round(), "rank {rank}");
        }
    }

    #[test]
    fn every_parent_gets_the_first_answer_and_world_ranks_are_never_reused() {
        let (transport, asked) = job(3, Ok(()));
        assert_eq!(transport.spawn(&request(3, 2)), Ok((WorldRank(3), 2)));
        assert_eq!(
            transport.spawn(&request(3, 2)),
            Ok((WorldRank(3), 2)),
            "found started"
        );
        let gate = gate_of(&asked);
        transport.spawn_verdict((7, WorldRank(0)), false);
        assert!(!gate.wait());
        assert!(!transport.is_alive(WorldRank(3)) && !transport.is_alive(WorldRank(4)));
        let mut next = request(3, 1);
        next.key.0 = 8;
        assert_eq!(
            transport.spawn(&next),
            Ok((WorldRank(5), 1)),
            "3 and 4 are not reused"
        );
        let mut full = request(3, 1);
        full.key.0 = 9;
        assert!(matches!(transport.spawn(&full), Err(Error::Spawn { .. })));
    }

    #[test]
    fn the_ranks_of_a_spawn_whose_parents_all_died_undecided_are_killed() {
        let (transport, asked) = job(2, Ok(()));
        assert_eq!(transport.spawn(&request(2, 2)), Ok((WorldRank(2), 2)));
        let gate = gate_of(&asked);
        transport.kill(WorldRank(0));
        assert!(
            transport.is_alive(WorldRank(2)),
            "a parent is left to decide"
        );
        transport.kill(WorldRank(1));
        assert!(
            !gate.wait(),
            "nobody is left to decide: the spawn's ranks never run"
        );
        assert!(!transport.is_alive(WorldRank(2)) && !transport.is_alive(WorldRank(3)));
    }

    #[test]
    fn new_ranks_learn_of_deaths_before_their_spawn_and_parents_of_theirs() {
        let (transport, asked) = job(3, Ok(()));
        transport.kill(WorldRank(1));
        let parents_request = request(3, 1);
        assert_eq!(transport.spawn(&parents_request), Ok((WorldRank(3), 1)));
        let _gate = gate_of(&asked);
        let child = transport.endpoint(WorldRank(3)).unwrap().clone();
        assert!(child.lock().knows_failed(WorldRank(1)));
        transport.kill(WorldRank(3));
        let parent = transport.endpoint(WorldRank(0)).unwrap().clone();
        assert!(parent.lock().knows_failed(WorldRank(3)));
    }

    #[test]
    fn a_start_the_launcher_refuses_is_every_parents_error() {
        let (transport, _asked) = job(2, Err("no thread".into()));
        let expected = Err(Error::Spawn {
            reason: "no thread".into(),
        });
        assert_eq!(transport.spawn(&request(2, 1)), expected);
        assert_eq!(transport.spawn(&request(2, 1)), expected);
        transport.set_launcher(None);
        let mut after = request(2, 1);
        after.key.0 = 8;
        assert!(
            matches!(transport.spawn(&after), Err(Error::Spawn { reason }) if reason.contains("not running"))
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated transport: every rank is a thread of this process, but exactly one of them runs
//! at a time, and a seeded scheduler decides everything that would otherwise be left to the
//! operating system and the network ([`crate::simulate`] is the user's side of it).
//!
//! Each rank's thread holds *the turn* while it runs and gives it up at every scheduling point:
//! at the start of each library call ([`Transport::call_point`]), in each polling progress
//! (`Request::test` loops, [`Transport::poll`]) and whenever it would wait
//! ([`Transport::wait_past`]). The thread giving up the turn runs the scheduler: with the seed's
//! random numbers it picks one of the enabled steps, that is, a rank that can run (not waiting,
//! or waiting on an event count that moved) or the first event of a (sender, receiver) pair's
//! queue, which it delivers to the receiver's engine there and then. It goes on until it picks a
//! rank; then that rank's thread gets the turn and the others stay parked. No progress thread and
//! no timer exist: a send appends the packet to its pair's queue, and nothing moves until the
//! scheduler picks it.
//!
//! What the scheduler decides, all from the seed: which rank runs next, the delivery order across
//! pairs (per pair, packets keep the order they were sent in, as the real transports keep it),
//! and when each survivor's detector learns of a death: a death puts a *failed* event at the end
//! of each (dead rank, survivor) queue, behind what the rank had sent, so complete messages sent
//! before a failure stay receivable (docs/src/semantics.md §1) and the detection reaches each
//! survivor at its own time. Kills come from the fault plan (the same grammar and injection
//! points as `runthrough::local`); timed ones count virtual time.
//!
//! Time is virtual: every step of the scheduler moves the clock by [`STEP`], and while every
//! rank waits for a timed event (a timed kill, a fence, a suspicion) the clock jumps to it
//! without counting steps; `Comm::wtime` reads it (a scheduling point itself). A run whose live ranks all wait with nothing in flight, or that uses up its step
//! budget, is a hang: the scheduler records where each rank was, kills every rank still
//! running (without telling anyone: nothing is scheduled any more), and lets their threads
//! unwind one at a time.
//!
//! Everything a step does is folded into a trace hash (FNV-1a over the step's kind, ranks and
//! the delivered packet's wire bytes): the same seed and plan give the same hash.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Series, Transport};
use crate::endpoint::Endpoint;
use crate::signal::Signal;
use runthrough_core::agreement::Decision;
use runthrough_core::fault::Fault;
use runthrough_core::packet::{ContextId, Outgoing, Packet, WORLD_CONTEXT};
use runthrough_core::simnet::Network;
use runthrough_core::{Error, Rank, Result, WorldRank};

/// Virtual time one scheduling step takes.
pub(crate) const STEP: Duration = Duration::from_micros(1);

/// How many steps after a false suspicion its suspect is fenced.
const FENCE_STEPS: std::ops::RangeInclusive<u32> = 50..=2000;

thread_local! {
    /// The world rank whose scheduled thread this is, on a simulated rank's thread.
    static SCHEDULED_RANK: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// What the scheduler knows of a rank's thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Its thread has not run yet.
    Starting,
    /// It gave up the turn and can go on at once.
    Ready,
    /// It waits for its event count to move past the value.
    Waiting(u32),
    /// Its function ended (returned, unwound after its death, or panicked).
    Done,
}

/// One event of a (sender, receiver) pair's queue.
#[derive(Debug)]
enum Event {
    /// A packet the sender sent.
    Packet(Packet),
    /// The sender died: the receiver's detector learns of it.
    Failed,
}

/// Where a hang left each rank, and why it is a hang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hang {
    /// Why: every live rank waits with nothing in flight, or the step budget ran out.
    pub(crate) why: String,
    /// Per rank: where it was (waiting in its K-th call, ready, done, dead).
    pub(crate) ranks: Vec<String>,
}

impl fmt::Display for Hang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.why)?;
        for (rank, place) in self.ranks.iter().enumerate() {
            let comma = if rank > 0 { "," } else { "" };
            write!(f, "{comma} rank {rank} {place}")?;
        }
        Ok(())
    }
}

/// What a finished simulation reports besides the ranks' outcomes.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub(crate) steps: u64,
    /// Agreement decisions the library's check compared.
    pub(crate) decisions: u64,
    pub(crate) trace_hash: u64,
    pub(crate) hang: Option<Hang>,
    /// The faults that fired, in the order they did (timed ones included).
    pub(crate) fired: Vec<Fault>,
    /// Broken rules the scheduler saw (two decisions of one agreement, a live rank agreed
    /// failed), in words.
    pub(crate) violations: Vec<String>,
    /// The steps in words, if asked for.
    pub(crate) trace: Vec<String>,
}

#[derive(Debug)]
struct State {
    rng: ChaCha8Rng,
    /// The rank whose thread holds the turn; `None`: nobody (before the start, after the end).
    turn: Option<u32>,
    runs: Vec<Run>,
    /// Library calls started per rank (the `call:K` count).
    calls: Vec<u64>,
    /// Events not yet delivered, per (from, to) pair (`runthrough_core::simnet`, the network
    /// model the engine simulator uses too).
    network: Network<Event>,
    steps: u64,
    /// Virtual time in microseconds: one per step, plus the jumps while every rank waits for
    /// a timed event.
    clock: u64,
    budget: u64,
    /// Agreement decisions checked ([`Simulated::check_decision`]).
    decisions: u64,
    /// Timed kills not yet due: (virtual time, rank), latest first.
    timed: Vec<(Duration, Rank)>,
    /// Steps at which a false suspicion starts, latest first.
    suspicions: Vec<u64>,
    /// Ranks a false suspicion named (alive until their fence, or until they halt).
    suspected: Vec<bool>,
    hash: u64,
    hang: Option<Hang>,
    fired: Vec<Fault>,
    /// Per agreement, the first rank that returned its decision, and the decision.
    decided: BTreeMap<(Series, ContextId, u64), (u32, Decision)>,
    violations: Vec<String>,
    /// The run's steps in words, when asked for (`Simulation::trace`).
    trace: Option<Vec<String>>,
    /// Scratch for encoding packets into the hash.
    scratch: Vec<u8>,
    /// The run was called off before it started (a rank's thread could not be spawned): the
    /// ranks already started return without running their function.
    called_off: bool,
}

/// The simulated transport and its scheduler.
#[derive(Debug)]
pub(crate) struct Simulated {
    endpoints: Vec<Arc<Endpoint>>,
    alive: Vec<AtomicBool>,
    state: Mutex<State>,
    /// One per rank, and the last one for the thread that started the run.
    turns: Vec<Condvar>,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// Adds a line to the trace, if one is kept.
fn note(state: &mut State, line: impl FnOnce() -> String) {
    if let Some(trace) = &mut state.trace {
        trace.push(format!("{:>8} {}", state.clock, line()));
    }
}

/// An event in words (a data or collective packet by its size, not its bytes).
fn describe(event: &Event) -> String {
    match event {
        Event::Failed => "(the sender died)".into(),
        Event::Packet(Packet::Data {
            context,
            source,
            tag,
            payload,
        }) => format!(
            "data ctx {context:#x} from {source} tag {tag}, {} bytes",
            payload.len()
        ),
        Event::Packet(Packet::Collective {
            context,
            epoch,
            sequence,
            payload,
            ..
        }) => format!(
            "collective ctx {context:#x} epoch {epoch} #{sequence}, {} bytes",
            payload.len()
        ),
        Event::Packet(other) => format!("{other:?}"),
    }
}

fn fold(hash: &mut u64, bytes: &[u8]) {
    for byte in bytes {
        *hash ^= u64::from(*byte);
        *hash = hash.wrapping_mul(FNV_PRIME);
    }
}

impl Simulated {
    /// A simulation of `endpoints.len()` ranks scheduled by `seed`, hanging after `budget`
    /// steps, with `timed` kills at virtual times.
    pub(crate) fn new(
        endpoints: Vec<Arc<Endpoint>>,
        seed: u64,
        budget: u64,
        mut timed: Vec<(Duration, Rank)>,
        mut suspicions: Vec<u64>,
    ) -> Self {
        let n = endpoints.len();
        timed.sort_by(|a, b| b.cmp(a));
        suspicions.sort_by(|a, b| b.cmp(a));
        Simulated {
            alive: endpoints.iter().map(|_| AtomicBool::new(true)).collect(),
            turns: (0..=n).map(|_| Condvar::new()).collect(),
            state: Mutex::new(State {
                rng: ChaCha8Rng::seed_from_u64(seed),
                turn: None,
                runs: vec![Run::Starting; n],
                calls: vec![0; n],
                network: Network::new(n as u32),
                steps: 0,
                clock: 0,
                decisions: 0,
                budget,
                timed,
                suspicions,
                suspected: vec![false; n],
                hash: FNV_OFFSET,
                hang: None,
                called_off: false,
                fired: Vec::new(),
                decided: BTreeMap::new(),
                violations: Vec::new(),
                trace: None,
                scratch: Vec::new(),
            }),
            endpoints,
        }
    }

    /// Records the run's steps in words ([`Report::trace`]).
    pub(crate) fn keep_trace(&self) {
        self.lock().trace = Some(Vec::new());
    }

    fn size(&self) -> u32 {
        self.endpoints.len() as u32
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calling thread's rank: a wait or poll from a thread the simulation does not
    /// schedule (one that got past `call_point`'s refusal, say with a request handed to it) is
    /// refused (it would run beside the scheduled one and make the run depend on the operating
    /// system).
    fn scheduled(&self) -> u32 {
        SCHEDULED_RANK.with(|r| r.get()).unwrap_or_else(|| {
            panic!(
                "runthrough::simulate: a library call came from a thread the simulation does \
                 not schedule; under simulation only the rank's own thread may call the \
                 library (docs/src/semantics.md §7)"
            )
        })
    }

    /// Runs on the thread of `rank` before its function: marks the thread as the rank's and
    /// waits for the rank's first turn. False if the run was called off instead
    /// ([`Simulated::call_off`]): the thread must return without running the function.
    pub(crate) fn rank_starts(&self, rank: u32) -> bool {
        SCHEDULED_RANK.with(|r| r.set(Some(rank)));
        let mut state = self.lock();
        while state.turn != Some(rank) {
            if state.called_off {
                return false;
            }
            state = self.turns[rank as usize]
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        true
    }

    /// Calls the run off before it started (a rank's thread could not be spawned): the ranks
    /// waiting for their first turn return at once.
    pub(crate) fn call_off(&self) {
        self.lock().called_off = true;
        for turn in &self.turns {
            turn.notify_all();
        }
    }

    /// Runs on the thread of `rank` after its function and everything it held ended: gives the
    /// turn to the next rank for good.
    pub(crate) fn rank_done(&self, rank: u32) {
        let mut state = self.lock();
        // Its engine stays: as in-process, a rank whose function returned still answers what
        // reaches it (an agreement's messages) until the run ends.
        state.runs[rank as usize] = Run::Done;
        // A delivery that panics here (a library bug) would leave the others parked for ever:
        // it is recorded as a violation, the run ends as a hang, and the scheduler goes on
        // letting the ranks unwind.
        let picked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.pick(&mut state)));
        let next = match picked {
            Ok(next) => next,
            Err(payload) => {
                let message = crate::universe::panic_message(payload.as_ref());
                state
                    .violations
                    .push(format!("a delivery panicked: {message}"));
                self.hang(&mut state, format!("a delivery panicked: {message}"));
                self.pick(&mut state)
            }
        };
        self.hand_over(&mut state, next);
    }

    /// Starts the run (on the thread that started the ranks) and waits until every rank is done.
    pub(crate) fn drive(&self) -> Report {
        let mut state = self.lock();
        let first = self.pick(&mut state);
        self.hand_over(&mut state, first);
        let driver = self.endpoints.len();
        while state.runs.iter().any(|r| *r != Run::Done) {
            state = self.turns[driver]
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        Report {
            steps: state.steps,
            decisions: state.decisions,
            trace_hash: state.hash,
            hang: state.hang.clone(),
            fired: state.fired.clone(),
            violations: state.violations.clone(),
            trace: state.trace.take().unwrap_or_default(),
        }
    }

    /// Gives the turn to `next` (or to nobody: the driver hears of it).
    fn hand_over(&self, state: &mut State, next: Option<u32>) {
        state.turn = next;
        match next {
            Some(rank) => self.turns[rank as usize].notify_one(),
            None => self.turns[self.endpoints.len()].notify_one(),
        }
    }

    /// The calling thread, rank `me`, gives up the turn as `run` and gets it back when the
    /// scheduler picks it again.
    fn yield_as(&self, me: u32, run: Run) {
        let mut state = self.lock();
        debug_assert_eq!(state.turn, Some(me), "only the rank holding the turn runs");
        state.runs[me as usize] = run;
        let next = self.pick(&mut state);
        if next == Some(me) {
            state.runs[me as usize] = Run::Ready;
            return;
        }
        self.hand_over(&mut state, next);
        while state.turn != Some(me) {
            state = self.turns[me as usize]
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        state.runs[me as usize] = Run::Ready;
    }

    /// Whether rank `rank` can take the turn now.
    fn can_run(&self, run: Run, rank: usize) -> bool {
        match run {
            Run::Starting | Run::Ready => true,
            Run::Waiting(seen) => {
                self.endpoints[rank].signal.current() != seen || self.endpoints[rank].is_killed()
            }
            Run::Done => false,
        }
    }

    /// The scheduler: takes steps until one gives the turn to a rank (its number), or until no
    /// rank is left to run (`None`).
    fn pick(&self, state: &mut State) -> Option<u32> {
        loop {
            if state.runs.iter().all(|r| *r == Run::Done) {
                return None;
            }
            state.steps += 1;
            state.clock += 1;
            let now = Duration::from_micros(state.clock);
            while state.timed.last().is_some_and(|(at, _)| *at <= now) {
                let (at, rank) = state.timed.pop().expect("a timed kill is due");
                if self.alive[rank as usize].load(Ordering::SeqCst) {
                    state.fired.push(Fault {
                        rank,
                        trigger: runthrough_core::fault::Trigger::After(at),
                    });
                    self.kill_locked(state, rank);
                }
            }
            while state.suspicions.last().is_some_and(|at| *at <= state.clock) {
                state.suspicions.pop();
                self.suspect(state, now);
            }
            if state.hang.is_none() && state.steps > state.budget {
                self.hang(state, format!("the step budget ({}) ran out", state.budget));
            }
            let ready: Vec<u32> = (0..state.runs.len())
                .filter(|&r| self.can_run(state.runs[r], r))
                .map(|r| r as u32)
                .collect();
            let choices = ready.len() + state.network.busy();
            if choices == 0 {
                // Everyone waits: time passes until the next timed kill or suspicion, if any.
                let timed = state.timed.last().map(|(at, _)| at.as_micros() as u64);
                let next = match (timed, state.suspicions.last().copied()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                if let Some(next) = next.filter(|_| state.hang.is_none()) {
                    // Time passes, steps do not: the budget counts what the ranks do.
                    fold(&mut state.hash, b"idle");
                    state.steps -= 1;
                    state.clock = state.clock.max(next.saturating_sub(1));
                    continue;
                }
                self.hang(
                    state,
                    "every rank still running waits, and nothing is in flight".into(),
                );
                continue;
            }
            let choice = state.rng.gen_range(0..choices);
            if let Some(&rank) = ready.get(choice) {
                let calls = state.calls[rank as usize];
                note(state, || format!("run {rank} (call {calls})"));
                fold(&mut state.hash, b"run");
                fold(&mut state.hash, &rank.to_le_bytes());
                return Some(rank);
            }
            let (from, to, event) = state
                .network
                .take(choice - ready.len())
                .expect("the choice is a busy pair");
            self.deliver(state, from, to, event);
        }
    }

    /// A false suspicion: the seed picks a live observer and a live suspect; the observer's
    /// detector reports the suspect failed now, though it runs on (sending, receiving,
    /// agreeing), and the suspect is fenced (killed) within [`FENCE_STEPS`] steps, unless it
    /// halts first on learning from an agreement that its peers declared it failed.
    fn suspect(&self, state: &mut State, now: Duration) {
        let live: Vec<u32> = (0..self.size())
            .filter(|&r| {
                self.alive[r as usize].load(Ordering::SeqCst) && !state.suspected[r as usize]
            })
            .collect();
        if live.len() < 2 {
            return;
        }
        let observer = live[state.rng.gen_range(0..live.len())];
        let others: Vec<u32> = live.into_iter().filter(|&r| r != observer).collect();
        let suspect = others[state.rng.gen_range(0..others.len())];
        state.suspected[suspect as usize] = true;
        note(state, || format!("{observer} suspects {suspect}"));
        fold(&mut state.hash, b"suspect");
        fold(&mut state.hash, &observer.to_le_bytes());
        fold(&mut state.hash, &suspect.to_le_bytes());
        let out = self.endpoints[observer as usize].peer_failed(WorldRank(suspect));
        self.enqueue_all(state, observer, out);
        let fence = STEP * state.rng.gen_range(FENCE_STEPS.clone());
        state.timed.push((now + fence, suspect));
        state.timed.sort_by(|a, b| b.cmp(a));
    }

    /// Delivers an event `from` sent `to`.
    fn deliver(&self, state: &mut State, from: u32, to: u32, event: Event) {
        fold(&mut state.hash, b"d");
        fold(&mut state.hash, &from.to_le_bytes());
        fold(&mut state.hash, &to.to_le_bytes());
        if !self.alive[to as usize].load(Ordering::SeqCst) {
            note(state, || {
                format!("{from} -> {to} lost (dead): {}", describe(&event))
            });
            return; // to a dead rank: lost
        }
        note(state, || format!("{from} -> {to}: {}", describe(&event)));
        let out = match event {
            Event::Packet(packet) => {
                state.scratch.clear();
                runthrough_core::wire::encode_packet(&packet, &mut state.scratch);
                let scratch = std::mem::take(&mut state.scratch);
                fold(&mut state.hash, &scratch);
                state.scratch = scratch;
                self.endpoints[to as usize].deliver(WorldRank(from), packet)
            }
            Event::Failed => {
                fold(&mut state.hash, b"failed");
                self.endpoints[to as usize].peer_failed(WorldRank(from))
            }
        };
        self.enqueue_all(state, to, out);
    }

    /// Queues what `from`'s engine produced while something was delivered to it, each packet
    /// a point where a planned fault may kill `from` (as for what it sends itself).
    fn enqueue_all(&self, state: &mut State, from: u32, out: Outgoing) {
        for (to, packet) in out {
            if self.dies_before_sending(state, from, &packet) {
                return;
            }
            self.enqueue(state, from, to.0, Event::Packet(packet));
        }
    }

    /// Whether a planned fault kills `from` before it sends `packet`; if so it is killed.
    fn dies_before_sending(&self, state: &mut State, from: u32, packet: &Packet) -> bool {
        let endpoint = &self.endpoints[from as usize];
        if !endpoint.dies_before_sending(packet) {
            return false;
        }
        // Once dead, every send is refused: the fault is recorded once, when it kills.
        let alive = self.alive[from as usize].load(Ordering::SeqCst);
        if let Some((trigger, _)) = endpoint.fired_fault().filter(|_| alive) {
            state.fired.push(Fault {
                rank: from,
                trigger,
            });
        }
        self.kill_locked(state, from);
        true
    }

    fn enqueue(&self, state: &mut State, from: u32, to: u32, event: Event) {
        if !self.alive[from as usize].load(Ordering::SeqCst) || to >= self.size() {
            return;
        }
        state.network.send(from, to, event);
    }

    /// `rank` dies: it sends nothing more, and each live peer's detector learns of it after
    /// what the rank had sent it.
    fn kill_locked(&self, state: &mut State, rank: u32) {
        if !self.alive[rank as usize].swap(false, Ordering::SeqCst) {
            return;
        }
        self.endpoints[rank as usize].mark_killed();
        note(state, || format!("{rank} dies"));
        fold(&mut state.hash, b"kill");
        fold(&mut state.hash, &rank.to_le_bytes());
        let n = self.size();
        for peer in 0..n {
            if peer != rank && self.alive[peer as usize].load(Ordering::SeqCst) {
                state.network.send(rank, peer, Event::Failed);
            }
        }
    }

    /// Records a hang and ends the run: every rank still running is killed without anyone
    /// hearing of it, and nothing in flight is delivered any more.
    fn hang(&self, state: &mut State, why: String) {
        let ranks = (0..state.runs.len())
            .map(|r| {
                let calls = state.calls[r];
                match state.runs[r] {
                    _ if !self.alive[r].load(Ordering::SeqCst) => "dead".to_string(),
                    Run::Done => "done".to_string(),
                    Run::Waiting(_) => format!("waiting in its call {calls}"),
                    Run::Ready | Run::Starting => format!("ready, in or after its call {calls}"),
                }
            })
            .collect();
        if state.hang.is_none() {
            note(state, || format!("hang: {why}"));
            state.hang = Some(Hang { why, ranks });
        }
        state.network.clear();
        state.timed.clear();
        for (rank, alive) in self.alive.iter().enumerate() {
            if alive.swap(false, Ordering::SeqCst) {
                self.endpoints[rank].mark_killed();
            }
        }
    }
}

impl Simulated {
    /// Checks a decision that `rank` returns from agreement `at` (docs/src/semantics.md §2.1):
    /// uniform (every rank returns the one decision) and, on the world communicator, valid
    /// (only dead ranks agreed failed, or the suspects of false suspicions).
    fn check_decision(
        &self,
        state: &mut State,
        rank: u32,
        at: (Series, ContextId, u64),
        decision: &Decision,
    ) {
        let (series, context, seq) = at;
        state.decisions += 1;
        match state.decided.get(&at) {
            Some((first, agreed)) if agreed != decision => {
                let violation = format!(
                    "{series:?} {seq} of communicator {context:#x}: rank {first} returned \
                     {agreed:?}, rank {rank} {decision:?}"
                );
                state.violations.push(violation);
            }
            Some(_) => {}
            None => {
                state.decided.insert(at, (rank, decision.clone()));
            }
        }
        if context == WORLD_CONTEXT && series == Series::Agreement {
            for failed in decision.failed.iter() {
                if self.is_alive(WorldRank(failed)) && !state.suspected[failed as usize] {
                    state.violations.push(format!(
                        "{series:?} {seq} of the world: rank {rank} returned rank {failed} as \
                         failed, which is alive"
                    ));
                }
            }
        }
    }
}

impl Transport for Simulated {
    fn decided(&self, rank: WorldRank, at: (Series, ContextId, u64), decision: &Decision) {
        let rank = rank.0;
        let mut state = self.lock();
        self.check_decision(&mut state, rank, at, decision);
    }

    fn send(&self, from: WorldRank, to: WorldRank, packet: Packet) {
        let (from, to) = (from.0, to.0);
        let mut state = self.lock();
        if !self.alive[from as usize].load(Ordering::SeqCst) {
            return;
        }
        if self.dies_before_sending(&mut state, from, &packet) {
            return;
        }
        self.enqueue(&mut state, from, to, Event::Packet(packet));
    }

    fn kill(&self, rank: WorldRank) {
        let rank = rank.0;
        let mut state = self.lock();
        if self.alive[rank as usize].load(Ordering::SeqCst) {
            let planned = self.endpoints[rank as usize].fired_fault();
            let trigger = match planned {
                Some((trigger, _)) => Some(trigger),
                // A suspect that halts on learning it was declared failed: as its fence.
                None if state.suspected[rank as usize] => Some(
                    runthrough_core::fault::Trigger::After(Duration::from_micros(state.clock)),
                ),
                None => None,
            };
            if let Some(trigger) = trigger {
                state.fired.push(Fault { rank, trigger });
            }
        }
        self.kill_locked(&mut state, rank);
    }

    fn is_alive(&self, rank: WorldRank) -> bool {
        let rank = rank.0;
        self.alive
            .get(rank as usize)
            .is_some_and(|a| a.load(Ordering::SeqCst))
    }

    fn call_point(&self, rank: WorldRank) -> Result<()> {
        let rank = rank.0;
        if SCHEDULED_RANK.with(|r| r.get()) != Some(rank) {
            return Err(Error::Argument {
                reason: format!(
                    "runthrough::simulate: a library call of rank {rank} came from a thread the \
                     simulation does not schedule; under simulation only the rank's own thread \
                     may call the library (docs/src/semantics.md §7)"
                ),
            });
        }
        let me = rank;
        self.lock().calls[me as usize] += 1;
        self.yield_as(me, Run::Ready);
        if self.endpoints[me as usize].is_killed() {
            // Killed while parked (a timed kill, or the end of a hung run).
            std::panic::resume_unwind(Box::new(crate::rank::Killed));
        }
        Ok(())
    }

    fn poll(&self) {
        let me = self.scheduled();
        self.yield_as(me, Run::Ready);
    }

    fn wait_past(&self, signal: &Signal, seen: u32) {
        let me = self.scheduled();
        if signal.current() != seen {
            return;
        }
        self.yield_as(me, Run::Waiting(seen));
    }

    /// The virtual clock. Reading it is a scheduling point (on a rank's own thread), so a
    /// program that waits for a time by reading the clock in a loop lets the others run and
    /// moves time on.
    fn wtime(&self) -> f64 {
        if let Some(me) = SCHEDULED_RANK.with(|r| r.get()) {
            let holds_the_turn = self.lock().turn == Some(me);
            if holds_the_turn {
                self.yield_as(me, Run::Ready);
            }
        }
        Duration::from_micros(self.lock().clock).as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runthrough_core::RankSet;

    fn simulated(n: u32) -> Simulated {
        let endpoints = (0..n)
            .map(|r| Arc::new(Endpoint::new(WorldRank(r), n)))
            .collect();
        Simulated::new(endpoints, 0, 1000, Vec::new(), Vec::new())
    }

    fn decision(failed: &[u32], flag: u32) -> Decision {
        let mut set = RankSet::default();
        for rank in failed {
            set.insert(*rank);
        }
        Decision {
            failed: set,
            flag,
            ..Decision::default()
        }
    }

    /// The agreement check sees two ranks return different decisions from one agreement, and
    /// a live rank agreed failed; equal decisions, other agreements and other series pass.
    #[test]
    fn the_agreement_check_catches_disagreement_and_live_ranks_agreed_failed() {
        let sim = simulated(3);
        sim.kill(WorldRank(2));
        let at = (Series::Agreement, WORLD_CONTEXT, 1);
        sim.decided(WorldRank(0), at, &decision(&[2], 1));
        sim.decided(WorldRank(1), at, &decision(&[2], 1));
        sim.decided(
            WorldRank(1),
            (Series::Creation, WORLD_CONTEXT, 1),
            &decision(&[], 1),
        );
        sim.decided(
            WorldRank(0),
            (Series::Agreement, WORLD_CONTEXT, 2),
            &decision(&[2], 0),
        );
        assert!(
            sim.lock().violations.is_empty(),
            "{:?}",
            sim.lock().violations
        );
        sim.decided(
            WorldRank(1),
            (Series::Agreement, WORLD_CONTEXT, 2),
            &decision(&[2], 1),
        );
        let violations = sim.lock().violations.clone();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert!(violations[0].contains("rank 0 returned"), "{violations:?}");
        sim.decided(
            WorldRank(0),
            (Series::Agreement, WORLD_CONTEXT, 3),
            &decision(&[1], 1),
        );
        let violations = sim.lock().violations.clone();
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(
            violations[1].contains("rank 1 as failed, which is alive"),
            "{violations:?}"
        );
    }
}

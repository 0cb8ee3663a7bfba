// SPDX-License-Identifier: MIT OR Apache-2.0
//! Running one schedule: n engines in one thread over the seeded network, programs stepped and
//! packets delivered in an order the seed picks, ranks killed at the plan's steps, each
//! survivor's detector told of each death after its own random delay. The checks run after
//! every step; at the end, once the network is drained and every death was reported
//! everywhere, every survivor's program must have finished.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough_core::engine::Engine;
use runthrough_core::packet::{Outgoing, Packet, WORLD_CONTEXT};
use runthrough_core::Error;
use runthrough_core::WorldRank;

use super::checks::Checker;
use super::detection::{Detection, Effect};
use super::network::Network;
use super::program::{Ctx, End, Plan, Program};

/// The most scheduler steps one schedule may take (a livelock is a violation).
pub const STEP_BUDGET: u64 = 5_000_000;

/// A run's trace: a hash of every event, and the events' text when asked for.
#[derive(Debug, Default)]
pub struct Trace {
    hash: u64,
    /// The events' text (replay only).
    pub lines: Option<Vec<String>>,
    /// The current step (prefixed to each line).
    pub step: u64,
}

impl Trace {
    fn new(text: bool) -> Self {
        Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            lines: text.then(Vec::new),
            step: 0,
        }
    }

    /// Records an event: `words` go into the hash, `text` into the lines when kept.
    pub fn note(&mut self, words: &[u64], text: impl FnOnce() -> String) {
        for &word in words {
            for byte in word.to_le_bytes() {
                self.hash ^= u64::from(byte);
                self.hash = self.hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        if let Some(lines) = &mut self.lines {
            lines.push(format!("{:>7} {}", self.step, text()));
        }
    }

    /// The hash of the events so far.
    pub fn hash(&self) -> u64 {
        self.hash
    }
}

/// A violation: the schedule's seed, the step, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineViolation {
    /// The schedule's seed.
    pub seed: u64,
    /// The range of rank counts it was drawn with.
    pub ranks: (u32, u32),
    /// The scheduler step at which it was seen.
    pub step: u64,
    /// The model's variations.
    pub options: Options,
    /// What went wrong (with where each rank waits, for a stuck schedule).
    pub what: String,
}

impl std::fmt::Display for EngineViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seed {}: step {}: {}", self.seed, self.step, self.what)
    }
}

impl EngineViolation {
    /// The command that prints this schedule's trace.
    pub fn replay(&self) -> String {
        let mut command = replay_command(self.seed, self.ranks);
        if self.options.any_order {
            command.push_str(" --any-order");
        }
        if self.options.suspicions {
            command.push_str(" --suspicions");
        }
        if self.options.detector {
            command.push_str(" --detector");
        }
        command
    }
}

/// The command that replays the schedule of `seed`.
pub fn replay_command(seed: u64, ranks: (u32, u32)) -> String {
    format!(
        "cargo run --release -p runthrough-sim -- engine-replay --seed {seed} --ranks {}..{}",
        ranks.0, ranks.1
    )
}

/// What one schedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOutcome {
    /// Ranks.
    pub ranks: u32,
    /// Scheduler steps.
    pub steps: u64,
    /// Packets delivered.
    pub packets: u64,
    /// Messages received by programs.
    pub receipts: u64,
    /// Receives that found their sender failed.
    pub failed_receives: u64,
    /// Ranks killed.
    pub crashes: u64,
    /// Sends that waited for credit, over all ranks.
    pub delayed_sends: u64,
    /// Whether the world was revoked.
    pub revoked: bool,
    /// Agreement decisions taken (one per surviving rank per agreement).
    pub decisions: u64,
    /// `dup` calls that returned a communicator, and that returned an error (per rank).
    pub dups: (u64, u64),
    /// `split` calls that returned their communicator (or none, undefined), and an error.
    pub splits: (u64, u64),
    /// `shrink` calls that returned (per rank).
    pub shrinks: u64,
    /// Barriers that returned `Ok` (per rank), each after every participant had entered it.
    pub barriers: u64,
    /// False suspicions, and suspected ranks that halted on learning they were declared
    /// failed (before their fence).
    pub suspicions: (u64, u64),
    /// With `--detector`: hung ranks, failures decided by a majority of votes (each at each
    /// rank), ranks halted by their detector.
    pub detector: (u64, u64, u64),
    /// The hash of the trace.
    pub trace_hash: u64,
    /// The trace's lines (replay only).
    pub trace: Vec<String>,
}

/// Variations of the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Test-only fault: the network drops the n-th data packet (to see the checks catch it).
    pub drop_data_at: Option<u64>,
    /// Test-only fault: the n-th agreement decision a rank takes has its flag's lowest bit
    /// flipped (to see the agreement checks catch it).
    pub corrupt_decision_at: Option<u64>,
    /// Test-only fault: the n-th creation decision a rank takes (of a `dup`) loses its
    /// `EXCHANGE_OK` bit (to see the creation check catch it).
    pub corrupt_creation_at: Option<u64>,
    /// Test-only fault: the n-th `split` communicator a rank installs has its members in
    /// reverse order (to see the split check catch it).
    pub corrupt_split_at: Option<u64>,
    /// Receivers take their messages of a round in any order, not each sender's order (every
    /// receive names its message's tag, unique in the round at the receiver). Valid MPI
    /// (isends, then receives, then waits), which flow control completes with loans (see the
    /// test `isends_received_out_of_order_complete`).
    pub any_order: bool,
    /// Half of the crashes are false suspicions first: one survivor's detector reports a live
    /// rank failed, which keeps running (sending, receiving, agreeing) until it is fenced (it
    /// crashes) a few steps later, as a rank SIGKILLed after its peers' fence vote does. The
    /// checks count it failed from the suspicion on.
    pub suspicions: bool,
    /// Every rank runs the runtime's failure detector (`runthrough_core::detector`) under
    /// virtual time, and an engine hears of a failure only when its detector decides it; half
    /// of the faults are hung ranks (silent, nothing closed), found by the heartbeat timeout;
    /// a launcher that confirms deaths and kills suspects is there in half of the schedules.
    pub detector: bool,
}

/// Runs the schedule of `seed` (its rank count drawn from `ranks`); with `text`, keeps the
/// trace's lines.
///
/// # Errors
/// The first violation, with the trace so far.
pub fn run_schedule(
    seed: u64,
    ranks: (u32, u32),
    text: bool,
    options: Options,
) -> Result<EngineOutcome, (Box<EngineViolation>, Vec<String>)> {
    let mut sim = Sim::new(seed, ranks, text, options);
    match sim.run() {
        Ok(()) => Ok(sim.outcome()),
        Err(what) => {
            let lines = sim.trace.lines.take().unwrap_or_default();
            Err((
                Box::new(EngineViolation {
                    seed,
                    ranks,
                    step: sim.step,
                    what,
                    options,
                }),
                lines,
            ))
        }
    }
}

struct Sim {
    plan: Plan,
    engines: Vec<Engine>,
    programs: Vec<Program>,
    checker: Checker,
    network: Network,
    rng: ChaCha8Rng,
    trace: Trace,
    step: u64,
    alive: Vec<bool>,
    /// The rank made no progress at its last step and nothing reached it since.
    blocked: Vec<bool>,
    /// Detector reports to come: (due step, observer, dead), in no order.
    detections: Vec<(u64, u32, u32)>,
    next_crash: usize,
    /// Fences to come: (due step, suspected rank), which then crashes.
    fences: Vec<(u64, u32)>,
    suspicions: bool,
    /// See [`EngineOutcome::suspicions`].
    suspected: (u64, u64),
    /// A crash is due and waits for the next rank that transmits more than one packet: it
    /// dies after a random prefix of them left (the rest never do).
    crash_mid_transmit: bool,
    packets: u64,
    crashes: u64,
    /// With `--detector`: every rank's detector, and the draws of its frames' delays.
    detection: Option<(Detection, ChaCha8Rng)>,
    hangs: u64,
}

impl Sim {
    fn new(seed: u64, ranks: (u32, u32), text: bool, options: Options) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(ranks.0.max(2)..=ranks.1.max(2));
        let plan = Plan::random(&mut rng, n, options.any_order);
        let mut engines: Vec<Engine> = (0..n).map(|r| Engine::new(WorldRank(r), n)).collect();
        // Where the ranks run, from the seed without a draw (every seed's program is as it
        // was): the barrier over hosts when some share one, the flat barrier otherwise.
        let hosts: Option<Vec<Option<u32>>> = match seed % 5 {
            0 => None,
            k => Some(
                (0..n)
                    .map(|r| Some(crate::schedule::host_class(k, r)))
                    .collect(),
            ),
        };
        for engine in &mut engines {
            engine.set_unexpected_cap(plan.cap, n);
            if let Some(hosts) = &hosts {
                engine.set_hosts(hosts.clone());
            }
        }
        let mut checker = Checker::new(&plan);
        checker.window = engines[0].flow_stats().window;
        checker.cap = engines[0].flow_stats().cap;
        checker.corrupt_decision_at = options.corrupt_decision_at;
        checker.corrupt_creation_at = options.corrupt_creation_at;
        checker.corrupt_split_at = options.corrupt_split_at;
        let mut trace = Trace::new(text);
        trace.note(&[seed, u64::from(n)], || {
            format!(
                "{n} ranks, cap {} (window {}), hosts {hosts:?}, rounds {:?}, {} messages, crashes at steps {:?}, detection within {} steps",
                plan.cap,
                checker.window,
                plan.rounds,
                plan.messages.len(),
                plan.crash_steps,
                plan.max_detect_delay
            )
        });
        Sim {
            engines,
            programs: (0..n).map(|_| Program::default()).collect(),
            checker,
            network: Network::new(n, options.drop_data_at),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_0FE4_614E),
            trace,
            step: 0,
            alive: vec![true; n as usize],
            blocked: vec![false; n as usize],
            detections: Vec::new(),
            fences: Vec::new(),
            suspicions: options.suspicions,
            suspected: (0, 0),
            next_crash: 0,
            crash_mid_transmit: false,
            packets: 0,
            crashes: 0,
            detection: options.detector.then(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xDE7E_C70E);
                (Detection::new(n, &mut rng), rng)
            }),
            hangs: 0,
            plan,
        }
    }

    fn outcome(&mut self) -> EngineOutcome {
        EngineOutcome {
            ranks: self.plan.ranks,
            steps: self.step,
            packets: self.packets,
            receipts: self.checker.receipts,
            failed_receives: self.checker.failed_receives,
            crashes: self.crashes,
            delayed_sends: self
                .engines
                .iter()
                .map(|e| e.flow_stats().delayed_sends)
                .sum(),
            revoked: self.checker.revoke_issued,
            decisions: self.checker.decisions,
            dups: self.checker.dups,
            splits: self.checker.splits,
            shrinks: self.checker.shrinks_returned,
            barriers: self.checker.barriers_left,
            suspicions: self.suspected,
            detector: match &self.detection {
                Some((d, _)) => (self.hangs, d.majority_decisions, d.halts),
                None => (0, 0, 0),
            },
            trace_hash: self.trace.hash(),
            trace: self.trace.lines.take().unwrap_or_default(),
        }
    }

    fn run(&mut self) -> Result<(), String> {
        loop {
            self.step += 1;
            self.trace.step = self.step;
            if self.step > STEP_BUDGET {
                return Err(format!(
                    "no end after {STEP_BUDGET} steps\n{}",
                    self.waits()
                ));
            }
            self.fire_detections()?;
            self.fire_detector()?;
            while let Some(at) = self.fences.iter().position(|&(due, _)| due <= self.step) {
                let (_, victim) = self.fences.remove(at);
                self.trace.note(&[4, u64::from(victim)], || {
                    format!("rank {victim} is fenced")
                });
                self.crash(victim);
            }
            if self.plan.crash_steps.get(self.next_crash) == Some(&self.step) {
                self.next_crash += 1;
                if self.detection.is_some() && self.rng.gen_bool(0.5) {
                    self.hang();
                } else if self.suspicions && self.rng.gen_bool(0.5) {
                    self.suspect();
                } else if self.rng.gen_bool(0.5) {
                    let live: Vec<u32> = (0..self.plan.ranks)
                        .filter(|&r| self.alive[r as usize])
                        .collect();
                    // (None left when every rank's detector halted it.)
                    if !live.is_empty() {
                        let dead = live[self.rng.gen_range(0..live.len())];
                        self.crash(dead);
                    }
                } else {
                    self.crash_mid_transmit = true;
                }
            }
            let runnable: Vec<u32> = (0..self.plan.ranks)
                .filter(|&r| {
                    let r = r as usize;
                    self.alive[r] && !self.blocked[r] && self.programs[r].end().is_none()
                })
                .collect();
            if self.network.is_empty() && runnable.is_empty() {
                let next = self.detections.iter().map(|d| d.0);
                let mut next = next.chain(self.fences.iter().map(|f| f.0)).min();
                if let Some((d, _)) = &mut self.detection {
                    // Until every failure is in every survivor's output and no frame is in
                    // flight, the detectors' deadlines come.
                    if !d.complete() || !d.quiet() {
                        next = next.into_iter().chain(d.next_due(self.step)).min();
                    }
                }
                if let Some(due) = next {
                    self.step = self.step.max(due - 1); // nothing happens until then
                    continue;
                }
                return self.finish();
            }
            let deliver = !self.network.is_empty()
                && (runnable.is_empty()
                    || self.rng.gen_range(0..1000) < self.plan.deliver_per_mille);
            if deliver {
                self.deliver()?;
            } else {
                let rank = runnable[self.rng.gen_range(0..runnable.len())];
                self.step_rank(rank)?;
            }
        }
    }

    /// Where each rank is (a stuck schedule's report).
    fn waits(&self) -> String {
        (0..self.plan.ranks)
            .map(|r| {
                let state = if self.alive[r as usize] {
                    self.programs[r as usize].describe(&self.plan, r)
                } else {
                    "crashed".to_string()
                };
                format!("  rank {r}: {state}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A false suspicion: one live rank's detector reports another live rank failed now; the
    /// suspect counts as failed for the checks from now on, keeps running, and is fenced
    /// (crashes) within the detection delay.
    fn suspect(&mut self) {
        let live: Vec<u32> = (0..self.plan.ranks)
            .filter(|&r| self.alive[r as usize] && !self.checker.crashed[r as usize])
            .collect();
        if live.len() <= 1 {
            return;
        }
        let victim = live[self.rng.gen_range(0..live.len())];
        let observers: Vec<u32> = live.iter().copied().filter(|&r| r != victim).collect();
        let observer = observers[self.rng.gen_range(0..observers.len())];
        self.checker.crashed[victim as usize] = true;
        self.suspected.0 += 1;
        self.detections.push((self.step, observer, victim));
        let due = self.step + self.rng.gen_range(1..=self.plan.max_detect_delay);
        self.fences.push((due, victim));
        self.trace
            .note(&[5, u64::from(observer), u64::from(victim)], || {
                format!("rank {observer} suspects {victim} (alive; fenced at step {due})")
            });
    }

    /// Kills `dead`, unless it is the last live rank.
    fn crash(&mut self, dead: u32) {
        let live: Vec<u32> = (0..self.plan.ranks)
            .filter(|&r| self.alive[r as usize])
            .collect();
        if live.len() <= 1 || !self.alive[dead as usize] {
            return;
        }
        self.alive[dead as usize] = false;
        self.checker.crashed[dead as usize] = true;
        self.crashes += 1;
        if let Some((d, rng)) = &mut self.detection {
            d.ended(dead, self.step, rng);
            self.trace
                .note(&[1, u64::from(dead)], || format!("rank {dead} crashes"));
            return;
        }
        for &observer in &live {
            if observer != dead {
                let due = self.step + self.rng.gen_range(1..=self.plan.max_detect_delay);
                self.detections.push((due, observer, dead));
            }
        }
        self.trace
            .note(&[1, u64::from(dead)], || format!("rank {dead} crashes"));
    }

    /// A hang: a live rank stops (nothing more from it, nothing closed); the checks count it
    /// failed from now on. Its peers' detectors find it silent.
    fn hang(&mut self) {
        let live: Vec<u32> = (0..self.plan.ranks)
            .filter(|&r| self.alive[r as usize])
            .collect();
        if live.len() <= 1 {
            return;
        }
        let victim = live[self.rng.gen_range(0..live.len())];
        self.alive[victim as usize] = false;
        self.checker.crashed[victim as usize] = true;
        self.hangs += 1;
        if let Some((d, _)) = &mut self.detection {
            d.hang(victim, self.step);
        }
        self.trace
            .note(&[8, u64::from(victim)], || format!("rank {victim} hangs"));
    }

    /// With `--detector`: the detector frames and deadlines due now, and what they decided.
    fn fire_detector(&mut self) -> Result<(), String> {
        let Some((d, rng)) = &mut self.detection else {
            return Ok(());
        };
        for effect in d.advance(self.step, rng) {
            match effect {
                Effect::Failed { observer, dead } => {
                    if !self.checker.crashed[dead as usize] {
                        return Err(format!(
                            "rank {observer}'s detector decided that rank {dead} failed, and \
                             it runs"
                        ));
                    }
                    self.detected(observer, dead)?;
                }
                Effect::End { rank } => self.end_process(rank),
                Effect::Wrong(what) => return Err(what),
            }
        }
        Ok(())
    }

    /// `rank`'s process ends (its detector halted it, or the launcher killed it), even the
    /// last live one's.
    fn end_process(&mut self, rank: u32) {
        if self.alive[rank as usize] {
            self.alive[rank as usize] = false;
            self.checker.crashed[rank as usize] = true;
            self.crashes += 1;
        }
        if let Some((d, rng)) = &mut self.detection {
            d.ended(rank, self.step, rng);
        }
        self.trace.note(&[9, u64::from(rank)], || {
            format!("rank {rank} ends (halted or killed)")
        });
    }

    fn fire_detections(&mut self) -> Result<(), String> {
        let mut i = 0;
        while i < self.detections.len() {
            let (due, observer, dead) = self.detections[i];
            if due > self.step {
                i += 1;
                continue;
            }
            self.detections.remove(i); // keeps the others' order: deterministic
            self.detected(observer, dead)?;
        }
        Ok(())
    }

    /// `observer`'s engine hears that `dead` failed.
    fn detected(&mut self, observer: u32, dead: u32) -> Result<(), String> {
        if !self.alive[observer as usize] {
            return Ok(());
        }
        self.trace
            .note(&[2, u64::from(observer), u64::from(dead)], || {
                format!("rank {observer} detects the failure of {dead}")
            });
        let mut out = Outgoing::new();
        self.checker.on_detect(observer, dead);
        self.engines[observer as usize].handle_peer_failed(WorldRank(dead), &mut out);
        self.engines[observer as usize].flush_flow(&mut out);
        self.blocked[observer as usize] = false;
        self.transmit(observer, out)?;
        self.check_flow(observer)?;
        self.halt_if_declared_failed(observer)
    }

    fn deliver(&mut self) -> Result<(), String> {
        let (from, to, packet) = self
            .network
            .take_next(&mut self.rng)
            .expect("the network is not empty");
        self.packets += 1;
        if !self.alive[to as usize] {
            return Ok(());
        }
        self.trace
            .note(&[3, u64::from(from), u64::from(to), kind(&packet)], || {
                format!("deliver {from} -> {to}: {}", describe(&packet))
            });
        self.checker.on_deliver(&self.plan, from, to, &packet)?;
        let mut out = Outgoing::new();
        let engine = &mut self.engines[to as usize];
        engine.handle_packet(WorldRank(from), packet, &mut out);
        engine.flush_flow(&mut out);
        self.blocked[to as usize] = false;
        self.transmit(to, out)?;
        self.check_flow(to)?;
        self.halt_if_declared_failed(to)
    }

    /// A rank whose engine learned that its peers declared it failed halts now, as the
    /// runtime's drivers halt it; only a crashed or suspected rank may be declared failed.
    fn halt_if_declared_failed(&mut self, rank: u32) -> Result<(), String> {
        if !self.engines[rank as usize].declared_failed() || !self.alive[rank as usize] {
            return Ok(());
        }
        if !self.checker.crashed[rank as usize] {
            return Err(format!(
                "rank {rank} was declared failed, but it was never suspected"
            ));
        }
        self.trace.note(&[7, u64::from(rank)], || {
            format!("rank {rank} learns it was declared failed: it halts")
        });
        self.fences.retain(|&(_, victim)| victim != rank);
        self.suspected.1 += 1;
        self.crash(rank);
        Ok(())
    }

    fn step_rank(&mut self, rank: u32) -> Result<(), String> {
        let r = rank as usize;
        let mut out = Outgoing::new();
        let mut cx = Ctx {
            me: rank,
            plan: &self.plan,
            engine: &mut self.engines[r],
            checker: &mut self.checker,
            out: &mut out,
            rng: &mut self.rng,
            trace: &mut self.trace,
        };
        let progress = self.programs[r].step(&mut cx)?;
        self.blocked[r] = !progress;
        self.transmit(rank, out)?;
        self.check_flow(rank)?;
        self.halt_if_declared_failed(rank)
    }

    fn transmit(&mut self, from: u32, mut out: Outgoing) -> Result<(), String> {
        let mut dies = false;
        if self.crash_mid_transmit && out.len() > 1 && self.alive[from as usize] {
            self.crash_mid_transmit = false;
            let keep = self.rng.gen_range(0..out.len());
            self.trace.note(&[6, u64::from(from), keep as u64], || {
                format!("rank {from} dies after {keep} of its {} packets", out.len())
            });
            out.truncate(keep);
            dies = true;
        }
        for (to, packet) in out {
            let to = to.0;
            self.checker.on_transmit(&self.plan, from, to, &packet)?;
            let words = [4, u64::from(from), u64::from(to), kind(&packet)];
            if !self.network.send(from, to, packet) {
                self.trace
                    .note(&words, || format!("FAULT: dropped {from} -> {to}"));
            }
        }
        if dies {
            self.crash(from);
        }
        Ok(())
    }

    fn check_flow(&self, rank: u32) -> Result<(), String> {
        self.checker
            .check_flow(rank, &self.engines[rank as usize].flow_stats())
    }

    /// Nothing more can happen: every survivor must be done; the end-of-run checks.
    fn finish(&mut self) -> Result<(), String> {
        let stuck = (0..self.plan.ranks)
            .any(|r| self.alive[r as usize] && self.programs[r as usize].end().is_none());
        if stuck {
            let mut flow = String::new();
            for a in (0..self.plan.ranks).filter(|&r| self.alive[r as usize]) {
                for b in (0..self.plan.ranks).filter(|&r| r != a) {
                    let line = self.engines[a as usize].describe_flow_with(WorldRank(b));
                    if !line.ends_with("no traffic") {
                        flow.push_str(&format!("\n  flow at {a} {line}"));
                    }
                }
            }
            return Err(format!(
                "liveness: every failure reported, the network drained, and survivors still wait\n{}{flow}",
                self.waits()
            ));
        }
        // A revocation that reached one survivor reaches all of them (SPEC §3.5).
        let reached = (0..self.plan.ranks)
            .any(|r| self.alive[r as usize] && self.checker.revoked[r as usize]);
        for rank in 0..self.plan.ranks {
            if !self.alive[rank as usize] {
                continue;
            }
            let stats = self.engines[rank as usize].flow_stats();
            if stats.queued_sends != 0 {
                return Err(format!(
                    "rank {rank} ends with {} queued sends",
                    stats.queued_sends
                ));
            }
            let other = (rank + 1) % self.plan.ranks;
            let target = self.engines[rank as usize].send_target(WORLD_CONTEXT, other);
            if (target == Err(Error::Revoked)) != self.checker.revoked[rank as usize] {
                return Err(format!(
                    "rank {rank}: send_target gives {target:?}, the ledger says revoked {}",
                    self.checker.revoked[rank as usize]
                ));
            }
            if reached && target != Err(Error::Revoked) {
                return Err(format!(
                    "the revocation reached a survivor but not survivor {rank} (send_target: {target:?})"
                ));
            }
            if self.programs[rank as usize].end() == Some(End::Revoked)
                && !self.checker.revoke_issued
            {
                return Err(format!("rank {rank} ended revoked with no revocation"));
            }
        }
        if !self.checker.revoke_issued {
            if let Some(id) = self.checker.lost_message(&self.plan) {
                return Err(format!(
                    "message {id} {:?} between survivors was never received",
                    self.plan.messages[id as usize]
                ));
            }
        }
        self.trace
            .note(&[5], || "end: every survivor done".to_string());
        Ok(())
    }
}

fn kind(packet: &Packet) -> u64 {
    match packet {
        Packet::Data { tag, .. } => 10 + *tag as u64,
        Packet::Collective { sequence, .. } => 1 << 32 | u64::from(*sequence),
        Packet::Agreement { .. } => 2 << 32,
        Packet::SyncAck { .. } => 3 << 32,
        Packet::Revoke { .. } => 4 << 32,
        Packet::Credit { bytes, .. } => 5 << 32 | bytes,
        Packet::CreditWanted { .. } => 6 << 32,
        Packet::Loan { bytes } => 8 << 32 | bytes,
        Packet::Rma { .. } => 9 << 32,
    }
}

fn describe(packet: &Packet) -> String {
    match packet {
        Packet::Data { tag, payload, .. } => match super::program::decode(payload) {
            Some((_, id)) => format!("data id {id} tag {tag} ({} bytes)", payload.len()),
            None => format!("data tag {tag} ({} bytes)", payload.len()),
        },
        Packet::Collective {
            sequence, payload, ..
        } => format!("collective #{sequence} ({} bytes)", payload.len()),
        other => format!("{other:?}"),
    }
}

/// Totals of many schedules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineTotals {
    /// Schedules run.
    pub schedules: u64,
    /// Scheduler steps.
    pub steps: u64,
    /// Packets delivered.
    pub packets: u64,
    /// Messages received.
    pub receipts: u64,
    /// Receives that found their sender failed.
    pub failed_receives: u64,
    /// Ranks killed.
    pub crashes: u64,
    /// Sends that waited for credit.
    pub delayed_sends: u64,
    /// Schedules that revoked the world.
    pub revocations: u64,
    /// Agreement decisions taken.
    pub decisions: u64,
    /// `dup` calls that returned a communicator, and that returned an error.
    pub dups: (u64, u64),
    /// `split` calls that returned their communicator, and that returned an error.
    pub splits: (u64, u64),
    /// `shrink` calls that returned.
    pub shrinks: u64,
    /// Barriers that returned `Ok`, each checked to have waited for every participant.
    pub barriers: u64,
    /// With `--detector`: hung ranks, failures decided by a majority, ranks halted.
    pub detector: (u64, u64, u64),
}

/// Runs `count` schedules derived from `base` (schedule `i` has seed
/// [`crate::schedule_seed`]`(base, i)`), stopping at the first violation.
///
/// # Errors
/// The first violation.
pub fn explore_engine(
    count: u64,
    ranks: (u32, u32),
    base: u64,
    options: Options,
) -> Result<EngineTotals, Box<EngineViolation>> {
    let mut totals = EngineTotals::default();
    for index in 0..count {
        let seed = crate::schedule_seed(base, index);
        let outcome = run_schedule(seed, ranks, false, options).map_err(|(v, _)| v)?;
        totals.schedules += 1;
        totals.steps += outcome.steps;
        totals.packets += outcome.packets;
        totals.receipts += outcome.receipts;
        totals.failed_receives += outcome.failed_receives;
        totals.crashes += outcome.crashes;
        totals.delayed_sends += outcome.delayed_sends;
        totals.revocations += u64::from(outcome.revoked);
        totals.decisions += outcome.decisions;
        totals.dups.0 += outcome.dups.0;
        totals.dups.1 += outcome.dups.1;
        totals.splits.0 += outcome.splits.0;
        totals.splits.1 += outcome.splits.1;
        totals.shrinks += outcome.shrinks;
        totals.barriers += outcome.barriers;
        totals.detector.0 += outcome.detector.0;
        totals.detector.1 += outcome.detector.1;
        totals.detector.2 += outcome.detector.2;
    }
    Ok(totals)
}

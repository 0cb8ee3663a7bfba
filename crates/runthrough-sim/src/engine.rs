// SPDX-License-Identifier: MIT OR Apache-2.0
//! The event loop: ranks running [`AgreementSeries`] over a seeded network with crashes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough_core::agreement::Message;
use runthrough_core::engine::HostGroups;
use runthrough_core::{AgreementSeries, Contribution, Participants, Rank, RankSet};

use crate::checker::Checker;
use crate::schedule::{InFlight, Schedule, Trigger};

/// A property of semantics §2.1 that a run broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The schedule's seed.
    pub seed: u64,
    /// The step (event number) at which it was seen.
    pub step: u64,
    /// The simulated time.
    pub time: u64,
    /// What went wrong.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {}: step {} (t={}): {}",
            self.seed, self.step, self.time, self.what
        )
    }
}

/// What a run that broke nothing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Events processed.
    pub steps: u64,
    /// Messages sent.
    pub messages: u64,
    /// Ranks that crashed.
    pub crashed: RankSet,
    /// The G after the last call, at the survivors.
    pub final_g: RankSet,
    /// The trace, when asked for (one line per event).
    pub trace: Vec<String>,
}

#[derive(Debug)]
enum Event {
    Start {
        rank: Rank,
        call: u64,
    },
    Deliver {
        from: Rank,
        to: Rank,
        seq: u64,
        message: Message,
    },
    Crash {
        rank: Rank,
    },
    Detect {
        observer: Rank,
        dead: Rank,
    },
}

impl Event {
    fn is_fault(&self) -> bool {
        matches!(self, Event::Crash { .. } | Event::Detect { .. })
    }
}

struct SimRank {
    series: AgreementSeries,
    alive: bool,
    trigger: Option<(Trigger, InFlight)>,
    detected: RankSet,
    /// G agreed so far (after the calls decided here).
    g: RankSet,
    /// Calls entered, and calls decided (each counts 0, 1, ...).
    entered: u64,
    decided: u64,
    /// Messages sent per (call, kind), for `AfterSends`.
    sent: BTreeMap<(u64, &'static str), u32>,
    sent_in_call: BTreeMap<u64, u32>,
}

/// One run of one schedule.
pub struct Sim {
    schedule: Schedule,
    rng: ChaCha8Rng,
    time: u64,
    order: u64,
    step: u64,
    queue: BTreeMap<(u64, u64), Event>,
    /// Latest delivery time scheduled on each link (per-link FIFO).
    links: BTreeMap<(Rank, Rank), u64>,
    ranks: Vec<SimRank>,
    checker: Checker,
    messages: u64,
    trace: Option<Vec<String>>,
    /// Step of the last crash or detection, and how many are still queued.
    last_fault_step: u64,
    faults_queued: usize,
}

/// Steps allowed after the last fault for every survivor to decide every call.
pub fn liveness_budget(schedule: &Schedule) -> u64 {
    20_000 + 400 * schedule.ranks as u64 * schedule.calls
}

impl Sim {
    /// A simulation of `schedule`; with `trace`, every event is written down.
    pub fn new(schedule: Schedule, trace: bool) -> Sim {
        let n = schedule.ranks;
        let mut ranks: Vec<SimRank> = (0..n)
            .map(|r| SimRank {
                series: AgreementSeries::new(r),
                alive: true,
                trigger: None,
                detected: RankSet::new(),
                g: RankSet::new(),
                entered: 0,
                decided: 0,
                sent: BTreeMap::new(),
                sent_in_call: BTreeMap::new(),
            })
            .collect();
        for crash in &schedule.crashes {
            ranks[crash.rank as usize].trigger = Some((crash.trigger.clone(), crash.in_flight));
        }
        let rng = ChaCha8Rng::seed_from_u64(schedule.seed ^ 0x005E_ED0F_DE1A_u64);
        let mut sim = Sim {
            rng,
            time: 0,
            order: 0,
            step: 0,
            queue: BTreeMap::new(),
            links: BTreeMap::new(),
            ranks,
            checker: Checker::new(),
            messages: 0,
            trace: trace.then(Vec::new),
            last_fault_step: 0,
            faults_queued: 0,
            schedule,
        };
        for r in 0..n {
            let at = sim.schedule.start_times[r as usize];
            sim.push(at, Event::Start { rank: r, call: 0 });
        }
        let timed: Vec<(Rank, u64)> = sim
            .schedule
            .crashes
            .iter()
            .filter_map(|c| match c.trigger {
                Trigger::At(t) => Some((c.rank, t)),
                _ => None,
            })
            .collect();
        for (rank, at) in timed {
            sim.push(at, Event::Crash { rank });
        }
        sim
    }

    fn push(&mut self, at: u64, event: Event) {
        if event.is_fault() {
            self.faults_queued += 1;
        }
        self.order += 1;
        self.queue.insert((at, self.order), event);
    }

    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(trace) = &mut self.trace {
            let text = line();
            trace.push(format!("t={:<6} #{:<5} {text}", self.time, self.step));
        }
    }

    fn violation(&self, what: String) -> Violation {
        Violation {
            seed: self.schedule.seed,
            step: self.step,
            time: self.time,
            what,
        }
    }

    /// Runs to the end; `Err` on the first violated property.
    pub fn run(mut self) -> Result<Outcome, (Violation, Vec<String>)> {
        match self.run_inner() {
            Ok(()) => {
                let survivor = self.ranks.iter().find(|r| r.alive).expect("a survivor");
                Ok(Outcome {
                    steps: self.step,
                    messages: self.messages,
                    crashed: (0..self.schedule.ranks)
                        .filter(|&r| !self.ranks[r as usize].alive)
                        .collect(),
                    final_g: survivor.g.clone(),
                    trace: self.trace.unwrap_or_default(),
                })
            }
            Err(v) => {
                let trace = self.trace.take().unwrap_or_default();
                Err((v, trace))
            }
        }
    }

    fn run_inner(&mut self) -> Result<(), Violation> {
        let budget = liveness_budget(&self.schedule);
        while let Some(((time, _), event)) = self.queue.pop_first() {
            self.time = time;
            self.step += 1;
            if event.is_fault() {
                self.faults_queued -= 1;
                self.last_fault_step = self.step;
            }
            self.handle(event)?;
            if self.faults_queued == 0 && self.step - self.last_fault_step > budget {
                return Err(self.violation(format!(
                    "liveness: {budget} steps after the last fault, survivors {:?} have not all decided",
                    self.undecided()
                )));
            }
        }
        let undecided = self.undecided();
        if !undecided.is_empty() {
            return Err(self.violation(format!(
                "liveness: nothing left to happen, survivors {undecided:?} (rank, calls decided) have not decided all {} calls",
                self.schedule.calls
            )));
        }
        Ok(())
    }

    fn undecided(&self) -> Vec<(Rank, u64)> {
        self.ranks
            .iter()
            .enumerate()
            .filter(|(_, r)| r.alive && r.decided < self.schedule.calls)
            .map(|(i, r)| (i as Rank, r.decided))
            .collect()
    }

    fn handle(&mut self, event: Event) -> Result<(), Violation> {
        match event {
            Event::Start { rank, call } => {
                if !self.ranks[rank as usize].alive {
                    return Ok(());
                }
                if matches!(self.ranks[rank as usize].trigger, Some((Trigger::BeforeStart { call: c }, _)) if c == call)
                {
                    self.note(|| format!("rank {rank} crashes before entering call {call}"));
                    self.crash(rank);
                    return Ok(());
                }
                let n = self.schedule.ranks;
                let sim_rank = &mut self.ranks[rank as usize];
                let mut participants = Participants::new(n, &sim_rank.g);
                if self.schedule.coordinated_only {
                    participants = participants.coordinated_only();
                }
                if let Some(hosts) = &self.schedule.hosts {
                    let classes: Vec<u32> =
                        participants.ranks().map(|r| hosts[r as usize]).collect();
                    let groups = HostGroups::new(&classes).map(Arc::new);
                    participants = participants.with_hosts(groups);
                }
                let participants = Arc::new(participants);
                // L: G plus the failures this rank acknowledged with validate_local at some
                // point (a random subset of what its detector knows).
                let mut acknowledged = sim_rank.g.clone();
                let detected: Vec<Rank> = sim_rank.detected.iter().collect();
                for d in detected {
                    if self.rng.gen_bool(0.7) {
                        acknowledged.insert(d);
                    }
                }
                let flag = if self.rng.gen_bool(0.5) {
                    u32::MAX
                } else {
                    !(1u32 << self.rng.gen_range(0..32)) & !(1u32 << self.rng.gen_range(0..32))
                };
                let sim_rank = &mut self.ranks[rank as usize];
                let contribution = Contribution {
                    known_failed: sim_rank.detected.clone(),
                    acknowledged,
                    flag,
                };
                let seq = sim_rank
                    .series
                    .start(participants.clone(), contribution.clone());
                sim_rank.entered += 1;
                if seq != call {
                    return Err(self
                        .violation(format!("rank {rank}: series numbered call {call} as {seq}")));
                }
                self.checker
                    .on_start(rank, call, &participants, &contribution)
                    .map_err(|e| self.violation(e))?;
                self.note(|| {
                    format!(
                        "rank {rank} enters call {call} knowing {:?} flag {flag:#x}",
                        contribution.known_failed.as_slice()
                    )
                });
                self.after_input(rank, None)
            }
            Event::Deliver {
                from,
                to,
                seq,
                message,
            } => {
                if !self.ranks[to as usize].alive {
                    return Ok(());
                }
                self.note(|| format!("{from}->{to} c{seq} {}", describe(&message)));
                self.ranks[to as usize]
                    .series
                    .handle_message(from, seq, message);
                self.after_input(to, None)
            }
            Event::Crash { rank } => {
                if self.ranks[rank as usize].alive {
                    self.note(|| format!("rank {rank} crashes"));
                    self.crash(rank);
                }
                Ok(())
            }
            Event::Detect { observer, dead } => {
                if !self.ranks[observer as usize].alive {
                    return Ok(());
                }
                self.note(|| format!("rank {observer} detects {dead}"));
                let sim_rank = &mut self.ranks[observer as usize];
                sim_rank.detected.insert(dead);
                sim_rank.series.handle_failure(dead);
                let limit = match sim_rank.trigger {
                    Some((Trigger::OnDetect { dead: d, sends }, _)) if d == dead => Some(sends),
                    _ => None,
                };
                self.after_input(observer, limit)?;
                if limit.is_some() && self.ranks[observer as usize].alive {
                    self.note(|| format!("rank {observer} crashes while repairing"));
                    self.crash(observer);
                }
                Ok(())
            }
        }
    }

    /// Sends what `rank` has to send (crashing it mid-batch if its trigger says so, or after
    /// `limit` sends), then records its new decisions.
    fn after_input(&mut self, rank: Rank, limit: Option<u32>) -> Result<(), Violation> {
        let mut sends = 0;
        loop {
            if limit == Some(sends) {
                return Ok(()); // the caller crashes it
            }
            let Some((to, seq, message)) = self.ranks[rank as usize].series.poll_transmit() else {
                break;
            };
            sends += 1;
            self.send(rank, to, seq, message.clone());
            let sim_rank = &mut self.ranks[rank as usize];
            let kind = message.kind();
            let of_kind = sim_rank.sent.entry((seq, kind)).or_insert(0);
            *of_kind += 1;
            let of_kind = *of_kind;
            let in_call = sim_rank.sent_in_call.entry(seq).or_insert(0);
            *in_call += 1;
            let in_call = *in_call;
            if let Some((
                Trigger::AfterSends {
                    call,
                    kind: wanted,
                    count,
                },
                _,
            )) = &sim_rank.trigger
            {
                let reached = match wanted {
                    Some(w) => *w == kind && of_kind >= *count,
                    None => in_call >= *count,
                };
                if *call == seq && reached {
                    self.note(|| {
                        format!("rank {rank} crashes after sending a {kind} of call {seq}")
                    });
                    self.crash(rank);
                    return Ok(());
                }
            }
        }
        self.record_decisions(rank)
    }

    fn send(&mut self, from: Rank, to: Rank, seq: u64, message: Message) {
        self.messages += 1;
        let mut delay = self.rng.gen_range(1..=self.schedule.max_delay);
        if self.schedule.slow_one_in > 0 && self.rng.gen_range(0..self.schedule.slow_one_in) == 0 {
            delay += self.rng.gen_range(0..=self.schedule.slow_delay);
        }
        let link = self.links.entry((from, to)).or_insert(0);
        let at = (self.time + delay).max(*link);
        *link = at;
        self.push(
            at,
            Event::Deliver {
                from,
                to,
                seq,
                message,
            },
        );
    }

    fn record_decisions(&mut self, rank: Rank) -> Result<(), Violation> {
        // SPEC §2.1 bounded memory: a series keeps at most two calls.
        let live = self.ranks[rank as usize].series.live_calls();
        if live > 2 {
            return Err(self.violation(format!("rank {rank} keeps {live} calls alive")));
        }
        loop {
            let sim_rank = &self.ranks[rank as usize];
            let call = sim_rank.decided;
            if call >= sim_rank.entered {
                return Ok(());
            }
            let Some(decision) = sim_rank.series.decision(call).cloned() else {
                return Ok(());
            };
            let old_g = sim_rank.g.clone();
            self.checker
                .on_decide(rank, call, &decision, &old_g)
                .map_err(|e| self.violation(e))?;
            self.note(|| {
                format!(
                    "rank {rank} decides call {call}: failed {:?} flag {:#x}{}",
                    decision.failed.as_slice(),
                    decision.flag,
                    if decision.unacknowledged_failure {
                        " (unacknowledged)"
                    } else {
                        ""
                    }
                )
            });
            let sim_rank = &mut self.ranks[rank as usize];
            sim_rank.g.union_with(&decision.failed);
            sim_rank.decided += 1;
            if matches!(sim_rank.trigger, Some((Trigger::AfterDecide { call: c }, _)) if c == call)
            {
                self.note(|| format!("rank {rank} crashes after deciding call {call}"));
                self.crash(rank);
                return Ok(());
            }
            if call + 1 < self.schedule.calls {
                let gap = self.rng.gen_range(0..=self.schedule.call_gap);
                self.push(
                    self.time + gap,
                    Event::Start {
                        rank,
                        call: call + 1,
                    },
                );
            }
        }
    }

    fn crash(&mut self, rank: Rank) {
        let in_flight = self.ranks[rank as usize]
            .trigger
            .as_ref()
            .map_or(InFlight::Random, |(_, f)| *f);
        self.ranks[rank as usize].alive = false;
        self.last_fault_step = self.step;
        self.checker.on_crash(rank);
        // Messages in flight from it: on each link, a prefix survives.
        let mut keep: BTreeMap<Rank, bool> = BTreeMap::new();
        let mut lost = Vec::new();
        for (key, event) in &self.queue {
            if let Event::Deliver { from, to, .. } = event {
                if *from == rank {
                    let still = keep.entry(*to).or_insert(true);
                    if *still {
                        *still = match in_flight {
                            InFlight::Delivered => true,
                            InFlight::Lost => false,
                            InFlight::Random => self.rng.gen_bool(0.6),
                        };
                    }
                    if !*still {
                        lost.push(*key);
                    }
                }
            }
        }
        for key in &lost {
            self.queue.remove(key);
        }
        if !lost.is_empty() {
            let count = lost.len();
            self.note(|| format!("{count} messages of rank {rank} in flight are lost"));
        }
        let (low, high) = self.schedule.detect_delay;
        for observer in 0..self.schedule.ranks {
            if observer != rank && self.ranks[observer as usize].alive {
                let at = self.time + self.rng.gen_range(low..=high);
                self.push(
                    at,
                    Event::Detect {
                        observer,
                        dead: rank,
                    },
                );
            }
        }
    }
}

/// One line describing a message, for traces.
pub fn describe(message: &Message) -> String {
    let mut s = String::new();
    match message {
        Message::Prepare { ballot } => {
            let _ = write!(s, "prepare b{ballot}");
        }
        Message::Promise { ballot, summary } => {
            let _ = write!(
                s,
                "promise b{ballot} known{:?} nc{:?} flag {:#x}",
                summary.known_failed.as_slice(),
                summary.non_contributors.as_slice(),
                summary.flag
            );
            if let Some((b, v)) = &summary.accepted {
                let _ = write!(s, " accepted {b} {:?}", v.failed.as_slice());
            }
        }
        Message::Accept { ballot, value } => {
            let _ = write!(s, "accept b{ballot} {:?}", value.failed.as_slice());
        }
        Message::Accepted { ballot } => {
            let _ = write!(s, "accepted b{ballot}");
        }
        Message::Commit { value } => {
            let _ = write!(s, "commit {:?}", value.failed.as_slice());
        }
        Message::Gather { round, aggregate } => {
            let _ = write!(
                s,
                "gather r{round} known{:?} flag {:#x}",
                aggregate.known_failed.as_slice(),
                aggregate.flag
            );
        }
        Message::Hold { round } => {
            let _ = write!(s, "hold r{round}");
        }
    }
    s
}

/// Runs `schedule`; returns its outcome or the violation with the trace so far.
pub fn run(schedule: Schedule, trace: bool) -> Result<Outcome, (Violation, Vec<String>)> {
    Sim::new(schedule, trace).run()
}

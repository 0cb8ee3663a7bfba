// SPDX-License-Identifier: MIT OR Apache-2.0
//! The failure detector under virtual time: every rank runs the runtime's own
//! [`runthrough_core::detector::Detector`] over a simulated network, with crashes, hung ranks,
//! a network partition and slow links, every choice drawn from one seed.
//!
//! # The model
//! - `n` ranks; each pair is connected from the start or, when a launcher confirms deaths,
//!   connects on first use (a vote or a notice sent to it) unless it is a pair of the sparse
//!   overlay (ranks 1, 2, 4, … places apart), as the socket transport does. Connected ranks
//!   send each other a heartbeat every period; every frame counts as hearing its sender.
//! - Links are FIFO with a random delay; a slow link's delays reach half the heartbeat
//!   timeout.
//! - Faults: a *crash* ends a process (its connections close, which its peers see); a *hang*
//!   stops a process without closing anything (it sends and reads nothing more); a
//!   *partition* cuts the job in two sides for good (nothing crosses, nothing closes).
//! - A launcher, when the schedule has one, confirms every process that ends to every rank,
//!   and kills a rank reported as suspected (as rtrun does); without one (PMI launchers), only
//!   the majority rule puts a live rank in the output.
//! - A rank that halts (fenced, or without a majority) ends its process.
//!
//! # The checks (docs/src/semantics.md §1)
//! - **Votes are real**: a rank that decides a failure by majority holds no more votes than the
//!   ranks that really fenced the suspect, and they are more than half of the ranks it
//!   believes alive.
//! - **No decision on a minority side**: at the end, no running rank has another running
//!   rank in its output (two sides of a partition never both go on); without a launcher, a
//!   rank on the smaller side of a partition (or on either side of an even one) halts within
//!   twice the heartbeat timeout plus two periods of the cut when every pair was connected
//!   (one timeout to fence the silent side, one without a majority), and within one timeout
//!   and one period more when some were not: a rank connects to a peer to send it a late
//!   vote a period after the first fence, and hears nothing on that connection for a timeout
//!   before it fences that peer too.
//! - **A hung rank is fenced in time**: every running rank connected to it has fenced it
//!   within the heartbeat timeout plus one period (plus the largest link delay) of the hang.
//! - **Accuracy**: before a partition, no rank is fenced while it runs (a crashed, hung or
//!   halted rank only).
//! - **Completeness**: at the end, every running rank has every crashed, hung or halted rank
//!   in its output.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough_core::detector::{Action, Detector, Time};
use runthrough_core::fence::Reason;
use runthrough_core::WorldRank;

use crate::schedule_seed;

/// Heartbeat period of the simulated ranks.
pub const PERIOD: Duration = Duration::from_millis(100);
/// Heartbeat timeout of the simulated ranks.
pub const TIMEOUT: Duration = Duration::from_millis(1000);

/// One fault of a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The process ends at `at`.
    Crash {
        /// The rank.
        rank: u32,
        /// When.
        at: Time,
    },
    /// The process stops at `at` without ending.
    Hang {
        /// The rank.
        rank: u32,
        /// When.
        at: Time,
    },
    /// From `at` on, nothing crosses between `side` and the other ranks.
    Partition {
        /// One side.
        side: Vec<u32>,
        /// When.
        at: Time,
    },
}

/// One schedule: the job, its links and its faults.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The seed it was drawn from.
    pub seed: u64,
    /// Ranks.
    pub n: u32,
    /// A launcher confirms ends and kills suspects.
    pub launcher: bool,
    /// Per pair (i < j): connected from the start.
    pub connected: Vec<Vec<bool>>,
    /// Per pair (i < j): slow.
    pub slow: Vec<Vec<bool>>,
    /// The faults.
    pub faults: Vec<Fault>,
}

impl Schedule {
    /// The schedule of `seed`, with `ranks.0..=ranks.1` ranks.
    pub fn random(seed: u64, ranks: (u32, u32)) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(ranks.0.max(2)..=ranks.1.max(2));
        let launcher = rng.gen_bool(0.4);
        let partition = n >= 3 && rng.gen_bool(0.3);
        // As the socket transport: connections on first use only where a death is confirmed
        // without one (a launcher) on one host, and then a sparse overlay connected at start.
        // A partition cuts hosts apart, between which every pair is connected at start.
        let on_demand = launcher && !partition && rng.gen_bool(0.6);
        let overlay = |i: usize, j: usize| {
            let d = (j + n as usize - i) % n as usize;
            let mut step = 1;
            while step < n as usize {
                if d == step || d == n as usize - step {
                    return true;
                }
                step *= 2;
            }
            false
        };
        let mut connected = vec![vec![true; n as usize]; n as usize];
        let mut slow = vec![vec![false; n as usize]; n as usize];
        for i in 0..n as usize {
            for j in i + 1..n as usize {
                let c = !on_demand || overlay(i, j) || rng.gen_bool(0.2);
                connected[i][j] = c;
                connected[j][i] = c;
                let s = rng.gen_bool(0.1);
                slow[i][j] = s;
                slow[j][i] = s;
            }
        }
        let mut faults = Vec::new();
        let mut struck = vec![false; n as usize];
        if partition {
            let size = rng.gen_range(1..n);
            let mut ranks: Vec<u32> = (0..n).collect();
            for i in 0..ranks.len() {
                let j = rng.gen_range(i..ranks.len());
                ranks.swap(i, j);
            }
            let mut side = ranks[..size as usize].to_vec();
            side.sort_unstable();
            faults.push(Fault::Partition {
                side,
                at: Duration::from_millis(rng.gen_range(0..3000)),
            });
        }
        let count = rng.gen_range(0..=(n / 2).min(4));
        for _ in 0..count {
            let rank = rng.gen_range(0..n);
            if std::mem::replace(&mut struck[rank as usize], true) {
                continue;
            }
            let at = Duration::from_millis(rng.gen_range(0..4000));
            faults.push(if rng.gen_bool(0.5) {
                Fault::Crash { rank, at }
            } else {
                Fault::Hang { rank, at }
            });
        }
        Schedule {
            seed,
            n,
            launcher,
            connected,
            slow,
            faults,
        }
    }

    fn last_fault(&self) -> Time {
        self.faults
            .iter()
            .map(|f| match f {
                Fault::Crash { at, .. } | Fault::Hang { at, .. } | Fault::Partition { at, .. } => {
                    *at
                }
            })
            .max()
            .unwrap_or_default()
    }
}

/// What one simulated rank's detector hears from another (both simulators' model of the
/// socket transport's frames).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Frame {
    Heartbeat,
    /// The sender fenced this rank.
    Vote(u32),
    /// This rank is in the sender's output.
    Notice(u32),
    /// The sender's end of the connection closed (its process ended, or it fenced the
    /// receiver).
    Closed,
    /// From the launcher, not a peer: this rank's process ended.
    Confirm(u32),
}

/// Feeds `frame` from `from` to the detector `d` at `now`, as the socket transport does: a
/// rank it fenced is not listened to (a launcher's confirmation is not the sender's word),
/// and every frame of a peer counts as hearing it.
pub(crate) fn receive(d: &mut Detector, from: u32, frame: Frame, now: Time) {
    let sender = WorldRank(from);
    if !matches!(frame, Frame::Confirm(_)) && d.fence().is_fenced(sender) {
        return;
    }
    match frame {
        Frame::Heartbeat => d.heard(sender, now),
        Frame::Vote(rank) => {
            d.heard(sender, now);
            d.vote(sender, WorldRank(rank), now);
        }
        Frame::Notice(rank) => {
            d.heard(sender, now);
            d.decided_by_peer(sender, WorldRank(rank), now);
        }
        Frame::Closed => d.suspect(sender, now),
        Frame::Confirm(rank) => d.confirm(WorldRank(rank), now),
    }
}

/// What rank `r` of `n` sends when its detector `d` fenced `peer` (`Action::Fence`), in
/// order: its vote to every other rank it has not fenced, then to the suspect the news of
/// its own fence and the close of the connection.
pub(crate) fn fence_frames(d: &Detector, r: u32, peer: u32, n: u32) -> Vec<(u32, Frame)> {
    let mut frames: Vec<(u32, Frame)> = (0..n)
        .filter(|&o| o != r && o != peer && !d.fence().is_fenced(WorldRank(o)))
        .map(|o| (o, Frame::Vote(peer)))
        .collect();
    frames.push((peer, Frame::Vote(peer)));
    frames.push((peer, Frame::Closed));
    frames
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Fault(usize),
    Beat(u32),
    Timer(u32, u64),
    Deliver {
        from: u32,
        to: u32,
        frame: Frame,
    },
    /// The launcher tells `to` that `rank`'s process ended.
    Confirm {
        to: u32,
        rank: u32,
    },
    /// The launcher kills a suspect.
    Kill(u32),
    /// Checks that the ranks connected to a hung rank fenced it.
    CheckHung(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    Running,
    Hung,
    Ended,
}

/// What one schedule did.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    /// Ranks.
    pub ranks: u32,
    /// Events handled.
    pub events: u64,
    /// Frames delivered.
    pub frames: u64,
    /// Ranks fenced (each fencing at each rank).
    pub fences: u64,
    /// Failures decided by a majority of votes.
    pub majority_decisions: u64,
    /// Ranks that halted.
    pub halts: u64,
    /// Crashes, hangs and partitions.
    pub faults: (u64, u64, u64),
    /// The trace, when asked for.
    pub trace: Vec<String>,
}

/// A broken rule, with the seed that reproduces it.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The schedule's seed.
    pub seed: u64,
    /// What broke.
    pub what: String,
    /// The command that replays it.
    pub replay: String,
    /// The trace up to it, when asked for.
    pub trace: Vec<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seed {}: {}", self.seed, self.what)
    }
}

struct Sim<'a> {
    s: &'a Schedule,
    rng: ChaCha8Rng,
    now: Time,
    seq: u64,
    queue: BinaryHeap<Reverse<(Time, u64, Event)>>,
    detectors: Vec<Detector>,
    life: Vec<Life>,
    connected: Vec<Vec<bool>>,
    /// Per link: the time its last frame arrives (FIFO).
    last_arrival: Vec<Vec<Time>>,
    /// Per rank: its timer's generation.
    timer: Vec<u64>,
    /// fenced_by[y][r]: rank r fenced y (at some time).
    fenced_by: Vec<Vec<bool>>,
    halted_at: Vec<Option<Time>>,
    killed: Vec<bool>,
    cut: Option<(Vec<bool>, Time)>,
    /// Per hung rank: the ranks connected to it when it hung.
    hung_peers: Vec<Vec<bool>>,
    outcome: Outcome,
    trace: bool,
}

fn max_delay(slow: bool) -> Time {
    if slow {
        TIMEOUT / 2
    } else {
        Duration::from_millis(5)
    }
}

impl<'a> Sim<'a> {
    fn new(s: &'a Schedule, trace: bool) -> Self {
        let n = s.n as usize;
        let lag = Duration::ZERO;
        Sim {
            s,
            rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0xDE7E_C70E),
            now: Duration::ZERO,
            seq: 0,
            queue: BinaryHeap::new(),
            detectors: (0..s.n)
                .map(|r| Detector::new(WorldRank(r), s.n, s.n, PERIOD, TIMEOUT, lag))
                .collect(),
            life: vec![Life::Running; n],
            connected: s.connected.clone(),
            last_arrival: vec![vec![Duration::ZERO; n]; n],
            timer: vec![0; n],
            fenced_by: vec![vec![false; n]; n],
            halted_at: vec![None; n],
            killed: vec![false; n],
            cut: None,
            hung_peers: vec![Vec::new(); n],
            outcome: Outcome {
                ranks: s.n,
                ..Outcome::default()
            },
            trace,
        }
    }

    fn push(&mut self, at: Time, event: Event) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, event)));
    }

    fn log(&mut self, line: impl FnOnce() -> String) {
        if self.trace {
            let line = format!("{:>8.3}s {}", self.now.as_secs_f64(), line());
            self.outcome.trace.push(line);
        }
    }

    fn violation(&self, what: String) -> Violation {
        Violation {
            seed: self.s.seed,
            what: format!("at {:.3}s: {what}", self.now.as_secs_f64()),
            replay: String::new(),
            trace: Vec::new(),
        }
    }

    fn crosses(&self, a: u32, b: u32) -> bool {
        self.cut
            .as_ref()
            .is_some_and(|(side, _)| side[a as usize] != side[b as usize])
    }

    /// Sends `frame` from `from` to `to` (connecting them if need be). Nothing goes to a
    /// rank the sender fenced but the news of it and the close; a process that does not run
    /// sends nothing but the closes its kernel makes.
    fn send(&mut self, from: u32, to: u32, frame: Frame) {
        let closing = frame == Frame::Closed || frame == Frame::Vote(to);
        if from == to
            || (frame != Frame::Closed && self.life[from as usize] != Life::Running)
            || (!closing
                && self.detectors[from as usize]
                    .fence()
                    .is_fenced(WorldRank(to)))
        {
            return;
        }
        let (f, t) = (from as usize, to as usize);
        if !self.connected[f][t] {
            self.connected[f][t] = true;
            self.connected[t][f] = true;
            let now = self.now;
            self.detectors[f].watch(WorldRank(to), now);
            if self.life[t] == Life::Running {
                self.detectors[t].watch(WorldRank(from), now);
                self.schedule_timer(to);
            }
        }
        let delay = self
            .rng
            .gen_range(Duration::from_micros(200)..=max_delay(self.s.slow[f][t]));
        let at = (self.now + delay).max(self.last_arrival[f][t]);
        self.last_arrival[f][t] = at;
        self.push(at, Event::Deliver { from, to, frame });
    }

    fn schedule_timer(&mut self, r: u32) {
        if let Some(at) = self.detectors[r as usize].poll_timeout() {
            self.timer[r as usize] += 1;
            let generation = self.timer[r as usize];
            self.push(at.max(self.now), Event::Timer(r, generation));
        }
    }

    /// The process of `r` ends (crash, kill, halt): its peers see their connections close,
    /// the launcher confirms it.
    fn end(&mut self, r: u32) {
        if self.life[r as usize] == Life::Ended {
            return;
        }
        self.life[r as usize] = Life::Ended;
        for peer in 0..self.s.n {
            if peer != r && self.connected[r as usize][peer as usize] {
                // The kernel closes the connection whether the process ran or hung.
                self.send(r, peer, Frame::Closed);
            }
        }
        if self.s.launcher {
            for to in 0..self.s.n {
                if to != r {
                    let at = self.now + Duration::from_millis(self.rng.gen_range(1..20));
                    self.push(at, Event::Confirm { to, rank: r });
                }
            }
        }
    }

    fn carry_out(&mut self, r: u32, silent: bool) -> Result<(), Violation> {
        let actions = self.detectors[r as usize].take_actions();
        for action in actions {
            self.log(|| format!("rank {r}: {action:?}"));
            match action {
                Action::HaltFenced { .. } | Action::NoMajority { .. } => {
                    self.outcome.halts += 1;
                    self.halted_at[r as usize] = Some(self.now);
                    self.end(r);
                    return Ok(());
                }
                Action::Fence { peer } => {
                    self.outcome.fences += 1;
                    if self.cut.is_none() && self.life[peer.index()] == Life::Running {
                        return Err(self.violation(format!(
                            "rank {r} fenced rank {peer}, which runs, and no partition struck"
                        )));
                    }
                    self.fenced_by[peer.index()][r as usize] = true;
                    // The peers without a connection get the vote a period later; the
                    // suspect hears only on a connection it has.
                    let mut later = Vec::new();
                    let frames = fence_frames(&self.detectors[r as usize], r, peer.0, self.s.n);
                    for (to, frame) in frames {
                        match (self.connected[r as usize][to as usize], to == peer.0) {
                            (true, _) => self.send(r, to, frame),
                            (false, false) => later.push(WorldRank(to)),
                            (false, true) => {}
                        }
                    }
                    let now = self.now;
                    self.detectors[r as usize].defer_vote(peer, later, now);
                    if silent && self.s.launcher {
                        let at = self.now + Duration::from_millis(self.rng.gen_range(1..20));
                        self.push(at, Event::Kill(peer.0));
                    }
                }
                Action::LateVote { suspect, to } => {
                    for other in to {
                        self.send(r, other.0, Frame::Vote(suspect.0));
                    }
                }
                Action::Failed {
                    rank,
                    reason,
                    announce,
                } => {
                    if let Reason::Majority { voters, alive } = reason {
                        self.outcome.majority_decisions += 1;
                        let fencers = self.fenced_by[rank.index()].iter().filter(|&&f| f).count();
                        if voters as usize > fencers || 2 * voters <= alive {
                            return Err(self.violation(format!(
                                "rank {r} decided rank {rank} failed with {voters} votes of \
                                 {alive} alive, but only {fencers} ranks fenced it"
                            )));
                        }
                    }
                    if announce {
                        for other in 0..self.s.n {
                            if other != rank.0 && other != r {
                                self.send(r, other, Frame::Notice(rank.0));
                            }
                        }
                    }
                }
                Action::Close { .. } => {}
            }
        }
        self.schedule_timer(r);
        Ok(())
    }

    fn handle(&mut self, event: Event) -> Result<(), Violation> {
        match event {
            Event::Fault(i) => match self.s.faults[i].clone() {
                Fault::Crash { rank, .. } => {
                    self.outcome.faults.0 += 1;
                    self.log(|| format!("rank {rank} crashes"));
                    self.end(rank);
                }
                Fault::Hang { rank, .. } => {
                    self.outcome.faults.1 += 1;
                    if self.life[rank as usize] == Life::Running {
                        self.log(|| format!("rank {rank} hangs"));
                        self.life[rank as usize] = Life::Hung;
                        self.hung_peers[rank as usize] = self.connected[rank as usize].clone();
                        let at = self.now + TIMEOUT + PERIOD + max_delay(true);
                        self.push(at, Event::CheckHung(rank));
                    }
                }
                Fault::Partition { side, .. } => {
                    self.outcome.faults.2 += 1;
                    let mut mask = vec![false; self.s.n as usize];
                    for &r in &side {
                        mask[r as usize] = true;
                    }
                    self.log(|| format!("partition {side:?} | the rest"));
                    self.cut = Some((mask, self.now));
                }
            },
            Event::Beat(r) => {
                if self.life[r as usize] != Life::Running {
                    return Ok(());
                }
                for peer in 0..self.s.n {
                    if peer != r
                        && self.connected[r as usize][peer as usize]
                        && !self.detectors[r as usize]
                            .fence()
                            .is_fenced(WorldRank(peer))
                    {
                        self.send(r, peer, Frame::Heartbeat);
                    }
                }
                self.push(self.now + PERIOD, Event::Beat(r));
            }
            Event::Timer(r, generation) => {
                if self.life[r as usize] != Life::Running || self.timer[r as usize] != generation {
                    return Ok(());
                }
                let now = self.now;
                self.detectors[r as usize].handle_timeout(now);
                if !self.detectors[r as usize].stands_aside()
                    && self.detectors[r as usize]
                        .poll_timeout()
                        .is_some_and(|at| at <= now)
                {
                    return Err(self.violation(format!(
                        "rank {r}'s detector handled its deadline and still asks for it"
                    )));
                }
                return self.carry_out(r, true);
            }
            Event::Deliver { from, to, frame } => {
                if self.life[to as usize] != Life::Running || self.crosses(from, to) {
                    return Ok(());
                }
                self.outcome.frames += 1;
                let now = self.now;
                receive(&mut self.detectors[to as usize], from, frame, now);
                return self.carry_out(to, false);
            }
            Event::Confirm { to, rank } => {
                if self.life[to as usize] == Life::Running {
                    let now = self.now;
                    receive(
                        &mut self.detectors[to as usize],
                        rank,
                        Frame::Confirm(rank),
                        now,
                    );
                    return self.carry_out(to, false);
                }
            }
            Event::Kill(r) => {
                if self.life[r as usize] != Life::Ended {
                    self.log(|| format!("the launcher kills rank {r}"));
                    self.killed[r as usize] = true;
                    self.end(r);
                }
            }
            Event::CheckHung(h) => {
                for r in 0..self.s.n {
                    if self.life[r as usize] == Life::Running
                        && self.hung_peers[h as usize][r as usize]
                        && !self.crosses(r, h)
                        && self.halted_at[r as usize].is_none()
                        && !self.detectors[r as usize].fence().is_fenced(WorldRank(h))
                        && !self.detectors[r as usize]
                            .fence()
                            .has_departed(WorldRank(h))
                    {
                        return Err(self.violation(format!(
                            "rank {h} hung a timeout and a period ago and rank {r}, connected \
                             to it, has not fenced it"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), Violation> {
        for r in 0..self.s.n {
            let at = Duration::from_millis(self.rng.gen_range(0..100));
            self.push(at, Event::Beat(r));
            for peer in 0..self.s.n {
                if peer != r && self.connected[r as usize][peer as usize] {
                    self.detectors[r as usize].watch(WorldRank(peer), Duration::ZERO);
                }
            }
            self.schedule_timer(r);
        }
        for (i, fault) in self.s.faults.iter().enumerate() {
            let at = match fault {
                Fault::Crash { at, .. } | Fault::Hang { at, .. } | Fault::Partition { at, .. } => {
                    *at
                }
            };
            self.seq += 1;
            self.queue.push(Reverse((at, self.seq, Event::Fault(i))));
        }
        let end = self.s.last_fault() + 4 * TIMEOUT + 4 * PERIOD;
        while let Some(Reverse((at, _, event))) = self.queue.pop() {
            if at > end {
                break;
            }
            self.now = at;
            self.outcome.events += 1;
            self.handle(event)?;
        }
        self.now = end;
        self.final_checks()
    }

    fn final_checks(&self) -> Result<(), Violation> {
        let n = self.s.n as usize;
        let running: Vec<u32> = (0..self.s.n)
            .filter(|&r| self.life[r as usize] == Life::Running)
            .collect();
        // No two running ranks on different sides of a decision.
        for &x in &running {
            for &y in &running {
                if x != y && self.detectors[x as usize].fence().in_output(WorldRank(y)) {
                    return Err(self.violation(format!(
                        "ranks {x} and {y} both run, and {y} is in {x}'s output"
                    )));
                }
            }
        }
        // Completeness.
        for &x in &running {
            for y in 0..self.s.n {
                if self.life[y as usize] != Life::Running
                    && !self.detectors[x as usize].fence().in_output(WorldRank(y))
                {
                    return Err(self.violation(format!(
                        "rank {y} ({:?}) is not in running rank {x}'s output",
                        self.life[y as usize]
                    )));
                }
            }
        }
        if let Some((side, at)) = &self.cut {
            // The smaller side (both sides when even) halts in time, when nothing else
            // struck the job.
            // Without a launcher: one would kill the ranks either side reports, and the
            // deaths it confirms change who has a majority.
            if self.s.faults.len() == 1 && !self.s.launcher {
                let inside = side.iter().filter(|&&s| s).count();
                for (r, &inner) in side.iter().enumerate() {
                    let mine = if inner { inside } else { n - inside };
                    if 2 * mine > n {
                        continue;
                    }
                    let on_demand = self.s.connected.iter().flatten().any(|&c| !c);
                    let mut limit = *at + 2 * TIMEOUT + 2 * PERIOD + max_delay(true);
                    if on_demand {
                        limit += TIMEOUT + PERIOD;
                    }
                    match self.halted_at[r] {
                        Some(t) if t <= limit => {}
                        Some(t) => {
                            return Err(self.violation(format!(
                                "rank {r}, on a side of {mine} of {n}, halted at {:.3}s, \
                                     after {:.3}s",
                                t.as_secs_f64(),
                                limit.as_secs_f64()
                            )))
                        }
                        None if self.killed[r] => {}
                        None => {
                            return Err(self.violation(format!(
                                "rank {r}, on a side of {mine} of {n}, did not halt"
                            )))
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Runs the schedule of `seed`; with `trace`, the outcome (or the error's replay) has the
/// trace.
pub fn run_schedule(seed: u64, ranks: (u32, u32), trace: bool) -> Result<Outcome, Violation> {
    run(&Schedule::random(seed, ranks), trace).map_err(|mut v| {
        v.replay = replay_command(seed, ranks);
        v
    })
}

/// Runs `schedule`; with `trace`, the outcome (or the violation) has the trace.
pub fn run(schedule: &Schedule, trace: bool) -> Result<Outcome, Violation> {
    let mut sim = Sim::new(schedule, trace);
    if trace {
        sim.outcome
            .trace
            .push(format!("schedule: {:?}", schedule.faults));
    }
    match sim.run() {
        Ok(()) => Ok(sim.outcome),
        Err(mut v) => {
            v.trace = std::mem::take(&mut sim.outcome.trace);
            Err(v)
        }
    }
}

/// The command that replays one schedule with its trace.
pub fn replay_command(seed: u64, ranks: (u32, u32)) -> String {
    format!(
        "cargo run --release -p runthrough-sim -- detector-replay --seed {seed} --ranks {}..{}",
        ranks.0, ranks.1
    )
}

/// Totals over many schedules.
pub type Totals = Outcome;

/// Runs `schedules` schedules (seeds derived from `base` and the index); stops at the first
/// violation.
pub fn explore(schedules: u64, ranks: (u32, u32), base: u64) -> Result<(u64, Totals), Violation> {
    let mut totals = Totals::default();
    for i in 0..schedules {
        let o = run_schedule(schedule_seed(base, i), ranks, false)?;
        totals.events += o.events;
        totals.frames += o.frames;
        totals.fences += o.fences;
        totals.majority_decisions += o.majority_decisions;
        totals.halts += o.halts;
        totals.faults.0 += o.faults.0;
        totals.faults.1 += o.faults.1;
        totals.faults.2 += o.faults.2;
    }
    Ok((schedules, totals))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(n: u32, launcher: bool, faults: Vec<Fault>) -> Schedule {
        Schedule {
            seed: 3,
            n,
            launcher,
            connected: vec![vec![true; n as usize]; n as usize],
            slow: vec![vec![false; n as usize]; n as usize],
            faults,
        }
    }

    fn ms(n: u64) -> Time {
        Duration::from_millis(n)
    }

    /// A cut of 2 | 3 without a launcher: the two halt (within twice the timeout and two
    /// periods), the three decide both failed by majority and go on. An even cut halts every
    /// rank.
    #[test]
    fn a_partition_halts_the_smaller_side_only() {
        let cut = job(
            5,
            false,
            vec![Fault::Partition {
                side: vec![0, 1],
                at: ms(500),
            }],
        );
        let outcome = run(&cut, true).unwrap_or_else(|v| panic!("{v}\n{}", v.trace.join("\n")));
        assert_eq!(outcome.halts, 2, "{}", outcome.trace.join("\n"));
        assert!(outcome.majority_decisions >= 2);
        let even = job(
            4,
            false,
            vec![Fault::Partition {
                side: vec![0, 1],
                at: ms(500),
            }],
        );
        let outcome = run(&even, false).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(outcome.halts, 4);
        assert_eq!(outcome.majority_decisions, 0);
    }

    /// A hung rank without a launcher is fenced by silence and decided by majority; with a
    /// launcher the first suspicion gets it killed and every rank learns it from the launcher.
    #[test]
    fn a_hung_rank_is_fenced_then_decided() {
        let hang = job(
            5,
            false,
            vec![Fault::Hang {
                rank: 2,
                at: ms(300),
            }],
        );
        let outcome = run(&hang, false).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(outcome.halts, 0);
        assert!(outcome.majority_decisions >= 1);
        let killed = job(
            5,
            true,
            vec![Fault::Hang {
                rank: 2,
                at: ms(300),
            }],
        );
        let outcome = run(&killed, true).unwrap_or_else(|v| panic!("{v}"));
        assert!(
            outcome
                .trace
                .iter()
                .any(|l| l.contains("the launcher kills rank 2")),
            "{}",
            outcome.trace.join("\n")
        );
    }

    /// Many schedules, every rule holds; the same seed gives the same trace.
    #[test]
    fn schedules_hold_every_rule_and_replay() {
        let (count, totals) =
            explore(300, (2, 9), 11).unwrap_or_else(|v| panic!("{v}\n{}", v.replay));
        assert_eq!(count, 300);
        assert!(totals.faults.0 > 0 && totals.faults.1 > 0 && totals.faults.2 > 0);
        assert!(totals.majority_decisions > 0 && totals.halts > 0);
        let a = run_schedule(5, (2, 9), true).unwrap();
        let b = run_schedule(5, (2, 9), true).unwrap();
        assert_eq!(a.trace, b.trace);
    }
}

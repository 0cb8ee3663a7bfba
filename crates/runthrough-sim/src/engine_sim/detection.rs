// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine simulator's failure detection with `--detector`: every rank runs the runtime's
//! own [`Detector`] (one scheduler step is a millisecond of virtual time), and an engine hears
//! of a failure only when its rank's detector decides it, as between processes. A crash closes
//! the dead rank's connections (its peers suspect it), a hang closes nothing (its peers find
//! it silent); a launcher, when the schedule has one, confirms every process that ends and
//! kills a rank suspected of silence. A rank whose detector halts it (a vote against it, no
//! majority) ends. Heartbeats are implicit: a rank hears every peer whose process runs each
//! time its detector is asked for a decision.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use runthrough_core::detector::{Action, Detector, Time};
use runthrough_core::WorldRank;

use crate::detector_sim::{fence_frames, receive, Frame};

/// Heartbeat period, in steps.
const PERIOD: u64 = 20;
/// Heartbeat timeout, in steps.
const TIMEOUT: u64 = 100;

/// What the detectors decided that the scheduler carries out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// `observer`'s engine hears that `dead` failed.
    Failed {
        /// The rank whose detector decided.
        observer: u32,
        /// The failed rank.
        dead: u32,
    },
    /// `rank`'s process ends: its detector halted it, or the launcher killed it.
    End {
        /// The rank.
        rank: u32,
    },
    /// A rule was broken: a detector fenced a rank whose process runs (nothing here makes a
    /// running rank silent: no partition, no slow link).
    Wrong(String),
}

/// Every rank's detector and the detector frames in flight.
pub struct Detection {
    detectors: Vec<Detector>,
    /// Frames in flight: (due step, from, to, frame).
    frames: Vec<(u64, u32, u32, Frame)>,
    /// Launcher kills to come: (due step, rank).
    kills: Vec<(u64, u32)>,
    launcher: bool,
    /// The process runs (neither ended nor hung).
    running: Vec<bool>,
    ended: Vec<bool>,
    /// Failures decided by a majority of votes.
    pub majority_decisions: u64,
    /// Ranks that halted.
    pub halts: u64,
}

fn time(step: u64) -> Time {
    Duration::from_millis(step)
}

impl Detection {
    /// The detectors of `n` ranks; whether a launcher confirms and kills is drawn from `rng`.
    pub fn new(n: u32, rng: &mut ChaCha8Rng) -> Self {
        let mut detectors: Vec<Detector> = (0..n)
            .map(|r| {
                Detector::new(
                    WorldRank(r),
                    n,
                    n,
                    time(PERIOD),
                    time(TIMEOUT),
                    Duration::ZERO,
                )
            })
            .collect();
        for (r, d) in detectors.iter_mut().enumerate() {
            for peer in (0..n).filter(|&p| p as usize != r) {
                d.watch(WorldRank(peer), time(0));
            }
        }
        Detection {
            detectors,
            frames: Vec::new(),
            kills: Vec::new(),
            launcher: rng.gen_bool(0.5),
            running: vec![true; n as usize],
            ended: vec![false; n as usize],
            majority_decisions: 0,
            halts: 0,
        }
    }

    fn n(&self) -> u32 {
        self.detectors.len() as u32
    }

    /// `rank` hangs at `step`: it sends and reads nothing more, and closes nothing. Its last
    /// heartbeats reached its peers then.
    pub fn hang(&mut self, rank: u32, step: u64) {
        self.running[rank as usize] = false;
        for d in &mut self.detectors {
            d.heard(WorldRank(rank), time(step));
        }
    }

    /// `rank`'s process ended at `step` (a crash, a kill, a halt): its peers see its
    /// connections close, the launcher confirms it.
    pub fn ended(&mut self, rank: u32, step: u64, rng: &mut ChaCha8Rng) {
        if std::mem::replace(&mut self.ended[rank as usize], true) {
            return;
        }
        self.running[rank as usize] = false;
        for peer in (0..self.n()).filter(|&p| p != rank) {
            let due = step + rng.gen_range(1..=5);
            self.frames.push((due, rank, peer, Frame::Closed));
            if self.launcher {
                let due = step + rng.gen_range(1..=20);
                self.frames.push((due, rank, peer, Frame::Confirm(rank)));
            }
        }
    }

    /// No frame in flight and no kill to come.
    pub fn quiet(&self) -> bool {
        self.frames.is_empty() && self.kills.is_empty()
    }

    /// The next step at which something is due, if anything is.
    pub fn next_due(&mut self, step: u64) -> Option<u64> {
        let mut deadlines = Vec::new();
        for r in 0..self.n() {
            if self.running[r as usize] {
                self.hear_running(r, step);
                if let Some(at) = self.detectors[r as usize].poll_timeout() {
                    deadlines.push((at.as_millis() as u64).max(step + 1));
                }
            }
        }
        let frames = self.frames.iter().map(|f| f.0);
        let kills = self.kills.iter().map(|k| k.0);
        frames.chain(kills).chain(deadlines).min()
    }

    /// Whether every running rank has every rank whose process does not run in its output.
    pub fn complete(&self) -> bool {
        (0..self.n())
            .filter(|&r| self.running[r as usize])
            .all(|r| {
                (0..self.n())
                    .filter(|&y| !self.running[y as usize])
                    .all(|y| self.detectors[r as usize].fence().in_output(WorldRank(y)))
            })
    }

    /// The heartbeats `r` heard up to `step`: every peer whose process runs.
    fn hear_running(&mut self, r: u32, step: u64) {
        for peer in (0..self.n()).filter(|&p| p != r && self.running[p as usize]) {
            self.detectors[r as usize].heard(WorldRank(peer), time(step));
        }
    }

    /// Delivers the frames due at `step`, runs the deadlines that came, and returns what the
    /// scheduler must carry out, in order.
    pub fn advance(&mut self, step: u64, rng: &mut ChaCha8Rng) -> Vec<Effect> {
        let mut effects = Vec::new();
        while let Some(i) = self.frames.iter().position(|f| f.0 <= step) {
            let (_, from, to, frame) = self.frames.remove(i);
            if !self.running[to as usize] {
                continue;
            }
            receive(&mut self.detectors[to as usize], from, frame, time(step));
            self.carry_out(to, step, false, rng, &mut effects);
        }
        while let Some(i) = self.kills.iter().position(|k| k.0 <= step) {
            let (_, rank) = self.kills.remove(i);
            if !self.ended[rank as usize] {
                effects.push(Effect::End { rank });
            }
        }
        for r in 0..self.n() {
            if !self.running[r as usize] {
                continue;
            }
            let due = self.detectors[r as usize]
                .poll_timeout()
                .is_some_and(|at| at <= time(step));
            if due {
                self.hear_running(r, step);
                self.detectors[r as usize].handle_timeout(time(step));
                self.carry_out(r, step, true, rng, &mut effects);
            }
        }
        effects
    }

    fn send(&mut self, step: u64, from: u32, to: u32, frame: Frame, rng: &mut ChaCha8Rng) {
        let due = step + rng.gen_range(1..=5);
        self.frames.push((due, from, to, frame));
    }

    fn carry_out(
        &mut self,
        r: u32,
        step: u64,
        silence: bool,
        rng: &mut ChaCha8Rng,
        effects: &mut Vec<Effect>,
    ) {
        for action in self.detectors[r as usize].take_actions() {
            match action {
                Action::HaltFenced { .. } | Action::NoMajority { .. } => {
                    self.halts += 1;
                    effects.push(Effect::End { rank: r });
                    return;
                }
                Action::Fence { peer } => {
                    if self.running[peer.index()] {
                        effects.push(Effect::Wrong(format!(
                            "rank {r}'s detector fenced rank {peer}, whose process runs"
                        )));
                        return;
                    }
                    for (to, frame) in
                        fence_frames(&self.detectors[r as usize], r, peer.0, self.n())
                    {
                        self.send(step, r, to, frame, rng);
                    }
                    if silence && self.launcher {
                        self.kills.push((step + rng.gen_range(1..=10), peer.0));
                    }
                }
                Action::LateVote { suspect, to } => {
                    for other in to {
                        self.send(step, r, other.0, Frame::Vote(suspect.0), rng);
                    }
                }
                Action::Failed {
                    rank,
                    reason,
                    announce,
                } => {
                    if matches!(reason, runthrough_core::fence::Reason::Majority { .. }) {
                        self.majority_decisions += 1;
                    }
                    effects.push(Effect::Failed {
                        observer: r,
                        dead: rank.0,
                    });
                    if announce {
                        for other in (0..self.n()).filter(|&o| o != r && o != rank.0) {
                            self.send(step, r, other, Frame::Notice(rank.0), rng);
                        }
                    }
                }
                Action::Close { .. } => {}
            }
        }
    }
}

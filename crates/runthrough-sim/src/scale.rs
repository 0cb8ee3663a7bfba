// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scale mode: one agreement over up to 2^20 simulated ranks under a latency model.
//!
//! Each message costs `overhead` of CPU time at its sender and again at its receiver (a rank
//! handles one thing at a time) and spends `latency` on the wire. Every rank enters at time 0.
//! With failures, `k` random ranks crash at random times during the call and every survivor's
//! detector reports each crash `detect` later. The completion time is when the last survivor
//! decides; the message depth is the longest causal chain of messages up to then.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough_core::agreement::Message;
use runthrough_core::{Agreement, Contribution, Participants, Rank, RankSet};

/// The latency model and fault load of scale mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleConfig {
    /// Wire latency of one message, in simulated nanoseconds.
    pub latency_ns: u64,
    /// CPU time to send or to receive one message, in simulated nanoseconds.
    pub overhead_ns: u64,
    /// Time from a crash to its report at every survivor's detector.
    pub detect_ns: u64,
    /// The seed choosing which ranks fail and when.
    pub seed: u64,
    /// Whether rank 0 (the first coordinator) is among the failures.
    pub root_fails: bool,
}

impl Default for ScaleConfig {
    fn default() -> Self {
        ScaleConfig {
            latency_ns: 1_000,
            overhead_ns: 100,
            detect_ns: 10_000,
            seed: 1,
            root_fails: false,
        }
    }
}

/// One row of the scale table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleRow {
    /// Number of ranks.
    pub ranks: u32,
    /// Ranks crashed during the call.
    pub failures: u32,
    /// Simulated time at which the last survivor decided.
    pub time_ns: u64,
    /// Longest causal chain of messages.
    pub depth: u32,
    /// Messages sent.
    pub messages: u64,
    /// Size of the agreed failed set.
    pub agreed_failed: usize,
}

enum Event {
    Deliver {
        from: Rank,
        to: Rank,
        depth: u32,
        message: Message,
    },
    Crash {
        rank: Rank,
    },
    Detect {
        dead: Rank,
    },
}

struct Timed {
    at: u64,
    order: u64,
    event: Event,
}

impl PartialEq for Timed {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timed {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.order).cmp(&(self.at, self.order))
    }
}

struct World {
    config: ScaleConfig,
    ranks: Vec<Agreement>,
    alive: Vec<bool>,
    busy_until: Vec<u64>,
    /// Deepest message each rank has handled: what it sends next depends on all of them.
    depth_seen: Vec<u32>,
    decided: Vec<bool>,
    undecided_alive: usize,
    queue: BinaryHeap<Timed>,
    order: u64,
    messages: u64,
    depth: u32,
    finish: u64,
}

impl World {
    fn push(&mut self, at: u64, event: Event) {
        self.order += 1;
        self.queue.push(Timed {
            at,
            order: self.order,
            event,
        });
    }

    /// Sends what `rank` has queued, starting at CPU time `begin`; returns when it is done.
    fn flush(&mut self, rank: Rank, mut begin: u64, depth: u32) -> u64 {
        while let Some((to, message)) = self.ranks[rank as usize].poll_transmit() {
            begin += self.config.overhead_ns;
            self.messages += 1;
            let at = begin + self.config.latency_ns;
            self.push(
                at,
                Event::Deliver {
                    from: rank,
                    to,
                    depth: depth + 1,
                    message,
                },
            );
        }
        begin
    }

    fn after(&mut self, rank: Rank, begin: u64) {
        let depth = self.depth_seen[rank as usize];
        let done = self.flush(rank, begin, depth);
        self.busy_until[rank as usize] = done;
        if !self.decided[rank as usize] && self.ranks[rank as usize].decision().is_some() {
            self.decided[rank as usize] = true;
            self.undecided_alive -= 1;
            self.finish = self.finish.max(done);
        }
    }
}

/// Runs one agreement over `n` ranks with `failures` random crashes during the call (the
/// first of them rank 0, the coordinator, when `config.root_fails`). `expected_ns` places the
/// crashes: uniformly in `0..expected_ns`. The depth is the longest causal chain: a message
/// is one deeper than the deepest message its sender had handled.
///
/// # Errors
/// A description when the survivors do not all decide, or decide differently, or the agreed
/// set holds a rank that did not crash.
pub fn run_scale(
    n: u32,
    failures: u32,
    expected_ns: u64,
    config: ScaleConfig,
) -> Result<ScaleRow, String> {
    let participants = Arc::new(Participants::new(n, &RankSet::new()));
    let mut world = World {
        config,
        ranks: (0..n)
            .map(|r| Agreement::new(r, participants.clone()))
            .collect(),
        alive: vec![true; n as usize],
        busy_until: vec![0; n as usize],
        depth_seen: vec![0; n as usize],
        decided: vec![false; n as usize],
        undecided_alive: n as usize,
        queue: BinaryHeap::new(),
        order: 0,
        messages: 0,
        depth: 0,
        finish: 0,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ ((n as u64) << 32) ^ failures as u64);
    let mut victims = RankSet::new();
    if config.root_fails && failures > 0 && n > 1 {
        victims.insert(0);
    }
    while (victims.len() as u32) < failures.min(n - 1) {
        victims.insert(rng.gen_range(0..n));
    }
    for rank in &victims {
        let at = rng.gen_range(0..expected_ns.max(1));
        world.push(at, Event::Crash { rank });
    }
    for rank in 0..n {
        world.ranks[rank as usize].start(Contribution {
            flag: u32::MAX,
            ..Contribution::default()
        });
        world.after(rank, 0);
    }
    while world.undecided_alive > 0 {
        let Some(Timed { at, event, .. }) = world.queue.pop() else {
            return Err(format!(
                "liveness: n={n}: nothing left to happen with {} survivors undecided",
                world.undecided_alive
            ));
        };
        match event {
            Event::Deliver {
                from,
                to,
                depth,
                message,
            } => {
                if !world.alive[to as usize] {
                    continue;
                }
                world.depth = world.depth.max(depth);
                let seen = &mut world.depth_seen[to as usize];
                *seen = (*seen).max(depth);
                let begin = at.max(world.busy_until[to as usize]) + config.overhead_ns;
                world.ranks[to as usize].handle_message(from, message);
                world.after(to, begin);
            }
            Event::Crash { rank } => {
                world.alive[rank as usize] = false;
                if !world.decided[rank as usize] {
                    world.undecided_alive -= 1;
                }
                world.push(at + config.detect_ns, Event::Detect { dead: rank });
            }
            Event::Detect { dead } => {
                for rank in 0..n {
                    if world.alive[rank as usize] {
                        world.ranks[rank as usize].handle_failure(dead);
                        let begin = at.max(world.busy_until[rank as usize]);
                        world.after(rank, begin);
                    }
                }
            }
        }
    }
    // SPEC §2.1 uniform agreement (every rank that decided, crashed or not) and validity.
    let mut agreed = None;
    for agreement in &world.ranks {
        if let Some(d) = agreement.decision() {
            match agreed {
                None => agreed = Some(d),
                Some(first) if first != d => {
                    return Err(format!("uniform agreement: n={n}: {first:?} vs {d:?}"))
                }
                Some(_) => {}
            }
        }
    }
    let agreed = agreed.ok_or_else(|| format!("n={n}: nobody decided"))?;
    if !agreed.failed.is_subset(&victims) {
        return Err(format!(
            "validity: n={n}: agreed {:?}, crashed {:?}",
            agreed.failed.as_slice(),
            victims.as_slice()
        ));
    }
    Ok(ScaleRow {
        ranks: n,
        failures: victims.len() as u32,
        time_ns: world.finish,
        depth: world.depth,
        messages: world.messages,
        agreed_failed: agreed.failed.len(),
    })
}

/// Peak resident memory of this process in bytes, where the OS tells it (Linux).
pub fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

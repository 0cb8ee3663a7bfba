// SPDX-License-Identifier: MIT OR Apache-2.0
//! A schedule: everything one simulated run needs, derived from one seed (or written by hand).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough_core::Rank;

/// When a rank crashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// At this simulated time, whatever it is doing.
    At(u64),
    /// When it is about to enter call `call` (it never contributes to it).
    BeforeStart {
        /// The call (0-based sequence number).
        call: u64,
    },
    /// Right after its `count`-th message of call `call` of kind `kind` (any kind if `None`)
    /// leaves: in the middle of a batch of sends when the batch is longer.
    AfterSends {
        /// The call.
        call: u64,
        /// Message kind, as [`Message::kind`](runthrough_core::agreement::Message::kind).
        kind: Option<&'static str>,
        /// How many such messages it sends before crashing (at least 1).
        count: u32,
    },
    /// Right after it decides call `call` (it returned, then died).
    AfterDecide {
        /// The call.
        call: u64,
    },
    /// When its detector reports the failure of `dead`, after it has sent `sends` of the
    /// messages that this caused (a crash during repair: cascades).
    OnDetect {
        /// The failure whose detection triggers this crash.
        dead: Rank,
        /// How many messages of the reaction leave before the crash.
        sends: u32,
    },
}

/// What happens to the messages a rank had sent that are still in flight when it crashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFlight {
    /// On each link, a random prefix is delivered and the rest is lost.
    Random,
    /// All are lost.
    Lost,
    /// All are delivered.
    Delivered,
}

/// One planned crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// The rank that crashes.
    pub rank: Rank,
    /// When.
    pub trigger: Trigger,
    /// The fate of its messages in flight.
    pub in_flight: InFlight,
}

/// Everything one run needs. Random choices during the run (delays) come from `seed` too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The seed this schedule was derived from (and that seeds the run's delays).
    pub seed: u64,
    /// Number of ranks.
    pub ranks: u32,
    /// Number of successive agreements on the communicator (1..=3 in random schedules).
    pub calls: u64,
    /// Message delays are uniform in `1..=max_delay` ...
    pub max_delay: u64,
    /// ... except that one message in `slow_one_in` takes up to `slow_delay` (0: never).
    pub slow_one_in: u32,
    /// See `slow_one_in`.
    pub slow_delay: u64,
    /// Each survivor's detector reports each crash after a delay uniform in this range.
    pub detect_delay: (u64, u64),
    /// When each rank enters call 0.
    pub start_times: Vec<u64>,
    /// After deciding call k, a rank enters call k+1 after a delay uniform in `0..=call_gap`.
    pub call_gap: u64,
    /// The crashes (at most one per rank, never all ranks).
    pub crashes: Vec<Crash>,
    /// Whether the agreements skip the coordinator-free first round (run the coordinated
    /// ballots only), as they do anyway above `FAST_ROUND_MAX` participants.
    pub coordinated_only: bool,
    /// Each rank's host class, when the ranks run on hosts: the first round's passes then go
    /// up to each host's leader, among the leaders and back down (`HostGroups`).
    pub hosts: Option<Vec<u32>>,
}

/// The host class of rank `r` in host layout `k` (1 to 4), as both simulators place ranks on
/// hosts: blocks of two or three ranks, or round robin over two or three hosts.
pub fn host_class(k: u64, r: u32) -> u32 {
    match k {
        1 => r / 2,
        2 => r / 3,
        3 => r % 2,
        _ => r % 3,
    }
}

impl Schedule {
    /// A failure-free schedule of `ranks` ranks and `calls` calls with small random delays.
    pub fn failure_free(seed: u64, ranks: u32, calls: u64) -> Schedule {
        Schedule {
            seed,
            ranks,
            calls,
            max_delay: 5,
            slow_one_in: 0,
            slow_delay: 0,
            detect_delay: (1, 20),
            start_times: vec![0; ranks as usize],
            call_gap: 3,
            crashes: Vec::new(),
            coordinated_only: false,
            hosts: None,
        }
    }

    /// The schedule of `seed`, with a number of ranks in `ranks` (inclusive).
    pub fn random(seed: u64, ranks: (u32, u32)) -> Schedule {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (low, high) = (ranks.0.max(1), ranks.1.max(ranks.0.max(1)));
        // Half the schedules are small: the corner cases live there.
        let n = if rng.gen_bool(0.5) {
            rng.gen_range(low..=high.min(low + 7))
        } else {
            rng.gen_range(low..=high)
        };
        let calls = rng.gen_range(1..=3);
        let max_delay = [1, 3, 10, 40][rng.gen_range(0..4)];
        let (slow_one_in, slow_delay) = if rng.gen_bool(0.3) {
            (rng.gen_range(5..50), max_delay * rng.gen_range(5..50))
        } else {
            (0, 0)
        };
        let detect_max = [2, 20, 200, 1000][rng.gen_range(0..4)];
        let detect_delay = (1, detect_max);
        let spread = [0, 5, 50, 500][rng.gen_range(0..4)];
        let start_times = (0..n).map(|_| rng.gen_range(0..=spread)).collect();
        let call_gap = [0, 5, 100][rng.gen_range(0..3)];
        // A rough length of one call, to place timed crashes inside it.
        let depth = 64 - (n as u64).leading_zeros() as u64;
        let horizon = (spread + 8 * depth * max_delay + detect_max) * calls;

        let failures = match rng.gen_range(0..10) {
            0..=2 => 0,
            3..=6 => rng.gen_range(1..=2),
            7..=8 => rng.gen_range(0..=n / 2),
            _ => n - 1,
        }
        .min(n - 1);
        // Distinct crashing ranks; low indices (coordinators) are chosen more often.
        let mut crashing: Vec<Rank> = Vec::new();
        while (crashing.len() as u32) < failures {
            let rank = if rng.gen_bool(0.4) {
                rng.gen_range(0..n.min(4))
            } else {
                rng.gen_range(0..n)
            };
            if !crashing.contains(&rank) {
                crashing.push(rank);
            }
        }
        let several_at_once = rng.gen_bool(0.2);
        let common_time = rng.gen_range(0..=horizon);
        let kinds = [
            "promise", "accept", "accepted", "commit", "prepare", "gather", "hold",
        ];
        let mut crashes = Vec::new();
        for (i, &rank) in crashing.iter().enumerate() {
            let call = rng.gen_range(0..calls);
            let trigger = if several_at_once {
                Trigger::At(common_time)
            } else {
                match rng.gen_range(0..10) {
                    0..=2 => Trigger::At(rng.gen_range(0..=horizon)),
                    3 => Trigger::BeforeStart { call },
                    4..=6 => Trigger::AfterSends {
                        call,
                        kind: if rng.gen_bool(0.5) {
                            Some(kinds[rng.gen_range(0..kinds.len())])
                        } else {
                            None
                        },
                        count: rng.gen_range(1..=3),
                    },
                    7 => Trigger::AfterDecide { call },
                    _ if i > 0 => Trigger::OnDetect {
                        dead: crashing[rng.gen_range(0..i)],
                        sends: rng.gen_range(0..=2),
                    },
                    _ => Trigger::At(rng.gen_range(0..=horizon)),
                }
            };
            let in_flight = match rng.gen_range(0..4) {
                0 => InFlight::Lost,
                1 => InFlight::Delivered,
                _ => InFlight::Random,
            };
            crashes.push(Crash {
                rank,
                trigger,
                in_flight,
            });
        }
        // Drawn last: the draws above are those of the schedules before the first round.
        let coordinated_only = rng.gen_bool(0.2);
        // Where the ranks run, from the seed without a draw (every seed's schedule is as it
        // was): none in one seed of five, else blocks of 2 or 3 ranks, or round robin over 2
        // or 3 hosts.
        let hosts = match seed % 5 {
            0 => None,
            k => Some((0..n).map(|r| host_class(k, r)).collect()),
        };
        Schedule {
            seed,
            ranks: n,
            calls,
            max_delay,
            slow_one_in,
            slow_delay,
            detect_delay,
            start_times,
            call_gap,
            crashes,
            coordinated_only,
            hosts,
        }
    }
}

/// The seed of schedule number `index` of an exploration from `base` (SplitMix64).
pub fn schedule_seed(base: u64, index: u64) -> u64 {
    let mut z = base.wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scripted scenarios: hand-written fault plans for the protocol's classic corner cases, kept
//! apart from the random fault model. Message delays still come from the seed.

use crate::schedule::{Crash, InFlight, Schedule, Trigger};

/// A named scenario and what its survivors must end up with.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Short name.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// The schedule.
    pub schedule: Schedule,
    /// The G the survivors must hold after the last call (`None`: any valid one).
    pub final_g: Option<Vec<u32>>,
}

/// A schedule of the coordinated ballots only: the classic scenarios below are about them.
fn with(seed: u64, ranks: u32, calls: u64, crashes: Vec<Crash>) -> Schedule {
    Schedule {
        crashes,
        coordinated_only: true,
        ..Schedule::failure_free(seed, ranks, calls)
    }
}

/// A schedule whose agreements begin with the coordinator-free first round.
fn first_round(seed: u64, ranks: u32, calls: u64, crashes: Vec<Crash>) -> Schedule {
    Schedule {
        crashes,
        ..Schedule::failure_free(seed, ranks, calls)
    }
}

fn crash(rank: u32, trigger: Trigger, in_flight: InFlight) -> Crash {
    Crash {
        rank,
        trigger,
        in_flight,
    }
}

/// Every scripted scenario, for seed `seed`.
pub fn scenarios(seed: u64) -> Vec<Scenario> {
    use InFlight::*;
    use Trigger::*;
    vec![
        Scenario {
            name: "root-dies-mid-accept",
            about: "the coordinator sends its first Accept (to the largest subtree) and dies; the \
                    next coordinator must re-propose the accepted value (Paxos), then the next \
                    call recognizes the dead root",
            schedule: with(
                seed,
                16,
                2,
                vec![crash(
                    0,
                    AfterSends {
                        call: 0,
                        kind: Some("accept"),
                        count: 1,
                    },
                    Lost,
                )],
            ),
            final_g: Some(vec![0]),
        },
        Scenario {
            name: "root-dies-mid-commit",
            about: "the coordinator decides, sends one Commit and dies: the decided subtree \
                    spreads the commit through the new tree; the next call recognizes the root",
            schedule: with(
                seed,
                16,
                2,
                vec![crash(
                    0,
                    AfterSends {
                        call: 0,
                        kind: Some("commit"),
                        count: 1,
                    },
                    Delivered,
                )],
            ),
            final_g: Some(vec![0]),
        },
        Scenario {
            name: "root-decides-and-dies",
            about: "the coordinator decides and dies before sending any commit",
            schedule: with(seed, 16, 1, vec![crash(0, AfterDecide { call: 0 }, Lost)]),
            final_g: Some(vec![]),
        },
        Scenario {
            name: "parent-dead-before-entering",
            about: "rank 8 (parent of 12, 10, 9) never enters: its children wait, re-attach \
                    to the root when they learn, and 8 is a non-contributor",
            schedule: with(seed, 16, 1, vec![crash(8, BeforeStart { call: 0 }, Lost)]),
            final_g: Some(vec![8]),
        },
        Scenario {
            name: "parent-dies-after-promising",
            about: "rank 4 sends its promise and dies with it lost: the root marks 4 a \
                    non-contributor and its children's promises come to the root directly",
            schedule: with(
                seed,
                16,
                1,
                vec![crash(
                    4,
                    AfterSends {
                        call: 0,
                        kind: Some("promise"),
                        count: 1,
                    },
                    Lost,
                )],
            ),
            final_g: Some(vec![4]),
        },
        Scenario {
            name: "parent-dies-mid-accept-forwarding",
            about: "rank 8 forwards the Accept to one child and dies: the root re-sends it to \
                    8's other children",
            schedule: with(
                seed,
                16,
                1,
                vec![crash(
                    8,
                    AfterSends {
                        call: 0,
                        kind: Some("accept"),
                        count: 1,
                    },
                    Delivered,
                )],
            ),
            final_g: None,
        },
        Scenario {
            name: "cascade-of-coordinators",
            about: "rank 0 dies; 1 dies while repairing (after one message), 2 dies after two, \
                    3 after its first prepare: ballot 4 decides",
            schedule: with(
                seed,
                16,
                2,
                vec![
                    crash(0, At(3), Random),
                    crash(1, OnDetect { dead: 0, sends: 1 }, Random),
                    crash(2, OnDetect { dead: 1, sends: 2 }, Random),
                    crash(
                        3,
                        AfterSends {
                            call: 0,
                            kind: Some("prepare"),
                            count: 1,
                        },
                        Random,
                    ),
                ],
            ),
            final_g: Some(vec![0, 1, 2, 3]),
        },
        Scenario {
            name: "several-at-once",
            about: "ranks 0, 4, 8 and 12 crash at the same moment mid-call",
            schedule: with(
                seed,
                16,
                2,
                vec![
                    crash(0, At(6), Random),
                    crash(4, At(6), Random),
                    crash(8, At(6), Random),
                    crash(12, At(6), Random),
                ],
            ),
            final_g: Some(vec![0, 4, 8, 12]),
        },
        Scenario {
            name: "all-but-one",
            about: "every rank but 5 dies, at different points; 5 decides alone",
            schedule: with(
                seed,
                8,
                3,
                vec![
                    crash(0, At(2), Random),
                    crash(
                        1,
                        AfterSends {
                            call: 0,
                            kind: None,
                            count: 2,
                        },
                        Random,
                    ),
                    crash(2, BeforeStart { call: 1 }, Random),
                    crash(3, AfterDecide { call: 0 }, Random),
                    crash(4, OnDetect { dead: 0, sends: 0 }, Random),
                    crash(6, At(9), Lost),
                    crash(7, AfterDecide { call: 1 }, Delivered),
                ],
            ),
            final_g: Some(vec![0, 1, 2, 3, 4, 6, 7]),
        },
        Scenario {
            name: "first-round-decides-and-dies",
            about: "rank 3 decides in the first round and dies, its in-flight holds lost: the \
                    others leave the round and decide its value in the coordinated ballots",
            schedule: first_round(seed, 12, 1, vec![crash(3, AfterDecide { call: 0 }, Lost)]),
            final_g: Some(vec![]),
        },
        Scenario {
            name: "first-round-dies-mid-gather",
            about: "rank 5 sends its first two gathers and dies: nobody can end the first \
                    round, and 5 is a non-contributor of the coordinated ballots",
            schedule: first_round(
                seed,
                12,
                2,
                vec![crash(
                    5,
                    AfterSends {
                        call: 0,
                        kind: Some("gather"),
                        count: 2,
                    },
                    Delivered,
                )],
            ),
            final_g: Some(vec![5]),
        },
        Scenario {
            name: "first-round-dies-mid-hold",
            about: "rank 0 (the first coordinator) sends one hold and dies: every survivor \
                    holds the first round's value (0 sent all its gathers), so the coordinated \
                    ballots decide it, whether somebody decided in the round or not",
            schedule: first_round(
                seed,
                9,
                1,
                vec![crash(
                    0,
                    AfterSends {
                        call: 0,
                        kind: Some("hold"),
                        count: 1,
                    },
                    Random,
                )],
            ),
            final_g: Some(vec![]),
        },
    ]
}

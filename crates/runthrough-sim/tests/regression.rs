// SPDX-License-Identifier: MIT OR Apache-2.0
//! Regression seeds: schedules that caught a broken protocol once (each found by exploring
//! with a deliberately broken variant of the agreement; the comment says which), plus the
//! first schedules of the default exploration. They must stay violation-free.

use runthrough_sim::{check_seed, check_seed_without_hosts, explore, DEFAULT_RANKS};

/// (seed, what it caught)
const SEEDS: &[(u64, &str)] = &[
    (
        11062634911503522573,
        "a new coordinator proposing a fresh value instead of the accepted one: uniform agreement",
    ),
    (
        15839785061582574730,
        "a dead child skipped without being marked a non-contributor: validity",
    ),
    (
        8592361918907882846,
        "decided ranks not pushing the commit to their effective parent: liveness",
    ),
];

/// (seed, what it caught) for the first round, explored with `--ranks 1..12` before schedules
/// placed ranks on hosts (checked as found, and as drawn now).
const FIRST_ROUND_SEEDS: &[(u64, &str)] = &[
    (
        16195751707730886712,
        "a rank leaving the first round forgetting the value it held there: uniform agreement",
    ),
    (
        5167561427467272087,
        "deciding in the first round once the gather pass ends, without the hold pass: uniform \
         agreement",
    ),
    (
        2185194620014831856,
        "staying in the first round after learning of a failure or seeing a coordinated ballot: \
         liveness",
    ),
];

#[test]
fn first_round_regression_seeds_hold() {
    for &(seed, what) in FIRST_ROUND_SEEDS {
        // As found (no hosts then), and as drawn now (over hosts, for most seeds).
        for (check, how) in [
            (check_seed_without_hosts as fn(_, _) -> _, "without hosts"),
            (check_seed, "as drawn"),
        ] {
            if let Err(found) = check(seed, (1, 12)) {
                panic!(
                    "regression ({what}), {how}: {}\nreplay: {}",
                    found.violation, found.replay
                );
            }
        }
    }
}

#[test]
fn regression_seeds_hold() {
    for &(seed, what) in SEEDS {
        if let Err(found) = check_seed(seed, DEFAULT_RANKS) {
            panic!(
                "regression ({what}): {}\nreplay: {}",
                found.violation, found.replay
            );
        }
    }
}

#[test]
fn first_schedules_of_the_default_exploration_hold() {
    if let Err(found) = explore(200, DEFAULT_RANKS, 1) {
        panic!("{}\nreplay: {}", found.violation, found.replay);
    }
}

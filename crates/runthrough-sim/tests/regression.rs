// SPDX-License-Identifier: MIT OR Apache-2.0
//! Regression seeds: schedules that caught a broken protocol once (each found by exploring
//! with a deliberately broken variant of the agreement; the comment says which), plus the
//! first schedules of the default exploration. They must stay violation-free.

use runthrough_sim::{check_seed, explore, DEFAULT_RANKS};

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

// SPDX-License-Identifier: MIT OR Apache-2.0
//! STYLE "Determinism rules": one seed derives the whole run; running it twice gives the same
//! trace.

use runthrough_sim::{replay, run, schedule_seed, Schedule, DEFAULT_RANKS};

#[test]
fn same_seed_gives_the_same_trace() {
    for index in 0..50 {
        let seed = schedule_seed(42, index);
        let (schedule_a, a) = replay(seed, DEFAULT_RANKS);
        let (schedule_b, b) = replay(seed, DEFAULT_RANKS);
        assert_eq!(schedule_a, schedule_b);
        let (a, b) = (a.expect("no violation"), b.expect("no violation"));
        assert!(!a.trace.is_empty());
        assert_eq!(a.trace, b.trace, "seed {seed}");
        assert_eq!(a, b);
    }
}

#[test]
fn different_seeds_give_different_runs() {
    let a = run(Schedule::random(1, (16, 16)), true).expect("no violation");
    let b = run(Schedule::random(2, (16, 16)), true).expect("no violation");
    assert_ne!(a.trace, b.trace);
}

#[test]
fn trace_does_not_change_the_run() {
    let seed = schedule_seed(7, 3);
    let traced = run(Schedule::random(seed, DEFAULT_RANKS), true).unwrap();
    let untraced = run(Schedule::random(seed, DEFAULT_RANKS), false).unwrap();
    assert_eq!(traced.steps, untraced.steps);
    assert_eq!(traced.messages, untraced.messages);
    assert_eq!(traced.final_g, untraced.final_g);
}

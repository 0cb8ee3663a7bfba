// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scale mode at small sizes: SPEC §6 agreement cost (4(n-1) messages, depth 4 log2 n,
//! failure-free) and termination with failures during the call.

use runthrough_sim::scale::{run_scale, ScaleConfig};

#[test]
fn failure_free_costs_and_log_time() {
    let config = ScaleConfig::default();
    let small = run_scale(1 << 10, 0, 0, config).unwrap();
    assert_eq!(small.messages, 4 * ((1 << 10) - 1));
    assert_eq!(small.depth, 4 * 10);
    let large = run_scale(1 << 14, 0, 0, config).unwrap();
    assert_eq!(large.messages, 4 * ((1 << 14) - 1));
    assert_eq!(large.depth, 4 * 14);
    let ratio = large.time_ns as f64 / small.time_ns as f64;
    assert!(
        ratio < 14.0 / 10.0 * 1.25,
        "time grows faster than log n: {ratio}"
    );
}

#[test]
fn failures_during_the_call_terminate() {
    let config = ScaleConfig::default();
    let free = run_scale(1 << 12, 0, 0, config).unwrap();
    for seed in 0..5 {
        let row = run_scale(1 << 12, 8, free.time_ns, ScaleConfig { seed, ..config }).unwrap();
        assert_eq!(row.failures, 8);
        assert!(row.agreed_failed <= 8);
    }
}

#[test]
fn root_failure_during_the_call_terminates() {
    let config = ScaleConfig {
        root_fails: true,
        ..ScaleConfig::default()
    };
    let free = run_scale(1 << 12, 0, 0, config).unwrap();
    for seed in 0..5 {
        let row = run_scale(1 << 12, 3, free.time_ns, ScaleConfig { seed, ..config }).unwrap();
        assert_eq!(row.failures, 3);
    }
}

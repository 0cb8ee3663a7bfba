// SPDX-License-Identifier: MIT OR Apache-2.0
//! SPEC §2.1 under the random fault model: a few thousand schedules in `cargo test` (CI runs
//! 10,000 and more through the release binary: `runthrough-sim explore --schedules N`).

use runthrough_sim::{explore, DEFAULT_RANKS};

fn check(count: u64, ranks: (u32, u32), base: u64) {
    match explore(count, ranks, base) {
        Ok(totals) => assert_eq!(totals.schedules, count),
        Err(found) => panic!(
            "VIOLATION {}\nschedule: {:?}\nreplay: {}",
            found.violation, found.schedule, found.replay
        ),
    }
}

#[test]
fn ten_thousand_schedules_up_to_64_ranks() {
    check(10_000, DEFAULT_RANKS, 0xC0FFEE);
}

#[test]
fn thousands_of_small_schedules() {
    check(5_000, (1, 6), 0xBEEF);
}

/// The long exploration, on demand: `cargo test -p runthrough-sim --release -- --ignored`.
#[test]
#[ignore]
fn a_million_schedules() {
    check(1_000_000, DEFAULT_RANKS, 0x5EED);
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Helpers shared by the integration tests: a hang watchdog and the checking of rank outcomes.
#![allow(dead_code)] // each test binary uses its own subset

use std::fmt::Debug;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::Duration;

use runthrough::{Rank, RankOutcome};

/// How long any one test may run before it counts as a hang. Every test finishes in well under a
/// second or two; this only turns a runtime hang into a failure instead of a stuck `cargo test`.
pub const HANG_LIMIT: Duration = Duration::from_secs(60);

/// Runs `job` on its own thread and returns its value; fails the test (naming it) when `job` has
/// not finished within [`HANG_LIMIT`], since no operation may block forever (SPEC §1).
pub fn bounded<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> T {
    let name = std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_string();
    let (done, finished) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("{name} (bounded)"))
        .spawn(move || {
            let _ = done.send(std::panic::catch_unwind(AssertUnwindSafe(job)));
        })
        .expect("spawning the test's job thread");
    match finished.recv_timeout(HANG_LIMIT) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{name}: still running after {HANG_LIMIT:?}: the runtime hangs"),
    }
}

/// Checks that exactly the ranks in `killed` were killed and that every other rank returned
/// `Ok`; returns each rank's value (`None` for the killed ones). A rank that panicked (a failed
/// assertion inside it) or returned an error fails the test with its message.
pub fn outcomes<T: Debug, E: Debug>(
    outcomes: Vec<RankOutcome<Result<T, E>>>,
    killed: &[Rank],
) -> Vec<Option<T>> {
    let mut problems = Vec::new();
    let mut values = Vec::new();
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        let rank = rank as Rank;
        let expect_killed = killed.contains(&rank);
        match outcome {
            RankOutcome::Killed if expect_killed => values.push(None),
            RankOutcome::Returned(Ok(value)) if !expect_killed => values.push(Some(value)),
            other => {
                let expected = if expect_killed { "killed" } else { "Ok" };
                problems.push(format!("rank {rank}: expected {expected}, got {other:?}"));
                values.push(None);
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    values
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The bag of tasks under worker failures: the master notices through `ProcFailedPending`,
//! acknowledges with `validate_local`, re-issues the dead workers' tasks, and
//! the results are exactly the failure-free ones. Every run has a deadline.

mod support;

use runthrough::Rank;
use runthrough_examples::bag_of_tasks::{self, BagError, Config, Report};
use support::within;

fn small(ranks: u32, kills: &[(Rank, u64)]) -> Config {
    Config {
        ranks,
        tasks: 120,
        work: 2_000,
        kills: kills.to_vec(),
        ..Config::default()
    }
}

fn run_ok(config: Config) -> Report {
    let kills = config.kills.clone();
    let report = within(&format!("bag with kills {kills:?}"), move || {
        bag_of_tasks::run(&config)
    })
    .unwrap_or_else(|e| panic!("kills {kills:?}: {e}"));
    assert!(
        report.matches_reference(),
        "kills {kills:?}: checksum {:#x} differs from the failure-free {:#x}",
        report.checksum,
        report.reference_checksum
    );
    let counted: u64 = report.by_rank.values().sum();
    assert_eq!(
        counted,
        report.results.len() as u64,
        "each task counted once"
    );
    // Every killed worker was acknowledged by validate_local, as NEW in exactly one event.
    for &worker in &report.killed {
        let events = report
            .events
            .iter()
            .filter(|e| e.new_failed.contains(&worker))
            .count();
        assert!(events <= 1, "worker {worker} NEW in {events} views");
    }
    report
}

#[test]
fn failure_free() {
    for ranks in [1, 2, 5] {
        let report = run_ok(small(ranks, &[]));
        assert!(report.events.is_empty());
        if ranks == 1 {
            assert_eq!(
                report.by_rank.get(&0),
                Some(&120),
                "no worker: the master works"
            );
        }
    }
}

/// One worker dies at many points of the master's progress (once the first tasks are out, in
/// the first round, mid-run, near the end): its tasks are re-issued, the results are exact.
/// Killed with 2 of 120 results to go, the worker may hold none of them: then the master never
/// needs to notice.
#[test]
fn one_worker_dies_at_many_points() {
    for at in [0, 1, 2, 3, 7, 30, 64, 100, 118] {
        for worker in [1, 3] {
            let report = run_ok(small(5, &[(worker, at)]));
            assert_eq!(report.killed, vec![worker]);
            let event = report
                .events
                .iter()
                .find(|e| e.new_failed.contains(&worker));
            assert!(
                event.is_some() || at > 100,
                "worker {worker}@{at}: no ProcFailedPending event names it"
            );
        }
    }
}

/// Several workers die at once: one validate_local may report several NEW failures.
#[test]
fn several_workers_die_at_once() {
    let report = run_ok(small(6, &[(2, 20), (3, 20), (5, 20)]));
    assert_eq!(report.killed, vec![2, 3, 5]);
    let named: Vec<Rank> = report
        .events
        .iter()
        .flat_map(|e| e.new_failed.clone())
        .collect();
    assert_eq!(named.len(), 3, "each failure reported NEW once: {named:?}");
}

/// All workers but one die, one after another: the last one finishes the bag.
#[test]
fn all_workers_but_one_die() {
    for last in [1, 4, 7] {
        let kills: Vec<(Rank, u64)> = (1..8)
            .filter(|&w| w != last)
            .enumerate()
            .map(|(i, w)| (w, 5 + 9 * i as u64))
            .collect();
        let report = run_ok(small(8, &kills));
        assert_eq!(report.killed.len(), 6);
        assert!(report.by_rank.get(&last).copied().unwrap_or(0) > 0);
        assert_eq!(
            report.by_rank.get(&0),
            None,
            "a worker is left: the master does not work"
        );
    }
}

/// Every worker dies: the master computes what is left itself.
#[test]
fn all_workers_die() {
    let report = run_ok(small(4, &[(1, 3), (2, 3), (3, 10)]));
    assert_eq!(report.killed, vec![1, 2, 3]);
    assert!(report.by_rank.get(&0).copied().unwrap_or(0) > 0);
}

/// Wider windows mean more tasks in flight per dead worker, all re-issued.
#[test]
fn wide_windows() {
    let report = run_ok(Config {
        window: 8,
        ..small(4, &[(2, 10)])
    });
    let reissued: usize = report.events.iter().map(|e| e.reissued.len()).sum();
    assert!(reissued <= 8);
}

#[test]
fn bad_configurations_are_reported() {
    assert!(matches!(
        bag_of_tasks::run(&small(4, &[(0, 1)])),
        Err(BagError::Config(_))
    ));
    assert!(matches!(
        bag_of_tasks::run(&small(4, &[(4, 1)])),
        Err(BagError::Config(_))
    ));
}

/// `--replace`: each death is followed by a respawn; the bag keeps its workers, every
/// worker number (a replaced one's new worker included) still works, and the results are
/// exact. One death, several at once, one after another, and every worker dead at once.
#[test]
fn replace_keeps_the_number_of_workers() {
    let replace = |kills: &[(Rank, u64)]| Config {
        replace: true,
        ..small(6, kills)
    };
    for at in [0, 3, 30, 90] {
        let report = run_ok(replace(&[(2, at)]));
        assert_eq!(report.killed, vec![2]);
        let event = report.events.iter().find(|e| e.new_failed.contains(&2));
        if let Some(event) = event {
            let (replaced, _) = event.replaced.clone().expect("a respawn");
            assert_eq!(replaced, vec![2], "kill at {at}");
        }
    }
    let report = run_ok(replace(&[(1, 20), (4, 20)]));
    let replaced: Vec<Rank> = report
        .events
        .iter()
        .flat_map(|e| e.replaced.clone().unwrap().0)
        .collect();
    assert_eq!(replaced, vec![1, 4]);
    // After both replacements every number got work again (the new workers' results count
    // under the numbers they took).
    let report = run_ok(replace(&[(1, 10), (3, 40), (5, 70)]));
    // Each death replaced once (two deaths close in time may share one recovery event).
    let mut replaced: Vec<Rank> = report
        .events
        .iter()
        .flat_map(|e| e.replaced.clone().unwrap().0)
        .collect();
    replaced.sort_unstable();
    assert_eq!(replaced, vec![1, 3, 5]);
    for worker in 1..6 {
        assert!(
            report.by_rank.get(&worker).copied().unwrap_or(0) > 0,
            "{worker}"
        );
    }
    assert_eq!(report.by_rank.get(&0), None, "the master never works alone");
    let report = run_ok(replace(&[(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]));
    assert_eq!(report.killed.len(), 5);
    assert_eq!(
        report.by_rank.get(&0),
        None,
        "replaced, not computed by the master"
    );
}

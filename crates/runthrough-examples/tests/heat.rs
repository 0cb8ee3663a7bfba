// SPDX-License-Identifier: MIT OR Apache-2.0
//! The heat solver under injected failures: every run that can finish must end with the
//! failure-free field bit for bit; a run that loses both copies of a block must say so at every
//! survivor, cleanly. Every run has a deadline (`support::within`).

mod support;

use runthrough::Rank;
use runthrough_examples::heat::{self, Config, HeatError, KillPoint, LostBlock, Report};
use support::within;

/// A small problem: 6 ranks as 2 x 3 blocks of a 30 x 30 grid, 24 iterations, a checkpoint
/// every 5 (at 5, 10, 15, 20).
fn small(kills: &[(Rank, KillPoint)]) -> Config {
    Config {
        ranks: 6,
        size: 30,
        iterations: 24,
        checkpoint_every: 5,
        kills: kills.to_vec(),
        ..Config::default()
    }
}

fn run(config: Config) -> Result<Report, HeatError> {
    let what = format!("heat with kills {:?}", config.kills);
    within(&what, move || heat::run(&config))
}

/// Runs and requires the failure-free field bit for bit.
fn run_ok(config: Config) -> Report {
    let kills = config.kills.clone();
    let report = run(config).unwrap_or_else(|e| panic!("kills {kills:?}: {e}"));
    assert!(
        report.matches_reference(),
        "kills {kills:?}: checksum {:#x} differs from the failure-free {:#x}",
        report.checksum,
        report.reference_checksum
    );
    report
}

fn at(rank: Rank, iteration: u64) -> (Rank, KillPoint) {
    (rank, KillPoint::Iteration(iteration))
}

/// The decomposition and the halo exchange reproduce the sequential sweep bit for bit, for
/// square, oblong and prime block counts and sizes that do not divide evenly.
#[test]
fn failure_free_runs_equal_the_sequential_reference() {
    for (ranks, size) in [(1, 9), (2, 17), (4, 16), (6, 31), (7, 23), (9, 40)] {
        let report = run_ok(Config {
            ranks,
            size,
            iterations: 13,
            checkpoint_every: 4,
            ..Config::default()
        });
        assert!(report.recoveries.is_empty());
        assert_eq!(report.survivors.len(), ranks as usize);
        // One validate_global per iteration, one per checkpoint (at 4, 8, 12), one for the
        // output.
        assert_eq!(report.passes, 13 + 3 + 1);
    }
}

/// One rank dies at many points of the run: in the first checkpoint interval (rolled back to
/// the regenerated initial field), at a checkpoint iteration, just after one, and at the last
/// iteration. Each time its block moves to its buddy and the field is exact.
#[test]
fn one_kill_at_many_iterations() {
    for iteration in [0, 1, 4, 5, 6, 9, 10, 14, 19, 20, 23] {
        for rank in [0, 2, 5] {
            let report = run_ok(small(&[at(rank, iteration)]));
            assert_eq!(report.killed, vec![rank]);
            let recovery = &report.recoveries[..];
            assert_eq!(recovery.len(), 1, "kill {rank}@{iteration}");
            assert_eq!(recovery[0].new_in_g, vec![rank]);
            assert_eq!(recovery[0].at_iteration, iteration);
            // The checkpoint pass of a multiple of 5 comes before its step.
            assert_eq!(recovery[0].rolled_back_to, iteration / 5 * 5);
            assert_eq!(recovery[0].moves.len(), 1);
            assert_eq!(
                recovery[0].moves[0].to,
                (rank + 1) % 6,
                "the buddy takes over"
            );
            assert!(recovery[0].agreement_to_recovered.is_some());
        }
    }
}

/// The README's shape: two failures at different iterations, each recovered from its own
/// checkpoint.
#[test]
fn two_kills_at_different_iterations() {
    let report = run_ok(Config {
        ranks: 8,
        size: 40,
        iterations: 50,
        checkpoint_every: 10,
        kills: vec![at(3, 20), at(5, 43)],
        ..Config::default()
    });
    let recoveries: Vec<(Vec<Rank>, u64)> = report
        .recoveries
        .iter()
        .map(|r| (r.new_in_g.clone(), r.rolled_back_to))
        .collect();
    assert_eq!(recoveries, vec![(vec![3], 20), (vec![5], 40)]);
}

/// Ranks that are not each other's buddy die at the same iteration: one recovery, both
/// blocks move.
#[test]
fn simultaneous_kills_of_non_buddies() {
    let report = run_ok(small(&[at(1, 12), at(4, 12)]));
    assert_eq!(report.recoveries.len(), 1);
    assert_eq!(report.recoveries[0].new_in_g, vec![1, 4]);
    assert_eq!(report.recoveries[0].moves.len(), 2);
}

/// A failure while the survivors are restoring the copies after an earlier failure starts a
/// second recovery from the same committed checkpoint.
#[test]
fn kill_during_recovery() {
    for victim in [0, 1, 5] {
        let report = run_ok(small(&[at(3, 12), (victim, KillPoint::Recovery(1))]));
        assert_eq!(report.recoveries.len(), 2, "victim {victim}");
        let second = &report.recoveries[1];
        assert!(second.during_recovery);
        assert_eq!(second.new_in_g, vec![victim]);
        assert_eq!(second.rolled_back_to, 10);
        assert!(report.recoveries[0].agreement_to_recovered.is_none());
        assert!(second.agreement_to_recovered.is_some());
    }
}

/// Rank 4 took over rank 3's block from its buddy copy, and dies before it could copy the block
/// to a new buddy: both copies are gone. Every survivor reports it, the same way.
#[test]
fn buddy_dying_during_its_partners_recovery_is_unrecoverable() {
    let error = run(small(&[at(3, 12), (4, KillPoint::Recovery(1))])).unwrap_err();
    match error {
        HeatError::Unrecoverable {
            lost, checkpoint, ..
        } => {
            assert_eq!(
                lost,
                LostBlock {
                    block: 3,
                    holders: vec![3, 4]
                }
            );
            assert_eq!(checkpoint, 10);
        }
        other => panic!("expected Unrecoverable, got {other}"),
    }
}

/// A buddy pair dying together with one buddy per block loses a block: reported cleanly.
#[test]
fn buddy_pair_dying_together_is_unrecoverable() {
    let error = run(small(&[at(3, 12), at(4, 12)])).unwrap_err();
    assert!(
        matches!(&error, HeatError::Unrecoverable { lost, .. } if *lost == LostBlock { block: 3, holders: vec![3, 4] }),
        "{error}"
    );
}

/// Ranks on three made-up hosts, two each, as a launcher places them (0-1, 2-3, 4-5): buddy
/// copies go to other hosts, so the loss of a whole host, both its ranks at once, is recovered
/// exactly, before the first checkpoint and after later ones. Ranks 3 and 4 on one host (of
/// another map) are the buddy pair that is lost when every rank shares one host: there too the
/// host's loss is recovered. A map of the wrong length is a configuration error.
#[test]
fn buddies_on_other_hosts_survive_the_loss_of_a_whole_host() {
    let three_hosts: Vec<u64> = ["a", "a", "b", "b", "c", "c"]
        .iter()
        .map(|h| heat::key_of(h))
        .collect();
    for host in [[0, 1], [2, 3], [4, 5]] {
        for iteration in [3, 7, 12, 21] {
            let kills = [at(host[0], iteration), at(host[1], iteration)];
            let report = run_ok(Config {
                hosts: Some(three_hosts.clone()),
                ..small(&kills)
            });
            assert_eq!(report.killed, host.to_vec());
        }
    }
    let rank_pairs_on_hosts: Vec<u64> = [0, 1, 1, 2, 2, 0].iter().map(|&h| h as u64).collect();
    let report = run_ok(Config {
        hosts: Some(rank_pairs_on_hosts),
        ..small(&[at(3, 12), at(4, 12)])
    });
    assert_eq!(report.killed, vec![3, 4]);
    assert!(matches!(
        run(Config {
            hosts: Some(vec![5; 6]),
            ..small(&[at(3, 12), at(4, 12)])
        }),
        Err(HeatError::Unrecoverable { .. })
    ));
    assert!(matches!(
        heat::run(&Config {
            hosts: Some(vec![1; 5]),
            ..small(&[])
        }),
        Err(HeatError::Config(_))
    ));
}

/// With two buddies per block, any two failures leave a copy: the pair dying together, and the
/// buddy dying during its partner's recovery, both recover exactly.
#[test]
fn two_buddies_survive_the_loss_of_a_buddy_pair() {
    for kills in [
        vec![at(3, 12), at(4, 12)],
        vec![at(3, 12), (4, KillPoint::Recovery(1))],
        vec![at(5, 7), at(0, 7)],
    ] {
        let report = run_ok(Config {
            buddies: 2,
            ..small(&kills)
        });
        assert_eq!(report.killed.len(), 2);
    }
}

/// Before the first checkpoint the initial field can be regenerated, so even a buddy pair may
/// die in the first interval.
#[test]
fn buddy_pair_dying_in_the_first_interval_restarts_from_the_initial_field() {
    let report = run_ok(small(&[at(3, 2), at(4, 2)]));
    assert_eq!(report.recoveries[0].rolled_back_to, 0);
}

/// Failures at chosen protocol points inside `validate_global` (the rank's contribution, its
/// acknowledgement of the proposal, a root's commit): whether or not the dying rank made it
/// into that agreement, the survivors agree, recover and get the exact field. The small run
/// has 29 calls: 24 steps, 4 checkpoints and the output pass; a rank that dies in the last one
/// after contributing to it may need no recovery at all (every survivor already has the field).
#[test]
fn kills_inside_validate_global() {
    let points = [
        (0, 1, 1),
        (2, 3, 1),
        (2, 3, 2),
        (0, 6, 2),
        (5, 7, 1),
        (1, 12, 2),
        (0, 20, 3),
        (3, 28, 2),
        (4, 29, 1),
        (0, 29, 2),
        (5, 29, 2),
    ];
    for (rank, call, message) in points {
        let report = run_ok(small(&[(rank, KillPoint::Agreement { call, message })]));
        assert_eq!(report.killed, vec![rank], "kill {rank}@v{call}.{message}");
        if call < 29 {
            assert_eq!(report.recoveries.len(), 1, "kill {rank}@v{call}.{message}");
        } else {
            assert!(report.recoveries.len() <= 1);
        }
    }
}

/// Ranks die one after another until a single one is left, owning every block.
#[test]
fn all_but_one_rank_die() {
    let report = run_ok(small(&[
        at(1, 3),
        at(2, 8),
        at(3, 12),
        at(4, 16),
        at(5, 21),
    ]));
    assert_eq!(report.survivors, vec![0]);
    assert_eq!(report.recoveries.len(), 5);
    let report = run_ok(Config {
        buddies: 5,
        ..small(&[at(0, 7), at(1, 7), at(2, 7), at(4, 7), at(5, 7)])
    });
    assert_eq!(report.survivors, vec![3]);
}

/// Every rank of a 4-rank job killed at every iteration of a short run, one failure per run:
/// a sweep over all the kill points of that size.
#[test]
fn sweep_every_rank_at_every_iteration() {
    for rank in 0..4 {
        for iteration in 0..12 {
            run_ok(Config {
                ranks: 4,
                size: 12,
                iterations: 12,
                checkpoint_every: 3,
                kills: vec![at(rank, iteration)],
                ..Config::default()
            });
        }
    }
}

/// Bad configurations are errors, not panics.
#[test]
fn bad_configurations_are_reported() {
    assert!(matches!(
        heat::run(&Config {
            size: 2,
            ..small(&[])
        }),
        Err(HeatError::Config(_))
    ));
    assert!(matches!(
        heat::run(&small(&[at(6, 1)])),
        Err(HeatError::Config(_))
    ));
    assert!(matches!(
        heat::run(&Config {
            checkpoint_every: 0,
            ..small(&[])
        }),
        Err(HeatError::Config(_))
    ));
}

/// `--recovery respawn`: the dead ranks are replaced by new ones that get their blocks and
/// copies from the buddies; the run ends with as many ranks as it started with, and the field
/// is exact.
fn respawned(kills: &[(Rank, KillPoint)]) -> Report {
    let report = run_ok(Config {
        respawn: true,
        ..small(kills)
    });
    assert_eq!(
        report.survivors.len(),
        6,
        "kills {kills:?}: the job keeps its size"
    );
    for &(rank, _) in kills {
        assert!(report.killed.contains(&rank), "kills {kills:?}");
        assert!(!report.survivors.contains(&rank));
    }
    assert!(
        report.survivors.iter().any(|&r| r >= 6),
        "kills {kills:?}: new ranks returned the field"
    );
    report
}

#[test]
fn respawn_replaces_a_dead_rank_at_many_iterations() {
    for iteration in [0, 4, 5, 6, 14, 20, 23] {
        for rank in [0, 3, 5] {
            let report = respawned(&[at(rank, iteration)]);
            let recovery = &report.recoveries[..];
            assert_eq!(recovery.len(), 1, "kill {rank}@{iteration}");
            assert_eq!(recovery[0].new_in_g, vec![rank]);
            assert_eq!(recovery[0].rolled_back_to, iteration / 5 * 5);
            assert!(recovery[0].moves.is_empty(), "no block changed owner");
            let (replaced, _) = recovery[0].respawned.clone().expect("a respawn");
            assert_eq!(replaced, vec![rank]);
        }
    }
}

#[test]
fn respawn_replaces_simultaneous_and_successive_deaths() {
    let report = respawned(&[at(1, 12), at(4, 12)]);
    assert_eq!(report.recoveries.len(), 1);
    assert_eq!(
        report.recoveries[0].respawned.as_ref().unwrap().0,
        vec![1, 4]
    );
    let report = respawned(&[at(2, 7), at(5, 18)]);
    let replaced: Vec<Vec<Rank>> = report
        .recoveries
        .iter()
        .map(|r| r.respawned.clone().unwrap().0)
        .collect();
    assert_eq!(replaced, vec![vec![2], vec![5]]);
}

/// A death while the survivors restore redundancy after a respawn (the checkpoint pass that
/// follows it), and deaths inside `validate_global`: each is one more respawn.
#[test]
fn respawn_survives_deaths_during_its_recovery_and_inside_validate_global() {
    for victim in [0, 1, 5] {
        let report = respawned(&[at(3, 12), (victim, KillPoint::Recovery(1))]);
        assert_eq!(report.recoveries.len(), 2, "victim {victim}");
        assert_eq!(
            report.recoveries[1].respawned.as_ref().unwrap().0,
            vec![victim]
        );
    }
    for (rank, call, message) in [(0, 1, 1), (2, 3, 2), (5, 7, 1), (3, 20, 2)] {
        let report = respawned(&[(rank, KillPoint::Agreement { call, message })]);
        assert_eq!(report.recoveries.len(), 1, "kill {rank}@v{call}.{message}");
    }
}

/// A block whose owner and buddy die together is lost with respawn too: every rank says so.
#[test]
fn respawn_of_a_dead_buddy_pair_is_unrecoverable() {
    let error = run(Config {
        respawn: true,
        ..small(&[at(3, 12), at(4, 12)])
    })
    .unwrap_err();
    match error {
        HeatError::Unrecoverable { lost, .. } => assert_eq!(lost.block, 3),
        other => panic!("{other}"),
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Spawning ranks, intercommunicators and non-shrinking recovery, in-process
//! (docs/src/semantics.md §8): what every parent gets, what the new ranks see, and what happens
//! when a rank dies before, during and after.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use runthrough::{Error, Op, RankOutcome, Source};

/// The values the ranks returned, by world rank; panics on a rank that did not return.
fn returned<T: std::fmt::Debug>(outcomes: Vec<RankOutcome<T>>) -> Vec<T> {
    outcomes
        .into_iter()
        .enumerate()
        .map(|(rank, o)| match o {
            RankOutcome::Returned(value) => value,
            other => panic!("rank {rank}: {other:?}"),
        })
        .collect()
}

#[test]
fn a_spawn_gives_every_parent_the_same_intercommunicator_and_the_children_their_parents() {
    let outcomes = runthrough::local(3).run(|world| {
        if let Some(parents) = world.parent() {
            // A child: its own world, its parents as the remote group, the parents' args.
            assert_eq!(
                (world.size(), parents.size(), parents.remote_size()),
                (2, 2, 3)
            );
            assert_eq!(parents.rank(), world.rank());
            assert_eq!(parents.args(), ["a", "b"]);
            assert_eq!(parents.remote_group().world_ranks(), [0, 1, 2]);
            assert_eq!(parents.group().world_ranks(), [3, 4]);
            let mut sum = [0u32];
            world.all_reduce(&[world.rank() + 10], &mut sum, Op::Sum)?;
            // Every parent sends its rank; answer each with its rank times ten.
            for _ in 0..parents.remote_size() {
                let mut got = [0u32];
                let status = parents.recv(&mut got, Source::Any, 1)?;
                assert_eq!(status.source, Some(got[0]));
                parents.send(&[got[0] * 10 + world.rank()], got[0], 2)?;
            }
            return Ok::<_, Error>(vec![sum[0]]);
        }
        let children = world.spawn(2, &["a", "b"])?;
        assert_eq!((children.rank(), children.size()), (world.rank(), 3));
        assert_eq!(children.remote_size(), 2);
        assert_eq!(children.remote_group().world_ranks(), [3, 4]);
        let mut answers = Vec::new();
        for child in 0..2 {
            children.send(&[world.rank()], child, 1)?;
            let mut got = [0u32];
            let status = children.recv(&mut got, child, 2)?;
            assert_eq!(status.source, Some(child));
            answers.push(got[0]);
        }
        Ok(answers)
    });
    assert_eq!(outcomes.len(), 5);
    let values = returned(outcomes);
    for (rank, value) in values.iter().enumerate().take(3) {
        let r = rank as u32;
        assert_eq!(value.as_ref().unwrap(), &vec![r * 10, r * 10 + 1]);
    }
    for value in &values[3..] {
        assert_eq!(value.as_ref().unwrap(), &vec![21]);
    }
}

#[test]
fn merge_orders_the_low_group_first_and_both_groups_compute_together() {
    for children_high in [true, false] {
        let outcomes = runthrough::local(3).run(|world| {
            let (merged, me) = match world.parent() {
                Some(parents) => (parents.merge(children_high)?, 100 + world.rank()),
                None => (world.spawn(2, &[])?.merge(!children_high)?, world.rank()),
            };
            let mut all = [0u32; 5];
            merged.all_gather(&[me], &mut all)?;
            Ok::<_, Error>((merged.rank(), merged.size(), all))
        });
        let values = returned(outcomes);
        let expected = if children_high {
            [0, 1, 2, 100, 101]
        } else {
            [100, 101, 0, 1, 2]
        };
        for (world_rank, value) in values.into_iter().enumerate() {
            let (rank, size, all) = value.unwrap();
            assert_eq!((size, all), (5, expected), "children high: {children_high}");
            let me = if world_rank < 3 {
                world_rank as u32
            } else {
                100 + world_rank as u32 - 3
            };
            assert_eq!(expected[rank as usize], me);
        }
    }
}

#[test]
fn a_parent_that_dies_before_contributing_fails_the_spawn_everywhere_and_no_child_runs() {
    let children_ran = AtomicU32::new(0);
    // Rank 1 dies as it sends its contribution to the spawn's agreement (its first on the
    // world communicator).
    let outcomes = runthrough::local(4)
        .kill_in_agreement(1, 1, 1)
        .run(|world| {
            if world.parent().is_some() {
                children_ran.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            let spawned = world.spawn(3, &[]).map(|_| ());
            // The job goes on: the survivors agree and carry on without rank 1.
            let shrunk = world.shrink()?;
            assert_eq!(shrunk.size(), 3);
            spawned
        });
    assert_eq!(
        children_ran.load(Ordering::SeqCst),
        0,
        "no child ran the program"
    );
    assert!(outcomes[1].is_killed());
    assert_eq!(
        outcomes.len(),
        7,
        "the three children were given world ranks 4..7"
    );
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match rank {
            1 => {}
            0 | 2 | 3 => assert_eq!(
                outcome.returned(),
                Some(Err(Error::ProcFailed { rank: 1 })),
                "parent {rank}"
            ),
            _ => assert!(outcome.is_killed(), "child {rank} was killed"),
        }
    }
}

#[test]
fn a_full_universe_fails_the_spawn_everywhere_and_the_job_goes_on() {
    let outcomes = runthrough::local(3).universe_size(4).run(|world| {
        let refused = world.spawn(2, &[]).map(|_| ());
        world.barrier()?;
        Ok::<_, Error>(refused)
    });
    assert_eq!(outcomes.len(), 3, "no rank was started");
    for value in returned(outcomes) {
        match value.unwrap() {
            Err(Error::Spawn { reason }) => assert!(reason.contains("universe"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn bad_arguments_and_transports_that_cannot_spawn_get_clear_errors() {
    let outcomes = runthrough::local(2).run(|world| world.spawn(0, &[]).map(|_| ()));
    for value in returned(outcomes) {
        assert!(matches!(value, Err(Error::Argument { .. })), "{value:?}");
    }
    let run = runthrough::simulate(2).seed(1).run(|world| {
        let refused = world.spawn(1, &[]).map(|_| ());
        assert!(world.parent().is_none());
        refused
    });
    for value in run.outcomes {
        match value.returned() {
            Some(Err(Error::Spawn { .. })) => {}
            other => panic!("{other:?}"),
        }
    }
    // Programs cannot start in-process: `Spawn` at every parent. A root outside the
    // communicator is `Rank` everywhere; bad programs are `Argument` at the root, `Spawn` at
    // the others; no rank waits for another.
    let program = runthrough::SpawnProgram {
        count: 1,
        argv: vec!["true".into()],
        wdir: None,
    };
    let outcomes = runthrough::local(3).run(move |world| {
        let given = if world.rank() == 0 {
            vec![program.clone()]
        } else {
            Vec::new()
        };
        let refused = world.spawn_programs(&given, 0).map(|_| ());
        let outside = world.spawn_programs(&given, 3).map(|_| ());
        let empty = world.spawn_programs(&[], 2).map(|_| ());
        Ok::<_, Error>((world.rank(), refused, outside, empty))
    });
    for value in returned(outcomes) {
        let (rank, refused, outside, empty) = value.unwrap();
        assert!(
            matches!(&refused, Err(Error::Spawn { reason }) if reason.contains("in-process")),
            "{refused:?}"
        );
        assert!(matches!(outside, Err(Error::Rank { .. })), "{outside:?}");
        match (rank, empty) {
            (2, Err(Error::Argument { .. })) | (0 | 1, Err(Error::Spawn { .. })) => {}
            (rank, other) => panic!("rank {rank}: {other:?}"),
        }
    }
}

#[test]
fn children_see_a_parent_fail_like_any_peer() {
    let outcomes = runthrough::local(2).run(|world| {
        if let Some(parents) = world.parent() {
            let mut got = [0u32];
            // Parent 1 dies without sending: the receive fails naming it as the remote rank 1.
            let error = parents.recv(&mut got, 1u32, 0).unwrap_err();
            return Ok::<_, Error>(Some(error));
        }
        let _children = world.spawn(1, &[])?;
        if world.rank() == 1 {
            panic!("parent 1 dies");
        }
        Ok(None)
    });
    assert!(matches!(outcomes[1], RankOutcome::Panicked(_)));
    assert_eq!(
        outcomes.into_iter().nth(2).unwrap().returned(),
        Some(Ok(Some(Error::ProcFailed { rank: 1 })))
    );
}

#[test]
fn disconnect_ends_the_link_to_the_parents() {
    let outcomes = runthrough::local(2).run(|world| {
        if let Some(parents) = world.parent() {
            let again = world.parent().expect("every call gives the link");
            drop(again); // dropping a handle keeps the link
            parents.send(&[1u8], 0, 0)?;
            parents.disconnect()?;
            return Ok::<_, Error>(world.parent().is_none());
        }
        let children = world.spawn(1, &[])?;
        if world.rank() == 0 {
            let mut got = [0u8];
            children.recv(&mut got, 0u32, 0)?;
        }
        children.disconnect()?;
        Ok(true)
    });
    assert!(returned(outcomes).into_iter().all(|v| v == Ok(true)));
}

/// What a rank of the recovered communicator saw: its rank, its size, the sum of the ranks,
/// whether it is a replacement.
type Recovered = (u32, u32, u32, bool);

/// Runs the recovery program: every rank of the recovered communicator returns (its rank, its
/// size, the sum of the ranks) and whether it is a replacement.
fn recover(
    universe: runthrough::LocalUniverse,
    before_join: impl Fn(&runthrough::Comm) + Sync,
) -> Vec<RankOutcome<runthrough::Result<Recovered>>> {
    universe.run(|world| {
        // ANCHOR: respawn
        let (comm, replacement) = match world.parent() {
            Some(parents) => {
                before_join(world);
                (parents.join_respawn()?, true)
            }
            None => {
                let _ = world.barrier(); // a rank dies here
                (world.respawn()?, false)
            }
        };
        let mut sum = [0u32];
        comm.all_reduce(&[comm.rank()], &mut sum, Op::Sum)?;
        // ANCHOR_END: respawn
        Ok((comm.rank(), comm.size(), sum[0], replacement))
    })
}

#[test]
fn respawn_keeps_the_size_and_every_survivor_its_number() {
    let outcomes = recover(runthrough::local(5).kill_at_operation(3, 1), |_| {});
    assert_eq!(outcomes.len(), 6);
    for (world_rank, outcome) in outcomes.into_iter().enumerate() {
        match world_rank {
            3 => assert!(outcome.is_killed()),
            5 => assert_eq!(outcome.returned(), Some(Ok((3, 5, 10, true)))),
            r => assert_eq!(outcome.returned(), Some(Ok((r as u32, 5, 10, false)))),
        }
    }
}

#[test]
fn a_replacement_that_dies_before_joining_is_replaced_again() {
    let handle = Mutex::new(None::<runthrough::FaultHandle>);
    let universe = runthrough::local(4).kill_at_operation(1, 1);
    *handle.lock().unwrap() = Some(universe.fault_handle());
    let outcomes = recover(universe, |world| {
        // The first replacement (world rank 4) dies before it joins.
        if world.group().world_ranks() == [4] {
            handle.lock().unwrap().as_ref().unwrap().kill(4);
        }
    });
    assert_eq!(outcomes.len(), 6);
    for (world_rank, outcome) in outcomes.into_iter().enumerate() {
        match world_rank {
            1 | 4 => assert!(outcome.is_killed(), "{world_rank}"),
            5 => assert_eq!(outcome.returned(), Some(Ok((1, 4, 6, true)))),
            r => assert_eq!(outcome.returned(), Some(Ok((r as u32, 4, 6, false)))),
        }
    }
}

#[test]
fn two_deaths_during_one_recovery_are_both_replaced() {
    // Rank 2 dies before the barrier; rank 0 dies in the recovery's first agreement (its
    // shrink), as it sends its first message there.
    let universe = runthrough::local(5)
        .kill_at_operation(2, 1)
        .kill_in_agreement(0, 1, 1);
    let outcomes = recover(universe, |_| {});
    let mut replacements = Vec::new();
    for (world_rank, outcome) in outcomes.into_iter().enumerate() {
        match world_rank {
            0 | 2 => assert!(outcome.is_killed(), "{world_rank}"),
            1 | 3 | 4 => assert_eq!(
                outcome.returned(),
                Some(Ok((world_rank as u32, 5, 10, false)))
            ),
            _ => match outcome {
                RankOutcome::Returned(Ok((rank, 5, 10, true))) => replacements.push(rank),
                // A replacement of an attempt that met a death, if there was one.
                RankOutcome::Returned(Err(_)) | RankOutcome::Killed => {}
                other => panic!("replacement {world_rank}: {other:?}"),
            },
        }
    }
    replacements.sort();
    assert_eq!(replacements, [0, 2]);
}

#[test]
fn respawn_with_a_full_universe_is_a_clear_error_and_the_job_goes_on_shrunk() {
    let outcomes = runthrough::local(4)
        .universe_size(4)
        .kill_at_operation(2, 1)
        .run(|world| {
            let _ = world.barrier();
            match world.respawn() {
                Err(Error::Spawn { .. }) => {}
                other => panic!("{other:?}"),
            }
            let shrunk = world.shrink()?;
            let mut sum = [0u32];
            shrunk.all_reduce(&[1u32], &mut sum, Op::Sum)?;
            Ok::<_, Error>(sum[0])
        });
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        if rank == 2 {
            assert!(outcome.is_killed());
        } else {
            assert_eq!(outcome.returned(), Some(Ok(3)));
        }
    }
}

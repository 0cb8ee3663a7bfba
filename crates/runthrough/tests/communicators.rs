// SPDX-License-Identifier: MIT OR Apache-2.0
//! Communicators (SPEC §3.4): `dup`, `split`, `create` with groups, `free`; creation agreed by
//! all participants; each communicator with its own views; a failure seen in every
//! communicator that holds the rank.

mod collective_reference;
mod support;

use collective_reference::{check, Kind, ALL};
use runthrough::{Comm, Error, GroupComparison, Op, Rank, RankState};
use support::{bounded, outcomes};

/// Waits (without sleeping) until this rank's detector knows that `rank` of `comm` died.
fn learn_death(comm: &Comm, rank: Rank) {
    let mut nothing = [0u8];
    assert_eq!(
        comm.recv(&mut nothing, rank, 999),
        Err(Error::ProcFailed { rank })
    );
}

/// Every world rank of `comm`, gathered over `comm` itself: what the members really agree on.
fn members_by_gather(comm: &Comm) -> Vec<u32> {
    let mut all = vec![u32::MAX; comm.size() as usize];
    let me = comm.group().world_ranks()[comm.rank() as usize];
    comm.all_gather(&[me], &mut all).unwrap();
    all
}

/// SPEC §3.4 "split and create contain only ranks that took part" and §3.3 "participants are
/// the OK ranks of G": broadcast and scatter (and every other collective) on a sub-communicator
/// that excludes the dead rank succeed with the reference results, while the world, which holds
/// it, reports `ProcFailed`.
#[test]
fn collectives_on_a_sub_communicator_that_excludes_the_dead_rank_succeed() {
    bounded(|| {
        let n = 6;
        let dead = 5;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let group = world.group().excl(&[dead])?;
            let sub = world.create(&group)?;
            if world.rank() == dead {
                assert!(sub.is_none());
                faults.kill(dead);
                world.barrier()?; // unwinds
            }
            let sub = sub.expect("a member");
            learn_death(world, dead);
            assert_eq!(world.barrier(), Err(Error::ProcFailed { rank: dead }));
            let everyone: Vec<Rank> = (0..sub.size()).collect();
            for root in [0, 3] {
                check(&sub, Kind::Broadcast, root, &everyone)?;
                check(&sub, Kind::Scatter, root, &everyone)?;
                check(&sub, Kind::ScatterVarcount, root, &everyone)?;
            }
            for &kind in ALL {
                check(&sub, kind, 1, &everyone)?;
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.4 "each communicator has its own L and G" and §2.1 "calls on different
/// communicators are independent": two threads of each rank, one per communicator. On the dup
/// of the world (which holds the dead rank) collectives fail and the thread recovers with
/// `validate_global`; concurrently, all-reduces on a split that excludes the dead rank keep
/// succeeding with the reference sum.
#[test]
fn a_failing_collective_on_one_communicator_does_not_disturb_a_concurrent_one() {
    bounded(|| {
        let n = 5;
        let dead = 4;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let whole = world.dup()?;
            let color = (world.rank() != dead).then_some(0);
            let part = world.split(color, 0)?;
            if world.rank() == dead {
                faults.kill(dead);
                world.barrier()?; // unwinds
            }
            let part = part.expect("a member");
            learn_death(world, dead);
            std::thread::scope(|scope| {
                let failing = scope.spawn(|| {
                    assert_eq!(whole.barrier(), Err(Error::ProcFailed { rank: dead }));
                    let mut sum = [0u32];
                    assert_eq!(
                        whole.all_reduce(&[1u32], &mut sum, Op::Sum),
                        Err(Error::ProcFailed { rank: dead })
                    );
                    let g = whole.validate_global()?;
                    assert_eq!(g.state_of(dead), Some(RankState::NULL | RankState::NEW));
                    whole.all_reduce(&[world.rank() + 1], &mut sum, Op::Sum)?;
                    assert_eq!(sum[0], 1 + 2 + 3 + 4);
                    Ok::<_, Error>(())
                });
                for round in 0..20u32 {
                    let mut sum = [0u32];
                    part.all_reduce(&[world.rank() + round], &mut sum, Op::Sum)?;
                    assert_eq!(sum[0], (1 + 2 + 3) + 4 * round);
                }
                failing.join().unwrap()
            })?;
            // The world's views were not touched by the dup's validate_global.
            assert_eq!(world.global_view()?.num_failed(), 0);
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.4 "creation embeds an agreement ... it fails with ProcFailed at every returning
/// participant when a participant failed before contributing": rank 3 dies entering `dup`;
/// every survivor gets `ProcFailed { rank: 3 }`. Then the failure is known at entry to `split`
/// and `create` ("a participant knew at entry of a failed participant not in G"): they fail
/// the same way everywhere. After `validate_global` all three succeed without rank 3.
#[test]
fn creation_fails_uniformly_when_a_participant_died_before_contributing() {
    bounded(|| {
        let n = 5;
        let dead = 3;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                assert_eq!(
                    world.dup().map(|_| ()),
                    Err(Error::ProcFailed { rank: dead })
                );
                assert_eq!(
                    world.split(Some(0), 0).map(|_| ()),
                    Err(Error::ProcFailed { rank: dead })
                );
                let group = world.group();
                assert_eq!(
                    world.create(&group).map(|_| ()),
                    Err(Error::ProcFailed { rank: dead })
                );
                world.validate_global()?;
                let dup = world.dup()?;
                assert_eq!(dup.size(), n);
                let split = world.split(Some(0), 0)?.unwrap();
                assert_eq!(split.group().world_ranks(), &[0, 1, 2, 4]);
                let created = world.create(&group)?.unwrap();
                assert_eq!(created.group().world_ranks(), &[0, 1, 2, 4]);
                assert_eq!(members_by_gather(&created), vec![0, 1, 2, 4]);
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.4 "otherwise all get the same communicator (which may hold ranks that failed
/// meanwhile: they will show up in its detector)" and "a failure is a failure in every
/// communicator that holds the rank": rank 2 dies right after its `split` returned; every
/// survivor's new communicator holds it, and reports its failure.
#[test]
fn a_rank_that_dies_after_contributing_is_a_member_and_its_failure_shows() {
    bounded(|| {
        let n = 6;
        let dead = 2;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let half = world.split(Some(world.rank() % 2), 0)?.unwrap();
            let twin = world.dup()?;
            if world.rank() == dead {
                faults.kill(dead);
                world.barrier()?; // unwinds
            }
            if world.rank() % 2 == 0 {
                assert_eq!(half.group().world_ranks(), &[0, 2, 4]);
                learn_death(&half, 1); // rank 1 of the even half is world rank 2
                assert_eq!(half.barrier(), Err(Error::ProcFailed { rank: 1 }));
                let local = half.validate_local()?;
                assert_eq!(local.state_of(1), Some(RankState::FAILED | RankState::NEW));
            }
            learn_death(&twin, dead);
            learn_death(world, dead);
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.4 "dup keeps size, numbering and the parent's G (its ranks NULL|OLD in both
/// views)", and "each communicator has its own L and G": a NULL rank of the parent is NULL|OLD
/// in the dup's G and L, behaves as MPI_PROC_NULL there, and a later failure validated on the
/// dup changes neither of the world's views.
#[test]
fn dup_keeps_the_parents_g_as_null_old() {
    bounded(|| {
        let n = 5;
        let (first, second) = (2, 4);
        let universe = runthrough::local(n).kill_at_operation(first, 1);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            world.validate_global()?; // `first` dies entering it
            let dup = world.dup()?;
            assert_eq!((dup.size(), dup.rank()), (world.size(), world.rank()));
            assert_eq!(
                dup.group().compare(&world.group()),
                GroupComparison::Identical
            );
            for view in [dup.global_view()?, dup.local_view()?] {
                assert_eq!(view.num_failed(), 1);
                assert_eq!(view.state_of(first), Some(RankState::NULL | RankState::OLD));
                assert!(!view.new_failures());
            }
            let mut buf = [7u8];
            let status = dup.recv(&mut buf, first, 0)?;
            assert_eq!((status.source, buf[0]), (None, 7), "MPI_PROC_NULL");
            dup.barrier()?;
            // `second` dies once every other survivor is past the barrier.
            if world.rank() == second {
                for _ in 0..n - 2 {
                    world.recv(&mut [0u8], runthrough::Source::Any, 5)?;
                }
                faults.kill(second);
                world.barrier()?; // unwinds
            } else {
                world.send(&[0u8], second, 5)?;
            }
            learn_death(&dup, second);
            let g = dup.validate_global()?;
            assert_eq!(g.state_of(first), Some(RankState::NULL | RankState::OLD));
            assert_eq!(g.state_of(second), Some(RankState::NULL | RankState::NEW));
            assert_eq!(world.global_view()?.num_failed(), 1);
            assert_eq!(world.local_view()?.num_failed(), 1);
            assert_eq!(
                world.validate_local()?.state_of(second),
                Some(RankState::FAILED | RankState::NEW)
            );
            Ok::<_, Error>(())
        });
        outcomes(results, &[first, second]);
    });
}

/// SPEC §3.4 `split(color, key)` (MPI-4.0 §7.4.2): ranks of one color, ordered by key then by
/// parent rank; `None` gets no communicator; ranks recognized as failed are in none. Checked
/// against a sequential reference, and by an all-gather on each new communicator.
#[test]
fn split_orders_by_color_then_key_then_rank() {
    bounded(|| {
        let n = 9;
        let dead = 6;
        let color_of = |r: u32| (r != 7).then_some(r % 3);
        let key_of = |r: u32| ((r * 5) % 4) as i32 - 1;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                world.validate_global()?; // rank 6 dies entering it
                let me = world.rank();
                let part = world.split(color_of(me), key_of(me))?;
                let Some(color) = color_of(me) else {
                    assert!(part.is_none());
                    return Ok(());
                };
                let part = part.unwrap();
                let mut expected: Vec<(i32, u32)> = (0..n)
                    .filter(|&r| r != dead && color_of(r) == Some(color))
                    .map(|r| (key_of(r), r))
                    .collect();
                expected.sort();
                let expected: Vec<u32> = expected.into_iter().map(|(_, r)| r).collect();
                assert_eq!(part.group().world_ranks(), &expected[..]);
                assert_eq!(members_by_gather(&part), expected);
                assert_eq!(
                    part.rank() as usize,
                    expected.iter().position(|&r| r == me).unwrap()
                );
                assert_eq!(part.global_view()?.num_failed(), 0);
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.4 `create(group)` with the group algebra (MPI-4.0 §7.3): the new communicator
/// holds the group's processes in the group's order; processes outside it get `None`; a group
/// with a process outside the parent is an argument error.
#[test]
fn create_follows_the_groups_order() {
    bounded(|| {
        let n = 7;
        let results = runthrough::local(n).run(|world| {
            let all = world.group();
            let low = all.incl(&[4, 3, 2, 1])?;
            let odd = all.incl(&[1, 3, 5])?;
            let group = low.difference(&odd).union(&all.incl(&[6, 3])?);
            assert_eq!(group.world_ranks(), &[4, 2, 6, 3]);
            let created = world.create(&group)?;
            match group.rank() {
                None => assert!(created.is_none()),
                Some(rank) => {
                    let created = created.unwrap();
                    assert_eq!((created.rank(), created.size()), (rank, 4));
                    assert_eq!(members_by_gather(&created), vec![4, 2, 6, 3]);
                    assert_eq!(created.group().compare(&group), GroupComparison::Identical);
                    // A creation on the new communicator, with a group of its own ranks.
                    let pair = created.group().incl(&[3, 0])?;
                    let inner = created.create(&pair)?;
                    assert_eq!(inner.is_some(), [4, 3].contains(&world.rank()));
                    if let Some(inner) = inner {
                        assert_eq!(members_by_gather(&inner), vec![3, 4]);
                    }
                    let outsider = all.incl(&[0])?;
                    assert!(matches!(
                        created.create(&outsider),
                        Err(Error::Argument { .. })
                    ));
                }
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.4 "free never blocks on, or reports, failed ranks" and creation under load: many
/// communicators are made, used at once by their fastest members (traffic that arrives before a
/// slower member has installed the communicator is kept for it), and freed, with a dead member
/// in some of them.
#[test]
fn communicators_are_made_used_at_once_and_freed() {
    bounded(|| {
        let n = 4;
        let dead = 3;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            for round in 0..30u32 {
                let dup = world.dup()?;
                let next = (dup.rank() + 1) % n;
                let previous = (dup.rank() + n - 1) % n;
                dup.send(&[round], next, 1)?;
                let mut got = [0u32];
                dup.recv(&mut got, previous, 1)?;
                assert_eq!(got[0], round);
                let mut sum = [0u32];
                dup.all_reduce(&[round], &mut sum, Op::Sum)?;
                assert_eq!(sum[0], n * round);
                if round % 2 == 0 {
                    dup.free()?;
                }
            }
            let keep = world.dup()?;
            if world.rank() == dead {
                faults.kill(dead);
                world.barrier()?; // unwinds
            }
            learn_death(world, dead);
            keep.free()?; // never blocks on the dead member
            world.validate_global()?;
            let after = world.dup()?;
            after.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// `idup` (`MPI_Comm_idup`): two pending on one communicator, with a collective, a blocking
/// `dup` and point-to-point traffic while they are pending, and waited for in the reverse
/// order at odd ranks: each request gives the same communicator at every rank (traffic sent
/// on the first arrives on the first), and the blocking `dup` queued behind them.
#[test]
fn pending_idups_end_in_call_order_beside_other_calls() {
    bounded(|| {
        let n = 4;
        let results = runthrough::local(n).run(|world| {
            let mut first = world.idup()?;
            let mut second = world.idup()?;
            let mut sum = [0u32];
            world.all_reduce(&[world.rank()], &mut sum, Op::Sum)?;
            assert_eq!(sum[0], n * (n - 1) / 2);
            let third = world.dup()?;
            let next = (world.rank() + 1) % n;
            let previous = (world.rank() + n - 1) % n;
            world.send(&[world.rank()], next, 5)?;
            let mut got = [0u32];
            world.recv(&mut got, previous, 5)?;
            assert_eq!(got[0], previous);
            let (a, b) = if world.rank() % 2 == 1 {
                let b = second.wait()?;
                (first.wait()?, b)
            } else {
                let a = first.wait()?;
                (a, second.wait()?)
            };
            for (tag, comm) in [(1u32, &a), (2, &b), (3, &third)] {
                assert_eq!((comm.size(), comm.rank()), (n, world.rank()));
                comm.send(&[tag * 100 + world.rank()], next, 0)?;
            }
            for (tag, comm) in [(3u32, &third), (2, &b), (1, &a)] {
                let mut got = [0u32];
                comm.recv(&mut got, previous, 0)?;
                assert_eq!(got[0], tag * 100 + previous, "communicator {tag}");
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.4's uniform outcome for `idup`: a rank dead before its first call makes every
/// survivor's pending `idup` fail with `ProcFailed` naming it, and after `validate_global` an
/// `idup` succeeds; a rank that dies after starting two `idup`s (inside the first one's
/// agreement, the second waiting for it) leaves every survivor with the same outcome of each:
/// the communicator, or `ProcFailed` naming it.
#[test]
fn idup_fails_or_succeeds_alike_at_every_survivor_when_a_rank_dies() {
    bounded(|| {
        let n = 5;
        let dead = 3;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                let mut request = world.idup()?;
                assert_eq!(
                    request.wait().map(|_| ()),
                    Err(Error::ProcFailed { rank: dead })
                );
                world.validate_global()?;
                // The dup keeps the numbering; the dead rank is NULL there (nothing gathered).
                let twin = world.idup()?.wait()?;
                assert_eq!(members_by_gather(&twin), vec![0, 1, 2, u32::MAX, 4]);
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);

        let late = 1;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let mut first = world.idup()?;
            let mut second = world.idup()?;
            if world.rank() == late {
                faults.kill(late);
                world.barrier()?; // unwinds
            }
            let outcome = |made: Result<Comm, Error>| made.map(|comm| comm.size());
            Ok::<_, Error>((outcome(first.wait()), outcome(second.wait())))
        });
        let seen: Vec<_> = outcomes(results, &[late]).into_iter().flatten().collect();
        assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
        let dead = Err(Error::ProcFailed { rank: late });
        assert!([Ok(n), dead.clone()].contains(&seen[0].0), "{seen:?}");
        assert!([Ok(n), dead].contains(&seen[0].1), "{seen:?}");
    });
}

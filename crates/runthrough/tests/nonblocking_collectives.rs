// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking collectives (`ibarrier`, `ibroadcast`, `ireduce`, `iall_reduce`, the gathers,
//! scatters and all-to-all, with their varcount forms): the engine
//! runs them as their messages arrive, so they progress while the caller does something
//! else; several may be outstanding in call order; failures end them as they end blocking
//! collectives (docs/src/semantics.md §3.3); bad arguments get a clear error before anything is
//! sent.

mod support;

use runthrough::{Comm, Error, Op, Partition, PartitionMut, Rank, RankOutcome};
use support::{bounded, outcomes};

/// Every kind at once, outstanding together with a blocking collective between them, for
/// 1 to 8 ranks and every root: each gives what its blocking counterpart gives.
#[test]
fn outstanding_calls_in_call_order_give_the_blocking_results() {
    bounded(|| {
        for n in 1..=8u32 {
            for root in 0..n {
                let results = runthrough::local(n).run(move |world| {
                    let me = world.rank();
                    let mut bcast = [0u32; 3];
                    if me == root {
                        bcast = [7, 8, root];
                    }
                    let floats = [0.1 * (me as f64 + 1.0), -1.5 * me as f64];
                    let mut reduced = [0i64; 2];
                    let mut all_floats = [0f64; 2];
                    let mut all_max = [0u16];
                    let mut barrier = world.ibarrier()?;
                    let mut b = world.ibroadcast(&mut bcast, root)?;
                    let mut r = world.ireduce(
                        &[me as i64, -(me as i64)],
                        (me == root).then_some(&mut reduced[..]),
                        Op::Sum,
                        root,
                    )?;
                    let mut a = world.iall_reduce(&floats, &mut all_floats, Op::Sum)?;
                    // A blocking collective between them takes the next number.
                    let mut blocking = [0f64; 2];
                    world.all_reduce(&floats, &mut blocking, Op::Sum)?;
                    let mut m = world.iall_reduce(&[me as u16 * 3], &mut all_max, Op::Max)?;
                    // Completed out of call order.
                    m.wait()?;
                    a.wait()?;
                    r.wait()?;
                    b.wait()?;
                    barrier.wait()?;
                    assert_eq!(barrier.test(), Err(Error::Request), "completes once");
                    drop((barrier, b, r, a, m));
                    Ok::<_, Error>((bcast, reduced, all_floats, blocking, all_max))
                });
                let values = outcomes(results, &[]);
                let sum: i64 = (0..n as i64).sum();
                let first = values[0].as_ref().unwrap().2;
                for (rank, value) in values.iter().enumerate() {
                    let (bcast, reduced, all_floats, blocking, all_max) = value.unwrap();
                    assert_eq!(bcast, [7, 8, root], "n {n} root {root} rank {rank}");
                    if rank as u32 == root {
                        assert_eq!(reduced, [sum, -sum]);
                    } else {
                        assert_eq!(reduced, [0, 0], "only the root's buffer is written");
                    }
                    assert_eq!(all_floats, first, "every rank the very same bytes");
                    for (x, y) in all_floats.iter().zip(blocking) {
                        assert!((x - y).abs() < 1e-9, "n {n}: {all_floats:?} {blocking:?}");
                    }
                    assert_eq!(all_max, [(n as u16 - 1) * 3]);
                }
            }
        }
    });
}

/// Gather, scatter, all-gather and all-to-all outstanding together give what their blocking
/// counterparts give, for 1 to 8 ranks and every root.
#[test]
fn block_collectives_give_the_blocking_results() {
    bounded(|| {
        for n in 1..=8u32 {
            for root in 0..n {
                let results = runthrough::local(n).run(move |world| {
                    let (me, size) = (world.rank(), world.size() as usize);
                    let mine = [me * 10, me * 10 + 1];
                    let table: Vec<u32> = (0..size as u32 * 2).map(|x| x + 100 * root).collect();
                    let outgoing: Vec<u16> =
                        (0..size as u16 * 3).map(|x| x + 1000 * me as u16).collect();
                    let (mut g, mut sc, mut ag, mut aa) = (
                        vec![0u32; size * 2],
                        [0u32; 2],
                        vec![0u32; size * 2],
                        vec![0u16; size * 3],
                    );
                    let mut requests = vec![
                        world.igather(&mine, (me == root).then_some(&mut g[..]), root)?,
                        world.iscatter((me == root).then_some(&table[..]), &mut sc, root)?,
                        world.iall_gather(&mine, &mut ag)?,
                        world.ialltoall(&outgoing, &mut aa)?,
                    ];
                    for request in requests.iter_mut().rev() {
                        request.wait()?;
                    }
                    drop(requests);
                    let (mut bg, mut bsc, mut bag, mut baa) = (
                        vec![0u32; size * 2],
                        [0u32; 2],
                        vec![0u32; size * 2],
                        vec![0u16; size * 3],
                    );
                    world.gather(&mine, (me == root).then_some(&mut bg[..]), root)?;
                    world.scatter((me == root).then_some(&table[..]), &mut bsc, root)?;
                    world.all_gather(&mine, &mut bag)?;
                    world.all_to_all(&outgoing, &mut baa)?;
                    assert_eq!(
                        (&g, sc, &ag, &aa),
                        (&bg, bsc, &bag, &baa),
                        "n {n} root {root} rank {me}"
                    );
                    Ok::<_, Error>((g, sc, aa))
                });
                for (rank, value) in outcomes(results, &[]).into_iter().enumerate() {
                    let (g, sc, aa) = value.unwrap();
                    if rank as u32 == root {
                        let expected: Vec<u32> =
                            (0..n).flat_map(|r| [r * 10, r * 10 + 1]).collect();
                        assert_eq!(g, expected);
                    }
                    let r = rank as u32;
                    assert_eq!(sc, [2 * r + 100 * root, 2 * r + 1 + 100 * root]);
                    let expected: Vec<u16> = (0..n as u16)
                        .flat_map(|from| (0..3).map(move |k| 3 * rank as u16 + k + 1000 * from))
                        .collect();
                    assert_eq!(aa, expected, "rank {rank}");
                }
            }
        }
    });
}

/// The varcount forms (`igather_varcount`, `iscatter_varcount`, `iall_gather_varcount`,
/// `ialltoall_varcount`), outstanding together, for 1 to 6 ranks and every root: rank r's
/// block has r + 1 elements (rank 2's none), the blocks lie in reverse rank order with a gap
/// of one element before each, and the gaps are left as they were. The gather and scatter
/// give what the blocking `gather_varcount` / `scatter_varcount` give; a root may keep its
/// scatter block in place (no `recv`).
#[test]
fn varcount_collectives_place_every_block_and_leave_the_gaps() {
    bounded(|| {
        for n in 1..=6u32 {
            for root in 0..n {
                let results = runthrough::local(n).run(move |world| {
                    let me = world.rank();
                    let size = n as usize;
                    let count = |r: usize| if r == 2 { 0 } else { r + 1 };
                    let counts: Vec<usize> = (0..size).map(count).collect();
                    // Reverse order, a gap before each block.
                    let mut displs = vec![0; size];
                    let mut at = 0;
                    for r in (0..size).rev() {
                        displs[r] = at + 1;
                        at += 1 + counts[r];
                    }
                    let len = at;
                    let mine: Vec<i64> = (0..count(me as usize))
                        .map(|k| 100 * me as i64 + k as i64)
                        .collect();
                    let table: Vec<i64> = (0..len as i64).map(|x| x + 1000 * root as i64).collect();
                    let (mut g, mut ag, mut aa) =
                        (vec![-1i64; len], vec![-1i64; len], vec![-1i64; len]);
                    let mut sc = vec![-1i64; count(me as usize)];
                    // All-to-all: this rank sends each rank a block of its own count, the
                    // blocks one after the other.
                    let to: Vec<i64> = (0..(size * count(me as usize)) as i64)
                        .map(|x| x + 10_000 * me as i64)
                        .collect();
                    let send_counts: Vec<usize> = vec![count(me as usize); size];
                    let send_displs: Vec<usize> =
                        (0..size).map(|j| j * count(me as usize)).collect();
                    let mut requests = vec![
                        world.igather_varcount(
                            &mine,
                            (me == root).then(|| PartitionMut::new(&mut g, &counts, &displs)),
                            root,
                        )?,
                        world.iscatter_varcount(
                            (me == root).then(|| Partition::new(&table, &counts, &displs)),
                            Some(&mut sc),
                            root,
                        )?,
                        world.iall_gather_varcount(
                            &mine,
                            PartitionMut::new(&mut ag, &counts, &displs),
                        )?,
                        world.ialltoall_varcount(
                            Partition::new(&to, &send_counts, &send_displs),
                            PartitionMut::new(&mut aa, &counts, &displs),
                        )?,
                    ];
                    for request in requests.iter_mut().rev() {
                        request.wait()?;
                    }
                    drop(requests);
                    // In place at the root: nothing written there, the others as before.
                    let mut sc_again = vec![-1i64; count(me as usize)];
                    world
                        .iscatter_varcount(
                            (me == root).then(|| Partition::new(&table, &counts, &displs)),
                            (me != root).then_some(&mut sc_again[..]),
                            root,
                        )?
                        .wait()?;
                    let (mut bg, mut bsc) = (vec![-1i64; len], vec![-1i64; count(me as usize)]);
                    world.gather_varcount(
                        &mine,
                        (me == root).then(|| PartitionMut::new(&mut bg, &counts, &displs)),
                        root,
                    )?;
                    world.scatter_varcount(
                        (me == root).then(|| Partition::new(&table, &counts, &displs)),
                        &mut bsc,
                        root,
                    )?;
                    assert_eq!((&g, &sc), (&bg, &bsc), "n {n} root {root} rank {me}");
                    if me == root {
                        assert_eq!(sc_again, vec![-1; count(me as usize)]);
                    } else {
                        assert_eq!(sc_again, sc);
                    }
                    Ok::<_, Error>((g, sc, ag, aa, counts, displs))
                });
                for (rank, value) in outcomes(results, &[]).into_iter().enumerate() {
                    let (g, sc, ag, aa, counts, displs) = value.unwrap();
                    let mut gathered = vec![-1i64; g.len()];
                    let mut exchanged = vec![-1i64; g.len()];
                    for r in 0..n as usize {
                        for k in 0..counts[r] {
                            gathered[displs[r] + k] = 100 * r as i64 + k as i64;
                            // Rank r's block to this rank: its elements at rank * counts[r].
                            exchanged[displs[r] + k] =
                                (rank * counts[r] + k) as i64 + 10_000 * r as i64;
                        }
                    }
                    if rank as u32 == root {
                        assert_eq!(g, gathered, "gather n {n} root {root}");
                    } else {
                        assert!(g.iter().all(|&x| x == -1), "a non-root's gather buffer");
                    }
                    assert_eq!(ag, gathered, "all_gather n {n} rank {rank}");
                    assert_eq!(aa, exchanged, "all_to_all n {n} rank {rank}");
                    let want: Vec<i64> = (0..counts[rank])
                        .map(|k| (displs[rank] + k) as i64 + 1000 * root as i64)
                        .collect();
                    assert_eq!(sc, want, "scatter n {n} rank {rank}");
                }
            }
        }
    });
}

/// Scans outstanding together give what the blocking scans give; an exclusive scan leaves the
/// first rank's buffer untouched.
#[test]
fn scans_give_the_blocking_results() {
    bounded(|| {
        for n in 1..=8u32 {
            let results = runthrough::local(n).run(move |world| {
                let me = world.rank();
                let send = [me as i64 + 1, 10 - me as i64];
                let (mut inclusive, mut exclusive) = ([0i64; 2], [-7i64; 2]);
                let mut a = world.iscan(&send, &mut inclusive, Op::Sum)?;
                let mut b = world.iexscan(&send, &mut exclusive, Op::Max)?;
                b.wait()?;
                a.wait()?;
                drop((a, b));
                let (mut blocking_in, mut blocking_ex) = ([0i64; 2], [-7i64; 2]);
                world.scan(&send, &mut blocking_in, Op::Sum)?;
                world.exscan(&send, &mut blocking_ex, Op::Max)?;
                assert_eq!(
                    (inclusive, exclusive),
                    (blocking_in, blocking_ex),
                    "rank {me}"
                );
                Ok::<_, Error>((inclusive, exclusive))
            });
            for (rank, value) in outcomes(results, &[]).into_iter().enumerate() {
                let (inclusive, exclusive) = value.unwrap();
                let r = rank as i64;
                assert_eq!(
                    inclusive,
                    [(r + 1) * (r + 2) / 2, (0..=r).map(|k| 10 - k).sum()]
                );
                if rank == 0 {
                    assert_eq!(exclusive, [-7, -7], "untouched at the first rank");
                } else {
                    assert_eq!(exclusive, [r, 10]);
                }
            }
        }
    });
}

/// After a death and `validate_global`, the block collectives run over the survivors and
/// leave the dead rank's slots as they were.
#[test]
fn block_collectives_leave_the_slots_of_null_ranks_untouched() {
    bounded(|| {
        let (n, dead) = (5u32, 2u32);
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(move |world| {
                if world.rank() == dead {
                    world.barrier()?;
                }
                let mut nothing = [0u8];
                assert_eq!(
                    world.recv(&mut nothing, dead, 9),
                    Err(Error::ProcFailed { rank: dead })
                );
                world.validate_global()?;
                let me = world.rank();
                let mut ag = vec![7u32; n as usize];
                world.iall_gather(&[me + 1], &mut ag)?.wait()?;
                let mut aa = vec![7u32; n as usize];
                let send: Vec<u32> = (0..n).map(|to| me * 10 + to).collect();
                world.ialltoall(&send, &mut aa)?.wait()?;
                let mut g = vec![7u32; n as usize];
                world
                    .igather(&[me], (me == 0).then_some(&mut g[..]), 0)?
                    .wait()?;
                let mut scattered = [0u32];
                let table: Vec<u32> = (0..n).map(|r| r + 50).collect();
                world
                    .iscatter((me == 4).then_some(&table[..]), &mut scattered, 4)?
                    .wait()?;
                // The varcount forms, blocks in reverse rank order.
                let ones = vec![1; n as usize];
                let reverse: Vec<usize> = (0..n as usize).rev().collect();
                let mut vg = vec![7u32; n as usize];
                world
                    .igather_varcount(
                        &[me],
                        (me == 0).then(|| PartitionMut::new(&mut vg, &ones, &reverse)),
                        0,
                    )?
                    .wait()?;
                let mut vag = vec![7u32; n as usize];
                world
                    .iall_gather_varcount(&[me + 1], PartitionMut::new(&mut vag, &ones, &reverse))?
                    .wait()?;
                let mut vaa = vec![7u32; n as usize];
                world
                    .ialltoall_varcount(
                        Partition::new(&send, &ones, &reverse),
                        PartitionMut::new(&mut vaa, &ones, &reverse),
                    )?
                    .wait()?;
                let mut vscattered = [0u32];
                world
                    .iscatter_varcount(
                        (me == 4).then(|| Partition::new(&table, &ones, &reverse)),
                        Some(&mut vscattered[..]),
                        4,
                    )?
                    .wait()?;
                Ok::<_, Error>((ag, aa, g, scattered[0], (vg, vag, vaa, vscattered[0])))
            });
        for (rank, value) in outcomes(results, &[dead]).into_iter().enumerate() {
            let Some((ag, aa, g, scattered, (vg, vag, vaa, vscattered))) = value else {
                continue;
            };
            let r = rank as u32;
            assert_eq!(ag, [1, 2, 7, 4, 5]);
            assert_eq!(aa, [r, 10 + r, 7, 30 + r, 40 + r]);
            if rank == 0 {
                assert_eq!(g, [0, 1, 7, 3, 4]);
                assert_eq!(vg, [4, 3, 7, 1, 0]);
            } else {
                assert_eq!(vg, [7; 5]);
            }
            assert_eq!(scattered, r + 50);
            assert_eq!(vag, [5, 4, 7, 2, 1]);
            // Rank j's block to this rank is send[n - 1 - r] of rank j: j * 10 + (4 - r).
            let from = |j: u32| j * 10 + (n - 1 - r);
            assert_eq!(vaa, [from(4), from(3), 7, from(1), from(0)]);
            assert_eq!(vscattered, (n - 1 - r) + 50);
        }
    });
}

/// The point of a non-blocking collective: it completes while its rank waits for something
/// else. Rank 0 starts a barrier, then waits in a receive for the message rank 1 sends only
/// once its own barrier completed; rank 0's barrier must progress while rank 0 sits in
/// `recv` (with blocking code run by the caller, this deadlocks).
#[test]
fn a_call_progresses_while_its_rank_waits_for_something_else() {
    bounded(|| {
        for n in [2u32, 3, 5, 8] {
            let results = runthrough::local(n).run(|world| {
                let mut barrier = world.ibarrier()?;
                let mut sum = [0u64];
                let mut all = world.iall_reduce(&[1u64], &mut sum, Op::Sum)?;
                if world.rank() == 0 {
                    let mut got = [0u8];
                    world.recv(&mut got, 1, 5)?;
                    assert_eq!(got, [42]);
                } else if world.rank() == 1 {
                    barrier.wait()?;
                    all.wait()?;
                    world.send(&[42u8], 0, 5)?;
                }
                barrier.wait().or_else(|e| match e {
                    Error::Request => Ok(()), // rank 1 took it already
                    other => Err(other),
                })?;
                if !all.is_inactive() {
                    all.wait()?;
                }
                drop(all);
                Ok::<_, Error>(sum[0])
            });
            for sum in outcomes(results, &[]) {
                assert_eq!(sum, Some(n as u64));
            }
        }
    });
}

/// An operation whose function runs outside the engine, on any thread of the rank that is in
/// the library (`PackedOp::unlocked`, what the C library's user operations are): at 3
/// participants, the one at 1 combines 0's contribution before it exchanges with 2, while it
/// is blocked in `recv` for a message that 2 sends only once its all-reduce is done. The
/// combine runs inside that `recv` (without it, nobody progresses: the test's bound fails
/// it). The function runs outside the engine's lock: it may call the library itself.
#[test]
fn an_unlocked_operations_steps_run_in_another_blocking_call() {
    bounded(|| {
        for n in [3u32, 5, 6] {
            let results = runthrough::local(n).run(move |world| {
                let op = runthrough::PackedOp::unlocked(8, false, |input, inout| {
                    let sum = u64::from_le_bytes(input.try_into().unwrap())
                        + u64::from_le_bytes((&*inout).try_into().unwrap());
                    inout.copy_from_slice(&sum.to_le_bytes());
                });
                let mine = (world.rank() as u64 + 1).to_le_bytes();
                let mut sum = [0u8; 8];
                let mut all = world.iall_reduce_packed(&mine, &mut sum, op)?;
                if world.rank() == 1 {
                    let mut got = [0u8];
                    world.recv(&mut got, 2, 5)?;
                    all.wait()?;
                } else {
                    all.wait()?;
                    if world.rank() == 2 {
                        world.send(&[1u8], 1, 5)?;
                    }
                }
                drop(all);
                Ok::<_, Error>(u64::from_le_bytes(sum))
            });
            for sum in outcomes(results, &[]) {
                assert_eq!(sum, Some(u64::from(n * (n + 1) / 2)), "n {n}");
            }
        }
    });
}

/// `test` never blocks: it is false until every rank has started the barrier.
#[test]
fn test_is_false_until_every_rank_started() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            if world.rank() == 2 {
                let mut nothing = [0u8; 0];
                // Start only once the others saw their barrier pending.
                world.recv(&mut nothing, 0, 1)?;
                world.recv(&mut nothing, 1, 1)?;
                world.ibarrier()?.wait()?;
                return Ok(());
            }
            let mut barrier = world.ibarrier()?;
            assert!(!barrier.test()?, "rank 2 has not started it");
            world.send(&[0u8; 0], 2, 1)?;
            barrier.wait()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// Bad input: a clear error at the call, nothing started (the next call still matches).
#[test]
fn bad_arguments_are_errors_before_anything_is_sent() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            let mut buffer = [0u32; 2];
            assert!(matches!(
                world.ibroadcast(&mut buffer, 3),
                Err(Error::Root { .. })
            ));
            let mut floats = [0f32; 2];
            assert!(matches!(
                world.iall_reduce(&[1f32, 2.0], &mut floats, Op::BitXor),
                Err(Error::Argument { .. })
            ));
            let mut short = [0u8; 1];
            assert!(matches!(
                world.iall_reduce(&[1u8, 2], &mut short, Op::Sum),
                Err(Error::Count { .. })
            ));
            if world.rank() == 1 {
                assert!(matches!(
                    world.ireduce(&[1u8], None, Op::Sum, 1),
                    Err(Error::Argument { .. })
                ));
            }
            // The varcount forms: a block past the end of its buffer, a root's own block of
            // another length than its count, a non-root without a receive buffer.
            let mut four = [0u8; 4];
            assert!(matches!(
                world.iall_gather_varcount(
                    &[1u8],
                    PartitionMut::new(&mut four, &[1, 1, 1], &[0, 1, 4])
                ),
                Err(Error::Count { .. })
            ));
            assert!(matches!(
                world.igather_varcount(
                    &[1u8, 2],
                    Some(PartitionMut::new(&mut four, &[1, 1, 1], &[0, 1, 2])),
                    world.rank()
                ),
                Err(Error::Count { .. })
            ));
            assert!(matches!(
                world.ialltoall_varcount(
                    Partition::new(&[1u8, 2, 3], &[1, 1, 1], &[0, 1, 2]),
                    PartitionMut::new(&mut four, &[2, 2, 0], &[0, 2, 4]),
                ),
                Err(Error::Count { .. })
            ));
            if world.rank() != 0 {
                assert!(matches!(
                    world.iscatter_varcount::<u8>(None, None, 0),
                    Err(Error::Argument { .. })
                ));
            }
            // Nothing above took a call number: this one matches at every rank.
            let mut sum = [0u8];
            world.iall_reduce(&[1u8], &mut sum, Op::Sum)?.wait()?;
            assert_eq!(sum, [3]);
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// Ranks that pass different counts (an erroneous program) get `Error::Count` where a block
/// of the wrong length arrives (the blocking calls' contract, docs/src/semantics.md §3.3), and
/// nobody waits forever: the rank with the odd count, and the first participant, where the
/// partial results meet.
#[test]
fn different_counts_are_an_error_and_nobody_hangs() {
    bounded(|| {
        let results = runthrough::local(4).run(|world| {
            let len = if world.rank() == 2 { 3 } else { 2 };
            let send = vec![1u32; len];
            let mut recv = vec![0u32; len];
            let outcome = world.iall_reduce(&send, &mut recv, Op::Sum)?.wait();
            Ok::<_, Error>(outcome)
        });
        let outcomes = outcomes(results, &[]);
        for rank in [0, 2] {
            assert!(
                matches!(outcomes[rank], Some(Err(Error::Count { .. }))),
                "rank {rank}: {:?}",
                outcomes[rank]
            );
        }
    });
}

/// The byte-level forms the C library starts (`iall_reduce_bytes`, `ireduce_bytes`: a C
/// buffer has no alignment guarantee) combine elements wherever their bytes lie, and refuse a
/// buffer that is not a whole number of elements with `Error::Count` before anything is sent.
#[test]
fn byte_level_reductions_take_any_alignment_and_refuse_partial_elements() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            let mine: Vec<u64> = vec![world.rank() as u64 + 1, 10, u64::from(world.rank())];
            let bytes: &[u8] = bytemuck::cast_slice(&mine);
            for offset in 0..8 {
                let mut send = [0u8; 24 + 8];
                send[offset..offset + 24].copy_from_slice(bytes);
                let mut recv = [0xAAu8; 24 + 8];
                world
                    .iall_reduce_bytes::<u64>(
                        &send[offset..offset + 24],
                        &mut recv[offset..offset + 24],
                        Op::Sum,
                    )?
                    .wait()?;
                let sums: Vec<u64> = bytemuck::pod_collect_to_vec(&recv[offset..offset + 24]);
                assert_eq!(sums, [6, 30, 3], "offset {offset}");
                assert!(recv[..offset].iter().all(|&b| b == 0xAA), "offset {offset}");
                assert!(
                    recv[offset + 24..].iter().all(|&b| b == 0xAA),
                    "offset {offset}"
                );
                let mut top = [0xAAu8; 8 + 8];
                let at_root = world.rank() == 1;
                world
                    .ireduce_bytes::<u64>(
                        &send[offset..offset + 8],
                        at_root.then(|| &mut top[offset..offset + 8]),
                        Op::Max,
                        1,
                    )?
                    .wait()?;
                if at_root {
                    let max: Vec<u64> = bytemuck::pod_collect_to_vec(&top[offset..offset + 8]);
                    assert_eq!(max, [3], "offset {offset}");
                }
            }
            let partial = world
                .iall_reduce_bytes::<u64>(&[0u8; 12], &mut [0u8; 12], Op::Sum)
                .map(drop);
            assert!(matches!(partial, Err(Error::Count { .. })), "{partial:?}");
            let partial = world
                .ireduce_bytes::<u32>(&[0u8; 6], Some(&mut [0u8; 6]), Op::Sum, 0)
                .map(drop);
            assert!(matches!(partial, Err(Error::Count { .. })), "{partial:?}");
            // Nothing was sent: the next collective runs as usual.
            world.barrier()
        });
        for outcome in results {
            outcome.returned().expect("returned").expect("no error");
        }
    });
}

/// A participant that died before the call: every survivor's call fails with `ProcFailed`
/// (at the start, or through the request), none waits; after `validate_global` the calls work
/// over the survivors.
#[test]
fn a_death_before_the_call_fails_it_until_validate_global() {
    bounded(|| {
        let (n, dead) = (5u32, 3u32);
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(move |world| {
                if world.rank() == dead {
                    world.barrier()?; // dies entering it
                }
                let mut nothing = [0u8];
                assert_eq!(
                    world.recv(&mut nothing, dead, 9),
                    Err(Error::ProcFailed { rank: dead })
                );
                let mut sum = [0u32];
                let outcome = world
                    .iall_reduce(&[1u32], &mut sum, Op::Sum)
                    .and_then(|mut r| r.wait());
                assert_eq!(outcome, Err(Error::ProcFailed { rank: dead }));
                world.validate_global()?;
                world.iall_reduce(&[1u32], &mut sum, Op::Sum)?.wait()?;
                assert_eq!(sum, [n - 1]);
                let mut root_buffer = [0u8];
                assert_eq!(
                    world.ibroadcast(&mut root_buffer, dead).err(),
                    Some(Error::RootFailed { root: dead })
                );
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// A participant that dies in the middle of each call, at each of its messages: no survivor
/// is left waiting; each gets the right value or `ProcFailed`; after `validate_global` the
/// survivors agree again. At 6 ranks the barrier is dissemination and the all-reduce pairs
/// ranks 0..3 before its exchanges (rank 0 hands its data to rank 1 and waits for the result
/// from it); at 8 ranks the barrier is a pairwise exchange (the blocking call too, whose
/// victim's count is the same collective's) and the all-reduce has no pairing.
#[test]
fn a_death_during_the_call_leaves_nobody_blocked() {
    bounded(|| {
        for (n, operation, victim) in [
            (6u32, "barrier", 4u32),
            (8, "barrier", 5),
            (8, "blocking barrier", 2),
            (6, "broadcast", 0),
            (6, "broadcast", 2),
            (6, "reduce", 1),
            (6, "all_reduce", 0),
            (6, "all_reduce", 1),
            (6, "all_reduce", 5),
            (8, "all_reduce", 3),
            (6, "gather", 3),
            (6, "scatter", 0),
            (6, "all_gather", 2),
            (6, "all_to_all", 1),
            (6, "gather_varcount", 0),
            (6, "gather_varcount", 4),
            (6, "scatter_varcount", 0),
            (6, "scatter_varcount", 3),
            (6, "all_gather_varcount", 5),
            (6, "all_to_all_varcount", 2),
            (6, "reduce_scatter", 0),
            (6, "reduce_scatter", 4),
        ] {
            let killed_in = match operation {
                "reduce_scatter" => "all_reduce",
                other => other
                    .trim_start_matches("blocking ")
                    .trim_end_matches("_varcount"),
            };
            for message in 0..=3 {
                let results = runthrough::local(n)
                    .kill_in_collective(victim, killed_in, 1, message)
                    .run(move |world| {
                        let me = world.rank();
                        let mut value = [me as u64 + 1];
                        let outcome = match operation {
                            "barrier" => world.ibarrier().and_then(|mut r| r.wait()),
                            "blocking barrier" => world.barrier(),
                            "broadcast" => {
                                world.ibroadcast(&mut value, 0).and_then(|mut r| r.wait())
                            }
                            "reduce" => {
                                let send = value;
                                let recv = (me == 0).then_some(&mut value[..]);
                                world
                                    .ireduce(&send, recv, Op::Sum, 0)
                                    .and_then(|mut r| r.wait())
                            }
                            "all_reduce" => {
                                let send = value;
                                world
                                    .iall_reduce(&send, &mut value, Op::Sum)
                                    .and_then(|mut r| r.wait())
                            }
                            "gather" => {
                                let mut all = vec![0u64; n as usize];
                                world
                                    .igather(&value, (me == 0).then_some(&mut all[..]), 0)
                                    .and_then(|mut r| r.wait())
                            }
                            "scatter" => {
                                let table = vec![5u64; n as usize];
                                let send = value;
                                world
                                    .iscatter((me == 0).then_some(&table[..]), &mut value, 0)
                                    .and_then(|mut r| r.wait())
                                    .map(|()| assert_eq!(value, [5], "{send:?}"))
                            }
                            "all_gather" => {
                                let mut all = vec![0u64; n as usize];
                                world
                                    .iall_gather(&value, &mut all)
                                    .and_then(|mut r| r.wait())
                            }
                            "reduce_scatter" => {
                                let send = vec![value[0]; n as usize];
                                world
                                    .ireduce_scatter_block(&send, &mut value, Op::Sum)
                                    .and_then(|mut r| r.wait())
                            }
                            // Rank r's block: r elements (rank 0's none).
                            "gather_varcount"
                            | "all_gather_varcount"
                            | "all_to_all_varcount"
                            | "scatter_varcount" => {
                                let counts: Vec<usize> = (0..n as usize).collect();
                                let displs: Vec<usize> =
                                    (0..n as usize).map(|r| r * (r + 1) / 2).collect();
                                let mut all = vec![0u64; n as usize * (n as usize + 1) / 2];
                                let all_part = PartitionMut::new(&mut all, &counts, &displs);
                                let mine = vec![value[0]; me as usize];
                                let mut mine_back = vec![0u64; me as usize];
                                let table = vec![5u64; n as usize * (n as usize + 1) / 2];
                                let mine_to_each = vec![value[0]; n as usize * me as usize];
                                let mine_counts = vec![me as usize; n as usize];
                                let mine_displs: Vec<usize> =
                                    (0..n as usize).map(|r| r * me as usize).collect();
                                match operation {
                                    "gather_varcount" => world.igather_varcount(
                                        &mine,
                                        (me == 0).then_some(all_part),
                                        0,
                                    ),
                                    "scatter_varcount" => world.iscatter_varcount(
                                        (me == 0).then(|| Partition::new(&table, &counts, &displs)),
                                        Some(&mut mine_back[..]),
                                        0,
                                    ),
                                    "all_gather_varcount" => {
                                        world.iall_gather_varcount(&mine, all_part)
                                    }
                                    _ => world.ialltoall_varcount(
                                        Partition::new(&mine_to_each, &mine_counts, &mine_displs),
                                        all_part,
                                    ),
                                }
                                .and_then(|mut r| r.wait())
                            }
                            _ => {
                                let send = vec![value[0]; n as usize];
                                let mut all = vec![0u64; n as usize];
                                world.ialltoall(&send, &mut all).and_then(|mut r| r.wait())
                            }
                        };
                        match outcome {
                            Ok(()) | Err(Error::ProcFailed { .. }) => {}
                            Err(other) => return Err(other),
                        }
                        if let Err(Error::ProcFailed { rank }) = outcome {
                            assert_eq!(rank, victim);
                        }
                        // Whatever the call gave, the survivors go on together.
                        world.validate_global()?;
                        let mut count = [0u32];
                        world.iall_reduce(&[1u32], &mut count, Op::Sum)?.wait()?;
                        Ok::<_, Error>((outcome.is_ok(), value[0], count[0]))
                    });
                let mut survivors_count = None;
                for (rank, outcome) in results.into_iter().enumerate() {
                    match outcome {
                        RankOutcome::Killed => {
                            assert_eq!(rank as u32, victim, "{operation} {message}");
                        }
                        RankOutcome::Returned(Ok((ok, value, count))) => {
                            // A call that returned Ok heard from every participant.
                            let sum = u64::from(n * (n + 1) / 2);
                            let expected = match operation {
                                "all_reduce" | "reduce_scatter" => Some(sum),
                                "reduce" if rank == 0 => Some(sum),
                                "broadcast" => Some(1),
                                _ => None,
                            };
                            if let (true, Some(expected)) = (ok, expected) {
                                assert_eq!(value, expected, "{operation} {message} rank {rank}");
                            }
                            let expected = *survivors_count.get_or_insert(count);
                            assert_eq!(count, expected, "the survivors agree on who is left");
                        }
                        other => panic!("{operation} message {message} rank {rank}: {other:?}"),
                    }
                }
            }
        }
    });
}

/// A revocation ends a pending call with `Error::Revoked` at every rank.
#[test]
fn revocation_ends_pending_calls() {
    bounded(|| {
        let results = runthrough::local(4).run(|world| {
            let dup = world.dup()?;
            if dup.rank() == 3 {
                // Never starts the barrier: revokes instead, once the others started theirs.
                let mut nothing = [0u8; 0];
                for rank in 0..3 {
                    world.recv(&mut nothing, rank, 1)?;
                }
                dup.revoke()?;
                return Ok(Error::Revoked);
            }
            let mut barrier = dup.ibarrier()?;
            world.send(&[0u8; 0], 3, 1)?;
            Ok::<_, Error>(barrier.wait().expect_err("revoked"))
        });
        for error in outcomes(results, &[]) {
            assert_eq!(error, Some(Error::Revoked));
        }
    });
}

/// A dropped request does not wait, and its call still serves the other ranks; a later
/// `validate_global` waits for it to finish here.
#[test]
fn a_dropped_request_still_serves_its_peers() {
    bounded(|| {
        let results = runthrough::local(4).run(|world: &Comm| {
            let mut value = [world.rank() * 10];
            if world.rank() == 0 {
                drop(world.ibroadcast(&mut value, 0)?);
            } else {
                world.ibroadcast(&mut value, 0)?.wait()?;
            }
            world.validate_global()?;
            Ok::<_, Error>(value[0])
        });
        let values = outcomes(results, &[]);
        assert!(values.iter().all(|v| *v == Some(0)), "{values:?}");
    });
}

/// Freeing a communicator whose call's request was dropped lets the call finish first: the
/// others' calls need this rank's later messages (a barrier's second round).
#[test]
fn freeing_a_communicator_lets_a_dropped_call_finish() {
    bounded(|| {
        let results = runthrough::local(4).run(|world| {
            let dup = world.dup()?;
            if world.rank() == 0 {
                drop(dup.ibarrier()?);
                for rank in 1..4 {
                    world.send(&[0u8; 0], rank, 3)?;
                }
                dup.free()?;
                return Ok(());
            }
            let mut nothing = [0u8; 0];
            world.recv(&mut nothing, 0, 3)?; // rank 0 dropped its request by now
            dup.ibarrier()?.wait()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// Two communicators used in different orders, legal with non-blocking calls: rank 0 starts a
/// broadcast larger than its window on `y`, then runs a barrier on `x`; rank 1 runs the
/// barrier first. Rank 1 holds the broadcast's message (it has not started that call), which
/// holds rank 0's window; rank 0's barrier message waits behind it. Rank 1's blocking barrier
/// lends rank 0 credit, so neither waits for ever.
#[test]
fn a_blocking_collective_lends_credit_held_by_a_later_non_blocking_call() {
    bounded(|| {
        let results = runthrough::local(2)
            .unexpected_cap(64 << 10) // windows of 32 KiB
            .run(|world| {
                let (x, y) = (world.dup()?, world.dup()?);
                // Above the window, below the cap (a loan never passes the cap).
                let mut big = vec![world.rank() as u8; 48 << 10];
                if world.rank() == 0 {
                    big.fill(9);
                    let mut bcast = y.ibroadcast(&mut big, 0)?;
                    x.barrier()?;
                    bcast.wait()?;
                } else {
                    x.barrier()?;
                    y.ibroadcast(&mut big, 0)?.wait()?;
                }
                Ok::<_, Error>(big.iter().all(|&b| b == 9))
            });
        for all_nines in outcomes(results, &[]) {
            assert_eq!(all_nines, Some(true));
        }
    });
}

/// Blocks of different lengths whose total is right are still `Error::Count`, not a result
/// with the blocks in the wrong places.
#[test]
fn blocks_of_the_wrong_length_are_an_error_even_when_the_total_fits() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            // Ranks pass 1, 2 and 3 elements: 6 in all at each rank's all-gather buffer of
            // 3 blocks only for rank 1 (2 elements each).
            let len = world.rank() as usize + 1;
            let send = vec![world.rank() as u16; len];
            let mut recv = vec![0u16; 3 * len];
            let outcome = world.iall_gather(&send, &mut recv)?.wait();
            Ok::<_, Error>(outcome)
        });
        for (rank, outcome) in outcomes(results, &[]).into_iter().enumerate() {
            assert!(
                matches!(outcome, Some(Err(Error::Count { .. }))),
                "rank {rank}: {outcome:?}"
            );
        }
    });
}

/// `ireduce_scatter` (counts r mod 3, zero included) and `ireduce_scatter_block`, outstanding
/// together, at 1 to 6 ranks: each rank's block is its part of the blocking all-reduce of the
/// whole vector; after a death and `validate_global`, the survivors' sums exclude the dead
/// rank; bad counts are `Error::Count` before anything is sent.
#[test]
fn reduce_scatters_give_each_rank_its_block_of_the_all_reduce() {
    bounded(|| {
        for n in 1..=6u32 {
            let results = runthrough::local(n).run(move |world| {
                let me = world.rank() as usize;
                let counts: Vec<usize> = (0..n as usize).map(|r| r % 3).collect();
                let total: usize = counts.iter().sum();
                let send: Vec<i64> = (0..total as i64).map(|i| i * 100 + me as i64).collect();
                let mut mine = vec![-1i64; counts[me]];
                let block_send: Vec<u16> = (0..2 * n as u16).map(|i| i ^ (me as u16 + 1)).collect();
                let mut block = [0u16; 2];
                let mut requests = vec![
                    world.ireduce_scatter(&send, &mut mine, &counts, Op::Sum)?,
                    world.ireduce_scatter_block(&block_send, &mut block, Op::BitXor)?,
                ];
                for request in requests.iter_mut().rev() {
                    request.wait()?;
                }
                drop(requests);
                let (mut all, mut all_block) = (vec![0i64; total], vec![0u16; 2 * n as usize]);
                world.all_reduce(&send, &mut all, Op::Sum)?;
                world.all_reduce(&block_send, &mut all_block, Op::BitXor)?;
                let before: usize = counts[..me].iter().sum();
                assert_eq!(mine, all[before..before + counts[me]], "n {n} rank {me}");
                assert_eq!(block, all_block[2 * me..2 * me + 2], "n {n} rank {me}");
                // Bad counts: refused before anything is sent.
                let mut short = vec![0i64; counts[me]];
                if total > 0 {
                    assert!(matches!(
                        world.ireduce_scatter(&send[..total - 1], &mut short, &counts, Op::Sum),
                        Err(Error::Count { .. })
                    ));
                }
                assert!(matches!(
                    world.ireduce_scatter(&send, &mut short, &counts[1..], Op::Sum),
                    Err(Error::Count { .. })
                ));
                assert!(matches!(
                    world.ireduce_scatter_block(&send, &mut [0i64; 7], Op::Sum),
                    Err(Error::Count { .. })
                ));
                Ok::<_, Error>(mine)
            });
            outcomes(results, &[]);
        }
        let (n, dead) = (5u32, 3u32);
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(move |world| {
                if world.rank() == dead {
                    world.barrier()?;
                }
                let mut nothing = [0u8];
                assert_eq!(
                    world.recv(&mut nothing, dead, 9),
                    Err(Error::ProcFailed { rank: dead })
                );
                world.validate_global()?;
                let send: Vec<u32> = (0..n).map(|i| i + 10 * world.rank()).collect();
                let mut mine = [0u32];
                world
                    .ireduce_scatter_block(&send, &mut mine, Op::Sum)?
                    .wait()?;
                Ok::<_, Error>(mine[0])
            });
        for (rank, value) in outcomes(results, &[dead]).into_iter().enumerate() {
            if let Some(sum) = value {
                // Ranks 0, 1, 2, 4 contribute rank + 10 * r each (rank 0 adds no tens).
                assert_eq!(sum, 4 * rank as u32 + 10 * (1 + 2 + 4), "rank {rank}");
            }
        }
    });
}

/// A varcount gather in which rank 1 sends two elements where the root's counts say one (an
/// erroneous program): the root's request fails with `Error::Count` though the total would
/// fit, the others' succeed, and nobody hangs.
#[test]
fn a_varcount_block_of_another_length_than_its_count_is_an_error() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            let me = world.rank();
            let send = vec![me as u16; if me == 1 { 2 } else { 1 }];
            let mut recv = [9u16; 4];
            let part = (me == 0).then(|| PartitionMut::new(&mut recv, &[1, 1, 1], &[0, 1, 2]));
            let outcome = world.igather_varcount(&send, part, 0)?.wait();
            Ok::<_, Error>(outcome)
        });
        for (rank, outcome) in outcomes(results, &[]).into_iter().enumerate() {
            if rank == 0 {
                assert!(
                    matches!(outcome, Some(Err(Error::Count { .. }))),
                    "{outcome:?}"
                );
            } else {
                assert_eq!(outcome, Some(Ok(())), "rank {rank}");
            }
        }
    });
}

/// A dropped call whose message waited for credit: `validate_global` (which waits for the
/// communicator's calls) sees it finish once the message went out, though no collective
/// message arrives any more to tell the call.
#[test]
fn an_epoch_change_sees_a_dropped_calls_delayed_send_go_out() {
    bounded(|| {
        let results = runthrough::local(3)
            .unexpected_cap(96 << 10) // windows of 32 KiB
            .run(|world| {
                let comm = world.dup()?;
                let mut big = vec![world.rank() as u8; 48 << 10];
                if world.rank() == 0 {
                    big.fill(5);
                    // The others have not started: the first messages are held there, and
                    // the second ones wait here for the credit they hold.
                    drop(comm.ibroadcast(&mut big, 0)?);
                    drop(comm.ibroadcast(&mut big, 0)?);
                    for rank in 1..3 {
                        world.send(&[0u8; 0], rank, 4)?;
                    }
                } else {
                    let mut nothing = [0u8; 0];
                    world.recv(&mut nothing, 0, 4)?;
                    comm.ibroadcast(&mut big, 0)?.wait()?;
                    comm.ibroadcast(&mut big, 0)?.wait()?;
                }
                comm.validate_global()?;
                drop(comm);
                Ok::<_, Error>(big.iter().all(|&b| b == 5))
            });
        for fives in outcomes(results, &[]) {
            assert_eq!(fives, Some(true));
        }
    });
}

/// `validate_global` while calls are outstanding waits for them to finish here, and they
/// complete with their results.
#[test]
fn validate_global_waits_for_outstanding_calls() {
    bounded(|| {
        let results = runthrough::local(5).run(|world| {
            let mut sum = [0u32];
            let mut all = world.iall_reduce(&[world.rank()], &mut sum, Op::Sum)?;
            let mut barrier = world.ibarrier()?;
            world.validate_global()?;
            barrier.wait()?;
            all.wait()?;
            drop(all);
            Ok::<_, Error>(sum[0])
        });
        for sum in outcomes(results, &[]) {
            assert_eq!(sum, Some(10));
        }
    });
}

/// Ranks of the world are comm ranks here too: a collective on a split communicator works.
#[test]
fn calls_on_a_split_communicator() {
    bounded(|| {
        let results = runthrough::local(6).run(|world| {
            let half = world.split(Some(world.rank() % 2), 0)?.expect("a member");
            let mut sum = [0u32];
            half.iall_reduce(&[world.rank()], &mut sum, Op::Sum)?
                .wait()?;
            let mut from_root: [Rank; 1] = [world.rank()];
            half.ibroadcast(&mut from_root, 2)?.wait()?;
            Ok::<_, Error>((sum[0], from_root[0]))
        });
        let values = outcomes(results, &[]);
        for (rank, value) in values.into_iter().enumerate() {
            let (sum, root) = value.unwrap();
            if rank % 2 == 0 {
                assert_eq!((sum, root), (6, 4));
            } else {
                assert_eq!((sum, root), (9, 5));
            }
        }
    });
}

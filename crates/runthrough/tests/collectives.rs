// SPDX-License-Identifier: MIT OR Apache-2.0
//! The collectives of SPEC §3.3 without failures: every collective on 1, 2, 3, 7, 8 and 64
//! ranks against a sequential reference; argument errors; two collectives at once.

mod collective_reference;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};

use collective_reference::{check, Kind, ALL};
use runthrough::{Error, Op, PartitionMut, Rank, UserOp};
use support::{bounded, outcomes};

const SIZES: &[u32] = &[1, 2, 3, 7, 8, 64];

/// The roots tried for a rooted collective on `n` ranks: the first, the last, one inside.
fn roots(n: u32) -> Vec<Rank> {
    let mut roots = vec![0, n - 1, n / 2];
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// Runs every `kind` on every size (every root for rooted ones) with all ranks participating,
/// checking the results against the sequential reference.
fn every_size(kinds: &'static [Kind]) {
    bounded(move || {
        for &n in SIZES {
            let participants: Vec<Rank> = (0..n).collect();
            let results = runthrough::local(n).run(|world| {
                for &kind in kinds {
                    let roots = if kind.rooted() { roots(n) } else { vec![0] };
                    for root in roots {
                        check(world, kind, root, &participants)
                            .map_err(|e| format!("{kind:?} root {root} on {n} ranks: {e}"))?;
                    }
                }
                Ok::<_, String>(())
            });
            outcomes(results, &[]);
        }
    });
}

/// SPEC §3.3: barrier (dissemination) completes on every size.
#[test]
fn barrier_on_every_size() {
    every_size(&[Kind::Barrier]);
}

/// SPEC §3.3: broadcast from any root delivers the root's buffer everywhere.
#[test]
fn broadcast_on_every_size() {
    every_size(&[Kind::Broadcast]);
}

/// SPEC §3.3: reduce with every predefined operation on integers and floats, and user
/// operations (a non-commutative one combined in rank order), from any root.
#[test]
fn reduce_on_every_size() {
    every_size(&[Kind::Reduce, Kind::ReduceWith]);
}

/// SPEC §3.3: all-reduce, small (recursive doubling) and large (ring), predefined and user
/// operations; non-commutative ones in rank order, the same value at every rank.
#[test]
fn all_reduce_on_every_size() {
    every_size(&[Kind::AllReduce, Kind::AllReduceLarge, Kind::AllReduceWith]);
}

/// SPEC §3.3: gather and gatherv (zero-length blocks included) to any root, all-gather.
#[test]
fn gathers_on_every_size() {
    every_size(&[Kind::Gather, Kind::GatherVarcount, Kind::AllGather]);
}

/// SPEC §3.3: scatter and scatterv (zero-length blocks included) from any root.
#[test]
fn scatters_on_every_size() {
    every_size(&[Kind::Scatter, Kind::ScatterVarcount]);
}

/// SPEC §3.3: all-to-all with small blocks (Bruck) and large blocks (pairwise exchange).
#[test]
fn all_to_all_on_every_size() {
    every_size(&[Kind::AllToAll, Kind::AllToAllLarge]);
}

/// SPEC §3.3: inclusive and exclusive scans, predefined and non-commutative user operations;
/// exscan leaves the first rank's buffer untouched.
#[test]
fn scans_on_every_size() {
    every_size(&[Kind::Scan, Kind::Exscan, Kind::ScanWith, Kind::ExscanWith]);
}

/// SPEC §3.3: every kind back to back on one communicator keeps the calls apart.
#[test]
fn every_collective_back_to_back() {
    bounded(|| {
        for n in [5, 8] {
            let participants: Vec<Rank> = (0..n).collect();
            let results = runthrough::local(n).run(|world| {
                for _ in 0..2 {
                    for &kind in ALL {
                        check(world, kind, n - 1, &participants)?;
                    }
                }
                Ok::<_, Error>(())
            });
            outcomes(results, &[]);
        }
    });
}

/// SPEC §3.1 (bad arguments are a clear error, never a panic), applied to collectives:
/// undefined operations, roots out of range, buffers of the wrong length; none of them
/// communicates, so the ranks stay in step (the barrier at the end completes).
#[test]
fn argument_errors_are_errors_not_panics() {
    bounded(|| {
        let results = runthrough::local(4).run(|world| {
            let argument = |e: Error| matches!(e, Error::Argument { .. });
            let count = |e: Error| matches!(e, Error::Count { .. });
            let mut f = [0.0f64; 2];
            assert!(argument(
                world
                    .all_reduce(&[1.0, 2.0], &mut f, Op::BitXor)
                    .unwrap_err()
            ));
            let mut g = [0.0f32; 1];
            assert!(argument(
                world
                    .reduce(&[1.0f32], Some(&mut g), Op::BitAnd, 0)
                    .unwrap_err()
            ));
            assert!(argument(
                world.scan(&[1.0f32], &mut g, Op::BitOr).unwrap_err()
            ));
            assert!(argument(
                world.exscan(&[1.0f32], &mut g, Op::BitOr).unwrap_err()
            ));
            let mut buf = [0u32; 3];
            assert_eq!(
                world.broadcast(&mut buf, 4),
                Err(Error::Root { root: 4, size: 4 })
            );
            assert_eq!(
                world.reduce(&[1u32], Some(&mut buf[..1]), Op::Sum, 9),
                Err(Error::Root { root: 9, size: 4 })
            );
            assert!(count(
                world.all_reduce(&[1u32, 2], &mut buf, Op::Sum).unwrap_err()
            ));
            assert!(count(world.all_gather(&[1u32], &mut buf).unwrap_err()));
            assert!(count(world.all_to_all(&[1u32; 3], &mut buf).unwrap_err()));
            assert!(count(world.scan(&[1u32], &mut buf, Op::Sum).unwrap_err()));
            if world.rank() == 0 {
                assert!(count(world.gather(&[1u32], Some(&mut buf), 0).unwrap_err()));
                assert!(count(
                    world.scatter(Some(&buf[..]), &mut [0u32], 0).unwrap_err()
                ));
                assert!(argument(
                    world.reduce(&[1u32], None, Op::Sum, 0).unwrap_err()
                ));
                assert!(argument(world.gather(&[1u32], None, 0).unwrap_err()));
                assert!(argument(world.scatter(None, &mut buf, 0).unwrap_err()));
                let mut out = [0u32; 8];
                let short = PartitionMut::new(&mut out, &[1, 1, 1], &[0, 1, 2]);
                assert!(count(
                    world.gather_varcount(&[1u32], Some(short), 0).unwrap_err()
                ));
                let past = PartitionMut::new(&mut out, &[1, 1, 1, 2], &[0, 1, 2, 7]);
                assert!(count(
                    world.gather_varcount(&[1u32], Some(past), 0).unwrap_err()
                ));
            }
            assert!(argument(world.broadcast(&mut [(); 2], 0).unwrap_err()));
            world.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.3 and MPI's matching counts: ranks that pass different counts get `Error::Count`
/// where it shows, and nobody is left blocked; a broadcast forwards what it received, so the
/// subtree below a rank with a wrong buffer still gets the data.
#[test]
fn mismatched_counts_are_count_errors_without_hangs() {
    bounded(|| {
        let results = runthrough::local(8).run(|world| {
            // Binomial tree from 0 over 8: 0 -> 4, 2, 1; 4 -> 6, 5; 6 -> 7; 2 -> 3.
            let len = if world.rank() == 4 { 3 } else { 5 };
            let mut buf = vec![if world.rank() == 0 { 42u16 } else { 0 }; len];
            let outcome = world.broadcast(&mut buf, 0);
            if world.rank() == 4 {
                assert!(matches!(outcome, Err(Error::Count { .. })), "{outcome:?}");
            } else {
                assert_eq!(outcome, Ok(()), "rank {}", world.rank());
                assert_eq!(buf, vec![42; 5]);
            }
            // All-gather with one rank contributing two elements: every rank sees a bad block.
            let mine = vec![world.rank(); if world.rank() == 6 { 2 } else { 1 }];
            let mut all = vec![0u32; 8 * mine.len()];
            let outcome = world.all_gather(&mine, &mut all);
            assert!(matches!(outcome, Err(Error::Count { .. })), "{outcome:?}");
            world.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §2.1: two collective calls on one communicator at once from two threads are an error
/// (`Error::ConcurrentCollective`), not a hang. Thread A of rank 0 is held inside an
/// all-reduce (in its user operation) while thread B starts a barrier; then A finishes, and
/// the communicator keeps working.
#[test]
fn two_collectives_at_once_on_one_comm() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| {
            let inside = std::sync::Barrier::new(2);
            let held = AtomicBool::new(world.rank() == 0);
            let op = UserOp::new(
                |input: &[u64], inout: &mut [u64]| {
                    if held.swap(false, Ordering::SeqCst) {
                        inside.wait(); // A is inside the all-reduce
                        inside.wait(); // B has tried its barrier
                    }
                    for (b, a) in inout.iter_mut().zip(input) {
                        *b += a;
                    }
                },
                true,
            );
            let (reduced, concurrent) = std::thread::scope(|scope| {
                let a = scope.spawn(|| {
                    let mut sum = [0u64];
                    world.all_reduce_with(&[u64::from(world.rank()) + 1], &mut sum, &op)?;
                    Ok::<_, Error>(sum[0])
                });
                let b = (world.rank() == 0).then(|| {
                    scope.spawn(|| {
                        inside.wait();
                        let outcome = world.barrier();
                        inside.wait();
                        outcome
                    })
                });
                (
                    a.join().expect("thread A"),
                    b.map(|b| b.join().expect("thread B")),
                )
            });
            assert_eq!(reduced?, 3);
            if let Some(concurrent) = concurrent {
                assert_eq!(concurrent, Err(Error::ConcurrentCollective));
            }
            world.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

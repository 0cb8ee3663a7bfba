// SPDX-License-Identifier: MIT OR Apache-2.0
//! Neighbourhood exchanges (`Comm::neighbor_alltoall_varcount` and its non-blocking form):
//! each rank's blocks reach exactly its out-neighbours, in list order when a rank is named
//! several times, a rank may name itself, a neighbour that dies before or during the call ends
//! it with an error at its peers (never a hang), one recognized as failed is skipped, and bad
//! arguments are refused before anything is sent.

mod support;

use runthrough::{Comm, Error, Partition, PartitionMut, Rank};
use support::{bounded, outcomes};

/// Rank r's neighbours on a ring of n: left and right (in that order), as a Cartesian
/// topology of one periodic dimension names them.
fn ring(me: Rank, n: u32) -> [Rank; 2] {
    [(me + n - 1) % n, (me + 1) % n]
}

/// One exchange on a ring: `(from the left, from the right)` as received.
fn ring_exchange(world: &Comm, blocking: bool) -> Result<[u64; 2], Error> {
    let (me, n) = (world.rank(), world.size());
    let out = [u64::from(me) * 10 + 1, u64::from(me) * 10 + 2];
    let mut got = [u64::MAX; 2];
    let send = Partition::new(&out, &[1, 1], &[0, 1]);
    let recv = PartitionMut::new(&mut got, &[1, 1], &[0, 1]);
    if blocking {
        world.neighbor_alltoall_varcount(&ring(me, n), send, &ring(me, n), recv)?;
    } else {
        world
            .ineighbor_alltoall_varcount(&ring(me, n), send, &ring(me, n), recv)?
            .wait()?;
    }
    Ok(got)
}

/// On rings of 1 to 9 ranks, blocking and not: the left neighbour's block for its right
/// and the right neighbour's block for its left arrive. At 1 and 2 ranks one rank is both
/// neighbours, and blocks pair in list order (as MPI's Cartesian example code pairs them,
/// through the point-to-point order of its sends and receives): the first block it sends this
/// rank lands in the first slot.
#[test]
fn a_ring_exchange_delivers_each_edge_its_block() {
    bounded(|| {
        for n in 1..=9u32 {
            for blocking in [true, false] {
                let results = runthrough::local(n).run(move |world| ring_exchange(world, blocking));
                for (rank, got) in outcomes(results, &[]).iter().enumerate() {
                    let [left, right] = ring(rank as u32, n).map(u64::from);
                    let expect = if n <= 2 {
                        [left * 10 + 1, left * 10 + 2]
                    } else {
                        // The left neighbour sent its block 2 (for its right), the right one
                        // its block 1 (for its left).
                        [left * 10 + 2, right * 10 + 1]
                    };
                    assert_eq!(got.unwrap(), expect, "n {n} rank {rank}");
                }
            }
        }
    });
}

/// A graph with repeated edges, a self-edge and blocks of different lengths: rank 0 sends
/// three blocks to rank 1 and one to itself; rank 1 sends two to rank 0; rank 2 takes part
/// with no neighbour. The k-th block on an edge lands in the k-th slot of that source.
#[test]
fn repeated_edges_pair_in_list_order() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            let me = world.rank();
            let mut got = vec![0u8; 8];
            match me {
                0 => {
                    let out = [1u8, 2, 2, 3, 3, 3, 9];
                    let send = Partition::new(&out, &[1, 2, 3, 1], &[0, 1, 3, 6]);
                    let recv = PartitionMut::new(&mut got, &[1, 4, 2], &[0, 1, 5]);
                    world.neighbor_alltoall_varcount(&[1, 1, 1, 0], send, &[0, 1, 1], recv)?;
                }
                1 => {
                    let out = [7u8, 7, 7, 7, 8, 8];
                    let send = Partition::new(&out, &[4, 2], &[0, 4]);
                    let recv = PartitionMut::new(&mut got, &[1, 2, 3], &[0, 1, 3]);
                    world.neighbor_alltoall_varcount(&[0, 0], send, &[0, 0, 0], recv)?;
                }
                _ => {
                    let send = Partition::new(&[] as &[u8], &[], &[]);
                    let recv = PartitionMut::new(&mut got, &[], &[]);
                    world.neighbor_alltoall_varcount(&[], send, &[], recv)?;
                }
            }
            Ok::<_, Error>(got)
        });
        let got = outcomes(results, &[]);
        assert_eq!(got[0].as_ref().unwrap(), &[9, 7, 7, 7, 7, 8, 8, 0]);
        assert_eq!(got[1].as_ref().unwrap(), &[1, 2, 2, 3, 3, 3, 0, 0]);
        assert_eq!(got[2].as_ref().unwrap(), &[0; 8]);
    });
}

/// Bad arguments are refused at the start: a neighbour outside the communicator, a
/// partition without a block per neighbour, blocks to itself that do not pair with blocks
/// from itself; a block of another length than its slot is a count error at the receiver.
#[test]
fn bad_arguments_are_refused() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| {
            let mut got = [0u32; 2];
            let out = [1u32, 2];
            let outside = world.neighbor_alltoall_varcount(
                &[5],
                Partition::new(&out, &[1], &[0]),
                &[],
                PartitionMut::new(&mut got, &[], &[]),
            );
            assert!(
                matches!(outside, Err(Error::Rank { rank: 5, .. })),
                "{outside:?}"
            );
            let short = world.neighbor_alltoall_varcount(
                &[0, 1],
                Partition::new(&out, &[1], &[0]),
                &[],
                PartitionMut::new(&mut got, &[], &[]),
            );
            assert!(matches!(short, Err(Error::Count { .. })), "{short:?}");
            let me = world.rank();
            let unpaired = world.neighbor_alltoall_varcount(
                &[me],
                Partition::new(&out, &[1], &[0]),
                &[],
                PartitionMut::new(&mut got, &[], &[]),
            );
            assert!(matches!(unpaired, Err(Error::Count { .. })), "{unpaired:?}");
            // Rank 0 sends 2 elements where rank 1 expects 1.
            let peer = 1 - me;
            let (count, expect) = if me == 0 { (2, 1) } else { (1, 1) };
            let mismatch = world.neighbor_alltoall_varcount(
                &[peer],
                Partition::new(&out, &[count], &[0]),
                &[peer],
                PartitionMut::new(&mut got, &[expect], &[0]),
            );
            Ok::<_, Error>((me, mismatch.is_err()))
        });
        let got = outcomes(results, &[]);
        assert_eq!(
            got[1],
            Some((1, true)),
            "rank 1 got a block of the wrong length"
        );
    });
}

/// A neighbour killed before the call, or during it (at its first message), ends the call at
/// the ranks that exchange with it with `ProcFailed`, never a hang; once `validate_global`
/// recognizes it, the next exchange skips its blocks (left as they were) and the others'
/// arrive.
#[test]
fn a_dead_neighbour_fails_the_call_then_is_skipped() {
    bounded(|| {
        for during in [false, true] {
            let n = 5u32;
            let dead = 2;
            let universe = if during {
                runthrough::local(n).kill_in_collective(dead, "neighbor_exchange", 1, 1)
            } else {
                runthrough::local(n).kill_at_operation(dead, 1)
            };
            let results = universe.run(move |world| {
                let me = world.rank();
                let first = ring_exchange(world, false);
                if ring(me, n).contains(&dead) {
                    assert!(
                        matches!(first, Err(Error::ProcFailed { rank }) if rank == dead),
                        "rank {me}: {first:?}"
                    );
                }
                world.validate_global()?;
                let second = ring_exchange(world, true)?;
                Ok::<_, Error>(second)
            });
            for (rank, got) in outcomes(results, &[dead]).iter().enumerate() {
                let Some(got) = got else { continue };
                let [left, right] = ring(rank as u32, n);
                let expect = |from: Rank, block: u64| {
                    if from == dead {
                        u64::MAX
                    } else {
                        u64::from(from) * 10 + block
                    }
                };
                assert_eq!(*got, [expect(left, 2), expect(right, 1)], "rank {rank}");
            }
        }
    });
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Point-to-point with ranks recognized in G (NULL), and L after `validate_global`
//! (SPEC §2, §2.1 validate_global's effect on L, §3.1 MPI_PROC_NULL behaviour, §3.2).
//!
//! `validate_global` is collective over the OK ranks of G, so every survivor calls it; each first
//! waits for the failure to reach its own detector, so that G surely holds it (validity: every
//! failure known at entry is in G').

mod support;

use runthrough::{Comm, Error, RankInfo, RankState, Result, Source, Status, Tag};
use support::{bounded, outcomes};

const GO: i32 = 1000;
const NEVER: i32 = 999;

fn proc_null() -> Status {
    Status {
        source: None,
        tag: None,
        count: 0,
    }
}

fn status(source: u32, tag: i32, count: usize) -> Status {
    Status {
        source: Some(source),
        tag: Some(tag),
        count,
    }
}

/// Blocks until `rank` has failed and this rank's detector knows it.
fn wait_for_failure_of(world: &Comm, rank: u32) {
    let mut buf = [0u8];
    assert_eq!(
        world.recv(&mut buf, rank, NEVER),
        Err(Error::ProcFailed { rank })
    );
}

/// SPEC §3.1: to or from a rank that is NULL (recognized in G), with nothing buffered, every
/// operation behaves as MPI_PROC_NULL: send and isend complete at once; recv, recv_vec, irecv
/// (wait and test), probe and iprobe complete at once with `source = None`, count 0, the buffer
/// untouched. And SPEC §3.2: a recognized failure does not make wildcard receives pending.
#[test]
fn operations_with_a_null_rank_behave_as_proc_null() {
    bounded(|| {
        let results = runthrough::local(4)
            .kill_at_operation(3, 1)
            .run(|world| -> Result<()> {
                if world.rank() == 3 {
                    world.send(&[0u8], 0, 0)?; // dies here
                    return Ok(());
                }
                wait_for_failure_of(world, 3);
                let global = world.validate_global()?;
                assert_eq!(global.state_of(3), Some(RankState::NULL | RankState::NEW));
                match world.rank() {
                    0 => {
                        assert_eq!(world.send(&[1u32], 3, 0), Ok(()));
                        assert!(world.isend(&[1u32], 3, 0)?.wait().is_ok());
                        let mut buf = [77u32; 2];
                        assert_eq!(world.recv(&mut buf, 3u32, 0)?, proc_null());
                        assert_eq!(world.recv(&mut buf, 3u32, Tag::Any)?, proc_null());
                        assert_eq!(buf, [77, 77], "buffer untouched");
                        assert_eq!(
                            world.recv_vec::<u32>(3u32, Tag::Any)?,
                            (vec![], proc_null())
                        );
                        let mut request = world.irecv(&mut buf, 3u32, 5)?;
                        assert_eq!(request.wait()?, proc_null());
                        drop(request);
                        assert_eq!(world.irecv(&mut buf, 3u32, 5)?.test()?, Some(proc_null()));
                        assert_eq!(buf, [77, 77]);
                        assert_eq!(world.probe::<u32>(3u32, Tag::Any)?, proc_null());
                        assert_eq!(world.iprobe::<u32>(3u32, 2)?, Some(proc_null()));

                        assert_eq!(world.iprobe::<u32>(Source::Any, Tag::Any)?, None);
                        world.send(&[0u8], 1, GO)?;
                        let mut one = [0u32];
                        assert_eq!(world.recv(&mut one, Source::Any, 5)?, status(1, 5, 1));
                        assert_eq!(one, [15]);
                    }
                    1 => {
                        let mut go = [0u8];
                        world.recv(&mut go, 0u32, GO)?;
                        world.send(&[15u32], 0, 5)?;
                    }
                    _ => {}
                }
                Ok(())
            });
        outcomes(results, &[3]);
    });
}

/// SPEC §1 and §3.1 ("receives match already buffered complete messages first, whatever the
/// sender's state"): a message a rank sent before it died is received even after the rank is
/// NULL in G; only then do receives from it complete as MPI_PROC_NULL.
#[test]
fn buffered_messages_from_a_null_rank_are_received_before_proc_null() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 3)
            .run(|world| -> Result<()> {
                if world.rank() == 2 {
                    world.send(&[21u32], 0, 0)?;
                    world.send(&[22u32], 0, 1)?;
                    world.send(&[0u8], 0, 0)?; // dies here
                    return Ok(());
                }
                wait_for_failure_of(world, 2);
                world.validate_global()?;
                if world.rank() == 0 {
                    let mut buf = [0u32];
                    assert_eq!(world.probe::<u32>(2u32, Tag::Any)?, status(2, 0, 1));
                    assert_eq!(world.recv(&mut buf, Source::Any, 1)?, status(2, 1, 1));
                    assert_eq!(buf, [22]);
                    assert_eq!(world.recv(&mut buf, 2u32, Tag::Any)?, status(2, 0, 1));
                    assert_eq!(buf, [21]);
                    assert_eq!(world.recv(&mut buf, 2u32, Tag::Any)?, proc_null());
                    assert_eq!(buf, [21]);
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §2 and §2.1: `validate_global` sets L to a copy of G, modifiers included (NULL|NEW);
/// a later `validate_local` makes them NULL|OLD, and a failure after G enters L as FAILED|NEW
/// while G is unchanged. Operations with the FAILED rank give `ProcFailed` (not PROC_NULL), and
/// wildcard receives are pending again until that failure is acknowledged.
#[test]
fn local_view_after_validate_global() {
    bounded(|| {
        let universe = runthrough::local(4);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            match world.rank() {
                0 => {
                    faults.kill(3);
                    let global = world.validate_global()?;
                    let null_new = RankInfo {
                        rank: 3,
                        state: RankState::NULL | RankState::NEW,
                    };
                    assert_eq!(global.failed(), &[null_new]);
                    assert_eq!(world.local_view()?, global, "L := a copy of G");
                    assert_eq!(world.global_view()?, global);

                    let local = world.validate_local()?;
                    assert_eq!(local.state_of(3), Some(RankState::NULL | RankState::OLD));
                    assert!(!local.new_failures());

                    faults.kill(2);
                    let local = world.validate_local()?;
                    assert_eq!(local.num_failed(), 2);
                    assert_eq!(local.state_of(2), Some(RankState::FAILED | RankState::NEW));
                    assert_eq!(local.state_of(3), Some(RankState::NULL | RankState::OLD));
                    assert_eq!(local.count(RankState::NULL), 1);
                    assert_eq!(local.count(RankState::FAILED), 1);
                    assert_eq!(world.global_view()?, global, "G only by validate_global");

                    assert_eq!(world.send(&[0u8], 2, 0), Err(Error::ProcFailed { rank: 2 }));
                    assert_eq!(world.send(&[0u8], 3, 0), Ok(()));
                    world.send(&[0u8], 1, GO)?;
                }
                1 => {
                    wait_for_failure_of(world, 3);
                    world.validate_global()?;
                    let mut go = [0u8];
                    world.recv(&mut go, 0u32, GO)?; // rank 0 killed 2 before sending this
                    let mut buf = [0u8];
                    assert_eq!(
                        world.recv(&mut buf, Source::Any, Tag::Any),
                        Err(Error::ProcFailedPending),
                        "2's failure is not acknowledged"
                    );
                    assert_eq!(
                        world.recv(&mut buf, 2u32, 0),
                        Err(Error::ProcFailed { rank: 2 })
                    );
                    assert_eq!(world.recv(&mut buf, 3u32, 0)?, proc_null());
                    world.validate_local()?;
                    assert_eq!(world.iprobe::<u8>(Source::Any, Tag::Any)?, None);
                }
                2 => {
                    wait_for_failure_of(world, 3);
                    world.validate_global()?;
                    let mut buf = [0u8];
                    world.recv(&mut buf, 0u32, NEVER)?; // killed here
                }
                _ => {
                    let mut buf = [0u8];
                    world.recv(&mut buf, 0u32, NEVER)?; // killed here
                }
            }
            Ok(())
        });
        outcomes(results, &[2, 3]);
    });
}

/// SPEC §2.2: the seed's application pattern reads naturally and works: validate, work
/// (exchange with the ring, where one rank dies), validate again, and find the newly dead ranks
/// as `NULL | NEW` in the second view; operations with them are then PROC_NULL.
#[test]
fn the_seed_application_pattern() {
    bounded(|| {
        let results =
            runthrough::local(5)
                .kill_at_operation(2, 3)
                .run(|world| -> Result<Vec<RankInfo>> {
                    let before = world.validate_global()?;
                    assert!(!before.new_failures());
                    // Work: everyone sends to everyone else, then receives from everyone else.
                    let others: Vec<u32> =
                        (0..world.size()).filter(|&r| r != world.rank()).collect();
                    for &peer in &others {
                        match world.send(&[world.rank()], peer, 0) {
                            Ok(()) | Err(Error::ProcFailed { .. }) => {}
                            Err(e) => return Err(e),
                        }
                    }
                    for &peer in &others {
                        let mut buf = [0u32];
                        match world.recv(&mut buf, peer, 0) {
                            Ok(_) => assert_eq!(buf, [peer]),
                            Err(Error::ProcFailed { rank }) => assert_eq!(rank, 2),
                            Err(e) => return Err(e),
                        }
                    }
                    let after = world.validate_global()?;
                    let newly_dead: Vec<RankInfo> =
                        after.ranks(RankState::NULL | RankState::NEW).collect();
                    if after.new_failures() {
                        let mut buf = [9u32];
                        for info in &newly_dead {
                            world.send(&buf, info.rank, 1)?;
                            assert_eq!(world.recv(&mut buf, info.rank, 1)?, proc_null());
                        }
                    }
                    Ok(newly_dead)
                });
        let dead = RankInfo {
            rank: 2,
            state: RankState::NULL | RankState::NEW,
        };
        for value in outcomes(results, &[2]).into_iter().flatten() {
            assert_eq!(value, vec![dead]);
        }
    });
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The collectives under failure (SPEC §3.3): disabled by an unrecognized failure, never left
//! blocked by a death during the call, working again over the survivors after
//! `validate_global`, with NULL ranks contributing nothing, NULL slots untouched and a NULL root
//! reported as `RootFailed`.

mod collective_reference;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};

use collective_reference::{check, Kind, ALL};
use runthrough::{Comm, Error, Rank, RankState, UserOp};
use support::{bounded, outcomes};

/// Waits (without sleeping) until this rank's detector knows that `rank` died: a receive from
/// it returns `ProcFailed` then (SPEC §3.1).
fn learn_death(world: &Comm, rank: Rank) {
    let mut nothing = [0u8];
    assert_eq!(
        world.recv(&mut nothing, rank, 999),
        Err(Error::ProcFailed { rank })
    );
}

fn survivors(n: u32, dead: &[Rank]) -> Vec<Rank> {
    (0..n).filter(|r| !dead.contains(r)).collect()
}

/// SPEC §3.3 "collectives are disabled by an unrecognized failure": once a rank's detector knows
/// of a dead participant not in G, every collective returns `ProcFailed` there, every one of them,
/// rooted at the dead rank or not; and after `validate_global` the same collectives succeed.
#[test]
fn after_a_death_every_collective_fails_until_validate_global() {
    bounded(|| {
        let n = 6;
        let dead = 3;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                if world.rank() == dead {
                    world.barrier()?; // dies entering it
                }
                learn_death(world, dead);
                for &kind in ALL {
                    for root in [0, dead] {
                        let outcome = check(world, kind, root, &[]);
                        assert_eq!(
                            outcome,
                            Err(Error::ProcFailed { rank: dead }),
                            "{kind:?} root {root}"
                        );
                    }
                }
                let global = world.validate_global()?;
                assert_eq!(
                    global.state_of(dead),
                    Some(RankState::NULL | RankState::NEW)
                );
                let alive = survivors(n, &[dead]);
                for &kind in ALL {
                    check(world, kind, 0, &alive)?;
                }
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.3 "none is left blocked" and "after validate_global, collectives succeed over the
/// remaining OK ranks": for every collective, a rank dies as it enters the call (the root or
/// another). Every survivor returns: `Ok` with correct results if it did not depend on the dead
/// rank, `ProcFailed` otherwise (always for the all-to-all-dependent kinds). After
/// `validate_global` the call succeeds over the survivors, and a dead root is `RootFailed`.
#[test]
fn a_death_during_each_collective_leaves_nobody_blocked() {
    bounded(|| {
        let n = 7;
        for &kind in ALL {
            let victims: &[Rank] = if kind.rooted() { &[0, 4] } else { &[4] };
            for &dead in victims {
                let results = runthrough::local(n)
                    .kill_at_operation(dead, 1)
                    .run(|world| {
                        let everyone: Vec<Rank> = (0..n).collect();
                        let outcome = check(world, kind, 0, &everyone);
                        let depends = kind.everyone_depends_on_everyone()
                            || (dead == 0
                                && matches!(
                                    kind,
                                    Kind::Broadcast | Kind::Scatter | Kind::ScatterVarcount
                                ));
                        match outcome {
                            Ok(()) if !depends => {}
                            Err(Error::ProcFailed { rank }) if rank == dead => {}
                            other => {
                                panic!("{kind:?}, {dead} dead: rank {} got {other:?}", world.rank())
                            }
                        }
                        world.validate_global()?;
                        let alive = survivors(n, &[dead]);
                        if kind.rooted() && dead == 0 {
                            assert_eq!(
                                check(world, kind, 0, &alive),
                                Err(Error::RootFailed { root: 0 }),
                                "{kind:?}"
                            );
                            check(world, kind, 1, &alive)?;
                        } else {
                            check(world, kind, 0, &alive)?;
                        }
                        Ok::<_, Error>(())
                    });
                outcomes(results, &[dead]);
            }
        }
    });
}

/// SPEC §3.3 "none is left blocked", for a rank that dies in the middle of a collective, after it
/// has exchanged messages: rank 2 kills itself inside the user operation of an all-reduce (so
/// after its first exchange). Every survivor returns (`Ok` only with the complete result,
/// otherwise `ProcFailed`), rank 0 (which needs rank 2's second message) returns `ProcFailed`,
/// and after `validate_global` the all-reduce sums the survivors.
#[test]
fn a_death_in_the_middle_of_an_all_reduce_leaves_nobody_blocked() {
    bounded(|| {
        let n = 8;
        let dead = 2;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let armed = AtomicBool::new(world.rank() == dead);
            let sum = UserOp::new(
                |input: &[u64], inout: &mut [u64]| {
                    if armed.swap(false, Ordering::SeqCst) {
                        faults.kill(dead);
                    }
                    for (b, a) in inout.iter_mut().zip(input) {
                        *b += a;
                    }
                },
                true,
            );
            let mut total = [0u64];
            match world.all_reduce_with(&[u64::from(world.rank()) + 1], &mut total, &sum) {
                Ok(()) => assert_eq!(total[0], 36, "an Ok result is the whole sum"),
                Err(Error::ProcFailed { rank: 2 }) => {}
                other => panic!("rank {}: {other:?}", world.rank()),
            }
            if world.rank() == 0 {
                assert_eq!(total[0], 0, "rank 0 cannot have completed");
            }
            // Rank 0's partner at distance 2 is rank 2, which died before sending to it.
            let view = world.validate_global()?;
            assert_eq!(view.state_of(dead), Some(RankState::NULL | RankState::NEW));
            world.all_reduce_with(&[u64::from(world.rank()) + 1], &mut total, &sum)?;
            assert_eq!(total[0], 36 - 3);
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.3 after `validate_global` with several NULL ranks (the first participant and the
/// last rank among them): every collective on 8 ranks gives the survivors' values, leaves NULL
/// slots untouched, and reports every NULL root as `RootFailed`; ranks keep their numbers.
#[test]
fn collectives_over_survivors_after_validate_global() {
    bounded(|| {
        let n = 8;
        let dead: &[Rank] = &[0, 3, 7];
        let mut universe = runthrough::local(n);
        for &rank in dead {
            universe = universe.kill_at_operation(rank, 1);
        }
        let results = universe.run(|world| {
            if dead.contains(&world.rank()) {
                world.barrier()?; // dies entering it
            }
            for &rank in dead {
                learn_death(world, rank);
            }
            let global = world.validate_global()?;
            assert_eq!(global.num_failed(), dead.len());
            assert_eq!(world.size(), n);
            let alive = survivors(n, dead);
            for &kind in ALL {
                if kind.rooted() {
                    for &root in dead {
                        assert_eq!(
                            check(world, kind, root, &alive),
                            Err(Error::RootFailed { root }),
                            "{kind:?}"
                        );
                    }
                    for &root in &alive {
                        check(world, kind, root, &alive)?;
                    }
                } else {
                    check(world, kind, 0, &alive)?;
                }
            }
            Ok::<_, Error>(())
        });
        outcomes(results, dead);
    });
}

/// SPEC §3.3 across epochs: a second death after a first `validate_global` disables the
/// collectives again until the next `validate_global`, which re-enables them over the ranks left
/// (rank 1 is killed through a `fault_handle`, after the others tell it they are done).
#[test]
fn a_second_death_needs_a_second_validate_global() {
    bounded(|| {
        let n = 7;
        let universe = runthrough::local(n).kill_at_operation(5, 1);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            match world.rank() {
                5 => world.barrier()?, // dies entering it
                _ => learn_death(world, 5),
            }
            world.validate_global()?;
            check(world, Kind::AllReduce, 0, &survivors(n, &[5]))?;
            // Rank 1 dies once everyone is done with the all-reduce (a rank that has finished
            // may still see the death before it returns: results need not be uniform).
            if world.rank() == 1 {
                for from in survivors(n, &[1, 5]) {
                    world.recv(&mut [0u8], from, 1)?;
                }
                faults.kill(1);
                world.barrier()?; // unwinds: rank 1 is dead
            }
            world.send(&[0u8], 1, 1)?;
            learn_death(world, 1);
            assert_eq!(world.barrier(), Err(Error::ProcFailed { rank: 1 }));
            let global = world.validate_global()?;
            assert_eq!(global.num_failed(), 2, "{global:?}");
            for &kind in ALL {
                check(world, kind, 2, &survivors(n, &[1, 5]))
                    .unwrap_or_else(|e| panic!("{kind:?} at {}: {e}", world.rank()));
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[1, 5]);
    });
}

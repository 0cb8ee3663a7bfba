// SPDX-License-Identifier: MIT OR Apache-2.0
//! The ULFM operations (SPEC §3.5): `revoke` (reliable even while ranks die), `shrink`,
//! `agree` and the non-blocking `iagree` / `ivalidate_global`, and the recovery patterns built
//! from them.

mod support;

use std::collections::BTreeSet;
use std::sync::Mutex;

use runthrough::{Comm, Error, Op, Rank, RankState};
use support::{bounded, outcomes};

/// Waits (without sleeping) until this rank's detector knows that `rank` of `comm` died.
fn learn_death(comm: &Comm, rank: Rank) {
    let mut nothing = [0u8];
    assert_eq!(
        comm.recv(&mut nothing, rank, 999),
        Err(Error::ProcFailed { rank })
    );
}

/// Every world rank of `comm`, gathered over `comm` itself.
fn members_by_gather(comm: &Comm) -> Vec<u32> {
    let mut all = vec![u32::MAX; comm.size() as usize];
    let me = comm.group().world_ranks()[comm.rank() as usize];
    comm.all_gather(&[me], &mut all).unwrap();
    all
}

/// A communicator that is either the world (borrowed) or one made from it.
enum Current<'a> {
    World(&'a Comm),
    Made(Comm),
}

impl Current<'_> {
    fn comm(&self) -> &Comm {
        match self {
            Current::World(c) => c,
            Current::Made(c) => c,
        }
    }
}

/// SPEC §3.5 revoke: "every pending and future non-local operation ... returns Revoked; local
/// calls keep working"; agree, shrink and validate_global still work. No failure at all: rank 0
/// revokes once the others have posted a receive that nothing will match.
#[test]
fn revoke_without_failure_fails_a_pending_receive_and_a_later_barrier() {
    bounded(|| {
        let n = 4;
        let results = runthrough::local(n).run(|world| {
            let mut never = [0u32];
            if world.rank() == 0 {
                for _ in 1..n {
                    world.recv(&mut [0u8], runthrough::Source::Any, 1)?;
                }
                world.revoke()?;
            } else {
                let mut pending = world.irecv(&mut never, 0u32, 9)?;
                world.send(&[1u8], 0, 1)?;
                assert_eq!(pending.wait(), Err(Error::Revoked));
            }
            assert!(world.is_revoked());
            assert_eq!(world.barrier(), Err(Error::Revoked));
            assert_eq!(
                world.send(&[1u8], (world.rank() + 1) % n, 0),
                Err(Error::Revoked)
            );
            assert_eq!(world.recv(&mut [0u8], 0u32, 0), Err(Error::Revoked));
            assert!(matches!(
                world.irecv(&mut [0u8], 0u32, 0),
                Err(Error::Revoked)
            ));
            assert_eq!(world.dup().map(|_| ()), Err(Error::Revoked));
            assert_eq!(world.validate_local()?.num_failed(), 0);
            assert_eq!(world.global_view()?.num_failed(), 0);
            assert_eq!(world.agree(0b110 | world.rank())?, 0b110);
            assert_eq!(world.validate_global()?.num_failed(), 0);
            assert!(
                world.is_revoked(),
                "validate_global does not lift a revocation"
            );
            let shrunk = world.shrink()?;
            assert!(!shrunk.is_revoked());
            assert_eq!(members_by_gather(&shrunk), vec![0, 1, 2, 3]);
            shrunk.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.5 shrink: "a new communicator of the surviving ranks in their old order, agreed by
/// all of them", with empty L and G, that works (a barrier and an all-reduce checked against
/// the sequential sum).
#[test]
fn shrink_after_a_kill_gives_the_survivors_and_a_working_barrier() {
    bounded(|| {
        let n = 6;
        let dead = 2;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                world.barrier().unwrap_err(); // rank 2 dies entering it
                let shrunk = world.shrink()?;
                assert_eq!(shrunk.size(), n - 1);
                let survivors: Vec<u32> = (0..n).filter(|&r| r != dead).collect();
                assert_eq!(shrunk.group().world_ranks(), &survivors[..]);
                assert_eq!(members_by_gather(&shrunk), survivors);
                assert_eq!(shrunk.global_view()?.num_failed(), 0);
                assert_eq!(shrunk.local_view()?.num_failed(), 0);
                shrunk.barrier()?;
                let mut sum = [0u32];
                shrunk.all_reduce(&[world.rank()], &mut sum, Op::Sum)?;
                assert_eq!(sum[0], survivors.iter().sum::<u32>());
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.5 agree: "bitwise AND over the contributors"; "ProcFailed (carrying the agreed
/// flag) at every returning rank iff some participant failed before contributing and that
/// failure was not in every contributor's L"; "afterwards every non-contributor is known to
/// the detector". Rank 1 contributes 0 and rank 5 dies entering the first agree.
#[test]
fn agree_with_one_rank_contributing_zero_and_one_rank_dead() {
    bounded(|| {
        let n = 6;
        let dead = 5;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                let me = world.rank();
                let flag = if me == 1 { 0 } else { u32::MAX };
                assert_eq!(world.agree(flag), Err(Error::AgreeProcFailed { flag: 0 }));
                // The dead rank's bit stays set: it did not contribute.
                let bits = !(1u32 << me);
                let expected = (0..n)
                    .filter(|&r| r != dead)
                    .fold(u32::MAX, |f, r| f & !(1 << r));
                // Known but not acknowledged: the rule still applies.
                assert_eq!(
                    world.agree(bits),
                    Err(Error::AgreeProcFailed { flag: expected })
                );
                let local = world.validate_local()?;
                assert_eq!(
                    local.state_of(dead),
                    Some(RankState::FAILED | RankState::NEW)
                );
                // Acknowledged by every contributor: no error.
                assert_eq!(world.agree(bits), Ok(expected));
                assert_eq!(
                    world.global_view()?.num_failed(),
                    0,
                    "agree does not change G"
                );
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.5 agree's ProcFailed rule, acknowledged from the start: every survivor learns of the
/// death and acknowledges it with `validate_local` before the agree, which then returns the AND
/// with no error at every rank.
#[test]
fn agree_after_every_rank_acknowledged_the_failure_succeeds() {
    bounded(|| {
        let n = 5;
        let dead = 0;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            if world.rank() == dead {
                faults.kill(dead);
                world.barrier()?; // unwinds
            }
            learn_death(world, dead);
            world.validate_local()?;
            let flag = if world.rank() == 3 { 0b1001 } else { 0b1111 };
            assert_eq!(world.agree(flag), Ok(0b1001));
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.5: agree, then shrink, then agree on the shrunk communicator (whose empty views
/// hold no failure, so its agree raises nothing).
#[test]
fn agree_then_shrink_then_agree_on_the_shrunk_communicator() {
    bounded(|| {
        let n = 5;
        let dead = 3;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                assert_eq!(world.agree(1), Err(Error::AgreeProcFailed { flag: 1 }));
                let shrunk = world.shrink()?;
                assert_eq!(members_by_gather(&shrunk), vec![0, 1, 2, 4]);
                let flag = !(1u32 << shrunk.rank());
                assert_eq!(shrunk.agree(flag), Ok(!0b1111));
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// The ULFM recovery loop (SPEC §3.5): ten iterations of an all-reduce of 1; rank 1 dies at
/// iteration 5; the error handler revokes and shrinks, the survivors agree (by an all-reduce
/// of the minimum on the new communicator) on the iteration to resume from, and carry on.
/// Every sum equals the size of the communicator it ran on: 6 before, 5 after; the last sum is
/// the new size.
#[test]
fn an_all_reduce_loop_survives_a_death_by_revoke_and_shrink() {
    bounded(|| {
        let n = 6;
        let dead = 1;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            // ANCHOR: shrink
            let mut current = Current::World(world);
            let mut sums = [0u32; 10];
            let mut iteration = 0u32;
            let mut recoveries = 0;
            while iteration < 10 {
                if world.rank() == dead && iteration == 5 {
                    faults.kill(dead);
                }
                let mut sum = [0u32];
                match current.comm().all_reduce(&[1u32], &mut sum, Op::Sum) {
                    Ok(()) => {
                        sums[iteration as usize] = sum[0];
                        iteration += 1;
                    }
                    Err(Error::ProcFailed { .. } | Error::Revoked) => {
                        recoveries += 1;
                        current.comm().revoke()?;
                        let shrunk = current.comm().shrink()?;
                        let mut resume = [0u32];
                        shrunk.all_reduce(&[iteration], &mut resume, Op::Min)?;
                        iteration = resume[0];
                        current = Current::Made(shrunk);
                    }
                    Err(other) => return Err(other),
                }
            }
            // ANCHOR_END: shrink
            assert_eq!(recoveries, 1);
            let size = current.comm().size();
            assert_eq!(size, n - 1);
            assert_eq!(sums[9], size, "the sum equals the new size");
            for (i, &s) in sums.iter().enumerate() {
                assert!(s == n || (i >= 4 && s == n - 1), "iteration {i}: {s}");
            }
            assert!(sums[5..].iter().all(|&s| s == n - 1));
            Ok::<_, Error>(())
        });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.5: kill ranks one by one (the last rank of the current communicator each time),
/// each time revoke + shrink, until one rank is left; every shrink gives the reference
/// survivors, agreed by all.
#[test]
fn kill_ranks_one_by_one_with_revoke_and_shrink_until_one_is_left() {
    bounded(|| {
        let n = 6;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let mut current = Current::World(world);
            let mut expected: Vec<u32> = (0..n).collect();
            while current.comm().size() > 1 {
                let comm = current.comm();
                let victim = comm.size() - 1;
                // The victim dies once every other rank is past the previous round's gather.
                if comm.rank() == victim {
                    for _ in 0..victim {
                        comm.recv(&mut [0u8], runthrough::Source::Any, 7)?;
                    }
                    faults.kill(world.rank());
                    comm.barrier()?; // unwinds
                }
                comm.send(&[0u8], victim, 7)?;
                assert!(matches!(
                    comm.barrier(),
                    Err(Error::ProcFailed { .. } | Error::Revoked)
                ));
                comm.revoke()?;
                let shrunk = comm.shrink()?;
                expected.pop();
                assert_eq!(shrunk.group().world_ranks(), &expected[..]);
                assert_eq!(members_by_gather(&shrunk), expected);
                current = Current::Made(shrunk);
            }
            current.comm().barrier()?;
            assert_eq!(world.rank(), 0);
            Ok::<_, Error>(())
        });
        outcomes(results, &[1, 2, 3, 4, 5]);
    });
}

/// SPEC §3.5 "shrink: collective, fault-tolerant ... agreed by all of them": rank 2 dies inside
/// the shrink's agreement (before its first protocol message, so before contributing; or
/// before its second, after contributing), on top of rank 4 dead before the call. Every
/// survivor returns the same communicator: without rank 4, without rank 2 when it never
/// contributed; it works after a `validate_global`. The same with `ishrink`, whose pending
/// request holds the collective slot (another collective call is refused) while
/// point-to-point traffic flows, and completes once.
#[test]
fn ranks_die_during_shrink() {
    bounded(|| {
        let n = 7;
        for nonblocking in [false, true] {
            for message in [1, 2, 3] {
                let seen: Mutex<BTreeSet<Vec<u32>>> = Mutex::default();
                let results = runthrough::local(n)
                    .kill_at_operation(4, 1)
                    .kill_in_agreement(2, 1, message)
                    .run(|world| {
                        world.barrier().unwrap_err(); // rank 4 dies entering it
                                                      // Rank 2 dies in it.
                        let shrunk = if nonblocking {
                            ishrink_with_traffic(world)?
                        } else {
                            world.shrink()?
                        };
                        let members = shrunk.group().world_ranks().to_vec();
                        assert!(!members.contains(&4));
                        if message == 1 {
                            assert!(!members.contains(&2), "a non-contributor is not a member");
                        }
                        seen.lock().unwrap().insert(members);
                        shrunk.validate_global()?;
                        shrunk.barrier()?;
                        // The slot is free again on the parent.
                        world.validate_global()?;
                        Ok::<_, Error>(())
                    });
                outcomes(results, &[2, 4]);
                assert_eq!(seen.lock().unwrap().len(), 1, "one communicator for all");
            }
        }
    });
}

/// `world.ishrink()` waited for, with what may happen while it is pending: another collective
/// call is refused, and ranks 0 and 1 (alive) exchange a message.
fn ishrink_with_traffic(world: &Comm) -> Result<Comm, Error> {
    let mut request = world.ishrink()?;
    assert_eq!(world.barrier(), Err(Error::ConcurrentCollective));
    assert_eq!(
        world.validate_global().map(drop),
        Err(Error::ConcurrentCollective)
    );
    match world.rank() {
        0 => world.send(&[7u8], 1, 9)?,
        1 => {
            let mut got = [0u8];
            world.recv(&mut got, 0u32, 9)?;
            assert_eq!(got, [7]);
        }
        _ => {}
    }
    let shrunk = request.wait()?;
    assert_eq!(request.wait().map(drop), Err(Error::Request));
    Ok(shrunk)
}

/// SPEC §3.5 "the revocation is propagated reliably even while ranks die": rank 0 revokes and
/// dies after its first revocation packet (to rank 1); rank 1 forwards it to one rank and dies.
/// Every survivor, blocked in a receive from a live rank, returns `Revoked`; then they shrink.
#[test]
fn revocation_reaches_every_survivor_while_ranks_die_during_its_propagation() {
    bounded(|| {
        let n = 6;
        let results = runthrough::local(n)
            .kill_in_revoke(0, 2)
            .kill_in_revoke(1, 2)
            .run(|world| {
                if world.rank() == 0 {
                    world.revoke()?;
                    world.barrier()?; // unwinds: it died in the revoke
                }
                let me = world.rank();
                let live_peer = if me == n - 1 { 2 } else { me + 1 };
                let outcome = world.recv(&mut [0u8], live_peer, 3);
                assert_eq!(outcome, Err(Error::Revoked), "rank {me}");
                let shrunk = world.shrink()?;
                // (A dying rank could in principle have contributed before it died: validate
                // so that the gather runs over the live members.)
                shrunk.validate_global()?;
                let members: Vec<u32> = members_by_gather(&shrunk)
                    .into_iter()
                    .filter(|&w| w != u32::MAX)
                    .collect();
                assert_eq!(members, vec![2, 3, 4, 5]);
                Ok::<_, Error>(())
            });
        outcomes(results, &[0, 1]);
    });
}

/// SPEC §3.4 creation is agreed and §3.5 revoke: a revocation that comes while some ranks are
/// inside a `dup` and others never call it (the revoking rank goes straight to `shrink`)
/// releases every rank in the `dup` with `Revoked`, none left blocked; then all shrink.
#[test]
fn a_revocation_releases_a_creation_that_some_ranks_never_call() {
    bounded(|| {
        let n = 5;
        let results = runthrough::local(n).run(|world| {
            if world.rank() == 0 {
                world.recv(&mut [0u8], 1u32, 1)?; // rank 1 is about to enter dup
                world.revoke()?;
            } else {
                if world.rank() == 1 {
                    world.send(&[1u8], 0, 1)?;
                }
                assert_eq!(world.dup().map(|_| ()), Err(Error::Revoked));
            }
            let shrunk = world.shrink()?;
            assert_eq!(shrunk.size(), n);
            shrunk.barrier()?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.5 with two communicators: two overlapping communicators each lose a rank at once
/// (world ranks 0 and 6); each is revoked and shrunk by its own survivors, the ranks in both
/// doing the two recoveries concurrently on two threads. No deadlock, and both shrunk
/// communicators give the reference sums.
#[test]
fn two_overlapping_communicators_each_losing_a_rank_are_shrunk_by_their_own_survivors() {
    bounded(|| {
        let n = 7;
        let universe = runthrough::local(n);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            let all = world.group();
            let a = world.create(&all.incl(&[0, 1, 2, 3, 4])?)?;
            let b = world.create(&all.incl(&[2, 3, 4, 5, 6])?)?;
            let me = world.rank();
            if me == 0 || me == 6 {
                faults.kill(me);
                world.barrier()?; // unwinds
            }
            let recover = |comm: &Comm, dead: u32| -> Result<Vec<u32>, Error> {
                assert!(comm.barrier().is_err());
                comm.revoke()?;
                let shrunk = comm.shrink()?;
                let members = members_by_gather(&shrunk);
                let mut sum = [0u32];
                shrunk.all_reduce(&[me], &mut sum, Op::Sum)?;
                assert_eq!(sum[0], members.iter().sum::<u32>());
                assert!(!members.contains(&dead));
                Ok(members)
            };
            let recover = &recover;
            let (in_a, in_b) = std::thread::scope(|scope| {
                let in_a = a.as_ref().map(|a| scope.spawn(move || recover(a, 0)));
                let in_b = b.as_ref().map(|b| scope.spawn(move || recover(b, 6)));
                (
                    in_a.map(|h| h.join().unwrap()),
                    in_b.map(|h| h.join().unwrap()),
                )
            });
            if let Some(members) = in_a {
                assert_eq!(members?, vec![1, 2, 3, 4]);
            }
            if let Some(members) = in_b {
                assert_eq!(members?, vec![2, 3, 4, 5]);
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[0, 6]);
    });
}

/// SPEC §2.1: several non-blocking collectives may be outstanding at once; a pending `iagree`
/// holds no slot ordinary collectives need. Rank 0 starts an `iagree` and then calls a barrier
/// and an all-reduce; the others call the barrier and the all-reduce first and start their
/// `iagree` after (mpi4py's test_ulfm testIAgree does this): everything completes, with the
/// agreed flag and the collective results at every rank. Before, rank 0's barrier was
/// `ConcurrentCollective` (or, in the C library, completed the agreement first: a deadlock).
#[test]
fn collectives_run_while_an_agreement_is_pending() {
    bounded(|| {
        let n = 4;
        let results = runthrough::local(n).run(|world| {
            let flag = !(1u32 << world.rank());
            let mut sum = [0u32];
            let agreed = if world.rank() == 0 {
                let mut request = world.iagree(flag)?;
                world.barrier()?;
                world.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum)?;
                request.wait()?
            } else {
                world.barrier()?;
                world.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum)?;
                world.iagree(flag)?.wait()?
            };
            Ok::<_, Error>((agreed, sum[0]))
        });
        for outcome in results {
            assert_eq!(outcome.returned().unwrap(), Ok((!0b1111u32, 6)));
        }
    });
}

/// SPEC §2.1: several non-blocking agreements may be outstanding at once, and blocking ones
/// started after them run after them, in the order each rank started them. Every rank starts
/// two `iagree`s, then a blocking `validate_global` (which waits for both), a third `iagree`
/// and a blocking `agree`; it completes the requests in reverse order: each gets its own
/// flags' AND. Rank 3 dies before all of it: the first agreement reports it (nobody
/// acknowledged it), `validate_global` recognizes it, and the later ones succeed over the
/// survivors.
#[test]
fn agreements_queue_behind_pending_ones() {
    bounded(|| {
        let n = 4;
        let dead = 3;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                let me = world.rank();
                let mut first = world.iagree(!(1 << me))?;
                let mut second = world.iagree(!(1 << (me + 8)))?;
                let g = world.validate_global()?;
                assert_eq!(g.state_of(dead), Some(RankState::NULL | RankState::NEW));
                let mut third = world.iagree(!(1 << (me + 16)))?;
                assert_eq!(world.agree(0xff00_0000 | (1 << me)), Ok(0xff00_0000));
                assert_eq!(third.wait(), Ok(!(0b111 << 16)));
                assert_eq!(
                    second.wait(),
                    Err(Error::AgreeProcFailed {
                        flag: !(0b111 << 8)
                    })
                );
                assert_eq!(first.wait(), Err(Error::AgreeProcFailed { flag: !0b111 }));
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// SPEC §3.5 / §2.1, non-blocking: `iagree` and `ivalidate_global` return what the blocking
/// calls return, at every rank; a blocking `agree` started while an `iagree` is pending runs
/// after it; while an `ivalidate_global` is pending, another agreement is
/// `ConcurrentCollective`; a rank dying before contributing makes `iagree` (and the `agree`
/// after it) report `AgreeProcFailed` everywhere.
#[test]
fn non_blocking_agree_and_validate_global() {
    bounded(|| {
        let n = 5;
        let dead = 4;
        let results = runthrough::local(n)
            .kill_at_operation(dead, 1)
            .run(|world| {
                let mut request = world.iagree(!(1 << world.rank()))?;
                assert_eq!(world.agree(1), Err(Error::AgreeProcFailed { flag: 1 }));
                let flag = loop {
                    match request.test() {
                        Ok(None) => std::thread::yield_now(),
                        other => break other,
                    }
                };
                let expected = !0b1111u32;
                assert_eq!(flag, Err(Error::AgreeProcFailed { flag: expected }));
                assert_eq!(request.wait(), Err(Error::Request));
                let mut validate = world.ivalidate_global()?;
                assert_eq!(world.agree(1), Err(Error::ConcurrentCollective));
                let g = validate.wait()?;
                assert_eq!(g.state_of(dead), Some(RankState::NULL | RankState::NEW));
                assert_eq!(world.global_view()?, g);
                let mut request = world.iagree(0b101)?;
                assert_eq!(request.wait(), Ok(0b101));
                world.barrier()?;
                Ok::<_, Error>(())
            });
        outcomes(results, &[dead]);
    });
}

/// A rank that dies after its `ishrink` returned does not disturb the others: their new
/// communicator detects it as any communicator does, and a dropped pending request completes
/// its call (every participant needs it) before the rank goes on.
#[test]
fn a_death_after_ishrink_shows_in_the_new_communicator_and_a_dropped_request_completes() {
    bounded(|| {
        let universe = runthrough::local(4);
        let faults = universe.fault_handle();
        let results = universe.run(|world| {
            if world.rank() == 3 {
                drop(world.ishrink()?); // completes the shrink here, then dies
                faults.kill(3);
                world.barrier()?; // unwinds
            }
            let shrunk = world.ishrink()?.wait()?;
            assert_eq!(shrunk.size(), 4);
            let mut sum = [0u32];
            let outcome = shrunk.all_reduce(&[1u32], &mut sum, Op::Sum);
            assert_eq!(outcome, Err(Error::ProcFailed { rank: 3 }));
            shrunk.validate_global()?;
            shrunk.all_reduce(&[1u32], &mut sum, Op::Sum)?;
            assert_eq!(sum, [3]);
            Ok::<_, Error>(())
        });
        outcomes(results, &[3]);
    });
}

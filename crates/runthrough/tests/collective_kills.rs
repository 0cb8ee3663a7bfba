// SPDX-License-Identifier: MIT OR Apache-2.0
//! Deaths at a chosen point inside a collective (`kill_in_collective`, the in-process form of
//! rtrun's `--kill RANK@all_reduce:K[:M]`): the rank dies in its K-th call of the operation, at
//! entry or just before its M-th message of that call. SPEC §1 (no call blocks forever after a
//! failure) and §3.3: every survivor's call returns, `Ok` only with the right result; after
//! `validate_global` the collective runs over the survivors.

mod collective_reference;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use collective_reference::{check, Kind, ALL};
use runthrough::{Error, Rank, RankState};
use support::{bounded, outcomes};

fn operation(kind: Kind) -> &'static str {
    match kind {
        Kind::Barrier => "barrier",
        Kind::Broadcast => "bcast", // the MPI spelling is accepted too
        Kind::Reduce | Kind::ReduceWith => "reduce",
        Kind::AllReduce | Kind::AllReduceLarge | Kind::AllReduceWith => "all_reduce",
        Kind::Gather | Kind::GatherVarcount => "gather",
        Kind::AllGather => "allgather",
        Kind::Scatter | Kind::ScatterVarcount => "scatter",
        Kind::AllToAll | Kind::AllToAllLarge => "all_to_all",
        Kind::Scan | Kind::ScanWith => "scan",
        Kind::Exscan | Kind::ExscanWith => "exscan",
    }
}

/// Whether `outcome` is what a survivor may see from a collective while `dead` dies: `Ok`, or
/// `ProcFailed` naming it (a death disables every pending collective, SPEC §3.3, including one a
/// slow rank is still finishing).
fn tolerable(outcome: &Result<(), Error>, dead: Rank) -> bool {
    match outcome {
        Ok(()) => true,
        Err(Error::ProcFailed { rank }) => *rank == dead,
        Err(_) => false,
    }
}

/// Every collective kind, the victim dying in its first call of the operation at entry, before
/// its first and (for the algorithms where it sends at least two) before its second message:
/// it dies inside that call (a victim that survived it would find no failure in G and fail the
/// test); every survivor's call returns `Ok` with the reference result or `ProcFailed` naming
/// it, and after `validate_global` the same call is right over the survivors.
#[test]
fn a_death_at_each_chosen_point_of_every_collective() {
    let n: u32 = 5;
    let dead: Rank = 2;
    let everyone: Vec<Rank> = (0..n).collect();
    let survivors: Vec<Rank> = everyone.iter().copied().filter(|&r| r != dead).collect();
    for &kind in ALL {
        let name = operation(kind);
        let mut points = vec![0, 1];
        if matches!(name, "barrier" | "all_reduce" | "allgather" | "scan") {
            points.push(2);
        }
        for message in points {
            let (everyone, survivors) = (everyone.clone(), survivors.clone());
            let victim_entered = Arc::new(AtomicBool::new(false));
            let entered = Arc::clone(&victim_entered);
            bounded(move || {
                let results = runthrough::local(n)
                    .kill_in_collective(dead, name, 1, message)
                    .run(move |world| {
                        if name != "barrier" {
                            // Everyone is up (not the counted operation). A rank still finishing
                            // it when the victim dies sees ProcFailed (SPEC §3.3).
                            let sync = world.barrier();
                            assert!(tolerable(&sync, dead), "{kind:?}: {sync:?}");
                        }
                        if world.rank() == dead {
                            entered.store(true, Ordering::SeqCst);
                        }
                        let first = check(world, kind, 0, &everyone);
                        assert!(
                            tolerable(&first, dead),
                            "{kind:?} message {message}: {first:?}"
                        );
                        let global = world.validate_global()?;
                        assert_eq!(
                            global.state_of(dead),
                            Some(RankState::NULL | RankState::NEW),
                            "{kind:?} message {message}"
                        );
                        assert_eq!(global.num_failed(), 1);
                        check(world, kind, 0, &survivors)
                    });
                outcomes(results, &[dead]);
            });
            assert!(
                victim_entered.load(Ordering::SeqCst),
                "{kind:?} message {message}: the victim died before the call"
            );
        }
    }
}

/// The victim's K-th call counts only calls of the named operation: barriers in between do not
/// move it, and the rank dies in its third all-reduce, after two complete ones.
#[test]
fn the_call_number_counts_only_the_named_operation() {
    let n = 4;
    let victim_completed = Arc::new(AtomicU64::new(0));
    let completed = Arc::clone(&victim_completed);
    bounded(move || {
        let results = runthrough::local(n)
            .kill_in_collective(1, "allreduce", 3, 1)
            .run(move |world| {
                for round in 0..3 {
                    for outcome in [world.barrier(), world.barrier()] {
                        assert!(tolerable(&outcome, 1), "round {round}: {outcome:?}");
                    }
                    let mut sum = [0u64];
                    let outcome = world.all_reduce(&[1u64], &mut sum, runthrough::Op::Sum);
                    assert!(tolerable(&outcome, 1), "round {round}: {outcome:?}");
                    if outcome.is_ok() {
                        assert_eq!(sum[0], u64::from(n), "round {round}");
                        if world.rank() == 1 {
                            completed.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                let global = world.validate_global()?;
                assert_eq!(global.ranks(RankState::NULL).count(), 1);
                Ok::<_, Error>(global.state_of(1))
            });
        for value in outcomes(results, &[1]).into_iter().flatten() {
            assert_eq!(value, Some(RankState::NULL | RankState::NEW));
        }
    });
    // Rank 1 completed its first two all-reduces and died in the third.
    assert_eq!(victim_completed.load(Ordering::SeqCst), 2);
}
/// A point past the call's last message is survived, and the fault is spent: a broadcast leaf
/// sends nothing, so `bcast:2:1` at a leaf kills no one, in that call or any later one.
#[test]
fn a_point_the_call_never_reaches_is_survived_and_spent() {
    bounded(|| {
        let n = 4;
        // Rooted at 0 over 4 ranks, rank 3 is a leaf: it only receives.
        let results = runthrough::local(n)
            .kill_in_collective(3, "broadcast", 2, 1)
            .run(|world| {
                for round in 0..4u64 {
                    let mut value = [if world.rank() == 0 { round + 10 } else { 0 }];
                    world.broadcast(&mut value, 0)?;
                    assert_eq!(value[0], round + 10);
                }
                Ok::<_, Error>(world.validate_global()?.num_failed())
            });
        for failed in outcomes(results, &[]).into_iter().flatten() {
            assert_eq!(failed, 0);
        }
    });
}

/// A name that is not a collective is a programming error of the test, not a fault that
/// silently never happens.
#[test]
#[should_panic(expected = "not a collective operation")]
fn an_unknown_operation_name_is_refused() {
    let _ = runthrough::local(2).kill_in_collective(0, "allreduse", 1, 0);
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Many more in-process ranks than cores (issue 12, step a: "oversubscription must never turn
//! microseconds into seconds"): collective loops complete, and a death still wakes every
//! sleeper. No timed assertion: the hang watchdog of `support::bounded` is the only clock.

mod support;

use runthrough::{Error, Op, Result};
use support::{bounded, outcomes};

/// Barriers and all-reduces in a loop on `ranks` ranks; every rank checks every sum.
fn collective_loop(ranks: u32, rounds: u64) {
    bounded(move || {
        let results = runthrough::local(ranks).run(|world| -> Result<()> {
            let n = u64::from(world.size());
            for round in 0..rounds {
                world.barrier()?;
                let mut sum = [0u64];
                world.all_reduce(&[u64::from(world.rank()) + round], &mut sum, Op::Sum)?;
                assert_eq!(sum[0], n * (n - 1) / 2 + n * round);
            }
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// 64 ranks on a machine of a few cores: the waiters yield at once and sleep, and the loop
/// completes.
#[test]
fn sixty_four_ranks_loop_over_barrier_and_all_reduce() {
    collective_loop(64, 200);
}

/// 256 ranks: the same, with a quarter of a thousand threads taking turns on the cores.
#[test]
fn two_hundred_fifty_six_ranks_loop_over_barrier_and_all_reduce() {
    collective_loop(256, 20);
}

/// SPEC §1 "no call blocks forever after a failure", oversubscribed: 127 ranks wait in `recv`
/// for rank 0 (most of them asleep on their doorbells by then), rank 0 dies at its first call,
/// and every waiter is woken with `ProcFailed`.
#[test]
fn a_death_wakes_every_sleeping_receiver_when_oversubscribed() {
    bounded(|| {
        let results = runthrough::local(128)
            .kill_at_operation(0, 1)
            .run(|world| -> Result<()> {
                let mut buf = [0u8];
                match world.recv(&mut buf, 0u32, 0) {
                    Err(Error::ProcFailed { rank: 0 }) => Ok(()),
                    other => panic!("rank {}: expected ProcFailed, got {other:?}", world.rank()),
                }
            });
        outcomes(results, &[0]);
    });
}

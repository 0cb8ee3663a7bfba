// SPDX-License-Identifier: MIT OR Apache-2.0
//! An rsmpi program that survives the loss of a rank, with ULFM's pattern: each step is an
//! rsmpi all-reduce; the ranks agree on whether it worked everywhere; when it did not, they
//! revoke the communicator, shrink it to the survivors and redo the step.
//!
//! ```sh
//! rtrun -n 4 --kill 2@all_reduce:3 --timeout 60 target/rsmpi/release/examples/survive_kill
//! ```
//!
//! Rank 2 dies in its third all-reduce (step 2); ranks 0, 1 and 3 finish the six steps, and
//! rank 0 prints their total: 74 (96 when no rank dies).

use mpi::collective::SystemOperation;
use mpi::traits::*;
use runthrough_rsmpi::{take_error, FaultTolerant};

const STEPS: i64 = 6;

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let me = world.rank();
    // rsmpi's calls return no error: keep each one for take_error() instead of ending the
    // process. Communicators made from world (dup, shrink) inherit the handler.
    world.record_errors().expect("an error handler");
    let mut comm = world.duplicate();
    let mut total = 0i64;
    let mut step = 0i64;
    while step < STEPS {
        let mine = i64::from(me) + step;
        let mut sum = 0i64;
        comm.all_reduce_into(&mine, &mut sum, SystemOperation::sum());
        let failed = take_error();
        // Agree (fault-tolerant, the same answer at every survivor) on whether the step
        // worked at every rank.
        let everywhere = comm.agree(i32::from(failed.is_none())).unwrap_or(0);
        if everywhere == 1 {
            total += sum;
            step += 1;
            continue;
        }
        // A rank failed: shrink to the survivors and redo the step.
        let _ = comm.revoke();
        let survivors = comm.shrink().expect("the survivors' communicator");
        let failed = comm.get_failed().unwrap_or_default();
        drop(std::mem::replace(&mut comm, survivors));
        let _ = take_error(); // freeing the revoked communicator reports MPIX_ERR_REVOKED
        if comm.rank() == 0 {
            println!(
                "step {step}: failed ranks {failed:?}; going on with {} ranks",
                comm.size()
            );
        }
    }
    if comm.rank() == 0 {
        println!(
            "{} ranks finished {STEPS} steps: total {total}",
            comm.size()
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every call of runthrough-rsmpi on rsmpi communicators, checked (a test program: it panics,
//! so exits non-zero, at the first wrong answer; rank 0 prints `No Errors` at the end).
//!
//! ```sh
//! rtrun -n 4 --kill 3@all_reduce:2 --timeout 60 target/rsmpi/release/examples/views
//! ```
//!
//! Rank 3 dies in its second all-reduce. The survivors see the error (recorded), agree on the
//! failure with validate_global (run-through: the same communicator goes on, rank 3 counting
//! as MPI_PROC_NULL), read both views and the ULFM failure lists, reduce again over the
//! survivors, then revoke a duplicate and shrink it.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use runthrough_rsmpi::{take_error, FaultTolerant, FAILED, NEW, NULL, OK};

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    assert_eq!(world.size(), 4, "run on 4 ranks");
    let me = world.rank();
    world.record_errors().expect("an error handler");
    assert_eq!(world.num_state_global(OK), Ok(4));

    let mut sum = 0;
    world.all_reduce_into(&me, &mut sum, SystemOperation::sum());
    assert_eq!((sum, take_error()), (6, None));
    // Each rank tells rank 3 it is past the first all-reduce before rank 3 dies, in its
    // second (rtrun --kill 3@all_reduce:2): a failure learned of during a collective makes it
    // fail there, even where the dead rank had done its part.
    if me == 3 {
        for rank in 0..3 {
            let (_, _): (i32, _) = world.process_at_rank(rank).receive();
        }
    } else {
        world.process_at_rank(3).send(&me);
    }
    assert_eq!(take_error(), None);
    world.all_reduce_into(&me, &mut sum, SystemOperation::sum());
    let error = take_error().expect("the all-reduce with a dead rank fails");
    assert!(error.is_proc_failed(), "{error} (class {})", error.class());

    // The local view: this rank's knowledge; the global one: agreed by the survivors.
    assert_eq!(world.validate_local(), Ok(1));
    let local = world.state_local(0).expect("the local view");
    assert_eq!(local.len(), 1);
    assert_eq!(local[0].rank, 3);
    assert_ne!(local[0].state & FAILED, 0, "{local:?}");
    assert_eq!(world.validate_global(), Ok(1));
    let global = world.state_global(NULL | NEW).expect("the global view");
    assert_eq!(global.len(), 1, "{global:?}");
    assert_eq!(global[0].rank, 3);
    assert_eq!(world.num_state_global(OK), Ok(3));
    assert_eq!(world.num_state_local(NULL), Ok(1));

    // ULFM's lists.
    assert_eq!(world.get_failed(), Ok(vec![3]));
    assert_eq!(world.ack_failed(1), Ok(1));
    world.failure_ack().expect("failure_ack");
    assert_eq!(world.failure_get_acked(), Ok(vec![3]));

    // Collectives run over the survivors again, on the same communicator.
    world.all_reduce_into(&me, &mut sum, SystemOperation::sum());
    assert_eq!((sum, take_error()), (3, None));
    assert_eq!(world.agree(0b101), Ok(0b101));

    // Revoke a duplicate: its next call fails everywhere; shrink it to the survivors.
    let dup = world.duplicate();
    assert_eq!(dup.is_revoked(), Ok(false));
    // Every rank has checked before rank 0 revokes (an agreement, which a revocation does not
    // interrupt, unlike a barrier that finished at rank 0 and not yet elsewhere).
    assert_eq!(dup.agree(1), Ok(1));
    if me == 0 {
        dup.revoke().expect("revoke");
    }
    dup.barrier();
    let error = take_error().expect("a barrier on a revoked communicator fails");
    assert!(error.is_revoked(), "{error}");
    assert_eq!(dup.is_revoked(), Ok(true));
    let small = dup.shrink().expect("shrink");
    assert_eq!((small.size(), small.rank()), (3, me));
    small.barrier();
    assert_eq!(take_error(), None);
    drop(dup);
    let _ = take_error();

    // Errors come back from these calls as values once errors return.
    world.set_errors_return().expect("MPI_ERRORS_RETURN");
    let error = world.ack_failed(-1).expect_err("a negative count is wrong");
    assert!(!error.to_string().is_empty());
    drop(small);
    if me == 0 {
        println!("No Errors");
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collective operations (semantics §3.3; MPI-4.0 chapter 6): barrier, broadcast, reduce,
//! all-reduce, gather(v), all-gather, scatter(v), all-to-all, scan and exscan, as methods of
//! [`Comm`].
//!
//! # Contract
//! - The participants of a collective are the OK ranks of the communicator's G, in rank order.
//!   Every algorithm runs over that list (a rank's *virtual index* is its position in it), so a
//!   rank recognized as failed (NULL) takes no part: it contributes nothing to reductions and
//!   its slots in gather / all-gather / all-to-all outputs and scatter inputs are left untouched.
//!   Ranks keep their numbers: buffers have one slot per comm rank (`size()` slots).
//! - Collectives are disabled by an unrecognized failure: once this rank's detector knows of a
//!   failed participant that G does not hold, every collective here, pending or new, returns
//!   `Error::ProcFailed` until a `validate_global` recognizes the failure. A rank that waits
//!   for a dead rank, directly or through the algorithm's tree, returns `ProcFailed` too: no
//!   collective stays blocked. Results need not be uniform across ranks.
//! - A root out of range is `Error::Root`; a root recognized as failed is `Error::RootFailed`;
//!   buffers of the wrong length are `Error::Count`; a predefined operation that is not defined
//!   on the element type is `Error::Argument`. Argument errors are found before any message is
//!   sent (for fault injection such a call is no operation), except those that only the data reveal:
//!   ranks that passed different counts (an erroneous program in MPI) get `Error::Count` where a
//!   block of the wrong length arrives, and the algorithm still runs to its end so that nobody
//!   waits for a message that is never sent. The one exception: all-reduce and all-to-all choose
//!   their algorithm by message size, and ranks whose counts fall on different sides of the
//!   threshold run different algorithms and may wait for each other.
//! - Two collectives on one communicator at once (two threads) are `Error::ConcurrentCollective`.
//!
//! ```
//! use runthrough::Op;
//! let sums = runthrough::local(4).run(|world| {
//!     let mut sum = [0u64];
//!     world.all_reduce(&[world.rank() as u64 + 1], &mut sum, Op::Sum)?;
//!     world.barrier()?;
//!     Ok::<_, runthrough::Error>(sum[0])
//! });
//! for outcome in sums {
//!     assert_eq!(outcome.returned().unwrap().unwrap(), 10);
//! }
//! ```

mod alltoall;
mod barrier;
mod broadcast;
mod gather;
mod nonblocking;
mod op;
mod reduce;
mod scan;
mod scatter;

pub use gather::PartitionMut;
pub use nonblocking::{CollectiveRequest, PackedOp};
pub use op::{Op, Reducible, UserOp};
pub use scatter::Partition;

use runthrough_core::{Error, Rank, Result};

use crate::comm::Comm;

/// Rejects zero-sized element types (they have no bytes to send).
fn check_element<T>() -> Result<()> {
    if std::mem::size_of::<T>() == 0 {
        return Err(Error::Argument {
            reason: "zero-sized element type".into(),
        });
    }
    Ok(())
}

/// Checks a root argument's range (`Error::Root`).
fn check_root(comm: &Comm, root: Rank) -> Result<()> {
    if root < comm.size() {
        Ok(())
    } else {
        Err(Error::Root {
            root: root.into(),
            size: comm.size(),
        })
    }
}

/// A buffer-length error.
fn count_error(reason: String) -> Error {
    Error::Count { reason }
}

/// Checks that `len == expected` elements.
fn check_len(what: &str, len: usize, expected: usize) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(count_error(format!(
            "{what} holds {len} elements, {expected} expected"
        )))
    }
}

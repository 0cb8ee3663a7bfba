// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collective operations (SPEC §3.3; MPI-4.0 chapter 6): barrier, broadcast, reduce, all-reduce,
//! gather(v), all-gather, scatter(v), all-to-all, scan and exscan, as methods of [`Comm`].
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
pub(crate) mod call;
mod gather;
mod nonblocking;
mod op;
mod reduce;
mod scan;
mod scatter;
mod virtual_ranks;

pub use gather::PartitionMut;
pub use nonblocking::{CollectiveRequest, PackedOp};
pub use op::{Op, Reducible, UserOp};
pub use scatter::Partition;

use bytemuck::Pod;
use runthrough_core::{Error, Rank, Result};

use crate::collectives::call::CollectiveCall;
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

/// The root's position among the call's participants; `Error::RootFailed` when G recognizes
/// the root as failed.
fn root_index(call: &CollectiveCall<'_>, root: Rank) -> Result<usize> {
    call.participants
        .binary_search(&root)
        .map_err(|_| Error::RootFailed { root })
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

/// The elements of a received message (copied: a payload has no alignment guarantee).
fn elements<T: Pod>(bytes: &[u8]) -> Result<Vec<T>> {
    let partial = bytes.len() % std::mem::size_of::<T>();
    if partial != 0 {
        return Err(count_error(format!(
            "a message of {} bytes is not a whole number of elements",
            bytes.len()
        )));
    }
    Ok(bytemuck::pod_collect_to_vec(bytes))
}

/// Applies `f` to the elements of a received message: in the payload itself when its bytes are
/// aligned for `T` (the allocator's alignment makes that the usual case), else to an aligned
/// copy. Spares a reduction the copy of every incoming block into an intermediate vector.
fn with_elements<T: Pod, R>(bytes: &[u8], f: impl FnOnce(&[T]) -> Result<R>) -> Result<R> {
    if !bytes.len().is_multiple_of(std::mem::size_of::<T>()) {
        return Err(count_error(format!(
            "a message of {} bytes is not a whole number of elements",
            bytes.len()
        )));
    }
    match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(elements) => f(elements),
        Err(_) => f(&bytemuck::pod_collect_to_vec::<u8, T>(bytes)),
    }
}

/// Copies a received block into `out`, which it must fill exactly.
fn copy_into<T: Pod>(bytes: &[u8], out: &mut [T]) -> Result<()> {
    let target: &mut [u8] = bytemuck::cast_slice_mut(out);
    if bytes.len() != target.len() {
        return Err(count_error(format!(
            "received {} bytes for a buffer of {} bytes",
            bytes.len(),
            target.len()
        )));
    }
    target.copy_from_slice(bytes);
    Ok(())
}

/// Keeps the first error of an algorithm that must run to its end (so that no peer waits for a
/// message this rank would not send) and reports it then.
#[derive(Default)]
struct Deferred(Option<Error>);

impl Deferred {
    fn note(&mut self, outcome: Result<()>) {
        if let (None, Err(error)) = (&self.0, outcome) {
            self.0 = Some(error);
        }
    }

    fn into_result(self) -> Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload itself when aligned, an aligned copy when not: the same elements either way.
    #[test]
    fn with_elements_reads_aligned_and_misaligned_payloads_alike() {
        let values: Vec<u64> = (0..64).map(|i| i * 0x0101_0101).collect();
        let bytes: Vec<u8> = bytemuck::cast_slice(&values).to_vec();
        let mut shifted = vec![0u8; bytes.len() + 1];
        shifted[1..].copy_from_slice(&bytes);
        for payload in [&bytes[..], &shifted[1..]] {
            let got = with_elements::<u64, _>(payload, |elements| Ok(elements.to_vec())).unwrap();
            assert_eq!(got, values);
        }
    }

    #[test]
    fn with_elements_refuses_a_partial_element() {
        let outcome = with_elements::<u32, _>(&[0u8; 7], |_| Ok(()));
        assert!(matches!(outcome, Err(Error::Count { .. })));
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Gather, gatherv and all-gather (`MPI_Gather`, `MPI_Gatherv`, `MPI_Allgather`, MPI-4.0 §6.5,
//! §6.7).
//!
//! Each blocking call and its non-blocking form ([`Comm::igather`], ...) run one
//! implementation, the engine's schedule (`runthrough_core::engine::Schedule::gather`,
//! `::all_gather`). The algorithms, over the participants (the OK ranks of G):
//! - **gather(v)**: a binomial tree rooted at the root, ⌈log₂ n⌉ levels. Each rank appends its
//!   children's blocks after its own (smallest subtree first, which is virtual-rank order) and
//!   sends them to its parent as length-prefixed blocks, so inner ranks need not know the counts
//!   of gatherv. The root writes each participant's block into that participant's slot.
//! - **all-gather**: Bruck's algorithm, ⌈log₂ n⌉ rounds; in the round of distance d every rank
//!   sends the first min(d, n − d) blocks it holds to the rank d below it and appends those of
//!   the rank d above, so any n works and every rank sends n − 1 blocks in all.
//!
//! Outputs have one slot per comm rank; the slots of ranks recognized as failed (NULL in G) are
//! left untouched.

use bytemuck::Pod;
use runthrough_core::{Rank, Result};

use super::{check_len, count_error};
use crate::comm::Comm;

/// A receive buffer cut into one block per comm rank, for the variable-count collectives
/// (gatherv's `recvbuf`, `recvcounts`, `displs`; MPI-4.0 §6.5): rank r's block is
/// `buffer[displacements[r] .. displacements[r] + counts[r]]`. Blocks must not overlap.
#[derive(Debug)]
pub struct PartitionMut<'a, T> {
    pub(super) buffer: &'a mut [T],
    pub(super) counts: Vec<usize>,
    pub(super) displacements: Vec<usize>,
}

impl<'a, T> PartitionMut<'a, T> {
    /// Rank r's block is `counts[r]` elements at `displacements[r]`.
    pub fn new(buffer: &'a mut [T], counts: &[usize], displacements: &[usize]) -> Self {
        PartitionMut {
            buffer,
            counts: counts.to_vec(),
            displacements: displacements.to_vec(),
        }
    }

    /// Blocks of `counts[r]` elements one after the other, in rank order, from the start.
    pub fn contiguous(buffer: &'a mut [T], counts: &[usize]) -> Self {
        let displacements = prefix_sums(counts);
        PartitionMut {
            buffer,
            counts: counts.to_vec(),
            displacements,
        }
    }
}

/// The offset of each block when blocks follow each other.
pub(super) fn prefix_sums(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0usize, |next, &count| {
            let at = *next;
            *next = next.saturating_add(count);
            Some(at)
        })
        .collect()
}

/// Checks that `counts` and `displacements` describe `size` blocks inside `len` elements.
pub(super) fn check_partition(
    counts: &[usize],
    displacements: &[usize],
    len: usize,
    size: u32,
) -> Result<()> {
    check_len("the counts", counts.len(), size as usize)?;
    check_len("the displacements", displacements.len(), size as usize)?;
    for (rank, (&count, &at)) in counts.iter().zip(displacements).enumerate() {
        if !matches!(at.checked_add(count), Some(end) if end <= len) {
            return Err(count_error(format!(
                "the block of rank {rank} ({count} elements at {at}) ends past the buffer of {len}"
            )));
        }
    }
    Ok(())
}

impl Comm {
    /// Collects every participant's `send` into `recv` at `root`, rank r's block at
    /// `recv[r·count ..]` with `count = send.len()` (`MPI_Gather`, MPI-4.0 §6.5; semantics §3.3).
    /// `recv` is required at the root (`size()·count` elements) and ignored elsewhere; the slots
    /// of ranks recognized as failed (NULL in G) are left untouched. Binomial tree.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::RootFailed` when G recognizes `root` as failed; `Error::Root` when it is out of
    ///   range.
    /// - `Error::Count` when the root's `recv` is not `size()·send.len()` long, or a rank sent a
    ///   block of another length; `Error::Argument` when `recv` is `None` at the root.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn gather<T: Pod>(&self, send: &[T], recv: Option<&mut [T]>, root: Rank) -> Result<()> {
        self.gather_call(send, recv, root, true)?.finish()
    }

    /// Collects every participant's `send`, of any length, into the blocks of `recv` at `root`
    /// (`MPI_Gatherv`, MPI-4.0 §6.5; semantics §3.3): rank r's `send` must have `counts[r]`
    /// elements. `recv` is required at the root and ignored elsewhere; the blocks of ranks
    /// recognized as failed (NULL in G) are left untouched. Binomial tree.
    ///
    /// # Errors
    /// Those of [`Comm::gather`]; `Error::Count` also when the partition does not have
    /// `size()` blocks inside its buffer, or a rank's `send` is not its count long.
    pub fn gather_varcount<T: Pod>(
        &self,
        send: &[T],
        recv: Option<PartitionMut<'_, T>>,
        root: Rank,
    ) -> Result<()> {
        self.gather_varcount_call(send, recv, root, true)?.finish()
    }

    /// Collects every participant's `send` into every participant's `recv`, rank r's block at
    /// `recv[r·count ..]` with `count = send.len()` (`MPI_Allgather`, MPI-4.0 §6.7; semantics
    /// §3.3). The slots of ranks recognized as failed (NULL in G) are left untouched. Bruck's
    /// algorithm, ⌈log₂ n⌉ rounds.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Count` when `recv` is not `size()·send.len()` long, or a rank sent a block of
    ///   another length.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn all_gather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.all_gather_call(send, recv, true)?.finish()
    }
}

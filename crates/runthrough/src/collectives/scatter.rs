// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scatter and scatterv (`MPI_Scatter`, `MPI_Scatterv`, MPI-4.0 §6.6): a binomial tree rooted
//! at the root, ⌈log₂ n⌉ levels.
//!
//! The root sends each child the blocks of that child's subtree (a contiguous range of virtual
//! ranks) as length-prefixed blocks; every rank keeps the first block and passes the rest down
//! the same way, so inner ranks need not know the counts of scatterv. The blocks of ranks
//! recognized as failed (NULL in G) are not sent.
//!
//! The blocking calls and [`Comm::iscatter`] / [`Comm::iscatter_varcount`] run one
//! implementation, the engine's schedule (`runthrough_core::engine::Schedule::scatter`).

use bytemuck::Pod;
use runthrough_core::{Rank, Result};

use super::gather::prefix_sums;
use crate::comm::Comm;

/// A send buffer cut into one block per comm rank, for the variable-count collectives
/// (scatterv's `sendbuf`, `sendcounts`, `displs`; MPI-4.0 §6.6): rank r's block is
/// `buffer[displacements[r] .. displacements[r] + counts[r]]`.
#[derive(Debug, Clone)]
pub struct Partition<'a, T> {
    pub(super) buffer: &'a [T],
    pub(super) counts: Vec<usize>,
    pub(super) displacements: Vec<usize>,
}

impl<'a, T> Partition<'a, T> {
    /// Rank r's block is `counts[r]` elements at `displacements[r]`.
    pub fn new(buffer: &'a [T], counts: &[usize], displacements: &[usize]) -> Self {
        Partition {
            buffer,
            counts: counts.to_vec(),
            displacements: displacements.to_vec(),
        }
    }

    /// Blocks of `counts[r]` elements one after the other, in rank order, from the start.
    pub fn contiguous(buffer: &'a [T], counts: &[usize]) -> Self {
        Partition {
            buffer,
            counts: counts.to_vec(),
            displacements: prefix_sums(counts),
        }
    }
}

impl Comm {
    /// Sends block r of `send` at `root` (`send[r·count ..]`, `count = recv.len()`) to each
    /// participant r, into its `recv` (`MPI_Scatter`, MPI-4.0 §6.6; semantics §3.3). `send` is
    /// required at the root (`size()·count` elements) and ignored elsewhere; the blocks of ranks
    /// recognized as failed (NULL in G) are not sent. Binomial tree.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::RootFailed` when G recognizes `root` as failed; `Error::Root` when it is out of
    ///   range.
    /// - `Error::Count` when the root's `send` is not `size()·recv.len()` long, or the block that
    ///   arrives is not `recv.len()` long; `Error::Argument` when `send` is `None` at the root.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn scatter<T: Pod>(&self, send: Option<&[T]>, recv: &mut [T], root: Rank) -> Result<()> {
        self.scatter_call(send, recv, root, true)?.finish()
    }

    /// Sends block r of the partition `send` at `root` to each participant r, into its `recv`
    /// (`MPI_Scatterv`, MPI-4.0 §6.6; semantics §3.3): rank r's `recv` must be `counts[r]` long.
    /// `send` is required at the root and ignored elsewhere; the blocks of ranks recognized as
    /// failed (NULL in G) are not sent. Binomial tree.
    ///
    /// # Errors
    /// Those of [`Comm::scatter`]; `Error::Count` also when the partition does not have
    /// `size()` blocks inside its buffer.
    pub fn scatter_varcount<T: Pod>(
        &self,
        send: Option<Partition<'_, T>>,
        recv: &mut [T],
        root: Rank,
    ) -> Result<()> {
        self.scatter_varcount_call(send, Some(recv), root, true)?
            .finish()
    }
}

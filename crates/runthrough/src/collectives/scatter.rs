// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scatter and scatterv (`MPI_Scatter`, `MPI_Scatterv`, MPI-4.0 §6.6): a binomial tree rooted
//! at the root, ⌈log₂ n⌉ levels.
//!
//! The root sends each child the blocks of that child's subtree (a contiguous range of virtual
//! ranks) as length-prefixed blocks; every rank keeps the first block and passes the rest down
//! the same way, so inner ranks need not know the counts of scatterv. The blocks of ranks
//! recognized as failed (NULL in G) are not sent.

use bytemuck::Pod;
use runthrough_core::fault::Collective;
use runthrough_core::{Error, Rank, Result};

use super::gather::{check_partition, prefix_sums};
use super::virtual_ranks::VirtualRanks;
use super::{blocks, check_element, check_len, check_root, copy_into, root_index};
use crate::collectives::call::CollectiveCall;
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
    /// participant r, into its `recv` (`MPI_Scatter`, MPI-4.0 §6.6; SPEC §3.3). `send` is
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
        check_element::<T>()?;
        check_root(self, root)?;
        let send = match (self.rank() == root, send) {
            (true, Some(send)) => {
                check_len(
                    "the scatter send buffer",
                    send.len(),
                    (self.size() as usize).saturating_mul(recv.len()),
                )?;
                Some(Partition::contiguous(
                    send,
                    &vec![recv.len(); self.size() as usize],
                ))
            }
            (true, None) => return Err(missing_buffer("scatter")),
            (false, _) => None,
        };
        self.scatter_from(send, recv, root)
    }

    /// Sends block r of the partition `send` at `root` to each participant r, into its `recv`
    /// (`MPI_Scatterv`, MPI-4.0 §6.6; SPEC §3.3): rank r's `recv` must be `counts[r]` long.
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
        check_element::<T>()?;
        check_root(self, root)?;
        let send = match (self.rank() == root, send) {
            (true, Some(send)) => {
                check_partition(
                    &send.counts,
                    &send.displacements,
                    send.buffer.len(),
                    self.size(),
                )?;
                Some(send)
            }
            (true, None) => return Err(missing_buffer("scatter_varcount")),
            (false, _) => None,
        };
        self.scatter_from(send, recv, root)
    }

    fn scatter_from<T: Pod>(
        &self,
        send: Option<Partition<'_, T>>,
        recv: &mut [T],
        root: Rank,
    ) -> Result<()> {
        self.process
            .enter_collective(Collective::Scatter, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = root_index(&call, root).and_then(|root_at| {
            let ranks = VirtualRanks::new(&call, root_at);
            let all = send.map(|send| {
                blocks::encode((0..ranks.n).map(|v| {
                    let rank = ranks.rank(v) as usize;
                    let at = send.displacements[rank];
                    bytemuck::cast_slice(&send.buffer[at..at + send.counts[rank]])
                }))
            });
            let mine = binomial_scatter(&call, &ranks, all)?;
            copy_into(&mine, recv)
        });
        call.finish(outcome)
    }
}

fn missing_buffer(operation: &str) -> Error {
    Error::Argument {
        reason: format!("the root of a {operation} needs a send buffer"),
    }
}

/// The binomial scatter; `all` (at the root) holds every block in virtual-rank order. Returns
/// this rank's block.
fn binomial_scatter(
    call: &CollectiveCall<'_>,
    ranks: &VirtualRanks<'_>,
    all: Option<Vec<u8>>,
) -> Result<Vec<u8>> {
    let (parent, width) = ranks.binomial();
    let message = match parent {
        Some(parent) => call.recv(ranks.rank(parent))?.into_vec(),
        None => all.ok_or_else(|| Error::Internal {
            reason: "the scatter root has no blocks".into(),
        })?,
    };
    let me = ranks.me;
    let subtree = blocks::decode(&message, (me + width).min(ranks.n) - me)?;
    for (child, end) in ranks.children() {
        let part = blocks::encode(subtree[child - me..end - me].iter().copied());
        call.send(ranks.rank(child), &part)?;
    }
    Ok(subtree[0].to_vec())
}

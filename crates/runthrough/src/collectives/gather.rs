// SPDX-License-Identifier: MIT OR Apache-2.0
//! Gather, gatherv and all-gather (`MPI_Gather`, `MPI_Gatherv`, `MPI_Allgather`, MPI-4.0 §6.5,
//! §6.7).
//!
//! Algorithms, over the participants (the OK ranks of G):
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
use runthrough_core::fault::Collective;
use runthrough_core::{Rank, Result};

use super::virtual_ranks::VirtualRanks;
use super::Deferred;
use super::{blocks, check_element, check_len, check_root, copy_into, count_error, root_index};
use crate::collectives::call::CollectiveCall;
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
    /// `recv[r·count ..]` with `count = send.len()` (`MPI_Gather`, MPI-4.0 §6.5; SPEC §3.3).
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
        check_element::<T>()?;
        check_root(self, root)?;
        let recv = match (self.rank() == root, recv) {
            (true, Some(recv)) => {
                check_len(
                    "the gather receive buffer",
                    recv.len(),
                    (self.size() as usize).saturating_mul(send.len()),
                )?;
                Some(PartitionMut::contiguous(
                    recv,
                    &vec![send.len(); self.size() as usize],
                ))
            }
            (true, None) => return Err(missing_buffer("gather")),
            (false, _) => None,
        };
        self.gather_into(send, recv, root)
    }

    /// Collects every participant's `send`, of any length, into the blocks of `recv` at `root`
    /// (`MPI_Gatherv`, MPI-4.0 §6.5; SPEC §3.3): rank r's `send` must have `counts[r]` elements.
    /// `recv` is required at the root and ignored elsewhere; the blocks of ranks recognized as
    /// failed (NULL in G) are left untouched. Binomial tree.
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
        check_element::<T>()?;
        check_root(self, root)?;
        let recv = match (self.rank() == root, recv) {
            (true, Some(recv)) => {
                check_partition(
                    &recv.counts,
                    &recv.displacements,
                    recv.buffer.len(),
                    self.size(),
                )?;
                Some(recv)
            }
            (true, None) => return Err(missing_buffer("gather_varcount")),
            (false, _) => None,
        };
        self.gather_into(send, recv, root)
    }

    /// Collects every participant's `send` into every participant's `recv`, rank r's block at
    /// `recv[r·count ..]` with `count = send.len()` (`MPI_Allgather`, MPI-4.0 §6.7; SPEC §3.3).
    /// The slots of ranks recognized as failed (NULL in G) are left untouched. Bruck's
    /// algorithm, ⌈log₂ n⌉ rounds.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Count` when `recv` is not `size()·send.len()` long, or a rank sent a block of
    ///   another length.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn all_gather<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        check_element::<T>()?;
        let count = send.len();
        check_len(
            "the all_gather receive buffer",
            recv.len(),
            (self.size() as usize).saturating_mul(count),
        )?;
        self.process
            .enter_collective(Collective::AllGather, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = bruck_all_gather(&call, bytemuck::cast_slice(send)).and_then(|held| {
            let n = call.participants.len();
            let mut deferred = Deferred::default();
            for (j, block) in held.iter().enumerate() {
                let rank = call.participants[(call.index + j) % n] as usize;
                deferred.note(copy_into(
                    block,
                    &mut recv[rank * count..(rank + 1) * count],
                ));
            }
            deferred.into_result()
        });
        call.finish(outcome)
    }

    fn gather_into<T: Pod>(
        &self,
        send: &[T],
        recv: Option<PartitionMut<'_, T>>,
        root: Rank,
    ) -> Result<()> {
        self.process
            .enter_collective(Collective::Gather, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = root_index(&call, root).and_then(|root_at| {
            let collected = binomial_gather(&call, bytemuck::cast_slice(send), root_at)?;
            let (Some(collected), Some(recv)) = (collected, recv) else {
                return Ok(());
            };
            let ranks = VirtualRanks::new(&call, root_at);
            let mut deferred = Deferred::default();
            for (v, block) in blocks::decode(&collected, ranks.n)?.into_iter().enumerate() {
                let rank = ranks.rank(v) as usize;
                let at = recv.displacements[rank];
                let target = &mut recv.buffer[at..at + recv.counts[rank]];
                deferred.note(copy_into(block, target));
            }
            deferred.into_result()
        });
        call.finish(outcome)
    }
}

fn missing_buffer(operation: &str) -> runthrough_core::Error {
    runthrough_core::Error::Argument {
        reason: format!("the root of a {operation} needs a receive buffer"),
    }
}

/// The binomial gather of one block per participant: at the root, every block as
/// length-prefixed blocks in virtual-rank order.
fn binomial_gather(
    call: &CollectiveCall<'_>,
    mine: &[u8],
    root_at: usize,
) -> Result<Option<Vec<u8>>> {
    let ranks = VirtualRanks::new(call, root_at);
    let mut collected = Vec::new();
    blocks::push(&mut collected, mine);
    for (child, _) in ranks.children().into_iter().rev() {
        collected.extend_from_slice(&call.recv(ranks.rank(child))?);
    }
    match ranks.binomial().0 {
        Some(parent) => {
            call.send(ranks.rank(parent), &collected)?;
            Ok(None)
        }
        None => Ok(Some(collected)),
    }
}

/// Bruck's all-gather: block j of the result comes from participant index + j (modulo n).
pub(crate) fn bruck_all_gather(call: &CollectiveCall<'_>, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    let n = call.participants.len();
    let me = call.index;
    let mut held = vec![mine.to_vec()];
    let mut distance = 1;
    while distance < n {
        let share = distance.min(n - distance);
        let message = blocks::encode(held[..share].iter().map(Vec::as_slice));
        call.send(call.participants[(me + n - distance) % n], &message)?;
        let incoming = call.recv(call.participants[(me + distance) % n])?;
        held.extend(
            blocks::decode(&incoming, share)?
                .into_iter()
                .map(<[u8]>::to_vec),
        );
        distance *= 2;
    }
    Ok(held)
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! All-to-all (`MPI_Alltoall`, MPI-4.0 §6.8).
//!
//! Algorithms, over the participants (the OK ranks of G), chosen by block size:
//! - **small blocks** (at most [`BRUCK_MAX_BLOCK_BYTES`]): Bruck's algorithm, ⌈log₂ n⌉ rounds.
//!   Rank i first orders its blocks so that block j is for participant i + j; in the round of
//!   distance d it sends every block whose index has bit d set to i + d and receives the same
//!   indexes from i − d. Each block travels along the bits of its index, so afterwards block j
//!   is the one from participant i − j. Few messages, each of about n/2 blocks.
//! - **large blocks**: pairwise exchange, n − 1 steps; in step s rank i sends its block for
//!   i + s straight to it and receives the one of i − s. Every byte moves once.
//!
//! Blocks for and from ranks recognized as failed (NULL in G) are neither sent nor written.

use bytemuck::Pod;
use runthrough_core::fault::Collective;
use runthrough_core::Result;

use super::{blocks, check_element, check_len, copy_into, count_error, Deferred};
use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

/// Up to this many bytes per block, all-to-all uses Bruck's algorithm.
pub(crate) const BRUCK_MAX_BLOCK_BYTES: usize = 1024;

impl Comm {
    /// Sends block r of `send` (`send[r·count ..]`, `count = send.len() / size()`) to each
    /// participant r and writes the block that rank r sent here at `recv[r·count ..]`
    /// (`MPI_Alltoall`, MPI-4.0 §6.8; SPEC §3.3). The blocks of ranks recognized as failed (NULL
    /// in G) are neither sent nor written: those slots of `recv` are left untouched.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Count` when `send` and `recv` differ in length or are not a multiple of
    ///   `size()` long, or a rank sent a block of another length.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn all_to_all<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        check_element::<T>()?;
        check_len("the all_to_all receive buffer", recv.len(), send.len())?;
        let size = self.size() as usize;
        let leftover = send.len() % size;
        if leftover != 0 {
            return Err(count_error(format!(
                "an all_to_all buffer of {} elements is not {size} equal blocks",
                send.len()
            )));
        }
        let count = send.len() / size;
        self.process
            .enter_collective(Collective::AllToAll, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = if std::mem::size_of_val(&send[..count]) <= BRUCK_MAX_BLOCK_BYTES {
            bruck(&call, send, recv, count)
        } else {
            pairwise(&call, send, recv, count)
        };
        call.finish(outcome)
    }
}

fn block<T>(buffer: &[T], rank: u32, count: usize) -> &[T] {
    let at = rank as usize * count;
    &buffer[at..at + count]
}

fn block_mut<T>(buffer: &mut [T], rank: u32, count: usize) -> &mut [T] {
    let at = rank as usize * count;
    &mut buffer[at..at + count]
}

fn bruck<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    recv: &mut [T],
    count: usize,
) -> Result<()> {
    let n = call.participants.len();
    let me = call.index;
    let rank = |i: usize| call.participants[i % n];
    let mut held: Vec<Vec<u8>> = (0..n)
        .map(|j| bytemuck::cast_slice(block(send, rank(me + j), count)).to_vec())
        .collect();
    let mut distance = 1;
    while distance < n {
        let moving: Vec<usize> = (0..n).filter(|j| j & distance != 0).collect();
        let message = blocks::encode(moving.iter().map(|&j| held[j].as_slice()));
        call.send(rank(me + distance), &message)?;
        let incoming = call.recv(rank(me + n - distance))?;
        for (&j, bytes) in moving.iter().zip(blocks::decode(&incoming, moving.len())?) {
            held[j] = bytes.to_vec();
        }
        distance *= 2;
    }
    let mut deferred = Deferred::default();
    for (j, bytes) in held.iter().enumerate() {
        let from = rank(me + n - j);
        deferred.note(copy_into(bytes, block_mut(recv, from, count)));
    }
    deferred.into_result()
}

fn pairwise<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    recv: &mut [T],
    count: usize,
) -> Result<()> {
    let n = call.participants.len();
    let me = call.index;
    let rank = |i: usize| call.participants[i % n];
    let mine = rank(me);
    block_mut(recv, mine, count).copy_from_slice(block(send, mine, count));
    for step in 1..n {
        let to = rank(me + step);
        call.send(to, bytemuck::cast_slice(block(send, to, count)))?;
    }
    let mut deferred = Deferred::default();
    for step in 1..n {
        let from = rank(me + n - step);
        let bytes = call.recv(from)?;
        deferred.note(copy_into(&bytes, block_mut(recv, from, count)));
    }
    deferred.into_result()
}

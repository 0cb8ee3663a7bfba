// SPDX-License-Identifier: MIT OR Apache-2.0
//! All-to-all (`MPI_Alltoall`, MPI-4.0 §6.8).
//!
//! The blocking call and [`Comm::ialltoall`] run one implementation, the engine's schedule
//! (`runthrough_core::engine::Schedule::all_to_all`); its algorithms, over the participants
//! (the OK ranks of G), chosen by block size:
//! - **small blocks** (at most `runthrough_core::engine::BRUCK_MAX_BLOCK_BYTES`): Bruck's algorithm, ⌈log₂ n⌉ rounds.
//!   Rank i first orders its blocks so that block j is for participant i + j; in the round of
//!   distance d it sends every block whose index has bit d set to i + d and receives the same
//!   indexes from i − d. Each block travels along the bits of its index, so afterwards block j
//!   is the one from participant i − j. Few messages, each of about n/2 blocks.
//! - **large blocks**: pairwise exchange, n − 1 steps; in step s rank i sends its block for
//!   i + s straight to it and receives the one of i − s. Every byte moves once.
//!
//! Blocks for and from ranks recognized as failed (NULL in G) are neither sent nor written.

use bytemuck::Pod;
use runthrough_core::Result;

use crate::comm::Comm;

impl Comm {
    /// Sends block r of `send` (`send[r·count ..]`, `count = send.len() / size()`) to each
    /// participant r and writes the block that rank r sent here at `recv[r·count ..]`
    /// (`MPI_Alltoall`, MPI-4.0 §6.8; semantics §3.3). The blocks of ranks recognized as failed
    /// (NULL in G) are neither sent nor written: those slots of `recv` are left untouched.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Count` when `send` and `recv` differ in length or are not a multiple of
    ///   `size()` long, or a rank sent a block of another length.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn all_to_all<T: Pod>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.alltoall_call(send, recv, true)?.finish()
    }
}

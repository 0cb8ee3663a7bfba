// SPDX-License-Identifier: MIT OR Apache-2.0
//! Broadcast (`MPI_Bcast`, MPI-4.0 §6.4): a binomial tree rooted at the root.
//!
//! Every non-root participant receives the message from its parent and forwards it unchanged to
//! its children, largest subtree first: ⌈log₂ n⌉ levels. Forwarding the bytes as received means a
//! rank whose buffer has the wrong length still feeds its subtree.
//!
//! The blocking broadcast and [`Comm::ibroadcast`] are one implementation: the engine's
//! broadcast schedule (`runthrough_core::engine::Schedule::broadcast`), which the blocking
//! call's thread advances as it waits.

use bytemuck::Pod;
use runthrough_core::{Rank, Result};

use crate::comm::Comm;

impl Comm {
    /// Sends `buf` from `root` to every participant, into their `buf` (`MPI_Bcast`, MPI-4.0
    /// §6.4; semantics §3.3). Binomial tree over the participants (the OK ranks of G).
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::RootFailed` when G recognizes `root` as failed; `Error::Root` when it is out of
    ///   range.
    /// - `Error::Count` when this rank's `buf` is not as long as the root's.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn broadcast<T: Pod>(&self, buf: &mut [T], root: Rank) -> Result<()> {
        self.broadcast_call(buf, root, true)?.finish()
    }
}

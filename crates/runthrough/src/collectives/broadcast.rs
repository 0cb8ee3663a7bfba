// SPDX-License-Identifier: MIT OR Apache-2.0
//! Broadcast (`MPI_Bcast`, MPI-4.0 §6.4): a binomial tree rooted at the root.
//!
//! Every non-root participant receives the message from its parent and forwards it unchanged to
//! its children, largest subtree first: ⌈log₂ n⌉ levels. Forwarding the bytes as received means a
//! rank whose buffer has the wrong length still feeds its subtree.

use bytemuck::Pod;
use runthrough_core::fault::Collective;
use runthrough_core::{Rank, Result};

use super::virtual_ranks::VirtualRanks;
use super::{check_element, check_root, copy_into, root_index};
use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

impl Comm {
    /// Sends `buf` from `root` to every participant, into their `buf` (`MPI_Bcast`, MPI-4.0
    /// §6.4; SPEC §3.3). Binomial tree over the participants (the OK ranks of G).
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::RootFailed` when G recognizes `root` as failed; `Error::Root` when it is out of
    ///   range.
    /// - `Error::Count` when this rank's `buf` is not as long as the root's.
    /// - `Error::ConcurrentCollective`, `Error::Comm`, `Error::Argument` (zero-sized `T`).
    pub fn broadcast<T: Pod>(&self, buf: &mut [T], root: Rank) -> Result<()> {
        check_element::<T>()?;
        check_root(self, root)?;
        self.process
            .enter_collective(Collective::Broadcast, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = binomial_broadcast(&call, buf, root);
        call.finish(outcome)
    }
}

fn binomial_broadcast<T: Pod>(call: &CollectiveCall<'_>, buf: &mut [T], root: Rank) -> Result<()> {
    let ranks = VirtualRanks::new(call, root_index(call, root)?);
    let (parent, _) = ranks.binomial();
    let received = match parent {
        Some(parent) => Some(call.recv(ranks.rank(parent))?),
        None => None,
    };
    let bytes: &[u8] = match &received {
        Some(payload) => payload,
        None => bytemuck::cast_slice(buf),
    };
    for (child, _) in ranks.children() {
        call.send(ranks.rank(child), bytes)?;
    }
    match received {
        Some(payload) => copy_into(&payload, buf),
        None => Ok(()),
    }
}

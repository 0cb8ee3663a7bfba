// SPDX-License-Identifier: MIT OR Apache-2.0
//! Barrier (`MPI_Barrier`, MPI-4.0 §6.3), ⌈log₂ n⌉ rounds.
//!
//! In round k (distance d = 2ᵏ < n) participant i sends an empty message to one participant
//! and waits for one from another ([`barrier_round`](runthrough_core::engine::barrier_round)):
//! with n a power of two, a pairwise exchange with i XOR d (the first rounds stay among
//! neighbours, and so on one host when ranks are placed on hosts in blocks); otherwise
//! dissemination, to i + d and from i − d (modulo n). After the last round every participant
//! has heard, transitively, from every other one.
//!
//! Where the job knows which host each participant runs on (processes started by a launcher,
//! with several hosts and several participants on some), each host's participants report to
//! their leader (its first participant) up a tree of radix 4
//! ([`HOST_TREE_RADIX`](runthrough_core::engine::HOST_TREE_RADIX)), the leaders run those
//! rounds among themselves, and each releases its host's participants down the tree: one message per
//! leader per round crosses between hosts
//! ([`barrier_steps`](runthrough_core::engine::barrier_steps); the non-blocking barrier runs
//! the same steps).
//!
//! The blocking barrier and the non-blocking one ([`Comm::ibarrier`]) are one implementation:
//! the engine's barrier schedule, which the blocking call's thread advances as it waits.

use runthrough_core::Result;

use crate::comm::Comm;

impl Comm {
    /// Blocks until every participant (OK rank of G) has entered the barrier (`MPI_Barrier`,
    /// MPI-4.0 §6.3; semantics §3.3). ⌈log₂ n⌉ rounds (pairwise exchange when the
    /// participants are a power of two, dissemination otherwise), among the hosts' leaders
    /// only when the participants run on several hosts (see the module docs).
    ///
    /// # Errors
    /// `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    /// rank's detector at the call or while it waits: none stays blocked);
    /// `Error::ConcurrentCollective` when another collective runs on this communicator;
    /// `Error::Comm` on a freed communicator.
    pub fn barrier(&self) -> Result<()> {
        self.barrier_call(true)?.finish()
    }

    /// How many hosts the barrier groups its participants into (their leaders exchange, the
    /// others stay within their host), or `None` when it runs flat: hosts not known alike
    /// everywhere (in-process jobs, ranks that joined later), all
    /// participants on one host, or each on its own. For tests and diagnostics.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    #[doc(hidden)]
    pub fn barrier_hosts(&self) -> Result<Option<usize>> {
        let hosts = self.process.endpoint.lock().host_groups(self.context)?;
        Ok(hosts.map(|hosts| hosts.hosts()))
    }
}

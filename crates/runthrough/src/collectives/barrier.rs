// SPDX-License-Identifier: MIT OR Apache-2.0
//! Barrier (`MPI_Barrier`, MPI-4.0 §6.3), ⌈log₂ n⌉ rounds.
//!
//! In round k (distance d = 2ᵏ < n) participant i sends an empty message to one participant
//! and waits for one from another ([`barrier_round`]): with n a power of two, a pairwise
//! exchange with i XOR d (the first rounds stay among neighbours, and so on one host when
//! ranks are placed on hosts in blocks); otherwise dissemination, to i + d and from i − d
//! (modulo n). After the last round every participant has heard, transitively, from every
//! other one.

use runthrough_core::engine::barrier_round;
use runthrough_core::fault::Collective;
use runthrough_core::Result;

use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

impl Comm {
    /// Blocks until every participant (OK rank of G) has entered the barrier (`MPI_Barrier`,
    /// MPI-4.0 §6.3; SPEC §3.3). ⌈log₂ n⌉ rounds (pairwise exchange when the
    /// participants are a power of two, dissemination otherwise).
    ///
    /// # Errors
    /// `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    /// rank's detector at the call or while it waits: none stays blocked);
    /// `Error::ConcurrentCollective` when another collective runs on this communicator;
    /// `Error::Comm` on a freed communicator.
    pub fn barrier(&self) -> Result<()> {
        self.process
            .enter_collective(Collective::Barrier, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = rounds(&call);
        call.finish(outcome)
    }
}

fn rounds(call: &CollectiveCall<'_>) -> Result<()> {
    let n = call.participants.len();
    let mut distance = 1;
    while distance < n {
        let (to, from) = barrier_round(n, call.index, distance);
        call.send(call.participants[to], &[])?;
        call.recv(call.participants[from])?;
        distance *= 2;
    }
    Ok(())
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Barrier (`MPI_Barrier`, MPI-4.0 §6.3): the dissemination algorithm.
//!
//! In round k (distance d = 2ᵏ < n) participant i sends an empty message to i + d and waits for
//! one from i − d (indexes modulo n): after ⌈log₂ n⌉ rounds every participant has heard,
//! transitively, from every other one.

use runthrough_core::fault::Collective;
use runthrough_core::Result;

use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

impl Comm {
    /// Blocks until every participant (OK rank of G) has entered the barrier (`MPI_Barrier`,
    /// MPI-4.0 §6.3; SPEC §3.3). Dissemination algorithm, ⌈log₂ n⌉ rounds.
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
        let outcome = dissemination(&call);
        call.finish(outcome)
    }
}

fn dissemination(call: &CollectiveCall<'_>) -> Result<()> {
    let n = call.participants.len();
    let me = call.index;
    let mut distance = 1;
    while distance < n {
        call.send(call.participants[(me + distance) % n], &[])?;
        call.recv(call.participants[(me + n - distance) % n])?;
        distance *= 2;
    }
    Ok(())
}

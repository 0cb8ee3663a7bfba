// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank as its own threads see it: its endpoint, its transport, its fault plan.

use std::sync::Arc;

use runthrough_core::Result;

use crate::engine::{Endpoint, Engine};
use crate::packet::{ContextId, Outgoing};
use crate::transport::Transport;

/// The payload a killed rank's thread unwinds with (never seen by the application: the universe
/// catches it and reports the rank as killed).
#[derive(Debug)]
pub(crate) struct Killed;

/// Faults planned for one rank.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankFaults {
    /// Die when starting this communication call (1 = the first).
    pub(crate) kill_at_operation: Option<u64>,
}

/// One rank of a job, shared by every communicator handle of that rank.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) endpoint: Arc<Endpoint>,
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) faults: RankFaults,
}

impl Process {
    pub(crate) fn world_rank(&self) -> u32 {
        self.endpoint.world_rank
    }

    /// Starts a communication call: unwinds if this rank was killed or is planned to die here.
    pub(crate) fn enter(&self) -> Result<()> {
        self.check_alive();
        let number = self.endpoint.count_operation();
        if self.faults.kill_at_operation == Some(number) {
            self.die();
        }
        Ok(())
    }

    /// Starts a call of the collective `operation` on communicator `context`: dies here when a
    /// planned fault says so (`Endpoint::collective_started`).
    pub(crate) fn enter_collective(&self, operation: &'static str, context: ContextId) {
        if self.endpoint.collective_started(operation, context) {
            self.die();
        }
    }

    /// Unwinds the calling thread if this rank was killed.
    pub(crate) fn check_alive(&self) {
        if self.endpoint.is_killed() {
            std::panic::resume_unwind(Box::new(Killed));
        }
    }

    /// This rank dies now: it stops sending, its peers learn of it, and the calling thread unwinds.
    pub(crate) fn die(&self) -> ! {
        self.transport.kill(self.world_rank());
        std::panic::resume_unwind(Box::new(Killed));
    }

    /// Sends what the engine produced.
    pub(crate) fn send_all(&self, out: Outgoing) {
        if !out.is_empty() {
            self.transport.send_all(self.world_rank(), out);
        }
    }

    /// Waits until `check` returns `Some`, re-checking after every event at this rank. Spins
    /// briefly, then blocks (see [`crate::signal::Signal`]). Unwinds if the rank is killed.
    pub(crate) fn wait_for<R>(&self, mut check: impl FnMut(&mut Engine) -> Option<R>) -> R {
        loop {
            let seen = self.endpoint.signal.current();
            self.check_alive();
            if let Some(result) = check(&mut self.endpoint.lock()) {
                return result;
            }
            self.endpoint.signal.wait_past(seen);
        }
    }
}

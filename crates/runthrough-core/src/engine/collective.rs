// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's commands for one collective call at one rank (semantics §3.3): starting it (the
//! checks that collectives are enabled, and its number within the communicator's epoch) and
//! ending it. Its messages are its schedule's (`super::schedule`).
//!
//! Collective traffic travels on its own lane and is matched by (epoch, call number), so it
//! never mixes with the application's messages. While this rank's detector knows of a failed
//! participant that G does not recognize, every step of a collective fails with `ProcFailed`,
//! so no collective stays blocked on a dead rank, directly or through the algorithm's tree.

use std::sync::Arc;

use super::Engine;
use crate::packet::ContextId;
use crate::{Error, Rank, Result};

/// A collective call started at this rank: what a schedule's builder sees
/// ([`Engine::start_schedule_as`]).
#[derive(Debug, Clone)]
pub struct CollectiveCall {
    /// The communicator's collective epoch (one more after each `validate_global`).
    pub epoch: u32,
    /// The call's number within the epoch (the tag of its messages).
    pub sequence: u32,
    /// The participants: the OK ranks of G, in rank order.
    pub participants: Arc<[Rank]>,
    /// This rank's position among the participants.
    pub index: usize,
    /// How the participants sit on hosts, where the barrier keeps its traffic within them
    /// ([`Engine::set_hosts`](super::Engine::set_hosts)).
    pub hosts: Option<Arc<super::HostGroups>>,
}

impl Engine {
    /// Starts a collective call on `context`, this rank being comm rank `me`. With `exclusive`,
    /// the call holds the communicator's collective slot until [`Engine::end_collective`];
    /// without, it runs inside a call that holds it (a creation's exchange).
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` if another collective holds the slot; `Error::Revoked` on a
    /// revoked communicator; `Error::ProcFailed` while a failed participant is not recognized in
    /// G; `Error::Comm` on a freed communicator.
    #[inline]
    pub(crate) fn begin_collective(
        &mut self,
        context: ContextId,
        me: Rank,
        exclusive: bool,
    ) -> Result<CollectiveCall> {
        let state = self.comm(context)?;
        if exclusive && state.collective_active {
            return Err(Error::ConcurrentCollective);
        }
        state.check_not_revoked()?;
        let sequence = state.collective_sequence;
        // Schedules are kept in call order: only when the oldest one running is 2^20 calls
        // old may a number be taken twice (one comparison per call, not one per schedule).
        let wrapped = state.schedules.front().is_some_and(|oldest| {
            state.collective_calls - oldest.call() >= 1 << super::schedule::SEQUENCE_BITS
        });
        if wrapped
            && state
                .schedules
                .iter()
                .any(|running| running.sequence() == sequence)
        {
            // The numbers wrapped around a call still running (a tag holds the call's number
            // in its low bits: `schedule::SEQUENCE_BITS`).
            return Err(Error::Argument {
                reason: format!(
                    "over {} collective calls outstanding on one communicator",
                    (1u32 << super::schedule::SEQUENCE_BITS) - 1
                ),
            });
        }
        state.collective_sequence =
            state.collective_sequence.wrapping_add(1) & ((1 << super::schedule::SEQUENCE_BITS) - 1);
        state.collective_calls += 1;
        if let Some(rank) = state.unrecognized_failure() {
            return Err(Error::ProcFailed { rank });
        }
        let participants = Arc::clone(&state.participants);
        let index = participants
            .binary_search(&me)
            .map_err(|_| Error::Internal {
                reason: "a rank recognized as failed is running".into(),
            })?;
        if exclusive {
            state.collective_active = true;
        }
        Ok(CollectiveCall {
            epoch: state.epoch,
            sequence,
            participants,
            index,
            hosts: state.host_groups.clone(),
        })
    }

    /// How the participants of collectives on `context` sit on hosts ([`Engine::set_hosts`];
    /// `None` where the barrier runs flat).
    ///
    /// # Errors
    /// `Error::Comm` for a communicator this rank does not hold.
    pub fn host_groups(&mut self, context: ContextId) -> Result<Option<Arc<super::HostGroups>>> {
        Ok(self.comm(context)?.host_groups.clone())
    }

    /// The number (collective epoch, call number within it) that the next collective call
    /// on `context` will take ([`Engine::start_schedule`]);
    /// `None` for a communicator this rank does not hold.
    pub fn next_collective_number(&mut self, context: ContextId) -> Option<(u32, u32)> {
        let state = self.comm(context).ok()?;
        Some((state.epoch, state.collective_sequence))
    }

    /// An exclusive collective call on `context` ended: the slot is free again.
    #[inline]
    pub fn end_collective(&mut self, context: ContextId) {
        if let Ok(state) = self.comm(context) {
            state.collective_active = false;
        }
    }
}

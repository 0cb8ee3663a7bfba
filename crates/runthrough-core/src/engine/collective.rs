// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's commands for one collective call at one rank (SPEC §3.3): starting it (the
//! checks that collectives are enabled, and its number within the communicator's epoch), where
//! its messages go, receiving its messages, and ending it.
//!
//! Collective traffic travels on its own lane and is matched by (epoch, call number), so it
//! never mixes with the application's messages. While this rank's detector knows of a failed
//! participant that G does not recognize, every step of a collective fails with `ProcFailed`,
//! so no collective stays blocked on a dead rank, directly or through the algorithm's tree.

use std::sync::Arc;

use super::{Engine, Slot};
use crate::flow;
use crate::matching::{SourceSelector, TagSelector};
use crate::packet::{ContextId, Lane, Payload};
use crate::{Error, Rank, Result, WorldRank};

/// A collective call started at this rank ([`Engine::begin_collective`]).
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

/// How a collective receive started ([`Engine::collective_receive`]).
#[derive(Debug)]
pub enum CollectivePosted {
    /// The message was buffered: here it is (its credit is due).
    Done(Payload),
    /// Posted as this receive id: poll it with [`Engine::poll_collective_receive`].
    Waiting(u64),
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
    pub fn begin_collective(
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
        if state
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
    /// on `context` will take ([`Engine::begin_collective`], [`Engine::start_schedule`]);
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

    /// Why a collective step on `context` must stop now, if it must: the communicator freed or
    /// revoked, or a failed participant not recognized in G (`ProcFailed`, SPEC §3.3).
    pub fn collective_stop(&mut self, context: ContextId) -> Option<Error> {
        let state = match self.comm(context) {
            Ok(state) => state,
            Err(error) => return Some(error),
        };
        if let Err(error) = state.check_not_revoked() {
            return Some(error);
        }
        state
            .unrecognized_failure()
            .map(|rank| Error::ProcFailed { rank })
    }

    /// The world rank of collective participant `rank` of `context`, unless the call must stop
    /// ([`Engine::collective_stop`]).
    #[inline]
    pub fn collective_target(&mut self, context: ContextId, rank: Rank) -> Result<WorldRank> {
        let state = self.comm(context)?;
        state.check_not_revoked()?;
        if let Some(failed) = state.unrecognized_failure() {
            return Err(Error::ProcFailed { rank: failed });
        }
        Ok(state.members.world_of(rank))
    }

    /// Receives collective call `sequence`'s message from participant `rank` of `context`: the
    /// buffered one, or a posted receive.
    ///
    /// # Errors
    /// Those of [`Engine::collective_stop`] when nothing is buffered (a buffered message is
    /// taken even if a participant failed meanwhile: the call's end checks again).
    #[inline]
    pub fn collective_receive(
        &mut self,
        context: ContextId,
        rank: Rank,
        sequence: u32,
    ) -> Result<CollectivePosted> {
        let source = SourceSelector::Rank(rank);
        let tag = TagSelector::Value(sequence as i32);
        let state = self.comm(context)?;
        state.check_not_revoked()?;
        if let Some((_, payload)) = state.collective_matcher.take(source, tag) {
            let world = state.members.world_of(rank);
            self.flow
                .release_held(world, Lane::Collective, flow::charge(payload.len()));
            return Ok(CollectivePosted::Done(payload));
        }
        if let Some(failed) = state.unrecognized_failure() {
            return Err(Error::ProcFailed { rank: failed });
        }
        let id = self.slots.insert(Slot::Pending) as u64;
        let state = self.comm(context)?;
        let matched = state.collective_matcher.post(id, source, tag);
        debug_assert!(matched.is_none());
        // A sender that waits for collective credit held back by its messages for later calls
        // (non-blocking ones let it run ahead) gets a loan ("Collective traffic" in
        // `crate::flow`).
        let world = state.members.world_of(rank);
        self.flow.lend_collective(world);
        Ok(CollectivePosted::Waiting(id))
    }

    /// Looks at collective receive `id` on `context`: its message or error once complete (the
    /// id is freed then); `ProcFailed` (the receive withdrawn) once a failed participant is not
    /// recognized in G; `None` while it waits.
    #[inline]
    pub fn poll_collective_receive(
        &mut self,
        context: ContextId,
        id: u64,
    ) -> Option<Result<Payload>> {
        if let Some(Slot::Complete(_)) = self.slots.get(id as usize) {
            let Slot::Complete(received) = self.slots.remove(id as usize) else {
                unreachable!("the slot is complete");
            };
            return Some(received.map(|r| r.payload));
        }
        let failed = self.comm(context).ok()?.unrecognized_failure()?;
        if let Some(state) = self.comms.get_mut(&context) {
            state.collective_matcher.cancel(id);
        }
        self.slots.remove(id as usize);
        Some(Err(Error::ProcFailed { rank: failed }))
    }
}

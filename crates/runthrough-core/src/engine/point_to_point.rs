// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's point-to-point commands: where a send goes, matching or posting a receive,
//! looking at a posted receive, probing, and the local view updates (semantics §2.1, §3.1–3.2).
//!
//! Each command is called by a driver on behalf of one of the rank's threads, with the
//! engine's lock held; none waits. A waiting thread calls the `poll_*` commands again whenever
//! the engine changed (the driver's wake-up), until they report an outcome.

use super::{matched, probed, Engine, Received, Slot};
use crate::flow;
use crate::matching::{unmatched_outcome, Envelope, PeerOutcome, SourceSelector, TagSelector};
use crate::packet::{ContextId, Lane, Payload};
use crate::{Error, FailureView, Rank, Result, WorldRank};

/// The outcome of matching or posting a receive ([`Engine::match_or_post`]).
#[derive(Debug)]
pub enum Posted {
    /// Finished at once: a buffered message, `MPI_PROC_NULL`, or an error.
    Done(Result<Received>),
    /// Posted as this receive id; poll it with [`Engine::poll_receive`].
    Waiting(u64),
}

/// What a look at a posted receive found ([`Engine::poll_receive`]).
#[derive(Debug)]
pub enum ReceivePoll {
    /// Still waiting.
    Pending,
    /// Finished (the id is free again).
    Complete(Result<Received>),
    /// A wildcard receive that must report `ProcFailedPending` now (semantics §3.2); it stays
    /// posted until the caller cancels it or the failure is acknowledged.
    FailurePending,
}

/// What a probe found ([`Engine::probe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probed {
    /// A buffered message: its envelope as the sender gave it and its data's length in bytes.
    Message(Envelope, usize),
    /// The source is recognized as failed in G: the probe completes as for `MPI_PROC_NULL`.
    ProcNull,
}

impl Engine {
    /// Where a send to comm rank `dest` of `context` goes: its world rank, `None` for the
    /// `MPI_PROC_NULL` outcome (a destination recognized as failed in G), or the send's error
    /// (freed or revoked communicator, a failed destination not recognized: semantics §3.1).
    #[inline]
    pub fn send_target(&mut self, context: ContextId, dest: Rank) -> Result<Option<WorldRank>> {
        let comm = self.comm(context)?;
        comm.check_not_revoked()?;
        match unmatched_outcome(
            comm.global.is_failed(dest),
            comm.known_failed.contains(dest),
        ) {
            PeerOutcome::ProcNull => Ok(None),
            PeerOutcome::Failed => Err(Error::ProcFailed { rank: dest }),
            PeerOutcome::Proceed => Ok(Some(comm.members.world_of(dest))),
        }
    }

    /// The id of this rank's next synchronous send.
    #[inline]
    pub fn next_synchronous_id(&mut self) -> u64 {
        self.next_sync += 1;
        self.next_sync
    }

    /// Whether synchronous send `id` to comm rank `dest` (world rank `world`) of `context` is
    /// done: `Some(Ok)` once the receiver acknowledged it (or `dest` was recognized in G),
    /// `Some(Err)` when `dest` failed first or the communicator was revoked or freed, `None`
    /// while it waits.
    #[inline]
    pub fn poll_synchronous(
        &mut self,
        context: ContextId,
        world: WorldRank,
        dest: Rank,
        id: u64,
    ) -> Option<Result<()>> {
        if self.sync_acks.remove(&(world, id)) {
            return Some(Ok(()));
        }
        match self.send_target(context, dest) {
            Ok(None) => Some(Ok(())),
            Err(error) => Some(Err(error)),
            Ok(Some(_)) => None,
        }
    }

    /// Forgets synchronous send `id` to world rank `world`, whose request was dropped: its
    /// acknowledgement, if it came, is dropped, and dropped when it comes otherwise.
    pub fn abandon_synchronous(&mut self, world: WorldRank, id: u64) {
        if !self.sync_acks.remove(&(world, id)) {
            self.sync_abandoned.insert((world, id));
        }
    }

    /// A receive on `context`: what [`Engine::take_matched`] finds, or else the receive is
    /// posted.
    ///
    /// # Errors
    /// `Error::Comm` for a freed communicator, `Error::Revoked` for a revoked one.
    #[inline]
    pub fn match_or_post(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Posted> {
        match self.take_matched(context, source, tag) {
            Ok(None) => self.post_receive(context, source, tag).map(Posted::Waiting),
            Ok(Some(received)) => Ok(Posted::Done(Ok(received))),
            Err(error @ (Error::Comm | Error::Revoked)) => Err(error),
            Err(error) => Ok(Posted::Done(Err(error))),
        }
    }

    /// What a receive on `context` finds without waiting: the first buffered message that
    /// matches (taken), or the outcome the source's state decides (`MPI_PROC_NULL`, a
    /// [`Received`] without envelope, for one recognized in G; `ProcFailed` for one known
    /// failed; `ProcFailedPending` for a wildcard while a failure is unacknowledged,
    /// semantics §3.1-3.2), or `None`: the receive would wait.
    ///
    /// # Errors
    /// Those outcomes, and `Error::Comm` for a freed communicator, `Error::Revoked` for a
    /// revoked one.
    #[inline]
    pub fn take_matched(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Received>> {
        let taken = self.take_matched_now(context, source, tag);
        if matches!(taken, Ok(None)) {
            // A matched probe that finds nothing wants a message as a posted receive does.
            self.wants(context, source);
        }
        taken
    }

    /// [`Engine::take_matched`] without its loans.
    #[inline]
    fn take_matched_now(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Received>> {
        if let Some(received) = self.take_buffered(context, source, tag)? {
            return Ok(Some(received));
        }
        let comm = self.comm(context)?;
        match source {
            SourceSelector::Rank(r) => {
                match unmatched_outcome(comm.global.is_failed(r), comm.known_failed.contains(r)) {
                    PeerOutcome::ProcNull => Ok(Some(Received {
                        envelope: None,
                        payload: Payload::new(),
                    })),
                    PeerOutcome::Failed => Err(Error::ProcFailed { rank: r }),
                    PeerOutcome::Proceed => Ok(None),
                }
            }
            SourceSelector::Any if comm.has_unacknowledged_failure() => {
                Err(Error::ProcFailedPending)
            }
            SourceSelector::Any => Ok(None),
        }
    }

    /// Takes the first buffered message on `context` that matches, if one is there: its
    /// flow-control credit falls due and a synchronous sender's acknowledgement is queued
    /// (both go out with the engine's next flow-control packets, [`Engine::flush_flow`]).
    ///
    /// # Errors
    /// `Error::Comm` for a freed communicator, `Error::Revoked` for a revoked one.
    #[inline]
    pub fn take_buffered(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Received>> {
        let comm = self.comm(context)?;
        comm.check_not_revoked()?;
        let Some((mut envelope, mut payload)) = comm.matcher.take(source, tag) else {
            return Ok(None);
        };
        if let Some(world) = comm.members.try_world_of(envelope.source) {
            let charge = flow::charge(payload.len());
            self.flow.release_held(world, Lane::Point, charge);
            let mut ack = Vec::new();
            (envelope, payload) = matched(envelope, payload, world, &mut ack);
            for (to, packet) in ack {
                self.flow.send_later(to, packet);
            }
        }
        Ok(Some(Received {
            envelope: Some(envelope),
            payload,
        }))
    }

    /// Posts a receive on `context` that no buffered message matches (the caller just looked,
    /// under the same lock); returns its id.
    #[inline]
    pub fn post_receive(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<u64> {
        self.comm(context)?;
        let id = self.slots.insert(Slot::Pending) as u64;
        let comm = self.comm(context)?;
        let matched = comm.matcher.post(id, source, tag);
        debug_assert!(matched.is_none(), "take found nothing a moment ago");
        self.wants(context, source);
        Ok(id)
    }

    /// A receive (or probe) on `context` from `source` finds nothing and waits: any sender it
    /// could take a message from that waits for credit gets a loan. One comparison when no
    /// sender waits.
    #[inline]
    fn wants(&mut self, context: ContextId, source: SourceSelector) {
        if self.flow.has_waiting_senders() {
            self.lend_to_senders_of(context, source);
        }
    }

    /// A receive on `context` from `source` waits now: each sender it could take a message
    /// from that waits for credit gets a loan (see `flow`'s "Loans"), since the message the
    /// receive wants may be queued there behind the ones this rank holds.
    #[cold]
    fn lend_to_senders_of(&mut self, context: ContextId, source: SourceSelector) {
        let Some(comm) = self.comms.get(&context) else {
            return;
        };
        let senders: Vec<WorldRank> = match source {
            SourceSelector::Rank(r) => comm.members.try_world_of(r).into_iter().collect(),
            SourceSelector::Any => (0..comm.members.size())
                .map(|r| comm.members.world_of(r))
                .filter(|&w| self.flow.is_waiting(w))
                .collect(),
        };
        for world in senders {
            self.flow.lend(world);
        }
    }

    /// Whether a posted point-to-point receive (on an open communicator) could take a message
    /// from world rank `world`.
    pub(crate) fn a_receive_waits_for(&self, world: WorldRank) -> bool {
        self.comms.values().any(|comm| {
            comm.life.is_open()
                && comm
                    .members
                    .comm_of(world)
                    .is_some_and(|rank| comm.matcher.waits_for(rank))
        })
    }

    /// Looks at posted receive `id` on `context`: complete (the id is freed), still pending, or
    /// a `wildcard` one that must report `ProcFailedPending` now.
    #[inline]
    pub fn poll_receive(&mut self, context: ContextId, id: u64, wildcard: bool) -> ReceivePoll {
        match self.slots.get(id as usize) {
            Some(Slot::Complete(_)) => match self.slots.remove(id as usize) {
                Slot::Complete(received) => ReceivePoll::Complete(received),
                Slot::Pending => unreachable!(),
            },
            Some(Slot::Pending) => {
                if wildcard
                    && self
                        .comm(context)
                        .is_ok_and(|c| c.has_unacknowledged_failure())
                {
                    ReceivePoll::FailurePending
                } else if self.comm(context).is_err() {
                    self.slots.remove(id as usize);
                    ReceivePoll::Complete(Err(Error::Comm))
                } else {
                    ReceivePoll::Pending
                }
            }
            None => ReceivePoll::Complete(Err(Error::Request)),
        }
    }

    /// Whether receive `id` is posted and not complete.
    pub fn receive_is_pending(&self, id: u64) -> bool {
        matches!(self.slots.get(id as usize), Some(Slot::Pending))
    }

    /// Withdraws posted receive `id` on `context` and frees its id.
    pub fn cancel_receive(&mut self, context: ContextId, id: u64) {
        if let Some(comm) = self.comms.get_mut(&context) {
            comm.matcher.cancel(id);
        }
        if self.slots.contains(id as usize) {
            self.slots.remove(id as usize);
        }
    }

    /// A probe on `context`: the first buffered message that matches (left buffered), the
    /// `MPI_PROC_NULL` outcome, `None` while nothing matches, or the receive's errors
    /// (`ProcFailed`, `ProcFailedPending`, `Revoked`, `Comm`).
    pub fn probe(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Probed>> {
        let probed = self.look(context, source, tag);
        if matches!(probed, Ok(None)) {
            // A probe that finds nothing wants a message as a posted receive does.
            self.wants(context, source);
        }
        probed
    }

    /// [`Engine::probe`] without its loans.
    fn look(
        &mut self,
        context: ContextId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Option<Probed>> {
        let comm = self.comm(context)?;
        comm.check_not_revoked()?;
        if let Some((envelope, payload)) = comm.matcher.peek(source, tag) {
            let (envelope, len) = probed(envelope, payload.len());
            return Ok(Some(Probed::Message(envelope, len)));
        }
        match source {
            SourceSelector::Rank(r) => {
                match unmatched_outcome(comm.global.is_failed(r), comm.known_failed.contains(r)) {
                    PeerOutcome::ProcNull => Ok(Some(Probed::ProcNull)),
                    PeerOutcome::Failed => Err(Error::ProcFailed { rank: r }),
                    PeerOutcome::Proceed => Ok(None),
                }
            }
            SourceSelector::Any if comm.has_unacknowledged_failure() => {
                Err(Error::ProcFailedPending)
            }
            SourceSelector::Any => Ok(None),
        }
    }

    /// `validate_local` on `context` (semantics §2.1): L := G ∪ {failures known now}, ranks
    /// entering L `NEW`, the rest `OLD`; returns the new L. It acknowledges those failures for
    /// wildcard receives (semantics §3.2).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn validate_local(&mut self, context: ContextId) -> Result<FailureView> {
        let comm = self.comm(context)?;
        comm.local = comm.local.validated_local(&comm.global, &comm.known_failed);
        Ok(comm.local.clone())
    }

    /// Acknowledges the first `count` failures this rank's detector learned in `context`, in
    /// the order it learned them: L := L ∪ G ∪ those ranks (`MPIX_Comm_ack_failed`); returns
    /// the new L.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn acknowledge_failures(
        &mut self,
        context: ContextId,
        count: usize,
    ) -> Result<FailureView> {
        let comm = self.comm(context)?;
        let mut acknowledged = comm.local.failed_set();
        for &rank in comm.detected.iter().take(count) {
            acknowledged.insert(rank);
        }
        comm.local = comm.local.validated_local(&comm.global, &acknowledged);
        Ok(comm.local.clone())
    }
}

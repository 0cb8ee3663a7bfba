// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's send commands: flow-control admission of a message, queueing one that must
//! wait for credit, the outcome of a queued send, and the transmission of queued messages once
//! credit came back (the scheme is [`crate::flow`]'s).
//!
//! A driver sends a message in three steps: [`Engine::send_target`] says where it goes (or its
//! failure outcome), [`Engine::admit`] charges it if it may go now, and otherwise
//! [`Engine::queue_send`] queues it. A thread that waits in the library calls
//! [`Engine::poll_transmit`] when the flow's ready flag is up, hands the packets to the
//! transport, then calls [`Engine::end_transmit`].

use super::Engine;
use crate::flow::{FlowStats, Transmit};
use crate::packet::{ContextId, Lane, Outgoing, Packet};
use crate::{Rank, Result, WorldRank};

impl Engine {
    /// Whether a message of `charge` bytes to world rank `world` on `lane` may be transmitted
    /// now; if so it is charged.
    #[inline]
    pub fn admit(&mut self, world: WorldRank, lane: Lane, charge: u64) -> bool {
        self.flow.try_admit(world, lane, charge)
    }

    /// Queues `packet`, a message to comm rank `dest` (world rank `world`) of `context` that
    /// [`Engine::admit`] refused; returns its send slot. A request for credit, if one is needed,
    /// is among the packets due ([`Engine::take_due`]).
    #[inline]
    pub fn queue_send(
        &mut self,
        world: WorldRank,
        lane: Lane,
        context: ContextId,
        dest: Rank,
        packet: Packet,
        charge: u64,
    ) -> usize {
        self.flow
            .enqueue(world, lane, context, dest, packet, charge)
    }

    /// The outcome of queued send `slot` once it is known (transmitted, or failed); the slot is
    /// freed then.
    #[inline]
    pub fn send_outcome(&mut self, slot: usize) -> Option<Result<()>> {
        self.flow.outcome(slot)
    }

    /// Withdraws queued send `slot`: a message still queued is dropped (`None`), a finished
    /// one gives its outcome. The slot is freed either way.
    pub fn cancel_send(&mut self, slot: usize) -> Option<Result<()>> {
        self.flow.cancel(slot)
    }

    /// Takes every queued message that may go now, with the flow-control packets due.
    #[inline]
    pub fn poll_transmit(&mut self) -> Transmit {
        self.flow.poll_transmit()
    }

    /// The messages of `transmit` were handed to the transport: their queues are open again.
    #[inline]
    pub fn end_transmit(&mut self, transmit: &Transmit) {
        self.flow.end_transmit(transmit)
    }

    /// The flow-control packets (credits, requests for credit) and acknowledgements due.
    #[inline]
    pub fn take_due(&mut self) -> Outgoing {
        self.flow.take_due()
    }

    /// Whether any packet is due ([`Engine::take_due`]).
    #[inline]
    pub fn has_due(&self) -> bool {
        self.flow.has_due()
    }

    /// Sets the cap on this rank's unexpected bytes, shared out among `world_size` senders
    /// ([`crate::flow`]); before any traffic.
    pub fn set_unexpected_cap(&mut self, cap: usize, world_size: u32) {
        self.flow.set_cap(cap, world_size);
    }

    /// A handle on the flag that says a message waiting for credit may be sendable now, for
    /// waiters that look at it without the engine's lock.
    pub fn transmit_ready_flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.flow.ready_flag().shared()
    }

    /// This rank's point-to-point flow state with `peer` (diagnostics).
    #[doc(hidden)]
    pub fn describe_flow_with(&self, peer: WorldRank) -> String {
        self.flow.describe_peer(peer)
    }

    /// What flow control has seen at this rank.
    pub fn flow_stats(&self) -> FlowStats {
        self.flow.stats()
    }
}

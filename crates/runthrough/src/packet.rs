// SPDX-License-Identifier: MIT OR Apache-2.0
//! What ranks send each other, whatever the transport.

use runthrough_core::Rank;

/// Identifies a communicator in every rank that holds it; the same number everywhere.
pub(crate) type ContextId = u64;

/// The world communicator's context.
pub(crate) const WORLD_CONTEXT: ContextId = 0;

/// A message's bytes.
pub(crate) type Payload = Vec<u8>;

/// One unit of traffic between two ranks.
#[derive(Debug)]
pub(crate) enum Packet {
    /// An application (or collective) message.
    Data {
        /// The communicator.
        context: ContextId,
        /// The sender, in the communicator's numbering.
        source: Rank,
        /// The tag.
        tag: i32,
        /// The bytes.
        payload: Payload,
    },
}

/// Packets to send: (destination world rank, packet).
pub(crate) type Outgoing = Vec<(u32, Packet)>;

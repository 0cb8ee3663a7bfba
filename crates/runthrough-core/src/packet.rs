// SPDX-License-Identifier: MIT OR Apache-2.0
//! What ranks send each other, whatever the transport.

use crate::agreement::Message;
use crate::{Rank, WorldRank};

/// Identifies a communicator in every rank that holds it; the same number everywhere.
pub type ContextId = u64;

/// The world communicator's context.
pub const WORLD_CONTEXT: ContextId = 0;

/// A message's bytes.
pub type Payload = Vec<u8>;

/// One unit of traffic between two ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
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
    /// A message of a collective operation: matched apart from application traffic, by the
    /// collective's number within its epoch; a message of an older epoch is discarded (semantics
    /// §2.1).
    Collective {
        /// The communicator.
        context: ContextId,
        /// The sender, in the communicator's numbering.
        source: Rank,
        /// The collective epoch (the number of `validate_global` calls) at the sender.
        epoch: u32,
        /// The collective's number within the epoch.
        sequence: u32,
        /// The bytes.
        payload: Payload,
    },
    /// A message of the agreement protocol (validate_global, agree, shrink, creation).
    Agreement {
        /// The communicator.
        context: ContextId,
        /// The sender, in the communicator's numbering.
        source: Rank,
        /// Which agreement of the communicator: the call number in the series of
        /// `validate_global` / `agree` / `shrink`, or, with [`CREATION_SERIES`] set, in the
        /// series of communicator creations.
        seq: u64,
        /// The protocol message.
        message: Message,
    },
    /// The receiver matched the synchronous message `id` of the rank it is sent to (`MPI_Ssend`
    /// completes on it). A synchronous message is a `Data` packet whose tag is `!t` (negative)
    /// for the application's tag `t` and whose payload starts with the sender's `id` (8 bytes,
    /// little-endian); ordinary messages carry nothing more.
    SyncAck {
        /// The sender's number for the message.
        id: u64,
    },
    /// A one-sided message on the window of a communicator (`crate::engine::rma`).
    Rma {
        /// The window's communicator.
        context: ContextId,
        /// The sender, in the communicator's numbering.
        source: Rank,
        /// The message.
        message: crate::engine::rma::Message,
        /// Its data: what a put or an accumulate writes, what a reply read.
        payload: Payload,
    },
    /// The communicator has been revoked (semantics §3.5): sent by the revoking rank to every other
    /// member, and forwarded once by every member at its first receipt.
    Revoke {
        /// The communicator.
        context: ContextId,
    },
    /// Flow control, receiver to sender: `bytes` of the sender's charges on `lane` have left the
    /// receiver's buffers (see `crate::flow`).
    Credit {
        /// Which traffic the credit is for.
        lane: Lane,
        /// How many charged bytes are given back.
        bytes: u64,
    },
    /// Flow control, sender to receiver: the sender has messages on `lane` waiting for credit.
    CreditWanted {
        /// Which traffic waits.
        lane: Lane,
    },
    /// Flow control, receiver to sender: point-to-point credit lent before the charges it
    /// stands for leave the receiver's buffers (a receive there waits for a message queued at
    /// the sender; see `crate::flow`, "Loans"). The sender takes it as a [`Packet::Credit`].
    Loan {
        /// How many charged bytes are lent.
        bytes: u64,
    },
}

/// The two kinds of eager traffic that flow control keeps apart (`crate::flow`): a flood of one
/// never holds up the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Point-to-point messages ([`Packet::Data`]).
    Point = 0,
    /// Collective messages ([`Packet::Collective`]).
    Collective = 1,
}

impl Lane {
    /// Both lanes, in index order.
    pub const ALL: [Lane; 2] = [Lane::Point, Lane::Collective];

    /// The lane's index in per-lane arrays (and its wire byte).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The lane of a wire byte.
    #[inline]
    pub fn from_index(index: u8) -> Option<Lane> {
        match index {
            0 => Some(Lane::Point),
            1 => Some(Lane::Collective),
            _ => None,
        }
    }
}

/// The bit of [`Packet::Agreement`]'s `seq` that marks an agreement of the creation series
/// (`dup`, `split`, `create`) rather than of `validate_global` / `agree` / `shrink`.
pub const CREATION_SERIES: u64 = 1 << 63;

/// Packets to send: (destination world rank, packet).
pub type Outgoing = Vec<(WorldRank, Packet)>;

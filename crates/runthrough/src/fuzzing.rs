// SPDX-License-Identifier: MIT OR Apache-2.0
//! The wire decoder and encoder, opened up for the fuzz targets in `fuzz/` (cargo feature
//! `fuzzing`). Not an API: nothing outside the fuzz crate should use it.
//!
//! [`Frame`] mirrors the crate's private frame type field for field (with `PartialEq`, so the
//! targets compare frames directly); the conversions are exhaustive, so a new frame or packet
//! kind fails to build here until the mirror has it too.

use std::io::{self, Read};

use runthrough_core::agreement::Message;

use crate::packet::{Lane, Packet};
use crate::wire;

/// The largest body the transport's decoder accepts once a connection is established.
pub const DEFAULT_MAX_FRAME: usize = wire::DEFAULT_MAX_FRAME;

/// The length of a handshake nonce or MAC.
pub const TOKEN: usize = wire::TOKEN;

/// One frame (the crate's `wire::Frame`, with its `Packet` variants flattened).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Frame {
    Data {
        context: u64,
        source: u32,
        tag: i32,
        payload: Vec<u8>,
    },
    Collective {
        context: u64,
        source: u32,
        epoch: u32,
        sequence: u32,
        payload: Vec<u8>,
    },
    Agreement {
        context: u64,
        source: u32,
        seq: u64,
        message: Message,
    },
    Revoke {
        context: u64,
    },
    /// Flow-control credit; `collective` names the lane (false: point-to-point).
    Credit {
        collective: bool,
        bytes: u64,
    },
    /// A request for flow-control credit on a lane.
    CreditWanted {
        collective: bool,
    },
    Hello {
        rank: u32,
        nonce: [u8; TOKEN],
    },
    Challenge {
        rank: u32,
        nonce: [u8; TOKEN],
        mac: [u8; TOKEN],
    },
    Proof {
        mac: [u8; TOKEN],
    },
    Heartbeat,
    FailureNotice {
        rank: u32,
    },
    Suspect {
        rank: u32,
    },
}

impl From<wire::Frame> for Frame {
    fn from(frame: wire::Frame) -> Frame {
        match frame {
            wire::Frame::Packet(Packet::Data {
                context,
                source,
                tag,
                payload,
            }) => Frame::Data {
                context,
                source,
                tag,
                payload,
            },
            wire::Frame::Packet(Packet::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            }) => Frame::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            },
            wire::Frame::Packet(Packet::Agreement {
                context,
                source,
                seq,
                message,
            }) => Frame::Agreement {
                context,
                source,
                seq,
                message,
            },
            wire::Frame::Packet(Packet::Revoke { context }) => Frame::Revoke { context },
            wire::Frame::Packet(Packet::Credit { lane, bytes }) => Frame::Credit {
                collective: lane == Lane::Collective,
                bytes,
            },
            wire::Frame::Packet(Packet::CreditWanted { lane }) => Frame::CreditWanted {
                collective: lane == Lane::Collective,
            },
            wire::Frame::Hello { rank, nonce } => Frame::Hello { rank, nonce },
            wire::Frame::Challenge { rank, nonce, mac } => Frame::Challenge { rank, nonce, mac },
            wire::Frame::Proof { mac } => Frame::Proof { mac },
            wire::Frame::Heartbeat => Frame::Heartbeat,
            wire::Frame::FailureNotice { rank } => Frame::FailureNotice { rank },
            wire::Frame::Suspect { rank } => Frame::Suspect { rank },
        }
    }
}

impl From<Frame> for wire::Frame {
    fn from(frame: Frame) -> wire::Frame {
        match frame {
            Frame::Data {
                context,
                source,
                tag,
                payload,
            } => wire::Frame::Packet(Packet::Data {
                context,
                source,
                tag,
                payload,
            }),
            Frame::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            } => wire::Frame::Packet(Packet::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            }),
            Frame::Agreement {
                context,
                source,
                seq,
                message,
            } => wire::Frame::Packet(Packet::Agreement {
                context,
                source,
                seq,
                message,
            }),
            Frame::Revoke { context } => wire::Frame::Packet(Packet::Revoke { context }),
            Frame::Credit { collective, bytes } => wire::Frame::Packet(Packet::Credit {
                lane: lane(collective),
                bytes,
            }),
            Frame::CreditWanted { collective } => wire::Frame::Packet(Packet::CreditWanted {
                lane: lane(collective),
            }),
            Frame::Hello { rank, nonce } => wire::Frame::Hello { rank, nonce },
            Frame::Challenge { rank, nonce, mac } => wire::Frame::Challenge { rank, nonce, mac },
            Frame::Proof { mac } => wire::Frame::Proof { mac },
            Frame::Heartbeat => wire::Frame::Heartbeat,
            Frame::FailureNotice { rank } => wire::Frame::FailureNotice { rank },
            Frame::Suspect { rank } => wire::Frame::Suspect { rank },
        }
    }
}

fn lane(collective: bool) -> Lane {
    if collective {
        Lane::Collective
    } else {
        Lane::Point
    }
}

/// Why bytes did not decode (the crate's `WireError`, rendered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A body length of 0 or above the limit.
    Oversized(usize),
    /// Any other error, as the transport would log it.
    Other(String),
}

impl From<wire::WireError> for Error {
    fn from(e: wire::WireError) -> Error {
        match e {
            wire::WireError::Oversized(n) => Error::Oversized(n),
            e => Error::Other(e.to_string()),
        }
    }
}

/// Appends the encoding of `frame` (length included) to `out`.
pub fn encode(frame: &Frame, out: &mut Vec<u8>) {
    wire::encode(&frame.clone().into(), out);
}

/// The encoding of a packet frame written as the transport's writer does: a head, and the
/// payload apart when it is `split_at` bytes or more. `None` for a frame that is not a packet.
pub fn encode_split(frame: &Frame, split_at: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let wire::Frame::Packet(packet) = wire::Frame::from(frame.clone()) else {
        return None;
    };
    let mut head = Vec::new();
    let rest = wire::encode_packet_split(&packet, &mut head, split_at).to_vec();
    Some((head, rest))
}

/// Decodes one frame body (the bytes after the length).
pub fn decode_body(body: &[u8]) -> Result<Frame, Error> {
    Ok(wire::decode_body(body)?.into())
}

/// The transport's streaming decoder.
#[derive(Debug)]
pub struct Decoder(wire::Decoder);

impl Decoder {
    /// A decoder that refuses bodies longer than `max_frame` bytes.
    pub fn new(max_frame: usize) -> Decoder {
        Decoder(wire::Decoder::new(max_frame))
    }

    /// Changes the longest body accepted from now on (as the transport does after the
    /// handshake).
    pub fn set_max_frame(&mut self, max_frame: usize) {
        self.0.set_max_frame(max_frame);
    }

    /// Reads once from `source` (`Ok(0)` at end of stream).
    pub fn read_from(&mut self, source: &mut impl Read) -> io::Result<usize> {
        self.0.read_from(source)
    }

    /// The next complete frame, or `None` if more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Error> {
        Ok(self.0.next_frame()?.map(Frame::from))
    }

    /// Whether no partial frame is held.
    pub fn is_idle(&self) -> bool {
        self.0.is_idle()
    }

    /// The bytes the decoder holds allocated: its buffer, and the payload being read straight
    /// into its vector, if any.
    pub fn allocated(&self) -> usize {
        self.0.allocated()
    }
}

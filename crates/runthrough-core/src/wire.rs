// SPDX-License-Identifier: MIT OR Apache-2.0
//! The wire format of the socket transports: length-prefixed frames.
//!
//! A frame is a 4-byte little-endian body length, then the body: one kind byte and the kind's
//! fields in order, integers little-endian. Every [`Packet`] variant has a kind, and so do the
//! control frames of a connection (the authenticated handshake, heartbeats, failure notices).
//!
//! | kind | frame | fields after the kind byte |
//! |---|---|---|
//! | 1 | `Data` | context u64, source u32, tag i32, payload (the rest) |
//! | 2 | `Collective` | context u64, source u32, epoch u32, sequence u32, payload (the rest) |
//! | 3 | `Agreement` | context u64, source u32, seq u64, [`Message`] encoding (the rest) |
//! | 4 | `Revoke` | context u64 |
//! | 5 | `Credit` | lane u8 (0 point-to-point, 1 collective), bytes u64 |
//! | 6 | `CreditWanted` | lane u8 |
//! | 7 | `SyncAck` | id u64 |
//! | 8 | `Loan` | bytes u64 |
//! | 16 | `Hello` | rank u32, nonce 32 bytes |
//! | 17 | `Challenge` | rank u32, nonce 32 bytes, MAC 32 bytes |
//! | 18 | `Proof` | MAC 32 bytes |
//! | 19 | `Heartbeat` | nothing |
//! | 20 | `FailureNotice` | rank u32 |
//! | 21 | `Suspect` | rank u32 |
//! | 22 | `Goodbye` | nothing |
//!
//! # Invariants
//! Decoding never panics. Its buffer grows only with the bytes that have arrived (at most
//! doubling), never to a length only declared; one exception: a data or collective frame over
//! `DIRECT_READ_THRESHOLD` gets a vector of its whole declared payload (up to the decoder's limit)
//! as soon as its head has arrived, so that the payload is read straight into it. That vector is
//! zero-filled by the allocator (`vec![0; n]`: fresh pages from the kernel), so resident memory
//! still grows only as bytes arrive, but the address space is taken at once (the fuzz target
//! checks this bound). A body length of 0 or above the decoder's limit, an unknown kind, a body
//! shorter or longer than its kind allows, and an agreement message that does not decode are
//! all a [`WireError`], after which the connection is unusable (the transport closes it and
//! fences the peer, semantics §4).

use std::io::{self, Read};

use crate::agreement::Message;

use crate::packet::{ContextId, Lane, Packet};
use crate::Rank;

/// Length of a MAC or a nonce in the handshake (HMAC-SHA256).
pub const TOKEN: usize = 32;

/// The largest frame body a decoder accepts by default: 1 GiB.
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

const KIND_DATA: u8 = 1;
const KIND_COLLECTIVE: u8 = 2;
const KIND_AGREEMENT: u8 = 3;
const KIND_REVOKE: u8 = 4;
const KIND_CREDIT: u8 = 5;
const KIND_CREDIT_WANTED: u8 = 6;
const KIND_SYNC_ACK: u8 = 7;
const KIND_LOAN: u8 = 8;
const KIND_RMA: u8 = 9;
const KIND_HELLO: u8 = 16;
const KIND_CHALLENGE: u8 = 17;
const KIND_PROOF: u8 = 18;
const KIND_HEARTBEAT: u8 = 19;
const KIND_FAILURE_NOTICE: u8 = 20;
const KIND_SUSPECT: u8 = 21;
const KIND_GOODBYE: u8 = 22;

/// Bytes of a data frame's body before its payload (kind included).
const DATA_HEAD: usize = 1 + 8 + 4 + 4;
/// Bytes of a collective frame's body before its payload (kind included).
const COLLECTIVE_HEAD: usize = 1 + 8 + 4 + 4 + 4;

/// A payload frame longer than this is read straight into its payload buffer (no second copy).
pub const DIRECT_READ_THRESHOLD: usize = 16 << 10;
/// The decoder's buffer size.
pub const BUFFER: usize = 64 << 10;

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Traffic for the engine.
    Packet(Packet),
    /// Handshake, from the connecting rank: who it is and a fresh nonce.
    Hello {
        /// The connecting rank's world rank.
        rank: u32,
        /// Its fresh nonce.
        nonce: [u8; TOKEN],
    },
    /// Handshake, from the accepting rank: who it is, a fresh nonce, and its proof over the
    /// hello's nonce.
    Challenge {
        /// The accepting rank's world rank.
        rank: u32,
        /// Its fresh nonce.
        nonce: [u8; TOKEN],
        /// Its proof over the hello's nonce.
        mac: [u8; TOKEN],
    },
    /// Handshake, from the connecting rank: its proof over the challenge's nonce.
    Proof {
        /// The proof.
        mac: [u8; TOKEN],
    },
    /// Liveness, sent every heartbeat period whatever the traffic.
    Heartbeat,
    /// World rank `rank` is in the sender's detector output: its failure was confirmed, or it
    /// was fenced by a majority (knowledge spreads, semantics §1).
    FailureNotice {
        /// The failed world rank.
        rank: u32,
    },
    /// The sender fenced world rank `rank`: its vote that `rank` failed (semantics §1).
    Suspect {
        /// The suspected world rank.
        rank: u32,
    },
    /// The sender finalized and leaves the job: the last frame on the connection, after every
    /// message it owed the receiver. Its connection closing next is no suspicion, and it leaves
    /// the ranks believed alive without being failed ([`crate::fence::Fence::depart`]). It
    /// arrives only on an authenticated connection, as every frame after the handshake.
    Goodbye,
}

/// Why bytes did not decode into a frame.
#[derive(Debug)]
pub enum WireError {
    /// Reading failed, or the stream ended inside a frame (made by callers that read).
    Io(io::Error),
    /// The stream ended cleanly between two frames (made by callers that read).
    Closed,
    /// A body length of 0 or above the limit.
    Oversized(usize),
    /// An unknown kind byte.
    UnknownKind(u8),
    /// A body that does not fit its kind.
    Malformed(&'static str),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Io(e) => write!(f, "read failed: {e}"),
            WireError::Closed => write!(f, "connection closed"),
            WireError::Oversized(n) => write!(f, "frame length {n} out of bounds"),
            WireError::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
            WireError::Malformed(what) => write!(f, "malformed frame: {what}"),
        }
    }
}

fn begin(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

fn finish(out: &mut [u8], at: usize, after: usize) {
    let body = out.len() - at - 4 + after;
    let body = u32::try_from(body).expect("a frame body fits in 4 GiB");
    out[at..at + 4].copy_from_slice(&body.to_le_bytes());
}

fn data_head(out: &mut Vec<u8>, context: ContextId, source: Rank, tag: i32) {
    out.push(KIND_DATA);
    out.extend_from_slice(&context.to_le_bytes());
    out.extend_from_slice(&source.to_le_bytes());
    out.extend_from_slice(&tag.to_le_bytes());
}

/// Appends the frame of a [`Packet::Data`] to `out` but for its payload, `payload_len` bytes
/// that the caller writes right after `out` (as [`encode_packet_split`] returns a large
/// payload): a sender can write a large message straight from the user's buffer, and the
/// receiver decodes the same frame as for the packet.
pub fn encode_data_head(
    context: ContextId,
    source: Rank,
    tag: i32,
    payload_len: usize,
    out: &mut Vec<u8>,
) {
    let at = begin(out);
    data_head(out, context, source, tag);
    finish(out, at, payload_len);
}

/// Appends the frame of `packet` to `out`.
pub fn encode_packet(packet: &Packet, out: &mut Vec<u8>) {
    let rest = encode_packet_split(packet, out, usize::MAX);
    debug_assert!(rest.is_empty());
}

/// Appends the frame of `packet` to `out`, except a payload of `split_at` bytes or more: that
/// one is returned, to be written right after `out` (the frame's length counts it), which saves
/// copying a large payload.
pub fn encode_packet_split<'a>(packet: &'a Packet, out: &mut Vec<u8>, split_at: usize) -> &'a [u8] {
    let at = begin(out);
    // Exhaustive on purpose: a new packet kind fails to compile until it has a wire encoding.
    let payload: &[u8] = match packet {
        Packet::Data {
            context,
            source,
            tag,
            payload,
        } => {
            data_head(out, *context, *source, *tag);
            payload
        }
        Packet::Collective {
            context,
            source,
            epoch,
            sequence,
            payload,
        } => {
            out.push(KIND_COLLECTIVE);
            out.extend_from_slice(&context.to_le_bytes());
            out.extend_from_slice(&source.to_le_bytes());
            out.extend_from_slice(&epoch.to_le_bytes());
            out.extend_from_slice(&sequence.to_le_bytes());
            payload
        }
        Packet::Agreement {
            context,
            source,
            seq,
            message,
        } => {
            out.push(KIND_AGREEMENT);
            out.extend_from_slice(&context.to_le_bytes());
            out.extend_from_slice(&source.to_le_bytes());
            out.extend_from_slice(&seq.to_le_bytes());
            message.encode(out);
            &[]
        }
        Packet::Rma {
            context,
            source,
            message,
            payload,
        } => {
            out.push(KIND_RMA);
            out.extend_from_slice(&context.to_le_bytes());
            out.extend_from_slice(&source.to_le_bytes());
            message.encode(out);
            payload
        }
        Packet::Revoke { context } => {
            out.push(KIND_REVOKE);
            out.extend_from_slice(&context.to_le_bytes());
            &[]
        }
        Packet::Credit { lane, bytes } => {
            out.push(KIND_CREDIT);
            out.push(lane.index() as u8);
            out.extend_from_slice(&bytes.to_le_bytes());
            &[]
        }
        Packet::CreditWanted { lane } => {
            out.push(KIND_CREDIT_WANTED);
            out.push(lane.index() as u8);
            &[]
        }
        Packet::SyncAck { id } => {
            out.push(KIND_SYNC_ACK);
            out.extend_from_slice(&id.to_le_bytes());
            &[]
        }
        Packet::Loan { bytes } => {
            out.push(KIND_LOAN);
            out.extend_from_slice(&bytes.to_le_bytes());
            &[]
        }
    };
    if payload.len() < split_at {
        out.extend_from_slice(payload);
        finish(out, at, 0);
        &[]
    } else {
        finish(out, at, payload.len());
        payload
    }
}

/// Appends `frame` to `out`.
pub fn encode(frame: &Frame, out: &mut Vec<u8>) {
    if let Frame::Packet(packet) = frame {
        return encode_packet(packet, out);
    }
    let at = begin(out);
    match frame {
        Frame::Packet(_) => unreachable!("encoded above"),
        Frame::Hello { rank, nonce } => {
            out.push(KIND_HELLO);
            out.extend_from_slice(&rank.to_le_bytes());
            out.extend_from_slice(nonce);
        }
        Frame::Challenge { rank, nonce, mac } => {
            out.push(KIND_CHALLENGE);
            out.extend_from_slice(&rank.to_le_bytes());
            out.extend_from_slice(nonce);
            out.extend_from_slice(mac);
        }
        Frame::Proof { mac } => {
            out.push(KIND_PROOF);
            out.extend_from_slice(mac);
        }
        Frame::Heartbeat => out.push(KIND_HEARTBEAT),
        Frame::FailureNotice { rank } => {
            out.push(KIND_FAILURE_NOTICE);
            out.extend_from_slice(&rank.to_le_bytes());
        }
        Frame::Suspect { rank } => {
            out.push(KIND_SUSPECT);
            out.extend_from_slice(&rank.to_le_bytes());
        }
        Frame::Goodbye => out.push(KIND_GOODBYE),
    }
    finish(out, at, 0);
}

/// Reads fixed-size fields from a body.
struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.bytes.len() < n {
            return Err(WireError::Malformed("body shorter than its kind"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn lane(&mut self) -> Result<Lane, WireError> {
        Lane::from_index(self.take(1)?[0]).ok_or(WireError::Malformed("unknown lane"))
    }
    fn token(&mut self) -> Result<[u8; TOKEN], WireError> {
        let mut a = [0u8; TOKEN];
        a.copy_from_slice(self.take(TOKEN)?);
        Ok(a)
    }
    fn end(self) -> Result<(), WireError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(WireError::Malformed("body longer than its kind"))
        }
    }
}

/// The fields of a payload frame before its payload.
#[derive(Debug, Clone, Copy)]
enum PayloadHead {
    Data {
        context: u64,
        source: u32,
        tag: i32,
    },
    Collective {
        context: u64,
        source: u32,
        epoch: u32,
        sequence: u32,
    },
}

impl PayloadHead {
    /// Parses the head of a data or collective body (`None` for other kinds).
    fn parse(body: &[u8]) -> Result<Option<(PayloadHead, usize)>, WireError> {
        let mut f = Fields { bytes: body };
        let kind = f.take(1)?[0];
        Ok(match kind {
            KIND_DATA => Some((
                PayloadHead::Data {
                    context: f.u64()?,
                    source: f.u32()?,
                    tag: f.u32()? as i32,
                },
                DATA_HEAD,
            )),
            KIND_COLLECTIVE => Some((
                PayloadHead::Collective {
                    context: f.u64()?,
                    source: f.u32()?,
                    epoch: f.u32()?,
                    sequence: f.u32()?,
                },
                COLLECTIVE_HEAD,
            )),
            _ => None,
        })
    }

    fn with_payload(self, payload: Vec<u8>) -> Packet {
        match self {
            PayloadHead::Data {
                context,
                source,
                tag,
            } => Packet::Data {
                context,
                source,
                tag,
                payload,
            },
            PayloadHead::Collective {
                context,
                source,
                epoch,
                sequence,
            } => Packet::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            },
        }
    }
}

/// Decodes one frame body (the bytes after the length).
pub fn decode_body(body: &[u8]) -> Result<Frame, WireError> {
    if let Some((head, at)) = PayloadHead::parse(body)? {
        return Ok(Frame::Packet(head.with_payload(body[at..].to_vec())));
    }
    let mut f = Fields { bytes: body };
    let frame = match f.take(1)?[0] {
        KIND_AGREEMENT => {
            let context = f.u64()?;
            let source = f.u32()?;
            let seq = f.u64()?;
            let message = Message::decode(f.bytes)
                .map_err(|_| WireError::Malformed("agreement message does not decode"))?;
            return Ok(Frame::Packet(Packet::Agreement {
                context,
                source,
                seq,
                message,
            }));
        }
        KIND_RMA => {
            let context = f.u64()?;
            let source = f.u32()?;
            let (message, payload) =
                crate::engine::rma::Message::decode(f.bytes).map_err(WireError::Malformed)?;
            return Ok(Frame::Packet(Packet::Rma {
                context,
                source,
                message,
                payload: payload.to_vec(),
            }));
        }
        KIND_REVOKE => Frame::Packet(Packet::Revoke { context: f.u64()? }),
        KIND_CREDIT => Frame::Packet(Packet::Credit {
            lane: f.lane()?,
            bytes: f.u64()?,
        }),
        KIND_CREDIT_WANTED => Frame::Packet(Packet::CreditWanted { lane: f.lane()? }),
        KIND_SYNC_ACK => Frame::Packet(Packet::SyncAck { id: f.u64()? }),
        KIND_LOAN => Frame::Packet(Packet::Loan { bytes: f.u64()? }),
        KIND_HELLO => Frame::Hello {
            rank: f.u32()?,
            nonce: f.token()?,
        },
        KIND_CHALLENGE => Frame::Challenge {
            rank: f.u32()?,
            nonce: f.token()?,
            mac: f.token()?,
        },
        KIND_PROOF => Frame::Proof { mac: f.token()? },
        KIND_HEARTBEAT => Frame::Heartbeat,
        KIND_FAILURE_NOTICE => Frame::FailureNotice { rank: f.u32()? },
        KIND_SUSPECT => Frame::Suspect { rank: f.u32()? },
        KIND_GOODBYE => Frame::Goodbye,
        kind => return Err(WireError::UnknownKind(kind)),
    };
    f.end()?;
    Ok(frame)
}

/// Decodes a whole buffer that must hold exactly one frame, length included.
#[cfg(test)]
pub fn decode(bytes: &[u8]) -> Result<Frame, WireError> {
    let mut decoder = Decoder::new(DEFAULT_MAX_FRAME);
    let mut input = bytes;
    loop {
        if let Some(frame) = decoder.next_frame()? {
            return if input.is_empty() && decoder.is_idle() {
                Ok(frame)
            } else {
                Err(WireError::Malformed("bytes after the frame"))
            };
        }
        match decoder.read_from(&mut input).map_err(WireError::Io)? {
            0 if decoder.is_idle() => return Err(WireError::Closed),
            0 => return Err(WireError::Io(io::ErrorKind::UnexpectedEof.into())),
            _ => {}
        }
    }
}

/// A payload frame being read straight into its payload.
#[derive(Debug)]
struct DirectRead {
    head: PayloadHead,
    payload: Vec<u8>,
    filled: usize,
}

/// Turns a byte stream into frames, tolerant of reads that stop anywhere (time-outs included):
/// call [`Decoder::read_from`] when [`Decoder::next_frame`] returns `None`.
///
/// Small frames are decoded from one reused buffer (their payload is copied once into its own
/// vector); a large data or collective payload is read straight into its vector.
#[derive(Debug)]
pub struct Decoder {
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    max_frame: usize,
    direct: Option<DirectRead>,
}

impl Decoder {
    /// A decoder that refuses bodies longer than `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        Decoder {
            buffer: vec![0; BUFFER],
            start: 0,
            end: 0,
            max_frame,
            direct: None,
        }
    }

    /// Changes the longest body accepted from now on.
    pub fn set_max_frame(&mut self, max_frame: usize) {
        self.max_frame = max_frame;
    }

    /// Whether no partial frame is held.
    pub fn is_idle(&self) -> bool {
        self.direct.is_none() && self.start == self.end
    }

    /// The bytes held allocated: the buffer, and a payload being read straight into its vector.
    pub fn allocated(&self) -> usize {
        self.buffer.len() + self.direct.as_ref().map_or(0, |d| d.payload.len())
    }

    /// Reads once from `source` into the decoder (`Ok(0)` at end of stream).
    pub fn read_from(&mut self, source: &mut impl Read) -> io::Result<usize> {
        if let Some(direct) = self.direct.as_mut() {
            let n = source.read(&mut direct.payload[direct.filled..])?;
            direct.filled += n;
            return Ok(n);
        }
        if self.end == self.buffer.len() {
            // next_frame compacts and grows before asking for more, so this is a full buffer
            // of whole frames the caller did not take: make room anyway.
            self.compact();
            if self.end == self.buffer.len() {
                let len = self.buffer.len() * 2;
                self.buffer.resize(len, 0);
            }
        }
        let n = source.read(&mut self.buffer[self.end..])?;
        self.end += n;
        Ok(n)
    }

    fn compact(&mut self) {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
    }

    /// The next complete frame, or `None` if more bytes are needed.
    ///
    /// # Errors
    /// A [`WireError`] for input that is not a frame; the decoder is then unusable.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, WireError> {
        if let Some(direct) = &self.direct {
            if direct.filled < direct.payload.len() {
                return Ok(None);
            }
            let direct = self.direct.take().expect("checked above");
            return Ok(Some(Frame::Packet(
                direct.head.with_payload(direct.payload),
            )));
        }
        let held = self.end - self.start;
        if held < 4 {
            self.make_room(4);
            return Ok(None);
        }
        let s = self.start;
        let len = u32::from_le_bytes([
            self.buffer[s],
            self.buffer[s + 1],
            self.buffer[s + 2],
            self.buffer[s + 3],
        ]) as usize;
        if len == 0 || len > self.max_frame {
            return Err(WireError::Oversized(len));
        }
        let available = held - 4;
        if len > DIRECT_READ_THRESHOLD && available >= COLLECTIVE_HEAD.min(len) {
            let body = &self.buffer[s + 4..s + 4 + available.min(len)];
            if let Some((head, at)) = PayloadHead::parse(body)? {
                let mut payload = crate::buffers::buffer(len - at);
                let have = available.min(len) - at;
                payload[..have].copy_from_slice(&body[at..at + have]);
                self.start += 4 + at + have;
                self.direct = Some(DirectRead {
                    head,
                    payload,
                    filled: have,
                });
                return self.next_frame();
            }
        }
        if available < len {
            self.make_room(4 + len);
            return Ok(None);
        }
        let frame = decode_body(&self.buffer[s + 4..s + 4 + len]);
        self.start += 4 + len;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        frame.map(Some)
    }

    /// Makes sure a frame of `total` bytes (length included) fits after `start`.
    fn make_room(&mut self, total: usize) {
        if self.start + total > self.buffer.len() {
            self.compact();
        }
        // Grow with what has arrived (at most doubling), never to a length only declared: a
        // peer that announces a huge frame and sends nothing costs nothing.
        let want = total.min((self.end - self.start).saturating_mul(2).max(BUFFER));
        if want > self.buffer.len() {
            self.buffer.resize(want, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agreement::arbitrary_message as message;

    /// A data frame whose head is encoded alone and whose payload follows it decodes as the
    /// packet's own frame does, small or large (the decoder's direct read).
    #[test]
    fn a_data_head_and_its_payload_make_the_packets_frame() {
        for len in [0, 1, 100, 64 << 10, (1 << 20) + 3] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let packet = Packet::Data {
                context: 7,
                source: 3,
                tag: -5,
                payload: payload.clone(),
            };
            let mut whole = Vec::new();
            encode_packet(&packet, &mut whole);
            let mut split = Vec::new();
            encode_data_head(7, 3, -5, len, &mut split);
            split.extend_from_slice(&payload);
            assert_eq!(split, whole, "{len} bytes");
            assert_eq!(decode(&split).unwrap(), Frame::Packet(packet));
        }
    }
    use proptest::prelude::*;

    fn payload() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..64),
            proptest::collection::vec(any::<u8>(), 16_000..70_000),
        ]
    }

    fn frame() -> impl Strategy<Value = Frame> {
        let token = proptest::array::uniform32(any::<u8>());
        prop_oneof![
            (any::<u64>(), any::<u32>(), any::<i32>(), payload()).prop_map(
                |(context, source, tag, payload)| Frame::Packet(Packet::Data {
                    context,
                    source,
                    tag,
                    payload
                })
            ),
            (
                any::<u64>(),
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                payload()
            )
                .prop_map(|(context, source, epoch, sequence, payload)| {
                    Frame::Packet(Packet::Collective {
                        context,
                        source,
                        epoch,
                        sequence,
                        payload,
                    })
                }),
            (any::<u64>(), any::<u32>(), any::<u64>(), message()).prop_map(
                |(context, source, seq, message)| Frame::Packet(Packet::Agreement {
                    context,
                    source,
                    seq,
                    message
                })
            ),
            any::<u64>().prop_map(|context| Frame::Packet(Packet::Revoke { context })),
            (any::<bool>(), any::<u64>()).prop_map(|(collective, bytes)| {
                let lane = if collective {
                    Lane::Collective
                } else {
                    Lane::Point
                };
                Frame::Packet(Packet::Credit { lane, bytes })
            }),
            any::<bool>().prop_map(|collective| {
                let lane = if collective {
                    Lane::Collective
                } else {
                    Lane::Point
                };
                Frame::Packet(Packet::CreditWanted { lane })
            }),
            any::<u64>().prop_map(|id| Frame::Packet(Packet::SyncAck { id })),
            any::<u64>().prop_map(|bytes| Frame::Packet(Packet::Loan { bytes })),
            (
                any::<u64>(),
                any::<u32>(),
                any::<u64>(),
                proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
                0u8..5,
                proptest::collection::vec(any::<u8>(), 0..64),
            )
                .prop_map(|(context, source, op, blocks, kind, payload)| {
                    use crate::engine::rma::{Access, Block, Message};
                    let blocks: Vec<Block> = blocks
                        .into_iter()
                        .map(|(at, len)| Block { at, len })
                        .collect();
                    let access = match kind {
                        0 => Access::Put { blocks },
                        1 => Access::Get { blocks },
                        2 | 3 => Access::Accumulate {
                            blocks,
                            code: op ^ 0x55,
                            fetch: kind == 3,
                        },
                        _ => Access::CompareAndSwap { at: op >> 1 },
                    };
                    Frame::Packet(Packet::Rma {
                        context,
                        source,
                        message: Message::Request { op, access },
                        payload,
                    })
                }),
            (any::<u32>(), token).prop_map(|(rank, nonce)| Frame::Hello { rank, nonce }),
            (any::<u32>(), token, token).prop_map(|(rank, nonce, mac)| Frame::Challenge {
                rank,
                nonce,
                mac
            }),
            token.prop_map(|mac| Frame::Proof { mac }),
            Just(()).prop_map(|()| Frame::Heartbeat),
            any::<u32>().prop_map(|rank| Frame::FailureNotice { rank }),
            any::<u32>().prop_map(|rank| Frame::Suspect { rank }),
            Just(()).prop_map(|()| Frame::Goodbye),
        ]
    }

    fn bytes_of(frame: &Frame) -> Vec<u8> {
        let mut out = Vec::new();
        encode(frame, &mut out);
        out
    }

    /// Feeds `input` to a decoder in reads of at most `chunk` bytes; returns the frames.
    fn decode_stream(input: &[u8], chunk: usize) -> Result<Vec<Frame>, WireError> {
        struct Chunked<'a>(&'a [u8], usize);
        impl Read for Chunked<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(buf.len()).min(self.1);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut source = Chunked(input, chunk.max(1));
        let mut decoder = Decoder::new(DEFAULT_MAX_FRAME);
        let mut frames = Vec::new();
        loop {
            while let Some(frame) = decoder.next_frame()? {
                frames.push(frame);
            }
            if decoder.read_from(&mut source).map_err(WireError::Io)? == 0 {
                return if decoder.is_idle() {
                    Ok(frames)
                } else {
                    Err(WireError::Io(io::ErrorKind::UnexpectedEof.into()))
                };
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every frame decodes to itself (compared through its encoding).
        #[test]
        fn roundtrip(frame in frame()) {
            let bytes = bytes_of(&frame);
            let back = decode(&bytes).expect("an encoded frame decodes");
            prop_assert_eq!(bytes_of(&back), bytes);
        }

        /// A stream of frames cut into reads of any size gives back the same frames, in order.
        #[test]
        fn stream_roundtrip(frames in proptest::collection::vec(frame(), 1..6), chunk in 1usize..100_000) {
            let mut bytes = Vec::new();
            for f in &frames { encode(f, &mut bytes); }
            let back = decode_stream(&bytes, chunk).expect("a stream of frames decodes");
            prop_assert_eq!(back.len(), frames.len());
            let mut again = Vec::new();
            for f in &back { encode(f, &mut again); }
            prop_assert_eq!(again, bytes);
        }

        /// A frame written as head plus separate payload is the same bytes as written whole.
        #[test]
        fn split_encoding_is_the_same_bytes(frame in frame(), split_at in 0usize..100_000) {
            if let Frame::Packet(packet) = &frame {
                let mut head = Vec::new();
                let rest = encode_packet_split(packet, &mut head, split_at);
                head.extend_from_slice(rest);
                prop_assert_eq!(head, bytes_of(&frame));
            }
        }

        /// Arbitrary bytes never panic the decoder.
        #[test]
        fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), chunk in 1usize..64) {
            let _ = decode(&bytes);
            let _ = decode_stream(&bytes, chunk);
        }

        /// A frame with bytes flipped or cut short is an error or some frame, never a panic; a
        /// truncated frame is never mistaken for a whole one.
        #[test]
        fn corrupted_frames(frame in frame(), flip in any::<(usize, u8)>(), cut in any::<usize>()) {
            let mut bytes = bytes_of(&frame);
            let cut = cut % bytes.len();
            prop_assert!(decode(&bytes[..cut]).is_err());
            let at = flip.0 % bytes.len();
            bytes[at] ^= flip.1;
            let _ = decode(&bytes);
        }
    }

    #[test]
    fn oversized_and_empty_lengths_are_refused_without_allocating() {
        let mut decoder = Decoder::new(1024);
        let mut input: &[u8] = &[0xff, 0xff, 0xff, 0x7f, KIND_DATA];
        decoder.read_from(&mut input).unwrap();
        assert!(matches!(decoder.next_frame(), Err(WireError::Oversized(_))));
        assert!(matches!(
            decode(&[0, 0, 0, 0]),
            Err(WireError::Oversized(0))
        ));
    }

    /// A suspicion vote: its exact bytes, and bodies too short or too long for it.
    #[test]
    fn suspect_frames_encode_exactly_and_refuse_malformed_bodies() {
        let bytes = bytes_of(&Frame::Suspect { rank: 0x0102_0304 });
        assert_eq!(bytes, [5, 0, 0, 0, KIND_SUSPECT, 4, 3, 2, 1]);
        assert!(matches!(
            decode(&bytes),
            Ok(Frame::Suspect { rank: 0x0102_0304 })
        ));
        for body in [
            &[KIND_SUSPECT][..],
            &[KIND_SUSPECT, 1, 2, 3],
            &[KIND_SUSPECT, 1, 2, 3, 4, 5],
        ] {
            let mut frame = (body.len() as u32).to_le_bytes().to_vec();
            frame.extend_from_slice(body);
            assert!(
                matches!(decode(&frame), Err(WireError::Malformed(_))),
                "{body:?}"
            );
        }
        // Cut short inside the frame: never a whole frame.
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn a_huge_declared_payload_allocates_only_on_arrival_of_its_head() {
        // 1 GiB declared, 5 bytes sent: the decoder waits for the head and holds 64 KiB.
        let mut decoder = Decoder::new(DEFAULT_MAX_FRAME);
        let mut input: &[u8] = &[0, 0, 0, 0x40, KIND_AGREEMENT];
        decoder.read_from(&mut input).unwrap();
        assert!(decoder.next_frame().unwrap().is_none());
        assert_eq!(decoder.buffer.len(), BUFFER);
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The checks behind the fuzz targets of runthrough's wire format (see README.md).
//!
//! `frame_decoder` feeds raw bytes to the transport's streaming decoder; `frame_roundtrip`
//! builds frames from the input and checks encode / decode / truncation. Both use the decoder,
//! encoder and frame type of `runthrough_core::wire` directly. The handshake frames (Hello,
//! Challenge, Proof) go through the same decoder as everything else, under the transport's
//! handshake limit of 256 bytes: both targets cover them.

pub mod ring;

use std::io::{self, Read};

use arbitrary::{Result as AResult, Unstructured};
use runthrough_core::agreement::{Ballot, Contribution, Decision, Message, Summary};
use runthrough_core::packet::{Lane, Packet};
use runthrough_core::wire::{
    self, Decoder, Frame, WireError, BUFFER, DEFAULT_MAX_FRAME, DIRECT_READ_THRESHOLD, TOKEN,
};
use runthrough_core::RankSet;
/// The transport's limit during the handshake (tcp.rs `HANDSHAKE_MAX_FRAME`).
pub const HANDSHAKE_MAX_FRAME: usize = 256;

/// The limits a `frame_decoder` input can ask for (3 bits). The transport's default (1 GiB)
/// makes the decoder allocate a declared payload once its head is in, which is slow under a
/// sanitizer, so it is only one choice in eight.
pub const LIMITS: [usize; 8] = [
    HANDSHAKE_MAX_FRAME,
    HANDSHAKE_MAX_FRAME,
    4096,
    20_000,
    100_000,
    1 << 20,
    1 << 20,
    DEFAULT_MAX_FRAME,
];

/// A small deterministic generator, for chunkings.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any seed, 0 included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A number in `1..=max`.
    pub fn size(&mut self, max: usize) -> usize {
        1 + (self.next_u64() % max.max(1) as u64) as usize
    }
}

/// How a stream is cut into reads.
#[derive(Debug, Clone)]
pub enum Chunking {
    /// Each read gives all it can.
    Whole,
    /// Reads of 1..=max bytes; with `stalls`, about one read in four first fails with a
    /// time-out (as a socket with a read timeout does), consuming nothing.
    Random {
        /// The generator of the sizes.
        rng: Rng,
        /// The largest read.
        max: usize,
        /// Whether some reads time out.
        stalls: bool,
    },
}

impl Chunking {
    /// The chunking that a control byte asks for.
    pub fn from_control(byte: u8, seed: u64) -> Chunking {
        const MAX: [usize; 8] = [1, 2, 3, 7, 64, 4096, 65_536, 1 << 20];
        match byte & 0x0f {
            0x0f => Chunking::Whole,
            b => Chunking::Random {
                rng: Rng::new(seed ^ u64::from(byte)),
                max: MAX[usize::from(b & 7)],
                stalls: b & 8 != 0,
            },
        }
    }
}

/// A reader over a byte slice that follows a [`Chunking`].
pub struct Chunked<'a> {
    rest: &'a [u8],
    chunking: Chunking,
    stalled: bool,
    /// Bytes handed out so far.
    pub given: usize,
}

impl<'a> Chunked<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8], chunking: Chunking) -> Chunked<'a> {
        Chunked {
            rest: bytes,
            chunking,
            stalled: false,
            given: 0,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = self.rest.len().min(buf.len());
        if let Chunking::Random { rng, max, stalls } = &mut self.chunking {
            if *stalls && !self.stalled && rng.next_u64() % 4 == 0 {
                // Never twice in a row, so every other call makes progress.
                self.stalled = true;
                return Err(io::ErrorKind::WouldBlock.into());
            }
            n = n.min(rng.size(*max));
        }
        self.stalled = false;
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        self.given += n;
        Ok(n)
    }
}

/// Why bytes did not decode, in a form the checks compare (a [`WireError`] holds an
/// `io::Error`, which does not compare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A body length of 0 or above the limit.
    Oversized(usize),
    /// Any other error, as the transport would log it.
    Other(String),
}

impl From<WireError> for Error {
    fn from(e: WireError) -> Error {
        match e {
            WireError::Oversized(n) => Error::Oversized(n),
            e => Error::Other(e.to_string()),
        }
    }
}

/// Decodes one frame body (the bytes after the length).
pub fn decode_body(body: &[u8]) -> Result<Frame, Error> {
    Ok(wire::decode_body(body)?)
}

/// The encoding of a packet frame written as the transport's writer does: a head, and the
/// payload apart when it is `split_at` bytes or more. `None` for a frame that is not a packet.
pub fn encode_split(frame: &Frame, split_at: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let Frame::Packet(packet) = frame else {
        return None;
    };
    let mut head = Vec::new();
    let rest = wire::encode_packet_split(packet, &mut head, split_at).to_vec();
    Some((head, rest))
}

/// The lane of a flow-control frame: collective or point-to-point.
pub fn lane(collective: bool) -> Lane {
    if collective {
        Lane::Collective
    } else {
        Lane::Point
    }
}

/// How a stream fed to a decoder ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// The stream ended between two frames.
    Clean,
    /// The stream ended inside a frame.
    Truncated,
    /// The decoder refused the input.
    Error(Error),
}

/// What a decoder made of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The frames, each with the limit in force when it was decoded.
    pub frames: Vec<(Frame, usize)>,
    /// How it ended.
    pub end: End,
}

/// Limits in the transport's order: `first` until `switch_after` frames have come (the
/// handshake), then `then`; `switch_after == 0` means `first` throughout.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The limit at the start.
    pub first: usize,
    /// After how many frames it changes (0: never).
    pub switch_after: usize,
    /// The limit after the change.
    pub then: usize,
}

/// Feeds `stream` to a fresh decoder, read by read as the transport does (frames are taken
/// until `None`, then one read), and checks the decoder's invariants on the way: it ends, it
/// holds no more memory than its buffer, twice what has arrived, and one declared payload
/// within the limit, and every frame's encoding is within the limit in force.
pub fn run_decoder(stream: &[u8], chunking: Chunking, limits: Limits) -> Outcome {
    let mut decoder = Decoder::new(limits.first);
    let mut limit = limits.first;
    let mut largest_limit = limit;
    let mut source = Chunked::new(stream, chunking);
    let mut frames = Vec::new();
    // Every read either gives a byte or times out (never twice in a row); every frame takes
    // five bytes at least.
    let mut budget = 4 * stream.len() + 16;
    let end = loop {
        budget = budget
            .checked_sub(1)
            .unwrap_or_else(|| panic!("decoder made no progress ({} bytes in)", source.given));
        let step = decoder.next_frame();
        let direct = if largest_limit > DIRECT_READ_THRESHOLD {
            largest_limit
        } else {
            0
        };
        let bound = BUFFER.max(2 * source.given) + direct;
        assert!(
            decoder.allocated() <= bound,
            "decoder holds {} bytes after {} arrived (bound {bound})",
            decoder.allocated(),
            source.given
        );
        match step {
            Ok(Some(frame)) => {
                let mut bytes = Vec::new();
                wire::encode(&frame, &mut bytes);
                assert!(
                    bytes.len() - 4 <= limit,
                    "frame of {} body bytes past the limit {limit}: {frame:?}",
                    bytes.len() - 4
                );
                frames.push((frame, limit));
                if frames.len() == limits.switch_after {
                    limit = limits.then;
                    largest_limit = largest_limit.max(limit);
                    decoder.set_max_frame(limit);
                }
            }
            Ok(None) => match decoder.read_from(&mut source) {
                Ok(0) if decoder.is_idle() => break End::Clean,
                Ok(0) => break End::Truncated,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("the test reader failed: {e}"),
            },
            Err(e) => break End::Error(e.into()),
        }
    };
    Outcome { frames, end }
}

/// Decodes `bytes` as exactly one frame with a fresh decoder (limit: the transport's default).
pub fn decode_one(bytes: &[u8]) -> Result<Frame, String> {
    let out = run_decoder(
        bytes,
        Chunking::Whole,
        Limits {
            first: DEFAULT_MAX_FRAME,
            switch_after: 0,
            then: DEFAULT_MAX_FRAME,
        },
    );
    match (out.frames.len(), out.end) {
        (1, End::Clean) => Ok(out.frames.into_iter().next().expect("one").0),
        (n, end) => Err(format!("{n} frames, then {end:?}")),
    }
}

/// The encoding of one frame, length included.
pub fn encoding(frame: &Frame) -> Vec<u8> {
    let mut out = Vec::new();
    wire::encode(frame, &mut out);
    out
}

/// Bytes of a body before the payload, for the kinds that have one (kind byte included).
pub fn payload_head(frame: &Frame) -> Option<usize> {
    match frame {
        Frame::Packet(Packet::Data { .. }) => Some(1 + 8 + 4 + 4),
        Frame::Packet(Packet::Collective { .. }) => Some(1 + 8 + 4 + 4 + 4),
        _ => None,
    }
}

/// `frame` with its payload cut to `n` bytes (a frame without payload unchanged).
pub fn with_payload_cut(frame: &Frame, n: usize) -> Frame {
    let mut frame = frame.clone();
    if let Frame::Packet(Packet::Data { payload, .. } | Packet::Collective { payload, .. }) =
        &mut frame
    {
        payload.truncate(n);
    }
    frame
}

/// The `frame_decoder` target: `data` is two control bytes, then the stream.
///
/// Control byte 0: bits 0-2 the first limit ([`LIMITS`]), bits 3-4 after how many frames the
/// limit changes (0 = never), bits 5-7 the limit after the change. Control byte 1: the chunking
/// ([`Chunking::from_control`]).
///
/// Checks: no panic; [`run_decoder`]'s invariants; the same frames and the same end whatever
/// the chunking; each frame sits at the offset its predecessors' lengths give, and re-encodes
/// to the bytes it came from (an agreement message to bytes that decode to the same message,
/// its varints being possibly longer than needed on the wire); the re-encoding decodes to the
/// same frame.
pub fn decoder_target(data: &[u8]) {
    let (c0, c1, stream) = match data {
        [c0, c1, stream @ ..] => (*c0, *c1, stream),
        _ => return,
    };
    let limits = Limits {
        first: LIMITS[usize::from(c0 & 7)],
        switch_after: usize::from((c0 >> 3) & 3),
        then: LIMITS[usize::from(c0 >> 5)],
    };
    let seed = stream.len() as u64;
    let whole = run_decoder(stream, Chunking::Whole, limits);
    let chunked = run_decoder(stream, Chunking::from_control(c1, seed), limits);
    assert_eq!(
        whole, chunked,
        "the chunking changed what was decoded ({limits:?})"
    );

    let mut at = 0;
    for (frame, _) in &whole.frames {
        let len = u32::from_le_bytes(stream[at..at + 4].try_into().expect("4 bytes")) as usize;
        let original = &stream[at..at + 4 + len];
        let again = encoding(frame);
        if let Frame::Packet(Packet::Agreement { message, .. }) = frame {
            const HEAD: usize = 4 + 1 + 8 + 4 + 8;
            assert_eq!(again[4..HEAD], original[4..HEAD], "agreement head changed");
            assert_eq!(
                Message::decode(&original[HEAD..]).as_ref(),
                Ok(message),
                "agreement message changed"
            );
        } else {
            assert_eq!(again, original, "a frame does not re-encode to its bytes");
        }
        assert_eq!(
            decode_one(&again).as_ref(),
            Ok(frame),
            "a re-encoded frame decodes to another"
        );
        at += 4 + len;
    }
    match whole.end {
        End::Clean => assert_eq!(at, stream.len()),
        End::Truncated => assert!(at < stream.len()),
        End::Error(_) => {}
    }
}

/// What the decoder makes of a `frame_decoder` input, in one line (for `gen_corpus --show`).
pub fn describe_decoder_input(data: &[u8]) -> String {
    let [c0, _, stream @ ..] = data else {
        return "too short".into();
    };
    let limits = Limits {
        first: LIMITS[usize::from(c0 & 7)],
        switch_after: usize::from((c0 >> 3) & 3),
        then: LIMITS[usize::from(c0 >> 5)],
    };
    let out = run_decoder(stream, Chunking::Whole, limits);
    // Frame kinds, runs of one kind counted: "Data x200 Agreement".
    let mut runs: Vec<(String, usize)> = Vec::new();
    for (f, _) in &out.frames {
        let debug = match f {
            Frame::Packet(packet) => format!("{packet:?}"),
            frame => format!("{frame:?}"),
        };
        let kind: String = debug.chars().take_while(|c| c.is_alphanumeric()).collect();
        match runs.last_mut() {
            Some((k, n)) if *k == kind => *n += 1,
            _ => runs.push((kind, 1)),
        }
    }
    let kinds: Vec<String> = runs
        .into_iter()
        .map(|(k, n)| if n == 1 { k } else { format!("{k} x{n}") })
        .collect();
    format!("[{}] then {:?}", kinds.join(" "), out.end)
}

/// A rank set: usually a few ranks, sometimes a long run (to make frames above the decoder's
/// buffer).
pub fn rank_set(u: &mut Unstructured) -> AResult<RankSet> {
    if u.ratio(1, 128)? {
        let start: u32 = u.int_in_range(0..=1000)?;
        let len: u32 = u.int_in_range(0..=70_000)?;
        return Ok((start..start + len).collect());
    }
    let n = u.int_in_range(0..=12)?;
    let mut set = RankSet::default();
    for _ in 0..n {
        let rank = if u.arbitrary()? {
            u.int_in_range(0..=300)?
        } else {
            u.arbitrary()?
        };
        set.insert(rank);
    }
    Ok(set)
}

fn decision(u: &mut Unstructured) -> AResult<Decision> {
    Ok(Decision {
        failed: rank_set(u)?,
        non_contributors: rank_set(u)?,
        flag: u.arbitrary()?,
        unacknowledged_failure: u.arbitrary()?,
    })
}

/// An agreement message.
pub fn message(u: &mut Unstructured) -> AResult<Message> {
    Ok(match u.int_in_range(0..=6)? {
        0 => Message::Prepare {
            ballot: u.arbitrary()?,
        },
        1 => Message::Promise {
            ballot: u.arbitrary()?,
            summary: Summary {
                known_failed: rank_set(u)?,
                non_contributors: rank_set(u)?,
                acknowledged: rank_set(u)?,
                flag: u.arbitrary()?,
                accepted: match u.int_in_range(0..=2)? {
                    0 => None,
                    1 => Some((Ballot::Led(u.arbitrary()?), decision(u)?)),
                    _ => Some((Ballot::Fast, decision(u)?)),
                },
            },
        },
        2 => Message::Accept {
            ballot: u.arbitrary()?,
            value: decision(u)?,
        },
        3 => Message::Accepted {
            ballot: u.arbitrary()?,
        },
        4 => Message::Gather {
            round: u.arbitrary()?,
            aggregate: Contribution {
                known_failed: rank_set(u)?,
                acknowledged: rank_set(u)?,
                flag: u.arbitrary()?,
            },
        },
        5 => Message::Hold {
            round: u.arbitrary()?,
        },
        _ => Message::Commit {
            value: decision(u)?,
        },
    })
}

/// A payload: usually short bytes from the input, sometimes 16-70 KB made from a short seed
/// (to take the decoder's direct-read path and grow its buffer).
pub fn payload(u: &mut Unstructured) -> AResult<Vec<u8>> {
    if u.ratio(1, 32)? {
        // Mostly just around the direct-read threshold; sometimes above the decoder's buffer.
        let len = if u.ratio(1, 4)? {
            u.int_in_range(DIRECT_READ_THRESHOLD..=70_000)?
        } else {
            u.int_in_range(DIRECT_READ_THRESHOLD - 64..=DIRECT_READ_THRESHOLD + 64)?
        };
        let mut rng = Rng::new(u.arbitrary()?);
        return Ok((0..len).map(|_| rng.next_u64() as u8).collect());
    }
    let len = u.int_in_range(0..=64)?;
    Ok(u.bytes(len.min(u.len()))?.to_vec())
}

/// A frame of any kind.
pub fn frame(u: &mut Unstructured) -> AResult<Frame> {
    let token = |u: &mut Unstructured| -> AResult<[u8; TOKEN]> { u.arbitrary() };
    Ok(match u.int_in_range(0..=13)? {
        0 => Frame::Packet(Packet::Data {
            context: u.arbitrary()?,
            source: u.arbitrary()?,
            tag: u.arbitrary()?,
            payload: payload(u)?,
        }),
        1 => Frame::Packet(Packet::Collective {
            context: u.arbitrary()?,
            source: u.arbitrary()?,
            epoch: u.arbitrary()?,
            sequence: u.arbitrary()?,
            payload: payload(u)?,
        }),
        2 => Frame::Packet(Packet::Agreement {
            context: u.arbitrary()?,
            source: u.arbitrary()?,
            seq: u.arbitrary()?,
            message: message(u)?,
        }),
        3 => Frame::Packet(Packet::Revoke {
            context: u.arbitrary()?,
        }),
        4 => Frame::Hello {
            rank: u.arbitrary()?,
            nonce: token(u)?,
        },
        5 => Frame::Challenge {
            rank: u.arbitrary()?,
            nonce: token(u)?,
            mac: token(u)?,
        },
        6 => Frame::Proof { mac: token(u)? },
        7 => Frame::Heartbeat,
        8 => Frame::FailureNotice {
            rank: u.arbitrary()?,
        },
        9 => Frame::Suspect {
            rank: u.arbitrary()?,
        },
        12 => Frame::Goodbye,
        10 => Frame::Packet(Packet::Credit {
            lane: lane(u.arbitrary()?),
            bytes: u.arbitrary()?,
        }),
        13 => Frame::Packet(Packet::SyncAck {
            id: u.arbitrary()?,
        }),
        _ => Frame::Packet(Packet::CreditWanted {
            lane: lane(u.arbitrary()?),
        }),
    })
}

/// Checks one frame alone: its encoding, its split encoding, its body decoded with bytes cut
/// off or added, every prefix of its encoding (fed byte by byte and, for a few, at once), and
/// the limit.
fn check_frame(frame: &Frame, u: &mut Unstructured) -> AResult<()> {
    let bytes = encoding(frame);
    let len = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
    assert_eq!(len, bytes.len() - 4, "length prefix");
    let body = &bytes[4..];
    assert_eq!(decode_body(body).as_ref(), Ok(frame), "body roundtrip");
    assert_eq!(decode_one(&bytes).as_ref(), Ok(frame), "frame roundtrip");

    // Written as the transport's writer does, head and payload apart.
    let split_at = if u.arbitrary()? {
        u.int_in_range(0..=70_000)?
    } else {
        u.int_in_range(0..=64)?
    };
    if let Some((mut head, rest)) = encode_split(frame, split_at) {
        head.extend_from_slice(&rest);
        assert_eq!(head, bytes, "split encoding (split at {split_at})");
    }

    // A body cut short, with a length that says so: a shorter payload, or an error.
    let cuts: Vec<usize> = if body.len() <= 300 {
        (0..body.len()).collect()
    } else {
        let mut cuts = vec![0, 1, 17, 21, 25, body.len() - 1];
        for _ in 0..4 {
            cuts.push(u.int_in_range(0..=body.len() - 1)?);
        }
        cuts
    };
    for cut in cuts {
        let got = decode_body(&body[..cut]);
        match payload_head(frame) {
            Some(head) if cut >= head => assert_eq!(
                got,
                Ok(with_payload_cut(frame, cut - head)),
                "payload cut to {}",
                cut - head
            ),
            _ => assert!(got.is_err(), "body cut to {cut} bytes decoded: {got:?}"),
        }
    }
    // A body with a byte too many: a longer payload, or an error.
    let extra: u8 = u.arbitrary()?;
    let mut longer = body.to_vec();
    longer.push(extra);
    let got = decode_body(&longer);
    match frame.clone() {
        Frame::Packet(
            Packet::Data { mut payload, .. } | Packet::Collective { mut payload, .. },
        ) => {
            payload.push(extra);
            let mut want = frame.clone();
            if let Frame::Packet(
                Packet::Data { payload: p, .. } | Packet::Collective { payload: p, .. },
            ) = &mut want
            {
                *p = payload;
            }
            assert_eq!(got, Ok(want), "payload with one byte more");
        }
        _ => assert!(got.is_err(), "body with a byte too many decoded: {got:?}"),
    }

    // Prefixes of the encoding, fed to one decoder: "need more" until the last byte. Every
    // prefix of a frame up to 4 KiB; of a longer one, every prefix in its first and last 64
    // bytes, and in between after reads of up to 4 KiB.
    let mut decoder = Decoder::new(DEFAULT_MAX_FRAME);
    let mut steps = Rng::new(u.arbitrary()?);
    let mut at = 0;
    while at < bytes.len() {
        assert_eq!(
            decoder
                .next_frame()
                .map(|f| f.is_some())
                .map_err(Error::from),
            Ok(false),
            "a frame from a {at}-byte prefix"
        );
        let step = if bytes.len() <= 4096 || at < 64 || at + 64 >= bytes.len() {
            1
        } else {
            steps.size(4096).min(bytes.len() - 64 - at)
        };
        assert_eq!(
            decoder.read_from(&mut &bytes[at..at + step]).ok(),
            Some(step)
        );
        at += step;
    }
    assert_eq!(
        decoder.next_frame().map_err(Error::from),
        Ok(Some(frame.clone())),
        "byte by byte"
    );
    assert!(decoder.is_idle());
    // A few prefixes at once, with a fresh decoder.
    for _ in 0..3 {
        let cut = u.int_in_range(0..=bytes.len() - 1)?;
        let out = run_decoder(
            &bytes[..cut],
            Chunking::Whole,
            Limits {
                first: DEFAULT_MAX_FRAME,
                switch_after: 0,
                then: 0,
            },
        );
        let want = if cut == 0 { End::Clean } else { End::Truncated };
        assert_eq!(
            out,
            Outcome {
                frames: vec![],
                end: want
            },
            "prefix of {cut} bytes"
        );
    }

    // The limit: the body's length passes, one less is refused before anything is read.
    for (limit, ok) in [(len, true), (len - 1, false)] {
        let out = run_decoder(
            &bytes,
            Chunking::Whole,
            Limits {
                first: limit,
                switch_after: 0,
                then: 0,
            },
        );
        if ok {
            assert_eq!(out.frames.len(), 1, "limit {limit}: {out:?}");
        } else {
            assert_eq!(out.end, End::Error(Error::Oversized(len)), "limit {limit}");
        }
    }
    Ok(())
}

/// The `frame_roundtrip` target: 1 to 4 frames built from `data`; each checked alone
/// ([`check_frame`]), then all of them as one stream, cut into reads by the input, under the
/// transport's handshake limit while the first ones fit in it.
pub fn roundtrip_target(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = roundtrip(&mut u);
}

fn roundtrip(u: &mut Unstructured) -> AResult<()> {
    let n = u.int_in_range(1..=4)?;
    let mut frames = Vec::with_capacity(n);
    for _ in 0..n {
        frames.push(frame(u)?);
    }
    let mut stream = Vec::new();
    for f in &frames {
        wire::encode(f, &mut stream);
    }
    // The handshake limit for as many leading frames as fit in it, as on a new connection.
    let switch_after = frames
        .iter()
        .take_while(|f| encoding(f).len() - 4 <= HANDSHAKE_MAX_FRAME)
        .count()
        .min(3);
    let limits = Limits {
        first: if switch_after > 0 {
            HANDSHAKE_MAX_FRAME
        } else {
            DEFAULT_MAX_FRAME
        },
        switch_after,
        then: DEFAULT_MAX_FRAME,
    };
    let control: u8 = u.arbitrary()?;
    let seed: u64 = u.arbitrary()?;
    let out = run_decoder(&stream, Chunking::from_control(control, seed), limits);
    let got: Vec<Frame> = out.frames.into_iter().map(|(f, _)| f).collect();
    assert_eq!(got, frames, "stream of frames");
    assert_eq!(out.end, End::Clean);
    for f in &frames {
        check_frame(f, u)?;
    }
    Ok(())
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The agreement's messages and their compact binary encoding.
//!
//! Layout: one tag byte, then the fields in order. Integers that are usually small (ballots,
//! set sizes, rank deltas) are LEB128 varints of at most 5 bytes; the flag word is 4 bytes
//! little-endian. A rank set is its length, then its first rank, then the gaps between
//! successive ranks (each at least 1). An option or a boolean is one byte, 0 or 1; a promise's
//! accepted value is one byte, 0 (none), 1 (a coordinated ballot, then its varint) or 2 (the
//! first round), then the value.
//! Decoding checks everything and never panics: truncated input, varints that overflow 32 bits,
//! sets that are not strictly increasing or longer than the bytes left, unknown tags and
//! trailing bytes are all a [`DecodeError`].

use super::value::{Ballot, Contribution, Decision, Summary};
use crate::{Rank, RankSet};

/// One message of the agreement protocol (see the [module docs](super) for the protocol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A new coordinator asks the ranks of its tree to promise its ballot (ballots above 0).
    Prepare {
        /// The ballot (participant index of the coordinator).
        ballot: u32,
    },
    /// A subtree promises `ballot` and reports its contributions and accepted values.
    Promise {
        /// The ballot promised.
        ballot: u32,
        /// The subtree's aggregate.
        summary: Summary,
    },
    /// The coordinator of `ballot` asks the ranks to accept `value`.
    Accept {
        /// The ballot.
        ballot: u32,
        /// The value proposed.
        value: Decision,
    },
    /// A subtree has accepted the value of `ballot`.
    Accepted {
        /// The ballot.
        ballot: u32,
    },
    /// `value` is decided.
    Commit {
        /// The decided value.
        value: Decision,
    },
    /// The first round, phase one: the aggregate of the contributions of the `2^round`
    /// participants that end at the sender (in dissemination order, wrapping around).
    Gather {
        /// The dissemination round (`0..ceil(log2 n)`).
        round: u32,
        /// The aggregate.
        aggregate: Contribution,
    },
    /// The first round, phase two: the `2^round` participants that end at the sender all hold
    /// the first round's value (have accepted it).
    Hold {
        /// The dissemination round.
        round: u32,
    },
}

/// Why bytes did not decode into a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended inside the message.
    #[error("agreement message truncated")]
    Truncated,
    /// The first byte names no message.
    #[error("unknown agreement message tag {0}")]
    UnknownTag(u8),
    /// A field holds an impossible value (varint overflow, a set not strictly increasing, a set
    /// longer than the input, a boolean other than 0 or 1).
    #[error("malformed agreement message: {0}")]
    Malformed(&'static str),
    /// Bytes are left after the message.
    #[error("{0} trailing bytes after an agreement message")]
    TrailingBytes(usize),
}

const TAG_PREPARE: u8 = 1;
const TAG_PROMISE: u8 = 2;
const TAG_ACCEPT: u8 = 3;
const TAG_ACCEPTED: u8 = 4;
const TAG_COMMIT: u8 = 5;
const TAG_GATHER: u8 = 6;
const TAG_HOLD: u8 = 7;

impl Message {
    /// The coordinated ballot the message belongs to (`None` for a commit, valid at any ballot,
    /// and for the first round's messages).
    pub fn ballot(&self) -> Option<u32> {
        match self {
            Message::Prepare { ballot }
            | Message::Promise { ballot, .. }
            | Message::Accept { ballot, .. }
            | Message::Accepted { ballot } => Some(*ballot),
            Message::Commit { .. } | Message::Gather { .. } | Message::Hold { .. } => None,
        }
    }

    /// A short name of the kind of message, for traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Prepare { .. } => "prepare",
            Message::Promise { .. } => "promise",
            Message::Accept { .. } => "accept",
            Message::Accepted { .. } => "accepted",
            Message::Commit { .. } => "commit",
            Message::Gather { .. } => "gather",
            Message::Hold { .. } => "hold",
        }
    }

    /// Appends the encoding of the message to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Message::Prepare { ballot } => {
                out.push(TAG_PREPARE);
                put_varint(out, *ballot);
            }
            Message::Promise { ballot, summary } => {
                out.push(TAG_PROMISE);
                put_varint(out, *ballot);
                put_set(out, &summary.known_failed);
                put_set(out, &summary.non_contributors);
                put_set(out, &summary.acknowledged);
                out.extend_from_slice(&summary.flag.to_le_bytes());
                match &summary.accepted {
                    None => out.push(0),
                    Some((Ballot::Led(ballot), value)) => {
                        out.push(1);
                        put_varint(out, *ballot);
                        put_decision(out, value);
                    }
                    Some((Ballot::Fast, value)) => {
                        out.push(2);
                        put_decision(out, value);
                    }
                }
            }
            Message::Accept { ballot, value } => {
                out.push(TAG_ACCEPT);
                put_varint(out, *ballot);
                put_decision(out, value);
            }
            Message::Accepted { ballot } => {
                out.push(TAG_ACCEPTED);
                put_varint(out, *ballot);
            }
            Message::Commit { value } => {
                out.push(TAG_COMMIT);
                put_decision(out, value);
            }
            Message::Gather { round, aggregate } => {
                out.push(TAG_GATHER);
                put_varint(out, *round);
                put_set(out, &aggregate.known_failed);
                put_set(out, &aggregate.acknowledged);
                out.extend_from_slice(&aggregate.flag.to_le_bytes());
            }
            Message::Hold { round } => {
                out.push(TAG_HOLD);
                put_varint(out, *round);
            }
        }
    }

    /// Decodes one message that fills `bytes` exactly.
    ///
    /// # Errors
    /// A [`DecodeError`] for any input that is not exactly the encoding of one message.
    pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
        let mut reader = Reader { bytes, at: 0 };
        let message = match reader.byte()? {
            TAG_PREPARE => Message::Prepare {
                ballot: reader.varint()?,
            },
            TAG_PROMISE => {
                let ballot = reader.varint()?;
                let known_failed = reader.set()?;
                let non_contributors = reader.set()?;
                let acknowledged = reader.set()?;
                let flag = reader.flag()?;
                let accepted = match reader.byte()? {
                    0 => None,
                    1 => {
                        let ballot = reader.varint()?;
                        Some((Ballot::Led(ballot), reader.decision()?))
                    }
                    2 => Some((Ballot::Fast, reader.decision()?)),
                    _ => return Err(DecodeError::Malformed("accepted ballot kind")),
                };
                Message::Promise {
                    ballot,
                    summary: Summary {
                        known_failed,
                        non_contributors,
                        acknowledged,
                        flag,
                        accepted,
                    },
                }
            }
            TAG_ACCEPT => {
                let ballot = reader.varint()?;
                Message::Accept {
                    ballot,
                    value: reader.decision()?,
                }
            }
            TAG_ACCEPTED => Message::Accepted {
                ballot: reader.varint()?,
            },
            TAG_COMMIT => Message::Commit {
                value: reader.decision()?,
            },
            TAG_GATHER => Message::Gather {
                round: reader.varint()?,
                aggregate: Contribution {
                    known_failed: reader.set()?,
                    acknowledged: reader.set()?,
                    flag: reader.flag()?,
                },
            },
            TAG_HOLD => Message::Hold {
                round: reader.varint()?,
            },
            tag => return Err(DecodeError::UnknownTag(tag)),
        };
        match bytes.len() - reader.at {
            0 => Ok(message),
            left => Err(DecodeError::TrailingBytes(left)),
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_set(out: &mut Vec<u8>, set: &RankSet) {
    put_varint(out, set.len() as u32);
    let mut previous: Option<Rank> = None;
    for rank in set {
        put_varint(out, previous.map_or(rank, |p| rank - p));
        previous = Some(rank);
    }
}

fn put_decision(out: &mut Vec<u8>, value: &Decision) {
    put_set(out, &value.failed);
    put_set(out, &value.non_contributors);
    out.extend_from_slice(&value.flag.to_le_bytes());
    out.push(u8::from(value.unacknowledged_failure));
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let byte = *self.bytes.get(self.at).ok_or(DecodeError::Truncated)?;
        self.at += 1;
        Ok(byte)
    }

    fn varint(&mut self) -> Result<u32, DecodeError> {
        let mut value: u32 = 0;
        for shift in (0..35).step_by(7) {
            let byte = self.byte()?;
            let bits = (byte & 0x7f) as u32;
            if shift == 28 && (bits > 0x0f || byte & 0x80 != 0) {
                return Err(DecodeError::Malformed("varint overflows 32 bits"));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        unreachable!("the fifth byte either ends the varint or is rejected")
    }

    fn flag(&mut self) -> Result<u32, DecodeError> {
        let end = self.at.checked_add(4).ok_or(DecodeError::Truncated)?;
        let bytes = self.bytes.get(self.at..end).ok_or(DecodeError::Truncated)?;
        self.at = end;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn boolean(&mut self) -> Result<bool, DecodeError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::Malformed("boolean is neither 0 nor 1")),
        }
    }

    fn set(&mut self) -> Result<RankSet, DecodeError> {
        let len = self.varint()? as usize;
        // Every element takes at least one byte: refuse to allocate for more than is left.
        if len > self.bytes.len() - self.at {
            return Err(DecodeError::Malformed("rank set longer than the message"));
        }
        let mut ranks = Vec::with_capacity(len);
        let mut previous: Option<Rank> = None;
        for _ in 0..len {
            let delta = self.varint()?;
            let rank = match previous {
                None => delta,
                Some(_) if delta == 0 => {
                    return Err(DecodeError::Malformed("rank set not strictly increasing"))
                }
                Some(p) => p
                    .checked_add(delta)
                    .ok_or(DecodeError::Malformed("rank overflows 32 bits"))?,
            };
            ranks.push(rank);
            previous = Some(rank);
        }
        // Strictly increasing already: collecting keeps them as they are.
        Ok(ranks.into_iter().collect())
    }

    fn decision(&mut self) -> Result<Decision, DecodeError> {
        Ok(Decision {
            failed: self.set()?,
            non_contributors: self.set()?,
            flag: self.flag()?,
            unacknowledged_failure: self.boolean()?,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rank_set() -> impl Strategy<Value = RankSet> {
        prop_oneof![
            proptest::collection::vec(0u32..100, 0..8),
            proptest::collection::vec(any::<u32>(), 0..8),
        ]
        .prop_map(|v| v.into_iter().collect())
    }

    fn decision() -> impl Strategy<Value = Decision> {
        (rank_set(), rank_set(), any::<u32>(), any::<bool>()).prop_map(
            |(failed, non_contributors, flag, unacknowledged_failure)| Decision {
                failed,
                non_contributors,
                flag,
                unacknowledged_failure,
            },
        )
    }

    /// Any message (for the wire's tests too).
    pub(crate) fn message() -> impl Strategy<Value = Message> {
        let summary = (
            rank_set(),
            rank_set(),
            rank_set(),
            any::<u32>(),
            proptest::option::of((
                prop_oneof![Just(Ballot::Fast), any::<u32>().prop_map(Ballot::Led)],
                decision(),
            )),
        )
            .prop_map(
                |(known_failed, non_contributors, acknowledged, flag, accepted)| Summary {
                    known_failed,
                    non_contributors,
                    acknowledged,
                    flag,
                    accepted,
                },
            );
        prop_oneof![
            any::<u32>().prop_map(|ballot| Message::Prepare { ballot }),
            (any::<u32>(), summary)
                .prop_map(|(ballot, summary)| Message::Promise { ballot, summary }),
            (any::<u32>(), decision())
                .prop_map(|(ballot, value)| Message::Accept { ballot, value }),
            any::<u32>().prop_map(|ballot| Message::Accepted { ballot }),
            decision().prop_map(|value| Message::Commit { value }),
            (any::<u32>(), rank_set(), rank_set(), any::<u32>()).prop_map(
                |(round, known_failed, acknowledged, flag)| Message::Gather {
                    round,
                    aggregate: Contribution {
                        known_failed,
                        acknowledged,
                        flag,
                    },
                }
            ),
            any::<u32>().prop_map(|round| Message::Hold { round }),
        ]
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(m in message()) {
            let mut bytes = Vec::new();
            m.encode(&mut bytes);
            prop_assert_eq!(Message::decode(&bytes), Ok(m.clone()));
            // Every strict prefix is refused, and so is any extra byte.
            for end in 0..bytes.len() {
                prop_assert!(Message::decode(&bytes[..end]).is_err());
            }
            bytes.push(0);
            prop_assert!(Message::decode(&bytes).is_err());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(m) = Message::decode(&bytes) {
                let mut again = Vec::new();
                m.encode(&mut again);
                prop_assert_eq!(Message::decode(&again), Ok(m));
            }
        }

        #[test]
        fn mutated_encodings_never_panic(m in message(), at in any::<usize>(), byte in any::<u8>()) {
            let mut bytes = Vec::new();
            m.encode(&mut bytes);
            let at = at % bytes.len();
            bytes[at] = byte;
            let _ = Message::decode(&bytes);
        }
    }

    #[test]
    fn oversized_set_length_is_refused_without_allocating() {
        // A commit whose failed set claims 2^32 - 1 elements.
        let bytes = [TAG_COMMIT, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(
            Message::decode(&bytes),
            Err(DecodeError::Malformed("rank set longer than the message"))
        );
        assert_eq!(
            Message::decode(&[TAG_PREPARE, 0xff, 0xff, 0xff, 0xff, 0x1f]),
            Err(DecodeError::Malformed("varint overflows 32 bits"))
        );
        assert_eq!(Message::decode(&[]), Err(DecodeError::Truncated));
        assert_eq!(Message::decode(&[9]), Err(DecodeError::UnknownTag(9)));
        // A promise whose accepted value names a third kind of ballot.
        assert_eq!(
            Message::decode(&[TAG_PROMISE, 0, 0, 0, 0, 0, 0, 0, 0, 3]),
            Err(DecodeError::Malformed("accepted ballot kind"))
        );
    }

    #[test]
    fn failure_free_messages_are_small() {
        let len = |message: Message| {
            let mut bytes = Vec::new();
            message.encode(&mut bytes);
            bytes.len()
        };
        let promise = Message::Promise {
            ballot: 0,
            summary: Summary {
                flag: u32::MAX,
                ..Summary::default()
            },
        };
        assert_eq!(len(promise), 10);
        // The first round's messages: 8 bytes and 2.
        let gather = Message::Gather {
            round: 3,
            aggregate: Contribution {
                flag: u32::MAX,
                ..Contribution::default()
            },
        };
        assert_eq!(len(gather), 8);
        assert_eq!(len(Message::Hold { round: 3 }), 2);
    }
}

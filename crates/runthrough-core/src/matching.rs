// SPDX-License-Identifier: MIT OR Apache-2.0
//! MPI receive matching, with the failure rules of semantics §3.1–3.2.
//!
//! A [`Matcher`] holds, for one communicator at one rank, the messages that arrived before any
//! receive wanted them (the *unexpected* queue) and the receives posted before their message
//! arrived (the *posted* queue), both in order. A message matches the first posted receive whose
//! source and tag selectors accept it; a receive matches the first unexpected message it accepts.
//! Since both queues keep arrival order and a transport delivers one sender's messages in order,
//! MPI's non-overtaking rule holds.
//!
//! What happens to a receive that nothing matches depends on its peer's state:
//! [`unmatched_outcome`] is that rule.
//!
//! ```
//! use runthrough_core::matching::{Envelope, Matcher, SourceSelector, TagSelector};
//! let mut m: Matcher<&str> = Matcher::default();
//! assert!(m.arrive(Envelope { source: 1, tag: 7 }, "early", 5).is_none()); // buffered
//! let (env, msg) = m.post(10, SourceSelector::Any, TagSelector::Any).unwrap();
//! assert_eq!((env.source, msg), (1, "early"));
//! assert!(m.post(11, SourceSelector::Rank(2), TagSelector::Value(3)).is_none()); // posted
//! assert_eq!(m.arrive(Envelope { source: 2, tag: 3 }, "late", 4).map(|(id, _, _)| id), Some(11));
//! ```

use std::collections::VecDeque;

use crate::Rank;

/// The sender and tag of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// The sender, in the communicator's numbering.
    pub source: Rank,
    /// The message's tag.
    pub tag: i32,
}

/// Which senders a receive accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceSelector {
    /// Any sender (`MPI_ANY_SOURCE`).
    Any,
    /// One sender.
    Rank(Rank),
}

/// Which tags a receive accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagSelector {
    /// Any tag (`MPI_ANY_TAG`).
    Any,
    /// One tag.
    Value(i32),
}

impl SourceSelector {
    fn accepts(self, source: Rank) -> bool {
        match self {
            SourceSelector::Any => true,
            SourceSelector::Rank(r) => r == source,
        }
    }
}

impl TagSelector {
    /// A selector of tag `t >= 0` also accepts `!t`, the tag a synchronous message of tag
    /// `t` travels with (see `Packet::SyncAck`); application tags are never negative.
    fn accepts(self, tag: i32) -> bool {
        match self {
            TagSelector::Any => true,
            TagSelector::Value(t) => t == tag || (t >= 0 && tag == !t),
        }
    }
}

/// Identifies a posted receive; chosen by the caller.
pub type ReceiveId = u64;

#[derive(Debug)]
struct Posted {
    id: ReceiveId,
    source: SourceSelector,
    tag: TagSelector,
}

#[derive(Debug)]
struct Unexpected<P> {
    envelope: Envelope,
    payload: P,
    bytes: usize,
}

/// The receive-matching state of one communicator at one rank.
///
/// # Invariants
/// No posted receive accepts any unexpected message (each arrival or post matches first).
/// `unexpected_bytes` is the sum of the byte counts of the unexpected messages.
#[derive(Debug)]
pub struct Matcher<P> {
    unexpected: VecDeque<Unexpected<P>>,
    posted: VecDeque<Posted>,
    unexpected_bytes: usize,
}

impl<P> Default for Matcher<P> {
    fn default() -> Self {
        Matcher {
            unexpected: VecDeque::new(),
            posted: VecDeque::new(),
            unexpected_bytes: 0,
        }
    }
}

impl<P> Matcher<P> {
    /// A message arrives. Returns the posted receive it completes, or buffers it as unexpected
    /// (counting `bytes` against [`Matcher::unexpected_bytes`]) and returns `None`.
    pub fn arrive(
        &mut self,
        envelope: Envelope,
        payload: P,
        bytes: usize,
    ) -> Option<(ReceiveId, Envelope, P)> {
        let at = self
            .posted
            .iter()
            .position(|p| p.source.accepts(envelope.source) && p.tag.accepts(envelope.tag));
        match at {
            Some(at) => {
                let posted = self.posted.remove(at).expect("position is in range");
                Some((posted.id, envelope, payload))
            }
            None => {
                self.unexpected_bytes += bytes;
                self.unexpected.push_back(Unexpected {
                    envelope,
                    payload,
                    bytes,
                });
                None
            }
        }
    }

    /// Takes the first unexpected message that the selectors accept, if any.
    #[inline]
    pub fn take(&mut self, source: SourceSelector, tag: TagSelector) -> Option<(Envelope, P)> {
        let at = self.find(source, tag)?;
        let message = self.unexpected.remove(at).expect("position is in range");
        self.unexpected_bytes -= message.bytes;
        Some((message.envelope, message.payload))
    }

    /// Posts receive `id`: returns the first unexpected message it accepts, or queues the
    /// receive and returns `None`.
    pub fn post(
        &mut self,
        id: ReceiveId,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Option<(Envelope, P)> {
        let taken = self.take(source, tag);
        if taken.is_none() {
            self.posted.push_back(Posted { id, source, tag });
        }
        taken
    }

    /// The first unexpected message the selectors accept, without taking it (probe).
    pub fn peek(&self, source: SourceSelector, tag: TagSelector) -> Option<(Envelope, &P)> {
        self.find(source, tag)
            .map(|at| (self.unexpected[at].envelope, &self.unexpected[at].payload))
    }

    #[inline]
    fn find(&self, source: SourceSelector, tag: TagSelector) -> Option<usize> {
        self.unexpected
            .iter()
            .position(|m| source.accepts(m.envelope.source) && tag.accepts(m.envelope.tag))
    }

    /// Removes posted receive `id`; returns whether it was posted.
    pub fn cancel(&mut self, id: ReceiveId) -> bool {
        match self.posted.iter().position(|p| p.id == id) {
            Some(at) => {
                self.posted.remove(at);
                true
            }
            None => false,
        }
    }

    /// Removes and returns the posted receives that name `source` explicitly (not wildcards),
    /// in posting order: what a failure of `source` completes.
    pub fn take_posted_from(&mut self, source: Rank) -> Vec<ReceiveId> {
        let mut taken = Vec::new();
        self.posted.retain(|p| {
            let hit = p.source == SourceSelector::Rank(source);
            if hit {
                taken.push(p.id);
            }
            !hit
        });
        taken
    }

    /// Whether a posted receive could take a message from `source` (names it, or any source).
    /// Nothing buffered matches such a receive (each arrival or post matches first).
    pub fn waits_for(&self, source: Rank) -> bool {
        self.posted
            .iter()
            .any(|p| p.source == SourceSelector::Any || p.source == SourceSelector::Rank(source))
    }

    /// The posted receives on `SourceSelector::Any`, in posting order.
    pub fn posted_wildcards(&self) -> impl Iterator<Item = ReceiveId> + '_ {
        self.posted
            .iter()
            .filter(|p| p.source == SourceSelector::Any)
            .map(|p| p.id)
    }

    /// Removes and returns every posted receive (for revoke or free).
    pub fn take_all_posted(&mut self) -> Vec<ReceiveId> {
        self.posted.drain(..).map(|p| p.id).collect()
    }

    /// Removes and returns every unexpected message, in arrival order (for revoke, free, or the
    /// end of an epoch: the caller accounts for what it drops).
    pub fn take_all_unexpected(&mut self) -> Vec<(Envelope, P)> {
        self.unexpected_bytes = 0;
        self.unexpected
            .drain(..)
            .map(|m| (m.envelope, m.payload))
            .collect()
    }

    /// Bytes held in unexpected messages.
    pub fn unexpected_bytes(&self) -> usize {
        self.unexpected_bytes
    }

    /// Number of unexpected messages.
    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }

    /// Number of posted receives.
    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }
}

/// What a peer's state makes of an operation with it when no buffered message matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerOutcome {
    /// The peer is not known to have failed: the operation waits (or proceeds).
    Proceed,
    /// The peer is known to have failed and is not recognized in G: `Error::ProcFailed`.
    Failed,
    /// The peer is recognized as failed (NULL in G): behave as `MPI_PROC_NULL`.
    ProcNull,
}

/// The rule of semantics §3.1 for a send to, or an unmatched receive from, one peer: NULL in G
/// gives `MPI_PROC_NULL` behaviour, FAILED or not yet validated (known to the detector) gives
/// `ProcFailed`, anything else proceeds.
pub fn unmatched_outcome(recognized_in_global: bool, known_failed: bool) -> PeerOutcome {
    if recognized_in_global {
        PeerOutcome::ProcNull
    } else if known_failed {
        PeerOutcome::Failed
    } else {
        PeerOutcome::Proceed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Arrive(Rank, i32),
        Post(Option<Rank>, Option<i32>),
    }

    fn arb_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..3, 0i32..3).prop_map(|(s, t)| Op::Arrive(s, t)),
            (proptest::option::of(0u32..3), proptest::option::of(0i32..3))
                .prop_map(|(s, t)| Op::Post(s, t)),
        ]
    }

    /// A synchronous message of tag t travels with tag !t: a receive of tag t and a wildcard
    /// one match it in order with the ordinary messages of the sender; a receive of another
    /// tag does not.
    #[test]
    fn a_tag_selector_accepts_the_synchronous_form_of_its_tag() {
        let mut m: Matcher<u8> = Matcher::default();
        m.arrive(Envelope { source: 1, tag: 5 }, 1, 1);
        m.arrive(Envelope { source: 1, tag: !5 }, 2, 1);
        m.arrive(Envelope { source: 1, tag: !6 }, 3, 1);
        assert!(m
            .take(SourceSelector::Rank(1), TagSelector::Value(4))
            .is_none());
        let take = |m: &mut Matcher<u8>, tag| m.take(SourceSelector::Any, tag).map(|(_, p)| p);
        assert_eq!(take(&mut m, TagSelector::Value(5)), Some(1));
        assert_eq!(take(&mut m, TagSelector::Value(5)), Some(2));
        assert_eq!(take(&mut m, TagSelector::Value(5)), None);
        assert_eq!(take(&mut m, TagSelector::Any), Some(3));
    }

    proptest! {
        /// Semantics §1 non-overtaking and §3.1 matching, against a reference that keeps every
        /// event in one list and matches by scanning it from the start.
        #[test]
        fn matcher_agrees_with_reference(ops in proptest::collection::vec(arb_op(), 0..60)) {
            let mut m: Matcher<usize> = Matcher::default();
            let mut ref_unexpected: Vec<(Rank, i32, usize)> = Vec::new();
            let mut ref_posted: Vec<(u64, Option<Rank>, Option<i32>)> = Vec::new();
            for (seq, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Arrive(s, t) => {
                        let got = m.arrive(Envelope { source: s, tag: t }, seq, 1).map(|(id, _, p)| (id, p));
                        let at = ref_posted.iter().position(|&(_, ps, pt)| ps.is_none_or(|x| x == s) && pt.is_none_or(|x| x == t));
                        let want = match at {
                            Some(at) => Some((ref_posted.remove(at).0, seq)),
                            None => { ref_unexpected.push((s, t, seq)); None }
                        };
                        prop_assert_eq!(got, want);
                    }
                    Op::Post(s, t) => {
                        let src = s.map_or(SourceSelector::Any, SourceSelector::Rank);
                        let tag = t.map_or(TagSelector::Any, TagSelector::Value);
                        let got = m.post(seq as u64, src, tag).map(|(e, p)| (e.source, e.tag, p));
                        let at = ref_unexpected.iter().position(|&(us, ut, _)| s.is_none_or(|x| x == us) && t.is_none_or(|x| x == ut));
                        let want = match at {
                            Some(at) => Some(ref_unexpected.remove(at)),
                            None => { ref_posted.push((seq as u64, s, t)); None }
                        };
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(m.unexpected_bytes(), ref_unexpected.len());
            }
        }
    }

    #[test]
    fn taking_every_unexpected_message_keeps_order_and_empties_the_count() {
        let mut m: Matcher<u8> = Matcher::default();
        m.arrive(Envelope { source: 2, tag: 0 }, 20, 5);
        m.arrive(Envelope { source: 1, tag: 3 }, 10, 7);
        m.post(9, SourceSelector::Rank(4), TagSelector::Any);
        let taken = m.take_all_unexpected();
        assert_eq!(
            taken,
            vec![
                (Envelope { source: 2, tag: 0 }, 20),
                (Envelope { source: 1, tag: 3 }, 10)
            ]
        );
        assert_eq!((m.unexpected_bytes(), m.unexpected_len()), (0, 0));
        assert_eq!(m.posted_len(), 1, "posted receives stay");
    }

    #[test]
    fn failure_of_a_source_takes_only_its_named_receives() {
        let mut m: Matcher<()> = Matcher::default();
        m.post(1, SourceSelector::Rank(4), TagSelector::Any);
        m.post(2, SourceSelector::Any, TagSelector::Any);
        m.post(3, SourceSelector::Rank(4), TagSelector::Value(9));
        m.post(4, SourceSelector::Rank(5), TagSelector::Any);
        assert_eq!(m.take_posted_from(4), vec![1, 3]);
        assert_eq!(m.posted_wildcards().collect::<Vec<_>>(), vec![2]);
        assert_eq!(m.posted_len(), 2);
    }

    #[test]
    fn peer_outcome_rule() {
        assert_eq!(unmatched_outcome(true, true), PeerOutcome::ProcNull);
        assert_eq!(unmatched_outcome(false, true), PeerOutcome::Failed);
        assert_eq!(unmatched_outcome(false, false), PeerOutcome::Proceed);
    }
}

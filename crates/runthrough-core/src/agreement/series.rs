// SPDX-License-Identifier: MIT OR Apache-2.0
//! The successive agreements of one communicator at one rank.

use std::collections::VecDeque;
use std::sync::Arc;

use super::instance::Agreement;
use super::message::Message;
use super::participants::Participants;
use super::value::{Contribution, Decision};
use crate::{Rank, RankSet};

/// All agreements of one communicator at one rank: successive calls numbered 0, 1, 2, ...
///
/// It routes messages by sequence number, buffers the messages of the next call that arrive
/// before this rank starts it (a peer is at most one call ahead of any live rank: it cannot
/// start call k+1 before call k is decided, which needs every live participant inside call k),
/// and keeps a decided call answering late peers until the following call has decided at this
/// rank. Then every live participant of the old call has left it (deciding call k+1 needs all
/// of them inside k+1), so the old call is dropped and its late messages ignored: at most two
/// instances are live, plus the early messages of one call.
///
/// # Invariants
/// - `calls` holds at most two instances, `next_seq - 2 ..= next_seq - 1`, and the older one
///   only while the newer one is undecided.
/// - `early` holds only messages of call `next_seq`.
/// - `failed` holds every failure reported, fed to each instance when it is created.
#[derive(Debug)]
pub struct AgreementSeries {
    me: Rank,
    next_seq: u64,
    /// The live instances, oldest first (at most two; a vector, not a map: no node allocation
    /// per call).
    calls: Vec<(u64, Box<Agreement>)>,
    early: Vec<(Rank, Message)>,
    failed: RankSet,
    outbox: VecDeque<(Rank, u64, Message)>,
    /// The last dropped instance, reset in place for the next call (no allocation per call).
    spare: Option<Box<Agreement>>,
}

impl AgreementSeries {
    /// The series of rank `me` (communicator rank), with no call yet.
    pub fn new(me: Rank) -> Self {
        AgreementSeries {
            me,
            next_seq: 0,
            calls: Vec::with_capacity(2),
            early: Vec::new(),
            failed: RankSet::new(),
            outbox: VecDeque::new(),
            spare: None,
        }
    }

    /// This rank enters the next call, over `participants` (the OK ranks of the G agreed by the
    /// previous call); returns the call's sequence number.
    pub fn start(&mut self, participants: Arc<Participants>, contribution: Contribution) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut agreement = match self.spare.take() {
            Some(mut spare) => {
                spare.reset(self.me, participants);
                spare
            }
            None => Box::new(Agreement::new(self.me, participants)),
        };
        for rank in &self.failed {
            agreement.handle_failure(rank);
        }
        agreement.start(contribution);
        for (from, message) in self.early.drain(..) {
            agreement.handle_message(from, message);
        }
        self.calls.push((seq, agreement));
        self.settle();
        seq
    }

    /// A message of call `seq` from `from`.
    pub fn handle_message(&mut self, from: Rank, seq: u64, message: Message) {
        if let Some(agreement) = self.get_mut(seq) {
            agreement.handle_message(from, message);
            self.settle();
        } else if seq == self.next_seq {
            self.early.push((from, message));
        }
        // Otherwise a dropped call (every live peer has left it), or a call two ahead, which
        // no live peer can be in: ignored.
    }

    /// The detector reports that `rank` failed; every call, present and future, learns it.
    pub fn handle_failure(&mut self, rank: Rank) {
        if !self.failed.insert(rank) {
            return;
        }
        for (_, agreement) in self.calls.iter_mut() {
            agreement.handle_failure(rank);
        }
        self.settle();
    }

    /// The next message to send, as `(destination, seq, message)`, in order.
    pub fn poll_transmit(&mut self) -> Option<(Rank, u64, Message)> {
        self.outbox.pop_front()
    }

    /// The decision of call `seq`, once this rank may return from it (and until the call is
    /// dropped, once the following call has decided here).
    pub fn decision(&self, seq: u64) -> Option<&Decision> {
        self.call(seq).and_then(Agreement::decision)
    }

    /// The instance of call `seq`, while it is live.
    pub fn call(&self, seq: u64) -> Option<&Agreement> {
        self.calls
            .iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, agreement)| &**agreement)
    }

    fn get_mut(&mut self, seq: u64) -> Option<&mut Agreement> {
        self.calls
            .iter_mut()
            .find(|(s, _)| *s == seq)
            .map(|(_, agreement)| &mut **agreement)
    }

    /// Number of live instances (at most two).
    pub fn live_calls(&self) -> usize {
        self.calls.len()
    }

    /// The sequence number the next [`start`](Self::start) returns.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Collects the instances' messages and drops calls whose successor has decided.
    fn settle(&mut self) {
        for (seq, agreement) in self.calls.iter_mut() {
            let seq = *seq;
            while let Some((to, message)) = agreement.poll_transmit() {
                self.outbox.push_back((to, seq, message));
            }
        }
        let newest_decided = self
            .calls
            .iter()
            .rev()
            .find(|(_, agreement)| agreement.decision().is_some())
            .map(|(seq, _)| *seq);
        if let Some(newest) = newest_decided {
            while self.calls.first().is_some_and(|(seq, _)| *seq < newest) {
                let (_, old) = self.calls.remove(0);
                self.spare = Some(old);
            }
        }
    }
}

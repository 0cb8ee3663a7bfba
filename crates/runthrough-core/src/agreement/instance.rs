// SPDX-License-Identifier: MIT OR Apache-2.0
//! One agreement: one call on one communicator, at one rank.

use std::collections::VecDeque;
use std::sync::Arc;

use super::message::Message;
use super::participants::Participants;
use super::tree::Tree;
use super::value::{Ballot, Contribution, Decision, Summary};
use crate::engine::{barrier_steps, BarrierStep};
use crate::{Rank, RankSet};

/// One agreement (one call of `validate_global`, `agree` or `shrink` on one communicator) as seen
/// by one rank: a pure state machine (see the [module docs](super) for the protocol and its
/// correctness argument).
///
/// Methods come in the usual four kinds: getters ([`decision`](Self::decision),
/// [`is_started`](Self::is_started), ...), events in ([`handle_message`](Self::handle_message),
/// [`handle_failure`](Self::handle_failure)), the command [`start`](Self::start), and work out
/// ([`poll_transmit`](Self::poll_transmit)). After any event or command, drain `poll_transmit`
/// and deliver the messages in that order, then look at `decision`.
///
/// # Invariants
/// - `ballot` never decreases; every participant index below `ballot` has failed.
/// - `accepted` only moves to higher ballots, and is never set at a ballot below one this rank
///   has promised (its `ballot` when it sent the promise); it is set at [`Ballot::Fast`] only
///   while this rank is in the first round, which it leaves for good before it promises.
/// - `decided`, once set, never changes.
/// - When this rank is the coordinator of its ballot (`my_index == ballot`), it proposes at most
///   one value in it.
#[derive(Debug)]
pub struct Agreement {
    me: Rank,
    my_index: Option<u32>,
    participants: Arc<Participants>,
    /// Participant indices known failed: the detector's reports and this rank's contribution.
    failed: RankSet,
    /// The lowest participant index not in `failed`.
    lowest_alive: u32,
    /// This rank's contribution, restricted to participants, once it has started.
    contribution: Option<Contribution>,
    ballot: u32,
    round: Round,
    /// The coordinator-free first round.
    fast: FastRound,
    /// The value this rank accepted last, with its ballot.
    accepted: Option<(Ballot, Decision)>,
    decided: Option<Decision>,
    /// Whether this rank decided in the first round (it then sends no commit while it knows no
    /// failure: every participant decides there too, or learns of a failure).
    decided_fast: bool,
    /// Participant indices this rank sent a commit to or received one from.
    commit_exchanged: RankSet,
    /// Participant indices whose first-round message this rank, outside the round, answered
    /// with a `Prepare` (once each).
    nudged: RankSet,
    outbox: VecDeque<(Rank, Message)>,
}

/// This rank's part in the coordinator-free first round: two passes over the steps of a
/// barrier among the participant indices ([`barrier_steps`]: in round `k` participant `i`
/// exchanges with `i XOR 2^k` when `n` is a power of two, else sends to `i + 2^k` and hears
/// from `i - 2^k`, modulo `n`; over hosts, up to each host's leader, among the leaders, and
/// back down), the first folding the contributions, the second telling that the value is held.
/// A message's `round` is its sender's count of the sends before it in the pass.
#[derive(Debug, Default)]
struct FastRound {
    /// Whether this rank has left the round (for good) or never took part.
    left: bool,
    /// This rank's steps in each pass (computed when the instance is reset).
    steps: Vec<BarrierStep>,
    /// The aggregate of the contributions covered so far, once started.
    aggregate: Option<Contribution>,
    /// Steps of the gather pass done, and the gathers sent among them.
    gather_at: usize,
    gather_sends: u32,
    /// Gathers received and not yet folded: (sender index, its aggregate).
    early: Vec<(u32, Contribution)>,
    /// Steps of the hold pass done, and the holds sent among them.
    hold_at: usize,
    hold_sends: u32,
    /// Senders (indices) whose hold arrived.
    holds: RankSet,
}

impl FastRound {
    /// A fresh round for participant `index` of `participants` (its steps computed again,
    /// keeping the allocations).
    fn reset(&mut self, participants: &Participants, index: Option<u32>) {
        self.left = false;
        self.steps.clear();
        if let (true, Some(index)) = (participants.fast_round(), index) {
            let steps = &mut self.steps;
            let planned = barrier_steps(
                participants.len(),
                index as usize,
                participants.hosts(),
                |step| {
                    steps.push(step);
                    Ok(())
                },
            );
            debug_assert!(planned.is_ok(), "pushing a step cannot fail");
        }
        self.aggregate = None;
        self.gather_at = 0;
        self.gather_sends = 0;
        self.early.clear();
        self.hold_at = 0;
        self.hold_sends = 0;
        self.holds.clear();
    }

    /// Whether this rank's step `Receive(from)` in a pass is among its first `done` steps.
    fn received(&self, from: u32, done: usize) -> bool {
        self.steps[..done.min(self.steps.len())].contains(&BarrierStep::Receive(from as usize))
    }
}

/// What this rank knows of its current ballot.
#[derive(Debug, Default)]
struct Round {
    /// Promises of this ballot received, sorted by sender index (a handful: the effective
    /// children). Emptied once the gather is complete.
    promises: Vec<(u32, Summary)>,
    /// Senders (indices) of `Accepted` for this ballot.
    acks: RankSet,
    /// This rank's complete gather for this ballot, once its effective children all promised.
    gathered: Option<Summary>,
    /// The value of this ballot, once this rank accepted it (or proposed it, as coordinator).
    value: Option<Decision>,
    /// The kind of down message last forwarded, and to which children (indices).
    down: Option<(Down, RankSet)>,
    /// The last up message sent: its kind and the parent (index) it went to.
    up: Option<(Up, u32)>,
}

impl Round {
    /// A fresh round, keeping the allocations of the promise list and the acknowledgements.
    fn reset(&mut self) {
        self.promises.clear();
        self.acks.clear();
        self.gathered = None;
        self.value = None;
        self.down = None;
        self.up = None;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Down {
    Prepare,
    Accept,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Up {
    Promise,
    Accepted,
}

/// Outcome of walking the effective children of a rank for one phase.
enum Walk {
    /// Some live child has not replied yet.
    Waiting,
    /// Every subtree is covered: by the replies of these indices, or skipped as failed
    /// (these indices, the non-contributors).
    Complete {
        covered: Vec<u32>,
        skipped: Vec<u32>,
    },
}

impl Agreement {
    /// A new instance for rank `me` among `participants`. It may receive messages and failure
    /// reports before [`start`](Self::start); it keeps them and acts on them once started.
    pub fn new(me: Rank, participants: Arc<Participants>) -> Self {
        let my_index = participants.index_of(me);
        let mut fast = FastRound::default();
        fast.reset(&participants, my_index);
        Agreement {
            me,
            my_index,
            participants,
            failed: RankSet::new(),
            lowest_alive: 0,
            contribution: None,
            ballot: 0,
            round: Round::default(),
            fast,
            accepted: None,
            decided: None,
            decided_fast: false,
            commit_exchanged: RankSet::new(),
            nudged: RankSet::new(),
            outbox: VecDeque::new(),
        }
    }

    /// Makes this instance a fresh [`Agreement::new`] of rank `me` over `participants`, in place,
    /// keeping its allocations (the series reuses one instance per call: no allocation and no
    /// copy of the instance per call).
    pub(crate) fn reset(&mut self, me: Rank, participants: Arc<Participants>) {
        self.me = me;
        self.my_index = participants.index_of(me);
        self.participants = participants;
        self.failed.clear();
        self.lowest_alive = 0;
        self.contribution = None;
        self.ballot = 0;
        self.round.reset();
        self.fast.reset(&self.participants, self.my_index);
        self.accepted = None;
        self.decided = None;
        self.decided_fast = false;
        self.commit_exchanged.clear();
        self.nudged.clear();
        self.outbox.clear();
    }

    // ----- getters -----

    /// The decision, once this rank has started and may return from the call.
    pub fn decision(&self) -> Option<&Decision> {
        self.contribution.as_ref().and(self.decided.as_ref())
    }

    /// Whether [`start`](Self::start) was called.
    pub fn is_started(&self) -> bool {
        self.contribution.is_some()
    }

    /// This rank.
    pub fn me(&self) -> Rank {
        self.me
    }

    /// The participants.
    pub fn participants(&self) -> &Arc<Participants> {
        &self.participants
    }

    /// The current ballot (the participant index of the coordinator this rank follows).
    pub fn ballot(&self) -> u32 {
        self.ballot
    }

    // ----- command -----

    /// This rank enters the call with `contribution`. Its `known_failed` also counts as failure
    /// reports. Calling it twice keeps the first contribution.
    pub fn start(&mut self, contribution: Contribution) {
        if self.contribution.is_some() || self.my_index.is_none() {
            return;
        }
        let participants = &self.participants;
        let keep = |r: Rank| participants.contains(r) && r != self.me;
        let contribution = Contribution {
            known_failed: contribution
                .known_failed
                .iter()
                .filter(|&r| keep(r))
                .collect(),
            acknowledged: contribution
                .acknowledged
                .iter()
                .filter(|&r| participants.contains(r))
                .collect(),
            flag: contribution.flag,
        };
        for rank in &contribution.known_failed {
            if let Some(index) = self.participants.index_of(rank) {
                self.record_failure(index);
            }
        }
        self.contribution = Some(contribution);
        self.progress();
    }

    // ----- events -----

    /// The detector reports that `rank` failed. Idempotent; non-participants (and this rank
    /// itself) are ignored.
    pub fn handle_failure(&mut self, rank: Rank) {
        let Some(index) = self.participants.index_of(rank) else {
            return;
        };
        if Some(index) != self.my_index && self.record_failure(index) {
            self.progress();
        }
    }

    /// A message of this call from `from`.
    pub fn handle_message(&mut self, from: Rank, message: Message) {
        let Some(from_index) = self.participants.index_of(from) else {
            return;
        };
        if self.my_index.is_none() || Some(from_index) == self.my_index {
            return;
        }
        if let Message::Commit { value } = message {
            self.commit_exchanged.insert(from_index);
            match &self.decided {
                None => self.decided = Some(value),
                Some(decided) => debug_assert_eq!(decided, &value, "two different decisions"),
            }
            self.progress();
            return;
        }
        if self.failed.contains(from_index) {
            return;
        }
        if let Some(value) = &self.decided {
            // A late peer: answer with the decision.
            if self.commit_exchanged.insert(from_index) {
                let value = value.clone();
                self.outbox.push_back((from, Message::Commit { value }));
            }
            return;
        }
        match message {
            Message::Gather { round, aggregate } => {
                self.handle_gather(from_index, round, aggregate);
                return;
            }
            Message::Hold { round } => {
                self.handle_hold(from_index, round);
                return;
            }
            // A coordinated ballot runs: somebody left the first round, which cannot end now
            // (it needs every participant) or could end only where this rank also learns of a
            // failure. Leave it too, at once rather than when the detector tells.
            _ => self.fast.left = true,
        }
        let ballot = message.ballot().unwrap_or(0);
        if ballot < self.ballot || Some(ballot) > self.my_index {
            // Below: an old ballot. Above this rank's own index: a ballot whose coordinator
            // knows this rank failed (a false suspicion it has not heard of yet); it spans only
            // the participants from its coordinator on, and this rank cannot take part.
            return;
        }
        if ballot > self.ballot {
            self.enter_ballot(ballot);
        }
        match message {
            Message::Prepare { .. } => {}
            Message::Promise { summary, .. } => {
                if self.round.gathered.is_none() {
                    let promises = &mut self.round.promises;
                    match promises.binary_search_by_key(&from_index, |(i, _)| *i) {
                        Ok(at) => promises[at].1 = summary,
                        Err(at) => promises.insert(at, (from_index, summary)),
                    }
                }
            }
            Message::Accept { value, .. } => {
                if self.round.value.is_none() {
                    self.accepted = Some((Ballot::Led(ballot), value.clone()));
                    self.round.value = Some(value);
                }
            }
            Message::Accepted { .. } => {
                self.round.acks.insert(from_index);
            }
            Message::Commit { .. } | Message::Gather { .. } | Message::Hold { .. } => {
                unreachable!("handled above")
            }
        }
        self.progress();
    }

    // ----- work out -----

    /// The next message to send, as `(destination, message)`, in order.
    pub fn poll_transmit(&mut self) -> Option<(Rank, Message)> {
        self.outbox.pop_front()
    }

    // ----- the protocol -----

    /// Adds a failed index; returns whether it was new.
    fn record_failure(&mut self, index: u32) -> bool {
        if !self.failed.insert(index) {
            return false;
        }
        while self.failed.contains(self.lowest_alive) {
            self.lowest_alive += 1;
        }
        true
    }

    fn enter_ballot(&mut self, ballot: u32) {
        debug_assert!(ballot > self.ballot);
        self.ballot = ballot;
        self.round = Round::default();
    }

    fn tree(&self) -> Tree {
        Tree::new(self.ballot, self.participants.len() as u32)
    }

    /// Does everything that the current state allows: propose, forward, reply, decide.
    fn progress(&mut self) {
        let Some(my_index) = self.my_index else {
            return;
        };
        if self.decided.is_none() && self.in_fast_round() {
            if self.is_started() {
                self.progress_fast();
            }
            if self.decided.is_none() {
                return;
            }
        }
        if self.lowest_alive > self.ballot {
            let ballot = self.lowest_alive;
            self.enter_ballot(ballot);
        }
        if self.decided.is_none() {
            let coordinator = my_index == self.ballot;
            if self.round.gathered.is_none() && self.round.value.is_none() && self.is_started() {
                self.round.gathered = self.gather();
                if self.round.gathered.is_some() {
                    self.round.promises = Vec::new();
                }
            }
            if coordinator && self.round.value.is_none() {
                if let Some(summary) = &self.round.gathered {
                    let value = summary.proposal();
                    self.accepted = Some((Ballot::Led(self.ballot), value.clone()));
                    self.round.value = Some(value);
                }
            }
            self.forward_down();
            if self.round.value.is_some() {
                if self.all_replied(|me, i| me.round.acks.contains(i)) {
                    if coordinator || self.coordinator_is_the_only_other() {
                        // Every participant not known failed has accepted the value: the
                        // coordinator, which proposed it, and this rank. So it is chosen, and
                        // this rank decides at once; its Commit tells the coordinator, in place
                        // of Accepted (3 messages instead of 4 when two ranks are left).
                        self.decided = self.round.value.clone();
                    } else {
                        self.send_up(Up::Accepted);
                    }
                }
            } else if self.round.gathered.is_some() && !coordinator {
                self.send_up(Up::Promise);
            }
        }
        if self.decided.is_some() && !(self.decided_fast && self.failed.is_empty()) {
            self.spread_commit();
        }
    }

    /// Whether this rank still takes part in the first round. It leaves for good when the
    /// participants do not run one, when it knows a participant failed (the round needs every
    /// participant), or when a coordinated ballot's message arrives.
    fn in_fast_round(&mut self) -> bool {
        if !self.fast.left
            && (!self.participants.fast_round()
                || !self.failed.is_empty()
                || self.fast.steps.is_empty())
        {
            self.fast.left = true;
            self.fast.early.clear();
        }
        !self.fast.left
    }

    /// The count of sends before participant `from`'s send to `to` in a pass of the first
    /// round (the `round` of that message), if `from` sends to `to` at all.
    fn fast_send_ordinal(&self, from: u32, to: u32) -> Option<u32> {
        let n = self.participants.len();
        if from as usize >= n {
            return None;
        }
        let (mut sends, mut found) = (0, None);
        let planned = barrier_steps(n, from as usize, self.participants.hosts(), |step| {
            if let BarrierStep::Send(at) = step {
                if at == to as usize && found.is_none() {
                    found = Some(sends);
                }
                sends += 1;
            }
            Ok(())
        });
        debug_assert!(planned.is_ok(), "counting cannot fail");
        found
    }

    /// A first-round message reached this rank outside the round (it left, having learned of
    /// a failure, or its participants skip the round): a `Prepare` of its ballot brings the
    /// sender out at once rather than when the sender's detector tells it. (Ranks of one
    /// agreement must all run the round or all skip it: one that skips it while a partner
    /// runs it may leave the partner waiting, with nothing to nudge, for messages it never
    /// sends.)
    fn nudge(&mut self, from_index: u32) -> bool {
        if !self.fast.left && self.participants.fast_round() {
            return false;
        }
        // A sender below this rank's ballot has failed (accuracy), though this rank may not know
        // it yet (the ballot came in a message): it takes no part in that ballot, so it is not
        // told of it.
        if from_index >= self.ballot && self.nudged.insert(from_index) {
            self.outbox.push_back((
                self.participants.rank_at(from_index),
                Message::Prepare {
                    ballot: self.ballot,
                },
            ));
        }
        true
    }

    fn handle_gather(&mut self, from_index: u32, round: u32, aggregate: Contribution) {
        let Some(my_index) = self.my_index else {
            return;
        };
        if self.nudge(from_index)
            || self.fast_send_ordinal(from_index, my_index) != Some(round)
            || self.fast.received(from_index, self.fast.gather_at)
        {
            return;
        }
        if !self.fast.early.iter().any(|(from, _)| *from == from_index) {
            self.fast.early.push((from_index, aggregate));
        }
        self.progress();
    }

    fn handle_hold(&mut self, from_index: u32, round: u32) {
        let Some(my_index) = self.my_index else {
            return;
        };
        if self.nudge(from_index) || self.fast_send_ordinal(from_index, my_index) != Some(round) {
            return;
        }
        self.fast.holds.insert(from_index);
        self.progress();
    }

    /// The first round at a started rank: fold the contributions over the gather pass's steps
    /// (after them every participant's contribution is in the aggregate: each rank has heard,
    /// transitively, from every other); accept the value they give (the same at every
    /// participant: see the module docs); then tell it over the hold pass, and decide once that
    /// pass is done (every participant, transitively, told that it holds the value).
    fn progress_fast(&mut self) {
        if self.fast.aggregate.is_none() {
            self.fast.aggregate = self.contribution.clone();
        }
        while let Some(&step) = self.fast.steps.get(self.fast.gather_at) {
            match step {
                BarrierStep::Send(to) => {
                    let round = self.fast.gather_sends;
                    self.fast.gather_sends += 1;
                    let aggregate = self.fast.aggregate.clone().expect("started");
                    self.outbox.push_back((
                        self.participants.rank_at(to as u32),
                        Message::Gather { round, aggregate },
                    ));
                }
                BarrierStep::Receive(from) => {
                    let Some(at) = self.fast.early.iter().position(|(f, _)| *f == from as u32)
                    else {
                        return;
                    };
                    let (_, theirs) = self.fast.early.swap_remove(at);
                    self.fast
                        .aggregate
                        .as_mut()
                        .expect("started")
                        .merge(&theirs);
                }
            }
            self.fast.gather_at += 1;
        }
        if self.accepted.is_none() {
            let value = self.fast.aggregate.as_ref().expect("started").fast_value();
            self.accepted = Some((Ballot::Fast, value));
        }
        while let Some(&step) = self.fast.steps.get(self.fast.hold_at) {
            match step {
                BarrierStep::Send(to) => {
                    let round = self.fast.hold_sends;
                    self.fast.hold_sends += 1;
                    self.outbox.push_back((
                        self.participants.rank_at(to as u32),
                        Message::Hold { round },
                    ));
                }
                BarrierStep::Receive(from) => {
                    if !self.fast.holds.contains(from as u32) {
                        return;
                    }
                }
            }
            self.fast.hold_at += 1;
        }
        // Every participant holds the value: it is chosen (no later ballot can propose another).
        let (_, value) = self.accepted.clone().expect("accepted above");
        self.decided = Some(value);
        self.decided_fast = true;
    }

    /// Whether the coordinator of the current ballot is the only participant other than this
    /// one that is not known failed.
    fn coordinator_is_the_only_other(&self) -> bool {
        let live = self.participants.len() - self.failed.len();
        live == 2 && Some(self.ballot) != self.my_index && !self.failed.contains(self.ballot)
    }

    /// This rank's gather for the current ballot, if complete.
    fn gather(&self) -> Option<Summary> {
        if !self.all_replied(|me, i| me.promise_of(i).is_some()) {
            return None;
        }
        let Walk::Complete { covered, skipped } = self.walk(|me, i| me.promise_of(i).is_some())
        else {
            return None;
        };
        let own = self.contribution.as_ref()?;
        let mut summary = Summary {
            known_failed: own.known_failed.clone(),
            non_contributors: skipped
                .iter()
                .map(|&i| self.participants.rank_at(i))
                .collect(),
            acknowledged: own.acknowledged.clone(),
            flag: own.flag,
            accepted: self.accepted.clone(),
        };
        for index in covered {
            summary.merge(self.promise_of(index).expect("covered"));
        }
        if self.my_index == Some(self.ballot) {
            // The coordinator knows every index below its own failed.
            let below: RankSet = (0..self.ballot)
                .map(|i| self.participants.rank_at(i))
                .collect();
            summary.non_contributors.union_with(&below);
        }
        Some(summary)
    }

    /// The promise received from `index` at this ballot.
    fn promise_of(&self, index: u32) -> Option<&Summary> {
        let promises = &self.round.promises;
        promises
            .binary_search_by_key(&index, |(i, _)| *i)
            .ok()
            .map(|at| &promises[at].1)
    }

    /// Whether every effective child has replied (or, failed, is covered by its own effective
    /// children): [`Agreement::walk`] without building the lists, allocation-free when no
    /// participant is known failed.
    fn all_replied(&self, replied: impl Fn(&Self, u32) -> bool) -> bool {
        if self.failed.is_empty() {
            let tree = self.tree();
            let me = tree.virtual_of(self.my_index.expect("participant"));
            tree.children(me)
                .all(|child| replied(self, tree.index_of(child)))
        } else {
            matches!(self.walk(replied), Walk::Complete { .. })
        }
    }

    /// Walks the static children of this rank in the current tree: a child that `replied`
    /// covers its subtree; a failed child without reply is skipped and its children walked; any
    /// other child is waited for.
    fn walk(&self, replied: impl Fn(&Self, u32) -> bool) -> Walk {
        let tree = self.tree();
        if self.failed.is_empty() {
            // Failure-free: the effective children are the tree's children; one allocation.
            let me = tree.virtual_of(self.my_index.expect("participant"));
            let mut covered = Vec::new();
            for child in tree.children(me) {
                let index = tree.index_of(child);
                if !replied(self, index) {
                    return Walk::Waiting;
                }
                covered.push(index);
            }
            return Walk::Complete {
                covered,
                skipped: Vec::new(),
            };
        }
        let me = tree.virtual_of(self.my_index.expect("participant"));
        let (mut covered, mut skipped) = (Vec::new(), Vec::new());
        let mut pending: Vec<u32> = tree.children(me).collect();
        while let Some(child) = pending.pop() {
            let index = tree.index_of(child);
            if replied(self, index) {
                covered.push(index);
            } else if self.failed.contains(index) {
                skipped.push(index);
                pending.extend(tree.children(child));
            } else {
                return Walk::Waiting;
            }
        }
        Walk::Complete { covered, skipped }
    }

    /// The live nodes reached from this rank's static children through failed ones.
    fn effective_children(&self) -> Vec<u32> {
        let tree = self.tree();
        let me = tree.virtual_of(self.my_index.expect("participant"));
        let mut children = Vec::new();
        let mut pending: Vec<u32> = tree.children(me).collect();
        pending.reverse(); // pop largest subtree first
        while let Some(child) = pending.pop() {
            let index = tree.index_of(child);
            if self.failed.contains(index) {
                let mut grandchildren: Vec<u32> = tree.children(child).collect();
                grandchildren.reverse();
                pending.extend(grandchildren);
            } else {
                children.push(index);
            }
        }
        children
    }

    /// The nearest ancestor not known failed (the root, the coordinator, is never known failed
    /// at its own ballot), or `None` at the root.
    fn effective_parent(&self) -> Option<u32> {
        let tree = self.tree();
        let mut v = tree.virtual_of(self.my_index.expect("participant"));
        while let Some(parent) = Tree::parent(v) {
            let index = tree.index_of(parent);
            if parent == 0 || !self.failed.contains(index) {
                return Some(index);
            }
            v = parent;
        }
        None
    }

    /// Sends the current down message (Accept, or Prepare above ballot 0) to the effective
    /// children that have not had it.
    fn forward_down(&mut self) {
        let kind = match (&self.round.value, self.ballot) {
            (Some(_), _) => Down::Accept,
            // Ballot 0 needs no Prepare, except to bring ranks out of the first round at once
            // when this rank has left it (they leave on any coordinated ballot's message).
            (None, 0) if !self.participants.fast_round() => return,
            (None, _) => Down::Prepare,
        };
        if self.round.down.as_ref().map(|(k, _)| *k) != Some(kind) {
            self.round.down = Some((kind, RankSet::new()));
        }
        let tree = self.tree();
        let me = tree.virtual_of(self.my_index.expect("participant"));
        // Failure-free, the effective children are the tree's own: no list is built.
        let failure_free = self.failed.is_empty();
        let repaired = if failure_free {
            Vec::new()
        } else {
            self.effective_children()
        };
        let direct = tree
            .children(me)
            .filter(move |_| failure_free)
            .map(|child| tree.index_of(child));
        for child in repaired.into_iter().chain(direct) {
            let (_, sent) = self.round.down.as_mut().expect("set above");
            if sent.insert(child) {
                let message = match kind {
                    Down::Prepare => Message::Prepare {
                        ballot: self.ballot,
                    },
                    Down::Accept => Message::Accept {
                        ballot: self.ballot,
                        value: self.round.value.clone().expect("accept phase"),
                    },
                };
                self.outbox
                    .push_back((self.participants.rank_at(child), message));
            }
        }
    }

    /// Sends the up message of `kind` to the effective parent unless it already has it.
    fn send_up(&mut self, kind: Up) {
        let Some(parent) = self.effective_parent() else {
            return;
        };
        if self.round.up == Some((kind, parent)) {
            return;
        }
        self.round.up = Some((kind, parent));
        let message = match kind {
            Up::Promise => Message::Promise {
                ballot: self.ballot,
                summary: self.round.gathered.clone().expect("gather complete"),
            },
            Up::Accepted => Message::Accepted {
                ballot: self.ballot,
            },
        };
        self.outbox
            .push_back((self.participants.rank_at(parent), message));
    }

    /// A decided rank sends the decision to its effective parent and children in its current
    /// tree, unless it already exchanged a commit with them.
    fn spread_commit(&mut self) {
        let value = self.decided.clone().expect("decided");
        let tree = self.tree();
        let me = tree.virtual_of(self.my_index.expect("participant"));
        let failure_free = self.failed.is_empty();
        let repaired = if failure_free {
            Vec::new()
        } else {
            self.effective_children()
        };
        let direct = tree
            .children(me)
            .filter(move |_| failure_free)
            .map(|child| tree.index_of(child));
        let parent = self.effective_parent();
        for index in repaired.into_iter().chain(direct).chain(parent) {
            if self.commit_exchanged.insert(index) {
                self.outbox.push_back((
                    self.participants.rank_at(index),
                    Message::Commit {
                        value: value.clone(),
                    },
                ));
            }
        }
    }
}

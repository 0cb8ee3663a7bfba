// SPDX-License-Identifier: MIT OR Apache-2.0
//! The failure detector of one rank as a sans-IO state machine: the fencing rule ([`Fence`])
//! plus everything about it that depends on time, with time an argument. A transport feeds it
//! what it sees (a peer heard from, a connection lost, a vote, a notice, a goodbye), calls
//! [`Detector::handle_timeout`] when [`Detector::poll_timeout`] says, and carries out the
//! [`Action`]s it asks for ([`Detector::take_actions`]) (close a connection, send a vote, tell the engine, halt). The
//! simulator of `runthrough-sim detector` runs the same machine under virtual time with
//! crashes, hung ranks, partitions and slow links.
//!
//! # What it decides
//! - **Silence.** A peer whose connection this rank reads is *watched*
//!   ([`Detector::watch`]); a watched peer not heard from ([`Detector::heard`]) for the
//!   heartbeat timeout is suspected. A transport that reports hearing at most every `lag` (it
//!   batches the reports) declares that lag, and the detector waits that much longer, so that
//!   no peer is suspected before it has really been silent for the whole timeout.
//! - **Suspicions, votes, decisions, departures**: [`Fence`]'s rule (its module documents it).
//!   Fencing a peer asks the transport to cut it off and to send this rank's vote to the peers
//!   it talks to ([`Action::Fence`]); the peers it has no connection with are handed back
//!   ([`Detector::defer_vote`]) and get the vote a heartbeat period later, only if the suspect is
//!   still not in the output then ([`Action::LateVote`]): a dead suspect is confirmed within
//!   that period, and only a live one (hung, cut off) needs the connections that build the
//!   majority against it.
//! - **Announcements.** A rank that enters the output by a majority of votes is announced to
//!   every peer ([`Action::Failed`] with `announce`), so that ranks that did not vote learn it.
//! - **No majority.** A rank that has reached no majority of the ranks it believes alive for
//!   the heartbeat timeout halts ([`Action::NoMajority`]); in finalize it leaves
//!   without the last agreement instead (the action says which).
//! - **Standing aside.** Once it halts (for a reason of its own or the transport's,
//!   [`Detector::stand_aside`]) or has finished ([`Detector::finish`]), what peers say of
//!   failures no longer concerns it: it suspects nobody and only closes connections.

use std::collections::VecDeque;
use std::time::Duration;

use crate::fence::{Change, Fence, Reason};
use crate::WorldRank;

/// A moment, as the time since a start the detector's user chose (a transport's start, or 0 in
/// a simulation).
pub type Time = Duration;

/// What the transport must carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A peer said this rank was fenced (`by`; `None`: the launcher, or this rank's own
    /// death confirmed): halt.
    HaltFenced {
        /// Who said so.
        by: Option<WorldRank>,
    },
    /// This rank fenced `peer`: close its connection, ignore it from now on, and send this
    /// rank's vote against it to every peer it is connected to; the others go back to
    /// [`Detector::defer_vote`].
    Fence {
        /// The suspect.
        peer: WorldRank,
    },
    /// Send this rank's vote against `suspect` to `to` (a heartbeat period after it fenced
    /// the suspect, which is still not in the output).
    LateVote {
        /// The suspect.
        suspect: WorldRank,
        /// The peers that had no connection then.
        to: Vec<WorldRank>,
    },
    /// `rank` entered the detector output: tell the engine.
    Failed {
        /// The rank.
        rank: WorldRank,
        /// Why.
        reason: Reason,
        /// Tell every peer too (it entered by a majority of votes).
        announce: bool,
    },
    /// After finalize, a peer is suspected or its end confirmed: close its connection, nothing
    /// more (a rank that finished suspects and fails nobody).
    Close {
        /// The peer.
        peer: WorldRank,
    },
    /// This rank reached no majority of the ranks it believes alive for the
    /// heartbeat timeout: halt, or, in finalize, leave without the last agreement.
    NoMajority {
        /// The ranks it reached, itself included.
        reached: u32,
        /// The ranks it believes alive.
        alive: u32,
        /// It was in finalize.
        finalizing: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Running,
    Finished,
    /// Halting, or halted: decides nothing more.
    Aside,
}

/// One rank's failure detector.
#[derive(Debug)]
pub struct Detector {
    fence: Fence,
    me: WorldRank,
    period: Duration,
    timeout: Duration,
    lag: Duration,
    /// Per peer: when it was last heard, while its connection is watched.
    watched: Vec<Option<Time>>,
    /// Since when this rank has had no majority.
    lost_since: Option<Time>,
    /// Votes waiting a period: (due, suspect, to).
    later: Vec<(Time, WorldRank, Vec<WorldRank>)>,
    mode: Mode,
    finalizing: bool,
    actions: VecDeque<Action>,
}

impl Detector {
    /// The detector of rank `me` of a job of `size` ranks that may grow to `universe` ranks
    /// (the ranks past `size` are absent until they join), with heartbeats every `period`, a
    /// peer silent for `timeout` suspected, and hearing reported at most `lag` late.
    pub fn new(
        me: WorldRank,
        size: u32,
        universe: u32,
        period: Duration,
        timeout: Duration,
        lag: Duration,
    ) -> Self {
        let fence = Fence::with_room(me, size, universe);
        Detector {
            fence,
            me,
            period,
            timeout,
            lag,
            watched: vec![None; universe.max(size) as usize],
            lost_since: None,
            later: Vec::new(),
            mode: Mode::Running,
            finalizing: false,
            actions: VecDeque::new(),
        }
    }

    /// The fencing state (read-only).
    pub fn fence(&self) -> &Fence {
        &self.fence
    }

    /// Whether it decides nothing more (halting, or finished).
    pub fn stands_aside(&self) -> bool {
        self.mode != Mode::Running
    }

    /// Every action to carry out now, in the order decided.
    pub fn take_actions(&mut self) -> Vec<Action> {
        self.actions.drain(..).collect()
    }

    /// Starts watching `peer`'s connection (heard now).
    pub fn watch(&mut self, peer: WorldRank, now: Time) {
        if peer != self.me && !self.fence.is_fenced(peer) && !self.fence.in_output(peer) {
            if let Some(slot) = self.watched.get_mut(peer.index()) {
                *slot = Some(now);
            }
        }
    }

    /// Stops watching `peer`'s connection (its reading ended).
    pub fn unwatch(&mut self, peer: WorldRank) {
        if let Some(slot) = self.watched.get_mut(peer.index()) {
            *slot = None;
        }
    }

    /// `peer` was last heard from at `at`.
    pub fn heard(&mut self, peer: WorldRank, at: Time) {
        if let Some(Some(last)) = self.watched.get_mut(peer.index()) {
            *last = (*last).max(at);
        }
    }

    /// This rank suspects `peer` (its connection failed or carried bad input; silence is the
    /// detector's own finding).
    pub fn suspect(&mut self, peer: WorldRank, now: Time) {
        match self.mode {
            Mode::Running => {
                let change = self.fence.suspect(peer);
                self.apply(change, now);
            }
            Mode::Finished if peer != self.me => self.actions.push_back(Action::Close { peer }),
            _ => {}
        }
    }

    /// `rank`'s process ended for certain (a launcher said so, or it was seen to end).
    pub fn confirm(&mut self, rank: WorldRank, now: Time) {
        match self.mode {
            Mode::Running => {
                let change = self.fence.confirm(rank);
                self.apply(change, now);
            }
            Mode::Finished if rank != self.me => {
                self.actions.push_back(Action::Close { peer: rank })
            }
            _ => {}
        }
    }

    /// Peer `voter` says it fenced `rank`.
    pub fn vote(&mut self, voter: WorldRank, rank: WorldRank, now: Time) {
        if self.mode == Mode::Running {
            let change = self.fence.vote(voter, rank);
            self.apply(change, now);
        }
    }

    /// Peer `by` says `rank` entered its output.
    pub fn decided_by_peer(&mut self, by: WorldRank, rank: WorldRank, now: Time) {
        if self.mode == Mode::Running {
            let change = self.fence.decided_by_peer(by, rank);
            self.apply(change, now);
        }
    }

    /// Peer `peer` finalized and said goodbye. Returns whether it departed (it was neither
    /// fenced here nor in the output).
    pub fn depart(&mut self, peer: WorldRank, now: Time) -> bool {
        let change = self.fence.depart(peer);
        let departed = self.fence.has_departed(peer);
        if departed {
            self.unwatch(peer);
        }
        self.apply(change, now);
        departed
    }

    /// Rank `rank` started (a spawned rank) and is known here.
    pub fn join(&mut self, rank: WorldRank, now: Time) {
        let change = self.fence.join(rank);
        self.apply(change, now);
    }

    /// The peers `to` had no connection when this rank fenced `suspect`: they get the vote a
    /// heartbeat period from `now`, if it is still needed then.
    pub fn defer_vote(&mut self, suspect: WorldRank, to: Vec<WorldRank>, now: Time) {
        if !to.is_empty() {
            self.later.push((now + self.period, suspect, to));
        }
    }

    /// This rank entered finalize: a lost majority makes it leave instead of halting.
    pub fn set_finalizing(&mut self) {
        self.finalizing = true;
    }

    /// This rank finished (after finalize's last agreement): it suspects nobody any more.
    pub fn finish(&mut self) {
        if self.mode == Mode::Running {
            self.mode = Mode::Finished;
        }
        self.later.clear();
    }

    /// The transport halts this rank for a reason of its own: decide nothing more.
    pub fn stand_aside(&mut self) {
        self.mode = Mode::Aside;
        self.later.clear();
    }

    /// When [`Detector::handle_timeout`] has something to do next, if ever.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.mode != Mode::Running {
            return None;
        }
        let silence = self
            .watched
            .iter()
            .flatten()
            .map(|&last| last + self.timeout + self.lag)
            .min();
        let majority = self.lost_since.map(|since| since + self.timeout);
        let votes = self.later.iter().map(|&(due, _, _)| due).min();
        [silence, majority, votes].into_iter().flatten().min()
    }

    /// Time passed to `now`: suspects the silent peers, sends the votes that are due, and
    /// halts a rank without a majority for the timeout.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.mode != Mode::Running {
            return;
        }
        let silent: Vec<WorldRank> = (0..self.watched.len() as u32)
            .map(WorldRank)
            .filter(|r| {
                self.watched[r.index()].is_some_and(|last| now >= last + self.timeout + self.lag)
            })
            .collect();
        for peer in silent {
            self.suspect(peer, now);
        }
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.later)
            .into_iter()
            .partition(|&(at, _, _)| now >= at);
        self.later = waiting;
        for (_, suspect, to) in due {
            if self.mode == Mode::Running && !self.fence.in_output(suspect) {
                self.actions.push_back(Action::LateVote { suspect, to });
            }
        }
        self.check_majority(now);
        if let Some(since) = self.lost_since {
            if self.mode == Mode::Running && now >= since + self.timeout {
                self.actions.push_back(Action::NoMajority {
                    reached: self.fence.reachable(),
                    alive: self.fence.alive(),
                    finalizing: self.finalizing,
                });
                self.mode = Mode::Aside;
                self.later.clear();
            }
        }
    }

    fn check_majority(&mut self, now: Time) {
        if self.fence.has_majority() {
            self.lost_since = None;
        } else {
            self.lost_since.get_or_insert(now);
        }
    }

    fn apply(&mut self, change: Change, now: Time) {
        if let Some(by) = change.fenced_here {
            self.actions.push_back(Action::HaltFenced { by });
            self.mode = Mode::Aside;
            self.later.clear();
        }
        if let Some(peer) = change.fenced {
            self.unwatch(peer);
            self.actions.push_back(Action::Fence { peer });
        }
        for (rank, reason) in change.entered {
            self.unwatch(rank);
            let announce = matches!(reason, Reason::Majority { .. });
            self.actions.push_back(Action::Failed {
                rank,
                reason,
                announce,
            });
        }
        self.check_majority(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_millis(100);
    const TIMEOUT: Duration = Duration::from_millis(1000);

    fn ms(n: u64) -> Time {
        Duration::from_millis(n)
    }

    fn w(r: u32) -> WorldRank {
        WorldRank(r)
    }

    fn detector(me: u32, size: u32) -> Detector {
        Detector::new(w(me), size, size, PERIOD, TIMEOUT, Duration::ZERO)
    }

    /// A watched peer is suspected once silent for the whole timeout, not a moment before;
    /// hearing it pushes the deadline; the lag a transport declares is waited on top.
    #[test]
    fn silence_for_the_timeout_is_a_suspicion() {
        let mut d = detector(0, 5);
        d.watch(w(1), ms(0));
        assert_eq!(d.poll_timeout(), Some(ms(1000)));
        d.handle_timeout(ms(999));
        assert!(d.take_actions().is_empty());
        d.heard(w(1), ms(500));
        d.handle_timeout(ms(1000));
        assert!(d.take_actions().is_empty(), "heard at 500");
        assert_eq!(d.poll_timeout(), Some(ms(1500)));
        d.handle_timeout(ms(1500));
        assert_eq!(d.take_actions(), vec![Action::Fence { peer: w(1) }]);
        assert_eq!(d.poll_timeout(), None, "nothing watched, a majority");

        let mut lagging = Detector::new(w(0), 3, 3, PERIOD, TIMEOUT, ms(25));
        lagging.watch(w(2), ms(0));
        lagging.handle_timeout(ms(1000));
        assert!(lagging.take_actions().is_empty(), "the lag is waited too");
        lagging.handle_timeout(ms(1025));
        assert_eq!(lagging.take_actions(), vec![Action::Fence { peer: w(2) }]);
    }

    /// A vote for a peer without a connection goes a period later, only if still needed.
    #[test]
    fn late_votes_go_a_period_later_unless_the_suspect_is_out() {
        let mut d = detector(0, 5);
        d.suspect(w(1), ms(0));
        assert_eq!(d.take_actions(), vec![Action::Fence { peer: w(1) }]);
        d.defer_vote(w(1), vec![w(3), w(4)], ms(0));
        assert_eq!(d.poll_timeout(), Some(ms(100)));
        d.handle_timeout(ms(99));
        assert!(d.take_actions().is_empty());
        d.handle_timeout(ms(100));
        assert_eq!(
            d.take_actions(),
            vec![Action::LateVote {
                suspect: w(1),
                to: vec![w(3), w(4)]
            }]
        );
        d.suspect(w(2), ms(200));
        d.take_actions();
        d.defer_vote(w(2), vec![w(3)], ms(200));
        d.confirm(w(2), ms(250));
        assert_eq!(
            d.take_actions(),
            vec![Action::Failed {
                rank: w(2),
                reason: Reason::Confirmed,
                announce: false
            }]
        );
        d.handle_timeout(ms(300));
        assert!(d.take_actions().is_empty(), "confirmed meanwhile: no vote");
    }

    /// A majority of votes puts the suspect in the output, announced to every peer; a
    /// confirmation is not announced.
    #[test]
    fn a_majority_decision_is_announced() {
        let mut d = detector(0, 5);
        d.suspect(w(4), ms(0));
        d.vote(w(1), w(4), ms(1));
        assert_eq!(d.take_actions(), vec![Action::Fence { peer: w(4) }]);
        d.vote(w(2), w(4), ms(2));
        assert_eq!(
            d.take_actions(),
            vec![Action::Failed {
                rank: w(4),
                reason: Reason::Majority {
                    voters: 3,
                    alive: 5
                },
                announce: true
            }]
        );
    }

    /// Without a majority for the timeout a rank halts, once; in finalize the
    /// action says so; a majority regained in time resets the clock.
    #[test]
    fn no_majority_for_the_timeout_halts() {
        for finalizing in [false, true] {
            let mut d = detector(0, 3);
            if finalizing {
                d.set_finalizing();
            }
            d.suspect(w(1), ms(0));
            d.suspect(w(2), ms(0));
            d.take_actions();
            assert_eq!(d.poll_timeout(), Some(ms(1000)));
            d.handle_timeout(ms(999));
            assert!(d.take_actions().is_empty(), "not the whole timeout yet");
            d.handle_timeout(ms(1000));
            assert_eq!(
                d.take_actions(),
                vec![Action::NoMajority {
                    reached: 1,
                    alive: 3,
                    finalizing
                }]
            );
            assert!(d.stands_aside());
            d.handle_timeout(ms(5000));
            d.vote(w(1), w(2), ms(5000));
            assert!(d.take_actions().is_empty(), "decides nothing more");
        }
        let mut d = detector(0, 3);
        d.suspect(w(1), ms(0));
        d.suspect(w(2), ms(0));
        d.take_actions();
        d.confirm(w(1), ms(500));
        d.confirm(w(2), ms(600));
        assert_eq!(d.take_actions().len(), 2);
        assert_eq!(d.poll_timeout(), None, "alone and alive: a majority again");
        d.handle_timeout(ms(5000));
        assert_eq!(d.take_actions(), vec![]);
    }

    /// A vote against this rank halts it; after finish a suspicion only closes a connection.
    #[test]
    fn fenced_here_halts_and_finished_closes() {
        let mut d = detector(0, 3);
        d.vote(w(1), w(0), ms(0));
        assert_eq!(
            d.take_actions(),
            vec![Action::HaltFenced { by: Some(w(1)) }]
        );
        assert!(d.stands_aside());
        let mut d = detector(0, 3);
        d.finish();
        d.suspect(w(2), ms(0));
        assert_eq!(d.take_actions(), vec![Action::Close { peer: w(2) }]);
        d.confirm(w(1), ms(1));
        assert_eq!(d.take_actions(), vec![Action::Close { peer: w(1) }]);
        assert!(!d.fence().is_fenced(w(2)) && !d.fence().in_output(w(1)));
    }

    /// A goodbye departs a peer (unwatched, out of `alive`); a fenced peer's goodbye does not.
    #[test]
    fn departures() {
        let mut d = detector(0, 3);
        d.watch(w(1), ms(0));
        assert!(d.depart(w(1), ms(10)));
        assert_eq!(d.fence().alive(), 2);
        d.handle_timeout(ms(10_000));
        assert!(d.take_actions().is_empty(), "not watched after it left");
        d.suspect(w(2), ms(10_000));
        d.take_actions();
        assert!(!d.depart(w(2), ms(10_001)));
    }
}

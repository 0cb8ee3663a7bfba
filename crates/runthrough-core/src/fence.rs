// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fencing rule of semantics §1 as one rank's state, with no sockets: who this rank has fenced,
//! who has told it of a suspicion, and which ranks are in its detector output.
//!
//! # The rule
//! - A rank is *fenced* here when this rank suspects it (silence, bad input, a lost
//!   connection), or when a peer tells it of a suspicion (a [`Fence::vote`]): the transport then
//!   drops the rank's connection and ignores it. Fencing is this rank's vote against the suspect,
//!   and the transport sends the vote to every peer it still talks to, once per suspect.
//! - A rank enters the *detector output* (the failures the engine is told of) when its failure
//!   is *confirmed* (a launcher saw its process end or killed it, [`Fence::confirm`]), when a peer
//!   says it entered that peer's output ([`Fence::decided_by_peer`]), or when it is fenced by a
//!   majority: `2 × voters > alive`, where
//!   - `alive` (the denominator) is the number of ranks *not* in this rank's output: this rank,
//!     every rank fenced but not yet in the output, **and the suspect itself**. Leaving fenced
//!     ranks or the suspect out would let both halves of a job split in two equal halves count a
//!     majority and go on apart;
//!   - `voters` is the number of distinct ranks whose vote against the suspect this rank holds
//!     (its own included) and that are still in `alive`: a voter that enters the output meanwhile
//!     stops counting (as it stops counting in `alive`); a rank never counts as a voter against
//!     itself; a vote from a rank this rank had fenced is not received (the transport ignores
//!     fenced ranks), though one that arrived before the fence still counts while the voter is
//!     believed alive.
//! - Entering the output shrinks `alive` (a confirmed failure too), so every change re-evaluates
//!   every pending suspect until nothing more enters: cascades, and several suspects entering
//!   together (each against the same `alive`).
//! - This rank *has a majority* when it reaches more than half of `alive`: itself and the ranks
//!   of `alive` it has not fenced. The transport halts a rank that has had no majority for
//!   longer than the heartbeat timeout. Confirmed failures leave `alive`, so a rank whose peers
//!   all died for certain keeps its majority, alone if need be.
//! - A vote or a decision naming this rank means it was fenced: the transport halts.
//! - A rank that *departs* ([`Fence::depart`]: it finalized and said goodbye on its
//!   authenticated connection before closing it) is no failure: it never enters the output,
//!   and it leaves `alive` (it can no longer vote, nor be reached), as a confirmed failure
//!   does. Its votes stop counting, votes against it are dropped, and nothing about it changes
//!   afterwards. This keeps the majority rule safe: a departed rank is on neither side of any
//!   later partition (it ended for good, after every live rank had entered finalize), so each
//!   side's `alive` still holds both sides, and two disjoint sides cannot both count more than
//!   half of it. A rank that only goes silent, or whose connection breaks without a goodbye,
//!   is still a suspect.
//!
//! - A job that can grow (spawned ranks, docs/src/semantics.md §8) has room for ranks not started
//!   yet ([`Fence::with_room`]): such a rank is *absent*, in neither `alive` nor the reachable
//!   ranks, and nothing it says counts. Once started and known to this rank it *joins*
//!   ([`Fence::join`]): from then on it counts toward `alive` and votes like any rank, so the
//!   majority after a spawn is over the live members, the new ranks included. A rank that dies
//!   before it joins enters the output when confirmed, without changing `alive`.
//!
//! Memory: four flags per rank, and one voter set per pending suspect (dropped when the suspect
//! enters the output).

use std::collections::BTreeMap;

use crate::{WorldRank, WorldSet};

/// Why a rank entered the detector output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A launcher saw its process end, or killed it.
    Confirmed,
    /// Fenced by `voters` of the `alive` ranks believed alive (a majority).
    Majority {
        /// The votes that counted.
        voters: u32,
        /// The ranks believed alive then.
        alive: u32,
    },
    /// Rank `by` said it entered its own output.
    Peer {
        /// The peer.
        by: WorldRank,
    },
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Confirmed => write!(f, "confirmed"),
            Reason::Majority { voters, alive } => write!(
                f,
                "fenced by a majority ({voters} of the {alive} ranks believed alive)"
            ),
            Reason::Peer { by } => write!(f, "rank {by} has it in its detector output"),
        }
    }
}

/// What one event changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// This rank fenced this rank just now: drop its connection and send the vote.
    pub fenced: Option<WorldRank>,
    /// These ranks entered the detector output, in this order.
    pub entered: Vec<(WorldRank, Reason)>,
    /// This rank learned that it was fenced, from this rank (`None`: from its launcher).
    pub fenced_here: Option<Option<WorldRank>>,
}

/// One rank's fencing state.
#[derive(Debug)]
pub struct Fence {
    me: WorldRank,
    /// Fenced by this rank (a superset of `output`).
    fenced: Vec<bool>,
    /// In the detector output.
    output: Vec<bool>,
    /// Finalized and gone (never in `output`; not counted in `alive`).
    departed: Vec<bool>,
    /// Room for a rank not started (or not known here) yet: not counted in `alive`.
    absent: Vec<bool>,
    /// Ranks neither in `output` nor departed.
    alive: u32,
    /// Votes held against each fenced rank not yet in the output.
    votes: BTreeMap<WorldRank, WorldSet>,
}

impl Fence {
    /// The state of rank `me` of a job of `size` ranks: nobody fenced, nobody in the output.
    pub fn new(me: WorldRank, size: u32) -> Self {
        Self::with_room(me, size, size)
    }

    /// The state of rank `me` of a job of `size` ranks that may grow to `universe` ranks: ranks
    /// `size..universe` are absent until they join ([`Fence::join`]).
    pub fn with_room(me: WorldRank, size: u32, universe: u32) -> Self {
        let universe = universe.max(size) as usize;
        Fence {
            me,
            fenced: vec![false; universe],
            output: vec![false; universe],
            departed: vec![false; universe],
            absent: (0..universe).map(|r| r >= size as usize).collect(),
            alive: size,
            votes: BTreeMap::new(),
        }
    }

    /// Rank `rank`, absent until now, started: it counts toward `alive` from now on. Nothing
    /// changes for a rank that is not absent (a member, or one already gone).
    pub fn join(&mut self, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if self.absent.get(rank.index()).copied().unwrap_or(false) && !self.output[rank.index()] {
            self.absent[rank.index()] = false;
            self.alive += 1;
            self.settle(&mut change);
        }
        change
    }

    /// Whether `rank` is room for a rank not joined yet.
    pub fn is_absent(&self, rank: WorldRank) -> bool {
        self.absent.get(rank.index()).copied().unwrap_or(false)
    }

    fn size(&self) -> u32 {
        self.output.len() as u32
    }

    fn valid(&self, rank: WorldRank) -> bool {
        rank.0 < self.size()
    }

    /// Whether this rank fenced `rank` (or has it in its output).
    pub fn is_fenced(&self, rank: WorldRank) -> bool {
        self.fenced.get(rank.index()).copied().unwrap_or(false)
    }

    /// Whether `rank` is in the detector output.
    pub fn in_output(&self, rank: WorldRank) -> bool {
        self.output.get(rank.index()).copied().unwrap_or(false)
    }

    /// Whether `rank` departed (finalized and said goodbye).
    pub fn has_departed(&self, rank: WorldRank) -> bool {
        self.departed.get(rank.index()).copied().unwrap_or(false)
    }

    /// The number of ranks believed alive (neither in the output nor departed), this one
    /// included.
    pub fn alive(&self) -> u32 {
        self.alive
    }

    /// The ranks of `alive` this rank still talks to: itself and the ones it has neither fenced
    /// nor seen depart.
    pub fn reachable(&self) -> u32 {
        self.fenced
            .iter()
            .zip(&self.departed)
            .zip(&self.absent)
            .filter(|&((&f, &d), &a)| !f && !d && !a)
            .count() as u32
    }

    /// Whether this rank reaches a majority of the ranks it believes alive.
    pub fn has_majority(&self) -> bool {
        2 * self.reachable() > self.alive
    }

    /// This rank suspects `rank` itself.
    pub fn suspect(&mut self, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if rank == self.me || !self.valid(rank) || self.gone(rank) {
            return change;
        }
        self.fence(rank, &mut change);
        self.settle(&mut change);
        change
    }

    /// Rank `voter` says it fenced `rank`. Unless it has already, this rank fences `rank` too
    /// (it learned of the suspicion): that is its own vote.
    pub fn vote(&mut self, voter: WorldRank, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if !self.valid(voter) || !self.valid(rank) || voter == self.me || voter == rank {
            return change;
        }
        if self.fenced[voter.index()] || self.departed[voter.index()] || self.absent[voter.index()]
        {
            return change; // a fenced, departed or absent rank is not listened to
        }
        if rank == self.me {
            change.fenced_here = Some(Some(voter));
            return change;
        }
        if self.gone(rank) {
            return change;
        }
        self.votes.entry(rank).or_default().insert(voter);
        self.fence(rank, &mut change);
        self.settle(&mut change);
        change
    }

    /// A launcher confirmed that `rank`'s process ended.
    pub fn confirm(&mut self, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if !self.valid(rank) {
            return change;
        }
        if rank == self.me {
            change.fenced_here = Some(None);
            return change;
        }
        if self.absent[rank.index()] && !self.output[rank.index()] {
            // Died before it joined here: into the output, `alive` never counted it.
            self.absent[rank.index()] = false;
            self.alive += 1;
        }
        if !self.gone(rank) {
            self.enter(rank, Reason::Confirmed, &mut change);
            self.settle(&mut change);
        }
        change
    }

    /// Rank `rank` departed: it finalized and said so on its connection, as the last frame
    /// before closing it. It leaves `alive` without entering the output (a rank that finalized
    /// is no failed rank); votes against it are dropped and its own stop counting. Ignored
    /// for a rank this rank fenced (it no longer listens to it) or has in its output.
    pub fn depart(&mut self, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if rank == self.me || !self.valid(rank) || self.gone(rank) || self.fenced[rank.index()] {
            return change;
        }
        self.departed[rank.index()] = true;
        self.alive -= 1;
        self.votes.remove(&rank);
        self.settle(&mut change);
        change
    }

    /// Rank `by` says `rank` entered its detector output.
    pub fn decided_by_peer(&mut self, by: WorldRank, rank: WorldRank) -> Change {
        let mut change = Change::default();
        if !self.valid(by)
            || !self.valid(rank)
            || by == self.me
            || self.fenced[by.index()]
            || self.departed[by.index()]
            || self.absent[by.index()]
        {
            return change;
        }
        if rank == self.me {
            change.fenced_here = Some(Some(by));
            return change;
        }
        if !self.gone(rank) {
            self.enter(rank, Reason::Peer { by }, &mut change);
            self.settle(&mut change);
        }
        change
    }

    /// In the output, departed or absent: nothing it says counts, and only a confirmation
    /// changes anything about it.
    fn gone(&self, rank: WorldRank) -> bool {
        self.output[rank.index()] || self.departed[rank.index()] || self.absent[rank.index()]
    }

    fn fence(&mut self, rank: WorldRank, change: &mut Change) {
        if !self.fenced[rank.index()] {
            self.fenced[rank.index()] = true;
            change.fenced = Some(rank);
        }
        self.votes.entry(rank).or_default().insert(self.me);
    }

    fn enter(&mut self, rank: WorldRank, reason: Reason, change: &mut Change) {
        self.fenced[rank.index()] = true;
        self.output[rank.index()] = true;
        self.alive -= 1;
        self.votes.remove(&rank);
        change.entered.push((rank, reason));
    }

    /// Voters against `rank` that still count.
    fn live_voters(&self, rank: WorldRank, voters: &WorldSet) -> u32 {
        voters
            .iter()
            .filter(|&v| v != rank && !self.gone(v))
            .count() as u32
    }

    /// Moves every suspect fenced by a majority into the output, until none is left.
    fn settle(&mut self, change: &mut Change) {
        loop {
            let alive = self.alive;
            let ready: Vec<(WorldRank, u32)> = self
                .votes
                .iter()
                .map(|(&rank, voters)| (rank, self.live_voters(rank, voters)))
                .filter(|&(_, voters)| 2 * voters > alive)
                .collect();
            if ready.is_empty() {
                return;
            }
            for (rank, voters) in ready {
                self.enter(rank, Reason::Majority { voters, alive }, change);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorldRank as W;

    /// Room for two spawned ranks: absent, they count nowhere and say nothing; once joined
    /// they count toward the majority; one that dies before joining enters the output when
    /// confirmed, without changing `alive`.
    #[test]
    fn absent_ranks_count_once_they_join() {
        let mut f = Fence::with_room(W(0), 3, 5);
        assert_eq!((f.alive(), f.reachable()), (3, 3));
        assert!(f.is_absent(W(3)) && f.has_majority());
        assert!(f.vote(W(3), W(1)).entered.is_empty(), "an absent voter");
        assert!(!f.is_fenced(W(1)));
        assert!(f.suspect(W(4)).fenced.is_none(), "an absent suspect");
        assert!(f.join(W(3)).entered.is_empty());
        assert_eq!((f.alive(), f.reachable()), (4, 4));
        assert!(!f.is_absent(W(3)));
        assert_eq!(f.join(W(3)), Change::default(), "joins once");
        // 2 of 4 is no majority; the joined rank's vote makes 3 of 4.
        f.suspect(W(1));
        assert!(f.vote(W(2), W(1)).entered.is_empty());
        assert_eq!(entered(&f.vote(W(3), W(1))), vec![1]);
        assert_eq!(f.alive(), 3);
        let c = f.confirm(W(4));
        assert_eq!(c.entered, vec![(W(4), Reason::Confirmed)]);
        assert_eq!(f.alive(), 3, "never counted");
        assert!(f.join(W(4)).entered.is_empty() && f.in_output(W(4)));
        assert_eq!(f.alive(), 3, "a dead rank does not join");
    }

    fn entered(change: &Change) -> Vec<u32> {
        change.entered.iter().map(|&(r, _)| r.0).collect()
    }

    /// 3 against 1: the three that lost rank 3 fence it by a majority (3 of 4).
    #[test]
    fn a_majority_of_votes_puts_the_suspect_in_the_output() {
        let mut f = Fence::new(W(0), 4);
        let c = f.suspect(W(3));
        assert_eq!(c.fenced, Some(W(3)));
        assert!(c.entered.is_empty(), "1 of 4 is no majority");
        assert!(f.is_fenced(W(3)) && !f.in_output(W(3)));
        assert!(
            f.vote(W(1), W(3)).entered.is_empty(),
            "2 of 4 is no majority"
        );
        let c = f.vote(W(2), W(3));
        assert_eq!(
            c.entered,
            vec![(
                W(3),
                Reason::Majority {
                    voters: 3,
                    alive: 4
                }
            )]
        );
        assert_eq!(c.fenced, None, "already fenced");
        assert!(f.in_output(W(3)));
        assert_eq!(f.alive(), 3);
        assert!(f.has_majority());
        // Late and repeated votes change nothing.
        assert_eq!(f.vote(W(1), W(3)), Change::default());
    }

    /// Hearsay fences: a rank that learns of a suspicion fences the suspect and votes.
    #[test]
    fn learning_of_a_suspicion_fences_and_votes() {
        let mut f = Fence::new(W(1), 3);
        let c = f.vote(W(0), W(2));
        assert_eq!(c.fenced, Some(W(2)));
        assert_eq!(entered(&c), vec![2], "rank 0 and this rank: 2 of 3");
    }

    /// The cut-off side of 3 against 1: its votes never reach a majority, and it loses its own.
    #[test]
    fn the_minority_side_decides_nothing_and_loses_its_majority() {
        let mut f = Fence::new(W(3), 4);
        for r in 0..3 {
            assert!(f.suspect(W(r)).entered.is_empty());
        }
        assert_eq!(f.alive(), 4);
        assert_eq!(f.reachable(), 1);
        assert!(!f.has_majority());
    }

    /// 2 against 2: neither half reaches a majority; the suspect counts in the denominator.
    #[test]
    fn equal_halves_neither_decide() {
        let mut f = Fence::new(W(0), 4);
        assert!(f.suspect(W(2)).entered.is_empty());
        assert!(f.suspect(W(3)).entered.is_empty());
        assert!(f.vote(W(1), W(2)).entered.is_empty(), "2 of 4");
        assert!(f.vote(W(1), W(3)).entered.is_empty(), "2 of 4");
        assert!(!f.in_output(W(2)) && !f.in_output(W(3)));
        assert_eq!(f.reachable(), 2);
        assert!(!f.has_majority());
    }

    /// A minority suspicion stays out of the output; it enters once more ranks agree.
    #[test]
    fn a_minority_suspicion_does_not_enter_the_output() {
        let mut f = Fence::new(W(0), 5);
        f.suspect(W(4));
        assert!(f.vote(W(1), W(4)).entered.is_empty(), "2 of 5");
        assert!(f.is_fenced(W(4)) && !f.in_output(W(4)));
        assert!(f.has_majority(), "4 of 5 still reached");
        assert_eq!(entered(&f.vote(W(2), W(4))), vec![4], "3 of 5");
    }

    /// A rank's vote against itself, a vote about this rank, and votes from fenced ranks.
    #[test]
    fn the_suspects_own_vote_and_fenced_voters_are_ignored() {
        let mut f = Fence::new(W(0), 4);
        // A rank does not vote against itself.
        assert_eq!(f.vote(W(3), W(3)), Change::default());
        assert!(!f.is_fenced(W(3)));
        // Once fenced, rank 3 is not listened to: its vote against 2 is not received.
        f.suspect(W(3));
        assert_eq!(f.vote(W(3), W(2)), Change::default());
        assert!(!f.is_fenced(W(2)));
        // A vote against this rank: it was fenced.
        assert_eq!(f.vote(W(1), W(0)).fenced_here, Some(Some(W(1))));
        assert_eq!(f.confirm(W(0)).fenced_here, Some(None));
        // Out of range: ignored.
        assert_eq!(f.vote(W(9), W(1)), Change::default());
        assert_eq!(f.vote(W(1), W(9)), Change::default());
    }

    /// Two ranks that accuse each other (a broken link between them): the accusation this rank
    /// hears first fences the accused, whose own accusation is then not listened to.
    #[test]
    fn of_two_mutual_accusations_the_first_heard_wins() {
        let mut f = Fence::new(W(1), 5);
        assert_eq!(f.vote(W(2), W(0)).fenced, Some(W(0))); // 2 of 5: pending
        assert_eq!(f.vote(W(0), W(2)), Change::default(), "0 is fenced here");
        assert!(!f.is_fenced(W(2)));
        assert_eq!(entered(&f.vote(W(3), W(0))), vec![0], "3 of 5");
        assert!(f.has_majority());
    }

    /// A voter that fails meanwhile stops counting (and so does its place in the denominator).
    #[test]
    fn a_voter_that_fails_meanwhile_stops_counting() {
        let mut f = Fence::new(W(0), 5);
        f.suspect(W(4));
        f.vote(W(1), W(4)); // 2 of 5
        assert_eq!(entered(&f.confirm(W(1))), vec![1], "rank 1 confirmed dead");
        assert_eq!(f.alive(), 4);
        assert!(!f.in_output(W(4)), "1 live voter of 4");
        assert!(
            f.vote(W(2), W(4)).entered.is_empty(),
            "2 of 4 is no majority"
        );
        assert_eq!(entered(&f.vote(W(3), W(4))), vec![4], "3 of 4");
    }

    /// Confirmed failures shrink the denominator: a pending suspect can enter without a new
    /// vote (a cascade), and a rank whose peers all died for certain keeps its majority, alone.
    #[test]
    fn confirmations_cascade_and_a_lone_survivor_keeps_its_majority() {
        let mut f = Fence::new(W(0), 4);
        f.suspect(W(3));
        f.vote(W(1), W(3)); // 2 of 4: pending
        assert!(!f.in_output(W(3)));
        let c = f.confirm(W(2));
        assert_eq!(
            c.entered,
            vec![
                (W(2), Reason::Confirmed),
                (
                    W(3),
                    Reason::Majority {
                        voters: 2,
                        alive: 3
                    }
                )
            ]
        );
        assert_eq!(f.alive(), 2);
        assert!(f.has_majority());
        // The last peer dies for certain: this rank is alone, and keeps going.
        assert_eq!(entered(&f.confirm(W(1))), vec![1]);
        assert_eq!((f.alive(), f.reachable()), (1, 1));
        assert!(f.has_majority());
        // A suspicion alone would not do: a lost peer still counts as alive.
        let mut g = Fence::new(W(0), 2);
        g.suspect(W(1));
        assert!(!g.in_output(W(1)) && !g.has_majority());
        assert_eq!(entered(&g.confirm(W(1))), vec![1]);
        assert!(g.has_majority());
    }

    /// Several suspects that enter together are each counted against the same denominator.
    #[test]
    fn suspects_pending_together_enter_together() {
        let mut f = Fence::new(W(0), 7);
        for suspect in [5, 6] {
            f.suspect(W(suspect));
            f.vote(W(1), W(suspect));
            f.vote(W(2), W(suspect)); // 3 of 7
        }
        f.confirm(W(3)); // 3 of 6: no majority
        assert!(!f.in_output(W(5)) && !f.in_output(W(6)));
        let c = f.confirm(W(4));
        let majority = Reason::Majority {
            voters: 3,
            alive: 5,
        };
        assert_eq!(
            c.entered,
            vec![
                (W(4), Reason::Confirmed),
                (W(5), majority),
                (W(6), majority)
            ]
        );
    }

    /// Several suspects cut off together enter together, each counted against the same
    /// denominator; decisions of peers are taken as they are.
    #[test]
    fn suspects_cut_off_together_and_peer_decisions() {
        let mut f = Fence::new(W(0), 5);
        f.suspect(W(3));
        f.suspect(W(4));
        f.vote(W(1), W(3));
        f.vote(W(1), W(4));
        let c = f.vote(W(2), W(4));
        assert_eq!(entered(&c), vec![4]);
        let c = f.vote(W(2), W(3));
        assert_eq!(entered(&c), vec![3]);
        let mut g = Fence::new(W(0), 3);
        assert_eq!(
            g.decided_by_peer(W(1), W(2)).entered,
            vec![(W(2), Reason::Peer { by: W(1) })]
        );
        assert_eq!(g.decided_by_peer(W(1), W(0)).fenced_here, Some(Some(W(1))));
        g.suspect(W(1));
        assert_eq!(
            g.decided_by_peer(W(1), W(2)),
            Change::default(),
            "a fenced rank"
        );
    }

    /// The multi-host finalize halt: where no launcher confirms exits, peers that finalized
    /// and exited looked like lost connections, so the last rank of a job of 4 counted 1 of 4
    /// and halted. Peers that say goodbye leave the denominator instead: the last rank keeps
    /// its majority (1 of 1), and nobody enters the output (docs/src/semantics.md §3.4: a rank that
    /// finalized is no failed rank).
    #[test]
    fn departed_ranks_leave_the_denominator_and_never_the_output() {
        let mut lost = Fence::new(W(3), 4);
        for r in 0..3 {
            lost.suspect(W(r));
        }
        assert!(!lost.has_majority(), "closed connections alone: 1 of 4");

        let mut f = Fence::new(W(3), 4);
        for r in 0..3 {
            assert_eq!(f.depart(W(r)), Change::default());
            assert!(f.has_departed(W(r)) && !f.in_output(W(r)) && !f.is_fenced(W(r)));
            assert!(f.has_majority(), "after {r} departed");
        }
        assert_eq!((f.alive(), f.reachable()), (1, 1));
        // Nothing about a departed rank changes afterwards: no vote, confirmation or repeat.
        assert_eq!(f.confirm(W(0)), Change::default());
        assert_eq!(f.suspect(W(1)), Change::default());
        assert_eq!(f.depart(W(2)), Change::default());
        assert!((0..3).all(|r| !f.in_output(W(r)) && !f.is_fenced(W(r))));
        assert_eq!(f.alive(), 1);
    }

    /// Departures shrink the denominator as confirmed failures do: a suspect among the ranks
    /// still there is fenced by a majority of them (2 of 3), and a pending one can enter
    /// without a new vote. A departed rank's votes stop counting, and a departed rank no longer
    /// speaks: its later votes and notices are not received.
    #[test]
    fn departures_shrink_the_denominator_and_silence_the_departed() {
        let mut f = Fence::new(W(0), 5);
        f.suspect(W(2));
        f.vote(W(1), W(2)); // 2 of 5: pending
        assert!(f.depart(W(3)).entered.is_empty(), "2 of 4");
        let c = f.depart(W(4));
        assert_eq!(
            c.entered,
            vec![(
                W(2),
                Reason::Majority {
                    voters: 2,
                    alive: 3
                }
            )]
        );
        assert!(!f.in_output(W(3)) && !f.in_output(W(4)));
        assert_eq!(
            f.vote(W(3), W(1)),
            Change::default(),
            "a departed rank's vote"
        );
        assert_eq!(
            f.decided_by_peer(W(4), W(1)),
            Change::default(),
            "its notice"
        );
        assert!(!f.is_fenced(W(1)));

        // A voter that departs stops counting: 1 live voter of 4 is no majority.
        let mut g = Fence::new(W(0), 5);
        g.suspect(W(4));
        g.vote(W(1), W(4));
        g.depart(W(1));
        assert!(!g.in_output(W(4)));
        assert!(g.vote(W(2), W(4)).entered.is_empty(), "0 and 2: 2 of 4");
        assert_eq!(entered(&g.vote(W(3), W(4))), vec![4], "0, 2 and 3: 3 of 4");
    }

    /// A goodbye never turns a suspicion around: a rank fenced here is not listened to, so
    /// its goodbye is ignored and it stays a suspect, counted in the denominator.
    #[test]
    fn a_fenced_rank_cannot_depart() {
        let mut f = Fence::new(W(0), 3);
        f.suspect(W(2));
        assert_eq!(f.depart(W(2)), Change::default());
        assert!(!f.has_departed(W(2)) && f.is_fenced(W(2)));
        assert_eq!(f.alive(), 3);
        assert!(f.has_majority(), "0 and 1 of 3");
    }

    /// docs/src/semantics.md §1 under departures: a split never lets both sides decide. Rank 4 of 5
    /// says goodbye but only ranks 0 and 1 hear it before the link between {0, 1} and {2, 3}
    /// breaks: {0, 1} count 2 of 4 and {2, 3} 2 of 5; neither has a majority, neither fences
    /// the other side into its output.
    #[test]
    fn a_departure_lets_no_side_of_a_split_decide() {
        let mut heard = [Fence::new(W(0), 5), Fence::new(W(1), 5)];
        for f in &mut heard {
            f.depart(W(4));
        }
        let mut not_heard = [Fence::new(W(2), 5), Fence::new(W(3), 5)];
        for (i, f) in heard.iter_mut().enumerate() {
            let me = i as u32;
            for other in [2, 3] {
                f.suspect(W(other));
            }
            let peer = 1 - me;
            for other in [2, 3] {
                assert!(f.vote(W(peer), W(other)).entered.is_empty(), "2 of 4");
            }
            assert!(!f.has_majority());
        }
        for (i, f) in not_heard.iter_mut().enumerate() {
            let me = 2 + i as u32;
            for other in [0, 1, 4] {
                f.suspect(W(other));
            }
            let peer = 5 - me;
            for other in [0, 1, 4] {
                assert!(f.vote(W(peer), W(other)).entered.is_empty(), "2 of 5");
            }
            assert!(!f.has_majority());
        }
    }
}

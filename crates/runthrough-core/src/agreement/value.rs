// SPDX-License-Identifier: MIT OR Apache-2.0
//! What ranks put into an agreement, what they gather up the tree, and what they agree on.

use crate::RankSet;

/// What one rank brings into an agreement when it enters the call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contribution {
    /// Failures known to this rank's detector when it entered (communicator ranks). They end up
    /// in the decision (semantics §2.1 validity). Ranks that are not participants are ignored.
    pub known_failed: RankSet,
    /// This rank's L at entry (communicator ranks): the failures it has acknowledged, for
    /// `agree`'s `ProcFailed` rule (semantics §3.5).
    pub acknowledged: RankSet,
    /// The flag word; the decision carries the bitwise AND over the contributors.
    pub flag: u32,
}

impl Contribution {
    /// Folds another contribution into this aggregate: union of the known failures,
    /// intersection of the acknowledged sets, AND of the flags. Commutative, associative and
    /// idempotent, so the aggregate of a set of contributions does not depend on the order or
    /// the overlaps in which they were folded (the first round's dissemination relies on it).
    pub(crate) fn merge(&mut self, other: &Contribution) {
        self.known_failed.union_with(&other.known_failed);
        self.acknowledged = self.acknowledged.intersection(&other.acknowledged);
        self.flag &= other.flag;
    }

    /// The value of the coordinator-free first round: what a coordinator would propose from a
    /// complete gather in which every participant contributed (this aggregate) and nobody had
    /// accepted anything.
    pub(crate) fn fast_value(&self) -> Decision {
        Summary {
            known_failed: self.known_failed.clone(),
            acknowledged: self.acknowledged.clone(),
            flag: self.flag,
            ..Summary::default()
        }
        .proposal()
    }
}

/// The ballot at which a value was accepted: the coordinator-free first round, below every
/// coordinated ballot, or the coordinated ballot led by the participant of that index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ballot {
    /// The first round, where every participant computes the value from every contribution
    /// (one value only: see the [module docs](super)).
    Fast,
    /// The coordinated ballot of this participant index.
    Led(u32),
}

impl std::fmt::Display for Ballot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ballot::Fast => write!(f, "fast"),
            Ballot::Led(ballot) => write!(f, "b{ballot}"),
        }
    }
}

/// The value agreed on by one agreement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The failed participants agreed on (communicator ranks): G' minus the old G.
    pub failed: RankSet,
    /// The participants whose contribution is not in the decision (all of them failed, so
    /// `non_contributors ⊆ failed`).
    pub non_contributors: RankSet,
    /// Bitwise AND of the flags of the contributors (the participants not in `non_contributors`).
    pub flag: u32,
    /// Whether some non-contributor is missing from some contributor's acknowledged set: `agree`
    /// then returns `ProcFailed` (semantics §3.5).
    pub unacknowledged_failure: bool,
}

/// The aggregate of one subtree's promises for one ballot, sent up the tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Union of the contributors' `known_failed` (participant ranks only).
    pub known_failed: RankSet,
    /// Participants of the subtree whose contribution is missing: they were known failed by the
    /// rank that aggregated them, with no reply from them.
    pub non_contributors: RankSet,
    /// Intersection of the contributors' `acknowledged` sets (participant ranks only).
    pub acknowledged: RankSet,
    /// Bitwise AND of the contributors' flags.
    pub flag: u32,
    /// The highest-ballot value accepted by a rank of the subtree before it promised, with
    /// its ballot.
    pub accepted: Option<(Ballot, Decision)>,
}

impl Summary {
    /// Folds the summary of a child's subtree into this one.
    pub(crate) fn merge(&mut self, other: &Summary) {
        self.known_failed.union_with(&other.known_failed);
        self.non_contributors.union_with(&other.non_contributors);
        self.acknowledged = self.acknowledged.intersection(&other.acknowledged);
        self.flag &= other.flag;
        let higher = match (&self.accepted, &other.accepted) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some((mine, _)), Some((theirs, _))) => theirs > mine,
        };
        if higher {
            self.accepted = other.accepted.clone();
        }
    }

    /// The value a coordinator proposes from a complete gather: the highest-ballot accepted value
    /// if any (Paxos), else a fresh one from the aggregate.
    pub(crate) fn proposal(&self) -> Decision {
        if let Some((_, value)) = &self.accepted {
            return value.clone();
        }
        let mut failed = self.known_failed.clone();
        failed.union_with(&self.non_contributors);
        Decision {
            failed,
            non_contributors: self.non_contributors.clone(),
            flag: self.flag,
            unacknowledged_failure: !self.non_contributors.is_subset(&self.acknowledged),
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The participants of one agreement: the ranks of a communicator minus its NULL ranks.

use std::sync::Arc;

use crate::engine::HostGroups;
use crate::{Rank, RankSet};

/// The participants of an agreement: ranks `0..size` of a communicator minus a sparse excluded
/// set (the NULL ranks of its G). The `i`-th participant rank has *index* `i`; the protocol's
/// trees and ballots are built over indices.
///
/// It is shared as an `Arc<Participants>` by every instance that uses it, and holds the
/// excluded set (memory proportional to the failures) and, where the participants' hosts are
/// known, the communicator's shared [`HostGroups`].
///
/// # Invariants
/// `excluded` holds only ranks below `size`; `len() == size - excluded.len()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participants {
    size: u32,
    excluded: RankSet,
    /// Whether agreements over these participants begin with the coordinator-free first round.
    fast_round: bool,
    /// How the participants (by index) sit on hosts: the first round's passes then keep their
    /// traffic within each host but for the hosts' leaders (`crate::engine::barrier_steps`).
    hosts: Option<Arc<HostGroups>>,
}

/// The most participants for which an agreement begins with the coordinator-free first round.
/// That round sends `2 ceil(log2 n)` messages per rank against about 4 for the coordinated
/// ballots: it saves latency (`2 ceil(log2 n)` one-way delays against about `4 log2 n`), and
/// costs throughput when ranks outnumber cores, which grows with `n`.
pub const FAST_ROUND_MAX: usize = 32;

impl Participants {
    /// The ranks `0..size` without `excluded` (ranks of `excluded` at or above `size` are ignored).
    /// Agreements over them begin with the first round when there are 2 to
    /// [`FAST_ROUND_MAX`] participants.
    pub fn new(size: u32, excluded: &RankSet) -> Self {
        let excluded: RankSet = excluded.iter().filter(|&r| r < size).collect();
        let len = size as usize - excluded.len();
        Participants {
            size,
            excluded,
            fast_round: (2..=FAST_ROUND_MAX).contains(&len),
            hosts: None,
        }
    }

    /// The same participants, on the hosts `hosts` says (groups of participant indices; ignored
    /// unless they group exactly these participants). Every rank of one agreement must give
    /// the same groups: ranks that grouped differently would run different first rounds
    /// (safely, since nobody decides there without every participant, but they may wait until
    /// a failure is learned).
    pub fn with_hosts(mut self, hosts: Option<Arc<HostGroups>>) -> Self {
        self.hosts = hosts.filter(|hosts| hosts.participants() == self.len());
        self
    }

    /// How the participants sit on hosts, if known ([`Participants::with_hosts`]).
    pub fn hosts(&self) -> Option<&HostGroups> {
        self.hosts.as_deref()
    }

    /// The same participants, whose agreements run the coordinated ballots only (no first
    /// round): where the engine's driver turned the round off
    /// (`Engine::set_agreement_first_round`), and in tests and simulations of those ballots.
    /// Every rank of one agreement must make the same choice.
    pub fn coordinated_only(mut self) -> Self {
        self.fast_round = false;
        self
    }

    /// Whether agreements over these participants begin with the coordinator-free first round.
    pub fn fast_round(&self) -> bool {
        self.fast_round
    }

    /// Number of participants.
    pub fn len(&self) -> usize {
        self.size as usize - self.excluded.len()
    }

    /// Whether there is no participant.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the communicator (participants and excluded ranks).
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The excluded ranks.
    pub fn excluded(&self) -> &RankSet {
        &self.excluded
    }

    /// The rank of the participant with index `index` (`index < len()`; beyond that the result
    /// is meaningless but the call does not panic).
    pub fn rank_at(&self, index: u32) -> Rank {
        // The k-th excluded rank e_k lies before participant `index` iff e_k - k <= index, and
        // e_k - k is non-decreasing in k: binary search for how many excluded ranks precede it.
        let excluded = self.excluded.as_slice();
        let (mut low, mut high) = (0usize, excluded.len());
        while low < high {
            let middle = (low + high) / 2;
            if excluded[middle] as u64 - middle as u64 <= index as u64 {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        index.saturating_add(low as u32)
    }

    /// The index of `rank`, or `None` when it is not a participant.
    pub fn index_of(&self, rank: Rank) -> Option<u32> {
        if rank >= self.size || self.excluded.contains(rank) {
            return None;
        }
        Some(rank - self.excluded.count_below(rank) as u32)
    }

    /// Whether `rank` is a participant.
    pub fn contains(&self, rank: Rank) -> bool {
        rank < self.size && !self.excluded.contains(rank)
    }

    /// The participant ranks in increasing order.
    pub fn ranks(&self) -> impl Iterator<Item = Rank> + '_ {
        (0..self.size).filter(|&r| !self.excluded.contains(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn index_and_rank_are_inverse(size in 0u32..200, excluded in proptest::collection::vec(0u32..220, 0..40)) {
            let p = Participants::new(size, &excluded.iter().copied().collect());
            let ranks: Vec<Rank> = (0..size).filter(|r| !excluded.contains(r)).collect();
            prop_assert_eq!(p.len(), ranks.len());
            for (i, &r) in ranks.iter().enumerate() {
                prop_assert_eq!(p.rank_at(i as u32), r);
                prop_assert_eq!(p.index_of(r), Some(i as u32));
                prop_assert!(p.contains(r));
            }
            for &e in &excluded {
                prop_assert_eq!(p.index_of(e), None);
                prop_assert!(!p.contains(e));
            }
            prop_assert_eq!(p.ranks().collect::<Vec<_>>(), ranks);
        }
    }
}

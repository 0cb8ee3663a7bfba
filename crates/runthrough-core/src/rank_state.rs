// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rank states, modifiers and the query-matching rule (semantics §2).

use crate::Rank;

bitflags::bitflags! {
    /// A rank's state in a failure view, or a query over states (semantics §2).
    ///
    /// A rank carries exactly one state bit (`OK`, `FAILED` or `NULL`) and, when it has failed,
    /// exactly one modifier bit (`NEW` or `OLD`). A *query* ORs any of them together; see
    /// [`RankState::matches`] for the rule.
    ///
    /// The values are the C interface's `MPI_RANK_STATE_*` constants: each a distinct nonzero bit.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub struct RankState: u32 {
        /// Active: not known to have failed in this view.
        const OK = 1;
        /// Failed and unrecognized: in L, not yet in G.
        const FAILED = 2;
        /// Failed and recognized: in G (and so in L).
        const NULL = 4;
        /// Entered this view at its most recent update call.
        const NEW = 8;
        /// Was in this view before its most recent update call.
        const OLD = 16;
    }
}

impl RankState {
    /// The state bits.
    pub const STATES: RankState = RankState::OK
        .union(RankState::FAILED)
        .union(RankState::NULL);
    /// The modifier bits.
    pub const MODIFIERS: RankState = RankState::NEW.union(RankState::OLD);

    /// Whether a rank whose state is `self` (one state bit, plus one modifier bit when failed)
    /// matches `query`.
    ///
    /// The rule (semantics §2): the rank's state bit must be in the query, where a query with no
    /// state bit means `FAILED | NULL`; and, for a failed rank, the query must have no modifier bit
    /// or contain the rank's modifier bit. OK ranks carry no modifier and match only queries that
    /// contain `OK`, whatever modifiers the query holds.
    pub fn matches(self, query: RankState) -> bool {
        let mut states = query & Self::STATES;
        if states.is_empty() {
            states = RankState::FAILED | RankState::NULL;
        }
        let my_state = self & Self::STATES;
        if !states.intersects(my_state) {
            return false;
        }
        if my_state == RankState::OK {
            return true;
        }
        let modifiers = query & Self::MODIFIERS;
        modifiers.is_empty() || modifiers.intersects(self & Self::MODIFIERS)
    }
}

/// One rank and its state in a view, as `MPI_Rank_info` in the C interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RankInfo {
    /// The rank, in the communicator's numbering.
    pub rank: Rank,
    /// Its state bit OR its modifier bit (no modifier for `OK`).
    pub state: RankState,
}

impl Default for RankInfo {
    fn default() -> Self {
        RankInfo {
            rank: 0,
            state: RankState::OK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_RANK_STATES: [RankState; 5] = [
        RankState::OK,
        RankState::FAILED.union(RankState::NEW),
        RankState::FAILED.union(RankState::OLD),
        RankState::NULL.union(RankState::NEW),
        RankState::NULL.union(RankState::OLD),
    ];

    /// Semantics §2: a straightforward restatement of the rule, checked over all 32 queries.
    fn reference(state: RankState, query: RankState) -> bool {
        let q = query.bits();
        let (st, modifier) = (state.bits() & 7, state.bits() & 24);
        let qs = if q & 7 == 0 { 2 | 4 } else { q & 7 };
        if qs & st == 0 {
            return false;
        }
        if st == 1 {
            return true;
        }
        q & 24 == 0 || q & modifier != 0
    }

    #[test]
    fn matching_rule_for_every_state_and_query() {
        for state in ALL_RANK_STATES {
            for q in 0..32u32 {
                let query = RankState::from_bits(q).unwrap();
                assert_eq!(
                    state.matches(query),
                    reference(state, query),
                    "{state:?} {query:?}"
                );
            }
        }
    }

    #[test]
    fn named_cases_from_the_spec() {
        let null_new = RankState::NULL | RankState::NEW;
        assert!(null_new.matches(RankState::NULL | RankState::NEW));
        assert!(!null_new.matches(RankState::NULL | RankState::OLD));
        assert!(null_new.matches(RankState::NULL));
        assert!(
            null_new.matches(RankState::NEW),
            "no state bit means FAILED|NULL"
        );
        assert!(null_new.matches(RankState::empty()));
        assert!(!null_new.matches(RankState::FAILED));
        assert!(!null_new.matches(RankState::OK));
        assert!(RankState::OK.matches(RankState::OK | RankState::NEW));
        assert!(!RankState::OK.matches(RankState::NEW));
        assert!(!RankState::OK.matches(RankState::empty()));
    }

    #[test]
    fn bits_are_distinct_and_nonzero() {
        let all = [
            RankState::OK,
            RankState::FAILED,
            RankState::NULL,
            RankState::NEW,
            RankState::OLD,
        ];
        for (i, a) in all.iter().enumerate() {
            assert_eq!(a.bits().count_ones(), 1);
            for b in &all[i + 1..] {
                assert!(!a.intersects(*b));
            }
        }
    }
}

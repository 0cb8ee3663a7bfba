// SPDX-License-Identifier: MIT OR Apache-2.0
//! Failure views: immutable snapshots of L and G (semantics §2).

use std::sync::Arc;

use crate::{Error, Rank, RankInfo, RankSet, RankState, Result};

/// One view of which ranks of a communicator have failed: the local view L or the global view G
/// as left by its most recent update call (semantics §2).
///
/// A view is a value. An update call (`validate_local`, `validate_global`) makes a new view and
/// never changes one that was handed out, so a thread holding a view keeps seeing the state it was
/// given, whatever other threads validate later; [`FailureView::new_since`] tells it what changed.
/// Cloning is cheap (the failed ranks are shared).
///
/// # Invariants
/// `failed` is sorted by rank, without duplicates, every rank `< size`; every entry has exactly one
/// of the state bits `FAILED` / `NULL` and exactly one of the modifiers `NEW` / `OLD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureView {
    size: u32,
    failed: Arc<[RankInfo]>,
}

impl FailureView {
    /// The view of a communicator of `size` ranks where no rank has failed.
    pub fn empty(size: u32) -> Self {
        FailureView {
            size,
            failed: Arc::from(Vec::new()),
        }
    }

    /// The view of a communicator of `size` ranks in which exactly the ranks of `failed` are
    /// recognized and were so before: every one `NULL | OLD` (ranks `>= size` are ignored). It is
    /// the G (and L) of a communicator made by `dup`, which keeps its parent's G (semantics §3.4).
    pub fn recognized(size: u32, failed: &RankSet) -> Self {
        let entries: Vec<RankInfo> = failed
            .iter()
            .filter(|&rank| rank < size)
            .map(|rank| RankInfo {
                rank,
                state: RankState::NULL | RankState::OLD,
            })
            .collect();
        FailureView {
            size,
            failed: Arc::from(entries),
        }
    }

    /// The view that an update call makes from `self`: exactly the ranks of `failed`, each with the
    /// given state bit (`FAILED` or `NULL`), `NEW` when it was not failed in `self` and `OLD`
    /// otherwise. Ranks `>= size` are ignored.
    pub fn advance<I>(&self, failed: I) -> FailureView
    where
        I: IntoIterator<Item = (Rank, RankState)>,
    {
        let mut entries: Vec<RankInfo> = failed
            .into_iter()
            .filter(|&(rank, _)| rank < self.size)
            .map(|(rank, state)| {
                let state = state & RankState::STATES;
                debug_assert!(state == RankState::FAILED || state == RankState::NULL);
                let modifier = if self.is_failed(rank) {
                    RankState::OLD
                } else {
                    RankState::NEW
                };
                RankInfo {
                    rank,
                    state: state | modifier,
                }
            })
            .collect();
        entries.sort_by_key(|info| info.rank);
        entries.dedup_by_key(|info| info.rank);
        FailureView {
            size: self.size,
            failed: Arc::from(entries),
        }
    }

    /// [`FailureView::advance`] with one state for every rank of `failed`.
    pub fn updated(&self, failed: &RankSet, state: RankState) -> FailureView {
        self.advance(failed.iter().map(|rank| (rank, state)))
    }

    /// The local view that `validate_local` makes from the old local view `self`, the global view
    /// `global` and the failures the detector knows now: L := G ∪ known, the ranks of G `NULL`,
    /// the others `FAILED` (semantics §2.1).
    pub fn validated_local(&self, global: &FailureView, known: &RankSet) -> FailureView {
        let recognized = global.failed_set();
        let unrecognized = known.difference(&recognized);
        self.advance(
            recognized
                .iter()
                .map(|r| (r, RankState::NULL))
                .chain(unrecognized.iter().map(|r| (r, RankState::FAILED))),
        )
    }

    /// Number of ranks of the communicator.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Number of failed ranks in this view, `FAILED` and `NULL` alike (|L| or |G|).
    pub fn num_failed(&self) -> usize {
        self.failed.len()
    }

    /// Whether any rank entered this view at its most recent update (is `NEW`).
    pub fn new_failures(&self) -> bool {
        self.failed
            .iter()
            .any(|info| info.state.contains(RankState::NEW))
    }

    /// Whether `rank` is failed (`FAILED` or `NULL`) in this view.
    pub fn is_failed(&self, rank: Rank) -> bool {
        self.failed
            .binary_search_by_key(&rank, |info| info.rank)
            .is_ok()
    }

    /// The state of `rank` (state bit | modifier bit), or `None` when `rank >= size`.
    pub fn state_of(&self, rank: Rank) -> Option<RankState> {
        if rank >= self.size {
            return None;
        }
        Some(
            match self.failed.binary_search_by_key(&rank, |info| info.rank) {
                Ok(at) => self.failed[at].state,
                Err(_) => RankState::OK,
            },
        )
    }

    /// The failed ranks (`FAILED` and `NULL`) as a set.
    pub fn failed_set(&self) -> RankSet {
        self.failed.iter().map(|info| info.rank).collect()
    }

    /// The failed ranks with their states, in rank order.
    pub fn failed(&self) -> &[RankInfo] {
        &self.failed
    }

    /// How many ranks match `query` (`MPI_Comm_get_num_state_{local,global}`); see
    /// [`RankState::matches`] for the rule.
    pub fn count(&self, query: RankState) -> usize {
        let failed = self
            .failed
            .iter()
            .filter(|info| info.state.matches(query))
            .count();
        if query.contains(RankState::OK) {
            failed + (self.size as usize - self.failed.len())
        } else {
            failed
        }
    }

    /// The ranks that match `query`, in increasing rank order.
    pub fn ranks(&self, query: RankState) -> impl Iterator<Item = RankInfo> + '_ {
        let with_ok = query.contains(RankState::OK);
        let mut next_failed = 0usize;
        let mut rank: Rank = 0;
        let size = self.size;
        let failed = &self.failed;
        let mut failed_only = failed.iter().filter(move |info| info.state.matches(query));
        std::iter::from_fn(move || {
            if !with_ok {
                return failed_only.next().copied();
            }
            while rank < size {
                let r = rank;
                rank += 1;
                if next_failed < failed.len() && failed[next_failed].rank == r {
                    let info = failed[next_failed];
                    next_failed += 1;
                    if info.state.matches(query) {
                        return Some(info);
                    }
                } else {
                    return Some(RankInfo {
                        rank: r,
                        state: RankState::OK,
                    });
                }
            }
            None
        })
    }

    /// Writes the ranks matching `query` into `out` in rank order
    /// (`MPI_Comm_get_state_{local,global}`), with `m` the number of matches:
    /// `out.len() == 0` writes nothing and returns `m`; `out.len() >= m` writes `m` entries and
    /// returns `m`.
    ///
    /// # Errors
    /// [`Error::Size`]` { needed: m }` when `0 < out.len() < m`, after writing the first
    /// `out.len()` matches. (The seed compares with |L| or |G|; we compare with `m`, see semantics
    /// §2.1.)
    pub fn get_state(&self, query: RankState, out: &mut [RankInfo]) -> Result<usize> {
        let matches = self.count(query);
        if out.is_empty() {
            return Ok(matches);
        }
        for (slot, info) in out.iter_mut().zip(self.ranks(query)) {
            *slot = info;
        }
        if out.len() < matches {
            Err(Error::Size { needed: matches })
        } else {
            Ok(matches)
        }
    }

    /// The ranks failed in `self` that were not failed in `older`, with their states in `self`:
    /// what a thread that last looked at `older` has not seen yet, whatever other threads
    /// validated in between.
    pub fn new_since(&self, older: &FailureView) -> Vec<RankInfo> {
        self.failed
            .iter()
            .filter(|info| !older.is_failed(info.rank))
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(ranks: &[Rank]) -> RankSet {
        ranks.iter().copied().collect()
    }

    #[test]
    fn validate_local_marks_entering_ranks_new_and_the_rest_old() {
        // SPEC §2.1 validate_local: L := G ∪ known; NEW for ranks entering L.
        let g = FailureView::empty(6);
        let l1 = FailureView::empty(6).validated_local(&g, &set(&[2]));
        assert_eq!(l1.state_of(2), Some(RankState::FAILED | RankState::NEW));
        let l2 = l1.validated_local(&g, &set(&[2, 4]));
        assert_eq!(l2.state_of(2), Some(RankState::FAILED | RankState::OLD));
        assert_eq!(l2.state_of(4), Some(RankState::FAILED | RankState::NEW));
        assert_eq!(l2.num_failed(), 2);
        assert!(l2.new_failures());
        let l3 = l2.validated_local(&g, &set(&[2, 4]));
        assert!(!l3.new_failures());
    }

    #[test]
    fn recognized_makes_every_failed_rank_null_and_old() {
        // SPEC §3.4: dup keeps its parent's G, its ranks NULL|OLD in both views.
        let v = FailureView::recognized(6, &set(&[1, 4, 9]));
        assert_eq!(v.num_failed(), 2, "ranks >= size are ignored");
        assert_eq!(v.state_of(1), Some(RankState::NULL | RankState::OLD));
        assert_eq!(v.state_of(4), Some(RankState::NULL | RankState::OLD));
        assert_eq!(v.state_of(0), Some(RankState::OK));
        assert!(!v.new_failures());
        assert_eq!(v.failed_set(), set(&[1, 4]));
        // The next update marks only ranks that enter the view as NEW.
        let next = v.updated(&set(&[1, 4, 5]), RankState::NULL);
        assert_eq!(
            next.new_since(&v)
                .iter()
                .map(|i| i.rank)
                .collect::<Vec<_>>(),
            vec![5]
        );
        assert_eq!(next.state_of(1), Some(RankState::NULL | RankState::OLD));
    }

    #[test]
    fn recognized_ranks_are_null_in_the_local_view() {
        let g = FailureView::empty(6).updated(&set(&[1]), RankState::NULL);
        let l = g.clone().validated_local(&g, &set(&[1, 3]));
        assert_eq!(l.state_of(1), Some(RankState::NULL | RankState::OLD));
        assert_eq!(l.state_of(3), Some(RankState::FAILED | RankState::NEW));
        assert_eq!(l.state_of(0), Some(RankState::OK));
        assert_eq!(l.state_of(6), None);
    }

    #[test]
    fn get_state_three_incount_cases() {
        // SPEC §2.1 accessors: incount 0, incount >= m, 0 < incount < m.
        let v = FailureView::empty(8).updated(&set(&[1, 5, 6]), RankState::NULL);
        let query = RankState::NULL | RankState::NEW;
        assert_eq!(v.get_state(query, &mut []), Ok(3));
        let mut big = [RankInfo::default(); 5];
        assert_eq!(v.get_state(query, &mut big), Ok(3));
        assert_eq!(
            big[..3].iter().map(|i| i.rank).collect::<Vec<_>>(),
            vec![1, 5, 6]
        );
        assert_eq!(big[3], RankInfo::default(), "entries past m untouched");
        let mut small = [RankInfo::default(); 2];
        assert_eq!(
            v.get_state(query, &mut small),
            Err(Error::Size { needed: 3 })
        );
        assert_eq!(small.map(|i| i.rank), [1, 5]);
        // An OK query can match more ranks than |G|.
        let mut ok = [RankInfo::default(); 4];
        assert_eq!(
            v.get_state(RankState::OK, &mut ok),
            Err(Error::Size { needed: 5 })
        );
        assert_eq!(ok.map(|i| i.rank), [0, 2, 3, 4]);
    }

    #[test]
    fn new_since_lists_what_an_older_snapshot_has_not_seen() {
        let g0 = FailureView::empty(8);
        let g1 = g0.updated(&set(&[2]), RankState::NULL);
        let g2 = g1.updated(&set(&[2, 3]), RankState::NULL);
        let g3 = g2.updated(&set(&[2, 3, 7]), RankState::NULL);
        let seen: Vec<Rank> = g3.new_since(&g1).iter().map(|i| i.rank).collect();
        assert_eq!(seen, vec![3, 7]);
        assert_eq!(
            g1.state_of(3),
            Some(RankState::OK),
            "old snapshot unchanged"
        );
    }

    fn arb_view() -> impl Strategy<Value = (FailureView, Vec<(Rank, RankState)>)> {
        (1u32..40).prop_flat_map(|size| {
            let states = proptest::sample::select(vec![
                RankState::FAILED | RankState::NEW,
                RankState::FAILED | RankState::OLD,
                RankState::NULL | RankState::NEW,
                RankState::NULL | RankState::OLD,
            ]);
            proptest::collection::btree_map(0..size, states, 0..size as usize).prop_map(move |m| {
                let entries: Vec<RankInfo> = m
                    .iter()
                    .map(|(&rank, &state)| RankInfo { rank, state })
                    .collect();
                let all: Vec<(Rank, RankState)> = (0..size)
                    .map(|r| (r, m.get(&r).copied().unwrap_or(RankState::OK)))
                    .collect();
                (
                    FailureView {
                        size,
                        failed: Arc::from(entries),
                    },
                    all,
                )
            })
        })
    }

    proptest! {
        /// Semantics §2: count, ranks and get_state against a per-rank reference model.
        #[test]
        fn accessors_agree_with_reference((view, all) in arb_view(), q in 0u32..32, incount in 0usize..45) {
            let query = RankState::from_bits(q).unwrap();
            let expected: Vec<RankInfo> = all.iter()
                .filter(|(_, s)| s.matches(query))
                .map(|&(rank, state)| RankInfo { rank, state })
                .collect();
            prop_assert_eq!(view.count(query), expected.len());
            prop_assert_eq!(view.ranks(query).collect::<Vec<_>>(), expected.clone());
            let mut out = vec![RankInfo { rank: 999, state: RankState::OK }; incount];
            let result = view.get_state(query, &mut out);
            let m = expected.len();
            if incount == 0 {
                prop_assert_eq!(result, Ok(m));
            } else if incount >= m {
                prop_assert_eq!(result, Ok(m));
                prop_assert_eq!(&out[..m], &expected[..]);
                prop_assert!(out[m..].iter().all(|i| i.rank == 999));
            } else {
                prop_assert_eq!(result, Err(Error::Size { needed: m }));
                prop_assert_eq!(&out[..], &expected[..incount]);
            }
            for &(rank, state) in &all {
                prop_assert_eq!(view.state_of(rank), Some(state));
            }
            let failed = all.iter().filter(|(_, s)| *s != RankState::OK).count();
            prop_assert_eq!(view.num_failed(), failed);
            prop_assert_eq!(view.new_failures(), all.iter().any(|(_, s)| s.contains(RankState::NEW)));
        }
    }
}

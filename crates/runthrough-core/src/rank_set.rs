// SPDX-License-Identifier: MIT OR Apache-2.0
//! A sparse, sorted set of ranks: of communicator ranks ([`RankSet`]) or of world ranks
//! ([`WorldSet`]), two types so that one cannot be passed where the other is meant.

use crate::{Rank, WorldRank};

/// A set of communicator ranks ([`Rank`]).
pub type RankSet = Set<Rank>;

/// A set of world ranks ([`WorldRank`]): the ranks of the job, whatever communicator.
pub type WorldSet = Set<WorldRank>;

/// A set of ranks (`R`: [`Rank`] or [`WorldRank`]) kept as a sorted vector without duplicates.
///
/// Failed sets are small next to the job (a few failures among up to a million ranks), so every
/// failed set in runthrough is one of these: memory proportional to what is known, never to n.
///
/// # Invariants
/// The ranks are strictly increasing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Set<R> {
    ranks: Vec<R>,
}

impl<R> Set<R> {
    /// The empty set.
    pub const fn new() -> Self {
        Set { ranks: Vec::new() }
    }

    /// Number of ranks in the set.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Empties the set, keeping its allocation.
    pub fn clear(&mut self) {
        self.ranks.clear();
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The ranks as a sorted slice.
    pub fn as_slice(&self) -> &[R] {
        &self.ranks
    }
}

impl<R: Copy + Ord> Set<R> {
    /// Whether `rank` is in the set.
    pub fn contains(&self, rank: R) -> bool {
        self.ranks.binary_search(&rank).is_ok()
    }

    /// Adds `rank`; returns whether it was new.
    pub fn insert(&mut self, rank: R) -> bool {
        match self.ranks.binary_search(&rank) {
            Ok(_) => false,
            Err(at) => {
                self.ranks.insert(at, rank);
                true
            }
        }
    }

    /// Removes `rank`; returns whether it was there.
    pub fn remove(&mut self, rank: R) -> bool {
        match self.ranks.binary_search(&rank) {
            Ok(at) => {
                self.ranks.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// The ranks in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = R> + ExactSizeIterator + '_ {
        self.ranks.iter().copied()
    }

    /// Adds every rank of `other`; returns whether anything was added.
    pub fn union_with(&mut self, other: &Set<R>) -> bool {
        if other.is_subset(self) {
            return false;
        }
        self.ranks = merge(&self.ranks, &other.ranks, |a, b| a || b);
        true
    }

    /// The ranks in both sets.
    pub fn intersection(&self, other: &Set<R>) -> Set<R> {
        Set {
            ranks: merge(&self.ranks, &other.ranks, |a, b| a && b),
        }
    }

    /// The ranks of `self` that are not in `other`.
    pub fn difference(&self, other: &Set<R>) -> Set<R> {
        Set {
            ranks: merge(&self.ranks, &other.ranks, |a, b| a && !b),
        }
    }

    /// Whether every rank of `self` is in `other`.
    pub fn is_subset(&self, other: &Set<R>) -> bool {
        if self.len() > other.len() {
            return false;
        }
        let mut theirs = other.ranks.iter().peekable();
        for &r in &self.ranks {
            loop {
                match theirs.peek() {
                    Some(&&t) if t < r => {
                        theirs.next();
                    }
                    Some(&&t) if t == r => break,
                    _ => return false,
                }
            }
        }
        true
    }

    /// Number of ranks in the set that are smaller than `rank`.
    pub fn count_below(&self, rank: R) -> usize {
        self.ranks.partition_point(|&r| r < rank)
    }
}

/// Merges two sorted lists, keeping each value for which `keep(in_a, in_b)` holds.
fn merge<R: Copy + Ord>(a: &[R], b: &[R], keep: impl Fn(bool, bool) -> bool) -> Vec<R> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (value, in_a, in_b) = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => (x, true, true),
            (Some(&x), Some(&y)) if x < y => (x, true, false),
            (Some(&x), None) => (x, true, false),
            (_, Some(&y)) => (y, false, true),
            (None, None) => unreachable!(),
        };
        if in_a {
            i += 1;
        }
        if in_b {
            j += 1;
        }
        if keep(in_a, in_b) {
            out.push(value);
        }
    }
    out
}

impl<R: Copy + Ord> FromIterator<R> for Set<R> {
    fn from_iter<I: IntoIterator<Item = R>>(iter: I) -> Self {
        let mut ranks: Vec<R> = iter.into_iter().collect();
        ranks.sort_unstable();
        ranks.dedup();
        Set { ranks }
    }
}

impl<R: Copy + Ord> Extend<R> for Set<R> {
    fn extend<I: IntoIterator<Item = R>>(&mut self, iter: I) {
        let added: Set<R> = iter.into_iter().collect();
        self.union_with(&added);
    }
}

impl<'a, R: Copy> IntoIterator for &'a Set<R> {
    type Item = R;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, R>>;
    fn into_iter(self) -> Self::IntoIter {
        self.ranks.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        #[test]
        fn set_operations_agree_with_btreeset(a in proptest::collection::vec(0u32..64, 0..20),
                                              b in proptest::collection::vec(0u32..64, 0..20)) {
            let (sa, sb): (RankSet, RankSet) = (a.iter().copied().collect(), b.iter().copied().collect());
            let (ra, rb): (BTreeSet<u32>, BTreeSet<u32>) = (a.iter().copied().collect(), b.iter().copied().collect());
            prop_assert_eq!(sa.iter().collect::<Vec<_>>(), ra.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.intersection(&sb).iter().collect::<BTreeSet<_>>(), &ra & &rb);
            prop_assert_eq!(sa.difference(&sb).iter().collect::<BTreeSet<_>>(), &ra - &rb);
            prop_assert_eq!(sa.is_subset(&sb), ra.is_subset(&rb));
            let mut u = sa.clone();
            let grew = u.union_with(&sb);
            prop_assert_eq!(u.iter().collect::<BTreeSet<_>>(), &ra | &rb);
            prop_assert_eq!(grew, !rb.is_subset(&ra));
            for r in 0..64 {
                prop_assert_eq!(sa.contains(r), ra.contains(&r));
                prop_assert_eq!(sa.count_below(r), ra.range(..r).count());
            }
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Process groups (`MPI_Group`, MPI-4.0 §7.3): ordered lists of processes, the input of
//! [`Comm::create`](crate::Comm::create).
//!
//! A [`Group`] is an ordered list of distinct processes, named by their world ranks; a process's
//! *rank in the group* is its position in the list. Groups are values: every operation makes a new
//! one. They are local: no call here communicates.
//!
//! ```
//! use runthrough::{Group, GroupComparison};
//! let outcomes = runthrough::local(6).run(|world| {
//!     let all = world.group();
//!     let evens = all.incl(&[0, 2, 4])?;
//!     let low = all.incl(&[0, 1, 2])?;
//!     assert_eq!(evens.union(&low).world_ranks(), &[0, 2, 4, 1]);
//!     assert_eq!(evens.intersection(&low).world_ranks(), &[0, 2]);
//!     assert_eq!(evens.difference(&low).world_ranks(), &[4]);
//!     assert_eq!(evens.translate_ranks(&[1, 2], &low), vec![Some(2), None]);
//!     assert_eq!(all.excl(&[1, 3, 5])?.compare(&evens), GroupComparison::Identical);
//!     Ok::<_, runthrough::Error>(evens.rank())
//! });
//! let ranks: Vec<Option<u32>> = outcomes.into_iter().map(|o| o.returned().unwrap().unwrap()).collect();
//! assert_eq!(ranks, vec![Some(0), None, Some(1), None, Some(2), None]);
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use runthrough_core::{Error, Rank, Result};

/// An ordered list of distinct processes (`MPI_Group`), as seen by one process.
///
/// # Invariants
/// `members` holds distinct world ranks; `me` is the world rank of the process that holds the
/// group (which need not be a member).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    members: Arc<[u32]>,
    me: u32,
}

/// How two groups relate (`MPI_Group_compare`'s `MPI_IDENT`, `MPI_SIMILAR`, `MPI_UNEQUAL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupComparison {
    /// The same processes in the same order.
    Identical,
    /// The same processes in another order.
    Similar,
    /// Different processes.
    Unequal,
}

impl Group {
    /// The group of `members` (world ranks, distinct) held by world rank `me`.
    pub(crate) fn new(members: Vec<u32>, me: u32) -> Self {
        debug_assert!({
            let mut sorted = members.clone();
            sorted.sort_unstable();
            sorted.windows(2).all(|w| w[0] != w[1])
        });
        Group {
            members: Arc::from(members),
            me,
        }
    }

    /// The processes of the group in group-rank order, as world ranks.
    pub fn world_ranks(&self) -> &[u32] {
        &self.members
    }

    /// The number of processes (`MPI_Group_size`).
    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// The calling process's rank in the group, `None` when it is not a member
    /// (`MPI_Group_rank`, `MPI_UNDEFINED`).
    pub fn rank(&self) -> Option<Rank> {
        self.rank_of_world(self.me)
    }

    /// The group rank of world rank `world`, if it is a member.
    pub fn rank_of_world(&self, world: u32) -> Option<Rank> {
        self.members
            .iter()
            .position(|&w| w == world)
            .map(|p| p as Rank)
    }

    fn contains_world(&self, world: u32) -> bool {
        self.members.contains(&world)
    }

    fn with(&self, members: Vec<u32>) -> Group {
        Group::new(members, self.me)
    }

    /// The processes of `self`, then those of `other` that are not in `self`, each in its group's
    /// order (`MPI_Group_union`).
    pub fn union(&self, other: &Group) -> Group {
        let mut members = self.members.to_vec();
        members.extend(other.members.iter().filter(|&&w| !self.contains_world(w)));
        self.with(members)
    }

    /// The processes of `self` that are also in `other`, in `self`'s order
    /// (`MPI_Group_intersection`).
    pub fn intersection(&self, other: &Group) -> Group {
        let members = self
            .members
            .iter()
            .copied()
            .filter(|&w| other.contains_world(w))
            .collect();
        self.with(members)
    }

    /// The processes of `self` that are not in `other`, in `self`'s order
    /// (`MPI_Group_difference`).
    pub fn difference(&self, other: &Group) -> Group {
        let members = self
            .members
            .iter()
            .copied()
            .filter(|&w| !other.contains_world(w))
            .collect();
        self.with(members)
    }

    /// The group of the processes at group ranks `ranks`, in that order (`MPI_Group_incl`).
    ///
    /// # Errors
    /// `Error::Rank` for a rank outside `0..size()`; `Error::Argument` for a repeated rank.
    pub fn incl(&self, ranks: &[Rank]) -> Result<Group> {
        self.check_ranks(ranks)?;
        Ok(self.with(ranks.iter().map(|&r| self.members[r as usize]).collect()))
    }

    /// The group without the processes at group ranks `ranks`, in `self`'s order
    /// (`MPI_Group_excl`).
    ///
    /// # Errors
    /// As [`Group::incl`].
    pub fn excl(&self, ranks: &[Rank]) -> Result<Group> {
        self.check_ranks(ranks)?;
        let members = self
            .members
            .iter()
            .enumerate()
            .filter(|(r, _)| !ranks.contains(&(*r as Rank)))
            .map(|(_, &w)| w)
            .collect();
        Ok(self.with(members))
    }

    fn check_ranks(&self, ranks: &[Rank]) -> Result<()> {
        let mut seen = BTreeMap::new();
        for &rank in ranks {
            if rank >= self.size() {
                return Err(Error::Rank {
                    rank: rank.into(),
                    size: self.size(),
                });
            }
            if seen.insert(rank, ()).is_some() {
                return Err(Error::Argument {
                    reason: format!("group rank {rank} is listed twice"),
                });
            }
        }
        Ok(())
    }

    /// For each of `ranks` (ranks in `self`), the rank of the same process in `other`, `None`
    /// where it is not a member (`MPI_Group_translate_ranks`, `MPI_UNDEFINED`); a rank outside
    /// `self` also gives `None`.
    pub fn translate_ranks(&self, ranks: &[Rank], other: &Group) -> Vec<Option<Rank>> {
        ranks
            .iter()
            .map(|&r| {
                self.members
                    .get(r as usize)
                    .and_then(|&w| other.rank_of_world(w))
            })
            .collect()
    }

    /// Whether the groups hold the same processes, in the same order (`MPI_Group_compare`).
    pub fn compare(&self, other: &Group) -> GroupComparison {
        if self.members == other.members {
            return GroupComparison::Identical;
        }
        let mut mine = self.members.to_vec();
        let mut theirs = other.members.to_vec();
        mine.sort_unstable();
        theirs.sort_unstable();
        if mine == theirs {
            GroupComparison::Similar
        } else {
            GroupComparison::Unequal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn group(members: &[u32]) -> Group {
        Group::new(members.to_vec(), 0)
    }

    #[test]
    fn algebra_follows_mpi_order_rules() {
        // MPI-4.0 §7.3.2: union keeps the first group's order, then the second's new members.
        let a = group(&[5, 1, 3]);
        let b = group(&[3, 7, 5, 2]);
        assert_eq!(a.union(&b).world_ranks(), &[5, 1, 3, 7, 2]);
        assert_eq!(a.intersection(&b).world_ranks(), &[5, 3]);
        assert_eq!(a.difference(&b).world_ranks(), &[1]);
        assert_eq!(b.difference(&a).world_ranks(), &[7, 2]);
        assert_eq!(a.incl(&[2, 0]).unwrap().world_ranks(), &[3, 5]);
        assert_eq!(a.excl(&[1]).unwrap().world_ranks(), &[5, 3]);
        assert_eq!(
            a.translate_ranks(&[0, 1, 2, 9], &b),
            vec![Some(2), None, Some(0), None]
        );
        assert_eq!(a.compare(&a.clone()), GroupComparison::Identical);
        assert_eq!(a.compare(&group(&[1, 3, 5])), GroupComparison::Similar);
        assert_eq!(a.compare(&b), GroupComparison::Unequal);
        assert_eq!(group(&[]).union(&group(&[])).size(), 0);
    }

    #[test]
    fn bad_ranks_are_errors() {
        let a = group(&[4, 2]);
        assert_eq!(a.incl(&[2]), Err(Error::Rank { rank: 2, size: 2 }));
        assert!(matches!(a.excl(&[1, 1]), Err(Error::Argument { .. })));
    }

    #[test]
    fn rank_is_the_holders_position() {
        let g = Group::new(vec![9, 4, 6], 4);
        assert_eq!(g.rank(), Some(1));
        assert_eq!(g.excl(&[1]).unwrap().rank(), None);
    }

    fn distinct(max: u32) -> impl Strategy<Value = Vec<u32>> {
        proptest::sample::subsequence((0..max).collect::<Vec<_>>(), 0..max as usize).prop_shuffle()
    }

    proptest! {
        /// The operations against a set-based reference model (MPI-4.0 §7.3.2).
        #[test]
        fn operations_match_a_reference(a in distinct(12), b in distinct(12)) {
            let (ga, gb) = (group(&a), group(&b));
            let union: Vec<u32> = a.iter().copied().chain(b.iter().copied().filter(|w| !a.contains(w))).collect();
            prop_assert_eq!(ga.union(&gb).world_ranks().to_vec(), union.clone());
            let inter: Vec<u32> = a.iter().copied().filter(|w| b.contains(w)).collect();
            prop_assert_eq!(ga.intersection(&gb).world_ranks().to_vec(), inter.clone());
            let diff: Vec<u32> = a.iter().copied().filter(|w| !b.contains(w)).collect();
            prop_assert_eq!(ga.difference(&gb).world_ranks().to_vec(), diff);
            // |A ∪ B| = |A| + |B| - |A ∩ B|; A = (A \ B) ∪ (A ∩ B) as sets.
            prop_assert_eq!(union.len() + inter.len(), a.len() + b.len());
            let parts = ga.difference(&gb).union(&ga.intersection(&gb));
            prop_assert_ne!(parts.compare(&ga), GroupComparison::Unequal);
            let translated = ga.translate_ranks(&(0..a.len() as u32).collect::<Vec<_>>(), &gb);
            for (i, t) in translated.iter().enumerate() {
                prop_assert_eq!(*t, b.iter().position(|&w| w == a[i]).map(|p| p as u32));
            }
            let all: Vec<u32> = (0..a.len() as u32).collect();
            prop_assert_eq!(ga.incl(&all).unwrap().compare(&ga), GroupComparison::Identical);
            prop_assert_eq!(ga.excl(&all).unwrap().size(), 0);
        }
    }
}

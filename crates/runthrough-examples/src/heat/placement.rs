// SPDX-License-Identifier: MIT OR Apache-2.0
//! Who owns each block and who holds its checkpoint copies: pure functions of the agreed
//! failure views, so that every survivor computes the same placement without talking.
//!
//! # Invariants
//! - Every block's owner is one of the holders of its last committed checkpoint (owners change
//!   only in [`Placement::recover`], which picks a holder), so a survivor that owns a block can
//!   always roll it back from its own store.
//! - Holders of one block are distinct ranks: the owner, then the next `buddies` ranks alive in
//!   the ring of ranks after it.

use std::collections::BTreeMap;

use runthrough::{FailureView, Rank};

/// The last checkpoint that every survivor committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// Iteration 0: every rank can regenerate any block from the problem's definition.
    Initial,
    /// A checkpoint of `iteration`, with `holders[block]` the ranks that hold a copy of `block`
    /// (its owner first).
    Stored {
        /// The iteration the copies describe.
        iteration: u64,
        /// Who holds each block's copies, owner first.
        holders: Vec<Vec<Rank>>,
    },
}

impl Committed {
    /// The iteration to roll back to.
    pub fn iteration(&self) -> u64 {
        match self {
            Committed::Initial => 0,
            Committed::Stored { iteration, .. } => *iteration,
        }
    }
}

/// A block whose every checkpoint copy was on a failed rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostBlock {
    /// The block.
    pub block: usize,
    /// The ranks that held its copies, all failed.
    pub holders: Vec<Rank>,
}

/// A block that changed hands in a recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The block.
    pub block: usize,
    /// Its failed owner.
    pub from: Rank,
    /// The survivor that takes it over.
    pub to: Rank,
}

/// Which rank owns each block now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    size: u32,
    owners: Vec<Rank>,
}

impl Placement {
    /// Block `b` on rank `b`: one block per rank of a job of `size` ranks.
    pub fn one_per_rank(size: u32) -> Self {
        Placement {
            size,
            owners: (0..size).collect(),
        }
    }

    /// The owner of `block`.
    pub fn owner(&self, block: usize) -> Rank {
        self.owners[block]
    }

    /// The blocks `rank` owns, in increasing order.
    pub fn blocks_of(&self, rank: Rank) -> impl Iterator<Item = usize> + '_ {
        self.owners
            .iter()
            .enumerate()
            .filter(move |(_, &o)| o == rank)
            .map(|(b, _)| b)
    }

    /// Blocks per rank, for the progress line: `(rank, blocks)` for every owner.
    pub fn load(&self) -> BTreeMap<Rank, usize> {
        let mut load = BTreeMap::new();
        for &owner in &self.owners {
            *load.entry(owner).or_insert(0) += 1;
        }
        load
    }

    /// The holders of each block's copies for a checkpoint taken now over the ranks OK in `g`:
    /// the owner, then the next `buddies` OK ranks after it in the ring (fewer when fewer ranks
    /// are left).
    pub fn checkpoint_holders(&self, g: &FailureView, buddies: usize) -> Vec<Vec<Rank>> {
        self.owners
            .iter()
            .map(|&owner| {
                let mut holders = vec![owner];
                holders.extend(
                    (1..self.size)
                        .map(|step| (owner + step) % self.size)
                        .filter(|&r| !g.is_failed(r))
                        .take(buddies),
                );
                holders
            })
            .collect()
    }

    /// Moves the blocks of ranks failed in `g` to survivors: to the first holder of the block's
    /// committed copy that is not failed (from [`Committed::Initial`], to the next OK rank in the
    /// ring, since anyone can regenerate iteration 0).
    ///
    /// # Errors
    /// The first block whose every copy was on a failed rank; the placement is then unchanged.
    pub fn recover(
        &mut self,
        g: &FailureView,
        committed: &Committed,
    ) -> Result<Vec<Move>, LostBlock> {
        let mut owners = self.owners.clone();
        let mut moves = Vec::new();
        for (block, owner) in owners.iter_mut().enumerate() {
            if !g.is_failed(*owner) {
                continue;
            }
            let to = match committed {
                Committed::Initial => (1..self.size)
                    .map(|step| (*owner + step) % self.size)
                    .find(|&r| !g.is_failed(r)),
                Committed::Stored { holders, .. } => {
                    holders[block].iter().copied().find(|&r| !g.is_failed(r))
                }
            };
            let Some(to) = to else {
                return Err(LostBlock {
                    block,
                    holders: match committed {
                        Committed::Initial => (0..self.size).collect(),
                        Committed::Stored { holders, .. } => holders[block].clone(),
                    },
                });
            };
            moves.push(Move {
                block,
                from: *owner,
                to,
            });
            *owner = to;
        }
        self.owners = owners;
        Ok(moves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(size: u32, failed: &[Rank]) -> FailureView {
        FailureView::empty(size).advance(failed.iter().map(|&r| (r, runthrough::RankState::NULL)))
    }

    #[test]
    fn holders_are_the_owner_and_the_next_ok_ranks() {
        let placement = Placement::one_per_rank(5);
        let g = view(5, &[1]);
        let holders = placement.checkpoint_holders(&g, 1);
        assert_eq!(holders[0], vec![0, 2]);
        assert_eq!(holders[4], vec![4, 0]);
        let two = placement.checkpoint_holders(&g, 2);
        assert_eq!(two[3], vec![3, 4, 0]);
    }

    #[test]
    fn a_failed_owners_block_goes_to_its_buddy_and_a_lost_pair_is_reported() {
        let mut placement = Placement::one_per_rank(4);
        let committed = Committed::Stored {
            iteration: 10,
            holders: placement.checkpoint_holders(&view(4, &[]), 1),
        };
        let moves = placement.recover(&view(4, &[2]), &committed).unwrap();
        assert_eq!(
            moves,
            vec![Move {
                block: 2,
                from: 2,
                to: 3
            }]
        );
        assert_eq!(placement.blocks_of(3).collect::<Vec<_>>(), vec![2, 3]);
        let lost = placement
            .recover(&view(4, &[2, 3]), &committed)
            .unwrap_err();
        assert_eq!(
            lost,
            LostBlock {
                block: 2,
                holders: vec![2, 3]
            }
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Who owns each block and who holds its checkpoint copies: pure functions of the agreed
//! failure views and of the host of each rank, so that every survivor computes the same
//! placement without talking.
//!
//! Buddy copies go to other hosts where there are any: a host that goes down takes all of its
//! ranks along, and a block whose copies were all on it would be lost. The ranks are laid out
//! in a ring that takes one rank of each host in turn (host order: that of each host's lowest
//! rank), and a block's buddies are the next OK ranks after its owner in that ring, on hosts
//! that hold no copy of it yet; only when no such rank is left do copies share a host. With
//! every rank on one host the ring is `0, 1, ..., size - 1`: the buddy is the next OK rank.
//!
//! # Invariants
//! - Every block's owner is one of the holders of its last committed checkpoint (owners change
//!   only in [`Placement::recover`], which picks a holder), so a survivor that owns a block can
//!   always roll it back from its own store.
//! - Holders of one block are distinct ranks: the owner, then `buddies` OK ranks (fewer when
//!   fewer are left), on pairwise distinct hosts as long as OK ranks on other hosts remain.
//! - With ranks on two hosts or more and `buddies >= 1`, no committed block has all its copies
//!   on one host while OK ranks of another host remain: losing any one whole host loses no block.

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

/// Which rank owns each block now, and on which host each rank runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    size: u32,
    owners: Vec<Rank>,
    /// `hosts[rank]`: the host's number, 0 for the host of rank 0, then in order of first rank.
    hosts: Vec<usize>,
    /// Every rank once, one rank of each host in turn: buddies are searched along it.
    ring: Vec<Rank>,
}

impl Placement {
    /// Block `b` on rank `b`: one block per rank of a job of `size` ranks, all on one host
    /// (until [`Placement::set_hosts`] says otherwise).
    pub fn one_per_rank(size: u32) -> Self {
        let mut placement = Placement {
            size,
            owners: (0..size).collect(),
            hosts: Vec::new(),
            ring: Vec::new(),
        };
        placement.set_hosts(&vec![0; size as usize]);
        placement
    }

    /// Says where each rank runs: `hosts[rank]` is any key of the rank's host (ranks with equal
    /// keys share a host). Changes where later checkpoints put their copies, not who owns what.
    ///
    /// # Panics
    /// When `hosts` does not have one key per rank.
    pub fn set_hosts<K: PartialEq>(&mut self, hosts: &[K]) {
        assert_eq!(hosts.len(), self.size as usize, "one host key per rank");
        let mut keys: Vec<&K> = Vec::new();
        self.hosts = hosts
            .iter()
            .map(|key| {
                keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                    keys.push(key);
                    keys.len() - 1
                })
            })
            .collect();
        let mut by_host: Vec<Vec<Rank>> = vec![Vec::new(); keys.len()];
        for (rank, &host) in self.hosts.iter().enumerate() {
            by_host[host].push(rank as Rank);
        }
        let deepest = by_host.iter().map(Vec::len).max().unwrap_or(0);
        self.ring = (0..deepest)
            .flat_map(|turn| by_host.iter().filter_map(move |ranks| ranks.get(turn)))
            .copied()
            .collect();
    }

    /// How many hosts the ranks run on.
    pub fn host_count(&self) -> usize {
        self.hosts.iter().max().map_or(0, |&h| h + 1)
    }

    /// The host of `rank` (0 for rank 0's, then numbered in order of their lowest rank).
    pub fn host_of(&self, rank: Rank) -> usize {
        self.hosts[rank as usize]
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
    /// the owner, then `buddies` OK ranks (fewer when fewer are left): the next ones after the
    /// owner in the ring whose hosts hold no copy yet, then, if that is not enough, the next ones
    /// whatever their host.
    pub fn checkpoint_holders(&self, g: &FailureView, buddies: usize) -> Vec<Vec<Rank>> {
        self.owners
            .iter()
            .map(|&owner| {
                let start = self.ring.iter().position(|&r| r == owner).unwrap_or(0);
                let after: Vec<Rank> = (1..self.ring.len())
                    .map(|step| self.ring[(start + step) % self.ring.len()])
                    .filter(|&r| r != owner && !g.is_failed(r))
                    .collect();
                let mut holders = vec![owner];
                let mut used_hosts = vec![self.host_of(owner)];
                for &rank in &after {
                    if holders.len() > buddies {
                        break;
                    }
                    if !used_hosts.contains(&self.host_of(rank)) {
                        used_hosts.push(self.host_of(rank));
                        holders.push(rank);
                    }
                }
                for &rank in &after {
                    if holders.len() > buddies {
                        break;
                    }
                    if !holders.contains(&rank) {
                        holders.push(rank);
                    }
                }
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

    /// Ranks 0-2 on host A, 3-5 on B, 6-8 on C (as `srun -N 3 -n 9` places them): each copy
    /// goes to another host, one copy per rank, and losing any one host leaves every block a
    /// copy on a live rank.
    #[test]
    fn buddies_are_on_other_hosts_and_a_lost_host_loses_no_block() {
        let mut placement = Placement::one_per_rank(9);
        placement.set_hosts(&["a", "a", "a", "b", "b", "b", "c", "c", "c"]);
        assert_eq!(placement.host_count(), 3);
        let holders = placement.checkpoint_holders(&view(9, &[]), 1);
        for (block, holders) in holders.iter().enumerate() {
            assert_eq!(holders.len(), 2);
            assert_ne!(
                placement.host_of(holders[0]),
                placement.host_of(holders[1]),
                "block {block}: {holders:?}"
            );
        }
        assert_eq!(holders[0], vec![0, 3]);
        assert_eq!(holders[3], vec![3, 6]);
        assert_eq!(holders[6], vec![6, 1]);
        let mut copies = vec![0; 9];
        holders.iter().for_each(|h| copies[h[1] as usize] += 1);
        assert_eq!(copies, vec![1; 9], "one buddy copy per rank");
        let committed = Committed::Stored {
            iteration: 10,
            holders: holders.clone(),
        };
        for lost_host in [[0, 1, 2], [3, 4, 5], [6, 7, 8]] {
            let mut after = placement.clone();
            let moves = after.recover(&view(9, &lost_host), &committed).unwrap();
            assert_eq!(moves.len(), 3, "{lost_host:?}");
            // The copies made after the recovery are on other hosts again.
            let g = view(9, &lost_host);
            for holders in after.checkpoint_holders(&g, 1) {
                assert_ne!(after.host_of(holders[0]), after.host_of(holders[1]));
            }
        }
        // Two buddies: the owner's host and two others.
        let two = placement.checkpoint_holders(&view(9, &[]), 2);
        assert_eq!(two[1], vec![1, 4, 7]);
    }

    /// When the other hosts run out of OK ranks, copies share a host rather than go missing;
    /// on one host the buddy is the next OK rank, as without hosts.
    #[test]
    fn copies_share_a_host_only_when_no_other_is_left() {
        let mut placement = Placement::one_per_rank(4);
        placement.set_hosts(&[7, 7, 7, 9]);
        assert_eq!(
            placement.checkpoint_holders(&view(4, &[]), 1)[0],
            vec![0, 3]
        );
        assert_eq!(
            placement.checkpoint_holders(&view(4, &[3]), 1)[0],
            vec![0, 1]
        );
        // The ring is 0, 3, 1, 2: after rank 3 come 1 (host 7), then 2 (host 7 again).
        assert_eq!(
            placement.checkpoint_holders(&view(4, &[]), 2)[3],
            vec![3, 1, 2]
        );
        let single = Placement::one_per_rank(5);
        assert_eq!(single.host_count(), 1);
        assert_eq!(single.checkpoint_holders(&view(5, &[1]), 1)[0], vec![0, 2]);
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

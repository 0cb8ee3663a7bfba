// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-shrinking recovery for heat ([`Config::respawn`](super::Config::respawn),
//! `--recovery respawn`): after `validate_global` reports new failures, the survivors call
//! `Comm::respawn`, which starts a new rank for each dead one and gives everyone a communicator
//! of the original size where each new rank has a dead rank's number. Then:
//!
//! 1. Every survivor rolls its own block back to the committed checkpoint (its own copy; the
//!    initial field for a recovery before the first checkpoint).
//! 2. The lowest survivor sends each new rank a header: the checkpoint's iteration, the pass
//!    number (message tags depend on it), the holders of every block's copies and the host of
//!    every rank.
//! 3. Each new rank receives every checkpoint copy its predecessor held (its own block among
//!    them), each from the first holder of that copy that was not replaced (the same choice at
//!    every rank, computed from the holders). A copy whose every holder was replaced is lost:
//!    every rank reports it, as the run-through recovery does.
//! 4. Everyone calls `validate_global` on the new communicator. New failures there (a rank died
//!    during the transfer) start another respawn from the ranks that are left; otherwise the
//!    run goes on at the checkpoint's iteration with every block on its own rank, and the next
//!    pass is a checkpoint (redundancy back).
//!
//! Limitation: a new rank that did not receive everything (its sender died during the
//! transfer) and then survives into a further respawn holds incomplete copies; a later
//! recovery that needs one of them reports the run inconsistent (an error, never a wrong
//! field).

use std::collections::BTreeMap;
use std::time::Instant;

use runthrough::{Error, FailureView, InterComm, Rank, RankState};

use crate::held::Held;

use super::{Committed, HeatError, LostBlock, RankResult, RecoveryRecord, Shared, Solver};

/// What a new rank learns from the lowest survivor before its copies.
#[derive(Debug, Default, PartialEq)]
struct Header {
    checkpoint: Option<u64>,
    pass: u64,
    holders: Vec<Vec<Rank>>,
    hosts: Option<Vec<u64>>,
}

impl Header {
    fn encode(&self) -> Vec<u64> {
        let mut words = vec![
            self.checkpoint.map_or(0, |_| 1),
            self.checkpoint.unwrap_or(0),
            self.pass,
            self.holders.len() as u64,
        ];
        for holders in &self.holders {
            words.push(holders.len() as u64);
            words.extend(holders.iter().map(|&r| u64::from(r)));
        }
        match &self.hosts {
            None => words.push(0),
            Some(hosts) => {
                words.push(1);
                words.push(hosts.len() as u64);
                words.extend(hosts);
            }
        }
        words
    }

    fn decode(words: &[u64]) -> Option<Header> {
        let mut at = words.iter().copied();
        let stored = at.next()?;
        let iteration = at.next()?;
        let pass = at.next()?;
        let blocks = at.next()?;
        let mut holders = Vec::new();
        for _ in 0..blocks {
            let len = at.next()?;
            holders.push(
                (0..len)
                    .map(|_| at.next().and_then(|r| Rank::try_from(r).ok()))
                    .collect::<Option<Vec<Rank>>>()?,
            );
        }
        let hosts = match at.next()? {
            0 => None,
            _ => {
                let len = at.next()?;
                Some((0..len).map(|_| at.next()).collect::<Option<Vec<u64>>>()?)
            }
        };
        Some(Header {
            checkpoint: (stored == 1).then_some(iteration),
            pass,
            holders,
            hosts,
        })
    }
}

/// The tag of the header (the copies are tagged by their block's number, below it). The new
/// communicator carries nothing else before this transfer ends.
fn header_tag(blocks: usize) -> i32 {
    blocks as i32
}

/// The blocks whose copy rank `rank` holds in the committed checkpoint (its own first).
fn copies_of(holders: &[Vec<Rank>], rank: Rank) -> Vec<usize> {
    (0..holders.len())
        .filter(|&b| holders[b].contains(&rank))
        .collect()
}

/// Who sends block `block`'s copy to the new ranks: its first holder that was not replaced.
fn sender(holders: &[Vec<Rank>], block: usize, replaced: &[Rank]) -> Result<Rank, LostBlock> {
    holders[block]
        .iter()
        .copied()
        .find(|r| !replaced.contains(r))
        .ok_or_else(|| LostBlock {
            block,
            holders: holders[block].clone(),
        })
}

impl<'a> Solver<'a> {
    /// A rank started by a respawn: joins the recovered communicator, receives its state and
    /// runs on. `Ok(None)` when the recovery attempt that started it met another failure (the
    /// survivors start new ranks; this one ends).
    pub(super) fn replacement(
        parents: &InterComm,
        shared: &'a Shared<'a>,
    ) -> Result<Option<RankResult>, HeatError> {
        let Ok(comm) = parents.join_respawn() else {
            return Ok(None);
        };
        let replaced: Vec<Rank> = parents
            .args()
            .get(1)
            .map(|numbers| numbers.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default();
        let mut solver = Solver::new(Held::Owned(comm), shared);
        solver.replacement = true;
        solver.blocks.clear();
        solver.receive_state(&replaced)?;
        solver.settle()?;
        let checkpoint_due = solver.committed != Committed::Initial;
        solver.run(checkpoint_due).map(Some)
    }

    /// New failures in G, with `Config::respawn`: replace the dead ranks (module docs).
    pub(super) fn respawn(
        &mut self,
        after: &FailureView,
        agreed_at: Instant,
    ) -> Result<(), HeatError> {
        let new_in_g: Vec<Rank> = after
            .ranks(RankState::NULL | RankState::NEW)
            .map(|info| info.rank)
            .collect();
        let leader = self.is_leader(after);
        let checkpoint = self.committed.iteration();
        if leader {
            self.say(format_args!(
                "iteration {}: validate_global: ranks {new_in_g:?} are NULL|NEW in G; respawning, \
                 rolling back to {checkpoint}",
                self.iteration
            ));
        }
        let kill_to_agreement = {
            let kills = self.shared.kill_times.lock().expect("kill log");
            kills
                .iter()
                .filter(|(rank, _)| new_in_g.contains(rank))
                .map(|(_, at)| *at)
                .min()
                .map(|at| agreed_at.saturating_duration_since(at))
        };
        // What failed in the pass that found the deaths is settled by this recovery; from
        // here on, `pass_error` is about the transfer.
        self.pass_error = None;
        let mut replaced = self.respawn_round()?;
        replaced.extend(self.settle()?);
        replaced.sort_unstable();
        replaced.dedup();
        let respawned = agreed_at.elapsed();
        if self.is_leader(&self.g) {
            self.say(format_args!(
                "recovery #{}: ranks {replaced:?} replaced by new ranks and restored in {respawned:.2?}; \
                 back at iteration {checkpoint} on {} ranks",
                self.recoveries.len() + 1,
                self.world.size()
            ));
        }
        self.recoveries.push(RecoveryRecord {
            number: self.recoveries.len() as u32 + 1,
            at_iteration: self.iteration,
            new_in_g,
            failed_in_all: after.num_failed(),
            moves: Vec::new(),
            rolled_back_to: checkpoint,
            during_recovery: self.recovering_since.is_some(),
            kill_to_agreement,
            agreement_to_recovered: None,
            respawned: Some((replaced, respawned)),
        });
        self.recovering_since = Some(agreed_at);
        self.iteration = checkpoint;
        Ok(())
    }

    /// Until `validate_global` on the current communicator finds no new failure: each time it
    /// does, another respawn round. Returns the numbers replaced on the way.
    fn settle(&mut self) -> Result<Vec<Rank>, HeatError> {
        let mut replaced = Vec::new();
        loop {
            let view = self.world.validate_global().map_err(|e| self.runtime(e))?;
            if !view.new_failures() {
                if let Some(error) = self.pass_error.take() {
                    return Err(HeatError::Inconsistent(format!(
                        "rank {}: `{error}` while restoring replaced ranks, which \
                         validate_global found failure-free",
                        self.me
                    )));
                }
                self.g = view;
                return Ok(replaced);
            }
            self.pass_error = None;
            replaced.extend(self.respawn_round()?);
        }
    }

    /// One respawn: the new communicator, then this survivor's part of the transfer. Returns
    /// the numbers of the ranks replaced.
    fn respawn_round(&mut self) -> Result<Vec<Rank>, HeatError> {
        let before = self.world.group();
        let comm = self.world.respawn().map_err(|e| self.runtime(e))?;
        let after = comm.group();
        let replaced: Vec<Rank> = (0..comm.size())
            .filter(|&r| before.world_ranks()[r as usize] != after.world_ranks()[r as usize])
            .collect();
        self.world = Held::Owned(comm);
        self.send_state(&replaced)?;
        Ok(replaced)
    }

    /// A survivor's part: its own block back to the checkpoint; the header (from the lowest
    /// survivor) and the copies it is the sender of, to every replaced rank.
    fn send_state(&mut self, replaced: &[Rank]) -> Result<(), HeatError> {
        let decomposition = self.shared.decomposition;
        let me = self.me as usize;
        let mine = match &self.committed {
            Committed::Initial => decomposition.initial_block(me),
            Committed::Stored { .. } => {
                let cells = self.store.get(&me).cloned().ok_or_else(|| {
                    HeatError::Inconsistent(format!(
                        "rank {} holds no copy of its own block",
                        self.me
                    ))
                })?;
                decomposition.block_from_cells(me, cells)
            }
        };
        self.blocks = BTreeMap::from([(me, mine)]);
        if replaced.is_empty() {
            return Ok(());
        }
        let lowest = (0..self.world.size()).find(|r| !replaced.contains(r));
        let holders = match &self.committed {
            Committed::Initial => Vec::new(),
            Committed::Stored { holders, .. } => holders.clone(),
        };
        if lowest == Some(self.me) {
            let header = Header {
                checkpoint: match &self.committed {
                    Committed::Initial => None,
                    Committed::Stored { iteration, .. } => Some(*iteration),
                },
                pass: self.pass,
                holders: holders.clone(),
                hosts: self.hosts_known.then(|| {
                    (0..self.world.size())
                        .map(|r| self.placement.host_of(r) as u64)
                        .collect()
                }),
            };
            let words = header.encode();
            for &rank in replaced {
                if let Err(e) = self
                    .world
                    .send(&words, rank, header_tag(decomposition.blocks()))
                {
                    self.note(format_args!("the respawn header to rank {rank}"), e);
                }
            }
        }
        for &rank in replaced {
            for block in copies_of(&holders, rank) {
                if self.sender_of(&holders, block, replaced)? != self.me {
                    continue;
                }
                let Some(cells) = self.store.get(&block) else {
                    return Err(HeatError::Inconsistent(format!(
                        "rank {} is to send block {block}'s copy but holds none",
                        self.me
                    )));
                };
                if let Err(e) = self.world.send(cells, rank, block as i32) {
                    self.note(format_args!("block {block}'s copy to rank {rank}"), e);
                }
            }
        }
        Ok(())
    }

    /// The sender of `block`'s copy, or the run's end if every copy was on a replaced rank.
    fn sender_of(
        &self,
        holders: &[Vec<Rank>],
        block: usize,
        replaced: &[Rank],
    ) -> Result<Rank, HeatError> {
        sender(holders, block, replaced).map_err(|lost| HeatError::Unrecoverable {
            lost,
            at_iteration: self.iteration,
            checkpoint: self.committed.iteration(),
        })
    }

    /// A new rank's part: the header from the lowest survivor, then the copies its
    /// predecessor held.
    fn receive_state(&mut self, replaced: &[Rank]) -> Result<(), HeatError> {
        let decomposition = self.shared.decomposition;
        let Some(lowest) = (0..self.world.size()).find(|r| !replaced.contains(r)) else {
            return Err(HeatError::Inconsistent("every rank was replaced".into()));
        };
        let header = match self
            .world
            .recv_vec::<u64>(lowest, header_tag(decomposition.blocks()))
        {
            Ok((words, status)) if status.source.is_some() => Header::decode(&words),
            Ok(_) => None,
            Err(e) => {
                self.note(format_args!("the respawn header from rank {lowest}"), e);
                return Ok(()); // `settle` sees the failure
            }
        };
        let Some(header) = header else {
            let error = Error::Internal {
                reason: "a malformed respawn header".into(),
            };
            self.note(format_args!("the respawn header from rank {lowest}"), error);
            return Ok(());
        };
        self.pass = header.pass;
        if let Some(hosts) = &header.hosts {
            self.placement.set_hosts(hosts);
            self.hosts_known = true;
        }
        let me = self.me as usize;
        let Some(iteration) = header.checkpoint else {
            self.iteration = 0;
            self.committed = Committed::Initial;
            self.blocks = BTreeMap::from([(me, decomposition.initial_block(me))]);
            return Ok(());
        };
        self.iteration = iteration;
        let mut store = BTreeMap::new();
        for block in copies_of(&header.holders, self.me) {
            let from = self.sender_of(&header.holders, block, replaced)?;
            match self.world.recv_vec::<f64>(from, block as i32) {
                Ok((cells, status))
                    if status.source.is_some() && cells.len() == decomposition.cells_len(block) =>
                {
                    store.insert(block, cells);
                }
                Ok((_, status)) => self.note(
                    format_args!("block {block}'s copy from rank {from}"),
                    Error::Internal {
                        reason: format!("unexpected copy {status:?}"),
                    },
                ),
                Err(e) => self.note(format_args!("block {block}'s copy from rank {from}"), e),
            }
        }
        if let Some(cells) = store.get(&me) {
            self.blocks = BTreeMap::from([(me, decomposition.block_from_cells(me, cells.clone()))]);
        }
        self.store = store;
        self.committed = Committed::Stored {
            iteration,
            holders: header.holders,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_round_trips_and_a_short_one_is_refused() {
        let header = Header {
            checkpoint: Some(40),
            pass: 97,
            holders: vec![vec![0, 1], vec![1, 2], vec![2, 0]],
            hosts: Some(vec![0, 0, 1]),
        };
        let words = header.encode();
        assert_eq!(Header::decode(&words), Some(header));
        assert_eq!(Header::decode(&words[..words.len() - 1]), None);
        let initial = Header::default();
        assert_eq!(Header::decode(&initial.encode()), Some(initial));
    }

    #[test]
    fn copies_come_from_the_first_holder_not_replaced() {
        let holders = vec![vec![0, 1], vec![1, 2], vec![2, 0]];
        assert_eq!(copies_of(&holders, 1), [0, 1]);
        assert_eq!(sender(&holders, 1, &[1]), Ok(2));
        assert_eq!(sender(&holders, 0, &[1]), Ok(0));
        assert_eq!(
            sender(&holders, 1, &[1, 2]),
            Err(LostBlock {
                block: 1,
                holders: vec![1, 2]
            })
        );
    }
}

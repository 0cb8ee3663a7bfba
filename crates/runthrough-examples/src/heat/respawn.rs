// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-shrinking recovery for heat ([`Config::respawn`](super::Config::respawn),
//! `--recovery respawn`): after `validate_global` reports new failures, the survivors call
//! `Comm::respawn`, which starts a new rank for each dead one and gives everyone a communicator
//! of the original size where each new rank has a dead rank's number. Then, on it:
//!
//! 1. One all-reduce tells the new ranks the pass number (message tags depend on it) and
//!    whether a checkpoint was committed.
//! 2. Without one, every rank starts its own block from the initial field (anyone can
//!    regenerate it). With one, the survivors restore over the new communicator
//!    ([`Store::recover`]) while the new ranks join the store
//!    ([`Store::join_with_hosts`]): each gets its predecessor's block (slot `i` holds block `i`,
//!    and a new rank takes the number and the slot of the rank it replaces), every block rolls
//!    back to the checkpoint, and the store checkpoints them again before it returns. A block
//!    whose every copy was on a replaced rank is lost: every rank reports it.
//! 3. Everyone calls `validate_global` on the new communicator. New failures there (a rank died
//!    during the restore) start another respawn from the ranks that are left, the new ranks
//!    among them (a new rank whose join failed joins again); otherwise the run goes on at the
//!    checkpoint's iteration with every block on its own rank.

use std::time::Instant;

use runthrough::resilience::{Redundancy, Store};
use runthrough::{InterComm, Op, Rank};

use crate::held::Held;

use super::{Attempt, HeatError, RankResult, Shared, Solver};

impl<'a> Solver<'a> {
    /// A rank started by a respawn: joins the recovered communicator, gets its block and runs
    /// on. `Ok(None)` when the recovery attempt that started it met another failure (the
    /// survivors start new ranks; this one ends).
    pub(super) fn replacement(
        parents: &InterComm,
        shared: &'a Shared<'a>,
    ) -> Result<Option<RankResult>, HeatError> {
        let Ok(comm) = parents.join_respawn() else {
            return Ok(None);
        };
        let mut solver = Solver::new(Held::Owned(comm), shared);
        solver.replacement = true;
        solver.blocks.clear();
        let attempt = solver.restore_after_respawn()?;
        if let Some(view) = solver.settle(attempt)? {
            solver.recover(view, Instant::now())?;
        }
        solver.run().map(Some)
    }

    /// One respawn: the new communicator, then the restore on it.
    pub(super) fn respawn_round(&mut self, agreed_at: Instant) -> Result<Attempt, HeatError> {
        let before = self.world.group();
        let comm = self.world.respawn().map_err(|e| self.runtime(e))?;
        let after = comm.group();
        let replaced: Vec<Rank> = (0..comm.size())
            .filter(|&r| before.world_ranks()[r as usize] != after.world_ranks()[r as usize])
            .collect();
        self.world = Held::Owned(comm);
        self.learn_numbers();
        let took = agreed_at.elapsed();
        if self.is_leader(&self.g) {
            self.say(format_args!(
                "recovery #{}: ranks {replaced:?} replaced by new ranks in {took:.2?}; rolling back \
                 from iteration {} to {}",
                self.recoveries.len(),
                self.iteration,
                self.committed.unwrap_or(0)
            ));
        }
        if let Some(record) = self.recoveries.last_mut() {
            record.respawned = Some((replaced, took));
        }
        if self.committed.is_some() {
            self.kill_in_recovery();
        }
        self.restore_after_respawn()
    }

    /// Every rank's part of the restore on a respawn's communicator, survivors and new ranks
    /// alike (module docs).
    fn restore_after_respawn(&mut self) -> Result<Attempt, HeatError> {
        let mine = [self.pass, u64::from(self.committed.is_some())];
        let mut known = [0u64; 2];
        if let Err(e) = self.world.all_reduce(&mine, &mut known, Op::Max) {
            return Ok(Err(e.into()));
        }
        self.pass = known[0];
        // Respawned ranks keep their numbers: block `b`, and slot `b`, on rank `b`.
        let size = self.world.size();
        self.slot_blocks = (0..size as usize).map(|b| vec![b]).collect();
        if known[1] == 0 {
            // A store made in a checkpoint pass that did not commit holds nothing.
            self.store = None;
            self.regenerate((0..size).collect());
            return Ok(Ok(()));
        }
        let comm: &runthrough::Comm = &self.world;
        let restored = match self.store.as_mut() {
            Some(store) => store.recover(comm),
            None => {
                let redundancy = Redundancy::Copies(self.shared.config.buddies as u32);
                match Store::join_with_hosts(comm, redundancy, self.host) {
                    Ok((store, slots)) => {
                        self.store = Some(store);
                        Ok(slots)
                    }
                    Err(e) => Err(e),
                }
            }
        };
        let numbers = self.numbers_of(&self.world);
        self.restored(numbers, restored)
    }
}

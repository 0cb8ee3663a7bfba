// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's commands for the agreements behind `validate_global`, `agree` and `shrink`
//! (SPEC §2.1, §3.5): the communicator's collective slot they hold, entering an agreement,
//! its decision, and installing a decided G.

use super::Engine;
use crate::agreement::Decision;
use crate::packet::{ContextId, Outgoing};
use crate::{Error, FailureView, RankState, Result, WorldRank};

impl Engine {
    /// Claims `context`'s slots for a call that runs no collective messages itself: with
    /// `collective`, the collective slot (`validate_global`, which starts a new collective
    /// epoch, `shrink` and the creations); with `exclusive`, the main agreement series (every
    /// blocking agreement call while it runs, and a pending `ivalidate_global`); both until
    /// [`Engine::end_agreement`]. A pending `iagree` claims neither: it only checks that no
    /// other thread holds the series, and later agreements queue behind it.
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` when another call holds a slot this one needs, or holds
    /// the series; `Error::Comm` on a freed communicator.
    pub fn claim_agreement(
        &mut self,
        context: ContextId,
        collective: bool,
        exclusive: bool,
    ) -> Result<()> {
        // Its schedules are settled first: a queued send that went out meanwhile is noted.
        let running = collective && self.schedules_running(context);
        let state = self.comm(context)?;
        if state.agreement_active || (collective && (state.collective_active || running)) {
            return Err(Error::ConcurrentCollective);
        }
        state.agreement_active = exclusive;
        if collective {
            state.collective_active = true;
        }
        Ok(())
    }

    /// The call that claimed `context`'s slots with [`Engine::claim_agreement`] ended.
    pub fn end_agreement(&mut self, context: ContextId, collective: bool, exclusive: bool) {
        if let Ok(state) = self.comm(context) {
            if exclusive {
                state.agreement_active = false;
            }
            if collective {
                state.collective_active = false;
            }
        }
    }

    /// Enters the next agreement of `context` over the OK ranks of G with `flag` as this
    /// rank's flag word, contributing the failures its detector knows and those L holds;
    /// returns the agreement's number. If this rank's previous agreement there has not decided
    /// yet (a pending `iagree`), this one is queued and starts when it has. Its first messages
    /// are pushed on `out`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn start_agreement(
        &mut self,
        context: ContextId,
        flag: u32,
        out: &mut Outgoing,
    ) -> Result<u64> {
        let comm = self.comm(context)?;
        let seq = comm.enter_agreement(flag);
        comm.drain_agreements(context, out);
        Ok(seq)
    }

    /// The decision of agreement `seq` of `context` once this rank may return from it (`None`
    /// before). The agreed failures become known to this rank's detector (knowledge spreads,
    /// SPEC §1): what that makes the engine send is pushed on `out`, and the world ranks that
    /// were news to the detector are pushed on `learned`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn poll_agreement(
        &mut self,
        context: ContextId,
        seq: u64,
        out: &mut Outgoing,
        learned: &mut Vec<WorldRank>,
    ) -> Result<Option<Decision>> {
        let comm = self.comm(context)?;
        let Some(decision) = comm.take_decision(seq) else {
            return Ok(None);
        };
        let members = comm.members.clone();
        self.learn_decided(&members, &decision, out, learned);
        Ok(Some(decision))
    }

    /// The failures of `decision` (comm ranks of `members`) become known to this rank's
    /// detector; what that makes the engine send is pushed on `out`, the world ranks that were
    /// news on `learned`.
    pub(crate) fn learn_decided(
        &mut self,
        members: &super::Members,
        decision: &Decision,
        out: &mut Outgoing,
        learned: &mut Vec<WorldRank>,
    ) {
        for rank in &decision.failed {
            let world = members.world_of(rank);
            if self.handle_peer_failed(world, out) {
                learned.push(world);
            }
        }
    }

    /// After `validate_global`'s agreement decided `decision` on `context`: G := G ∪ its
    /// failures (ranks entering G `NULL | NEW`, the rest `NULL | OLD`), L := G, a new collective
    /// epoch whose participants are the OK ranks of G; returns the new G. The credit for the old
    /// epoch's collective messages that are dropped falls due ([`Engine::take_due`]).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn install_decided_global(
        &mut self,
        context: ContextId,
        decision: &Decision,
    ) -> Result<FailureView> {
        let comm = self.comm(context)?;
        let unchanged =
            !comm.global.new_failures() && decision.failed.iter().all(|r| comm.global.is_failed(r));
        let global = if unchanged {
            comm.global.clone() // no NEW rank and nothing added: the same G
        } else {
            let mut failed = comm.global.failed_set();
            failed.union_with(&decision.failed);
            comm.global.updated(&failed, RankState::NULL)
        };
        self.install_global(context, global.clone());
        Ok(global)
    }
}

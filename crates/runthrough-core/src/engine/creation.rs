// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's side of communicator creation (`dup`, `split`, `create`, `create_group`,
//! `shrink`, a communicator of one rank) and of freeing one: context ids derived alike at every
//! member, the creation series' agreement with its flag word, its verdict, and installing the
//! new communicator. The protocol itself is described in the `runthrough` crate's
//! `communicators` module.

use super::{CommState, Engine, Members, NOT_REVOKED};
use crate::agreement::Decision;
use crate::packet::{ContextId, Outgoing};
use crate::{Error, FailureView, Rank, Result, WorldRank};

/// Creation flag bit: no unrecognized failure at entry, and the exchange succeeded.
pub const EXCHANGE_OK: u32 = 2;
/// Creation (and shrink) flag bit: the candidate context id is free at the contributing rank.
pub const ID_FREE: u32 = 4;

/// Which call made a communicator: part of its context id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Kind {
    /// `dup`.
    Dup = 1,
    /// `create`.
    Create = 2,
    /// `split`.
    Split = 3,
    /// `shrink`.
    Shrink = 4,
    /// A communicator of this rank alone.
    SelfOnly = 5,
    /// `create_group`.
    Group = 6,
    /// `spawn`: the communicator of the parents and the ranks they started.
    Spawn = 7,
}

/// The context id of a communicator made by call number `seq` of kind `kind` on `parent`, for
/// `color` (`split`'s color; 0 otherwise).
///
/// The hash: SplitMix64's finalizer folded over the words `parent, kind, seq, color`
/// (`h := mix(h ^ word)`, from `h = 0x9E37_79B9_7F4A_7C15`), with bit 63 set so that no
/// derived id is the world's (0). Every member computes the same id without a message. Ids are
/// not guaranteed distinct by the hash alone; the creation agreement's [`ID_FREE`] bit makes
/// sure no rank ever holds two communicators with one id (a collision costs one more round).
pub fn derive_context(parent: ContextId, kind: Kind, seq: u64, color: u64) -> ContextId {
    let mut hash: u64 = 0x9E37_79B9_7F4A_7C15;
    for word in [parent, kind as u64, seq, color] {
        hash = mix(hash ^ word);
    }
    hash | 1 << 63
}

/// SplitMix64's output function.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What this rank will hold if a creation succeeds.
pub struct Plan {
    /// The members, as world ranks in the new numbering.
    pub members: Members,
    /// The new communicator's G (and L).
    pub global: FailureView,
    /// Tells apart the communicators one call makes (`split`'s color).
    pub color: u64,
}

/// What a creation's plan is computed from.
pub struct Inputs<'a> {
    /// The parent's members.
    pub members: &'a Members,
    /// The parent's G at entry.
    pub global: &'a FailureView,
    /// `split`'s exchange: `[defined, color, key]` per parent rank (NULL ranks undefined).
    pub table: &'a [[u32; 3]],
}

/// `split`'s plan at rank `me` of the parent (`MPI_Comm_split`, MPI-4.0 §7.4.2): with a
/// `color`, the ranks of the exchange's table that gave the same color, ordered by key, then
/// by rank in the parent, as world ranks, with an empty G; `None` for an undefined color (or,
/// which cannot happen, a table without this rank's entry). The runtime's `Comm::split` and
/// the engine simulator's split rounds both use it.
pub fn split_plan(inputs: &Inputs<'_>, me: Rank, color: Option<u32>) -> Option<Plan> {
    let color = color?;
    let mut chosen: Vec<(i32, Rank)> = inputs
        .table
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry[0] == 1 && entry[1] == color)
        .map(|(rank, entry)| (entry[2] as i32, rank as Rank))
        .collect();
    if !chosen.iter().any(|&(_, r)| r == me) {
        return None;
    }
    chosen.sort_unstable();
    let members: Vec<WorldRank> = chosen
        .iter()
        .map(|&(_, r)| inputs.members.world_of(r))
        .collect();
    let size = members.len() as u32;
    Some(Plan {
        members: Members::list(members),
        global: FailureView::empty(size),
        color: color.into(),
    })
}

/// What a creation's decision means, the same at every participant (they share the decision
/// and G).
#[derive(Debug)]
pub enum Verdict {
    /// The parent was revoked at some participant: everyone returns `Error::Revoked`.
    Revoked,
    /// Everyone returns this error.
    Failed(Error),
    /// The candidate context id was taken somewhere: the next agreement, a new id.
    Retry,
    /// Everyone installs its plan.
    Install,
}

/// The verdict of a creation's `decision`, given the parent's G at entry.
pub fn verdict(decision: &Decision, global: &FailureView) -> Verdict {
    if decision.flag & NOT_REVOKED == 0 {
        return Verdict::Revoked;
    }
    let recognized = global.failed_set();
    if decision.flag & EXCHANGE_OK == 0 {
        return Verdict::Failed(
            match decision.failed.difference(&recognized).iter().next() {
                Some(rank) => Error::ProcFailed { rank },
                None => Error::Internal {
                    reason: "a creation's exchange failed without a failure".into(),
                },
            },
        );
    }
    if let Some(rank) = decision
        .non_contributors
        .difference(&recognized)
        .iter()
        .next()
    {
        return Verdict::Failed(Error::ProcFailed { rank });
    }
    if decision.flag & ID_FREE == 0 {
        return Verdict::Retry;
    }
    Verdict::Install
}

/// What a creation call saw of its parent at entry ([`Engine::begin_creation`]).
#[derive(Debug, Clone)]
pub struct CreationEntry {
    /// No participant was known failed without being recognized in G.
    pub entry_ok: bool,
    /// The parent's G.
    pub global: FailureView,
    /// The parent's members.
    pub members: Members,
}

impl Engine {
    /// The world ranks of `context`'s members in rank order (empty for a communicator this
    /// rank does not hold).
    pub fn members_of(&self, context: ContextId) -> Vec<WorldRank> {
        match self.comms.get(&context) {
            Some(state) => (0..state.members.size())
                .map(|r| state.members.world_of(r))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The first of `worlds` that is not a member of `context`, if any.
    ///
    /// # Errors
    /// `Error::Comm` for a communicator this rank does not hold.
    pub fn first_non_member(
        &self,
        context: ContextId,
        worlds: &[WorldRank],
    ) -> Result<Option<WorldRank>> {
        let state = self.comms.get(&context).ok_or(Error::Comm)?;
        Ok(worlds
            .iter()
            .copied()
            .find(|&w| state.members.comm_of(w).is_none()))
    }

    /// A creation call starts on `context` (the caller holds its collective slot).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator, `Error::Revoked` on a revoked one.
    pub fn begin_creation(&mut self, context: ContextId) -> Result<CreationEntry> {
        let state = self.comm(context)?;
        state.check_not_revoked()?;
        state.creating = true;
        Ok(CreationEntry {
            entry_ok: state.unrecognized_failure().is_none(),
            global: state.global.clone(),
            members: state.members.clone(),
        })
    }

    /// The creation call on `context` ended: on a revoked communicator this rank contributes
    /// "revoked" to the creation series' current call if it has not (pushed on `out`), so that
    /// peers inside a creation call it will never make are released.
    pub fn end_creation(&mut self, context: ContextId, out: &mut Outgoing) {
        if let Some(state) = self.comms.get_mut(&context) {
            state.creating = false;
            state.settle_revoked_creations(context, out);
        }
    }

    /// Claims the candidate context id of the next creation of `kind` on `context` for a plan
    /// of `color` (none when this rank will not be a member) when it is free here, and enters
    /// the next creation agreement with the flag word that says so; returns the agreement's
    /// number and the candidate. Its first messages are pushed on `out`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn contribute_to_creation(
        &mut self,
        context: ContextId,
        kind: Kind,
        exchange_ok: bool,
        color: Option<u64>,
        out: &mut Outgoing,
    ) -> Result<(u64, Option<ContextId>)> {
        let next = self.comm(context)?.creations.next_seq();
        let candidate = color.map(|color| derive_context(context, kind, next, color));
        let free = candidate.is_none_or(|c| self.context_is_free(c));
        if let (true, Some(c)) = (free, candidate) {
            self.reserved.insert(c);
        }
        let state = self.comm(context)?;
        let mut flag = 0;
        if !state.life.is_revoked() {
            flag |= NOT_REVOKED;
        }
        if exchange_ok {
            flag |= EXCHANGE_OK;
        }
        if free {
            flag |= ID_FREE;
        }
        let seq = state.start_creation(flag);
        debug_assert_eq!(seq, next);
        state.drain_agreements(context, out);
        Ok((seq, candidate))
    }

    /// The decision of creation agreement `seq` on `context`, as [`Engine::poll_agreement`]
    /// for the main series.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn poll_creation(
        &mut self,
        context: ContextId,
        seq: u64,
        out: &mut Outgoing,
        learned: &mut Vec<WorldRank>,
    ) -> Result<Option<Decision>> {
        let state = self.comm(context)?;
        let Some(decision) = state.creations.decision(seq).cloned() else {
            return Ok(None);
        };
        let members = state.members.clone();
        self.learn_decided(&members, &decision, out, learned);
        Ok(Some(decision))
    }

    /// Gives up the claim on candidate context id `candidate` (the creation will not install
    /// it).
    pub fn release_candidate(&mut self, candidate: ContextId) {
        self.reserved.remove(&candidate);
    }

    /// Claims the context id `shrink` on `context` would install after its next agreement,
    /// when it is free here; returns it and whether it was free (and is now claimed).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub(crate) fn claim_shrink_candidate(
        &mut self,
        context: ContextId,
    ) -> Result<(ContextId, bool)> {
        let next = self.comm(context)?.next_agreement_seq();
        let candidate = derive_context(context, Kind::Shrink, next, 0);
        let free = self.context_is_free(candidate);
        if free {
            self.reserved.insert(candidate);
        }
        Ok((candidate, free))
    }

    /// Claims the context id of the communicator that joins `context`'s members and the ranks
    /// a `spawn` on `context` starts, for a spawn that runs `context`'s next agreement, when it
    /// is free here; returns it and whether it was free (and is now claimed). Every member
    /// derives the same id; the members' first world rank tells apart spawns of communicators
    /// that share a context id (the world communicators of two generations of spawned ranks).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn claim_spawn_candidate(&mut self, context: ContextId) -> Result<(ContextId, bool)> {
        let state = self.comm(context)?;
        let next = state.next_agreement_seq();
        let first = state.members.world_of(0);
        let candidate = derive_context(context, Kind::Spawn, next, first.0.into());
        let free = self.context_is_free(candidate);
        if free {
            self.reserved.insert(candidate);
        }
        Ok((candidate, free))
    }

    /// The participants of `context` (OK ranks of G) that `decision` did not find failed, as
    /// world ranks in their order: the members of the communicator a shrink makes.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub(crate) fn survivors(
        &mut self,
        context: ContextId,
        decision: &Decision,
    ) -> Result<Vec<WorldRank>> {
        let state = self.comm(context)?;
        Ok(state
            .participants
            .iter()
            .filter(|&&r| !decision.failed.contains(r))
            .map(|&r: &Rank| state.members.world_of(r))
            .collect())
    }

    /// Numbers a `create_group` call on `context` for `tag` and the group of `worlds` (the
    /// same number at every member, who make such calls in the same order) and returns the
    /// context id every member derives for it.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator; `Error::Internal` if that id is already held or
    /// claimed here.
    pub fn group_creation_context(
        &mut self,
        context: ContextId,
        tag: i32,
        worlds: &[WorldRank],
    ) -> Result<ContextId> {
        let members_hash = worlds
            .iter()
            .fold(0x9E37_79B9_7F4A_7C15_u64, |h, &w| mix(h ^ u64::from(w.0)));
        let state = self.comm(context)?;
        let seq = state
            .group_creations
            .entry((tag, members_hash))
            .or_insert(0);
        *seq += 1;
        let seq = *seq;
        let color = mix(members_hash ^ u64::from(tag as u32));
        let derived = derive_context(context, Kind::Group, seq, color);
        if self.comms.contains_key(&derived) || self.reserved.contains(&derived) {
            return Err(Error::Internal {
                reason: format!(
                    "create_group: the derived context id {derived:#x} is already held here"
                ),
            });
        }
        Ok(derived)
    }

    /// A context id for a communicator of this rank (world rank `me`) alone, derived from
    /// `context`'s, that nothing here holds or claims.
    pub fn self_context(&self, context: ContextId, me: WorldRank) -> ContextId {
        (0..)
            .map(|seq| derive_context(context, Kind::SelfOnly, seq, me.0.into()))
            .find(|&c| self.context_is_free(c))
            .expect("an unbounded series has a free id")
    }

    /// Installs the communicator `plan` describes under `context`, this rank being world rank
    /// `me`; returns its rank and size there. Traffic that arrived for it early is delivered
    /// now (what that makes the engine send is pushed on `out`).
    ///
    /// # Panics
    /// When `plan` does not hold `me` (a caller's bug).
    pub fn install_plan(
        &mut self,
        context: ContextId,
        plan: Plan,
        me: WorldRank,
        out: &mut Outgoing,
    ) -> (Rank, u32) {
        let rank = plan.members.comm_of(me).expect("a plan holds this rank");
        let size = plan.members.size();
        let mut state = CommState::new(plan.members, rank, plan.global);
        state.set_first_round(self.first_round);
        state.set_hosts(self.hosts.clone());
        self.install(context, state, out);
        (rank, size)
    }

    /// Frees `context` here (once): its buffered traffic is dropped and the senders' credit
    /// falls due ([`Engine::take_due`]); its agreement series are kept, so that peers still
    /// inside one get their answers. The world communicator is never freed.
    pub fn free_communicator(&mut self, context: ContextId) {
        if context == crate::packet::WORLD_CONTEXT {
            return;
        }
        let Some(state) = self.comms.get_mut(&context) else {
            return;
        };
        if !state.life.free() {
            return;
        }
        self.drop_buffered(context);
        if let Some(state) = self.comms.get_mut(&context) {
            state.matcher = Default::default();
            state.collective_matcher = Default::default();
            state.collective_early = Vec::new();
        }
        let mut out = Outgoing::new();
        self.advance_schedules(context, &mut out);
        for (world, packet) in out {
            self.flow.send_later(world, packet);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::WORLD_CONTEXT;

    #[test]
    fn derived_contexts_differ_by_every_input_and_are_never_the_world() {
        let base = derive_context(0, Kind::Split, 3, 7);
        assert_eq!(base, derive_context(0, Kind::Split, 3, 7), "deterministic");
        assert_ne!(base, derive_context(1, Kind::Split, 3, 7));
        assert_ne!(base, derive_context(0, Kind::Dup, 3, 7));
        assert_ne!(base, derive_context(0, Kind::Split, 4, 7));
        assert_ne!(base, derive_context(0, Kind::Split, 3, 8));
        let mut seen = std::collections::BTreeSet::new();
        for seq in 0..1000 {
            for color in 0..10 {
                let id = derive_context(base, Kind::Split, seq, color);
                assert_ne!(id, WORLD_CONTEXT);
                assert!(seen.insert(id));
            }
        }
    }
}

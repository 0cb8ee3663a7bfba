// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine's side of communicator creation (`dup`, `split`, `create`, `create_group`,
//! `shrink`, a communicator of one rank) and of freeing one: context ids derived alike at every
//! member, the creation series' agreement with its flag word, its verdict, and installing the
//! new communicator. The protocol itself is described in the `runthrough` crate's
//! `communicators` module.

use std::sync::Arc;

use super::{CommState, Engine, Members, NOT_REVOKED};
use crate::agreement::Decision;
use crate::packet::{ContextId, Outgoing};
use crate::{Error, FailureView, Rank, Result, WorldRank};

/// Creation flag bit: no unrecognized failure at entry, and the exchange succeeded.
pub const EXCHANGE_OK: u32 = 2;
/// Creation (and shrink) flag bit: the candidate context id is free at the contributing rank.
pub const ID_FREE: u32 = 4;
/// Spawn flag bit: the new ranks started at the contributing parent (the transport's answer,
/// the same at every parent).
pub const STARTED: u32 = 8;

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
#[derive(Debug)]
pub struct Plan {
    /// The members, as world ranks in the new numbering.
    pub members: Members,
    /// The new communicator's G (and L).
    pub global: FailureView,
    /// Tells apart the communicators one call makes (`split`'s color).
    pub color: u64,
}

/// What a creation's plan is computed from.
pub(crate) struct Inputs<'a> {
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
/// which cannot happen, a table without this rank's entry).
pub(crate) fn split_plan(inputs: &Inputs<'_>, me: Rank, color: Option<u32>) -> Option<Plan> {
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

/// What a creation call saw of its parent at entry.
#[derive(Debug, Clone)]
pub(crate) struct CreationEntry {
    /// No participant was known failed without being recognized in G.
    pub entry_ok: bool,
    /// The parent's G.
    pub global: FailureView,
    /// The parent's members.
    pub members: Members,
}

/// How a creation chooses the members of its communicator ([`super::AgreementCall::Create`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Creation {
    /// `dup`: the parent's members, numbering and recognized failures (`NULL | OLD` in both
    /// views of the new communicator).
    Dup,
    /// `split`: this rank's color (`None` for `MPI_UNDEFINED`: it takes part and gets no
    /// communicator) and key; the participants of one color, ordered by key, then by rank
    /// (`split_plan`), exchanged by an all-gather first.
    Split {
        /// This rank's color.
        color: Option<u32>,
        /// This rank's key.
        key: i32,
    },
    /// `create`: the processes of a group (world ranks, in the group's order) that are
    /// participants of the parent; ranks outside the group get no communicator.
    Create {
        /// The group's processes.
        group: Vec<WorldRank>,
    },
}

impl Creation {
    /// The kind of call, part of the new context id.
    fn kind(&self) -> Kind {
        match self {
            Creation::Dup => Kind::Dup,
            Creation::Split { .. } => Kind::Split,
            Creation::Create { .. } => Kind::Create,
        }
    }
}

/// A creation call in progress at this rank.
#[derive(Debug)]
pub(crate) struct Creating {
    creation: Creation,
    /// What the call saw of the parent at entry.
    entry: CreationEntry,
    /// `split`'s exchange while it runs: its schedule, and the participants it gathers from.
    exchange: Option<(u64, Arc<[Rank]>)>,
    /// No unrecognized failure at entry, and the exchange (if any) succeeded.
    exchange_ok: bool,
    /// `split`'s table (`[defined, color, key]` per parent rank).
    table: Vec<[u32; 3]>,
    /// What this rank installs if the call succeeds, once it has contributed.
    plan: Option<Plan>,
    /// Whether it has entered the current creation agreement.
    contributed: bool,
}

impl Creating {
    /// `split`'s exchange ended with `outcome`, gathered from `participants` (in order).
    fn exchanged(&mut self, outcome: Result<super::Output>, participants: &[Rank]) {
        self.exchange = None;
        let Ok(output) = outcome else {
            self.exchange_ok = false;
            return;
        };
        let bytes = output.into_bytes();
        let mut table = vec![[0u32; 3]; self.entry.members.size() as usize];
        for (block, &rank) in bytes.chunks_exact(12).zip(participants) {
            let word = |k: usize| u32::from_le_bytes(block[4 * k..4 * k + 4].try_into().unwrap());
            table[rank as usize] = [word(0), word(1), word(2)];
        }
        self.table = table;
    }

    /// The plan this rank installs if the call succeeds (none when the exchange failed, or
    /// this rank is not a member), this rank being comm rank `me` and world rank `world`.
    fn plan_for(&self, me: Rank, world: WorldRank) -> Option<Plan> {
        if !self.exchange_ok {
            return None;
        }
        let inputs = Inputs {
            members: &self.entry.members,
            global: &self.entry.global,
            table: &self.table,
        };
        match &self.creation {
            Creation::Dup => Some(Plan {
                members: inputs.members.clone(),
                global: FailureView::recognized(inputs.global.size(), &inputs.global.failed_set()),
                color: 0,
            }),
            Creation::Split { color, .. } => split_plan(&inputs, me, *color),
            Creation::Create { group } => {
                let members: Vec<WorldRank> = group
                    .iter()
                    .copied()
                    .filter(|&w| {
                        inputs
                            .members
                            .comm_of(w)
                            .is_some_and(|r| !inputs.global.is_failed(r))
                    })
                    .collect();
                if !members.contains(&world) {
                    return None;
                }
                let size = members.len() as u32;
                Some(Plan {
                    members: Members::list(members),
                    global: FailureView::empty(size),
                    color: 0,
                })
            }
        }
    }
}

impl Engine {
    /// Starts creation `creation` on `context` (the call holds its slots): what it sees at
    /// entry, and `split`'s exchange of colors and keys (an all-gather over the participants,
    /// a step of this call).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator, `Error::Revoked` on a revoked one.
    pub(super) fn begin_creation_call(
        &mut self,
        context: ContextId,
        creation: Creation,
        out: &mut Outgoing,
    ) -> Result<Creating> {
        let entry = self.begin_creation(context)?;
        let mut creating = Creating {
            exchange_ok: entry.entry_ok,
            creation,
            entry,
            exchange: None,
            table: Vec::new(),
            plan: None,
            contributed: false,
        };
        if let Creation::Split { color, key } = creating.creation {
            let mine = [u32::from(color.is_some()), color.unwrap_or(0), key as u32];
            let data: Vec<u8> = mine.iter().flat_map(|w| w.to_le_bytes()).collect();
            let me = self.comm(context)?.rank;
            let mut participants: Arc<[Rank]> = Arc::from([]);
            let started = self.start_schedule_as(
                context,
                me,
                super::Hold::Within,
                |call| {
                    participants = Arc::clone(&call.participants);
                    Ok(super::Schedule::all_gather(
                        &call.participants,
                        call.index,
                        data,
                    ))
                },
                out,
            );
            match started {
                Ok(super::Started::Running(id)) => creating.exchange = Some((id, participants)),
                Ok(super::Started::Done(outcome)) => creating.exchanged(outcome, &participants),
                // An unrecognized failure (or a revocation) at its start: it failed.
                Err(_) => creating.exchange_ok = false,
            }
        }
        Ok(creating)
    }

    /// Runs creation call number `at` of `context` as far as it goes: the exchange's end,
    /// this rank's contribution, the decision and what it says (install, fail alike
    /// everywhere, or another agreement for a new context id). `None` while it waits; the
    /// caller ends the call on its outcome.
    pub(super) fn poll_creation_call(
        &mut self,
        context: ContextId,
        at: usize,
        out: &mut Outgoing,
        decided: &mut super::Decided,
    ) -> Option<Result<super::Agreed>> {
        let state = self.comms.get_mut(&context)?;
        let mut creating = state.agreement_calls[at].creating.take()?;
        let outcome = self.advance_creation(context, at, &mut creating, out, decided);
        if outcome.is_none() {
            if let Some(state) = self.comms.get_mut(&context) {
                state.agreement_calls[at].creating = Some(creating);
            }
        }
        outcome
    }

    /// [`Engine::poll_creation_call`] with the call's progress in hand.
    fn advance_creation(
        &mut self,
        context: ContextId,
        at: usize,
        creating: &mut Creating,
        out: &mut Outgoing,
        decided: &mut super::Decided,
    ) -> Option<Result<super::Agreed>> {
        loop {
            if let Some((id, participants)) = creating.exchange.clone() {
                let outcome = self.poll_schedule(context, id, out)?;
                creating.exchanged(outcome, &participants);
            }
            if !creating.contributed {
                let me = self.comms.get(&context)?.rank;
                creating.plan = creating.plan_for(me, self.world_rank);
                let kind = creating.creation.kind();
                let color = creating.plan.as_ref().map(|plan| plan.color);
                let contributed =
                    self.contribute_to_creation(context, kind, creating.exchange_ok, color, out);
                let (seq, candidate) = match contributed {
                    Ok(contributed) => contributed,
                    Err(error) => return Some(Err(error)),
                };
                let pending = &mut self.comms.get_mut(&context)?.agreement_calls[at];
                (pending.seq, pending.candidate) = (seq, candidate);
                creating.contributed = true;
            }
            let pending = &self.comms.get(&context)?.agreement_calls[at];
            let (seq, candidate) = (pending.seq, pending.candidate);
            let decision = match self.poll_creation(context, seq, out, &mut decided.learned) {
                Ok(decision) => decision?,
                Err(error) => return Some(Err(error)),
            };
            decided.creations.push((seq, decision.clone()));
            let verdict = verdict(&decision, &creating.entry.global);
            if let (Some(candidate), false) = (candidate, matches!(verdict, Verdict::Install)) {
                self.release_candidate(candidate);
            }
            return Some(match verdict {
                Verdict::Revoked => {
                    self.revoke(context, None, out);
                    Err(Error::Revoked)
                }
                Verdict::Failed(error) => Err(error),
                Verdict::Retry => {
                    creating.contributed = false;
                    continue; // the candidate was taken somewhere: the next agreement, a new id
                }
                Verdict::Install => match (creating.plan.take(), candidate) {
                    (None, _) => Ok(super::Agreed::Created(None)),
                    (Some(plan), Some(candidate)) => {
                        let (rank, size) = self.install_plan(candidate, plan, self.world_rank, out);
                        Ok(super::Agreed::Created(Some(super::Installed {
                            context: candidate,
                            rank,
                            size,
                        })))
                    }
                    (Some(_), None) => Err(Error::Internal {
                        reason: "a creation's plan without a candidate context".into(),
                    }),
                },
            });
        }
    }
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

    /// A creation call starts on `context`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator, `Error::Revoked` on a revoked one.
    pub(crate) fn begin_creation(&mut self, context: ContextId) -> Result<CreationEntry> {
        let state = self.comm(context)?;
        state.check_not_revoked()?;
        state.creating = true;
        Ok(CreationEntry {
            entry_ok: state.unrecognized_failure().is_none(),
            global: state.global.clone(),
            members: state.members.clone(),
        })
    }

    /// A creation call on `context` ended: when no other one runs here, on a revoked
    /// communicator this rank contributes "revoked" to the creation series' current call if it
    /// has not (pushed on `out`), so that peers inside a creation call it will never make are
    /// released.
    pub(crate) fn end_creation(&mut self, context: ContextId, out: &mut Outgoing) {
        if let Some(state) = self.comms.get_mut(&context) {
            state.creating = state.agreement_calls.iter().any(|c| c.creating.is_some());
            state.settle_revoked_creations(context, out);
        }
    }

    /// Claims the candidate context id of the next creation of `kind` on `context` for a plan
    /// of `color` (none when this rank will not be a member) when it is free here, and enters
    /// the next creation agreement with the flag word that says so; returns the agreement's
    /// number and the candidate when this call claimed it (not when it was taken here). Its
    /// first messages are pushed on `out`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub(crate) fn contribute_to_creation(
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
        // A candidate taken here is not this call's to release.
        Ok((seq, candidate.filter(|_| free)))
    }

    /// The decision of creation agreement `seq` on `context` once this rank may return from
    /// it (`None` before); its failures become known to this rank's detector (what that sends
    /// on `out`, the world ranks that were news on `learned`).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub(crate) fn poll_creation(
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
    pub(crate) fn release_candidate(&mut self, candidate: ContextId) {
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
    pub(crate) fn claim_spawn_candidate(
        &mut self,
        context: ContextId,
    ) -> Result<(ContextId, bool)> {
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

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The calls an agreement decides (semantics §2.1, §3.5), each one operation of the engine from
//! its slots to its outcome ([`Engine::start_agreement_call`], [`Engine::poll_agreement_call`]):
//! `validate_global`, `agree`, `shrink`, the creations (`super::creation`) and `spawn`'s
//! agreement (whose one step outside the engine, starting the new ranks, the driver takes
//! when [`Engine::spawn_awaiting`] asks for it).

use super::Engine;
use crate::agreement::Decision;
use crate::packet::{ContextId, Outgoing};
use crate::{Error, FailureView, RankState, Result, WorldRank};

impl Engine {
    /// The call that held `context`'s slots (the collective slot with `collective`, the main
    /// agreement series with `exclusive`) ended.
    pub(crate) fn end_agreement(&mut self, context: ContextId, collective: bool, exclusive: bool) {
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
    pub(crate) fn start_agreement(
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
    pub(crate) fn install_decided_global(
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

/// A call of a communicator that one agreement of its main series decides, run by the engine
/// as one operation from start to outcome ([`Engine::start_agreement_call`],
/// [`Engine::poll_agreement_call`]): the blocking call is its start and a wait, the
/// non-blocking one its start and a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgreementCall {
    /// `validate_global`: G := G ∪ the agreed failures, L := G, a new collective epoch (once
    /// this rank's non-blocking collectives of the old epoch have finished). Holds the
    /// collective slot and the series.
    ValidateGlobal,
    /// `agree` with this rank's `flag` word. With `holds_series` (the blocking call) it holds
    /// the series, so another thread's agreement call is refused; without (a pending `iagree`)
    /// it holds nothing and later agreements queue behind it.
    Agree {
        /// This rank's flag word.
        flag: u32,
        /// Whether the call holds the series while it runs.
        holds_series: bool,
    },
    /// `shrink`: a new communicator of the participants the agreement did not find failed,
    /// under a context id every member derives alike (another agreement when it was taken
    /// somewhere). Holds the collective slot and the series.
    Shrink,
    /// `dup`, `split` or `create`: a new communicator by the creation protocol (split's
    /// exchange, a candidate context id, one agreement of the creation series, and another
    /// when the id was taken somewhere; `super::creation`). Holds the collective slot and the
    /// series.
    Create(super::Creation),
    /// `spawn`'s agreement: a candidate context id for the communicator joining the parents
    /// (this communicator's members, in order) and the new ranks; the driver starts the new
    /// ranks under it ([`Engine::spawn_awaiting`], [`Engine::spawn_started`]); one agreement
    /// on whether every parent started them and found the id free; another, with a new id,
    /// when it was taken somewhere; the joining communicator installed. Holds the collective
    /// slot and the series.
    Spawn,
}

impl AgreementCall {
    /// The slots it holds: (collective, series).
    fn slots(&self) -> (bool, bool) {
        match *self {
            // A dup exchanges nothing but its agreement, in the creation series, where the
            // creations of a communicator queue in call order: it holds no slot, so several
            // may be pending (`MPI_Comm_idup`) beside collectives and other creations.
            AgreementCall::Create(super::Creation::Dup) => (false, false),
            AgreementCall::ValidateGlobal
            | AgreementCall::Shrink
            | AgreementCall::Create(_)
            | AgreementCall::Spawn => (true, true),
            AgreementCall::Agree { holds_series, .. } => (false, holds_series),
        }
    }
}

/// What an agreement call returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreed {
    /// `validate_global`'s new G.
    Global(FailureView),
    /// `agree`'s flag (a decision with an unacknowledged failure is
    /// `Error::AgreeProcFailed` instead).
    Flag(u32),
    /// A creation's new communicator, installed here (`None` at a rank that is not one of
    /// its members: `split`'s undefined color, `create` outside the group); `spawn`'s joining
    /// communicator.
    Created(Option<Installed>),
    /// `shrink`'s new communicator, installed here.
    Shrunk(Installed),
}

/// A communicator a creation or a shrink installed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Installed {
    /// Its context id.
    pub context: ContextId,
    /// This rank's number in it.
    pub rank: crate::Rank,
    /// Its size.
    pub size: u32,
}

/// A started agreement call ([`Engine::start_agreement_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgreementCallId {
    context: ContextId,
    id: u64,
}

impl AgreementCallId {
    /// The communicator it runs on.
    pub fn context(&self) -> ContextId {
        self.context
    }
}

/// What polling an agreement call taught this rank, for its observers: the world ranks its
/// detector learned failed from a decision, and the decisions taken (agreement number and
/// decision; a shrink whose context id was taken somewhere takes two or more).
#[derive(Debug, Default)]
pub struct Decided {
    /// World ranks that were news to this rank's detector.
    pub learned: Vec<WorldRank>,
    /// The decisions the call took, by agreement number.
    pub decisions: Vec<(u64, Decision)>,
    /// The decisions of the creation series the call took (a creation's), by number there.
    pub creations: Vec<(u64, Decision)>,
}

/// An agreement call in progress at this rank.
#[derive(Debug)]
pub(crate) struct PendingCall {
    id: u64,
    call: AgreementCall,
    /// The number of the agreement it waits for.
    pub(super) seq: u64,
    /// This rank's flag word in that agreement.
    flag: u32,
    /// A shrink's or creation's context id, claimed here.
    pub(super) candidate: Option<ContextId>,
    /// The decision, taken, while the call waits for something else (`validate_global` for
    /// this rank's non-blocking collectives of the old epoch).
    decision: Option<Decision>,
    /// A creation's progress (`super::creation`), while it runs.
    pub(super) creating: Option<Box<super::creation::Creating>>,
    /// A creation's outcome, once it ended, until its call is polled (the creations of a
    /// communicator run in call order as their decisions arrive: `Engine::advance_creations`).
    finished: Option<Result<Agreed>>,
    /// What a creation taught this rank before its call was polled.
    decided: Decided,
    /// A spawn's progress.
    spawning: Option<Spawning>,
}

impl Spawning {
    fn new(candidate: ContextId, free: bool) -> Self {
        Spawning {
            candidate,
            free,
            started: None,
        }
    }
}

/// Where a spawn stands at this rank.
#[derive(Debug, Clone, Copy)]
struct Spawning {
    /// The candidate context id of the joining communicator, and whether it was free here
    /// (and is claimed).
    candidate: ContextId,
    free: bool,
    /// The new ranks under that id, once the driver started them (`Some(None)`: it could
    /// not); `None` while the call waits for the driver.
    started: Option<Option<(WorldRank, u32)>>,
}

impl Engine {
    /// Starts `call` on `context`: claims the slots it holds and makes this rank's
    /// contribution (the failures its detector knows and L holds, and the call's flag word),
    /// now or, behind a pending `iagree` of this rank, as soon as that one has decided here.
    /// Its first messages are pushed on `out`.
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` when another call holds a slot this one needs (a blocking
    /// collective, or another agreement call, of another thread); `Error::Comm` on a freed
    /// communicator.
    pub fn start_agreement_call(
        &mut self,
        context: ContextId,
        call: AgreementCall,
        out: &mut Outgoing,
    ) -> Result<AgreementCallId> {
        let (collective, series) = call.slots();
        let state = self.comm(context)?;
        if state.agreement_active || (collective && state.collective_active) {
            return Err(Error::ConcurrentCollective);
        }
        state.agreement_active = series;
        state.collective_active |= collective;
        let id = state.next_agreement_call;
        state.next_agreement_call += 1;
        let mut pending = PendingCall {
            id,
            call,
            seq: 0,
            flag: 0,
            candidate: None,
            decision: None,
            creating: None,
            finished: None,
            decided: Decided::default(),
            spawning: None,
        };
        let started = match &pending.call {
            AgreementCall::Create(creation) => self
                .begin_creation_call(context, creation.clone(), out)
                .map(|creating| pending.creating = Some(Box::new(creating))),
            // Its agreement waits for the driver to start the new ranks.
            AgreementCall::Spawn => self
                .claim_spawn_candidate(context)
                .map(|(candidate, free)| pending.spawning = Some(Spawning::new(candidate, free))),
            call => self
                .contribute(context, call.clone(), out)
                .map(|(seq, flag, candidate)| {
                    (pending.seq, pending.flag, pending.candidate) = (seq, flag, candidate);
                }),
        };
        if let Err(error) = started {
            self.end_slots(context, &pending.call);
            return Err(error);
        }
        let creation = pending.creating.is_some();
        self.comm(context)?.agreement_calls.push(pending);
        if creation {
            // It contributes now, unless an earlier creation of this rank still runs.
            self.advance_creations(context, out);
        }
        Ok(AgreementCallId { context, id })
    }

    /// This rank's contribution to the next agreement of `context` for `call`: its number,
    /// the flag word, and the context id a shrink claimed.
    fn contribute(
        &mut self,
        context: ContextId,
        call: AgreementCall,
        out: &mut Outgoing,
    ) -> Result<(u64, u32, Option<ContextId>)> {
        let (flag, candidate) = match call {
            AgreementCall::ValidateGlobal | AgreementCall::Create(_) | AgreementCall::Spawn => {
                (u32::MAX, None)
            }
            AgreementCall::Agree { flag, .. } => (flag, None),
            AgreementCall::Shrink => {
                // Claimed before the agreement starts; no other agreement of the series starts
                // in between (the call holds the series).
                let (candidate, free) = self.claim_shrink_candidate(context)?;
                if free {
                    (super::creation::ID_FREE, Some(candidate))
                } else {
                    (0, None)
                }
            }
        };
        Ok((self.start_agreement(context, flag, out)?, flag, candidate))
    }

    /// The agreement agreement call `call` waits for now (a shrink whose context id was taken
    /// enters another) and this rank's flag word in it; `None` once the call has ended.
    pub fn agreement_call_entry(&self, call: AgreementCallId) -> Option<(u64, u32)> {
        let state = self.comms.get(&call.context)?;
        let pending = state.agreement_calls.iter().find(|c| c.id == call.id)?;
        Some((pending.seq, pending.flag))
    }

    /// The outcome of agreement call `call` once this rank may return from it (`None`
    /// before); the call is forgotten then and its slots are free. The agreed failures become
    /// known to this rank's detector (knowledge spreads, semantics §1); what that and the outcome
    /// make the engine send (the new communicator's early traffic, credit for an old epoch's
    /// dropped messages) is pushed on `out`, and what the call taught on `decided`.
    ///
    /// Errors in the outcome: `Error::AgreeProcFailed` for an `agree` (as
    /// [`AgreementCall::Agree`] says); `Error::Comm` when the communicator was freed meanwhile
    /// (or the call is unknown).
    ///
    /// A poll that gives no outcome may still make this rank send (a shrink that enters
    /// another agreement): those messages go out with the flow-control packets
    /// ([`Engine::take_due`], the transmit-ready flag raised), not on `out`, so a driver
    /// that drops `out` while the call is pending loses nothing.
    pub fn poll_agreement_call(
        &mut self,
        call: AgreementCallId,
        out: &mut Outgoing,
        decided: &mut Decided,
    ) -> Option<Result<Agreed>> {
        let mark = out.len();
        let polled = self.poll_agreement_call_once(call, out, decided);
        if polled.is_none() {
            for (to, packet) in out.drain(mark..) {
                self.flow.send_soon(to, packet);
            }
        }
        polled
    }

    /// [`Engine::poll_agreement_call`], with what a pending call sends left on `out`.
    fn poll_agreement_call_once(
        &mut self,
        call: AgreementCallId,
        out: &mut Outgoing,
        decided: &mut Decided,
    ) -> Option<Result<Agreed>> {
        let context = call.context;
        loop {
            let Some(state) = self.comms.get_mut(&context) else {
                return Some(Err(Error::Comm));
            };
            let Some(at) = state.agreement_calls.iter().position(|c| c.id == call.id) else {
                return Some(Err(Error::Comm));
            };
            let pending = &mut state.agreement_calls[at];
            if pending.creating.is_some() || pending.finished.is_some() {
                self.advance_creations(context, out);
                let state = self.comms.get_mut(&context)?;
                let pending = &mut state.agreement_calls[at];
                let outcome = pending.finished.take()?;
                let taught = std::mem::take(&mut pending.decided);
                decided.learned.extend(taught.learned);
                decided.creations.extend(taught.creations);
                self.end_agreement_call(context, at);
                return Some(outcome);
            }
            if pending.spawning.is_some_and(|s| s.started.is_none()) {
                return None; // the driver starts the new ranks first
            }
            let (kind, seq) = (pending.call.clone(), pending.seq);
            if pending.decision.is_none() {
                let decision = state.take_decision(seq)?;
                let members = state.members.clone();
                self.learn_decided(&members, &decision, out, &mut decided.learned);
                decided.decisions.push((seq, decision.clone()));
                let state = self.comms.get_mut(&context)?;
                state.agreement_calls[at].decision = Some(decision);
            }
            let outcome = match kind {
                AgreementCall::ValidateGlobal => {
                    // Its new epoch would drop the late messages of the old one's non-blocking
                    // collectives here: they finish first (each ends, at the latest, with
                    // `ProcFailed` once a participant's death is known).
                    if self.schedules_running(context) {
                        return None;
                    }
                    let decision = self.pending_decision(context, at)?;
                    let global = self.install_decided_global(context, &decision);
                    out.extend(self.take_due());
                    global.map(Agreed::Global)
                }
                AgreementCall::Agree { .. } => {
                    let decision = self.pending_decision(context, at)?;
                    if decision.unacknowledged_failure {
                        Err(Error::AgreeProcFailed {
                            flag: decision.flag,
                        })
                    } else {
                        Ok(Agreed::Flag(decision.flag))
                    }
                }
                AgreementCall::Shrink => match self.shrunk(context, at, out) {
                    Some(outcome) => outcome,
                    None => continue, // the context id was taken somewhere: another agreement
                },
                // `None`: the id was taken somewhere, the call waits for a new start.
                AgreementCall::Spawn => self.spawn_outcome(context, at, out)?,
                AgreementCall::Create(_) => unreachable!("a creation is polled above"),
            };
            self.end_agreement_call(context, at);
            return Some(outcome);
        }
    }

    /// The decision pending call number `at` of `context` took.
    fn pending_decision(&mut self, context: ContextId, at: usize) -> Option<Decision> {
        self.comms.get_mut(&context)?.agreement_calls[at]
            .decision
            .take()
    }

    /// A shrink's outcome from its decision: the new communicator installed, or its error;
    /// `None` when the candidate context id was taken somewhere and this rank entered the next
    /// agreement with a new one.
    fn shrunk(
        &mut self,
        context: ContextId,
        at: usize,
        out: &mut Outgoing,
    ) -> Option<Result<Agreed>> {
        let decision = self.pending_decision(context, at)?;
        let candidate = self.comms.get_mut(&context)?.agreement_calls[at]
            .candidate
            .take();
        if decision.flag & super::creation::ID_FREE == 0 {
            if let Some(candidate) = candidate {
                self.release_candidate(candidate);
            }
            return match self.contribute(context, AgreementCall::Shrink, out) {
                Ok((seq, flag, candidate)) => {
                    let pending = &mut self.comms.get_mut(&context)?.agreement_calls[at];
                    pending.seq = seq;
                    pending.flag = flag;
                    pending.candidate = candidate;
                    None
                }
                Err(error) => Some(Err(error)),
            };
        }
        let Some(candidate) = candidate else {
            return Some(Err(Error::Internal {
                reason: "a shrink decided on a context id it had not claimed".into(),
            }));
        };
        let survivors = match self.survivors(context, &decision) {
            Ok(survivors) => survivors,
            Err(error) => {
                self.release_candidate(candidate);
                return Some(Err(error));
            }
        };
        if !survivors.contains(&self.world_rank) {
            // The agreement found this rank failed (a false suspicion fenced it): it must halt
            // (`Engine::declared_failed`), and installs nothing.
            self.release_candidate(candidate);
            let rank = self.comms.get(&context).map_or(0, |state| state.rank);
            return Some(Err(Error::ProcFailed { rank }));
        }
        let size = survivors.len() as u32;
        let plan = super::creation::Plan {
            members: super::Members::list(survivors),
            global: FailureView::empty(size),
            color: 0,
        };
        let (rank, size) = self.install_plan(candidate, plan, self.world_rank, out);
        Some(Ok(Agreed::Shrunk(Installed {
            context: candidate,
            rank,
            size,
        })))
    }

    /// The candidate context id under which the driver is to start a spawn's new ranks now,
    /// as the joining communicator's (and then tell [`Engine::spawn_started`]); `None` when
    /// `call` is not a spawn waiting for that. A spawn whose id was taken somewhere asks
    /// again, with a new id: the ranks started under the old one are then the driver's to
    /// stop, as are those of a spawn that ends with an error.
    pub fn spawn_awaiting(&self, call: AgreementCallId) -> Option<ContextId> {
        let state = self.comms.get(&call.context)?;
        let pending = state.agreement_calls.iter().find(|c| c.id == call.id)?;
        let spawning = pending.spawning?;
        spawning.started.is_none().then_some(spawning.candidate)
    }

    /// The driver started a spawn's new ranks (`Some((first world rank, count))`) or could
    /// not (`None`) under the id [`Engine::spawn_awaiting`] gave: this rank enters the spawn's
    /// agreement with that answer and whether the id was free here. Its first messages are
    /// pushed on `out`.
    ///
    /// # Errors
    /// `Error::Comm` when `call` is not a spawn waiting for its start (or the communicator was
    /// freed).
    pub fn spawn_started(
        &mut self,
        call: AgreementCallId,
        started: Option<(WorldRank, u32)>,
        out: &mut Outgoing,
    ) -> Result<()> {
        let state = self.comm(call.context)?;
        let Some(pending) = state.agreement_calls.iter_mut().find(|c| c.id == call.id) else {
            return Err(Error::Comm);
        };
        let Some(spawning) = pending.spawning.as_mut().filter(|s| s.started.is_none()) else {
            return Err(Error::Comm);
        };
        spawning.started = Some(started);
        let flag = if spawning.free {
            super::creation::ID_FREE
        } else {
            0
        } | if started.is_some() {
            super::creation::STARTED
        } else {
            0
        };
        pending.flag = flag;
        let seq = state.enter_agreement(flag);
        state.drain_agreements(call.context, out);
        if let Some(pending) = state.agreement_calls.iter_mut().find(|c| c.id == call.id) {
            pending.seq = seq;
        }
        Ok(())
    }

    /// A spawn's outcome from its decision: the joining communicator installed, or the error
    /// every parent returns; `None` when the candidate id was taken somewhere and the call
    /// waits for the driver to start the ranks under a new one.
    fn spawn_outcome(
        &mut self,
        context: ContextId,
        at: usize,
        out: &mut Outgoing,
    ) -> Option<Result<Agreed>> {
        use super::creation::{ID_FREE, STARTED};
        let decision = self.pending_decision(context, at)?;
        let spawning = self.comms.get_mut(&context)?.agreement_calls[at]
            .spawning
            .take()?;
        let taken = decision.flag & ID_FREE == 0;
        let fails = decision.non_contributors.iter().next().is_some() || taken;
        if spawning.free && (fails || decision.flag & STARTED == 0) {
            self.release_candidate(spawning.candidate);
        }
        if let Some(rank) = decision.non_contributors.iter().next() {
            return Some(Err(Error::ProcFailed { rank }));
        }
        if decision.flag & STARTED == 0 {
            return Some(Err(Error::Spawn {
                reason: "a parent could not start the ranks".into(),
            }));
        }
        if taken {
            return match self.claim_spawn_candidate(context) {
                Ok((candidate, free)) => {
                    let pending = &mut self.comms.get_mut(&context)?.agreement_calls[at];
                    pending.spawning = Some(Spawning::new(candidate, free));
                    None
                }
                Err(error) => Some(Err(error)),
            };
        }
        // Every contributor started them (`STARTED` is their AND), the same ones.
        let Some(Some((first, count))) = spawning.started else {
            return Some(Err(Error::Internal {
                reason: "a spawn decided that ranks started that this parent did not start".into(),
            }));
        };
        let parents = self.members_of(context);
        let children = (first.0..first.0 + count).map(WorldRank);
        let joined: Vec<WorldRank> = parents.into_iter().chain(children).collect();
        let size = joined.len() as u32;
        let plan = super::creation::Plan {
            members: super::Members::list(joined),
            global: FailureView::empty(size),
            color: 0,
        };
        let candidate = spawning.candidate;
        let (rank, size) = self.install_plan(candidate, plan, self.world_rank, out);
        Some(Ok(Agreed::Created(Some(Installed {
            context: candidate,
            rank,
            size,
        }))))
    }

    /// Agreement call number `at` of `context` ended: forgotten, its slots free.
    fn end_agreement_call(&mut self, context: ContextId, at: usize) {
        let Some(state) = self.comms.get_mut(&context) else {
            return;
        };
        // (Kept in call order: creations run in it.)
        let ended = state.agreement_calls.remove(at);
        self.end_slots(context, &ended.call);
    }

    /// Runs the creations pending on `context` in the order this rank called them, each as
    /// far as it goes: the first that waits (for its exchange or its decision) stops the
    /// others, so each enters the creation series only after the earlier ones ended here, as
    /// at every other rank (a creation whose id was taken somewhere enters it again before
    /// the next one does). An ended creation keeps its outcome for its call's poll. Run when
    /// a creation starts, when a message or a failure may have decided the series' current
    /// agreement, and when a creation is polled, so that creations progress while their
    /// callers wait for something else.
    pub(super) fn advance_creations(&mut self, context: ContextId, out: &mut Outgoing) {
        let mut from = 0;
        loop {
            let Some(state) = self.comms.get_mut(&context) else {
                return;
            };
            let Some(at) = state.agreement_calls[from..]
                .iter()
                .position(|c| c.creating.is_some())
                .map(|next| from + next)
            else {
                return;
            };
            let mut decided = std::mem::take(&mut state.agreement_calls[at].decided);
            let outcome = self.poll_creation_call(context, at, out, &mut decided);
            let Some(state) = self.comms.get_mut(&context) else {
                return;
            };
            let pending = &mut state.agreement_calls[at];
            pending.decided = decided;
            let Some(outcome) = outcome else {
                return;
            };
            pending.finished = Some(outcome);
            self.end_creation(context, out);
            from = at + 1;
        }
    }

    /// Frees the slots `call` held on `context`.
    fn end_slots(&mut self, context: ContextId, call: &AgreementCall) {
        let (collective, series) = call.slots();
        self.end_agreement(context, collective, series);
    }
}

#[cfg(test)]
mod tests {
    //! Agreement calls as operations, over a small network of engines.

    use super::super::test_net::Net;
    use super::super::{derive_context, Creation, Installed, Kind, Schedule};
    use super::*;
    use crate::packet::WORLD_CONTEXT;
    use crate::RankSet;

    fn agree(flag: u32) -> AgreementCall {
        AgreementCall::Agree {
            flag,
            holds_series: true,
        }
    }

    /// Rank 0's world views hold no failure, and a call that needs both slots starts there.
    fn views_unchanged_and_slots_free(net: &mut Net) {
        let global = net.engines[0].global_view(WORLD_CONTEXT).unwrap();
        assert_eq!(global.num_failed(), 0);
        net.start_call(0, AgreementCall::ValidateGlobal).unwrap();
    }

    fn start_everywhere(
        net: &mut Net,
        ranks: &[u32],
        call: AgreementCall,
    ) -> Vec<(u32, AgreementCallId)> {
        ranks
            .iter()
            .map(|&r| (r, net.start_call(r, call.clone()).unwrap()))
            .collect()
    }

    #[test]
    fn validate_global_agrees_on_the_failures_and_installs_them() {
        let mut net = Net::new(4, 1);
        net.kill(3);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::ValidateGlobal);
        let outcomes = net.finish_calls(&ids);
        for (outcome, &(rank, _)) in outcomes.iter().zip(&ids) {
            let Ok(Agreed::Global(global)) = outcome else {
                panic!("rank {rank}: {outcome:?}");
            };
            assert_eq!(global.failed_set(), RankSet::from_iter([3]));
            assert!(global.new_failures());
            let engine = &mut net.engines[rank as usize];
            assert_eq!(engine.global_view(WORLD_CONTEXT).unwrap(), *global);
            // L := G, and a new epoch: the call numbers start again.
            assert_eq!(engine.local_view(WORLD_CONTEXT).unwrap(), *global);
            assert_eq!(engine.next_collective_number(WORLD_CONTEXT), Some((1, 0)));
        }
    }

    #[test]
    fn agree_gives_the_and_of_the_flags_or_the_unacknowledged_failure() {
        let mut net = Net::new(3, 2);
        let ids: Vec<_> = (0..3)
            .map(|r| (r, net.start_call(r, agree(!(1 << r))).unwrap()))
            .collect();
        for outcome in net.finish_calls(&ids) {
            assert_eq!(outcome, Ok(Agreed::Flag(!0b111)));
        }
        net.kill(2);
        let ids = start_everywhere(&mut net, &[0, 1], agree(u32::MAX));
        for outcome in net.finish_calls(&ids) {
            assert_eq!(outcome, Err(Error::AgreeProcFailed { flag: u32::MAX }));
        }
        // Nothing changed the views, and the slots are free again.
        views_unchanged_and_slots_free(&mut net);
    }

    #[test]
    fn a_call_holding_a_slot_refuses_another_and_a_pending_iagree_queues_the_next() {
        let mut net = Net::new(2, 3);
        let first = net.start_call(0, AgreementCall::ValidateGlobal).unwrap();
        for call in [
            AgreementCall::ValidateGlobal,
            AgreementCall::Shrink,
            agree(1),
        ] {
            assert_eq!(net.start_call(0, call), Err(Error::ConcurrentCollective));
        }
        let pending = AgreementCall::Agree {
            flag: 1,
            holds_series: false,
        };
        assert_eq!(
            net.start_call(0, pending.clone()),
            Err(Error::ConcurrentCollective)
        );
        // Nor does a blocking collective of another thread start.
        assert_eq!(
            net.engines[0]
                .begin_collective(WORLD_CONTEXT, 0, true)
                .map(drop),
            Err(Error::ConcurrentCollective)
        );
        let other = net.start_call(1, AgreementCall::ValidateGlobal).unwrap();
        net.finish_calls(&[(0, first), (1, other)]);
        // A pending iagree holds nothing: a validate_global starts behind it and both decide,
        // in the order every rank started them.
        let ids: Vec<_> = (0..2)
            .map(|r| {
                let iagree = net.start_call(r, pending.clone()).unwrap();
                let validate = net.start_call(r, AgreementCall::ValidateGlobal).unwrap();
                [(r, iagree), (r, validate)]
            })
            .collect();
        let (_, decided) = net.poll_call(0, ids[0][1].1);
        assert!(decided.decisions.is_empty(), "decided before the iagree");
        let outcomes = net.finish_calls(&ids.concat());
        assert_eq!(outcomes[0], Ok(Agreed::Flag(1)));
        assert!(matches!(outcomes[1], Ok(Agreed::Global(_))));
    }

    #[test]
    fn validate_global_installs_its_epoch_once_this_ranks_schedules_have_finished() {
        let mut net = Net::new(3, 4);
        // Ranks 0 and 1 start a barrier that rank 2 never joins.
        let barriers: Vec<u64> = (0..2)
            .map(|r| {
                net.start(r, Schedule::barrier(&[0, 1, 2], r as usize, None))
                    .unwrap()
            })
            .collect();
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::ValidateGlobal);
        net.run();
        // Decided everywhere; rank 2, with no schedule, has its new G.
        assert!(matches!(
            net.poll_call(2, ids[2].1).0,
            Some(Ok(Agreed::Global(_)))
        ));
        let (outcome, decided) = net.poll_call(0, ids[0].1);
        assert_eq!(outcome, None, "installed over a running barrier");
        assert_eq!(decided.decisions.len(), 1, "the decision was taken");
        assert_eq!(
            net.engines[0].next_collective_number(WORLD_CONTEXT),
            Some((0, 1))
        );
        // Rank 2 dies: the barrier ends with its failure (not dropped by a new epoch), then
        // the call returns.
        net.kill(2);
        net.run();
        for r in 0..2 {
            assert_eq!(
                net.poll(r, barriers[r as usize]),
                Some(Err(Error::ProcFailed { rank: 2 }))
            );
            let (outcome, decided) = net.poll_call(r, ids[r as usize].1);
            assert!(
                matches!(outcome, Some(Ok(Agreed::Global(_)))),
                "{outcome:?}"
            );
            assert!(r == 0 || decided.decisions.len() == 1);
        }
    }

    fn shrunk(outcomes: &[Result<Agreed>]) -> (ContextId, Vec<(crate::Rank, u32)>) {
        let mut context = None;
        let mut ranks = Vec::new();
        for outcome in outcomes {
            let Ok(Agreed::Shrunk(made)) = outcome else {
                panic!("not shrunk: {outcome:?}");
            };
            assert!(context.is_none_or(|c| c == made.context), "two contexts");
            context = Some(made.context);
            ranks.push((made.rank, made.size));
        }
        (context.unwrap(), ranks)
    }

    #[test]
    fn shrink_installs_one_communicator_of_the_survivors_everywhere() {
        let mut net = Net::new(4, 5);
        net.kill(1);
        let ids = start_everywhere(&mut net, &[0, 2, 3], AgreementCall::Shrink);
        let (context, ranks) = shrunk(&net.finish_calls(&ids));
        assert_eq!(ranks, vec![(0, 3), (1, 3), (2, 3)]);
        for r in [0, 2, 3] {
            let engine = &net.engines[r as usize];
            let members: Vec<u32> = engine.members_of(context).iter().map(|w| w.0).collect();
            assert_eq!(members, vec![0, 2, 3]);
        }
        // The parent's views are unchanged; its slots are free again.
        views_unchanged_and_slots_free(&mut net);
    }

    #[test]
    fn a_shrink_whose_context_id_is_taken_somewhere_agrees_again_on_another() {
        let mut net = Net::new(3, 6);
        // Rank 1 holds a claim on the id the first agreement would install.
        let taken = derive_context(WORLD_CONTEXT, Kind::Shrink, 0, 0);
        net.engines[1].reserved.insert(taken);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Shrink);
        let mut outcomes = Vec::new();
        let mut decisions = vec![0; 3];
        for _ in 0..100 {
            net.run();
            outcomes = ids
                .iter()
                .map(|&(r, id)| {
                    let (outcome, decided) = net.poll_call(r, id);
                    decisions[r as usize] += decided.decisions.len();
                    outcome
                })
                .collect();
            if outcomes.iter().all(Option::is_some) {
                break;
            }
        }
        let outcomes: Vec<_> = outcomes.into_iter().map(Option::unwrap).collect();
        let (context, _) = shrunk(&outcomes);
        assert_ne!(context, taken);
        assert_eq!(context, derive_context(WORLD_CONTEXT, Kind::Shrink, 1, 0));
        assert_eq!(decisions, vec![2, 2, 2]);
        // Rank 1's own claim on the taken id is untouched.
        assert!(net.engines[1].reserved.contains(&taken));
    }

    #[test]
    fn a_rank_that_the_shrink_finds_failed_installs_nothing_and_must_halt() {
        // A false suspicion fenced rank 2 while it was alive, and the decision reached it
        // anyway (the simulator found such a run): it installs nothing and must halt.
        let mut net = Net::new(3, 7);
        let id = net.start_call(2, AgreementCall::Shrink).unwrap();
        let decision = Decision {
            failed: RankSet::from_iter([2]),
            non_contributors: RankSet::new(),
            flag: super::super::creation::ID_FREE | crate::engine::NOT_REVOKED,
            unacknowledged_failure: false,
        };
        let state = net.engines[2].comms.get_mut(&WORLD_CONTEXT).unwrap();
        state.decided.insert(0, decision);
        let reserved = net.engines[2].reserved.clone();
        assert_eq!(reserved.len(), 1, "the candidate is claimed");
        let (outcome, decided) = net.poll_call(2, id);
        assert_eq!(outcome, Some(Err(Error::ProcFailed { rank: 2 })));
        assert_eq!(decided.decisions.len(), 1);
        assert!(net.engines[2].declared_failed());
        assert!(
            net.engines[2].reserved.is_empty(),
            "the candidate is released"
        );
    }

    fn created(outcomes: &[Result<Agreed>]) -> Vec<Option<Installed>> {
        outcomes
            .iter()
            .map(|outcome| match outcome {
                Ok(Agreed::Created(made)) => *made,
                other => panic!("not created: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn dup_installs_one_communicator_with_the_parents_numbering_and_recognized_failures() {
        let mut net = Net::new(4, 11);
        net.kill(2);
        let ids = start_everywhere(&mut net, &[0, 1, 3], AgreementCall::ValidateGlobal);
        net.finish_calls(&ids);
        let ids = start_everywhere(&mut net, &[0, 1, 3], AgreementCall::Create(Creation::Dup));
        let made = created(&net.finish_calls(&ids));
        let context = made[0].unwrap().context;
        for (&(rank, _), made) in ids.iter().zip(&made) {
            let made = made.expect("a member");
            assert_eq!((made.context, made.rank, made.size), (context, rank, 4));
            let global = net.engines[rank as usize].global_view(context).unwrap();
            assert_eq!(global.failed_set(), RankSet::from_iter([2]));
            assert!(!global.new_failures(), "recognized failures are NULL | OLD");
        }
    }

    #[test]
    fn split_exchanges_colors_and_keys_and_orders_each_color_by_key() {
        let mut net = Net::new(5, 12);
        // Colors 0, 1, 0, undefined, 1; keys reverse the ranks.
        let colors = [Some(0), Some(1), Some(0), None, Some(1)];
        let ids: Vec<_> = (0..5u32)
            .map(|r| {
                let creation = Creation::Split {
                    color: colors[r as usize],
                    key: -(r as i32),
                };
                (
                    r,
                    net.start_call(r, AgreementCall::Create(creation)).unwrap(),
                )
            })
            .collect();
        let made = created(&net.finish_calls(&ids));
        assert!(made[3].is_none(), "the undefined color gets nothing");
        let members = |r: usize| -> Vec<u32> {
            let made = made[r].unwrap();
            let engine = &net.engines[r];
            engine
                .members_of(made.context)
                .iter()
                .map(|w| w.0)
                .collect()
        };
        assert_eq!(members(0), vec![2, 0]);
        assert_eq!(members(2), vec![2, 0]);
        assert_eq!(members(1), vec![4, 1]);
        assert_eq!(made[0].unwrap().context, made[2].unwrap().context);
        assert_ne!(made[0].unwrap().context, made[1].unwrap().context);
        assert_eq!((made[2].unwrap().rank, made[0].unwrap().rank), (0, 1));
    }

    #[test]
    fn create_keeps_the_groups_participants_in_the_groups_order() {
        let mut net = Net::new(4, 13);
        let group = vec![WorldRank(3), WorldRank(1)];
        let call = AgreementCall::Create(Creation::Create { group });
        let ids = start_everywhere(&mut net, &[0, 1, 2, 3], call);
        let made = created(&net.finish_calls(&ids));
        assert!(made[0].is_none() && made[2].is_none(), "outside the group");
        assert_eq!((made[3].unwrap().rank, made[1].unwrap().rank), (0, 1));
        assert_eq!(made[3].unwrap().size, 2);
    }

    #[test]
    fn a_creation_with_an_unrecognized_failure_fails_alike_everywhere() {
        let mut net = Net::new(4, 14);
        net.kill(1);
        let creation = Creation::Split {
            color: Some(0),
            key: 0,
        };
        for call in [Creation::Dup, creation] {
            let ids = start_everywhere(&mut net, &[0, 2, 3], AgreementCall::Create(call));
            for outcome in net.finish_calls(&ids) {
                assert_eq!(outcome, Err(Error::ProcFailed { rank: 1 }));
            }
        }
        // Once G holds it, the same calls succeed over the survivors.
        let ids = start_everywhere(&mut net, &[0, 2, 3], AgreementCall::ValidateGlobal);
        net.finish_calls(&ids);
        let ids = start_everywhere(&mut net, &[0, 2, 3], AgreementCall::Create(Creation::Dup));
        assert!(created(&net.finish_calls(&ids)).iter().all(Option::is_some));
    }

    #[test]
    fn a_creation_whose_context_id_is_taken_somewhere_agrees_again() {
        let mut net = Net::new(3, 15);
        let taken = derive_context(WORLD_CONTEXT, Kind::Dup, 0, 0);
        net.engines[2].reserved.insert(taken);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Create(Creation::Dup));
        let made = created(&net.finish_calls(&ids));
        let context = made[0].unwrap().context;
        assert_eq!(context, derive_context(WORLD_CONTEXT, Kind::Dup, 1, 0));
        assert!(made.iter().all(|m| m.unwrap().context == context));
        assert!(
            net.engines[2].reserved.contains(&taken),
            "rank 2's own claim stays"
        );
    }

    /// The contexts of `made` (every rank a member), checked equal at every rank.
    fn one_context(made: &[Option<Installed>]) -> ContextId {
        let context = made[0].expect("a member").context;
        assert!(made.iter().all(|m| m.expect("a member").context == context));
        context
    }

    #[test]
    fn pending_dups_end_in_call_order_whatever_order_each_rank_polls_them_in() {
        let mut net = Net::new(3, 18);
        let dup = || AgreementCall::Create(Creation::Dup);
        let first = start_everywhere(&mut net, &[0, 1, 2], dup());
        let second = start_everywhere(&mut net, &[0, 1, 2], dup());
        // Ranks 0 and 2 ask for the second first, rank 1 for the first.
        let order = [
            second[0], first[1], second[2], first[0], second[1], first[2],
        ];
        let made = created(&net.finish_calls(&order));
        let second_made = one_context(&[made[0], made[4], made[2]]);
        let first_made = one_context(&[made[3], made[1], made[5]]);
        assert_eq!(first_made, derive_context(WORLD_CONTEXT, Kind::Dup, 0, 0));
        assert_eq!(second_made, derive_context(WORLD_CONTEXT, Kind::Dup, 1, 0));
    }

    #[test]
    fn a_pending_dup_progresses_while_nobody_polls_it() {
        let mut net = Net::new(3, 19);
        let dup = || AgreementCall::Create(Creation::Dup);
        let first = start_everywhere(&mut net, &[0, 1, 2], dup());
        let second = start_everywhere(&mut net, &[0, 1, 2], dup());
        // No poll: the messages alone run both creations (the second one enters the series
        // when the first one's decision arrives), and both communicators are installed.
        net.run();
        for engine in &net.engines {
            for seq in [0, 1] {
                let context = derive_context(WORLD_CONTEXT, Kind::Dup, seq, 0);
                assert_eq!(engine.members_of(context).len(), 3, "dup {seq}");
            }
        }
        // The first poll of each call gives its outcome.
        for &(rank, id) in first.iter().chain(&second) {
            let (outcome, _) = net.poll_call(rank, id);
            assert!(matches!(outcome, Some(Ok(Agreed::Created(Some(_))))));
        }
    }

    #[test]
    fn a_pending_dup_whose_id_is_taken_agrees_again_before_the_next_one_enters() {
        let mut net = Net::new(3, 20);
        net.engines[1]
            .reserved
            .insert(derive_context(WORLD_CONTEXT, Kind::Dup, 0, 0));
        let dup = || AgreementCall::Create(Creation::Dup);
        let first = start_everywhere(&mut net, &[0, 1, 2], dup());
        let second = start_everywhere(&mut net, &[0, 1, 2], dup());
        // Rank 0 polls the second first: the first one's second agreement comes before it.
        let order = [
            second[0], first[0], first[1], second[1], second[2], first[2],
        ];
        let made = created(&net.finish_calls(&order));
        let second_made = one_context(&[made[0], made[3], made[4]]);
        let first_made = one_context(&[made[1], made[2], made[5]]);
        assert_eq!(first_made, derive_context(WORLD_CONTEXT, Kind::Dup, 1, 0));
        assert_eq!(second_made, derive_context(WORLD_CONTEXT, Kind::Dup, 2, 0));
    }

    #[test]
    fn a_pending_dup_holds_no_slot() {
        let mut net = Net::new(3, 21);
        let dups = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Create(Creation::Dup));
        // A blocking agreement call, then a blocking split, run while it is pending.
        let global = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::ValidateGlobal);
        for outcome in net.finish_calls(&global) {
            assert!(matches!(outcome, Ok(Agreed::Global(_))), "{outcome:?}");
        }
        let split = AgreementCall::Create(Creation::Split {
            color: Some(0),
            key: 0,
        });
        let splits = start_everywhere(&mut net, &[0, 1, 2], split);
        let split_made = one_context(&created(&net.finish_calls(&splits)));
        // The split entered the creation series after the dup.
        assert_eq!(split_made, derive_context(WORLD_CONTEXT, Kind::Split, 1, 0));
        let dup_made = one_context(&created(&net.finish_calls(&dups)));
        assert_eq!(dup_made, derive_context(WORLD_CONTEXT, Kind::Dup, 0, 0));
    }

    #[test]
    fn a_creation_on_a_revoked_communicator_is_refused_and_releases_its_peers() {
        let mut net = Net::new(3, 16);
        let ids = start_everywhere(&mut net, &[0, 1], AgreementCall::Create(Creation::Dup));
        // Rank 2 revokes instead of calling: its peers' creation ends with Revoked.
        let mut out = Outgoing::new();
        net.engines[2].revoke(WORLD_CONTEXT, None, &mut out);
        net.push(2, out);
        for outcome in net.finish_calls(&ids) {
            assert_eq!(outcome, Err(Error::Revoked));
        }
        assert_eq!(
            net.start_call(2, AgreementCall::Create(Creation::Dup)),
            Err(Error::Revoked)
        );
        // The refused start held nothing: an agreement call still starts there.
        net.start_call(2, AgreementCall::ValidateGlobal).unwrap();
    }

    #[test]
    fn polling_a_call_of_a_freed_communicator_or_an_unknown_call_is_an_error() {
        let mut net = Net::new(2, 8);
        let id = net.start_call(0, agree(1)).unwrap();
        let unknown = AgreementCallId { id: 99, ..id };
        assert_eq!(net.poll_call(0, unknown).0, Some(Err(Error::Comm)));
        let stranger = AgreementCallId {
            context: 12345,
            ..id
        };
        assert_eq!(net.poll_call(0, stranger).0, Some(Err(Error::Comm)));
    }

    /// Runs the network and the spawn calls `ids`, starting the new ranks whenever a parent's
    /// call asks (`start(rank, candidate)` gives the transport's answer there), until every
    /// call has its outcome; the outcomes and the candidate ids each parent was asked for.
    fn drive_spawn(
        net: &mut Net,
        ids: &[(u32, AgreementCallId)],
        start: impl Fn(u32, ContextId) -> Option<(WorldRank, u32)>,
    ) -> (Vec<Result<Agreed>>, Vec<Vec<ContextId>>) {
        let mut outcomes: Vec<Option<Result<Agreed>>> = vec![None; ids.len()];
        let mut asked = vec![Vec::new(); ids.len()];
        for _ in 0..1000 {
            net.run();
            for (at, &(rank, id)) in ids.iter().enumerate() {
                if outcomes[at].is_some() {
                    continue;
                }
                if let Some(candidate) = net.engines[rank as usize].spawn_awaiting(id) {
                    asked[at].push(candidate);
                    let mut out = Outgoing::new();
                    net.engines[rank as usize]
                        .spawn_started(id, start(rank, candidate), &mut out)
                        .unwrap();
                    net.push(rank, out);
                    continue;
                }
                outcomes[at] = net.poll_call(rank, id).0;
            }
            if outcomes.iter().all(Option::is_some) {
                return (outcomes.into_iter().flatten().collect(), asked);
            }
        }
        panic!("the spawns never finished: {outcomes:?}");
    }

    #[test]
    fn spawn_asks_for_a_start_and_installs_the_joining_communicator() {
        let mut net = Net::new(3, 17);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Spawn);
        // Nothing is agreed before the driver has started the ranks.
        for &(rank, id) in &ids {
            assert_eq!(net.poll_call(rank, id).0, None);
        }
        // The transport started world ranks 3 and 4 (as it does once for every parent).
        let (outcomes, asked) = drive_spawn(&mut net, &ids, |_, _| Some((WorldRank(3), 2)));
        let made = created(&outcomes);
        let candidate = derive_context(WORLD_CONTEXT, Kind::Spawn, 0, 0);
        assert_eq!(
            asked,
            vec![vec![candidate]; 3],
            "one start each, the same id"
        );
        for (rank, made) in made.into_iter().enumerate() {
            let made = made.expect("every parent is a member");
            assert_eq!(
                (made.context, made.rank, made.size),
                (candidate, rank as u32, 5)
            );
            let members: Vec<u32> = net.engines[rank]
                .members_of(candidate)
                .iter()
                .map(|w| w.0)
                .collect();
            assert_eq!(
                members,
                vec![0, 1, 2, 3, 4],
                "parents first, then the new ranks"
            );
        }
        views_unchanged_and_slots_free(&mut net);
    }

    #[test]
    fn a_spawn_that_one_parent_could_not_start_fails_everywhere_and_frees_its_id() {
        let mut net = Net::new(3, 18);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Spawn);
        let (outcomes, _) = drive_spawn(&mut net, &ids, |rank, _| {
            (rank != 1).then_some((WorldRank(3), 1))
        });
        for outcome in outcomes {
            assert!(matches!(outcome, Err(Error::Spawn { .. })), "{outcome:?}");
        }
        for engine in &net.engines {
            assert!(engine.reserved.is_empty(), "the candidate id is released");
        }
        views_unchanged_and_slots_free(&mut net);
    }

    #[test]
    fn a_parent_dead_before_contributing_fails_the_spawn_with_its_rank() {
        let mut net = Net::new(3, 19);
        net.kill(2);
        let ids = start_everywhere(&mut net, &[0, 1], AgreementCall::Spawn);
        let (outcomes, _) = drive_spawn(&mut net, &ids, |_, _| Some((WorldRank(3), 1)));
        for outcome in outcomes {
            assert_eq!(outcome, Err(Error::ProcFailed { rank: 2 }));
        }
        assert!(net.engines[0].reserved.is_empty());
    }

    #[test]
    fn a_spawn_whose_id_is_taken_somewhere_asks_for_a_start_under_another() {
        let mut net = Net::new(3, 20);
        let taken = derive_context(WORLD_CONTEXT, Kind::Spawn, 0, 0);
        net.engines[2].reserved.insert(taken);
        let ids = start_everywhere(&mut net, &[0, 1, 2], AgreementCall::Spawn);
        let (outcomes, asked) = drive_spawn(&mut net, &ids, |_, _| Some((WorldRank(3), 1)));
        let again = derive_context(WORLD_CONTEXT, Kind::Spawn, 1, 0);
        assert_eq!(asked, vec![vec![taken, again]; 3]);
        for made in created(&outcomes) {
            assert_eq!(made.unwrap().context, again);
        }
        // Rank 2's own claim on the taken id is untouched; the others released theirs.
        assert!(net.engines[2].reserved.contains(&taken));
        assert!(!net.engines[0].reserved.contains(&taken));
    }

    #[test]
    fn a_start_answer_for_a_call_that_asked_none_is_refused() {
        let mut net = Net::new(2, 21);
        let id = net.start_call(0, agree(1)).unwrap();
        let mut out = Outgoing::new();
        assert_eq!(
            net.engines[0].spawn_started(id, None, &mut out),
            Err(Error::Comm)
        );
        let spawn = net.start_call(1, AgreementCall::Spawn).unwrap();
        net.engines[1].spawn_started(spawn, None, &mut out).unwrap();
        assert_eq!(
            net.engines[1].spawn_started(spawn, None, &mut out),
            Err(Error::Comm),
            "answered twice"
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's protocol state: its communicators, its detector's knowledge, its pending requests.
//!
//! The engine is driven from two sides: the rank's own threads (posting receives, validating) and
//! whatever delivers traffic to the rank (another rank's thread in-process, a progress thread for
//! sockets). Both lock the [`Endpoint`]'s engine, change it, collect the packets it wants sent,
//! unlock, and only then hand those packets to the transport: no thread ever holds two engines.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use runthrough_core::agreement::{AgreementSeries, Contribution, Participants};
use runthrough_core::fault::{Collective, Injector, Sending, Trigger};
use runthrough_core::matching::{unmatched_outcome, Envelope, Matcher, PeerOutcome, ReceiveId};
use runthrough_core::{Error, FailureView, Rank, RankSet, Result};
use slab::Slab;

use crate::flow::{self, Flow};
use crate::signal::Signal;
use runthrough_core::packet::{
    ContextId, Lane, Outgoing, Packet, Payload, CREATION_SERIES, WORLD_CONTEXT,
};

/// A communicator's members: comm rank -> world rank.
#[derive(Debug, Clone)]
pub(crate) enum Members {
    /// Comm rank r is world rank r.
    Identity(u32),
    /// An explicit list, with its inverse.
    List {
        world_of: Arc<[u32]>,
        comm_of: Arc<BTreeMap<u32, Rank>>,
    },
}

impl Members {
    /// A list of world ranks, in comm-rank order.
    #[allow(dead_code)]
    pub(crate) fn list(world_of: Vec<u32>) -> Self {
        let comm_of = world_of
            .iter()
            .enumerate()
            .map(|(c, &w)| (w, c as Rank))
            .collect();
        Members::List {
            world_of: Arc::from(world_of),
            comm_of: Arc::new(comm_of),
        }
    }

    pub(crate) fn size(&self) -> u32 {
        match self {
            Members::Identity(n) => *n,
            Members::List { world_of, .. } => world_of.len() as u32,
        }
    }

    pub(crate) fn world_of(&self, rank: Rank) -> u32 {
        match self {
            Members::Identity(_) => rank,
            Members::List { world_of, .. } => world_of[rank as usize],
        }
    }

    pub(crate) fn comm_of(&self, world: u32) -> Option<Rank> {
        match self {
            Members::Identity(n) => (world < *n).then_some(world),
            Members::List { comm_of, .. } => comm_of.get(&world).copied(),
        }
    }

    /// The world rank of comm rank `rank`, if it is one.
    pub(crate) fn try_world_of(&self, rank: Rank) -> Option<u32> {
        match self {
            Members::Identity(n) => (rank < *n).then_some(rank),
            Members::List { world_of, .. } => world_of.get(rank as usize).copied(),
        }
    }
}

/// A received message (or the `MPI_PROC_NULL` outcome) waiting for its request's owner.
#[derive(Debug)]
pub(crate) struct Received {
    /// `None` for `MPI_PROC_NULL` completions.
    pub(crate) envelope: Option<Envelope>,
    pub(crate) payload: Payload,
}

/// The state of one posted receive.
#[derive(Debug)]
pub(crate) enum Slot {
    /// Posted, not yet matched.
    Pending,
    /// Finished: a message, `MPI_PROC_NULL`, or an error.
    Complete(Result<Received>),
}

/// One communicator at one rank.
#[derive(Debug)]
pub(crate) struct CommState {
    pub(crate) members: Members,
    pub(crate) rank: Rank,
    /// Comm ranks this rank's detector knows failed (a superset of L's failed ranks).
    pub(crate) known_failed: RankSet,
    /// The same ranks in the order this rank learned of them (those of the initial G first, in
    /// rank order); only appended to.
    pub(crate) detected: Vec<Rank>,
    pub(crate) local: FailureView,
    pub(crate) global: FailureView,
    pub(crate) matcher: Matcher<Payload>,
    pub(crate) freed: bool,
    /// Collective traffic of the current epoch, matched by collective number (as the tag).
    pub(crate) collective_matcher: Matcher<Payload>,
    /// Collective traffic from senders already in the next epoch.
    pub(crate) collective_early: Vec<(Envelope, Payload)>,
    /// The collective epoch: starts at 0, one more after each `validate_global`.
    pub(crate) epoch: u32,
    /// Collectives begun in this epoch at this rank.
    pub(crate) collective_sequence: u32,
    /// Whether a collective call (validate_global included) is running on this communicator.
    pub(crate) collective_active: bool,
    /// The participants of collectives: the OK ranks of G, in order.
    pub(crate) participants: Arc<[Rank]>,
    /// The same, as the agreement protocol takes them (rebuilt only when G changes).
    pub(crate) agreement_participants: Arc<Participants>,
    /// The agreements of this communicator's `validate_global`, `agree` and `shrink` calls.
    pub(crate) agreements: AgreementSeries,
    /// The agreements of the communicator creations (`dup`, `split`, `create`) on this
    /// communicator: a series of its own, so that a rank can take part in one without calling
    /// it once the communicator is revoked (see `crate::communicators`).
    pub(crate) creations: AgreementSeries,
    /// Whether a creation call runs on this communicator at this rank.
    pub(crate) creating: bool,
    /// Whether this rank's latest contribution to the creation series said "revoked".
    pub(crate) revoke_contributed: bool,
    /// Whether the communicator has been revoked (SPEC §3.5).
    pub(crate) revoked: bool,
    /// `create_group` calls made on it so far, by (tag, hash of the group's members): the
    /// call's number among those with the same tag and group, which every member counts alike.
    pub(crate) group_creations: std::collections::BTreeMap<(i32, u64), u64>,
}

impl CommState {
    pub(crate) fn new(members: Members, rank: Rank, global: FailureView) -> Self {
        CommState {
            rank,
            known_failed: global.failed_set(),
            detected: global.failed_set().iter().collect(),
            local: global.clone(),
            global,
            matcher: Matcher::default(),
            freed: false,
            collective_matcher: Matcher::default(),
            collective_early: Vec::new(),
            epoch: 0,
            collective_sequence: 0,
            collective_active: false,
            participants: Arc::from(Vec::new()),
            agreement_participants: Arc::new(Participants::new(0, &RankSet::new())),
            agreements: AgreementSeries::new(rank),
            creations: AgreementSeries::new(rank),
            creating: false,
            revoke_contributed: false,
            revoked: false,
            members,
            group_creations: std::collections::BTreeMap::new(),
        }
        .with_participants()
    }

    fn with_participants(mut self) -> Self {
        self.rebuild_participants();
        self
    }

    /// The participants of collectives and agreements from G.
    fn rebuild_participants(&mut self) {
        self.participants = (0..self.members.size())
            .filter(|&r| !self.global.is_failed(r))
            .collect();
        self.agreement_participants = Arc::new(Participants::new(
            self.members.size(),
            &self.global.failed_set(),
        ));
    }

    /// A participant of collectives that this rank knows failed but G does not recognize: while
    /// there is one, collectives are disabled here (SPEC §3.3).
    pub(crate) fn unrecognized_failure(&self) -> Option<Rank> {
        if self.known_failed.len() == self.global.num_failed() {
            return None; // G ⊆ known_failed, so equal sizes mean equal sets
        }
        self.known_failed
            .iter()
            .find(|&r| !self.global.is_failed(r))
    }

    /// Moves the agreement protocols' pending messages (both series) into `out`.
    pub(crate) fn drain_agreements(&mut self, context: ContextId, out: &mut Outgoing) {
        while let Some((to, seq, message)) = self.agreements.poll_transmit() {
            let packet = Packet::Agreement {
                context,
                source: self.rank,
                seq,
                message,
            };
            out.push((self.members.world_of(to), packet));
        }
        while let Some((to, seq, message)) = self.creations.poll_transmit() {
            let packet = Packet::Agreement {
                context,
                source: self.rank,
                seq: seq | CREATION_SERIES,
                message,
            };
            out.push((self.members.world_of(to), packet));
        }
    }

    /// Non-local operations other than agreements: `Error::Revoked` once revoked (SPEC §3.5).
    pub(crate) fn check_not_revoked(&self) -> Result<()> {
        if self.revoked {
            Err(Error::Revoked)
        } else {
            Ok(())
        }
    }

    /// This rank enters the next call of the creation series with `flag`; returns its number.
    /// The participants are all ranks of the communicator: ranks recognized as failed are
    /// known failed to every detector and skipped, and a rank that joins without a creation call
    /// (after a revocation) needs no agreed G to do so.
    pub(crate) fn start_creation(&mut self, flag: u32) -> u64 {
        let participants = Arc::new(Participants::new(self.members.size(), &Default::default()));
        let contribution = Contribution {
            known_failed: self.known_failed.clone(),
            acknowledged: self.local.failed_set(),
            flag,
        };
        self.revoke_contributed = flag & crate::communicators::NOT_REVOKED == 0;
        self.creations.start(participants, contribution)
    }

    /// On a revoked communicator with no creation call running here: makes sure this rank has
    /// contributed "revoked" to the creation series' current call, so that peers inside a
    /// creation call that this rank will never make are released (with `Error::Revoked`).
    pub(crate) fn settle_revoked_creations(&mut self, context: ContextId, out: &mut Outgoing) {
        if self.revoked && !self.creating && !self.revoke_contributed {
            self.start_creation(!crate::communicators::NOT_REVOKED);
            self.drain_agreements(context, out);
        }
    }

    /// Installs a new G (after an agreement): L := G, a new collective epoch whose participants
    /// are the OK ranks of G; collective messages of older epochs are dropped (SPEC §2.1).
    pub(crate) fn install_global(&mut self, global: FailureView) {
        let same_failed = global.num_failed() == self.global.num_failed(); // G only grows
        self.local = global.clone();
        self.global = global;
        if !same_failed {
            self.rebuild_participants();
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.collective_sequence = 0;
        let stale: Vec<ReceiveId> = self.collective_matcher.take_all_posted();
        debug_assert!(
            stale.is_empty(),
            "no collective is running during validate_global"
        );
        if self.collective_matcher.unexpected_len() > 0 {
            self.collective_matcher = Matcher::default(); // the old epoch's messages
        }
        for (envelope, payload) in self.collective_early.drain(..) {
            let bytes = payload.len();
            let matched = self.collective_matcher.arrive(envelope, payload, bytes);
            debug_assert!(matched.is_none());
        }
    }

    /// This rank's detector learns that comm rank `rank` failed.
    fn learn_failure(&mut self, rank: Rank) {
        if self.known_failed.insert(rank) {
            self.detected.push(rank);
        }
    }

    /// Whether the detector knows of a failure in this communicator that L does not hold:
    /// the condition that makes wildcard receives report `ProcFailedPending` (SPEC §3.2).
    pub(crate) fn has_unacknowledged_failure(&self) -> bool {
        // L ⊆ known_failed always (validate_local copies from it, validate_global adds its
        // decision to it), so a larger known set means an unacknowledged failure.
        self.known_failed.len() > self.local.num_failed()
    }
}

/// A rank's whole protocol state.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) comms: BTreeMap<ContextId, CommState>,
    /// World ranks this rank's detector knows failed.
    pub(crate) known_failed: RankSet,
    pub(crate) slots: Slab<Slot>,
    /// Packets for communicators that do not exist here yet (a faster peer already uses a
    /// communicator that this rank's creation call has not installed): replayed at installation.
    pub(crate) early: BTreeMap<ContextId, Vec<(u32, Packet)>>,
    /// Context ids that a creation call in progress here has claimed.
    pub(crate) reserved: BTreeSet<ContextId>,
    /// Flow control of eager traffic, to and from every peer (`crate::flow`).
    pub(crate) flow: Flow,
    /// The synchronous sends of this rank that their receiver matched: (world rank of the
    /// receiver, the send's id), until the send's request sees it.
    pub(crate) sync_acks: BTreeSet<(u32, u64)>,
    /// Synchronous sends whose request was dropped before their acknowledgement: (world rank
    /// of the receiver, id); the acknowledgement is dropped when it comes.
    pub(crate) sync_abandoned: BTreeSet<(u32, u64)>,
    /// The id of this rank's next synchronous send.
    pub(crate) next_sync: u64,
}

impl Engine {
    fn new(world_rank: u32, world_size: u32) -> Self {
        let mut comms = BTreeMap::new();
        let members = Members::Identity(world_size);
        let world = CommState::new(members, world_rank, FailureView::empty(world_size));
        comms.insert(WORLD_CONTEXT, world);
        Engine {
            comms,
            known_failed: RankSet::new(),
            slots: Slab::new(),
            early: BTreeMap::new(),
            reserved: BTreeSet::new(),
            flow: Flow::new(world_size),
            sync_acks: BTreeSet::new(),
            sync_abandoned: BTreeSet::new(),
            next_sync: 0,
        }
    }

    /// The communicator `context`, if it exists here and was not freed.
    pub(crate) fn comm(&mut self, context: ContextId) -> Result<&mut CommState> {
        match self.comms.get_mut(&context) {
            Some(comm) if !comm.freed => Ok(comm),
            _ => Err(Error::Comm),
        }
    }

    /// Whether `context` is free for a new communicator here: not held (freed ones included),
    /// not claimed by another creation call, no traffic waiting for it.
    pub(crate) fn context_is_free(&self, context: ContextId) -> bool {
        !self.comms.contains_key(&context)
            && !self.reserved.contains(&context)
            && !self.early.contains_key(&context)
    }

    /// Installs a new communicator: it learns the failures this rank's detector knows of its
    /// members, and the traffic that arrived for it before it existed is delivered now.
    pub(crate) fn install(&mut self, context: ContextId, mut comm: CommState, out: &mut Outgoing) {
        self.reserved.remove(&context);
        for world in &self.known_failed {
            if let Some(rank) = comm.members.comm_of(world) {
                comm.learn_failure(rank);
                comm.agreements.handle_failure(rank);
                comm.creations.handle_failure(rank);
            }
        }
        self.comms.insert(context, comm);
        for (from, packet) in self.early.remove(&context).unwrap_or_default() {
            if let Some((lane, charge)) = flow_charge(&packet) {
                self.flow.unhold(lane, charge); // held while it waited; counted again now
            }
            self.deliver(from, packet, out);
        }
        self.flush_flow(out);
    }

    /// Drops the traffic buffered on `context` (revoked or freed: nothing can receive it any
    /// more) and gives its charges back to the senders.
    pub(crate) fn drop_buffered(&mut self, context: ContextId) {
        let Some(comm) = self.comms.get_mut(&context) else {
            return;
        };
        let point = comm.matcher.take_all_unexpected();
        let mut collective = comm.collective_matcher.take_all_unexpected();
        collective.append(&mut comm.collective_early);
        let members = comm.members.clone();
        for (lane, messages) in [(Lane::Point, point), (Lane::Collective, collective)] {
            for (envelope, payload) in messages {
                if let Some(world) = members.try_world_of(envelope.source) {
                    self.flow
                        .release_held(world, lane, flow::charge(payload.len()));
                }
            }
        }
    }

    /// Installs a new G on `context` ([`CommState::install_global`]): the collective messages
    /// of the old epoch still buffered are dropped and their charges given back.
    pub(crate) fn install_global(&mut self, context: ContextId, global: FailureView) {
        let Some(comm) = self.comms.get_mut(&context) else {
            return;
        };
        let stale = comm.collective_matcher.take_all_unexpected();
        comm.install_global(global);
        let members = comm.members.clone();
        for (envelope, payload) in stale {
            if let Some(world) = members.try_world_of(envelope.source) {
                self.flow
                    .release_held(world, Lane::Collective, flow::charge(payload.len()));
            }
        }
    }

    /// Moves the flow-control packets waiting to be sent into `out`.
    pub(crate) fn flush_flow(&mut self, out: &mut Outgoing) {
        if self.flow.has_due() {
            out.extend(self.flow.take_due());
        }
    }

    /// The communicator `context` is revoked here (by this rank, or at the first receipt of a
    /// `Revoke`): every pending receive on it completes with `Error::Revoked`, its buffered
    /// traffic is dropped (nothing can receive it any more), and the revocation is forwarded to
    /// every other member not known failed except `from`, the rank it came from. Every member
    /// forwards once, so a revocation that reached one live member reaches all of them, whoever
    /// dies meanwhile: n - 1 packets per member, O(n²) in all.
    pub(crate) fn revoke(&mut self, context: ContextId, from: Option<u32>, out: &mut Outgoing) {
        let Some(comm) = self.comms.get_mut(&context) else {
            self.early
                .entry(context)
                .or_default()
                .push((from.unwrap_or(u32::MAX), Packet::Revoke { context }));
            return;
        };
        if comm.revoked {
            return;
        }
        comm.revoked = true;
        let mut pending = comm.matcher.take_all_posted();
        pending.extend(comm.collective_matcher.take_all_posted());
        self.drop_buffered(context);
        self.flow.fail_context(context, &Err(Error::Revoked));
        self.flush_flow(out);
        let Some(comm) = self.comms.get_mut(&context) else {
            return;
        };
        comm.matcher = Matcher::default();
        comm.collective_matcher = Matcher::default();
        comm.collective_early.clear();
        for rank in 0..comm.members.size() {
            let world = comm.members.world_of(rank);
            if rank != comm.rank && !comm.known_failed.contains(rank) && Some(world) != from {
                out.push((world, Packet::Revoke { context }));
            }
        }
        comm.settle_revoked_creations(context, out);
        for id in pending {
            self.complete(id, Err(Error::Revoked));
        }
    }

    fn complete(&mut self, id: ReceiveId, outcome: Result<Received>) {
        if let Some(slot) = self.slots.get_mut(id as usize) {
            *slot = Slot::Complete(outcome);
        }
    }

    /// A packet from world rank `from` arrives.
    fn deliver(&mut self, from: u32, packet: Packet, out: &mut Outgoing) {
        let context = match &packet {
            Packet::Data { context, .. }
            | Packet::Collective { context, .. }
            | Packet::Agreement { context, .. }
            | Packet::Revoke { context } => *context,
            Packet::Credit { lane, bytes } => return self.flow.credit(from, *lane, *bytes),
            Packet::CreditWanted { lane } => return self.flow.credit_wanted(from, *lane),
            Packet::SyncAck { id } => {
                if !self.sync_abandoned.remove(&(from, *id)) {
                    self.sync_acks.insert((from, *id));
                }
                return;
            }
        };
        if !self.comms.contains_key(&context) {
            if let Some((lane, charge)) = flow_charge(&packet) {
                self.flow.hold(lane, charge);
            }
            self.early.entry(context).or_default().push((from, packet));
            return;
        }
        match packet {
            Packet::Credit { .. } | Packet::CreditWanted { .. } | Packet::SyncAck { .. } => {
                unreachable!("flow control and acknowledgements are handled above")
            }
            Packet::Revoke { context } => self.revoke(context, Some(from), out),
            Packet::Data {
                context,
                source,
                tag,
                payload,
            } => {
                let Some(comm) = self.comms.get_mut(&context) else {
                    return;
                };
                let bytes = payload.len();
                let charge = flow::charge(bytes);
                if comm.freed || comm.revoked || comm.members.try_world_of(source) != Some(from) {
                    return self.flow.release(from, Lane::Point, charge);
                }
                let envelope = Envelope { source, tag };
                match comm.matcher.arrive(envelope, payload, bytes) {
                    None => self.flow.hold(Lane::Point, charge),
                    Some((id, envelope, payload)) => {
                        self.flow.release(from, Lane::Point, charge);
                        let (envelope, payload) = matched(envelope, payload, from, out);
                        let received = Received {
                            envelope: Some(envelope),
                            payload,
                        };
                        self.complete(id, Ok(received));
                    }
                }
            }
            Packet::Agreement {
                context,
                source,
                seq,
                message,
            } => {
                let Some(comm) = self.comms.get_mut(&context) else {
                    return;
                };
                if seq & CREATION_SERIES != 0 {
                    comm.creations
                        .handle_message(source, seq & !CREATION_SERIES, message);
                } else {
                    comm.agreements.handle_message(source, seq, message);
                }
                comm.drain_agreements(context, out);
            }
            Packet::Collective {
                context,
                source,
                epoch,
                sequence,
                payload,
            } => {
                let Some(comm) = self.comms.get_mut(&context) else {
                    return;
                };
                let bytes = payload.len();
                let charge = flow::charge(bytes);
                if comm.freed || comm.revoked || comm.members.try_world_of(source) != Some(from) {
                    return self.flow.release(from, Lane::Collective, charge);
                }
                let envelope = Envelope {
                    source,
                    tag: sequence as i32,
                };
                if epoch == comm.epoch.wrapping_add(1) {
                    comm.collective_early.push((envelope, payload));
                    return self.flow.hold(Lane::Collective, charge);
                }
                if epoch != comm.epoch {
                    // A collective of an older epoch: discarded.
                    return self.flow.release(from, Lane::Collective, charge);
                }
                match comm.collective_matcher.arrive(envelope, payload, bytes) {
                    None => self.flow.hold(Lane::Collective, charge),
                    Some((id, envelope, payload)) => {
                        self.flow.release(from, Lane::Collective, charge);
                        let received = Received {
                            envelope: Some(envelope),
                            payload,
                        };
                        self.complete(id, Ok(received));
                    }
                }
            }
        }
    }

    /// World rank `world` finalized and left (its transport said goodbye): it is no failure
    /// (it never enters `known_failed`, L or G, docs/semantics.md §3.4), but it no longer
    /// answers, so the agreements route around it as around a failed rank. That changes no
    /// decision: a rank departs only once it decided its finalize agreement, after every live
    /// participant accepted that value, so any later ballot proposes the same value, and a
    /// departed rank, having contributed, is never a non-contributor of it.
    pub(crate) fn peer_departed(&mut self, world: u32, out: &mut Outgoing) {
        if self.known_failed.contains(world) {
            return;
        }
        for (&context, comm) in self.comms.iter_mut() {
            if let Some(rank) = comm.members.comm_of(world) {
                comm.agreements.handle_failure(rank);
                comm.drain_agreements(context, out);
            }
        }
    }

    /// This rank's detector learns that world rank `world` failed.
    pub(crate) fn peer_failed(&mut self, world: u32, out: &mut Outgoing) {
        if !self.known_failed.insert(world) {
            return;
        }
        crate::timeline::learned(self, world);
        let mut failed_receives = Vec::new();
        for comm in self.comms.values_mut() {
            let Some(rank) = comm.members.comm_of(world) else {
                continue;
            };
            comm.learn_failure(rank);
            for id in comm.matcher.take_posted_from(rank) {
                failed_receives.push((id, rank));
            }
            for id in comm.collective_matcher.take_posted_from(rank) {
                failed_receives.push((id, rank));
            }
        }
        for (&context, comm) in self.comms.iter_mut() {
            if let Some(rank) = comm.members.comm_of(world) {
                comm.agreements.handle_failure(rank);
                comm.creations.handle_failure(rank);
                comm.drain_agreements(context, out);
            }
        }
        for (id, rank) in failed_receives {
            self.complete(id, Err(Error::ProcFailed { rank }));
        }
        // Sends waiting for credit from it: the outcome of SPEC §3.1 for their communicator.
        let comms = &self.comms;
        self.flow.peer_failed(world, |context, dest| {
            let Some(comm) = comms.get(&context) else {
                return Err(Error::ProcFailed { rank: dest });
            };
            match unmatched_outcome(comm.global.is_failed(dest), true) {
                PeerOutcome::ProcNull => Ok(()),
                _ => Err(Error::ProcFailed { rank: dest }),
            }
        });
    }
}

/// The lane and charge of a flow-controlled packet.
fn flow_charge(packet: &Packet) -> Option<(Lane, u64)> {
    match packet {
        Packet::Data { payload, .. } => Some((Lane::Point, flow::charge(payload.len()))),
        Packet::Collective { payload, .. } => Some((Lane::Collective, flow::charge(payload.len()))),
        _ => None,
    }
}

/// One rank: its engine, its wake-ups, and its fault-injection state.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) world_rank: u32,
    engine: Mutex<Engine>,
    pub(crate) signal: Signal,
    killed: AtomicBool,
    /// This rank's planned deaths at points of its calls (`runthrough_core::fault`).
    faults: Mutex<Injector>,
    /// Whether `faults` holds any: with none planned, a call, a collective or a send asks
    /// nothing more than this one load.
    faults_planned: AtomicBool,
    /// The engine's flow-control hint: a message waiting for credit may be sendable now.
    transmit_ready: Arc<AtomicBool>,
}

impl Endpoint {
    pub(crate) fn new(world_rank: u32, world_size: u32) -> Self {
        Endpoint::with_signal(world_rank, world_size, Signal::default())
    }

    /// An endpoint whose doorbell is `signal` (one that peers in other processes ring, for the
    /// shared-memory transport: [`Signal::shared`]).
    pub(crate) fn with_signal(world_rank: u32, world_size: u32, signal: Signal) -> Self {
        let engine = Engine::new(world_rank, world_size);
        let transmit_ready = engine.flow.ready_flag().shared();
        Endpoint {
            transmit_ready,
            world_rank,
            engine: Mutex::new(engine),
            signal,
            killed: AtomicBool::new(false),
            faults: Mutex::new(Injector::default()),
            faults_planned: AtomicBool::new(false),
        }
    }

    /// Locks the engine. A poisoned lock (a panic while holding it) is taken over: the engine's
    /// methods leave it consistent between statements that can panic.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Delivers a packet; returns what the engine wants sent in reply.
    pub(crate) fn deliver(&self, from: u32, packet: Packet) -> Outgoing {
        let mut out = Outgoing::new();
        {
            let mut engine = self.lock();
            engine.deliver(from, packet, &mut out);
            engine.flush_flow(&mut out);
        }
        self.signal.notify();
        out
    }

    /// Tells the detector that `world` failed; returns what the engine wants sent.
    pub(crate) fn peer_failed(&self, world: u32) -> Outgoing {
        let mut out = Outgoing::new();
        {
            let mut engine = self.lock();
            engine.peer_failed(world, &mut out);
            engine.flush_flow(&mut out);
        }
        self.signal.notify();
        out
    }

    /// Tells the agreements that `world` finalized and left (not a failure); returns what the
    /// engine wants sent.
    pub(crate) fn peer_departed(&self, world: u32) -> Outgoing {
        let mut out = Outgoing::new();
        self.lock().peer_departed(world, &mut out);
        self.signal.notify();
        out
    }

    /// Whether a message waiting for credit may be sendable now (without the engine's lock).
    #[inline]
    pub(crate) fn transmit_ready(&self) -> bool {
        self.transmit_ready.load(Ordering::SeqCst)
    }

    /// Sets the cap on unexpected bytes (`crate::flow`), before any traffic.
    pub(crate) fn set_unexpected_cap(&self, cap: usize, world_size: u32) {
        self.lock().flow.set_cap(cap, world_size);
    }

    pub(crate) fn is_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    pub(crate) fn mark_killed(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.signal.notify();
    }

    /// Plans this rank's deaths at points of its calls (fault injection), before the job
    /// runs: the triggers the runtime injects; the others are left out.
    pub(crate) fn plan_faults(&self, triggers: impl IntoIterator<Item = Trigger>) {
        let faults = Injector::new(triggers);
        let planned = !faults.is_empty();
        *self.faults.lock().unwrap_or_else(|e| e.into_inner()) = faults;
        self.faults_planned.store(planned, Ordering::SeqCst);
    }

    /// Asks the fault plan, if there is one (one load when there is none).
    #[inline]
    fn fault_here(&self, ask: impl FnOnce(&mut Injector) -> bool) -> bool {
        self.faults_planned.load(Ordering::Relaxed) && self.fault_here_slow(ask)
    }

    #[inline(never)]
    fn fault_here_slow(&self, ask: impl FnOnce(&mut Injector) -> bool) -> bool {
        ask(&mut self.faults.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The planned fault that fired, if one did, with the number of the communication call
    /// it fired in ([`Injector::fired`]): what a dying rank tells its launcher.
    pub(crate) fn fired_fault(&self) -> Option<(Trigger, u64)> {
        if !self.faults_planned.load(Ordering::Relaxed) {
            return None;
        }
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fired()
    }

    /// Whether this rank is planned to die as it starts a communication call.
    #[inline]
    pub(crate) fn dies_at_call(&self) -> bool {
        self.fault_here(Injector::dies_at_call)
    }

    /// Whether sending `packet` is the moment a planned fault kills this rank.
    #[inline]
    pub(crate) fn dies_before_sending(&self, packet: &Packet) -> bool {
        self.fault_here(|faults| {
            let sending = match packet {
                Packet::Agreement { context, seq, .. } => Sending::Agreement {
                    world: *context == WORLD_CONTEXT,
                    seq: *seq,
                },
                Packet::Collective { context, .. } => Sending::Collective { context: *context },
                Packet::Revoke { .. } => Sending::Revoke,
                _ => Sending::Other,
            };
            faults.dies_before_sending(sending)
        })
    }

    /// This rank enters a call of the collective `operation` on communicator `context`; true
    /// when a planned fault makes it die now, at entry.
    #[inline]
    pub(crate) fn collective_started(&self, operation: Collective, context: ContextId) -> bool {
        self.fault_here(|faults| faults.dies_at_collective_start(operation, context))
    }
}

/// A point-to-point message that a receive matched, from world rank `from`, as its sender gave
/// it: a synchronous one (a negative tag `!t`, its payload led by the sender's 8-byte id) is
/// acknowledged to `from` (a `SyncAck` pushed on `out`) and returned with tag `t` and the rest
/// of its payload. An ordinary message is returned as it is.
pub(crate) fn matched(
    envelope: Envelope,
    mut payload: Payload,
    from: u32,
    out: &mut Outgoing,
) -> (Envelope, Payload) {
    if envelope.tag >= 0 {
        return (envelope, payload);
    }
    let visible = Envelope {
        tag: !envelope.tag,
        ..envelope
    };
    if let Some(head) = payload.get(..SYNC_HEAD) {
        let mut id = [0u8; SYNC_HEAD];
        id.copy_from_slice(head);
        out.push((
            from,
            Packet::SyncAck {
                id: u64::from_le_bytes(id),
            },
        ));
        payload.drain(..SYNC_HEAD);
    }
    (visible, payload)
}

/// The bytes a synchronous message's payload starts with: the sender's id for it.
pub(crate) const SYNC_HEAD: usize = 8;

/// What a probe reports of a buffered message of `len` payload bytes: a synchronous one's tag
/// `t` and its data's length.
pub(crate) fn probed(envelope: Envelope, len: usize) -> (Envelope, usize) {
    if envelope.tag >= 0 {
        return (envelope, len);
    }
    (
        Envelope {
            tag: !envelope.tag,
            ..envelope
        },
        len.saturating_sub(SYNC_HEAD),
    )
}

#[cfg(test)]
mod synchronous_tests {
    use super::*;

    /// An acknowledgement is kept for the request that waits for it, or forgotten when its
    /// request was dropped first.
    #[test]
    fn acknowledgements_are_kept_or_forgotten() {
        let mut engine = Engine::new(0, 2);
        let mut out = Outgoing::new();
        engine.sync_abandoned.insert((1, 5));
        engine.deliver(1, Packet::SyncAck { id: 5 }, &mut out);
        assert!(engine.sync_acks.is_empty() && engine.sync_abandoned.is_empty());
        engine.deliver(1, Packet::SyncAck { id: 6 }, &mut out);
        assert!(engine.sync_acks.contains(&(1, 6)));
        assert!(out.is_empty());
    }

    /// A matched synchronous message is acknowledged to its sender and returned as sent; an
    /// ordinary one is returned untouched; probes see the synchronous one's tag and length.
    #[test]
    fn a_matched_synchronous_message_is_acknowledged() {
        let mut out = Outgoing::new();
        let mut payload = 9u64.to_le_bytes().to_vec();
        payload.extend_from_slice(&[1, 2, 3]);
        let envelope = Envelope { source: 2, tag: !4 };
        assert_eq!(
            probed(envelope, payload.len()),
            (Envelope { source: 2, tag: 4 }, 3)
        );
        let (seen, data) = matched(envelope, payload, 7, &mut out);
        assert_eq!((seen.tag, data), (4, vec![1, 2, 3]));
        assert_eq!(out, vec![(7, Packet::SyncAck { id: 9 })]);
        let ordinary = Envelope { source: 2, tag: 4 };
        let (seen, data) = matched(ordinary, vec![5], 7, &mut out);
        assert_eq!((seen, data, out.len()), (ordinary, vec![5], 1));
    }
}

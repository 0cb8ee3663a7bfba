// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's protocol state as a state machine: its communicators, what its detector knows,
//! its posted receives, flow control and synchronous-send acknowledgements.
//!
//! The [`Engine`] decides; it never waits, sends or reads a clock, and its state is private.
//! Its drivers (the `runthrough` crate's transports, and the simulator) reach it through three
//! kinds of methods:
//! - **inputs**: [`Engine::handle_packet`] (a packet from a peer),
//!   [`Engine::handle_peer_failed`] (the detector's news), [`Engine::handle_peer_departed`]
//!   (a peer finalized and left);
//! - **commands**, on behalf of one of the rank's threads: point-to-point
//!   ([`Engine::send_target`], [`Engine::admit`], [`Engine::queue_send`],
//!   [`Engine::match_or_post`], [`Engine::probe`], ...), collectives
//!   ([`Engine::start_schedule_as`], [`Engine::poll_schedule`], [`Engine::take_combine`],
//!   ...: every collective call is a schedule), the calls decided by an agreement
//!   ([`Engine::start_agreement_call`] / [`Engine::poll_agreement_call`]: `validate_global`,
//!   `agree`, `shrink`, and the creations `dup`, `split`, `create`, each one operation from
//!   its slots to its outcome), the local views ([`Engine::validate_local`]),
//!   [`Engine::revoke`], and the creations that need no agreement
//!   ([`Engine::install_plan`]: `create_group`, a communicator of one rank, `spawn`'s);
//! - **polls**: whether what a thread waits for has happened ([`Engine::poll_receive`],
//!   [`Engine::poll_agreement_call`], [`Engine::send_outcome`], ...) and what must be transmitted
//!   ([`Engine::poll_transmit`], [`Engine::take_due`]).
//!
//! Every method that makes the engine send pushes the packets on the [`Outgoing`] list the
//! driver passes in (or leaves them due for [`Engine::take_due`]); the driver transmits them
//! after releasing whatever lock it keeps the engine under. A thread that waits calls the
//! polls again whenever the engine changed (the driver's wake-up).
//!
//! Every collective call is a [`Schedule`] the engine runs ([`Engine::start_schedule_as`],
//! [`Engine::poll_schedule`]): a blocking call's thread advances its own schedule as it polls
//! (one such call at a time per communicator), a non-blocking one is run by the engine as its
//! messages arrive; any number of those may be outstanding, in call order.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::agreement::{AgreementSeries, Contribution, Participants};
use crate::flow::{self, SharedReady};
use crate::matching::{unmatched_outcome, Envelope, Matcher, PeerOutcome, ReceiveId};
use crate::packet::{ContextId, Lane, Outgoing, Packet, Payload, CREATION_SERIES, WORLD_CONTEXT};
use crate::{Error, FailureView, Rank, RankSet, Result, WorldRank, WorldSet};
use slab::Slab;

mod agreement;
mod collective;
mod creation;
mod point_to_point;
pub mod rma;
mod schedule;
pub use agreement::{Agreed, AgreementCall, AgreementCallId, Decided, Installed};
pub use collective::CollectiveCall;
pub use creation::{
    derive_context, verdict, Creation, Kind, Plan, Verdict, EXCHANGE_OK, ID_FREE, STARTED,
};
pub use schedule::{
    barrier_round, barrier_steps, BarrierStep, Combine, Doubling, Fold, Function, Hold, HostGroups,
    Output, Partners, Reduction, Schedule, Started, Step, BRUCK_MAX_BLOCK_BYTES, HOST_TREE_RADIX,
    MESSAGES_PER_PAIR, RING_MIN_BYTES, SEQUENCE_BITS,
};
mod send;
#[cfg(test)]
mod test_net;
mod views;
pub use point_to_point::{Posted, Probed, ReceivePoll};

/// A rank's flow-control state, part of its engine; its ready flag is shared with the rank's
/// waiting threads ([`SharedReady`]).
pub type Flow = flow::Flow<SharedReady>;

/// The flag word of a creation's agreement: set when the contributor's communicator was not
/// revoked (without it, everyone's creation call returns `Error::Revoked`).
pub const NOT_REVOKED: u32 = 1;

/// A communicator's members: comm rank -> world rank.
#[derive(Debug, Clone)]
pub enum Members {
    /// Comm rank r is world rank r.
    Identity(u32),
    /// An explicit list, with its inverse.
    List {
        /// Comm rank -> world rank.
        world_of: Arc<[WorldRank]>,
        /// World rank -> comm rank, for the members.
        comm_of: Arc<BTreeMap<WorldRank, Rank>>,
    },
}

impl Members {
    /// A list of world ranks, in comm-rank order.
    pub fn list(world_of: Vec<WorldRank>) -> Self {
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

    /// How many ranks.
    pub fn size(&self) -> u32 {
        match self {
            Members::Identity(n) => *n,
            Members::List { world_of, .. } => world_of.len() as u32,
        }
    }

    /// The world rank of comm rank `rank` (which must be one).
    #[inline]
    pub fn world_of(&self, rank: Rank) -> WorldRank {
        match self {
            Members::Identity(_) => WorldRank(rank),
            Members::List { world_of, .. } => world_of[rank as usize],
        }
    }

    /// The comm rank of world rank `world`, if it is a member.
    #[inline]
    pub fn comm_of(&self, world: WorldRank) -> Option<Rank> {
        match self {
            Members::Identity(n) => (world.0 < *n).then_some(world.0),
            Members::List { comm_of, .. } => comm_of.get(&world).copied(),
        }
    }

    /// The world rank of comm rank `rank`, if it is one.
    #[inline]
    pub fn try_world_of(&self, rank: Rank) -> Option<WorldRank> {
        match self {
            Members::Identity(n) => (rank < *n).then_some(WorldRank(rank)),
            Members::List { world_of, .. } => world_of.get(rank as usize).copied(),
        }
    }
}

/// A received message (or the `MPI_PROC_NULL` outcome) waiting for its request's owner.
#[derive(Debug)]
pub struct Received {
    /// `None` for `MPI_PROC_NULL` completions.
    pub envelope: Option<Envelope>,
    /// The message's bytes (empty for `MPI_PROC_NULL`).
    pub payload: Payload,
}

/// The state of one posted receive.
#[derive(Debug)]
pub(crate) enum Slot {
    /// Posted, not yet matched.
    Pending,
    /// Finished: a message, `MPI_PROC_NULL`, or an error.
    Complete(Result<Received>),
}

/// Where a communicator stands at one rank. A freed communicator keeps whether it had been
/// revoked: its agreement series still answer peers, and a revocation that reaches it is still
/// forwarded once (so every live member gets it, semantics §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Life {
    /// In use.
    Open,
    /// Revoked (semantics §3.5): non-local calls other than agreements fail with `Error::Revoked`.
    Revoked,
    /// Freed here (`MPI_Comm_free`); `revoked` says whether it had been revoked or was since.
    Freed {
        /// Revoked before or after it was freed.
        revoked: bool,
    },
}

impl Life {
    /// Neither revoked nor freed.
    pub(crate) fn is_open(self) -> bool {
        self == Life::Open
    }

    /// Revoked, freed or not.
    pub(crate) fn is_revoked(self) -> bool {
        matches!(self, Life::Revoked | Life::Freed { revoked: true })
    }

    /// Freed here.
    pub(crate) fn is_freed(self) -> bool {
        matches!(self, Life::Freed { .. })
    }

    /// Marks it revoked; false when it already was.
    pub(crate) fn revoke(&mut self) -> bool {
        match self {
            Life::Open => *self = Life::Revoked,
            Life::Freed { revoked: false } => *self = Life::Freed { revoked: true },
            Life::Revoked | Life::Freed { revoked: true } => return false,
        }
        true
    }

    /// Marks it freed; false when it already was.
    pub(crate) fn free(&mut self) -> bool {
        match *self {
            Life::Open => *self = Life::Freed { revoked: false },
            Life::Revoked => *self = Life::Freed { revoked: true },
            Life::Freed { .. } => return false,
        }
        true
    }
}

/// One communicator at one rank.
#[derive(Debug)]
pub(crate) struct CommState {
    /// Who the communicator's ranks are.
    pub(crate) members: Members,
    /// This rank's number in it.
    pub(crate) rank: Rank,
    /// Comm ranks this rank's detector knows failed (a superset of L's failed ranks).
    pub(crate) known_failed: RankSet,
    /// The same ranks in the order this rank learned of them (those of the initial G first, in
    /// rank order); only appended to.
    pub(crate) detected: Vec<Rank>,
    /// The local view L (semantics §2).
    pub(crate) local: FailureView,
    /// The agreed global view G (semantics §2).
    pub(crate) global: FailureView,
    /// Point-to-point receive matching.
    pub(crate) matcher: Matcher<Payload>,
    /// Open, revoked or freed here.
    pub(crate) life: Life,
    /// Collective traffic of the current epoch, matched by collective number (as the tag).
    pub(crate) collective_matcher: Matcher<Payload>,
    /// Collective traffic from senders already in the next epoch.
    pub(crate) collective_early: Vec<(Envelope, Payload)>,
    /// The collective epoch: starts at 0, one more after each `validate_global`.
    pub(crate) epoch: u32,
    /// Collectives begun in this epoch at this rank.
    pub(crate) collective_sequence: u32,
    /// How many collective calls this rank has started on the communicator, ever (the call
    /// numbers wrap: `schedule::SEQUENCE_BITS`).
    pub(crate) collective_calls: u64,
    /// Whether a collective call (validate_global included) is running on this communicator.
    pub(crate) collective_active: bool,
    /// The non-blocking collective calls started here and not yet polled, in call order
    /// (`schedule`).
    pub(crate) schedules: schedule::Schedules,
    /// How many of `schedules` are blocking calls' (`schedule::advance_delivered` leaves
    /// them to their threads).
    pub(crate) caller_driven: usize,
    /// The box of the last schedule whose outcome was taken, kept for the next one (a
    /// blocking call at two or more ranks boxes its schedule once per call: no allocation).
    pub(crate) spare: Option<Box<schedule::Running>>,
    /// The id of the next schedule started here.
    pub(crate) next_schedule: u64,
    /// Whether a call holds the main agreement series exclusively: a blocking `validate_global`,
    /// `agree` or `shrink` while it runs, or a pending `ivalidate_global` (whose G the next
    /// agreement's participants depend on). A pending `iagree` holds nothing: agreements
    /// started after it queue behind it ([`CommState::queued_agreements`]), and collectives run
    /// meanwhile (agreement traffic never mixes with theirs).
    pub(crate) agreement_active: bool,
    /// The agreement calls in progress here ([`Engine::start_agreement_call`]).
    pub(crate) agreement_calls: Vec<agreement::PendingCall>,
    /// The id of the next agreement call started here.
    pub(crate) next_agreement_call: u64,
    /// Agreements this rank started while its previous one had not decided here: their flags,
    /// in call order. The series runs one call at a time at a rank (a call starts once the
    /// previous one decided here); the head starts as soon as that happens
    /// ([`CommState::drain_agreements`]), with the contribution of that moment.
    pub(crate) queued_agreements: std::collections::VecDeque<u32>,
    /// Agreements started here whose decision no poll has taken yet (a few at most: a vector,
    /// which keeps its allocation, rather than a tree that allocates per call).
    pub(crate) unpolled: Vec<u64>,
    /// Decisions kept for their polls: the series forgets a call once the next one decided.
    pub(crate) decided: BTreeMap<u64, crate::agreement::Decision>,
    /// The participants of collectives: the OK ranks of G, in order.
    pub(crate) participants: Arc<[Rank]>,
    /// The same, as the agreement protocol takes them (rebuilt only when G changes).
    pub(crate) agreement_participants: Arc<Participants>,
    /// The host class of each world rank, where the job knows it alike at every rank
    /// ([`Engine::set_hosts`]).
    pub(crate) hosts: Option<Arc<[Option<u32>]>>,
    /// How the participants sit on hosts, when every participant's host is known and grouping
    /// them saves messages between hosts (rebuilt with the participants).
    pub(crate) host_groups: Option<Arc<schedule::HostGroups>>,
    /// Whether the agreements begin with the coordinator-free first round (every rank of the
    /// job makes the same choice: [`Engine::set_agreement_first_round`]).
    pub(crate) first_round: bool,
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
    /// `create_group` calls made on it so far, by (tag, hash of the group's members): the
    /// call's number among those with the same tag and group, which every member counts alike.
    pub(crate) group_creations: std::collections::BTreeMap<(i32, u64), u64>,
    /// The one-sided window on this communicator, if it was made for one (`rma`).
    pub(crate) window: Option<Box<rma::Window>>,
}

impl CommState {
    /// A communicator whose members are `members`, this rank being `rank`, with G = `global`.
    pub(crate) fn new(members: Members, rank: Rank, global: FailureView) -> Self {
        CommState {
            rank,
            known_failed: global.failed_set(),
            detected: global.failed_set().iter().collect(),
            local: global.clone(),
            global,
            matcher: Matcher::default(),
            life: Life::Open,
            collective_matcher: Matcher::default(),
            collective_early: Vec::new(),
            epoch: 0,
            collective_sequence: 0,
            collective_calls: 0,
            collective_active: false,
            schedules: Default::default(),
            caller_driven: 0,
            spare: None,
            next_schedule: 0,
            agreement_active: false,
            agreement_calls: Vec::new(),
            next_agreement_call: 0,
            queued_agreements: Default::default(),
            unpolled: Vec::new(),
            decided: BTreeMap::new(),
            participants: Arc::from(Vec::new()),
            agreement_participants: Arc::new(Participants::new(0, &RankSet::new())),
            hosts: None,
            host_groups: None,
            first_round: true,
            agreements: AgreementSeries::new(rank),
            creations: AgreementSeries::new(rank),
            creating: false,
            revoke_contributed: false,
            members,
            group_creations: std::collections::BTreeMap::new(),
            window: None,
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
        self.host_groups = self.hosts.as_ref().and_then(|hosts| {
            let classes: Option<Vec<u32>> = self
                .participants
                .iter()
                .map(|&r| {
                    let world = self.members.world_of(r).0 as usize;
                    hosts.get(world).copied().flatten()
                })
                .collect();
            schedule::HostGroups::new(&classes?).map(Arc::new)
        });
        // The agreement's participants are the same ranks in the same order (the OK ranks of
        // G), so the same groups apply to their indices.
        self.agreement_participants = Arc::new(
            self.with_first_round(Participants::new(
                self.members.size(),
                &self.global.failed_set(),
            ))
            .with_hosts(self.host_groups.clone()),
        );
    }

    /// Where the job's world ranks run ([`Engine::set_hosts`]).
    pub(crate) fn set_hosts(&mut self, hosts: Option<Arc<[Option<u32>]>>) {
        self.hosts = hosts;
        self.rebuild_participants();
    }

    /// `participants`, without the agreement's first round where this communicator's
    /// agreements skip it.
    fn with_first_round(&self, participants: Participants) -> Participants {
        if self.first_round {
            participants
        } else {
            participants.coordinated_only()
        }
    }

    /// Whether this communicator's agreements begin with the first round (when they have 2 to
    /// `FAST_ROUND_MAX` participants).
    pub(crate) fn set_first_round(&mut self, on: bool) {
        if self.first_round != on {
            self.first_round = on;
            self.rebuild_participants();
        }
    }

    /// A participant of collectives that this rank knows failed but G does not recognize: while
    /// there is one, collectives are disabled here (semantics §3.3).
    pub(crate) fn unrecognized_failure(&self) -> Option<Rank> {
        if self.known_failed.len() == self.global.num_failed() {
            return None; // G ⊆ known_failed, so equal sizes mean equal sets
        }
        self.known_failed
            .iter()
            .find(|&r| !self.global.is_failed(r))
    }

    /// Whether this rank's latest agreement of the main series has decided here (or it has
    /// made none): the next one may start.
    fn series_idle(&self) -> bool {
        match self.agreements.next_seq().checked_sub(1) {
            None => true,
            Some(latest) => self.agreements.decision(latest).is_some(),
        }
    }

    /// The number the next agreement this rank starts will have (queued ones included).
    pub(crate) fn next_agreement_seq(&self) -> u64 {
        self.agreements.next_seq() + self.queued_agreements.len() as u64
    }

    /// Enters an agreement of the main series with `flag` now, or queues it behind this rank's
    /// undecided one; returns its number.
    pub(crate) fn enter_agreement(&mut self, flag: u32) -> u64 {
        let seq = self.next_agreement_seq();
        self.unpolled.push(seq);
        if self.queued_agreements.is_empty() && self.series_idle() {
            self.start_next_agreement(flag);
        } else {
            self.queued_agreements.push_back(flag);
        }
        seq
    }

    /// Starts the next call of the main series with `flag`, contributing what this rank knows
    /// now; the previous call's decision is kept for its poll if none took it yet.
    fn start_next_agreement(&mut self, flag: u32) {
        if let Some(previous) = self.agreements.next_seq().checked_sub(1) {
            if self.unpolled.contains(&previous) && !self.decided.contains_key(&previous) {
                if let Some(decision) = self.agreements.decision(previous) {
                    self.decided.insert(previous, decision.clone());
                }
            }
        }
        let participants = Arc::clone(&self.agreement_participants);
        let contribution = Contribution {
            known_failed: self.known_failed.clone(),
            acknowledged: self.local.failed_set(),
            flag,
        };
        self.agreements.start(participants, contribution);
    }

    /// The decision of agreement `seq` of the main series, taken once by its poll.
    pub(crate) fn take_decision(&mut self, seq: u64) -> Option<crate::agreement::Decision> {
        let decision = match self.decided.remove(&seq) {
            Some(decision) => decision,
            None => self.agreements.decision(seq)?.clone(),
        };
        if let Some(at) = self.unpolled.iter().position(|&s| s == seq) {
            self.unpolled.swap_remove(at);
        }
        Some(decision)
    }

    /// Starts the queued agreements whose turn came, then moves the agreement protocols'
    /// pending messages (both series) into `out`.
    pub(crate) fn drain_agreements(&mut self, context: ContextId, out: &mut Outgoing) {
        while !self.queued_agreements.is_empty() && self.series_idle() {
            if let Some(flag) = self.queued_agreements.pop_front() {
                self.start_next_agreement(flag);
            }
        }
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

    /// Non-local operations other than agreements: `Error::Revoked` once revoked (semantics §3.5).
    pub(crate) fn check_not_revoked(&self) -> Result<()> {
        if self.life.is_revoked() {
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
        let participants = Arc::new(
            self.with_first_round(Participants::new(self.members.size(), &Default::default())),
        );
        let contribution = Contribution {
            known_failed: self.known_failed.clone(),
            acknowledged: self.local.failed_set(),
            flag,
        };
        self.revoke_contributed = flag & NOT_REVOKED == 0;
        self.creations.start(participants, contribution)
    }

    /// On a revoked communicator with no creation call running here: makes sure this rank has
    /// contributed "revoked" to the creation series' current call, so that peers inside a
    /// creation call that this rank will never make are released (with `Error::Revoked`).
    pub(crate) fn settle_revoked_creations(&mut self, context: ContextId, out: &mut Outgoing) {
        if self.life.is_revoked() && !self.creating && !self.revoke_contributed {
            self.start_creation(!NOT_REVOKED);
            self.drain_agreements(context, out);
        }
    }

    /// Installs a new G (after an agreement): L := G, a new collective epoch whose participants
    /// are the OK ranks of G; collective messages of older epochs are dropped (semantics §2.1).
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
    /// the condition that makes wildcard receives report `ProcFailedPending` (semantics §3.2).
    pub(crate) fn has_unacknowledged_failure(&self) -> bool {
        // L ⊆ known_failed always (validate_local copies from it, validate_global adds its
        // decision to it), so a larger known set means an unacknowledged failure.
        self.known_failed.len() > self.local.num_failed()
    }
}

/// A rank's whole protocol state.
#[derive(Debug)]
pub struct Engine {
    /// The communicators this rank holds, by context id.
    pub(crate) comms: BTreeMap<ContextId, CommState>,
    /// World ranks this rank's detector knows failed.
    pub(crate) known_failed: WorldSet,
    /// The posted receives (point-to-point and collective), by receive id.
    pub(crate) slots: Slab<Slot>,
    /// Packets for communicators that do not exist here yet (a faster peer already uses a
    /// communicator that this rank's creation call has not installed): replayed at installation.
    pub(crate) early: BTreeMap<ContextId, Vec<(WorldRank, Packet)>>,
    /// Context ids that a creation call in progress here has claimed.
    pub(crate) reserved: BTreeSet<ContextId>,
    /// Flow control of eager traffic, to and from every peer (`crate::flow`).
    pub(crate) flow: Flow,
    /// The synchronous sends of this rank that their receiver matched: (world rank of the
    /// receiver, the send's id), until the send's request sees it.
    pub(crate) sync_acks: BTreeSet<(WorldRank, u64)>,
    /// Synchronous sends whose request was dropped before their acknowledgement: (world rank
    /// of the receiver, id); the acknowledgement is dropped when it comes.
    pub(crate) sync_abandoned: BTreeSet<(WorldRank, u64)>,
    /// The id of this rank's next synchronous send.
    pub(crate) next_sync: u64,
    /// This rank's world rank.
    pub(crate) world_rank: WorldRank,
    /// Whether agreements begin with the coordinator-free first round (see
    /// [`Engine::set_agreement_first_round`]).
    pub(crate) first_round: bool,
    /// The host class of each world rank ([`Engine::set_hosts`]).
    pub(crate) hosts: Option<Arc<[Option<u32>]>>,
    /// Another rank's detector (through an agreement's decision, or a report handed to
    /// [`Engine::handle_peer_failed`]) declared this rank failed: it was fenced and must halt
    /// (semantics §1: a rank declared failed never takes part again).
    pub(crate) declared_failed: bool,
}

impl Engine {
    /// World rank `world_rank`'s engine in a job of `world_size` ranks: it holds the world
    /// communicator.
    pub fn new(world_rank: WorldRank, world_size: u32) -> Self {
        let mut comms = BTreeMap::new();
        let members = Members::Identity(world_size);
        let world = CommState::new(members, world_rank.0, FailureView::empty(world_size));
        comms.insert(WORLD_CONTEXT, world);
        Engine {
            comms,
            known_failed: WorldSet::new(),
            slots: Slab::new(),
            early: BTreeMap::new(),
            reserved: BTreeSet::new(),
            flow: Flow::new(world_size),
            sync_acks: BTreeSet::new(),
            sync_abandoned: BTreeSet::new(),
            next_sync: 0,
            world_rank,
            first_round: true,
            hosts: None,
            declared_failed: false,
        }
    }

    /// Where the job's ranks run: `hosts[w]` is a class that world ranks on one host share
    /// (`None`: not known alike everywhere), for collectives that keep their traffic within a
    /// host ([`HostGroups`]: the barrier, and the two passes of the agreements' first round).
    /// It applies to every communicator, existing and created later, whose participants' hosts
    /// are all known. Every rank of a job must give the same classes for the ranks it shares a
    /// communicator with, before its first collective there: ranks that group participants
    /// differently run different message patterns, which may wait forever or end a barrier
    /// early. Drivers take them from what every rank saw alike (the launcher's table of
    /// addresses at start, before any rank edits it) and leave ranks that joined later unknown.
    pub fn set_hosts(&mut self, hosts: Vec<Option<u32>>) {
        let hosts: Option<Arc<[Option<u32>]>> = Some(hosts.into());
        self.hosts = hosts.clone();
        for state in self.comms.values_mut() {
            state.set_hosts(hosts.clone());
        }
    }

    /// Whether the agreements of every communicator (existing and created later) begin with
    /// the coordinator-free first round (the default; see `runthrough_core::agreement`). It
    /// saves latency where each rank has a core, and costs throughput where ranks outnumber
    /// cores (it sends `2 ceil(log2 n)` messages per rank against about 4). Every rank of a job
    /// must make the same choice, before its first agreement (ranks that differ stay safe, no
    /// rank decides in a round some participant skips, but may wait for each other until a
    /// failure is learned); a driver that knows the job's ranks outnumber the cores turns it
    /// off at every rank, and at the ranks it spawns.
    pub fn set_agreement_first_round(&mut self, on: bool) {
        debug_assert!(
            self.comms
                .values()
                .all(|state| state.agreements.next_seq() == 0),
            "chosen before the first agreement"
        );
        self.first_round = on;
        for state in self.comms.values_mut() {
            state.set_first_round(on);
        }
    }

    /// Whether agreements begin with the coordinator-free first round
    /// ([`Engine::set_agreement_first_round`]).
    pub fn agreement_first_round(&self) -> bool {
        self.first_round
    }

    /// The engine of world rank `world_rank`, started by a `spawn`: its world communicator
    /// holds the ranks that spawn started (`world`, in their order; MPI's `MPI_COMM_WORLD` of a
    /// spawned group), and its flow control shares the cap as the job's first `job_size` ranks
    /// do (every rank of a job uses one window per sender).
    ///
    /// # Panics
    /// When `world` does not hold `world_rank` (a driver's bug).
    pub fn spawned(world_rank: WorldRank, world: Vec<WorldRank>, job_size: u32) -> Self {
        let size = world.len() as u32;
        let members = Members::list(world);
        let rank = members
            .comm_of(world_rank)
            .expect("a spawned rank is in its world");
        let mut engine = Engine::new(world_rank, job_size);
        engine.comms.insert(
            WORLD_CONTEXT,
            CommState::new(members, rank, FailureView::empty(size)),
        );
        engine
    }

    /// Whether this rank was declared failed by the others (an agreement decided it failed,
    /// or its own failure was reported to it): its driver must halt it now, as a rank fenced
    /// by its peers' vote halts. Nothing in the engine treats this rank as failed otherwise.
    #[inline]
    pub fn declared_failed(&self) -> bool {
        self.declared_failed
    }

    /// The communicator `context`, if it exists here and was not freed.
    #[inline]
    pub(crate) fn comm(&mut self, context: ContextId) -> Result<&mut CommState> {
        match self.comms.get_mut(&context) {
            Some(comm) if !comm.life.is_freed() => Ok(comm),
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
                self.flow.unhold(from, lane, charge); // held while it waited; counted again now
            }
            self.handle_packet(from, packet, out);
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
    pub fn flush_flow(&mut self, out: &mut Outgoing) {
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
    pub fn revoke(&mut self, context: ContextId, from: Option<WorldRank>, out: &mut Outgoing) {
        let Some(comm) = self.comms.get_mut(&context) else {
            self.early.entry(context).or_default().push((
                from.unwrap_or(WorldRank(u32::MAX)),
                Packet::Revoke { context },
            ));
            return;
        };
        if !comm.life.revoke() {
            return;
        }
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
        comm.window_revoked();
        comm.settle_revoked_creations(context, out);
        schedule::advance(comm, &mut self.flow, context, out);
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
    pub fn handle_packet(&mut self, from: WorldRank, packet: Packet, out: &mut Outgoing) {
        let context = match &packet {
            Packet::Data { context, .. }
            | Packet::Collective { context, .. }
            | Packet::Agreement { context, .. }
            | Packet::Rma { context, .. }
            | Packet::Revoke { context } => *context,
            Packet::Credit { lane, bytes } => return self.flow.credit(from, *lane, *bytes),
            Packet::Loan { bytes } => return self.flow.credit(from, Lane::Point, *bytes),
            Packet::CreditWanted { lane } => {
                self.flow.credit_wanted(from, *lane);
                if self.flow.is_waiting(from) && self.a_receive_waits_for(from) {
                    self.flow.lend(from);
                }
                if *lane == Lane::Collective && self.a_collective_waits_for(from) {
                    self.flow.lend_collective(from);
                }
                return;
            }
            Packet::SyncAck { id } => {
                if !self.sync_abandoned.remove(&(from, *id)) {
                    self.sync_acks.insert((from, *id));
                }
                return;
            }
        };
        if !self.comms.contains_key(&context) {
            if let Some((lane, charge)) = flow_charge(&packet) {
                self.flow.hold(from, lane, charge);
            }
            self.early.entry(context).or_default().push((from, packet));
            return;
        }
        match packet {
            Packet::Credit { .. }
            | Packet::CreditWanted { .. }
            | Packet::Loan { .. }
            | Packet::SyncAck { .. } => {
                unreachable!("flow control and acknowledgements are handled above")
            }
            Packet::Revoke { context } => self.revoke(context, Some(from), out),
            Packet::Rma {
                context,
                source,
                message,
                payload,
            } => {
                let Some(comm) = self.comms.get_mut(&context) else {
                    return;
                };
                if comm.members.try_world_of(source) == Some(from) {
                    comm.handle_rma(context, source, message, payload, out);
                }
            }
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
                if !comm.life.is_open() || comm.members.try_world_of(source) != Some(from) {
                    return self.flow.release(from, Lane::Point, charge);
                }
                let envelope = Envelope { source, tag };
                match comm.matcher.arrive(envelope, payload, bytes) {
                    None => self.flow.hold(from, Lane::Point, charge),
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
                if comm.creating {
                    self.advance_creations(context, out);
                }
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
                if !comm.life.is_open() || comm.members.try_world_of(source) != Some(from) {
                    return self.flow.release(from, Lane::Collective, charge);
                }
                let envelope = Envelope {
                    source,
                    tag: sequence as i32,
                };
                if epoch == comm.epoch.wrapping_add(1) {
                    comm.collective_early.push((envelope, payload));
                    return self.flow.hold(from, Lane::Collective, charge);
                }
                if epoch != comm.epoch {
                    // A collective of an older epoch: discarded.
                    return self.flow.release(from, Lane::Collective, charge);
                }
                match comm.collective_matcher.arrive(envelope, payload, bytes) {
                    None => {
                        self.flow.hold(from, Lane::Collective, charge);
                        schedule::advance_delivered(comm, &mut self.flow, context, out);
                    }
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
    /// (it never enters `known_failed`, L or G, docs/src/semantics.md §3.4), but it no longer
    /// answers, so the agreements route around it as around a failed rank. That changes no
    /// decision: a rank departs only once it decided its finalize agreement, after every live
    /// participant accepted that value, so any later ballot proposes the same value, and a
    /// departed rank, having contributed, is never a non-contributor of it.
    pub fn handle_peer_departed(&mut self, world: WorldRank, out: &mut Outgoing) {
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
    /// Returns whether this is news to it (false when it already knew).
    pub fn handle_peer_failed(&mut self, world: WorldRank, out: &mut Outgoing) -> bool {
        if world == self.world_rank {
            // This rank, declared failed by its peers (a false suspicion that fenced it, or a
            // death this rank has not noticed yet): it must halt, not act as its own observer.
            self.declared_failed = true;
            return false;
        }
        if !self.known_failed.insert(world) {
            return false;
        }
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
        let mut creating = Vec::new();
        for (&context, comm) in self.comms.iter_mut() {
            if let Some(rank) = comm.members.comm_of(world) {
                comm.window_peer_failed(context, rank, out);
                comm.agreements.handle_failure(rank);
                comm.creations.handle_failure(rank);
                comm.drain_agreements(context, out);
                schedule::advance(comm, &mut self.flow, context, out);
                if comm.creating {
                    creating.push(context);
                }
            }
        }
        for context in creating {
            self.advance_creations(context, out);
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
        true
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

/// A point-to-point message that a receive matched, from world rank `from`, as its sender gave
/// it: a synchronous one (a negative tag `!t`, its payload led by the sender's 8-byte id) is
/// acknowledged to `from` (a `SyncAck` pushed on `out`) and returned with tag `t` and the rest
/// of its payload. An ordinary message is returned as it is.
pub fn matched(
    envelope: Envelope,
    mut payload: Payload,
    from: WorldRank,
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
pub const SYNC_HEAD: usize = 8;

/// What a probe reports of a buffered message of `len` payload bytes: a synchronous one's tag
/// `t` and its data's length.
pub fn probed(envelope: Envelope, len: usize) -> (Envelope, usize) {
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

    /// A communicator's life: revoked and freed in either order, each once.
    #[test]
    fn life_transitions() {
        let mut life = Life::Open;
        assert!(life.is_open() && !life.is_revoked() && !life.is_freed());
        assert!(life.revoke() && !life.revoke());
        assert_eq!(life, Life::Revoked);
        assert!(life.free() && !life.free());
        assert_eq!(life, Life::Freed { revoked: true });
        assert!(life.is_revoked() && life.is_freed() && !life.is_open());
        let mut life = Life::Open;
        assert!(life.free());
        assert!(!life.is_revoked());
        assert!(
            life.revoke(),
            "a freed communicator still forwards a revocation once"
        );
        assert!(!life.revoke());
        assert_eq!(life, Life::Freed { revoked: true });
    }

    /// An acknowledgement is kept for the request that waits for it, or forgotten when its
    /// request was dropped first.
    #[test]
    fn a_rank_declared_failed_knows_it_and_does_not_observe_itself() {
        let mut engine = Engine::new(WorldRank(1), 3);
        let mut out = Outgoing::new();
        assert!(!engine.declared_failed());
        assert!(
            !engine.handle_peer_failed(WorldRank(1), &mut out),
            "not news to report"
        );
        assert!(engine.declared_failed());
        assert!(!engine.known_failed.contains(WorldRank(1)) && out.is_empty());
        // Its peers' failures are still its detector's.
        assert!(engine.handle_peer_failed(WorldRank(2), &mut out));
        assert!(engine.known_failed.contains(WorldRank(2)));
    }

    #[test]
    fn acknowledgements_are_kept_or_forgotten() {
        let mut engine = Engine::new(WorldRank(0), 2);
        let mut out = Outgoing::new();
        engine.sync_abandoned.insert((WorldRank(1), 5));
        engine.handle_packet(WorldRank(1), Packet::SyncAck { id: 5 }, &mut out);
        assert!(engine.sync_acks.is_empty() && engine.sync_abandoned.is_empty());
        engine.handle_packet(WorldRank(1), Packet::SyncAck { id: 6 }, &mut out);
        assert!(engine.sync_acks.contains(&(WorldRank(1), 6)));
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
        let (seen, data) = matched(envelope, payload, WorldRank(7), &mut out);
        assert_eq!((seen.tag, data), (4, vec![1, 2, 3]));
        assert_eq!(out, vec![(WorldRank(7), Packet::SyncAck { id: 9 })]);
        let ordinary = Envelope { source: 2, tag: 4 };
        let (seen, data) = matched(ordinary, vec![5], WorldRank(7), &mut out);
        assert_eq!((seen, data, out.len()), (ordinary, vec![5], 1));
    }
}

#[cfg(test)]
mod first_round_tests {
    use super::*;

    /// The kind of the first agreement message a rank of a 4-rank job sends.
    fn first_message(engine: &mut Engine) -> &'static str {
        let mut out = Outgoing::new();
        engine
            .start_agreement(WORLD_CONTEXT, u32::MAX, &mut out)
            .unwrap();
        match out.first() {
            Some((_, Packet::Agreement { message, .. })) => message.kind(),
            other => panic!("no agreement message: {other:?}"),
        }
    }

    /// The plan of a communicator of `members` (in that order) with no failure.
    fn plan(members: Vec<WorldRank>) -> creation::Plan {
        creation::Plan {
            global: FailureView::empty(members.len() as u32),
            members: Members::list(members),
            color: 0,
        }
    }

    /// An engine's agreements begin with the first round unless its driver turned it off, on
    /// the communicators it has and on those it installs later.
    #[test]
    fn the_first_round_is_the_drivers_choice() {
        let mut on = Engine::new(WorldRank(1), 4);
        assert!(on.agreement_first_round());
        assert_eq!(first_message(&mut on), "gather");
        let mut off = Engine::new(WorldRank(1), 4);
        off.set_agreement_first_round(false);
        assert!(!off.agreement_first_round());
        let mut out = Outgoing::new();
        off.install_plan(
            7,
            plan((0..4).map(WorldRank).collect()),
            WorldRank(1),
            &mut out,
        );
        on.install_plan(
            7,
            plan((0..4).map(WorldRank).collect()),
            WorldRank(1),
            &mut out,
        );
        assert_eq!(first_message(&mut off), "promise");
        assert!(off.comms.values().all(|c| !c.first_round));
        assert!(off.comms[&7].agreement_participants.len() == 4);
        assert!(!off.comms[&7].agreement_participants.fast_round());
        assert!(on.comms[&7].agreement_participants.fast_round());
    }

    /// The host classes a driver gives reach every communicator, existing and installed later,
    /// as groups of its participants: rebuilt when G changes, and none when a participant's
    /// host is unknown (a rank that joined later), when all share one host or each has its
    /// own.
    #[test]
    fn host_groups_follow_the_drivers_classes_and_the_participants() {
        let groups = |engine: &mut Engine, context| {
            let call = engine.begin_collective(context, 0, false).unwrap();
            call.hosts.map(|h| (h.participants(), h.hosts()))
        };
        let mut engine = Engine::new(WorldRank(0), 6);
        assert_eq!(groups(&mut engine, WORLD_CONTEXT), None, "no classes given");
        // World ranks 0-2 on host 5, 3-4 on host 9; rank 5 unknown.
        engine.set_hosts(vec![Some(5), Some(5), Some(5), Some(9), Some(9), None]);
        assert_eq!(
            groups(&mut engine, WORLD_CONTEXT),
            None,
            "world rank 5 is unknown"
        );
        let mut out = Outgoing::new();
        engine.install_plan(
            7,
            plan((0..5).map(WorldRank).collect()),
            WorldRank(0),
            &mut out,
        );
        assert_eq!(groups(&mut engine, 7), Some((5, 2)));
        engine.install_plan(
            8,
            plan(vec![WorldRank(0), WorldRank(3)]),
            WorldRank(0),
            &mut out,
        );
        assert_eq!(groups(&mut engine, 8), None, "a host each");
        engine.install_plan(
            9,
            plan((0..3).map(WorldRank).collect()),
            WorldRank(0),
            &mut out,
        );
        assert_eq!(groups(&mut engine, 9), None, "one host");
        // After G recognizes world ranks 3 and 4 failed, communicator 7's survivors share a host.
        engine.install_global(
            7,
            FailureView::empty(5)
                .advance([(3, crate::RankState::FAILED), (4, crate::RankState::FAILED)]),
        );
        assert_eq!(groups(&mut engine, 7), None);
    }
}

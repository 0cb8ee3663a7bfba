// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collectives as state machines that the engine runs by itself: every non-blocking call, and
//! the blocking barrier, broadcast, gathers, scatters, all-gather and all-to-all, whose thread
//! starts the same schedule with [`Engine::start_schedule_as`] and waits for it at once
//! ([`Hold::Caller`]: it holds the communicator's collective slot, and advances the schedule
//! itself when it polls; a delivery on another thread only buffers the message).
//!
//! A [`Schedule`] is one collective call at one rank written as a list of steps over byte
//! buffers: send a buffer to a participant, receive a participant's message into a buffer (or
//! combine it into one with the call's reduction). [`Engine::start_schedule`] numbers the call
//! within the communicator's epoch, as a blocking collective's start does, and from then on
//! the engine advances it whenever something it waits for arrives ([`Engine::handle_packet`]),
//! whoever delivers it: no thread of the rank needs to be inside the library for the call to
//! progress, so a rank that starts `ibarrier` and then waits for a message its peer sends only
//! after its own barrier still gets it. The driver polls the outcome with
//! [`Engine::poll_schedule`].
//!
//! # The ordered queue
//! A communicator's started schedules are kept in call order, each with its own call number;
//! any number may be outstanding, beside at most one blocking collective (which takes the next
//! number when it starts). Messages are matched by (epoch, call number), so calls never mix,
//! and every rank numbers its calls alike because each rank issues the communicator's
//! collectives in the same order (MPI's rule for collectives, non-blocking ones included).
//! Two threads starting collectives on one communicator at once have no such order:
//! a schedule started while another thread's blocking collective runs is refused with
//! `Error::ConcurrentCollective`, as two blocking calls are.
//!
//! Calls that change the communicator's epoch (`validate_global`, the creations, `shrink`)
//! wait until no schedule runs ([`Engine::schedules_running`]; until then they are refused
//! with `Error::ConcurrentCollective`): a schedule's late
//! messages belong to the old epoch and would be dropped by the new one.
//!
//! # Failures (docs/src/semantics.md §3.3)
//! A schedule fails with `Error::ProcFailed` as soon as this rank's detector knows of a failed
//! participant that G does not recognize (even one whose messages were all buffered: the
//! blocking calls' rule), with `Error::Revoked` once the communicator is revoked, and with
//! `Error::Comm` once it is freed; its sends still waiting for flow-control credit are then
//! withdrawn (as a blocking collective's are). A call whose steps all ran reports its outcome
//! once its queued sends went out, so no message of a finished call is left in the flow's
//! queues.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use smallvec::{smallvec, SmallVec};
use std::sync::Arc;

use super::{CommState, Engine, Flow};
use crate::flow;
use crate::matching::{Matcher, SourceSelector, TagSelector};
use crate::packet::{ContextId, Lane, Outgoing, Packet, Payload};
use crate::{Error, Rank, Result, WorldRank};

/// The round of a barrier among `n` participants at distance `distance` (1, 2, 4, ... below
/// `n`), for the participant at `index`: the positions it sends an empty message to and
/// receives one from. After the ⌈log₂ n⌉ rounds every participant has heard, transitively, from
/// every other.
///
/// When `n` is a power of two, a pairwise exchange with the participant whose position differs
/// in bit `distance` (the same peer both ways): the first rounds stay among neighbours, so with
/// ranks placed on hosts in blocks (as launchers place them) only the last rounds cross hosts
/// (between two hosts of four ranks each, 4 messages cross instead of the 14 of
/// dissemination). Otherwise dissemination: send `distance` places on, receive from
/// `distance` places back (modulo `n`), which needs no extra rounds for the ranks beyond the
/// power of two.
pub fn barrier_round(n: usize, index: usize, distance: usize) -> (usize, usize) {
    if n.is_power_of_two() {
        let partner = index ^ distance;
        (partner, partner)
    } else {
        ((index + distance) % n, (index + n - distance) % n)
    }
}

/// How a communicator's participants sit on hosts, for a barrier that keeps its traffic
/// within each host but for one exchange between the hosts' leaders ([`barrier_steps`]): the
/// participants of each host, by position, hosts in the order of their first participant (its
/// *leader*).
///
/// Every rank of a call must build the same groups from the same participants, or they wait
/// for messages that never come, or take a message meant for another step: the host classes
/// come from what every rank of a job sees alike ([`Engine::set_hosts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGroups {
    /// The participants (positions) of each host, in order; the first is the host's leader.
    groups: Vec<Vec<usize>>,
    /// Each participant's (group, position within its group).
    place: Vec<(usize, usize)>,
}

impl HostGroups {
    /// The groups of the participants whose host classes are `hosts` (one per participant, in
    /// order), or `None` where grouping saves nothing: all on one host, or each on its own.
    pub fn new(hosts: &[u32]) -> Option<Self> {
        let mut group_of = std::collections::BTreeMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut place = Vec::with_capacity(hosts.len());
        for (index, host) in hosts.iter().enumerate() {
            let group = *group_of.entry(host).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            place.push((group, groups[group].len()));
            groups[group].push(index);
        }
        (groups.len() > 1 && groups.len() < hosts.len()).then_some(HostGroups { groups, place })
    }

    /// How many participants the groups hold.
    pub fn participants(&self) -> usize {
        self.place.len()
    }

    /// How many hosts.
    pub fn hosts(&self) -> usize {
        self.groups.len()
    }
}

/// One step of a barrier at one participant ([`barrier_steps`]): positions among the
/// participants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierStep {
    /// Send an empty message to this participant.
    Send(usize),
    /// Wait for this participant's empty message.
    Receive(usize),
}

/// The steps of a barrier among `n` participants at the one at `index`, in order, each handed
/// to `step` (which stops the barrier by returning an error). No rank passes its last step
/// before every rank took its first, and no two steps of one call use the same direction
/// between two participants, so a call's messages need no order beyond their call number.
///
/// Without `hosts` (or with groups for another count): the ⌈log₂ n⌉ rounds of
/// [`barrier_round`]. With them (hosts in `hosts`, some with several participants): each host's
/// participants report to their leader up a tree of radix [`HOST_TREE_RADIX`] over their
/// positions in the group,
/// the leaders run [`barrier_round`]'s rounds among themselves, and each leader releases its
/// host's participants down the same tree: between hosts, one message per leader per round
/// instead of one per participant (Open MPI's hierarchical collectives do the same). The depth
/// is ⌈log₄ k⌉ twice for the largest host's k participants plus ⌈log₂ h⌉ for h hosts.
pub fn barrier_steps(
    n: usize,
    index: usize,
    hosts: Option<&HostGroups>,
    mut step: impl FnMut(BarrierStep) -> Result<()>,
) -> Result<()> {
    let Some(hosts) = hosts.filter(|hosts| hosts.participants() == n) else {
        let mut distance = 1;
        while distance < n {
            let (to, from) = barrier_round(n, index, distance);
            step(BarrierStep::Send(to))?;
            step(BarrierStep::Receive(from))?;
            distance <<= 1;
        }
        return Ok(());
    };
    let (group, position) = hosts.place[index];
    let members = &hosts.groups[group];
    let k = members.len();
    // Up the tree: the children, by level (the nearest first), then the parent.
    let span = host_tree_span(position, k);
    let mut level = 1;
    while level < span {
        for digit in 1..HOST_TREE_RADIX {
            if position + digit * level < k {
                step(BarrierStep::Receive(members[position + digit * level]))?;
            }
        }
        level *= HOST_TREE_RADIX;
    }
    if position == 0 {
        let leaders = hosts.groups.len();
        let mut distance = 1;
        while distance < leaders {
            let (to, from) = barrier_round(leaders, group, distance);
            step(BarrierStep::Send(hosts.groups[to][0]))?;
            step(BarrierStep::Receive(hosts.groups[from][0]))?;
            distance <<= 1;
        }
    } else {
        let parent = position - (position / span % HOST_TREE_RADIX) * span;
        step(BarrierStep::Send(members[parent]))?;
        step(BarrierStep::Receive(members[parent]))?;
    }
    // Down the same tree, the larger subtrees first.
    while level > 1 {
        level /= HOST_TREE_RADIX;
        for digit in 1..HOST_TREE_RADIX {
            if position + digit * level < k {
                step(BarrierStep::Send(members[position + digit * level]))?;
            }
        }
    }
    Ok(())
}

/// The radix of the tree within a host ([`barrier_steps`]): each participant has up to
/// `HOST_TREE_RADIX - 1` children per level, so a host of up to this many participants is a
/// star around its leader (one step up, one down), and `k` participants take
/// ⌈log₄ k⌉ levels. Against the binomial tree (radix 2) it halves the depth for a parent's
/// few more messages, with as many messages in all: measured on two emulated hosts of four
/// ranks (processes on two shared cores), the barrier took 15-40% less time and the
/// agreement (whose first round follows this plan) 25-35% less, over shared memory and over
/// TCP alike. A larger radix would make a leader of many ranks send to each in turn.
pub const HOST_TREE_RADIX: usize = 4;

/// The span of the subtree of the participant at `position` of a host of `k` in the tree of
/// [`barrier_steps`]: `HOST_TREE_RADIX^j` where `j` is the count of trailing zero digits of
/// `position` in base `HOST_TREE_RADIX` (its children lie within `position + 1 .. position +
/// span`, its parent is `position` less its lowest non-zero digit); for the leader, the first
/// power of the radix at or above `k`.
fn host_tree_span(position: usize, k: usize) -> usize {
    let mut span = 1;
    if position == 0 {
        while span < k {
            span *= HOST_TREE_RADIX;
        }
    } else {
        while (position / span).is_multiple_of(HOST_TREE_RADIX) {
            span *= HOST_TREE_RADIX;
        }
    }
    span
}

/// Where a participant stands in recursive doubling among `n` participants (the all-reduce's
/// algorithm, blocking and as a schedule): with r = n − 2^⌊log₂ n⌋, the first 2r participants
/// pair up before the exchanges (each even one hands its data to the next, which combines it
/// first), the 2^⌊log₂ n⌋ that remain exchange with the one whose number among them differs in
/// bit k, for each k, and the odd ones of the first 2r hand the result back at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Doubling {
    /// Its part in the pairing of the first 2r participants.
    pub fold: Fold,
    /// Its number among the participants that exchange (none for one that handed its data).
    folded: Option<usize>,
    power: usize,
    extra: usize,
}

/// A participant's part in the pairing that precedes and follows recursive doubling's
/// exchanges ([`Doubling`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Beyond the first 2r: no pairing.
    None,
    /// Even, among the first 2r: hands its data to this participant (the next one) before the
    /// exchanges, and receives the result from it after them.
    Give(usize),
    /// Odd, among the first 2r: takes this participant's data (the previous one, lower ranks
    /// first) before the exchanges, and hands it the result after them.
    Take(usize),
}

impl Doubling {
    /// The place of the participant at `index` among `n`.
    #[inline]
    pub fn new(n: usize, index: usize) -> Self {
        let power = if n == 0 { 0 } else { 1 << n.ilog2() };
        let extra = n - power;
        let (fold, folded) = if index >= 2 * extra {
            (Fold::None, Some(index - extra))
        } else if index.is_multiple_of(2) {
            (Fold::Give(index + 1), None)
        } else {
            (Fold::Take(index - 1), Some(index / 2))
        };
        Doubling {
            fold,
            folded,
            power,
            extra,
        }
    }

    /// The participants it exchanges with, in order (none for one that handed its data).
    #[inline]
    pub fn partners(&self) -> Partners {
        Partners {
            folded: self.folded,
            mask: 1,
            power: self.power,
            extra: self.extra,
        }
    }
}

/// The exchange partners of [`Doubling::partners`], one per round.
#[derive(Debug, Clone)]
pub struct Partners {
    folded: Option<usize>,
    mask: usize,
    power: usize,
    extra: usize,
}

impl Iterator for Partners {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let folded = self.folded?;
        if self.mask >= self.power {
            return None;
        }
        let new = folded ^ self.mask;
        self.mask <<= 1;
        Some(if new < self.extra {
            2 * new + 1
        } else {
            new + self.extra
        })
    }
}

/// A reduction's function over byte buffers: `inout = input op inout`, elementwise, where
/// `input` holds the lower ranks' partial result (MPI's order for a non-commutative
/// operation).
pub type Function = Arc<dyn Fn(&[u8], &mut [u8]) + Send + Sync>;

/// A combining function, borrowed.
type Combining = dyn Fn(&[u8], &mut [u8]);

/// The reduction of a schedule's combining steps: its function, who runs it, the size of
/// its elements and whether it commutes (which the all-reduce and reduce schedules choose
/// their algorithm by).
#[derive(Clone)]
pub struct Reduction {
    combiner: Combiner,
    element: usize,
    commutative: bool,
}

/// Who runs a reduction's function.
#[derive(Clone)]
enum Combiner {
    /// The engine, under its lock, on whichever thread runs the schedule (a predefined
    /// operation: short, and calls nothing).
    Engine(Function),
    /// The same, a plain function ([`Reduction::of_fn`]: no allocation per call).
    EnginePointer(fn(&[u8], &mut [u8])),
    /// Any thread of the rank, outside the engine's lock: the schedule stops at each
    /// combining step until a thread takes the step ([`Engine::take_unlocked_combine`]),
    /// runs it and hands the result back ([`Engine::combined`]). A user's function, which
    /// may call the library itself. The flag, when given, is set whenever a step waits
    /// ([`Reduction::signalling`]).
    Unlocked(Function, Option<Arc<AtomicBool>>),
    /// Only the call's own thread, which holds the function (a closure that borrows from its
    /// caller): it takes each step with [`Engine::take_combine`].
    Caller,
}

impl Reduction {
    fn of(combiner: Combiner, element: usize, commutative: bool) -> Self {
        Reduction {
            combiner,
            element: element.max(1),
            commutative,
        }
    }

    /// `function` over elements of `element` bytes, run by the engine as the schedule
    /// advances.
    pub fn new(function: Function, element: usize, commutative: bool) -> Self {
        Reduction::of(Combiner::Engine(function), element, commutative)
    }

    /// [`Reduction::new`] of a plain function (a predefined operation on one element type):
    /// nothing to allocate or free per call.
    pub fn of_fn(function: fn(&[u8], &mut [u8]), element: usize, commutative: bool) -> Self {
        Reduction::of(Combiner::EnginePointer(function), element, commutative)
    }

    /// Runs its function on `inout = input op inout` when the engine runs it itself
    /// ([`Reduction::new`], [`Reduction::of_fn`]); false for the others.
    pub fn apply(&self, input: &[u8], inout: &mut [u8]) -> bool {
        self.engine_function()
            .map(|function| function(input, inout))
            .is_some()
    }

    /// The engine's own function, if it runs the steps itself.
    #[inline]
    fn engine_function(&self) -> Option<&Combining> {
        match &self.combiner {
            Combiner::Engine(function) => Some(&**function),
            Combiner::EnginePointer(function) => Some(function),
            Combiner::Unlocked(..) | Combiner::Caller => None,
        }
    }

    /// `function`, run by whichever thread of the rank takes a combining step, outside the
    /// engine's lock ([`Engine::take_unlocked_combine`]).
    pub fn unlocked(function: Function, element: usize, commutative: bool) -> Self {
        Reduction::of(Combiner::Unlocked(function, None), element, commutative)
    }

    /// The same reduction, which sets `due` whenever one of its steps waits for a thread (an
    /// unlocked one: [`Reduction::unlocked`]; others ignore it), so that the rank's waiting
    /// threads need look for such steps ([`Engine::take_unlocked_combine`]) only when it is
    /// set (they clear it before they look).
    pub fn signalling(mut self, due: &Arc<AtomicBool>) -> Self {
        if let Combiner::Unlocked(_, flag) = &mut self.combiner {
            *flag = Some(Arc::clone(due));
        }
        self
    }

    /// Whether its steps run outside the engine on any thread ([`Reduction::unlocked`]).
    pub fn is_unlocked(&self) -> bool {
        matches!(self.combiner, Combiner::Unlocked(..))
    }

    /// A function that the call's thread holds and runs itself ([`Engine::take_combine`]).
    pub fn by_caller(element: usize, commutative: bool) -> Self {
        Reduction::of(Combiner::Caller, element, commutative)
    }

    /// Whether an all-reduce of `len` bytes among `n` participants runs the ring: commutative,
    /// at least [`RING_MIN_BYTES`], and possible ([`Reduction::rings_at`]).
    fn rings(&self, n: usize, len: usize) -> bool {
        self.commutative && len >= RING_MIN_BYTES && self.rings_at(n, len)
    }

    /// Whether the ring can run: a whole element per participant, and its 2(n − 1) messages
    /// along a pair numbered within [`MESSAGES_PER_PAIR`].
    fn rings_at(&self, n: usize, len: usize) -> bool {
        len / self.element >= n && 2 * n <= MESSAGES_PER_PAIR
    }

    /// Sets its flag, if it has one ([`Reduction::signalling`]): a step waits.
    fn signal(&self) {
        if let Combiner::Unlocked(_, Some(due)) = &self.combiner {
            due.store(true, Ordering::Release);
        }
    }

    /// The size of its elements in bytes.
    pub fn element(&self) -> usize {
        self.element
    }

    /// Whether it commutes.
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }
}

/// A combining step handed to a thread of the rank ([`Engine::take_combine`],
/// [`Engine::take_unlocked_combine`]): it computes `inout = input op inout` and hands the
/// step back with [`Engine::combined`].
pub struct Combine {
    /// The lower ranks' part.
    pub input: Vec<u8>,
    /// The part combined into.
    pub inout: Vec<u8>,
    context: ContextId,
    id: u64,
    function: Option<Function>,
}

impl Combine {
    /// Runs the reduction's function, for a step of an unlocked reduction
    /// ([`Reduction::unlocked`]); a caller's step ([`Reduction::by_caller`]) has none here,
    /// and its caller runs its own.
    pub fn run(&mut self) {
        if let Some(function) = &self.function {
            function(&self.input, &mut self.inout);
        }
    }
}

impl std::fmt::Debug for Combine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combine")
            .field("bytes", &self.inout.len())
            .field("context", &self.context)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Where a running schedule's combining step stands when its reduction is not the engine's.
#[derive(Debug, Default)]
enum Handoff {
    /// No step handed out.
    #[default]
    None,
    /// The current step waits for a thread to take it: its two buffers.
    Due { input: Vec<u8>, inout: Vec<u8> },
    /// A thread runs the current step.
    Taken,
}

/// The bytes of chunk `c` of the ring all-reduce of `len` bytes among `n` participants:
/// whole elements, the chunks as even as they can be, the last one to the end.
fn ring_chunk(n: usize, len: usize, reduction: &Reduction, c: usize) -> std::ops::Range<usize> {
    let element = reduction.element;
    let count = len / element;
    let at = |c: usize| c * count / n * element;
    at(c)..if c + 1 == n { len } else { at(c + 1) }
}

/// From this many bytes per rank (and at least one element per participant), a commutative
/// all-reduce runs the ring instead of recursive doubling.
pub const RING_MIN_BYTES: usize = 64 * 1024;

/// The bits of a collective message's tag that carry the call's number; those above carry
/// the message's number among the call's messages from one sender to one receiver (a ring
/// sends several along one pair).
pub const SEQUENCE_BITS: u32 = 20;

/// How many messages one call may send along one pair ([`SEQUENCE_BITS`]).
pub const MESSAGES_PER_PAIR: usize = 1 << (31 - SEQUENCE_BITS);

/// One step of a [`Schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Sends buffer `buffer`, whole, to comm rank `to`.
    Send {
        /// The receiving participant (a comm rank).
        to: Rank,
        /// The buffer sent.
        buffer: usize,
    },
    /// Receives comm rank `from`'s message of this call into buffer `into` (replacing it).
    Receive {
        /// The sending participant (a comm rank).
        from: Rank,
        /// The buffer received into.
        into: usize,
    },
    /// Receives comm rank `from`'s message of this call, the partial result of ranks above
    /// those already in buffer `into`, and combines: `into = into op message`.
    CombineAbove {
        /// The sending participant (a comm rank).
        from: Rank,
        /// The accumulating buffer.
        into: usize,
    },
    /// Receives comm rank `from`'s message of this call, the partial result of ranks below
    /// those already in buffer `into`, and combines: `into = message op into`.
    CombineBelow {
        /// The sending participant (a comm rank).
        from: Rank,
        /// The accumulating buffer.
        into: usize,
    },
    /// Combines two buffers of this rank: `into = input op into` (`input` holds the lower
    /// ranks' partial result).
    Combine {
        /// The lower ranks' partial result.
        input: usize,
        /// The buffer combined into.
        into: usize,
    },
    /// Sends the buffers of set `set` (a list of buffers, [`Schedule::with_sets`]) to comm
    /// rank `to`, in the set's order, as one message of length-prefixed blocks
    /// ([`crate::blocks`]): what a tree gather passes up, or a round of Bruck's algorithms.
    SendBlocks {
        /// The receiving participant (a comm rank).
        to: Rank,
        /// The set of buffers sent.
        set: usize,
    },
    /// Receives comm rank `from`'s message of length-prefixed blocks into the buffers of set
    /// `set`, one block each in the set's order (each replaced); a message with another number
    /// of blocks fails the call.
    ReceiveBlocks {
        /// The sending participant (a comm rank).
        from: Rank,
        /// The set of buffers received into.
        set: usize,
    },
}

/// One collective call at one rank as steps over buffers, run in order; a receive step waits
/// until its message is here. Built by the algorithms below ([`Schedule::barrier`],
/// [`Schedule::broadcast`], [`Schedule::reduce`], [`Schedule::all_reduce`]).
#[derive(Clone)]
pub struct Schedule {
    steps: Steps,
    buffers: Buffers,
    /// The sets of buffers that block steps name ([`Step::SendBlocks`]).
    sets: Vec<Vec<usize>>,
    /// Bit k: step k (of the first 64) is a [`Step::Send`] of a buffer that nothing uses
    /// after it (no later step, no set, not the result), so it moves the buffer into its
    /// message instead of copying it (the root of a broadcast hands its data to its last
    /// child).
    moves: u64,
    /// Each step's message number along its pair (a send's among this call's sends to its
    /// receiver, a receive's among its messages from its sender), in the tag's high bits
    /// ([`SEQUENCE_BITS`]); empty: every message is the first of its pair.
    numbers: Vec<u16>,
    reduction: Option<Reduction>,
    /// The buffers that hold the call's result at this rank, in order (their bytes are
    /// concatenated; none: the call has no result here).
    result: Parts,
    /// The length each received message must have, when the caller knows it (a block of a
    /// gather, scatter, all-gather or all-to-all).
    block: Expected,
}

/// The lengths a schedule's received messages must have.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expected {
    /// Any length (the reductions check theirs as they combine).
    Any,
    /// This many bytes, every one.
    Each(usize),
    /// The message received into buffer `b`: `lens[b]` bytes.
    PerBuffer(Vec<usize>),
}

impl Expected {
    /// The length of the message received into buffer `into`, if it is known.
    fn of(&self, into: usize) -> Option<usize> {
        match self {
            Expected::Any => None,
            Expected::Each(len) => Some(*len),
            Expected::PerBuffer(lens) => lens.get(into).copied(),
        }
    }
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedule")
            .field("steps", &self.steps)
            .field("buffers", &self.buffers.len())
            .field("sets", &self.sets)
            .field("reduction", &self.reduction.is_some())
            .field("result", &self.result)
            .field("block", &self.block)
            .finish()
    }
}

/// The [`Schedule::moves`] of a schedule: its sends (among the first 64 steps) after which
/// nothing uses their buffer.
fn last_sends(steps: &[Step], sets: &[Vec<usize>], result: &[usize], buffers: usize) -> u64 {
    if buffers > 64 {
        return 0; // (the schedules whose sends move are small: no set of this size to track)
    }
    let bit = |b: usize| 1u64 << b;
    let mut used = 0u64;
    for &b in result.iter().chain(sets.iter().flatten()) {
        used |= bit(b);
    }
    let mut moves = 0;
    for (k, step) in steps.iter().enumerate().rev() {
        match *step {
            Step::Send { buffer, .. } => {
                if k < 64 && used & bit(buffer) == 0 {
                    moves |= 1 << k;
                }
                used |= bit(buffer);
            }
            Step::Receive { into, .. }
            | Step::CombineAbove { into, .. }
            | Step::CombineBelow { into, .. } => used |= bit(into),
            Step::Combine { input, into } => used |= bit(input) | bit(into),
            Step::SendBlocks { .. } | Step::ReceiveBlocks { .. } => {}
        }
    }
    moves
}

/// A schedule's steps: a small one's inline, no allocation.
pub type Steps = SmallVec<[Step; 2]>;
/// A schedule's buffers: a small one's inline.
pub type Buffers = SmallVec<[Vec<u8>; 2]>;
/// The buffers that make a schedule's result, in order: a small one's inline.
pub type Parts = SmallVec<[usize; 2]>;

/// A call's result at one rank ([`Engine::poll_schedule`]): the bytes of the buffers its
/// schedule names as its result, in order, each its own part (the result is their
/// concatenation): a caller places each part where it goes, with no copy into one vector
/// first. Empty when the call has no result at this rank.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    parts: SmallVec<[Vec<u8>; 1]>,
}

impl Output {
    /// One part.
    pub fn of(bytes: Vec<u8>) -> Self {
        Output {
            parts: smallvec![bytes],
        }
    }

    /// Its length in bytes (of all parts).
    pub fn len(&self) -> usize {
        self.parts.iter().map(Vec::len).sum()
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(Vec::is_empty)
    }

    /// Its parts, in order.
    pub fn parts(&self) -> &[Vec<u8>] {
        &self.parts
    }

    /// Its parts, in order, to keep.
    pub fn into_parts(self) -> impl Iterator<Item = Vec<u8>> {
        self.parts.into_iter()
    }

    /// Hands each part to `f`, in order.
    #[inline]
    pub fn for_each_part(self, mut f: impl FnMut(Vec<u8>)) {
        match self.parts.len() {
            0 => {}
            1 => {
                let mut parts = self.parts;
                if let Some(part) = parts.pop() {
                    f(part);
                }
            }
            _ => self.parts.into_iter().for_each(f),
        }
    }

    /// Its bytes in one vector (a single part is not copied).
    pub fn into_bytes(mut self) -> Vec<u8> {
        match self.parts.len() {
            0 => Vec::new(),
            1 => self.parts.pop().unwrap_or_default(),
            _ => self.parts.concat(),
        }
    }
}

impl FromIterator<Vec<u8>> for Output {
    fn from_iter<I: IntoIterator<Item = Vec<u8>>>(parts: I) -> Self {
        Output {
            parts: parts.into_iter().collect(),
        }
    }
}

/// A schedule started by [`Engine::start_schedule_as`].
#[derive(Debug)]
pub enum Started {
    /// Running: poll it with [`Engine::poll_schedule`] under this id.
    Running(u64),
    /// A caller's schedule that finished within its start (every step ran, every send went
    /// out): its outcome, as [`Engine::poll_schedule`] would have given it. Never queued.
    Done(Result<Output>),
}

/// Who holds a communicator's collective slot while a schedule runs
/// ([`Engine::start_schedule_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Nobody: a non-blocking call (any number run at once, beside one blocking call).
    Nobody,
    /// The calling thread, which waits for the schedule at once (a blocking call), until
    /// [`Engine::end_collective`].
    Caller,
    /// A call that holds the slot already, of which the schedule is one step (a creation's
    /// exchange): the slot is neither checked nor taken.
    Within,
}

impl Schedule {
    /// A schedule of `steps` over `buffers`, whose result is the concatenation of the buffers
    /// `result` names, in that order (nothing when it names none).
    ///
    /// A schedule receives at most one message from each participant: the engine runs a
    /// schedule on whichever thread delivers its messages, and the sends of two such threads
    /// may reach a peer in either order, so two messages of one call over one pair could not
    /// be told apart (messages are matched by call number and sender).
    ///
    /// # Panics
    /// When a step or `result` names a buffer that does not exist, a `CombineAbove` step has
    /// no `reduction`, or (checked in debug builds only: a property of each builder, which
    /// the tests check at every place) two receive steps name the same sender (a bug in the
    /// algorithm that built it).
    pub fn new(
        steps: impl Into<Steps>,
        buffers: impl Into<Buffers>,
        reduction: Option<Reduction>,
        result: impl Into<Parts>,
    ) -> Self {
        Schedule::with_sets(steps, buffers, Vec::new(), reduction, result)
    }

    /// [`Schedule::new`] whose block steps ([`Step::SendBlocks`], [`Step::ReceiveBlocks`])
    /// name the sets of buffers in `sets`.
    ///
    /// # Panics
    /// As [`Schedule::new`], and when a block step names no set or a set names no buffer.
    pub fn with_sets(
        steps: impl Into<Steps>,
        buffers: impl Into<Buffers>,
        sets: Vec<Vec<usize>>,
        reduction: Option<Reduction>,
        result: impl Into<Parts>,
    ) -> Self {
        let (steps, buffers, result) = (steps.into(), buffers.into(), result.into());
        let reduces = reduction.is_some();
        Schedule::check(&steps, buffers.len(), &sets, &result, reduces, true);
        Schedule::assembled(steps, buffers, sets, reduction, result)
    }

    /// A schedule the builders below made (each checked by [`Schedule::check`] in debug
    /// builds, where the tests run every builder at every place, not at every call).
    fn built(
        steps: Steps,
        buffers: Buffers,
        sets: Vec<Vec<usize>>,
        reduction: Option<Reduction>,
        result: Parts,
    ) -> Self {
        Schedule::built_as(steps, buffers, sets, reduction, result, false)
    }

    /// [`Schedule::built`] for a builder that sends several messages along a pair: numbered
    /// ([`Schedule::numbered`]).
    fn built_numbered(
        steps: Steps,
        buffers: Buffers,
        reduction: Option<Reduction>,
        result: Parts,
    ) -> Self {
        Schedule::built_as(steps, buffers, Vec::new(), reduction, result, true)
    }

    fn built_as(
        steps: Steps,
        buffers: Buffers,
        sets: Vec<Vec<usize>>,
        reduction: Option<Reduction>,
        result: Parts,
        numbered: bool,
    ) -> Self {
        if cfg!(debug_assertions) {
            let reduces = reduction.is_some();
            Schedule::check(&steps, buffers.len(), &sets, &result, reduces, !numbered);
        }
        let schedule = Schedule::assembled(steps, buffers, sets, reduction, result);
        if numbered {
            schedule.numbered()
        } else {
            schedule
        }
    }

    fn assembled(
        steps: Steps,
        buffers: Buffers,
        sets: Vec<Vec<usize>>,
        reduction: Option<Reduction>,
        result: Parts,
    ) -> Self {
        let moves = last_sends(&steps, &sets, &result, buffers.len());
        Schedule {
            steps,
            buffers,
            sets,
            moves,
            numbers: Vec::new(),
            reduction,
            result,
            block: Expected::Any,
        }
    }

    /// The same schedule, with several messages along one pair: each message step gets its
    /// number along its pair ([`Schedule::numbers`]), so its message is told from the pair's
    /// others whatever order the threads that run the schedule put them on the wire in.
    ///
    /// # Panics
    /// When a pair would carry more than [`MESSAGES_PER_PAIR`] messages (a builder's bug:
    /// they choose their algorithm within it).
    fn numbered(mut self) -> Self {
        let mut counts: Vec<(bool, Rank, u16)> = Vec::new();
        self.numbers = self
            .steps
            .iter()
            .map(|step| {
                let key = match *step {
                    Step::Send { to, .. } | Step::SendBlocks { to, .. } => (true, to),
                    Step::Receive { from, .. }
                    | Step::CombineAbove { from, .. }
                    | Step::CombineBelow { from, .. }
                    | Step::ReceiveBlocks { from, .. } => (false, from),
                    Step::Combine { .. } => return 0,
                };
                let at = match counts.iter().position(|&(d, r, _)| (d, r) == key) {
                    Some(at) => at,
                    None => {
                        counts.push((key.0, key.1, 0));
                        counts.len() - 1
                    }
                };
                let number = counts[at].2;
                assert!(
                    (number as usize) < MESSAGES_PER_PAIR,
                    "too many messages on a pair"
                );
                counts[at].2 += 1;
                number
            })
            .collect();
        self
    }

    /// The tag of step `k`'s message in call `sequence`.
    fn tag(&self, sequence: u32, k: usize) -> u32 {
        let number = self.numbers.get(k).copied().unwrap_or(0) as u32;
        sequence | number << SEQUENCE_BITS
    }

    /// Panics unless every step and the result name buffers and sets that exist, every
    /// combining step has a reduction, and (debug builds, with `one_per_sender`) no two
    /// receives name one sender.
    fn check(
        steps: &[Step],
        buffers: usize,
        sets: &[Vec<usize>],
        result: &[usize],
        reduction: bool,
        one_per_sender: bool,
    ) {
        assert!(
            sets.iter().flatten().all(|&b| b < buffers),
            "a set names no buffer"
        );
        for step in steps {
            let buffer = match *step {
                Step::SendBlocks { set, .. } | Step::ReceiveBlocks { set, .. } => {
                    assert!(set < sets.len(), "step {step:?} names no set");
                    continue;
                }
                Step::Send { buffer, .. } => buffer,
                Step::Receive { into, .. } => into,
                Step::CombineAbove { into, .. } | Step::CombineBelow { into, .. } => {
                    assert!(reduction, "a combining step needs a reduction");
                    into
                }
                Step::Combine { input, into } => {
                    assert!(reduction, "a combining step needs a reduction");
                    assert!(input < buffers && input != into, "step {step:?}");
                    into
                }
            };
            assert!(buffer < buffers, "step {step:?} names no buffer");
        }
        assert!(
            result.iter().all(|&b| b < buffers),
            "the result names no buffer"
        );
        if cfg!(debug_assertions) && one_per_sender {
            // A property of the builders, not of their input: checked where the tests run
            // (every builder at 1..17 participants), not paid for at every call.
            let mut senders: Vec<Rank> = steps
                .iter()
                .filter_map(|step| match *step {
                    Step::Receive { from, .. }
                    | Step::CombineAbove { from, .. }
                    | Step::CombineBelow { from, .. }
                    | Step::ReceiveBlocks { from, .. } => Some(from),
                    Step::Send { .. } | Step::Combine { .. } | Step::SendBlocks { .. } => None,
                })
                .collect();
            let receives = senders.len();
            senders.sort_unstable();
            senders.dedup();
            assert_eq!(senders.len(), receives, "one message per sender");
        }
    }

    /// The same schedule, whose received messages must each be `len` bytes long (a block of
    /// another length is `Error::Count`, as for the blocking calls: ranks passed different
    /// counts).
    pub fn with_block_len(mut self, len: usize) -> Self {
        self.block = Expected::Each(len);
        self
    }

    /// The same schedule, whose message received into buffer `b` must be `lens[b]` bytes long
    /// (the varcount forms: each participant's block has a length of its own, which every rank
    /// knows; another length is `Error::Count`).
    fn with_buffer_lens(mut self, lens: Vec<usize>) -> Self {
        self.block = Expected::PerBuffer(lens);
        self
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// A barrier among `participants` (comm ranks, in order), this rank being the one at
    /// `index`: the steps of [`barrier_steps`] (⌈log₂ n⌉ rounds of [`barrier_round`], or with
    /// `hosts` within each host and between the hosts' leaders), so no rank leaves before every
    /// rank entered.
    pub fn barrier(participants: &[Rank], index: usize, hosts: Option<&HostGroups>) -> Self {
        let n = participants.len();
        let rounds = n.next_power_of_two().trailing_zeros() as usize;
        let mut steps = Steps::with_capacity(2 * rounds);
        let planned = barrier_steps(n, index, hosts, |step| {
            steps.push(match step {
                BarrierStep::Send(to) => Step::Send {
                    to: participants[to],
                    buffer: 0,
                },
                BarrierStep::Receive(from) => Step::Receive {
                    from: participants[from],
                    into: 1,
                },
            });
            Ok(())
        });
        debug_assert!(planned.is_ok(), "pushing a step cannot fail");
        Schedule::built(
            steps,
            smallvec![Vec::new(), Vec::new()],
            Vec::new(),
            None,
            Parts::new(),
        )
    }

    /// A broadcast of `data` (the root's bytes; ignored elsewhere) from the participant at
    /// `root` to every participant: a binomial tree over the ranks numbered from the root,
    /// ⌈log₂ n⌉ levels. The result is the root's bytes, at every rank but the root (which
    /// has them: its data goes to its last child without a copy).
    pub fn broadcast(participants: &[Rank], index: usize, root: usize, data: Vec<u8>) -> Self {
        let tree = Tree::new(participants.len(), index, root);
        let mut steps = Steps::new();
        if let Some(parent) = tree.parent {
            steps.push(Step::Receive {
                from: tree.rank(participants, parent),
                into: 0,
            });
        }
        for (child, _) in tree.children() {
            steps.push(Step::Send {
                to: tree.rank(participants, child),
                buffer: 0,
            });
        }
        let result = match tree.parent {
            None => Parts::new(),
            Some(_) => smallvec![0],
        };
        Schedule::built(steps, smallvec![data], Vec::new(), None, result)
    }

    /// The steps of a reduction of every participant's `data` to the first participant, in
    /// rank order: a binomial tree whose every subtree is a range of participants, so a
    /// non-commutative reduction is applied in rank order. Buffer 0 accumulates.
    fn reduce_to_first(participants: &[Rank], index: usize, steps: &mut Steps) {
        let n = participants.len();
        let mut mask = 1;
        while mask < n {
            if index & mask != 0 {
                steps.push(Step::Send {
                    to: participants[index - mask],
                    buffer: 0,
                });
                return;
            }
            if index + mask < n {
                steps.push(Step::CombineAbove {
                    from: participants[index + mask],
                    into: 0,
                });
            }
            mask <<= 1;
        }
    }

    /// A reduction of every participant's `data` with `reduction`, whose result lands at the
    /// participant at `root` (defined there only). A commutative reduction runs up a binomial
    /// tree rooted at the root, ⌈log₂ n⌉ levels, each rank combining its children's partial
    /// results smallest subtree first. A non-commutative one is applied in rank order:
    /// combined towards the first participant by a tree whose every subtree is a range of
    /// participants, then sent on to the root when it is another rank (one more hop).
    pub fn reduce(
        participants: &[Rank],
        index: usize,
        root: usize,
        data: Vec<u8>,
        reduction: Reduction,
    ) -> Self {
        let mut steps = Steps::new();
        if reduction.commutative {
            let tree = Tree::new(participants.len(), index, root);
            for (child, _) in tree.children().rev() {
                steps.push(Step::CombineAbove {
                    from: tree.rank(participants, child),
                    into: 0,
                });
            }
            if let Some(parent) = tree.parent {
                steps.push(Step::Send {
                    to: tree.rank(participants, parent),
                    buffer: 0,
                });
            }
        } else {
            Schedule::reduce_to_first(participants, index, &mut steps);
            if root != 0 {
                if index == 0 {
                    steps.push(Step::Send {
                        to: participants[root],
                        buffer: 0,
                    });
                } else if index == root {
                    steps.push(Step::Receive {
                        from: participants[0],
                        into: 0,
                    });
                }
            }
        }
        let result = if index == root {
            smallvec![0]
        } else {
            Parts::new()
        };
        Schedule::built(steps, smallvec![data], Vec::new(), Some(reduction), result)
    }

    /// An all-reduce of every participant's `data` with `reduction`; every rank gets the
    /// same bytes. A commutative reduction of at least [`RING_MIN_BYTES`] per rank and one
    /// element per participant runs the ring ([`Schedule::ring_all_reduce`]); any other,
    /// recursive doubling ([`Schedule::doubling_all_reduce`]). Every rank chooses alike when
    /// every rank passes the same count, as MPI requires.
    pub fn all_reduce(
        participants: &[Rank],
        index: usize,
        data: Vec<u8>,
        reduction: Reduction,
    ) -> Self {
        if reduction.rings(participants.len(), data.len()) {
            Schedule::ring_all_reduce(participants, index, data, reduction)
        } else {
            Schedule::doubling_all_reduce(participants, index, data, reduction)
        }
    }

    /// [`Schedule::all_reduce`] of a copy of `send`, made as the algorithm keeps it (the
    /// ring's chunks copied straight from `send`: one copy of the data, not two).
    pub fn all_reduce_of(
        participants: &[Rank],
        index: usize,
        send: &[u8],
        reduction: Reduction,
    ) -> Self {
        let n = participants.len();
        if reduction.rings(n, send.len()) {
            let chunks = (0..n)
                .map(|c| crate::buffers::copy_of(&send[ring_chunk(n, send.len(), &reduction, c)]))
                .collect();
            Schedule::ring_of_chunks(participants, index, chunks, reduction)
        } else {
            let data = crate::buffers::copy_of(send);
            Schedule::doubling_all_reduce(participants, index, data, reduction)
        }
    }

    /// An all-reduce by recursive doubling, ⌈log₂ n⌉ exchanges: a non-power-of-two n first
    /// folds the first 2r participants in pairs (r = n − 2^⌊log₂ n⌋, each even one hands its
    /// data to the next) and unfolds at the end (each odd one hands the result back). Every
    /// exchange combines the lower ranks' partial result first, so every rank computes the very
    /// same bytes (floats included) and a non-commutative reduction is applied in rank order.
    /// Buffer 0 accumulates; buffer 1 takes a lower partner's message.
    pub fn doubling_all_reduce(
        participants: &[Rank],
        index: usize,
        data: Vec<u8>,
        reduction: Reduction,
    ) -> Self {
        let plan = Doubling::new(participants.len(), index);
        let mut steps = Steps::new();
        match plan.fold {
            Fold::Give(to) => steps.push(Step::Send {
                to: participants[to],
                buffer: 0,
            }),
            Fold::Take(from) => steps.push(Step::CombineBelow {
                from: participants[from],
                into: 0,
            }),
            Fold::None => {}
        }
        for partner in plan.partners() {
            steps.push(Step::Send {
                to: participants[partner],
                buffer: 0,
            });
            if partner < index {
                steps.push(Step::CombineBelow {
                    from: participants[partner],
                    into: 0,
                });
            } else {
                steps.push(Step::CombineAbove {
                    from: participants[partner],
                    into: 0,
                });
            }
        }
        match plan.fold {
            Fold::Take(to) => steps.push(Step::Send {
                to: participants[to],
                buffer: 0,
            }),
            Fold::Give(from) => steps.push(Step::Receive {
                from: participants[from],
                into: 0,
            }),
            Fold::None => {}
        }
        Schedule::built(
            steps,
            smallvec![data],
            Vec::new(),
            Some(reduction),
            smallvec![0],
        )
    }

    /// The ring all-reduce of a commutative `reduction`: `data` cut into n chunks of whole
    /// elements (buffer c holds chunk c), a reduce-scatter (n − 1 steps: send a chunk to the
    /// next participant, combine the previous one's into the chunk after it), after which
    /// this rank holds chunk index + 1 whole, then an all-gather (n − 1 steps passing the
    /// whole chunks on). Each rank sends about twice the message in all, where recursive
    /// doubling sends it log₂ n times. Its 2(n − 1) messages along each pair are numbered
    /// ([`SEQUENCE_BITS`]).
    ///
    /// # Panics
    /// When `data` holds fewer elements than there are participants, or more than
    /// [`MESSAGES_PER_PAIR`] / 2 participants take part (the choice of
    /// [`Schedule::all_reduce`] rules both out).
    pub fn ring_all_reduce(
        participants: &[Rank],
        index: usize,
        data: Vec<u8>,
        reduction: Reduction,
    ) -> Self {
        let n = participants.len();
        assert!(reduction.rings_at(n, data.len()), "no ring here");
        let len = data.len();
        let mut chunks = Buffers::with_capacity(n);
        chunks.push(Vec::new());
        for c in 1..n {
            chunks.push(crate::buffers::copy_of(
                &data[ring_chunk(n, len, &reduction, c)],
            ));
        }
        // Chunk 0 stays where it is.
        let mut data = data;
        data.truncate(ring_chunk(n, len, &reduction, 0).end);
        chunks[0] = data;
        Schedule::ring_of_chunks(participants, index, chunks, reduction)
    }

    /// The ring over `chunks` (chunk c in buffer c: [`ring_chunk`]).
    fn ring_of_chunks(
        participants: &[Rank],
        index: usize,
        buffers: Buffers,
        reduction: Reduction,
    ) -> Self {
        let n = participants.len();
        let (right, left) = (
            participants[(index + 1) % n],
            participants[(index + n - 1) % n],
        );
        let mut steps = Steps::with_capacity(4 * (n - 1));
        for step in 0..n - 1 {
            steps.push(Step::Send {
                to: right,
                buffer: (index + n - step) % n,
            });
            steps.push(Step::CombineAbove {
                from: left,
                into: (index + 2 * n - step - 1) % n,
            });
        }
        for step in 0..n - 1 {
            steps.push(Step::Send {
                to: right,
                buffer: (index + 1 + n - step) % n,
            });
            steps.push(Step::Receive {
                from: left,
                into: (index + n - step) % n,
            });
        }
        Schedule::built_numbered(steps, buffers, Some(reduction), (0..n).collect())
    }

    /// An inclusive (`exclusive` false) or exclusive prefix reduction of every participant's
    /// `data` in rank order, by recursive doubling, ⌈log₂ n⌉ exchanges: in the exchange of
    /// distance d, the participant at i trades the combination of its aligned block of
    /// participants so far (buffer 0) with the one at i xor d; a partner below adds to the
    /// prefix (buffer 1), and the block's combination is combined lower block first, so a
    /// non-commutative reduction is applied in rank order. Buffer 2 takes a lower partner's
    /// message. The result is the combination over the participants up to this one
    /// (inclusive), or below it (exclusive; none at the first participant).
    pub fn scan(
        participants: &[Rank],
        index: usize,
        data: Vec<u8>,
        reduction: Reduction,
        exclusive: bool,
    ) -> Self {
        let n = participants.len();
        let mut steps = Steps::new();
        let mut prefixed = !exclusive;
        let prefix = if exclusive {
            Vec::new()
        } else {
            crate::buffers::copy_of(&data)
        };
        let mut distance = 1;
        while distance < n {
            let partner = index ^ distance;
            if partner < n {
                let with = participants[partner];
                steps.push(Step::Send {
                    to: with,
                    buffer: 0,
                });
                if partner > index {
                    steps.push(Step::CombineAbove {
                        from: with,
                        into: 0,
                    });
                } else if prefixed {
                    steps.push(Step::Receive {
                        from: with,
                        into: 2,
                    });
                    steps.push(Step::Combine { input: 2, into: 1 });
                    steps.push(Step::Combine { input: 2, into: 0 });
                } else {
                    // The first lower block: it is the prefix so far.
                    steps.push(Step::Receive {
                        from: with,
                        into: 1,
                    });
                    steps.push(Step::Combine { input: 1, into: 0 });
                    prefixed = true;
                }
            }
            distance *= 2;
        }
        let result = if prefixed { smallvec![1] } else { Parts::new() };
        Schedule::built(
            steps,
            smallvec![data, prefix, Vec::new()],
            Vec::new(),
            Some(reduction),
            result,
        )
    }

    /// A gather of every participant's `data` to the participant at `root`: a binomial tree
    /// over the participants numbered from the root (virtual ranks), ⌈log₂ n⌉ levels. Each
    /// participant passes its subtree's blocks (a range of virtual ranks) up to its parent in
    /// one message of length-prefixed blocks, so inner participants need not know the
    /// blocks' lengths (gatherv). The result, at the root only, is the participants' blocks
    /// in participant order.
    pub fn gather(participants: &[Rank], index: usize, root: usize, data: Vec<u8>) -> Self {
        let n = participants.len();
        let len = data.len();
        let tree = Tree::new(n, index, root);
        let mut buffers = vec![Vec::new(); n];
        buffers[tree.me] = data;
        let (mut steps, mut sets) = (Vec::new(), Vec::new());
        // The children, smallest subtree first.
        for (child, end) in tree.children().rev() {
            sets.push((child..end).collect());
            steps.push(Step::ReceiveBlocks {
                from: tree.rank(participants, child),
                set: sets.len() - 1,
            });
        }
        if let Some(parent) = tree.parent {
            sets.push((tree.me..tree.end).collect());
            steps.push(Step::SendBlocks {
                to: tree.rank(participants, parent),
                set: sets.len() - 1,
            });
            return Schedule::built(steps.into(), buffers.into(), sets, None, Parts::new());
        }
        let result: Parts = (0..n).map(|j| tree.virtual_of(j)).collect();
        Schedule::built(steps.into(), buffers.into(), sets, None, result).with_block_len(len)
    }

    /// A scatter from the participant at `root`, whose `blocks` hold one block per
    /// participant in participant order (ignored elsewhere): a binomial tree over the
    /// participants numbered from the root, ⌈log₂ n⌉ levels. Each participant receives its
    /// subtree's blocks from its parent in one message of length-prefixed blocks and passes
    /// each child's subtree on, largest first. Each participant's result is its block.
    pub fn scatter(participants: &[Rank], index: usize, root: usize, blocks: Vec<Vec<u8>>) -> Self {
        let n = participants.len();
        let tree = Tree::new(n, index, root);
        let mut buffers = vec![Vec::new(); n];
        if index == root {
            assert_eq!(blocks.len(), n, "a block per participant");
            for (j, block) in blocks.into_iter().enumerate() {
                buffers[tree.virtual_of(j)] = block;
            }
        }
        let (mut steps, mut sets) = (Vec::new(), Vec::new());
        if let Some(parent) = tree.parent {
            sets.push((tree.me..tree.end).collect());
            steps.push(Step::ReceiveBlocks {
                from: tree.rank(participants, parent),
                set: sets.len() - 1,
            });
        }
        for (child, end) in tree.children() {
            sets.push((child..end).collect());
            steps.push(Step::SendBlocks {
                to: tree.rank(participants, child),
                set: sets.len() - 1,
            });
        }
        Schedule::built(steps.into(), buffers.into(), sets, None, smallvec![tree.me])
    }

    /// An all-gather of every participant's `data` by Bruck's algorithm, ⌈log₂ n⌉ rounds:
    /// buffer j holds the block of participant index + j (modulo n); in the round of distance
    /// d a participant sends its first min(d, n − d) blocks to the participant d below it and
    /// appends those of the participant d above, so any n works and each sends n − 1 blocks in
    /// all. The result, at every participant, is their blocks in participant order.
    pub fn all_gather(participants: &[Rank], index: usize, data: Vec<u8>) -> Self {
        let n = participants.len();
        let len = data.len();
        let mut buffers = vec![Vec::new(); n];
        buffers[0] = data;
        let (mut steps, mut sets) = (Vec::new(), Vec::new());
        let mut distance = 1;
        while distance < n {
            let share = distance.min(n - distance);
            sets.push((0..share).collect());
            steps.push(Step::SendBlocks {
                to: participants[(index + n - distance) % n],
                set: sets.len() - 1,
            });
            sets.push((distance..distance + share).collect());
            steps.push(Step::ReceiveBlocks {
                from: participants[(index + distance) % n],
                set: sets.len() - 1,
            });
            distance *= 2;
        }
        let result: Parts = (0..n).map(|p| (p + n - index) % n).collect();
        Schedule::built(steps.into(), buffers.into(), sets, None, result).with_block_len(len)
    }

    /// An all-to-all: `blocks` holds this participant's block for each participant, in
    /// participant order; the result is the blocks received, in participant order (this
    /// participant's own block to itself among them). Blocks of at most
    /// [`BRUCK_MAX_BLOCK_BYTES`] go by Bruck's algorithm, ⌈log₂ n⌉ rounds: buffer j holds the
    /// block for participant index + j, and in the round of distance d every block whose
    /// index has bit d set goes to the participant d above in one message, replaced by those
    /// of the participant d below; each block travels along the bits of its index, so at the
    /// end buffer j holds the block of participant index − j (few messages, each of about n/2
    /// blocks). Larger blocks go pairwise, n − 1 steps, every byte moving once.
    pub fn all_to_all(participants: &[Rank], index: usize, mut blocks: Vec<Vec<u8>>) -> Self {
        let n = participants.len();
        assert_eq!(blocks.len(), n, "a block per participant");
        let len = blocks[index].len();
        if len > BRUCK_MAX_BLOCK_BYTES {
            return Schedule::all_to_all_pairwise(participants, index, blocks);
        }
        blocks.rotate_left(index); // block j: for participant index + j
        let (mut steps, mut sets) = (Vec::new(), Vec::new());
        let mut distance = 1;
        while distance < n {
            sets.push((0..n).filter(|j| j & distance != 0).collect());
            steps.push(Step::SendBlocks {
                to: participants[(index + distance) % n],
                set: sets.len() - 1,
            });
            steps.push(Step::ReceiveBlocks {
                from: participants[(index + n - distance) % n],
                set: sets.len() - 1,
            });
            distance *= 2;
        }
        let result: Parts = (0..n).map(|p| (index + n - p) % n).collect();
        Schedule::built(steps.into(), blocks.into(), sets, None, result).with_block_len(len)
    }

    /// [`Schedule::all_to_all`] by pairwise exchanges whatever the blocks' lengths: in step s
    /// a participant sends its block for index + s straight to it and receives the one of
    /// index − s. Buffer n + j receives participant j's block.
    fn all_to_all_pairwise(participants: &[Rank], index: usize, mut blocks: Vec<Vec<u8>>) -> Self {
        let n = participants.len();
        let len = blocks[index].len();
        let mut received = vec![Vec::new(); n];
        received[index] = std::mem::take(&mut blocks[index]);
        blocks.extend(received);
        let mut steps = Vec::new();
        for k in 1..n {
            let to = (index + k) % n;
            let from = (index + n - k) % n;
            steps.push(Step::Send {
                to: participants[to],
                buffer: to,
            });
            steps.push(Step::Receive {
                from: participants[from],
                into: n + from,
            });
        }
        let result: Parts = (n..2 * n).collect();
        Schedule::built(steps.into(), blocks.into(), Vec::new(), None, result).with_block_len(len)
    }

    /// A neighbourhood exchange (`MPI_Neighbor_alltoallv` and the other neighbourhood
    /// collectives): `blocks[i]` goes to comm rank `destinations[i]`, and the message from comm
    /// rank `sources[j]` must be `lens[j]` bytes long; the result is the received blocks in
    /// `sources`' order. A rank may be named several times (a graph with repeated edges): the
    /// k-th block sent to a rank is the k-th block that rank receives from this one, whatever
    /// order the messages travel in. Blocks this rank sends itself are copied, in the same
    /// order. Each block moves once, straight to its receiver.
    ///
    /// # Errors
    /// `Error::Count` when `blocks` and `destinations` or `lens` and `sources` differ in length,
    /// or the self-edges do not pair up; `Error::Argument` when a pair would carry more messages than
    /// one call can number ([`MESSAGES_PER_PAIR`]).
    pub fn neighbor_exchange(
        me: Rank,
        destinations: &[Rank],
        blocks: Vec<Vec<u8>>,
        sources: &[Rank],
        lens: &[usize],
    ) -> crate::Result<Self> {
        use crate::Error;
        if blocks.len() != destinations.len() || lens.len() != sources.len() {
            return Err(Error::Count {
                reason: "a block per destination and a length per source".into(),
            });
        }
        let per_pair = |ranks: &[Rank]| {
            let mut sorted = ranks.to_vec();
            sorted.sort_unstable();
            sorted
                .chunk_by(|a, b| a == b)
                .map(<[Rank]>::len)
                .max()
                .unwrap_or(0)
        };
        if per_pair(destinations) > MESSAGES_PER_PAIR || per_pair(sources) > MESSAGES_PER_PAIR {
            return Err(Error::Argument {
                reason: format!(
                    "more than {MESSAGES_PER_PAIR} edges between two ranks in one neighbourhood call"
                ),
            });
        }
        let (n_out, n_in) = (destinations.len(), sources.len());
        let mut buffers = blocks;
        buffers.extend(std::iter::repeat_with(Vec::new).take(n_in));
        // Self-edges: the k-th block to itself is the k-th block from itself.
        let own_out: Vec<usize> = (0..n_out).filter(|&i| destinations[i] == me).collect();
        let own_in: Vec<usize> = (0..n_in).filter(|&j| sources[j] == me).collect();
        if own_out.len() != own_in.len() {
            return Err(Error::Count {
                reason: format!(
                    "{} edges from this rank to itself as a destination, {} as a source",
                    own_out.len(),
                    own_in.len()
                ),
            });
        }
        let mut expected = vec![0; n_out];
        expected.extend_from_slice(lens);
        for (&i, &j) in own_out.iter().zip(&own_in) {
            if buffers[i].len() != lens[j] {
                return Err(Error::Count {
                    reason: format!(
                        "a block of {} bytes to itself, received as {} bytes",
                        buffers[i].len(),
                        lens[j]
                    ),
                });
            }
            buffers[n_out + j] = buffers[i].clone();
        }
        let mut steps = Vec::with_capacity(n_out + n_in);
        for (i, &to) in destinations.iter().enumerate() {
            if to != me {
                steps.push(Step::Send { to, buffer: i });
            }
        }
        for (j, &from) in sources.iter().enumerate() {
            if from != me {
                steps.push(Step::Receive {
                    from,
                    into: n_out + j,
                });
            }
        }
        let result: Parts = (n_out..n_out + n_in).collect();
        Ok(
            Schedule::built_numbered(steps.into(), buffers.into(), None, result)
                .with_buffer_lens(expected),
        )
    }

    /// [`Schedule::gather`] of blocks of varying lengths (`MPI_Gatherv`): participant j's
    /// block must be `lens[j]` bytes long (read at the root only; this participant's `data`
    /// is taken as it is).
    pub fn gather_varcount(
        participants: &[Rank],
        index: usize,
        root: usize,
        data: Vec<u8>,
        lens: &[usize],
    ) -> Self {
        let gather = Schedule::gather(participants, index, root, data);
        if index != root {
            return gather;
        }
        // At the root, buffer v holds the block of the participant v places after it.
        let n = participants.len();
        let by_buffer = (0..n).map(|v| lens[(v + root) % n]).collect();
        gather.with_buffer_lens(by_buffer)
    }

    /// [`Schedule::all_gather`] of blocks of varying lengths (`MPI_Allgatherv`): participant
    /// j's block must be `lens[j]` bytes long.
    pub fn all_gather_varcount(
        participants: &[Rank],
        index: usize,
        data: Vec<u8>,
        lens: &[usize],
    ) -> Self {
        // Buffer j holds the block of participant index + j.
        let n = participants.len();
        let by_buffer = (0..n).map(|j| lens[(index + j) % n]).collect();
        Schedule::all_gather(participants, index, data).with_buffer_lens(by_buffer)
    }

    /// [`Schedule::all_to_all`] of blocks of varying lengths (`MPI_Alltoallv`): `blocks[j]`
    /// goes to participant j whatever its length, and the block from participant j must be
    /// `lens[j]` bytes long. Pairwise, every byte moving once.
    pub fn all_to_all_varcount(
        participants: &[Rank],
        index: usize,
        blocks: Vec<Vec<u8>>,
        lens: &[usize],
    ) -> Self {
        let n = participants.len();
        assert_eq!(blocks.len(), n, "a block per participant");
        // The blocks received from participant j land in buffer n + j.
        let mut expected = vec![0; n];
        expected.extend_from_slice(lens);
        Schedule::all_to_all_pairwise(participants, index, blocks).with_buffer_lens(expected)
    }
}

/// Up to this many bytes per block, [`Schedule::all_to_all`] uses Bruck's algorithm.
pub const BRUCK_MAX_BLOCK_BYTES: usize = 1024;

/// A binomial tree over `n` participants numbered from the root (virtual rank v is the
/// participant at position (v + root) mod n), seen from one participant: its parent and its
/// subtree, which is the range of virtual ranks `me .. end`.
struct Tree {
    n: usize,
    root: usize,
    /// This participant's virtual rank.
    me: usize,
    /// The weight of its lowest set bit (the next power of two of n at the root): its
    /// subtree is `me .. me + span`, cut at n.
    span: usize,
    /// The end of its subtree's range.
    end: usize,
    /// Its parent's virtual rank (none at the root).
    parent: Option<usize>,
}

impl Tree {
    fn new(n: usize, index: usize, root: usize) -> Self {
        let me = (index + n - root) % n;
        // The parent differs in this rank's lowest set bit.
        let span = if me == 0 {
            n.next_power_of_two()
        } else {
            1 << me.trailing_zeros()
        };
        Tree {
            n,
            root,
            me,
            span,
            end: (me + span).min(n),
            parent: (me != 0).then(|| me - span),
        }
    }

    /// The comm rank of virtual rank `v`.
    fn rank(&self, participants: &[Rank], v: usize) -> Rank {
        participants[(v + self.root) % self.n]
    }

    /// The virtual rank of the participant at position `j`.
    fn virtual_of(&self, j: usize) -> usize {
        (j + self.n - self.root) % self.n
    }

    /// The children's subtrees (first virtual rank, end), largest first: this rank plus each
    /// lower power of two (no allocation: a broadcast builds these at every call).
    fn children(&self) -> impl DoubleEndedIterator<Item = (usize, usize)> {
        let (me, end) = (self.me, self.end);
        (0..self.span.trailing_zeros())
            .rev()
            .map(move |k| (me + (1 << k), (me + (2 << k)).min(end)))
            .filter(move |&(child, _)| child < end)
    }
}

/// A schedule the engine runs: one per non-blocking collective call started here.
#[derive(Debug)]
pub(crate) struct Running {
    id: u64,
    /// Its call's place among the communicator's calls here ([`Running::call`]).
    call: u64,
    epoch: u32,
    sequence: u32,
    schedule: Schedule,
    /// The next step to run.
    next: usize,
    /// Its sends that wait for flow-control credit (send slots of the flow).
    queued: Vec<usize>,
    /// Its outcome once known (the result buffer's bytes; empty when it has none).
    outcome: Option<Result<Output>>,
    /// Whether its request was dropped: it runs to its end and is then forgotten.
    abandoned: bool,
    /// A blocking call's, whose thread waits for it and advances it when it polls: a
    /// delivery leaves its steps to that thread ([`advance_delivered`]), so that the
    /// delivering thread holds the engine no longer than it takes to buffer the message.
    caller_driven: bool,
    /// A reduction step met a message of another length than its own (ranks passed different
    /// counts): the outcome once the steps ran.
    mismatch: Option<Error>,
    /// Its current combining step, when a thread outside the engine runs it.
    handoff: Handoff,
}

impl Running {
    /// Its call's number.
    pub(crate) fn sequence(&self) -> u32 {
        self.sequence
    }

    /// Its call's place among the communicator's calls at this rank
    /// (`CommState::collective_calls` when it started).
    pub(crate) fn call(&self) -> u64 {
        self.call
    }

    fn finished(&self) -> bool {
        self.outcome.is_some() && self.queued.is_empty()
    }

    /// The participant whose message the current step waits for, if it is a receive whose
    /// message is not here yet (a blocking call's schedule may not have taken one that was
    /// delivered: its thread advances it when it polls).
    fn waits_for(&self, matcher: &Matcher<Payload>) -> Option<Rank> {
        if !matches!(self.handoff, Handoff::None) {
            return None; // its message is taken; a thread combines it
        }
        let from = match self.schedule.steps.get(self.next)? {
            Step::Receive { from, .. }
            | Step::CombineAbove { from, .. }
            | Step::CombineBelow { from, .. }
            | Step::ReceiveBlocks { from, .. } => *from,
            Step::Send { .. } | Step::Combine { .. } | Step::SendBlocks { .. } => return None,
        };
        let tag = TagSelector::Value(self.schedule.tag(self.sequence, self.next) as i32);
        let here = self.caller_driven && matcher.peek(SourceSelector::Rank(from), tag).is_some();
        (!here).then_some(from)
    }
}

/// Runs every schedule of `comm` (communicator `context`) as far as it can go: each step in
/// order, sends pushed on `out` (or queued for credit), receives taken from the buffered
/// collective traffic. A schedule fails at once when the communicator is revoked or freed, or
/// a participant failed unrecognized.
pub(crate) fn advance(
    comm: &mut CommState,
    flow: &mut Flow,
    context: ContextId,
    out: &mut Outgoing,
) {
    advance_some(comm, flow, context, out, true);
}

/// [`advance`] after a collective message was delivered: the schedules of blocking calls
/// are left to their waiting threads (which poll them at once: the delivery wakes them).
pub(crate) fn advance_delivered(
    comm: &mut CommState,
    flow: &mut Flow,
    context: ContextId,
    out: &mut Outgoing,
) {
    advance_some(comm, flow, context, out, false);
}

fn advance_some(
    comm: &mut CommState,
    flow: &mut Flow,
    context: ContextId,
    out: &mut Outgoing,
    caller_driven_too: bool,
) {
    if comm.schedules.len()
        == if caller_driven_too {
            0
        } else {
            comm.caller_driven
        }
    {
        // None to run: a delivery for a blocking call touches none of its state (which
        // its thread, on another core, reads next).
        return;
    }
    let stop = comm.schedule_stop();
    let mut schedules = std::mem::take(&mut comm.schedules);
    let mut forgotten = false;
    for running in schedules.iter_mut() {
        if running.caller_driven && !caller_driven_too && stop.is_none() {
            continue;
        }
        advance_one(comm, flow, context, stop.as_ref(), running, out);
        forgotten |= running.abandoned && running.finished();
    }
    if forgotten {
        forget_abandoned(&mut schedules, &mut comm.caller_driven);
    }
    // A sender that waits for collective credit while a schedule's current step waits for its
    // message gets a loan ("Collective traffic" in `crate::flow`).
    for running in schedules.iter().filter(|running| running.outcome.is_none()) {
        if let Some(from) = running.waits_for(&comm.collective_matcher) {
            flow.lend_collective(comm.members.world_of(from));
        }
    }
    comm.schedules = schedules;
}

/// Runs one schedule as far as it can go (its outcome `stop` when the call must stop:
/// [`CommState::schedule_stop`]), and notes which of its queued sends went out.
fn advance_one(
    comm: &mut CommState,
    flow: &mut Flow,
    context: ContextId,
    stop: Option<&Error>,
    running: &mut Running,
    out: &mut Outgoing,
) {
    if running.outcome.is_none() {
        running.outcome = match stop {
            Some(error) => Some(Err(error.clone())),
            None => run_steps(comm, flow, context, running, out),
        };
    }
    if let (Some(error), false) = (stop, running.queued.is_empty()) {
        // Its sends still waiting for credit are withdrawn, as a blocking collective's
        // are (their receiver may never take the messages that hold the credit back:
        // its own call failed too); the call cannot be reported a success then.
        for slot in running.queued.drain(..) {
            flow.cancel(slot);
        }
        running.outcome = Some(Err(error.clone()));
    }
    running.queued.retain(|&slot| match flow.outcome(slot) {
        None => true,
        Some(Ok(())) => false,
        Some(Err(error)) => {
            if matches!(running.outcome, Some(Ok(_))) {
                running.outcome = Some(Err(error));
            }
            false
        }
    });
}

/// Forgets the schedules whose requests were dropped and that have finished; `caller_driven`
/// counts the blocking calls' schedules among those left.
fn forget_abandoned(schedules: &mut Schedules, caller_driven: &mut usize) {
    schedules.retain(|running| {
        let forget = running.abandoned && running.finished();
        *caller_driven -= usize::from(forget && running.caller_driven);
        !forget
    });
}

/// Takes the buffered message of tag `tag` (a call's number and the message's along its
/// pair: [`Schedule::tag`]) from `from`, giving its credit back; `None` while it has not
/// arrived.
fn take_message(comm: &mut CommState, flow: &mut Flow, tag: u32, from: Rank) -> Option<Payload> {
    let tag = TagSelector::Value(tag as i32);
    let (_, payload) = comm
        .collective_matcher
        .take(SourceSelector::Rank(from), tag)?;
    let world = comm.members.world_of(from);
    flow.release_held(world, Lane::Collective, flow::charge(payload.len()));
    Some(payload)
}

/// The error of a combining step whose two sides differ in length (ranks passed different
/// counts).
fn count_mismatch(theirs: usize, ours: usize) -> Error {
    Error::Count {
        reason: format!(
            "a peer contributed {theirs} bytes to a reduction of {ours} bytes (ranks passed \
             different counts)"
        ),
    }
}

/// Runs `running`'s steps until one waits (for a message, or for a thread to combine: its
/// [`Handoff`]); its outcome once the last step ran.
fn run_steps(
    comm: &mut CommState,
    flow: &mut Flow,
    context: ContextId,
    running: &mut Running,
    out: &mut Outgoing,
) -> Option<Result<Output>> {
    if !matches!(running.handoff, Handoff::None) {
        return None; // a thread combines its current step
    }
    let schedule = &mut running.schedule;
    let (epoch, sequence) = (running.epoch, running.sequence);
    let mut send = |comm: &CommState, flow: &mut Flow, to: Rank, tag: u32, payload: Vec<u8>| {
        let charge = flow::charge(payload.len());
        let world = comm.members.world_of(to);
        let packet = Packet::Collective {
            context,
            source: comm.rank,
            epoch,
            sequence: tag,
            payload,
        };
        if flow.try_admit(world, Lane::Collective, charge) {
            out.push((world, packet));
            None
        } else {
            Some(flow.enqueue(world, Lane::Collective, context, to, packet, charge))
        }
    };
    while let Some(&step) = schedule.steps.get(running.next) {
        let tag = schedule.tag(sequence, running.next);
        match step {
            Step::Send { to, buffer } => {
                let payload = if running.next < 64 && schedule.moves & (1 << running.next) != 0 {
                    std::mem::take(&mut schedule.buffers[buffer])
                } else {
                    crate::buffers::copy_of(&schedule.buffers[buffer])
                };
                running.queued.extend(send(comm, flow, to, tag, payload));
            }
            Step::SendBlocks { to, set } => {
                let buffers = &schedule.buffers;
                let blocks = schedule.sets[set].iter().map(|&b| buffers[b].as_slice());
                let payload = crate::blocks::encode(blocks);
                running.queued.extend(send(comm, flow, to, tag, payload));
            }
            Step::ReceiveBlocks { from, set } => {
                // Not here yet: the schedule waits (None).
                let payload = take_message(comm, flow, tag, from)?;
                let set = &schedule.sets[set];
                match crate::blocks::decode(&payload, set.len()) {
                    Ok(blocks) => {
                        for (&b, block) in set.iter().zip(blocks) {
                            if let Some(len) = schedule.block.of(b).filter(|&l| l != block.len()) {
                                running.mismatch.get_or_insert(Error::Count {
                                    reason: format!(
                                        "a block of {} bytes arrived where {len} were expected \
                                         (ranks passed different counts)",
                                        block.len()
                                    ),
                                });
                            }
                            let old = std::mem::replace(
                                &mut schedule.buffers[b],
                                crate::buffers::copy_of(block),
                            );
                            crate::buffers::give_back(old);
                        }
                    }
                    Err(error) => {
                        running.mismatch.get_or_insert(error);
                    }
                }
                crate::buffers::give_back(payload);
            }
            Step::Combine { input, into } => {
                let (lower, mut target) = (
                    std::mem::take(&mut schedule.buffers[input]),
                    std::mem::take(&mut schedule.buffers[into]),
                );
                if lower.len() != target.len() {
                    running
                        .mismatch
                        .get_or_insert(count_mismatch(lower.len(), target.len()));
                } else {
                    let reduction = schedule.reduction.as_ref().expect("checked by new");
                    if let Some(function) = reduction.engine_function() {
                        function(&lower, &mut target);
                    } else {
                        reduction.signal();
                        running.handoff = Handoff::Due {
                            input: lower,
                            inout: target,
                        };
                        return None;
                    }
                }
                schedule.buffers[input] = lower;
                schedule.buffers[into] = target;
            }
            Step::Receive { from, into } => {
                // Not here yet: the schedule waits (None).
                let payload = take_message(comm, flow, tag, from)?;
                if let Some(len) = schedule.block.of(into).filter(|&len| len != payload.len()) {
                    running.mismatch.get_or_insert(Error::Count {
                        reason: format!(
                            "a block of {} bytes arrived where {len} were expected (ranks \
                             passed different counts)",
                            payload.len()
                        ),
                    });
                }
                let old = std::mem::replace(&mut schedule.buffers[into], payload);
                crate::buffers::give_back(old);
            }
            Step::CombineAbove { from, into } | Step::CombineBelow { from, into } => {
                // Not here yet: the schedule waits (None).
                let mut message = take_message(comm, flow, tag, from)?;
                let above = matches!(step, Step::CombineAbove { .. });
                let target = &mut schedule.buffers[into];
                if message.len() != target.len() {
                    // Ranks passed different counts: this rank's call fails, and it goes
                    // on with its own bytes, so that its peers finish too (and see the
                    // difference in what they receive) rather than wait for it.
                    running
                        .mismatch
                        .get_or_insert(count_mismatch(message.len(), target.len()));
                    crate::buffers::give_back(message);
                } else {
                    let reduction = schedule.reduction.as_ref().expect("checked by new");
                    match (reduction.engine_function(), above) {
                        // into = into op message: the accumulated lower ranks are the input.
                        (Some(function), true) => {
                            function(target, &mut message);
                            let old = std::mem::replace(target, message);
                            crate::buffers::give_back(old);
                        }
                        // into = message op into: the message is the lower ranks'.
                        (Some(function), false) => {
                            function(&message, target);
                            crate::buffers::give_back(message);
                        }
                        (None, true) => {
                            reduction.signal();
                            running.handoff = Handoff::Due {
                                input: std::mem::take(target),
                                inout: message,
                            };
                            return None;
                        }
                        (None, false) => {
                            reduction.signal();
                            running.handoff = Handoff::Due {
                                input: message,
                                inout: std::mem::take(target),
                            };
                            return None;
                        }
                    }
                }
            }
        }
        running.next += 1;
    }
    if let Some(error) = running.mismatch.take() {
        return Some(Err(error));
    }
    let result = match schedule.result[..] {
        [] => Output::default(),
        [b] => Output::of(std::mem::take(&mut schedule.buffers[b])),
        ref parts => parts
            .iter()
            .map(|&b| std::mem::take(&mut schedule.buffers[b]))
            .collect(),
    };
    Some(Ok(result))
}

impl Running {
    /// Puts back the buffers of its current combining step, combined by a thread outside the
    /// engine ([`Engine::combined`]), and moves past the step.
    fn combined(&mut self, input: Vec<u8>, inout: Vec<u8>) {
        let schedule = &mut self.schedule;
        match schedule.steps.get(self.next) {
            Some(&Step::Combine { input: i, into }) => {
                schedule.buffers[i] = input;
                schedule.buffers[into] = inout;
            }
            Some(&Step::CombineAbove { into, .. } | &Step::CombineBelow { into, .. }) => {
                schedule.buffers[into] = inout;
                crate::buffers::give_back(input);
            }
            _ => debug_assert!(false, "a handoff at a step that combines nothing"),
        }
        self.handoff = Handoff::None;
        self.next += 1;
    }

    /// Whether its current step waits for a thread outside the engine to take it, a thread
    /// of any kind (`unlocked`) or its caller.
    fn due(&self, unlocked: bool) -> bool {
        matches!(self.handoff, Handoff::Due { .. })
            && (!unlocked
                || matches!(
                    self.schedule.reduction.as_ref().map(|r| &r.combiner),
                    Some(Combiner::Unlocked(..))
                ))
    }

    /// Takes its due combining step ([`Running::due`]).
    fn take_due(&mut self, context: ContextId) -> Option<Combine> {
        if !matches!(self.handoff, Handoff::Due { .. }) {
            return None;
        }
        let Handoff::Due { input, inout } = std::mem::replace(&mut self.handoff, Handoff::Taken)
        else {
            unreachable!("due")
        };
        let function = match self.schedule.reduction.as_ref().map(|r| &r.combiner) {
            Some(Combiner::Unlocked(function, _)) => Some(Arc::clone(function)),
            _ => None,
        };
        Some(Combine {
            input,
            inout,
            context,
            id: self.id,
            function,
        })
    }
}

impl Engine {
    /// Starts a non-blocking collective call on `context` at comm rank `me` (module docs): it
    /// takes the communicator's next call number, `build` makes its [`Schedule`] from the
    /// call (its participants, this rank's place among them), and it runs at once as far as
    /// it can (its first sends are pushed on `out`). Returns its id for
    /// [`Engine::poll_schedule`].
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` while another thread's collective call holds the
    /// communicator; `Error::Revoked`, `Error::ProcFailed` (a failed participant not recognized
    /// in G) and `Error::Comm` as a collective call's start gives them; `build`'s error
    /// (the call is numbered then, at every rank alike, as a blocking call that fails on its
    /// arguments after it began).
    pub fn start_schedule(
        &mut self,
        context: ContextId,
        me: Rank,
        build: impl FnOnce(&super::CollectiveCall) -> Result<Schedule>,
        out: &mut Outgoing,
    ) -> Result<u64> {
        match self.start_schedule_as(context, me, Hold::Nobody, build, out)? {
            Started::Running(id) => Ok(id),
            Started::Done(_) => unreachable!("a schedule nobody holds is always queued"),
        }
    }

    /// [`Engine::start_schedule`] for a call whose thread waits for the schedule at once, as
    /// `hold` says who holds the communicator's collective slot meanwhile
    /// ([`Hold::Caller`]: a blocking call; [`Hold::Within`]: a step of a call that holds it
    /// already). Such a schedule is the caller's to advance: a delivery of its messages only
    /// buffers them, and the caller's [`Engine::poll_schedule`] runs its steps. The slot is
    /// free again after an error here.
    ///
    /// # Errors
    /// Those of [`Engine::start_schedule`] (`Error::ConcurrentCollective` never with
    /// [`Hold::Within`]).
    pub fn start_schedule_as(
        &mut self,
        context: ContextId,
        me: Rank,
        hold: Hold,
        build: impl FnOnce(&super::CollectiveCall) -> Result<Schedule>,
        out: &mut Outgoing,
    ) -> Result<Started> {
        let call = self.begin_collective(context, me, hold != Hold::Within)?;
        // (The engine's fields apart: a caller's schedule runs below with the flow.)
        let (comms, flow) = (&mut self.comms, &mut self.flow);
        let state = comms.get_mut(&context).ok_or(Error::Comm)?; // held: begin checked it
        let built = build(&call);
        match hold {
            // Checked and numbered; held by the calling thread (`Caller`) or by none.
            Hold::Nobody | Hold::Caller => {
                state.collective_active = hold == Hold::Caller && built.is_ok();
            }
            Hold::Within => {}
        }
        let schedule = built?;
        let id = state.next_schedule;
        state.next_schedule += 1;
        let caller_driven = hold != Hold::Nobody;
        let mut running = Running {
            id,
            call: state.collective_calls - 1,
            epoch: call.epoch,
            sequence: call.sequence,
            schedule,
            next: 0,
            queued: Vec::new(),
            outcome: None,
            abandoned: false,
            caller_driven,
            mismatch: None,
            handoff: Handoff::None,
        };
        if caller_driven {
            // The caller's own: run at once, and if that finishes it (a root that only
            // sends, a call whose messages were all here), it never joins the queue.
            let stop = state.schedule_stop();
            advance_one(state, flow, context, stop.as_ref(), &mut running, out);
            if running.finished() {
                let outcome = running.outcome.take().unwrap_or(Ok(Output::default()));
                return Ok(Started::Done(state.final_outcome(outcome)));
            }
            // (Boxed only now: one that finished at its start costs no allocation.)
            let boxed = state.boxed(running);
            state.schedules.push_back(boxed);
            state.caller_driven += 1;
            return Ok(Started::Running(id));
        }
        let boxed = state.boxed(running);
        state.schedules.push_back(boxed);
        self.advance_schedules(context, out);
        Ok(Started::Running(id))
    }

    /// Runs `context`'s schedules as far as they can go.
    pub(crate) fn advance_schedules(&mut self, context: ContextId, out: &mut Outgoing) {
        if let Some(comm) = self.comms.get_mut(&context) {
            advance(comm, &mut self.flow, context, out);
        }
    }

    /// The outcome of schedule `id` on `context` once it is known and its queued sends went
    /// out or failed: its result buffer (empty when the call has none at this rank) or its
    /// error. The schedule is forgotten then. `None` while it runs. As at a blocking call's
    /// end, a call whose steps all ran still fails with `Error::ProcFailed` when this rank
    /// knows of a failed participant that G does not recognize when the poll takes it.
    pub fn poll_schedule(
        &mut self,
        context: ContextId,
        id: u64,
        out: &mut Outgoing,
    ) -> Option<Result<Output>> {
        let Some(comm) = self.comms.get_mut(&context) else {
            return Some(Err(Error::Comm));
        };
        // A call whose steps all ran and whose sends all went out has its outcome already
        // (the delivery that completed it advanced it): no need to advance every schedule
        // again. Failures learned since are applied below, as a blocking call's end does.
        let done = |comm: &CommState| {
            let at = comm.schedules.iter().position(|r| r.id == id)?;
            Some((at, comm.schedules[at].finished()))
        };
        let at = match done(comm) {
            Some((at, true)) => at,
            _ => {
                advance(comm, &mut self.flow, context, out);
                match done(comm)? {
                    (at, true) => at,
                    (_, false) => return None,
                }
            }
        };
        let mut running = comm.schedules.remove(at)?;
        comm.caller_driven -= usize::from(running.caller_driven);
        let outcome = running.outcome.take()?;
        // Its box serves the next schedule; its buffers go now.
        running.schedule.buffers.clear();
        comm.spare = Some(running);
        Some(comm.final_outcome(outcome))
    }

    /// The combining step that schedule `id` on `context` waits for its caller to run, if it
    /// waits for one (a reduction that is not the engine's: [`Reduction::by_caller`],
    /// [`Reduction::unlocked`]). The caller computes `inout = input op inout` outside the
    /// engine's lock and hands the step back with [`Engine::combined`]; the schedule stands
    /// still meanwhile (its failures still end it).
    pub fn take_combine(&mut self, context: ContextId, id: u64) -> Option<Combine> {
        let comm = self.comms.get_mut(&context)?;
        let running = comm.schedules.iter_mut().find(|r| r.id == id)?;
        running.take_due(context)
    }

    /// A combining step of an unlocked reduction ([`Reduction::unlocked`]) that waits for a
    /// thread, on any communicator: the thread runs it ([`Combine::run`]) outside the
    /// engine's lock and hands it back with [`Engine::combined`]. Every thread that waits in
    /// the library takes these, so such a call progresses while its own thread is elsewhere.
    pub fn take_unlocked_combine(&mut self) -> Option<Combine> {
        self.comms.iter_mut().find_map(|(&context, comm)| {
            let running = comm.schedules.iter_mut().find(|r| r.due(true))?;
            running.take_due(context)
        })
    }

    /// A combining step taken with [`Engine::take_combine`] or
    /// [`Engine::take_unlocked_combine`] is done: its schedule goes on (what it sends is
    /// pushed on `out`). A step whose call ended meanwhile (a failure) is dropped.
    pub fn combined(&mut self, combine: Combine, out: &mut Outgoing) {
        let Combine {
            input,
            inout,
            context,
            id,
            ..
        } = combine;
        let Some(comm) = self.comms.get_mut(&context) else {
            return;
        };
        match comm.schedules.iter_mut().find(|r| r.id == id) {
            Some(running) if matches!(running.handoff, Handoff::Taken) => {
                running.combined(input, inout);
                advance(comm, &mut self.flow, context, out);
            }
            _ => {
                crate::buffers::give_back(input);
                crate::buffers::give_back(inout);
            }
        }
    }

    /// Schedule `id`'s request was dropped: the schedule runs to its end (its peers need its
    /// messages) and is then forgotten. One whose combining steps only its caller can run
    /// ([`Reduction::by_caller`]) ends here instead.
    pub fn abandon_schedule(&mut self, context: ContextId, id: u64) {
        if let Some(comm) = self.comms.get_mut(&context) {
            if let Some(running) = comm.schedules.iter_mut().find(|r| r.id == id) {
                running.abandoned = true;
                let by_caller = matches!(
                    running.schedule.reduction.as_ref().map(|r| &r.combiner),
                    Some(Combiner::Caller)
                );
                if by_caller && running.outcome.is_none() {
                    for slot in running.queued.drain(..) {
                        self.flow.cancel(slot);
                    }
                    running.handoff = Handoff::None;
                    running.outcome = Some(Err(Error::Request));
                }
                if running.caller_driven {
                    // Its thread left (it unwound): no poll will advance it now, so
                    // deliveries do, to its end, as any other abandoned schedule's.
                    running.caller_driven = false;
                    comm.caller_driven -= 1;
                }
            }
            forget_abandoned(&mut comm.schedules, &mut comm.caller_driven);
        }
    }

    /// Whether a schedule runs here, on any communicator ([`Engine::schedules_running`] of
    /// each).
    pub fn any_schedules_running(&mut self) -> bool {
        if self.comms.values().all(|comm| comm.schedules.is_empty()) {
            return false;
        }
        let contexts: Vec<ContextId> = self
            .comms
            .iter()
            .filter(|(_, comm)| !comm.schedules.is_empty())
            .map(|(&context, _)| context)
            .collect();
        contexts
            .into_iter()
            .any(|context| self.schedules_running(context))
    }

    /// Whether a collective call here waits for a message of world rank `world`: a running
    /// schedule's current step, or a blocking collective's posted receive.
    pub(crate) fn a_collective_waits_for(&self, world: WorldRank) -> bool {
        self.comms.values().any(|comm| {
            comm.life.is_open()
                && comm.members.comm_of(world).is_some_and(|rank| {
                    comm.collective_matcher.waits_for(rank)
                        || comm.schedules.iter().any(|running| {
                            running.outcome.is_none()
                                && running.waits_for(&comm.collective_matcher) == Some(rank)
                        })
                })
        })
    }

    /// Whether schedules started on `context` are still running here (a finished one whose
    /// outcome no poll took yet does not count): a call that changes the communicator's epoch
    /// waits until none is. It first runs them as far as they go and notes their queued sends
    /// that went out meanwhile (a thread that transmits queued messages does not tell the
    /// schedules); what that makes them send is due with the flow-control packets.
    #[inline]
    pub fn schedules_running(&mut self, context: ContextId) -> bool {
        let Some(comm) = self.comms.get_mut(&context) else {
            return false;
        };
        if comm.schedules.is_empty() {
            return false; // the usual case, one lookup
        }
        let mut out = Outgoing::new();
        advance(comm, &mut self.flow, context, &mut out);
        let running = comm.schedules_running();
        for (world, packet) in out {
            self.flow.send_soon(world, packet);
        }
        running
    }
}

impl CommState {
    /// `running` in a box: the spare one when there is one.
    fn boxed(&mut self, running: Running) -> Box<Running> {
        match self.spare.take() {
            Some(mut spare) => {
                *spare = running;
                spare
            }
            None => Box::new(running),
        }
    }

    /// Why this communicator's schedules must stop now, if they must: it was freed or revoked,
    /// or a participant failed that G does not recognize.
    fn schedule_stop(&self) -> Option<Error> {
        if self.life.is_freed() {
            Some(Error::Comm)
        } else if self.life.is_revoked() {
            Some(Error::Revoked)
        } else {
            self.unrecognized_failure()
                .map(|rank| Error::ProcFailed { rank })
        }
    }

    /// A finished schedule's outcome as its poll gives it: as at a blocking call's end, a
    /// failure learned before the call returns disables it.
    fn final_outcome(&self, outcome: Result<Output>) -> Result<Output> {
        match (outcome, self.unrecognized_failure()) {
            (Ok(_), Some(rank)) => Err(Error::ProcFailed { rank }),
            (outcome, _) => outcome,
        }
    }

    /// Whether a schedule of this communicator is still running here.
    pub(crate) fn schedules_running(&self) -> bool {
        self.schedules.iter().any(|running| !running.finished())
    }
}

/// The schedules of a communicator, in call order (boxed: a running schedule is some hundred
/// bytes, moved once instead of at every insertion and removal).
pub(crate) type Schedules = VecDeque<Box<Running>>;

#[cfg(test)]
mod tests {
    //! Schedules over a small network of engines that delivers packets in a seeded random
    //! order (first in, first out between each pair, as every transport does).

    use std::collections::BTreeMap;

    use super::super::test_net::Net;
    use super::*;
    use crate::packet::WORLD_CONTEXT;
    use crate::WorldRank;

    /// Host layouts to run barriers over at `n` participants: none, then host classes in
    /// blocks of two and of three, round robin over two hosts, and one large host beside hosts
    /// of one (those that group nothing are `None` too).
    fn host_layouts(n: usize) -> Vec<Option<HostGroups>> {
        let layouts: [fn(usize, usize) -> u32; 4] = [
            |i, _| (i / 2) as u32,
            |i, _| (i / 3) as u32,
            |i, _| (i % 2) as u32,
            |i, n| if i <= n / 2 { 0 } else { i as u32 },
        ];
        std::iter::once(None)
            .chain(
                layouts
                    .iter()
                    .map(|class| HostGroups::new(&(0..n).map(|i| class(i, n)).collect::<Vec<_>>())),
            )
            .collect()
    }

    fn all(n: u32) -> Vec<Rank> {
        (0..n).collect()
    }

    fn add(input: &[u8], inout: &mut [u8]) {
        for (i, o) in input.chunks(8).zip(inout.chunks_mut(8)) {
            let a = u64::from_le_bytes(i.try_into().unwrap());
            let b = u64::from_le_bytes((&*o).try_into().unwrap());
            o.copy_from_slice(&a.wrapping_add(b).to_le_bytes());
        }
    }

    fn sum() -> Reduction {
        Reduction::new(Arc::new(add), 8, true)
    }

    /// 2×2 matrix product modulo 2^64: associative, not commutative.
    fn product(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
        let m = |x: u64, y: u64| x.wrapping_mul(y);
        [
            m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
            m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
            m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
            m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
        ]
    }

    fn bytes(m: [u64; 4]) -> Vec<u8> {
        m.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn matrix(b: &[u8]) -> [u64; 4] {
        let mut m = [0; 4];
        for (x, chunk) in m.iter_mut().zip(b.chunks(8)) {
            *x = u64::from_le_bytes(chunk.try_into().unwrap());
        }
        m
    }

    fn multiply(input: &[u8], inout: &mut [u8]) {
        let result = product(matrix(input), matrix(inout));
        inout.copy_from_slice(&bytes(result));
    }

    fn matrix_product() -> Reduction {
        Reduction::new(Arc::new(multiply), 32, false)
    }

    fn contribution(rank: u32) -> [u64; 4] {
        [rank as u64 + 2, 1, 3 * rank as u64, 1]
    }

    #[test]
    fn every_algorithm_gives_its_result_in_any_delivery_order() {
        for n in 1..=9u32 {
            for seed in 0..6 {
                let mut net = Net::new(n, seed + 100 * n as u64);
                let root = (seed as u32 * 7) % n;
                let layouts = host_layouts(n as usize);
                let mut ids = Vec::new();
                for rank in 0..n {
                    let p = all(n);
                    let i = rank as usize;
                    let data = (rank as u64 + 1).to_le_bytes().to_vec();
                    let mine = if rank == root {
                        b"root".to_vec()
                    } else {
                        Vec::new()
                    };
                    let c = bytes(contribution(rank));
                    let schedules = [
                        Schedule::barrier(&p, i, layouts[seed as usize % layouts.len()].as_ref()),
                        Schedule::broadcast(&p, i, root as usize, mine),
                        Schedule::reduce(&p, i, root as usize, data.clone(), sum()),
                        Schedule::all_reduce(&p, i, data, sum()),
                        Schedule::all_reduce(&p, i, c.clone(), matrix_product()),
                        Schedule::reduce(&p, i, root as usize, c, matrix_product()),
                    ];
                    // Several outstanding at once, in call order.
                    let started: Vec<u64> = schedules
                        .into_iter()
                        .map(|s| net.start(rank, s).unwrap())
                        .collect();
                    ids.push(started);
                }
                net.run();
                let total = (n as u64 * (n as u64 + 1) / 2).to_le_bytes().to_vec();
                let ordered = bytes((0..n).map(contribution).reduce(product).unwrap());
                for rank in 0..n {
                    let outcomes: Vec<Vec<u8>> = ids[rank as usize]
                        .iter()
                        .map(|&id| net.poll(rank, id).expect("complete").unwrap())
                        .collect();
                    let at_root = |v: &Vec<u8>| if rank == root { v.clone() } else { Vec::new() };
                    assert_eq!(outcomes[0], Vec::<u8>::new(), "n {n} seed {seed}");
                    // (The root has the bytes: no result there.)
                    let broadcast = if rank == root {
                        Vec::new()
                    } else {
                        b"root".to_vec()
                    };
                    assert_eq!(outcomes[1], broadcast, "n {n} seed {seed}");
                    assert_eq!(outcomes[2], at_root(&total), "n {n} rank {rank}");
                    assert_eq!(outcomes[3], total, "n {n} rank {rank}");
                    assert_eq!(outcomes[4], ordered, "n {n} rank {rank}: rank order");
                    assert_eq!(outcomes[5], at_root(&ordered), "n {n} rank {rank}");
                }
                for engine in &mut net.engines {
                    assert!(!engine.schedules_running(WORLD_CONTEXT));
                }
            }
        }
    }

    #[test]
    fn gathers_scatters_and_all_to_all_place_every_block() {
        let block = |from: usize, to: usize| vec![from as u8, to as u8, 0xAB];
        for n in 1..=8u32 {
            for seed in 0..4 {
                let mut net = Net::new(n, seed + 1000 * n as u64);
                let root = (seed as u32 * 5) % n;
                let mut ids = Vec::new();
                for rank in 0..n {
                    let (p, i, r) = (all(n), rank as usize, root as usize);
                    let mine = block(i, 99);
                    let scattered = if rank == root {
                        (0..n as usize).map(|j| block(r, j)).collect()
                    } else {
                        Vec::new()
                    };
                    let to_each = (0..n as usize).map(|j| block(i, j)).collect();
                    let started: Vec<u64> = [
                        Schedule::gather(&p, i, r, mine.clone()),
                        Schedule::scatter(&p, i, r, scattered),
                        Schedule::all_gather(&p, i, mine),
                        Schedule::all_to_all(&p, i, to_each),
                    ]
                    .into_iter()
                    .map(|s| net.start(rank, s).unwrap())
                    .collect();
                    ids.push(started);
                }
                net.run();
                let gathered: Vec<u8> = (0..n as usize).flat_map(|j| block(j, 99)).collect();
                for rank in 0..n {
                    let i = rank as usize;
                    let got: Vec<Vec<u8>> = ids[i]
                        .iter()
                        .map(|&id| net.poll(rank, id).expect("complete").unwrap())
                        .collect();
                    let at_root = if rank == root {
                        gathered.clone()
                    } else {
                        Vec::new()
                    };
                    assert_eq!(got[0], at_root, "gather n {n} rank {rank}");
                    assert_eq!(got[1], block(root as usize, i), "scatter n {n} rank {rank}");
                    assert_eq!(got[2], gathered, "all_gather n {n} rank {rank}");
                    let exchanged: Vec<u8> = (0..n as usize).flat_map(|j| block(j, i)).collect();
                    assert_eq!(got[3], exchanged, "all_to_all n {n} rank {rank}");
                }
            }
        }
    }

    /// The varcount forms: participant j's block to participant k is j + 2k bytes (zero
    /// included), and each lands whole, in participant order; a block of another length than
    /// the receiver expects is `Error::Count` at the receiver, and every call still finishes.
    #[test]
    fn varcount_gathers_and_all_to_all_check_each_block_length() {
        let block = |from: usize, to: usize| vec![(from * 16 + to) as u8; from + 2 * to];
        for n in 1..=7u32 {
            for seed in 0..3 {
                let mut net = Net::new(n, seed + 77 * n as u64);
                let r = (seed as usize * 3) % n as usize;
                let mut ids = Vec::new();
                for rank in 0..n {
                    let (p, i) = (all(n), rank as usize);
                    let gathered_lens: Vec<usize> = (0..n as usize).map(|j| j + 2 * r).collect();
                    let own_lens: Vec<usize> = (0..n as usize).map(|j| j + 2 * i).collect();
                    let first_lens: Vec<usize> = (0..n as usize).collect();
                    let scattered = if i == r {
                        (0..n as usize).map(|j| block(r, j)).collect()
                    } else {
                        Vec::new()
                    };
                    let to_each = (0..n as usize).map(|j| block(i, j)).collect();
                    let started: Vec<u64> = [
                        Schedule::gather_varcount(&p, i, r, block(i, r), &gathered_lens),
                        // (A scatter's receivers forward their subtree's blocks, whose
                        // lengths they do not know: the caller checks its own block's.)
                        Schedule::scatter(&p, i, r, scattered),
                        Schedule::all_gather_varcount(&p, i, block(i, 0), &first_lens),
                        Schedule::all_to_all_varcount(&p, i, to_each, &own_lens),
                    ]
                    .into_iter()
                    .map(|s| net.start(rank, s).unwrap())
                    .collect();
                    ids.push(started);
                }
                net.run();
                for rank in 0..n {
                    let i = rank as usize;
                    let got: Vec<Vec<u8>> = ids[i]
                        .iter()
                        .map(|&id| net.poll(rank, id).expect("complete").unwrap())
                        .collect();
                    let gathered: Vec<u8> = (0..n as usize).flat_map(|j| block(j, r)).collect();
                    let at_root = if i == r { gathered } else { Vec::new() };
                    assert_eq!(got[0], at_root, "gather n {n} rank {rank}");
                    assert_eq!(got[1], block(r, i), "scatter n {n} rank {rank}");
                    let all: Vec<u8> = (0..n as usize).flat_map(|j| block(j, 0)).collect();
                    assert_eq!(got[2], all, "all_gather n {n} rank {rank}");
                    let exchanged: Vec<u8> = (0..n as usize).flat_map(|j| block(j, i)).collect();
                    assert_eq!(got[3], exchanged, "all_to_all n {n} rank {rank}");
                }
            }
        }
        // Rank 1 sends 3 bytes where the root expects 2: the root's gather and both ranks'
        // all-to-all (rank 0 expects 1 byte from rank 1, rank 1 expects 1 from rank 0 and
        // gets 2) fail with Error::Count; rank 1's gather, which receives nothing, succeeds.
        let mut net = Net::new(2, 5);
        let g0 = Schedule::gather_varcount(&all(2), 0, 0, vec![0; 1], &[1, 2]);
        let g1 = Schedule::gather_varcount(&all(2), 1, 0, vec![1; 3], &[]);
        let a0 = Schedule::all_to_all_varcount(&all(2), 0, vec![vec![0], vec![0; 2]], &[1, 1]);
        let a1 = Schedule::all_to_all_varcount(&all(2), 1, vec![vec![1; 2], vec![1]], &[1, 1]);
        let ids0 = [net.start(0, g0).unwrap(), net.start(0, a0).unwrap()];
        let ids1 = [net.start(1, g1).unwrap(), net.start(1, a1).unwrap()];
        net.run();
        assert!(matches!(
            net.poll(0, ids0[0]),
            Some(Err(Error::Count { .. }))
        ));
        assert_eq!(net.poll(1, ids1[0]), Some(Ok(Vec::new())));
        assert!(matches!(
            net.poll(0, ids0[1]),
            Some(Err(Error::Count { .. }))
        ));
        assert!(matches!(
            net.poll(1, ids1[1]),
            Some(Err(Error::Count { .. }))
        ));
        for engine in &mut net.engines {
            assert!(!engine.schedules_running(WORLD_CONTEXT));
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "one message per sender")]
    fn a_schedule_receiving_twice_from_one_sender_is_refused() {
        Schedule::new(
            vec![
                Step::Receive { from: 1, into: 0 },
                Step::Receive { from: 1, into: 1 },
            ],
            vec![Vec::new(), Vec::new()],
            None,
            Vec::new(),
        );
    }

    fn u64s(bytes: &[u8]) -> Vec<u64> {
        bytes
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The ring (numbered messages, several along each pair, which may overtake each other
    /// on the wire), and the reductions whose steps a thread outside the engine runs (a
    /// caller's and an unlocked one), give the same results as the engine's own, in rank
    /// order for a non-commutative operation.
    #[test]
    fn rings_and_combines_outside_the_engine_give_every_result_in_any_order() {
        for n in 1..=9u32 {
            for seed in 0..4 {
                let mut net = Net::new(n, seed + 1000 * n as u64);
                net.shuffle = true;
                let root = (seed as u32 * 5) % n;
                let count = 2 * n as usize + seed as usize;
                let vector = |rank: u32| -> Vec<u8> {
                    (0..count as u64)
                        .flat_map(|k| (k * 100 + rank as u64).to_le_bytes())
                        .collect()
                };
                let unlocked_sum = || Reduction::unlocked(Arc::new(add), 8, true);
                let mut ids = Vec::new();
                let mut callers = Vec::new();
                for rank in 0..n {
                    let (p, i) = (all(n), rank as usize);
                    let c = bytes(contribution(rank));
                    let by_caller = || Reduction::by_caller(32, false);
                    let started: Vec<u64> = [
                        Schedule::ring_all_reduce(&p, i, vector(rank), sum()),
                        Schedule::ring_all_reduce(&p, i, vector(rank), unlocked_sum()),
                        Schedule::all_reduce(&p, i, c.clone(), by_caller()),
                        Schedule::scan(&p, i, c.clone(), by_caller(), false),
                        Schedule::scan(&p, i, c, by_caller(), true),
                        Schedule::reduce(&p, i, root as usize, vector(rank), unlocked_sum()),
                    ]
                    .into_iter()
                    .map(|schedule| net.start(rank, schedule).unwrap())
                    .collect();
                    callers.extend(started[2..5].iter().map(|&id| (rank, id)));
                    ids.push(started);
                }
                net.settle(&callers, multiply);
                let total: Vec<u64> = (0..count as u64)
                    .map(|k| (0..n as u64).map(|r| k * 100 + r).sum())
                    .collect();
                let upto = |last: u32| bytes((0..=last).map(contribution).reduce(product).unwrap());
                for rank in 0..n {
                    let mut outcome = |k: usize| {
                        let id = ids[rank as usize][k];
                        let polled = net.poll(rank, id);
                        polled
                            .unwrap_or_else(|| panic!("n {n} seed {seed} {rank}: {k}"))
                            .unwrap()
                    };
                    let what = format!("n {n} seed {seed} rank {rank}");
                    assert_eq!(u64s(&outcome(0)), total, "{what}: ring");
                    assert_eq!(u64s(&outcome(1)), total, "{what}: unlocked ring");
                    assert_eq!(outcome(2), upto(n - 1), "{what}: caller's all-reduce");
                    assert_eq!(outcome(3), upto(rank), "{what}: caller's scan");
                    let below = if rank == 0 { vec![] } else { upto(rank - 1) };
                    assert_eq!(outcome(4), below, "{what}: caller's exscan");
                    let reduced = if rank == root { total.clone() } else { vec![] };
                    assert_eq!(u64s(&outcome(5)), reduced, "{what}: unlocked reduce");
                }
                for engine in &mut net.engines {
                    assert!(!engine.schedules_running(WORLD_CONTEXT));
                }
            }
        }
    }

    /// `all_reduce_of` copies the caller's bytes as its algorithm keeps them: at least
    /// RING_MIN_BYTES of a commutative reduction is the ring (chunks straight from the bytes),
    /// anything else recursive doubling, and either gives the sum at every rank.
    #[test]
    fn an_all_reduce_of_borrowed_bytes_rings_when_large_and_gives_the_sum() {
        for n in [1u32, 2, 3, 5] {
            for elements in [3usize, RING_MIN_BYTES / 8 + 5] {
                let mut net = Net::new(n, 40 + n as u64);
                net.shuffle = true;
                let vector = |rank: u32| -> Vec<u8> {
                    (0..elements as u64)
                        .flat_map(|k| (k + 1000 * rank as u64).to_le_bytes())
                        .collect()
                };
                let ids: Vec<u64> = (0..n)
                    .map(|rank| {
                        let schedule =
                            Schedule::all_reduce_of(&all(n), rank as usize, &vector(rank), sum());
                        let rings = n > 1 && elements > 3;
                        assert_eq!(!schedule.numbers.is_empty(), rings, "n {n} {elements}");
                        net.start(rank, schedule).unwrap()
                    })
                    .collect();
                net.run();
                let total: Vec<u64> = (0..elements as u64)
                    .map(|k| (0..n as u64).map(|r| k + 1000 * r).sum())
                    .collect();
                for (rank, &id) in ids.iter().enumerate() {
                    let got = net.poll(rank as u32, id).expect("done").unwrap();
                    assert_eq!(u64s(&got), total, "n {n} rank {rank}");
                }
            }
        }
    }

    /// A ring's messages along a pair carry their numbers: with the numbers taken away, a
    /// message that overtakes another lands in the wrong chunk (this is what the numbers are
    /// for).
    #[test]
    fn a_rings_messages_along_a_pair_are_numbered() {
        let p = all(3);
        let ring = Schedule::ring_all_reduce(&p, 0, vec![0; 8 * 3], sum());
        let numbers: Vec<u16> = ring.numbers.clone();
        // Sends to the right and receives from the left alternate: 0, 0, 1, 1, 2, 2, 3, 3.
        assert_eq!(numbers, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(ring.tag(7, 3), 7 | 1 << SEQUENCE_BITS);
        let plain = Schedule::doubling_all_reduce(&p, 0, vec![0; 8], sum());
        assert!(plain.numbers.is_empty());
        assert_eq!(plain.tag(7, 1), 7);
    }

    /// A combining step that waits for a thread outside the engine holds the schedule: no
    /// later step runs (its next send does not go out) until the step comes back, and the
    /// current step's message does not count as awaited (no flow-control loan for it). A
    /// caller's schedule whose request is dropped ends at once (nobody else can combine).
    #[test]
    fn a_combining_step_handed_out_holds_its_schedule_until_it_comes_back() {
        let mut net = Net::new(3, 3);
        let p = all(3);
        // At 3 participants, the participant at 1 takes 0's data and combines it before
        // exchanging with 2.
        let ids: Vec<u64> = (0..3)
            .map(|r| {
                let data = (r as u64 + 1).to_le_bytes().to_vec();
                net.start(
                    r,
                    Schedule::all_reduce(&p, r as usize, data, Reduction::by_caller(8, true)),
                )
                .unwrap()
            })
            .collect();
        net.run();
        assert!(net.engines[1]
            .take_combine(WORLD_CONTEXT, ids[1] + 1)
            .is_none());
        let mut combine = net.engines[1]
            .take_combine(WORLD_CONTEXT, ids[1])
            .expect("rank 1 waits to combine");
        assert!(
            net.engines[1].take_combine(WORLD_CONTEXT, ids[1]).is_none(),
            "taken once"
        );
        assert!(
            net.engines[1].take_unlocked_combine().is_none(),
            "a caller's, not unlocked"
        );
        net.run();
        assert!(
            net.poll(2, ids[2]).is_none(),
            "2 waits for 1, which waits to combine"
        );
        assert!(!net.engines[1].a_collective_waits_for(WorldRank(0)));
        assert_eq!(
            (u64s(&combine.input), u64s(&combine.inout)),
            (vec![1], vec![2])
        );
        add(&combine.input, &mut combine.inout);
        let mut out = Outgoing::new();
        net.engines[1].combined(combine, &mut out);
        net.push(1, out);
        net.settle(&[(1, ids[1]), (2, ids[2]), (0, ids[0])], add);
        for (rank, &id) in ids.iter().enumerate() {
            assert_eq!(
                net.poll(rank as u32, id),
                Some(Ok(6u64.to_le_bytes().to_vec()))
            );
        }

        // Dropped while it waits for its caller: it ends, and is forgotten.
        let mut net = Net::new(2, 4);
        let p = all(2);
        let ids: Vec<u64> = (0..2)
            .map(|r| {
                let schedule =
                    Schedule::all_reduce(&p, r as usize, vec![1; 8], Reduction::by_caller(8, true));
                net.start(r, schedule).unwrap()
            })
            .collect();
        net.run();
        assert!(net.poll(0, ids[0]).is_none());
        net.engines[0].abandon_schedule(WORLD_CONTEXT, ids[0]);
        assert!(net.engines[0].comms[&WORLD_CONTEXT].schedules.is_empty());
        assert!(!net.engines[0].schedules_running(WORLD_CONTEXT));
    }

    /// A schedule whose outcome was taken leaves its box (emptied of its buffers) for the next
    /// one: one call after another costs no allocation of a box each.
    #[test]
    fn a_finished_schedules_box_serves_the_next() {
        let mut net = Net::new(2, 8);
        let p = all(2);
        let mut boxes = Vec::new();
        for round in 0..3 {
            let ids: Vec<u64> = (0..2)
                .map(|r| net.start(r, Schedule::all_reduce(&p, r as usize, vec![1; 8], sum())))
                .collect::<Result<_>>()
                .unwrap();
            let comm = &net.engines[0].comms[&WORLD_CONTEXT];
            boxes.push(&*comm.schedules[0] as *const Running as usize);
            net.run();
            assert_eq!(net.poll(0, ids[0]), Some(Ok(vec![2; 8])));
            assert_eq!(net.poll(1, ids[1]), Some(Ok(vec![2; 8])));
            let spare = net.engines[0].comms[&WORLD_CONTEXT].spare.as_ref();
            assert!(
                spare.is_some_and(|s| s.schedule.buffers.is_empty()),
                "round {round}"
            );
        }
        assert_eq!(boxes[1], boxes[0]);
        assert_eq!(boxes[2], boxes[0]);
    }

    /// Call numbers wrap at 2^SEQUENCE_BITS: a call whose number is still held by a running
    /// schedule is refused, not mixed up with it.
    #[test]
    fn a_call_number_still_running_is_not_taken_twice() {
        let mut net = Net::new(2, 6);
        let p = all(2);
        let first = net.start(0, Schedule::barrier(&p, 0, None)).unwrap();
        // 2^20 - 1 calls later (started and finished), the numbers come round to the first.
        let state = net.engines[0].comms.get_mut(&WORLD_CONTEXT).unwrap();
        state.collective_sequence = (1 << SEQUENCE_BITS) - 1;
        state.collective_calls += (1 << SEQUENCE_BITS) - 2;
        let last = net.start(0, Schedule::barrier(&p, 0, None)).unwrap();
        let refused = net.start(0, Schedule::barrier(&p, 0, None));
        assert!(
            matches!(refused, Err(Error::Argument { .. })),
            "{refused:?}"
        );
        assert!(net.poll(0, first).is_none());
        assert!(net.poll(0, last).is_none());
        let last = (1 << SEQUENCE_BITS) - 1;
        let state = net.engines[1].comms.get_mut(&WORLD_CONTEXT).unwrap();
        state.collective_sequence = last;
        let second = net.start(1, Schedule::barrier(&p, 1, None)).unwrap();
        let state = net.engines[1].comms.get_mut(&WORLD_CONTEXT).unwrap();
        assert_eq!(state.collective_sequence, 0, "wrapped");
        let _ = second;
    }

    #[test]
    fn every_builder_receives_at_most_once_from_each_participant() {
        // Schedule::new asserts it; this builds every algorithm at every place to make sure.
        for n in 1..=17u32 {
            let p = all(n);
            for i in 0..n as usize {
                for root in [0, i, n as usize - 1] {
                    let blocks = vec![vec![1u8]; n as usize];
                    let root_blocks = if i == root {
                        blocks.clone()
                    } else {
                        Vec::new()
                    };
                    for hosts in host_layouts(n as usize) {
                        Schedule::barrier(&p, i, hosts.as_ref());
                    }
                    Schedule::broadcast(&p, i, root, vec![1]);
                    Schedule::reduce(&p, i, root, vec![1; 8], sum());
                    Schedule::all_reduce(&p, i, vec![1; 8], sum());
                    Schedule::gather(&p, i, root, vec![1]);
                    Schedule::scatter(&p, i, root, root_blocks);
                    Schedule::all_gather(&p, i, vec![1]);
                    Schedule::all_to_all(&p, i, blocks);
                    Schedule::scan(&p, i, vec![1; 8], sum(), true);
                    // (Numbered: several messages along one pair.)
                    let ring = Schedule::ring_all_reduce(&p, i, vec![1; 8 * n as usize], sum());
                    assert_eq!(ring.numbers.len(), ring.steps.len());
                }
            }
        }
    }

    #[test]
    fn scans_combine_in_rank_order() {
        for n in 1..=8u32 {
            let mut net = Net::new(n, 77 + n as u64);
            let mut ids = Vec::new();
            for rank in 0..n {
                let (p, i) = (all(n), rank as usize);
                let c = bytes(contribution(rank));
                let inclusive = Schedule::scan(&p, i, c.clone(), matrix_product(), false);
                let exclusive = Schedule::scan(&p, i, c, matrix_product(), true);
                ids.push([
                    net.start(rank, inclusive).unwrap(),
                    net.start(rank, exclusive).unwrap(),
                ]);
            }
            net.run();
            for rank in 0..n {
                let [a, b] = ids[rank as usize];
                let upto = |last: u32| bytes((0..=last).map(contribution).reduce(product).unwrap());
                assert_eq!(net.poll(rank, a), Some(Ok(upto(rank))), "n {n} rank {rank}");
                let below = if rank == 0 {
                    Vec::new()
                } else {
                    upto(rank - 1)
                };
                assert_eq!(net.poll(rank, b), Some(Ok(below)), "n {n} rank {rank}");
            }
        }
    }

    #[test]
    fn no_rank_leaves_a_barrier_before_every_rank_entered() {
        for n in 2..=9u32 {
            for (l, hosts) in host_layouts(n as usize).iter().enumerate() {
                for last in 0..n {
                    let mut net = Net::new(n, (n + 10 * last) as u64 + 100 * l as u64);
                    let barrier =
                        |rank: u32| Schedule::barrier(&all(n), rank as usize, hosts.as_ref());
                    let mut ids = BTreeMap::new();
                    for rank in (0..n).filter(|&r| r != last) {
                        ids.insert(rank, net.start(rank, barrier(rank)).unwrap());
                    }
                    net.run();
                    for (&rank, &id) in &ids {
                        assert!(net.poll(rank, id).is_none(), "n {n} {hosts:?} last {last}");
                    }
                    ids.insert(last, net.start(last, barrier(last)).unwrap());
                    net.run();
                    for (&rank, &id) in &ids {
                        assert_eq!(net.poll(rank, id), Some(Ok(Vec::new())), "n {n} {hosts:?}");
                    }
                }
            }
        }
    }

    /// A barrier over hosts, run step by step with each message carrying what its sender has
    /// heard of: every participant finishes (nobody waits for a message that is never sent),
    /// each direction between two participants carries at most one message, and a participant
    /// finishes only once it has heard, transitively, of every participant's entry. Only the
    /// leaders' messages cross between hosts.
    #[test]
    fn a_barrier_over_hosts_hears_from_everyone_and_crosses_hosts_only_between_leaders() {
        let mut layouts: Vec<Vec<u32>> = Vec::new();
        for n in 1..=40usize {
            for per_host in 1..=5 {
                layouts.push((0..n).map(|i| (i / per_host) as u32).collect());
                layouts.push((0..n).map(|i| (i % per_host) as u32).collect());
            }
            // Uneven hosts, in no particular order of host classes.
            layouts.push((0..n).map(|i| ((i * 7 + 3) % 5 % 3) as u32 * 10).collect());
        }
        for classes in &layouts {
            let n = classes.len();
            let hosts = HostGroups::new(classes);
            let plans: Vec<Vec<BarrierStep>> = (0..n)
                .map(|i| {
                    let mut steps = Vec::new();
                    barrier_steps(n, i, hosts.as_ref(), |step| {
                        steps.push(step);
                        Ok(())
                    })
                    .unwrap();
                    steps
                })
                .collect();
            let mut heard: Vec<Vec<bool>> =
                (0..n).map(|i| (0..n).map(|j| i == j).collect()).collect();
            let mut next = vec![0; n];
            let mut in_flight: BTreeMap<(usize, usize), (Vec<bool>, usize)> = BTreeMap::new();
            let mut used = std::collections::BTreeSet::new();
            let mut crossing = 0;
            // The longest chain of messages ending at each participant so far.
            let mut depth = vec![0; n];
            loop {
                let mut moved = false;
                for i in 0..n {
                    while let Some(&step) = plans[i].get(next[i]) {
                        match step {
                            BarrierStep::Send(to) => {
                                assert!(used.insert((i, to)), "{classes:?}: {i} to {to} twice");
                                crossing += usize::from(classes[i] != classes[to]);
                                in_flight.insert((i, to), (heard[i].clone(), depth[i] + 1));
                            }
                            BarrierStep::Receive(from) => {
                                let Some((carried, chain)) = in_flight.remove(&(from, i)) else {
                                    break;
                                };
                                for (mine, theirs) in heard[i].iter_mut().zip(carried) {
                                    *mine |= theirs;
                                }
                                depth[i] = depth[i].max(chain);
                            }
                        }
                        next[i] += 1;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
            for i in 0..n {
                assert_eq!(next[i], plans[i].len(), "{classes:?}: {i} waits forever");
                assert!(heard[i].iter().all(|&h| h), "{classes:?}: {i} left early");
            }
            assert!(in_flight.is_empty(), "{classes:?}: a message nobody takes");
            if let Some(hosts) = &hosts {
                let leaders = hosts.hosts();
                let rounds = leaders.next_power_of_two().trailing_zeros() as usize;
                assert_eq!(crossing, leaders * rounds, "{classes:?}");
                // Within the hosts a tree: one message up and one down per non-leader.
                assert_eq!(
                    used.len(),
                    2 * (n - leaders) + leaders * rounds,
                    "{classes:?}"
                );
                // Up and down ⌈log₄ k⌉ levels of the largest host, plus the leaders' rounds.
                let largest = hosts.groups.iter().map(Vec::len).max().unwrap_or(0);
                let mut levels = 0;
                while HOST_TREE_RADIX.pow(levels) < largest {
                    levels += 1;
                }
                let longest = depth.iter().copied().max().unwrap_or(0);
                assert!(
                    longest <= 2 * levels as usize + rounds,
                    "{classes:?}: depth {longest}"
                );
            }
        }
    }

    #[test]
    fn a_participant_failing_before_or_during_fails_the_call_everywhere_else() {
        for n in 2..=7u32 {
            for victim in 0..n {
                for before in [true, false] {
                    let mut net = Net::new(n, (victim + 10 * n) as u64);
                    if before {
                        net.kill(victim);
                    }
                    let mut ids = BTreeMap::new();
                    // Barriers over hosts beside the all-reduce: two participants a host, and
                    // five (a leader with children at two levels of its tree).
                    let pairs: Vec<u32> = (0..n).map(|r| r / 2).collect();
                    let pairs = HostGroups::new(&pairs);
                    let fives: Vec<u32> = (0..n).map(|r| r / 5).collect();
                    let fives = HostGroups::new(&fives);
                    for rank in (0..n).filter(|&r| r != victim || !before) {
                        let s = Schedule::all_reduce(&all(n), rank as usize, vec![1; 8], sum());
                        ids.insert((rank, 0), net.start(rank, s));
                        let s = Schedule::barrier(&all(n), rank as usize, pairs.as_ref());
                        ids.insert((rank, 1), net.start(rank, s));
                        let s = Schedule::barrier(&all(n), rank as usize, fives.as_ref());
                        ids.insert((rank, 2), net.start(rank, s));
                    }
                    if !before {
                        // Some of its messages may be out; it dies before it received all.
                        for _ in 0..net.random(4) {
                            net.step();
                        }
                        net.kill(victim);
                    }
                    net.run();
                    for (&(rank, _), id) in &ids {
                        if rank == victim {
                            continue;
                        }
                        let outcome = match id {
                            Err(error) => Err(error.clone()),
                            Ok(id) => net.poll(rank, *id).expect("no survivor waits forever"),
                        };
                        assert_eq!(
                            outcome,
                            Err(Error::ProcFailed { rank: victim }),
                            "n {n} victim {victim} before {before} rank {rank}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_failure_after_the_call_returned_changes_nothing_and_disables_the_next() {
        let mut net = Net::new(4, 7);
        let ids: Vec<u64> = (0..4)
            .map(|r| {
                net.start(
                    r,
                    Schedule::all_reduce(&all(4), r as usize, vec![2; 8], sum()),
                )
            })
            .collect::<Result<_>>()
            .unwrap();
        net.run();
        for rank in 0..4 {
            // Four contributions of 0x0202..02: their sum is 0x0808..08.
            assert_eq!(net.poll(rank, ids[rank as usize]), Some(Ok(vec![8; 8])));
        }
        net.kill(3);
        net.run();
        assert_eq!(
            net.start(0, Schedule::barrier(&all(4), 0, None)),
            Err(Error::ProcFailed { rank: 3 })
        );
    }

    #[test]
    fn a_call_complete_but_not_yet_returned_fails_with_a_failure_learned_meanwhile() {
        // As a blocking call that finds every message buffered still fails on a failure
        // learned before it returns (docs/src/semantics.md §3.3), a schedule whose steps all ran
        // fails on a failure learned before its poll takes the outcome.
        let mut net = Net::new(3, 8);
        let ids: Vec<u64> = (0..3)
            .map(|r| net.start(r, Schedule::barrier(&all(3), r as usize, None)))
            .collect::<Result<_>>()
            .unwrap();
        net.run();
        net.kill(2);
        for rank in 0..2 {
            assert_eq!(
                net.poll(rank, ids[rank as usize]),
                Some(Err(Error::ProcFailed { rank: 2 }))
            );
        }
    }

    #[test]
    fn revocation_ends_pending_calls_everywhere() {
        let mut net = Net::new(3, 1);
        let a = net.start(0, Schedule::barrier(&all(3), 0, None)).unwrap();
        let b = net.start(1, Schedule::barrier(&all(3), 1, None)).unwrap();
        let mut out = Outgoing::new();
        net.engines[0].revoke(WORLD_CONTEXT, None, &mut out);
        net.push(0, out);
        net.run();
        assert_eq!(net.poll(0, a), Some(Err(Error::Revoked)));
        assert_eq!(net.poll(1, b), Some(Err(Error::Revoked)));
        // The revoked communicator takes no new call.
        assert_eq!(
            net.start(2, Schedule::barrier(&all(3), 2, None)),
            Err(Error::Revoked)
        );
    }

    #[test]
    fn another_threads_blocking_collective_refuses_a_schedule() {
        let mut engine = Engine::new(WorldRank(0), 2);
        engine.begin_collective(WORLD_CONTEXT, 0, true).unwrap();
        let mut out = Outgoing::new();
        assert_eq!(
            engine.start_schedule(
                WORLD_CONTEXT,
                0,
                |_| Ok(Schedule::barrier(&all(2), 0, None)),
                &mut out
            ),
            Err(Error::ConcurrentCollective)
        );
        engine.end_collective(WORLD_CONTEXT);
        // A blocking collective may start while schedules run: it takes the next number.
        let id = engine
            .start_schedule(
                WORLD_CONTEXT,
                0,
                |_| Ok(Schedule::barrier(&all(2), 0, None)),
                &mut out,
            )
            .unwrap();
        // Calls 0 (the blocking one), 1 (the schedule), 2: the refused start took no number.
        let call = engine.begin_collective(WORLD_CONTEXT, 0, true).unwrap();
        assert_eq!(call.sequence, 2);
        let mut out = Outgoing::new();
        assert_eq!(engine.poll_schedule(WORLD_CONTEXT, id, &mut out), None);
    }

    #[test]
    fn large_messages_under_a_small_cap_wait_for_credit_and_arrive_whole() {
        for seed in 0..4 {
            let n = 5;
            // Windows of 4 KiB per sender; each message is 64 KiB, larger than a window.
            let mut net = Net::with_cap(n, seed, Some(4096 * n as usize));
            let data: Vec<u8> = (0..65536u32).map(|i| (i * 7 + seed as u32) as u8).collect();
            let mut ids = Vec::new();
            for rank in 0..n {
                let mine = if rank == 2 { data.clone() } else { Vec::new() };
                let mut started = Vec::new();
                for _ in 0..3 {
                    let s = Schedule::broadcast(&all(n), rank as usize, 2, mine.clone());
                    started.push(net.start(rank, s).unwrap());
                }
                ids.push(started);
            }
            net.run();
            for rank in 0..n {
                // (The root has the bytes: no result there.)
                let expected = if rank == 2 { Vec::new() } else { data.clone() };
                for &id in &ids[rank as usize] {
                    assert_eq!(
                        net.poll(rank, id),
                        Some(Ok(expected.clone())),
                        "seed {seed}"
                    );
                }
            }
            for engine in &net.engines {
                let stats = engine.flow_stats();
                assert_eq!(stats.collective_bytes, 0, "every charge was given back");
            }
        }
    }

    #[test]
    fn a_later_calls_message_holding_the_window_gets_a_loan_not_a_deadlock() {
        // Rank 0's call 1 sends a message larger than the window at once; rank 1 holds it
        // (it starts call 1 only after call 0). Rank 0's call 0 then has a message for rank 1,
        // queued behind the held one for credit, which rank 1's call 0 waits for: without a
        // loan on the collective lane, neither call can end.
        let mut net = Net::with_cap(2, 4, Some(8192)); // windows of 4 KiB
        let big = vec![7u8; 5000];
        let call0_at_0 = Schedule::new(
            vec![
                Step::Receive { from: 1, into: 1 },
                Step::Send { to: 1, buffer: 0 },
            ],
            vec![big.clone(), Vec::new()],
            None,
            Vec::new(),
        );
        let call1_at_0 = Schedule::new(
            vec![Step::Send { to: 1, buffer: 0 }],
            vec![big.clone()],
            None,
            Vec::new(),
        );
        let a0 = net.start(0, call0_at_0).unwrap();
        let a1 = net.start(0, call1_at_0).unwrap();
        net.run();
        let call0_at_1 = Schedule::new(
            vec![
                Step::Send { to: 0, buffer: 0 },
                Step::Receive { from: 0, into: 0 },
            ],
            vec![vec![1]],
            None,
            vec![0],
        );
        let b0 = net.start(1, call0_at_1).unwrap();
        net.run();
        assert_eq!(
            net.poll(1, b0),
            Some(Ok(big.clone())),
            "call 0 ended at rank 1"
        );
        let call1_at_1 = Schedule::new(
            vec![Step::Receive { from: 0, into: 0 }],
            vec![Vec::new()],
            None,
            vec![0],
        );
        let b1 = net.start(1, call1_at_1).unwrap();
        net.run();
        assert_eq!(net.poll(1, b1), Some(Ok(big)));
        assert_eq!(net.poll(0, a0), Some(Ok(Vec::new())));
        assert_eq!(net.poll(0, a1), Some(Ok(Vec::new())));
        assert!(net.engines[1].flow_stats().loans > 0, "it took a loan");
    }

    #[test]
    fn an_abandoned_schedule_still_serves_its_peers() {
        let mut net = Net::new(3, 5);
        let ids: Vec<u64> = (0..3)
            .map(|r| net.start(r, Schedule::broadcast(&all(3), r as usize, 0, vec![9; 3])))
            .collect::<Result<_>>()
            .unwrap();
        net.engines[0].abandon_schedule(WORLD_CONTEXT, ids[0]);
        net.run();
        assert_eq!(net.poll(1, ids[1]), Some(Ok(vec![9; 3])));
        assert_eq!(net.poll(2, ids[2]), Some(Ok(vec![9; 3])));
        assert!(net.engines[0].comms[&WORLD_CONTEXT].schedules.is_empty());
    }

    #[test]
    fn different_counts_in_a_reduction_are_an_error_not_a_panic() {
        let mut net = Net::new(2, 9);
        let a = net
            .start(0, Schedule::all_reduce(&all(2), 0, vec![1; 8], sum()))
            .unwrap();
        let b = net
            .start(1, Schedule::all_reduce(&all(2), 1, vec![1; 16], sum()))
            .unwrap();
        net.run();
        // Each exchange compares the partner's bytes with its own: both see the difference,
        // and both finish (each went on with its own bytes).
        assert!(matches!(net.poll(0, a), Some(Err(Error::Count { .. }))));
        assert!(matches!(net.poll(1, b), Some(Err(Error::Count { .. }))));
    }

    /// Every round pairs each participant's send with exactly one receiver's receive (the
    /// sends are a permutation and `from` is its inverse), and after the last round every
    /// participant has heard, transitively, from every other one (no rank can leave a barrier
    /// before all entered). At a power of two each round is a pairwise exchange.
    #[test]
    fn barrier_rounds_let_every_participant_hear_from_every_other() {
        for n in 1..=40usize {
            // heard[i]: the participants whose entry participant i has heard of.
            let mut heard: Vec<Vec<bool>> =
                (0..n).map(|i| (0..n).map(|j| i == j).collect()).collect();
            let mut distance = 1;
            while distance < n {
                let rounds: Vec<(usize, usize)> =
                    (0..n).map(|i| barrier_round(n, i, distance)).collect();
                for (i, &(to, from)) in rounds.iter().enumerate() {
                    assert_eq!(
                        rounds[to].1, i,
                        "n {n}, distance {distance}: {i} sends to {to}"
                    );
                    assert_eq!(
                        rounds[from].0, i,
                        "n {n}, distance {distance}: {i} waits on {from}"
                    );
                    if n.is_power_of_two() {
                        assert_eq!(to, from);
                    }
                }
                let before = heard.clone();
                for (i, &(_, from)) in rounds.iter().enumerate() {
                    for j in 0..n {
                        heard[i][j] |= before[from][j];
                    }
                }
                distance <<= 1;
            }
            assert!(heard.iter().all(|row| row.iter().all(|&h| h)), "n {n}");
        }
    }

    /// Recursive doubling's plan: pairings and exchanges are symmetric, the ranks that
    /// exchange do so in lockstep, and at the end every participant holds the combination of
    /// every participant's data, combined in rank order (each combination joins two adjacent
    /// ranges, the lower one first).
    #[test]
    fn recursive_doubling_combines_every_participant_in_rank_order() {
        for n in 1..=40usize {
            let plans: Vec<Doubling> = (0..n).map(|i| Doubling::new(n, i)).collect();
            // held[i]: the range of participants whose data participant i has combined.
            let mut held: Vec<(usize, usize)> = (0..n).map(|i| (i, i + 1)).collect();
            let join = |lower: (usize, usize), upper: (usize, usize)| {
                assert_eq!(
                    lower.1, upper.0,
                    "n {n}: {lower:?} then {upper:?} are not adjacent"
                );
                (lower.0, upper.1)
            };
            for (i, plan) in plans.iter().enumerate() {
                match plan.fold {
                    Fold::Give(to) => assert_eq!(plans[to].fold, Fold::Take(i)),
                    Fold::Take(from) => {
                        assert_eq!(plans[from].fold, Fold::Give(i));
                        held[i] = join(held[from], held[i]);
                    }
                    Fold::None => {}
                }
            }
            let partners: Vec<Vec<usize>> = plans.iter().map(|p| p.partners().collect()).collect();
            let rounds = partners.iter().map(Vec::len).max().unwrap_or(0);
            for round in 0..rounds {
                let before = held.clone();
                for (i, mine) in partners.iter().enumerate() {
                    if let Some(&partner) = mine.get(round) {
                        assert_eq!(
                            partners[partner].get(round),
                            Some(&i),
                            "n {n}, round {round}"
                        );
                        held[i] = if partner < i {
                            join(before[partner], before[i])
                        } else {
                            join(before[i], before[partner])
                        };
                    }
                }
            }
            for (i, plan) in plans.iter().enumerate() {
                if let Fold::Give(from) = plan.fold {
                    held[i] = held[from];
                }
            }
            assert!(held.iter().all(|&range| range == (0, n)), "n {n}: {held:?}");
        }
    }

    /// Starts `schedule` at `rank` as a blocking call's (held by its caller).
    fn start_held(net: &mut Net, rank: u32, schedule: Schedule, hold: Hold) -> Result<Started> {
        let mut out = Outgoing::new();
        let started = net.engines[rank as usize].start_schedule_as(
            WORLD_CONTEXT,
            rank,
            hold,
            |_| Ok(schedule),
            &mut out,
        );
        net.push(rank, out);
        started
    }

    /// Starts a barrier over two ranks at rank 0 as a blocking call's, before rank 1 entered:
    /// it runs (waiting for rank 1's message); its id.
    fn blocking_barrier_at_0(net: &mut Net) -> u64 {
        let started = start_held(net, 0, Schedule::barrier(&all(2), 0, None), Hold::Caller);
        match started {
            Ok(Started::Running(id)) => id,
            other => panic!("rank 1's message is not here yet: the call runs, not {other:?}"),
        }
    }

    #[test]
    fn a_blocking_calls_schedule_is_its_callers_to_advance_and_holds_the_slot() {
        let mut net = Net::new(2, 3);
        // Rank 0's barrier runs as a blocking call's: it holds the slot.
        let id = blocking_barrier_at_0(&mut net);
        let refused = net.start(0, Schedule::barrier(&all(2), 0, None));
        assert_eq!(
            refused,
            Err(Error::ConcurrentCollective),
            "another thread's collective"
        );
        // A step of the call that holds the slot (a creation's exchange) is not refused.
        let within = start_held(
            &mut net,
            0,
            Schedule::barrier(&all(1), 0, None),
            Hold::Within,
        );
        assert!(matches!(within, Ok(Started::Done(Ok(_)))), "{within:?}");
        // Rank 1 enters: its message reaches rank 0, whose delivery only buffers it.
        let other = net.start(1, Schedule::barrier(&all(2), 1, None)).unwrap();
        net.run();
        assert_eq!(net.poll(1, other), Some(Ok(Vec::new())));
        let engine = &mut net.engines[0];
        let running = &engine.comms[&WORLD_CONTEXT].schedules;
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].next, 1, "the delivery ran none of its steps");
        // Its message is here: no sender gets a loan for it.
        assert!(!engine.a_collective_waits_for(WorldRank(1)));
        // The caller's poll runs the step and gives the outcome; then the slot is free.
        let mut out = Outgoing::new();
        assert_eq!(
            engine.poll_schedule(WORLD_CONTEXT, id, &mut out),
            Some(Ok(Output::default()))
        );
        assert_eq!(engine.comms[&WORLD_CONTEXT].caller_driven, 0);
        engine.end_collective(WORLD_CONTEXT);
        assert!(net.start(0, Schedule::barrier(&all(2), 0, None)).is_ok());
    }

    #[test]
    fn a_blocking_call_that_finishes_at_its_start_is_never_queued() {
        let mut net = Net::new(3, 4);
        // A broadcast root only sends: done at its start, the slot still its caller's.
        let data = b"bytes".to_vec();
        let root = start_held(
            &mut net,
            0,
            Schedule::broadcast(&all(3), 0, 0, data),
            Hold::Caller,
        );
        assert!(
            matches!(root, Ok(Started::Done(Ok(ref r))) if r.is_empty()),
            "{root:?}"
        );
        assert!(net.engines[0].comms[&WORLD_CONTEXT].schedules.is_empty());
        assert_eq!(
            net.start(0, Schedule::barrier(&all(3), 0, None)),
            Err(Error::ConcurrentCollective),
            "held until the caller ends it"
        );
        net.engines[0].end_collective(WORLD_CONTEXT);
        // A receiver whose message is already here finishes at its start too.
        net.run();
        let received = start_held(
            &mut net,
            1,
            Schedule::broadcast(&all(3), 1, 0, Vec::new()),
            Hold::Caller,
        );
        assert!(
            matches!(received, Ok(Started::Done(Ok(ref r))) if r.clone().into_bytes() == b"bytes"),
            "{received:?}"
        );
        // ... unless a participant failed meanwhile that G does not recognize: ProcFailed, as
        // a blocking call's end gives it.
        net.engines[1].end_collective(WORLD_CONTEXT);
        net.kill(0);
        net.run();
        let after = start_held(
            &mut net,
            2,
            Schedule::barrier(&all(1), 0, None),
            Hold::Within,
        );
        assert_eq!(after.err(), Some(Error::ProcFailed { rank: 0 }));
    }

    #[test]
    fn a_blocking_call_left_by_its_thread_runs_to_its_end_on_deliveries() {
        let mut net = Net::new(2, 5);
        let id = blocking_barrier_at_0(&mut net);
        // Its thread unwinds (the rank was killed in the call): the request is dropped.
        net.engines[0].abandon_schedule(WORLD_CONTEXT, id);
        net.engines[0].end_collective(WORLD_CONTEXT);
        assert_eq!(net.engines[0].comms[&WORLD_CONTEXT].caller_driven, 0);
        // No poll comes: rank 1's message, delivered, runs it to its end, and it is forgotten.
        let other = net.start(1, Schedule::barrier(&all(2), 1, None)).unwrap();
        net.run();
        assert_eq!(net.poll(1, other), Some(Ok(Vec::new())));
        assert!(net.engines[0].comms[&WORLD_CONTEXT].schedules.is_empty());
        assert!(!net.engines[0].schedules_running(WORLD_CONTEXT));
    }

    #[test]
    fn a_malformed_block_message_fails_the_call_without_a_panic() {
        for payload in [
            vec![1, 2, 3],
            vec![9, 0, 0, 0, 0, 0, 0, 0],
            crate::blocks::encode([]),
        ] {
            let mut net = Net::new(2, 6);
            let (epoch, sequence) = net.engines[0]
                .next_collective_number(WORLD_CONTEXT)
                .unwrap();
            // Rank 0 gathers at the root: it waits for rank 1's one block.
            let id = net
                .start(0, Schedule::gather(&all(2), 0, 0, vec![7; 4]))
                .unwrap();
            let packet = Packet::Collective {
                context: WORLD_CONTEXT,
                source: 1,
                epoch,
                sequence,
                payload: payload.clone(),
            };
            let mut out = Outgoing::new();
            net.engines[0].handle_packet(WorldRank(1), packet, &mut out);
            let polled = net.poll(0, id);
            assert!(
                matches!(polled, Some(Err(Error::Internal { .. }))),
                "{payload:?}: {polled:?}"
            );
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! One-sided communication: windows, their operations and their synchronization, as engine
//! state (the guide's semantics chapter, "One-sided communication").
//!
//! A window lives on a communicator of its own (its creator dups one for it), so its traffic,
//! its failure views and its revocation are that communicator's. Each rank's part of the window
//! is a [`Memory`] its driver hands the engine: the engine reads and writes it when an
//! operation arrives, on whatever thread delivers the packet, whether or not the target is
//! inside a call (passive-target progress). Every operation is one request and one reply:
//!
//! - `Put`, `Get`, `Accumulate` (optionally fetching the old contents: get-accumulate,
//!   fetch-and-op) and `CompareAndSwap` name byte ranges of the target's memory ([`Block`]s:
//!   the target's datatype flattened by the origin), carry the origin's packed data, and are
//!   answered by a `Reply` once applied: an operation is complete at the target when its reply
//!   is in. A target applies an operation whole or not at all: the ranges and the accumulate
//!   code are checked before the first byte changes; an accumulate runs under the engine's
//!   lock, so accumulates on one target are atomic with respect to each other, in the order
//!   they arrive (per origin, the order they were issued: links keep order).
//! - Locks (`Lock` / `Granted` / `Unlock`): the target queues requests in arrival order and
//!   grants the head while it is compatible (any number of shared holders, or one exclusive).
//! - Generalized active target (`Post` / `Complete`): counted per peer.
//! - Fence is the runtime's: every operation of this rank answered, then a barrier on the
//!   window's communicator.
//!
//! Failures: an operation to a target known failed, or pending when it fails, completes with
//! `ProcFailed`, reported by the call that completes it ([`Engine::rma_flushed`], or the
//! operation's own result); a lock held or requested by a rank that fails is released; a
//! lock, a start or a wait that depends on a failed rank returns `ProcFailed`. A revoked
//! window's pending operations end with `Revoked`, and its target ignores further traffic.

use std::collections::VecDeque;
use std::fmt;

use super::{CommState, Engine};
use crate::packet::{ContextId, Outgoing, Packet, Payload};
use crate::{Error, Rank, Result};

/// One rank's part of a window, as the engine reaches it.
///
/// Ranges given to [`Memory::read`], [`Memory::write`] and [`Memory::accumulate`] are always
/// inside `0..len()` (the engine checks first).
pub trait Memory: Send + fmt::Debug {
    /// The size in bytes.
    fn len(&self) -> usize;

    /// Whether the size is zero.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the `len` bytes at `at` (inside `0..len()`) may be reached: a memory with holes
    /// (a dynamic window's attached regions) says no for bytes in a hole. Every byte, by
    /// default.
    fn covers(&self, _at: usize, _len: usize) -> bool {
        true
    }

    /// Copies `into.len()` bytes at `at` into `into`.
    fn read(&self, at: usize, into: &mut [u8]);

    /// Copies `bytes` to `at`.
    fn write(&mut self, at: usize, bytes: &[u8]);

    /// Whether `code` (an accumulate operation and element type, numbered by the window's
    /// creator) can combine the `len` bytes at `at`: `Err` says why not.
    ///
    /// # Errors
    /// A reason the caller reports as `Error::RmaRange`.
    fn check_accumulate(&self, at: usize, code: u64, len: usize)
        -> std::result::Result<(), String>;

    /// `memory[at..] = bytes op memory[at..]` element by element, for a `code` that
    /// [`Memory::check_accumulate`] accepted.
    fn accumulate(&mut self, at: usize, code: u64, bytes: &[u8]);
}

/// A byte range of a target's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Offset from the start of the target's memory.
    pub at: u64,
    /// Length in bytes.
    pub len: u64,
}

/// What one operation asks of its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Write the data to the blocks, in order.
    Put {
        /// Where.
        blocks: Vec<Block>,
    },
    /// Read the blocks, in order.
    Get {
        /// Where.
        blocks: Vec<Block>,
    },
    /// Combine the data into the blocks with the accumulate `code`; with `fetch`, the reply
    /// carries the blocks' contents from before.
    Accumulate {
        /// Where.
        blocks: Vec<Block>,
        /// The operation and element type, as the window's memory numbers them.
        code: u64,
        /// Whether the old contents come back.
        fetch: bool,
    },
    /// The data is `compare` then `swap`, of equal length: where the bytes at `at` equal
    /// `compare` they become `swap`; the reply carries the bytes from before.
    CompareAndSwap {
        /// Where.
        at: u64,
    },
}

/// How a target answered an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Applied.
    Done = 0,
    /// A block outside the target's memory, or data that does not fit: nothing applied.
    OutOfRange = 1,
    /// The target's memory refused the accumulate code: nothing applied.
    Refused = 2,
    /// The target has no window there any more (it freed it): nothing applied.
    Gone = 3,
}

/// A one-sided message; its data travels as the packet's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// An operation, numbered by its origin.
    Request {
        /// The origin's number for it.
        op: u64,
        /// What it asks.
        access: Access,
    },
    /// The answer to the origin's operation `op`; the payload holds what was read.
    Reply {
        /// The operation.
        op: u64,
        /// How it went.
        status: Status,
    },
    /// A lock request.
    Lock {
        /// Exclusive, or shared.
        exclusive: bool,
    },
    /// The lock requested is granted.
    Granted,
    /// The lock requested cannot be: the target freed its window.
    Gone,
    /// The lock held is released.
    Unlock,
    /// The sender exposes its memory to the receiver (`MPI_Win_post`).
    Post,
    /// The sender's access epoch to the receiver ended (`MPI_Win_complete`).
    Complete,
}

const REQUEST_PUT: u8 = 1;
const REQUEST_GET: u8 = 2;
const REQUEST_ACCUMULATE: u8 = 3;
const REQUEST_FETCH_ACCUMULATE: u8 = 4;
const REQUEST_COMPARE_AND_SWAP: u8 = 5;
const REPLY: u8 = 6;
const LOCK_SHARED: u8 = 7;
const LOCK_EXCLUSIVE: u8 = 8;
const GRANTED: u8 = 9;
const UNLOCK: u8 = 10;
const POST: u8 = 11;
const COMPLETE: u8 = 12;
const GONE: u8 = 13;

/// The most blocks one operation names (a bound on what a decoder allocates).
pub const MAX_BLOCKS: usize = 1 << 20;

impl Message {
    /// Appends the message's encoding (self-delimiting) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let blocks_of = |out: &mut Vec<u8>, blocks: &[Block]| {
            out.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
            for block in blocks {
                out.extend_from_slice(&block.at.to_le_bytes());
                out.extend_from_slice(&block.len.to_le_bytes());
            }
        };
        match self {
            Message::Request { op, access } => {
                let kind = match access {
                    Access::Put { .. } => REQUEST_PUT,
                    Access::Get { .. } => REQUEST_GET,
                    Access::Accumulate { fetch: false, .. } => REQUEST_ACCUMULATE,
                    Access::Accumulate { fetch: true, .. } => REQUEST_FETCH_ACCUMULATE,
                    Access::CompareAndSwap { .. } => REQUEST_COMPARE_AND_SWAP,
                };
                out.push(kind);
                out.extend_from_slice(&op.to_le_bytes());
                match access {
                    Access::Put { blocks } | Access::Get { blocks } => blocks_of(out, blocks),
                    Access::Accumulate { blocks, code, .. } => {
                        out.extend_from_slice(&code.to_le_bytes());
                        blocks_of(out, blocks);
                    }
                    Access::CompareAndSwap { at } => out.extend_from_slice(&at.to_le_bytes()),
                }
            }
            Message::Reply { op, status } => {
                out.push(REPLY);
                out.extend_from_slice(&op.to_le_bytes());
                out.push(*status as u8);
            }
            Message::Lock { exclusive } => out.push(if *exclusive {
                LOCK_EXCLUSIVE
            } else {
                LOCK_SHARED
            }),
            Message::Granted => out.push(GRANTED),
            Message::Gone => out.push(GONE),
            Message::Unlock => out.push(UNLOCK),
            Message::Post => out.push(POST),
            Message::Complete => out.push(COMPLETE),
        }
    }

    /// Decodes a message from the start of `bytes`; returns it and the bytes after it.
    ///
    /// # Errors
    /// What does not decode.
    pub fn decode(bytes: &[u8]) -> std::result::Result<(Message, &[u8]), &'static str> {
        let mut rest = bytes;
        let mut take = |n: usize| -> std::result::Result<&[u8], &'static str> {
            if rest.len() < n {
                return Err("one-sided message cut short");
            }
            let (head, tail) = rest.split_at(n);
            rest = tail;
            Ok(head)
        };
        let u64_of = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let kind = take(1)?[0];
        let message = match kind {
            REQUEST_PUT
            | REQUEST_GET
            | REQUEST_ACCUMULATE
            | REQUEST_FETCH_ACCUMULATE
            | REQUEST_COMPARE_AND_SWAP => {
                let op = u64_of(take(8)?);
                let access = if kind == REQUEST_COMPARE_AND_SWAP {
                    Access::CompareAndSwap {
                        at: u64_of(take(8)?),
                    }
                } else {
                    let code = if matches!(kind, REQUEST_ACCUMULATE | REQUEST_FETCH_ACCUMULATE) {
                        u64_of(take(8)?)
                    } else {
                        0
                    };
                    let count = u32::from_le_bytes(take(4)?.try_into().unwrap_or([0; 4])) as usize;
                    if count > MAX_BLOCKS {
                        return Err("too many blocks in a one-sided operation");
                    }
                    let mut blocks = Vec::with_capacity(count);
                    for _ in 0..count {
                        let at = u64_of(take(8)?);
                        let len = u64_of(take(8)?);
                        blocks.push(Block { at, len });
                    }
                    match kind {
                        REQUEST_PUT => Access::Put { blocks },
                        REQUEST_GET => Access::Get { blocks },
                        _ => Access::Accumulate {
                            blocks,
                            code,
                            fetch: kind == REQUEST_FETCH_ACCUMULATE,
                        },
                    }
                };
                Message::Request { op, access }
            }
            REPLY => {
                let op = u64_of(take(8)?);
                let status = match take(1)?[0] {
                    0 => Status::Done,
                    1 => Status::OutOfRange,
                    2 => Status::Refused,
                    3 => Status::Gone,
                    _ => return Err("unknown one-sided reply status"),
                };
                Message::Reply { op, status }
            }
            LOCK_SHARED => Message::Lock { exclusive: false },
            LOCK_EXCLUSIVE => Message::Lock { exclusive: true },
            GRANTED => Message::Granted,
            GONE => Message::Gone,
            UNLOCK => Message::Unlock,
            POST => Message::Post,
            COMPLETE => Message::Complete,
            _ => return Err("unknown one-sided message"),
        };
        Ok((message, rest))
    }
}

/// The lock this rank (as origin) holds or asked for at one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Held {
    #[default]
    None,
    Requested,
    Granted,
    /// The target answered that its window is gone.
    Gone,
}

/// An operation of this rank waiting for its reply.
#[derive(Debug)]
struct Pending {
    op: u64,
    target: Rank,
    /// Whether the caller takes the reply's data ([`Engine::rma_take`]).
    wants_data: bool,
}

/// One window's state at this rank.
#[derive(Debug)]
pub(crate) struct Window {
    memory: Box<dyn Memory>,
    next_op: u64,
    pending: Vec<Pending>,
    /// Per target: this rank's operations not yet answered.
    outstanding: Vec<u32>,
    /// Replies whose data the caller takes (or the error that ended the operation).
    results: Vec<(u64, Result<Payload>)>,
    /// Per target: the first error of an operation, not yet reported by a completing call.
    errors: Vec<Option<Error>>,
    /// Per target: this rank's lock there.
    held: Vec<Held>,
    /// Target side: the exclusive holder.
    exclusive: Option<Rank>,
    /// Target side: shared locks held, per origin.
    shared: Vec<u32>,
    /// Target side: lock requests not granted yet, in arrival order.
    queue: VecDeque<(Rank, bool)>,
    /// Posts received, per target, not yet taken by a start.
    posts: Vec<u32>,
    /// Completes received, per origin, not yet taken by a wait.
    completes: Vec<u32>,
    /// Whether a fence opened an epoch (from the first fence on, every target is open to
    /// operations between fences).
    fenced: bool,
    /// The targets of the access epoch `MPI_Win_start` opened, until `MPI_Win_complete`.
    access: Option<Vec<Rank>>,
    /// The origins of the exposure epoch `MPI_Win_post` opened, until `MPI_Win_wait`.
    exposure: Option<Vec<Rank>>,
}

impl Window {
    fn new(memory: Box<dyn Memory>, size: u32) -> Self {
        let n = size as usize;
        Window {
            memory,
            next_op: 0,
            pending: Vec::new(),
            outstanding: vec![0; n],
            results: Vec::new(),
            errors: vec![None; n],
            held: vec![Held::None; n],
            exclusive: None,
            shared: vec![0; n],
            queue: VecDeque::new(),
            posts: vec![0; n],
            completes: vec![0; n],
            fenced: false,
            access: None,
            exposure: None,
        }
    }

    /// Checks `blocks` against the memory and `data_len`: every block inside, and (for data
    /// that goes in) their lengths adding up to the data's.
    fn check_blocks(&self, blocks: &[Block], data_len: Option<usize>) -> Status {
        let len = self.memory.len() as u64;
        let mut total: u64 = 0;
        for block in blocks {
            match block.at.checked_add(block.len) {
                Some(end)
                    if end <= len
                        && (block.len == 0
                            || self.memory.covers(block.at as usize, block.len as usize)) =>
                {
                    total += block.len
                }
                _ => return Status::OutOfRange,
            }
        }
        match data_len {
            Some(n) if n as u64 != total => Status::OutOfRange,
            _ => Status::Done,
        }
    }

    /// Applies `access` with `data` from `origin` to this rank's memory: the reply's status
    /// and data.
    fn apply(&mut self, access: &Access, data: &[u8]) -> (Status, Payload) {
        match access {
            Access::Put { blocks } => {
                let status = self.check_blocks(blocks, Some(data.len()));
                if status == Status::Done {
                    let mut from = 0;
                    for block in blocks {
                        let n = block.len as usize;
                        self.memory.write(block.at as usize, &data[from..from + n]);
                        from += n;
                    }
                }
                (status, Vec::new())
            }
            Access::Get { blocks } => {
                let status = self.check_blocks(blocks, None);
                if status != Status::Done {
                    return (status, Vec::new());
                }
                let mut out = vec![0u8; blocks.iter().map(|b| b.len as usize).sum()];
                self.read_blocks(blocks, &mut out);
                (status, out)
            }
            Access::Accumulate {
                blocks,
                code,
                fetch,
            } => {
                let status = self.check_blocks(blocks, Some(data.len()));
                if status != Status::Done {
                    return (status, Vec::new());
                }
                if blocks.iter().any(|b| {
                    self.memory
                        .check_accumulate(b.at as usize, *code, b.len as usize)
                        .is_err()
                }) {
                    return (Status::Refused, Vec::new());
                }
                let mut old = Vec::new();
                if *fetch {
                    old = vec![0u8; data.len()];
                    self.read_blocks(blocks, &mut old);
                }
                let mut from = 0;
                for block in blocks {
                    let n = block.len as usize;
                    self.memory
                        .accumulate(block.at as usize, *code, &data[from..from + n]);
                    from += n;
                }
                (status, old)
            }
            Access::CompareAndSwap { at } => {
                let half = data.len() / 2;
                let block = Block {
                    at: *at,
                    len: half as u64,
                };
                if !data.len().is_multiple_of(2)
                    || self.check_blocks(&[block], None) != Status::Done
                {
                    return (Status::OutOfRange, Vec::new());
                }
                let mut old = vec![0u8; half];
                self.memory.read(*at as usize, &mut old);
                if old == data[..half] {
                    self.memory.write(*at as usize, &data[half..]);
                }
                (Status::Done, old)
            }
        }
    }

    fn read_blocks(&self, blocks: &[Block], out: &mut [u8]) {
        let mut from = 0;
        for block in blocks {
            let n = block.len as usize;
            self.memory
                .read(block.at as usize, &mut out[from..from + n]);
            from += n;
        }
    }

    /// The operation `op` ended with `outcome`.
    fn finish(&mut self, op: u64, outcome: Result<Payload>) {
        let Some(at) = self.pending.iter().position(|p| p.op == op) else {
            return;
        };
        let pending = self.pending.swap_remove(at);
        let target = pending.target as usize;
        self.outstanding[target] = self.outstanding[target].saturating_sub(1);
        if pending.wants_data {
            self.results.push((op, outcome));
        } else if let Err(error) = outcome {
            self.errors[target].get_or_insert(error);
        }
    }

    /// Every pending operation to `target` (every one, for `None`) ends with `error`.
    fn fail_pending(&mut self, target: Option<Rank>, error: &Error) {
        let ops: Vec<u64> = self
            .pending
            .iter()
            .filter(|p| target.is_none_or(|t| p.target == t))
            .map(|p| p.op)
            .collect();
        for op in ops {
            self.finish(op, Err(error.clone()));
        }
    }

    /// Target side: grants queued lock requests while the head is compatible with the holders.
    /// Returns the origins granted.
    fn grant(&mut self) -> Vec<Rank> {
        let mut granted = Vec::new();
        while let Some(&(origin, exclusive)) = self.queue.front() {
            let shared_held = self.shared.iter().any(|&n| n > 0);
            let free = self.exclusive.is_none() && (!exclusive || !shared_held);
            if !free {
                break;
            }
            self.queue.pop_front();
            if exclusive {
                self.exclusive = Some(origin);
            } else {
                self.shared[origin as usize] += 1;
            }
            granted.push(origin);
        }
        granted
    }

    /// Target side: `origin` releases its lock (exclusive if it holds that, else one shared).
    fn release(&mut self, origin: Rank) {
        if self.exclusive == Some(origin) {
            self.exclusive = None;
        } else if let Some(n) = self.shared.get_mut(origin as usize) {
            *n = n.saturating_sub(1);
        }
    }
}

impl CommState {
    /// The window on this communicator.
    fn window(&mut self) -> Result<&mut Window> {
        self.window.as_deref_mut().ok_or_else(|| Error::Argument {
            reason: "no window on this communicator".into(),
        })
    }

    /// Errors of a window call that communicates: `Revoked` on a revoked window.
    fn check_window_open(&self) -> Result<()> {
        self.check_not_revoked()?;
        if self.window.is_none() {
            return Err(Error::Argument {
                reason: "no window on this communicator".into(),
            });
        }
        Ok(())
    }

    /// Sends the lock grants `granted` (this rank's own are taken at once).
    fn send_grants(&mut self, context: ContextId, granted: Vec<Rank>, out: &mut Outgoing) {
        let me = self.rank;
        for origin in granted {
            if origin == me {
                if let Some(window) = self.window.as_deref_mut() {
                    window.held[me as usize] = Held::Granted;
                }
            } else if let Some(world) = self.members.try_world_of(origin) {
                out.push((world, rma_packet(context, me, Message::Granted, Vec::new())));
            }
        }
    }

    /// The failed rank `rank` of this communicator: its operations end, its locks go.
    pub(crate) fn window_peer_failed(
        &mut self,
        context: ContextId,
        rank: Rank,
        out: &mut Outgoing,
    ) {
        let Some(window) = self.window.as_deref_mut() else {
            return;
        };
        window.fail_pending(Some(rank), &Error::ProcFailed { rank });
        window.queue.retain(|&(origin, _)| origin != rank);
        if window.exclusive == Some(rank) {
            window.exclusive = None;
        }
        if let Some(n) = window.shared.get_mut(rank as usize) {
            *n = 0;
        }
        let granted = window.grant();
        self.send_grants(context, granted, out);
    }

    /// The communicator was revoked: every pending operation of its window ends.
    pub(crate) fn window_revoked(&mut self) {
        if let Some(window) = self.window.as_deref_mut() {
            window.fail_pending(None, &Error::Revoked);
        }
    }

    /// A one-sided message from comm rank `source`.
    pub(crate) fn handle_rma(
        &mut self,
        context: ContextId,
        source: Rank,
        message: Message,
        payload: Payload,
        out: &mut Outgoing,
    ) {
        let me = self.rank;
        let Some(from) = self.members.try_world_of(source) else {
            return;
        };
        if self.life.is_freed() || self.window.is_none() {
            // A window freed here: an operation is answered (its origin would wait for ever);
            // the rest is dropped.
            let reply = match message {
                Message::Request { op, .. } => Message::Reply {
                    op,
                    status: Status::Gone,
                },
                Message::Lock { .. } => Message::Gone,
                _ => return,
            };
            out.push((from, rma_packet(context, me, reply, Vec::new())));
            return;
        }
        if !self.life.is_open() {
            return; // a revoked window ignores its traffic
        }
        let Some(window) = self.window.as_deref_mut() else {
            return;
        };
        match message {
            Message::Request { op, access } => {
                let (status, data) = window.apply(&access, &payload);
                out.push((
                    from,
                    rma_packet(context, me, Message::Reply { op, status }, data),
                ));
            }
            Message::Reply { op, status } => {
                let outcome = match status {
                    Status::Done => Ok(payload),
                    Status::OutOfRange => Err(Error::RmaRange {
                        reason: format!("rank {source} refused an operation outside its window"),
                    }),
                    Status::Refused => Err(Error::RmaRange {
                        reason: format!(
                            "rank {source} cannot accumulate that operation on its window's type"
                        ),
                    }),
                    Status::Gone => Err(Error::RmaSync {
                        reason: format!("rank {source} freed its window"),
                    }),
                };
                window.finish(op, outcome);
            }
            Message::Lock { exclusive } => {
                window.queue.push_back((source, exclusive));
                let granted = window.grant();
                self.send_grants(context, granted, out);
            }
            Message::Granted | Message::Gone => {
                if window.held[source as usize] == Held::Requested {
                    window.held[source as usize] = if message == Message::Granted {
                        Held::Granted
                    } else {
                        Held::Gone
                    };
                }
            }
            Message::Unlock => {
                window.release(source);
                let granted = window.grant();
                self.send_grants(context, granted, out);
            }
            Message::Post => window.posts[source as usize] += 1,
            Message::Complete => window.completes[source as usize] += 1,
        }
    }
}

/// Takes one notice (post or complete) from each rank of `group` once all have come: `None`
/// while a live rank's is missing; once only failed ranks' are missing, an error naming the
/// first of them (the notices that did come are taken too, so that a later epoch does not
/// count them).
fn take_notices(
    counts: &mut [u32],
    group: &[Rank],
    known_failed: &crate::RankSet,
) -> Option<Result<()>> {
    let missing: Vec<Rank> = group
        .iter()
        .copied()
        .filter(|&r| counts[r as usize] == 0)
        .collect();
    if !missing.is_empty() {
        if missing.iter().any(|&r| !known_failed.contains(r)) {
            return None; // a live rank's notice may still come
        }
        let dead = missing.first()?;
        for &r in group {
            counts[r as usize] = counts[r as usize].saturating_sub(1);
        }
        return Some(Err(Error::ProcFailed { rank: *dead }));
    }
    for &r in group {
        counts[r as usize] -= 1;
    }
    Some(Ok(()))
}

/// The packet of a one-sided message.
fn rma_packet(context: ContextId, source: Rank, message: Message, payload: Payload) -> Packet {
    Packet::Rma {
        context,
        source,
        message,
        payload,
    }
}

/// An operation this rank starts ([`Engine::rma_start`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The target, in the window communicator's numbering.
    pub target: Rank,
    /// What it asks.
    pub access: Access,
    /// The data that goes with it (put, accumulate, compare-and-swap).
    pub data: Payload,
}

impl Engine {
    /// Makes `memory` this rank's part of a window on `context` (a communicator made for the
    /// window). Every member must do so before any member starts an operation on it.
    ///
    /// # Errors
    /// `Error::Comm` for a communicator this rank does not hold; `Error::Argument` if it has a
    /// window already.
    pub fn window_create(&mut self, context: ContextId, memory: Box<dyn Memory>) -> Result<()> {
        let comm = self.comm(context)?;
        if comm.window.is_some() {
            return Err(Error::Argument {
                reason: "the communicator has a window already".into(),
            });
        }
        comm.window = Some(Box::new(Window::new(memory, comm.members.size())));
        Ok(())
    }

    /// Removes the window on `context` and returns its memory (freeing the communicator is the
    /// caller's next step).
    ///
    /// # Errors
    /// `Error::Comm`, or `Error::Argument` without a window.
    pub fn window_free(&mut self, context: ContextId) -> Result<Box<dyn Memory>> {
        let comm = self.comm(context)?;
        let window = comm.window.take().ok_or_else(|| Error::Argument {
            reason: "no window on this communicator".into(),
        })?;
        Ok(window.memory)
    }

    /// Starts `operation` on the window of `context`: returns its number. An operation on
    /// this rank's own memory is applied at once; one to a target known failed ends at once
    /// with `ProcFailed` (reported where it completes).
    ///
    /// # Errors
    /// `Error::Revoked`, `Error::Comm`, `Error::Argument` (no window), `Error::Rank`.
    pub fn rma_start(
        &mut self,
        context: ContextId,
        operation: Operation,
        wants_data: bool,
        out: &mut Outgoing,
    ) -> Result<u64> {
        let comm = self.comm(context)?;
        comm.check_window_open()?;
        let size = comm.members.size();
        let target = operation.target;
        if target >= size {
            return Err(Error::Rank {
                rank: i64::from(target),
                size,
            });
        }
        let me = comm.rank;
        let failed = comm.known_failed.contains(target);
        let world = comm.members.world_of(target);
        let window = comm.window()?;
        let open = window.fenced
            || window.held[target as usize] == Held::Granted
            || window.access.as_ref().is_some_and(|g| g.contains(&target));
        if !open {
            return Err(Error::RmaSync {
                reason: format!(
                    "an operation on rank {target} outside an access epoch (a fence, a lock of \
                     it, or a start naming it opens one)"
                ),
            });
        }
        let op = window.next_op;
        window.next_op += 1;
        window.pending.push(Pending {
            op,
            target,
            wants_data,
        });
        window.outstanding[target as usize] += 1;
        if failed {
            window.finish(op, Err(Error::ProcFailed { rank: target }));
        } else if target == me {
            let (status, data) = window.apply(&operation.access, &operation.data);
            let outcome = match status {
                Status::Done => Ok(data),
                _ => Err(Error::RmaRange {
                    reason: "an operation outside this rank's own window".into(),
                }),
            };
            window.finish(op, outcome);
        } else {
            out.push((
                world,
                rma_packet(
                    context,
                    me,
                    Message::Request {
                        op,
                        access: operation.access,
                    },
                    operation.data,
                ),
            ));
        }
        Ok(op)
    }

    /// The outcome of operation `op` started with `wants_data`: `None` while its reply has not
    /// come; then what it read (empty for a put or an accumulate), once.
    pub fn rma_take(&mut self, context: ContextId, op: u64) -> Option<Result<Payload>> {
        let window = self.comm(context).ok()?.window.as_deref_mut()?;
        let at = window.results.iter().position(|(o, _)| *o == op)?;
        Some(window.results.swap_remove(at).1)
    }

    /// Whether every operation of this rank to `target` (to every target, for `None`) has
    /// been answered: `None` while some are pending; then `Ok`, or the first error one of
    /// them ended with since the last such report (taken: reported once).
    pub fn rma_flushed(&mut self, context: ContextId, target: Option<Rank>) -> Option<Result<()>> {
        let comm = match self.comm(context) {
            Ok(comm) => comm,
            Err(e) => return Some(Err(e)),
        };
        let Some(window) = comm.window.as_deref_mut() else {
            return Some(Err(Error::Argument {
                reason: "no window on this communicator".into(),
            }));
        };
        let range = match target {
            Some(t) if (t as usize) < window.outstanding.len() => t as usize..t as usize + 1,
            Some(t) => {
                return Some(Err(Error::Rank {
                    rank: i64::from(t),
                    size: window.outstanding.len() as u32,
                }))
            }
            None => 0..window.outstanding.len(),
        };
        if window.outstanding[range.clone()].iter().any(|&n| n > 0) {
            return None;
        }
        let mut first = None;
        for t in range {
            if let Some(error) = window.errors[t].take() {
                first.get_or_insert(error);
            }
        }
        Some(first.map_or(Ok(()), Err))
    }

    /// Asks `target` for its lock (exclusive or shared) on the window of `context`.
    ///
    /// # Errors
    /// `Error::RmaSync` if this rank holds or asked for a lock there already; `Error::Revoked`,
    /// `Error::Rank`, `Error::Comm`, `Error::Argument` (no window).
    pub fn rma_lock(
        &mut self,
        context: ContextId,
        target: Rank,
        exclusive: bool,
        out: &mut Outgoing,
    ) -> Result<()> {
        let comm = self.comm(context)?;
        comm.check_window_open()?;
        let size = comm.members.size();
        if target >= size {
            return Err(Error::Rank {
                rank: i64::from(target),
                size,
            });
        }
        let me = comm.rank;
        let world = comm.members.world_of(target);
        let window = comm.window()?;
        if window.held[target as usize] != Held::None {
            return Err(Error::RmaSync {
                reason: format!("this rank holds a lock on rank {target}'s window already"),
            });
        }
        window.held[target as usize] = Held::Requested;
        if target == me {
            window.queue.push_back((me, exclusive));
            let granted = window.grant();
            comm.send_grants(context, granted, out);
        } else {
            out.push((
                world,
                rma_packet(context, me, Message::Lock { exclusive }, Vec::new()),
            ));
        }
        Ok(())
    }

    /// Whether the lock this rank asked `target` for is granted: `None` while not; `Ok` once
    /// it is; `ProcFailed` if the target failed first, `Revoked` on a revoked window.
    pub fn rma_locked(&mut self, context: ContextId, target: Rank) -> Option<Result<()>> {
        let comm = match self.comm(context) {
            Ok(comm) => comm,
            Err(e) => return Some(Err(e)),
        };
        if let Err(e) = comm.check_window_open() {
            return Some(Err(e));
        }
        let failed = comm.known_failed.contains(target);
        let window = comm.window.as_deref_mut()?;
        match window.held.get(target as usize) {
            Some(Held::Granted) => Some(Ok(())),
            Some(Held::Requested) if failed => {
                window.held[target as usize] = Held::None;
                Some(Err(Error::ProcFailed { rank: target }))
            }
            Some(Held::Requested) => None,
            Some(Held::Gone) => {
                window.held[target as usize] = Held::None;
                Some(Err(Error::RmaSync {
                    reason: format!("rank {target} freed its window"),
                }))
            }
            _ => Some(Err(Error::RmaSync {
                reason: format!("no lock asked of rank {target}"),
            })),
        }
    }

    /// Releases this rank's lock at `target` (the caller waited for [`Engine::rma_flushed`]
    /// first: the lock covers its operations).
    ///
    /// # Errors
    /// `Error::RmaSync` without a granted lock there.
    pub fn rma_unlock(
        &mut self,
        context: ContextId,
        target: Rank,
        out: &mut Outgoing,
    ) -> Result<()> {
        let comm = self.comm(context)?;
        let me = comm.rank;
        let size = comm.members.size();
        if target >= size {
            return Err(Error::Rank {
                rank: i64::from(target),
                size,
            });
        }
        let failed = comm.known_failed.contains(target);
        let revoked = !comm.life.is_open();
        let world = comm.members.world_of(target);
        let window = comm.window()?;
        if window.held[target as usize] != Held::Granted {
            return Err(Error::RmaSync {
                reason: format!("this rank holds no lock on rank {target}'s window"),
            });
        }
        window.held[target as usize] = Held::None;
        if target == me {
            window.release(me);
            let granted = window.grant();
            comm.send_grants(context, granted, out);
        } else if !failed && !revoked {
            out.push((world, rma_packet(context, me, Message::Unlock, Vec::new())));
        }
        Ok(())
    }

    /// Sends `message` (a post or a complete) to each rank of `group` not known failed.
    fn rma_notify(
        comm: &mut CommState,
        context: ContextId,
        group: &[Rank],
        message: &Message,
        out: &mut Outgoing,
    ) {
        let me = comm.rank;
        for &rank in group {
            if rank == me {
                if let Some(window) = comm.window.as_deref_mut() {
                    match message {
                        Message::Post => window.posts[me as usize] += 1,
                        _ => window.completes[me as usize] += 1,
                    }
                }
            } else if !comm.known_failed.contains(rank) {
                let world = comm.members.world_of(rank);
                out.push((world, rma_packet(context, me, message.clone(), Vec::new())));
            }
        }
    }

    /// Checks a group of ranks: in range, no rank twice.
    fn check_group(size: u32, group: &[Rank]) -> Result<()> {
        if let Some(&rank) = group.iter().find(|&&r| r >= size) {
            return Err(Error::Rank {
                rank: i64::from(rank),
                size,
            });
        }
        let mut sorted = group.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::Argument {
                reason: "a rank named twice in a window group".into(),
            });
        }
        Ok(())
    }

    /// Opens an exposure epoch for the ranks of `group` (`MPI_Win_post`): each is told it may
    /// start.
    ///
    /// # Errors
    /// `Error::RmaSync` if an exposure epoch is open; `Error::Rank` / `Error::Argument` for a
    /// bad group; `Error::Revoked`, `Error::Comm`, `Error::Argument` (no window).
    pub fn rma_post(
        &mut self,
        context: ContextId,
        group: &[Rank],
        out: &mut Outgoing,
    ) -> Result<()> {
        let comm = self.comm(context)?;
        comm.check_window_open()?;
        Engine::check_group(comm.members.size(), group)?;
        let window = comm.window()?;
        if window.exposure.is_some() {
            return Err(Error::RmaSync {
                reason: "an exposure epoch (post) is open already".into(),
            });
        }
        window.exposure = Some(group.to_vec());
        Engine::rma_notify(comm, context, group, &Message::Post, out);
        Ok(())
    }

    /// Opens an access epoch to the ranks of `group` once each has posted (`MPI_Win_start`):
    /// `None` while some post is missing; `ProcFailed` for a missing one that failed (no
    /// epoch opened); `RmaSync` if an access epoch is open.
    pub fn rma_start_epoch(&mut self, context: ContextId, group: &[Rank]) -> Option<Result<()>> {
        let comm = match self.comm(context) {
            Ok(comm) => comm,
            Err(e) => return Some(Err(e)),
        };
        if let Err(e) = comm
            .check_window_open()
            .and_then(|()| Engine::check_group(comm.members.size(), group))
        {
            return Some(Err(e));
        }
        let known_failed = comm.known_failed.clone();
        let window = comm.window.as_deref_mut()?;
        if window.access.is_some() {
            return Some(Err(Error::RmaSync {
                reason: "an access epoch (start) is open already".into(),
            }));
        }
        let outcome = take_notices(&mut window.posts, group, &known_failed)?;
        if outcome.is_ok() {
            window.access = Some(group.to_vec());
        }
        Some(outcome)
    }

    /// Ends the access epoch `MPI_Win_start` opened (`MPI_Win_complete`; the caller waited for
    /// [`Engine::rma_flushed`] first): each target is told.
    ///
    /// # Errors
    /// `Error::RmaSync` without an access epoch.
    pub fn rma_complete(&mut self, context: ContextId, out: &mut Outgoing) -> Result<()> {
        let comm = self.comm(context)?;
        let window = comm.window()?;
        let group = window.access.take().ok_or_else(|| Error::RmaSync {
            reason: "complete without a start".into(),
        })?;
        if comm.life.is_open() {
            Engine::rma_notify(comm, context, &group, &Message::Complete, out);
        }
        Ok(())
    }

    /// Ends the exposure epoch `MPI_Win_post` opened once every origin of it completed
    /// (`MPI_Win_wait`, `MPI_Win_test`): `None` while some complete is missing; `ProcFailed`
    /// for a missing one that failed (the epoch ends); `RmaSync` without an exposure epoch.
    pub fn rma_wait_epoch(&mut self, context: ContextId) -> Option<Result<()>> {
        let comm = match self.comm(context) {
            Ok(comm) => comm,
            Err(e) => return Some(Err(e)),
        };
        if let Err(e) = comm.check_window_open() {
            return Some(Err(e));
        }
        let known_failed = comm.known_failed.clone();
        let window = comm.window.as_deref_mut()?;
        let Some(group) = window.exposure.clone() else {
            return Some(Err(Error::RmaSync {
                reason: "wait without a post".into(),
            }));
        };
        let outcome = take_notices(&mut window.completes, &group, &known_failed)?;
        window.exposure = None;
        Some(outcome)
    }

    /// A fence ended at this rank: every target is open to operations until the window is
    /// freed (the runtime waited for its operations and the barrier first).
    ///
    /// # Errors
    /// `Error::RmaSync` inside a start or post epoch; `Error::Comm`, `Error::Argument`.
    pub fn rma_fenced(&mut self, context: ContextId) -> Result<()> {
        let window = self.comm(context)?.window()?;
        if window.access.is_some() || window.exposure.is_some() {
            return Err(Error::RmaSync {
                reason: "a fence inside a start or post epoch".into(),
            });
        }
        window.fenced = true;
        Ok(())
    }

    /// Whether this rank holds or asked for a lock anywhere on the window of `context`, or has
    /// a start or post epoch open (what `MPI_Win_free` must not find).
    pub fn rma_busy(&mut self, context: ContextId) -> bool {
        let Ok(comm) = self.comm(context) else {
            return false;
        };
        comm.window.as_deref().is_some_and(|w| {
            w.access.is_some() || w.exposure.is_some() || w.held.iter().any(|&h| h != Held::None)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_encode_and_decode_back() {
        let blocks = vec![Block { at: 3, len: 9 }, Block { at: 100, len: 1 }];
        let messages = [
            Message::Request {
                op: 7,
                access: Access::Put {
                    blocks: blocks.clone(),
                },
            },
            Message::Request {
                op: 8,
                access: Access::Get {
                    blocks: blocks.clone(),
                },
            },
            Message::Request {
                op: 9,
                access: Access::Accumulate {
                    blocks: blocks.clone(),
                    code: 0xabcd,
                    fetch: true,
                },
            },
            Message::Request {
                op: 10,
                access: Access::Accumulate {
                    blocks,
                    code: 1,
                    fetch: false,
                },
            },
            Message::Request {
                op: 11,
                access: Access::CompareAndSwap { at: 40 },
            },
            Message::Reply {
                op: 12,
                status: Status::Refused,
            },
            Message::Lock { exclusive: true },
            Message::Lock { exclusive: false },
            Message::Granted,
            Message::Gone,
            Message::Unlock,
            Message::Post,
            Message::Complete,
        ];
        for message in messages {
            let mut bytes = Vec::new();
            message.encode(&mut bytes);
            bytes.extend_from_slice(b"data");
            let (back, rest) = Message::decode(&bytes).unwrap();
            assert_eq!(back, message);
            assert_eq!(rest, b"data");
            // Every strict prefix is refused, never a panic.
            for cut in 0..bytes.len() - 4 {
                assert!(
                    Message::decode(&bytes[..cut]).is_err(),
                    "{message:?} cut at {cut}"
                );
            }
        }
        assert!(Message::decode(&[99]).is_err());
    }
}

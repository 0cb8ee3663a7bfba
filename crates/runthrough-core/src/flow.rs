// SPDX-License-Identifier: MIT OR Apache-2.0
//! Flow control of eager messages: a rank that floods another is slowed down; the receiver
//! never buffers its unexpected messages without limit (semantics §6 "Memory").
//!
//! # The scheme: a credit window per (sender, receiver) pair and lane
//! Every rank has a cap `C` on the bytes it holds for messages that arrived before a receive
//! wanted them (default [`DEFAULT_UNEXPECTED_CAP`]; `runthrough::LocalUniverse::unexpected_cap`
//! in-process, the environment variable [`ENV_UNEXPECTED_CAP`] for multi-process jobs). The cap
//! is shared out equally among the `n` ranks of the job, this one included: each sender has a
//! *window* of `W = C / n` bytes at each receiver. Messages travel in two *lanes*, each with its
//! own windows, point-to-point ([`Packet::Data`]) and collective ([`Packet::Collective`]), so
//! that a flood of one never holds up the other.
//!
//! - Every message is *charged* its payload length plus [`MESSAGE_CHARGE`] bytes (so that a
//!   flood of empty messages is bounded too).
//! - The sender counts, per receiver and lane, the bytes it charged and that were not given
//!   back. A message is transmitted at once when nothing is queued before it and its charge
//!   fits in the window, or when nothing at all is charged (a message larger than the window
//!   travels alone). Otherwise it joins the sender's queue for that receiver and lane: a
//!   blocking send waits until its message has left the queue; a non-blocking send's request
//!   stays pending.
//! - The receiver gives the charge back with a [`Packet::Credit`] once the message has left its
//!   buffers: matched by a receive (at arrival or later), or dropped (revoked or freed
//!   communicator, a collective of a past epoch). Credits are batched (one packet per `W / 4`
//!   bytes), so traffic that fits costs no extra packet. A sender whose queue head does not fit
//!   asks with a [`Packet::CreditWanted`]: the receiver answers with what it has released, or,
//!   if nothing, with the next release as soon as it happens; a sender that still waits after
//!   a credit asks again. So a waiting sender never waits for credit that the receiver holds
//!   back, only for its earlier messages to be received.
//!
//! # Who waits
//! Only the sender's application threads. A receiver accepts everything that arrives (the
//! window guarantees it fits), so the paths that deliver traffic (another rank's thread
//! in-process, a connection's reader thread between processes, which also carries heartbeats,
//! agreements and failure notices) never wait on flow control, and agreements, revocations,
//! heartbeats and failure notices are never flow controlled (an agreement's messages are
//! bounded by its protocol, and no rank runs ahead of the others' agreements). Between
//! processes (TCP or Unix sockets), data is written by application threads only; reader
//! threads write small control frames (credits among them), so a connection's backlog never
//! holds more data than one window, and two ranks flooding each other cannot deadlock their
//! writers: each side's reader keeps reading.
//!
//! Queued messages are transmitted by the sender's own application threads, whenever one of
//! them is inside a call that can wait (a blocking send or receive, `wait`, `test`, `wait_any`,
//! a collective, an agreement): MPI's weak progress. Dropping a pending send request waits, like
//! a blocking send, until its message is transmitted or its send failed, so that no message is
//! lost silently.
//!
//! # Guarantees
//! - *Memory*: a receiver holds at most `max(W, c)` charged bytes per sender and lane, where `c`
//!   is the largest charge of a message of that sender, outside loans (below); so at most `C` of point-to-point data
//!   when every message is at most `W - MESSAGE_CHARGE` bytes. What a sender queues (copies of
//!   the messages of its blocked sends and pending requests) is its own memory, bounded by the
//!   requests it posted.
//! - *Order*: one queue per (receiver, lane), first in first out; a message skips the queue
//!   only when the queue is empty and no thread is transmitting from it. So MPI's
//!   non-overtaking rule holds for delayed messages too, `Source::Any` receives included.
//! - *No deadlock for safe programs*: a send waits only until enough of its own earlier
//!   messages on the same lane to the same receiver have been received (never for its own
//!   message to be received). A program that completes when every send is synchronous
//!   (`MPI_Ssend`, no buffering at all), MPI's definition of a safe program, so completes here,
//!   given that its ranks' waiting threads make progress. Non-blocking sends never block the
//!   caller, so "every rank isends, then receives, then waits" completes too, whatever order
//!   each receiver takes one sender's messages in: when the message a receive waits for is
//!   queued at its sender behind messages that fill the window here, a *loan* (below) lets the
//!   queue move on. (The engine simulator's `--any-order` programs found that deadlock before
//!   loans existed.)
//! - *Loans*: a rank lends a sender credit when both wait: the sender asked for credit
//!   ([`Packet::CreditWanted`]) and this rank has nothing to give back, while one of this
//!   rank's posted point-to-point receives could take a message of that sender (names it or
//!   any source) and nothing buffered matches it. The loan, checked when the request arrives,
//!   whenever a receive is posted and whenever a probe or a matched probe finds nothing (a
//!   probe wants a message as a receive does), is a [`Packet::Loan`] of the charges of that sender's
//!   messages held here (less what is lent already): the sender counts them as given back,
//!   so up to one more window of its queue comes; this rank repays the loan out of the credit
//!   the held messages' releases would give (a *debt*, never more than what it holds from the
//!   sender). If the sender still waits it asks again and gets another loan while the receive
//!   still waits. So a receiver may hold more than `W` from one sender, by its debt, only
//!   after one of its receives waited for a message of that sender, and the counts of both
//!   sides stay exact: once the held messages are received the window is `W` again. One
//!   sender's debt never exceeds the cap `C` (a receive that waits for a tag the sender never
//!   sends must not let it stream without bound): a rank holds at most `W + C` from one sender,
//!   and a program that needs more than that of one sender's messages buffered to receive them
//!   out of order waits as before loans existed (the limit a rendezvous protocol would lift).
//! - *Failures* (semantics §1, §3.1): a queued send to a rank that this rank's detector learns
//!   failed completes with `Error::ProcFailed` (or as `MPI_PROC_NULL` if the rank is already
//!   recognized in G); a revocation completes the queued sends on that communicator with
//!   `Error::Revoked`; a collective send waiting for credit returns `ProcFailed` on any
//!   unrecognized failure among the participants, as the collective's receives do. Messages
//!   buffered from a rank that died stay receivable (and counted) until received; no credit is
//!   sent to a dead rank and none is expected from one.
//!
//! # Collective traffic
//! One collective call sends a bounded number of messages to each peer, but a call need not
//! wait for its peers: the root of a broadcast or scatter and the leaves of a reduce or gather
//! return as soon as they have sent. A rank can so run many calls ahead of a slow peer, and
//! collective messages are flow controlled too, on their own lane: a point-to-point flood (say
//! isends followed by a barrier, a correct MPI program) must not hold up collective traffic,
//! and the other way round. Collectives may synchronize in MPI, so a root that waits for credit
//! until its slow peer enters the next call is within the rules.
//!
//! Non-blocking collectives (several calls outstanding at once) add a wait that blocking calls
//! cannot have: a sender's messages for a later call (or a later step of a call) may hold its
//! window at a receiver whose current step waits for that sender's message of an earlier
//! call, queued behind them at the sender; and the receiver may take those later messages only
//! after the earlier call ends. So loans exist on the collective lane too: a receiver whose
//! non-blocking collective's current step waits for a message of a sender that asked for
//! credit lends it the charges of that sender's messages held here, with the same debt
//! accounting and cap as point-to-point loans.
//!
//! # Costs
//! Failure-free, a message costs the sender one comparison against its window and the receiver
//! one addition to the sender's released count (state per peer in a vector indexed by world
//! rank, about 150 bytes for every rank up to the highest one this rank exchanged traffic
//! with), plus one credit packet per `W / 4` bytes received.
//!
//! # Limits
//! - The shares are static: the share of a rank that sends nothing is not lent to one that
//!   floods.
//! - A message larger than its window is buffered whole at the receiver (no rendezvous
//!   protocol): it waits until nothing else of its lane is charged at that receiver.
//! - Sends to oneself are flow controlled too: a rank with one thread that sends itself more
//!   than its window before receiving waits forever (MPI calls such a program unsafe).
//! - Weak progress: a pending non-blocking send moves only while one of its rank's threads is
//!   inside a call.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::{Rank, Result, WorldRank};
use slab::Slab;

use crate::packet::{ContextId, Lane, Outgoing, Packet};

/// The default cap on the unexpected bytes a rank holds (all senders together): 64 MiB.
pub const DEFAULT_UNEXPECTED_CAP: usize = 64 << 20;

/// The environment variable that sets the cap of a multi-process job's ranks, in bytes, with an
/// optional binary suffix `K`, `M` or `G` (`RT_UNEXPECTED_CAP=256M`).
pub const ENV_UNEXPECTED_CAP: &str = "RT_UNEXPECTED_CAP";

/// What every message is charged on top of its payload: roughly what the receiver spends on
/// holding it (envelope, queue entry, allocation).
pub const MESSAGE_CHARGE: u64 = 64;

/// The charge of a message with `payload` bytes.
#[inline]
pub fn charge(payload: usize) -> u64 {
    payload as u64 + MESSAGE_CHARGE
}

/// What flow control has seen at one rank (for tests and diagnostics; not a stable API).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowStats {
    /// The cap on unexpected bytes at this rank.
    pub cap: u64,
    /// Each sender's window at this rank (and this rank's window at each receiver).
    pub window: u64,
    /// What a message is charged on top of its payload.
    pub message_charge: u64,
    /// Charged bytes of point-to-point messages held here now, not yet received.
    pub unexpected_bytes: u64,
    /// The most `unexpected_bytes` has ever been.
    pub peak_unexpected_bytes: u64,
    /// Charged bytes of collective messages held here now.
    pub collective_bytes: u64,
    /// The most `collective_bytes` has ever been.
    pub peak_collective_bytes: u64,
    /// Requests for point-to-point credit this rank received (a sender of it was waiting).
    pub credit_requests: u64,
    /// Requests for collective credit this rank received.
    pub collective_credit_requests: u64,
    /// Messages this rank sent that had to wait for credit.
    pub delayed_sends: u64,
    /// Messages of this rank waiting for credit now.
    pub queued_sends: u64,
    /// Loans this rank made: a sender waited for credit while a receive here waited for one of
    /// its messages (see "Loans" in the module's docs).
    pub loans: u64,
}

/// Where [`Flow`] raises the flag that says a queued message may be sendable now, so that a
/// waiting thread calls [`Flow::poll_transmit`]. A driver whose waiters look at the flag without
/// holding the flow state's lock implements it with an atomic; [`Cell<bool>`] serves a driver
/// that runs on one thread.
pub trait Ready {
    /// A queued message may be sendable now.
    fn set(&self);
    /// The queues are being looked at (start of [`Flow::poll_transmit`]).
    fn clear(&self);
}

impl Ready for Cell<bool> {
    fn set(&self) {
        Cell::set(self, true);
    }
    fn clear(&self) {
        Cell::set(self, false);
    }
}

/// The flag as an atomic shared between the flow state (behind its rank's lock) and the rank's
/// waiting threads, which look at it without that lock ([`SharedReady::shared`]).
#[derive(Debug, Default)]
pub struct SharedReady(Arc<AtomicBool>);

impl SharedReady {
    /// Another handle on the flag, for waiters that look without the engine's lock.
    pub fn shared(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

impl Ready for SharedReady {
    #[inline]
    fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    #[inline]
    fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// This rank as a sender to one peer, on one lane.
#[derive(Debug, Default)]
struct Outbound {
    /// Bytes charged and not given back.
    charged: u64,
    /// Send slots waiting for credit, in order.
    queue: VecDeque<usize>,
    /// A thread is transmitting messages taken from `queue`: nothing may skip ahead of them.
    transmitting: bool,
    /// A `CreditWanted` went out and no credit came back since.
    asked: bool,
}

/// This rank as a receiver from one peer, on one lane.
#[derive(Debug, Default)]
struct Inbound {
    /// Charges of the peer's messages held here now.
    held: u64,
    /// Charges lent to the peer and not yet repaid: releases repay them first, without a
    /// credit (never more than `held`).
    debt: u64,
    /// Charges released and not yet given back.
    released: u64,
    /// The peer asked for credit and nothing was released: give back the next release at once.
    eager: bool,
}

#[derive(Debug, Default)]
struct PeerFlow {
    out: [Outbound; 2],
    inbound: [Inbound; 2],
    /// The peer failed: nothing more is sent to it or expected from it.
    failed: bool,
}

/// The peers' flow state, indexed by world rank: one indexing on the fast path, no hashing.
/// It grows to the highest rank this rank has exchanged traffic with (about 150 bytes a rank).
#[derive(Debug, Default)]
struct Peers(Vec<PeerFlow>);

impl Peers {
    #[inline(always)]
    fn entry(&mut self, rank: WorldRank) -> &mut PeerFlow {
        let at = rank.index();
        if at >= self.0.len() {
            self.grow(at);
        }
        &mut self.0[at]
    }

    #[cold]
    fn grow(&mut self, at: usize) {
        self.0.resize_with(at + 1, PeerFlow::default);
    }

    fn get_mut(&mut self, rank: &WorldRank) -> Option<&mut PeerFlow> {
        self.0.get_mut(rank.index())
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = (WorldRank, &mut PeerFlow)> {
        self.0
            .iter_mut()
            .enumerate()
            .map(|(r, p)| (WorldRank(r as u32), p))
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut PeerFlow> {
        self.0.iter_mut()
    }
}

/// A send that waits for credit, or its outcome.
#[derive(Debug)]
enum SendSlot {
    Queued {
        to: WorldRank,
        lane: Lane,
        context: ContextId,
        /// The destination in the communicator's numbering.
        dest: Rank,
        charge: u64,
        packet: Packet,
    },
    /// Transmitted (`Ok`), or failed.
    Done(Result<()>),
}

/// Messages taken from the queues, to transmit in order without the engine's lock; then
/// [`Flow::end_transmit`].
#[derive(Debug, Default)]
pub struct Transmit {
    /// The packets, in the order to hand them to the transport.
    pub packets: Outgoing,
    drained: Vec<(WorldRank, Lane)>,
}

impl Transmit {
    /// Whether there is nothing to transmit and no queue to reopen.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty() && self.drained.is_empty()
    }
}

/// The flow-control state of one rank (part of its engine), which raises its [`Ready`] flag `R`
/// when a queued message may have become sendable.
#[derive(Debug)]
pub struct Flow<R: Ready> {
    cap: u64,
    window: u64,
    /// Released bytes are given back once this many have accumulated.
    report_at: u64,
    peers: Peers,
    sends: Slab<SendSlot>,
    held: [u64; 2],
    peak: [u64; 2],
    requests: [u64; 2],
    delayed: u64,
    loans: u64,
    /// Senders whose request for point-to-point credit is not answered yet (`Inbound::eager`
    /// on the point-to-point lane), so that posting a receive looks for one in one comparison.
    waiting_senders: u32,
    /// A queue head may have become sendable: a waiting thread should call
    /// [`Flow::poll_transmit`]. Shared with the endpoint, so that waiters look without the lock.
    ready: R,
    /// Flow-control packets to send (credits, requests for credit).
    due: Outgoing,
}

impl<R: Ready + Default> Flow<R> {
    /// The flow state of a rank of a job of `world_size` ranks, with the default cap.
    pub fn new(world_size: u32) -> Self {
        let mut flow = Flow {
            cap: 0,
            window: 0,
            report_at: 0,
            peers: Peers::default(),
            sends: Slab::new(),
            held: [0; 2],
            peak: [0; 2],
            requests: [0; 2],
            delayed: 0,
            loans: 0,
            waiting_senders: 0,
            ready: R::default(),
            due: Outgoing::new(),
        };
        flow.set_cap(DEFAULT_UNEXPECTED_CAP, world_size);
        flow
    }
}

impl<R: Ready> Flow<R> {
    /// Sets the cap (before any traffic: every rank of a job must use the same).
    pub fn set_cap(&mut self, cap: usize, world_size: u32) {
        self.cap = cap.max(1) as u64;
        self.window = (self.cap / u64::from(world_size.max(1))).max(1);
        self.report_at = (self.window / 4).max(1);
    }

    /// What flow control has seen at this rank.
    pub fn stats(&self) -> FlowStats {
        FlowStats {
            cap: self.cap,
            window: self.window,
            message_charge: MESSAGE_CHARGE,
            unexpected_bytes: self.held[Lane::Point.index()],
            peak_unexpected_bytes: self.peak[Lane::Point.index()],
            collective_bytes: self.held[Lane::Collective.index()],
            peak_collective_bytes: self.peak[Lane::Collective.index()],
            credit_requests: self.requests[Lane::Point.index()],
            collective_credit_requests: self.requests[Lane::Collective.index()],
            delayed_sends: self.delayed,
            queued_sends: self
                .sends
                .iter()
                .filter(|(_, s)| matches!(s, SendSlot::Queued { .. }))
                .count() as u64,
            loans: self.loans,
        }
    }

    fn fits(window: u64, out: &Outbound, charge: u64) -> bool {
        out.charged == 0 || out.charged + charge <= window
    }

    // ---- Sender side ----

    /// Whether a message of `charge` to `to` may be transmitted now; if so it is charged.
    #[inline(always)]
    pub fn try_admit(&mut self, to: WorldRank, lane: Lane, charge: u64) -> bool {
        let out = &mut self.peers.entry(to).out[lane.index()];
        if out.queue.is_empty() && !out.transmitting && Self::fits(self.window, out, charge) {
            out.charged += charge;
            true
        } else {
            false
        }
    }

    /// Queues a message that [`Flow::try_admit`] refused; returns its send slot. Asks `to` for
    /// credit if it must (the request is in [`Flow::take_due`]).
    pub fn enqueue(
        &mut self,
        to: WorldRank,
        lane: Lane,
        context: ContextId,
        dest: Rank,
        packet: Packet,
        charge: u64,
    ) -> usize {
        let key = self.sends.insert(SendSlot::Queued {
            to,
            lane,
            context,
            dest,
            charge,
            packet,
        });
        self.delayed += 1;
        let out = &mut self.peers.entry(to).out[lane.index()];
        out.queue.push_back(key);
        if out.transmitting {
            return key; // the transmitting thread looks at the queue again when it is done
        }
        let head = match &self.sends[out.queue[0]] {
            SendSlot::Queued { charge, .. } => *charge,
            SendSlot::Done(_) => 0,
        };
        if Self::fits(self.window, out, head) {
            self.set_ready(); // a credit came in meanwhile: a waiting thread will send it
        } else if !out.asked {
            out.asked = true;
            self.due.push((to, Packet::CreditWanted { lane }));
            self.set_ready();
        }
        key
    }

    fn set_ready(&self) {
        self.ready.set();
    }

    /// The flag that says a queued message may be sendable now (see [`Flow::poll_transmit`]).
    pub fn ready_flag(&self) -> &R {
        &self.ready
    }

    /// The outcome of send slot `key` once it is known (the slot is freed then).
    pub fn outcome(&mut self, key: usize) -> Option<Result<()>> {
        match self.sends.get(key)? {
            SendSlot::Queued { .. } => None,
            SendSlot::Done(_) => match self.sends.remove(key) {
                SendSlot::Done(outcome) => Some(outcome),
                SendSlot::Queued { .. } => unreachable!("checked above"),
            },
        }
    }

    /// Withdraws send slot `key`: a queued message is dropped (`None`), a finished one gives its
    /// outcome. The slot is freed either way.
    pub fn cancel(&mut self, key: usize) -> Option<Result<()>> {
        match self.sends.get(key)? {
            SendSlot::Done(_) => self.outcome(key),
            SendSlot::Queued { to, lane, .. } => {
                let (to, lane) = (*to, *lane);
                self.sends.remove(key);
                if let Some(peer) = self.peers.get_mut(&to) {
                    let out = &mut peer.out[lane.index()];
                    out.queue.retain(|&k| k != key);
                    if !out.queue.is_empty() && !out.transmitting {
                        self.set_ready();
                    }
                }
                None
            }
        }
    }

    /// Takes every queued message that fits now (with requests for credit where the head does
    /// not), marking their queues as being transmitted and their sends as done.
    pub fn poll_transmit(&mut self) -> Transmit {
        self.ready.clear();
        let mut transmit = Transmit {
            packets: self.take_due(),
            drained: Vec::new(),
        };
        let window = self.window;
        for (to, peer) in self.peers.iter_mut() {
            for lane in Lane::ALL {
                let out = &mut peer.out[lane.index()];
                if out.transmitting || out.queue.is_empty() {
                    continue;
                }
                let mut taken = false;
                while let Some(&key) = out.queue.front() {
                    let SendSlot::Queued { charge, .. } = &self.sends[key] else {
                        unreachable!("a queue holds queued sends only");
                    };
                    if !Self::fits(window, out, *charge) {
                        break;
                    }
                    out.queue.pop_front();
                    let slot = std::mem::replace(&mut self.sends[key], SendSlot::Done(Ok(())));
                    let SendSlot::Queued { charge, packet, .. } = slot else {
                        unreachable!("matched above");
                    };
                    out.charged += charge;
                    transmit.packets.push((to, packet));
                    taken = true;
                }
                if taken {
                    out.transmitting = true;
                    transmit.drained.push((to, lane));
                }
                if !out.queue.is_empty() && !out.asked {
                    out.asked = true;
                    transmit.packets.push((to, Packet::CreditWanted { lane }));
                }
            }
        }
        transmit
    }

    /// The messages of `transmit` have been handed to the transport: their queues are open again.
    pub fn end_transmit(&mut self, transmit: &Transmit) {
        for &(to, lane) in &transmit.drained {
            if let Some(peer) = self.peers.get_mut(&to) {
                let out = &mut peer.out[lane.index()];
                out.transmitting = false;
                if !out.queue.is_empty() {
                    self.ready.set();
                }
            }
        }
    }

    /// `from` gave back `bytes` of this rank's charges on `lane`.
    pub fn credit(&mut self, from: WorldRank, lane: Lane, bytes: u64) {
        let Some(peer) = self.peers.get_mut(&from) else {
            return;
        };
        let out = &mut peer.out[lane.index()];
        out.charged = out.charged.saturating_sub(bytes);
        out.asked = false;
        if out.transmitting || out.queue.is_empty() {
            return;
        }
        let head = match &self.sends[out.queue[0]] {
            SendSlot::Queued { charge, .. } => *charge,
            SendSlot::Done(_) => 0,
        };
        if !Self::fits(self.window, out, head) {
            out.asked = true;
            self.due.push((from, Packet::CreditWanted { lane }));
        }
        self.ready.set();
    }

    /// `world` failed: its queued sends complete with `outcome(context, dest)`; nothing more is
    /// charged to it or given back to it.
    pub fn peer_failed(
        &mut self,
        world: WorldRank,
        outcome: impl Fn(ContextId, Rank) -> Result<()>,
    ) {
        let peer = self.peers.entry(world);
        peer.failed = true;
        for lane in Lane::ALL {
            let out = &mut peer.out[lane.index()];
            for key in out.queue.drain(..) {
                if let SendSlot::Queued { context, dest, .. } = &self.sends[key] {
                    self.sends[key] = SendSlot::Done(outcome(*context, *dest));
                }
            }
            out.charged = 0;
            out.asked = false;
            let inbound = std::mem::take(&mut peer.inbound[lane.index()]);
            if inbound.eager && lane == Lane::Point {
                self.waiting_senders -= 1;
            }
        }
    }

    /// Queued sends on `context` complete with `outcome` (a revocation).
    pub fn fail_context(&mut self, context: ContextId, outcome: &Result<()>) {
        let sends = &mut self.sends;
        let mut reopened = false;
        for peer in self.peers.values_mut() {
            for out in &mut peer.out {
                let before = out.queue.len();
                out.queue.retain(|&key| match &sends[key] {
                    SendSlot::Queued { context: c, .. } if *c == context => {
                        sends[key] = SendSlot::Done(outcome.clone());
                        false
                    }
                    _ => true,
                });
                reopened |= out.queue.len() != before && !out.queue.is_empty();
            }
        }
        if reopened {
            self.set_ready();
        }
    }

    // ---- Receiver side ----

    /// A message of `charge` is held here (buffered as unexpected). Only the totals are kept
    /// here: each sender keeps its own charges within its window.
    #[inline(always)]
    pub fn hold(&mut self, from: WorldRank, lane: Lane, charge: u64) {
        self.peers.entry(from).inbound[lane.index()].held += charge;
        let total = &mut self.held[lane.index()];
        *total += charge;
        let peak = &mut self.peak[lane.index()];
        *peak = (*peak).max(*total);
    }

    /// A held message is no longer held, without being released (it is delivered again, as
    /// traffic that waited for its communicator to exist).
    #[inline(always)]
    pub fn unhold(&mut self, from: WorldRank, lane: Lane, charge: u64) {
        let inbound = &mut self.peers.entry(from).inbound[lane.index()];
        inbound.held = inbound.held.saturating_sub(charge);
        let total = &mut self.held[lane.index()];
        *total = total.saturating_sub(charge);
    }

    /// A held message left (received or dropped): its charge goes back to `from`.
    #[inline(always)]
    pub fn release_held(&mut self, from: WorldRank, lane: Lane, charge: u64) {
        self.unhold(from, lane, charge);
        self.release(from, lane, charge);
    }

    /// A message that was never held (matched at arrival, or dropped at arrival) is done with:
    /// its charge goes back to `from`, at once if `from` asked for credit, else in a batch.
    #[inline(always)]
    pub fn release(&mut self, from: WorldRank, lane: Lane, charge: u64) {
        let report_at = self.report_at;
        let inbound = &mut self.peers.entry(from).inbound[lane.index()];
        let repaid = inbound.debt.min(charge);
        inbound.debt -= repaid;
        inbound.released += charge - repaid;
        if inbound.eager || inbound.released >= report_at {
            self.report(from, lane);
        }
    }

    /// Gives `from` back everything released on `lane` (nothing to a failed rank). Answers a
    /// request for credit: a sender that still waits afterwards asks again.
    #[cold]
    fn report(&mut self, from: WorldRank, lane: Lane) {
        let peer = self.peers.entry(from);
        let inbound = &mut peer.inbound[lane.index()];
        let bytes = std::mem::take(&mut inbound.released);
        if bytes == 0 {
            // A release that only repaid a loan: a waiting sender still waits for the next.
            return;
        }
        if std::mem::take(&mut inbound.eager) && lane == Lane::Point {
            self.waiting_senders -= 1;
        }
        if !peer.failed {
            self.due.push((from, Packet::Credit { lane, bytes }));
            self.set_ready();
        }
    }

    /// `from` has messages waiting for credit on `lane`: it gets what was released, or, if
    /// nothing was, the next release at once.
    pub fn credit_wanted(&mut self, from: WorldRank, lane: Lane) {
        self.requests[lane.index()] += 1;
        let peer = self.peers.entry(from);
        if peer.failed {
            return; // nothing more is given to a failed rank
        }
        let inbound = &mut peer.inbound[lane.index()];
        if !inbound.eager && lane == Lane::Point {
            self.waiting_senders += 1;
        }
        inbound.eager = true;
        if inbound.released > 0 {
            self.report(from, lane);
        }
    }

    /// This rank's point-to-point flow state with `peer`, for diagnostics: as a sender
    /// (charged, queued, asked) and as a receiver (held, debt, released, asked of it).
    #[doc(hidden)]
    pub fn describe_peer(&self, peer: WorldRank) -> String {
        let Some(p) = self.peers.0.get(peer.index()) else {
            return format!("{peer}: no traffic");
        };
        let (out, inbound) = (&p.out[Lane::Point.index()], &p.inbound[Lane::Point.index()]);
        format!(
            "to {peer}: charged {} queued {} asked {}; from {peer}: held {} debt {} released {} asked {}",
            out.charged,
            out.queue.len(),
            out.asked,
            inbound.held,
            inbound.debt,
            inbound.released,
            inbound.eager
        )
    }

    /// Whether a sender waits for point-to-point credit that this rank has not given yet.
    #[inline(always)]
    pub fn has_waiting_senders(&self) -> bool {
        self.waiting_senders > 0
    }

    /// Whether `from` waits for point-to-point credit that this rank has not given yet.
    pub fn is_waiting(&self, from: WorldRank) -> bool {
        self.peers
            .0
            .get(from.index())
            .is_some_and(|peer| !peer.failed && peer.inbound[Lane::Point.index()].eager)
    }

    /// Lends `from`, which waits for point-to-point credit, the charges of its messages held
    /// here (less what is lent already): a receive here waits for a message of `from` that is
    /// queued behind them (see "Loans" in the module's docs). The sender counts those charges
    /// as given back, so its queue moves on by up to a window; this rank repays the loan out
    /// of the credit their releases would give. The sender has never been given back more
    /// than it charged, so its count stays exact. Nothing is lent when nothing is held (the
    /// sender then waits for charges in flight, whose release answers it).
    pub fn lend(&mut self, from: WorldRank) {
        self.lend_on(from, Lane::Point);
    }

    /// Whether `from` waits for collective credit that this rank has not given yet.
    pub fn is_waiting_collective(&self, from: WorldRank) -> bool {
        self.peers
            .0
            .get(from.index())
            .is_some_and(|peer| !peer.failed && peer.inbound[Lane::Collective.index()].eager)
    }

    /// [`Flow::lend`] on the collective lane: a non-blocking collective here waits for a
    /// message of `from` that is queued behind messages held here for later steps or later
    /// calls (see "Collective traffic" in the module's docs). The loan travels as a credit
    /// (the sender treats both alike).
    pub fn lend_collective(&mut self, from: WorldRank) {
        if self.is_waiting_collective(from) {
            self.lend_on(from, Lane::Collective);
        }
    }

    fn lend_on(&mut self, from: WorldRank, lane: Lane) {
        if lane == Lane::Point && !self.is_waiting(from) {
            return;
        }
        let cap = self.cap;
        let inbound = &mut self.peers.entry(from).inbound[lane.index()];
        let bytes = inbound
            .held
            .saturating_sub(inbound.debt)
            .min(cap.saturating_sub(inbound.debt));
        if bytes == 0 {
            return; // nothing held to lend against, or this sender's loans reached the cap
        }
        inbound.debt += bytes;
        inbound.eager = false;
        self.loans += 1;
        let packet = match lane {
            Lane::Point => {
                self.waiting_senders -= 1;
                Packet::Loan { bytes }
            }
            Lane::Collective => Packet::Credit { lane, bytes },
        };
        self.due.push((from, packet));
        self.set_ready();
    }

    /// Queues `packet` for `to` with the flow-control packets (sent when they are).
    pub fn send_later(&mut self, to: WorldRank, packet: Packet) {
        self.due.push((to, packet));
    }

    /// Queues `packet` for `to` with the flow-control packets, and raises the ready flag so
    /// that a waiting thread transmits it soon.
    pub fn send_soon(&mut self, to: WorldRank, packet: Packet) {
        self.due.push((to, packet));
        self.set_ready();
    }

    /// The flow-control packets to send now.
    pub fn take_due(&mut self) -> Outgoing {
        std::mem::take(&mut self.due)
    }

    /// Whether flow-control packets wait to be sent.
    #[inline]
    pub fn has_due(&self) -> bool {
        !self.due.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(bytes: usize) -> Packet {
        Packet::Data {
            context: 0,
            source: 0,
            tag: 0,
            payload: vec![0; bytes],
        }
    }

    /// A window of 1000 bytes: a 2-rank job with a cap of 2000.
    fn flow() -> Flow<Cell<bool>> {
        let mut flow = Flow::new(2);
        flow.set_cap(2000, 2);
        flow
    }

    #[test]
    fn a_sender_queues_beyond_its_window_and_asks_once() {
        let mut f = flow();
        assert!(f.try_admit(WorldRank(1), Lane::Point, 600));
        assert!(
            !f.try_admit(WorldRank(1), Lane::Point, 600),
            "600 + 600 > 1000"
        );
        let a = f.enqueue(WorldRank(1), Lane::Point, 0, 1, data(536), 600);
        let b = f.enqueue(WorldRank(1), Lane::Point, 0, 1, data(36), 100);
        let due = f.take_due();
        assert!(matches!(
            due.as_slice(),
            [(WorldRank(1), Packet::CreditWanted { lane: Lane::Point })]
        ));
        assert!(
            !f.try_admit(WorldRank(1), Lane::Point, 1),
            "nothing skips the queue"
        );
        assert!(
            f.try_admit(WorldRank(1), Lane::Collective, 900),
            "the other lane is apart"
        );
        assert!(f.poll_transmit().is_empty());
        // Credit for the first message: both queued ones fit (600 + 100).
        f.credit(WorldRank(1), Lane::Point, 600);
        assert!(f.ready_flag().get());
        let t = f.poll_transmit();
        assert_eq!(t.packets.len(), 2);
        assert!(
            !f.try_admit(WorldRank(1), Lane::Point, 1),
            "still being transmitted"
        );
        f.end_transmit(&t);
        assert_eq!(f.outcome(a), Some(Ok(())));
        assert_eq!(f.outcome(b), Some(Ok(())));
        assert_eq!(f.stats().delayed_sends, 2);
    }

    #[test]
    fn a_message_larger_than_the_window_travels_alone() {
        let mut f = flow();
        assert!(f.try_admit(WorldRank(1), Lane::Point, 5000));
        assert!(!f.try_admit(WorldRank(1), Lane::Point, 64));
        f.credit(WorldRank(1), Lane::Point, 5000);
        assert!(f.try_admit(WorldRank(1), Lane::Point, 5000));
    }

    #[test]
    fn a_receiver_batches_credit_until_asked() {
        let mut f = flow(); // reports at 250
        f.release(WorldRank(0), Lane::Point, 100);
        assert!(!f.has_due(), "batched");
        f.credit_wanted(WorldRank(0), Lane::Point);
        assert!(matches!(
            f.take_due().as_slice(),
            [(WorldRank(0), Packet::Credit { bytes: 100, .. })]
        ));
        // Asked again with nothing released: the next release is reported at once.
        f.hold(WorldRank(0), Lane::Point, 100);
        f.credit_wanted(WorldRank(0), Lane::Point);
        assert!(!f.has_due());
        f.release_held(WorldRank(0), Lane::Point, 100);
        assert!(matches!(
            f.take_due().as_slice(),
            [(WorldRank(0), Packet::Credit { bytes: 100, .. })]
        ));
        f.release(WorldRank(0), Lane::Point, 10);
        assert!(!f.has_due(), "back to batching");
        assert_eq!(f.stats().peak_unexpected_bytes, 100);
        assert_eq!(f.stats().unexpected_bytes, 0);
    }

    #[test]
    fn a_loan_is_the_charges_held_and_is_repaid_out_of_their_releases() {
        let mut f = flow(); // window 1000, reports at 250
        f.hold(WorldRank(0), Lane::Point, 600);
        f.hold(WorldRank(0), Lane::Point, 300);
        // Nothing lent to a sender that does not wait.
        f.lend(WorldRank(0));
        assert!(!f.has_due());
        f.credit_wanted(WorldRank(0), Lane::Point);
        assert!(!f.has_due() && f.is_waiting(WorldRank(0)) && f.has_waiting_senders());
        f.lend(WorldRank(0));
        assert_eq!(
            f.take_due(),
            vec![(WorldRank(0), Packet::Loan { bytes: 900 })]
        );
        assert!(!f.is_waiting(WorldRank(0)) && !f.has_waiting_senders());
        assert_eq!(f.stats().loans, 1);
        // Asked again: only what is held beyond the debt can be lent (here nothing).
        f.credit_wanted(WorldRank(0), Lane::Point);
        f.lend(WorldRank(0));
        assert!(!f.has_due() && f.is_waiting(WorldRank(0)));
        // Releases repay the debt first, without a credit, and the sender keeps waiting...
        f.release_held(WorldRank(0), Lane::Point, 600);
        assert!(!f.has_due() && f.is_waiting(WorldRank(0)));
        // ...until a release goes beyond it: 300 repay the rest, nothing left to give.
        f.release_held(WorldRank(0), Lane::Point, 300);
        assert!(!f.has_due() && f.is_waiting(WorldRank(0)));
        f.release(WorldRank(0), Lane::Point, 40);
        assert_eq!(
            f.take_due(),
            vec![(
                WorldRank(0),
                Packet::Credit {
                    lane: Lane::Point,
                    bytes: 40
                }
            )]
        );
        assert!(!f.has_waiting_senders());
        assert_eq!(f.stats().unexpected_bytes, 0);
        // A sender that failed waits for nothing.
        f.hold(WorldRank(0), Lane::Point, 100);
        f.credit_wanted(WorldRank(0), Lane::Point);
        f.peer_failed(WorldRank(0), |_, _| Ok(()));
        assert!(!f.is_waiting(WorldRank(0)) && !f.has_waiting_senders());
        f.lend(WorldRank(0));
        assert!(!f.has_due());
    }

    #[test]
    fn a_sender_takes_a_loan_as_credit() {
        let mut f = flow();
        assert!(f.try_admit(WorldRank(1), Lane::Point, 900));
        let queued = f.enqueue(WorldRank(1), Lane::Point, 7, 1, data(500), 564);
        assert_eq!(
            f.take_due(),
            vec![(WorldRank(1), Packet::CreditWanted { lane: Lane::Point })]
        );
        f.credit(WorldRank(1), Lane::Point, 900); // what `Packet::Loan { bytes: 900 }` does
        let transmit = f.poll_transmit();
        assert_eq!(transmit.packets.len(), 1);
        f.end_transmit(&transmit);
        assert_eq!(f.outcome(queued), Some(Ok(())));
    }

    #[test]
    fn failures_and_revocations_complete_queued_sends() {
        let mut f = flow();
        assert!(f.try_admit(WorldRank(1), Lane::Point, 1000));
        let a = f.enqueue(WorldRank(1), Lane::Point, 7, 1, data(0), 64);
        let b = f.enqueue(WorldRank(1), Lane::Point, 8, 1, data(0), 64);
        assert_eq!(f.take_due().len(), 1, "one request for credit");
        f.fail_context(7, &Err(crate::Error::Revoked));
        assert_eq!(f.outcome(a), Some(Err(crate::Error::Revoked)));
        assert_eq!(f.outcome(b), None);
        f.peer_failed(WorldRank(1), |_, dest| {
            Err(crate::Error::ProcFailed { rank: dest })
        });
        assert_eq!(
            f.outcome(b),
            Some(Err(crate::Error::ProcFailed { rank: 1 }))
        );
        f.release(WorldRank(1), Lane::Point, 5000);
        assert!(!f.has_due(), "no credit for a dead rank");
        let c = f.enqueue(WorldRank(0), Lane::Point, 8, 0, data(0), 64);
        assert_eq!(f.cancel(c), None);
        assert_eq!(f.stats().queued_sends, 0);
    }
}

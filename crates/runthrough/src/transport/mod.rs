// SPDX-License-Identifier: MIT OR Apache-2.0
//! Transports: how packets move between ranks' engines.
//!
//! A transport takes packets that an engine produced and gets them to the destination rank's
//! engine, in order per (sender, destination) pair, never to or from a rank that died. The
//! in-process transport here delivers on the sending thread; the socket transports (a later
//! addition) deliver from a progress thread. Everything above this trait is the same for both.

use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use crate::endpoint::Endpoint;
use crate::signal::Signal;
use runthrough_core::agreement::Decision;
use runthrough_core::packet::{ContextId, Outgoing, Packet};
use runthrough_core::{Rank, WorldRank};

pub(crate) mod simulated;
pub(crate) mod socket;

/// An application message whose payload is a copy of `bytes` ([`Transport::send_data`]'s
/// packet).
pub(crate) fn copied_data(context: ContextId, source: Rank, tag: i32, bytes: &[u8]) -> Packet {
    Packet::Data {
        context,
        source,
        tag,
        payload: runthrough_core::buffers::copy_of(bytes),
    }
}

/// The two series of agreements of a communicator: its own (`validate_global`, `agree`,
/// `shrink`) and its creations' (`dup`, `split`, `create`), numbered apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Series {
    Agreement,
    Creation,
}

/// What the runtime needs from a transport.
pub(crate) trait Transport: Send + Sync + Debug {
    /// Sends `packet` from world rank `from` to world rank `to`, and whatever the delivery makes
    /// the receiver send in turn. Packets from or to a dead rank are dropped.
    fn send(&self, from: WorldRank, to: WorldRank, packet: Packet);

    /// Sends an application message (`Packet::Data` on `context` from comm rank `source`, with
    /// `tag`) whose payload is `bytes`, from an application thread that holds the credit for
    /// it. A transport that can write it straight from `bytes` does so (no copy into a packet
    /// first); the others send a packet with a copy, as [`Transport::send`].
    fn send_data(
        &self,
        from: WorldRank,
        to: WorldRank,
        context: ContextId,
        source: Rank,
        tag: i32,
        bytes: &[u8],
    ) {
        self.send(from, to, copied_data(context, source, tag, bytes));
    }

    /// Sends every packet of `out` from `from`, in order.
    fn send_all(&self, from: WorldRank, out: Outgoing) {
        for (to, packet) in out {
            self.send(from, to, packet);
        }
    }

    /// Fault injection and failure: world rank `rank` dies now. Its peers' detectors learn of it.
    fn kill(&self, rank: WorldRank);

    /// This process's rank `rank` learned from its engine that its peers declared it failed
    /// (an agreement decided so: it was fenced): it halts (SPEC §1), as a rank named by a
    /// fence vote does. In-process, as a kill.
    fn halt_declared_failed(&self, rank: WorldRank) {
        self.kill(rank);
    }

    /// Whether `rank` is still alive as far as the transport knows.
    fn is_alive(&self, rank: WorldRank) -> bool;

    /// Whether this process runs more ranks than it has cores: then waiters yield at once
    /// instead of spinning ([`crate::wait`]). One atomic load; `false` for transports whose
    /// ranks are other processes.
    fn oversubscribed(&self) -> bool {
        false
    }

    /// Polling progress: moves what arrived for this process's rank through memory that no
    /// thread watches (the shared-memory rings) into its engine. Called by every thread that
    /// waits in the library, before it checks and waits; a no-op for transports that deliver
    /// on their own.
    #[inline]
    fn poll(&self) {}

    /// A thread of this process's rank starts a blocking call: it polls until
    /// [`Transport::end_wait`].
    fn begin_wait(&self) {}

    /// The thread of [`Transport::begin_wait`] leaves its blocking call.
    fn end_wait(&self) {}

    /// Waits until `signal` (this process's rank's) moves past `seen`, by the wait policy
    /// ([`crate::wait`]); a transport with polling progress polls on the way out.
    fn wait_past(&self, signal: &Signal, seen: u32) {
        signal.wait_past(seen, self.oversubscribed());
    }

    /// The thread of world rank `rank` of this process has ended (returned, panicked or
    /// unwound after a kill): it no longer competes for a core.
    fn rank_ended(&self, _rank: WorldRank) {}

    /// World rank `rank` returns decision `decision` from the agreement `at` (its series, the
    /// communicator's context and the agreement's number): the simulated transport checks that
    /// every rank returns the same decision (docs/semantics.md §2.1); nothing for the others.
    #[inline]
    fn decided(&self, _rank: WorldRank, _at: (Series, ContextId, u64), _decision: &Decision) {}

    /// World rank `rank` starts a library call: a scheduling point for the simulated transport
    /// (the rank may be parked here while others run); nothing for the others.
    ///
    /// # Errors
    /// The simulated transport refuses a call from a thread it does not schedule
    /// (`Error::Argument`).
    #[inline]
    fn call_point(&self, _rank: WorldRank) -> runthrough_core::Result<()> {
        Ok(())
    }

    /// Seconds since an arbitrary point in the past, for `Comm::wtime`: the monotonic clock
    /// (since the first call in this process); the simulated transport's virtual time.
    fn wtime(&self) -> f64 {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        EPOCH
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    }
}

/// The in-process transport: every rank is a thread of this process.
///
/// A send locks the destination's engine on the sending thread and delivers there, so a message
/// costs one copy into a buffer and one lock. A rank's liveness is a read-write lock held for
/// reading across each of its sends: [`Transport::kill`] takes it for writing, so a kill happens
/// between two sends, never during one, and every peer's detector learns of the death after the
/// last message the rank sent (SPEC §1: complete messages sent before a failure stay receivable).
///
/// It also counts the ranks still running (neither killed nor ended), for the wait policy's
/// oversubscription rule: more running ranks than cores, and waiters yield instead of spinning.
#[derive(Debug)]
pub(crate) struct InProcess {
    endpoints: Vec<Arc<Endpoint>>,
    alive: Vec<RwLock<bool>>,
    /// Per rank: killed or its thread ended (counted out of `running` once).
    stopped: Vec<AtomicBool>,
    /// Ranks not yet stopped.
    running: AtomicUsize,
    /// `running` outnumbers the cores (kept up to date by `stop`, read by every wait).
    oversubscribed: AtomicBool,
}

impl InProcess {
    pub(crate) fn new(endpoints: Vec<Arc<Endpoint>>) -> Self {
        let alive = endpoints.iter().map(|_| RwLock::new(true)).collect();
        let stopped = endpoints.iter().map(|_| AtomicBool::new(false)).collect();
        let running = endpoints.len();
        InProcess {
            endpoints,
            alive,
            stopped,
            running: AtomicUsize::new(running),
            oversubscribed: AtomicBool::new(crate::wait::oversubscribed(running)),
        }
    }

    /// Counts `rank` out of the running ranks (once, whether killed or ended).
    fn stop(&self, rank: WorldRank) {
        let Some(stopped) = self.stopped.get(rank.index()) else {
            return;
        };
        if !stopped.swap(true, Ordering::Relaxed) {
            let running = self.running.fetch_sub(1, Ordering::Relaxed) - 1;
            self.oversubscribed
                .store(crate::wait::oversubscribed(running), Ordering::Relaxed);
        }
    }

    /// Delivers one packet if both ends are alive; returns what it caused.
    fn deliver_one(&self, from: WorldRank, to: WorldRank, packet: Packet) -> Outgoing {
        let Some(sender) = self.alive.get(from.index()) else {
            return Outgoing::new();
        };
        if self.endpoints[from.index()].dies_before_sending(&packet) {
            self.kill(from);
            return Outgoing::new();
        }
        let Some(receiver) = self.endpoints.get(to.index()) else {
            return Outgoing::new();
        };
        let sender_alive = sender.read().unwrap_or_else(|e| e.into_inner());
        // The receiver's liveness is read without its lock: holding two liveness locks at once
        // deadlocks against kills (a waiting writer blocks new readers), e.g. a self-send while
        // the rank is killed from another thread. A packet that reaches a rank in the middle of
        // being killed is harmless: nothing reads it, and what it makes the dead rank send is
        // dropped by the sender check above.
        if !*sender_alive || receiver.is_killed() {
            return Outgoing::new();
        }
        receiver.deliver(from, packet)
    }

    fn route(&self, mut queue: VecDeque<(WorldRank, WorldRank, Packet)>) {
        while let Some((from, to, packet)) = queue.pop_front() {
            let caused = self.deliver_one(from, to, packet);
            queue.extend(caused.into_iter().map(|(next, p)| (to, next, p)));
        }
    }
}

impl Transport for InProcess {
    fn send(&self, from: WorldRank, to: WorldRank, packet: Packet) {
        let caused = self.deliver_one(from, to, packet);
        if !caused.is_empty() {
            self.route(caused.into_iter().map(|(next, p)| (to, next, p)).collect());
        }
    }

    fn kill(&self, rank: WorldRank) {
        let Some(lock) = self.alive.get(rank.index()) else {
            return;
        };
        {
            let mut alive = lock.write().unwrap_or_else(|e| e.into_inner());
            if !*alive {
                return;
            }
            *alive = false;
        }
        self.stop(rank);
        self.endpoints[rank.index()].mark_killed();
        let mut queue = VecDeque::new();
        for (peer, endpoint) in self.endpoints.iter().enumerate() {
            let peer = WorldRank(peer as u32);
            if peer != rank && self.is_alive(peer) {
                queue.extend(
                    endpoint
                        .peer_failed(rank)
                        .into_iter()
                        .map(|(to, p)| (peer, to, p)),
                );
            }
        }
        self.route(queue);
    }

    fn is_alive(&self, rank: WorldRank) -> bool {
        self.alive
            .get(rank.index())
            .is_some_and(|lock| *lock.read().unwrap_or_else(|e| e.into_inner()))
    }

    #[inline]
    fn oversubscribed(&self) -> bool {
        self.oversubscribed.load(Ordering::Relaxed)
    }

    fn rank_ended(&self, rank: WorldRank) {
        self.stop(rank);
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's endpoint: its protocol state ([`Engine`], a state machine in
//! `runthrough_core::engine`) behind a lock, its wake-ups and its fault-injection state.
//!
//! The engine is driven from two sides: the rank's own threads (posting receives, validating) and
//! whatever delivers traffic to the rank (another rank's thread in-process, a progress thread for
//! sockets). Both lock the [`Endpoint`]'s engine, change it, collect the packets it wants sent,
//! unlock, and only then hand those packets to the transport: no thread ever holds two engines.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use runthrough_core::fault::{Collective, Injector, Sending, Trigger};

use crate::signal::Signal;
use runthrough_core::engine::SEQUENCE_BITS;
pub(crate) use runthrough_core::engine::{Engine, Members, Received, SYNC_HEAD};
use runthrough_core::packet::{ContextId, Outgoing, Packet, WORLD_CONTEXT};
use runthrough_core::WorldRank;

/// The engine learns that world rank `world` failed ([`Engine::handle_peer_failed`]); the job's
/// timeline, if one is drawn, hears of it when it is news.
pub(crate) fn learn_failed(engine: &mut Engine, world: WorldRank, out: &mut Outgoing) {
    if engine.handle_peer_failed(world, out) {
        crate::timeline::learned(engine, world.0);
    }
}

/// One rank: its engine, its wake-ups, and its fault-injection state.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) world_rank: WorldRank,
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
    /// Set when a combining step of an unlocked reduction waits for a thread
    /// (`runthrough_core::engine::Reduction::signalling`; `Process::progress` runs them).
    pub(crate) combines_due: Arc<AtomicBool>,
}

impl Endpoint {
    pub(crate) fn new(world_rank: WorldRank, world_size: u32) -> Self {
        Endpoint::with_signal(world_rank, world_size, Signal::default())
    }

    /// An endpoint whose doorbell is `signal` (one that peers in other processes ring, for the
    /// shared-memory transport: [`Signal::shared`]).
    pub(crate) fn with_signal(world_rank: WorldRank, world_size: u32, signal: Signal) -> Self {
        Endpoint::with_engine(world_rank, Engine::new(world_rank, world_size), signal)
    }

    /// The endpoint of world rank `world_rank` around `engine` (a spawned rank's: its world
    /// is not the job's first ranks).
    pub(crate) fn with_engine(world_rank: WorldRank, engine: Engine, signal: Signal) -> Self {
        let transmit_ready = engine.transmit_ready_flag();
        Endpoint {
            transmit_ready,
            world_rank,
            engine: Mutex::new(engine),
            signal,
            killed: AtomicBool::new(false),
            faults: Mutex::new(Injector::default()),
            faults_planned: AtomicBool::new(false),
            combines_due: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Locks the engine. A poisoned lock (a panic while holding it) is taken over: the engine's
    /// methods leave it consistent between statements that can panic.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Delivers a packet; returns what the engine wants sent in reply.
    pub(crate) fn deliver(&self, from: WorldRank, packet: Packet) -> Outgoing {
        let mut out = Outgoing::new();
        {
            let mut engine = self.lock();
            engine.handle_packet(from, packet, &mut out);
            engine.flush_flow(&mut out);
        }
        self.signal.notify();
        out
    }

    /// Tells the detector that `world` failed; returns what the engine wants sent.
    pub(crate) fn peer_failed(&self, world: WorldRank) -> Outgoing {
        let mut out = Outgoing::new();
        {
            let mut engine = self.lock();
            learn_failed(&mut engine, world, &mut out);
            engine.flush_flow(&mut out);
        }
        self.signal.notify();
        out
    }

    /// Tells the agreements that `world` finalized and left (not a failure); returns what the
    /// engine wants sent.
    pub(crate) fn peer_departed(&self, world: WorldRank) -> Outgoing {
        let mut out = Outgoing::new();
        self.lock().handle_peer_departed(world, &mut out);
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
        self.lock().set_unexpected_cap(cap, world_size);
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
                Packet::Collective {
                    context,
                    epoch,
                    sequence,
                    ..
                } => Sending::Collective {
                    context: *context,
                    // (The tag's high bits number a message along its pair: not the call's.)
                    call: (*epoch, *sequence & ((1 << SEQUENCE_BITS) - 1)),
                },
                Packet::Revoke { .. } => Sending::Revoke,
                _ => Sending::Other,
            };
            faults.dies_before_sending(sending)
        })
    }

    /// This rank enters a call of the collective `operation` on communicator `context`; true
    /// when a planned fault makes it die now, at entry. The faults planned at the call's
    /// messages are armed for its number, the one the engine gives the next collective call
    /// on `context`.
    #[inline]
    pub(crate) fn collective_started(&self, operation: Collective, context: ContextId) -> bool {
        if !self.faults_planned.load(Ordering::Relaxed) {
            return false;
        }
        // Read before the injector's lock is taken (never the engine's inside it).
        let number = self.lock().next_collective_number(context);
        self.fault_here(|faults| {
            faults.dies_at_collective_start(operation, context, number.unwrap_or_default())
        })
    }
}

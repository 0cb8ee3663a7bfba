// SPDX-License-Identifier: MIT OR Apache-2.0
//! Transports: how packets move between ranks' engines.
//!
//! A transport takes packets that an engine produced and gets them to the destination rank's
//! engine, in order per (sender, destination) pair, never to or from a rank that died. The
//! in-process transport here delivers on the sending thread; the socket transports (a later
//! addition) deliver from a progress thread. Everything above this trait is the same for both.

use crate::signal::Signal;
use runthrough_core::agreement::Decision;
use runthrough_core::packet::{ContextId, Outgoing, Packet};
use runthrough_core::{Rank, WorldRank};
use std::fmt::Debug;

mod in_process;
pub(crate) mod simulated;
pub(crate) mod socket;

pub(crate) use in_process::{InProcess, Launch};

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

/// Names one spawn at every parent: the context id of the communicator that joins the
/// parents and the new ranks, and the spawning communicator's first member (two communicators
/// can share a context id: the world communicators of two generations of spawned ranks).
pub(crate) type SpawnKey = (ContextId, WorldRank);

/// What `Comm::spawn` asks a transport to start.
#[derive(Debug, Clone)]
pub(crate) struct SpawnRequest {
    /// The spawn, as every parent names it.
    pub(crate) key: SpawnKey,
    /// How many ranks to start (0 when only the root knows: [`Programs::Root`]).
    pub(crate) count: u32,
    /// The spawning communicator's members, in rank order (the parents' side of the joining
    /// communicator).
    pub(crate) parents: Vec<WorldRank>,
    /// What the new ranks are given ([`crate::InterComm::args`]), with [`Programs::Job`].
    pub(crate) args: Vec<String>,
    /// What the new ranks run.
    pub(crate) programs: Programs,
}

/// What a spawn's ranks run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Programs {
    /// The job's own function or program (`Comm::spawn`).
    Job,
    /// The programs the root (this world rank) gives (`Comm::spawn_programs` at a non-root).
    Root(WorldRank),
    /// These programs (`Comm::spawn_programs` at the root; empty: the root's arguments were
    /// bad, the spawn fails).
    Given(Vec<runthrough_net::launch::SpawnProgram>),
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
    fn send_all(&self, from: WorldRank, out: &mut Outgoing) {
        for (to, packet) in out.drain(..) {
            self.send(from, to, packet);
        }
    }

    /// Fault injection and failure: world rank `rank` dies now. Its peers' detectors learn of it.
    fn kill(&self, rank: WorldRank);

    /// This process's rank `rank` learned from its engine that its peers declared it failed
    /// (an agreement decided so: it was fenced): it halts (semantics §1), as a rank named by a
    /// fence vote does. In-process, as a kill.
    fn halt_declared_failed(&self, rank: WorldRank) {
        self.kill(rank);
    }

    /// Starts the ranks of `request` (`Comm::spawn`), or finds them started: every parent of
    /// one spawn asks, and every one gets the same answer, the world rank of the first new
    /// rank or the error. The new ranks wait until [`Transport::spawn_verdict`] says whether
    /// they run. Transports that cannot start ranks say so (`Error::Spawn`).
    /// Starts spawn `request`'s ranks (once per key): the first world rank and how many.
    fn spawn(&self, request: &SpawnRequest) -> runthrough_core::Result<(WorldRank, u32)> {
        let _ = request;
        Err(runthrough_core::Error::Spawn {
            reason:
                "this transport cannot start ranks (in-process ranks and ranks under rtrun can)"
                    .into(),
        })
    }

    /// The parents of spawn `key` decided whether its ranks run (`start`) or are killed.
    fn spawn_verdict(&self, key: SpawnKey, start: bool) {
        let _ = (key, start);
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

    /// This process's rank runs non-blocking collectives (`running`), or no longer does: a
    /// transport with polling progress then has their messages wake its progress thread, so
    /// that the engine advances them while the rank computes. Nothing for the others (they
    /// deliver on their own).
    fn collectives_running(&self, _running: bool) {}

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
    /// every rank returns the same decision (docs/src/semantics.md §2.1); nothing for the others.
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

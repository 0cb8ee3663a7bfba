// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank as its own threads see it: its endpoint (with its fault plan) and its transport.

use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use runthrough_core::fault::Collective;
use runthrough_core::{Result, WorldRank};

use crate::endpoint::{Endpoint, Engine};
use crate::transport::Transport;
use runthrough_core::packet::{ContextId, Outgoing};

/// The payload a killed rank's thread unwinds with (never seen by the application: the universe
/// catches it and reports the rank as killed).
#[derive(Debug)]
pub(crate) struct Killed;

/// One rank of a job, shared by every communicator handle of that rank.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) endpoint: Arc<Endpoint>,
    pub(crate) transport: Arc<dyn Transport>,
    /// How this rank reaches the ranks that spawned it, if a spawn started it.
    pub(crate) parent: Option<crate::spawn::ParentLink>,
}

impl Process {
    pub(crate) fn world_rank(&self) -> WorldRank {
        self.endpoint.world_rank
    }

    /// Starts a communication call: unwinds if this rank was killed or is planned to die here.
    pub(crate) fn enter(&self) -> Result<()> {
        self.check_alive();
        self.transport.call_point(self.world_rank())?;
        if self.endpoint.dies_at_call() {
            self.die();
        }
        Ok(())
    }

    /// Starts a call of the collective `operation` on communicator `context`: dies here when a
    /// planned fault says so (`Endpoint::collective_started`).
    pub(crate) fn enter_collective(&self, operation: Collective, context: ContextId) {
        if self.endpoint.collective_started(operation, context) {
            self.die();
        }
    }

    /// Unwinds the calling thread if this rank was killed.
    pub(crate) fn check_alive(&self) {
        if self.endpoint.is_killed() {
            std::panic::resume_unwind(Box::new(Killed));
        }
    }

    /// This rank learned that its peers declared it failed (an agreement decided so): it
    /// halts before the call returns, and the calling thread unwinds.
    #[cold]
    pub(crate) fn halt_declared_failed(&self) -> ! {
        self.transport.halt_declared_failed(self.world_rank());
        std::panic::resume_unwind(Box::new(Killed));
    }

    /// This rank dies now: it stops sending, its peers learn of it, and the calling thread unwinds.
    pub(crate) fn die(&self) -> ! {
        self.transport.kill(self.world_rank());
        std::panic::resume_unwind(Box::new(Killed));
    }

    /// Releases the engine's lock, then sends the flow-control packets it had waiting (credits
    /// for buffered messages that a receive took).
    #[inline]
    pub(crate) fn unlock_and_send_credits(&self, mut engine: MutexGuard<'_, Engine>) {
        if engine.has_due() {
            let credits = engine.take_due();
            drop(engine);
            self.send_all(credits);
        }
    }

    /// `reduction`, which tells this rank's waiting threads when one of its steps waits for
    /// them, if it is an unlocked one (`Reduction::unlocked`: see [`Process::progress`]).
    pub(crate) fn signalling(
        &self,
        reduction: runthrough_core::engine::Reduction,
    ) -> runthrough_core::engine::Reduction {
        reduction.signalling(&self.endpoint.combines_due)
    }

    /// Runs the combining steps of unlocked reductions that wait for a thread (outside the
    /// engine's lock: the function may call the library), and hands each back.
    #[inline(never)]
    fn run_unlocked_combines(&self) {
        // Cleared before the look: a step that comes due meanwhile sets it again.
        self.endpoint.combines_due.store(false, Ordering::Release);
        loop {
            let Some(mut combine) = self.endpoint.lock().take_unlocked_combine() else {
                break;
            };
            combine.run();
            self.combined(combine);
            // The thread that waits for that call's outcome may be asleep.
            self.endpoint.signal.notify();
        }
    }

    /// Hands a combining step back to the engine once this thread ran it (a reduction the
    /// engine does not run itself: `runthrough_core::engine::Reduction::by_caller`,
    /// `::unlocked`); sends what its schedule sends next.
    pub(crate) fn combined(&self, combine: runthrough_core::engine::Combine) {
        let mut out = Outgoing::new();
        {
            let mut engine = self.endpoint.lock();
            engine.combined(combine, &mut out);
            out.extend(engine.take_due());
        }
        self.send_all(out);
        self.check_alive(); // a fault planned at one of those messages
    }

    /// Sends what the engine produced; the emptied vector is kept for this thread's next
    /// [`outgoing`].
    pub(crate) fn send_all(&self, mut out: Outgoing) {
        if !out.is_empty() {
            self.transport.send_all(self.world_rank(), &mut out);
        }
        recycle(out);
    }

    /// Waits until `check` returns `Some`, re-checking after every event at this rank. Spins
    /// briefly, then yields, then sleeps (see [`crate::wait`]). Unwinds if the rank is killed.
    /// Transmits this rank's messages that waited for credit meanwhile ([`Process::progress`]).
    pub(crate) fn wait_for<R>(&self, mut check: impl FnMut(&mut Engine) -> Option<R>) -> R {
        let _waiting = self.waiting();
        loop {
            let seen = self.endpoint.signal.current();
            self.check_alive();
            self.progress();
            let (result, declared_failed) = {
                let mut engine = self.endpoint.lock();
                let result = check(&mut engine);
                (result, engine.declared_failed())
            };
            if declared_failed {
                self.halt_declared_failed();
            }
            if let Some(result) = result {
                return result;
            }
            if self.endpoint.transmit_ready() {
                continue; // the check gave flow control something to send (a loan)
            }
            self.wait_past(seen);
        }
    }

    /// Returns once this rank's event count differs from `seen` ([`crate::signal::Signal`]),
    /// waiting by the policy of [`crate::wait`]: no spin while the process runs more ranks than
    /// cores.
    #[inline]
    pub(crate) fn wait_past(&self, seen: u32) {
        self.transport.poll();
        self.transport.wait_past(&self.endpoint.signal, seen);
    }

    /// Polls the transport ([`Transport::poll`]: what arrived in shared memory reaches the
    /// engine), then transmits the messages of this rank that waited for credit and may go now
    /// (`crate::flow`), in order per destination, on the calling thread. Called by every thread that waits in
    /// the library; costs one atomic load when nothing waits.
    #[inline]
    pub(crate) fn progress(&self) {
        self.transport.poll();
        if self.endpoint.transmit_ready() {
            self.transmit_queued();
        }
        if self.endpoint.combines_due.load(Ordering::Acquire) {
            self.run_unlocked_combines();
        }
    }

    #[inline(never)]
    fn transmit_queued(&self) {
        let mut transmit = self.endpoint.lock().poll_transmit();
        while !transmit.is_empty() {
            let packets = std::mem::take(&mut transmit.packets);
            self.send_all(packets);
            // Their senders may be other threads of this rank, waiting for the outcome.
            self.endpoint.signal.notify();
            let mut engine = self.endpoint.lock();
            engine.end_transmit(&transmit);
            transmit = if self.endpoint.transmit_ready() {
                engine.poll_transmit()
            } else {
                Default::default()
            };
        }
    }
}

/// A thread of the rank inside a blocking call ([`Process::waiting`]).
pub(crate) struct Waiting<'a>(&'a dyn Transport);

impl Process {
    /// Marks the calling thread as waiting inside a blocking call until the guard drops
    /// ([`Transport::begin_wait`]): a transport with polling progress then tells peers that
    /// this rank polls, so they need not wake its progress thread.
    pub(crate) fn waiting(&self) -> Waiting<'_> {
        self.transport.begin_wait();
        Waiting(&*self.transport)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.end_wait();
    }
}

impl Drop for Process {
    /// The rank's last handle is gone: its thread has ended, and it no longer competes for a
    /// core (the wait policy's oversubscription count).
    fn drop(&mut self) {
        self.transport.rank_ended(self.world_rank());
    }
}

thread_local! {
    /// An emptied [`Outgoing`] of this thread's, kept for its next call: a call that sends
    /// (every collective step does) would otherwise allocate one and free it.
    static SPARE_OUTGOING: std::cell::Cell<Outgoing> = const { std::cell::Cell::new(Vec::new()) };
}

/// An empty [`Outgoing`]: this thread's spare one, with room for a few packets, when it has
/// one.
#[inline]
pub(crate) fn outgoing() -> Outgoing {
    SPARE_OUTGOING.with(std::cell::Cell::take)
}

/// Keeps `out`, emptied, as this thread's spare (unless it grew large, or the thread has one).
#[inline]
pub(crate) fn recycle(mut out: Outgoing) {
    if out.capacity() == 0 || out.capacity() > 64 {
        return;
    }
    out.clear();
    SPARE_OUTGOING.with(|spare| {
        let kept = spare.take();
        spare.set(if kept.capacity() == 0 { out } else { kept });
    });
}

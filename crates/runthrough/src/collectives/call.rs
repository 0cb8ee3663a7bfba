// SPDX-License-Identifier: MIT OR Apache-2.0
//! The plumbing every collective operation runs on (SPEC §3.3).
//!
//! A [`CollectiveCall`] is one collective call at one rank: it checks that collectives are
//! enabled (no unrecognized failure among the participants, not revoked, no other collective
//! running on the communicator), numbers the call within the communicator's epoch, and gives the
//! algorithm `send` / `recv` between participants on traffic that never mixes with the
//! application's. A receive returns `Error::ProcFailed` as soon as this rank's detector knows of
//! any failed participant that G does not recognize, so no collective stays blocked on a dead
//! rank, directly or through the algorithm's tree.

use std::sync::Arc;

use runthrough_core::engine::CollectivePosted;
use runthrough_core::{Error, Rank, Result};

use crate::comm::Comm;
use crate::flow;
use runthrough_core::packet::{Lane, Packet, Payload};

/// One collective call in progress at this rank.
#[derive(Debug)]
pub(crate) struct CollectiveCall<'a> {
    comm: &'a Comm,
    epoch: u32,
    sequence: u32,
    /// The participants: the OK ranks of G, in rank order.
    pub(crate) participants: Arc<[Rank]>,
    /// This rank's position among the participants.
    pub(crate) index: usize,
}

impl<'a> CollectiveCall<'a> {
    /// Starts a collective call on `comm`.
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` if another collective runs on `comm`; `Error::Revoked` on a
    /// revoked communicator; `Error::ProcFailed` while a failed participant is not recognized in
    /// G; `Error::Comm` on a freed communicator.
    pub(crate) fn begin(comm: &'a Comm) -> Result<Self> {
        comm.process.enter()?;
        let call = comm
            .process
            .endpoint
            .lock()
            .begin_collective(comm.context, comm.rank, true)?;
        Ok(CollectiveCall {
            comm,
            epoch: call.epoch,
            sequence: call.sequence,
            participants: call.participants,
            index: call.index,
        })
    }

    /// Ends the call with the algorithm's `outcome`: an `Ok` becomes `Error::ProcFailed` if this
    /// rank's detector now knows of a failed participant that G does not recognize (SPEC §3.3:
    /// such a failure disables every pending collective, even one whose last message was
    /// already buffered).
    pub(crate) fn finish<R>(self, outcome: Result<R>) -> Result<R> {
        let value = outcome?;
        let unrecognized = {
            let mut engine = self.comm.process.endpoint.lock();
            engine.unrecognized_failure(self.comm.context)?
        }; // the lock is released before `self` is dropped (its drop locks too)
        match unrecognized {
            Some(rank) => Err(Error::ProcFailed { rank }),
            None => Ok(value),
        }
    }

    /// Sends `bytes` to participant `rank` (a comm rank). Waits while the collective lane to
    /// `rank` has no credit (`crate::flow`), and then returns `Error::ProcFailed` as soon as a
    /// participant fails unrecognized, `Error::Revoked` on revocation.
    pub(crate) fn send(&self, rank: Rank, bytes: &[u8]) -> Result<()> {
        let charge = flow::charge(bytes.len());
        let process = &self.comm.process;
        let mut queued = None;
        loop {
            let mut engine = process.endpoint.lock();
            let world = engine.collective_target(self.comm.context, rank)?;
            if engine.admit(world, Lane::Collective, charge) {
                drop(engine);
                let packet = queued.unwrap_or_else(|| self.packet(bytes));
                process.transport.send(process.world_rank(), world, packet);
                // A fault planned at this message killed the rank: it stops here, rather than
                // finish the call with messages already buffered.
                process.check_alive();
                return Ok(());
            }
            let Some(packet) = queued.take() else {
                // The slow path: copy the message without the lock, then look again.
                drop(engine);
                queued = Some(self.packet(bytes));
                continue;
            };
            let context = self.comm.context;
            let slot = engine.queue_send(world, Lane::Collective, context, rank, packet, charge);
            let due = engine.take_due();
            drop(engine);
            process.endpoint.signal.notify(); // for threads watching the statistics
            process.send_all(due);
            let sent = self.wait_queued(slot);
            process.check_alive();
            break sent;
        }
    }

    fn packet(&self, bytes: &[u8]) -> Packet {
        Packet::Collective {
            context: self.comm.context,
            source: self.comm.rank,
            epoch: self.epoch,
            sequence: self.sequence,
            payload: runthrough_core::buffers::copy_of(bytes),
        }
    }

    /// Waits for a message queued for credit; gives up with the collective's errors.
    fn wait_queued(&self, slot: usize) -> Result<()> {
        let process = &self.comm.process;
        process.wait_for(|engine| {
            if let Some(outcome) = engine.send_outcome(slot) {
                return Some(outcome);
            }
            let stop = Err(engine.collective_stop(self.comm.context)?);
            // Withdrawn; unless it went out meanwhile, then that is the outcome.
            Some(engine.cancel_send(slot).unwrap_or(stop))
        })
    }

    /// Receives this call's message from participant `rank`.
    pub(crate) fn recv(&self, rank: Rank) -> Result<Received> {
        let id = {
            let mut engine = self.comm.process.endpoint.lock();
            match engine.collective_receive(self.comm.context, rank, self.sequence)? {
                CollectivePosted::Done(payload) => {
                    self.comm.process.unlock_and_send_credits(engine);
                    return Ok(Received(payload));
                }
                CollectivePosted::Waiting(id) => id,
            }
        };
        self.comm
            .process
            .wait_for(|engine| engine.poll_collective_receive(self.comm.context, id))
            .map(Received)
    }
}

/// A collective message's payload as an algorithm reads it; a large one goes back to the
/// process's stock of buffers when dropped (`runthrough_core::buffers`), so that the next
/// message's copy lands in memory already mapped (a fresh 256 KiB buffer per step of a ring
/// all-reduce cost a page fault per 4 KiB, and zeroing).
pub(crate) struct Received(Payload);

impl std::ops::Deref for Received {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Received {
    fn drop(&mut self) {
        runthrough_core::buffers::give_back(std::mem::take(&mut self.0));
    }
}

impl Drop for CollectiveCall<'_> {
    fn drop(&mut self) {
        self.comm
            .process
            .endpoint
            .lock()
            .end_collective(self.comm.context);
    }
}

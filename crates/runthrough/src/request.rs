// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking requests: wait, test, wait_any, wait_all (MPI-4.0 §3.7).

use runthrough_core::engine::{Agreed, AgreementCallId};
use runthrough_core::WorldRank;
use runthrough_core::{Error, Rank, Result};

use crate::comm::{deliver_into, Comm, SlotPoll, Status};

/// A non-blocking operation in progress (`MPI_Request`), tied to the buffer it borrows.
///
/// A request completes once: `wait` or a successful `test` returns its outcome and leaves the
/// request inactive (like `MPI_REQUEST_NULL`: waiting again returns an empty status at once).
/// The exception is a receive from any source that reports `Error::ProcFailedPending`: it stays
/// pending, and after `validate_local` acknowledges the failure it can still complete
/// (semantics §3.2). Dropping a pending receive request withdraws its receive; dropping a pending
/// send request (one whose message waits for flow-control credit) waits, as a blocking send
/// would, until the message is transmitted or the send fails, so that no message is lost.
#[derive(Debug)]
pub struct Request<'a> {
    state: State<'a>,
}

#[derive(Debug)]
enum State<'a> {
    Complete(Result<Status>),
    /// A send waiting for credit (`crate::flow`), in this send slot.
    Send {
        comm: &'a Comm,
        slot: usize,
        status: Status,
    },
    Receive {
        comm: &'a Comm,
        slot: u64,
        wildcard: bool,
        buffer: &'a mut [u8],
        element: usize,
    },
    /// A synchronous send (`Comm::issend`) waiting for its receiver's acknowledgement, after
    /// waiting for credit in this send slot when it has one.
    Synchronous {
        comm: &'a Comm,
        world: u32,
        dest: Rank,
        id: u64,
        slot: Option<usize>,
        status: Status,
    },
    Inactive,
}

impl<'a> Request<'a> {
    pub(crate) fn completed(outcome: Result<Status>) -> Self {
        Request {
            state: State::Complete(outcome),
        }
    }

    pub(crate) fn send(comm: &'a Comm, slot: usize, status: Status) -> Self {
        Request {
            state: State::Send { comm, slot, status },
        }
    }

    pub(crate) fn receive(
        comm: &'a Comm,
        slot: u64,
        wildcard: bool,
        buffer: &'a mut [u8],
        element: usize,
    ) -> Self {
        Request {
            state: State::Receive {
                comm,
                slot,
                wildcard,
                buffer,
                element,
            },
        }
    }

    pub(crate) fn synchronous(
        comm: &'a Comm,
        world: u32,
        dest: Rank,
        id: u64,
        slot: Option<usize>,
        status: Status,
    ) -> Self {
        Request {
            state: State::Synchronous {
                comm,
                world,
                dest,
                id,
                slot,
                status,
            },
        }
    }

    /// Whether the request has already returned its outcome.
    pub fn is_inactive(&self) -> bool {
        matches!(self.state, State::Inactive)
    }

    /// Cancels a receive that no message has matched yet (`MPI_Cancel`): withdraws it and
    /// returns `true`; the request is then complete, and `wait` / `test` return an empty status
    /// (source and tag `None`, count 0) without touching the buffer. Returns `false`, and
    /// leaves the request as it was, when a message (or a failure) already completed it, and
    /// for every other kind of request: a send here is never cancelled (its message may already
    /// be with the receiver), it completes as it would have.
    pub fn cancel(&mut self) -> bool {
        let State::Receive { comm, slot, .. } = &self.state else {
            return false;
        };
        let (comm, slot) = (*comm, *slot);
        let mut engine = comm.process.endpoint.lock();
        if !engine.receive_is_pending(slot) {
            return false;
        }
        comm.cancel_receive(&mut engine, slot);
        drop(engine);
        self.state = State::Complete(Ok(Status::proc_null()));
        true
    }

    /// Completes the request if it can (`MPI_Test`): `Ok(Some(status))` when it did, `Ok(None)`
    /// when it is still pending.
    ///
    /// # Errors
    /// The operation's error, which completes the request; or `Error::ProcFailedPending` for a
    /// wildcard receive that must wait for an acknowledgement, which leaves it pending.
    pub fn test(&mut self) -> Result<Option<Status>> {
        match &mut self.state {
            State::Inactive => Ok(Some(Status::proc_null())),
            State::Complete(_) => match std::mem::replace(&mut self.state, State::Inactive) {
                State::Complete(outcome) => outcome.map(Some),
                _ => unreachable!(),
            },
            State::Send { comm, slot, status } => {
                let (comm, slot, status) = (*comm, *slot, *status);
                comm.process.check_alive();
                comm.process.progress();
                let Some(outcome) = comm.process.endpoint.lock().send_outcome(slot) else {
                    return Ok(None);
                };
                self.state = State::Inactive;
                outcome.map(|()| Some(status))
            }
            State::Synchronous {
                comm,
                world,
                dest,
                id,
                slot,
                status,
            } => {
                let (comm, world, dest, id, status) = (*comm, *world, *dest, *id, *status);
                comm.process.check_alive();
                comm.process.progress();
                let mut engine = comm.process.endpoint.lock();
                if let Some(queued) = *slot {
                    match engine.send_outcome(queued) {
                        None => return Ok(None),
                        Some(Ok(())) => *slot = None,
                        Some(Err(error)) => {
                            drop(engine);
                            self.state = State::Inactive;
                            return Err(error);
                        }
                    }
                }
                let outcome = comm.poll_synchronous(&mut engine, world, dest, id);
                drop(engine);
                match outcome {
                    None => Ok(None),
                    Some(outcome) => {
                        self.state = State::Inactive;
                        outcome.map(|()| Some(status))
                    }
                }
            }
            State::Receive {
                comm,
                slot,
                wildcard,
                ..
            } => {
                let (comm, slot, wildcard) = (*comm, *slot, *wildcard);
                comm.process.check_alive();
                comm.process.progress();
                let poll = comm.poll_slot(&mut comm.process.endpoint.lock(), slot, wildcard);
                match poll {
                    SlotPoll::Pending => Ok(None),
                    SlotPoll::FailurePending => Err(Error::ProcFailedPending),
                    SlotPoll::Complete(received) => {
                        let State::Receive {
                            buffer, element, ..
                        } = std::mem::replace(&mut self.state, State::Inactive)
                        else {
                            unreachable!()
                        };
                        received
                            .and_then(|r| deliver_into(r, buffer, element))
                            .map(Some)
                    }
                }
            }
        }
    }

    /// Waits for the request to complete (`MPI_Wait`), with the errors of [`Request::test`].
    pub fn wait(&mut self) -> Result<Status> {
        let comm = match &self.state {
            State::Receive { comm, .. }
            | State::Send { comm, .. }
            | State::Synchronous { comm, .. } => *comm,
            _ => return self.test().map(|s| s.unwrap_or_else(Status::proc_null)),
        };
        comm.process.enter()?;
        self.wait_inner(comm)
    }

    fn wait_inner(&mut self, comm: &Comm) -> Result<Status> {
        let _waiting = comm.process.waiting();
        loop {
            let seen = comm.process.endpoint.signal.current();
            if let Some(status) = self.test()? {
                return Ok(status);
            }
            comm.process.wait_past(seen);
        }
    }

    fn comm(&self) -> Option<&'a Comm> {
        match &self.state {
            State::Receive { comm, .. }
            | State::Send { comm, .. }
            | State::Synchronous { comm, .. } => Some(*comm),
            _ => None,
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        match &self.state {
            State::Receive { comm, slot, .. } => {
                comm.cancel_receive(&mut comm.process.endpoint.lock(), *slot);
            }
            State::Send { comm, slot, .. } => {
                let (comm, slot) = (*comm, *slot);
                if std::thread::panicking() || comm.process.endpoint.is_killed() {
                    comm.process.endpoint.lock().cancel_send(slot);
                } else {
                    let _ = self.wait_inner(comm);
                }
            }
            // Dropped before its acknowledgement: a message still waiting for credit goes (as
            // a dropped send's does), nothing waits for the acknowledgement, and the engine
            // forgets it (now, or when it comes).
            State::Synchronous {
                comm,
                world,
                id,
                slot,
                ..
            } => {
                let (comm, world, id) = (*comm, *world, *id);
                if let Some(slot) = *slot {
                    if std::thread::panicking() || comm.process.endpoint.is_killed() {
                        comm.process.endpoint.lock().cancel_send(slot);
                    } else {
                        let _ = comm.process.wait_for(|engine| engine.send_outcome(slot));
                    }
                }
                let mut engine = comm.process.endpoint.lock();
                engine.abandon_synchronous(WorldRank(world), id);
            }
            _ => {}
        }
    }
}

/// Waits until one of `requests` completes (`MPI_Waitany`) and returns its index and outcome;
/// `None` when every request is inactive. A wildcard receive's `ProcFailedPending` counts as an
/// outcome (the request stays pending).
pub fn wait_any(requests: &mut [Request<'_>]) -> Option<(usize, Result<Status>)> {
    let comm = requests.iter().find_map(Request::comm);
    let _waiting = comm.map(|c| c.process.waiting());
    loop {
        let seen = comm.map(|c| c.process.endpoint.signal.current());
        let mut any_active = false;
        for (index, request) in requests.iter_mut().enumerate() {
            if request.is_inactive() {
                continue;
            }
            any_active = true;
            match request.test() {
                Ok(None) => {}
                Ok(Some(status)) => return Some((index, Ok(status))),
                Err(error) => return Some((index, Err(error))),
            }
        }
        if !any_active {
            return None;
        }
        match (comm, seen) {
            (Some(comm), Some(seen)) => comm.process.wait_past(seen),
            _ => std::thread::yield_now(),
        }
    }
}

/// Waits for every request (`MPI_Waitall`) and returns each outcome, in order.
pub fn wait_all(requests: &mut [Request<'_>]) -> Vec<Result<Status>> {
    requests.iter_mut().map(Request::wait).collect()
}

/// A non-blocking agreement in progress: [`Comm::ivalidate_global`] or [`Comm::iagree`]
/// (`T` is what the blocking call returns).
///
/// While pending, an `ivalidate_global` holds the communicator's collective slot and its
/// agreements (another collective or agreement call on it is `Error::ConcurrentCollective`);
/// an `iagree` holds neither (collectives run meanwhile; agreements queue behind it). `wait` or a successful `test` returns the outcome once; after
/// that both return `Error::Request`. Dropping a pending request waits for it to complete: every
/// live participant needs this rank's part in the agreement until the decision, and a
/// `validate_global` must install the G its peers install.
pub struct AgreementRequest<'a, T> {
    comm: &'a Comm,
    id: AgreementCallId,
    pending: bool,
    finish: fn(&Comm, Result<Agreed>) -> Result<T>,
}

impl<T> std::fmt::Debug for AgreementRequest<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgreementRequest")
            .field("comm", &self.comm)
            .field("id", &self.id)
            .field("pending", &self.pending)
            .finish()
    }
}

impl<'a, T> AgreementRequest<'a, T> {
    /// The request of agreement call `id` on `comm`, whose outcome `finish` turns into the
    /// blocking call's.
    pub(crate) fn new(
        comm: &'a Comm,
        id: AgreementCallId,
        finish: fn(&Comm, Result<Agreed>) -> Result<T>,
    ) -> Self {
        AgreementRequest {
            comm,
            id,
            pending: true,
            finish,
        }
    }

    /// Whether the request has already returned its outcome.
    pub fn is_inactive(&self) -> bool {
        !self.pending
    }

    /// Completes the request if the agreement has decided here (`MPI_Test`): `Ok(Some(value))`
    /// when it did, `Ok(None)` while it is pending.
    ///
    /// # Errors
    /// The blocking call's errors (which complete the request); `Error::Request` once the
    /// request has completed.
    pub fn test(&mut self) -> Result<Option<T>> {
        if !self.pending {
            return Err(Error::Request);
        }
        self.comm.process.check_alive();
        self.comm.process.progress();
        let (polled, declared_failed) = {
            let mut engine = self.comm.process.endpoint.lock();
            let polled = self.comm.poll_agreement_call(&mut engine, self.id);
            (polled, engine.declared_failed())
        };
        if declared_failed {
            // The decision named this rank failed (it was fenced): it halts before the request
            // completes, as a blocking agreement would (finalize's agreement included).
            self.comm.process.halt_declared_failed();
        }
        let Some(polled) = polled else {
            return Ok(None);
        };
        self.pending = false;
        (self.finish)(self.comm, self.comm.deliver_agreed(polled)).map(Some)
    }

    /// Waits for the agreement to decide (`MPI_Wait`), with the errors of
    /// [`AgreementRequest::test`].
    pub fn wait(&mut self) -> Result<T> {
        self.comm.process.enter()?;
        self.wait_inner()
    }

    fn wait_inner(&mut self) -> Result<T> {
        let _waiting = self.comm.process.waiting();
        loop {
            let seen = self.comm.process.endpoint.signal.current();
            if let Some(value) = self.test()? {
                return Ok(value);
            }
            self.comm.process.wait_past(seen);
        }
    }
}

impl<T> Drop for AgreementRequest<'_, T> {
    fn drop(&mut self) {
        if self.pending && !std::thread::panicking() && !self.comm.process.endpoint.is_killed() {
            let _ = self.wait_inner();
        }
    }
}

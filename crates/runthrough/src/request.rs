// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking requests: wait, test, wait_any, wait_all (MPI-4.0 §3.7).

use runthrough_core::{Error, Result};

use crate::comm::{deliver_into, Comm, SlotPoll, Status};

/// A non-blocking operation in progress (`MPI_Request`), tied to the buffer it borrows.
///
/// A request completes once: `wait` or a successful `test` returns its outcome and leaves the
/// request inactive (like `MPI_REQUEST_NULL`: waiting again returns an empty status at once).
/// The exception is a receive from any source that reports `Error::ProcFailedPending`: it stays
/// pending, and after `validate_local` acknowledges the failure it can still complete
/// (SPEC §3.2). Dropping a pending request withdraws its receive.
#[derive(Debug)]
pub struct Request<'a> {
    state: State<'a>,
}

#[derive(Debug)]
enum State<'a> {
    Complete(Result<Status>),
    Receive {
        comm: &'a Comm,
        slot: u64,
        wildcard: bool,
        buffer: &'a mut [u8],
        element: usize,
    },
    Inactive,
}

impl<'a> Request<'a> {
    pub(crate) fn completed(outcome: Result<Status>) -> Self {
        Request {
            state: State::Complete(outcome),
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

    /// Whether the request has already returned its outcome.
    pub fn is_inactive(&self) -> bool {
        matches!(self.state, State::Inactive)
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
            State::Receive {
                comm,
                slot,
                wildcard,
                ..
            } => {
                let (comm, slot, wildcard) = (*comm, *slot, *wildcard);
                comm.process.check_alive();
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
            State::Receive { comm, .. } => *comm,
            _ => return self.test().map(|s| s.unwrap_or_else(Status::proc_null)),
        };
        comm.process.enter()?;
        loop {
            let seen = comm.process.endpoint.signal.current();
            if let Some(status) = self.test()? {
                return Ok(status);
            }
            comm.process.endpoint.signal.wait_past(seen);
        }
    }

    fn comm(&self) -> Option<&'a Comm> {
        match &self.state {
            State::Receive { comm, .. } => Some(*comm),
            _ => None,
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Receive { comm, slot, .. } = &self.state {
            comm.cancel_receive(&mut comm.process.endpoint.lock(), *slot);
        }
    }
}

/// Waits until one of `requests` completes (`MPI_Waitany`) and returns its index and outcome;
/// `None` when every request is inactive. A wildcard receive's `ProcFailedPending` counts as an
/// outcome (the request stays pending).
pub fn wait_any(requests: &mut [Request<'_>]) -> Option<(usize, Result<Status>)> {
    let comm = requests.iter().find_map(Request::comm);
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
            (Some(comm), Some(seen)) => comm.process.endpoint.signal.wait_past(seen),
            _ => std::thread::yield_now(),
        }
    }
}

/// Waits for every request (`MPI_Waitall`) and returns each outcome, in order.
pub fn wait_all(requests: &mut [Request<'_>]) -> Vec<Result<Status>> {
    requests.iter_mut().map(Request::wait).collect()
}

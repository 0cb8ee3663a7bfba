// SPDX-License-Identifier: MIT OR Apache-2.0
//! The request-completion calls beyond `MPI_Wait`, `MPI_Test`, `MPI_Waitall` and `MPI_Waitany`
//! (MPI-4.0 §3.7.3, §3.7.5): `MPI_Testall`, `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`, and
//! `MPI_Request_free`, `MPI_Cancel` and `MPI_Test_cancelled`.
//!
//! # Failure semantics
//! A request that completes with an error (a failed peer, a revocation) is *done*, like one
//! that succeeds; a wildcard receive that reports `MPIX_ERR_PROC_FAILED_PENDING` (a failure not
//! yet acknowledged) is done for these calls too, but stays pending: its handle is kept and it
//! can still complete after the acknowledgement (semantics §3.2, §5). The calls with an array of
//! statuses report errors as `MPI_ERR_IN_STATUS` with each status's `MPI_ERROR` (the error
//! itself with `MPI_STATUSES_IGNORE`), as `MPI_Waitall` does.
//!
//! A persistent request (`crate::persistent`) keeps its handle when these calls complete it
//! (it becomes inactive, whatever its outcome), and an inactive one counts as
//! `MPI_REQUEST_NULL` does; `crate::point_to_point::progress` does both for every call.

use std::os::raw::c_int;
use std::time::Duration;

use runthrough::Error;

use crate::constants::*;
use crate::errors::{boundary_on, out, Failure, Out};
use crate::point_to_point::{
    array, empty_status, finish, finish_all, first_error_outcome, progress, settle, statuses_of,
    Next, Progress, Standing, StatusOut,
};
use crate::runtime::{with_runtime, Operation, RequestEntry};

/// How long the waiting calls sleep between two looks at their requests (as `MPI_Waitany`).
const POLL: Duration = Duration::from_micros(50);

/// Checks that every handle is `MPI_REQUEST_NULL` or a live request, before any is touched.
fn check_handles(requests: &[c_int]) -> Result<(), Failure> {
    with_runtime(|runtime| {
        match requests
            .iter()
            .find(|&&h| h != MPI_REQUEST_NULL && !runtime.requests.contains_key(&h))
        {
            Some(handle) => Err(Failure::new(
                MPI_ERR_REQUEST,
                format!("invalid or completed request handle {handle}"),
            )),
            None => Ok(()),
        }
    })
}

/// `MPI_Testall`: `flag = 1` when every request is done (completed, failed, or a wildcard
/// receive reporting `MPIX_ERR_PROC_FAILED_PENDING`): then they are completed as by
/// `MPI_Waitall`. Otherwise `flag = 0` and neither the requests nor the statuses change.
///
/// # Safety
/// `requests` is NULL or points at `count` readable and writable `MPI_Request`s; `flag` is
/// NULL or points at a writable int; `statuses` is NULL (`MPI_STATUSES_IGNORE`) or points at
/// `count` writable `MPI_Status`es.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    requests: *mut c_int,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract.
        let requests = unsafe { array(requests, count, "requests")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: forwarded contract.
        let statuses = unsafe { statuses_of(statuses, count)? };
        check_handles(requests)?;
        for &request in requests.iter() {
            if settle(request, false)? == Standing::Pending {
                flag.write(0);
                return Ok(());
            }
        }
        flag.write(1);
        finish_all(requests, statuses, false, comm)
    })
}

/// `MPI_Testany`: the first done request, in array order: `index` and `status`, `flag = 1`,
/// its handle `MPI_REQUEST_NULL`, its error returned. A wildcard receive reporting
/// `MPIX_ERR_PROC_FAILED_PENDING` gives its `index`, `flag = 0` (it is not complete) and that
/// error, its handle kept. None done: `flag = 0`, `index = MPI_UNDEFINED`. Every request
/// inactive: `flag = 1`, `index = MPI_UNDEFINED`, an empty status.
///
/// # Safety
/// As `MPI_Testall` for `requests` and `flag`; `index` is NULL or points at a writable int;
/// `status` is NULL or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    requests: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract.
        let requests = unsafe { array(requests, count, "requests")? };
        // SAFETY: checked for NULL by `out`.
        let index = unsafe { out(index, "index")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        check_handles(requests)?;
        let mut any_active = false;
        for (i, request) in requests.iter_mut().enumerate() {
            let standing = settle(*request, false)?;
            any_active |= standing != Standing::Inactive;
            if matches!(standing, Standing::Finished | Standing::FailurePending) {
                let (done, error) = finish(request, false, comm);
                index.write(i as c_int);
                flag.write(c_int::from(standing == Standing::Finished));
                status.write(done);
                return error.map_or(Ok(()), Err);
            }
        }
        index.write(MPI_UNDEFINED);
        flag.write(c_int::from(!any_active));
        if !any_active {
            status.write(empty_status());
        }
        Ok(())
    })
}

/// The core of `MPI_Testsome` and `MPI_Waitsome`: completes every request that is done now
/// (waiting until one is when `block`), writes their indices and statuses in array order and
/// their number in `outcount` (`MPI_UNDEFINED` when every request is inactive), also when one
/// of them failed (`MPI_ERR_IN_STATUS`).
///
/// # Safety
/// `requests`, `indices` and `statuses` as `MPI_Testsome` takes them.
unsafe fn some(
    incount: c_int,
    requests: *mut c_int,
    outcount: &Out<c_int>,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    block: bool,
    comm: &mut c_int,
) -> Result<(), Failure> {
    // SAFETY: forwarded contract.
    let requests = unsafe { array(requests, incount, "requests")? };
    // SAFETY: forwarded contract.
    let indices = unsafe { array(indices, incount, "indices")? };
    // SAFETY: forwarded contract.
    let mut statuses = unsafe { statuses_of(statuses, incount)? };
    check_handles(requests)?;
    loop {
        let mut done = Vec::new();
        let mut any_active = false;
        for (i, &request) in requests.iter().enumerate() {
            match settle(request, false)? {
                Standing::Inactive => {}
                Standing::Pending => any_active = true,
                Standing::Finished | Standing::FailurePending => {
                    any_active = true;
                    done.push(i);
                }
            }
        }
        if !any_active {
            outcount.write(MPI_UNDEFINED);
            return Ok(());
        }
        if done.is_empty() && block {
            std::thread::sleep(POLL);
            continue;
        }
        let mut first_error = None;
        for (k, &i) in done.iter().enumerate() {
            let mut request_comm = MPI_COMM_WORLD;
            let (status, error) = finish(&mut requests[i], false, &mut request_comm);
            indices[k] = i as c_int;
            if let Some(statuses) = statuses.as_deref_mut() {
                statuses[k] = status;
            }
            if let (None, Some(error)) = (&first_error, error) {
                first_error = Some((request_comm, error));
            }
        }
        outcount.write(done.len() as c_int);
        return first_error_outcome(first_error, statuses.is_some(), comm);
    }
}

/// `MPI_Testsome`: every request done now (completed, failed, or a wildcard receive reporting
/// `MPIX_ERR_PROC_FAILED_PENDING`, whose handle is kept), with its index and status, in array
/// order; `outcount = 0` when none is, `MPI_UNDEFINED` when every request is inactive.
///
/// # Safety
/// `requests` is NULL or points at `incount` readable and writable `MPI_Request`s; `outcount`
/// is NULL or points at a writable int; `indices` is NULL or points at `incount` writable ints;
/// `statuses` is NULL (`MPI_STATUSES_IGNORE`) or points at `incount` writable `MPI_Status`es.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testsome(
    incount: c_int,
    requests: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let outcount = unsafe { out(outcount, "outcount")? };
        // SAFETY: forwarded contract.
        unsafe { some(incount, requests, &outcount, indices, statuses, false, comm) }
    })
}

/// `MPI_Waitsome`: as `MPI_Testsome`, waiting until at least one active request is done.
///
/// # Safety
/// As `MPI_Testsome`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitsome(
    incount: c_int,
    requests: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let outcount = unsafe { out(outcount, "outcount")? };
        // SAFETY: forwarded contract.
        unsafe { some(incount, requests, &outcount, indices, statuses, true, comm) }
    })
}

/// `MPI_Request_free` (MPI-4.0 §3.7.3): the handle becomes `MPI_REQUEST_NULL` at once and the
/// operation goes on: a pending receive still delivers its message into its buffer, a send
/// waiting for flow-control credit still goes (a helper thread completes such a request; its
/// outcome, an error included, is dropped). Freeing the request of a non-blocking collective
/// (`MPI_Ibarrier`, `MPIX_Comm_iagree`) is erroneous in MPI: `MPI_ERR_REQUEST`, the request
/// untouched. A persistent request is freed, inactive or not: its active operation goes on as
/// above.
///
/// # Safety
/// `request` is NULL or points at a readable and writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(request: *mut c_int) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(request, "request")? };
        let handle = slot.read();
        let entry = with_runtime(|runtime| {
            let invalid = || {
                Failure::new(
                    MPI_ERR_REQUEST,
                    format!("invalid or completed request handle {handle}"),
                )
            };
            let entry = runtime.requests.get(&handle).ok_or_else(invalid)?;
            *comm = entry.comm;
            let collective = |operation: &Operation| {
                matches!(
                    operation,
                    Operation::Collective(_) | Operation::Agreement(_) | Operation::NewComm(..)
                )
            };
            let active_collective = match &entry.operation {
                Operation::Persistent(persistent) => {
                    persistent.active.as_deref().is_some_and(collective)
                }
                operation => collective(operation),
            };
            if active_collective {
                return Err(Failure::new(
                    MPI_ERR_REQUEST,
                    "the request of a non-blocking collective (or an active persistent one) \
                     cannot be freed",
                ));
            }
            runtime.requests.remove(&handle).ok_or_else(invalid)
        })?;
        slot.write(MPI_REQUEST_NULL);
        // A persistent request's active operation goes on as a non-persistent one would.
        let operation = match entry.operation {
            Operation::Persistent(persistent) => {
                persistent.template.release();
                persistent.active.map(|active| *active)
            }
            // An MPI_Isendrecv's send goes on by itself (a dropped send still delivers); its
            // receive, as a freed MPI_Irecv's.
            Operation::Pair(pair) => pair.receive,
            operation => Some(operation),
        };
        if let Some(Operation::Generalized(state)) = &operation {
            return state.release();
        }
        if let Some(Operation::Receive(mut pending)) = operation {
            std::thread::Builder::new()
                .name("rt-freed-request".into())
                .spawn(move || {
                    // A wildcard receive waits for the acknowledgement, as it would have.
                    loop {
                        match pending.request.wait() {
                            Err(Error::ProcFailedPending) => std::thread::sleep(POLL * 200),
                            Ok(status) => {
                                pending.complete(status.count);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                })
                .map_err(|e| Failure::new(MPI_ERR_INTERN, format!("starting a thread: {e}")))?;
        }
        Ok(())
    })
}

/// `MPI_Cancel`: a receive that no message has matched yet is withdrawn, and its request
/// completes (by `MPI_Wait`, `MPI_Test`, ...) with a status that `MPI_Test_cancelled` reports
/// as cancelled, its buffer untouched. A receive already matched, a send (never cancelled here:
/// its message may be with the receiver already) and a completed request complete as they
/// would have. Cancelling the request of a non-blocking collective is erroneous in MPI:
/// `MPI_ERR_REQUEST`. For an active persistent request, its started operation is cancelled so
/// (the request is inactive again once that completes); an inactive one is left as it is.
///
/// # Safety
/// `request` is NULL or points at a readable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(request: *mut c_int) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let handle = unsafe { out(request, "request")? }.read();
        let generalized = with_runtime(|runtime| {
            let entry = runtime.requests.get_mut(&handle).ok_or_else(|| {
                Failure::new(
                    MPI_ERR_REQUEST,
                    format!("invalid or completed request handle {handle}"),
                )
            })?;
            *comm = entry.comm;
            if let Operation::Generalized(state) = &entry.operation {
                return Ok(Some(std::sync::Arc::clone(state)));
            }
            cancel(&mut entry.operation).map(|()| None)
        })?;
        // The program's cancel function runs with no lock held (it may complete the request).
        generalized.map_or(Ok(()), |state| state.cancel())
    })
}

/// Cancels `operation` if it is a receive no message has matched yet (in a persistent
/// request: its active operation; an inactive one is left as it is).
fn cancel(operation: &mut Operation) -> Result<(), Failure> {
    match operation {
        Operation::Collective(_) | Operation::Agreement(_) | Operation::NewComm(..) => {
            Err(Failure::new(
                MPI_ERR_REQUEST,
                "the request of a non-blocking collective cannot be cancelled",
            ))
        }
        Operation::Receive(pending) => {
            if pending.request.cancel() {
                *operation = Operation::Complete(Ok(MPI_Status {
                    rt_cancelled: 1,
                    ..empty_status()
                }));
            }
            Ok(())
        }
        // Like a send, an MPI_Isendrecv is not cancelled: it completes as it would have. (A
        // generalized request's cancel function is called by `MPI_Cancel` itself.)
        Operation::Complete(_) | Operation::Pair(_) | Operation::Generalized(_) => Ok(()),
        Operation::Persistent(persistent) => match persistent.active.as_deref_mut() {
            Some(active) => cancel(active),
            None => Ok(()),
        },
    }
}

/// `MPI_Test_cancelled`.
///
/// # Safety
/// `status` is NULL or points at a readable `MPI_Status`; `flag` is NULL or points at a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
    boundary_on(|_| {
        // SAFETY: checked for NULL by `out`; only read.
        let status = unsafe { out(status.cast_mut(), "status")? }.read();
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        flag.write(c_int::from(status.rt_cancelled != 0));
        Ok(())
    })
}

/// `MPI_Request_get_status` (MPI-4.0 §3.7.3): whether the request is complete, and its status,
/// without freeing it or making it inactive. An operation found complete is kept with its
/// outcome for the call that completes the request (`MPI_Wait`, `MPI_Test`, ...: the same
/// status, the same error); its error is also returned here, as `MPI_Test` would. A wildcard
/// receive reporting `MPIX_ERR_PROC_FAILED_PENDING` is not complete (flag 0, that error), and
/// `MPI_REQUEST_NULL` or an inactive persistent request is (flag 1, an empty status).
///
/// # Safety
/// `flag` is NULL or points at a writable int; `status` is NULL or points at a writable
/// `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status(
    request: c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        // A generalized request: its query function, if it completed; it stays as it is.
        let generalized = with_runtime(|runtime| {
            Ok(match runtime.requests.get(&request) {
                Some(RequestEntry {
                    operation: Operation::Generalized(state),
                    comm: request_comm,
                }) => {
                    *comm = *request_comm;
                    Some(std::sync::Arc::clone(state))
                }
                _ => None,
            })
        })?;
        if let Some(state) = generalized {
            if !state.complete(false) {
                flag.write(0);
                return Ok(());
            }
            flag.write(1);
            let queried = state.query();
            status.write(queried.as_ref().map_or_else(
                |failure| MPI_Status {
                    MPI_ERROR: failure.class,
                    ..empty_status()
                },
                |found| *found,
            ));
            return queried.map(drop);
        }
        match progress(request, false, comm)? {
            Progress::Pending => {
                flag.write(0);
                Ok(())
            }
            Progress::Inactive => {
                flag.write(1);
                status.write(empty_status());
                Ok(())
            }
            Progress::Done {
                status: found,
                error,
                next,
            } => {
                if next == Next::Active {
                    flag.write(0);
                    return error.map_or(Ok(()), Err);
                }
                let outcome = match &error {
                    None => Ok(found),
                    Some(failure) => Err(failure.clone()),
                };
                let request_comm = *comm;
                with_runtime(|runtime| {
                    match next {
                        Next::Freed => {
                            runtime.requests.insert(
                                request,
                                RequestEntry {
                                    operation: Operation::Complete(outcome),
                                    comm: request_comm,
                                },
                            );
                        }
                        Next::Inactive => {
                            if let Some(RequestEntry {
                                operation: Operation::Persistent(persistent),
                                ..
                            }) = runtime.requests.get_mut(&request)
                            {
                                persistent.active = Some(Box::new(Operation::Complete(outcome)));
                            }
                        }
                        Next::Active => {}
                    }
                    Ok(())
                })?;
                flag.write(1);
                status.write(found);
                error.map_or(Ok(()), Err)
            }
        }
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("completion.rs");

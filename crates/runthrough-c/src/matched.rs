// SPDX-License-Identifier: MIT OR Apache-2.0
//! Matched probes (MPI-4.0 §3.8.2): `MPI_Mprobe` and `MPI_Improbe` take the message they find
//! out of matching (no other receive, of any thread, can take it), and `MPI_Mrecv` /
//! `MPI_Imrecv` receive it. A probe of a source recognized as failed gives
//! `MPI_MESSAGE_NO_PROC`, which receives as from `MPI_PROC_NULL`; the failure rules are the
//! receive's (docs/src/semantics.md §3.1, §3.2; from `MPI_ANY_SOURCE`, the blocking probe returns
//! `MPIX_ERR_PROC_FAILED` and the non-blocking one `MPIX_ERR_PROC_FAILED_PENDING` for an
//! unacknowledged failure).

use std::ffi::c_void;
use std::os::raw::c_int;

use runthrough::Message;

use crate::constants::*;
use crate::derived::Data;
use crate::errors::{boundary, boundary_on, out, Failure, Out};
use crate::intercomm::receive_side;
use crate::point_to_point::{c_status, proc_null_status, receive_tag, source, StatusOut};
use crate::runtime::{with_runtime, Operation};

/// A message taken out of matching, and the communicator handle whose error handler reports
/// its receive.
#[derive(Debug)]
pub(crate) struct MessageEntry {
    message: Message,
    comm: c_int,
}

/// Writes the handle of `message` (probed on `comm`) and its status.
fn keep(
    message: Message,
    comm: c_int,
    out_message: &Out<c_int>,
    status: &StatusOut,
) -> Result<(), Failure> {
    if message.is_no_proc() {
        out_message.write(MPI_MESSAGE_NO_PROC);
        status.write(proc_null_status());
        return Ok(());
    }
    status.write(c_status(message.status::<u8>()));
    let handle = with_runtime(|runtime| {
        let handle = runtime.next_handle();
        runtime
            .messages
            .insert(handle, MessageEntry { message, comm });
        Ok(handle)
    })?;
    out_message.write(handle);
    Ok(())
}

/// `MPI_Mprobe`.
///
/// # Safety
/// `message` is NULL or points at a writable `MPI_Message`; `status` is NULL or points at a
/// writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Mprobe(
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    message: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let message = unsafe { out(message, "message")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let comm_box = receive_side(comm, source_rank)?;
        let tag = receive_tag(tag)?;
        let Some(source) = source(source_rank)? else {
            message.write(MPI_MESSAGE_NO_PROC);
            status.write(proc_null_status());
            return Ok(());
        };
        let found = comm_box
            .get()
            .mprobe(source, tag)
            .map_err(Failure::blocking)?;
        keep(found, comm, &message, &status)
    })
}

/// `MPI_Improbe`.
///
/// # Safety
/// `flag` is NULL or points at a writable int; `message` is NULL or points at a writable
/// `MPI_Message`; `status` is NULL or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Improbe(
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    message: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: checked for NULL by `out`.
        let message = unsafe { out(message, "message")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let comm_box = receive_side(comm, source_rank)?;
        let tag = receive_tag(tag)?;
        let Some(source) = source(source_rank)? else {
            flag.write(1);
            message.write(MPI_MESSAGE_NO_PROC);
            status.write(proc_null_status());
            return Ok(());
        };
        match comm_box.get().improbe(source, tag)? {
            Some(found) => {
                keep(found, comm, &message, &status)?;
                flag.write(1);
            }
            None => flag.write(0),
        }
        Ok(())
    })
}

/// What `*message` stands for, taken out of the table: `*message` becomes `MPI_MESSAGE_NULL`
/// and `comm` the communicator handle whose error handler reports the receive. `None` for
/// `MPI_MESSAGE_NO_PROC`.
///
/// # Safety
/// `message` is NULL or points at a readable and writable `MPI_Message`.
unsafe fn take(message: *mut c_int, comm: &mut c_int) -> Result<Option<Message>, Failure> {
    // SAFETY: checked for NULL by `out`.
    let message = unsafe { out(message, "message")? };
    let handle = message.read();
    if handle == MPI_MESSAGE_NO_PROC {
        message.write(MPI_MESSAGE_NULL);
        return Ok(None);
    }
    let entry = with_runtime(|runtime| {
        runtime.messages.remove(&handle).ok_or_else(|| {
            Failure::new(
                MPI_ERR_REQUEST,
                format!(
                    "invalid message handle {handle} (MPI_MESSAGE_NULL, or a message already \
                     received)"
                ),
            )
        })
    })?;
    *comm = entry.comm;
    message.write(MPI_MESSAGE_NULL);
    Ok(Some(entry.message))
}

/// Receives `message` (`None`: the no-process message) into `buf`, of `data`'s layout.
///
/// # Safety
/// `buf` is NULL or points at writable elements of the layout `data` describes.
unsafe fn deliver(
    message: Option<Message>,
    data: &Data,
    buf: *mut c_void,
) -> Result<MPI_Status, Failure> {
    let Some(message) = message else {
        return Ok(proc_null_status());
    };
    // SAFETY: forwarded contract; used only during this call.
    let mut target = unsafe { data.target(buf)? };
    let bytes = message.len();
    let outcome = message.receive_into(target.receive_buffer());
    target.finish(bytes);
    Ok(c_status(outcome?))
}

/// `MPI_Mrecv`.
///
/// # Safety
/// `buf` is NULL or points at `count` writable elements of `datatype`; `message` is NULL or
/// points at a readable and writable `MPI_Message`; `status` is NULL or points at a writable
/// `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    message: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let data = Data::of(count, datatype)?;
        // SAFETY: forwarded contract.
        let message = unsafe { take(message, comm)? };
        // SAFETY: forwarded contract.
        status.write(unsafe { deliver(message, &data, buf)? });
        Ok(())
    })
}

/// `MPI_Imrecv`: the message is already here, so the receive happens in the call and the
/// request is complete when it returns; its outcome (a truncation, say) comes from the call
/// that completes it. A bad datatype, count or message handle is refused at once (nothing is
/// received).
///
/// # Safety
/// As for `MPI_Mrecv`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    message: *mut c_int,
    request: *mut c_int,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        let data = Data::of(count, datatype)?;
        // SAFETY: forwarded contract.
        let message = unsafe { take(message, comm)? };
        // SAFETY: forwarded contract.
        let outcome = unsafe { deliver(message, &data, buf) };
        let handle =
            with_runtime(|runtime| Ok(runtime.add_request(Operation::Complete(outcome), *comm)))?;
        request.write(handle);
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("matched.rs");

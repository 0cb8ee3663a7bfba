// SPDX-License-Identifier: MIT OR Apache-2.0
//! Buffered and ready sends (MPI-4.0 §3.4, §3.6): `MPI_Bsend`, `MPI_Ibsend`, `MPI_Rsend`,
//! `MPI_Irsend`, `MPI_Buffer_attach` and `MPI_Buffer_detach`.
//!
//! The runtime buffers every send already (eager, with flow control: semantics §3.1, the header's
//! "Flow control"), so a buffered send is a standard send here, and so is a ready send (a
//! standard send is a valid implementation of it). The buffer the program attaches is recorded
//! and given back by `MPI_Buffer_detach`, never used: messages are buffered by the library, so
//! a buffered send never fails for want of attached space (no `MPI_ERR_BUFFER` there).

use std::ffi::c_void;
use std::os::raw::c_int;

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::point_to_point::{send, start_send};
use crate::runtime::with_runtime;

/// A C pointer the library keeps but does not dereference itself (a persistent request's
/// buffer, the attached buffer).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Address(pub(crate) *mut c_void);

// SAFETY: an `Address` is only carried between threads; it is dereferenced only by the calls
// whose C contract covers it (`MPI_Start` for a persistent request's buffer), from the
// thread that makes them.
unsafe impl Send for Address {}

/// `MPI_Bsend`: `MPI_Send` (the library buffers the message; the attached buffer is not used).
///
/// # Safety
/// `buf` is NULL or points at `count` readable elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || {
        unsafe { send(buf, count, datatype, dest, tag, comm, false) }.map(drop)
    })
}

/// `MPI_Rsend`: `MPI_Send` (correct whenever the matching receive is posted, as MPI requires
/// of a ready send).
///
/// # Safety
/// As `MPI_Bsend`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || {
        unsafe { send(buf, count, datatype, dest, tag, comm, false) }.map(drop)
    })
}

/// `MPI_Ibsend`: `MPI_Isend`.
///
/// # Safety
/// `buf` as `MPI_Bsend`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { start_send(buf, count, datatype, dest, tag, comm, request, false) }
}

/// `MPI_Irsend`: `MPI_Isend`.
///
/// # Safety
/// As `MPI_Ibsend`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { start_send(buf, count, datatype, dest, tag, comm, request, false) }
}

/// `MPI_Buffer_attach`: records `buffer` and `size` for `MPI_Buffer_detach` (the library does
/// not use it, so the pointer is only kept). `MPI_ERR_BUFFER` when a buffer is attached already
/// or `size < 0`.
#[no_mangle]
pub extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if size < 0 {
            return Err(Failure::new(
                MPI_ERR_BUFFER,
                format!("negative buffer size {size}"),
            ));
        }
        with_runtime(|runtime| {
            if let Some((_, attached)) = runtime.attached.as_deref() {
                return Err(Failure::new(
                    MPI_ERR_BUFFER,
                    format!(
                        "a buffer of {attached} bytes is attached already (MPI_Buffer_detach it \
                         first)"
                    ),
                ));
            }
            runtime.attached = Some(Box::new((Address(buffer), size)));
            Ok(())
        })
    })
}

/// `MPI_Buffer_detach`: writes the attached buffer's address to `*(void **)buffer_addr` and its
/// size to `*size`, and detaches it; with no buffer attached, NULL and 0 (as MPICH does). The
/// library never holds messages in the buffer, so this never waits.
///
/// # Safety
/// `buffer_addr` is NULL or points at a writable `void *`; `size` is NULL or points at a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`; MPI passes the address of a `void *` as `void *`.
        let address = unsafe { out(buffer_addr.cast::<*mut c_void>(), "buffer_addr")? };
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        let (buffer, bytes) = with_runtime(|runtime| {
            Ok(runtime
                .attached
                .take()
                .map_or((Address(std::ptr::null_mut()), 0), |attached| *attached))
        })?;
        address.write(buffer.0);
        size.write(bytes);
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("buffered.rs");

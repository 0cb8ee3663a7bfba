// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collectives (SPEC §3.3; MPI-4.0 chapter 6) over the OK ranks of G.

use std::ffi::c_void;
use std::os::raw::{c_int, c_long, c_ulong};
use std::sync::Arc;

use runthrough::{Comm, Op, Rank, Reducible};

use crate::constants::*;
use crate::datatypes::{byte_len, input, op_of, output, Element, IN_PLACE};
use crate::errors::{boundary, out, Failure};
use crate::runtime::{collective_comm_of, with_runtime, Background, Operation};

/// A root argument.
fn root_of(root: c_int) -> Result<Rank, Failure> {
    Rank::try_from(root).map_err(|_| Failure::new(MPI_ERR_ROOT, format!("invalid root {root}")))
}

/// `MPI_Barrier`.
#[no_mangle]
pub extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    boundary(comm, || Ok(collective_comm_of(comm)?.get().barrier()?))
}

/// `MPI_Ibarrier`: the barrier runs on a helper thread (see the header); the request completes
/// when it returns.
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, request: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        let comm_box = collective_comm_of(comm)?;
        let job = Arc::new(Background::default());
        let thread_job = Arc::clone(&job);
        std::thread::Builder::new()
            .name("rt-ibarrier".into())
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    comm_box.get().barrier()
                }))
                .unwrap_or_else(|_| {
                    Err(runthrough::Error::Internal {
                        reason: "the barrier panicked".into(),
                    })
                });
                thread_job.finish(outcome);
            })
            .map_err(|e| Failure::new(MPI_ERR_INTERN, format!("starting a thread: {e}")))?;
        let handle = with_runtime(|runtime| {
            runtime.comm_mut(comm)?.background = Some(Arc::clone(&job));
            Ok(runtime.add_request(Operation::Background(job), comm))
        })?;
        request.write(handle);
        Ok(())
    })
}

/// `MPI_Bcast`.
///
/// # Safety
/// `buffer` is NULL or points at `count` readable and writable elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let len = byte_len(count, datatype)?;
        // SAFETY: forwarded contract; used only during this call.
        let buffer = unsafe { output(buffer, len)? };
        let root = root_of(root)?;
        Ok(collective_comm_of(comm)?.get().broadcast(buffer, root)?)
    })
}

/// The element types of the reductions, as `T` of `comm.reduce` / `all_reduce`.
fn reduce_as<T: Reducible>(
    comm: &Comm,
    send: &[u8],
    recv: Option<&mut [u8]>,
    op: Op,
    root: Option<Rank>,
) -> Result<(), Failure> {
    // Copies: C buffers carry no alignment guarantee for `T` that we could check cheaply.
    let send: Vec<T> = bytemuck::pod_collect_to_vec(send);
    let mut result = vec![T::zeroed(); send.len()];
    match root {
        Some(root) => {
            let at_root = recv.is_some();
            comm.reduce(&send, at_root.then_some(&mut result[..]), op, root)?;
        }
        None => comm.all_reduce(&send, &mut result, op)?,
    }
    if let Some(recv) = recv {
        recv.copy_from_slice(bytemuck::cast_slice(&result));
    }
    Ok(())
}

fn reduce_typed(
    element: Element,
    comm: &Comm,
    send: &[u8],
    recv: Option<&mut [u8]>,
    op: Op,
    root: Option<Rank>,
) -> Result<(), Failure> {
    match element {
        Element::I8 => reduce_as::<i8>(comm, send, recv, op, root),
        Element::U8 => reduce_as::<u8>(comm, send, recv, op, root),
        Element::I16 => reduce_as::<i16>(comm, send, recv, op, root),
        Element::U16 => reduce_as::<u16>(comm, send, recv, op, root),
        Element::I32 => reduce_as::<i32>(comm, send, recv, op, root),
        Element::U32 => reduce_as::<u32>(comm, send, recv, op, root),
        Element::Long => reduce_as::<c_long>(comm, send, recv, op, root),
        Element::UnsignedLong => reduce_as::<c_ulong>(comm, send, recv, op, root),
        Element::I64 => reduce_as::<i64>(comm, send, recv, op, root),
        Element::U64 => reduce_as::<u64>(comm, send, recv, op, root),
        Element::F32 => reduce_as::<f32>(comm, send, recv, op, root),
        Element::F64 => reduce_as::<f64>(comm, send, recv, op, root),
    }
}

/// `MPI_Reduce`; `sendbuf` may be `MPI_IN_PLACE` at the root.
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `count` readable elements of `datatype`;
/// `recvbuf` at the root points at `count` writable (and, with `MPI_IN_PLACE`, readable)
/// elements, and is ignored elsewhere.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let len = byte_len(count, datatype)?;
        let element = Element::of(datatype)?;
        let op = op_of(op)?;
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let recv = if at_root {
            // SAFETY: forwarded contract; used only during this call.
            Some(unsafe { output(recvbuf, len)? })
        } else {
            None
        };
        let send: Vec<u8> = if sendbuf == IN_PLACE && at_root {
            recv.as_deref().map(<[u8]>::to_vec).unwrap_or_default()
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { input(sendbuf, len)? }.to_vec()
        };
        reduce_typed(element, comm, &send, recv, op, Some(root))
    })
}

/// `MPI_Allreduce`; `sendbuf` may be `MPI_IN_PLACE`.
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `count` readable elements of `datatype`;
/// `recvbuf` is NULL or points at `count` writable (and, with `MPI_IN_PLACE`, readable) elements.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let len = byte_len(count, datatype)?;
        let element = Element::of(datatype)?;
        let op = op_of(op)?;
        // SAFETY: forwarded contract; used only during this call.
        let recv = unsafe { output(recvbuf, len)? };
        let send: Vec<u8> = if sendbuf == IN_PLACE {
            recv.to_vec()
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { input(sendbuf, len)? }.to_vec()
        };
        let comm_box = collective_comm_of(comm)?;
        reduce_typed(element, comm_box.get(), &send, Some(recv), op, None)
    })
}

/// The block length in bytes of a gather or scatter, from the side that this rank uses, and a
/// check that the root's two sides agree.
fn block_len(
    count: c_int,
    datatype: c_int,
    other_count: c_int,
    other_datatype: c_int,
    check_other: bool,
) -> Result<usize, Failure> {
    let len = byte_len(count, datatype)?;
    if check_other {
        let other = byte_len(other_count, other_datatype)?;
        if other != len {
            return Err(Failure::new(
                MPI_ERR_COUNT,
                format!("the send block has {len} bytes and the receive block {other}"),
            ));
        }
    }
    Ok(len)
}

/// `MPI_Gather`: the slots of ranks recognized as failed are left untouched; `sendbuf` may be
/// `MPI_IN_PLACE` at the root.
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `sendcount` readable elements of `sendtype`;
/// at the root `recvbuf` points at `size · recvcount` writable elements of `recvtype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && sendbuf == IN_PLACE;
        let block = if in_place {
            byte_len(recvcount, recvtype)?
        } else {
            block_len(sendcount, sendtype, recvcount, recvtype, at_root)?
        };
        let recv = if at_root {
            let total = block
                .checked_mul(comm.size() as usize)
                .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
            // SAFETY: forwarded contract; used only during this call.
            Some(unsafe { output(recvbuf, total)? })
        } else {
            None
        };
        let send: Vec<u8> = match recv.as_deref() {
            Some(recv) if in_place => {
                let at = root as usize * block;
                recv[at..at + block].to_vec()
            }
            _ => {
                // SAFETY: forwarded contract; used only during this call.
                unsafe { input(sendbuf, block)? }.to_vec()
            }
        };
        Ok(comm.gather(&send, recv, root)?)
    })
}

/// `MPI_Scatter`: ranks recognized as failed get nothing; `recvbuf` may be `MPI_IN_PLACE` at
/// the root.
///
/// # Safety
/// At the root `sendbuf` points at `size · sendcount` readable elements of `sendtype`;
/// `recvbuf` is NULL, `MPI_IN_PLACE` (at the root) or points at `recvcount` writable elements of
/// `recvtype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && recvbuf.cast_const() == IN_PLACE;
        let block = if in_place {
            byte_len(sendcount, sendtype)?
        } else {
            block_len(recvcount, recvtype, sendcount, sendtype, at_root)?
        };
        let send = if at_root {
            let total = block
                .checked_mul(comm.size() as usize)
                .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
            // SAFETY: forwarded contract; used only during this call.
            Some(unsafe { input(sendbuf, total)? })
        } else {
            None
        };
        let mut scratch;
        let recv: &mut [u8] = if in_place {
            scratch = vec![0u8; block];
            &mut scratch
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { output(recvbuf, block)? }
        };
        Ok(comm.scatter(send, recv, root)?)
    })
}

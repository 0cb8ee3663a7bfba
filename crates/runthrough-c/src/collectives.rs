// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collectives (semantics §3.3; MPI-4.0 chapter 6) over the OK ranks of G.

use std::ffi::c_void;
use std::os::raw::{c_int, c_long, c_ulong};

use crate::inter_collectives::{self, Sides};
use runthrough::{CollectiveRequest, Comm, Op, PackedOp, Partition, PartitionMut, Rank, Reducible};

use crate::constants::*;
use crate::datatypes::{byte_len, input, op_of, output, zeroed, Element, IN_PLACE};
use crate::derived::{layout_of, type_size, Data, Raw, Unpack};
use crate::errors::{boundary, out, Failure};
use crate::ops::{reduce_user, user_op};
use crate::pairs::{by_packed_op, is_pair, reduce_by_packed_op};
use crate::point_to_point::array;
use crate::rooted::{self, basic, Blocks, Counts, Types};
use crate::runtime::{collective_comm_of, start_scheduled, Discard, Scratch, Started};

/// A root argument.
pub(crate) fn root_of(root: c_int) -> Result<Rank, Failure> {
    Rank::try_from(root).map_err(|_| Failure::new(MPI_ERR_ROOT, format!("invalid root {root}")))
}

/// `MPI_Barrier`. On an intercommunicator (MPI-4.0 §6.3: every member of both groups has
/// entered when any leaves), a barrier over the communicator that spans both groups and numbers
/// group A first (`crate::intercomm`): revoking the intercommunicator revokes that one too, so a
/// barrier waiting on it returns `MPIX_ERR_REVOKED`.
#[no_mangle]
pub extern "C" fn MPI_Barrier(comm: c_int) -> c_int {
    boundary(comm, || barrier(comm))
}

/// [`MPI_Barrier`]'s body.
fn barrier(comm: c_int) -> Result<(), Failure> {
    Ok(spanning(comm)?.get().barrier()?)
}

/// The communicator a collective over all of `comm`'s members runs on: its own, or for an
/// intercommunicator the one that spans both groups and numbers group A first (both groups
/// use that one).
pub(crate) fn spanning(comm: c_int) -> Result<std::sync::Arc<crate::runtime::CommBox>, Failure> {
    if let Some(inter) = crate::intercomm::inter_of(comm)? {
        let mut both = crate::intercomm::backing(comm)?;
        return Ok(if inter.local_first() {
            both.swap_remove(0)
        } else {
            both.swap_remove(1)
        });
    }
    collective_comm_of(comm)
}

/// `MPI_Ibarrier`: [`MPI_Barrier`] as a non-blocking collective, run by the rank's engine
/// (see [`start_or_schedule`]).
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: c_int, request: *mut c_int) -> c_int {
    let scheduled: Scheduled = Box::new(|comm: &'static Comm| Ok(comm.ibarrier().map(plain)?));
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Bcast`; derived datatypes are accepted (packed at the root, unpacked elsewhere).
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
        if let Some(sides) = Sides::of(comm)? {
            // SAFETY: forwarded contract.
            return unsafe { inter_collectives::bcast(&sides, buffer, count, datatype, root) };
        }
        let root = root_of(root)?;
        match Data::of(count, datatype)? {
            Data::Contiguous(len) => {
                // SAFETY: forwarded contract; used only during this call.
                let buffer = unsafe { output(buffer, len)? };
                Ok(collective_comm_of(comm)?.get().broadcast(buffer, root)?)
            }
            Data::Strided {
                layout,
                count,
                window,
            } => {
                // SAFETY: forwarded contract; used only during this call.
                let buffer = unsafe { window.write(buffer)? };
                let comm_box = collective_comm_of(comm)?;
                let comm = comm_box.get();
                let at_root = comm.rank() == root;
                let mut packed = if at_root {
                    layout.pack_at(count, buffer, window.low)?
                } else {
                    zeroed(layout.size * count)?
                };
                comm.broadcast(&mut packed, root)?;
                if !at_root {
                    layout.unpack_at(count, &packed, buffer, window.low);
                }
                Ok(())
            }
        }
    })
}

/// `$body` with `$T` the Rust type of basic element `$element` (an [`Element`]).
macro_rules! as_element {
    ($element:expr, $T:ident => $body:expr) => {
        match $element {
            Element::I8 => {
                type $T = i8;
                $body
            }
            Element::U8 => {
                type $T = u8;
                $body
            }
            Element::I16 => {
                type $T = i16;
                $body
            }
            Element::U16 => {
                type $T = u16;
                $body
            }
            Element::I32 => {
                type $T = i32;
                $body
            }
            Element::U32 => {
                type $T = u32;
                $body
            }
            Element::Long => {
                type $T = c_long;
                $body
            }
            Element::UnsignedLong => {
                type $T = c_ulong;
                $body
            }
            Element::I64 => {
                type $T = i64;
                $body
            }
            Element::U64 => {
                type $T = u64;
                $body
            }
            Element::F32 => {
                type $T = f32;
                $body
            }
            Element::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// Which reduction a call runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reduction {
    /// `MPI_Reduce` to this root.
    Reduce(Rank),
    /// `MPI_Allreduce`.
    All,
    /// `MPI_Scan`.
    Scan,
    /// `MPI_Exscan`: the first participant's `recv` is left as it was.
    Exscan,
}

/// Runs reduction `kind` of packed elements with operation `op` (the one its non-blocking
/// form takes too): `send` in, `recv` out (where significant; for an exclusive scan it holds
/// what the first participant keeps).
///
/// # Errors
/// The runtime's; `MPI_ERR_INTERN` when a reduction that gives every rank a result has no
/// receive buffer.
pub(crate) fn reduce_packed(
    comm: &Comm,
    send: &[u8],
    recv: Option<&mut [u8]>,
    op: PackedOp,
    kind: Reduction,
) -> Result<(), Failure> {
    match (kind, recv) {
        (Reduction::Reduce(root), recv) => comm.reduce_packed(send, recv, op, root)?,
        (Reduction::All, Some(recv)) => comm.all_reduce_packed(send, recv, op)?,
        (Reduction::Scan, Some(recv)) => comm.scan_packed(send, recv, op, false)?,
        (Reduction::Exscan, Some(recv)) => comm.scan_packed(send, recv, op, true)?,
        (_, None) => return Err(Failure::new(MPI_ERR_INTERN, "no receive buffer")),
    }
    Ok(())
}

/// The element types of the reductions, as `T` of `comm.reduce` / `all_reduce` / `scan` /
/// `exscan`.
fn reduce_as<T: Reducible>(
    comm: &Comm,
    send: &[u8],
    recv: Option<&mut [u8]>,
    op: Op,
    kind: Reduction,
) -> Result<(), Failure> {
    // Copies: C buffers carry no alignment guarantee for `T` that we could check cheaply.
    let send: Vec<T> = bytemuck::pod_collect_to_vec(send);
    let mut result = match (&recv, kind) {
        // What exscan leaves untouched (at the first participant) must stay as it was.
        (Some(recv), Reduction::Exscan) => bytemuck::pod_collect_to_vec(recv),
        _ => vec![T::zeroed(); send.len()],
    };
    match kind {
        Reduction::Reduce(root) => {
            let at_root = recv.is_some();
            comm.reduce(&send, at_root.then_some(&mut result[..]), op, root)?;
        }
        Reduction::All => comm.all_reduce(&send, &mut result, op)?,
        Reduction::Scan => comm.scan(&send, &mut result, op)?,
        Reduction::Exscan => comm.exscan(&send, &mut result, op)?,
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
    kind: Reduction,
) -> Result<(), Failure> {
    check_op_on(element, op)?;
    as_element!(element, T => reduce_as::<T>(comm, send, recv, op, kind))
}

/// `MPI_ERR_OP` for a bitwise operation on a floating-point type. Checked before any
/// communication, so that every rank reports the class MPI gives it (the runtime's check
/// would say `MPI_ERR_ARG`).
fn check_op_on(element: Element, op: Op) -> Result<(), Failure> {
    let bitwise = matches!(op, Op::BitAnd | Op::BitOr | Op::BitXor);
    if bitwise && matches!(element, Element::F32 | Element::F64) {
        return Err(Failure::new(
            MPI_ERR_OP,
            "a bitwise operation (MPI_BAND, MPI_BOR, MPI_BXOR) does not apply to a \
             floating-point type",
        ));
    }
    Ok(())
}

/// `inout = input op inout` for `T` elements (copies: C buffers carry no alignment guarantee).
fn combine_local<T: Reducible>(op: Op, input: &[u8], inout: &mut [u8]) {
    let input: Vec<T> = bytemuck::pod_collect_to_vec(input);
    let mut result: Vec<T> = bytemuck::pod_collect_to_vec(inout);
    T::combine(op, &input, &mut result);
    inout.copy_from_slice(bytemuck::cast_slice(&result));
}

/// `MPI_Reduce_local` (MPI-4.0 §6.9.7): `inoutbuf = inbuf op inoutbuf`, element by element, on
/// this rank alone (no communication, so no failure semantics). A user operation
/// (`MPI_Op_create`) is called on the two buffers as they are, on any datatype; a predefined
/// one takes the basic datatypes (`MPI_ERR_TYPE` for a derived or pair type here).
///
/// # Safety
/// `inbuf` points at `count` readable and `inoutbuf` at `count` readable and writable elements
/// of `datatype` (NULL only when `count` is 0).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(MPI_COMM_WORLD, || unsafe {
        reduce_local(inbuf, inoutbuf, count, datatype, op)
    })
}

/// [`MPI_Reduce_local`]'s body (also what an intercommunicator's reductions combine with).
///
/// # Safety
/// As `MPI_Reduce_local`.
pub(crate) unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
) -> Result<(), Failure> {
    if count < 0 {
        return Err(Failure::new(
            MPI_ERR_COUNT,
            format!("negative count {count}"),
        ));
    }
    if let Some(user) = user_op(op)? {
        let len = crate::derived::type_size(datatype)?
            .checked_mul(count as usize)
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the buffers are too large"))?;
        if len > 0 && (inbuf.is_null() || inoutbuf.is_null()) {
            return Err(Failure::new(MPI_ERR_BUFFER, "a NULL buffer with data"));
        }
        let (mut len, mut datatype) = (count, datatype);
        if len > 0 {
            // SAFETY: `function` is an `MPI_User_function` (MPI_Op_create's contract); the
            // buffers are the caller's, of `count` elements of `datatype` each (this call's
            // contract), valid for the call; no lock of the library is held.
            unsafe { (user.function)(inbuf.cast_mut(), inoutbuf, &mut len, &mut datatype) };
        }
        return Ok(());
    }
    if let Some(wide) = crate::wide::Wide::of(datatype) {
        let len = count as usize * wide.size();
        // SAFETY: forwarded contract; used only during this call.
        let input = unsafe { input(inbuf, len)? }.to_vec();
        // SAFETY: forwarded contract; used only during this call.
        let inout = unsafe { output(inoutbuf, len)? };
        return wide.combine(op, &input, inout);
    }
    let op = op_of(op)?;
    if !basic(datatype) || is_pair(datatype) {
        return Err(Failure::new(
            MPI_ERR_TYPE,
            "MPI_Reduce_local: a predefined operation takes a basic datatype here",
        ));
    }
    let element = Element::of(datatype)?;
    if matches!(op, Op::BitAnd | Op::BitOr | Op::BitXor)
        && matches!(element, Element::F32 | Element::F64)
    {
        return Err(Failure::new(
            MPI_ERR_OP,
            "a bitwise operation (MPI_BAND, MPI_BOR, MPI_BXOR) does not apply to a \
             floating-point type",
        ));
    }
    let len = byte_len(count, datatype)?;
    // SAFETY: forwarded contract; used only during this call.
    let input = unsafe { input(inbuf, len)? }.to_vec();
    // SAFETY: forwarded contract; used only during this call.
    let inout = unsafe { output(inoutbuf, len)? };
    match element {
        Element::I8 => combine_local::<i8>(op, &input, inout),
        Element::U8 => combine_local::<u8>(op, &input, inout),
        Element::I16 => combine_local::<i16>(op, &input, inout),
        Element::U16 => combine_local::<u16>(op, &input, inout),
        Element::I32 => combine_local::<i32>(op, &input, inout),
        Element::U32 => combine_local::<u32>(op, &input, inout),
        Element::Long => combine_local::<c_long>(op, &input, inout),
        Element::UnsignedLong => combine_local::<c_ulong>(op, &input, inout),
        Element::I64 => combine_local::<i64>(op, &input, inout),
        Element::U64 => combine_local::<u64>(op, &input, inout),
        Element::F32 => combine_local::<f32>(op, &input, inout),
        Element::F64 => combine_local::<f64>(op, &input, inout),
    }
    Ok(())
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
        if let Some(sides) = Sides::of(comm)? {
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::reduce(&sides, sendbuf, recvbuf, count, datatype, op, root)
            };
        }
        let root = root_of(root)?;
        if by_packed_op(datatype) && user_op(op)?.is_none() {
            // SAFETY: forwarded contract.
            return unsafe {
                reduce_by_packed_op(
                    sendbuf,
                    recvbuf,
                    count,
                    datatype,
                    op,
                    comm,
                    Reduction::Reduce(root),
                )
            };
        }
        if !basic(datatype) || user_op(op)?.is_some() {
            // SAFETY: forwarded contract.
            return unsafe {
                reduce_derived(
                    sendbuf,
                    recvbuf,
                    count,
                    datatype,
                    op,
                    comm,
                    Reduction::Reduce(root),
                )
            };
        }
        let len = byte_len(count, datatype)?;
        let element = Element::of(datatype)?;
        let op = op_of(op)?;
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
        reduce_typed(element, comm, &send, recv, op, Reduction::Reduce(root))
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
    match Sides::of(comm) {
        Ok(Some(sides)) => boundary(comm, || {
            // SAFETY: forwarded contract.
            unsafe { inter_collectives::all_reduce(&sides, sendbuf, recvbuf, count, datatype, op) }
        }),
        // SAFETY: forwarded contract.
        _ => unsafe { everywhere(sendbuf, recvbuf, count, datatype, op, comm, Reduction::All) },
    }
}

/// `MPI_Scan` (MPI-4.0 §6.11.1): the combination of `sendbuf` over the participants of rank up
/// to this one; ranks recognized as failed contribute nothing (docs/src/semantics.md §3.3).
/// `sendbuf` may be `MPI_IN_PLACE`.
///
/// # Safety
/// As `MPI_Allreduce`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { everywhere(sendbuf, recvbuf, count, datatype, op, comm, Reduction::Scan) }
}

/// `MPI_Exscan` (MPI-4.0 §6.11.2): the combination over the participants of rank below this
/// one; at the first participant `recvbuf` is left as it was. `sendbuf` may be `MPI_IN_PLACE`.
///
/// # Safety
/// As `MPI_Allreduce`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        everywhere(
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            comm,
            Reduction::Exscan,
        )
    }
}

/// A reduction of a derived datatype made of one basic type (`MPI_Type_contiguous(3,
/// MPI_DOUBLE)`, a vector of ints, ...) with a predefined operation, or of any datatype with a
/// user operation (`MPI_Op_create`, see `crate::ops`): the data is packed, reduced element by
/// element (as that basic type, or by the user's function), and unpacked; the gaps of the
/// receive buffer are left as they were.
///
/// # Errors
/// `MPI_ERR_TYPE` for a type that mixes basic types with a predefined operation (or is
/// invalid, freed, not committed); the errors of the basic reductions.
///
/// # Safety
/// As `MPI_Reduce` / `MPI_Allreduce`, with `count` elements of `datatype` in each buffer.
unsafe fn reduce_derived(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    kind: Reduction,
) -> Result<(), Failure> {
    let layout = layout_of(datatype, true)?;
    let combine = match user_op(op)? {
        Some(user) => Err(user),
        None => {
            let element = layout.element.ok_or_else(|| mixed_type(datatype))?;
            Ok((element, op_of(op)?))
        }
    };
    let count = usize::try_from(count)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
    let window = layout.window(count)?;
    let comm_box = collective_comm_of(comm)?;
    let comm = comm_box.get();
    let significant = match kind {
        Reduction::Reduce(root) => comm.rank() == root,
        _ => true,
    };
    let recv = if significant {
        // SAFETY: forwarded contract; used only during this call.
        Some(unsafe { window.write(recvbuf)? })
    } else {
        None
    };
    let send = match recv {
        Some(recv) if sendbuf == IN_PLACE => layout.pack_at(count, recv, window.low)?,
        // SAFETY: forwarded contract; used only during this call.
        _ => layout.pack_at(count, unsafe { window.read(sendbuf)? }, window.low)?,
    };
    // What exscan leaves untouched (at the first participant) is the buffer's own data.
    let mut result = match recv {
        Some(recv) => layout.pack_at(count, recv, window.low)?,
        None => Vec::new(),
    };
    let out = recv.is_some().then_some(&mut result[..]);
    match combine {
        Ok((element, op)) => reduce_typed(element, comm, &send, out, op, kind)?,
        Err(user) => reduce_user(user, datatype, comm, &send, out, kind)?,
    }
    if let Some(recv) = recv {
        layout.unpack_at(count, &result, recv, window.low);
    }
    Ok(())
}

/// The reductions with a result at every rank (all-reduce, scan, exscan).
///
/// # Safety
/// As `MPI_Allreduce`.
unsafe fn everywhere(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    kind: Reduction,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || unsafe {
        reduce_everywhere(sendbuf, recvbuf, count, datatype, op, comm, kind)
    })
}

/// The body of [`everywhere`], without the boundary (for the reduce-scatters too).
///
/// # Safety
/// As `MPI_Allreduce`.
unsafe fn reduce_everywhere(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    kind: Reduction,
) -> Result<(), Failure> {
    let user = user_op(op)?.is_some();
    if by_packed_op(datatype) && !user {
        // SAFETY: forwarded contract.
        return unsafe { reduce_by_packed_op(sendbuf, recvbuf, count, datatype, op, comm, kind) };
    }
    if !basic(datatype) || user {
        // SAFETY: forwarded contract.
        return unsafe { reduce_derived(sendbuf, recvbuf, count, datatype, op, comm, kind) };
    }
    let len = byte_len(count, datatype)?;
    let element = Element::of(datatype)?;
    let op = op_of(op)?;
    let comm_box = collective_comm_of(comm)?;
    // At rank 0 of an exclusive scan MPI does not look at the receive buffer: it may be NULL.
    let mut discard;
    let recv =
        if recvbuf.is_null() && matches!(kind, Reduction::Exscan) && comm_box.get().rank() == 0 {
            discard = zeroed(len)?;
            &mut discard[..]
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { output(recvbuf, len)? }
        };
    let send: Vec<u8> = if sendbuf == IN_PLACE {
        recv.to_vec()
    } else {
        // SAFETY: forwarded contract; used only during this call.
        unsafe { input(sendbuf, len)? }.to_vec()
    };
    reduce_typed(element, comm_box.get(), &send, Some(recv), op, kind)
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

/// The block length of a gather-like call ([`block_len`]) whose own side, `(count, datatype)`,
/// may be `MPI_IN_PLACE`: then the other side alone gives it.
fn block_or_in_place(
    in_place: bool,
    (count, datatype): (c_int, c_int),
    (other_count, other_datatype): (c_int, c_int),
    check_other: bool,
) -> Result<usize, Failure> {
    if in_place {
        byte_len(other_count, other_datatype)
    } else {
        block_len(count, datatype, other_count, other_datatype, check_other)
    }
}

/// The length of a buffer of one `block` per rank of `comm`.
fn all_blocks(block: usize, comm: &runthrough::Comm) -> Result<usize, Failure> {
    block
        .checked_mul(comm.size() as usize)
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))
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
        if let Some(sides) = Sides::of(comm)? {
            let blocks = (root == MPI_ROOT)
                .then(|| inter_collectives::uniform(recvcount, sides.remote_size()));
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::gather(
                    &sides, sendbuf, sendcount, sendtype, recvbuf, blocks, recvtype, root,
                )
            };
        }
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && sendbuf == IN_PLACE;
        if (!in_place && !basic(sendtype)) || (at_root && !basic(recvtype)) {
            let n = comm.size() as usize;
            let counts = vec![recvcount; n];
            let displs = (0..n)
                .map(|r| {
                    c_int::try_from(r)
                        .ok()
                        .and_then(|r| r.checked_mul(recvcount))
                })
                .collect::<Option<Vec<c_int>>>()
                .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
            let layout = at_root.then_some((&counts[..], &displs[..]));
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::gather(
                    sendbuf, sendcount, sendtype, recvbuf, layout, recvtype, root, comm, false,
                )
            };
        }
        let block = block_or_in_place(
            in_place,
            (sendcount, sendtype),
            (recvcount, recvtype),
            at_root,
        )?;
        let recv = if at_root {
            let total = all_blocks(block, comm)?;
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
        if let Some(sides) = Sides::of(comm)? {
            let blocks = (root == MPI_ROOT)
                .then(|| inter_collectives::uniform(sendcount, sides.remote_size()));
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::scatter(
                    &sides, sendbuf, blocks, sendtype, recvbuf, recvcount, recvtype, root,
                )
            };
        }
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && recvbuf.cast_const() == IN_PLACE;
        if (at_root && !basic(sendtype)) || (!in_place && !basic(recvtype)) {
            let n = comm.size() as usize;
            let counts = vec![sendcount; n];
            let displs = (0..n)
                .map(|r| {
                    c_int::try_from(r)
                        .ok()
                        .and_then(|r| r.checked_mul(sendcount))
                })
                .collect::<Option<Vec<c_int>>>()
                .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
            let layout = at_root.then_some((&counts[..], &displs[..]));
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::scatter(
                    sendbuf, layout, sendtype, recvbuf, recvcount, recvtype, root, comm, false,
                )
            };
        }
        let block = block_or_in_place(
            in_place,
            (recvcount, recvtype),
            (sendcount, sendtype),
            at_root,
        )?;
        let send = if at_root {
            let total = all_blocks(block, comm)?;
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

/// The blocks of a v-collective's root (`counts`, `displs` in elements of `datatype`), in
/// bytes: each rank's count and displacement, and the length of buffer they span.
///
/// # Safety
/// `counts` and `displs` are NULL or point at `size` readable ints.
///
/// # Errors
/// `MPI_ERR_ARG` for a NULL array (with `size > 0`) or a negative displacement (the callers
/// take those to the packing path first: [`negative`]); `MPI_ERR_COUNT`, `MPI_ERR_TYPE` as
/// `byte_len`.
unsafe fn blocks_of(
    counts: *const c_int,
    displs: *const c_int,
    size: u32,
    datatype: c_int,
    what: &str,
) -> Result<(Vec<usize>, Vec<usize>, usize), Failure> {
    let n = c_int::try_from(size).map_err(|_| Failure::new(MPI_ERR_COMM, "too many ranks"))?;
    // SAFETY: forwarded contract; only read, during this call.
    let counts = unsafe { array(counts.cast_mut(), n, what)? }.to_vec();
    // SAFETY: forwarded contract; only read, during this call.
    let displs = unsafe { array(displs.cast_mut(), n, "displs")? }.to_vec();
    let element = byte_len(1, datatype)?;
    let mut byte_counts = Vec::with_capacity(counts.len());
    let mut byte_displs = Vec::with_capacity(counts.len());
    let mut end = 0usize;
    for (rank, (&count, &displ)) in counts.iter().zip(&displs).enumerate() {
        let count = byte_len(count, datatype)?;
        let at = usize::try_from(displ)
            .ok()
            .and_then(|d| d.checked_mul(element))
            .ok_or_else(|| {
                Failure::new(
                    MPI_ERR_ARG,
                    format!("displacement {displ} of rank {rank}: only displacements >= 0 are supported"),
                )
            })?;
        let block_end = at
            .checked_add(count)
            .filter(|&e| e <= isize::MAX as usize)
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
        end = end.max(block_end);
        byte_counts.push(count);
        byte_displs.push(at);
    }
    Ok((byte_counts, byte_displs, end))
}

/// Whether displacements array `displs` (NULL: no) has a negative entry: such a block lies
/// before the buffer pointer, which only the packing path (`rooted`) handles.
///
/// # Safety
/// `displs` is NULL or points at `size` readable ints.
unsafe fn negative(displs: *const c_int, size: u32) -> bool {
    // SAFETY: not NULL, and by the contract above `size` readable ints.
    !displs.is_null()
        && unsafe { std::slice::from_raw_parts(displs, size as usize) }
            .iter()
            .any(|&displ| displ < 0)
}

/// A v-collective root's counts and displacements.
type RootArrays = (Vec<c_int>, Vec<c_int>);

/// The counts and displacements of a v-collective's root (`None` elsewhere).
///
/// # Safety
/// At the root, `counts` and `displs` are NULL or point at `size` readable ints.
unsafe fn root_arrays(
    at_root: bool,
    counts: *const c_int,
    displs: *const c_int,
    comm: &Comm,
    what: &str,
) -> Result<Option<RootArrays>, Failure> {
    if !at_root {
        return Ok(None);
    }
    let n =
        c_int::try_from(comm.size()).map_err(|_| Failure::new(MPI_ERR_COMM, "too many ranks"))?;
    // SAFETY: forwarded contract; only read, during this call.
    let counts = unsafe { array(counts.cast_mut(), n, what)? }.to_vec();
    // SAFETY: forwarded contract; only read, during this call.
    let displs = unsafe { array(displs.cast_mut(), n, "displs")? }.to_vec();
    Ok(Some((counts, displs)))
}

/// `MPI_Gatherv` (MPI-4.0 §6.5), on the runtime's gather of variable counts: rank r's block
/// goes to `recvbuf + displs[r]` at the root; the blocks of ranks recognized as failed are left
/// untouched; `sendbuf` may be `MPI_IN_PLACE` at the root (its block is already in place).
/// Displacements may be negative (blocks before the buffer pointer).
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` (at the root) or points at `sendcount` readable elements of
/// `sendtype`; at the root `recvcounts` and `displs` point at `size` readable ints and
/// `recvbuf` at the blocks they describe, writable; all three are ignored elsewhere.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            // SAFETY: forwarded contract.
            let blocks = unsafe {
                inter_collectives::root_arrays(
                    root,
                    recvcounts,
                    displs,
                    sides.remote_size(),
                    ("recvcounts", "displs"),
                )?
            };
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::gather(
                    &sides, sendbuf, sendcount, sendtype, recvbuf, blocks, recvtype, root,
                )
            };
        }
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && sendbuf == IN_PLACE;
        // SAFETY: forwarded contract (the root reads its displacements).
        let negative = at_root && unsafe { negative(displs, comm.size()) };
        if (!in_place && !basic(sendtype)) || (at_root && !basic(recvtype)) || negative {
            // SAFETY: forwarded contract.
            let arrays = unsafe { root_arrays(at_root, recvcounts, displs, comm, "recvcounts")? };
            let layout = arrays.as_ref().map(|(c, d)| (&c[..], &d[..]));
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::gather(
                    sendbuf, sendcount, sendtype, recvbuf, layout, recvtype, root, comm, true,
                )
            };
        }
        let layout = if at_root {
            // SAFETY: forwarded contract.
            Some(unsafe { blocks_of(recvcounts, displs, comm.size(), recvtype, "recvcounts")? })
        } else {
            None
        };
        let recv = match &layout {
            // SAFETY: forwarded contract; used only during this call.
            Some((_, _, end)) => Some(unsafe { output(recvbuf, *end)? }),
            None => None,
        };
        let send: Vec<u8> = match (&layout, recv.as_deref()) {
            (Some((counts, displs, _)), Some(recv)) if in_place => {
                let me = root as usize;
                recv[displs[me]..displs[me] + counts[me]].to_vec()
            }
            _ => {
                let len = byte_len(sendcount, sendtype)?;
                // SAFETY: forwarded contract; used only during this call.
                unsafe { input(sendbuf, len)? }.to_vec()
            }
        };
        let recv = match (layout, recv) {
            (Some((counts, displs, _)), Some(recv)) => {
                Some(PartitionMut::new(recv, &counts, &displs))
            }
            _ => None,
        };
        Ok(comm.gather_varcount(&send, recv, root)?)
    })
}

/// `MPI_Scatterv` (MPI-4.0 §6.6), on the runtime's scatter of variable counts: rank r gets the
/// block at `sendbuf + displs[r]` of the root; ranks recognized as failed get nothing;
/// `recvbuf` may be `MPI_IN_PLACE` at the root. Displacements may be negative.
///
/// # Safety
/// At the root `sendcounts` and `displs` point at `size` readable ints and `sendbuf` at the
/// blocks they describe (all three are ignored elsewhere); `recvbuf` is NULL, `MPI_IN_PLACE`
/// (at the root) or points at `recvcount` writable elements of `recvtype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            // SAFETY: forwarded contract.
            let blocks = unsafe {
                inter_collectives::root_arrays(
                    root,
                    sendcounts,
                    displs,
                    sides.remote_size(),
                    ("sendcounts", "displs"),
                )?
            };
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::scatter(
                    &sides, sendbuf, blocks, sendtype, recvbuf, recvcount, recvtype, root,
                )
            };
        }
        let root = root_of(root)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let at_root = comm.rank() == root;
        let in_place = at_root && recvbuf.cast_const() == IN_PLACE;
        // SAFETY: forwarded contract (the root reads its displacements).
        let negative = at_root && unsafe { negative(displs, comm.size()) };
        if (at_root && !basic(sendtype)) || (!in_place && !basic(recvtype)) || negative {
            // SAFETY: forwarded contract.
            let arrays = unsafe { root_arrays(at_root, sendcounts, displs, comm, "sendcounts")? };
            let layout = arrays.as_ref().map(|(c, d)| (&c[..], &d[..]));
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::scatter(
                    sendbuf, layout, sendtype, recvbuf, recvcount, recvtype, root, comm, true,
                )
            };
        }
        let layout = if at_root {
            // SAFETY: forwarded contract.
            Some(unsafe { blocks_of(sendcounts, displs, comm.size(), sendtype, "sendcounts")? })
        } else {
            None
        };
        let send = match &layout {
            // SAFETY: forwarded contract; used only during this call.
            Some((counts, displs, end)) => Some(Partition::new(
                unsafe { input(sendbuf, *end)? },
                counts,
                displs,
            )),
            None => None,
        };
        let mut scratch;
        let recv: &mut [u8] = match &layout {
            Some((counts, _, _)) if in_place => {
                scratch = vec![0u8; counts[root as usize]];
                &mut scratch
            }
            _ => {
                let len = byte_len(recvcount, recvtype)?;
                // SAFETY: forwarded contract; used only during this call.
                unsafe { output(recvbuf, len)? }
            }
        };
        Ok(comm.scatter_varcount(send, recv, root)?)
    })
}

/// `MPI_Allgather` (MPI-4.0 §6.7): every participant's block at every participant, rank r's at
/// `recvbuf + r·recvcount`; the slots of ranks recognized as failed are left untouched;
/// `sendbuf` may be `MPI_IN_PLACE` (each rank's block is already in its slot).
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `sendcount` readable elements of `sendtype`;
/// `recvbuf` is NULL or points at `size · recvcount` writable elements of `recvtype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            let (counts, displs) = inter_collectives::uniform(recvcount, sides.remote_size());
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::all_gather(
                    &sides,
                    sendbuf,
                    sendcount,
                    sendtype,
                    recvbuf,
                    (&counts, &displs),
                    recvtype,
                )
            };
        }
        let in_place = sendbuf == IN_PLACE;
        if !basic(recvtype) || (!in_place && !basic(sendtype)) {
            let comm_box = collective_comm_of(comm)?;
            let comm = comm_box.get();
            let n = comm.size() as usize;
            let counts = vec![recvcount; n];
            let displs = (0..n)
                .map(|r| {
                    c_int::try_from(r)
                        .ok()
                        .and_then(|r| r.checked_mul(recvcount))
                })
                .collect::<Option<Vec<c_int>>>()
                .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::all_gather(
                    sendbuf, sendcount, sendtype, recvbuf, &counts, &displs, recvtype, comm, false,
                )
            };
        }
        let block =
            block_or_in_place(in_place, (sendcount, sendtype), (recvcount, recvtype), true)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let total = all_blocks(block, comm)?;
        // SAFETY: forwarded contract; used only during this call.
        let recv = unsafe { output(recvbuf, total)? };
        let send: Vec<u8> = if in_place {
            let at = comm.rank() as usize * block;
            recv[at..at + block].to_vec()
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { input(sendbuf, block)? }.to_vec()
        };
        Ok(comm.all_gather(&send, recv)?)
    })
}

/// `MPI_Alltoall` (MPI-4.0 §6.8): block r of `sendbuf` goes to rank r, the block from rank r
/// lands at `recvbuf + r·recvcount`; blocks for and from ranks recognized as failed are neither
/// sent nor written; `sendbuf` may be `MPI_IN_PLACE` (the blocks to send are in `recvbuf`).
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `size · sendcount` readable elements of
/// `sendtype`; `recvbuf` is NULL or points at `size · recvcount` writable elements of
/// `recvtype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            let n = sides.remote_size();
            let (send, recv) = (
                inter_collectives::uniform(sendcount, n),
                inter_collectives::uniform(recvcount, n),
            );
            let send = inter_collectives::typed_blocks(&send.0, &send.1, sendtype)?;
            let recv = inter_collectives::typed_blocks(&recv.0, &recv.1, recvtype)?;
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::all_to_all(&sides, sendbuf, &send, recvbuf, &recv)
            };
        }
        let in_place = sendbuf == IN_PLACE;
        if !basic(recvtype) || (!in_place && !basic(sendtype)) {
            let comm_box = collective_comm_of(comm)?;
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::all_to_all(
                    sendbuf,
                    sendcount,
                    sendtype,
                    recvbuf,
                    recvcount,
                    recvtype,
                    comm_box.get(),
                )
            };
        }
        let block =
            block_or_in_place(in_place, (sendcount, sendtype), (recvcount, recvtype), true)?;
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let total = all_blocks(block, comm)?;
        // SAFETY: forwarded contract; used only during this call.
        let recv = unsafe { output(recvbuf, total)? };
        let send: Vec<u8> = if in_place {
            recv.to_vec()
        } else {
            // SAFETY: forwarded contract; used only during this call.
            unsafe { input(sendbuf, total)? }.to_vec()
        };
        Ok(comm.all_to_all(&send, recv)?)
    })
}

/// `MPI_Allgatherv` (MPI-4.0 §6.7): rank r's block lands at `recvbuf + displs[r]` at every
/// participant; the blocks of ranks recognized as failed are left untouched; `sendbuf` may be
/// `MPI_IN_PLACE` (each rank's block is already in place). On the runtime's all-gather, each
/// block padded to the largest count. Displacements may be negative.
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `sendcount` readable elements of `sendtype`;
/// `recvcounts` and `displs` point at `size` readable ints and `recvbuf` at the blocks they
/// describe, writable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            // SAFETY: forwarded contract.
            let (counts, displs) = unsafe {
                inter_collectives::arrays(
                    recvcounts,
                    displs,
                    sides.remote_size(),
                    ("recvcounts", "displs"),
                )?
            };
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::all_gather(
                    &sides,
                    sendbuf,
                    sendcount,
                    sendtype,
                    recvbuf,
                    (&counts, &displs),
                    recvtype,
                )
            };
        }
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        // SAFETY: forwarded contract.
        let negative = unsafe { negative(displs, comm.size()) };
        if !basic(recvtype) || (sendbuf != IN_PLACE && !basic(sendtype)) || negative {
            // SAFETY: forwarded contract.
            let arrays = unsafe { root_arrays(true, recvcounts, displs, comm, "recvcounts")? };
            let (counts, displs) = arrays.unwrap_or_default();
            // SAFETY: forwarded contract.
            return unsafe {
                rooted::all_gather(
                    sendbuf, sendcount, sendtype, recvbuf, &counts, &displs, recvtype, comm, true,
                )
            };
        }
        // SAFETY: forwarded contract.
        let (counts, displs, end) =
            unsafe { blocks_of(recvcounts, displs, comm.size(), recvtype, "recvcounts")? };
        // SAFETY: forwarded contract; used only during this call.
        let recv = unsafe { output(recvbuf, end)? };
        let me = comm.rank() as usize;
        let mut send: Vec<u8> = if sendbuf == IN_PLACE {
            recv[displs[me]..displs[me] + counts[me]].to_vec()
        } else {
            let len = byte_len(sendcount, sendtype)?;
            if len != counts[me] {
                return Err(Failure::new(
                    MPI_ERR_COUNT,
                    format!(
                        "the send block has {len} bytes and this rank's receive block {}",
                        counts[me]
                    ),
                ));
            }
            // SAFETY: forwarded contract; used only during this call.
            unsafe { input(sendbuf, len)? }.to_vec()
        };
        let block = counts.iter().copied().max().unwrap_or(0);
        let total = all_blocks(block, comm)?;
        // The receive buffer's own contents first, so that a slot the all-gather leaves
        // untouched (a failed rank's) is written back unchanged.
        let mut gathered = zeroed(total)?;
        for (r, (&count, &at)) in counts.iter().zip(&displs).enumerate() {
            gathered[r * block..r * block + count].copy_from_slice(&recv[at..at + count]);
        }
        send.resize(block, 0);
        comm.all_gather(&send, &mut gathered)?;
        for (r, (&count, &at)) in counts.iter().zip(&displs).enumerate() {
            recv[at..at + count].copy_from_slice(&gathered[r * block..r * block + count]);
        }
        Ok(())
    })
}

/// `MPI_Alltoallv` (MPI-4.0 §6.8): the block at `sendbuf + sdispls[r]` goes to rank r, the one
/// from rank r lands at `recvbuf + rdispls[r]`; blocks for and from ranks recognized as failed
/// are neither sent nor written; `sendbuf` may be `MPI_IN_PLACE` (the blocks to send are in
/// `recvbuf`, as `recvcounts` / `rdispls` describe them). Two collectives of the runtime: an
/// all-reduce of the largest block, then an all-to-all of blocks padded to it, each with its
/// length, so that a block whose length differs from the receive count is reported
/// (`MPI_ERR_COUNT`). Displacements may be negative.
///
/// # Safety
/// The count and displacement arrays point at `size` readable ints; `sendbuf` is
/// `MPI_IN_PLACE` or points at the blocks `sendcounts` and `sdispls` describe, readable;
/// `recvbuf` points at those of `recvcounts` and `rdispls`, writable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            let n = sides.remote_size();
            // SAFETY: forwarded contract.
            let (send, recv) = unsafe {
                (
                    inter_collectives::arrays(sendcounts, sdispls, n, ("sendcounts", "sdispls"))?,
                    inter_collectives::arrays(recvcounts, rdispls, n, ("recvcounts", "rdispls"))?,
                )
            };
            let send = inter_collectives::typed_blocks(&send.0, &send.1, sendtype)?;
            let recv = inter_collectives::typed_blocks(&recv.0, &recv.1, recvtype)?;
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::all_to_all(&sides, sendbuf, &send, recvbuf, &recv)
            };
        }
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        // Any datatype: the blocks are packed (a plain copy for the basic types) and unpacked.
        // SAFETY: forwarded contract.
        let arrays = unsafe { root_arrays(true, recvcounts, rdispls, comm, "recvcounts")? };
        let (counts, displs) = arrays.unwrap_or_default();
        let receiving = Blocks::new(&counts, &displs, recvtype)?;
        let sending = if sendbuf == IN_PLACE {
            None
        } else {
            // SAFETY: forwarded contract.
            let arrays = unsafe { root_arrays(true, sendcounts, sdispls, comm, "sendcounts")? };
            let (counts, displs) = arrays.unwrap_or_default();
            Some(Blocks::new(&counts, &displs, sendtype)?)
        };
        // SAFETY: forwarded contract.
        unsafe { exchange_blocks(comm, sendbuf, sending, recvbuf, &receiving) }
    })
}

/// `MPI_Alltoallw` (MPI-4.0 §6.8): as [`MPI_Alltoallv`], but each block has its own datatype
/// (`sendtypes[r]`, `recvtypes[r]`) and its displacement counts bytes, not extents. A buffer
/// may be `MPI_BOTTOM` (NULL) when the types place the data at absolute addresses (struct
/// types whose displacements are `MPI_Get_address` results); `sendbuf` may be
/// `MPI_IN_PLACE`. A block's data must match, byte for byte of its packed form, what its
/// receiver expects (`MPI_ERR_COUNT` otherwise); the failure rules are those of
/// `MPI_Alltoallv`.
///
/// # Safety
/// The count, displacement and type arrays point at `size` readable ints; `sendbuf` is
/// `MPI_IN_PLACE` or its blocks are readable, those of `recvbuf` writable, where the counts,
/// displacements and types place them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        if let Some(sides) = Sides::of(comm)? {
            let n = sides.remote_size();
            // SAFETY: forwarded contract.
            let (send, recv) = unsafe {
                (
                    inter_collectives::byte_blocks(sendcounts, sdispls, sendtypes, n)?,
                    inter_collectives::byte_blocks(recvcounts, rdispls, recvtypes, n)?,
                )
            };
            // SAFETY: forwarded contract.
            return unsafe {
                inter_collectives::all_to_all(&sides, sendbuf, &send, recvbuf, &recv)
            };
        }
        let comm_box = collective_comm_of(comm)?;
        let comm = comm_box.get();
        let n = c_int::try_from(comm.size())
            .map_err(|_| Failure::new(MPI_ERR_COMM, "too many ranks"))?;
        // SAFETY: forwarded contract; only read, during this call.
        let read =
            |pointer: *const c_int, what: &str| unsafe { array(pointer.cast_mut(), n, what) };
        let receiving = Blocks::typed(
            read(recvcounts, "recvcounts")?,
            read(rdispls, "rdispls")?,
            read(recvtypes, "recvtypes")?,
        )?;
        let sending = if sendbuf == IN_PLACE {
            None
        } else {
            Some(Blocks::typed(
                read(sendcounts, "sendcounts")?,
                read(sdispls, "sdispls")?,
                read(sendtypes, "sendtypes")?,
            )?)
        };
        // SAFETY: forwarded contract.
        unsafe { exchange_blocks(comm, sendbuf, sending, recvbuf, &receiving) }
    })
}

/// The all-to-all of `MPI_Alltoallv` and `MPI_Alltoallw` once their blocks are known: each
/// block packed, the packed blocks exchanged padded to the largest with their lengths (see
/// `MPI_Alltoallv`), each received block unpacked where it belongs. `sending` is `None` for
/// `MPI_IN_PLACE` (the blocks to send are `receiving`'s).
///
/// # Safety
/// `sendbuf`'s blocks (when `sending` is given) are readable, `recvbuf`'s writable, during the
/// call.
unsafe fn exchange_blocks(
    comm: &Comm,
    sendbuf: *const c_void,
    sending: Option<Blocks>,
    recvbuf: *mut c_void,
    receiving: &Blocks,
) -> Result<(), Failure> {
    const HEADER: usize = std::mem::size_of::<u64>();
    let size = comm.size();
    // SAFETY: forwarded contract; used only during this call.
    let recv = unsafe { receiving.write(recvbuf)? };
    // The buffer's own contents first: blocks not received are written back unchanged.
    let mut landing = receiving.pack(recv)?;
    let (rcounts, rdispls) = (&receiving.packed, &receiving.packed_at);
    let (source, scounts, sdispls) = match sending {
        None => (landing.clone(), rcounts.clone(), rdispls.clone()),
        Some(sending) => {
            // SAFETY: forwarded contract; used only during this call.
            let source = sending.pack(unsafe { sending.read(sendbuf)? })?;
            (source, sending.packed, sending.packed_at)
        }
    };
    let local = scounts.iter().chain(rcounts).copied().max().unwrap_or(0) as u64;
    let mut largest = [0u64];
    comm.all_reduce(&[local], &mut largest, Op::Max)?;
    let block = usize::try_from(largest[0])
        .ok()
        .and_then(|b| b.checked_add(HEADER))
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
    let total = all_blocks(block, comm)?;
    let mut send = zeroed(total)?;
    for (r, (&count, &at)) in scounts.iter().zip(&sdispls).enumerate() {
        let slot = &mut send[r * block..(r + 1) * block];
        slot[..HEADER].copy_from_slice(&(count as u64).to_le_bytes());
        slot[HEADER..HEADER + count].copy_from_slice(&source[at..at + count]);
    }
    // A slot the all-to-all leaves untouched (from a failed rank) keeps this marker.
    let mut received = zeroed(total)?;
    for r in 0..size as usize {
        received[r * block..r * block + HEADER].copy_from_slice(&u64::MAX.to_le_bytes());
    }
    comm.all_to_all(&send, &mut received)?;
    let mut mismatch = None;
    for (r, (&count, &at)) in rcounts.iter().zip(rdispls).enumerate() {
        let slot = &received[r * block..(r + 1) * block];
        let mut header = [0u8; HEADER];
        header.copy_from_slice(&slot[..HEADER]);
        match u64::from_le_bytes(header) {
            u64::MAX => {}
            len if len == count as u64 => {
                landing[at..at + count].copy_from_slice(&slot[HEADER..HEADER + count]);
            }
            len => {
                mismatch.get_or_insert(Failure::new(
                    MPI_ERR_COUNT,
                    format!("rank {r} sent {len} bytes where {count} were to be received"),
                ));
            }
        }
    }
    receiving.unpack(&landing, recv);
    mismatch.map_or(Ok(()), Err)
}

/// The reduce-scatters: an all-reduce of every rank's full vector (the counts summed), then
/// each rank keeps its block, `counts[rank]` elements after the blocks of the ranks before it.
///
/// # Safety
/// As `MPI_Reduce_scatter`, with `counts` given.
unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[c_int],
    datatype: c_int,
    op: c_int,
    comm: c_int,
    rank: usize,
) -> Result<(), Failure> {
    let mut total: c_int = 0;
    for &count in counts {
        if count < 0 {
            return Err(Failure::new(
                MPI_ERR_COUNT,
                format!("negative count {count}"),
            ));
        }
        total = total
            .checked_add(count)
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the counts add up to too much"))?;
    }
    // Any datatype: element i of the whole vector lies at i extents (of either sign). The
    // reduction lands in a scratch copy of the whole vector's window, laid out as in a C
    // buffer.
    let layout = layout_of(datatype, true)?;
    let total_count = total;
    let total = total as usize;
    let before: usize = counts[..rank].iter().map(|&c| c as usize).sum();
    let mine = counts[rank] as usize;
    let whole = layout.window(total)?;
    let mut full = zeroed(whole.len)?;
    let send = if sendbuf == IN_PLACE {
        // With MPI_IN_PLACE the input is in `recvbuf`: copied into the scratch, run by run
        // unless the type is dense (its window is then exactly the data).
        if layout.is_dense() {
            // SAFETY: forwarded contract; only read, during this call.
            full.copy_from_slice(unsafe { input(recvbuf, whole.len)? });
        } else {
            // SAFETY: forwarded contract; only read, during this call.
            let source = unsafe { whole.read(recvbuf)? };
            let data = layout.pack_at(total, source, whole.low)?;
            layout.unpack_at(total, &data, Raw::of_mut(&mut full), whole.low);
        }
        IN_PLACE
    } else {
        sendbuf
    };
    // The scratch copy's first element's origin, `whole.low` bytes before its start (outside
    // it when the window does not start there). Its provenance is exposed in case that
    // pointer is NULL, which the reduction would take for MPI_BOTTOM and rebuild the start
    // from its address.
    let start = full.as_mut_ptr();
    start.expose_provenance();
    let first = start.wrapping_offset(whole.low.wrapping_neg());
    // SAFETY: from `first`, the window of `total` elements of `datatype` is `full`, live,
    // writable and used by nothing else during the call; `send` as the caller's contract.
    unsafe {
        reduce_everywhere(
            send,
            first.cast(),
            total_count,
            datatype,
            op,
            comm,
            Reduction::All,
        )?;
    }
    if mine == 0 {
        return Ok(());
    }
    // This rank's block: element `before` on of the scratch copy (whose start is at
    // `whole.low - before · extent` from that element's origin). Only the data is written:
    // the gaps of a derived type (and a pair's padding) are left as they were.
    let origin = isize::try_from(before)
        .ok()
        .and_then(|before| before.checked_mul(layout.extent))
        .and_then(|at| whole.low.checked_sub(at))
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the counts add up to too much"))?;
    let block = layout.pack_at(mine, Raw::of(&full), origin)?;
    let window = layout.window(mine)?;
    // SAFETY: forwarded contract; used only during this call.
    let recv = unsafe { window.write(recvbuf)? };
    layout.unpack_at(mine, &block, recv, window.low);
    Ok(())
}

/// `MPI_Reduce_scatter_block` (MPI-4.0 §6.10.2): the element-wise reduction of every rank's
/// `size · recvcount` elements, of which rank r gets block r; ranks recognized as failed
/// contribute nothing. `sendbuf` may be `MPI_IN_PLACE` (the input is in `recvbuf`). On the
/// runtime's all-reduce of the whole vector.
///
/// # Safety
/// `sendbuf` is NULL, `MPI_IN_PLACE` or points at `size · recvcount` readable elements of
/// `datatype`; `recvbuf` points at `recvcount` writable elements (with `MPI_IN_PLACE`,
/// `size · recvcount` readable and writable ones).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let comm_box = collective_comm_of(comm)?;
        let counts = vec![recvcount; comm_box.get().size() as usize];
        let rank = comm_box.get().rank() as usize;
        drop(comm_box);
        // SAFETY: forwarded contract.
        unsafe { reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, comm, rank) }
    })
}

/// `MPI_Reduce_scatter` (MPI-4.0 §6.10.1): as `MPI_Reduce_scatter_block` with rank r's block of
/// `recvcounts[r]` elements.
///
/// # Safety
/// `recvcounts` points at `size` readable ints; `sendbuf` is NULL, `MPI_IN_PLACE` or points at
/// their sum of readable elements of `datatype`; `recvbuf` points at `recvcounts[rank]`
/// writable elements (with `MPI_IN_PLACE`, the sum, readable and writable).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        let comm_box = collective_comm_of(comm)?;
        let size = c_int::try_from(comm_box.get().size())
            .map_err(|_| Failure::new(MPI_ERR_COMM, "too many ranks"))?;
        let rank = comm_box.get().rank() as usize;
        drop(comm_box);
        // SAFETY: forwarded contract; only read, during this call.
        let counts = unsafe { array(recvcounts.cast_mut(), size, "recvcounts")? }.to_vec();
        // SAFETY: forwarded contract.
        unsafe { reduce_scatter(sendbuf, recvbuf, &counts, datatype, op, comm, rank) }
    })
}

/// The start of a non-blocking collective as a schedule of the rank's engine, from its
/// communicator; an error for invalid arguments (the request's outcome).
pub(crate) type Scheduled = Box<dyn FnOnce(&'static Comm) -> Result<Started, Failure>>;

/// Starts a non-blocking collective on `comm` as a schedule that the rank's engine runs by
/// itself as its messages arrive, and writes its request to `*request` ([`start_scheduled`]).
/// A schedule needs no thread: it progresses while any thread of the process is in the library
/// or the transport's progress thread runs. Errors of the arguments other than `comm` and
/// `request` (`scheduled`'s, or its start's) are the request's outcome, reported when it
/// completes, by `MPI_Wait`, `MPI_Test`, ...
///
/// The gathers, scatters and all-to-alls may legally have different datatypes at different
/// ranks (only the type signatures must match): blocks of a type with gaps are packed into a
/// scratch buffer (`rooted::scheduled_gather` and its kin).
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`.
unsafe fn start_or_schedule(
    comm: c_int,
    request: *mut c_int,
    scheduled: Result<Scheduled, Failure>,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        request.write(start_scheduled(comm, scheduled)?);
        Ok(())
    })
}

/// A started schedule that works on the C caller's buffers alone.
fn plain(request: CollectiveRequest<'static>) -> Started {
    (request, None)
}

/// The schedule of a broadcast (`MPI_Ibcast`): of the C buffer itself for contiguous data;
/// for a strided datatype, of a scratch buffer of packed data, packed at the root when the
/// call starts and unpacked elsewhere when it completes (as the blocking call does); an error
/// for invalid arguments.
///
/// # Safety
/// As for `MPI_Ibcast`: `buffer` stays valid, and untouched by the program, until the request
/// completes.
pub(crate) unsafe fn scheduled_broadcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
    root: c_int,
) -> Result<Scheduled, Failure> {
    let data = Data::of(count, datatype)?;
    let root = root_of(root)?;
    Ok(Box::new(move |comm: &'static Comm| match data {
        Data::Contiguous(len) => {
            // SAFETY: by the contract above, the buffer is the request's until it completes;
            // the request (in the table) is dropped at the latest at MPI_Finalize.
            let buffer: &'static mut [u8] = unsafe { output(buffer, len) }?;
            Ok(comm.ibroadcast::<u8>(buffer, root).map(plain)?)
        }
        Data::Strided {
            layout,
            count,
            window,
        } => {
            // SAFETY: as above; the scratch buffer is used only by the request, which
            // `PendingCollective` drops before the `Unpack` (field order).
            let (unpack, scratch) = unsafe { Unpack::new(&layout, count, window, buffer) }?;
            let at_root = comm.rank() == root;
            if at_root {
                // SAFETY: as above; only read, here.
                let raw = unsafe { window.write(buffer) }?;
                scratch.copy_from_slice(&layout.pack_at(count, raw, window.low)?);
            }
            let request = comm.ibroadcast::<u8>(scratch, root)?;
            Ok((request, Some(Scratch::Unpack(unpack, !at_root))))
        }
    }))
}

/// A reduction with a predefined operation on `datatype`, which mixes basic types.
fn mixed_type(datatype: c_int) -> Failure {
    Failure::new(
        MPI_ERR_TYPE,
        format!(
            "datatype {datatype} mixes basic types: a reduction with a predefined operation \
             needs a type made of one basic type (or a pair type with MPI_MINLOC / MPI_MAXLOC)"
        ),
    )
}

/// How a non-blocking reduction with `op` on `datatype` combines as a schedule: an operation
/// on packed elements (a predefined one on a basic type or on a derived type made of one basic
/// type, in place where the bytes are aligned; `MPI_MINLOC` / `MPI_MAXLOC` on a pair type; a
/// user operation on any type, whose function runs on a thread of the process that is in the
/// library, never inside another thread's delivery of a message: `crate::ops::packed_user`).
/// The errors of the blocking reductions for invalid arguments.
fn combining(datatype: c_int, op: c_int) -> Result<PackedOp, Failure> {
    if let Some(user) = user_op(op)? {
        return crate::ops::packed_user(user, datatype, None);
    }
    if by_packed_op(datatype) {
        return crate::pairs::packed_type_op(datatype, op);
    }
    let element = if basic(datatype) {
        Element::of(datatype)?
    } else {
        layout_of(datatype, true)?
            .element
            .ok_or_else(|| mixed_type(datatype))?
    };
    let op = op_of(op)?;
    check_op_on(element, op)?;
    as_element!(element, T => Ok(PackedOp::predefined::<T>(op)?))
}

/// The schedule of `MPI_Ireduce_scatter` (`counts`) or `MPI_Ireduce_scatter_block` (`count`
/// for every rank) with a predefined operation on any datatype that [`combining`] takes: an
/// all-reduce of the whole packed vector of which this rank keeps its block (unpacked when the
/// call succeeds, for a type with gaps). With `MPI_IN_PLACE` the whole vector is read from the
/// receive buffer and this rank's block written at its start. `None` as [`combining`] says,
/// and for invalid counts.
///
/// # Safety
/// As for the non-blocking reduce-scatters; `counts` is NULL or points at one int per rank,
/// read during this call only.
pub(crate) unsafe fn scheduled_reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: Result<*const c_int, c_int>,
    datatype: c_int,
    op: c_int,
) -> Result<Scheduled, Failure> {
    let op = combining(datatype, op)?;
    Ok(Box::new(move |comm: &'static Comm| {
        let (n, me) = (comm.size() as usize, comm.rank() as usize);
        let count_of = |count: c_int| {
            usize::try_from(count)
                .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))
        };
        let counts: Vec<usize> = match counts {
            // SAFETY: by the contract above, NULL or one int per rank.
            Ok(pointer) => unsafe { array(pointer.cast_mut(), n as c_int, "recvcounts")? }
                .iter()
                .map(|&count| count_of(count))
                .collect::<Result<_, _>>()?,
            Err(count) => vec![count_of(count)?; n],
        };
        let too_many = || Failure::new(MPI_ERR_COUNT, "the counts add up to more than an int");
        let total = counts
            .iter()
            .try_fold(0usize, |a, &c| a.checked_add(c))
            .ok_or_else(too_many)?;
        let whole = Data::of(c_int::try_from(total).map_err(|_| too_many())?, datatype)?;
        // The operation combines basic elements (a derived type's) or whole pairs: the counts
        // in its elements.
        let per_element = type_size(datatype)? / op.size();
        let elements: Vec<usize> = counts.iter().map(|&count| count * per_element).collect();
        let from = if sendbuf == IN_PLACE {
            recvbuf.cast_const()
        } else {
            sendbuf
        };
        // SAFETY: by the contract above; read only by the start, which copies it.
        let send = unsafe { whole.read(from) }?;
        // In place, the data comes from the receive buffer, of which the call holds this
        // rank's block mutably below: copied first.
        let send = if sendbuf == IN_PLACE {
            send.into_owned().into()
        } else {
            send
        };
        let mine = Data::of(
            c_int::try_from(counts[me]).map_err(|_| too_many())?,
            datatype,
        )?;
        // SAFETY: by the contract above, the buffer is the request's until it completes.
        let (recv, scratch) = unsafe { rooted::receive_into(&mine, recvbuf, false) }?;
        let request = comm.ireduce_scatter_packed(&send, recv, &elements, op)?;
        Ok((request, scratch))
    }))
}

/// The schedule of a reduction `kind` (`MPI_Ireduce`, `MPI_Iallreduce`, `MPI_Iscan`,
/// `MPI_Iexscan`) with a predefined operation, on a basic, pair or derived datatype (data of a
/// type with gaps packed at the start, the result received into a scratch buffer that starts
/// as the receive buffer's own packed contents and is unpacked when the call succeeds), or with
/// a user operation ([`combining`]). `None` for invalid arguments. `MPI_IN_PLACE` is
/// taken where MPI allows it (every rank but at a reduce, where only the root may pass it).
///
/// # Safety
/// As for the non-blocking reductions: the buffers stay valid, and the receive buffer
/// untouched by the program, until the request completes.
pub(crate) unsafe fn scheduled_reduction(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    kind: Reduction,
) -> Result<Scheduled, Failure> {
    let op = combining(datatype, op)?;
    let data = Data::of(count, datatype)?;
    Ok(Box::new(move |comm: &'static Comm| {
        let at_root = match kind {
            Reduction::Reduce(root) => comm.rank() == root,
            Reduction::All | Reduction::Scan | Reduction::Exscan => true,
        };
        // Where the result lands: the C buffer itself, or a scratch buffer of packed elements;
        // at rank 0 of an exclusive scan, where MPI does not look at the receive buffer (it may
        // be NULL), a buffer of its own (the first participant gets no result anyway).
        let first_of_exscan = matches!(kind, Reduction::Exscan) && comm.rank() == 0;
        let (recv, scratch): (Option<&'static mut [u8]>, Option<Scratch>) = if !at_root {
            (None, None)
        } else if first_of_exscan && recvbuf.is_null() {
            let (discard, bytes) = Discard::new(data.packed_len()?)?;
            (Some(bytes), Some(Scratch::Discard(discard)))
        } else {
            // The buffer's own contents first: what an exclusive scan leaves at the first
            // participant, and the data of MPI_IN_PLACE.
            // SAFETY: by the contract above, the buffer is the request's until it completes.
            let (recv, scratch) = unsafe { rooted::receive_into(&data, recvbuf, true) }?;
            (Some(recv), scratch)
        };
        let send: std::borrow::Cow<'_, [u8]> = match (sendbuf == IN_PLACE, recv.as_deref()) {
            (true, Some(recv)) => recv.to_vec().into(),
            (true, None) => {
                return Err(Failure::new(
                    MPI_ERR_BUFFER,
                    "MPI_IN_PLACE is the send buffer of a reduce's root only",
                ))
            }
            // SAFETY: by the contract above; read only by the start, which copies it.
            (false, _) => unsafe { data.read(sendbuf) }?,
        };
        let send = &send[..];
        let exclusive = matches!(kind, Reduction::Exscan);
        // Only a reduce's non-roots have no receive buffer (`at_root` above).
        let request = match (kind, recv) {
            (Reduction::Reduce(root), recv) => comm.ireduce_packed(send, recv, op, root),
            (Reduction::All, Some(recv)) => comm.iall_reduce_packed(send, recv, op),
            (Reduction::Scan | Reduction::Exscan, Some(recv)) => {
                comm.iscan_packed(send, recv, op, exclusive)
            }
            (_, None) => unreachable!("only a reduce's non-roots have no receive buffer"),
        }?;
        Ok((request, scratch))
    }))
}

/// `MPI_Ibcast`: [`MPI_Bcast`] as a non-blocking collective, run by the rank's engine (see
/// [`start_or_schedule`] and [`scheduled_broadcast`]).
///
/// # Safety
/// As for `MPI_Bcast`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let scheduled = unsafe { scheduled_broadcast(buffer, count, datatype, root) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Ireduce`: [`MPI_Reduce`] as a non-blocking collective; on a basic datatype with a
/// predefined operation, run by the rank's engine (see [`start_or_schedule`]).
///
/// # Safety
/// As for `MPI_Reduce`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    let scheduled = root_of(root).and_then(|at| {
        let kind = Reduction::Reduce(at);
        // SAFETY: forwarded contract.
        unsafe { scheduled_reduction(sendbuf, recvbuf, count, datatype, op, kind) }
    });
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Iallreduce`: [`MPI_Allreduce`] as a non-blocking collective; on a basic datatype
/// with a predefined operation, run by the rank's engine (see [`start_or_schedule`]).
///
/// # Safety
/// As for `MPI_Allreduce`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let scheduled =
        unsafe { scheduled_reduction(sendbuf, recvbuf, count, datatype, op, Reduction::All) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Iscan`: [`MPI_Scan`] as a non-blocking collective; on a basic datatype with a
/// predefined operation, run by the rank's engine (see [`start_or_schedule`]).
///
/// # Safety
/// As for `MPI_Scan`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let scheduled =
        unsafe { scheduled_reduction(sendbuf, recvbuf, count, datatype, op, Reduction::Scan) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Iexscan`: [`MPI_Exscan`] as a non-blocking collective; on a basic datatype with a
/// predefined operation, run by the rank's engine (see [`start_or_schedule`]).
///
/// # Safety
/// As for `MPI_Exscan`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let scheduled =
        unsafe { scheduled_reduction(sendbuf, recvbuf, count, datatype, op, Reduction::Exscan) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Igather`: [`MPI_Gather`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Gather`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_gather(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Counts::Regular(recvcount),
            recvtype,
            root,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Iscatter`: [`MPI_Scatter`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Scatter`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_scatter(
            sendbuf,
            Counts::Regular(sendcount),
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Igatherv`: [`MPI_Gatherv`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Gatherv`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_gather(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Counts::Arrays(recvcounts, displs),
            recvtype,
            root,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Iscatterv`: [`MPI_Scatterv`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Scatterv`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_scatter(
            sendbuf,
            Counts::Arrays(sendcounts, displs),
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Iallgather`: [`MPI_Allgather`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Allgather`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_all_gather(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Counts::Regular(recvcount),
            recvtype,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Ialltoall`: [`MPI_Alltoall`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Alltoall`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_all_to_all(
            sendbuf,
            (Counts::Regular(sendcount), Types::One(sendtype)),
            recvbuf,
            (Counts::Regular(recvcount), Types::One(recvtype)),
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Iallgatherv`: [`MPI_Allgatherv`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Allgatherv`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_all_gather(
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Counts::Arrays(recvcounts, displs),
            recvtype,
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Ialltoallv`: [`MPI_Alltoallv`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Alltoallv`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_all_to_all(
            sendbuf,
            (Counts::Arrays(sendcounts, sdispls), Types::One(sendtype)),
            recvbuf,
            (Counts::Arrays(recvcounts, rdispls), Types::One(recvtype)),
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Ialltoallw`: [`MPI_Alltoallw`] as a non-blocking collective run by the rank's engine (see
/// [`start_or_schedule`] and `rooted::scheduled_*`).
///
/// # Safety
/// As for `MPI_Alltoallw`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the arrays are read at the start.
    let scheduled = unsafe {
        rooted::scheduled_all_to_all(
            sendbuf,
            (
                Counts::Arrays(sendcounts, sdispls),
                Types::PerRank(sendtypes),
            ),
            recvbuf,
            (
                Counts::Arrays(recvcounts, rdispls),
                Types::PerRank(recvtypes),
            ),
        )
    };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, Ok(scheduled)) }
}

/// `MPI_Ireduce_scatter_block`: [`MPI_Reduce_scatter_block`] as a non-blocking collective, run
/// by the rank's engine, with a predefined or a user operation (see [`start_or_schedule`] and
/// [`scheduled_reduce_scatter`]).
///
/// # Safety
/// As for `MPI_Reduce_scatter_block`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let scheduled =
        unsafe { scheduled_reduce_scatter(sendbuf, recvbuf, Err(recvcount), datatype, op) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

/// `MPI_Ireduce_scatter`: [`MPI_Reduce_scatter`] as a non-blocking collective, run by the
/// rank's engine, with a predefined or a user operation (see [`start_or_schedule`] and
/// [`scheduled_reduce_scatter`]).
///
/// # Safety
/// As for `MPI_Reduce_scatter`, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the array is read at the start.
    let scheduled =
        unsafe { scheduled_reduce_scatter(sendbuf, recvbuf, Ok(recvcounts), datatype, op) };
    // SAFETY: forwarded contract.
    unsafe { start_or_schedule(comm, request, scheduled) }
}

// The `PMPI_` names of this module's functions.
profiling_names!("collectives.rs");

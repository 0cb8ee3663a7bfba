// SPDX-License-Identifier: MIT OR Apache-2.0
//! `MPI_Pack`, `MPI_Unpack` and `MPI_Pack_size` (MPI-4.0 §5.2): the packed format is the data of
//! the elements without their gaps, in this machine's representation, as the library's own
//! messages carry it; `MPI_PACKED` sends it as bytes.

use std::ffi::c_void;
use std::os::raw::c_int;

use crate::constants::*;
use crate::datatypes::{input, output};
use crate::derived::layout_of;
use crate::errors::{boundary, out, Failure};
use crate::runtime::comm_of;

/// The byte range `[position, position + len)` of a buffer of `size` bytes (the `int` sizes and
/// positions of `MPI_Pack`, the `MPI_Aint` ones of `MPI_Pack_external`, widened).
///
/// # Errors
/// `MPI_ERR_ARG` for a negative size or position, `MPI_ERR_TRUNCATE` when the range does not
/// fit.
pub(crate) fn range(size: i64, position: i64, len: usize) -> Result<(usize, usize), Failure> {
    let size = usize::try_from(size)
        .map_err(|_| Failure::new(MPI_ERR_ARG, format!("negative buffer size {size}")))?;
    let at = usize::try_from(position)
        .map_err(|_| Failure::new(MPI_ERR_ARG, format!("negative position {position}")))?;
    match at.checked_add(len) {
        Some(end) if end <= size => Ok((at, end)),
        _ => Err(Failure::new(
            MPI_ERR_TRUNCATE,
            format!("{len} bytes at position {at} do not fit a buffer of {size} bytes"),
        )),
    }
}

/// `MPI_Pack`: appends the data of `incount` elements of `datatype` at `inbuf` to `outbuf` at
/// `*position` and advances `*position`.
///
/// # Errors
/// `MPI_ERR_TRUNCATE` when they do not fit in `outsize` bytes; `MPI_ERR_COUNT`,
/// `MPI_ERR_TYPE`, `MPI_ERR_BUFFER`, `MPI_ERR_ARG` (NULL `position`, negative size or
/// position), `MPI_ERR_COMM`.
///
/// # Safety
/// `inbuf` is NULL or points at the elements, readable; `outbuf` is NULL or points at
/// `outsize` writable bytes; `position` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: c_int,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let position = unsafe { out(position, "position")? };
        comm_of(comm)?;
        let count = usize::try_from(incount)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {incount}")))?;
        let layout = layout_of(datatype, true)?;
        let window = layout.window(count)?;
        // SAFETY: forwarded contract; used only during this call.
        let data = layout.pack_at(count, unsafe { window.read(inbuf)? }, window.low)?;
        let (at, end) = range(outsize.into(), position.read().into(), data.len())?;
        // SAFETY: forwarded contract; used only during this call.
        let packed = unsafe { output(outbuf, end)? };
        packed[at..end].copy_from_slice(&data);
        position.write(end as c_int);
        Ok(())
    })
}

/// `MPI_Unpack`: the data of `outcount` elements of `datatype`, read from `inbuf` at
/// `*position`, into `outbuf`; advances `*position`.
///
/// # Errors
/// `MPI_ERR_TRUNCATE` when `insize` bytes do not hold them; as `MPI_Pack` otherwise.
///
/// # Safety
/// `inbuf` is NULL or points at `insize` readable bytes; `outbuf` is NULL or points at the
/// elements, writable; `position` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: c_int,
    comm: c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let position = unsafe { out(position, "position")? };
        comm_of(comm)?;
        let count = usize::try_from(outcount)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {outcount}")))?;
        let layout = layout_of(datatype, true)?;
        let len = count
            .checked_mul(layout.size)
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))?;
        let (at, end) = range(insize.into(), position.read().into(), len)?;
        // SAFETY: forwarded contract; only read, during this call.
        let packed = unsafe { input(inbuf, end)? };
        let window = layout.window(count)?;
        // SAFETY: forwarded contract; used only during this call.
        let buffer = unsafe { window.write(outbuf)? };
        layout.unpack_at(count, &packed[at..end], buffer, window.low);
        position.write(end as c_int);
        Ok(())
    })
}

/// `MPI_Pack_size`: the bytes `MPI_Pack` needs for `incount` elements of `datatype` (exactly
/// their data).
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count or more than an int of bytes; `MPI_ERR_TYPE`,
/// `MPI_ERR_ARG` (NULL `size`), `MPI_ERR_COMM`.
///
/// # Safety
/// `size` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(
    incount: c_int,
    datatype: c_int,
    comm: c_int,
    size: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        comm_of(comm)?;
        let count = usize::try_from(incount)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {incount}")))?;
        let layout = layout_of(datatype, false)?;
        let bytes = count
            .checked_mul(layout.size)
            .and_then(|b| c_int::try_from(b).ok())
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the packed size exceeds an int"))?;
        size.write(bytes);
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("pack.rs");

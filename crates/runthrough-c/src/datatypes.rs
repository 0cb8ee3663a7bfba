// SPDX-License-Identifier: MIT OR Apache-2.0
//! The basic datatypes and operations, and the C buffers they describe.

use std::ffi::c_void;
use std::os::raw::{c_int, c_long, c_ulong};

use runthrough::Op;

use crate::constants::*;
use crate::errors::Failure;

/// `MPI_IN_PLACE`.
pub(crate) const IN_PLACE: *const c_void = usize::MAX as *const c_void;

/// The element type a datatype stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Element {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    Long,
    UnsignedLong,
    I64,
    U64,
    F32,
    F64,
}

impl Element {
    pub(crate) fn of(datatype: c_int) -> Result<Element, Failure> {
        Ok(match datatype {
            MPI_CHAR | MPI_SIGNED_CHAR | MPI_INT8_T | MPI_CHARACTER => Element::I8,
            MPI_UNSIGNED_CHAR | MPI_BYTE | MPI_UINT8_T | MPI_C_BOOL | MPI_CXX_BOOL | MPI_PACKED => {
                Element::U8
            }
            MPI_SHORT | MPI_INT16_T => Element::I16,
            MPI_UNSIGNED_SHORT | MPI_UINT16_T => Element::U16,
            MPI_INT | MPI_INT32_T | MPI_INTEGER | MPI_WCHAR | MPI_LOGICAL => Element::I32,
            MPI_UNSIGNED | MPI_UINT32_T => Element::U32,
            MPI_LONG => Element::Long,
            MPI_UNSIGNED_LONG => Element::UnsignedLong,
            MPI_LONG_LONG | MPI_INT64_T | MPI_AINT | MPI_OFFSET | MPI_COUNT => Element::I64,
            MPI_UNSIGNED_LONG_LONG | MPI_UINT64_T => Element::U64,
            MPI_FLOAT | MPI_REAL => Element::F32,
            MPI_DOUBLE | MPI_DOUBLE_PRECISION => Element::F64,
            MPI_FLOAT_INT..=MPI_SHORT_INT | MPI_LONG_DOUBLE_INT => {
                return Err(Failure::new(
                    MPI_ERR_TYPE,
                    format!(
                        "pair datatype {datatype}: this call takes basic datatypes only (pair \
                         types work in point-to-point calls and in reductions with \
                         MPI_MINLOC / MPI_MAXLOC)"
                    ),
                ))
            }
            d if crate::wide::Wide::of(d).is_some() => {
                return Err(Failure::new(
                    MPI_ERR_TYPE,
                    format!(
                        "datatype {datatype} (long double or complex): this call takes basic \
                         datatypes only (these work in point-to-point calls and in reductions)"
                    ),
                ))
            }
            d if d >= crate::derived::DERIVED_BASE => {
                return Err(Failure::new(
                    MPI_ERR_TYPE,
                    format!(
                        "derived datatype {datatype}: this call takes basic datatypes only \
                         (derived types work in point-to-point calls)"
                    ),
                ))
            }
            _ => {
                return Err(Failure::new(
                    MPI_ERR_TYPE,
                    format!("invalid datatype {datatype}"),
                ))
            }
        })
    }

    /// A basic datatype of this element type.
    pub(crate) fn datatype(self) -> c_int {
        match self {
            Element::I8 => MPI_SIGNED_CHAR,
            Element::U8 => MPI_UNSIGNED_CHAR,
            Element::I16 => MPI_SHORT,
            Element::U16 => MPI_UNSIGNED_SHORT,
            Element::I32 => MPI_INT,
            Element::U32 => MPI_UNSIGNED,
            Element::Long => MPI_LONG,
            Element::UnsignedLong => MPI_UNSIGNED_LONG,
            Element::I64 => MPI_LONG_LONG,
            Element::U64 => MPI_UNSIGNED_LONG_LONG,
            Element::F32 => MPI_FLOAT,
            Element::F64 => MPI_DOUBLE,
        }
    }

    pub(crate) fn size(self) -> usize {
        match self {
            Element::I8 | Element::U8 => 1,
            Element::I16 | Element::U16 => 2,
            Element::I32 | Element::U32 | Element::F32 => 4,
            Element::Long => std::mem::size_of::<c_long>(),
            Element::UnsignedLong => std::mem::size_of::<c_ulong>(),
            Element::I64 | Element::U64 | Element::F64 => 8,
        }
    }
}

/// The byte length of `count` elements of `datatype`.
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count or an overflow, `MPI_ERR_TYPE` for a bad datatype.
pub(crate) fn byte_len(count: c_int, datatype: c_int) -> Result<usize, Failure> {
    let element = Element::of(datatype)?;
    let count = usize::try_from(count)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
    count
        .checked_mul(element.size())
        .filter(|&len| len <= isize::MAX as usize)
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "count too large"))
}

/// The predefined operation of handle `op`.
pub(crate) fn op_of(op: c_int) -> Result<Op, Failure> {
    Ok(match op {
        MPI_MAX => Op::Max,
        MPI_MIN => Op::Min,
        MPI_SUM => Op::Sum,
        MPI_PROD => Op::Product,
        MPI_LAND => Op::LogicalAnd,
        MPI_BAND => Op::BitAnd,
        MPI_LOR => Op::LogicalOr,
        MPI_BOR => Op::BitOr,
        MPI_LXOR => Op::LogicalXor,
        MPI_BXOR => Op::BitXor,
        MPI_MAXLOC | MPI_MINLOC => {
            return Err(Failure::new(
                MPI_ERR_OP,
                "MPI_MINLOC and MPI_MAXLOC apply to the pair types only (MPI_DOUBLE_INT, ...)",
            ))
        }
        _ => {
            return Err(Failure::new(
                MPI_ERR_OP,
                format!("invalid or freed operation {op}"),
            ))
        }
    })
}

/// A C input buffer of `len` bytes.
///
/// # Safety
/// `pointer` is NULL or points at `len` readable bytes that stay valid and unchanged for `'a`.
///
/// # Errors
/// `MPI_ERR_BUFFER` when `pointer` is NULL (or `MPI_IN_PLACE`) and `len > 0`.
pub(crate) unsafe fn input<'a>(pointer: *const c_void, len: usize) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if pointer.is_null() || pointer == IN_PLACE {
        return Err(Failure::new(MPI_ERR_BUFFER, "the buffer is NULL"));
    }
    // SAFETY: not NULL, and by the caller's contract `len` readable bytes valid for 'a.
    Ok(unsafe { std::slice::from_raw_parts(pointer.cast::<u8>(), len) })
}

/// `pointer` moved `offset` bytes (back, when `offset` is negative): from NULL
/// (`MPI_BOTTOM`), the address `offset` itself, as `MPI_Get_address` gave it out (its
/// provenance exposed there), or NULL for an offset below 1, which is no address;
/// `MPI_IN_PLACE` stays itself, so that [`input`] and [`output`] still refuse it.
pub(crate) fn offset_by(pointer: *const c_void, offset: isize) -> *const c_void {
    if pointer == IN_PLACE || offset == 0 {
        pointer
    } else if pointer.is_null() {
        match usize::try_from(offset) {
            Ok(address) => std::ptr::with_exposed_provenance(address),
            Err(_) => std::ptr::null(),
        }
    } else {
        pointer.cast::<u8>().wrapping_offset(offset).cast()
    }
}

/// A C output buffer of `len` bytes.
///
/// # Safety
/// `pointer` is NULL or points at `len` writable bytes that nothing else accesses for `'a`.
///
/// # Errors
/// `MPI_ERR_BUFFER` when `pointer` is NULL (or `MPI_IN_PLACE`) and `len > 0`.
pub(crate) unsafe fn output<'a>(pointer: *mut c_void, len: usize) -> Result<&'a mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    if pointer.is_null() || pointer.cast_const() == IN_PLACE {
        return Err(Failure::new(MPI_ERR_BUFFER, "the buffer is NULL"));
    }
    // SAFETY: not NULL, and by the caller's contract `len` writable bytes, used by nothing
    // else for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(pointer.cast::<u8>(), len) })
}

/// A zeroed buffer of `len` bytes; a failed allocation is an error class (`MPI_ERR_INTERN`),
/// not the end of the process.
pub(crate) fn zeroed(len: usize) -> Result<Vec<u8>, Failure> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| {
        Failure::new(
            MPI_ERR_INTERN,
            format!("out of memory for a buffer of {len} bytes"),
        )
    })?;
    buffer.resize(len, 0);
    Ok(buffer)
}

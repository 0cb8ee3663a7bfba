// SPDX-License-Identifier: MIT OR Apache-2.0
//! `MPI_MINLOC` and `MPI_MAXLOC` on the pair types (MPI-4.0 §6.9.4): reductions of
//! (value, index) pairs that keep the extreme value and, among equal values, the smallest
//! index. The pairs are packed (value then index, no padding), reduced by the runtime with a
//! commutative user operation, and unpacked into the C layout.

use std::cmp::Ordering;
use std::ffi::c_void;
use std::os::raw::{c_int, c_long, c_short};

use bytemuck::Pod;
use runthrough::PackedOp;

use crate::collectives::{reduce_packed, Reduction};
use crate::constants::*;
use crate::datatypes::{zeroed, IN_PLACE};
use crate::derived::pair_layout;
use crate::errors::Failure;
use crate::runtime::collective_comm_of;

/// The value of a pair type.
#[derive(Debug, Clone, Copy)]
enum Value {
    F32,
    F64,
    Long,
    Int,
    Short,
    LongDouble,
}

impl Value {
    fn of(datatype: c_int) -> Option<Value> {
        Some(match datatype {
            MPI_FLOAT_INT => Value::F32,
            MPI_DOUBLE_INT => Value::F64,
            MPI_LONG_INT => Value::Long,
            MPI_2INT => Value::Int,
            MPI_SHORT_INT => Value::Short,
            MPI_LONG_DOUBLE_INT => Value::LongDouble,
            _ => return None,
        })
    }

    fn len(self) -> usize {
        match self {
            Value::F32 => 4,
            Value::F64 => 8,
            Value::Long => std::mem::size_of::<c_long>(),
            Value::Int => 4,
            Value::Short => std::mem::size_of::<c_short>(),
            Value::LongDouble => crate::wide::LONG_DOUBLE,
        }
    }

    /// Compares the values at the start of two packed pairs.
    fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        fn read<T: Pod>(bytes: &[u8]) -> T {
            bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<T>()])
        }
        match self {
            Value::F32 => read::<f32>(a)
                .partial_cmp(&read::<f32>(b))
                .unwrap_or(Ordering::Equal),
            Value::F64 => read::<f64>(a)
                .partial_cmp(&read::<f64>(b))
                .unwrap_or(Ordering::Equal),
            Value::Long => read::<c_long>(a).cmp(&read::<c_long>(b)),
            Value::Int => read::<c_int>(a).cmp(&read::<c_int>(b)),
            Value::Short => read::<c_short>(a).cmp(&read::<c_short>(b)),
            Value::LongDouble => crate::wide::compare_long_double(a, b),
        }
    }
}

/// Whether `datatype` is a pair type.
pub(crate) fn is_pair(datatype: c_int) -> bool {
    Value::of(datatype).is_some()
}

/// Whether a predefined operation on `datatype` combines packed elements with a function of
/// the library's own: a pair type, `long double` or a complex type (`crate::wide`).
pub(crate) fn by_packed_op(datatype: c_int) -> bool {
    is_pair(datatype) || crate::wide::Wide::of(datatype).is_some()
}

/// The predefined operation `op` on `datatype` (one of [`by_packed_op`]'s) as an operation on
/// packed elements.
///
/// # Errors
/// `MPI_ERR_OP` for an operation MPI does not define on the type.
pub(crate) fn packed_type_op(datatype: c_int, op: c_int) -> Result<PackedOp, Failure> {
    if let Some(wide) = crate::wide::Wide::of(datatype) {
        return wide.packed_op(op);
    }
    packed_op(datatype, op).ok_or_else(|| {
        Failure::new(
            MPI_ERR_OP,
            format!(
                "operation {op} does not apply to pair types (only MPI_MINLOC and MPI_MAXLOC \
                 do)"
            ),
        )
    })
}

/// Whether packed pair `a` wins over `b` under `MPI_MAXLOC` (`max`) or `MPI_MINLOC`: the
/// extreme value, and the smaller index between equal values.
fn wins(value: Value, max: bool, a: &[u8], b: &[u8]) -> bool {
    let index = |pair: &[u8]| -> c_int {
        bytemuck::pod_read_unaligned(&pair[value.len()..value.len() + std::mem::size_of::<c_int>()])
    };
    match (value.compare(a, b), max) {
        (Ordering::Greater, true) | (Ordering::Less, false) => true,
        (Ordering::Equal, _) => index(a) < index(b),
        _ => false,
    }
}

/// `MPI_MINLOC` / `MPI_MAXLOC` (`op`) on packed pairs of pair type `datatype`, as an operation
/// on packed elements for the engine's non-blocking reductions; `None` for another type or
/// operation.
pub(crate) fn packed_op(datatype: c_int, op: c_int) -> Option<runthrough::PackedOp> {
    let value = Value::of(datatype)?;
    let size = pair_layout(datatype)?.size;
    let max = match op {
        MPI_MAXLOC => true,
        MPI_MINLOC => false,
        _ => return None,
    };
    Some(runthrough::PackedOp::new(size, move |input, inout| {
        for (out, candidate) in inout.chunks_exact_mut(size).zip(input.chunks_exact(size)) {
            if wins(value, max, candidate, out) {
                out.copy_from_slice(candidate);
            }
        }
    }))
}

/// `inout = input op inout` on packed pairs of pair type `datatype` for `MPI_MINLOC` /
/// `MPI_MAXLOC` (a one-sided accumulate at its target); false, nothing changed, for another
/// type or operation, or lengths that are not whole pairs.
pub(crate) fn combine_pairs(datatype: c_int, op: c_int, input: &[u8], inout: &mut [u8]) -> bool {
    let (Some(value), Some(layout)) = (Value::of(datatype), pair_layout(datatype)) else {
        return false;
    };
    let size = layout.size;
    let max = match op {
        MPI_MAXLOC => true,
        MPI_MINLOC => false,
        _ => return false,
    };
    if size == 0 || input.len() != inout.len() || !input.len().is_multiple_of(size) {
        return false;
    }
    for (out, candidate) in inout.chunks_exact_mut(size).zip(input.chunks_exact(size)) {
        if wins(value, max, candidate, out) {
            out.copy_from_slice(candidate);
        }
    }
    true
}

/// A reduction (`MPI_Reduce`, `MPI_Allreduce`, `MPI_Scan`, `MPI_Exscan`) of `count` elements of
/// `datatype` (one of [`by_packed_op`]'s) with predefined operation `op`: a pair type with
/// `MPI_MINLOC` / `MPI_MAXLOC`, `long double` or a complex type with what MPI defines on
/// them; `sendbuf` may be `MPI_IN_PLACE` where the receive buffer is significant.
///
/// # Errors
/// `MPI_ERR_OP` for another operation; `MPI_ERR_COUNT`, `MPI_ERR_BUFFER`; the runtime's.
///
/// # Safety
/// As `MPI_Reduce` / `MPI_Allreduce`, with `count` elements of `datatype` in each buffer.
pub(crate) unsafe fn reduce_by_packed_op(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    kind: Reduction,
) -> Result<(), Failure> {
    let layout = crate::derived::layout_of(datatype, false)?;
    // The operation the non-blocking reductions take too; checked before any communication.
    let packed = packed_type_op(datatype, op)?;
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
    let mut result = match (kind, recv) {
        // What exscan leaves untouched (at the first participant) must stay as it was.
        (Reduction::Exscan, Some(recv)) => layout.pack_at(count, recv, window.low)?,
        _ => zeroed(send.len())?,
    };
    let out = recv.is_some().then_some(&mut result[..]);
    reduce_packed(comm, &send, out, packed, kind)?;
    if let Some(recv) = recv {
        layout.unpack_at(count, &result, recv, window.low);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(value: f64, index: c_int) -> Vec<u8> {
        let mut bytes = value.to_ne_bytes().to_vec();
        bytes.extend_from_slice(&index.to_ne_bytes());
        bytes
    }

    #[test]
    fn maxloc_and_minloc_keep_the_smallest_index_of_a_tie() {
        let (a, b, c) = (pair(2.0, 5), pair(2.0, 3), pair(1.0, 0));
        assert!(!wins(Value::F64, true, &a, &b));
        assert!(wins(Value::F64, true, &b, &a));
        assert!(wins(Value::F64, true, &a, &c));
        assert!(!wins(Value::F64, false, &a, &c));
        assert!(wins(Value::F64, false, &c, &a));
    }
}

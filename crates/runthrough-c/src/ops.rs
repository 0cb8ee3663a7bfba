// SPDX-License-Identifier: MIT OR Apache-2.0
//! User-defined reduction operations (MPI-4.0 §6.9.5): `MPI_Op_create`, `MPI_Op_free`,
//! `MPI_Op_commutative`, and the reductions that combine with them.
//!
//! A user operation runs on the runtime's own user-operation reductions
//! (`Comm::reduce_with`, `all_reduce_with`, `scan_with`, `exscan_with`: the same algorithms,
//! and so the same failure semantics, as the predefined operations; a non-commutative operation
//! is applied in rank order, `v0 op v1 op ... op vn-1`). The data travels packed (as every
//! reduction of a derived type here does, see `collectives::reduce_derived`); each time the
//! runtime combines two vectors, they are laid out again in the datatype's C layout in aligned
//! scratch buffers and the program's function is called on those, without the library's lock,
//! so it may call MPI functions such as `MPI_Type_size`.

use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex};

use runthrough::{Comm, PackedOp};

use crate::collectives::reduce_packed;

use crate::collectives::Reduction;
use crate::constants::*;
use crate::derived::{Layout, Raw};
use crate::errors::{boundary, out, Failure};
use crate::runtime::{lock, with_runtime};

/// `MPI_User_function`: `inoutvec[i] = invec[i] op inoutvec[i]` for `*len` elements of
/// `*datatype`.
pub(crate) type UserFunction =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// An operation made by `MPI_Op_create`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserOperation {
    pub(crate) function: UserFunction,
    pub(crate) commutative: bool,
}

/// Whether `op` is one of the predefined operations (`MPI_MAX` ... `MPI_MINLOC`).
fn predefined(op: c_int) -> bool {
    (MPI_MAX..=MPI_MINLOC).contains(&op)
}

/// The user operation of handle `op`, or `None` for any other handle (predefined, null,
/// freed, invalid: the predefined path reports those).
pub(crate) fn user_op(op: c_int) -> Result<Option<UserOperation>, Failure> {
    if predefined(op) || op == MPI_OP_NULL {
        return Ok(None);
    }
    with_runtime(|runtime| Ok(runtime.ops.get(&op).copied()))
}

/// `MPI_Op_create`: a handle for the program's function; `commute` says whether it is
/// commutative (reported by `MPI_Op_commutative`; the library applies every user operation in
/// rank order, which is right for both).
///
/// # Errors
/// `MPI_ERR_ARG` for a NULL function or `op`.
///
/// # Safety
/// `op` is NULL or points at a writable `MPI_Op`; `function` is NULL or a function of the type
/// `MPI_User_function`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(
    function: Option<UserFunction>,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let op = unsafe { out(op, "op")? };
        let function = function.ok_or_else(|| Failure::null("the user function"))?;
        let handle = with_runtime(|runtime| {
            let handle = runtime.next_handle();
            runtime.ops.insert(
                handle,
                UserOperation {
                    function,
                    commutative: commute != 0,
                },
            );
            Ok(handle)
        })?;
        op.write(handle);
        Ok(())
    })
}

/// `MPI_Op_free`: frees a user operation and sets `*op` to `MPI_OP_NULL`.
///
/// # Errors
/// `MPI_ERR_OP` for a predefined, null, freed or invalid operation; `MPI_ERR_ARG` for a NULL
/// `op`.
///
/// # Safety
/// `op` is NULL or points at a readable and writable `MPI_Op`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let op = unsafe { out(op, "op")? };
        let handle = op.read();
        if predefined(handle) {
            return Err(Failure::new(
                MPI_ERR_OP,
                format!("operation {handle} is predefined: only MPI_Op_create's can be freed"),
            ));
        }
        with_runtime(|runtime| {
            runtime.ops.remove(&handle).ok_or_else(|| {
                Failure::new(MPI_ERR_OP, format!("invalid or freed operation {handle}"))
            })
        })?;
        op.write(MPI_OP_NULL);
        Ok(())
    })
}

/// `MPI_Op_commutative`: 1 for the predefined reductions, 0 for `MPI_REPLACE` and
/// `MPI_NO_OP` (the order of their operands matters), the `commute` of `MPI_Op_create` for a
/// user one.
///
/// # Errors
/// `MPI_ERR_OP` for a null, freed or invalid operation; `MPI_ERR_ARG` for a NULL `commute`.
///
/// # Safety
/// `commute` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let commute = unsafe { out(commute, "commute")? };
        let commutative = if predefined(op) {
            true
        } else if op == MPI_REPLACE || op == MPI_NO_OP {
            false
        } else {
            user_op(op)?
                .ok_or_else(|| {
                    Failure::new(MPI_ERR_OP, format!("invalid or freed operation {op}"))
                })?
                .commutative
        };
        commute.write(c_int::from(commutative));
        Ok(())
    })
}

/// A zeroed scratch buffer of at least `len` bytes aligned for any basic type (16 bytes).
fn aligned(len: usize) -> Vec<u128> {
    vec![0u128; len.div_ceil(std::mem::size_of::<u128>())]
}

/// Combines the packed vectors `input` and `inout` (`inout = input op inout`) with `apply`,
/// called on the two laid out in `layout`'s C layout, in aligned scratch buffers, with the
/// number of elements and the scratch buffers' *origin*: they hold the bytes from `origin` on,
/// relative to the first element's origin (the start of the elements' window rounded down to
/// 16, so that a type placed at an absolute address for `MPI_BOTTOM` needs no scratch of its
/// address's size, every element keeps its alignment, and data before the first element's
/// origin, at negative offsets, has its place); the result is packed back into `inout`.
///
/// # Errors
/// `MPI_ERR_INTERN` when the vectors are not whole elements of one length (the runtime hands
/// over whole vectors: see [`reduce_user`]).
fn combine_packed(
    layout: &Layout,
    input: &[u8],
    inout: &mut [u8],
    apply: impl FnOnce(&mut [u8], &mut [u8], usize, isize),
) -> Result<(), Failure> {
    let size = layout.size;
    if input.is_empty() && inout.is_empty() {
        return Ok(());
    }
    if input.len() != inout.len() || size == 0 || !inout.len().is_multiple_of(size) {
        return Err(Failure::new(
            MPI_ERR_INTERN,
            format!(
                "internal error: a user operation was handed {} and {} bytes of elements of {} \
                 bytes",
                input.len(),
                inout.len(),
                size
            ),
        ));
    }
    let count = inout.len() / size;
    let window = layout.window(count)?;
    let align = std::mem::size_of::<u128>() as isize;
    let below = window.low.rem_euclid(align);
    let origin = window
        .low
        .checked_sub(below)
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the datatype is too large"))?;
    let span = window.len + below as usize;
    let mut input_c = aligned(span);
    let mut inout_c = aligned(span);
    let input_bytes = &mut bytemuck::cast_slice_mut::<u128, u8>(&mut input_c)[..span];
    let inout_bytes = &mut bytemuck::cast_slice_mut::<u128, u8>(&mut inout_c)[..span];
    if layout.is_dense() {
        input_bytes.copy_from_slice(input);
        inout_bytes.copy_from_slice(inout);
    } else {
        layout.unpack_at(count, input, Raw::of_mut(input_bytes), origin);
        layout.unpack_at(count, inout, Raw::of_mut(inout_bytes), origin);
    }
    apply(input_bytes, inout_bytes, count, origin);
    if layout.is_dense() {
        inout.copy_from_slice(inout_bytes);
    } else {
        inout.copy_from_slice(&layout.pack_at(count, Raw::of(inout_bytes), origin)?);
    }
    Ok(())
}

/// A reduction with user operation `user` of `send`, `count` elements of `datatype` packed,
/// into `recv` (packed, where significant; for exscan it holds what the first participant
/// keeps): the very operation the non-blocking reductions take ([`packed_user`]). A failure
/// of laying the data out for the function is the call's error.
///
/// # Errors
/// The runtime's (`MPIX_ERR_PROC_FAILED`, `MPI_ERR_ROOT`, `MPI_ERR_COUNT`, ...);
/// `MPI_ERR_TYPE` for an invalid datatype.
pub(crate) fn reduce_user(
    user: UserOperation,
    datatype: c_int,
    comm: &Comm,
    send: &[u8],
    recv: Option<&mut [u8]>,
    kind: Reduction,
) -> Result<(), Failure> {
    let trouble = Arc::new(Mutex::new(None));
    let op = packed_user(user, datatype, Some(Arc::clone(&trouble)))?;
    reduce_packed(comm, send, recv, op, kind)?;
    let trouble = lock(&trouble).take();
    trouble.map_or(Ok(()), Err)
}

/// `inout = input op inout` by user operation `user` over packed vectors of `datatype`
/// (layout `layout`): the program's function called on the two laid out again in the
/// datatype's C layout ([`combine_packed`]), without any lock of the library.
fn apply_user(
    user: UserOperation,
    layout: &Layout,
    datatype: c_int,
    input: &[u8],
    inout: &mut [u8],
) -> Result<(), Failure> {
    combine_packed(layout, input, inout, |input, inout, count, origin| {
        let mut len = c_int::try_from(count).unwrap_or(c_int::MAX);
        let mut datatype = datatype;
        // SAFETY: `function` is an `MPI_User_function` (the contract of `MPI_Op_create`);
        // both buffers hold the bytes from `origin` on of `count` elements of `datatype` in
        // its C layout, aligned for any basic type, and live until it returns, so the
        // function, handed for each buffer the first element's origin, `-origin` bytes from
        // its start (a pointer it only offsets by the type's displacements and multiples of
        // its extent, which land within the window, from `origin` on, negative ones
        // included), reaches exactly them; `len` and `datatype` are valid for the call. No
        // lock of the library is held.
        unsafe {
            (user.function)(
                input
                    .as_mut_ptr()
                    .wrapping_offset(origin.wrapping_neg())
                    .cast(),
                inout
                    .as_mut_ptr()
                    .wrapping_offset(origin.wrapping_neg())
                    .cast(),
                &mut len,
                &mut datatype,
            );
        }
    })
}

/// The operation a non-blocking reduction's schedule combines with, for user operation
/// `user` on `datatype` (packed elements of the type's size): the program's function, on
/// the two vectors laid out again in the datatype's C layout ([`combine_packed`]), run by
/// whichever thread of the process waits in the library when a step needs it, without the
/// library's lock (so the function may call MPI functions). Applied in rank order whatever
/// `commute` said. A failure to lay the data out (none is expected: the call's start
/// measured the whole vector) goes to `trouble` when given.
///
/// # Errors
/// The datatype's, when it is invalid or not committed.
pub(crate) fn packed_user(
    user: UserOperation,
    datatype: c_int,
    trouble: Option<Arc<Mutex<Option<Failure>>>>,
) -> Result<PackedOp, Failure> {
    let layout = crate::derived::layout_of(datatype, true)?;
    let size = layout.size;
    Ok(PackedOp::unlocked(
        size,
        false,
        move |input: &[u8], inout: &mut [u8]| {
            if let Err(failure) = apply_user(user, &layout, datatype, input, inout) {
                match &trouble {
                    Some(trouble) => {
                        lock(trouble).get_or_insert(failure);
                    }
                    // (The schedule hands over whole elements of one length, of a window the
                    // start already measured.)
                    None => debug_assert!(false, "{failure:?}"),
                }
            }
        },
    ))
}

// The `PMPI_` names of this module's functions.
profiling_names!("ops.rs");

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2x2 integer matrix product, `inout = input · inout`, on C-layout ints.
    fn matmul(input: &mut [u8], inout: &mut [u8], count: usize) {
        let a: Vec<i32> = bytemuck::pod_collect_to_vec(input);
        let b: &mut [i32] = bytemuck::cast_slice_mut(inout);
        assert_eq!(a.len(), 4 * count);
        for k in 0..count {
            let (a, b) = (&a[4 * k..4 * k + 4], &mut b[4 * k..4 * k + 4]);
            let p = [
                a[0] * b[0] + a[1] * b[2],
                a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3],
            ];
            b.copy_from_slice(&p);
        }
    }

    fn bytes(ints: &[i32]) -> Vec<u8> {
        bytemuck::cast_slice(ints).to_vec()
    }

    #[test]
    fn a_dense_type_is_combined_with_the_input_on_the_left() {
        let layout = crate::derived::layout_of(MPI_INT, false).unwrap();
        // Four ints per matrix: count 2 matrices as 8 MPI_INTs is 8 "elements" of the layout,
        // so the function sees count 8; the matrices are rows of 4 ints each.
        let a = bytes(&[1, 1, 0, 1, 2, 0, 0, 2]);
        let mut b = bytes(&[1, 0, 1, 1, 1, 2, 3, 4]);
        let mut seen = 0;
        combine_packed(&layout, &a, &mut b, |i, io, count, _| {
            seen = count;
            matmul(i, io, count / 4);
        })
        .unwrap();
        assert_eq!(seen, 8);
        let b: Vec<i32> = bytemuck::pod_collect_to_vec(&b);
        // [1 1; 0 1]·[1 0; 1 1] = [2 1; 1 1] (the reverse order gives [1 1; 1 2]).
        assert_eq!(&b[..4], [2, 1, 1, 1]);
        assert_eq!(&b[4..], [2, 4, 6, 8]);
    }

    #[test]
    fn a_strided_type_is_laid_out_for_the_function_and_packed_back() {
        // Two ints with a gap of one int between them: span 12 bytes, size 8, extent 12.
        let layout = crate::derived::Layout::test_vector_of_ints(2, 1, 2);
        assert!(!layout.is_dense());
        let a = bytes(&[1, 2]);
        let mut b = bytes(&[10, 20]);
        combine_packed(&layout, &a, &mut b, |i, io, count, _| {
            assert_eq!((count, i.len()), (1, 12));
            let i: Vec<i32> = bytemuck::pod_collect_to_vec(i);
            let io: &mut [i32] = bytemuck::cast_slice_mut(io);
            assert_eq!(i, [1, 0, 2]);
            assert_eq!(io, [10, 0, 20]);
            io[0] += i[0] * 100;
            io[1] = 77; // a gap: not data, not packed back
            io[2] += i[2] * 100;
        })
        .unwrap();
        assert_eq!(bytemuck::pod_collect_to_vec::<u8, i32>(&b), [110, 220]);
    }

    #[test]
    fn a_type_with_data_before_its_origin_is_laid_out_around_it() {
        // Two ints with a negative stride: the second 8 bytes before the first (window -8..4).
        // The scratch starts 16 bytes before the origin (the window rounded down to 16).
        let layout = crate::derived::Layout::test_vector_of_ints(2, 1, -2);
        let a = bytes(&[1, 2]);
        let mut b = bytes(&[10, 20]);
        combine_packed(&layout, &a, &mut b, |i, io, count, origin| {
            assert_eq!((count, origin, i.len()), (1, -16, 20));
            let i: Vec<i32> = bytemuck::pod_collect_to_vec(i);
            let io: &mut [i32] = bytemuck::cast_slice_mut(io);
            // The first int at the origin (int 4 of the scratch), the second 2 ints before.
            assert_eq!((i[4], i[2]), (1, 2));
            assert_eq!((io[4], io[2]), (10, 20));
            io[4] += i[4] * 100;
            io[2] += i[2] * 100;
        })
        .unwrap();
        assert_eq!(bytemuck::pod_collect_to_vec::<u8, i32>(&b), [110, 220]);
    }

    #[test]
    fn vectors_that_are_not_whole_elements_are_refused() {
        let layout = crate::derived::layout_of(MPI_INT, false).unwrap();
        let a = vec![0u8; 6];
        let mut b = vec![0u8; 6];
        let failure =
            combine_packed(&layout, &a, &mut b, |_, _, _, _| panic!("called")).unwrap_err();
        assert_eq!(failure.class, MPI_ERR_INTERN);
    }
}

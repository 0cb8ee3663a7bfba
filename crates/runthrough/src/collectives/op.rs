// SPDX-License-Identifier: MIT OR Apache-2.0
//! Reduction operations: the predefined [`Op`]s over [`Reducible`] element types, and user
//! closures ([`UserOp`]) (MPI-4.0 §6.9.2 predefined operations, §6.9.5 user-defined operations).

use bytemuck::Pod;
use runthrough_core::{Error, Result};

/// A predefined reduction operation (MPI-4.0 §6.9.2: `MPI_SUM`, `MPI_PROD`, `MPI_MIN`, `MPI_MAX`,
/// `MPI_LAND`, `MPI_LOR`, `MPI_LXOR`, `MPI_BAND`, `MPI_BOR`, `MPI_BXOR`).
///
/// Integer `Sum` and `Product` wrap on overflow. Logical operations treat a nonzero element as
/// true and produce 1 or 0. Bitwise operations are defined on integer types only: on a float type
/// the call returns `Error::Argument` (never a panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Sum (`MPI_SUM`).
    Sum,
    /// Product (`MPI_PROD`).
    Product,
    /// Minimum (`MPI_MIN`).
    Min,
    /// Maximum (`MPI_MAX`).
    Max,
    /// Logical and (`MPI_LAND`).
    LogicalAnd,
    /// Logical or (`MPI_LOR`).
    LogicalOr,
    /// Logical exclusive or (`MPI_LXOR`).
    LogicalXor,
    /// Bitwise and (`MPI_BAND`).
    BitAnd,
    /// Bitwise or (`MPI_BOR`).
    BitOr,
    /// Bitwise exclusive or (`MPI_BXOR`).
    BitXor,
}

impl Op {
    /// Every operation, in the order of their declaration.
    pub(crate) const ALL: [Op; 10] = [
        Op::Sum,
        Op::Product,
        Op::Min,
        Op::Max,
        Op::LogicalAnd,
        Op::LogicalOr,
        Op::LogicalXor,
        Op::BitAnd,
        Op::BitOr,
        Op::BitXor,
    ];

    fn is_bitwise(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An element type the predefined [`Op`]s reduce: the primitive integers and floats.
///
/// Sealed: user element types reduce with a [`UserOp`] instead.
pub trait Reducible: Pod + sealed::Sealed {
    /// Whether `op` is defined on this type (bitwise operations are not defined on floats).
    fn supports(op: Op) -> bool;

    /// `inout[i] = input[i] op inout[i]` for every `i`. `op` must be supported and the slices of
    /// equal length (callers check both first).
    #[doc(hidden)]
    fn combine(op: Op, input: &[Self], inout: &mut [Self]);
}

/// `inout[i] = f(input[i], inout[i])`: generic over `f`, so each operation gets a loop of its
/// own that the compiler can vectorize (through a function pointer, a 1 MiB all-reduce spent a
/// quarter of its time calling it per element).
#[inline(always)]
fn zip_apply<T: Copy>(input: &[T], inout: &mut [T], f: impl Fn(T, T) -> T) {
    for (out, &a) in inout.iter_mut().zip(input) {
        *out = f(a, *out);
    }
}

macro_rules! integer_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn supports(_: Op) -> bool {
                true
            }

            fn combine(op: Op, input: &[Self], inout: &mut [Self]) {
                match op {
                    Op::Sum => zip_apply(input, inout, <$t>::wrapping_add),
                    Op::Product => zip_apply(input, inout, <$t>::wrapping_mul),
                    Op::Min => zip_apply(input, inout, |a: $t, b| a.min(b)),
                    Op::Max => zip_apply(input, inout, |a: $t, b| a.max(b)),
                    Op::LogicalAnd => zip_apply(input, inout, |a, b| ((a != 0) && (b != 0)) as $t),
                    Op::LogicalOr => zip_apply(input, inout, |a, b| ((a != 0) || (b != 0)) as $t),
                    Op::LogicalXor => zip_apply(input, inout, |a, b| ((a != 0) != (b != 0)) as $t),
                    Op::BitAnd => zip_apply(input, inout, |a, b| a & b),
                    Op::BitOr => zip_apply(input, inout, |a, b| a | b),
                    Op::BitXor => zip_apply(input, inout, |a, b| a ^ b),
                }
            }
        }
    )*};
}

macro_rules! float_reducible {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Reducible for $t {
            fn supports(op: Op) -> bool {
                !op.is_bitwise()
            }

            fn combine(op: Op, input: &[Self], inout: &mut [Self]) {
                match op {
                    Op::Sum => zip_apply(input, inout, |a: $t, b| a + b),
                    Op::Product => zip_apply(input, inout, |a: $t, b| a * b),
                    Op::Min => zip_apply(input, inout, <$t>::min),
                    Op::Max => zip_apply(input, inout, <$t>::max),
                    Op::LogicalAnd => {
                        zip_apply(input, inout, |a, b| u8::from(a != 0.0 && b != 0.0) as $t)
                    }
                    Op::LogicalOr => {
                        zip_apply(input, inout, |a, b| u8::from(a != 0.0 || b != 0.0) as $t)
                    }
                    Op::LogicalXor => {
                        zip_apply(input, inout, |a, b| u8::from((a != 0.0) != (b != 0.0)) as $t)
                    }
                    Op::BitAnd | Op::BitOr | Op::BitXor => {
                        debug_assert!(false, "bitwise operations on floats are rejected first");
                    }
                }
            }
        }
    )*};
}

integer_reducible!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);
float_reducible!(f32, f64);

/// The combining function of a reduction: `inout = input ∘ inout`.
type Function<'f, T> = dyn Fn(&[T], &mut [T]) + Sync + 'f;

/// A user-defined reduction (`MPI_Op_create`, MPI-4.0 §6.9.5): a closure that combines two
/// vectors elementwise, `inout[i] = input[i] ∘ inout[i]`, and whether `∘` is commutative.
///
/// `∘` must be associative. A non-commutative operation is applied in rank order: the result of
/// a reduction is `a₀ ∘ a₁ ∘ … ∘ aₙ₋₁` over the participants' contributions in increasing rank.
/// A commutative one may be applied in any order. The closure may be called any number of times
/// with slices of any length (always the two of one length), from the rank's own thread.
///
/// ```
/// // 2x2 integer matrix product: associative, not commutative.
/// let matmul = runthrough::UserOp::new(
///     |input: &[[u64; 4]], inout: &mut [[u64; 4]]| {
///         for (b, a) in inout.iter_mut().zip(input) {
///             *b = [
///                 a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
///                 a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
///             ];
///         }
///     },
///     false,
/// );
/// assert!(!matmul.is_commutative());
/// ```
pub struct UserOp<'f, T> {
    function: Box<Function<'f, T>>,
    commutative: bool,
}

impl<'f, T> UserOp<'f, T> {
    /// An operation from `function` (`inout = input ∘ inout`) and whether it commutes.
    pub fn new(function: impl Fn(&[T], &mut [T]) + Sync + 'f, commutative: bool) -> Self {
        UserOp {
            function: Box::new(function),
            commutative,
        }
    }

    /// Whether the operation was declared commutative.
    pub fn is_commutative(&self) -> bool {
        self.commutative
    }
}

impl<T> std::fmt::Debug for UserOp<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserOp")
            .field("commutative", &self.commutative)
            .finish_non_exhaustive()
    }
}

/// A reduction's function over bytes that the calling thread holds and runs itself: a
/// schedule of [`Reduction::by_caller`](runthrough_core::engine::Reduction::by_caller)
/// hands it each combining step.
pub(crate) trait CombineBytes: Sync {
    /// `inout = input ∘ inout` over the bytes of two vectors of one length.
    fn combine_bytes(&self, input: &[u8], inout: &mut [u8]);
}

impl<T: Pod> CombineBytes for UserOp<'_, T> {
    /// Over the bytes of `T` elements (the schedule's buffers, at any alignment:
    /// [`apply_bytes`]).
    fn combine_bytes(&self, input: &[u8], inout: &mut [u8]) {
        apply_bytes(&*self.function, input, inout);
    }
}

impl<T: Pod> UserOp<'_, T> {
    /// What a reduction with this operation hands its schedule (an operation on `T`-sized
    /// elements that the calling thread runs), and the function that thread runs.
    pub(crate) fn by_caller(&self) -> (super::PackedOp, super::nonblocking::CallerCombine<'_>) {
        let size = std::mem::size_of::<T>();
        let packed = super::PackedOp::by_caller(size, self.commutative);
        (packed, super::nonblocking::CallerCombine(self))
    }
}

/// `inout = input ∘ inout` by `function` over the bytes of two vectors of `T` elements of
/// one length (whole elements: a reduction's start checks its buffers, and its schedule
/// compares the lengths before it combines). The bytes are read and written in place when
/// they are aligned for `T` (the allocator's alignment makes that the usual case); only a
/// misaligned side is copied.
pub(crate) fn apply_bytes<T: Pod>(
    function: &dyn Fn(&[T], &mut [T]),
    input: &[u8],
    inout: &mut [u8],
) {
    let copied: Vec<T>;
    let input: &[T] = match bytemuck::try_cast_slice(input) {
        Ok(elements) => elements,
        Err(_) => {
            copied = bytemuck::pod_collect_to_vec(input);
            &copied
        }
    };
    match bytemuck::try_cast_slice_mut::<u8, T>(inout) {
        Ok(elements) => function(input, elements),
        Err(_) => {
            let mut elements: Vec<T> = bytemuck::pod_collect_to_vec(inout);
            function(input, &mut elements);
            inout.copy_from_slice(bytemuck::cast_slice(&elements));
        }
    }
}

/// The function of a predefined operation on `T`.
pub(crate) fn builtin<T: Reducible>(op: Op) -> Result<impl Fn(&[T], &mut [T]) + Sync> {
    if !T::supports(op) {
        return Err(Error::Argument {
            reason: format!("{op:?} is not defined on {}", std::any::type_name::<T>()),
        });
    }
    Ok(move |input: &[T], inout: &mut [T]| T::combine(op, input, inout))
}

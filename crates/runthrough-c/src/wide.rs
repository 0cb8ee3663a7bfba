// SPDX-License-Identifier: MIT OR Apache-2.0
//! The predefined types that are no element of the runtime's reductions: `long double`
//! (`MPI_LONG_DOUBLE`) and the complex types (`MPI_C_FLOAT_COMPLEX`, `MPI_C_DOUBLE_COMPLEX`,
//! `MPI_C_LONG_DOUBLE_COMPLEX`, their C++ and Fortran names). Point-to-point moves them as
//! bytes; reductions with a predefined operation combine packed elements with the library's
//! own functions (MPI-4.0 §6.9.2: `MPI_MAX` / `MPI_MIN` / `MPI_SUM` / `MPI_PROD` on `long
//! double`, `MPI_SUM` / `MPI_PROD` on the complex types), as the pair types' `MPI_MINLOC` /
//! `MPI_MAXLOC` do (`crate::pairs`). `long double` arithmetic is C's (`csrc/long_double.c`):
//! Rust has no such type.

use std::os::raw::c_int;

use runthrough::PackedOp;

use crate::constants::*;
use crate::errors::Failure;

extern "C" {
    fn rt_long_double_combine(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn rt_long_double_complex_combine(op: c_int, input: *const u8, inout: *mut u8, n: usize);
    fn rt_long_double_compare(a: *const u8, b: *const u8) -> c_int;
}

/// The bytes of a `long double`.
pub(crate) const LONG_DOUBLE: usize = 16;

/// A predefined type reduced by the library's own functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wide {
    LongDouble,
    Complex32,
    Complex64,
    ComplexLongDouble,
}

impl Wide {
    pub(crate) fn of(datatype: c_int) -> Option<Wide> {
        Some(match datatype {
            MPI_LONG_DOUBLE => Wide::LongDouble,
            MPI_C_FLOAT_COMPLEX | MPI_CXX_FLOAT_COMPLEX | MPI_COMPLEX => Wide::Complex32,
            MPI_C_DOUBLE_COMPLEX | MPI_CXX_DOUBLE_COMPLEX | MPI_DOUBLE_COMPLEX => Wide::Complex64,
            MPI_C_LONG_DOUBLE_COMPLEX | MPI_CXX_LONG_DOUBLE_COMPLEX => Wide::ComplexLongDouble,
            _ => return None,
        })
    }

    /// The bytes of one element.
    pub(crate) fn size(self) -> usize {
        match self {
            Wide::LongDouble => LONG_DOUBLE,
            Wide::Complex32 => 8,
            Wide::Complex64 => 16,
            Wide::ComplexLongDouble => 2 * LONG_DOUBLE,
        }
    }

    /// The alignment C gives it: a complex number's is its parts'.
    pub(crate) fn align(self) -> usize {
        match self {
            Wide::LongDouble | Wide::ComplexLongDouble => LONG_DOUBLE,
            Wide::Complex32 => 4,
            Wide::Complex64 => 8,
        }
    }

    /// `inout[i] = input[i] op inout[i]` on packed elements.
    ///
    /// # Errors
    /// `MPI_ERR_OP` for an operation MPI does not define on the type.
    pub(crate) fn combine(self, op: c_int, input: &[u8], inout: &mut [u8]) -> Result<(), Failure> {
        self.check(op)?;
        let n = input.len().min(inout.len()) / self.size();
        match self {
            // SAFETY: `input` and `inout` hold at least `n` packed elements of the type; the C
            // functions copy each in and out (no alignment needed) and touch nothing else.
            Wide::LongDouble => unsafe {
                rt_long_double_combine(op, input.as_ptr(), inout.as_mut_ptr(), n)
            },
            // SAFETY: as above.
            Wide::ComplexLongDouble => unsafe {
                rt_long_double_complex_combine(op, input.as_ptr(), inout.as_mut_ptr(), n)
            },
            Wide::Complex32 => complex::<f32>(op, input, inout),
            Wide::Complex64 => complex::<f64>(op, input, inout),
        }
        Ok(())
    }

    /// `MPI_ERR_OP` unless MPI defines `op` on the type.
    fn check(self, op: c_int) -> Result<(), Failure> {
        let fine = match self {
            Wide::LongDouble => matches!(op, MPI_MAX | MPI_MIN | MPI_SUM | MPI_PROD),
            _ => matches!(op, MPI_SUM | MPI_PROD),
        };
        if fine {
            return Ok(());
        }
        Err(Failure::new(
            MPI_ERR_OP,
            format!(
                "operation {op} does not apply to {} (MPI defines {})",
                match self {
                    Wide::LongDouble => "long double",
                    _ => "a complex type",
                },
                match self {
                    Wide::LongDouble => "MPI_MAX, MPI_MIN, MPI_SUM and MPI_PROD",
                    _ => "MPI_SUM and MPI_PROD",
                }
            ),
        ))
    }

    /// The operation the reductions combine packed elements with.
    ///
    /// # Errors
    /// As [`Wide::combine`], before any communication.
    pub(crate) fn packed_op(self, op: c_int) -> Result<PackedOp, Failure> {
        self.check(op)?;
        Ok(PackedOp::new(self.size(), move |input, inout| {
            // Checked above: the operation applies.
            let _ = self.combine(op, input, inout);
        }))
    }
}

/// Complex `SUM` / `PROD` on packed pairs of `T` (real, imaginary).
fn complex<T>(op: c_int, input: &[u8], inout: &mut [u8])
where
    T: bytemuck::Pod + std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
    T: std::ops::Mul<Output = T>,
{
    let size = 2 * std::mem::size_of::<T>();
    for (out, x) in inout.chunks_exact_mut(size).zip(input.chunks_exact(size)) {
        let a: [T; 2] = bytemuck::pod_read_unaligned(x);
        let b: [T; 2] = bytemuck::pod_read_unaligned(out);
        let r = if op == MPI_SUM {
            [a[0] + b[0], a[1] + b[1]]
        } else {
            [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]]
        };
        out.copy_from_slice(bytemuck::bytes_of(&r));
    }
}

/// Compares two packed `long double`s (`MPI_LONG_DOUBLE_INT`'s values); unordered ones
/// (a NaN) compare equal.
pub(crate) fn compare_long_double(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    assert!(a.len() >= LONG_DOUBLE && b.len() >= LONG_DOUBLE);
    // SAFETY: both hold a packed `long double` (checked above); the C function copies them in.
    let sign = unsafe { rt_long_double_compare(a.as_ptr(), b.as_ptr()) };
    sign.cmp(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `long double` from an integer, as C converts it (through the C sum of ones).
    fn long_double(n: u32) -> Vec<u8> {
        let one = {
            // 1.0 in x87 extended precision: mantissa 1 << 63, exponent 16383.
            let mut bytes = vec![0u8; LONG_DOUBLE];
            bytes[7] = 0x80;
            bytes[8] = 0xff;
            bytes[9] = 0x3f;
            bytes
        };
        let mut sum = vec![0u8; LONG_DOUBLE];
        for _ in 0..n {
            Wide::LongDouble.combine(MPI_SUM, &one, &mut sum).unwrap();
        }
        sum
    }

    #[test]
    fn long_double_sums_products_and_extremes_are_cs() {
        let (two, three) = (long_double(2), long_double(3));
        let mut product = two.clone();
        Wide::LongDouble
            .combine(MPI_PROD, &three, &mut product)
            .unwrap();
        assert_eq!(product, long_double(6));
        let mut max = two.clone();
        Wide::LongDouble.combine(MPI_MAX, &three, &mut max).unwrap();
        assert_eq!(max, three);
        assert_eq!(compare_long_double(&two, &three), std::cmp::Ordering::Less);
        assert!(Wide::LongDouble.combine(MPI_BAND, &two, &mut max).is_err());
    }

    #[test]
    fn complex_products_follow_the_rule_of_i_squared() {
        // (1 + 2i)(3 + 4i) = -5 + 10i
        let a = bytemuck::bytes_of(&[1.0f64, 2.0]).to_vec();
        let mut b = bytemuck::bytes_of(&[3.0f64, 4.0]).to_vec();
        Wide::Complex64.combine(MPI_PROD, &a, &mut b).unwrap();
        assert_eq!(bytemuck::pod_read_unaligned::<[f64; 2]>(&b), [-5.0, 10.0]);
        assert!(Wide::Complex64.combine(MPI_MAX, &a, &mut b).is_err());
    }
}

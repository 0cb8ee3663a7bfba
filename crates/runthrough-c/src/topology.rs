// SPDX-License-Identifier: MIT OR Apache-2.0
//! Process topologies (MPI-4.0 chapter 8): `MPI_Dims_create`. Cartesian communicators are not
//! built yet.

use std::os::raw::c_int;

use crate::constants::*;
use crate::errors::{boundary, Failure};
use crate::point_to_point::array;

/// `MPI_Dims_create` (MPI-4.0 §8.5.2): fills the zero entries of `dims` so that the product of
/// all entries is `nnodes`, the filled ones as close to each other as possible and in
/// non-increasing order; positive entries are kept. Local; needs no `MPI_Init`.
///
/// # Errors
/// `MPI_ERR_DIMS` for `ndims < 0`, a negative entry, or positive entries whose product does not
/// divide `nnodes` (or, with no zero entry, is not `nnodes`); `MPI_ERR_ARG` for `nnodes < 1` or
/// a NULL `dims` with `ndims > 0`.
///
/// # Safety
/// `dims` is NULL or points at `ndims` readable and writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if ndims < 0 {
            return Err(Failure::new(
                MPI_ERR_DIMS,
                format!("ndims {ndims} is negative"),
            ));
        }
        if nnodes < 1 {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("nnodes {nnodes} is not positive"),
            ));
        }
        // SAFETY: forwarded contract.
        let dims = unsafe { array(dims, ndims, "dims")? };
        let filled = balanced(nnodes as u64, dims)?;
        dims.copy_from_slice(&filled);
        Ok(())
    })
}

/// The entries of `dims` with its zeros filled (see `MPI_Dims_create`).
fn balanced(nnodes: u64, dims: &[c_int]) -> Result<Vec<c_int>, Failure> {
    let mut fixed = 1u64;
    for &d in dims {
        if d < 0 {
            return Err(Failure::new(
                MPI_ERR_DIMS,
                format!("dimension {d} is negative"),
            ));
        }
        if d > 0 {
            fixed = fixed.saturating_mul(d as u64);
        }
    }
    let free = dims.iter().filter(|&&d| d == 0).count();
    if !nnodes.is_multiple_of(fixed) || (free == 0 && fixed != nnodes) {
        return Err(Failure::new(
            MPI_ERR_DIMS,
            format!("the given dimensions (product {fixed}) do not fit {nnodes} nodes"),
        ));
    }
    let mut best = None;
    search(nnodes / fixed, free, u64::MAX, &mut Vec::new(), &mut best);
    let mut chosen = best.map(|(_, f)| f).unwrap_or_default().into_iter();
    Ok(dims
        .iter()
        .map(|&d| match d {
            0 => chosen.next().unwrap_or(1) as c_int,
            d => d,
        })
        .collect())
}

/// Finds the factorization of `rest` into `slots` non-increasing factors, each at most `cap`,
/// that extends `prefix` with the smallest spread (largest minus smallest factor).
fn search(
    rest: u64,
    slots: usize,
    cap: u64,
    prefix: &mut Vec<u64>,
    best: &mut Option<(u64, Vec<u64>)>,
) {
    if slots == 0 {
        if rest == 1 {
            let spread = match (prefix.first(), prefix.last()) {
                (Some(first), Some(last)) => first - last,
                _ => 0,
            };
            if best.as_ref().is_none_or(|(s, _)| spread < *s) {
                *best = Some((spread, prefix.clone()));
            }
        }
        return;
    }
    if rest == 1 {
        // Every factor left is 1: no search (and no recursion per slot: `slots` is the
        // caller's ndims).
        let filled = prefix.len();
        prefix.resize(filled + slots, 1);
        search(1, 0, cap, prefix, best);
        prefix.truncate(filled);
        return;
    }
    // The divisors of `rest` up to `cap`, largest first: found up to √rest, so that a large
    // prime `nnodes` costs √nnodes steps, not nnodes.
    let mut divisors = Vec::new();
    let mut d = 1;
    while d * d <= rest {
        if rest.is_multiple_of(d) {
            divisors.extend([d, rest / d]);
        }
        d += 1;
    }
    divisors.sort_unstable_by(|a, b| b.cmp(a));
    divisors.dedup();
    // The largest remaining factor is at least the `slots`-th root of `rest`.
    for d in divisors.into_iter().filter(|&d| d <= cap) {
        let below_root = u32::try_from(slots)
            .ok()
            .and_then(|slots| u128::from(d).checked_pow(slots))
            .is_some_and(|power| power < u128::from(rest));
        if below_root {
            break;
        }
        if let (Some(first), Some((spread, _))) = (prefix.first(), best.as_ref()) {
            if first - d >= *spread {
                continue;
            }
        }
        prefix.push(d);
        search(rest / d, slots - 1, d, prefix, best);
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::balanced;

    #[test]
    fn dims_are_balanced_and_non_increasing() {
        let cases: [(u64, &[i32], &[i32]); 9] = [
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (6, &[0, 3, 0], &[2, 3, 1]),
            (12, &[0, 0, 0], &[3, 2, 2]),
            (16, &[0, 0], &[4, 4]),
            (24, &[0, 0, 0], &[4, 3, 2]),
            (1, &[0, 0, 0], &[1, 1, 1]),
            (36, &[0, 0], &[6, 6]),
            (8, &[2, 0, 2], &[2, 2, 2]),
        ];
        for (nnodes, dims, want) in cases {
            assert_eq!(balanced(nnodes, dims).unwrap(), want, "{nnodes} {dims:?}");
        }
        // Inputs a C caller can give that used to overflow, recurse per dimension or loop
        // nnodes times.
        let many = balanced(6, &[0; 200]).unwrap();
        assert_eq!(&many[..2], &[3, 2]);
        assert!(many[2..].iter().all(|&d| d == 1));
        assert!(balanced(1, &[0; 100_000]).unwrap().iter().all(|&d| d == 1));
        assert_eq!(
            balanced(2_147_483_647, &[0, 0]).unwrap(),
            [2_147_483_647, 1]
        );
        assert_eq!(balanced(1 << 30, &[0, 0]).unwrap(), [1 << 15, 1 << 15]);
        assert!(balanced(7, &[2, 0]).is_err());
        assert!(balanced(6, &[2, 2]).is_err());
        assert!(balanced(6, &[-1, 0]).is_err());
        assert_eq!(
            balanced(6, &[]).map_err(|f| f.class),
            Err(super::MPI_ERR_DIMS)
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The portable data representation "external32" (MPI-4.0 §5.2.3, §14.5.2):
//! `MPI_Pack_external`, `MPI_Unpack_external` and `MPI_Pack_external_size`.
//!
//! Every basic element is written big-endian at its external32 size, which is its size here
//! but for a C `long` (8 bytes here, 4 there: a value beyond 32 bits is `MPI_ERR_CONVERSION`,
//! never cut) and, on x86-64, `long double` (the x87 80-bit format in 16 bytes here, IEEE
//! binary128 there; read back, the fraction's 49 lowest bits are dropped: rounded toward
//! zero). Complex numbers are their two parts; a pair type its value then its C `int`.
//!
//! How: the elements are packed as `MPI_Pack` packs them (`Layout::pack_at`: the data without
//! gaps, in typemap order), then each basic element of that is converted in typemap order
//! (`Layout::each_basic` gives their kinds); unpacking converts back, then unpacks as
//! `MPI_Unpack` does. The typemap is walked by the same code as every other datatype call.

use std::ffi::{c_char, c_void, CStr};
use std::os::raw::{c_int, c_long};

use crate::constants::*;
use crate::datatypes::{input, output, Element};
use crate::derived::{layout_of, Layout, MPI_Aint};
use crate::errors::{boundary, out, Failure};
use crate::pack::range;
use crate::wide::Wide;

/// Whether `long double` is the x87 80-bit format (in 16 bytes) here.
const X87: bool = cfg!(target_arch = "x86_64");

/// How one basic element is written in external32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum External {
    /// `words` words of `word` bytes each, each written big-endian: as many bytes as here.
    Words { word: usize, words: usize },
    /// A C `long` of 8 bytes here, 4 bytes in external32 (`signed` or not).
    Long { signed: bool },
    /// `parts` x87 `long double`s (16 bytes each here) as IEEE binary128 (16 bytes each).
    X87 { parts: usize },
}

impl External {
    /// One word of `size` bytes (characters, bytes, and the parts of what a test builds).
    pub(crate) fn bytes(size: usize) -> External {
        External::Words {
            word: size,
            words: 1,
        }
    }

    /// The kind of basic type `element`.
    pub(crate) fn of_element(element: Element) -> External {
        let long = std::mem::size_of::<c_long>() == 8;
        match element {
            Element::Long if long => External::Long { signed: true },
            Element::UnsignedLong if long => External::Long { signed: false },
            other => External::bytes(other.size()),
        }
    }

    /// The kind of a `long double` or complex type.
    pub(crate) fn of_wide(wide: Wide) -> External {
        match wide {
            Wide::LongDouble if X87 => External::X87 { parts: 1 },
            Wide::ComplexLongDouble if X87 => External::X87 { parts: 2 },
            Wide::LongDouble => External::bytes(wide.size()),
            Wide::ComplexLongDouble | Wide::Complex32 | Wide::Complex64 => External::Words {
                word: wide.size() / 2,
                words: 2,
            },
        }
    }

    /// Its size here.
    pub(crate) fn native(self) -> usize {
        match self {
            External::Words { word, words } => word * words,
            External::Long { .. } => 8,
            External::X87 { parts } => 16 * parts,
        }
    }

    /// Its size in external32.
    fn external(self) -> usize {
        match self {
            External::Long { .. } => 4,
            other => other.native(),
        }
    }

    /// Writes `native` (this machine's bytes) into `to` in external32.
    ///
    /// # Errors
    /// `MPI_ERR_CONVERSION` for a `long` beyond 32 bits.
    fn encode(self, native: &[u8], to: &mut [u8]) -> Result<(), Failure> {
        match self {
            External::Words { word, .. } => {
                for (from, to) in native.chunks_exact(word).zip(to.chunks_exact_mut(word)) {
                    to.copy_from_slice(from);
                    if cfg!(target_endian = "little") {
                        to.reverse();
                    }
                }
            }
            External::Long { signed } => {
                let bits = u64::from_ne_bytes(native.try_into().expect("8 bytes"));
                let narrow = if signed {
                    i32::try_from(bits as i64).map(|v| v as u32).ok()
                } else {
                    u32::try_from(bits).ok()
                };
                let narrow = narrow.ok_or_else(|| {
                    let value = if signed {
                        (bits as i64).to_string()
                    } else {
                        bits.to_string()
                    };
                    Failure::new(
                        MPI_ERR_CONVERSION,
                        format!("the C long {value} does not fit the 4 bytes external32 gives it"),
                    )
                })?;
                to.copy_from_slice(&narrow.to_be_bytes());
            }
            External::X87 { .. } => {
                for (from, to) in native.chunks_exact(16).zip(to.chunks_exact_mut(16)) {
                    to.copy_from_slice(&x87_to_binary128(from).to_be_bytes());
                }
            }
        }
        Ok(())
    }

    /// Writes `external` (external32 bytes) into `to` in this machine's representation.
    fn decode(self, external: &[u8], to: &mut [u8]) {
        match self {
            // The same transformation both ways: each word reversed (or kept).
            External::Words { .. } => self.encode(external, to).expect("words always convert"),
            External::Long { signed } => {
                let narrow = u32::from_be_bytes(external.try_into().expect("4 bytes"));
                let wide = if signed {
                    narrow as i32 as i64 as u64
                } else {
                    u64::from(narrow)
                };
                to.copy_from_slice(&wide.to_ne_bytes());
            }
            External::X87 { .. } => {
                for (from, to) in external.chunks_exact(16).zip(to.chunks_exact_mut(16)) {
                    let value = u128::from_be_bytes(from.try_into().expect("16 bytes"));
                    to.copy_from_slice(&binary128_to_x87(value));
                }
            }
        }
    }
}

/// An x87 extended value (its 10 bytes little-endian in 16: a 64-bit significand with an
/// explicit integer bit, then sign and 15-bit exponent) as IEEE binary128 bits (the same sign
/// and exponent bias; the significand's 63 fraction bits at the top of the 112).
fn x87_to_binary128(native: &[u8]) -> u128 {
    let significand = u64::from_le_bytes(native[..8].try_into().expect("8 bytes"));
    let sign_exponent = u16::from_le_bytes(native[8..10].try_into().expect("2 bytes"));
    let mut exponent = u128::from(sign_exponent & 0x7fff);
    // A pseudo-denormal (exponent 0, integer bit set) has the value of exponent 1.
    if exponent == 0 && significand >> 63 == 1 {
        exponent = 1;
    }
    let sign = u128::from(sign_exponent >> 15);
    let fraction = u128::from(significand & (u64::MAX >> 1)) << 49;
    sign << 127 | exponent << 112 | fraction
}

/// IEEE binary128 bits as an x87 extended value in 16 bytes (the 6 above the 10 zero); the
/// fraction's 49 lowest bits are dropped.
fn binary128_to_x87(value: u128) -> [u8; 16] {
    let sign_exponent = (value >> 112) as u16;
    let integer = u64::from(sign_exponent & 0x7fff != 0) << 63;
    let fraction = ((value >> 49) as u64) & (u64::MAX >> 1);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&(integer | fraction).to_le_bytes());
    bytes[8..10].copy_from_slice(&sign_exponent.to_le_bytes());
    bytes
}

/// The kinds of the basic elements of one element of `layout`, in typemap order.
fn kinds(layout: &Layout) -> Vec<External> {
    let mut kinds = Vec::new();
    layout.each_basic(&mut |kind| {
        kinds.push(kind);
        true
    });
    kinds
}

/// The external32 bytes of `count` elements of `layout`.
fn external_size(layout: &Layout, count: usize) -> Result<usize, Failure> {
    let one: usize = kinds(layout).iter().map(|k| k.external()).sum();
    one.checked_mul(count)
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the packed size is too large"))
}

/// The `datarep` argument: only "external32" is known.
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string.
unsafe fn datarep(datarep: *const c_char) -> Result<(), Failure> {
    if datarep.is_null() {
        return Err(Failure::null("datarep"));
    }
    // SAFETY: not NULL, NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(datarep) };
    if name.to_bytes() != b"external32" {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!(
                "data representation {:?}: only \"external32\" is known",
                name.to_string_lossy()
            ),
        ));
    }
    Ok(())
}

fn count_of(count: c_int) -> Result<usize, Failure> {
    usize::try_from(count)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))
}

/// `MPI_Pack_external`: appends `incount` elements of `datatype` at `inbuf`, in external32, to
/// `outbuf` at `*position`, and advances `*position`.
///
/// # Errors
/// `MPI_ERR_ARG` for another `datarep`, a NULL pointer, a negative size or position;
/// `MPI_ERR_TRUNCATE` when they do not fit in `outsize` bytes; `MPI_ERR_CONVERSION` for a
/// `long` beyond 32 bits (nothing written then); `MPI_ERR_COUNT`, `MPI_ERR_TYPE`,
/// `MPI_ERR_BUFFER`.
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string; `inbuf` is NULL or points at the elements,
/// readable; `outbuf` is NULL or points at `outsize` writable bytes; `position` is NULL or
/// points at a readable and writable `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external(
    datarep_name: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    datatype: c_int,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    position: *mut MPI_Aint,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe { datarep(datarep_name)? };
        // SAFETY: checked for NULL by `out`.
        let position = unsafe { out(position, "position")? };
        let count = count_of(incount)?;
        let layout = layout_of(datatype, true)?;
        let window = layout.window(count)?;
        // SAFETY: forwarded contract; used only during this call.
        let native = layout.pack_at(count, unsafe { window.read(inbuf)? }, window.low)?;
        let mut external = vec![0u8; external_size(&layout, count)?];
        let kinds = kinds(&layout);
        let (mut from, mut to) = (0, 0);
        for _ in 0..count {
            for &kind in &kinds {
                let (n, e) = (kind.native(), kind.external());
                kind.encode(&native[from..from + n], &mut external[to..to + e])?;
                (from, to) = (from + n, to + e);
            }
        }
        let (at, end) = range(outsize as i64, position.read() as i64, external.len())?;
        // SAFETY: forwarded contract; used only during this call.
        let packed = unsafe { output(outbuf, end)? };
        packed[at..end].copy_from_slice(&external);
        position.write(end as MPI_Aint);
        Ok(())
    })
}

/// `MPI_Unpack_external`: `outcount` elements of `datatype`, read in external32 from `inbuf`
/// at `*position`, into `outbuf`; advances `*position`.
///
/// # Errors
/// `MPI_ERR_TRUNCATE` when `insize` bytes do not hold them; as `MPI_Pack_external` otherwise.
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string; `inbuf` is NULL or points at `insize`
/// readable bytes; `outbuf` is NULL or points at the elements, writable; `position` is NULL or
/// points at a readable and writable `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_external(
    datarep_name: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    position: *mut MPI_Aint,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe { datarep(datarep_name)? };
        // SAFETY: checked for NULL by `out`.
        let position = unsafe { out(position, "position")? };
        let count = count_of(outcount)?;
        let layout = layout_of(datatype, true)?;
        let (at, end) = range(
            insize as i64,
            position.read() as i64,
            external_size(&layout, count)?,
        )?;
        // SAFETY: forwarded contract; only read, during this call.
        let external = unsafe { input(inbuf, end)? };
        let mut native = vec![0u8; layout.size * count];
        let kinds = kinds(&layout);
        let (mut from, mut to) = (at, 0);
        for _ in 0..count {
            for &kind in &kinds {
                let (n, e) = (kind.native(), kind.external());
                kind.decode(&external[from..from + e], &mut native[to..to + n]);
                (from, to) = (from + e, to + n);
            }
        }
        let window = layout.window(count)?;
        // SAFETY: forwarded contract; used only during this call.
        let buffer = unsafe { window.write(outbuf)? };
        layout.unpack_at(count, &native, buffer, window.low);
        position.write(end as MPI_Aint);
        Ok(())
    })
}

/// `MPI_Pack_external_size`: the bytes `MPI_Pack_external` writes for `incount` elements of
/// `datatype`.
///
/// # Errors
/// `MPI_ERR_ARG` for another `datarep` or a NULL pointer; `MPI_ERR_COUNT`, `MPI_ERR_TYPE`.
///
/// # Safety
/// `datarep` is NULL or a NUL-terminated string; `size` is NULL or points at a writable
/// `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_size(
    datarep_name: *const c_char,
    incount: c_int,
    datatype: c_int,
    size: *mut MPI_Aint,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe { datarep(datarep_name)? };
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        let layout = layout_of(datatype, false)?;
        size.write(external_size(&layout, count_of(incount)?)? as MPI_Aint);
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("external32.rs");

#[cfg(test)]
mod tests {
    use super::*;

    /// 1.5 and -2^-16382 (the smallest normal) and a denormal and infinity cross both ways;
    /// the x87 bytes of 1.5 are those the C compiler lays out.
    #[test]
    fn x87_long_doubles_become_binary128_and_back() {
        let x87 = |significand: u64, sign_exponent: u16| {
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(&significand.to_le_bytes());
            bytes[8..10].copy_from_slice(&sign_exponent.to_le_bytes());
            bytes
        };
        let cases = [
            // 1.5: exponent 16383, significand 1.1 binary.
            (x87(0xC000_0000_0000_0000, 0x3FFF), 0x3FFF_8000u128 << 96),
            // -2^-16382: the smallest normal, negative.
            (x87(0x8000_0000_0000_0000, 0x8001), 0x8001u128 << 112),
            // A denormal: exponent 0, integer bit clear.
            (x87(0x0000_0000_0000_0001, 0x0000), 1u128 << 49),
            // +infinity.
            (x87(0x8000_0000_0000_0000, 0x7FFF), 0x7FFFu128 << 112),
        ];
        for (native, binary128) in cases {
            assert_eq!(x87_to_binary128(&native), binary128, "{native:x?}");
            assert_eq!(binary128_to_x87(binary128), native, "{binary128:x}");
        }
        // Fraction bits below the x87 significand's are dropped (toward zero).
        assert_eq!(
            binary128_to_x87((0x3FFF_8000u128 << 96) | 1),
            cases[0].0,
            "rounded toward zero"
        );
    }

    #[test]
    fn words_are_big_endian_and_longs_narrow_or_refuse() {
        let mut to = [0u8; 8];
        External::Words { word: 4, words: 2 }
            .encode(&[1, 2, 3, 4, 5, 6, 7, 8], &mut to)
            .unwrap();
        assert_eq!(to, [4, 3, 2, 1, 8, 7, 6, 5]);
        let long = External::Long { signed: true };
        let mut four = [0u8; 4];
        long.encode(&(-2i64).to_ne_bytes(), &mut four).unwrap();
        assert_eq!(four, [0xff, 0xff, 0xff, 0xfe]);
        let mut back = [0u8; 8];
        long.decode(&four, &mut back);
        assert_eq!(i64::from_ne_bytes(back), -2);
        let refused = long
            .encode(&(1i64 << 40).to_ne_bytes(), &mut four)
            .unwrap_err();
        assert_eq!(refused.class, MPI_ERR_CONVERSION);
        let unsigned = External::Long { signed: false };
        assert!(unsigned.encode(&u64::MAX.to_ne_bytes(), &mut four).is_err());
        unsigned
            .encode(&u64::from(u32::MAX).to_ne_bytes(), &mut four)
            .unwrap();
        unsigned.decode(&four, &mut back);
        assert_eq!(u64::from_ne_bytes(back), u64::from(u32::MAX));
    }
}

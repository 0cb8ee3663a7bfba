// SPDX-License-Identifier: MIT OR Apache-2.0
//! Checksums that see every bit: FNV-1a over the values' bit patterns, in order.

/// FNV-1a (64-bit) over the bit patterns of `values`, in order: equal iff bit-for-bit equal
/// (up to hash collisions).
pub fn fnv1a_f64(values: &[f64]) -> u64 {
    fnv1a(values.iter().map(|v| v.to_bits()))
}

/// FNV-1a (64-bit) over the little-endian bytes of `words`, in order.
pub fn fnv1a(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for word in words {
        for byte in word.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// Whether two fields are equal bit for bit (so `-0.0 != 0.0` and NaNs compare by pattern).
pub fn bitwise_equal(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

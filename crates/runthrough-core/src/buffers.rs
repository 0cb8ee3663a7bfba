// SPDX-License-Identifier: MIT OR Apache-2.0
//! Large message buffers, kept for the next message instead of given back to the allocator.
//!
//! A rank that streams large messages would otherwise allocate a fresh buffer per message on
//! each side: the sender's copy of the user's data and the receiver's payload. With glibc, a
//! buffer of a megabyte is mapped or carved from the heap's top depending on its history, and
//! each fresh one costs a page fault per 4 KiB and zeroing; measured on the 1 MiB bandwidth
//! between two processes, that was half the time per message (about 520–760 µs against
//! 270–350 µs with the allocator told to keep such memory). So buffers of
//! [`MIN_LEN`]..=[`MAX_CAPACITY`] bytes go back to a small process-wide stock when their message
//! is done, and the next large message takes one.
//!
//! A buffer from the stock holds the bytes of an earlier message: [`buffer`] gives initialized
//! memory whose contents are unspecified, and every user overwrites all of it before anyone
//! reads it (the decoder fills a payload before it hands the packet on; [`copy_of`] copies the
//! whole source). Nothing here affects what a protocol decides.

use std::sync::Mutex;

/// Smaller buffers are left to the allocator (its own caches serve them well).
pub const MIN_LEN: usize = 64 << 10;
/// Larger buffers are not kept (a rare huge message must not pin its memory).
pub const MAX_CAPACITY: usize = 64 << 20;
/// How many buffers the stock keeps at most: enough for a window of messages in flight (a
/// stream of 64 messages of 256 KiB leaves 64 payloads at the receiver at once; with a stock
/// of 16 the other 48 were fresh allocations, their pages faulted in, at every window).
pub const KEEP: usize = 256;
/// How many bytes of buffers the stock keeps at most, whatever their number.
pub const KEEP_BYTES: usize = 128 << 20;

static STOCK: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn stock() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    STOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A buffer of `len` initialized bytes with unspecified contents: from the stock when one is
/// large enough (no allocation, no page fault, no zeroing of what it held), else new.
pub fn buffer(len: usize) -> Vec<u8> {
    if len >= MIN_LEN {
        let taken = {
            let mut stock = stock();
            // The smallest that fits: a large one stays for a large message.
            let fit = (0..stock.len())
                .filter(|&i| stock[i].capacity() >= len)
                .min_by_key(|&i| stock[i].capacity());
            fit.map(|i| stock.swap_remove(i))
        };
        if let Some(mut b) = taken {
            // Only bytes beyond what it held are zeroed (none when it held `len` or more).
            b.resize(len, 0);
            return b;
        }
    }
    vec![0; len]
}

/// A copy of `bytes` in a buffer from [`buffer`] (a small one straight from the allocator,
/// not zeroed first: half the cost of an 8-byte send's copy was `calloc`).
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() < MIN_LEN {
        return bytes.to_vec();
    }
    let mut b = buffer(bytes.len());
    b.copy_from_slice(bytes);
    b
}

/// Gives a buffer whose message is done back to the stock (kept if it is large, and the stock
/// has room; dropped otherwise).
pub fn give_back(b: Vec<u8>) {
    let capacity = b.capacity();
    if !(MIN_LEN..=MAX_CAPACITY).contains(&capacity) || b.len() < MIN_LEN {
        return;
    }
    let mut stock = stock();
    let kept: usize = stock.iter().map(Vec::capacity).sum();
    if stock.len() < KEEP && kept + capacity <= KEEP_BYTES {
        stock.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stock is process-wide: one test walks through every rule, so that no other test
    /// of this crate's binary takes or gives buffers in between.
    #[test]
    fn large_buffers_are_reused_small_and_huge_ones_are_not() {
        stock().clear();
        let a = copy_of(&vec![7u8; MIN_LEN * 2]);
        let at = a.as_ptr();
        give_back(a);
        // A smaller message reuses it, truncated; its old bytes are there but every byte is
        // initialized, and a copy overwrites all of them.
        let b = buffer(MIN_LEN + 3);
        assert_eq!(b.as_ptr(), at, "reused");
        assert_eq!(b.len(), MIN_LEN + 3);
        give_back(b);
        let c = copy_of(&vec![1u8; MIN_LEN]);
        assert_eq!(c.as_ptr(), at);
        assert!(c.iter().all(|&x| x == 1));
        give_back(c);
        // A larger one than any in stock is new, and zeroed.
        let d = buffer(MIN_LEN * 4);
        assert_ne!(d.as_ptr(), at);
        assert!(d.iter().all(|&x| x == 0));
        // Small and huge buffers are not kept.
        stock().clear();
        give_back(vec![0u8; MIN_LEN - 1]);
        give_back(Vec::with_capacity(MAX_CAPACITY + 1));
        assert!(stock().is_empty());
        // The stock is bounded, in number and in bytes.
        for _ in 0..KEEP + 3 {
            give_back(vec![0u8; MIN_LEN]);
        }
        assert_eq!(stock().len(), KEEP);
        // Small requests never take from it.
        assert_eq!(buffer(10), vec![0u8; 10]);
        assert_eq!(stock().len(), KEEP);
        stock().clear();
        for _ in 0..3 {
            // Half the byte bound each (untouched pages: nothing is really allocated).
            let mut big = Vec::with_capacity(KEEP_BYTES / 2);
            big.resize(MIN_LEN, 0u8);
            give_back(big);
        }
        assert_eq!(stock().len(), 2, "the third would pass the byte bound");
        stock().clear();
    }
}

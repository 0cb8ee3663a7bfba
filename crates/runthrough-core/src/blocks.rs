// SPDX-License-Identifier: MIT OR Apache-2.0
//! Sequences of byte blocks in one message, for the tree gathers and scatters and Bruck's
//! all-gather: each block is its length (8 bytes, little-endian) then its bytes, so that inner
//! ranks of a tree forward blocks whose sizes only the root knows (gatherv, scatterv).

use crate::{Error, Result};

/// Appends one block.
pub fn push(out: &mut Vec<u8>, block: &[u8]) {
    out.extend_from_slice(&(block.len() as u64).to_le_bytes());
    out.extend_from_slice(block);
}

/// Encodes `blocks` in order; a large message into a buffer from the process's stock
/// ([`crate::buffers::buffer`]), a small one without zeroing it first.
pub fn encode<'b>(blocks: impl IntoIterator<Item = &'b [u8]> + Clone) -> Vec<u8> {
    let len = blocks.clone().into_iter().map(|b| 8 + b.len()).sum();
    let mut out = if len >= crate::buffers::MIN_LEN {
        let mut stocked = crate::buffers::buffer(len);
        stocked.clear();
        stocked
    } else {
        Vec::with_capacity(len)
    };
    for block in blocks {
        push(&mut out, block);
    }
    out
}

/// Splits a message into its blocks; `expected` of them.
///
/// # Errors
/// `Error::Internal` for a malformed message (a peer of this runtime never sends one).
pub fn decode(bytes: &[u8], expected: usize) -> Result<Vec<&[u8]>> {
    let malformed = || Error::Internal {
        reason: "malformed collective message".into(),
    };
    let mut blocks = Vec::with_capacity(expected);
    let mut rest = bytes;
    while !rest.is_empty() {
        let (header, tail) = rest.split_first_chunk::<8>().ok_or_else(malformed)?;
        let len = usize::try_from(u64::from_le_bytes(*header)).map_err(|_| malformed())?;
        if len > tail.len() {
            return Err(malformed());
        }
        let (block, tail) = tail.split_at(len);
        blocks.push(block);
        rest = tail;
    }
    if blocks.len() != expected {
        return Err(malformed());
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_malformed_messages_are_errors() {
        let blocks: [&[u8]; 3] = [b"ab", b"", b"cde"];
        let message = encode(blocks.iter().copied());
        assert_eq!(decode(&message, 3).unwrap(), blocks);
        assert!(
            decode(&message, 2).is_err(),
            "a count the message does not hold"
        );
        assert!(
            decode(&message[..message.len() - 1], 3).is_err(),
            "cut short"
        );
        assert!(decode(&[1, 2, 3], 1).is_err(), "a header cut short");
        assert_eq!(decode(&[], 0).unwrap(), Vec::<&[u8]>::new());
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Sequences of byte blocks in one message, for the tree gathers and scatters: each block is
//! its length (8 bytes, little-endian) then its bytes, so that inner ranks of a tree forward
//! blocks whose sizes only the root knows (gatherv, scatterv).

use runthrough_core::{Error, Result};

/// Appends one block.
pub(super) fn push(out: &mut Vec<u8>, block: &[u8]) {
    out.extend_from_slice(&(block.len() as u64).to_le_bytes());
    out.extend_from_slice(block);
}

/// Encodes `blocks` in order.
pub(super) fn encode<'b>(blocks: impl IntoIterator<Item = &'b [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for block in blocks {
        push(&mut out, block);
    }
    out
}

/// Splits a message into its blocks; `expected` of them.
///
/// # Errors
/// `Error::Internal` for a malformed message (a peer of this runtime never sends one).
pub(super) fn decode(bytes: &[u8], expected: usize) -> Result<Vec<&[u8]>> {
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

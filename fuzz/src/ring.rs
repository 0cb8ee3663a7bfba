// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `ring_reader` target: a corrupt writer (SPEC §4 bad input, issue 12). The input is the
//! whole shared region as a peer left it, then a script of words the peer overwrites between
//! reads; the reader must return entries or `Corrupt`, never panic, never read outside the
//! region, never hang; a writer attached to the same garbage must not either.
//!
//! Input: byte 0 picks the capacity (64 << (b % 6): 64 B to 2 KiB); byte 1, bit 0 set: the
//! magic and capacity words are made valid (so the fuzzer gets past attaching); then the
//! region's bytes (zero-padded); then 10-byte mutations (a 16-bit word index, a 64-bit value),
//! one applied after each read.

use runthrough_net::shm::{self, Consumer, HeapRegion, Memory, Producer, Push, RingError};
use std::sync::atomic::Ordering;

/// Reads at most this many times (each read returns; this only bounds a run).
const MAX_READS: usize = 4096;

/// The target: see the module docs.
pub fn ring_reader_target(data: &[u8]) {
    let (Some(&size), Some(&flags)) = (data.first(), data.get(1)) else {
        return;
    };
    let capacity = 64usize << (size % 6);
    let len = shm::region_len(capacity);
    let rest = &data[2..];
    let (region_bytes, script) = rest.split_at(rest.len().min(len));
    let mut bytes = region_bytes.to_vec();
    bytes.resize(len, 0);
    if flags & 1 == 1 {
        bytes[0..8].copy_from_slice(&shm::ring::MAGIC.to_le_bytes());
        bytes[8..16].copy_from_slice(&(capacity as u64).to_le_bytes());
    }
    let region = HeapRegion::from_bytes(&bytes);
    let mut mutations = script.chunks_exact(10);

    match Consumer::attach(&region) {
        Err(RingError::Corrupt { .. }) => {}
        Err(other) => panic!("a valid layout refused: {other}"),
        Ok(mut consumer) => {
            let mut out = Vec::new();
            for _ in 0..MAX_READS {
                match consumer.try_pop(&mut out) {
                    Ok(Some(_)) => assert!(out.len() <= shm::max_payload(capacity)),
                    Ok(None) => {}
                    Err(error @ RingError::Corrupt { .. }) => {
                        let _ = error.to_string();
                        // Once corrupt, asking again must still be an answer, not a panic.
                        let _ = consumer.try_pop(&mut out);
                        break;
                    }
                    Err(other) => panic!("a reader error other than Corrupt: {other}"),
                }
                let Some(mutation) = mutations.next() else {
                    break;
                };
                let word = u16::from_le_bytes([mutation[0], mutation[1]]) as usize % (len / 8);
                let value = u64::from_le_bytes(mutation[2..10].try_into().unwrap());
                region.store(word * 8, value, Ordering::Release);
            }
        }
    }

    // A writer on the same garbage: pushes end in Done, Full, TooLarge or Corrupt.
    if let Ok(mut producer) = Producer::attach(&region) {
        for (i, &size) in region_bytes.iter().take(8).enumerate() {
            let payload = vec![i as u8; size as usize * 4];
            match producer.try_push(i as u8, &payload) {
                Ok(Push::Done | Push::Full) | Err(RingError::TooLarge { .. }) => {}
                Err(RingError::Corrupt { .. }) => break,
                Err(other) => panic!("a writer error: {other}"),
            }
        }
    }
}

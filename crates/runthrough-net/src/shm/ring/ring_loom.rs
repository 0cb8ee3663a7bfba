// SPDX-License-Identifier: MIT OR Apache-2.0
//! The publish/consume ordering under loom's model checker: every interleaving (within a
//! preemption bound) and every value the C11 memory model lets a load return.
//!
//! Run it with `RUSTFLAGS="--cfg loom" cargo test -p runthrough-net --release ring_loom`
//! (preemption bound 3, under a second; `LOOM_MAX_PREEMPTIONS=N` sets another bound).
//!
//! The ring core is generic over [`Memory`]; here every word of the region is a loom atomic
//! and payload bytes travel in relaxed word stores and loads, so a payload read that the
//! writer's release and the reader's acquire did not order could see a stale word, and the
//! check of the payload would fail. (Weakening the tail and header stores to `Relaxed` makes
//! this test fail: that is how it was checked to be able to fail.)

use super::*;
use loom::sync::atomic::AtomicU64 as LoomU64;
use loom::sync::Arc;

/// A region of loom atomics, one per 8-byte word.
struct LoomMemory {
    words: Vec<LoomU64>,
}

impl LoomMemory {
    fn new(len: usize) -> Self {
        LoomMemory {
            words: (0..len / 8).map(|_| LoomU64::new(0)).collect(),
        }
    }
}

impl Memory for LoomMemory {
    fn size(&self) -> usize {
        self.words.len() * 8
    }
    fn load(&self, at: usize, order: Ordering) -> u64 {
        self.words[at / 8].load(order)
    }
    fn store(&self, at: usize, value: u64, order: Ordering) {
        self.words[at / 8].store(value, order)
    }
    fn write(&self, at: usize, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.words[at / 8 + i].store(u64::from_le_bytes(word), Ordering::Relaxed);
        }
    }
    fn read(&self, at: usize, out: &mut [u8]) {
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let word = self.words[at / 8 + i].load(Ordering::Relaxed).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

impl Memory for Arc<LoomMemory> {
    fn size(&self) -> usize {
        (**self).size()
    }
    fn load(&self, at: usize, order: Ordering) -> u64 {
        (**self).load(at, order)
    }
    fn store(&self, at: usize, value: u64, order: Ordering) {
        (**self).store(at, value, order)
    }
    fn write(&self, at: usize, bytes: &[u8]) {
        (**self).write(at, bytes)
    }
    fn read(&self, at: usize, out: &mut [u8]) {
        (**self).read(at, out)
    }
}

/// The entries of the model: 24, 16 and 16 bytes in a 64-byte ring, so the third must wait
/// for the reader to free space (the head's release/acquire) and goes after a padding entry
/// (the wrap), and every payload word is checked.
fn entries() -> Vec<Vec<u8>> {
    vec![
        (1..=24).collect(),
        (101..=116).collect(),
        (201..=216).collect(),
    ]
}

/// Semantics §4 / issue 12: an entry becomes visible only once published, and then whole: in every
/// interleaving the reader gets exactly the written entries, in order, with their payloads,
/// and never a `Corrupt` from a half-seen entry or counter.
#[test]
fn ring_loom_publish_consume() {
    let mut builder = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(|| {
        let memory = Arc::new(LoomMemory::new(region_len(64)));
        init(&memory).unwrap();
        let mut producer = Producer::attach(memory.clone()).unwrap();
        let mut consumer = Consumer::attach(memory).unwrap();
        let writer = loom::thread::spawn(move || {
            for (tag, bytes) in entries().iter().enumerate() {
                while producer.try_push(tag as u8, bytes).unwrap() == Push::Full {
                    loom::thread::yield_now();
                }
            }
        });
        let mut out = Vec::new();
        for (tag, bytes) in entries().iter().enumerate() {
            loop {
                match consumer.try_pop(&mut out).unwrap() {
                    Some(got) => {
                        assert_eq!(got, tag as u8);
                        assert_eq!(&out, bytes);
                        break;
                    }
                    None => loom::thread::yield_now(),
                }
            }
        }
        writer.join().unwrap();
        assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
    });
}

/// A writer killed inside an entry, in the model: the reader, racing with it, sees the first
/// entry or nothing, never the unpublished one.
#[test]
fn ring_loom_unpublished_entry_stays_invisible() {
    let mut builder = loom::model::Builder::new();
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(|| {
        let memory = Arc::new(LoomMemory::new(region_len(64)));
        init(&memory).unwrap();
        let mut producer = Producer::attach(memory.clone()).unwrap();
        let mut consumer = Consumer::attach(memory).unwrap();
        let writer = loom::thread::spawn(move || {
            assert_eq!(producer.try_push(1, b"published").unwrap(), Push::Done);
            producer.write_unpublished(2, b"torn entry");
        });
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..3 {
            if let Some(tag) = consumer.try_pop(&mut out).unwrap() {
                seen.push((tag, out.clone()));
            }
            loom::thread::yield_now();
        }
        writer.join().unwrap();
        while let Some(tag) = consumer.try_pop(&mut out).unwrap() {
            seen.push((tag, out.clone()));
        }
        assert_eq!(seen, vec![(1, b"published".to_vec())]);
    });
}

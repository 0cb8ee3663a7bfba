// SPDX-License-Identifier: MIT OR Apache-2.0
//! The ring against a model, a writer killed inside an entry, a corrupt writer field by field,
//! concurrent writers, two-thread stress and the doorbell.

use super::*;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

fn ring(
    capacity: usize,
) -> (
    Producer<Arc<HeapRegion>>,
    Consumer<Arc<HeapRegion>>,
    Arc<HeapRegion>,
) {
    let region = Arc::new(HeapRegion::zeroed(region_len(capacity)));
    init(&region).unwrap();
    let producer = Producer::attach(region.clone()).unwrap();
    let consumer = Consumer::attach(region.clone()).unwrap();
    (producer, consumer, region)
}

/// Recognisable payload bytes for entry number `seq`.
fn payload(seq: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seq.wrapping_mul(31).wrapping_add(i as u64 * 7)) as u8)
        .collect()
}

/// The writer's space rule as the docs state it: an entry of footprint `f` at offset `o` needs
/// `f` bytes free, or `C - o + f` when it does not fit before the end (the padding).
struct SpaceModel {
    capacity: u64,
    head: u64,
    tail: u64,
    /// The footprint (padding included) of each entry in flight, in order.
    sizes: VecDeque<u64>,
}

impl SpaceModel {
    fn push(&mut self, len: usize) -> bool {
        let size = footprint(len) as u64;
        let offset = self.tail % self.capacity;
        let to_end = self.capacity - offset;
        let needed = if size <= to_end { size } else { to_end + size };
        if self.capacity - (self.tail - self.head) < needed {
            return false;
        }
        self.tail += needed;
        self.sizes.push_back(needed);
        true
    }
    fn pop(&mut self) {
        if let Some(size) = self.sizes.pop_front() {
            self.head += size;
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push(usize, u8),
    Pop,
}

fn ops(capacity: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..=capacity, any::<u8>()).prop_map(|(len, tag)| Op::Push(len, tag)),
        // Small entries too, so the ring fills with many.
        2 => (0..=24usize, any::<u8>()).prop_map(|(len, tag)| Op::Push(len, tag)),
        4 => Just(Op::Pop),
    ];
    proptest::collection::vec(op, 0..200)
}

/// Moves an empty ring's position to `offset` with header-only entries (footprint 8 each).
fn advance(
    producer: &mut Producer<Arc<HeapRegion>>,
    consumer: &mut Consumer<Arc<HeapRegion>>,
    offset: usize,
) {
    let mut out = Vec::new();
    for _ in 0..offset / 8 {
        assert_eq!(producer.try_push(0, &[]).unwrap(), Push::Done);
        assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any sequence of pushes (sizes 0..=capacity) and pops, from any starting offset, against
    /// a `VecDeque` model: the reader returns exactly the entries written, in order, with their
    /// tags; the writer refuses exactly the entries above `max_payload` and reports `Full`
    /// exactly when the documented space rule says so; an emptied ring reads `None`.
    #[test]
    fn ring_matches_a_fifo_model(
        capacity_log in 6u32..=10,
        start_slot in 0usize..128,
        ops in ops(1024),
    ) {
        let capacity = 1usize << capacity_log;
        let (mut producer, mut consumer, _region) = ring(capacity);
        let start = (start_slot * 8) % capacity;
        advance(&mut producer, &mut consumer, start);
        let mut space = SpaceModel { capacity: capacity as u64, head: start as u64, tail: start as u64, sizes: VecDeque::new() };
        let mut model: VecDeque<(u8, Vec<u8>)> = VecDeque::new();
        let mut seq = 0u64;
        let mut out = Vec::new();
        for op in ops {
            match op {
                Op::Push(len, tag) => {
                    let len = len.min(capacity);
                    let bytes = payload(seq, len);
                    seq += 1;
                    if len > max_payload(capacity) {
                        prop_assert_eq!(
                            producer.try_push(tag, &bytes),
                            Err(RingError::TooLarge { len, max: max_payload(capacity) })
                        );
                        continue;
                    }
                    let fits = space.push(len);
                    let pushed = producer.try_push(tag, &bytes).unwrap();
                    prop_assert_eq!(pushed == Push::Done, fits, "len {} model {:?}", len, (space.head, space.tail));
                    // An empty ring always takes the largest entry.
                    prop_assert!(fits || !model.is_empty());
                    if fits {
                        model.push_back((tag, bytes));
                    }
                }
                Op::Pop => {
                    let got = consumer.try_pop(&mut out).unwrap();
                    match model.pop_front() {
                        Some((tag, bytes)) => {
                            prop_assert_eq!(got, Some(tag));
                            prop_assert_eq!(&out, &bytes);
                            space.pop();
                        }
                        None => prop_assert_eq!(got, None),
                    }
                }
            }
        }
        while let Some((tag, bytes)) = model.pop_front() {
            prop_assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(tag));
            prop_assert_eq!(&out, &bytes);
        }
        prop_assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
    }
}

/// Wrap-around at every offset, exhaustively on a small ring: from each 8-byte offset, an entry
/// of every length up to the maximum goes through intact (with a padding entry where needed).
#[test]
fn every_length_from_every_offset() {
    let capacity = 128;
    let mut out = Vec::new();
    for offset in (0..capacity).step_by(8) {
        for len in 0..=max_payload(capacity) {
            let (mut producer, mut consumer, _region) = ring(capacity);
            advance(&mut producer, &mut consumer, offset);
            let bytes = payload(len as u64, len);
            assert_eq!(producer.try_push(9, &bytes).unwrap(), Push::Done);
            assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(9));
            assert_eq!(out, bytes, "offset {offset} len {len}");
            // And the next entry, from wherever that one left the ring.
            assert_eq!(
                producer.try_push(10, &bytes[..len / 3]).unwrap(),
                Push::Done
            );
            assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(10));
            assert_eq!(out, &bytes[..len / 3]);
            assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
        }
    }
}

/// A writer killed inside an entry (payload and header written, tail not published) leaves
/// nothing the reader can take; a new writer attached to the same ring (the reset) overwrites
/// the remains, and its entry is read intact and alone.
#[test]
fn writer_killed_mid_entry_leaves_nothing() {
    let (mut producer, mut consumer, region) = ring(256);
    let mut out = Vec::new();
    assert_eq!(producer.try_push(1, b"first").unwrap(), Push::Done);
    producer.write_unpublished(2, b"never published");
    assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(1));
    assert_eq!(out, b"first");
    assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
    assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
    drop(producer);
    let mut replacement = Producer::attach(region.clone()).unwrap();
    assert_eq!(replacement.try_push(3, b"after").unwrap(), Push::Done);
    assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(3));
    assert_eq!(out, b"after");
    assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
}

/// One header word at the reader's position, published with a tail `published` bytes ahead.
fn forged(
    capacity: usize,
    offset: usize,
    header: u64,
    published: u64,
) -> Result<Option<u8>, RingError> {
    let (mut producer, mut consumer, region) = ring(capacity);
    advance(&mut producer, &mut consumer, offset);
    region.store(DATA_AT + offset, header, Ordering::Relaxed);
    region.store(TAIL_AT, offset as u64 + published, Ordering::Release);
    let mut out = Vec::new();
    let first = consumer.try_pop(&mut out);
    if first.is_err() {
        // Nothing was consumed, and asking again gives the same answer (no panic, no progress).
        assert_eq!(region.load(HEAD_AT, Ordering::Relaxed), offset as u64);
        assert_eq!(consumer.try_pop(&mut out), first);
    }
    first
}

fn corruption(result: Result<Option<u8>, RingError>) -> Corruption {
    match result {
        Err(RingError::Corrupt { what, .. }) => what,
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// A corrupt writer, one header field at a time (semantics §4 bad input): each is `Corrupt` with
/// the field named, nothing is consumed, and a valid forged header is accepted (the control).
#[test]
fn corrupt_header_fields_are_refused() {
    let cap = 256;
    let max = max_payload(cap);
    // The control: a forged but valid header reads as an entry.
    assert_eq!(
        forged(cap, 0, encode_header(5, KIND_DATA, 4), 16),
        Ok(Some(4))
    );
    // Marker.
    let header = encode_header(5, KIND_DATA, 4) ^ (1 << 50);
    assert_eq!(
        corruption(forged(cap, 0, header, 16)),
        Corruption::Marker { header }
    );
    assert!(matches!(
        corruption(forged(cap, 0, 0, 16)),
        Corruption::Marker { .. }
    ));
    // Kind.
    for kind in [0u8, 3, 255] {
        let header = encode_header(5, kind, 0);
        assert_eq!(
            corruption(forged(cap, 0, header, 16)),
            Corruption::Kind { header }
        );
    }
    // Length above the maximum, up to u32::MAX.
    for len in [max + 1, cap, u32::MAX as usize] {
        let header = encode_header(len, KIND_DATA, 0);
        assert_eq!(
            corruption(forged(cap, 0, header, cap as u64)),
            Corruption::Length {
                header,
                max: max as u64
            }
        );
    }
    // Within the maximum but running past the end of the data area.
    let header = encode_header(max, KIND_DATA, 0);
    assert_eq!(
        corruption(forged(cap, 200, header, 56)),
        Corruption::PastEnd { header }
    );
    // Running past the published tail.
    let header = encode_header(64, KIND_DATA, 0);
    assert!(matches!(
        corruption(forged(cap, 0, header, 64)),
        Corruption::PastTail { .. }
    ));
    // Padding at offset 0, of the wrong length, or past the tail.
    let header = encode_header(cap - 8, KIND_PADDING, 0);
    assert_eq!(
        corruption(forged(cap, 0, header, cap as u64)),
        Corruption::Padding { header }
    );
    let header = encode_header(8, KIND_PADDING, 0);
    assert_eq!(
        corruption(forged(cap, 128, header, 128)),
        Corruption::Padding { header }
    );
    let header = encode_header(120, KIND_PADDING, 0);
    assert!(matches!(
        corruption(forged(cap, 128, header, 64)),
        Corruption::PastTail { .. }
    ));
    // Two paddings in a row cannot happen: the second would be at offset 0.
    let (mut producer, mut consumer, region) = ring(cap);
    advance(&mut producer, &mut consumer, 128);
    region.store(
        DATA_AT + 128,
        encode_header(120, KIND_PADDING, 0),
        Ordering::Relaxed,
    );
    region.store(
        DATA_AT,
        encode_header(cap - 8, KIND_PADDING, 0),
        Ordering::Relaxed,
    );
    region.store(TAIL_AT, 128 + 128 + 128, Ordering::Release);
    assert!(matches!(
        corruption(consumer.try_pop(&mut Vec::new())),
        Corruption::Padding { .. }
    ));
}

/// A corrupt tail (misaligned, more than a ring ahead, behind the head, moved backwards) is
/// `Corrupt`; so are a bad magic or capacity word at attach, and a corrupt head for the writer.
#[test]
fn corrupt_counters_are_refused() {
    let cap = 256;
    let mut out = Vec::new();
    for tail in [4u64, cap as u64 + 8, u64::MAX - 7] {
        let (_producer, mut consumer, region) = ring(cap);
        region.store(TAIL_AT, tail, Ordering::Release);
        assert!(
            matches!(
                corruption(consumer.try_pop(&mut out)),
                Corruption::Counters { .. }
            ),
            "tail {tail}"
        );
    }
    // A tail that moves backwards, still ahead of the head.
    let (mut producer, mut consumer, region) = ring(cap);
    for _ in 0..4 {
        assert_eq!(producer.try_push(0, b"1234567").unwrap(), Push::Done);
    }
    assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(0));
    region.store(TAIL_AT, 16, Ordering::Release);
    // The reader has the tail cached at 64: it trusts it until it is used up...
    for _ in 0..3 {
        assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(0));
    }
    // ...then the tail it loads is behind its head.
    assert!(matches!(
        corruption(consumer.try_pop(&mut out)),
        Corruption::Counters { .. }
    ));

    // Magic and capacity words.
    let region = Arc::new(HeapRegion::zeroed(region_len(cap)));
    assert!(matches!(
        Consumer::attach(region.clone()),
        Err(RingError::Corrupt {
            what: Corruption::Magic { found: 0 },
            ..
        })
    ));
    init(&region).unwrap();
    region.store(CAPACITY_AT, 1 << 20, Ordering::Relaxed);
    assert!(matches!(
        Producer::attach(region.clone()),
        Err(RingError::Corrupt {
            what: Corruption::Capacity { .. },
            ..
        })
    ));

    // A head the writer cannot believe: ahead of its tail, misaligned, or moved backwards.
    for head in [1000u64, 3, u64::MAX - 7] {
        let (mut producer, _consumer, region) = ring(cap);
        assert_eq!(producer.try_push(0, &[0; 100]).unwrap(), Push::Done);
        region.store(HEAD_AT, head, Ordering::Release);
        // Fill until the writer must load the head.
        let mut result = Ok(Push::Done);
        for _ in 0..4 {
            result = producer.try_push(0, &[0; 100]);
            if result.is_err() {
                break;
            }
        }
        assert!(
            matches!(
                result,
                Err(RingError::Corrupt {
                    what: Corruption::Counters { .. },
                    ..
                })
            ),
            "head {head}: {result:?}"
        );
    }
}

/// Regions that cannot hold a ring are refused with a layout error.
#[test]
fn bad_layouts_are_refused() {
    for len in [0, 255, region_len(32), region_len(64) + 8, region_len(1000)] {
        let region = HeapRegion::zeroed(len);
        assert!(
            matches!(init(&region), Err(RingError::Layout { .. })),
            "{len}"
        );
        assert!(
            matches!(Consumer::attach(&region), Err(RingError::Layout { .. })),
            "{len}"
        );
    }
    let error = init(&HeapRegion::zeroed(100)).unwrap_err();
    assert!(error.to_string().contains("cannot hold a ring"), "{error}");
}

/// Several writer threads of one rank share the producer behind a mutex (the documented rule):
/// every entry arrives once, intact, and each thread's entries in the order it wrote them.
#[test]
fn concurrent_writers_through_a_mutex() {
    const THREADS: u8 = 4;
    const EACH: u64 = 3000;
    let (producer, mut consumer, _region) = ring(4096);
    let producer = Arc::new(Mutex::new(producer));
    let writers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let producer = producer.clone();
            std::thread::spawn(move || {
                for seq in 0..EACH {
                    let mut bytes = seq.to_le_bytes().to_vec();
                    bytes.extend(payload(seq ^ thread as u64, (seq % 300) as usize));
                    loop {
                        match producer.lock().unwrap().try_push(thread, &bytes).unwrap() {
                            Push::Done => break,
                            Push::Full => {}
                        }
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    let mut next = [0u64; THREADS as usize];
    let mut out = Vec::new();
    let mut received = 0;
    while received < THREADS as u64 * EACH {
        match consumer.try_pop(&mut out).unwrap() {
            Some(thread) => {
                let seq = u64::from_le_bytes(out[..8].try_into().unwrap());
                assert_eq!(seq, next[thread as usize], "thread {thread}");
                assert_eq!(
                    &out[8..],
                    payload(seq ^ thread as u64, (seq % 300) as usize)
                );
                next[thread as usize] += 1;
                received += 1;
            }
            None => std::thread::yield_now(),
        }
    }
    for writer in writers {
        writer.join().unwrap();
    }
    assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
}

/// Two threads, a small ring (many wraps, padding often), varied sizes: the ordering works on
/// real hardware too (loom checks it in the model): every entry arrives intact and in order.
#[test]
fn two_thread_stress() {
    const COUNT: u64 = 100_000;
    let (mut producer, mut consumer, _region) = ring(512);
    let writer = std::thread::spawn(move || {
        for seq in 0..COUNT {
            let bytes = payload(seq, (seq * 13 % 249) as usize);
            while producer.try_push(seq as u8, &bytes).unwrap() == Push::Full {
                std::hint::spin_loop();
            }
        }
    });
    let mut out = Vec::new();
    let mut seq = 0;
    while seq < COUNT {
        if let Some(tag) = consumer.try_pop(&mut out).unwrap() {
            assert_eq!(tag, seq as u8);
            assert_eq!(out, payload(seq, (seq * 13 % 249) as usize), "entry {seq}");
            seq += 1;
        } else {
            std::hint::spin_loop();
        }
    }
    writer.join().unwrap();
}

/// The doorbell: a producer rings (one futex wake) only while the consumer says it sleeps; a
/// sleeping consumer wakes on the entry well before its time-out.
#[test]
fn doorbell_wakes_a_sleeping_consumer_only() {
    let (mut producer, mut consumer, region) = ring(256);
    assert!(!producer.wake_consumer(), "nobody sleeps: no wake");
    let sleeper = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let mut out = Vec::new();
        loop {
            if consumer.try_pop(&mut out).unwrap().is_some() {
                return start.elapsed();
            }
            consumer.wait(Duration::from_secs(20)).unwrap();
        }
    });
    // Wait until the consumer has said it sleeps.
    while region.load(DOORBELL_AT, Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(producer.try_push(1, b"wake").unwrap(), Push::Done);
    assert!(producer.wake_consumer());
    let waited = sleeper.join().unwrap();
    assert!(waited < Duration::from_secs(10), "woke after {waited:?}");
    assert!(!producer.wake_consumer(), "the consumer cleared its flag");
    // An entry already there: wait returns at once.
    let (mut producer, mut consumer, _region) = ring(256);
    assert_eq!(producer.try_push(1, b"x").unwrap(), Push::Done);
    assert!(consumer.wait(Duration::from_secs(20)).unwrap());
}

/// Counters are positions modulo 2^64: a ring whose counters start just below 2^64 (a value a
/// peer may leave, found by the `ring_reader` fuzz target as an overflow) carries entries across
/// the wrap of the counters like anywhere else.
#[test]
fn counters_wrap_around_u64() {
    let region = Arc::new(HeapRegion::zeroed(region_len(256)));
    init(&region).unwrap();
    let start = u64::MAX - 63;
    region.store(TAIL_AT, start, Ordering::Relaxed);
    region.store(HEAD_AT, start, Ordering::Relaxed);
    let mut producer = Producer::attach(region.clone()).unwrap();
    let mut consumer = Consumer::attach(region.clone()).unwrap();
    let mut out = Vec::new();
    for seq in 0..100u64 {
        let bytes = payload(seq, (seq * 11 % 100) as usize);
        assert_eq!(producer.try_push(seq as u8, &bytes).unwrap(), Push::Done);
        assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(seq as u8));
        assert_eq!(out, bytes);
    }
    assert!(
        region.load(TAIL_AT, Ordering::Relaxed) < start,
        "the counters wrapped"
    );
}

/// `try_pop_into` copies an entry straight into the caller's buffer; one longer than the buffer
/// is refused and stays in the ring.
#[test]
fn pop_into_a_buffer() {
    let (mut producer, mut consumer, _region) = ring(256);
    assert_eq!(producer.try_push(5, &payload(1, 40)).unwrap(), Push::Done);
    let mut small = [0u8; 16];
    assert_eq!(
        consumer.try_pop_into(&mut small),
        Err(RingError::TooLarge { len: 40, max: 16 })
    );
    let mut big = [0u8; 64];
    assert_eq!(consumer.try_pop_into(&mut big).unwrap(), Some((5, 40)));
    assert_eq!(&big[..40], payload(1, 40));
    assert_eq!(consumer.try_pop_into(&mut big).unwrap(), None);
}

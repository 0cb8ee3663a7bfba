// SPDX-License-Identifier: MIT OR Apache-2.0
//! The single-producer/single-consumer byte ring: layout, the writer ([`Producer`]), the reader
//! ([`Consumer`]) and how each validates what the other side wrote.
//!
//! # Layout
//!
//! A ring of capacity `C` (a power of two, at least [`MIN_CAPACITY`]) takes
//! [`region_len(C)`](region_len) = `256 + C` bytes: four 64-byte control lines, then the data
//! area. Every control word is a little-endian `u64` accessed atomically.
//!
//! | offset | word | written by |
//! |---:|---|---|
//! | 0 | magic `rtring01` (stored last by [`init`]) | the creator, once |
//! | 8 | capacity `C` | the creator, once |
//! | 64 | tail: bytes ever published (an absolute position) | the producer |
//! | 128 | head: bytes ever consumed | the consumer |
//! | 192 | doorbell: 1 while the consumer says it sleeps, else 0 | the consumer |
//! | 256 | the data area, `C` bytes | the producer |
//!
//! Tail and head are byte positions modulo 2^64 (all arithmetic on them wraps), always
//! multiples of 8, the tail at most `C` ahead of the head. Head and tail sit on separate cache lines so that the two sides do not share a line they
//! write; each side also caches the other's counter and rereads it only when its cached copy
//! says empty (reader) or full (writer).
//!
//! Each entry starts at an 8-byte-aligned offset `tail % C` with one 8-byte header word, then
//! its payload, padded to a multiple of 8:
//!
//! | bits | field |
//! |---|---|
//! | 0..32 | payload length in bytes |
//! | 32..40 | kind: 1 data, 2 padding; anything else is corrupt |
//! | 40..48 | tag: 8 bits the writer passes to the reader as they are (the transport's) |
//! | 48..64 | marker `0x5254`; anything else is corrupt |
//!
//! **Wrap rule: a padding entry, never a split copy.** An entry that does not fit between its
//! offset and the end of the data area is preceded by a padding entry that runs exactly to the
//! end, and the entry starts at offset 0; the padding and the entry are published together.
//! So every payload is contiguous and every header is one aligned word. The price: an entry
//! takes at most `C / 2` bytes with its header (payload at most [`max_payload(C)`](max_payload)),
//! which guarantees that an empty ring always has room for the largest entry; the writer refuses
//! larger ones with [`RingError::TooLarge`] (the transport cuts large messages into chunks).
//!
//! # Ordering
//!
//! The writer copies the payload, stores the header word with `Release`, then stores the new tail
//! with `Release`; the reader loads the tail with `Acquire`, then the header word (once, with
//! `Acquire`), then copies the payload, then stores its new head with `Release`, which the
//! writer's `Acquire` load of the head pairs with before it reuses the space. A writer killed
//! anywhere before its tail store has published nothing: the reader sees no new bytes. The
//! `loom` model in this module (`RUSTFLAGS="--cfg loom" cargo test -p runthrough-net --release
//! ring_loom`) checks this ordering.
//!
//! # Trusting nothing
//!
//! The peer maps the same memory, so both sides treat every word the other writes as input.
//! The reader loads each header once into a local and checks it (marker, kind, length at most
//! [`max_payload`], the entry within the data area and before the tail, padding only where the
//! writer would put it); it checks each tail it loads (aligned, not behind what it saw before,
//! at most `C` ahead of its head). The writer checks each head it loads the same way. Any
//! violation is [`RingError::Corrupt`], after which the side should stop using the ring (the
//! transport fences the peer): never a panic, never an access outside the region, and no loop
//! depends on the peer's values (a read consumes at most one padding entry and one entry).
//! Payload bytes are copied out, never lent: the peer could change them under a borrow.
//!
//! # Several writers
//!
//! The ring is single-producer: [`Producer::try_push`] takes `&mut self`. Several threads of
//! one rank that send to the same peer share the producer behind a mutex in the sending
//! process (`Mutex<Producer<_>>`; the test `concurrent_writers_through_a_mutex` does so); the
//! critical section is the copy into the ring. Likewise one consumer per ring.
//!
//! # The doorbell
//!
//! A consumer about to sleep calls [`Consumer::wait`]: it sets the doorbell word, checks the
//! ring once more, and sleeps on a futex on that word unless an entry arrived. A producer calls
//! [`Producer::wake_consumer`] after a push (or a batch of pushes): a full fence, one load of
//! the doorbell word, and a `FUTEX_WAKE` only when it is set, so a consumer that polls costs
//! the producer no syscall. The fence pairs with the consumer's: either the producer sees the
//! flag or the consumer sees the entry (no lost wake-up). [`Producer::try_push`] itself
//! touches no doorbell: when to ring is the transport's choice (step (c) of issue 12).

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// The magic word at offset 0, stored last when a ring is initialised.
pub const MAGIC: u64 = u64::from_le_bytes(*b"rtring01");
/// Bytes of control lines before the data area.
pub const CONTROL_BYTES: usize = 256;
/// The smallest capacity a ring may have.
pub const MIN_CAPACITY: usize = 64;
/// The largest capacity a ring may have (entries' lengths are 32-bit).
pub const MAX_CAPACITY: usize = 1 << 32;

const MAGIC_AT: usize = 0;
const CAPACITY_AT: usize = 8;
const TAIL_AT: usize = 64;
const HEAD_AT: usize = 128;
const DOORBELL_AT: usize = 192;
const DATA_AT: usize = CONTROL_BYTES;

const HEADER_BYTES: usize = 8;
const MARKER: u64 = 0x5254;
const KIND_DATA: u8 = 1;
const KIND_PADDING: u8 = 2;

/// The region length a ring of `capacity` data bytes needs.
pub const fn region_len(capacity: usize) -> usize {
    CONTROL_BYTES + capacity
}

/// The largest payload a ring of `capacity` accepts in one entry: its footprint, header
/// included, is at most half the ring (see the wrap rule in the module docs).
pub const fn max_payload(capacity: usize) -> usize {
    capacity / 2 - HEADER_BYTES
}

const fn footprint(len: usize) -> usize {
    HEADER_BYTES + ((len + 7) & !7)
}

fn encode_header(len: usize, kind: u8, tag: u8) -> u64 {
    len as u64 | (kind as u64) << 32 | (tag as u64) << 40 | MARKER << 48
}

/// What was wrong with the memory the peer writes: the reason in a [`RingError::Corrupt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Corruption {
    /// The magic word is not [`MAGIC`] (the region was never initialised, or was overwritten).
    Magic {
        /// The word found.
        found: u64,
    },
    /// The capacity word disagrees with the region's length.
    Capacity {
        /// The word found.
        found: u64,
        /// The capacity the region's length gives.
        expected: u64,
    },
    /// The other side's counter is misaligned, went backwards, or is more than a ring ahead.
    Counters {
        /// The head (consumer's counter) as this side sees it.
        head: u64,
        /// The tail (producer's counter) as this side sees it.
        tail: u64,
    },
    /// An entry header without the marker.
    Marker {
        /// The header word.
        header: u64,
    },
    /// An entry header of an unknown kind.
    Kind {
        /// The header word.
        header: u64,
    },
    /// An entry longer than the ring accepts.
    Length {
        /// The header word.
        header: u64,
        /// The largest payload the ring accepts.
        max: u64,
    },
    /// An entry that runs past the end of the data area.
    PastEnd {
        /// The header word.
        header: u64,
    },
    /// An entry that runs past the published tail.
    PastTail {
        /// The header word.
        header: u64,
        /// The published tail.
        tail: u64,
    },
    /// A padding entry where the writer would put none, or not running to the end of the area.
    Padding {
        /// The header word.
        header: u64,
    },
}

/// Why the ring refused an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// The region cannot hold a ring: shorter than [`region_len`]`(`[`MIN_CAPACITY`]`)`, not
    /// 64-byte aligned, or its data area is not a power of two.
    Layout {
        /// The region's length.
        len: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The writer refused an entry larger than [`max_payload`]: cut it into chunks.
    TooLarge {
        /// The payload's length.
        len: usize,
        /// The largest payload this ring accepts.
        max: usize,
    },
    /// The memory the peer writes breaks the ring's rules: stop using the ring and fence the
    /// peer (semantics §4, bad input).
    Corrupt {
        /// The position (this side's counter) at which it was found.
        position: u64,
        /// What was wrong.
        what: Corruption,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::Layout { len, reason } => {
                write!(f, "a region of {len} bytes cannot hold a ring: {reason}")
            }
            RingError::TooLarge { len, max } => write!(
                f,
                "an entry of {len} bytes is larger than the ring accepts ({max}): send it in chunks"
            ),
            RingError::Corrupt { position, what } => {
                write!(f, "corrupt ring at position {position}: {what:?}")
            }
        }
    }
}

impl std::error::Error for RingError {}

/// Memory a ring can live in: a byte region that stays mapped, at a fixed address, for as long as
/// the value lives. The ring never assumes it owns the memory: the region may be a shared
/// mapping ([`SharedMapping`](super::SharedMapping)) that another process writes too.
///
/// # Safety
///
/// An implementer guarantees that [`base`](Region::base) points to [`len`](Region::len) bytes
/// that are valid for reads and writes through that pointer (shared with other threads and
/// processes, never behind a Rust `&`/`&mut` reference elsewhere) and stay so while the value
/// lives, and that `base` is 64-byte aligned.
#[allow(unsafe_code)] // an unsafe trait: implementers promise the memory is valid
pub unsafe trait Region: Send + Sync {
    /// The first byte of the region.
    fn base(&self) -> NonNull<u8>;
    /// The region's length in bytes.
    fn len(&self) -> usize;
    /// Whether the region is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// SAFETY: an Arc keeps its value alive and in place; the value's guarantees carry over.
#[allow(unsafe_code)]
unsafe impl<R: Region + ?Sized> Region for std::sync::Arc<R> {
    fn base(&self) -> NonNull<u8> {
        (**self).base()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
}

// SAFETY: a borrow keeps its value alive and in place; the value's guarantees carry over.
#[allow(unsafe_code)]
unsafe impl<R: Region + ?Sized> Region for &R {
    fn base(&self) -> NonNull<u8> {
        (**self).base()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
}

/// How the ring touches its memory: aligned 64-bit atomic words and byte copies. Implemented for
/// every [`Region`]; the `loom` model implements it with model-checked atomics.
pub trait Memory: Send + Sync {
    /// The region's length in bytes.
    fn size(&self) -> usize;
    /// Loads the 8-aligned word at byte offset `at`.
    fn load(&self, at: usize, order: Ordering) -> u64;
    /// Stores the 8-aligned word at byte offset `at`.
    fn store(&self, at: usize, value: u64, order: Ordering);
    /// Copies `bytes` to byte offset `at` (8-aligned).
    fn write(&self, at: usize, bytes: &[u8]);
    /// Copies `out.len()` bytes from byte offset `at` (8-aligned).
    fn read(&self, at: usize, out: &mut [u8]);
    /// The futex word of the doorbell, when this memory can sleep on one.
    fn doorbell(&self) -> Option<&AtomicU32> {
        None
    }
    /// Whether the memory starts 64-byte aligned (as a ring needs).
    fn aligned(&self) -> bool {
        true
    }
}

/// Checks that `n` bytes at `at` lie within a region of `len` bytes, `at` 8-aligned. The ring's
/// own checks guarantee it; this is the last line, and failing it is a bug here, not the peer's.
#[inline]
fn check_span(at: usize, n: usize, len: usize) {
    assert!(
        at.is_multiple_of(8) && at.checked_add(n).is_some_and(|end| end <= len),
        "ring access of {n} bytes at {at} outside a region of {len}"
    );
}

#[allow(unsafe_code)] // raw shared memory; each block below says why it is sound
impl<R: Region> Memory for R {
    fn size(&self) -> usize {
        self.len()
    }

    #[inline]
    fn load(&self, at: usize, order: Ordering) -> u64 {
        check_span(at, 8, self.len());
        // SAFETY: `at..at + 8` is inside the region (checked) and 8-aligned (the base is 64-aligned,
        // `at` 8-aligned), and the region's memory is only accessed through raw pointers and
        // atomics, so viewing it as an `AtomicU64` for this load is sound.
        let word = unsafe { &*(self.base().as_ptr().add(at) as *const AtomicU64) };
        word.load(order)
    }

    #[inline]
    fn store(&self, at: usize, value: u64, order: Ordering) {
        check_span(at, 8, self.len());
        // SAFETY: as in `load`.
        let word = unsafe { &*(self.base().as_ptr().add(at) as *const AtomicU64) };
        word.store(value, order)
    }

    #[inline]
    fn write(&self, at: usize, bytes: &[u8]) {
        check_span(at, bytes.len(), self.len());
        // SAFETY: the destination is inside the region (checked) and valid for writes (the
        // `Region` contract); it cannot overlap `bytes`, which is a Rust slice and so not region
        // memory (nothing lends region memory out as a slice). The ring's protocol gives the
        // writer these bytes alone until it publishes them.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base().as_ptr().add(at), bytes.len())
        }
    }

    #[inline]
    fn read(&self, at: usize, out: &mut [u8]) {
        check_span(at, out.len(), self.len());
        // SAFETY: the source is inside the region (checked) and valid for reads; `out` is a
        // Rust slice, so not region memory. A misbehaving peer writing these bytes while they are
        // copied can change only the values copied (any byte value is a valid `u8`): this is the
        // accepted model of every shared-memory transport, and the bytes are input to be checked.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base().as_ptr().add(at), out.as_mut_ptr(), out.len())
        }
    }

    fn aligned(&self) -> bool {
        (self.base().as_ptr() as usize).is_multiple_of(64)
    }

    fn doorbell(&self) -> Option<&AtomicU32> {
        check_span(DOORBELL_AT, 8, self.len());
        // The doorbell word's value is 0 or 1, so its low 32 bits carry it: those are at its
        // address on a little-endian machine, 4 bytes on a big-endian one.
        let low = if cfg!(target_endian = "little") { 0 } else { 4 };
        // SAFETY: inside the region and 4-aligned; only the kernel reads through this reference
        // (futex wait and wake take its address); Rust code accesses the word as an `AtomicU64`.
        Some(unsafe { &*(self.base().as_ptr().add(DOORBELL_AT + low) as *const AtomicU32) })
    }
}

/// A 64-byte-aligned region on the heap, for tests, benchmarks and the fuzz target (two threads
/// of one process can share a ring through it).
pub struct HeapRegion {
    lines: Box<[Line]>,
    len: usize,
}

#[repr(C, align(64))]
struct Line(std::cell::UnsafeCell<[u8; 64]>);

impl HeapRegion {
    /// A zeroed region of `len` bytes.
    pub fn zeroed(len: usize) -> HeapRegion {
        let lines = (0..len.div_ceil(64))
            .map(|_| Line(std::cell::UnsafeCell::new([0; 64])))
            .collect();
        HeapRegion { lines, len }
    }

    /// A region holding a copy of `bytes` (as a corrupt writer left them).
    pub fn from_bytes(bytes: &[u8]) -> HeapRegion {
        let region = HeapRegion::zeroed(bytes.len());
        region.write(0, bytes);
        region
    }

    /// A copy of the region's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0; self.len];
        self.read(0, &mut out);
        out
    }
}

// SAFETY: the lines are owned by the box, so they stay in place while the value lives, are
// 64-aligned (`Line`'s alignment), hold at least `len` bytes, and are behind `UnsafeCell`, so
// writing them through the base pointer while `&HeapRegion`s exist is allowed; sharing between
// threads is governed by the ring's atomics, which is what `Region` promises to users.
#[allow(unsafe_code)]
unsafe impl Region for HeapRegion {
    fn base(&self) -> NonNull<u8> {
        NonNull::new(self.lines.as_ptr() as *mut u8).expect("a box is never null")
    }
    fn len(&self) -> usize {
        self.len
    }
}

// SAFETY: see `Region for HeapRegion`: all access to the cells goes through the ring's protocol.
#[allow(unsafe_code)]
unsafe impl Sync for HeapRegion {}

/// The capacity a region of `len` bytes gives, if it can hold a ring.
fn capacity_of<M: Memory>(memory: &M) -> Result<usize, RingError> {
    let len = memory.size();
    let layout = |reason| Err(RingError::Layout { len, reason });
    if len < region_len(MIN_CAPACITY) {
        return layout("shorter than the smallest ring (256 control bytes and 64 data bytes)");
    }
    if !memory.aligned() {
        return layout("not 64-byte aligned");
    }
    let capacity = len - CONTROL_BYTES;
    if !capacity.is_power_of_two() {
        return layout("its data area (the length less 256) is not a power of two");
    }
    if capacity > MAX_CAPACITY {
        return layout("its data area is above 4 GiB");
    }
    Ok(capacity)
}

/// Lays out an empty ring in `memory`, which the creator alone holds at this point: the
/// capacity, zero counters and doorbell, and the magic word last.
///
/// # Errors
///
/// [`RingError::Layout`] when the region cannot hold a ring.
pub fn init<M: Memory>(memory: &M) -> Result<usize, RingError> {
    let capacity = capacity_of(memory)?;
    memory.store(CAPACITY_AT, capacity as u64, Ordering::Relaxed);
    memory.store(TAIL_AT, 0, Ordering::Relaxed);
    memory.store(HEAD_AT, 0, Ordering::Relaxed);
    memory.store(DOORBELL_AT, 0, Ordering::Relaxed);
    memory.store(MAGIC_AT, MAGIC, Ordering::Release);
    Ok(capacity)
}

/// Checks the magic and capacity words of a ring someone else initialised.
fn attach<M: Memory>(memory: &M) -> Result<usize, RingError> {
    let capacity = capacity_of(memory)?;
    let corrupt = |what| Err(RingError::Corrupt { position: 0, what });
    let magic = memory.load(MAGIC_AT, Ordering::Acquire);
    if magic != MAGIC {
        return corrupt(Corruption::Magic { found: magic });
    }
    let found = memory.load(CAPACITY_AT, Ordering::Relaxed);
    if found != capacity as u64 {
        return corrupt(Corruption::Capacity {
            found,
            expected: capacity as u64,
        });
    }
    Ok(capacity)
}

/// Whether `newer` is a valid next value of the other side's counter: aligned, not behind
/// `older`, and with `head` and `tail` at most `capacity` apart.
fn counters_ok(head: u64, tail: u64, older: u64, newer: u64, capacity: usize) -> bool {
    let span = tail.wrapping_sub(head);
    newer.is_multiple_of(8)
        && span <= capacity as u64
        && newer.wrapping_sub(older) <= capacity as u64
}

/// The outcome of [`Producer::try_push`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Push {
    /// The entry is published.
    Done,
    /// No room now: the consumer has not freed enough yet; try again later.
    Full,
}

/// The writing side of a ring (one per ring; several threads share it behind a mutex).
pub struct Producer<M: Memory> {
    memory: M,
    capacity: usize,
    /// Bytes published so far (this side's copy of the tail).
    tail: u64,
    /// The last head loaded from the consumer.
    head: u64,
}

impl<M: Memory> Producer<M> {
    /// The producer of the ring that [`init`] laid out in `memory`, going on from the tail
    /// found there (a writer that replaces a dead one overwrites whatever it left unpublished).
    ///
    /// # Errors
    ///
    /// [`RingError::Layout`] or [`RingError::Corrupt`] when `memory` holds no valid ring.
    pub fn attach(memory: M) -> Result<Self, RingError> {
        let capacity = attach(&memory)?;
        let tail = memory.load(TAIL_AT, Ordering::Relaxed);
        let head = memory.load(HEAD_AT, Ordering::Acquire);
        if !counters_ok(head, tail, head, head, capacity) || !tail.is_multiple_of(8) {
            return Err(RingError::Corrupt {
                position: tail,
                what: Corruption::Counters { head, tail },
            });
        }
        Ok(Producer {
            memory,
            capacity,
            tail,
            head,
        })
    }

    /// The ring's data capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The largest payload one entry may carry.
    pub fn max_payload(&self) -> usize {
        max_payload(self.capacity)
    }

    /// The memory the ring lives in.
    pub fn memory(&self) -> &M {
        &self.memory
    }

    /// Appends one entry carrying `payload` and the writer's `tag`, if there is room.
    ///
    /// # Errors
    ///
    /// [`RingError::TooLarge`] for a payload above [`max_payload`]; [`RingError::Corrupt`] when
    /// the consumer's head is not a valid one (fence the peer).
    pub fn try_push(&mut self, tag: u8, payload: &[u8]) -> Result<Push, RingError> {
        let cap = self.capacity;
        if payload.len() > max_payload(cap) {
            return Err(RingError::TooLarge {
                len: payload.len(),
                max: max_payload(cap),
            });
        }
        let size = footprint(payload.len());
        let offset = (self.tail % cap as u64) as usize;
        let to_end = cap - offset;
        let needed = if size <= to_end { size } else { to_end + size };
        if cap - (self.tail.wrapping_sub(self.head) as usize) < needed {
            let head = self.memory.load(HEAD_AT, Ordering::Acquire);
            if !counters_ok(head, self.tail, self.head, head, cap) {
                return Err(RingError::Corrupt {
                    position: self.tail,
                    what: Corruption::Counters {
                        head,
                        tail: self.tail,
                    },
                });
            }
            self.head = head;
            if cap - (self.tail.wrapping_sub(self.head) as usize) < needed {
                return Ok(Push::Full);
            }
        }
        let mut tail = self.tail;
        let mut offset = offset;
        if size > to_end {
            let pad = encode_header(to_end - HEADER_BYTES, KIND_PADDING, 0);
            self.memory.store(DATA_AT + offset, pad, Ordering::Release);
            tail = tail.wrapping_add(to_end as u64);
            offset = 0;
        }
        self.memory.write(DATA_AT + offset + HEADER_BYTES, payload);
        let header = encode_header(payload.len(), KIND_DATA, tag);
        self.memory
            .store(DATA_AT + offset, header, Ordering::Release);
        tail = tail.wrapping_add(size as u64);
        self.memory.store(TAIL_AT, tail, Ordering::Release);
        self.tail = tail;
        Ok(Push::Done)
    }

    /// Rings the consumer's doorbell if it said it sleeps; whether it did. Call after a push or
    /// a batch of pushes: a full fence and one load, and a `FUTEX_WAKE` only when the flag is set.
    pub fn wake_consumer(&self) -> bool {
        fence(Ordering::SeqCst);
        if self.memory.load(DOORBELL_AT, Ordering::Relaxed) == 0 {
            return false;
        }
        self.memory.store(DOORBELL_AT, 0, Ordering::Relaxed);
        if let Some(word) = self.memory.doorbell() {
            let _ = rustix::thread::futex::wake(word, rustix::thread::futex::Flags::empty(), 1);
        }
        true
    }

    /// Test hook: a writer killed inside an entry. Copies `payload` and its header into the ring
    /// where the next entry goes, as `try_push` would, and stops before publishing the tail.
    #[doc(hidden)]
    pub fn write_unpublished(&mut self, tag: u8, payload: &[u8]) {
        let offset = (self.tail % self.capacity as u64) as usize;
        if payload.len() <= max_payload(self.capacity)
            && footprint(payload.len()) <= self.capacity - offset
        {
            self.memory.write(DATA_AT + offset + HEADER_BYTES, payload);
            let header = encode_header(payload.len(), KIND_DATA, tag);
            self.memory
                .store(DATA_AT + offset, header, Ordering::Release);
        }
    }
}

/// A data entry found and checked by [`Consumer::next_entry`], not yet consumed.
struct Entry {
    tag: u8,
    /// Where its payload starts in the region.
    at: usize,
    len: usize,
    /// Its footprint, header and padding to 8 included.
    size: usize,
}

/// The reading side of a ring (one per ring).
pub struct Consumer<M: Memory> {
    memory: M,
    capacity: usize,
    /// Bytes consumed so far (this side's copy of the head).
    head: u64,
    /// The last tail loaded from the producer.
    tail: u64,
}

impl<M: Memory> Consumer<M> {
    /// The consumer of the ring that [`init`] laid out in `memory`, going on from the head found
    /// there.
    ///
    /// # Errors
    ///
    /// [`RingError::Layout`] or [`RingError::Corrupt`] when `memory` holds no valid ring.
    pub fn attach(memory: M) -> Result<Self, RingError> {
        let capacity = attach(&memory)?;
        let head = memory.load(HEAD_AT, Ordering::Relaxed);
        if !head.is_multiple_of(8) {
            return Err(RingError::Corrupt {
                position: head,
                what: Corruption::Counters { head, tail: head },
            });
        }
        Ok(Consumer {
            memory,
            capacity,
            head,
            tail: head,
        })
    }

    /// The ring's data capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The memory the ring lives in.
    pub fn memory(&self) -> &M {
        &self.memory
    }

    fn corrupt<T>(&self, what: Corruption) -> Result<T, RingError> {
        Err(RingError::Corrupt {
            position: self.head,
            what,
        })
    }

    /// Whether an entry (or padding) is published and not yet consumed.
    ///
    /// # Errors
    ///
    /// [`RingError::Corrupt`] when the producer's tail is not a valid one.
    pub fn has_entry(&mut self) -> Result<bool, RingError> {
        if self.head == self.tail {
            let tail = self.memory.load(TAIL_AT, Ordering::Acquire);
            if !counters_ok(self.head, tail, self.tail, tail, self.capacity) {
                return self.corrupt(Corruption::Counters {
                    head: self.head,
                    tail,
                });
            }
            self.tail = tail;
        }
        Ok(self.head != self.tail)
    }

    /// Takes the next entry: its payload replaces `out`'s contents and its tag is returned;
    /// `None` when the ring is empty.
    ///
    /// # Errors
    ///
    /// [`RingError::Corrupt`] when the producer's tail or the entry's header breaks the ring's
    /// rules: fence the peer. Nothing is consumed then.
    pub fn try_pop(&mut self, out: &mut Vec<u8>) -> Result<Option<u8>, RingError> {
        let Some(entry) = self.next_entry()? else {
            return Ok(None);
        };
        out.truncate(entry.len);
        out.resize(entry.len, 0);
        self.memory.read(entry.at, out);
        self.consume(entry.size);
        Ok(Some(entry.tag))
    }

    /// Takes the next entry into the start of `dest` (one copy, straight to where the caller
    /// wants it, as a chunk of a large message goes): its tag and length; `None` when empty.
    ///
    /// # Errors
    ///
    /// [`RingError::TooLarge`] when the entry is longer than `dest` (it stays in the ring);
    /// [`RingError::Corrupt`] as for [`try_pop`](Self::try_pop).
    pub fn try_pop_into(&mut self, dest: &mut [u8]) -> Result<Option<(u8, usize)>, RingError> {
        let Some(entry) = self.next_entry()? else {
            return Ok(None);
        };
        let Some(dest) = dest.get_mut(..entry.len) else {
            return Err(RingError::TooLarge {
                len: entry.len,
                max: dest.len(),
            });
        };
        self.memory.read(entry.at, dest);
        self.consume(entry.size);
        Ok(Some((entry.tag, entry.len)))
    }

    fn consume(&mut self, size: usize) {
        self.head = self.head.wrapping_add(size as u64);
        self.memory.store(HEAD_AT, self.head, Ordering::Release);
    }

    /// The next data entry, checked, after consuming a padding entry before it.
    fn next_entry(&mut self) -> Result<Option<Entry>, RingError> {
        let cap = self.capacity;
        // At most a padding entry, then an entry: the padding runs to the end of the area, and
        // a valid one is never at offset 0, so a second one is corrupt.
        for _ in 0..2 {
            if !self.has_entry()? {
                return Ok(None);
            }
            let offset = (self.head % cap as u64) as usize;
            let header = self.memory.load(DATA_AT + offset, Ordering::Acquire);
            if header >> 48 != MARKER {
                return self.corrupt(Corruption::Marker { header });
            }
            let len = (header & 0xffff_ffff) as usize;
            let kind = (header >> 32) as u8;
            let tag = (header >> 40) as u8;
            let available = self.tail.wrapping_sub(self.head);
            match kind {
                KIND_PADDING => {
                    let to_end = cap - offset;
                    if offset == 0 || len != to_end - HEADER_BYTES {
                        return self.corrupt(Corruption::Padding { header });
                    }
                    if to_end as u64 > available {
                        return self.corrupt(Corruption::PastTail {
                            header,
                            tail: self.tail,
                        });
                    }
                    self.consume(to_end);
                }
                KIND_DATA => {
                    if len > max_payload(cap) {
                        return self.corrupt(Corruption::Length {
                            header,
                            max: max_payload(cap) as u64,
                        });
                    }
                    let size = footprint(len);
                    if size > cap - offset {
                        return self.corrupt(Corruption::PastEnd { header });
                    }
                    if size as u64 > available {
                        return self.corrupt(Corruption::PastTail {
                            header,
                            tail: self.tail,
                        });
                    }
                    return Ok(Some(Entry {
                        tag,
                        at: DATA_AT + offset + HEADER_BYTES,
                        len,
                        size,
                    }));
                }
                _ => return self.corrupt(Corruption::Kind { header }),
            }
        }
        self.corrupt(Corruption::Padding {
            header: self.memory.load(DATA_AT, Ordering::Relaxed),
        })
    }

    /// Sleeps until the producer rings the doorbell or `timeout` passes, unless an entry is
    /// there already; whether an entry is there on return (it may be a spurious wake-up, so
    /// check and call again). Sets the doorbell flag, fences, checks the ring, and waits on the
    /// futex only if it is still empty; clears the flag on the way out.
    ///
    /// # Errors
    ///
    /// [`RingError::Corrupt`] when the producer's tail is not a valid one.
    pub fn wait(&mut self, timeout: Duration) -> Result<bool, RingError> {
        self.memory.store(DOORBELL_AT, 1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let ready = self.has_entry();
        if let (Ok(false), Some(word)) = (&ready, self.memory.doorbell()) {
            let timeout = rustix::thread::futex::Timespec {
                tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
                tv_nsec: timeout.subsec_nanos() as _,
            };
            let _ = rustix::thread::futex::wait(
                word,
                rustix::thread::futex::Flags::empty(),
                1,
                Some(&timeout),
            );
        }
        self.memory.store(DOORBELL_AT, 0, Ordering::Relaxed);
        match ready {
            Ok(true) => Ok(true),
            Ok(false) => self.has_entry(),
            Err(error) => Err(error),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod ring_loom;

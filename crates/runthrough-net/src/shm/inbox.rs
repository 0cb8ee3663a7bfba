// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's inbox: one memfd holding the rank's bells and one inbound ring per peer (issue 12
//! step (c)). The receiver creates it; every peer on the same host maps it (the descriptor goes
//! over the Unix connection with `SCM_RIGHTS` during the handshake) and writes only its own ring
//! and the shared words below.
//!
//! # Layout
//!
//! | offset | what | written by |
//! |---:|---|---|
//! | 0 | magic `rtinbox1` (stored last by [`Inbox::create`]) | the owner, once |
//! | 8 | the number of ring slots `n` (the job's size) | the owner, once |
//! | 16 | each ring's data capacity `C` | the owner, once |
//! | 24 | the *pulse*: a count the owner's progress side advances every heartbeat period, which peers on this host read instead of receiving heartbeats | the owner |
//! | 32 | *collectives*: nonzero while the owner runs non-blocking collectives, whose messages must then wake its progress thread too | the owner |
//! | 64 | the *application bell*: a futex word (the rank's event count, `runthrough`'s signal) | everyone |
//! | 128 | the *progress bell*: a futex word the rank's progress thread sleeps on | everyone |
//! | 192 | *pollers*: how many of the owner's threads wait in the library, polling | the owner |
//! | 256 | the *active* bitmap: bit `s` set by peer `s` after it published entries | peers set, the owner clears |
//! | `256 + 8w` (64-aligned) | the *blocked* bitmap: bit `s` set by peer `s` while its ring is full | peers set, the owner clears |
//! | `header_len(n)` + `s · (256 + C)` | the ring of peer `s` ([`super::ring`]'s layout) | peer `s` and the owner |
//!
//! where `w = ⌈n / 64⌉`. A slot's ring is laid out ([`Inbox::init_slot`]) only when the owner
//! connects to that peer, so a rank that talks to few peers touches few pages: the memfd is
//! sparse, and only the pages written are backed by memory.
//!
//! # Trusting nothing
//!
//! The memfd is sealed against shrinking and growing ([`SharedMapping::create`]), and a peer
//! that maps it checks the seals and the header against the file's length
//! ([`Inbox::attach`]), so no access falls outside the mapping whatever the owner writes later.
//! The bitmaps and bells are hints: a wrong bit costs a look at an empty ring, a wrong bell a
//! spurious wake-up; the rings check everything else.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use super::map::SharedMapping;
use super::ring::{self, region_len, Region, MAX_CAPACITY, MIN_CAPACITY};

/// The magic word at offset 0, stored last when an inbox is made.
pub const INBOX_MAGIC: u64 = u64::from_le_bytes(*b"rtinbox1");
const MAGIC_AT: usize = 0;
const SLOTS_AT: usize = 8;
const CAPACITY_AT: usize = 16;
const PULSE_AT: usize = 24;
const COLLECTIVES_AT: usize = 32;
const APP_BELL_AT: usize = 64;
const PROGRESS_BELL_AT: usize = 128;
const POLLERS_AT: usize = 192;
const ACTIVE_AT: usize = 256;

/// The most ring slots an inbox has (a job's size on one host is far below this).
pub const MAX_SLOTS: u32 = 1 << 20;

fn words(slots: u32) -> usize {
    (slots as usize).div_ceil(64)
}

fn blocked_at(slots: u32) -> usize {
    (ACTIVE_AT + 8 * words(slots)).next_multiple_of(64)
}

/// Bytes before the first ring slot.
pub fn header_len(slots: u32) -> usize {
    (blocked_at(slots) + 8 * words(slots)).next_multiple_of(64)
}

/// The length of an inbox of `slots` rings of `capacity` bytes each.
pub fn inbox_len(slots: u32, capacity: usize) -> usize {
    header_len(slots) + slots as usize * region_len(capacity)
}

/// The capacity of each ring for a job of `size` ranks: 1 MiB up to 32 ranks, then smaller so
/// that an inbox stays near 32 MiB of address space (at least 64 KiB a ring).
pub fn capacity_for(size: u32) -> usize {
    let share = (32usize << 20) / size.max(1) as usize;
    let floor = if share.is_power_of_two() {
        share
    } else {
        share.next_power_of_two() / 2
    };
    floor.clamp(64 << 10, 1 << 20)
}

/// Which of an inbox's two bells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bell {
    /// Rung for every entry published: the rank's waiting application threads watch it.
    Application,
    /// Rung for control traffic and freed space: the rank's progress thread sleeps on it.
    Progress,
}

/// A mapped inbox, the owner's or a peer's.
#[derive(Debug, Clone)]
pub struct Inbox {
    mapping: Arc<SharedMapping>,
    slots: u32,
    capacity: usize,
}

impl Inbox {
    /// Makes an empty inbox of `slots` rings of `capacity` bytes each (no ring laid out yet).
    ///
    /// # Errors
    ///
    /// A capacity that is no power of two in the ring's bounds, no slots or too many, or the
    /// kernel refusing the memfd or its mapping.
    pub fn create(slots: u32, capacity: usize) -> io::Result<Inbox> {
        check_shape(slots, capacity)?;
        let mapping = SharedMapping::create("runthrough-inbox", inbox_len(slots, capacity))?;
        let inbox = Inbox {
            mapping: Arc::new(mapping),
            slots,
            capacity,
        };
        inbox.word(SLOTS_AT).store(slots as u64, Ordering::Relaxed);
        inbox
            .word(CAPACITY_AT)
            .store(capacity as u64, Ordering::Relaxed);
        inbox.word(MAGIC_AT).store(INBOX_MAGIC, Ordering::Release);
        Ok(inbox)
    }

    /// Maps a peer's inbox from its descriptor, for a job of `slots` ranks.
    ///
    /// # Errors
    ///
    /// `InvalidData` when the file is not sealed against resizing, or its header does not
    /// describe an inbox of `slots` slots that fits in the file; the kernel's errors.
    pub fn attach(fd: OwnedFd, slots: u32) -> io::Result<Inbox> {
        let mapping = SharedMapping::map_sealed(fd, header_len(slots))?;
        let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
        let read = |at: usize| -> u64 {
            // In bounds: the mapping holds at least the header (checked by `map_sealed`).
            word_in(&mapping, at).load(Ordering::Acquire)
        };
        if read(MAGIC_AT) != INBOX_MAGIC {
            return Err(bad("not an inbox (wrong magic word)".into()));
        }
        if read(SLOTS_AT) != slots as u64 {
            return Err(bad(format!(
                "an inbox of {} slots, expected {slots}",
                read(SLOTS_AT)
            )));
        }
        let capacity = usize::try_from(read(CAPACITY_AT)).unwrap_or(0);
        check_shape(slots, capacity)?;
        if mapping.len() < inbox_len(slots, capacity) {
            return Err(bad(format!(
                "an inbox of {} bytes, below the {} its header says",
                mapping.len(),
                inbox_len(slots, capacity)
            )));
        }
        Ok(Inbox {
            mapping: Arc::new(mapping),
            slots,
            capacity,
        })
    }

    /// The memfd, to pass to a peer ([`super::send_fd`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.mapping.fd()
    }

    /// The number of ring slots.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Each ring's data capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn word(&self, at: usize) -> &AtomicU64 {
        word_in(&self.mapping, at)
    }

    /// The futex word of `bell` (the low half of its 64-bit slot).
    pub fn bell(&self, bell: Bell) -> &AtomicU32 {
        let at = match bell {
            Bell::Application => APP_BELL_AT,
            Bell::Progress => PROGRESS_BELL_AT,
        };
        let low = if cfg!(target_endian = "little") { 0 } else { 4 };
        assert!(at + 8 <= self.mapping.len());
        // SAFETY: `at + low .. at + low + 4` is inside the mapping (checked above; the header
        // was checked at attach or made here) and 4-aligned (the mapping is page-aligned, `at`
        // a multiple of 64). The memory is shared and only ever accessed atomically, through
        // this reference or the kernel's futex calls, so viewing it as an `AtomicU32` is sound;
        // the reference lives no longer than `self`, which keeps the mapping.
        #[allow(unsafe_code)]
        unsafe {
            &*(self.mapping.base().as_ptr().add(at + low) as *const AtomicU32)
        }
    }

    /// Lays out the empty ring of slot `slot` (the owner, before passing the descriptor to
    /// that peer). Idempotent only before the peer attaches.
    ///
    /// # Errors
    ///
    /// A slot outside the inbox.
    pub fn init_slot(&self, slot: u32) -> io::Result<()> {
        let region = self.slot(slot)?;
        ring::init(&region).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(())
    }

    /// The ring of peer `slot`, as a region for [`super::Producer`] or [`super::Consumer`].
    ///
    /// # Errors
    ///
    /// A slot outside the inbox.
    pub fn slot(&self, slot: u32) -> io::Result<Slot> {
        if slot >= self.slots {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("slot {slot} of an inbox of {}", self.slots),
            ));
        }
        Ok(Slot {
            mapping: Arc::clone(&self.mapping),
            offset: header_len(self.slots) + slot as usize * region_len(self.capacity),
            len: region_len(self.capacity),
        })
    }

    fn bit(&self, base: usize, slot: u32) -> Option<(&AtomicU64, u64)> {
        (slot < self.slots).then(|| {
            (
                self.word(base + 8 * (slot as usize / 64)),
                1u64 << (slot % 64),
            )
        })
    }

    /// One of the owner's threads starts waiting in the library (it polls the rings until it
    /// leaves): peers need not wake the progress thread meanwhile.
    pub fn enter_wait(&self) {
        self.word(POLLERS_AT).fetch_add(1, Ordering::SeqCst);
    }

    /// The thread of [`Inbox::enter_wait`] stops waiting. It must then take the active bits
    /// and drain their rings ([`Inbox::take_active`]): a peer that saw it waiting left the
    /// waking to it.
    pub fn leave_wait(&self) {
        self.word(POLLERS_AT).fetch_sub(1, Ordering::SeqCst);
    }

    /// The owner is alive and its progress side runs: advances the pulse (once per heartbeat
    /// period, by the owner).
    pub fn beat(&self) {
        self.word(PULSE_AT).fetch_add(1, Ordering::Relaxed);
    }

    /// The owner's pulse: a peer that sees it move has heard from the owner (a heartbeat that
    /// costs neither a syscall nor a wake-up). Any value is possible from a hostile owner; only
    /// whether it changed matters.
    pub fn pulse(&self) -> u64 {
        self.word(PULSE_AT).load(Ordering::Relaxed)
    }

    /// The owner runs non-blocking collectives (`on`), or no longer does: while it does, a
    /// peer's collective traffic wakes its progress thread as control frames do, since the
    /// owner's engine advances those calls as their messages arrive, whatever its threads do.
    pub fn set_collectives(&self, on: bool) {
        self.word(COLLECTIVES_AT)
            .store(u64::from(on), Ordering::SeqCst);
    }

    /// Whether the owner runs non-blocking collectives ([`Inbox::set_collectives`]; a hint).
    pub fn wants_collectives(&self) -> bool {
        self.word(COLLECTIVES_AT).load(Ordering::SeqCst) != 0
    }

    /// Whether some thread of the owner polls now (a peer's hint: then ringing the
    /// application bell is enough).
    pub fn has_pollers(&self) -> bool {
        self.word(POLLERS_AT).load(Ordering::SeqCst) != 0
    }

    /// Peer `slot` published entries: sets its active bit (a load first, so a bit already set
    /// costs no write to the shared line).
    pub fn mark_active(&self, slot: u32) {
        if let Some((word, bit)) = self.bit(ACTIVE_AT, slot) {
            if word.load(Ordering::SeqCst) & bit == 0 {
                word.fetch_or(bit, Ordering::SeqCst);
            }
        }
    }

    /// Sets peer `slot`'s active bit with a read-modify-write even if it looks set already (a
    /// release that the owner's [`Inbox::take_active`] acquires: what the peer wrote before,
    /// its blocked bit included, is visible to the owner that takes the bit).
    pub fn force_active(&self, slot: u32) {
        if let Some((word, bit)) = self.bit(ACTIVE_AT, slot) {
            word.fetch_or(bit, Ordering::AcqRel);
        }
    }

    /// Whether any active bit is set (the owner's cheap check before polling).
    pub fn any_active(&self) -> bool {
        (0..words(self.slots)).any(|w| self.word(ACTIVE_AT + 8 * w).load(Ordering::SeqCst) != 0)
    }

    /// Clears the active bits and calls `each` with every slot that had its bit set: the owner
    /// then drains those rings. Entries published after a bit was cleared set it again.
    pub fn take_active(&self, mut each: impl FnMut(u32)) {
        for w in 0..words(self.slots) {
            let word = self.word(ACTIVE_AT + 8 * w);
            if word.load(Ordering::Relaxed) == 0 {
                continue;
            }
            let mut bits = word.swap(0, Ordering::Acquire);
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                let slot = w as u32 * 64 + b;
                if slot < self.slots {
                    each(slot);
                }
            }
        }
    }

    /// Peer `slot` found its ring full (or clears that, with `false`).
    pub fn set_blocked(&self, slot: u32, blocked: bool) {
        if let Some((word, bit)) = self.bit(blocked_at(self.slots), slot) {
            if blocked {
                word.fetch_or(bit, Ordering::AcqRel);
            } else {
                word.fetch_and(!bit, Ordering::AcqRel);
            }
        }
    }

    /// Clears peer `slot`'s blocked bit; whether it was set (the owner, after draining that
    /// ring: then it wakes the peer).
    pub fn take_blocked(&self, slot: u32) -> bool {
        match self.bit(blocked_at(self.slots), slot) {
            Some((word, bit)) if word.load(Ordering::Acquire) & bit != 0 => {
                word.fetch_and(!bit, Ordering::AcqRel) & bit != 0
            }
            _ => false,
        }
    }
}

fn check_shape(slots: u32, capacity: usize) -> io::Result<()> {
    if slots == 0 || slots > MAX_SLOTS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an inbox of {slots} slots (1..={MAX_SLOTS})"),
        ));
    }
    if !capacity.is_power_of_two() || !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a ring capacity of {capacity} bytes (a power of two, {MIN_CAPACITY}..={MAX_CAPACITY})"),
        ));
    }
    Ok(())
}

/// The 8-aligned header word at `at` of a mapping at least `at + 8` long.
fn word_in(mapping: &SharedMapping, at: usize) -> &AtomicU64 {
    assert!(at.is_multiple_of(8) && at + 8 <= mapping.len());
    // SAFETY: inside the mapping (checked) and 8-aligned (page-aligned base); shared memory
    // accessed only atomically, so an `AtomicU64` view is sound; the borrow is tied to
    // `mapping`, which keeps the memory mapped.
    #[allow(unsafe_code)]
    unsafe {
        &*(mapping.base().as_ptr().add(at) as *const AtomicU64)
    }
}

/// One ring slot of an inbox: a [`Region`] that keeps the whole mapping alive.
#[derive(Debug, Clone)]
pub struct Slot {
    mapping: Arc<SharedMapping>,
    offset: usize,
    len: usize,
}

// SAFETY: `offset + len` lies within the mapping (slots are computed from a header checked
// against the file's length, and the file is sealed against shrinking), the mapping stays
// mapped while the `Arc` lives, and `offset` is a multiple of 64 from a page-aligned base
// (`header_len` is 64-aligned and `region_len(C)` is 256 + a power of two of at least 64).
#[allow(unsafe_code)]
unsafe impl Region for Slot {
    fn base(&self) -> NonNull<u8> {
        // SAFETY: in bounds of the mapping, as argued above.
        unsafe { self.mapping.base().add(self.offset) }
    }
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shm::{recv_fd, send_fd, Consumer, Producer, Push};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    fn pass(inbox: &Inbox) -> OwnedFd {
        let (a, b) = UnixStream::pair().unwrap();
        send_fd(&a, inbox.fd()).unwrap();
        recv_fd(&b).unwrap()
    }

    #[test]
    fn capacity_shrinks_with_the_job_and_stays_in_bounds() {
        assert_eq!(capacity_for(2), 1 << 20);
        assert_eq!(capacity_for(32), 1 << 20);
        assert_eq!(capacity_for(64), 512 << 10);
        assert_eq!(capacity_for(100), 256 << 10);
        assert_eq!(capacity_for(512), 64 << 10);
        assert_eq!(capacity_for(100_000), 64 << 10);
        assert_eq!(capacity_for(0), 1 << 20);
    }

    /// The owner's collectives flag is seen through a peer's mapping and is a word of its
    /// own: the pulse and the pollers do not move with it.
    #[test]
    fn a_peer_sees_the_owners_collectives_flag() {
        let owner = Inbox::create(4, 4096).unwrap();
        let peer = Inbox::attach(pass(&owner), 4).unwrap();
        assert!(!peer.wants_collectives());
        let pulse = peer.pulse();
        owner.set_collectives(true);
        assert!(peer.wants_collectives());
        assert!(!peer.has_pollers());
        assert_eq!(peer.pulse(), pulse);
        owner.beat();
        assert!(peer.wants_collectives(), "a beat leaves it");
        owner.set_collectives(false);
        assert!(!peer.wants_collectives());
    }

    /// The owner's beat is seen through a peer's mapping, and only the owner's beats move it.
    #[test]
    fn a_peer_sees_the_owners_pulse_move() {
        let owner = Inbox::create(4, 4096).unwrap();
        let peer = Inbox::attach(pass(&owner), 4).unwrap();
        let before = peer.pulse();
        assert_eq!(peer.pulse(), before, "no beat, no change");
        owner.beat();
        assert_ne!(peer.pulse(), before);
        assert_eq!(peer.pulse(), owner.pulse());
        // The pulse is not a ring's or a bell's word.
        owner.bell(Bell::Application).fetch_add(1, Ordering::SeqCst);
        owner.bell(Bell::Progress).fetch_add(1, Ordering::SeqCst);
        assert_eq!(peer.pulse(), before.wrapping_add(1));
    }

    /// A peer maps the owner's inbox, writes its own ring and marks itself active; the owner
    /// finds the bit, drains the ring, and the bells are one word seen by both mappings.
    #[test]
    fn a_peer_writes_its_slot_and_the_owner_finds_it_active() {
        let owner = Inbox::create(70, 4096).unwrap();
        owner.init_slot(66).unwrap();
        let peer = Inbox::attach(pass(&owner), 70).unwrap();
        let mut producer = Producer::attach(peer.slot(66).unwrap()).unwrap();
        let mut consumer = Consumer::attach(owner.slot(66).unwrap()).unwrap();
        assert!(!owner.any_active());
        assert_eq!(producer.try_push(1, b"hello").unwrap(), Push::Done);
        peer.mark_active(66);
        assert!(owner.any_active());
        let mut seen = Vec::new();
        owner.take_active(|s| seen.push(s));
        assert_eq!(seen, vec![66]);
        assert!(!owner.any_active());
        let mut out = Vec::new();
        assert_eq!(consumer.try_pop(&mut out).unwrap(), Some(1));
        assert_eq!(out, b"hello");
        peer.bell(Bell::Application).fetch_add(2, Ordering::AcqRel);
        assert_eq!(owner.bell(Bell::Application).load(Ordering::Acquire), 2);
        assert_eq!(owner.bell(Bell::Progress).load(Ordering::Acquire), 0);
        peer.set_blocked(66, true);
        assert!(owner.take_blocked(66));
        assert!(!owner.take_blocked(66));
        // Bits outside the inbox are ignored, never a panic.
        peer.mark_active(70);
        peer.set_blocked(1000, true);
        assert!(!owner.any_active());
    }

    #[test]
    fn bad_shapes_and_unsealed_or_foreign_files_are_refused() {
        assert!(Inbox::create(0, 4096).is_err());
        assert!(Inbox::create(4, 1000).is_err());
        assert!(Inbox::create(4, 32).is_err());
        let owner = Inbox::create(4, 4096).unwrap();
        let error = Inbox::attach(pass(&owner), 5).unwrap_err();
        assert!(error.to_string().contains("4 slots"), "{error}");
        assert!(owner.slot(4).is_err());
        assert!(owner.init_slot(9).is_err());
        // A plain (unsealed) memfd is refused: its owner could shrink it under the peer.
        let plain = SharedMapping::create_unsealed("x", inbox_len(4, 4096)).unwrap();
        let fd = plain.fd().as_fd().try_clone_to_owned().unwrap();
        let error = Inbox::attach(fd, 4).unwrap_err();
        assert!(error.to_string().contains("sealed"), "{error}");
        // A sealed file that is no inbox.
        let other = SharedMapping::create("x", inbox_len(4, 4096)).unwrap();
        let fd = other.fd().as_fd().try_clone_to_owned().unwrap();
        let error = Inbox::attach(fd, 4).unwrap_err();
        assert!(error.to_string().contains("magic"), "{error}");
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's doorbell: an event counter that its waiting threads watch and that senders ring.
//!
//! Every change that a waiter might care about (a message matched, a failure learned, a kill)
//! calls [`Signal::notify`]. A waiter reads [`Signal::current`], checks its condition, and calls
//! [`Signal::wait_past`] with the value it read; that returns once the count moved on. How it
//! waits meanwhile (spin, yield, sleep) is the wait policy of [`crate::wait`]; this file is the
//! part that a sender touches and that makes sleeping safe.
//!
//! # The word
//!
//! One `AtomicU32` holds both the event count (bits 1..32, wrapping) and a *sleeping* flag
//! (bit 0): "some thread sleeps, or is about to, at this count". It is also the futex word the
//! sleepers wait on.
//!
//! - **Sender** ([`Doorbell::ring`]): one `fetch_add` of 2. If the value before it had the flag,
//!   it clears the flag and wakes every sleeper (one `futex(FUTEX_WAKE)`). When nobody sleeps,
//!   that is the whole cost: one atomic add, no lock, no syscall.
//! - **Sleeper** ([`Doorbell::sleep`]): a compare-exchange from `count` to `count | flag`
//!   (or finding `count | flag` already there: another thread of the rank sleeps at that count),
//!   then `futex(FUTEX_WAIT, count | flag)`, which the kernel enters only if the word still
//!   holds exactly that value. A moved count makes both steps return at once.
//!
//! # Why no wake-up is lost
//!
//! The flag and the count live in one word, so a sleeper's publication ("I sleep at count c")
//! and a sender's increment are ordered by that word's modification order: either the sender's
//! add comes first (the sleeper's compare-exchange or the kernel's compare sees a count other
//! than c and does not sleep), or the sleeper's flag comes first (the sender's add returns it,
//! and the sender wakes; the kernel serialises that wake with the wait's compare). A cleared
//! flag is always followed by a wake of every sleeper, and a sleeper sleeps only while the word
//! is exactly `c | flag`, so every sleeper either sees the new count or is woken. The ordering
//! argument needs no fence beyond the read-modify-writes on one location, which is what the loom
//! model in the tests checks, for every interleaving of two sleepers and a sender.
//!
//! The count wraps after 2^31 events; a waiter that missed exactly 2^31 events between reading
//! the count and sleeping would sleep until the next event or its safety timeout (one second):
//! a stall, never a hang.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use runthrough_net::shm::{Bell, Inbox};
use rustix::thread::futex;

/// The flag bit: some thread sleeps (or is about to) at the count in the other bits.
const SLEEPING: u32 = 1;
/// What one event adds to the word (the count lives above the flag bit).
const ONE_EVENT: u32 = 2;

/// The operations the doorbell needs from its word: atomics, plus waiting for the word to
/// change and waking those who wait. The futex word below in the runtime; a model of it in the
/// loom tests.
pub(crate) trait Word {
    /// `load` with `Acquire`.
    fn load(&self) -> u32;
    /// `fetch_add` with `AcqRel`.
    fn fetch_add(&self, value: u32) -> u32;
    /// `fetch_and` with `AcqRel`.
    fn fetch_and(&self, value: u32) -> u32;
    /// `compare_exchange` with `AcqRel` / `Acquire`.
    fn compare_exchange(&self, current: u32, new: u32) -> Result<u32, u32>;
    /// Sleeps while the word holds `expected`, at most `timeout` (`None`: no limit). May return
    /// early (spuriously); returns `false` only when the timeout ran out.
    fn wait(&self, expected: u32, timeout: Option<Duration>) -> bool;
    /// Wakes every thread in [`Word::wait`] on this word.
    fn wake_all(&self);
}

/// The runtime's word: an atomic that is also a futex. Process-private by default; for a rank
/// of a multi-process job with shared memory, the application bell of its inbox
/// ([`runthrough_net::shm::Inbox`]), which peers on the same host ring when they publish an
/// entry for it (then the futex is a shared one: the kernel keys it by the page, not by the
/// process).
#[derive(Debug, Default)]
pub(crate) struct Futex {
    local: AtomicU32,
    shared: Option<(Inbox, Bell)>,
}

impl Futex {
    /// The word of `bell` in `inbox` (shared with the processes that map it).
    pub(crate) fn shared(inbox: Inbox, bell: Bell) -> Self {
        Futex {
            local: AtomicU32::new(0),
            shared: Some((inbox, bell)),
        }
    }

    #[inline]
    fn atom(&self) -> &AtomicU32 {
        match &self.shared {
            None => &self.local,
            Some((inbox, bell)) => inbox.bell(*bell),
        }
    }

    #[inline]
    fn flags(&self) -> futex::Flags {
        if self.shared.is_some() {
            futex::Flags::empty()
        } else {
            futex::Flags::PRIVATE
        }
    }
}

impl Word for Futex {
    #[inline]
    fn load(&self) -> u32 {
        self.atom().load(Ordering::Acquire)
    }

    #[inline]
    fn fetch_add(&self, value: u32) -> u32 {
        self.atom().fetch_add(value, Ordering::AcqRel)
    }

    #[inline]
    fn fetch_and(&self, value: u32) -> u32 {
        self.atom().fetch_and(value, Ordering::AcqRel)
    }

    #[inline]
    fn compare_exchange(&self, current: u32, new: u32) -> Result<u32, u32> {
        self.atom()
            .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
    }

    fn wait(&self, expected: u32, timeout: Option<Duration>) -> bool {
        let timeout = timeout.map(|t| futex::Timespec {
            tv_sec: t.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: t.subsec_nanos().into(),
        });
        // EAGAIN (the word moved), EINTR (a signal): a spurious return, the caller re-checks.
        !matches!(
            futex::wait(self.atom(), self.flags(), expected, timeout.as_ref()),
            Err(rustix::io::Errno::TIMEDOUT)
        )
    }

    fn wake_all(&self) {
        // Cannot fail on a valid address; nothing to do if it did.
        let _ = futex::wake(self.atom(), self.flags(), i32::MAX as u32);
    }
}

/// How a [`Doorbell::sleep`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slept {
    /// The count had moved on: the sleeper did not sleep.
    Moved,
    /// Woken (or a spurious return): the caller re-checks the count.
    Woken,
    /// The safety timeout ran out.
    TimedOut,
}

/// The event count and sleeping flag of one word (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Doorbell<W: Word = Futex> {
    word: W,
}

impl<W: Word> Doorbell<W> {
    pub(crate) fn new(word: W) -> Self {
        Doorbell { word }
    }

    /// The current event count (the word without its flag).
    #[inline]
    pub(crate) fn current(&self) -> u32 {
        self.word.load() & !SLEEPING
    }

    /// Records an event; wakes the sleepers if any said they sleep.
    #[inline]
    pub(crate) fn ring(&self) {
        if self.word.fetch_add(ONE_EVENT) & SLEEPING != 0 {
            self.wake_sleepers();
        }
    }

    #[cold]
    #[inline(never)]
    fn wake_sleepers(&self) {
        // Clear the flag first: sleepers that come after this see a clear flag at the new
        // count and set it again; those woken below re-check the count.
        self.word.fetch_and(!SLEEPING);
        self.word.wake_all();
    }

    /// Whether a thread said it sleeps at the current count (for tests).
    #[cfg(test)]
    pub(crate) fn has_sleeper(&self) -> bool {
        self.word.load() & SLEEPING != 0
    }

    /// Sleeps while the count is `seen`, until woken or `timeout` ran out.
    pub(crate) fn sleep(&self, seen: u32, timeout: Option<Duration>) -> Slept {
        let sleeping = seen | SLEEPING;
        match self.word.compare_exchange(seen, sleeping) {
            Ok(_) => {}
            Err(actual) if actual == sleeping => {}
            Err(_) => return Slept::Moved,
        }
        if self.word.wait(sleeping, timeout) {
            Slept::Woken
        } else {
            Slept::TimedOut
        }
    }
}

/// A rank's doorbell, with the rank's wait policy ([`crate::wait`]) for its waiters.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    bell: Doorbell,
}

impl Signal {
    /// A signal whose word is `bell` of `inbox` ([`Futex::shared`]).
    pub(crate) fn shared(inbox: Inbox, bell: Bell) -> Self {
        Signal {
            bell: Doorbell::new(Futex::shared(inbox, bell)),
        }
    }

    /// The current event count.
    #[inline]
    pub(crate) fn current(&self) -> u32 {
        self.bell.current()
    }

    /// Records an event and wakes every sleeping waiter (no syscall when none sleeps).
    #[inline]
    pub(crate) fn notify(&self) {
        self.bell.ring();
    }

    /// Returns once the event count differs from `seen`, waiting as [`crate::wait`] says;
    /// `oversubscribed`: this process has more running ranks than cores.
    pub(crate) fn wait_past(&self, seen: u32, oversubscribed: bool) {
        crate::wait::wait_past(&self.bell, seen, oversubscribed, &crate::wait::POLICY);
    }

    /// [`Signal::wait_past`], calling `idle` once if the wait goes past its cheap start
    /// ([`crate::wait::wait_past_then`]).
    pub(crate) fn wait_past_then(&self, seen: u32, oversubscribed: bool, idle: &mut dyn FnMut()) {
        crate::wait::wait_past_then(&self.bell, seen, oversubscribed, &crate::wait::POLICY, idle);
    }

    /// [`Signal::wait_past`] with a transport's hooks ([`crate::wait::wait_past_hooked`]).
    pub(crate) fn wait_past_hooked(
        &self,
        seen: u32,
        oversubscribed: bool,
        hooks: &mut dyn crate::wait::Hooks,
    ) {
        crate::wait::wait_past_hooked(
            &self.bell,
            seen,
            oversubscribed,
            &crate::wait::POLICY,
            hooks,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    #[test]
    fn a_notify_from_another_thread_ends_the_wait() {
        let signal = Arc::new(Signal::default());
        let seen = signal.current();
        let other = Arc::clone(&signal);
        let t = std::thread::spawn(move || other.notify());
        signal.wait_past(seen, false);
        assert_ne!(signal.current(), seen);
        t.join().unwrap();
    }

    #[test]
    fn the_count_wraps_without_touching_the_flag() {
        let bell = Doorbell::new(Futex {
            local: AtomicU32::new(u32::MAX - 1),
            shared: None,
        });
        assert_eq!(bell.current(), u32::MAX - 1);
        bell.ring();
        assert_eq!(bell.current(), 0);
        assert_eq!(bell.sleep(u32::MAX - 1, None), Slept::Moved);
    }

    #[test]
    fn a_sleeper_at_an_old_count_does_not_sleep() {
        let bell: Doorbell = Doorbell::default();
        let seen = bell.current();
        bell.ring();
        assert_eq!(bell.sleep(seen, None), Slept::Moved);
    }

    #[test]
    fn a_ring_without_sleepers_leaves_no_flag() {
        let bell: Doorbell = Doorbell::default();
        bell.ring();
        bell.ring();
        assert_eq!(bell.word.local.load(Ordering::Relaxed), 2 * ONE_EVENT);
    }

    /// No lost wake-up (the module docs' argument), tested on the real futex: pairs of threads
    /// ping-pong through two doorbells by sleeping straight away (no spin, no yield: every wait
    /// is a sleep, the path where a wake-up could be lost), with a second sleeper on each
    /// doorbell. A lost wake-up would leave a sleeper asleep until its long safety timeout:
    /// counted, and there must be none.
    #[test]
    fn sleepers_ping_ponging_never_miss_a_ring() {
        const PAIRS: usize = 4;
        const ROUNDS: u32 = 2_000;
        const SAFETY: Option<Duration> = Some(Duration::from_secs(10));
        let timeouts = AtomicU64::new(0);
        // Waits until `bell`'s count reaches `target` (counts only grow in this test).
        fn wait_until(bell: &Doorbell, target: u32, timeouts: &AtomicU64) {
            loop {
                let seen = bell.current();
                if seen.wrapping_sub(target) as i32 >= 0 {
                    return;
                }
                if bell.sleep(seen, SAFETY) == Slept::TimedOut {
                    timeouts.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let bells: Vec<[Doorbell; 2]> = (0..PAIRS).map(|_| Default::default()).collect();
        std::thread::scope(|scope| {
            for [ping, pong] in &bells {
                let timeouts = &timeouts;
                // Pinger: rings pong, waits for ping's answer.
                scope.spawn(move || {
                    for round in 1..=ROUNDS {
                        pong.ring();
                        wait_until(ping, round * ONE_EVENT, timeouts);
                    }
                });
                // Ponger: waits for each ring on pong, answers on ping.
                scope.spawn(move || {
                    for round in 1..=ROUNDS {
                        wait_until(pong, round * ONE_EVENT, timeouts);
                        ping.ring();
                    }
                });
                // A second sleeper on each doorbell, watching the same counts.
                for bell in [ping, pong] {
                    scope.spawn(move || {
                        for round in 1..=ROUNDS {
                            wait_until(bell, round * ONE_EVENT, timeouts);
                        }
                    });
                }
            }
        });
        assert_eq!(
            timeouts.load(Ordering::Relaxed),
            0,
            "a sleeper missed a ring"
        );
    }

    /// The loom model of the futex word: the kernel's compare-and-sleep is a mutex and a
    /// condition variable (the wake takes the mutex, so it cannot fall between the compare and
    /// the sleep, as the futex hash-bucket lock guarantees).
    mod model {
        use loom::sync::atomic::{AtomicU32, Ordering};
        use loom::sync::{Condvar, Mutex};
        use std::time::Duration;

        #[derive(Debug)]
        pub(super) struct ModelFutex {
            word: AtomicU32,
            lock: Mutex<()>,
            wake: Condvar,
        }

        impl ModelFutex {
            pub(super) fn new() -> Self {
                ModelFutex {
                    word: AtomicU32::new(0),
                    lock: Mutex::new(()),
                    wake: Condvar::new(),
                }
            }
        }

        impl super::Word for ModelFutex {
            fn load(&self) -> u32 {
                self.word.load(Ordering::Acquire)
            }
            fn fetch_add(&self, value: u32) -> u32 {
                self.word.fetch_add(value, Ordering::AcqRel)
            }
            fn fetch_and(&self, value: u32) -> u32 {
                self.word.fetch_and(value, Ordering::AcqRel)
            }
            fn compare_exchange(&self, current: u32, new: u32) -> Result<u32, u32> {
                self.word
                    .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
            }
            fn wait(&self, expected: u32, timeout: Option<Duration>) -> bool {
                assert!(timeout.is_none(), "the model has no clock");
                let guard = self.lock.lock().unwrap();
                if self.word.load(Ordering::Acquire) == expected {
                    drop(self.wake.wait(guard).unwrap());
                }
                true
            }
            fn wake_all(&self) {
                let _guard = self.lock.lock().unwrap();
                self.wake.notify_all();
            }
        }
    }

    /// Runs `body` under loom with at most three preemptions per execution: the interleavings
    /// where a wake-up could be lost need two (the sleeper preempted between its compare-exchange
    /// and its wait, the sender between its add and its wake), and the bound keeps `cargo test`
    /// fast. `LOOM_MAX_PREEMPTIONS` overrides it for a thorough run.
    fn bounded_model(body: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(3);
        }
        builder.check(body);
    }

    /// No lost wake-up, in every interleaving loom finds (semantics §6, issue 12's "lost wake-ups
    /// must be impossible"): two sleepers wait for the count to pass the value they read while
    /// a sender rings once. A lost wake-up is a sleeper blocked forever, which loom reports as
    /// a deadlock.
    #[test]
    fn loom_no_lost_wake_up_with_two_sleepers_and_one_ring() {
        bounded_model(|| {
            let bell = loom::sync::Arc::new(Doorbell::new(model::ModelFutex::new()));
            let sleepers: Vec<_> = (0..2)
                .map(|_| {
                    let bell = loom::sync::Arc::clone(&bell);
                    loom::thread::spawn(move || loop {
                        let seen = bell.current();
                        if seen != 0 {
                            return;
                        }
                        bell.sleep(seen, None);
                    })
                })
                .collect();
            bell.ring();
            for sleeper in sleepers {
                sleeper.join().unwrap();
            }
        });
    }

    /// Two rings racing one sleeper: the first ring's flag-clearing must not swallow the second
    /// ring's wake (the sleeper waits for both events).
    #[test]
    fn loom_no_lost_wake_up_with_two_rings() {
        bounded_model(|| {
            let bell = loom::sync::Arc::new(Doorbell::new(model::ModelFutex::new()));
            let ringer = {
                let bell = loom::sync::Arc::clone(&bell);
                loom::thread::spawn(move || bell.ring())
            };
            let sleeper = {
                let bell = loom::sync::Arc::clone(&bell);
                loom::thread::spawn(move || loop {
                    let seen = bell.current();
                    if seen == 2 * ONE_EVENT {
                        return;
                    }
                    bell.sleep(seen, None);
                })
            };
            bell.ring();
            ringer.join().unwrap();
            sleeper.join().unwrap();
        });
    }
}

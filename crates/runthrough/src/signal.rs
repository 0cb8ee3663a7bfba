// SPDX-License-Identifier: MIT OR Apache-2.0
//! Wake-ups for a rank's waiting threads: spin briefly, then yield, then block.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Spins of `spin_loop` before a waiter starts yielding.
const SPINS: u32 = 200;
/// `yield_now` calls before a waiter blocks on the condition variable.
const YIELDS: u32 = 40;
/// A blocked waiter re-checks at least this often (a safety net, not a synchronisation).
const PARK_TIMEOUT: Duration = Duration::from_secs(1);

/// An event counter that waiters watch.
///
/// Every change that a waiter might care about (a message matched, a failure learned, a kill)
/// calls [`Signal::notify`]. A waiter reads the counter, checks its condition, and calls
/// [`Signal::wait_past`] with the value it read: that returns once the counter moved on. It spins
/// for a few microseconds (a reply on another core comes back that fast), then yields, then blocks,
/// so 64 ranks waiting on 2 cores leave the machine idle.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    events: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Signal {
    /// The current event count.
    pub(crate) fn current(&self) -> u64 {
        self.events.load(Ordering::SeqCst)
    }

    /// Records an event and wakes every waiter.
    pub(crate) fn notify(&self) {
        self.events.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
    }

    /// Returns once the event count differs from `seen`.
    pub(crate) fn wait_past(&self, seen: u64) {
        for _ in 0..SPINS {
            if self.current() != seen {
                return;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS {
            if self.current() != seen {
                return;
            }
            std::thread::yield_now();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.current() == seen {
            let (next, _) = self
                .wake
                .wait_timeout(guard, PARK_TIMEOUT)
                .unwrap_or_else(|e| e.into_inner());
            guard = next;
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_notify_from_another_thread_ends_the_wait() {
        let signal = Arc::new(Signal::default());
        let seen = signal.current();
        let other = Arc::clone(&signal);
        let t = std::thread::spawn(move || other.notify());
        signal.wait_past(seen);
        assert_ne!(signal.current(), seen);
        t.join().unwrap();
    }
}

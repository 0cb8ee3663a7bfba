// SPDX-License-Identifier: MIT OR Apache-2.0
//! The wait policy: how a thread that waits in the library for an event at its rank spends
//! the time until the event comes (issue 12, step a).
//!
//! A waiter has read its rank's event count, found its condition unmet, and now waits for the
//! count to move ([`crate::signal::Signal::wait_past`]). It goes through three phases, each
//! ending as soon as the count moves:
//!
//! 1. **Spin** for [`WaitPolicy::spin`] (4 µs), reading the count between `spin_loop` hints and
//!    the clock every [`SPINS_PER_CLOCK_READ`] reads. A reply from a rank on another core comes
//!    back within that (an 8-byte ping-pong is well under a microsecond), so a rank with a core
//!    of its own pays no syscall and no wake-up per message.
//! 2. **Yield** the core (`sched_yield`) up to [`WaitPolicy::yields`] times (32), for at most
//!    [`WaitPolicy::yield_for`] (200 µs) of yielding: lets the rank that will answer run on
//!    this core if it is waiting for one, and costs a syscall per round but no wake-up.
//! 3. **Sleep** on the rank's doorbell (a futex, [`crate::signal`]): the waiter sets its rank's
//!    sleeping flag, and the next sender that rings the doorbell sees the flag and wakes it.
//!    The sleep has a safety timeout ([`WaitPolicy::sleep_timeout`], one second) that no
//!    synchronisation relies on: the doorbell's protocol loses no wake-up (see there).
//!
//! **Oversubscription.** When the process runs more ranks than it has cores
//! ([`oversubscribed`]: live ranks, as the transport counts them, against
//! [`std::thread::available_parallelism`]), spinning only burns the time slice of the rank that
//! would answer: the spin phase is skipped and the waiter yields at once. Tests run 512 ranks
//! on 2 cores; with the spin skipped and the yield phase bounded, most waiters there sleep
//! within a few yields and the machine goes to the ranks that can make progress.
//!
//! **What a sender pays.** One atomic add on the destination rank's word when nobody sleeps
//! there (no lock, no syscall); when a waiter had set the flag, one more atomic and one
//! `futex(FUTEX_WAKE)`. The flag is cleared by that ring, so a burst of messages to a sleeping
//! rank costs one wake, and messages to a spinning or computing rank cost none.
//!
//! **Instruction counts.** Spinning executes instructions while it waits (`pause` and a load,
//! in a loop), so under `valgrind --tool=callgrind` a spinning waiter counts more instructions
//! per operation than one that sleeps at once, even when it answers sooner: compare
//! instruction counts of the send, match and copy paths, not of the whole wait.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::signal::{Doorbell, Slept, Word};

/// The bounds of the three phases (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WaitPolicy {
    /// How long to spin before yielding (skipped when oversubscribed).
    pub(crate) spin: Duration,
    /// The most `yield_now` calls before sleeping.
    pub(crate) yields: u32,
    /// The longest time spent yielding before sleeping.
    pub(crate) yield_for: Duration,
    /// A sleep re-checks at least this often: a safety net, not a synchronisation.
    pub(crate) sleep_timeout: Duration,
}

/// The runtime's policy.
pub(crate) const POLICY: WaitPolicy = WaitPolicy {
    spin: Duration::from_micros(4),
    yields: 32,
    yield_for: Duration::from_micros(200),
    sleep_timeout: Duration::from_secs(1),
};

/// Reads of the count between two reads of the clock while spinning: a clock read costs about
/// as much as a few dozen `spin_loop` rounds, and the spin budget is a few microseconds.
pub(crate) const SPINS_PER_CLOCK_READ: u32 = 32;

/// Which phase saw the count move (for tests and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The count had moved before the wait began.
    Already,
    /// While spinning.
    Spin,
    /// While yielding.
    Yield,
    /// After sleeping on the doorbell.
    Sleep,
}

/// The cores this process may run on (`available_parallelism`, read once).
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether `running` ranks of this process outnumber its cores (then waiters do not spin).
pub(crate) fn oversubscribed(running: usize) -> bool {
    running > cores()
}

/// Waits until `bell`'s count differs from `seen`, by `policy`'s phases; returns the phase that
/// saw it move.
pub(crate) fn wait_past<W: Word>(
    bell: &Doorbell<W>,
    seen: u32,
    oversubscribed: bool,
    policy: &WaitPolicy,
) -> Phase {
    if bell.current() != seen {
        return Phase::Already;
    }
    let mut start = Instant::now();
    if !oversubscribed {
        loop {
            for _ in 0..SPINS_PER_CLOCK_READ {
                std::hint::spin_loop();
                if bell.current() != seen {
                    return Phase::Spin;
                }
            }
            if start.elapsed() >= policy.spin {
                break;
            }
        }
        start = Instant::now();
    }
    for _ in 0..policy.yields {
        std::thread::yield_now();
        if bell.current() != seen {
            return Phase::Yield;
        }
        if start.elapsed() >= policy.yield_for {
            break;
        }
    }
    while bell.current() == seen {
        if bell.sleep(seen, Some(policy.sleep_timeout)) == Slept::Moved {
            break;
        }
    }
    Phase::Sleep
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_moved_count_returns_at_once() {
        let bell: Doorbell = Doorbell::default();
        let seen = bell.current();
        bell.ring();
        assert_eq!(wait_past(&bell, seen, false, &POLICY), Phase::Already);
        assert_eq!(wait_past(&bell, seen, true, &POLICY), Phase::Already);
    }

    /// An oversubscribed waiter never spins: whatever the timing, the phase that sees the
    /// event is a yield or the sleep.
    #[test]
    fn an_oversubscribed_waiter_skips_the_spin() {
        let bell: Arc<Doorbell> = Arc::default();
        for _ in 0..200 {
            let seen = bell.current();
            let ringer = {
                let bell = Arc::clone(&bell);
                std::thread::spawn(move || bell.ring())
            };
            let phase = wait_past(&bell, seen, true, &POLICY);
            assert!(matches!(
                phase,
                Phase::Yield | Phase::Sleep | Phase::Already
            ));
            ringer.join().unwrap();
        }
    }

    /// A waiter whose event never comes ends up asleep on the doorbell (not spinning or
    /// yielding forever), and the ring that comes at last wakes it.
    #[test]
    fn a_long_wait_ends_asleep_and_a_ring_wakes_it() {
        let bell: Arc<Doorbell> = Arc::default();
        let seen = bell.current();
        let waiter = {
            let bell = Arc::clone(&bell);
            std::thread::spawn(move || wait_past(&bell, seen, false, &POLICY))
        };
        // The waiter says it sleeps (its flag on the doorbell) whenever it gets there.
        while !bell.has_sleeper() {
            std::thread::yield_now();
        }
        bell.ring();
        assert_eq!(waiter.join().unwrap(), Phase::Sleep);
    }

    #[test]
    fn more_ranks_than_cores_is_oversubscribed() {
        assert!(!oversubscribed(1));
        assert!(!oversubscribed(cores()));
        assert!(oversubscribed(cores() + 1));
    }
}

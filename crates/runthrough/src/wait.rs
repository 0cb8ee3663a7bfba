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
//!    this core if it is waiting for one, and costs a syscall per round but no wake-up. A
//!    yield that takes longer than [`WaitPolicy::contended_yield`] (50 µs; 1 ms when the
//!    ranks outnumber the cores, where a yield runs a sibling rank for a while, as it should)
//!    gave the core to a task that computes (a busy neighbour on a rank's core: under the
//!    kernel's fair scheduler each such yield can cost a whole time slice, milliseconds): the
//!    waiter goes to sleep at once, and its thread skips the yield phase for
//!    [`WaitPolicy::contended_for`] (20 ms).
//!    Asleep, it is woken by the sender's ring, and the kernel lets a thread that slept
//!    preempt one that computes: tens of microseconds instead of a time slice.
//! 3. **Sleep** on the rank's doorbell (a futex, [`crate::signal`]): the waiter sets its rank's
//!    sleeping flag, and the next sender that rings the doorbell sees the flag and wakes it.
//!    The sleep has a safety timeout ([`WaitPolicy::sleep_timeout`], one second) that no
//!    synchronisation relies on: the doorbell's protocol loses no wake-up (see there).
//!
//! **Oversubscription.** When the process runs more ranks than it has cores
//! ([`oversubscribed`]: live ranks, as the transport counts them, against
//! [`std::thread::available_parallelism`]), spinning only burns the time slice of the rank that
//! would answer: the spin phase is skipped and the waiter yields at once. Between processes
//! the socket transports count the ranks of the host against [`host_cores`] (the job's CPUs,
//! not the rank's own affinity, which a launcher's binding narrows to one core). Tests run 512 ranks
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
    /// A yield that took longer than this ran another task on the core: sleep instead.
    pub(crate) contended_yield: Duration,
    /// The same when the ranks outnumber the cores (a yield then runs a sibling rank).
    pub(crate) contended_yield_oversubscribed: Duration,
    /// How long a thread whose yield was contended skips the yield phase.
    pub(crate) contended_for: Duration,
}

/// The runtime's policy.
pub(crate) const POLICY: WaitPolicy = WaitPolicy {
    spin: Duration::from_micros(4),
    yields: 32,
    yield_for: Duration::from_micros(200),
    sleep_timeout: Duration::from_secs(1),
    contended_yield: Duration::from_micros(50),
    contended_yield_oversubscribed: Duration::from_millis(1),
    contended_for: Duration::from_millis(20),
};

thread_local! {
    /// Until when this thread skips the yield phase (a yield of its was contended).
    static CONTENDED_UNTIL: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Reads of the count between two reads of the clock while spinning: a clock read costs about
/// as much as a few dozen `spin_loop` rounds, and the spin budget is a few microseconds.
pub(crate) const SPINS_PER_CLOCK_READ: u32 = 32;

/// An oversubscribed waiter yields this many times before it calls its `idle` hook
/// ([`wait_past_then`]): the few time slices in which the rank it waits for most likely runs.
pub(crate) const IDLE_AFTER_YIELDS: u32 = 4;

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

/// The cores that the ranks of this host share (read once): what the socket transports
/// compare the host's live ranks with. A rank bound to a single CPU (`rtrun --bind-to core`,
/// Open MPI's default for two ranks, Slurm's `--cpu-bind`) does not count its own affinity:
/// two bound ranks on two cores each have a core of their own and must spin, not yield. It
/// counts the CPUs of the job's cpuset (its cgroup's `cpuset.cpus.effective`, v2 or v1), else
/// the host's online CPUs. A rank with several CPUs in its affinity (unbound, or bound to a set
/// such as `taskset -c 0,1` puts a whole job on) counts [`cores`], its affinity and CPU quota:
/// the CPUs its job's ranks share. Not seen: a CPU quota on a bound rank's cgroup (a job
/// bound one rank per core under a quota of fewer cores spins where it should yield: a few
/// µs per wait, never a hang).
pub(crate) fn host_cores() -> usize {
    static HOST: OnceLock<usize> = OnceLock::new();
    *HOST.get_or_init(|| {
        let available = cores();
        let affinity = rustix::thread::sched_getaffinity(None)
            .map(|set| set.count() as usize)
            .unwrap_or(available);
        if affinity != 1 {
            return available;
        }
        job_cpus().map_or(available, |cpus| cpus.max(available))
    })
}

/// The CPUs this process's cgroup may use (cgroup v2, then v1's cpuset controller), else the
/// host's online CPUs; `None` when none of these can be read.
fn job_cpus() -> Option<usize> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let cgroups = read("/proc/self/cgroup").unwrap_or_default();
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let file = if controllers.is_empty() {
            format!("/sys/fs/cgroup{path}/cpuset.cpus.effective")
        } else if controllers.split(',').any(|c| c == "cpuset") {
            format!("/sys/fs/cgroup/cpuset{path}/cpuset.effective_cpus")
        } else {
            continue;
        };
        if let Some(n) = read(&file).as_deref().and_then(count_cpu_list) {
            return Some(n);
        }
    }
    read("/sys/devices/system/cpu/online")
        .as_deref()
        .and_then(count_cpu_list)
}

/// The CPUs in a kernel CPU list such as `0-3,8,10-11` (`None` if it is empty or garbled).
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut count = 0usize;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        count += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (count > 0).then_some(count)
}

/// Waits until `bell`'s count differs from `seen`, by `policy`'s phases; returns the phase that
/// saw it move.
pub(crate) fn wait_past<W: Word>(
    bell: &Doorbell<W>,
    seen: u32,
    oversubscribed: bool,
    policy: &WaitPolicy,
) -> Phase {
    wait_past_then(bell, seen, oversubscribed, policy, &mut || {})
}

/// [`wait_past`], calling `idle` once if the wait outlasts its cheap start: when the spin
/// phase ends, or, oversubscribed, after [`IDLE_AFTER_YIELDS`] yields (or before sleeping if
/// the yield phase is shorter). What a waiter put off because an answer was likely to come
/// at once (the shared-memory transport's deferred progress-thread wake-ups) is done there.
pub(crate) fn wait_past_then<W: Word>(
    bell: &Doorbell<W>,
    seen: u32,
    oversubscribed: bool,
    policy: &WaitPolicy,
    idle: &mut dyn FnMut(),
) -> Phase {
    struct Idle<'a>(&'a mut dyn FnMut());
    impl Hooks for Idle<'_> {
        fn idle(&mut self) {
            (self.0)();
        }
    }
    wait_past_hooked(bell, seen, oversubscribed, policy, &mut Idle(idle))
}

/// What a transport does at the points of a wait ([`wait_past_hooked`]).
pub(crate) trait Hooks {
    /// Called between reads of the count while spinning (every [`SPINS_PER_CLOCK_READ`]
    /// reads) and after each yield: polling progress (reading sockets) happens here, on the
    /// waiting thread. Returns whether it read something: then the yield phase
    /// starts over, and polls again before it yields (a large message arriving in pieces
    /// keeps its reader polling, instead of handing each piece to a progress thread woken for
    /// it).
    fn poll(&mut self) -> bool {
        false
    }
    /// Called once when the wait outlasts its cheap start (see [`wait_past_then`]).
    fn idle(&mut self) {}
    /// Called once before the waiter sleeps on the doorbell: from then on, someone else must
    /// ring it when an event comes (a transport that polled hands its sockets back to its
    /// progress thread here).
    fn before_sleep(&mut self) {}
}

/// [`wait_past`] with a transport's [`Hooks`].
pub(crate) fn wait_past_hooked<W: Word>(
    bell: &Doorbell<W>,
    seen: u32,
    oversubscribed: bool,
    policy: &WaitPolicy,
    hooks: &mut dyn Hooks,
) -> Phase {
    if bell.current() != seen {
        return Phase::Already;
    }
    let mut start = Instant::now();
    let mut idle = true;
    if !oversubscribed {
        loop {
            for _ in 0..SPINS_PER_CLOCK_READ {
                std::hint::spin_loop();
                if bell.current() != seen {
                    return Phase::Spin;
                }
            }
            hooks.poll();
            if bell.current() != seen {
                return Phase::Spin;
            }
            if start.elapsed() >= policy.spin {
                break;
            }
        }
        idle = false;
        hooks.idle();
        start = Instant::now();
    }
    let mut round = 0;
    let mut read = false;
    let contended_before = CONTENDED_UNTIL
        .get()
        .is_some_and(|until| Instant::now() < until);
    let yields = if contended_before { 0 } else { policy.yields };
    while round < yields {
        if round == IDLE_AFTER_YIELDS && std::mem::take(&mut idle) {
            hooks.idle();
        }
        let mut contended = false;
        if !read {
            let before = Instant::now();
            std::thread::yield_now();
            let took = before.elapsed();
            let threshold = if oversubscribed {
                policy.contended_yield_oversubscribed
            } else {
                policy.contended_yield
            };
            if took >= threshold {
                contended = true;
                CONTENDED_UNTIL.set(Some(before + took + policy.contended_for));
            }
        }
        read = hooks.poll();
        if bell.current() != seen {
            return Phase::Yield;
        }
        if contended {
            break;
        }
        if read {
            round = 0;
            start = Instant::now();
            continue;
        }
        if start.elapsed() >= policy.yield_for {
            break;
        }
        round += 1;
    }
    if std::mem::take(&mut idle) {
        hooks.idle();
    }
    hooks.before_sleep();
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

    /// A yield that gives the core to a computing thread (one spinning on the waiter's only
    /// CPU) ends the yield phase: the waiter sleeps at once, although the policy here would
    /// let it yield for an hour, and the ring wakes it; its next wait skips the yield phase.
    #[test]
    fn a_contended_yield_sends_the_waiter_to_sleep() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let allowed = rustix::thread::sched_getaffinity(None).unwrap();
        let cpu = (0..rustix::thread::CpuSet::MAX_CPU)
            .find(|&c| allowed.is_set(c))
            .unwrap();
        let pin = move || {
            let mut one = rustix::thread::CpuSet::new();
            one.set(cpu);
            rustix::thread::sched_setaffinity(None, &one).unwrap();
        };
        let stop = Arc::new(AtomicBool::new(false));
        let spinner = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                pin();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let policy = WaitPolicy {
            yields: u32::MAX,
            yield_for: Duration::from_secs(3600),
            ..POLICY
        };
        let bell: Arc<Doorbell> = Arc::default();
        let waiter = {
            let bell = Arc::clone(&bell);
            std::thread::spawn(move || {
                pin();
                let mut phases = Vec::new();
                for _ in 0..2 {
                    let seen = bell.current();
                    phases.push(wait_past(&bell, seen, false, &policy));
                }
                phases
            })
        };
        for _ in 0..2 {
            // Asleep within a minute (an hour of yields otherwise), then rung.
            let deadline = Instant::now() + Duration::from_secs(60);
            while !bell.has_sleeper() {
                assert!(Instant::now() < deadline, "the waiter is still yielding");
                std::thread::yield_now();
            }
            bell.ring();
        }
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        assert_eq!(waiter.join().unwrap(), vec![Phase::Sleep, Phase::Sleep]);
    }

    /// The idle hook runs once, only when the wait goes past its cheap start: never when the
    /// count had moved already, exactly once before a waiter sleeps.
    #[test]
    fn the_idle_hook_runs_once_when_the_wait_outlasts_its_start() {
        let bell: Doorbell = Doorbell::default();
        let seen = bell.current();
        bell.ring();
        let mut calls = 0;
        wait_past_then(&bell, seen, false, &POLICY, &mut || calls += 1);
        assert_eq!(calls, 0);
        for oversubscribed in [false, true] {
            let bell: Arc<Doorbell> = Arc::default();
            let seen = bell.current();
            let ringer = {
                let bell = Arc::clone(&bell);
                std::thread::spawn(move || {
                    while !bell.has_sleeper() {
                        std::thread::yield_now();
                    }
                    bell.ring();
                })
            };
            let mut calls = 0;
            let phase = wait_past_then(&bell, seen, oversubscribed, &POLICY, &mut || calls += 1);
            ringer.join().unwrap();
            assert_eq!(phase, Phase::Sleep);
            assert_eq!(calls, 1, "oversubscribed: {oversubscribed}");
        }
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("5"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    /// A rank bound to one CPU still counts the host's cores: two bound ranks on a two-core
    /// host are not oversubscribed. Binds a child process's only thread to one CPU (the
    /// affinity is per thread, and `host_cores` is read once per process), so it runs as a
    /// fresh test binary.
    #[test]
    fn a_bound_rank_counts_the_hosts_cores() {
        if std::env::var_os("RT_TEST_BOUND_CHILD").is_some() {
            let mut one = rustix::thread::CpuSet::new();
            let first = (0..rustix::thread::CpuSet::MAX_CPU)
                .find(|&cpu| {
                    rustix::thread::sched_getaffinity(None).is_ok_and(|set| set.is_set(cpu))
                })
                .expect("some CPU is allowed");
            one.set(first);
            rustix::thread::sched_setaffinity(None, &one).expect("bind to one CPU");
            assert_eq!(cores(), 1);
            let expected = job_cpus().unwrap_or(1);
            assert_eq!(host_cores(), expected.max(1));
            println!("host cores {}", host_cores());
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "wait::tests::a_bound_rank_counts_the_hosts_cores",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RT_TEST_BOUND_CHILD", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let host: usize = stdout
            .split("host cores ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the child did not run: {stdout}"));
        assert!(host >= std::thread::available_parallelism().map_or(1, |n| n.get()));
    }

    #[test]
    fn more_ranks_than_cores_is_oversubscribed() {
        assert!(!oversubscribed(1));
        assert!(!oversubscribed(cores()));
        assert!(oversubscribed(cores() + 1));
    }
}

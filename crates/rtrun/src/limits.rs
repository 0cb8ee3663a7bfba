// SPDX-License-Identifier: MIT OR Apache-2.0
//! The host's limits, checked before a job starts: a job that cannot fit fails with a message
//! saying which limit and how many ranks would fit, before any rank exists (never a panic of
//! rtrun's, never half a job).
//!
//! What one rank needs comes from the process transport as it is today: every rank keeps a
//! connection and the descriptor of the peer's shared-memory inbox per peer, plus a few threads
//! and descriptors of its own. Whatever the transport (shared memory, the default on one host,
//! or Unix sockets alone or TCP with `RT_TRANSPORT=unix|tcp`), one thread per rank
//! (`rt-sockets`) reads all its sockets, so a rank's threads do not grow with the job's size (a
//! reader thread per connection is started only when that thread cannot be, and is not
//! counted). rtrun keeps three threads and two pipes per rank. Threads count against the
//! kernel's `pid_max` and `threads-max` (every thread has a pid) and, for a user other than
//! root, against `RLIMIT_NPROC`; descriptors against `RLIMIT_NOFILE`, whose soft limit rtrun
//! raises up to the hard one when the job needs it (the ranks inherit it).

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Threads of one rank, whatever the job's size: the main thread, the one that reads all its
/// sockets (`rt-sockets`), the acceptors (TCP and Unix), the majority watcher, the launcher's
/// connection, the shared-memory progress thread, the watcher of the peers' processes, with a
/// margin.
const RANK_THREADS: u64 = 9;
/// Descriptors of one rank besides its per-peer connections: stdio, listeners, the control
/// connection, the socket folder, with a margin.
const RANK_FDS: u64 = 32;
/// rtrun's threads per rank: two output forwarders and the waiter; its control-connection
/// thread is counted too.
const RTRUN_THREADS_PER_RANK: u64 = 4;
/// rtrun's descriptors per rank: the two pipes' read ends and the control connection.
const RTRUN_FDS_PER_RANK: u64 = 3;
/// rtrun's own descriptors and threads, with a margin.
const RTRUN_BASE: u64 = 64;

/// The limits that bound a job on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Processes and threads the kernel allows at once (the smaller of `kernel.pid_max` and
    /// `kernel.threads-max`), and how many exist now.
    pub(crate) tasks_max: Option<(u64, &'static str)>,
    pub(crate) tasks_in_use: u64,
    /// `RLIMIT_NPROC`'s soft limit, `None` when unlimited or for root (who is exempt).
    pub(crate) nproc: Option<u64>,
    /// `RLIMIT_NOFILE`: soft and hard (`None`: unlimited).
    pub(crate) nofile_soft: Option<u64>,
    pub(crate) nofile_hard: Option<u64>,
}

impl Limits {
    /// This host's limits, as far as they can be read (an unreadable one is not checked).
    pub(crate) fn of_this_host() -> Self {
        let read =
            |path: &str| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
        let pid_max = read("/proc/sys/kernel/pid_max").map(|n| (n, "kernel.pid_max"));
        let threads_max = read("/proc/sys/kernel/threads-max").map(|n| (n, "kernel.threads-max"));
        let tasks_max = match (pid_max, threads_max) {
            (Some(p), Some(t)) => Some(if t.0 < p.0 { t } else { p }),
            (p, t) => p.or(t),
        };
        // /proc/loadavg's fourth field: runnable/total scheduling entities (threads).
        let tasks_in_use = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| {
                let field = s.split_whitespace().nth(3)?;
                field.split('/').nth(1)?.parse().ok()
            })
            .unwrap_or(0);
        let root = rustix::process::geteuid().is_root();
        let nproc = if root {
            None
        } else {
            getrlimit(Resource::Nproc).current
        };
        let nofile = getrlimit(Resource::Nofile);
        Self {
            tasks_max,
            tasks_in_use,
            nproc,
            nofile_soft: nofile.current,
            nofile_hard: nofile.maximum,
        }
    }
}

/// Threads a job of `size` ranks on one host needs, rtrun's included.
fn threads_needed(size: u64) -> u64 {
    size.saturating_mul(RANK_THREADS)
        .saturating_add(size.saturating_mul(RTRUN_THREADS_PER_RANK))
        .saturating_add(RTRUN_BASE)
}

/// Descriptors one rank needs (a connection and a peer's inbox per peer), and rtrun needs.
fn fds_needed(size: u64) -> (u64, u64) {
    (
        size.saturating_sub(1).saturating_mul(2) + RANK_FDS,
        size.saturating_mul(RTRUN_FDS_PER_RANK)
            .saturating_add(RTRUN_BASE),
    )
}

/// The largest job (at most `size`) for which `fits` holds, by bisection (`fits` is monotone).
fn largest(size: u64, fits: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0, size);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Checks that `size` ranks fit within `limits`; returns the descriptor soft limit the job
/// needs when it is above the current soft limit (but within the hard one).
///
/// # Errors
/// The message: which limit, what the job needs, how many ranks would fit.
pub(crate) fn check(size: u32, limits: &Limits) -> Result<Option<u64>, String> {
    let size = u64::from(size);
    if let Some((max, name)) = limits.tasks_max {
        let free = max.saturating_sub(limits.tasks_in_use);
        if threads_needed(size) > free {
            return Err(format!(
                "-n {size}: {size} ranks on one host need about {} threads, but {name} \
                 allows {max} and {} exist already; at most {} ranks fit",
                threads_needed(size),
                limits.tasks_in_use,
                largest(size, |n| threads_needed(n) <= free)
            ));
        }
    }
    if let Some(nproc) = limits.nproc {
        if threads_needed(size) > nproc {
            return Err(format!(
                "-n {size}: {size} ranks on one host need about {} threads, but this \
                 user's process limit (ulimit -u, RLIMIT_NPROC) is {nproc}; at most {} ranks \
                 fit",
                threads_needed(size),
                largest(size, |n| threads_needed(n) <= nproc)
            ));
        }
    }
    let (per_rank, rtrun) = fds_needed(size);
    let need = per_rank.max(rtrun);
    match (limits.nofile_soft, limits.nofile_hard) {
        (Some(soft), _) if need <= soft => Ok(None),
        (_, Some(hard)) if need > hard => Err(format!(
            "-n {size}: a job of {size} ranks needs about {need} open files in a process \
             (rtrun keeps {RTRUN_FDS_PER_RANK} per rank, a rank one per peer), but the hard \
             limit (ulimit -Hn, RLIMIT_NOFILE) is {hard}; at most {} ranks fit",
            largest(size, |n| {
                let (a, b) = fds_needed(n);
                a.max(b) <= hard
            })
        )),
        (None, _) => Ok(None),
        (Some(_), _) => Ok(Some(need)),
    }
}

/// Checks this host's limits for a job of `size` ranks, raising the descriptor soft limit when
/// the job needs more and the hard limit allows it.
///
/// # Errors
/// As [`check`]'s, or the raise was refused.
pub(crate) fn check_and_raise(size: u32) -> Result<(), String> {
    let limits = Limits::of_this_host();
    if let Some(need) = check(size, &limits)? {
        let raised = Rlimit {
            current: Some(need),
            maximum: limits.nofile_hard,
        };
        setrlimit(Resource::Nofile, raised).map_err(|e| {
            format!("-n {size}: raising the open-file limit to {need} (ulimit -n): {e}")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(tasks: u64, in_use: u64, nproc: Option<u64>, soft: u64, hard: u64) -> Limits {
        Limits {
            tasks_max: Some((tasks, "kernel.pid_max")),
            tasks_in_use: in_use,
            nproc,
            nofile_soft: Some(soft),
            nofile_hard: Some(hard),
        }
    }

    #[test]
    fn a_small_job_fits_a_default_host() {
        assert_eq!(check(8, &host(32768, 500, None, 1024, 4096)), Ok(None));
        assert_eq!(check(1, &host(32768, 500, Some(100), 1024, 4096)), Ok(None));
    }

    #[test]
    fn too_many_threads_for_pid_max_names_the_limit_and_what_fits() {
        let limits = host(32768, 1000, None, 1 << 20, 1 << 20);
        let err = check(100_000, &limits).unwrap_err();
        assert!(err.contains("kernel.pid_max allows 32768"), "{err}");
        assert!(err.contains("1000 exist already"), "{err}");
        let fit = largest(100_000, |n| threads_needed(n) <= 31768);
        assert!(err.contains(&format!("at most {fit} ranks fit")), "{err}");
        assert!(threads_needed(fit) <= 31768 && threads_needed(fit + 1) > 31768);
        assert_eq!(check(fit as u32, &limits), Ok(None));
        assert!(check(fit as u32 + 1, &limits).is_err());
    }

    /// One thread per rank reads all its sockets: a job's threads grow linearly with its size,
    /// and 512 ranks fit the default pid_max of 32768.
    #[test]
    fn jobs_need_threads_linear_in_their_size() {
        assert_eq!(
            threads_needed(512) - RTRUN_BASE,
            2 * (threads_needed(256) - RTRUN_BASE)
        );
        let limits = host(32768, 120, None, 1 << 20, 1 << 20);
        assert_eq!(check(512, &limits), Ok(None));
    }

    #[test]
    fn a_users_process_limit_bounds_the_job() {
        let err = check(100, &host(1 << 22, 0, Some(1000), 1 << 20, 1 << 20)).unwrap_err();
        assert!(
            err.contains("RLIMIT_NPROC") && err.contains("1000"),
            "{err}"
        );
        let fit = largest(100, |n| threads_needed(n) <= 1000);
        assert!(err.contains(&format!("at most {fit} ranks fit")), "{err}");
    }

    #[test]
    fn the_open_file_soft_limit_is_raised_within_the_hard_one_and_refused_beyond() {
        let need = fds_needed(500).1;
        assert_eq!(
            check(500, &host(1 << 22, 0, None, 1024, 1 << 20)),
            Ok(Some(need))
        );
        let err = check(500, &host(1 << 22, 0, None, 1024, 1024)).unwrap_err();
        assert!(err.contains("hard limit") && err.contains("1024"), "{err}");
        let fit = largest(500, |n| fds_needed(n).1 <= 1024);
        assert!(err.contains(&format!("at most {fit} ranks fit")), "{err}");
    }

    #[test]
    fn unreadable_limits_are_not_checked() {
        let unknown = Limits {
            tasks_max: None,
            tasks_in_use: 0,
            nproc: None,
            nofile_soft: None,
            nofile_hard: None,
        };
        assert_eq!(check(u32::MAX, &unknown), Ok(None));
    }

    /// This machine's own limits fit a job of 8 ranks, and checking twice changes nothing
    /// (the raise, if any, already happened).
    #[test]
    fn this_host_fits_eight_ranks() {
        check_and_raise(8).unwrap();
        assert_eq!(check(8, &Limits::of_this_host()), Ok(None));
    }
}

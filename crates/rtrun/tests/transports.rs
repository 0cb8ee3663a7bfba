// SPDX-License-Identifier: MIT OR Apache-2.0
//! Which connections a job's ranks use (SPEC §4): shared memory beside a Unix-domain socket
//! between ranks of one host (the default; `RT_TRANSPORT=shm` says so explicitly), Unix sockets
//! alone with `RT_TRANSPORT=unix`, TCP for every pair with `RT_TRANSPORT=tcp`, and the same
//! failure handling on all three. Every test runs real `rtrun-check` processes through rtrun as a
//! library, bounded by a job time-out; jobs run one at a time.

use std::sync::Mutex;
use std::time::Duration;

use rtrun::{Job, Kill, Report, Stream};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const JOB_LIMIT: Duration = Duration::from_secs(60);

/// A verbose job of `size` ranks with `RT_TRANSPORT=transport`, killing rank 2 in its second
/// validate_global (before its first message of the call).
fn job_killing_rank_2(size: u32, transport: &str) -> Job {
    let mut job = Job::new(size, CHECK);
    job.args = ["validate", "--rounds", "3"]
        .iter()
        .map(Into::into)
        .collect();
    job.kills = vec!["2@validate_global:2:1".parse::<Kill>().unwrap()];
    job.timeout = Some(JOB_LIMIT);
    job.env = vec![
        ("RT_TRANSPORT".into(), transport.into()),
        ("RT_VERBOSE".into(), "1".into()),
    ];
    job
}

fn run(job: &Job) -> Report {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    rtrun::run(job).expect("the job starts")
}

fn output(report: &Report) -> String {
    report
        .lines
        .iter()
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect()
}

/// The kinds of connection the ranks' diagnostics name ("connected to rank R over KIND").
fn connections(report: &Report) -> Vec<(u32, u32, String)> {
    report
        .lines
        .iter()
        .filter(|(_, stream, _)| *stream == Stream::Stderr)
        .filter_map(|(rank, _, line)| {
            let rest = line.split_once("connected to rank ")?.1;
            let (peer, kind) = rest.split_once(" over ")?;
            Some((*rank, peer.parse().ok()?, kind.to_string()))
        })
        .collect()
}

/// The pairs whose diagnostics say they share memory both ways ("shared memory with rank R:
/// both ways").
fn shared_memory(report: &Report) -> Vec<(u32, u32)> {
    report
        .lines
        .iter()
        .filter(|(_, stream, _)| *stream == Stream::Stderr)
        .filter_map(|(rank, _, line)| {
            let rest = line.split_once("shared memory with rank ")?.1;
            let (peer, how) = rest.split_once(": ")?;
            (how == "both ways").then_some((*rank, peer.parse().ok()?))
        })
        .collect()
}

/// The job succeeded, rank 2 died and every survivor agreed on it; returns the connections.
fn survived_the_kill(report: &Report, size: u32) -> Vec<(u32, u32, String)> {
    let text = output(report);
    assert!(report.success(), "{}{text}", report.summary());
    for rank in &report.ranks {
        assert_eq!(rank.failed(), rank.rank == 2, "rank {}\n{text}", rank.rank);
        if rank.rank != 2 {
            assert_eq!(
                report.stdout_of(rank.rank).last().copied(),
                Some("final failed=[2]"),
                "rank {}\n{text}",
                rank.rank
            );
        }
    }
    let seen = connections(report);
    // Every pair of survivors connected, from both sides (rank 2 may die before its own lines).
    for a in (0..size).filter(|&r| r != 2) {
        for b in (0..size).filter(|&r| r != 2 && r != a) {
            assert!(
                seen.iter().any(|(r, p, _)| (*r, *p) == (a, b)),
                "rank {a} to {b}\n{text}"
            );
        }
    }
    seen
}

/// SPEC §4: by default (and with `RT_TRANSPORT=shm`) every pair of ranks of one host shares
/// memory beside a Unix socket, the job completes through a kill (EOF on the dead rank's
/// sockets, rtrun's confirmation, its ring drained), and the socket directory is gone after
/// the job.
#[test]
fn a_job_over_shared_memory_survives_a_kill_and_leaves_no_directory() {
    for transport in ["auto", "shm"] {
        shared_memory_survives_a_kill(transport);
    }
}

fn shared_memory_survives_a_kill(transport: &str) {
    let report = run(&job_killing_rank_2(4, transport));
    let seen = survived_the_kill(&report, 4);
    assert!(
        seen.iter().all(|(_, _, kind)| kind == "unix"),
        "{seen:?}\n{}",
        output(&report)
    );
    let shared = shared_memory(&report);
    for a in (0..4).filter(|&r| r != 2) {
        for b in (0..4).filter(|&r| r != 2 && r != a) {
            assert!(
                shared.contains(&(a, b)),
                "rank {a} to {b}: no shared memory\n{}",
                output(&report)
            );
        }
    }
    let dir = report
        .socket_dir
        .as_ref()
        .expect("rtrun made a socket directory");
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

/// With `RT_TRANSPORT=unix` every pair of one host is on its Unix socket alone (no shared
/// memory), and the same job survives the same kill.
#[test]
fn a_unix_socket_job_without_shared_memory_survives_a_kill() {
    let report = run(&job_killing_rank_2(4, "unix"));
    let seen = survived_the_kill(&report, 4);
    assert!(
        seen.iter().all(|(_, _, kind)| kind == "unix"),
        "{seen:?}\n{}",
        output(&report)
    );
    assert!(
        !output(&report).contains("shared memory with rank"),
        "{}",
        output(&report)
    );
    let dir = report
        .socket_dir
        .as_ref()
        .expect("rtrun made a socket directory");
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

/// No thread per peer (issue 12 item 4, issue 16 item 6): every socket of a rank is read by
/// one thread (`rt-sockets`) and by its waiting threads, whether the peer's data comes through
/// shared memory or the socket itself, so a rank of a job of 8 on one host runs no reader
/// thread, with shared memory, with Unix sockets alone (whose connections carry the data),
/// connected on first use or all at start.
#[test]
fn no_rank_runs_a_reader_thread_per_peer() {
    for (transport, connect, readers, pollers) in [
        ("auto", "demand", 0..=0, 1),
        ("unix", "demand", 0..=0, 1),
        ("unix", "all", 0..=0, 1),
    ] {
        let mut job = Job::new(8, CHECK);
        job.args = vec!["threads".into()];
        job.timeout = Some(JOB_LIMIT);
        job.env = vec![
            ("RT_TRANSPORT".into(), transport.into()),
            ("RT_CONNECT".into(), connect.into()),
        ];
        let report = run(&job);
        assert!(report.success(), "{}", output(&report));
        for rank in 0..8 {
            let line = report
                .stdout_of(rank)
                .into_iter()
                .find(|l| l.starts_with("threads "))
                .unwrap_or_else(|| panic!("rank {rank}\n{}", output(&report)));
            let counted = |name: &str| -> usize {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{name} in {line}"))
            };
            let what = format!("{transport}, RT_CONNECT={connect}, rank {rank}: {line}");
            assert!(readers.contains(&counted("readers")), "{what}");
            assert_eq!(counted("pollers"), pollers, "{what}");
        }
    }
}

/// `RT_TRANSPORT=tcp` puts every pair on TCP, and the same job survives the same kill.
#[test]
fn a_forced_tcp_job_survives_a_kill() {
    let report = run(&job_killing_rank_2(4, "tcp"));
    let seen = survived_the_kill(&report, 4);
    assert!(
        seen.iter().all(|(_, _, kind)| kind == "tcp"),
        "{seen:?}\n{}",
        output(&report)
    );
    let dir = report
        .socket_dir
        .as_ref()
        .expect("rtrun made a socket directory");
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

/// A transport that does not exist is refused before anything starts, with the variable
/// named: by rtrun (nothing started), and by a rank that another launcher started (its
/// `runthrough::init()` returns `InitError::BadSetting`, which rtrun-check prints).
#[test]
fn an_unknown_transport_is_refused_before_the_job_starts() {
    let mut job = job_killing_rank_2(2, "carrier-pigeon");
    job.kills.clear();
    let error = rtrun::run(&job).expect_err("rtrun refuses the job");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        error
            .to_string()
            .contains("RT_TRANSPORT=\"carrier-pigeon\""),
        "{error}"
    );
    let rank = std::process::Command::new(CHECK)
        .arg("ring")
        .env("RT_TRANSPORT", "carrier-pigeon")
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&rank.stderr);
    assert_eq!(rank.status.code(), Some(2), "{message}");
    assert!(
        message.contains("RT_TRANSPORT=\"carrier-pigeon\": expected auto"),
        "{message}"
    );
}

fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// A launcher that is SIGKILLed cannot remove the socket directory: its ranks, which halt
/// when they lose it, remove their sockets and the emptied directory.
#[test]
fn the_ranks_of_a_killed_launcher_remove_the_socket_directory() {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = std::env::temp_dir().join(format!("rt-transports-{}", std::process::id()));
    std::fs::create_dir(&runtime).unwrap();
    let mut launcher = std::process::Command::new(env!("CARGO_BIN_EXE_rtrun"))
        .args([
            "-n",
            "3",
            "--timeout",
            "60",
            CHECK,
            "idle",
            "--pause-ms",
            "30000",
        ])
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("RT_TRANSPORT", "auto")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // rtrun's directory, with the 3 ranks' sockets in it.
    let bound = || {
        let dirs = entries(&runtime);
        dirs.len() == 1 && entries(&dirs[0]).len() == 3
    };
    let ready = wait_until(Duration::from_secs(20), bound);
    let pid = rustix::process::Pid::from_child(&launcher);
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    launcher.wait().unwrap();
    let cleaned = wait_until(Duration::from_secs(10), || entries(&runtime).is_empty());
    let left = entries(&runtime);
    let _ = std::fs::remove_dir_all(&runtime);
    assert!(ready, "the ranks never bound their sockets");
    assert!(cleaned, "left behind: {left:?}");
}

/// Issue 12, polling progress: a rank that computes outside the library, after it started a
/// non-blocking agreement, still carries its side of it through its progress thread, on every
/// transport. Over shared memory a peer inside a blocking wait puts off waking that thread
/// (`shm_lane`'s deferred wake-ups) until its own wait idles: were that wake-up lost, the
/// others' `agree` and `validate_global` would not return before rank 0 stopped computing,
/// 20 s later, and the job would fail (checked: with the deferred wake-ups dropped, it does).
/// Over Unix sockets alone and TCP, rank 0's waits polled its sockets themselves, and the
/// progress thread, kept out of their way, must take the sockets back once the waits stop
/// (`sockets.rs`; checked too: with that hand-back dropped, the job fails).
#[test]
fn a_computing_rank_answers_agreements_through_its_progress_thread() {
    for transport in ["shm", "unix", "tcp"] {
        let dir = std::env::temp_dir().join(format!(
            "rtrun-computing-{}-{transport}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut job = Job::new(4, CHECK);
        job.args = vec!["computing".into()];
        job.timeout = Some(JOB_LIMIT);
        job.env = vec![
            ("RT_TRANSPORT".into(), transport.into()),
            // The progress thread also polls once per heartbeat period, which would hide a
            // lost wake-up: make that period longer than rank 0 computes.
            ("RT_HEARTBEAT".into(), "60000:120000".into()),
            (
                "RTCHECK_MARKER".into(),
                dir.join("returned").display().to_string(),
            ),
        ];
        let report = run(&job);
        let text = output(&report);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(report.success(), "{transport}: {}{text}", report.summary());
        for name in ["agree", "validate_global"] {
            assert!(
                text.contains(&format!(
                    "[0] {name} returned at the others while rank 0 computed"
                )),
                "{transport}: {text}"
            );
        }
    }
}

/// Non-blocking collectives between processes: rank 0's engine runs its side of an
/// `ibarrier` and an `iall_reduce` while rank 0 computes without calling the library (its
/// transport's progress delivers their messages), and outstanding calls with a blocking one
/// between them give their results, over every transport.
#[test]
fn non_blocking_collectives_progress_while_a_rank_computes() {
    for transport in ["shm", "unix", "tcp"] {
        let dir = std::env::temp_dir().join(format!(
            "rtrun-nonblocking-{}-{transport}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut job = Job::new(4, CHECK);
        job.args = vec!["nonblocking".into(), "--rounds".into(), "6".into()];
        job.timeout = Some(JOB_LIMIT);
        job.env = vec![
            ("RT_TRANSPORT".into(), transport.into()),
            // As in the computing test: the heartbeat's periodic poll must not be what
            // delivers rank 0's messages.
            ("RT_HEARTBEAT".into(), "60000:120000".into()),
            (
                "RTCHECK_MARKER".into(),
                dir.join("completed").display().to_string(),
            ),
        ];
        let report = run(&job);
        let text = output(&report);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(report.success(), "{transport}: {}{text}", report.summary());
        assert!(
            text.contains(
                "[0] ibarrier and iall_reduce completed at the others while rank 0 computed"
            ),
            "{transport}: {text}"
        );
        assert_eq!(
            text.matches("nonblocking rounds=6").count(),
            4,
            "{transport}: {text}"
        );
    }
}

/// One-sided communication between processes, over every transport: rank 0's window is served
/// by its transport's progress while rank 0 computes without calling the library (exclusive
/// lock read-modify-writes and shared-lock fetch-and-adds lose no increment), and puts between
/// fences land at every rank.
#[test]
fn windows_are_served_while_the_target_computes() {
    for transport in ["shm", "unix", "tcp"] {
        let mut job = Job::new(4, CHECK);
        job.args = vec!["window".into(), "--rounds".into(), "50".into()];
        job.timeout = Some(JOB_LIMIT);
        job.env = vec![
            ("RT_TRANSPORT".into(), transport.into()),
            // The heartbeat's periodic poll must not be what serves rank 0's window.
            ("RT_HEARTBEAT".into(), "60000:120000".into()),
        ];
        let report = run(&job);
        let text = output(&report);
        assert!(report.success(), "{transport}: {}{text}", report.summary());
        assert!(
            text.contains("[0] window served while rank 0 computed"),
            "{transport}: {text}"
        );
        assert_eq!(
            text.matches("window counter=300").count(),
            4,
            "{transport}: {text}"
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Multi-process jobs through rtrun as a library (SPEC §1, §4): every test launches real rank
//! processes of `rtrun-check` on loopback, bounded by a job time-out, and kills only the
//! processes it started. Jobs run one at a time so that timed faults land where intended.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rtrun::{Ending, Job, Kill, Report};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const RTRUN: &str = env!("CARGO_BIN_EXE_rtrun");
const JOB_LIMIT: Duration = Duration::from_secs(60);

fn job(size: u32, args: &[&str], kills: &[&str]) -> Job {
    let mut job = Job::new(size, CHECK);
    job.args = args.iter().map(Into::into).collect();
    job.kills = kills.iter().map(|k| k.parse::<Kill>().unwrap()).collect();
    job.timeout = Some(JOB_LIMIT);
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

/// Runs the job, checks it succeeded and that every survivor agreed on `failed` at the end
/// (SPEC §2.1 uniform agreement, over processes), and that exactly `failed` died.
fn agreed(job: &Job, failed: &[u32]) -> Report {
    let report = run(job);
    let text = output(&report);
    assert!(report.success(), "{}{text}", report.summary());
    let want = format!("final failed={failed:?}");
    for rank in &report.ranks {
        let dead = failed.contains(&rank.rank);
        assert_eq!(
            rank.failed(),
            dead,
            "rank {}\n{}{text}",
            rank.rank,
            report.summary()
        );
        if !dead {
            let lines = report.stdout_of(rank.rank);
            assert_eq!(
                lines.last().copied(),
                Some(want.as_str()),
                "rank {}\n{text}",
                rank.rank
            );
        }
    }
    report
}

/// SPEC §4: jobs of 4 and 8 processes wire up and complete.
#[test]
fn four_and_eight_processes_complete() {
    for n in [4, 8] {
        let report = agreed(&job(n, &["ring"], &[]), &[]);
        for rank in 0..n {
            assert!(report.stdout_of(rank).contains(&"ring ok"));
        }
    }
}

/// SPEC §1, §2.1: a rank killed before its first validate_global (at its first call, or at
/// once) is agreed failed by all survivors, at 4 and 8 processes.
#[test]
fn kill_before_validate_global() {
    agreed(&job(4, &["validate", "--rounds", "2"], &["2@call:1"]), &[2]);
    agreed(&job(8, &["validate", "--rounds", "2"], &["5@call:1"]), &[5]);
    // Killed at once: possibly before it registered with the launcher.
    agreed(&job(4, &["validate", "--rounds", "2"], &["1@0"]), &[1]);
}

/// SPEC §2.1 termination and uniform agreement: a rank dies inside validate_global at each of
/// its protocol points (before its 1st, 2nd, 3rd message of the call), a leaf and the root.
#[test]
fn kill_during_validate_global_at_each_protocol_point() {
    for (n, rank) in [(4u32, 3u32), (4, 0), (8, 0), (8, 6)] {
        for message in 1..=3 {
            let kill = format!("{rank}@validate_global:2:{message}");
            let report = run(&job(
                n,
                &["validate", "--rounds", "3", "--pause-ms", "20"],
                &[&kill],
            ));
            let text = output(&report);
            assert!(report.success(), "{kill}: {}{text}", report.summary());
            // A leaf sends fewer messages than 3 in a call: it may survive the plan.
            let died = report.ranks[rank as usize].failed();
            let want = if died {
                format!("final failed=[{rank}]")
            } else {
                "final failed=[]".to_string()
            };
            for r in report.ranks.iter().filter(|r| !r.failed()) {
                assert_eq!(
                    report.stdout_of(r.rank).last().copied(),
                    Some(want.as_str()),
                    "{kill}, rank {}\n{text}",
                    r.rank
                );
            }
            assert!(
                died || message > 1,
                "{kill}: the first message always happens"
            );
        }
    }
}

/// SPEC §2.1: a rank killed between validate_global calls (by time) shows up in the next G.
#[test]
fn kill_after_validate_global() {
    let args = ["validate", "--rounds", "6", "--pause-ms", "100"];
    agreed(&job(4, &args, &["1@0.25"]), &[1]);
    agreed(&job(8, &args, &["1@0.25", "6@0.35"]), &[1, 6]);
}

/// SPEC §3.3: a rank killed during a collective: the survivors' all-reduce fails or completes,
/// they validate, and go on with the collective over the new G.
#[test]
fn kill_during_a_collective() {
    let args = ["collective", "--rounds", "6", "--pause-ms", "30"];
    agreed(&job(4, &args, &["2@call:3"]), &[2]);
    agreed(&job(8, &args, &["3@call:3", "7@0.1"]), &[3, 7]);
}

/// `--kill RANK@OP:K[:M]` for a collective: the rank dies inside its K-th all-reduce, at entry
/// or just before its M-th message of that call (`allreduce` is accepted for `all_reduce`);
/// the survivors' all-reduce fails or completes, they validate and go on.
#[test]
fn kill_inside_a_collective_at_a_chosen_message() {
    let args = ["collective", "--rounds", "6", "--pause-ms", "20"];
    agreed(&job(4, &args, &["2@all_reduce:3:1"]), &[2]);
    agreed(&job(4, &args, &["1@allreduce:2"]), &[1]);
    agreed(
        &job(8, &args, &["5@all_reduce:4:2", "0@all_reduce:5:1"]),
        &[0, 5],
    );
}

/// SPEC §1: 10,000 messages between two survivors arrive exactly once and in order while the
/// other ranks die.
#[test]
fn ten_thousand_messages_arrive_once_in_order_while_others_die() {
    let args = ["stream", "--count", "10000", "--pause-ms", "400"];
    let report = agreed(
        &job(5, &args, &["2@0.02", "3@0.05", "4@call:1"]),
        &[2, 3, 4],
    );
    assert!(report.stdout_of(1).contains(&"received 10000 in order"));
}

/// SPEC §6 between processes: with a 12 MiB cap (a 4 MiB window per sender in a 3-rank job),
/// 256 MiB sent to a rank that receives only once its sender waits for credit (after a barrier,
/// an all-reduce and a `validate_global` that go through meanwhile) arrive once and in order,
/// the receiver never holding more than the window; then two ranks flooding each other with
/// isends both complete. No heartbeat is missed meanwhile (nobody is fenced). Over
/// the default transport (Unix sockets on one host) and over TCP.
#[test]
fn a_flood_between_processes_is_held_to_the_cap() {
    for transport in ["auto", "tcp"] {
        let mut job = job(3, &["flood", "--count", "256"], &[]);
        job.env
            .push((runthrough::ENV_UNEXPECTED_CAP.into(), "12M".into()));
        job.env.push(("RT_TRANSPORT".into(), transport.into()));
        let report = agreed(&job, &[]);
        let received = report.stdout_of(1);
        let line = received
            .iter()
            .find(|l| l.starts_with("flood received 256 in order"))
            .unwrap_or_else(|| panic!("{transport}: {}", output(&report)));
        assert!(line.ends_with("window=4194304 cap=12582912"), "{line}");
        assert!(report
            .stdout_of(0)
            .iter()
            .any(|l| l.starts_with("flood sent 256")));
        for rank in [0, 1] {
            let lines = report.stdout_of(rank);
            assert!(
                lines.iter().any(|l| l.starts_with("cross flood ok")),
                "{transport}: {lines:?}"
            );
        }
    }
}

/// SPEC §1, §3.1 between processes: a send blocked for credit from a receiver whose process
/// dies returns `ProcFailed`.
#[test]
fn a_send_blocked_for_credit_fails_when_its_receiver_dies() {
    let mut job = job(2, &["flood_kill"], &["1@call:1"]);
    job.env
        .push((runthrough::ENV_UNEXPECTED_CAP.into(), "1M".into()));
    let report = agreed(&job, &[1]);
    assert!(report
        .stdout_of(0)
        .iter()
        .any(|l| l.starts_with("blocked sender got")));
}

/// Issue 12 item 5, SPEC §1: a sender whose peer stopped (SIGSTOP: its progress thread too)
/// fills the peer's shared-memory ring and waits for room; the silent peer is fenced after the
/// heartbeat timeout and killed, and the sender is released with `ProcFailed`, never a hang.
/// It never waited for credit: what blocked it was the full ring.
#[test]
fn a_sender_blocked_on_a_stopped_peers_full_ring_is_released_when_it_is_fenced() {
    let mut job = job(2, &["send_to_stopped"], &[]);
    job.heartbeat = Some((Duration::from_millis(100), Duration::from_millis(800)));
    job.env.push(("RT_TRANSPORT".into(), "shm".into()));
    // Until its SIGSTOP lands, rank 1's progress thread buffers what arrives; on a loaded
    // machine that took a whole default window (32 MiB: 511 messages) once, and the sender then
    // waited for credit instead of for ring space. A window of 512 MiB keeps this test about
    // the ring.
    job.env
        .push((runthrough::ENV_UNEXPECTED_CAP.into(), "1G".into()));
    let report = agreed(&job, &[1]);
    let line = report
        .stdout_of(0)
        .into_iter()
        .find(|l| l.starts_with("sender to a stopped rank got"))
        .unwrap_or_else(|| panic!("{}", output(&report)));
    let sent: u64 = line
        .split(" after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // A ring of 1 MiB holds 15 such messages and part of a 16th: the sender filled it.
    assert!(sent >= 15, "{line}");
    assert!(line.ends_with("delayed=0"), "{line}");
    assert!(report.ranks[1].fenced_by.is_some(), "{}", report.summary());
}

/// SPEC §4: a connection to the launcher that cannot prove the job secret is refused and
/// logged, and the job goes on unaffected.
#[test]
fn a_control_connection_without_the_secret_is_refused() {
    let report = run(&job(3, &["rogue"], &[]));
    let text = output(&report);
    assert!(report.success(), "{}{text}", report.summary());
    assert_eq!(report.refused_connections, 1, "{text}");
}

/// SPEC §4 detection of hung ranks: a SIGSTOPped rank is fenced within the heartbeat timeout
/// plus a period, killed by the launcher, and the survivors agree without it.
#[test]
fn a_stopped_rank_is_fenced_and_killed() {
    let report = stopped_at_300_ms(4, 2);
    let at = report.ranks[2].ended_at.unwrap();
    assert!(at < Duration::from_millis(300 + 800 + 100 + 1500), "{at:?}");
    // The report says the stop fired, when rtrun sent it (issue 14, item 2).
    let stop = report.faults[0].fired.expect("the stop fired");
    assert!(stop.at >= Duration::from_millis(300) && stop.call.is_none());
    assert!(report.summary().contains("rtrun: --stop 2@0.3s: fired at "));
}

/// The same among 16 ranks, where most pairs connect on first use: the stopped rank's overlay
/// neighbours find it silent, rtrun kills it, and the ranks that never connected to it learn of
/// the death from rtrun; every survivor agrees.
#[test]
fn a_stopped_rank_among_sixteen_connected_on_first_use_is_fenced_and_killed() {
    stopped_at_300_ms(16, 5);
}

/// A `validate` job of `size` ranks (heartbeats every 100 ms, time-out 800 ms) whose rank
/// `stopped` gets SIGSTOP at 0.3 s: the survivors agree on it, and rtrun killed it, fenced.
fn stopped_at_300_ms(size: u32, stopped: u32) -> Report {
    let mut job = job(
        size,
        &["validate", "--rounds", "8", "--pause-ms", "200"],
        &[],
    );
    job.heartbeat = Some((Duration::from_millis(100), Duration::from_millis(800)));
    job.stops = vec![(stopped, Duration::from_millis(300))];
    let report = agreed(&job, &[stopped]);
    let rank = &report.ranks[stopped as usize];
    assert_eq!(
        rank.ending,
        Some(Ending::Signaled(9)),
        "{}",
        report.summary()
    );
    assert!(rank.fenced_by.is_some(), "{}", report.summary());
    report
}

/// Connections on first use keep the transports' promises (docs/src/semantics.md §1, §4): rank 0
/// sends 300 numbered messages to each of 15 peers from the start, most of them over connections
/// made by those sends; each arrives once and in order, over shared memory and over Unix
/// sockets. Killed right after its last send returned (at the barrier's entry), rank 0's
/// messages are all received still: a send to a peer not yet connected returns only once the
/// connection is made and its bytes are in the ring or the socket.
#[test]
fn messages_sent_over_connections_made_on_first_use_arrive_in_order_and_survive_the_sender() {
    let count = 300u64;
    let kill = format!("0@call:{}", count * 15 + 1);
    for transport in ["shm", "unix"] {
        for kills in [&[][..], &[kill.as_str()][..]] {
            let args = ["first_use", "--count", "300"];
            let mut job = job(16, &args, kills);
            job.env.push(("RT_TRANSPORT".into(), transport.into()));
            let failed: &[u32] = if kills.is_empty() { &[] } else { &[0] };
            agreed(&job, failed);
        }
    }
}

/// Processes whose environment holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let needle = format!("RTRUN_TEST_MARKER={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) {
            if environ.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()) {
                found.push(pid);
            }
        }
    }
    found
}

/// Whether process `pid` has a thread named `name`.
fn has_thread(pid: u32, name: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name)
    })
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// `rtrun` stopped by Ctrl-C (SIGINT), or killed outright, leaves no rank process behind.
#[test]
fn ctrl_c_or_a_killed_launcher_leaves_no_process_behind() {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for signal in [rustix::process::Signal::INT, rustix::process::Signal::KILL] {
        let marker = format!("{}-{:?}", std::process::id(), signal);
        let mut launcher = std::process::Command::new(RTRUN)
            .args([
                "-n",
                "4",
                "--timeout",
                "60",
                CHECK,
                "idle",
                "--pause-ms",
                "30000",
            ])
            .env("RTRUN_TEST_MARKER", &marker)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // rtrun and its 4 ranks, all past the rendezvous (their control thread runs).
        let ready = || {
            let found = processes_with(&marker);
            let past_init = found.iter().filter(|&&p| has_thread(p, "rt-control"));
            found.len() == 5 && past_init.count() == 4
        };
        assert!(
            wait_until(Duration::from_secs(20), ready),
            "{:?}",
            processes_with(&marker)
        );
        let pid = rustix::process::Pid::from_child(&launcher);
        rustix::process::kill_process(pid, signal).unwrap();
        let status = launcher.wait().unwrap();
        if signal == rustix::process::Signal::INT {
            assert_eq!(status.code(), Some(130));
        }
        assert!(
            wait_until(Duration::from_secs(10), || processes_with(&marker)
                .is_empty()),
            "left behind after {signal:?}: {:?}",
            processes_with(&marker)
        );
    }
}

/// A job whose exits nobody confirms, as across hosts under srun or Hydra: rtrun tells no rank
/// when another's process ended and kills no suspect, so a rank's end shows only as its closed
/// connections. Heartbeats as in the multi-host tests (100 ms, time-out 1 s), and TCP between
/// the ranks as between hosts.
fn unconfirmed(size: u32, args: &[&str], kills: &[&str]) -> Job {
    let mut job = job(size, args, kills);
    job.confirm_exits = false;
    job.kill_suspects = false;
    job.heartbeat = Some((Duration::from_millis(100), Duration::from_millis(1000)));
    job.env.push(("RT_TRANSPORT".into(), "tcp".into()));
    job
}

/// docs/src/semantics.md §1, §3.4 (a rank that finalizes is no failed rank): failure-free jobs
/// whose exits nobody confirms finish with every rank exiting 0 and nobody suspected, however
/// the ranks leave finalize one after the other: a rank sends the commits it owes its tree
/// before it exits, and says goodbye, so its closed connection is no suspicion and it leaves
/// the ranks its peers believe alive. Before, a run of these now and then (once in 130 runs
/// here; one in five of the multi-host ring job) halted a rank that had printed its final
/// line (exit 88: "reached 1 of the 8 ranks it believes alive"): a leaf whose parent exited
/// before sending it the commit, among peers that all looked suspected once they had exited.
/// A race, so this is a net, not a reproduction (the next test is one). 30 runs of 8 ranks
/// over TCP, about 0.05 s each.
#[test]
fn unconfirmed_exits_after_finalize_halt_nobody() {
    for round in 0..30 {
        let report = run(&unconfirmed(8, &["ring"], &[]));
        let text = output(&report);
        assert!(
            report.success(),
            "round {round}: {}{text}",
            report.summary()
        );
        for r in &report.ranks {
            assert_eq!(
                r.ending,
                Some(Ending::Exited(0)),
                "round {round}, rank {}\n{text}",
                r.rank
            );
        }
        assert!(
            !report
                .lines
                .iter()
                .any(|(_, _, l)| l.contains("fencing") || l.contains("halting")),
            "round {round}: no suspicion at all\n{text}"
        );
    }
}

/// docs/src/semantics.md §3.4 (finalize never blocks on, or reports, failed ranks) and §1 (a rank
/// that finalizes is no failed rank), deterministically: in the finalize agreement of 8
/// ranks (the 2nd agreement of `ring`), rank 4 dies before its 5th or 6th message, its
/// commits down to its subtree {5, 6, 7}, and nobody confirms either the kill or the exits.
/// Ranks 0-3 decided and exit. Before goodbyes, those exits were four more suspects, so 5, 6
/// and 7 (or those of them still waiting) reached 3 of the 8 ranks they believed alive and
/// halted, exit 88, a second after the rest, every time. Now 0-3 leave the ranks believed
/// alive: the subtree fences rank 4 by a majority (3 of 4), routes the agreement around it
/// and around the departed ranks, decides and exits 0; no survivor halts.
#[test]
fn ranks_left_in_finalize_when_their_parent_dies_finish_after_the_others_left() {
    for message in [5, 6] {
        let kill = format!("4@validate_global:2:{message}");
        let report = run(&unconfirmed(8, &["ring"], &[&kill]));
        let text = output(&report);
        assert!(report.success(), "{kill}: {}{text}", report.summary());
        assert_eq!(
            report.ranks[4].ending,
            Some(Ending::Signaled(9)),
            "{kill}\n{text}"
        );
        for r in report.ranks.iter().filter(|r| r.rank != 4) {
            assert_eq!(
                r.ending,
                Some(Ending::Exited(0)),
                "{kill}, rank {}\n{}{text}",
                r.rank,
                report.summary()
            );
            assert_eq!(
                report.stdout_of(r.rank).last().copied(),
                Some("final failed=[]"),
                "{kill}, rank {}\n{text}",
                r.rank
            );
        }
        assert!(
            !report.lines.iter().any(|(_, _, l)| l.contains("halting")),
            "{kill}: no survivor halts\n{text}"
        );
    }
}

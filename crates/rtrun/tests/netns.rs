// SPDX-License-Identifier: MIT OR Apache-2.0
//! SPEC §1's fencing rule across a cut link: two hosts, as two network namespaces joined by a
//! veth pair, a 4-rank job split between them, and the link cut while the ranks are in their
//! loop (once every rank has printed its first round). The side with a majority agrees on the
//! other side's failure and finishes; the cut-off side never decides alone: it halts (or is
//! killed by rtrun, which fences it).
//!
//! rtrun runs in namespace A (`ip netns exec`), every rank binds to the address of `veth0`
//! where it runs (`--bind veth0`), and the ranks of host B run under `--wrap R=ip netns exec B`.
//! Heartbeats every 100 ms, timeout 1 s; every job is bounded by rtrun's `--timeout` and a
//! deadline here. The namespaces are deleted, and whatever still runs in them killed by PID,
//! when a test ends, pass or fail.
//!
//! Needs root and `ip` (iproute2) with network namespaces and veth; without them each test
//! skips with a message on standard error, unless `RT_NETNS_TESTS=require` (as
//! `.ci/netns.sh` sets), which makes that a failure.

mod support;

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use support::{ip, namespace_pids, Job, Labels, Outcome, Stream};

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const RTRUN: &str = env!("CARGO_BIN_EXE_rtrun");
/// Exit statuses of `runthrough_net::launch` (a test crate sees only rtrun's dependencies).
const EXIT_NO_MAJORITY: i32 = runthrough_net::launch::EXIT_NO_MAJORITY;
const JOB_LIMIT: Duration = Duration::from_secs(60);
const SIZE: u32 = 4;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn skip(what: &str) {
    support::skip("RT_NETNS_TESTS", what, "run .ci/netns.sh");
}

/// Two namespaces, `A` (10.200.0.1) and `B` (10.200.0.2), joined by `veth0` in each.
struct Hosts {
    a: String,
    b: String,
}

impl Hosts {
    fn create(tag: &str) -> Result<Hosts, String> {
        let base = format!("rt-{}-{tag}", std::process::id());
        let hosts = Hosts {
            a: format!("{base}-a"),
            b: format!("{base}-b"),
        };
        // Dropping `hosts` on an error deletes whatever was made.
        ip(&["netns", "add", &hosts.a])?;
        ip(&["netns", "add", &hosts.b])?;
        ip(&[
            "link", "add", "veth0", "netns", &hosts.a, "type", "veth", "peer", "name", "veth0",
            "netns", &hosts.b,
        ])?;
        for (ns, address) in [(&hosts.a, "10.200.0.1/30"), (&hosts.b, "10.200.0.2/30")] {
            ip(&["-n", ns, "addr", "add", address, "dev", "veth0"])?;
            ip(&["-n", ns, "link", "set", "veth0", "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(hosts)
    }

    /// Cuts the link: host B's end goes down (A's loses its carrier).
    fn cut(&self) {
        ip(&["-n", &self.b, "link", "set", "veth0", "down"]).expect("the link is cut");
    }

    /// Processes still in our namespaces (all started by this test).
    fn pids(&self) -> Vec<i32> {
        [&self.a, &self.b]
            .iter()
            .flat_map(|ns| namespace_pids(ns))
            .collect()
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        self.pids().into_iter().for_each(support::kill);
        for ns in [&self.a, &self.b] {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

/// rtrun's summary line for `rank` (`rtrun: rank R: ...`), if it failed.
fn summary_of(outcome: &Outcome, rank: u32) -> Option<&str> {
    let tag = format!("rtrun: rank {rank}: ");
    outcome
        .launcher_stderr()
        .into_iter()
        .find(|l| l.starts_with(&tag))
}

/// `rtrun` in host A's namespace with `ranks` ranks bound to `veth0`, heartbeats every 100 ms
/// (time-out 1 s), the ranks that `wrap` names started through its command (onto host B); no
/// runthrough setting of the test's own environment reaches the job. Its options and program
/// follow.
fn rtrun_on_a(hosts: &Hosts, ranks: u32, wrap: &str) -> Command {
    let mut command = Command::new("ip");
    command.args(["netns", "exec", &hosts.a, RTRUN]);
    command.args(["-n", &ranks.to_string(), "--tag-output", "--timeout", "60"]);
    command.args(["--bind", "veth0", "--heartbeat", "100:1000", "--wrap", wrap]);
    for variable in [
        "RT_RANK",
        "RT_SIZE",
        "RT_CONTROL",
        "RT_SECRET",
        "RT_FAULT",
        "RT_BIND",
        "RT_TRANSPORT",
    ] {
        command.env_remove(variable);
    }
    command
}

/// Runs 4 ranks of `rtrun-check validate` with the ranks `on_b` on host B, and cuts the link
/// once every rank has printed its first round.
fn run_cut(hosts: &Hosts, on_b: &str, kill_suspects: bool) -> Outcome {
    let mut command = rtrun_on_a(hosts, SIZE, &format!("{on_b}=ip netns exec {}", hosts.b));
    if !kill_suspects {
        command.arg("--no-kill-suspects");
    }
    command.args([CHECK, "validate", "--rounds", "8", "--pause-ms", "100"]);
    command.env("RT_VERBOSE", "1");
    let mut job = Job::start(&mut command, JOB_LIMIT);
    let mut in_loop = [false; SIZE as usize];
    let cut = job.read_until(|stream, line| {
        if let (Stream::Out, Some((rank, "round 0 failed=[]"))) =
            (stream, Labels::Rtrun.split(line))
        {
            if let Some(seen) = in_loop.get_mut(rank as usize) {
                *seen = true;
            }
        }
        in_loop.iter().all(|&s| s)
    });
    if cut {
        hosts.cut();
    }
    let outcome = Outcome::new(job, Labels::Rtrun);
    assert!(
        cut,
        "the ranks never all reached their loop\n{}",
        outcome.text()
    );
    outcome
}

fn hosts(tag: &str) -> Option<Hosts> {
    match Hosts::create(tag) {
        Ok(hosts) => Some(hosts),
        Err(why) => {
            skip(&format!("no network namespaces here: {why}"));
            None
        }
    }
}

/// The three ranks on host A agree that rank 3 failed and finish; rank 3 decides nothing.
fn assert_majority_goes_on(outcome: &Outcome) {
    let text = outcome.text();
    assert_eq!(outcome.status.code(), Some(0), "{text}");
    for rank in 0..3 {
        assert_eq!(
            outcome.stdout_of(rank).last().copied(),
            Some("final failed=[3]"),
            "rank {rank}\n{text}"
        );
        assert_eq!(
            summary_of(outcome, rank),
            None,
            "rank {rank} exited 0\n{text}"
        );
    }
    assert!(
        outcome.decisions_of(3).iter().all(|&d| d == "[]"),
        "rank 3 decided alone\n{text}"
    );
    assert!(
        !outcome.stdout_of(3).iter().any(|l| l.starts_with("final")),
        "{text}"
    );
}

/// SPEC §1 under a launcher without a kill channel (rtrun's `--no-kill-suspects`): 3 ranks on
/// host A, rank 3 on host B. The survivors put rank 3 in their detectors because a majority
/// (3 of 4) fenced it, not because anyone confirmed it, and go on; rank 3, alone, halts for
/// want of a majority.
#[test]
fn a_cut_link_three_against_one_the_majority_goes_on_and_the_minority_halts() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(hosts) = hosts("3v1") else { return };
    let outcome = run_cut(&hosts, "3", false);
    let text = outcome.text();
    assert_majority_goes_on(&outcome);
    let rank3 = summary_of(&outcome, 3).unwrap_or_default();
    assert!(
        rank3.contains(&format!(
            "halted without a majority of its peers (exit {EXIT_NO_MAJORITY})"
        )),
        "{text}"
    );
    assert!(
        outcome.any_stderr(0..3, "rank 3 failed: fenced by a majority (3 of the 4"),
        "{text}"
    );
    assert!(
        !outcome.any_stderr(0..3, "rank 3 failed: confirmed"),
        "a rank needed the launcher's confirmation\n{text}"
    );
}

/// The same cut under rtrun's default: the survivors' suspicion makes rtrun kill rank 3 (a
/// confirmation), the report says it was fenced, and the survivors go on.
#[test]
fn a_cut_link_under_rtrun_the_suspect_is_fenced_and_killed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(hosts) = hosts("kill") else { return };
    let outcome = run_cut(&hosts, "3", true);
    let text = outcome.text();
    assert_majority_goes_on(&outcome);
    let rank3 = summary_of(&outcome, 3).unwrap_or_default();
    assert!(
        rank3.contains("killed by signal 9 (SIGKILL), fenced by rank"),
        "{text}"
    );
}

/// 2 against 2, no kill channel: no side has a majority, so neither decides the other failed
/// on its own. A side may go on only once the other side's processes have ended (rtrun
/// confirms exits): never both.
#[test]
fn a_cut_link_two_against_two_no_side_decides_alone() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(hosts) = hosts("2v2") else { return };
    let outcome = run_cut(&hosts, "2,3", false);
    let text = outcome.text();
    let decided = |rank: u32| outcome.decisions_of(rank).iter().any(|&d| d != "[]");
    let side_a = decided(0) || decided(1);
    let side_b = decided(2) || decided(3);
    assert!(!(side_a && side_b), "both sides went on\n{text}");
    let halted = |rank: u32| {
        summary_of(&outcome, rank)
            .unwrap_or_default()
            .contains(&format!("(exit {EXIT_NO_MAJORITY})"))
    };
    for rank in 0..SIZE {
        let side_went_on = if rank < 2 { side_a } else { side_b };
        if side_went_on && !halted(rank) {
            // A rank of the side that went on finishes with the other side failed, and with
            // its partner failed too when that partner halted for want of a majority before
            // the other side's exits were confirmed (a race the rule allows: the partner's
            // halt is then itself a confirmed death).
            let (other, partner) = if rank < 2 {
                ([2, 3], rank ^ 1)
            } else {
                ([0, 1], rank ^ 1)
            };
            let mut expected: Vec<u32> = other.to_vec();
            if halted(partner) {
                expected.push(partner);
                expected.sort_unstable();
            }
            assert_eq!(
                outcome.stdout_of(rank).last().copied(),
                Some(format!("final failed={expected:?}").as_str()),
                "rank {rank}\n{text}"
            );
        } else {
            assert!(
                halted(rank),
                "rank {rank} halted without a majority\n{text}"
            );
        }
    }
}

/// The barrier over hosts under rtrun (whose table of addresses tells each rank where every
/// other runs): six ranks, 0-2 on host A and 3-5 on host B. Every rank groups them into two
/// hosts (with `RT_TRANSPORT=tcp` too), and `rtrun-check barrier` finds no rank leaving any
/// of 200 barriers before every rank entered it. Rank 0, host A's leader, is killed by rtrun's plan in its 51st barrier:
/// nobody waits for ever, the five others agree on [0], and the barriers after it group the
/// survivors into two hosts again (rank 1 leads A) and still hold everyone.
#[test]
fn barriers_under_rtrun_group_the_ranks_by_host_and_survive_a_leader_killed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(hosts) = hosts("bar") else { return };
    // TCP only too: the ranks publish their host's identity without a Unix socket.
    let runs = [
        (None, None),
        (None, Some("0@barrier:51:1")),
        (Some("tcp"), None),
    ];
    for (transport, kill) in runs {
        // `nsenter --net`, not `ip netns exec`, which also gives each rank a mount namespace
        // of its own (and so a host of its own: a Unix socket path reaches another socket).
        let wrap = format!("3-5=nsenter --net=/run/netns/{}", hosts.b);
        let mut command = rtrun_on_a(&hosts, 6, &wrap);
        if let Some(kill) = kill {
            command.args(["--kill", kill]);
        }
        command.args([CHECK, "barrier", "--rounds", "200"]);
        if let Some(transport) = transport {
            command.env("RT_TRANSPORT", transport);
        }
        let outcome = Outcome::new(Job::start(&mut command, JOB_LIMIT), Labels::Rtrun);
        let text = outcome.text();
        assert_eq!(
            outcome.status.code(),
            Some(0),
            "{transport:?} {kill:?}\n{text}"
        );
        let (survivors, failed) = match kill {
            None => (0..6, "final failed=[]"),
            Some(_) => (1..6, "final failed=[0]"),
        };
        for rank in survivors {
            let lines = outcome.stdout_of(rank);
            assert!(
                lines.contains(&"barrier rounds=200 hosts=2"),
                "{kill:?} rank {rank}\n{text}"
            );
            assert_eq!(
                lines.last().copied(),
                Some(failed),
                "{kill:?} rank {rank}\n{text}"
            );
        }
    }
}

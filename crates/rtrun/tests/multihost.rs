// SPDX-License-Identifier: MIT OR Apache-2.0
//! Jobs across hosts under Slurm and Hydra (the launchers of docs/src/semantics.md §4, the failure
//! rule of its §1): `srun -N 3 -n 9 --mpi=pmi2 -K0` over three emulated hosts, each a network,
//! UTS and PID namespace with its own address and a slurmd of its own (`.ci/multihost/up.sh`;
//! the controller and srun run in a fourth namespace holding the bridge that joins them); and
//! MPICH's `mpiexec -hosts h1,h2,h3 -ppn 3 -n 9 -disable-auto-cleanup` from that fourth
//! namespace, whose ssh is `.ci/multihost/hydra-launcher.sh`: it starts each host's proxy in
//! that host's namespaces (those of its slurmd), so Hydra's ranks live on the hosts as Slurm's
//! do.
//!
//! - `rtrun-check ring` and the heat solver run across the hosts; heat puts each block's buddy
//!   copy on another host than its owner's. `rtrun-check barrier` (srun and Hydra): the
//!   barrier groups the ranks by host and holds everyone, also when a host's leader is killed
//!   in a barrier.
//! - A SIGKILL of one rank: the survivors agree and finish, heat's field equal to the
//!   failure-free one bit for bit.
//! - A whole host lost (its three ranks SIGKILLed at once, or its link cut): the other six
//!   agree on its three ranks and finish, bit for bit; a cut-off host's ranks, 3 of 9, halt
//!   for want of a majority. No rank can see another host's processes end (each host has its
//!   own PID namespace), so a lost host's ranks enter the survivors' detectors because a
//!   majority fenced them, as on real hosts.
//! - Two hosts, two ranks each, split by a cut: neither half has a majority, so both halt.
//! - Under Hydra (a rank that may be killed runs under `rt-supervise`, since Hydra ends the
//!   job when a rank dies by a signal): rtrun-check over PMI-1 and over PMI-2 (`RT_PMI`), and
//!   through a SIGKILLed rank and a host cut off, each survivor agreeing on the same failures;
//!   heat, and heat through a SIGKILLed rank, a host's three ranks killed at once and a host
//!   cut off, bit for bit. The loss of a host's Hydra proxy ends the whole job (mpiexec's
//!   choice): tested as such.
//!
//! Ranks bind to the address of their host's interface towards the controller
//! (`RT_BIND=route:10.201.0.254`): loopback, the default, would not reach the other hosts.
//! Heartbeats every 100 ms, time-out 1 s. Every srun and mpiexec runs under `timeout` and a
//! deadline here, in a process group of its own that is ended if the test ends first; a cut
//! link is put back whatever happens; only processes in our namespaces (ranks and proxies this
//! test's launcher started) are killed, by PID.
//!
//! The hosts and Slurm come from `.ci/multihost.sh`, which starts them, points `RT_MULTIHOST`
//! at the `hosts.env` that up.sh writes, runs these tests and tears everything down. Without
//! them each test skips with a message, unless `RT_LAUNCHER_TESTS=require` (as the script
//! sets), which makes that a failure; so do the Hydra tests without MPICH's `mpiexec` on
//! `PATH` (the script installs mpich). The heat binary is looked for next to `rtrun-check`
//! (built by `cargo test -p runthrough-examples --no-run`, as the script does).
//!
//! No rank that finished its work halts: a rank that finalized says goodbye to its peers, so
//! its exit is no suspicion even though no launcher here confirms it, and the tests accept no
//! end of a task other than the ones they caused ([`assert_task_ends`]).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use support::{ip, namespace_pids, Job, Labels, Outcome, Stream};

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const SUPERVISE: &str = env!("CARGO_BIN_EXE_rt-supervise");
/// Hydra's stand-in for ssh on the emulated hosts.
const HYDRA_LAUNCHER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../.ci/multihost/hydra-launcher.sh"
);
/// mpiexec's `-prepend-rank` labels lines `[R] `, as rtrun's `--tag-output` does.
const HYDRA_LABELS: Labels = Labels::Rtrun;
const EXIT_NO_MAJORITY: i32 = runthrough_net::launch::EXIT_NO_MAJORITY;
/// srun's own bound (`timeout`), and the test's deadline a little later.
const SRUN_LIMIT_SECONDS: u64 = 90;
const JOB_LIMIT: Duration = Duration::from_secs(SRUN_LIMIT_SECONDS + 15);
/// The heat job of the failure tests: about 10 s on 2 cores; failures strike once the
/// checkpoint of iteration 300 is committed.
const HEAT: [&str; 8] = [
    "--size",
    "48",
    "--iterations",
    "3000",
    "--checkpoint",
    "10",
    "--progress",
    "500",
];
const STRIKE_AFTER: &str = "checkpoint of iteration 300 committed";

/// One job at a time: they share the hosts, and a cut would hit every job on them.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn skip(what: &str) {
    support::skip("RT_LAUNCHER_TESTS", what, "run .ci/multihost.sh");
}

/// The emulated hosts and the Slurm over them, as `.ci/multihost/up.sh` describes them.
struct Cluster {
    _one: MutexGuard<'static, ()>,
    /// The namespace of the controller and of srun, holding the bridge (ports p1..p3).
    head: String,
    head_address: String,
    /// The namespaces of hosts h1, h2, h3.
    hosts: [String; 3],
    /// Their addresses on the bridge.
    addresses: [String; 3],
    slurm_conf: String,
    /// up.sh's `hosts.env` (what `.ci/multihost/hydra-launcher.sh` reads).
    hosts_env: std::ffi::OsString,
}

impl Cluster {
    fn get() -> Option<Cluster> {
        let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = std::env::var_os("RT_MULTIHOST") else {
            skip("no emulated hosts (RT_MULTIHOST is not set)");
            return None;
        };
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) => {
                skip(&format!("cannot read RT_MULTIHOST={file:?}: {e}"));
                return None;
            }
        };
        let value = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        let (Some(head), Some(head_address), Some(h1), Some(h2), Some(h3), Some(slurm_conf)) = (
            value("RT_MULTIHOST_NS_HEAD"),
            value("RT_MULTIHOST_ADDR_HEAD"),
            value("RT_MULTIHOST_NS_H1"),
            value("RT_MULTIHOST_NS_H2"),
            value("RT_MULTIHOST_NS_H3"),
            value("SLURM_CONF"),
        ) else {
            skip(&format!("{file:?} lacks a key of .ci/multihost/up.sh"));
            return None;
        };
        let (Some(a1), Some(a2), Some(a3), Some(_), Some(_), Some(_)) = (
            value("RT_MULTIHOST_ADDR_H1"),
            value("RT_MULTIHOST_ADDR_H2"),
            value("RT_MULTIHOST_ADDR_H3"),
            value("RT_MULTIHOST_INIT_H1"),
            value("RT_MULTIHOST_INIT_H2"),
            value("RT_MULTIHOST_INIT_H3"),
        ) else {
            skip(&format!("{file:?} lacks a key of .ci/multihost/up.sh"));
            return None;
        };
        let cluster = Cluster {
            _one: one,
            head,
            head_address,
            hosts: [h1, h2, h3],
            addresses: [a1, a2, a3],
            slurm_conf,
            hosts_env: file,
        };
        // The nodes of the previous test's job may still be completing, or, after a cut, be
        // taken for unresponsive until their next ping: wait for all three to be idle.
        let deadline = Instant::now() + Duration::from_secs(60);
        let idle = loop {
            let idle = cluster
                .in_head("timeout")
                .args(["10", "sinfo", "-h", "-N", "-o", "%t"])
                .output()
                .is_ok_and(|o| {
                    let states = String::from_utf8_lossy(&o.stdout).to_string();
                    o.status.success() && states.lines().filter(|l| l.trim() == "idle").count() == 3
                });
            if idle || Instant::now() > deadline {
                break idle;
            }
            std::thread::sleep(Duration::from_millis(250));
        };
        if !idle {
            skip("Slurm over the emulated hosts does not answer with 3 idle nodes");
            return None;
        }
        Some(cluster)
    }

    /// `program` run in the head's namespace, with our Slurm.
    fn in_head(&self, program: &str) -> Command {
        let mut command = Command::new("nsenter");
        command
            .arg(format!("--net=/run/netns/{}", self.head))
            .arg(program)
            .env("SLURM_CONF", &self.slurm_conf);
        command
    }

    /// `srun` of `ranks` tasks on `nodes` (`h1,h2,h3`): PMI-2, labelled lines, more tasks than
    /// CPUs allowed, and a dead task leaves the others running (`-K0`); bounded by `timeout`.
    fn srun(&self, nodes: &str, ranks: u32, program: &str) -> Command {
        let node_count = nodes.split(',').count().to_string();
        let mut command = self.in_head("timeout");
        command
            .args(["--kill-after=5", &SRUN_LIMIT_SECONDS.to_string(), "srun"])
            .args(["-N", &node_count, "-w", nodes, "-n", &ranks.to_string()])
            .args(["-O", "-l", "--mpi=pmi2", "-K0", "--time=3"])
            .args(["--job-name=runthrough-multihost", program]);
        for variable in ["RT_RANK", "RT_SIZE", "RT_CONTROL", "RT_SECRET", "RT_FAULT"] {
            command.env_remove(variable);
        }
        command
            .env("RT_BIND", format!("route:{}", self.head_address))
            .env("RT_HEARTBEAT", "100:1000")
            .env("RT_VERBOSE", "1");
        command
    }

    /// `srun` of the heat job's nine ranks on the three hosts, if the heat binary is there.
    fn heat_srun(&self) -> Option<Command> {
        Some(self.srun("h1,h2,h3", 9, heat()?.to_str().unwrap()))
    }

    /// Hydra's `mpiexec` of `ranks` ranks on `hosts` (`h1,h2,h3`), `ranks / hosts` on each in
    /// order (`-ppn`: ranks 0-2 on h1 for 9 on 3 hosts, as srun places them), run in the head's
    /// namespace and bounded by `timeout`. Each host's proxy is started by
    /// `.ci/multihost/hydra-launcher.sh` (Hydra's ssh) in that host's namespaces, and reaches
    /// mpiexec on the bridge (`-iface br0`); `-disable-auto-cleanup` keeps the other ranks
    /// running when one exits non-zero; lines are labelled `[R] ` (`-prepend-rank`). The
    /// environment, ours, goes to every rank.
    fn mpiexec(&self, hosts: &str, ranks: u32) -> Command {
        let per_host = ranks / hosts.split(',').count() as u32;
        let mut command = self.in_head("timeout");
        command
            .args(["--kill-after=5", &SRUN_LIMIT_SECONDS.to_string(), "mpiexec"])
            .args(["-launcher", "ssh", "-launcher-exec", HYDRA_LAUNCHER])
            .args(["-iface", "br0", "-hosts", hosts])
            .args(["-ppn", &per_host.to_string(), "-n", &ranks.to_string()])
            .args(["-prepend-rank", "-disable-auto-cleanup"]);
        for variable in [
            "RT_RANK",
            "RT_SIZE",
            "RT_CONTROL",
            "RT_SECRET",
            "RT_FAULT",
            "RT_PMI",
        ] {
            command.env_remove(variable);
        }
        command
            .env("RT_MULTIHOST", &self.hosts_env)
            .env("RT_BIND", format!("route:{}", self.head_address))
            .env("RT_HEARTBEAT", "100:1000")
            .env("RT_VERBOSE", "1");
        command
    }

    /// mpiexec of the heat job's nine ranks on the three hosts, each under `rt-supervise` (a
    /// rank's death by a signal would make Hydra end the whole job), if the heat binary is
    /// there.
    fn heat_mpiexec(&self) -> Option<Command> {
        let mut command = self.mpiexec("h1,h2,h3", 9);
        command.arg(SUPERVISE).arg(heat()?);
        Some(command)
    }

    /// `(rank, pid)` of the processes of `program` on host `host` (0 for h1).
    fn ranks_on(&self, host: usize, program: &str) -> Vec<(u32, i32)> {
        namespace_pids(&self.hosts[host])
            .into_iter()
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe == Path::new(program))
            })
            .filter_map(|pid| {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
                let rank = environ
                    .split(|&b| b == 0)
                    .find_map(|v| v.strip_prefix(b"PMI_RANK="))?;
                Some((std::str::from_utf8(rank).ok()?.parse().ok()?, pid))
            })
            .collect()
    }

    /// The processes on host `host` whose executable's file name is `name`.
    fn processes_on(&self, host: usize, name: &str) -> Vec<i32> {
        namespace_pids(&self.hosts[host])
            .into_iter()
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe.file_name().is_some_and(|n| n == name))
            })
            .collect()
    }

    /// Cuts host `host`'s link at the bridge until the guard is dropped.
    fn cut(&self, host: usize) -> Cut<'_> {
        let port = format!("p{}", host + 1);
        ip(&["-n", &self.head, "link", "set", &port, "down"]).expect("the link is cut");
        Cut {
            cluster: self,
            port,
        }
    }
}

/// A cut link, put back when dropped (so that the cut-off slurmstepd can report to srun).
struct Cut<'a> {
    cluster: &'a Cluster,
    port: String,
}

impl Drop for Cut<'_> {
    fn drop(&mut self) {
        let _ = ip(&["-n", &self.cluster.head, "link", "set", &self.port, "up"]);
    }
}

/// Whether `mpiexec` is MPICH's Hydra (else the test skips, or fails when required).
fn hydra() -> bool {
    let found = Command::new("mpiexec")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("HYDRA"));
    if !found {
        skip("no MPICH Hydra mpiexec on PATH (apt-get install -y mpich)");
    }
    found
}

/// The heat binary, built next to rtrun-check.
fn heat() -> Option<PathBuf> {
    let path = Path::new(CHECK).with_file_name("heat");
    if path.exists() {
        Some(path)
    } else {
        skip(&format!(
            "no {} (cargo test -p runthrough-examples --no-run builds it)",
            path.display()
        ));
        None
    }
}

/// The tasks of an srun error line (`... h1: task 1: ...`, `... h3: tasks 6-8,10: ...`).
fn tasks_of(line: &str) -> Vec<u32> {
    let list = line
        .split(": ")
        .find_map(|part| {
            part.strip_prefix("tasks ")
                .or_else(|| part.strip_prefix("task "))
        })
        .unwrap_or_default();
    list.split(',')
        .flat_map(|range| {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            match (first.parse::<u32>(), last.parse::<u32>()) {
                (Ok(first), Ok(last)) => first..last + 1,
                _ => 0..0,
            }
        })
        .collect()
}

/// srun reported that the `expected` ranks ended so (`Killed`, `Exited with exit code 88`;
/// in one line or several), and no other rank ended other than with exit status 0. (A rank
/// that had finished its work used to halt in finalize, exit 88, in about one run in five of
/// the ring job: its peers' exits looked like suspicions. Finalize now says goodbye.)
fn assert_task_ends(outcome: &Outcome, expected: &[u32], ending: &str) {
    let text = outcome.text();
    let mut ended: Vec<(u32, &str)> = outcome
        .launcher_stderr()
        .into_iter()
        .filter(|l| l.starts_with("srun: error: ") && l.contains(": task"))
        .flat_map(|line| {
            let how = line.rsplit(": ").next().unwrap_or_default();
            tasks_of(line).into_iter().map(move |rank| (rank, how))
        })
        .collect();
    ended.sort_unstable();
    for rank in expected {
        assert!(
            ended.contains(&(*rank, ending)),
            "rank {rank}: {ending}\n{text}"
        );
    }
    let unexpected: Vec<&(u32, &str)> = ended
        .iter()
        .filter(|(r, _)| !expected.contains(r))
        .collect();
    assert!(
        unexpected.is_empty(),
        "unexpected ends {unexpected:?}\n{text}"
    );
}

/// Every rank of rtrun-check's job finished with `failed` agreed, but for the `lost` ones,
/// which decided nothing.
fn assert_agreed(outcome: &Outcome, ranks: u32, lost: &[u32], failed: &str) {
    let text = outcome.text();
    for rank in (0..ranks).filter(|r| !lost.contains(r)) {
        assert_eq!(
            outcome.stdout_of(rank).last().copied(),
            Some(format!("final failed={failed}").as_str()),
            "rank {rank}\n{text}"
        );
    }
    for &rank in lost {
        assert!(
            outcome.decisions_of(rank).iter().all(|&d| d == "[]"),
            "rank {rank} decided alone\n{text}"
        );
        assert!(
            !outcome
                .stdout_of(rank)
                .iter()
                .any(|l| l.starts_with("final")),
            "{text}"
        );
    }
}

/// The heat job finished on the survivors with `failed` agreed and the failure-free field:
/// the lowest survivor says so, no survivor found its field different, none failed.
fn assert_heat_exact(outcome: &Outcome, lowest: u32, failed: &str) {
    let text = outcome.text();
    let lines = outcome.stdout_of(lowest);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("9 ranks on 3 hosts: each block's buddy copies on other hosts")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("survivors ") && l.contains(&format!(", failed {failed};"))),
        "{text}"
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.ends_with("equal bit for bit")),
        "{text}"
    );
    for bad in ["DIFFERENT", " FAILED:", "UNRECOVERABLE"] {
        assert!(
            !outcome.lines.iter().any(|(_, l)| l.contains(bad)),
            "{bad}\n{text}"
        );
    }
}

/// The heat job on the three hosts under `launcher` (labelling lines by `labels`), with
/// `ranks` (all on host `host`, 0 for h1) SIGKILLed at once when the checkpoint of iteration
/// 300 is committed.
fn heat_killing(
    cluster: &Cluster,
    mut launcher: Command,
    labels: Labels,
    host: usize,
    ranks: &[u32],
) -> Option<Outcome> {
    let program = heat()?;
    let program = program.to_str().unwrap();
    let mut job = Job::start(launcher.args(HEAT), JOB_LIMIT);
    wait_for(&mut job, STRIKE_AFTER);
    let victims: Vec<(u32, i32)> = cluster
        .ranks_on(host, program)
        .into_iter()
        .filter(|(rank, _)| ranks.contains(rank))
        .collect();
    assert_eq!(
        victims.len(),
        ranks.len(),
        "ranks {ranks:?} on h{}",
        host + 1
    );
    victims.iter().for_each(|&(_, pid)| support::kill(pid));
    Some(Outcome::new(job, labels))
}

/// Reads the job's output until `line` appears on standard output.
fn wait_for(job: &mut Job, line: &str) {
    let seen = job.read_until(|stream, l| stream == Stream::Out && l.contains(line));
    assert!(seen, "the job ended before `{line}`");
}

/// Nine ranks on three hosts pass a token around the ring and agree that nobody failed; rank 0
/// reaches the ranks of the other hosts over TCP.
#[test]
fn srun_runs_rtrun_check_across_three_hosts() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let mut srun = cluster.srun("h1,h2,h3", 9, CHECK);
    let outcome = Outcome::new(Job::start(srun.arg("ring"), JOB_LIMIT), Labels::Srun);
    let text = outcome.text();
    assert!(outcome.status.code() == Some(0), "{text}");
    assert_task_ends(&outcome, &[], "");
    for rank in 0..9 {
        assert!(
            outcome.stdout_of(rank).contains(&"ring ok"),
            "rank {rank}\n{text}"
        );
    }
    assert_agreed(&outcome, 9, &[], "[]");
    for peer in [3, 6] {
        let line = format!("runthrough rank 0: connected to rank {peer} over tcp");
        assert!(outcome.stderr_of(0).contains(&line.as_str()), "{text}");
    }
}

/// The barrier over hosts: nine ranks, three a host, under srun (PMI-2). Every rank groups
/// them into three hosts (each host's ranks report to their leader, the leaders exchange), and
/// no rank leaves any of the 300 barriers (blocking and non-blocking in turn, entered at
/// staggered times) before every rank entered it (`rtrun-check barrier` checks the gathered
/// times).
#[test]
fn srun_barriers_group_the_ranks_by_host_and_hold_everyone() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let mut srun = cluster.srun("h1,h2,h3", 9, CHECK);
    srun.args(["barrier", "--rounds", "300"]);
    let outcome = Outcome::new(Job::start(&mut srun, JOB_LIMIT), Labels::Srun);
    let text = outcome.text();
    assert!(outcome.status.code() == Some(0), "{text}");
    for rank in 0..9 {
        assert!(
            outcome
                .stdout_of(rank)
                .contains(&"barrier rounds=300 hosts=3"),
            "rank {rank}\n{text}"
        );
    }
    assert_agreed(&outcome, 9, &[], "[]");
}

/// Rank 3, h2's leader in the barrier over hosts, killed by its fault plan in its 101st
/// barrier (`RT_FAULT=barrier:101:1`, for that rank alone): nobody waits for ever, the eight
/// others agree on [3], and the barriers after it group the survivors into three hosts again
/// (rank 4 leads h2) and still hold everyone.
#[test]
fn srun_a_barrier_leader_killed_mid_barrier_the_others_regroup() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let mut srun = cluster.srun("h1,h2,h3", 9, "sh");
    srun.arg("-c")
        .arg(
            r#"if [ "$SLURM_PROCID" = 3 ]; then export RT_FAULT=barrier:101:1; fi; exec "$0" "$@""#,
        )
        .args([CHECK, "barrier", "--rounds", "300"]);
    let outcome = Outcome::new(Job::start(&mut srun, JOB_LIMIT), Labels::Srun);
    let text = outcome.text();
    for rank in (0..9).filter(|&r| r != 3) {
        assert!(
            outcome
                .stdout_of(rank)
                .contains(&"barrier rounds=300 hosts=3"),
            "rank {rank}\n{text}"
        );
    }
    assert_agreed(&outcome, 9, &[3], "[3]");
    assert_task_ends(&outcome, &[3], "Killed");
}

/// The heat job across three hosts: buddy copies on other hosts, the failure-free field.
#[test]
fn heat_runs_across_three_hosts_with_buddies_on_other_hosts() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let Some(mut srun) = cluster.heat_srun() else {
        return;
    };
    srun.args(["--size", "48", "--iterations", "300", "--checkpoint", "10"]);
    let outcome = Outcome::new(Job::start(&mut srun, JOB_LIMIT), Labels::Srun);
    assert!(outcome.status.code() == Some(0), "{}", outcome.text());
    assert_heat_exact(&outcome, 0, "[]");
    assert_task_ends(&outcome, &[], "");
}

/// One rank (4, on h2) SIGKILLed by the test mid-run: the eight others agree on it, recover
/// and finish with the failure-free field; srun reports that one task killed.
#[test]
fn heat_survives_a_sigkill_of_one_rank_bit_for_bit() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let Some(srun) = cluster.heat_srun() else {
        return;
    };
    let Some(outcome) = heat_killing(&cluster, srun, Labels::Srun, 1, &[4]) else {
        return;
    };
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[4]");
    assert_eq!(outcome.status.code(), Some(128 + 9), "{text}");
    assert_task_ends(&outcome, &[4], "Killed");
}

/// Host h3 lost: its three ranks SIGKILLed at once. Their blocks' copies are on h1 and h2, so
/// the six survivors agree on [6, 7, 8], recover every block and finish bit for bit.
#[test]
fn heat_survives_the_loss_of_a_whole_host_killed_at_once() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let Some(srun) = cluster.heat_srun() else {
        return;
    };
    let Some(outcome) = heat_killing(&cluster, srun, Labels::Srun, 2, &[6, 7, 8]) else {
        return;
    };
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[6, 7, 8]");
    assert_eq!(outcome.status.code(), Some(128 + 9), "{text}");
    assert_task_ends(&outcome, &[6, 7, 8], "Killed");
}

/// Runs `launcher` (labelling lines by `labels`) until every rank has printed `ready` on its
/// standard output, cuts `host`'s link, reads until `done` (with the link still cut), then puts
/// the link back and lets the launcher end.
fn run_with_cut(
    cluster: &Cluster,
    launcher: &mut Command,
    labels: Labels,
    ranks: u32,
    ready: &str,
    host: usize,
    mut done: impl FnMut(&Job) -> bool,
) -> Outcome {
    let mut job = Job::start(launcher, JOB_LIMIT);
    let mut started = vec![false; ranks as usize];
    let all_ready = job.read_until(|stream, line| {
        if let (Stream::Out, Some((rank, text))) = (stream, labels.split(line)) {
            if text.contains(ready) {
                if let Some(seen) = started.get_mut(rank as usize) {
                    *seen = true;
                }
            }
        }
        started.iter().all(|&s| s)
    });
    assert!(all_ready, "not every rank printed `{ready}`");
    let cut = cluster.cut(host);
    let cut_at = Instant::now();
    while !done(&job) && job.read_for(Duration::from_millis(100)) {}
    drop(cut);
    eprintln!("link of h{} cut for {:.2?}", host + 1, cut_at.elapsed());
    Outcome::new(job, labels)
}

/// `rtrun-check validate` (30 rounds, 200 ms apart) of `ranks` on `nodes`, with host `host`'s
/// link cut once every rank is in its loop, until `done`.
fn validate_with_cut(
    cluster: &Cluster,
    nodes: &str,
    ranks: u32,
    host: usize,
    done: impl FnMut(&Job) -> bool,
) -> Outcome {
    let mut srun = cluster.srun(nodes, ranks, CHECK);
    srun.args(["validate", "--rounds", "30", "--pause-ms", "200"]);
    let ready = "round 0 failed=[]";
    run_with_cut(cluster, &mut srun, Labels::Srun, ranks, ready, host, done)
}

/// How srun reports a rank that halted without a majority.
fn halted() -> String {
    format!("Exited with exit code {EXIT_NO_MAJORITY}")
}

/// Whether every rank in `ranks` has printed a standard output line containing `text`.
fn all_said(job: &Job, labels: Labels, ranks: std::ops::Range<u32>, text: &str) -> bool {
    ranks.clone().all(|rank| {
        job.seen.iter().any(|(stream, line)| {
            *stream == Stream::Out
                && labels
                    .split(line)
                    .is_some_and(|(r, l)| r == rank && l.contains(text))
        })
    })
}

/// Host h3's link cut while rtrun-check's nine ranks are in their loop: the six ranks of h1
/// and h2 fence h3's three by a majority (nobody can confirm their deaths) and agree on
/// [6, 7, 8]; h3's ranks, 3 of 9, halt without deciding anything.
#[test]
fn a_host_cut_off_its_ranks_halt_and_the_others_agree_and_finish() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let outcome = validate_with_cut(&cluster, "h1,h2,h3", 9, 2, |job| {
        all_said(job, Labels::Srun, 0..6, "final failed=")
    });
    let text = outcome.text();
    assert_agreed(&outcome, 9, &[6, 7, 8], "[6, 7, 8]");
    assert!(
        outcome.any_stderr(0..6, "failed: fenced by a majority"),
        "{text}"
    );
    assert_task_ends(&outcome, &[6, 7, 8], &halted());
}

/// The same cut under the heat job: the six survivors recover h3's blocks from their copies
/// on h1 and h2 and finish bit for bit.
#[test]
fn heat_survives_a_host_cut_off_bit_for_bit() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let Some(mut srun) = cluster.heat_srun() else {
        return;
    };
    srun.args(HEAT);
    // Rank 0 alone prints the job's lines: the others are ready when it is.
    let outcome = run_with_cut(
        &cluster,
        &mut srun,
        Labels::Srun,
        1,
        STRIKE_AFTER,
        2,
        |job| all_said(job, Labels::Srun, 0..1, "equal bit for bit"),
    );
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[6, 7, 8]");
    assert_eq!(outcome.status.code(), Some(EXIT_NO_MAJORITY), "{text}");
    assert_task_ends(&outcome, &[6, 7, 8], &halted());
}

/// Two hosts, two ranks each, and the link between them cut: each half reaches 2 of the 4
/// ranks, not a majority, so neither decides that the other failed: both halves halt.
#[test]
fn two_hosts_split_in_halves_both_halt() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let outcome = validate_with_cut(&cluster, "h1,h2", 4, 1, |_| {
        // h2's tasks cannot report their end to srun before the link is back: wait until no
        // rank runs on either host any more.
        cluster.ranks_on(0, CHECK).is_empty() && cluster.ranks_on(1, CHECK).is_empty()
    });
    let text = outcome.text();
    assert_agreed(&outcome, 4, &[0, 1, 2, 3], "");
    assert_task_ends(&outcome, &[0, 1, 2, 3], &halted());
    assert_eq!(outcome.status.code(), Some(EXIT_NO_MAJORITY), "{text}");
}

/// Without `RT_BIND` the ranks listen on loopback, which no other host reaches: every rank's
/// init fails at once with a message naming `RT_BIND` (issue 16 item 5), instead of each rank
/// waiting for connections that can never come.
#[test]
fn loopback_listeners_across_hosts_fail_init_naming_rt_bind() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    let mut srun = cluster.srun("h1,h2,h3", 3, CHECK);
    srun.env_remove("RT_BIND");
    let outcome = Outcome::new(Job::start(srun.arg("ring"), JOB_LIMIT), Labels::Srun);
    let text = outcome.text();
    assert!(!outcome.status.success(), "{text}");
    assert_ne!(
        outcome.status.code(),
        Some(124),
        "srun's time limit: {text}"
    );
    for rank in 0..3 {
        assert!(
            outcome
                .stderr_of(rank)
                .iter()
                .any(|l| l.contains("RT_BIND") && l.contains("another host")),
            "rank {rank}\n{text}"
        );
        assert!(!outcome.stdout_of(rank).contains(&"ring ok"), "{text}");
    }
}

/// Every line of a job, both streams, as one text. With `-v`, mpiexec and each host's proxy
/// write to the same standard output, each message in two writes (a label such as
/// `[proxy:0:2@h3] ` or `[4] `, then the text), and the writers interleave: a label may end up
/// away from its text. So only whole texts are searched for, and counted.
fn all_text(outcome: &Outcome) -> String {
    outcome
        .lines
        .iter()
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

/// Hydra across the three hosts, over PMI-1 and PMI-2 (`RT_PMI`): nine ranks pass the token
/// around the ring and agree that nobody failed (mpiexec exits 0 only if every rank did, and
/// rtrun-check exits 0 only with every result right). mpiexec's `-v` shows what the proxies,
/// named after their hosts, were asked: nine handshakes of the PMI version chosen, and each
/// rank's published address, that of its own host (ranks 0-2 on h1, ...).
#[test]
fn hydra_runs_rtrun_check_across_three_hosts_over_pmi1_and_pmi2() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    for version in [1, 2] {
        let mut mpiexec = cluster.mpiexec("h1,h2,h3", 9);
        mpiexec
            .arg("-v")
            .env("RT_PMI", version.to_string())
            .args([CHECK, "ring"]);
        let outcome = Outcome::new(Job::start(&mut mpiexec, JOB_LIMIT), HYDRA_LABELS);
        let text = all_text(&outcome);
        let context = format!("PMI-{version}, status {:?}\n{text}", outcome.status);
        assert_eq!(outcome.status.code(), Some(0), "{context}");
        for said in ["ring ok\n", "final failed=[]\n"] {
            assert_eq!(text.matches(said).count(), 9, "{said}\n{context}");
        }
        let handshake = format!("cmd=response_to_init pmi_version={version} pmi_subversion=");
        assert_eq!(
            text.matches(&handshake).count(),
            9,
            "{handshake}\n{context}"
        );
        for host in 1..=3 {
            let proxy = format!("@h{host}] ");
            assert!(text.contains(&proxy), "{proxy}\n{context}");
        }
        for rank in 0..9 {
            let address = &cluster.addresses[rank / 3];
            let published = match version {
                1 => format!("rt-addr-{rank}={address}:"),
                _ => format!("cmd=kvs-put;key=rt-addr-{rank};value={address}:"),
            };
            assert!(text.contains(&published), "{published}\n{context}");
        }
        let other = if version == 1 {
            "cmd=kvs-fence"
        } else {
            "cmd=barrier_in"
        };
        assert!(!text.contains(other), "{other}\n{context}");
    }
}

/// The barrier over hosts under Hydra (PMI-1, its default): the nine ranks group into three
/// hosts from the addresses PMI gave them, and no rank leaves any of 200 barriers before every
/// rank entered it.
#[test]
fn hydra_barriers_group_the_ranks_by_host_and_hold_everyone() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let mut mpiexec = cluster.mpiexec("h1,h2,h3", 9);
    mpiexec.args([CHECK, "barrier", "--rounds", "200"]);
    let outcome = Outcome::new(Job::start(&mut mpiexec, JOB_LIMIT), HYDRA_LABELS);
    let text = all_text(&outcome);
    assert_eq!(outcome.status.code(), Some(0), "{text}");
    for said in ["barrier rounds=200 hosts=3\n", "final failed=[]\n"] {
        assert_eq!(text.matches(said).count(), 9, "{said}\n{text}");
    }
}

/// The heat job across the three hosts under Hydra, over PMI-2: buddy copies on other hosts,
/// the failure-free field.
#[test]
fn hydra_runs_heat_across_three_hosts_over_pmi2() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let Some(mut mpiexec) = cluster.heat_mpiexec() else {
        return;
    };
    mpiexec
        .env("RT_PMI", "2")
        .args(["--size", "48", "--iterations", "300", "--checkpoint", "10"]);
    let outcome = Outcome::new(Job::start(&mut mpiexec, JOB_LIMIT), HYDRA_LABELS);
    assert_eq!(outcome.status.code(), Some(0), "{}", outcome.text());
    assert_heat_exact(&outcome, 0, "[]");
}

/// Under Hydra, one rank (4, on h2) SIGKILLed mid-run: its `rt-supervise` exits 137, which
/// Hydra tolerates (`-disable-auto-cleanup`), so the eight others agree on [4], recover and
/// finish bit for bit; mpiexec passes the dead rank's status on.
#[test]
fn hydra_heat_survives_a_sigkill_of_one_rank_bit_for_bit() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let Some(mpiexec) = cluster.heat_mpiexec() else {
        return;
    };
    let Some(outcome) = heat_killing(&cluster, mpiexec, HYDRA_LABELS, 1, &[4]) else {
        return;
    };
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[4]");
    assert_eq!(outcome.status.code(), Some(128 + 9), "{text}");
}

/// Under Hydra, host h3's three ranks SIGKILLed at once: the six others agree on [6, 7, 8],
/// recover every block from the copies on h1 and h2 and finish bit for bit.
#[test]
fn hydra_heat_survives_the_loss_of_a_host_s_ranks_bit_for_bit() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let Some(mpiexec) = cluster.heat_mpiexec() else {
        return;
    };
    let Some(outcome) = heat_killing(&cluster, mpiexec, HYDRA_LABELS, 2, &[6, 7, 8]) else {
        return;
    };
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[6, 7, 8]");
    assert_eq!(outcome.status.code(), Some(128 + 9), "{text}");
}

/// Under Hydra, host h3 cut off (its link down) mid-run: the six ranks of h1 and h2 fence its
/// three by a majority, agree on [6, 7, 8] and finish bit for bit; h3's ranks halt for want of
/// a majority (exit 88, which mpiexec reports once the link is back and h3's proxy can tell it).
#[test]
fn hydra_heat_survives_a_host_cut_off_bit_for_bit() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let Some(mut mpiexec) = cluster.heat_mpiexec() else {
        return;
    };
    mpiexec.args(HEAT);
    let outcome = run_with_cut(
        &cluster,
        &mut mpiexec,
        HYDRA_LABELS,
        1,
        STRIKE_AFTER,
        2,
        |job| all_said(job, HYDRA_LABELS, 0..1, "equal bit for bit"),
    );
    let text = outcome.text();
    assert_heat_exact(&outcome, 0, "[6, 7, 8]");
    assert_eq!(outcome.status.code(), Some(EXIT_NO_MAJORITY), "{text}");
}

/// What Hydra allows: the loss of a host's proxy (`hydra_pmi_proxy`, SIGKILLed with its
/// supervisors and ranks, as when a machine crashes and its connections are reset) makes
/// mpiexec end the whole job, `-disable-auto-cleanup` or not: the other hosts' ranks are
/// killed and never finish. Only the loss of ranks, or of a host's link, is survived under
/// Hydra (this documents the launcher, and fails if Hydra changes).
#[test]
fn hydra_the_loss_of_a_host_s_proxy_ends_the_whole_job() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let Some(mut mpiexec) = cluster.heat_mpiexec() else {
        return;
    };
    let program = heat().unwrap();
    let program = program.to_str().unwrap();
    let mut job = Job::start(mpiexec.args(HEAT), JOB_LIMIT);
    wait_for(&mut job, STRIKE_AFTER);
    let name = |path: &str| {
        Path::new(path)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };
    let victims: Vec<i32> = ["hydra_pmi_proxy", &name(SUPERVISE), &name(program)]
        .iter()
        .flat_map(|exe| cluster.processes_on(2, exe))
        .collect();
    assert_eq!(victims.len(), 7, "h3's proxy, supervisors and ranks");
    victims.iter().for_each(|&pid| support::kill(pid));
    let outcome = Outcome::new(job, HYDRA_LABELS);
    let text = outcome.text();
    assert_eq!(outcome.status.code(), Some(255), "{text}");
    // mpiexec's own words, on any stderr line: a rank's partial line and mpiexec's share the
    // stream, so the message can follow a rank's label on one line.
    assert!(
        outcome
            .lines
            .iter()
            .any(|(s, l)| *s == Stream::Err && l.contains("assert (!closed) failed")),
        "{text}"
    );
    assert!(
        !outcome
            .lines
            .iter()
            .any(|(_, l)| l.contains("equal bit for bit")),
        "{text}"
    );
    // The other hosts' proxies end their ranks once mpiexec is gone: wait for that (bounded),
    // so that no rank is left to the next test.
    let deadline = Instant::now() + Duration::from_secs(10);
    while (0..2).any(|host| !cluster.ranks_on(host, program).is_empty()) {
        assert!(Instant::now() < deadline, "ranks left on h1 or h2\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Under Hydra, rtrun-check's rank 4 (on h2) SIGKILLs itself at its second communication call
/// (`RT_FAULT=call:2`, set for that rank alone): its `rt-supervise` exits 137, and each of the
/// eight others agrees on [4] and finishes.
#[test]
fn hydra_a_sigkilled_rank_the_others_agree_and_finish() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let mut mpiexec = cluster.mpiexec("h1,h2,h3", 9);
    mpiexec
        .args([SUPERVISE, "sh", "-c"])
        .arg(r#"if [ "$PMI_RANK" = 4 ]; then export RT_FAULT=call:2; fi; exec "$0" "$@""#)
        .args([CHECK, "validate", "--rounds", "4", "--pause-ms", "50"]);
    let outcome = Outcome::new(Job::start(&mut mpiexec, JOB_LIMIT), HYDRA_LABELS);
    assert_agreed(&outcome, 9, &[4], "[4]");
    assert_eq!(outcome.status.code(), Some(128 + 9), "{}", outcome.text());
}

/// Under Hydra, host h3's link cut while rtrun-check's nine ranks are in their loop: the six
/// ranks of h1 and h2 fence h3's three by a majority and agree on [6, 7, 8]; h3's ranks halt
/// without deciding anything (exit 88, which mpiexec reports once the link is back).
#[test]
fn hydra_a_host_cut_off_its_ranks_halt_and_the_others_agree_and_finish() {
    let Some(cluster) = Cluster::get() else {
        return;
    };
    if !hydra() {
        return;
    }
    let mut mpiexec = cluster.mpiexec("h1,h2,h3", 9);
    mpiexec.args([CHECK, "validate", "--rounds", "30", "--pause-ms", "200"]);
    let ready = "round 0 failed=[]";
    let outcome = run_with_cut(&cluster, &mut mpiexec, HYDRA_LABELS, 9, ready, 2, |job| {
        all_said(job, HYDRA_LABELS, 0..6, "final failed=")
    });
    assert_agreed(&outcome, 9, &[6, 7, 8], "[6, 7, 8]");
    assert_eq!(
        outcome.status.code(),
        Some(EXIT_NO_MAJORITY),
        "{}",
        outcome.text()
    );
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Jobs under the existing launchers (SPEC §4): MPICH's Hydra `mpiexec` (PMI-1) and Slurm's
//! `srun --mpi=pmi2` (PMI-2) run `rtrun-check` to completion, and survive a rank's SIGKILL where
//! the launcher allows it (under Hydra only with `rt-supervise`).
//!
//! Each test skips, with a message on standard error, when its launcher is absent (no Hydra
//! `mpiexec` on `PATH`; no `srun` or no Slurm answering). With `RT_LAUNCHER_TESTS=require`
//! (as `.ci/launchers.sh` sets) a missing launcher fails the test instead. Slurm is found through
//! `SLURM_CONF`, else the configuration `.ci/slurm/start.sh` writes
//! (`/tmp/runthrough-slurm/slurm.conf`). Every job is bounded by a time-out, runs on loopback,
//! and only the process group this test started is signalled.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use support::{Job, Stream};

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const SUPERVISE: &str = env!("CARGO_BIN_EXE_rt-supervise");
const JOB_LIMIT: Duration = Duration::from_secs(60);
const DEFAULT_SLURM_CONF: &str = "/tmp/runthrough-slurm/slurm.conf";

/// Rank 2 SIGKILLs itself at its second communication call (`RT_FAULT=call:2`), the others
/// run as they are: a launcher-neutral way to kill one rank (both launchers set `PMI_RANK`).
const KILL_RANK_2: &str =
    r#"if [ "$PMI_RANK" = 2 ]; then export RT_FAULT=call:2; fi; exec "$0" "$@""#;

/// Ranks 1 and 2 of 3 die at their second call: rank 0 is left alone, with no majority to fence
/// them by, so it goes on only if it confirms their deaths (same host: it sees their processes
/// end, `runthrough_net::local`).
const KILL_RANKS_1_AND_2: &str =
    r#"case "$PMI_RANK" in 1|2) export RT_FAULT=call:2;; esac; exec "$0" "$@""#;

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

struct Outcome {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn text(&self) -> String {
        format!(
            "status {:?}\n--- stdout\n{}--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }

    /// The lines of `rank`, labelled `[r] ` (Hydra's `-prepend-rank`) or `r: ` (srun's `-l`).
    fn lines_of(&self, rank: u32) -> Vec<&str> {
        // srun pads the label to the width of the largest task number (` 0: ` among 12).
        let (hydra, slurm) = (format!("[{rank}] "), format!("{rank}: "));
        self.stdout
            .lines()
            .filter_map(|l| {
                l.strip_prefix(&hydra)
                    .or_else(|| l.trim_start().strip_prefix(&slurm))
            })
            .collect()
    }
}

/// Runs `command` in its own process group, bounded by [`JOB_LIMIT`] (the group is ended if
/// the test ends first).
fn run(command: &mut Command) -> Outcome {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for variable in ["RT_RANK", "RT_SIZE", "RT_CONTROL", "RT_SECRET", "RT_FAULT"] {
        command.env_remove(variable);
    }
    let (status, lines) = Job::start(command, JOB_LIMIT).finish();
    let text = |stream: Stream| {
        lines
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, line)| format!("{line}\n"))
            .collect()
    };
    Outcome {
        status,
        stdout: text(Stream::Out),
        stderr: text(Stream::Err),
    }
}

fn required() -> bool {
    std::env::var("RT_LAUNCHER_TESTS").is_ok_and(|v| v == "require")
}

fn skip(what: &str) {
    assert!(
        !required(),
        "{what}, and RT_LAUNCHER_TESTS=require: run .ci/launchers.sh"
    );
    // Straight to the standard error stream, past the test harness's capture, so the skip is
    // seen in a plain `cargo test`.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED launcher test: {what} (install it, or run .ci/launchers.sh)"
    );
}

/// Whether `mpiexec` is MPICH's Hydra.
fn hydra() -> bool {
    let found = Command::new("mpiexec")
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("HYDRA"));
    if !found {
        skip("no MPICH Hydra mpiexec on PATH (apt-get install -y mpich)");
    }
    found
}

/// The Slurm configuration to use, when `srun` is installed and its controller answers.
fn slurm() -> Option<String> {
    let conf = std::env::var("SLURM_CONF").ok().or_else(|| {
        Path::new(DEFAULT_SLURM_CONF)
            .exists()
            .then(|| DEFAULT_SLURM_CONF.to_string())
    });
    // A node that just ran another test's job may show as completing ("comp") or in another
    // passing state for a moment: srun waits for it, so any state of a responding node counts
    // (not down, drained, failed, unknown, or marked `*`, not responding). A controller slow
    // to answer under load, or a node not responding for a moment, is asked again for up to 30 s
    // (as multihost.rs waits for its nodes).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let answering = conf.as_ref().is_some_and(|conf| loop {
        let answered = {
            Command::new("timeout")
                .args(["10", "sinfo", "-h", "-o", "%t"])
                .env("SLURM_CONF", conf)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .is_ok_and(|o| {
                    let states = String::from_utf8_lossy(&o.stdout).to_string();
                    o.status.success()
                        && states.lines().map(str::trim).any(|state| {
                            !state.is_empty()
                                && !state.ends_with('*')
                                && !["down", "drain", "drng", "fail", "unk", "boot", "futr"]
                                    .iter()
                                    .any(|bad| state.starts_with(bad))
                        })
                })
        };
        if answered || std::time::Instant::now() > deadline {
            break answered;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    });
    if !answering {
        skip("no Slurm answering (apt-get install -y slurm-wlm munge; .ci/slurm/start.sh)");
        return None;
    }
    conf
}

fn mpiexec(ranks: u32) -> Command {
    let mut c = Command::new("mpiexec");
    c.args(["-n", &ranks.to_string(), "-prepend-rank"]);
    c
}

fn srun(conf: &str, ranks: u32) -> Command {
    let mut c = Command::new("srun");
    // -O: more tasks than CPUs; -l: label lines with the rank; -K0: a dead task does not take
    // the others down (Slurm's default, said explicitly).
    c.args(["-n", &ranks.to_string(), "-O", "-l", "--mpi=pmi2", "-K0"])
        .args(["--time=2", "--job-name=runthrough-test"])
        .env("SLURM_CONF", conf);
    c
}

/// Every rank said `ring ok` and agreed that nobody failed; the launcher exited 0.
fn check_ring(outcome: &Outcome, ranks: u32) {
    assert!(outcome.status.success(), "{}", outcome.text());
    for rank in 0..ranks {
        let lines = outcome.lines_of(rank);
        assert!(
            lines.contains(&"ring ok"),
            "rank {rank}\n{}",
            outcome.text()
        );
        assert_eq!(
            lines.last().copied(),
            Some("final failed=[]"),
            "rank {rank}\n{}",
            outcome.text()
        );
    }
}

/// Rank 2 died; every other rank agreed on it at the end (and so exited 0: rtrun-check prints
/// the line only on success, and exits non-zero on any wrong result).
fn check_survived(outcome: &Outcome, ranks: u32) {
    for rank in 0..ranks {
        let lines = outcome.lines_of(rank);
        if rank == 2 {
            assert!(
                !lines.iter().any(|l| l.starts_with("final")),
                "rank 2 was to die\n{}",
                outcome.text()
            );
        } else {
            assert_eq!(
                lines.last().copied(),
                Some("final failed=[2]"),
                "rank {rank}\n{}",
                outcome.text()
            );
        }
    }
    // The launcher passes on the dead rank's status (128 + SIGKILL), not success.
    assert_eq!(outcome.status.code(), Some(137), "{}", outcome.text());
    assert!(
        !outcome.stderr.contains("rtrun-check rank"),
        "{}",
        outcome.text()
    );
}

fn killing_rank_2(launcher: &mut Command, supervised: bool) -> &mut Command {
    if supervised {
        launcher.arg(SUPERVISE);
    }
    launcher.args(["sh", "-c", KILL_RANK_2, CHECK]).args([
        "validate",
        "--rounds",
        "4",
        "--pause-ms",
        "50",
    ])
}

/// Spawning under a PMI launcher: neither Hydra nor srun can start ranks for a running job
/// here (docs/src/semantics.md §8), so `Comm::spawn` fails with the same clear error at every
/// parent (`Error::Spawn` naming rtrun) and the job goes on.
fn check_spawn_refused(outcome: &Outcome, ranks: u32) {
    assert!(outcome.status.success(), "{}", outcome.text());
    for rank in 0..ranks {
        let lines = outcome.lines_of(rank);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("spawn refused:") && l.contains("only rtrun")),
            "rank {rank}\n{}",
            outcome.text()
        );
        assert_eq!(
            lines.last().copied(),
            Some("final failed=[]"),
            "{}",
            outcome.text()
        );
    }
}

#[test]
fn hydra_mpiexec_refuses_a_spawn_at_every_parent() {
    if !hydra() {
        return;
    }
    check_spawn_refused(&run(mpiexec(3).args([CHECK, "spawn"])), 3);
}

#[test]
fn srun_pmi2_refuses_a_spawn_at_every_parent() {
    let Some(conf) = slurm() else { return };
    check_spawn_refused(&run(srun(&conf, 3).args([CHECK, "spawn"])), 3);
}

/// SPEC §4: a job of 4 ranks under Hydra (PMI-1) completes.
#[test]
fn hydra_mpiexec_runs_a_job_to_completion() {
    if !hydra() {
        return;
    }
    check_ring(&run(mpiexec(4).args([CHECK, "ring"])), 4);
}

/// Under Hydra a rank's SIGKILL is survived when each rank runs under `rt-supervise`: the
/// survivors agree on the failure and finish.
#[test]
fn hydra_mpiexec_with_rt_supervise_survives_a_kill() {
    if !hydra() {
        return;
    }
    check_survived(&run(killing_rank_2(&mut mpiexec(4), true)), 4);
}

/// Ranks of the job waiting in a receive from rank 2, which dies without sending anything.
const WAITING: u32 = 20;

/// 20 ranks, where most pairs connect on first use (each rank connects at start to the 8 of its
/// 19 peers 1, 2, 4, 8 and 16 places away round the ranks), all waiting in a receive from rank
/// 2, which dies without sending anything: the receives fail with `ProcFailed` at the ranks
/// that never connected to rank 2 too, and every survivor agrees on the death. Those ranks
/// must learn it by watching rank 2's process through a pidfd: votes over the overlay reach no
/// majority (9 of 20 at most), and the votes to unconnected peers wait a heartbeat period
/// (2 s here) and go only if the suspect is not known dead by then; without the watch they
/// would wait for those, the launcher telling nobody.
#[test]
fn hydra_mpiexec_ranks_never_connected_to_a_dead_rank_learn_of_its_death() {
    if !hydra() {
        return;
    }
    let mut mpiexec = mpiexec(WAITING);
    mpiexec
        .arg(SUPERVISE)
        .env("RT_VERBOSE", "1")
        .env("RT_HEARTBEAT", "2000:20000")
        .args(["sh", "-c", KILL_RANK_2, CHECK, "wait_for_2"]);
    let outcome = run(&mut mpiexec);
    check_survived(&outcome, WAITING);
    watched_rank_2_end(&outcome);
}

/// The ranks outside rank 2's overlay saw its process end through their watch.
fn watched_rank_2_end(outcome: &Outcome) {
    let n = WAITING;
    let overlay: Vec<u32> = [1, 2, 4, 8, 16]
        .iter()
        .filter(|&&step| step < n)
        .flat_map(|&step| [(2 + step) % n, (2 + n - step) % n])
        .collect();
    for rank in (0..n).filter(|r| *r != 2 && !overlay.contains(r)) {
        let said = format!("runthrough rank {rank}: rank 2's process ended (watched by a pidfd)");
        assert!(outcome.stderr.contains(&said), "{said}\n{}", outcome.text());
    }
}

/// srun's twin of the test above.
#[test]
fn srun_pmi2_ranks_never_connected_to_a_dead_rank_learn_of_its_death() {
    let Some(conf) = slurm() else { return };
    let mut srun = srun(&conf, WAITING);
    srun.env("RT_VERBOSE", "1")
        .env("RT_HEARTBEAT", "2000:20000")
        .args(["sh", "-c", KILL_RANK_2, CHECK, "wait_for_2"]);
    let outcome = run(&mut srun);
    check_survived(&outcome, WAITING);
    watched_rank_2_end(&outcome);
}

/// What Hydra allows: without a supervisor, a rank's death by a signal takes the whole job
/// down, so the survivors never finish (this documents the launcher, and fails if Hydra
/// changes).
#[test]
fn hydra_mpiexec_without_a_supervisor_aborts_on_a_kill() {
    if !hydra() {
        return;
    }
    let outcome = run(killing_rank_2(&mut mpiexec(4), false));
    assert!(!outcome.status.success(), "{}", outcome.text());
    let finished = (0..4)
        .filter(|&r| outcome.lines_of(r).iter().any(|l| l.starts_with("final")))
        .count();
    assert_eq!(finished, 0, "{}", outcome.text());
}

/// Ranks 1 and 2 died; rank 0, the last one, agreed on both and finished.
fn check_last_survivor(outcome: &Outcome) {
    assert_eq!(
        outcome.lines_of(0).last().copied(),
        Some("final failed=[1, 2]"),
        "{}",
        outcome.text()
    );
    for rank in [1, 2] {
        assert!(
            !outcome
                .lines_of(rank)
                .iter()
                .any(|l| l.starts_with("final")),
            "rank {rank} was to die\n{}",
            outcome.text()
        );
    }
    assert_eq!(outcome.status.code(), Some(137), "{}", outcome.text());
}

fn killing_ranks_1_and_2(launcher: &mut Command, supervised: bool) -> &mut Command {
    if supervised {
        launcher.arg(SUPERVISE);
    }
    launcher
        .args(["sh", "-c", KILL_RANKS_1_AND_2, CHECK])
        .args(["validate", "--rounds", "4", "--pause-ms", "50"])
}

/// SPEC §1 under a launcher that tells nobody of deaths: two of three ranks die, and the
/// survivor, with no majority left to vote, confirms both deaths by seeing their processes end
/// on its host, agrees, and finishes alone (all but one rank may fail).
#[test]
fn hydra_mpiexec_last_survivor_of_three_goes_on() {
    if !hydra() {
        return;
    }
    check_last_survivor(&run(killing_ranks_1_and_2(&mut mpiexec(3), true)));
}

/// SPEC §4: a job of 4 tasks under `srun --mpi=pmi2` (PMI-2) completes.
#[test]
fn srun_pmi2_runs_a_job_to_completion() {
    let Some(conf) = slurm() else { return };
    check_ring(&run(srun(&conf, 4).args([CHECK, "ring"])), 4);
}

/// srun leaves the other tasks running when one dies: the survivors agree and finish, no
/// supervisor needed.
#[test]
fn srun_pmi2_survives_a_kill() {
    let Some(conf) = slurm() else { return };
    check_survived(&run(killing_rank_2(&mut srun(&conf, 4), false)), 4);
}

/// As under Hydra: the last of three tasks confirms the two deaths on its host and finishes.
#[test]
fn srun_pmi2_last_survivor_of_three_goes_on() {
    let Some(conf) = slurm() else { return };
    check_last_survivor(&run(killing_ranks_1_and_2(&mut srun(&conf, 3), false)));
}

/// Rank 2 exits (status 3) before it starts runthrough, so it never reaches the PMI fence.
const RANK_2_NEVER_STARTS: &str = r#"if [ "$PMI_RANK" = 2 ]; then exit 3; fi; exec "$0" "$@""#;

/// Runs a job of 3 under `launcher` whose rank 2 never starts, with `RT_INIT_TIMEOUT=2`: the
/// launcher fails, ranks 0 and 1 never run, and returns how many of them said, naming
/// `RT_INIT_TIMEOUT`, that the others did not all start.
fn rank_2_never_starts(launcher: &mut Command) -> usize {
    launcher
        .env("RT_INIT_TIMEOUT", "2")
        .args(["sh", "-c", RANK_2_NEVER_STARTS, CHECK, "ring"]);
    let outcome = run(launcher);
    let text = outcome.text();
    assert!(!outcome.status.success(), "{text}");
    for rank in [0, 1] {
        assert!(!outcome.lines_of(rank).contains(&"ring ok"), "{text}");
    }
    let said = outcome
        .stderr
        .lines()
        .filter(|l| l.contains("RT_INIT_TIMEOUT") && l.contains("did not all start"))
        .count();
    assert!(said >= 1, "a rank says why\n{text}");
    said
}

/// Issue 16 item 5 under srun (`-K0` leaves the other tasks running): the others' init fails
/// within `RT_INIT_TIMEOUT`, naming it, and srun ends with a failure of its own.
#[test]
fn srun_a_rank_that_never_starts_fails_the_others_init_within_rt_init_timeout() {
    let Some(conf) = slurm() else { return };
    assert_eq!(
        rank_2_never_starts(&mut srun(&conf, 3)),
        2,
        "ranks 0 and 1 say why"
    );
}

/// The same under Hydra: mpiexec does not end the job when a rank exits before it opened its
/// PMI connection (it waits for the others), so the others' init time-out is what ends it.
/// A rank whose init timed out leaves the PMI session before it exits, so Hydra does not kill
/// the other as a crashed job's survivor (it used to, and could drop both messages): each
/// says why.
#[test]
fn hydra_mpiexec_a_rank_that_never_starts_fails_the_others_init_within_rt_init_timeout() {
    if !hydra() {
        return;
    }
    assert_eq!(
        rank_2_never_starts(&mut mpiexec(3)),
        2,
        "ranks 0 and 1 say why"
    );
}

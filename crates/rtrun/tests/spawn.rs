// SPDX-License-Identifier: MIT OR Apache-2.0
//! Ranks started while a job runs, under rtrun (docs/src/semantics.md §8): `Comm::spawn` and
//! `Comm::respawn` as multi-process jobs of `rtrun-check`, bounded by a job time-out. rtrun
//! waits for every process it started before it reports, so a report means no process is left.

use std::sync::Mutex;
use std::time::Duration;

use rtrun::{Ending, Job, Kill, Report};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const JOB_LIMIT: Duration = Duration::from_secs(60);

fn run(size: u32, universe: Option<u32>, args: &[&str], kills: &[&str]) -> Report {
    let mut job = Job::new(size, CHECK);
    job.args = args.iter().map(Into::into).collect();
    job.kills = kills.iter().map(|k| k.parse::<Kill>().unwrap()).collect();
    job.timeout = Some(JOB_LIMIT);
    job.universe_size = universe;
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    rtrun::run(&job).expect("the job starts")
}

fn output(report: &Report) -> String {
    let lines: String = report
        .lines
        .iter()
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect();
    format!("{}{lines}", report.summary())
}

/// Three ranks spawn two: the new ranks get world ranks 3 and 4, talk to their parents, and
/// all five merge into one communicator; the report lists the new ranks and who spawned them.
#[test]
fn a_spawn_under_rtrun_adds_ranks_that_merge_with_their_parents() {
    let report = run(3, Some(5), &["spawn"], &[]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(report.ranks.len(), 5, "{text}");
    for rank in &report.ranks {
        assert_eq!(rank.ending, Some(Ending::Exited(0)), "{text}");
        assert_eq!(rank.spawned_by.is_some(), rank.rank >= 3, "{text}");
        assert_eq!(
            report.stdout_of(rank.rank).last().copied(),
            Some("final failed=[]"),
            "{text}"
        );
        assert!(
            report
                .stdout_of(rank.rank)
                .contains(&"merged size=5 sum=10"),
            "{text}"
        );
    }
    assert!(
        text.contains("rank 3 was spawned by ranks [0, 1, 2]"),
        "{text}"
    );
}

/// The one-call recovery across processes: rank 1 dies, the survivors respawn, and the new
/// communicator has 4 ranks again with a replacement as rank 1.
#[test]
fn respawn_under_rtrun_replaces_a_dead_rank_with_a_new_process() {
    let report = run(4, None, &["respawn"], &["1@call:3"]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(
        report.ranks.len(),
        5,
        "the job's 4 and one replacement: {text}"
    );
    assert!(report.ranks[1].injected, "{text}");
    assert_eq!(report.ranks[4].spawned_by, Some(vec![0, 2, 3]), "{text}");
    for rank in [0, 2, 3, 4] {
        assert!(
            report.stdout_of(rank).contains(&"respawned size=4 sum=6"),
            "rank {rank}: {text}"
        );
    }
    assert!(report.stdout_of(4).contains(&"replacement of 1"), "{text}");
}

/// No room in the universe: the spawn fails with the same clear error at every parent, no
/// rank is started, and the job goes on.
#[test]
fn a_spawn_beyond_the_universe_fails_at_every_parent() {
    let report = run(3, Some(4), &["spawn"], &[]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(report.ranks.len(), 3, "{text}");
    for rank in 0..3 {
        let lines = report.stdout_of(rank);
        assert!(
            lines.iter().any(|l| l.starts_with("spawn refused:")
                && l.contains("universe holds 4 ranks")
                && l.contains("--universe-size")),
            "rank {rank}: {text}"
        );
    }
}

/// A parent dies inside the spawn's agreement, before contributing: every other parent gets
/// the same error, the ranks already started are killed before they run any of the program,
/// reported as called off, and they do not fail the job.
#[test]
fn a_parent_dying_during_the_spawn_calls_it_off_everywhere() {
    let report = run(3, Some(5), &["spawn"], &["2@validate_global:1:1"]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert!(report.ranks[2].injected, "{text}");
    for rank in [0, 1] {
        let refused: Vec<&str> = report
            .stdout_of(rank)
            .into_iter()
            .filter(|l| l.starts_with("spawn refused:"))
            .collect();
        assert_eq!(refused.len(), 1, "rank {rank}: {text}");
        assert!(refused[0].contains("rank 2"), "rank {rank}: {text}");
        assert_eq!(
            report.stdout_of(rank).last().copied(),
            Some("final failed=[2]"),
            "{text}"
        );
    }
    for child in &report.ranks[3..] {
        assert!(child.cancelled, "{text}");
        assert!(
            report.stdout_of(child.rank).is_empty(),
            "ran nothing: {text}"
        );
    }
    assert!(text.contains("the spawn was called off"), "{text}");
}

/// `Comm::spawn_programs` (`MPI_Comm_spawn`'s call): the root names a program, its
/// arguments and working directory; the new processes run it there, see their arguments on
/// their command line and in `InterComm::args`, and merge with their parents.
#[test]
fn spawned_programs_run_with_their_arguments_and_directory() {
    let report = run(3, None, &["programs"], &[]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(report.ranks.len(), 5, "{text}");
    for child in [3, 4] {
        let lines = report.stdout_of(child);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("child ") && l.ends_with(" of 2 in /")),
            "{text}"
        );
        assert!(lines.contains(&"merged size=5 sum=10"), "{text}");
    }
}

/// A program that cannot be started: `Error::Spawn` naming it at every parent, nothing left
/// running, and the job goes on (its ranks finish normally).
#[test]
fn a_program_that_cannot_start_fails_the_spawn_at_every_parent() {
    let report = run(3, None, &["missing"], &[]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    for rank in 0..3 {
        let lines = report.stdout_of(rank);
        assert!(
            lines.iter().any(|l| l.starts_with("spawn refused:")
                && l.contains("/nonexistent/rtrun-check-child")
                && l.contains("MPI_ERR_SPAWN")),
            "rank {rank}: {text}"
        );
        assert_eq!(lines.last().copied(), Some("final failed=[]"), "{text}");
    }
    assert!(report.ranks[3..].iter().all(|r| r.cancelled), "{text}");
}

/// The root (rank 1, the only one that knows the program) dies before it asks: the other
/// parents do not wait for it forever; they get an error and go on.
#[test]
fn the_root_dying_before_it_asks_fails_the_spawn() {
    let report = run(3, None, &["programs"], &["1@call:1"]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(report.ranks.len(), 3, "nothing started: {text}");
    for rank in [0, 2] {
        let lines = report.stdout_of(rank);
        assert!(
            lines.iter().any(|l| l.starts_with("spawn refused:")),
            "rank {rank}: {text}"
        );
        assert_eq!(lines.last().copied(), Some("final failed=[1]"), "{text}");
    }
}

/// A replacement that dies before it joins (rtrun's plan names world rank 4, the first
/// replacement, at its first call): the survivors' respawn starts another (world rank 5),
/// and the recovered communicator has its 4 ranks.
#[test]
fn a_replacement_dying_before_it_joins_is_replaced_again() {
    let report = run(4, None, &["respawn"], &["1@call:3", "4@call:1"]);
    let text = output(&report);
    assert!(report.success(), "{text}");
    assert_eq!(report.ranks.len(), 6, "{text}");
    assert!(
        report.ranks[4].injected && report.ranks[1].injected,
        "{text}"
    );
    assert_eq!(report.ranks[5].ending, Some(Ending::Exited(0)), "{text}");
    assert!(report.stdout_of(5).contains(&"replacement of 1"), "{text}");
    for rank in [0, 2, 3, 5] {
        assert!(
            report.stdout_of(rank).contains(&"respawned size=4 sum=6"),
            "rank {rank}: {text}"
        );
    }
    assert!(text.contains("--kill 4@call:1: fired"), "{text}");
}

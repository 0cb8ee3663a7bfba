// SPDX-License-Identifier: MIT OR Apache-2.0
//! Python on runthrough (docs/src/semantics.md §5): the `runthrough` package (`python/`) and the
//! fault-tolerant example `python/examples/bag_of_tasks.py`, run with mpi4py under rtrun (as a
//! library) with kills. They need the venv that `python/setup.sh` makes (`target/py/venv`, or
//! `$RT_PY_VENV`: mpi4py built against this library, and the package); without it each test
//! prints why and passes without running (`.ci/python.sh` makes the venv and runs the same
//! programs with pytest). `RT_PYTHON_TESTS=require` turns a missing venv into a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rtrun::{Job, Kill, Report};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's python, when it can import mpi4py and the runthrough package; else why not.
fn python() -> Result<PathBuf, String> {
    let venv = std::env::var_os("RT_PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/py/venv"));
    let python = venv.join("bin/python");
    if !python.exists() {
        return Err(format!(
            "{} does not exist (run `bash python/setup.sh`)",
            python.display()
        ));
    }
    let check = Command::new(&python)
        .args(["-c", "import mpi4py.MPI, runthrough"])
        .output()
        .map_err(|e| format!("{} does not run: {e}", python.display()))?;
    if !check.status.success() {
        return Err(format!(
            "{} cannot import mpi4py and runthrough (run `bash python/setup.sh`): {}",
            python.display(),
            String::from_utf8_lossy(&check.stderr).trim()
        ));
    }
    Ok(python)
}

/// The venv's python, or `None` after printing why the test does not run.
fn python_or_skip(test: &str) -> Option<PathBuf> {
    match python() {
        Ok(python) => Some(python),
        Err(why) => {
            assert!(
                std::env::var("RT_PYTHON_TESTS").as_deref() != Ok("require"),
                "{test}: RT_PYTHON_TESTS=require, but {why}"
            );
            eprintln!("{test}: skipped: {why}");
            None
        }
    }
}

fn run(python: &Path, size: u32, script: &str, args: &[&str], kills: &[&str]) -> (Report, String) {
    let _one = ONE_JOB_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut job = Job::new(size, python);
    job.args = std::iter::once(root().join(script).into_os_string())
        .chain(args.iter().map(Into::into))
        .collect();
    job.kills = kills.iter().map(|k| k.parse::<Kill>().unwrap()).collect();
    job.timeout = Some(Duration::from_secs(90));
    job.tag_output = false;
    let report = rtrun::run(&job).expect("the job starts");
    let text: String = report
        .lines
        .iter()
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect();
    assert!(!report.timed_out, "{script} timed out\n{text}");
    for outcome in &report.faults {
        assert!(
            outcome.fired.is_some(),
            "{script}: {:?} did not fire\n{text}",
            outcome.fault
        );
    }
    (report, text)
}

/// Checks that exactly `dead` died and every other rank exited 0.
fn check_endings(report: &Report, dead: &[u32], text: &str) {
    for rank in &report.ranks {
        assert_eq!(
            rank.failed(),
            dead.contains(&rank.rank),
            "rank {}: {:?}\n{}{text}",
            rank.rank,
            rank.ending,
            report.summary()
        );
    }
}

/// `python/tests/programs/views.py`: the seed's views from Python (validate_global with rank 2
/// killed inside it, NEW / OLD, FAILED in L before G, MPI_ERR_SIZE as SizeError, the count of
/// failed ranks after validate_global).
#[test]
fn python_views_with_kills() {
    let Some(python) = python_or_skip("python_views_with_kills") else {
        return;
    };
    let (report, text) = run(
        &python,
        4,
        "python/tests/programs/views.py",
        &[],
        &["2@validate_global:2", "3@barrier:1"],
    );
    check_endings(&report, &[2, 3], &text);
    assert!(report.stdout_of(0).contains(&"No Errors"), "{text}");
}

/// `python/examples/bag_of_tasks.py`: workers 2 and 4 killed by rtrun; the master re-issues
/// their tasks and checks the sum and that G holds them. A worker makes three calls at start-up
/// and two per task (receive, send), then receives STOP and calls validate_global, and the
/// master hands every worker one task at the start: so call 5 (sending its first result) and
/// call 6 (its second receive) come in every worker, before its validate_global, whatever share
/// of the tasks a loaded host gives it (`4@call:30` once did not fire: rank 4 got 10 tasks).
#[test]
fn python_bag_of_tasks_survives_kills() {
    let Some(python) = python_or_skip("python_bag_of_tasks_survives_kills") else {
        return;
    };
    let (report, text) = run(
        &python,
        6,
        "python/examples/bag_of_tasks.py",
        &["--tasks", "120"],
        &["2@call:5", "4@call:6"],
    );
    check_endings(&report, &[2, 4], &text);
    let out = report.stdout_of(0).join("\n");
    assert!(out.contains(": equal"), "{text}");
    assert!(out.contains("G = [2, 4]"), "{text}");
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The examples, rsmpi programs built against runthrough's C library, run under rtrun with a
//! rank killed: every job is bounded by rtrun's `--timeout` (rtrun kills what it started), and
//! `--strict-faults` fails a job whose planned kill did not fire.
//!
//! rtrun is `$RTRUN`, or the repository's `target/release/rtrun` (run.sh builds it first);
//! the examples are those cargo built for this test run.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rtrun() -> PathBuf {
    std::env::var_os("RTRUN").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../target/release/rtrun"
            ))
        },
        PathBuf::from,
    )
}

/// `target/<profile>/examples/<name>`, beside this test's `deps/`.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>")
        .join("examples")
        .join(name)
}

/// Runs `name` on 4 ranks with `kill` (if any), within 60 s.
fn run(name: &str, kill: Option<&str>) -> (Output, String, String) {
    let mut command = Command::new(rtrun());
    command.args(["-n", "4", "--timeout", "60", "--strict-faults"]);
    if let Some(kill) = kill {
        command.args(["--kill", kill]);
    }
    let output = command.arg(example(name)).output().expect("rtrun runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

/// Rank `victim` was killed by rtrun and the three others exited 0.
fn survived(stderr: &str, victim: u32) -> bool {
    stderr.contains("4 ranks, 3 exited 0")
        && stderr.contains(&format!(
            "rank {victim}: killed by signal 9 (SIGKILL), injected"
        ))
}

#[test]
fn survive_kill_goes_on_with_the_survivors() {
    let (output, stdout, stderr) = run("survive_kill", Some("2@all_reduce:3"));
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(survived(&stderr, 2), "{stdout}{stderr}");
    assert!(
        stdout.contains("step 2: failed ranks [2]; going on with 3 ranks"),
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains("3 ranks finished 6 steps: total 74"),
        "{stdout}{stderr}"
    );
}

#[test]
fn survive_kill_without_a_kill() {
    let (output, stdout, stderr) = run("survive_kill", None);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("4 ranks, 4 exited 0"), "{stdout}{stderr}");
    assert!(
        stdout.contains("4 ranks finished 6 steps: total 96"),
        "{stdout}{stderr}"
    );
}

#[test]
fn every_call_on_rsmpi_communicators_after_a_kill() {
    let (output, stdout, stderr) = run("views", Some("3@all_reduce:2"));
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(survived(&stderr, 3), "{stdout}{stderr}");
    assert!(stdout.contains("No Errors"), "{stdout}{stderr}");
}

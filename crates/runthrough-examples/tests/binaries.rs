// SPDX-License-Identifier: MIT OR Apache-2.0
//! The binaries as a user runs them: they check their own results and say so in their exit
//! status ("examples are tests").

mod support;

use support::run_binary;

const HEAT: &str = env!("CARGO_BIN_EXE_heat");
const BAG: &str = env!("CARGO_BIN_EXE_bag_of_tasks");

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The README's main job, smaller: two failures, the exact field, exit 0, and the lines a user
/// looks for.
#[test]
fn heat_with_two_failures_exits_zero_with_the_failure_free_checksum() {
    let output = run_binary(
        HEAT,
        &[
            "--ranks",
            "8",
            "--size",
            "64",
            "--iterations",
            "40",
            "--checkpoint",
            "10",
            "--kill",
            "3@15,5@32",
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    for line in [
        "validate_global: ranks [3] are NULL|NEW in G",
        "validate_global: ranks [5] are NULL|NEW in G",
        "recovery #1 done",
        "recovery #2 done",
        "failed: rank 3 has failed",
        "equal bit for bit",
    ] {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
}

#[test]
fn heat_reports_a_lost_buddy_pair_with_exit_status_3() {
    let output = run_binary(
        HEAT,
        &[
            "--ranks",
            "6",
            "--size",
            "30",
            "--iterations",
            "20",
            "--checkpoint",
            "5",
            "--kill",
            "2@7,3@7",
        ],
    );
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(text.contains("UNRECOVERABLE: block 2"), "{text}");
    let output = run_binary(
        HEAT,
        &[
            "--ranks",
            "6",
            "--size",
            "30",
            "--iterations",
            "20",
            "--checkpoint",
            "5",
            "--kill",
            "2@7,3@7",
            "--buddies",
            "2",
            "--quiet",
        ],
    );
    assert!(output.status.success(), "{}", stdout(&output));
}

#[test]
fn heat_rejects_a_bad_command_line_with_exit_status_2() {
    for args in [
        &["--kill", "3"][..],
        &["--kill", "9@1"],
        &["--ranks", "8", "--size", "2"],
    ] {
        let output = run_binary(HEAT, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn bag_of_tasks_with_failures_exits_zero_with_the_failure_free_checksum() {
    let output = run_binary(
        BAG,
        &[
            "--ranks",
            "6",
            "--tasks",
            "200",
            "--work",
            "5000",
            "--kill",
            "2@10,4@50",
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    for line in [
        "validate_local: ranks [2]",
        "validate_local: ranks [4]",
        "re-issuing",
        ": equal",
    ] {
        assert!(text.contains(line), "missing `{line}` in:\n{text}");
    }
}

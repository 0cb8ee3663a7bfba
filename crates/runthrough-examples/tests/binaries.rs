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

/// The one fault grammar in the examples: a malformed fault, a rank outside the job, an
/// iteration past the last, and a worker number beyond the last are refused with exit status
/// 2 and a message naming them (issue 14: heat `--kill 3@500 --iterations 100` was ignored,
/// `--buddies 9` on 8 ranks clamped, bag `--kill 9@5` said "workers 1..8" for 1..7).
#[test]
fn the_examples_refuse_faults_that_cannot_happen_naming_them() {
    let stderr =
        |output: &std::process::Output| String::from_utf8_lossy(&output.stderr).into_owned();
    for (binary, args, want) in [
        (
            HEAT,
            &["--kill", "1@frobnicate:3"][..],
            "`1@frobnicate:3`: unknown fault point",
        ),
        (HEAT, &["--kill", "1@call:0"], "`1@call:0`"),
        (
            HEAT,
            &["--kill", "2@validate_global:x:y"],
            "`2@validate_global:x:y`",
        ),
        (
            HEAT,
            &["--ranks", "8", "--kill", "9@3"],
            "rank 9 is not in a job of 8 ranks",
        ),
        (
            HEAT,
            &["--iterations", "100", "--kill", "3@500"],
            "iteration 500 is never reached",
        ),
        (BAG, &["--ranks", "8", "--kill", "9@5"], "workers 1..=7"),
        (BAG, &["--kill", "3@call:2"], "`3@call:2`"),
        (BAG, &["--kill", "3@x"], "`3@x`"),
    ] {
        let output = run_binary(binary, args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(want), "{args:?}: {message}");
    }
}

/// heat in-process takes the runtime's faults in the same grammar (here a kill at a call and
/// one inside a validate_global, heat's `v` form) and survives them.
#[test]
fn heat_takes_the_runtimes_faults_in_process() {
    let output = run_binary(
        HEAT,
        &[
            "--ranks",
            "8",
            "--size",
            "64",
            "--iterations",
            "30",
            "--kill",
            "3@call:40,5@v6.1",
        ],
    );
    let text = stdout(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("kills: 3@call:40, 5@validate_global:6:1"),
        "{text}"
    );
    assert!(text.contains("equal bit for bit"), "{text}");
}

/// Every fault example in the examples' `--help` is in the one grammar, read as they read it
/// (a bare number is a step).
#[test]
fn every_fault_example_in_the_examples_help_parses() {
    let mut examples = 0;
    for binary in [HEAT, BAG] {
        let help = stdout(&run_binary(binary, &["--help"]));
        for word in help.split_whitespace() {
            let word = word
                .trim_start_matches(['`', '\'', '"', '('])
                .trim_end_matches(['`', '\'', '"', ')', ',', ';', '.', ':']);
            if word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('@') {
                examples += 1;
                let parsed = runthrough::FaultPlan::parse_with(
                    word,
                    runthrough::fault::BareNumber::Iteration,
                );
                assert!(parsed.is_ok(), "{binary} --help: `{word}`: {parsed:?}");
            }
        }
    }
    assert!(examples >= 8, "only {examples} examples");
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

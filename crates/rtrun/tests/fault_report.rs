// SPDX-License-Identifier: MIT OR Apache-2.0
//! The end-of-job report lists every planned fault and whether it fired (issue 14, item 2):
//! rtrun's own signals with the time it sent them, a rank's own fault points with the call
//! the rank says it died in (a `fired` line on its control connection, sent before it kills
//! itself), and a fault that never fired as a warning, which `--strict-faults` makes an error
//! (exit status 1). Jobs run one at a time, each bounded by a time-out.

use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rtrun::{FaultOutcome, Job, Kill, PlannedFault, Report};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const RTRUN: &str = env!("CARGO_BIN_EXE_rtrun");
const JOB_LIMIT: Duration = Duration::from_secs(60);

fn run(size: u32, args: &[&str], kills: &[&str]) -> Report {
    let mut job = Job::new(size, CHECK);
    job.args = args.iter().map(Into::into).collect();
    job.kills = kills.iter().map(|k| k.parse::<Kill>().unwrap()).collect();
    job.timeout = Some(JOB_LIMIT);
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    rtrun::run(&job).expect("the job starts")
}

fn outcome<'a>(report: &'a Report, fault: &str) -> &'a FaultOutcome {
    let fault = PlannedFault::Kill(fault.parse().unwrap());
    report
        .faults
        .iter()
        .find(|o| o.fault == fault)
        .unwrap_or_else(|| panic!("{fault} is in the report\n{}", report.summary()))
}

/// Faults that fire are reported fired: the rank's own points with the call they fired in
/// (`call:3` in its third call, `all_reduce:2` at the entry of its second all-reduce), rtrun's
/// timed kill without one, at or after its time.
#[test]
fn a_fault_that_fires_is_reported_with_its_call() {
    let report = run(
        4,
        &["collective", "--rounds", "6", "--pause-ms", "30"],
        &["2@call:3", "3@all_reduce:2", "1@0.1"],
    );
    let summary = report.summary();
    assert!(report.success(), "{summary}");
    assert_eq!(report.faults.len(), 3, "{summary}");
    let fired = |fault| {
        outcome(&report, fault)
            .fired
            .unwrap_or_else(|| panic!("{fault} fired\n{summary}"))
    };
    let call = fired("2@call:3");
    assert_eq!(call.call, Some(3), "{summary}");
    let collective = fired("3@all_reduce:2");
    assert!(collective.call.is_some_and(|c| c >= 2), "{summary}");
    let timed = fired("1@0.1");
    assert_eq!(timed.call, None);
    assert!(timed.at >= Duration::from_millis(100), "{summary}");
    assert_eq!(report.unfired().count(), 0, "{summary}");
    assert!(
        summary.contains("rtrun: --kill 2@call:3: fired at ")
            && summary.contains(", in its communication call 3\n"),
        "{summary}"
    );
    assert!(!summary.contains("did not fire"), "{summary}");
}

/// A fault planned past the program's last call never fires: the report says so, with what
/// became of its rank.
#[test]
fn a_fault_that_cannot_fire_is_reported_not_fired() {
    let report = run(2, &["ring"], &["1@call:100000"]);
    let summary = report.summary();
    assert!(report.success(), "{summary}");
    assert_eq!(outcome(&report, "1@call:100000").fired, None, "{summary}");
    assert!(
        summary.contains(
            "rtrun: warning: --kill 1@call:100000 did not fire (rank 1 exited with status 0 at "
        ),
        "{summary}"
    );
    let strict = rtrun::Strict {
        deaths: false,
        faults: true,
    };
    assert_eq!(report.exit_status(false), 0);
    assert_eq!(report.exit_status_with(strict), 1);
}

/// The command line: an unfired fault is a warning (exit 0), and an error with
/// `--strict-faults` (exit 1); a fault that fires passes `--strict-faults`.
#[test]
fn strict_faults_makes_an_unfired_fault_exit_1() {
    let rtrun = |options: &[&str], scenario: &[&str]| {
        let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let output = Command::new(RTRUN)
            .args(["-n", "2", "--timeout", "60"])
            .args(options)
            .arg(CHECK)
            .args(scenario)
            .output()
            .expect("rtrun runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    let unfired = "--kill 1@call:100000 did not fire";
    let (code, stderr) = rtrun(&["--kill", "1@call:100000"], &["ring"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("rtrun: warning: {unfired}")),
        "{stderr}"
    );
    let (code, stderr) = rtrun(&["--kill", "1@call:100000", "--strict-faults"], &["ring"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(unfired), "{stderr}");
    assert!(
        stderr.contains("--strict-faults: 1 planned fault(s) did not fire"),
        "{stderr}"
    );
    let (code, stderr) = rtrun(
        &["--kill", "1@call:1", "--strict-faults"],
        &["validate", "--rounds", "2"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("rtrun: --kill 1@call:1: fired at ")
            && stderr.contains("in its communication call 1"),
        "{stderr}"
    );
}

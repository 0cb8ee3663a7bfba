// SPDX-License-Identifier: MIT OR Apache-2.0
//! Issue 12 item 4, scale on one host, possible since the ranks of a host connect on first use
//! (beside a sparse overlay; connecting every pair at start, 131,000 handshakes at 512 ranks,
//! timed out): 512 processes on this 2-core test machine run the heat job under rtrun through
//! two kills and finish with the failure-free field (about 30 s here), and 256 processes that
//! all talk to each other make every connection on first use. Alone in their test binary, one
//! job at a time, so that no other test's processes share the cores meanwhile.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rtrun::{Ending, Job, Report};

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");

/// One large job at a time: the machine has two cores.
static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `size` ranks of `program` under rtrun, no other job of this file meanwhile, bounded at
/// five minutes.
fn run_alone(size: u32, program: &str, args: &[&str]) -> Report {
    let mut job = Job::new(size, program);
    job.args = args.iter().map(Into::into).collect();
    job.timeout = Some(Duration::from_secs(300));
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    rtrun::run(&job).expect("the job starts")
}

#[test]
fn five_hundred_and_twelve_processes_run_heat_through_two_kills() {
    let heat = Path::new(CHECK).with_file_name("heat");
    assert!(
        heat.exists(),
        "{} (cargo test --workspace builds it)",
        heat.display()
    );
    let args = [
        "--size",
        "256",
        "--iterations",
        "40",
        "--checkpoint",
        "10",
        "--progress",
        "0",
        "--kill",
        "3@15,510@25",
    ];
    let report = run_alone(512, heat.to_str().unwrap(), &args);
    let text: String = report
        .lines
        .iter()
        .filter(|(_, _, line)| !line.starts_with("survivors"))
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect();
    assert!(report.success(), "{}{text}", report.summary());
    for rank in &report.ranks {
        let killed = [3, 510].contains(&rank.rank);
        assert_eq!(
            rank.failed(),
            killed,
            "rank {}\n{}",
            rank.rank,
            report.summary()
        );
        if !killed {
            assert_eq!(rank.ending, Some(Ending::Exited(0)), "rank {}", rank.rank);
        }
    }
    let exact = report
        .lines
        .iter()
        .any(|(_, _, line)| line.starts_with("checksum") && line.ends_with("equal bit for bit"));
    assert!(exact, "{text}");
    let recovered = report
        .lines
        .iter()
        .filter(|(_, _, line)| line.starts_with("recovery #"))
        .count();
    assert_eq!(recovered, 2, "{text}");
}

/// Every pair of 256 processes talks (three checked all-to-alls), so every one of the 32,640
/// connections is made on first use, in a burst at the first call: all complete and agree that
/// nobody failed (about 7 s here; 32 s when every pair connected at start, `RT_CONNECT=all`).
#[test]
fn two_hundred_and_fifty_six_processes_all_to_all_connect_every_pair_on_first_use() {
    let size = 256;
    let report = run_alone(size, CHECK, &["all_to_all", "--rounds", "3"]);
    assert!(report.success(), "{}", report.summary());
    for rank in 0..size {
        assert_eq!(
            report.stdout_of(rank).last().copied(),
            Some("final failed=[]"),
            "rank {rank}\n{}",
            report.summary()
        );
    }
}

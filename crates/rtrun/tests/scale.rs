// SPDX-License-Identifier: MIT OR Apache-2.0
//! Issue 12 item 4, scale on one host: 512 processes on this 2-core test machine run the heat
//! job under rtrun through two kills, and finish with the failure-free field. Possible since
//! the ranks of a host connect on first use (beside a sparse overlay): connecting every pair
//! at start, 131,000 handshakes, timed out. About 30 s here; alone in its test binary, so that
//! no other test's processes share the cores meanwhile.

use std::path::Path;
use std::time::Duration;

use rtrun::{Ending, Job};

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");

#[test]
fn five_hundred_and_twelve_processes_run_heat_through_two_kills() {
    let heat = Path::new(CHECK).with_file_name("heat");
    assert!(
        heat.exists(),
        "{} (cargo test --workspace builds it)",
        heat.display()
    );
    let size = 512;
    let mut job = Job::new(size, heat.to_str().unwrap());
    job.args = [
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
    ]
    .iter()
    .map(Into::into)
    .collect();
    job.timeout = Some(Duration::from_secs(300));
    let report = rtrun::run(&job).expect("the job starts");
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

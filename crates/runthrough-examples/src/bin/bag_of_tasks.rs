// SPDX-License-Identifier: MIT OR Apache-2.0
//! A master–worker bag of tasks that survives worker failures (see
//! `runthrough_examples::bag_of_tasks`).
//!
//! `cargo run --release -p runthrough-examples --bin bag_of_tasks -- --ranks 8 --tasks 400
//! --kill 3@5,5@20`
//!
//! Exit status: 0 when the results equal the failure-free ones, 1 when they differ, 2 for a bad
//! command line, 4 for any other error.

use std::process::ExitCode;

use clap::Parser;
use runthrough::Rank;
use runthrough_examples::bag_of_tasks::{self, BagError, Config};
use runthrough_examples::kills::parse_kills;

#[derive(Parser, Debug)]
#[command(about = "Master-worker with wildcard receives that survives worker failures")]
struct Args {
    /// In-process ranks: the master (rank 0) and RANKS - 1 workers.
    #[arg(long, default_value_t = 8)]
    ranks: u32,
    /// Tasks in the bag.
    #[arg(long, default_value_t = 400)]
    tasks: u64,
    /// Tasks in flight per worker.
    #[arg(long, default_value_t = 2)]
    window: usize,
    /// Cost of one task.
    #[arg(long, default_value_t = 200_000)]
    work: u32,
    /// Failures to inject: WORKER@K kills the worker once the master has K results (0: once the
    /// first tasks are out), comma-separated.
    #[arg(long, default_value = "")]
    kill: String,
    /// A progress line every this many results (0: none).
    #[arg(long, default_value_t = 50)]
    progress: u64,
    /// Only the summary.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let kills: Vec<(Rank, u64)> = match parse_kills(&args.kill) {
        Ok(kills) => kills,
        Err(reason) => {
            eprintln!("--kill: {reason}");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        ranks: args.ranks,
        tasks: args.tasks,
        window: args.window,
        work: args.work,
        kills,
        progress_every: args.progress,
        verbose: !args.quiet,
    };
    let kills: Vec<String> = config
        .kills
        .iter()
        .map(|(r, k)| format!("{r}@{k}"))
        .collect();
    println!(
        "bag_of_tasks: {} in-process ranks (master 0, {} workers), {} tasks, window {}; kills: {}",
        config.ranks,
        config.ranks.saturating_sub(1),
        config.tasks,
        config.window,
        if kills.is_empty() {
            "none".to_string()
        } else {
            kills.join(", ")
        }
    );
    match bag_of_tasks::run(&config) {
        Ok(report) => {
            for e in &report.events {
                println!(
                    "failure after {} results: ProcFailedPending, validate_local returned FAILED|NEW {:?} ({} failed in all); re-issued tasks {:?}; back in flight after {:.2?}",
                    e.after_results, e.new_failed, e.failed_in_all, e.reissued, e.reissue_time
                );
            }
            println!(
                "killed {:?}; results per rank {:?}; {} duplicate results ignored; {:.2?}",
                report.killed, report.by_rank, report.duplicates, report.elapsed
            );
            let equal = report.matches_reference();
            println!(
                "checksum {:#018x}, failure-free {:#018x}: {}",
                report.checksum,
                report.reference_checksum,
                if equal { "equal" } else { "DIFFERENT" }
            );
            if equal {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error @ BagError::Config(_)) => {
            eprintln!("bag_of_tasks: {error}");
            ExitCode::from(2)
        }
        Err(error) => {
            println!("bag_of_tasks: FAILED: {error}");
            ExitCode::from(4)
        }
    }
}

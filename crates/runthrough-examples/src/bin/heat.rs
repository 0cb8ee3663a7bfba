// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fault-tolerant 2D Jacobi heat solver (see `runthrough_examples::heat`).
//!
//! `cargo run --release -p runthrough-examples --bin heat -- --ranks 8 --size 256 --iterations 100
//! --checkpoint 10 --kill 3@25,5@47`
//!
//! Exit status: 0 when the final field equals the failure-free one bit for bit, 1 when it
//! differs, 2 for a bad command line, 3 when a block was lost (every copy on a failed rank),
//! 4 for any other error.

use std::process::ExitCode;

use clap::Parser;
use runthrough::Rank;
use runthrough_examples::heat::{self, Config, Decomposition, HeatError, KillPoint};
use runthrough_examples::kills::parse_kills;

#[derive(Parser, Debug)]
#[command(
    about = "A 2D Jacobi heat solver that survives rank failures (buddy checkpoints, rollback)"
)]
struct Args {
    /// In-process ranks; the grid is cut into one block per rank.
    #[arg(long, default_value_t = 8)]
    ranks: u32,
    /// The interior is SIZE x SIZE cells.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Jacobi iterations.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// A checkpoint every K iterations.
    #[arg(long, default_value_t = 10)]
    checkpoint: u64,
    /// Copies of each block besides its owner's (2 survives a dead buddy pair).
    #[arg(long, default_value_t = 1)]
    buddies: usize,
    /// Failures to inject: RANK@ITERATION (when it starts that iteration), RANK@rN (in the N-th
    /// recovery), RANK@vCALL.MESSAGE (inside its CALL-th validate_global), comma-separated.
    #[arg(long, default_value = "")]
    kill: String,
    /// A progress line every this many iterations (0: none).
    #[arg(long, default_value_t = 10)]
    progress: u64,
    /// Only the summary.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let kills: Vec<(Rank, KillPoint)> = match parse_kills(&args.kill) {
        Ok(kills) => kills,
        Err(reason) => {
            eprintln!("--kill: {reason}");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        ranks: args.ranks,
        size: args.size,
        iterations: args.iterations,
        checkpoint_every: args.checkpoint,
        buddies: args.buddies,
        kills,
        progress_every: args.progress,
        verbose: !args.quiet,
    };
    let shape = match Decomposition::new(config.size, config.ranks as usize) {
        Ok(d) => d.shape(),
        Err(reason) => {
            eprintln!("heat: {reason}");
            return ExitCode::from(2);
        }
    };
    let kills: Vec<String> = config
        .kills
        .iter()
        .map(|(r, p)| format!("{r}@{p}"))
        .collect();
    println!(
        "heat: {} in-process ranks, {n} x {n} interior as {} blocks ({} x {}), {} iterations, \
         checkpoint every {}, {} buddy cop{} per block; kills: {}",
        config.ranks,
        config.ranks,
        shape.0,
        shape.1,
        config.iterations,
        config.checkpoint_every,
        config.buddies,
        if config.buddies == 1 { "y" } else { "ies" },
        if kills.is_empty() {
            "none".to_string()
        } else {
            kills.join(", ")
        },
        n = config.size,
    );
    match heat::run(&config) {
        Ok(report) => {
            for r in &report.recoveries {
                let moves: Vec<String> = r
                    .moves
                    .iter()
                    .map(|m| format!("block {}: rank {} -> {}", m.block, m.from, m.to))
                    .collect();
                println!(
                    "recovery #{}: at iteration {}, validate_global returned NULL|NEW {:?} ({} failed in all){}; {}; rolled back to {}; kill -> agreed {}; agreed -> recovered {}",
                    r.number,
                    r.at_iteration,
                    r.new_in_g,
                    r.failed_in_all,
                    if r.during_recovery { ", during recovery" } else { "" },
                    moves.join(", "),
                    r.rolled_back_to,
                    r.kill_to_agreement
                        .map_or("(not timed)".into(), |d| format!("{d:.2?}")),
                    r.agreement_to_recovered
                        .map_or("(interrupted by the next failure)".into(), |d| format!("{d:.2?}")),
                );
            }
            println!(
                "survivors {:?}, killed {:?}; {} passes (validate_global calls) in {:.2?}",
                report.survivors, report.killed, report.passes, report.elapsed
            );
            let equal = report.matches_reference();
            println!(
                "checksum {:#018x}, failure-free {:#018x}: {}",
                report.checksum,
                report.reference_checksum,
                if equal {
                    "equal bit for bit"
                } else {
                    "DIFFERENT"
                }
            );
            if equal {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error @ HeatError::Unrecoverable { .. }) => {
            println!("heat: {error}");
            println!("heat: use --buddies 2 to survive the loss of a buddy pair");
            ExitCode::from(3)
        }
        Err(error @ HeatError::Config(_)) => {
            eprintln!("heat: {error}");
            ExitCode::from(2)
        }
        Err(error) => {
            println!("heat: FAILED: {error}");
            ExitCode::from(4)
        }
    }
}

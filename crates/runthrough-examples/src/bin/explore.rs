// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs an example's own rank code under `runthrough::explore` (docs/src/semantics.md §7): many
//! seeded schedules with random kills, each judged by the example's oracle
//! (`runthrough_examples::simulated`), or one replay token.
//!
//! `cargo run --release -p runthrough-examples --bin explore -- heat --ranks 8 --schedules 1000`
//! `cargo run --release -p runthrough-examples --bin explore -- bag --replay '4/4@call:2'`
//!
//! Exit status: 0 when every run passed, 1 when one failed (the lowest failing seed is printed
//! with its shrunk token and the command that replays it), 2 for a bad command line.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use runthrough::simulate::Exploration;
use runthrough_examples::heat;
use runthrough_examples::simulated::{
    bag_config, bag_rank, bag_verdict, heat_config, heat_rank, heat_verdict,
};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Example {
    /// The heat solver: 24 x 24 cells, 12 iterations, two buddies per block.
    Heat,
    /// The bag of tasks: 30 tasks, the master unprotected.
    Bag,
}

#[derive(Parser, Debug)]
#[command(
    about = "Runs an example's rank code under runthrough::explore: seeded schedules, \
random kills, an oracle from the plan and the sequential reference (docs/src/semantics.md §7)"
)]
struct Args {
    /// Which example.
    example: Example,
    /// Ranks.
    #[arg(long, default_value_t = 8)]
    ranks: u32,
    /// Schedules (seeds) to run.
    #[arg(long, default_value_t = 1000)]
    schedules: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Up to this many kills per run, drawn from the seed (heat has two buddies per block:
    /// with more than two kills a run may lose a block, which its oracle accepts).
    #[arg(long, default_value_t = 2)]
    kills: u32,
    /// Up to this many false suspicions per run: a live rank reported failed by one peer,
    /// fenced later (counted as a death by the oracles).
    #[arg(long, default_value_t = 0)]
    suspicions: u32,
    /// Kills land at calls 1..=HORIZON.
    #[arg(long, default_value_t = 60)]
    horizon: u64,
    /// Runs at once [default: the host's cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Run only this token (`SEED/PLAN`, as a failure prints it), as RUNTHROUGH_REPLAY does.
    #[arg(long)]
    replay: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.ranks < 2 {
        eprintln!("explore: --ranks must be at least 2");
        return ExitCode::from(2);
    }
    let mut explorer = runthrough::explore(args.ranks)
        .schedules(args.schedules)
        .seed(args.seed)
        .random_kills(args.kills)
        .kill_horizon(args.horizon)
        .false_suspicions(args.suspicions)
        .suspicion_horizon(3_000);
    if let Some(token) = &args.replay {
        explorer = explorer.replay(token);
    }
    if let Some(threads) = args.threads {
        explorer = explorer.threads(threads);
    }
    let started = Instant::now();
    let found: Exploration = match args.example {
        Example::Heat => {
            let config = heat_config(args.ranks);
            let reference = heat::reference(config.size, config.iterations);
            explorer.run(
                |world| heat_rank(world, &config),
                |run| heat_verdict(&config, &reference, run),
            )
        }
        Example::Bag => {
            let config = bag_config(args.ranks);
            explorer.run(
                |world| bag_rank(world, &config),
                |run| bag_verdict(&config, run),
            )
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{:?}, {} ranks: {} run(s) in {seconds:.1} s ({:.0} per second), {} failed",
        args.example,
        args.ranks,
        found.runs,
        found.runs as f64 / seconds,
        found.failed
    );
    match found.lowest {
        None => ExitCode::SUCCESS,
        Some(failure) => {
            println!("{failure}");
            println!(
                "replay: cargo run --release -p runthrough-examples --bin explore -- {} \
                 --ranks {} --replay '{}'",
                format!("{:?}", args.example).to_lowercase(),
                args.ranks,
                failure.shrunk
            );
            ExitCode::from(1)
        }
    }
}

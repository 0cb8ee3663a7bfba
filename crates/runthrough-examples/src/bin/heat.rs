// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fault-tolerant 2D Jacobi heat solver (see `runthrough_examples::heat`).
//!
//! In-process (the default): `cargo run --release -p runthrough-examples --bin heat --
//! --ranks 8 --size 256 --iterations 100 --checkpoint 10 --kill 3@25,5@47`
//!
//! Multi-process: started by rtrun (or a PMI launcher), each process runs one rank:
//! `target/release/rtrun -n 8 --tag-output target/release/heat --size 256 --kill 3@25,5@47`
//!
//! Exit status: 0 when the final field equals the failure-free one bit for bit, 1 when it
//! differs, 2 for a bad command line, 3 when a block was lost (every copy on a failed rank),
//! 4 for any other error. Under rtrun each surviving rank exits so (every survivor compares the
//! field it assembled with the sequential reference it computes), a rank killed by `--kill`
//! exits at once with status 85 (which rtrun counts as an injected death), and rtrun exits with the
//! status of a rank that exits non-zero by itself, 0 when the others exit 0.

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use runthrough::fault::BareNumber;
use runthrough::FaultPlan;
use runthrough::{Rank, RankState};
use runthrough_examples::heat::{
    self, Config, Decomposition, HeatError, KillPoint, RecoveryRecord,
};
use runthrough_examples::kills::{launched_as_a_rank, Death};

#[derive(Parser, Debug)]
#[command(
    about = "A 2D Jacobi heat solver that survives rank failures (buddy checkpoints in a \
runthrough::resilience::Store, rollback)",
    after_help = "Runs its ranks as threads of this process, unless it was started as one rank of \
a multi-process job: under rtrun (RT_RANK is set) or a PMI launcher (PMI_FD), each process runs \
one rank through runthrough::init(), e.g. `rtrun -n 8 --tag-output heat --kill 3@25`. Then the \
lowest surviving rank prints the job's lines, every survivor checks the field it assembled \
against the failure-free one, a rank killed by --kill ends its process at once with status 85 \
(rtrun counts it as injected), and the runtime's faults (inside validate_global, at a call, \
a collective, a time) come from rtrun's own --kill (--kill RANK@validate_global:CALL[:MESSAGE]) \
rather than from heat's."
)]
struct Args {
    /// Ranks, and blocks: the grid is cut into one block per rank [in-process default: 8;
    /// under a launcher: the job's size].
    #[arg(long)]
    ranks: Option<u32>,
    /// The interior is SIZE x SIZE cells.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Jacobi iterations.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// A checkpoint every K iterations.
    #[arg(long, default_value_t = 10)]
    checkpoint: u64,
    /// Copies of each block besides its owner's, on other hosts where there are any (at least
    /// 1; 2 survives a dead buddy pair).
    #[arg(long, default_value_t = 1)]
    buddies: usize,
    /// Failures to inject, comma-separated, in rtrun's fault grammar (the guide's "Fault
    /// injection", docs/src/faults.md), where a bare number is an iteration: RANK@ITERATION
    /// (`3@25`, also `3@iteration:25`: when it starts that iteration), RANK@rN (`5@r1`, also
    /// `5@recovery:1`: in the N-th recovery); in-process also the runtime's points:
    /// RANK@vCALL.MESSAGE (`2@v7.1`, also `2@validate_global:7:1`), `1@call:8`,
    /// `1@all_reduce:3`, a time `2@0.5s`.
    #[arg(long, default_value = "")]
    kill: String,
    /// What the survivors do after a death: `run-through` moves the dead ranks' blocks to
    /// their buddies and goes on with fewer ranks; `respawn` starts a new rank for each dead
    /// one, restores its block from the buddy copies and goes on with the original number of
    /// ranks (in-process, or under rtrun, which starts the new processes).
    #[arg(long, value_enum, default_value_t = Recovery::RunThrough)]
    recovery: Recovery,
    /// A progress line every this many iterations (0: none).
    #[arg(long, default_value_t = 10)]
    progress: u64,
    /// Only the summary.
    #[arg(long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Recovery {
    RunThrough,
    Respawn,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let kills: Vec<(Rank, KillPoint)> =
        match FaultPlan::parse_with(&args.kill, BareNumber::Iteration) {
            Ok(plan) => plan.faults().iter().map(|f| (f.rank, f.trigger)).collect(),
            Err(reason) => {
                eprintln!("heat: --kill {reason}");
                return ExitCode::from(2);
            }
        };
    let config = Config {
        ranks: args.ranks.unwrap_or(8),
        size: args.size,
        iterations: args.iterations,
        checkpoint_every: args.checkpoint,
        buddies: args.buddies,
        kills,
        progress_every: args.progress,
        verbose: !args.quiet,
        hosts: None,
        respawn: args.recovery == Recovery::Respawn,
        ..Config::default()
    };
    if launched_as_a_rank() {
        run_as_a_rank(config, args.ranks)
    } else {
        run_in_process(config)
    }
}

/// The first line: what runs.
fn header(config: &Config, how: &str) -> Option<String> {
    let shape = match Decomposition::new(config.size, config.ranks as usize) {
        Ok(d) => d.shape(),
        Err(reason) => {
            eprintln!("heat: {reason}");
            return None;
        }
    };
    let kills: Vec<String> = config
        .kills
        .iter()
        .map(|(r, p)| format!("{r}@{p}"))
        .collect();
    Some(format!(
        "heat: {} {how}, {n} x {n} interior as {} blocks ({} x {}), {} iterations, \
         checkpoint every {}, {} buddy cop{} per block{}; kills: {}",
        config.ranks,
        config.ranks,
        shape.0,
        shape.1,
        config.iterations,
        config.checkpoint_every,
        config.buddies,
        if config.buddies == 1 { "y" } else { "ies" },
        if config.respawn {
            ", dead ranks replaced (respawn)"
        } else {
            ""
        },
        if kills.is_empty() {
            "none".to_string()
        } else {
            kills.join(", ")
        },
        n = config.size,
    ))
}

fn print_recoveries(recoveries: &[RecoveryRecord]) {
    for r in recoveries {
        let moves: Vec<String> = r
            .moves
            .iter()
            .map(|m| format!("block {}: rank {} -> {}", m.block, m.from, m.to))
            .collect();
        let what = match &r.respawned {
            Some((replaced, took)) => {
                format!("ranks {replaced:?} replaced by new ranks in {took:.2?}")
            }
            None => moves.join(", "),
        };
        println!(
            "recovery #{}: at iteration {}, validate_global returned NULL|NEW {:?} ({} failed in all){}; {}; rolled back to {}; kill -> agreed {}; agreed -> recovered {}",
            r.number,
            r.at_iteration,
            r.new_in_g,
            r.failed_in_all,
            if r.during_recovery { ", during recovery" } else { "" },
            what,
            r.rolled_back_to,
            r.kill_to_agreement
                .map_or("(not timed)".into(), |d| format!("{d:.2?}")),
            r.agreement_to_recovered
                .map_or("(interrupted by the next failure)".into(), |d| format!("{d:.2?}")),
        );
    }
}

fn print_checksum(checksum: u64, reference: u64, equal: bool) {
    println!(
        "checksum {checksum:#018x}, failure-free {reference:#018x}: {}",
        if equal {
            "equal bit for bit"
        } else {
            "DIFFERENT"
        }
    );
}

fn run_in_process(config: Config) -> ExitCode {
    let Some(header) = header(&config, "in-process ranks") else {
        return ExitCode::from(2);
    };
    println!("{header}");
    match heat::run(&config) {
        Ok(report) => {
            print_recoveries(&report.recoveries);
            println!(
                "survivors {:?}, killed {:?}; {} passes (steps, checkpoints, output) in {:.2?}",
                report.survivors, report.killed, report.passes, report.elapsed
            );
            let equal = report.matches_reference();
            print_checksum(report.checksum, report.reference_checksum, equal);
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

/// A surviving rank's end: its check of the field against the sequential reference, the job's
/// lines from the lowest survivor, finalize.
fn finish_rank(universe: runthrough::Universe, run: heat::RankRun, config: &Config) -> ExitCode {
    let reference = heat::reference(config.size, config.iterations);
    let reference_checksum = runthrough_examples::checksum::fnv1a_f64(&reference);
    let equal = run.matches(&reference);
    if run.is_lowest_survivor() {
        print_recoveries(&run.recoveries);
        let ok: Vec<Rank> = run.final_g.ranks(RankState::OK).map(|i| i.rank).collect();
        let failed: Vec<Rank> = run.final_g.ranks(RankState::NULL).map(|i| i.rank).collect();
        println!(
            "survivors {ok:?}, failed {failed:?}; {} passes (steps, checkpoints, output) in {:.2?}",
            run.passes, run.elapsed
        );
        print_checksum(run.checksum, reference_checksum, equal);
    } else if !equal {
        print!("rank {}: ", run.rank);
        print_checksum(run.checksum, reference_checksum, equal);
    }
    universe.finalize();
    if equal {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One rank of a multi-process job: this process's part of the run, then its own check of the
/// field against the sequential reference.
fn run_as_a_rank(mut config: Config, ranks: Option<u32>) -> ExitCode {
    let universe = match runthrough::init() {
        Ok(universe) => universe,
        Err(error) => {
            eprintln!("heat: {error}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let me = world.rank();
    if let Some(parents) = world.parent() {
        // A replacement started by --recovery respawn: the job's size is its parents' and its
        // own, and the survivors print the job's lines.
        config.ranks = parents.remote_size() + world.size();
        drop(parents);
        return match heat::run_rank(world, &config, Death::Process) {
            Ok(Some(run)) => finish_rank(universe, run, &config),
            // Its recovery attempt met another failure: the survivors start another rank.
            Ok(None) => ExitCode::SUCCESS,
            Err(error) => {
                println!("heat: replacement rank FAILED: {error}");
                let _ = std::io::Write::flush(&mut std::io::stdout());
                std::process::exit(4)
            }
        };
    }
    if let Some(ranks) = ranks.filter(|&r| r != world.size()) {
        if me == 0 {
            eprintln!(
                "heat: --ranks {ranks}, but the job has {} ranks (leave --ranks out under a launcher)",
                world.size()
            );
        }
        return ExitCode::from(2);
    }
    config.ranks = world.size();
    if me == 0 {
        match header(&config, "ranks, one process each") {
            Some(header) => println!("{header}"),
            None => return ExitCode::from(2),
        }
    }
    let lowest_ok = |world: &runthrough::Comm| {
        world
            .global_view()
            .ok()
            .and_then(|g| g.ranks(RankState::OK).next())
            .map(|i| i.rank)
    };
    match heat::run_rank(world, &config, Death::Process) {
        Ok(Some(run)) => finish_rank(universe, run, &config),
        Ok(None) => ExitCode::SUCCESS, // only a replacement ends so

        Err(error @ HeatError::Unrecoverable { .. }) => {
            if lowest_ok(world) == Some(me) {
                println!("heat: {error}");
                println!("heat: use --buddies 2 to survive the loss of a buddy pair");
            }
            universe.finalize();
            ExitCode::from(3)
        }
        Err(error @ HeatError::Config(_)) => {
            if me == 0 {
                eprintln!("heat: {error}");
            }
            ExitCode::from(2)
        }
        Err(error) => {
            // Without finalizing: to its peers this rank fails, and they go on without it.
            println!("heat: rank {me} FAILED: {error}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(4)
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! A master–worker bag of tasks that survives worker failures (see
//! `runthrough_examples::bag_of_tasks`).
//!
//! In-process (the default): `cargo run --release -p runthrough-examples --bin bag_of_tasks --
//! --ranks 8 --tasks 400 --kill 3@5,5@20`
//!
//! Multi-process: started by rtrun (or a PMI launcher), each process runs one rank:
//! `target/release/rtrun -n 8 --tag-output target/release/bag_of_tasks --kill 3@5,5@120`
//!
//! Exit status: 0 when the results equal the failure-free ones, 1 when they differ, 2 for a bad
//! command line, 4 for any other error. Under rtrun the master (rank 0) checks the results and
//! exits so, the workers exit 0 once told to stop, a worker killed by `--kill` ends its process
//! at once with status 85 (which rtrun counts as an injected death), and rtrun exits with the
//! status of a rank that exits non-zero by itself, 0 when the others exit 0.

use std::process::ExitCode;

use clap::Parser;
use runthrough::fault::{BareNumber, FaultError};
use runthrough::Rank;
use runthrough::{FaultPlan, Trigger};
use runthrough_examples::bag_of_tasks::{self, BagError, Config, FailureEvent};
use runthrough_examples::kills::{launched_as_a_rank, Death};

#[derive(Parser, Debug)]
#[command(
    about = "Master-worker with wildcard receives that survives worker failures",
    after_help = "Runs its ranks as threads of this process, unless it was started as one rank of \
a multi-process job: under rtrun (RT_RANK is set) or a PMI launcher (PMI_FD), each process runs \
one rank through runthrough::init(), e.g. `rtrun -n 8 --tag-output bag_of_tasks --kill 3@5`. \
Then the master (rank 0) prints the job's lines and checks the results, and a worker named by \
--kill is told by the master to die, and ends its process at once with status 85 (rtrun counts \
it as injected); rtrun's own --kill works too."
)]
struct Args {
    /// Ranks: the master (rank 0) and RANKS - 1 workers [in-process default: 8; under a
    /// launcher: the job's size].
    #[arg(long)]
    ranks: Option<u32>,
    /// Tasks in the bag.
    #[arg(long, default_value_t = 400)]
    tasks: u64,
    /// Tasks in flight per worker.
    #[arg(long, default_value_t = 2)]
    window: usize,
    /// Cost of one task.
    #[arg(long, default_value_t = 200_000)]
    work: u32,
    /// Failures to inject: WORKER@K (also WORKER@iteration:K) kills the worker once the master
    /// has K results (0: once the first tasks are out), comma-separated; rtrun's fault
    /// grammar, where a bare number is a step (here: results).
    #[arg(long, default_value = "")]
    kill: String,
    /// A progress line every this many results (0: none).
    #[arg(long, default_value_t = 50)]
    progress: u64,
    /// Only the summary.
    #[arg(long)]
    quiet: bool,
    /// Replace dead workers: after a failure the master and the live workers start a new
    /// worker in each dead one's place (Comm::respawn), so the bag keeps its workers
    /// (in-process, or under rtrun, which starts the new processes).
    #[arg(long)]
    replace: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let kills: Vec<(Rank, u64)> = match parse_kills(&args.kill) {
        Ok(kills) => kills,
        Err(reason) => {
            eprintln!("bag_of_tasks: --kill {reason}");
            return ExitCode::from(2);
        }
    };
    let config = Config {
        ranks: args.ranks.unwrap_or(8),
        tasks: args.tasks,
        window: args.window,
        work: args.work,
        kills,
        progress_every: args.progress,
        verbose: !args.quiet,
        replace: args.replace,
        ..Config::default()
    };
    if launched_as_a_rank() {
        run_as_a_rank(config, args.ranks)
    } else {
        run_in_process(config)
    }
}

/// `--kill`: the workers and their counts of results (the grammar's steps); the runtime's
/// points are rtrun's to inject.
fn parse_kills(text: &str) -> Result<Vec<(Rank, u64)>, FaultError> {
    let plan = FaultPlan::parse_with(text, BareNumber::Iteration)?;
    plan.faults()
        .iter()
        .map(|fault| match fault.trigger {
            Trigger::Iteration(k) => Ok((fault.rank, k)),
            _ => Err(FaultError::new(
                &fault.to_string(),
                "bag_of_tasks kills a worker after K results (WORKER@K); rtrun's --kill \
                 injects the runtime's faults",
            )),
        })
        .collect()
}

fn header(config: &Config, how: &str) -> String {
    let kills: Vec<String> = config
        .kills
        .iter()
        .map(|(r, k)| format!("{r}@{k}"))
        .collect();
    format!(
        "bag_of_tasks: {} {how} (master 0, {} workers{}), {} tasks, window {}; kills: {}",
        config.ranks,
        config.ranks.saturating_sub(1),
        if config.replace {
            ", dead ones replaced"
        } else {
            ""
        },
        config.tasks,
        config.window,
        if kills.is_empty() {
            "none".to_string()
        } else {
            kills.join(", ")
        }
    )
}

fn print_events(events: &[FailureEvent]) {
    for e in events {
        println!(
            "failure after {} results: ProcFailedPending, validate_local returned FAILED|NEW {:?} ({} failed in all); re-issued tasks {:?}; back in flight after {:.2?}{}",
            e.after_results,
            e.new_failed,
            e.failed_in_all,
            e.reissued,
            e.reissue_time,
            match &e.replaced {
                Some((workers, took)) => {
                    format!("; workers {workers:?} replaced by new ones in {took:.2?}")
                }
                None => String::new(),
            }
        );
    }
}

fn print_checksum(checksum: u64, reference: u64, equal: bool) {
    println!(
        "checksum {checksum:#018x}, failure-free {reference:#018x}: {}",
        if equal { "equal" } else { "DIFFERENT" }
    );
}

fn run_in_process(config: Config) -> ExitCode {
    println!("{}", header(&config, "in-process ranks"));
    match bag_of_tasks::run(&config) {
        Ok(report) => {
            print_events(&report.events);
            println!(
                "killed {:?}; results per rank {:?}; {} duplicate results ignored; {:.2?}",
                report.killed, report.by_rank, report.duplicates, report.elapsed
            );
            let equal = report.matches_reference();
            print_checksum(report.checksum, report.reference_checksum, equal);
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

/// One rank of a multi-process job: the master checks the results.
fn run_as_a_rank(mut config: Config, ranks: Option<u32>) -> ExitCode {
    let universe = match runthrough::init() {
        Ok(universe) => universe,
        Err(error) => {
            eprintln!("bag_of_tasks: {error}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let me = world.rank();
    if let Some(parents) = world.parent() {
        // A new worker of --replace: it works until the master stops it.
        config.ranks = parents.remote_size() + world.size();
        drop(parents);
        return match bag_of_tasks::run_rank(world, &config, Death::Process) {
            Ok(_) => {
                universe.finalize();
                ExitCode::SUCCESS
            }
            Err(error) => {
                println!("bag_of_tasks: a new worker FAILED: {error}");
                let _ = std::io::Write::flush(&mut std::io::stdout());
                std::process::exit(4)
            }
        };
    }
    if let Some(ranks) = ranks.filter(|&r| r != world.size()) {
        if me == 0 {
            eprintln!(
                "bag_of_tasks: --ranks {ranks}, but the job has {} ranks (leave --ranks out under a launcher)",
                world.size()
            );
        }
        return ExitCode::from(2);
    }
    config.ranks = world.size();
    if me == 0 {
        println!("{}", header(&config, "ranks, one process each"));
    }
    match bag_of_tasks::run_rank(world, &config, Death::Process) {
        Ok(Some(master)) => {
            let reference = bag_of_tasks::reference(&config);
            let reference_checksum =
                runthrough_examples::checksum::fnv1a(reference.iter().copied());
            let equal = master.results == reference;
            print_events(&master.events);
            println!(
                "failed {:?}; results per rank {:?}; {} duplicate results ignored; {:.2?}",
                master.failed, master.by_rank, master.duplicates, master.elapsed
            );
            print_checksum(master.checksum, reference_checksum, equal);
            universe.finalize();
            if equal {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ok(None) => {
            universe.finalize();
            ExitCode::SUCCESS
        }
        Err(error @ BagError::Config(_)) => {
            if me == 0 {
                eprintln!("bag_of_tasks: {error}");
            }
            ExitCode::from(2)
        }
        Err(error) => {
            // Without finalizing: to its peers this rank fails.
            println!("bag_of_tasks: rank {me} FAILED: {error}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(4)
        }
    }
}

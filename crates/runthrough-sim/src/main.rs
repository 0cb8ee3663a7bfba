// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulator's command line: `explore`, `replay`, `scripted`, `scale`, `engine`,
//! `engine-replay`, `detector`, `detector-replay`.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use runthrough_sim::detector_sim;
use runthrough_sim::engine_sim::{self, Options};
use runthrough_sim::scale::{peak_resident_bytes, run_scale, ScaleConfig};
use runthrough_sim::{explore, replay, replay_command, run, scripted};

#[derive(Parser)]
#[command(
    about = "Deterministic simulator for runthrough's agreement (validate_global, agree, shrink) and rank engines"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs N random schedules; exits non-zero at the first violation, printing its seed and
    /// the command that replays it.
    Explore {
        /// Number of schedules.
        #[arg(long, default_value_t = 10_000)]
        schedules: u64,
        /// Range of rank counts, inclusive: A..B.
        #[arg(long, value_parser = parse_range, default_value = "1..64")]
        ranks: (u32, u32),
        /// Base seed (schedule i runs with a seed derived from it and i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Prints the trace of the schedule of one seed (as printed by explore).
    Replay {
        /// The schedule's seed.
        #[arg(long)]
        seed: u64,
        /// Range of rank counts the seed was explored with.
        #[arg(long, value_parser = parse_range, default_value = "1..64")]
        ranks: (u32, u32),
    },
    /// Runs the scripted scenarios (root dies mid-broadcast, parent dies with children
    /// waiting, cascade of coordinators, ...).
    Scripted {
        /// Seed of the message delays.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print each scenario's trace.
        #[arg(long)]
        trace: bool,
    },
    /// One agreement over n = 2^10 .. max-ranks simulated ranks, failure-free and with k
    /// random failures during the call, under a latency model.
    Scale {
        /// Largest n (rounded down to a power of two).
        #[arg(long, default_value_t = 1 << 20)]
        max_ranks: u32,
        /// Smallest n (rounded down to a power of two).
        #[arg(long, default_value_t = 1 << 10)]
        min_ranks: u32,
        /// Failures during the call in the second run of each size.
        #[arg(long, default_value_t = 4)]
        failures: u32,
        /// Wire latency per message (simulated ns).
        #[arg(long, default_value_t = 1_000)]
        latency_ns: u64,
        /// CPU overhead per message at the sender and at the receiver (simulated ns).
        #[arg(long, default_value_t = 100)]
        overhead_ns: u64,
        /// From a crash to its report at the survivors (simulated ns).
        #[arg(long, default_value_t = 10_000)]
        detect_ns: u64,
        /// Seed of the failures.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Make rank 0, the first coordinator, one of the failures (a new ballot).
        #[arg(long)]
        root_fails: bool,
    },
    /// Runs N random schedules of whole rank engines (point-to-point, all-reduce,
    /// validate_local, validate_global, agree, iagree, dup, shrink, revocation,
    /// crashes); exits non-zero at the first violation, printing
    /// its seed and the command that replays it.
    Engine {
        /// Number of schedules.
        #[arg(long, default_value_t = 1_000)]
        schedules: u64,
        /// Range of rank counts, inclusive: A..B.
        #[arg(long, value_parser = parse_range, default_value = "2..12")]
        ranks: (u32, u32),
        /// Base seed (schedule i runs with a seed derived from it and i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Receivers take a round's messages in any order, not each sender's order (flow
        /// control's loans keep that live)
        #[arg(long)]
        any_order: bool,
        /// Half of the crashes are false suspicions first: a live rank reported failed by one
        /// survivor keeps running until it is fenced a few steps later
        #[arg(long)]
        suspicions: bool,
        /// Every rank runs the runtime's failure detector under virtual time: engines hear of
        /// a failure only when their detector decides it; half of the faults are hung ranks
        #[arg(long)]
        detector: bool,
    },
    /// Runs N random schedules of every rank's failure detector under virtual time (crashes,
    /// hung ranks, a partition, slow links, with or without a launcher); exits non-zero at the
    /// first violation, printing its seed and the command that replays it.
    Detector {
        /// Number of schedules.
        #[arg(long, default_value_t = 10_000)]
        schedules: u64,
        /// Range of rank counts, inclusive: A..B.
        #[arg(long, value_parser = parse_range, default_value = "2..16")]
        ranks: (u32, u32),
        /// Base seed (schedule i runs with a seed derived from it and i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Prints the trace of one detector schedule (its seed as printed by `detector`).
    DetectorReplay {
        /// The schedule's seed.
        #[arg(long)]
        seed: u64,
        /// Range of rank counts the seed was explored with.
        #[arg(long, value_parser = parse_range, default_value = "2..16")]
        ranks: (u32, u32),
    },
    /// Prints the trace of one engine schedule (its seed as printed by `engine`).
    EngineReplay {
        /// The schedule's seed.
        #[arg(long)]
        seed: u64,
        /// Range of rank counts the seed was explored with.
        #[arg(long, value_parser = parse_range, default_value = "2..12")]
        ranks: (u32, u32),
        /// As `engine --any-order`.
        #[arg(long)]
        any_order: bool,
        /// As `engine --suspicions`.
        #[arg(long)]
        suspicions: bool,
        /// As `engine --detector`.
        #[arg(long)]
        detector: bool,
    },
}

fn parse_range(text: &str) -> Result<(u32, u32), String> {
    let (a, b) = text
        .split_once("..=")
        .or_else(|| text.split_once(".."))
        .ok_or_else(|| format!("expected A..B, got {text:?}"))?;
    let a: u32 = a.trim().parse().map_err(|e| format!("{a:?}: {e}"))?;
    let b: u32 = b.trim().parse().map_err(|e| format!("{b:?}: {e}"))?;
    if a == 0 || a > b {
        return Err(format!("need 1 <= A <= B, got {a}..{b}"));
    }
    Ok((a, b))
}

/// Wall-clock time of the host, for the rate only: never fed to the simulation.
#[allow(clippy::disallowed_methods)]
fn wall_clock() -> std::time::Instant {
    std::time::Instant::now()
}

/// Prints a trace, stopping quietly when stdout is closed (`replay ... | head`).
fn print_lines(lines: &[String]) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            std::process::exit(0);
        }
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Detector {
            schedules,
            ranks,
            seed,
        } => {
            let started = wall_clock();
            match detector_sim::explore(schedules, ranks, seed) {
                Ok((count, t)) => {
                    let elapsed = started.elapsed().max(Duration::from_micros(1));
                    println!(
                        "{count} detector schedules checked, 0 violations ({:.0} schedules/s; n = {}..{}, base seed {seed}; {} events, {} frames, {} crashes, {} hangs, {} partitions, {} fencings, {} failures decided by a majority, {} ranks halted)",
                        count as f64 / elapsed.as_secs_f64(),
                        ranks.0,
                        ranks.1,
                        t.events,
                        t.frames,
                        t.faults.0,
                        t.faults.1,
                        t.faults.2,
                        t.fences,
                        t.majority_decisions,
                        t.halts
                    );
                    ExitCode::SUCCESS
                }
                Err(violation) => {
                    println!("VIOLATION {violation}");
                    println!("replay: {}", violation.replay);
                    ExitCode::FAILURE
                }
            }
        }
        Command::DetectorReplay { seed, ranks } => {
            match detector_sim::run_schedule(seed, ranks, true) {
                Ok(outcome) => {
                    print_lines(&outcome.trace);
                    println!(
                        "ok: {} ranks, {} events, {} frames, {} fencings, {} halted",
                        outcome.ranks,
                        outcome.events,
                        outcome.frames,
                        outcome.fences,
                        outcome.halts
                    );
                    ExitCode::SUCCESS
                }
                Err(violation) => {
                    print_lines(&violation.trace);
                    println!("VIOLATION {violation}");
                    println!("replay: {}", violation.replay);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Engine {
            schedules,
            ranks,
            seed,
            any_order,
            suspicions,
            detector,
        } => {
            let started = wall_clock();
            let options = Options {
                any_order,
                suspicions,
                detector,
                ..Options::default()
            };
            match engine_sim::explore_engine(schedules, ranks, seed, options) {
                Ok(t) => {
                    let elapsed = started.elapsed().max(Duration::from_micros(1));
                    println!(
                        "{} engine schedules checked, 0 violations ({:.0} schedules/s; n = {}..{}, base seed {seed}; {} steps, {} packets, {} messages received, {} receives from failed senders, {} sends waited for credit, {} crashes, {} revocations, {} agreement decisions, {} dups returned a communicator and {} an error, {} splits returned their communicator and {} an error, {} shrinks, {} barriers left after every participant entered; detector: {} hangs, {} failures decided by a majority, {} ranks halted)",
                        t.schedules,
                        t.schedules as f64 / elapsed.as_secs_f64(),
                        ranks.0,
                        ranks.1,
                        t.steps,
                        t.packets,
                        t.receipts,
                        t.failed_receives,
                        t.delayed_sends,
                        t.crashes,
                        t.revocations,
                        t.decisions,
                        t.dups.0,
                        t.dups.1,
                        t.splits.0,
                        t.splits.1,
                        t.shrinks,
                        t.barriers,
                        t.detector.0,
                        t.detector.1,
                        t.detector.2
                    );
                    ExitCode::SUCCESS
                }
                Err(violation) => {
                    println!("VIOLATION {violation}");
                    println!("replay: {}", violation.replay());
                    ExitCode::FAILURE
                }
            }
        }
        Command::EngineReplay {
            seed,
            ranks,
            any_order,
            suspicions,
            detector,
        } => {
            let options = Options {
                any_order,
                suspicions,
                detector,
                ..Options::default()
            };
            match engine_sim::run_schedule(seed, ranks, true, options) {
                Ok(outcome) => {
                    print_lines(&outcome.trace);
                    println!(
                        "ok: {} ranks, {} steps, {} packets, {} messages received, {} crashes, revoked {}, trace hash {:016x}",
                        outcome.ranks,
                        outcome.steps,
                        outcome.packets,
                        outcome.receipts,
                        outcome.crashes,
                        outcome.revoked,
                        outcome.trace_hash
                    );
                    ExitCode::SUCCESS
                }
                Err((violation, trace)) => {
                    print_lines(&trace);
                    println!("VIOLATION {violation}");
                    println!("replay: {}", violation.replay());
                    ExitCode::FAILURE
                }
            }
        }
        Command::Explore {
            schedules,
            ranks,
            seed,
        } => {
            let started = wall_clock();
            match explore(schedules, ranks, seed) {
                Ok(totals) => {
                    let elapsed = started.elapsed().max(Duration::from_micros(1));
                    println!(
                        "{} schedules checked, 0 violations ({:.0} schedules/s; n = {}..{}, base seed {seed}; {} events, {} messages, {} crashes)",
                        totals.schedules,
                        totals.schedules as f64 / elapsed.as_secs_f64(),
                        ranks.0,
                        ranks.1,
                        totals.steps,
                        totals.messages,
                        totals.crashes
                    );
                    ExitCode::SUCCESS
                }
                Err(found) => {
                    println!("VIOLATION {}", found.violation);
                    println!("schedule: {:?}", found.schedule);
                    println!("replay: {}", found.replay);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Replay { seed, ranks } => {
            let (schedule, result) = replay(seed, ranks);
            println!("schedule: {schedule:?}");
            match result {
                Ok(outcome) => {
                    print_lines(&outcome.trace);
                    println!(
                        "ok: {} events, {} messages, crashed {:?}, final G {:?}",
                        outcome.steps,
                        outcome.messages,
                        outcome.crashed.as_slice(),
                        outcome.final_g.as_slice()
                    );
                    ExitCode::SUCCESS
                }
                Err((violation, trace)) => {
                    print_lines(&trace);
                    println!("VIOLATION {violation}");
                    println!("replay: {}", replay_command(seed, ranks));
                    ExitCode::FAILURE
                }
            }
        }
        Command::Scripted { seed, trace } => {
            let mut failed = 0;
            for scenario in scripted::scenarios(seed) {
                let result = run(scenario.schedule.clone(), trace);
                let verdict = match &result {
                    Ok(outcome) => match &scenario.final_g {
                        Some(g) if outcome.final_g.as_slice() != g.as_slice() => format!(
                            "FAILED: final G {:?}, expected {g:?}",
                            outcome.final_g.as_slice()
                        ),
                        _ => format!(
                            "ok ({} events, {} messages, final G {:?})",
                            outcome.steps,
                            outcome.messages,
                            outcome.final_g.as_slice()
                        ),
                    },
                    Err((violation, _)) => format!("FAILED: {violation}"),
                };
                if trace {
                    let lines = match &result {
                        Ok(o) => &o.trace,
                        Err((_, t)) => t,
                    };
                    for line in lines {
                        println!("  {line}");
                    }
                }
                if verdict.starts_with("FAILED") {
                    failed += 1;
                }
                println!("{:<36} {verdict}", scenario.name);
            }
            if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Scale {
            max_ranks,
            min_ranks,
            failures,
            latency_ns,
            overhead_ns,
            detect_ns,
            seed,
            root_fails,
        } => scale_table(
            min_ranks,
            max_ranks,
            failures,
            ScaleConfig {
                latency_ns,
                overhead_ns,
                detect_ns,
                seed,
                root_fails,
            },
        ),
    }
}

fn scale_table(min_ranks: u32, max_ranks: u32, failures: u32, config: ScaleConfig) -> ExitCode {
    let floor_log = |n: u32| 31 - n.max(2).leading_zeros();
    let (low, high) = (floor_log(min_ranks), floor_log(max_ranks));
    println!(
        "latency {} ns/message, overhead {} ns/message at sender and receiver, detection {} ns; \
         failures crash at uniform random times during the call (seed {})",
        config.latency_ns, config.overhead_ns, config.detect_ns, config.seed
    );
    println!(
        "{:>9} {:<22} {:>11} {:>6} {:>10} {:>5}",
        "ranks", "case", "time (us)", "depth", "messages", "|G'|"
    );
    // One column per case: failure-free, k random failures, the root and k-1 random ones.
    let cases: Vec<(String, u32, bool)> = if failures == 0 || config.root_fails {
        vec![
            ("failure-free".into(), 0, false),
            (format!("{failures} failures"), failures, config.root_fails),
        ]
    } else {
        vec![
            ("failure-free".into(), 0, false),
            (format!("{failures} random failures"), failures, false),
            (format!("root + {} random", failures - 1), failures, true),
        ]
    };
    let mut first: Vec<u64> = Vec::new();
    let mut last: Vec<u64> = vec![0; cases.len()];
    for log in low..=high {
        let n = 1u32 << log;
        let mut expected = 0;
        for (column, (name, k, root_fails)) in cases.iter().enumerate() {
            let row = match run_scale(
                n,
                *k,
                expected,
                ScaleConfig {
                    root_fails: *root_fails,
                    ..config
                },
            ) {
                Ok(row) => row,
                Err(e) => {
                    println!("VIOLATION {e}");
                    return ExitCode::FAILURE;
                }
            };
            if column == 0 {
                expected = row.time_ns;
            }
            println!(
                "{:>9} {:<22} {:>11.1} {:>6} {:>10} {:>5}",
                row.ranks,
                name,
                row.time_ns as f64 / 1000.0,
                row.depth,
                row.messages,
                row.agreed_failed
            );
            if first.len() == column {
                first.push(row.time_ns);
            }
            last[column] = row.time_ns;
        }
    }
    let ratios: Vec<f64> = first
        .iter()
        .zip(&last)
        .map(|(&a, &b)| b as f64 / a.max(1) as f64)
        .collect();
    for ((name, _, _), ratio) in cases.iter().zip(&ratios) {
        println!("time(2^{high}) / time(2^{low}), {name}: {ratio:.2}x");
    }
    println!("log2 ratio: {:.2}x", high as f64 / low as f64);
    if let Some(bytes) = peak_resident_bytes() {
        println!(
            "peak resident memory: {:.0} MiB",
            bytes as f64 / (1 << 20) as f64
        );
    }
    if ratios[0] > 2.5 {
        println!("FAILED: failure-free time grows faster than 2.5x");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

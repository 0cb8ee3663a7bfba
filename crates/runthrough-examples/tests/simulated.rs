// SPDX-License-Identifier: MIT OR Apache-2.0
//! The examples' own rank code (heat, bag_of_tasks) under `runthrough::explore`
//! (docs/semantics.md §7): seeded schedules with random kills, each run judged against the
//! sequential reference by an oracle that reads the plan, never the program's own verdict.
//!
//! The oracle comes from the plan, not from the program's output: with two buddies per block
//! (`buddies = 2`) and at most two kills, no block can be lost, so every survivor must return
//! the failure-free field bit for bit, whatever the schedule and wherever the kills land.

use std::sync::atomic::{AtomicU64, Ordering};

use runthrough::{RankOutcome, SimRun};
use runthrough_examples::bag_of_tasks;
use runthrough_examples::heat::{self, Config};
use runthrough_examples::kills::Death;

fn config() -> Config {
    Config {
        ranks: 6,
        size: 24,
        iterations: 12,
        checkpoint_every: 4,
        buddies: 2,
        progress_every: 0,
        // Every rank on a host of its own, named here: nothing is read from the machine.
        hosts: Some((0..6).collect()),
        ..Config::default()
    }
}

#[test]
fn heat_survives_every_schedule_of_up_to_two_kills_bit_for_bit() {
    let config = config();
    let reference = heat::reference(config.size, config.iterations);
    let schedules = std::env::var("RT_SIM_SCHEDULES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let kills = [(); 3].map(|()| AtomicU64::new(0));
    let recoveries = AtomicU64::new(0);
    let found = runthrough::explore(config.ranks)
        .schedules(schedules)
        .seed(1)
        .random_kills(2)
        .kill_horizon(60)
        .threads(2)
        .run(
            // Every kill is the simulation's (`Death::Runtime`).
            |world| heat::run_rank(world, &config, Death::Runtime),
            |run| {
                kills[run.fired.len().min(2)].fetch_add(1, Ordering::Relaxed);
                let mut survivors = 0;
                for (rank, outcome) in run.outcomes.iter().enumerate() {
                    match outcome {
                        RankOutcome::Killed => {}
                        RankOutcome::Returned(Ok(result)) if result.matches(&reference) => {
                            if survivors == 0 && !result.recoveries.is_empty() {
                                recoveries.fetch_add(1, Ordering::Relaxed);
                            }
                            survivors += 1;
                        }
                        RankOutcome::Returned(Ok(_)) => {
                            return Err(format!("rank {rank}: a field unlike the reference"))
                        }
                        RankOutcome::Returned(Err(error)) => {
                            return Err(format!("rank {rank}: {error}"))
                        }
                        RankOutcome::Panicked(message) => {
                            return Err(format!("rank {rank} panicked: {message}"))
                        }
                    }
                }
                if survivors + run.fired.len() != config.ranks as usize {
                    return Err(format!(
                        "{survivors} survivors and {} kills in a job of {}",
                        run.fired.len(),
                        config.ranks
                    ));
                }
                Ok(())
            },
        );
    let kills = kills.map(|k| k.into_inner());
    eprintln!(
        "{schedules} schedules: {} without a kill that fired, {} with one, {} with two; {} \
         recovered",
        kills[0],
        kills[1],
        kills[2],
        recoveries.load(Ordering::Relaxed)
    );
    assert_eq!(found.runs, schedules);
    // The kills land: most runs lose a rank, many two, and the survivors recover.
    assert!(kills[1] + kills[2] > schedules / 2, "{kills:?}");
    assert!(kills[2] > schedules / 10, "{kills:?}");
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
}

type BagOutcome = Result<Option<bag_of_tasks::MasterRun>, bag_of_tasks::BagError>;

fn bag_config() -> bag_of_tasks::Config {
    bag_of_tasks::Config {
        ranks: 5,
        tasks: 30,
        window: 2,
        work: 100,
        progress_every: 0,
        verbose: false,
        ..bag_of_tasks::Config::default()
    }
}

/// The bag's oracle, from the plan: the master (rank 0) is not protected, so a run that killed
/// it may end any way but a hang or a panic; otherwise the master returns every task's
/// failure-free result and every worker not killed returns.
fn bag_verdict(config: &bag_of_tasks::Config, run: &SimRun<BagOutcome>) -> Result<(), String> {
    if run.fired.iter().any(|fault| fault.rank == 0) {
        return Ok(());
    }
    let reference = bag_of_tasks::reference(config);
    for (rank, outcome) in run.outcomes.iter().enumerate() {
        match outcome {
            RankOutcome::Killed => {}
            RankOutcome::Returned(Ok(Some(master))) if master.results == reference => {}
            RankOutcome::Returned(Ok(Some(_))) => {
                return Err("the master's results differ from the reference".into())
            }
            RankOutcome::Returned(Ok(None)) if rank != 0 => {}
            other => return Err(format!("rank {rank}: {other:?}")),
        }
    }
    Ok(())
}

#[test]
fn bag_of_tasks_survives_every_schedule_of_up_to_three_kills() {
    let config = bag_config();
    let schedules = std::env::var("RT_SIM_SCHEDULES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let killed_workers = AtomicU64::new(0);
    let found = runthrough::explore(config.ranks)
        .schedules(schedules)
        .seed(1)
        .random_kills(3)
        .kill_horizon(30)
        .threads(2)
        .run(
            |world| bag_of_tasks::run_rank(world, &config, Death::Runtime),
            |run| {
                if run.fired.iter().any(|f| f.rank != 0) && !run.fired.iter().any(|f| f.rank == 0) {
                    killed_workers.fetch_add(1, Ordering::Relaxed);
                }
                bag_verdict(&config, run)
            },
        );
    let killed_workers = killed_workers.into_inner();
    eprintln!("{schedules} schedules: {killed_workers} lost workers and not the master");
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
    assert!(killed_workers > schedules / 4, "{killed_workers}");
}

/// A planted bug: a master that forgets to re-issue a dead worker's tasks. The exploration
/// finds it from a fixed seed, and its shrunk token fails again the same way when replayed.
#[test]
fn a_bag_master_that_forgets_to_reissue_is_caught_and_replayed() {
    let config = bag_of_tasks::Config {
        planted_forget_reissue: true,
        ..bag_config()
    };
    let body = |world: &runthrough::Comm| bag_of_tasks::run_rank(world, &config, Death::Runtime);
    let found = runthrough::explore(config.ranks)
        .schedules(100)
        .seed(1)
        .random_kills(3)
        .kill_horizon(30)
        .threads(2)
        .run(body, |run| bag_verdict(&config, run));
    let failure = found.lowest.expect("the planted bug is found");
    eprintln!("{failure}");
    let replayed = runthrough::simulate(config.ranks)
        .replay(&failure.shrunk)
        .unwrap()
        .run(body);
    let why = replayed
        .check()
        .and_then(|()| bag_verdict(&config, &replayed))
        .unwrap_err();
    assert_eq!(why, failure.shrunk_why);
    // The same seeds pass without the bug (bag_of_tasks_survives_every_schedule_...).
}

/// A planted bug: heat that restores the checkpoint after a recovery but does not roll its
/// iteration count back. The exploration finds it from a fixed seed (a kill after the first
/// checkpoint), and the shrunk token fails again the same way when replayed.
#[test]
fn heat_that_skips_the_rollback_is_caught_and_replayed() {
    let config = Config {
        planted_skip_rollback: true,
        ..config()
    };
    let reference = heat::reference(config.size, config.iterations);
    let verdict = |run: &SimRun<Result<heat::RankRun, heat::HeatError>>| {
        for (rank, outcome) in run.outcomes.iter().enumerate() {
            match outcome {
                RankOutcome::Killed => {}
                RankOutcome::Returned(Ok(result)) if result.matches(&reference) => {}
                other => return Err(format!("rank {rank}: {}", describe(other))),
            }
        }
        Ok(())
    };
    let body = |world: &runthrough::Comm| heat::run_rank(world, &config, Death::Runtime);
    let found = runthrough::explore(config.ranks)
        .schedules(100)
        .seed(1)
        .random_kills(2)
        .kill_horizon(60)
        .threads(2)
        .run(body, verdict);
    let failure = found.lowest.expect("the planted bug is found");
    eprintln!("{failure}");
    let replayed = runthrough::simulate(config.ranks)
        .replay(&failure.shrunk)
        .unwrap()
        .run(body);
    let why = replayed
        .check()
        .and_then(|()| verdict(&replayed))
        .unwrap_err();
    assert_eq!(why, failure.shrunk_why);
}

fn describe(outcome: &RankOutcome<Result<heat::RankRun, heat::HeatError>>) -> String {
    match outcome {
        RankOutcome::Returned(Ok(_)) => "a field unlike the reference".into(),
        RankOutcome::Returned(Err(error)) => error.to_string(),
        RankOutcome::Killed => "killed".into(),
        RankOutcome::Panicked(message) => format!("panicked: {message}"),
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The heat example's own rank code under `runthrough::explore` (docs/semantics.md §7): seeded
//! schedules with random kills, each run judged against the sequential reference.
//!
//! The oracle comes from the plan, not from the program's output: with two buddies per block
//! (`buddies = 2`) and at most two kills, no block can be lost, so every survivor must return
//! the failure-free field bit for bit, whatever the schedule and wherever the kills land.

use std::sync::atomic::{AtomicU64, Ordering};

use runthrough::RankOutcome;
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
            // No kill of the application's own (config.kills is empty): `Death` is never used.
            |world| heat::run_rank(world, &config, Death::Process),
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

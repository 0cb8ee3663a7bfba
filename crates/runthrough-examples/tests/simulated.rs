// SPDX-License-Identifier: MIT OR Apache-2.0
//! The examples' own rank code (heat, bag_of_tasks) under `runthrough::explore`
//! (docs/src/semantics.md §7): seeded schedules with random kills, each run judged against the
//! sequential reference by an oracle that reads the plan, never the program's own verdict
//! (`runthrough_examples::simulated`). `RT_SIM_SCHEDULES` sets how many schedules each
//! exploration runs (CI runs 5,000 in release).

use std::sync::atomic::{AtomicU64, Ordering};

use runthrough::{Comm, SimRun};
use runthrough_examples::heat;
use runthrough_examples::simulated::{
    bag_config, bag_rank, bag_verdict, heat_config, heat_rank, heat_verdict, HeatOutcome,
};

fn schedules(default: u64) -> u64 {
    std::env::var("RT_SIM_SCHEDULES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Two buddies per block and at most two kills: no block can be lost, so every survivor must
/// end with the failure-free field bit for bit, whatever the schedule and wherever the kills
/// land (recoveries included).
#[test]
fn heat_survives_every_schedule_of_up_to_two_kills_bit_for_bit() {
    let config = heat_config(6);
    let reference = heat::reference(config.size, config.iterations);
    let schedules = schedules(150);
    let kills = [(); 3].map(|()| AtomicU64::new(0));
    let recovered = AtomicU64::new(0);
    let found = runthrough::explore(config.ranks)
        .schedules(schedules)
        .seed(1)
        .random_kills(2)
        .kill_horizon(60)
        .threads(2)
        .run(
            |world| heat_rank(world, &config),
            |run: &SimRun<HeatOutcome>| {
                kills[run.fired.len().min(2)].fetch_add(1, Ordering::Relaxed);
                let recoveries = run.outcomes.iter().any(|o| {
                    matches!(o, runthrough::RankOutcome::Returned(Ok(r)) if !r.recoveries.is_empty())
                });
                if recoveries {
                    recovered.fetch_add(1, Ordering::Relaxed);
                }
                heat_verdict(&config, &reference, run)
            },
        );
    let kills = kills.map(|k| k.into_inner());
    eprintln!(
        "heat: {schedules} schedules: {} without a kill that fired, {} with one, {} with two; \
         {} recovered",
        kills[0],
        kills[1],
        kills[2],
        recovered.load(Ordering::Relaxed)
    );
    assert_eq!(found.runs, schedules);
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
    // The kills land: most runs lose a rank, many two, and the survivors recover.
    assert!(kills[1] + kills[2] > schedules / 2, "{kills:?}");
    assert!(kills[2] > schedules / 10, "{kills:?}");
    assert!(recovered.into_inner() > schedules / 3);
}

#[test]
fn bag_of_tasks_survives_every_schedule_of_up_to_three_kills() {
    let config = bag_config(5);
    let schedules = schedules(200);
    let killed_workers = AtomicU64::new(0);
    let found = runthrough::explore(config.ranks)
        .schedules(schedules)
        .seed(1)
        .random_kills(3)
        .kill_horizon(30)
        .threads(2)
        .run(
            |world| bag_rank(world, &config),
            |run| {
                if run.fired.iter().any(|f| f.rank != 0) && !run.fired.iter().any(|f| f.rank == 0) {
                    killed_workers.fetch_add(1, Ordering::Relaxed);
                }
                bag_verdict(&config, run)
            },
        );
    let killed_workers = killed_workers.into_inner();
    eprintln!("bag_of_tasks: {schedules} schedules: {killed_workers} lost workers, not the master");
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
    assert!(killed_workers > schedules / 6, "{killed_workers}");
}

/// Explores `body` from seed 1 (100 schedules, up to `kills` kills at calls 1..=`horizon`):
/// a failure must be found, and its shrunk token, replayed, must fail the same way.
fn caught_and_replayed<T: Send>(
    ranks: u32,
    kills: u32,
    horizon: u64,
    body: impl Fn(&Comm) -> T + Sync,
    verdict: impl Fn(&SimRun<T>) -> Result<(), String> + Sync,
) {
    let found = runthrough::explore(ranks)
        .schedules(100)
        .seed(1)
        .random_kills(kills)
        .kill_horizon(horizon)
        .threads(2)
        .run(&body, &verdict);
    let failure = found.lowest.expect("the planted bug is found");
    eprintln!("{failure}");
    let replayed = runthrough::simulate(ranks)
        .replay(&failure.shrunk)
        .unwrap()
        .run(&body);
    let why = replayed
        .check()
        .and_then(|()| verdict(&replayed))
        .unwrap_err();
    assert_eq!(why, failure.shrunk_why);
}

/// A planted bug: a master that forgets to re-issue a dead worker's tasks.
#[test]
fn a_bag_master_that_forgets_to_reissue_is_caught_and_replayed() {
    let config = runthrough_examples::bag_of_tasks::Config {
        planted_forget_reissue: true,
        ..bag_config(5)
    };
    caught_and_replayed(
        config.ranks,
        3,
        30,
        |world| bag_rank(world, &config),
        |run| bag_verdict(&config, run),
    );
}

/// A planted bug: heat that restores the checkpoint after a recovery but does not roll its
/// iteration count back.
#[test]
fn heat_that_skips_the_rollback_is_caught_and_replayed() {
    let config = heat::Config {
        planted_skip_rollback: true,
        ..heat_config(6)
    };
    let reference = heat::reference(config.size, config.iterations);
    caught_and_replayed(
        config.ranks,
        2,
        60,
        |world| heat_rank(world, &config),
        |run| heat_verdict(&config, &reference, run),
    );
}

/// A planted bug: after its first recovery, the lowest survivor skips the `validate_global` of
/// its next pass.
#[test]
fn heat_where_a_survivor_skips_a_validate_global_is_caught_and_replayed() {
    let config = heat::Config {
        planted_skip_validate: true,
        ..heat_config(6)
    };
    let reference = heat::reference(config.size, config.iterations);
    caught_and_replayed(
        config.ranks,
        2,
        60,
        |world| heat_rank(world, &config),
        |run| heat_verdict(&config, &reference, run),
    );
}

#[test]
fn heat_survives_false_suspicions_bit_for_bit() {
    let config = heat_config(6);
    let reference = heat::reference(config.size, config.iterations);
    let schedules = schedules(150);
    let fenced = AtomicU64::new(0);
    let found = runthrough::explore(config.ranks)
        .schedules(schedules)
        .seed(1)
        .random_kills(1)
        .kill_horizon(60)
        .false_suspicions(1)
        .suspicion_horizon(3_000)
        .threads(2)
        .run(
            |world| heat_rank(world, &config),
            |run: &SimRun<HeatOutcome>| {
                if run
                    .fired
                    .iter()
                    .any(|f| matches!(f.trigger, runthrough::Trigger::After(_)))
                {
                    fenced.fetch_add(1, Ordering::Relaxed);
                }
                heat_verdict(&config, &reference, run)
            },
        );
    let fenced = fenced.into_inner();
    eprintln!("heat: {schedules} schedules with false suspicions: {fenced} fenced a live rank");
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
    assert!(fenced > schedules / 4, "{fenced}");
}

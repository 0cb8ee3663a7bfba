// SPDX-License-Identifier: MIT OR Apache-2.0
//! Running many random schedules, and replaying one.

use crate::engine::{run, Outcome, Violation};
use crate::schedule::{schedule_seed, Schedule};

/// The default range of rank counts explored (inclusive).
pub const DEFAULT_RANKS: (u32, u32) = (1, 64);

/// The command that replays the schedule of `seed` (printed with every violation).
pub fn replay_command(seed: u64, ranks: (u32, u32)) -> String {
    let mut command = format!("cargo run --release -p runthrough-sim -- replay --seed {seed}");
    if ranks != DEFAULT_RANKS {
        command.push_str(&format!(" --ranks {}..{}", ranks.0, ranks.1));
    }
    command
}

/// A violation found by [`explore`], with what is needed to replay it.
#[derive(Debug, Clone)]
pub struct Found {
    /// The violation.
    pub violation: Violation,
    /// The schedule that produced it.
    pub schedule: Schedule,
    /// The command that replays it.
    pub replay: String,
}

/// Totals of an exploration that found nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Schedules checked.
    pub schedules: u64,
    /// Events processed over all schedules.
    pub steps: u64,
    /// Messages sent over all schedules.
    pub messages: u64,
    /// Crashes over all schedules.
    pub crashes: u64,
}

/// Runs `count` schedules derived from `base` (schedule `i` has seed
/// [`schedule_seed`]`(base, i)`), stopping at the first violation.
///
/// # Errors
/// The first violation found.
pub fn explore(count: u64, ranks: (u32, u32), base: u64) -> Result<Totals, Box<Found>> {
    let mut totals = Totals::default();
    for index in 0..count {
        let seed = schedule_seed(base, index);
        let outcome = check_seed(seed, ranks)?;
        totals.schedules += 1;
        totals.steps += outcome.steps;
        totals.messages += outcome.messages;
        totals.crashes += outcome.crashed.len() as u64;
    }
    Ok(totals)
}

/// Runs the schedule of `seed` without a trace.
///
/// # Errors
/// Its violation, if any.
pub fn check_seed(seed: u64, ranks: (u32, u32)) -> Result<Outcome, Box<Found>> {
    check_schedule(Schedule::random(seed, ranks), replay_command(seed, ranks))
}

/// [`check_seed`] with the ranks on no hosts (the first round's passes over the butterfly or
/// dissemination), as every schedule ran before schedules placed ranks on hosts: the regression
/// seeds found then keep the course on which they caught their bug.
/// The replay command replays the seed as drawn (over hosts for most seeds), so a violation
/// found here says so and how to run this course again.
pub fn check_seed_without_hosts(seed: u64, ranks: (u32, u32)) -> Result<Outcome, Box<Found>> {
    let schedule = Schedule {
        hosts: None,
        ..Schedule::random(seed, ranks)
    };
    let replay = format!(
        "runthrough_sim::check_seed_without_hosts({seed}, {ranks:?}) (without hosts; `{}` \
         replays the seed as drawn)",
        replay_command(seed, ranks)
    );
    check_schedule(schedule, replay)
}

/// Runs `schedule` without a trace; a violation comes with `replay`.
fn check_schedule(schedule: Schedule, replay: String) -> Result<Outcome, Box<Found>> {
    run(schedule.clone(), false).map_err(|(violation, _)| {
        Box::new(Found {
            violation,
            schedule,
            replay,
        })
    })
}

/// Runs the schedule of `seed` with its trace.
pub fn replay(
    seed: u64,
    ranks: (u32, u32),
) -> (Schedule, Result<Outcome, (Violation, Vec<String>)>) {
    let schedule = Schedule::random(seed, ranks);
    (schedule.clone(), run(schedule, true))
}

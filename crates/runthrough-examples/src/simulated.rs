// SPDX-License-Identifier: MIT OR Apache-2.0
//! The examples under `runthrough::simulate` / `runthrough::explore` (docs/src/semantics.md §7):
//! their rank functions with every kill the simulation's ([`Death::Runtime`]), and oracles
//! that judge a run from its fault plan and the sequential reference, never from the program's
//! own verdict. The `explore` binary and the tests use them.

use runthrough::{Comm, RankOutcome, SimRun};

use crate::bag_of_tasks::{self, BagError, MasterRun};
use crate::heat::{self, HeatError, RankRun};
use crate::kills::Death;

/// What a simulated heat rank returns.
pub type HeatOutcome = Result<RankRun, HeatError>;

/// What a simulated bag-of-tasks rank returns.
pub type BagOutcome = Result<Option<MasterRun>, BagError>;

/// A small heat job for simulation: `ranks` ranks on hosts of their own (nothing is read from
/// the machine), a 24 x 24 grid, 12 iterations, a checkpoint every 4, two buddies per block.
pub fn heat_config(ranks: u32) -> heat::Config {
    heat::Config {
        ranks,
        size: 24,
        iterations: 12,
        checkpoint_every: 4,
        buddies: 2,
        progress_every: 0,
        verbose: false,
        hosts: Some((0..u64::from(ranks)).collect()),
        ..heat::Config::default()
    }
}

/// One heat rank under simulation.
pub fn heat_rank(world: &Comm, config: &heat::Config) -> HeatOutcome {
    heat::run_rank(world, config, Death::Runtime)?.ok_or_else(|| {
        heat::HeatError::Inconsistent("a replacement rank in a simulation (no spawn there)".into())
    })
}

/// Heat's oracle: with no more kills than copies of each block besides its owner's
/// (`buddies`), no block can be lost, so every survivor must end with the failure-free field
/// bit for bit (`reference`: `heat::reference`). With more kills, a survivor may instead
/// return [`HeatError::Unrecoverable`] (every copy of a block gone), the same at every one.
pub fn heat_verdict(
    config: &heat::Config,
    reference: &[f64],
    run: &SimRun<HeatOutcome>,
) -> Result<(), String> {
    let may_lose = run.fired.len() > config.buddies;
    for (rank, outcome) in run.outcomes.iter().enumerate() {
        match outcome {
            // Only a planned death ends a rank. (A death planned at a packet may also strike a
            // rank whose function had returned, while its engine answered a peer: it returned.)
            RankOutcome::Killed if run.fired.iter().any(|f| f.rank == rank as u32) => {}
            RankOutcome::Killed => return Err(format!("rank {rank} died unplanned")),
            RankOutcome::Returned(Ok(result)) if result.matches(reference) => {}
            RankOutcome::Returned(Ok(_)) => {
                return Err(format!("rank {rank}: a field unlike the reference"))
            }
            RankOutcome::Returned(Err(HeatError::Unrecoverable { .. })) if may_lose => {}
            RankOutcome::Returned(Err(error)) => return Err(format!("rank {rank}: {error}")),
            RankOutcome::Panicked(message) => {
                return Err(format!("rank {rank} panicked: {message}"))
            }
        }
    }
    Ok(())
}

/// A small bag of tasks for simulation: `ranks` ranks (a master and workers), 30 cheap tasks,
/// two in flight per worker.
pub fn bag_config(ranks: u32) -> bag_of_tasks::Config {
    bag_of_tasks::Config {
        ranks,
        tasks: 30,
        window: 2,
        work: 100,
        progress_every: 0,
        verbose: false,
        ..bag_of_tasks::Config::default()
    }
}

/// One bag-of-tasks rank under simulation.
pub fn bag_rank(world: &Comm, config: &bag_of_tasks::Config) -> BagOutcome {
    bag_of_tasks::run_rank(world, config, Death::Runtime)
}

/// The bag's oracle: the master (rank 0) is not protected, so a run that killed it may end
/// any way but a hang or a panic (the library's own checks); otherwise the master returns every
/// task's failure-free result and every worker not killed returns.
pub fn bag_verdict(config: &bag_of_tasks::Config, run: &SimRun<BagOutcome>) -> Result<(), String> {
    if run.fired.iter().any(|fault| fault.rank == 0) {
        return Ok(());
    }
    let reference = bag_of_tasks::reference(config);
    for (rank, outcome) in run.outcomes.iter().enumerate() {
        match outcome {
            RankOutcome::Killed if run.fired.iter().any(|f| f.rank == rank as u32) => {}
            RankOutcome::Killed => return Err(format!("rank {rank} died unplanned")),
            RankOutcome::Returned(Ok(Some(master))) if master.results == reference => {}
            RankOutcome::Returned(Ok(Some(_))) => {
                return Err("the master's results differ from the reference".into())
            }
            RankOutcome::Returned(Ok(None)) if rank != 0 => {}
            RankOutcome::Returned(Ok(None)) => return Err("the master returned nothing".into()),
            RankOutcome::Returned(Err(error)) => return Err(format!("rank {rank}: {error}")),
            RankOutcome::Panicked(message) => {
                return Err(format!("rank {rank} panicked: {message}"))
            }
        }
    }
    Ok(())
}

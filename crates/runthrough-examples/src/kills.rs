// SPDX-License-Identifier: MIT OR Apache-2.0
//! How a planned death strikes ([`Death`]): a thread in-process, a whole process under rtrun.
//! The plans themselves are `runthrough::FaultPlan`s, read with
//! `runthrough::fault::BareNumber::Iteration` (the examples' `--kill 3@25` is a step).

use std::io::Write;

use runthrough::{FaultHandle, Rank};
use runthrough_net::launch::EXIT_INJECTED;

/// How an injected failure strikes: the same application code runs in-process and as one
/// process of a multi-process job, and only this differs.
#[derive(Debug, Clone)]
pub enum Death {
    /// In-process (`runthrough::local`): the job's fault handle kills the rank's thread (its
    /// peers learn of it at once; the thread unwinds at its next call into runthrough).
    Thread(FaultHandle),
    /// One rank per process (under `rtrun`): the process ends at once, without finalizing,
    /// with exit status [`EXIT_INJECTED`], so that rtrun counts the death as injected, like
    /// one of its own kills. Its peers see a process death: its connections close and rtrun
    /// reports it to every survivor.
    Process,
    /// No death of the application's own: every kill comes from the runtime's fault plan (a
    /// simulated run's, `runthrough::simulate`). A configuration that plans one is refused;
    /// striking panics.
    Runtime,
}

impl Death {
    /// Kills `rank` now. In-process any rank can be killed; a process can only kill itself,
    /// so with [`Death::Process`] `rank` must be this process's rank (and the call does not
    /// return).
    pub fn strike(&self, rank: Rank) {
        match self {
            Death::Thread(faults) => faults.kill(rank),
            Death::Process => die_now(),
            Death::Runtime => panic!(
                "rank {rank}: a death of the application's own, where only the runtime's \
                 fault plan kills (Death::Runtime)"
            ),
        }
    }
}

/// Ends this process at once as an injected failure (exit status [`EXIT_INJECTED`]), after
/// flushing what it printed.
pub fn die_now() -> ! {
    let _ = std::io::stdout().flush();
    std::process::exit(EXIT_INJECTED)
}

/// Whether this process was started as one rank of a multi-process job: by `rtrun` (which sets
/// `RT_RANK`) or by a PMI launcher (`PMI_FD`: Hydra's `mpiexec`, `srun --mpi=pmi2`).
pub fn launched_as_a_rank() -> bool {
    std::env::var_os(runthrough_net::launch::ENV_RANK).is_some() || runthrough_net::pmi::detected()
}

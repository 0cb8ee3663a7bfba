// SPDX-License-Identifier: MIT OR Apache-2.0
//! Kill plans from the command line: `RANK@WHEN,RANK@WHEN,...`, where each application says
//! what `WHEN` means (an iteration, a number of tasks, a protocol point), and how a planned
//! death strikes ([`Death`]): a thread in-process, a whole process under rtrun.

use std::io::Write;
use std::str::FromStr;

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
}

impl Death {
    /// Kills `rank` now. In-process any rank can be killed; a process can only kill itself,
    /// so with [`Death::Process`] `rank` must be this process's rank (and the call does not
    /// return).
    pub fn strike(&self, rank: Rank) {
        match self {
            Death::Thread(faults) => faults.kill(rank),
            Death::Process => die_now(),
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

/// Parses `3@20,5@40` into `[(3, 20), (5, 40)]`, with `WHEN` parsed by `T::from_str`. An empty
/// string is an empty plan.
///
/// # Errors
/// A message naming the entry that does not parse.
pub fn parse_kills<T: FromStr>(text: &str) -> Result<Vec<(Rank, T)>, String>
where
    T::Err: std::fmt::Display,
{
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|entry| {
            let (rank, when) = entry
                .split_once('@')
                .ok_or_else(|| format!("kill `{entry}`: expected RANK@WHEN"))?;
            let rank = rank
                .trim()
                .parse()
                .map_err(|e| format!("kill `{entry}`: bad rank: {e}"))?;
            let when = when
                .trim()
                .parse()
                .map_err(|e| format!("kill `{entry}`: {e}"))?;
            Ok((rank, when))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_list() {
        assert_eq!(
            parse_kills::<u64>("3@20, 5@40").unwrap(),
            vec![(3, 20), (5, 40)]
        );
        assert_eq!(parse_kills::<u64>("").unwrap(), vec![]);
        assert!(parse_kills::<u64>("3").is_err());
        assert!(parse_kills::<u64>("x@3").is_err());
    }
}

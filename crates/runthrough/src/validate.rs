// SPDX-License-Identifier: MIT OR Apache-2.0
//! `validate_global` and the agreement every fault-tolerant collective is built on (SPEC §2.1).

use std::sync::Arc;

use runthrough_core::agreement::{Contribution, Decision, Participants};
use runthrough_core::{Error, FailureView, RankState, Result};

use crate::comm::Comm;
use crate::packet::Outgoing;

/// Marks a communicator as running a collective call for as long as it lives.
pub(crate) struct ActiveCall<'a> {
    comm: &'a Comm,
}

impl<'a> ActiveCall<'a> {
    /// # Errors
    /// `Error::ConcurrentCollective` when another collective call runs on `comm`.
    pub(crate) fn begin(comm: &'a Comm) -> Result<Self> {
        let mut engine = comm.process.endpoint.lock();
        let state = engine.comm(comm.context)?;
        if state.collective_active {
            return Err(Error::ConcurrentCollective);
        }
        state.collective_active = true;
        Ok(ActiveCall { comm })
    }
}

impl Drop for ActiveCall<'_> {
    fn drop(&mut self) {
        if let Ok(state) = self.comm.process.endpoint.lock().comm(self.comm.context) {
            state.collective_active = false;
        }
    }
}

impl Comm {
    /// Runs one agreement over the OK ranks of G with `flag` as this rank's flag word, and
    /// returns the decision once it is recorded at every live participant. The agreed failures
    /// are then known to this rank's detector (knowledge spreads, SPEC §1). The caller holds the
    /// communicator's [`ActiveCall`].
    pub(crate) fn run_agreement(&self, flag: u32) -> Result<Decision> {
        let context = self.context;
        let (seq, out) = {
            let mut engine = self.process.endpoint.lock();
            let comm = engine.comm(context)?;
            let participants = Arc::new(Participants::new(self.size, &comm.global.failed_set()));
            let contribution = Contribution {
                known_failed: comm.known_failed.clone(),
                acknowledged: comm.local.failed_set(),
                flag,
            };
            let seq = comm.agreements.start(participants, contribution);
            let mut out = Outgoing::new();
            comm.drain_agreements(context, &mut out);
            (seq, out)
        };
        self.process.send_all(out);
        let decision = self.process.wait_for(|engine| match engine.comm(context) {
            Err(error) => Some(Err(error)),
            Ok(comm) => comm.agreements.decision(seq).cloned().map(Ok),
        })?;
        let mut out = Outgoing::new();
        {
            let mut engine = self.process.endpoint.lock();
            let members = engine.comm(context)?.members.clone();
            for rank in &decision.failed {
                engine.peer_failed(members.world_of(rank), &mut out);
            }
        }
        self.process.endpoint.signal.notify();
        self.process.send_all(out);
        Ok(decision)
    }

    /// Agrees with every live rank on the set of failed ranks and records it as the new G
    /// (`MPI_Comm_validate_global`, SPEC §2.1). Collective over the OK ranks of G, fault-tolerant.
    ///
    /// All live participants return the same G (even a rank that returns and then dies); every
    /// rank in it has failed; every failure this rank's detector knew at entry is in it; every
    /// participant not in it took part. Ranks entering G are `NULL | NEW`, the rest `NULL | OLD`;
    /// L becomes a copy of G. Starts a new collective epoch: collectives are enabled again over
    /// the OK ranks of G. On a revoked communicator it still agrees, without lifting the
    /// revocation.
    ///
    /// ```
    /// use runthrough::RankState;
    /// let outcomes = runthrough::local(4).kill_at_operation(2, 1).run(|world| {
    ///     let before = world.validate_global()?;
    ///     assert!(before.new_failures());
    ///     let dead: Vec<u32> = before.ranks(RankState::NULL | RankState::NEW).map(|i| i.rank).collect();
    ///     let after = world.validate_global()?;
    ///     assert!(!after.new_failures());
    ///     Ok::<_, runthrough::Error>(dead)
    /// });
    /// for outcome in outcomes.into_iter().filter(|o| !o.is_killed()) {
    ///     assert_eq!(outcome.returned().unwrap().unwrap(), vec![2]);
    /// }
    /// ```
    ///
    /// # Errors
    /// `Error::ConcurrentCollective` if another thread runs a collective on this communicator;
    /// `Error::Comm` on a freed communicator. Never `ProcFailed`: failures are its subject.
    pub fn validate_global(&self) -> Result<FailureView> {
        self.process.enter()?;
        let _active = ActiveCall::begin(self)?;
        let decision = self.run_agreement(u32::MAX)?;
        let mut engine = self.process.endpoint.lock();
        let comm = engine.comm(self.context)?;
        let mut failed = comm.global.failed_set();
        failed.union_with(&decision.failed);
        let global = comm.global.updated(&failed, RankState::NULL);
        comm.install_global(global.clone());
        Ok(global)
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! `validate_global`, `agree` and the agreement every fault-tolerant collective is built on
//! (semantics §2.1, §3.5), blocking and non-blocking.

use runthrough_core::engine::{Agreed, AgreementCall, AgreementCallId, Decided};
use runthrough_core::{Error, FailureView, Result};

use crate::comm::Comm;
use crate::request::AgreementRequest;
use runthrough_core::packet::Outgoing;

impl Comm {
    /// Agrees with every live rank on the set of failed ranks and records it as the new G
    /// (`MPI_Comm_validate_global`, semantics §2.1). Collective over the OK ranks of G,
    /// fault-tolerant.
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
        let result = self.validate_global_call();
        crate::timeline::validate_global(self, &result);
        result
    }

    fn validate_global_call(&self) -> Result<FailureView> {
        self.process.enter()?;
        global_of(self.agreement_call(AgreementCall::ValidateGlobal)?)
    }

    /// Starts [`Comm::validate_global`] without waiting (`MPI_Comm_ivalidate_global`): the
    /// request's `wait` / `test` give what `validate_global` returns. This rank's contribution
    /// (its detector's failures now) is made at once. While the request is pending it counts as
    /// a collective call on the communicator (another one is `Error::ConcurrentCollective`), and
    /// dropping it waits for it to complete, since every participant needs it to finish.
    ///
    /// # Errors
    /// As [`Comm::validate_global`], at once.
    pub fn ivalidate_global(&self) -> Result<AgreementRequest<'_, FailureView>> {
        self.process.enter()?;
        let id = self.start_agreement_call(AgreementCall::ValidateGlobal)?;
        Ok(AgreementRequest::new(self, id, |comm, agreed| {
            let result = agreed.and_then(global_of);
            crate::timeline::validate_global(comm, &result);
            result
        }))
    }

    /// Agrees on the bitwise AND of `flag` over the participants that contribute
    /// (`MPIX_Comm_agree`, semantics §3.5): the same fault-tolerant uniform agreement as
    /// `validate_global`, over the OK ranks of G, and it works on a revoked communicator.
    /// Every returning rank gets the same outcome. It does not change L or G; afterwards every
    /// participant that did not contribute is known failed to this rank's detector.
    ///
    /// ```
    /// let outcomes = runthrough::local(4).run(|world| {
    ///     let flag = if world.rank() == 2 { 0b01 } else { 0b11 };
    ///     world.agree(flag)
    /// });
    /// for outcome in outcomes {
    ///     assert_eq!(outcome.returned().unwrap(), Ok(0b01));
    /// }
    /// ```
    ///
    /// # Errors
    /// `Error::AgreeProcFailed { flag }`, with the agreed flag, at every returning rank if and
    /// only if some participant failed before contributing and that failure was not in every
    /// contributor's L when it entered (not acknowledged by all with `validate_local`);
    /// `Error::ConcurrentCollective` if another thread's agreement call (`agree`,
    /// `validate_global`, `shrink`, a creation) or a pending `ivalidate_global` holds this
    /// communicator's agreements. A pending `iagree` of this rank goes first (this call waits
    /// for it); an ordinary collective running on another thread does not stop it.
    pub fn agree(&self, flag: u32) -> Result<u32> {
        let result = self.agree_call(flag);
        crate::timeline::agree(self, &result);
        result
    }

    fn agree_call(&self, flag: u32) -> Result<u32> {
        self.process.enter()?;
        let call = AgreementCall::Agree {
            flag,
            holds_series: true,
        };
        flag_of(self.agreement_call(call)?)
    }

    /// Starts [`Comm::agree`] without waiting (`MPIX_Comm_iagree`); the request's `wait` /
    /// `test` give what `agree` returns. Pending, it holds no slot: ordinary collectives (and
    /// point-to-point) run meanwhile, whatever order the ranks call them in relative to the
    /// agreement, since its traffic never mixes with theirs and the library progresses it
    /// while any thread waits; a later `iagree`, `agree`, `validate_global` or `shrink` on the
    /// communicator is queued behind it (agreements of a communicator run one at a time at a
    /// rank, in the order it starts them, as at every other rank). Dropping it waits for it to
    /// complete.
    ///
    /// # Errors
    /// `Error::ConcurrentCollective`, at once; the agreement's outcome from the request.
    pub fn iagree(&self, flag: u32) -> Result<AgreementRequest<'_, u32>> {
        self.process.enter()?;
        let call = AgreementCall::Agree {
            flag,
            holds_series: false,
        };
        let id = self.start_agreement_call(call)?;
        Ok(AgreementRequest::new(self, id, |comm, agreed| {
            let result = agreed.and_then(flag_of);
            crate::timeline::agree(comm, &result);
            result
        }))
    }

    /// Runs agreement call `call` to its outcome (a blocking call: its start and a wait).
    pub(crate) fn agreement_call(&self, call: AgreementCall) -> Result<Agreed> {
        // A poller for the whole call, its start included: peers that answer this rank's
        // contribution need not wake its progress thread (`crate::transport::socket::shm_lane`).
        let _waiting = self.process.waiting();
        let id = self.start_agreement_call(call)?;
        let polled = self
            .process
            .wait_for(|engine| self.poll_agreement_call(engine, id));
        self.deliver_agreed(polled)
    }

    /// Starts agreement call `call` on this communicator and sends its first messages.
    pub(crate) fn start_agreement_call(&self, call: AgreementCall) -> Result<AgreementCallId> {
        let mut out = crate::rank::outgoing();
        let id = self
            .process
            .endpoint
            .lock()
            .start_agreement_call(self.context, call, &mut out)?;
        self.process.send_all(out);
        Ok(id)
    }

    /// The outcome of agreement call `id` once this rank may return from it (`None` before),
    /// with what the engine wants sent, for [`Comm::deliver_agreed`] once the engine's lock is
    /// released. The timeline and the transport hear of the decisions and learned failures.
    pub(crate) fn poll_agreement_call(
        &self,
        engine: &mut crate::endpoint::Engine,
        id: AgreementCallId,
    ) -> Option<(Result<Agreed>, Outgoing)> {
        let mut out = crate::rank::outgoing();
        let mut decided = Decided::default();
        let polled = engine.poll_agreement_call(id, &mut out, &mut decided);
        for world in decided.learned {
            crate::timeline::learned(engine, world.0);
        }
        let series = [
            (crate::transport::Series::Agreement, &decided.decisions),
            (crate::transport::Series::Creation, &decided.creations),
        ];
        for (series, decisions) in series {
            for (seq, decision) in decisions {
                let at = (series, self.context, *seq);
                self.process
                    .transport
                    .decided(self.process.world_rank(), at, decision);
            }
        }
        match polled {
            Some(outcome) => Some((outcome, out)),
            None => {
                crate::rank::recycle(out); // empty: the engine sends a pending call's messages
                None
            }
        }
    }

    /// Sends what an agreement call's outcome made the engine send and wakes this rank's other
    /// waiters (call without the engine's lock).
    pub(crate) fn deliver_agreed(
        &self,
        (outcome, out): (Result<Agreed>, Outgoing),
    ) -> Result<Agreed> {
        self.process.endpoint.signal.notify();
        self.process.send_all(out);
        outcome
    }
}

/// `validate_global`'s G from its call's outcome.
fn global_of(agreed: Agreed) -> Result<FailureView> {
    match agreed {
        Agreed::Global(global) => Ok(global),
        other => Err(unexpected(&other)),
    }
}

/// `agree`'s flag from its call's outcome.
fn flag_of(agreed: Agreed) -> Result<u32> {
    match agreed {
        Agreed::Flag(flag) => Ok(flag),
        other => Err(unexpected(&other)),
    }
}

/// An agreement call's outcome of another call's kind (a bug).
pub(crate) fn unexpected(agreed: &Agreed) -> Error {
    Error::Internal {
        reason: format!("an agreement call ended with another call's outcome: {agreed:?}"),
    }
}

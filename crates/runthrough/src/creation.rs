// SPDX-License-Identifier: MIT OR Apache-2.0
//! Communicator creation and release (semantics §3.4, §3.5; MPI-4.0 §7.4): `dup`, `split`,
//! `create`, `create_group`, `shrink`, a communicator of one rank, `free`, and the process
//! group of a communicator. (`shrink` runs the main agreement series, as `validate_global`
//! does, rather than the creation series; see its docs.)
//!
//! # Contract
//! - Creation is collective over the parent's participants (the OK ranks of its G) and embeds
//!   one agreement: every returning participant gets the same communicator, or every one gets
//!   the same error. It fails with `Error::ProcFailed` when a participant failed before
//!   contributing, or when a participant knew at entry of a failed participant that G does not
//!   hold; otherwise the new communicator may hold ranks that failed meanwhile (they show up in
//!   its detector).
//! - `dup` keeps the parent's size, numbering and G (its ranks `NULL | OLD` in both views);
//!   `split` and `create` hold only participants (no NULL rank of the parent).
//! - Each communicator has its own L, G, collective epochs and agreements; a failure is seen in
//!   every communicator that holds the rank.
//! - `free` (and dropping a handle) never blocks and never reports a failure; the freed
//!   communicator keeps answering its peers' agreements.
//!
//! # The creation protocol
//! The engine runs it as one operation per call (`AgreementCall::Create`): `dup`, `split` and
//! `create` start it and wait for its outcome.
//! 1. *Exchange* (`split` only): an all-gather of `(color, key)` over the participants, on the
//!    collective plumbing, so an unrecognized failure makes it fail rather than block.
//! 2. *Candidate context*: each rank that will be a member derives the new communicator's
//!    context id from the parent's context, the creation's number in the parent's creation
//!    series, the kind of call and the color
//!    ([`derive_context`](runthrough_core::engine::derive_context)): the same number at every
//!    member, with no message. It checks that this rank holds no communicator with that id
//!    (freed ones included), that no other creation here has claimed it and that no traffic is
//!    waiting for it, and claims it.
//! 3. *Agreement* over the parent's creation series with a flag word: [`NOT_REVOKED`] (the
//!    parent is not revoked here), [`EXCHANGE_OK`] (no unrecognized failure at entry, and the
//!    exchange succeeded), [`ID_FREE`] (the candidate is free here). The decision, the same at
//!    every rank, says what happens: without `NOT_REVOKED` everyone returns `Error::Revoked`;
//!    without `EXCHANGE_OK`, or with a non-contributor that G does not hold, everyone returns
//!    `Error::ProcFailed`; without `ID_FREE` everyone runs step 2-3 again (the next creation
//!    number gives new candidates); otherwise every member installs the communicator. Since
//!    every member checked its candidate, no rank ever holds two communicators with one id.
//! 4. *Installation*: the new communicator learns the failures this rank knows of its members,
//!    and the traffic that faster members already sent on it (buffered by the engine) is
//!    delivered.
//!
//! Creations use a series of agreements of their own, apart from `validate_global`, `agree` and
//! `shrink`, over all ranks of the parent (ranks recognized as failed are known failed and
//! skipped), because of revocation: a rank that sees the parent revoked returns
//! `Error::Revoked` from a creation without taking part, and may never call the creation its
//! peers are blocked in. So when a rank learns of a revocation while no creation runs here, it
//! contributes "revoked" to the next creation of the series on its own: peers blocked in that
//! creation are released with `Error::Revoked`, uniformly, and the series stays aligned.
//!
//! ```
//! let outcomes = runthrough::local(6).run(|world| {
//!     // Even and odd ranks, numbered by decreasing world rank.
//!     let half = world.split(Some(world.rank() % 2), -(world.rank() as i32))?.unwrap();
//!     let mut sum = [0u32];
//!     half.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum)?;
//!     Ok::<_, runthrough::Error>((half.rank(), half.size(), sum[0]))
//! });
//! let got: Vec<_> = outcomes.into_iter().map(|o| o.returned().unwrap().unwrap()).collect();
//! assert_eq!(got, vec![(2, 3, 6), (2, 3, 9), (1, 3, 6), (1, 3, 9), (0, 3, 6), (0, 3, 9)]);
//! ```

use std::sync::Arc;

use runthrough_core::engine::{Agreed, AgreementCall, Creation, Installed};
use runthrough_core::{Error, FailureView, Result, WorldRank};

use crate::comm::Comm;
use crate::endpoint::{Engine, Members};
use crate::group::Group;
use runthrough_core::packet::{ContextId, Outgoing, WORLD_CONTEXT};

pub(crate) use runthrough_core::engine::Plan;

impl Comm {
    /// A new communicator of the surviving participants, in their order here
    /// (`MPIX_Comm_shrink`, semantics §3.5). Collective over the OK ranks of G and fault-tolerant:
    /// the participants agree (with the agreement of `validate_global`) on the failed ones,
    /// and every returning rank gets the same communicator of the others, with empty L and G
    /// (a rank that died after contributing may be in it: its failure shows up in the new
    /// communicator's detector). Works on a revoked communicator; the parent's views are not
    /// changed. Afterwards every agreed failure is known to this rank's detector.
    ///
    /// # Errors
    /// Never `Error::Revoked` or `Error::ProcFailed`. `Error::ConcurrentCollective` if another
    /// collective runs on this communicator; `Error::Comm` on a freed one.
    pub fn shrink(&self) -> Result<Comm> {
        let result = self.shrink_call();
        crate::timeline::shrink(self, &result);
        result
    }

    fn shrink_call(&self) -> Result<Comm> {
        self.process.enter()?;
        self.shrunk(self.agreement_call(AgreementCall::Shrink)?)
    }

    /// Starts [`Comm::shrink`] without waiting (`MPIX_Comm_ishrink`): the request's `wait` /
    /// `test` give what `shrink` returns. This rank's contribution is made at once. While the
    /// request is pending it counts as a collective call on the communicator (another one is
    /// `Error::ConcurrentCollective`), and dropping it waits for it to complete, since every
    /// participant needs it to finish.
    ///
    /// ```
    /// let outcomes = runthrough::local(4).kill_at_operation(3, 1).run(|world| {
    ///     let mut request = world.ishrink()?;
    ///     let survivors = request.wait()?;
    ///     Ok::<_, runthrough::Error>(survivors.size())
    /// });
    /// for outcome in outcomes.into_iter().filter(|o| !o.is_killed()) {
    ///     assert_eq!(outcome.returned().unwrap().unwrap(), 3);
    /// }
    /// ```
    ///
    /// # Errors
    /// As [`Comm::shrink`], at once.
    pub fn ishrink(&self) -> Result<crate::AgreementRequest<'_, Comm>> {
        self.process.enter()?;
        let id = self.start_agreement_call(AgreementCall::Shrink)?;
        Ok(crate::AgreementRequest::new(self, id, |comm, agreed| {
            let result = agreed.and_then(|agreed| comm.shrunk(agreed));
            crate::timeline::shrink(comm, &result);
            result
        }))
    }

    /// The handle of the communicator a shrink installed.
    fn shrunk(&self, agreed: Agreed) -> Result<Comm> {
        match agreed {
            Agreed::Shrunk(made) => Ok(self.handle_of(made)),
            other => Err(crate::agreement::unexpected(&other)),
        }
    }

    /// The handle of a communicator this rank's engine installed.
    pub(crate) fn handle_of(&self, made: Installed) -> Comm {
        Comm {
            process: Arc::clone(&self.process),
            context: made.context,
            rank: made.rank,
            size: made.size,
        }
    }

    /// The processes of the communicator in rank order (`MPI_Comm_group`).
    pub fn group(&self) -> Group {
        let members = self.process.endpoint.lock().members_of(self.context);
        Group::new(
            members.into_iter().map(|w| w.0).collect(),
            self.process.world_rank().0,
        )
    }

    /// A new communicator with the same ranks, numbering and G (`MPI_Comm_dup`, MPI-4.0
    /// §7.4.2; semantics §3.4): the failures recognized in the parent are `NULL | OLD` in both of
    /// its views. Collective over the parent's participants, with an embedded agreement.
    ///
    /// # Errors
    /// - `Error::ProcFailed` at every returning participant when a participant failed before
    ///   contributing, or one knew at entry of a failed participant that G does not hold.
    /// - `Error::Revoked` on a revoked parent (at every returning participant when the
    ///   revocation came during the call).
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn dup(&self) -> Result<Comm> {
        let made = self.create_by(Creation::Dup)?;
        made.ok_or_else(|| Error::Internal {
            reason: "a participant is not a member of its dup".into(),
        })
    }

    /// Starts [`Comm::dup`] without waiting (`MPI_Comm_idup`): the request's `wait` / `test`
    /// give what `dup` returns. This rank's contribution is made at once, or as soon as the
    /// creations it started earlier on this communicator have ended here: creations on a
    /// communicator end in the order each rank starts them, whatever order their requests are
    /// waited for in, and progress while this rank waits for anything else. Pending, it holds
    /// no slot: collectives, point-to-point, other `idup`s and blocking creations run
    /// meanwhile (a blocking creation queues behind it). Dropping the request waits for it.
    ///
    /// ```
    /// let outcomes = runthrough::local(3).run(|world| {
    ///     let mut first = world.idup()?;
    ///     let mut second = world.idup()?;
    ///     let mut sum = [0u32];
    ///     world.all_reduce(&[1], &mut sum, runthrough::Op::Sum)?;
    ///     let (b, a) = (second.wait()?, first.wait()?);
    ///     Ok::<_, runthrough::Error>((sum[0], a.size(), b.size()))
    /// });
    /// for outcome in outcomes {
    ///     assert_eq!(outcome.returned().unwrap(), Ok((3, 3, 3)));
    /// }
    /// ```
    ///
    /// # Errors
    /// `Error::Revoked` and `Error::Comm` at once; the rest of [`Comm::dup`]'s from the request.
    pub fn idup(&self) -> Result<crate::AgreementRequest<'_, Comm>> {
        self.process.enter()?;
        let id = self.start_agreement_call(AgreementCall::Create(Creation::Dup))?;
        Ok(crate::AgreementRequest::new(
            self,
            id,
            |comm, agreed| match agreed? {
                Agreed::Created(Some(made)) => Ok(comm.handle_of(made)),
                other => Err(crate::agreement::unexpected(&other)),
            },
        ))
    }

    /// Splits the participants by `color` into new communicators, each numbered by `key`, then
    /// by rank in the parent (`MPI_Comm_split`, MPI-4.0 §7.4.2; semantics §3.4). `None` as the
    /// color (`MPI_UNDEFINED`) takes part in the call and gets `Ok(None)`. The new communicators
    /// hold only participants (OK ranks of the parent's G) and start with empty views.
    ///
    /// # Errors
    /// Those of [`Comm::dup`]; a failure during the exchange of colors and keys counts as a
    /// participant that knew of a failure.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        self.create_by(Creation::Split { color, key })
    }

    /// A new communicator of the processes of `group` that are participants of this one (OK
    /// ranks of its G), in the group's order (`MPI_Comm_create`, MPI-4.0 §7.4.2; semantics §3.4).
    /// Collective over the participants, which must all pass the same group; those that are
    /// not in the group get `Ok(None)`. The new communicator starts with empty views.
    ///
    /// # Errors
    /// `Error::Argument`, before anything is sent, when `group` holds a process that is not in
    /// this communicator; otherwise those of [`Comm::dup`].
    pub fn create(&self, group: &Group) -> Result<Option<Comm>> {
        let stranger = {
            let engine = self.process.endpoint.lock();
            engine.first_non_member(self.context, &world_ranks_of(group))?
        };
        if let Some(w) = stranger {
            return Err(Error::Argument {
                reason: format!("world rank {w} of the group is not in the communicator"),
            });
        }
        self.create_by(Creation::Create {
            group: world_ranks_of(group),
        })
    }

    /// Runs creation `creation` on this communicator (the module docs' protocol, run by the
    /// engine as one operation): the new communicator's handle, or `None` at a rank that is
    /// not one of its members.
    fn create_by(&self, creation: Creation) -> Result<Option<Comm>> {
        self.process.enter()?;
        match self.agreement_call(AgreementCall::Create(creation))? {
            Agreed::Created(made) => Ok(made.map(|made| self.handle_of(made))),
            other => Err(crate::agreement::unexpected(&other)),
        }
    }

    /// A new communicator of `group`'s processes, in the group's order, collective over those
    /// processes only (`MPI_Comm_create_group`, MPI-4.0 §7.4.2): the others do not call it (and
    /// get `Ok(None)` if they do). Every member must pass the same group and `tag`; members
    /// that make several such calls on this communicator make them in the same order (as MPI
    /// requires). The new communicator starts with empty views.
    ///
    /// How: each member installs the communicator at once, under a context id that every member
    /// derives alike from this communicator's, the tag, the group and the call's number among
    /// its calls with the same tag and group (no message); then the members run
    /// `validate_global` on it, so that they all see the same outcome: with no failure among
    /// them, the communicator; otherwise each frees it and returns `Error::ProcFailed` naming
    /// the same failed member (its rank here). Traffic from a faster member that arrives before
    /// a slower one installed it waits for it (as for every creation).
    ///
    /// # Errors
    /// `Error::Tag` for a negative tag and `Error::Argument` for a group with a process that is
    /// not in this communicator, before anything is sent; `Error::Revoked` and `Error::Comm` for
    /// a revoked or freed communicator; `Error::ProcFailed` as said above; `Error::Internal`
    /// (at this rank alone) if the derived id is already held here, which the 63-bit hash makes
    /// vanishingly unlikely.
    pub fn create_group(&self, group: &Group, tag: i32) -> Result<Option<Comm>> {
        self.process.enter()?;
        if tag < 0 {
            return Err(Error::Tag { tag: tag.into() });
        }
        let me = self.process.world_rank();
        let worlds = world_ranks_of(group);
        let mut out = Outgoing::new();
        let comm = {
            let mut engine = self.process.endpoint.lock();
            engine.check_open(self.context)?;
            if let Some(w) = engine.first_non_member(self.context, &worlds)? {
                return Err(Error::Argument {
                    reason: format!("world rank {w} of the group is not in the communicator"),
                });
            }
            if !worlds.contains(&me) {
                return Ok(None);
            }
            let context = engine.group_creation_context(self.context, tag, &worlds)?;
            let size = worlds.len() as u32;
            let plan = Plan {
                members: Members::list(worlds.clone()),
                global: FailureView::empty(size),
                color: 0,
            };
            self.install(&mut engine, context, plan, &mut out)
        };
        self.process.send_all(out);
        let global = comm.validate_global()?;
        let Some(failed) = (0..comm.size()).find(|&r| global.is_failed(r)) else {
            return Ok(Some(comm));
        };
        drop(comm);
        let rank = self
            .process
            .endpoint
            .lock()
            .comm_rank_of(self.context, worlds[failed as usize])?
            .unwrap_or(failed);
        Err(Error::ProcFailed { rank })
    }

    /// A communicator of this rank alone (`MPI_COMM_SELF`, MPI-4.0 §7.2.3): size 1, rank 0,
    /// empty views. Local: no message, no agreement (its only member is this rank). Each call
    /// makes a new one, with a context id that no communicator here holds; a creation that
    /// would give a peer's communicator the same id finds it taken here and picks another.
    ///
    /// ```
    /// let outcomes = runthrough::local(3).run(|world| {
    ///     let me = world.self_communicator()?;
    ///     let mut sum = [0u32];
    ///     me.all_reduce(&[world.rank()], &mut sum, runthrough::Op::Sum)?;
    ///     Ok::<_, runthrough::Error>((me.rank(), me.size(), sum[0]))
    /// });
    /// for (rank, outcome) in outcomes.into_iter().enumerate() {
    ///     assert_eq!(outcome.returned().unwrap(), Ok((0, 1, rank as u32)));
    /// }
    /// ```
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn self_communicator(&self) -> Result<Comm> {
        self.process.check_alive();
        let mut out = Outgoing::new();
        let mut engine = self.process.endpoint.lock();
        engine.check_held(self.context)?;
        let me = self.process.world_rank();
        let context = engine.self_context(self.context, me);
        let plan = Plan {
            members: Members::list(vec![me]),
            global: FailureView::empty(1),
            color: 0,
        };
        let comm = self.install(&mut engine, context, plan, &mut out);
        drop(engine);
        self.process.send_all(out);
        Ok(comm)
    }

    /// Releases the communicator (`MPI_Comm_free`, semantics §3.4); dropping the handle does the
    /// same. Local: it never waits for a peer and never reports a failure. Traffic that arrives for
    /// it later is dropped, but its agreements keep answering peers still inside them.
    ///
    /// # Errors
    /// None today; the `Result` is for the C interface's sake.
    pub fn free(self) -> Result<()> {
        self.release();
        Ok(())
    }

    /// Marks the communicator freed (once): its matchers are cleared, its agreement series kept.
    /// Its non-blocking collectives still running here (their requests dropped) finish first:
    /// the other participants need this rank's messages (MPI's `MPI_Comm_free` lets pending
    /// operations complete). Not while the thread unwinds (a killed rank sends nothing more).
    fn release(&self) {
        if self.context == WORLD_CONTEXT
            || crate::spawn::InterComm::kept(self.process.parent.as_ref(), self.context)
        {
            return;
        }
        if !std::thread::panicking() && !self.process.endpoint.is_killed() {
            let context = self.context;
            if self.process.endpoint.lock().schedules_running(context) {
                self.process
                    .wait_for(|engine| (!engine.schedules_running(context)).then_some(()));
            }
        }
        let mut engine = self.process.endpoint.lock();
        engine.free_communicator(self.context);
        let credits = engine.take_due();
        drop(engine);
        self.process.send_all(credits);
    }

    /// Installs the communicator `plan` describes under `context`; returns its handle.
    pub(crate) fn install(
        &self,
        engine: &mut Engine,
        context: ContextId,
        plan: Plan,
        out: &mut Outgoing,
    ) -> Comm {
        let (rank, size) = engine.install_plan(context, plan, self.process.world_rank(), out);
        self.handle_of(Installed {
            context,
            rank,
            size,
        })
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.release();
    }
}

/// The world ranks of `group`'s processes, in its order (a group keeps them as the public API
/// numbers them).
fn world_ranks_of(group: &Group) -> Vec<WorldRank> {
    group.world_ranks().iter().map(|&w| WorldRank(w)).collect()
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! What a rank's engine can tell about a communicator without changing anything: its views,
//! what its detector learned, whether it is revoked, who its members are.

use super::Engine;
use crate::packet::ContextId;
use crate::{FailureView, Rank, Result, WorldRank};

impl Engine {
    /// The local view L of `context` as left by the last update call.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn local_view(&mut self, context: ContextId) -> Result<FailureView> {
        Ok(self.comm(context)?.local.clone())
    }

    /// The global view G of `context` as left by the last `validate_global`.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn global_view(&mut self, context: ContextId) -> Result<FailureView> {
        Ok(self.comm(context)?.global.clone())
    }

    /// The failures this rank's detector knows in `context`, in the order it learned of them
    /// (those of the communicator's initial G first, in rank order).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn detected_failures(&mut self, context: ContextId) -> Result<Vec<Rank>> {
        Ok(self.comm(context)?.detected.clone())
    }

    /// Whether `context` has been revoked, as far as this rank knows (false for a
    /// communicator it does not hold).
    pub fn is_revoked(&self, context: ContextId) -> bool {
        self.comms
            .get(&context)
            .is_some_and(|state| state.life.is_revoked())
    }

    /// Whether this rank's detector knows that world rank `world` failed.
    #[inline]
    pub fn knows_failed(&self, world: WorldRank) -> bool {
        self.known_failed.contains(world)
    }

    /// The world rank of comm rank `rank` of `context`, if both exist.
    pub fn world_rank_of(&self, context: ContextId, rank: Rank) -> Option<WorldRank> {
        self.comms.get(&context)?.members.try_world_of(rank)
    }

    /// The comm rank of world rank `world` in `context`, if it is a member.
    ///
    /// # Errors
    /// `Error::Comm` for a communicator this rank does not hold.
    pub fn comm_rank_of(&self, context: ContextId, world: WorldRank) -> Result<Option<Rank>> {
        let state = self.comms.get(&context).ok_or(crate::Error::Comm)?;
        Ok(state.members.comm_of(world))
    }

    /// Whether `context` may carry non-local operations other than agreements.
    ///
    /// # Errors
    /// `Error::Comm` for a freed communicator, `Error::Revoked` for a revoked one (semantics §3.5).
    #[inline]
    pub fn check_open(&mut self, context: ContextId) -> Result<()> {
        self.comm(context)?.check_not_revoked()
    }

    /// Whether this rank holds `context` (not freed).
    ///
    /// # Errors
    /// `Error::Comm` otherwise.
    #[inline]
    pub fn check_held(&mut self, context: ContextId) -> Result<()> {
        self.comm(context).map(|_| ())
    }

    /// A participant of `context`'s collectives that this rank knows failed but G does not
    /// recognize: while there is one, collectives are disabled here (semantics §3.3).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    #[inline]
    pub fn unrecognized_failure(&mut self, context: ContextId) -> Result<Option<Rank>> {
        Ok(self.comm(context)?.unrecognized_failure())
    }
}

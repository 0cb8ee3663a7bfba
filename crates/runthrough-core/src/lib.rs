// SPDX-License-Identifier: MIT OR Apache-2.0
//! The protocols of runthrough as deterministic state machines.
//!
//! This crate holds everything in runthrough that decides *what* happens, and nothing that decides
//! *when* or *how bytes move*: there are no threads, sockets, clocks or random number generators in
//! it. The `runthrough` crate drives these machines over real transports (threads of one process,
//! TCP between processes) and `runthrough-sim` drives the very same machines under a seeded
//! simulator.
//!
//! What is here:
//! - [`RankState`], [`RankInfo`] and [`FailureView`]: the run-through stabilization model of the
//!   MPI Forum's 2011 proposal (semantics §2): per-rank states OK / FAILED / NULL with NEW / OLD
//!   modifiers, and the local and global views L and G as immutable snapshots.
//! - [`RankSet`]: a sparse sorted set of ranks, the representation of failed sets everywhere
//!   (never a dense bitset of n bits: a million-rank job knows few failures).
//! - [`engine`]: a rank's protocol state (communicators, detector knowledge, posted receives,
//!   flow control) and the rules that change it on a packet or a detected failure.
//! - [`matching`]: MPI receive matching with the failure rules of semantics §3.1–3.2.
//! - [`packet`]: what ranks send each other, whatever the transport, and [`wire`]: the frames
//!   of the socket transports, their encoding and a streaming decoder that never panics.
//! - [`flow`]: flow control of eager messages (credit windows per sender, receiver and lane).
//! - [`fence`]: the fencing rule of semantics §1 (when a suspected rank enters the detector
//!   output).
//! - [`Error`]: the error classes of MPI and ULFM as one enum.
//! - [`fault`]: fault plans in their one grammar (`2@0.5`, `1@call:8`, `3@validate_global:2:1`)
//!   and the [`fault::Injector`] that says whether a rank dies at a point of its calls.
//! - [`settings`]: the `RT_*` variables and the one parser of each.
//! - [`simnet`]: the simulated network both simulators run over (per-pair FIFO queues; the
//!   caller's seed picks the pair).
//!
//! ```
//! use runthrough_core::{FailureView, RankSet, RankState};
//! // A communicator of 8 ranks; rank 3 failed and is recognized in G.
//! let g = FailureView::empty(8).updated(&RankSet::from_iter([3]), RankState::NULL);
//! assert_eq!(g.num_failed(), 1);
//! assert!(g.new_failures());
//! assert_eq!(g.state_of(3), Some(RankState::NULL | RankState::NEW));
//! assert_eq!(g.count(RankState::OK), 7);
//! ```
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod agreement;
pub mod blocks;
pub mod buffers;
pub mod detector;
pub mod engine;
mod error;
pub mod fault;
pub mod fence;
pub mod flow;
pub mod matching;
pub mod packet;
mod rank_set;
mod rank_state;
pub mod settings;
pub mod simnet;
mod view;
pub mod wire;

pub use agreement::{Agreement, AgreementSeries, Contribution, Decision, Participants};
pub use error::{Error, ErrorClass, Result};
pub use rank_set::{RankSet, Set, WorldSet};
pub use rank_state::{RankInfo, RankState};
pub use view::FailureView;

/// A rank: a process's number inside one communicator. The public API numbers ranks this way
/// everywhere (the world communicator's ranks are the job's); inside the crates, a process's
/// number in the job is a [`WorldRank`], a type of its own.
pub type Rank = u32;

/// A process's number in the job (its rank in the world communicator), as the engine, the
/// transports and the failure detector know it; a communicator's ranks ([`Rank`]) map to these
/// through its members. A type of its own so that the two are never mixed up (a set of one is
/// not a set of the other: [`RankSet`], [`WorldSet`]).
///
/// ```compile_fail
/// use runthrough_core::{RankSet, WorldSet};
/// let comm_ranks = RankSet::new();
/// let world_ranks: WorldSet = comm_ranks; // a set of comm ranks is no set of world ranks
/// ```
///
/// ```compile_fail
/// use runthrough_core::engine::Engine;
/// let mut engine = Engine::new(runthrough_core::WorldRank(0), 2);
/// let comm_rank: runthrough_core::Rank = 1;
/// engine.handle_peer_failed(comm_rank, &mut Vec::new()); // wants a WorldRank
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct WorldRank(pub u32);

impl WorldRank {
    /// The rank as an index (into per-peer tables).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for WorldRank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

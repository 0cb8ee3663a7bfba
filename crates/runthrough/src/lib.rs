// SPDX-License-Identifier: MIT OR Apache-2.0
//! runthrough: a fault-tolerant message-passing runtime in the MPI style.
//!
//! A job is n ranks that exchange messages and run collectives; when ranks die, the survivors
//! keep running (*run-through stabilization*, from the MPI Forum's 2011 fault-tolerance
//! proposal): they learn who failed, agree on it, and carry on with the ranks that are left.
//!
//! The contract is the guide's semantics chapter: every call that communicates returns a
//! [`Result`] whose errors are the MPI / ULFM error classes ([`Error`]); each communicator keeps
//! a local failure view L ([`Comm::validate_local`]) and an agreed global view G, both
//! immutable [`FailureView`] snapshots with the seed's accessors.
//!
//! ```
//! use runthrough::{RankState, Source};
//! // Four ranks; rank 3 dies at its first call. The others learn of it and validate.
//! let outcomes = runthrough::local(4).kill_at_operation(3, 1).run(|world| {
//!     if world.rank() == 3 {
//!         world.send(&[1u8], 0, 0)?; // dies here
//!     }
//!     let mut buf = [0u8];
//!     let err = world.recv(&mut buf, 3u32, 0).unwrap_err();
//!     assert_eq!(err, runthrough::Error::ProcFailed { rank: 3 });
//!     let local = world.validate_local()?;
//!     assert_eq!(local.state_of(3), Some(RankState::FAILED | RankState::NEW));
//!     Ok::<_, runthrough::Error>(local.num_failed())
//! });
//! assert!(outcomes[3].is_killed());
//! ```
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![deny(missing_docs)]
// The one exception, taking the launcher's inherited PMI socket, lives in runthrough-net.
#![forbid(unsafe_code)]

mod agreement;
mod collectives;
mod comm;
mod creation;
mod endpoint;
mod flow;
mod group;
mod matched;
mod rank;
mod request;
pub mod resilience;
mod revoke;
mod signal;
pub mod simulate;
mod spawn;
pub mod timeline;
mod transport;
mod universe;
mod wait;
mod window;

#[doc(hidden)]
pub use collectives::PackedOp;
pub use collectives::{CollectiveRequest, Op, Partition, PartitionMut, Reducible, UserOp};
pub use comm::{Comm, Source, Status, Tag, TAG_UB};
pub use flow::{FlowStats, DEFAULT_UNEXPECTED_CAP, ENV_UNEXPECTED_CAP};
pub use group::{Group, GroupComparison};
pub use matched::Message;
pub use request::{wait_all, wait_any, AgreementRequest, Request};
pub use runthrough_core::engine::rma::{Block as RmaBlock, Memory as WindowMemory};
pub use runthrough_core::fault::{Fault, FaultPlan, Trigger};
pub use runthrough_core::{fault, settings};
pub use runthrough_core::{
    Error, ErrorClass, FailureView, Rank, RankInfo, RankSet, RankState, Result,
};
pub use simulate::{explore, simulate, SimRun, Simulation};
pub use spawn::{InterComm, SpawnProgram, RESPAWN_ARG};
pub use transport::socket::{init, init_or_singleton, init_singleton, InitError, Universe};
pub use universe::{local, FaultHandle, LocalUniverse, RankOutcome};
pub use window::{RawWindow, RmaOp, Window};

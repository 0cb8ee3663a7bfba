// SPDX-License-Identifier: MIT OR Apache-2.0
//! A deterministic simulator for runthrough's agreement protocol.
//!
//! It drives the very state machines the runtime drives ([`runthrough_core::AgreementSeries`]
//! and [`runthrough_core::Agreement`]) over a simulated network and fault model in which every
//! choice comes from one seed:
//!
//! - [`Schedule`]: the number of ranks, 1–3 successive calls on one communicator (each over the
//!   ranks that the previous one left OK), per-link FIFO links with random delays (and rare slow
//!   messages), ranks entering at different times, crashes at every kind of point ([`Trigger`]:
//!   at a time, before entering, between two sends of one batch, after deciding, several at
//!   once, during repair, up to all but one rank), messages in flight from a crashed rank
//!   delivered or lost ([`InFlight`]), and each survivor's detector reporting each crash at its
//!   own random later time (only real crashes: the detector is accurate).
//! - [`Sim`] runs a schedule; after every step the [`Checker`] checks semantics §2.1 (uniform
//!   agreement, also with ranks that decided then crashed; validity: G' holds only crashed
//!   participants, every failure known at entry to a deciding rank, and every participant not
//!   in G' contributed; monotone G) and semantics §3.5 (flag = AND of the contributors, the
//!   `unacknowledged_failure` rule). Liveness: once no crash or detection is pending, every
//!   survivor must decide every call within [`liveness_budget`] steps, and a run that goes
//!   quiet with an undecided survivor is a violation.
//! - [`explore()`] runs many seeds; a violation carries the seed and the command that replays it
//!   ([`replay_command`]); the same seed always gives the same trace.
//! - [`scripted`] holds hand-written scenarios, apart from the random model.
//! - [`scale`] runs one agreement over up to 2^20 ranks under a latency model.
//! - [`detector_sim`] runs every rank's failure detector
//!   ([`runthrough_core::detector::Detector`]) under virtual time with crashes, hung ranks,
//!   partitions and slow links.
//! - [`engine_sim`] drives whole rank engines ([`runthrough_core::engine::Engine`]) with random
//!   point-to-point, collective and revocation programs under crashes.
//!
//! ```
//! use runthrough_sim::{run, Schedule};
//! let outcome = run(Schedule::random(7, (1, 16)), false).expect("no violation");
//! assert!(outcome.steps > 0 || outcome.messages == 0);
//! ```
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod checker;
pub mod detector_sim;
mod engine;
pub mod engine_sim;
mod explore;
pub mod scale;
mod schedule;
pub mod scripted;

pub use checker::Checker;
pub use engine::{describe, liveness_budget, run, Outcome, Sim, Violation};
pub use explore::{
    check_seed, check_seed_without_hosts, explore, replay, replay_command, Found, Totals,
    DEFAULT_RANKS,
};
pub use schedule::{schedule_seed, Crash, InFlight, Schedule, Trigger};

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fault-tolerant applications on runthrough that check their own results (examples are tests).
//!
//! - [`heat`]: a 2D Jacobi heat solver over a grid of blocks, with the seed's pattern:
//!   `validate_global` at every iteration boundary, in-memory buddy checkpoints
//!   (`runthrough::resilience::Store`, copies on other hosts), blocks of dead ranks taken over by
//!   their buddies, rollback, and a final field equal to the failure-free one bit for bit.
//! - [`bag_of_tasks`]: a master and workers; the master receives results on `Source::Any`,
//!   learns of dead workers through `ProcFailedPending`, acknowledges them with
//!   `validate_local`, re-issues their tasks, and gets exactly the failure-free results.
//!
//! Each application's per-rank body takes the world `&Comm`, however it was obtained:
//! [`heat::run`] and [`bag_of_tasks::run`] run it on in-process ranks (`runthrough::local`),
//! and [`heat::run_rank`] and [`bag_of_tasks::run_rank`] run one rank of a multi-process job
//! (`runthrough::init()` under rtrun, one process per rank). Only how a planned kill strikes
//! differs ([`kills::Death`]).
//!
//! The binaries `heat` and `bag_of_tasks` are thin command lines over them: in-process by
//! default, one rank per process when started by rtrun; both exit non-zero when the result is
//! wrong.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bag_of_tasks;
pub mod checksum;
pub mod heat;
mod held;
pub mod kills;
pub mod simulated;

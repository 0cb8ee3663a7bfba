// SPDX-License-Identifier: MIT OR Apache-2.0
//! The C interface of runthrough (semantics §5): `include/mpi.h` and the library that implements
//! it.
//!
//! The library exports the seed's calls with their exact signatures
//! (`MPI_Comm_validate_local(comm, &num_failed)`, `MPI_Comm_validate_global`,
//! `MPI_Comm_get_state_{local,global}`, `MPI_Comm_get_num_state_{local,global}`), the two
//! variants the seed thread discusses (`MPI_Comm_validate_{local,global}_flag` and
//! `_count`), the MPI subset a C program needs around them, and the ULFM calls, all mapped onto
//! the Rust API of the `runthrough` crate. A C program is compiled with `rtcc` (this crate's
//! compiler wrapper) and run under `rtrun`, which `runthrough::init` bootstraps from.
//!
//! # Contract
//! - Every exported function catches panics at its boundary and checks every pointer and handle
//!   it is given: wrong use from C (a NULL pointer, a freed or unknown handle, a negative count)
//!   returns an error class through the communicator's error handler; it never crashes or
//!   corrupts the library. What the library cannot check (that a non-NULL pointer points at as
//!   much memory as the count says) is the caller's part of the contract, as in every MPI.
//! - Handles are small integers into tables held in one process-global state (the C API is
//!   process-global by nature), never reused, so stale handles are detected.
//! - Error codes are the classes of [`runthrough::ErrorClass`], plus three that only the C
//!   interface reports ([`constants::ERR_UNKNOWN`], [`constants::ERR_IN_STATUS`],
//!   [`constants::ERR_LASTCODE`]); `tests/header.rs` checks that `include/mpi.h` holds exactly
//!   the values of [`constants::ALL`].
//! - Blocking calls never hold the table lock while they wait.
//!
//! The header's opening comment lists where the runtime has no exact counterpart and what the
//! library does instead (`MPI_Ibarrier`, `MPI_Comm_create_group`, `MPI_Abort`).
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![deny(missing_docs)]

/// Defines a module's profiling-interface names: the `PMPI_*` / `PMPIX_*` twin of each `MPI_*` /
/// `MPIX_*` function the module exports, written by `build.rs` from the module's source. Every
/// module that exports functions ends with `profiling_names!("<its file name>");`
/// (`tests/profiling.rs` fails on an exported function without its twin).
macro_rules! profiling_names {
    ($file:literal) => {
        include!(concat!(env!("OUT_DIR"), "/profiling/", $file));
    };
}

mod attributes;
mod buffered;
mod collectives;
mod communicators;
mod completion;
pub mod constants;
mod datatypes;
mod derived;
mod environment;
mod errors;
mod external32;
mod failures;
mod fortran;
mod graph;
mod grequest;
mod info;
mod inter_collectives;
mod intercomm;
mod matched;
mod neighbor;
mod ops;
mod pack;
mod pairs;
mod persistent;
mod persistent_collectives;
mod point_to_point;
mod resilience;
mod rooted;
mod runtime;
mod spawn;
mod stdio;
mod topology;
mod typeinfo;
mod wide;
mod windows;

pub use constants::{MPI_Rank_info, MPI_Status};

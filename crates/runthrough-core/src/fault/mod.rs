// SPDX-License-Identifier: MIT OR Apache-2.0
//! Fault injection: which rank dies where, in one grammar for every tool.
//!
//! A [`FaultPlan`] is a list of [`Fault`]s, each a rank and a [`Trigger`]: the moment it dies.
//! The same text means the same plan for `rtrun --kill`, the `RT_FAULT` variable a launcher
//! hands a rank (its own triggers, without the rank), the examples' `--kill` and the
//! in-process builder (`runthrough::local(n).faults(&plan)`); [`Display`](std::fmt::Display)
//! writes what [`FromStr`](std::str::FromStr) reads back.
//!
//! # The grammar
//!
//! A plan is faults separated by commas (the empty text is the empty plan); a fault is
//! `RANK@TRIGGER`:
//!
//! | trigger | the rank dies | example |
//! |---|---|---|
//! | `SECONDS`, `SECONDSs`, `MILLISms` | this long after the job started (killed from outside) | `2@0.5`, `2@0.5s`, `2@300ms` |
//! | `call:K` | when it starts its K-th communication call (K ≥ 1) | `1@call:8` |
//! | `validate_global:K[:M]` (or `agreement:K[:M]`, `vK.M`) | in its K-th agreement on the world communicator, before its M-th protocol message (default 1) | `2@validate_global:30`, `3@validate_global:2:1`, `2@v7.1` |
//! | `COLLECTIVE:K[:M]` | in its K-th call of that collective, at entry (M omitted or 0) or before that call's M-th message | `1@all_reduce:3`, `1@bcast:2:1` |
//! | `revoke:M` | before it sends its M-th revocation message (M ≥ 1) | `0@revoke:2` |
//! | `iteration:K` (or `step:K`) | at the application's K-th step: injected by the program, not the runtime | `3@iteration:25` |
//! | `recovery:N` (or `rN`) | in the application's N-th recovery (N ≥ 1): injected by the program | `5@recovery:1`, `5@r1` |
//!
//! `COLLECTIVE` is one of `barrier`, `broadcast`, `reduce`, `all_reduce`, `gather`,
//! `all_gather`, `scatter`, `all_to_all`, `scan`, `exscan`, `neighbor_exchange` (the
//! neighbourhood collectives), or the spellings MPI users type
//! (`bcast`, `allreduce`, `allgather`, `alltoall`). A bare number is seconds; the example
//! programs, whose `--kill` has always taken a bare number as a step of their own (heat's
//! iteration, bag_of_tasks' count of results), read it with [`BareNumber::Iteration`].
//! [`Display`](std::fmt::Display) always writes the explicit form (`0.5s`, `iteration:25`), so
//! what it writes means the same wherever it is read.
//!
//! ```
//! use runthrough_core::fault::{Collective, FaultPlan, Trigger};
//! let plan: FaultPlan = "2@0.5, 1@all_reduce:3:1, 3@v7.1".parse().unwrap();
//! assert_eq!(plan.faults()[1].trigger, Trigger::Collective {
//!     operation: Collective::AllReduce, call: 3, message: 1,
//! });
//! assert_eq!(plan.to_string(), "2@0.5s,1@all_reduce:3:1,3@validate_global:7:1");
//! assert_eq!(plan.to_string().parse::<FaultPlan>().unwrap(), plan);
//! let error = "1@frobnicate:3".parse::<FaultPlan>().unwrap_err();
//! assert!(error.to_string().contains("1@frobnicate:3"));
//! ```
//!
//! [`Injector`] answers, for one rank, "does this rank die here" at each call entry,
//! collective start and send; a driver keeps one per rank that has point faults, and asks it
//! nothing when the plan is empty.

mod injector;
mod plan;

pub use injector::{CallNumber, Injector, Sending};
pub use plan::{BareNumber, Collective, Fault, FaultError, FaultPlan, InjectedBy, Trigger};

#[cfg(test)]
mod tests;

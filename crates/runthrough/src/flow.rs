// SPDX-License-Identifier: MIT OR Apache-2.0
//! Flow control as this crate's drivers run it: the accounting of `runthrough_core::flow` (the
//! scheme, its guarantees and limits are documented there), with its ready flag shared as an
//! atomic ([`runthrough_core::flow::SharedReady`]), so that a rank's waiting threads see without
//! the engine's lock that a message waiting for credit may be sendable now.

pub(crate) use runthrough_core::flow::charge;
pub use runthrough_core::flow::{FlowStats, DEFAULT_UNEXPECTED_CAP, ENV_UNEXPECTED_CAP};

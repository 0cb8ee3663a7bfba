// SPDX-License-Identifier: MIT OR Apache-2.0
//! Flow control as this crate's drivers run it: the accounting of `runthrough_core::flow` (the
//! scheme, its guarantees and limits are documented there), with its ready flag shared as an
//! atomic, so that a rank's waiting threads see without the engine's lock that a message
//! waiting for credit may be sendable now.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub(crate) use runthrough_core::flow::charge;
pub use runthrough_core::flow::{FlowStats, DEFAULT_UNEXPECTED_CAP, ENV_UNEXPECTED_CAP};

/// A rank's flow-control state, part of its engine.
pub(crate) type Flow = runthrough_core::flow::Flow<ReadyFlag>;

/// The flag that says a queued message may be sendable now, shared with the endpoint.
#[derive(Debug, Default)]
pub(crate) struct ReadyFlag(Arc<AtomicBool>);

impl ReadyFlag {
    /// Another handle on the flag, for waiters that look without the engine's lock.
    pub(crate) fn shared(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

impl runthrough_core::flow::Ready for ReadyFlag {
    #[inline]
    fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    #[inline]
    fn clear(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

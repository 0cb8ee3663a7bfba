// SPDX-License-Identifier: MIT OR Apache-2.0
//! A rank's events for its launcher's job timeline (`rtrun --timeline`).
//!
//! rtrun sets `RT_TIMELINE=1` ([`launch::ENV_TIMELINE`]) only when it draws a timeline.
//! [`crate::init`] reads it once and, when it is set and the rank has rtrun's control
//! connection, installs a [`Sink`] on a clone of that connection. From then on the rank writes
//! one line per event there ([`runthrough_net::timeline`]): when it is wired up, when its
//! detector learns of a failure, what each `validate_global`, `agree` and `shrink` returned,
//! when it enters finalize. rtrun stamps each line with the time it reads it.
//!
//! Cost: without the variable no sink is installed, and every hook is one load of an
//! initialized-or-not cell and a branch. With it, an event is one short `write` on a socket
//! without Nagle's delay (a few microseconds; the detector's is made under the engine's lock).
//!
//! The sink belongs to the rank [`crate::init`] started: events of any other rank the process
//! runs (an in-process [`crate::LocalUniverse`] beside it) are not reported, which the hooks
//! tell by the address of the rank's endpoint and engine.

use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex, OnceLock};

use runthrough_core::{FailureView, RankState, Result};
use runthrough_net::launch;
use runthrough_net::timeline::{event_line, Outcome, RankEvent};

use crate::comm::Comm;
use crate::engine::{Endpoint, Engine};

/// Where a rank's events go.
struct Sink {
    /// The reporting rank's endpoint and engine, by address (see the module's docs).
    endpoint: usize,
    engine: usize,
    /// A clone of the control connection to the launcher.
    stream: Mutex<TcpStream>,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Whether the launcher asked for a timeline ([`launch::ENV_TIMELINE`] is `1`).
pub(crate) fn requested() -> bool {
    std::env::var(launch::ENV_TIMELINE).is_ok_and(|v| v == "1")
}

/// Reports the events of `endpoint`'s rank on `control` from now on (once per process; a
/// second call does nothing). A connection that cannot be cloned reports nothing.
pub(crate) fn install(endpoint: &Arc<Endpoint>, control: &TcpStream) {
    let Ok(stream) = control.try_clone() else {
        return;
    };
    let engine = &*endpoint.lock() as *const Engine as usize;
    let _ = SINK.set(Sink {
        endpoint: Arc::as_ptr(endpoint) as usize,
        engine,
        stream: Mutex::new(stream),
    });
}

impl Sink {
    fn send(&self, event: &RankEvent) {
        let line = event_line(event);
        let mut stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        // A lost launcher is noticed by the control thread, which halts the rank.
        let _ = stream.write_all(line.as_bytes());
    }
}

/// The sink, if `comm`'s rank is the reporting one.
fn sink_of(comm: &Comm) -> Option<&'static Sink> {
    SINK.get()
        .filter(|s| s.endpoint == Arc::as_ptr(&comm.process.endpoint) as usize)
}

/// The rank of `endpoint` is wired up.
pub(crate) fn ready(endpoint: &Arc<Endpoint>) {
    if let Some(sink) = SINK.get() {
        if sink.endpoint == Arc::as_ptr(endpoint) as usize {
            sink.send(&RankEvent::Ready);
        }
    }
}

/// The rank of `endpoint` enters finalize.
pub(crate) fn finalize(endpoint: &Arc<Endpoint>) {
    if let Some(sink) = SINK.get() {
        if sink.endpoint == Arc::as_ptr(endpoint) as usize {
            sink.send(&RankEvent::Finalize);
        }
    }
}

/// `engine`'s detector has just learned that world rank `world` failed (called once per rank,
/// under the engine's lock).
#[inline]
pub(crate) fn learned(engine: &Engine, world: u32) {
    if let Some(sink) = SINK.get() {
        if sink.engine == engine as *const Engine as usize {
            sink.send(&RankEvent::Learned(world));
        }
    }
}

/// `None` for the world communicator, else its size.
fn comm_tag(comm: &Comm) -> Option<u32> {
    (comm.context != runthrough_core::packet::WORLD_CONTEXT).then_some(comm.size)
}

fn error_outcome(error: &runthrough_core::Error) -> Outcome {
    Outcome::Error(error.to_string())
}

/// `validate_global` on `comm` returned `result`.
pub(crate) fn validate_global(comm: &Comm, result: &Result<FailureView>) {
    let Some(sink) = sink_of(comm) else {
        return;
    };
    let outcome = match result {
        Ok(view) => {
            // World ranks: the communicator's members, looked up only when reporting.
            let world = |query| -> Vec<u32> {
                let ranks: Vec<u32> = view.ranks(query).map(|info| info.rank).collect();
                let mut engine = comm.process.endpoint.lock();
                match engine.comm(comm.context) {
                    Ok(state) => ranks.iter().map(|&r| state.members.world_of(r)).collect(),
                    Err(_) => ranks,
                }
            };
            Outcome::View {
                failed: world(RankState::NULL),
                new: world(RankState::NULL | RankState::NEW),
            }
        }
        Err(e) => error_outcome(e),
    };
    sink.send(&RankEvent::Call {
        name: "validate_global".into(),
        comm: comm_tag(comm),
        outcome,
    });
}

/// `agree` on `comm` returned `result`.
pub(crate) fn agree(comm: &Comm, result: &Result<u32>) {
    let Some(sink) = sink_of(comm) else {
        return;
    };
    let outcome = match result {
        Ok(flag) => Outcome::Flag(*flag),
        Err(e) => error_outcome(e),
    };
    sink.send(&RankEvent::Call {
        name: "agree".into(),
        comm: comm_tag(comm),
        outcome,
    });
}

/// `shrink` on `comm` returned `result`.
pub(crate) fn shrink(comm: &Comm, result: &Result<Comm>) {
    let Some(sink) = sink_of(comm) else {
        return;
    };
    let outcome = match result {
        Ok(shrunk) => Outcome::Size(shrunk.size),
        Err(e) => error_outcome(e),
    };
    sink.send(&RankEvent::Call {
        name: "shrink".into(),
        comm: comm_tag(comm),
        outcome,
    });
}

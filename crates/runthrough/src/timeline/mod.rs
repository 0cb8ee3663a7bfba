// SPDX-License-Identifier: MIT OR Apache-2.0
//! Job timelines: the ranks' events, and the picture ([`Timeline::svg`]).
//!
//! A rank reports its events (when it is wired up, when its detector learns of a failure, what
//! each `validate_global`, `agree` and `shrink` returned, when it enters finalize) only to a
//! sink installed for it:
//! - under rtrun with `--timeline`, which sets `RT_TIMELINE=1` ([`launch::ENV_TIMELINE`]) for
//!   that alone: [`crate::init`] reads it once and installs a sink on a clone of rtrun's control
//!   connection, where the rank writes one line per event ([`runthrough_net::timeline`]); rtrun
//!   stamps each line with the time it reads it. The line is one short `write` on a socket
//!   without Nagle's delay; the rank's other reports to rtrun are written on another descriptor
//!   of the same socket, each line by one `write` of a few dozen bytes, which the kernel does
//!   not interleave with another.
//! - in-process, with [`crate::LocalUniverse::timeline`]: every rank's events go to one
//!   recorder, stamped when they happen, for the duration of `run`.
//!
//! Cost: with no sink installed, each hook is one load of a flag and a branch. With one, the
//! hooks find their rank's sink by the address of its endpoint (or engine), so ranks without one
//! (an in-process universe beside an rtrun rank, say) report nothing; the detector's hook runs
//! under the engine's lock.

mod picture;

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use runthrough_core::{FailureView, RankState, Result};
use runthrough_net::launch;
use runthrough_net::timeline::event_line;

use crate::comm::Comm;
use crate::endpoint::{Endpoint, Engine};

pub use picture::{Entry, Outcome, RankEvent, Timeline, What};

/// Where a rank's events go.
enum Target {
    /// rtrun's control connection (a clone).
    Control(Mutex<TcpStream>),
    /// An in-process job's recorder.
    Memory(Arc<Recorder>),
}

/// A rank's sink.
struct Sink {
    /// The rank, kept alive while the sink is installed so that no other rank gets its address.
    endpoint: Arc<Endpoint>,
    /// The address of its engine, for the detector's hook (which has only the engine).
    engine: usize,
    target: Target,
}

/// Whether any sink is installed: the hooks' fast path.
static ANY: AtomicBool = AtomicBool::new(false);
static SINKS: RwLock<Vec<Arc<Sink>>> = RwLock::new(Vec::new());

/// The events of an in-process job, stamped from its start.
#[derive(Debug)]
pub(crate) struct Recorder {
    start: Instant,
    entries: Mutex<Vec<Entry>>,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Recorder {
            start: Instant::now(),
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Records that `what` happened to `rank` now.
    pub(crate) fn note(&self, rank: u32, what: What) {
        let at = self.start.elapsed();
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Entry { rank, at, what });
    }

    /// The job's timeline so far, in time order.
    pub(crate) fn timeline(&self, size: u32) -> Timeline {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        entries.sort_by_key(|e| e.at);
        Timeline {
            size,
            elapsed: self.start.elapsed(),
            entries,
            clock: "when each event happened, from the start of run".into(),
        }
    }
}

/// Whether the launcher asked for a timeline ([`launch::ENV_TIMELINE`] is `1`).
pub(crate) fn requested() -> bool {
    std::env::var(launch::ENV_TIMELINE).is_ok_and(|v| v == "1")
}

fn add(endpoint: &Arc<Endpoint>, target: Target) {
    let engine = &*endpoint.lock() as *const Engine as usize;
    let sink = Arc::new(Sink {
        endpoint: Arc::clone(endpoint),
        engine,
        target,
    });
    let mut sinks = SINKS.write().unwrap_or_else(|e| e.into_inner());
    sinks.retain(|s| !Arc::ptr_eq(&s.endpoint, endpoint));
    sinks.push(sink);
    ANY.store(true, Ordering::SeqCst);
}

/// Reports the events of `endpoint`'s rank on rtrun's `control` connection from now on. A
/// connection that cannot be cloned reports nothing.
pub(crate) fn install(endpoint: &Arc<Endpoint>, control: &TcpStream) {
    if let Ok(stream) = control.try_clone() {
        add(endpoint, Target::Control(Mutex::new(stream)));
    }
}

/// Records the events of `endpoint`'s rank in `recorder` until [`uninstall`].
pub(crate) fn record(endpoint: &Arc<Endpoint>, recorder: &Arc<Recorder>) {
    add(endpoint, Target::Memory(Arc::clone(recorder)));
}

/// Stops reporting `endpoint`'s events.
pub(crate) fn uninstall(endpoint: &Arc<Endpoint>) {
    let mut sinks = SINKS.write().unwrap_or_else(|e| e.into_inner());
    sinks.retain(|s| !Arc::ptr_eq(&s.endpoint, endpoint));
    ANY.store(!sinks.is_empty(), Ordering::SeqCst);
}

impl Sink {
    fn send(&self, event: RankEvent) {
        match &self.target {
            Target::Control(stream) => {
                let line = event_line(&event);
                let mut stream = stream.lock().unwrap_or_else(|e| e.into_inner());
                // A lost launcher is noticed by the control thread, which halts the rank.
                let _ = stream.write_all(line.as_bytes());
            }
            Target::Memory(recorder) => {
                recorder.note(self.endpoint.world_rank.0, What::Rank(event));
            }
        }
    }
}

/// The sink that `matches`, if any is installed.
#[inline]
fn find(matches: impl Fn(&Sink) -> bool) -> Option<Arc<Sink>> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let sinks = SINKS.read().unwrap_or_else(|e| e.into_inner());
    sinks.iter().find(|s| matches(s)).cloned()
}

/// The sink of `endpoint`'s rank.
fn sink_of_endpoint(endpoint: &Arc<Endpoint>) -> Option<Arc<Sink>> {
    find(|s| Arc::ptr_eq(&s.endpoint, endpoint))
}

/// The sink of `comm`'s rank.
fn sink_of(comm: &Comm) -> Option<Arc<Sink>> {
    sink_of_endpoint(&comm.process.endpoint)
}

/// The rank of `endpoint` is wired up.
pub(crate) fn ready(endpoint: &Arc<Endpoint>) {
    if let Some(sink) = sink_of_endpoint(endpoint) {
        sink.send(RankEvent::Ready);
    }
}

/// The rank of `endpoint` enters finalize.
pub(crate) fn finalize(endpoint: &Arc<Endpoint>) {
    if let Some(sink) = sink_of_endpoint(endpoint) {
        sink.send(RankEvent::Finalize);
    }
}

/// `engine`'s detector has just learned that world rank `world` failed (called once per rank,
/// under the engine's lock).
#[inline]
pub(crate) fn learned(engine: &Engine, world: u32) {
    let address = engine as *const Engine as usize;
    if let Some(sink) = find(|s| s.engine == address) {
        sink.send(RankEvent::Learned(world));
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
                let engine = comm.process.endpoint.lock();
                ranks
                    .iter()
                    .map(|&r| engine.world_rank_of(comm.context, r).map_or(r, |w| w.0))
                    .collect()
            };
            Outcome::View {
                failed: world(RankState::NULL),
                new: world(RankState::NULL | RankState::NEW),
            }
        }
        Err(e) => error_outcome(e),
    };
    sink.send(RankEvent::Call {
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
    sink.send(RankEvent::Call {
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
    sink.send(RankEvent::Call {
        name: "shrink".into(),
        comm: comm_tag(comm),
        outcome,
    });
}

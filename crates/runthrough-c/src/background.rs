// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking collectives that the rank's engine does not run as schedules
//! (`crate::collectives::start_or_schedule`: `MPIX_Comm_ishrink`, and calls with invalid
//! arguments, which their blocking call reports): each is its blocking call, queued on its
//! communicator and run in call order, so several can be pending at once and collectives on a
//! communicator stay ordered.
//!
//! # Who runs a queued call
//! Each communicator that has had a non-blocking collective gets one worker thread (started by
//! the first), which runs the queue's calls one after the other while the program does other
//! things: that is the progress a non-blocking collective promises (a rank that starts one and
//! then waits for a message that another rank sends only after its own start still gets it).
//! A thread that waits for one of them (`MPI_Wait`, or a blocking collective on the
//! communicator, which waits for all of them) does not sleep while its call waits in the
//! queue: it runs the queued calls itself, in order, up to its own. So a request that is
//! started and then waited for costs the blocking call and no thread hand-off. One lock,
//! `running`, is held while a call runs, by whichever thread runs it: two calls of one
//! communicator never run at once, and they run in the order they were started.
//!
//! The worker ends once its communicator is freed (its table entry dropped) and the queue is
//! empty.

use std::collections::VecDeque;
use std::os::raw::c_int;
use std::sync::{Arc, Condvar, Mutex};

use crate::constants::*;
use crate::errors::Failure;
use crate::runtime::{lock, CommBox};

/// A non-blocking collective's outcome, once it has one, and the queue that runs it.
#[derive(Debug)]
pub(crate) struct Background {
    outcome: Mutex<Option<Result<(), Failure>>>,
    done: Condvar,
    queue: Arc<Queue>,
}

impl Background {
    fn finish(&self, outcome: Result<(), Failure>) {
        *lock(&self.outcome) = Some(outcome);
        self.done.notify_all();
    }

    /// Its outcome, if it has one (never runs anything: `MPI_Test` stays local).
    pub(crate) fn poll(&self) -> Option<Result<(), Failure>> {
        lock(&self.outcome).clone()
    }

    /// Its outcome, running the calls queued before it and itself on this thread when they
    /// are still waiting to run.
    pub(crate) fn wait(&self) -> Result<(), Failure> {
        loop {
            if let Some(outcome) = self.poll() {
                return outcome;
            }
            if !self.queue.run_next() {
                break;
            }
        }
        // The queue is empty, so this call was taken by another thread, which holds `running`
        // until it finishes it; run_next waited for that lock, so it is finished by now.
        let mut outcome = lock(&self.outcome);
        loop {
            if let Some(outcome) = outcome.as_ref() {
                return outcome.clone();
            }
            outcome = self
                .done
                .wait(outcome)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

/// A queued call.
struct Job {
    background: Arc<Background>,
    /// The communicator handle it was started on, and the communicator.
    handle: c_int,
    comm: Arc<CommBox>,
    call: Box<dyn FnOnce() -> c_int + Send>,
}

impl Job {
    fn run(self) {
        let Job {
            background,
            handle,
            comm,
            call,
        } = self;
        let before = RUNNING.with(|running| running.borrow_mut().replace((handle, comm)));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::errors::keeping_failures(call)
        }))
        .unwrap_or_else(|_| {
            Err(Failure::new(
                MPI_ERR_INTERN,
                "internal error: a non-blocking collective panicked",
            ))
        });
        RUNNING.with(|running| *running.borrow_mut() = before);
        background.finish(outcome);
    }
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// The communicator was freed: the worker ends once `jobs` is empty.
    closed: bool,
}

/// One communicator's queue of non-blocking collectives.
#[derive(Default)]
pub(crate) struct Queue {
    state: Mutex<State>,
    /// Rung when a job is queued or the queue is closed (the worker sleeps on it).
    ready: Condvar,
    /// Held while a job runs.
    running: Mutex<()>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("queued", &lock(&self.state).jobs.len())
            .finish()
    }
}

impl Queue {
    /// Runs the first queued job on this thread; `false` if none was queued (once it holds
    /// `running`, so every job taken before has finished).
    fn run_next(&self) -> bool {
        let _running = lock(&self.running);
        let Some(job) = lock(&self.state).jobs.pop_front() else {
            return false;
        };
        job.run();
        true
    }

    /// The worker: runs jobs as they come, until the queue is closed and empty.
    fn work(&self) {
        loop {
            {
                let mut state = lock(&self.state);
                while state.jobs.is_empty() {
                    if state.closed {
                        return;
                    }
                    state = self
                        .ready
                        .wait(state)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                }
            }
            self.run_next();
        }
    }

    /// Queues `call` (a blocking collective call on `handle`, whose communicator is `comm`);
    /// returns its outcome's cell.
    pub(crate) fn push(
        self: &Arc<Self>,
        handle: c_int,
        comm: Arc<CommBox>,
        call: Box<dyn FnOnce() -> c_int + Send>,
    ) -> Arc<Background> {
        let background = Arc::new(Background {
            outcome: Mutex::new(None),
            done: Condvar::new(),
            queue: Arc::clone(self),
        });
        lock(&self.state).jobs.push_back(Job {
            background: Arc::clone(&background),
            handle,
            comm,
            call,
        });
        self.ready.notify_all();
        background
    }
}

/// A communicator's queue and its worker thread, held by its table entry: dropping it (the
/// communicator freed) closes the queue.
#[derive(Debug)]
pub(crate) struct Worker(pub(crate) Arc<Queue>);

impl Worker {
    /// A new queue and its worker thread.
    ///
    /// # Errors
    /// `MPI_ERR_INTERN` when no thread can be started.
    pub(crate) fn start() -> Result<Worker, Failure> {
        let queue = Arc::new(Queue::default());
        let worker_queue = Arc::clone(&queue);
        std::thread::Builder::new()
            .name("rt-collectives".into())
            .spawn(move || worker_queue.work())
            .map_err(|e| Failure::new(MPI_ERR_INTERN, format!("starting a thread: {e}")))?;
        Ok(Worker(queue))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        lock(&self.0.state).closed = true;
        self.0.ready.notify_all();
    }
}

thread_local! {
    /// While a thread runs a queued call: the handle it was started on and its communicator,
    /// which `collective_comm_of` gives at once (the calls before it have run) and even if the
    /// program freed the handle meanwhile.
    pub(crate) static RUNNING: std::cell::RefCell<Option<(c_int, Arc<CommBox>)>> =
        const { std::cell::RefCell::new(None) };
}

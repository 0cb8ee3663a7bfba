// SPDX-License-Identifier: MIT OR Apache-2.0
//! Generalized requests (MPI-4.0 §13.2): `MPI_Grequest_start` and `MPI_Grequest_complete`.
//!
//! A generalized request stands for an operation the program runs itself (often on a thread
//! of its own): it completes when the program calls `MPI_Grequest_complete`, and the usual
//! calls wait for it, test it, cancel it and free it. The program's three functions are called
//! on the thread of the call that needs them, never while the library holds a lock (they may
//! call the library, `MPI_Grequest_complete` included):
//! - `query_fn(extra_state, status)` when a completion call (`MPI_Wait`, `MPI_Test`, the
//!   `...all`, `...any`, `...some` calls) or `MPI_Request_get_status` finds it complete: it
//!   fills the status (which starts as an empty one: `MPI_ANY_SOURCE`, `MPI_ANY_TAG`, no
//!   error); its return value is the completion's error;
//! - `free_fn(extra_state)` once, after that `query_fn` of the completion call, or when
//!   `MPI_Grequest_complete` comes after `MPI_Request_free`; a non-zero return is the
//!   completion's error when `query_fn`'s was none;
//! - `cancel_fn(extra_state, complete)` at `MPI_Cancel`, `complete` saying whether
//!   `MPI_Grequest_complete` was called; its return value is `MPI_Cancel`'s.
//!
//! Waiting: `MPI_Wait` sleeps on the request's condition variable, which
//! `MPI_Grequest_complete` signals (no polling); the calls that look at several requests look
//! at it as at any other.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::point_to_point::empty_status;
use crate::runtime::{lock, with_runtime, Operation};

/// `MPI_Grequest_query_function`.
pub(crate) type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
/// `MPI_Grequest_free_function`.
pub(crate) type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub(crate) type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// What `MPI_Grequest_complete` and the completion calls share.
#[derive(Debug, Default)]
struct Flags {
    /// `MPI_Grequest_complete` was called.
    complete: bool,
    /// `MPI_Request_free` was called before it: it frees the request.
    freed: bool,
}

/// A generalized request: the program's functions and its state, and whether it completed.
#[derive(Debug)]
pub(crate) struct State {
    query: Option<QueryFn>,
    free: Option<FreeFn>,
    cancel: Option<CancelFn>,
    /// The program's `extra_state`, as an address.
    extra: usize,
    /// Its request handle, set once it has one.
    handle: OnceLock<c_int>,
    flags: Mutex<Flags>,
    completed: Condvar,
}

impl State {
    fn extra(&self) -> *mut c_void {
        std::ptr::with_exposed_provenance_mut(self.extra)
    }

    /// Whether `MPI_Grequest_complete` was called (after waiting for it with `block`).
    pub(crate) fn complete(&self, block: bool) -> bool {
        let mut flags = lock(&self.flags);
        while block && !flags.complete {
            flags = self
                .completed
                .wait(flags)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        flags.complete
    }

    /// The status and error `query_fn` gives.
    pub(crate) fn query(&self) -> Result<MPI_Status, Failure> {
        let mut status = empty_status();
        let code = match self.query {
            // SAFETY: an `MPI_Grequest_query_function` (`MPI_Grequest_start`'s contract), given
            // the program's state and a status to fill; no lock of the library is held.
            Some(query) => unsafe { query(self.extra(), &mut status) },
            None => MPI_SUCCESS,
        };
        if code != MPI_SUCCESS {
            return Err(Failure::new(
                code,
                format!("the generalized request's query function returned {code}"),
            ));
        }
        Ok(status)
    }

    /// Takes the request out of the generalized requests' table.
    fn forget(&self) {
        if let Some(handle) = self.handle.get() {
            let _ = with_runtime(|runtime| {
                runtime.generalized.remove(handle);
                Ok(())
            });
        }
    }

    /// Calls `free_fn`: its error, if any.
    pub(crate) fn free(&self) -> Result<(), Failure> {
        let code = match self.free {
            // SAFETY: an `MPI_Grequest_free_function`, called once, with no lock held.
            Some(free) => unsafe { free(self.extra()) },
            None => MPI_SUCCESS,
        };
        if code != MPI_SUCCESS {
            return Err(Failure::new(
                code,
                format!("the generalized request's free function returned {code}"),
            ));
        }
        Ok(())
    }

    /// Calls `cancel_fn` with whether the request completed.
    pub(crate) fn cancel(&self) -> Result<(), Failure> {
        let complete = c_int::from(self.complete(false));
        let code = match self.cancel {
            // SAFETY: an `MPI_Grequest_cancel_function`, with no lock held.
            Some(cancel) => unsafe { cancel(self.extra(), complete) },
            None => MPI_SUCCESS,
        };
        if code != MPI_SUCCESS {
            return Err(Failure::new(
                code,
                format!("the generalized request's cancel function returned {code}"),
            ));
        }
        Ok(())
    }

    /// `MPI_Request_free` of the request (already out of the table): freed at once when it
    /// completed, else by `MPI_Grequest_complete`.
    pub(crate) fn release(&self) -> Result<(), Failure> {
        let mut flags = lock(&self.flags);
        if !flags.complete {
            flags.freed = true;
            return Ok(());
        }
        drop(flags);
        self.forget();
        self.free()
    }

    /// The completion of the request by a completion call: `query_fn`, then `free_fn`; the
    /// status and the first error.
    pub(crate) fn finish(&self) -> Result<MPI_Status, Failure> {
        self.forget();
        let queried = self.query();
        let freed = self.free();
        let status = queried?;
        freed.map(|()| status)
    }
}

/// `MPI_Grequest_start`: a new generalized request, active until `MPI_Grequest_complete`.
/// Any of the three functions may be NULL (nothing to call; the status stays empty).
///
/// # Errors
/// `MPI_ERR_ARG` for a NULL `request`.
///
/// # Safety
/// The functions are NULL or have the C types MPI gives them; `request` is NULL or points at
/// a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_start(
    query_fn: Option<QueryFn>,
    free_fn: Option<FreeFn>,
    cancel_fn: Option<CancelFn>,
    extra_state: *mut c_void,
    request: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        let state = Arc::new(State {
            query: query_fn,
            free: free_fn,
            cancel: cancel_fn,
            extra: extra_state.expose_provenance(),
            handle: OnceLock::new(),
            flags: Mutex::default(),
            completed: Condvar::new(),
        });
        let handle = with_runtime(|runtime| {
            let handle =
                runtime.add_request(Operation::Generalized(Arc::clone(&state)), MPI_COMM_WORLD);
            let _ = state.handle.set(handle);
            runtime.generalized.insert(handle, state);
            Ok(handle)
        })?;
        request.write(handle);
        Ok(())
    })
}

/// `MPI_Grequest_complete`: the request's operation is done; a call waiting for it returns
/// (after `query_fn` and `free_fn`). The handle stays valid until a completion call frees it.
///
/// # Errors
/// `MPI_ERR_REQUEST` for a handle that is not an active generalized request.
#[no_mangle]
pub extern "C" fn MPI_Grequest_complete(request: c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let state = with_runtime(|runtime| {
            runtime.generalized.get(&request).cloned().ok_or_else(|| {
                Failure::new(
                    MPI_ERR_REQUEST,
                    format!("{request} is not an active generalized request"),
                )
            })
        })?;
        let mut flags = lock(&state.flags);
        if flags.complete {
            return Err(Failure::new(
                MPI_ERR_REQUEST,
                format!("generalized request {request} was completed already"),
            ));
        }
        flags.complete = true;
        let freed = flags.freed;
        drop(flags);
        state.completed.notify_all();
        if freed {
            state.forget();
            state.free()?;
        }
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("grequest.rs");

// SPDX-License-Identifier: MIT OR Apache-2.0
//! runthrough's fault-tolerant calls on the communicators of the `mpi` crate (rsmpi).
//!
//! rsmpi built against runthrough's C library (`MPICC=target/release/rtcc`) runs on runthrough,
//! but has no call for failures, and ignores the error codes of the calls it makes. This crate
//! adds, to every rsmpi communicator (anything that implements [`mpi::traits::Communicator`]),
//! through the trait [`FaultTolerant`]:
//!
//! - runthrough's failure views: [`validate_local`](FaultTolerant::validate_local) (L, the
//!   failures this rank knows), [`validate_global`](FaultTolerant::validate_global) (G, the
//!   failures every survivor agreed on; collective and fault-tolerant), and the accessors of
//!   both views ([`state_global`](FaultTolerant::state_global), ...);
//! - the ULFM calls: [`revoke`](FaultTolerant::revoke), [`shrink`](FaultTolerant::shrink),
//!   [`agree`](FaultTolerant::agree), [`failure_ack`](FaultTolerant::failure_ack),
//!   [`get_failed`](FaultTolerant::get_failed), [`ack_failed`](FaultTolerant::ack_failed);
//! - [`record_errors`](FaultTolerant::record_errors): an error handler that, instead of ending
//!   the process, keeps the error of an rsmpi call for [`take_error`] (rsmpi's own calls return
//!   no error).
//!
//! Each call is the C call of the same name on the communicator's handle, so rsmpi and this
//! crate see the same communicators. Their semantics are the C library's (the project's
//! semantics page, and `mpi.h`).

use std::cell::Cell;
use std::ffi::c_int;
use std::fmt;

use mpi::ffi;
use mpi::raw::FromRaw;
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::Communicator;

/// A rank is alive (in a query: the ranks that are).
pub const OK: c_int = ffi::MPI_RANK_STATE_OK as c_int;
/// A rank failed and is in this view but not (yet) in the global view G.
pub const FAILED: c_int = ffi::MPI_RANK_STATE_FAILED as c_int;
/// A rank failed and is recognized in G: communication with it completes as with
/// `MPI_PROC_NULL`.
pub const NULL: c_int = ffi::MPI_RANK_STATE_NULL as c_int;
/// Modifier: the rank entered the view at its latest update.
pub const NEW: c_int = ffi::MPI_RANK_STATE_MOD_NEW as c_int;
/// Modifier: the rank was in the view before its latest update.
pub const OLD: c_int = ffi::MPI_RANK_STATE_MOD_OLD as c_int;

/// An error class of the C library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    code: c_int,
}

impl Error {
    /// A C call's return code as a result: `Ok` for `MPI_SUCCESS`.
    pub fn check(code: c_int) -> Result<(), Error> {
        if code == ffi::MPI_SUCCESS as c_int {
            Ok(())
        } else {
            Err(Error { code })
        }
    }

    /// The error code the call returned.
    pub fn code(self) -> c_int {
        self.code
    }

    /// Its error class (`MPI_Error_class`).
    pub fn class(self) -> c_int {
        let mut class = self.code;
        // SAFETY: `class` is a live, writable int for the duration of the call.
        unsafe { ffi::MPI_Error_class(self.code, &mut class) };
        class
    }

    /// A peer failed (`MPIX_ERR_PROC_FAILED`) or a wildcard receive is pending on an
    /// unacknowledged failure (`MPIX_ERR_PROC_FAILED_PENDING`).
    pub fn is_proc_failed(self) -> bool {
        let class = self.class();
        class == ffi::MPIX_ERR_PROC_FAILED as c_int
            || class == ffi::MPIX_ERR_PROC_FAILED_PENDING as c_int
    }

    /// The communicator was revoked (`MPIX_ERR_REVOKED`).
    pub fn is_revoked(self) -> bool {
        self.class() == ffi::MPIX_ERR_REVOKED as c_int
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; ffi::MPI_MAX_ERROR_STRING as usize];
        let mut len: c_int = 0;
        // SAFETY: `text` has MPI_MAX_ERROR_STRING writable bytes, as the call requires, and
        // `len` is a writable int.
        let rc = unsafe { ffi::MPI_Error_string(self.code, text.as_mut_ptr().cast(), &mut len) };
        if rc != ffi::MPI_SUCCESS as c_int {
            return write!(f, "MPI error {}", self.code);
        }
        let len = usize::try_from(len).unwrap_or(0).min(text.len());
        write!(f, "{}", String::from_utf8_lossy(&text[..len]))
    }
}

impl std::error::Error for Error {}

/// One rank and its state in a failure view: a state bit ([`OK`], [`FAILED`], [`NULL`]) or'ed
/// with a modifier ([`NEW`], [`OLD`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankInfo {
    /// The rank in the communicator.
    pub rank: Rank,
    /// Its state in the view.
    pub state: c_int,
}

thread_local! {
    static LAST_ERROR: Cell<Option<Error>> = const { Cell::new(None) };
}

/// The error handler [`FaultTolerant::record_errors`] installs: keeps the error for
/// [`take_error`].
///
/// Declared with the two parameters MPI passes to a communicator's error handler; the type
/// MPI declares adds C varargs (`...`), which MPI never passes.
extern "C" fn record(_comm: *mut ffi::MPI_Comm, code: *mut c_int) {
    if code.is_null() {
        return;
    }
    // SAFETY: the library calls a handler with a pointer to the error code of the failed call,
    // live for the duration of the call (checked for NULL above).
    let code = unsafe { *code };
    LAST_ERROR.with(|last| last.set(Some(Error { code })));
}

/// The error an rsmpi call on a communicator with [`FaultTolerant::record_errors`] raised on
/// this thread since the previous `take_error`, if any; the first one is kept, later ones
/// replace it (so after a failure, check after each call that matters).
pub fn take_error() -> Option<Error> {
    LAST_ERROR.with(Cell::take)
}

/// Runs a C call that writes one int.
fn out_int(call: impl FnOnce(*mut c_int) -> c_int) -> Result<c_int, Error> {
    let mut value: c_int = 0;
    Error::check(call(&mut value))?;
    Ok(value)
}

/// The ranks in `comm` of the members of `group`, in the group's order; frees the group.
fn ranks_of(comm: ffi::MPI_Comm, mut group: ffi::MPI_Group) -> Result<Vec<Rank>, Error> {
    let mut comm_group = ffi::MPI_Group(0);
    // SAFETY: `comm_group` is a writable handle; `comm` is a live communicator handle.
    Error::check(unsafe { ffi::MPI_Comm_group(comm, &mut comm_group) })?;
    // SAFETY: `group` is a live group handle and the size a writable int.
    let size = out_int(|n| unsafe { ffi::MPI_Group_size(group, n) })?;
    let members: Vec<c_int> = (0..size).collect();
    let mut ranks: Vec<c_int> = vec![0; members.len()];
    // SAFETY: `members` and `ranks` hold `size` ints each; both groups are live handles.
    let rc = unsafe {
        ffi::MPI_Group_translate_ranks(
            group,
            size,
            members.as_ptr(),
            comm_group,
            ranks.as_mut_ptr(),
        )
    };
    // SAFETY: both are live group handles, freed once each.
    unsafe {
        ffi::MPI_Group_free(&mut group);
        ffi::MPI_Group_free(&mut comm_group);
    }
    Error::check(rc)?;
    Ok(ranks)
}

/// A view accessor (`MPI_Comm_get_state_local` / `_global`): every matching entry.
fn state(
    comm: ffi::MPI_Comm,
    mask: c_int,
    count: unsafe extern "C" fn(ffi::MPI_Comm, c_int, *mut c_int) -> c_int,
    get: unsafe extern "C" fn(
        ffi::MPI_Comm,
        c_int,
        c_int,
        *mut c_int,
        *mut ffi::MPI_Rank_info,
    ) -> c_int,
) -> Result<Vec<RankInfo>, Error> {
    // SAFETY: `comm` is a live handle and `n` a writable int.
    let n = out_int(|n| unsafe { count(comm, mask, n) })?;
    let mut infos = vec![ffi::MPI_Rank_info { rank: 0, state: 0 }; n.max(0) as usize];
    let mut written: c_int = 0;
    // SAFETY: `infos` holds `n` entries, the `incount` the call is given; `written` is a
    // writable int.
    Error::check(unsafe { get(comm, mask, n, &mut written, infos.as_mut_ptr()) })?;
    infos.truncate(written.max(0) as usize);
    Ok(infos
        .into_iter()
        .map(|info| RankInfo {
            rank: info.rank,
            state: info.state,
        })
        .collect())
}

/// runthrough's fault-tolerant calls on an rsmpi communicator.
///
/// Errors come back as [`Error`] only when the communicator's error handler returns errors:
/// call [`set_errors_return`](Self::set_errors_return) or
/// [`record_errors`](Self::record_errors) first (rsmpi's default, MPI's
/// `MPI_ERRORS_ARE_FATAL`, ends the process at the first error). Communicators made from it
/// (dup, split, [`shrink`](Self::shrink)) inherit the handler.
pub trait FaultTolerant: Communicator {
    /// `MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)`.
    fn set_errors_return(&self) -> Result<(), Error> {
        // SAFETY: a live communicator and a predefined error handler.
        Error::check(unsafe {
            ffi::MPI_Comm_set_errhandler(
                self.as_raw(),
                ffi::MPI_Errhandler(ffi::MPI_ERRORS_RETURN as c_int),
            )
        })
    }

    /// Installs an error handler that keeps each error for [`take_error`] and lets the call
    /// return: the way to learn that an rsmpi call (which returns nothing) failed.
    fn record_errors(&self) -> Result<(), Error> {
        // SAFETY: the library calls a communicator's error handler with exactly two arguments
        // (the communicator and the error code), never with varargs; on the C ABI a function
        // of those two parameters is called correctly through the type with `...`, which adds
        // only what a variadic callee would read. `record` has that ABI (`extern "C"`).
        let function: ffi::MPI_Comm_errhandler_function = Some(unsafe {
            std::mem::transmute::<
                extern "C" fn(*mut ffi::MPI_Comm, *mut c_int),
                unsafe extern "C" fn(*mut ffi::MPI_Comm, *mut c_int, ...),
            >(record)
        });
        let mut handler = ffi::MPI_Errhandler(ffi::MPI_ERRHANDLER_NULL as c_int);
        // SAFETY: `handler` is a writable handle.
        Error::check(unsafe { ffi::MPI_Comm_create_errhandler(function, &mut handler) })?;
        // SAFETY: a live communicator and the handler just made.
        let rc = unsafe { ffi::MPI_Comm_set_errhandler(self.as_raw(), handler) };
        // SAFETY: the communicator holds its own reference to the handler.
        unsafe { ffi::MPI_Errhandler_free(&mut handler) };
        Error::check(rc)
    }

    /// `MPI_Comm_validate_local`: adds the failures this rank knows to its local view L (so
    /// wildcard receives no longer report them); the number of failed ranks in L.
    fn validate_local(&self) -> Result<c_int, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|n| unsafe { ffi::MPI_Comm_validate_local(self.as_raw(), n) })
    }

    /// `MPI_Comm_validate_global`: collective and fault-tolerant; the survivors agree on the
    /// failures (the global view G) and collectives work again over the survivors. The number
    /// of failed ranks in G.
    fn validate_global(&self) -> Result<c_int, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|n| unsafe { ffi::MPI_Comm_validate_global(self.as_raw(), n) })
    }

    /// `MPI_Comm_get_num_state_local`: how many ranks of L match `mask` (an OR of the state
    /// and modifier bits; no state bit means `FAILED | NULL`).
    fn num_state_local(&self, mask: c_int) -> Result<c_int, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|n| unsafe { ffi::MPI_Comm_get_num_state_local(self.as_raw(), mask, n) })
    }

    /// `MPI_Comm_get_num_state_global`: as [`num_state_local`](Self::num_state_local), in G.
    fn num_state_global(&self, mask: c_int) -> Result<c_int, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|n| unsafe { ffi::MPI_Comm_get_num_state_global(self.as_raw(), mask, n) })
    }

    /// `MPI_Comm_get_state_local`: the ranks of L that match `mask`, with their states.
    fn state_local(&self, mask: c_int) -> Result<Vec<RankInfo>, Error> {
        state(
            self.as_raw(),
            mask,
            ffi::MPI_Comm_get_num_state_local,
            ffi::MPI_Comm_get_state_local,
        )
    }

    /// `MPI_Comm_get_state_global`: the ranks of G that match `mask`, with their states.
    fn state_global(&self, mask: c_int) -> Result<Vec<RankInfo>, Error> {
        state(
            self.as_raw(),
            mask,
            ffi::MPI_Comm_get_num_state_global,
            ffi::MPI_Comm_get_state_global,
        )
    }

    /// `MPIX_Comm_revoke`: every later non-local call on the communicator, at every rank,
    /// fails with `MPIX_ERR_REVOKED` (but agree, shrink and validate_global).
    fn revoke(&self) -> Result<(), Error> {
        // SAFETY: a live communicator.
        Error::check(unsafe { ffi::MPIX_Comm_revoke(self.as_raw()) })
    }

    /// `MPIX_Comm_is_revoked`.
    fn is_revoked(&self) -> Result<bool, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|flag| unsafe { ffi::MPIX_Comm_is_revoked(self.as_raw(), flag) })
            .map(|flag| flag != 0)
    }

    /// `MPIX_Comm_shrink`: a new communicator of the survivors, in their old order (an rsmpi
    /// communicator, freed when dropped). Collective and fault-tolerant.
    fn shrink(&self) -> Result<SimpleCommunicator, Error> {
        let mut raw = ffi::MPI_Comm(ffi::MPI_COMM_NULL as c_int);
        // SAFETY: a live communicator and a writable handle.
        Error::check(unsafe { ffi::MPIX_Comm_shrink(self.as_raw(), &mut raw) })?;
        // SAFETY: `raw` is the new intra-communicator the call made, owned by nobody else.
        Ok(unsafe { SimpleCommunicator::from_raw(raw) })
    }

    /// `MPIX_Comm_agree`: the bitwise AND of `flag` over the ranks that contribute, the same
    /// at every rank that returns. `MPIX_ERR_PROC_FAILED` when a participant failed and not
    /// every contributor had acknowledged it ([`failure_ack`](Self::failure_ack) and agree
    /// again).
    fn agree(&self, flag: c_int) -> Result<c_int, Error> {
        let mut flag = flag;
        // SAFETY: a live communicator and a writable int.
        Error::check(unsafe { ffi::MPIX_Comm_agree(self.as_raw(), &mut flag) })?;
        Ok(flag)
    }

    /// `MPIX_Comm_failure_ack`: acknowledges every failure this rank knows now.
    fn failure_ack(&self) -> Result<(), Error> {
        // SAFETY: a live communicator.
        Error::check(unsafe { ffi::MPIX_Comm_failure_ack(self.as_raw()) })
    }

    /// `MPIX_Comm_failure_get_acked`: the acknowledged failed ranks, in rank order.
    fn failure_get_acked(&self) -> Result<Vec<Rank>, Error> {
        let mut group = ffi::MPI_Group(ffi::MPI_GROUP_NULL as c_int);
        // SAFETY: a live communicator and a writable handle.
        Error::check(unsafe { ffi::MPIX_Comm_failure_get_acked(self.as_raw(), &mut group) })?;
        ranks_of(self.as_raw(), group)
    }

    /// `MPIX_Comm_get_failed`: the failed ranks this rank knows, in the order it learned of
    /// them.
    fn get_failed(&self) -> Result<Vec<Rank>, Error> {
        let mut group = ffi::MPI_Group(ffi::MPI_GROUP_NULL as c_int);
        // SAFETY: a live communicator and a writable handle.
        Error::check(unsafe { ffi::MPIX_Comm_get_failed(self.as_raw(), &mut group) })?;
        ranks_of(self.as_raw(), group)
    }

    /// `MPIX_Comm_ack_failed`: acknowledges the first `num_to_ack` failures of
    /// [`get_failed`](Self::get_failed); the number acknowledged in all.
    fn ack_failed(&self, num_to_ack: c_int) -> Result<c_int, Error> {
        // SAFETY: a live communicator and a writable int.
        out_int(|n| unsafe { ffi::MPIX_Comm_ack_failed(self.as_raw(), num_to_ack, n) })
    }
}

impl<C: Communicator + ?Sized> FaultTolerant for C {}

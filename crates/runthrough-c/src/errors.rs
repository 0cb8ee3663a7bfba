// SPDX-License-Identifier: MIT OR Apache-2.0
//! Errors at the C boundary: the error class a call returns, the communicator's error handler
//! that reports it, and the panic guard every exported function runs in.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use runthrough::Error;

use crate::constants::*;
use crate::runtime::{lock, lock_state, with_runtime, Phase};

/// A failed call: its error class and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) class: c_int,
    pub(crate) message: String,
    /// The code a user error handler is called with when it is not `class`: for
    /// `MPI_ERR_IN_STATUS`, the first failed request's own class, as Open MPI passes it (ULFM
    /// programs' handlers look for `MPIX_ERR_PROC_FAILED` there).
    pub(crate) handler_code: Option<c_int>,
}

impl Failure {
    pub(crate) fn new(class: c_int, message: impl Into<String>) -> Self {
        Failure {
            class,
            message: message.into(),
            handler_code: None,
        }
    }

    /// `MPI_ERR_IN_STATUS` for a multiple completion call whose first failed request failed
    /// with `first` (its error is in its status; a user error handler gets `first`'s class).
    pub(crate) fn in_status(first: &Failure) -> Self {
        Failure {
            class: MPI_ERR_IN_STATUS,
            message: format!("a request failed: {}", first.message),
            handler_code: Some(first.class),
        }
    }

    /// The failure of a *blocking* call that may receive from `MPI_ANY_SOURCE` (`MPI_Recv`,
    /// `MPI_Probe`, `MPI_Sendrecv`): the runtime's `ProcFailedPending` (a failure this rank
    /// knows of and has not acknowledged; nothing was received) is `MPIX_ERR_PROC_FAILED`, as
    /// ULFM programs expect. A non-blocking request keeps `MPIX_ERR_PROC_FAILED_PENDING` and
    /// stays pending.
    pub(crate) fn blocking(error: Error) -> Self {
        match error {
            Error::ProcFailedPending => Failure::new(
                MPIX_ERR_PROC_FAILED,
                "a wildcard receive met a failure that is not acknowledged; nothing was \
                 received (MPIX_Comm_failure_ack or MPI_Comm_validate_local acknowledges it)",
            ),
            other => other.into(),
        }
    }

    /// A NULL pointer where the call needs one.
    pub(crate) fn null(what: &str) -> Self {
        Failure::new(MPI_ERR_ARG, format!("{what} is NULL"))
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            class: error.class() as c_int,
            message: error.to_string(),
            handler_code: None,
        }
    }
}

/// `MPI_Comm_errhandler_function`.
pub(crate) type UserHandler = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

/// What an error handler does.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Handler {
    /// `MPI_ERRORS_ARE_FATAL`: print the error and end the process.
    Fatal,
    /// `MPI_ERRORS_RETURN`: return the error class.
    Return,
    /// A handler made by `MPI_Comm_create_errhandler`: called, then the class is returned.
    User(UserHandler),
}

/// Runs the body of an exported function: catches a panic (reported as `MPI_ERR_INTERN`) and
/// reports a failure through the error handler of communicator `comm`.
pub(crate) fn boundary(comm: c_int, body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    guarded(
        |handler_comm| {
            *handler_comm = comm;
            body()
        },
        false,
    )
}

/// [`boundary`] for calls that learn on the way whose error handler reports them (a request's
/// communicator): `body` sets it, `MPI_COMM_WORLD` until it does. A request's communicator
/// may have been freed since the request started: its handler still reports the request's
/// errors (`Runtime::freed_handlers`).
pub(crate) fn boundary_on(body: impl FnOnce(&mut c_int) -> Result<(), Failure>) -> c_int {
    guarded(body, true)
}

/// [`boundary`] and [`boundary_on`]: `learned` says that `body` names the communicator of a
/// request rather than an argument.
fn guarded(body: impl FnOnce(&mut c_int) -> Result<(), Failure>, learned: bool) -> c_int {
    let mut comm = MPI_COMM_WORLD;
    match caught(|| body(&mut comm)) {
        Ok(()) => MPI_SUCCESS,
        Err(failure) => report(comm, failure, learned),
    }
}

/// Runs `body`, a panic in it turned into `MPI_ERR_INTERN`.
pub(crate) fn caught(body: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(Failure::new(
            MPI_ERR_INTERN,
            format!("internal error: {what}"),
        ))
    })
}

/// Reports `failure` through the error handler of `comm` (of `MPI_COMM_WORLD` when `comm` is not
/// a valid handle, or before initialization: `MPI_ERRORS_RETURN`) and returns its class.
pub(crate) fn raise(comm: c_int, failure: Failure) -> c_int {
    report(comm, failure, false)
}

/// [`raise`]; with `of_request`, a communicator freed while the request was pending reports
/// through the handler it had then.
fn report(comm: c_int, failure: Failure, of_request: bool) -> c_int {
    let (handler, handle, rank) = match &*lock_state() {
        Phase::Running(runtime) => {
            let freed = of_request
                .then(|| runtime.freed_handlers.get(&comm))
                .flatten();
            let (handle, handler) = match (runtime.comms.get(&comm), freed) {
                (Some(entry), _) => (comm, Some(entry.errhandler.1)),
                (None, Some(&handler)) => (comm, Some(handler)),
                (None, None) => (
                    MPI_COMM_WORLD,
                    runtime.comms.get(&MPI_COMM_WORLD).map(|e| e.errhandler.1),
                ),
            };
            (
                handler.unwrap_or(Handler::Fatal),
                handle,
                Some(runtime.world_rank),
            )
        }
        Phase::Before | Phase::Finalized => (Handler::Return, comm, None),
    };
    report_to(handler, handle, rank, failure)
}

/// Reports `failure` through `handler` (a user handler is given `handle`, the object's: a
/// communicator's or a window's); returns its class. `rank` names this rank in a fatal error's
/// message.
pub(crate) fn report_to(
    handler: Handler,
    handle: c_int,
    rank: Option<u32>,
    failure: Failure,
) -> c_int {
    match handler {
        Handler::Return => failure.class,
        Handler::Fatal => {
            stderr_line(format_args!(
                "runthrough rank {}: {} (error class {}); MPI_ERRORS_ARE_FATAL: exiting",
                rank.map_or_else(|| "?".into(), |r| r.to_string()),
                failure.message,
                failure.class
            ));
            std::process::exit(1)
        }
        Handler::User(function) => {
            let mut handle = handle;
            let mut code = failure.handler_code.unwrap_or(failure.class);
            // SAFETY: `function` was given to MPI_Comm_create_errhandler as an
            // `MPI_Comm_errhandler_function`; it is called as MPI calls it, with pointers to
            // two live ints, and without the library's lock (it may call MPI functions).
            unsafe { function(&mut handle, &mut code) };
            failure.class
        }
    }
}

/// Writes a line on standard error; never panics (a closed stderr is ignored).
pub(crate) fn stderr_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The description of an error class (`MPI_Error_string`).
pub(crate) fn class_string(class: c_int) -> Option<&'static str> {
    Some(match class {
        MPI_SUCCESS => "MPI_SUCCESS: no error",
        MPI_ERR_BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        MPI_ERR_COUNT => "MPI_ERR_COUNT: invalid count argument",
        MPI_ERR_TYPE => "MPI_ERR_TYPE: invalid datatype",
        MPI_ERR_TAG => "MPI_ERR_TAG: invalid tag",
        MPI_ERR_COMM => "MPI_ERR_COMM: invalid or freed communicator",
        MPI_ERR_RANK => "MPI_ERR_RANK: invalid rank",
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid reduction operation",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument",
        MPI_ERR_UNKNOWN => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: other error",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal error",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code is in the status",
        MPI_ERR_DIMS => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid attribute key",
        MPI_ERR_WIN => "MPI_ERR_WIN: invalid or freed window",
        MPI_ERR_BASE => "MPI_ERR_BASE: not memory of MPI_Alloc_mem",
        MPI_ERR_NO_MEM => "MPI_ERR_NO_MEM: the memory could not be allocated",
        MPI_ERR_RMA_SYNC => "MPI_ERR_RMA_SYNC: a one-sided call out of its epoch order",
        MPI_ERR_RMA_RANGE => "MPI_ERR_RMA_RANGE: outside the target's window",
        MPI_ERR_CONVERSION => "MPI_ERR_CONVERSION: a value the data representation cannot hold",
        MPI_ERR_TOPOLOGY => "MPI_ERR_TOPOLOGY: the communicator has no such topology",
        MPI_ERR_INFO => "MPI_ERR_INFO: invalid or freed info object, or MPI_INFO_ENV changed",
        MPI_ERR_INFO_KEY => "MPI_ERR_INFO_KEY: info key empty or longer than MPI_MAX_INFO_KEY - 1",
        MPI_ERR_INFO_VALUE => "MPI_ERR_INFO_VALUE: info value longer than MPI_MAX_INFO_VAL - 1",
        MPI_ERR_INFO_NOKEY => "MPI_ERR_INFO_NOKEY: no such key in the info object",
        MPI_ERR_SIZE => "MPI_ERR_SIZE: the output array is smaller than the number of matches",
        MPI_ERR_SPAWN => "MPI_ERR_SPAWN: the processes could not be spawned",
        MPIX_ERR_PROC_FAILED => "MPIX_ERR_PROC_FAILED: a process has failed",
        MPIX_ERR_PROC_FAILED_PENDING => {
            "MPIX_ERR_PROC_FAILED_PENDING: a wildcard receive may depend on an \
             unacknowledged failure"
        }
        MPIX_ERR_REVOKED => "MPIX_ERR_REVOKED: the communicator has been revoked",
        RTX_ERR_NOT_COMMITTED => {
            "RTX_ERR_NOT_COMMITTED: the checkpoint or recovery did not complete at every rank; \
             the last committed checkpoint stands"
        }
        RTX_ERR_DATA_LOST => {
            "RTX_ERR_DATA_LOST: a slot is lost: its owner and every rank holding a copy failed"
        }
        _ => return None,
    })
}

/// The error classes and codes the program added (`MPI_Add_error_class`, `_code`), above
/// `MPI_ERR_LASTCODE`: each added code's class (an added class is its own) and its string.
struct Added {
    class_of: BTreeMap<c_int, c_int>,
    strings: BTreeMap<c_int, String>,
    last: c_int,
}

static ADDED: Mutex<Added> = Mutex::new(Added {
    class_of: BTreeMap::new(),
    strings: BTreeMap::new(),
    last: MPI_ERR_LASTCODE,
});

/// The largest error code in use (the `MPI_LASTUSEDCODE` attribute).
pub(crate) fn last_used_code() -> c_int {
    lock(&ADDED).last
}

/// The class of an error code: a predefined class is its own, an added code its class.
fn class_of(errorcode: c_int) -> Result<c_int, Failure> {
    if class_string(errorcode).is_some() {
        return Ok(errorcode);
    }
    lock(&ADDED)
        .class_of
        .get(&errorcode)
        .copied()
        .ok_or_else(|| Failure::new(MPI_ERR_ARG, format!("{errorcode} is not an error code")))
}

/// A new code of class `class` (itself for a new class).
fn add_code(class: Option<c_int>) -> Result<c_int, Failure> {
    let mut added = lock(&ADDED);
    let code = added
        .last
        .checked_add(1)
        .ok_or_else(|| Failure::new(MPI_ERR_INTERN, "no error codes are left"))?;
    added.last = code;
    added.class_of.insert(code, class.unwrap_or(code));
    Ok(code)
}

/// `MPI_Error_class`: a predefined code is its own class; a code added by
/// `MPI_Add_error_code` has the class it was added to. Anything else is `MPI_ERR_ARG`.
///
/// # Safety
/// `errorclass` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`; the caller passes a writable int.
        let errorclass = unsafe { out(errorclass, "errorclass")? };
        errorclass.write(class_of(errorcode)?);
        Ok(())
    })
}

/// `MPI_Add_error_class` (MPI-4.0 §9.5): a new class, above `MPI_ERR_LASTCODE` (and every
/// code added before); `MPI_LASTUSEDCODE` follows. Local; works at any time, as
/// `MPI_Error_class` does.
///
/// # Safety
/// `errorclass` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let errorclass = unsafe { out(errorclass, "errorclass")? };
        errorclass.write(add_code(None)?);
        Ok(())
    })
}

/// `MPI_Add_error_code` (MPI-4.0 §9.5): a new code of `errorclass` (predefined or added;
/// `MPI_ERR_ARG` otherwise).
///
/// # Safety
/// `errorcode` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let errorcode = unsafe { out(errorcode, "errorcode")? };
        if class_of(errorclass)? != errorclass {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("{errorclass} is an error code, not a class"),
            ));
        }
        errorcode.write(add_code(Some(errorclass))?);
        Ok(())
    })
}

/// `MPI_Add_error_string` (MPI-4.0 §9.5): the string `MPI_Error_string` gives for an added
/// class or code (set again, replaced). A predefined code, an unknown one, or a string of
/// `MPI_MAX_ERROR_STRING` bytes or more is `MPI_ERR_ARG`.
///
/// # Safety
/// `string` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if string.is_null() {
            return Err(Failure::null("string"));
        }
        // SAFETY: not NULL; by the caller's contract a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(string) };
        if text.to_bytes().len() >= MPI_MAX_ERROR_STRING as usize {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!(
                    "an error string of {} bytes (at most {})",
                    text.to_bytes().len(),
                    MPI_MAX_ERROR_STRING - 1
                ),
            ));
        }
        let mut added = lock(&ADDED);
        if !added.class_of.contains_key(&errorcode) {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("{errorcode} is not an error class or code added by the program"),
            ));
        }
        added
            .strings
            .insert(errorcode, text.to_string_lossy().into_owned());
        Ok(())
    })
}

/// `MPI_Error_string`: writes the class's description (for an added class or code, the string
/// `MPI_Add_error_string` gave it, or the empty string), NUL-terminated, at most
/// `MPI_MAX_ERROR_STRING` bytes with the NUL.
///
/// # Safety
/// `string` is NULL or points at `MPI_MAX_ERROR_STRING` writable bytes; `resultlen` is NULL or
/// points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let text = match class_string(errorcode) {
            Some(text) => text.to_string(),
            None => {
                class_of(errorcode)?;
                let added = lock(&ADDED);
                added.strings.get(&errorcode).cloned().unwrap_or_default()
            }
        };
        // SAFETY: forwarded contract.
        unsafe { write_string(string, MPI_MAX_ERROR_STRING, &text, resultlen, "string") }
    })
}

/// Writes `text` as a NUL-terminated C string of at most `capacity` bytes with the NUL
/// (truncated to fit) and its length without the NUL in `*resultlen`: MPI's string outputs.
///
/// # Safety
/// `string` is NULL or points at `capacity` writable bytes; `resultlen` is NULL or points at a
/// writable int.
pub(crate) unsafe fn write_string(
    string: *mut c_char,
    capacity: c_int,
    text: &str,
    resultlen: *mut c_int,
    what: &str,
) -> Result<(), Failure> {
    if string.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: checked for NULL by `out`.
    let resultlen = unsafe { out(resultlen, "resultlen")? };
    let bytes = text.as_bytes();
    let len = bytes.len().min(capacity.max(1) as usize - 1);
    // SAFETY: `string` is not NULL and, by the caller's contract, holds `capacity` bytes; we
    // write `len + 1 <= capacity` of them.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), string.cast::<u8>(), len);
        string.add(len).write(0);
    }
    resultlen.write(len as c_int);
    Ok(())
}

/// `MPI_Comm_set_errhandler`.
#[no_mangle]
pub extern "C" fn MPI_Comm_set_errhandler(comm: MPI_Comm, errhandler: c_int) -> c_int {
    boundary(comm, || {
        with_runtime(|runtime| {
            let handler = *runtime.errhandlers.get(&errhandler).ok_or_else(|| {
                Failure::new(
                    MPI_ERR_ARG,
                    format!("invalid or freed error handler {errhandler}"),
                )
            })?;
            runtime.comm_mut(comm)?.errhandler = (errhandler, handler);
            Ok(())
        })
    })
}

/// `MPI_Comm_get_errhandler`: a new reference to the communicator's error handler, which the
/// program frees with `MPI_Errhandler_free` (MPI-4.0 §9.3.1). A user handler freed by the
/// program while a communicator still uses it is given back under its handle.
///
/// # Safety
/// `errhandler` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_errhandler(comm: MPI_Comm, errhandler: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(errhandler, "errhandler")? };
        let handle = with_runtime(|runtime| {
            let (handle, handler) = runtime.comm(comm)?.errhandler;
            if !predefined_errhandler(handle) {
                runtime.errhandlers.entry(handle).or_insert(handler);
                *refs().entry(handle).or_insert(0) += 1;
            }
            Ok(handle)
        })?;
        slot.write(handle);
        Ok(())
    })
}

/// A new reference to error handler `handle` (what `MPI_*_get_errhandler` hands out), kept
/// with `handler` while the program holds it.
pub(crate) fn reference_errhandler(
    runtime: &mut crate::runtime::Runtime,
    handle: c_int,
    handler: Handler,
) {
    if !predefined_errhandler(handle) {
        runtime.errhandlers.entry(handle).or_insert(handler);
        *refs().entry(handle).or_insert(0) += 1;
    }
}

/// `MPI_Errhandler_set`: MPI-1's name of `MPI_Comm_set_errhandler` (removed from MPI-3.0, kept
/// for old programs).
#[no_mangle]
pub extern "C" fn MPI_Errhandler_set(comm: MPI_Comm, errhandler: c_int) -> c_int {
    MPI_Comm_set_errhandler(comm, errhandler)
}

/// `MPI_Errhandler_get`: MPI-1's name of `MPI_Comm_get_errhandler`.
///
/// # Safety
/// As `MPI_Comm_get_errhandler`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_get(comm: MPI_Comm, errhandler: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPI_Comm_get_errhandler(comm, errhandler) }
}

/// The references to each user error handler (see [`MPI_Errhandler_free`]), apart from the
/// runtime to keep it small; taken only while the runtime's lock is held, so in one order.
static REFS: std::sync::Mutex<std::collections::BTreeMap<c_int, usize>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn refs() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<c_int, usize>> {
    REFS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `MPI_ERRORS_ARE_FATAL`, `MPI_ERRORS_RETURN` or `MPI_ERRORS_ABORT`.
fn predefined_errhandler(handle: c_int) -> bool {
    handle == MPI_ERRORS_ARE_FATAL || handle == MPI_ERRORS_RETURN || handle == MPI_ERRORS_ABORT
}

/// `MPI_Comm_create_errhandler`.
///
/// # Safety
/// `function` is NULL or an `MPI_Comm_errhandler_function`; `errhandler` is NULL or points at a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_errhandler(
    function: Option<UserHandler>,
    errhandler: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let function = function.ok_or_else(|| Failure::null("function"))?;
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(errhandler, "errhandler")? };
        let handle = with_runtime(|runtime| {
            let handle = runtime.next_handle();
            runtime.errhandlers.insert(handle, Handler::User(function));
            refs().insert(handle, 1);
            Ok(handle)
        })?;
        slot.write(handle);
        Ok(())
    })
}

/// `MPI_Errhandler_free` (MPI-4.0 §9.3.4): releases one reference to the handler and sets the
/// handle to `MPI_ERRHANDLER_NULL`. `MPI_Comm_create_errhandler` and each
/// `MPI_Comm_get_errhandler` give a reference; a user handler goes when its last one does, and
/// communicators that use it keep it. A predefined handler (`MPI_ERRORS_ARE_FATAL`,
/// `MPI_ERRORS_RETURN`, as `MPI_Comm_get_errhandler` returns them) is freed as any reference is
/// and stays predefined.
///
/// # Errors
/// `MPI_ERR_ARG` for `MPI_ERRHANDLER_NULL`, a freed or an invalid handle, or a NULL pointer.
///
/// # Safety
/// `errhandler` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_free(errhandler: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(errhandler, "errhandler")? };
        let handle = slot.read();
        if !predefined_errhandler(handle) {
            with_runtime(|runtime| {
                let mut all = refs();
                let refs = all.get_mut(&handle).ok_or_else(|| {
                    Failure::new(
                        MPI_ERR_ARG,
                        format!("invalid or freed error handler {handle}"),
                    )
                })?;
                *refs -= 1;
                if *refs == 0 {
                    all.remove(&handle);
                    runtime.errhandlers.remove(&handle);
                }
                Ok(())
            })?;
        }
        slot.write(MPI_ERRHANDLER_NULL);
        Ok(())
    })
}

/// An output argument: a pointer C passed, checked for NULL.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    pub(crate) fn write(&self, value: T) {
        // SAFETY: `out` checked that the pointer is not NULL; that it points at a writable `T`
        // is the C caller's part of the contract (the argument's declared type).
        unsafe { self.0.write_unaligned(value) }
    }

    pub(crate) fn read(&self) -> T {
        // SAFETY: as `write`: not NULL, and by contract a readable `T`.
        unsafe { self.0.read_unaligned() }
    }
}

impl Out<MPI_Status> {
    /// Writes `status` but its `MPI_ERROR`, which the program's status keeps: calls that
    /// complete one operation do not set it (MPI-4.0 §3.2.5; they return the error).
    pub(crate) fn write_but_error(&self, status: MPI_Status) {
        let pointer = self.0;
        // SAFETY: as `write`: not NULL, and by contract a writable `MPI_Status`; each field is
        // written in place, unaligned, and `MPI_ERROR` is neither read nor written.
        unsafe {
            std::ptr::addr_of_mut!((*pointer).MPI_SOURCE).write_unaligned(status.MPI_SOURCE);
            std::ptr::addr_of_mut!((*pointer).MPI_TAG).write_unaligned(status.MPI_TAG);
            std::ptr::addr_of_mut!((*pointer).rt_count_bytes)
                .write_unaligned(status.rt_count_bytes);
            std::ptr::addr_of_mut!((*pointer).rt_cancelled).write_unaligned(status.rt_cancelled);
        }
    }
}

/// An output pointer that may be NULL (an argument the program may ignore): `None` for NULL,
/// with no error made (this runs on every receive given `MPI_STATUS_IGNORE`).
///
/// # Safety
/// As [`out`].
pub(crate) unsafe fn optional_out<T>(pointer: *mut T) -> Option<Out<T>> {
    (!pointer.is_null()).then_some(Out(pointer))
}

/// Checks an output pointer for NULL (`MPI_ERR_ARG`).
///
/// # Safety
/// `pointer` is NULL or points at a `T` that may be written (and read) for as long as the
/// returned `Out` is used.
pub(crate) unsafe fn out<T>(pointer: *mut T, what: &str) -> Result<Out<T>, Failure> {
    if pointer.is_null() {
        Err(Failure::null(what))
    } else {
        Ok(Out(pointer))
    }
}

#[allow(non_camel_case_types)]
type MPI_Comm = c_int;

/// `MPI_Comm_call_errhandler`: reports `errorcode` through `comm`'s error handler (which may end
/// the process, `MPI_ERRORS_ARE_FATAL`, or call the program's handler) and returns
/// `MPI_SUCCESS` when the handler returns, as MPI says. An invalid handle goes to
/// `MPI_COMM_WORLD`'s handler as `MPI_ERR_COMM`.
#[no_mangle]
pub extern "C" fn MPI_Comm_call_errhandler(comm: c_int, errorcode: c_int) -> c_int {
    let valid = crate::runtime::with_runtime(|runtime| runtime.comm(comm).map(drop));
    match valid {
        Ok(()) => {
            let message = format!("error code {errorcode} raised by MPI_Comm_call_errhandler");
            raise(comm, Failure::new(errorcode, message));
            MPI_SUCCESS
        }
        Err(failure) => raise(comm, failure),
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("errors.rs");

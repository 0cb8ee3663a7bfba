// SPDX-License-Identifier: MIT OR Apache-2.0
//! Initialization, finalization, abort and the clock.

use std::ffi::c_char;
use std::os::raw::c_int;

use crate::constants::*;
use crate::errors::{boundary, out, stderr_line, write_string, Failure};
use crate::runtime::{agreement_comm_of, lock_state, with_runtime, Phase, Runtime};

/// `MPI_Init`: bootstraps this rank from its launcher (rtrun, or a PMI launcher such as Hydra's
/// `mpiexec` or `srun`, through `runthrough::init`); a program started by no launcher runs as
/// a singleton (a world of one rank), as MPI allows. The arguments are not used and may be
/// NULL.
///
/// A bootstrap that fails (a launcher's variables that do not parse, a launcher that cannot be
/// reached, a bad `RT_*` setting) is fatal, as under MPI's default `MPI_ERRORS_ARE_FATAL`: one
/// line on standard error and exit status 1. The program never runs on without a world.
///
/// # Errors
/// `MPI_ERR_OTHER` when the library is already initialized or finalized (through
/// `MPI_COMM_WORLD`'s error handler).
#[no_mangle]
pub extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    let initialized = boundary(MPI_COMM_NULL, initialize);
    if initialized != MPI_SUCCESS {
        return initialized;
    }
    boundary(MPI_COMM_WORLD, join_parents)
}

/// A process started by `MPI_Comm_spawn`: its part of the parents' call, the intercommunicator
/// to them (`MPI_Comm_get_parent`). A parent's death makes it fail here as at the parents.
fn join_parents() -> Result<(), Failure> {
    let parents = with_runtime(|runtime| Ok(runtime.universe.world().parent()))?;
    if let Some(parents) = parents {
        let handle = crate::spawn::install(&parents, false, MPI_COMM_WORLD)?;
        with_runtime(|runtime| {
            runtime.parent = Some(handle);
            Ok(())
        })?;
    }
    Ok(())
}

fn initialize() -> Result<(), Failure> {
    let mut phase = lock_state();
    if !matches!(*phase, Phase::Before) {
        return Err(Failure::new(
            MPI_ERR_OTHER,
            "MPI_Init called twice, or after MPI_Finalize",
        ));
    }
    let initial = match initial_errhandler() {
        Ok(initial) => initial,
        Err(error) => {
            drop(phase);
            stderr_line(format_args!(
                "runthrough: MPI_Init failed: {error}; MPI_ERRORS_ARE_FATAL: exiting"
            ));
            std::process::exit(1)
        }
    };
    let universe = match runthrough::init_or_singleton() {
        Ok(universe) => universe,
        Err(error) => {
            drop(phase); // exit runs the program's atexit handlers, which may call MPI
            stderr_line(format_args!(
                "runthrough: MPI_Init failed: {error}; MPI_ERRORS_ARE_FATAL: exiting"
            ));
            std::process::exit(1)
        }
    };
    // The universe lives as long as the process: its world is MPI_COMM_WORLD, and MPI_Finalize
    // is the fault-tolerant agreement that ends the rank's part in the job.
    let universe: &'static runthrough::Universe = Box::leak(Box::new(universe));
    let mut runtime = Runtime::new(universe);
    let start_with = match initial {
        "mpi_errors_return" => Some((MPI_ERRORS_RETURN, crate::errors::Handler::Return)),
        "mpi_errors_abort" => Some((MPI_ERRORS_ABORT, crate::errors::Handler::Fatal)),
        _ => None,
    };
    if let Some(handler) = start_with {
        for comm in [MPI_COMM_WORLD, MPI_COMM_SELF] {
            if let Ok(entry) = runtime.comm_mut(comm) {
                entry.errhandler = handler;
            }
        }
    }
    *phase = Phase::Running(Box::new(runtime));
    // The library is initialized once per process, so this is set at most once.
    let _ = MAIN_THREAD.set(std::thread::current().id());
    Ok(())
}

/// The error handler `MPI_COMM_WORLD` and `MPI_COMM_SELF` start with (MPI-4.0 §9.3), by
/// MPI's name: `RT_INITIAL_ERRHANDLER` (`rtrun --initial-errhandler`), else
/// `mpi_errors_are_fatal`. `mpi_errors_abort` acts as `mpi_errors_are_fatal` here (the failing
/// process ends; the others learn of its death and run on).
///
/// # Errors
/// A value that is none of the three names.
pub(crate) fn initial_errhandler() -> Result<&'static str, runthrough::settings::SettingError> {
    match std::env::var("RT_INITIAL_ERRHANDLER") {
        Ok(value) => runthrough::settings::initial_errhandler(&value),
        Err(_) => Ok("mpi_errors_are_fatal"),
    }
}

/// The thread that initialized the library (`MPI_Is_thread_main`).
static MAIN_THREAD: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// The thread level the library provides: `MPI_THREAD_MULTIPLE`, whatever was required (every
/// call is thread-safe), after `MPI_Init` as after `MPI_Init_thread`.
const PROVIDED: c_int = MPI_THREAD_MULTIPLE;

/// `MPI_Init_thread`: as `MPI_Init`; the library is thread-safe, so it provides
/// `MPI_THREAD_MULTIPLE` whatever level is required. A `required` that is no thread level is
/// `MPI_ERR_ARG` (and the library stays uninitialized).
///
/// # Safety
/// `provided` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    let initialized = boundary(MPI_COMM_NULL, || {
        // SAFETY: checked for NULL by `out`.
        let provided = unsafe { out(provided, "provided")? };
        if !(MPI_THREAD_SINGLE..=MPI_THREAD_MULTIPLE).contains(&required) {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("required = {required} is not a thread level"),
            ));
        }
        initialize()?;
        provided.write(PROVIDED);
        Ok(())
    });
    if initialized != MPI_SUCCESS {
        return initialized;
    }
    boundary(MPI_COMM_WORLD, join_parents)
}

/// `MPI_Query_thread`: the thread level the library provides, `MPI_THREAD_MULTIPLE` (after
/// `MPI_Init` too: every call is thread-safe).
///
/// # Errors
/// `MPI_ERR_OTHER` before `MPI_Init` and after `MPI_Finalize`; `MPI_ERR_ARG` for a NULL
/// `provided`.
///
/// # Safety
/// `provided` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let provided = unsafe { out(provided, "provided")? };
        with_runtime(|_| Ok(()))?;
        provided.write(PROVIDED);
        Ok(())
    })
}

/// `MPI_Is_thread_main`: whether the calling thread is the one that called `MPI_Init` or
/// `MPI_Init_thread`.
///
/// # Errors
/// `MPI_ERR_OTHER` before `MPI_Init` and after `MPI_Finalize`; `MPI_ERR_ARG` for a NULL `flag`.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        with_runtime(|_| Ok(()))?;
        let main = MAIN_THREAD.get() == Some(&std::thread::current().id());
        flag.write(c_int::from(main));
        Ok(())
    })
}

/// `MPI_Initialized`.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    boundary(MPI_COMM_NULL, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        flag.write(c_int::from(!matches!(*lock_state(), Phase::Before)));
        Ok(())
    })
}

/// `MPI_Finalized`.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    boundary(MPI_COMM_NULL, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        flag.write(c_int::from(matches!(*lock_state(), Phase::Finalized)));
        Ok(())
    })
}

/// `MPI_Finalize`: deletes the attributes of `MPI_COMM_SELF`, then a fault-tolerant agreement over `MPI_COMM_WORLD` (`validate_global`), so that
/// every live rank has reached it before any leaves, and it never blocks on a failed rank. Then
/// the tables are dropped (communicators freed, pending requests withdrawn).
#[no_mangle]
pub extern "C" fn MPI_Finalize() -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // As MPI-4.0 §11.2.2 says, MPI_COMM_SELF's attributes are deleted first (their delete
        // callbacks run: mpi4py and other libraries hook their clean-up there).
        crate::attributes::delete_all((crate::attributes::Kind::Comm, MPI_COMM_SELF))?;
        let world = agreement_comm_of(MPI_COMM_WORLD)?;
        // Failures are its subject, not errors: it returns only ConcurrentCollective / Comm.
        world.get().validate_global()?;
        let old = std::mem::replace(&mut *lock_state(), Phase::Finalized);
        drop(old);
        Ok(())
    })
}

/// `MPI_Abort`: ends every rank of the job, whatever `comm` is, with `errorcode` as the job's
/// exit status (1 when it is not in 1..=255). Under rtrun every rank is ended and rtrun exits
/// with the code; under a launcher without rtrun's
/// control connection (Hydra's `mpiexec`, `srun`) and for a singleton, only this process ends,
/// with that exit status ([`runthrough::Universe::abort`]). Before `MPI_Init` or after
/// `MPI_Finalize` it ends this process. Never returns.
#[no_mangle]
pub extern "C" fn MPI_Abort(comm: c_int, errorcode: c_int) -> c_int {
    let (universe, rank) = match &*lock_state() {
        Phase::Running(runtime) => (Some(runtime.universe), Some(runtime.world_rank)),
        Phase::Before | Phase::Finalized => (None, None),
    };
    stderr_line(format_args!(
        "runthrough rank {}: MPI_Abort(comm {comm}, error code {errorcode}): ending the job",
        rank.map_or_else(|| "?".into(), |r| r.to_string())
    ));
    match universe {
        Some(universe) => universe.abort(errorcode),
        None => std::process::exit(if (1..=255).contains(&errorcode) {
            errorcode
        } else {
            1
        }),
    }
}

/// `MPI_Get_version` (MPI-4.0 §9.1.1): the version of the standard the library follows
/// (`MPI_VERSION`.`MPI_SUBVERSION`; it implements a subset, listed in docs/src/mpi-calls.md). May be
/// called before `MPI_Init` and after `MPI_Finalize`.
///
/// # Safety
/// `version` and `subversion` are NULL or point at writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    boundary(MPI_COMM_NULL, || {
        // SAFETY: checked for NULL by `out`.
        let version = unsafe { out(version, "version")? };
        // SAFETY: checked for NULL by `out`.
        let subversion = unsafe { out(subversion, "subversion")? };
        version.write(MPI_VERSION);
        subversion.write(MPI_SUBVERSION);
        Ok(())
    })
}

/// The text of `MPI_Get_library_version`.
fn library_version() -> String {
    format!(
        "runthrough {} (run-through stabilization and ULFM fault tolerance; MPI {MPI_VERSION}.{MPI_SUBVERSION} subset)",
        env!("CARGO_PKG_VERSION")
    )
}

/// `MPI_Get_library_version` (MPI-4.0 §9.1.1): the library's name and version, NUL-terminated,
/// at most `MPI_MAX_LIBRARY_VERSION_STRING` bytes with the NUL. May be called before
/// `MPI_Init` and after `MPI_Finalize`.
///
/// # Safety
/// `version` is NULL or points at `MPI_MAX_LIBRARY_VERSION_STRING` writable bytes; `resultlen`
/// is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_NULL, || {
        let text = library_version();
        let capacity = MPI_MAX_LIBRARY_VERSION_STRING;
        // SAFETY: forwarded contract.
        unsafe { write_string(version, capacity, &text, resultlen, "version") }
    })
}

/// `MPI_Wtime`: seconds since the Unix epoch (one clock for every rank of a host).
#[no_mangle]
pub extern "C" fn MPI_Wtime() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `MPI_Pcontrol` (MPI-4.0 §15.2.4): profiling control. No profiling library is attached to
/// this one, so every level is accepted and nothing changes; `MPI_SUCCESS`, before
/// `MPI_Init` too, as MPI allows.
///
/// The header declares it variadic, `int MPI_Pcontrol(const int level, ...)`, as MPI does;
/// stable Rust cannot define a variadic function, so it is defined with the one named argument.
/// The calling conventions of the platforms this library builds for (x86-64 System V, AArch64)
/// pass a variadic call's named arguments exactly as a fixed call's, and a callee that reads
/// no variadic argument is unaffected by the ones passed; `c/environment.c` calls it with and
/// without extra arguments.
#[no_mangle]
pub extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    let _ = level;
    MPI_SUCCESS
}

/// `MPI_Wtick`: the resolution of `MPI_Wtime`, which is the coarser of the clock's (the
/// system clock counts nanoseconds) and the spacing of doubles around the current time (about
/// 2.4e-7 s since 2004: seconds since 1970 in a double's 53 bits). Two readings of
/// `MPI_Wtime` differ by 0 or by at least this.
#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    let now = MPI_Wtime();
    (now.next_up() - now).max(1e-9)
}

/// `MPI_Get_processor_name`: this host's name (`/proc/sys/kernel/hostname`; `localhost` where
/// that cannot be read), so that ranks on different hosts tell them apart.
///
/// # Safety
/// `name` is NULL or points at `MPI_MAX_PROCESSOR_NAME` writable bytes; `resultlen` is NULL or
/// points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let host = host_name().unwrap_or_else(|| "localhost".into());
        // SAFETY: forwarded contract.
        unsafe { write_string(name, MPI_MAX_PROCESSOR_NAME, &host, resultlen, "name") }
    })
}

/// This host's name (`/proc/sys/kernel/hostname`), if it can be read.
pub(crate) fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

// The `PMPI_` names of this module's functions.
profiling_names!("environment.rs");

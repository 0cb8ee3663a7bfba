// SPDX-License-Identifier: MIT OR Apache-2.0
//! Process creation (MPI-4.0 §11.8): `MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`,
//! `MPI_Comm_get_parent`, `MPI_Comm_disconnect`, over the runtime's `Comm::spawn_programs`
//! (docs/src/semantics.md §8): under rtrun the new processes run the given programs; elsewhere
//! (Hydra, srun, a singleton) every parent gets `MPI_ERR_SPAWN`.
//!
//! The intercommunicator to the new ranks is an [`Inter`] like `MPI_Intercomm_create`'s: two
//! merges of the runtime's intercommunicator make the communicator that numbers the parents
//! first and the one that numbers the children first (both groups call them, in the same
//! order: the parents in `MPI_Comm_spawn`, the children in `MPI_Init`). The parents' group is
//! group A (its first member has the lower world rank: spawned ranks get new, higher ones).
//!
//! Info keys: `wdir` is the new processes' working directory; the other reserved keys
//! (`host`, `arch`, `path`, `file`, `soft`) and any others are ignored (one host; `PATH` is
//! searched as the shell would).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use runthrough::{InterComm, SpawnProgram};

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::intercomm::Inter;
use crate::runtime::{agreement_comm_of, with_runtime, CommBox};

/// Makes the C intercommunicator of a runtime one (see the module's docs); its handle.
/// `parents_side`: this rank is one of the parents. `errhandler_from`: the communicator whose
/// error handler it starts with.
pub(crate) fn install(
    inter: &InterComm,
    parents_side: bool,
    errhandler_from: c_int,
) -> Result<c_int, Failure> {
    // Parents pass `false` first: the parents-first communicator, then the children-first one.
    let parents_first = inter.merge(!parents_side)?;
    let children_first = inter.merge(parents_side)?;
    let (send, receive) = if parents_side {
        (parents_first, children_first)
    } else {
        (children_first, parents_first)
    };
    let entry = Inter::new(
        Arc::new(CommBox::Owned(receive)),
        inter.group().world_ranks().to_vec(),
        inter.remote_group().world_ranks().to_vec(),
        inter.rank(),
        parents_side,
    );
    with_runtime(|runtime| {
        let handle = runtime.add_comm(send, errhandler_from);
        crate::intercomm::install(runtime.comm_mut(handle)?, entry);
        Ok(handle)
    })
}

/// A C string argument, checked.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string.
unsafe fn string(text: *const c_char, what: &str) -> Result<String, Failure> {
    if text.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL, NUL-terminated by the caller's contract.
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str()
        .map(str::to_string)
        .map_err(|_| Failure::new(MPI_ERR_ARG, format!("{what} is not UTF-8")))
}

/// A NULL-terminated `argv` (`MPI_ARGV_NULL`: none).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of NUL-terminated strings.
unsafe fn arguments(argv: *mut *mut c_char) -> Result<Vec<String>, Failure> {
    let mut args = Vec::new();
    if argv.is_null() {
        return Ok(args);
    }
    for i in 0.. {
        // SAFETY: the array is NULL-terminated: every element up to the NULL is readable.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        // SAFETY: a NUL-terminated string, by the caller's contract.
        args.push(unsafe { string(arg, "an argv element")? });
    }
    Ok(args)
}

/// One program of a spawn, from the root's arguments.
///
/// # Safety
/// As `MPI_Comm_spawn`'s `command`, `argv`.
unsafe fn program(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: c_int,
) -> Result<SpawnProgram, Failure> {
    // SAFETY: forwarded from the caller's contract.
    let command = unsafe { string(command, "command")? };
    // SAFETY: forwarded from the caller's contract.
    let args = unsafe { arguments(argv)? };
    let count = u32::try_from(maxprocs)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Failure::new(MPI_ERR_ARG, format!("maxprocs {maxprocs}: at least 1")))?;
    crate::info::check_handle(info, true)?;
    let wdir =
        crate::info::value_of(info, "wdir").map(|v| String::from_utf8_lossy(&v).into_owned());
    Ok(SpawnProgram {
        count,
        argv: std::iter::once(command).chain(args).collect(),
        wdir,
    })
}

/// The spawn itself, at every parent: `programs` is the root's (`Err` at the root when its
/// arguments are bad: it still takes part, with no program, so that no parent waits for it).
fn spawn(
    comm: c_int,
    root: c_int,
    programs: Option<Result<Vec<SpawnProgram>, Failure>>,
    intercomm: *mut c_int,
    errcodes: *mut c_int,
    errcodes_len: usize,
) -> Result<(), Failure> {
    // SAFETY: checked for NULL by `out`.
    let intercomm = unsafe { out(intercomm, "intercomm")? };
    intercomm.write(MPI_COMM_NULL);
    let parents = agreement_comm_of(comm)?;
    let parents = parents.get();
    let root = u32::try_from(root).map_err(|_| {
        Failure::new(
            MPI_ERR_ROOT,
            format!("root {root} is not a rank of the communicator"),
        )
    })?;
    let (given, refused) = match programs {
        Some(Ok(programs)) => (programs, None),
        Some(Err(failure)) => (Vec::new(), Some(failure)),
        None => (Vec::new(), None),
    };
    let codes = |code: c_int, n: usize| {
        if !errcodes.is_null() {
            for i in 0..n {
                // SAFETY: `array_of_errcodes` holds one int per process asked for (n is the
                // root's count at the root, the count started elsewhere).
                unsafe { errcodes.add(i).write(code) };
            }
        }
    };
    match parents.spawn_programs(&given, root) {
        Ok(inter) => {
            let handle = install(&inter, true, comm)?;
            intercomm.write(handle);
            codes(MPI_SUCCESS, inter.remote_size() as usize);
            Ok(())
        }
        Err(error) => {
            let failure = refused.unwrap_or_else(|| error.into());
            codes(failure.class, errcodes_len);
            Err(failure)
        }
    }
}

/// `MPI_Comm_spawn` (MPI-4.0 §11.8.2): starts `maxprocs` processes of `command` with `argv`
/// and returns an intercommunicator to them. Collective over `comm` and fault-tolerant: every
/// parent gets the intercommunicator, or every parent an error (`MPI_ERR_SPAWN` when the
/// processes cannot be started, `MPIX_ERR_PROC_FAILED` when a parent died during the call);
/// then no new process runs. `command`, `argv`, `maxprocs` and `info` matter at `root` only.
/// `array_of_errcodes` (or `MPI_ERRCODES_IGNORE`) gets `MPI_SUCCESS` per new process, or
/// the error for each one asked for (at the root).
///
/// # Safety
/// At the root, `command` is a NUL-terminated string and `argv` `MPI_ARGV_NULL` or a
/// NULL-terminated array of them; `intercomm` points at a writable `MPI_Comm`;
/// `array_of_errcodes` is NULL or holds `maxprocs` ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: c_int,
    root: c_int,
    comm: c_int,
    intercomm: *mut c_int,
    array_of_errcodes: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let me = with_runtime(|runtime| Ok(runtime.comm(comm)?.comm.get().rank()))?;
        let programs = (root >= 0 && me == root as u32).then(|| {
            // SAFETY: at the root, the caller's contract.
            unsafe { program(command, argv, maxprocs, info) }.map(|p| vec![p])
        });
        let asked = if programs.is_some() {
            usize::try_from(maxprocs).unwrap_or(0)
        } else {
            0
        };
        spawn(comm, root, programs, intercomm, array_of_errcodes, asked)
    })
}

/// `MPI_Comm_spawn_multiple` (MPI-4.0 §11.8.3): as `MPI_Comm_spawn`, `count` programs in one
/// spawn; the new ranks are numbered in the programs' order. `array_of_argv` may be
/// `MPI_ARGVS_NULL`.
///
/// # Safety
/// At the root, the arrays hold `count` elements each (`array_of_argv` may be NULL), each
/// command a NUL-terminated string and each argv as `MPI_Comm_spawn`'s; `intercomm` points at
/// a writable `MPI_Comm`; `array_of_errcodes` is NULL or holds the sum of `array_of_maxprocs`
/// ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const c_int,
    root: c_int,
    comm: c_int,
    intercomm: *mut c_int,
    array_of_errcodes: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let me = with_runtime(|runtime| Ok(runtime.comm(comm)?.comm.get().rank()))?;
        let mut asked = 0usize;
        let programs = (root >= 0 && me == root as u32).then(|| {
            let n = usize::try_from(count)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| Failure::new(MPI_ERR_ARG, format!("count {count}: at least 1")))?;
            if array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null()
            {
                return Err(Failure::null(
                    "array_of_commands, array_of_maxprocs or array_of_info",
                ));
            }
            (0..n)
                .map(|i| {
                    // SAFETY: the arrays hold `count` elements, by the caller's contract.
                    let (command, maxprocs, info) = unsafe {
                        (
                            *array_of_commands.add(i),
                            *array_of_maxprocs.add(i),
                            *array_of_info.add(i),
                        )
                    };
                    let argv = if array_of_argv.is_null() {
                        std::ptr::null_mut()
                    } else {
                        // SAFETY: as above.
                        unsafe { *array_of_argv.add(i) }
                    };
                    asked += usize::try_from(maxprocs).unwrap_or(0);
                    // SAFETY: each command and argv as `MPI_Comm_spawn`'s.
                    unsafe { program(command, argv, maxprocs, info) }
                })
                .collect()
        });
        spawn(comm, root, programs, intercomm, array_of_errcodes, asked)
    })
}

/// `MPI_Comm_get_parent` (MPI-4.0 §11.8.2): the intercommunicator to the ranks that spawned
/// this process (made in `MPI_Init`), or `MPI_COMM_NULL` for a process the job started, and
/// after `MPI_Comm_disconnect` or `MPI_Comm_free` of it.
///
/// # Safety
/// `parent` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_parent(parent: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let parent = unsafe { out(parent, "parent")? };
        let handle = with_runtime(|runtime| {
            Ok(match runtime.parent {
                Some(handle) if runtime.comms.contains_key(&handle) => handle,
                _ => MPI_COMM_NULL,
            })
        })?;
        parent.write(handle);
        Ok(())
    })
}

/// `MPI_Comm_disconnect` (MPI-4.0 §11.10.4): collective over the communicator (both groups of
/// an intercommunicator): it waits until every live member disconnects, so no member leaves,
/// finalizes and exits while the others still communicate with it, then frees the
/// communicator (as `MPI_Comm_free`) and sets it to `MPI_COMM_NULL`. The wait is a
/// fault-tolerant agreement (`validate_global` over every member), not a barrier: a member
/// that leaves as soon as it decided cannot make the others fail, and a member that failed
/// does not keep them waiting. `MPIX_ERR_REVOKED` on a revoked communicator, freed all the
/// same. On the parent intercommunicator, `MPI_Comm_get_parent`
/// returns `MPI_COMM_NULL` afterwards.
///
/// # Safety
/// `comm` is NULL or points at a readable and writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_disconnect(comm: *mut c_int) -> c_int {
    let mut waited = MPI_SUCCESS;
    if !comm.is_null() {
        // SAFETY: not NULL, readable by the caller's contract.
        let handle = unsafe { comm.read_unaligned() };
        if handle != MPI_COMM_WORLD && handle != MPI_COMM_SELF {
            waited = boundary(handle, || {
                let comm = crate::collectives::spanning(handle)?;
                comm.get().validate_global()?;
                Ok(())
            });
            if waited != MPI_SUCCESS && waited != MPIX_ERR_PROC_FAILED && waited != MPIX_ERR_REVOKED
            {
                return waited; // an invalid handle: nothing to free
            }
        }
    }
    // SAFETY: forwarded from the caller's contract.
    let freed = unsafe { crate::communicators::MPI_Comm_free(comm) };
    if freed != MPI_SUCCESS {
        freed
    } else {
        waited
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("spawn.rs");

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Info objects (MPI-4.0 §10): ordered (key, value) string pairs, `MPI_INFO_NULL` and
//! `MPI_INFO_ENV`.
//!
//! As MPI-4 allows, the info calls work at any time, before `MPI_Init` and after
//! `MPI_Finalize` too: their table is apart from the runtime's and its lock is never held
//! while another is taken. Handles are never reused. `MPI_INFO_ENV` is read-only (setting,
//! deleting or freeing it is `MPI_ERR_INFO`); its pairs are computed each time it is read.
//!
//! The library uses no hints: the calls that take an info (`MPI_Comm_dup_with_info`,
//! `MPI_Comm_set_info`) check the handle and ignore its contents, and `MPI_Comm_get_info`
//! returns a new, empty info. `MPI_Comm_split_type` reads one key, `mpi_hw_resource_type`, for
//! `MPI_COMM_TYPE_HW_GUIDED`.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::os::raw::c_int;
use std::sync::Mutex;

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::runtime::{lock, lock_state, Phase};

/// An info's (key, value) pairs, in the order the keys were first set.
pub(crate) type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// The info objects made by the program, by handle: their pairs in the order the keys were
/// first set.
struct Table {
    infos: BTreeMap<c_int, Pairs>,
    next: c_int,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    infos: BTreeMap::new(),
    next: 16,
});

fn invalid(handle: c_int) -> Failure {
    Failure::new(
        MPI_ERR_INFO,
        format!("invalid or freed info handle {handle}"),
    )
}

/// Checks an info argument of a call that ignores its contents: a live handle,
/// `MPI_INFO_ENV`, or (when `null_ok`) `MPI_INFO_NULL`.
pub(crate) fn check_handle(info: c_int, null_ok: bool) -> Result<(), Failure> {
    if info == MPI_INFO_ENV || (null_ok && info == MPI_INFO_NULL) {
        return Ok(());
    }
    if lock(&TABLE).infos.contains_key(&info) {
        Ok(())
    } else {
        Err(invalid(info))
    }
}

/// The value of `key` in a live info (not `MPI_INFO_ENV` nor `MPI_INFO_NULL`), if it is set.
pub(crate) fn value_of(info: c_int, key: &str) -> Option<Vec<u8>> {
    lock(&TABLE)
        .infos
        .get(&info)?
        .iter()
        .find(|(k, _)| k.as_slice() == key.as_bytes())
        .map(|(_, v)| v.clone())
}

/// A new info holding `pairs`; its handle.
pub(crate) fn create_with(pairs: Pairs) -> c_int {
    let mut table = lock(&TABLE);
    let handle = table.next;
    table.next = table.next.saturating_add(1);
    table.infos.insert(handle, pairs);
    handle
}

/// The pairs of `MPI_INFO_ENV` (MPI-4.0 §11.2.4), those this process knows: `command` and
/// `argv` (from its command line), `maxprocs` (how many processes the launcher started,
/// before and after `MPI_Init` alike), `host`, `arch`, `wdir`, `thread_level` and `mpi_initial_errhandler`. `file` and `soft` are absent (no
/// launcher passes them).
fn environment() -> Pairs {
    let mut pairs = Vec::new();
    let mut push = |key: &str, value: String| pairs.push((key.into(), value.into_bytes()));
    let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    if let Some(command) = args.next() {
        push("command", command);
    }
    push("argv", args.collect::<Vec<_>>().join(" "));
    // The launcher's count (rtrun's RT_SIZE, a PMI launcher's PMI_SIZE), the same before and
    // after MPI_Init; else the world's size once initialized, or 1 for a singleton.
    let launched = ["RT_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse::<u32>().ok());
    let world = match &*lock_state() {
        Phase::Running(runtime) => Some(runtime.universe.world().size()),
        Phase::Before | Phase::Finalized => None,
    };
    push("maxprocs", launched.or(world).unwrap_or(1).to_string());
    if let Some(host) = crate::environment::host_name() {
        push("host", host);
    }
    push("arch", std::env::consts::ARCH.to_string());
    if let Ok(dir) = std::env::current_dir() {
        push("wdir", dir.to_string_lossy().into_owned());
    }
    push("thread_level", "MPI_THREAD_MULTIPLE".into());
    if let Ok(initial) = crate::environment::initial_errhandler() {
        push("mpi_initial_errhandler", initial.into());
    }
    pairs
}

/// Runs `f` on the pairs of `info` (a copy of `MPI_INFO_ENV`'s): reading calls.
fn read<R>(
    info: c_int,
    f: impl FnOnce(&[(Vec<u8>, Vec<u8>)]) -> Result<R, Failure>,
) -> Result<R, Failure> {
    if info == MPI_INFO_ENV {
        let pairs = environment();
        return f(&pairs);
    }
    let table = lock(&TABLE);
    f(table.infos.get(&info).ok_or_else(|| invalid(info))?)
}

/// Runs `f` on the pairs of `info`: changing calls (`MPI_INFO_ENV` is read-only).
fn change<R>(info: c_int, f: impl FnOnce(&mut Pairs) -> Result<R, Failure>) -> Result<R, Failure> {
    if info == MPI_INFO_ENV {
        return Err(Failure::new(
            MPI_ERR_INFO,
            "MPI_INFO_ENV is predefined and read-only",
        ));
    }
    let mut table = lock(&TABLE);
    f(table.infos.get_mut(&info).ok_or_else(|| invalid(info))?)
}

/// Reads a NUL-terminated C string of at most `max - 1` bytes.
///
/// # Safety
/// `text` is NULL or points at a NUL-terminated string (read up to its NUL or `max` bytes,
/// whichever comes first).
unsafe fn c_text(
    text: *const c_char,
    max: c_int,
    what: &str,
    class: c_int,
) -> Result<Vec<u8>, Failure> {
    if text.is_null() {
        return Err(Failure::null(what));
    }
    let mut bytes = Vec::new();
    loop {
        // SAFETY: not NULL and, by the caller's contract, readable up to its NUL, which has
        // not come yet (at most `max` bytes are read).
        let byte = unsafe { text.add(bytes.len()).read() } as u8;
        if byte == 0 {
            return Ok(bytes);
        }
        bytes.push(byte);
        if bytes.len() >= max as usize {
            return Err(Failure::new(
                class,
                format!("the {what} is longer than {} bytes", max - 1),
            ));
        }
    }
}

/// A key argument: 1 to `MPI_MAX_INFO_KEY - 1` bytes (`MPI_ERR_INFO_KEY` otherwise).
///
/// # Safety
/// As [`c_text`].
unsafe fn key_of(key: *const c_char) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract.
    let key = unsafe { c_text(key, MPI_MAX_INFO_KEY, "key", MPI_ERR_INFO_KEY)? };
    if key.is_empty() {
        return Err(Failure::new(MPI_ERR_INFO_KEY, "the key is empty"));
    }
    Ok(key)
}

/// Writes `bytes` and a NUL at `buffer`, which holds `capacity` bytes (`capacity >= 1`):
/// at most `capacity - 1` bytes of the text.
///
/// # Safety
/// `buffer` is not NULL and points at `capacity` writable bytes.
unsafe fn write_truncated(buffer: *mut c_char, capacity: usize, bytes: &[u8]) {
    let len = bytes.len().min(capacity.saturating_sub(1));
    // SAFETY: by the caller's contract `buffer` holds `capacity >= len + 1` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.cast::<u8>(), len);
        buffer.add(len).write(0);
    }
}

/// `MPI_Info_create`: a new, empty info.
///
/// # Safety
/// `info` is NULL or points at a writable `MPI_Info`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create(info: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let info = unsafe { out(info, "info")? };
        info.write(create_with(Vec::new()));
        Ok(())
    })
}

/// `MPI_Info_create_env` (MPI-4.0 §11.2.4): a new info holding `MPI_INFO_ENV`'s pairs (the
/// arguments are not used and may be NULL: the library reads its own command line).
///
/// # Safety
/// `info` is NULL or points at a writable `MPI_Info`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create_env(
    _argc: c_int,
    _argv: *mut *mut c_char,
    info: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let info = unsafe { out(info, "info")? };
        info.write(create_with(environment()));
        Ok(())
    })
}

/// `MPI_Info_set`: adds the pair, or replaces the key's value. Keys of 1 to
/// `MPI_MAX_INFO_KEY - 1` bytes (`MPI_ERR_INFO_KEY`), values of up to `MPI_MAX_INFO_VAL - 1`
/// bytes (`MPI_ERR_INFO_VALUE`).
///
/// # Safety
/// `key` and `value` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(
    info: c_int,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let key = unsafe { key_of(key)? };
        // SAFETY: forwarded contract.
        let value = unsafe { c_text(value, MPI_MAX_INFO_VAL, "value", MPI_ERR_INFO_VALUE)? };
        change(info, |pairs| {
            match pairs.iter_mut().find(|(k, _)| *k == key) {
                Some(pair) => pair.1 = value,
                None => pairs.push((key, value)),
            }
            Ok(())
        })
    })
}

/// `MPI_Info_delete`: `MPI_ERR_INFO_NOKEY` when the key is not there.
///
/// # Safety
/// `key` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_delete(info: c_int, key: *const c_char) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let key = unsafe { key_of(key)? };
        change(info, |pairs| {
            let at = pairs.iter().position(|(k, _)| *k == key).ok_or_else(|| {
                Failure::new(
                    MPI_ERR_INFO_NOKEY,
                    format!("no key {:?}", String::from_utf8_lossy(&key)),
                )
            })?;
            pairs.remove(at);
            Ok(())
        })
    })
}

/// `MPI_Info_get`: `*flag` = whether the key is there; if so, its value, truncated to
/// `valuelen` bytes, then a NUL (`value` holds `valuelen + 1` bytes).
///
/// # Safety
/// `key` is NULL or a NUL-terminated string; `value` is NULL or points at `valuelen + 1`
/// writable bytes; `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get(
    info: c_int,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let key = unsafe { key_of(key)? };
        let capacity = usize::try_from(valuelen)
            .map_err(|_| Failure::new(MPI_ERR_ARG, format!("negative valuelen {valuelen}")))?
            + 1;
        if value.is_null() {
            return Err(Failure::null("value"));
        }
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let found = read(info, |pairs| {
            Ok(pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone()))
        })?;
        flag.write(c_int::from(found.is_some()));
        if let Some(found) = found {
            // SAFETY: not NULL; by the contract `value` holds `valuelen + 1` bytes.
            unsafe { write_truncated(value, capacity, &found) };
        }
        Ok(())
    })
}

/// `MPI_Info_get_string` (MPI-4.1): `*flag` = whether the key is there; if so, the value,
/// truncated to `*buflen - 1` bytes and NUL-terminated, and `*buflen` becomes the value's
/// length + 1. With `*buflen == 0`, `value` may be NULL (nothing is written to it).
///
/// # Safety
/// `key` is NULL or a NUL-terminated string; `buflen` and `flag` are NULL or point at writable
/// ints; `value` is NULL or points at `*buflen` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_string(
    info: c_int,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let key = unsafe { key_of(key)? };
        // SAFETY: checked for NULL by `out`.
        let buflen = unsafe { out(buflen, "buflen")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let capacity = usize::try_from(buflen.read())
            .map_err(|_| Failure::new(MPI_ERR_ARG, format!("negative buflen {}", buflen.read())))?;
        if capacity > 0 && value.is_null() {
            return Err(Failure::null("value"));
        }
        let found = read(info, |pairs| {
            Ok(pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone()))
        })?;
        flag.write(c_int::from(found.is_some()));
        if let Some(found) = found {
            if capacity > 0 {
                // SAFETY: not NULL; by the contract `value` holds `*buflen` bytes.
                unsafe { write_truncated(value, capacity, &found) };
            }
            buflen.write(found.len() as c_int + 1);
        }
        Ok(())
    })
}

/// `MPI_Info_get_valuelen`: `*flag` = whether the key is there; if so, the value's length in
/// bytes without the NUL.
///
/// # Safety
/// `key` is NULL or a NUL-terminated string; `valuelen` and `flag` are NULL or point at
/// writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_valuelen(
    info: c_int,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let key = unsafe { key_of(key)? };
        // SAFETY: checked for NULL by `out`.
        let valuelen = unsafe { out(valuelen, "valuelen")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let found = read(info, |pairs| {
            Ok(pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.len()))
        })?;
        flag.write(c_int::from(found.is_some()));
        if let Some(len) = found {
            valuelen.write(len as c_int);
        }
        Ok(())
    })
}

/// `MPI_Info_get_nkeys`.
///
/// # Safety
/// `nkeys` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nkeys(info: c_int, nkeys: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let nkeys = unsafe { out(nkeys, "nkeys")? };
        let count = read(info, |pairs| Ok(pairs.len()))?;
        nkeys.write(count as c_int);
        Ok(())
    })
}

/// `MPI_Info_get_nthkey`: the key of the `n`-th pair (0-based, in the order keys were first
/// set); `n` outside `0..nkeys` is `MPI_ERR_ARG`.
///
/// # Safety
/// `key` is NULL or points at `MPI_MAX_INFO_KEY` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nthkey(info: c_int, n: c_int, key: *mut c_char) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if key.is_null() {
            return Err(Failure::null("key"));
        }
        let nth = read(info, |pairs| {
            usize::try_from(n)
                .ok()
                .and_then(|n| pairs.get(n))
                .map(|(k, _)| k.clone())
                .ok_or_else(|| {
                    Failure::new(
                        MPI_ERR_ARG,
                        format!("key number {n} of an info with {} keys", pairs.len()),
                    )
                })
        })?;
        // SAFETY: not NULL; by the contract `key` holds MPI_MAX_INFO_KEY bytes.
        unsafe { write_truncated(key, MPI_MAX_INFO_KEY as usize, &nth) };
        Ok(())
    })
}

/// `MPI_Info_dup`: a new info with the same pairs in the same order (of `MPI_INFO_ENV`: an
/// ordinary info holding its pairs).
///
/// # Safety
/// `newinfo` is NULL or points at a writable `MPI_Info`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_dup(info: c_int, newinfo: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newinfo = unsafe { out(newinfo, "newinfo")? };
        let pairs = read(info, |pairs| Ok(pairs.to_vec()))?;
        newinfo.write(create_with(pairs));
        Ok(())
    })
}

/// `MPI_Info_free`: sets `*info` to `MPI_INFO_NULL`; a freed handle is `MPI_ERR_INFO` from then
/// on (handles are not reused).
///
/// # Safety
/// `info` is NULL or points at a readable and writable `MPI_Info`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_free(info: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(info, "info")? };
        let handle = slot.read();
        if handle == MPI_INFO_ENV {
            return Err(Failure::new(
                MPI_ERR_INFO,
                "MPI_INFO_ENV is predefined and cannot be freed",
            ));
        }
        lock(&TABLE)
            .infos
            .remove(&handle)
            .ok_or_else(|| invalid(handle))?;
        slot.write(MPI_INFO_NULL);
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("info.rs");

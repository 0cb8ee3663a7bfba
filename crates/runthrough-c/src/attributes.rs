// SPDX-License-Identifier: MIT OR Apache-2.0
//! Attribute caching on communicators and datatypes (MPI-4.0 §7.7): `MPI_Comm_create_keyval` /
//! `_free_keyval` / `_set_attr` / `_delete_attr`, the user keys of `MPI_Comm_get_attr`, and the
//! same calls for datatypes (`MPI_Type_create_keyval`, ...), on one store.
//!
//! # Invariants
//! - Key values are numbered from [`FIRST_KEYVAL`] up and never reused; the predefined keys
//!   (`MPI_TAG_UB`, ...) are below it. A key belongs to the kind of object it was made for: a
//!   communicator's key on a datatype (or the other way round) is `MPI_ERR_KEYVAL`.
//! - The callbacks of a key stay known while an attribute uses it, even after
//!   `MPI_Comm_free_keyval` (MPI's rule: the key is freed once no attribute refers to it).
//! - No callback runs while the library holds a lock: callbacks may call MPI functions.

use std::collections::BTreeMap;
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::runtime::lock;

/// `MPI_Comm_copy_attr_function`.
pub(crate) type CopyFn =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;

/// `MPI_Comm_delete_attr_function`.
pub(crate) type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

/// The first key value `MPI_Comm_create_keyval` hands out.
pub(crate) const FIRST_KEYVAL: c_int = 64;

/// The kind of object an attribute hangs on (handles of different kinds may be equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Comm,
    Type,
    Win,
}

/// An object with attributes: its kind and handle.
type Object = (Kind, c_int);

/// One key: the kind of object it is for, its callbacks and extra state (an address the
/// library only passes back).
#[derive(Clone, Copy)]
struct Keyval {
    kind: Kind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    extra_state: usize,
    freed: bool,
}

struct Attributes {
    keyvals: BTreeMap<c_int, Keyval>,
    /// (object, key) -> value (an address or an integer the program chose), and the order in
    /// which it was set (deletion runs in reverse order).
    values: BTreeMap<(Object, c_int), (usize, u64)>,
    next_keyval: c_int,
    next_order: u64,
}

impl Attributes {
    /// Stores `value` under (`object`, `keyval`), the latest set.
    fn store(&mut self, object: Object, keyval: c_int, value: usize) {
        let order = self.next_order;
        self.next_order += 1;
        self.values.insert((object, keyval), (value, order));
    }

    /// Key `keyval` of `kind` (freed ones too when `freed_too`).
    fn key(&self, kind: Kind, keyval: c_int, freed_too: bool) -> Result<Keyval, Failure> {
        match self.keyvals.get(&keyval) {
            Some(key) if key.kind == kind && (freed_too || !key.freed) => Ok(*key),
            _ => Err(invalid_keyval(keyval)),
        }
    }

    /// The (object, key) range of `object`'s attributes.
    fn range_of(
        &self,
        object: Object,
    ) -> impl Iterator<Item = (&(Object, c_int), &(usize, u64))> + '_ {
        self.values
            .range((object, c_int::MIN)..=(object, c_int::MAX))
    }
}

static ATTRIBUTES: Mutex<Attributes> = Mutex::new(Attributes {
    keyvals: BTreeMap::new(),
    values: BTreeMap::new(),
    next_keyval: FIRST_KEYVAL,
    next_order: 0,
});

fn invalid_keyval(keyval: c_int) -> Failure {
    Failure::new(
        MPI_ERR_KEYVAL,
        format!("invalid or freed attribute key {keyval}"),
    )
}

/// The value of user key `keyval` on `object`, if set (`None` for a key without a value).
///
/// # Errors
/// `MPI_ERR_KEYVAL` for a key that was never created, or made for another kind of object.
pub(crate) fn get(object: Object, keyval: c_int) -> Result<Option<usize>, Failure> {
    let attributes = lock(&ATTRIBUTES);
    attributes.key(object.0, keyval, true)?;
    Ok(attributes
        .values
        .get(&(object, keyval))
        .map(|&(value, _)| value))
}

/// Calls the delete callback of `keyval` for `value` on the object `handle` (no lock held).
fn call_delete(handle: c_int, keyval: c_int, key: Keyval, value: usize) -> Result<(), Failure> {
    let Some(delete) = key.delete else {
        return Ok(());
    };
    // SAFETY: `delete` was given to MPI_Comm_create_keyval as an MPI_Comm_delete_attr_function;
    // it is called as MPI calls it, with the value and extra state the program gave, and
    // without the library's locks.
    let code = unsafe {
        delete(
            handle,
            keyval,
            value as *mut c_void,
            key.extra_state as *mut c_void,
        )
    };
    if code == MPI_SUCCESS {
        Ok(())
    } else {
        Err(Failure::new(
            code,
            format!("the delete callback of attribute key {keyval} returned {code}"),
        ))
    }
}

/// Deletes every attribute of `object` (its delete callbacks run, the latest set first):
/// before `MPI_Comm_free` or `MPI_Type_free` releases the handle, and for `MPI_COMM_SELF` at
/// `MPI_Finalize`.
///
/// # Errors
/// The first error a delete callback returns (the remaining attributes are still deleted).
pub(crate) fn delete_all(object: Object) -> Result<(), Failure> {
    // Each value stays stored while its callback runs (a callback that frees the key again
    // finds it in use), and goes after it.
    let mut doomed: Vec<(u64, c_int, Keyval, usize)> = {
        let attributes = lock(&ATTRIBUTES);
        attributes
            .range_of(object)
            .filter_map(|(&(_, keyval), &(value, order))| {
                let key = *attributes.keyvals.get(&keyval)?;
                Some((order, keyval, key, value))
            })
            .collect()
    };
    doomed.sort_by_key(|&(order, ..)| std::cmp::Reverse(order));
    let mut first_error = None;
    for (order, keyval, key, value) in doomed {
        if let Err(failure) = call_delete(object.1, keyval, key, value) {
            first_error.get_or_insert(failure);
        }
        let mut attributes = lock(&ATTRIBUTES);
        if attributes.values.get(&(object, keyval)) == Some(&(value, order)) {
            attributes.values.remove(&(object, keyval));
        }
    }
    // Whatever a callback stored meanwhile goes too (without its callback).
    let mut attributes = lock(&ATTRIBUTES);
    let left: Vec<(Object, c_int)> = attributes.range_of(object).map(|(&key, _)| key).collect();
    for key in left {
        attributes.values.remove(&key);
    }
    first_error.map_or(Ok(()), Err)
}

/// Copies the attributes of `from` to the new object `to` of the same kind (`MPI_Comm_dup`,
/// `MPI_Type_dup`): each key's copy callback decides whether and what.
///
/// # Errors
/// The first error a copy callback returns.
pub(crate) fn copy_all(from: Object, to: c_int) -> Result<(), Failure> {
    let sources: Vec<(c_int, Keyval, usize)> = {
        let attributes = lock(&ATTRIBUTES);
        attributes
            .range_of(from)
            .filter_map(|(&(_, keyval), &(value, _))| {
                attributes
                    .keyvals
                    .get(&keyval)
                    .map(|&key| (keyval, key, value))
            })
            .collect()
    };
    for (keyval, key, value) in sources {
        let Some(copy) = key.copy else { continue };
        let mut copied: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: `copy` was given to MPI_Comm_create_keyval as an
        // MPI_Comm_copy_attr_function; it is called as MPI calls it, with pointers to two live
        // locals for its outputs, and without the library's locks.
        let code = unsafe {
            copy(
                from.1,
                keyval,
                key.extra_state as *mut c_void,
                value as *mut c_void,
                std::ptr::addr_of_mut!(copied).cast(),
                &mut flag,
            )
        };
        if code != MPI_SUCCESS {
            return Err(Failure::new(
                code,
                format!("the copy callback of attribute key {keyval} returned {code}"),
            ));
        }
        if flag != 0 {
            lock(&ATTRIBUTES).store((from.0, to), keyval, copied as usize);
        }
    }
    Ok(())
}

/// `MPI_COMM_NULL_COPY_FN`: copies nothing.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub(crate) unsafe extern "C" fn rt_comm_null_copy_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    _value_in: *mut c_void,
    _value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if !flag.is_null() {
        // SAFETY: not NULL; writable by the contract.
        unsafe { flag.write(0) };
    }
    MPI_SUCCESS
}

/// `MPI_COMM_DUP_FN`: the new communicator gets the same value.
///
/// # Safety
/// `value_out` is NULL or points at a writable `void *`; `flag` NULL or a writable int.
#[no_mangle]
pub(crate) unsafe extern "C" fn rt_comm_dup_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if value_out.is_null() || flag.is_null() {
        return MPI_ERR_ARG;
    }
    // SAFETY: not NULL; writable by the contract.
    unsafe {
        value_out.cast::<*mut c_void>().write(value_in);
        flag.write(1);
    }
    MPI_SUCCESS
}

/// `MPI_COMM_NULL_DELETE_FN`: does nothing.
#[no_mangle]
pub(crate) extern "C" fn rt_comm_null_delete_fn(
    _comm: c_int,
    _keyval: c_int,
    _value: *mut c_void,
    _extra_state: *mut c_void,
) -> c_int {
    MPI_SUCCESS
}

/// A new key for objects of `kind`, written to `slot`.
pub(crate) fn create_keyval(
    kind: Kind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    slot: &crate::errors::Out<c_int>,
    extra_state: *mut c_void,
) -> Result<(), Failure> {
    crate::runtime::with_runtime(|_| Ok(()))?;
    let mut attributes = lock(&ATTRIBUTES);
    let keyval = attributes.next_keyval;
    attributes.next_keyval = keyval.saturating_add(1);
    attributes.keyvals.insert(
        keyval,
        Keyval {
            kind,
            copy,
            delete,
            extra_state: extra_state as usize,
            freed: false,
        },
    );
    slot.write(keyval);
    Ok(())
}

/// Frees the key of `kind` in `slot` (`MPI_KEYVAL_INVALID` written there); attributes already
/// set with it keep their callbacks until they are deleted. While they do, freeing it again
/// (a copy of the handle, or a delete callback's) does nothing more, as MPICH and Open MPI
/// count it.
pub(crate) fn free_keyval(kind: Kind, slot: &crate::errors::Out<c_int>) -> Result<(), Failure> {
    let keyval = slot.read();
    let mut attributes = lock(&ATTRIBUTES);
    let in_use = attributes.values.keys().any(|&(_, key)| key == keyval);
    attributes.key(kind, keyval, in_use)?;
    if let Some(key) = attributes.keyvals.get_mut(&keyval) {
        key.freed = true;
    }
    slot.write(MPI_KEYVAL_INVALID);
    Ok(())
}

/// Stores `value` on `object` under `keyval`; a value already there is deleted first (its
/// delete callback runs). When that callback fails, the call fails and the old value stays.
pub(crate) fn set_attr(object: Object, keyval: c_int, value: usize) -> Result<(), Failure> {
    let (old, key) = {
        let attributes = lock(&ATTRIBUTES);
        let key = attributes.key(object.0, keyval, false)?;
        (attributes.values.get(&(object, keyval)).copied(), key)
    };
    if let Some((old, _)) = old {
        call_delete(object.1, keyval, key, old)?;
    }
    lock(&ATTRIBUTES).store(object, keyval, value);
    Ok(())
}

/// Removes `keyval`'s value from `object` once its delete callback succeeded (when it fails,
/// the call fails and the value stays); nothing to do when the object has none.
pub(crate) fn delete_attr(object: Object, keyval: c_int) -> Result<(), Failure> {
    let (value, key) = {
        let attributes = lock(&ATTRIBUTES);
        let key = attributes.key(object.0, keyval, true)?;
        match attributes.values.get(&(object, keyval)) {
            Some(&value) => (value, key),
            None => return Ok(()),
        }
    };
    call_delete(object.1, keyval, key, value.0)?;
    let mut attributes = lock(&ATTRIBUTES);
    // Unless the callback itself replaced it.
    if attributes.values.get(&(object, keyval)) == Some(&value) {
        attributes.values.remove(&(object, keyval));
    }
    Ok(())
}

/// `MPI_Comm_create_keyval`: a new key; NULL callbacks act as `MPI_COMM_NULL_COPY_FN` and
/// `MPI_COMM_NULL_DELETE_FN`.
///
/// # Safety
/// `comm_keyval` is NULL or points at a writable int; the callbacks are NULL or functions of
/// the `MPI_Comm_*_attr_function` types.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    comm_copy_attr_fn: Option<CopyFn>,
    comm_delete_attr_fn: Option<DeleteFn>,
    comm_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(comm_keyval, "comm_keyval")? };
        create_keyval(
            Kind::Comm,
            comm_copy_attr_fn,
            comm_delete_attr_fn,
            &slot,
            extra_state,
        )
    })
}

/// `MPI_Comm_free_keyval`: sets `*comm_keyval` to `MPI_KEYVAL_INVALID`; attributes already set
/// with it keep their callbacks until they are deleted. A predefined or unknown key is
/// `MPI_ERR_KEYVAL`.
///
/// # Safety
/// `comm_keyval` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(comm_keyval, "comm_keyval")? };
        free_keyval(Kind::Comm, &slot)
    })
}

/// `MPI_Comm_set_attr`: stores `attribute_val` (the value itself, as MPI says) under the key;
/// a value already there is deleted first (its delete callback runs). When that callback
/// fails, the call fails and the old value stays.
#[no_mangle]
pub extern "C" fn MPI_Comm_set_attr(
    comm: c_int,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    boundary(comm, || {
        crate::intercomm::inter_of(comm)?; // any valid communicator, intercommunicators too
        set_attr((Kind::Comm, comm), comm_keyval, attribute_val as usize)
    })
}

/// `MPI_Comm_delete_attr`: removes the key's value from the communicator once its delete
/// callback succeeded (when it fails, the call fails and the value stays); nothing to do when
/// the communicator has none. An unknown key is `MPI_ERR_KEYVAL`.
#[no_mangle]
pub extern "C" fn MPI_Comm_delete_attr(comm: c_int, comm_keyval: c_int) -> c_int {
    boundary(comm, || {
        crate::intercomm::inter_of(comm)?; // any valid communicator, intercommunicators too
        delete_attr((Kind::Comm, comm), comm_keyval)
    })
}

// The MPI-1 names of the attribute calls (deprecated since MPI-2, removed in MPI-4, still used
// by older programs and test suites), with the behaviour of their MPI-2 counterparts above.

/// `MPI_Keyval_create`: `MPI_Comm_create_keyval`.
///
/// # Safety
/// As `MPI_Comm_create_keyval`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy_fn: Option<CopyFn>,
    delete_fn: Option<DeleteFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state) }
}

/// `MPI_Keyval_free`: `MPI_Comm_free_keyval`.
///
/// # Safety
/// As `MPI_Comm_free_keyval`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

/// `MPI_Attr_put`: `MPI_Comm_set_attr`.
#[no_mangle]
pub extern "C" fn MPI_Attr_put(comm: c_int, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    MPI_Comm_set_attr(comm, keyval, attribute_val)
}

/// `MPI_Attr_get`: `MPI_Comm_get_attr`.
///
/// # Safety
/// As `MPI_Comm_get_attr`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: c_int,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { crate::communicators::MPI_Comm_get_attr(comm, keyval, attribute_val, flag) }
}

/// `MPI_Attr_delete`: `MPI_Comm_delete_attr`.
#[no_mangle]
pub extern "C" fn MPI_Attr_delete(comm: c_int, keyval: c_int) -> c_int {
    MPI_Comm_delete_attr(comm, keyval)
}

// The `PMPI_` names of this module's functions.
profiling_names!("attributes.rs");

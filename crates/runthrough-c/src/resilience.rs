// SPDX-License-Identifier: MIT OR Apache-2.0
//! The resilience library for C (`RTX_Store_*`, declared in `include/mpi-ext.h`): the Rust
//! library's `runthrough::resilience::Store` behind a handle. A store's calls are collective
//! and block; each store has its own lock, taken for the call (the table's lock only to find
//! it), so stores of different communicators work from different threads.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

use runthrough::resilience::{Error, Redundancy, Slots, Store};

use crate::constants::*;
use crate::derived::MPI_Aint;
use crate::errors::{boundary, out, Failure};
use crate::runtime::{comm_of, lock};

/// A store and the slots its last recovery gave this rank.
struct Entry {
    store: Store,
    restored: Slots,
    /// The communicator handle whose error handler reports the store's errors: the one it
    /// was made on, then the one of its last recovery.
    comm: c_int,
}

/// The communicator whose error handler reports errors of `store` (`MPI_COMM_WORLD` for an
/// unknown store).
fn handler_of(store: c_int) -> c_int {
    store_of(store).map_or(MPI_COMM_WORLD, |entry| lock(&entry).comm)
}

/// The stores, by handle (handles are never reused), and the next handle.
struct Stores {
    next: c_int,
    by_handle: BTreeMap<c_int, Arc<Mutex<Entry>>>,
}

static STORES: Mutex<Stores> = Mutex::new(Stores {
    next: 1,
    by_handle: BTreeMap::new(),
});

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let message = error.to_string();
        match error {
            Error::Comm(e) => e.into(),
            Error::NotCommitted => Failure::new(RTX_ERR_NOT_COMMITTED, message),
            Error::Lost { .. } => Failure::new(RTX_ERR_DATA_LOST, message),
            Error::Usage(_) => Failure::new(MPI_ERR_ARG, message),
            _ => Failure::new(MPI_ERR_OTHER, message),
        }
    }
}

fn store_of(handle: c_int) -> Result<Arc<Mutex<Entry>>, Failure> {
    lock(&STORES)
        .by_handle
        .get(&handle)
        .cloned()
        .ok_or_else(|| Failure::new(MPI_ERR_ARG, format!("{handle} is not a store")))
}

/// The `copies` argument (`MPI_ERR_ARG` when negative; 0 is the store's own error).
fn copies_of(copies: c_int) -> Result<u32, Failure> {
    u32::try_from(copies)
        .map_err(|_| Failure::new(MPI_ERR_ARG, format!("copies {copies} is negative")))
}

/// The `group` and `parity` arguments of the parity calls (`MPI_ERR_ARG` when negative; the
/// store judges the rest): XOR parity for a parity of 1, Reed-Solomon above.
fn parity_of(group: c_int, parity: c_int) -> Result<Redundancy, Failure> {
    let (Ok(group), Ok(parity)) = (u32::try_from(group), u32::try_from(parity)) else {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("group {group} and parity {parity}: negative"),
        ));
    };
    Ok(match parity {
        1 => Redundancy::Xor { group },
        _ => Redundancy::ReedSolomon { group, parity },
    })
}

fn add(entry: Entry) -> c_int {
    let mut stores = lock(&STORES);
    let handle = stores.next;
    stores.next += 1;
    stores.by_handle.insert(handle, Arc::new(Mutex::new(entry)));
    handle
}

/// `RTX_Store_create`: a store of `comm`'s slots (slot i owned by rank i) with `copies`
/// copies of each. Collective over `comm`.
///
/// # Safety
/// `store` is NULL or points at a writable `RTX_Store`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_create(comm: c_int, copies: c_int, store: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(store, "store")? };
        let made = Store::new(comm_of(comm)?.get(), copies_of(copies)?)?;
        slot.write(add(Entry {
            store: made,
            restored: Vec::new(),
            comm,
        }));
        Ok(())
    })
}

/// `RTX_Store_create_parity`: a store of `comm`'s slots (slot i owned by rank i) kept safe by
/// parity over consecutive groups of `group` ranks, surviving `parity` failures per group
/// between two checkpoints: XOR parity when `parity` is 1, Reed-Solomon above. Collective over
/// `comm`; `MPI_ERR_ARG` at every rank when a rank gave other numbers or unusable ones.
///
/// # Safety
/// `store` is NULL or points at a writable `RTX_Store`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_create_parity(
    comm: c_int,
    group: c_int,
    parity: c_int,
    store: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(store, "store")? };
        let made = Store::with_redundancy(comm_of(comm)?.get(), parity_of(group, parity)?)?;
        slot.write(add(Entry {
            store: made,
            restored: Vec::new(),
            comm,
        }));
        Ok(())
    })
}

/// `RTX_Store_free`: frees the handle (local) and sets it to `RTX_STORE_NULL`.
///
/// # Safety
/// `store` is NULL or points at a readable and writable `RTX_Store`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_free(store: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(store, "store")? };
        let handle = slot.read();
        lock(&STORES)
            .by_handle
            .remove(&handle)
            .ok_or_else(|| Failure::new(MPI_ERR_ARG, format!("{handle} is not a store")))?;
        slot.write(RTX_STORE_NULL);
        Ok(())
    })
}

/// `RTX_Store_owned`: the slots this rank owns, ascending: `*count` of them, the first
/// `max` written to `slots` (which may be NULL when `max` is 0).
///
/// # Safety
/// `slots` points at `max` writable ints (or `max` is 0); `count` at a writable int.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_owned(
    store: c_int,
    max: c_int,
    slots: *mut c_int,
    count: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        let entry = store_of(store)?;
        let owned = lock(&entry).store.owned();
        let max = usize::try_from(max).unwrap_or(0).min(owned.len());
        if max > 0 {
            if slots.is_null() {
                return Err(Failure::new(MPI_ERR_ARG, "slots is NULL"));
            }
            // SAFETY: the caller gives `max` writable ints at `slots`.
            let out = unsafe { std::slice::from_raw_parts_mut(slots, max) };
            for (to, &slot) in out.iter_mut().zip(&owned) {
                *to = slot as c_int;
            }
        }
        count.write(owned.len() as c_int);
        Ok(())
    })
}

/// `RTX_Store_checkpoint`: checkpoints this rank's slots: `count` of them, slot `slots[i]`
/// holding `sizes[i]` bytes at `data[i]`. Collective.
///
/// # Safety
/// `slots`, `data` and `sizes` point at `count` elements each, and each `data[i]` at
/// `sizes[i]` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_checkpoint(
    store: c_int,
    count: c_int,
    slots: *const c_int,
    data: *const *const c_void,
    sizes: *const MPI_Aint,
) -> c_int {
    boundary(handler_of(store), || {
        let count = usize::try_from(count)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("count {count} is negative")))?;
        let mut parts: Vec<(u32, &[u8])> = Vec::with_capacity(count);
        if count > 0 {
            if slots.is_null() || data.is_null() || sizes.is_null() {
                return Err(Failure::new(MPI_ERR_ARG, "slots, data or sizes is NULL"));
            }
            // SAFETY: the caller gives `count` elements at each.
            let (slots, data, sizes) = unsafe {
                (
                    std::slice::from_raw_parts(slots, count),
                    std::slice::from_raw_parts(data, count),
                    std::slice::from_raw_parts(sizes, count),
                )
            };
            for i in 0..count {
                let size = usize::try_from(sizes[i]).map_err(|_| {
                    Failure::new(
                        MPI_ERR_COUNT,
                        format!("sizes[{i}] {} is negative", sizes[i]),
                    )
                })?;
                if data[i].is_null() && size > 0 {
                    return Err(Failure::new(MPI_ERR_BUFFER, format!("data[{i}] is NULL")));
                }
                let bytes: &[u8] = if size == 0 {
                    &[]
                } else {
                    // SAFETY: the caller gives `sizes[i]` readable bytes at `data[i]`.
                    unsafe { std::slice::from_raw_parts(data[i].cast::<u8>(), size) }
                };
                parts.push((slots[i] as u32, bytes));
            }
        }
        let entry = store_of(store)?;
        lock(&entry).store.checkpoint(&parts)?;
        Ok(())
    })
}

/// `RTX_Store_recover`: at a survivor, restores the slots over the repaired communicator
/// `comm` (its newcomers call `RTX_Store_join`); `RTX_Store_owned` then lists this rank's
/// slots and `RTX_Store_restored` gives their data. Collective over `comm`.
#[no_mangle]
pub extern "C" fn RTX_Store_recover(store: c_int, comm: c_int) -> c_int {
    boundary(comm, || {
        let repaired = comm_of(comm)?;
        let entry = store_of(store)?;
        let mut entry = lock(&entry);
        entry.restored = Vec::new();
        let restored = entry.store.recover(repaired.get())?;
        entry.restored = restored;
        entry.comm = comm;
        Ok(())
    })
}

/// `RTX_Store_join`: at a newcomer (a replacement or a spare) of the repaired communicator
/// `comm`, while the survivors call `RTX_Store_recover`: a new store holding this rank's
/// slots of the restored checkpoint. Collective over `comm`.
///
/// # Safety
/// `store` is NULL or points at a writable `RTX_Store`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_join(comm: c_int, copies: c_int, store: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(store, "store")? };
        let (made, restored) = Store::join(comm_of(comm)?.get(), copies_of(copies)?)?;
        slot.write(add(Entry {
            store: made,
            restored,
            comm,
        }));
        Ok(())
    })
}

/// `RTX_Store_join_parity`: `RTX_Store_join` for a store of `RTX_Store_create_parity` (the
/// survivors' `group` and `parity`); the dead rank's slots are rebuilt from its group's parity.
///
/// # Safety
/// `store` is NULL or points at a writable `RTX_Store`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_join_parity(
    comm: c_int,
    group: c_int,
    parity: c_int,
    store: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(store, "store")? };
        let redundancy = parity_of(group, parity)?;
        let (made, restored) = Store::join_with_redundancy(comm_of(comm)?.get(), redundancy)?;
        slot.write(add(Entry {
            store: made,
            restored,
            comm,
        }));
        Ok(())
    })
}

/// `RTX_Store_restored`: copies the data the last recovery (or join) gave slot `slot` into
/// `buf` (`size` bytes: `MPI_ERR_TRUNCATE` if the slot holds more) and sets `*length` to its
/// length; with `buf` NULL and `size` 0, only the length.
///
/// # Safety
/// `buf` points at `size` writable bytes (or is NULL with `size` 0); `length` at a writable
/// `MPI_Aint`.
#[no_mangle]
pub unsafe extern "C" fn RTX_Store_restored(
    store: c_int,
    slot: c_int,
    buf: *mut c_void,
    size: MPI_Aint,
    length: *mut MPI_Aint,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let length = unsafe { out(length, "length")? };
        let entry = store_of(store)?;
        let entry = lock(&entry);
        let data = entry
            .restored
            .iter()
            .find(|(s, _)| *s as c_int == slot)
            .map(|(_, d)| d)
            .ok_or_else(|| {
                Failure::new(
                    MPI_ERR_ARG,
                    format!("the last recovery gave no slot {slot}"),
                )
            })?;
        length.write(data.len() as MPI_Aint);
        let size = usize::try_from(size).unwrap_or(0);
        if buf.is_null() && size == 0 {
            return Ok(());
        }
        if data.len() > size {
            return Err(Failure::new(
                MPI_ERR_TRUNCATE,
                format!("slot {slot} holds {} bytes, the buffer {size}", data.len()),
            ));
        }
        if buf.is_null() {
            return Err(Failure::new(MPI_ERR_BUFFER, "buf is NULL"));
        }
        // SAFETY: the caller gives `size` writable bytes at `buf`, at least `data.len()`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), data.len()) };
        Ok(())
    })
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Communicators and groups (semantics §3.4; MPI-4.0 chapter 7).

use std::ffi::{c_char, c_void};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

use std::sync::Arc;

use runthrough::{AgreementRequest, Comm, Group, GroupComparison, Rank};

use crate::attributes::Kind;
use crate::constants::*;
use crate::errors::{boundary, out, write_string, Failure};
use crate::intercomm::{inter_of, Inter};
use crate::point_to_point::array;
use crate::runtime::{
    agreement_comm_of, collective_comm_of, comm_of, with_runtime, CommBox, Making, Operation,
    PendingComm,
};

/// `MPI_Comm_rank`.
///
/// # Safety
/// `rank` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: c_int, rank: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let rank = unsafe { out(rank, "rank")? };
        if let Some(inter) = inter_of(comm)? {
            rank.write(inter.rank as c_int);
            return Ok(());
        }
        rank.write(comm_of(comm)?.get().rank() as c_int);
        Ok(())
    })
}

/// `MPI_Comm_size`: failed ranks included (ranks keep their numbers).
///
/// # Safety
/// `size` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: c_int, size: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        if let Some(inter) = inter_of(comm)? {
            size.write(inter.local.len() as c_int);
            return Ok(());
        }
        size.write(comm_of(comm)?.get().size() as c_int);
        Ok(())
    })
}

/// Registers `made` (a new communicator of parent `comm`, or none) and writes its handle.
fn register(
    comm: c_int,
    made: Option<runthrough::Comm>,
    newcomm: &crate::errors::Out<c_int>,
) -> Result<(), Failure> {
    let handle = match made {
        Some(made) => with_runtime(|runtime| Ok(runtime.add_comm(made, comm)))?,
        None => MPI_COMM_NULL,
    };
    newcomm.write(handle);
    Ok(())
}

/// `MPI_Comm_dup`: same ranks and numbering, the parent's G (semantics §3.4); of an
/// intercommunicator, the same groups. `MPI_Comm_idup` waited for at once.
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: c_int, newcomm: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        dup_into(comm, &newcomm)
    })
}

/// The body of `MPI_Comm_dup`: the duplicate made and waited for; `MPI_COMM_NULL` on a
/// failure.
fn dup_into(comm: c_int, newcomm: &crate::errors::Out<c_int>) -> Result<(), Failure> {
    let made = start_dup(comm)?.look(true).and_then(|made| {
        made.ok_or_else(|| Failure::new(MPI_ERR_INTERN, "a dup waited for did not finish"))
    });
    newcomm.write(*made.as_ref().unwrap_or(&MPI_COMM_NULL));
    made.map(drop)
}

/// Starts the duplicate of `comm`: one creation for an intracommunicator; for an
/// intercommunicator, one on each communicator that carries its traffic (both span the two
/// groups, so every member of both takes part in each).
fn start_dup(comm: c_int) -> Result<PendingComm, Failure> {
    let inter = inter_of(comm)?;
    let comms = match inter {
        Some(_) => crate::intercomm::backing(comm)?,
        None => vec![collective_comm_of(comm)?],
    };
    PendingComm::start(comm, Making::Dup(inter), comms, |comm| comm.idup())
}

/// `MPI_Comm_dup_with_info` (MPI-4.0 §7.4.2): `MPI_Comm_dup`; the info (a live handle,
/// `MPI_INFO_ENV` or `MPI_INFO_NULL`, else `MPI_ERR_INFO`) holds hints the library does not use.
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(
    comm: c_int,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        crate::info::check_handle(info, true)?;
        dup_into(comm, &newcomm)
    })
}

/// `MPI_Comm_idup` (MPI-4.0 §7.4.2): `MPI_Comm_dup` as a request; `*newcomm` is written when
/// it completes (`MPI_COMM_NULL` on a failure). This rank's part is made at once, or as soon
/// as the creations it started earlier on `comm` ended here: creations on a communicator end
/// in the order each rank starts them, whatever order their requests are completed in, and
/// progress while the rank waits in any call. Other collectives, point-to-point calls and
/// creations may run on `comm` while it is pending. The request cannot be freed with
/// `MPI_Request_free` or cancelled.
///
/// # Safety
/// `newcomm` is NULL or points at an `MPI_Comm` that stays valid, and that the program does
/// not access, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(
    comm: c_int,
    newcomm: *mut c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: as this function's contract says.
        unsafe { request_for(comm, newcomm, request, || start_dup(comm)) }
    })
}

/// `MPI_Comm_idup_with_info`: `MPI_Comm_idup`, the info checked as `MPI_Comm_dup_with_info`
/// checks it.
///
/// # Safety
/// As `MPI_Comm_idup`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup_with_info(
    comm: c_int,
    info: c_int,
    newcomm: *mut c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        crate::info::check_handle(info, true)?;
        // SAFETY: as this function's contract says.
        unsafe { request_for(comm, newcomm, request, || start_dup(comm)) }
    })
}

/// Checks `newcomm` and `request`, then starts `start`'s communicator and writes the handle
/// of its request to `*request`; `*newcomm` is written when the request completes.
///
/// # Safety
/// `newcomm` is NULL or points at an `MPI_Comm` that stays valid, and that the program does
/// not access, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
pub(crate) unsafe fn request_for(
    comm: c_int,
    newcomm: *mut c_int,
    request: *mut c_int,
    start: impl FnOnce() -> Result<PendingComm, Failure>,
) -> Result<(), Failure> {
    // SAFETY: checked for NULL by `out`.
    let request = unsafe { out(request, "request")? };
    if newcomm.is_null() {
        return Err(Failure::null("newcomm"));
    }
    // SAFETY: not NULL; by the contract above the int is reserved to the request until it
    // completes, and the request (in the table) is dropped at the latest at MPI_Finalize.
    let newcomm: &'static mut c_int = unsafe { &mut *newcomm };
    let operation = Operation::NewComm(Box::new(start()?), newcomm);
    request.write(with_runtime(|runtime| {
        Ok(runtime.add_request(operation, comm))
    })?);
    Ok(())
}

impl PendingComm {
    /// Starts making a communicator from `parent` (as `making` says): `start` on each of
    /// `comms`, in order.
    pub(crate) fn start(
        parent: c_int,
        making: Making,
        comms: Vec<Arc<CommBox>>,
        start: impl Fn(&'static Comm) -> runthrough::Result<AgreementRequest<'static, Comm>>,
    ) -> Result<PendingComm, Failure> {
        let mut pending = PendingComm {
            requests: Vec::with_capacity(comms.len()),
            made: Vec::new(),
            making,
            parent,
            comms,
        };
        for comm_box in &pending.comms {
            // SAFETY: as in `MPI_Irecv`: the communicator lives in the `Arc` that the same
            // `PendingComm` holds and drops after the request (field order); a request
            // started before a failing one is dropped (waited for) with it.
            let comm: &'static Comm = unsafe { &*std::ptr::from_ref(comm_box.get()) };
            pending.requests.push(start(comm)?);
        }
        Ok(pending)
    }

    /// Waits for the communicator when `block`, else tests for it: `Ok(None)` while it is in
    /// the making; its handle once it is made and registered (a dup's attributes copied: a
    /// failing copy callback frees it and fails).
    pub(crate) fn look(&mut self, block: bool) -> Result<Option<c_int>, Failure> {
        while let Some(request) = self.requests.get_mut(self.made.len()) {
            let looked = if block {
                request.wait().map(Some)
            } else {
                request.test()
            };
            match looked {
                Ok(None) => return Ok(None),
                Ok(Some(made)) => self.made.push(made),
                Err(error) => {
                    // The others end too (dropping a request waits for it); what they made
                    // is freed.
                    self.requests.clear();
                    self.made.clear();
                    return Err(error.into());
                }
            }
        }
        self.register().map(Some)
    }

    /// Registers the communicators made (each made once: later calls fail).
    fn register(&mut self) -> Result<c_int, Failure> {
        let mut made = std::mem::take(&mut self.made).into_iter();
        let parent = self.parent;
        let first = made
            .next()
            .ok_or_else(|| Failure::new(MPI_ERR_INTERN, "a communicator registered twice"))?;
        let handle = with_runtime(|runtime| {
            let handle = runtime.add_comm(first, parent);
            if let Making::Dup(Some(inter)) = &self.making {
                let receive = made.next().ok_or_else(|| {
                    Failure::new(MPI_ERR_INTERN, "an intercommunicator's dup made one side")
                })?;
                let inter = Inter::new(
                    Arc::new(CommBox::Owned(receive)),
                    inter.local.clone(),
                    inter.remote.clone(),
                    inter.rank,
                    inter.local_first(),
                );
                crate::intercomm::install(runtime.comm_mut(handle)?, inter);
            }
            Ok(handle)
        })?;
        if let Making::Dup(_) = self.making {
            dup_inherits(parent, handle)?;
        }
        Ok(handle)
    }
}

/// A duplicate `handle` of `parent` gets its attributes (through their copy callbacks) and its
/// topology, as MPI says; a failing copy callback frees the duplicate (the attributes copied
/// so far deleted) and fails with the callback's error.
fn dup_inherits(parent: c_int, handle: c_int) -> Result<(), Failure> {
    if let Err(failure) = crate::attributes::copy_all((Kind::Comm, parent), handle) {
        let mut handle = handle;
        // SAFETY: a live local int.
        unsafe { MPI_Comm_free(&mut handle) };
        return Err(failure);
    }
    if let Some(cart) = crate::topology::topology_of(parent) {
        with_runtime(|runtime| {
            runtime.comm_mut(handle)?.topology = Some(cart);
            Ok(())
        })?;
    }
    Ok(())
}

/// `MPI_Comm_set_info` (MPI-4.0 §7.4.4): checks the communicator and the info (a live handle,
/// `MPI_INFO_ENV` or `MPI_INFO_NULL`) and ignores the hints: the library uses none.
#[no_mangle]
pub extern "C" fn MPI_Comm_set_info(comm: c_int, info: c_int) -> c_int {
    boundary(comm, || {
        inter_of(comm)?; // any valid communicator, intercommunicators included
        crate::info::check_handle(info, true)
    })
}

/// `MPI_Comm_get_info` (MPI-4.0 §7.4.4): a new info holding the hints in use: none, so it is
/// empty. The program frees it.
///
/// # Safety
/// `info_used` is NULL or points at a writable `MPI_Info`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_info(comm: c_int, info_used: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let info_used = unsafe { out(info_used, "info_used")? };
        inter_of(comm)?; // any valid communicator, intercommunicators included
        info_used.write(crate::info::create_with(Vec::new()));
        Ok(())
    })
}

/// `MPI_Comm_split`: `color = MPI_UNDEFINED` gives `MPI_COMM_NULL`; on an intercommunicator
/// each group splits its own members (`crate::intercomm::split`).
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: c_int,
    color: c_int,
    key: c_int,
    newcomm: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let color = match color {
            MPI_UNDEFINED => None,
            c => Some(
                u32::try_from(c)
                    .map_err(|_| Failure::new(MPI_ERR_ARG, format!("invalid color {c}")))?,
            ),
        };
        if inter_of(comm)?.is_some() {
            newcomm.write(crate::intercomm::split(comm, color, key, None)?);
            return Ok(());
        }
        let made = agreement_comm_of(comm)?.get().split(color, key)?;
        register(comm, made, &newcomm)
    })
}

/// The bytes of a host identity in `MPI_Comm_split_type`'s all-gather.
const HOST_IDENTITY_LEN: usize = 192;

/// This rank's host, as `MPI_COMM_TYPE_SHARED` groups ranks: the kernel's boot id
/// (`/proc/sys/kernel/random/boot_id`, which differs between machines and between boots) and
/// the host name, zero-padded. Ranks with equal identities run under one kernel with one host
/// name. Where `/proc` cannot be read, the host name alone (or `localhost`).
fn host_identity() -> [u8; HOST_IDENTITY_LEN] {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let host = crate::environment::host_name().unwrap_or_else(|| "localhost".into());
    let text = format!("{}/{host}", boot.trim());
    let mut identity = [0u8; HOST_IDENTITY_LEN];
    // The first byte is never 0, so no live rank's identity equals the untouched slot of a
    // rank recognized as failed; a longer identity (a host name is at most 64 bytes) is cut.
    identity[0] = 1;
    let len = text.len().min(HOST_IDENTITY_LEN - 1);
    identity[1..=len].copy_from_slice(&text.as_bytes()[..len]);
    identity
}

/// `MPI_Comm_split_type` (MPI-4.0 §7.4.2). `MPI_COMM_TYPE_SHARED`: one communicator per host
/// (see [`host_identity`]), ranks ordered by `key`, then by rank in `comm`. The ranks learn
/// each other's hosts by an all-gather of their identities over `comm` and agree on its
/// outcome (so it fails at every rank or at none), then split with the lowest rank of their
/// host as the color: under failure it behaves as `MPI_Comm_split` (`MPIX_ERR_PROC_FAILED`
/// while a failure is not recognized; a rank recognized as failed takes no part).
/// `MPI_COMM_TYPE_HW_GUIDED` with the info hint `mpi_hw_resource_type` = `mpi_shared_memory`
/// (the one level MPI-4.0 §7.4.2 names) splits as `MPI_COMM_TYPE_SHARED`, among the ranks that
/// pass it. `MPI_UNDEFINED`, and the other hardware types and levels (`MPI_COMM_TYPE_HW_GUIDED`
/// without that hint, `_HW_UNGUIDED`, `_RESOURCE_GUIDED`: the library knows no level below the
/// host), take part and get `MPI_COMM_NULL`. Other types are `MPI_ERR_ARG`; an invalid info,
/// `MPI_ERR_INFO` (its other hints are ignored).
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: c_int,
    split_type: c_int,
    key: c_int,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let shared = match split_type {
            MPI_COMM_TYPE_SHARED => true,
            MPI_COMM_TYPE_HW_GUIDED => {
                crate::info::value_of(info, "mpi_hw_resource_type").as_deref()
                    == Some(b"mpi_shared_memory".as_slice())
            }
            MPI_UNDEFINED | MPI_COMM_TYPE_HW_UNGUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => false,
            other => {
                return Err(Failure::new(
                    MPI_ERR_ARG,
                    format!("invalid split_type {other}"),
                ))
            }
        };
        crate::info::check_handle(info, true)?;
        if inter_of(comm)?.is_some() {
            // Each group splits by host: the colors are numbered over the communicator that
            // spans both groups, so the two groups' members of one host share theirs.
            let spanning = crate::intercomm::spanning(comm)?;
            let color = host_color(spanning.get(), shared)?;
            newcomm.write(crate::intercomm::split(comm, color, key, None)?);
            return Ok(());
        }
        let parent = agreement_comm_of(comm)?;
        let made = parent.get().split(host_color(parent.get(), shared)?, key)?;
        register(comm, made, &newcomm)
    })
}

/// The color of this rank's host among `parent`'s ranks (the first rank there of the same
/// host), `None` unless `shared`: an all-gather of each rank's host identity, then an agreement
/// on its outcome, so that the call fails everywhere or nowhere before the split, as
/// `MPI_Comm_split`'s own creation does (an all-gather may fail at some ranks and not at
/// others).
fn host_color(parent: &runthrough::Comm, shared: bool) -> Result<Option<u32>, Failure> {
    let mine = host_identity();
    let mut all = Vec::new();
    all.try_reserve_exact(parent.size() as usize * HOST_IDENTITY_LEN)
        .map_err(|_| Failure::new(MPI_ERR_INTERN, "out of memory"))?;
    all.resize(parent.size() as usize * HOST_IDENTITY_LEN, 0u8);
    let gathered = parent.all_gather(&mine, &mut all);
    let agreed = parent.agree(u32::from(gathered.is_ok()));
    gathered?;
    if agreed? != 1 {
        return Err(Failure::new(
            MPIX_ERR_PROC_FAILED,
            "a process failed during the exchange of host identities",
        ));
    }
    let color = shared
        .then(|| {
            all.chunks_exact(HOST_IDENTITY_LEN)
                .position(|theirs| theirs == mine)
                .map(|rank| rank as u32)
        })
        .flatten();
    if shared && color.is_none() {
        return Err(Failure::new(
            MPI_ERR_INTERN,
            "this rank's host identity is missing from the all-gather",
        ));
    }
    Ok(color)
}

/// `MPI_Comm_create`: collective over the parent's participants; on an intercommunicator the
/// group is a subset of the local group, and the new intercommunicator joins it with the remote
/// group's (`crate::intercomm::split`; `MPI_ERR_GROUP` for a group with a process outside the
/// local group, `MPI_ERR_ARG` then at the other ranks).
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(comm: c_int, group: c_int, newcomm: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let group = with_runtime(|runtime| runtime.group(group).cloned())?;
        if let Some(inter) = inter_of(comm)? {
            // The group is a subset of the local group: its members make the new local group,
            // in its order. A wrong group is refused at every rank, not here alone.
            let worlds = group.world_ranks();
            let refused = worlds.iter().find(|w| !inter.local.contains(w)).map(|w| {
                Failure::new(
                    MPI_ERR_GROUP,
                    format!("MPI_COMM_WORLD rank {w} of the group is not in the local group"),
                )
            });
            let me = inter.local[inter.rank as usize];
            let place = worlds.iter().position(|&w| w == me);
            let color = place.map(|_| 0);
            let key = place.unwrap_or(0) as i32;
            newcomm.write(crate::intercomm::split(comm, color, key, refused)?);
            return Ok(());
        }
        let made = agreement_comm_of(comm)?.get().create(&group)?;
        register(comm, made, &newcomm)
    })
}

/// `MPI_Comm_create_group`: collective over the members of `group` only (the other ranks of
/// `comm` do not call it; one that does gets `MPI_COMM_NULL`); every member gets the new
/// communicator, or the same `MPIX_ERR_PROC_FAILED` when a member failed (see
/// `runthrough::Comm::create_group`). Members that make several such calls with the same
/// group and tag make them in the same order.
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: c_int,
    group: c_int,
    tag: c_int,
    newcomm: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let group = with_runtime(|runtime| runtime.group(group).cloned())?;
        let made = comm_of(comm)?.get().create_group(&group, tag)?;
        register(comm, made, &newcomm)
    })
}

/// `MPI_Comm_free`: local; runs the delete callbacks of its attributes, then sets the handle
/// to `MPI_COMM_NULL`. Pending requests on it complete normally, and report their errors
/// through its error handler. `MPI_COMM_WORLD` and `MPI_COMM_SELF` cannot be freed
/// (`MPI_ERR_COMM`).
///
/// # Safety
/// `comm` is NULL or points at a readable and writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    // SAFETY: checked for NULL by `out`.
    let slot = match unsafe { out(comm, "comm") } {
        Ok(slot) => slot,
        Err(failure) => return crate::errors::raise(MPI_COMM_WORLD, failure),
    };
    let handle = slot.read();
    boundary(handle, || {
        if handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF {
            return Err(Failure::new(
                MPI_ERR_COMM,
                "a predefined communicator (MPI_COMM_WORLD, MPI_COMM_SELF) cannot be freed",
            ));
        }
        with_runtime(|runtime| runtime.comm(handle).map(drop))?;
        // The attributes' delete callbacks run first (MPI-4.0 §7.7.2), without the lock.
        crate::attributes::delete_all((Kind::Comm, handle))?;
        let entry = with_runtime(|runtime| {
            runtime.comm(handle)?;
            let entry = runtime.comms.remove(&handle);
            if let Some(entry) = &entry {
                if runtime.requests.values().any(|r| r.comm == handle) {
                    runtime.freed_handlers.insert(handle, entry.errhandler.1);
                }
            }
            Ok(entry)
        })?;
        // Released when its last request lets go of it (now, mostly): outside the lock.
        drop(entry);
        slot.write(MPI_COMM_NULL);
        Ok(())
    })
}

/// `MPI_Comm_group`.
///
/// # Safety
/// `group` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: c_int, group: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let group = unsafe { out(group, "group")? };
        if let Some(inter) = inter_of(comm)? {
            let handle =
                with_runtime(|runtime| crate::intercomm::world_group(runtime, &inter.local))?;
            group.write(handle);
            return Ok(());
        }
        let made = comm_of(comm)?.get().group();
        group.write(with_runtime(|runtime| Ok(runtime.add_group(made)))?);
        Ok(())
    })
}

/// `MPI_Group_size`.
///
/// # Safety
/// `size` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        size.write(with_runtime(|runtime| Ok(runtime.group(group)?.size()))? as c_int);
        Ok(())
    })
}

/// `MPI_Group_rank`: `MPI_UNDEFINED` when the caller is not a member.
///
/// # Safety
/// `rank` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let rank = unsafe { out(rank, "rank")? };
        let mine = with_runtime(|runtime| Ok(runtime.group(group)?.rank()))?;
        rank.write(mine.map_or(MPI_UNDEFINED, |r| r as c_int));
        Ok(())
    })
}

/// Group ranks from C.
///
/// # Safety
/// `ranks` is NULL or points at `n` readable ints.
unsafe fn group_ranks(n: c_int, ranks: *const c_int) -> Result<Vec<Rank>, Failure> {
    // SAFETY: forwarded contract; only read.
    let ranks = unsafe { array(ranks.cast_mut(), n, "ranks")? };
    ranks
        .iter()
        .map(|&r| {
            Rank::try_from(r).map_err(|_| Failure::new(MPI_ERR_RANK, format!("invalid rank {r}")))
        })
        .collect()
}

/// Makes a group from one or two others and writes its handle.
///
/// # Safety
/// `newgroup` is NULL or points at a writable `MPI_Group`.
unsafe fn derive_group(
    newgroup: *mut c_int,
    make: impl FnOnce(&crate::runtime::Runtime) -> Result<Group, Failure>,
) -> Result<(), Failure> {
    // SAFETY: checked for NULL by `out`.
    let newgroup = unsafe { out(newgroup, "newgroup")? };
    let handle = with_runtime(|runtime| {
        let made = make(runtime)?;
        Ok(runtime.add_group(made))
    })?;
    newgroup.write(handle);
    Ok(())
}

/// `MPI_Group_incl`.
///
/// # Safety
/// `ranks` is NULL or points at `n` readable ints; `newgroup` is NULL or points at a writable
/// `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let ranks = unsafe { group_ranks(n, ranks)? };
        // SAFETY: forwarded contract.
        unsafe { derive_group(newgroup, |rt| Ok(rt.group(group)?.incl(&ranks)?)) }
    })
}

/// `MPI_Group_excl`.
///
/// # Safety
/// As `MPI_Group_incl`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        let ranks = unsafe { group_ranks(n, ranks)? };
        // SAFETY: forwarded contract.
        unsafe { derive_group(newgroup, |rt| Ok(rt.group(group)?.excl(&ranks)?)) }
    })
}

/// The ranks that `n` triplets `(first, last, stride)` of `MPI_Group_range_incl` /
/// `_range_excl` name, in order. At most `limit` ranks (the group's size: more would repeat one).
///
/// # Safety
/// `ranges` is NULL or points at `n` readable triplets of ints.
///
/// # Errors
/// `MPI_ERR_ARG` for a NULL `ranges` with `n > 0`, a zero stride, or a range that runs away from
/// its last rank; `MPI_ERR_RANK` for more ranks than the group holds or a negative rank.
unsafe fn range_ranks(
    n: c_int,
    ranges: *const [c_int; 3],
    limit: u32,
) -> Result<Vec<Rank>, Failure> {
    // SAFETY: forwarded contract; only read.
    let ranges = unsafe { array(ranges.cast_mut(), n, "ranges")? };
    let mut ranks = Vec::new();
    for &[first, last, stride] in ranges.iter() {
        if stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last) {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("invalid range ({first}, {last}, {stride})"),
            ));
        }
        let mut rank = i64::from(first);
        while (stride > 0 && rank <= i64::from(last)) || (stride < 0 && rank >= i64::from(last)) {
            if ranks.len() >= limit as usize {
                return Err(Failure::new(
                    MPI_ERR_RANK,
                    format!("the ranges name more ranks than the group's {limit}"),
                ));
            }
            ranks.push(
                Rank::try_from(rank)
                    .map_err(|_| Failure::new(MPI_ERR_RANK, format!("invalid rank {rank}")))?,
            );
            rank += i64::from(stride);
        }
    }
    Ok(ranks)
}

/// `MPI_Group_range_incl` / `_range_excl`: `pick` (`Group::incl` or `Group::excl`) of the
/// ranks the triplets name.
///
/// # Safety
/// As `MPI_Group_range_incl`.
unsafe fn range_group(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
    pick: fn(&Group, &[Rank]) -> runthrough::Result<Group>,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let size = with_runtime(|rt| Ok(rt.group(group)?.size()))?;
        // SAFETY: forwarded contract.
        let ranks = unsafe { range_ranks(n, ranges, size)? };
        // SAFETY: forwarded contract.
        unsafe { derive_group(newgroup, |rt| Ok(pick(rt.group(group)?, &ranks)?)) }
    })
}

/// `MPI_Group_range_incl`: the ranks of the triplets `(first, last, stride)`, in that order
/// (as `MPI_Group_incl` of them).
///
/// # Safety
/// `ranges` is NULL or points at `n` readable triplets; `newgroup` is NULL or points at a
/// writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_incl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { range_group(group, n, ranges, newgroup, Group::incl) }
}

/// `MPI_Group_range_excl`: the group without the ranks of the triplets (as `MPI_Group_excl`).
///
/// # Safety
/// As `MPI_Group_range_incl`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_excl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { range_group(group, n, ranges, newgroup, Group::excl) }
}

/// `MPI_Group_union`.
///
/// # Safety
/// `newgroup` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_union(
    group1: c_int,
    group2: c_int,
    newgroup: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe {
            derive_group(newgroup, |rt| {
                Ok(rt.group(group1)?.union(rt.group(group2)?))
            })
        }
    })
}

/// `MPI_Group_intersection`.
///
/// # Safety
/// `newgroup` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_intersection(
    group1: c_int,
    group2: c_int,
    newgroup: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe {
            derive_group(newgroup, |rt| {
                Ok(rt.group(group1)?.intersection(rt.group(group2)?))
            })
        }
    })
}

/// `MPI_Group_difference`.
///
/// # Safety
/// `newgroup` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_difference(
    group1: c_int,
    group2: c_int,
    newgroup: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract.
        unsafe {
            derive_group(newgroup, |rt| {
                Ok(rt.group(group1)?.difference(rt.group(group2)?))
            })
        }
    })
}

/// `MPI_Group_translate_ranks`: `MPI_UNDEFINED` where the process is not in `group2`;
/// `MPI_PROC_NULL` translates to itself.
///
/// # Safety
/// `ranks1` is NULL or points at `n` readable ints; `ranks2` is NULL or points at `n` writable
/// ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    group1: c_int,
    n: c_int,
    ranks1: *const c_int,
    group2: c_int,
    ranks2: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: forwarded contract; only read.
        let input = unsafe { array(ranks1.cast_mut(), n, "ranks1")? }.to_vec();
        // SAFETY: forwarded contract.
        let output = unsafe { array(ranks2, n, "ranks2")? };
        let translated = with_runtime(|runtime| {
            let from = runtime.group(group1)?;
            let to = runtime.group(group2)?;
            input
                .iter()
                .map(|&r| {
                    if r == MPI_PROC_NULL {
                        return Ok(MPI_PROC_NULL);
                    }
                    match Rank::try_from(r) {
                        Ok(rank) if rank < from.size() => Ok(from.translate_ranks(&[rank], to)[0]
                            .map_or(MPI_UNDEFINED, |t| t as c_int)),
                        _ => Err(Failure::new(
                            MPI_ERR_RANK,
                            format!("rank {r} is not in the group of size {}", from.size()),
                        )),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        output.copy_from_slice(&translated);
        Ok(())
    })
}

/// `MPI_Group_compare`: `MPI_IDENT`, `MPI_SIMILAR` or `MPI_UNEQUAL`.
///
/// # Safety
/// `result` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(
    group1: c_int,
    group2: c_int,
    result: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let result = unsafe { out(result, "result")? };
        let comparison =
            with_runtime(|runtime| Ok(runtime.group(group1)?.compare(runtime.group(group2)?)))?;
        result.write(match comparison {
            GroupComparison::Identical => MPI_IDENT,
            GroupComparison::Similar => MPI_SIMILAR,
            GroupComparison::Unequal => MPI_UNEQUAL,
        });
        Ok(())
    })
}

/// `MPI_Group_free`: sets the handle to `MPI_GROUP_NULL`. Freeing `MPI_GROUP_EMPTY`, which the
/// group constructors return for a group of no process, only sets the handle.
///
/// # Safety
/// `group` is NULL or points at a readable and writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(group, "group")? };
        let handle = slot.read();
        with_runtime(|runtime| {
            if handle == MPI_GROUP_EMPTY {
                return Ok(());
            }
            runtime.group(handle)?;
            runtime.groups.remove(&handle);
            Ok(())
        })?;
        slot.write(MPI_GROUP_NULL);
        Ok(())
    })
}

/// `MPI_Comm_compare` (MPI-4.0 §7.4.1): `MPI_IDENT` for the same handle, `MPI_CONGRUENT` for
/// two communicators of the same ranks in the same order, `MPI_SIMILAR` for the same ranks in
/// another order, `MPI_UNEQUAL` otherwise. Local; failed ranks count as members (ranks keep their
/// numbers: docs/src/semantics.md §3.4).
///
/// # Safety
/// `result` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(comm1: c_int, comm2: c_int, result: *mut c_int) -> c_int {
    boundary(comm1, || {
        // SAFETY: checked for NULL by `out`.
        let result = unsafe { out(result, "result")? };
        match (inter_of(comm1)?, inter_of(comm2)?) {
            (None, None) => {}
            (Some(first), second) => {
                let same = comm1 == comm2;
                result.write(if same {
                    MPI_IDENT
                } else {
                    crate::intercomm::compare(&first, second.as_deref())
                });
                return Ok(());
            }
            (None, Some(_)) => {
                result.write(MPI_UNEQUAL);
                return Ok(());
            }
        }
        let first = comm_of(comm1)?;
        let second = comm_of(comm2)?;
        result.write(if comm1 == comm2 {
            MPI_IDENT
        } else {
            match first.get().group().compare(&second.get().group()) {
                GroupComparison::Identical => MPI_CONGRUENT,
                GroupComparison::Similar => MPI_SIMILAR,
                GroupComparison::Unequal => MPI_UNEQUAL,
            }
        });
        Ok(())
    })
}

/// `MPI_Comm_set_name` (MPI-4.0 §7.10): local; a name longer than `MPI_MAX_OBJECT_NAME - 1`
/// bytes is truncated.
///
/// # Safety
/// `comm_name` is NULL or points at a NUL-terminated string (read up to its NUL or
/// `MPI_MAX_OBJECT_NAME - 1` bytes, whichever comes first).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: c_int, comm_name: *const c_char) -> c_int {
    boundary(comm, || {
        if comm_name.is_null() {
            return Err(Failure::null("comm_name"));
        }
        let mut bytes = Vec::new();
        while bytes.len() < MPI_MAX_OBJECT_NAME as usize - 1 {
            // SAFETY: not NULL and, by the caller's contract, readable up to its NUL, which
            // has not come yet.
            let byte = unsafe { comm_name.add(bytes.len()).read() } as u8;
            if byte == 0 {
                break;
            }
            bytes.push(byte);
        }
        let name = String::from_utf8_lossy(&bytes).into_owned();
        with_runtime(|runtime| {
            runtime.comm_mut(comm)?.name = name;
            Ok(())
        })
    })
}

/// `MPI_Comm_get_name` (MPI-4.0 §7.10): the name set last, `MPI_COMM_WORLD` / `MPI_COMM_SELF`
/// for the predefined communicators, or the empty string.
///
/// # Safety
/// `comm_name` is NULL or points at `MPI_MAX_OBJECT_NAME` writable bytes; `resultlen` is NULL
/// or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(
    comm: c_int,
    comm_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let name = with_runtime(|runtime| Ok(runtime.comm(comm)?.name.clone()))?;
        // SAFETY: forwarded contract.
        unsafe {
            write_string(
                comm_name,
                MPI_MAX_OBJECT_NAME,
                &name,
                resultlen,
                "comm_name",
            )
        }
    })
}

/// The values of the predefined attributes, which `MPI_Comm_get_attr` hands out pointers to.
static TAG_UB: c_int = runthrough::TAG_UB;
static WTIME_IS_GLOBAL: c_int = 0;
/// `MPI_HOST`: no process is singled out as the host.
static HOST: c_int = MPI_PROC_NULL;
/// `MPI_IO`: every process may do I/O with the language's own calls.
static IO: c_int = MPI_ANY_SOURCE;
/// `MPIX_FT`'s value: this library tolerates failures.
static FAULT_TOLERANT: c_int = 1;
static UNIVERSE_SIZE: AtomicI32 = AtomicI32::new(0);
/// `MPI_APPNUM`'s value at the ranks the launcher started: they run one program.
static APPNUM: c_int = 0;
static LAST_USED_CODE: AtomicI32 = AtomicI32::new(0);

/// `MPI_Comm_get_attr` (MPI-4.0 §7.7.2) for the predefined attributes, on any communicator:
/// `MPI_TAG_UB` (the largest tag), `MPI_WTIME_IS_GLOBAL` (0: the clocks of different hosts
/// are not synchronized), `MPI_UNIVERSE_SIZE` (how many processes the job may reach in all,
/// spawned ones included: `rtrun --universe-size`, the size of `MPI_COMM_WORLD` under other
/// launchers), `MPI_LASTUSEDCODE` (the largest error code, `MPI_ERR_LASTCODE` until the
/// program adds some), `MPI_HOST` (`MPI_PROC_NULL`: no host process), `MPI_IO`
/// (`MPI_ANY_SOURCE`: every process may do I/O), `MPI_APPNUM` (0 at the ranks the launcher
/// started, which run one program; not set at spawned ranks). As MPI says, `*attribute_val` becomes a pointer to the int value and `*flag`
/// is 1. A key of `MPI_Comm_create_keyval`: `*attribute_val` becomes the value stored by
/// `MPI_Comm_set_attr` and `*flag` 1, or `*flag` 0 when the communicator has none; an unknown
/// key is `MPI_ERR_KEYVAL`.
///
/// # Safety
/// `attribute_val` is NULL or points at a writable `void *`; `flag` is NULL or points at a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: c_int,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let value = unsafe { out(attribute_val.cast::<*const c_int>(), "attribute_val")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        inter_of(comm)?; // any valid communicator, intercommunicators included
        let pointer: *const c_int = match comm_keyval {
            MPI_TAG_UB => &TAG_UB,
            MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL,
            MPI_HOST => &HOST,
            MPI_IO => &IO,
            MPIX_FT => &FAULT_TOLERANT,
            MPI_APPNUM => {
                // Not set at a spawned rank: which of the spawn's programs it runs is not kept.
                if with_runtime(|runtime| Ok(runtime.parent.is_some()))? {
                    flag.write(0);
                    return Ok(());
                }
                &APPNUM
            }
            MPI_LASTUSEDCODE => {
                LAST_USED_CODE.store(crate::errors::last_used_code(), Ordering::Relaxed);
                LAST_USED_CODE.as_ptr()
            }
            MPI_UNIVERSE_SIZE => {
                let universe = with_runtime(|runtime| Ok(runtime.universe.universe_size()))?;
                UNIVERSE_SIZE.store(universe as i32, Ordering::Relaxed);
                UNIVERSE_SIZE.as_ptr()
            }
            MPI_KEYVAL_INVALID => {
                return Err(Failure::new(
                    MPI_ERR_KEYVAL,
                    "invalid attribute key MPI_KEYVAL_INVALID",
                ))
            }
            user => {
                // A key of MPI_Comm_create_keyval: its value is the address stored.
                let stored = crate::attributes::get((Kind::Comm, comm), user)?;
                value.write(stored.unwrap_or(0) as *const c_int);
                flag.write(c_int::from(stored.is_some()));
                return Ok(());
            }
        };
        value.write(pointer);
        flag.write(1);
        Ok(())
    })
}

/// `MPI_Comm_test_inter`: whether `comm` is an intercommunicator (made by
/// `MPI_Intercomm_create`).
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: c_int, flag: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let inter = crate::intercomm::inter_of(comm)?;
        flag.write(c_int::from(inter.is_some()));
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("communicators.rs");

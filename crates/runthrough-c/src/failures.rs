// SPDX-License-Identifier: MIT OR Apache-2.0
//! The seed's calls (semantics §2, §5): `MPI_Comm_validate_{local,global}`, the accessors, the
//! thread's two variants, and the ULFM calls (semantics §3.5).

use std::os::raw::c_int;

use runthrough::{Error, FailureView, RankState};

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::point_to_point::array;
use crate::runtime::{
    agreement_comm_of, comm_of, with_runtime, Making, Operation, PendingAgreement, PendingComm,
};

/// Which view a call reads or updates.
#[derive(Clone, Copy)]
enum Which {
    Local,
    Global,
}

/// Updates the view (`validate_local`: local; `validate_global`: collective, fault-tolerant).
fn validate(comm: c_int, which: Which) -> Result<FailureView, Failure> {
    Ok(match which {
        Which::Local => comm_of(comm)?.get().validate_local()?,
        Which::Global => agreement_comm_of(comm)?.get().validate_global()?,
    })
}

/// The view as left by the last update call (accessors never change it).
fn view(comm: c_int, which: Which) -> Result<FailureView, Failure> {
    let comm = comm_of(comm)?;
    Ok(match which {
        Which::Local => comm.get().local_view()?,
        Which::Global => comm.get().global_view()?,
    })
}

/// A query (`type`): an OR of `MPI_RANK_STATE_*` bits.
fn query(kind: c_int) -> Result<RankState, Failure> {
    u32::try_from(kind)
        .ok()
        .and_then(RankState::from_bits)
        .ok_or_else(|| {
            Failure::new(
                MPI_ERR_ARG,
                format!("type {kind} is not an OR of MPI_RANK_STATE_* bits"),
            )
        })
}

fn count_of(view: &FailureView, kind: c_int) -> Result<c_int, Failure> {
    Ok(view.count(query(kind)?) as c_int)
}

/// `MPI_Comm_validate_local` (semantics §2.1): L := G ∪ {failures this rank's detector knows now};
/// `num_failed = |L|`. Local. Acknowledges those failures for `MPI_ANY_SOURCE` receives.
///
/// # Safety
/// `num_failed` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_local(comm: c_int, num_failed: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let num_failed = unsafe { out(num_failed, "num_failed")? };
        num_failed.write(validate(comm, Which::Local)?.num_failed() as c_int);
        Ok(())
    })
}

/// `MPI_Comm_validate_global` (semantics §2.1): all live ranks agree on G; L := G;
/// `num_failed = |G|`. Collective over the OK ranks of G, fault-tolerant.
///
/// # Safety
/// `num_failed` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_global(comm: c_int, num_failed: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let num_failed = unsafe { out(num_failed, "num_failed")? };
        num_failed.write(validate(comm, Which::Global)?.num_failed() as c_int);
        Ok(())
    })
}

/// The thread's first variant: validate, and `new_failures` = whether any rank is `MOD_NEW` in
/// the new L.
///
/// # Safety
/// `new_failures` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_local_flag(
    comm: c_int,
    new_failures: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(new_failures, "new_failures")? };
        flag.write(c_int::from(validate(comm, Which::Local)?.new_failures()));
        Ok(())
    })
}

/// The thread's first variant, global: `new_failures` = whether any rank is `MOD_NEW` in the
/// new G.
///
/// # Safety
/// `new_failures` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_global_flag(
    comm: c_int,
    new_failures: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(new_failures, "new_failures")? };
        flag.write(c_int::from(validate(comm, Which::Global)?.new_failures()));
        Ok(())
    })
}

/// The thread's second variant ("combine validate and get_num_state"): validate, and `count` =
/// the number of ranks of the new L that match `type`.
///
/// # Safety
/// `count` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_local_count(
    comm: c_int,
    kind: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        query(kind)?;
        count.write(count_of(&validate(comm, Which::Local)?, kind)?);
        Ok(())
    })
}

/// The thread's second variant, global: `count` = the number of ranks of the new G that match
/// `type`.
///
/// # Safety
/// `count` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_validate_global_count(
    comm: c_int,
    kind: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        query(kind)?;
        count.write(count_of(&validate(comm, Which::Global)?, kind)?);
        Ok(())
    })
}

/// The accessors `MPI_Comm_get_state_{local,global}` (semantics §2.1).
///
/// # Safety
/// `outcount` is NULL or points at a writable int; `rank_infos` is NULL or points at `incount`
/// writable `MPI_Rank_info`s.
unsafe fn get_state(
    comm: c_int,
    which: Which,
    kind: c_int,
    incount: c_int,
    outcount: *mut c_int,
    rank_infos: *mut MPI_Rank_info,
) -> Result<(), Failure> {
    // SAFETY: checked for NULL by `out`.
    let outcount = unsafe { out(outcount, "outcount")? };
    // SAFETY: forwarded contract (NULL allowed only with incount = 0).
    let infos = unsafe { array(rank_infos, incount, "rank_infos")? };
    let query = query(kind)?;
    let view = view(comm, which)?;
    let matches = view.count(query);
    if infos.is_empty() {
        outcount.write(matches as c_int);
        return Ok(());
    }
    let mut written = 0;
    for (slot, info) in infos.iter_mut().zip(view.ranks(query)) {
        *slot = MPI_Rank_info {
            rank: info.rank as c_int,
            state: info.state.bits() as c_int,
        };
        written += 1;
    }
    outcount.write(written);
    if infos.len() < matches {
        return Err(Error::Size { needed: matches }.into());
    }
    Ok(())
}

/// `MPI_Comm_get_state_local`: the ranks of L that match `type`, in rank order (semantics §2.1):
/// `incount = 0` sets `outcount` to the number of matches m (`rank_infos` may be NULL);
/// `incount >= m` writes m entries; `0 < incount < m` writes the first `incount`, sets
/// `outcount = incount` and returns `MPI_ERR_SIZE`.
///
/// # Safety
/// `outcount` is NULL or points at a writable int; `rank_infos` is NULL or points at `incount`
/// writable `MPI_Rank_info`s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_state_local(
    comm: c_int,
    kind: c_int,
    incount: c_int,
    outcount: *mut c_int,
    rank_infos: *mut MPI_Rank_info,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || unsafe {
        get_state(comm, Which::Local, kind, incount, outcount, rank_infos)
    })
}

/// `MPI_Comm_get_state_global`: as `MPI_Comm_get_state_local`, on G.
///
/// # Safety
/// As `MPI_Comm_get_state_local`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_state_global(
    comm: c_int,
    kind: c_int,
    incount: c_int,
    outcount: *mut c_int,
    rank_infos: *mut MPI_Rank_info,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || unsafe {
        get_state(comm, Which::Global, kind, incount, outcount, rank_infos)
    })
}

/// `MPI_Comm_get_num_state_local`: how many ranks of L match `type`.
///
/// # Safety
/// `count` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_num_state_local(
    comm: c_int,
    kind: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        count.write(count_of(&view(comm, Which::Local)?, kind)?);
        Ok(())
    })
}

/// `MPI_Comm_get_num_state_global`: how many ranks of G match `type`.
///
/// # Safety
/// `count` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_num_state_global(
    comm: c_int,
    kind: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        count.write(count_of(&view(comm, Which::Global)?, kind)?);
        Ok(())
    })
}

/// `MPIX_Comm_revoke` (semantics §3.5): not collective. On an intercommunicator it revokes both
/// communicators that carry its traffic, so every member of both groups sees it revoked.
#[no_mangle]
pub extern "C" fn MPIX_Comm_revoke(comm: c_int) -> c_int {
    boundary(comm, || {
        for backing in crate::intercomm::backing(comm)? {
            backing.get().revoke()?;
        }
        Ok(())
    })
}

/// `MPIX_Comm_is_revoked`.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_is_revoked(comm: c_int, flag: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let backing = crate::intercomm::backing(comm)?;
        flag.write(c_int::from(backing.iter().any(|b| b.get().is_revoked())));
        Ok(())
    })
}

/// `MPIX_Comm_shrink` (semantics §3.5): a new communicator of the survivors, in their order, with
/// empty views; it inherits the error handler.
///
/// # Safety
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_shrink(comm: c_int, newcomm: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let made = agreement_comm_of(comm)?.get().shrink()?;
        newcomm.write(with_runtime(|runtime| Ok(runtime.add_comm(made, comm)))?);
        Ok(())
    })
}

/// `MPIX_Comm_agree` (semantics §3.5): `*flag` becomes the bitwise AND over the contributors. With
/// `MPIX_ERR_PROC_FAILED` (a participant failed before contributing and not every contributor
/// had acknowledged it) `*flag` is still the agreed value.
///
/// # Safety
/// `flag` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_agree(comm: c_int, flag: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        let mine = flag.read() as u32;
        let agreed = if crate::intercomm::inter_of(comm)?.is_some() {
            crate::intercomm::agree(comm, mine)?
        } else {
            agreement_comm_of(comm)?.get().agree(mine)
        };
        match agreed {
            Ok(agreed) => {
                flag.write(agreed as c_int);
                Ok(())
            }
            Err(Error::AgreeProcFailed { flag: agreed }) => {
                flag.write(agreed as c_int);
                Err(Error::AgreeProcFailed { flag: agreed }.into())
            }
            Err(error) => Err(error.into()),
        }
    })
}

/// `MPIX_Comm_iagree`: `MPIX_Comm_agree` as a request, progressed by the library; `*flag` is
/// written when the request completes (with `MPIX_ERR_PROC_FAILED` too, as the blocking call).
/// A later collective call on `comm` completes it first (collectives are ordered).
///
/// # Safety
/// `flag` is NULL or points at an int that stays valid, and that the program does not access,
/// until the request completes; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_iagree(
    comm: c_int,
    flag: *mut c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        if flag.is_null() {
            return Err(Failure::null("flag"));
        }
        // SAFETY: not NULL; by the contract above the int is reserved to the request until it
        // completes, and the request (in the table) is dropped at the latest at MPI_Finalize.
        let flag: &'static mut c_int = unsafe { &mut *flag };
        let comm_box = agreement_comm_of(comm)?;
        // SAFETY: as in `MPI_Irecv`: the communicator lives in the `Arc` that the same
        // `PendingAgreement` holds and drops after the request (field order).
        let comm_ref: &'static runthrough::Comm = unsafe { &*std::ptr::from_ref(comm_box.get()) };
        let pending = comm_ref.iagree(*flag as u32)?;
        let operation = Operation::Agreement(PendingAgreement {
            request: pending,
            flag,
            comm: comm_box,
        });
        let handle = with_runtime(|runtime| {
            let handle = runtime.add_request(operation, comm);
            runtime.comm_mut(comm)?.agreements.push(handle);
            Ok(handle)
        })?;
        request.write(handle);
        Ok(())
    })
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures this rank's detector knows
/// (`validate_local`: L is updated), so `MPI_ANY_SOURCE` receives work again.
#[no_mangle]
pub extern "C" fn MPIX_Comm_failure_ack(comm: c_int) -> c_int {
    boundary(comm, || {
        if crate::intercomm::inter_of(comm)?.is_some() {
            // Both communicators that carry its traffic: wildcard receives and agreements.
            for backing in crate::intercomm::backing(comm)? {
                backing.get().validate_local()?;
            }
            return Ok(());
        }
        validate(comm, Which::Local).map(drop)
    })
}

/// `MPIX_Comm_failure_get_acked`: the group of the failed ranks of L (acknowledged by the last
/// `MPIX_Comm_failure_ack`, `MPI_Comm_validate_local` or `_global`), in rank order.
///
/// # Safety
/// `failedgrp` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_failure_get_acked(comm: c_int, failedgrp: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        group_of_failures(comm, failedgrp, |comm| {
            Ok(comm
                .local_view()?
                .failed()
                .iter()
                .map(|info| info.rank)
                .collect())
        })
    }
}

/// Writes in `*failedgrp` a new group of the communicator's ranks that `ranks` lists, in its
/// order.
///
/// # Safety
/// `failedgrp` is NULL or points at a writable `MPI_Group`.
unsafe fn group_of_failures(
    comm: c_int,
    failedgrp: *mut c_int,
    ranks: impl FnOnce(&runthrough::Comm) -> Result<Vec<u32>, Error>,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let failedgrp = unsafe { out(failedgrp, "failedgrp")? };
        let comm_box = comm_of(comm)?;
        let group = comm_box.get().group().incl(&ranks(comm_box.get())?)?;
        failedgrp.write(with_runtime(|runtime| Ok(runtime.add_group(group)))?);
        Ok(())
    })
}

/// `MPIX_Comm_get_failed` (MPI-5 FT chapter): the group of the failures this rank knows in the
/// communicator, in the order it learned of them (append-only from call to call).
///
/// # Safety
/// `failedgrp` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_get_failed(comm: c_int, failedgrp: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { group_of_failures(comm, failedgrp, runthrough::Comm::detected_failures) }
}

/// `MPIX_Comm_ack_failed` (MPI-5 FT chapter): acknowledges the first `num_to_ack` failures of
/// `MPIX_Comm_get_failed`'s group (puts them in L); `num_acked` becomes the number of
/// acknowledged failures (|L|). Local.
///
/// # Safety
/// `num_acked` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_ack_failed(
    comm: c_int,
    num_to_ack: c_int,
    num_acked: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let num_acked = unsafe { out(num_acked, "num_acked")? };
        let count = usize::try_from(num_to_ack)
            .map_err(|_| Failure::new(MPI_ERR_ARG, format!("negative num_to_ack {num_to_ack}")))?;
        let local = comm_of(comm)?.get().acknowledge_failures(count)?;
        num_acked.write(local.num_failed() as c_int);
        Ok(())
    })
}

/// `MPIX_Comm_ishrink`: `MPIX_Comm_shrink` as a request, progressed by the library;
/// `*newcomm` is written when the request completes. This rank's contribution is made at once.
/// While it is pending it counts as a collective call on `comm` (another collective call there
/// fails with `MPI_ERR_OTHER`), and the `MPIX_Comm_iagree` requests pending on `comm` complete
/// before it starts. The request cannot be freed with `MPI_Request_free`.
///
/// # Safety
/// `newcomm` is NULL or points at an `MPI_Comm` that stays valid, and that the program does
/// not access, until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_ishrink(
    comm: c_int,
    newcomm: *mut c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let start = || {
            let comms = vec![agreement_comm_of(comm)?];
            PendingComm::start(comm, Making::Shrink, comms, |comm| comm.ishrink())
        };
        // SAFETY: as this function's contract says.
        unsafe { crate::communicators::request_for(comm, newcomm, request, start) }
    })
}

// The MPI-5 names of the fault-tolerance calls (the FT chapter of MPI 5.0), with the behaviour
// of their MPIX_ counterparts above; the error classes MPI_ERR_PROC_FAILED,
// MPI_ERR_PROC_FAILED_PENDING and MPI_ERR_REVOKED equal the MPIX_ ones.

/// `MPI_Comm_revoke`: `MPIX_Comm_revoke`.
#[no_mangle]
pub extern "C" fn MPI_Comm_revoke(comm: c_int) -> c_int {
    MPIX_Comm_revoke(comm)
}

/// `MPI_Comm_is_revoked`: `MPIX_Comm_is_revoked`.
///
/// # Safety
/// As `MPIX_Comm_is_revoked`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_is_revoked(comm: c_int, flag: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_is_revoked(comm, flag) }
}

/// `MPI_Comm_shrink`: `MPIX_Comm_shrink`.
///
/// # Safety
/// As `MPIX_Comm_shrink`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_shrink(comm: c_int, newcomm: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_shrink(comm, newcomm) }
}

/// `MPI_Comm_ishrink`: `MPIX_Comm_ishrink`.
///
/// # Safety
/// As `MPIX_Comm_ishrink`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_ishrink(
    comm: c_int,
    newcomm: *mut c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_ishrink(comm, newcomm, request) }
}

/// `MPI_Comm_agree`: `MPIX_Comm_agree`.
///
/// # Safety
/// As `MPIX_Comm_agree`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_agree(comm: c_int, flag: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_agree(comm, flag) }
}

/// `MPI_Comm_iagree`: `MPIX_Comm_iagree`.
///
/// # Safety
/// As `MPIX_Comm_iagree`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_iagree(
    comm: c_int,
    flag: *mut c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_iagree(comm, flag, request) }
}

/// `MPI_Comm_get_failed`: `MPIX_Comm_get_failed`.
///
/// # Safety
/// As `MPIX_Comm_get_failed`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_failed(comm: c_int, failedgrp: *mut c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_get_failed(comm, failedgrp) }
}

/// `MPI_Comm_ack_failed`: `MPIX_Comm_ack_failed`.
///
/// # Safety
/// As `MPIX_Comm_ack_failed`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_ack_failed(
    comm: c_int,
    num_to_ack: c_int,
    num_acked: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPIX_Comm_ack_failed(comm, num_to_ack, num_acked) }
}

// The `PMPI_` names of this module's functions.
profiling_names!("failures.rs");

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The neighbourhood collectives (`MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v,w)`
//! and their `MPI_Ineighbor_*` forms, MPI-4.0 §8.6) over a communicator's topology: each rank
//! sends a block to each of its out-neighbours and receives one from each in-neighbour, in the
//! order the topology lists them (a grid: for each dimension the rank one step down, then one
//! step up; a graph: its neighbours; a distributed graph: its sources and destinations). One
//! implementation: the non-blocking call is the runtime's neighbourhood exchange
//! (`Comm::ineighbor_alltoall_varcount`, one message per edge, any datatype packed where it
//! leaves and unpacked where it lands), and the blocking call is that call waited for at once.
//! An edge to or from `MPI_PROC_NULL` (past the edge of a non-periodic grid) moves nothing;
//! a neighbour that failed ends the call with `MPIX_ERR_PROC_FAILED`, one recognized as
//! failed is skipped (its receive block is left as it was).

use std::ffi::c_void;
use std::os::raw::c_int;

use crate::collectives::Scheduled;
use crate::constants::*;
use crate::derived::MPI_Aint;
use crate::errors::Failure;
use crate::point_to_point::MPI_Wait;
use crate::rooted::{scheduled_neighbor_exchange, Counts, Edges};
use crate::runtime::{comm_of, start_scheduled};
use crate::topology::{missing, topology_of, Neighbors};

/// This rank's sources and destinations in `comm`'s topology, and the order in which its
/// receive blocks pair with a repeated neighbour's blocks (`Topology::neighbors`).
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle, `MPI_ERR_TOPOLOGY` without a topology.
fn neighbours(comm: c_int) -> Result<Neighbors, Failure> {
    let topology = topology_of(comm).ok_or_else(|| missing(comm, "process"))?;
    let me = comm_of(comm)?.get().rank() as c_int;
    Ok(topology.neighbors(me))
}

/// Starts the neighbourhood exchange of `send` and `recv` on `comm` and writes its request:
/// errors other than the communicator's and the request pointer's are the request's outcome.
///
/// # Safety
/// As for `MPI_Ineighbor_alltoallw`; `request` is NULL or points at a writable `MPI_Request`.
unsafe fn start(
    comm: c_int,
    (sendbuf, send): (*const c_void, Edges),
    (recvbuf, recv): (*mut c_void, Edges),
    request: *mut c_int,
) -> c_int {
    crate::errors::boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { crate::errors::out(request, "request")? };
        let scheduled: Result<Scheduled, Failure> = neighbours(comm).map(|lists| {
            // SAFETY: forwarded contract.
            unsafe { scheduled_neighbor_exchange(lists, sendbuf, send, recvbuf, recv) }
        });
        request.write(start_scheduled(comm, scheduled)?);
        Ok(())
    })
}

/// The blocking form: the non-blocking call waited for at once (its errors reported by the
/// wait, through the communicator's error handler).
///
/// # Safety
/// As for [`start`].
unsafe fn run(comm: c_int, send: (*const c_void, Edges), recv: (*mut c_void, Edges)) -> c_int {
    let mut request = MPI_REQUEST_NULL;
    // SAFETY: forwarded contract; `request` is a local.
    let started = unsafe { start(comm, send, recv, &mut request) };
    if started != MPI_SUCCESS {
        return started;
    }
    // SAFETY: `request` is the one just started; the status is ignored.
    unsafe { MPI_Wait(&mut request, std::ptr::null_mut::<MPI_Status>()) }
}

/// `MPI_Neighbor_allgather` (MPI-4.0 §8.6.1): the same `sendcount` elements to each
/// out-neighbour; the block of in-neighbour i lands at `i · recvcount` extents of `recvbuf`.
///
/// # Safety
/// `sendbuf` holds `sendcount` elements of `sendtype`, `recvbuf` room for a block of
/// `recvcount` elements of `recvtype` per in-neighbour, during the call.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        run(
            comm,
            (sendbuf, Edges::Same(sendcount, sendtype)),
            (recvbuf, Edges::Typed(Counts::Regular(recvcount), recvtype)),
        )
    }
}

/// `MPI_Neighbor_allgatherv`: as [`MPI_Neighbor_allgather`], in-neighbour i's block being
/// `recvcounts[i]` elements at `displs[i]` extents.
///
/// # Safety
/// As for `MPI_Neighbor_allgather`; the arrays hold one entry per in-neighbour.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        run(
            comm,
            (sendbuf, Edges::Same(sendcount, sendtype)),
            (
                recvbuf,
                Edges::Typed(Counts::Arrays(recvcounts, displs), recvtype),
            ),
        )
    }
}

/// `MPI_Neighbor_alltoall` (MPI-4.0 §8.6.2): block j of `sendbuf` (`sendcount` elements at
/// `j · sendcount` extents) to out-neighbour j, in-neighbour i's block to `i · recvcount`
/// extents of `recvbuf`.
///
/// # Safety
/// `sendbuf` holds a block per out-neighbour, `recvbuf` room for a block per in-neighbour.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        run(
            comm,
            (sendbuf, Edges::Typed(Counts::Regular(sendcount), sendtype)),
            (recvbuf, Edges::Typed(Counts::Regular(recvcount), recvtype)),
        )
    }
}

/// `MPI_Neighbor_alltoallv`: as [`MPI_Neighbor_alltoall`] with a count and a displacement
/// (in extents) per edge.
///
/// # Safety
/// As for `MPI_Neighbor_alltoall`; the send arrays hold an entry per out-neighbour, the
/// receive arrays one per in-neighbour.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        run(
            comm,
            (
                sendbuf,
                Edges::Typed(Counts::Arrays(sendcounts, sdispls), sendtype),
            ),
            (
                recvbuf,
                Edges::Typed(Counts::Arrays(recvcounts, rdispls), recvtype),
            ),
        )
    }
}

/// `MPI_Neighbor_alltoallw`: as [`MPI_Neighbor_alltoallv`] with a datatype per edge and
/// displacements in bytes (`MPI_Aint`).
///
/// # Safety
/// As for `MPI_Neighbor_alltoallv`, with the type arrays.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        run(
            comm,
            (sendbuf, Edges::PerEdge(sendcounts, sdispls, sendtypes)),
            (recvbuf, Edges::PerEdge(recvcounts, rdispls, recvtypes)),
        )
    }
}

/// `MPI_Ineighbor_allgather`: [`MPI_Neighbor_allgather`] as a non-blocking collective.
///
/// # Safety
/// As for `MPI_Neighbor_allgather`, until the request completes; `request` is NULL or points
/// at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        start(
            comm,
            (sendbuf, Edges::Same(sendcount, sendtype)),
            (recvbuf, Edges::Typed(Counts::Regular(recvcount), recvtype)),
            request,
        )
    }
}

/// `MPI_Ineighbor_allgatherv`: [`MPI_Neighbor_allgatherv`] as a non-blocking collective.
///
/// # Safety
/// As for `MPI_Neighbor_allgatherv`, until the request completes; `request` as in
/// `MPI_Ineighbor_allgather`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        start(
            comm,
            (sendbuf, Edges::Same(sendcount, sendtype)),
            (
                recvbuf,
                Edges::Typed(Counts::Arrays(recvcounts, displs), recvtype),
            ),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoall`: [`MPI_Neighbor_alltoall`] as a non-blocking collective.
///
/// # Safety
/// As for `MPI_Neighbor_alltoall`, until the request completes; `request` as in
/// `MPI_Ineighbor_allgather`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        start(
            comm,
            (sendbuf, Edges::Typed(Counts::Regular(sendcount), sendtype)),
            (recvbuf, Edges::Typed(Counts::Regular(recvcount), recvtype)),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoallv`: [`MPI_Neighbor_alltoallv`] as a non-blocking collective.
///
/// # Safety
/// As for `MPI_Neighbor_alltoallv`, until the request completes; `request` as in
/// `MPI_Ineighbor_allgather`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        start(
            comm,
            (
                sendbuf,
                Edges::Typed(Counts::Arrays(sendcounts, sdispls), sendtype),
            ),
            (
                recvbuf,
                Edges::Typed(Counts::Arrays(recvcounts, rdispls), recvtype),
            ),
            request,
        )
    }
}

/// `MPI_Ineighbor_alltoallw`: [`MPI_Neighbor_alltoallw`] as a non-blocking collective.
///
/// # Safety
/// As for `MPI_Neighbor_alltoallw`, until the request completes; `request` as in
/// `MPI_Ineighbor_allgather`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        start(
            comm,
            (sendbuf, Edges::PerEdge(sendcounts, sdispls, sendtypes)),
            (recvbuf, Edges::PerEdge(recvcounts, rdispls, recvtypes)),
            request,
        )
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("neighbor.rs");

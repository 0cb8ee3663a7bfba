// SPDX-License-Identifier: MIT OR Apache-2.0
//! Persistent collectives (MPI-4.0 §6.13): `MPI_Barrier_init`, `MPI_Bcast_init`, the
//! reductions', gathers', scatters', all-gathers', all-to-alls' and reduce-scatters' `_init`
//! calls. Each is a persistent request (`crate::persistent`) whose `MPI_Start` starts what the
//! non-blocking call with the same arguments starts (the same schedule, run by the rank's
//! engine, with its failure rules); the init call checks the arguments as that call would,
//! copies the array arguments (counts, displacements, datatypes) and sends nothing. The ranks start the request in the same order relative to their other
//! collectives on the communicator, as MPI requires of every collective.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use crate::collectives::{
    root_of, scheduled_broadcast, scheduled_reduce_scatter, scheduled_reduction, Reduction,
    Scheduled,
};
use crate::errors::Failure;
use crate::persistent::init_collective;
use crate::rooted::{self, Counts, Types};

/// A C address a persistent collective keeps for its starts: it passes it back to the
/// non-blocking call's code at each start, which the init call's contract covers.
#[derive(Clone, Copy)]
struct Kept(usize);

impl Kept {
    fn of<T>(pointer: *const T) -> Kept {
        Kept(pointer.expose_provenance())
    }

    fn get<T>(self) -> *mut T {
        std::ptr::with_exposed_provenance_mut(self.0)
    }
}

/// Writes the persistent request of the collective `restart` schedules at each start.
///
/// # Safety
/// As [`init_collective`].
unsafe fn init(
    comm: c_int,
    info: c_int,
    request: *mut c_int,
    restart: impl Fn() -> Result<Scheduled, Failure> + Send + Sync + 'static,
    keeper: Keeper,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { init_collective(comm, info, request, Arc::new(restart), keeper.0) }
}

/// The request's own copies of the derived datatypes among an init call's arguments: the
/// program may free its handles after the init call (MPI-4.0 §5.1.9); the copies go with the
/// request.
#[derive(Default)]
struct Keeper(Vec<c_int>);

impl Keeper {
    /// The handle a start uses for `datatype`: a copy of a derived type, a predefined one (or
    /// an invalid handle, for the start to report) as it is.
    fn keep(&mut self, datatype: c_int) -> c_int {
        if crate::derived::predefined(datatype) || datatype == crate::constants::MPI_DATATYPE_NULL {
            return datatype;
        }
        match crate::typeinfo::private_copy(datatype) {
            Ok(copy) => {
                self.0.push(copy);
                copy
            }
            Err(_) => datatype,
        }
    }
}

/// `MPI_Barrier_init`: each start an `MPI_Ibarrier`.
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier_init(comm: c_int, info: c_int, request: *mut c_int) -> c_int {
    let restart = || -> Result<Scheduled, Failure> {
        Ok(Box::new(|comm: &'static runthrough::Comm| {
            Ok(comm.ibarrier().map(|request| (request, None))?)
        }))
    };
    let keeper = Keeper::default();
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Bcast_init`: each start an `MPI_Ibcast`.
///
/// # Safety
/// As `MPI_Ibcast`'s buffer, for as long as the request exists; `request` is NULL or points at
/// a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast_init(
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let buffer = Kept::of(buffer);
    let mut keeper = Keeper::default();
    let datatype = keeper.keep(datatype);
    // SAFETY (of each start): the init call's contract.
    let restart = move || unsafe { scheduled_broadcast(buffer.get(), count, datatype, root) };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// A reduction's init call: each start what `MPI_Ireduce` / `_Iallreduce` / `_Iscan` /
/// `_Iexscan` (`kind`) starts.
///
/// # Safety
/// As the non-blocking call's buffers, for as long as the request exists.
#[allow(clippy::too_many_arguments)]
unsafe fn reduction_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    kind: Result<Reduction, Failure>,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send, recv) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let datatype = keeper.keep(datatype);
    let restart = move || {
        let kind = kind.clone()?;
        // SAFETY (of each start): the init call's contract.
        unsafe { scheduled_reduction(send.get(), recv.get(), count, datatype, op, kind) }
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Reduce_init`: each start an `MPI_Ireduce`.
///
/// # Safety
/// As `MPI_Ireduce`'s buffers, for as long as the request exists; `request` is NULL or points
/// at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let kind = root_of(root).map(Reduction::Reduce);
    // SAFETY: forwarded contract.
    unsafe {
        reduction_init(
            sendbuf, recvbuf, count, datatype, op, kind, comm, info, request,
        )
    }
}

/// `MPI_Allreduce_init`: each start an `MPI_Iallreduce`.
///
/// # Safety
/// As `MPI_Reduce_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let kind = Ok(Reduction::All);
    // SAFETY: forwarded contract.
    unsafe {
        reduction_init(
            sendbuf, recvbuf, count, datatype, op, kind, comm, info, request,
        )
    }
}

/// `MPI_Scan_init`: each start an `MPI_Iscan`.
///
/// # Safety
/// As `MPI_Reduce_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let kind = Ok(Reduction::Scan);
    // SAFETY: forwarded contract.
    unsafe {
        reduction_init(
            sendbuf, recvbuf, count, datatype, op, kind, comm, info, request,
        )
    }
}

/// `MPI_Exscan_init`: each start an `MPI_Iexscan`.
///
/// # Safety
/// As `MPI_Reduce_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let kind = Ok(Reduction::Exscan);
    // SAFETY: forwarded contract.
    unsafe {
        reduction_init(
            sendbuf, recvbuf, count, datatype, op, kind, comm, info, request,
        )
    }
}

/// `MPI_Reduce_scatter_block_init`: each start an `MPI_Ireduce_scatter_block`.
///
/// # Safety
/// As `MPI_Ireduce_scatter_block`'s buffers, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send, recv) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let datatype = keeper.keep(datatype);
    // SAFETY (of each start): the init call's contract.
    let restart = move || unsafe {
        scheduled_reduce_scatter(send.get(), recv.get(), Err(recvcount), datatype, op)
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Reduce_scatter_init`: each start an `MPI_Ireduce_scatter`.
///
/// # Safety
/// As `MPI_Ireduce_scatter`'s buffers and array, for as long as the request exists; `request`
/// is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, _) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    let (send, recv) = (Kept::of(sendbuf), Kept::of(recvbuf));
    // SAFETY: `recvcounts` holds one int per rank (MPI_Reduce_scatter's contract).
    let counts = unsafe { copied(recvcounts, n) };
    let mut keeper = Keeper::default();
    let datatype = keeper.keep(datatype);
    // SAFETY (of each start): the init call's contract; the counts are the copy.
    let restart = move || unsafe {
        let counts = pointer_of(&counts);
        scheduled_reduce_scatter(send.get(), recv.get(), Ok(counts), datatype, op)
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// A copy of an array argument (counts, displacements, datatypes: one per rank of the
/// communicator), taken by the init call, as MPICH and Open MPI take it: each start reads the
/// copy, so a program (or a binding such as mpi4py) may release its array after the init call.
/// `None` for a NULL array or one that is not significant at this rank.
type Copied = Option<Arc<[c_int]>>;

/// Copies `n` ints at `pointer` (NULL: `None`).
///
/// # Safety
/// `pointer` is NULL or points at `n` readable ints.
unsafe fn copied(pointer: *const c_int, n: usize) -> Copied {
    if pointer.is_null() {
        return None;
    }
    // SAFETY: not NULL; `n` readable ints by the contract.
    Some(Arc::from(unsafe { std::slice::from_raw_parts(pointer, n) }))
}

/// The pointer a start passes for a copied array.
fn pointer_of(copy: &Copied) -> *const c_int {
    copy.as_ref()
        .map_or(std::ptr::null(), |array| array.as_ptr())
}

/// The size of `comm` and this rank's number there (to copy the array arguments).
fn shape_of(comm: c_int) -> Result<(usize, c_int), Failure> {
    let comm = crate::runtime::collective_comm_of(comm)?;
    let comm = comm.get();
    Ok((comm.size() as usize, comm.rank() as c_int))
}

/// The error of an init call whose communicator is invalid, through its error handler.
fn refused(comm: c_int, failure: Failure) -> c_int {
    crate::errors::boundary(comm, || Err(failure))
}

/// The blocks of one side of a gather, scatter or all-to-all, kept: regular, or copies of the
/// counts and displacements arrays.
#[derive(Clone)]
enum KeptCounts {
    Regular(c_int),
    Arrays(Copied, Copied),
}

impl KeptCounts {
    fn regular(count: c_int) -> Self {
        KeptCounts::Regular(count)
    }

    /// Copies of the two arrays of `n` ints (when `significant` at this rank).
    ///
    /// # Safety
    /// Each pointer is NULL or points at `n` readable ints when `significant`.
    unsafe fn arrays(
        counts: *const c_int,
        displs: *const c_int,
        n: usize,
        significant: bool,
    ) -> Self {
        if !significant {
            return KeptCounts::Arrays(None, None);
        }
        // SAFETY: forwarded contract.
        unsafe { KeptCounts::Arrays(copied(counts, n), copied(displs, n)) }
    }

    fn get(&self) -> Counts {
        match self {
            KeptCounts::Regular(count) => Counts::Regular(*count),
            KeptCounts::Arrays(counts, displs) => {
                Counts::Arrays(pointer_of(counts), pointer_of(displs))
            }
        }
    }
}

/// The datatypes of one side of an all-to-all, kept (a copy of the per-rank array).
#[derive(Clone)]
enum KeptTypes {
    One(c_int),
    PerRank(Copied),
}

impl KeptTypes {
    /// The same, with the request's own copies of derived datatypes.
    fn kept(self, keeper: &mut Keeper) -> KeptTypes {
        match self {
            KeptTypes::One(datatype) => KeptTypes::One(keeper.keep(datatype)),
            KeptTypes::PerRank(Some(types)) => {
                let kept: Vec<c_int> = types.iter().map(|&t| keeper.keep(t)).collect();
                KeptTypes::PerRank(Some(Arc::from(kept)))
            }
            KeptTypes::PerRank(None) => KeptTypes::PerRank(None),
        }
    }

    fn get(&self) -> Types {
        match self {
            KeptTypes::One(datatype) => Types::One(*datatype),
            KeptTypes::PerRank(types) => Types::PerRank(pointer_of(types)),
        }
    }
}

/// A gather's init call (`MPI_Gather_init`, `_Gatherv_init`).
///
/// # Safety
/// As the non-blocking call's buffers and arrays, for as long as the request exists.
#[allow(clippy::too_many_arguments)]
unsafe fn gather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recv: KeptCounts,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send, recv_buf) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let (sendtype, recvtype) = (keeper.keep(sendtype), keeper.keep(recvtype));
    let restart = move || {
        // SAFETY (of each start): the init call's contract.
        Ok(unsafe {
            rooted::scheduled_gather(
                send.get(),
                sendcount,
                sendtype,
                recv_buf.get(),
                recv.get(),
                recvtype,
                root,
            )
        })
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Gather_init`: each start an `MPI_Igather`.
///
/// # Safety
/// As `MPI_Igather`'s buffers, for as long as the request exists; `request` is NULL or points
/// at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let recv = KeptCounts::regular(recvcount);
    // SAFETY: forwarded contract.
    unsafe {
        gather_init(
            sendbuf, sendcount, sendtype, recvbuf, recv, recvtype, root, comm, info, request,
        )
    }
}

/// `MPI_Gatherv_init`: each start an `MPI_Igatherv`.
///
/// # Safety
/// As `MPI_Igatherv`'s buffers and arrays, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, rank) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    // SAFETY: at the root, the arrays hold one int per rank (MPI_Gatherv's contract).
    let recv = unsafe { KeptCounts::arrays(recvcounts, displs, n, rank == root) };
    // SAFETY: forwarded contract.
    unsafe {
        gather_init(
            sendbuf, sendcount, sendtype, recvbuf, recv, recvtype, root, comm, info, request,
        )
    }
}

/// A scatter's init call (`MPI_Scatter_init`, `_Scatterv_init`).
///
/// # Safety
/// As the non-blocking call's buffers and arrays, for as long as the request exists.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_init(
    sendbuf: *const c_void,
    send: KeptCounts,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send_buf, recv_buf) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let (sendtype, recvtype) = (keeper.keep(sendtype), keeper.keep(recvtype));
    let restart = move || {
        // SAFETY (of each start): the init call's contract.
        Ok(unsafe {
            rooted::scheduled_scatter(
                send_buf.get(),
                send.get(),
                sendtype,
                recv_buf.get(),
                recvcount,
                recvtype,
                root,
            )
        })
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Scatter_init`: each start an `MPI_Iscatter`.
///
/// # Safety
/// As `MPI_Iscatter`'s buffers, for as long as the request exists; `request` is NULL or points
/// at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let send = KeptCounts::regular(sendcount);
    // SAFETY: forwarded contract.
    unsafe {
        scatter_init(
            sendbuf, send, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request,
        )
    }
}

/// `MPI_Scatterv_init`: each start an `MPI_Iscatterv`.
///
/// # Safety
/// As `MPI_Iscatterv`'s buffers and arrays, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, rank) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    // SAFETY: at the root, the arrays hold one int per rank (MPI_Scatterv's contract).
    let send = unsafe { KeptCounts::arrays(sendcounts, displs, n, rank == root) };
    // SAFETY: forwarded contract.
    unsafe {
        scatter_init(
            sendbuf, send, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request,
        )
    }
}

/// An all-gather's init call (`MPI_Allgather_init`, `_Allgatherv_init`).
///
/// # Safety
/// As the non-blocking call's buffers and arrays, for as long as the request exists.
#[allow(clippy::too_many_arguments)]
unsafe fn all_gather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recv: KeptCounts,
    recvtype: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send, recv_buf) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let (sendtype, recvtype) = (keeper.keep(sendtype), keeper.keep(recvtype));
    let restart = move || {
        // SAFETY (of each start): the init call's contract.
        Ok(unsafe {
            rooted::scheduled_all_gather(
                send.get(),
                sendcount,
                sendtype,
                recv_buf.get(),
                recv.get(),
                recvtype,
            )
        })
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Allgather_init`: each start an `MPI_Iallgather`.
///
/// # Safety
/// As `MPI_Iallgather`'s buffers, for as long as the request exists; `request` is NULL or
/// points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let recv = KeptCounts::regular(recvcount);
    // SAFETY: forwarded contract.
    unsafe {
        all_gather_init(
            sendbuf, sendcount, sendtype, recvbuf, recv, recvtype, comm, info, request,
        )
    }
}

/// `MPI_Allgatherv_init`: each start an `MPI_Iallgatherv`.
///
/// # Safety
/// As `MPI_Iallgatherv`'s buffers and arrays, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, _) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    // SAFETY: the arrays hold one int per rank (MPI_Allgatherv's contract).
    let recv = unsafe { KeptCounts::arrays(recvcounts, displs, n, true) };
    // SAFETY: forwarded contract.
    unsafe {
        all_gather_init(
            sendbuf, sendcount, sendtype, recvbuf, recv, recvtype, comm, info, request,
        )
    }
}

/// An all-to-all's init call (`MPI_Alltoall_init`, `_Alltoallv_init`, `_Alltoallw_init`).
///
/// # Safety
/// As the non-blocking call's buffers and arrays, for as long as the request exists.
unsafe fn all_to_all_init(
    sendbuf: *const c_void,
    send: (KeptCounts, KeptTypes),
    recvbuf: *mut c_void,
    recv: (KeptCounts, KeptTypes),
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (send_buf, recv_buf) = (Kept::of(sendbuf), Kept::of(recvbuf));
    let mut keeper = Keeper::default();
    let send = (send.0, send.1.kept(&mut keeper));
    let recv = (recv.0, recv.1.kept(&mut keeper));
    let restart = move || {
        // SAFETY (of each start): the init call's contract.
        Ok(unsafe {
            rooted::scheduled_all_to_all(
                send_buf.get(),
                (send.0.get(), send.1.get()),
                recv_buf.get(),
                (recv.0.get(), recv.1.get()),
            )
        })
    };
    // SAFETY: forwarded contract.
    unsafe { init(comm, info, request, restart, keeper) }
}

/// `MPI_Alltoall_init`: each start an `MPI_Ialltoall`.
///
/// # Safety
/// As `MPI_Ialltoall`'s buffers, for as long as the request exists; `request` is NULL or
/// points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let send = (KeptCounts::regular(sendcount), KeptTypes::One(sendtype));
    let recv = (KeptCounts::regular(recvcount), KeptTypes::One(recvtype));
    // SAFETY: forwarded contract.
    unsafe { all_to_all_init(sendbuf, send, recvbuf, recv, comm, info, request) }
}

/// `MPI_Alltoallv_init`: each start an `MPI_Ialltoallv`.
///
/// # Safety
/// As `MPI_Ialltoallv`'s buffers and arrays, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, _) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    // SAFETY: the arrays hold one int per rank (MPI_Alltoallv's contract).
    let (send, recv) = unsafe {
        (
            (
                KeptCounts::arrays(sendcounts, sdispls, n, true),
                KeptTypes::One(sendtype),
            ),
            (
                KeptCounts::arrays(recvcounts, rdispls, n, true),
                KeptTypes::One(recvtype),
            ),
        )
    };
    // SAFETY: forwarded contract.
    unsafe { all_to_all_init(sendbuf, send, recvbuf, recv, comm, info, request) }
}

/// `MPI_Alltoallw_init`: each start an `MPI_Ialltoallw`.
///
/// # Safety
/// As `MPI_Ialltoallw`'s buffers and arrays, for as long as the request exists; `request` is
/// NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const c_int,
    comm: c_int,
    info: c_int,
    request: *mut c_int,
) -> c_int {
    let (n, _) = match shape_of(comm) {
        Ok(shape) => shape,
        Err(failure) => return refused(comm, failure),
    };
    // SAFETY: the arrays hold one int per rank (MPI_Alltoallw's contract).
    let (send, recv) = unsafe {
        (
            (
                KeptCounts::arrays(sendcounts, sdispls, n, true),
                KeptTypes::PerRank(copied(sendtypes, n)),
            ),
            (
                KeptCounts::arrays(recvcounts, rdispls, n, true),
                KeptTypes::PerRank(copied(recvtypes, n)),
            ),
        )
    };
    // SAFETY: forwarded contract.
    unsafe { all_to_all_init(sendbuf, send, recvbuf, recv, comm, info, request) }
}

// The `PMPI_` names of this module's functions.
profiling_names!("persistent_collectives.rs");

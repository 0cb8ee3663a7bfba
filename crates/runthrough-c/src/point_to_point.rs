// SPDX-License-Identifier: MIT OR Apache-2.0
//! Point-to-point communication and requests (semantics §3.1-3.2; MPI-4.0 chapter 3).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::time::Duration;

use runthrough::{AgreementRequest, Comm, Error, Rank, Request, Source, Status, Tag};

use crate::constants::*;
use crate::datatypes::output;
use crate::derived::{type_size, Data, Target, Unpack};
use crate::errors::{boundary, boundary_on, optional_out, out, Failure, Out};
use crate::intercomm::{receive_side, send_side};
use crate::runtime::{with_runtime, Operation, PendingReceive, RequestEntry};

/// A destination argument: `None` for `MPI_PROC_NULL`.
pub(crate) fn destination(dest: c_int) -> Result<Option<Rank>, Failure> {
    if dest == MPI_PROC_NULL {
        return Ok(None);
    }
    Rank::try_from(dest)
        .map(Some)
        .map_err(|_| Failure::new(MPI_ERR_RANK, format!("invalid rank {dest}")))
}

/// A source argument: `None` for `MPI_PROC_NULL`.
pub(crate) fn source(source: c_int) -> Result<Option<Source>, Failure> {
    if source == MPI_ANY_SOURCE {
        return Ok(Some(Source::Any));
    }
    Ok(destination(source)?.map(Source::Rank))
}

/// A receive's tag argument.
pub(crate) fn receive_tag(tag: c_int) -> Result<Tag, Failure> {
    match tag {
        MPI_ANY_TAG => Ok(Tag::Any),
        t if t >= 0 => Ok(Tag::Value(t)),
        t => Err(Failure::new(MPI_ERR_TAG, format!("invalid tag {t}"))),
    }
}

/// The status of a completed receive (`count` in bytes: the receives move `u8`s).
pub(crate) fn c_status(status: Status) -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: status.source.map_or(MPI_PROC_NULL, |s| s as c_int),
        MPI_TAG: status.tag.unwrap_or(MPI_ANY_TAG),
        MPI_ERROR: MPI_SUCCESS,
        rt_count_bytes: c_int::try_from(status.count).unwrap_or(c_int::MAX),
        rt_cancelled: 0,
    }
}

/// The status of a `MPI_PROC_NULL` receive.
pub(crate) fn proc_null_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_PROC_NULL,
        MPI_TAG: MPI_ANY_TAG,
        ..MPI_Status::default()
    }
}

/// The empty status of an inactive request.
pub(crate) fn empty_status() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        ..MPI_Status::default()
    }
}

/// A status argument that may be `MPI_STATUS_IGNORE` (NULL).
pub(crate) struct StatusOut(Option<Out<MPI_Status>>);

impl StatusOut {
    /// # Safety
    /// `status` is NULL or points at a writable `MPI_Status`.
    pub(crate) unsafe fn new(status: *mut MPI_Status) -> Self {
        // SAFETY: forwarded contract; NULL is MPI_STATUS_IGNORE.
        StatusOut(unsafe { optional_out(status) })
    }

    /// Writes the status of a completed operation, but its `MPI_ERROR`: a call that completes
    /// one operation leaves that field as the program set it, as MPI says (the call returns
    /// the error). An empty status (an inactive or null request) is written whole.
    pub(crate) fn write(&self, status: MPI_Status) {
        if let Some(out) = &self.0 {
            if status == empty_status() {
                out.write(status);
            } else {
                out.write_but_error(status);
            }
        }
    }
}

/// The send calls: `MPI_Send` (eager) and, when `synchronous`, `MPI_Ssend` (returns once the
/// receiver matched the message).
///
/// # Safety
/// `buf` is NULL or points at `count` readable elements of `datatype`.
pub(crate) unsafe fn send(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    synchronous: bool,
) -> Result<Status, Failure> {
    // SAFETY: forwarded contract; the data is used only during this call.
    let data = unsafe { Data::of(count, datatype)?.read(buf)? };
    let len = data.len();
    let (comm, dest) = send_side(comm, dest)?;
    if tag < 0 {
        return Err(Failure::new(MPI_ERR_TAG, format!("invalid tag {tag}")));
    }
    let Some(dest) = destination(dest)? else {
        return Ok(Status {
            source: None,
            tag: None,
            count: 0,
        });
    };
    if synchronous {
        comm.get().ssend(&data, dest, tag)?;
    } else {
        comm.get().send(&data, dest, tag)?;
    }
    Ok(Status {
        source: Some(dest),
        tag: Some(tag),
        count: len,
    })
}

/// `MPI_Send` (MPI-4.0 §3.2.1).
///
/// # Safety
/// `buf` is NULL or points at `count` readable elements of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || {
        unsafe { send(buf, count, datatype, dest, tag, comm, false) }.map(drop)
    })
}

/// `MPI_Ssend` (MPI-4.0 §3.4): returns once the destination has matched the message with a
/// receive (the runtime's `Comm::ssend`: the receiver acknowledges a synchronous message when
/// a receive takes it). A destination that fails before that is `MPIX_ERR_PROC_FAILED`.
///
/// # Safety
/// As `MPI_Send`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    boundary(comm, || {
        unsafe { send(buf, count, datatype, dest, tag, comm, true) }.map(drop)
    })
}

/// `MPI_Isend`: the message is sent at once when the runtime's flow control allows (the
/// request is then complete); otherwise the request stays pending until the message goes, which
/// happens while this rank waits in the library (`MPI_Wait`, `MPI_Test`, blocking calls). The
/// buffer is copied by the call. The request reports the outcome.
///
/// # Safety
/// `buf` as `MPI_Send`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { start_send(buf, count, datatype, dest, tag, comm, request, false) }
}

/// `MPI_Isend` and, when `synchronous`, `MPI_Issend`.
///
/// # Safety
/// As `MPI_Isend`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn start_send(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
    synchronous: bool,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        // SAFETY: forwarded contract.
        let operation =
            unsafe { send_operation(buf, count, datatype, dest, tag, comm, synchronous)? };
        let handle = with_runtime(|runtime| Ok(runtime.add_request(operation, comm)))?;
        request.write(handle);
        Ok(())
    })
}

/// Starts a send as `MPI_Isend` (`MPI_Issend` when `synchronous`) does, and returns the
/// operation its request holds (`MPI_Start` of a persistent send calls it too). Argument errors
/// are returned at once; failures are the operation's outcome (semantics §3.1).
///
/// # Safety
/// `buf` is NULL or points at `count` readable elements of `datatype` (copied by the call).
pub(crate) unsafe fn send_operation(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    synchronous: bool,
) -> Result<Operation, Failure> {
    // SAFETY: forwarded contract; the data is used only during this call (copied).
    let data = unsafe { Data::of(count, datatype)?.read(buf)? };
    let (comm_box, dest) = send_side(comm, dest)?;
    let dest = destination(dest)?;
    if tag < 0 {
        return Err(Failure::new(MPI_ERR_TAG, format!("invalid tag {tag}")));
    }
    Ok(match dest {
        None => Operation::Complete(Ok(c_status(Status {
            source: None,
            tag: None,
            count: 0,
        }))),
        Some(dest) => {
            // SAFETY: as in `MPI_Irecv`: the communicator lives in the `Arc` that the same
            // `PendingReceive` holds and drops after the request.
            let comm_ref: &'static Comm = unsafe { &*std::ptr::from_ref(comm_box.get()) };
            let mut pending = if synchronous {
                comm_ref.issend(&data, dest, tag)?
            } else {
                comm_ref.isend(&data, dest, tag)?
            };
            match pending.test() {
                Ok(None) => Operation::Receive(PendingReceive {
                    request: pending,
                    unpack: None,
                    comm: comm_box,
                }),
                Ok(Some(status)) => Operation::Complete(Ok(c_status(status))),
                Err(error) => {
                    let failure = Failure::from(error);
                    if !matches!(
                        failure.class,
                        MPIX_ERR_PROC_FAILED | MPIX_ERR_REVOKED | MPIX_ERR_PROC_FAILED_PENDING
                    ) {
                        return Err(failure);
                    }
                    Operation::Complete(Err(failure))
                }
            }
        }
    })
}

/// `MPI_Issend`: the request completes once the destination has matched the message (see
/// `MPI_Ssend`); `MPI_Test` reports it pending until then.
///
/// # Safety
/// As `MPI_Isend`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Issend(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { start_send(buf, count, datatype, dest, tag, comm, request, true) }
}

/// `MPI_Recv` (MPI-4.0 §3.2.4), with the failure rules of semantics §3.1-3.2; from
/// `MPI_ANY_SOURCE`, an unacknowledged failure is `MPIX_ERR_PROC_FAILED` ([`Failure::blocking`]).
///
/// # Safety
/// `buf` is NULL or points at `count` writable elements of `datatype`; `status` is NULL
/// (`MPI_STATUS_IGNORE`) or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        // SAFETY: forwarded contract; used only during this call.
        let mut target = unsafe { Data::of(count, datatype)?.target(buf)? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let comm = receive_side(comm, source_rank)?;
        let tag = receive_tag(tag)?;
        let Some(source) = source(source_rank)? else {
            status.write(proc_null_status());
            return Ok(());
        };
        let received = comm
            .get()
            .recv(target.receive_buffer(), source, tag)
            .map_err(Failure::blocking)?;
        target.finish(received.count);
        status.write(c_status(received));
        Ok(())
    })
}

/// `MPI_Irecv`: the request holds the buffer until it completes (MPI's rule: the buffer must
/// stay valid and untouched until then). A wildcard receive that reports
/// `MPIX_ERR_PROC_FAILED_PENDING` stays pending (semantics §3.2).
///
/// # Safety
/// `buf` is NULL or points at `count` writable elements of `datatype` that stay valid, and that
/// the program does not access, until the request completes or is freed by `MPI_Finalize`;
/// `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        // SAFETY: forwarded contract.
        let operation = unsafe { receive_operation(buf, count, datatype, source_rank, tag, comm)? };
        let handle = with_runtime(|runtime| Ok(runtime.add_request(operation, comm)))?;
        request.write(handle);
        Ok(())
    })
}

/// Posts a receive as `MPI_Irecv` does, and returns the operation its request holds
/// (`MPI_Start` of a persistent receive calls it too).
///
/// # Safety
/// As `MPI_Irecv` for `buf`: valid and reserved to the operation until it completes or is
/// dropped (at the latest by `MPI_Finalize`).
pub(crate) unsafe fn receive_operation(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
) -> Result<Operation, Failure> {
    let (buffer, unpack): (&'static mut [u8], _) = match Data::of(count, datatype)? {
        // SAFETY: forwarded contract: the buffer is valid and reserved to the request until
        // it completes, and the request (in the table) is dropped at the latest at
        // MPI_Finalize.
        Data::Contiguous(len) => (unsafe { output(buf, len)? }, None),
        Data::Strided {
            layout,
            count,
            window,
        } => {
            // SAFETY: as above; the scratch buffer is used only by the request, which
            // `PendingReceive` drops before the `Unpack` (field order).
            let (unpack, scratch) = unsafe { Unpack::new(&layout, count, window, buf)? };
            (scratch, Some(unpack))
        }
    };
    let comm_box = receive_side(comm, source_rank)?;
    let tag = receive_tag(tag)?;
    Ok(match source(source_rank)? {
        None => Operation::Complete(Ok(proc_null_status())),
        Some(source) => {
            // SAFETY: the communicator lives in the `Arc` that the same `PendingReceive`
            // holds (never moved: it is on the heap) and drops after the request (field
            // order), so the reference outlives every use the request makes of it.
            let comm_ref: &'static Comm = unsafe { &*std::ptr::from_ref(comm_box.get()) };
            let pending = comm_ref.irecv(buffer, source, tag)?;
            Operation::Receive(PendingReceive {
                request: pending,
                unpack,
                comm: comm_box,
            })
        }
    })
}

/// `MPI_Probe`; from `MPI_ANY_SOURCE`, an unacknowledged failure is `MPIX_ERR_PROC_FAILED`.
///
/// # Safety
/// `status` is NULL or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let comm = receive_side(comm, source_rank)?;
        let tag = receive_tag(tag)?;
        let Some(source) = source(source_rank)? else {
            status.write(proc_null_status());
            return Ok(());
        };
        let found = comm.get().probe::<u8>(source, tag);
        status.write(c_status(found.map_err(Failure::blocking)?));
        Ok(())
    })
}

/// `MPI_Iprobe`.
///
/// # Safety
/// `flag` is NULL or points at a writable int; `status` is NULL or points at a writable
/// `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iprobe(
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let comm = receive_side(comm, source_rank)?;
        let tag = receive_tag(tag)?;
        let Some(source) = source(source_rank)? else {
            flag.write(1);
            status.write(proc_null_status());
            return Ok(());
        };
        match comm.get().iprobe::<u8>(source, tag)? {
            Some(found) => {
                flag.write(1);
                status.write(c_status(found));
            }
            None => flag.write(0),
        }
        Ok(())
    })
}

/// `MPI_Get_count`: `MPI_UNDEFINED` when the message is not a whole number of elements.
///
/// # Safety
/// `status` is NULL or points at a readable `MPI_Status`; `count` is NULL or points at a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count(
    status: *const MPI_Status,
    datatype: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`; only read.
        let status = unsafe { out(status.cast_mut(), "status")? }.read();
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        let size = c_int::try_from(type_size(datatype)?).unwrap_or(c_int::MAX);
        count.write(if size == 0 {
            0
        } else if status.rt_count_bytes % size == 0 {
            status.rt_count_bytes / size
        } else {
            MPI_UNDEFINED
        });
        Ok(())
    })
}

/// `MPI_Get_elements` (MPI-4.0 §5.1.11): the number of basic elements received. For a basic
/// type it is `MPI_Get_count`; for a derived type, the basic elements of the whole elements
/// and of the partial last one, `MPI_UNDEFINED` when the data ends inside a basic element.
///
/// # Safety
/// As `MPI_Get_count`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements(
    status: *const MPI_Status,
    datatype: c_int,
    count: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`; only read.
        let status = unsafe { out(status.cast_mut(), "status")? }.read();
        // SAFETY: checked for NULL by `out`.
        let count = unsafe { out(count, "count")? };
        let bytes = usize::try_from(status.rt_count_bytes).map_err(|_| {
            Failure::new(
                MPI_ERR_ARG,
                format!(
                    "the status holds a negative byte count {}",
                    status.rt_count_bytes
                ),
            )
        })?;
        let elements = crate::derived::layout_of(datatype, false)?.basic_elements_in(bytes);
        count.write(elements.map_or(MPI_UNDEFINED, |n| {
            c_int::try_from(n).unwrap_or(MPI_UNDEFINED)
        }));
        Ok(())
    })
}

/// `MPI_Status_set_elements` (MPI-4.0 §13.3): makes `status` say that `count` basic elements of
/// `datatype` were received (what `MPI_Get_elements` and `MPI_Get_count` then read). A derived
/// type must have basic elements of one size (`MPI_ERR_TYPE` otherwise).
///
/// # Safety
/// `status` is NULL or points at a readable and writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements(
    status: *mut MPI_Status,
    datatype: c_int,
    count: c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let status = unsafe { out(status, "status")? };
        let count = usize::try_from(count)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
        let size = type_size(datatype)?;
        let per_element = crate::derived::layout_of(datatype, false)?
            .basic_elements_in(size)
            .filter(|&n| n > 0 && size % n == 0)
            .map(|n| size / n)
            .ok_or_else(|| {
                Failure::new(
                    MPI_ERR_TYPE,
                    "MPI_Status_set_elements: the datatype's basic elements differ in size",
                )
            })?;
        let bytes = count
            .checked_mul(per_element)
            .and_then(|b| c_int::try_from(b).ok())
            .ok_or_else(|| Failure::new(MPI_ERR_COUNT, "the byte count does not fit an int"))?;
        let mut updated = status.read();
        updated.rt_count_bytes = bytes;
        status.write(updated);
        Ok(())
    })
}

/// `MPI_Status_set_cancelled` (MPI-4.0 §13.3): what `MPI_Test_cancelled` then reads.
///
/// # Safety
/// `status` is NULL or points at a readable and writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let status = unsafe { out(status, "status")? };
        let mut updated = status.read();
        updated.rt_cancelled = c_int::from(flag != 0);
        status.write(updated);
        Ok(())
    })
}

/// `MPI_Type_size`.
///
/// # Safety
/// `size` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: c_int, size: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        let bytes = type_size(datatype)?;
        size.write(c_int::try_from(bytes).unwrap_or(MPI_UNDEFINED));
        Ok(())
    })
}

/// `MPI_Type_size_x`: `MPI_Type_size` as an `MPI_Count`.
///
/// # Safety
/// `size` is NULL or points at a writable `MPI_Count`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: c_int, size: *mut i64) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        size.write(type_size(datatype)? as i64);
        Ok(())
    })
}

/// What became of a request looked at once.
pub(crate) enum Progress {
    /// `MPI_REQUEST_NULL` or an inactive persistent request: nothing to complete (an empty
    /// status, no error; the handle does not change).
    Inactive,
    /// Still running (the request stays in the table).
    Pending,
    /// Finished with this status and error (`None` for success); `next` says what becomes of
    /// the request.
    Done {
        status: MPI_Status,
        error: Option<Failure>,
        next: Next,
    },
}

/// What becomes of a request that [`progress`] found done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// It is freed: the program's handle becomes `MPI_REQUEST_NULL`.
    Freed,
    /// It stays active (a wildcard receive's `MPIX_ERR_PROC_FAILED_PENDING`, semantics §3.2): not
    /// complete, the handle kept.
    Active,
    /// A persistent request, now inactive: complete, and the handle stays valid (for the next
    /// `MPI_Start` or `MPI_Request_free`).
    Inactive,
}

impl Next {
    /// Whether the operation completed (`MPI_Test`'s flag).
    pub(crate) fn completed(self) -> bool {
        self != Next::Active
    }

    /// The program's handle after the completion: `MPI_REQUEST_NULL` for a freed request.
    pub(crate) fn handle(self, handle: c_int) -> c_int {
        if self == Next::Freed {
            MPI_REQUEST_NULL
        } else {
            handle
        }
    }
}

/// A runtime request that a C request holds, looked at once.
trait Look {
    type Outcome;
    /// Waits for the request when `block`, else tests it: `Ok(None)` while it is pending.
    fn look(&mut self, block: bool) -> Result<Option<Self::Outcome>, Error>;
}

/// `Look` for a runtime request type whose `wait` and `test` give `Outcome`.
macro_rules! look_by_wait_or_test {
    ($request:ty, $outcome:ty) => {
        impl Look for $request {
            type Outcome = $outcome;
            fn look(&mut self, block: bool) -> Result<Option<$outcome>, Error> {
                if block {
                    self.wait().map(Some)
                } else {
                    self.test()
                }
            }
        }
    };
}

look_by_wait_or_test!(Request<'_>, Status);
look_by_wait_or_test!(AgreementRequest<'_, u32>, u32);

/// Looks at request `handle` (waiting for it when `block`); `comm` is set to the communicator
/// handle whose error handler reports it. Every completion call goes through here: a finished
/// request leaves the table ([`Next::Freed`]), but a persistent one stays, inactive
/// ([`Next::Inactive`]); an inactive one is [`Progress::Inactive`], as `MPI_REQUEST_NULL` is.
pub(crate) fn progress(handle: c_int, block: bool, comm: &mut c_int) -> Result<Progress, Failure> {
    if handle == MPI_REQUEST_NULL {
        return Ok(Progress::Inactive);
    }
    let entry = with_runtime(|runtime| {
        runtime.requests.remove(&handle).ok_or_else(|| {
            Failure::new(
                MPI_ERR_REQUEST,
                format!("invalid or completed request handle {handle}"),
            )
        })
    })?;
    *comm = entry.comm;
    let RequestEntry {
        operation,
        comm: request_comm,
    } = entry;
    let (progress, kept) = match operation {
        Operation::Persistent(mut persistent) => {
            let progress = match persistent.active.take() {
                None => Progress::Inactive,
                Some(active) => {
                    let (progress, still) = advance(*active, block);
                    persistent.active = still.map(Box::new);
                    match progress {
                        Progress::Done {
                            status,
                            error,
                            next: Next::Freed,
                        } => Progress::Done {
                            status,
                            error,
                            next: Next::Inactive,
                        },
                        other => other,
                    }
                }
            };
            (progress, Some(Operation::Persistent(persistent)))
        }
        operation => advance(operation, block),
    };
    if let Some(operation) = kept {
        with_runtime(|runtime| {
            runtime.requests.insert(
                handle,
                RequestEntry {
                    operation,
                    comm: request_comm,
                },
            );
            Ok(())
        })?;
    }
    Ok(progress)
}

/// Looks at one operation (waiting for it when `block`): what became of it, and the operation
/// that stays in the request (`None` once it finished).
fn advance(operation: Operation, block: bool) -> (Progress, Option<Operation>) {
    let finished = |outcome: Result<MPI_Status, Failure>| match outcome {
        Ok(status) => Progress::Done {
            status,
            error: None,
            next: Next::Freed,
        },
        Err(failure) => Progress::Done {
            status: MPI_Status {
                MPI_ERROR: failure.class,
                ..empty_status()
            },
            error: Some(failure),
            next: Next::Freed,
        },
    };
    match operation {
        Operation::Complete(outcome) => (finished(outcome), None),
        Operation::Collective(mut pending) => {
            let outcome = if block {
                pending.request.wait().map(|()| true)
            } else {
                pending.request.test()
            };
            match outcome {
                Ok(false) => (Progress::Pending, Some(Operation::Collective(pending))),
                Ok(true) => {
                    pending.complete();
                    (finished(Ok(empty_status())), None)
                }
                Err(error) => (finished(Err(error.into())), None),
            }
        }
        Operation::Agreement(mut pending) => match pending.request.look(block) {
            Ok(None) => (Progress::Pending, Some(Operation::Agreement(pending))),
            Ok(Some(agreed)) => {
                *pending.flag = agreed as c_int;
                (finished(Ok(empty_status())), None)
            }
            Err(error) => {
                if let Error::AgreeProcFailed { flag: agreed } = error {
                    *pending.flag = agreed as c_int;
                }
                (finished(Err(error.into())), None)
            }
        },
        Operation::NewComm(mut pending, newcomm) => match pending.look(block) {
            Ok(None) => (
                Progress::Pending,
                Some(Operation::NewComm(pending, newcomm)),
            ),
            Ok(Some(handle)) => {
                *newcomm = handle;
                (finished(Ok(empty_status())), None)
            }
            Err(failure) => {
                *newcomm = MPI_COMM_NULL;
                (finished(Err(failure)), None)
            }
        },
        Operation::Receive(mut pending) => match pending.request.look(block) {
            Ok(None) => (Progress::Pending, Some(Operation::Receive(pending))),
            Err(Error::ProcFailedPending) => {
                let failure = Failure::from(Error::ProcFailedPending);
                let progress = Progress::Done {
                    status: MPI_Status {
                        MPI_ERROR: failure.class,
                        ..empty_status()
                    },
                    error: Some(failure),
                    next: Next::Active,
                };
                (progress, Some(Operation::Receive(pending)))
            }
            Ok(Some(status)) => {
                pending.complete(status.count);
                (finished(Ok(c_status(status))), None)
            }
            Err(error) => (finished(Err(error.into())), None),
        },
        Operation::Pair(pair) => advance_pair(pair, block, finished),
        Operation::Generalized(state) => {
            if state.complete(block) {
                (finished(state.finish()), None)
            } else {
                (Progress::Pending, Some(Operation::Generalized(state)))
            }
        }
        // A persistent request is never nested in another (`progress` unwraps it).
        Operation::Persistent(persistent) => {
            let failure = Failure::new(MPI_ERR_INTERN, "a persistent request inside a request");
            (
                finished(Err(failure)),
                Some(Operation::Persistent(persistent)),
            )
        }
    }
}

/// [`advance`] for `MPI_Isendrecv`: done once both halves are, with the receive's status and
/// the first failure (the receive's, else the send's). A send that failed withdraws a receive
/// no message matched yet (so the request never waits for a message after its send failed),
/// as `MPI_Sendrecv` never posts its receive after a failed send. A wildcard receive's
/// `MPIX_ERR_PROC_FAILED_PENDING` is reported and the request stays pending, as for
/// `MPI_Irecv`.
fn advance_pair(
    mut pair: Box<crate::runtime::Pair>,
    block: bool,
    finished: impl Fn(Result<MPI_Status, Failure>) -> Progress,
) -> (Progress, Option<Operation>) {
    advance_send_half(&mut pair, false);
    if pair.send_error.is_some() {
        if let Some(Operation::Receive(pending)) = pair.receive.as_mut() {
            if pending.request.cancel() {
                pair.receive = None;
            }
        }
    }
    if let Some(receive) = pair.receive.take() {
        match advance(receive, block) {
            (
                Progress::Done {
                    next: Next::Active,
                    status,
                    error,
                },
                still,
            ) => {
                pair.receive = still;
                let progress = Progress::Done {
                    status,
                    error,
                    next: Next::Active,
                };
                return (progress, Some(Operation::Pair(pair)));
            }
            (Progress::Done { status, error, .. }, _) => pair.received = Some((status, error)),
            (_, still) => pair.receive = still,
        }
    }
    advance_send_half(&mut pair, block);
    if pair.receive.is_some() || pair.send.is_some() {
        return (Progress::Pending, Some(Operation::Pair(pair)));
    }
    let (status, receive_error) = pair.received.take().unwrap_or((empty_status(), None));
    match receive_error.or(pair.send_error.take()) {
        None => (finished(Ok(status)), None),
        Some(failure) => (finished(Err(failure)), None),
    }
}

/// Looks at the send half of an `MPI_Isendrecv` (waiting for it when `block`).
fn advance_send_half(pair: &mut crate::runtime::Pair, block: bool) {
    if let Some(send) = pair.send.take() {
        match advance(send, block) {
            (Progress::Done { error, .. }, _) => pair.send_error = error,
            (_, still) => pair.send = still,
        }
    }
}

/// Starts `MPI_Isendrecv`'s two halves: the send first (a send that fails at once fails the
/// request before anything is received, as `MPI_Sendrecv` does), then the receive.
///
/// # Safety
/// As `MPI_Isend` for `sendbuf` (read during this call only) and as `MPI_Irecv` for `recvbuf`.
#[allow(clippy::too_many_arguments)]
unsafe fn send_receive_operation(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    source_rank: c_int,
    recvtag: c_int,
    comm: c_int,
) -> Result<Operation, Failure> {
    // SAFETY: forwarded contract; the data is copied by the call.
    let send = unsafe { send_operation(sendbuf, sendcount, sendtype, dest, sendtag, comm, false)? };
    if let Operation::Complete(Err(failure)) = send {
        return Ok(Operation::Complete(Err(failure)));
    }
    // SAFETY: forwarded contract.
    let receive =
        unsafe { receive_operation(recvbuf, recvcount, recvtype, source_rank, recvtag, comm)? };
    Ok(Operation::Pair(Box::new(crate::runtime::Pair {
        send: Some(send),
        receive: Some(receive),
        send_error: None,
        received: None,
    })))
}

/// `MPI_Isendrecv` (MPI-4.0 §3.10): `MPI_Sendrecv` as a request, which completes once both the
/// send and the receive did; its status is the receive's, its error the receive's, else the
/// send's. `MPI_PROC_NULL` on either side skips that side.
///
/// # Safety
/// `sendbuf` is NULL or points at `sendcount` readable elements of `sendtype` (copied by the
/// call); `recvbuf` is NULL or points at `recvcount` writable elements of `recvtype`, valid and
/// not accessed by the program until the request completes; `request` is NULL or points at a
/// writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    source_rank: c_int,
    recvtag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        // SAFETY: forwarded contract.
        let operation = unsafe {
            send_receive_operation(
                sendbuf,
                sendcount,
                sendtype,
                dest,
                sendtag,
                recvbuf,
                recvcount,
                recvtype,
                source_rank,
                recvtag,
                comm,
            )?
        };
        let handle = with_runtime(|runtime| Ok(runtime.add_request(operation, comm)))?;
        request.write(handle);
        Ok(())
    })
}

/// `MPI_Isendrecv_replace` (MPI-4.0 §3.10): `MPI_Isendrecv` with one buffer, whose data is
/// sent (copied at the call) and then replaced by the message received.
///
/// # Safety
/// `buf` is NULL or points at `count` elements of `datatype`, valid and not accessed by the
/// program until the request completes; `request` is NULL or points at a writable
/// `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    sendtag: c_int,
    source_rank: c_int,
    recvtag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract; the send copies the data before the receive is posted, so
    // the one buffer may serve as both.
    unsafe {
        MPI_Isendrecv(
            buf,
            count,
            datatype,
            dest,
            sendtag,
            buf,
            count,
            datatype,
            source_rank,
            recvtag,
            comm,
            request,
        )
    }
}

/// Where a request stands after [`settle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// `MPI_REQUEST_NULL`, or an inactive persistent request.
    Inactive,
    /// Still running.
    Pending,
    /// Finished; its outcome waits in the table for the program's completion call.
    Finished,
    /// A wildcard receive that reports `MPIX_ERR_PROC_FAILED_PENDING` (it stays pending).
    FailurePending,
}

/// Looks at request `handle` (waiting for it when `block`) without completing it for the
/// program: an outcome is left in the table (in a persistent request, as its active
/// operation), where the next completion call finds it.
///
/// # Errors
/// `MPI_ERR_REQUEST` for a handle that is not in the table.
pub(crate) fn settle(handle: c_int, block: bool) -> Result<Standing, Failure> {
    let mut comm = MPI_COMM_WORLD;
    Ok(match progress(handle, block, &mut comm)? {
        Progress::Inactive => Standing::Inactive,
        Progress::Pending => Standing::Pending,
        Progress::Done {
            next: Next::Active, ..
        } => Standing::FailurePending,
        Progress::Done {
            status,
            error,
            next,
        } => {
            let operation = Operation::Complete(error.map_or(Ok(status), Err));
            with_runtime(|runtime| {
                if next == Next::Freed {
                    runtime
                        .requests
                        .insert(handle, RequestEntry { operation, comm });
                } else if let Some(RequestEntry {
                    operation: Operation::Persistent(persistent),
                    ..
                }) = runtime.requests.get_mut(&handle)
                {
                    // `progress` put the persistent request back, inactive: the outcome becomes
                    // its active operation again.
                    persistent.active = Some(Box::new(operation));
                }
                Ok(())
            })?;
            Standing::Finished
        }
    })
}

/// Waits for request `handle` if it is still pending and leaves its outcome in the table, for
/// the program's own `MPI_Wait` / `MPI_Test` (a later collective completes the non-blocking
/// ones started before it so). Does nothing for a handle already completed by the program.
pub(crate) fn complete_in_place(handle: c_int) {
    let _ = settle(handle, true);
}

/// Completes `*request` for the program (waiting for it when `block`), as the multiple
/// completion calls do: its status (`MPI_ERROR` set) and error; the handle becomes
/// `MPI_REQUEST_NULL` unless the request stays pending (a wildcard receive's
/// `MPIX_ERR_PROC_FAILED_PENDING`, or a request not finished when `!block`) or is persistent
/// (it stays allocated, inactive). An inactive request gives an empty status. `comm` is set to
/// the request's communicator handle.
pub(crate) fn finish(
    request: &mut c_int,
    block: bool,
    comm: &mut c_int,
) -> (MPI_Status, Option<Failure>) {
    let (status, error, next) = match progress(*request, block, comm) {
        Ok(Progress::Inactive) => (empty_status(), None, Next::Inactive),
        Ok(Progress::Done {
            status,
            error,
            next,
        }) => (status, error, next),
        Ok(Progress::Pending) => {
            let failure = Failure::new(MPI_ERR_INTERN, "a completed request is pending");
            (empty_status(), Some(failure), Next::Active)
        }
        Err(failure) => (
            MPI_Status {
                MPI_ERROR: failure.class,
                ..empty_status()
            },
            Some(failure),
            Next::Active,
        ),
    };
    *request = next.handle(*request);
    (status, error)
}

/// The outcome of a multiple completion call from its first error: `MPI_ERR_IN_STATUS` when
/// the statuses say which request failed how, else that error itself.
pub(crate) fn first_error_outcome(
    first_error: Option<(c_int, Failure)>,
    statuses_given: bool,
    comm: &mut c_int,
) -> Result<(), Failure> {
    match first_error {
        None => Ok(()),
        Some((request_comm, failure)) => {
            *comm = request_comm;
            if statuses_given {
                Err(Failure::in_status(&failure))
            } else {
                Err(failure)
            }
        }
    }
}

/// `MPI_Wait`. A wildcard receive that reports `MPIX_ERR_PROC_FAILED_PENDING` keeps its handle
/// (the request stays pending, semantics §3.2), and so does a persistent request (it becomes
/// inactive); any other completion sets it to `MPI_REQUEST_NULL`. An inactive request returns
/// at once with an empty status.
///
/// # Safety
/// `request` is NULL or points at a readable and writable `MPI_Request`; `status` is NULL or
/// points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(request: *mut c_int, status: *mut MPI_Status) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        match progress(request.read(), true, comm)? {
            Progress::Pending => Err(Failure::new(MPI_ERR_INTERN, "a waited request is pending")),
            Progress::Inactive => {
                status.write(empty_status());
                Ok(())
            }
            Progress::Done {
                status: done,
                error,
                next,
            } => {
                request.write(next.handle(request.read()));
                status.write(done);
                error.map_or(Ok(()), Err)
            }
        }
    })
}

/// `MPI_Test`.
///
/// # Safety
/// As `MPI_Wait`; `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Test(
    request: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        match progress(request.read(), false, comm)? {
            Progress::Pending => {
                flag.write(0);
                Ok(())
            }
            Progress::Inactive => {
                flag.write(1);
                status.write(empty_status());
                Ok(())
            }
            Progress::Done {
                status: done,
                error,
                next,
            } => {
                flag.write(c_int::from(next.completed()));
                request.write(next.handle(request.read()));
                status.write(done);
                error.map_or(Ok(()), Err)
            }
        }
    })
}

/// A C array of `count` elements (NULL allowed when `count` is 0).
///
/// # Safety
/// `pointer` is NULL or points at `count` elements, valid and used by nothing else for `'a`.
pub(crate) unsafe fn array<'a, T>(
    pointer: *mut T,
    count: c_int,
    what: &str,
) -> Result<&'a mut [T], Failure> {
    let count = usize::try_from(count)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
    if count == 0 {
        return Ok(&mut []);
    }
    if pointer.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not NULL and, by the caller's contract, `count` valid elements for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(pointer, count) })
}

/// The statuses argument: `None` for `MPI_STATUSES_IGNORE` (NULL).
///
/// # Safety
/// `statuses` is NULL or points at `count` writable `MPI_Status`es, for `'a`.
pub(crate) unsafe fn statuses_of<'a>(
    statuses: *mut MPI_Status,
    count: c_int,
) -> Result<Option<&'a mut [MPI_Status]>, Failure> {
    if statuses.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract; not NULL.
        Ok(Some(unsafe { array(statuses, count, "statuses")? }))
    }
}

/// `MPI_Waitall`: waits for every request in order. When one fails, every status's `MPI_ERROR`
/// tells its outcome and the call returns `MPI_ERR_IN_STATUS`.
///
/// # Safety
/// `requests` is NULL or points at `count` readable and writable `MPI_Request`s; `statuses` is
/// NULL (`MPI_STATUSES_IGNORE`) or points at `count` writable `MPI_Status`es.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    requests: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract.
        let requests = unsafe { array(requests, count, "requests")? };
        // SAFETY: forwarded contract.
        let statuses = unsafe { statuses_of(statuses, count)? };
        finish_all(requests, statuses, true, comm)
    })
}

/// Completes every request in order with [`finish`] (waiting for each when `block`), writes
/// each status when `statuses` are given, and returns the outcome of the first error
/// ([`first_error_outcome`]): `MPI_Waitall`, and `MPI_Testall` once all are done.
pub(crate) fn finish_all(
    requests: &mut [c_int],
    mut statuses: Option<&mut [MPI_Status]>,
    block: bool,
    comm: &mut c_int,
) -> Result<(), Failure> {
    let mut first_error: Option<(c_int, Failure)> = None;
    for (index, request) in requests.iter_mut().enumerate() {
        let mut request_comm = MPI_COMM_WORLD;
        let (status, error) = finish(request, block, &mut request_comm);
        if let Some(statuses) = statuses.as_deref_mut() {
            statuses[index] = status;
        }
        if let (None, Some(error)) = (&first_error, error) {
            first_error = Some((request_comm, error));
        }
    }
    first_error_outcome(first_error, statuses.is_some(), comm)
}

/// `MPI_Waitany`: `index = MPI_UNDEFINED` when every request is inactive (`MPI_REQUEST_NULL`
/// or an inactive persistent request).
///
/// # Safety
/// As `MPI_Waitall` for `requests`; `index` is NULL or points at a writable int; `status` is
/// NULL or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    requests: *mut c_int,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract.
        let requests = unsafe { array(requests, count, "requests")? };
        // SAFETY: checked for NULL by `out`.
        let index = unsafe { out(index, "index")? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        loop {
            let mut any_active = false;
            for (i, request) in requests.iter_mut().enumerate() {
                match progress(*request, false, comm)? {
                    Progress::Inactive => {}
                    Progress::Pending => any_active = true,
                    Progress::Done {
                        status: done,
                        error,
                        next,
                    } => {
                        *request = next.handle(*request);
                        index.write(i as c_int);
                        status.write(done);
                        return error.map_or(Ok(()), Err);
                    }
                }
            }
            if !any_active {
                index.write(MPI_UNDEFINED);
                status.write(empty_status());
                return Ok(());
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    })
}

/// `MPI_Sendrecv` (MPI-4.0 §3.10): a send and a receive in one call, with the failure rules of
/// each (semantics §3.1-3.2); `MPI_PROC_NULL` on either side skips that side.
///
/// # Safety
/// `sendbuf` is NULL or points at `sendcount` readable elements of `sendtype`; `recvbuf` is
/// NULL or points at `recvcount` writable elements of `recvtype`, not overlapping `sendbuf`;
/// `status` is NULL (`MPI_STATUS_IGNORE`) or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    source_rank: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        let send = Data::of(sendcount, sendtype)?;
        let receive = Data::of(recvcount, recvtype)?;
        // SAFETY: forwarded contract; used only during this call (the send copies it).
        let data = unsafe { send.read(sendbuf)? };
        // SAFETY: forwarded contract; used only during this call, and disjoint from `data`.
        let target = unsafe { receive.target(recvbuf)? };
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let exchange = Exchange::new(comm, dest, sendtag, source_rank, recvtag)?;
        let received = exchange.run(&data, || Ok(target))?;
        status.write(received);
        Ok(())
    })
}

/// `MPI_Sendrecv_replace` (MPI-4.0 §3.10): as `MPI_Sendrecv`, the message received replacing
/// the one sent in `buf`. On an error `buf` holds the data sent, or part of a message received.
///
/// # Safety
/// `buf` is NULL or points at `count` readable and writable elements of `datatype`; `status`
/// is NULL or points at a writable `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    sendtag: c_int,
    source_rank: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut MPI_Status,
) -> c_int {
    boundary(comm, || {
        let described = Data::of(count, datatype)?;
        // SAFETY: forwarded contract; copied at once (the receive then writes the same memory).
        let data = unsafe { described.read(buf)? }.into_owned();
        // SAFETY: forwarded contract.
        let status = unsafe { StatusOut::new(status) };
        let exchange = Exchange::new(comm, dest, sendtag, source_rank, recvtag)?;
        // SAFETY: forwarded contract; used only during this call.
        let receive = || unsafe { described.target(buf) };
        let received = exchange.run(&data, receive)?;
        status.write(received);
        Ok(())
    })
}

/// The arguments of the two `MPI_Sendrecv` calls besides the buffers, checked before
/// anything is sent.
struct Exchange {
    /// The communicator the send goes over (for an intercommunicator, not the receive's).
    send_comm: std::sync::Arc<crate::runtime::CommBox>,
    comm: std::sync::Arc<crate::runtime::CommBox>,
    /// `None` for `MPI_PROC_NULL`.
    dest: Option<Rank>,
    send_tag: c_int,
    /// `None` for `MPI_PROC_NULL`.
    source: Option<Source>,
    receive_tag: Tag,
}

impl Exchange {
    fn new(
        comm: c_int,
        dest: c_int,
        send_tag: c_int,
        source_rank: c_int,
        receive_tag_value: c_int,
    ) -> Result<Self, Failure> {
        let (send_comm, dest) = send_side(comm, dest)?;
        let comm = receive_side(comm, source_rank)?;
        if send_tag < 0 {
            return Err(Failure::new(
                MPI_ERR_TAG,
                format!("invalid send tag {send_tag}"),
            ));
        }
        Ok(Exchange {
            send_comm,
            comm,
            dest: destination(dest)?,
            send_tag,
            receive_tag: receive_tag(receive_tag_value)?,
            source: source(source_rank)?,
        })
    }

    /// Sends `data` (copied by the call) and then receives into the buffer that `receive` gives
    /// (called once the data is copied, so the two may be the same memory). The send starts
    /// first and its failure is reported before the receive is posted, so a send to a failed
    /// rank consumes no message; the receive is posted before this waits for the send's
    /// flow-control credit, so two ranks exchanging messages larger than their credit do not
    /// wait for each other. A peer recognized as failed acts as `MPI_PROC_NULL` (semantics §3.1),
    /// through the runtime.
    ///
    /// # Errors
    /// The send's failure (before anything is received), else the receive's, else the send's
    /// later failure (a send that waited for credit).
    fn run<'a>(
        &'a self,
        data: &[u8],
        receive: impl FnOnce() -> Result<Target<'a>, Failure>,
    ) -> Result<MPI_Status, Failure> {
        let comm = self.comm.get();
        let mut send = match self.dest {
            None => None,
            Some(dest) => {
                let mut request = self.send_comm.get().isend(data, dest, self.send_tag)?;
                match request.test()? {
                    Some(_) => None,
                    None => Some(request),
                }
            }
        };
        let mut target = receive()?;
        let status = match self.source {
            None => proc_null_status(),
            Some(source) => {
                let mut request = comm.irecv(target.receive_buffer(), source, self.receive_tag)?;
                let status = request.wait().map_err(Failure::blocking)?;
                drop(request);
                target.finish(status.count);
                c_status(status)
            }
        };
        if let Some(send) = send.as_mut() {
            send.wait()?;
        }
        Ok(status)
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("point_to_point.rs");

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Persistent requests (MPI-4.0 §3.9): `MPI_Send_init`, `MPI_Ssend_init`, `MPI_Bsend_init`,
//! `MPI_Rsend_init`, `MPI_Recv_init`, `MPI_Start` and `MPI_Startall`.
//!
//! A persistent request is an [`Operation::Persistent`] in the request table: the arguments of
//! its init call (a [`Template`], checked by that call) and, while it is active, the operation
//! its last `MPI_Start` started, exactly as `MPI_Isend` / `MPI_Issend` / `MPI_Irecv` would have
//! started it (so the failure rules are theirs, semantics §3.1-3.2). The completion calls complete
//! that operation in one place, `crate::point_to_point::progress`, which leaves the request
//! inactive and allocated; `MPI_Request_free` frees it (`crate::completion`).

use std::ffi::c_void;
use std::os::raw::c_int;

use crate::buffered::Address;
use crate::constants::*;
use crate::derived::Data;
use crate::errors::{boundary, boundary_on, out, Failure};
use crate::intercomm::{receive_side, send_side};
use crate::point_to_point::{
    array, destination, receive_operation, receive_tag, send_operation, source,
};
use crate::runtime::{with_runtime, Operation, Persistent, RequestEntry};

/// What a persistent request starts.
#[derive(Clone)]
pub(crate) enum Kind {
    /// A send (`MPI_Send_init`, `_Bsend_init`, `_Rsend_init`), or a synchronous one
    /// (`MPI_Ssend_init`).
    Send { synchronous: bool },
    /// A receive (`MPI_Recv_init`).
    Receive,
    /// A collective (`MPI_Bcast_init`, ...): what its non-blocking call would schedule, made
    /// again at each start from the init call's arguments.
    Collective(Restart),
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Send { synchronous } => write!(f, "Send {{ synchronous: {synchronous} }}"),
            Kind::Receive => write!(f, "Receive"),
            Kind::Collective(_) => write!(f, "Collective"),
        }
    }
}

/// The schedule of a persistent collective's next start.
pub(crate) type Restart =
    std::sync::Arc<dyn Fn() -> Result<crate::collectives::Scheduled, Failure> + Send + Sync>;

/// The arguments of a persistent request's init call, which every `MPI_Start` uses.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    kind: Kind,
    buf: Address,
    count: c_int,
    datatype: c_int,
    /// The destination or source rank.
    peer: c_int,
    tag: c_int,
    comm: c_int,
    /// Derived datatypes the request copied for its starts (a persistent collective's; a
    /// point-to-point request's copy is `datatype`), freed with the request.
    owned: Vec<c_int>,
}

impl Template {
    /// Checks the arguments as the non-persistent call would (count, datatype, communicator,
    /// rank, tag), so that an init call reports its argument errors at once.
    fn check(&self) -> Result<(), Failure> {
        if let Kind::Collective(restart) = &self.kind {
            crate::runtime::collective_comm_of(self.comm)?;
            return restart().map(drop);
        }
        Data::of(self.count, self.datatype)?;
        let (comm, peer) = match self.kind {
            Kind::Send { .. } => {
                let (comm, dest) = send_side(self.comm, self.peer)?;
                if self.tag < 0 {
                    return Err(Failure::new(
                        MPI_ERR_TAG,
                        format!("invalid tag {}", self.tag),
                    ));
                }
                (comm, destination(dest)?)
            }
            Kind::Receive => {
                let comm = receive_side(self.comm, self.peer)?;
                receive_tag(self.tag)?;
                let inter = with_runtime(|runtime| Ok(runtime.comm(self.comm)?.inter.is_some()))?;
                let peer = match source(self.peer)? {
                    // `receive_side` checked an intercommunicator's source.
                    Some(runthrough::Source::Rank(rank)) if !inter => Some(rank),
                    _ => None,
                };
                (comm, peer)
            }
            Kind::Collective(_) => return Ok(()),
        };
        // A send's destination on an intercommunicator is a rank of the communicator it goes
        // over (`send_side`).
        match peer {
            Some(rank) if rank >= comm.get().size() => Err(Failure::new(
                MPI_ERR_RANK,
                format!(
                    "invalid rank {}: the communicator has {} ranks",
                    self.peer,
                    comm.get().size()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Starts the operation, as `MPI_Isend`, `MPI_Issend` or `MPI_Irecv` does.
    ///
    /// # Safety
    /// The init call's contract: the buffer is valid (for a receive, writable and reserved to
    /// the request) until the operation completes.
    unsafe fn start(&self) -> Result<Operation, Failure> {
        match &self.kind {
            Kind::Collective(restart) => crate::runtime::scheduled_operation(self.comm, restart()),
            &Kind::Send { synchronous } => {
                // SAFETY: forwarded contract.
                unsafe {
                    send_operation(
                        self.buf.0.cast_const(),
                        self.count,
                        self.datatype,
                        self.peer,
                        self.tag,
                        self.comm,
                        synchronous,
                    )
                }
            }
            Kind::Receive => {
                // SAFETY: forwarded contract.
                unsafe {
                    receive_operation(
                        self.buf.0,
                        self.count,
                        self.datatype,
                        self.peer,
                        self.tag,
                        self.comm,
                    )
                }
            }
        }
    }
}

/// The init calls: checks the arguments and writes an inactive persistent request.
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`.
unsafe fn init(mut template: Template, request: *mut c_int) -> c_int {
    boundary(template.comm, || {
        // SAFETY: checked for NULL by `out`.
        let request = unsafe { out(request, "request")? };
        template.check()?;
        // A derived datatype is the request's own copy: the program may free its handle while
        // the request lives (MPI-4.0 §5.1.9); the copy goes with the request.
        if !crate::derived::predefined(template.datatype) && template.datatype != MPI_DATATYPE_NULL
        {
            template.datatype = crate::typeinfo::private_copy(template.datatype)?;
        }
        let comm = template.comm;
        let operation = Operation::Persistent(Box::new(Persistent {
            template,
            active: None,
        }));
        let handle = with_runtime(|runtime| Ok(runtime.add_request(operation, comm)))?;
        request.write(handle);
        Ok(())
    })
}

/// A send's template.
fn send_template(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    synchronous: bool,
) -> Template {
    Template {
        kind: Kind::Send { synchronous },
        buf: Address(buf.cast_mut()),
        count,
        datatype,
        peer: dest,
        tag,
        comm,
        owned: Vec::new(),
    }
}

/// `MPI_Send_init`: a persistent request whose `MPI_Start` starts an `MPI_Isend`.
///
/// # Safety
/// `buf` is NULL or points at `count` elements of `datatype`, readable whenever the request is
/// started (each start copies them); `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    let template = send_template(buf, count, datatype, dest, tag, comm, false);
    // SAFETY: forwarded contract.
    unsafe { init(template, request) }
}

/// `MPI_Ssend_init`: as `MPI_Send_init`, each start an `MPI_Issend` (the operation completes
/// once the destination has matched the message).
///
/// # Safety
/// As `MPI_Send_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    let template = send_template(buf, count, datatype, dest, tag, comm, true);
    // SAFETY: forwarded contract.
    unsafe { init(template, request) }
}

/// `MPI_Bsend_init`: `MPI_Send_init` (sends are buffered by the library; see `MPI_Bsend`).
///
/// # Safety
/// As `MPI_Send_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPI_Send_init(buf, count, datatype, dest, tag, comm, request) }
}

/// `MPI_Rsend_init`: `MPI_Send_init` (a standard send is a valid ready send; see `MPI_Rsend`).
///
/// # Safety
/// As `MPI_Send_init`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { MPI_Send_init(buf, count, datatype, dest, tag, comm, request) }
}

/// `MPI_Recv_init`: a persistent request whose `MPI_Start` posts an `MPI_Irecv`.
///
/// # Safety
/// `buf` is NULL or points at `count` writable elements of `datatype` that, while the request
/// is active, stay valid and untouched by the program (as for `MPI_Irecv`); `request` is NULL
/// or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source_rank: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> c_int {
    let template = Template {
        kind: Kind::Receive,
        buf: Address(buf),
        count,
        datatype,
        peer: source_rank,
        tag,
        comm,
        owned: Vec::new(),
    };
    // SAFETY: forwarded contract.
    unsafe { init(template, request) }
}

/// The template of `handle`, an inactive persistent request; `comm` is set to its communicator.
///
/// # Errors
/// `MPI_ERR_REQUEST` for an invalid handle, a request that is not persistent, or one that is
/// active.
fn inactive_template(handle: c_int, comm: &mut c_int) -> Result<Template, Failure> {
    with_runtime(|runtime| {
        let entry = runtime.requests.get(&handle).ok_or_else(|| {
            Failure::new(
                MPI_ERR_REQUEST,
                format!("invalid or freed request handle {handle}"),
            )
        })?;
        *comm = entry.comm;
        match &entry.operation {
            Operation::Persistent(persistent) if persistent.active.is_none() => {
                Ok(persistent.template.clone())
            }
            Operation::Persistent(_) => Err(Failure::new(
                MPI_ERR_REQUEST,
                format!("persistent request {handle} is active: complete it before MPI_Start"),
            )),
            _ => Err(Failure::new(
                MPI_ERR_REQUEST,
                format!("request {handle} is not a persistent request"),
            )),
        }
    })
}

/// Starts persistent request `handle`; `comm` is set to its communicator.
///
/// # Safety
/// The contract of the request's init call.
unsafe fn start(handle: c_int, comm: &mut c_int) -> Result<(), Failure> {
    let template = inactive_template(handle, comm)?;
    // SAFETY: forwarded contract.
    let operation = unsafe { template.start()? };
    with_runtime(|runtime| match runtime.requests.get_mut(&handle) {
        Some(RequestEntry {
            operation: Operation::Persistent(persistent),
            ..
        }) if persistent.active.is_none() => {
            persistent.active = Some(Box::new(operation));
            Ok(())
        }
        _ => Err(Failure::new(
            MPI_ERR_REQUEST,
            format!("persistent request {handle} was started or freed by another thread"),
        )),
    })
}

/// `MPI_Start` (MPI-4.0 §3.9): starts the operation of an inactive persistent request, as the
/// non-persistent call would (argument errors are returned here; failures complete the
/// request). `MPI_ERR_REQUEST` for a request that is active or not persistent.
///
/// # Safety
/// `request` is NULL or points at a readable `MPI_Request`; the contract of its init call.
#[no_mangle]
pub unsafe extern "C" fn MPI_Start(request: *mut c_int) -> c_int {
    boundary_on(|comm| {
        // SAFETY: checked for NULL by `out`.
        let handle = unsafe { out(request, "request")? }.read();
        // SAFETY: forwarded contract.
        unsafe { start(handle, comm) }
    })
}

/// `MPI_Startall`: every request is checked first (each must be an inactive persistent
/// request, else `MPI_ERR_REQUEST` and none is started), then started in array order; a start
/// that fails (an argument error) is returned, and the requests after it are not started.
///
/// # Safety
/// `requests` is NULL or points at `count` readable `MPI_Request`s; the contract of their
/// init calls.
#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(count: c_int, requests: *mut c_int) -> c_int {
    boundary_on(|comm| {
        // SAFETY: forwarded contract; only read.
        let requests = unsafe { array(requests, count, "requests")? };
        for (i, &handle) in requests.iter().enumerate() {
            if requests[..i].contains(&handle) {
                return Err(Failure::new(
                    MPI_ERR_REQUEST,
                    format!("request {handle} appears twice"),
                ));
            }
            inactive_template(handle, comm)?;
        }
        for &handle in requests.iter() {
            // SAFETY: forwarded contract.
            unsafe { start(handle, comm)? };
        }
        Ok(())
    })
}

/// A persistent collective's init call (`MPI_Bcast_init`, ...): checks the arguments as the
/// non-blocking call would (and the info: a live handle, `MPI_INFO_ENV` or `MPI_INFO_NULL`;
/// the library uses no hint) and writes an inactive persistent request, each `MPI_Start` of
/// which starts what `restart` schedules, as the non-blocking call does. Local: MPI allows the
/// init calls not to synchronize. The ranks start the request in the same order relative to
/// their other collectives on `comm`, as MPI requires.
///
/// # Safety
/// `request` is NULL or points at a writable `MPI_Request`; the buffers and arrays `restart`
/// reads stay valid while the request exists (MPI's rule for persistent collectives).
pub(crate) unsafe fn init_collective(
    comm: c_int,
    info: c_int,
    request: *mut c_int,
    restart: Restart,
    owned: Vec<c_int>,
) -> c_int {
    let template = Template {
        kind: Kind::Collective(restart),
        buf: Address(std::ptr::null_mut()),
        count: 0,
        datatype: MPI_DATATYPE_NULL,
        peer: MPI_PROC_NULL,
        tag: 0,
        comm,
        owned,
    };
    if let Err(failure) = crate::info::check_handle(info, true) {
        template.release();
        return boundary(comm, || Err(failure));
    }
    let kept = template.clone();
    // SAFETY: forwarded contract.
    let code = unsafe { init(template, request) };
    if code != MPI_SUCCESS {
        kept.release(); // no request holds the copies
    }
    code
}

impl Template {
    /// The request is freed: its own copies of derived datatypes go too.
    pub(crate) fn release(&self) {
        let _ = with_runtime(|runtime| {
            if !matches!(self.kind, Kind::Collective(_))
                && !crate::derived::predefined(self.datatype)
                && self.datatype != MPI_DATATYPE_NULL
            {
                runtime.datatypes.remove(&self.datatype);
            }
            for datatype in &self.owned {
                runtime.datatypes.remove(datatype);
            }
            Ok(())
        });
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("persistent.rs");

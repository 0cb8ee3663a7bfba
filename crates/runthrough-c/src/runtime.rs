// SPDX-License-Identifier: MIT OR Apache-2.0
//! The library's process-global state: the tables that C handles index.
//!
//! # Invariants
//! - Handles are never reused: every table takes its numbers from one counter that only grows,
//!   past the predefined handles. A freed handle is simply absent from its table.
//! - The lock is never held while a call waits for a peer: blocking calls clone what they need
//!   (an `Arc` of the communicator) or take their request out of the table first.

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use runthrough::{AgreementRequest, CollectiveRequest, Comm, Group, Request};

use crate::constants::*;
use crate::errors::{Failure, Handler};

/// A communicator as the tables hold it: the world (owned by the leaked universe) or one made
/// by a creation call (released when the last `Arc` goes: its table entry and its requests).
#[derive(Debug)]
pub(crate) enum CommBox {
    World(&'static Comm),
    Owned(Comm),
}

impl CommBox {
    pub(crate) fn get(&self) -> &Comm {
        match self {
            CommBox::World(comm) => comm,
            CommBox::Owned(comm) => comm,
        }
    }
}

/// One communicator handle.
#[derive(Debug)]
pub(crate) struct CommEntry {
    pub(crate) comm: Arc<CommBox>,
    /// The handle of its error handler (reported by `MPI_Comm_get_errhandler`) and what it does.
    pub(crate) errhandler: (c_int, Handler),
    /// The `MPIX_Comm_iagree` requests started on it and perhaps still pending, which every
    /// later collective call completes first.
    pub(crate) agreements: Vec<c_int>,
    /// Its name (`MPI_Comm_set_name`, `MPI_Comm_get_name`).
    pub(crate) name: String,
    /// Its topology (`MPI_Cart_create`, `MPI_Cart_sub`, `MPI_Graph_create`,
    /// `MPI_Dist_graph_create(_adjacent)`), if it has one.
    pub(crate) topology: Option<Arc<crate::topology::Topology>>,
    /// For an intercommunicator (`MPI_Intercomm_create`): its groups and the communicator it
    /// receives on; `comm` is then the one it sends on (see `crate::intercomm`).
    pub(crate) inter: Option<Arc<crate::intercomm::Inter>>,
}

impl CommEntry {
    fn new(comm: CommBox, errhandler: (c_int, Handler)) -> Self {
        CommEntry {
            comm: Arc::new(comm),
            errhandler,
            agreements: Vec::new(),
            name: String::new(),
            topology: None,
            inter: None,
        }
    }
}

/// A receive in progress, or a send waiting for flow-control credit. Field order matters:
/// `request` borrows from `comm` (and, for a receive, from the C caller's buffer) and is dropped
/// first.
pub(crate) struct PendingReceive {
    pub(crate) request: Request<'static>,
    /// For a receive of a strided derived type: the scratch buffer `request` receives into
    /// (dropped after it) and the unpacking into the C buffer on completion.
    pub(crate) unpack: Option<crate::derived::Unpack>,
    /// Keeps the communicator that `request` borrows alive; never read.
    #[allow(dead_code)]
    pub(crate) comm: Arc<CommBox>,
}

impl PendingReceive {
    /// Completes a receive that got `received` bytes: the runtime's request is dropped, then
    /// a strided receive's data is unpacked into the C buffer.
    pub(crate) fn complete(self, received: usize) {
        let PendingReceive {
            request, unpack, ..
        } = self;
        drop(request);
        if let Some(unpack) = unpack {
            unpack.apply(received);
        }
    }
}

impl std::fmt::Debug for PendingReceive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingReceive")
            .field("request", &self.request)
            .finish()
    }
}

/// A non-blocking agreement (`MPIX_Comm_iagree`). Field order matters: `request` borrows
/// from `comm` and is dropped first.
#[derive(Debug)]
pub(crate) struct PendingAgreement {
    pub(crate) request: AgreementRequest<'static, u32>,
    /// The caller's flag, written when the agreement completes (MPI's rule: it stays valid and
    /// untouched until then).
    pub(crate) flag: &'static mut c_int,
    /// Keeps the communicator that `request` borrows alive; never read.
    #[allow(dead_code)]
    pub(crate) comm: Arc<CommBox>,
}

/// A communicator in the making (`MPIX_Comm_ishrink`, `MPI_Comm_idup`; `MPI_Comm_dup` waits
/// for one at once): the runtime's requests, one per communicator it makes (two for the
/// dup of an intercommunicator: the one it sends on, then the one it receives on), and what
/// becomes of their communicators (`crate::communicators::PendingComm::look`). Field order
/// matters: `requests` borrow from `comms` and are dropped first.
#[derive(Debug)]
pub(crate) struct PendingComm {
    pub(crate) requests: Vec<AgreementRequest<'static, Comm>>,
    /// The communicators made so far, in the order of `requests`.
    pub(crate) made: Vec<Comm>,
    pub(crate) making: Making,
    /// The handle of the communicator it is made from, whose error handler (and for a dup,
    /// attributes and topology) the new one inherits.
    pub(crate) parent: c_int,
    /// Keep the communicators that `requests` borrow alive; never read.
    #[allow(dead_code)]
    pub(crate) comms: Vec<Arc<CommBox>>,
}

/// What a [`PendingComm`] makes.
#[derive(Debug)]
pub(crate) enum Making {
    /// A shrink's communicator.
    Shrink,
    /// A duplicate: of an intracommunicator (`None`), or of this intercommunicator.
    Dup(Option<Arc<crate::intercomm::Inter>>),
}

/// A non-blocking collective that the rank's engine runs itself as its messages arrive (see
/// [`start_scheduled`]). Field order matters: `request` borrows from `comm`, and from the C
/// caller's receive buffer or `scratch`, and is dropped first.
#[derive(Debug)]
pub(crate) struct PendingCollective {
    pub(crate) request: CollectiveRequest<'static>,
    /// For strided data: the scratch buffer of packed data that `request` works on, unpacked
    /// into the C buffer when the call succeeds (see [`Scratch`]).
    pub(crate) scratch: Option<Scratch>,
    /// Keeps the communicator that `request` borrows alive; never read.
    #[allow(dead_code)]
    pub(crate) comm: Arc<CommBox>,
}

impl PendingCollective {
    /// Ends a call that succeeded: the runtime's request is dropped, then a strided
    /// broadcast's data is unpacked into the C buffer.
    pub(crate) fn complete(self) {
        let PendingCollective {
            request, scratch, ..
        } = self;
        drop(request);
        match scratch {
            Some(Scratch::Unpack(unpack, true)) => unpack.apply(usize::MAX),
            Some(Scratch::Blocks(unpack)) => unpack.apply(),
            Some(Scratch::Unpack(_, false) | Scratch::Discard(_)) | None => {}
        }
    }
}

/// The scratch buffer a scheduled collective's request works on, unpacked into the C buffer
/// when the call succeeds (see [`PendingCollective::scratch`]).
#[derive(Debug)]
pub(crate) enum Scratch {
    /// Packed data of a strided datatype (a broadcast's, a scatter's block), and whether it is
    /// unpacked (not at a broadcast's root, whose data it is).
    Unpack(crate::derived::Unpack, bool),
    /// Packed blocks with gaps (a gather's, all-gather's or all-to-all's receive buffer).
    Blocks(crate::rooted::UnpackBlocks),
    /// A result nobody reads (held for its drop, which frees it after the request's).
    #[allow(dead_code)]
    Discard(Discard),
}

/// A buffer that a request writes and nobody reads: the result of an exclusive scan at rank 0,
/// whose receive buffer MPI leaves out (MPI-4.0 §6.11.2), so that the program may pass NULL.
#[derive(Debug)]
pub(crate) struct Discard(*mut [u8]);

// SAFETY: the allocation is owned by the `Discard` alone (nothing else frees it); the slice
// `new` hands out is used only by the request, which is dropped first.
unsafe impl Send for Discard {}

impl Discard {
    /// A `Discard` of `len` zero bytes and the slice of them the request writes, which must
    /// not be used after the `Discard` is dropped (the request that holds it is dropped
    /// first: `PendingCollective`'s field order).
    pub(crate) fn new(len: usize) -> Result<(Discard, &'static mut [u8]), Failure> {
        let raw = Box::into_raw(crate::datatypes::zeroed(len)?.into_boxed_slice());
        // SAFETY: a live allocation, freed only by `drop`, after which (by the contract above)
        // the slice is not used.
        Ok((Discard(raw), unsafe { &mut *raw }))
    }
}

impl Drop for Discard {
    fn drop(&mut self) {
        // SAFETY: from `Box::into_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// A non-blocking collective started as a schedule: its request, and the scratch buffer it
/// works on, if any (see [`PendingCollective`]).
pub(crate) type Started = (CollectiveRequest<'static>, Option<Scratch>);

/// What a request handle stands for.
#[derive(Debug)]
pub(crate) enum Operation {
    /// Finished when it was started (sends, `MPI_PROC_NULL`, errors found at once).
    Complete(Result<MPI_Status, Failure>),
    /// A posted receive, or a send waiting for flow-control credit.
    Receive(PendingReceive),
    /// A collective run by the engine as a schedule (`MPI_Ibarrier`, `MPI_Ibcast`, the
    /// gathers, scatters, all-gathers and all-to-alls, the reductions with a predefined
    /// operation).
    Collective(PendingCollective),
    /// An agreement progressed by the library (`MPIX_Comm_iagree`).
    Agreement(PendingAgreement),
    /// A communicator made by the library (`MPIX_Comm_ishrink`, `MPI_Comm_idup`), and the
    /// caller's `*newcomm`, written when the request completes (it stays valid and untouched
    /// until then).
    NewComm(Box<PendingComm>, &'static mut c_int),
    /// A send and a receive completed together (`MPI_Isendrecv`, `MPI_Isendrecv_replace`).
    Pair(Box<Pair>),
    /// A persistent request (`MPI_Send_init`, `MPI_Recv_init`, ...): inactive, or active with
    /// the operation its last `MPI_Start` started. Completing that operation leaves it inactive
    /// and in the table (`crate::point_to_point::progress`).
    Persistent(Box<Persistent>),
    /// A generalized request (`MPI_Grequest_start`), completed by the program.
    Generalized(Arc<crate::grequest::State>),
}

/// The two halves of an `MPI_Isendrecv` request: each is `None` once it finished, its outcome
/// kept until the other finishes too.
#[derive(Debug)]
pub(crate) struct Pair {
    pub(crate) send: Option<Operation>,
    pub(crate) receive: Option<Operation>,
    /// The send's failure, once it finished with one.
    pub(crate) send_error: Option<Failure>,
    /// The receive's status and failure, once it finished.
    pub(crate) received: Option<(MPI_Status, Option<Failure>)>,
}

/// A persistent request: the arguments it was created with, and the operation started from
/// them (`Complete`, `Receive`), if it is active.
#[derive(Debug)]
pub(crate) struct Persistent {
    pub(crate) template: crate::persistent::Template,
    /// `None` while the request is inactive.
    pub(crate) active: Option<Box<Operation>>,
}

/// One request handle: the operation and the communicator handle whose error handler reports it.
#[derive(Debug)]
pub(crate) struct RequestEntry {
    pub(crate) operation: Operation,
    pub(crate) comm: c_int,
}

/// The tables of an initialized library.
#[derive(Debug)]
pub(crate) struct Runtime {
    /// The job (for `MPI_Abort`); it lives as long as the process.
    pub(crate) universe: &'static runthrough::Universe,
    pub(crate) world_rank: u32,
    pub(crate) comms: BTreeMap<c_int, CommEntry>,
    pub(crate) groups: BTreeMap<c_int, Group>,
    pub(crate) requests: BTreeMap<c_int, RequestEntry>,
    pub(crate) errhandlers: BTreeMap<c_int, Handler>,
    /// Derived datatypes, by handle (from `derived::DERIVED_BASE` up).
    pub(crate) datatypes: BTreeMap<c_int, crate::derived::DerivedType>,
    /// Messages taken out of matching by `MPI_Mprobe` / `MPI_Improbe`, not yet received.
    pub(crate) messages: BTreeMap<c_int, crate::matched::MessageEntry>,
    /// User reduction operations (`MPI_Op_create`), by handle.
    pub(crate) ops: BTreeMap<c_int, crate::ops::UserOperation>,
    /// The buffer of `MPI_Buffer_attach` and its size, until `MPI_Buffer_detach` (only kept:
    /// the library buffers messages itself). Boxed: it is rarely set.
    pub(crate) attached: Option<Box<(crate::buffered::Address, c_int)>>,
    /// The intercommunicator to the ranks that spawned this process (`MPI_Comm_get_parent`).
    pub(crate) parent: Option<c_int>,
    /// The generalized requests not yet completed and freed, by request handle (where
    /// `MPI_Grequest_complete` finds them while a completion call waits on them).
    pub(crate) generalized: BTreeMap<c_int, Arc<crate::grequest::State>>,
    /// The error handlers of communicators freed while requests on them were pending: a freed
    /// communicator's pending operations complete normally, and their errors still go to its
    /// handler (not to `MPI_COMM_WORLD`'s, as a call given a freed handle does). A few bytes per
    /// such communicator, kept for the life of the library (handles are never reused).
    pub(crate) freed_handlers: BTreeMap<c_int, crate::errors::Handler>,
    next_handle: c_int,
}

/// Where the library is in its life.
#[derive(Debug)]
pub(crate) enum Phase {
    Before,
    Running(Box<Runtime>),
    Finalized,
}

/// The state. Only `lock_state` touches it.
static STATE: Mutex<Phase> = Mutex::new(Phase::Before);

/// Locks a mutex, ignoring poisoning: every table update is a single insert or remove, so a
/// panic (caught at the boundary) never leaves a table half-changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn lock_state() -> MutexGuard<'static, Phase> {
    lock(&STATE)
}

/// Runs `f` on the tables of the running library.
///
/// # Errors
/// `MPI_ERR_OTHER` before `MPI_Init` and after `MPI_Finalize`; whatever `f` returns.
pub(crate) fn with_runtime<R>(
    f: impl FnOnce(&mut Runtime) -> Result<R, Failure>,
) -> Result<R, Failure> {
    match &mut *lock_state() {
        Phase::Running(runtime) => f(runtime),
        Phase::Before => Err(Failure::new(
            MPI_ERR_OTHER,
            "the MPI library is not initialized (call MPI_Init first)",
        )),
        Phase::Finalized => Err(Failure::new(
            MPI_ERR_OTHER,
            "the MPI library has been finalized",
        )),
    }
}

impl Runtime {
    /// The tables of a library just initialized on `world`: `MPI_COMM_WORLD`, `MPI_COMM_SELF`
    /// (a communicator of this rank alone), `MPI_GROUP_EMPTY` and the predefined handlers.
    pub(crate) fn new(universe: &'static runthrough::Universe) -> Self {
        let world = universe.world();
        let mut runtime = Runtime {
            universe,
            world_rank: world.rank(),
            comms: BTreeMap::new(),
            groups: BTreeMap::new(),
            requests: BTreeMap::new(),
            errhandlers: BTreeMap::new(),
            datatypes: BTreeMap::new(),
            messages: BTreeMap::new(),
            ops: BTreeMap::new(),
            attached: None,
            parent: None,
            generalized: BTreeMap::new(),
            freed_handlers: BTreeMap::new(),
            next_handle: 16,
        };
        runtime
            .errhandlers
            .insert(MPI_ERRORS_ARE_FATAL, Handler::Fatal);
        runtime
            .errhandlers
            .insert(MPI_ERRORS_RETURN, Handler::Return);
        runtime.errhandlers.insert(MPI_ERRORS_ABORT, Handler::Fatal);
        let fatal = (MPI_ERRORS_ARE_FATAL, Handler::Fatal);
        let mut world_entry = CommEntry::new(CommBox::World(world), fatal);
        world_entry.name = "MPI_COMM_WORLD".into();
        runtime.comms.insert(MPI_COMM_WORLD, world_entry);
        if let Ok(me) = world.self_communicator() {
            let mut self_entry = CommEntry::new(CommBox::Owned(me), fatal);
            self_entry.name = "MPI_COMM_SELF".into();
            runtime.comms.insert(MPI_COMM_SELF, self_entry);
        }
        if let Ok(empty) = world.group().incl(&[]) {
            runtime.groups.insert(MPI_GROUP_EMPTY, empty);
        }
        runtime
    }

    /// A fresh handle, for any table.
    pub(crate) fn next_handle(&mut self) -> c_int {
        let handle = self.next_handle;
        self.next_handle = self.next_handle.saturating_add(1);
        handle
    }

    pub(crate) fn comm(&self, handle: c_int) -> Result<&CommEntry, Failure> {
        self.comms.get(&handle).ok_or_else(|| invalid_comm(handle))
    }

    pub(crate) fn comm_mut(&mut self, handle: c_int) -> Result<&mut CommEntry, Failure> {
        self.comms
            .get_mut(&handle)
            .ok_or_else(|| invalid_comm(handle))
    }

    pub(crate) fn group(&self, handle: c_int) -> Result<&Group, Failure> {
        self.groups.get(&handle).ok_or_else(|| {
            Failure::new(
                MPI_ERR_GROUP,
                format!("invalid or freed group handle {handle}"),
            )
        })
    }

    /// Registers a new communicator made from `parent` (it inherits the parent's error handler).
    pub(crate) fn add_comm(&mut self, comm: Comm, parent: c_int) -> c_int {
        let errhandler = self
            .comms
            .get(&parent)
            .map_or((MPI_ERRORS_ARE_FATAL, Handler::Fatal), |p| p.errhandler);
        let handle = self.next_handle();
        let entry = CommEntry::new(CommBox::Owned(comm), errhandler);
        self.comms.insert(handle, entry);
        handle
    }

    /// Registers `group`; a group of no process is `MPI_GROUP_EMPTY`, as MPI says.
    pub(crate) fn add_group(&mut self, group: Group) -> c_int {
        if group.size() == 0 {
            return MPI_GROUP_EMPTY;
        }
        let handle = self.next_handle();
        self.groups.insert(handle, group);
        handle
    }

    pub(crate) fn add_request(&mut self, operation: Operation, comm: c_int) -> c_int {
        let handle = self.next_handle();
        self.requests
            .insert(handle, RequestEntry { operation, comm });
        handle
    }
}

fn invalid_comm(handle: c_int) -> Failure {
    Failure::new(
        MPI_ERR_COMM,
        format!("invalid or freed communicator handle {handle}"),
    )
}

/// The communicator of `handle`, for a call that does not wait for other collectives.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle, and for an intercommunicator: the calls that
/// take one (point-to-point, the local queries) go through `crate::intercomm` instead.
pub(crate) fn comm_of(handle: c_int) -> Result<Arc<CommBox>, Failure> {
    with_runtime(|runtime| Ok(Arc::clone(&intra(runtime.comm(handle)?, handle)?.comm)))
}

/// `entry` (of `handle`) if it is an intracommunicator; `MPI_ERR_COMM` for an
/// intercommunicator.
pub(crate) fn intra(entry: &CommEntry, handle: c_int) -> Result<&CommEntry, Failure> {
    if entry.inter.is_some() {
        // A revoked intercommunicator says so first (ULFM programs test collectives on one
        // for MPIX_ERR_REVOKED).
        if entry.comm.get().is_revoked() {
            return Err(Failure::new(
                MPIX_ERR_REVOKED,
                format!("communicator {handle} (an intercommunicator) is revoked"),
            ));
        }
        return Err(Failure::new(
            MPI_ERR_COMM,
            format!(
                "communicator {handle} is an intercommunicator: this call takes an \
                 intracommunicator (on intercommunicators: point-to-point, the local \
                 queries, MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Gather(v), \
                 MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v/w), MPI_Intercomm_merge, \
                 MPI_Comm_dup / _idup / _split / _create and MPI_Comm_free)"
            ),
        ));
    }
    Ok(entry)
}

/// Starts a non-blocking collective on `handle` as a schedule that the rank's engine runs
/// itself as its messages arrive (`start` makes it from the communicator), and returns its
/// request handle. An error of `start` (invalid arguments, a failed participant not yet
/// recognized, a revoked communicator) is the request's outcome, reported when it completes.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle or an intercommunicator.
pub(crate) fn start_scheduled(
    handle: c_int,
    start: Result<crate::collectives::Scheduled, Failure>,
) -> Result<c_int, Failure> {
    let operation = scheduled_operation(handle, start)?;
    with_runtime(|runtime| Ok(runtime.add_request(operation, handle)))
}

/// The operation of a non-blocking collective started on communicator `handle` as `start`
/// says ([`start_scheduled`]; `MPI_Start` of a persistent collective): its errors other than
/// the communicator's complete it.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle or an intercommunicator.
pub(crate) fn scheduled_operation(
    handle: c_int,
    start: Result<crate::collectives::Scheduled, Failure>,
) -> Result<Operation, Failure> {
    let comm = with_runtime(|runtime| {
        let entry = intra(runtime.comm(handle)?, handle)?;
        Ok(Arc::clone(&entry.comm))
    })?;
    // SAFETY: as in `MPI_Irecv`: the communicator lives in the `Arc` that the same
    // `PendingCollective` holds and drops after the request (field order).
    let comm_ref: &'static Comm = unsafe { &*std::ptr::from_ref(comm.get()) };
    Ok(match start.and_then(|start| start(comm_ref)) {
        Ok((request, scratch)) => Operation::Collective(PendingCollective {
            request,
            scratch,
            comm,
        }),
        Err(failure) => Operation::Complete(Err(failure)),
    })
}

/// The communicator of `handle` for a collective call that runs no agreement (barrier,
/// broadcast, reductions, ...). Non-blocking collectives started on it before need no waiting:
/// the engine numbers every collective call of a communicator in call order, blocking or not.
/// A pending `MPIX_Comm_iagree` is not waited for either: its agreement progresses on its own
/// (the library answers its messages while any thread waits) and its traffic never mixes with
/// the collective's, so the program may call collectives while it is pending, in any order
/// relative to it at other ranks (mpi4py's test_ulfm does).
pub(crate) fn collective_comm_of(handle: c_int) -> Result<Arc<CommBox>, Failure> {
    comm_after_pending(handle, false)
}

/// The communicator of `handle` for a call that runs an agreement (`MPIX_Comm_agree`,
/// `_iagree`, `_shrink`, `_ishrink`, `MPI_Comm_validate_global`, the communicator creations,
/// ...): as [`collective_comm_of`], and the `MPIX_Comm_iagree` requests pending on it complete
/// first, here (their outcomes stay with their requests).
pub(crate) fn agreement_comm_of(handle: c_int) -> Result<Arc<CommBox>, Failure> {
    comm_after_pending(handle, true)
}

/// The communicator of `handle`, after its pending agreements completed with `agreements_too`.
fn comm_after_pending(handle: c_int, agreements_too: bool) -> Result<Arc<CommBox>, Failure> {
    let (comm, agreements) = with_runtime(|runtime| {
        intra(runtime.comm(handle)?, handle)?;
        let entry = runtime.comm_mut(handle)?;
        let agreements = if agreements_too {
            std::mem::take(&mut entry.agreements)
        } else {
            Vec::new()
        };
        Ok((Arc::clone(&entry.comm), agreements))
    })?;
    for request in agreements {
        crate::point_to_point::complete_in_place(request);
    }
    Ok(comm)
}

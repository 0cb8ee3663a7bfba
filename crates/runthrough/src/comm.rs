// SPDX-License-Identifier: MIT OR Apache-2.0
//! Communicators and point-to-point communication (semantics §3.1–3.2).

use std::sync::Arc;

use bytemuck::Pod;
use runthrough_core::matching::{Envelope, SourceSelector, TagSelector};
use runthrough_core::{Error, FailureView, Rank, Result, WorldRank};

use crate::endpoint::{Engine, Received};
use crate::flow::{self, FlowStats};
use crate::rank::Process;
use crate::request::Request;
use runthrough_core::engine::Probed;
use runthrough_core::packet::{ContextId, Lane, Packet};

/// The largest tag an application may use (`MPI_TAG_UB`).
pub const TAG_UB: i32 = i32::MAX;

/// Which sender a receive or probe accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Any sender (`MPI_ANY_SOURCE`).
    Any,
    /// One rank of the communicator.
    Rank(Rank),
}

impl From<u32> for Source {
    fn from(rank: u32) -> Self {
        Source::Rank(rank)
    }
}

impl From<i32> for Source {
    /// A negative rank becomes an out-of-range one, which the call reports as `Error::Rank`.
    fn from(rank: i32) -> Self {
        Source::Rank(u32::try_from(rank).unwrap_or(u32::MAX))
    }
}

/// Which tags a receive or probe accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tag {
    /// Any tag (`MPI_ANY_TAG`).
    Any,
    /// One tag, `0..=TAG_UB`.
    Value(i32),
}

impl From<i32> for Tag {
    fn from(tag: i32) -> Self {
        Tag::Value(tag)
    }
}

/// What a completed receive or a probe tells about its message (`MPI_Status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The sender; `None` when the receive completed as `MPI_PROC_NULL` (a peer recognized as
    /// failed, semantics §3.1).
    pub source: Option<Rank>,
    /// The message's tag; `None` for `MPI_PROC_NULL` completions.
    pub tag: Option<i32>,
    /// Number of elements of the receive's type in the message (0 for `MPI_PROC_NULL`).
    pub count: usize,
}

impl Status {
    pub(crate) fn proc_null() -> Self {
        Status {
            source: None,
            tag: None,
            count: 0,
        }
    }
}

/// A communicator: a group of ranks that talk to each other, with its own failure views L and G.
///
/// Every call that communicates returns a [`Result`]. A communicator handle may be shared between
/// the threads of its rank (`&Comm` is `Send`); update calls on one communicator are linearized.
#[derive(Debug)]
pub struct Comm {
    pub(crate) process: Arc<Process>,
    pub(crate) context: ContextId,
    pub(crate) rank: Rank,
    pub(crate) size: u32,
}

impl Comm {
    /// The world communicator of `endpoint`'s rank, over `transport`, in a job of `size` ranks.
    pub(crate) fn world(
        endpoint: Arc<crate::endpoint::Endpoint>,
        transport: Arc<dyn crate::transport::Transport>,
        size: u32,
    ) -> Comm {
        Comm {
            rank: endpoint.world_rank.0,
            process: Arc::new(Process {
                endpoint,
                transport,
                parent: None,
            }),
            context: runthrough_core::packet::WORLD_CONTEXT,
            size,
        }
    }

    /// The world communicator of a rank that a spawn started: the ranks of that spawn, this
    /// one being `link.rank` of them; `link` leads to its parents ([`Comm::parent`]).
    pub(crate) fn spawned_world(
        endpoint: Arc<crate::endpoint::Endpoint>,
        transport: Arc<dyn crate::transport::Transport>,
        link: crate::spawn::ParentLink,
    ) -> Comm {
        Comm {
            rank: link.rank,
            size: link.count,
            process: Arc::new(Process {
                endpoint,
                transport,
                parent: Some(link),
            }),
            context: runthrough_core::packet::WORLD_CONTEXT,
        }
    }

    /// This rank's number in the communicator (`MPI_Comm_rank`).
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// The number of ranks in the communicator, failed ones included (`MPI_Comm_size`).
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Seconds elapsed since an arbitrary point in the past (`MPI_Wtime`): the monotonic clock;
    /// under [`crate::simulate()`], the simulation's virtual time, which every scheduling step
    /// moves on.
    pub fn wtime(&self) -> f64 {
        self.process.transport.wtime()
    }

    fn check_rank(&self, rank: Rank) -> Result<()> {
        if rank < self.size {
            Ok(())
        } else {
            Err(Error::Rank {
                rank: rank.into(),
                size: self.size,
            })
        }
    }

    fn check_tag(tag: i32) -> Result<()> {
        if tag >= 0 {
            Ok(())
        } else {
            Err(Error::Tag { tag: tag.into() })
        }
    }

    pub(crate) fn selectors(
        &self,
        source: Source,
        tag: Tag,
    ) -> Result<(SourceSelector, TagSelector)> {
        let source = match source {
            Source::Any => SourceSelector::Any,
            Source::Rank(r) => {
                self.check_rank(r)?;
                SourceSelector::Rank(r)
            }
        };
        let tag = match tag {
            Tag::Any => TagSelector::Any,
            Tag::Value(t) => {
                Self::check_tag(t)?;
                TagSelector::Value(t)
            }
        };
        Ok((source, tag))
    }

    /// Sends `buf` to `dest` with `tag` (`MPI_Send`, MPI-4.0 §3.2).
    ///
    /// The message is sent at once (eager) while this rank's earlier messages to `dest` that
    /// are still unreceived fit in its share of `dest`'s buffer; otherwise this waits until
    /// enough of them are received (flow control, semantics §6: see the crate's `flow` module). It
    /// never waits for this message itself to be received.
    ///
    /// # Errors
    /// `Error::ProcFailed` when `dest` is known to have failed and is not recognized in G (at
    /// the call, or while the send waits for credit); a send to a rank recognized (NULL in G)
    /// completes at once and sends nothing (`MPI_PROC_NULL`). `Error::Revoked` on a revoked
    /// communicator, before the call or while it waits (semantics §3.5). `Error::Rank`,
    /// `Error::Tag`, `Error::Comm`, `Error::Argument` (a zero-sized element type) for bad
    /// arguments.
    pub fn send<T: Pod>(&self, buf: &[T], dest: Rank, tag: i32) -> Result<()> {
        self.process.enter()?;
        element_size::<T>()?;
        match self.start_send(bytemuck::cast_slice(buf), dest, tag)? {
            Started::Done => Ok(()),
            Started::Queued(slot) => self.wait_send(slot),
        }
    }

    /// Sends `bytes`, or queues them for credit (`crate::flow`).
    pub(crate) fn start_send(&self, bytes: &[u8], dest: Rank, tag: i32) -> Result<Started> {
        self.start_send_as(bytes, dest, tag, None)
    }

    /// [`Comm::start_send`], as synchronous message `sync` when given (see
    /// `Packet::SyncAck`).
    fn start_send_as(
        &self,
        bytes: &[u8],
        dest: Rank,
        tag: i32,
        sync: Option<u64>,
    ) -> Result<Started> {
        self.check_rank(dest)?;
        Self::check_tag(tag)?;
        let charge = flow::charge(bytes.len() + sync.map_or(0, |_| crate::endpoint::SYNC_HEAD));
        let world = {
            let mut engine = self.process.endpoint.lock();
            let Some(world) = self.send_check(&mut engine, dest)? else {
                return Ok(Started::Done);
            };
            if !engine.admit(world, Lane::Point, charge) {
                drop(engine);
                return self.queue_send(bytes, dest, tag, sync, charge);
            }
            world
        };
        if sync.is_none() {
            // The transport may write it straight from `bytes`.
            self.process.transport.send_data(
                self.process.world_rank(),
                world,
                self.context,
                self.rank,
                tag,
                bytes,
            );
            // A fault planned at this packet (`packet:K`) killed the rank: it stops here,
            // rather than return as if the message had gone (between processes the process
            // has ended already).
            self.process.check_alive();
            return Ok(Started::Done);
        }
        let packet = self.data_packet(bytes, tag, sync);
        self.process
            .transport
            .send(self.process.world_rank(), world, packet);
        self.process.check_alive();
        Ok(Started::Done)
    }

    /// The world rank to send to, `None` for `MPI_PROC_NULL`, or the send's error (semantics §3.1).
    #[inline]
    fn send_check(&self, engine: &mut Engine, dest: Rank) -> Result<Option<WorldRank>> {
        engine.send_target(self.context, dest)
    }

    fn data_packet(&self, bytes: &[u8], tag: i32, sync: Option<u64>) -> Packet {
        let (tag, payload) = match sync {
            None => (tag, runthrough_core::buffers::copy_of(bytes)),
            Some(id) => {
                let head = crate::endpoint::SYNC_HEAD;
                let mut payload = runthrough_core::buffers::buffer(head + bytes.len());
                payload[..head].copy_from_slice(&id.to_le_bytes());
                payload[head..].copy_from_slice(bytes);
                (!tag, payload)
            }
        };
        Packet::Data {
            context: self.context,
            source: self.rank,
            tag,
            payload,
        }
    }

    /// The slow path of [`Comm::start_send`]: the message is copied without the lock, then
    /// queued (or sent, if credit came back meanwhile).
    fn queue_send(
        &self,
        bytes: &[u8],
        dest: Rank,
        tag: i32,
        sync: Option<u64>,
        charge: u64,
    ) -> Result<Started> {
        let packet = self.data_packet(bytes, tag, sync);
        let mut engine = self.process.endpoint.lock();
        let Some(world) = self.send_check(&mut engine, dest)? else {
            return Ok(Started::Done);
        };
        if engine.admit(world, Lane::Point, charge) {
            drop(engine);
            self.process
                .transport
                .send(self.process.world_rank(), world, packet);
            return Ok(Started::Done);
        }
        let context = self.context;
        let slot = engine.queue_send(world, Lane::Point, context, dest, packet, charge);
        let due = engine.take_due();
        drop(engine);
        self.process.endpoint.signal.notify(); // for threads watching the statistics
        self.process.send_all(due);
        Ok(Started::Queued(slot))
    }

    /// Waits for a send that waits for credit: transmitted, or failed.
    pub(crate) fn wait_send(&self, slot: usize) -> Result<()> {
        self.process.wait_for(|engine| engine.send_outcome(slot))
    }

    /// Sends `buf` to `dest` with `tag` synchronously (`MPI_Ssend`, MPI-4.0 §3.4): returns
    /// once the receiver has matched the message with a receive. The message goes as an
    /// ordinary one does (eager, with flow control) and the receiver acknowledges it when a
    /// receive takes it; ordinary messages carry nothing for this.
    ///
    /// # Errors
    /// As [`Comm::send`]; moreover `Error::ProcFailed` when `dest` is known to have failed
    /// (and is not recognized in G) before the acknowledgement came, whether or not the message
    /// left (a destination that dies before it matches the message), and `Error::Revoked` when
    /// the communicator is revoked meanwhile. A destination recognized in G (NULL) completes the
    /// send, as `MPI_PROC_NULL`.
    pub fn ssend<T: Pod>(&self, buf: &[T], dest: Rank, tag: i32) -> Result<()> {
        self.issend(buf, dest, tag)?.wait().map(drop)
    }

    /// Starts a synchronous send (`MPI_Issend`): the request completes once the receiver has
    /// matched the message, with the outcomes of [`Comm::ssend`]. The buffer is copied.
    ///
    /// # Errors
    /// Bad arguments, as [`Comm::isend`]; every other outcome is reported by the request.
    pub fn issend<T: Pod>(&self, buf: &[T], dest: Rank, tag: i32) -> Result<Request<'_>> {
        self.process.enter()?;
        element_size::<T>()?;
        self.check_rank(dest)?;
        Self::check_tag(tag)?;
        let status = Status {
            source: Some(dest),
            tag: Some(tag),
            count: buf.len(),
        };
        let (world, id) = {
            let mut engine = self.process.endpoint.lock();
            match self.send_check(&mut engine, dest) {
                Ok(None) => return Ok(Request::completed(Ok(Status::proc_null()))),
                Err(error) => return Ok(Request::completed(Err(error))),
                Ok(Some(world)) => (world, engine.next_synchronous_id()),
            }
        };
        let slot = match self.start_send_as(bytemuck::cast_slice(buf), dest, tag, Some(id)) {
            Ok(Started::Done) => None,
            Ok(Started::Queued(slot)) => Some(slot),
            Err(error) => return Ok(Request::completed(Err(error))),
        };
        Ok(Request::synchronous(self, world.0, dest, id, slot, status))
    }

    /// Whether synchronous send `id` to `dest` (world rank `world`) is done: `Some(Ok)` once
    /// the receiver acknowledged it (or `dest` was recognized in G), `Some(Err)` when `dest`
    /// failed first or the communicator was revoked or freed, `None` while it waits.
    pub(crate) fn poll_synchronous(
        &self,
        engine: &mut Engine,
        world: u32,
        dest: Rank,
        id: u64,
    ) -> Option<Result<()>> {
        engine.poll_synchronous(self.context, WorldRank(world), dest, id)
    }

    /// Starts a send (`MPI_Isend`). The message is sent at once when flow control allows (as
    /// for [`Comm::send`]), and the request is complete; otherwise the request stays pending
    /// until the message goes, which happens while a thread of this rank waits in the library
    /// (`wait`, `test`, a blocking call). `wait` reports the outcome, with the failure errors of
    /// [`Comm::send`]. The buffer is copied: it may be reused at once.
    ///
    /// # Errors
    /// Bad arguments, as [`Comm::irecv`] (`Error::Rank`, `Error::Tag`, `Error::Argument`); every
    /// other outcome is reported by the request.
    pub fn isend<T: Pod>(&self, buf: &[T], dest: Rank, tag: i32) -> Result<Request<'_>> {
        self.process.enter()?;
        element_size::<T>()?;
        self.check_rank(dest)?;
        Self::check_tag(tag)?;
        let status = Status {
            source: Some(dest),
            tag: Some(tag),
            count: buf.len(),
        };
        Ok(
            match self.start_send(bytemuck::cast_slice(buf), dest, tag) {
                Ok(Started::Done) => Request::completed(Ok(status)),
                Ok(Started::Queued(slot)) => Request::send(self, slot, status),
                Err(error) => Request::completed(Err(error)),
            },
        )
    }

    /// What flow control has seen at this rank (for tests and diagnostics; not a stable API).
    #[doc(hidden)]
    pub fn flow_stats(&self) -> FlowStats {
        self.process.endpoint.lock().flow_stats()
    }

    /// Waits until this rank's flow-control statistics satisfy `until`, and returns them (for
    /// tests: "until the sender is blocked"; not a stable API). Blocks like any other wait.
    #[doc(hidden)]
    pub fn wait_flow_stats(&self, until: impl Fn(&FlowStats) -> bool) -> FlowStats {
        self.process.wait_for(|engine| {
            let stats = engine.flow_stats();
            until(&stats).then_some(stats)
        })
    }

    /// Receives a message into `buf` (`MPI_Recv`, MPI-4.0 §3.2.4).
    ///
    /// Buffered messages match first, whatever their sender's state (semantics §3.1).
    ///
    /// # Errors
    /// - `Error::ProcFailed` when `source` is known to have failed (now, or while waiting) and is
    ///   not recognized in G, and no buffered message matches. A source recognized in G (NULL)
    ///   completes at once with `Status { source: None, count: 0 }`, `buf` untouched.
    /// - `Error::ProcFailedPending` for `Source::Any` while this rank's detector knows of a failure
    ///   that `validate_local` has not acknowledged (semantics §3.2); nothing is consumed.
    /// - `Error::Truncated` when the message is longer than `buf` (the message is consumed and
    ///   its first `buf.len()` elements written).
    /// - `Error::Revoked` when the communicator is revoked, before the call or while it waits
    ///   (semantics §3.5).
    /// - `Error::Rank`, `Error::Tag`, `Error::Comm`, `Error::Argument` for bad arguments.
    pub fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Status> {
        self.process.enter()?;
        let element = element_size::<T>()?;
        let received = self.receive(source.into(), tag.into())?;
        deliver_into(received, bytemuck::cast_slice_mut(buf), element)
    }

    /// Receives a message of any length into a new vector (`MPI_Mprobe` + `MPI_Mrecv`), with
    /// the errors of [`Comm::recv`] but never `Truncated`.
    pub fn recv_vec<T: Pod>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<(Vec<T>, Status)> {
        self.process.enter()?;
        let element = element_size::<T>()?;
        let received = self.receive(source.into(), tag.into())?;
        let Some(envelope) = received.envelope else {
            return Ok((Vec::new(), Status::proc_null()));
        };
        let count = received.payload.len() / element;
        // The sender's buffer itself when `T` allows it (alignment 1: bytes and arrays of
        // them), without a second copy; otherwise an aligned copy.
        let data: Vec<T> = match bytemuck::allocation::try_cast_vec(received.payload) {
            Ok(data) => data,
            Err((_, payload)) => bytemuck::pod_collect_to_vec(&payload[..count * element]),
        };
        Ok((
            data,
            Status {
                source: Some(envelope.source),
                tag: Some(envelope.tag),
                count,
            },
        ))
    }

    /// The blocking receive: a matched message, a PROC_NULL completion, or the failure error.
    fn receive(&self, source: Source, tag: Tag) -> Result<Received> {
        let (source, tag) = self.selectors(source, tag)?;
        let id = {
            let mut engine = self.process.endpoint.lock();
            match self.match_or_post(&mut engine, source, tag)? {
                Posted::Done(received) => {
                    self.process.unlock_and_send_credits(engine);
                    return received;
                }
                Posted::Waiting(id) => id,
            }
        };
        let wildcard = source == SourceSelector::Any;
        self.process
            .wait_for(|engine| match self.poll_slot(engine, id, wildcard) {
                SlotPoll::Pending => None,
                SlotPoll::Complete(received) => Some(received),
                SlotPoll::FailurePending => {
                    self.cancel_receive(engine, id);
                    Some(Err(Error::ProcFailedPending))
                }
            })
    }

    /// Matches a buffered message or decides from the peer's state; otherwise posts a receive
    /// ([`Engine::match_or_post`]).
    #[inline]
    pub(crate) fn match_or_post(
        &self,
        engine: &mut Engine,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<Posted> {
        engine.match_or_post(self.context, source, tag)
    }

    /// Posts a receive that no buffered message matches (the caller just looked).
    fn post_receive(
        &self,
        engine: &mut Engine,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Result<u64> {
        engine.post_receive(self.context, source, tag)
    }

    /// Looks at a posted receive ([`Engine::poll_receive`]).
    #[inline]
    pub(crate) fn poll_slot(&self, engine: &mut Engine, id: u64, wildcard: bool) -> SlotPoll {
        engine.poll_receive(self.context, id, wildcard)
    }

    /// Withdraws a posted receive and frees its slot.
    pub(crate) fn cancel_receive(&self, engine: &mut Engine, id: u64) {
        engine.cancel_receive(self.context, id)
    }

    /// Starts a receive into `buf` (`MPI_Irecv`). The request borrows `buf` until it completes.
    /// The peer's state is evaluated when the request completes (semantics §3.1); a wildcard
    /// request reports `ProcFailedPending` from `wait`/`test` and stays pending (semantics §3.2).
    ///
    /// # Errors
    /// Bad arguments (`Error::Rank`, `Error::Tag`, `Error::Comm`, `Error::Argument`) and a
    /// communicator revoked before the call (`Error::Revoked`); every other outcome, a revocation
    /// while pending included, is reported by the request.
    pub fn irecv<'a, T: Pod>(
        &'a self,
        buf: &'a mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Request<'a>> {
        self.process.enter()?;
        let element = element_size::<T>()?;
        let (source, tag) = self.selectors(source.into(), tag.into())?;
        let buffer: &mut [u8] = bytemuck::cast_slice_mut(buf);
        let mut engine = self.process.endpoint.lock();
        Ok(match self.match_or_post(&mut engine, source, tag)? {
            // A non-blocking wildcard receive stays pending through ProcFailedPending (SPEC
            // §3.2): post it anyway; its wait/test report the error until acknowledged.
            Posted::Done(Err(Error::ProcFailedPending)) => {
                let id = self.post_receive(&mut engine, source, tag)?;
                Request::receive(self, id, true, buffer, element)
            }
            Posted::Done(received) => {
                self.process.unlock_and_send_credits(engine);
                Request::completed(received.and_then(|r| deliver_into(r, buffer, element)))
            }
            Posted::Waiting(id) => {
                Request::receive(self, id, source == SourceSelector::Any, buffer, element)
            }
        })
    }

    /// Waits for a message that matches and describes it without receiving it (`MPI_Probe`),
    /// with the failure rules of [`Comm::recv`]. `count` is in elements of `T`.
    pub fn probe<T: Pod>(&self, source: impl Into<Source>, tag: impl Into<Tag>) -> Result<Status> {
        self.process.enter()?;
        let element = element_size::<T>()?;
        let (source, tag) = self.selectors(source.into(), tag.into())?;
        self.process
            .wait_for(|engine| self.probe_once(engine, source, tag, element).transpose())
    }

    /// Describes a matching message if one is buffered (`MPI_Iprobe`); `Ok(None)` if none is
    /// and the peer may still send one.
    pub fn iprobe<T: Pod>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Option<Status>> {
        self.process.enter()?;
        let element = element_size::<T>()?;
        let (source, tag) = self.selectors(source.into(), tag.into())?;
        let probed = self.probe_once(&mut self.process.endpoint.lock(), source, tag, element);
        // A miss may have lent a waiting sender credit (`runthrough_core::flow`, "Loans"):
        // it goes out now, so that a program polling with iprobe gets its message.
        self.process.progress();
        probed
    }

    fn probe_once(
        &self,
        engine: &mut Engine,
        source: SourceSelector,
        tag: TagSelector,
        element: usize,
    ) -> Result<Option<Status>> {
        Ok(match engine.probe(self.context, source, tag)? {
            Some(Probed::Message(envelope, len)) => Some(status_of(envelope, len, element)),
            Some(Probed::ProcNull) => Some(Status::proc_null()),
            None => None,
        })
    }

    /// Updates the local view L from this rank's detector (`MPI_Comm_validate_local`, semantics
    /// §2.1): L := G ∪ {failures known now}; ranks entering L are `NEW`, the rest `OLD`. Local:
    /// never waits for a peer. Acknowledges those failures for wildcard receives (semantics §3.2).
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn validate_local(&self) -> Result<FailureView> {
        self.process.check_alive();
        self.process.endpoint.lock().validate_local(self.context)
    }

    /// The failures this rank's detector knows in the communicator, in the order it learned
    /// of them (`MPIX_Comm_get_failed`, MPI-5 FT chapter): those of the communicator's initial
    /// G first, in rank order. Local; a later call returns the same list with more at its end.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn detected_failures(&self) -> Result<Vec<Rank>> {
        self.process.endpoint.lock().detected_failures(self.context)
    }

    /// Acknowledges the first `count` failures of [`Comm::detected_failures`]
    /// (`MPIX_Comm_ack_failed`): L := L ∪ G ∪ those ranks, the ranks entering L `NEW`, the rest
    /// `OLD`; acknowledgements are never taken back (a `count` smaller than an earlier one
    /// acknowledges nothing new). [`Comm::validate_local`] is the same with every known failure.
    /// Local: never waits for a peer.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn acknowledge_failures(&self, count: usize) -> Result<FailureView> {
        self.process.check_alive();
        self.process
            .endpoint
            .lock()
            .acknowledge_failures(self.context, count)
    }

    /// The local view L as left by the last update call. Never changes L.
    pub fn local_view(&self) -> Result<FailureView> {
        self.process.endpoint.lock().local_view(self.context)
    }

    /// The global view G as left by the last `validate_global`. Never changes G.
    pub fn global_view(&self) -> Result<FailureView> {
        self.process.endpoint.lock().global_view(self.context)
    }
}

/// How a send started.
pub(crate) enum Started {
    /// Transmitted, or complete without traffic (`MPI_PROC_NULL`).
    Done,
    /// Waiting for credit, in this send slot of the engine's flow control.
    Queued(usize),
}

/// The outcome of matching or posting a receive.
pub(crate) use runthrough_core::engine::Posted;
/// What a look at a posted receive found.
pub(crate) use runthrough_core::engine::ReceivePoll as SlotPoll;

pub(crate) fn element_size<T>() -> Result<usize> {
    match std::mem::size_of::<T>() {
        0 => Err(Error::Argument {
            reason: "zero-sized element type".into(),
        }),
        n => Ok(n),
    }
}

fn status_of(envelope: Envelope, bytes: usize, element: usize) -> Status {
    Status {
        source: Some(envelope.source),
        tag: Some(envelope.tag),
        count: bytes / element,
    }
}

/// Copies a received message into the caller's buffer.
pub(crate) fn deliver_into(
    received: Received,
    buffer: &mut [u8],
    element: usize,
) -> Result<Status> {
    let Some(envelope) = received.envelope else {
        return Ok(Status::proc_null());
    };
    let bytes = received.payload.len();
    let fits = bytes.min(buffer.len());
    buffer[..fits].copy_from_slice(&received.payload[..fits]);
    runthrough_core::buffers::give_back(received.payload);
    if bytes > buffer.len() {
        return Err(Error::Truncated {
            needed: bytes.div_ceil(element),
        });
    }
    Ok(status_of(envelope, bytes, element))
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking collectives (`MPI_Ibarrier`, `MPI_Ibcast`, `MPI_Ireduce`, `MPI_Iallreduce`,
//! `MPI_Igather(v)`, `MPI_Iscatter(v)`, `MPI_Iallgather(v)`, `MPI_Ialltoall(v)`,
//! `MPI_Ireduce_scatter(_block)`, `MPI_Iscan`, `MPI_Iexscan`, MPI-4.0 §6.12): each is a schedule that the rank's engine runs by itself as its messages
//! arrive (`runthrough_core::engine::Schedule`), so it progresses while the program computes
//! or waits for something else, with no thread of its own.
//!
//! Any number may be outstanding on a communicator, beside one blocking collective; every rank
//! must start a communicator's collectives, blocking or not, in the same order (MPI's rule).
//! A call that changes the communicator's collective epoch (`validate_global`, `shrink`, the
//! creations) first waits until the outstanding ones have finished here. Failures end them
//! as they end blocking calls (docs/src/semantics.md §3.3): `Error::ProcFailed` once a participant
//! failed that G does not recognize, up to the moment `wait` or `test` takes the outcome;
//! `Error::Revoked` on revocation.

use std::ops::Range;
use std::sync::Arc;

use bytemuck::Pod;
use runthrough_core::engine::{Hold, Output, Reduction, Schedule, Started};
use runthrough_core::fault::Collective;
use runthrough_core::{Error, Rank, Result};

use super::gather::check_partition;
use super::op::builtin;
use super::{check_element, check_len, check_root, count_error, Op, Reducible};
use super::{Partition, PartitionMut};
use crate::comm::Comm;

/// A non-blocking collective call in progress at this rank (`MPI_Request` of `MPI_Ibarrier`
/// and its kin), tied to the buffer that receives its result.
///
/// `wait` or a successful `test` gives the outcome once; after that both return
/// `Error::Request`. Dropping a pending request does not wait: the engine runs the call to its
/// end (the other participants need this rank's messages) and discards its result.
#[derive(Debug)]
pub struct CollectiveRequest<'a> {
    comm: &'a Comm,
    /// The engine's schedule, until the outcome was taken.
    id: Option<u64>,
    /// Where the result goes, at ranks that get one.
    output: Option<&'a mut [u8]>,
    /// How the result lands in `output`.
    placement: Placement,
    /// Who holds the communicator's collective slot while it runs
    /// ([`Engine::start_schedule_as`](runthrough_core::engine::Engine::start_schedule_as)):
    /// a blocking call's thread ([`Hold::Caller`]) until the outcome is taken, when it
    /// frees the slot; a blocking call's never marks collectives running for the transport.
    hold: Hold,
    /// The outcome of a blocking call that finished at its start.
    ready: Option<Result<Output>>,
    /// A reduction's function that only this call's thread holds (a user operation that
    /// borrows from its caller: [`Reduction::by_caller`]), run on each combining step the
    /// schedule hands out when it is polled.
    caller: Option<CallerCombine<'a>>,
    /// Whether its schedule hands combining steps out to a thread (`caller`, or an unlocked
    /// reduction): only then does a poll look for one.
    hands_out: bool,
}

/// A reduction's function over bytes, held by the calling thread ([`Reduction::by_caller`]).
#[derive(Clone, Copy)]
pub(crate) struct CallerCombine<'a>(pub(crate) &'a (dyn super::op::CombineBytes + 'a));

impl std::fmt::Debug for CallerCombine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerCombine")
    }
}

/// How a call's result lands in the caller's buffer.
#[derive(Debug)]
enum Placement {
    /// The result is the whole buffer.
    Whole,
    /// The result is the whole buffer, or nothing (an exclusive scan at the first
    /// participant): the buffer is then left as it was.
    WholeOrNothing,
    /// The result is one block per participant, in participant order: the block of
    /// participant `slots[j]` (a comm rank) goes to bytes `at[slots[j]]` of the buffer; the
    /// blocks of ranks recognized as failed are left as they were.
    Blocks { at: Layout, slots: Arc<[Rank]> },
    /// The buffer is the result's bytes from `from` on (a reduce-scatter: this rank's block
    /// of the whole reduced vector).
    Part { from: usize },
    /// A neighbourhood call's result ([`Listed`]).
    Listed(Box<Listed>),
}

/// A neighbourhood call's result: one block per source in `sources`' order, source j's going
/// to bytes `at[j]`; only the sources at the positions `kept` (the participants: filled in at
/// the start) send one, the others' bytes are left as they were.
#[derive(Debug)]
struct Listed {
    at: Vec<Range<usize>>,
    sources: Arc<[Rank]>,
    kept: Vec<usize>,
}

/// Where each comm rank's block lies in a buffer.
#[derive(Debug, Clone)]
enum Layout {
    /// Rank r's block is bytes `r·len .. (r + 1)·len` (no allocation per call).
    Uniform(usize),
    /// Rank r's block is these bytes.
    Ranges(Vec<Range<usize>>),
}

impl Layout {
    /// The bytes of comm rank `rank`'s block.
    fn of(&self, rank: Rank) -> Range<usize> {
        match self {
            Layout::Uniform(len) => rank as usize * len..(rank as usize + 1) * len,
            Layout::Ranges(at) => at[rank as usize].clone(),
        }
    }
}

/// The bytes of each comm rank's block of a partition of `T` elements.
fn byte_ranges<T>(counts: &[usize], displacements: &[usize]) -> Vec<Range<usize>> {
    let size = std::mem::size_of::<T>();
    // Inside the partition's buffer (`check_partition`), so no product overflows.
    counts
        .iter()
        .zip(displacements)
        .map(|(&count, &at)| at * size..(at + count) * size)
        .collect()
}

/// The lengths of the participants' blocks, in participant order.
fn lens_of(at: &[Range<usize>], participants: &[Rank]) -> Vec<usize> {
    participants
        .iter()
        .map(|&rank| at[rank as usize].len())
        .collect()
}

/// How a collective call starts: which operation (for fault injection), and whether it is
/// the blocking form (its thread waits for it at once: [`CollectiveRequest::finish`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    operation: Collective,
    blocking: bool,
}

impl Call {
    /// The non-blocking form of `operation` (a request returned to the program).
    pub(crate) fn started(operation: Collective) -> Self {
        Call {
            operation,
            blocking: false,
        }
    }

    /// `operation`'s blocking form when `blocking`, else its non-blocking one.
    pub(crate) fn new(operation: Collective, blocking: bool) -> Self {
        Call {
            operation,
            blocking,
        }
    }
}

impl<'a> CollectiveRequest<'a> {
    fn start(
        comm: &'a Comm,
        operation: Call,
        output: Option<&'a mut [u8]>,
        build: impl FnOnce(&[Rank], usize) -> Result<Schedule>,
    ) -> Result<Self> {
        Self::start_placed(comm, operation, output, None, build)
    }

    /// [`CollectiveRequest::start`] for a result of one block per participant, comm rank r's
    /// going to bytes `blocks[r]` of `output` ([`Placement::Blocks`]), when `blocks` is given.
    fn start_placed(
        comm: &'a Comm,
        operation: Call,
        output: Option<&'a mut [u8]>,
        block: Option<Layout>,
        build: impl FnOnce(&[Rank], usize) -> Result<Schedule>,
    ) -> Result<Self> {
        let placement = match block {
            Some(at) => Placement::Blocks {
                at,
                slots: Arc::from([]),
            },
            None => Placement::Whole,
        };
        Self::start_with(comm, operation, output, placement, build)
    }

    /// [`CollectiveRequest::start`] whose result lands as `placement` says (for
    /// [`Placement::Blocks`], the slots are the call's participants, filled in here).
    fn start_with(
        comm: &'a Comm,
        operation: Call,
        output: Option<&'a mut [u8]>,
        placement: Placement,
        build: impl FnOnce(&[Rank], usize) -> Result<Schedule>,
    ) -> Result<Self> {
        Self::start_call(comm, operation, output, placement, |call| {
            build(&call.participants, call.index)
        })
    }

    /// [`CollectiveRequest::start_with`] whose builder sees the whole call (the barrier looks
    /// at where the participants run).
    fn start_call(
        comm: &'a Comm,
        operation: Call,
        output: Option<&'a mut [u8]>,
        placement: Placement,
        build: impl FnOnce(&runthrough_core::engine::CollectiveCall) -> Result<Schedule>,
    ) -> Result<Self> {
        let process = &comm.process;
        if operation.blocking {
            // (The blocking calls' order: a fault planned at this collective strikes before
            // the call counts as one.)
            process.enter_collective(operation.operation, comm.context);
            process.enter()?;
            // Counted among the pollers only if it waits ([`CollectiveRequest::finish`]).
            return Self::begin(comm, output, placement, Hold::Caller, build);
        }
        process.enter()?;
        process.enter_collective(operation.operation, comm.context);
        // Counted among the pollers while in here: a peer's message that arrives meanwhile
        // need not wake the progress thread (a `FUTEX_WAKE` that cost more than a whole
        // barrier between two ranks); leaving drains what came (see `test`).
        let _polling = process.waiting();
        Self::begin(comm, output, placement, Hold::Nobody, build)
    }

    /// Runs a blocking call started with [`Call::new`] to its end on the calling thread
    /// (`Comm::barrier`, `Comm::gather`, ...: the blocking form of each call is its
    /// non-blocking form's very schedule, waited for at once). The thread advances the
    /// schedule as it waits (the rank's other threads that deliver its messages only buffer
    /// them), and the call holds the communicator's collective slot while it runs, as a
    /// blocking call does: another thread's collective on the same communicator is refused
    /// with `Error::ConcurrentCollective` meanwhile.
    pub(crate) fn finish(mut self) -> Result<()> {
        match self.ready.take() {
            // Finished at its start (a root that only sends, a call whose messages were
            // here): it never waited.
            Some(outcome) => self.complete(outcome),
            None => {
                let _waiting = self.comm.process.waiting();
                self.wait_here()
            }
        }
    }

    /// Starts the call's schedule ([`CollectiveRequest::start_call`]). `hold` other than [`Hold::Nobody`]: the
    /// calling thread waits for the outcome at once ([`CollectiveRequest::finish`]), so the
    /// transport need not wake its progress thread for the call's messages, and the outcome
    /// of a schedule that finished at its start is kept for `finish` (`ready`).
    fn begin(
        comm: &'a Comm,
        output: Option<&'a mut [u8]>,
        mut placement: Placement,
        hold: Hold,
        build: impl FnOnce(&runthrough_core::engine::CollectiveCall) -> Result<Schedule>,
    ) -> Result<Self> {
        let process = &comm.process;
        let blocking = hold != Hold::Nobody;
        let mut out = crate::rank::outgoing();
        let (id, ready, declared_failed) = {
            let mut engine = process.endpoint.lock();
            // Before the start, under the engine's lock (which orders it with another
            // thread's clearing in `test`): messages that peers publish from now on wake the
            // progress thread (a transport with polling progress); those already here are
            // drained by the progress below. A blocking call's own thread polls them.
            if !blocking {
                process.transport.collectives_running(true);
            }
            let started = engine.start_schedule_as(
                comm.context,
                comm.rank,
                hold,
                |call| {
                    match &mut placement {
                        Placement::Blocks { slots, .. } => {
                            *slots = Arc::clone(&call.participants);
                        }
                        Placement::Listed(listed) => {
                            listed.kept = (0..listed.sources.len())
                                .filter(|&j| call.participants.contains(&listed.sources[j]))
                                .collect();
                        }
                        _ => {}
                    }
                    build(call)
                },
                &mut out,
            );
            // A blocking call whose start ran every step has its outcome at once (and its
            // slot is free again).
            let (id, ready) = match started {
                Ok(Started::Running(id)) => (Ok(Some(id)), None),
                Ok(Started::Done(outcome)) => {
                    if hold == Hold::Caller {
                        engine.end_collective(comm.context);
                    }
                    (Ok(None), Some(outcome))
                }
                Err(error) => (Err(error), None),
            };
            out.extend(engine.take_due());
            (id, ready, engine.declared_failed())
        };
        process.send_all(out);
        // A fault planned at one of those messages killed the rank: it stops here, rather
        // than finish the call with its messages sent.
        process.check_alive();
        if declared_failed {
            process.halt_declared_failed();
        }
        let id = id?;
        if !blocking {
            process.progress();
        }
        Ok(CollectiveRequest {
            comm,
            id,
            output,
            placement,
            hold,
            ready,
            caller: None,
            hands_out: false,
        })
    }

    /// The same request, whose combining steps this thread runs with `caller` (set before
    /// its first poll).
    fn combining_with(mut self, caller: Option<CallerCombine<'a>>, unlocked: bool) -> Self {
        self.hands_out = caller.is_some() || unlocked;
        self.caller = caller;
        self
    }

    /// Whether the request has already given its outcome.
    pub fn is_inactive(&self) -> bool {
        self.id.is_none()
    }

    /// Completes the request if the call has finished here (`MPI_Test`): `Ok(true)` when it
    /// did (the result is in the caller's buffer), `Ok(false)` while it runs.
    ///
    /// # Errors
    /// The call's errors (which complete the request): `Error::ProcFailed`, `Error::Revoked`,
    /// `Error::Count` when ranks passed different counts; `Error::Request` once the request
    /// has completed.
    pub fn test(&mut self) -> Result<bool> {
        // A poller while it runs, as the start is: leaving drains the rings, so a message
        // that came meanwhile without waking the progress thread is handled before the
        // caller goes back to computing.
        let _polling = self.comm.process.waiting();
        self.poll()
    }

    /// [`CollectiveRequest::test`] for a thread already counted among the pollers.
    fn poll(&mut self) -> Result<bool> {
        let Some(id) = self.id else {
            return Err(Error::Request);
        };
        let process = &self.comm.process;
        process.check_alive();
        process.progress();
        loop {
            let mut out = crate::rank::outgoing();
            let (polled, combine, declared_failed) = {
                let mut engine = process.endpoint.lock();
                let polled = engine.poll_schedule(self.comm.context, id, &mut out);
                if polled.is_some() && self.hold == Hold::Caller {
                    engine.end_collective(self.comm.context);
                }
                // A combining step that waits for a thread outside the engine: this one.
                let combine = match polled {
                    None if self.hands_out => engine.take_combine(self.comm.context, id),
                    _ => None,
                };
                out.extend(engine.take_due());
                if polled.is_some() && self.hold == Hold::Nobody && !engine.any_schedules_running()
                {
                    // Under the lock: a start on another thread sets it again after this.
                    process.transport.collectives_running(false);
                }
                (polled, combine, engine.declared_failed())
            };
            process.send_all(out);
            process.check_alive(); // (as in `begin`)
            if declared_failed {
                process.halt_declared_failed();
            }
            if let Some(mut combine) = combine {
                match self.caller {
                    Some(CallerCombine(function)) => {
                        function.combine_bytes(&combine.input, &mut combine.inout)
                    }
                    None => combine.run(),
                }
                process.combined(combine);
                continue; // the schedule goes on: poll it again
            }
            let Some(outcome) = polled else {
                return Ok(false);
            };
            self.id = None;
            return self.complete(outcome).map(|()| true);
        }
    }

    /// Lands the call's outcome in the caller's buffer.
    fn complete(&mut self, outcome: Result<Output>) -> Result<()> {
        let result = outcome?;
        let placed = match self.output.take() {
            Some(output) => place(&self.placement, &result, output),
            None => Ok(()),
        };
        result.for_each_part(runthrough_core::buffers::give_back);
        placed
    }

    /// Waits until the call has finished here (`MPI_Wait`), with the errors of
    /// [`CollectiveRequest::test`].
    pub fn wait(&mut self) -> Result<()> {
        let process = &self.comm.process;
        process.enter()?;
        let _waiting = process.waiting();
        self.wait_here()
    }

    /// [`CollectiveRequest::wait`] for a thread already counted among the pollers.
    fn wait_here(&mut self) -> Result<()> {
        let process = &self.comm.process;
        loop {
            let seen = process.endpoint.signal.current();
            if self.poll()? {
                return Ok(());
            }
            process.wait_past(seen);
        }
    }
}

impl Drop for CollectiveRequest<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let mut engine = self.comm.process.endpoint.lock();
            engine.abandon_schedule(self.comm.context, id);
            if self.hold == Hold::Caller {
                // A blocking call left early (its thread unwinds: the rank was killed).
                engine.end_collective(self.comm.context);
            }
        }
    }
}

/// Writes a call's `result` into the caller's `output` as `placement` says, or
/// `Error::Count` when the lengths differ (ranks passed different counts).
fn place(placement: &Placement, result: &Output, output: &mut [u8]) -> Result<()> {
    let capacity = output.len();
    let len = result.len();
    let wrong = || Error::Count {
        reason: format!(
            "received {len} bytes for a buffer of {capacity} bytes (ranks passed different counts)",
        ),
    };
    if let (Placement::Whole | Placement::WholeOrNothing, [one]) = (placement, result.parts()) {
        // The usual case: one part, the whole buffer.
        if len != capacity && !(len == 0 && matches!(placement, Placement::WholeOrNothing)) {
            return Err(wrong());
        }
        if len == capacity {
            output.copy_from_slice(one);
        }
        return Ok(());
    }
    let mut reader = Reader::new(result.parts());
    match placement {
        Placement::WholeOrNothing if len == 0 => {}
        Placement::Whole | Placement::WholeOrNothing => {
            if len != capacity {
                return Err(wrong());
            }
            reader.read(output);
        }
        Placement::Part { from } => {
            if from.checked_add(capacity).is_none_or(|end| end > len) {
                return Err(wrong());
            }
            reader.skip(*from);
            reader.read(output);
        }
        Placement::Blocks { at, slots } => {
            let total: usize = slots.iter().map(|&slot| at.of(slot).len()).sum();
            if len != total {
                return Err(wrong());
            }
            for &slot in slots.iter() {
                reader.read(output.get_mut(at.of(slot)).ok_or_else(wrong)?);
            }
        }
        Placement::Listed(listed) => {
            let total: usize = listed.kept.iter().map(|&j| listed.at[j].len()).sum();
            if len != total {
                return Err(wrong());
            }
            for &j in &listed.kept {
                reader.read(output.get_mut(listed.at[j].clone()).ok_or_else(wrong)?);
            }
        }
    }
    Ok(())
}

/// Reads the concatenation of a result's parts in order, without making it.
struct Reader<'a> {
    parts: &'a [Vec<u8>],
    /// The next byte: part `part`, at `at`.
    part: usize,
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(parts: &'a [Vec<u8>]) -> Self {
        Reader {
            parts,
            part: 0,
            at: 0,
        }
    }

    /// Skips `n` bytes (at most what is left).
    fn skip(&mut self, mut n: usize) {
        while n > 0 && self.part < self.parts.len() {
            let step = n.min(self.parts[self.part].len() - self.at);
            self.advance(step);
            n -= step;
        }
    }

    /// Fills `out` with the next bytes (the caller checked that there are enough).
    fn read(&mut self, out: &mut [u8]) {
        let mut filled = 0;
        while filled < out.len() && self.part < self.parts.len() {
            let part = &self.parts[self.part];
            let step = (out.len() - filled).min(part.len() - self.at);
            out[filled..filled + step].copy_from_slice(&part[self.at..self.at + step]);
            filled += step;
            self.advance(step);
        }
        debug_assert_eq!(filled, out.len(), "read past the result");
    }

    fn advance(&mut self, n: usize) {
        self.at += n;
        while self.part < self.parts.len() && self.at == self.parts[self.part].len() {
            self.part += 1;
            self.at = 0;
        }
    }
}

/// `inout = input op inout` over the bytes of `T` elements, wherever the bytes lie (a payload
/// has no alignment guarantee).
///
/// Reads and writes the bytes in place when they are aligned for `T` (the allocator's alignment
/// makes that the usual case); only a misaligned side is copied, so a combine costs no
/// allocation in the usual case.
fn combine_bytes<T: Reducible>(op: Op, input: &[u8], inout: &mut [u8]) {
    super::op::apply_bytes::<T>(&|input, inout| T::combine(op, input, inout), input, inout);
}

/// The engine's byte-level form of predefined `op` on `T` (`Error::Argument` when `op` is not
/// defined on `T`): a plain function per operation and type, so a call allocates nothing for
/// it.
fn reduction<T: Reducible>(op: Op) -> Result<Reduction> {
    let _defined = builtin::<T>(op)?;
    fn on<T: Reducible, const OP: u8>(input: &[u8], inout: &mut [u8]) {
        combine_bytes::<T>(Op::ALL[OP as usize], input, inout)
    }
    let function: fn(&[u8], &mut [u8]) = match op {
        Op::Sum => on::<T, 0>,
        Op::Product => on::<T, 1>,
        Op::Min => on::<T, 2>,
        Op::Max => on::<T, 3>,
        Op::LogicalAnd => on::<T, 4>,
        Op::LogicalOr => on::<T, 5>,
        Op::LogicalXor => on::<T, 6>,
        Op::BitAnd => on::<T, 7>,
        Op::BitOr => on::<T, 8>,
        Op::BitXor => on::<T, 9>,
    };
    Ok(Reduction::of_fn(function, std::mem::size_of::<T>(), true))
}

/// The bytes a rank contributes, its reduction and its output bytes.
type ReductionStart<'a> = (Vec<u8>, Reduction, Option<&'a mut [u8]>);

/// What a reduction whose every participant has a result (all-reduce, scan) starts with: the
/// bytes this rank contributes, the byte-level `op` and the output bytes, once the arguments
/// are checked (`Error::Argument`: a zero-sized `T`, `op` not defined on `T`; `Error::Count`:
/// `recv` not as long as `send`, or either not a whole number of `T` elements). The bytes
/// may lie at any alignment.
fn reduction_arguments<'a>(
    send: &[u8],
    recv: &'a mut [u8],
    op: PackedOp,
) -> Result<ReductionStart<'a>> {
    let send_count = whole_elements(op.size, "send", send)?;
    check_len("recv", whole_elements(op.size, "recv", recv)?, send_count)?;
    Ok((
        runthrough_core::buffers::copy_of(send),
        op.reduction,
        Some(recv),
    ))
}

/// A reduction over packed elements of `size` bytes: `inout = input op inout`, elementwise,
/// where `input` holds the lower ranks' part; the byte forms of the non-blocking reductions
/// (`Comm::ireduce_packed`, ...) run it on whole elements only. The C library's non-blocking
/// reductions of pair types (`MPI_MINLOC` on `MPI_DOUBLE_INT`, ...) and of derived types made
/// of one basic type take it.
#[doc(hidden)]
#[derive(Clone)]
pub struct PackedOp {
    size: usize,
    reduction: Reduction,
}

impl PackedOp {
    /// The operation `combine` on elements of `size` bytes (at least 1).
    pub fn new(size: usize, combine: impl Fn(&[u8], &mut [u8]) + Send + Sync + 'static) -> Self {
        PackedOp {
            size: size.max(1),
            reduction: Reduction::new(Arc::new(combine), size, true),
        }
    }

    /// A user operation on elements of `size` bytes (at least 1) that the call's thread
    /// holds and runs itself ([`Reduction::by_caller`]).
    pub(crate) fn by_caller(size: usize, commutative: bool) -> Self {
        PackedOp {
            size: size.max(1),
            reduction: Reduction::by_caller(size, commutative),
        }
    }

    /// The operation `combine` on elements of `size` bytes (at least 1), which any thread of
    /// the rank that waits in the library runs outside the engine's lock
    /// ([`Reduction::unlocked`]): a C program's user function, which may call the library.
    /// Elements of a commutative one may be combined in any grouping (the ring all-reduce
    /// cuts a vector into chunks of whole elements).
    pub fn unlocked(
        size: usize,
        commutative: bool,
        combine: impl Fn(&[u8], &mut [u8]) + Send + Sync + 'static,
    ) -> Self {
        PackedOp {
            size: size.max(1),
            reduction: Reduction::unlocked(Arc::new(combine), size, commutative),
        }
    }

    /// The size of its elements in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Predefined `op` on `T` (`Error::Argument`: a zero-sized `T`, `op` not defined on `T`).
    pub fn predefined<T: Reducible>(op: Op) -> Result<Self> {
        check_element::<T>()?;
        Ok(PackedOp {
            size: std::mem::size_of::<T>(),
            reduction: reduction::<T>(op)?,
        })
    }
}

impl std::fmt::Debug for PackedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedOp")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// How many elements of `size` bytes `bytes` holds (`Error::Count` when it ends with a
/// partial one).
fn whole_elements(size: usize, what: &str, bytes: &[u8]) -> Result<usize> {
    let size = size.max(1);
    if !bytes.len().is_multiple_of(size) {
        return Err(count_error(format!(
            "{what} holds {} bytes, not a whole number of {size}-byte elements",
            bytes.len()
        )));
    }
    Ok(bytes.len() / size)
}

/// The position of `root` among the participants (`Error::RootFailed` when G recognizes it
/// as failed).
fn root_position(participants: &[Rank], root: Rank) -> Result<usize> {
    participants
        .binary_search(&root)
        .map_err(|_| Error::RootFailed { root })
}

impl Comm {
    /// Starts a barrier (`MPI_Ibarrier`, MPI-4.0 §6.12.1): the request completes once every
    /// participant (OK rank of G) has started it. ⌈log₂ n⌉ rounds as [`Comm::barrier`]'s, run
    /// by the engine as messages arrive.
    ///
    /// ```
    /// let outcomes = runthrough::local(3).run(|world| {
    ///     let mut barrier = world.ibarrier()?;
    ///     // ... compute while the barrier proceeds ...
    ///     barrier.wait()
    /// });
    /// for outcome in outcomes {
    ///     assert_eq!(outcome.returned().unwrap(), Ok(()));
    /// }
    /// ```
    ///
    /// # Errors
    /// At the start: `Error::ProcFailed` while a participant failed that G does not recognize;
    /// `Error::Revoked`; `Error::ConcurrentCollective` while another thread's collective runs
    /// on this communicator; `Error::Comm` on a freed one. Later, through the request: those
    /// of [`CollectiveRequest::test`].
    pub fn ibarrier(&self) -> Result<CollectiveRequest<'_>> {
        self.barrier_call(false)
    }

    /// [`Comm::ibarrier`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn barrier_call(&self, blocking: bool) -> Result<CollectiveRequest<'_>> {
        CollectiveRequest::start_call(
            self,
            Call::new(Collective::Barrier, blocking),
            None,
            Placement::Whole,
            |call| {
                Ok(Schedule::barrier(
                    &call.participants,
                    call.index,
                    call.hosts.as_deref(),
                ))
            },
        )
    }

    /// Starts a broadcast of the root's `buffer` into every participant's `buffer`
    /// (`MPI_Ibcast`, MPI-4.0 §6.12.2): a binomial tree from the root. The root's buffer is
    /// read at the call; the others are written when the request completes.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Root` (out of range), `Error::RootFailed` (G
    /// recognizes the root as failed), `Error::Argument` (zero-sized `T`); `Error::Count`
    /// through the request when the root's buffer has another length.
    pub fn ibroadcast<'a, T: Pod>(
        &'a self,
        buffer: &'a mut [T],
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.broadcast_call(buffer, root, false)
    }

    /// [`Comm::ibroadcast`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn broadcast_call<'a, T: Pod>(
        &'a self,
        buffer: &'a mut [T],
        root: Rank,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_root(self, root)?;
        let bytes: &'a mut [u8] = bytemuck::cast_slice_mut(buffer);
        let (data, output) = if self.rank == root {
            (runthrough_core::buffers::copy_of(bytes), None)
        } else {
            (Vec::new(), Some(bytes))
        };
        CollectiveRequest::start(
            self,
            Call::new(Collective::Broadcast, blocking),
            output,
            |participants, index| {
                let root = root_position(participants, root)?;
                Ok(Schedule::broadcast(participants, index, root, data))
            },
        )
    }

    /// Starts a reduction of every participant's `send` with predefined `op` into the root's
    /// `recv` (`MPI_Ireduce`, MPI-4.0 §6.12.4): a binomial tree rooted at the root (the
    /// predefined operations commute). `recv` is required at the root and ignored elsewhere;
    /// it is written when the request completes.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Root`, `Error::RootFailed`, `Error::Argument`
    /// (`op` not defined on `T`, or no `recv` at the root), `Error::Count` (the root's `recv`
    /// not as long as `send`; through the request, ranks that passed different counts).
    pub fn ireduce<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: Option<&'a mut [T]>,
        op: Op,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        let recv = recv.map(|recv| bytemuck::cast_slice_mut(recv));
        self.ireduce_bytes::<T>(bytemuck::cast_slice(send), recv, op, root)
    }

    /// [`Comm::ireduce`] over the bytes of `T` elements, at any alignment (the C library's
    /// `MPI_Ireduce`: a C buffer carries no alignment guarantee). `Error::Count` also when a
    /// buffer is not a whole number of elements.
    #[doc(hidden)]
    pub fn ireduce_bytes<'a, T: Reducible>(
        &'a self,
        send: &[u8],
        recv: Option<&'a mut [u8]>,
        op: Op,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.ireduce_packed(send, recv, PackedOp::predefined::<T>(op)?, root)
    }

    /// [`Comm::ireduce_bytes`] with operation `op` on packed elements.
    #[doc(hidden)]
    pub fn ireduce_packed<'a>(
        &'a self,
        send: &[u8],
        recv: Option<&'a mut [u8]>,
        op: PackedOp,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.reduce_call(
            send,
            recv,
            op,
            root,
            Call::started(Collective::Reduce),
            None,
        )
    }

    /// [`Comm::ireduce_packed`], or its blocking form (`call`), whose combining steps this
    /// thread runs with `caller` when it is given ([`Reduction::by_caller`]).
    pub(crate) fn reduce_call<'a>(
        &'a self,
        send: &[u8],
        recv: Option<&'a mut [u8]>,
        op: PackedOp,
        root: Rank,
        call: Call,
        caller: Option<CallerCombine<'a>>,
    ) -> Result<CollectiveRequest<'a>> {
        check_root(self, root)?;
        let count = whole_elements(op.size, "send", send)?;
        let reduction = self.process.signalling(op.reduction);
        let unlocked = reduction.is_unlocked();
        let output = if self.rank == root {
            let recv = recv.ok_or_else(|| Error::Argument {
                reason: "the root of a reduce needs a receive buffer".into(),
            })?;
            check_len("recv", whole_elements(op.size, "recv", recv)?, count)?;
            Some(recv)
        } else {
            None
        };
        let data = runthrough_core::buffers::copy_of(send);
        let request = CollectiveRequest::start(self, call, output, |participants, index| {
            let root = root_position(participants, root)?;
            Ok(Schedule::reduce(participants, index, root, data, reduction))
        })?;
        Ok(request.combining_with(caller, unlocked))
    }

    /// Starts an all-reduce of every participant's `send` with predefined `op` into every
    /// participant's `recv` (`MPI_Iallreduce`, MPI-4.0 §6.12.5): [`Comm::all_reduce`]'s
    /// algorithm (recursive doubling, ⌈log₂ n⌉ exchanges, the lower ranks' part combined
    /// first; the ring from 64 KiB), so every rank gets the same bytes, floats included.
    /// `recv` is written when the request completes.
    ///
    /// ```
    /// use runthrough::Op;
    /// let sums = runthrough::local(4).run(|world| {
    ///     let mut sum = [0u64];
    ///     let mut request = world.iall_reduce(&[world.rank() as u64 + 1], &mut sum, Op::Sum)?;
    ///     request.wait()?;
    ///     drop(request);
    ///     Ok::<_, runthrough::Error>(sum[0])
    /// });
    /// for outcome in sums {
    ///     assert_eq!(outcome.returned().unwrap().unwrap(), 10);
    /// }
    /// ```
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Argument` (`op` not defined on `T`),
    /// `Error::Count` (`recv` not as long as `send`; through the request, ranks that passed
    /// different counts).
    pub fn iall_reduce<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        self.iall_reduce_bytes::<T>(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            op,
        )
    }

    /// [`Comm::iall_reduce`] over the bytes of `T` elements, at any alignment (the C library's
    /// `MPI_Iallreduce`: a C buffer carries no alignment guarantee). `Error::Count` also when
    /// a buffer is not a whole number of elements.
    #[doc(hidden)]
    pub fn iall_reduce_bytes<'a, T: Reducible>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        self.iall_reduce_packed(send, recv, PackedOp::predefined::<T>(op)?)
    }

    /// [`Comm::iall_reduce_bytes`] with operation `op` on packed elements.
    #[doc(hidden)]
    pub fn iall_reduce_packed<'a>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: PackedOp,
    ) -> Result<CollectiveRequest<'a>> {
        self.all_reduce_call(send, recv, op, Call::started(Collective::AllReduce), None)
    }

    /// [`Comm::iall_reduce_packed`], or its blocking form (`call`), whose combining steps
    /// this thread runs with `caller` when it is given ([`Reduction::by_caller`]).
    pub(crate) fn all_reduce_call<'a>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: PackedOp,
        call: Call,
        caller: Option<CallerCombine<'a>>,
    ) -> Result<CollectiveRequest<'a>> {
        let send_count = whole_elements(op.size, "send", send)?;
        check_len("recv", whole_elements(op.size, "recv", recv)?, send_count)?;
        let reduction = self.process.signalling(op.reduction);
        let unlocked = reduction.is_unlocked();
        // (The schedule copies `send` as it keeps it: the ring's chunks straight from it.)
        let request = CollectiveRequest::start(self, call, Some(recv), |participants, index| {
            Ok(Schedule::all_reduce_of(
                participants,
                index,
                send,
                reduction,
            ))
        })?;
        Ok(request.combining_with(caller, unlocked))
    }

    /// Starts a reduce-scatter with blocks of one length (`MPI_Ireduce_scatter_block`, MPI-4.0
    /// §6.12.7): every participant's `send` (`size()·recv.len()` elements) is combined with
    /// predefined `op`, elementwise in rank order, and rank r's `recv` gets block r of the
    /// result (`[r·count ..]`, `count = recv.len()`). An all-reduce of the whole vector by
    /// recursive doubling, as [`Comm::iall_reduce`]'s, of which each rank keeps its block.
    ///
    /// ```
    /// use runthrough::Op;
    /// let blocks = runthrough::local(3).run(|world| {
    ///     let send: Vec<u32> = (0..6).map(|i| i * 10 + world.rank()).collect();
    ///     let mut mine = [0u32; 2];
    ///     world.ireduce_scatter_block(&send, &mut mine, Op::Sum)?.wait()?;
    ///     Ok::<_, runthrough::Error>(mine)
    /// });
    /// let got: Vec<[u32; 2]> = blocks.into_iter().map(|b| b.returned().unwrap().unwrap()).collect();
    /// assert_eq!(got, [[3, 33], [63, 93], [123, 153]]);
    /// ```
    ///
    /// # Errors
    /// Those of [`Comm::iall_reduce`]; `Error::Count` when `send` is not `size()·recv.len()`
    /// long.
    pub fn ireduce_scatter_block<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        let counts = vec![recv.len(); self.size as usize];
        self.ireduce_scatter(send, recv, &counts, op)
    }

    /// Starts a reduce-scatter (`MPI_Ireduce_scatter`, MPI-4.0 §6.12.7): as
    /// [`Comm::ireduce_scatter_block`], but rank r's block has `counts[r]` elements, after the
    /// blocks of the ranks below it; `send` holds their sum, `recv` this rank's count. Every
    /// rank passes the same `counts`.
    ///
    /// # Errors
    /// Those of [`Comm::iall_reduce`]; `Error::Count` when `counts` does not have `size()`
    /// entries, `send` is not their sum long, or `recv` not this rank's count.
    pub fn ireduce_scatter<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        self.ireduce_scatter_packed(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            counts,
            PackedOp::predefined::<T>(op)?,
        )
    }

    /// [`Comm::ireduce_scatter`] over the bytes of packed elements with operation `op`, at
    /// any alignment (the C library's `MPI_Ireduce_scatter` and `_block`).
    #[doc(hidden)]
    pub fn ireduce_scatter_packed<'a>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        counts: &[usize],
        op: PackedOp,
    ) -> Result<CollectiveRequest<'a>> {
        check_len("the counts", counts.len(), self.size as usize)?;
        let total = counts
            .iter()
            .try_fold(0usize, |sum, &count| sum.checked_add(count))
            .ok_or_else(|| count_error("the counts add up to too much".into()))?;
        check_len("send", whole_elements(op.size, "send", send)?, total)?;
        let me = self.rank as usize;
        check_len("recv", whole_elements(op.size, "recv", recv)?, counts[me])?;
        let from = counts[..me].iter().sum::<usize>() * op.size;
        let reduction = self.process.signalling(op.reduction);
        let unlocked = reduction.is_unlocked();
        CollectiveRequest::start_with(
            self,
            Call::started(Collective::AllReduce),
            Some(recv),
            Placement::Part { from },
            |participants, index| {
                Ok(Schedule::all_reduce_of(
                    participants,
                    index,
                    send,
                    reduction,
                ))
            },
        )
        .map(|request| request.combining_with(None, unlocked))
    }

    /// Starts a gather of every participant's `send` into `recv` at `root`, rank r's block at
    /// `recv[r·count ..]` with `count = send.len()` (`MPI_Igather`, MPI-4.0 §6.12.3): a
    /// binomial tree towards the root. `recv` is required at the root (`size()·count`
    /// elements) and ignored elsewhere; it is written when the request completes, the slots of
    /// ranks recognized as failed left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Root`, `Error::RootFailed`, `Error::Argument`
    /// (no `recv` at the root, zero-sized `T`), `Error::Count` (the root's `recv` of another
    /// length; through the request, ranks that passed different counts).
    pub fn igather<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: Option<&'a mut [T]>,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.gather_call(send, recv, root, false)
    }

    /// [`Comm::igather`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn gather_call<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: Option<&'a mut [T]>,
        root: Rank,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_root(self, root)?;
        let block = std::mem::size_of_val(send);
        let output = if self.rank == root {
            let recv = recv.ok_or_else(|| Error::Argument {
                reason: "the root of a gather needs a receive buffer".into(),
            })?;
            let expected = (self.size as usize).saturating_mul(send.len());
            check_len("the gather receive buffer", recv.len(), expected)?;
            Some(bytemuck::cast_slice_mut(recv))
        } else {
            None
        };
        let data = runthrough_core::buffers::copy_of(bytemuck::cast_slice(send));
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::Gather, blocking),
            output,
            Some(Layout::Uniform(block)),
            |participants, index| {
                let root = root_position(participants, root)?;
                Ok(Schedule::gather(participants, index, root, data))
            },
        )
    }

    /// Starts a scatter of the root's `send`, block r (`send[r·count ..]`, `count =
    /// recv.len()`) into participant r's `recv` (`MPI_Iscatter`, MPI-4.0 §6.12.3): a binomial
    /// tree from the root. `send` is required at the root (`size()·count`
    /// elements) and read at the call; `recv` is written when the request completes.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Root`, `Error::RootFailed`, `Error::Argument`
    /// (no `send` at the root, zero-sized `T`), `Error::Count` (the root's `send` of another
    /// length; through the request, a block of another length).
    pub fn iscatter<'a, T: Pod>(
        &'a self,
        send: Option<&[T]>,
        recv: &'a mut [T],
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.scatter_call(send, recv, root, false)
    }

    /// [`Comm::iscatter`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn scatter_call<'a, T: Pod>(
        &'a self,
        send: Option<&[T]>,
        recv: &'a mut [T],
        root: Rank,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_root(self, root)?;
        let count = recv.len();
        let send: Option<&[u8]> = if self.rank == root {
            let send = send.ok_or_else(|| Error::Argument {
                reason: "the root of a scatter needs a send buffer".into(),
            })?;
            let expected = (self.size as usize).saturating_mul(count);
            check_len("the scatter send buffer", send.len(), expected)?;
            Some(bytemuck::cast_slice(send))
        } else {
            None
        };
        let block = std::mem::size_of_val(recv);
        let output = Some(bytemuck::cast_slice_mut(recv));
        CollectiveRequest::start(
            self,
            Call::new(Collective::Scatter, blocking),
            output,
            |participants, index| {
                let root = root_position(participants, root)?;
                let blocks = match send {
                    Some(send) => participants
                        .iter()
                        .map(|&rank| {
                            runthrough_core::buffers::copy_of(
                                &send[rank as usize * block..][..block],
                            )
                        })
                        .collect(),
                    None => Vec::new(),
                };
                Ok(Schedule::scatter(participants, index, root, blocks))
            },
        )
    }

    /// Starts an all-gather of every participant's `send` into every participant's `recv`,
    /// rank r's block at `recv[r·count ..]` with `count = send.len()` (`MPI_Iallgather`,
    /// MPI-4.0 §6.12.4): Bruck's algorithm, ⌈log₂ n⌉ rounds. `recv` is written when the request completes,
    /// the slots of ranks recognized as failed left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Argument` (zero-sized `T`), `Error::Count`
    /// (`recv` not `size()·send.len()` long; through the request, ranks that passed different
    /// counts).
    pub fn iall_gather<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
    ) -> Result<CollectiveRequest<'a>> {
        self.all_gather_call(send, recv, false)
    }

    /// [`Comm::iall_gather`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn all_gather_call<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        let expected = (self.size as usize).saturating_mul(send.len());
        check_len("the all_gather receive buffer", recv.len(), expected)?;
        let block = std::mem::size_of_val(send);
        let data = runthrough_core::buffers::copy_of(bytemuck::cast_slice(send));
        let output = Some(bytemuck::cast_slice_mut(recv));
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::AllGather, blocking),
            output,
            Some(Layout::Uniform(block)),
            |participants, index| Ok(Schedule::all_gather(participants, index, data)),
        )
    }

    /// Starts an all-to-all: block r of `send` (`send[r·count ..]`, `count = send.len() /
    /// size()`) goes to participant r, and the block rank r sent here lands at
    /// `recv[r·count ..]` (`MPI_Ialltoall`, MPI-4.0 §6.12.6): Bruck's algorithm for blocks up to
    /// 1 KiB, pairwise exchanges (n − 1 steps) above.
    /// `send` is read at the call, `recv` written when the request completes; the blocks of
    /// ranks recognized as failed are neither sent nor written.
    ///
    /// # Errors
    /// Those of [`Comm::ibarrier`], and `Error::Argument` (zero-sized `T`), `Error::Count`
    /// (`send` and `recv` of different lengths, or not a multiple of `size()`; through the
    /// request, a block of another length).
    pub fn ialltoall<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
    ) -> Result<CollectiveRequest<'a>> {
        self.alltoall_call(send, recv, false)
    }

    /// [`Comm::ialltoall`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn alltoall_call<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_len("the all_to_all receive buffer", recv.len(), send.len())?;
        let size = self.size as usize;
        if !send.len().is_multiple_of(size) {
            return Err(count_error(format!(
                "an all_to_all buffer of {} elements is not {size} equal blocks",
                send.len()
            )));
        }
        let block = std::mem::size_of_val(send) / size;
        let send: &[u8] = bytemuck::cast_slice(send);
        let output = Some(bytemuck::cast_slice_mut(recv));
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::AllToAll, blocking),
            output,
            Some(Layout::Uniform(block)),
            |participants, index| {
                let blocks = participants
                    .iter()
                    .map(|&rank| {
                        runthrough_core::buffers::copy_of(&send[rank as usize * block..][..block])
                    })
                    .collect();
                Ok(Schedule::all_to_all(participants, index, blocks))
            },
        )
    }

    /// Starts a gather of every participant's `send`, of any length, into the blocks of the
    /// root's `recv` (`MPI_Igatherv`, MPI-4.0 §6.12.3): rank r's `send` must have `counts[r]`
    /// elements of the partition. A binomial tree towards the root.
    /// `recv` is required at the root and ignored elsewhere; it is written when the request
    /// completes, the blocks of ranks recognized as failed left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::igather`]; `Error::Count` also when the partition does not have
    /// `size()` blocks inside its buffer or the root's `send` is not its count long (through
    /// the request: a rank's block that is not its count long).
    pub fn igather_varcount<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: Option<PartitionMut<'a, T>>,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.gather_varcount_call(send, recv, root, false)
    }

    /// [`Comm::igather_varcount`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn gather_varcount_call<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: Option<PartitionMut<'a, T>>,
        root: Rank,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_root(self, root)?;
        let (output, at) = if self.rank == root {
            let recv = recv.ok_or_else(|| Error::Argument {
                reason: "the root of a gather needs a receive buffer".into(),
            })?;
            let PartitionMut {
                buffer,
                counts,
                displacements,
            } = recv;
            check_partition(&counts, &displacements, buffer.len(), self.size)?;
            check_len("the root's gather block", send.len(), counts[root as usize])?;
            let at = byte_ranges::<T>(&counts, &displacements);
            (Some(bytemuck::cast_slice_mut(buffer)), Some(at))
        } else {
            (None, None)
        };
        let data = runthrough_core::buffers::copy_of(bytemuck::cast_slice(send));
        let lens_at = at.clone();
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::Gather, blocking),
            output,
            at.map(Layout::Ranges),
            move |participants, index| {
                let root = root_position(participants, root)?;
                let lens = lens_at.map_or_else(Vec::new, |at| lens_of(&at, participants));
                Ok(Schedule::gather_varcount(
                    participants,
                    index,
                    root,
                    data,
                    &lens,
                ))
            },
        )
    }

    /// Starts a scatter of the blocks of the root's `send` partition, block r into participant
    /// r's `recv` (`MPI_Iscatterv`, MPI-4.0 §6.12.3): rank r's `recv` must be `counts[r]`
    /// long. `send` is required at the root (read at the call) and ignored elsewhere; the
    /// root may pass no `recv` (its block stays in `send`: `MPI_IN_PLACE`), every other rank
    /// must.
    ///
    /// # Errors
    /// Those of [`Comm::iscatter`]; `Error::Count` also when the partition does not have
    /// `size()` blocks inside its buffer or the root's `recv` is not its count long;
    /// `Error::Argument` when a rank other than the root passes no `recv`.
    pub fn iscatter_varcount<'a, T: Pod>(
        &'a self,
        send: Option<Partition<'_, T>>,
        recv: Option<&'a mut [T]>,
        root: Rank,
    ) -> Result<CollectiveRequest<'a>> {
        self.scatter_varcount_call(send, recv, root, false)
    }

    /// [`Comm::iscatter_varcount`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn scatter_varcount_call<'a, T: Pod>(
        &'a self,
        send: Option<Partition<'_, T>>,
        recv: Option<&'a mut [T]>,
        root: Rank,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_root(self, root)?;
        let blocks: Option<(Vec<u8>, Vec<Range<usize>>)> = if self.rank == root {
            let send = send.ok_or_else(|| Error::Argument {
                reason: "the root of a scatter needs a send buffer".into(),
            })?;
            check_partition(
                &send.counts,
                &send.displacements,
                send.buffer.len(),
                self.size,
            )?;
            if let Some(recv) = &recv {
                check_len(
                    "the root's scatter block",
                    recv.len(),
                    send.counts[root as usize],
                )?;
            }
            let at = byte_ranges::<T>(&send.counts, &send.displacements);
            Some((
                runthrough_core::buffers::copy_of(bytemuck::cast_slice(send.buffer)),
                at,
            ))
        } else {
            None
        };
        let output = match recv {
            Some(recv) => Some(bytemuck::cast_slice_mut(recv)),
            None if self.rank == root => None,
            None => {
                return Err(Error::Argument {
                    reason: "a scatter needs a receive buffer (only the root may keep its block \
                             in place)"
                        .into(),
                })
            }
        };
        CollectiveRequest::start(
            self,
            Call::new(Collective::Scatter, blocking),
            output,
            move |participants, index| {
                let root = root_position(participants, root)?;
                let blocks = match blocks {
                    Some((bytes, at)) => participants
                        .iter()
                        .map(|&rank| bytes[at[rank as usize].clone()].to_vec())
                        .collect(),
                    None => Vec::new(),
                };
                // (A root that keeps its block in place has no output: its result is dropped.)
                Ok(Schedule::scatter(participants, index, root, blocks))
            },
        )
    }

    /// Starts an all-gather of every participant's `send`, of any length, into the blocks of
    /// every participant's `recv` (`MPI_Iallgatherv`, MPI-4.0 §6.12.4): rank r's `send` must
    /// have `counts[r]` elements of the partition. Bruck's algorithm, as
    /// [`Comm::iall_gather`]'s; `recv` is written when the request completes, the blocks of ranks
    /// recognized as failed left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::iall_gather`]; `Error::Count` also when the partition does not have
    /// `size()` blocks inside its buffer or `send` is not this rank's count long (through the
    /// request: a rank's block that is not its count long).
    pub fn iall_gather_varcount<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: PartitionMut<'a, T>,
    ) -> Result<CollectiveRequest<'a>> {
        self.all_gather_varcount_call(send, recv, false)
    }

    /// [`Comm::iall_gather_varcount`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn all_gather_varcount_call<'a, T: Pod>(
        &'a self,
        send: &[T],
        recv: PartitionMut<'a, T>,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        let PartitionMut {
            buffer,
            counts,
            displacements,
        } = recv;
        check_partition(&counts, &displacements, buffer.len(), self.size)?;
        check_len(
            "the all_gather block",
            send.len(),
            counts[self.rank as usize],
        )?;
        let at = byte_ranges::<T>(&counts, &displacements);
        let lens_at = at.clone();
        let data = runthrough_core::buffers::copy_of(bytemuck::cast_slice(send));
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::AllGather, blocking),
            Some(bytemuck::cast_slice_mut(buffer)),
            Some(Layout::Ranges(at)),
            move |participants, index| {
                let lens = lens_of(&lens_at, participants);
                Ok(Schedule::all_gather_varcount(
                    participants,
                    index,
                    data,
                    &lens,
                ))
            },
        )
    }

    /// Starts an all-to-all of blocks of any length (`MPI_Ialltoallv`, MPI-4.0 §6.12.6):
    /// block r of the `send` partition goes to participant r, and the block rank r sent here
    /// lands in block r of the `recv` partition, which must be as long. `send` is read at the
    /// call, `recv` written when the request completes; the blocks of ranks recognized as
    /// failed are neither sent nor written.
    ///
    /// # Errors
    /// Those of [`Comm::ialltoall`]; `Error::Count` also when a partition does not have
    /// `size()` blocks inside its buffer, or this rank's block to itself has different lengths
    /// in the two (through the request: a block of another length than its `recv` block).
    pub fn ialltoall_varcount<'a, T: Pod>(
        &'a self,
        send: Partition<'_, T>,
        recv: PartitionMut<'a, T>,
    ) -> Result<CollectiveRequest<'a>> {
        self.alltoall_varcount_call(send, recv, false)
    }

    /// [`Comm::ialltoall_varcount`], or its blocking form with `blocking` ([`CollectiveRequest::finish`]).
    pub(crate) fn alltoall_varcount_call<'a, T: Pod>(
        &'a self,
        send: Partition<'_, T>,
        recv: PartitionMut<'a, T>,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        check_partition(
            &send.counts,
            &send.displacements,
            send.buffer.len(),
            self.size,
        )?;
        let PartitionMut {
            buffer,
            counts,
            displacements,
        } = recv;
        check_partition(&counts, &displacements, buffer.len(), self.size)?;
        let me = self.rank as usize;
        check_len("this rank's all_to_all block", send.counts[me], counts[me])?;
        let from = byte_ranges::<T>(&send.counts, &send.displacements);
        let bytes: &[u8] = bytemuck::cast_slice(send.buffer);
        let at = byte_ranges::<T>(&counts, &displacements);
        let lens_at = at.clone();
        CollectiveRequest::start_placed(
            self,
            Call::new(Collective::AllToAll, blocking),
            Some(bytemuck::cast_slice_mut(buffer)),
            Some(Layout::Ranges(at)),
            move |participants, index| {
                let blocks = participants
                    .iter()
                    .map(|&rank| bytes[from[rank as usize].clone()].to_vec())
                    .collect();
                let lens = lens_of(&lens_at, participants);
                Ok(Schedule::all_to_all_varcount(
                    participants,
                    index,
                    blocks,
                    &lens,
                ))
            },
        )
    }

    /// Starts a neighbourhood exchange (`MPI_Ineighbor_alltoallv`, MPI-4.0 §8.6, with the
    /// neighbours given here rather than by a topology): block i of `send` goes to comm rank
    /// `destinations[i]`, and block j of `recv` receives what comm rank `sources[j]` sends
    /// this rank, written when the request completes. Every rank of the communicator calls
    /// it (a collective, in the communicator's one order of collectives), each with its own
    /// lists; a rank named k times gets (or sends) k blocks, matched in list order: the k-th
    /// block a rank sends to this one lands in the k-th block of `recv` whose source is that
    /// rank. A rank may name itself (its block is copied). Blocks for and from ranks
    /// recognized as failed (NULL in G) are neither sent nor written (semantics §3.3). Each
    /// block moves once, straight to its receiver.
    ///
    /// # Errors
    /// - `Error::Rank` for a neighbour outside the communicator.
    /// - `Error::Count` when a partition does not hold one block per neighbour inside its
    ///   buffer, a block arrived with another length than its receiving block, or the blocks
    ///   to this rank itself do not pair with the blocks from it.
    /// - `Error::ProcFailed` when a neighbour failed and G does not recognize it.
    /// - `Error::Argument` for a zero-sized `T`, or more edges between two ranks than one
    ///   call can number; `Error::Comm`.
    pub fn ineighbor_alltoall_varcount<'a, T: Pod>(
        &'a self,
        destinations: &[Rank],
        send: Partition<'_, T>,
        sources: &[Rank],
        recv: PartitionMut<'a, T>,
    ) -> Result<CollectiveRequest<'a>> {
        self.neighbor_call(destinations, send, sources, recv, false)
    }

    /// The blocking form of [`Comm::ineighbor_alltoall_varcount`] (`MPI_Neighbor_alltoallv`):
    /// the same call, waited for at once.
    ///
    /// # Errors
    /// As [`Comm::ineighbor_alltoall_varcount`], and `Error::ConcurrentCollective`.
    pub fn neighbor_alltoall_varcount<T: Pod>(
        &self,
        destinations: &[Rank],
        send: Partition<'_, T>,
        sources: &[Rank],
        recv: PartitionMut<'_, T>,
    ) -> Result<()> {
        self.neighbor_call(destinations, send, sources, recv, true)?
            .finish()
    }

    /// [`Comm::ineighbor_alltoall_varcount`], or its blocking form with `blocking`.
    fn neighbor_call<'a, T: Pod>(
        &'a self,
        destinations: &[Rank],
        send: Partition<'_, T>,
        sources: &[Rank],
        recv: PartitionMut<'a, T>,
        blocking: bool,
    ) -> Result<CollectiveRequest<'a>> {
        check_element::<T>()?;
        for &rank in destinations.iter().chain(sources) {
            if rank >= self.size {
                return Err(Error::Rank {
                    rank: rank.into(),
                    size: self.size,
                });
            }
        }
        check_partition(
            &send.counts,
            &send.displacements,
            send.buffer.len(),
            destinations.len() as u32,
        )?;
        let PartitionMut {
            buffer,
            counts,
            displacements,
        } = recv;
        check_partition(&counts, &displacements, buffer.len(), sources.len() as u32)?;
        let from = byte_ranges::<T>(&send.counts, &send.displacements);
        let bytes: &[u8] = bytemuck::cast_slice(send.buffer);
        let at = byte_ranges::<T>(&counts, &displacements);
        let lens: Vec<usize> = at.iter().map(Range::len).collect();
        let (destinations, sources): (Vec<Rank>, Arc<[Rank]>) =
            (destinations.to_vec(), Arc::from(sources));
        let listed = Arc::clone(&sources);
        let me = self.rank;
        CollectiveRequest::start_with(
            self,
            Call::new(Collective::NeighborExchange, blocking),
            Some(bytemuck::cast_slice_mut(buffer)),
            Placement::Listed(Box::new(Listed {
                at,
                sources: listed,
                kept: Vec::new(),
            })),
            move |participants, _| {
                let live = |rank: &Rank| participants.contains(rank);
                let (to, blocks): (Vec<Rank>, Vec<Vec<u8>>) = destinations
                    .iter()
                    .zip(&from)
                    .filter(|(rank, _)| live(rank))
                    .map(|(&rank, range)| (rank, bytes[range.clone()].to_vec()))
                    .unzip();
                let (from, lens): (Vec<Rank>, Vec<usize>) = sources
                    .iter()
                    .zip(&lens)
                    .filter(|(rank, _)| live(rank))
                    .map(|(&rank, &len)| (rank, len))
                    .unzip();
                Schedule::neighbor_exchange(me, &to, blocks, &from, &lens)
            },
        )
    }

    /// Starts an inclusive prefix reduction (`MPI_Iscan`, MPI-4.0 §6.12.8): `recv` gets the
    /// combination with predefined `op` of `send` over the participants up to this one, in
    /// rank order (recursive doubling, as [`Comm::scan`]'s), written when the request
    /// completes.
    ///
    /// # Errors
    /// Those of [`Comm::iall_reduce`].
    pub fn iscan<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        self.iscan_bytes::<T>(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            op,
            false,
        )
    }

    /// Starts an exclusive prefix reduction (`MPI_Iexscan`, MPI-4.0 §6.12.9): `recv` gets the
    /// combination over the participants below this one; at the first participant it is left
    /// untouched.
    ///
    /// # Errors
    /// Those of [`Comm::iall_reduce`].
    pub fn iexscan<'a, T: Reducible>(
        &'a self,
        send: &[T],
        recv: &'a mut [T],
        op: Op,
    ) -> Result<CollectiveRequest<'a>> {
        self.iscan_bytes::<T>(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            op,
            true,
        )
    }

    /// [`Comm::iscan`] (`exclusive` false) or [`Comm::iexscan`] over the bytes of `T`
    /// elements, at any alignment (the C library's `MPI_Iscan` and `MPI_Iexscan`).
    /// `Error::Count` also when a buffer is not a whole number of elements.
    #[doc(hidden)]
    pub fn iscan_bytes<'a, T: Reducible>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: Op,
        exclusive: bool,
    ) -> Result<CollectiveRequest<'a>> {
        self.iscan_packed(send, recv, PackedOp::predefined::<T>(op)?, exclusive)
    }

    /// [`Comm::iscan_bytes`] with operation `op` on packed elements.
    #[doc(hidden)]
    pub fn iscan_packed<'a>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: PackedOp,
        exclusive: bool,
    ) -> Result<CollectiveRequest<'a>> {
        self.scan_call(send, recv, op, exclusive, false, None)
    }

    /// [`Comm::iscan_packed`], or its blocking form (`blocking`), whose combining steps this
    /// thread runs with `caller` when it is given ([`Reduction::by_caller`]).
    pub(crate) fn scan_call<'a>(
        &'a self,
        send: &[u8],
        recv: &'a mut [u8],
        op: PackedOp,
        exclusive: bool,
        blocking: bool,
        caller: Option<CallerCombine<'a>>,
    ) -> Result<CollectiveRequest<'a>> {
        let (data, reduction, output) = reduction_arguments(send, recv, op)?;
        let reduction = self.process.signalling(reduction);
        let unlocked = reduction.is_unlocked();
        let operation = if exclusive {
            Collective::Exscan
        } else {
            Collective::Scan
        };
        let placement = if exclusive {
            Placement::WholeOrNothing
        } else {
            Placement::Whole
        };
        let request = CollectiveRequest::start_with(
            self,
            Call::new(operation, blocking),
            output,
            placement,
            |participants, index| {
                Ok(Schedule::scan(
                    participants,
                    index,
                    data,
                    reduction,
                    exclusive,
                ))
            },
        )?;
        Ok(request.combining_with(caller, unlocked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result of several parts lands as their concatenation would: whole, a part of it
    /// that spans parts, or blocks that cut across parts; a wrong length is `Count`.
    #[test]
    fn a_result_of_several_parts_is_placed_as_their_concatenation() {
        let parts = vec![vec![1u8, 2, 3], vec![], vec![4, 5], vec![6]];
        let three = Output::of(vec![1u8, 2, 3]);
        let mut out = [0u8; 3];
        place(&Placement::Whole, &three, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3]);
        let whole: Output = parts.into_iter().collect();
        let mut out = [0u8; 6];
        place(&Placement::Whole, &whole, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 5, 6]);
        let mut out = [0u8; 3];
        place(&Placement::Part { from: 2 }, &whole, &mut out).unwrap();
        assert_eq!(out, [3, 4, 5]);
        let mut out = [9u8; 8];
        let blocks = Placement::Blocks {
            at: Layout::Ranges(vec![6..8, 0..2, 2..4]),
            slots: Arc::from([1, 2, 0]),
        };
        place(&blocks, &whole, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4, 9, 9, 5, 6]);
        let mut out = [0u8; 5];
        assert!(matches!(
            place(&Placement::Whole, &whole, &mut out),
            Err(Error::Count { .. })
        ));
        let mut out = [0u8; 3];
        let past = place(&Placement::Part { from: 4 }, &whole, &mut out);
        assert!(matches!(past, Err(Error::Count { .. })));
    }

    /// Each predefined operation's plain function is that operation (the table of
    /// `reduction` and `Op::ALL` agree).
    #[test]
    fn each_operations_function_is_that_operation() {
        let input: Vec<u32> = vec![6, 0, 5, 3];
        let inout: Vec<u32> = vec![3, 1, 0, 5];
        for op in Op::ALL {
            let mut expected = inout.clone();
            u32::combine(op, &input, &mut expected);
            let mut got: Vec<u8> = bytemuck::cast_slice(&inout).to_vec();
            let reduction = reduction::<u32>(op).unwrap();
            assert!(reduction.apply(bytemuck::cast_slice(&input), &mut got));
            assert_eq!(got, bytemuck::cast_slice::<u32, u8>(&expected), "{op:?}");
        }
    }

    /// Every alignment of either side gives the same result as combining the elements.
    #[test]
    fn combine_bytes_reads_and_writes_at_any_alignment() {
        let input: Vec<u64> = vec![1, 20, 300, u64::MAX];
        let inout: Vec<u64> = vec![5, 6, 7, 1];
        let mut expected = inout.clone();
        u64::combine(Op::Max, &input, &mut expected);
        let bytes = |v: &[u64]| bytemuck::cast_slice::<u64, u8>(v).to_vec();
        for input_at in 0..8 {
            for inout_at in 0..8 {
                // u64 words: offset 0 is aligned, so both paths run.
                let mut a_words = [0u64; 5];
                let a: &mut [u8] = bytemuck::cast_slice_mut(&mut a_words);
                a[input_at..input_at + 32].copy_from_slice(&bytes(&input));
                let mut b_words = [0u64; 5];
                let b: &mut [u8] = bytemuck::cast_slice_mut(&mut b_words);
                b[inout_at..inout_at + 32].copy_from_slice(&bytes(&inout));
                combine_bytes::<u64>(
                    Op::Max,
                    &a[input_at..input_at + 32],
                    &mut b[inout_at..inout_at + 32],
                );
                assert_eq!(
                    &b[inout_at..inout_at + 32],
                    &bytes(&expected)[..],
                    "input at {input_at}, inout at {inout_at}"
                );
            }
        }
    }
}

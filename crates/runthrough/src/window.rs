// SPDX-License-Identifier: MIT OR Apache-2.0
//! One-sided communication (semantics §3.6): a [`Window`] exposes an array of every rank to
//! the others, which put into it, get from it and accumulate into it without the owner taking
//! part, inside epochs that a fence, a lock or a post / start pair opens.
//!
//! The protocol is the engine's (`runthrough_core::engine::rma`): every operation is one
//! request and one reply, applied at the target by whatever thread delivers the request,
//! whether or not the target is inside a call. Each rank's array lives behind a lock of its
//! own; [`Window::local`] and [`Window::update_local`] reach it.
//!
//! ```
//! use runthrough::Op;
//! let outcomes = runthrough::local(4).run(|world| {
//!     let window = world.window_allocate::<u64>(4)?;
//!     window.fence()?;
//!     // Every rank adds its number + 1 to slot 0 of rank 0 and writes slot r of rank 1.
//!     window.accumulate(&[u64::from(world.rank()) + 1], 0, 0, Op::Sum)?;
//!     window.put(&[7], 1, world.rank() as usize)?;
//!     window.fence()?;
//!     let mine = window.local();
//!     window.free()?;
//!     Ok::<_, runthrough::Error>(mine)
//! });
//! let arrays: Vec<Vec<u64>> = outcomes
//!     .into_iter()
//!     .map(|o| o.returned().unwrap().unwrap())
//!     .collect();
//! assert_eq!(arrays[0][0], 1 + 2 + 3 + 4);
//! assert_eq!(arrays[1], vec![7, 7, 7, 7]);
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use runthrough_core::engine::rma::{Access, Block, Memory, Operation};
use runthrough_core::{Error, Rank, Result};

use crate::collectives::{Op, Reducible};
use crate::comm::Comm;
use crate::rank::outgoing;

/// The accumulate code of `MPI_REPLACE` (the others are [`Op::ALL`]'s indices).
const REPLACE: u64 = 100;
/// The accumulate code of `MPI_NO_OP`.
const NO_OP: u64 = 101;

/// What an accumulate does to the target's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmaOp {
    /// `target = data op target`.
    Op(Op),
    /// `target = data`, element by element, atomically (`MPI_REPLACE`).
    Replace,
    /// Nothing: with a fetch, an atomic read (`MPI_NO_OP`).
    NoOp,
}

impl From<Op> for RmaOp {
    fn from(op: Op) -> Self {
        RmaOp::Op(op)
    }
}

impl RmaOp {
    fn code(self) -> u64 {
        match self {
            RmaOp::Op(op) => Op::ALL.iter().position(|&o| o == op).unwrap_or(0) as u64,
            RmaOp::Replace => REPLACE,
            RmaOp::NoOp => NO_OP,
        }
    }

    fn of_code(code: u64) -> Option<RmaOp> {
        match code {
            REPLACE => Some(RmaOp::Replace),
            NO_OP => Some(RmaOp::NoOp),
            _ => Op::ALL
                .get(usize::try_from(code).ok()?)
                .map(|&op| RmaOp::Op(op)),
        }
    }
}

/// A rank's array as the engine reaches it.
struct Local<T>(Arc<Mutex<Vec<T>>>);

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("window memory")
    }
}

fn lock<T>(memory: &Mutex<Vec<T>>) -> MutexGuard<'_, Vec<T>> {
    memory.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T: Reducible + Send> Memory for Local<T> {
    fn len(&self) -> usize {
        std::mem::size_of_val(lock(&self.0).as_slice())
    }

    fn read(&self, at: usize, into: &mut [u8]) {
        let data = lock(&self.0);
        let bytes: &[u8] = bytemuck::cast_slice(&data);
        into.copy_from_slice(&bytes[at..at + into.len()]);
    }

    fn write(&mut self, at: usize, bytes: &[u8]) {
        let mut data = lock(&self.0);
        let memory: &mut [u8] = bytemuck::cast_slice_mut(&mut data);
        memory[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn check_accumulate(
        &self,
        at: usize,
        code: u64,
        len: usize,
    ) -> std::result::Result<(), String> {
        let size = std::mem::size_of::<T>();
        if !at.is_multiple_of(size) || !len.is_multiple_of(size) {
            return Err("not a whole number of the window's elements".into());
        }
        match RmaOp::of_code(code) {
            Some(RmaOp::Op(op)) if !T::supports(op) => {
                Err(format!("{op:?} is not defined on the window's elements"))
            }
            Some(_) => Ok(()),
            None => Err(format!("unknown accumulate operation {code}")),
        }
    }

    fn accumulate(&mut self, at: usize, code: u64, bytes: &[u8]) {
        let size = std::mem::size_of::<T>();
        let input: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
        let mut data = lock(&self.0);
        let target = &mut data[at / size..at / size + input.len()];
        match RmaOp::of_code(code) {
            Some(RmaOp::Op(op)) => T::combine(op, &input, target),
            Some(RmaOp::Replace) => target.copy_from_slice(&input),
            Some(RmaOp::NoOp) | None => {}
        }
    }
}

/// A window over bytes: what [`Window`] is made of, and what language bindings build on
/// (the C library's `MPI_Win`). Each rank's part is a [`Memory`] of its own choosing;
/// operations name byte [`Block`]s of the target's part and carry packed bytes.
/// Synchronization, completion and failures are [`Window`]'s (semantics §3.6).
pub struct RawWindow {
    comm: Comm,
    /// Every rank's part, in bytes.
    sizes: Vec<u64>,
    /// Every rank's displacement unit (what the binding gave at creation).
    units: Vec<u64>,
}

impl fmt::Debug for RawWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawWindow")
            .field("rank", &self.comm.rank())
            .field("sizes", &self.sizes)
            .finish()
    }
}

impl Comm {
    /// A window over `memory` at this rank, `unit` being its displacement unit (kept for the
    /// binding: [`RawWindow::unit_of`]). Collective, with the same outcome at every rank (the
    /// ranks agree on it): every survivor gets the window, or every one an error.
    ///
    /// # Errors
    /// Those of [`Comm::dup`] (the window gets a communicator of its own): `ProcFailed` when a
    /// member failed during the creation, `Revoked`.
    pub fn raw_window(&self, memory: Box<dyn Memory>, unit: u64) -> Result<RawWindow> {
        let comm = self.dup()?;
        let size = memory.len() as u64;
        comm.process.enter()?;
        comm.process
            .endpoint
            .lock()
            .window_create(comm.context, memory)?;
        // Every rank registered its memory before it sends its size: once a rank has every
        // size, every rank's window is there to take its operations. The exchange can end
        // well at some ranks and with an error at others (a death during it): the ranks agree
        // on its outcome, so that every survivor gets the window or every one an error, as
        // with a communicator's creation.
        let mut both = vec![0u64; 2 * comm.size() as usize];
        let exchanged = comm.all_gather(&[size, unit], &mut both);
        let everywhere = match comm.agree(u32::from(exchanged.is_ok())) {
            Ok(flag) | Err(Error::AgreeProcFailed { flag }) => flag == 1,
            Err(e) => return Err(e),
        };
        if !everywhere {
            exchanged?;
            // Another rank's exchange failed: a member died or the communicator was revoked,
            // which this rank's detector learns in turn.
            let context = comm.context;
            return Err(comm.process.wait_for(|engine| {
                if engine.is_revoked(context) {
                    return Some(Error::Revoked);
                }
                match engine.unrecognized_failure(context) {
                    Ok(Some(rank)) => Some(Error::ProcFailed { rank }),
                    Ok(None) => None,
                    Err(e) => Some(e),
                }
            }));
        }
        Ok(RawWindow {
            comm,
            sizes: both.iter().step_by(2).copied().collect(),
            units: both.iter().skip(1).step_by(2).copied().collect(),
        })
    }
}

impl RawWindow {
    /// The window's communicator (a dup of the one it was made on): its failure views are the
    /// window's.
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The size of `rank`'s part, in bytes.
    ///
    /// # Errors
    /// `Error::Rank` outside the window's group.
    pub fn size_of(&self, rank: Rank) -> Result<u64> {
        self.sizes.get(rank as usize).copied().ok_or(Error::Rank {
            rank: i64::from(rank),
            size: self.comm.size(),
        })
    }

    /// The displacement unit `rank` gave.
    ///
    /// # Errors
    /// `Error::Rank` outside the window's group.
    pub fn unit_of(&self, rank: Rank) -> Result<u64> {
        self.units.get(rank as usize).copied().ok_or(Error::Rank {
            rank: i64::from(rank),
            size: self.comm.size(),
        })
    }

    /// Checks `blocks` against `target`'s part.
    fn check(&self, target: Rank, blocks: &[Block]) -> Result<()> {
        let size = self.size_of(target)?;
        for block in blocks {
            if block.at.checked_add(block.len).is_none_or(|end| end > size) {
                return Err(Error::RmaRange {
                    reason: format!(
                        "bytes {}..{} of rank {target}'s window of {size}",
                        block.at,
                        block.at.saturating_add(block.len)
                    ),
                });
            }
        }
        Ok(())
    }

    /// Starts an operation; returns its number.
    fn begin(&self, operation: Operation, wants_data: bool) -> Result<u64> {
        let blocks = match &operation.access {
            Access::Put { blocks } | Access::Get { blocks } | Access::Accumulate { blocks, .. } => {
                blocks.clone()
            }
            Access::CompareAndSwap { at } => vec![Block {
                at: *at,
                len: operation.data.len() as u64 / 2,
            }],
        };
        self.check(operation.target, &blocks)?;
        let process = &self.comm.process;
        process.enter()?;
        let mut out = outgoing();
        let op = process.endpoint.lock().rma_start(
            self.comm.context,
            operation,
            wants_data,
            &mut out,
        )?;
        process.send_all(out);
        Ok(op)
    }

    /// Starts an operation whose reply carries data and waits for it.
    fn begin_and_take(&self, operation: Operation) -> Result<Vec<u8>> {
        let op = self.begin(operation, true)?;
        let context = self.comm.context;
        self.comm
            .process
            .wait_for(|engine| engine.rma_take(context, op))
    }

    /// Writes `data` to `blocks` of `target`'s part, in order (`MPI_Put`).
    ///
    /// # Errors
    /// As [`Window::put`].
    pub fn put(&self, target: Rank, blocks: Vec<Block>, data: Vec<u8>) -> Result<()> {
        let access = Access::Put { blocks };
        self.begin(
            Operation {
                target,
                access,
                data,
            },
            false,
        )
        .map(drop)
    }

    /// Reads `blocks` of `target`'s part, in order (`MPI_Get`); returns when they are here.
    ///
    /// # Errors
    /// As [`Window::get`].
    pub fn get(&self, target: Rank, blocks: Vec<Block>) -> Result<Vec<u8>> {
        let access = Access::Get { blocks };
        let data = Vec::new();
        self.begin_and_take(Operation {
            target,
            access,
            data,
        })
    }

    /// Combines `data` into `blocks` of `target`'s part with the accumulate `code` its
    /// [`Memory`] understands; with `fetch`, waits for and returns the blocks' contents from
    /// before (`MPI_Accumulate`, `MPI_Get_accumulate`, `MPI_Fetch_and_op`).
    ///
    /// # Errors
    /// As [`Window::accumulate`] and [`Window::get_accumulate`].
    pub fn accumulate(
        &self,
        target: Rank,
        blocks: Vec<Block>,
        code: u64,
        data: Vec<u8>,
        fetch: bool,
    ) -> Result<Option<Vec<u8>>> {
        let access = Access::Accumulate {
            blocks,
            code,
            fetch,
        };
        let operation = Operation {
            target,
            access,
            data,
        };
        if fetch {
            self.begin_and_take(operation).map(Some)
        } else {
            self.begin(operation, false).map(|_| None)
        }
    }

    /// Where the bytes at `at` of `target`'s part equal `compare` they become `swap`
    /// (`MPI_Compare_and_swap`); returns the bytes from before.
    ///
    /// # Errors
    /// As [`Window::compare_and_swap`]; `Error::Count` for `compare` and `swap` of different
    /// lengths.
    pub fn compare_and_swap(
        &self,
        target: Rank,
        at: u64,
        compare: &[u8],
        swap: &[u8],
    ) -> Result<Vec<u8>> {
        if compare.len() != swap.len() {
            return Err(Error::Count {
                reason: "compare and swap values of different lengths".into(),
            });
        }
        let mut data = compare.to_vec();
        data.extend_from_slice(swap);
        let access = Access::CompareAndSwap { at };
        self.begin_and_take(Operation {
            target,
            access,
            data,
        })
    }

    /// Waits until this rank's operations to `target` (every target, for `None`) are complete
    /// at their targets; returns the first error one of them ended with.
    fn wait_flushed(&self, target: Option<Rank>) -> Result<()> {
        let context = self.comm.context;
        self.comm.process.enter()?;
        self.comm
            .process
            .wait_for(|engine| engine.rma_flushed(context, target))
    }

    /// Completes this rank's operations to `target` at the target (`MPI_Win_flush`), inside a
    /// lock epoch.
    ///
    /// # Errors
    /// `ProcFailed` if the target failed before all of them were applied (those that were
    /// stay applied); `Error::RmaRange` for one it refused; `Revoked`.
    pub fn flush(&self, target: Rank) -> Result<()> {
        self.size_of(target)?;
        self.wait_flushed(Some(target))
    }

    /// [`RawWindow::flush`] for every target (`MPI_Win_flush_all`).
    ///
    /// # Errors
    /// As [`RawWindow::flush`], for the first target with an error.
    pub fn flush_all(&self) -> Result<()> {
        self.wait_flushed(None)
    }

    /// Ends an epoch and opens the next, for every rank (`MPI_Win_fence`): collective. When it
    /// returns, every operation any rank started before it is complete at its target.
    ///
    /// # Errors
    /// `ProcFailed` for an operation of this rank whose target failed, or a member that failed
    /// and G does not recognize (the barrier's rule: no survivor stays blocked); `Revoked`;
    /// `Error::RmaSync` inside a start or post epoch.
    pub fn fence(&self) -> Result<()> {
        // The barrier runs even when an operation failed: the other ranks are in it.
        let flushed = self.wait_flushed(None);
        let barrier = self.comm.barrier();
        flushed?;
        barrier?;
        self.comm
            .process
            .endpoint
            .lock()
            .rma_fenced(self.comm.context)
    }

    /// Takes `target`'s lock, exclusive or shared (`MPI_Win_lock`): returns once granted.
    /// Locks are granted in the order they reach the target; a lock held by a rank that fails
    /// is released.
    ///
    /// # Errors
    /// `ProcFailed` if the target fails first; `Error::RmaSync` if this rank holds its lock
    /// already; `Error::Rank`; `Revoked`.
    pub fn lock(&self, target: Rank, exclusive: bool) -> Result<()> {
        let process = &self.comm.process;
        let context = self.comm.context;
        process.enter()?;
        let mut out = outgoing();
        process
            .endpoint
            .lock()
            .rma_lock(context, target, exclusive, &mut out)?;
        process.send_all(out);
        process.wait_for(|engine| engine.rma_locked(context, target))
    }

    /// Completes this rank's operations to `target` and releases its lock there
    /// (`MPI_Win_unlock`).
    ///
    /// # Errors
    /// As [`RawWindow::flush`] (the lock is released all the same); `Error::RmaSync` without the
    /// lock.
    pub fn unlock(&self, target: Rank) -> Result<()> {
        self.size_of(target)?;
        let flushed = self.wait_flushed(Some(target));
        let process = &self.comm.process;
        let mut out = outgoing();
        let unlocked = process
            .endpoint
            .lock()
            .rma_unlock(self.comm.context, target, &mut out);
        process.send_all(out);
        unlocked.and(flushed)
    }

    /// Takes a shared lock at every rank (`MPI_Win_lock_all`).
    ///
    /// # Errors
    /// As [`RawWindow::lock`]; on an error the locks taken are released.
    pub fn lock_all(&self) -> Result<()> {
        for target in 0..self.comm.size() {
            if let Err(e) = self.lock(target, false) {
                for taken in 0..target {
                    let _ = self.unlock(taken);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Releases every lock [`RawWindow::lock_all`] took, completing this rank's operations first
    /// (`MPI_Win_unlock_all`).
    ///
    /// # Errors
    /// The first error of the unlocks (every lock is released all the same).
    pub fn unlock_all(&self) -> Result<()> {
        let mut first = Ok(());
        for target in 0..self.comm.size() {
            let outcome = self.unlock(target);
            if first.is_ok() {
                first = outcome;
            }
        }
        first
    }

    /// Exposes this rank's array to the ranks of `group` (`MPI_Win_post`): each may
    /// [`RawWindow::start`] an epoch to it; [`RawWindow::wait`] ends the exposure.
    ///
    /// # Errors
    /// `Error::RmaSync` if an exposure is open; `Error::Rank` / `Error::Argument` for a bad
    /// group; `Revoked`.
    pub fn post(&self, group: &[Rank]) -> Result<()> {
        let process = &self.comm.process;
        process.enter()?;
        let mut out = outgoing();
        process
            .endpoint
            .lock()
            .rma_post(self.comm.context, group, &mut out)?;
        process.send_all(out);
        Ok(())
    }

    /// Opens an access epoch to the ranks of `group` once each has posted (`MPI_Win_start`).
    ///
    /// # Errors
    /// `ProcFailed` for a rank of `group` that failed before posting; `Error::RmaSync` if an
    /// access epoch is open; `Revoked`.
    pub fn start(&self, group: &[Rank]) -> Result<()> {
        let context = self.comm.context;
        self.comm.process.enter()?;
        self.comm
            .process
            .wait_for(|engine| engine.rma_start_epoch(context, group))
    }

    /// Completes this rank's operations of the access epoch at their targets and ends it
    /// (`MPI_Win_complete`).
    ///
    /// # Errors
    /// As [`RawWindow::flush_all`] (the epoch ends all the same); `Error::RmaSync` without a
    /// start.
    pub fn complete(&self) -> Result<()> {
        let flushed = self.wait_flushed(None);
        let process = &self.comm.process;
        let mut out = outgoing();
        let completed = process
            .endpoint
            .lock()
            .rma_complete(self.comm.context, &mut out);
        process.send_all(out);
        completed.and(flushed)
    }

    /// Waits until every rank the exposure named has completed its epoch, and ends the
    /// exposure (`MPI_Win_wait`): their operations are then in this rank's array.
    ///
    /// # Errors
    /// `ProcFailed` for a rank that failed before completing (the exposure ends);
    /// `Error::RmaSync` without a post; `Revoked`.
    pub fn wait(&self) -> Result<()> {
        let context = self.comm.context;
        self.comm.process.enter()?;
        self.comm
            .process
            .wait_for(|engine| engine.rma_wait_epoch(context))
    }

    /// [`RawWindow::wait`] without waiting (`MPI_Win_test`): `Ok(false)` while some rank has not
    /// completed.
    ///
    /// # Errors
    /// As [`RawWindow::wait`].
    pub fn test(&self) -> Result<bool> {
        self.comm.process.enter()?;
        self.comm.process.progress();
        let outcome = self
            .comm
            .process
            .endpoint
            .lock()
            .rma_wait_epoch(self.comm.context);
        outcome.map_or(Ok(false), |o| o.map(|()| true))
    }

    /// Revokes the window at every member (`MPIX_Win_revoke`): every pending and later
    /// operation and synchronization on it returns `Error::Revoked`, at every rank. Not
    /// collective. A new window over [`Comm::shrink`]'s communicator carries on.
    ///
    /// # Errors
    /// `Error::Comm` on a freed window.
    pub fn revoke(&self) -> Result<()> {
        self.comm.revoke()
    }

    /// The ranks of the window's group this rank knows failed, in the order it learned of
    /// them (`MPIX_Win_get_failed`). Local; acknowledges nothing (the window's communicator's
    /// [`Comm::validate_local`] does).
    ///
    /// # Errors
    /// `Error::Comm` on a freed window.
    pub fn failed(&self) -> Result<Vec<Rank>> {
        self.comm
            .process
            .endpoint
            .lock()
            .detected_failures(self.comm.context)
    }

    /// Ends the window at every rank (`MPI_Win_free`): collective; completes this rank's
    /// operations first.
    ///
    /// # Errors
    /// `Error::RmaSync` while this rank holds a lock or has an epoch open (the window is then
    /// released here only, as when dropped); the fence's errors (the window is freed all the
    /// same).
    pub fn free(self) -> Result<()> {
        let context = self.comm.context;
        if self.comm.process.endpoint.lock().rma_busy(context) {
            return Err(Error::RmaSync {
                reason: "the window is freed while this rank holds a lock or an epoch".into(),
            });
        }
        let flushed = self.wait_flushed(None);
        let barrier = self.comm.barrier();
        flushed.and(barrier)
    }
}

impl Drop for RawWindow {
    /// Releases the window here (its communicator is freed with it); other ranks' operations
    /// on this rank's part are refused from then on.
    fn drop(&mut self) {
        let _ = self
            .comm
            .process
            .endpoint
            .lock()
            .window_free(self.comm.context);
    }
}

/// An array of `T` at every rank of a communicator, open to the others' one-sided operations
/// (`MPI_Win`; semantics §3.6). Made by [`Comm::window_allocate`] or [`Comm::window_create`],
/// collectively; ended by [`Window::free`], collectively (dropping it releases it here only).
///
/// Operations ([`Window::put`], [`Window::get`], [`Window::accumulate`], ...) are allowed in
/// an access epoch: between fences ([`RawWindow::fence`]), while this rank holds the target's lock
/// ([`RawWindow::lock`], [`RawWindow::lock_all`]), or between [`RawWindow::start`] and
/// [`RawWindow::complete`] naming the target. Elsewhere they return `Error::RmaSync`. A put or an
/// accumulate is complete at its target once the call that ends its epoch (or
/// [`RawWindow::flush`]) returns; a get, a get-accumulate, a fetch-and-op and a compare-and-swap
/// return their data when they return. The synchronization calls are [`RawWindow`]'s, reached
/// through `Deref`.
pub struct Window<T> {
    raw: RawWindow,
    memory: Arc<Mutex<Vec<T>>>,
}

impl<T> fmt::Debug for Window<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<T> std::ops::Deref for Window<T> {
    type Target = RawWindow;

    fn deref(&self) -> &RawWindow {
        &self.raw
    }
}

impl Comm {
    /// A window over an array of `len` zeroed elements at this rank (`MPI_Win_allocate`).
    /// Collective: every rank calls it, each with its own length (zero allowed).
    ///
    /// # Errors
    /// As [`Comm::raw_window`].
    pub fn window_allocate<T: Reducible + Send>(&self, len: usize) -> Result<Window<T>> {
        self.window_create(vec![T::zeroed(); len])
    }

    /// A window over `data` at this rank (`MPI_Win_create`, with the window owning the array:
    /// [`Window::local`] reads it, [`Window::free`] gives it back). Collective.
    ///
    /// # Errors
    /// As [`Comm::raw_window`].
    pub fn window_create<T: Reducible + Send>(&self, data: Vec<T>) -> Result<Window<T>> {
        let memory = Arc::new(Mutex::new(data));
        let unit = std::mem::size_of::<T>() as u64;
        let raw = self.raw_window(Box::new(Local(Arc::clone(&memory))), unit)?;
        Ok(Window { raw, memory })
    }
}

impl<T: Reducible + Send> Window<T> {
    /// The length of `rank`'s array, in elements.
    ///
    /// # Errors
    /// `Error::Rank` outside the window's group.
    pub fn len_of(&self, rank: Rank) -> Result<usize> {
        Ok((self.raw.size_of(rank)? / std::mem::size_of::<T>() as u64) as usize)
    }

    /// A copy of this rank's array.
    pub fn local(&self) -> Vec<T> {
        lock(&self.memory).clone()
    }

    /// Runs `f` on this rank's array, with operations arriving from other ranks held back
    /// meanwhile. `f` must not call the library (the operations wait for it, and it would wait
    /// for them).
    pub fn update_local<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        f(&mut lock(&self.memory))
    }

    /// The block of `count` elements at element `offset` (of any rank's array).
    fn block(offset: usize, count: usize) -> Result<Vec<Block>> {
        let size = std::mem::size_of::<T>() as u64;
        let range = || Error::RmaRange {
            reason: format!("elements {offset}.. (count {count}) do not fit a window"),
        };
        let at = (offset as u64).checked_mul(size).ok_or_else(range)?;
        let len = (count as u64).checked_mul(size).ok_or_else(range)?;
        Ok(vec![Block { at, len }])
    }

    /// Writes `data` to `target`'s array from element `offset` (`MPI_Put`). Complete at the
    /// target when the epoch's end or a flush returns.
    ///
    /// # Errors
    /// `Error::RmaRange` past the end of the target's array; `Error::RmaSync` outside an access
    /// epoch to it; `Error::Rank`; `Error::Revoked`. A failed target is reported by the call
    /// that completes the operation (`ProcFailed`).
    pub fn put(&self, data: &[T], target: Rank, offset: usize) -> Result<()> {
        let blocks = Self::block(offset, data.len())?;
        self.raw
            .put(target, blocks, bytemuck::cast_slice(data).to_vec())
    }

    /// Reads `count` elements of `target`'s array from element `offset` (`MPI_Get`); returns
    /// when they are here.
    ///
    /// # Errors
    /// As [`Window::put`], and `ProcFailed` if the target fails first.
    pub fn get(&self, target: Rank, offset: usize, count: usize) -> Result<Vec<T>> {
        let bytes = self.raw.get(target, Self::block(offset, count)?)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Combines `data` into `target`'s array from element `offset`: `target[i] = data[i] op
    /// target[i]` (`MPI_Accumulate`). Accumulates on one target are atomic with respect to
    /// each other, element by element and as a whole.
    ///
    /// # Errors
    /// As [`Window::put`]; `Error::RmaRange` (from the completing call) for an operation not
    /// defined on `T`.
    pub fn accumulate(
        &self,
        data: &[T],
        target: Rank,
        offset: usize,
        op: impl Into<RmaOp>,
    ) -> Result<()> {
        let blocks = Self::block(offset, data.len())?;
        let bytes = bytemuck::cast_slice(data).to_vec();
        self.raw
            .accumulate(target, blocks, op.into().code(), bytes, false)
            .map(drop)
    }

    /// [`Window::accumulate`] that also returns the elements from before, atomically
    /// (`MPI_Get_accumulate`; with [`RmaOp::NoOp`], an atomic read).
    ///
    /// # Errors
    /// As [`Window::get`]; `Error::RmaRange` for an operation not defined on `T`.
    pub fn get_accumulate(
        &self,
        data: &[T],
        target: Rank,
        offset: usize,
        op: impl Into<RmaOp>,
    ) -> Result<Vec<T>> {
        let blocks = Self::block(offset, data.len())?;
        let bytes = bytemuck::cast_slice(data).to_vec();
        let old = self
            .raw
            .accumulate(target, blocks, op.into().code(), bytes, true)?
            .unwrap_or_default();
        Ok(bytemuck::pod_collect_to_vec(&old))
    }

    /// One element's [`Window::get_accumulate`] (`MPI_Fetch_and_op`).
    ///
    /// # Errors
    /// As [`Window::get_accumulate`].
    pub fn fetch_and_op(
        &self,
        value: T,
        target: Rank,
        offset: usize,
        op: impl Into<RmaOp>,
    ) -> Result<T> {
        let old = self.get_accumulate(&[value], target, offset, op)?;
        old.first().copied().ok_or_else(|| Error::Internal {
            reason: "a fetch-and-op reply without its element".into(),
        })
    }

    /// Where `target`'s element `offset` equals `compare` it becomes `swap`, atomically
    /// (`MPI_Compare_and_swap`); returns the element from before.
    ///
    /// # Errors
    /// As [`Window::get`].
    pub fn compare_and_swap(&self, compare: T, swap: T, target: Rank, offset: usize) -> Result<T> {
        let at = Self::block(offset, 1)?[0].at;
        let old = self.raw.compare_and_swap(
            target,
            at,
            bytemuck::bytes_of(&compare),
            bytemuck::bytes_of(&swap),
        )?;
        bytemuck::try_pod_read_unaligned(&old).map_err(|_| Error::Internal {
            reason: "a compare-and-swap reply of the wrong length".into(),
        })
    }

    /// Ends the window at every rank (`MPI_Win_free`): collective; completes this rank's
    /// operations first; returns this rank's array.
    ///
    /// # Errors
    /// As [`RawWindow::free`].
    pub fn free(self) -> Result<Vec<T>> {
        let Window { raw, memory } = self;
        raw.free()?;
        let data = std::mem::take(&mut *lock(&memory));
        Ok(data)
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Reduce and all-reduce (`MPI_Reduce`, `MPI_Allreduce`, MPI-4.0 §6.9), with predefined
//! operations ([`Op`]) and user closures ([`UserOp`]).
//!
//! Each is its non-blocking form's schedule, waited for at once (`CollectiveRequest::finish`):
//! the algorithms are the engine's (`runthrough_core::engine::Schedule::reduce`,
//! `Schedule::all_reduce`). A binomial tree for reduce (rooted at the root for a commutative
//! operation; for a non-commutative one, at the first participant, so that every subtree is a
//! range of ranks in order, with one more hop to the root); recursive doubling for all-reduce,
//! and the ring (a reduce-scatter, then an all-gather) for a commutative one of at least
//! [`RING_MIN_BYTES`] per rank. A user operation's steps run on the calling thread, outside the
//! engine: the schedule hands each combining step to the thread that waits for it.

use bytemuck::Pod;
use runthrough_core::fault::Collective;
use runthrough_core::{Rank, Result};

#[cfg(doc)]
use runthrough_core::engine::RING_MIN_BYTES;

use super::nonblocking::Call;
use super::{check_element, Op, PackedOp, Reducible, UserOp};
use crate::comm::Comm;

impl Comm {
    /// Combines every participant's `send` with `op`, elementwise, into `recv` at `root`
    /// (`MPI_Reduce`, MPI-4.0 §6.9.1; semantics §3.3). `recv` is required at the root and ignored
    /// elsewhere. A rank recognized as failed (NULL in G) contributes nothing.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::RootFailed` when G recognizes `root` as failed; `Error::Root` when it is out of
    ///   range.
    /// - `Error::Argument` when `op` is not defined on `T` (bitwise operations on floats), or
    ///   `recv` is `None` at the root.
    /// - `Error::Count` when the root's `recv` is not as long as `send`, or ranks passed
    ///   different counts.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn reduce<T: Reducible>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: Op,
        root: Rank,
    ) -> Result<()> {
        self.reduce_call(
            bytemuck::cast_slice(send),
            recv.map(|recv| bytemuck::cast_slice_mut(recv)),
            PackedOp::predefined::<T>(op)?,
            root,
            Call::new(Collective::Reduce, true),
            None,
        )?
        .finish()
    }

    /// [`Comm::reduce`] with a user operation (`MPI_Reduce` with an `MPI_Op_create` operation,
    /// MPI-4.0 §6.9.5); a non-commutative `op` is applied in rank order.
    ///
    /// # Errors
    /// Those of [`Comm::reduce`] (no `Argument` for the operation).
    pub fn reduce_with<T: Pod>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: &UserOp<'_, T>,
        root: Rank,
    ) -> Result<()> {
        self.reduce_combining(send, recv, op, root)
    }

    /// Combines every participant's `send` with `op`, elementwise, into every participant's
    /// `recv` (`MPI_Allreduce`, MPI-4.0 §6.9.6; semantics §3.3). A rank recognized as failed (NULL
    /// in G) contributes nothing. Every rank gets the same value, floats included.
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Argument` when `op` is not defined on `T` (bitwise operations on floats).
    /// - `Error::Count` when `recv` is not as long as `send`, or ranks passed different counts.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    ///
    /// After an error other than `Argument` and `Count`, `recv` may hold a partial result (as
    /// MPI leaves it undefined): a large all-reduce works in `recv` itself.
    pub fn all_reduce<T: Reducible>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.all_reduce_call(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            PackedOp::predefined::<T>(op)?,
            Call::new(Collective::AllReduce, true),
            None,
        )?
        .finish()
    }

    /// [`Comm::all_reduce`] with a user operation (MPI-4.0 §6.9.5, §6.9.6); a non-commutative
    /// `op` is applied in rank order.
    ///
    /// # Errors
    /// Those of [`Comm::all_reduce`] (no `Argument` for the operation).
    pub fn all_reduce_with<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &UserOp<'_, T>,
    ) -> Result<()> {
        self.all_reduce_combining(send, recv, op)
    }

    /// [`Comm::reduce`] over the bytes of packed elements with operation `op`, at any
    /// alignment: the C library's blocking reductions whose operation it also hands to the
    /// non-blocking ones ([`Comm::ireduce_packed`]: pair types, user operations), so both
    /// run one operation. `Error::Count` also when a buffer is not a whole number of
    /// elements.
    #[doc(hidden)]
    pub fn reduce_packed(
        &self,
        send: &[u8],
        recv: Option<&mut [u8]>,
        op: PackedOp,
        root: Rank,
    ) -> Result<()> {
        let request = self.reduce_call(
            send,
            recv,
            op,
            root,
            Call::new(Collective::Reduce, true),
            None,
        )?;
        request.finish()
    }

    /// [`Comm::all_reduce`] over packed elements with operation `op`, as
    /// [`Comm::reduce_packed`] (its non-blocking form: [`Comm::iall_reduce_packed`]).
    #[doc(hidden)]
    pub fn all_reduce_packed(&self, send: &[u8], recv: &mut [u8], op: PackedOp) -> Result<()> {
        let request =
            self.all_reduce_call(send, recv, op, Call::new(Collective::AllReduce, true), None)?;
        request.finish()
    }

    /// A reduce with a user operation: its steps combine on this thread.
    fn reduce_combining<T: Pod>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: &UserOp<'_, T>,
        root: Rank,
    ) -> Result<()> {
        check_element::<T>()?;
        let (packed, caller) = op.by_caller();
        self.reduce_call(
            bytemuck::cast_slice(send),
            recv.map(|recv| bytemuck::cast_slice_mut(recv)),
            packed,
            root,
            Call::new(Collective::Reduce, true),
            Some(caller),
        )?
        .finish()
    }

    /// An all-reduce with a user operation: its steps combine on this thread.
    fn all_reduce_combining<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &UserOp<'_, T>,
    ) -> Result<()> {
        check_element::<T>()?;
        let (packed, caller) = op.by_caller();
        self.all_reduce_call(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            packed,
            Call::new(Collective::AllReduce, true),
            Some(caller),
        )?
        .finish()
    }
}

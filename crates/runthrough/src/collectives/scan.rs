// SPDX-License-Identifier: MIT OR Apache-2.0
//! Inclusive and exclusive prefix reductions (`MPI_Scan`, `MPI_Exscan`, MPI-4.0 §6.11).
//!
//! Each is its non-blocking form's schedule, waited for at once: recursive doubling over the
//! participants (the OK ranks of G), ⌈log₂ n⌉ exchanges (`runthrough_core::engine::Schedule::
//! scan`), a non-commutative operation applied in rank order. Ranks recognized as failed (NULL
//! in G) contribute nothing: a prefix runs over the participants up to this rank. A user
//! operation's steps run on the calling thread.

use bytemuck::Pod;
use runthrough_core::Result;

use super::nonblocking::CallerCombine;
use super::{check_element, Op, PackedOp, Reducible, UserOp};
use crate::comm::Comm;

impl Comm {
    /// Writes into `recv` the combination with `op` of `send` over the participants of rank up
    /// to this one, this one included (`MPI_Scan`, MPI-4.0 §6.11.1; semantics §3.3).
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Argument` when `op` is not defined on `T` (bitwise operations on floats).
    /// - `Error::Count` when `recv` is not as long as `send`, or ranks passed different counts.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn scan<T: Reducible>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.prefix(send, recv, PackedOp::predefined::<T>(op)?, false, None)
    }

    /// [`Comm::scan`] with a user operation (MPI-4.0 §6.9.5, §6.11.1); a non-commutative `op`
    /// is applied in rank order.
    ///
    /// # Errors
    /// Those of [`Comm::scan`] (no `Argument` for the operation).
    pub fn scan_with<T: Pod>(&self, send: &[T], recv: &mut [T], op: &UserOp<'_, T>) -> Result<()> {
        self.prefix_with(send, recv, op, false)
    }

    /// Writes into `recv` the combination with `op` of `send` over the participants of rank
    /// below this one (`MPI_Exscan`, MPI-4.0 §6.11.2; semantics §3.3). At the first participant
    /// (no rank below) `recv` is left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::scan`].
    pub fn exscan<T: Reducible>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.prefix(send, recv, PackedOp::predefined::<T>(op)?, true, None)
    }

    /// [`Comm::exscan`] with a user operation (MPI-4.0 §6.9.5, §6.11.2); a non-commutative `op`
    /// is applied in rank order.
    ///
    /// # Errors
    /// Those of [`Comm::scan`] (no `Argument` for the operation).
    pub fn exscan_with<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &UserOp<'_, T>,
    ) -> Result<()> {
        self.prefix_with(send, recv, op, true)
    }

    /// [`Comm::scan`] (`exclusive` false) or [`Comm::exscan`] over the bytes of packed
    /// elements with operation `op`, at any alignment: the C library's blocking scans whose
    /// operation it also hands to the non-blocking ones ([`Comm::iscan_packed`]).
    /// `Error::Count` also when a buffer is not a whole number of elements.
    #[doc(hidden)]
    pub fn scan_packed(
        &self,
        send: &[u8],
        recv: &mut [u8],
        op: PackedOp,
        exclusive: bool,
    ) -> Result<()> {
        self.scan_call(send, recv, op, exclusive, true, None)?
            .finish()
    }

    /// A scan or exscan (`exclusive`) of predefined `op`, or of a user operation's (`caller`
    /// runs its steps on this thread).
    fn prefix<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: PackedOp,
        exclusive: bool,
        caller: Option<CallerCombine<'_>>,
    ) -> Result<()> {
        check_element::<T>()?;
        self.scan_call(
            bytemuck::cast_slice(send),
            bytemuck::cast_slice_mut(recv),
            op,
            exclusive,
            true,
            caller,
        )?
        .finish()
    }

    fn prefix_with<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: &UserOp<'_, T>,
        exclusive: bool,
    ) -> Result<()> {
        check_element::<T>()?;
        let (packed, caller) = op.by_caller();
        self.prefix(send, recv, packed, exclusive, Some(caller))
    }
}

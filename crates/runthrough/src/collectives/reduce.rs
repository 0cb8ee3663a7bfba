// SPDX-License-Identifier: MIT OR Apache-2.0
//! Reduce and all-reduce (`MPI_Reduce`, `MPI_Allreduce`, MPI-4.0 §6.9), with predefined
//! operations ([`Op`]) and user closures ([`UserOp`]).
//!
//! Algorithms, over the participants (the OK ranks of G):
//! - **reduce**: a binomial tree, ⌈log₂ n⌉ levels. Every rank combines its children's partial
//!   results (smallest subtree first) after its own and sends the result to its parent. For a
//!   commutative operation the tree is rooted at the root; for a non-commutative one it is
//!   rooted at the first participant, so that every subtree is a range of ranks in order, and
//!   the first participant sends the result on to the root (one more hop).
//! - **all-reduce**, small messages or non-commutative operations: recursive doubling
//!   (⌈log₂ n⌉ exchanges; a non-power-of-two n first folds the first 2r participants in pairs,
//!   r = n − 2^⌊log₂ n⌋, and unfolds at the end). Every exchange combines the lower ranks'
//!   partial result first, so every rank computes the very same value, floats included.
//! - **all-reduce**, large messages with a commutative operation (at least
//!   [`RING_MIN_BYTES`] and one element per participant): the ring, a reduce-scatter then an
//!   all-gather over n chunks, 2(n − 1) steps each moving 1/n of the data, so every rank sends
//!   about twice the message instead of log₂ n times it.

use bytemuck::Pod;
use runthrough_core::engine::{Doubling, Fold};
use runthrough_core::fault::Collective;
use runthrough_core::{Error, Rank, Result};

use super::op::{builtin, Combine};
use super::virtual_ranks::VirtualRanks;
use super::{check_element, check_len, check_root, elements, root_index, Deferred};
use super::{Op, Reducible, UserOp};
use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

/// From this many bytes per rank (and at least one element per participant), a commutative
/// all-reduce uses the ring instead of recursive doubling.
pub(crate) const RING_MIN_BYTES: usize = 64 * 1024;

impl Comm {
    /// Combines every participant's `send` with `op`, elementwise, into `recv` at `root`
    /// (`MPI_Reduce`, MPI-4.0 §6.9.1; SPEC §3.3). `recv` is required at the root and ignored
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
        let function = builtin::<T>(op)?;
        self.reduce_combining(send, recv, &Combine::predefined(&function), root)
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
        self.reduce_combining(send, recv, &Combine::user(op), root)
    }

    /// Combines every participant's `send` with `op`, elementwise, into every participant's
    /// `recv` (`MPI_Allreduce`, MPI-4.0 §6.9.6; SPEC §3.3). A rank recognized as failed (NULL
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
        let function = builtin::<T>(op)?;
        self.all_reduce_combining(send, recv, &Combine::predefined(&function))
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
        self.all_reduce_combining(send, recv, &Combine::user(op))
    }

    fn reduce_combining<T: Pod>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        combine: &Combine<'_, T>,
        root: Rank,
    ) -> Result<()> {
        check_element::<T>()?;
        check_root(self, root)?;
        let recv = if self.rank() == root {
            let recv = recv.ok_or_else(|| Error::Argument {
                reason: "the root of a reduce needs a receive buffer".into(),
            })?;
            check_len("the reduce receive buffer", recv.len(), send.len())?;
            Some(recv)
        } else {
            None
        };
        self.process
            .enter_collective(Collective::Reduce, self.context);
        let call = CollectiveCall::begin(self)?;
        let outcome = binomial_reduce(&call, send, combine, root).map(|result| {
            if let (Some(result), Some(recv)) = (result, recv) {
                recv.copy_from_slice(&result);
            }
        });
        call.finish(outcome)
    }

    fn all_reduce_combining<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        combine: &Combine<'_, T>,
    ) -> Result<()> {
        check_element::<T>()?;
        check_len("the all_reduce receive buffer", recv.len(), send.len())?;
        self.process
            .enter_collective(Collective::AllReduce, self.context);
        let call = CollectiveCall::begin(self)?;
        let n = call.participants.len();
        let outcome = if combine.commutative
            && std::mem::size_of_val(send) >= RING_MIN_BYTES
            && send.len() >= n
        {
            ring_all_reduce(&call, send, recv, combine)
        } else {
            recursive_doubling(&call, send, combine).map(|result| recv.copy_from_slice(&result))
        };
        call.finish(outcome)
    }
}

/// The binomial-tree reduce; `Some(result)` at the root.
fn binomial_reduce<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    combine: &Combine<'_, T>,
    root: Rank,
) -> Result<Option<Vec<T>>> {
    let root_at = root_index(call, root)?;
    let origin = if combine.commutative { root_at } else { 0 };
    let ranks = VirtualRanks::new(call, origin);
    let mut deferred = Deferred::default();
    let mut partial = send.to_vec();
    for (child, _) in ranks.children().into_iter().rev() {
        let theirs = elements::<T>(&call.recv(ranks.rank(child))?);
        deferred.note(theirs.and_then(|theirs| combine.apply_lower(&mut partial, theirs)));
    }
    let (parent, _) = ranks.binomial();
    if let Some(parent) = parent {
        call.send(ranks.rank(parent), bytemuck::cast_slice(&partial))?;
    }
    let result = if origin == root_at {
        parent.is_none().then_some(partial)
    } else if parent.is_none() {
        // The first participant holds the rank-ordered result; the root is elsewhere.
        call.send(root, bytemuck::cast_slice(&partial))?;
        None
    } else if call.index == root_at {
        Some(elements::<T>(&call.recv(ranks.rank(0))?)?)
    } else {
        None
    };
    deferred.into_result()?;
    Ok(result)
}

/// Recursive-doubling all-reduce; every rank returns the same vector.
fn recursive_doubling<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    combine: &Combine<'_, T>,
) -> Result<Vec<T>> {
    let me = call.index;
    let rank = |i: usize| call.participants[i];
    let plan = Doubling::new(call.participants.len(), me);
    let mut deferred = Deferred::default();
    let mut partial = send.to_vec();
    // Fold: among the first 2·extra participants, each even one hands its data to the next.
    match plan.fold {
        Fold::Give(to) => call.send(rank(to), bytemuck::cast_slice(&partial))?,
        Fold::Take(from) => {
            let lower = elements::<T>(&call.recv(rank(from))?);
            deferred.note(lower.and_then(|lower| combine.apply(&lower, &mut partial)));
        }
        Fold::None => {}
    }
    for partner in plan.partners() {
        call.send(rank(partner), bytemuck::cast_slice(&partial))?;
        let theirs = elements::<T>(&call.recv(rank(partner))?);
        deferred.note(theirs.and_then(|theirs| {
            if partner < me {
                combine.apply(&theirs, &mut partial)
            } else {
                combine.apply_lower(&mut partial, theirs)
            }
        }));
    }
    // Unfold: each odd participant of the first 2·extra hands the result back.
    match plan.fold {
        Fold::Take(to) => call.send(rank(to), bytemuck::cast_slice(&partial))?,
        Fold::Give(from) => match elements::<T>(&call.recv(rank(from))?) {
            Ok(result) if result.len() == partial.len() => partial = result,
            Ok(_) => deferred.note(Err(super::count_error(
                "ranks passed different counts to one all_reduce".into(),
            ))),
            Err(error) => deferred.note(Err(error)),
        },
        Fold::None => {}
    }
    deferred.into_result()?;
    Ok(partial)
}

/// Ring all-reduce (reduce-scatter, then all-gather, over n chunks); commutative operations.
/// Works in `data` (the caller's receive buffer, which it fills with `send` first), and combines
/// each incoming chunk straight from the received payload: the only copies are the one of
/// `send`, the one of each outgoing chunk into its message, and the all-gather's chunks into
/// place. On an error `data` holds a partial result.
fn ring_all_reduce<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    data: &mut [T],
    combine: &Combine<'_, T>,
) -> Result<()> {
    let n = call.participants.len();
    let me = call.index;
    let right = call.participants[(me + 1) % n];
    let left = call.participants[(me + n - 1) % n];
    let count = send.len();
    let chunk = |c: usize| (c * count / n)..((c + 1) * count / n);
    let mut deferred = Deferred::default();
    data.copy_from_slice(send);
    for step in 0..n - 1 {
        call.send(
            right,
            bytemuck::cast_slice(&data[chunk((me + n - step) % n)]),
        )?;
        let incoming = call.recv(left)?;
        let target = &mut data[chunk((me + 2 * n - step - 1) % n)];
        deferred.note(super::with_elements(&incoming, |incoming| {
            combine.apply(incoming, target)
        }));
    }
    // Now chunk me + 1 is complete here; pass the complete chunks around.
    for step in 0..n - 1 {
        call.send(
            right,
            bytemuck::cast_slice(&data[chunk((me + 1 + n - step) % n)]),
        )?;
        let incoming = call.recv(left)?;
        let target = &mut data[chunk((me + n - step) % n)];
        deferred.note(super::copy_into(&incoming, target));
    }
    deferred.into_result()
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Inclusive and exclusive prefix reductions (`MPI_Scan`, `MPI_Exscan`, MPI-4.0 §6.11).
//!
//! Recursive doubling over the participants (the OK ranks of G), ⌈log₂ n⌉ exchanges: in the
//! exchange of distance d, participant i trades its partial result (the combination of the
//! aligned block of 2·d participants it belongs to, so far) with i xor d. A partner below adds
//! to the prefix; the block's partial result is combined lower block first, so non-commutative
//! operations are applied in rank order. Ranks recognized as failed (NULL in G) contribute
//! nothing: a prefix runs over the participants up to this rank.

use bytemuck::Pod;
use runthrough_core::fault::Collective;
use runthrough_core::Result;

use super::op::{builtin, Combine};
use super::{check_element, check_len, elements, Deferred};
use super::{Op, Reducible, UserOp};
use crate::collectives::call::CollectiveCall;
use crate::comm::Comm;

impl Comm {
    /// Writes into `recv` the combination with `op` of `send` over the participants of rank up
    /// to this one, this one included (`MPI_Scan`, MPI-4.0 §6.11.1; SPEC §3.3).
    ///
    /// # Errors
    /// - `Error::ProcFailed` when a participant failed and G does not recognize it (known to this
    ///   rank's detector, or met on the way: none stays blocked).
    /// - `Error::Argument` when `op` is not defined on `T` (bitwise operations on floats).
    /// - `Error::Count` when `recv` is not as long as `send`, or ranks passed different counts.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn scan<T: Reducible>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        let function = builtin::<T>(op)?;
        self.prefix(send, recv, &Combine::predefined(&function), false)
    }

    /// [`Comm::scan`] with a user operation (MPI-4.0 §6.9.5, §6.11.1); a non-commutative `op`
    /// is applied in rank order.
    ///
    /// # Errors
    /// Those of [`Comm::scan`] (no `Argument` for the operation).
    pub fn scan_with<T: Pod>(&self, send: &[T], recv: &mut [T], op: &UserOp<'_, T>) -> Result<()> {
        self.prefix(send, recv, &Combine::user(op), false)
    }

    /// Writes into `recv` the combination with `op` of `send` over the participants of rank
    /// below this one (`MPI_Exscan`, MPI-4.0 §6.11.2; SPEC §3.3). At the first participant
    /// (no rank below) `recv` is left untouched.
    ///
    /// # Errors
    /// Those of [`Comm::scan`].
    pub fn exscan<T: Reducible>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        let function = builtin::<T>(op)?;
        self.prefix(send, recv, &Combine::predefined(&function), true)
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
        self.prefix(send, recv, &Combine::user(op), true)
    }

    fn prefix<T: Pod>(
        &self,
        send: &[T],
        recv: &mut [T],
        combine: &Combine<'_, T>,
        exclusive: bool,
    ) -> Result<()> {
        check_element::<T>()?;
        check_len("the scan receive buffer", recv.len(), send.len())?;
        self.process.enter_collective(
            if exclusive {
                Collective::Exscan
            } else {
                Collective::Scan
            },
            self.context,
        );
        let call = CollectiveCall::begin(self)?;
        let outcome = recursive_doubling(&call, send, combine, exclusive).map(|prefix| {
            if let Some(prefix) = prefix {
                recv.copy_from_slice(&prefix);
            }
        });
        call.finish(outcome)
    }
}

/// The prefix at this rank (`None` for an exclusive scan at the first participant).
fn recursive_doubling<T: Pod>(
    call: &CollectiveCall<'_>,
    send: &[T],
    combine: &Combine<'_, T>,
    exclusive: bool,
) -> Result<Option<Vec<T>>> {
    let n = call.participants.len();
    let me = call.index;
    let mut deferred = Deferred::default();
    // The combination over this rank's aligned block so far, and the prefix so far.
    let mut block = send.to_vec();
    let mut prefix = (!exclusive).then(|| send.to_vec());
    let mut distance = 1;
    while distance < n {
        let partner = me ^ distance;
        if partner < n {
            call.send(call.participants[partner], bytemuck::cast_slice(&block))?;
            let theirs = elements::<T>(&call.recv(call.participants[partner])?);
            deferred.note(theirs.and_then(|theirs| {
                if partner < me {
                    prefix = Some(match prefix.take() {
                        Some(mut prefix) => {
                            combine.apply(&theirs, &mut prefix)?;
                            prefix
                        }
                        None => theirs.clone(),
                    });
                    combine.apply(&theirs, &mut block)
                } else {
                    combine.apply_lower(&mut block, theirs)
                }
            }));
        }
        distance *= 2;
    }
    deferred.into_result()?;
    Ok(prefix)
}

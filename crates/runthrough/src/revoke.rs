// SPDX-License-Identifier: MIT OR Apache-2.0
//! Revocation (semantics §3.5): `revoke` and `is_revoked`. The other ULFM operations are with their
//! kin: `agree` and `iagree` with the agreement (`agreement.rs`), `shrink` with the other
//! communicator creations (`creation.rs`).
//!
//! # Revocation
//! `revoke` marks the communicator revoked here and sends a `Revoke` packet to every other
//! member not known failed; a member marks it at its first receipt and forwards it the same way
//! (to everyone but the rank it came from). So once one live member has it, every live member
//! gets it, however many ranks die during the propagation: reliable flooding, at a cost of
//! n - 1 packets per member, O(n²) for the whole communicator (a tree with repairs would do it
//! in O(n log n); revocations are rare and this is the simplest thing that is robust). Marking
//! completes every pending receive on the communicator, point-to-point and collective, with
//! `Error::Revoked` and drops its buffered traffic; every later non-local call on it except
//! `agree`, `shrink` and `validate_global` returns `Error::Revoked`.
//!
//! ```
//! use runthrough::Error;
//! let outcomes = runthrough::local(4).run(|world| {
//!     if world.rank() == 0 {
//!         world.revoke()?;
//!     }
//!     // Everyone else is blocked here until the revocation arrives.
//!     let mut buf = [0u8];
//!     assert_eq!(world.recv(&mut buf, (world.rank() + 1) % 4, 5), Err(Error::Revoked));
//!     assert!(world.is_revoked());
//!     let survivors = world.shrink()?; // works on a revoked communicator
//!     survivors.barrier()?;
//!     Ok::<_, Error>(survivors.size())
//! });
//! for outcome in outcomes {
//!     assert_eq!(outcome.returned().unwrap(), Ok(4));
//! }
//! ```

use runthrough_core::Result;

use crate::comm::Comm;
use runthrough_core::packet::Outgoing;

impl Comm {
    /// Revokes the communicator at every member (`MPIX_Comm_revoke`, semantics §3.5): every pending
    /// and later non-local operation on it, at every rank, other than `agree`, `shrink` and
    /// `validate_global`, returns `Error::Revoked`; local calls (`validate_local`, the
    /// accessors, `is_revoked`, `free`) keep working. Not collective: it returns at once. The
    /// revocation is propagated reliably even while ranks die (see the module docs). Revoking
    /// a revoked communicator does nothing.
    ///
    /// # Errors
    /// `Error::Comm` on a freed communicator.
    pub fn revoke(&self) -> Result<()> {
        self.process.enter()?;
        let mut out = Outgoing::new();
        {
            let mut engine = self.process.endpoint.lock();
            engine.check_held(self.context)?;
            engine.revoke(self.context, None, &mut out);
        }
        self.process.endpoint.signal.notify();
        self.process.send_all(out);
        Ok(())
    }

    /// Whether the communicator has been revoked, as far as this rank knows
    /// (`MPIX_Comm_is_revoked`). Local.
    pub fn is_revoked(&self) -> bool {
        self.process.endpoint.lock().is_revoked(self.context)
    }
}

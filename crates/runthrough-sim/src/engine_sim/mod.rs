// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine simulator: n [`runthrough_core::engine::Engine`]s, one per rank, driven in one
//! thread over a seeded network, with random programs and crashes, checked after every step.
//!
//! - [`network`]: packets in flight per ordered pair, FIFO per pair; the seed picks which pair
//!   delivers next.
//! - [`program`]: a plan of rounds drawn from the seed (point-to-point messages under a small
//!   unexpected-bytes cap, all-reduces over the collective commands, `validate_local`, and a
//!   revocation as the last round of some schedules), deadlock-free by construction, and each
//!   rank's program as a resumable state machine over the engine's commands.
//! - [`checks`]: a ledger of every message and detector report, against which each outcome is
//!   checked: exactly-once and non-overtaking delivery, nothing lost from a live sender, the
//!   failure outcomes of SPEC §3.1–3.2 (`ProcFailed` only for a failed sender whose matching
//!   messages are not buffered, `ProcFailedPending` only for wildcards while a failure is
//!   unacknowledged), all-reduce results, flow control's held bytes against what is buffered
//!   and each sender's window, and the revocation reaching every survivor.
//! - [`run`]: one schedule (the seed picks the rank count, the plan, the interleaving of
//!   deliveries and rank steps, the crashes and each survivor's detection delay); liveness:
//!   once the network is drained and every crash was reported everywhere, every survivor's
//!   program must have finished. Same seed, same trace (and trace hash).
//!
//! The drivers use the engine's commands only (as the runtime's threads do), never its fields.

pub mod checks;
pub mod network;
pub mod program;
pub mod run;

pub use run::{
    explore_engine, replay_command, run_schedule, EngineOutcome, EngineTotals, EngineViolation,
    Faults,
};

/// The range of rank counts the engine simulator explores by default.
pub const ENGINE_RANKS: (u32, u32) = (2, 12);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule_seed;

    fn check(seed: u64, ranks: (u32, u32)) -> EngineOutcome {
        match run_schedule(seed, ranks, false, Faults::default()) {
            Ok(outcome) => outcome,
            Err((violation, _)) => panic!("{violation}\nreplay: {}", violation.replay()),
        }
    }

    /// A few hundred fixed seeds pass, and between them they exercise what the checks are
    /// about: credit waits, crashes, failed receives, revocations.
    #[test]
    fn fixed_seeds_pass() {
        let mut totals = EngineTotals::default();
        for index in 0..300 {
            let outcome = check(schedule_seed(11, index), ENGINE_RANKS);
            totals.crashes += outcome.crashes;
            totals.delayed_sends += outcome.delayed_sends;
            totals.failed_receives += outcome.failed_receives;
            totals.revocations += u64::from(outcome.revoked);
            totals.receipts += outcome.receipts;
        }
        assert!(totals.crashes > 50, "{totals:?}");
        assert!(totals.delayed_sends > 100, "{totals:?}");
        assert!(totals.failed_receives > 0, "{totals:?}");
        assert!(totals.revocations > 10, "{totals:?}");
        assert!(totals.receipts > 1000, "{totals:?}");
    }

    /// Two ranks, and the largest default count, pass too.
    #[test]
    fn extreme_rank_counts_pass() {
        for index in 0..40 {
            check(schedule_seed(5, index), (2, 2));
            check(schedule_seed(6, index), (12, 12));
        }
    }

    /// The same seed gives the same trace, hash included; other seeds give other traces.
    #[test]
    fn same_seed_same_trace() {
        for index in 0..20 {
            let seed = schedule_seed(3, index);
            let a = run_schedule(seed, ENGINE_RANKS, true, Faults::default()).expect("passes");
            let b = run_schedule(seed, ENGINE_RANKS, true, Faults::default()).expect("passes");
            let c = run_schedule(seed, ENGINE_RANKS, false, Faults::default()).expect("passes");
            assert!(!a.trace.is_empty());
            assert_eq!(a, b);
            assert_eq!(
                a.trace_hash, c.trace_hash,
                "the text does not change the run"
            );
        }
        let a = check(schedule_seed(3, 0), ENGINE_RANKS);
        let b = check(schedule_seed(3, 1), ENGINE_RANKS);
        assert_ne!(a.trace_hash, b.trace_hash);
    }

    /// A network that loses one data packet is caught: in schedules where nobody crashes and
    /// nothing is revoked, the lost message's receiver waits forever, which the liveness check
    /// reports.
    #[test]
    fn a_lost_packet_is_caught() {
        let mut caught = 0;
        for index in 0.. {
            let seed = schedule_seed(21, index);
            let clean = check(seed, ENGINE_RANKS);
            if clean.crashes > 0 || clean.revoked || clean.receipts == 0 {
                continue;
            }
            let faults = Faults {
                drop_data_at: Some(index % clean.receipts),
            };
            let (violation, _) = run_schedule(seed, ENGINE_RANKS, false, faults)
                .expect_err("a lost message must be caught");
            assert!(violation.what.contains("liveness"), "{violation}");
            assert!(violation.replay().contains("engine-replay"));
            caught += 1;
            if caught == 10 {
                break;
            }
        }
    }
}

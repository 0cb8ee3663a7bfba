// SPDX-License-Identifier: MIT OR Apache-2.0
//! The engine simulator: n [`runthrough_core::engine::Engine`]s, one per rank, driven in one
//! thread over a seeded network, with random programs and crashes, checked after every step.
//!
//! - [`network`]: packets in flight per ordered pair, FIFO per pair; the seed picks which pair
//!   delivers next.
//! - [`program`]: a plan of rounds drawn from the seed (point-to-point messages under a small
//!   unexpected-bytes cap, all-reduces over the collective commands, `validate_local`,
//!   `validate_global`, `agree`, `iagree`s started back to back and waited for in a random
//!   order, two `dup`s of the world started back to back (as `idup` twice: the second
//!   waits for the first's end, and odd ranks ask for the second first) by the creation
//!   protocol (candidate context, the creation series' agreement, verdict, install, then
//!   free), `shrink` (candidate context, an
//!   agreement, the survivors' communicator, then free), and a revocation as the last round of
//!   some schedules), deadlock-free by
//!   construction, and each
//!   rank's program as a resumable state machine over the engine's commands.
//! - [`checks`]: a ledger of every message and detector report, against which each outcome is
//!   checked: exactly-once and non-overtaking delivery, nothing lost from a live sender, the
//!   failure outcomes of semantics §3.1–3.2 (`ProcFailed` only for a failed sender whose matching
//!   messages are not buffered, `ProcFailedPending` only for wildcards while a failure is
//!   unacknowledged), all-reduce results, flow control's held bytes against what is buffered
//!   and each sender's window, the revocation reaching every survivor, and uniform agreement
//!   (semantics §2.1, §3.5): the same decision at every rank per agreement number, its failures
//!   crashed and including every failure a contributor knew when it entered, its flag the AND
//!   over the contributors, the same G after `validate_global`, and the all-reduces after it
//!   over the OK ranks of G; every rank that returns from each `dup` gets the same communicator
//!   (numbered as the world) or the same error, and from a `shrink` the same context and
//!   members, only crashed ranks left out; a non-blocking barrier returns `Ok` at a rank only
//!   once every participant has started it (semantics §3.3), with or without hosts.
//! - [`run`]: one schedule (the seed picks the rank count, the plan, the interleaving of
//!   deliveries and rank steps, the crashes and each survivor's detection delay); liveness:
//!   once the network is drained and every crash was reported everywhere, every survivor's
//!   program must have finished. Same seed, same trace (and trace hash).
//!
//! The drivers use the engine's commands only (as the runtime's threads do), never its fields.

pub mod checks;
pub mod detection;
pub mod network;
pub mod program;
pub mod run;

pub use run::{
    explore_engine, replay_command, run_schedule, EngineOutcome, EngineTotals, EngineViolation,
    Options,
};

/// The range of rank counts the engine simulator explores by default.
pub const ENGINE_RANKS: (u32, u32) = (2, 12);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule_seed;

    fn check(seed: u64, ranks: (u32, u32)) -> EngineOutcome {
        match run_schedule(seed, ranks, false, Options::default()) {
            Ok(outcome) => outcome,
            Err((violation, _)) => panic!("{violation}\nreplay: {}", violation.replay()),
        }
    }

    /// A few hundred fixed seeds pass, and between them they exercise what the checks are
    /// about: credit waits, crashes, failed receives, revocations, non-blocking collectives.
    #[test]
    fn fixed_seeds_pass() {
        let mut totals = EngineTotals::default();
        for index in 0..400 {
            let outcome = check(schedule_seed(11, index), ENGINE_RANKS);
            totals.crashes += outcome.crashes;
            totals.delayed_sends += outcome.delayed_sends;
            totals.failed_receives += outcome.failed_receives;
            totals.revocations += u64::from(outcome.revoked);
            totals.receipts += outcome.receipts;
            totals.decisions += outcome.decisions;
            totals.dups.0 += outcome.dups.0;
            totals.dups.1 += outcome.dups.1;
            totals.splits.0 += outcome.splits.0;
            totals.splits.1 += outcome.splits.1;
            totals.shrinks += outcome.shrinks;
            totals.barriers += outcome.barriers;
        }
        assert!(totals.crashes > 50, "{totals:?}");
        assert!(totals.barriers > 100, "{totals:?}");
        assert!(totals.dups.0 > 100 && totals.dups.1 > 0, "{totals:?}");
        assert!(totals.splits.0 > 100 && totals.splits.1 > 0, "{totals:?}");
        assert!(totals.shrinks > 100, "{totals:?}");
        assert!(totals.delayed_sends > 100, "{totals:?}");
        assert!(totals.failed_receives > 0, "{totals:?}");
        assert!(totals.revocations > 10, "{totals:?}");
        assert!(totals.receipts > 1000, "{totals:?}");
        assert!(totals.decisions > 1000, "{totals:?}");
    }

    /// Seeds that caught the non-blocking collectives' schedules once: a failed call whose
    /// sends still waited for credit that its receiver would never give (they are withdrawn
    /// now), and a current step waiting for a message queued behind later ones that held the
    /// window (the collective lane lends now).
    #[test]
    fn non_blocking_collective_regression_seeds() {
        for seed in [12_807_144_164_152_458_454, 1_278_491_736_866_658_854] {
            check(seed, ENGINE_RANKS);
        }
    }

    /// With every failure decided by the ranks' own detectors (`--detector`): fixed seeds
    /// pass, hung ranks are found by silence and decided by a majority, some ranks halt, and a
    /// seed replays to the same trace.
    #[test]
    fn detector_decided_failures_pass() {
        let options = Options {
            detector: true,
            ..Options::default()
        };
        let mut detector = (0, 0, 0);
        for index in 0..400 {
            let seed = schedule_seed(41, index);
            match run_schedule(seed, ENGINE_RANKS, false, options) {
                Ok(outcome) => {
                    detector.0 += outcome.detector.0;
                    detector.1 += outcome.detector.1;
                    detector.2 += outcome.detector.2;
                }
                Err((violation, _)) => panic!("{violation}\nreplay: {}", violation.replay()),
            }
        }
        assert!(
            detector.0 > 50 && detector.1 > 100 && detector.2 > 0,
            "{detector:?}"
        );
        let seed = schedule_seed(41, 3);
        let a = run_schedule(seed, ENGINE_RANKS, true, options).unwrap();
        let b = run_schedule(seed, ENGINE_RANKS, true, options).unwrap();
        assert_eq!(a.trace, b.trace);
    }

    /// With false suspicions (a live rank reported failed keeps running until its fence),
    /// fixed seeds pass, and some suspected ranks learn from an agreement that they were
    /// declared failed and halt before their fence.
    #[test]
    fn false_suspicions_pass() {
        let options = Options {
            suspicions: true,
            ..Options::default()
        };
        let (mut suspicions, mut halted) = (0, 0);
        for index in 0..300 {
            let seed = schedule_seed(31, index);
            match run_schedule(seed, ENGINE_RANKS, false, options) {
                Ok(outcome) => {
                    suspicions += outcome.suspicions.0;
                    halted += outcome.suspicions.1;
                }
                Err((violation, _)) => panic!("{violation}\nreplay: {}", violation.replay()),
            }
        }
        assert!(suspicions > 50, "{suspicions} suspicions");
        assert!(
            halted > 0,
            "no suspected rank learned it was declared failed"
        );
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
            let a = run_schedule(seed, ENGINE_RANKS, true, Options::default()).expect("passes");
            let b = run_schedule(seed, ENGINE_RANKS, true, Options::default()).expect("passes");
            let c = run_schedule(seed, ENGINE_RANKS, false, Options::default()).expect("passes");
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
    /// nothing is revoked, the lost message's receiver waits forever (the liveness check), or
    /// an `Any` tag receive takes the sender's next message (a live sender's message skipped).
    #[test]
    fn a_lost_packet_is_caught() {
        let mut caught = 0;
        for index in 0.. {
            let seed = schedule_seed(21, index);
            let clean = check(seed, ENGINE_RANKS);
            if clean.crashes > 0 || clean.revoked || clean.receipts == 0 {
                continue;
            }
            let options = Options {
                drop_data_at: Some(index % clean.receipts),
                ..Options::default()
            };
            let violation = match run_schedule(seed, ENGINE_RANKS, false, options) {
                Err((violation, _)) => violation,
                // The stuck run went on long enough for a planned crash to come: skip it.
                Ok(faulty) if faulty.crashes > 0 => continue,
                Ok(_) => panic!("seed {seed}: a lost message must be caught"),
            };
            assert!(
                violation.what.contains("liveness") || violation.what.contains("live sender"),
                "{violation}"
            );
            assert!(violation.replay().contains("engine-replay"));
            caught += 1;
            if caught == 10 {
                break;
            }
        }
    }

    /// A decision that differs at one rank (its flag's lowest bit flipped) is caught, by the
    /// uniformity check or, at an agreement's first decision, by the flags' AND.
    #[test]
    fn a_corrupt_decision_is_caught() {
        let mut caught = 0;
        for index in 0.. {
            let seed = schedule_seed(23, index);
            let clean = check(seed, ENGINE_RANKS);
            if clean.decisions == 0 {
                continue;
            }
            let options = Options {
                corrupt_decision_at: Some(index % clean.decisions),
                ..Options::default()
            };
            let Err((violation, _)) = run_schedule(seed, ENGINE_RANKS, false, options) else {
                panic!("seed {seed}: a corrupt decision must be caught");
            };
            assert!(violation.what.contains("agreement"), "{violation}");
            caught += 1;
            if caught == 20 {
                break;
            }
        }
    }

    /// A creation decision that differs at one rank (its exchange bit cleared: that rank's
    /// `dup` fails while the others install) is caught by the check that every rank gets the
    /// same communicator or the same error, or, when that rank returns first, by the error
    /// itself (an exchange failure without a failure).
    #[test]
    fn a_corrupt_creation_decision_is_caught() {
        let mut caught = 0;
        for index in 0.. {
            let seed = schedule_seed(29, index);
            let clean = check(seed, ENGINE_RANKS);
            if clean.dups.0 < 2 {
                continue; // the corrupted rank must not be the only one to return
            }
            let options = Options {
                corrupt_creation_at: Some(index % clean.dups.0),
                ..Options::default()
            };
            match run_schedule(seed, ENGINE_RANKS, false, options) {
                Err((violation, _)) => {
                    assert!(
                        violation.what.contains("dup")
                            || violation.what.contains("exchange failed without a failure"),
                        "{violation}"
                    );
                    caught += 1;
                }
                // The corrupted decision may be one of a round whose dup fails anyway.
                Ok(_) => continue,
            }
            if caught == 20 {
                break;
            }
            assert!(index < 5000, "only {caught} corrupt creations caught");
        }
    }

    /// A `split` communicator installed with its members out of key order at one rank is
    /// caught: by the order check, or by the check that the ranks of one color agree.
    #[test]
    fn a_corrupt_split_is_caught() {
        let mut caught = 0;
        for index in 0.. {
            let seed = schedule_seed(37, index);
            let options = Options {
                corrupt_split_at: Some(0),
                ..Options::default()
            };
            let clean = check(seed, ENGINE_RANKS);
            if clean.splits.0 == 0 {
                continue;
            }
            match run_schedule(seed, ENGINE_RANKS, false, options) {
                Err((violation, _)) => {
                    assert!(violation.what.contains("split"), "{violation}");
                    caught += 1;
                }
                // The splits of this schedule made no communicator of two ranks or more.
                Ok(_) => continue,
            }
            if caught == 20 {
                break;
            }
            assert!(index < 5000, "only {caught} corrupt splits caught");
        }
    }

    /// Flow control's guarantee (`runthrough_core::flow`, "No deadlock for safe programs":
    /// "every rank isends, then receives, then waits" completes) when a receiver takes one
    /// sender's messages in another order than they were sent and the two together exceed the
    /// sender's window: the first is buffered (held, so no credit goes back), the second waits
    /// in the sender's queue for that credit, and the receive that wants the second would wait
    /// for ever without a loan. MPI's progress rule says the matching isend/irecv pair must
    /// complete. (This deadlocked before loans existed.)
    #[test]
    fn isends_received_out_of_order_complete() {
        use runthrough_core::engine::{Engine, Posted, ReceivePoll};
        use runthrough_core::flow;
        use runthrough_core::matching::{SourceSelector, TagSelector};
        use runthrough_core::packet::{Lane, Outgoing, Packet, WORLD_CONTEXT};
        use runthrough_core::WorldRank;

        let mut engines = [Engine::new(WorldRank(0), 2), Engine::new(WorldRank(1), 2)];
        for engine in &mut engines {
            engine.set_unexpected_cap(4096, 2); // a window of 2048 bytes per sender
        }
        let mut wire: Vec<(WorldRank, WorldRank, Packet)> = Vec::new();
        // Rank 0 isends 1500 bytes with tag 1, then 1500 bytes with tag 2.
        for tag in [1, 2] {
            let packet = Packet::Data {
                context: WORLD_CONTEXT,
                source: 0,
                tag,
                payload: vec![tag as u8; 1500],
            };
            let charge = flow::charge(1500);
            let world = engines[0].send_target(WORLD_CONTEXT, 1).unwrap().unwrap();
            if engines[0].admit(world, Lane::Point, charge) {
                wire.push((WorldRank(0), world, packet));
            } else {
                engines[0].queue_send(world, Lane::Point, WORLD_CONTEXT, 1, packet, charge);
                for (to, p) in engines[0].take_due() {
                    wire.push((WorldRank(0), to, p));
                }
            }
        }
        // Rank 1 receives tag 2 first.
        let Ok(Posted::Waiting(id)) = engines[1].match_or_post(
            WORLD_CONTEXT,
            SourceSelector::Rank(0),
            TagSelector::Value(2),
        ) else {
            panic!("nothing has arrived yet");
        };
        // Both ranks make progress until nothing moves.
        for _ in 0..100 {
            for (from, to, packet) in std::mem::take(&mut wire) {
                let mut out = Outgoing::new();
                engines[to.index()].handle_packet(from, packet, &mut out);
                engines[to.index()].flush_flow(&mut out);
                wire.extend(out.into_iter().map(|(t, p)| (to, t, p)));
            }
            for (rank, engine) in engines.iter_mut().enumerate() {
                let mut transmit = engine.poll_transmit();
                wire.extend(
                    transmit
                        .packets
                        .drain(..)
                        .map(|(t, p)| (WorldRank(rank as u32), t, p)),
                );
                engine.end_transmit(&transmit);
            }
        }
        match engines[1].poll_receive(WORLD_CONTEXT, id, false) {
            ReceivePoll::Complete(Ok(received)) => {
                assert_eq!(received.envelope.map(|e| e.tag), Some(2));
            }
            other => panic!(
                "the receive of tag 2 is stuck: {other:?}; rank 1 holds {} bytes, rank 0 has {} sends queued",
                engines[1].flow_stats().unexpected_bytes,
                engines[0].flow_stats().queued_sends
            ),
        }
        assert_eq!(
            engines[1].flow_stats().loans,
            1,
            "one loan let tag 2 through"
        );
        // Tag 1 is still there to receive, and afterwards nothing is held.
        match engines[1].match_or_post(
            WORLD_CONTEXT,
            SourceSelector::Rank(0),
            TagSelector::Value(1),
        ) {
            Ok(Posted::Done(Ok(received))) => {
                assert_eq!(received.envelope.map(|e| e.tag), Some(1));
                assert_eq!(&received.payload[..], &[1u8; 1500][..]);
            }
            other => panic!("tag 1 was lost: {other:?}"),
        }
        assert_eq!(engines[1].flow_stats().unexpected_bytes, 0);
    }

    /// The first schedule of `engine --any-order` (base seed 1) that flow control left stuck
    /// before loans: 4 ranks, window 1024 bytes; rank 1's messages 14 (860 bytes) and 16 are
    /// buffered at rank 2, its message 18 waits in rank 1's queue for their credit, and rank 2
    /// receives 18 first. Same cause as `isends_received_out_of_order_complete`.
    #[test]
    fn any_order_seed_completes() {
        let options = Options {
            any_order: true,
            ..Options::default()
        };
        if let Err((violation, _)) =
            run_schedule(17911839290282890590, ENGINE_RANKS, false, options)
        {
            panic!("{violation}\nreplay: {}", violation.replay());
        }
    }
}

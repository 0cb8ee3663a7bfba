// SPDX-License-Identifier: MIT OR Apache-2.0
//! Flow control of eager traffic on the in-process runtime (SPEC §6 "Memory": unexpected
//! messages are buffered up to a cap, a flooding sender is slowed down; with the failure rules of
//! SPEC §1 and §3.1 and MPI's non-overtaking rule kept).
//!
//! A test knows that a sender is blocked without sleeping: the receiver waits (a blocking wait
//! in the runtime, `Comm::wait_flow_stats`) until it has received the sender's request for
//! credit, which the sender makes when its next message does not fit in its window.

mod support;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use runthrough::{wait_all, Comm, Error, FlowStats, Result, Source, Tag};
use support::{bounded, outcomes};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
const FLOOD: i32 = 3;
/// A go-ahead between the two ranks of a test.
const GO: i32 = 4;

/// The charge of a message of `bytes` (payload plus the runtime's per-message charge).
fn charge(stats: &FlowStats, bytes: usize) -> u64 {
    bytes as u64 + stats.message_charge
}

/// Whether a single sender of `bytes`-sized point-to-point messages must be waiting for credit.
fn point_sender_blocked(stats: &FlowStats, bytes: usize) -> bool {
    stats.unexpected_bytes + charge(stats, bytes) > stats.window
}

/// Marks `buf` as message number `i` (three words, so that checking is cheap at 1 MiB).
fn stamp(buf: &mut [u32], i: u32) {
    let (mid, last) = (buf.len() / 2, buf.len() - 1);
    buf[0] = i;
    buf[mid] = i ^ 0x5a5a_5a5a;
    buf[last] = !i;
}

/// The number `buf` was stamped with; panics on a torn or mixed message.
fn stamp_of(buf: &[u32]) -> u32 {
    let (mid, last) = (buf.len() / 2, buf.len() - 1);
    assert_eq!(buf[mid], buf[0] ^ 0x5a5a_5a5a, "a torn message");
    assert_eq!(buf[last], !buf[0], "a torn message");
    buf[0]
}

/// Receives `count` stamped messages from `from` on `tag` and checks they are 0, 1, 2, ...
fn receive_in_order(world: &Comm, from: u32, count: u32, words: usize) -> Result<()> {
    let mut buf = vec![0u32; words];
    for i in 0..count {
        let status = world.recv(&mut buf, from, FLOOD)?;
        assert_eq!(status.count, words);
        assert_eq!(stamp_of(&buf), i, "message {i} from {from}");
    }
    Ok(())
}

/// SPEC §6: a sender floods 1 GiB in 1 MiB messages at a receiver that receives only once the
/// sender is blocked. The receiver never holds more than its cap (nor more than the sender's
/// window); the sender waited; every message arrives exactly once, in order.
#[test]
fn a_flood_is_held_to_the_cap_and_arrives_exactly_once_in_order() {
    const CAP: usize = 16 * MIB;
    const COUNT: u32 = 1024; // 1 GiB
    let stats = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(CAP).run(|world| {
                let words = MIB / 4;
                if world.rank() == 0 {
                    let mut buf = vec![0u32; words];
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        world.send(&buf, 1, FLOOD)?;
                    }
                } else {
                    let blocked = world.wait_flow_stats(|s| s.credit_requests > 0);
                    assert!(point_sender_blocked(&blocked, MIB), "{blocked:?}");
                    assert!(blocked.unexpected_bytes <= blocked.window);
                    receive_in_order(world, 0, COUNT, words)?;
                }
                world.barrier()?;
                assert!(
                    world.iprobe::<u8>(Source::Any, Tag::Any)?.is_none(),
                    "nothing more than was sent"
                );
                Ok::<_, Error>(world.flow_stats())
            }),
            &[],
        )
    });
    let (sender, receiver) = (stats[0].unwrap(), stats[1].unwrap());
    assert_eq!(receiver.cap, CAP as u64);
    assert_eq!(receiver.window, (CAP / 2) as u64);
    assert!(
        sender.delayed_sends > 0,
        "the sender had to wait: {sender:?}"
    );
    assert!(
        receiver.peak_unexpected_bytes <= receiver.window,
        "{receiver:?}"
    );
    assert!(receiver.peak_unexpected_bytes >= receiver.window - charge(&receiver, MIB));
    assert_eq!(receiver.unexpected_bytes, 0);
    assert_eq!(sender.queued_sends, 0);
}

/// SPEC §6 with many small messages: 100,000 sends of 8 bytes to a peer that receives them all
/// later, in a loop, complete (slowly if need be), in order, within the cap.
#[test]
fn many_small_messages_to_a_late_receiver_complete() {
    const CAP: usize = 64 * KIB;
    const COUNT: u64 = 100_000;
    let stats = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(CAP).run(|world| {
                if world.rank() == 0 {
                    for i in 0..COUNT {
                        world.send(&[i], 1, FLOOD)?;
                    }
                } else {
                    let blocked = world.wait_flow_stats(|s| s.credit_requests > 0);
                    assert!(point_sender_blocked(&blocked, 8), "{blocked:?}");
                    for i in 0..COUNT {
                        let mut got = [u64::MAX];
                        world.recv(&mut got, 0u32, FLOOD)?;
                        assert_eq!(got[0], i);
                    }
                }
                Ok::<_, Error>(world.flow_stats())
            }),
            &[],
        )
    });
    assert!(stats[0].unwrap().delayed_sends > 0);
    assert!(stats[1].unwrap().peak_unexpected_bytes <= CAP as u64 / 2);
}

/// SPEC §1, §3.1: a sender blocked for credit from a receiver that dies returns
/// `ProcFailed { rank }` promptly (the receiver released nothing); once the survivors recognize
/// the failure in G, a send to it behaves as `MPI_PROC_NULL`.
#[test]
fn a_blocked_sender_whose_receiver_dies_gets_proc_failed() {
    let killed_at: OnceLock<Instant> = OnceLock::new();
    let universe = runthrough::local(3).unexpected_cap(MIB);
    let handle = universe.fault_handle();
    let waited = bounded(move || {
        outcomes(
            universe.run(|world| {
                let buf = vec![7u8; 64 * KIB];
                match world.rank() {
                    0 => {
                        let mut sent = 0u32;
                        let error = loop {
                            match world.send(&buf, 1, FLOOD) {
                                Ok(()) => sent += 1,
                                Err(error) => break error,
                            }
                        };
                        let waited = killed_at.get().expect("rank 1 was killed").elapsed();
                        assert_eq!(error, Error::ProcFailed { rank: 1 });
                        assert!(sent > 0 && world.flow_stats().delayed_sends > 0);
                        world.validate_global()?;
                        assert_eq!(world.send(&buf, 1, FLOOD), Ok(()), "NULL in G");
                        Ok::<_, Error>(Some(waited))
                    }
                    1 => {
                        world.wait_flow_stats(|s| s.credit_requests > 0);
                        killed_at.get_or_init(Instant::now);
                        handle.kill(1);
                        world.validate_local()?; // unwinds: rank 1 is dead
                        unreachable!("a killed rank does not return from a call");
                    }
                    _ => {
                        world.validate_global()?;
                        Ok(None)
                    }
                }
            }),
            &[1],
        )
    });
    let waited = waited[0].flatten().unwrap();
    assert!(
        waited < Duration::from_secs(5),
        "ProcFailed after {waited:?}"
    );
}

/// SPEC §1: the messages a flooding sender got into its receiver's buffers before it died stay
/// receivable, in order, exactly once; then the receive reports `ProcFailed`.
#[test]
fn messages_buffered_before_a_blocked_sender_dies_stay_receivable() {
    let universe = runthrough::local(2).unexpected_cap(MIB);
    let handle = universe.fault_handle();
    let values = bounded(move || {
        outcomes(
            universe.run(|world| {
                let words = 16 * KIB / 4;
                let mut buf = vec![0u32; words];
                if world.rank() == 0 {
                    for i in 0.. {
                        stamp(&mut buf, i);
                        world.send(&buf, 1, FLOOD)?; // killed while blocked here
                    }
                    unreachable!();
                }
                let held = world.wait_flow_stats(|s| s.credit_requests > 0);
                assert!(point_sender_blocked(&held, 16 * KIB), "{held:?}");
                handle.kill(0);
                let mut received = 0;
                let error = loop {
                    match world.recv(&mut buf, 0u32, FLOOD) {
                        Ok(_) => {
                            assert_eq!(stamp_of(&buf), received);
                            received += 1;
                        }
                        Err(error) => break error,
                    }
                };
                assert_eq!(error, Error::ProcFailed { rank: 0 });
                assert_eq!(world.flow_stats().unexpected_bytes, 0);
                Ok::<_, Error>((received, held.unexpected_bytes / charge(&held, 16 * KIB)))
            }),
            &[0],
        )
    });
    let (received, held) = values[1].unwrap();
    assert!(received > 1);
    assert_eq!(u64::from(received), held, "every buffered message, once");
}

/// SPEC §3.5: a sender blocked for credit on a communicator that is revoked returns
/// `Revoked`; the receiver drops what it buffered on it and gives the credit back, so the same
/// pair of ranks can flood again on another communicator.
#[test]
fn a_blocked_sender_whose_communicator_is_revoked_gets_revoked() {
    const COUNT: u32 = 64;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let side = world.dup()?;
                let words = 64 * KIB / 4;
                let mut buf = vec![0u32; words];
                if world.rank() == 0 {
                    let error = loop {
                        if let Err(error) = world.send(&buf, 1, FLOOD) {
                            break error;
                        }
                    };
                    assert_eq!(error, Error::Revoked);
                    // The flood on `side` waits for rank 1's look at what it held: the flow
                    // counters are the rank's, and this traffic is not the revoked one's.
                    side.recv(&mut [0u32], 1u32, GO)?;
                    // 4 MiB on another communicator, through the same window (512 KiB).
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        side.send(&buf, 1, FLOOD)?;
                    }
                } else {
                    world.wait_flow_stats(|s| s.credit_requests > 0);
                    world.revoke()?;
                    assert_eq!(world.flow_stats().unexpected_bytes, 0, "dropped");
                    assert_eq!(world.recv(&mut buf, 0u32, FLOOD), Err(Error::Revoked));
                    side.send(&[1u32], 0, GO)?;
                    receive_in_order(&side, 0, COUNT, words)?;
                }
                side.barrier()?;
                Ok::<_, Error>(world.flow_stats())
            }),
            &[],
        )
    });
    assert!(values[0].unwrap().delayed_sends > 0);
}

/// An `isend` beyond the credit leaves its request pending (the call returns at once) and the
/// request completes after the receiver drains; a barrier (the collective lane) goes through
/// while the point-to-point lane is full.
#[test]
fn isend_beyond_the_credit_completes_after_the_receiver_drains() {
    const COUNT: u32 = 40;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let words = 64 * KIB / 4;
                if world.rank() == 0 {
                    let mut requests = Vec::new();
                    let mut buf = vec![0u32; words];
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        requests.push(world.isend(&buf, 1, FLOOD)?);
                    }
                    let mut pending = 0;
                    for request in &mut requests {
                        if request.test()?.is_none() {
                            pending += 1;
                        }
                    }
                    world.barrier()?; // rank 1 starts draining after this
                    for outcome in wait_all(&mut requests) {
                        outcome?;
                    }
                    Ok::<_, Error>(pending)
                } else {
                    world.barrier()?;
                    receive_in_order(world, 0, COUNT, words)?;
                    Ok(0)
                }
            }),
            &[],
        )
    });
    let pending = values[0].unwrap();
    assert!(pending > 0, "some requests waited for credit");
    assert!(pending < COUNT, "the first ones fit");
}

/// MPI's progress rule with isends received in reverse order: rank 0 isends 40 messages of
/// 64 KiB with tags 0..40 (2.5 MiB, 2.5 times its 1 MiB window at rank 1, within the window
/// plus the 2 MiB cap that loans may reach), and rank 1 receives them last tag first. The last
/// one is queued at rank 0 behind messages that fill the window at rank 1, which holds them
/// until it has the last one: without a loan both wait for ever. Every payload arrives
/// exactly once, with its tag; rank 1 made loans and holds nothing at the end.
#[test]
fn isends_received_in_reverse_order_complete_through_loans() {
    const COUNT: u32 = 40;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(2 * MIB).run(|world| {
                let words = 64 * KIB / 4;
                if world.rank() == 0 {
                    let mut requests = Vec::new();
                    let mut buf = vec![0u32; words];
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        requests.push(world.isend(&buf, 1, i as i32)?);
                    }
                    for outcome in wait_all(&mut requests) {
                        outcome?;
                    }
                    Ok::<_, Error>(0)
                } else {
                    let mut buf = vec![0u32; words];
                    for i in (0..COUNT).rev() {
                        let status = world.recv(&mut buf, Source::Rank(0), Tag::Value(i as i32))?;
                        assert_eq!((status.tag, stamp_of(&buf)), (Some(i as i32), i));
                    }
                    let stats = world.flow_stats();
                    assert_eq!(stats.unexpected_bytes, 0, "everything received");
                    Ok(stats.loans)
                }
            }),
            &[],
        )
    });
    assert!(values[1].unwrap() > 0, "rank 1 lent rank 0 credit");
}

/// Dropping a send request that waits for credit does not lose its message: the drop waits, as
/// a blocking send would, until the message is transmitted (here: until the receiver drains).
#[test]
fn dropping_a_pending_send_request_still_delivers_its_message() {
    const COUNT: u32 = 40;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let words = 64 * KIB / 4;
                if world.rank() == 0 {
                    let mut buf = vec![0u32; words];
                    let mut requests = Vec::new();
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        requests.push(world.isend(&buf, 1, FLOOD)?);
                    }
                    let queued = world.flow_stats().queued_sends;
                    drop(requests); // returns once rank 1 has taken enough
                    let after = world.flow_stats();
                    assert_eq!(after.queued_sends, 0);
                    Ok::<_, Error>(queued)
                } else {
                    world.wait_flow_stats(|s| s.credit_requests > 0);
                    receive_in_order(world, 0, COUNT, words)?;
                    Ok(0)
                }
            }),
            &[],
        )
    });
    assert!(
        values[0].unwrap() > 0,
        "some sends were queued when dropped"
    );
}

/// Two ranks flood each other with isends far beyond their windows, then receive everything,
/// then wait for their sends: both complete (the receives' waits move the pending sends).
#[test]
fn two_ranks_flooding_each_other_with_isend_then_draining_both_complete() {
    const COUNT: u32 = 200;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let words = 32 * KIB / 4;
                let peer = 1 - world.rank();
                let mut buf = vec![0u32; words];
                let mut requests = Vec::new();
                for i in 0..COUNT {
                    stamp(&mut buf, i);
                    requests.push(world.isend(&buf, peer, FLOOD)?);
                }
                // Both ends are beyond their windows before either drains.
                world.wait_flow_stats(|s| s.credit_requests > 0);
                receive_in_order(world, peer, COUNT, words)?;
                for outcome in wait_all(&mut requests) {
                    outcome?;
                }
                Ok::<_, Error>(world.flow_stats())
            }),
            &[],
        )
    });
    for stats in values.into_iter().map(Option::unwrap) {
        assert!(stats.delayed_sends > 0);
        assert!(stats.peak_unexpected_bytes <= stats.window);
    }
}

/// SPEC §1 non-overtaking with `Source::Any`: three senders, each blocked for credit, mixing
/// isends (left pending) and blocking sends; the receiver takes everything with wildcard
/// receives and sees each sender's messages in the order they were sent, each once.
#[test]
fn any_source_receives_keep_each_senders_order_under_flow_control() {
    const COUNT: u32 = 300;
    const CAP: usize = 256 * KIB;
    let words = KIB / 4;
    let values = bounded(move || {
        outcomes(
            runthrough::local(4).unexpected_cap(CAP).run(|world| {
                let mut buf = vec![0u32; words];
                if world.rank() != 0 {
                    let mut requests = Vec::new();
                    for i in 0..COUNT {
                        stamp(&mut buf, i);
                        if i % 3 == 0 {
                            requests.push(world.isend(&buf, 0, FLOOD)?);
                        } else {
                            world.send(&buf, 0, FLOOD)?;
                        }
                    }
                    for outcome in wait_all(&mut requests) {
                        outcome?;
                    }
                    return Ok::<_, Error>(world.flow_stats());
                }
                // All three senders blocked: each asked once, and holds more than its window
                // minus one message here.
                let blocked = world.wait_flow_stats(|s| s.credit_requests >= 3);
                assert!(blocked.unexpected_bytes > 3 * (blocked.window - charge(&blocked, KIB)));
                let mut next = [0u32; 4];
                for _ in 0..3 * COUNT {
                    let status = world.recv(&mut buf, Source::Any, Tag::Any)?;
                    let from = status.source.unwrap() as usize;
                    assert_eq!(status.tag, Some(FLOOD));
                    assert_eq!(stamp_of(&buf), next[from], "from rank {from}");
                    next[from] += 1;
                }
                assert_eq!(next, [0, COUNT, COUNT, COUNT]);
                Ok(world.flow_stats())
            }),
            &[],
        )
    });
    let receiver = values[0].unwrap();
    assert!(receiver.peak_unexpected_bytes <= CAP as u64, "{receiver:?}");
    for sender in &values[1..] {
        assert!(sender.unwrap().delayed_sends > 0);
    }
}

/// Several threads of one rank sending to one receiver through one small window, mixing
/// blocking sends and isends: each thread's messages arrive in the order that thread sent them
/// (MPI orders messages of one thread; the queue and the transmitting thread keep it so).
#[test]
fn each_threads_messages_keep_their_order_through_a_shared_window() {
    const THREADS: u32 = 3;
    const COUNT: u32 = 400;
    bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(64 * KIB).run(|world| {
                let words = KIB / 4;
                if world.rank() == 0 {
                    std::thread::scope(|scope| {
                        let senders: Vec<_> = (0..THREADS)
                            .map(|thread| {
                                scope.spawn(move || -> Result<()> {
                                    let mut buf = vec![0u32; words];
                                    let mut requests = Vec::new();
                                    for i in 0..COUNT {
                                        stamp(&mut buf, i);
                                        let tag = thread as i32;
                                        if i % 2 == 0 {
                                            requests.push(world.isend(&buf, 1, tag)?);
                                        } else {
                                            world.send(&buf, 1, tag)?;
                                        }
                                    }
                                    wait_all(&mut requests)
                                        .into_iter()
                                        .collect::<Result<Vec<_>>>()?;
                                    Ok(())
                                })
                            })
                            .collect();
                        for sender in senders {
                            sender.join().expect("a sender thread")?;
                        }
                        assert!(world.flow_stats().delayed_sends > 0);
                        Ok::<_, Error>(())
                    })
                } else {
                    world.wait_flow_stats(|s| s.credit_requests > 0);
                    let mut buf = vec![0u32; words];
                    let mut next = [0u32; THREADS as usize];
                    for _ in 0..THREADS * COUNT {
                        let status = world.recv(&mut buf, 0u32, Tag::Any)?;
                        let thread = status.tag.unwrap() as usize;
                        assert_eq!(stamp_of(&buf), next[thread], "thread {thread}");
                        next[thread] += 1;
                    }
                    assert!(world.flow_stats().peak_unexpected_bytes <= 32 * KIB as u64);
                    Ok(())
                }
            }),
            &[],
        )
    });
}

/// Collectives and `validate_global` work while a point-to-point flood is blocked: one thread
/// of rank 0 waits for credit from rank 1 while its main thread runs a barrier, an all-reduce,
/// a broadcast and `validate_global` with everyone; then rank 1 drains the flood.
#[test]
fn collectives_and_validate_global_work_while_a_flood_is_blocked() {
    const COUNT: u32 = 64;
    let values = bounded(|| {
        outcomes(
            runthrough::local(3).unexpected_cap(MIB).run(|world| {
                let words = 64 * KIB / 4;
                let collectives = |world: &Comm| -> Result<u64> {
                    world.barrier()?;
                    let mut sum = [0u64];
                    world.all_reduce(
                        &[u64::from(world.rank()) + 1],
                        &mut sum,
                        runthrough::Op::Sum,
                    )?;
                    let mut big = vec![world.rank(); 256 * KIB / 4];
                    world.broadcast(&mut big, 0)?;
                    assert!(big.iter().all(|&x| x == 0));
                    let g = world.validate_global()?;
                    assert_eq!(g.num_failed(), 0);
                    Ok(sum[0])
                };
                match world.rank() {
                    0 => std::thread::scope(|scope| {
                        let flood = scope.spawn(|| -> Result<()> {
                            let mut buf = vec![0u32; words];
                            for i in 0..COUNT {
                                stamp(&mut buf, i);
                                world.send(&buf, 1, FLOOD)?;
                            }
                            Ok(())
                        });
                        world.wait_flow_stats(|s| s.queued_sends > 0); // the flood waits
                        let sum = collectives(world)?;
                        flood.join().expect("the flood thread")?;
                        Ok(sum)
                    }),
                    1 => {
                        let sum = collectives(world)?;
                        receive_in_order(world, 0, COUNT, words)?;
                        Ok(sum)
                    }
                    _ => collectives(world),
                }
            }),
            &[],
        )
    });
    assert!(values.iter().all(|v| *v == Some(6)));
}

/// Collective traffic is flow controlled on its own lane: a broadcast root that runs many calls
/// ahead of a slow peer waits for it, the peer never holds more than one window of collective
/// messages, and every call delivers the right data.
#[test]
fn a_broadcast_root_running_ahead_is_held_to_the_collective_window() {
    const ROUNDS: u32 = 200;
    let values = bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let words = 64 * KIB / 4;
                let mut buf = vec![0u32; words];
                if world.rank() == 1 {
                    let blocked = world.wait_flow_stats(|s| s.collective_credit_requests > 0);
                    assert!(blocked.collective_bytes + charge(&blocked, 64 * KIB) > blocked.window);
                }
                for round in 0..ROUNDS {
                    if world.rank() == 0 {
                        stamp(&mut buf, round);
                    }
                    world.broadcast(&mut buf, 0)?;
                    assert_eq!(stamp_of(&buf), round);
                }
                Ok::<_, Error>(world.flow_stats())
            }),
            &[],
        )
    });
    let (root, peer) = (values[0].unwrap(), values[1].unwrap());
    assert!(root.delayed_sends > 0, "{root:?}");
    assert!(peer.peak_collective_bytes <= peer.window, "{peer:?}");
}

/// SPEC §3.3 with flow control: a broadcast root blocked for credit returns `ProcFailed` when a
/// participant fails (it is not recognized in G); after `validate_global` the old epoch's
/// buffered messages are dropped and their credit given back, so broadcasts work again.
#[test]
fn a_collective_blocked_for_credit_fails_on_an_unrecognized_failure_and_recovers() {
    const AFTER: u32 = 50;
    let universe = runthrough::local(3).unexpected_cap(MIB);
    let handle = universe.fault_handle();
    bounded(move || {
        outcomes(
            universe.run(|world| {
                let words = 64 * KIB / 4;
                let mut buf = vec![0u32; words];
                match world.rank() {
                    0 => {
                        let error = loop {
                            if let Err(error) = world.broadcast(&mut buf, 0) {
                                break error;
                            }
                        };
                        assert_eq!(error, Error::ProcFailed { rank: 2 });
                    }
                    1 => {} // never in the first broadcasts: it only buffers them
                    _ => {
                        // The root's first child: its window fills first.
                        world.wait_flow_stats(|s| s.collective_credit_requests > 0);
                        handle.kill(2);
                        world.validate_local()?;
                        unreachable!("a killed rank does not return from a call");
                    }
                }
                let g = world.validate_global()?;
                assert_eq!(g.num_failed(), 1);
                assert_eq!(
                    world.flow_stats().collective_bytes,
                    0,
                    "the old epoch's are gone"
                );
                // The root's next broadcast would be held at rank 1 if it came before rank 1
                // looked: rank 1 says when it has (point-to-point traffic is not counted there).
                if world.rank() == 1 {
                    world.send(&[0u8], 0, GO)?;
                } else {
                    world.recv(&mut [0u8], 1u32, GO)?;
                }
                for round in 0..AFTER {
                    if world.rank() == 0 {
                        stamp(&mut buf, round);
                    }
                    world.broadcast(&mut buf, 0)?;
                    assert_eq!(stamp_of(&buf), round);
                }
                Ok::<_, Error>(())
            }),
            &[2],
        )
    });
}

/// SPEC §3.5: a broadcast root blocked for credit returns `Revoked` when the communicator is
/// revoked.
#[test]
fn a_collective_blocked_for_credit_returns_revoked() {
    bounded(|| {
        outcomes(
            runthrough::local(2).unexpected_cap(MIB).run(|world| {
                let mut buf = vec![0u32; 64 * KIB / 4];
                if world.rank() == 0 {
                    let error = loop {
                        if let Err(error) = world.broadcast(&mut buf, 0) {
                            break error;
                        }
                    };
                    assert_eq!(error, Error::Revoked);
                } else {
                    world.wait_flow_stats(|s| s.collective_credit_requests > 0);
                    world.revoke()?;
                    assert_eq!(world.flow_stats().collective_bytes, 0);
                }
                Ok::<_, Error>(())
            }),
            &[],
        )
    });
}

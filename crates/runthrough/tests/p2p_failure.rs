// SPDX-License-Identifier: MIT OR Apache-2.0
//! Point-to-point under failure on the in-process runtime (SPEC §1, §3.1, §3.2).
//!
//! Each test states the property it checks and where it comes from. Ranks learn of a failure in
//! one of two deterministic ways: a [`runthrough::FaultHandle::kill`] returns only once every
//! peer's detector knows, and a rank killed by `kill_at_operation` dies after its earlier sends
//! were delivered, so a peer that got `ProcFailed` from it has all its earlier messages buffered.
//! Where a test needs a kill to land while a call is waiting, the victim first receives a "go"
//! message that the waiting rank sends after posting its receive.

mod support;

use runthrough::{Comm, Error, RankState, Result, Source, Status, Tag};
use support::{bounded, outcomes};

/// The tag of the "go" messages that order a test's steps.
const GO: i32 = 1000;
/// A tag that no one sends on: a receive on it waits until its peer fails.
const NEVER: i32 = 999;

fn go(world: &Comm, to: u32) -> Result<()> {
    world.send(&[0u8], to, GO)
}

fn wait_for_go(world: &Comm, from: u32) -> Result<()> {
    let mut buf = [0u8];
    world.recv(&mut buf, from, GO).map(|_| ())
}

/// Blocks until `rank` has failed (and the detector of `world`'s rank knows it).
fn wait_for_failure_of(world: &Comm, rank: u32) {
    let mut buf = [0u8];
    assert_eq!(
        world.recv(&mut buf, rank, NEVER),
        Err(Error::ProcFailed { rank })
    );
}

fn status(source: u32, tag: i32, count: usize) -> Status {
    Status {
        source: Some(source),
        tag: Some(tag),
        count,
    }
}

/// SPEC §3.1: a send or isend to a rank the detector knows has failed returns
/// `ProcFailed { rank }`, both while the failure is not yet validated and once it is FAILED in L;
/// the non-blocking send reports it at completion. Sends to live peers are unaffected.
#[test]
fn send_to_a_failed_rank_is_proc_failed() {
    bounded(|| {
        let universe = runthrough::local(3);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            match world.rank() {
                0 => {
                    faults.kill(2);
                    assert_eq!(world.local_view()?.num_failed(), 0, "not validated yet");
                    assert_eq!(
                        world.send(&[1u32], 2, 0),
                        Err(Error::ProcFailed { rank: 2 })
                    );
                    let mut request = world.isend(&[1u32], 2, 0)?;
                    assert_eq!(request.wait(), Err(Error::ProcFailed { rank: 2 }));

                    let local = world.validate_local()?;
                    assert_eq!(local.state_of(2), Some(RankState::FAILED | RankState::NEW));
                    assert_eq!(
                        world.send(&[1u32], 2, 7),
                        Err(Error::ProcFailed { rank: 2 })
                    );
                    let mut request = world.isend(&[1u32; 4], 2, 7)?;
                    assert_eq!(request.test(), Err(Error::ProcFailed { rank: 2 }));

                    world.send(&[7u32], 1, 0)?;
                }
                1 => {
                    let mut buf = [0u32];
                    assert_eq!(world.recv(&mut buf, 0u32, 0)?, status(0, 0, 1));
                    assert_eq!(buf, [7]);
                }
                _ => {
                    let mut buf = [0u32];
                    world.recv(&mut buf, 0u32, NEVER)?;
                }
            }
            Ok(())
        });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.1: a receive (recv, recv_vec, irecv with wait or test) or probe (probe, iprobe) from
/// a failed rank with no buffered match returns `ProcFailed { rank }`, whatever the tag
/// selector, before and after `validate_local` puts the rank in L as FAILED.
#[test]
fn receive_from_a_failed_rank_with_nothing_buffered_is_proc_failed() {
    bounded(|| {
        let results = runthrough::local(2)
            .kill_at_operation(1, 1)
            .run(|world| -> Result<()> {
                if world.rank() == 1 {
                    world.send(&[1u32], 0, 0)?; // dies here, sends nothing
                    return Ok(());
                }
                let failed = Err(Error::ProcFailed { rank: 1 });
                wait_for_failure_of(world, 1);
                for validated in [false, true] {
                    if validated {
                        let local = world.validate_local()?;
                        assert_eq!(local.state_of(1), Some(RankState::FAILED | RankState::NEW));
                    }
                    let mut buf = [5u32; 2];
                    assert_eq!(world.recv(&mut buf, 1u32, 0), failed);
                    assert_eq!(world.recv(&mut buf, 1u32, Tag::Any), failed);
                    assert_eq!(
                        world.recv_vec::<u32>(1u32, Tag::Any),
                        Err(Error::ProcFailed { rank: 1 })
                    );
                    assert_eq!(world.irecv(&mut buf, 1u32, 3)?.wait(), failed);
                    assert_eq!(
                        world.irecv(&mut buf, 1u32, Tag::Any)?.test(),
                        Err(Error::ProcFailed { rank: 1 })
                    );
                    assert_eq!(world.probe::<u32>(1u32, Tag::Any), failed);
                    assert_eq!(
                        world.iprobe::<u32>(1u32, 4),
                        Err(Error::ProcFailed { rank: 1 })
                    );
                }
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// SPEC §1 and §3.1: complete messages a rank sent before it failed stay receivable, and
/// receives and probes match them first (in order, by source and tag, and from `Source::Any`
/// even while the failure is unacknowledged); only when nothing buffered matches does the failure
/// decide (`ProcFailed`, or `ProcFailedPending` for a wildcard).
#[test]
fn buffered_messages_from_a_dead_sender_are_received_first() {
    bounded(|| {
        let results = runthrough::local(2)
            .kill_at_operation(1, 4)
            .run(|world| -> Result<()> {
                if world.rank() == 1 {
                    world.send(&[10u32], 0, 0)?;
                    world.send(&[11u32, 11], 0, 1)?;
                    world.send(&[12u32], 0, 0)?;
                    world.send(&[13u32], 0, 0)?; // dies here: never sent
                    return Ok(());
                }
                wait_for_failure_of(world, 1);
                assert_eq!(world.iprobe::<u32>(1u32, Tag::Any)?, Some(status(1, 0, 1)));
                assert_eq!(world.probe::<u32>(1u32, 1)?, status(1, 1, 2));

                let mut one = [0u32];
                assert_eq!(
                    world.recv(&mut one, Source::Any, Tag::Any)?,
                    status(1, 0, 1)
                );
                assert_eq!(one, [10]);
                let mut two = [0u32; 2];
                assert_eq!(
                    world.irecv(&mut two, 1u32, Tag::Any)?.wait()?,
                    status(1, 1, 2)
                );
                assert_eq!(two, [11, 11]);
                let (data, got) = world.recv_vec::<u32>(1u32, 0)?;
                assert_eq!((data, got), (vec![12], status(1, 0, 1)));

                assert_eq!(
                    world.recv(&mut one, 1u32, Tag::Any),
                    Err(Error::ProcFailed { rank: 1 })
                );
                assert_eq!(
                    world.recv(&mut one, Source::Any, Tag::Any),
                    Err(Error::ProcFailedPending)
                );
                world.validate_local()?;
                assert_eq!(world.iprobe::<u32>(Source::Any, Tag::Any)?, None);
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// SPEC §3.1: a non-blocking receive from a rank that dies while the receive is pending
/// completes with `ProcFailed` (requests evaluate the peer's state when they complete, not when
/// posted), by `wait` or by `test`, for a named tag and for `Tag::Any`.
#[test]
fn pending_irecv_completes_with_proc_failed_when_its_sender_dies() {
    bounded(|| {
        let results = runthrough::local(2)
            .kill_at_operation(1, 2)
            .run(|world| -> Result<()> {
                if world.rank() == 1 {
                    wait_for_go(world, 0)?;
                    world.send(&[1u32], 0, 5)?; // dies here
                    return Ok(());
                }
                let (mut a, mut b) = ([0u32], [0u32]);
                let mut any_tag = world.irecv(&mut a, 1u32, Tag::Any)?;
                let mut tag_five = world.irecv(&mut b, 1u32, 5)?;
                assert_eq!(any_tag.test(), Ok(None), "posted while rank 1 lives");
                assert_eq!(tag_five.test(), Ok(None));
                go(world, 1)?;
                assert_eq!(any_tag.wait(), Err(Error::ProcFailed { rank: 1 }));
                assert_eq!(tag_five.test(), Err(Error::ProcFailed { rank: 1 }));
                assert!(any_tag.is_inactive() && tag_five.is_inactive());
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// SPEC §3.1 and §1 (no call blocks forever after a failure): blocking receives and probes
/// waiting on a rank when it is killed return `ProcFailed`. Three threads of one rank wait on the
/// same sender at once (recv, recv_vec, probe). The kill is timed to land while they wait; the
/// expected outcome is the same if it lands earlier.
#[test]
fn blocking_receives_waiting_on_a_killed_sender_return_proc_failed() {
    bounded(|| {
        let results = runthrough::local(2)
            .kill_after(1, std::time::Duration::from_millis(20))
            .run(|world| -> Result<()> {
                if world.rank() == 1 {
                    let mut buf = [0u8];
                    world.recv(&mut buf, 0u32, NEVER)?;
                    return Ok(());
                }
                let failed = Err(Error::ProcFailed { rank: 1 });
                std::thread::scope(|scope| {
                    let recv = scope.spawn(|| {
                        let mut buf = [0u64; 4];
                        world.recv(&mut buf, 1u32, Tag::Any)
                    });
                    let probe = scope.spawn(|| world.probe::<u8>(1u32, 3));
                    let recv_vec = world.recv_vec::<u16>(1u32, 3).map(|(_, status)| status);
                    assert_eq!(recv_vec, failed);
                    assert_eq!(recv.join().unwrap(), failed);
                    assert_eq!(probe.join().unwrap(), failed);
                });
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// SPEC §3.2: a wildcard `irecv` that is waiting when a failure is reported gives
/// `ProcFailedPending` from `wait` and `test` and stays pending (repeatedly, until the failure is
/// acknowledged); after `validate_local` the same request is pending again and completes with a
/// live sender's message (ULFM's MPI_ERR_PROC_FAILED_PENDING + ack).
#[test]
fn wildcard_irecv_is_pending_until_acknowledged_then_completes_with_a_live_sender() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 2)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        let mut buf = [0u32];
                        let mut request = world.irecv(&mut buf, Source::Any, 5)?;
                        assert_eq!(request.test(), Ok(None));
                        go(world, 2)?; // rank 2 dies at its next call
                        assert_eq!(request.wait(), Err(Error::ProcFailedPending));
                        assert!(!request.is_inactive(), "the request stays pending");
                        assert_eq!(request.wait(), Err(Error::ProcFailedPending));
                        assert_eq!(request.test(), Err(Error::ProcFailedPending));

                        let local = world.validate_local()?;
                        assert_eq!(local.state_of(2), Some(RankState::FAILED | RankState::NEW));
                        assert_eq!(request.test(), Ok(None), "acknowledged: waiting again");
                        go(world, 1)?;
                        assert_eq!(request.wait()?, status(1, 5, 1));
                        assert!(request.is_inactive());
                        drop(request);
                        assert_eq!(buf, [41]);
                    }
                    1 => {
                        wait_for_go(world, 0)?;
                        world.send(&[41u32], 0, 5)?;
                    }
                    _ => {
                        wait_for_go(world, 0)?;
                        world.send(&[42u32], 0, 5)?; // dies here: never sent
                    }
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.2: a wildcard `irecv` posted (unmatched) while the detector knows of a failure not in
/// L reports `ProcFailedPending` from `wait` and stays pending; after `validate_local` the same
/// request completes with a live sender's message.
#[test]
fn wildcard_irecv_posted_after_an_unacknowledged_failure_stays_pending() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 1)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        wait_for_failure_of(world, 2);
                        let mut buf = [0u32];
                        let mut request = world.irecv(&mut buf, Source::Any, Tag::Any)?;
                        assert_eq!(request.wait(), Err(Error::ProcFailedPending));
                        assert!(!request.is_inactive(), "the request stays pending");
                        assert_eq!(request.test(), Err(Error::ProcFailedPending));
                        world.validate_local()?;
                        go(world, 1)?;
                        assert_eq!(request.wait()?, status(1, 6, 1));
                        drop(request);
                        assert_eq!(buf, [61]);
                    }
                    1 => {
                        wait_for_go(world, 0)?;
                        world.send(&[61u32], 0, 6)?;
                    }
                    _ => world.send(&[0u8], 0, 0)?, // dies here
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.2: a blocking wildcard receive or probe that finds no buffered match while a failure
/// is unacknowledged returns `ProcFailedPending` and consumes nothing: it leaves no receive
/// posted behind, so the next message from a live sender goes to the next receive. A buffered
/// match still completes it (§3.1 buffered messages first).
#[test]
fn blocking_wildcard_receive_consumes_nothing_on_proc_failed_pending() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 2)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        wait_for_failure_of(world, 2);
                        // Rank 1 sent [1] to us before it told rank 2 to die: it is buffered.
                        let mut buf = [0u32];
                        assert_eq!(world.recv(&mut buf, Source::Any, 3)?, status(1, 3, 1));
                        assert_eq!(buf, [1]);

                        let pending = Err(Error::ProcFailedPending);
                        assert_eq!(world.recv(&mut buf, Source::Any, 3), pending);
                        assert_eq!(world.recv(&mut buf, Source::Any, Tag::Any), pending);
                        assert_eq!(world.probe::<u32>(Source::Any, 3), pending);
                        assert_eq!(
                            world.iprobe::<u32>(Source::Any, Tag::Any),
                            Err(Error::ProcFailedPending)
                        );
                        assert_eq!(
                            world.recv_vec::<u32>(Source::Any, Tag::Any),
                            Err(Error::ProcFailedPending)
                        );
                        assert_eq!(buf, [1], "nothing written");

                        world.validate_local()?;
                        assert_eq!(world.iprobe::<u32>(Source::Any, Tag::Any)?, None);
                        go(world, 1)?;
                        assert_eq!(world.probe::<u32>(Source::Any, 3)?, status(1, 3, 1));
                        assert_eq!(world.recv(&mut buf, Source::Any, 3)?, status(1, 3, 1));
                        assert_eq!(buf, [2]);
                    }
                    1 => {
                        world.send(&[1u32], 0, 3)?;
                        go(world, 2)?;
                        wait_for_go(world, 0)?;
                        world.send(&[2u32], 0, 3)?;
                    }
                    _ => {
                        wait_for_go(world, 1)?;
                        world.send(&[0u8], 0, 0)?; // dies here
                    }
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.2 ("or that is still waiting when such a failure is reported"): a blocking wildcard
/// receive and a blocking wildcard probe waiting when a rank is killed return
/// `ProcFailedPending`; after `validate_local`, wildcard receives work again. The kill is timed to
/// land while they wait; the outcome is the same if it lands earlier.
#[test]
fn blocking_wildcard_receive_waiting_when_a_failure_is_reported_is_proc_failed_pending() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_after(2, std::time::Duration::from_millis(20))
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        std::thread::scope(|scope| {
                            let probe = scope.spawn(|| world.probe::<u32>(Source::Any, 5));
                            let mut buf = [0u32];
                            assert_eq!(
                                world.recv(&mut buf, Source::Any, 5),
                                Err(Error::ProcFailedPending)
                            );
                            assert_eq!(probe.join().unwrap(), Err(Error::ProcFailedPending));
                        });
                        let local = world.validate_local()?;
                        assert_eq!(local.failed_set().as_slice(), &[2]);
                        go(world, 1)?;
                        let mut buf = [0u32];
                        assert_eq!(world.recv(&mut buf, Source::Any, 5)?, status(1, 5, 1));
                        assert_eq!(buf, [51]);
                    }
                    1 => {
                        wait_for_go(world, 0)?;
                        world.send(&[51u32], 0, 5)?;
                    }
                    _ => {
                        let mut buf = [0u8];
                        world.recv(&mut buf, 0u32, NEVER)?;
                    }
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.1–3.2: an unacknowledged failure affects only wildcard receives and operations with
/// the failed rank: blocking and non-blocking receives from a named live rank, and sends to it,
/// wait and complete normally.
#[test]
fn named_live_peers_are_unaffected_by_an_unacknowledged_failure() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 1)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        wait_for_failure_of(world, 2);
                        let mut buf = [0u32; 2];
                        let mut request = world.irecv(&mut buf, 1u32, Tag::Any)?;
                        go(world, 1)?;
                        assert_eq!(request.wait()?, status(1, 8, 2));
                        drop(request);
                        assert_eq!(buf, [8, 8]);
                        let mut one = [0u32];
                        assert_eq!(world.recv(&mut one, 1u32, 9)?, status(1, 9, 1));
                        assert_eq!(one, [9]);
                        assert_eq!(world.local_view()?.num_failed(), 0, "never validated");
                    }
                    1 => {
                        wait_for_go(world, 0)?;
                        world.send(&[8u32, 8], 0, 8)?;
                        world.send(&[9u32], 0, 9)?;
                    }
                    _ => world.send(&[0u8], 0, 0)?, // dies here
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §3.1: probe and iprobe describe the first matching message without consuming it
/// (`count` in elements of the probe's type), `iprobe` returns `None` while nothing matches and
/// the peer lives, a waiting `probe` completes when the message arrives, and once the peer is
/// dead with nothing buffered both return `ProcFailed`.
#[test]
fn probe_and_iprobe_follow_the_receive_rules() {
    bounded(|| {
        let results = runthrough::local(2)
            .kill_at_operation(1, 4)
            .run(|world| -> Result<()> {
                if world.rank() == 1 {
                    world.send(&[1u32, 2, 3], 0, 4)?;
                    wait_for_go(world, 0)?;
                    world.send(&[6u64], 0, 6)?;
                    world.send(&[0u8], 0, 0)?; // dies here
                    return Ok(());
                }
                assert_eq!(world.probe::<u32>(1u32, 4)?, status(1, 4, 3));
                assert_eq!(world.probe::<u8>(1u32, Tag::Any)?, status(1, 4, 12));
                assert_eq!(world.iprobe::<u16>(Source::Any, 4)?, Some(status(1, 4, 6)));
                assert_eq!(world.iprobe::<u32>(1u32, 5)?, None);
                let mut buf = [0u32; 3];
                assert_eq!(world.recv(&mut buf, 1u32, 4)?, status(1, 4, 3));
                assert_eq!(buf, [1, 2, 3]);
                assert_eq!(world.iprobe::<u32>(1u32, 4)?, None, "the recv took it");

                go(world, 1)?;
                assert_eq!(world.probe::<u64>(1u32, 6)?, status(1, 6, 1));
                assert_eq!(world.recv_vec::<u64>(1u32, 6)?, (vec![6], status(1, 6, 1)));

                assert_eq!(
                    world.probe::<u8>(1u32, 7),
                    Err(Error::ProcFailed { rank: 1 })
                );
                assert_eq!(
                    world.iprobe::<u8>(1u32, Tag::Any),
                    Err(Error::ProcFailed { rank: 1 })
                );
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// SPEC §3.1: a message longer than the receive buffer gives `Error::Truncated { needed }`
/// (elements of the buffer's type, rounded up), from `recv` and from a request; the message is
/// consumed (its first `buf.len()` elements written) and the next message is received intact.
#[test]
fn truncation_consumes_the_message_and_the_next_one_is_fine() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 1 {
                world.send(&[1u32, 2, 3, 4, 5], 0, 0)?;
                world.send(&[6u32], 0, 0)?;
                world.send(&[1u8, 2, 3, 4, 5], 0, 1)?;
                world.send(&[7u16, 8], 0, 1)?;
                return Ok(());
            }
            let mut three = [0u32; 3];
            assert_eq!(
                world.recv(&mut three, 1u32, 0),
                Err(Error::Truncated { needed: 5 })
            );
            assert_eq!(three, [1, 2, 3]);
            assert_eq!(world.recv(&mut three, 1u32, 0)?, status(1, 0, 1));
            assert_eq!(three[0], 6);

            let mut two = [0u16; 2];
            let mut request = world.irecv(&mut two, 1u32, 1)?;
            assert_eq!(request.wait(), Err(Error::Truncated { needed: 3 }));
            assert!(request.is_inactive());
            drop(request);
            assert_eq!(
                two,
                [u16::from_ne_bytes([1, 2]), u16::from_ne_bytes([3, 4])]
            );
            assert_eq!(world.recv(&mut two, 1u32, 1)?, status(1, 1, 2));
            assert_eq!(two, [7, 8]);
            assert_eq!(world.iprobe::<u8>(Source::Any, Tag::Any)?, None);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.1: bad arguments (a rank out of range, a negative rank given as `i32`, a negative
/// tag, a zero-sized element type) give a clear `Error` from every call, never a panic (the
/// non-blocking calls return it at once, like the blocking ones), and consume nothing: the
/// message waiting meanwhile is received afterwards. `TAG_UB` is valid.
#[test]
fn bad_arguments_give_errors_never_panics() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 1 {
                world.send(&[5u8], 0, 0)?;
                world.send(&[6u8], 0, runthrough::TAG_UB)?;
                return Ok(());
            }
            let out_of_range = |rank: i64| Err::<(), _>(Error::Rank { rank, size: 2 });
            let is_rank_error = |e: Error| matches!(e, Error::Rank { size: 2, .. });
            let mut buf = [0u8];

            assert_eq!(world.send(&[1u8], 2, 0), out_of_range(2));
            assert_eq!(
                world.send(&[1u8], u32::MAX, 0),
                out_of_range(u32::MAX.into())
            );
            assert_eq!(world.send(&[1u8], 1, -1), Err(Error::Tag { tag: -1 }));
            assert_eq!(world.isend(&[1u8], 5, 0).err(), out_of_range(5).err());
            assert_eq!(
                world.isend(&[1u8], 1, i32::MIN).err(),
                Some(Error::Tag {
                    tag: i32::MIN.into()
                })
            );

            assert_eq!(world.recv(&mut buf, 2u32, 0).err(), out_of_range(2).err());
            assert!(world.recv(&mut buf, -1i32, 0).is_err_and(is_rank_error));
            assert!(world
                .recv_vec::<u8>(-3i32, Tag::Any)
                .is_err_and(is_rank_error));
            assert!(world.probe::<u8>(7u32, 0).is_err_and(is_rank_error));
            assert!(world
                .iprobe::<u8>(Source::Rank(2), 0)
                .is_err_and(is_rank_error));
            assert!(world.irecv(&mut buf, 9u32, 0).is_err_and(is_rank_error));

            let bad_tag = |tag: i64| Error::Tag { tag };
            assert_eq!(world.recv(&mut buf, 1u32, -5), Err(bad_tag(-5)));
            assert_eq!(
                world.recv(&mut buf, Source::Any, Tag::Value(-1)),
                Err(bad_tag(-1))
            );
            assert_eq!(
                world.irecv(&mut buf, Source::Any, -2).err(),
                Some(bad_tag(-2))
            );
            assert_eq!(world.probe::<u8>(1u32, -3), Err(bad_tag(-3)));
            assert_eq!(world.iprobe::<u8>(Source::Any, -4), Err(bad_tag(-4)));

            let is_argument_error = |e: Error| matches!(e, Error::Argument { .. });
            let mut units = [(); 2];
            assert!(world
                .recv(&mut units, 1u32, 0)
                .is_err_and(is_argument_error));
            assert!(world.recv_vec::<()>(1u32, 0).is_err_and(is_argument_error));
            assert!(world.probe::<()>(1u32, 0).is_err_and(is_argument_error));
            assert!(world.iprobe::<()>(1u32, 0).is_err_and(is_argument_error));
            assert!(world
                .irecv(&mut units, 1u32, 0)
                .is_err_and(is_argument_error));
            assert!(world.send(&units, 1, 0).is_err_and(is_argument_error));
            assert!(world.isend(&units, 1, 0).is_err_and(is_argument_error));

            assert_eq!(world.recv(&mut buf, 1u32, 0)?, status(1, 0, 1));
            assert_eq!(buf, [5]);
            let ub = runthrough::TAG_UB;
            assert_eq!(world.recv(&mut buf, 1u32, ub)?, status(1, ub, 1));
            assert_eq!(buf, [6]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §4 fault injection (a killed rank is reported as killed): a rank killed while one of
/// its helper threads waits in a call (the rank's main thread only waiting for it in
/// `std::thread::scope`) is reported as `Killed`, not as a panic, and its peer learns of it.
#[test]
fn a_rank_killed_while_a_helper_thread_waits_is_reported_killed() {
    bounded(|| {
        let universe = runthrough::local(2);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() == 1 {
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        let mut buf = [0u8];
                        world.recv(&mut buf, 0u32, NEVER)
                    });
                });
                return Ok(());
            }
            faults.kill(1);
            assert_eq!(world.send(&[0u8], 1, 0), Err(Error::ProcFailed { rank: 1 }));
            Ok(())
        });
        outcomes(results, &[1]);
    });
}

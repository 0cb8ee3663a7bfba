// SPDX-License-Identifier: MIT OR Apache-2.0
//! MPI's non-overtaking rule and exactly-once delivery while another rank dies (SPEC §1).

mod support;

use runthrough::{wait_all, Error, Result, Source, Tag};
use support::{bounded, outcomes};

const MESSAGES: u32 = 10_000;
/// Rank 2 sends this many messages, then dies at its next call.
const DYING_SENDS: u32 = 4_999;

/// SPEC §1: 10,000 messages from rank 0 to rank 1 on three tags (blocking sends and `isend`s)
/// arrive exactly once and in sending order at a `Source::Any` / `Tag::Any` receiver, while
/// rank 2 floods rank 1 too and dies halfway. The receiver handles the `ProcFailedPending` that
/// the death causes (SPEC §3.2: it consumes nothing) by acknowledging with `validate_local`, and
/// finally receives every message rank 2 sent before dying, in order, then `ProcFailed`.
#[test]
fn ten_thousand_messages_keep_their_order_while_a_third_rank_dies() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, u64::from(DYING_SENDS) + 1)
            .run(|world| -> Result<(u32, u32)> {
                match world.rank() {
                    0 => {
                        for seq in 0..MESSAGES {
                            let tag = (seq % 3) as i32;
                            if seq % 7 == 0 {
                                world.isend(&[seq], 1, tag)?.wait()?;
                            } else {
                                world.send(&[seq], 1, tag)?;
                            }
                        }
                        Ok((MESSAGES, 0))
                    }
                    1 => receive_all(world),
                    _ => {
                        for seq in 0u32.. {
                            world.send(&[seq, seq], 1, 0)?; // dies at send DYING_SENDS + 1
                        }
                        unreachable!()
                    }
                }
            });
        let values = outcomes(results, &[2]);
        assert_eq!(values[1], Some((MESSAGES, DYING_SENDS)));
    });
}

/// Rank 1 of the test above: returns how many messages it got from ranks 0 and 2.
fn receive_all(world: &runthrough::Comm) -> Result<(u32, u32)> {
    let (mut from_zero, mut from_two) = (0u32, 0u32);
    while from_zero < MESSAGES {
        match world.recv_vec::<u32>(Source::Any, Tag::Any) {
            Ok((data, status)) => match status.source {
                Some(0) => {
                    assert_eq!(data, [from_zero], "rank 0's messages in order");
                    assert_eq!(status.tag, Some((from_zero % 3) as i32));
                    from_zero += 1;
                }
                Some(2) => {
                    assert_eq!(data, [from_two, from_two], "rank 2's messages in order");
                    from_two += 1;
                }
                other => panic!("unexpected source {other:?}"),
            },
            Err(Error::ProcFailedPending) => {
                let local = world.validate_local()?;
                assert_eq!(local.failed_set().as_slice(), &[2]);
            }
            Err(e) => return Err(e),
        }
    }
    loop {
        let mut buf = [0u32; 2];
        match world.recv(&mut buf, 2u32, Tag::Any) {
            Ok(_) => {
                assert_eq!(buf, [from_two, from_two], "rank 2's messages in order");
                from_two += 1;
            }
            Err(Error::ProcFailed { rank: 2 }) => return Ok((from_zero, from_two)),
            Err(e) => return Err(e),
        }
    }
}

/// SPEC §1 with posted receives: receives posted before their messages arrive are matched in
/// posting order (batches of 100 `irecv`s from rank 0 with `Tag::Any`, completed by `wait_all`),
/// so 10,000 messages fill them in sending order, while rank 2 dies mid-run; receives named on
/// rank 0 are unaffected by that failure.
#[test]
fn posted_receives_are_matched_in_posting_order_while_a_third_rank_dies() {
    const BATCH: usize = 100;
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 2)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        for seq in 0..MESSAGES {
                            if seq == MESSAGES / 2 {
                                world.send(&[0u8], 2, 0)?; // rank 2 dies when it receives this
                            }
                            world.send(&[seq], 1, (seq % 5) as i32)?;
                        }
                    }
                    1 => {
                        let mut next = 0u32;
                        while next < MESSAGES {
                            let mut buffers = vec![[u32::MAX]; BATCH];
                            let mut requests = buffers
                                .iter_mut()
                                .map(|b| world.irecv(b, 0u32, Tag::Any))
                                .collect::<Result<Vec<_>>>()?;
                            for (i, result) in wait_all(&mut requests).into_iter().enumerate() {
                                let status = result?;
                                let seq = next + i as u32;
                                assert_eq!(status.tag, Some((seq % 5) as i32));
                            }
                            drop(requests);
                            for (i, buffer) in buffers.iter().enumerate() {
                                assert_eq!(buffer, &[next + i as u32], "posting order");
                            }
                            next += BATCH as u32;
                        }
                    }
                    _ => {
                        let mut buf = [0u8];
                        world.recv(&mut buf, 0u32, 0)?;
                        world.send(&[0u8], 1, 0)?; // dies here
                    }
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

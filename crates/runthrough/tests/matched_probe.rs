// SPDX-License-Identifier: MIT OR Apache-2.0
//! Matched probes (`Comm::mprobe`, `Comm::improbe`, `Comm::mrecv`: `MPI_Mprobe` and friends)
//! and cancelled receives (`Request::cancel`: `MPI_Cancel`), failure-free and with a failed
//! peer (the point-to-point failure rules, SPEC §3.1 and §3.2).

mod support;

use runthrough::{Error, Result, Source, Tag};
use support::{bounded, outcomes};

const GO: i32 = 1000;

/// A matched probe takes its message out of matching: a later receive with the same source and
/// tag gets the next message, and `mrecv` the probed one. `improbe` finds nothing before the
/// sender sends, then the message; a synchronous sender completes once its message is probed.
#[test]
fn a_matched_probe_takes_its_message_out_of_matching() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                world.send(&[1u32, 11], 1, 5)?;
                world.send(&[2u32], 1, 5)?;
                let mut go = [0u8];
                world.recv(&mut go, 1u32, GO)?;
                world.issend(&[7u16], 1, 6)?.wait()?;
                return Ok(());
            }
            let first = world.mprobe(0u32, 5)?;
            let status = first.status::<u32>();
            assert_eq!(
                (status.source, status.tag, status.count),
                (Some(0), Some(5), 2)
            );
            assert_eq!(first.len(), 8);
            let mut next = [0u32];
            world.recv(&mut next, 0u32, 5)?;
            assert_eq!(next, [2], "the receive took the probed message");
            let mut buf = [0u32; 2];
            let status = world.mrecv(first, &mut buf)?;
            assert_eq!((buf, status.count), ([1, 11], 2));
            assert!(world.improbe(0u32, 6)?.is_none());
            world.send(&[0u8], 0, GO)?;
            let message = loop {
                if let Some(message) = world.improbe(Source::Any, Tag::Any)? {
                    break message;
                }
            };
            assert_eq!(message.status::<u16>().tag, Some(6));
            let mut small = [0u16];
            world.mrecv(message, &mut small)?;
            assert_eq!(small, [7]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// A message too large for `mrecv`'s buffer: `Truncated`, the part that fits written.
#[test]
fn mrecv_into_a_short_buffer_is_truncated() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                return world.send(&[1u8, 2, 3], 1, 0);
            }
            let message = world.mprobe(0u32, 0)?;
            let mut buf = [0u8; 2];
            assert_eq!(
                world.mrecv(message, &mut buf),
                Err(Error::Truncated { needed: 3 })
            );
            assert_eq!(buf, [1, 2]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// A peer that dies before sending: a matched probe of it returns `ProcFailed` (never waits
/// for ever), a wildcard one `ProcFailedPending` until the failure is acknowledged; once it is
/// recognized (validate_global), the probe gives the no-process message at once, which `mrecv`
/// completes as from `MPI_PROC_NULL` without touching the buffer.
#[test]
fn a_matched_probe_of_a_failed_peer_follows_the_receive_rules() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 1)
            .run(|world| -> Result<()> {
                if world.rank() == 2 {
                    world.barrier()?; // killed here
                    return Ok(());
                }
                assert_eq!(
                    world.mprobe(2u32, 3).err(),
                    Some(Error::ProcFailed { rank: 2 })
                );
                assert_eq!(
                    world.improbe(Source::Any, 3).err(),
                    Some(Error::ProcFailedPending)
                );
                let failed = world.validate_global()?;
                assert_eq!(failed.num_failed(), 1);
                let message = world.mprobe(2u32, 3)?;
                assert!(message.is_no_proc());
                let mut buf = [9u8];
                let status = world.mrecv(message, &mut buf)?;
                assert_eq!((status.source, status.count, buf), (None, 0, [9]));
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// A receive cancelled before any message matched it is withdrawn: the message sent after
/// goes to the next receive, and the cancelled request completes empty. A receive that a
/// message already completed is not cancelled and delivers it. Sends are never cancelled.
#[test]
fn a_receive_is_cancelled_only_before_a_message_matches_it() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                let mut go = [0u8];
                world.recv(&mut go, 1u32, GO)?;
                world.send(&[42u32], 1, 9)?;
                world.send(&[43u32], 1, 3)?;
                let mut request = world.isend(&[0u8], 1, GO)?;
                assert!(!request.cancel());
                request.wait()?;
                return Ok(());
            }
            let mut cancelled = [0u32];
            let mut request = world.irecv(&mut cancelled, 0u32, 9)?;
            assert!(request.cancel());
            let status = request.wait()?;
            assert_eq!((status.source, status.count), (None, 0));
            assert!(
                !request.cancel(),
                "an inactive request is not cancelled again"
            );
            drop(request);
            assert_eq!(cancelled, [0]);
            let mut matched = [0u32];
            let mut late = world.irecv(&mut matched, 0u32, 3)?;
            world.send(&[0u8], 0, GO)?;
            let mut got = [0u32];
            world.recv(&mut got, 0u32, 9)?;
            assert_eq!(got, [42], "the cancelled receive took nothing");
            let mut go = [0u8];
            world.recv(&mut go, 0u32, GO)?;
            // Tag 3 was sent before GO: it has completed the posted receive by now.
            assert!(!late.cancel());
            assert_eq!(late.wait()?.count, 1);
            drop(late);
            assert_eq!(matched, [43]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

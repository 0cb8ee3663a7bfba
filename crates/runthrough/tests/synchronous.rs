// SPDX-License-Identifier: MIT OR Apache-2.0
//! Synchronous sends (`Comm::ssend`, `Comm::issend`, `MPI_Ssend`): complete only once the
//! receiver matched the message; a destination that fails first is `ProcFailed` (SPEC §3.1).

mod support;

use runthrough::{Error, Result, Source, Tag};
use support::{bounded, outcomes};

const GO: i32 = 1000;

/// An `issend` stays pending while the receiver has not matched it, and it cannot have: the
/// receiver posts its receive only after a message the sender sends after its tests. A probe
/// sees the application's tag and count; a wildcard receive gets them too.
#[test]
fn an_issend_completes_only_once_matched() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                let mut request = world.issend(&[1u32, 2, 3], 1, 7)?;
                for _ in 0..100 {
                    assert_eq!(request.test(), Ok(None));
                }
                world.send(&[0u8], 1, GO)?;
                assert_eq!(request.wait()?.count, 3);
                assert!(request.is_inactive());
                return Ok(());
            }
            let mut go = [0u8];
            world.recv(&mut go, 0u32, GO)?;
            let probed = world.probe::<u32>(0u32, 7)?;
            assert_eq!((probed.tag, probed.count), (Some(7), 3));
            let mut buf = [0u32; 3];
            let status = world.recv(&mut buf, Source::Any, Tag::Any)?;
            assert_eq!((status.tag, status.count, buf), (Some(7), 3, [1, 2, 3]));
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// A receive posted before the synchronous message arrives matches it on arrival, and the
/// blocking `ssend` returns while the receiver waits in its request.
#[test]
fn an_ssend_to_a_posted_receive_returns() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 1 {
                let mut buf = [0u64];
                let mut request = world.irecv(&mut buf, 0u32, 3)?;
                world.send(&[0u8], 0, GO)?;
                request.wait()?;
                drop(request);
                assert_eq!(buf, [9]);
                return Ok(());
            }
            let mut go = [0u8];
            world.recv(&mut go, 1u32, GO)?;
            world.ssend(&[9u64], 1, 3)
        });
        outcomes(results, &[]);
    });
}

/// A destination killed before it matches the message: the pending `issend` and a blocking
/// `ssend` both return `ProcFailed`.
#[test]
fn a_destination_that_dies_before_matching_fails_the_send() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(1, 2)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        let mut request = world.issend(&[5u8], 1, 1)?;
                        world.send(&[0u8], 1, GO)?;
                        assert_eq!(request.wait(), Err(Error::ProcFailed { rank: 1 }));
                    }
                    1 => {
                        let mut go = [0u8];
                        world.recv(&mut go, 0u32, GO)?;
                        world.barrier()?; // killed here
                    }
                    _ => {
                        assert_eq!(
                            world.ssend(&[6u8], 1, 2),
                            Err(Error::ProcFailed { rank: 1 })
                        );
                    }
                }
                Ok(())
            });
        outcomes(results, &[1]);
    });
}

/// A dropped `issend` request: the message still goes and is received; the sender's later
/// synchronous sends to the same rank are unaffected.
#[test]
fn a_dropped_issend_still_delivers() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                drop(world.issend(&[1u8], 1, 1)?);
                world.ssend(&[2u8], 1, 2)?;
                return Ok(());
            }
            let mut buf = [0u8];
            world.recv(&mut buf, 0u32, 1)?;
            assert_eq!(buf, [1]);
            world.recv(&mut buf, 0u32, 2)?;
            assert_eq!(buf, [2]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}

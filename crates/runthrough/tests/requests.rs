// SPDX-License-Identifier: MIT OR Apache-2.0
//! Non-blocking requests under failure: wait, test, wait_any, wait_all with mixed outcomes
//! (SPEC §3.1 non-blocking requests, §3.2 wildcard requests that stay pending).

mod support;

use runthrough::{wait_all, wait_any, Error, Result, Source, Status, Tag};
use support::{bounded, outcomes};

const GO: i32 = 1000;
const NEVER: i32 = 999;

fn status(source: u32, tag: i32, count: usize) -> Status {
    Status {
        source: Some(source),
        tag: Some(tag),
        count,
    }
}

/// SPEC §3.1: `wait_all` returns every request's own outcome, in order, whatever the others
/// gave: a received message, `ProcFailed` for a receive from and a send to a failed rank,
/// `Truncated`, a successful send, and a receive that completes later from a live sender. Every
/// request is then inactive, and `wait_any` over them returns `None`.
#[test]
fn wait_all_returns_each_outcome_in_order() {
    bounded(|| {
        let results = runthrough::local(4)
            .kill_at_operation(3, 1)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        let mut buf = [0u8];
                        assert_eq!(
                            world.recv(&mut buf, 3u32, NEVER),
                            Err(Error::ProcFailed { rank: 3 })
                        );
                        let (mut a, mut b, mut c, mut d) = ([0u32], [0u32], [0u32; 2], [0u32]);
                        let mut requests = vec![
                            world.irecv(&mut a, 1u32, 1)?,
                            world.irecv(&mut b, 3u32, 0)?,
                            world.irecv(&mut c, 1u32, 0)?,
                            world.isend(&[5u32], 2, 0)?,
                            world.isend(&[5u32], 3, 0)?,
                            world.irecv(&mut d, 2u32, 2)?,
                        ];
                        let results = wait_all(&mut requests);
                        assert_eq!(results.len(), 6);
                        assert_eq!(results[0], Ok(status(1, 1, 1)));
                        assert_eq!(results[1], Err(Error::ProcFailed { rank: 3 }));
                        assert_eq!(results[2], Err(Error::Truncated { needed: 3 }));
                        assert!(results[3].is_ok(), "{:?}", results[3]);
                        assert_eq!(results[4], Err(Error::ProcFailed { rank: 3 }));
                        assert_eq!(results[5], Ok(status(2, 2, 1)));
                        assert!(requests.iter().all(|r| r.is_inactive()));
                        assert!(wait_any(&mut requests).is_none());
                        drop(requests);
                        assert_eq!((a, c, d), ([9], [1, 2], [10]));
                    }
                    1 => {
                        world.send(&[1u32, 2, 3], 0, 0)?;
                        world.send(&[9u32], 0, 1)?;
                    }
                    2 => {
                        let mut buf = [0u32];
                        world.recv(&mut buf, 0u32, 0)?;
                        world.send(&[buf[0] * 2], 0, 2)?;
                    }
                    _ => world.send(&[0u8], 0, 0)?, // dies here
                }
                Ok(())
            });
        outcomes(results, &[3]);
    });
}

/// SPEC §3.1–3.2: `wait_any` returns one completed request at a time (`ProcFailed` for the
/// receive whose sender died), never the same completed request twice; a wildcard receive's
/// `ProcFailedPending` counts as an outcome but leaves the request pending, so `wait_any` reports
/// it again until `validate_local` acknowledges the failure, after which it completes with a
/// live sender's message. `None` once every request is inactive, and for no requests at all.
#[test]
fn wait_any_with_mixed_outcomes() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 2)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        let (mut a, mut b, mut c) = ([0u32], [0u32], [0u32]);
                        let mut requests = vec![
                            world.irecv(&mut a, 1u32, 0)?,
                            world.irecv(&mut b, 2u32, 0)?,
                            world.irecv(&mut c, Source::Any, 7)?,
                        ];
                        world.send(&[0u8], 2, GO)?; // rank 2 dies at its next call
                                                    // The failure completes the named receive and makes the wildcard one
                                                    // pending at the same moment; wait_any scans in index order.
                        let first = wait_any(&mut requests);
                        assert_eq!(first, Some((1, Err(Error::ProcFailed { rank: 2 }))));
                        for _ in 0..3 {
                            let again = wait_any(&mut requests);
                            assert_eq!(again, Some((2, Err(Error::ProcFailedPending))));
                        }
                        assert!(!requests[2].is_inactive());
                        world.validate_local()?;

                        world.send(&[0u8], 1, GO)?;
                        let mut completed = vec![
                            wait_any(&mut requests).expect("two requests are active"),
                            wait_any(&mut requests).expect("one request is active"),
                        ];
                        completed.sort_by_key(|(index, _)| *index);
                        assert_eq!(
                            completed,
                            vec![(0, Ok(status(1, 0, 1))), (2, Ok(status(1, 7, 1)))]
                        );
                        assert!(wait_any(&mut requests).is_none());
                        assert!(wait_any(&mut []).is_none());
                        drop(requests);
                        assert_eq!((a, c), ([10], [17]));
                    }
                    1 => {
                        let mut go = [0u8];
                        world.recv(&mut go, 0u32, GO)?;
                        world.send(&[10u32], 0, 0)?;
                        world.send(&[17u32], 0, 7)?;
                    }
                    _ => {
                        let mut go = [0u8];
                        world.recv(&mut go, 0u32, GO)?;
                        world.send(&[0u32], 0, 0)?; // dies here
                    }
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

/// SPEC §1 (messages between live ranks are never lost): dropping a pending receive request
/// withdraws its receive, so the message it would have matched goes to the next receive.
#[test]
fn dropping_a_pending_request_withdraws_its_receive() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 1 {
                let mut go = [0u8];
                world.recv(&mut go, 0u32, GO)?;
                world.send(&[42u32], 0, 3)?;
                world.send(&[43u32], 0, 4)?;
                return Ok(());
            }
            let mut named = [0u32];
            let mut wildcard = [0u32];
            let request = world.irecv(&mut named, 1u32, 3)?;
            let mut other = world.irecv(&mut wildcard, Source::Any, Tag::Any)?;
            assert_eq!(other.test(), Ok(None));
            drop(request);
            drop(other);
            world.send(&[0u8], 1, GO)?;
            let mut buf = [0u32];
            assert_eq!(world.recv(&mut buf, 1u32, 3)?, status(1, 3, 1));
            assert_eq!(buf, [42]);
            assert_eq!(
                world.recv(&mut buf, Source::Any, Tag::Any)?,
                status(1, 4, 1)
            );
            assert_eq!(buf, [43]);
            assert_eq!(
                (named, wildcard),
                ([0], [0]),
                "dropped requests wrote nothing"
            );
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §3.1 (requests, as `MPI_REQUEST_NULL` after completion): a request returns its outcome
/// once; afterwards it is inactive and `wait`/`test` return an empty status at once, errors
/// included (a `ProcFailed` is not reported twice).
#[test]
fn a_completed_request_is_inactive() {
    bounded(|| {
        let results = runthrough::local(3)
            .kill_at_operation(2, 1)
            .run(|world| -> Result<()> {
                match world.rank() {
                    0 => {
                        let empty = Status {
                            source: None,
                            tag: None,
                            count: 0,
                        };
                        let mut buf = [0u32];
                        let mut request = world.irecv(&mut buf, 1u32, 0)?;
                        assert_eq!(request.wait()?, status(1, 0, 1));
                        assert!(request.is_inactive());
                        assert_eq!(request.wait()?, empty);
                        assert_eq!(request.test()?, Some(empty));
                        drop(request);

                        let mut request = world.irecv(&mut buf, 2u32, 0)?;
                        assert_eq!(request.wait(), Err(Error::ProcFailed { rank: 2 }));
                        assert_eq!(request.wait()?, empty);
                    }
                    1 => world.send(&[1u32], 0, 0)?,
                    _ => world.send(&[1u32], 0, 5)?, // dies here
                }
                Ok(())
            });
        outcomes(results, &[2]);
    });
}

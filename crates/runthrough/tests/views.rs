// SPDX-License-Identifier: MIT OR Apache-2.0
//! The local view L on the in-process runtime: `validate_local`, the NEW / OLD modifiers, the
//! accessors, and views as snapshot values shared between a rank's threads (SPEC §2, §2.1).
//!
//! Failures are injected with [`runthrough::FaultHandle::kill`], which returns only once every
//! peer's detector knows of the death, so what `validate_local` sees is deterministic.

mod support;

use std::collections::BTreeMap;
use std::sync::{mpsc, Barrier};

use runthrough::{Comm, Error, FailureView, Rank, RankInfo, RankState, Result};
use support::{bounded, outcomes};

const NEVER: i32 = 999;

/// What a rank that is about to be killed does: wait in a receive that is never matched.
fn wait_to_be_killed(world: &Comm) -> Result<()> {
    let mut buf = [0u8];
    world.recv(&mut buf, 0u32, NEVER)?;
    unreachable!("rank {} was to be killed", world.rank());
}

fn info(rank: Rank, state: RankState) -> RankInfo {
    RankInfo { rank, state }
}

fn ranks(view: &FailureView, query: RankState) -> Vec<Rank> {
    view.ranks(query).map(|info| info.rank).collect()
}

/// SPEC §2 and §2.1: with no failure, `validate_local` returns an empty view (`num_failed` 0,
/// no new failures), every rank `OK` and out-of-range ranks `None`; G is empty and stays so
/// (only `validate_global` updates it).
#[test]
fn without_failures_every_rank_is_ok() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| -> Result<()> {
            let local = world.validate_local()?;
            assert_eq!(local.num_failed(), 0);
            assert!(!local.new_failures());
            assert_eq!(local.size(), 3);
            for rank in 0..3 {
                assert_eq!(local.state_of(rank), Some(RankState::OK));
            }
            assert_eq!(local.state_of(3), None);
            assert_eq!(local.count(RankState::OK), 3);
            assert_eq!(local.count(RankState::FAILED | RankState::NULL), 0);
            assert_eq!(local.count(RankState::empty()), 0);
            assert_eq!(world.local_view()?, local);
            let global = world.global_view()?;
            assert_eq!((global.num_failed(), global.new_failures()), (0, false));
            Ok(())
        });
        outcomes(results, &[]);
    });
}

/// SPEC §2.1 validate_local: L := G ∪ {failures the detector knows now}; ranks entering L are
/// `FAILED | NEW`, ranks already in L become `FAILED | OLD`; `num_failed` = |L| and
/// `new_failures` = whether any rank is NEW. A validate with nothing new leaves every rank OLD.
/// G stays empty throughout (FAILED, never NULL).
#[test]
fn successive_validate_local_calls_move_ranks_from_new_to_old() {
    bounded(|| {
        let universe = runthrough::local(6);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() != 0 {
                if [1, 3, 4].contains(&world.rank()) {
                    wait_to_be_killed(world)?;
                }
                return Ok(());
            }
            let failed = |state| RankState::FAILED | state;
            faults.kill(3);
            let first = world.validate_local()?;
            assert_eq!((first.num_failed(), first.new_failures()), (1, true));
            assert_eq!(first.state_of(3), Some(failed(RankState::NEW)));

            let second = world.validate_local()?;
            assert_eq!((second.num_failed(), second.new_failures()), (1, false));
            assert_eq!(second.state_of(3), Some(failed(RankState::OLD)));

            faults.kill(1);
            faults.kill(4);
            let third = world.validate_local()?;
            assert_eq!((third.num_failed(), third.new_failures()), (3, true));
            assert_eq!(
                third.failed(),
                &[
                    info(1, failed(RankState::NEW)),
                    info(3, failed(RankState::OLD)),
                    info(4, failed(RankState::NEW)),
                ]
            );
            for rank in [0, 2, 5] {
                assert_eq!(third.state_of(rank), Some(RankState::OK));
            }

            let fourth = world.validate_local()?;
            assert_eq!((fourth.num_failed(), fourth.new_failures()), (3, false));
            assert_eq!(ranks(&fourth, RankState::OLD), vec![1, 3, 4]);
            assert_eq!(
                world.global_view()?.num_failed(),
                0,
                "G only by validate_global"
            );
            assert_eq!(fourth.count(RankState::NULL), 0);
            Ok(())
        });
        outcomes(results, &[1, 3, 4]);
    });
}

/// SPEC §2 queries, on a view the runtime produced (L = {1 FAILED|NEW, 3 FAILED|OLD,
/// 4 FAILED|NEW} of 6): a rank matches when its state bit is in the query (no state bit means
/// FAILED|NULL) and, when failed, the query has no modifier or its modifier; OK ranks match only
/// queries with OK, whatever the modifiers; results in rank order. And `get_state`'s three
/// incount cases (0; >= m; 0 < incount < m gives `Size { needed: m }` after writing incount).
#[test]
fn accessors_on_a_runtime_view_follow_the_query_rule() {
    bounded(|| {
        let universe = runthrough::local(6);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() != 0 {
                if [1, 3, 4].contains(&world.rank()) {
                    wait_to_be_killed(world)?;
                }
                return Ok(());
            }
            faults.kill(3);
            world.validate_local()?;
            faults.kill(1);
            faults.kill(4);
            let view = world.validate_local()?;
            let (ok, failed, null) = (RankState::OK, RankState::FAILED, RankState::NULL);
            let (new, old) = (RankState::NEW, RankState::OLD);
            let cases: [(RankState, &[Rank]); 12] = [
                (RankState::empty(), &[1, 3, 4]),
                (new, &[1, 4]),
                (old, &[3]),
                (new | old, &[1, 3, 4]),
                (failed, &[1, 3, 4]),
                (failed | new, &[1, 4]),
                (failed | old, &[3]),
                (null, &[]),
                (null | new, &[]),
                (ok, &[0, 2, 5]),
                (ok | new, &[0, 2, 5]),
                (ok | failed | new, &[0, 1, 2, 4, 5]),
            ];
            for (query, expected) in cases {
                assert_eq!(ranks(&view, query), expected, "query {query:?}");
                assert_eq!(view.count(query), expected.len(), "count {query:?}");
            }
            let all = RankState::OK | RankState::FAILED | RankState::NULL;
            assert_eq!(ranks(&view, all), vec![0, 1, 2, 3, 4, 5]);

            let query = RankState::FAILED;
            assert_eq!(view.get_state(query, &mut []), Ok(3));
            let unwritten = info(99, RankState::OK);
            let mut big = [unwritten; 5];
            assert_eq!(view.get_state(query, &mut big), Ok(3));
            assert_eq!(&big[..3], view.failed());
            assert_eq!(&big[3..], &[unwritten; 2]);
            let mut small = [unwritten; 2];
            assert_eq!(
                view.get_state(query, &mut small),
                Err(Error::Size { needed: 3 })
            );
            assert_eq!(small, [view.failed()[0], view.failed()[1]]);
            let mut oks = [unwritten; 2];
            assert_eq!(
                view.get_state(RankState::OK, &mut oks),
                Err(Error::Size { needed: 3 }),
                "m counts matches, not |L|"
            );
            assert_eq!(oks, [info(0, RankState::OK), info(2, RankState::OK)]);

            assert_eq!(world.local_view()?, view, "accessors never modify L");
            Ok(())
        });
        outcomes(results, &[1, 3, 4]);
    });
}

/// SPEC §2 ("between updates the views do not change, however many failures the detector learns
/// of meanwhile"): `local_view` describes the last `validate_local`, not the detector; the next
/// `validate_local` picks up everything learned since.
#[test]
fn views_change_only_at_update_calls() {
    bounded(|| {
        let universe = runthrough::local(4);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            match world.rank() {
                0 => {
                    faults.kill(2);
                    assert_eq!(world.local_view()?.num_failed(), 0, "detector knows, L not");
                    let first = world.validate_local()?;
                    assert_eq!(first.failed_set().as_slice(), &[2]);
                    faults.kill(3);
                    assert_eq!(world.local_view()?, first);
                    assert_eq!(world.global_view()?.num_failed(), 0);
                    let second = world.validate_local()?;
                    assert_eq!(second.failed_set().as_slice(), &[2, 3]);
                    assert_eq!(world.local_view()?, second);
                    world.send(&[0u8], 1, 0)?;
                }
                1 => {
                    // Rank 1's detector knows both failures, but its L is empty until it asks.
                    let mut buf = [0u8];
                    world.recv(&mut buf, 0u32, 0)?;
                    assert_eq!(world.local_view()?.num_failed(), 0);
                    let local = world.validate_local()?;
                    assert_eq!(
                        local.failed(),
                        &[
                            info(2, RankState::FAILED | RankState::NEW),
                            info(3, RankState::FAILED | RankState::NEW)
                        ]
                    );
                }
                _ => wait_to_be_killed(world)?,
            }
            Ok(())
        });
        outcomes(results, &[2, 3]);
    });
}

/// SPEC §2.1 ("views are values"): a view returned to one thread is not changed by another
/// thread's later `validate_local` on the same rank's communicator, and `new_since` gives the
/// failures the first thread has not seen, whatever the other thread validated in between (even
/// once they are OLD in the newest view).
#[test]
fn snapshots_are_unchanged_by_another_threads_validate_local() {
    bounded(|| {
        let universe = runthrough::local(5);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() != 0 {
                if [1, 3].contains(&world.rank()) {
                    wait_to_be_killed(world)?;
                }
                return Ok(());
            }
            faults.kill(3);
            let faults = &faults;
            let (to_second, at_second) = mpsc::channel::<()>();
            let (to_first, at_first) = mpsc::channel::<FailureView>();
            std::thread::scope(|scope| {
                let second = scope.spawn(move || -> Result<FailureView> {
                    at_second.recv().expect("first thread validated");
                    faults.kill(1);
                    let newer = world.validate_local()?;
                    to_first.send(newer.clone()).expect("first thread waits");
                    at_second.recv().expect("first thread checked");
                    world.validate_local() // nothing new: 1 and 3 both OLD now
                });
                let mine = world.validate_local()?;
                let before = (
                    mine.failed().to_vec(),
                    mine.num_failed(),
                    mine.new_failures(),
                );
                to_second.send(()).expect("second thread waits");
                let newer = at_first.recv().expect("second thread validated");

                assert_eq!(
                    (
                        mine.failed().to_vec(),
                        mine.num_failed(),
                        mine.new_failures()
                    ),
                    before,
                    "my snapshot did not change"
                );
                assert_eq!(mine.state_of(1), Some(RankState::OK));
                assert_eq!(mine.state_of(3), Some(RankState::FAILED | RankState::NEW));
                assert_eq!(
                    newer.new_since(&mine),
                    vec![info(1, RankState::FAILED | RankState::NEW)]
                );
                assert_eq!(world.local_view()?, newer);
                to_second.send(()).expect("second thread waits");

                let newest = second.join().expect("second thread")?;
                assert!(!newest.new_failures());
                assert_eq!(
                    newest.new_since(&mine),
                    vec![info(1, RankState::FAILED | RankState::OLD)],
                    "what I have not seen, though another thread saw it NEW"
                );
                assert!(newest.new_since(&newer).is_empty());
                assert_eq!(mine.state_of(1), Some(RankState::OK), "still unchanged");
                Ok(())
            })
        });
        outcomes(results, &[1, 3]);
    });
}

/// SPEC §2.1 ("update calls on one communicator are linearized"): eight threads of one rank
/// call `validate_local` over and over while a ninth kills ranks one by one. Each thread sees L
/// grow monotonically and always as a prefix of the kill order, and across all threads each
/// killed rank is NEW in exactly one returned view (the first update that included it).
#[test]
fn concurrent_validate_local_calls_are_linearized() {
    const THREADS: usize = 8;
    const CALLS: usize = 300;
    let kill_order: [Rank; 5] = [5, 2, 7, 1, 4];
    bounded(move || {
        let universe = runthrough::local(8);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() != 0 {
                if kill_order.contains(&world.rank()) {
                    wait_to_be_killed(world)?;
                }
                return Ok(());
            }
            let start = Barrier::new(THREADS + 1);
            let views: Vec<Vec<FailureView>> = std::thread::scope(|scope| {
                let validators: Vec<_> = (0..THREADS)
                    .map(|_| {
                        scope.spawn(|| -> Result<Vec<FailureView>> {
                            start.wait();
                            (0..CALLS).map(|_| world.validate_local()).collect()
                        })
                    })
                    .collect();
                start.wait();
                for &rank in &kill_order {
                    faults.kill(rank);
                    std::thread::yield_now();
                }
                validators
                    .into_iter()
                    .map(|v| v.join().expect("validator thread"))
                    .collect::<Result<_>>()
            })?;
            let last = world.validate_local()?;
            let mut times_new: BTreeMap<Rank, usize> = BTreeMap::new();
            for thread in views.iter() {
                let mut previous = 0;
                for view in thread.iter().chain(std::iter::once(&last)) {
                    let failed = view.failed_set();
                    let mut prefix = kill_order[..failed.len()].to_vec();
                    prefix.sort_unstable();
                    assert_eq!(failed.as_slice(), prefix, "L is a prefix of the kill order");
                    assert!(failed.len() >= previous, "L only grows");
                    previous = failed.len();
                }
            }
            for view in views.iter().flatten().chain(std::iter::once(&last)) {
                for info in view.ranks(RankState::NEW) {
                    *times_new.entry(info.rank).or_default() += 1;
                }
            }
            let expected: BTreeMap<Rank, usize> = kill_order.iter().map(|&r| (r, 1)).collect();
            assert_eq!(times_new, expected, "each rank NEW in exactly one view");
            Ok(())
        });
        outcomes(results, &kill_order);
    });
}

/// SPEC §5 (`MPIX_Comm_get_failed` / `MPIX_Comm_ack_failed`): `detected_failures` lists the
/// failures in the order this rank's detector learned of them (4, then 1: not rank order), only
/// ever appended to; `acknowledge_failures(k)` puts the first k in L (FAILED | NEW), never takes
/// one back, and with every known failure acknowledged a wildcard receive no longer reports
/// `ProcFailedPending`.
#[test]
fn failures_are_listed_in_detection_order_and_acknowledged_by_prefix() {
    bounded(|| {
        let universe = runthrough::local(5);
        let faults = universe.fault_handle();
        let results = universe.run(|world| -> Result<()> {
            if world.rank() != 0 {
                if [1, 4].contains(&world.rank()) {
                    wait_to_be_killed(world)?;
                }
                return Ok(());
            }
            assert_eq!(world.detected_failures()?, Vec::<Rank>::new());
            faults.kill(4);
            assert_eq!(world.detected_failures()?, vec![4]);
            faults.kill(1);
            assert_eq!(world.detected_failures()?, vec![4, 1]);
            let none = world.acknowledge_failures(0)?;
            assert_eq!(none.num_failed(), 0);
            let first = world.acknowledge_failures(1)?;
            assert_eq!(
                first.failed(),
                &[info(4, RankState::FAILED | RankState::NEW)]
            );
            let mut buf = [0u8];
            assert_eq!(
                world.iprobe::<u8>(runthrough::Source::Any, 0),
                Err(Error::ProcFailedPending)
            );
            let again = world.acknowledge_failures(0)?;
            assert_eq!(ranks(&again, RankState::FAILED), vec![4], "not taken back");
            let both = world.acknowledge_failures(10)?;
            assert_eq!(
                both.failed(),
                &[
                    info(1, RankState::FAILED | RankState::NEW),
                    info(4, RankState::FAILED | RankState::OLD),
                ]
            );
            assert_eq!(world.iprobe::<u8>(runthrough::Source::Any, 0), Ok(None));
            world.send(&[7u8], 0, 0)?;
            assert_eq!(
                world.recv(&mut buf, runthrough::Source::Any, 0)?.source,
                Some(0)
            );
            assert_eq!(world.detected_failures()?, vec![4, 1]);
            Ok(())
        });
        outcomes(results, &[1, 4]);
    });
}

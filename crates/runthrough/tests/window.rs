// SPDX-License-Identifier: MIT OR Apache-2.0
//! One-sided communication (`Window`): what each epoch kind guarantees, atomicity of
//! accumulates and of exclusive locks, bad input refused at the call with the target
//! unharmed, and failures: a target or an origin that dies before, inside or after an epoch
//! ends the calls that depend on it with `ProcFailed` (never a hang), a lock held by a dead
//! rank is released, a revoked window refuses everything, and a window rebuilt over `shrink`'s
//! communicator carries on.

mod support;

use runthrough::{Comm, Error, Op, Rank, RmaOp};
use support::{bounded, outcomes};

/// Returns once the window is made at every rank that matters: each rank of `victims` waits
/// for a word from every other rank, sent after that rank's window was made. A victim that
/// dies after this cannot end another rank's window creation with an error.
fn made_everywhere(world: &Comm, victims: &[Rank]) -> Result<(), Error> {
    let me = world.rank();
    for &victim in victims.iter().filter(|&&v| v != me) {
        world.send(&[0u8], victim, 77)?;
    }
    if victims.contains(&me) {
        for from in (0..world.size()).filter(|&r| r != me) {
            world.recv(&mut [0u8], from, 77)?;
        }
    }
    Ok(())
}

/// Between two fences every rank's puts, gets and accumulates land: each rank writes its
/// number into slot `me` of every other rank and adds to slot `n` of rank 0; a get after the
/// second fence reads what a neighbour received.
#[test]
fn fence_epochs_deliver_puts_and_accumulates_everywhere() {
    bounded(|| {
        for n in [1u32, 2, 3, 5] {
            let results = runthrough::local(n).run(move |world| {
                let me = world.rank();
                let window = world.window_allocate::<u64>(n as usize + 1)?;
                window.fence()?;
                for target in 0..n {
                    window.put(&[u64::from(me) + 100], target, me as usize)?;
                }
                window.accumulate(&[u64::from(me) + 1], 0, n as usize, Op::Sum)?;
                window.fence()?;
                let next = window.get((me + 1) % n, 0, n as usize)?;
                window.fence()?;
                let mine = window.free()?;
                Ok::<_, Error>((mine, next))
            });
            for (rank, got) in outcomes(results, &[]).into_iter().enumerate() {
                let (mine, next) = got.unwrap();
                let row: Vec<u64> = (0..u64::from(n)).map(|r| r + 100).collect();
                assert_eq!(&mine[..n as usize], &row[..], "n {n} rank {rank}");
                assert_eq!(next, row, "n {n} rank {rank}");
                let total = if rank == 0 {
                    u64::from(n) * u64::from(n + 1) / 2
                } else {
                    0
                };
                assert_eq!(mine[n as usize], total, "n {n} rank {rank}");
            }
        }
    });
}

/// Fetch-and-add from every rank under shared locks is atomic: the values fetched are exactly
/// 0..n*k, each once, and the counter ends at n*k.
#[test]
fn fetch_and_op_is_atomic_under_shared_locks() {
    bounded(|| {
        const K: u64 = 40;
        let results = runthrough::local(4).run(|world| {
            let window = world.window_allocate::<u64>(1)?;
            window.lock_all()?;
            let mut fetched = Vec::new();
            for _ in 0..K {
                fetched.push(window.fetch_and_op(1, 0, 0, Op::Sum)?);
            }
            window.unlock_all()?;
            world.barrier()?;
            let mut all = vec![0u64; 4 * K as usize];
            world.all_gather(&fetched, &mut all)?;
            let counter = window.free()?;
            Ok::<_, Error>((all, counter))
        });
        for (rank, got) in outcomes(results, &[]).into_iter().enumerate() {
            let (mut all, counter) = got.unwrap();
            all.sort_unstable();
            assert_eq!(all, (0..4 * K).collect::<Vec<_>>(), "rank {rank}");
            if rank == 0 {
                assert_eq!(counter, vec![4 * K]);
            }
        }
    });
}

/// An exclusive lock excludes: a read-modify-write of rank 0's counter by get and put under
/// it loses no increment.
#[test]
fn exclusive_locks_serialize_read_modify_write() {
    bounded(|| {
        const K: u32 = 25;
        let results = runthrough::local(4).run(|world| {
            let window = world.window_allocate::<u32>(1)?;
            for _ in 0..K {
                window.lock(0, true)?;
                let value = window.get(0, 0, 1)?[0];
                window.put(&[value + 1], 0, 0)?;
                window.unlock(0)?;
            }
            world.barrier()?;
            window.free()
        });
        let values = outcomes(results, &[]);
        assert_eq!(values[0].as_ref().unwrap(), &vec![4 * K]);
    });
}

/// Compare-and-swap swaps only on a match and returns the old value; get-accumulate with
/// `NoOp` reads atomically, with `Replace` writes and returns the old contents.
#[test]
fn compare_and_swap_and_get_accumulate_return_the_old_contents() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| {
            let window = world.window_create(vec![5i64, 6, 7])?;
            window.fence()?;
            let mut seen = Vec::new();
            if world.rank() == 0 {
                seen.push(window.compare_and_swap(4, 40, 1, 0)?); // no match
                seen.push(window.compare_and_swap(5, 50, 1, 0)?); // match
                seen.extend(window.get_accumulate(&[0, 0], 1, 1, RmaOp::NoOp)?);
                seen.extend(window.get_accumulate(&[60, 70], 1, 1, RmaOp::Replace)?);
                seen.push(window.fetch_and_op(3, 1, 2, Op::Max)?);
            }
            window.fence()?;
            let mine = window.free()?;
            Ok::<_, Error>((seen, mine))
        });
        let values = outcomes(results, &[]);
        let (seen, _) = values[0].clone().unwrap();
        assert_eq!(seen, vec![5, 5, 6, 7, 6, 7, 70]);
        let (_, target) = values[1].clone().unwrap();
        assert_eq!(target, vec![50, 60, 70]);
    });
}

/// Post / start / complete / wait: the origins' puts are in the target's array when its wait
/// returns, and test reports false until every origin completed.
#[test]
fn post_start_complete_wait_delivers_to_the_target() {
    bounded(|| {
        let results = runthrough::local(3).run(|world| {
            let me = world.rank();
            let window = world.window_allocate::<u32>(3)?;
            if me == 0 {
                window.post(&[1, 2])?;
                window.wait()?;
                // A second exposure, ended by polling test.
                window.post(&[1, 2])?;
                while !window.test()? {}
            } else {
                for round in 0..2u32 {
                    window.start(&[0])?;
                    window.put(&[me * 10 + round], 0, me as usize)?;
                    window.complete()?;
                }
            }
            let got = window.local();
            world.barrier()?;
            window.free()?;
            Ok::<_, Error>(got)
        });
        let values = outcomes(results, &[]);
        assert_eq!(values[0].as_ref().unwrap(), &vec![0, 11, 21]);
    });
}

/// Bad input is refused at the call, with the target's array unchanged: past the end,
/// outside any epoch, an unlock without a lock, a lock taken twice, a rank outside the group,
/// a bitwise operation on floats (refused by the target: reported by the completing call),
/// freeing while holding a lock.
#[test]
fn bad_input_is_refused_and_the_target_is_unharmed() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| {
            let window = world.window_create(vec![1.5f64; 4])?;
            let peer = 1 - world.rank();
            // No epoch yet.
            assert!(matches!(
                window.put(&[9.0], peer, 0),
                Err(Error::RmaSync { .. })
            ));
            assert!(matches!(window.unlock(peer), Err(Error::RmaSync { .. })));
            window.fence()?;
            assert!(matches!(
                window.put(&[9.0; 2], peer, 3),
                Err(Error::RmaRange { .. })
            ));
            assert!(matches!(
                window.get(peer, 5, 0),
                Err(Error::RmaRange { .. })
            ));
            assert!(matches!(window.put(&[9.0], 2, 0), Err(Error::Rank { .. })));
            window.accumulate(&[9.0], peer, 0, Op::BitXor)?;
            assert!(matches!(window.flush_all(), Err(Error::RmaRange { .. })));
            window.fence()?;
            assert_eq!(window.local(), vec![1.5; 4]);
            window.lock(peer, false)?;
            assert!(matches!(
                window.lock(peer, true),
                Err(Error::RmaSync { .. })
            ));
            window.unlock(peer)?;
            world.barrier()?;
            window.lock(peer, false)?;
            world.barrier()?;
            // Freeing with a lock held is refused (the window is released here only).
            let freed = window.free().map(drop);
            world.barrier()?;
            Ok::<_, Error>(freed)
        });
        for (rank, outcome) in results.into_iter().enumerate() {
            let got = outcome.returned().expect("no rank dies");
            assert!(
                matches!(got, Ok(Err(Error::RmaSync { .. }))),
                "rank {rank}: {got:?}"
            );
        }
    });
}

/// A target that died before the epoch: a fence reports it (the barrier's rule), and once the
/// survivors recognized it (`validate_global`), an operation on it completes with `ProcFailed`
/// at the fence that ends its epoch, while the operations between survivors land.
#[test]
fn a_target_dead_before_the_epoch_fails_its_operations_at_the_fence() {
    bounded(|| {
        let universe = runthrough::local(3);
        let handle = universe.fault_handle();
        let results = universe.run(move |world| {
            let me = world.rank();
            let window = world.window_allocate::<u32>(3)?;
            made_everywhere(world, &[2])?;
            if me == 2 {
                handle.kill(2);
                world.barrier()?; // unwinds here
            }
            assert!(matches!(window.fence(), Err(Error::ProcFailed { rank: 2 })));
            window.comm().validate_global()?;
            window.fence()?;
            window.put(&[7], 2, 0)?;
            window.put(&[me + 1], 1 - me, me as usize)?;
            assert_eq!(window.fence(), Err(Error::ProcFailed { rank: 2 }));
            // A get from the dead rank fails at once; the epoch goes on.
            assert_eq!(window.get(2, 0, 1), Err(Error::ProcFailed { rank: 2 }));
            window.fence()?;
            let got = window.local();
            window.free()?;
            Ok::<_, Error>(got)
        });
        let values = outcomes(results, &[2]);
        assert_eq!(values[0].as_ref().unwrap(), &vec![0, 2, 0]);
        assert_eq!(values[1].as_ref().unwrap(), &vec![1, 0, 0]);
    });
}

/// A target that dies inside a lock epoch: the operations it had applied stay applied (the
/// flush before its death succeeds), later ones end with `ProcFailed` at the unlock, and a
/// new lock on it is refused.
#[test]
fn a_target_dead_inside_a_lock_epoch_fails_the_unlock() {
    bounded(|| {
        let universe = runthrough::local(2);
        let handle = universe.fault_handle();
        let results = universe.run(move |world| {
            let window = world.window_allocate::<u32>(1)?;
            if world.rank() == 1 {
                world.recv(&mut [0u8], 0u32, 0)?; // waits to be killed
                unreachable!("rank 1 is killed while it waits");
            }
            window.lock(1, true)?;
            window.put(&[1], 1, 0)?;
            window.flush(1)?;
            handle.kill(1);
            window.put(&[2], 1, 0)?;
            assert_eq!(window.unlock(1), Err(Error::ProcFailed { rank: 1 }));
            assert_eq!(window.lock(1, false), Err(Error::ProcFailed { rank: 1 }));
            Ok::<_, Error>(())
        });
        outcomes(results, &[1]);
    });
}

/// A rank that dies holding an exclusive lock: the target releases it, and the next rank
/// asking for that lock gets it (no survivor waits for ever).
#[test]
fn a_lock_held_by_a_dead_rank_is_released() {
    bounded(|| {
        let universe = runthrough::local(3);
        let handle = universe.fault_handle();
        let results = universe.run(move |world| {
            let me = world.rank();
            let window = world.window_allocate::<u32>(1)?;
            made_everywhere(world, &[1])?;
            match me {
                1 => {
                    window.lock(0, true)?;
                    window.put(&[11], 0, 0)?;
                    window.flush(0)?;
                    world.send(&[1u8], 2, 0)?;
                    handle.kill(1);
                    world.barrier()?; // unwinds here
                    unreachable!("rank 1 is killed");
                }
                2 => {
                    world.recv(&mut [0u8], 1u32, 0)?;
                    window.lock(0, true)?;
                    let seen = window.get(0, 0, 1)?[0];
                    window.unlock(0)?;
                    world.send(&[0u8], 0, 9)?;
                    Ok::<_, Error>(seen)
                }
                _ => {
                    // Rank 0 takes part in nothing: its window is served while it waits.
                    world.recv(&mut [0u8], 2u32, 9)?;
                    Ok(0)
                }
            }
        });
        let values = outcomes(results, &[1]);
        assert_eq!(values[2], Some(11));
    });
}

/// Generalized active target with deaths: an origin that dies before completing makes the
/// target's wait return `ProcFailed` (after the live origins' puts landed), and a target that
/// died before posting makes a start naming it return `ProcFailed`.
#[test]
fn post_start_complete_wait_with_a_dead_origin_or_target() {
    bounded(|| {
        let universe = runthrough::local(4);
        let handle = universe.fault_handle();
        let results = universe.run(move |world| {
            let me = world.rank();
            let window = world.window_allocate::<u32>(4)?;
            made_everywhere(world, &[2, 3])?;
            match me {
                0 => {
                    window.post(&[1, 2])?;
                    assert_eq!(window.wait(), Err(Error::ProcFailed { rank: 2 }));
                    let got = window.local();
                    assert_eq!(got, vec![0, 1, 0, 0]);
                }
                1 => {
                    window.start(&[0])?;
                    window.put(&[1], 0, 1)?;
                    window.complete()?;
                    assert_eq!(window.start(&[3]), Err(Error::ProcFailed { rank: 3 }));
                }
                _ => {
                    handle.kill(me);
                    world.barrier()?; // unwinds here
                }
            }
            Ok::<_, Error>(())
        });
        outcomes(results, &[2, 3]);
    });
}

/// A revoked window refuses every later operation and synchronization at every rank, and a
/// window made over `shrink`'s communicator carries on.
#[test]
fn a_revoked_window_is_rebuilt_over_the_shrunk_communicator() {
    bounded(|| {
        let universe = runthrough::local(3);
        let handle = universe.fault_handle();
        let results = universe.run(move |world| {
            let me = world.rank();
            let window = world.window_allocate::<u32>(1)?;
            made_everywhere(world, &[2])?;
            if me == 2 {
                handle.kill(2);
                world.barrier()?; // unwinds here
            }
            // Both survivors know of the death before the revocation.
            assert_eq!(
                world.recv(&mut [0u8], 2u32, 5),
                Err(Error::ProcFailed { rank: 2 })
            );
            if me == 0 {
                window.revoke()?;
                world.send(&[0u8], 1, 0)?;
            } else {
                world.recv(&mut [0u8], 0u32, 0)?; // after the revocation, on the same link
            }
            assert_eq!(window.lock(0, false), Err(Error::Revoked));
            assert_eq!(window.fence(), Err(Error::Revoked));
            assert_eq!(window.post(&[0]), Err(Error::Revoked));
            let failed = window.failed()?;
            let survivors: Comm = window.comm().shrink()?;
            drop(window);
            let rebuilt = survivors.window_allocate::<u32>(1)?;
            rebuilt.fence()?;
            rebuilt.accumulate(&[me + 1], 0, 0, Op::Sum)?;
            rebuilt.fence()?;
            let got = rebuilt.free()?;
            Ok::<_, Error>((failed, got))
        });
        let values = outcomes(results, &[2]);
        assert_eq!(values[0].clone().unwrap(), (vec![2 as Rank], vec![3]));
    });
}

/// Under the deterministic simulator with up to two random kills, a window program that agrees
/// on each fence epoch's outcome and retries it after `validate_global` never hangs and never
/// panics, over many seeds: every survivor ends, and failure-free runs count every accumulate. (The simulator's
/// scheduler interleaves every library call; a hang or a lost wake-up in the window's
/// protocol shows as a hang here.)
#[test]
fn windows_under_the_simulator_with_random_kills_never_hang() {
    bounded(|| {
        let program = |world: &Comm| -> Result<u64, Error> {
            let window = world.window_allocate::<u64>(1)?;
            let comm = window.comm();
            for _ in 0..5 {
                let g = comm.validate_global()?;
                let target = (0..comm.size())
                    .find(|&r| g.state_of(r) == Some(runthrough::RankState::OK))
                    .unwrap_or(0);
                let epoch = window
                    .fence()
                    .and_then(|()| window.accumulate(&[1], target, 0, Op::Sum))
                    .and_then(|()| window.fence());
                // A fence can succeed at some ranks and fail at others: agree on the outcome
                // (a survivor that returned alone would leave the others in validate_global).
                let all_ok = match comm.agree(u32::from(epoch.is_ok())) {
                    Ok(flag) => flag == 1,
                    Err(Error::AgreeProcFailed { .. }) => false,
                    Err(e) => return Err(e),
                };
                if all_ok {
                    return Ok(window.local()[0]);
                }
            }
            Err(Error::ProcFailed { rank: 0 })
        };
        let mut failure_free = 0;
        for seed in 0..400u64 {
            let run = runthrough::simulate(4)
                .seed(seed)
                .random_kills(2)
                .run(program);
            assert!(run.hang.is_none(), "seed {seed}: {:?}", run.hang);
            assert!(
                run.violations.is_empty(),
                "seed {seed}: {:?}",
                run.violations
            );
            if run.fired.is_empty() {
                failure_free += 1;
                let counts: Vec<u64> = run
                    .outcomes
                    .into_iter()
                    .map(|o| o.returned().expect("no kill fired").expect("no failure"))
                    .collect();
                assert_eq!(counts[0], 4, "seed {seed}: {counts:?}");
            }
        }
        assert!(failure_free > 0, "some seeds fire no kill");
    });
}

/// A rank that released its window (dropped it, not freed collectively) answers the operations
/// and lock requests that still reach it with an error: the origin gets `RmaSync`, never a hang.
#[test]
fn a_window_released_at_its_target_refuses_operations_and_locks() {
    bounded(|| {
        let results = runthrough::local(2).run(|world| {
            let window = world.window_allocate::<u32>(1)?;
            window.fence()?;
            if world.rank() == 1 {
                drop(window);
                world.send(&[0u8], 0, 1)?;
                world.recv(&mut [0u8], 0u32, 2)?;
                return Ok(());
            }
            world.recv(&mut [0u8], 1u32, 1)?;
            window.put(&[5], 1, 0)?;
            assert!(matches!(window.flush(1), Err(Error::RmaSync { .. })));
            assert!(matches!(window.lock(1, true), Err(Error::RmaSync { .. })));
            world.send(&[0u8], 1, 2)?;
            Ok::<_, Error>(())
        });
        outcomes(results, &[]);
    });
}

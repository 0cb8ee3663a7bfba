// SPDX-License-Identifier: MIT OR Apache-2.0
//! The resilience library (`runthrough::resilience`): in-memory checkpoints of the
//! application's slots with copies on buddy ranks, committed by one agreement, restored after a
//! shrink, onto replacements (respawn) and onto spare ranks; a death before, during and after a
//! checkpoint and during a recovery; two deaths at once; wrong use. The same with XOR parity
//! over groups of ranks instead of copies.

use runthrough::resilience::{run_loop, Error, LoopConfig, Redundancy, Slots, Store};
use runthrough::{Comm, Op, RankOutcome};

/// The bytes of `slot` at application step `step`: every slot's data differs from every other
/// slot's and step's, so a restore from the wrong slot or version shows.
fn data(slot: u32, step: u32) -> Vec<u8> {
    (0..64u32)
        .map(|i| (slot.wrapping_mul(31) ^ step.wrapping_mul(7) ^ i) as u8)
        .collect()
}

/// Checkpoints the slots this rank owns at `step`.
fn checkpoint(store: &mut Store, step: u32) -> Result<u64, Error> {
    let owned: Vec<(u32, Vec<u8>)> = store.owned().iter().map(|&s| (s, data(s, step))).collect();
    let parts: Vec<(u32, &[u8])> = owned.iter().map(|(s, d)| (*s, d.as_slice())).collect();
    store.checkpoint(&parts)
}

fn returned<T>(outcomes: Vec<RankOutcome<T>>) -> Vec<Option<T>> {
    outcomes.into_iter().map(RankOutcome::returned).collect()
}

#[test]
fn checkpoints_commit_at_every_rank_and_count_versions() {
    let outcomes = runthrough::local(4).run(|world| {
        let mut store = Store::new(world, 2)?;
        assert_eq!(store.owned(), vec![world.rank()]);
        let versions: Vec<u64> = (1..=3)
            .map(|step| checkpoint(&mut store, step))
            .collect::<Result<_, _>>()?;
        Ok::<_, Error>((versions, store.version()))
    });
    for outcome in returned(outcomes) {
        assert_eq!(outcome.unwrap().unwrap(), (vec![1, 2, 3], 3));
    }
}

/// Rank 2 dies after the second checkpoint, while every rank has moved on (its live data is
/// step 3's, never committed). After a shrink, every survivor gets its slots back as they were
/// at step 2, rank 3 (rank 2's buddy) takes slot 2, and the store goes on checkpointing on the
/// shrunk communicator with rank 3 (now number 2) owning two slots.
#[test]
fn a_rank_dead_after_a_checkpoint_is_restored_by_its_buddy_after_a_shrink() {
    let universe = runthrough::local(6);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        // ANCHOR: shrink
        let mut store = Store::new(world, 1)?; // one copy of each slot, on the next rank
        checkpoint(&mut store, 1)?;
        checkpoint(&mut store, 2)?;
        if world.rank() == 2 {
            faults.kill(2);
        }
        assert!(world.barrier().is_err(), "rank 2 never enters the barrier");
        let shrunk = world.shrink()?;
        let restored = store.recover(&shrunk)?; // this rank's slots as they were at step 2
                                                // ANCHOR_END: shrink
        let version = store.version();
        let owned = store.owned();
        checkpoint(&mut store, 4)?;
        Ok::<_, Error>((restored, version, owned, store.version()))
    });
    let outcomes = returned(outcomes);
    assert!(outcomes[2].is_none(), "rank 2 was killed");
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        let Some(outcome) = outcome else { continue };
        let (restored, version, owned, after) = outcome.unwrap();
        let slots: Vec<u32> = if rank == 3 {
            vec![2, 3]
        } else {
            vec![rank as u32]
        };
        let want: Vec<(u32, Vec<u8>)> = slots.iter().map(|&s| (s, data(s, 2))).collect();
        assert_eq!(restored, want, "rank {rank}");
        assert_eq!((version, owned, after), (3, slots, 4), "rank {rank}");
    }
}

/// What a rank saw in [`kill_anywhere`]: the two checkpoints' results and the recovery's.
type Seen = (
    Result<u64, Error>,
    Result<u64, Error>,
    Result<Vec<(u32, Vec<u8>)>, Error>,
);

/// Rank 1 is killed at its `k`-th communication call, for every `k` from the store's creation
/// to past the second checkpoint: before, during and after each. Whatever the point, the
/// survivors see the same result of each checkpoint, and the recovery gives every slot the
/// data of the last checkpoint committed (rank 2 takes slot 1), or fails at every survivor
/// alike when none was.
#[test]
fn a_death_at_any_point_of_two_checkpoints_leaves_the_last_committed_one() {
    death_at_any_point(|world| Store::new(world, 1));
}

/// As [`a_death_at_any_point_of_two_checkpoints_leaves_the_last_committed_one`], with XOR
/// parity over one group of the 4 ranks: a death during a parity checkpoint leaves the
/// previous checkpoint whole at every survivor, and the recovery rebuilds slot 1 from the
/// parity at rank 2 (the next member of its group).
#[test]
fn a_death_at_any_point_of_two_xor_checkpoints_leaves_the_last_committed_one() {
    death_at_any_point(|world| Store::with_redundancy(world, Redundancy::Xor { group: 4 }));
}

/// As [`a_death_at_any_point_of_two_checkpoints_leaves_the_last_committed_one`], with
/// Reed-Solomon parity of 2 over one group of the 4 ranks (rank 2 rebuilds slot 1).
#[test]
fn a_death_at_any_point_of_two_reed_solomon_checkpoints_leaves_the_last_committed_one() {
    death_at_any_point(|world| {
        let redundancy = Redundancy::ReedSolomon {
            group: 4,
            parity: 2,
        };
        Store::with_redundancy(world, redundancy)
    });
}

/// Rank 1 of 4 killed at each of its calls in turn around two checkpoints of a store `make`
/// makes (the body of the two tests above).
fn death_at_any_point(make: fn(&Comm) -> Result<Store, Error>) {
    let mut seen_failed_checkpoint = false;
    for k in 1..=40 {
        let outcomes =
            runthrough::local(4)
                .kill_at_operation(1, k)
                .run(|world: &Comm| -> Option<Seen> {
                    let mut store = make(world).ok()?;
                    let first = checkpoint(&mut store, 1);
                    let second = match &first {
                        Ok(_) => checkpoint(&mut store, 2),
                        Err(e) => Err(e.clone()),
                    };
                    let _ = world.barrier();
                    let recovered = store.recover_by_shrinking(world).map(|(_, r)| r);
                    Some((first, second, recovered))
                });
        if !outcomes[1].is_killed() {
            assert!(k > 10, "rank 1 makes more than 10 calls");
            break; // past rank 1's last call: no death
        }
        if !outcomes[1].is_killed() {
            assert!(k > 10, "rank 1 makes more than 10 calls");
            break; // past rank 1's last call: no death
        }
        let outcomes = returned(outcomes);
        let survivors: Vec<Seen> = outcomes
            .into_iter()
            .enumerate()
            .filter(|&(rank, _)| rank != 1)
            .filter_map(|(_, o)| o.flatten())
            .collect();
        if survivors.is_empty() {
            continue; // rank 1 died in the store's creation: nobody has a store
        }
        assert_eq!(survivors.len(), 3, "k = {k}");
        let (first, second) = (survivors[0].0.is_ok(), survivors[0].1.is_ok());
        for (rank, seen) in survivors.iter().enumerate() {
            assert_eq!(
                (seen.0.is_ok(), seen.1.is_ok()),
                (first, second),
                "k = {k}: survivor {rank} saw other checkpoint results"
            );
        }
        seen_failed_checkpoint |= first && !second;
        let step = match (first, second) {
            (true, true) => 2,
            (true, false) => 1,
            _ => {
                for seen in &survivors {
                    assert!(
                        matches!(seen.2, Err(Error::Usage(_))),
                        "k = {k}: {:?}",
                        seen.2
                    );
                }
                continue;
            }
        };
        for (index, seen) in survivors.iter().enumerate() {
            let old_rank = [0u32, 2, 3][index];
            let slots: Vec<u32> = if old_rank == 2 {
                vec![1, 2]
            } else {
                vec![old_rank]
            };
            let want: Vec<(u32, Vec<u8>)> = slots.iter().map(|&s| (s, data(s, step))).collect();
            assert_eq!(seen.2.as_ref().unwrap(), &want, "k = {k}, rank {old_rank}");
        }
    }
    assert!(
        seen_failed_checkpoint,
        "some kill point fell inside the second checkpoint"
    );
}

/// Ranks 2 and 3 die together, as they enter the barrier after the checkpoint. With one
/// copy, slot 2's only copy was on rank 3: every survivor gets `Lost { slots: [2] }`. With two
/// copies nothing is lost: rank 4 holds both.
#[test]
fn two_neighbours_dying_lose_a_slot_with_one_copy_and_nothing_with_two() {
    for copies in [1, 2] {
        let universe = runthrough::local(6)
            .kill_in_collective(2, "barrier", 1, 0)
            .kill_in_collective(3, "barrier", 1, 0);
        let outcomes = universe.run(move |world| {
            let mut store = Store::new(world, copies)?;
            checkpoint(&mut store, 1)?;
            assert!(world.barrier().is_err(), "ranks 2 and 3 die in it");
            // Rank 3's death may be known only after the first shrink: recover_by_shrinking
            // shrinks again then.
            store
                .recover_by_shrinking(world)
                .map(|(_, restored)| restored)
        });
        for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
            let Some(result) = outcome else {
                assert!(rank == 2 || rank == 3);
                continue;
            };
            if copies == 1 {
                assert_eq!(result, Err(Error::Lost { slots: vec![2] }), "rank {rank}");
            } else {
                let slots: Vec<u32> = if rank == 4 {
                    vec![2, 3, 4]
                } else {
                    vec![rank as u32]
                };
                let want: Vec<(u32, Vec<u8>)> = slots.iter().map(|&s| (s, data(s, 1))).collect();
                assert_eq!(result.unwrap(), want, "rank {rank}");
            }
        }
    }
}

/// Non-shrinking recovery: rank 1 dies, the survivors respawn it, and the new rank joins the
/// store and gets slot 1 (the survivors keep theirs); the next checkpoint runs on four ranks.
#[test]
fn a_replacement_rank_gets_the_dead_rank_s_slot() {
    let universe = runthrough::local(4);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        // ANCHOR: respawn
        let (comm, mut store, restored) = match world.parent() {
            Some(parents) => {
                let comm = parents.join_respawn()?;
                let (store, restored) = Store::join(&comm, 1)?;
                (comm, store, restored)
            }
            None => {
                let mut store = Store::new(world, 1)?;
                checkpoint(&mut store, 1)?;
                if world.rank() == 1 {
                    faults.kill(1);
                }
                let _ = world.barrier();
                let comm = world.respawn()?;
                let restored = store.recover(&comm)?;
                (comm, store, restored)
            }
        };
        // ANCHOR_END: respawn
        checkpoint(&mut store, 2)?;
        Ok::<_, Error>((comm.rank(), restored, store.owned(), store.version()))
    });
    let outcomes = returned(outcomes);
    assert_eq!(outcomes.len(), 5, "4 ranks and the replacement");
    for outcome in outcomes.into_iter().flatten() {
        let (rank, restored, owned, version) = outcome.unwrap();
        assert_eq!(restored, vec![(rank, data(rank, 1))], "rank {rank}");
        assert_eq!((owned, version), (vec![rank], 3), "rank {rank}");
    }
}

/// Spare ranks: ranks 0-3 work, rank 4 waits. When rank 1 dies, every rank shrinks the world,
/// the spare takes rank 1's number in the new work communicator and its slot from the store.
#[test]
fn a_spare_rank_takes_the_dead_rank_s_number_and_slot() {
    let universe = runthrough::local(5);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let spare = world.rank() == 4;
        let work = world.split((!spare).then_some(0), world.rank() as i32)?;
        let store = match &work {
            Some(work) => {
                let mut store = Store::new(work, 1)?;
                checkpoint(&mut store, 1)?;
                Some(store)
            }
            None => None,
        };
        if world.rank() == 1 {
            faults.kill(1);
        }
        let _ = world.barrier();
        let shrunk = world.shrink()?;
        // The dead worker's number goes to the spare.
        let dead: Vec<u32> = (0..4)
            .filter(|&r| shrunk.group().rank_of_world(r).is_none())
            .collect();
        let key = if spare { dead[0] } else { world.rank() };
        let work = shrunk.split(Some(0), key as i32)?.expect("a member");
        let restored = match store {
            Some(mut store) => store.recover(&work)?,
            None => Store::join(&work, 1)?.1,
        };
        Ok::<_, Error>((world.rank(), work.rank(), restored))
    });
    for outcome in returned(outcomes).into_iter().flatten() {
        let (world_rank, rank, restored) = outcome.unwrap();
        let want = if world_rank == 4 { 1 } else { world_rank };
        assert_eq!(rank, want, "world rank {world_rank}");
        assert_eq!(
            restored,
            vec![(rank, data(rank, 1))],
            "world rank {world_rank}"
        );
    }
}

/// A second death while the survivors recover from the first: the recovery fails at every
/// survivor, the last committed checkpoint is still whole, and the next recovery (after
/// another shrink) restores both dead ranks' slots from it.
#[test]
fn a_death_during_a_recovery_fails_it_everywhere_and_the_next_one_succeeds() {
    let universe = runthrough::local(6);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let mut store = Store::new(world, 2)?;
        checkpoint(&mut store, 1)?;
        if world.rank() == 1 {
            faults.kill(1);
        }
        let _ = world.barrier();
        let shrunk = world.shrink()?;
        if world.rank() == 3 {
            faults.kill(3); // dies as the others start recovering
        }
        let first = store.recover(&shrunk);
        assert!(
            first.is_err(),
            "rank 3 took no part in the recovery: {first:?}"
        );
        let shrunk = shrunk.shrink()?;
        Ok::<_, Error>((world.rank(), store.recover(&shrunk)?))
    });
    for outcome in returned(outcomes).into_iter().flatten() {
        let (rank, restored) = outcome.unwrap();
        // Slot 1's first surviving buddy is rank 2; slot 3's is rank 4.
        let slots: Vec<u32> = match rank {
            2 => vec![1, 2],
            4 => vec![3, 4],
            r => vec![r],
        };
        let want: Vec<(u32, Vec<u8>)> = slots.iter().map(|&s| (s, data(s, 1))).collect();
        assert_eq!(restored, want, "rank {rank}");
    }
}

/// Host-aware placement ([`Store::with_hosts`]): ranks 0-1 on host A, 2-3 on B, 4-5 on C (as
/// a launcher places them). Each slot's copy goes to another host (the ring 0, 2, 4, 1, 3, 5:
/// slot 0's buddy is rank 2), so when both ranks of host B die together nothing is lost, where
/// the plain placement loses slot 2 (its copy was on rank 3). After the recovery the copies are
/// on other hosts again, over the ranks that are left. With two copies, they go to the two
/// other hosts.
#[test]
fn host_aware_copies_survive_the_loss_of_a_whole_host() {
    let host_of = |rank: u32| u64::from(rank / 2) + 10;
    for hosted in [true, false] {
        let universe = runthrough::local(6)
            .kill_in_collective(2, "barrier", 1, 0)
            .kill_in_collective(3, "barrier", 1, 0);
        let outcomes = universe.run(move |world| {
            let mut store = if hosted {
                Store::with_hosts(world, Redundancy::Copies(1), host_of(world.rank()))?
            } else {
                Store::new(world, 1)?
            };
            checkpoint(&mut store, 1)?;
            let holders: Vec<Vec<u32>> = (0..6).map(|slot| store.holders(slot)).collect();
            assert!(world.barrier().is_err(), "ranks 2 and 3 die in it");
            let (shrunk, restored) = store.recover_by_shrinking(world)?;
            // After the recovery: the holders over the four ranks left (world ranks 0, 1, 4, 5).
            let after: Vec<Vec<u32>> = (0..6).map(|slot| store.holders(slot)).collect();
            Ok::<_, Error>((holders, restored, after, shrunk.size()))
        });
        for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
            let Some(result) = outcome else {
                assert!(rank == 2 || rank == 3);
                continue;
            };
            if !hosted {
                assert_eq!(result, Err(Error::Lost { slots: vec![2] }), "rank {rank}");
                continue;
            }
            let (holders, restored, after, size) = result.unwrap();
            assert_eq!(
                holders,
                vec![
                    vec![0, 2],
                    vec![1, 3],
                    vec![2, 4],
                    vec![3, 5],
                    vec![4, 1],
                    vec![5, 0]
                ],
                "rank {rank}"
            );
            assert_eq!(size, 4);
            // Slot 2's copy was on rank 4, slot 3's on rank 5: they take them over.
            let slots: Vec<u32> = match rank {
                4 => vec![2, 4],
                5 => vec![3, 5],
                _ => vec![rank as u32],
            };
            let want: Vec<(u32, Vec<u8>)> = slots.iter().map(|&s| (s, data(s, 1))).collect();
            assert_eq!(restored, want, "rank {rank}");
            for (slot, holders) in after.iter().enumerate() {
                let hosts: Vec<u64> = holders.iter().map(|&r| host_of(r)).collect();
                assert_eq!(holders.len(), 2, "slot {slot}: {holders:?}");
                assert_ne!(hosts[0], hosts[1], "slot {slot}: {holders:?}");
            }
        }
    }
    // Two copies: the owner's host and both others; copies share a host only when no other is
    // left (hosts 7, 7, 7, 9: the ring is 0, 3, 1, 2, and slot 1's copies go to 3, then 2).
    let outcomes = runthrough::local(4).run(|world| {
        let host = if world.rank() == 3 { 9 } else { 7 };
        let mut store = Store::with_hosts(world, Redundancy::Copies(2), host)?;
        checkpoint(&mut store, 1)?;
        Ok::<_, Error>((0..4).map(|slot| store.holders(slot)).collect::<Vec<_>>())
    });
    for outcome in returned(outcomes) {
        let holders = outcome.unwrap().unwrap();
        assert_eq!(
            holders,
            vec![vec![0, 3, 1], vec![1, 3, 2], vec![2, 3, 0], vec![3, 1, 2]]
        );
    }
}

/// A replacement joins a host-aware store with its own host key and gets the dead rank's slot;
/// the next checkpoint places copies by the hosts of the new communicator. Joining it without
/// hosts is `Usage` at the newcomer and `NotCommitted` at the survivors, and hangs nobody; a
/// store made with hosts at some ranks only (and the others' `with_redundancy`) is `Usage` at
/// every rank, as is host-aware placement with parity.
#[test]
fn a_replacement_joins_a_host_aware_store_with_its_host() {
    for newcomer_gives_host in [true, false] {
        let universe = runthrough::local(4);
        let faults = universe.fault_handle();
        let outcomes = universe.run(move |world| {
            let host = |rank: u32| u64::from(rank % 2);
            match world.parent() {
                Some(parents) => {
                    let comm = parents.join_respawn()?;
                    let joined = if newcomer_gives_host {
                        Store::join_with_hosts(&comm, Redundancy::Copies(1), host(comm.rank()))
                    } else {
                        Store::join(&comm, 1)
                    };
                    let (mut store, restored) = joined?;
                    checkpoint(&mut store, 2)?;
                    Ok::<_, Error>((comm.rank(), restored, store.holders(comm.rank())))
                }
                None => {
                    let mut store =
                        Store::with_hosts(world, Redundancy::Copies(1), host(world.rank()))?;
                    checkpoint(&mut store, 1)?;
                    if world.rank() == 1 {
                        faults.kill(1);
                    }
                    let _ = world.barrier();
                    let comm = world.respawn()?;
                    let restored = store.recover(&comm)?;
                    checkpoint(&mut store, 2)?;
                    Ok((comm.rank(), restored, store.holders(comm.rank())))
                }
            }
        });
        let outcomes = returned(outcomes);
        assert_eq!(outcomes.len(), 5, "4 ranks and the replacement");
        for (index, outcome) in outcomes.into_iter().enumerate() {
            let Some(result) = outcome else {
                assert_eq!(index, 1);
                continue;
            };
            if !newcomer_gives_host {
                let want_usage = index == 4;
                assert!(
                    matches!(
                        (&result, want_usage),
                        (Err(Error::Usage(_)), true) | (Err(Error::NotCommitted), false)
                    ),
                    "rank {index}: {result:?}"
                );
                continue;
            }
            let (rank, restored, holders) = result.unwrap();
            assert_eq!(restored, vec![(rank, data(rank, 1))], "rank {rank}");
            // Hosts 0, 1, 0, 1 (the ring 0, 1, 2, 3): each slot's copy on the next rank, which
            // is on the other host. (Holders are world ranks: the replacement is world rank 4,
            // number 1.)
            let number = |world: u32| if world == 4 { 1 } else { world };
            let holders: Vec<u32> = holders.into_iter().map(number).collect();
            assert_eq!(holders, vec![rank, (rank + 1) % 4], "rank {rank}");
        }
    }
    let outcomes = runthrough::local(3).run(|world| {
        let made = if world.rank() == 1 {
            Store::with_redundancy(world, Redundancy::Copies(1))
        } else {
            Store::with_hosts(world, Redundancy::Copies(1), 5)
        };
        let parity = Store::with_hosts(world, Redundancy::Xor { group: 3 }, 5);
        (made.map(|_| ()), parity.map(|_| ()))
    });
    for outcome in returned(outcomes) {
        let (made, parity) = outcome.unwrap();
        assert!(matches!(made, Err(Error::Usage(_))), "{made:?}");
        assert!(matches!(parity, Err(Error::Usage(_))), "{parity:?}");
    }
}

/// Wrong use: a checkpoint with another rank's slot is `Usage` at that rank and
/// `NotCommitted` at the others, and the previous checkpoint stands (the next right one is
/// version 2); no copies is refused; recovering before any checkpoint is `Usage` everywhere.
#[test]
fn wrong_use_is_reported_and_hangs_nobody() {
    let outcomes = runthrough::local(3).run(|world| {
        assert!(matches!(Store::new(world, 0), Err(Error::Usage(_))));
        let mut store = Store::new(world, 1)?;
        let early = store.recover(world);
        assert!(matches!(early, Err(Error::Usage(_))), "{early:?}");
        checkpoint(&mut store, 1)?;
        let me = world.rank();
        let wrong = if me == 1 { 0 } else { me };
        let result = store.checkpoint(&[(wrong, &data(wrong, 2))]);
        let again = checkpoint(&mut store, 3)?;
        Ok::<_, Error>((result, again))
    });
    for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
        let (result, again) = outcome.unwrap().unwrap();
        if rank == 1 {
            assert!(matches!(result, Err(Error::Usage(_))), "{result:?}");
        } else {
            assert_eq!(result, Err(Error::NotCommitted), "rank {rank}");
        }
        assert_eq!(again, 2, "rank {rank}");
    }
}

/// The loop of [`run_loop`] in the tests: every slot holds a counter; each step adds the sum of
/// all counters (an all-reduce over the ranks), so every step depends on every slot.
fn counters(world: &Comm, config: &LoopConfig) -> Result<(Slots, u32), Error> {
    let finished = run_loop(
        world,
        config,
        |slot| u64::from(slot + 1).to_le_bytes().to_vec(),
        |comm, slots, _iteration| {
            let value = |d: &[u8]| u64::from_le_bytes(d[..8].try_into().unwrap());
            let mine: u64 = slots
                .iter()
                .map(|(_, d)| value(d))
                .fold(0, u64::wrapping_add);
            let mut total = [0u64];
            comm.all_reduce(&[mine], &mut total, Op::Sum)?;
            for (_, data) in slots.iter_mut() {
                let next = value(data).wrapping_add(total[0]);
                data.copy_from_slice(&next.to_le_bytes());
            }
            Ok(())
        },
    )?;
    Ok((finished.slots, finished.recoveries))
}

/// The resilient loop: rank 2 killed at each of its calls in turn (in the loop's steps, its
/// checkpoints and its recovery), with one and with two copies, with XOR parity over groups
/// of 3 and of 5 (the whole communicator) and with Reed-Solomon parity of 2 over the 5 ranks.
/// Killed before the first
/// checkpoint committed, every survivor gets an error; from then on, whatever the point, every
/// survivor finishes, the slots the survivors end with are all the slots, each with the
/// failure-free value, and a recovery happened exactly when the kill did.
#[test]
fn the_resilient_loop_ends_with_the_failure_free_slots_whatever_the_kill_point() {
    let config = LoopConfig {
        iterations: 12,
        checkpoint_every: 4,
        redundancy: Redundancy::Copies(1),
    };
    let reference: Vec<Option<Result<(Slots, u32), Error>>> =
        returned(runthrough::local(5).run(|world| counters(world, &config)));
    let reference: Slots = reference
        .into_iter()
        .flat_map(|o| o.unwrap().unwrap().0)
        .collect();
    assert_eq!(reference.len(), 5);
    let mut kills = 0;
    // Five ranks in XOR groups of 3: {0, 1, 2} and {3, 4}; in one group of 5.
    for redundancy in [
        Redundancy::Copies(1),
        Redundancy::Copies(2),
        Redundancy::Xor { group: 3 },
        Redundancy::Xor { group: 5 },
        Redundancy::ReedSolomon {
            group: 5,
            parity: 2,
        },
    ] {
        let config = LoopConfig {
            redundancy,
            ..config
        };
        let mut recovered_once = false;
        for k in 1.. {
            let outcomes = runthrough::local(5)
                .kill_at_operation(2, k)
                .run(|world| counters(world, &config));
            let killed = outcomes[2].is_killed();
            let results: Vec<_> = returned(outcomes).into_iter().flatten().collect();
            if results.iter().any(Result::is_err) {
                assert!(results.iter().all(Result::is_err), "k = {k}: {results:?}");
                assert!(
                    !recovered_once,
                    "k = {k}: an error after a later kill point recovered"
                );
                continue;
            }
            recovered_once |= killed;
            let mut slots: Slots = Vec::new();
            for result in results {
                let (mine, recoveries) = result.unwrap();
                assert_eq!(recoveries, u32::from(killed), "k = {k}");
                slots.extend(mine);
            }
            slots.sort();
            assert_eq!(slots, reference, "{redundancy:?}, k = {k}");
            if !killed {
                assert!(k > 20, "rank 2 makes more than 20 calls");
                break;
            }
            kills += 1;
        }
    }
    assert!(kills > 100, "{kills} kill points");
}

/// The bytes of `slot` at step `step` for the parity tests: slots of different lengths (slot 2
/// and slot 10 are empty, slot 5 is the longest), some growing with the step, so that blocks
/// are padded and cut at every length.
fn sized(slot: u32, step: u32) -> Vec<u8> {
    let base = [13usize, 200, 0, 64, 1, 999, 7, 128][slot as usize % 8];
    let len = if slot % 3 == 1 {
        base + step as usize
    } else {
        base
    };
    (0..len as u32)
        .map(|i| (slot.wrapping_mul(31) ^ step.wrapping_mul(7) ^ i.wrapping_mul(13)) as u8)
        .collect()
}

/// Checkpoints the slots this rank owns at `step`, with [`sized`] data.
fn checkpoint_sized(store: &mut Store, step: u32) -> Result<u64, Error> {
    let owned: Vec<(u32, Vec<u8>)> = store.owned().iter().map(|&s| (s, sized(s, step))).collect();
    let parts: Vec<(u32, &[u8])> = owned.iter().map(|(s, d)| (*s, d.as_slice())).collect();
    store.checkpoint(&parts)
}

/// The slots and their [`sized`] data at `step`.
fn sized_slots(slots: &[u32], step: u32) -> Slots {
    slots.iter().map(|&s| (s, sized(s, step))).collect()
}

/// XOR parity over groups of 3 on 7 ranks: groups {0, 1, 2} and {3, 4, 5, 6} (rank 6 alone
/// would be a group of one, so it joins the group before). Ranks 1 and 5, one in each group,
/// die after the second checkpoint while every rank has moved on. After the repair every
/// survivor gets its slots back as they were at step 2, bit for bit: slot 1 rebuilt at rank 2
/// and slot 5 at rank 6 (the next member of each one's group), slots of every length,
/// empty ones included; and the store checkpoints on over the 5 survivors.
#[test]
fn xor_parity_rebuilds_one_dead_rank_per_group_bit_for_bit() {
    let universe = runthrough::local(7);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let mut store = Store::with_redundancy(world, Redundancy::Xor { group: 3 })?;
        checkpoint_sized(&mut store, 1)?;
        checkpoint_sized(&mut store, 2)?;
        if world.rank() == 1 || world.rank() == 5 {
            faults.kill(world.rank());
        }
        assert!(world.barrier().is_err(), "ranks 1 and 5 never enter it");
        // Both deaths may not be known at the first shrink: recover_by_shrinking goes on.
        let (shrunk, restored) = store.recover_by_shrinking(world)?;
        let (version, owned) = (store.version(), store.owned());
        checkpoint_sized(&mut store, 3)?;
        Ok::<_, Error>((shrunk.size(), restored, version, owned, store.version()))
    });
    let outcomes = returned(outcomes);
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        let Some(outcome) = outcome else {
            assert!(rank == 1 || rank == 5, "rank {rank} was not killed");
            continue;
        };
        let (size, restored, version, owned, after) = outcome.unwrap();
        let slots: Vec<u32> = match rank {
            2 => vec![1, 2],
            6 => vec![5, 6],
            r => vec![r as u32],
        };
        assert_eq!(restored, sized_slots(&slots, 2), "rank {rank}");
        assert_eq!(
            (size, version, owned, after),
            (5, 3, slots, 4),
            "rank {rank}"
        );
    }
}

/// Every rank of a group holds a parity block, which dies with it: the parity a dead rank held
/// protected only the other members' chunks, so losing it with its own data loses nothing,
/// and the recovery's checkpoint makes the parity again over the new communicator. Four
/// ranks in one group of 4: rank 0 dies, rank 1 rebuilds slot 0; then rank 1 (now holding two
/// slots in its block, and a parity block of the new checkpoint) dies, and rank 2 rebuilds
/// slots 0 and 1 from the parity the recovery made.
#[test]
fn xor_parity_survives_its_holders_dying_one_after_the_other() {
    let universe = runthrough::local(4);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let mut store = Store::with_redundancy(world, Redundancy::Xor { group: 4 })?;
        checkpoint_sized(&mut store, 1)?;
        if world.rank() == 0 {
            faults.kill(0);
        }
        assert!(world.barrier().is_err(), "rank 0 never enters it");
        let (shrunk, first) = store.recover_by_shrinking(world)?;
        let first_owned = store.owned();
        let owned: Vec<u32> = first.iter().map(|&(s, _)| s).collect();
        let parts: Vec<(u32, Vec<u8>)> = owned.iter().map(|&s| (s, sized(s, 2))).collect();
        let parts: Vec<(u32, &[u8])> = parts.iter().map(|(s, d)| (*s, d.as_slice())).collect();
        store.checkpoint(&parts)?;
        if world.rank() == 1 {
            faults.kill(1);
        }
        assert!(shrunk.barrier().is_err(), "rank 1 never enters it");
        let (_, second) = store.recover_by_shrinking(&shrunk)?;
        Ok::<_, Error>((first, first_owned, second, store.owned()))
    });
    for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
        let Some(outcome) = outcome else {
            assert!(rank < 2, "rank {rank} was not killed");
            continue;
        };
        let (first, first_owned, second, owned) = outcome.unwrap();
        let rank = rank as u32;
        assert_eq!(first, sized_slots(&[rank], 1), "rank {rank}");
        assert_eq!(first_owned, vec![rank], "rank {rank}");
        let slots = if rank == 2 { vec![0, 1, 2] } else { vec![3] };
        assert_eq!(second, sized_slots(&slots, 2), "rank {rank}");
        assert_eq!(owned, if rank == 2 { vec![0, 1, 2] } else { vec![3] });
    }
}

/// XOR parity over groups of 3 on 6 ranks: {0, 1, 2} and {3, 4, 5}. Two ranks of one group
/// dying together (1 and 2, in the barrier after the checkpoint) lose both their slots: every
/// survivor gets the same `Lost { slots: [1, 2] }`. Two ranks of different groups (2 and 3)
/// lose nothing: rank 0 rebuilds slot 2, rank 4 slot 3.
#[test]
fn two_deaths_in_one_xor_group_are_lost_at_every_survivor_and_in_two_groups_are_not() {
    for dead in [[1, 2], [2, 3]] {
        let universe = runthrough::local(6)
            .kill_in_collective(dead[0], "barrier", 1, 0)
            .kill_in_collective(dead[1], "barrier", 1, 0);
        let outcomes = universe.run(move |world| {
            let mut store = Store::with_redundancy(world, Redundancy::Xor { group: 3 })?;
            checkpoint_sized(&mut store, 1)?;
            assert!(world.barrier().is_err(), "ranks {dead:?} die in it");
            store
                .recover_by_shrinking(world)
                .map(|(_, restored)| restored)
        });
        for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
            let Some(result) = outcome else {
                assert!(dead.contains(&(rank as u32)), "rank {rank} was not killed");
                continue;
            };
            if dead == [1, 2] {
                assert_eq!(
                    result,
                    Err(Error::Lost { slots: vec![1, 2] }),
                    "rank {rank}"
                );
                continue;
            }
            let slots: Vec<u32> = match rank {
                0 => vec![0, 2],
                4 => vec![3, 4],
                r => vec![r as u32],
            };
            assert_eq!(result.unwrap(), sized_slots(&slots, 1), "rank {rank}");
        }
    }
}

/// Non-shrinking recovery with parity: rank 1 of 5 dies (groups of 3: {0, 1, 2} and {3, 4}),
/// the survivors respawn it, and the replacement joins with the same redundancy and gets slot
/// 1 rebuilt from the shares of ranks 0 and 2; the next checkpoint runs on five ranks. A replacement that
/// joins with another redundancy than the survivors' gets `Usage`, the survivors
/// `NotCommitted`, and nobody hangs.
#[test]
fn a_replacement_rank_gets_the_dead_rank_s_slot_rebuilt_from_parity() {
    for joins_with in [Redundancy::Xor { group: 3 }, Redundancy::Copies(1)] {
        let universe = runthrough::local(5);
        let faults = universe.fault_handle();
        let outcomes = universe.run(move |world| {
            let redundancy = Redundancy::Xor { group: 3 };
            let (comm, mut store, restored) = match world.parent() {
                Some(parents) => {
                    let comm = parents.join_respawn()?;
                    let (store, restored) = Store::join_with_redundancy(&comm, joins_with)?;
                    (comm, store, restored)
                }
                None => {
                    let mut store = Store::with_redundancy(world, redundancy)?;
                    checkpoint_sized(&mut store, 1)?;
                    if world.rank() == 1 {
                        faults.kill(1);
                    }
                    let _ = world.barrier();
                    let comm = world.respawn()?;
                    let restored = store.recover(&comm)?;
                    (comm, store, restored)
                }
            };
            checkpoint_sized(&mut store, 2)?;
            Ok::<_, Error>((comm.rank(), restored, store.owned(), store.version()))
        });
        let outcomes = returned(outcomes);
        assert_eq!(outcomes.len(), 6, "5 ranks and the replacement");
        let replacement = outcomes[5].clone().unwrap();
        if joins_with != (Redundancy::Xor { group: 3 }) {
            assert!(
                matches!(replacement, Err(Error::Usage(_))),
                "{replacement:?}"
            );
            for outcome in outcomes[..5].iter().flatten() {
                assert_eq!(outcome, &Err(Error::NotCommitted));
            }
            continue;
        }
        for outcome in outcomes.into_iter().flatten() {
            let (rank, restored, owned, version) = outcome.unwrap();
            assert_eq!(restored, sized_slots(&[rank], 1), "rank {rank}");
            assert_eq!((owned, version), (vec![rank], 3), "rank {rank}");
        }
    }
}

/// Spare ranks with parity: ranks 0-3 work in one group of 4, rank 4 waits. When rank 1 dies,
/// the spare takes its number in the new work communicator and gets slot 1 rebuilt from the
/// other three's parity and chunks.
#[test]
fn a_spare_rank_gets_the_dead_rank_s_slot_rebuilt_from_parity() {
    let universe = runthrough::local(5);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let redundancy = Redundancy::Xor { group: 4 };
        let spare = world.rank() == 4;
        let work = world.split((!spare).then_some(0), world.rank() as i32)?;
        let store = match &work {
            Some(work) => {
                let mut store = Store::with_redundancy(work, redundancy)?;
                checkpoint_sized(&mut store, 1)?;
                Some(store)
            }
            None => None,
        };
        if world.rank() == 1 {
            faults.kill(1);
        }
        let _ = world.barrier();
        let shrunk = world.shrink()?;
        let key = if spare { 1 } else { world.rank() };
        let work = shrunk.split(Some(0), key as i32)?.expect("a member");
        let restored = match store {
            Some(mut store) => store.recover(&work)?,
            None => Store::join_with_redundancy(&work, redundancy)?.1,
        };
        Ok::<_, Error>((world.rank(), work.rank(), restored))
    });
    for outcome in returned(outcomes).into_iter().flatten() {
        let (world_rank, rank, restored) = outcome.unwrap();
        let want = if world_rank == 4 { 1 } else { world_rank };
        assert_eq!(rank, want, "world rank {world_rank}");
        assert_eq!(restored, sized_slots(&[rank], 1), "world rank {world_rank}");
    }
}

/// Wrong use of parity, at every rank alike and without a hang or a panic: groups of 0 or 1
/// rank, Reed-Solomon parity of 0 or of a whole group, no copies through `with_redundancy`,
/// and ranks giving different redundancies are all
/// `Usage` at every rank; a right store made after them works. A communicator of one rank
/// takes parity (a group of one, with nothing to keep) and checkpoints.
#[test]
fn wrong_parity_use_is_reported_at_every_rank_and_hangs_nobody() {
    let outcomes = runthrough::local(3).run(|world| {
        for wrong in [
            Redundancy::Xor { group: 0 },
            Redundancy::Xor { group: 1 },
            Redundancy::Copies(0),
            Redundancy::ReedSolomon {
                group: 4,
                parity: 0,
            },
            Redundancy::ReedSolomon {
                group: 4,
                parity: 4,
            },
        ] {
            let made = Store::with_redundancy(world, wrong);
            assert!(matches!(made, Err(Error::Usage(_))), "{wrong:?}: {made:?}");
        }
        let group = if world.rank() == 0 { 2 } else { 3 };
        let made = Store::with_redundancy(world, Redundancy::Xor { group });
        assert!(matches!(made, Err(Error::Usage(_))), "{made:?}");
        let made = Store::with_redundancy(world, Redundancy::Copies(world.rank() + 1));
        assert!(matches!(made, Err(Error::Usage(_))), "{made:?}");
        let mut store = Store::with_redundancy(world, Redundancy::Xor { group: 3 })?;
        assert_eq!(store.redundancy(), Redundancy::Xor { group: 3 });
        assert_eq!(store.copies(), 0);
        checkpoint_sized(&mut store, 1)
    });
    for outcome in returned(outcomes) {
        assert_eq!(outcome.unwrap(), Ok(1));
    }
    let alone = runthrough::local(1).run(|world| {
        let mut store = Store::with_redundancy(world, Redundancy::Xor { group: 4 })?;
        checkpoint_sized(&mut store, 1)?;
        checkpoint_sized(&mut store, 2)
    });
    assert_eq!(returned(alone)[0], Some(Ok(2)));
}

/// Reed-Solomon parity of 2 over groups of 4 on 8 ranks: {0, 1, 2, 3} and {4, 5, 6, 7}. Ranks
/// 1 and 2 (one group) and 7 (the other) die together: nothing is lost, rank 3 (the next
/// surviving member after both) rebuilds slots 1 and 2 and rank 4 slot 7, bit for bit, slots of
/// every length. Three deaths in one group (0, 1 and 2) lose their slots: `Lost { slots: [0,
/// 1, 2] }` at every survivor.
#[test]
fn reed_solomon_parity_rebuilds_as_many_deaths_per_group_as_its_parity() {
    let redundancy = Redundancy::ReedSolomon {
        group: 4,
        parity: 2,
    };
    for dead in [vec![1u32, 2, 7], vec![0, 1, 2]] {
        let mut universe = runthrough::local(8);
        for &rank in &dead {
            universe = universe.kill_in_collective(rank, "barrier", 1, 0);
        }
        let killed = dead.clone();
        let outcomes = universe.run(move |world| {
            let mut store = Store::with_redundancy(world, redundancy)?;
            checkpoint_sized(&mut store, 1)?;
            checkpoint_sized(&mut store, 2)?;
            assert!(world.barrier().is_err(), "ranks {killed:?} die in it");
            let (_, restored) = store.recover_by_shrinking(world)?;
            checkpoint_sized(&mut store, 3)?;
            Ok::<_, Error>(restored)
        });
        for (rank, outcome) in returned(outcomes).into_iter().enumerate() {
            let Some(result) = outcome else {
                assert!(dead.contains(&(rank as u32)), "rank {rank} was not killed");
                continue;
            };
            if dead == [0, 1, 2] {
                assert_eq!(
                    result,
                    Err(Error::Lost {
                        slots: vec![0, 1, 2]
                    }),
                    "rank {rank}"
                );
                continue;
            }
            let slots: Vec<u32> = match rank {
                3 => vec![1, 2, 3],
                4 => vec![4, 7],
                r => vec![r as u32],
            };
            assert_eq!(result.unwrap(), sized_slots(&slots, 2), "rank {rank}");
        }
    }
}

/// Reed-Solomon parity with replacements: ranks 1 and 4 of 6 die (one group of 6, parity 2);
/// the survivors respawn both, and the two replacements join and get slots 1 and 4 rebuilt
/// (the lowest replacement the lowest dead rank's); the next checkpoint runs on six ranks.
#[test]
fn replacements_get_two_dead_ranks_slots_rebuilt_from_reed_solomon_parity() {
    let universe = runthrough::local(6);
    let faults = universe.fault_handle();
    let outcomes = universe.run(move |world| {
        let redundancy = Redundancy::ReedSolomon {
            group: 6,
            parity: 2,
        };
        let (comm, mut store, restored) = match world.parent() {
            Some(parents) => {
                let comm = parents.join_respawn()?;
                let (store, restored) = Store::join_with_redundancy(&comm, redundancy)?;
                (comm, store, restored)
            }
            None => {
                let mut store = Store::with_redundancy(world, redundancy)?;
                checkpoint_sized(&mut store, 1)?;
                if world.rank() == 1 || world.rank() == 4 {
                    faults.kill(world.rank());
                }
                let _ = world.barrier();
                let mut comm = world.respawn()?;
                // Both deaths may not be known at the first respawn: respawn again then.
                let restored = loop {
                    match store.recover(&comm) {
                        Ok(restored) => break restored,
                        Err(Error::Comm(_) | Error::NotCommitted) => comm = comm.respawn()?,
                        Err(e) => return Err(e),
                    }
                };
                (comm, store, restored)
            }
        };
        checkpoint_sized(&mut store, 2)?;
        Ok::<_, Error>((comm.rank(), restored, store.owned(), store.version()))
    });
    let mut ranks = Vec::new();
    for outcome in returned(outcomes).into_iter().flatten() {
        let (rank, restored, owned, version) = outcome.unwrap();
        assert_eq!(restored, sized_slots(&[rank], 1), "rank {rank}");
        assert_eq!((owned, version), (vec![rank], 3), "rank {rank}");
        ranks.push(rank);
    }
    ranks.sort_unstable();
    assert_eq!(ranks, vec![0, 1, 2, 3, 4, 5]);
}

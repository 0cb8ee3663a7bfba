// SPDX-License-Identifier: MIT OR Apache-2.0
//! validate_global on the in-process runtime (SPEC §2.1), with ranks killed before, during (at
//! chosen protocol points) and after the call.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use runthrough::{Error, LocalUniverse, RankOutcome, RankState};

/// Every call's G at every rank that returned from it: (call index) -> rank -> failed ranks.
type Log = Mutex<BTreeMap<usize, BTreeMap<u32, Vec<u32>>>>;

/// Runs `calls` validate_global calls on every rank, logging each returned G.
fn run_logged(
    universe: LocalUniverse,
    calls: usize,
    log: &Log,
) -> Vec<RankOutcome<Result<(), Error>>> {
    universe.run(|world| {
        for call in 0..calls {
            let g = world.validate_global()?;
            assert!(!g
                .failed()
                .iter()
                .any(|i| !i.state.contains(RankState::NULL)));
            let failed: Vec<u32> = g.failed().iter().map(|i| i.rank).collect();
            log.lock()
                .unwrap()
                .entry(call)
                .or_default()
                .insert(world.rank(), failed);
        }
        Ok(())
    })
}

/// Checks uniform agreement (every rank that returned from a call, dead later or not, returned
/// the same G), validity (G holds only killed ranks), monotony across calls, and that every
/// survivor returned from every call. Returns the G of each call.
fn check(outcomes: &[RankOutcome<Result<(), Error>>], calls: usize, log: &Log) -> Vec<Vec<u32>> {
    let killed: Vec<u32> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_killed())
        .map(|(r, _)| r as u32)
        .collect();
    for (rank, outcome) in outcomes.iter().enumerate() {
        match outcome {
            RankOutcome::Returned(result) => assert_eq!(result, &Ok(()), "rank {rank}"),
            RankOutcome::Killed => {}
            RankOutcome::Panicked(message) => panic!("rank {rank} panicked: {message}"),
        }
    }
    let log = log.lock().unwrap();
    let mut agreed = Vec::new();
    let mut previous: Vec<u32> = Vec::new();
    for call in 0..calls {
        let returned = log.get(&call).cloned().unwrap_or_default();
        for rank in 0..outcomes.len() as u32 {
            if !killed.contains(&rank) {
                assert!(
                    returned.contains_key(&rank),
                    "survivor {rank} did not return from call {call}"
                );
            }
        }
        let mut values = returned.values();
        let Some(first) = values.next() else { break };
        for other in values {
            assert_eq!(other, first, "uniform agreement, call {call}: {returned:?}");
        }
        assert!(
            first.iter().all(|r| killed.contains(r)),
            "validity: {first:?} killed {killed:?}"
        );
        assert!(
            previous.iter().all(|r| first.contains(r)),
            "monotone: {previous:?} then {first:?}"
        );
        previous = first.clone();
        agreed.push(first.clone());
    }
    agreed
}

/// SPEC §2.1: failure-free, every rank returns an empty G with no new failures, at 1..=9 ranks.
#[test]
fn failure_free_gives_an_empty_global_view() {
    for n in 1..=9 {
        let outcomes = runthrough::local(n).run(|world| {
            let g = world.validate_global()?;
            Ok::<_, Error>((
                g.num_failed(),
                g.new_failures(),
                world.local_view()?.num_failed(),
            ))
        });
        for outcome in outcomes {
            assert_eq!(outcome.returned().unwrap(), Ok((0, false, 0)));
        }
    }
}

/// SPEC §2.1 validity: a rank dead before the call (known to every detector at entry) is in G,
/// NULL|NEW; in the next call it is NULL|OLD and there are no new failures.
#[test]
fn a_rank_dead_before_the_call_is_in_g() {
    let outcomes = runthrough::local(6).kill_at_operation(4, 1).run(|world| {
        let mut buf = [0u8];
        // Wait until this rank's detector knows: the receive from the dead rank fails.
        assert_eq!(
            world.recv(&mut buf, 4u32, 0),
            Err(Error::ProcFailed { rank: 4 })
        );
        let g = world.validate_global()?;
        assert_eq!(g.state_of(4), Some(RankState::NULL | RankState::NEW));
        assert_eq!(world.local_view()?, g, "L is a copy of G");
        let g2 = world.validate_global()?;
        assert_eq!(g2.state_of(4), Some(RankState::NULL | RankState::OLD));
        assert!(!g2.new_failures());
        Ok::<_, Error>(g.num_failed())
    });
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        if rank != 4 {
            assert_eq!(outcome.returned().unwrap(), Ok(1));
        }
    }
}

/// SPEC §2.1 uniform agreement, validity and termination with one rank killed at each of its
/// first six protocol messages of the first call, for the root (0), an inner node with
/// children waiting (4 of 8: children 5 and 6), the last coordinator candidate (1) and a leaf
/// (7); the second call must then hold the dead rank (every detector knows it at entry).
#[test]
fn a_rank_killed_at_each_protocol_point() {
    for victim in [0, 1, 4, 7] {
        for message in 1..=6 {
            let log = Log::default();
            let universe = runthrough::local(8).kill_in_agreement(victim, 1, message);
            let outcomes = run_logged(universe, 2, &log);
            let agreed = check(&outcomes, 2, &log);
            if outcomes[victim as usize].is_killed() {
                assert_eq!(agreed[1], vec![victim], "victim {victim} message {message}");
            }
        }
    }
}

/// SPEC §2.1 termination: the coordinator and the next two candidates die in one call (a
/// cascade of coordinators), and a parent dies together with its children's new parent.
#[test]
fn cascades_of_coordinators_and_parents() {
    let cases: [&[(u32, u64)]; 3] = [
        &[(0, 2), (1, 1), (2, 1)],
        &[(4, 1), (0, 3)],
        &[(0, 1), (1, 3), (6, 2)],
    ];
    for case in cases {
        let log = Log::default();
        let mut universe = runthrough::local(9);
        for &(rank, message) in case {
            universe = universe.kill_in_agreement(rank, 1, message);
        }
        let outcomes = run_logged(universe, 2, &log);
        let agreed = check(&outcomes, 2, &log);
        let mut killed: Vec<u32> = case.iter().map(|&(r, _)| r).collect();
        killed.sort();
        assert_eq!(agreed[1], killed, "case {case:?}");
    }
}

/// SPEC §2.1: a rank killed right after it returned from the call (at its next operation)
/// still returned the same G as everyone; the next call holds it.
#[test]
fn a_rank_killed_after_returning() {
    let log = Log::default();
    let universe = runthrough::local(5).kill_at_operation(2, 2);
    let outcomes = run_logged(universe, 2, &log);
    let agreed = check(&outcomes, 2, &log);
    assert_eq!(agreed, vec![vec![], vec![2]]);
    assert!(
        log.lock().unwrap()[&0].contains_key(&2),
        "rank 2 returned from the first call"
    );
}

/// SPEC §2.1 monotone G and uniform agreement over 100 successive calls with failures
/// sprinkled among them (seeded: the seed is in the failure message).
#[test]
fn a_hundred_calls_with_failures_sprinkled() {
    for seed in 0..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 12;
        let mut universe = runthrough::local(n);
        let mut victims = Vec::new();
        while victims.len() < 5 {
            let rank = rng.gen_range(0..n);
            if !victims.contains(&rank) {
                victims.push(rank);
                universe = if rng.gen_bool(0.5) {
                    universe.kill_at_operation(rank, rng.gen_range(1..=100))
                } else {
                    universe.kill_in_agreement(rank, rng.gen_range(1..=100), rng.gen_range(1..=6))
                };
            }
        }
        let log = Log::default();
        let outcomes = run_logged(universe, 100, &log);
        let agreed = check(&outcomes, 100, &log);
        let killed: Vec<u32> = outcomes
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_killed())
            .map(|(r, _)| r as u32)
            .collect();
        assert_eq!(agreed.len(), 100, "seed {seed}");
        assert_eq!(
            agreed[99], killed,
            "seed {seed}: the last call holds every death"
        );
    }
}

/// SPEC §2.1: two threads of one rank calling validate_global on one communicator at once:
/// one gets `ConcurrentCollective` at once, the other completes; no hang. Rank 1 enters only
/// when rank 0's refused thread tells it to, so the first thread is surely still inside.
#[test]
fn two_threads_validating_at_once_is_an_error_not_a_hang() {
    let outcomes = runthrough::local(2).run(|world| {
        if world.rank() == 1 {
            let mut go = [0u8];
            world.recv(&mut go, 0u32, 9)?;
            return world.validate_global().map(|g| (g.num_failed(), 0));
        }
        let attempt = || {
            let result = world.validate_global();
            if result == Err(Error::ConcurrentCollective) {
                world.send(&[1u8], 1, 9)?;
            }
            result
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(attempt);
            let b = s.spawn(attempt);
            (a.join().unwrap(), b.join().unwrap())
        });
        let refused = [&a, &b]
            .iter()
            .filter(|r| ***r == Err(Error::ConcurrentCollective))
            .count();
        let ok = [&a, &b]
            .iter()
            .filter(|r| matches!(r, Ok(g) if g.num_failed() == 0))
            .count();
        Ok::<_, Error>((ok, refused))
    });
    let results: Vec<_> = outcomes
        .into_iter()
        .map(|o| o.returned().unwrap())
        .collect();
    assert_eq!(results[0], Ok((1, 1)));
    assert_eq!(results[1], Ok((0, 0)));
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Deterministic simulation of a program's own rank code (`runthrough::simulate`,
//! `runthrough::explore`; docs/src/semantics.md §7).

use std::collections::HashSet;

use runthrough::{Comm, Error, Op, RankOutcome, RankState, Source};

/// A ring exchange and an all-reduce, then the seed's pattern: every rank validates, and if G
/// holds failures the survivors sum again over its OK ranks (as often as new failures come).
/// What each rank returns is the sum over the ranks G leaves.
///
/// (An earlier version validated only where the first phase failed: under a false suspicion
/// one rank's all-reduce failed while the others' succeeded and returned, and it waited alone
/// in `validate_global`: the simulation found that program bug at once.)
fn ring_and_sum(world: &Comm) -> Result<u32, Error> {
    let n = world.size();
    let me = world.rank();
    let mut sum = [0u32];
    let mut done = (|| {
        world.send(&[me], (me + 1) % n, 0)?;
        let mut got = [0u32];
        world.recv(&mut got, (me + n - 1) % n, 0)?;
        assert_eq!(
            got[0],
            (me + n - 1) % n,
            "the ring carries the left neighbour's rank"
        );
        world.all_reduce(&[me], &mut sum, Op::Sum)
    })()
    .is_ok();
    loop {
        let g = world.validate_global()?;
        if g.num_failed() == 0 && done {
            return Ok(sum[0]);
        }
        let mine = if g.state_of(me) == Some(RankState::OK) {
            me
        } else {
            0
        };
        match world.all_reduce(&[mine], &mut sum, Op::Sum) {
            Ok(()) => {
                let survivors: u32 = (0..n)
                    .filter(|r| g.state_of(*r) == Some(RankState::OK))
                    .sum();
                assert_eq!(sum[0], survivors, "the sum over the OK ranks of G");
                if g.num_failed() > 0 {
                    return Ok(sum[0]);
                }
                done = true;
            }
            Err(Error::ProcFailed { .. }) | Err(Error::Revoked) => done = false,
            Err(other) => return Err(other),
        }
    }
}

#[test]
fn a_failure_free_run_gives_the_results_of_a_real_one() {
    let run = runthrough::simulate(5).seed(3).run(ring_and_sum);
    assert!(run.hang.is_none(), "{:?}", run.hang);
    for outcome in run.outcomes {
        assert_eq!(outcome.returned().map(|r| r.unwrap()), Some(10));
    }
    assert!(run.fired.is_empty());
    assert!(run.steps > 0);
}

#[test]
fn the_same_seed_and_plan_give_the_same_trace_and_other_seeds_other_schedules() {
    let mut hashes = HashSet::new();
    for seed in 0..100 {
        let first = runthrough::simulate(4)
            .seed(seed)
            .random_kills(2)
            .run(ring_and_sum);
        let again = runthrough::simulate(4)
            .replay(&first.token())
            .unwrap()
            .run(ring_and_sum);
        assert_eq!(first.trace_hash, again.trace_hash, "seed {seed}");
        assert_eq!(first.steps, again.steps, "seed {seed}");
        assert_eq!(first.fired, again.fired, "seed {seed}");
        // Every rank validates at least once: the library compared their decisions.
        let returned = first.outcomes.iter().filter(|o| !o.is_killed()).count() as u64;
        assert!(first.decisions_checked >= returned, "seed {seed}");
        assert_eq!(first.token(), again.token());
        hashes.insert(first.trace_hash);
    }
    // The seed decides the schedule: a hundred seeds do not all give one trace.
    assert!(hashes.len() > 80, "{} distinct traces", hashes.len());
}

#[test]
fn planned_kills_fire_where_the_plan_says_and_the_survivors_carry_on() {
    let plan: runthrough::FaultPlan = "2@call:1,0@validate_global:1:1".parse().unwrap();
    let mut died_in_agreement = false;
    for seed in 0..20 {
        let run = runthrough::simulate(5)
            .seed(seed)
            .faults(&plan)
            .run(ring_and_sum);
        assert!(run.hang.is_none(), "seed {seed}: {:?}", run.hang);
        assert!(run.outcomes[2].is_killed(), "seed {seed}");
        // Rank 0's kill fires only if it sends a message in its first agreement (a rank that
        // sends fewer is survived): the seed decides.
        let zero_died = run.outcomes[0].is_killed();
        assert_eq!(
            run.fired.len(),
            1 + usize::from(zero_died),
            "seed {seed}: {:?}",
            run.fired
        );
        for fault in &run.fired {
            assert!(plan.faults().contains(fault), "seed {seed}: {fault}");
        }
        let survivors: u32 = [0, 1, 3, 4]
            .into_iter()
            .filter(|r| !run.outcomes[*r as usize].is_killed())
            .sum();
        for rank in [1, 3, 4] {
            match &run.outcomes[rank] {
                RankOutcome::Returned(Ok(sum)) => assert_eq!(*sum, survivors, "seed {seed}"),
                other => panic!("seed {seed}: rank {rank}: {other:?}"),
            }
        }
        died_in_agreement |= zero_died;
    }
    assert!(
        died_in_agreement,
        "no seed killed rank 0 inside its agreement"
    );
}

#[test]
fn complete_messages_of_a_dead_rank_stay_receivable() {
    // Rank 1 sends three messages and dies at its next call; rank 0 receives all three, in
    // order, whenever the schedule lets its detector learn of the death, and then ProcFailed.
    let plan = "1@call:4".parse().unwrap();
    for seed in 0..50 {
        let run = runthrough::simulate(2)
            .seed(seed)
            .faults(&plan)
            .run(|world| {
                if world.rank() == 1 {
                    for i in 0..4u32 {
                        world.send(&[i], 0, 0)?;
                    }
                    unreachable!("rank 1 dies at its fourth call");
                }
                for i in 0..3u32 {
                    let mut got = [u32::MAX];
                    world.recv(&mut got, 1u32, 0)?;
                    assert_eq!(got[0], i);
                }
                let mut got = [0u32];
                Ok::<_, Error>(world.recv(&mut got, 1u32, 0).unwrap_err())
            });
        assert!(run.hang.is_none(), "seed {seed}: {:?}", run.hang);
        let mut outcomes = run.outcomes.into_iter();
        let zero = outcomes.next().unwrap().returned().unwrap().unwrap();
        assert_eq!(zero, Error::ProcFailed { rank: 1 }, "seed {seed}");
    }
}

#[test]
fn a_wildcard_receive_reports_the_failure_as_pending_until_acknowledged() {
    let plan = "2@call:1".parse().unwrap();
    for seed in 0..30 {
        let run = runthrough::simulate(3)
            .seed(seed)
            .faults(&plan)
            .run(|world| {
                match world.rank() {
                    0 => {
                        let mut got = [0u32];
                        // Rank 1's message may come first, or the failure of 2: either way the
                        // message is not lost.
                        loop {
                            match world.recv(&mut got, Source::Any, 0) {
                                Ok(_) => return Ok(got[0]),
                                Err(Error::ProcFailedPending) => {
                                    world.validate_local()?;
                                }
                                Err(other) => return Err(other),
                            }
                        }
                    }
                    1 => world.send(&[7u32], 0, 0).map(|()| 0),
                    _ => world.barrier().map(|()| 0),
                }
            });
        assert!(run.hang.is_none(), "seed {seed}: {:?}", run.hang);
        let mut outcomes = run.outcomes.into_iter();
        assert_eq!(
            outcomes.next().unwrap().returned(),
            Some(Ok(7)),
            "seed {seed}"
        );
    }
}

#[test]
fn a_program_that_waits_for_ever_is_reported_as_a_hang_and_ends() {
    let run = runthrough::simulate(3).seed(1).run(|world| {
        if world.rank() == 0 {
            let mut got = [0u8];
            world.recv(&mut got, 1u32, 5)?; // rank 1 never sends
        }
        Ok::<_, Error>(())
    });
    let hang = run.hang.expect("a hang");
    assert!(hang.contains("every rank still running waits"), "{hang}");
    assert!(hang.contains("rank 0 waiting in its call 1"), "{hang}");
    assert!(hang.contains("rank 1 done"), "{hang}");
    assert!(run.outcomes[0].is_killed(), "the hung rank is ended");
    assert!(matches!(run.outcomes[1], RankOutcome::Returned(Ok(()))));
}

#[test]
fn a_busy_loop_of_tests_uses_up_the_step_budget_and_moves_virtual_time() {
    let run = runthrough::simulate(2)
        .seed(9)
        .step_budget(5_000)
        .run(|world| {
            let start = world.wtime();
            if world.rank() == 0 {
                let mut got = [0u8];
                let mut request = world.irecv(&mut got, 1u32, 0)?;
                while request.test()?.is_none() {} // rank 1 never sends
            }
            for _ in 0..10 {
                assert!(world.iprobe::<u8>(Source::Any, 99)?.is_none());
            }
            Ok::<_, Error>(world.wtime() - start)
        });
    let hang = run.hang.expect("a hang");
    assert!(hang.contains("the step budget (5000) ran out"), "{hang}");
    // Rank 1's ten calls took at least ten steps of a microsecond each, and no more than the
    // budget's 5,000.
    let mut outcomes = run.outcomes.into_iter();
    assert!(outcomes.next().unwrap().is_killed());
    let elapsed = outcomes.next().unwrap().returned().unwrap().unwrap();
    assert!((10e-6..=5e-3).contains(&elapsed), "{elapsed}");
    // Virtual: whole microseconds (a wall clock would not give them), and the same again.
    let micros = elapsed * 1e6;
    assert!((micros - micros.round()).abs() < 1e-3, "{elapsed}");
}

/// When every rank waits for a timed event, virtual time jumps to it: a receive from a rank
/// that waits too ends with the planned death, however far away it is, with no hang and few
/// steps; a program waiting for a time by reading `wtime` in a loop gets there too.
#[test]
fn virtual_time_jumps_to_a_timed_kill_when_every_rank_waits() {
    let plan: runthrough::FaultPlan = "1@30".parse().unwrap();
    let run = runthrough::simulate(2).seed(3).faults(&plan).run(|world| {
        let mut got = [0u8];
        let other = 1 - world.rank();
        let error = world.recv(&mut got, other, 0).unwrap_err(); // nobody sends
        Ok::<_, Error>((error, world.wtime()))
    });
    assert!(run.hang.is_none(), "{:?}", run.hang);
    assert_eq!(run.fired, plan.faults());
    assert!(run.steps < 1_000, "{} steps", run.steps);
    let (error, at) = run
        .outcomes
        .into_iter()
        .next()
        .unwrap()
        .returned()
        .unwrap()
        .unwrap();
    assert_eq!(error, Error::ProcFailed { rank: 1 });
    assert!(at >= 30.0, "{at}");

    let run = runthrough::simulate(2)
        .seed(3)
        .step_budget(50_000)
        .run(|world| {
            while world.wtime() < 0.01 {} // 10,000 steps of a microsecond
            world.barrier()
        });
    assert!(run.check().is_ok(), "{:?}", run.check());
}

#[test]
fn a_library_call_from_a_thread_the_simulation_does_not_schedule_is_refused() {
    let run = runthrough::simulate(2).seed(0).run(|world| {
        let refused = std::thread::scope(|scope| {
            scope
                .spawn(|| world.barrier())
                .join()
                .expect("the refusal is an error, not a panic")
        });
        // The rank's own thread still runs normally afterwards.
        world.barrier()?;
        Ok::<_, Error>(refused)
    });
    assert!(run.check().is_ok(), "{:?}", run.check());
    for outcome in run.outcomes {
        let refused = outcome.returned().unwrap().unwrap().unwrap_err();
        let Error::Argument { reason } = refused else {
            panic!("refused with {refused:?}");
        };
        assert!(
            reason.contains("from a thread the simulation does not schedule"),
            "{reason}"
        );
    }
}

#[test]
fn replay_tokens_that_do_not_parse_are_refused_with_the_text() {
    let error = runthrough::simulate(2).replay("12").unwrap_err();
    assert!(error.to_string().contains("SEED/PLAN"), "{error}");
    let error = runthrough::simulate(2).replay("x/").unwrap_err();
    assert!(error.to_string().contains("\"x\" is not a seed"), "{error}");
    let error = runthrough::simulate(2).replay("3/5@call:2").unwrap_err();
    assert!(error.to_string().contains("rank 5"), "{error}");
    let ok = runthrough::simulate(2).replay("3/").unwrap();
    let run = ok.run(|world| world.barrier());
    assert_eq!(run.token(), "3/");
}

/// A planted bug: a program that assumes no rank ever dies (it unwraps its all-reduce). The
/// exploration finds a failing seed, shrinks its plan to one kill, and the shrunk token fails
/// again when replayed.
#[test]
fn explore_finds_a_planted_bug_and_its_shrunk_token_replays_it() {
    // ANCHOR: explore
    let careless = |world: &Comm| {
        let mut sum = [0u32];
        world
            .all_reduce(&[world.rank()], &mut sum, Op::Sum)
            .expect("no rank dies");
        sum[0]
    };
    let found = runthrough::explore(4)
        .schedules(60)
        .seed(100)
        .random_kills(2)
        .kill_horizon(4)
        .threads(2)
        .run(careless, |_| Ok(()));
    assert!(found.failed > 0, "{found:?}");
    let failure = found.lowest.expect("a failure");
    eprintln!("{failure}");
    // ANCHOR_END: explore
    assert!(failure.seed >= 100 && failure.seed < 160);
    assert!(failure.why.contains("panicked"), "{failure}");
    let shrunk_plan = failure.shrunk.split_once('/').unwrap().1;
    assert_eq!(shrunk_plan.split(',').count(), 1, "{failure}");
    assert!(failure.replay_command().contains(&failure.shrunk));
    let replayed = runthrough::simulate(4)
        .replay(&failure.shrunk)
        .unwrap()
        .run(careless);
    assert!(replayed.check().is_err(), "{failure}");
    // The same program with its failures handled passes every seed.
    let fine = runthrough::explore(4)
        .schedules(60)
        .seed(100)
        .random_kills(2)
        .kill_horizon(4)
        .threads(2)
        .run(ring_and_sum, |run| {
            for outcome in &run.outcomes {
                if let RankOutcome::Returned(Err(error)) = outcome {
                    return Err(format!("a survivor failed: {error}"));
                }
            }
            Ok(())
        });
    assert_eq!(fine.failed, 0, "{:?}", fine.lowest);
}

/// False suspicions: a live rank reported failed by one peer runs on until it is fenced or
/// halts on learning it was declared failed. The survivors still agree (the library's checks)
/// and sum over the OK ranks of G; the token carries the setting and replays the run.
#[test]
fn false_suspicions_end_in_a_fence_and_the_survivors_agree() {
    let mut suspected_runs = 0;
    for seed in 0..60 {
        let run = runthrough::simulate(5)
            .seed(seed)
            .false_suspicions(1)
            // (Within the program's run, about 140 steps at seed 0: a suspicion drawn after
            // its end fires at no one.)
            .suspicion_horizon(120)
            .run(ring_and_sum);
        if seed == 0 {
            eprintln!("{} steps", run.steps);
        }
        assert!(run.check().is_ok(), "seed {seed}: {:?}", run.check());
        assert!(run.token().ends_with("/suspicions:1"), "{}", run.token());
        let fenced: Vec<_> = run
            .fired
            .iter()
            .filter(|f| matches!(f.trigger, runthrough::Trigger::After(_)))
            .collect();
        assert!(fenced.len() <= 1, "seed {seed}: {fenced:?}");
        if let Some(fence) = fenced.first() {
            suspected_runs += 1;
            assert!(run.outcomes[fence.rank as usize].is_killed(), "seed {seed}");
        }
        for (rank, outcome) in run.outcomes.iter().enumerate() {
            if let RankOutcome::Returned(result) = outcome {
                assert!(result.is_ok(), "seed {seed}: rank {rank}: {result:?}");
            }
        }
        let again = runthrough::simulate(5)
            .suspicion_horizon(120)
            .replay(&run.token())
            .unwrap()
            .run(ring_and_sum);
        assert_eq!(run.trace_hash, again.trace_hash, "seed {seed}");
    }
    assert!(
        suspected_runs > 10,
        "{suspected_runs} of 60 runs had a suspicion that fenced"
    );
}

/// `RANK@packet:K`: the rank dies just before its K-th packet of any kind. Rank 1's packets
/// are its three messages (it receives nothing, so it sends no credit): `1@packet:3` lets two
/// through, in-process and under the simulation alike.
#[test]
fn a_packet_fault_lets_the_packets_before_it_through() {
    let body = |world: &Comm| {
        if world.rank() == 1 {
            for i in 0..3u32 {
                world.send(&[i], 0, 0)?;
            }
            return Ok(Vec::new());
        }
        let mut got = Vec::new();
        loop {
            let mut value = [0u32];
            match world.recv(&mut value, 1u32, 0) {
                Ok(_) => got.push(value[0]),
                Err(Error::ProcFailed { rank: 1 }) => return Ok(got),
                Err(other) => return Err(other),
            }
        }
    };
    let plan: runthrough::FaultPlan = "1@packet:3".parse().unwrap();
    let local = runthrough::local(2).faults(&plan).run(body);
    assert!(local[1].is_killed());
    let mut local = local.into_iter();
    assert_eq!(local.next().unwrap().returned(), Some(Ok(vec![0, 1])));
    for seed in 0..20 {
        let run = runthrough::simulate(2).seed(seed).faults(&plan).run(body);
        assert_eq!(run.fired, plan.faults(), "seed {seed}");
        let mut outcomes = run.outcomes.into_iter();
        assert_eq!(outcomes.next().unwrap().returned(), Some(Ok(vec![0, 1])));
    }
}

/// `trace(true)` keeps every step in words: who ran, each delivery, the death; the same token
/// gives the same lines, and without it nothing is kept.
#[test]
fn a_trace_tells_the_steps_and_repeats_with_the_token() {
    let plan: runthrough::FaultPlan = "2@call:2".parse().unwrap();
    let traced = |seed| {
        runthrough::simulate(3)
            .seed(seed)
            .faults(&plan)
            .trace(true)
            .run(ring_and_sum)
    };
    let run = traced(5);
    assert!(
        run.trace.iter().any(|l| l.contains("run 0 (call")),
        "{:#?}",
        run.trace
    );
    assert!(
        run.trace.iter().any(|l| l.ends_with("2 dies")),
        "{:#?}",
        run.trace
    );
    assert!(
        run.trace
            .iter()
            .any(|l| l.contains("2 -> 0: (the sender died)")),
        "{:#?}",
        run.trace
    );
    assert!(
        run.trace.iter().any(|l| l.contains("Agreement")),
        "{:#?}",
        run.trace
    );
    assert_eq!(traced(5).trace, run.trace);
    let untraced = runthrough::simulate(3)
        .seed(5)
        .faults(&plan)
        .run(ring_and_sum);
    assert!(untraced.trace.is_empty());
    assert_eq!(
        untraced.trace_hash, run.trace_hash,
        "tracing changes nothing"
    );
}

/// Exactly one rank runs at a time: the code between two library calls never overlaps
/// another rank's (a counter of ranks inside it is never above one).
#[test]
fn ranks_never_run_at_the_same_time() {
    use std::sync::atomic::{AtomicU32, Ordering};
    static INSIDE: AtomicU32 = AtomicU32::new(0);
    let run = runthrough::simulate(6).seed(11).run(|world| {
        let mut most = 0;
        for i in 0..200u32 {
            most = most.max(INSIDE.fetch_add(1, Ordering::SeqCst) + 1);
            let mut x = u64::from(i);
            for _ in 0..2_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1); // some work
            }
            std::hint::black_box(x);
            INSIDE.fetch_sub(1, Ordering::SeqCst);
            world.iprobe::<u8>(Source::Any, 1)?;
        }
        Ok::<_, Error>(most)
    });
    for outcome in run.outcomes {
        assert_eq!(outcome.returned(), Some(Ok(1)));
    }
}

/// The lowest failing seed is reported, whatever order the runs finish in on several threads.
#[test]
fn explore_reports_the_lowest_failing_seed() {
    let failing = |seed: u64| seed % 7 == 3 || seed == 141;
    let found = runthrough::explore(2)
        .schedules(60)
        .seed(140)
        .threads(3)
        .run(
            |world| world.barrier(),
            |run| {
                if failing(run.seed) {
                    Err(format!("seed {} fails", run.seed))
                } else {
                    Ok(())
                }
            },
        );
    let expected: Vec<u64> = (140..200).filter(|s| failing(*s)).collect();
    assert_eq!(found.failed, expected.len() as u64);
    assert_eq!(found.lowest.unwrap().seed, expected[0]);
}

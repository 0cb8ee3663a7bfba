// SPDX-License-Identifier: MIT OR Apache-2.0
//! Run-through stabilization, the seed's pattern: ranks share a bag of work units, validate
//! globally at every iteration boundary, and when ranks die the survivors agree on who, take over
//! their units, redo the interrupted iteration and go on. The result must equal the failure-free
//! one: the example checks it and exits non-zero when it does not.
//!
//! `cargo run --release -p runthrough --example run_through -- [--ranks N] [--kill R@I,...]`
//! (`--kill 3@2` kills rank 3 when it starts iteration 2, before it sends its share).

use std::process::ExitCode;
use std::time::Instant;

use runthrough::{Comm, Error, FaultHandle, RankState};

const UNITS: u64 = 96;
const ITERATIONS: u64 = 8;

/// One unit of work: deterministic, so the failure-free result is known.
fn work(unit: u64, iteration: u64) -> u64 {
    let mut x = unit.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ iteration;
    for _ in 0..2000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    x >> 40
}

fn expected() -> u64 {
    (0..ITERATIONS)
        .map(|i| (0..UNITS).map(|u| work(u, i)).sum::<u64>())
        .sum()
}

/// One rank's program. Returns the committed total.
fn rank_main(world: &Comm, kills: &[(u32, u64)], faults: &FaultHandle) -> Result<u64, Error> {
    let me = world.rank();
    let mut g = world.validate_global()?;
    let mut total = 0u64;
    let (mut iteration, mut attempt) = (0u64, 0i32);
    let started = Instant::now();
    while iteration < ITERATIONS {
        if kills.contains(&(me, iteration)) {
            println!("[rank {me}] dies at iteration {iteration} (injected)");
            faults.kill(me);
        }
        // The survivors in G share the units round-robin: a dead rank's units move to others.
        let alive: Vec<u32> = g.ranks(RankState::OK).map(|i| i.rank).collect();
        let position = alive
            .iter()
            .position(|&r| r == me)
            .expect("a running rank is OK in G");
        let share: u64 = (0..UNITS)
            .filter(|u| (*u as usize) % alive.len() == position)
            .map(|u| work(u, iteration))
            .sum();
        let coordinator = alive[0];
        // Gather the shares at the coordinator, which sends the iteration's sum back to all.
        let tentative: Option<u64> = if me == coordinator {
            let mut sum = Some(share);
            for &r in &alive[1..] {
                let mut buf = [0u64];
                match world.recv(&mut buf, r, attempt) {
                    Ok(_) => sum = sum.map(|s| s + buf[0]),
                    Err(Error::ProcFailed { .. }) => sum = None,
                    Err(e) => return Err(e),
                }
            }
            // Always answer, so nobody waits on a live coordinator: [valid, sum].
            let reply = [sum.is_some() as u64, sum.unwrap_or(0)];
            for &r in &alive[1..] {
                let _ = world.send(&reply, r, attempt);
            }
            sum
        } else {
            let mut buf = [0u64; 2];
            let sent = world.send(&[share], coordinator, attempt);
            match sent.and_then(|_| world.recv(&mut buf, coordinator, attempt)) {
                Ok(_) => (buf[0] == 1).then_some(buf[1]),
                Err(Error::ProcFailed { .. }) => None,
                Err(e) => return Err(e),
            }
        };
        attempt += 1;
        // The seed's pattern: validate at the iteration boundary.
        let after = world.validate_global()?;
        if after.new_failures() {
            let newly_dead: Vec<u32> = after
                .ranks(RankState::NULL | RankState::NEW)
                .map(|i| i.rank)
                .collect();
            if me == after.ranks(RankState::OK).next().map_or(me, |i| i.rank) {
                println!(
                    "[rank {me}] iteration {iteration}: validate_global says ranks {newly_dead:?} are NULL|NEW \
                     ({} failed in all); redistributing their units and redoing the iteration",
                    after.num_failed()
                );
            }
        } else {
            let sum = tentative.expect("no new failure, so every exchange succeeded");
            total += sum;
            if me == coordinator {
                println!(
                    "[rank {me}] iteration {iteration} done on {} ranks: sum {sum} ({:.1?})",
                    alive.len(),
                    started.elapsed()
                );
            }
            iteration += 1;
        }
        g = after;
    }
    Ok(total)
}

fn main() -> ExitCode {
    let mut ranks = 8u32;
    let mut kills: Vec<(u32, u64)> = vec![(3, 2), (5, 5)];
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        match (args[i].as_str(), args.get(i + 1)) {
            ("--ranks", Some(v)) => ranks = v.parse().expect("--ranks N"),
            ("--kill", Some(v)) => {
                kills = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        let (r, it) = s.split_once('@').expect("--kill RANK@ITERATION,...");
                        (r.parse().expect("rank"), it.parse().expect("iteration"))
                    })
                    .collect()
            }
            (other, _) => {
                eprintln!(
                    "unknown argument {other}; usage: run_through [--ranks N] [--kill R@I,...]"
                );
                return ExitCode::from(2);
            }
        }
        i += 2;
    }
    println!("run_through: {ranks} in-process ranks, {UNITS} work units, {ITERATIONS} iterations, kills {kills:?}");
    let universe = runthrough::local(ranks);
    let faults = universe.fault_handle();
    let started = Instant::now();
    let outcomes = universe.run(|world| rank_main(world, &kills, &faults));
    let want = expected();
    let mut ok = true;
    let mut survivors = 0;
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            runthrough::RankOutcome::Returned(Ok(total)) => {
                survivors += 1;
                if total != want {
                    ok = false;
                    println!("rank {rank}: total {total} differs from the failure-free {want}");
                }
            }
            runthrough::RankOutcome::Returned(Err(e)) => {
                ok = false;
                println!("rank {rank}: error {e}");
            }
            runthrough::RankOutcome::Killed => println!("rank {rank}: killed"),
            runthrough::RankOutcome::Panicked(m) => {
                ok = false;
                println!("rank {rank}: panicked: {m}");
            }
        }
    }
    println!(
        "{survivors} survivors; checksum {} the failure-free result {want} ({:.1?})",
        if ok { "equals" } else { "DIFFERS FROM" },
        started.elapsed()
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

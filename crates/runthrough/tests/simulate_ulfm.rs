// SPDX-License-Identifier: MIT OR Apache-2.0
//! The ULFM recovery loop under exploration (docs/src/semantics.md §3.4, §3.5, §7): each round an
//! all-reduce on a duplicate of the current communicator; a rank that sees a failure revokes it,
//! and every survivor agrees on whether the round succeeded everywhere, then shrinks and
//! retries. Kills anywhere (inside revocations, agreements, shrinks) and false suspicions: every
//! survivor must finish every round with the sum over the same survivors.

use runthrough::{Comm, Error, Op, RankOutcome};

const ROUNDS: u32 = 3;

/// What a rank ends with: per round, (communicator size, sum of the members' world ranks + 1).
fn rounds(world: &Comm) -> Result<Vec<(u32, u32)>, Error> {
    // A creation gives every member the same communicator or the same error (§3.4): on an
    // error they all shrink instead.
    let mut comm = match world.dup() {
        Ok(comm) => comm,
        Err(Error::ProcFailed { .. }) => world.shrink()?,
        Err(other) => return Err(other),
    };
    let mut done = Vec::new();
    while done.len() < ROUNDS as usize {
        let mut sum = [0u32];
        let attempt = comm
            .dup()
            .and_then(|work| work.all_reduce(&[world.rank() + 1], &mut sum, Op::Sum));
        if attempt.is_err() {
            let _ = comm.revoke();
        }
        // Did every survivor succeed? (agree's flag is the AND of the contributions.)
        let flag = comm.agree(u32::from(attempt.is_ok()));
        if flag == Ok(1) {
            done.push((comm.size(), sum[0]));
            continue;
        }
        comm = comm.shrink()?;
    }
    Ok(done)
}

#[test]
fn the_recovery_loop_gives_every_survivor_the_same_rounds() {
    let found = runthrough::explore(5)
        .schedules(
            std::env::var("RT_SIM_SCHEDULES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(300),
        )
        .seed(1)
        .random_kills(2)
        .kill_horizon(20)
        .false_suspicions(1)
        .suspicion_horizon(1_500)
        .threads(2)
        .run(rounds, |run| {
            let mut agreed: Option<&Vec<(u32, u32)>> = None;
            for (rank, outcome) in run.outcomes.iter().enumerate() {
                match outcome {
                    RankOutcome::Killed if run.fired.iter().any(|f| f.rank == rank as u32) => {}
                    RankOutcome::Returned(Ok(rounds)) => {
                        if let Some(first) = agreed {
                            if first != rounds {
                                return Err(format!("rank {rank}: {rounds:?}, another {first:?}"));
                            }
                        }
                        agreed = Some(rounds);
                    }
                    other => return Err(format!("rank {rank}: {other:?}")),
                }
            }
            Ok(())
        });
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
}

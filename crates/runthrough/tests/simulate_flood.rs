// SPDX-License-Identifier: MIT OR Apache-2.0
//! A flood under a small unexpected-message cap, explored with kills: every sender's messages
//! reach rank 0 exactly once and in order (all of a survivor's, a prefix of a dead sender's),
//! rank 0's wildcard receive reports deaths as pending until acknowledged, and everybody ends
//! with one agreed G (docs/src/semantics.md §3.1, §3.2, §6, §7).

use runthrough::{Comm, Error, RankOutcome, RankState, Source};

const MESSAGES: u32 = 40;

/// Rank 0: per sender, how many messages arrived (in order, checked as they come).
fn flood(world: &Comm) -> Result<Vec<u32>, Error> {
    let n = world.size();
    if world.rank() != 0 {
        for i in 0..MESSAGES {
            // Rank 0 dead: stop sending, but still validate with the others. (Returning at
            // once was the first version's bug: the exploration found the one sender that had
            // finished waiting alone in validate_global.)
            if let Err(Error::ProcFailed { rank: 0 }) =
                world.send(&[world.rank(), i, 0, 0, 0, 0, 0, 0], 0, 7)
            {
                break;
            }
        }
        world.validate_global()?;
        return Ok(Vec::new());
    }
    let mut next = vec![0u32; n as usize];
    loop {
        let failed = world.validate_local()?;
        let done = (1..n).all(|r| {
            next[r as usize] == MESSAGES
                || failed
                    .state_of(r)
                    .is_some_and(|s| s.contains(RankState::FAILED))
        });
        if done {
            break;
        }
        let mut message = [0u32; 8];
        match world.recv(&mut message, Source::Any, 7) {
            Ok(status) => {
                let from = status.source.expect("a source") as usize;
                assert_eq!(message[0] as usize, from);
                assert_eq!(
                    message[1], next[from],
                    "in order, exactly once, from {from}"
                );
                next[from] += 1;
            }
            Err(Error::ProcFailedPending) | Err(Error::ProcFailed { .. }) => continue,
            Err(other) => return Err(other),
        }
    }
    world.validate_global()?;
    Ok(next)
}

#[test]
fn a_flood_under_a_small_cap_keeps_every_message_whatever_the_kills() {
    let found = runthrough::explore(4)
        .schedules(
            std::env::var("RT_SIM_SCHEDULES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(400),
        )
        .seed(1)
        .random_kills(2)
        .kill_horizon(50)
        .unexpected_cap(3 * 1024)
        .threads(2)
        .run(flood, |run| {
            let dead = |r: u32| run.fired.iter().any(|f| f.rank == r);
            if dead(0) {
                return Ok(());
            }
            let RankOutcome::Returned(Ok(counts)) = &run.outcomes[0] else {
                return Err(format!("rank 0: {:?}", run.outcomes[0]));
            };
            for (rank, outcome) in run.outcomes.iter().enumerate().skip(1) {
                match outcome {
                    RankOutcome::Returned(Ok(_)) if counts[rank] == MESSAGES => {}
                    RankOutcome::Returned(other) => {
                        return Err(format!("rank {rank}: {other:?}, {} arrived", counts[rank]))
                    }
                    RankOutcome::Killed if dead(rank as u32) => {}
                    other => return Err(format!("rank {rank}: {other:?}")),
                }
            }
            Ok(())
        });
    assert!(found.lowest.is_none(), "{}", found.lowest.unwrap());
}

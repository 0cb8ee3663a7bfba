// SPDX-License-Identifier: MIT OR Apache-2.0
//! The README's Rust example: eight ranks, threads of one process, add their numbers in an
//! all-reduce, round after round; rank 3 dies as it starts its 8th communication call. After
//! each round every survivor calls `validate_global`, which returns the same G at every
//! survivor, so all take the same decision: a round around a new failure is redone over the
//! survivors. Exit status 0 only when every survivor's last sum is the sum over the ranks that
//! G says are alive.
//!
//! `cargo run --release -p runthrough-examples --bin quickstart`

use runthrough::{Op, RankOutcome, RankState};

// ANCHOR: example
fn main() -> std::process::ExitCode {
    // Rank 3 dies as it starts its 8th communication call (`3@call:8`).
    let outcomes = runthrough::local(8).kill_at_operation(3, 8).run(|world| {
        let (mut sum, mut round) = ([0u64], 0);
        while round < 20 {
            let reduced = world.all_reduce(&[u64::from(world.rank()) + 1], &mut sum, Op::Sum);
            let g = world.validate_global()?; // G: the failures all survivors agree on
            if g.new_failures() {
                continue; // someone died around this round: redo it over the survivors
            }
            reduced?; // no new failure in G, so the all-reduce succeeded
            round += 1;
        }
        let g = world.validate_global()?;
        let alive: u64 = g.ranks(RankState::OK).map(|r| u64::from(r.rank) + 1).sum();
        Ok::<_, runthrough::Error>((sum[0], alive))
    });
    let mut right = true;
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            RankOutcome::Returned(Ok((sum, alive))) => {
                println!("rank {rank}: sum {sum}, over the survivors {alive}");
                right &= sum == alive;
            }
            other => println!("rank {rank}: {other:?}"),
        }
    }
    std::process::ExitCode::from(u8::from(!right))
}
// ANCHOR_END: example

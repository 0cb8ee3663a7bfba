// SPDX-License-Identifier: MIT OR Apache-2.0
//! A multi-process job under rtrun: a token goes round the ring of ranks, then every rank
//! validates globally and sums its rank over the survivors. Ranks may be killed meanwhile
//! (`--kill`): the survivors agree on who died and check the sum over the ranks left.
//! Exits non-zero when a result is wrong.
//!
//! ```sh
//! cargo build --release -p rtrun -p runthrough-examples --bin tcp_ring
//! target/release/rtrun -n 4 --tag-output target/release/tcp_ring
//! target/release/rtrun -n 8 --tag-output --kill 3@validate_global:1 target/release/tcp_ring
//! ```

use std::process::ExitCode;

use runthrough::{Error, Op, RankState};

fn run(world: &runthrough::Comm) -> Result<(), String> {
    let (me, n) = (world.rank(), world.size());
    let e = |e: Error| e.to_string();
    // The ring: rank 0 starts the token, each rank adds one and passes it on. A dead
    // neighbour breaks the ring: a rank that cannot receive passes on BROKEN instead, so nobody
    // waits for a token that will never come, and validate_global below sorts out who died.
    const BROKEN: u64 = u64::MAX;
    let mut token = [0u64];
    let previous = (me + n - 1) % n;
    let next = (me + 1) % n;
    if me != 0 {
        match world.recv(&mut token, previous, 0) {
            Ok(_) if token[0] != BROKEN => token[0] += 1,
            Ok(_) => {}
            Err(err @ Error::ProcFailed { .. }) => {
                println!("ring broken: {err}");
                token[0] = BROKEN;
            }
            Err(err) => return Err(err.to_string()),
        }
    }
    match world.send(&token, next, 0) {
        Ok(()) => {}
        Err(err @ Error::ProcFailed { .. }) => println!("ring broken: {err}"),
        Err(err) => return Err(err.to_string()),
    }
    if me == 0 {
        match world.recv(&mut token, previous, 0) {
            Ok(_) if token[0] == BROKEN => println!("ring broken upstream"),
            Ok(_) if token[0] != u64::from(n - 1) => {
                return Err(format!("the token came back as {}", token[0]))
            }
            Ok(_) => println!("the token went round {n} ranks"),
            Err(err @ Error::ProcFailed { .. }) => println!("ring broken: {err}"),
            Err(err) => return Err(err.to_string()),
        }
    }
    let g = world.validate_global().map_err(e)?;
    let alive: Vec<u32> = g.ranks(RankState::OK).map(|i| i.rank).collect();
    let dead: Vec<u32> = g.ranks(RankState::NULL).map(|i| i.rank).collect();
    let mut sum = [0u64];
    world
        .all_reduce(&[u64::from(me)], &mut sum, Op::Sum)
        .map_err(e)?;
    let want: u64 = alive.iter().map(|&r| u64::from(r)).sum();
    if sum[0] != want {
        return Err(format!(
            "sum of ranks {} over {alive:?}, expected {want}",
            sum[0]
        ));
    }
    println!("agreed failed={dead:?}; sum of surviving ranks {}", sum[0]);
    Ok(())
}

// ANCHOR: main
fn main() -> ExitCode {
    let universe = match runthrough::init() {
        Ok(universe) => universe,
        Err(err) => {
            eprintln!("tcp_ring: {err}");
            return ExitCode::from(2);
        }
    };
    match run(universe.world()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tcp_ring: {err}");
            ExitCode::FAILURE
        }
    }
}
// ANCHOR_END: main

// SPDX-License-Identifier: MIT OR Apache-2.0
//! In-process rows of the ULFM operations: `agree` and `shrink` failure-free (side by side with
//! barrier, all_reduce and validate_global at the same rank counts), and `shrink_after_failure`:
//! a kill, then the survivors' `agree` + `shrink`, timed at rank 0 from the kill to its shrink
//! done.

use std::time::Instant;

use runthrough::{Error, Source};

use super::{timed, Bench};

/// `agree` and `shrink` (with the new communicator freed) at `ranks` in-process ranks.
pub(super) fn agree_and_shrink(bench: &mut Bench, ranks: u32, iterations: usize) {
    bench.in_process("agree", ranks, 0, |w, r| {
        let s = timed(r, iterations, || w.agree(1).map(|_| ()))?;
        Ok(if w.rank() == 0 { s } else { Vec::new() })
    });
    // Every shrink makes a communicator: fewer of them than of the other collectives.
    let shrinks = (iterations / 4).max(10);
    bench.in_process("shrink", ranks, 0, |w, r| {
        let s = timed(r, shrinks, || w.shrink()?.free())?;
        Ok(if w.rank() == 0 { s } else { Vec::new() })
    });
}

/// Time from a kill of the last rank to rank 0's `agree` + `shrink` done (the survivors agree
/// on the failure and build the communicator without it).
pub(super) fn shrink_after_failure(universe_ranks: u32, repetitions: usize) -> Vec<f64> {
    let mut samples = Vec::new();
    for _ in 0..repetitions {
        let universe = runthrough::local(universe_ranks);
        let faults = universe.fault_handle();
        let victim = universe_ranks - 1;
        let outcomes = universe.run(|world| {
            // Everyone reports to rank 0 first, so no rank is inside a call the kill would fail.
            let mut buf = [0u8];
            if world.rank() == 0 {
                for _ in 1..world.size() {
                    world.recv(&mut buf, Source::Any, 1)?;
                }
            } else {
                world.send(&[1u8], 0, 1)?;
            }
            if world.rank() == victim {
                world.recv(&mut buf, 0u32, 99)?; // blocks until killed
            }
            let start = Instant::now();
            if world.rank() == 0 {
                faults.kill(victim);
            }
            // A rank that entered before the failure was known gets AgreeProcFailed: the failure
            // is not acknowledged yet. Either way the survivors have agreed.
            match world.agree(1) {
                Ok(_) | Err(Error::AgreeProcFailed { .. }) => {}
                Err(e) => return Err(e),
            }
            let shrunk = world.shrink()?;
            assert_eq!(shrunk.size(), universe_ranks - 1, "the victim is gone");
            Ok::<_, Error>((world.rank() == 0).then(|| start.elapsed().as_secs_f64() * 1e6))
        });
        for outcome in outcomes.into_iter().filter_map(|o| o.returned()) {
            if let Some(us) = outcome.expect("shrink after a failure") {
                samples.push(us);
            }
        }
    }
    samples
}

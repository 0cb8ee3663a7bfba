// SPDX-License-Identifier: MIT OR Apache-2.0
//! Under `runthrough::simulate` no thread runs but the ranks' own (docs/semantics.md §7): no
//! transport, progress or timer thread. Alone in its test binary, so that the process's threads
//! are the harness's main thread, this test's thread (which drives the simulation) and the
//! ranks'.

/// The names of this process's threads (`/proc/self/task/*/comm`), by thread id.
fn threads() -> Vec<(String, String)> {
    let mut threads: Vec<(String, String)> = std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = std::fs::read_to_string(entry.path().join("comm")).ok()?;
            Some((
                entry.file_name().to_string_lossy().into_owned(),
                name.trim().to_string(),
            ))
        })
        .collect();
    threads.sort();
    threads
}

#[test]
fn a_simulated_run_has_no_thread_but_the_ranks() {
    let before = threads();
    let run = runthrough::simulate(6)
        .seed(4)
        .faults(&"2@call:2,1@1ms".parse().unwrap())
        .run(|world| {
            let mut sum = [0u32];
            let _ = world.all_reduce(&[1u32], &mut sum, runthrough::Op::Sum);
            let _ = world.validate_global();
            threads()
        });
    assert!(run.hang.is_none(), "{:?}", run.hang);
    let mut looked = 0;
    for (rank, outcome) in run.outcomes.into_iter().enumerate() {
        let Some(seen) = outcome.returned() else {
            continue;
        };
        looked += 1;
        let others: Vec<_> = seen
            .iter()
            .filter(|t| !before.contains(t) && !t.1.starts_with("sim-rank-"))
            .collect();
        assert!(
            others.is_empty(),
            "rank {rank} saw other threads: {others:?}"
        );
        let ranks = seen.iter().filter(|t| t.1.starts_with("sim-rank-")).count();
        assert!((1..=6).contains(&ranks), "rank {rank}: {seen:?}");
    }
    assert!(looked >= 4, "the survivors looked");
}

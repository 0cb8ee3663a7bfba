// SPDX-License-Identifier: MIT OR Apache-2.0
//! Under `runthrough::simulate` no thread runs but the ranks' own (docs/src/semantics.md §7): no
//! transport, progress or timer thread. Alone in its test binary, so that the process's threads
//! are the harness's main thread, this test's thread (which drives the simulation) and the
//! ranks'.

/// The names of this process's threads (`/proc/self/task/*/comm`), by thread id. A listing
/// of `/proc/self/task` can skip live threads while another thread exits (procfs walks the
/// thread list by position), as a killed rank's does here: it is read again until it holds
/// the calling thread itself (at most 100 times).
fn threads() -> Vec<(String, String)> {
    let me = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
    let me = me
        .file_name()
        .expect("a thread id")
        .to_string_lossy()
        .into_owned();
    let mut threads = list_threads();
    for _ in 0..100 {
        if threads.iter().any(|(id, _)| *id == me) {
            break;
        }
        threads = list_threads();
    }
    threads
}

/// One listing of `/proc/self/task`, sorted.
fn list_threads() -> Vec<(String, String)> {
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

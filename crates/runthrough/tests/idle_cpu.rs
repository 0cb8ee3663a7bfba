// SPDX-License-Identifier: MIT OR Apache-2.0
//! Waiting ranks leave the machine idle (issue 2: "nothing in the runtime busy-spins without
//! backing off"; SPEC §6 memory/idle targets). Alone in its own test binary, because it measures
//! the CPU time of the whole process.
#![cfg(target_os = "linux")]

mod support;

use std::time::{Duration, Instant};

use runthrough::{Result, Source};
use support::{bounded, outcomes};

const RANKS: u32 = 64;
/// How long rank 0 sleeps while the others wait in `recv`: the idle window being measured (not
/// a synchronisation: the others are released by rank 0's messages, whenever they started).
const IDLE: Duration = Duration::from_millis(1500);
/// `/proc` reports CPU times in clock ticks of `sysconf(_SC_CLK_TCK)`, 100 on Linux.
const TICKS_PER_SECOND: f64 = 100.0;

/// User plus system CPU time of this process so far (`/proc/self/stat` fields 14 and 15).
fn process_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("reading /proc/self/stat");
    // Field 2 is "(comm)" and may hold spaces: count fields from the last ')'.
    let after_comm = &stat[stat.rfind(')').expect("a (comm) field") + 1..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // after_comm starts at field 3, so field n is fields[n - 3].
    let ticks = |n: usize| -> u64 { fields[n - 3].parse().expect("a tick count") };
    Duration::from_secs_f64((ticks(14) + ticks(15)) as f64 / TICKS_PER_SECOND)
}

/// Issue 2 (no busy-spinning without backing off): 63 ranks blocked in `recv` for 1.5 s (while
/// rank 0 sleeps) use under 30% of the machine's CPU time over that window (all cores
/// together); then rank 0 releases them with one message each and every rank returns.
#[test]
fn sixty_three_ranks_blocked_in_recv_leave_the_cores_idle() {
    bounded(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let results =
            runthrough::local(RANKS).run(|world| -> Result<Option<(Duration, Duration)>> {
                if world.rank() != 0 {
                    let mut buf = [0u32];
                    world.recv(&mut buf, 0u32, 0)?;
                    assert_eq!(buf, [world.rank()]);
                    return Ok(None);
                }
                let (cpu_before, wall_before) = (process_cpu_time(), Instant::now());
                std::thread::sleep(IDLE);
                let (cpu, wall) = (process_cpu_time() - cpu_before, wall_before.elapsed());
                for rank in 1..RANKS {
                    world.send(&[rank], rank, 0)?;
                }
                assert_eq!(world.iprobe::<u32>(Source::Any, 0)?, None);
                Ok(Some((cpu, wall)))
            });
        let (cpu, wall) = outcomes(results, &[])[0]
            .flatten()
            .expect("rank 0 measured");
        let budget = wall.mul_f64(0.3 * cores as f64);
        assert!(
            cpu < budget,
            "{} waiting ranks used {cpu:?} of CPU in {wall:?} on {cores} cores (budget {budget:?})",
            RANKS - 1
        );
        eprintln!("idle window: {cpu:?} CPU over {wall:?} wall on {cores} cores");
    });
}

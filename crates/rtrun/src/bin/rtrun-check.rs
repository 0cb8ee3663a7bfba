// SPDX-License-Identifier: MIT OR Apache-2.0
//! The launcher's check program: the scenarios that rtrun's integration tests and benchmarks run
//! as multi-process jobs. Every scenario checks its own result and exits non-zero when it is
//! wrong; survivors print `final failed=[...]`, the G they agreed on, so a test can compare them.
//!
//! `rtrun -n N target/release/rtrun-check SCENARIO [--rounds R] [--pause-ms P] [--count C]`
//!
//! - `ring`: each rank sends its rank to the next one and checks what the previous one sent.
//! - `barrier`: R barriers (blocking and non-blocking in turn) entered at staggered times; the
//!   gathered entry and exit times show that no rank left a barrier before every rank entered
//!   it. Prints `barrier rounds=R hosts=H`, H the hosts the barrier grouped ranks into (0: flat).
//! - `validate`: R rounds of (pause, `validate_global`).
//! - `collective`: R rounds of (pause, all-reduce of 1 over the OK ranks of G); a round that
//!   fails with `ProcFailed` is retried after a `validate_global`.
//! - `stream`: rank 0 sends C numbered messages to rank 1, which checks they arrive exactly once
//!   and in order; the other ranks pause (and are killed by the test meanwhile), then all validate.
//! - `bench`: 8-byte ping-pong latency and 1 MiB bandwidth between ranks 0 and 1, validate_global
//!   and all-reduce times over all ranks, and (with 3 ranks or more) the time from rank 2's death
//!   to rank 1's `ProcFailed`.
//! - `flood` (flow control, semantics §6; run with a small `RT_UNEXPECTED_CAP`): a thread of rank 0
//!   sends C messages of 1 MiB to rank 1; once it waits for credit, every rank runs a barrier,
//!   an all-reduce and `validate_global`; then rank 1 receives, checks the messages arrive once
//!   and in order and that it never held more than rank 0's window; then ranks 0 and 1 flood
//!   each other with 200 isends of 64 KiB, receive everything, and wait.
//! - `flood_kill` (with `--kill 1@call:1`): rank 0 floods rank 1, which dies at its first call,
//!   made once rank 0 waits for credit; rank 0's blocked send must return `ProcFailed`.
//! - `nonblocking` (the file path `RTCHECK_MARKER` in the environment): rank 0 starts
//!   `ibarrier` and `iall_reduce`, then computes without calling the library until rank 1
//!   creates the file (at most 20 s), which it does once both its calls completed: the engine
//!   of rank 0 must run its side of both calls while it computes. Then R rounds of
//!   `ibroadcast`, `ireduce`, `iall_reduce`, `iall_gather`, `ialltoall` and `iscan`
//!   outstanding together with a blocking barrier between them, completed in reverse order
//!   and checked; prints `nonblocking rounds=R`.
//! - `shrink`: `validate_global`, `agree`, `validate_global`, then `shrink` the world and run
//!   `agree` and `validate_global` on the new communicator, printing what each returned (for
//!   the timeline's test: run it with kills at call or agreement points).
//! - `computing` (3 ranks or more; the file path `RTCHECK_MARKER` in the environment): rank 0
//!   starts `iagree`, then computes without calling the library until rank 1 creates the file
//!   (at most 20 s), then waits; the others `agree`, and rank 1 creates the file once its call
//!   returned. Then the same with `ivalidate_global` / `validate_global`. Rank 0's progress
//!   thread alone must carry its side of both agreements while it computes.
//! - `spawn`: the world spawns 2 ranks (run with `--universe-size` of N + 2 or more); each
//!   new rank sends rank 0 of its parents its number, and every rank, old and new, merges
//!   into one communicator of N + 2 ranks and checks an all-reduce of the ranks' numbers there.
//!   A spawned rank prints `spawned k of 2` and everyone `merged size=S sum=X`. A spawn
//!   that fails (a parent died during it, no room in the universe) prints `spawn refused:
//!   ERROR` at every parent, which then validates as usual.
//! - `programs`: rank 1 (the root) spawns 2 processes of this program running the `child`
//!   scenario with the arguments `child a b` (`Comm::spawn_programs`, `MPI_Comm_spawn`'s
//!   call); each child checks its arguments and sends parent 0 its number, and all merge and
//!   check an all-reduce as in `spawn`. `missing`: the root spawns a program that does not
//!   exist; every parent prints `spawn refused: ERROR` and the job goes on.
//! - `respawn` (with a kill, e.g. `--kill 1@call:3`): a `validate_global`, then `respawn` on
//!   the world communicator: the dead ranks are replaced by new ones with their numbers; every
//!   rank checks an all-reduce of the numbers on the new communicator and prints
//!   `respawned size=S sum=X` (a replacement prints `replacement of R`).
//! - `window` (one-sided communication between processes): rank 0 exposes a counter and
//!   computes without calling the library while every other rank adds to it R times under
//!   an exclusive lock (get, then put of one more) and R times by fetch-and-add under a
//!   shared lock: the transport's progress must serve them. Rank 0 sees the counter reach
//!   2·R·(N-1) in its own array (at most 20 s), then every rank puts its number into every
//!   other rank's array between two fences and checks its own. Prints `window counter=C`.
//! - `idle`: pause, then validate (for hang-detection and Ctrl-C tests).
//! - `rogue`: rank 0 connects to the launcher's control port without the job secret (it must
//!   be refused), then every rank runs `ring`.

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use runthrough::{Comm, Error, Op, RankState};

struct Options {
    scenario: String,
    rounds: u32,
    pause: Duration,
    count: u64,
}

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let scenario = args.next().ok_or("usage: rtrun-check SCENARIO [options]")?;
    let mut options = Options {
        scenario,
        rounds: 4,
        pause: Duration::from_millis(100),
        count: 10_000,
    };
    if options.scenario == "child" {
        return Ok(options); // its arguments are its parents' to check
    }
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number: u64 = value.parse().map_err(|_| format!("{flag} {value}"))?;
        match flag.as_str() {
            "--rounds" => options.rounds = number as u32,
            "--pause-ms" => options.pause = Duration::from_millis(number),
            "--count" => options.count = number,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

fn failed_list(world: &Comm) -> Result<Vec<u32>, Error> {
    let g = world.validate_global()?;
    Ok(g.ranks(RankState::NULL).map(|i| i.rank).collect())
}

/// Every rank but 2 receives from rank 2, which sends nothing (a test kills it at its second
/// call, two sends to itself): each receive must fail with `ProcFailed`, so every rank must
/// learn of the death by itself, with or without a connection to rank 2 (`wait_for_2`).
fn wait_for_2(world: &Comm) -> Result<(), String> {
    let me = world.rank();
    if me == 2 {
        for _ in 0..2 {
            world.send(&[me], me, 0).map_err(|e| e.to_string())?;
            let mut got = [0u32];
            world.recv(&mut got, me, 0).map_err(|e| e.to_string())?;
        }
        return Err("rank 2 was to die at its second call".into());
    }
    let mut got = [0u32];
    match world.recv(&mut got, 2, 0) {
        Err(Error::ProcFailed { .. }) => Ok(()),
        other => Err(format!("a receive from the dead rank 2 gave {other:?}")),
    }
}

/// Rank 0 sends `count` numbered messages to every other rank, one peer after the other, from
/// the start (most pairs of a host connect on first use: the first sends wait in the backlog of
/// a connection being made); every other rank receives them and checks their order. Then a
/// barrier, where a test may kill rank 0 (`--kill 0@call:K`, K = count·(n−1) + 1): every message
/// its sends returned for must still arrive, and the barrier fails with `ProcFailed` instead.
fn first_use(world: &Comm, o: &Options) -> Result<(), String> {
    let (me, n) = (world.rank(), world.size());
    if me == 0 {
        for peer in 1..n {
            for i in 0..o.count {
                world.send(&[i], peer, 7).map_err(|e| e.to_string())?;
            }
        }
    } else {
        for i in 0..o.count {
            let mut got = [u64::MAX];
            world
                .recv(&mut got, 0, 7)
                .map_err(|e| format!("message {i}: {e}"))?;
            if got[0] != i {
                return Err(format!("message {i} from rank 0 came as {}", got[0]));
            }
        }
    }
    match world.barrier() {
        Ok(()) | Err(Error::ProcFailed { .. }) => Ok(()),
        Err(e) => Err(format!("barrier: {e}")),
    }
}

/// `rounds` all-to-alls of one number per pair (rank r sends r·n + peer to each peer), each
/// checked: every pair talks, so with connections on first use the first call connects them.
fn all_to_all(world: &Comm, o: &Options) -> Result<(), String> {
    let (me, n) = (u64::from(world.rank()), u64::from(world.size()));
    for round in 0..o.rounds {
        let send: Vec<u64> = (0..n).map(|peer| me * n + peer).collect();
        let mut got = vec![u64::MAX; n as usize];
        world
            .all_to_all(&send, &mut got)
            .map_err(|e| format!("round {round}: {e}"))?;
        if let Some(from) = (0..n).find(|&from| got[from as usize] != from * n + me) {
            return Err(format!(
                "round {round}: from rank {from} got {}",
                got[from as usize]
            ));
        }
    }
    Ok(())
}

fn ring(world: &Comm) -> Result<(), String> {
    let (me, n) = (world.rank(), world.size());
    world
        .send(&[me], (me + 1) % n, 0)
        .map_err(|e| e.to_string())?;
    let mut got = [u32::MAX];
    world
        .recv(&mut got, (me + n - 1) % n, 0)
        .map_err(|e| e.to_string())?;
    if got[0] != (me + n - 1) % n {
        return Err(format!("ring: got {} from the previous rank", got[0]));
    }
    println!("ring ok");
    Ok(())
}

/// R barriers, blocking and non-blocking in turn, each entered after a wait of 0 to 60 µs that
/// differs by rank and round; every rank's entry and exit times (the machine's real-time clock,
/// which every rank of one machine shares, emulated hosts included) are then gathered, and
/// every barrier's last entry must come before its first exit. Each barrier is followed by an
/// `agree` on whether it succeeded everywhere; one that failed somewhere (`ProcFailed`) is
/// retried after `validate_global`. Prints `barrier rounds=R hosts=H` (H: how many hosts the
/// barrier grouped the survivors into, 0 when flat).
fn barrier(world: &Comm, o: &Options) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let (me, n) = (world.rank(), world.size() as usize);
    let now = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    let rounds = o.rounds as usize;
    let (mut entries, mut exits) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    let mut retries = 0;
    while entries.len() < rounds {
        let round = entries.len() + retries;
        let wait = Duration::from_micros((u64::from(me) * 37 + round as u64 * 11) % 61);
        let start = Instant::now();
        while start.elapsed() < wait {
            std::hint::spin_loop();
        }
        let entry = now();
        let outcome = if round % 2 == 0 {
            world.barrier()
        } else {
            world.ibarrier().and_then(|mut request| request.wait())
        };
        let exit = now();
        let mine = match outcome {
            Ok(()) => true,
            Err(Error::ProcFailed { .. }) => false,
            Err(other) => return Err(other.to_string()),
        };
        // A death inside the call may leave some ranks with Ok and others with ProcFailed:
        // the barrier counts only if every survivor agrees it succeeded, else it is retried
        // after validate_global (so that every survivor makes the same calls).
        let everyone = match world.agree(u32::from(mine)) {
            Ok(flag) => flag == 1,
            Err(Error::AgreeProcFailed { .. }) => false,
            Err(other) => return Err(other.to_string()),
        };
        if everyone {
            entries.push(entry);
            exits.push(exit);
        } else {
            retries += 1;
            if retries > 10 {
                return Err("too many retries".into());
            }
            world.validate_global().map_err(e)?;
        }
    }
    // A dead rank's slots stay as they are: no entry, no exit.
    let mut all_entries = vec![0u64; rounds * n];
    let mut all_exits = vec![u64::MAX; rounds * n];
    world.all_gather(&entries, &mut all_entries).map_err(e)?;
    world.all_gather(&exits, &mut all_exits).map_err(e)?;
    for round in 0..rounds {
        let at = |times: &[u64], r: usize| times[r * rounds + round];
        let last_entry = (0..n).map(|r| at(&all_entries, r)).max().unwrap_or(0);
        let first_exit = (0..n).map(|r| at(&all_exits, r)).min().unwrap_or(0);
        if last_entry > first_exit {
            return Err(format!(
                "barrier {round}: a rank left at {first_exit} ns before the last entered at \
                 {last_entry}"
            ));
        }
    }
    let hosts = world.barrier_hosts().map_err(e)?.unwrap_or(0);
    println!("barrier rounds={rounds} hosts={hosts}");
    Ok(())
}

/// After a validate_global (every connection is up): how many threads this rank runs, how many
/// of them read one peer's socket (`rt-reader-*`) and how many read them all (`rt-sockets`).
fn threads(world: &Comm) -> Result<(), String> {
    world.validate_global().map_err(|e| e.to_string())?;
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|e| e.to_string())?;
    let names: Vec<String> = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    let count = |prefix: &str| names.iter().filter(|n| n.starts_with(prefix)).count();
    println!(
        "threads total={} readers={} pollers={}",
        names.len(),
        count("rt-reader-"),
        count("rt-sockets")
    );
    Ok(())
}

fn validate(world: &Comm, o: &Options) -> Result<(), String> {
    for round in 0..o.rounds {
        std::thread::sleep(o.pause);
        let failed = failed_list(world).map_err(|e| e.to_string())?;
        println!("round {round} failed={failed:?}");
    }
    Ok(())
}

fn collective(world: &Comm, o: &Options) -> Result<(), String> {
    let mut round = 0;
    let mut retries = 0;
    while round < o.rounds {
        std::thread::sleep(o.pause);
        let mut sum = [0u64];
        let mine = match world.all_reduce(&[1u64], &mut sum, Op::Sum) {
            Ok(()) => {
                let g = world.global_view().map_err(|e| e.to_string())?;
                let ok = g.count(RankState::OK) as u64;
                // Contributions reach the sum only from ranks that G counts: a rank that died
                // inside the call contributed before it died, or the call failed here.
                if sum[0] != ok {
                    return Err(format!("round {round}: sum {} over {ok} OK ranks", sum[0]));
                }
                true
            }
            Err(Error::ProcFailed { .. }) => false,
            Err(e) => return Err(format!("round {round}: {e}")),
        };
        // A death inside the call may leave some ranks with Ok and others with ProcFailed
        // (SPEC §3.3): the round counts only if every survivor agrees it succeeded.
        let everyone = match world.agree(u32::from(mine)) {
            Ok(flag) => flag == 1,
            Err(Error::AgreeProcFailed { .. }) => false,
            Err(e) => return Err(format!("round {round}: agree: {e}")),
        };
        if everyone {
            println!("round {round} sum={}", sum[0]);
            round += 1;
        } else {
            retries += 1;
            if retries > 100 {
                return Err("too many retries".into());
            }
            let failed = failed_list(world).map_err(|e| e.to_string())?;
            println!("round {round} retried after validate_global failed={failed:?}");
        }
    }
    Ok(())
}

fn stream(world: &Comm, o: &Options) -> Result<(), String> {
    match world.rank() {
        0 => {
            for i in 0..o.count {
                world
                    .send(&[i], 1, 7)
                    .map_err(|e| format!("send {i}: {e}"))?;
            }
        }
        1 => {
            for i in 0..o.count {
                let mut got = [u64::MAX];
                world
                    .recv(&mut got, 0u32, 7)
                    .map_err(|e| format!("recv {i}: {e}"))?;
                if got[0] != i {
                    return Err(format!("message {i} arrived as {}", got[0]));
                }
            }
            let mut extra = [0u64];
            if world
                .iprobe::<u64>(0u32, 7)
                .map_err(|e| e.to_string())?
                .is_some()
            {
                world.recv(&mut extra, 0u32, 7).map_err(|e| e.to_string())?;
                return Err(format!("an extra message {} arrived", extra[0]));
            }
            println!("received {} in order", o.count);
        }
        _ => std::thread::sleep(o.pause),
    }
    Ok(())
}

/// Marks a flood message as number `i` (three words: cheap to check at 1 MiB).
fn stamp(buf: &mut [u32], i: u32) {
    let (mid, last) = (buf.len() / 2, buf.len() - 1);
    buf[0] = i;
    buf[mid] = i ^ 0x5a5a_5a5a;
    buf[last] = !i;
}

fn check_stamp(buf: &[u32], want: u32) -> Result<(), String> {
    let (mid, last) = (buf.len() / 2, buf.len() - 1);
    if buf[0] != want || buf[mid] != want ^ 0x5a5a_5a5a || buf[last] != !want {
        return Err(format!("message {want} arrived as {} (or torn)", buf[0]));
    }
    Ok(())
}

/// A barrier, an all-reduce and a `validate_global` over every rank (while a flood waits).
fn collectives_during_flood(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    world.barrier().map_err(e)?;
    let mut sum = [0u64];
    world.all_reduce(&[1u64], &mut sum, Op::Sum).map_err(e)?;
    if sum[0] != u64::from(world.size()) {
        return Err(format!("all-reduce during the flood: {}", sum[0]));
    }
    let g = world.validate_global().map_err(e)?;
    if g.num_failed() != 0 {
        return Err("validate_global during the flood found failures".into());
    }
    Ok(())
}

fn window(world: &Comm, o: &Options) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let (me, n) = (world.rank(), world.size());
    let rounds = u64::from(o.rounds);
    let window = world.window_allocate::<u64>(n as usize + 1).map_err(e)?;
    world.barrier().map_err(e)?;
    let expected = 2 * rounds * u64::from(n - 1);
    if me == 0 {
        let start = Instant::now();
        while window.update_local(|data| data[n as usize]) != expected {
            if start.elapsed() > Duration::from_secs(20) {
                return Err(format!(
                    "rank 0's counter stayed at {} of {expected} while it computed",
                    window.local()[n as usize]
                ));
            }
            std::hint::spin_loop();
        }
        println!("window served while rank 0 computed");
    } else {
        for _ in 0..rounds {
            window.lock(0, true).map_err(e)?;
            let value = window.get(0, n as usize, 1).map_err(e)?[0];
            window.put(&[value + 1], 0, n as usize).map_err(e)?;
            window.unlock(0).map_err(e)?;
        }
        window.lock(0, false).map_err(e)?;
        for _ in 0..rounds {
            window.fetch_and_op(1, 0, n as usize, Op::Sum).map_err(e)?;
        }
        window.unlock(0).map_err(e)?;
    }
    world.barrier().map_err(e)?;
    window.fence().map_err(e)?;
    for target in (0..n).filter(|&t| t != me) {
        window
            .put(&[u64::from(me) + 1], target, me as usize)
            .map_err(e)?;
    }
    window.fence().map_err(e)?;
    let mine = window.free().map_err(e)?;
    for (rank, &value) in mine.iter().take(n as usize).enumerate() {
        let want = if rank == me as usize {
            0
        } else {
            rank as u64 + 1
        };
        if value != want {
            return Err(format!("slot {rank} holds {value}, not {want}"));
        }
    }
    println!(
        "window counter={}",
        if me == 0 { mine[n as usize] } else { expected }
    );
    Ok(())
}

fn flood(world: &Comm, o: &Options) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    const TAG: i32 = 11;
    let count = o.count as u32;
    let words = (1 << 20) / 4;
    let mut buf = vec![0u32; words];
    match world.rank() {
        0 => std::thread::scope(|scope| -> Result<(), String> {
            let flood = scope.spawn(move || -> Result<(), String> {
                for i in 0..count {
                    stamp(&mut buf, i);
                    world.send(&buf, 1, TAG).map_err(e)?;
                }
                Ok(())
            });
            // Collective traffic and agreements go through while the flood waits for credit.
            world.wait_flow_stats(|s| s.queued_sends > 0);
            collectives_during_flood(world)?;
            flood.join().map_err(|_| "the flood thread panicked")??;
            let stats = world.flow_stats();
            if stats.delayed_sends == 0 {
                return Err(format!("rank 0 never waited for credit: {stats:?}"));
            }
            println!("flood sent {count} delayed={}", stats.delayed_sends);
            Ok(())
        })?,
        1 => {
            let blocked = world.wait_flow_stats(|s| s.credit_requests > 0);
            collectives_during_flood(world)?;
            for i in 0..count {
                world.recv(&mut buf, 0u32, TAG).map_err(e)?;
                check_stamp(&buf, i)?;
            }
            if world.iprobe::<u8>(0u32, TAG).map_err(e)?.is_some() {
                return Err("a message more than was sent".into());
            }
            let stats = world.flow_stats();
            if stats.peak_unexpected_bytes > stats.window || stats.window > stats.cap {
                return Err(format!("held more than the window: {stats:?}"));
            }
            println!(
                "flood received {count} in order held_when_blocked={} peak={} window={} cap={}",
                blocked.unexpected_bytes, stats.peak_unexpected_bytes, stats.window, stats.cap
            );
        }
        _ => collectives_during_flood(world)?,
    }
    if world.rank() < 2 {
        let peer = 1 - world.rank();
        let words = (64 << 10) / 4;
        let mut buf = vec![0u32; words];
        let mut requests = Vec::new();
        for i in 0..200 {
            stamp(&mut buf, i);
            requests.push(world.isend(&buf, peer, TAG + 1).map_err(e)?);
        }
        for i in 0..200 {
            world.recv(&mut buf, peer, TAG + 1).map_err(e)?;
            check_stamp(&buf, i)?;
        }
        for outcome in runthrough::wait_all(&mut requests) {
            outcome.map_err(e)?;
        }
        println!(
            "cross flood ok delayed={}",
            world.flow_stats().delayed_sends
        );
    }
    Ok(())
}

fn flood_kill(world: &Comm) -> Result<(), String> {
    let buf = vec![0u8; 64 << 10];
    match world.rank() {
        0 => {
            let error = loop {
                if let Err(error) = world.send(&buf, 1, 11) {
                    break error;
                }
            };
            if error != (Error::ProcFailed { rank: 1 }) || world.flow_stats().delayed_sends == 0 {
                return Err(format!("expected a blocked send to fail, got {error:?}"));
            }
            println!("blocked sender got {error}");
        }
        1 => {
            // Run with `--kill 1@call:1`: rank 1 dies at its first counted call, this probe,
            // once rank 0 waits for credit.
            world.wait_flow_stats(|s| s.credit_requests > 0);
            world.iprobe::<u8>(0u32, 11).map_err(|e| e.to_string())?;
            return Err("rank 1 should have been killed at its first call".into());
        }
        _ => {}
    }
    Ok(())
}

/// Rank 1 stops its whole process (SIGSTOP) once both are connected; rank 0 sends it 64 KiB
/// messages until a send fails. The peer's ring fills (its progress thread is stopped too), the
/// sender waits for room, and is released when the silent peer is fenced: `ProcFailed`, never a
/// hang. Rank 0 reports whether it ever waited for credit (it should not: the ring fills long
/// before the flow-control window does).
fn send_to_stopped(world: &Comm) -> Result<(), String> {
    world.barrier().map_err(|e| e.to_string())?;
    match world.rank() {
        0 => {
            // Rank 1 sends its PID, then stops itself: the sends start once it is stopped
            // (its process state `T`), so its progress thread cannot take messages in between
            // (under load it once took half a gigabyte before the stop landed).
            let mut pid = [0u32];
            world.recv(&mut pid, 1u32, 12).map_err(|e| e.to_string())?;
            let stat = format!("/proc/{}/stat", pid[0]);
            let until = std::time::Instant::now() + Duration::from_secs(10);
            let stopped = || {
                std::fs::read_to_string(&stat).is_ok_and(|s| {
                    s.rsplit_once(") ")
                        .is_some_and(|(_, rest)| rest.starts_with('T') || rest.starts_with('t'))
                })
            };
            while !stopped() {
                if std::time::Instant::now() >= until {
                    return Err(format!("rank 1 (PID {}) did not stop", pid[0]));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let buf = vec![7u8; 64 << 10];
            let mut sent = 0u64;
            let error = loop {
                match world.send(&buf, 1, 11) {
                    Ok(()) => sent += 1,
                    Err(e) => break e,
                }
            };
            if error != (Error::ProcFailed { rank: 1 }) {
                return Err(format!("expected ProcFailed from rank 1, got {error:?}"));
            }
            let delayed = world.flow_stats().delayed_sends;
            println!("sender to a stopped rank got {error} after {sent} sends, delayed={delayed}");
        }
        1 => {
            world
                .send(&[std::process::id()], 0, 12)
                .map_err(|e| e.to_string())?;
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::STOP,
            );
            return Err("rank 1 should have been fenced and killed while stopped".into());
        }
        _ => {}
    }
    Ok(())
}

fn rogue(world: &Comm) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Write};
    if world.rank() != 0 {
        return Ok(());
    }
    let control = std::env::var(runthrough_net::launch::ENV_CONTROL).map_err(|e| e.to_string())?;
    let mut stream = std::net::TcpStream::connect(control).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut challenge = String::new();
    reader
        .read_line(&mut challenge)
        .map_err(|e| e.to_string())?;
    let forged = format!("register 1 127.0.0.1:9 {}\n", "00".repeat(32));
    stream
        .write_all(forged.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    match reader.read_line(&mut answer) {
        Ok(0) | Err(_) => Ok(()),
        Ok(_) => Err(format!(
            "the launcher answered a forged registration: {answer:?}"
        )),
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench(world: &Comm, o: &Options) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let me = world.rank();
    let rounds = o.rounds.max(1) as usize;
    if me < 2 && world.size() >= 2 {
        let peer = 1 - me;
        // 8-byte ping-pong: half the round trip.
        let mut samples = Vec::new();
        for _ in 0..rounds {
            let iterations = 2000;
            let t = Instant::now();
            let mut buf = [0u64];
            for _ in 0..iterations {
                if me == 0 {
                    world.send(&buf, peer, 1).map_err(e)?;
                    world.recv(&mut buf, peer, 1).map_err(e)?;
                } else {
                    world.recv(&mut buf, peer, 1).map_err(e)?;
                    world.send(&buf, peer, 1).map_err(e)?;
                }
            }
            samples.push(t.elapsed().as_secs_f64() * 1e6 / iterations as f64 / 2.0);
        }
        // 1 MiB stream, one acknowledgement per batch.
        let message = vec![7u8; 1 << 20];
        let mut into = vec![0u8; 1 << 20];
        let mut rates = Vec::new();
        for _ in 0..rounds {
            let batch = 64;
            let t = Instant::now();
            if me == 0 {
                for _ in 0..batch {
                    world.send(&message, peer, 2).map_err(e)?;
                }
                world.recv(&mut [0u8], peer, 3).map_err(e)?;
            } else {
                for _ in 0..batch {
                    world.recv(&mut into, peer, 2).map_err(e)?;
                }
                world.send(&[1u8], peer, 3).map_err(e)?;
            }
            rates.push(batch as f64 * (1 << 20) as f64 / t.elapsed().as_secs_f64() / 1e9);
        }
        if me == 0 {
            println!("latency_8B_us={:.2}", median(samples));
            println!("bandwidth_1MiB_GBps={:.2}", median(rates));
        }
    }
    world.barrier().map_err(e)?;
    for (name, is_validate) in [("validate_global", true), ("all_reduce_1", false)] {
        let mut samples = Vec::new();
        for _ in 0..rounds {
            let iterations = 200;
            world.barrier().map_err(e)?;
            let t = Instant::now();
            for _ in 0..iterations {
                if is_validate {
                    world.validate_global().map_err(e)?;
                } else {
                    let mut out = [0u64];
                    world.all_reduce(&[1u64], &mut out, Op::Sum).map_err(e)?;
                }
            }
            samples.push(t.elapsed().as_secs_f64() * 1e6 / iterations as f64);
        }
        if me == 0 {
            println!("{name}_us={:.1} ranks={}", median(samples), world.size());
        }
    }
    if world.size() >= 3 {
        match me {
            1 => {
                let mut at = [0u64];
                world.recv(&mut at, 2u32, 98).map_err(e)?;
                let result = world.recv(&mut [0u8], 2u32, 99);
                let seen = now_nanos();
                if !matches!(result, Err(Error::ProcFailed { rank: 2 })) {
                    return Err(format!("expected ProcFailed from rank 2, got {result:?}"));
                }
                println!(
                    "detect_kill_to_procfailed_ms={:.3}",
                    seen.saturating_sub(at[0]) as f64 / 1e6
                );
            }
            2 => {
                std::thread::sleep(Duration::from_millis(200));
                world.send(&[now_nanos()], 1, 98).map_err(e)?;
                let _ = rustix::process::kill_process(
                    rustix::process::getpid(),
                    rustix::process::Signal::KILL,
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// The `computing` scenario (see the module docs).
fn computing(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let marker = std::env::var("RTCHECK_MARKER").map_err(|_| "RTCHECK_MARKER is not set")?;
    for (round, name) in [(1, "agree"), (2, "validate_global")] {
        let marker = std::path::PathBuf::from(format!("{marker}.{round}"));
        if world.rank() == 0 {
            // Computes: no library call until rank 1 says its call returned.
            let compute = |marker: &std::path::Path| {
                let deadline = Instant::now() + Duration::from_secs(20);
                while Instant::now() < deadline {
                    for _ in 0..10_000 {
                        std::hint::spin_loop();
                    }
                    if marker.exists() {
                        return true;
                    }
                }
                false
            };
            let answered = if round == 1 {
                let mut request = world.iagree(1).map_err(e)?;
                let answered = compute(&marker);
                request.wait().map_err(e)?;
                answered
            } else {
                let mut request = world.ivalidate_global().map_err(e)?;
                let answered = compute(&marker);
                request.wait().map_err(e)?;
                answered
            };
            if !answered {
                return Err(format!(
                    "the others' {name} did not return while rank 0 computed (20 s)"
                ));
            }
            println!("{name} returned at the others while rank 0 computed");
        } else {
            if round == 1 {
                world.agree(1).map_err(e)?;
            } else {
                world.validate_global().map_err(e)?;
            }
            if world.rank() == 1 {
                std::fs::write(&marker, b"returned").map_err(|err| err.to_string())?;
            }
        }
    }
    Ok(())
}

fn nonblocking(world: &Comm, o: &Options) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let marker = std::env::var("RTCHECK_MARKER").map_err(|_| "RTCHECK_MARKER is not set")?;
    let marker = std::path::PathBuf::from(marker);
    let (me, n) = (world.rank(), world.size());
    let mut sum = [0u64];
    let mut barrier = world.ibarrier().map_err(e)?;
    let mut all = world
        .iall_reduce(&[u64::from(me)], &mut sum, Op::Sum)
        .map_err(e)?;
    if me == 0 {
        // Computes: no library call until rank 1 says both its calls completed.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut answered = false;
        while !answered && Instant::now() < deadline {
            for _ in 0..10_000 {
                std::hint::spin_loop();
            }
            answered = marker.exists();
        }
        if !answered {
            return Err(
                "the others' non-blocking calls did not complete while rank 0 \
                        computed (20 s)"
                    .into(),
            );
        }
        println!("ibarrier and iall_reduce completed at the others while rank 0 computed");
    }
    barrier.wait().map_err(e)?;
    all.wait().map_err(e)?;
    drop(all);
    if me == 1 {
        std::fs::write(&marker, b"completed").map_err(|err| err.to_string())?;
    }
    let expected: u64 = (0..u64::from(n)).sum();
    if sum[0] != expected {
        return Err(format!("iall_reduce gave {}, expected {expected}", sum[0]));
    }
    for round in 0..o.rounds {
        let (broadcaster, reducer) = (round % n, (round + 1) % n);
        let mut value = [if me == broadcaster { 1000 + round } else { 0 }];
        let mut reduced = [0u32];
        let mut max = [0u32];
        let mut b = world.ibroadcast(&mut value, broadcaster).map_err(e)?;
        let mut r = world
            .ireduce(
                &[me + round],
                (me == reducer).then_some(&mut reduced[..]),
                Op::Sum,
                reducer,
            )
            .map_err(e)?;
        world.barrier().map_err(e)?;
        let mut m = world.iall_reduce(&[me * 3], &mut max, Op::Max).map_err(e)?;
        let mut gathered = vec![0u32; n as usize];
        let mut g = world.iall_gather(&[me + round], &mut gathered).map_err(e)?;
        let outgoing: Vec<u32> = (0..n).map(|to| me * 100 + to + round).collect();
        let mut exchanged = vec![0u32; n as usize];
        let mut x = world.ialltoall(&outgoing, &mut exchanged).map_err(e)?;
        let mut prefix = [0u32];
        let mut s = world.iscan(&[me + 1], &mut prefix, Op::Sum).map_err(e)?;
        s.wait().map_err(e)?;
        x.wait().map_err(e)?;
        g.wait().map_err(e)?;
        m.wait().map_err(e)?;
        r.wait().map_err(e)?;
        b.wait().map_err(e)?;
        drop((b, r, m, g, x, s));
        let sum: u32 = (0..n).map(|rank| rank + round).sum();
        let all: Vec<u32> = (0..n).map(|rank| rank + round).collect();
        let to_me: Vec<u32> = (0..n).map(|from| from * 100 + me + round).collect();
        if value[0] != 1000 + round
            || (me == reducer && reduced[0] != sum)
            || max[0] != (n - 1) * 3
            || gathered != all
            || exchanged != to_me
            || prefix[0] != (me + 1) * (me + 2) / 2
        {
            return Err(format!(
                "round {round}: broadcast {} reduce {} max {} all_gather {gathered:?} \
                 alltoall {exchanged:?} scan {}",
                value[0], reduced[0], max[0], prefix[0]
            ));
        }
    }
    println!("nonblocking rounds={}", o.rounds);
    Ok(())
}

fn shrink(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let failed = failed_list(world).map_err(e)?;
    println!("validate_global failed={failed:?}");
    match world.agree(1) {
        Ok(flag) => println!("agree flag={flag}"),
        Err(Error::AgreeProcFailed { flag }) => println!("agree flag={flag}, a rank failed"),
        Err(other) => return Err(format!("agree: {other}")),
    }
    let failed = failed_list(world).map_err(e)?;
    println!("validate_global failed={failed:?}");
    let small = world.shrink().map_err(e)?;
    println!("shrink size={}", small.size());
    let flag = small.agree(1).map_err(e)?;
    let failed = failed_list(&small).map_err(e)?;
    println!("on the shrunk communicator: agree flag={flag}, validate_global failed={failed:?}");
    Ok(())
}

/// The `spawn` scenario (see the module's list).
fn spawn(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let inter = match world.parent() {
        Some(parents) => {
            println!("spawned {} of {}", world.rank(), world.size());
            parents.send(&[world.rank()], 0, 5).map_err(e)?;
            parents
        }
        None => {
            let children = match world.spawn(2, &["hello"]) {
                Ok(children) => children,
                Err(error) => {
                    println!("spawn refused: {error}");
                    return Ok(());
                }
            };
            if world.rank() == 0 {
                let mut got = Vec::new();
                for _ in 0..children.remote_size() {
                    let mut n = [0u32];
                    children
                        .recv(&mut n, runthrough::Source::Any, 5)
                        .map_err(e)?;
                    got.push(n[0]);
                }
                got.sort_unstable();
                if got != [0, 1] {
                    return Err(format!("the spawned ranks sent {got:?}"));
                }
            }
            children
        }
    };
    merged_sum(&inter.merge(world.parent().is_some()).map_err(e)?)?;
    // Nobody finalizes (and exits) while the other group still computes with it.
    inter.disconnect().map_err(e)
}

/// The `programs` and `missing` scenarios (see the module's list), parents' side.
fn programs(world: &Comm, missing: bool) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let program = if missing {
        "/nonexistent/rtrun-check-child".to_string()
    } else {
        me.display().to_string()
    };
    let programs = [runthrough::SpawnProgram {
        count: 2,
        argv: vec![program, "child".into(), "a".into(), "b".into()],
        wdir: Some("/".into()),
    }];
    // Only the root's programs count: the others pass none.
    let given: &[runthrough::SpawnProgram] = if world.rank() == 1 { &programs } else { &[] };
    let children = match world.spawn_programs(given, 1) {
        Ok(children) => children,
        Err(error) => {
            println!("spawn refused: {error}");
            return Ok(());
        }
    };
    if world.rank() == 0 {
        let mut got = Vec::new();
        for _ in 0..children.remote_size() {
            let mut n = [0u32];
            children
                .recv(&mut n, runthrough::Source::Any, 5)
                .map_err(e)?;
            got.push(n[0]);
        }
        got.sort_unstable();
        if got != [0, 1] {
            return Err(format!("the spawned programs sent {got:?}"));
        }
    }
    merged_sum(&children.merge(false).map_err(e)?)?;
    children.disconnect().map_err(e)
}

/// The `child` scenario: a rank started by `programs`.
fn child(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let parents = world
        .parent()
        .ok_or("the child scenario runs only as a spawned program")?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args != ["child", "a", "b"] || parents.args() != args {
        return Err(format!(
            "arguments {args:?}, InterComm::args {:?}",
            parents.args()
        ));
    }
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    println!(
        "child {} of {} in {}",
        world.rank(),
        world.size(),
        cwd.display()
    );
    parents.send(&[world.rank()], 0, 5).map_err(e)?;
    merged_sum(&parents.merge(true).map_err(e)?)?;
    parents.disconnect().map_err(e)
}

/// An all-reduce of the ranks' numbers over a merged communicator, printed and checked.
fn merged_sum(merged: &Comm) -> Result<(), String> {
    let mut sum = [0u64];
    merged
        .all_reduce(&[u64::from(merged.rank())], &mut sum, Op::Sum)
        .map_err(|e| e.to_string())?;
    let size = u64::from(merged.size());
    println!("merged size={size} sum={}", sum[0]);
    if sum[0] != size * (size - 1) / 2 {
        return Err(format!("the merged all-reduce gave {}", sum[0]));
    }
    Ok(())
}

/// The `respawn` scenario (see the module's list).
fn respawn(world: &Comm) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let comm = match world.parent() {
        Some(parents) => {
            let comm = parents.join_respawn().map_err(e)?;
            println!("replacement of {}", comm.rank());
            comm
        }
        None => {
            // Until the kill has happened and everyone agrees on it.
            let mut round = 0;
            loop {
                round += 1;
                let g = world.validate_global().map_err(e)?;
                if g.num_failed() > 0 || round > 200 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            world.respawn().map_err(e)?
        }
    };
    let mut sum = [0u64];
    comm.all_reduce(&[u64::from(comm.rank())], &mut sum, Op::Sum)
        .map_err(e)?;
    let size = u64::from(comm.size());
    println!("respawned size={size} sum={}", sum[0]);
    if sum[0] != size * (size - 1) / 2 {
        return Err(format!("the respawned all-reduce gave {}", sum[0]));
    }
    // The replacement's finalize waits only for its own world: an agreement over the new
    // communicator first, so that it leaves only once every rank is done with it.
    comm.validate_global().map_err(e)?;
    Ok(())
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rtrun-check: {e}");
            return ExitCode::from(2);
        }
    };
    let universe = match runthrough::init() {
        Ok(u) => u,
        Err(e) => {
            // One write: a launcher may kill this process right after (Hydra ends the other
            // ranks once one fails), and `eprintln!` writes a formatted line in pieces.
            let line = format!("rtrun-check: {e}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let result = match options.scenario.as_str() {
        "ring" => ring(world),
        "barrier" => barrier(world, &options),
        "threads" => threads(world),
        "validate" => validate(world, &options),
        "collective" => collective(world, &options),
        "stream" => stream(world, &options),
        "bench" => bench(world, &options),
        "flood" => flood(world, &options),
        "flood_kill" => flood_kill(world),
        "send_to_stopped" => send_to_stopped(world),
        "rogue" => rogue(world).and_then(|()| ring(world)),
        "shrink" => shrink(world),
        "computing" => computing(world),
        "nonblocking" => nonblocking(world, &options),
        "wait_for_2" => wait_for_2(world),
        "first_use" => first_use(world, &options),
        "all_to_all" => all_to_all(world, &options),
        "spawn" => spawn(world),
        "respawn" => respawn(world),
        "programs" => programs(world, false),
        "missing" => programs(world, true),
        "child" => child(world),
        "window" => window(world, &options),
        "idle" => {
            std::thread::sleep(options.pause);
            Ok(())
        }
        other => Err(format!("unknown scenario {other}")),
    };
    let result = result.and_then(|()| {
        if options.scenario == "bench" {
            return Ok(());
        }
        let failed = failed_list(world).map_err(|e| e.to_string())?;
        println!("final failed={failed:?}");
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtrun-check rank {}: {e}", world.rank());
            ExitCode::FAILURE
        }
    }
}

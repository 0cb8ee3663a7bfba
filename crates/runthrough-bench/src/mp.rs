// SPDX-License-Identifier: MIT OR Apache-2.0
//! Multi-process rows: this binary runs itself as the ranks of an rtrun job
//! (`runthrough-bench --mp-worker ...`, launched through the rtrun library), and rank 0 prints
//! one JSON row per line, which the driver collects.
//!
//! Jobs run with rtrun's default placement (one core per rank while the ranks fit the CPUs).
//! The worker does what the C program `c/ompi_bench.c` does, timed the same way: each
//! repetition runs ITERS iterations between barriers and divides (ITERS calibrated by rank 0 so
//! a repetition takes about the target time). In a fault job the last rank SIGKILLs itself
//! (stamping the wall clock to a file just before) while every survivor is blocked receiving
//! from it; rank 0 reports detection (kill to `ProcFailed`), `recovery_validate_global` (kill to
//! `validate_global` done) and `recovery_after_detection` (the `validate_global` alone). Each
//! fault job gives one sample; the driver runs several and takes the median.
//!
//! A job that hangs is stopped by its time-out; its rows are reported missing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use runthrough::{Comm, Error, Op};

use super::{summarize, Bench, Row, SIZES};

/// The first argument that makes this binary a rank of a multi-process job.
const WORKER_FLAG: &str = "--mp-worker";

/// Rank counts of the multi-process rows (and of the Open MPI ones).
pub(super) const RANKS: [u32; 3] = [2, 4, 8];

/// The transports of the multi-process rows, side by side in one run: each row's label and
/// the `RT_TRANSPORT` its job runs with (shared memory, the default; Unix sockets alone; TCP
/// over loopback, compared with Open MPI's TCP path).
const TRANSPORTS: [(&str, &str); 3] = [("shm", "shm"), ("unix", "unix"), ("tcp", "tcp")];

/// Microseconds since the epoch: the clock both sides of a kill share.
pub(super) fn wall_us() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs_f64()
        * 1e6
}

/// A JSON row as the workers print it (the same record as the main table's).
pub(super) fn parse_row(line: &str) -> Option<Row> {
    let body = line.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut fields = BTreeMap::new();
    for field in body.split(',') {
        let (key, value) = field.split_once(':')?;
        fields.insert(key.trim().trim_matches('"'), value.trim().trim_matches('"'));
    }
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    Some(Row {
        op: fields.get("op")?.to_string(),
        ranks: fields.get("ranks")?.parse().ok()?,
        transport: leak(fields.get("transport")?),
        bytes: fields.get("bytes")?.parse().ok()?,
        median_us: fields.get("median_us")?.parse().ok()?,
        min_us: fields.get("min_us")?.parse().ok()?,
        max_us: fields.get("max_us")?.parse().ok()?,
        implementation: leak(fields.get("impl")?),
    })
}

/// A row that could not be measured: NaN times, shown as "missing" in the table, left out of
/// the JSON.
pub(super) fn missing(op: &str, ranks: u32, transport: &'static str, bytes: usize) -> Row {
    Row {
        op: op.to_string(),
        ranks,
        transport,
        bytes,
        median_us: f64::NAN,
        min_us: f64::NAN,
        max_us: f64::NAN,
        implementation: "runthrough",
    }
}

/// Pools one-sample rows of repeated fault jobs into one row per (op, ranks): the median over
/// the jobs, with their min and max.
pub(super) fn pool(samples: Vec<Row>) -> Vec<Row> {
    let mut by_key: BTreeMap<(String, u32), (Row, Vec<f64>)> = BTreeMap::new();
    for row in samples {
        let entry = by_key
            .entry((row.op.clone(), row.ranks))
            .or_insert_with(|| (row.clone(), Vec::new()));
        entry.1.push(row.median_us);
    }
    by_key
        .into_values()
        .map(|(mut row, values)| {
            (row.median_us, row.min_us, row.max_us) = summarize(values);
            row
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The worker: one rank of an rtrun job.

/// If this process was started as a worker, runs it and exits; otherwise returns.
pub(super) fn serve_worker_if_asked() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some(WORKER_FLAG) {
        return;
    }
    let universe = match runthrough::init() {
        Ok(universe) => universe,
        Err(err) => {
            eprintln!("runthrough-bench worker: {err}");
            std::process::exit(2);
        }
    };
    let world = universe.world();
    let result = match args.get(1).map(String::as_str) {
        Some("collectives") if args.len() == 5 => {
            let reps = args[2].parse().unwrap_or(5);
            let target_us = args[3].parse().unwrap_or(5000.0);
            worker_collectives(world, reps, target_us, &args[4]).map_err(|e| e.to_string())
        }
        Some("fault") if args.len() == 3 => worker_fault(world, &args[2]),
        _ => {
            eprintln!("usage: {WORKER_FLAG} collectives REPS TARGET_US ONLY | fault STAMP_FILE");
            std::process::exit(2);
        }
    };
    let code = match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("runthrough-bench worker, rank {}: {err}", world.rank());
            1
        }
    };
    universe.finalize();
    std::process::exit(code);
}

fn print_row(world: &Comm, op: &str, bytes: usize, samples: Vec<f64>) {
    let (median_us, min_us, max_us) = summarize(samples);
    let row = Row {
        op: op.to_string(),
        ranks: world.size(),
        transport: "tcp",
        bytes,
        median_us,
        min_us,
        max_us,
        implementation: "runthrough",
    };
    println!("{}", row.json());
}

/// `ompi_bench.c`'s `bench`: calibrated iterations between barriers, µs per op / `divide`.
fn adaptive(
    world: &Comm,
    reps: usize,
    target_us: f64,
    divide: f64,
    mut step: impl FnMut() -> Result<(), Error>,
) -> Result<Vec<f64>, Error> {
    for _ in 0..5 {
        step()?;
    }
    world.barrier()?;
    let start = Instant::now();
    for _ in 0..5 {
        step()?;
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / 5.0;
    let mut iterations = [if per > 0.0 {
        (target_us / per).clamp(3.0, 100_000.0) as u64
    } else {
        100_000
    }];
    world.broadcast(&mut iterations, 0)?;
    let iterations = iterations[0];
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        world.barrier()?;
        let start = Instant::now();
        for _ in 0..iterations {
            step()?;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6 / iterations as f64 / divide);
    }
    Ok(samples)
}

const WINDOW: usize = 64;
const MIB: usize = 1 << 20;

fn worker_collectives(world: &Comm, reps: usize, target_us: f64, only: &str) -> Result<(), Error> {
    let me = world.rank();
    let wanted = |op: &str| op.contains(only);
    let bench = |op: &str,
                 bytes: usize,
                 divide: f64,
                 step: &mut dyn FnMut() -> Result<(), Error>|
     -> Result<(), Error> {
        if wanted(op) {
            let samples = adaptive(world, reps, target_us, divide, step)?;
            if me == 0 {
                print_row(world, op, bytes, samples);
            }
        }
        Ok(())
    };
    let mut buf = vec![0u8; MIB];
    if world.size() == 2 {
        for bytes in SIZES {
            bench("p2p_latency", bytes, 2.0, &mut || {
                if me == 0 {
                    world.send(&buf[..bytes], 1, 0)?;
                    world.recv(&mut buf[..bytes], 1u32, 0)?;
                } else {
                    world.recv(&mut buf[..bytes], 0u32, 0)?;
                    world.send(&buf[..bytes], 0, 0)?;
                }
                Ok(())
            })?;
        }
        for bytes in SIZES {
            bench("p2p_bandwidth", bytes, WINDOW as f64, &mut || {
                let mut ack = [0u8];
                for _ in 0..WINDOW {
                    if me == 0 {
                        world.send(&buf[..bytes], 1, 0)?;
                    } else {
                        world.recv(&mut buf[..bytes], 0u32, 0)?;
                    }
                }
                if me == 0 {
                    world.recv(&mut ack, 1u32, 1)?;
                } else {
                    world.send(&ack, 0, 1)?;
                }
                Ok(())
            })?;
        }
    }
    bench("barrier", 0, 1.0, &mut || world.barrier())?;
    bench("ibarrier_wait", 0, 1.0, &mut || world.ibarrier()?.wait())?;
    let mut out = [0u64];
    bench("all_reduce", 8, 1.0, &mut || {
        world.all_reduce(&[u64::from(me)], &mut out, Op::Sum)
    })?;
    bench("iall_reduce_wait", 8, 1.0, &mut || {
        world
            .iall_reduce(&[u64::from(me)], &mut out, Op::Sum)?
            .wait()
    })?;
    let mut word = [7u64];
    bench("broadcast", 8, 1.0, &mut || world.broadcast(&mut word, 0))?;
    let mut all = vec![0u64; world.size() as usize];
    bench("all_gather", 8, 1.0, &mut || {
        world.all_gather(&[u64::from(me)], &mut all)
    })?;
    let send = vec![1.0f64; MIB / 8];
    let mut sum = vec![0.0f64; MIB / 8];
    bench("all_reduce", MIB, 1.0, &mut || {
        world.all_reduce(&send, &mut sum, Op::Sum)
    })?;
    bench("validate_global", 0, 1.0, &mut || {
        world.validate_global().map(|_| ())
    })?;
    bench("agree", 0, 1.0, &mut || world.agree(1).map(|_| ()))?;
    bench("shrink", 0, 1.0, &mut || world.shrink()?.free())?;
    Ok(())
}

fn worker_fault(world: &Comm, stamp_file: &str) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    let (me, n) = (world.rank(), world.size());
    let victim = n - 1;
    let mut byte = [1u8];
    // Every survivor is out of the barrier before the victim dies (a message the victim sent
    // may be lost with it): they tell rank 0, which only then tells the victim to die.
    world.barrier().map_err(e)?;
    if me == 0 {
        for _ in 1..victim {
            world
                .recv(&mut byte, runthrough::Source::Any, 6)
                .map_err(e)?;
        }
    } else if me != victim {
        world.send(&byte, 0, 6).map_err(e)?;
    }
    if me == victim {
        world.recv(&mut byte, 0u32, 7).map_err(e)?;
        std::fs::write(stamp_file, format!("{:.3}\n", wall_us())).expect("writing the stamp");
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    if me == 0 {
        world.send(&byte, victim, 7).map_err(e)?;
    }
    let result = world.recv(&mut byte, victim, 8);
    let detected = wall_us();
    if !matches!(result, Err(Error::ProcFailed { .. })) {
        return Err(format!("the receive from the killed rank gave {result:?}"));
    }
    let g = world.validate_global().map_err(e)?;
    let done = wall_us();
    if g.num_failed() != 1 {
        return Err(format!(
            "validate_global agreed on {} failures",
            g.num_failed()
        ));
    }
    if me == 0 {
        let killed: f64 = std::fs::read_to_string(stamp_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .expect("the victim's stamp");
        print_row(world, "detection", 0, vec![detected - killed]);
        print_row(world, "recovery_validate_global", 0, vec![done - killed]);
        print_row(world, "recovery_after_detection", 0, vec![done - detected]);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The driver.

/// Runs `args` of this binary as an rtrun job of `ranks`; rank 0's JSON rows, or why not. The
/// `victim`, if any, is meant to die.
fn job(
    ranks: u32,
    args: &[String],
    timeout: Duration,
    victim: Option<u32>,
    transport: (&'static str, &str),
) -> Result<Vec<Row>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut job = rtrun::Job::new(ranks, exe);
    job.args = std::iter::once(WORKER_FLAG.to_string())
        .chain(args.iter().cloned())
        .map(OsString::from)
        .collect();
    job.forward_output = false;
    job.capture_output = true;
    job.timeout = Some(timeout);
    job.env = vec![("RT_TRANSPORT".into(), transport.1.into())];
    let report = rtrun::run(&job).map_err(|e| format!("rtrun: {e}"))?;
    let rows: Vec<Row> = report
        .stdout_of(0)
        .into_iter()
        .filter_map(parse_row)
        .map(|row| Row {
            transport: transport.0,
            ..row
        })
        .collect();
    let failed = report
        .ranks
        .iter()
        .any(|r| Some(r.rank) != victim && !r.ok());
    if report.timed_out || failed {
        for (rank, _, line) in report
            .lines
            .iter()
            .filter(|(_, s, _)| *s == rtrun::Stream::Stderr)
        {
            eprintln!("    [{rank}] {line}");
        }
        let why = if report.timed_out {
            format!("timed out after {timeout:?}")
        } else {
            "a rank failed".to_string()
        };
        eprint!("    {}", report.summary());
        return if rows.is_empty() {
            Err(why)
        } else {
            eprintln!("    ({why}; keeping the {} rows it printed)", rows.len());
            Ok(rows)
        };
    }
    Ok(rows)
}

/// The operations (and sizes) a collectives job at `ranks` reports.
fn expected(ranks: u32) -> Vec<(&'static str, usize)> {
    let mut ops = Vec::new();
    if ranks == 2 {
        ops.extend(SIZES.map(|bytes| ("p2p_latency", bytes)));
        ops.extend(SIZES.map(|bytes| ("p2p_bandwidth", bytes)));
    }
    ops.extend([
        ("barrier", 0),
        ("ibarrier_wait", 0),
        ("all_reduce", 8),
        ("iall_reduce_wait", 8),
        ("broadcast", 8),
        ("all_gather", 8),
        ("all_reduce", MIB),
        ("validate_global", 0),
        ("agree", 0),
        ("shrink", 0),
    ]);
    ops
}

/// The multi-process rows at 2, 4 and 8 processes, over each transport (interleaved: every
/// rank count runs over both before the next).
pub(super) fn rows(bench: &mut Bench, target_us: f64, fault_repetitions: usize) {
    for transport in TRANSPORTS {
        rows_over(bench, target_us, fault_repetitions, transport);
    }
}

fn rows_over(
    bench: &mut Bench,
    target_us: f64,
    fault_repetitions: usize,
    transport: (&'static str, &str),
) {
    let label = transport.0;
    let only = bench.only.clone().unwrap_or_default();
    for ranks in RANKS {
        let wanted: Vec<_> = expected(ranks)
            .into_iter()
            .filter(|(op, _)| bench.wanted(op))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let args = [
            "collectives".to_string(),
            bench.repetitions.to_string(),
            target_us.to_string(),
            only.clone(),
        ];
        let got =
            job(ranks, &args, Duration::from_secs(240), None, transport).unwrap_or_else(|why| {
                eprintln!("  {label} collectives at {ranks} ranks: {why}");
                Vec::new()
            });
        for (op, bytes) in wanted {
            let row = got
                .iter()
                .find(|r| r.op == op && r.bytes == bytes)
                .cloned()
                .unwrap_or_else(|| missing(op, ranks, label, bytes));
            eprintln!(
                "  {:<28} {:>3} ranks {:>8} B  median {:>10.3} us  ({label})",
                row.op, ranks, bytes, row.median_us
            );
            bench.rows.push(row);
        }
    }
    let fault_ops = [
        "detection",
        "recovery_validate_global",
        "recovery_after_detection",
    ];
    let fault_ops: Vec<&str> = fault_ops
        .into_iter()
        .filter(|op| bench.wanted(op))
        .collect();
    if fault_ops.is_empty() {
        return;
    }
    let stamp = std::env::temp_dir().join(format!("runthrough-bench-{}.stamp", std::process::id()));
    for ranks in RANKS {
        let mut samples = Vec::new();
        for _ in 0..fault_repetitions {
            let _ = std::fs::remove_file(&stamp);
            let args = ["fault".to_string(), stamp.display().to_string()];
            match job(
                ranks,
                &args,
                Duration::from_secs(30),
                Some(ranks - 1),
                transport,
            ) {
                Ok(rows) => samples.extend(rows),
                Err(why) => eprintln!("  {label} fault job at {ranks} ranks: {why}"),
            }
        }
        let pooled = pool(samples);
        for &op in &fault_ops {
            let row = pooled
                .iter()
                .find(|r| r.op == op)
                .cloned()
                .unwrap_or_else(|| missing(op, ranks, label, 0));
            eprintln!(
                "  {:<28} {:>3} ranks            median {:>10.3} us  ({label})",
                row.op, ranks, row.median_us
            );
            bench.rows.push(row);
        }
    }
    let _ = std::fs::remove_file(&stamp);
}

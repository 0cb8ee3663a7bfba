// SPDX-License-Identifier: MIT OR Apache-2.0
//! The benchmark suite: `cargo run --release -p runthrough-bench -- [--json FILE] [--quick]
//! [--plot DIR [--from FILE]]`.
//!
//! Every figure is measured inside one run, side by side, and reported as a median with the
//! minimum and maximum over repetitions. Each repetition times many iterations of an operation
//! and divides, so a row's unit is microseconds per operation.

use std::time::{Duration, Instant};

use clap::Parser;
use runthrough::{Comm, Error, Op};

mod compare;
mod mp;
mod plot;
mod table;
mod ulfm;

#[derive(Parser, Debug)]
#[command(
    about = "runthrough benchmarks: a markdown table, JSON rows with --json, SVG charts with --plot",
    after_help = "Examples:\n  \
        runthrough-bench --quick --json rows.json --plot plots     run, then chart this run\n  \
        runthrough-bench --plot plots --from rows.json             chart an earlier run's rows"
)]
struct Args {
    /// Write one JSON record per row to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Fewer repetitions (for a smoke run).
    #[arg(long)]
    quick: bool,
    /// Only rows whose operation name contains this string.
    #[arg(long)]
    only: Option<String>,
    /// Also run one C source under Open MPI ULFM and runthrough, each with its launcher's
    /// defaults, alternated A B (see `compare.rs`), with the ratio runthrough / Open MPI.
    #[arg(long)]
    compare: bool,
    /// With --compare: the number of A B rounds (default 5, 2 with --quick).
    #[arg(long, value_name = "N")]
    rounds: Option<usize>,
    /// With --compare: run the rounds again beside a busy neighbour (one `yes > /dev/null`).
    #[arg(long)]
    busy: bool,
    /// Only the side-by-side rounds of --compare (not runthrough's own rows).
    #[arg(long, requires = "compare")]
    compare_only: bool,
    /// Write SVG charts of the rows into this directory (made if missing): latency.svg and
    /// bandwidth.svg (against message size), collectives.svg and agreement.svg (against rank
    /// count), compare.svg (runthrough beside Open MPI, from --compare rows) and recovery.svg
    /// (a kill detected, agreed on and recovered from, against rank count). A chart whose rows
    /// are missing is not written. Without --from, the rows are this run's.
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// With --plot: run no benchmark, plot the rows of this file (written earlier by --json).
    #[arg(long, value_name = "FILE", requires = "plot")]
    from: Option<std::path::PathBuf>,
}

/// The message sizes of the point-to-point rows (latency and bandwidth), 8 B to 1 MiB by
/// factors of 8 (`c/ompi_bench.c` has the same list).
pub(crate) const SIZES: [usize; 7] = [8, 64, 512, 4096, 32768, 262_144, 1 << 20];

/// One row of the table.
#[derive(Debug, Clone)]
struct Row {
    op: String,
    ranks: u32,
    transport: &'static str,
    bytes: usize,
    median_us: f64,
    min_us: f64,
    max_us: f64,
    implementation: &'static str,
}

impl Row {
    fn json(&self) -> String {
        format!(
            "{{\"op\":\"{}\",\"ranks\":{},\"transport\":\"{}\",\"bytes\":{},\"median_us\":{:.4},\"min_us\":{:.4},\"max_us\":{:.4},\"impl\":\"{}\"}}",
            self.op, self.ranks, self.transport, self.bytes, self.median_us, self.min_us, self.max_us, self.implementation
        )
    }
}

/// Median, min, max of per-operation times in microseconds.
fn summarize(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("times are finite"));
    let median = samples[samples.len() / 2];
    (median, samples[0], samples[samples.len() - 1])
}

struct Bench {
    repetitions: usize,
    rows: Vec<Row>,
    only: Option<String>,
}

impl Bench {
    /// A row from samples measured outside [`Bench::in_process`].
    fn push(&mut self, op: &str, ranks: u32, samples: Vec<f64>) {
        let (median_us, min_us, max_us) = summarize(samples);
        eprintln!("  {op:<28} {ranks:>3} ranks            median {median_us:>10.3} us");
        self.rows.push(Row {
            op: op.to_string(),
            ranks,
            transport: "in-process",
            bytes: 0,
            median_us,
            min_us,
            max_us,
            implementation: "runthrough",
        });
    }

    fn wanted(&self, op: &str) -> bool {
        self.only.as_ref().is_none_or(|o| op.contains(o.as_str()))
    }

    /// Runs `body` on `ranks` in-process ranks; rank 0's returned samples (µs per op) make the row.
    fn in_process<F>(&mut self, op: &str, ranks: u32, bytes: usize, body: F)
    where
        F: Fn(&Comm, usize) -> Result<Vec<f64>, Error> + Sync,
    {
        if !self.wanted(op) {
            return;
        }
        let repetitions = self.repetitions;
        let outcomes = runthrough::local(ranks).run(|world| body(world, repetitions));
        // The first rank that returned samples makes the row (rank 0 unless the body says).
        let samples = outcomes
            .into_iter()
            .filter_map(|o| o.returned())
            .map(|r| r.expect("benchmark ran without error"))
            .find(|s| !s.is_empty())
            .expect("some rank returns samples");
        let (median_us, min_us, max_us) = summarize(samples);
        let row = Row {
            op: op.to_string(),
            ranks,
            transport: "in-process",
            bytes,
            median_us,
            min_us,
            max_us,
            implementation: "runthrough",
        };
        eprintln!(
            "  {:<28} {:>3} ranks {:>8} B  median {:>10.3} us",
            row.op, ranks, bytes, median_us
        );
        self.rows.push(row);
    }
}

/// Times `iterations` runs of `step` per repetition, on every rank (rank 0's times are reported).
fn timed(
    repetitions: usize,
    iterations: usize,
    mut step: impl FnMut() -> Result<(), Error>,
) -> Result<Vec<f64>, Error> {
    for _ in 0..iterations / 10 + 1 {
        step()?;
    }
    let mut samples = Vec::with_capacity(repetitions);
    for _ in 0..repetitions {
        let start = Instant::now();
        for _ in 0..iterations {
            step()?;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6 / iterations as f64);
    }
    Ok(samples)
}

/// One-way latency: half a ping-pong round trip between ranks 0 and 1.
fn ping_pong(
    world: &Comm,
    repetitions: usize,
    bytes: usize,
    iterations: usize,
) -> Result<Vec<f64>, Error> {
    let mut buf = vec![0u8; bytes];
    let rank = world.rank();
    let samples = timed(repetitions, iterations, || {
        if rank == 0 {
            world.send(&buf, 1, 0)?;
            world.recv(&mut buf, 1u32, 0)?;
        } else if rank == 1 {
            world.recv(&mut buf, 0u32, 0)?;
            world.send(&buf, 0, 0)?;
        }
        Ok(())
    })?;
    Ok(samples.into_iter().map(|us| us / 2.0).collect())
}

/// Bandwidth as time per message of a stream of `bytes`-sized messages from 0 to 1, acknowledged
/// every `window` messages; `windows` windows per repetition.
fn stream(
    world: &Comm,
    repetitions: usize,
    bytes: usize,
    window: usize,
    windows: usize,
) -> Result<Vec<f64>, Error> {
    let mut buf = vec![0u8; bytes];
    let mut ack = [0u8; 1];
    let rank = world.rank();
    timed(repetitions, windows, || {
        for _ in 0..window {
            if rank == 0 {
                world.send(&buf, 1, 0)?;
            } else {
                world.recv(&mut buf, 0u32, 0)?;
            }
        }
        if rank == 0 {
            world.recv(&mut ack, 1u32, 1)?;
        } else {
            world.send(&ack, 0, 1)?;
        }
        Ok(())
    })
    .map(|s| s.into_iter().map(|us| us / window as f64).collect())
}

/// Iterations per repetition for a collective at `ranks` ranks (more ranks, fewer iterations:
/// the 2 cores are shared by all of them).
/// The collectives besides the barrier and the all-reduce, 8 bytes per rank (and a 64 KiB
/// broadcast): their blocking calls, each timed as the rows above.
fn other_collectives(bench: &mut Bench, ranks: u32, iterations: usize) {
    let only_rank_0 = |w: &Comm, s: Vec<f64>| if w.rank() == 0 { s } else { Vec::new() };
    bench.in_process("broadcast", ranks, 8, |w, r| {
        let mut buf = [7u64];
        let s = timed(r, iterations, || w.broadcast(&mut buf, 0))?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("broadcast", ranks, 1 << 16, |w, r| {
        let mut buf = vec![7u64; (1 << 16) / 8];
        let s = timed(r, iterations / 4 + 1, || w.broadcast(&mut buf, 0))?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("reduce", ranks, 8, |w, r| {
        let mut out = [0u64];
        let s = timed(r, iterations, || {
            let recv = (w.rank() == 0).then_some(&mut out[..]);
            w.reduce(&[1u64], recv, Op::Sum, 0)
        })?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("scan", ranks, 8, |w, r| {
        let mut out = [0u64];
        let s = timed(r, iterations, || w.scan(&[1u64], &mut out, Op::Sum))?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("gather", ranks, 8, |w, r| {
        let mut all = vec![0u64; w.size() as usize];
        let s = timed(r, iterations, || {
            let recv = (w.rank() == 0).then_some(&mut all[..]);
            w.gather(&[1u64], recv, 0)
        })?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("all_gather", ranks, 8, |w, r| {
        let mut all = vec![0u64; w.size() as usize];
        let s = timed(r, iterations, || w.all_gather(&[1u64], &mut all))?;
        Ok(only_rank_0(w, s))
    });
    bench.in_process("all_to_all", ranks, 8, |w, r| {
        let send = vec![1u64; w.size() as usize];
        let mut all = vec![0u64; w.size() as usize];
        let s = timed(r, iterations, || w.all_to_all(&send, &mut all))?;
        Ok(only_rank_0(w, s))
    });
}

fn collective_iterations(ranks: u32) -> usize {
    match ranks {
        0..=4 => 2000,
        5..=8 => 1000,
        9..=16 => 300,
        _ => 60,
    }
}

/// Time from a kill to a survivor's blocked receive returning `ProcFailed`: rank 0 tells the
/// last rank to die and blocks receiving from it; the victim stamps the time and kills itself
/// (as the multi-process fault job does), so any rank count from 2 works.
fn detection(universe_ranks: u32, repetitions: usize) -> Vec<f64> {
    let mut samples = Vec::new();
    for _ in 0..repetitions {
        let universe = runthrough::local(universe_ranks);
        let faults = universe.fault_handle();
        let killed_at = std::sync::Mutex::new(None::<Instant>);
        let victim = universe_ranks - 1;
        let outcomes = universe.run(|world| {
            let mut buf = [0u8];
            match world.rank() {
                0 => {
                    world.send(&[1u8], victim, 0)?; // the victim dies once rank 0 is blocked
                    let result = world.recv(&mut buf, victim, 1);
                    let now = Instant::now();
                    assert!(matches!(result, Err(Error::ProcFailed { .. })));
                    let start = killed_at
                        .lock()
                        .unwrap()
                        .expect("the victim stamps before it dies");
                    Ok(Some(now.duration_since(start).as_secs_f64() * 1e6))
                }
                r if r == victim => {
                    world.recv(&mut buf, 0u32, 0)?;
                    *killed_at.lock().unwrap() = Some(Instant::now());
                    faults.kill(victim);
                    world.recv(&mut buf, 0u32, 99)?; // unwinds: this rank is dead
                    Ok(None)
                }
                _ => Ok(None),
            }
        });
        for outcome in outcomes.into_iter().filter_map(|o| o.returned()) {
            let sample: Result<Option<f64>, Error> = outcome;
            if let Some(us) = sample.expect("detection run") {
                samples.push(us);
            }
        }
    }
    samples
}

/// Time from a kill to `validate_global` done at rank 0 (the survivors agree on the failure).
fn recovery(universe_ranks: u32, repetitions: usize) -> Vec<f64> {
    let mut samples = Vec::new();
    for _ in 0..repetitions {
        let universe = runthrough::local(universe_ranks);
        let faults = universe.fault_handle();
        let victim = universe_ranks - 1;
        let outcomes = universe.run(|world| {
            // Everyone reports to rank 0 before the kill, so no rank is still inside a call
            // that the kill would fail (a rank that left early would never validate).
            let mut buf = [0u8];
            if world.rank() == 0 {
                for _ in 1..world.size() {
                    world.recv(&mut buf, runthrough::Source::Any, 1)?;
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
            let g = world.validate_global()?;
            assert!(g.num_failed() <= 1);
            let g = if g.num_failed() == 0 {
                world.validate_global()?
            } else {
                g
            };
            assert_eq!(g.num_failed(), 1);
            Ok::<_, Error>((world.rank() == 0).then(|| start.elapsed().as_secs_f64() * 1e6))
        });
        for outcome in outcomes.into_iter().filter_map(|o| o.returned()) {
            if let Some(us) = outcome.expect("recovery run") {
                samples.push(us);
            }
        }
    }
    samples
}

/// runthrough's own rows: in-process, then multi-process over each transport.
fn own_rows(bench: &mut Bench, quick: bool, target_us: f64) {
    for bytes in SIZES {
        // About the same time per repetition at every size (a 1 MiB round trip is ~100 µs).
        let iterations = (2_000_000 / (bytes + 100)).clamp(20, 20_000);
        bench.in_process("p2p_latency", 2, bytes, |w, r| {
            ping_pong(w, r, bytes, iterations)
        });
    }
    for bytes in SIZES {
        let windows = ((1 << 20) / bytes).clamp(1, 1000);
        bench.in_process("p2p_bandwidth", 2, bytes, |w, r| {
            stream(w, r, bytes, 64, windows)
        });
    }

    for ranks in [2u32, 4, 8, 16, 64] {
        let iterations = collective_iterations(ranks);
        bench.in_process("barrier", ranks, 0, |w, r| {
            let s = timed(r, iterations, || w.barrier())?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        bench.in_process("all_reduce", ranks, 8, |w, r| {
            let mut out = [0u64];
            let s = timed(r, iterations, || {
                w.all_reduce(&[w.rank() as u64], &mut out, Op::Sum)
            })?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        bench.in_process("validate_global", ranks, 0, |w, r| {
            let s = timed(r, iterations, || w.validate_global().map(|_| ()))?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        // The non-blocking calls, started and waited for at once: what a schedule run by
        // the engine costs beside the blocking call's code.
        bench.in_process("ibarrier_wait", ranks, 0, |w, r| {
            let s = timed(r, iterations, || w.ibarrier()?.wait())?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        bench.in_process("iall_reduce_wait", ranks, 8, |w, r| {
            let mut out = [0u64];
            let s = timed(r, iterations, || {
                w.iall_reduce(&[w.rank() as u64], &mut out, Op::Sum)?.wait()
            })?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        ulfm::agree_and_shrink(bench, ranks, iterations);
        other_collectives(bench, ranks, iterations);
    }
    for ranks in [2u32, 4, 8, 64] {
        let iterations = if ranks > 8 { 4 } else { 20 };
        bench.in_process("all_reduce", ranks, 1 << 20, |w, r| {
            let send = vec![1.0f64; (1 << 20) / 8];
            let mut out = vec![0.0f64; (1 << 20) / 8];
            let s = timed(r, iterations, || w.all_reduce(&send, &mut out, Op::Sum))?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
    }
    checkpoint_rows(bench, quick);
    let fault_repetitions = if quick { 5 } else { 21 };
    for ranks in [2u32, 4, 8, 64] {
        if bench.wanted("detection") {
            bench.push("detection", ranks, detection(ranks, fault_repetitions));
        }
        if bench.wanted("recovery") {
            bench.push(
                "recovery_validate_global",
                ranks,
                recovery(ranks, fault_repetitions),
            );
        }
    }

    for ranks in [2u32, 4, 8, 64] {
        if bench.wanted("shrink_after_failure") {
            let samples = ulfm::shrink_after_failure(ranks, fault_repetitions);
            bench.push("shrink_after_failure", ranks, samples);
        }
    }
    let mp_fault_repetitions = if quick { 3 } else { 11 };
    mp::rows(bench, target_us, mp_fault_repetitions);
}

/// The resilience library's checkpoint ([`runthrough::resilience::Store`]) of B bytes per
/// rank at 4 in-process ranks, with 1 and 2 copies, beside its floor: copying k·B bytes in
/// memory (one thread), the least a checkpoint of k copies moves; and with XOR parity over one
/// group of the 4 ranks (`checkpoint_xor_group_4`: each rank sends B/3 to each other one and
/// XORs what it receives, B bytes in and out like one copy) and with Reed-Solomon parity of 2
/// over that group (`checkpoint_reed_solomon_group_4_parity_2`: each rank sends its two halves
/// to two holders each, 2·B out like two copies, and keeps B of parity). B is 64 MiB (8 MiB
/// with `--quick`).
fn checkpoint_rows(bench: &mut Bench, quick: bool) {
    use runthrough::resilience::{Error as StoreError, Redundancy, Store};
    let bytes: usize = if quick { 8 << 20 } else { 64 << 20 };
    let to_comm = |e: StoreError| match e {
        StoreError::Comm(e) => e,
        other => Error::Internal {
            reason: other.to_string(),
        },
    };
    for copies in [1u32, 2] {
        bench.in_process(&format!("checkpoint_{copies}_copies"), 4, bytes, |w, r| {
            let mut store = Store::new(w, copies).map_err(to_comm)?;
            let data = vec![w.rank() as u8; bytes];
            let s = timed(r, 1, || {
                store
                    .checkpoint(&[(w.rank(), &data)])
                    .map(drop)
                    .map_err(to_comm)
            })?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
        let op = format!("memcpy_{copies}_copies");
        if bench.wanted(&op) {
            let from = vec![1u8; bytes];
            let mut to = vec![0u8; bytes];
            let samples = (0..bench.repetitions)
                .map(|_| {
                    let start = Instant::now();
                    for _ in 0..copies {
                        to.copy_from_slice(std::hint::black_box(&from));
                        std::hint::black_box(&mut to);
                    }
                    start.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            bench.push(&op, 1, samples);
        }
    }
    let parity = [
        ("checkpoint_xor_group_4", Redundancy::Xor { group: 4 }),
        (
            "checkpoint_reed_solomon_group_4_parity_2",
            Redundancy::ReedSolomon {
                group: 4,
                parity: 2,
            },
        ),
    ];
    for (op, redundancy) in parity {
        bench.in_process(op, 4, bytes, |w, r| {
            let mut store = Store::with_redundancy(w, redundancy).map_err(to_comm)?;
            let data = vec![w.rank() as u8; bytes];
            let s = timed(r, 1, || {
                store
                    .checkpoint(&[(w.rank(), &data)])
                    .map(drop)
                    .map_err(to_comm)
            })?;
            Ok(if w.rank() == 0 { s } else { Vec::new() })
        });
    }
}

/// Prints `why` and exits with status 2.
fn fail(why: &str) -> ! {
    eprintln!("runthrough-bench: {why}");
    std::process::exit(2);
}

/// Writes the charts of `rows` into `dir`, saying which.
fn plot_rows(dir: &std::path::Path, rows: &[Row]) {
    let written = plot::write(dir, rows).unwrap_or_else(|why| fail(&why));
    if written.is_empty() {
        eprintln!("--plot: no rows that a chart shows");
    }
    for chart in written {
        eprintln!(
            "--plot: {} ({})",
            chart.file.display(),
            chart.series.join(", ")
        );
    }
}

fn main() {
    mp::serve_worker_if_asked();
    let args = Args::parse();
    if let (Some(dir), Some(from)) = (&args.plot, &args.from) {
        let rows = plot::read_rows(from).unwrap_or_else(|why| fail(&why));
        plot_rows(dir, &rows);
        return;
    }
    let mut bench = Bench {
        repetitions: if args.quick { 5 } else { 21 },
        rows: Vec::new(),
        only: args.only.clone(),
    };
    let started = Instant::now();

    // Multi-process and Open MPI: repetitions calibrated to about this long each.
    let target_us = if args.quick { 5_000.0 } else { 20_000.0 };
    if !args.compare_only {
        own_rows(&mut bench, args.quick, target_us);
    }
    let mut side_by_side = String::new();
    if args.compare {
        let wanted = |op: &str| bench.wanted(op);
        let rounds = args.rounds.unwrap_or(if args.quick { 2 } else { 5 });
        match compare::rows(rounds, args.busy, bench.repetitions, target_us, wanted) {
            Ok((rows, table)) => {
                bench.rows.extend(rows);
                side_by_side = table;
            }
            Err(why) => eprintln!("--compare: no Open MPI rows: {why}"),
        }
    }

    table::print(&bench.rows);
    print!("{side_by_side}");
    if let Some(path) = &args.json {
        table::write_json(path, &bench.rows);
    }
    if let Some(dir) = &args.plot {
        plot_rows(dir, &bench.rows);
    }
    eprintln!(
        "done in {:.1?}",
        Duration::from_secs_f64(started.elapsed().as_secs_f64())
    );
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The benchmark suite: `cargo run --release -p runthrough-bench -- [--json FILE] [--quick]`.
//!
//! Every figure is measured inside one run, side by side, and reported as a median with the
//! minimum and maximum over repetitions. Each repetition times many iterations of an operation
//! and divides, so a row's unit is microseconds per operation.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::Parser;
use runthrough::{Comm, Error};

#[derive(Parser, Debug)]
#[command(about = "runthrough benchmarks: a markdown table, and JSON rows with --json")]
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
}

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
        let samples = outcomes
            .into_iter()
            .next()
            .and_then(|o| o.returned())
            .expect("rank 0 returns")
            .expect("benchmark ran without error");
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
/// every `window` messages.
fn stream(
    world: &Comm,
    repetitions: usize,
    bytes: usize,
    window: usize,
) -> Result<Vec<f64>, Error> {
    let mut buf = vec![0u8; bytes];
    let mut ack = [0u8; 1];
    let rank = world.rank();
    timed(repetitions, 1, || {
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

fn main() {
    let args = Args::parse();
    let mut bench = Bench {
        repetitions: if args.quick { 5 } else { 21 },
        rows: Vec::new(),
        only: args.only.clone(),
    };
    let started = Instant::now();

    bench.in_process("p2p_latency", 2, 8, |w, r| ping_pong(w, r, 8, 20_000));
    bench.in_process("p2p_bandwidth", 2, 1 << 20, |w, r| {
        stream(w, r, 1 << 20, 64)
    });

    println!(
        "| op | ranks | transport | bytes | median (us) | min (us) | max (us) | extra | impl |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---|---|");
    for row in &bench.rows {
        let extra = if row.op.contains("bandwidth") {
            format!("{:.2} GB/s", row.bytes as f64 / row.median_us / 1e3)
        } else {
            String::new()
        };
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {} | {} |",
            row.op,
            row.ranks,
            row.transport,
            row.bytes,
            row.median_us,
            row.min_us,
            row.max_us,
            extra,
            row.implementation
        );
    }
    if let Some(path) = args.json {
        let mut file = std::fs::File::create(&path).expect("creating the JSON file");
        for row in &bench.rows {
            writeln!(file, "{}", row.json()).expect("writing the JSON file");
        }
    }
    eprintln!(
        "done in {:.1?}",
        Duration::from_secs_f64(started.elapsed().as_secs_f64())
    );
}

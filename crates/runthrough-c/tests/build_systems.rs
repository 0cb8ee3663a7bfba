// SPDX-License-Identifier: MIT OR Apache-2.0
//! MPI software is built with its build system, not by calling the wrapper by hand: an
//! autotools project configured and made with `CC=rtcc`, a CMake project whose `FindMPI`
//! finds the library (named by `MPI_C_COMPILER`, or with rtcc as the project's compiler), and a
//! build from the `pkg-config` file rtcc prints; each program then runs under rtrun. And a
//! wrapper never runs itself: `CC` is not its compiler, and a wrapper started by a wrapper
//! (its compiler set to itself) stops with a clear error instead of starting copies of itself
//! without end.
//!
//! A build tool that is absent skips its test, saying so; `RT_BUILD_TOOLS=require` makes its
//! absence a failure (CI installs cmake, autoconf, automake, libtool and pkg-config). Every
//! command runs under `timeout`, and a wrapper that recursed would be stopped by the counting
//! compiler of the recursion test, so no test here can start processes without bound.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

const RTCC: &str = env!("CARGO_BIN_EXE_rtcc");
const RTCXX: &str = env!("CARGO_BIN_EXE_rtcxx");

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The program every project builds: an all-reduce of the ranks' numbers, checked. It and the
/// projects' files live in `examples/c/build-systems/`, which the guide's C chapter shows.
const PROGRAM: &str = include_str!("../../../examples/c/build-systems/demo.c");

/// A fresh scratch directory for one test, holding `demo.c` and `files`.
fn project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("build-systems")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("demo.c"), PROGRAM).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// Whether `tool` runs; when it does not, the test is skipped (said on stderr) unless
/// `RT_BUILD_TOOLS=require`.
fn have(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("RT_BUILD_TOOLS").as_deref() != Ok("require"),
            "{tool} is missing and RT_BUILD_TOOLS=require"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

/// Runs `args` in `dir` with `env`, bounded by two minutes; its output, checked for success.
fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let output = Command::new("timeout")
        .args(["-k", "5", "120"])
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("timeout runs");
    assert!(
        output.status.success(),
        "{args:?} in {} failed ({}):\n{}{}",
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs `program` on 3 ranks under rtrun and checks that all exited 0 and rank 0 said so.
fn runs(program: &Path) {
    let mut job = rtrun::Job::new(3, program.to_path_buf());
    job.timeout = Some(Duration::from_secs(60));
    job.tag_output = false;
    let report = rtrun::run(&job).expect("the job starts");
    let text: String = report
        .lines
        .iter()
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect();
    assert!(
        !report.timed_out && report.ranks.iter().all(|r| !r.failed()),
        "{}\n{}{text}",
        program.display(),
        report.summary()
    );
    assert!(text.contains("[0] No Errors"), "{text}");
}

/// The linker flag that makes the rpath rtcc adds win over cargo's `LD_LIBRARY_PATH` (which
/// may name another build's library).
const RPATH_WINS: &str = "-Wl,--disable-new-dtags";

/// A wrapper whose compiler is a wrapper stops at once with status 2 and says why: the
/// compiler here is a script that runs rtcc again and counts how deep it is, giving up at
/// depth 4, so without the guard the test fails instead of filling the machine.
#[test]
fn a_wrapper_never_runs_itself() {
    let dir = project("recursion", &[]);
    let counting = dir.join("counting-cc");
    std::fs::write(
        &counting,
        "#!/bin/sh\n\
         depth=$((${DEPTH:-0} + 1)); export DEPTH=$depth\n\
         [ $depth -gt 3 ] && { echo \"depth $depth\" >&2; exit 99; }\n\
         exec \"$WRAPPER\" \"$@\"\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&counting)
        .status()
        .unwrap();
    for (wrapper, variable) in [(RTCC, "RTCC_CC"), (RTCXX, "RTCXX_CXX")] {
        {
            let compiler = counting.to_str().unwrap();
            let output = Command::new("timeout")
                .args(["-k", "5", "60", wrapper, "-c", "demo.c"])
                .current_dir(&dir)
                .env(variable, compiler)
                .env("WRAPPER", wrapper)
                .env_remove("DEPTH")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{wrapper}: {stderr}");
            assert!(
                stderr.contains("would run each other without end") && stderr.contains(variable),
                "{stderr}"
            );
        }
    }
    // CC and CXX are not the wrappers' compilers: CC=rtcc, as make and configure pass it on,
    // compiles with cc.
    let output = Command::new(RTCC)
        .args(["-c", "demo.c"])
        .current_dir(&dir)
        .env_remove("RTCC_CC")
        .env("CC", RTCC)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(dir.join("demo.o").is_file());
    let shown = Command::new(RTCXX)
        .args(["-show", "x.cc"])
        .env_remove("RTCXX_CXX")
        .env("CXX", RTCXX)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&shown.stdout).starts_with("c++ "),
        "{shown:?}"
    );
}

/// An autotools project (configure.ac checks that MPI_Init links, Makefile.am builds the
/// program) with `./configure CC=rtcc` and `make` with `CC=rtcc` in its environment.
#[test]
fn an_autotools_project_builds_with_cc_rtcc() {
    if !(have("autoreconf") && have("automake") && have("make")) {
        return;
    }
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = project(
        "autotools",
        &[
            (
                "configure.ac",
                include_str!("../../../examples/c/build-systems/configure.ac"),
            ),
            (
                "Makefile.am",
                include_str!("../../../examples/c/build-systems/Makefile.am"),
            ),
        ],
    );
    run(&dir, &[], &["autoreconf", "-i"]);
    let cc = format!("CC={RTCC}");
    let ldflags = format!("LDFLAGS={RPATH_WINS}");
    let configured = run(&dir, &[("CC", RTCC)], &["./configure", &cc, &ldflags]);
    assert!(
        String::from_utf8_lossy(&configured.stdout).contains("checking for MPI_Init... yes"),
        "{}",
        String::from_utf8_lossy(&configured.stdout)
    );
    run(&dir, &[("CC", RTCC)], &["make"]);
    runs(&dir.join("demo"));
}

/// A CMake project using `find_package(MPI)` and `MPI::MPI_C`, configured twice: with
/// `-DMPI_C_COMPILER=rtcc` (the usual way to point FindMPI at a wrapper) and with rtcc as
/// the project's compiler (`CC=rtcc cmake`).
#[test]
fn cmake_finds_the_library() {
    if !have("cmake") {
        return;
    }
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = project(
        "cmake",
        &[(
            "CMakeLists.txt",
            include_str!("../../../examples/c/build-systems/CMakeLists.txt"),
        )],
    );
    let linker = format!("-DCMAKE_EXE_LINKER_FLAGS={RPATH_WINS}");
    let wrapper = format!("-DMPI_C_COMPILER={RTCC}");
    for (build, env, extra) in [
        (
            "by-mpi-c-compiler",
            vec![("CC", "cc")],
            Some(wrapper.as_str()),
        ),
        ("as-the-compiler", vec![("CC", RTCC)], None),
    ] {
        let mut args = vec!["cmake", "-S", ".", "-B", build, &linker];
        args.extend(extra);
        let configured = run(&dir, &env, &args);
        assert!(
            String::from_utf8_lossy(&configured.stdout).contains("Found MPI_C"),
            "{}",
            String::from_utf8_lossy(&configured.stdout)
        );
        run(&dir, &env, &["cmake", "--build", build]);
        runs(&dir.join(build).join("demo"));
    }
}

/// `rtcc -showme:pkgconfig` writes a file pkg-config reads: a plain `cc` build with its
/// `--cflags --libs` links a program that runs.
#[test]
fn the_pkg_config_file_builds_a_program() {
    if !have("pkg-config") {
        return;
    }
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = project("pkg-config", &[]);
    let pc = run(&dir, &[], &[RTCC, "-showme:pkgconfig"]);
    std::fs::write(dir.join("mpi.pc"), &pc.stdout).unwrap();
    let dir_text = dir.to_str().unwrap();
    let flags = run(
        &dir,
        &[("PKG_CONFIG_PATH", dir_text)],
        &["pkg-config", "--cflags", "--libs", "mpi"],
    );
    let flags = String::from_utf8(flags.stdout).unwrap();
    assert!(flags.contains("-lrunthrough_c"), "{flags}");
    let mut args = vec!["cc", "demo.c", "-o", "demo", RPATH_WINS];
    args.extend(flags.split_whitespace());
    run(&dir, &[], &args);
    runs(&dir.join("demo"));
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtcc [CC ARGS]...`: compiles and links a C program against runthrough's MPI library, like
//! `mpicc`.
//!
//! It runs the C compiler (`$RTCC_CC`, else `$CC`, else `cc`) with the arguments given, plus
//! `-I <include dir>` (so `#include <mpi.h>` finds this crate's header) and, unless `-c`, `-E`
//! or `-S` is among them, `-L <lib dir> -lrunthrough_c -Wl,-rpath,<lib dir>` (the shared
//! library, found again at run time through the rpath) and `-lpthread -ldl -lm`.
//!
//! The library directory is the one rtcc lives in (`cargo build --release` puts `rtcc` and
//! `librunthrough_c.so` both in `target/release/`), or its `deps/` (where `cargo test` leaves
//! the library), whichever holds the newer library. The header is looked for in
//! `<that dir>/include/`, then `<that dir>/../include/`, then in the source tree rtcc was built
//! from (`crates/runthrough-c/include/`). `rtcc --show` prints the command instead of running it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn include_dir(bin_dir: &Path) -> PathBuf {
    let candidates = [
        bin_dir.join("include"),
        bin_dir.join("../include"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include"),
    ];
    candidates
        .iter()
        .find(|dir| dir.join("mpi.h").is_file())
        .cloned()
        .unwrap_or_else(|| candidates[2].clone())
}

/// Where the shared library is: next to rtcc (after `cargo build`), or in `deps/` next to it
/// (after `cargo test`, which builds the library as a dependency and does not copy it up).
/// When both hold one, the newer: a `cargo test` after an older `cargo build` must link the
/// library it just built.
fn library_dir(bin_dir: &Path) -> Option<PathBuf> {
    [bin_dir.to_path_buf(), bin_dir.join("deps")]
        .into_iter()
        .filter_map(|dir| {
            let modified = std::fs::metadata(dir.join("librunthrough_c.so"))
                .ok()
                .filter(|m| m.is_file())?
                .modified()
                .ok()?;
            Some((modified, dir))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, dir)| dir)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.first().is_some_and(|a| a == "--show");
    if show {
        args.remove(0);
    }
    let exe = match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("rtcc: cannot find its own executable: {error}");
            return ExitCode::from(2);
        }
    };
    let bin_dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    let compiler = std::env::var("RTCC_CC")
        .or_else(|_| std::env::var("CC"))
        .unwrap_or_else(|_| "cc".into());
    let link = !args.iter().any(|a| a == "-c" || a == "-E" || a == "-S");
    let mut command = Command::new(&compiler);
    command.arg(format!("-I{}", include_dir(&bin_dir).display()));
    command.args(&args);
    if link {
        let Some(lib_dir) = library_dir(&bin_dir) else {
            eprintln!(
                "rtcc: librunthrough_c.so is not in {}: build it with `cargo build --release`",
                bin_dir.display()
            );
            return ExitCode::from(2);
        };
        command.arg(format!("-L{}", lib_dir.display()));
        command.arg("-lrunthrough_c");
        command.arg(format!("-Wl,-rpath,{}", lib_dir.display()));
        command.args(["-lpthread", "-ldl", "-lm"]);
    }
    if show {
        println!("{command:?}");
        return ExitCode::SUCCESS;
    }
    match command.status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(1, 255) as u8),
        Err(error) => {
            eprintln!("rtcc: cannot run {compiler}: {error}");
            ExitCode::from(2)
        }
    }
}

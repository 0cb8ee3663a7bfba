// SPDX-License-Identifier: MIT OR Apache-2.0
//! The compiler wrapper shared by `rtcc` (C, like `mpicc`) and `rtcxx` (C++, like `mpicxx`):
//! it compiles and links a program against runthrough's MPI library.
//!
//! It runs the compiler (for rtcc `$RTCC_CC`, else `cc`; for rtcxx `$RTCXX_CXX`, else `c++`)
//! with the arguments given, plus `-I <include dir>` (so
//! `#include <mpi.h>` finds this crate's header) and, unless `-c`, `-E`, `-S` or `-M` is among
//! them, `-L <lib dir> -lrunthrough_c -Wl,-rpath,<lib dir>` (the shared library, found again at
//! run time through the rpath) and `-lpthread -ldl -lm`.
//!
//! The library directory is the one the wrapper lives in (`cargo build --release` puts `rtcc`,
//! `rtcxx` and `librunthrough_c.so` all in `target/release/`), or its `deps/` (where `cargo
//! test` leaves the library), whichever holds the newer library. The header is looked for in
//! `<that dir>/include/`, then `<that dir>/../include/`, then in the source tree the wrapper
//! was built from (`crates/runthrough-c/include/`).
//!
//! Its own options, taken out wherever they are among the arguments, as MPICH's and Open MPI's
//! wrappers take theirs: `-show` / `-showme` (and `--show`, `--showme`) print the command
//! instead of running it; `-showme:compile` / `-compile_info` print only the flags a compile
//! adds, `-showme:link` / `-link_info` only those a link adds; `--help` / `-help` prints the
//! usage. Printed commands are one line, each word quoted for a POSIX shell where it needs it.
//!
//! `$CC` / `$CXX` are never read: autotools and make pass `CC=rtcc` down to the programs they
//! run, so a wrapper that took its compiler from `$CC` would run itself, without end. A wrapper
//! that still ends up running itself (`RTCC_CC=rtcc`, or a `cc` on the path that is rtcc) is
//! stopped by a marker it puts in its compiler's environment (`RT_WRAPPER_RUNNING`): a wrapper
//! that finds the marker set prints why and exits with status 2, running nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Set in the environment of the compiler a wrapper runs, to the wrapper's name: a wrapper
/// started with it set was started by a wrapper, and refuses to recurse.
const MARKER: &str = "RT_WRAPPER_RUNNING";

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

/// A wrapper's language: its name and where its compiler comes from.
pub struct Language {
    /// The wrapper's name (`rtcc`).
    pub name: &'static str,
    /// The MPI wrapper it stands for (`mpicc`).
    pub stands_for: &'static str,
    /// The variable that names the compiler.
    pub variable: &'static str,
    /// The build tools' variable for the compiler, which the wrapper does not read (`CC`).
    pub ignored: &'static str,
    /// The compiler when no variable is set.
    pub default: &'static str,
    /// The language, in its usage text.
    pub language: &'static str,
}

/// What the wrapper was asked to do with the command it builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Show,
    ShowCompile,
    ShowLink,
    PkgConfig,
    Help,
}

fn usage(language: &Language) -> String {
    let variables = format!("${}", language.variable);
    format!(
        "usage: {name} [OPTIONS] [COMPILER ARGUMENTS]...\n\
         \n\
         Compiles and links a {lang} program against runthrough's MPI library, as {mpi} does:\n\
         runs the compiler ({variables}, else {default}) with the arguments given, adding\n\
         -I<dir of mpi.h> and, when linking (no -c, -E, -S or -M), -L<library dir>\n\
         -lrunthrough_c -Wl,-rpath,<library dir> -lpthread -ldl -lm. ${cc_var} is not read\n\
         (make and configure pass CC={name} on to what they run).\n\
         \n\
         Options (anywhere among the arguments):\n\
         \x20 -show, -showme, --show, --showme    print the compiler command, do not run it\n\
         \x20 -showme:compile, -compile_info      print only the flags added to a compile\n\
         \x20 -showme:link, -link_info            print only the flags added to a link\n\
         \x20 -showme:pkgconfig                  print a pkg-config file for this library\n\
         \x20                                    ({name} -showme:pkgconfig > DIR/mpi.pc)\n\
         \x20 --help, -help                       print this help\n\
         \n\
         Run the program with rtrun (rtrun -n 4 ./prog), Hydra's mpiexec or srun.",
        name = language.name,
        lang = language.language,
        mpi = language.stands_for,
        default = language.default,
        cc_var = language.ignored,
    )
}

/// A word as a POSIX shell reads it back: as it is when it holds only safe characters, else
/// in single quotes.
fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A pkg-config file for the library this wrapper links: the flags it adds, split into
/// `Cflags`, `Libs` (the library and its path) and `Libs.private` (what it needs).
fn pkg_config(language: &Language, compile_flags: &[String], link_flags: &[String]) -> String {
    let (libs, private): (Vec<String>, Vec<String>) = link_flags
        .iter()
        .cloned()
        .partition(|flag| !["-lpthread", "-ldl", "-lm"].contains(&flag.as_str()));
    format!(
        "Name: runthrough\n\
         Description: runthrough's MPI library for {lang} (fault-tolerant; what {name} links)\n\
         Version: {version}\n\
         Cflags: {cflags}\n\
         Libs: {libs}\n\
         Libs.private: {private}",
        lang = language.language,
        name = language.name,
        version = env!("CARGO_PKG_VERSION"),
        cflags = line(compile_flags),
        libs = line(&libs),
        private = line(&private),
    )
}

/// Runs the wrapper for `language` with the process's arguments.
pub fn main(language: &Language) -> ExitCode {
    let name = language.name;
    let mut mode = Mode::Run;
    let mut args = Vec::new();
    for arg in std::env::args().skip(1) {
        let wanted = match arg.as_str() {
            "-show" | "--show" | "-showme" | "--showme" => Mode::Show,
            "-showme:compile" | "--showme:compile" | "-compile_info" => Mode::ShowCompile,
            "-showme:link" | "--showme:link" | "-link_info" => Mode::ShowLink,
            "-showme:pkgconfig" | "--showme:pkgconfig" => Mode::PkgConfig,
            "--help" | "-help" => Mode::Help,
            _ => {
                args.push(arg);
                continue;
            }
        };
        if mode != Mode::Help {
            mode = wanted;
        }
    }
    if mode == Mode::Help {
        println!("{}", usage(language));
        return ExitCode::SUCCESS;
    }
    let exe = match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("{name}: cannot find its own executable: {error}");
            return ExitCode::from(2);
        }
    };
    let bin_dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    if mode == Mode::Run {
        if let Some(outer) = std::env::var_os(MARKER) {
            eprintln!(
                "{name}: started as the compiler of {}, so the wrappers would run each other \
                 without end: set {} to a real compiler (gcc, clang, ...)",
                outer.to_string_lossy(),
                language.variable,
            );
            return ExitCode::from(2);
        }
    }
    let compiler = std::env::var(language.variable)
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| language.default.into());
    let link = match mode {
        Mode::ShowCompile => false,
        Mode::ShowLink | Mode::PkgConfig => true,
        _ => !args
            .iter()
            .any(|a| a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM"),
    };
    let compile_flags = vec![format!("-I{}", include_dir(&bin_dir).display())];
    let mut link_flags = Vec::new();
    if link {
        let Some(lib_dir) = library_dir(&bin_dir) else {
            eprintln!(
                "{name}: librunthrough_c.so is not in {}: build it with `cargo build --release`",
                bin_dir.display()
            );
            return ExitCode::from(2);
        };
        link_flags.push(format!("-L{}", lib_dir.display()));
        link_flags.push("-lrunthrough_c".into());
        link_flags.push(format!("-Wl,-rpath,{}", lib_dir.display()));
        link_flags.extend(["-lpthread", "-ldl", "-lm"].map(String::from));
    }
    let mut words = vec![compiler.clone()];
    words.extend(compile_flags.iter().cloned());
    words.extend(args);
    words.extend(link_flags.iter().cloned());
    match mode {
        Mode::Show => {
            println!("{}", line(&words));
            return ExitCode::SUCCESS;
        }
        Mode::ShowCompile => {
            println!("{}", line(&compile_flags));
            return ExitCode::SUCCESS;
        }
        Mode::ShowLink => {
            println!("{}", line(&link_flags));
            return ExitCode::SUCCESS;
        }
        Mode::PkgConfig => {
            println!("{}", pkg_config(language, &compile_flags, &link_flags));
            return ExitCode::SUCCESS;
        }
        Mode::Run | Mode::Help => {}
    }
    match Command::new(&words[0])
        .args(&words[1..])
        .env(MARKER, name)
        .status()
    {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(1, 255) as u8),
        Err(error) => {
            eprintln!("{name}: cannot run {compiler}: {error}");
            ExitCode::from(2)
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtcc [OPTIONS] [CC ARGS]...`: compiles and links a C program against runthrough's MPI
//! library, like `mpicc` (the compiler: `$RTCC_CC`, else `cc`). `rtcc --help`
//! prints the usage; `rtcc -show` (`-showme`) prints the command without running it. See
//! `wrapper/mod.rs`.

mod wrapper;

fn main() -> std::process::ExitCode {
    wrapper::main(&wrapper::Language {
        name: "rtcc",
        stands_for: "mpicc",
        variable: "RTCC_CC",
        ignored: "CC",
        default: "cc",
        language: "C",
    })
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtcxx [OPTIONS] [C++ COMPILER ARGS]...`: compiles and links a C++ program against
//! runthrough's MPI library (the C interface: `mpi.h` has `extern "C"` guards; there are no
//! MPI C++ bindings), like `mpicxx` (the compiler: `$RTCXX_CXX`, else `c++`).
//! `rtcxx --help` prints the usage; `rtcxx -show` (`-showme`) prints the command without
//! running it. See `wrapper/mod.rs`.

mod wrapper;

fn main() -> std::process::ExitCode {
    wrapper::main(&wrapper::Language {
        name: "rtcxx",
        stands_for: "mpicxx",
        variable: "RTCXX_CXX",
        ignored: "CXX",
        default: "c++",
        language: "C++",
    })
}

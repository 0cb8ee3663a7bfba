// SPDX-License-Identifier: MIT OR Apache-2.0
//! Compiles the library's one C file: arithmetic on `long double`, which Rust has no type for
//! (`src/wide.rs`).

fn main() {
    println!("cargo:rerun-if-changed=csrc/long_double.c");
    cc::Build::new()
        .file("csrc/long_double.c")
        .flag_if_supported("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .compile("rt_long_double");
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Lets this crate's examples and tests find the C library at run time: an rpath for every
//! library directory `$MPICC -show` names (rsmpi's own build links with `-L` and `-l` only).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=MPICC");
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let Ok(show) = Command::new(&mpicc).arg("-show").output() else {
        return;
    };
    for word in String::from_utf8_lossy(&show.stdout).split_whitespace() {
        if let Some(dir) = word.strip_prefix("-L") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}

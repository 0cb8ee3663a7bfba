// SPDX-License-Identifier: MIT OR Apache-2.0
//! Line-buffered standard output from the start of a C program (issue 14, item 4).
//!
//! A rank's standard output is a pipe to its launcher, so the C library would buffer it in
//! blocks: a line printed just before the process dies (`raise(SIGKILL)`, a crash, an injected
//! fault) would be lost with the buffer. Under `mpirun` the same line appears. So when this
//! library is loaded, before the program's `main` and before any of its own constructors,
//! [`line_buffered_stdout`] makes `stdout` line-buffered, as it is on a terminal: every
//! complete line is written to the pipe when it is printed. Standard error is unbuffered in C
//! anyway.
//!
//! Limits: it covers programs linked with this library (what `rtcc` builds), whoever launches
//! them; a program may still change the buffering itself (`setvbuf` in `main`); a line without
//! its `\n` is still in the buffer when the process dies. Rust ranks need nothing: Rust's
//! `stdout` is line-buffered everywhere.

use std::ffi::{c_char, c_int, c_void};

/// glibc's and musl's `_IOLBF` (`<stdio.h>`): line buffering.
const IOLBF: c_int = 1;

extern "C" {
    /// The C library's `FILE *stdout`.
    static stdout: *mut c_void;
    fn setvbuf(stream: *mut c_void, buffer: *mut c_char, mode: c_int, size: usize) -> c_int;
}

/// Run by the dynamic loader when the library is loaded (an `.init_array` entry), before the
/// program's own initialisation.
#[used]
#[link_section = ".init_array"]
static LINE_BUFFERED_STDOUT_AT_LOAD: extern "C" fn() = line_buffered_stdout;

/// Makes the C library's `stdout` line-buffered (its own buffer, allocated by the C library).
extern "C" fn line_buffered_stdout() {
    let _ = set_line_buffered();
}

/// [`line_buffered_stdout`]; whether `setvbuf` accepted it.
fn set_line_buffered() -> bool {
    // SAFETY: `stdout` is the C library's initialised `FILE *` (libc sets it up before any
    // constructor of a library that depends on it runs); reading the pointer is a plain load.
    // `setvbuf` with a NULL buffer and size 0 asks the C library to allocate its own buffer,
    // so no memory of ours is handed over; it is called before any operation on the stream,
    // as C requires: from the constructor, before `main`, and again from the unit test, in a
    // process whose C `stdout` nothing has used (Rust's test harness writes through its own
    // `std::io::stdout`, not the C library's `FILE`).
    unsafe { !stdout.is_null() && setvbuf(stdout, std::ptr::null_mut(), IOLBF, 0) == 0 }
}

#[cfg(test)]
mod tests {
    /// `setvbuf` accepts the line-buffered mode on this C library's `stdout` (the constructor
    /// ran already, at load; calling it again is allowed). `tests/c_programs.rs` checks the
    /// effect: a line printed just before `raise(SIGKILL)` reaches rtrun.
    #[test]
    fn stdout_can_be_made_line_buffered() {
        assert!(super::set_line_buffered());
    }
}

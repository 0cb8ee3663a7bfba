// SPDX-License-Identifier: MIT OR Apache-2.0
//! Shared by the integration tests: a deadline for every run, so that a hang fails the test
//! instead of stalling the suite.

#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Every run in these tests finishes in well under a second; this bounds a hang.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and returns its value, or panics when it takes longer than
/// [`DEADLINE`] (the thread is left behind; the test fails instead of hanging).
pub fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no result within {DEADLINE:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the run panicked"),
    }
}

/// Runs a binary with `args` and returns its output, killing it after [`DEADLINE`].
pub fn run_binary(path: &str, args: &[&str]) -> Output {
    let child = Command::new(path)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(output) => output.expect("the binary's output"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{path} {args:?}: did not finish within {DEADLINE:?}");
        }
    }
}

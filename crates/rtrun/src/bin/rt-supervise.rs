// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rt-supervise PROGRAM [ARGS]`: runs one rank as a child and outlives it, for launchers that
//! tear the whole job down when a rank dies by a signal (MPICH's Hydra `mpiexec`).
//!
//! ```sh
//! mpiexec -n 4 target/release/rt-supervise ./prog
//! ```
//!
//! The child inherits everything (environment, the launcher's `PMI_FD`, standard streams). When
//! it exits, the supervisor exits with its status; when a signal kills it, the supervisor says
//! so on standard error and exits with 128 + the signal number (as a shell does), so the
//! launcher sees a non-zero exit, which Hydra tolerates, instead of a signal death, which it
//! does not. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the supervisor are
//! passed on to the child, so the launcher can still stop the job.

use std::process::{Command, ExitCode};

use rustix::process::{Pid, Signal};
use signal_hook::iterator::Signals;

const FORWARDED: [i32; 6] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
    signal_hook::consts::SIGUSR1,
    signal_hook::consts::SIGUSR2,
];

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: rt-supervise PROGRAM [ARGS]");
        return ExitCode::from(2);
    };
    // Catch the signals before spawning, so that none meant for the child is lost in between.
    let mut signals = match Signals::new(FORWARDED) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("rt-supervise: cannot handle signals: {e}");
            return ExitCode::from(2);
        }
    };
    let mut child = match Command::new(&program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!(
                "rt-supervise: cannot start {}: {e}",
                program.to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    let pid = Pid::from_child(&child);
    let forwarder = std::thread::Builder::new()
        .name("rt-supervise-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if let Some(signal) = Signal::from_named_raw(signal) {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
        });
    if let Err(e) = forwarder {
        eprintln!("rt-supervise: cannot start the signal forwarder: {e}");
    }
    // The forwarder may signal the pid only while it is the child: once `wait` has reaped it,
    // the process exits at once (the thread dies with it).
    match child.wait() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(code) = status.code() {
                return ExitCode::from(code as u8);
            }
            let signal = status.signal().unwrap_or(0);
            eprintln!(
                "rt-supervise: {} (pid {}) was killed by signal {signal}; exiting {}",
                program.to_string_lossy(),
                child.id(),
                128 + signal
            );
            ExitCode::from((128 + signal) as u8)
        }
        Err(e) => {
            eprintln!("rt-supervise: waiting for the rank: {e}");
            ExitCode::from(1)
        }
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtrun -n N [--tag-output] [--timeout SECS] [--kill RANK@SECS|RANK@OP:K]... PROGRAM [ARGS]`
//!
//! Starts N ranks of PROGRAM as one runthrough job, forwards their output, injects the faults
//! asked for, prints who failed, how and when, and exits 0 iff every rank that was not killed on
//! purpose exited 0 (130 when interrupted, 124 at the time-out). A rank that exits with status
//! 85 (`runthrough::net::launch::EXIT_INJECTED`) was killed on purpose by its own program.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

/// Launches a multi-process runthrough job on this host.
#[derive(Parser, Debug)]
#[command(name = "rtrun", version, trailing_var_arg = true)]
struct Args {
    /// Number of ranks.
    #[arg(short = 'n', long = "np", value_name = "N")]
    ranks: u32,
    /// Prefix each output line with `[rank]`.
    #[arg(long)]
    tag_output: bool,
    /// Stop the whole job after SECS seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Kill RANK: `RANK@SECS` (SIGKILL after SECS seconds) or `RANK@OP:K` (the rank dies
    /// inside its K-th OP: `validate_global:K[:M]`, before its M-th protocol message, or
    /// `call:K`, its K-th communication call). Repeatable.
    #[arg(long, value_name = "RANK@WHEN")]
    kill: Vec<rtrun::Kill>,
    /// SIGSTOP RANK after SECS seconds (`RANK@SECS`), to test hang detection. Repeatable.
    #[arg(long = "stop", value_name = "RANK@SECS")]
    stops: Vec<rtrun::Kill>,
    /// Heartbeat period and timeout in milliseconds, `PERIOD:TIMEOUT` (default 500:5000).
    #[arg(long, value_name = "PERIOD:TIMEOUT")]
    heartbeat: Option<String>,
    /// The program and its arguments.
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.ranks == 0 {
        eprintln!("rtrun: -n must be at least 1");
        return ExitCode::from(2);
    }
    let mut job = rtrun::Job::new(args.ranks, &args.command[0]);
    job.args = args.command[1..].to_vec();
    job.tag_output = args.tag_output;
    job.forward_output = true;
    job.capture_output = false;
    job.kills = args.kill;
    for stop in args.stops {
        let rtrun::KillAt::After(delay) = stop.at else {
            eprintln!("rtrun: --stop takes RANK@SECS");
            return ExitCode::from(2);
        };
        job.stops.push((stop.rank, delay));
    }
    if let Some(t) = args.timeout {
        if !(t.is_finite() && t > 0.0) {
            eprintln!("rtrun: --timeout takes a positive number of seconds");
            return ExitCode::from(2);
        }
        job.timeout = Some(Duration::from_secs_f64(t));
    }
    if let Some(hb) = &args.heartbeat {
        let parsed = hb
            .split_once(':')
            .and_then(|(p, t)| Some((p.parse::<u64>().ok()?, t.parse::<u64>().ok()?)))
            .filter(|(p, t)| *p > 0 && t > p);
        let Some((period, timeout)) = parsed else {
            eprintln!("rtrun: --heartbeat PERIOD_MS:TIMEOUT_MS with 0 < PERIOD < TIMEOUT");
            return ExitCode::from(2);
        };
        job.heartbeat = Some((
            Duration::from_millis(period),
            Duration::from_millis(timeout),
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        if let Err(e) = signal_hook::flag::register(signal, Arc::clone(&stop)) {
            eprintln!("rtrun: cannot handle signal {signal}: {e}");
            return ExitCode::from(2);
        }
    }
    job.stop = Some(stop);
    let report = match rtrun::run(&job) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("rtrun: {e}");
            return ExitCode::from(2);
        }
    };
    eprint!("{}", report.summary());
    if report.interrupted {
        ExitCode::from(130)
    } else if report.timed_out {
        ExitCode::from(124)
    } else if report.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

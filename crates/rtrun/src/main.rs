// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtrun -n N [--tag-output] [--timeout SECS] [--kill RANK@SECS|RANK@OP:K]... [--bind WHERE]
//! [--wrap RANKS=COMMAND]... [--no-kill-suspects] PROGRAM [ARGS]`
//!
//! Starts N ranks of PROGRAM as one runthrough job, forwards their output, injects the faults
//! asked for, prints who failed, how and when, and exits 0 iff every rank that was not killed on
//! purpose exited 0 (130 when interrupted, 124 at the time-out; when a rank aborts the job with
//! `MPI_Abort(comm, code)`, rtrun ends every rank and exits with that code). A rank that exits
//! with status 85 (`runthrough_net::launch::EXIT_INJECTED`) was killed on purpose by its own
//! program.

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
    /// inside its K-th OP: `validate_global:K[:M]`, before its M-th protocol message of its K-th
    /// agreement on the world communicator; a collective such as `all_reduce:K[:M]` (also
    /// `barrier`, `bcast`, `reduce`, `gather`, `all_gather`, `scatter`, `all_to_all`, `scan`,
    /// `exscan`; `allreduce` etc. accepted), at entry or before its M-th message of that call;
    /// or `call:K`, its K-th communication call). Repeatable.
    #[arg(long, value_name = "RANK@WHEN")]
    kill: Vec<rtrun::Kill>,
    /// SIGSTOP RANK after SECS seconds (`RANK@SECS`), to test hang detection. Repeatable.
    #[arg(long = "stop", value_name = "RANK@SECS")]
    stops: Vec<rtrun::Kill>,
    /// Heartbeat period and timeout in milliseconds, `PERIOD:TIMEOUT` (default 500:5000).
    #[arg(long, value_name = "PERIOD:TIMEOUT")]
    heartbeat: Option<String>,
    /// Bind the ranks' listeners and rtrun's control listener to ADDR, to the address of
    /// interface IFACE, or to the address this host uses to reach HOST (`route:HOST`), instead
    /// of loopback. Each rank resolves it where it runs.
    #[arg(long, value_name = "ADDR|IFACE|route:HOST")]
    bind: Option<String>,
    /// Run RANKS (`3`, `0,2`, `4-7`) under COMMAND, a command prefix that runs the program in
    /// its place, e.g. `--wrap '3=ip netns exec host-b'` or `--wrap '0=nice -n 5'`. Repeatable.
    #[arg(long = "wrap", value_name = "RANKS=COMMAND")]
    wraps: Vec<String>,
    /// Do not kill ranks that their peers suspect (as a launcher without a kill channel):
    /// a suspect is only fenced and must halt by itself (SPEC §1).
    #[arg(long)]
    no_kill_suspects: bool,
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
    job.bind = args.bind;
    job.kill_suspects = !args.no_kill_suspects;
    for wrap in &args.wraps {
        let Some((ranks, wrapper)) = parse_wrap(wrap, args.ranks) else {
            eprintln!("rtrun: --wrap RANKS=COMMAND, RANKS like 3, 0,2 or 4-7 below -n: {wrap:?}");
            return ExitCode::from(2);
        };
        for rank in ranks {
            job.rank_wrapper(rank, wrapper.clone());
        }
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
    ExitCode::from(report.exit_status())
}

/// `RANKS=COMMAND`: the ranks (each below `size`) and the command's words.
fn parse_wrap(text: &str, size: u32) -> Option<(Vec<u32>, Vec<String>)> {
    let (ranks, command) = text.split_once('=')?;
    let mut list = Vec::new();
    for part in ranks.split(',') {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (low.trim().parse().ok()?, high.trim().parse().ok()?),
            None => {
                let rank: u32 = part.trim().parse().ok()?;
                (rank, rank)
            }
        };
        if low > high || high >= size {
            return None;
        }
        list.extend(low..=high);
    }
    let words: Vec<String> = command.split_whitespace().map(String::from).collect();
    (!words.is_empty()).then_some((list, words))
}

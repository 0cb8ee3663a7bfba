// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtrun -n N [--tag-output] [--timeout SECS] [--kill RANK@WHEN]... [--stop RANK@SECS]...
//! [--heartbeat PERIOD:TIMEOUT] [--bind WHERE] [--wrap RANKS=COMMAND]... [--no-kill-suspects]
//! [--strict-deaths] [--strict-faults] [--timeline FILE] PROGRAM [ARGS]`
//!
//! Starts N ranks of PROGRAM as one runthrough job after checking its input
//! (`rtrun::check`), forwards their output, injects the faults asked for, prints who failed,
//! how and when, and whether each planned fault fired, and exits as `rtrun::EXIT_STATUS_TABLE`
//! says: 0 when at least one rank exited 0 and every other rank died (a death the job
//! survived does not fail it). A rank that exits
//! with status 85 (`runthrough_net::launch::EXIT_INJECTED`) was killed on purpose by its own
//! program.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use runthrough::{FaultPlan, Trigger};

/// Launches a multi-process runthrough job on this host.
#[derive(Parser, Debug)]
#[command(
    name = "rtrun",
    version,
    trailing_var_arg = true,
    after_help = help_after_options()
)]
struct Args {
    /// Number of ranks, at least 1 (`-np N` is taken too, as mpirun takes it).
    #[arg(short = 'n', alias = "np", value_name = "N", allow_hyphen_values = true,
          value_parser = parse_ranks)]
    ranks: u32,
    /// Prefix each output line with `[rank]`.
    #[arg(long)]
    tag_output: bool,
    /// Stop the whole job after SECS seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Kill a rank: RANK@WHEN, comma-separated for several (see FAULTS below), e.g. `2@0.5`,
    /// `1@call:8`, `3@validate_global:2:1`, `1@all_reduce:3`. Repeatable.
    #[arg(long, value_name = "RANK@WHEN")]
    kill: Vec<FaultPlan>,
    /// SIGSTOP a rank after SECS seconds (`RANK@SECS`), to test hang detection. Repeatable.
    #[arg(long = "stop", value_name = "RANK@SECS")]
    stops: Vec<FaultPlan>,
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
    /// a suspect is only fenced and must halt by itself.
    #[arg(long)]
    no_kill_suspects: bool,
    /// Make any death a failure (exit status 1): by default a job whose survivors finished
    /// exits 0 whoever died (see EXIT STATUS).
    #[arg(long)]
    strict_deaths: bool,
    /// Make a planned fault (--kill, --stop) that did not fire a failure (exit status 1): by
    /// default it is a warning in the report.
    #[arg(long)]
    strict_faults: bool,
    /// Give the ranks VAR: with `=VALUE`, that value; without, rtrun's own value (an error if
    /// rtrun has none), as mpirun's `-x`. Repeatable.
    #[arg(short = 'x', value_name = "VAR[=VALUE]")]
    export: Vec<String>,
    /// The error handler MPI_COMM_WORLD and MPI_COMM_SELF start with in C programs, as
    /// mpiexec's option (MPI-4): mpi_errors_are_fatal (the default), mpi_errors_abort (the same
    /// here) or mpi_errors_return. Sets RT_INITIAL_ERRHANDLER for the ranks.
    #[arg(long, value_name = "NAME", value_parser = runthrough::settings::INITIAL_ERRHANDLERS)]
    initial_errhandler: Option<String>,
    /// Start the ranks in DIR (mpirun's `-wdir` is taken too); a relative program path is
    /// still found from rtrun's own directory.
    #[arg(long, value_name = "DIR")]
    wdir: Option<std::path::PathBuf>,
    /// Where the ranks run. By default rank r is bound to the r-th CPU rtrun may use when the
    /// ranks do not outnumber those CPUs, and left unbound when they do (as mpirun does);
    /// `core`: bind round-robin however many ranks; `none`: leave every rank where the kernel
    /// puts it. (Under srun or Hydra, their binding stands: rtrun is not involved.)
    #[arg(long, value_name = "core|none", value_parser = ["core", "none"])]
    bind_to: Option<String>,
    /// Say on standard error which CPU each rank is bound to.
    #[arg(long)]
    report_bindings: bool,
    /// Also write each rank's output to DIR/rank.N/stdout and DIR/rank.N/stderr (as Open MPI's
    /// option; the lines still reach rtrun's output).
    #[arg(long, value_name = "DIR")]
    output_filename: Option<std::path::PathBuf>,
    /// Draw the job as an SVG picture in FILE: one lane per rank with its start, the faults
    /// that fired, each death and how it happened, when each rank's failure detector learned
    /// of a death, what every validate_global, agree and shrink returned, finalize and the
    /// end. Only with this option do the ranks report their events to rtrun (see TIMELINE).
    #[arg(long, value_name = "FILE")]
    timeline: Option<std::path::PathBuf>,
    /// How many ranks the job may reach in all (MPI_UNIVERSE_SIZE): its first N and those its
    /// ranks start with Comm::spawn / MPI_Comm_spawn while it runs [default: 2 x N]. A spawned
    /// rank runs the job's program with the job's arguments, gets a world rank from N up, is
    /// listed in the summary, and, when its parents call the spawn off, is killed before it
    /// runs any of the program (not counted against the exit status).
    #[arg(long, value_name = "N")]
    universe_size: Option<u32>,
    /// Open MPI's option that turns fault tolerance on (`ulfm`, `mpi`), taken so that scripts
    /// and build systems written for its mpirun run unchanged: here it is always on.
    #[arg(long, value_name = "ulfm|mpi", value_parser = ["ulfm", "mpi"])]
    with_ft: Option<String>,
    /// The program (a name without `/` is looked up on PATH, then in the current directory)
    /// and its arguments.
    #[arg(required = true, num_args = 1..)]
    command: Vec<OsString>,
}

/// The fault grammar and the settings, after the options in `--help`.
const FAULTS_HELP: &str = "\
FAULTS (--kill RANK@WHEN; the guide's chapter docs/src/faults.md has the details):
  SECS, SECSs, MSms            SIGKILL from rtrun this long after the start: 2@0.5, 2@300ms
  call:K                       the rank dies as it starts its K-th communication call: 1@call:8
  validate_global:K[:M]        in its K-th agreement (validate_global, agree, shrink), before
                               its M-th protocol message (default 1): 3@validate_global:2:1
  COLLECTIVE:K[:M]             in its K-th call of that collective, at entry or before its M-th
                               message: 1@all_reduce:3, 1@bcast:2:1 (barrier, broadcast/bcast,
                               reduce, all_reduce/allreduce, gather, all_gather/allgather,
                               scatter, all_to_all/alltoall, scan, exscan,
                               neighbor_exchange)
  revoke:M                     before its M-th revocation message: 0@revoke:1
  packet:K                     before its K-th packet of any kind (data, protocol, credits): 1@packet:40
  (iteration:K and recovery:N are the application's: give them to its own --kill)

SETTINGS (the ranks' environment, checked before the job starts):
  RT_TRANSPORT=auto|shm|unix|tcp  RT_UNEXPECTED_CAP=BYTES[K|M|G]  RT_HEARTBEAT=PERIOD_MS:TIMEOUT_MS
  RT_BIND=ADDR|IFACE|route:HOST  RT_VERBOSE=0|1  RT_FAULT=WHEN[,WHEN...]  RT_PMI=1|2
  RT_CONNECT=demand|all (peers of one host connect on first use, or every pair at start)
  A bad value stops rtrun with exit status 2 before anything starts; an unknown RT_ name is
  a warning.

TIMELINE (--timeline FILE):
  rtrun sets RT_TIMELINE=1 for the ranks only with this option; each rank then writes a short
  line to rtrun per event on the control connection it has anyway (its detector learning of
  a failure, each validate_global / agree / shrink and what it returned, finalize); without
  the option a rank checks once at start-up and sends nothing. Times in the picture are when
  rtrun saw each event, from the start of the job. Each lane is <g class=\"lane\"
  data-rank=\"R\"> and each event has class \"event KIND\", for programs that read it back.";

/// What `--help` prints after the options: the fault grammar, the settings, the exit status.
fn help_after_options() -> String {
    format!("{FAULTS_HELP}\n\n{}", rtrun::EXIT_STATUS_TABLE)
}

/// `-n`: a number of ranks, at least 1.
fn parse_ranks(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("a job has at least 1 rank".into()),
        Ok(n) => u32::try_from(n).map_err(|_| format!("at most {} ranks", u32::MAX)),
        Err(_) => Err(format!("`{text}` is not a number of ranks (at least 1)")),
    }
}

/// The options that take a value (so that the program is the first word after them).
const VALUE_OPTIONS: [&str; 16] = [
    "-n",
    "--with-ft",
    "--initial-errhandler",
    "--universe-size",
    "--bind-to",
    "--np",
    "-x",
    "--wdir",
    "--output-filename",
    "--timeline",
    "--timeout",
    "--kill",
    "--stop",
    "--heartbeat",
    "--bind",
    "--wrap",
];

/// mpirun's `-np N` as `-n N` and `-wdir DIR` as `--wdir DIR`, among rtrun's own options only (not the program's arguments).
fn with_mpirun_spellings(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut args = args.into_iter();
    out.extend(args.next()); // rtrun itself
    let mut value_next = false;
    for arg in args.by_ref() {
        if value_next {
            value_next = false;
            out.push(arg);
            continue;
        }
        let word = arg.to_string_lossy();
        if word == "-np" {
            out.push("-n".into());
            value_next = true;
            continue;
        }
        if word == "-wdir" {
            out.push("--wdir".into());
            value_next = true;
            continue;
        }
        if word == "--" || !word.starts_with('-') {
            out.push(arg);
            break;
        }
        value_next = VALUE_OPTIONS.contains(&word.as_ref());
        out.push(arg);
    }
    out.extend(args);
    out
}

fn main() -> ExitCode {
    let args = Args::parse_from(with_mpirun_spellings(std::env::args_os()));
    let mut job = rtrun::Job::new(args.ranks, &args.command[0]);
    job.universe_size = args.universe_size;
    job.args = args.command[1..].to_vec();
    job.tag_output = args.tag_output;
    job.forward_output = true;
    job.capture_output = false;
    job.kills = args
        .kill
        .iter()
        .flat_map(|plan| plan.faults())
        .copied()
        .collect();
    for stop in args.stops.iter().flat_map(|plan| plan.faults()) {
        let Trigger::After(delay) = stop.trigger else {
            eprintln!("rtrun: --stop `{stop}`: --stop takes RANK@SECS");
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
        match runthrough::settings::heartbeat(hb) {
            Ok(heartbeat) => job.heartbeat = Some(heartbeat),
            Err(e) => {
                eprintln!("rtrun: --heartbeat {hb:?}: {}", e.reason);
                return ExitCode::from(2);
            }
        }
    }
    for export in &args.export {
        let (name, value) = match export.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (export.as_str(), std::env::var(export).ok()),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            eprintln!("rtrun: -x {export:?}: expected VAR or VAR=VALUE");
            return ExitCode::from(2);
        }
        let Some(value) = value else {
            eprintln!("rtrun: -x {name}: {name} is not set in rtrun's environment (-x {name}=VALUE sets it)");
            return ExitCode::from(2);
        };
        job.env.push((name.to_string(), value));
    }
    if let Some(name) = args.initial_errhandler {
        job.env.push(("RT_INITIAL_ERRHANDLER".into(), name));
    }
    job.working_dir = args.wdir;
    job.output_dir = args.output_filename;
    if let Some(path) = &args.timeline {
        // Refused before anything starts, as any bad argument.
        if let Err(e) = std::fs::File::create(path) {
            eprintln!("rtrun: --timeline {}: {e}", path.display());
            return ExitCode::from(2);
        }
        job.timeline = true;
    }
    job.bind_to = match args.bind_to.as_deref() {
        Some("core") => rtrun::BindTo::Core,
        Some(_) => rtrun::BindTo::None,
        None => rtrun::BindTo::Auto,
    };
    job.report_bindings = args.report_bindings;
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
    match rtrun::check(&job) {
        Ok(warnings) => {
            for warning in warnings {
                eprintln!("rtrun: warning: {warning}");
            }
        }
        Err(e) => {
            eprintln!("rtrun: {e}");
            return ExitCode::from(2);
        }
    }
    let report = match rtrun::run(&job) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("rtrun: {e}");
            return ExitCode::from(2);
        }
    };
    eprint!("{}", report.summary());
    if let (Some(path), Some(timeline)) = (&args.timeline, &report.timeline) {
        match timeline.write_svg(path) {
            Ok(()) => eprintln!("rtrun: timeline drawn in {}", path.display()),
            Err(e) => eprintln!("rtrun: --timeline {}: {e}", path.display()),
        }
    }
    let strict = rtrun::Strict {
        deaths: args.strict_deaths,
        faults: args.strict_faults,
    };
    let status = report.exit_status_with(strict);
    let unfired = report.unfired().count();
    if args.strict_faults && unfired > 0 && status == 1 {
        eprintln!("rtrun: --strict-faults: {unfired} planned fault(s) did not fire: exit status 1");
    }
    ExitCode::from(status)
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

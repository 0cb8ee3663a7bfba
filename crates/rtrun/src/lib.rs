// SPDX-License-Identifier: MIT OR Apache-2.0
//! rtrun: the launcher of multi-process runthrough jobs on one host (semantics §4).
//!
//! [`run`] starts `size` processes of one program, each with the environment of
//! [`runthrough_net::launch`] (its rank, the job size, the control address, a fresh random job
//! secret), runs the rendezvous (every rank registers its listener over an authenticated
//! loopback control connection and gets the table of all addresses back), forwards the ranks'
//! output line by line, and watches them: a rank's exit is a *confirmed* failure that rtrun
//! tells every surviving rank at once. It injects faults on request ([`Kill`]), kills a rank
//! that its peers suspect (fenced: semantics §1; the kill makes the failure a confirmed one, and a
//! report from a rank that is itself fenced or gone is not acted on), stops the whole job at a
//! time-out or on [`Job::stop`], and returns a [`Report`] of who failed, how and when.
//!
//! Ranks may run under a command prefix ([`Job::rank_wrapper`], e.g. `ip netns exec NS` to put
//! one in another network namespace, or a debugger), and bind their listeners, and rtrun its
//! control listener, to the address [`Job::bind`] names instead of loopback.
//!
//! The ranks' Unix-domain sockets (semantics §4: ranks of one host connect through them unless
//! `RT_TRANSPORT=tcp`) live in a private directory rtrun creates for the job
//! ([`launch::ENV_SOCKET_DIR`]) and removes when the job ends ([`Report::socket_dir`]).
//!
//! Every rank runs in its own process group, so a stop kills whatever the ranks started too,
//! and a rank whose control connection closes halts: no process outlives its job.
//!
//! ```no_run
//! use std::time::Duration;
//! let mut job = rtrun::Job::new(4, "target/release/rtrun-check");
//! job.args = vec!["validate".into()];
//! job.kills.push("2@0.5".parse().unwrap());
//! job.timeout = Some(Duration::from_secs(30));
//! let report = rtrun::run(&job).unwrap();
//! assert!(report.success(), "{}", report.summary());
//! ```
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use runthrough_net::launch::{self, JobSecret, RankMessage};

mod check;
mod limits;
pub mod timeline;
pub use check::{check, find_program};
pub use timeline::Timeline;

/// One injected fault: `RANK@WHEN` in the one grammar of [`runthrough::fault`] (`2@0.5`,
/// `1@call:8`, `3@validate_global:2:1`, `1@all_reduce:3`, ...). Timed ones rtrun injects
/// itself (SIGKILL); the others it hands the rank in [`launch::ENV_FAULT`].
pub use runthrough::Fault as Kill;
pub use runthrough::Trigger;

/// How rtrun places the ranks of a job on the CPUs it may use (its own affinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BindTo {
    /// `--bind-to core` when the job's ranks do not outnumber the CPUs, else `--bind-to none`
    /// (a bound rank must have a core of its own). A rank started later (a spawn or a
    /// respawn) is bound to the CPU its world rank names if there is one, else left unbound.
    #[default]
    Auto,
    /// Rank r runs on the r-th CPU, round-robin over the CPUs however many ranks there are.
    Core,
    /// The ranks run where the kernel puts them.
    None,
}

/// A job to launch.
#[derive(Debug, Clone)]
pub struct Job {
    /// Number of ranks.
    pub size: u32,
    /// The program every rank runs.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Prefix every forwarded line with `[rank]`.
    pub tag_output: bool,
    /// Forward the ranks' output to this process's standard output and error.
    pub forward_output: bool,
    /// Keep the ranks' output lines in the report.
    pub capture_output: bool,
    /// Stop the job (killing every rank) after this long.
    pub timeout: Option<Duration>,
    /// Injected faults ([`check`] refuses a rank outside the job, or a step of the
    /// application's, which only the program can inject).
    pub kills: Vec<Kill>,
    /// Ranks to SIGSTOP after a delay (hang injection: their peers must fence them).
    pub stops: Vec<(u32, Duration)>,
    /// Heartbeat period and timeout for the ranks (default: the runtime's).
    pub heartbeat: Option<(Duration, Duration)>,
    /// More environment for every rank.
    pub env: Vec<(String, String)>,
    /// Where the ranks run: [`BindTo::Auto`] (the default) binds rank r to the r-th CPU rtrun
    /// may use while the ranks do not outnumber those CPUs, as mpirun binds to cores.
    pub bind_to: BindTo,
    /// `--report-bindings`: say on standard error which CPU each rank is bound to.
    pub report_bindings: bool,
    /// `--output-filename DIR`: each rank's lines also go to `DIR/rank.N/stdout` and
    /// `DIR/rank.N/stderr` (as Open MPI's option), created when the job starts.
    pub output_dir: Option<PathBuf>,
    /// The ranks' working directory (`--wdir`, mpirun's `-wdir`); `None`: rtrun's. A relative
    /// program path is found from rtrun's directory all the same.
    pub working_dir: Option<PathBuf>,
    /// Setting this stops the job (every rank killed), e.g. from a Ctrl-C handler.
    pub stop: Option<Arc<AtomicBool>>,
    /// Where the ranks' listeners and rtrun's control listener bind: an IP address,
    /// `route:HOST` or an interface name ([`runthrough_net::bind_address`]); `None`: loopback.
    /// Each rank resolves it in its own network namespace.
    pub bind: Option<String>,
    /// Command prefixes: rank `r` runs `wrapper... PROGRAM ARGS` (see [`Job::rank_wrapper`]).
    pub wrappers: BTreeMap<u32, Vec<OsString>>,
    /// Kill a rank its peers suspect (the default): that is how a suspicion becomes a
    /// confirmed failure under rtrun. Off, rtrun acts as a launcher without a kill channel
    /// (Hydra, srun): a suspect is only fenced by its peers and must halt by itself, and it
    /// fails in the survivors' detectors once a majority fenced it (tests of semantics §1's rule).
    pub kill_suspects: bool,
    /// Record the job's timeline ([`Report::timeline`], `rtrun --timeline FILE`): rtrun sets
    /// [`launch::ENV_TIMELINE`] for every rank, which then reports its events on its control
    /// connection. Off (the default), the variable is removed and the ranks report none.
    pub timeline: bool,
    /// Tell the live ranks when a rank's process ended (the default): a confirmed failure
    /// (docs/src/semantics.md §1). Off, nobody confirms an exit, as across hosts under srun or
    /// Hydra: a rank's end shows only as its closed connections (tests of finalize); then
    /// the ranks connect every pair at start (`RT_CONNECT=all`: with connections on first
    /// use, a rank learns of the death of a peer it never connected to from the notices).
    pub confirm_exits: bool,
    /// How many ranks the job may reach in all, its first ranks and those its ranks spawn
    /// (`--universe-size`, `MPI_UNIVERSE_SIZE`; `None`: twice the job's size). A spawn beyond
    /// it fails with `Error::Spawn` at every parent.
    pub universe_size: Option<u32>,
}

impl Job {
    /// A job of `size` ranks of `program`, output forwarded and captured, no time-out.
    pub fn new(size: u32, program: impl Into<PathBuf>) -> Self {
        Job {
            size,
            program: program.into(),
            args: Vec::new(),
            tag_output: true,
            forward_output: false,
            capture_output: true,
            timeout: None,
            kills: Vec::new(),
            stops: Vec::new(),
            heartbeat: None,
            env: Vec::new(),
            working_dir: None,
            output_dir: None,
            bind_to: BindTo::Auto,
            report_bindings: false,
            stop: None,
            bind: None,
            wrappers: BTreeMap::new(),
            kill_suspects: true,
            confirm_exits: true,
            timeline: false,
            universe_size: None,
        }
    }

    /// The job's universe: [`Job::universe_size`], or twice its size.
    pub fn universe(&self) -> u32 {
        self.universe_size
            .unwrap_or_else(|| self.size.saturating_mul(2))
            .max(self.size)
    }

    /// Runs `rank` as `wrapper[0] wrapper[1..] PROGRAM ARGS`, e.g.
    /// `job.rank_wrapper(3, ["ip", "netns", "exec", "host-b"])`. The wrapper must end by
    /// running the program in its place (`exec`), as `ip netns exec`, `nice` or `taskset` do:
    /// rtrun watches the process it started.
    pub fn rank_wrapper<S: Into<OsString>>(
        &mut self,
        rank: u32,
        wrapper: impl IntoIterator<Item = S>,
    ) -> &mut Self {
        let wrapper: Vec<OsString> = wrapper.into_iter().map(Into::into).collect();
        if wrapper.is_empty() {
            self.wrappers.remove(&rank);
        } else {
            self.wrappers.insert(rank, wrapper);
        }
        self
    }
}

/// How a rank's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status.
    Exited(i32),
    /// A signal killed it.
    Signaled(i32),
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Exited(code) if *code == launch::EXIT_FENCED => {
                write!(f, "halted as fenced (exit {code})")
            }
            Ending::Exited(code) if *code == launch::EXIT_INJECTED => {
                write!(
                    f,
                    "ended itself by its program's fault injection (exit {code})"
                )
            }
            Ending::Exited(code) if *code == launch::EXIT_NO_MAJORITY => {
                write!(f, "halted without a majority of its peers (exit {code})")
            }
            Ending::Exited(code) => write!(f, "exited with status {code}"),
            Ending::Signaled(signal) => {
                write!(f, "killed by signal {signal}{}", signal_name(*signal))
            }
        }
    }
}

/// Whether `code` is the exit status of a rank that halted by the fencing rule (semantics §1).
fn halted(code: i32) -> bool {
    code == launch::EXIT_FENCED || code == launch::EXIT_NO_MAJORITY
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => " (SIGHUP)",
        2 => " (SIGINT)",
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// What became of one rank.
#[derive(Debug, Clone)]
pub struct RankReport {
    /// The rank.
    pub rank: u32,
    /// How it ended (`None` if it was never started).
    pub ending: Option<Ending>,
    /// When it ended, from the start of the job.
    pub ended_at: Option<Duration>,
    /// A fault was injected into it (and it died of it).
    pub injected: bool,
    /// The rank that fenced it, if rtrun killed it for that.
    pub fenced_by: Option<u32>,
    /// Started by a spawn of these parents (world ranks), while the job ran.
    pub spawned_by: Option<Vec<u32>>,
    /// A spawned rank killed because its parents called the spawn off (a parent died during
    /// it, or the other ranks could not start): it ran none of the program and does not count
    /// against the job's exit status.
    pub cancelled: bool,
}

impl RankReport {
    /// Whether the rank ended as a fault-tolerant job allows: exit status 0, or a death
    /// ([`RankReport::died`]). A rank that exited non-zero by itself, or never started, did not.
    pub fn ok(&self) -> bool {
        self.ending == Some(Ending::Exited(0)) || self.died() || self.cancelled
    }

    /// Whether the rank died: killed by a signal (rtrun's kill, or any other: a crash,
    /// `raise(SIGKILL)`, the OOM killer), ended by its own program's fault injection
    /// ([`launch::EXIT_INJECTED`]), or halted by the fencing rule (as fenced, or without a
    /// majority).
    pub fn died(&self) -> bool {
        match self.ending {
            Some(Ending::Signaled(_)) => true,
            Some(Ending::Exited(code)) => code == launch::EXIT_INJECTED || halted(code),
            None => false,
        }
    }

    /// Whether the rank failed (ended any other way than exit status 0).
    pub fn failed(&self) -> bool {
        self.ending != Some(Ending::Exited(0))
    }
}

/// rtrun's exit status, as the table of `rtrun --help` and the guide's rtrun chapter say (the first row
/// that applies):
///
/// | case | status |
/// |---|---|
/// | interrupted (Ctrl-C, SIGTERM, SIGHUP) | 130 |
/// | `--timeout` reached | 124 |
/// | bad command line or setting (nothing started) | 2 |
/// | a rank exited non-zero by itself (bad arguments, "block lost", `MPI_Abort(comm, code)`) | that rank's status (the first such rank to end) |
/// | a rank never started | 1 |
/// | no rank finalized (every rank died) | 1 |
/// | `--strict-deaths`, and a rank died | 1 |
/// | `--strict-faults`, and a planned fault did not fire | 1 |
/// | at least one rank exited 0 and every other rank died (a signal, an rtrun kill, fencing, the no-majority halt) | 0: each death is in the report |
pub const EXIT_STATUS_TABLE: &str = "\
EXIT STATUS (the first row that applies):
  130   interrupted (Ctrl-C, SIGTERM, SIGHUP)
  124   --timeout reached
  CODE  a rank called MPI_Abort(comm, CODE) (or Universe::abort): rtrun ended every rank
  2     bad command line or setting (nothing was started)
  CODE  a rank exited non-zero by itself (bad arguments, a lost block):
        the status of the first such rank to end
  1     a rank never started, or no rank finalized (every rank died), or --strict-deaths and
        a rank died, or --strict-faults and a planned fault (--kill, --stop) did not fire
  0     at least one rank exited 0 and every other rank died (a signal, an rtrun kill,
        fencing, the no-majority halt): a death the job survived does not fail it, as under
        mpiexec --with-ft ulfm; each death is in the report";

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A rank ended the job (`MPI_Abort`, [`runthrough::Universe::abort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abort {
    /// The rank that aborted (the first, if several did).
    pub rank: u32,
    /// Its error code (1..=255): the job's exit status.
    pub code: i32,
}

/// A fault of the job's plan: a kill ([`Job::kills`]) or a stop ([`Job::stops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedFault {
    /// `--kill RANK@WHEN`: SIGKILL from rtrun at a time, or the rank's own death at a point
    /// of its calls.
    Kill(Kill),
    /// `--stop RANK@SECS`: SIGSTOP from rtrun this long after the start.
    Stop {
        /// The rank.
        rank: u32,
        /// When.
        after: Duration,
    },
}

impl PlannedFault {
    /// The rank it targets.
    pub fn rank(&self) -> u32 {
        match self {
            PlannedFault::Kill(kill) => kill.rank,
            PlannedFault::Stop { rank, .. } => *rank,
        }
    }
}

impl std::fmt::Display for PlannedFault {
    /// As the command line takes it: `--kill 1@call:8`, `--stop 2@0.5s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlannedFault::Kill(kill) => write!(f, "--kill {kill}"),
            PlannedFault::Stop { rank, after } => {
                let stop = Kill {
                    rank: *rank,
                    trigger: Trigger::After(*after),
                };
                write!(f, "--stop {stop}")
            }
        }
    }
}

/// When a planned fault fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    /// From the start of the job: when rtrun sent its signal, or when the rank told rtrun it
    /// was about to kill itself.
    pub at: Duration,
    /// For a fault the rank injects itself (a call, agreement, collective or revocation
    /// point): the rank's communication call it fired in, 1 = the first. `None` for rtrun's
    /// own signals.
    pub call: Option<u64>,
}

/// What became of one planned fault: whether it fired, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultOutcome {
    /// The fault.
    pub fault: PlannedFault,
    /// When it fired; `None`: it did not (its rank had ended before, or never reached that
    /// point of its calls, or died of another fault first).
    pub fired: Option<Fired>,
}

impl FaultOutcome {
    /// One line for the report; `rank` is what became of the fault's rank.
    fn describe(&self, rank: Option<&RankReport>) -> String {
        match self.fired {
            Some(Fired { at, call }) => {
                let call = call.map_or(String::new(), |c| {
                    format!(", in its communication call {c}")
                });
                format!("{}: fired at {:.3} s{call}", self.fault, at.as_secs_f64())
            }
            None => {
                let why = match rank.and_then(|r| r.ending.map(|e| (e, r.ended_at))) {
                    Some((ending, Some(at))) => format!(
                        " (rank {} {ending} at {:.3} s)",
                        self.fault.rank(),
                        at.as_secs_f64()
                    ),
                    Some((ending, None)) => format!(" (rank {} {ending})", self.fault.rank()),
                    None => String::new(),
                };
                format!("{} did not fire{why}", self.fault)
            }
        }
    }
}

/// Which outcomes fail a job that would otherwise succeed ([`Report::exit_status_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Strict {
    /// `--strict-deaths`: any death fails the job.
    pub deaths: bool,
    /// `--strict-faults`: a planned fault that did not fire fails the job.
    pub faults: bool,
}

/// What happened to a job.
#[derive(Debug, Clone)]
pub struct Report {
    /// A rank aborted the job; rtrun then ended every rank.
    pub aborted: Option<Abort>,
    /// Every rank, in order.
    pub ranks: Vec<RankReport>,
    /// Every planned fault, the kills ([`Job::kills`]) then the stops ([`Job::stops`]) in
    /// the job's order, and whether it fired.
    pub faults: Vec<FaultOutcome>,
    /// The captured output lines, in arrival order (when [`Job::capture_output`]).
    pub lines: Vec<(u32, Stream, String)>,
    /// The job was stopped at its time-out.
    pub timed_out: bool,
    /// The job was stopped by [`Job::stop`].
    pub interrupted: bool,
    /// Control connections refused (a wrong or missing job secret).
    pub refused_connections: u32,
    /// How long the job ran.
    pub elapsed: Duration,
    /// The directory of the ranks' Unix sockets ([`launch::ENV_SOCKET_DIR`]), removed by now.
    pub socket_dir: Option<PathBuf>,
    /// What happened to each rank, and when, with [`Job::timeline`] ([`Timeline::svg`] draws
    /// it).
    pub timeline: Option<Timeline>,
}

impl Report {
    /// Whether the job succeeded: [`Report::exit_status`] is 0 without `--strict-deaths`.
    pub fn success(&self) -> bool {
        self.exit_status(false) == 0
    }

    /// rtrun's exit status for this job ([`EXIT_STATUS_TABLE`]); `strict_deaths` makes any
    /// death a failure.
    pub fn exit_status(&self, strict_deaths: bool) -> u8 {
        self.exit_status_with(Strict {
            deaths: strict_deaths,
            faults: false,
        })
    }

    /// The planned faults that did not fire.
    pub fn unfired(&self) -> impl Iterator<Item = &FaultOutcome> {
        self.faults.iter().filter(|f| f.fired.is_none())
    }

    /// rtrun's exit status for this job ([`EXIT_STATUS_TABLE`]), with `--strict-deaths` and
    /// `--strict-faults` as `strict` says.
    pub fn exit_status_with(&self, strict: Strict) -> u8 {
        let strict_deaths = strict.deaths;
        if self.interrupted {
            return 130;
        }
        if self.timed_out {
            return 124;
        }
        if let Some(abort) = self.aborted {
            return u8::try_from(abort.code)
                .ok()
                .filter(|&c| c != 0)
                .unwrap_or(1);
        }
        let by_itself = self
            .ranks
            .iter()
            .filter(|r| r.ending.is_some() && !r.ok())
            .min_by_key(|r| (r.ended_at, r.rank));
        if let Some(Ending::Exited(code)) = by_itself.and_then(|r| r.ending) {
            return u8::try_from(code).ok().filter(|&c| c != 0).unwrap_or(1);
        }
        let never_started = self.ranks.iter().any(|r| r.ending.is_none());
        let finalized = self
            .ranks
            .iter()
            .any(|r| r.ending == Some(Ending::Exited(0)));
        let died = self.ranks.iter().any(|r| r.died() && !r.cancelled);
        let unfired = strict.faults && self.unfired().next().is_some();
        if never_started || !finalized || (strict_deaths && died) || unfired {
            1
        } else {
            0
        }
    }

    /// The standard output lines of `rank`.
    pub fn stdout_of(&self, rank: u32) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(r, s, _)| *r == rank && *s == Stream::Stdout)
            .map(|(_, _, line)| line.as_str())
            .collect()
    }

    /// A human-readable account: who failed, how and when, and every planned fault: when it
    /// fired (and in which call), or a warning that it did not.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let exited_ok = self.ranks.iter().filter(|r| !r.failed()).count();
        out.push_str(&format!(
            "rtrun: {} ranks, {} exited 0, {:.3} s{}{}\n",
            self.ranks.len(),
            exited_ok,
            self.elapsed.as_secs_f64(),
            if self.timed_out { ", TIMED OUT" } else { "" },
            if self.interrupted {
                ", INTERRUPTED"
            } else {
                ""
            },
        ));
        for rank in &self.ranks {
            if let Some(parents) = &rank.spawned_by {
                out.push_str(&format!(
                    "rtrun: rank {} was spawned by ranks {parents:?}{}\n",
                    rank.rank,
                    if rank.cancelled {
                        " and killed unstarted: the spawn was called off"
                    } else {
                        ""
                    }
                ));
            }
        }
        for rank in self.ranks.iter().filter(|r| r.failed() && !r.cancelled) {
            let how = rank
                .ending
                .map_or("never started".to_string(), |e| e.to_string());
            let why = match (rank.injected, rank.fenced_by) {
                (true, _) => ", injected",
                (false, Some(_)) => ", fenced",
                _ => "",
            };
            let by = rank
                .fenced_by
                .map_or(String::new(), |q| format!(" by rank {q}"));
            let at = rank
                .ended_at
                .map_or(String::new(), |t| format!(" at {:.3} s", t.as_secs_f64()));
            out.push_str(&format!("rtrun: rank {}: {how}{why}{by}{at}\n", rank.rank));
        }
        for fault in &self.faults {
            let rank = self.ranks.get(fault.fault.rank() as usize);
            let warning = if fault.fired.is_none() {
                "warning: "
            } else {
                ""
            };
            out.push_str(&format!("rtrun: {warning}{}\n", fault.describe(rank)));
        }
        if let Some(Abort { rank, code }) = self.aborted {
            out.push_str(&format!(
                "rtrun: rank {rank} aborted the job (MPI_Abort, error code {code}): every rank \
                 was ended\n"
            ));
        }
        if self.refused_connections > 0 {
            out.push_str(&format!(
                "rtrun: refused {} control connection(s) without the job secret\n",
                self.refused_connections
            ));
        }
        out
    }
}

enum Event {
    Registered(u32, String, TcpStream),
    Refused,
    Reported(RankReport),
    Aborted(Abort),
    /// A rank's planned fault fired (its trigger's text, the call it fired in).
    Fired(u32, String, u64),
    /// A registered rank's control connection ended.
    ControlClosed,
    /// A rank asks for new ranks.
    Spawn(u32, launch::SpawnLine),
    /// A parent's verdict on a spawn (its key): run its ranks, or kill them.
    Verdict((u64, u32), bool),
    /// A rank's event for the timeline, and when rtrun read it.
    Timeline(u32, Duration, runthrough_net::timeline::RankEvent),
    Exited(u32, ExitStatus),
}

struct RankState {
    pid: Option<rustix::process::Pid>,
    control: Option<TcpStream>,
    address: Option<String>,
    report: RankReport,
    kill_planned_in_operation: bool,
    /// When rtrun started its process.
    started_at: Option<Duration>,
}

/// `rank` said its planned fault `trigger` fired in its `call`-th call: the first planned
/// kill of that rank and trigger that has not fired yet did (a line that matches none, e.g.
/// from an `RT_FAULT` of rtrun's environment, is not in the plan).
fn record_fired(outcomes: &mut [FaultOutcome], rank: u32, trigger: &str, call: u64, at: Duration) {
    let Ok(trigger) = Trigger::parse_with(trigger, runthrough::fault::BareNumber::Seconds) else {
        return;
    };
    let planned = PlannedFault::Kill(Kill { rank, trigger });
    if let Some(outcome) = outcomes
        .iter_mut()
        .find(|o| o.fault == planned && o.fired.is_none())
    {
        outcome.fired = Some(Fired {
            at,
            call: Some(call),
        });
    }
}

/// Each rank's report and when rtrun started it (for the timeline).
fn ranks_started(ranks: &[RankState]) -> Vec<(RankReport, Option<Duration>)> {
    ranks
        .iter()
        .map(|r| (r.report.clone(), r.started_at))
        .collect()
}

fn kill_group(pid: rustix::process::Pid) {
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

fn stop_group(pid: rustix::process::Pid) {
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::STOP);
}

fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signaled(signal),
        (None, None) => Ending::Exited(-1),
    }
}

/// Forwards one stream of a rank line by line: to rtrun's own stream (`[rank] ` first with
/// `--tag-output`), to `DIR/rank.N/stdout|stderr` with `--output-filename DIR`, and into the
/// report's lines when captured. Bytes that are not UTF-8 are forwarded as U+FFFD, never a
/// reason to stop reading (a rank whose pipe is not read would block); a last line without its
/// `\n` is forwarded too.
fn forward(
    rank: u32,
    stream: Stream,
    source: impl Read + Send + 'static,
    job: &Job,
    lines: Arc<Mutex<Vec<(u32, Stream, String)>>>,
) -> io::Result<JoinHandle<()>> {
    let (tag, print, keep) = (job.tag_output, job.forward_output, job.capture_output);
    let mut file = match &job.output_dir {
        Some(dir) => {
            let dir = dir.join(format!("rank.{rank}"));
            std::fs::create_dir_all(&dir)?;
            let name = match stream {
                Stream::Stdout => "stdout",
                Stream::Stderr => "stderr",
            };
            Some(io::BufWriter::new(std::fs::File::create(dir.join(name))?))
        }
        None => None,
    };
    std::thread::Builder::new()
        .name(format!("rtrun-out-{rank}"))
        .spawn(move || {
            let mut source = BufReader::new(source);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match source.read_until(b'\n', &mut bytes) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if bytes.last() == Some(&b'\n') {
                    bytes.pop();
                }
                let line = String::from_utf8_lossy(&bytes).into_owned();
                if let Some(file) = file.as_mut() {
                    let _ = writeln!(file, "{line}").and_then(|()| file.flush());
                }
                if print {
                    let text = if tag {
                        format!("[{rank}] {line}\n")
                    } else {
                        format!("{line}\n")
                    };
                    let _ = match stream {
                        Stream::Stdout => io::stdout().lock().write_all(text.as_bytes()),
                        Stream::Stderr => io::stderr().lock().write_all(text.as_bytes()),
                    };
                }
                if keep {
                    lines
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((rank, stream, line));
                }
            }
        })
}

/// The control side: accepts and authenticates registrations, then relays each rank's reports.
fn serve_control(
    listener: TcpListener,
    secret: JobSecret,
    size: u32,
    start: Instant,
    events: mpsc::Sender<Event>,
) {
    for incoming in listener.incoming() {
        let Ok(mut stream) = incoming else { continue };
        // Failure notices are small writes that must not wait for a delayed ACK (Nagle).
        let _ = stream.set_nodelay(true);
        let (secret, events) = (secret.clone(), events.clone());
        std::thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let registration = launch::accept_registration(&mut stream, &secret, size);
            let registration = match registration {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    eprintln!("rtrun: refused a control connection: {e}");
                    let _ = events.send(Event::Refused);
                    return;
                }
                // A rank that died while registering, or a port scan: nothing to report.
                Err(_) => return,
            };
            let _ = stream.set_read_timeout(None);
            let Ok(reader) = stream.try_clone() else {
                return;
            };
            let rank = registration.rank;
            if events
                .send(Event::Registered(rank, registration.address, stream))
                .is_err()
            {
                return;
            }
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                let event = match launch::parse_report(&line) {
                    Some(RankMessage::Suspect(peer)) => Event::Reported(RankReport {
                        rank: peer,
                        ending: None,
                        ended_at: None,
                        injected: false,
                        fenced_by: Some(rank),
                        spawned_by: None,
                        cancelled: false,
                    }),
                    Some(RankMessage::Spawn(line)) => Event::Spawn(rank, line),
                    Some(RankMessage::Verdict { key, run }) => Event::Verdict(key, run),
                    Some(RankMessage::Abort(code)) => Event::Aborted(Abort { rank, code }),
                    Some(RankMessage::Fired { trigger, call }) => Event::Fired(rank, trigger, call),
                    Some(RankMessage::Event(event)) => {
                        Event::Timeline(rank, start.elapsed(), event)
                    }
                    None => continue,
                };
                if events.send(event).is_err() {
                    break;
                }
            }
            let _ = events.send(Event::ControlClosed);
        });
    }
}

/// How long the ranks of a spawn have to register before the spawn fails.
const SPAWN_DEADLINE: Duration = Duration::from_secs(60);

/// A spawn the job's ranks asked for (the launcher protocol's steps 5 to 7).
struct Spawning {
    key: (u64, u32),
    parents: Vec<u32>,
    children: std::ops::Range<u32>,
    /// Its processes were started (or tried).
    started: bool,
    /// The root whose request names the programs, while it has not come.
    root: Option<u32>,
    /// Parents waiting for the answer.
    asking: Vec<u32>,
    /// The answer, once every new rank registered or died (or they could not start).
    outcome: Option<Result<(u32, u32), String>>,
    /// The parents' verdict: run the new ranks, or kill them.
    verdict: Option<bool>,
    asked_at: Instant,
}

impl Spawning {
    fn new(key: (u64, u32), parents: Vec<u32>) -> Self {
        Spawning {
            key,
            parents,
            children: 0..0,
            started: false,
            root: None,
            asking: Vec::new(),
            outcome: None,
            verdict: None,
            asked_at: Instant::now(),
        }
    }

    /// Once every new rank registered or died: each gets its table, every other live rank
    /// their addresses, and the parents the answer. A spawn whose ranks do not register in
    /// time fails. A spawn whose parents all died before their verdict is called off.
    fn advance(&mut self, ranks: &mut [RankState]) {
        let root_gone = self.root.is_some_and(|r| {
            ranks
                .get(r as usize)
                .is_none_or(|s| s.report.ending.is_some())
        });
        if !self.started && self.outcome.is_none() && root_gone {
            self.outcome = Some(Err(format!(
                "the spawn's root (world rank {}) ended before it gave the programs",
                self.root.unwrap_or_default()
            )));
            self.answer(ranks);
        }
        if self.started && self.outcome.is_none() {
            let children = &ranks[self.children.start as usize..self.children.end as usize];
            let ready = children
                .iter()
                .all(|r| r.address.is_some() || r.report.ending.is_some());
            if ready {
                self.complete(ranks);
            } else if self.asked_at.elapsed() > SPAWN_DEADLINE {
                self.outcome = Some(Err(format!(
                    "the new ranks did not register within {} s",
                    SPAWN_DEADLINE.as_secs()
                )));
                self.verdict = Some(false);
                self.carry_out(ranks);
                self.answer(ranks);
            }
        }
        let orphaned = self
            .parents
            .iter()
            .all(|&p| ranks[p as usize].report.ending.is_some());
        if self.verdict.is_none() && orphaned {
            self.verdict = Some(false);
            self.carry_out(ranks);
        }
    }

    fn complete(&mut self, ranks: &mut [RankState]) {
        let end = self.children.end as usize;
        let table: Vec<Option<String>> = ranks[..end]
            .iter()
            .map(|r| {
                r.report
                    .ending
                    .is_none()
                    .then(|| r.address.clone())
                    .flatten()
            })
            .collect();
        let table_line = launch::table_line(&table);
        let mut joined = String::new();
        for rank in self.children.clone() {
            if let Some(address) = &table[rank as usize] {
                joined.push_str(&launch::joined_line(rank, address));
            }
        }
        for (rank, state) in ranks.iter_mut().enumerate() {
            let line = if self.children.contains(&(rank as u32)) {
                &table_line
            } else {
                &joined
            };
            if let Some(control) = state.control.as_mut() {
                let _ = control.write_all(line.as_bytes());
            }
        }
        self.outcome = Some(Ok((self.children.start, self.children.len() as u32)));
        self.answer(ranks);
        if self.verdict.is_some() {
            self.carry_out(ranks);
        }
    }

    /// Sends the outcome to every parent waiting for it.
    fn answer(&mut self, ranks: &mut [RankState]) {
        let outcome = self.outcome.clone().expect("answered once decided");
        for parent in std::mem::take(&mut self.asking) {
            reply_spawn(ranks, parent, self.key, &outcome);
        }
    }

    /// The verdict: `run` to each new rank (after its table), or their processes killed.
    fn carry_out(&self, ranks: &mut [RankState]) {
        let Some(run) = self.verdict else { return };
        for rank in self.children.clone() {
            let state = &mut ranks[rank as usize];
            if state.report.ending.is_some() {
                continue;
            }
            if run {
                if self.outcome.is_some() {
                    if let Some(control) = state.control.as_mut() {
                        let _ = control.write_all(b"run\n");
                    }
                }
            } else {
                state.report.cancelled = true;
                if let Some(pid) = state.pid {
                    kill_group(pid);
                }
            }
        }
    }
}

/// Sends `parent` the answer to spawn `key`.
fn reply_spawn(
    ranks: &mut [RankState],
    parent: u32,
    key: (u64, u32),
    outcome: &Result<(u32, u32), String>,
) {
    if let Some(control) = ranks
        .get_mut(parent as usize)
        .and_then(|s| s.control.as_mut())
    {
        let _ = control.write_all(launch::spawn_reply_line(key.0, key.1, outcome).as_bytes());
    }
}

/// The request that says what a spawn starts (the first one for the job's own program, the
/// root's for given programs): its world ranks (the next free ones, within the universe) and
/// their processes. Sets `spawn.outcome` when they cannot be started.
fn start_spawn(
    launcher: &Launcher<'_>,
    spawn: &mut Spawning,
    from: u32,
    line: &launch::SpawnLine,
    ranks: &mut Vec<RankState>,
    forwarders: &mut Vec<JoinHandle<()>>,
) {
    spawn.started = true;
    let first = ranks.len() as u32;
    spawn.children = first..first;
    let universe = launcher.job.universe();
    let valid_parents = !line.parents.is_empty()
        && line.parents.contains(&from)
        && line.parents.iter().all(|&p| (p as usize) < ranks.len());
    // Each process: its program (`None`: the job's), and what it gets as InterComm::args.
    let processes: Vec<(Option<&launch::SpawnProgram>, Vec<String>)> = match &line.what {
        launch::SpawnWhat::Job { count, args } => {
            (0..*count).map(|_| (None, args.clone())).collect()
        }
        launch::SpawnWhat::Programs(programs) => programs
            .iter()
            .flat_map(|p| {
                (0..p.count).map(move |_| (Some(p), p.argv[1.min(p.argv.len())..].to_vec()))
            })
            .collect(),
        launch::SpawnWhat::Root(_) => Vec::new(),
    };
    let bad_program = match &line.what {
        launch::SpawnWhat::Programs(programs) => programs
            .iter()
            .any(|p| p.argv.first().is_none_or(String::is_empty)),
        _ => false,
    };
    if processes.is_empty() || !valid_parents || bad_program {
        spawn.outcome = Some(Err(format!(
            "a spawn request from rank {from} that starts nothing (refused at its root, or \
             malformed)"
        )));
        return;
    }
    let count = processes.len() as u32;
    if u64::from(first) + u64::from(count) > u64::from(universe) {
        spawn.outcome = Some(Err(format!(
            "the job's universe holds {universe} ranks and {first} are taken, {count} more asked \
             for (rtrun --universe-size sets it)"
        )));
        return;
    }
    spawn.children = first..first + count;
    let info = launch::ParentInfo {
        context: line.context,
        parents: line.parents.clone(),
        first,
        count,
    };
    let unstarted = |rank: u32| RankState {
        pid: None,
        control: None,
        address: None,
        report: RankReport {
            rank,
            ending: None,
            ended_at: None,
            injected: false,
            fenced_by: None,
            spawned_by: Some(line.parents.clone()),
            cancelled: false,
        },
        kill_planned_in_operation: false,
        started_at: None,
    };
    for (rank, (program, args)) in spawn.children.clone().zip(&processes) {
        let env = [
            (launch::ENV_PARENT, info.value()),
            (launch::ENV_SPAWN_ARGS, launch::args_word(args)),
        ];
        let mut state = unstarted(rank);
        let triggers = launcher.triggers(rank);
        state.kill_planned_in_operation = triggers.is_some();
        let started = launcher.start_rank(rank, triggers, &env, *program, &mut state, forwarders);
        if state.pid.is_none() {
            // Never started: it ends here, as far as the report goes.
            state.report.ending = Some(Ending::Exited(-1));
            state.report.cancelled = true;
        }
        ranks.push(state);
        if let Err(e) = started {
            let what = program.map_or("the job's program".to_string(), |p| {
                format!("`{}`", p.argv[0])
            });
            spawn.outcome = Some(Err(format!(
                "rank {rank} could not be started ({what}): {e}"
            )));
            spawn.verdict = Some(false);
            break;
        }
    }
    if spawn.outcome.is_some() {
        // The ranks not reached keep their world ranks (never reused), ended unstarted.
        for rank in ranks.len() as u32..spawn.children.end {
            let mut state = unstarted(rank);
            state.report.ending = Some(Ending::Exited(-1));
            state.report.cancelled = true;
            ranks.push(state);
        }
        spawn.carry_out(ranks);
    }
}

/// What starting a rank's process needs, the same for every rank of the job (those it starts
/// with and those its ranks spawn).
struct Launcher<'a> {
    job: &'a Job,
    program: PathBuf,
    control_address: String,
    secret: JobSecret,
    socket_dir: Option<PathBuf>,
    cpus: Option<(rustix::thread::CpuSet, Vec<usize>)>,
    events_tx: mpsc::Sender<Event>,
    lines: Arc<Mutex<Vec<(u32, Stream, String)>>>,
    start: Instant,
    /// The planned faults each rank gets at its start (`RT_FAULT`), spawned ranks included.
    faults: BTreeMap<u32, Vec<Trigger>>,
}

impl Launcher<'_> {
    /// Why [`BindTo::Auto`] or `None` left a rank unbound (for `--report-bindings`).
    fn unbound_because(&self) -> String {
        if self.job.bind_to == BindTo::None {
            return "--bind-to none".to_string();
        }
        let cpus = rustix::thread::sched_getaffinity(None).map_or(0, |set| set.count());
        format!(
            "{} ranks on {cpus} CPUs: ranks are bound while there is a CPU for each",
            self.job.size
        )
    }

    /// Rank `rank`'s planned faults, as `RT_FAULT` says them.
    fn triggers(&self, rank: u32) -> Option<String> {
        self.faults.get(&rank).map(|t| Trigger::format_list(t))
    }

    /// Starts world rank `rank`'s process (`triggers`: its planned faults, `env`: variables of
    /// its own), with its output forwarded and its end reported as [`Event::Exited`].
    fn start_rank(
        &self,
        rank: u32,
        triggers: Option<String>,
        env: &[(&str, String)],
        spawned: Option<&launch::SpawnProgram>,
        state: &mut RankState,
        forwarders: &mut Vec<JoinHandle<()>>,
    ) -> io::Result<()> {
        let (job, program) = (self.job, &self.program);
        let mut command = match (spawned, job.wrappers.get(&rank)) {
            (Some(spawned), _) => {
                let mut command = Command::new(&spawned.argv[0]);
                command.args(&spawned.argv[1..]);
                command
            }
            (None, Some(wrapper)) => {
                let mut command = Command::new(&wrapper[0]);
                command.args(&wrapper[1..]).arg(program).args(&job.args);
                command
            }
            (None, None) => {
                let mut command = Command::new(program);
                command.args(&job.args);
                command
            }
        };
        match spawned.and_then(|s| s.wdir.as_ref()) {
            Some(dir) => {
                command.current_dir(dir);
            }
            None => {
                if let Some(dir) = &job.working_dir {
                    command.current_dir(dir);
                }
            }
        }
        command
            .env(launch::ENV_RANK, rank.to_string())
            .env(launch::ENV_SIZE, job.size.to_string())
            .env(launch::ENV_UNIVERSE, job.universe().to_string())
            .env(launch::ENV_CONTROL, &self.control_address)
            .env(launch::ENV_SECRET, self.secret.to_hex())
            .envs(
                self.socket_dir
                    .iter()
                    .map(|dir| (launch::ENV_SOCKET_DIR, dir)),
            )
            .env_remove(launch::ENV_PARENT)
            .env_remove(launch::ENV_SPAWN_ARGS)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some((period, timeout)) = job.heartbeat {
            command.env(
                launch::ENV_HEARTBEAT,
                format!("{}:{}", period.as_millis(), timeout.as_millis()),
            );
        }
        if let Some(bind) = &job.bind {
            command.env(launch::ENV_BIND, bind);
        }
        if let Some(triggers) = triggers {
            command.env(launch::ENV_FAULT, triggers);
        }
        for (key, value) in &job.env {
            command.env(key, value);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        if !job.confirm_exits {
            // A rank learns of the death of a peer it never connected to from rtrun's notice:
            // without notices every pair connects at start, as across hosts.
            command.env(runthrough::settings::Setting::Connect.name(), "all");
        }
        if job.timeline {
            command.env(launch::ENV_TIMELINE, "1");
        } else {
            command.env_remove(launch::ENV_TIMELINE);
        }
        // --bind-to core: the child inherits the affinity of the thread that spawns it, so
        // this thread takes the rank's CPU for the spawn alone (no unsafe pre-exec hook).
        let core = self
            .cpus
            .as_ref()
            .filter(|(_, list)| !list.is_empty())
            .and_then(|(_, list)| match job.bind_to {
                BindTo::Core => Some(list[rank as usize % list.len()]),
                _ => list.get(rank as usize).copied(),
            });
        if core.is_none() && job.report_bindings {
            eprintln!("rtrun: rank {rank} not bound ({})", self.unbound_because());
        }
        if let Some(cpu) = core {
            let mut one = rustix::thread::CpuSet::new();
            one.set(cpu);
            rustix::thread::sched_setaffinity(None, &one).map_err(|e| {
                io::Error::other(format!(
                    "--bind-to core: binding rank {rank} to CPU {cpu}: {e}"
                ))
            })?;
            if job.report_bindings {
                eprintln!("rtrun: rank {rank} bound to CPU {cpu}");
            }
        }
        let spawned = command.spawn();
        if let Some((allowed, _)) = &self.cpus {
            // Failing, rtrun's own threads stay on one CPU: slower, not wrong.
            let _ = rustix::thread::sched_setaffinity(None, allowed);
        }
        let mut child = spawned?;
        let pid = rustix::process::Pid::from_child(&child);
        state.pid = Some(pid);
        state.started_at = Some(self.start.elapsed());
        // A thread that cannot be made (the host's limits, checked above, moved) ends the
        // start-up like a rank that cannot be started: the started ranks are ended.
        if let Some(out) = child.stdout.take() {
            forwarders.push(forward(rank, Stream::Stdout, out, job, self.lines.clone())?);
        }
        if let Some(err) = child.stderr.take() {
            forwarders.push(forward(rank, Stream::Stderr, err, job, self.lines.clone())?);
        }
        let events_tx = self.events_tx.clone();
        std::thread::Builder::new()
            .name(format!("rtrun-wait-{rank}"))
            .spawn(move || {
                if let Ok(status) = child.wait() {
                    let _ = events_tx.send(Event::Exited(rank, status));
                }
            })
            .map(drop)
    }
}

/// Runs `job` to its end and reports.
///
/// # Errors
/// `InvalidInput` with [`check`]'s message for a job that must not start; an I/O error when the
/// control listener cannot be bound or the first rank cannot be started; ranks that fail later
/// are reported, not errors.
pub fn run(job: &Job) -> io::Result<Report> {
    check(job).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Some(dir) = &job.output_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("--output-filename {}: {e}", dir.display()),
            )
        })?;
    }
    limits::check_and_raise(job.size)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let size = job.size;
    let secret = JobSecret::random();
    let control_ip = match &job.bind {
        Some(spec) => runthrough_net::bind_address(spec)?,
        None => std::net::Ipv4Addr::LOCALHOST.into(),
    };
    let listener = TcpListener::bind((control_ip, 0))?;
    let control_address = listener.local_addr()?.to_string();
    // The ranks' Unix sockets (without it they make directories of their own).
    let socket_dir = launch::create_socket_dir().ok();
    let (events_tx, events) = mpsc::channel();
    let start = Instant::now();
    {
        let (secret, events_tx) = (secret.clone(), events_tx.clone());
        let universe = job.universe();
        std::thread::spawn(move || serve_control(listener, secret, universe, start, events_tx));
    }
    let lines = Arc::new(Mutex::new(Vec::new()));
    let mut forwarders = Vec::new();
    // The timeline's events as they come (the ranks' own, and suspicions).
    let mut timeline: Vec<timeline::Entry> = Vec::new();
    let mut ranks: Vec<RankState> = (0..size)
        .map(|rank| RankState {
            pid: None,
            control: None,
            address: None,
            report: RankReport {
                rank,
                ending: None,
                ended_at: None,
                injected: false,
                fenced_by: None,
                spawned_by: None,
                cancelled: false,
            },
            kill_planned_in_operation: false,
            started_at: None,
        })
        .collect();
    // The plan's outcomes; the timed kills and stops point into it.
    let mut outcomes: Vec<FaultOutcome> = job
        .kills
        .iter()
        .map(|&kill| PlannedFault::Kill(kill))
        .chain(
            job.stops
                .iter()
                .map(|&(rank, after)| PlannedFault::Stop { rank, after }),
        )
        .map(|fault| FaultOutcome { fault, fired: None })
        .collect();
    let mut timed_kills: Vec<(Duration, u32, usize)> = Vec::new();
    let mut faults: BTreeMap<u32, Vec<Trigger>> = BTreeMap::new();
    for (index, kill) in job.kills.iter().enumerate() {
        match kill.trigger {
            Trigger::After(delay) => timed_kills.push((delay, kill.rank, index)),
            trigger => faults.entry(kill.rank).or_default().push(trigger),
        }
    }
    timed_kills.sort_by(|a, b| b.cmp(a));
    let mut timed_stops: Vec<(Duration, u32, usize)> = job
        .stops
        .iter()
        .enumerate()
        .map(|(index, &(rank, delay))| (delay, rank, job.kills.len() + index))
        .collect();
    timed_stops.sort_by(|a, b| b.cmp(a));

    let mut started_error = None;
    // With --wdir, a relative path (`./hello`) must still name the program rtrun checked.
    let program = match &job.working_dir {
        Some(_) if job.program.is_relative() && job.program.components().count() > 1 => {
            std::env::current_dir()?.join(&job.program)
        }
        _ => {
            check::in_this_directory(job.program.as_os_str()).unwrap_or_else(|| job.program.clone())
        }
    };
    let cpus = if job.bind_to == BindTo::None {
        None
    } else {
        let allowed = rustix::thread::sched_getaffinity(None)?;
        let list: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| allowed.is_set(c))
            .collect();
        let fits = job.size as usize <= list.len();
        (job.bind_to == BindTo::Core || fits).then_some((allowed, list))
    };
    let launcher = Launcher {
        job,
        program,
        control_address,
        secret: secret.clone(),
        socket_dir: socket_dir.clone(),
        cpus,
        events_tx: events_tx.clone(),
        lines: lines.clone(),
        start,
        faults,
    };
    for rank in 0..size {
        let triggers = launcher.triggers(rank);
        ranks[rank as usize].kill_planned_in_operation = triggers.is_some();
        let state = &mut ranks[rank as usize];
        if let Err(e) = launcher.start_rank(rank, triggers, &[], None, state, &mut forwarders) {
            started_error = Some(e);
            break;
        }
    }
    drop(events_tx);

    let mut table_sent = false;
    let mut exited = 0u32;
    let mut refused = 0u32;
    let mut started = ranks.iter().filter(|r| r.pid.is_some()).count() as u32;
    let mut spawns: Vec<Spawning> = Vec::new();
    let (mut timed_out, mut interrupted) = (false, false);
    let mut aborted = None;
    // Registered ranks whose control connection is still open: a `fired` line may still be
    // on its way after the rank's exit was seen.
    let mut open_controls = 0u32;
    if started_error.is_some() {
        for r in ranks.iter().filter_map(|r| r.pid) {
            kill_group(r);
        }
    }
    while exited < started {
        match events.recv_timeout(Duration::from_millis(10)) {
            Ok(Event::Registered(rank, address, stream)) => {
                open_controls += 1;
                // Past the job's first ranks, only a spawned rank rtrun started registers.
                let Some(state) = ranks.get_mut(rank as usize).filter(|s| s.pid.is_some()) else {
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    continue;
                };
                if state.address.is_some()
                    || state.report.ending.is_some()
                    || (table_sent && rank < size)
                {
                    // A duplicate or late registration: dropped, and shut down, so that its
                    // reader thread ends too instead of relaying its reports.
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                state.address = Some(address);
                state.control = Some(stream);
            }
            Ok(Event::Refused) => refused += 1,
            Ok(Event::Fired(rank, trigger, call)) => {
                record_fired(&mut outcomes, rank, &trigger, call, start.elapsed());
            }
            Ok(Event::ControlClosed) => open_controls = open_controls.saturating_sub(1),
            Ok(Event::Timeline(rank, at, event)) => {
                timeline.push(timeline::Entry {
                    rank,
                    at,
                    what: timeline::What::Rank(event),
                });
            }
            Ok(Event::Spawn(from, line)) => {
                let key = (line.context, line.key_rank);
                let at = match spawns.iter().position(|s| s.key == key) {
                    Some(at) => at,
                    None => {
                        spawns.push(Spawning::new(key, line.parents.clone()));
                        spawns.len() - 1
                    }
                };
                let spawn = &mut spawns[at];
                match &spawn.outcome {
                    Some(outcome) => reply_spawn(&mut ranks, from, key, outcome),
                    None => spawn.asking.push(from),
                }
                if spawn.outcome.is_none() && !spawn.started {
                    match &line.what {
                        launch::SpawnWhat::Root(root) => spawn.root = Some(*root),
                        _ => {
                            start_spawn(&launcher, spawn, from, &line, &mut ranks, &mut forwarders);
                            started = ranks.iter().filter(|r| r.pid.is_some()).count() as u32;
                            if spawn.outcome.is_some() {
                                spawn.answer(&mut ranks);
                            }
                        }
                    }
                }
            }
            Ok(Event::Verdict(key, run)) => {
                if let Some(spawn) = spawns.iter_mut().find(|s| s.key == key) {
                    if spawn.verdict.is_none() {
                        spawn.verdict = Some(run);
                        spawn.carry_out(&mut ranks);
                    }
                }
            }
            Ok(Event::Reported(report)) if (report.rank as usize) < ranks.len() => {
                if let Some(by) = report.fenced_by {
                    timeline.push(timeline::Entry {
                        rank: by,
                        at: start.elapsed(),
                        what: timeline::What::Suspected(report.rank),
                    });
                }
                // A rank that is itself fenced or gone is not listened to (SPEC §1).
                let reporter = report.fenced_by.map(|r| &ranks[r as usize].report);
                let heeded = !reporter.is_some_and(|r| r.fenced_by.is_some() || r.ending.is_some());
                let state = &mut ranks[report.rank as usize];
                let fresh = state.report.fenced_by.is_none() && !state.report.injected;
                if heeded && state.report.ending.is_none() && fresh {
                    state.report.fenced_by = report.fenced_by;
                    if let Some(pid) = state.pid.filter(|_| job.kill_suspects) {
                        kill_group(pid);
                    }
                }
            }
            Ok(Event::Reported(_)) => {} // a rank outside the job
            Ok(Event::Aborted(abort)) => {
                // As for reports: a rank that is itself fenced or gone is not listened to.
                let reporter = &ranks[abort.rank as usize].report;
                let heeded = reporter.fenced_by.is_none() && reporter.ending.is_none();
                if aborted.is_none() && heeded {
                    aborted = Some(abort);
                    for state in ranks.iter().filter(|r| r.report.ending.is_none()) {
                        if let Some(pid) = state.pid {
                            kill_group(pid);
                        }
                    }
                }
            }
            Ok(Event::Exited(rank, status)) => {
                exited += 1;
                let state = &mut ranks[rank as usize];
                let ending = ending_of(status);
                state.report.ending = Some(ending);
                state.report.ended_at = Some(start.elapsed());
                let planned = (state.kill_planned_in_operation && ending == Ending::Signaled(9))
                    || ending == Ending::Exited(launch::EXIT_INJECTED);
                if planned {
                    state.report.injected = true;
                    state.report.fenced_by = None; // peers reported the death it was planned to be
                }
                if !matches!(ending, Ending::Signaled(9))
                    && !matches!(ending, Ending::Exited(code) if halted(code))
                {
                    // It ended by itself before the kill asked for its fencing could land.
                    state.report.fenced_by = None;
                }
                state.control = None;
                // Before the table, the table itself will say it is dead.
                let live = ranks.iter_mut().filter(|r| r.report.ending.is_none());
                for other in live.filter(|_| table_sent && job.confirm_exits) {
                    if let Some(control) = other.control.as_mut() {
                        let _ = control.write_all(launch::failed_line(rank).as_bytes());
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        for spawn in &mut spawns {
            spawn.advance(&mut ranks);
        }
        if !table_sent
            && ranks
                .iter()
                .all(|r| r.address.is_some() || r.report.ending.is_some())
        {
            table_sent = true;
            let addresses: Vec<Option<String>> = ranks
                .iter()
                .map(|r| {
                    r.report
                        .ending
                        .is_none()
                        .then(|| r.address.clone())
                        .flatten()
                })
                .collect();
            let line = launch::table_line(&addresses);
            for state in ranks.iter_mut() {
                if let Some(control) = state.control.as_mut() {
                    let _ = control.write_all(line.as_bytes());
                }
            }
        }
        let elapsed = start.elapsed();
        while timed_kills.last().is_some_and(|(at, _, _)| *at <= elapsed) {
            let (_, rank, index) = timed_kills.pop().expect("checked");
            let state = &mut ranks[rank as usize];
            if state.report.ending.is_none() {
                state.report.injected = true;
                if let Some(pid) = state.pid {
                    kill_group(pid);
                    outcomes[index].fired = Some(Fired {
                        at: elapsed,
                        call: None,
                    });
                }
            }
        }
        while timed_stops.last().is_some_and(|(at, _, _)| *at <= elapsed) {
            let (_, rank, index) = timed_stops.pop().expect("checked");
            let state = &ranks[rank as usize];
            if let Some(pid) = state.pid.filter(|_| state.report.ending.is_none()) {
                stop_group(pid);
                outcomes[index].fired = Some(Fired {
                    at: elapsed,
                    call: None,
                });
            }
        }
        let stop = job.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst));
        let late = job.timeout.is_some_and(|t| elapsed >= t);
        if (stop || late) && !(timed_out || interrupted) {
            timed_out = late && !stop;
            interrupted = stop;
            for state in &ranks {
                if state.report.ending.is_none() {
                    if let Some(pid) = state.pid {
                        kill_group(pid);
                    }
                }
            }
        }
    }
    // Whatever the ranks started in their groups goes too.
    for pid in ranks.iter().filter_map(|r| r.pid) {
        kill_group(pid);
    }
    // A rank's last lines (`fired`) may arrive after its exit: read until every registered
    // rank's control connection has ended (its process is gone, so each ends soon).
    let deadline = Instant::now() + Duration::from_secs(2);
    while open_controls > 0 {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        match events.recv_timeout(left) {
            Ok(Event::Registered(..)) => open_controls += 1,
            Ok(Event::ControlClosed) => open_controls = open_controls.saturating_sub(1),
            Ok(Event::Fired(rank, trigger, call)) => {
                record_fired(&mut outcomes, rank, &trigger, call, start.elapsed());
            }
            Ok(Event::Timeline(rank, at, event)) => {
                timeline.push(timeline::Entry {
                    rank,
                    at,
                    what: timeline::What::Rank(event),
                });
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if let Some(dir) = &socket_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    for state in ranks.iter_mut() {
        state.control = None;
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    for forwarder in forwarders {
        while !forwarder.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if forwarder.is_finished() {
            let _ = forwarder.join();
        }
    }
    if let Some(e) = started_error {
        if started == 0 {
            return Err(e);
        }
        eprintln!("rtrun: could not start every rank: {e}");
    }
    let lines = std::mem::take(&mut *lines.lock().unwrap_or_else(|e| e.into_inner()));
    let elapsed = start.elapsed();
    let timeline = job.timeline.then(|| {
        let rows = ranks.len() as u32;
        timeline::of_job(rows, elapsed, &ranks_started(&ranks), &outcomes, timeline)
    });
    Ok(Report {
        timeline,
        aborted,
        ranks: ranks.into_iter().map(|r| r.report).collect(),
        faults: outcomes,
        lines,
        timed_out,
        interrupted,
        refused_connections: refused,
        elapsed,
        socket_dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(endings: &[Option<Ending>]) -> Report {
        Report {
            aborted: None,
            ranks: endings
                .iter()
                .enumerate()
                .map(|(rank, &ending)| RankReport {
                    rank: rank as u32,
                    ending,
                    ended_at: ending.map(|_| Duration::from_millis(rank as u64)),
                    injected: false,
                    fenced_by: None,
                    spawned_by: None,
                    cancelled: false,
                })
                .collect(),
            faults: Vec::new(),
            lines: Vec::new(),
            timed_out: false,
            interrupted: false,
            refused_connections: 0,
            elapsed: Duration::ZERO,
            socket_dir: None,
            timeline: None,
        }
    }

    const OK: Option<Ending> = Some(Ending::Exited(0));
    const SIGKILL: Option<Ending> = Some(Ending::Signaled(9));

    /// Each row of EXIT_STATUS_TABLE (issue 14: a death rtrun did not send, with every
    /// survivor finalized, used to fail the job).
    #[test]
    fn each_row_of_the_exit_status_table() {
        // Spawned ranks killed (or never started) because their spawn was called off count
        // for nothing, not even under --strict-deaths.
        let mut called_off = report(&[OK, OK, SIGKILL, Some(Ending::Exited(-1))]);
        for rank in &mut called_off.ranks[2..] {
            rank.spawned_by = Some(vec![0, 1]);
            rank.cancelled = true;
        }
        assert_eq!(called_off.exit_status(true), 0, "spawns called off");
        assert!(called_off.summary().contains("the spawn was called off"));
        let survived = [OK, SIGKILL, Some(Ending::Signaled(11)), OK];
        assert_eq!(report(&survived).exit_status(false), 0, "deaths survived");
        assert_eq!(report(&survived).exit_status(true), 1, "--strict-deaths");
        let halted = [
            OK,
            Some(Ending::Exited(launch::EXIT_FENCED)),
            Some(Ending::Exited(launch::EXIT_NO_MAJORITY)),
            Some(Ending::Exited(launch::EXIT_INJECTED)),
        ];
        assert_eq!(
            report(&halted).exit_status(false),
            0,
            "halts and injected deaths"
        );
        let by_itself = [
            OK,
            Some(Ending::Exited(3)),
            SIGKILL,
            Some(Ending::Exited(7)),
        ];
        assert_eq!(
            report(&by_itself).exit_status(false),
            3,
            "the first to exit non-zero"
        );
        assert_eq!(
            report(&[OK, Some(Ending::Exited(-1))]).exit_status(false),
            1
        );
        assert_eq!(
            report(&[SIGKILL, SIGKILL]).exit_status(false),
            1,
            "no rank finalized"
        );
        assert_eq!(
            report(&[OK, None]).exit_status(false),
            1,
            "a rank never started"
        );
        let mut aborted = report(&by_itself);
        aborted.aborted = Some(Abort { rank: 1, code: 42 });
        assert_eq!(
            aborted.exit_status(false),
            42,
            "an abort's code before a rank's"
        );
        aborted.aborted = Some(Abort { rank: 1, code: 0 });
        assert_eq!(
            aborted.exit_status(false),
            1,
            "MPI_Abort(comm, 0) still fails"
        );
        let mut stopped = report(&survived);
        stopped.timed_out = true;
        assert_eq!(stopped.exit_status(false), 124);
        stopped.interrupted = true;
        assert_eq!(stopped.exit_status(false), 130);
        assert!(report(&survived).success() && !report(&by_itself).success());

        let mut unfired = report(&survived);
        let planned = |trigger| PlannedFault::Kill(Kill { rank: 1, trigger });
        unfired.faults = vec![
            FaultOutcome {
                fault: planned(Trigger::After(Duration::from_millis(500))),
                fired: Some(Fired {
                    at: Duration::from_millis(501),
                    call: None,
                }),
            },
            FaultOutcome {
                fault: planned(Trigger::Call(100_000)),
                fired: None,
            },
        ];
        let strict_faults = Strict {
            deaths: false,
            faults: true,
        };
        assert_eq!(unfired.exit_status(false), 0, "an unfired fault: a warning");
        assert_eq!(
            unfired.exit_status_with(strict_faults),
            1,
            "--strict-faults"
        );
        unfired.faults.pop();
        assert_eq!(unfired.exit_status_with(strict_faults), 0, "all fired");
        let mut stopped = report(&by_itself);
        stopped.faults = vec![FaultOutcome {
            fault: planned(Trigger::Call(3)),
            fired: None,
        }];
        assert_eq!(
            stopped.exit_status_with(strict_faults),
            3,
            "a rank's own status comes first"
        );
    }

    /// The report names every planned fault: when it fired (and in which call), or a warning
    /// that it did not, with what became of its rank.
    #[test]
    fn the_summary_lists_each_planned_fault() {
        let mut job = report(&[OK, SIGKILL, OK]);
        job.faults = vec![
            FaultOutcome {
                fault: PlannedFault::Kill("1@validate_global:2:1".parse().unwrap()),
                fired: Some(Fired {
                    at: Duration::from_millis(250),
                    call: Some(7),
                }),
            },
            FaultOutcome {
                fault: PlannedFault::Kill("2@call:100000".parse().unwrap()),
                fired: None,
            },
            FaultOutcome {
                fault: PlannedFault::Stop {
                    rank: 0,
                    after: Duration::from_millis(500),
                },
                fired: Some(Fired {
                    at: Duration::from_millis(500),
                    call: None,
                }),
            },
        ];
        let summary = job.summary();
        assert!(
            summary.contains(
                "rtrun: --kill 1@validate_global:2:1: fired at 0.250 s, in its communication \
                 call 7\n"
            ),
            "{summary}"
        );
        assert!(
            summary.contains(
                "rtrun: warning: --kill 2@call:100000 did not fire (rank 2 exited with status 0 \
                 at 0.002 s)\n"
            ),
            "{summary}"
        );
        assert!(
            summary.contains("rtrun: --stop 0@0.5s: fired at 0.500 s\n"),
            "{summary}"
        );
    }
}

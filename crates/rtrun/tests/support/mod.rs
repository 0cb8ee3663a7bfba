// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the tests that run jobs in network namespaces share (`netns.rs`, `multihost.rs`): `ip`,
//! the processes of a namespace, a job whose output lines are read as they come (bounded by a
//! deadline, its process group ended if the test ends first), and the lines of each rank.
//! Each test crate uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Fails the test when `variable=require`, else says on standard error that it is skipped.
pub fn skip(variable: &str, what: &str, how: &str) {
    let required = std::env::var(variable).is_ok_and(|v| v == "require");
    assert!(!required, "{what}, and {variable}=require: {how}");
    // Straight to the standard error stream, past the test harness's capture, so that the
    // skip is seen in a plain `cargo test`.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED test: {what} ({how}; {variable}=require makes this a failure)"
    );
}

/// Runs `ip ARGS`; the error says what failed.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run ip (iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The processes in network namespace `name` (`ip netns pids`).
pub fn namespace_pids(name: &str) -> Vec<i32> {
    Command::new("ip")
        .args(["netns", "pids", name])
        .stderr(Stdio::null())
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// SIGKILL to process `pid` (one this test started, or that runs in a namespace it made).
pub fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// Which stream a line came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// A launcher run in its own process group, its output read line by line as it comes.
pub struct Job {
    child: Child,
    lines: mpsc::Receiver<(Stream, String)>,
    deadline: Instant,
    limit: Duration,
    /// Every line so far, in arrival order.
    pub seen: Vec<(Stream, String)>,
}

impl Job {
    /// Starts `command` (standard input closed); the job may last `limit`.
    pub fn start(command: &mut Command, limit: Duration) -> Job {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("the launcher starts");
        let (tx, lines) = mpsc::channel();
        let pipes: [(Stream, Box<dyn Read + Send>); 2] = [
            (Stream::Out, Box::new(child.stdout.take().unwrap())),
            (Stream::Err, Box::new(child.stderr.take().unwrap())),
        ];
        for (stream, pipe) in pipes {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if tx.send((stream, line)).is_err() {
                        break;
                    }
                }
            });
        }
        Job {
            child,
            lines,
            deadline: Instant::now() + limit,
            limit,
            seen: Vec::new(),
        }
    }

    /// The next line, or `None` once both streams have closed. Panics past the deadline.
    pub fn next_line(&mut self) -> Option<(Stream, String)> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => {
                self.seen.push(line.clone());
                Some(line)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("the job outlived {:?}\n{}", self.limit, self.text())
            }
        }
    }

    /// Reads the lines that come within `wait` (fewer past the deadline, which panics); false
    /// once the output has ended.
    pub fn read_for(&mut self, wait: Duration) -> bool {
        let until = Instant::now() + wait;
        loop {
            assert!(
                Instant::now() < self.deadline,
                "the job outlived {:?}\n{}",
                self.limit,
                self.text()
            );
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
                Err(mpsc::RecvTimeoutError::Timeout) => return true,
            }
        }
    }

    /// Reads lines until `done` holds for one (true), or the output ends (false).
    pub fn read_until(&mut self, mut done: impl FnMut(Stream, &str) -> bool) -> bool {
        while let Some((stream, line)) = self.next_line() {
            if done(stream, &line) {
                return true;
            }
        }
        false
    }

    /// Reads the rest of the output and waits for the launcher to end (within the deadline).
    pub fn finish(mut self) -> (ExitStatus, Vec<(Stream, String)>) {
        while self.next_line().is_some() {}
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the launcher") {
                return (status, std::mem::take(&mut self.seen));
            }
            assert!(
                Instant::now() < self.deadline,
                "the launcher outlived {:?}\n{}",
                self.limit,
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn text(&self) -> String {
        self.seen
            .iter()
            .map(|(stream, line)| format!("{stream:?} {line}\n"))
            .collect()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let group = rustix::process::Pid::from_child(&self.child);
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
            std::thread::sleep(Duration::from_millis(200));
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = self.child.wait();
        }
    }
}

/// How a launcher labels a rank's lines: rtrun's `--tag-output` (`[R] `) or srun's `-l`
/// (`R: `, with spaces before R when the job has 10 ranks or more).
#[derive(Debug, Clone, Copy)]
pub enum Labels {
    Rtrun,
    Srun,
}

impl Labels {
    /// `(rank, text)` of a labelled line.
    pub fn split(self, line: &str) -> Option<(u32, &str)> {
        let (rank, text) = match self {
            Labels::Rtrun => line.strip_prefix('[')?.split_once("] ")?,
            Labels::Srun => line.trim_start().split_once(": ")?,
        };
        Some((rank.parse().ok()?, text))
    }
}

/// A finished job: its status and every line, each rank's found by its label.
pub struct Outcome {
    pub status: ExitStatus,
    pub lines: Vec<(Stream, String)>,
    pub labels: Labels,
}

impl Outcome {
    pub fn new(job: Job, labels: Labels) -> Outcome {
        let (status, lines) = job.finish();
        Outcome {
            status,
            lines,
            labels,
        }
    }

    fn of(&self, stream: Stream, rank: u32) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(s, _)| *s == stream)
            .filter_map(|(_, line)| self.labels.split(line))
            .filter(|(r, _)| *r == rank)
            .map(|(_, text)| text)
            .collect()
    }

    /// The standard output lines of `rank`, in order.
    pub fn stdout_of(&self, rank: u32) -> Vec<&str> {
        self.of(Stream::Out, rank)
    }

    /// The standard error lines of `rank`, in order.
    pub fn stderr_of(&self, rank: u32) -> Vec<&str> {
        self.of(Stream::Err, rank)
    }

    /// Whether one of `ranks` has a standard error line containing `text`.
    pub fn any_stderr(&self, mut ranks: std::ops::Range<u32>, text: &str) -> bool {
        ranks.any(|rank| self.stderr_of(rank).iter().any(|l| l.contains(text)))
    }

    /// The launcher's own standard error lines (those without a rank's label).
    pub fn launcher_stderr(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(s, l)| *s == Stream::Err && self.labels.split(l).is_none())
            .map(|(_, l)| l.as_str())
            .collect()
    }

    /// The failures that `rank` decided on (`rtrun-check`'s validate_global results), in order.
    pub fn decisions_of(&self, rank: u32) -> Vec<&str> {
        self.stdout_of(rank)
            .into_iter()
            .filter_map(|l| l.split_once("failed=").map(|(_, f)| f))
            .collect()
    }

    pub fn text(&self) -> String {
        let mut text = format!("status {:?}\n", self.status);
        for (stream, line) in &self.lines {
            text.push_str(&format!("{stream:?} {line}\n"));
        }
        text
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Confirming a peer's death on the same host (semantics §1: a failure is *confirmed* once the
//! rank's process is seen to end).
//!
//! Under rtrun the launcher sees every rank's exit and says so. Under a PMI launcher (Hydra,
//! srun) nobody does, and a closed connection alone is only a suspicion (a peer that fenced
//! this rank closes its connections too), so without more a death would need a majority of
//! votes: the survivor of a two-rank job could never go on. So each rank publishes, next to its
//! address, the identity of its host and process: the boot id, the PID namespace and its PID.
//! When a connection from a peer in the same host *and* the same PID namespace ends, this rank
//! watches that PID through a pidfd for up to a heartbeat period: the process ending is the
//! confirmation. A PID that is gone already also confirms (it cannot be this peer's while the
//! peer lives); a reused PID, a peer in another PID namespace or on another host, or one still
//! running after the period give no confirmation, and the majority rule decides as before: every
//! doubt falls on the side of not confirming.

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{pidfd_open, Pid, PidfdFlags};

/// This host and PID namespace, as the kernel names them (`boot_id/pid:[inode]`), if readable.
pub fn host_identity() -> Option<String> {
    namespace_identity("pid")
}

/// This host and network namespace (`boot_id/net:[inode]`), if readable: two processes with
/// the same identity reach each other's loopback addresses; with different ones they do not
/// (other hosts, or network namespaces of one kernel, as the emulated hosts of the tests are).
pub fn network_identity() -> Option<String> {
    namespace_identity("net")
}

/// `boot_id/KIND:[inode]` for this process's namespace of `kind` (`pid`, `net`): a word
/// without whitespace, `,` or `=`, since it travels as a PMI value.
fn namespace_identity(kind: &str) -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link(format!("/proc/self/ns/{kind}")).ok()?;
    let boot = boot.trim();
    let namespace = namespace.to_str()?;
    let odd = |text: &str| {
        text.chars()
            .any(|c| c.is_whitespace() || c == ',' || c == '=')
    };
    if boot.is_empty() || odd(boot) || odd(namespace) {
        return None;
    }
    Some(format!("{boot}/{namespace}"))
}

/// The record this rank publishes: `HOST,PID` (`-` when the host cannot be named). No
/// whitespace: it travels as a PMI value.
pub fn record() -> String {
    match host_identity() {
        Some(host) => format!("{host},{}", std::process::id()),
        None => "-".into(),
    }
}

/// The PID of a peer's record when the peer runs on this host, in this PID namespace.
pub fn local_pid(record: &str, here: Option<&str>) -> Option<u32> {
    let here = here?;
    let (host, pid) = record.trim().rsplit_once(',')?;
    let pid: u32 = pid.parse().ok()?;
    (host == here && pid > 1 && pid != std::process::id()).then_some(pid)
}

/// Whether process `pid` has ended, waiting up to `limit` for it to (a pidfd: no polling loop).
pub fn has_ended(pid: u32, limit: Duration) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    let fd = match pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(Errno::SRCH) => return true, // gone (and reaped) already
        Err(_) => return false,          // no pidfds here: no confirmation
    };
    let timeout = Timespec {
        tv_sec: limit.as_secs() as _,
        tv_nsec: limit.subsec_nanos() as _,
    };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    loop {
        match poll(&mut fds, Some(&timeout)) {
            Ok(ready) => return ready > 0,
            Err(Errno::INTR) => continue,
            Err(_) => return false,
        }
    }
}

/// The processes of several peers on this host, watched together through pidfds: for a rank
/// that has no connection to them (connections are made on first use), their ending is how it
/// learns of their failure without a launcher that says so.
#[derive(Debug, Default)]
pub struct Watch {
    /// Each watched rank and its process's pidfd.
    watched: Vec<(u32, OwnedFd)>,
    /// Ranks whose process could not get a pidfd here (no descriptors left, a kernel without
    /// pidfds): asked whether their PID still exists at every wait instead (a PID reused in
    /// between hides the end: the only doubt, and it falls on the side of not confirming).
    probed: Vec<(u32, Pid)>,
}

impl Watch {
    /// Watches `(rank, pid)` pairs. Returns the watch and the ranks whose process is gone
    /// already; a PID that cannot be watched here (no pidfds) is left out.
    pub fn new(pids: impl IntoIterator<Item = (u32, u32)>) -> (Watch, Vec<u32>) {
        let mut watch = Watch::default();
        let mut gone = Vec::new();
        for (rank, pid) in pids {
            let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            match pidfd_open(raw, PidfdFlags::empty()) {
                Ok(fd) => watch.watched.push((rank, fd)),
                Err(Errno::SRCH) => gone.push(rank),
                Err(_) => watch.probed.push((rank, raw)),
            }
        }
        (watch, gone)
    }

    /// Whether no process is watched any more.
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty() && self.probed.is_empty()
    }

    /// The ranks whose process is not watched through a pidfd.
    pub fn probed(&self) -> Vec<u32> {
        self.probed.iter().map(|&(rank, _)| rank).collect()
    }

    /// Waits up to `limit` for watched processes to end; returns their ranks (no longer
    /// watched), empty when none ended in time.
    pub fn wait(&mut self, limit: Duration) -> Vec<u32> {
        let mut ended = self.probe();
        if !ended.is_empty() {
            return ended;
        }
        if self.watched.is_empty() {
            std::thread::sleep(limit);
            return self.probe();
        }
        let timeout = Timespec {
            tv_sec: limit.as_secs() as _,
            tv_nsec: limit.subsec_nanos() as _,
        };
        let ready: Vec<bool> = {
            let mut fds: Vec<PollFd<'_>> = self
                .watched
                .iter()
                .map(|(_, fd)| PollFd::new(fd, PollFlags::IN))
                .collect();
            match poll(&mut fds, Some(&timeout)) {
                Ok(n) if n > 0 => fds.iter().map(|fd| !fd.revents().is_empty()).collect(),
                _ => return self.probe(),
            }
        };
        let mut ready = ready.into_iter();
        self.watched.retain(|(rank, _)| {
            let done = ready.next().unwrap_or(false);
            if done {
                ended.push(*rank);
            }
            !done
        });
        ended
    }

    /// The probed ranks whose PID is gone (no longer probed).
    fn probe(&mut self) -> Vec<u32> {
        let mut ended = Vec::new();
        self.probed.retain(|&(rank, pid)| {
            let gone = rustix::process::test_kill_process(pid) == Err(Errno::SRCH);
            if gone {
                ended.push(rank);
            }
            !gone
        });
        ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_this_host_and_process() {
        let here = host_identity().expect("/proc is readable here");
        let mine = record();
        assert_eq!(mine, format!("{here},{}", std::process::id()));
        assert!(!mine.contains(char::is_whitespace), "a PMI value: {mine:?}");
        // Our own record is not a peer's; another PID on this host is; other hosts are not.
        assert_eq!(local_pid(&mine, Some(&here)), None);
        assert_eq!(local_pid(&format!("{here},4242"), Some(&here)), Some(4242));
        assert_eq!(local_pid("other-boot/pid:[1],4242", Some(&here)), None);
        assert_eq!(local_pid("-", Some(&here)), None);
        assert_eq!(local_pid(&format!("{here},x"), Some(&here)), None);
        assert_eq!(local_pid(&format!("{here},4242"), None), None);
    }

    #[test]
    fn a_running_process_has_not_ended_and_a_killed_one_has() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        assert!(!has_ended(pid, Duration::from_millis(20)));
        child.kill().expect("kill the child");
        // Not reaped yet: a zombie has ended too.
        assert!(has_ended(pid, Duration::from_secs(10)));
        child.wait().expect("reap");
        assert!(has_ended(pid, Duration::from_millis(1)));
    }

    #[test]
    fn a_watch_reports_the_processes_that_end_and_only_those() {
        let spawn = || {
            std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .expect("sleep runs")
        };
        let (mut a, mut b) = (spawn(), spawn());
        let (mut watch, gone) = Watch::new([(3, a.id()), (7, b.id())]);
        assert!(gone.is_empty());
        assert_eq!(watch.wait(Duration::from_millis(20)), Vec::<u32>::new());
        b.kill().expect("kill b");
        assert_eq!(watch.wait(Duration::from_secs(10)), vec![7]);
        assert!(!watch.is_empty());
        a.kill().expect("kill a");
        assert_eq!(watch.wait(Duration::from_secs(10)), vec![3]);
        assert!(watch.is_empty());
        a.wait().expect("reap a");
        b.wait().expect("reap b");
        // A PID that is gone (reaped) is reported at once.
        let (_, gone) = Watch::new([(5, a.id())]);
        assert_eq!(gone, vec![5]);
    }

    /// A process that got no pidfd is probed instead: its end is reported at the next wait.
    #[test]
    fn a_process_without_a_pidfd_is_probed_and_its_end_reported() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let pid = Pid::from_raw(child.id() as i32).expect("a live PID");
        let mut watch = Watch {
            watched: Vec::new(),
            probed: vec![(4, pid)],
        };
        assert_eq!(watch.probed(), vec![4]);
        assert_eq!(watch.wait(Duration::from_millis(20)), Vec::<u32>::new());
        child.kill().expect("kill the child");
        child.wait().expect("reap");
        assert_eq!(watch.wait(Duration::from_millis(20)), vec![4]);
        assert!(watch.is_empty());
    }
}

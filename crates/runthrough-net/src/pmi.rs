// SPDX-License-Identifier: MIT OR Apache-2.0
//! A PMI client over the wire protocols, no `libpmi`: how a rank started by an existing launcher
//! (MPICH's Hydra `mpiexec`, Slurm's `srun --mpi=pmi2`) learns its rank and size and exchanges
//! addresses with its peers (semantics §4).
//!
//! The launcher hands each process a connected socket as the file descriptor `PMI_FD`, plus
//! `PMI_RANK` and `PMI_SIZE`. Two protocols run over it:
//!
//! - **PMI-1** ("simple PMI", what Hydra speaks by default): newline-terminated lines of
//!   space-separated `key=value` words, starting with `cmd=`: `init`, `get_maxes`,
//!   `get_my_kvsname`, `put`, `barrier_in`/`barrier_out`, `get`, `finalize`. Rank and size come
//!   from `PMI_RANK`/`PMI_SIZE` (Slurm's PMI-1 subset has no `get_rank`/`get_size`).
//! - **PMI-2** (what `srun --mpi=pmi2` provides): after the same one-line `cmd=init` handshake,
//!   frames of a 6-character left-justified decimal length and a body of `key=value;` items,
//!   starting with `cmd=...;`: `fullinit`, `kvs-put`, `kvs-fence`, `kvs-get`, `finalize`.
//!
//! Replies that do not parse, answer another command, report `rc` ≠ 0, or are oversized are
//! [`PmiError`]s, never panics. Keys and values must be plain words (no whitespace, `=` or `;`).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// The descriptor of the PMI socket.
pub const ENV_FD: &str = "PMI_FD";
/// This process's rank.
pub const ENV_RANK: &str = "PMI_RANK";
/// The number of ranks.
pub const ENV_SIZE: &str = "PMI_SIZE";
/// The job id (set by Slurm; Hydra sets none).
pub const ENV_JOBID: &str = "PMI_JOBID";
/// Chooses the protocol: `1` or `2`. Default: PMI-2 when `PMI_JOBID` is set (Slurm), else PMI-1.
pub const ENV_VERSION: &str = "RT_PMI";

/// The longest line or frame accepted from the server.
const MAX_REPLY: usize = 64 << 10;
/// How long one PMI call may wait for its reply by default (a fence waits for every rank).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a PMI call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum PmiError {
    /// The socket failed or closed.
    Io(io::Error),
    /// The server's reply does not parse or does not answer the request.
    Protocol(String),
    /// The server answered with an error code.
    Failed {
        /// The command.
        command: String,
        /// The server's `rc`.
        rc: String,
        /// The server's message, if any.
        message: String,
    },
    /// A key or value the protocol cannot carry.
    BadArgument(String),
}

impl PmiError {
    /// Whether the call failed because its reply did not come in time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, PmiError::Io(e)
            if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut))
    }
}

impl std::fmt::Display for PmiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PmiError::Io(e) => write!(f, "PMI socket: {e}"),
            PmiError::Protocol(what) => write!(f, "PMI protocol: {what}"),
            PmiError::Failed {
                command,
                rc,
                message,
            } => write!(f, "PMI {command} failed (rc={rc}): {message}"),
            PmiError::BadArgument(what) => write!(f, "PMI argument: {what}"),
        }
    }
}

impl std::error::Error for PmiError {}

impl From<io::Error> for PmiError {
    fn from(e: io::Error) -> Self {
        PmiError::Io(e)
    }
}

fn protocol(what: impl Into<String>) -> PmiError {
    PmiError::Protocol(what.into())
}

/// The protocol version spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// PMI-1, line-oriented.
    V1,
    /// PMI-2, length-prefixed frames.
    V2,
}

/// Key=value items of one reply.
type Items = HashMap<String, String>;

fn check_word(what: &str, word: &str) -> Result<(), PmiError> {
    if word.is_empty()
        || word
            .chars()
            .any(|c| c.is_whitespace() || c == '=' || c == ';' || c.is_control())
    {
        return Err(PmiError::BadArgument(format!("{what} {word:?}")));
    }
    Ok(())
}

fn check_rc(command: &str, items: &Items) -> Result<(), PmiError> {
    match items.get("rc").map(String::as_str) {
        None | Some("0") => Ok(()),
        Some(rc) => Err(PmiError::Failed {
            command: command.to_string(),
            rc: rc.to_string(),
            message: items
                .get("msg")
                .or_else(|| items.get("errmsg"))
                .cloned()
                .unwrap_or_default(),
        }),
    }
}

fn expect_cmd(items: &Items, want: &str) -> Result<(), PmiError> {
    match items.get("cmd") {
        Some(cmd) if cmd == want => Ok(()),
        Some(cmd) => Err(protocol(format!("expected {want}, got {cmd}"))),
        None => Err(protocol(format!(
            "expected {want}, got a reply without cmd"
        ))),
    }
}

/// PMI-1 line: `cmd=x a=b c=d` (a value may itself contain `=`).
fn parse_v1(line: &str) -> Result<Items, PmiError> {
    let mut items = Items::new();
    for word in line.split_ascii_whitespace() {
        let (k, v) = word
            .split_once('=')
            .ok_or_else(|| protocol(format!("word without '=' in {line:?}")))?;
        items.insert(k.to_string(), v.to_string());
    }
    if !items.contains_key("cmd") {
        return Err(protocol(format!("no cmd in {line:?}")));
    }
    Ok(items)
}

/// PMI-2 body: `cmd=x;a=b;` (`;;` stands for a `;` inside a value).
fn parse_v2(body: &str) -> Result<Items, PmiError> {
    let mut items = Items::new();
    let mut item = String::new();
    let mut chars = body.chars().peekable();
    let mut finish = |item: &mut String| -> Result<(), PmiError> {
        if !item.is_empty() {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| protocol(format!("item without '=' in {body:?}")))?;
            items.insert(k.to_string(), v.to_string());
            item.clear();
        }
        Ok(())
    };
    while let Some(c) = chars.next() {
        if c == ';' {
            if chars.peek() == Some(&';') {
                chars.next();
                item.push(';');
            } else {
                finish(&mut item)?;
            }
        } else {
            item.push(c);
        }
    }
    finish(&mut item)?;
    if !items.contains_key("cmd") {
        return Err(protocol(format!("no cmd in {body:?}")));
    }
    Ok(items)
}

/// A PMI-2 frame: the body's length left-justified in 6 characters, then the body.
fn frame_v2(body: &str) -> Result<Vec<u8>, PmiError> {
    if body.len() > 999_999 {
        return Err(PmiError::BadArgument("frame longer than 999999".into()));
    }
    Ok(format!("{:<6}{body}", body.len()).into_bytes())
}

/// A PMI client on one connected stream.
#[derive(Debug)]
pub struct Pmi<S: Read + Write = UnixStream> {
    stream: S,
    version: Version,
    rank: u32,
    size: u32,
    /// The KVS name (PMI-1) or job id (PMI-2).
    kvs: String,
    /// PMI-1 limits from `get_maxes`.
    key_max: usize,
    value_max: usize,
    finalized: bool,
}

impl<S: Read + Write> Pmi<S> {
    /// Reads one `\n`-terminated line, byte by byte (nothing after it is consumed).
    fn read_line(&mut self) -> Result<String, PmiError> {
        let mut line = Vec::new();
        let mut byte = [0u8];
        loop {
            if self.stream.read(&mut byte)? == 0 {
                return Err(PmiError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
            if byte[0] == b'\n' {
                break;
            }
            if line.len() >= MAX_REPLY {
                return Err(protocol("reply line too long"));
            }
            line.push(byte[0]);
        }
        String::from_utf8(line).map_err(|_| protocol("reply is not UTF-8"))
    }

    fn call_v1(&mut self, request: &str, reply: &str) -> Result<Items, PmiError> {
        self.stream.write_all(format!("{request}\n").as_bytes())?;
        let line = self.read_line()?;
        let items = parse_v1(&line)?;
        expect_cmd(&items, reply)?;
        check_rc(reply, &items)?;
        Ok(items)
    }

    fn call_v2(&mut self, command: &str, args: &[(&str, &str)]) -> Result<Items, PmiError> {
        let mut body = format!("cmd={command};");
        for (k, v) in args {
            body.push_str(&format!("{k}={};", v.replace(';', ";;")));
        }
        self.stream.write_all(&frame_v2(&body)?)?;
        let items = parse_v2(&self.read_frame_v2()?)?;
        let reply = format!("{command}-response");
        expect_cmd(&items, &reply)?;
        check_rc(command, &items)?;
        Ok(items)
    }

    /// Reads one PMI-2 frame: a 6-byte length, then the body.
    fn read_frame_v2(&mut self) -> Result<String, PmiError> {
        let mut header = [0u8; 6];
        self.stream.read_exact(&mut header)?;
        let length: usize = std::str::from_utf8(&header)
            .ok()
            .and_then(|h| h.trim().parse().ok())
            .ok_or_else(|| protocol(format!("bad frame length {header:?}")))?;
        if length > MAX_REPLY {
            return Err(protocol(format!("frame of {length} bytes")));
        }
        let mut body = vec![0u8; length];
        self.stream.read_exact(&mut body)?;
        String::from_utf8(body).map_err(|_| protocol("frame is not UTF-8"))
    }

    /// The `cmd=init` handshake line both protocols start with.
    fn handshake(&mut self, version: u32, subversion: u32) -> Result<(), PmiError> {
        let items = self.call_v1(
            &format!("cmd=init pmi_version={version} pmi_subversion={subversion}"),
            "response_to_init",
        )?;
        match items.get("pmi_version").map(String::as_str) {
            Some(v) if v == version.to_string() => Ok(()),
            other => Err(protocol(format!(
                "asked for PMI version {version}, server answered {other:?}"
            ))),
        }
    }

    /// Starts a PMI-1 session; rank and size are the launcher's `PMI_RANK`/`PMI_SIZE`.
    ///
    /// # Errors
    /// Any [`PmiError`] of the handshake, `get_maxes` or `get_my_kvsname`.
    pub fn init_v1(stream: S, rank: u32, size: u32) -> Result<Self, PmiError> {
        let mut pmi = Pmi {
            stream,
            version: Version::V1,
            rank,
            size,
            kvs: String::new(),
            key_max: 64,
            value_max: 256,
            finalized: false,
        };
        pmi.handshake(1, 1)?;
        let maxes = pmi.call_v1("cmd=get_maxes", "maxes")?;
        let limit = |name: &str, default: usize| -> Result<usize, PmiError> {
            match maxes.get(name) {
                None => Ok(default),
                Some(v) => v
                    .parse()
                    .map_err(|_| protocol(format!("{name}={v:?} is not a number"))),
            }
        };
        pmi.key_max = limit("keylen_max", 64)?;
        pmi.value_max = limit("vallen_max", 256)?;
        let kvs = pmi.call_v1("cmd=get_my_kvsname", "my_kvsname")?;
        pmi.kvs = kvs
            .get("kvsname")
            .cloned()
            .ok_or_else(|| protocol("my_kvsname without kvsname"))?;
        Ok(pmi)
    }

    /// Starts a PMI-2 session (`fullinit`, sending `PMI_JOBID` and `PMI_RANK` when known); rank
    /// and size are the server's.
    ///
    /// # Errors
    /// Any [`PmiError`] of the handshake or `fullinit`.
    pub fn init_v2(stream: S, jobid: Option<&str>, rank: Option<u32>) -> Result<Self, PmiError> {
        let mut pmi = Pmi {
            stream,
            version: Version::V2,
            rank: 0,
            size: 0,
            kvs: String::new(),
            key_max: 64,
            value_max: 1024,
            finalized: false,
        };
        pmi.handshake(2, 0)?;
        let rank_text = rank.map(|r| r.to_string());
        let mut args = vec![("threaded", "FALSE")];
        if let Some(j) = jobid {
            args.push(("pmijobid", j));
        }
        if let Some(r) = &rank_text {
            args.push(("pmirank", r));
        }
        let full = pmi.call_v2("fullinit", &args)?;
        let number = |name: &str| -> Result<u32, PmiError> {
            full.get(name)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| protocol(format!("fullinit-response without a number {name}")))
        };
        pmi.rank = number("rank")?;
        pmi.size = number("size")?;
        if pmi.size == 0 || pmi.rank >= pmi.size {
            return Err(protocol(format!("rank {} of {}", pmi.rank, pmi.size)));
        }
        pmi.kvs = jobid.unwrap_or_default().to_string();
        Ok(pmi)
    }

    /// The protocol spoken.
    pub fn version(&self) -> Version {
        self.version
    }

    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Puts `key=value` into the job's key-value space (visible to others after a fence).
    ///
    /// # Errors
    /// [`PmiError::BadArgument`] for a key or value the protocol cannot carry; any failure of
    /// the call.
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        check_word("key", key)?;
        check_word("value", value)?;
        if key.len() > self.key_max || value.len() > self.value_max {
            return Err(PmiError::BadArgument(format!(
                "{key}={value} exceeds the server's limits ({} / {})",
                self.key_max, self.value_max
            )));
        }
        match self.version {
            Version::V1 => {
                let request = format!("cmd=put kvsname={} key={key} value={value}", self.kvs);
                self.call_v1(&request, "put_result").map(drop)
            }
            Version::V2 => self
                .call_v2("kvs-put", &[("key", key), ("value", value)])
                .map(drop),
        }
    }

    /// Waits until every rank reached the fence; puts made before it are then visible.
    ///
    /// # Errors
    /// Any failure of the call.
    pub fn fence(&mut self) -> Result<(), PmiError> {
        match self.version {
            Version::V1 => self.call_v1("cmd=barrier_in", "barrier_out").map(drop),
            Version::V2 => self.call_v2("kvs-fence", &[]).map(drop),
        }
    }

    /// Gets the value another rank put under `key` (before the last fence).
    ///
    /// # Errors
    /// [`PmiError::Failed`] when the key is not found; any failure of the call.
    pub fn get(&mut self, key: &str) -> Result<String, PmiError> {
        check_word("key", key)?;
        let items = match self.version {
            Version::V1 => {
                let request = format!("cmd=get kvsname={} key={key}", self.kvs);
                self.call_v1(&request, "get_result")?
            }
            Version::V2 => {
                let jobid = self.kvs.clone();
                let items = self.call_v2(
                    "kvs-get",
                    &[("jobid", &jobid), ("srcid", "-1"), ("key", key)],
                )?;
                if items.get("found").is_some_and(|f| f != "TRUE") {
                    return Err(PmiError::Failed {
                        command: "kvs-get".into(),
                        rc: "0".into(),
                        message: format!("{key} not found"),
                    });
                }
                items
            }
        };
        items
            .get("value")
            .cloned()
            .ok_or_else(|| protocol(format!("get {key}: reply without value")))
    }

    /// Ends the PMI session (once; later calls do nothing).
    ///
    /// # Errors
    /// Any failure of the call.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        if std::mem::replace(&mut self.finalized, true) {
            return Ok(());
        }
        match self.version {
            Version::V1 => self.call_v1("cmd=finalize", "finalize_ack").map(drop),
            Version::V2 => self.call_v2("finalize", &[]).map(drop),
        }
    }
}

impl Pmi<UnixStream> {
    /// Ends the session after a call failed (a fence that timed out), waiting at most `wait` for
    /// the launcher's acknowledgement and skipping any late reply to the failed call.
    ///
    /// A process that exits with its PMI connection open is, to Hydra, a crash: it kills the
    /// whole job at once, and what the other ranks were writing (their own reason) can be lost.
    /// After this, the process's exit is an ordinary one with its own status.
    ///
    /// # Errors
    /// The acknowledgement did not come within `wait`, or the connection failed.
    pub fn leave(&mut self, wait: Duration) -> Result<(), PmiError> {
        if std::mem::replace(&mut self.finalized, true) {
            return Ok(());
        }
        self.stream.set_read_timeout(Some(wait))?;
        let (request, ack) = match self.version {
            Version::V1 => (b"cmd=finalize\n".to_vec(), "finalize_ack"),
            Version::V2 => (frame_v2("cmd=finalize;")?, "finalize-response"),
        };
        self.stream.write_all(&request)?;
        // Replies come in order: a late reply to the failed call (a fence that completed after
        // all) comes before the acknowledgement.
        for _ in 0..4 {
            let items = match self.version {
                Version::V1 => parse_v1(&self.read_line()?)?,
                Version::V2 => parse_v2(&self.read_frame_v2()?)?,
            };
            if expect_cmd(&items, ack).is_ok() {
                return Ok(());
            }
        }
        Err(protocol("no finalize acknowledgement"))
    }
}

/// Whether this process was started by a PMI launcher (`PMI_FD` is set).
pub fn detected() -> bool {
    std::env::var_os(ENV_FD).is_some()
}

fn env_number(name: &str) -> Result<Option<u32>, PmiError> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| PmiError::BadArgument(format!("{name}={v:?}"))),
    }
}

/// Connects to the launcher's PMI server from the environment (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`,
/// `PMI_JOBID`, [`ENV_VERSION`]).
///
/// # Errors
/// [`PmiError::BadArgument`] when the variables are missing or wrong; any failure of the
/// session's start.
pub fn from_env() -> Result<Pmi, PmiError> {
    from_env_waiting(REPLY_TIMEOUT)
}

/// [`from_env`], where each call waits at most `timeout` for its reply (a fence waits for every
/// rank: a rank that never reaches it makes it fail after `timeout`, with
/// [`PmiError::is_timeout`]).
///
/// # Errors
/// As [`from_env`].
pub fn from_env_waiting(timeout: Duration) -> Result<Pmi, PmiError> {
    let fd =
        env_number(ENV_FD)?.ok_or_else(|| PmiError::BadArgument("PMI_FD is not set".into()))?;
    let stream = fd_stream::take(fd as i32)?;
    stream.set_read_timeout(Some(timeout))?;
    let jobid = std::env::var(ENV_JOBID).ok();
    let version = match std::env::var(ENV_VERSION).ok().as_deref() {
        Some("1") => Version::V1,
        Some("2") => Version::V2,
        Some(other) => return Err(PmiError::BadArgument(format!("{ENV_VERSION}={other:?}"))),
        None if jobid.is_some() => Version::V2,
        None => Version::V1,
    };
    let rank = env_number(ENV_RANK)?;
    match version {
        Version::V1 => {
            let missing = |n: &str| PmiError::BadArgument(format!("{n} is not set"));
            let rank = rank.ok_or_else(|| missing(ENV_RANK))?;
            let size = env_number(ENV_SIZE)?.ok_or_else(|| missing(ENV_SIZE))?;
            if size == 0 || rank >= size {
                return Err(PmiError::BadArgument(format!("rank {rank} of {size}")));
            }
            Pmi::init_v1(stream, rank, size)
        }
        Version::V2 => Pmi::init_v2(stream, jobid.as_deref(), rank),
    }
}

/// Taking the inherited descriptor.
#[allow(unsafe_code)]
mod fd_stream {
    use std::io;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicBool, Ordering};

    static TAKEN: AtomicBool = AtomicBool::new(false);

    /// Takes ownership of the inherited socket `fd` (once per process: a second call fails
    /// rather than creating a second owner of the same descriptor).
    pub(super) fn take(fd: i32) -> io::Result<UnixStream> {
        if fd < 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "negative PMI_FD",
            ));
        }
        if TAKEN.swap(true, Ordering::SeqCst) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "PMI_FD was already taken by this process",
            ));
        }
        // Check the descriptor is open before owning it: `/proc/self/fd/N` exists only then.
        if std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("PMI_FD {fd} is not an open descriptor"),
            ));
        }
        // SAFETY: `fd` is open (checked just above) and was handed to this process by its
        // launcher as the PMI socket (PMI_FD); nothing else in this process owns it: it is not
        // one of std's own descriptors, and `TAKEN` makes this the only place that ever wraps
        // it, so the OwnedFd is its sole owner and closes it exactly once.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(UnixStream::from(owned))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::io::{Read, Write};
        use std::os::fd::IntoRawFd;

        /// The only test that takes a descriptor (the guard is per process).
        #[test]
        fn an_inherited_descriptor_becomes_a_stream_once() {
            assert!(take(-1).is_err());
            let (a, mut b) = UnixStream::pair().unwrap();
            let fd = a.into_raw_fd();
            let mut s = take(fd).unwrap();
            s.write_all(b"x").unwrap();
            let mut got = [0u8];
            b.read_exact(&mut got).unwrap();
            assert_eq!(&got, b"x");
            assert!(take(fd).is_err(), "a second owner of the same descriptor");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::thread;

    /// A scripted PMI-1 server: answers each request line (checked by prefix) with the reply.
    fn server_v1(
        script: Vec<(&'static str, &'static str)>,
    ) -> (UnixStream, thread::JoinHandle<()>) {
        let (client, server) = UnixStream::pair().unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let handle = thread::spawn(move || {
            let mut reader = io::BufReader::new(server.try_clone().unwrap());
            let mut server = server;
            for (want, reply) in script {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                assert!(line.starts_with(want), "got {line:?}, expected {want:?}");
                server.write_all(reply.as_bytes()).unwrap();
            }
        });
        (client, handle)
    }

    const INIT1: (&str, &str) = (
        "cmd=init pmi_version=1 pmi_subversion=1",
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    );
    const MAXES: (&str, &str) = (
        "cmd=get_maxes",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
    );
    const KVS: (&str, &str) = ("cmd=get_my_kvsname", "cmd=my_kvsname kvsname=kvs_7_0\n");

    /// A fence that no reply ends (a rank never reached it) fails after the reply time-out,
    /// as a time-out (`RT_INIT_TIMEOUT`'s error), not as a closed socket.
    #[test]
    fn a_fence_without_reply_times_out() {
        let (client, server) = UnixStream::pair().unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let handle = thread::spawn(move || {
            let mut reader = io::BufReader::new(server.try_clone().unwrap());
            let mut server = server;
            for (want, reply) in [INIT1, MAXES, KVS, ("cmd=barrier_in", "")] {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                assert!(line.starts_with(want), "got {line:?}, expected {want:?}");
                server.write_all(reply.as_bytes()).unwrap();
            }
            // Holds the connection open, unanswered, until the client gave up.
            let _ = wait.recv();
        });
        let mut pmi = Pmi::init_v1(client, 0, 2).unwrap();
        let error = pmi.fence().unwrap_err();
        assert!(error.is_timeout(), "{error}");
        done.send(()).unwrap();
        handle.join().unwrap();
        let closed = PmiError::Io(io::Error::from(io::ErrorKind::UnexpectedEof));
        assert!(!closed.is_timeout());
    }

    /// After a fence timed out, `leave` finalizes: it skips the fence's late reply and takes
    /// the acknowledgement; a server that never acknowledges makes it fail after its wait.
    #[test]
    fn leaving_after_a_timed_out_fence_finalizes_the_session() {
        for acknowledged in [true, false] {
            let (client, server) = UnixStream::pair().unwrap();
            client
                .set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            let handle = thread::spawn(move || {
                let mut reader = io::BufReader::new(server.try_clone().unwrap());
                let mut server = server;
                for (want, reply) in [INIT1, MAXES, KVS, ("cmd=barrier_in", "")] {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    assert!(line.starts_with(want), "got {line:?}, expected {want:?}");
                    server.write_all(reply.as_bytes()).unwrap();
                }
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                assert_eq!(line, "cmd=finalize\n");
                if acknowledged {
                    server
                        .write_all(b"cmd=barrier_out\ncmd=finalize_ack\n")
                        .unwrap();
                }
                // Holds the connection open until the client is gone.
                let _ = reader.read_line(&mut line);
            });
            let mut pmi = Pmi::init_v1(client, 0, 2).unwrap();
            assert!(pmi.fence().unwrap_err().is_timeout());
            let left = pmi.leave(Duration::from_millis(200));
            assert_eq!(left.is_ok(), acknowledged, "{left:?}");
            if let Err(e) = left {
                assert!(e.is_timeout(), "{e}");
            }
            assert!(pmi.leave(Duration::ZERO).is_ok(), "only once");
            drop(pmi);
            handle.join().unwrap();
        }
    }

    #[test]
    fn pmi1_session() {
        let (stream, server) = server_v1(vec![
            INIT1,
            MAXES,
            KVS,
            (
                "cmd=put kvsname=kvs_7_0 key=rt-addr-1 value=127.0.0.1:5",
                "cmd=put_result rc=0\n",
            ),
            ("cmd=barrier_in", "cmd=barrier_out\n"),
            (
                "cmd=get kvsname=kvs_7_0 key=rt-addr-0",
                "cmd=get_result rc=0 value=127.0.0.1:4\n",
            ),
            ("cmd=get ", "cmd=get_result rc=-1 msg=key_not_found\n"),
            ("cmd=finalize", "cmd=finalize_ack\n"),
        ]);
        let mut pmi = Pmi::init_v1(stream, 1, 2).unwrap();
        assert_eq!((pmi.rank(), pmi.size(), pmi.version()), (1, 2, Version::V1));
        pmi.put("rt-addr-1", "127.0.0.1:5").unwrap();
        assert!(matches!(
            pmi.put("bad key", "x"),
            Err(PmiError::BadArgument(_))
        ));
        assert!(matches!(
            pmi.put("k", &"x".repeat(2000)),
            Err(PmiError::BadArgument(_))
        ));
        pmi.fence().unwrap();
        assert_eq!(pmi.get("rt-addr-0").unwrap(), "127.0.0.1:4");
        match pmi.get("missing") {
            Err(PmiError::Failed { rc, message, .. }) => {
                assert_eq!((rc.as_str(), message.as_str()), ("-1", "key_not_found"))
            }
            other => panic!("{other:?}"),
        }
        pmi.finalize().unwrap();
        pmi.finalize().unwrap();
        server.join().unwrap();
    }

    #[test]
    fn pmi1_malformed_replies_are_errors() {
        let cases: Vec<(&str, Vec<(&'static str, &'static str)>)> = vec![
            ("wrong reply", vec![("cmd=init", "cmd=maxes\n")]),
            ("no cmd", vec![("cmd=init", "rc=0\n")]),
            (
                "no '='",
                vec![("cmd=init", "cmd=response_to_init garbage\n")],
            ),
            (
                "wrong version",
                vec![("cmd=init", "cmd=response_to_init pmi_version=2 rc=0\n")],
            ),
            (
                "init refused",
                vec![("cmd=init", "cmd=response_to_init pmi_version=1 rc=3\n")],
            ),
            ("eof", vec![]),
            (
                "bad maxes",
                vec![INIT1, ("cmd=get_maxes", "cmd=maxes vallen_max=lots\n")],
            ),
            (
                "no kvsname",
                vec![INIT1, MAXES, ("cmd=get_my", "cmd=my_kvsname\n")],
            ),
            (
                "not utf-8",
                vec![("cmd=init", "cmd=response_to_init \u{0}\n")],
            ),
        ];
        for (what, script) in cases {
            let (stream, server) = server_v1(script);
            let got = Pmi::init_v1(stream, 0, 1);
            assert!(got.is_err(), "{what}: {got:?}");
            drop(got);
            server.join().unwrap();
        }
        // A line with no end is refused once it is too long, without reading forever.
        let (client, mut server) = UnixStream::pair().unwrap();
        let feeder = thread::spawn(move || {
            let mut line = String::new();
            let mut reader = io::BufReader::new(server.try_clone().unwrap());
            reader.read_line(&mut line).unwrap();
            let _ = server.write_all(&vec![b'a'; MAX_REPLY + 10]);
        });
        assert!(matches!(
            Pmi::init_v1(client, 0, 1),
            Err(PmiError::Protocol(_))
        ));
        feeder.join().unwrap();
    }

    /// Expected request prefixes and the frames that answer them.
    type Frames = Vec<(&'static str, Vec<u8>)>;

    /// A scripted PMI-2 server: the handshake line, then frames.
    fn server_v2(init_reply: &'static str, frames: Frames) -> (UnixStream, thread::JoinHandle<()>) {
        let (client, server) = UnixStream::pair().unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let handle = thread::spawn(move || {
            let mut server = server;
            let mut line = Vec::new();
            let mut byte = [0u8];
            while server.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
                line.push(byte[0]);
            }
            assert_eq!(line, b"cmd=init pmi_version=2 pmi_subversion=0");
            server.write_all(init_reply.as_bytes()).unwrap();
            for (want, reply) in frames {
                let mut header = [0u8; 6];
                if server.read_exact(&mut header).is_err() {
                    return;
                }
                let n: usize = std::str::from_utf8(&header)
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                let mut body = vec![0u8; n];
                server.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                assert!(body.starts_with(want), "got {body:?}, expected {want:?}");
                server.write_all(&reply).unwrap();
            }
        });
        (client, handle)
    }

    fn f(body: &str) -> Vec<u8> {
        frame_v2(body).unwrap()
    }

    const INIT2: &str = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";

    #[test]
    fn pmi2_session() {
        let (stream, server) = server_v2(
            INIT2,
            vec![
                (
                    "cmd=fullinit;threaded=FALSE;pmijobid=42.0;pmirank=3;",
                    f("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;appnum=0;"),
                ),
                (
                    "cmd=kvs-put;key=rt-addr-3;value=127.0.0.1:9;",
                    f("cmd=kvs-put-response;rc=0;"),
                ),
                ("cmd=kvs-fence;", f("cmd=kvs-fence-response;rc=0;")),
                (
                    "cmd=kvs-get;jobid=42.0;srcid=-1;key=rt-addr-0;",
                    f("cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b;"),
                ),
                (
                    "cmd=kvs-get;",
                    f("cmd=kvs-get-response;rc=0;found=FALSE;"),
                ),
                (
                    "cmd=kvs-get;",
                    f("cmd=kvs-get-response;rc=1;errmsg=nope;"),
                ),
                ("cmd=finalize;", f("cmd=finalize-response;rc=0;")),
            ],
        );
        let mut pmi = Pmi::init_v2(stream, Some("42.0"), Some(3)).unwrap();
        assert_eq!((pmi.rank(), pmi.size(), pmi.version()), (3, 4, Version::V2));
        pmi.put("rt-addr-3", "127.0.0.1:9").unwrap();
        pmi.fence().unwrap();
        assert_eq!(pmi.get("rt-addr-0").unwrap(), "a;b");
        assert!(matches!(pmi.get("x"), Err(PmiError::Failed { .. })));
        match pmi.get("y") {
            Err(PmiError::Failed { rc, message, .. }) => {
                assert_eq!((rc.as_str(), message.as_str()), ("1", "nope"))
            }
            other => panic!("{other:?}"),
        }
        pmi.finalize().unwrap();
        server.join().unwrap();
    }

    #[test]
    fn pmi2_malformed_replies_are_errors() {
        let full = "cmd=fullinit;";
        let cases: Vec<(&str, &'static str, Frames)> = vec![
            (
                "bad init",
                "cmd=response_to_init pmi_version=1 rc=0\n",
                vec![],
            ),
            ("bad length", INIT2, vec![(full, b"abcdefcmd=x;".to_vec())]),
            ("oversized", INIT2, vec![(full, b"999999".to_vec())]),
            (
                "truncated",
                INIT2,
                vec![(full, b"20    cmd=fullinit-re".to_vec())],
            ),
            (
                "wrong reply",
                INIT2,
                vec![(full, f("cmd=kvs-put-response;rc=0;"))],
            ),
            (
                "no '='",
                INIT2,
                vec![(full, f("cmd=fullinit-response;junk;"))],
            ),
            (
                "no rank",
                INIT2,
                vec![(full, f("cmd=fullinit-response;rc=0;size=4;"))],
            ),
            (
                "rank out of range",
                INIT2,
                vec![(full, f("cmd=fullinit-response;rc=0;rank=4;size=4;"))],
            ),
            (
                "refused",
                INIT2,
                vec![(full, f("cmd=fullinit-response;rc=-1;errmsg=no;"))],
            ),
            ("not utf-8", INIT2, vec![(full, b"2     \xff\xfe".to_vec())]),
            ("eof", INIT2, vec![]),
        ];
        for (what, init, frames) in cases {
            let (stream, server) = server_v2(init, frames);
            let got = Pmi::init_v2(stream, None, None);
            assert!(got.is_err(), "{what}: {got:?}");
            drop(got);
            server.join().unwrap();
        }
    }

    #[test]
    fn codecs() {
        assert_eq!(frame_v2("cmd=x;").unwrap(), b"6     cmd=x;");
        let items = parse_v2("cmd=a;k=v=w;e=;;;").unwrap();
        assert_eq!(items["k"], "v=w");
        assert_eq!(items["e"], ";");
        let items = parse_v1("cmd=get_result rc=0 value=a=b").unwrap();
        assert_eq!(items["value"], "a=b");
        assert!(parse_v1("").is_err());
        assert!(parse_v2("k=v;").is_err());
    }
}

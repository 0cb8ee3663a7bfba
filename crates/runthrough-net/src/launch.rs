// SPDX-License-Identifier: MIT OR Apache-2.0
//! The launcher protocol: what a launcher such as `rtrun` hands each rank, and the control
//! connection between them.
//!
//! A launcher starts every rank with the environment variables below, listens on a loopback
//! control address, and for each rank that connects there:
//!
//! 1. sends `challenge <nonce hex>\n`;
//! 2. reads `register <rank> <listen address> <mac hex>\n`, where the MAC is HMAC-SHA256 of the
//!    job secret over the nonce, the rank and the address ([`accept_registration`] checks it);
//! 3. once every rank has registered or died, sends every rank `table <addr0> <addr1> ...\n`
//!    ([`table_line`]; `-` for a rank that died before registering);
//! 4. afterwards sends `failed <rank>\n` ([`failed_line`]) whenever a rank's process ends (a
//!    *confirmed* failure, semantics §1), and reads `suspect <rank>\n` lines ([`parse_report`])
//!    from ranks that fenced a peer: the launcher then kills that peer; and `abort <code>\n` from a
//!    rank that aborts the job (`MPI_Abort`): the launcher kills every rank and exits with
//!    that code; and `fired <trigger> <call>\n` ([`fired_line`]) from a rank whose planned
//!    fault ([`ENV_FAULT`]) fired, just before it kills itself, for the launcher's report;
//!    and, only when the launcher set [`ENV_TIMELINE`], `event ...` lines for the job's
//!    timeline ([`crate::timeline`]).
//!
//!
//! Spawning ranks (`Comm::spawn`, docs/src/semantics.md §8) adds:
//!
//! 5. a parent sends `spawn <context> <key rank> <parents> <what>\n` ([`SpawnLine`]): every
//!    parent of one spawn sends the same key, and the launcher starts the ranks once, with
//!    world ranks from the first free one up ([`ENV_UNIVERSE`] bounds them), and
//!    [`ENV_PARENT`] / [`ENV_SPAWN_ARGS`] set: the job's program and arguments
//!    ([`SpawnWhat::Job`], started at the first request), or the programs of the root's
//!    request ([`SpawnWhat::Programs`]; the others name the root, [`SpawnWhat::Root`]).
//!    A new rank registers as the others do and gets a table of every rank up to its spawn's
//!    last one, once all of its spawn registered or died;
//! 6. the launcher then sends every live rank `joined <rank> <address>\n` for each new rank
//!    ([`joined_line`]), and each parent that asked `spawned <context> <key rank> <first>\n`,
//!    or `spawn-failed <context> <key rank> <reason hex>\n` when the ranks could not be
//!    started ([`spawn_reply_line`]);
//! 7. the parents, having agreed, send `verdict <context> <key rank> run|kill\n`: the launcher
//!    sends the new ranks `run\n` (they wait for it in `init`, before any of the program
//!    runs) or kills them (they do not count against the job's exit status). When every
//!    parent of a spawn dies before a verdict, the launcher kills its ranks.
//!
//! A rank whose control connection closes halts (exit status [`EXIT_LAUNCHER_LOST`]), so a job
//! never outlives its launcher; a rank that learns it was fenced halts with [`EXIT_FENCED`]. A
//! program that kills one of its ranks on purpose ends that process with [`EXIT_INJECTED`].

use std::io::{self, Read, Write};
use std::net::TcpStream;

use crate::auth::{self, Role};

/// The rank's number in the job, `0..size`.
pub const ENV_RANK: &str = "RT_RANK";
/// The number of ranks.
pub const ENV_SIZE: &str = "RT_SIZE";
/// The launcher's control address (`127.0.0.1:PORT`).
pub const ENV_CONTROL: &str = "RT_CONTROL";
/// The job secret, 64 hex digits.
pub const ENV_SECRET: &str = "RT_SECRET";
/// Where the rank's listener binds (default `127.0.0.1`): an IP address, `route:HOST` or an
/// interface name ([`crate::bind_address`]).
pub const ENV_BIND: &str = "RT_BIND";
/// Fault injection: this rank's triggers in the fault grammar (`runthrough::fault`),
/// comma-separated, e.g. `call:K` (die when starting the K-th communication call),
/// `validate_global:K[:M]` (inside the K-th agreement on the world communicator, before
/// sending its M-th protocol message, default 1) or `all_reduce:K[:M]`.
pub const ENV_FAULT: &str = "RT_FAULT";
/// Heartbeats: `PERIOD_MS:TIMEOUT_MS` (default `500:5000`).
pub const ENV_HEARTBEAT: &str = "RT_HEARTBEAT";
/// Set to `1` for diagnostics on standard error (failures seen, connections).
pub const ENV_VERBOSE: &str = "RT_VERBOSE";
/// Which connections ranks use: `auto` (the default: a Unix-domain socket to a peer on the
/// same host, in the same network and mount namespaces, TCP to the others) or `tcp` (TCP for
/// every pair). Read by every rank; the launcher passes it through.
pub const ENV_TRANSPORT: &str = "RT_TRANSPORT";
/// The private directory (mode 0700) where ranks bind their Unix sockets, created by the
/// launcher for the job and removed by it when the job ends ([`create_socket_dir`]). Without
/// it, each rank binds an abstract socket (no file).
pub const ENV_SOCKET_DIR: &str = "RT_SOCKET_DIR";

/// How many world ranks the job may reach in all: its first ranks and those that spawns add
/// (`MPI_UNIVERSE_SIZE`; default: the job's size, no room to spawn).
pub const ENV_UNIVERSE: &str = "RT_UNIVERSE";
/// Set for a rank started by a spawn: `<context>:<parents>:<first>:<count>` ([`ParentInfo`]).
pub const ENV_PARENT: &str = "RT_PARENT";
/// The arguments a spawn gave its ranks (`InterComm::args`), each hex-encoded, comma-separated.
pub const ENV_SPAWN_ARGS: &str = "RT_SPAWN_ARGS";

/// Set to `1` by a launcher that draws a job timeline (`rtrun --timeline`): the rank reports
/// its events on its control connection ([`crate::timeline`]). Read once, at start-up.
pub const ENV_TIMELINE: &str = "RT_TIMELINE";

/// Exit status of a rank that learned it was fenced by its peers.
pub const EXIT_FENCED: i32 = 86;
/// Exit status of a rank that could not reach a majority of the ranks it believes alive for
/// longer than the heartbeat timeout (semantics §1: it is on the small side of a partition).
pub const EXIT_NO_MAJORITY: i32 = 88;
/// Exit status of a rank whose launcher went away.
pub const EXIT_LAUNCHER_LOST: i32 = 87;
/// Exit status of a rank that ended itself on purpose, by its program's own fault injection
/// (e.g. "die at iteration 25"): a fail-stop death that was planned, which the launcher counts
/// as injected, like one of its own kills, rather than as a failed rank.
pub const EXIT_INJECTED: i32 = 85;

/// A job's secret: random, one per job, handed to its ranks by the launcher.
#[derive(Clone, PartialEq, Eq)]
pub struct JobSecret(auth::Secret);

impl std::fmt::Debug for JobSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobSecret(..)")
    }
}

impl JobSecret {
    /// A fresh random secret from the operating system's random source.
    pub fn random() -> Self {
        JobSecret(auth::random_token())
    }

    /// The secret as 64 hex digits (the value of [`ENV_SECRET`]).
    pub fn to_hex(&self) -> String {
        auth::hex(&self.0)
    }

    /// Parses 64 hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        auth::unhex(text).map(JobSecret)
    }

    /// The secret's bytes, the key of the connection handshake ([`crate::auth`]).
    pub fn bytes(&self) -> &auth::Secret {
        &self.0
    }
}

/// A rank's registration with its launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The rank.
    pub rank: u32,
    /// Where its listener accepts its peers.
    pub address: String,
}

/// The longest control line accepted (a table line holds every rank's address word, up to
/// about 180 bytes each with a Unix socket).
const MAX_LINE: usize = 1 << 20;

/// Creates a fresh private directory (mode 0700) for a job's Unix sockets under
/// `$XDG_RUNTIME_DIR` (or the temporary directory), for [`ENV_SOCKET_DIR`]. The launcher
/// removes it when the job ends.
///
/// # Errors
/// When no directory can be created there.
pub fn create_socket_dir() -> io::Result<std::path::PathBuf> {
    crate::stream::create_private_dir(&crate::stream::socket_parent(), "rtrun-")
}

/// Reads one `\n`-terminated line, byte by byte (so nothing after it is consumed).
pub fn read_line(stream: &mut impl Read) -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8];
    loop {
        if stream.read(&mut byte)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if byte[0] == b'\n' {
            break;
        }
        if line.len() == MAX_LINE {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "line too long"));
        }
        line.push(byte[0]);
    }
    String::from_utf8(line).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))
}

fn registration_context(rank: u32, address: &str) -> Vec<u8> {
    let mut c = rank.to_le_bytes().to_vec();
    c.extend_from_slice(address.as_bytes());
    c
}

/// Launcher side of steps 1-2: challenges a new control connection and checks its
/// registration (a rank below `size` that proves it holds the secret).
///
/// # Errors
/// `InvalidData` for a malformed line or a wrong proof; any I/O error of the stream.
pub fn accept_registration(
    stream: &mut TcpStream,
    secret: &JobSecret,
    size: u32,
) -> io::Result<Registration> {
    let nonce = auth::random_token();
    stream.write_all(format!("challenge {}\n", auth::hex(&nonce)).as_bytes())?;
    let line = read_line(stream)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut words = line.split(' ');
    if words.next() != Some("register") {
        return Err(bad("expected a registration"));
    }
    let rank: u32 = words
        .next()
        .and_then(|w| w.parse().ok())
        .filter(|&r| r < size)
        .ok_or_else(|| bad("bad rank"))?;
    let address = words.next().ok_or_else(|| bad("no address"))?.to_string();
    let mac = words
        .next()
        .and_then(auth::unhex::<{ auth::TOKEN }>)
        .ok_or_else(|| bad("no proof"))?;
    if words.next().is_some() {
        return Err(bad("trailing words"));
    }
    let context = registration_context(rank, &address);
    if !auth::verify(&secret.0, Role::Registration, &nonce, &context, &mac) {
        return Err(bad("wrong proof"));
    }
    Ok(Registration { rank, address })
}

/// Rank side of steps 1-2.
pub fn register(
    stream: &mut TcpStream,
    secret: &JobSecret,
    rank: u32,
    address: &str,
) -> io::Result<()> {
    let line = read_line(stream)?;
    let nonce = line
        .strip_prefix("challenge ")
        .and_then(auth::unhex::<{ auth::TOKEN }>)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "expected a challenge"))?;
    let mac = auth::prove(
        &secret.0,
        Role::Registration,
        &nonce,
        &registration_context(rank, address),
    );
    stream.write_all(format!("register {rank} {address} {}\n", auth::hex(&mac)).as_bytes())
}

/// The table of listener addresses (step 3); `None` for a rank that died before registering.
pub fn table_line(addresses: &[Option<String>]) -> String {
    let mut line = String::from("table");
    for address in addresses {
        line.push(' ');
        line.push_str(address.as_deref().unwrap_or("-"));
    }
    line.push('\n');
    line
}

/// Parses a table line of `size` entries.
pub fn parse_table(line: &str, size: u32) -> Option<Vec<Option<String>>> {
    let mut words = line.split(' ');
    if words.next() != Some("table") {
        return None;
    }
    let table: Vec<Option<String>> = words.map(|w| (w != "-").then(|| w.to_string())).collect();
    (table.len() == size as usize).then_some(table)
}

/// The notice that `rank`'s process ended (step 4).
pub fn failed_line(rank: u32) -> String {
    format!("failed {rank}\n")
}

/// Parses a `failed <rank>` line.
pub fn parse_failed(line: &str) -> Option<u32> {
    line.strip_prefix("failed ")?.trim().parse().ok()
}

/// What a rank tells its launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankMessage {
    /// The rank fenced this peer (a lost connection, a missed heartbeat, bad input): kill it.
    Suspect(u32),
    /// The rank aborts the job (`MPI_Abort`): end every rank; the job's exit status is this
    /// code (1..=255).
    Abort(i32),
    /// A fault planned for the rank ([`ENV_FAULT`]) fired: it is about to kill itself.
    Fired {
        /// The fault's trigger, as the rank's `RT_FAULT` writes it (`call:8`,
        /// `validate_global:2:1`): the launcher matches it with its plan.
        trigger: String,
        /// The rank's communication call it fired in (1 = the first).
        call: u64,
    },
    /// An event for the job's timeline ([`crate::timeline`]).
    Event(crate::timeline::RankEvent),
    /// Start ranks (step 5).
    Spawn(SpawnLine),
    /// The parents' verdict on a spawn (step 7): run its ranks, or kill them.
    Verdict {
        /// The spawn's key (context id, key rank).
        key: (u64, u32),
        /// Run them.
        run: bool,
    },
}

/// Parses a line a rank sent its launcher (`suspect <rank>`, `abort <code>`,
/// `fired <trigger> <call>`, `event ...`, `spawn ...`, `verdict ...`).
pub fn parse_report(line: &str) -> Option<RankMessage> {
    if line.starts_with("spawn ") {
        return SpawnLine::parse(line).map(RankMessage::Spawn);
    }
    if let Some((key, run)) = parse_verdict(line) {
        return Some(RankMessage::Verdict { key, run });
    }
    if let Some(rest) = line.strip_prefix("event ") {
        return crate::timeline::parse_event(rest).map(RankMessage::Event);
    }
    if let Some(rest) = line.strip_prefix("fired ") {
        let mut words = rest.split_whitespace();
        let trigger = words.next()?.to_string();
        let call = words.next()?.parse().ok()?;
        return words
            .next()
            .is_none()
            .then_some(RankMessage::Fired { trigger, call });
    }
    if let Some(code) = line.strip_prefix("abort ") {
        let code: i32 = code.trim().parse().ok()?;
        return (1..=255)
            .contains(&code)
            .then_some(RankMessage::Abort(code));
    }
    let rank = line.strip_prefix("suspect ")?.trim().parse().ok()?;
    Some(RankMessage::Suspect(rank))
}

/// The notice that a rank fenced `rank` (a line [`parse_report`] reads).
pub fn suspect_line(rank: u32) -> String {
    format!("suspect {rank}\n")
}

/// The notice of a rank whose planned fault `trigger` (without spaces) fired in its `call`-th
/// communication call, sent just before it kills itself (a line [`parse_report`] reads).
pub fn fired_line(trigger: &str, call: u64) -> String {
    format!("fired {trigger} {call}\n")
}

/// The request of a rank that aborts the job with `code` (a line [`parse_report`] reads).
pub fn abort_line(code: i32) -> String {
    format!("abort {code}\n")
}

/// Hex of `text`'s bytes (arguments and reasons travel as one word).
pub fn hex_word(text: &str) -> String {
    auth::hex(text.as_bytes())
}

/// The text of a [`hex_word`].
pub fn unhex_word(word: &str) -> Option<String> {
    String::from_utf8(auth::unhex_vec(word)?).ok()
}

fn list_word(items: impl IntoIterator<Item = String>) -> String {
    list_word_with(items, ",")
}

fn list_word_with(items: impl IntoIterator<Item = String>, separator: &str) -> String {
    let words: Vec<String> = items.into_iter().collect();
    if words.is_empty() {
        "-".into()
    } else {
        words.join(separator)
    }
}

fn parse_list<T>(word: &str, item: impl Fn(&str) -> Option<T>) -> Option<Vec<T>> {
    if word == "-" {
        return Some(Vec::new());
    }
    word.split(',').map(item).collect()
}

/// Encodes a spawn's arguments for [`ENV_SPAWN_ARGS`] (and its line).
pub fn args_word(args: &[String]) -> String {
    list_word(args.iter().map(|a| hex_word(a)))
}

/// Decodes [`args_word`].
pub fn parse_args_word(word: &str) -> Option<Vec<String>> {
    parse_list(word, unhex_word)
}

/// A program a spawn starts (`MPI_Comm_spawn`'s command, one of `MPI_Comm_spawn_multiple`'s):
/// `count` processes of `argv[0]` (looked up on `PATH` unless it holds a `/`) with the
/// arguments `argv[1..]`, in `wdir` (the launcher's working directory when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnProgram {
    /// How many processes.
    pub count: u32,
    /// The program, then its arguments.
    pub argv: Vec<String>,
    /// Their working directory.
    pub wdir: Option<String>,
}

/// What a spawn starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpawnWhat {
    /// `count` ranks of the job's own program and arguments, given `args` (`Comm::spawn`):
    /// every parent asks the same, and the first request starts them.
    Job {
        /// How many.
        count: u32,
        /// What they get (`InterComm::args`).
        args: Vec<String>,
    },
    /// The programs of the root's request (`MPI_Comm_spawn`, where only the root knows the
    /// command): the launcher waits for the root's request, or fails the spawn if the root
    /// died first. This is what every parent but the root asks.
    Root(u32),
    /// These programs, each process getting its program's arguments (the root's request). An
    /// empty list is a request the root could not make (bad arguments): the spawn fails.
    Programs(Vec<SpawnProgram>),
}

impl SpawnWhat {
    /// How many ranks it starts, if this request says.
    pub fn count(&self) -> Option<u32> {
        match self {
            SpawnWhat::Job { count, .. } => Some(*count),
            SpawnWhat::Root(_) => None,
            SpawnWhat::Programs(programs) => programs
                .iter()
                .try_fold(0u32, |n, p| n.checked_add(p.count)),
        }
    }

    fn word(&self) -> String {
        match self {
            SpawnWhat::Job { count, args } => format!("job:{count}:{}", args_word(args)),
            SpawnWhat::Root(rank) => format!("root:{rank}"),
            SpawnWhat::Programs(programs) => {
                let each: Vec<String> = programs
                    .iter()
                    .map(|p| {
                        let wdir = p.wdir.as_deref().map_or("-".into(), hex_word);
                        format!("{}:{wdir}:{}", p.count, args_word(&p.argv))
                    })
                    .collect();
                format!("programs:{}", list_word_with(each, ";"))
            }
        }
    }

    fn parse(word: &str) -> Option<SpawnWhat> {
        let (kind, rest) = word.split_once(':')?;
        match kind {
            "job" => {
                let (count, args) = rest.split_once(':')?;
                Some(SpawnWhat::Job {
                    count: count.parse().ok()?,
                    args: parse_args_word(args)?,
                })
            }
            "root" => Some(SpawnWhat::Root(rest.parse().ok()?)),
            "programs" => {
                if rest == "-" {
                    return Some(SpawnWhat::Programs(Vec::new()));
                }
                let programs = rest
                    .split(';')
                    .map(|p| {
                        let mut parts = p.splitn(3, ':');
                        let count = parts.next()?.parse().ok()?;
                        let wdir = match parts.next()? {
                            "-" => None,
                            hex => Some(unhex_word(hex)?),
                        };
                        let argv = parse_args_word(parts.next()?)?;
                        Some(SpawnProgram { count, argv, wdir })
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(SpawnWhat::Programs(programs))
            }
            _ => None,
        }
    }
}

/// A parent's request to start ranks (step 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnLine {
    /// The spawn's key, the same at every parent: the joining communicator's context id ...
    pub context: u64,
    /// ... and the world rank of the spawning communicator's first member.
    pub key_rank: u32,
    /// The spawning communicator's members (world ranks, in rank order).
    pub parents: Vec<u32>,
    /// What to start.
    pub what: SpawnWhat,
}

impl SpawnLine {
    /// The line, `\n` included.
    pub fn line(&self) -> String {
        format!(
            "spawn {:x} {} {} {}\n",
            self.context,
            self.key_rank,
            list_word(self.parents.iter().map(u32::to_string)),
            self.what.word()
        )
    }

    /// Parses a `spawn` line (without its `\n`).
    pub fn parse(line: &str) -> Option<SpawnLine> {
        let mut words = line.strip_prefix("spawn ")?.split(' ');
        let context = u64::from_str_radix(words.next()?, 16).ok()?;
        let key_rank = words.next()?.parse().ok()?;
        let parents = parse_list(words.next()?, |w| w.parse().ok())?;
        let what = SpawnWhat::parse(words.next()?)?;
        words.next().is_none().then_some(SpawnLine {
            context,
            key_rank,
            parents,
            what,
        })
    }
}

/// The launcher's answer to a spawn (step 6): the first world rank of the new ranks and how
/// many, or why they could not be started.
pub fn spawn_reply_line(context: u64, key_rank: u32, outcome: &SpawnOutcome) -> String {
    match outcome {
        Ok((first, count)) => format!("spawned {context:x} {key_rank} {first} {count}\n"),
        Err(reason) => format!("spawn-failed {context:x} {key_rank} {}\n", hex_word(reason)),
    }
}

/// The launcher's answer to a spawn: its first world rank and how many, or why not.
pub type SpawnOutcome = Result<(u32, u32), String>;

/// A spawn's key and its launcher's answer ([`spawn_reply_line`]).
pub type SpawnReply = ((u64, u32), SpawnOutcome);

/// Parses [`spawn_reply_line`].
pub fn parse_spawn_reply(line: &str) -> Option<SpawnReply> {
    let (ok, rest) = match line.split_once(' ')? {
        ("spawned", rest) => (true, rest),
        ("spawn-failed", rest) => (false, rest),
        _ => return None,
    };
    let mut words = rest.split(' ');
    let context = u64::from_str_radix(words.next()?, 16).ok()?;
    let key_rank = words.next()?.parse().ok()?;
    let outcome = if ok {
        Ok((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
    } else {
        Err(unhex_word(words.next()?)?)
    };
    words
        .next()
        .is_none()
        .then_some(((context, key_rank), outcome))
}

/// A new rank's address, for every live rank (step 6).
pub fn joined_line(rank: u32, address: &str) -> String {
    format!("joined {rank} {address}\n")
}

/// Parses [`joined_line`].
pub fn parse_joined(line: &str) -> Option<(u32, String)> {
    let (rank, address) = line.strip_prefix("joined ")?.split_once(' ')?;
    Some((rank.parse().ok()?, address.to_string()))
}

/// The parents' decision on a spawn (step 7): `run` its ranks or kill them.
pub fn verdict_line(context: u64, key_rank: u32, run: bool) -> String {
    let verdict = if run { "run" } else { "kill" };
    format!("verdict {context:x} {key_rank} {verdict}\n")
}

/// Parses [`verdict_line`].
pub fn parse_verdict(line: &str) -> Option<((u64, u32), bool)> {
    let mut words = line.strip_prefix("verdict ")?.split(' ');
    let context = u64::from_str_radix(words.next()?, 16).ok()?;
    let key_rank = words.next()?.parse().ok()?;
    let run = match words.next()? {
        "run" => true,
        "kill" => false,
        _ => return None,
    };
    words.next().is_none().then_some(((context, key_rank), run))
}

/// What [`ENV_PARENT`] tells a rank started by a spawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentInfo {
    /// The joining communicator's context id.
    pub context: u64,
    /// The parents' world ranks (the spawning communicator, in rank order).
    pub parents: Vec<u32>,
    /// The world rank of the spawn's first new rank.
    pub first: u32,
    /// How many ranks the spawn started.
    pub count: u32,
}

impl ParentInfo {
    /// The value of [`ENV_PARENT`].
    pub fn value(&self) -> String {
        format!(
            "{:x}:{}:{}:{}",
            self.context,
            list_word(self.parents.iter().map(u32::to_string)),
            self.first,
            self.count
        )
    }

    /// Parses [`ParentInfo::value`].
    pub fn parse(value: &str) -> Option<ParentInfo> {
        let mut parts = value.split(':');
        let context = u64::from_str_radix(parts.next()?, 16).ok()?;
        let parents = parse_list(parts.next()?, |w| w.parse().ok())?;
        let first = parts.next()?.parse().ok()?;
        let count = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some(ParentInfo {
            context,
            parents,
            first,
            count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn registration_succeeds_with_the_secret_and_fails_without() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let secret = JobSecret::random();
        for (rank_secret, ok) in [(secret.clone(), true), (JobSecret::random(), false)] {
            let client = std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                register(&mut s, &rank_secret, 3, "127.0.0.1:9").unwrap();
            });
            let (mut s, _) = listener.accept().unwrap();
            let got = accept_registration(&mut s, &secret, 4);
            client.join().unwrap();
            assert_eq!(got.is_ok(), ok, "{got:?}");
            if ok {
                assert_eq!(
                    got.unwrap(),
                    Registration {
                        rank: 3,
                        address: "127.0.0.1:9".into()
                    }
                );
            }
        }
    }

    #[test]
    fn spawn_lines_round_trip_and_bad_ones_are_refused() {
        let spawn = SpawnLine {
            context: 0xabc0_0001,
            key_rank: 2,
            parents: vec![2, 4, 5],
            what: SpawnWhat::Job {
                count: 3,
                args: vec!["--runthrough-respawn".into(), "1,4".into(), "a b".into()],
            },
        };
        assert_eq!(
            SpawnLine::parse(spawn.line().trim_end()),
            Some(spawn.clone())
        );
        let programs = SpawnWhat::Programs(vec![
            SpawnProgram {
                count: 2,
                argv: vec!["./worker".into(), "x;y:z".into()],
                wdir: Some("/tmp/a b".into()),
            },
            SpawnProgram {
                count: 1,
                argv: vec!["hostname".into()],
                wdir: None,
            },
        ]);
        assert_eq!(programs.count(), Some(3));
        for what in [
            programs,
            SpawnWhat::Root(4),
            SpawnWhat::Programs(Vec::new()),
            SpawnWhat::Job {
                count: 1,
                args: Vec::new(),
            },
        ] {
            let line = SpawnLine {
                what,
                ..spawn.clone()
            };
            assert_eq!(SpawnLine::parse(line.line().trim_end()), Some(line));
        }
        let bare = SpawnLine {
            what: SpawnWhat::Root(2),
            ..spawn
        };
        assert_eq!(SpawnLine::parse("spawn 1 2 3"), None);
        assert_eq!(SpawnLine::parse("spawn 1 2 3 job:1:- x"), None);
        assert_eq!(SpawnLine::parse("spawn 1 2 3 job:1:zz"), None);
        assert_eq!(SpawnLine::parse("spawn 1 2 3 what:1"), None);
        for outcome in [Ok((9, 2)), Err("no room: 4 of 4".to_string())] {
            let line = spawn_reply_line(0xff, 1, &outcome);
            assert_eq!(
                parse_spawn_reply(line.trim_end()),
                Some(((0xff, 1), outcome))
            );
        }
        assert_eq!(parse_spawn_reply("spawned ff 1 2"), None);
        assert_eq!(
            parse_joined(joined_line(8, "127.0.0.1:5,unix:/x").trim_end()),
            Some((8, "127.0.0.1:5,unix:/x".into()))
        );
        for run in [true, false] {
            let line = verdict_line(0x10, 0, run);
            assert_eq!(parse_verdict(line.trim_end()), Some(((0x10, 0), run)));
            assert_eq!(
                parse_report(line.trim_end()),
                Some(RankMessage::Verdict {
                    key: (0x10, 0),
                    run
                })
            );
        }
        let line = SpawnLine::parse(bare.line().trim_end()).unwrap().line();
        assert!(matches!(
            parse_report(line.trim_end()),
            Some(RankMessage::Spawn(_))
        ));
        assert_eq!(parse_verdict("verdict 10 0 maybe"), None);
        let info = ParentInfo {
            context: 0x77,
            parents: vec![0, 1, 2],
            first: 8,
            count: 2,
        };
        assert_eq!(ParentInfo::parse(&info.value()), Some(info));
        assert_eq!(ParentInfo::parse("77:0,1:8"), None);
        assert_eq!(unhex_word("4"), None);
    }

    #[test]
    fn tables_and_reports_parse() {
        let line = table_line(&[Some("a:1".into()), None]);
        assert_eq!(
            parse_table(line.trim_end(), 2),
            Some(vec![Some("a:1".into()), None])
        );
        assert_eq!(parse_table("table a", 2), None);
        assert_eq!(
            parse_report(suspect_line(5).trim_end()),
            Some(RankMessage::Suspect(5))
        );
        assert_eq!(parse_report("suspect x"), None);
        assert_eq!(
            parse_report(abort_line(3).trim_end()),
            Some(RankMessage::Abort(3))
        );
        assert_eq!(parse_report("abort 0"), None);
        assert_eq!(parse_report("abort 256"), None);
        assert_eq!(parse_report("abort x"), None);
        assert_eq!(
            parse_report(fired_line("validate_global:2:1", 12).trim_end()),
            Some(RankMessage::Fired {
                trigger: "validate_global:2:1".into(),
                call: 12
            })
        );
        assert_eq!(parse_report("fired call:3"), None);
        assert_eq!(parse_report("fired call:3 x"), None);
        assert_eq!(parse_report("fired call:3 3 more"), None);
        assert_eq!(
            parse_report("event learned 3"),
            Some(RankMessage::Event(crate::timeline::RankEvent::Learned(3)))
        );
        assert_eq!(parse_report("event learned"), None);
    }
}

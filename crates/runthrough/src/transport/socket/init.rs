// SPDX-License-Identifier: MIT OR Apache-2.0
//! `runthrough::init`: a rank of a multi-process job bootstraps from its launcher.

use runthrough_core::WorldRank;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::comm::Comm;
use runthrough_core::fault::Trigger;
use runthrough_core::settings::{self, SettingError, Transport};

use crate::endpoint::Endpoint;
use crate::signal::Signal;
use runthrough_net::shm::{Bell, Inbox};

use super::tcp::{Cause, Config, Tcp};
use runthrough_net::launch::{self, JobSecret};
use runthrough_net::local;
use runthrough_net::pmi;
use runthrough_net::stream::{self, Address, Listener, UnixSocket};

/// How long an aborting rank waits for its launcher to end it ([`Universe::abort`]).
const ABORT_GRACE: Duration = Duration::from_secs(5);

/// How long `init` waits for every peer to connect before fencing the missing ones.
const CONNECT_DEADLINE: Duration = Duration::from_secs(30);

/// A multi-process job as one rank sees it: its world communicator over TCP.
///
/// ```no_run
/// // Run under the launcher: `rtrun -n 4 target/release/tcp_ring` (runthrough-examples).
/// let universe = runthrough::init().expect("started by rtrun");
/// let world = universe.world();
/// let next = (world.rank() + 1) % world.size();
/// world.send(&[world.rank()], next, 0)?;
/// # Ok::<(), runthrough::Error>(())
/// ```
///
/// Dropping the universe finalizes this rank ([`Universe::finalize`]).
#[derive(Debug)]
pub struct Universe {
    world: Comm,
    transport: Arc<Tcp>,
    finalized: bool,
}

impl Universe {
    /// The world communicator (`MPI_COMM_WORLD`): every rank of the job, numbered as the
    /// launcher numbered them.
    pub fn world(&self) -> &Comm {
        &self.world
    }

    /// How many world ranks the job may reach in all (`MPI_UNIVERSE_SIZE`): its first ranks
    /// and those spawns may add (`rtrun --universe-size`; the job's size under other
    /// launchers, which cannot spawn).
    pub fn universe_size(&self) -> u32 {
        self.transport.size()
    }

    /// Ends this rank's part in the job (`MPI_Finalize`): waits until every live rank has
    /// reached finalize too, through a fault-tolerant agreement on the world communicator (so it
    /// never blocks on, or reports, a failed rank). Then it leaves: it sends the agreement
    /// messages it still owes its peers and says goodbye on every connection, so that no peer
    /// takes its exit for a failure (docs/src/semantics.md §1, §3.4). The process may exit
    /// afterwards.
    ///
    /// Dropping the universe calls this, except while panicking: a rank that panics dies, and
    /// its peers see it fail.
    pub fn finalize(mut self) {
        self.finalize_once();
    }

    /// Ends the job (`MPI_Abort`): under rtrun, tells the launcher, which kills every rank
    /// of the job (this one included) and exits with `code`; this rank waits to be killed, and
    /// exits with `code` if that has not happened within a few seconds. Without a launcher's
    /// control connection (Hydra's `mpiexec`, `srun`, a singleton) only this process ends, with
    /// exit status `code`: the others see it fail. `code` outside 1..=255 is taken as 1 (an
    /// abort is never a success).
    pub fn abort(&self, code: i32) -> ! {
        let code = if (1..=255).contains(&code) { code } else { 1 };
        if self.transport.tell_launcher_abort(code) {
            std::thread::sleep(ABORT_GRACE);
        }
        std::process::exit(code)
    }

    /// Finalize's agreement: whether it decided. Waits on the request by the rank's wait
    /// policy ([`crate::wait`], woken by every event at this rank) until it decides, fails, or
    /// the transport gives it up for lack of a majority ([`Tcp::begin_finalize`], which rings
    /// the rank's signal); a request given up is left to the engine, unwaited.
    fn finalize_agreement(&self) -> bool {
        let Ok(mut request) = self.world.ivalidate_global() else {
            return false;
        };
        let process = &self.world.process;
        loop {
            let seen = process.endpoint.signal.current();
            match request.test() {
                Ok(Some(_)) => return true,
                Err(_) => return false,
                Ok(None) => {}
            }
            if self.transport.finalize_abandoned() {
                // Dropping the request would wait for the agreement, which cannot end.
                std::mem::forget(request);
                return false;
            }
            process.wait_past(seen);
        }
    }

    fn finalize_once(&mut self) {
        if !self.finalized {
            self.finalized = true;
            crate::timeline::finalize(&self.world.process.endpoint);
            self.transport.begin_finalize();
            let decided = self.finalize_agreement();
            // Peers exit from here on: neither their ends nor a lost majority halt this rank.
            // It also removes this rank's Unix socket (every live peer is connected by now),
            // and, once it decided the agreement, says goodbye to every peer.
            self.transport.finish(decided);
        }
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.finalize_once();
        }
    }
}

/// Why [`init`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum InitError {
    /// A launcher variable is missing: the program was not started by a launcher.
    NotLaunched {
        /// The missing variable.
        variable: &'static str,
    },
    /// A launcher variable does not parse.
    BadEnvironment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// An `RT_*` setting is refused (`RT_UNEXPECTED_CAP=0`, `RT_FAULT=call:0`, ...): the
    /// variable, its value and why.
    BadSetting(SettingError),
    /// A peer runs on another host (or network namespace) while this job's listeners bind to
    /// loopback, the default: the ranks could never connect. `RT_BIND` names an address, an
    /// interface or a route the hosts share.
    LoopbackAcrossHosts {
        /// The first such peer.
        peer: u32,
        /// The loopback address that cannot be reached from there (this rank's or the peer's).
        address: String,
    },
    /// The other ranks did not all reach the PMI fence within `RT_INIT_TIMEOUT`: one died or
    /// hung before it published its address (under PMI nothing tells the others).
    StartTimeout {
        /// How long this rank waited.
        waited: Duration,
    },
    /// Talking to the launcher or binding the listener failed.
    Io {
        /// What was being done.
        doing: &'static str,
        /// The error.
        error: io::Error,
    },
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::NotLaunched { variable } => {
                write!(
                    f,
                    "{variable} is not set: start the program with rtrun (or a PMI launcher)"
                )
            }
            InitError::BadEnvironment { variable, value } => {
                write!(f, "{variable}={value:?} does not parse")
            }
            InitError::BadSetting(error) => write!(f, "{error}"),
            InitError::StartTimeout { waited } => write!(
                f,
                "the other ranks did not all start within {:.1} s (RT_INIT_TIMEOUT): a rank \
                 died or hung before it published its address, and the launcher did not end \
                 the job (docs/src/semantics.md §4)",
                waited.as_secs_f64()
            ),
            InitError::LoopbackAcrossHosts { peer, address } => write!(
                f,
                "rank {peer} runs on another host, but the job's ranks listen on loopback \
                 ({address}): set RT_BIND to an address, an interface or route:HOST that every \
                 host reaches (docs/src/semantics.md §4)"
            ),
            InitError::Io { doing, error } => write!(f, "{doing}: {error}"),
        }
    }
}

impl std::error::Error for InitError {}

fn var(name: &'static str) -> Result<Option<String>, InitError> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(_) => Err(InitError::BadEnvironment {
            variable: name,
            value: "(not UTF-8)".into(),
        }),
    }
}

fn required(name: &'static str) -> Result<String, InitError> {
    var(name)?.ok_or(InitError::NotLaunched { variable: name })
}

fn parsed<T: std::str::FromStr>(name: &'static str, value: &str) -> Result<T, InitError> {
    value.parse().map_err(|_| InitError::BadEnvironment {
        variable: name,
        value: value.to_string(),
    })
}

fn io(doing: &'static str) -> impl FnOnce(io::Error) -> InitError {
    move |error| InitError::Io { doing, error }
}

/// This rank's `RT_*` settings, every one checked before anything starts.
struct Settings {
    config: Config,
    unexpected_cap: Option<usize>,
    faults: Vec<Trigger>,
    /// `RT_INIT_TIMEOUT`: how long the PMI fence may wait for the other ranks.
    init_timeout: Duration,
}

fn parse_settings() -> Result<Settings, InitError> {
    let config = parse_config()?;
    let unexpected_cap = unexpected_cap()?;
    let faults = match var(launch::ENV_FAULT)? {
        Some(value) => settings::fault(&value).map_err(InitError::BadSetting)?,
        None => Vec::new(),
    };
    if let Some(value) = var(launch::ENV_BIND)? {
        settings::bind(&value).map_err(InitError::BadSetting)?;
    }
    if let Some(value) = var(pmi::ENV_VERSION)? {
        settings::pmi(&value).map_err(InitError::BadSetting)?;
    }
    // Read by the C library; checked here with the others, so a bad value stops every program.
    if let Some(value) = var(settings::Setting::InitialErrhandler.name())? {
        settings::initial_errhandler(&value).map_err(InitError::BadSetting)?;
    }
    let init_timeout = match var(settings::Setting::InitTimeout.name())? {
        Some(value) => settings::init_timeout(&value).map_err(InitError::BadSetting)?,
        None => settings::DEFAULT_INIT_TIMEOUT,
    };
    Ok(Settings {
        config,
        unexpected_cap,
        faults,
        init_timeout,
    })
}

fn parse_config() -> Result<Config, InitError> {
    let mut config = Config::default();
    if let Some(value) = var(launch::ENV_HEARTBEAT)? {
        let (period, timeout) = settings::heartbeat(&value).map_err(InitError::BadSetting)?;
        config.heartbeat_period = period;
        config.heartbeat_timeout = timeout;
    }
    if let Some(value) = var(launch::ENV_VERBOSE)? {
        config.verbose = settings::verbose(&value).map_err(InitError::BadSetting)?;
    }
    let transport = match var(launch::ENV_TRANSPORT)? {
        Some(value) => settings::transport(&value).map_err(InitError::BadSetting)?,
        None => Transport::Auto,
    };
    config.local_identity = match transport {
        Transport::Auto | Transport::Unix | Transport::Shm => stream::local_identity(),
        Transport::Tcp => None,
    };
    config.shm =
        matches!(transport, Transport::Auto | Transport::Shm) && config.local_identity.is_some();
    if let Some(value) = var(settings::Setting::Connect.name())? {
        config.connect_all = settings::connect_all(&value).map_err(InitError::BadSetting)?;
    }
    Ok(config)
}

/// The cap on unexpected bytes from [`crate::ENV_UNEXPECTED_CAP`], if it is set.
fn unexpected_cap() -> Result<Option<usize>, InitError> {
    match var(crate::ENV_UNEXPECTED_CAP)? {
        Some(value) => settings::unexpected_cap(&value)
            .map(Some)
            .map_err(InitError::BadSetting),
        None => Ok(None),
    }
}

/// The address a rank's listener binds to and publishes, from [`launch::ENV_BIND`]
/// (default `127.0.0.1`): an IP address, `route:HOST` or an interface name, as
/// [`runthrough_net::bind_address`] reads them.
fn bind_address() -> Result<String, InitError> {
    let spec = var(launch::ENV_BIND)?.unwrap_or_else(|| "127.0.0.1".into());
    runthrough_net::bind_address(&spec)
        .map(|ip| ip.to_string())
        .map_err(io("choosing the address RT_BIND names"))
}

/// This rank's listeners and the address word it publishes.
struct Listeners {
    tcp: TcpListener,
    unix: Option<(Listener, UnixSocket)>,
    address: String,
}

/// Binds the TCP listener and, unless Unix sockets are off, a Unix one in the launcher's socket
/// directory ([`launch::ENV_SOCKET_DIR`]) or an abstract one without it. A Unix socket that
/// cannot be bound is left out (peers use TCP), with a diagnostic when verbose.
fn bind_listeners(rank: u32, config: &Config) -> Result<Listeners, InitError> {
    let bind = bind_address()?;
    let tcp = TcpListener::bind((bind.as_str(), 0)).map_err(io("binding the listener"))?;
    let tcp_address = tcp
        .local_addr()
        .map_err(io("reading the listener's address"))?
        .to_string();
    let mut address = Address {
        tcp: tcp_address,
        unix: None,
        host: None,
    };
    let mut unix = None;
    if let Some(host) = &config.local_identity {
        let dir = var(launch::ENV_SOCKET_DIR)?.map(std::path::PathBuf::from);
        match UnixSocket::bind(dir.as_deref(), &rank.to_string()) {
            Ok((listener, socket)) => {
                address.unix = Some((socket.path.clone(), host.clone()));
                unix = Some((Listener::Unix(listener), socket));
            }
            Err(e) if config.verbose => super::tcp::stderr_line(format_args!(
                "runthrough rank {rank}: no unix socket ({e}): peers connect over tcp"
            )),
            Err(_) => {}
        }
    }
    if address.unix.is_none() {
        // The host's identity is published without a Unix socket too (TCP only): collectives
        // group ranks by host from it (`host_classes`).
        address.host = config
            .local_identity
            .clone()
            .or_else(stream::local_identity);
    }
    Ok(Listeners {
        tcp,
        unix,
        address: address.word(),
    })
}

/// Starts this process's rank of a multi-process job, from the environment its launcher set.
///
/// - Under `rtrun` ([`launch`] lists the variables it sets), the rank registers with rtrun and
///   gets the table of addresses and the job secret from it; rtrun confirms failures (a rank's
///   process ended) and kills fenced ranks.
/// - Under a PMI launcher (`PMI_FD` set and no `RT_RANK`: MPICH's Hydra `mpiexec`, Slurm's
///   `srun --mpi=pmi2`), rank and size come from PMI ([`runthrough_net::pmi`]); every rank puts its
///   listener's address in the PMI key-value space, rank 0 also a fresh random job secret, and
///   after the fence every rank gets them all and ends its PMI session (PMI is used for the
///   bootstrap only). The secret is then only as secret as the PMI
///   channel (the launcher's own connections, and who can read its key-value space), not a
///   launcher-handed secret. Failures are found by closed connections and heartbeats only (no
///   launcher confirms a process exit), so a rank enters the detectors only once a majority of
///   the ranks believed alive fenced it, and a fenced rank halts by itself when it learns it
///   was fenced or loses its majority (nothing kills it for us).
///
/// Returns once this rank is connected to every peer that is alive (peers that died meanwhile
/// are already known failed).
///
/// # Errors
/// [`InitError::NotLaunched`] when neither launcher's variables are present; the other variants
/// when they are wrong or the launcher cannot be reached.
pub fn init() -> Result<Universe, InitError> {
    let settings = parse_settings()?;
    if var(launch::ENV_RANK)?.is_none() && pmi::detected() {
        return init_pmi(settings);
    }
    let rank: u32 = parsed(launch::ENV_RANK, &required(launch::ENV_RANK)?)?;
    let size: u32 = parsed(launch::ENV_SIZE, &required(launch::ENV_SIZE)?)?;
    let universe: u32 = match var(launch::ENV_UNIVERSE)? {
        Some(value) => parsed(launch::ENV_UNIVERSE, &value)?,
        None => size,
    };
    let spawned = spawned_from_env()?;
    let ranks = match &spawned {
        None => 0..size,
        Some((info, _)) => info.first..info.first.saturating_add(info.count),
    };
    if size == 0 || universe < size || !ranks.contains(&rank) || ranks.end > universe.max(size) {
        return Err(InitError::BadEnvironment {
            variable: launch::ENV_RANK,
            value: format!("{rank} of {size} (universe {universe}, ranks {ranks:?})"),
        });
    }
    let control = required(launch::ENV_CONTROL)?;
    let secret_hex = required(launch::ENV_SECRET)?;
    let secret = JobSecret::from_hex(&secret_hex).ok_or(InitError::BadEnvironment {
        variable: launch::ENV_SECRET,
        value: "(not 64 hex digits)".into(),
    })?;
    let Settings {
        config,
        unexpected_cap,
        faults,
        ..
    } = settings;
    let (endpoint, inbox) = endpoint_for(rank, size, universe, &config, spawned.as_ref());
    endpoint.plan_faults(faults);
    let listeners = bind_listeners(rank, &config)?;
    let address = listeners.address.clone();
    let mut control_stream =
        TcpStream::connect(&control).map_err(io("connecting to the launcher"))?;
    // The launcher's failure notices are small writes: no Nagle delay (40 ms with delayed ACKs).
    control_stream
        .set_nodelay(true)
        .map_err(io("configuring the launcher's connection"))?;
    launch::register(&mut control_stream, &secret, rank, &address)
        .map_err(io("registering with the launcher"))?;
    let mut died_early = Vec::new();
    let mut joined = Vec::new();
    let bad_line = |line: &str| InitError::BadEnvironment {
        variable: launch::ENV_CONTROL,
        value: format!("launcher sent {line:?}"),
    };
    let mut table = loop {
        let line = launch::read_line(&mut control_stream).map_err(io("reading the table"))?;
        if let Some(r) = launch::parse_failed(&line) {
            died_early.push(r);
            continue;
        }
        if let Some(join) = launch::parse_joined(&line) {
            joined.push(join);
            continue;
        }
        break launch::parse_table(&line, ranks.end).ok_or_else(|| bad_line(&line))?;
    };
    if spawned.is_some() {
        // A spawned rank runs none of the program before its parents' verdict: the launcher
        // says `run`, or kills it.
        loop {
            let line = launch::read_line(&mut control_stream)
                .map_err(io("waiting for the parents' verdict"))?;
            if line == "run" {
                break;
            } else if let Some(r) = launch::parse_failed(&line) {
                died_early.push(r);
            } else if let Some(join) = launch::parse_joined(&line) {
                joined.push(join);
            } else {
                return Err(bad_line(&line));
            }
        }
    }
    let hosts = spawned.is_none().then(|| host_classes(&table));
    for r in died_early {
        if let Some(entry) = table.get_mut(r as usize) {
            *entry = None;
        }
    }
    start(Started {
        rank,
        size,
        universe,
        endpoint,
        unexpected_cap,
        secret,
        config,
        listeners,
        table,
        hosts,
        control: Some(control_stream),
        local_pids: Vec::new(),
        // rtrun starts every rank of its job on its own host.
        local_ranks: ranks.end as usize,
        inbox,
        spawned,
        joined,
    })
}

/// A rank started by a spawn: what `RT_PARENT` and `RT_SPAWN_ARGS` say (`None` for a rank the
/// launcher started with the job).
fn spawned_from_env() -> Result<Option<(launch::ParentInfo, Vec<String>)>, InitError> {
    let Some(value) = var(launch::ENV_PARENT)? else {
        return Ok(None);
    };
    let info = launch::ParentInfo::parse(&value).ok_or(InitError::BadEnvironment {
        variable: launch::ENV_PARENT,
        value: value.clone(),
    })?;
    let args = match var(launch::ENV_SPAWN_ARGS)? {
        Some(word) => launch::parse_args_word(&word).ok_or(InitError::BadEnvironment {
            variable: launch::ENV_SPAWN_ARGS,
            value: word,
        })?,
        None => Vec::new(),
    };
    Ok(Some((info, args)))
}

/// Starts this process as a job of one rank without any launcher (MPI's *singleton*
/// `MPI_INIT`, "Singleton MPI_INIT" in the MPI standard's process-creation chapter): rank 0 of
/// a world of size 1, with a fresh job secret. The same settings as
/// under a launcher apply (`RT_HEARTBEAT`, `RT_FAULT`, `RT_BIND`, ...).
///
/// # Errors
/// A bad setting (`InitError::BadSetting`), or binding the listener failed.
pub fn init_singleton() -> Result<Universe, InitError> {
    let Settings {
        config,
        unexpected_cap,
        faults,
        ..
    } = parse_settings()?;
    let (endpoint, inbox) = endpoint_for(0, 1, 1, &config, None);
    endpoint.plan_faults(faults);
    let listeners = bind_listeners(0, &config)?;
    let table = vec![Some(listeners.address.clone())];
    start(Started {
        rank: 0,
        size: 1,
        endpoint,
        unexpected_cap,
        secret: JobSecret::random(),
        config,
        listeners,
        table,
        hosts: None,
        control: None,
        local_pids: Vec::new(),
        local_ranks: 1,
        universe: 1,
        spawned: None,
        joined: Vec::new(),
        inbox,
    })
}

/// [`init`], or [`init_singleton`] when the program was started by no launcher at all (neither
/// rtrun's `RT_RANK` nor a PMI launcher's variables are set), as an MPI library does.
///
/// # Errors
/// Those of [`init`] when a launcher's variables are present, of [`init_singleton`] otherwise.
pub fn init_or_singleton() -> Result<Universe, InitError> {
    match init() {
        Err(InitError::NotLaunched { variable }) if variable == launch::ENV_RANK => {
            init_singleton()
        }
        other => other,
    }
}

/// The PMI key of a rank's listener address.
fn address_key(rank: u32) -> String {
    format!("rt-addr-{rank}")
}

/// The PMI key of a rank's host and process record ([`local::record`]).
fn host_key(rank: u32) -> String {
    format!("rt-host-{rank}")
}

/// The PMI key of a rank's network identity ([`local::network_identity`]).
fn network_key(rank: u32) -> String {
    format!("rt-net-{rank}")
}

/// The first peer that cannot reach this rank's listener, or whose listener this rank cannot
/// reach, because one of the two listens on loopback and they are in different network
/// namespaces (hosts). `peers` holds each peer's rank, network identity and address word; an
/// unknown identity (`-`) is never a mismatch.
fn loopback_across_hosts<'a>(
    here: &str,
    address: &str,
    peers: impl IntoIterator<Item = (u32, &'a str, &'a str)>,
) -> Option<(u32, String)> {
    let loopback = |word: &str| {
        let tcp = Address::parse(word).tcp;
        tcp.parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
            .then_some(tcp)
    };
    if here == "-" {
        return None;
    }
    let mine = loopback(address);
    peers.into_iter().find_map(|(peer, network, word)| {
        if network == "-" || network == here {
            return None;
        }
        mine.clone().or_else(|| loopback(word)).map(|a| (peer, a))
    })
}

/// How long a rank whose start timed out waits for the launcher to acknowledge that it leaves
/// the PMI session.
const LEAVE_WAIT: Duration = Duration::from_secs(1);

/// The PMI key of the job secret (put by rank 0).
const SECRET_KEY: &str = "rt-secret";

fn init_pmi(settings: Settings) -> Result<Universe, InitError> {
    let pmi_error = |doing: &'static str| {
        move |e: pmi::PmiError| InitError::Io {
            doing,
            error: io::Error::other(e.to_string()),
        }
    };
    let mut client =
        pmi::from_env_waiting(settings.init_timeout).map_err(pmi_error("starting PMI"))?;
    let (rank, size) = (client.rank(), client.size());
    let Settings {
        config,
        unexpected_cap,
        faults,
        init_timeout,
    } = settings;
    let (endpoint, inbox) = endpoint_for(rank, size, size, &config, None);
    endpoint.plan_faults(faults);
    let listeners = bind_listeners(rank, &config)?;
    let address = listeners.address.clone();
    client
        .put(&address_key(rank), &address)
        .map_err(pmi_error("putting the address in the PMI key-value space"))?;
    client
        .put(&host_key(rank), &local::record())
        .map_err(pmi_error(
            "putting the host record in the PMI key-value space",
        ))?;
    let network = local::network_identity().unwrap_or_else(|| "-".into());
    client.put(&network_key(rank), &network).map_err(pmi_error(
        "putting the network identity in the PMI key-value space",
    ))?;
    if rank == 0 {
        client
            .put(SECRET_KEY, &JobSecret::random().to_hex())
            .map_err(pmi_error("putting the job secret"))?;
    }
    client.fence().map_err(|e| {
        if e.is_timeout() {
            // Leave the PMI session before returning: to Hydra, a process that exits with
            // its connection open crashed, and it would kill the other ranks while they are
            // still saying why their own start failed. Best effort: the error stands.
            let _ = client.leave(LEAVE_WAIT);
            InitError::StartTimeout {
                waited: init_timeout,
            }
        } else {
            pmi_error("the PMI fence")(e)
        }
    })?;
    let secret_hex = client
        .get(SECRET_KEY)
        .map_err(pmi_error("getting the job secret"))?;
    let secret = JobSecret::from_hex(&secret_hex).ok_or(InitError::BadEnvironment {
        variable: pmi::ENV_FD,
        value: "(the PMI job secret is not 64 hex digits)".into(),
    })?;
    let mut table = Vec::with_capacity(size as usize);
    for peer in 0..size {
        table.push(if peer == rank {
            Some(address.clone())
        } else {
            Some(
                client
                    .get(&address_key(peer))
                    .map_err(pmi_error("getting a peer's address"))?,
            )
        });
    }
    let mut networks = Vec::with_capacity(size as usize);
    for peer in (0..size).filter(|&p| p != rank) {
        let identity = client
            .get(&network_key(peer))
            .map_err(pmi_error("getting a peer's network identity"))?;
        networks.push((peer, identity));
    }
    let peers = networks.iter().map(|(peer, identity)| {
        let word = table[*peer as usize].as_deref().unwrap_or_default();
        (*peer, identity.as_str(), word)
    });
    if let Some((peer, address)) = loopback_across_hosts(&network, &address, peers) {
        return Err(InitError::LoopbackAcrossHosts { peer, address });
    }
    let here = local::host_identity();
    let mut local_pids = Vec::with_capacity(size as usize);
    for peer in 0..size {
        local_pids.push(if peer == rank {
            None
        } else {
            let record = client
                .get(&host_key(peer))
                .map_err(pmi_error("getting a peer's host record"))?;
            local::local_pid(&record, here.as_deref())
        });
    }
    // PMI is only the bootstrap: the session ends here, so that a rank that dies later is,
    // to the launcher, a process that exits after finalize (Hydra aborts the whole job when a
    // PMI connection closes before finalize, whatever the exit status).
    client.finalize().map_err(pmi_error("PMI finalize"))?;
    start(Started {
        rank,
        size,
        endpoint,
        unexpected_cap,
        secret,
        config,
        listeners,
        hosts: Some(host_classes(&table)),
        table,
        control: None,
        local_ranks: 1 + local_pids.iter().flatten().count(),
        local_pids,
        inbox,
        universe: size,
        spawned: None,
        joined: Vec::new(),
    })
}

/// What a bootstrap learned, for [`start`].
struct Started {
    rank: u32,
    size: u32,
    /// World ranks the job may reach (its size, and room for spawned ranks).
    universe: u32,
    /// For a rank started by a spawn: its parents and the spawn's arguments.
    spawned: Option<(launch::ParentInfo, Vec<String>)>,
    /// Spawned ranks the launcher said joined before this rank started.
    joined: Vec<(u32, String)>,
    endpoint: Arc<Endpoint>,
    unexpected_cap: Option<usize>,
    secret: JobSecret,
    config: Config,
    listeners: Listeners,
    /// Every rank's listener address; `None` for a rank known dead.
    table: Vec<Option<String>>,
    /// Each rank's host class ([`host_classes`]) from the table as every rank of the job got
    /// it, before this rank's edits; `None` for a spawned rank (its parents learn its host at
    /// their own times, so nobody groups with it).
    hosts: Option<Vec<Option<u32>>>,
    /// rtrun's control connection.
    control: Option<TcpStream>,
    /// The PIDs of the peers that run on this host (empty: none known), for confirming their
    /// deaths ([`runthrough_net::local`]).
    local_pids: Vec<Option<u32>>,
    /// The ranks of the job on this host, this one included (start-up's time-outs).
    local_ranks: usize,
    /// This rank's shared-memory inbox, unless shared memory is off or was refused.
    inbox: Option<Inbox>,
}

/// This rank's endpoint, with its inbox when shared memory is on (the default, `RT_TRANSPORT=auto` or `shm`, on a
/// host with Unix sockets): then the endpoint's doorbell is the inbox's application bell, which
/// peers on this host ring. A refused inbox is said on standard error, and peers on this host
/// use the Unix sockets instead.
///
/// The inbox has a ring slot per world rank of the universe (`universe`, at least `size`); a
/// rank started by a spawn (`spawned`) gets the engine of one ([`crate::spawn`]).
fn endpoint_for(
    rank: u32,
    size: u32,
    universe: u32,
    config: &Config,
    spawned: Option<&(launch::ParentInfo, Vec<String>)>,
) -> (Arc<Endpoint>, Option<Inbox>) {
    let make = |signal: Signal| {
        let me = WorldRank(rank);
        Arc::new(match spawned {
            None => Endpoint::with_signal(me, size, signal),
            Some((info, _)) => {
                let parents: Vec<WorldRank> = info.parents.iter().copied().map(WorldRank).collect();
                let children: Vec<WorldRank> = (info.first..info.first + info.count)
                    .map(WorldRank)
                    .collect();
                let engine = crate::spawn::spawned_engine(
                    me,
                    &parents,
                    &children,
                    info.context,
                    size,
                    None,
                    true, // as every process rank's
                );
                Endpoint::with_engine(me, engine, signal)
            }
        })
    };
    let universe = universe.max(size);
    if !config.shm || universe < 2 {
        return (make(Signal::default()), None);
    }
    match super::shm_lane::make_inbox(universe) {
        Ok(inbox) => {
            let signal = Signal::shared(inbox.clone(), Bell::Application);
            (make(signal), Some(inbox))
        }
        Err(e) => {
            super::tcp::stderr_line(format_args!(
                "runthrough rank {rank}: no shared memory ({e}): peers on this host use Unix \
                 sockets"
            ));
            (make(Signal::default()), None)
        }
    }
}

/// Each rank's host class from the job's table of addresses: the first rank that published the
/// same host identity (with its Unix socket, or alone when it has none, as with
/// `RT_TRANSPORT=tcp`), `None` for a rank that published none (`/proc` did not say) or no
/// address (dead before it registered). Every rank
/// computes the same classes from the same table, which is what the barrier over hosts needs
/// (`runthrough_core::engine::Engine::set_hosts`).
fn host_classes(table: &[Option<String>]) -> Vec<Option<u32>> {
    let mut first = std::collections::HashMap::new();
    table
        .iter()
        .enumerate()
        .map(|(rank, address)| {
            let address = Address::parse(address.as_deref()?);
            let identity = address.host()?.to_string();
            Some(*first.entry(identity).or_insert(rank as u32))
        })
        .collect()
}

/// The peers reached through a Unix socket: this host, network and mount namespace for
/// certain (emulated hosts, network namespaces of one kernel, may share a PID namespace, but
/// not the socket paths).
fn this_host(table: &[Option<String>], local_identity: Option<&str>) -> Vec<bool> {
    table
        .iter()
        .map(|address| {
            address
                .as_deref()
                .is_some_and(|a| Address::parse(a).unix_path_from(local_identity).is_some())
        })
        .collect()
}

/// Which peers are connected on first use rather than at start: the peers reached through a
/// Unix socket (this host, network and mount namespace) whose failure this rank learns without
/// a connection (`confirmed(peer)`: rtrun's notices, or a pidfd on its process), except this
/// rank's neighbours in a sparse overlay of those ranks, connected at start so that heartbeats
/// still reach every rank: in the ranks' order, the ones 1, 2, 4, … places ahead of and behind
/// this one, round the list (about 2 log₂ n connections per rank instead of n − 1). Every rank
/// computes the same overlay from the same table. Peers on other hosts, over TCP, or without a
/// way to confirm their death are connected at start, as every peer used to be.
fn on_demand_peers(me: u32, this_host: &[bool], confirmed: impl Fn(u32) -> bool) -> Vec<bool> {
    let mut eligible: Vec<bool> = this_host
        .iter()
        .enumerate()
        .map(|(peer, &here)| here && (peer as u32 == me || confirmed(peer as u32)))
        .collect();
    let ring: Vec<u32> = (0..this_host.len() as u32)
        .filter(|&r| eligible[r as usize])
        .collect();
    let Some(position) = ring.iter().position(|&r| r == me) else {
        return vec![false; this_host.len()];
    };
    let m = ring.len();
    let mut step = 1;
    while step < m {
        eligible[ring[(position + step) % m] as usize] = false;
        eligible[ring[(position + m - step) % m] as usize] = false;
        step *= 2;
    }
    eligible[me as usize] = false;
    eligible
}

/// Connects to the peers of the table that are connected at start and returns the universe.
/// Start-up's time-outs for a host crowded with ranks: every pair of a job connects at start
/// (n² handshakes of a few round trips each, on n / cores ranks per core), so on a crowded host
/// the handshake time-out (40 ms per rank per core, at least 5 s) and the connect deadline
/// (500 ms per rank per core, at least 30 s) grow with the ranks per core: 512 ranks on 2 cores
/// get about 10 s and 128 s.
fn startup_timeouts(local_ranks: usize, cores: usize, config: &Config) -> (Duration, Duration) {
    let per_core = (local_ranks / cores.max(1)) as u32;
    (
        config
            .handshake_timeout
            .max(Duration::from_millis(40) * per_core),
        CONNECT_DEADLINE.max(Duration::from_millis(500) * per_core),
    )
}

fn start(mut s: Started) -> Result<Universe, InitError> {
    let (handshake, connect_deadline) =
        // The affinity's count, not `host_cores`: a bound rank's one CPU makes the time-outs
        // longer, never too short for a crowded host.
        startup_timeouts(s.local_ranks, crate::wait::cores(), &s.config);
    s.config.handshake_timeout = handshake;
    let (rank, size) = (s.rank, s.size);
    let local_identity = s.config.local_identity.clone();
    let launcher_confirms = s.control.is_some();
    let connect_all = s.config.connect_all;
    if let Some(cap) = s.unexpected_cap {
        s.endpoint.set_unexpected_cap(cap, size);
    }
    if let Some(hosts) = s.hosts.take() {
        s.endpoint.lock().set_hosts(hosts);
    }
    let tcp = Tcp::with_universe(
        rank,
        size,
        s.universe,
        Arc::clone(&s.endpoint),
        *s.secret.bytes(),
        s.config,
    );
    let local_pids = s.local_pids.clone();
    tcp.set_local_pids(s.local_pids);
    if let Some(inbox) = s.inbox {
        tcp.set_inbox(inbox)
            .map_err(io("starting the progress thread"))?;
    }
    if let Some(mut control_stream) = s.control {
        if crate::timeline::requested() {
            crate::timeline::install(&s.endpoint, &control_stream);
        }
        tcp.set_control(
            control_stream
                .try_clone()
                .map_err(io("cloning the control connection"))?,
        );
        let control_tcp = Arc::clone(&tcp);
        std::thread::Builder::new()
            .name("rt-control".into())
            .spawn(move || loop {
                match launch::read_line(&mut control_stream) {
                    Ok(line) => {
                        if let Some(r) = launch::parse_failed(&line) {
                            control_tcp.notice(r, None);
                        } else if let Some((r, address)) = launch::parse_joined(&line) {
                            control_tcp.join_peer(r, address);
                        } else if let Some(answer) = launch::parse_spawn_reply(&line) {
                            control_tcp.spawn_answered(Some(answer));
                        }
                    }
                    Err(_) => {
                        control_tcp.spawn_answered(None);
                        control_tcp.halt_launcher_lost()
                    }
                }
            })
            .map_err(io("starting the control thread"))?;
    }
    for (peer, address) in s.table.iter().enumerate() {
        if address.is_none() {
            tcp.declare_failed(peer as u32, Cause::Notice);
        }
    }
    let this_host = this_host(&s.table, local_identity.as_deref());
    let on_demand = match &s.spawned {
        // A spawned rank connects to every peer on first use: the others planned their
        // overlay before it existed, and its launcher confirms its death.
        Some(_) => vec![true; s.table.len()],
        None => on_demand_peers(rank, &this_host, |peer| {
            !connect_all
                && (launcher_confirms || local_pids.get(peer as usize).copied().flatten().is_some())
        }),
    };
    tcp.set_addresses(s.table.clone(), &on_demand);
    for (peer, address) in std::mem::take(&mut s.joined) {
        tcp.join_peer(peer, address);
    }
    if tcp.inbox().is_some() {
        // Lanes are made on first use: the bootstrap's count says how crowded the host is.
        tcp.set_local_ranks(s.local_ranks);
    }
    let Listeners {
        tcp: tcp_listener,
        unix,
        ..
    } = s.listeners;
    let (unix_listener, socket) = unix.unzip();
    tcp.set_socket(socket);
    for listener in std::iter::once(Listener::Tcp(tcp_listener)).chain(unix_listener) {
        let accept_tcp = Arc::clone(&tcp);
        std::thread::Builder::new()
            .name("rt-accept".into())
            .spawn(move || accept_tcp.accept_loop(listener))
            .map_err(io("starting the acceptor"))?;
    }
    for (peer, address) in s.table.iter().enumerate().skip(rank as usize + 1) {
        if let (Some(address), false) = (address, on_demand[peer]) {
            tcp.connect(peer as u32, address);
        }
    }
    tcp.wait_settled(connect_deadline);
    if !launcher_confirms {
        tcp.watch_processes(&this_host)
            .map_err(io("starting the process watch"))?;
    }
    tcp.watch_majority()
        .map_err(io("starting the majority watch"))?;

    crate::timeline::ready(&s.endpoint);
    debug_assert_eq!(s.endpoint.world_rank.0, rank);
    let world = match s.spawned {
        None => Comm::world(s.endpoint, tcp.clone(), size),
        Some((info, args)) => {
            let link = crate::spawn::ParentLink {
                context: info.context,
                parents: info.parents.len() as u32,
                rank: rank - info.first,
                count: info.count,
                args: Arc::from(args),
                disconnected: Arc::default(),
            };
            Comm::spawned_world(s.endpoint, tcp.clone(), link)
        }
    };
    Ok(Universe {
        world,
        transport: tcp,
        finalized: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The peers connected on first use, and the overlay connected at start: ranks 1, 2, 4, …
    /// places apart round the list of this host's ranks. Every pair is judged alike from both
    /// ends (or one side would wait for a connection the other never makes); peers over TCP,
    /// elsewhere, or whose death this rank could not learn without a connection are connected
    /// at start; the overlay joins every rank to every other within ⌈log₂ n⌉ hops.
    #[test]
    fn peers_of_this_host_connect_on_first_use_beside_a_sparse_overlay() {
        let here = "boot/net:[1]";
        let unix = |r: u32| Some(format!("127.0.0.1:{},unix:/tmp/s{r},host:{here}", 4000 + r));
        let table: Vec<Option<String>> = (0..16).map(unix).collect();
        let plan = |me: u32| on_demand_peers(me, &this_host(&table, Some(here)), |_| true);
        let zero: Vec<u32> = (0..16).filter(|&p| plan(0)[p as usize]).collect();
        assert_eq!(zero, vec![3, 5, 6, 7, 9, 10, 11, 13]);
        for a in 0..16u32 {
            assert!(!plan(a)[a as usize]);
            for b in 0..16u32 {
                assert_eq!(plan(a)[b as usize], plan(b)[a as usize], "{a} and {b}");
            }
        }
        // Every rank reaches every other over the overlay in at most 4 hops.
        let mut reached = vec![0u32];
        for _ in 0..4 {
            let next: Vec<u32> = reached
                .iter()
                .flat_map(|&r| (0..16).filter(move |&p| p != r && !plan(r)[p as usize]))
                .collect();
            reached.extend(next);
            reached.sort_unstable();
            reached.dedup();
        }
        assert_eq!(reached.len(), 16);
        // Small jobs: the overlay is every pair.
        let small: Vec<Option<String>> = (0..5).map(unix).collect();
        assert!((0..5).all(
            |me| on_demand_peers(me, &this_host(&small, Some(here)), |_| true)
                .iter()
                .all(|&d| !d)
        ));
        // Over TCP, on another host (another identity), or without a confirmation: at start.
        let mut mixed = table.clone();
        mixed[3] = Some("127.0.0.1:4003".into());
        mixed[5] = Some("127.0.0.1:4005,unix:/tmp/s5,host:elsewhere".into());
        let plan = on_demand_peers(0, &this_host(&mixed, Some(here)), |p| p != 6);
        assert!(!plan[3] && !plan[5] && !plan[6]);
        assert!(on_demand_peers(0, &this_host(&table, None), |_| true)
            .iter()
            .all(|&d| !d));
    }

    /// Start-up's time-outs stay as they are on an uncrowded host and grow with the ranks per
    /// core on a crowded one.
    #[test]
    fn startup_timeouts_grow_only_on_a_crowded_host() {
        let config = Config::default();
        let base = (config.handshake_timeout, CONNECT_DEADLINE);
        assert_eq!(startup_timeouts(8, 2, &config), base);
        assert_eq!(startup_timeouts(100, 2, &config), base);
        assert_eq!(startup_timeouts(1, 0, &config), base);
        let (handshake, deadline) = startup_timeouts(512, 2, &config);
        assert_eq!(handshake, Duration::from_millis(40 * 256));
        assert_eq!(deadline, Duration::from_millis(500 * 256));
    }

    const LOOP: &str = "127.0.0.1:4000,unix:/tmp/rt/0,host:a";
    const WIDE: &str = "10.0.0.1:4000";

    /// Host classes come from the table alone: the first rank with the same host identity,
    /// none for a rank that published no Unix socket or no address.
    #[test]
    fn host_classes_name_each_host_by_its_first_rank() {
        let table = [
            Some("10.0.0.1:4000,unix:/tmp/s0,host:b".to_string()),
            Some("10.0.0.2:4001,unix:/tmp/s1,host:a".to_string()),
            Some("10.0.0.1:4002,unix:/tmp/s2,host:b".to_string()),
            Some("10.0.0.3:4003".to_string()),
            None,
            Some("10.0.0.2:4005,unix:/tmp/s5,host:a".to_string()),
            // TCP only: the host's identity alone groups it with the ranks of its host.
            Some("10.0.0.1:4006,host:b".to_string()),
            Some("10.0.0.4:4007,host:c".to_string()),
            // Garbage from the table names no host (an empty identity is none).
            Some(",,host:".to_string()),
            Some("10.0.0.1:4008,unix:/tmp/s8,host:".to_string()),
        ];
        assert_eq!(
            host_classes(&table),
            [
                Some(0),
                Some(1),
                Some(0),
                None,
                None,
                Some(1),
                Some(0),
                Some(7),
                None,
                None
            ]
        );
    }

    /// Issue 16 item 5: ranks on different hosts with a loopback listener on either side fail
    /// init at once, naming the peer and the address; same host, known addresses, or unknown
    /// identities do not.
    #[test]
    fn loopback_across_hosts_is_found_on_either_side() {
        let same = [(1, "boot/net:[1]", LOOP), (2, "boot/net:[1]", LOOP)];
        assert_eq!(loopback_across_hosts("boot/net:[1]", LOOP, same), None);
        let other = [(1, "boot/net:[1]", LOOP), (2, "boot/net:[2]", WIDE)];
        assert_eq!(
            loopback_across_hosts("boot/net:[1]", LOOP, other),
            Some((2, "127.0.0.1:4000".into())),
            "this rank listens on loopback"
        );
        let theirs = [(3, "boot/net:[2]", "[::1]:9")];
        assert_eq!(
            loopback_across_hosts("boot/net:[1]", WIDE, theirs),
            Some((3, "[::1]:9".into())),
            "the peer listens on loopback"
        );
        let bound = [(1, "other/net:[9]", "10.0.0.2:1")];
        assert_eq!(loopback_across_hosts("boot/net:[1]", WIDE, bound), None);
        let unknown = [(1, "-", "10.0.0.2:1"), (2, "-", LOOP)];
        assert_eq!(loopback_across_hosts("boot/net:[1]", LOOP, unknown), None);
        assert_eq!(loopback_across_hosts("-", LOOP, [(1, "x", LOOP)]), None);
        let message = InitError::LoopbackAcrossHosts {
            peer: 2,
            address: "127.0.0.1:4000".into(),
        }
        .to_string();
        assert!(
            message.contains("RT_BIND") && message.contains("rank 2"),
            "{message}"
        );
    }

    #[test]
    fn this_process_has_a_network_identity() {
        let identity = local::network_identity().expect("readable under /proc");
        assert!(identity.contains("/net:["), "{identity}");
        assert_eq!(Some(identity), local::network_identity(), "stable");
    }
}

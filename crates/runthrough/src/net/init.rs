// SPDX-License-Identifier: MIT OR Apache-2.0
//! `runthrough::init`: a rank of a multi-process job bootstraps from its launcher.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::comm::Comm;
use crate::engine::{AgreementFault, Endpoint};
use crate::packet::WORLD_CONTEXT;
use crate::process::{Process, RankFaults};

use super::launch::{self, JobSecret};
use super::tcp::{Cause, Config, Tcp};

/// How long `init` waits for every peer to connect before fencing the missing ones.
const CONNECT_DEADLINE: Duration = Duration::from_secs(30);

/// A multi-process job as one rank sees it: its world communicator over TCP.
///
/// ```no_run
/// // Run under the launcher: `rtrun -n 4 target/release/examples/tcp_ring`.
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
    _transport: Arc<Tcp>,
    finalized: bool,
}

impl Universe {
    /// The world communicator (`MPI_COMM_WORLD`): every rank of the job, numbered as the
    /// launcher numbered them.
    pub fn world(&self) -> &Comm {
        &self.world
    }

    /// Ends this rank's part in the job (`MPI_Finalize`): waits until every live rank has
    /// reached finalize too, through a fault-tolerant agreement on the world communicator (so it
    /// never blocks on, or reports, a failed rank). A rank's process ending is how its peers
    /// detect its failure; this keeps a rank that is done from being taken for a failed one by
    /// peers still talking to it. The process may exit afterwards.
    ///
    /// Dropping the universe calls this, except while panicking: a rank that panics dies, and
    /// its peers see it fail.
    pub fn finalize(mut self) {
        self.finalize_once();
    }

    fn finalize_once(&mut self) {
        if !self.finalized {
            self.finalized = true;
            let _ = self.world.validate_global();
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
                write!(f, "{variable} is not set: start the program with rtrun")
            }
            InitError::BadEnvironment { variable, value } => {
                write!(f, "{variable}={value:?} does not parse")
            }
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

/// The fault plan of [`launch::ENV_FAULT`].
fn parse_fault(value: &str, endpoint: &Endpoint) -> Option<RankFaults> {
    let mut words = value.split(':');
    let operation = words.next()?;
    let numbers: Vec<u64> = words.map(|w| w.parse().ok()).collect::<Option<_>>()?;
    let mut faults = RankFaults::default();
    match (operation, numbers.as_slice()) {
        ("call", [k]) if *k >= 1 => faults.kill_at_operation = Some(*k),
        ("validate_global" | "agreement", [k]) if *k >= 1 => {
            endpoint.plan_agreement_fault(AgreementFault::new(k - 1, 1))
        }
        ("validate_global" | "agreement", [k, m]) if *k >= 1 && *m >= 1 => {
            endpoint.plan_agreement_fault(AgreementFault::new(k - 1, *m))
        }
        _ => return None,
    }
    Some(faults)
}

fn parse_config() -> Result<Config, InitError> {
    let mut config = Config::default();
    if let Some(value) = var(launch::ENV_HEARTBEAT)? {
        let bad = || InitError::BadEnvironment {
            variable: launch::ENV_HEARTBEAT,
            value: value.clone(),
        };
        let (period, timeout) = value.split_once(':').ok_or_else(bad)?;
        let period: u64 = period.parse().map_err(|_| bad())?;
        let timeout: u64 = timeout.parse().map_err(|_| bad())?;
        if period == 0 || timeout <= period {
            return Err(bad());
        }
        config.heartbeat_period = Duration::from_millis(period);
        config.heartbeat_timeout = Duration::from_millis(timeout);
    }
    config.verbose = var(launch::ENV_VERBOSE)?.is_some_and(|v| v == "1");
    Ok(config)
}

/// Starts this process's rank of a multi-process job, from the environment its launcher set
/// ([`launch`] lists the variables; `rtrun` sets them). Returns once this rank is connected to
/// every peer that is alive (peers that died meanwhile are already known failed).
///
/// # Errors
/// [`InitError::NotLaunched`] when the launcher's variables are missing; the other variants
/// when they are wrong or the launcher cannot be reached.
pub fn init() -> Result<Universe, InitError> {
    let rank: u32 = parsed(launch::ENV_RANK, &required(launch::ENV_RANK)?)?;
    let size: u32 = parsed(launch::ENV_SIZE, &required(launch::ENV_SIZE)?)?;
    if size == 0 || rank >= size {
        return Err(InitError::BadEnvironment {
            variable: launch::ENV_RANK,
            value: format!("{rank} of {size}"),
        });
    }
    let control = required(launch::ENV_CONTROL)?;
    let secret_hex = required(launch::ENV_SECRET)?;
    let secret = JobSecret::from_hex(&secret_hex).ok_or(InitError::BadEnvironment {
        variable: launch::ENV_SECRET,
        value: "(not 64 hex digits)".into(),
    })?;
    let bind = var(launch::ENV_BIND)?.unwrap_or_else(|| "127.0.0.1".into());
    let config = parse_config()?;

    let endpoint = Arc::new(Endpoint::new(rank, size));
    let faults = match var(launch::ENV_FAULT)? {
        None => RankFaults::default(),
        Some(value) => parse_fault(&value, &endpoint).ok_or_else(|| InitError::BadEnvironment {
            variable: launch::ENV_FAULT,
            value: value.clone(),
        })?,
    };

    let listener = TcpListener::bind((bind.as_str(), 0)).map_err(io("binding the listener"))?;
    let address = listener
        .local_addr()
        .map_err(io("reading the listener's address"))?
        .to_string();
    let mut control_stream =
        TcpStream::connect(&control).map_err(io("connecting to the launcher"))?;
    launch::register(&mut control_stream, &secret, rank, &address)
        .map_err(io("registering with the launcher"))?;
    let mut died_early = Vec::new();
    let table = loop {
        let line = launch::read_line(&mut control_stream).map_err(io("reading the table"))?;
        if let Some(r) = launch::parse_failed(&line) {
            died_early.push(r);
            continue;
        }
        break launch::parse_table(&line, size).ok_or(InitError::BadEnvironment {
            variable: launch::ENV_CONTROL,
            value: format!("launcher sent {line:?}"),
        })?;
    };

    let tcp = Tcp::new(rank, size, Arc::clone(&endpoint), secret.0, config);
    tcp.set_control(
        control_stream
            .try_clone()
            .map_err(io("cloning the control connection"))?,
    );
    for (peer, address) in table.iter().enumerate() {
        if address.is_none() || died_early.contains(&(peer as u32)) {
            tcp.declare_failed(peer as u32, Cause::Notice);
        }
    }
    let control_tcp = Arc::clone(&tcp);
    std::thread::Builder::new()
        .name("rt-control".into())
        .spawn(move || loop {
            match launch::read_line(&mut control_stream) {
                Ok(line) => {
                    if let Some(r) = launch::parse_failed(&line) {
                        control_tcp.notice(r, None);
                    }
                }
                Err(_) => control_tcp.halt_launcher_lost(),
            }
        })
        .map_err(io("starting the control thread"))?;
    let accept_tcp = Arc::clone(&tcp);
    std::thread::Builder::new()
        .name("rt-accept".into())
        .spawn(move || accept_tcp.accept_loop(listener))
        .map_err(io("starting the acceptor"))?;
    for (peer, address) in table.iter().enumerate().skip(rank as usize + 1) {
        if let Some(address) = address {
            tcp.connect(peer as u32, address);
        }
    }
    tcp.wait_settled(CONNECT_DEADLINE);

    let process = Arc::new(Process {
        endpoint,
        transport: tcp.clone(),
        faults,
    });
    let world = Comm {
        process,
        context: WORLD_CONTEXT,
        rank,
        size,
    };
    Ok(Universe {
        world,
        _transport: tcp,
        finalized: false,
    })
}

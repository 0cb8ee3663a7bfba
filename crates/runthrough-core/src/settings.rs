// SPDX-License-Identifier: MIT OR Apache-2.0
//! The `RT_*` settings of a rank, as text: their names, what each accepts, and the one parser
//! of each, shared by the launcher (which checks them all before it starts anything) and by a
//! rank's initialization (which refuses a bad one, whoever started it).
//!
//! ```
//! use runthrough_core::settings::{self, Setting};
//! assert!(settings::check("RT_UNEXPECTED_CAP", "256M").is_ok());
//! let error = settings::check("RT_UNEXPECTED_CAP", "0").unwrap_err();
//! assert!(error.to_string().contains("at least 1 byte"), "{error}");
//! assert_eq!(settings::lookup("RT_HEARTBEAT"), Some(Setting::Heartbeat));
//! assert_eq!(settings::lookup("RT_HEARTBAET"), None); // a typo: the launcher warns
//! ```

use std::fmt;
use std::time::Duration;

use crate::fault::Trigger;

/// One `RT_*` variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `RT_RANK`: the rank, set by the launcher.
    Rank,
    /// `RT_SIZE`: the number of ranks, set by the launcher.
    Size,
    /// `RT_CONTROL`: the launcher's control address, set by the launcher.
    Control,
    /// `RT_SECRET`: the job secret, set by the launcher.
    Secret,
    /// `RT_SOCKET_DIR`: the job's socket directory, set by the launcher.
    SocketDir,
    /// `RT_FAULT`: this rank's fault triggers ([`crate::fault`]), e.g. `call:5`.
    Fault,
    /// `RT_BIND`: where listeners bind: an IP address, `route:HOST` or an interface name.
    Bind,
    /// `RT_HEARTBEAT`: `PERIOD_MS:TIMEOUT_MS`, 0 < period < timeout.
    Heartbeat,
    /// `RT_TRANSPORT`: `auto` (the default), `shm`, `unix` or `tcp`.
    Transport,
    /// `RT_UNEXPECTED_CAP`: bytes of unexpected messages a rank buffers, with `K`, `M` or `G`.
    UnexpectedCap,
    /// `RT_VERBOSE`: `1` for diagnostics on standard error, `0` (or empty) for none.
    Verbose,
    /// `RT_PMI`: the PMI version to speak, `1` or `2`.
    Pmi,
    /// `RT_INIT_TIMEOUT`: how long a rank's start-up may wait for the others (the PMI fence),
    /// in seconds; default [`DEFAULT_INIT_TIMEOUT`].
    InitTimeout,
    /// `RT_TIMELINE`: `1` when the launcher draws a job timeline (`rtrun --timeline`): the
    /// rank reports its events to it. Set by the launcher.
    Timeline,
    /// `RT_INITIAL_ERRHANDLER`: the error handler `MPI_COMM_WORLD` and `MPI_COMM_SELF` start
    /// with in the C library (MPI-4.0 §9.3): `mpi_errors_are_fatal` (the default),
    /// `mpi_errors_abort` or `mpi_errors_return` (`rtrun --initial-errhandler`).
    InitialErrhandler,
    /// `RT_CONNECT`: `demand` (the default: peers on this host are connected on first use, with
    /// a sparse overlay at start) or `all` (every pair at start).
    Connect,
}

/// How long start-up waits for the other ranks by default (`RT_INIT_TIMEOUT`).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(120);

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 16] = [
        Setting::Rank,
        Setting::Size,
        Setting::Control,
        Setting::Secret,
        Setting::SocketDir,
        Setting::Fault,
        Setting::Bind,
        Setting::Heartbeat,
        Setting::Transport,
        Setting::UnexpectedCap,
        Setting::Verbose,
        Setting::Pmi,
        Setting::InitTimeout,
        Setting::Timeline,
        Setting::InitialErrhandler,
        Setting::Connect,
    ];

    /// The variable's name.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Rank => "RT_RANK",
            Setting::Size => "RT_SIZE",
            Setting::Control => "RT_CONTROL",
            Setting::Secret => "RT_SECRET",
            Setting::SocketDir => "RT_SOCKET_DIR",
            Setting::Fault => "RT_FAULT",
            Setting::Bind => "RT_BIND",
            Setting::Heartbeat => "RT_HEARTBEAT",
            Setting::Transport => "RT_TRANSPORT",
            Setting::UnexpectedCap => "RT_UNEXPECTED_CAP",
            Setting::Verbose => "RT_VERBOSE",
            Setting::Pmi => "RT_PMI",
            Setting::InitTimeout => "RT_INIT_TIMEOUT",
            Setting::Timeline => "RT_TIMELINE",
            Setting::InitialErrhandler => "RT_INITIAL_ERRHANDLER",
            Setting::Connect => "RT_CONNECT",
        }
    }

    /// Whether the launcher sets it for each rank itself (a user's value is replaced).
    pub fn set_by_launcher(self) -> bool {
        matches!(
            self,
            Setting::Rank
                | Setting::Size
                | Setting::Control
                | Setting::Secret
                | Setting::SocketDir
                | Setting::Timeline
        )
    }
}

/// The setting named `name`, if it is one.
pub fn lookup(name: &str) -> Option<Setting> {
    Setting::ALL.into_iter().find(|s| s.name() == name)
}

/// A setting whose value is refused: the variable, the value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// Why it is refused, and what it accepts.
    pub reason: String,
}

impl SettingError {
    fn new(setting: Setting, value: &str, reason: impl Into<String>) -> Self {
        SettingError {
            variable: setting.name(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.variable, self.value, self.reason)
    }
}

impl std::error::Error for SettingError {}

/// Checks the value of the setting `name` (the syntax only for `RT_BIND`, which names
/// interfaces and hosts that only the network can check). A name that is no setting passes.
///
/// # Errors
/// A [`SettingError`] naming the variable and its value.
pub fn check(name: &str, value: &str) -> Result<(), SettingError> {
    let Some(setting) = lookup(name) else {
        return Ok(());
    };
    match setting {
        Setting::Fault => fault(value).map(drop),
        Setting::Bind => bind(value).map(drop),
        Setting::Heartbeat => heartbeat(value).map(drop),
        Setting::Transport => transport(value).map(drop),
        Setting::UnexpectedCap => unexpected_cap(value).map(drop),
        Setting::Verbose => verbose(value).map(drop),
        Setting::Pmi => pmi(value).map(drop),
        Setting::InitTimeout => init_timeout(value).map(drop),
        Setting::InitialErrhandler => initial_errhandler(value).map(drop),
        Setting::Connect => connect_all(value).map(drop),
        Setting::Rank
        | Setting::Size
        | Setting::Control
        | Setting::Secret
        | Setting::SocketDir
        | Setting::Timeline => Ok(()),
    }
}

/// `RT_FAULT`: this rank's triggers, comma-separated ([`Trigger::parse_list`]); only those the
/// runtime injects (`call:K`, `validate_global:K[:M]`, a collective, `revoke:M`).
///
/// # Errors
/// A trigger that does not parse, or that a rank cannot inject itself.
pub fn fault(value: &str) -> Result<Vec<Trigger>, SettingError> {
    let error = |reason: String| SettingError::new(Setting::Fault, value, reason);
    let triggers = Trigger::parse_list(value).map_err(|e| error(e.to_string()))?;
    if let Some(t) = triggers
        .iter()
        .find(|t| t.injected_by() != crate::fault::InjectedBy::Runtime)
    {
        return Err(error(format!(
            "`{t}` is not a point of the rank's calls (call:K, validate_global:K[:M], a \
             collective such as all_reduce:K[:M], or revoke:M)"
        )));
    }
    Ok(triggers)
}

/// `RT_BIND`'s syntax: not empty, and `route:` followed by a host.
///
/// # Errors
/// An empty value or host.
pub fn bind(value: &str) -> Result<&str, SettingError> {
    let expected = "expected an IP address, route:HOST or a network interface's name";
    if value.trim().is_empty() || value.strip_prefix("route:").is_some_and(str::is_empty) {
        return Err(SettingError::new(Setting::Bind, value, expected));
    }
    Ok(value)
}

/// `RT_HEARTBEAT` (and `rtrun --heartbeat`): `PERIOD_MS:TIMEOUT_MS`, 0 < period < timeout.
///
/// # Errors
/// Anything else.
pub fn heartbeat(value: &str) -> Result<(Duration, Duration), SettingError> {
    let parsed = value
        .split_once(':')
        .and_then(|(p, t)| Some((p.trim().parse::<u64>().ok()?, t.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((period, timeout)) if period > 0 && timeout > period => Ok((
            Duration::from_millis(period),
            Duration::from_millis(timeout),
        )),
        Some(_) => Err(SettingError::new(
            Setting::Heartbeat,
            value,
            "the period must be at least 1 ms and shorter than the timeout (PERIOD_MS:TIMEOUT_MS)",
        )),
        None => Err(SettingError::new(
            Setting::Heartbeat,
            value,
            "expected PERIOD_MS:TIMEOUT_MS in milliseconds, e.g. 500:5000",
        )),
    }
}

/// Which connections ranks use ([`transport`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// Shared memory (with a Unix-domain socket beside it, for the handshake and as a second
    /// death signal) to peers on the same host, TCP to the others (the default).
    #[default]
    Auto,
    /// The same as `Auto`, said explicitly.
    Shm,
    /// Unix-domain sockets alone to peers on the same host (no shared memory), TCP to the
    /// others.
    Unix,
    /// TCP for every pair.
    Tcp,
}

/// `RT_TRANSPORT`: `auto` (or empty), `shm`, `unix` or `tcp`.
///
/// # Errors
/// Anything else.
pub fn transport(value: &str) -> Result<Transport, SettingError> {
    match value {
        "" | "auto" => Ok(Transport::Auto),
        "shm" => Ok(Transport::Shm),
        "unix" => Ok(Transport::Unix),
        "tcp" => Ok(Transport::Tcp),
        _ => Err(SettingError::new(
            Setting::Transport,
            value,
            "expected auto (the default), shm, unix or tcp",
        )),
    }
}

/// `RT_UNEXPECTED_CAP`: bytes, with an optional `K`, `M` or `G` (powers of 1024); at least 1.
///
/// # Errors
/// Anything else; 0 says so.
pub fn unexpected_cap(value: &str) -> Result<usize, SettingError> {
    let error = |reason: &str| SettingError::new(Setting::UnexpectedCap, value, reason);
    let expected = "expected a number of bytes with an optional K, M or G, e.g. 256M";
    let text = value.trim();
    let (digits, shift) = match text.as_bytes().last() {
        Some(b'k' | b'K') => (&text[..text.len() - 1], 10),
        Some(b'm' | b'M') => (&text[..text.len() - 1], 20),
        Some(b'g' | b'G') => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error(expected));
    }
    let number: usize = digits
        .parse()
        .map_err(|_| error("too large for this machine"))?;
    match number.checked_mul(1 << shift) {
        Some(0) => Err(error(
            "the cap must be at least 1 byte: a rank that may buffer nothing cannot receive \
             (e.g. 64M, the default)",
        )),
        Some(cap) => Ok(cap),
        None => Err(error("too large for this machine")),
    }
}

/// `RT_CONNECT`: `demand` (or empty, the default) connects the peers of this host on first use;
/// `all` connects every pair at start. Whether every pair connects at start.
///
/// # Errors
/// Anything else.
pub fn connect_all(value: &str) -> Result<bool, SettingError> {
    match value {
        "" | "demand" => Ok(false),
        "all" => Ok(true),
        _ => Err(SettingError::new(
            Setting::Connect,
            value,
            "expected demand (the default) or all",
        )),
    }
}

/// `RT_VERBOSE`: `1` on, `0` or empty off.
///
/// # Errors
/// Anything else.
pub fn verbose(value: &str) -> Result<bool, SettingError> {
    match value {
        "1" => Ok(true),
        "" | "0" => Ok(false),
        _ => Err(SettingError::new(
            Setting::Verbose,
            value,
            "expected 1 or 0",
        )),
    }
}

/// `RT_PMI`: `1` or `2`.
///
/// # Errors
/// Anything else.
pub fn pmi(value: &str) -> Result<u8, SettingError> {
    match value {
        "1" => Ok(1),
        "2" => Ok(2),
        _ => Err(SettingError::new(
            Setting::Pmi,
            value,
            "expected 1 (PMI-1) or 2 (PMI-2)",
        )),
    }
}

/// The error handlers a program can start with (`RT_INITIAL_ERRHANDLER`), by the names MPI's
/// `mpiexec -initial-errhandler` takes.
pub const INITIAL_ERRHANDLERS: [&str; 3] = [
    "mpi_errors_are_fatal",
    "mpi_errors_abort",
    "mpi_errors_return",
];

/// `RT_INITIAL_ERRHANDLER`: one of [`INITIAL_ERRHANDLERS`], in any case; the name in lower case.
///
/// # Errors
/// Anything else.
pub fn initial_errhandler(value: &str) -> Result<&'static str, SettingError> {
    let lower = value.trim().to_ascii_lowercase();
    INITIAL_ERRHANDLERS
        .into_iter()
        .find(|name| *name == lower)
        .ok_or_else(|| {
            SettingError::new(
                Setting::InitialErrhandler,
                value,
                "expected mpi_errors_are_fatal, mpi_errors_abort or mpi_errors_return",
            )
        })
}

/// `RT_INIT_TIMEOUT`: seconds, a positive number (`30`, `2.5`), at most a day.
///
/// # Errors
/// Anything else; 0 says so.
pub fn init_timeout(value: &str) -> Result<Duration, SettingError> {
    let error = |reason: &str| SettingError::new(Setting::InitTimeout, value, reason);
    let seconds: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite())
        .ok_or_else(|| error("expected a number of seconds, e.g. 120 (the default) or 2.5"))?;
    if seconds <= 0.0 {
        return Err(error(
            "the time-out must be above 0 s: start-up always waits for the other ranks",
        ));
    }
    if seconds > 86_400.0 {
        return Err(error("at most 86400 s (a day)"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The initial error handler: MPI's three names in any case, nothing else.
    #[test]
    fn initial_errhandler_takes_mpi_s_names() {
        assert_eq!(
            initial_errhandler("MPI_ERRORS_RETURN"),
            Ok("mpi_errors_return")
        );
        assert_eq!(
            initial_errhandler(" mpi_errors_abort"),
            Ok("mpi_errors_abort")
        );
        for bad in ["", "return", "mpi_errors_ignore"] {
            let error = initial_errhandler(bad).unwrap_err();
            assert_eq!(error.variable, "RT_INITIAL_ERRHANDLER");
            assert!(error.reason.contains("mpi_errors_return"), "{error}");
        }
    }

    /// Every value the README and the docs show is accepted.
    #[test]
    fn documented_values_are_accepted() {
        for (name, value) in [
            ("RT_UNEXPECTED_CAP", "256M"),
            ("RT_UNEXPECTED_CAP", "4096"),
            ("RT_UNEXPECTED_CAP", " 2k "),
            ("RT_UNEXPECTED_CAP", "1G"),
            ("RT_HEARTBEAT", "500:5000"),
            ("RT_TRANSPORT", "tcp"),
            ("RT_TRANSPORT", "auto"),
            ("RT_TRANSPORT", "unix"),
            ("RT_TRANSPORT", "shm"),
            ("RT_BIND", "eth1"),
            ("RT_BIND", "route:headnode"),
            ("RT_BIND", "127.0.0.1"),
            ("RT_VERBOSE", "1"),
            ("RT_PMI", "2"),
            ("RT_INITIAL_ERRHANDLER", "mpi_errors_return"),
            ("RT_INITIAL_ERRHANDLER", "MPI_ERRORS_ARE_FATAL"),
            ("RT_INITIAL_ERRHANDLER", "mpi_errors_abort"),
            ("RT_FAULT", "call:2"),
            ("RT_FAULT", "validate_global:2:1,all_reduce:3"),
            ("RT_INIT_TIMEOUT", "30"),
            ("RT_INIT_TIMEOUT", " 2.5 "),
        ] {
            assert_eq!(check(name, value), Ok(()), "{name}={value}");
        }
        assert_eq!(unexpected_cap("64M"), Ok(64 << 20));
        assert_eq!(unexpected_cap(" 2k "), Ok(2048));
        assert_eq!(unexpected_cap("4096"), Ok(4096));
        assert_eq!(unexpected_cap("1G"), Ok(1 << 30));
        assert_eq!(init_timeout("2.5"), Ok(Duration::from_millis(2500)));
    }

    /// Bad values are refused, naming the variable and the value.
    #[test]
    fn bad_values_are_refused_naming_them() {
        for (name, value, why) in [
            ("RT_UNEXPECTED_CAP", "abc", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "0", "at least 1 byte"),
            ("RT_UNEXPECTED_CAP", "0K", "at least 1 byte"),
            ("RT_UNEXPECTED_CAP", "", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "-1", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "1.5M", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "M", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "12X", "a number of bytes"),
            ("RT_UNEXPECTED_CAP", "99999999999999999999", "too large"),
            ("RT_UNEXPECTED_CAP", "99999999999G", "too large"),
            (
                "RT_TRANSPORT",
                "foo",
                "auto (the default), shm, unix or tcp",
            ),
            ("RT_HEARTBEAT", "garbage", "PERIOD_MS:TIMEOUT_MS"),
            ("RT_HEARTBEAT", "500:100", "shorter than the timeout"),
            ("RT_HEARTBEAT", "0:100", "at least 1 ms"),
            ("RT_BIND", "", "an IP address"),
            ("RT_BIND", "route:", "an IP address"),
            ("RT_VERBOSE", "yes", "1 or 0"),
            ("RT_PMI", "3", "PMI-1"),
            ("RT_INIT_TIMEOUT", "0", "above 0 s"),
            ("RT_INIT_TIMEOUT", "-3", "above 0 s"),
            ("RT_INIT_TIMEOUT", "soon", "a number of seconds"),
            ("RT_INIT_TIMEOUT", "inf", "a number of seconds"),
            ("RT_INIT_TIMEOUT", "1e9", "at most 86400"),
            ("RT_FAULT", "frobnicate:3", "unknown fault point"),
            ("RT_FAULT", "call:0", "count from 1"),
            ("RT_FAULT", "0.5", "not a point of the rank's calls"),
            ("RT_FAULT", "iteration:3", "not a point of the rank's calls"),
        ] {
            let error = check(name, value).unwrap_err();
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("{name}={value:?}")) && message.contains(why),
                "{name}={value}: {message}"
            );
        }
    }

    #[test]
    fn names_are_known_and_typos_are_not() {
        for setting in Setting::ALL {
            assert_eq!(lookup(setting.name()), Some(setting));
        }
        assert_eq!(lookup("RT_TRANSPROT"), None);
        assert!(Setting::Rank.set_by_launcher() && !Setting::Bind.set_by_launcher());
    }
}

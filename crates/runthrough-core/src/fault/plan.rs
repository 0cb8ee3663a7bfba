// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fault plan's types and its one grammar (see the module docs of [`super`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::Rank;

/// The collective operations a fault can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collective {
    /// `barrier`.
    Barrier,
    /// `broadcast` (`bcast`).
    Broadcast,
    /// `reduce`.
    Reduce,
    /// `all_reduce` (`allreduce`).
    AllReduce,
    /// `gather`.
    Gather,
    /// `all_gather` (`allgather`).
    AllGather,
    /// `scatter`.
    Scatter,
    /// `all_to_all` (`alltoall`).
    AllToAll,
    /// `scan`.
    Scan,
    /// `exscan`.
    Exscan,
    /// `neighbor_exchange`: a neighbourhood collective (`MPI_Neighbor_*`).
    NeighborExchange,
}

impl Collective {
    /// Every collective, in the order of the docs.
    pub const ALL: [Collective; 11] = [
        Collective::Barrier,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::AllReduce,
        Collective::Gather,
        Collective::AllGather,
        Collective::Scatter,
        Collective::AllToAll,
        Collective::Scan,
        Collective::Exscan,
        Collective::NeighborExchange,
    ];

    /// The name a plan writes.
    pub fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "barrier",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::AllReduce => "all_reduce",
            Collective::Gather => "gather",
            Collective::AllGather => "all_gather",
            Collective::Scatter => "scatter",
            Collective::AllToAll => "all_to_all",
            Collective::Scan => "scan",
            Collective::Exscan => "exscan",
            Collective::NeighborExchange => "neighbor_exchange",
        }
    }

    /// The collective `name` names: its plan name or the spelling MPI users type
    /// (`bcast`, `allreduce`, `allgather`, `alltoall`).
    pub fn from_name(name: &str) -> Option<Collective> {
        let mpi = match name {
            "bcast" => Some(Collective::Broadcast),
            "allreduce" => Some(Collective::AllReduce),
            "allgather" => Some(Collective::AllGather),
            "alltoall" => Some(Collective::AllToAll),
            _ => None,
        };
        mpi.or_else(|| Collective::ALL.into_iter().find(|c| c.name() == name))
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a rank dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trigger {
    /// This long after the job started, killed from outside (`0.5`, `0.5s`, `300ms`).
    After(Duration),
    /// When the rank starts its `k`-th communication call, 1 = the first (`call:K`); that
    /// call never happens.
    Call(u64),
    /// Inside the rank's `call`-th agreement on the world communicator (1 = the first;
    /// `validate_global`, `agree` and `shrink` counted together), just before it sends its
    /// `message`-th protocol message of that call, 1 = the first (`validate_global:K[:M]`).
    Agreement {
        /// Which agreement (1 = the first).
        call: u64,
        /// Which of its protocol messages (1 = the first).
        message: u64,
    },
    /// Inside the rank's `call`-th call (1 = the first, over every communicator) of
    /// `operation`, just before that call's `message`-th message (1 = the first), or at entry
    /// when `message` is 0 (`all_reduce:K[:M]`). A call that sends fewer messages is survived.
    Collective {
        /// The collective.
        operation: Collective,
        /// Which call of it (1 = the first).
        call: u64,
        /// Which message of that call (1 = the first; 0: at entry).
        message: u64,
    },
    /// Just before the rank sends its `message`-th revocation packet, 1 = the first, whether
    /// it revoked or forwards another rank's revocation (`revoke:M`).
    Revoke {
        /// Which revocation packet (1 = the first).
        message: u64,
    },
    /// Just before the rank sends its `k`-th packet of any kind, 1 = the first: application
    /// data, collective and agreement messages, revocations, flow-control credits
    /// (`packet:K`). Heartbeats and connection set-up are not packets.
    Packet(u64),
    /// At the application's `k`-th step (`iteration:K`): heat's iteration, bag_of_tasks' count
    /// of results at the master. The program injects it; the runtime knows no steps.
    Iteration(u64),
    /// In the application's `n`-th recovery, 1 = the first (`recovery:N`). The program
    /// injects it.
    Recovery(u64),
}

/// Who makes a [`Trigger`] happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedBy {
    /// The launcher, or the in-process universe's timer: a kill from outside at a time.
    Timer,
    /// The rank's runtime, at a point of its own calls ([`super::Injector`]).
    Runtime,
    /// The application, at a point only it knows (an iteration, a recovery).
    Application,
}

impl Trigger {
    /// Who makes this trigger happen.
    pub fn injected_by(&self) -> InjectedBy {
        match self {
            Trigger::After(_) => InjectedBy::Timer,
            Trigger::Call(_)
            | Trigger::Agreement { .. }
            | Trigger::Collective { .. }
            | Trigger::Revoke { .. }
            | Trigger::Packet(_) => InjectedBy::Runtime,
            Trigger::Iteration(_) | Trigger::Recovery(_) => InjectedBy::Application,
        }
    }

    /// Parses one trigger, a bare number read as `bare` says.
    ///
    /// # Errors
    /// A [`FaultError`] naming `text`.
    pub fn parse_with(text: &str, bare: BareNumber) -> Result<Trigger, FaultError> {
        parse_trigger(text.trim(), bare).map_err(|reason| FaultError::new(text.trim(), reason))
    }

    /// Parses the triggers of one rank, comma-separated (the value of `RT_FAULT`, e.g.
    /// `call:5` or `validate_global:2:1,all_reduce:3`).
    ///
    /// # Errors
    /// A [`FaultError`] naming the trigger that does not parse.
    pub fn parse_list(text: &str) -> Result<Vec<Trigger>, FaultError> {
        entries(text)
            .map(|entry| Trigger::parse_with(entry, BareNumber::Seconds))
            .collect()
    }

    /// Writes triggers as [`Trigger::parse_list`] reads them.
    pub fn format_list(triggers: &[Trigger]) -> String {
        let words: Vec<String> = triggers.iter().map(Trigger::to_string).collect();
        words.join(",")
    }
}

impl FromStr for Trigger {
    type Err = FaultError;

    fn from_str(text: &str) -> Result<Self, FaultError> {
        Trigger::parse_with(text, BareNumber::Seconds)
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Trigger::After(delay) => {
                let (seconds, nanos) = (delay.as_secs(), delay.subsec_nanos());
                if nanos == 0 {
                    write!(f, "{seconds}s")
                } else {
                    let fraction = format!("{nanos:09}");
                    write!(f, "{seconds}.{}s", fraction.trim_end_matches('0'))
                }
            }
            Trigger::Call(k) => write!(f, "call:{k}"),
            Trigger::Agreement { call, message } => write!(f, "validate_global:{call}:{message}"),
            Trigger::Collective {
                operation,
                call,
                message: 0,
            } => write!(f, "{operation}:{call}"),
            Trigger::Collective {
                operation,
                call,
                message,
            } => write!(f, "{operation}:{call}:{message}"),
            Trigger::Revoke { message } => write!(f, "revoke:{message}"),
            Trigger::Packet(k) => write!(f, "packet:{k}"),
            Trigger::Iteration(k) => write!(f, "iteration:{k}"),
            Trigger::Recovery(n) => write!(f, "recovery:{n}"),
        }
    }
}

/// What a bare number after `RANK@` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BareNumber {
    /// Seconds after the start ([`Trigger::After`]): `rtrun --kill 2@0.5`, and [`FromStr`].
    #[default]
    Seconds,
    /// The application's step ([`Trigger::Iteration`]): the examples' `--kill 3@25`.
    Iteration,
}

/// One planned death: a rank and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fault {
    /// The rank (a world rank).
    pub rank: Rank,
    /// When it dies.
    pub trigger: Trigger,
}

impl Fault {
    /// Parses `RANK@TRIGGER`, a bare number read as `bare` says.
    ///
    /// # Errors
    /// A [`FaultError`] naming `text`.
    pub fn parse_with(text: &str, bare: BareNumber) -> Result<Fault, FaultError> {
        let text = text.trim();
        let error = |reason: String| FaultError::new(text, reason);
        let (rank, trigger) = text
            .split_once('@')
            .ok_or_else(|| error("expected RANK@WHEN".into()))?;
        let rank = whole(rank.trim())
            .ok()
            .and_then(|r| Rank::try_from(r).ok())
            .ok_or_else(|| error(format!("`{}` is not a rank", rank.trim())))?;
        let trigger = parse_trigger(trigger.trim(), bare).map_err(error)?;
        Ok(Fault { rank, trigger })
    }
}

impl FromStr for Fault {
    type Err = FaultError;

    fn from_str(text: &str) -> Result<Self, FaultError> {
        Fault::parse_with(text, BareNumber::Seconds)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.rank, self.trigger)
    }
}

/// Planned deaths, in the order they were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    faults: Vec<Fault>,
}

impl FaultPlan {
    /// The empty plan.
    pub fn new() -> Self {
        FaultPlan::default()
    }

    /// Parses comma-separated faults, a bare number read as `bare` says.
    ///
    /// # Errors
    /// A [`FaultError`] naming the fault that does not parse.
    pub fn parse_with(text: &str, bare: BareNumber) -> Result<FaultPlan, FaultError> {
        let faults = entries(text)
            .map(|entry| Fault::parse_with(entry, bare))
            .collect::<Result<_, _>>()?;
        Ok(FaultPlan { faults })
    }

    /// The faults.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// Whether nothing is planned.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// Adds a fault.
    pub fn push(&mut self, fault: Fault) {
        self.faults.push(fault);
    }

    /// The triggers planned for `rank`, in plan order.
    pub fn triggers_of(&self, rank: Rank) -> impl Iterator<Item = Trigger> + '_ {
        self.faults
            .iter()
            .filter(move |f| f.rank == rank)
            .map(|f| f.trigger)
    }

    /// Whether `rank` is planned to die at `trigger`.
    pub fn contains(&self, rank: Rank, trigger: Trigger) -> bool {
        self.faults.contains(&Fault { rank, trigger })
    }

    /// Checks that every fault names a rank of a job of `size` ranks.
    ///
    /// # Errors
    /// A [`FaultError`] naming the first fault whose rank is `size` or more.
    pub fn check_ranks(&self, size: u32) -> Result<(), FaultError> {
        match self.faults.iter().find(|f| f.rank >= size) {
            Some(fault) => Err(FaultError::new(
                &fault.to_string(),
                format!(
                    "rank {} is not in a job of {size} rank{} (ranks 0..={})",
                    fault.rank,
                    if size == 1 { "" } else { "s" },
                    size.saturating_sub(1)
                ),
            )),
            None => Ok(()),
        }
    }
}

impl FromIterator<Fault> for FaultPlan {
    fn from_iter<I: IntoIterator<Item = Fault>>(faults: I) -> Self {
        FaultPlan {
            faults: faults.into_iter().collect(),
        }
    }
}

impl FromStr for FaultPlan {
    type Err = FaultError;

    fn from_str(text: &str) -> Result<Self, FaultError> {
        FaultPlan::parse_with(text, BareNumber::Seconds)
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, fault) in self.faults.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{fault}")?;
        }
        Ok(())
    }
}

/// A fault that does not parse, or that cannot happen where it is planned: the offending text
/// and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultError {
    text: String,
    reason: String,
}

impl FaultError {
    /// An error about `text` (the fault or trigger as written).
    pub fn new(text: &str, reason: impl Into<String>) -> Self {
        FaultError {
            text: text.to_string(),
            reason: reason.into(),
        }
    }

    /// The offending fault or trigger, as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Why it is refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for FaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.text, self.reason)
    }
}

impl std::error::Error for FaultError {}

/// What the grammar accepts after `RANK@`, for error messages.
const EXPECTED: &str = "expected SECONDS, call:K, validate_global:K[:M], a collective such as \
                        all_reduce:K[:M], revoke:M, packet:K, iteration:K or recovery:N";

/// The non-empty entries of a comma-separated list.
fn entries(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// A whole number of decimal digits (no sign, no spaces).
fn whole(text: &str) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{text}` is not a whole number"));
    }
    text.parse()
        .map_err(|_| format!("`{text}` is too large a number"))
}

/// A count that starts at 1.
fn from_one(text: &str, what: &str) -> Result<u64, String> {
    match whole(text)? {
        0 => Err(format!("{what} count from 1, not 0")),
        k => Ok(k),
    }
}

/// A non-negative decimal number of `unit`s (at most nanosecond precision) as a duration.
fn duration(text: &str, unit_nanos: u64) -> Result<Duration, String> {
    let bad = || format!("`{text}` is not a time");
    let (whole_part, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole_part.is_empty() && fraction.is_empty()) || !digits(whole_part) || !digits(fraction) {
        return Err(bad());
    }
    let units: u128 = if whole_part.is_empty() {
        0
    } else {
        whole_part.parse().map_err(|_| bad())?
    };
    let mut nanos = units.checked_mul(unit_nanos as u128).ok_or_else(bad)?;
    let mut scale = unit_nanos as u128;
    for digit in fraction.bytes() {
        if !scale.is_multiple_of(10) {
            return Err(format!("`{text}` is finer than a nanosecond"));
        }
        scale /= 10;
        nanos += (digit - b'0') as u128 * scale;
    }
    let seconds = u64::try_from(nanos / 1_000_000_000).map_err(|_| bad())?;
    Ok(Duration::new(seconds, (nanos % 1_000_000_000) as u32))
}

fn parse_trigger(text: &str, bare: BareNumber) -> Result<Trigger, String> {
    let starts_numeric = text.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if starts_numeric {
        if let Some(ms) = text.strip_suffix("ms") {
            return duration(ms, 1_000_000).map(Trigger::After);
        }
        if let Some(s) = text.strip_suffix('s') {
            return duration(s, 1_000_000_000).map(Trigger::After);
        }
        return match bare {
            BareNumber::Seconds => duration(text, 1_000_000_000)
                .map(Trigger::After)
                .map_err(|e| format!("{e} ({EXPECTED})")),
            BareNumber::Iteration => whole(text)
                .map(Trigger::Iteration)
                .map_err(|e| format!("{e}: a bare number is an iteration here ({EXPECTED})")),
        };
    }
    // heat's short forms: `rN` (the N-th recovery), `vCALL.MESSAGE` (inside a validate_global).
    if let Some(n) = text
        .strip_prefix('r')
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
    {
        return from_one(n, "recoveries").map(Trigger::Recovery);
    }
    if let Some(point) = text
        .strip_prefix('v')
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
    {
        let (call, message) = point
            .split_once('.')
            .ok_or_else(|| "expected vCALL.MESSAGE".to_string())?;
        return Ok(Trigger::Agreement {
            call: from_one(call, "validate_global calls")?,
            message: from_one(message, "protocol messages")?,
        });
    }
    let (name, numbers) = text.split_once(':').unwrap_or((text, ""));
    let numbers: Vec<&str> = if numbers.is_empty() {
        Vec::new()
    } else {
        numbers.split(':').collect()
    };
    let arity = |wanted: &str| format!("expected {wanted}");
    match (name, numbers.as_slice()) {
        ("call", [k]) => from_one(k, "calls").map(Trigger::Call),
        ("call", _) => Err(arity("call:K")),
        ("validate_global" | "agreement", [k]) => Ok(Trigger::Agreement {
            call: from_one(k, "agreements")?,
            message: 1,
        }),
        ("validate_global" | "agreement", [k, m]) => Ok(Trigger::Agreement {
            call: from_one(k, "agreements")?,
            message: from_one(m, "protocol messages")?,
        }),
        ("validate_global" | "agreement", _) => Err(arity(&format!("{name}:K[:M]"))),
        ("revoke", [m]) => Ok(Trigger::Revoke {
            message: from_one(m, "revocation messages")?,
        }),
        ("revoke", _) => Err(arity("revoke:M")),
        ("packet", [k]) => from_one(k, "packets").map(Trigger::Packet),
        ("packet", _) => Err(arity("packet:K")),
        ("iteration" | "step", [k]) => whole(k).map(Trigger::Iteration),
        ("iteration" | "step", _) => Err(arity(&format!("{name}:K"))),
        ("recovery", [n]) => from_one(n, "recoveries").map(Trigger::Recovery),
        ("recovery", _) => Err(arity("recovery:N")),
        _ => {
            let operation = Collective::from_name(name)
                .ok_or_else(|| format!("unknown fault point `{name}` ({EXPECTED})"))?;
            let (call, message) = match numbers.as_slice() {
                [k] => (k, None),
                [k, m] => (k, Some(m)),
                _ => return Err(arity(&format!("{name}:K[:M]"))),
            };
            Ok(Trigger::Collective {
                operation,
                call: from_one(call, "calls")?,
                message: message.map(|m| whole(m)).transpose()?.unwrap_or(0),
            })
        }
    }
}

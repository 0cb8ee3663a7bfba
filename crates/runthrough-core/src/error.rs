// SPDX-License-Identifier: MIT OR Apache-2.0
//! The error type: one variant per MPI / ULFM error class that runthrough reports.

use crate::Rank;

/// Result with runthrough's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that a runthrough call can report instead of success.
///
/// Variants are named after the MPI and ULFM error classes; [`Error::class`] gives the class
/// (and so the C interface's error code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rank this operation depends on has failed and the failure is not recognized in G
    /// (`MPIX_ERR_PROC_FAILED`). `rank` is in the communicator's numbering.
    #[error("rank {rank} has failed (MPIX_ERR_PROC_FAILED)")]
    ProcFailed {
        /// The failed rank.
        rank: Rank,
    },
    /// A receive from any source cannot be sure to complete: this rank's detector knows of a
    /// failure in the communicator that `validate_local` has not yet acknowledged
    /// (`MPIX_ERR_PROC_FAILED_PENDING`). A non-blocking request stays pending.
    #[error(
        "a wildcard receive may depend on an unacknowledged failure (MPIX_ERR_PROC_FAILED_PENDING)"
    )]
    ProcFailedPending,
    /// `agree` completed but some participant failed before contributing and that failure was not
    /// acknowledged by every contributor (class `MPIX_ERR_PROC_FAILED`); `flag` is still the
    /// agreed value, the same at every rank.
    #[error(
        "agreement completed over failed participants (MPIX_ERR_PROC_FAILED); flag = {flag:#x}"
    )]
    AgreeProcFailed {
        /// The agreed flag: bitwise AND over the contributors.
        flag: u32,
    },
    /// The communicator has been revoked (`MPIX_ERR_REVOKED`).
    #[error("the communicator has been revoked (MPIX_ERR_REVOKED)")]
    Revoked,
    /// The root of a collective is recognized as failed (NULL in G).
    #[error("the root {root} of the collective has failed")]
    RootFailed {
        /// The failed root.
        root: Rank,
    },
    /// A message is longer than the receive buffer (`MPI_ERR_TRUNCATE`); the message was consumed.
    #[error("message truncated: {needed} elements needed (MPI_ERR_TRUNCATE)")]
    Truncated {
        /// Elements of the receive buffer's type needed to hold the message (rounded up).
        needed: usize,
    },
    /// The output array is shorter than the number of matches (`MPI_ERR_SIZE`); the first
    /// `out.len()` entries were written.
    #[error("output too small: {needed} entries needed (MPI_ERR_SIZE)")]
    Size {
        /// Number of entries that match.
        needed: usize,
    },
    /// A rank argument outside `0..size` (`MPI_ERR_RANK`).
    #[error("rank {rank} is out of range for a communicator of size {size} (MPI_ERR_RANK)")]
    Rank {
        /// The rank given.
        rank: i64,
        /// The communicator's size.
        size: u32,
    },
    /// A root argument outside `0..size` (`MPI_ERR_ROOT`).
    #[error("root {root} is out of range for a communicator of size {size} (MPI_ERR_ROOT)")]
    Root {
        /// The root given.
        root: i64,
        /// The communicator's size.
        size: u32,
    },
    /// A tag outside `0..=TAG_UB` (`MPI_ERR_TAG`).
    #[error("invalid tag {tag} (MPI_ERR_TAG)")]
    Tag {
        /// The tag given.
        tag: i64,
    },
    /// The communicator has been freed, or is not valid here (`MPI_ERR_COMM`).
    #[error("invalid or freed communicator (MPI_ERR_COMM)")]
    Comm,
    /// A buffer whose byte length does not fit the operation (`MPI_ERR_COUNT`), e.g. buffers of
    /// different lengths where the same is required.
    #[error("invalid count: {reason} (MPI_ERR_COUNT)")]
    Count {
        /// What was wrong.
        reason: String,
    },
    /// An invalid argument (`MPI_ERR_ARG`).
    #[error("invalid argument: {reason} (MPI_ERR_ARG)")]
    Argument {
        /// What was wrong.
        reason: String,
    },
    /// An invalid or already completed request (`MPI_ERR_REQUEST`).
    #[error("invalid request (MPI_ERR_REQUEST)")]
    Request,
    /// Two collective calls on one communicator at once from two threads.
    #[error("another collective call is in progress on this communicator")]
    ConcurrentCollective,
    /// This rank has been fenced by its peers (suspected of failure) or has halted because it
    /// cannot reach a majority; it must stop.
    #[error("this rank has been fenced out of the job")]
    Fenced,
    /// Ranks could not be started (`MPI_ERR_SPAWN`): the transport cannot start ranks, the
    /// job's universe is full, or a new rank's thread or process could not be created.
    #[error("could not spawn: {reason} (MPI_ERR_SPAWN)")]
    Spawn {
        /// What went wrong.
        reason: String,
    },
    /// A one-sided operation reaches outside the target's window, or its data does not fit
    /// the operation (`MPI_ERR_RMA_RANGE`); the target's memory is unchanged.
    #[error("outside the window: {reason} (MPI_ERR_RMA_RANGE)")]
    RmaRange {
        /// What was wrong.
        reason: String,
    },
    /// A one-sided call out of its synchronization order: an operation outside an access
    /// epoch, an epoch closed that was not opened, a lock taken twice (`MPI_ERR_RMA_SYNC`).
    #[error("wrong window synchronization: {reason} (MPI_ERR_RMA_SYNC)")]
    RmaSync {
        /// What was wrong.
        reason: String,
    },
    /// A transport or internal failure that is none of the above (`MPI_ERR_OTHER`).
    #[error("internal error: {reason} (MPI_ERR_OTHER)")]
    Internal {
        /// What happened.
        reason: String,
    },
}

/// The MPI / ULFM error classes, with the values the C interface uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
#[allow(missing_docs)]
pub enum ErrorClass {
    Success = 0,
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Request = 7,
    Root = 8,
    Group = 9,
    Op = 10,
    Arg = 12,
    Truncate = 15,
    Other = 16,
    Intern = 17,
    Spawn = 42,
    RmaSync = 50,
    Size = 51,
    RmaRange = 55,
    ProcFailed = 75,
    ProcFailedPending = 76,
    Revoked = 77,
}

impl Error {
    /// The error class of this error.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::ProcFailed { .. } | Error::AgreeProcFailed { .. } | Error::RootFailed { .. } => {
                ErrorClass::ProcFailed
            }
            Error::ProcFailedPending => ErrorClass::ProcFailedPending,
            Error::Revoked => ErrorClass::Revoked,
            Error::Truncated { .. } => ErrorClass::Truncate,
            Error::Size { .. } => ErrorClass::Size,
            Error::Rank { .. } => ErrorClass::Rank,
            Error::Root { .. } => ErrorClass::Root,
            Error::Tag { .. } => ErrorClass::Tag,
            Error::Comm => ErrorClass::Comm,
            Error::Count { .. } => ErrorClass::Count,
            Error::Argument { .. } => ErrorClass::Arg,
            Error::Spawn { .. } => ErrorClass::Spawn,
            Error::Request => ErrorClass::Request,
            Error::RmaRange { .. } => ErrorClass::RmaRange,
            Error::RmaSync { .. } => ErrorClass::RmaSync,
            Error::ConcurrentCollective | Error::Fenced => ErrorClass::Other,
            Error::Internal { .. } => ErrorClass::Intern,
        }
    }

    /// Whether this error reports a process failure (class `MPIX_ERR_PROC_FAILED` or
    /// `MPIX_ERR_PROC_FAILED_PENDING`).
    pub fn is_failure(&self) -> bool {
        matches!(
            self.class(),
            ErrorClass::ProcFailed | ErrorClass::ProcFailedPending
        )
    }
}

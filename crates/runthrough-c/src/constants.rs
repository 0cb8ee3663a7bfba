// SPDX-License-Identifier: MIT OR Apache-2.0
//! The numeric constants of `include/mpi.h` and `include/mpi-ext.h`, and the two structs
//! `mpi.h` declares.
//!
//! Error classes are those of [`runthrough::ErrorClass`] and rank states the bits of
//! [`runthrough::RankState`]: the constants below are defined from them, and
//! `tests/header.rs` checks that the header holds exactly the values of [`ALL`], so the header,
//! this module and the Rust runtime cannot drift apart.
#![allow(missing_docs)]

use std::os::raw::c_int;

use runthrough::{ErrorClass, RankState};

/// `MPI_Status`: the source, tag and error of a completed receive, and its size in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_snake_case, non_camel_case_types)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub rt_count_bytes: c_int,
    pub rt_cancelled: c_int,
}

/// `MPI_Rank_info`: one rank and its state (state bit | modifier bit) in a failure view.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct MPI_Rank_info {
    pub rank: c_int,
    pub state: c_int,
}

/// The C interface's own classes, which no Rust error maps to.
pub const ERR_UNKNOWN: c_int = 14;
/// Some request of `MPI_Waitall` failed; see each status's `MPI_ERROR`.
pub const ERR_IN_STATUS: c_int = 18;
/// The resilience library's classes (`RTX_Store_*`, in `mpi-ext.h`): a checkpoint or a
/// recovery that some rank could not take part in (not committed; the last checkpoint stands),
/// and slots lost with their owner and every copy.
pub const RTX_ERR_NOT_COMMITTED: c_int = 80;
/// See [`RTX_ERR_NOT_COMMITTED`].
pub const RTX_ERR_DATA_LOST: c_int = 81;
/// The null store handle.
pub const RTX_STORE_NULL: c_int = 0;
/// The largest error code.
pub const ERR_LASTCODE: c_int = 100;
/// An invalid dimension argument (`MPI_Dims_create`).
pub const ERR_DIMS: c_int = 11;
/// An invalid attribute key (`MPI_Comm_get_attr`).
pub const ERR_KEYVAL: c_int = 48;
/// `MPI_ERR_CONVERSION`: a value that the external32 representation cannot hold.
pub const ERR_CONVERSION: c_int = 23;
/// A communicator without the topology a call needs (`MPI_Cart_*` on a plain communicator).
pub const ERR_TOPOLOGY: c_int = 13;
/// An invalid or freed info handle, or a change to `MPI_INFO_ENV`.
pub const ERR_INFO: c_int = 28;
/// An info key that is empty or too long.
pub const ERR_INFO_KEY: c_int = 29;
/// An info value that is too long.
pub const ERR_INFO_VALUE: c_int = 30;
/// `MPI_Info_delete` of a key that is not there.
pub const ERR_INFO_NOKEY: c_int = 31;

pub const MPI_SUCCESS: c_int = ErrorClass::Success as c_int;
pub const MPI_ERR_BUFFER: c_int = ErrorClass::Buffer as c_int;
pub const MPI_ERR_COUNT: c_int = ErrorClass::Count as c_int;
pub const MPI_ERR_TYPE: c_int = ErrorClass::Type as c_int;
pub const MPI_ERR_TAG: c_int = ErrorClass::Tag as c_int;
pub const MPI_ERR_COMM: c_int = ErrorClass::Comm as c_int;
pub const MPI_ERR_RANK: c_int = ErrorClass::Rank as c_int;
pub const MPI_ERR_REQUEST: c_int = ErrorClass::Request as c_int;
pub const MPI_ERR_ROOT: c_int = ErrorClass::Root as c_int;
pub const MPI_ERR_GROUP: c_int = ErrorClass::Group as c_int;
pub const MPI_ERR_OP: c_int = ErrorClass::Op as c_int;
pub const MPI_ERR_ARG: c_int = ErrorClass::Arg as c_int;
pub const MPI_ERR_UNKNOWN: c_int = ERR_UNKNOWN;
pub const MPI_ERR_TRUNCATE: c_int = ErrorClass::Truncate as c_int;
pub const MPI_ERR_OTHER: c_int = ErrorClass::Other as c_int;
pub const MPI_ERR_INTERN: c_int = ErrorClass::Intern as c_int;
pub const MPI_ERR_IN_STATUS: c_int = ERR_IN_STATUS;
pub const MPI_ERR_SIZE: c_int = ErrorClass::Size as c_int;
pub const MPI_ERR_SPAWN: c_int = ErrorClass::Spawn as c_int;
pub const MPIX_ERR_PROC_FAILED: c_int = ErrorClass::ProcFailed as c_int;
pub const MPIX_ERR_PROC_FAILED_PENDING: c_int = ErrorClass::ProcFailedPending as c_int;
pub const MPIX_ERR_REVOKED: c_int = ErrorClass::Revoked as c_int;
pub const MPIX_FT: c_int = 8;
pub const MPI_ERR_PROC_FAILED: c_int = ErrorClass::ProcFailed as c_int;
pub const MPI_ERR_PROC_FAILED_PENDING: c_int = ErrorClass::ProcFailedPending as c_int;
pub const MPI_ERR_REVOKED: c_int = ErrorClass::Revoked as c_int;
pub const MPI_ERR_LASTCODE: c_int = ERR_LASTCODE;
pub const MPI_ERR_DIMS: c_int = ERR_DIMS;
pub const MPI_ERR_KEYVAL: c_int = ERR_KEYVAL;
pub const MPI_ERR_CONVERSION: c_int = ERR_CONVERSION;
pub const MPI_ERR_TOPOLOGY: c_int = ERR_TOPOLOGY;
pub const MPI_ERR_INFO: c_int = ERR_INFO;
pub const MPI_ERR_INFO_KEY: c_int = ERR_INFO_KEY;
pub const MPI_ERR_INFO_VALUE: c_int = ERR_INFO_VALUE;
pub const MPI_ERR_INFO_NOKEY: c_int = ERR_INFO_NOKEY;
pub const MPI_RANK_STATE_OK: c_int = RankState::OK.bits() as c_int;
pub const MPI_RANK_STATE_FAILED: c_int = RankState::FAILED.bits() as c_int;
pub const MPI_RANK_STATE_NULL: c_int = RankState::NULL.bits() as c_int;
pub const MPI_RANK_STATE_MOD_NEW: c_int = RankState::NEW.bits() as c_int;
pub const MPI_RANK_STATE_MOD_OLD: c_int = RankState::OLD.bits() as c_int;
pub const MPI_COMM_NULL: c_int = 0;
pub const MPI_COMM_WORLD: c_int = 1;
pub const MPI_COMM_SELF: c_int = 2;
pub const MPI_INFO_NULL: c_int = 0;
pub const MPI_INFO_ENV: c_int = 1;
pub const MPI_MAX_INFO_KEY: c_int = 255;
pub const MPI_MAX_INFO_VAL: c_int = 1024;
pub const MPI_GROUP_NULL: c_int = 0;
pub const MPI_GROUP_EMPTY: c_int = 1;
pub const MPI_REQUEST_NULL: c_int = 0;
pub const MPI_MESSAGE_NULL: c_int = 0;
/// The null file handle (`MPI_File` is declared for the handle conversions; MPI-IO is not
/// provided).
pub const MPI_FILE_NULL: c_int = 0;
/// The null window handle (`MPI_Win` is declared for the handle conversions; one-sided
/// communication is not provided).
pub const MPI_WIN_NULL: c_int = 0;
pub const MPI_MESSAGE_NO_PROC: c_int = 1;
pub const MPI_ERRHANDLER_NULL: c_int = 0;
pub const MPI_ERRORS_ARE_FATAL: c_int = 1;
pub const MPI_ERRORS_RETURN: c_int = 2;
pub const MPI_ERRORS_ABORT: c_int = 3;
pub const MPI_DATATYPE_NULL: c_int = 0;
pub const MPI_CHAR: c_int = 1;
pub const MPI_SIGNED_CHAR: c_int = 2;
pub const MPI_UNSIGNED_CHAR: c_int = 3;
pub const MPI_BYTE: c_int = 4;
pub const MPI_SHORT: c_int = 5;
pub const MPI_UNSIGNED_SHORT: c_int = 6;
pub const MPI_INT: c_int = 7;
pub const MPI_UNSIGNED: c_int = 8;
pub const MPI_LONG: c_int = 9;
pub const MPI_UNSIGNED_LONG: c_int = 10;
pub const MPI_LONG_LONG: c_int = 11;
pub const MPI_LONG_LONG_INT: c_int = 11;
pub const MPI_UNSIGNED_LONG_LONG: c_int = 12;
pub const MPI_FLOAT: c_int = 13;
pub const MPI_DOUBLE: c_int = 14;
pub const MPI_INT8_T: c_int = 15;
pub const MPI_INT16_T: c_int = 16;
pub const MPI_INT32_T: c_int = 17;
pub const MPI_INT64_T: c_int = 18;
pub const MPI_UINT8_T: c_int = 19;
pub const MPI_UINT16_T: c_int = 20;
pub const MPI_UINT32_T: c_int = 21;
pub const MPI_UINT64_T: c_int = 22;
pub const MPI_C_BOOL: c_int = 23;
pub const MPI_INTEGER: c_int = 24;
pub const MPI_REAL: c_int = 25;
pub const MPI_DOUBLE_PRECISION: c_int = 26;
pub const MPI_FLOAT_INT: c_int = 27;
pub const MPI_DOUBLE_INT: c_int = 28;
pub const MPI_LONG_INT: c_int = 29;
pub const MPI_2INT: c_int = 30;
pub const MPI_SHORT_INT: c_int = 31;
pub const MPI_PACKED: c_int = 32;
/// The address, file-offset and count integers (`MPI_Aint`, `MPI_Offset`, `MPI_Count`: 64 bits).
pub const MPI_AINT: c_int = 40;
pub const MPI_OFFSET: c_int = 41;
pub const MPI_COUNT: c_int = 42;
/// `long double`, its pair type and the complex types (reduced by the library's own
/// operations: `crate::wide`), the wide character, C++'s `bool`, and the C names of more
/// Fortran types (COMPLEX is `float _Complex`, LOGICAL `int`, CHARACTER `char`).
pub const MPI_LONG_DOUBLE: c_int = 33;
pub const MPI_LONG_DOUBLE_INT: c_int = 34;
pub const MPI_C_FLOAT_COMPLEX: c_int = 35;
pub const MPI_C_DOUBLE_COMPLEX: c_int = 36;
pub const MPI_C_LONG_DOUBLE_COMPLEX: c_int = 37;
pub const MPI_WCHAR: c_int = 38;
pub const MPI_CXX_BOOL: c_int = 39;
pub const MPI_CXX_FLOAT_COMPLEX: c_int = 43;
pub const MPI_CXX_DOUBLE_COMPLEX: c_int = 44;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: c_int = 45;
pub const MPI_COMPLEX: c_int = 46;
pub const MPI_DOUBLE_COMPLEX: c_int = 47;
pub const MPI_LOGICAL: c_int = 48;
pub const MPI_CHARACTER: c_int = 49;
pub const MPI_C_COMPLEX: c_int = MPI_C_FLOAT_COMPLEX;
pub const MPI_OP_NULL: c_int = 0;
pub const MPI_MAX: c_int = 1;
pub const MPI_MIN: c_int = 2;
pub const MPI_SUM: c_int = 3;
pub const MPI_PROD: c_int = 4;
pub const MPI_LAND: c_int = 5;
pub const MPI_BAND: c_int = 6;
pub const MPI_LOR: c_int = 7;
pub const MPI_BOR: c_int = 8;
pub const MPI_LXOR: c_int = 9;
pub const MPI_BXOR: c_int = 10;
pub const MPI_MAXLOC: c_int = 11;
pub const MPI_MINLOC: c_int = 12;
pub const MPI_REPLACE: c_int = 13;
pub const MPI_NO_OP: c_int = 14;
pub const MPI_ORDER_C: c_int = 56;
pub const MPI_ORDER_FORTRAN: c_int = 57;
pub const MPI_COMM_TYPE_SHARED: c_int = 1;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 4;
pub const MPI_CART: c_int = 1;
pub const MPI_GRAPH: c_int = 2;
pub const MPI_DIST_GRAPH: c_int = 3;
pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ANY_SOURCE: c_int = -2;
/// The root of a rooted collective on an intercommunicator, at the root itself.
pub const MPI_ROOT: c_int = -3;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_TAG_UB_VALUE: c_int = 2147483647;
/// The bytes per message a program adds to `MPI_Buffer_attach`'s size (Open MPI's value; the
/// library does not use the attached buffer).
pub const MPI_BSEND_OVERHEAD: c_int = 128;
pub const MPI_MAX_ERROR_STRING: c_int = 256;
pub const MPI_MAX_PROCESSOR_NAME: c_int = 256;
pub const MPI_IDENT: c_int = 0;
pub const MPI_CONGRUENT: c_int = 1;
pub const MPI_SIMILAR: c_int = 2;
pub const MPI_UNEQUAL: c_int = 3;
pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;
pub const MPI_THREAD_SERIALIZED: c_int = 2;
pub const MPI_THREAD_MULTIPLE: c_int = 3;
pub const MPI_VERSION: c_int = 4;
pub const MPI_SUBVERSION: c_int = 0;
pub const MPI_MAX_LIBRARY_VERSION_STRING: c_int = 256;
pub const MPI_MAX_OBJECT_NAME: c_int = 128;
pub const MPI_TAG_UB: c_int = 1;
pub const MPI_WTIME_IS_GLOBAL: c_int = 2;
pub const MPI_UNIVERSE_SIZE: c_int = 3;
pub const MPI_LASTUSEDCODE: c_int = 4;
pub const MPI_HOST: c_int = 5;
pub const MPI_IO: c_int = 6;
pub const MPI_APPNUM: c_int = 7;
/// The key value `MPI_Comm_free_keyval` leaves (user keys start at 64).
pub const MPI_KEYVAL_INVALID: c_int = -1;
/// Predefined window attribute keys (`MPI_Win_get_attr`).
pub const MPI_WIN_BASE: c_int = 8;
pub const MPI_WIN_SIZE: c_int = 9;
pub const MPI_WIN_DISP_UNIT: c_int = 10;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 11;
pub const MPI_WIN_MODEL: c_int = 12;
/// Window flavors (`MPI_WIN_CREATE_FLAVOR`) and memory models (`MPI_WIN_MODEL`).
pub const MPI_WIN_FLAVOR_CREATE: c_int = 1;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 4;
pub const MPI_WIN_SEPARATE: c_int = 1;
pub const MPI_WIN_UNIFIED: c_int = 2;
/// Lock types (`MPI_Win_lock`).
pub const MPI_LOCK_EXCLUSIVE: c_int = 234;
pub const MPI_LOCK_SHARED: c_int = 235;
/// Assertions of the synchronization calls (hints; the library ignores them).
pub const MPI_MODE_NOCHECK: c_int = 1024;
pub const MPI_MODE_NOSTORE: c_int = 2048;
pub const MPI_MODE_NOPUT: c_int = 4096;
pub const MPI_MODE_NOPRECEDE: c_int = 8192;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;
/// Error classes of windows and memory.
pub const MPI_ERR_WIN: c_int = 45;
pub const MPI_ERR_BASE: c_int = 46;
pub const MPI_ERR_NO_MEM: c_int = 34;
pub const MPI_ERR_RMA_SYNC: c_int = ErrorClass::RmaSync as c_int;
pub const MPI_ERR_RMA_RANGE: c_int = ErrorClass::RmaRange as c_int;
/// Datatype combiners (`MPI_Type_get_envelope`).
pub const MPI_COMBINER_NAMED: c_int = 1;
pub const MPI_COMBINER_DUP: c_int = 2;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 3;
pub const MPI_COMBINER_VECTOR: c_int = 4;
pub const MPI_COMBINER_HVECTOR: c_int = 5;
pub const MPI_COMBINER_INDEXED: c_int = 6;
pub const MPI_COMBINER_HINDEXED: c_int = 7;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 8;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 9;
pub const MPI_COMBINER_STRUCT: c_int = 10;
pub const MPI_COMBINER_SUBARRAY: c_int = 11;
pub const MPI_COMBINER_DARRAY: c_int = 12;
pub const MPI_COMBINER_F90_REAL: c_int = 13;
pub const MPI_COMBINER_F90_COMPLEX: c_int = 14;
pub const MPI_COMBINER_F90_INTEGER: c_int = 15;
pub const MPI_COMBINER_RESIZED: c_int = 16;
pub const MPI_COMBINER_VALUE_INDEX: c_int = 17;

/// Every integer constant of `include/mpi.h` and `include/mpi-ext.h`, by name.
pub const ALL: &[(&str, c_int)] = &[
    ("MPI_SUCCESS", MPI_SUCCESS),
    ("MPI_ERR_BUFFER", MPI_ERR_BUFFER),
    ("MPI_ERR_COUNT", MPI_ERR_COUNT),
    ("MPI_ERR_TYPE", MPI_ERR_TYPE),
    ("MPI_ERR_TAG", MPI_ERR_TAG),
    ("MPI_ERR_COMM", MPI_ERR_COMM),
    ("MPI_ERR_RANK", MPI_ERR_RANK),
    ("MPI_ERR_REQUEST", MPI_ERR_REQUEST),
    ("MPI_ERR_ROOT", MPI_ERR_ROOT),
    ("MPI_ERR_GROUP", MPI_ERR_GROUP),
    ("MPI_ERR_OP", MPI_ERR_OP),
    ("MPI_ERR_ARG", MPI_ERR_ARG),
    ("MPI_ERR_UNKNOWN", MPI_ERR_UNKNOWN),
    ("MPI_ERR_TRUNCATE", MPI_ERR_TRUNCATE),
    ("MPI_ERR_OTHER", MPI_ERR_OTHER),
    ("MPI_ERR_INTERN", MPI_ERR_INTERN),
    ("MPI_ERR_IN_STATUS", MPI_ERR_IN_STATUS),
    ("MPI_ERR_SIZE", MPI_ERR_SIZE),
    ("MPI_ERR_SPAWN", MPI_ERR_SPAWN),
    ("MPIX_ERR_PROC_FAILED", MPIX_ERR_PROC_FAILED),
    ("MPIX_ERR_PROC_FAILED_PENDING", MPIX_ERR_PROC_FAILED_PENDING),
    ("MPIX_ERR_REVOKED", MPIX_ERR_REVOKED),
    ("MPIX_FT", MPIX_FT),
    ("RTX_ERR_NOT_COMMITTED", RTX_ERR_NOT_COMMITTED),
    ("RTX_ERR_DATA_LOST", RTX_ERR_DATA_LOST),
    ("RTX_STORE_NULL", RTX_STORE_NULL),
    ("MPI_ERR_PROC_FAILED", MPI_ERR_PROC_FAILED),
    ("MPI_ERR_PROC_FAILED_PENDING", MPI_ERR_PROC_FAILED_PENDING),
    ("MPI_ERR_REVOKED", MPI_ERR_REVOKED),
    ("MPI_ERR_LASTCODE", MPI_ERR_LASTCODE),
    ("MPI_ERR_DIMS", MPI_ERR_DIMS),
    ("MPI_ERR_KEYVAL", MPI_ERR_KEYVAL),
    ("MPI_ERR_CONVERSION", MPI_ERR_CONVERSION),
    ("MPI_ERR_TOPOLOGY", MPI_ERR_TOPOLOGY),
    ("MPI_ERR_INFO", MPI_ERR_INFO),
    ("MPI_ERR_INFO_KEY", MPI_ERR_INFO_KEY),
    ("MPI_ERR_INFO_VALUE", MPI_ERR_INFO_VALUE),
    ("MPI_ERR_INFO_NOKEY", MPI_ERR_INFO_NOKEY),
    ("MPI_RANK_STATE_OK", MPI_RANK_STATE_OK),
    ("MPI_RANK_STATE_FAILED", MPI_RANK_STATE_FAILED),
    ("MPI_RANK_STATE_NULL", MPI_RANK_STATE_NULL),
    ("MPI_RANK_STATE_MOD_NEW", MPI_RANK_STATE_MOD_NEW),
    ("MPI_RANK_STATE_MOD_OLD", MPI_RANK_STATE_MOD_OLD),
    ("MPI_COMM_NULL", MPI_COMM_NULL),
    ("MPI_COMM_WORLD", MPI_COMM_WORLD),
    ("MPI_COMM_SELF", MPI_COMM_SELF),
    ("MPI_INFO_NULL", MPI_INFO_NULL),
    ("MPI_INFO_ENV", MPI_INFO_ENV),
    ("MPI_MAX_INFO_KEY", MPI_MAX_INFO_KEY),
    ("MPI_MAX_INFO_VAL", MPI_MAX_INFO_VAL),
    ("MPI_GROUP_NULL", MPI_GROUP_NULL),
    ("MPI_GROUP_EMPTY", MPI_GROUP_EMPTY),
    ("MPI_REQUEST_NULL", MPI_REQUEST_NULL),
    ("MPI_MESSAGE_NULL", MPI_MESSAGE_NULL),
    ("MPI_FILE_NULL", MPI_FILE_NULL),
    ("MPI_WIN_NULL", MPI_WIN_NULL),
    ("MPI_MESSAGE_NO_PROC", MPI_MESSAGE_NO_PROC),
    ("MPI_ERRHANDLER_NULL", MPI_ERRHANDLER_NULL),
    ("MPI_ERRORS_ARE_FATAL", MPI_ERRORS_ARE_FATAL),
    ("MPI_ERRORS_RETURN", MPI_ERRORS_RETURN),
    ("MPI_ERRORS_ABORT", MPI_ERRORS_ABORT),
    ("MPI_DATATYPE_NULL", MPI_DATATYPE_NULL),
    ("MPI_CHAR", MPI_CHAR),
    ("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR),
    ("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR),
    ("MPI_BYTE", MPI_BYTE),
    ("MPI_SHORT", MPI_SHORT),
    ("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT),
    ("MPI_INT", MPI_INT),
    ("MPI_UNSIGNED", MPI_UNSIGNED),
    ("MPI_LONG", MPI_LONG),
    ("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG),
    ("MPI_LONG_LONG", MPI_LONG_LONG),
    ("MPI_LONG_LONG_INT", MPI_LONG_LONG_INT),
    ("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG),
    ("MPI_FLOAT", MPI_FLOAT),
    ("MPI_DOUBLE", MPI_DOUBLE),
    ("MPI_INT8_T", MPI_INT8_T),
    ("MPI_INT16_T", MPI_INT16_T),
    ("MPI_INT32_T", MPI_INT32_T),
    ("MPI_INT64_T", MPI_INT64_T),
    ("MPI_UINT8_T", MPI_UINT8_T),
    ("MPI_UINT16_T", MPI_UINT16_T),
    ("MPI_UINT32_T", MPI_UINT32_T),
    ("MPI_UINT64_T", MPI_UINT64_T),
    ("MPI_C_BOOL", MPI_C_BOOL),
    ("MPI_INTEGER", MPI_INTEGER),
    ("MPI_REAL", MPI_REAL),
    ("MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION),
    ("MPI_FLOAT_INT", MPI_FLOAT_INT),
    ("MPI_DOUBLE_INT", MPI_DOUBLE_INT),
    ("MPI_LONG_INT", MPI_LONG_INT),
    ("MPI_2INT", MPI_2INT),
    ("MPI_SHORT_INT", MPI_SHORT_INT),
    ("MPI_PACKED", MPI_PACKED),
    ("MPI_AINT", MPI_AINT),
    ("MPI_OFFSET", MPI_OFFSET),
    ("MPI_COUNT", MPI_COUNT),
    ("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE),
    ("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT),
    ("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX),
    ("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX),
    ("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX),
    ("MPI_WCHAR", MPI_WCHAR),
    ("MPI_CXX_BOOL", MPI_CXX_BOOL),
    ("MPI_CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX),
    ("MPI_CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX),
    ("MPI_CXX_LONG_DOUBLE_COMPLEX", MPI_CXX_LONG_DOUBLE_COMPLEX),
    ("MPI_COMPLEX", MPI_COMPLEX),
    ("MPI_DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX),
    ("MPI_LOGICAL", MPI_LOGICAL),
    ("MPI_CHARACTER", MPI_CHARACTER),
    ("MPI_C_COMPLEX", MPI_C_COMPLEX),
    ("MPI_OP_NULL", MPI_OP_NULL),
    ("MPI_REPLACE", MPI_REPLACE),
    ("MPI_NO_OP", MPI_NO_OP),
    ("MPI_MAX", MPI_MAX),
    ("MPI_MIN", MPI_MIN),
    ("MPI_SUM", MPI_SUM),
    ("MPI_PROD", MPI_PROD),
    ("MPI_LAND", MPI_LAND),
    ("MPI_BAND", MPI_BAND),
    ("MPI_LOR", MPI_LOR),
    ("MPI_BOR", MPI_BOR),
    ("MPI_LXOR", MPI_LXOR),
    ("MPI_BXOR", MPI_BXOR),
    ("MPI_MAXLOC", MPI_MAXLOC),
    ("MPI_MINLOC", MPI_MINLOC),
    ("MPI_ORDER_C", MPI_ORDER_C),
    ("MPI_ORDER_FORTRAN", MPI_ORDER_FORTRAN),
    ("MPI_COMM_TYPE_SHARED", MPI_COMM_TYPE_SHARED),
    ("MPI_COMM_TYPE_HW_GUIDED", MPI_COMM_TYPE_HW_GUIDED),
    ("MPI_COMM_TYPE_HW_UNGUIDED", MPI_COMM_TYPE_HW_UNGUIDED),
    (
        "MPI_COMM_TYPE_RESOURCE_GUIDED",
        MPI_COMM_TYPE_RESOURCE_GUIDED,
    ),
    ("MPI_CART", MPI_CART),
    ("MPI_GRAPH", MPI_GRAPH),
    ("MPI_DIST_GRAPH", MPI_DIST_GRAPH),
    ("MPI_PROC_NULL", MPI_PROC_NULL),
    ("MPI_ROOT", MPI_ROOT),
    ("MPI_ANY_SOURCE", MPI_ANY_SOURCE),
    ("MPI_ANY_TAG", MPI_ANY_TAG),
    ("MPI_UNDEFINED", MPI_UNDEFINED),
    ("MPI_TAG_UB_VALUE", MPI_TAG_UB_VALUE),
    ("MPI_BSEND_OVERHEAD", MPI_BSEND_OVERHEAD),
    ("MPI_MAX_ERROR_STRING", MPI_MAX_ERROR_STRING),
    ("MPI_MAX_PROCESSOR_NAME", MPI_MAX_PROCESSOR_NAME),
    ("MPI_IDENT", MPI_IDENT),
    ("MPI_CONGRUENT", MPI_CONGRUENT),
    ("MPI_SIMILAR", MPI_SIMILAR),
    ("MPI_UNEQUAL", MPI_UNEQUAL),
    ("MPI_THREAD_SINGLE", MPI_THREAD_SINGLE),
    ("MPI_THREAD_FUNNELED", MPI_THREAD_FUNNELED),
    ("MPI_THREAD_SERIALIZED", MPI_THREAD_SERIALIZED),
    ("MPI_THREAD_MULTIPLE", MPI_THREAD_MULTIPLE),
    ("MPI_VERSION", MPI_VERSION),
    ("MPI_SUBVERSION", MPI_SUBVERSION),
    (
        "MPI_MAX_LIBRARY_VERSION_STRING",
        MPI_MAX_LIBRARY_VERSION_STRING,
    ),
    ("MPI_MAX_OBJECT_NAME", MPI_MAX_OBJECT_NAME),
    ("MPI_TAG_UB", MPI_TAG_UB),
    ("MPI_WTIME_IS_GLOBAL", MPI_WTIME_IS_GLOBAL),
    ("MPI_UNIVERSE_SIZE", MPI_UNIVERSE_SIZE),
    ("MPI_LASTUSEDCODE", MPI_LASTUSEDCODE),
    ("MPI_HOST", MPI_HOST),
    ("MPI_IO", MPI_IO),
    ("MPI_APPNUM", MPI_APPNUM),
    ("MPI_KEYVAL_INVALID", MPI_KEYVAL_INVALID),
    ("MPI_WIN_BASE", MPI_WIN_BASE),
    ("MPI_WIN_SIZE", MPI_WIN_SIZE),
    ("MPI_WIN_DISP_UNIT", MPI_WIN_DISP_UNIT),
    ("MPI_WIN_CREATE_FLAVOR", MPI_WIN_CREATE_FLAVOR),
    ("MPI_WIN_MODEL", MPI_WIN_MODEL),
    ("MPI_WIN_FLAVOR_CREATE", MPI_WIN_FLAVOR_CREATE),
    ("MPI_WIN_FLAVOR_ALLOCATE", MPI_WIN_FLAVOR_ALLOCATE),
    ("MPI_WIN_FLAVOR_DYNAMIC", MPI_WIN_FLAVOR_DYNAMIC),
    ("MPI_WIN_FLAVOR_SHARED", MPI_WIN_FLAVOR_SHARED),
    ("MPI_WIN_SEPARATE", MPI_WIN_SEPARATE),
    ("MPI_WIN_UNIFIED", MPI_WIN_UNIFIED),
    ("MPI_LOCK_EXCLUSIVE", MPI_LOCK_EXCLUSIVE),
    ("MPI_LOCK_SHARED", MPI_LOCK_SHARED),
    ("MPI_MODE_NOCHECK", MPI_MODE_NOCHECK),
    ("MPI_MODE_NOSTORE", MPI_MODE_NOSTORE),
    ("MPI_MODE_NOPUT", MPI_MODE_NOPUT),
    ("MPI_MODE_NOPRECEDE", MPI_MODE_NOPRECEDE),
    ("MPI_MODE_NOSUCCEED", MPI_MODE_NOSUCCEED),
    ("MPI_ERR_WIN", MPI_ERR_WIN),
    ("MPI_ERR_BASE", MPI_ERR_BASE),
    ("MPI_ERR_NO_MEM", MPI_ERR_NO_MEM),
    ("MPI_ERR_RMA_SYNC", MPI_ERR_RMA_SYNC),
    ("MPI_ERR_RMA_RANGE", MPI_ERR_RMA_RANGE),
    ("MPI_COMBINER_NAMED", MPI_COMBINER_NAMED),
    ("MPI_COMBINER_DUP", MPI_COMBINER_DUP),
    ("MPI_COMBINER_CONTIGUOUS", MPI_COMBINER_CONTIGUOUS),
    ("MPI_COMBINER_VECTOR", MPI_COMBINER_VECTOR),
    ("MPI_COMBINER_HVECTOR", MPI_COMBINER_HVECTOR),
    ("MPI_COMBINER_INDEXED", MPI_COMBINER_INDEXED),
    ("MPI_COMBINER_HINDEXED", MPI_COMBINER_HINDEXED),
    ("MPI_COMBINER_INDEXED_BLOCK", MPI_COMBINER_INDEXED_BLOCK),
    ("MPI_COMBINER_HINDEXED_BLOCK", MPI_COMBINER_HINDEXED_BLOCK),
    ("MPI_COMBINER_STRUCT", MPI_COMBINER_STRUCT),
    ("MPI_COMBINER_SUBARRAY", MPI_COMBINER_SUBARRAY),
    ("MPI_COMBINER_DARRAY", MPI_COMBINER_DARRAY),
    ("MPI_COMBINER_F90_REAL", MPI_COMBINER_F90_REAL),
    ("MPI_COMBINER_F90_COMPLEX", MPI_COMBINER_F90_COMPLEX),
    ("MPI_COMBINER_F90_INTEGER", MPI_COMBINER_F90_INTEGER),
    ("MPI_COMBINER_RESIZED", MPI_COMBINER_RESIZED),
    ("MPI_COMBINER_VALUE_INDEX", MPI_COMBINER_VALUE_INDEX),
];

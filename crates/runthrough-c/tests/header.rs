// SPDX-License-Identifier: MIT OR Apache-2.0
//! The header check (SPEC §5): `include/mpi.h` and `include/mpi-ext.h` (the ULFM names) hold
//! exactly the integer constants of
//! `runthrough_c::constants::ALL`, whose values come from the Rust runtime (the error classes of
//! `runthrough::ErrorClass`, the bits of `runthrough::RankState`), and declares every function
//! the library exports.

use std::collections::BTreeMap;

use runthrough::{Error, ErrorClass, RankState};
use runthrough_c::constants::{self, ALL};

const HEADER: &str = concat!(
    include_str!("../include/mpi.h"),
    include_str!("../include/mpi-ext.h")
);

/// `#define NAME VALUE` lines whose value is an integer literal, possibly in parentheses.
fn header_constants() -> BTreeMap<String, i64> {
    let mut found = BTreeMap::new();
    for line in HEADER.lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let value = value.trim_start_matches('(').trim_end_matches(')');
        if let Ok(value) = value.parse::<i64>() {
            assert!(
                found.insert(name.to_string(), value).is_none(),
                "{name} defined twice"
            );
        }
    }
    found
}

#[test]
fn header_constants_are_the_rust_values() {
    let header = header_constants();
    let rust: BTreeMap<String, i64> = ALL
        .iter()
        .map(|&(name, value)| (name.to_string(), i64::from(value)))
        .collect();
    assert_eq!(header, rust);
}

#[test]
fn error_classes_and_rank_states_match_the_runtime() {
    let classes = [
        ("MPI_ERR_SIZE", ErrorClass::Size),
        ("MPIX_ERR_PROC_FAILED", ErrorClass::ProcFailed),
        (
            "MPIX_ERR_PROC_FAILED_PENDING",
            ErrorClass::ProcFailedPending,
        ),
        ("MPIX_ERR_REVOKED", ErrorClass::Revoked),
        ("MPI_ERR_COMM", ErrorClass::Comm),
        ("MPI_ERR_ARG", ErrorClass::Arg),
        ("MPI_ERR_COUNT", ErrorClass::Count),
        ("MPI_ERR_TRUNCATE", ErrorClass::Truncate),
    ];
    let header = header_constants();
    for (name, class) in classes {
        assert_eq!(header[name], class as i64, "{name}");
    }
    assert_eq!(
        header["MPI_ERR_SIZE"],
        Error::Size { needed: 1 }.class() as i64
    );
    let states = [
        ("MPI_RANK_STATE_OK", RankState::OK),
        ("MPI_RANK_STATE_FAILED", RankState::FAILED),
        ("MPI_RANK_STATE_NULL", RankState::NULL),
        ("MPI_RANK_STATE_MOD_NEW", RankState::NEW),
        ("MPI_RANK_STATE_MOD_OLD", RankState::OLD),
    ];
    let mut seen = 0;
    for (name, state) in states {
        let value = header[name];
        assert_eq!(value, i64::from(state.bits()), "{name}");
        assert_eq!(value.count_ones(), 1, "{name} is one bit");
        assert_eq!(seen & value, 0, "{name} is distinct");
        seen |= value;
    }
    // The C-only classes do not collide with a runtime class.
    for c_only in [
        constants::ERR_UNKNOWN,
        constants::ERR_IN_STATUS,
        constants::ERR_LASTCODE,
        constants::ERR_DIMS,
        constants::ERR_KEYVAL,
        constants::ERR_TOPOLOGY,
        constants::ERR_INFO,
        constants::ERR_INFO_KEY,
        constants::ERR_INFO_VALUE,
        constants::ERR_INFO_NOKEY,
    ] {
        assert!(!ALL
            .iter()
            .filter(|(name, _)| !matches!(
                *name,
                "MPI_ERR_UNKNOWN"
                    | "MPI_ERR_IN_STATUS"
                    | "MPI_ERR_LASTCODE"
                    | "MPI_ERR_DIMS"
                    | "MPI_ERR_KEYVAL"
                    | "MPI_ERR_TOPOLOGY"
                    | "MPI_ERR_INFO"
                    | "MPI_ERR_INFO_KEY"
                    | "MPI_ERR_INFO_VALUE"
                    | "MPI_ERR_INFO_NOKEY"
            ))
            .filter(|(name, _)| name.starts_with("MPI_ERR") || name.starts_with("MPIX_ERR"))
            .any(|&(_, v)| v == c_only));
    }
}

/// Every function the library defines is declared in the header with the same name, and vice
/// versa (the signatures themselves are checked by compiling the C programs with -Werror).
#[test]
fn header_declares_every_exported_function() {
    let source_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut exported = Vec::new();
    for entry in std::fs::read_dir(source_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines() {
                let line = line.trim_start();
                let Some(rest) = line
                    .strip_prefix("pub unsafe extern \"C\" fn ")
                    .or_else(|| line.strip_prefix("pub extern \"C\" fn "))
                else {
                    continue;
                };
                exported.push(rest.split('(').next().unwrap().to_string());
            }
        }
    }
    exported.sort();
    let mut declared: Vec<String> = HEADER
        .lines()
        .filter(|l| {
            // `int MPI_...(`, `double MPI_...(`, and the handle conversions, which return a
            // handle type (`MPI_Fint MPI_Comm_c2f(`, `MPI_Comm MPI_Comm_f2c(`).
            let mut words = l.split_whitespace();
            let (Some(returns), Some(name)) = (words.next(), words.next()) else {
                return false;
            };
            (returns == "int" || returns == "double" || returns.starts_with("MPI_"))
                && name.starts_with("MP")
                && name.contains('(')
        })
        .map(|l| {
            l.split_whitespace()
                .nth(1)
                .unwrap()
                .split('(')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    declared.sort();
    assert_eq!(exported, declared);
}

/// `tests/c/errors.c` checks the string of every error class the library can return: its list
/// holds every class of the header (all but `MPI_ERR_LASTCODE`, which is a bound).
#[test]
fn the_error_string_test_covers_every_class() {
    let program = include_str!("c/errors.c");
    let missing: Vec<&str> = ALL
        .iter()
        .map(|&(name, _)| name)
        .filter(|name| {
            (name.starts_with("MPI_ERR_")
                || name.starts_with("MPIX_ERR_")
                || *name == "MPI_SUCCESS")
                && *name != "MPI_ERR_LASTCODE"
        })
        .filter(|name| !program.contains(&format!("CLASS({name})")))
        .collect();
    assert!(
        missing.is_empty(),
        "tests/c/errors.c does not check {missing:?}"
    );
}

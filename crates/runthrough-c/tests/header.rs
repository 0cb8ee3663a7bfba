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
                && (name.starts_with("MP") || name.starts_with("RTX_"))
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

const PROFILING_BEGIN: &str =
    "/* The profiling interface (generated by crates/runthrough-c/tests/header.rs from the";
const PROFILING_END: &str = "/* The profiling interface: end. */";

/// The declarations of `header`'s `MPI_` / `MPIX_` functions outside its profiling block, each
/// on one line with its whitespace collapsed.
fn declarations(header: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    let mut in_block = false;
    for line in header.lines() {
        if line.starts_with(PROFILING_BEGIN) {
            in_block = true;
        }
        if in_block {
            in_block = !line.starts_with(PROFILING_END);
            continue;
        }
        if current.is_none() {
            let mut words = line.split_whitespace();
            let (Some(returns), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            let function = name.starts_with("MPI_") || name.starts_with("MPIX_");
            if !(returns == "int" || returns == "double" || returns.starts_with("MPI_"))
                || !function
                || !name.contains('(')
            {
                continue;
            }
            current = Some(String::new());
        }
        let text = current.as_mut().unwrap();
        text.push(' ');
        text.push_str(line.trim());
        if line.trim_end().ends_with(';') {
            found.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
            current = None;
        }
    }
    found
}

/// The profiling block of a header: each declaration under its `PMPI_` / `PMPIX_` name, wrapped
/// at 100 columns below its opening parenthesis.
fn profiling_block(header: &str) -> String {
    let mut block = format!(
        "{PROFILING_BEGIN}\n * declarations above; `RT_UPDATE_README=1 cargo test -p runthrough-c \
         --test header` rewrites it):\n * every function under its PMPI_ name, for a tool that \
         defines an MPI_ function itself and\n * calls the library's through this name. */\n"
    );
    for declaration in declarations(header) {
        let declaration = declaration.replacen(" MPI", " PMPI", 1);
        let indent = declaration.find('(').unwrap() + 1;
        let mut line = String::new();
        for (i, part) in declaration.split(", ").enumerate() {
            let piece = if i == 0 {
                part.to_string()
            } else {
                format!(" {part}")
            };
            if i > 0 && line.len() + piece.len() + 2 > 100 {
                block.push_str(&line);
                block.push_str(",\n");
                line = format!("{}{}", " ".repeat(indent), part);
            } else {
                if i > 0 {
                    line.push(',');
                }
                line.push_str(&piece);
            }
        }
        block.push_str(&line);
        block.push('\n');
    }
    block.push_str(PROFILING_END);
    block.push('\n');
    block
}

/// Both headers declare each of their functions under its profiling name too, in a block
/// generated from their declarations (the library exports those names: `tests/mpi_calls.rs`).
#[test]
fn headers_declare_the_profiling_names() {
    for file in ["mpi.h", "mpi-ext.h"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("include")
            .join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let block = profiling_block(&text);
        let (start, end) = match (text.find(PROFILING_BEGIN), text.find(PROFILING_END)) {
            (Some(start), Some(end)) => (start, end + PROFILING_END.len() + 1),
            // The first time: before the closing `extern "C"` guard.
            _ => {
                let at = text.rfind("#ifdef __cplusplus\n}").unwrap();
                (at, at)
            }
        };
        if text[start..end] == block {
            continue;
        }
        if std::env::var_os("RT_UPDATE_README").is_some() {
            let separator = if start == end { "\n" } else { "" };
            let updated = format!("{}{block}{separator}{}", &text[..start], &text[end..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!(
                "include/{file}'s profiling names are out of date (rerun with RT_UPDATE_README=1)"
            );
        }
    }
}

/// The Python package declares the C calls it uses again (cffi in ABI mode reads no header):
/// each of its declarations is the header's, and each of its constants has the header's value.
#[test]
fn the_python_package_declares_what_the_headers_declare() {
    let python = include_str!("../../../python/runthrough/__init__.py");
    let start = python.find("_CDEF = \"\"\"").expect("the package's cdef") + 11;
    let cdef = &python[start..start + python[start..].find("\"\"\"").unwrap()];
    let squeeze = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let header = squeeze(HEADER).replace("( ", "(");
    let constants = header_constants();
    let mut declarations = 0;
    let mut current = String::new();
    for line in cdef.lines() {
        if let Some(rest) = line.strip_prefix("#define ") {
            let mut words = rest.split_whitespace();
            let (name, value) = (words.next().unwrap(), words.next().unwrap());
            assert_eq!(
                constants.get(name).map(|v| v.to_string()),
                Some(value.to_string()),
                "{name}"
            );
            continue;
        }
        if line.starts_with("int ") || !current.is_empty() {
            current.push(' ');
            current.push_str(line);
            if line.trim_end().ends_with(';') {
                let declaration = squeeze(&current);
                assert!(
                    header.contains(&declaration),
                    "not in the headers: {declaration}"
                );
                declarations += 1;
                current.clear();
            }
        }
    }
    assert!(declarations >= 17, "{declarations} declarations read");
}

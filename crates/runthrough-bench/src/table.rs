// SPDX-License-Identifier: MIT OR Apache-2.0
//! The markdown table and the JSON rows.
//!
//! Columns: op, ranks, transport, bytes, median / min / max in microseconds per operation,
//! extra (bandwidth in GB/s; validate_global as a multiple of all_reduce(8 B) on the same
//! transport and ranks), impl, and with `--compare` the Open MPI ULFM median of the matching
//! row (same op, ranks and bytes; see [`super::compare::counterpart`]) and the ratio
//! runthrough / Open MPI of the medians (below 1: runthrough is faster).

use std::io::Write;

use super::compare::{counterpart, BUSY, QUIET};
use super::Row;

fn us(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.3}")
    } else {
        "missing".to_string()
    }
}

/// Prints the table on standard output.
pub(super) fn print(rows: &[Row]) {
    let compare = rows.iter().any(|r| r.implementation == "openmpi-ulfm");
    print!("| op | ranks | transport | bytes | median (us) | min (us) | max (us) | extra | impl |");
    if compare {
        print!(" Open MPI median (us) | ratio rt/ompi |");
    }
    println!();
    print!("|---|---:|---|---:|---:|---:|---:|---|---|");
    if compare {
        print!("---:|---:|");
    }
    println!();
    for row in rows {
        let all_reduce = rows.iter().find(|r| {
            r.op == "all_reduce"
                && r.ranks == row.ranks
                && r.bytes == 8
                && r.transport == row.transport
                && r.implementation == row.implementation
        });
        let extra = if !row.median_us.is_finite() {
            String::new()
        } else if row.op.contains("bandwidth") {
            format!("{:.2} GB/s", row.bytes as f64 / row.median_us / 1e3)
        } else if row.op == "validate_global" {
            all_reduce.map_or(String::new(), |a| {
                format!("{:.2}x all_reduce(8 B)", row.median_us / a.median_us)
            })
        } else {
            String::new()
        };
        print!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.op,
            row.ranks,
            row.transport,
            row.bytes,
            us(row.median_us),
            us(row.min_us),
            us(row.max_us),
            extra,
            row.implementation
        );
        if compare {
            let theirs = counterpart(&row.op);
            let reference = (row.implementation == "runthrough")
                .then(|| {
                    // TCP rows against Open MPI's TCP path, rows beside the busy neighbour
                    // against its own, the others against its launcher's defaults.
                    let path = match row.transport {
                        "tcp" => "tcp",
                        BUSY => BUSY,
                        _ => QUIET,
                    };
                    rows.iter().find(|r| {
                        r.implementation == "openmpi-ulfm"
                            && r.transport == path
                            && r.op == theirs
                            && r.ranks == row.ranks
                            && r.bytes == row.bytes
                    })
                })
                .flatten();
            match reference {
                Some(r) if row.median_us.is_finite() && r.median_us > 0.0 => {
                    let vs = if theirs == row.op {
                        String::new()
                    } else {
                        format!(" (vs {theirs})")
                    };
                    let ratio = row.median_us / r.median_us;
                    let ratio = if ratio < 0.1 {
                        format!("{ratio:.4}")
                    } else {
                        format!("{ratio:.2}")
                    };
                    print!(" {:.3} | {ratio}{vs} |", r.median_us);
                }
                _ => print!("  |  |"),
            }
        }
        println!();
    }
}

/// One JSON record per measured row (missing rows are left out), in a directory made if missing.
pub(super) fn write_json(path: &std::path::Path, rows: &[Row]) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).expect("making the JSON file's directory");
    }
    let mut file = std::fs::File::create(path).expect("creating the JSON file");
    for row in rows.iter().filter(|r| r.median_us.is_finite()) {
        writeln!(file, "{}", row.json()).expect("writing the JSON file");
    }
}

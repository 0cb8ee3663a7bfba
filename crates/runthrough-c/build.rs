// SPDX-License-Identifier: MIT OR Apache-2.0
//! Compiles the library's one C file: arithmetic on `long double`, which Rust has no type for
//! (`src/wide.rs`); and writes the profiling interface: for every `MPI_*` / `MPIX_*` function a
//! module of `src/` exports, its `PMPI_*` / `PMPIX_*` twin, into
//! `$OUT_DIR/profiling/<module>.rs`, which the module includes with `profiling_names!`. The
//! list of functions is the source itself, so a function added later gets its twin with no
//! other edit. `tests/profiling.rs` checks that the exported `MPI_` and `PMPI_` sets are equal.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=csrc/long_double.c");
    cc::Build::new()
        .file("csrc/long_double.c")
        .flag_if_supported("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .compile("rt_long_double");

    // Calls inside the shared library bind to its own definitions: a tool that defines
    // `MPI_Send` and calls `PMPI_Send` must reach the library's `MPI_Send` from there, not its
    // own again (without this, ELF interposition sends the twin's call back to the tool's), and
    // the library's own calls of its functions are not counted twice by a tool.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");

    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("profiling");
    std::fs::create_dir_all(&out).unwrap();
    println!("cargo:rerun-if-changed=src");
    for entry in std::fs::read_dir("src").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let source = std::fs::read_to_string(&path).unwrap();
        let twins = twins(&source).unwrap_or_else(|why| {
            panic!(
                "{}: cannot read an exported function: {why}",
                path.display()
            )
        });
        let name = path.file_name().unwrap();
        std::fs::write(out.join(name), twins).unwrap();
    }
}

/// The `PMPI_` twins of the exported functions of one source file, as Rust items.
fn twins(source: &str) -> Result<String, String> {
    let mut items = String::new();
    let mut rest = source;
    while let Some(at) = rest.find("extern \"C\" fn MP") {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let prefix = rest[line_start..at].trim();
        let after = &rest[at + "extern \"C\" fn ".len()..];
        rest = after;
        let safety = match prefix {
            "pub unsafe" => "unsafe ",
            "pub" => "",
            _ => continue, // not an exported function (a callback type, a crate-private fn)
        };
        let open = after.find('(').ok_or("no parameter list")?;
        let name = &after[..open];
        if !(name.starts_with("MPI_") || name.starts_with("MPIX_")) {
            continue;
        }
        let params_end = matching_paren(after, open).ok_or("unbalanced parameters")?;
        let params = &after[open + 1..params_end];
        let body = after[params_end + 1..].find('{').ok_or("no body")?;
        let returns = after[params_end + 1..params_end + 1 + body].trim();
        let names = top_level_split(params)
            .into_iter()
            .map(|param| {
                param
                    .split_once(':')
                    .map(|(name, _)| name.trim().to_string())
                    .ok_or_else(|| format!("{name}: a parameter without a type: {param}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let params: Vec<String> = top_level_split(params)
            .into_iter()
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let twin = format!("P{name}");
        let call = format!("{name}({})", names.join(", "));
        writeln!(
            items,
            "/// `{twin}`: [`{name}`] under its profiling-interface name, for a tool that defines \
             `{name}` itself and calls this one.\n///\n/// # Safety\n/// As for [`{name}`].\n\
             #[no_mangle]\n#[allow(clippy::too_many_arguments)]\n\
             pub {safety}extern \"C\" fn {twin}({}) {returns} {{",
            params.join(", ")
        )
        .unwrap();
        if safety.is_empty() {
            writeln!(items, "    {call}\n}}\n").unwrap();
        } else {
            writeln!(
                items,
                "    // SAFETY: the caller keeps {name}'s contract, which this forwards.\n    \
                 unsafe {{ {call} }}\n}}\n"
            )
            .unwrap();
        }
    }
    Ok(items)
}

/// The index of the parenthesis closing the one at `open`.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` split at the commas outside any parentheses or angle brackets, empty parts dropped.
fn top_level_split(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        let arrow = previous == '-';
        previous = c;
        match c {
            '>' if arrow => {} // `->` in a function pointer type
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

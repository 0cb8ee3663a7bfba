// SPDX-License-Identifier: MIT OR Apache-2.0
//! The code a newcomer reads first. The README's Rust, C and Python blocks are excerpts of
//! files that tests build and run (each block's first line names its file): every other line
//! of a block is a line of that file, in the file's order (indentation aside), or an elision
//! (`...`, `// ...`, `/* ... */`, `# ...`). The guide includes those files whole or by anchor
//! (`{{#include}}`), so only the README's copies can drift. And the README's Rust example,
//! `quickstart`, runs: seven survivors, each with the sum over the ranks G says are alive.

use std::path::Path;
use std::process::Command;

const QUICKSTART: &str = env!("CARGO_BIN_EXE_quickstart");

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The README's code blocks of `language`, each as its lines.
fn blocks(text: &str, language: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    // Outside any block: None; inside one: Some(its lines, if it is of `language`).
    let mut inside: Option<Option<Vec<String>>> = None;
    for line in text.lines() {
        if let Some(tag) = line.trim().strip_prefix("```") {
            match inside.take() {
                Some(block) => blocks.extend(block),
                None => inside = Some((tag == language).then(Vec::new)),
            }
            continue;
        }
        if let Some(Some(block)) = inside.as_mut() {
            block.push(line.to_string());
        }
    }
    blocks
}

fn is_elision(line: &str) -> bool {
    let t = line.trim();
    t == "..." || t.starts_with("// ...") || t.starts_with("/* ...") || t.starts_with("# ...")
}

/// Checks one block: its first line names the file, its other lines are the file's, in order.
fn check_excerpt(block: &[String], comment: &str) -> String {
    let first = block.first().expect("a non-empty block").trim();
    let named = first
        .strip_prefix(comment)
        .unwrap_or_else(|| panic!("the block's first line names its file: {first}"))
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches([':', ',']);
    let file = std::fs::read_to_string(root().join(named))
        .unwrap_or_else(|e| panic!("{named}, named by a README block: {e}"));
    let lines: Vec<&str> = file.lines().map(str::trim).collect();
    let mut at = 0;
    for line in &block[1..] {
        let want = line.trim();
        if want.is_empty() || is_elision(want) {
            continue;
        }
        match lines[at..].iter().position(|l| *l == want) {
            Some(found) => at += found + 1,
            None => {
                panic!("README block of {named}: `{want}` is not in the file (after line {at})")
            }
        }
    }
    named.to_string()
}

#[test]
fn the_readme_code_blocks_are_excerpts_of_tested_files() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut named = Vec::new();
    for (language, comment) in [("rust", "//"), ("c", "//"), ("python", "#")] {
        let found = blocks(&readme, language);
        assert!(!found.is_empty(), "the README has a {language} example");
        for block in found {
            named.push(check_excerpt(&block, comment));
        }
    }
    assert_eq!(
        named,
        [
            "crates/runthrough-examples/src/bin/quickstart.rs",
            "examples/c/allreduce_ft.c",
            "python/examples/bag_of_tasks.py"
        ]
    );
}

#[test]
fn the_readme_rust_example_runs_and_checks_its_sum() {
    let out = Command::new(QUICKSTART).output().expect("quickstart runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout.matches(", over the survivors 32").count(),
        7,
        "{stdout}"
    );
    assert!(stdout.contains("rank 3: Killed"), "{stdout}");
}

/// Every relative link of the README leads to a file of the repository (the guide's own links
/// are checked by `mdbook build docs`, whose link checker fails the build).
#[test]
fn the_readme_links_lead_to_files() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut links = 0;
    for (at, _) in readme.match_indices("](") {
        let target = readme[at + 2..].split(')').next().unwrap();
        let path = target.split('#').next().unwrap();
        if path.is_empty() || path.contains("://") {
            continue;
        }
        links += 1;
        assert!(
            root().join(path).exists(),
            "README.md links to {target}, which is not there"
        );
    }
    assert!(links >= 10, "only {links} links");
}

/// The work of the spare-ranks pattern: `PARTS` parts, each held by one rank.
const PARTS: u32 = 6;

/// The guide's spare-ranks pattern (docs/src/model.md): ranks 0 to 5 hold a part each, ranks
/// 6 and 7 wait as spares. Every round the holders all-reduce their parts' numbers over their
/// communicator, and every rank, spares included, calls `validate_global` on the world, so all
/// see the same G: a dead holder's part goes to the lowest spare alive, the holders'
/// communicator is made again with `split`, and the round is redone. Returns the rank's part
/// (if it holds one) and its last sum.
fn with_spares(world: &runthrough::Comm) -> runthrough::Result<(Option<u32>, u64)> {
    use runthrough::{Error, Op, RankState};
    // ANCHOR: spares
    let me = world.rank();
    let mut holder: Vec<u32> = (0..PARTS).collect(); // part -> the world rank that holds it
    let mut part = holder.iter().position(|&r| r == me).map(|p| p as u32);
    let mut holders = world.split(part.map(|_| 0), part.map_or(0, |p| p as i32))?;
    let (mut sum, mut round) = ([0u64], 0);
    while round < 10 {
        let reduced = match (&holders, part) {
            (Some(comm), Some(p)) => comm.all_reduce(&[u64::from(p) + 1], &mut sum, Op::Sum),
            _ => Ok(()), // a spare: nothing to do but validate with the others
        };
        let g = world.validate_global()?; // every rank, spares included, sees the same G
        if g.new_failures() {
            // Each dead holder's part goes to the lowest spare alive, the same at every rank.
            let alive = g.ranks(RankState::OK).map(|i| i.rank);
            let mut spares: Vec<u32> = alive.filter(|r| !holder.contains(r)).collect();
            spares.reverse(); // pop() gives the lowest
            for rank in holder.iter_mut().filter(|r| g.is_failed(**r)) {
                *rank = spares.pop().ok_or(Error::Argument {
                    reason: "no spare left".into(),
                })?;
            }
            part = holder.iter().position(|&r| r == me).map(|p| p as u32);
            holders = world.split(part.map(|_| 0), part.map_or(0, |p| p as i32))?;
            continue; // redo the round with the new holders
        }
        reduced?;
        round += 1;
    }
    // ANCHOR_END: spares
    Ok((part, sum[0]))
}

#[test]
fn a_spare_takes_the_part_of_a_dead_rank() {
    // Rank 2 dies at its 6th call, in the third round.
    let outcomes = runthrough::local(8)
        .kill_at_operation(2, 6)
        .run(with_spares);
    let mut parts = Vec::new();
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        match (rank, outcome) {
            (2, outcome) => assert!(outcome.is_killed(), "{outcome:?}"),
            (rank, runthrough::RankOutcome::Returned(Ok((Some(part), sum)))) => {
                assert_eq!(sum, 21, "rank {rank}: every part counted");
                parts.push((part, rank));
            }
            (7, runthrough::RankOutcome::Returned(Ok((None, _)))) => {}
            (rank, other) => panic!("rank {rank}: {other:?}"),
        }
    }
    parts.sort();
    assert_eq!(parts, [(0, 0), (1, 1), (2, 6), (3, 3), (4, 4), (5, 5)]);
}

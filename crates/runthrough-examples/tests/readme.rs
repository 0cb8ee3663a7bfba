// SPDX-License-Identifier: MIT OR Apache-2.0
//! The example commands for `heat`, `bag_of_tasks` and `tcp_ring` (issue 14, item 6), read from
//! README.md and the guide's pages (`docs/src/*.md`) themselves and run as they write them, with this build's binaries in place of
//! `target/release/...`: in-process (`cargo run ... --bin heat -- ARGS`) and under rtrun
//! (`target/release/rtrun OPTIONS PROGRAM ARGS`, given to `rtrun::run` as rtrun's `main` gives
//! them). Every fault they inject is a call, agreement or iteration point, never a time, so each
//! fires whatever the machine's speed: each job succeeds with `--strict-faults`, every planned
//! fault fired, as many ranks died as the command kills, and the program found its result equal
//! to the failure-free one. A README command this test cannot read (an rtrun option it does not
//! know) fails it, so a new example cannot slip past untested. Jobs run one at a time, each
//! bounded by a time-out.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rtrun::{Job, Strict};

const HEAT: &str = env!("CARGO_BIN_EXE_heat");
const BAG: &str = env!("CARGO_BIN_EXE_bag_of_tasks");
const RING: &str = env!("CARGO_BIN_EXE_tcp_ring");
const EXPLORE: &str = env!("CARGO_BIN_EXE_explore");
const JOB_LIMIT: Duration = Duration::from_secs(120);

static ONE_JOB_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// README.md and every page of the guide, `docs/src/*.md`, in a fixed order.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = vec![root.join("README.md")];
    let mut pages: Vec<_> = std::fs::read_dir(root.join("docs/src"))
        .expect("docs/src")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    paths.extend(pages);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a page");
            (path.display().to_string(), text)
        })
        .collect()
}

/// The commands of the `sh` blocks of the README and the guide, continuation lines joined,
/// comments dropped; a command written in several places is run once.
fn readme_commands() -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    for (_, text) in documents() {
        for command in sh_commands(&text) {
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
    }
    commands
}

/// The commands of one document's `sh` blocks.
fn sh_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh = trimmed == "```sh";
            continue;
        }
        if !in_sh || (current.is_empty() && (trimmed.starts_with('#') || trimmed.is_empty())) {
            continue;
        }
        let code = trimmed.split(" # ").next().unwrap_or("").trim_end();
        match code.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head.trim_end());
                current.push(' ');
            }
            None => {
                current.push_str(code);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    commands
}

/// This build's binary for a README program path, if it is one of this crate's.
fn program(word: &str) -> Option<&'static str> {
    match word {
        "target/release/heat" | "heat" => Some(HEAT),
        "target/release/bag_of_tasks" | "bag_of_tasks" => Some(BAG),
        "target/release/tcp_ring" => Some(RING),
        _ => None,
    }
}

/// How many faults a comma-separated plan holds (`3@5,5@120`: 2).
fn faults_in(plan: &str) -> usize {
    plan.split(',').filter(|f| !f.trim().is_empty()).count()
}

/// The number of faults the program's own `--kill` plans, in its arguments.
fn program_kills(args: &[&str]) -> usize {
    args.windows(2)
        .filter(|w| w[0] == "--kill")
        .map(|w| faults_in(w[1]))
        .sum()
}

/// Whether some line says the result equals the failure-free one (`... : equal` from the bag's
/// master, `... : equal bit for bit` from heat).
fn says_equal(lines: &[&str]) -> bool {
    lines
        .iter()
        .any(|l| l.contains("checksum ") && l.contains(": equal"))
}

/// `cargo run --release -p runthrough-examples --bin NAME -- ARGS`: in-process.
fn run_in_process(command: &str) {
    let (head, args) = command.split_once(" -- ").expect("cargo run ... -- ARGS");
    let name = head.rsplit(' ').next().unwrap();
    let binary = program(name).unwrap_or_else(|| panic!("unknown binary in `{command}`"));
    let args: Vec<&str> = args.split_whitespace().collect();
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(binary)
        .args(&args)
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = format!(
        "`{command}`\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(says_equal(&lines), "{text}");
    assert!(program_kills(&args) > 0, "the example kills: {command}");
}

/// `cargo run --release -p runthrough-examples --bin explore -- ARGS`: every run passes.
fn run_explore(command: &str) {
    let (_, args) = command.split_once(" -- ").expect("cargo run ... -- ARGS");
    let args: Vec<&str> = args
        .split_whitespace()
        .map(|a| a.trim_matches('\''))
        .collect();
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(EXPLORE)
        .args(&args)
        .output()
        .expect("explore runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = format!(
        "`{command}`\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(stdout.contains(", 0 failed"), "{text}");
}

/// `target/release/rtrun OPTIONS PROGRAM ARGS`.
fn run_under_rtrun(command: &str) {
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut job = Job::new(0, HEAT);
    let mut strict_faults = false;
    let mut timeline = false;
    let mut i = 1;
    let binary = loop {
        let word = *words
            .get(i)
            .unwrap_or_else(|| panic!("no program in `{command}`"));
        let value = words.get(i + 1).copied();
        match word {
            "-n" | "-np" => {
                job.size = value.unwrap().parse().unwrap();
                i += 2;
            }
            "--kill" => {
                let plan: runthrough::FaultPlan = value.unwrap().parse().unwrap();
                job.kills.extend(plan.faults().iter().copied());
                i += 2;
            }
            "--timeline" => {
                job.timeline = true;
                timeline = true;
                i += 2;
            }
            "--tag-output" => i += 1,
            "--strict-faults" => {
                strict_faults = true;
                i += 1;
            }
            other if other.starts_with('-') => {
                panic!("`{command}`: this test does not know rtrun's {other}: teach it")
            }
            other => {
                break program(other)
                    .unwrap_or_else(|| panic!("`{command}`: not this crate's program"));
            }
        }
    };
    let args: Vec<&str> = words[i + 1..].to_vec();
    job.program = binary.into();
    job.args = args.iter().map(Into::into).collect();
    job.timeout = Some(JOB_LIMIT);
    let kills = job.kills.len() + program_kills(&args);
    // tcp_ring's first example is the failure-free run; every other example kills.
    assert!(kills > 0 || binary == RING, "the example kills: {command}");
    for kill in &job.kills {
        assert!(
            !matches!(kill.trigger, rtrun::Trigger::After(_)),
            "`{command}`: {kill} depends on timing: use a call, agreement or iteration point"
        );
    }
    if !job.kills.is_empty() {
        assert!(strict_faults, "`{command}` kills without --strict-faults");
    }
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let report = rtrun::run(&job).expect("the job starts");
    let mut text = format!("`{command}`\n{}", report.summary());
    for (rank, _, line) in &report.lines {
        text.push_str(&format!("[{rank}] {line}\n"));
    }
    let strict = Strict {
        deaths: false,
        faults: strict_faults,
    };
    assert_eq!(report.exit_status_with(strict), 0, "{text}");
    assert_eq!(report.unfired().count(), 0, "{text}");
    let died = report.ranks.iter().filter(|r| r.died()).count();
    assert_eq!(died, kills, "each kill is a death\n{text}");
    let lines: Vec<&str> = report.lines.iter().map(|(_, _, l)| l.as_str()).collect();
    if args.windows(2).any(|w| w == ["--recovery", "respawn"]) {
        // Each dead rank replaced by a spawned one: the job ends with its size, none failed.
        let spawned = report
            .ranks
            .iter()
            .filter(|r| r.spawned_by.is_some())
            .count();
        assert_eq!(spawned, kills, "one replacement per death\n{text}");
        let all: Vec<String> = (0..job.size).map(|r| r.to_string()).collect();
        let end = format!("survivors [{}], failed []", all.join(", "));
        assert!(lines.iter().any(|l| l.starts_with(&end)), "{text}");
    }
    if binary == RING {
        // Each survivor checked its sum over the ranks validate_global left (exit 0), and
        // they all agreed on who died: one line per survivor, the same, naming `kills` ranks.
        let agreed: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("agreed failed="))
            .collect();
        assert_eq!(agreed.len(), job.size as usize - kills, "{text}");
        assert!(agreed.windows(2).all(|w| w[0] == w[1]), "{text}");
        let named = agreed[0]
            .split(']')
            .next()
            .unwrap_or("")
            .matches(',')
            .count()
            + usize::from(kills > 0);
        assert_eq!(named, kills, "{text}");
    } else {
        assert!(says_equal(&lines), "{text}");
    }
    if timeline {
        let svg = report.timeline.as_ref().expect("asked for").svg();
        let lanes = svg.matches("class=\"lane\"").count();
        assert_eq!(lanes, job.size as usize, "{svg}");
        assert_eq!(svg.matches("class=\"event death\"").count(), kills);
    }
}

#[test]
fn every_readme_example_of_heat_bag_of_tasks_and_tcp_ring_runs_as_written() {
    let commands = readme_commands();
    let mut ran = Vec::new();
    for command in &commands {
        let words: Vec<&str> = command.split_whitespace().collect();
        let is_ours = words.iter().any(|w| program(w).is_some())
            || command.contains("-p runthrough-examples --bin");
        if command.starts_with("cargo run --release -p runthrough-examples --bin explore") {
            run_explore(command);
        } else if command.starts_with("cargo run --release -p runthrough-examples --bin") {
            run_in_process(command);
        } else if command.starts_with("target/release/rtrun ") && is_ours {
            run_under_rtrun(command);
        } else {
            continue;
        }
        ran.push(command.clone());
    }
    // The examples of the README and the guide: three in-process (heat with both recoveries,
    // the bag); four of heat and bag (one a respawn), two of tcp_ring under rtrun; three
    // explorations.
    let explore = ran.iter().filter(|c| c.contains("--bin explore")).count();
    let in_process = ran.iter().filter(|c| c.starts_with("cargo run")).count() - explore;
    assert_eq!(
        (in_process, ran.len() - in_process - explore, explore),
        (3, 6, 3),
        "{ran:#?}"
    );
}

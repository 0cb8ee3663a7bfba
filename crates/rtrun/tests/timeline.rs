// SPDX-License-Identifier: MIT OR Apache-2.0
//! `rtrun --timeline FILE` (issue 14, item 5): the picture of a job with two kills holds a lane
//! per rank and, on each, the events that happened there, read back from the SVG file; and the
//! ranks are asked for their events only with the option. Jobs run one at a time, each bounded
//! by rtrun's own `--timeout`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rtrun::Job;

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
const RTRUN: &str = env!("CARGO_BIN_EXE_rtrun");

fn file(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The elements of class `class` under `node`.
fn of_class<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
    class: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    node.descendants()
        .filter(move |n| n.attribute("class") == Some(class))
}

/// The texts under `node`, trimmed: the labels shown and the tooltips (`<title>`, which every
/// event has; a label is left out where the lane has no room for it).
fn texts<'a>(node: roxmltree::Node<'a, '_>) -> Vec<&'a str> {
    node.descendants()
        .filter(|n| n.is_element() && (n.has_tag_name("text") || n.has_tag_name("title")))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect()
}

/// Whether some text under `node` contains `wanted`.
fn shows(node: roxmltree::Node<'_, '_>, wanted: &str) -> bool {
    texts(node).iter().any(|t| t.contains(wanted))
}

/// Four ranks; rank 2 dies as it starts its first call (a validate_global), rank 3 inside its
/// second agreement (an agree). The survivors validate, agree, validate, shrink to 2 ranks and
/// agree and validate there. The picture has every lane and each of those events.
#[test]
fn the_timeline_of_a_job_with_two_kills_shows_each_rank_and_event() {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let svg_path = file("two_kills.svg");
    let out = Command::new(RTRUN)
        .args(["-n", "4", "--timeout", "60", "--strict-faults"])
        .args(["--kill", "2@call:1", "--kill", "3@validate_global:2"])
        .arg("--timeline")
        .arg(&svg_path)
        .args([CHECK, "shrink"])
        .output()
        .expect("rtrun runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("rtrun: timeline drawn in {}", svg_path.display())),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(&svg_path).expect("the picture is written");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"), "{svg}");

    let lanes: Vec<_> = of_class(root, "lane").collect();
    let numbers: Vec<Option<&str>> = lanes.iter().map(|l| l.attribute("data-rank")).collect();
    assert_eq!(
        numbers,
        [Some("0"), Some("1"), Some("2"), Some("3")],
        "one lane per rank"
    );
    let count = |rank: usize, class: &str| of_class(lanes[rank], class).count();
    for (rank, lane) in lanes.iter().enumerate() {
        assert_eq!(count(rank, "event start"), 1, "rank {rank}");
        assert_eq!(count(rank, "event ready"), 1, "rank {rank}");
        assert!(texts(*lane).contains(&format!("rank {rank}").as_str()));
    }
    // The victims: the fault that fired, and how each died.
    for (rank, fault) in [(2, "--kill 2@call:1"), (3, "--kill 3@validate_global:2:1")] {
        assert_eq!(count(rank, "event fired"), 1, "rank {rank}");
        let death: Vec<_> = of_class(lanes[rank], "event death").collect();
        assert_eq!(death.len(), 1, "rank {rank}");
        assert_eq!(death[0].attribute("data-how"), Some("injected"));
        assert_eq!(count(rank, "event end"), 0, "rank {rank}");
        assert_eq!(count(rank, "event finalize"), 0, "rank {rank}");
        let shown = texts(lanes[rank]);
        assert!(shows(lanes[rank], fault), "{fault}: {shown:?}");
        assert!(
            shown.contains(&"killed by signal 9 (SIGKILL), injected"),
            "{shown:?}"
        );
    }
    // The survivors: both failures learned, what each call returned, finalize, the end.
    for rank in [0, 1] {
        let learned: Vec<Option<&str>> = of_class(lanes[rank], "event learned")
            .map(|n| n.attribute("data-peer"))
            .collect();
        assert!(
            learned.contains(&Some("2")) && learned.contains(&Some("3")),
            "rank {rank} learned {learned:?}"
        );
        for wanted in [
            format!("rank {rank}: validate_global: G {{2}}, NEW {{2}}"),
            format!("rank {rank}: validate_global: G {{2,3}}, NEW {{3}}"),
            format!("rank {rank}: shrink: 2 ranks"),
            format!("rank {rank}: agree (on a comm of 2): flag 0x1"),
            format!("rank {rank} exited with status 0"),
        ] {
            let shown = texts(lanes[rank]);
            assert!(shows(lanes[rank], &wanted), "{wanted:?} in {shown:?}");
        }
        assert_eq!(count(rank, "event shrink"), 1, "rank {rank}");
        assert_eq!(count(rank, "event finalize"), 1, "rank {rank}");
        assert_eq!(count(rank, "event end"), 1, "rank {rank}");
        assert_eq!(count(rank, "event death"), 0, "rank {rank}");
    }
    // A line from each death to each rank that learned of it: the two survivors, and rank 3
    // too if it learned of rank 2's death before its own.
    let spread = of_class(root, "spread")
        .next()
        .expect("the spread of failures");
    let learned = of_class(root, "event learned").count();
    assert!(learned >= 4, "{learned}");
    assert_eq!(
        spread.children().filter(|n| n.is_element()).count(),
        learned
    );
}

/// rtrun hands the ranks `RT_TIMELINE=1` with the option only, whatever its own environment
/// or the job's says: without it the ranks have nothing to report and check nothing more.
#[test]
fn only_a_job_with_a_timeline_asks_the_ranks_for_events() {
    let _one = ONE_JOB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for timeline in [false, true] {
        let mut job = Job::new(2, "/bin/sh");
        job.args = vec!["-c".into(), "echo \"timeline=[$RT_TIMELINE]\"".into()];
        job.env = vec![("RT_TIMELINE".into(), "1".into())];
        job.timeline = timeline;
        job.timeout = Some(Duration::from_secs(60));
        let report = rtrun::run(&job).expect("the job starts");
        let wanted = if timeline {
            "timeline=[1]"
        } else {
            "timeline=[]"
        };
        for rank in 0..2 {
            assert_eq!(report.stdout_of(rank), [wanted], "{}", report.summary());
        }
        assert_eq!(report.timeline.is_some(), timeline);
    }
}

/// A file that cannot be written is refused before anything starts (exit status 2).
#[test]
fn a_timeline_that_cannot_be_written_is_refused_before_the_start() {
    let out = Command::new(RTRUN)
        .args([
            "-n",
            "2",
            "--timeline",
            "/nonexistent-dir/job.svg",
            CHECK,
            "ring",
        ])
        .output()
        .expect("rtrun runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--timeline /nonexistent-dir/job.svg"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "no rank ran");
}

/// The guide's picture, `docs/src/timeline.svg`, is what its page (`docs/src/timeline.md`) says
/// it is: the heat run with rtrun's two kills, 8 lanes, ranks 2 and 6 killed by their planned faults, and every
/// survivor's detector learning of both deaths and validate_global returning each as NEW.
#[test]
fn the_readme_picture_shows_a_heat_run_with_two_kills() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/src/timeline.svg");
    let svg = std::fs::read_to_string(path).expect("docs/src/timeline.svg");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let lanes: Vec<_> = of_class(doc.root_element(), "lane").collect();
    assert_eq!(lanes.len(), 8);
    for (rank, lane) in lanes.iter().enumerate() {
        assert_eq!(lane.attribute("data-rank"), Some(rank.to_string().as_str()));
        let deaths: Vec<_> = of_class(*lane, "event death").collect();
        match rank {
            2 | 6 => {
                let fault = if rank == 2 {
                    "--kill 2@validate_global:30:1"
                } else {
                    "--kill 6@call:600"
                };
                assert!(shows(*lane, fault), "{:?}", texts(*lane));
                assert_eq!(deaths.len(), 1);
                assert_eq!(deaths[0].attribute("data-how"), Some("injected"));
            }
            _ => {
                assert!(deaths.is_empty(), "rank {rank}");
                assert_eq!(of_class(*lane, "event end").count(), 1, "rank {rank}");
                let learned: Vec<_> = of_class(*lane, "event learned")
                    .filter_map(|n| n.attribute("data-peer"))
                    .collect();
                assert_eq!(learned, ["2", "6"], "rank {rank}");
                for news in ["G {2}, NEW {2}", "G {2,6}, NEW {6}"] {
                    assert!(shows(*lane, news), "rank {rank}: {news}");
                }
            }
        }
    }
}

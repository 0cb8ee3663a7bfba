// SPDX-License-Identifier: MIT OR Apache-2.0
//! `LocalUniverse::timeline` (issue 14, item 5): the picture of an in-process job with a kill,
//! read back from the SVG file: a lane per rank, the fault that fired and the death on the
//! victim's, and on each survivor's the failure its detector learned of, what validate_global,
//! agree and shrink returned, and its end.

use runthrough::{Error, RankState};

/// The elements of class `class` under `node`.
fn of_class<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
    class: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    node.descendants()
        .filter(move |n| n.attribute("class") == Some(class))
}

/// Whether a label or tooltip under `node` contains `wanted`.
fn shows(node: roxmltree::Node<'_, '_>, wanted: &str) -> bool {
    node.descendants()
        .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .any(|t| t.contains(wanted))
}

#[test]
fn an_in_process_job_draws_its_timeline() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("in_process.svg");
    let _ = std::fs::remove_file(&path);
    let outcomes = runthrough::local(4)
        .kill_at_operation(2, 1)
        .timeline(&path)
        .run(|world| {
            let g = world.validate_global()?;
            let flag = world.agree(1)?;
            let small = world.shrink()?;
            Ok::<_, Error>((g.count(RankState::NULL), flag, small.size()))
        });
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        if rank == 2 {
            assert!(outcome.is_killed());
        } else {
            assert_eq!(outcome.returned(), Some(Ok((1, 1, 3))), "rank {rank}");
        }
    }
    let svg = std::fs::read_to_string(&path).expect("the picture is written");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let lanes: Vec<_> = of_class(doc.root_element(), "lane").collect();
    assert_eq!(lanes.len(), 4, "{svg}");
    for (rank, lane) in lanes.iter().enumerate() {
        assert_eq!(lane.attribute("data-rank"), Some(rank.to_string().as_str()));
        assert_eq!(of_class(*lane, "event start").count(), 1, "rank {rank}");
        if rank == 2 {
            assert!(shows(*lane, "2@call:1"), "the fault that fired");
            let death: Vec<_> = of_class(*lane, "event death").collect();
            assert_eq!(death.len(), 1);
            assert_eq!(death[0].attribute("data-how"), Some("injected"));
            continue;
        }
        let learned: Vec<_> = of_class(*lane, "event learned")
            .filter_map(|n| n.attribute("data-peer"))
            .collect();
        assert_eq!(learned, ["2"], "rank {rank}");
        for wanted in [
            format!("rank {rank}: validate_global: G {{2}}, NEW {{2}}"),
            format!("rank {rank}: agree: flag 0x1"),
            format!("rank {rank}: shrink: 3 ranks"),
            format!("rank {rank} returned"),
        ] {
            assert!(shows(*lane, &wanted), "{wanted}\n{svg}");
        }
        assert_eq!(of_class(*lane, "event death").count(), 0, "rank {rank}");
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The picture of a job's timeline: one lane per rank, drawn as SVG ([`Timeline::svg`]).
//!
//! rtrun (`rtrun --timeline FILE`) and the in-process universe
//! ([`crate::LocalUniverse::timeline`]) fill a [`Timeline`] with what happened to each rank and
//! when: its start, the planned faults that fired, its death and how, or its end, and the
//! rank's own events ([`RankEvent`]: wired up, each failure its detector learned of, what each
//! `validate_global`, `agree` and `shrink` returned, finalize).
//!
//! In the picture every marker carries a tooltip (`<title>`) with the whole event, and the SVG
//! keeps the facts in attributes: each lane is a `<g class="lane" data-rank="R">`, each event a
//! shape or group of class `event KIND` (`start`, `ready`, `learned` with `data-peer`,
//! `validate_global`, `agree`, `shrink`, `finalize`, `suspected` with `data-peer`, `fired`,
//! `death` with `data-how`, `end`), so a program can read the picture back. The
//! `validate_global` / `agree` calls that returned nothing new are drawn as one row of ticks per
//! lane (class `event KIND routine`, `data-count`); the others get a labelled diamond.

use std::fmt::Write as _;
use std::time::Duration;

pub use runthrough_net::timeline::{Outcome, RankEvent};
use svg::node::element::{Circle, Group, Line, Path, Polygon, Rectangle, Text, Title};
use svg::Document;

/// What happened to a rank at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// rtrun started its process.
    Started,
    /// The rank's own report.
    Rank(RankEvent),
    /// The rank reported that it fenced this peer (rtrun then kills the peer).
    Suspected(u32),
    /// A planned fault of this rank fired (rtrun's signal, or the rank's own kill).
    Fired {
        /// The fault as the command line gives it (`--kill 2@call:8`).
        fault: String,
        /// The rank's communication call it fired in, for a fault the rank injects itself.
        call: Option<u64>,
    },
    /// The rank died.
    Died {
        /// How, in a word (`data-how`): `injected`, `signal`, `fenced`, `halted`, `panic`.
        how: String,
        /// In words, e.g. `killed by signal 9 (SIGKILL), injected`.
        description: String,
    },
    /// The rank ended by itself, e.g. `exited with status 0`, `returned`.
    Ended {
        /// In words.
        description: String,
    },
}

/// One event of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The rank it happened to (or that reported it).
    pub rank: u32,
    /// When, from the start of the job (rtrun's clock).
    pub at: Duration,
    /// What.
    pub what: What,
}

/// A job's events, for the picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// The number of ranks (lanes).
    pub size: u32,
    /// How long the job ran.
    pub elapsed: Duration,
    /// Every event, in time order.
    pub entries: Vec<Entry>,
    /// What the times are, for the picture's title (e.g. `when rtrun saw each event`).
    pub clock: String,
}

fn list(ranks: &[u32]) -> String {
    let words: Vec<String> = ranks.iter().map(u32::to_string).collect();
    format!("{{{}}}", words.join(","))
}

/// A call's label, and whether it is worth one (it returned something new, or an error).
fn call_label(name: &str, comm: Option<u32>, outcome: &Outcome) -> String {
    let on = comm.map_or(String::new(), |size| format!(" (on a comm of {size})"));
    match outcome {
        Outcome::View { failed, new } if new.is_empty() => {
            format!("{name}{on}: G {}, nothing new", list(failed))
        }
        Outcome::View { failed, new } => {
            format!("{name}{on}: G {}, NEW {}", list(failed), list(new))
        }
        Outcome::Flag(flag) => format!("{name}{on}: flag {flag:#x}"),
        Outcome::Size(size) => format!("{name}{on}: {size} ranks"),
        Outcome::Error(text) => format!("{name}{on}: error: {text}"),
    }
}

// Geometry, in SVG user units (pixels).
const WIDTH: f64 = 1180.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 300.0;
const TOP: f64 = 56.0;
const LANE: f64 = 56.0;
const FONT: f64 = 10.0;
/// A rough width of one character at [`FONT`] (for placing labels apart).
const CHAR: f64 = 5.8;

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn text(x: f64, y: f64, content: &str) -> Text {
    Text::new(content)
        .set("x", r1(x))
        .set("y", r1(y))
        .set("font-size", FONT)
}

/// A label cut to at most 56 characters (the tooltip has it whole).
fn shorten(label: &str) -> String {
    const MAX: usize = 56;
    if label.chars().count() <= MAX {
        return label.to_string();
    }
    let mut short: String = label.chars().take(MAX - 1).collect();
    short.push('…');
    short
}

/// Labels of one lane kept apart: each row remembers where its last label ends.
struct Rows {
    ends: Vec<f64>,
}

impl Rows {
    fn new(rows: usize) -> Self {
        Rows {
            ends: vec![f64::MIN; rows],
        }
    }

    /// The first row where a label of `chars` characters fits from `x`, taken.
    fn place(&mut self, x: f64, chars: usize) -> Option<usize> {
        let row = self.ends.iter().position(|&end| x >= end + 6.0)?;
        self.ends[row] = x + chars as f64 * CHAR;
        Some(row)
    }
}

/// Colours of the kinds.
const BLUE: &str = "#1f5fbf";
const PURPLE: &str = "#7a3db8";
const GREEN: &str = "#2e8b57";
const ORANGE: &str = "#e07b00";
const RED: &str = "#c8102e";
const GREY: &str = "#888888";

impl Timeline {
    /// Writes [`Timeline::svg`] to `path`.
    ///
    /// # Errors
    /// Those of writing the file.
    pub fn write_svg(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, self.svg())
    }

    /// The time scale's end: the job's length, or the last event if later.
    fn span(&self) -> Duration {
        let last = self.entries.iter().map(|e| e.at).max().unwrap_or_default();
        self.elapsed.max(last).max(Duration::from_millis(1))
    }

    /// The picture, as an SVG document.
    pub fn svg(&self) -> String {
        let span = self.span().as_secs_f64();
        let plot = WIDTH - LEFT - RIGHT;
        let x = |at: Duration| LEFT + at.as_secs_f64() / span * plot;
        let lane_y = |rank: u32| TOP + 24.0 + f64::from(rank) * LANE + LANE / 2.0;
        let bottom = lane_y(self.size.saturating_sub(1)) + LANE / 2.0;
        let height = bottom + 96.0;

        let mut document = Document::new()
            .set("width", WIDTH)
            .set("height", r1(height))
            .set("viewBox", (0, 0, WIDTH, r1(height)))
            .set("font-family", "sans-serif")
            .add(
                Rectangle::new()
                    .set("width", "100%")
                    .set("height", "100%")
                    .set("fill", "white"),
            );
        let deaths = self
            .entries
            .iter()
            .filter(|e| matches!(e.what, What::Died { .. }));
        document = document.add(
            text(
                LEFT,
                20.0,
                &format!(
                    "job timeline: {} ranks, {:.3} s, {} death(s) (times: {})",
                    self.size,
                    self.elapsed.as_secs_f64(),
                    deaths.count(),
                    self.clock
                ),
            )
            .set("font-size", 13)
            .set("class", "title"),
        );
        document = document.add(self.axis(span, plot, bottom));

        // Where each rank died, for the lines to the survivors that learned of it.
        let mut died_at = vec![None; self.size as usize];
        for e in &self.entries {
            if let What::Died { .. } = e.what {
                if let Some(slot) = died_at.get_mut(e.rank as usize) {
                    *slot = Some(e.at);
                }
            }
        }
        // The spread of each failure first, under the lanes.
        let mut spread = Group::new().set("class", "spread");
        for e in &self.entries {
            if let What::Rank(RankEvent::Learned(peer)) = e.what {
                if let Some(Some(at)) = died_at.get(peer as usize) {
                    spread = spread.add(
                        Line::new()
                            .set("x1", r1(x(*at)))
                            .set("y1", r1(lane_y(peer)))
                            .set("x2", r1(x(e.at)))
                            .set("y2", r1(lane_y(e.rank)))
                            .set("stroke", ORANGE)
                            .set("stroke-width", 0.8)
                            .set("stroke-dasharray", "3 3")
                            .set("opacity", 0.6),
                    );
                }
            }
        }
        document = document.add(spread);
        for rank in 0..self.size {
            document = document.add(self.lane(rank, &x, lane_y(rank)));
        }
        document.add(legend(bottom + 28.0)).to_string()
    }

    /// The time axis: a tick every 1, 2 or 5 × 10^k ms, at most about ten.
    fn axis(&self, span: f64, plot: f64, bottom: f64) -> Group {
        let mut step = 1e-6;
        'find: loop {
            for m in [1.0, 2.0, 5.0] {
                if span / (step * m) <= 10.0 {
                    step *= m;
                    break 'find;
                }
            }
            step *= 10.0;
        }
        let mut axis = Group::new().set("class", "axis");
        let y = TOP + 14.0;
        axis = axis.add(
            Line::new()
                .set("x1", LEFT)
                .set("y1", y)
                .set("x2", r1(LEFT + plot))
                .set("y2", y)
                .set("stroke", "black"),
        );
        let mut t = 0.0;
        while t <= span + 1e-9 {
            let tx = r1(LEFT + t / span * plot);
            let label = if step < 1.0 {
                // As many decimals as the step needs: 0.2 ms, 5 ms.
                let decimals = (-(step * 1000.0).log10().floor()).max(0.0) as usize;
                format!("{:.*} ms", decimals, t * 1000.0)
            } else {
                format!("{t:.0} s")
            };
            axis = axis
                .add(
                    Line::new()
                        .set("x1", tx)
                        .set("y1", y - 4.0)
                        .set("x2", tx)
                        .set("y2", r1(bottom))
                        .set("stroke", "#e4e4e4"),
                )
                .add(text(tx, y - 7.0, &label).set("text-anchor", "middle"));
            t += step;
        }
        axis
    }

    /// One rank's lane.
    fn lane(&self, rank: u32, x: &dyn Fn(Duration) -> f64, y: f64) -> Group {
        let mine = || self.entries.iter().filter(move |e| e.rank == rank);
        let start = mine().find(|e| e.what == What::Started).map(|e| e.at);
        let end = mine().find_map(|e| match e.what {
            What::Died { .. } | What::Ended { .. } => Some(e.at),
            _ => None,
        });
        let mut lane = Group::new()
            .set("class", "lane")
            .set("data-rank", rank)
            .add(text(8.0, y + 4.0, &format!("rank {rank}")).set("font-weight", "bold"));
        let Some(start) = start else {
            return lane.add(text(LEFT, y + 4.0, "never started").set("fill", GREY));
        };
        let last = end.unwrap_or(self.span());
        lane = lane.add(
            Line::new()
                .set("x1", r1(x(start)))
                .set("y1", r1(y))
                .set("x2", r1(x(last)))
                .set("y2", r1(y))
                .set("stroke", "#b8b8b8")
                .set("stroke-width", 4),
        );
        let mut above = Rows::new(3);
        let mut routine: Vec<(&str, &str, Duration)> = Vec::new();
        let mut last_flag = None;
        for e in mine() {
            let ex = x(e.at);
            let at = format!("{:.3} s", e.at.as_secs_f64());
            match &e.what {
                What::Started => {
                    lane = lane.add(
                        Circle::new()
                            .set("class", "event start")
                            .set("cx", r1(ex))
                            .set("cy", r1(y))
                            .set("r", 4)
                            .set("fill", GREEN)
                            .add(Title::new(format!("rank {rank} started at {at}"))),
                    );
                }
                What::Rank(RankEvent::Ready) => {
                    lane = lane.add(
                        Rectangle::new()
                            .set("class", "event ready")
                            .set("x", r1(ex - 1.0))
                            .set("y", r1(y - 6.0))
                            .set("width", 2)
                            .set("height", 12)
                            .set("fill", GREEN)
                            .add(Title::new(format!("rank {rank} wired up at {at}"))),
                    );
                }
                What::Rank(RankEvent::Finalize) => {
                    lane = lane.add(
                        Rectangle::new()
                            .set("class", "event finalize")
                            .set("x", r1(ex - 3.0))
                            .set("y", r1(y - 3.0))
                            .set("width", 6)
                            .set("height", 6)
                            .set("fill", "black")
                            .add(Title::new(format!("rank {rank} entered finalize at {at}"))),
                    );
                }
                What::Rank(RankEvent::Learned(peer)) => {
                    let title =
                        format!("rank {rank}'s detector learned that rank {peer} failed, at {at}");
                    lane = lane.add(
                        Group::new()
                            .set("class", "event learned")
                            .set("data-peer", *peer)
                            .add(
                                Circle::new()
                                    .set("cx", r1(ex))
                                    .set("cy", r1(y))
                                    .set("r", 3.5)
                                    .set("fill", ORANGE),
                            )
                            .add(
                                text(ex, y + 15.0, &format!("{peer}"))
                                    .set("text-anchor", "middle")
                                    .set("fill", ORANGE),
                            )
                            .add(Title::new(title)),
                    );
                }
                What::Rank(RankEvent::Call {
                    name,
                    comm,
                    outcome,
                }) => {
                    let label = call_label(name, *comm, outcome);
                    let plain = match outcome {
                        Outcome::View { new, .. } => new.is_empty(),
                        Outcome::Flag(flag) => last_flag.replace(*flag) == Some(*flag),
                        Outcome::Size(_) | Outcome::Error(_) => false,
                    };
                    let colour = match name.as_str() {
                        "agree" => PURPLE,
                        "shrink" => GREEN,
                        _ => BLUE,
                    };
                    if plain && name != "shrink" {
                        routine.push((name, colour, e.at));
                        continue;
                    }
                    let mut call = Group::new()
                        .set("class", format!("event {name}"))
                        .add(
                            Polygon::new()
                                .set(
                                    "points",
                                    format!(
                                        "{},{} {},{} {},{} {},{}",
                                        r1(ex),
                                        r1(y - 5.0),
                                        r1(ex + 5.0),
                                        r1(y),
                                        r1(ex),
                                        r1(y + 5.0),
                                        r1(ex - 5.0),
                                        r1(y)
                                    ),
                                )
                                .set("fill", colour),
                        )
                        .add(Title::new(format!("rank {rank}: {label}, at {at}")));
                    let shown = shorten(&label);
                    if let Some(row) = above.place(ex - 4.0, shown.chars().count()) {
                        call = call.add(
                            text(ex - 4.0, y - 9.0 - 11.0 * row as f64, &shown).set("fill", colour),
                        );
                    }
                    lane = lane.add(call);
                }
                What::Suspected(peer) => {
                    lane = lane.add(
                        Group::new()
                            .set("class", "event suspected")
                            .set("data-peer", *peer)
                            .add(
                                text(ex, y + 4.0, "?")
                                    .set("text-anchor", "middle")
                                    .set("font-weight", "bold")
                                    .set("fill", GREY),
                            )
                            .add(Title::new(format!(
                                "rank {rank} fenced rank {peer} and told rtrun, at {at}"
                            ))),
                    );
                }
                What::Fired { fault, call } => {
                    let call = call.map_or(String::new(), |c| format!(" (call {c})"));
                    let label = format!("{fault}{call}");
                    let mut fired = Group::new()
                        .set("class", "event fired")
                        .add(
                            Polygon::new()
                                .set(
                                    "points",
                                    format!(
                                        "{},{} {},{} {},{}",
                                        r1(ex - 5.0),
                                        r1(y - 13.0),
                                        r1(ex + 5.0),
                                        r1(y - 13.0),
                                        r1(ex),
                                        r1(y - 5.0)
                                    ),
                                )
                                .set("fill", RED),
                        )
                        .add(Title::new(format!("{label} fired at {at}")));
                    if let Some(row) = above.place(ex + 7.0, label.chars().count()) {
                        fired = fired.add(
                            text(ex + 7.0, y - 9.0 - 11.0 * row as f64, &label).set("fill", RED),
                        );
                    }
                    lane = lane.add(fired);
                }
                What::Died { how, description } => {
                    let label = description;
                    {
                        let d = format!(
                            "M{} {}L{} {}M{} {}L{} {}",
                            r1(ex - 6.0),
                            r1(y - 6.0),
                            r1(ex + 6.0),
                            r1(y + 6.0),
                            r1(ex - 6.0),
                            r1(y + 6.0),
                            r1(ex + 6.0),
                            r1(y - 6.0)
                        );
                        lane = lane.add(
                            Group::new()
                                .set("class", "event death")
                                .set("data-how", how.as_str())
                                .add(
                                    Path::new()
                                        .set("d", d)
                                        .set("stroke", RED)
                                        .set("stroke-width", 3),
                                )
                                .add(text(ex + 10.0, y + 4.0, label).set("fill", RED))
                                .add(Title::new(format!("rank {rank} {label}, at {at}"))),
                        );
                    }
                }
                What::Ended { description } => {
                    let label = description;
                    {
                        lane = lane.add(
                            Group::new()
                                .set("class", "event end")
                                .add(
                                    Rectangle::new()
                                        .set("x", r1(ex - 1.5))
                                        .set("y", r1(y - 8.0))
                                        .set("width", 3)
                                        .set("height", 16)
                                        .set("fill", "black"),
                                )
                                .add(text(ex + 6.0, y + 4.0, label).set("fill", "#444444"))
                                .add(Title::new(format!("rank {rank} {label}, at {at}"))),
                        );
                    }
                }
            }
        }
        // The calls that returned nothing new: one row of ticks per kind.
        for (name, colour) in [("validate_global", BLUE), ("agree", PURPLE)] {
            let times: Vec<Duration> = routine
                .iter()
                .filter(|(n, ..)| *n == name)
                .map(|&(_, _, at)| at)
                .collect();
            if times.is_empty() {
                continue;
            }
            let mut d = String::new();
            for at in &times {
                let _ = write!(d, "M{} {}v8", r1(x(*at)), r1(y - 4.0));
            }
            lane = lane.add(
                Path::new()
                    .set("class", format!("event {name} routine"))
                    .set("data-count", times.len())
                    .set("d", d)
                    .set("stroke", colour)
                    .set("stroke-width", 1)
                    .set("opacity", 0.5)
                    .add(Title::new(format!(
                        "rank {rank}: {} {name} call(s) that returned nothing new",
                        times.len()
                    ))),
            );
        }
        lane
    }
}

/// What the markers mean.
fn legend(y: f64) -> Group {
    let mut legend = Group::new().set("class", "legend");
    let items: [(&str, &str); 9] = [
        (GREEN, "start (dot), wired up (bar)"),
        (RED, "planned fault fired (triangle), death (cross: how)"),
        (ORANGE, "detector learned of a failure (dot: which rank)"),
        (BLUE, "validate_global (diamond: new G; ticks: nothing new)"),
        (PURPLE, "agree (diamond: flag or error)"),
        (GREEN, "shrink (diamond: new size)"),
        ("black", "finalize (square), exit (bar)"),
        (GREY, "? : a rank fenced a peer and told rtrun"),
        (
            ORANGE,
            "dashed: from a death to each survivor that learned it",
        ),
    ];
    for (i, (colour, what)) in items.iter().enumerate() {
        let (col, row) = (i % 3, i / 3);
        let lx = LEFT + col as f64 * 330.0;
        let ly = y + row as f64 * 16.0;
        legend = legend
            .add(
                Rectangle::new()
                    .set("x", lx)
                    .set("y", r1(ly - 8.0))
                    .set("width", 9)
                    .set("height", 9)
                    .set("fill", *colour),
            )
            .add(text(lx + 14.0, ly, what));
    }
    legend
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn entry(rank: u32, at: u64, what: What) -> Entry {
        Entry {
            rank,
            at: ms(at),
            what,
        }
    }

    fn call(name: &str, outcome: Outcome) -> What {
        What::Rank(RankEvent::Call {
            name: name.into(),
            comm: None,
            outcome,
        })
    }

    /// A hand-made job of 3 ranks, rank 1 killed: the SVG parses, has a lane per rank, and
    /// each event is there with its class and facts.
    #[test]
    fn the_picture_holds_every_lane_and_event() {
        let view = |failed: Vec<u32>, new: Vec<u32>| Outcome::View { failed, new };
        let mut entries = vec![
            entry(1, 5, What::Started),
            entry(1, 30, call("validate_global", view(vec![], vec![]))),
            entry(
                1,
                40,
                What::Fired {
                    fault: "--kill 1@call:9".into(),
                    call: Some(9),
                },
            ),
            entry(
                1,
                41,
                What::Died {
                    how: "injected".into(),
                    description: "killed by signal 9 (SIGKILL), injected".into(),
                },
            ),
        ];
        for rank in [0, 2] {
            entries.extend([
                entry(rank, 1, What::Started),
                entry(rank, 20, What::Rank(RankEvent::Ready)),
                entry(rank, 30, call("validate_global", view(vec![], vec![]))),
                entry(rank, 31, call("validate_global", view(vec![], vec![]))),
                entry(rank, 43, What::Rank(RankEvent::Learned(1))),
                entry(rank, 50, call("validate_global", view(vec![1], vec![1]))),
                entry(rank, 60, call("agree", Outcome::Flag(1))),
                entry(rank, 70, call("shrink", Outcome::Size(2))),
                entry(rank, 80, What::Rank(RankEvent::Finalize)),
                entry(
                    rank,
                    90,
                    What::Ended {
                        description: "exited with status 0".into(),
                    },
                ),
            ]);
        }
        entries.sort_by_key(|e| e.at);
        let timeline = Timeline {
            size: 3,
            elapsed: ms(95),
            entries,
            clock: "when rtrun saw each event".into(),
        };
        let svg = timeline.svg();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let lanes: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("lane"))
            .collect();
        assert_eq!(lanes.len(), 3, "{svg}");
        let in_lane = |rank: usize, class: &str| {
            lanes[rank]
                .descendants()
                .filter(|n| n.attribute("class") == Some(class))
                .count()
        };
        for rank in [0, 2] {
            assert_eq!(in_lane(rank, "event start"), 1);
            assert_eq!(in_lane(rank, "event ready"), 1);
            assert_eq!(in_lane(rank, "event learned"), 1);
            assert_eq!(
                in_lane(rank, "event validate_global"),
                1,
                "the one with news"
            );
            assert_eq!(in_lane(rank, "event validate_global routine"), 1);
            assert_eq!(in_lane(rank, "event agree"), 1);
            assert_eq!(in_lane(rank, "event shrink"), 1);
            assert_eq!(in_lane(rank, "event finalize"), 1);
            assert_eq!(in_lane(rank, "event end"), 1);
            assert_eq!(in_lane(rank, "event death"), 0);
        }
        assert_eq!(in_lane(1, "event fired"), 1);
        assert_eq!(in_lane(1, "event death"), 1);
        let routine = lanes[0]
            .descendants()
            .find(|n| n.attribute("class") == Some("event validate_global routine"))
            .unwrap();
        assert_eq!(routine.attribute("data-count"), Some("2"));
        let death = lanes[1]
            .descendants()
            .find(|n| n.attribute("class") == Some("event death"))
            .unwrap();
        assert_eq!(death.attribute("data-how"), Some("injected"));
        // The svg crate writes each text on a line of its own: SVG collapses that white space.
        let texts: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        for wanted in [
            "rank 0",
            "rank 1",
            "rank 2",
            "validate_global: G {1}, NEW {1}",
            "agree: flag 0x1",
            "shrink: 2 ranks",
            "--kill 1@call:9 (call 9)",
            "killed by signal 9 (SIGKILL), injected",
            "exited with status 0",
        ] {
            assert!(texts.contains(&wanted), "{wanted:?} not in {texts:?}");
        }
        // The lines from rank 1's death to the two survivors that learned of it.
        let spread = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("spread"))
            .unwrap();
        assert_eq!(spread.children().filter(|n| n.is_element()).count(), 2);
    }
}

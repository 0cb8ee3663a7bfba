// SPDX-License-Identifier: MIT OR Apache-2.0
//! `--plot DIR`: SVG charts of the rows, drawn with plotters' SVG backend.
//!
//! Each chart is one SVG file of one or more panels; each panel plots series of medians (a
//! line with a dot per row) with the repetitions' minimum and maximum as a whisker, on
//! logarithmic axes, against message size or rank count. A series is one implementation over
//! one transport (or one operation, in the collectives and agreement charts). Text is written as
//! SVG `<text>` for the viewer to render in its own sans-serif font: plotters is built without
//! its font features, so nothing here reads a font file or needs fontconfig or FreeType (its
//! text widths, used only to place the axis labels, are estimated).
//!
//! The charts, each written only if some of its rows are there:
//!
//! - `latency.svg`: one-way point-to-point latency against message size, every transport.
//! - `bandwidth.svg`: point-to-point bandwidth (GB/s) against message size.
//! - `collectives.svg`: runthrough's collectives against rank count, a panel per transport.
//! - `agreement.svg`: validate_global, agree and shrink (with all_reduce 8 B for scale)
//!   against rank count, a panel per transport.
//! - `compare.svg`: runthrough beside Open MPI ULFM (the `--compare` rows: one C source under
//!   each launcher), a panel per operation.
//! - `recovery.svg`: a kill's detection, agreement and recovery against rank count.

use std::error::Error;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::compare::{BUSY, QUIET};
use super::Row;

/// What a chart that was written holds: its file and the labels of its series (every panel's,
/// in order, each label once).
#[derive(Debug)]
pub(super) struct Plotted {
    pub(super) file: PathBuf,
    pub(super) series: Vec<String>,
}

/// The horizontal axis of a panel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum XAxis {
    Bytes,
    Ranks,
}

/// The vertical axis of a panel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum YAxis {
    Micros,
    GigabytesPerSecond,
}

/// One point: x, and the median with its min and max on the panel's vertical axis.
#[derive(Clone, Copy, Debug)]
struct Point {
    x: f64,
    median: f64,
    low: f64,
    high: f64,
}

struct Series {
    label: String,
    color: RGBColor,
    points: Vec<Point>,
}

struct Panel {
    title: String,
    x: XAxis,
    y: YAxis,
    series: Vec<Series>,
}

struct Chart {
    file: &'static str,
    title: String,
    panels: Vec<Panel>,
}

/// The label of an implementation over a transport.
fn label(implementation: &str, transport: &str) -> String {
    let who = match implementation {
        "openmpi-ulfm" => "Open MPI ULFM",
        other => other,
    };
    match transport {
        "in-process" => format!("{who} in-process"),
        "shm" => format!("{who} shared memory"),
        "unix" => format!("{who} Unix sockets"),
        "tcp" => format!("{who} TCP"),
        QUIET => format!("{who} (C, launcher)"),
        BUSY => format!("{who} (C, busy host)"),
        other => format!("{who} {other}"),
    }
}

/// A fixed colour per implementation and transport, so a series looks alike in every chart.
fn color_of(implementation: &str, transport: &str) -> RGBColor {
    match (implementation, transport) {
        ("runthrough", "in-process") => RGBColor(31, 119, 180),
        ("runthrough", "shm") => RGBColor(44, 160, 44),
        ("runthrough", "unix") => RGBColor(148, 103, 189),
        ("runthrough", "tcp") => RGBColor(140, 86, 75),
        ("runthrough", QUIET) => RGBColor(23, 190, 207),
        ("runthrough", BUSY) => RGBColor(127, 127, 127),
        ("openmpi-ulfm", QUIET) => RGBColor(214, 39, 40),
        ("openmpi-ulfm", BUSY) => RGBColor(255, 127, 14),
        ("openmpi-ulfm", "tcp") => RGBColor(227, 119, 194),
        _ => RGBColor(188, 189, 34),
    }
}

/// Colours for series that are operations, in order.
const OP_COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The series of the measured `rows` that `pick` selects, as points on the axes `x` and `y`
/// (sorted by x), or `None` if none is selected.
fn series(
    rows: &[Row],
    label: String,
    color: RGBColor,
    x: XAxis,
    y: YAxis,
    pick: impl Fn(&Row) -> bool,
) -> Option<Series> {
    let mut points: Vec<Point> = rows
        .iter()
        .filter(|r| r.median_us.is_finite() && r.median_us > 0.0 && pick(r))
        .map(|r| {
            let x = match x {
                XAxis::Bytes => r.bytes as f64,
                XAxis::Ranks => f64::from(r.ranks),
            };
            match y {
                YAxis::Micros => Point {
                    x,
                    median: r.median_us,
                    low: r.min_us,
                    high: r.max_us,
                },
                // The fastest repetition is the highest bandwidth.
                YAxis::GigabytesPerSecond => {
                    let rate = |us: f64| r.bytes as f64 / us / 1e3;
                    Point {
                        x,
                        median: rate(r.median_us),
                        low: rate(r.max_us),
                        high: rate(r.min_us),
                    }
                }
            }
        })
        .filter(|p| p.x > 0.0)
        .collect();
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Some(Series {
        label,
        color,
        points,
    })
}

/// Every (implementation, transport) of the rows, in a fixed order: runthrough's own
/// transports, then the side-by-side rows.
fn sides(rows: &[Row]) -> Vec<(&'static str, &'static str)> {
    let order = [
        ("runthrough", "in-process"),
        ("runthrough", "shm"),
        ("runthrough", "unix"),
        ("runthrough", "tcp"),
        ("runthrough", QUIET),
        ("openmpi-ulfm", QUIET),
        ("openmpi-ulfm", "tcp"),
        ("runthrough", BUSY),
        ("openmpi-ulfm", BUSY),
    ];
    order
        .into_iter()
        .filter(|(i, t)| {
            rows.iter()
                .any(|r| r.implementation == *i && r.transport == *t)
        })
        .collect()
}

/// One series per implementation and transport of `op` (at `bytes`, if given).
fn per_side(rows: &[Row], op: &str, bytes: Option<usize>, x: XAxis, y: YAxis) -> Vec<Series> {
    sides(rows)
        .into_iter()
        .filter_map(|(implementation, transport)| {
            series(
                rows,
                label(implementation, transport),
                color_of(implementation, transport),
                x,
                y,
                |r| {
                    r.op == op
                        && r.implementation == implementation
                        && r.transport == transport
                        && bytes.is_none_or(|b| r.bytes == b)
                },
            )
        })
        .collect()
}

/// One series per operation of `ops` (`(op, bytes, label)`) of runthrough over `transport`.
fn per_op(rows: &[Row], transport: &str, ops: &[(&str, usize, &str)]) -> Vec<Series> {
    ops.iter()
        .zip(OP_COLORS.iter().cycle())
        .filter_map(|(&(op, bytes, name), &color)| {
            series(
                rows,
                name.to_string(),
                color,
                XAxis::Ranks,
                YAxis::Micros,
                |r| {
                    r.op == op
                        && r.bytes == bytes
                        && r.implementation == "runthrough"
                        && r.transport == transport
                },
            )
        })
        .collect()
}

/// runthrough's own transports, with the title of their panels.
const TRANSPORTS: [(&str, &str); 4] = [
    ("in-process", "in-process (threads of one process)"),
    ("shm", "processes under rtrun, shared memory"),
    ("unix", "processes under rtrun, Unix sockets"),
    ("tcp", "processes under rtrun, TCP on loopback"),
];

/// The charts of `rows`, each with its non-empty panels.
fn panel(title: &str, x: XAxis, y: YAxis, series: Vec<Series>) -> Panel {
    Panel {
        title: title.to_string(),
        x,
        y,
        series,
    }
}

/// A chart of `ops` against rank count, one panel per transport.
fn per_transport(
    rows: &[Row],
    file: &'static str,
    title: &str,
    ops: &[(&str, usize, &str)],
) -> Chart {
    Chart {
        file,
        title: title.to_string(),
        panels: TRANSPORTS
            .iter()
            .map(|&(transport, name)| {
                panel(
                    name,
                    XAxis::Ranks,
                    YAxis::Micros,
                    per_op(rows, transport, ops),
                )
            })
            .collect(),
    }
}

fn charts(rows: &[Row]) -> Vec<Chart> {
    let mut charts = vec![
        Chart {
            file: "latency.svg",
            title: "Point-to-point latency, one way, 2 ranks (median, min-max)".to_string(),
            panels: vec![panel(
                "ping-pong / 2",
                XAxis::Bytes,
                YAxis::Micros,
                per_side(rows, "p2p_latency", None, XAxis::Bytes, YAxis::Micros),
            )],
        },
        Chart {
            file: "bandwidth.svg",
            title: "Point-to-point bandwidth, 2 ranks (median, min-max)".to_string(),
            panels: vec![panel(
                "a stream of 64 messages, then an acknowledgement",
                XAxis::Bytes,
                YAxis::GigabytesPerSecond,
                per_side(
                    rows,
                    "p2p_bandwidth",
                    None,
                    XAxis::Bytes,
                    YAxis::GigabytesPerSecond,
                ),
            )],
        },
    ];
    let collectives = [
        ("barrier", 0, "barrier"),
        ("broadcast", 8, "broadcast 8 B"),
        ("reduce", 8, "reduce 8 B"),
        ("all_reduce", 8, "all_reduce 8 B"),
        ("scan", 8, "scan 8 B"),
        ("gather", 8, "gather 8 B"),
        ("all_gather", 8, "all_gather 8 B"),
        ("all_to_all", 8, "all_to_all 8 B"),
        ("broadcast", 1 << 16, "broadcast 64 KiB"),
        ("all_reduce", 1 << 20, "all_reduce 1 MiB"),
    ];
    charts.push(per_transport(
        rows,
        "collectives.svg",
        "runthrough's collectives against rank count (median, min-max)",
        &collectives,
    ));
    let agreement = [
        ("all_reduce", 8, "all_reduce 8 B"),
        ("validate_global", 0, "validate_global"),
        ("agree", 0, "agree"),
        ("shrink", 0, "shrink"),
    ];
    charts.push(per_transport(
        rows,
        "agreement.svg",
        "Agreement and shrink, failure-free, against rank count (median, min-max)",
        &agreement,
    ));
    // runthrough beside Open MPI: the side-by-side rows only (one C source, each launcher).
    let side_by_side: Vec<Row> = rows
        .iter()
        .filter(|r| r.transport == QUIET || r.transport == BUSY)
        .cloned()
        .collect();
    let compared = [
        (
            "p2p_latency",
            None,
            "p2p latency, one way",
            XAxis::Bytes,
            YAxis::Micros,
        ),
        (
            "p2p_bandwidth",
            None,
            "p2p bandwidth",
            XAxis::Bytes,
            YAxis::GigabytesPerSecond,
        ),
        ("barrier", Some(0), "barrier", XAxis::Ranks, YAxis::Micros),
        (
            "all_reduce",
            Some(8),
            "all_reduce 8 B",
            XAxis::Ranks,
            YAxis::Micros,
        ),
        (
            "all_reduce",
            Some(1 << 20),
            "all_reduce 1 MiB",
            XAxis::Ranks,
            YAxis::Micros,
        ),
        ("agree", Some(0), "agree", XAxis::Ranks, YAxis::Micros),
        ("shrink", Some(0), "shrink", XAxis::Ranks, YAxis::Micros),
        (
            "detection",
            Some(0),
            "detection: kill to error",
            XAxis::Ranks,
            YAxis::Micros,
        ),
        (
            "recovery",
            Some(0),
            "recovery: kill to ack + agree + shrink",
            XAxis::Ranks,
            YAxis::Micros,
        ),
    ];
    charts.push(Chart {
        file: "compare.svg",
        title: "runthrough beside Open MPI ULFM: one C program, each launcher's defaults \
                (median of rounds, min-max)"
            .to_string(),
        panels: compared
            .iter()
            .map(|&(op, bytes, title, x, y)| {
                panel(title, x, y, per_side(&side_by_side, op, bytes, x, y))
            })
            .collect(),
    });
    let only = |ops: &[&str]| -> Vec<Row> {
        rows.iter()
            .filter(|r| ops.contains(&r.op.as_str()))
            .cloned()
            .collect()
    };
    // Recovery: runthrough's own rows per transport, and the side-by-side rows (whose
    // `recovery` is failure_ack + agree + shrink on both sides).
    let recovered = {
        let mut series = per_side(
            &only(&["shrink_after_failure"]),
            "shrink_after_failure",
            None,
            XAxis::Ranks,
            YAxis::Micros,
        );
        series.extend(per_side(
            &side_by_side,
            "recovery",
            None,
            XAxis::Ranks,
            YAxis::Micros,
        ));
        series
    };
    charts.push(Chart {
        file: "recovery.svg",
        title: "A killed rank: detected, agreed, recovered, against rank count (median, min-max)"
            .to_string(),
        panels: vec![
            panel(
                "detected: kill to the error at a survivor",
                XAxis::Ranks,
                YAxis::Micros,
                per_side(rows, "detection", None, XAxis::Ranks, YAxis::Micros),
            ),
            panel(
                "agreed: kill to validate_global done",
                XAxis::Ranks,
                YAxis::Micros,
                per_side(
                    rows,
                    "recovery_validate_global",
                    None,
                    XAxis::Ranks,
                    YAxis::Micros,
                ),
            ),
            panel(
                "recovered: kill to agree + shrink done",
                XAxis::Ranks,
                YAxis::Micros,
                recovered,
            ),
            panel(
                "after the detection: validate_global, or ack + agree + shrink",
                XAxis::Ranks,
                YAxis::Micros,
                per_side(
                    rows,
                    "recovery_after_detection",
                    None,
                    XAxis::Ranks,
                    YAxis::Micros,
                ),
            ),
        ],
    });
    for chart in &mut charts {
        chart.panels.retain(|p| !p.series.is_empty());
    }
    charts.retain(|c| !c.panels.is_empty());
    charts
}

/// "8 B", "4 KiB", "1 MiB".
fn bytes_label(bytes: f64) -> String {
    let bytes = bytes.round() as u64;
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// A tick label for a value on a logarithmic axis: no more digits than it needs.
fn value_label(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        // Enough decimals for the first significant digit (ticks are 1, 2 or 5 of a power of 10).
        let decimals = (-value.log10()).ceil().max(1.0) as usize;
        let text = format!("{value:.decimals$}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The ticks of a logarithmic axis showing `low..high`: 1, 2 and 5 times the powers of ten
/// within it (only the powers of ten where those are more than seven), and the range widened to
/// the next ticks out when fewer than two fall within it.
fn log_ticks(low: f64, high: f64) -> (std::ops::Range<f64>, Vec<f64>) {
    let first = low.log10().floor() as i32 - 1;
    let last = high.log10().ceil() as i32 + 1;
    let candidates: Vec<(f64, bool)> = (first..=last)
        .flat_map(|k| [1.0, 2.0, 5.0].map(|m| (m * 10f64.powi(k), m == 1.0)))
        .collect();
    let mut within: Vec<(f64, bool)> = candidates
        .iter()
        .copied()
        .filter(|&(v, _)| v >= low && v <= high)
        .collect();
    if within.len() > 7 {
        within.retain(|&(_, decade)| decade);
    }
    if within.len() >= 2 {
        return (low..high, within.into_iter().map(|(v, _)| v).collect());
    }
    let below = candidates
        .iter()
        .map(|c| c.0)
        .filter(|&v| v <= low)
        .fold(low, |_, v| v);
    let above = candidates
        .iter()
        .map(|c| c.0)
        .find(|&v| v >= high)
        .unwrap_or(high);
    let ticks = candidates
        .iter()
        .map(|c| c.0)
        .filter(|&v| v >= below && v <= above)
        .collect();
    (below..above, ticks)
}

/// Pixels of one panel, and of the legend column at its right.
const PANEL: (u32, u32) = (640, 400);
const LEGEND_WIDTH: u32 = 200;

/// Draws `panel` on `area`: the plot at the left, its legend at the right.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let (width, _) = area.dim_in_pixel();
    let (plot, legend) = area.split_horizontally(width.saturating_sub(LEGEND_WIDTH));
    let points = || panel.series.iter().flat_map(|s| s.points.iter());
    let mut xs: Vec<f64> = points().map(|p| p.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (x_min, x_max) = (xs[0], xs[xs.len() - 1]);
    let y_min = points()
        .map(|p| p.low.min(p.median))
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let y_max = points()
        .map(|p| p.high.max(p.median))
        .fold(f64::NEG_INFINITY, f64::max);
    let (y_range, ys) = log_ticks(y_min / 1.3, y_max * 1.3);
    let x_range = (x_min / 1.4)..(x_max * 1.4);
    let y_desc = match panel.y {
        YAxis::Micros => "µs per operation",
        YAxis::GigabytesPerSecond => "GB/s",
    };
    let x_desc = match panel.x {
        XAxis::Bytes => "message size",
        XAxis::Ranks => "ranks",
    };
    let mut chart = ChartBuilder::on(&plot)
        .caption(&panel.title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            x_range.log_scale().with_key_points(xs.clone()),
            y_range.log_scale().with_key_points(ys.clone()),
        )?;
    let x_label = |x: &f64| match panel.x {
        XAxis::Bytes => bytes_label(*x),
        XAxis::Ranks => format!("{x:.0}"),
    };
    let y_label = |y: &f64| value_label(*y);
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(xs.len())
        .y_labels(ys.len())
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for series in &panel.series {
        let color = series.color;
        let points = &series.points;
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.x, p.median)),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.x, p.median), 3, color.filled())),
        )?;
        chart.draw_series(
            points
                .iter()
                .filter(|p| p.low > 0.0 && p.high >= p.low)
                .map(|p| ErrorBar::new_vertical(p.x, p.low, p.median, p.high, color, 6)),
        )?;
    }
    // The legend: a line of each series' colour and its label, from the top.
    for (i, series) in panel.series.iter().enumerate() {
        let y = 48 + 20 * i as i32;
        legend.draw(&PathElement::new(
            vec![(4, y), (26, y)],
            series.color.stroke_width(3),
        ))?;
        legend.draw(&Text::new(
            series.label.clone(),
            (32, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    Ok(())
}

/// `chart` as SVG text.
fn render(chart: &Chart) -> Result<String, Box<dyn Error>> {
    let count = chart.panels.len();
    let columns = match count {
        1 => 1,
        2 | 4 => 2,
        _ => 3,
    };
    let rows = count.div_ceil(columns);
    let size = (PANEL.0 * columns as u32, PANEL.1 * rows as u32 + 40);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(&chart.title, ("sans-serif", 20))?;
        let areas = root.split_evenly((rows, columns));
        for (area, panel) in areas.iter().zip(&chart.panels) {
            draw_panel(area, panel)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Writes the charts of `rows` into `dir` (made if missing); what each holds.
///
/// # Errors
///
/// The directory or a file cannot be written, or plotters fails to draw.
pub(super) fn write(dir: &Path, rows: &[Row]) -> Result<Vec<Plotted>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for chart in charts(rows) {
        let svg = render(&chart).map_err(|e| format!("{}: {e}", chart.file))?;
        let file = dir.join(chart.file);
        std::fs::write(&file, svg).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut series: Vec<String> = Vec::new();
        for label in chart
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .map(|s| &s.label)
        {
            if !series.contains(label) {
                series.push(label.clone());
            }
        }
        written.push(Plotted { file, series });
    }
    Ok(written)
}

/// The rows of a JSON file that `--json` wrote (one record per line).
///
/// # Errors
///
/// The file cannot be read, or a non-empty line is not a row.
pub(super) fn read_rows(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            super::mp::parse_row(line)
                .ok_or_else(|| format!("{}:{}: not a row: {line}", path.display(), number + 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small fixed run: every chart's rows, at two sizes or rank counts each.
    const ROWS: &str = r#"
{"op":"p2p_latency","ranks":2,"transport":"in-process","bytes":8,"median_us":0.3300,"min_us":0.3100,"max_us":0.4000,"impl":"runthrough"}
{"op":"p2p_latency","ranks":2,"transport":"in-process","bytes":4096,"median_us":1.2000,"min_us":1.1000,"max_us":1.5000,"impl":"runthrough"}
{"op":"p2p_latency","ranks":2,"transport":"shm","bytes":8,"median_us":0.3600,"min_us":0.3500,"max_us":0.3800,"impl":"runthrough"}
{"op":"p2p_latency","ranks":2,"transport":"shm","bytes":4096,"median_us":1.9000,"min_us":1.8000,"max_us":2.0000,"impl":"runthrough"}
{"op":"p2p_bandwidth","ranks":2,"transport":"in-process","bytes":4096,"median_us":0.9000,"min_us":0.8000,"max_us":1.0000,"impl":"runthrough"}
{"op":"p2p_bandwidth","ranks":2,"transport":"in-process","bytes":1048576,"median_us":30.0000,"min_us":25.0000,"max_us":40.0000,"impl":"runthrough"}
{"op":"barrier","ranks":2,"transport":"in-process","bytes":0,"median_us":0.5000,"min_us":0.4000,"max_us":0.6000,"impl":"runthrough"}
{"op":"barrier","ranks":8,"transport":"in-process","bytes":0,"median_us":13.5000,"min_us":12.0000,"max_us":15.0000,"impl":"runthrough"}
{"op":"all_reduce","ranks":2,"transport":"in-process","bytes":8,"median_us":0.6000,"min_us":0.5000,"max_us":0.7000,"impl":"runthrough"}
{"op":"all_reduce","ranks":8,"transport":"in-process","bytes":8,"median_us":15.5000,"min_us":14.0000,"max_us":17.0000,"impl":"runthrough"}
{"op":"validate_global","ranks":2,"transport":"in-process","bytes":0,"median_us":1.4000,"min_us":1.3000,"max_us":1.5000,"impl":"runthrough"}
{"op":"validate_global","ranks":8,"transport":"in-process","bytes":0,"median_us":13.5000,"min_us":12.0000,"max_us":14.0000,"impl":"runthrough"}
{"op":"agree","ranks":2,"transport":"launcher","bytes":0,"median_us":1.2900,"min_us":1.2000,"max_us":1.4000,"impl":"openmpi-ulfm"}
{"op":"agree","ranks":8,"transport":"launcher","bytes":0,"median_us":22.6000,"min_us":20.0000,"max_us":25.0000,"impl":"openmpi-ulfm"}
{"op":"agree","ranks":2,"transport":"launcher","bytes":0,"median_us":1.0300,"min_us":1.0000,"max_us":1.1000,"impl":"runthrough"}
{"op":"agree","ranks":8,"transport":"launcher","bytes":0,"median_us":44.1000,"min_us":40.0000,"max_us":50.0000,"impl":"runthrough"}
{"op":"detection","ranks":2,"transport":"launcher","bytes":0,"median_us":49963.0000,"min_us":49000.0000,"max_us":50500.0000,"impl":"openmpi-ulfm"}
{"op":"detection","ranks":4,"transport":"launcher","bytes":0,"median_us":49500.0000,"min_us":49000.0000,"max_us":50000.0000,"impl":"openmpi-ulfm"}
{"op":"detection","ranks":2,"transport":"shm","bytes":0,"median_us":533.0000,"min_us":500.0000,"max_us":600.0000,"impl":"runthrough"}
{"op":"detection","ranks":4,"transport":"shm","bytes":0,"median_us":498.0000,"min_us":450.0000,"max_us":700.0000,"impl":"runthrough"}
{"op":"recovery_validate_global","ranks":2,"transport":"in-process","bytes":0,"median_us":40.0000,"min_us":30.0000,"max_us":60.0000,"impl":"runthrough"}
{"op":"recovery_validate_global","ranks":4,"transport":"in-process","bytes":0,"median_us":90.0000,"min_us":70.0000,"max_us":120.0000,"impl":"runthrough"}
{"op":"shrink_after_failure","ranks":2,"transport":"in-process","bytes":0,"median_us":60.0000,"min_us":50.0000,"max_us":80.0000,"impl":"runthrough"}
{"op":"shrink_after_failure","ranks":4,"transport":"in-process","bytes":0,"median_us":120.0000,"min_us":100.0000,"max_us":150.0000,"impl":"runthrough"}
{"op":"recovery","ranks":2,"transport":"launcher","bytes":0,"median_us":50100.0000,"min_us":50000.0000,"max_us":50200.0000,"impl":"openmpi-ulfm"}
{"op":"recovery","ranks":4,"transport":"launcher","bytes":0,"median_us":50200.0000,"min_us":50000.0000,"max_us":50400.0000,"impl":"openmpi-ulfm"}
{"op":"floor_one_way","ranks":1,"transport":"hardware","bytes":8,"median_us":0.0240,"min_us":0.0230,"max_us":0.0250,"impl":"floor"}
"#;

    /// A fresh directory under the system's temporary one.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "runthrough-bench-plot-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The texts of an SVG document's `<text>` elements, after checking it is well-formed XML
    /// whose root is an `<svg>` with a size.
    fn svg_texts(path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).expect("the chart was written");
        let document = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{} is not well-formed XML: {e}", path.display()));
        let root = document.root_element();
        assert_eq!(root.tag_name().name(), "svg", "{}", path.display());
        assert!(root.attribute("width").is_some() && root.attribute("height").is_some());
        document
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn fixed_rows_make_well_formed_charts_with_their_series() {
        let rows: Vec<Row> = ROWS
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| super::super::mp::parse_row(l).expect("a row"))
            .collect();
        let dir = scratch("fixed");
        let written = write(&dir, &rows).expect("plotting");
        let expected: &[(&str, &[&str])] = &[
            (
                "latency.svg",
                &["runthrough in-process", "runthrough shared memory"],
            ),
            ("bandwidth.svg", &["runthrough in-process"]),
            ("collectives.svg", &["barrier", "all_reduce 8 B"]),
            ("agreement.svg", &["all_reduce 8 B", "validate_global"]),
            (
                "compare.svg",
                &["runthrough (C, launcher)", "Open MPI ULFM (C, launcher)"],
            ),
            (
                "recovery.svg",
                &[
                    "runthrough shared memory",
                    "Open MPI ULFM (C, launcher)",
                    "runthrough in-process",
                ],
            ),
        ];
        let files: Vec<String> = written
            .iter()
            .map(|p| p.file.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            files,
            expected.iter().map(|e| e.0).collect::<Vec<_>>(),
            "the charts written"
        );
        for (plotted, (file, series)) in written.iter().zip(expected) {
            assert_eq!(&plotted.series, series, "{file}'s series");
            let texts = svg_texts(&plotted.file);
            for label in *series {
                assert!(
                    texts.iter().any(|t| t == label),
                    "{file} has no legend entry {label:?}: {texts:?}"
                );
            }
            // Each series draws one line of its points and one in the legend.
            let svg = std::fs::read_to_string(&plotted.file).unwrap();
            let lines = svg.matches("<polyline").count();
            let drawn: usize = series.len();
            assert!(
                lines >= 2 * drawn,
                "{file}: {lines} polylines for {drawn} series"
            );
        }
        // The compare chart's agree panel, and the rank counts on its axis.
        let texts = svg_texts(&dir.join("compare.svg"));
        for wanted in ["agree", "ranks", "2", "8"] {
            assert!(
                texts.iter().any(|t| t == wanted),
                "compare.svg lacks {wanted:?}"
            );
        }
        // Message sizes on the latency chart's axis.
        let texts = svg_texts(&dir.join("latency.svg"));
        for wanted in ["8 B", "4 KiB", "message size"] {
            assert!(
                texts.iter().any(|t| t == wanted),
                "latency.svg lacks {wanted:?}"
            );
        }
        // Written again from the JSON file: the same charts.
        let json = dir.join("rows.json");
        std::fs::write(&json, ROWS).unwrap();
        assert_eq!(read_rows(&json).unwrap().len(), rows.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn log_ticks_are_1_2_5_and_at_least_two() {
        assert_eq!(log_ticks(0.8, 30.0).1, vec![1.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(log_ticks(0.5, 5000.0).1, vec![1.0, 10.0, 100.0, 1000.0]);
        let (range, ticks) = log_ticks(45_000.0, 52_000.0);
        assert_eq!(ticks, vec![20_000.0, 50_000.0, 100_000.0]);
        assert_eq!(range, 20_000.0..100_000.0);
    }

    #[test]
    fn tick_labels_keep_their_first_significant_digit() {
        let labels: Vec<String> = [0.0001, 0.002, 0.05, 0.5, 1.0, 2.0, 20.0, 500.0, 50_000.0]
            .map(value_label)
            .into();
        let expected = [
            "0.0001", "0.002", "0.05", "0.5", "1", "2", "20", "500", "50000",
        ];
        assert_eq!(labels, expected);
        assert_eq!(bytes_label(8.0), "8 B");
        assert_eq!(bytes_label(32768.0), "32 KiB");
        assert_eq!(bytes_label(1048576.0), "1 MiB");
    }

    #[test]
    fn rows_without_a_chart_write_nothing() {
        let dir = scratch("empty");
        let only_floor: Vec<Row> = ROWS
            .lines()
            .filter(|l| l.contains("floor_one_way"))
            .filter_map(super::super::mp::parse_row)
            .collect();
        assert!(write(&dir, &only_floor).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_line_that_is_not_a_row_is_an_error() {
        let dir = scratch("bad");
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("rows.json");
        std::fs::write(&json, "{\"op\":\"barrier\"}\n").unwrap();
        let error = read_rows(&json).unwrap_err();
        assert!(error.contains(":1: not a row"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

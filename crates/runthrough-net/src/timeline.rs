// SPDX-License-Identifier: MIT OR Apache-2.0
//! The events a rank reports to its launcher for the job timeline (`rtrun --timeline`).
//!
//! A launcher that wants them sets [`crate::launch::ENV_TIMELINE`]` = 1` in each rank's
//! environment; the rank then writes one `event ...` line per event on its control connection
//! ([`event_line`]), and the launcher reads them among the other reports
//! ([`crate::launch::parse_report`]). The launcher stamps each line with the time it read it:
//! ranks need no common clock. Without the variable a rank sends none.
//!
//! The lines:
//!
//! | line | event |
//! |---|---|
//! | `event ready` | the rank is wired up: `init` connected it to every live peer |
//! | `event learned R` | this rank's detector learned that world rank R failed |
//! | `event call NAME COMM view FAILED NEW` | `validate_global` returned G: its failed ranks and the NEW ones, world ranks, comma-separated (`-` for none) |
//! | `event call NAME COMM flag F` | `agree` returned the flag F |
//! | `event call NAME COMM size N` | `shrink` returned a communicator of N ranks |
//! | `event call NAME COMM error TEXT` | the call returned this error |
//! | `event finalize` | the rank entered finalize |
//!
//! `NAME` is `validate_global`, `agree` or `shrink`; `COMM` is `world`, or the size of another
//! communicator (`of:N`).

use std::fmt;

/// What a rank's call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `validate_global`'s new G: every failed rank, and those that are NEW (world ranks).
    View {
        /// The ranks failed in G, in increasing order.
        failed: Vec<u32>,
        /// Those that entered G at this call.
        new: Vec<u32>,
    },
    /// `agree`'s agreed flag.
    Flag(u32),
    /// `shrink`'s new communicator size.
    Size(u32),
    /// An error, as the runtime writes it.
    Error(String),
}

/// One event of a rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankEvent {
    /// The rank is wired up (connected to every live peer).
    Ready,
    /// This rank's detector learned that this world rank failed.
    Learned(u32),
    /// A fault-tolerant collective returned.
    Call {
        /// `validate_global`, `agree` or `shrink`.
        name: String,
        /// `None`: the world communicator; `Some(n)`: another one, of n ranks.
        comm: Option<u32>,
        /// What it returned.
        outcome: Outcome,
    },
    /// The rank entered finalize.
    Finalize,
}

fn write_list(f: &mut fmt::Formatter<'_>, ranks: &[u32]) -> fmt::Result {
    if ranks.is_empty() {
        return f.write_str("-");
    }
    for (i, rank) in ranks.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{rank}")?;
    }
    Ok(())
}

fn parse_list(word: &str) -> Option<Vec<u32>> {
    if word == "-" {
        return Some(Vec::new());
    }
    word.split(',').map(|r| r.parse().ok()).collect()
}

impl fmt::Display for RankEvent {
    /// The line's words after `event ` (see the module's table).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankEvent::Ready => f.write_str("ready"),
            RankEvent::Learned(rank) => write!(f, "learned {rank}"),
            RankEvent::Finalize => f.write_str("finalize"),
            RankEvent::Call {
                name,
                comm,
                outcome,
            } => {
                write!(f, "call {name} ")?;
                match comm {
                    None => f.write_str("world ")?,
                    Some(size) => write!(f, "of:{size} ")?,
                }
                match outcome {
                    Outcome::View { failed, new } => {
                        f.write_str("view ")?;
                        write_list(f, failed)?;
                        f.write_str(" ")?;
                        write_list(f, new)
                    }
                    Outcome::Flag(flag) => write!(f, "flag {flag}"),
                    Outcome::Size(size) => write!(f, "size {size}"),
                    // One line: no line breaks in the text.
                    Outcome::Error(text) => write!(f, "error {}", text.replace(['\n', '\r'], " ")),
                }
            }
        }
    }
}

/// The control line of `event` (with its `\n`).
pub fn event_line(event: &RankEvent) -> String {
    format!("event {event}\n")
}

/// Parses the words after `event ` of a line [`event_line`] wrote.
pub fn parse_event(text: &str) -> Option<RankEvent> {
    let mut words = text.splitn(2, ' ');
    let kind = words.next()?;
    let rest = words.next().unwrap_or("");
    match kind {
        "ready" if rest.is_empty() => Some(RankEvent::Ready),
        "finalize" if rest.is_empty() => Some(RankEvent::Finalize),
        "learned" => rest.trim().parse().ok().map(RankEvent::Learned),
        "call" => {
            let mut words = rest.splitn(4, ' ');
            let name = words.next()?;
            if !matches!(name, "validate_global" | "agree" | "shrink") {
                return None;
            }
            let comm = match words.next()? {
                "world" => None,
                other => Some(other.strip_prefix("of:")?.parse().ok()?),
            };
            let kind = words.next()?;
            let value = words.next().unwrap_or("");
            let outcome = match kind {
                "view" => {
                    let (failed, new) = value.split_once(' ')?;
                    Outcome::View {
                        failed: parse_list(failed)?,
                        new: parse_list(new)?,
                    }
                }
                "flag" => Outcome::Flag(value.parse().ok()?),
                "size" => Outcome::Size(value.parse().ok()?),
                "error" => Outcome::Error(value.to_string()),
                _ => return None,
            };
            Some(RankEvent::Call {
                name: name.to_string(),
                comm,
                outcome,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reads_back_as_written() {
        let events = [
            RankEvent::Ready,
            RankEvent::Learned(7),
            RankEvent::Finalize,
            RankEvent::Call {
                name: "validate_global".into(),
                comm: None,
                outcome: Outcome::View {
                    failed: vec![3, 5],
                    new: vec![5],
                },
            },
            RankEvent::Call {
                name: "validate_global".into(),
                comm: Some(4),
                outcome: Outcome::View {
                    failed: vec![],
                    new: vec![],
                },
            },
            RankEvent::Call {
                name: "agree".into(),
                comm: None,
                outcome: Outcome::Flag(u32::MAX),
            },
            RankEvent::Call {
                name: "shrink".into(),
                comm: None,
                outcome: Outcome::Size(6),
            },
            RankEvent::Call {
                name: "agree".into(),
                comm: Some(3),
                outcome: Outcome::Error("a rank failed (flag 1)".into()),
            },
        ];
        for event in events {
            let line = event_line(&event);
            assert!(
                line.ends_with('\n') && line.matches('\n').count() == 1,
                "{line}"
            );
            let words = line.trim_end().strip_prefix("event ").unwrap();
            assert_eq!(parse_event(words), Some(event), "{line}");
        }
    }

    #[test]
    fn an_error_with_line_breaks_stays_one_line() {
        let event = RankEvent::Call {
            name: "shrink".into(),
            comm: None,
            outcome: Outcome::Error("two\nlines".into()),
        };
        assert_eq!(
            event_line(&event),
            "event call shrink world error two lines\n"
        );
    }

    #[test]
    fn malformed_events_are_refused() {
        for text in [
            "",
            "ready now",
            "learned x",
            "call frobnicate world flag 1",
            "call agree of:x flag 1",
            "call agree somewhere flag 1",
            "call agree world flag",
            "call validate_global world view 1,x -",
            "call validate_global world view 1",
            "call shrink world colour 3",
            "teleported",
        ] {
            assert_eq!(parse_event(text), None, "{text:?}");
        }
    }
}

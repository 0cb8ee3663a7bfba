// SPDX-License-Identifier: MIT OR Apache-2.0
//! The job timeline (`rtrun --timeline FILE`): what happened to each rank, and when, drawn as
//! an SVG picture with one lane per rank ([`runthrough::timeline`] draws it).
//!
//! rtrun knows when it started each rank, when each planned fault fired, which rank reported
//! which suspect, and when and how each process ended. With [`crate::Job::timeline`] it also
//! asks each rank for its own events ([`runthrough_net::timeline`]): when it was wired up, when
//! its detector learned of each failure, what each `validate_global`, `agree` and `shrink`
//! returned, when it entered finalize. Every time is rtrun's: when it saw the event (a rank's
//! event when its line arrived on the control connection), from the start of the job.

use std::time::Duration;

pub use runthrough::timeline::{Entry, Timeline, What};

use crate::{Ending, FaultOutcome, RankReport};
use runthrough_net::launch;

/// How a process's end is drawn: a death (`data-how` and the label) or the rank's own end.
fn ended(ending: Ending, injected: bool, fenced_by: Option<u32>) -> What {
    let description = ending.to_string();
    let how = if injected {
        "injected"
    } else if fenced_by.is_some() {
        "fenced"
    } else {
        match ending {
            Ending::Signaled(_) => "signal",
            Ending::Exited(code) if code == launch::EXIT_FENCED => "fenced",
            Ending::Exited(code) if code == launch::EXIT_NO_MAJORITY => "halted",
            Ending::Exited(code) if code == launch::EXIT_INJECTED => "injected",
            Ending::Exited(_) => return What::Ended { description },
        }
    };
    let description = match (injected, fenced_by) {
        (true, _) => format!("{description}, injected"),
        (false, Some(by)) => format!("{description}, fenced by rank {by}"),
        _ => description,
    };
    What::Died {
        how: how.into(),
        description,
    }
}

/// The timeline of a job that ended: `events` (the ranks' own, and suspicions, as they came)
/// with each rank's start (`ranks`: its report and when rtrun started it) and end, and the
/// planned faults that fired, in time order.
pub(crate) fn of_job(
    size: u32,
    elapsed: Duration,
    ranks: &[(RankReport, Option<Duration>)],
    faults: &[FaultOutcome],
    events: Vec<Entry>,
) -> Timeline {
    let mut entries = events;
    for (report, started) in ranks {
        if let Some(at) = started {
            entries.push(Entry {
                rank: report.rank,
                at: *at,
                what: What::Started,
            });
        }
        if let (Some(ending), Some(at)) = (report.ending, report.ended_at) {
            entries.push(Entry {
                rank: report.rank,
                at,
                what: ended(ending, report.injected, report.fenced_by),
            });
        }
    }
    for outcome in faults {
        if let Some(fired) = outcome.fired {
            entries.push(Entry {
                rank: outcome.fault.rank(),
                at: fired.at,
                what: What::Fired {
                    fault: outcome.fault.to_string(),
                    call: fired.call,
                },
            });
        }
    }
    // In time order; at one instant, a start first and an end last.
    let order = |what: &What| match what {
        What::Started => 0,
        What::Died { .. } | What::Ended { .. } => 2,
        _ => 1,
    };
    entries.sort_by_key(|e| (e.at, order(&e.what)));
    Timeline {
        size,
        elapsed,
        entries,
        clock: "when rtrun saw each event".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deaths_are_told_apart_from_ends() {
        let how = |ending, injected, fenced_by| match ended(ending, injected, fenced_by) {
            What::Died { how, .. } => how,
            What::Ended { description } => format!("end: {description}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(how(Ending::Signaled(9), false, Some(2)), "fenced");
        assert_eq!(how(Ending::Signaled(11), false, None), "signal");
        assert_eq!(how(Ending::Signaled(9), true, None), "injected");
        assert_eq!(how(Ending::Exited(85), false, None), "injected");
        assert_eq!(how(Ending::Exited(86), false, None), "fenced");
        assert_eq!(how(Ending::Exited(88), false, None), "halted");
        assert_eq!(
            how(Ending::Exited(0), false, None),
            "end: exited with status 0"
        );
        assert_eq!(
            how(Ending::Exited(3), false, None),
            "end: exited with status 3"
        );
        match ended(Ending::Signaled(9), false, Some(2)) {
            What::Died { description, .. } => assert_eq!(
                description,
                "killed by signal 9 (SIGKILL), fenced by rank 2"
            ),
            other => panic!("{other:?}"),
        }
    }
}

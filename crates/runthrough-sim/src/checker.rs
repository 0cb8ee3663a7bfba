// SPDX-License-Identifier: MIT OR Apache-2.0
//! The safety properties of semantics §2.1 and §3.5, checked as the run goes.

use std::collections::BTreeMap;
use std::sync::Arc;

use runthrough_core::{Contribution, Decision, Participants, Rank, RankSet};

/// What the checker knows of one call.
#[derive(Debug, Default)]
struct Call {
    participants: Option<Arc<Participants>>,
    /// Contributions of the ranks that entered, in the order they entered.
    contributions: BTreeMap<Rank, Contribution>,
    /// The first decision, and the rank that made it.
    decided: Option<(Rank, Decision)>,
    /// Every rank that decided (including ones that crashed afterwards).
    deciders: RankSet,
}

/// Checks every start and decision against semantics §2.1 (uniform agreement, validity, monotone
/// G) and §3.5 (flag and `ProcFailed` rule of `agree`).
#[derive(Debug, Default)]
pub struct Checker {
    calls: BTreeMap<u64, Call>,
    crashed: RankSet,
}

impl Checker {
    /// A checker with nothing seen yet.
    pub fn new() -> Self {
        Checker::default()
    }

    /// `rank` crashed.
    pub fn on_crash(&mut self, rank: Rank) {
        self.crashed.insert(rank);
    }

    /// `rank` entered call `call` over `participants` with `contribution`.
    ///
    /// # Errors
    /// A description of the violation when ranks enter one call over different participants
    /// (which would mean the previous call's G differed: semantics §2.1 uniform agreement).
    pub fn on_start(
        &mut self,
        rank: Rank,
        call: u64,
        participants: &Arc<Participants>,
        contribution: &Contribution,
    ) -> Result<(), String> {
        let entry = self.calls.entry(call).or_default();
        match &entry.participants {
            None => entry.participants = Some(participants.clone()),
            // The same ranks, and the same choice of the first round (a job makes one).
            Some(p) if **p != **participants => {
                return Err(format!(
                    "rank {rank} entered call {call} excluding {:?} (first round: {}), others \
                     excluding {:?} (first round: {})",
                    participants.excluded().as_slice(),
                    participants.fast_round(),
                    p.excluded().as_slice(),
                    p.fast_round()
                ))
            }
            Some(_) => {}
        }
        if !participants.contains(rank) {
            return Err(format!(
                "rank {rank} entered call {call} but is not a participant"
            ));
        }
        entry.contributions.insert(rank, contribution.clone());
        Ok(())
    }

    /// `rank` decided `decision` in call `call`, its G before the call being `old_g`.
    ///
    /// # Errors
    /// A description of the first property violated.
    pub fn on_decide(
        &mut self,
        rank: Rank,
        call: u64,
        decision: &Decision,
        old_g: &RankSet,
    ) -> Result<(), String> {
        let crashed = self.crashed.clone();
        let entry = self.calls.entry(call).or_default();
        let participants = entry
            .participants
            .clone()
            .ok_or_else(|| format!("rank {rank} decided call {call} that nobody entered"))?;
        let Some(own) = entry.contributions.get(&rank) else {
            return Err(format!(
                "rank {rank} decided call {call} without entering it"
            ));
        };
        // SPEC §2.1 uniform agreement (also with ranks that decided and then crashed).
        if let Some((first, value)) = &entry.decided {
            if value != decision {
                return Err(format!(
                    "uniform agreement: call {call}: rank {first} decided {value:?}, rank {rank} decided {decision:?}"
                ));
            }
        }
        // SPEC §2.1 validity: every failure known to this rank's detector at entry is in G'.
        let known: RankSet = own
            .known_failed
            .iter()
            .filter(|&r| participants.contains(r))
            .collect();
        if !known.is_subset(&decision.failed) {
            return Err(format!(
                "validity: call {call}: rank {rank} knew {:?} failed at entry, G' adds only {:?}",
                known.as_slice(),
                decision.failed.as_slice()
            ));
        }
        // SPEC §2.1 monotone: G' minus G holds only participants (so G only grows).
        if !decision.failed.intersection(old_g).is_empty() {
            return Err(format!(
                "monotone: call {call}: decision {:?} repeats ranks of the old G {:?}",
                decision.failed.as_slice(),
                old_g.as_slice()
            ));
        }
        entry.deciders.insert(rank);
        if entry.decided.is_some() {
            return Ok(());
        }
        entry.decided = Some((rank, decision.clone()));
        // The rest is about the value, checked when it first appears.
        for r in &decision.failed {
            if !participants.contains(r) {
                return Err(format!(
                    "validity: call {call}: failed rank {r} is not a participant"
                ));
            }
            if !crashed.contains(r) {
                return Err(format!(
                    "validity: call {call}: rank {r} is in G' but has not crashed"
                ));
            }
        }
        if !decision.non_contributors.is_subset(&decision.failed) {
            return Err(format!(
                "validity: call {call}: non-contributors {:?} not all in G' {:?}",
                decision.non_contributors.as_slice(),
                decision.failed.as_slice()
            ));
        }
        // Every participant not in G' took part; every contributor's contribution is in the
        // value: the flag is the AND of theirs, unacknowledged_failure follows their L.
        let mut flag = u32::MAX;
        let mut acknowledged: Option<RankSet> = None;
        for r in participants.ranks() {
            if decision.non_contributors.contains(r) {
                continue;
            }
            let Some(c) = entry.contributions.get(&r) else {
                return Err(format!(
                    "validity: call {call}: participant {r} is counted as a contributor but never entered"
                ));
            };
            flag &= c.flag;
            acknowledged = Some(match acknowledged {
                None => c.acknowledged.clone(),
                Some(a) => a.intersection(&c.acknowledged),
            });
        }
        if flag != decision.flag {
            return Err(format!(
                "agree: call {call}: flag {:#x}, AND of the contributors is {flag:#x}",
                decision.flag
            ));
        }
        let acknowledged = acknowledged.unwrap_or_default();
        let unacknowledged = !decision.non_contributors.is_subset(&acknowledged);
        if unacknowledged != decision.unacknowledged_failure {
            return Err(format!(
                "agree (docs/src/semantics.md §3.5): call {call}: unacknowledged_failure = {}, but non-contributors {:?} vs acknowledged by all {:?}",
                decision.unacknowledged_failure,
                decision.non_contributors.as_slice(),
                acknowledged.as_slice()
            ));
        }
        Ok(())
    }

    /// The first decision of call `call`, if any.
    pub fn decision(&self, call: u64) -> Option<&Decision> {
        self.calls.get(&call)?.decided.as_ref().map(|(_, d)| d)
    }
}

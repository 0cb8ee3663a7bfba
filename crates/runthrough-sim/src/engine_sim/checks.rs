// SPDX-License-Identifier: MIT OR Apache-2.0
//! What the engine simulator checks, from the outside: a ledger of every application message
//! (sent, delivered, buffered or matched at arrival, received), of what each rank's detector
//! told it and what `validate_local` acknowledged, and of revocations. Each rank's outcome is
//! checked against it as it happens (semantics §1, §2.1, §3.1–3.3, §3.5), and flow control's
//! figures against what the ledger says is buffered.

use runthrough_core::agreement::Decision;
use runthrough_core::engine::{Probed, Received};
use runthrough_core::flow::{self, FlowStats};
use runthrough_core::matching::{SourceSelector, TagSelector};
use runthrough_core::packet::{Packet, WORLD_CONTEXT};
use runthrough_core::{Error, FailureView, RankSet};

use super::program::{decode, payload_of, Plan, MAX_PAD};

/// A check failed: what went wrong.
pub type Verdict = Result<(), String>;

/// The ledger, for all ranks.
#[derive(Debug)]
pub struct Checker {
    ranks: u32,
    /// Ranks that crashed.
    pub crashed: Vec<bool>,
    /// By observer: the failures its detector reported.
    pub detected: Vec<RankSet>,
    /// By observer: the failures its latest `validate_local` acknowledged.
    pub acknowledged: Vec<RankSet>,
    /// Whether the revoking rank of the schedule revoked the world.
    pub revoke_issued: bool,
    /// By rank: whether its world communicator is revoked.
    pub revoked: Vec<bool>,
    /// By message id.
    sent: Vec<bool>,
    delivered: Vec<bool>,
    received: Vec<bool>,
    /// (receiver, sender, tag) -> the last message id received with them (non-overtaking).
    last: std::collections::BTreeMap<(u32, u32, i32), u32>,
    /// By receiver: the messages buffered as unexpected, in arrival order, with their charges.
    buffered: Vec<Vec<(u32, u64)>>,
    /// By receiver: the sum of those charges (what flow control must report held).
    held: Vec<u64>,
    /// By rank: its posted point-to-point receives, in posting order: (receive id, selectors).
    posted: Vec<Vec<(u64, SourceSelector, TagSelector)>>,
    /// By rank: the messages deliveries matched to posted receives, by receive id, not yet
    /// looked at.
    matched: Vec<std::collections::BTreeMap<u64, u32>>,
    /// Messages received, receives that found the sender failed.
    pub receipts: u64,
    /// See `receipts`.
    pub failed_receives: u64,
    /// Each sender's window at each receiver (flow control's figure).
    pub window: u64,
    /// The unexpected cap: what a receiver may lend one sender at most.
    pub cap: u64,
    /// By round: what the first rank to return from that round's `dup` got (the context id,
    /// or the error), and which rank that was.
    creations: FirstReturn<(usize, usize), std::result::Result<u64, Error>>,
    /// By round: the first rank to return from that round's `split` and whether it got a
    /// communicator or which error; by round and color, the first rank to return with that
    /// color's communicator, and its context and members.
    split_outcomes: FirstReturn<usize, std::result::Result<(), Error>>,
    split_comms: FirstReturn<(usize, u32), (u64, Vec<u32>)>,
    /// `split` calls that returned a communicator (or `None`, for `MPI_UNDEFINED`), and that
    /// returned an error (per rank).
    pub splits: (u64, u64),
    /// By round: the first rank to return from that round's `shrink`, the context and members
    /// it got.
    shrinks: FirstReturn<usize, (u64, Vec<u32>)>,
    /// `shrink` calls that returned (per rank).
    pub shrinks_returned: u64,
    /// (lender, borrower): a loan went out since the lender last held no more than the
    /// borrower's window (`runthrough_core::flow`, "Loans").
    loans: std::collections::BTreeSet<(u32, u32)>,
    /// By agreement number (every rank starts the same agreements in the same order).
    agreements: std::collections::BTreeMap<u64, AgreementLedger>,
    /// Agreements decided (decisions taken by survivors).
    pub decisions: u64,
    /// `dup` calls that returned a communicator, and that returned an error (per rank).
    pub dups: (u64, u64),
    /// By rank: the failed ranks of its G.
    pub global: Vec<RankSet>,
    /// Test-only fault: see `Options::corrupt_decision_at`.
    pub corrupt_decision_at: Option<u64>,
    /// Test-only fault: see `Options::corrupt_creation_at`.
    pub corrupt_creation_at: Option<u64>,
    /// Creation decisions taken (by survivors), counted for `corrupt_creation_at`.
    pub creation_decisions: u64,
    /// By (round, call): the ranks that started that non-blocking barrier.
    barrier_entries: std::collections::BTreeMap<(usize, usize), RankSet>,
    /// Barriers that returned `Ok` (per rank), each checked against `barrier_entries`.
    pub barriers_left: u64,
    /// Test-only fault: see `Options::corrupt_split_at`.
    pub corrupt_split_at: Option<u64>,
    /// `split` communicators of two ranks or more installed, counted for `corrupt_split_at`.
    pub split_installs: u64,
}

/// By key (a round, or a round and a color): the first rank to return from that call, and what
/// it got ([`same_as_first`]).
type FirstReturn<K, T> = std::collections::BTreeMap<K, (u32, T)>;

/// A promise that every rank returning from one call gets the same: the first rank to return
/// under `key` records its `value` (with its rank), and a later one with another value is a
/// violation, described as `what` "returned X at R but Y at F".
fn same_as_first<K: Ord, T: PartialEq + std::fmt::Debug>(
    seen: &mut FirstReturn<K, T>,
    key: K,
    rank: u32,
    value: T,
    what: impl FnOnce() -> String,
) -> Verdict {
    match seen.get(&key) {
        None => {
            seen.insert(key, (rank, value));
            Ok(())
        }
        Some((first, theirs)) if *theirs != value => Err(format!(
            "{} returned {value:?} at {rank} but {theirs:?} at {first}",
            what()
        )),
        Some(_) => Ok(()),
    }
}

/// What the ledger knows of one agreement.
#[derive(Debug, Default)]
struct AgreementLedger {
    /// Whether it is a `validate_global`'s.
    global: bool,
    /// By rank that entered it: what it entered with.
    entries: std::collections::BTreeMap<u32, Entry>,
    /// The first decision a rank took, which every other rank must take too.
    decision: Option<(u32, Decision)>,
    /// The G the first rank that installed it got (`validate_global`).
    installed: Option<(u32, RankSet)>,
}

/// What a rank entered an agreement with.
#[derive(Debug)]
struct Entry {
    flag: u32,
    /// Its detector's failures then.
    known: RankSet,
    /// Its L then.
    acknowledged: RankSet,
    /// Its G's failed ranks then.
    global: RankSet,
}

fn accepts(source: SourceSelector, tag: TagSelector, from: u32, t: i32) -> bool {
    let s = match source {
        SourceSelector::Any => true,
        SourceSelector::Rank(r) => r == from,
    };
    let t = match tag {
        TagSelector::Any => true,
        TagSelector::Value(v) => v == t,
    };
    s && t
}

impl Checker {
    /// A ledger for `plan`.
    pub fn new(plan: &Plan) -> Self {
        let n = plan.ranks as usize;
        let m = plan.messages.len();
        Checker {
            ranks: plan.ranks,
            crashed: vec![false; n],
            detected: vec![RankSet::new(); n],
            acknowledged: vec![RankSet::new(); n],
            revoke_issued: false,
            revoked: vec![false; n],
            sent: vec![false; m],
            delivered: vec![false; m],
            received: vec![false; m],
            last: Default::default(),
            buffered: vec![Vec::new(); n],
            held: vec![0; n],
            posted: vec![Vec::new(); n],
            matched: vec![Default::default(); n],
            receipts: 0,
            failed_receives: 0,
            window: u64::MAX,
            cap: 0,
            loans: Default::default(),
            creations: Default::default(),
            split_outcomes: Default::default(),
            split_comms: Default::default(),
            splits: (0, 0),
            dups: (0, 0),
            shrinks: Default::default(),
            shrinks_returned: 0,
            agreements: Default::default(),
            decisions: 0,
            global: vec![RankSet::new(); n],
            corrupt_decision_at: None,
            corrupt_creation_at: None,
            corrupt_split_at: None,
            split_installs: 0,
            creation_decisions: 0,
            barrier_entries: Default::default(),
            barriers_left: 0,
        }
    }

    /// Rank `from` puts `packet` for `to` on the network.
    pub fn on_transmit(&mut self, plan: &Plan, from: u32, to: u32, packet: &Packet) -> Verdict {
        if let Packet::Loan { .. } = packet {
            // A loan: only while a receive of the lender waits for a message of the borrower.
            let waits = self.posted[from as usize].iter().any(|&(_, source, _)| {
                matches!(source, SourceSelector::Any) || source == SourceSelector::Rank(to)
            });
            if !waits {
                return Err(format!(
                    "rank {from} lent {to} a window while no receive of it waited for {to}"
                ));
            }
            self.loans.insert((from, to));
            return Ok(());
        }
        let Packet::Data {
            context,
            source,
            payload,
            ..
        } = packet
        else {
            return Ok(());
        };
        let (sender, id) = decode(payload).ok_or("a data packet that no program sent")?;
        let message = &plan.messages[id as usize];
        if *context != WORLD_CONTEXT || *source != from || sender != from {
            return Err(format!(
                "rank {from} sent message {id} with a wrong envelope"
            ));
        }
        if message.receiver != to {
            return Err(format!(
                "message {id} for {} went to {to}",
                message.receiver
            ));
        }
        if std::mem::replace(&mut self.sent[id as usize], true) {
            return Err(format!("message {id} was transmitted twice"));
        }
        Ok(())
    }

    /// `packet` from `from` is about to be delivered to `to` (alive).
    pub fn on_deliver(&mut self, plan: &Plan, from: u32, to: u32, packet: &Packet) -> Verdict {
        match packet {
            Packet::Revoke { .. } => {
                if !self.revoke_issued {
                    return Err(format!("a Revoke reached {to} though nobody revoked"));
                }
                if !self.revoked[to as usize] {
                    self.on_revoke(to);
                }
                Ok(())
            }
            Packet::Data { tag, payload, .. } => {
                let (_, id) = decode(payload).ok_or("undecodable payload")?;
                if !self.sent[id as usize] {
                    return Err(format!("message {id} delivered but never sent"));
                }
                if std::mem::replace(&mut self.delivered[id as usize], true) {
                    return Err(format!("message {id} delivered twice"));
                }
                let to_us = to as usize;
                if self.revoked[to_us] {
                    return Ok(()); // dropped at arrival
                }
                // The first posted receive that accepts it takes it (`Matcher::arrive`).
                let first = self.posted[to_us]
                    .iter()
                    .position(|&(_, source, tagsel)| accepts(source, tagsel, from, *tag));
                if let Some(at) = first {
                    let (rid, _, _) = self.posted[to_us].remove(at);
                    self.matched[to_us].insert(rid, id);
                    return self.matched_in_order(to, from, *tag, id);
                }
                let charge = flow::charge(payload.len());
                self.buffered[to_us].push((id, charge));
                self.held[to_us] += charge;
                self.check_window_of(plan, to, from)
            }
            _ => Ok(()),
        }
    }

    /// The world communicator is revoked at `rank`: its buffered messages are dropped and its
    /// posted receive completes with `Revoked`.
    pub fn on_revoke(&mut self, rank: u32) {
        let r = rank as usize;
        self.revoked[r] = true;
        self.buffered[r].clear();
        self.held[r] = 0;
        self.posted[r].clear();
    }

    /// `observer`'s detector reports that `dead` failed.
    pub fn on_detect(&mut self, observer: u32, dead: u32) {
        let o = observer as usize;
        self.detected[o].insert(dead);
        // Receives posted from it complete with ProcFailed.
        self.posted[o].retain(|&(_, source, _)| source != SourceSelector::Rank(dead));
    }

    /// `rank` called `validate_local` and got `view`: L = G ∪ the failures it knows (semantics
    /// §2.1).
    pub fn on_validate(&mut self, rank: u32, view: &FailureView) -> Verdict {
        let r = rank as usize;
        if view.failed_set() != self.detected[r] {
            return Err(format!(
                "validate_local at {rank} gave failed {:?}, its detector knows {:?}",
                view.failed_set(),
                self.detected[r]
            ));
        }
        self.acknowledged[r] = self.detected[r].clone();
        Ok(())
    }

    fn unacknowledged(&self, rank: u32) -> bool {
        self.detected[rank as usize].len() > self.acknowledged[rank as usize].len()
    }

    /// Message `id` from `sender` with `tag` is matched by a receive at `rank` (taken from
    /// the buffer, or matched at arrival by a posted receive): MPI's non-overtaking rule says
    /// one sender's messages with one tag are matched in the order they were sent.
    fn matched_in_order(&mut self, rank: u32, sender: u32, tag: i32, id: u32) -> Verdict {
        if let Some(&last) = self.last.get(&(rank, sender, tag)) {
            if last > id {
                return Err(format!(
                    "message {id} from {sender} tag {tag} matched at {rank} after {last} (non-overtaking)"
                ));
            }
        }
        self.last.insert((rank, sender, tag), id);
        Ok(())
    }

    /// A receive of `rank` was posted (nothing buffered matched, no failure outcome applied).
    pub fn on_posted(
        &mut self,
        rank: u32,
        rid: u64,
        source: SourceSelector,
        tag: TagSelector,
    ) -> Verdict {
        self.still_pending(rank, source)?;
        self.posted[rank as usize].push((rid, source, tag));
        Ok(())
    }

    /// A posted receive of `rank` is still pending: it must not be one that a failure decides.
    pub fn still_pending(&self, rank: u32, source: SourceSelector) -> Verdict {
        match source {
            SourceSelector::Any if self.unacknowledged(rank) => Err(format!(
                "a wildcard receive at {rank} waits while a failure is unacknowledged (SPEC §3.2)"
            )),
            SourceSelector::Rank(s) if self.detected[rank as usize].contains(s) => Err(format!(
                "a receive at {rank} from {s} waits though its detector knows {s} failed (SPEC §3.1)"
            )),
            _ => Ok(()),
        }
    }

    /// `rank` withdrew its posted receive `rid`.
    pub fn on_cancel(&mut self, rank: u32, rid: u64) {
        self.posted[rank as usize].retain(|&(r, _, _)| r != rid);
    }

    /// A receive of `rank` for message `intended` with selectors (`source`, `tag`) returned
    /// `received`: at once from the buffer (`posted` is `None`), or as the completion of its
    /// posted receive `posted`.
    pub fn on_received(
        &mut self,
        plan: &Plan,
        rank: u32,
        intended: u32,
        (source, tag): (SourceSelector, TagSelector),
        received: &Received,
        posted: Option<u64>,
    ) -> Verdict {
        let r = rank as usize;
        let Some(envelope) = received.envelope else {
            // MPI_PROC_NULL: only for a receive naming a rank of G (SPEC §2.1).
            return match source {
                SourceSelector::Rank(s) if self.global[r].contains(s) => {
                    if let Some(rid) = posted {
                        if let Some(id) = self.matched[r].remove(&rid) {
                            return Err(format!(
                                "posted receive {rid} at {rank} matched {id} and completed as MPI_PROC_NULL"
                            ));
                        }
                    }
                    self.failed_receives += 1;
                    Ok(())
                }
                _ => Err(format!(
                    "a receive ({source:?}) at {rank} completed as MPI_PROC_NULL, G {:?}",
                    self.global[r]
                )),
            };
        };
        let (sender, id) = decode(&received.payload).ok_or("received an undecodable payload")?;
        let message = plan
            .messages
            .get(id as usize)
            .ok_or("received an unknown message")?;
        if message.sender != sender || envelope.source != sender || message.tag != envelope.tag {
            return Err(format!("message {id} received with a wrong envelope"));
        }
        if message.receiver != rank {
            return Err(format!(
                "message {id} for {} received at {rank}",
                message.receiver
            ));
        }
        if received.payload != payload_of(plan, id) {
            return Err(format!("message {id} received with corrupted bytes"));
        }
        if !accepts(source, tag, sender, envelope.tag) {
            return Err(format!(
                "message {id} does not match the receive ({source:?}, {tag:?})"
            ));
        }
        if !self.delivered[id as usize] {
            return Err(format!("message {id} received before it was delivered"));
        }
        if std::mem::replace(&mut self.received[id as usize], true) {
            return Err(format!("message {id} received twice"));
        }
        if id != intended && !self.crashed[sender as usize] {
            return Err(format!(
                "receive for message {intended} at {rank} got {id} from live sender {sender}"
            ));
        }
        if let Some(rid) = posted {
            if self.matched[r].remove(&rid) != Some(id) {
                return Err(format!(
                    "posted receive {rid} at {rank} completed with {id}, not the message matched at arrival"
                ));
            }
        } else {
            self.matched_in_order(rank, sender, envelope.tag, id)?;
            let first = self.buffered[r].iter().position(|&(b, _)| {
                let m = &plan.messages[b as usize];
                accepts(source, tag, m.sender, m.tag)
            });
            match first {
                Some(at) if self.buffered[r][at].0 == id => {
                    let (_, charge) = self.buffered[r].remove(at);
                    self.held[r] -= charge;
                }
                Some(at) => {
                    return Err(format!(
                        "receive at {rank} took {id}, the first buffered match is {}",
                        self.buffered[r][at].0
                    ))
                }
                None => {
                    return Err(format!(
                        "receive at {rank} took {id}, which is not buffered"
                    ))
                }
            }
        }
        self.receipts += 1;
        Ok(())
    }

    /// A probe of `rank` with selectors (`source`, `tag`) found `outcome`: the first buffered
    /// match (left buffered), or the outcome a receive would have without one (semantics §3.1–3.2).
    pub fn on_probe(
        &self,
        plan: &Plan,
        rank: u32,
        (source, tag): (SourceSelector, TagSelector),
        outcome: &runthrough_core::Result<Option<Probed>>,
    ) -> Verdict {
        let first = self.buffered[rank as usize].iter().find_map(|&(b, _)| {
            let m = &plan.messages[b as usize];
            accepts(source, tag, m.sender, m.tag).then_some((b, m))
        });
        match (outcome, first) {
            (Ok(Some(Probed::Message(envelope, len))), Some((id, m))) => {
                if envelope.source != m.sender || envelope.tag != m.tag || *len != 8 + m.extra {
                    return Err(format!(
                        "probe at {rank} saw {envelope:?} ({len} bytes), the first match is {id}"
                    ));
                }
                Ok(())
            }
            (Ok(Some(Probed::Message(envelope, _))), None) => Err(format!(
                "probe at {rank} saw {envelope:?}, nothing matching is buffered"
            )),
            (_, Some((id, _))) => Err(format!(
                "probe at {rank} gave {outcome:?} with message {id} buffered"
            )),
            (Ok(Some(Probed::ProcNull)), None) => match source {
                SourceSelector::Rank(s) if self.global[rank as usize].contains(s) => Ok(()),
                _ => Err(format!(
                    "probe at {rank} ({source:?}) gave MPI_PROC_NULL, G {:?}",
                    self.global[rank as usize]
                )),
            },
            (Ok(None), None) => self.still_pending(rank, source),
            (Err(Error::ProcFailed { rank: failed }), None) => {
                if source != SourceSelector::Rank(*failed) {
                    return Err(format!(
                        "probe at {rank} from {source:?}: ProcFailed({failed})"
                    ));
                }
                self.known_failed(rank, *failed)
            }
            (Err(Error::ProcFailedPending), None) => self.on_failure_pending(rank, source),
            (Err(error), None) => self.on_error(rank, error),
        }
    }

    /// A receive of `rank` from `source` returned `ProcFailed { rank: failed }`.
    pub fn on_proc_failed(
        &mut self,
        plan: &Plan,
        rank: u32,
        (source, tag): (SourceSelector, TagSelector),
        failed: u32,
        immediate: bool,
    ) -> Verdict {
        if source != SourceSelector::Rank(failed) {
            return Err(format!(
                "a receive at {rank} from {source:?} returned ProcFailed({failed})"
            ));
        }
        self.known_failed(rank, failed)?;
        if immediate {
            let buffered = self.buffered[rank as usize].iter().find(|&&(b, _)| {
                let m = &plan.messages[b as usize];
                accepts(source, tag, m.sender, m.tag)
            });
            if let Some((id, _)) = buffered {
                return Err(format!(
                    "receive at {rank} from {failed} returned ProcFailed with message {id} buffered (SPEC §3.1)"
                ));
            }
        }
        self.failed_receives += 1;
        Ok(())
    }

    /// A receive of `rank` from `source` reported `ProcFailedPending`.
    pub fn on_failure_pending(&self, rank: u32, source: SourceSelector) -> Verdict {
        if source != SourceSelector::Any {
            return Err(format!(
                "ProcFailedPending at {rank} for a receive from {source:?} (SPEC §3.2)"
            ));
        }
        if !self.unacknowledged(rank) {
            return Err(format!(
                "ProcFailedPending at {rank} with no unacknowledged failure (SPEC §3.2)"
            ));
        }
        Ok(())
    }

    /// An error that names failed rank `failed` is legal at `rank` only if `failed` crashed
    /// and `rank`'s detector said so.
    pub fn known_failed(&self, rank: u32, failed: u32) -> Verdict {
        if failed >= self.ranks || !self.crashed[failed as usize] {
            return Err(format!("{rank} was told {failed} failed, but it did not"));
        }
        if !self.detected[rank as usize].contains(failed) {
            return Err(format!(
                "{rank} was told {failed} failed before its detector said so"
            ));
        }
        if self.global[rank as usize].contains(failed) {
            return Err(format!(
                "{rank} was told ProcFailed({failed}), a rank of its G (MPI_PROC_NULL, SPEC §2.1)"
            ));
        }
        Ok(())
    }

    /// Rank `rank` returned from round `round`'s dup number `which` (a round starts two, the
    /// second pending behind the first) with `outcome`: every rank that returns gets the same
    /// communicator or the same error (the creation protocol's promise), whatever order it
    /// waited for them in.
    pub fn on_creation(
        &mut self,
        rank: u32,
        round: usize,
        which: usize,
        outcome: &std::result::Result<u64, Error>,
    ) -> Verdict {
        if outcome.is_ok() {
            self.dups.0 += 1;
        } else {
            self.dups.1 += 1;
        }
        same_as_first(
            &mut self.creations,
            (round, which),
            rank,
            outcome.clone(),
            || format!("dup {which} of round {round}"),
        )
    }

    /// Rank `rank` returned from round `round`'s `split` (world ranks' `colors` and `keys`)
    /// with `outcome`: every rank that returns gets a communicator (or `None` for an undefined
    /// color) or the same error; the ranks of one color get the same context and members,
    /// other colors other contexts; the members all have that color, come by key then rank,
    /// and only crashed ranks of the color are left out (semantics §3.4).
    pub fn on_split(
        &mut self,
        rank: u32,
        round: usize,
        colors: &[Option<u32>],
        keys: &[i32],
        outcome: &std::result::Result<Option<(u64, Vec<u32>)>, Error>,
    ) -> Verdict {
        let kind = outcome.as_ref().map(|_| ()).map_err(Clone::clone);
        if kind.is_ok() {
            self.splits.0 += 1;
        } else {
            self.splits.1 += 1;
        }
        same_as_first(&mut self.split_outcomes, round, rank, kind, || {
            format!("the split of round {round}")
        })?;
        let color = colors[rank as usize];
        let Ok(got) = outcome else {
            return Ok(());
        };
        let (color, context, members) = match (color, got) {
            (None, None) => return Ok(()),
            (Some(color), Some((context, members))) => (color, *context, members.clone()),
            _ => {
                return Err(format!(
                    "the split of round {round} at {rank} (color {color:?}) returned {got:?}"
                ))
            }
        };
        if let Some(&stranger) = members.iter().find(|&&w| colors[w as usize] != Some(color)) {
            return Err(format!(
                "the split of round {round} at {rank} puts {stranger} (color {:?}) in color {color}",
                colors[stranger as usize]
            ));
        }
        if let Some(left) = (0..self.ranks).find(|&r| {
            colors[r as usize] == Some(color) && !members.contains(&r) && !self.crashed[r as usize]
        }) {
            return Err(format!(
                "the split of round {round} at {rank} leaves out {left} of color {color}, which lives"
            ));
        }
        if members
            .windows(2)
            .any(|w| (keys[w[0] as usize], w[0]) > (keys[w[1] as usize], w[1]))
        {
            return Err(format!(
                "the split of round {round} at {rank} orders {members:?} against keys {keys:?}"
            ));
        }
        if let Some((&(_, c), _)) = self
            .split_comms
            .range((round, 0)..=(round, u32::MAX))
            .find(|(&(_, c), (_, (other, _)))| c != color && *other == context)
        {
            return Err(format!(
                "the split of round {round} gives colors {c} and {color} one context {context:#x}"
            ));
        }
        same_as_first(
            &mut self.split_comms,
            (round, color),
            rank,
            (context, members),
            || format!("the split of round {round}, color {color},"),
        )
    }

    /// Rank `rank` returned from round `round`'s `shrink` with communicator `context` of
    /// `members` (world ranks), decided by `decision`: every rank that returns gets the same
    /// context and members, and only crashed ranks are left out (semantics §3.5).
    pub fn on_shrink(
        &mut self,
        rank: u32,
        round: usize,
        context: u64,
        members: &[u32],
        decision: &Decision,
    ) -> Verdict {
        self.shrinks_returned += 1;
        if let Some(left) =
            (0..self.ranks).find(|r| !members.contains(r) && !self.crashed[*r as usize])
        {
            return Err(format!(
                "the shrink of round {round} at {rank} leaves out {left}, which lives ({decision:?})"
            ));
        }
        same_as_first(
            &mut self.shrinks,
            round,
            rank,
            (context, members.to_vec()),
            || format!("the shrink of round {round}"),
        )
    }

    /// `rank` started call `call` of round `round`, a barrier.
    pub fn on_barrier_entered(&mut self, round: usize, call: usize, rank: u32) {
        self.barrier_entries
            .entry((round, call))
            .or_default()
            .insert(rank);
    }

    /// `rank`'s barrier (call `call` of round `round`) over `participants` returned `Ok`: every
    /// participant must have started it by now, crashed since or not (semantics §3.3: a barrier
    /// completes at a rank only once every participant has entered it; the simulator runs one
    /// rank at a time, so "by now" is well defined).
    pub fn on_barrier_left(
        &mut self,
        round: usize,
        call: usize,
        rank: u32,
        participants: &[u32],
    ) -> Verdict {
        self.barriers_left += 1;
        let entered = self.barrier_entries.get(&(round, call));
        let missing: Vec<u32> = participants
            .iter()
            .copied()
            .filter(|&p| !entered.is_some_and(|e| e.contains(p)))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "barrier of round {round} (call {call}) returned Ok at {rank} before {missing:?} \
                 entered it"
            ))
        }
    }

    /// An operation of `rank` failed with `error`: legal for `ProcFailed` of a failure its
    /// detector reported, and for `Revoked` once the world was revoked.
    pub fn on_error(&self, rank: u32, error: &Error) -> Verdict {
        match error {
            Error::ProcFailed { rank: failed } => self.known_failed(rank, *failed),
            Error::Revoked if self.revoke_issued && self.revoked[rank as usize] => Ok(()),
            Error::Revoked => Err(format!("Revoked at {rank} though it was not revoked")),
            other => Err(format!("unexpected error at {rank}: {other:?}")),
        }
    }

    /// Rank `rank` enters agreement `seq` (of a `validate_global` if `global`) with `flag`,
    /// its G's failed ranks being `g`.
    pub fn on_agreement_start(
        &mut self,
        rank: u32,
        seq: u64,
        global: bool,
        flag: u32,
        g: &RankSet,
    ) -> Verdict {
        let r = rank as usize;
        let entry = Entry {
            flag,
            known: self.detected[r].clone(),
            acknowledged: self.acknowledged[r].clone(),
            global: g.clone(),
        };
        let ledger = self
            .agreements
            .entry(seq)
            .or_insert_with(|| AgreementLedger {
                global,
                ..Default::default()
            });
        if ledger.global != global {
            return Err(format!(
                "agreement {seq}: rank {rank} enters it as global {global}, others did not"
            ));
        }
        if let Some((_, other)) = ledger.entries.iter().next() {
            if other.global != entry.global {
                return Err(format!(
                    "agreement {seq}: rank {rank} enters with G {:?}, another with {:?}",
                    entry.global, other.global
                ));
            }
        }
        if ledger.entries.insert(rank, entry).is_some() {
            return Err(format!("rank {rank} entered agreement {seq} twice"));
        }
        Ok(())
    }

    /// The decision of agreement `seq`, once a rank has decided it.
    pub fn decision_of(&self, seq: u64) -> Option<Decision> {
        let (_, decision) = self.agreements.get(&seq)?.decision.as_ref()?;
        Some(decision.clone())
    }

    /// Rank `rank` took `decision` as agreement `seq`'s (semantics §2.1, §3.5): the same as every
    /// other rank's; its failures crashed, are new to G and include every failure the rank's
    /// detector knew when it entered; its non-contributors failed, and every other participant
    /// entered; its flag is the AND over the contributors; it reports an unacknowledged failure
    /// exactly when a non-contributor is missing from some contributor's L.
    pub fn on_decision(&mut self, rank: u32, seq: u64, decision: &Decision) -> Verdict {
        self.decisions += 1;
        let n = self.ranks;
        let crashed = self.crashed.clone();
        let Some(ledger) = self.agreements.get_mut(&seq) else {
            return Err(format!(
                "rank {rank} decided agreement {seq}, which nobody entered"
            ));
        };
        let Some(entry) = ledger.entries.get(&rank) else {
            return Err(format!(
                "rank {rank} decided agreement {seq} without entering it"
            ));
        };
        if let Some((first, other)) = &ledger.decision {
            if other != decision {
                return Err(format!(
                    "agreement {seq}: rank {rank} decided {decision:?}, rank {first} decided {other:?}"
                ));
            }
            return Ok(());
        }
        let tag = format!("agreement {seq} decided at {rank} as {decision:?}");
        if let Some(r) = decision.failed.iter().find(|&r| !crashed[r as usize]) {
            return Err(format!("{tag}: rank {r} in failed never crashed"));
        }
        if !decision.non_contributors.is_subset(&decision.failed) {
            return Err(format!("{tag}: non-contributors not all in failed"));
        }
        if !decision.failed.intersection(&entry.global).is_empty() {
            return Err(format!(
                "{tag}: failed holds ranks of the old G {:?}",
                entry.global
            ));
        }
        let mut covered = decision.failed.clone();
        covered.union_with(&entry.global);
        let mut flag = u32::MAX;
        let mut unacknowledged = false;
        for p in (0..n).filter(|&p| !entry.global.contains(p)) {
            if decision.non_contributors.contains(p) {
                continue;
            }
            let Some(e) = ledger.entries.get(&p) else {
                return Err(format!("{tag}: contributor {p} never entered"));
            };
            if !e.known.is_subset(&covered) {
                return Err(format!(
                    "{tag}: contributor {p} knew {:?} when it entered (old G {:?})",
                    e.known, e.global
                ));
            }
            flag &= e.flag;
            unacknowledged |= decision
                .non_contributors
                .iter()
                .any(|nc| !e.acknowledged.contains(nc));
        }
        if flag != decision.flag {
            return Err(format!("{tag}: the contributors' flags AND to {flag:#x}"));
        }
        if unacknowledged != decision.unacknowledged_failure {
            return Err(format!(
                "{tag}: some non-contributor unacknowledged by some contributor is {unacknowledged}"
            ));
        }
        ledger.decision = Some((rank, decision.clone()));
        Ok(())
    }

    /// Rank `rank` installed `view` as G after `validate_global`'s agreement `seq`: the old G
    /// with the decided failures, the same at every rank; L becomes G.
    pub fn on_validate_global(&mut self, rank: u32, seq: u64, view: &FailureView) -> Verdict {
        let g = view.failed_set();
        let Some(ledger) = self.agreements.get_mut(&seq) else {
            return Err(format!(
                "rank {rank} installed agreement {seq}, which nobody entered"
            ));
        };
        let (Some(entry), Some((_, decision))) = (ledger.entries.get(&rank), &ledger.decision)
        else {
            return Err(format!("rank {rank} installed agreement {seq} undecided"));
        };
        let mut expected = entry.global.clone();
        expected.union_with(&decision.failed);
        if g != expected {
            return Err(format!(
                "validate_global {seq} at {rank}: G {g:?}, expected {expected:?}"
            ));
        }
        if let Some((first, other)) = &ledger.installed {
            if *other != g {
                return Err(format!(
                    "validate_global {seq}: rank {rank} has G {g:?}, rank {first} {other:?}"
                ));
            }
        } else {
            ledger.installed = Some((rank, g.clone()));
        }
        self.acknowledged[rank as usize] = g.clone();
        self.global[rank as usize] = g;
        Ok(())
    }

    /// A message the plan has that is still owed: from a sender that never crashed, to a
    /// receiver that survived, not received.
    pub fn lost_message(&self, plan: &Plan) -> Option<u32> {
        plan.messages.iter().enumerate().find_map(|(id, m)| {
            let owed = !self.crashed[m.sender as usize]
                && !self.crashed[m.receiver as usize]
                && !self.received[id];
            owed.then_some(id as u32)
        })
    }

    /// Flow control's figures at `rank` against the ledger: the point-to-point bytes held are
    /// exactly the buffered messages' charges (each sender's share is checked against its
    /// window as they arrive); collective bytes stay within every sender's window or one
    /// message (the bound `crate::flow` documents).
    pub fn check_flow(&self, rank: u32, stats: &FlowStats) -> Verdict {
        let r = rank as usize;
        if stats.unexpected_bytes != self.held[r] {
            return Err(format!(
                "flow control at {rank} holds {} bytes, the buffered messages are charged {}",
                stats.unexpected_bytes, self.held[r]
            ));
        }
        let one = flow::charge(8 + MAX_PAD).max(stats.window);
        if stats.collective_bytes > u64::from(self.ranks) * one {
            return Err(format!(
                "{} collective bytes held at {rank}, above {} senders' windows",
                stats.collective_bytes, self.ranks
            ));
        }
        Ok(())
    }

    /// The buffered messages from `sender` at `rank` keep within the sender's window, or are
    /// one message (a message larger than the window goes alone: `crate::flow`), plus at most
    /// the cap when `rank` lent `sender` credit since it last held nothing of it.
    fn check_window_of(&mut self, plan: &Plan, rank: u32, sender: u32) -> Verdict {
        let (mut sum, mut largest) = (0, 0);
        for &(id, charge) in &self.buffered[rank as usize] {
            if plan.messages[id as usize].sender == sender {
                sum += charge;
                largest = largest.max(charge);
            }
        }
        if sum == 0 {
            self.loans.remove(&(rank, sender)); // every loan is repaid (`flow`'s debt <= held)
        } else if sum <= self.window.max(largest) {
        } else if !self.loans.contains(&(rank, sender)) || sum > self.window.max(largest) + self.cap
        {
            return Err(format!(
                "{sum} bytes from {sender} buffered at {rank}: above its window {}",
                self.window
            ));
        }
        Ok(())
    }
}

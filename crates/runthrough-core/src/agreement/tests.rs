// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scripted stories for the agreement state machine, driven by a tiny deterministic network.
//!
//! Each test's comment names the property it checks and where it comes from.

use std::collections::VecDeque;
use std::sync::Arc;

use super::*;
use crate::{Rank, RankSet};

/// A message in flight, with its causal depth (1 + the depth of the message that caused it).
#[derive(Debug, Clone)]
struct InFlight {
    from: Rank,
    to: Rank,
    message: Message,
    depth: usize,
}

/// n ranks on one global FIFO queue (so every link is FIFO too).
struct Net {
    ranks: Vec<Agreement>,
    alive: Vec<bool>,
    queue: VecDeque<InFlight>,
    sent: usize,
    max_depth: usize,
    log: Vec<String>,
}

impl Net {
    fn new(n: u32) -> Net {
        let participants = Arc::new(Participants::new(n, &RankSet::new()));
        Net {
            ranks: (0..n)
                .map(|r| Agreement::new(r, participants.clone()))
                .collect(),
            alive: vec![true; n as usize],
            queue: VecDeque::new(),
            sent: 0,
            max_depth: 0,
            log: Vec::new(),
        }
    }

    fn collect(&mut self, rank: Rank, depth: usize) {
        while let Some((to, message)) = self.ranks[rank as usize].poll_transmit() {
            self.log
                .push(format!("{rank}->{to} {}", describe(&message)));
            self.sent += 1;
            self.max_depth = self.max_depth.max(depth + 1);
            self.queue.push_back(InFlight {
                from: rank,
                to,
                message,
                depth: depth + 1,
            });
        }
    }

    fn start(&mut self, rank: Rank) {
        self.start_with(
            rank,
            Contribution {
                flag: u32::MAX,
                ..Contribution::default()
            },
        );
    }

    fn start_with(&mut self, rank: Rank, contribution: Contribution) {
        self.ranks[rank as usize].start(contribution);
        self.collect(rank, 0);
    }

    /// Delivers the next message; returns false when none is left.
    fn step(&mut self) -> bool {
        let Some(m) = self.queue.pop_front() else {
            return false;
        };
        if self.alive[m.to as usize] {
            self.ranks[m.to as usize].handle_message(m.from, m.message);
            self.collect(m.to, m.depth);
        }
        true
    }

    /// Delivers `count` messages (or all if fewer are queued).
    fn steps(&mut self, count: usize) {
        for _ in 0..count {
            if !self.step() {
                break;
            }
        }
    }

    fn run(&mut self) {
        let mut budget = 100_000;
        while self.step() {
            budget -= 1;
            assert!(budget > 0, "no quiescence");
        }
    }

    /// Kills `rank`: its queued messages are lost; nobody is told yet.
    fn crash(&mut self, rank: Rank) {
        self.alive[rank as usize] = false;
        self.queue.retain(|m| m.from != rank);
    }

    /// Every live rank's detector reports `dead`.
    fn detect(&mut self, dead: Rank) {
        for r in 0..self.ranks.len() as u32 {
            if self.alive[r as usize] {
                self.ranks[r as usize].handle_failure(dead);
                self.collect(r, 0);
            }
        }
    }

    fn decisions(&self) -> Vec<Option<Decision>> {
        self.ranks
            .iter()
            .zip(&self.alive)
            .map(|(r, &alive)| if alive { r.decision().cloned() } else { None })
            .collect()
    }

    /// Every live rank decided, all the same; returns the decision.
    fn agreed(&self) -> Decision {
        let live: Vec<Decision> = self
            .decisions()
            .into_iter()
            .zip(&self.alive)
            .filter(|(_, &alive)| alive)
            .map(|(d, _)| d.expect("every live rank decided"))
            .collect();
        for d in &live {
            assert_eq!(d, &live[0]);
        }
        live[0].clone()
    }
}

fn describe(message: &Message) -> String {
    match message {
        Message::Prepare { ballot } => format!("prepare b{ballot}"),
        Message::Promise { ballot, summary } => {
            format!(
                "promise b{ballot} nc={:?}",
                summary.non_contributors.as_slice()
            )
        }
        Message::Accept { ballot, value } => {
            format!("accept b{ballot} {:?}", value.failed.as_slice())
        }
        Message::Accepted { ballot } => format!("accepted b{ballot}"),
        Message::Commit { value } => format!("commit {:?}", value.failed.as_slice()),
    }
}

fn set(ranks: &[Rank]) -> RankSet {
    ranks.iter().copied().collect()
}

/// SPEC §2.1 termination, trivial case: one participant decides as soon as it starts.
#[test]
fn single_rank_decides_at_start() {
    let mut net = Net::new(1);
    net.start_with(
        0,
        Contribution {
            flag: 7,
            ..Contribution::default()
        },
    );
    assert_eq!(net.sent, 0);
    let d = net.agreed();
    assert_eq!(d.flag, 7);
    assert!(d.failed.is_empty() && !d.unacknowledged_failure);
}

/// SPEC §6 agreement cost: failure-free, 4(n-1) messages and depth 4 × the tree's depth (the
/// most set bits of an index below n: floor(log2 n) for a power of two).
#[test]
fn failure_free_costs_four_traversals_three_at_two_ranks() {
    for (n, depth) in [
        (2u32, 3usize),
        (3, 4),
        (8, 12),
        (64, 24),
        (100, 24),
        (128, 28),
    ] {
        let mut net = Net::new(n);
        for r in (0..n).rev() {
            net.start(r);
        }
        net.run();
        let d = net.agreed();
        assert!(d.failed.is_empty());
        assert_eq!(d.flag, u32::MAX);
        // Two ranks: the leaf decides on Accept (both have accepted), its Commit replaces
        // Accepted and the coordinator's Commit: 3 messages.
        let expected = if n == 2 { 3 } else { 4 * (n as usize - 1) };
        assert_eq!(net.sent, expected, "n={n}");
        assert_eq!(net.max_depth, depth, "n={n}");
    }
}

/// The exact failure-free story at n = 3: promise up, accept down, accepted up, commit down.
#[test]
fn failure_free_story_at_three() {
    let mut net = Net::new(3);
    for r in 0..3 {
        net.start(r);
    }
    net.run();
    assert_eq!(
        net.log,
        [
            "1->0 promise b0 nc=[]",
            "2->0 promise b0 nc=[]",
            "0->2 accept b0 []",
            "0->1 accept b0 []",
            "2->0 accepted b0",
            "1->0 accepted b0",
            "0->2 commit []",
            "0->1 commit []",
        ]
    );
}

/// SPEC §2.1 validity: the flag is the AND of the contributors, failures known at entry are in
/// G', and acknowledged failures do not raise `unacknowledged_failure`.
#[test]
fn contributions_are_aggregated() {
    let mut net = Net::new(5);
    net.crash(4);
    for r in 0..4 {
        net.start_with(
            r,
            Contribution {
                known_failed: if r == 2 { set(&[4]) } else { RankSet::new() },
                acknowledged: set(&[4]),
                flag: !(1 << r),
            },
        );
    }
    net.run();
    // Rank 4's children: none (4 = 0b100 has children 5, 6 which do not exist); its parent 0
    // waits for it until the detector reports it.
    assert!(net.decisions().iter().all(Option::is_none));
    net.detect(4);
    net.run();
    let d = net.agreed();
    assert_eq!(d.failed, set(&[4]));
    assert_eq!(d.non_contributors, set(&[4]));
    assert_eq!(d.flag, !0b1111);
    assert!(!d.unacknowledged_failure);
}

/// SPEC §3.5: a non-contributor missing from some contributor's L makes agree return ProcFailed.
#[test]
fn unacknowledged_non_contributor_is_flagged() {
    let mut net = Net::new(4);
    net.crash(3);
    net.detect(3);
    for r in 0..3 {
        net.start_with(
            r,
            Contribution {
                known_failed: set(&[3]),
                acknowledged: if r == 1 { RankSet::new() } else { set(&[3]) },
                flag: 1,
            },
        );
    }
    net.run();
    let d = net.agreed();
    assert_eq!(d.failed, set(&[3]));
    assert!(d.unacknowledged_failure);
}

/// SPEC §2.1 termination when the coordinator (index 0) is dead before anyone starts: rank 1
/// coordinates ballot 1 and rank 0 is a non-contributor.
#[test]
fn coordinator_dead_before_start() {
    let mut net = Net::new(8);
    net.crash(0);
    for r in 1..8 {
        net.start(r);
    }
    net.run();
    net.detect(0);
    net.run();
    let d = net.agreed();
    assert_eq!(d.failed, set(&[0]));
    assert_eq!(d.non_contributors, set(&[0]));
    for r in 1..8 {
        assert_eq!(net.ranks[r].ballot(), 1);
    }
}

/// SPEC §2.1 uniform agreement and termination: the coordinator dies after sending some of its
/// Accepts; the new coordinator must re-propose the accepted value (Paxos), not a fresh one.
#[test]
fn coordinator_dies_mid_accept() {
    let mut net = Net::new(8);
    for r in 0..8 {
        net.start(r);
    }
    // Deliver promises until rank 0 has sent its accepts (to 4, 2, 1 in that order).
    while !net
        .queue
        .iter()
        .any(|m| matches!(m.message, Message::Accept { .. }))
    {
        assert!(net.step());
    }
    // Let the first accept (to rank 4) through, then kill 0 with the others in flight.
    while !matches!(
        net.queue.front().map(|m| &m.message),
        Some(Message::Accept { .. })
    ) {
        assert!(net.step());
    }
    assert_eq!(net.queue.front().unwrap().to, 4);
    net.step();
    net.crash(0);
    net.run();
    assert!(net.decisions().iter().all(Option::is_none));
    // Ranks 4..7 accepted (0, V) with V = {} (no failure when 0 proposed).
    net.detect(0);
    net.run();
    let d = net.agreed();
    assert!(
        d.failed.is_empty(),
        "the value accepted at ballot 0 must win: {d:?}"
    );
}

/// SPEC §2.1 termination: the coordinator decides, commits to one child only, and dies; the
/// decided child spreads the commit to the others in the new tree.
#[test]
fn coordinator_dies_mid_commit() {
    let mut net = Net::new(8);
    for r in 0..8 {
        net.start(r);
    }
    while !net
        .queue
        .iter()
        .any(|m| matches!(m.message, Message::Commit { .. }))
    {
        assert!(net.step());
    }
    while !matches!(
        net.queue.front().map(|m| &m.message),
        Some(Message::Commit { .. })
    ) {
        assert!(net.step());
    }
    net.step(); // the commit to rank 4
    net.crash(0);
    net.run();
    net.detect(0);
    net.run();
    let d = net.agreed();
    assert!(
        d.failed.is_empty(),
        "rank 0 died after the decision: not in this G'"
    );
}

/// SPEC §2.1 termination: a parent dies while its children wait for it; they re-attach to
/// their grandparent, which marks the parent a non-contributor.
#[test]
fn parent_dies_with_children_waiting() {
    let mut net = Net::new(8);
    // Rank 4 has children 6 and 5 (and grandchild 7); it dies before starting.
    net.crash(4);
    for r in [0, 1, 2, 3, 5, 6, 7] {
        net.start(r);
    }
    net.run();
    assert!(net.decisions().iter().all(Option::is_none));
    // Only rank 0 learns first: it walks 4's children and waits for 6 and 5.
    net.ranks[0].handle_failure(4);
    net.collect(0, 0);
    net.run();
    assert!(net.decisions().iter().all(Option::is_none));
    // The children learn: they resend their promises to 0.
    for r in [5, 6, 7] {
        net.ranks[r].handle_failure(4);
        net.collect(r as u32, 0);
    }
    net.run();
    // 1, 2, 3 decide without ever learning of 4's failure.
    let d = net.agreed();
    assert_eq!(d.failed, set(&[4]));
    assert_eq!(d.non_contributors, set(&[4]));
}

/// SPEC §2.1 termination with a cascade: the coordinators 0, 1, 2 die one after another.
#[test]
fn cascade_of_coordinators() {
    let mut net = Net::new(8);
    for r in 0..8 {
        net.start(r);
    }
    net.steps(5);
    net.crash(0);
    net.detect(0);
    net.steps(6);
    net.crash(1);
    net.detect(1);
    net.steps(4);
    net.crash(2);
    net.detect(2);
    net.run();
    let d = net.agreed();
    assert!(d.failed.is_subset(&set(&[0, 1, 2])));
    assert!(
        set(&[2]).is_subset(&d.failed),
        "2 died before contributing to ballot 3's gather"
    );
    for r in 3..8 {
        assert_eq!(net.ranks[r].ballot(), 3);
    }
}

/// SPEC §2.1 "a rank that returned keeps answering peers still inside the same call": a
/// decided rank answers a late Promise with a Commit.
#[test]
fn decided_rank_answers_a_late_peer() {
    let participants = Arc::new(Participants::new(2, &RankSet::new()));
    let mut decided = Agreement::new(0, participants.clone());
    decided.start(Contribution::default());
    let value = Decision {
        flag: 3,
        ..Decision::default()
    };
    decided.handle_message(
        1,
        Message::Commit {
            value: value.clone(),
        },
    );
    assert_eq!(decided.decision(), Some(&value));
    assert_eq!(
        decided.poll_transmit(),
        None,
        "1 sent the commit: nothing to send back"
    );
    let mut other = Agreement::new(0, participants);
    other.start(Contribution::default());
    let mut late = Agreement::new(1, other.participants().clone());
    late.start(Contribution::default());
    let (to, promise) = late.poll_transmit().unwrap();
    assert_eq!(to, 0);
    // `other` decided through some earlier path: simulate by a commit from a third story.
    other.handle_message(1, promise);
    let (to, accept) = other.poll_transmit().unwrap();
    assert_eq!((to, accept.kind()), (1, "accept"));
    // Rank 1 never gets the accept (say it is slow); rank 0 then decides by another path.
    other.handle_message(1, Message::Accepted { ballot: 0 });
    let (to, commit) = other.poll_transmit().unwrap();
    assert_eq!((to, commit.kind()), (1, "commit"));
    // A late non-commit message from 1 gets no second commit: one is already on that link.
    other.handle_message(
        1,
        Message::Promise {
            ballot: 0,
            summary: Summary::default(),
        },
    );
    assert_eq!(other.poll_transmit(), None);
    late.handle_message(0, commit);
    assert!(late.decision().is_some());
}

/// A decided rank answers a non-commit message from a peer it has not exchanged a commit with.
#[test]
fn decided_rank_answers_unknown_sender() {
    let participants = Arc::new(Participants::new(3, &RankSet::new()));
    let mut rank2 = Agreement::new(2, participants);
    rank2.start(Contribution::default());
    rank2.poll_transmit(); // its promise to 0
    rank2.handle_message(
        0,
        Message::Commit {
            value: Decision::default(),
        },
    );
    assert_eq!(rank2.poll_transmit(), None);
    rank2.handle_message(1, Message::Prepare { ballot: 1 });
    let (to, m) = rank2.poll_transmit().unwrap();
    assert_eq!((to, m.kind()), (1, "commit"));
}

/// Messages that arrive before `start` are kept and acted on at start.
#[test]
fn messages_before_start_are_kept() {
    let participants = Arc::new(Participants::new(2, &RankSet::new()));
    let mut root = Agreement::new(0, participants);
    root.handle_message(
        1,
        Message::Promise {
            ballot: 0,
            summary: Summary {
                flag: 1,
                ..Summary::default()
            },
        },
    );
    assert_eq!(root.poll_transmit(), None);
    assert!(!root.is_started());
    root.start(Contribution {
        flag: 3,
        ..Contribution::default()
    });
    let (to, m) = root.poll_transmit().unwrap();
    assert_eq!(to, 1);
    assert_eq!(
        m,
        Message::Accept {
            ballot: 0,
            value: Decision {
                flag: 1,
                ..Decision::default()
            }
        }
    );
}

/// Participants exclude the NULL ranks of G: indices are dense, ranks keep their numbers.
#[test]
fn excluded_ranks_take_no_part() {
    let excluded = set(&[0, 3]);
    let participants = Arc::new(Participants::new(6, &excluded));
    let mut ranks: Vec<Agreement> = [1, 2, 4, 5]
        .iter()
        .map(|&r| Agreement::new(r, participants.clone()))
        .collect();
    for a in ranks.iter_mut() {
        a.start(Contribution {
            known_failed: set(&[0, 3]),
            acknowledged: set(&[0, 3]),
            flag: 1,
        });
    }
    let mut queue: VecDeque<(Rank, Rank, Message)> = VecDeque::new();
    let position = |r: Rank| [1, 2, 4, 5].iter().position(|&x| x == r).unwrap();
    loop {
        for a in ranks.iter_mut() {
            while let Some((to, m)) = a.poll_transmit() {
                assert!(participants.contains(to));
                queue.push_back((a.me(), to, m));
            }
        }
        let Some((from, to, m)) = queue.pop_front() else {
            break;
        };
        ranks[position(to)].handle_message(from, m);
    }
    for a in &ranks {
        let d = a.decision().unwrap();
        assert!(d.failed.is_empty(), "old G is not in G' minus G");
    }
}

/// Series: messages of the next call that arrive early are buffered and replayed; a decided
/// call keeps answering until the following call decides, then it is dropped.
#[test]
fn series_buffers_early_messages_and_drops_old_calls() {
    let participants = Arc::new(Participants::new(2, &RankSet::new()));
    let mut series: Vec<AgreementSeries> = (0..2).map(AgreementSeries::new).collect();
    let mut wire: VecDeque<(Rank, Rank, u64, Message)> = VecDeque::new();
    fn pump(series: &mut [AgreementSeries], wire: &mut VecDeque<(Rank, Rank, u64, Message)>) {
        for (r, s) in series.iter_mut().enumerate() {
            while let Some((to, seq, m)) = s.poll_transmit() {
                wire.push_back((r as Rank, to, seq, m));
            }
        }
    }
    // Call 0 at both ranks.
    assert_eq!(
        series[0].start(participants.clone(), Contribution::default()),
        0
    );
    assert_eq!(
        series[1].start(participants.clone(), Contribution::default()),
        0
    );
    loop {
        pump(&mut series, &mut wire);
        let Some((from, to, seq, m)) = wire.pop_front() else {
            break;
        };
        series[to as usize].handle_message(from, seq, m);
    }
    assert!(series[0].decision(0).is_some() && series[1].decision(0).is_some());
    // Rank 1 starts call 1 first: its promise reaches rank 0, which has not started call 1.
    assert_eq!(
        series[1].start(
            participants.clone(),
            Contribution {
                flag: 5,
                ..Contribution::default()
            }
        ),
        1
    );
    pump(&mut series, &mut wire);
    let (from, to, seq, m) = wire.pop_front().unwrap();
    assert_eq!((from, to, seq, m.kind()), (1, 0, 1, "promise"));
    series[0].handle_message(from, seq, m);
    pump(&mut series, &mut wire);
    assert!(wire.is_empty(), "buffered, not answered");
    assert_eq!(series[0].live_calls(), 1);
    // Call 0 is still live at rank 0 (it keeps answering late peers) until call 1 decides.
    assert!(series[0].decision(0).is_some());
    assert!(series[1].decision(0).is_some());
    // Rank 0 starts call 1: the buffered promise is replayed and call 1 completes.
    assert_eq!(
        series[0].start(
            participants.clone(),
            Contribution {
                flag: 6,
                ..Contribution::default()
            }
        ),
        1
    );
    loop {
        pump(&mut series, &mut wire);
        let Some((from, to, seq, m)) = wire.pop_front() else {
            break;
        };
        series[to as usize].handle_message(from, seq, m);
    }
    for s in &series {
        assert_eq!(s.decision(1).map(|d| d.flag), Some(4));
        assert_eq!(s.decision(0), None, "call 0 dropped once call 1 decided");
        assert_eq!(s.live_calls(), 1);
    }
    // Messages of the dropped call are ignored.
    series[0].handle_message(1, 0, Message::Prepare { ballot: 1 });
    pump(&mut series, &mut wire);
    assert!(wire.is_empty());
}

/// Series: failures reported before a call starts are known to it.
#[test]
fn series_feeds_earlier_failures_to_new_calls() {
    let participants = Arc::new(Participants::new(3, &RankSet::new()));
    let mut s = AgreementSeries::new(1);
    s.handle_failure(0);
    let seq = s.start(participants, Contribution::default());
    assert_eq!(
        s.call(seq).unwrap().ballot(),
        1,
        "rank 1 coordinates at once"
    );
    let (to, _, m) = s.poll_transmit().unwrap();
    assert_eq!((to, m.kind()), (2, "prepare"));
}

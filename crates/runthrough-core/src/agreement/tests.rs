// SPDX-License-Identifier: MIT OR Apache-2.0
//! Scripted stories for the agreement state machine, driven by a tiny deterministic network.
//!
//! Each test's comment names the property it checks and where it comes from.

use std::collections::VecDeque;
use std::sync::Arc;

use super::participants::FAST_ROUND_MAX;
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
    /// `n` ranks that run the coordinated ballots only: the stories below check those ballots
    /// message by message (the first round has its own tests, with [`Net::fast`]).
    fn new(n: u32) -> Net {
        Net::over(Participants::new(n, &RankSet::new()).coordinated_only())
    }

    /// `n` ranks whose agreements begin with the first round.
    fn fast(n: u32) -> Net {
        let participants = Participants::new(n, &RankSet::new());
        assert!(participants.fast_round());
        Net::over(participants)
    }

    fn over(participants: Participants) -> Net {
        let n = participants.len() as u32;
        let participants = Arc::new(participants);
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
        let live: Vec<Rank> = (0..self.ranks.len() as u32)
            .filter(|&r| self.alive[r as usize])
            .collect();
        self.detect_at(&live, dead);
    }

    /// The detectors of `ranks` (in that order) report `dead`.
    fn detect_at(&mut self, ranks: &[Rank], dead: Rank) {
        for &r in ranks {
            self.ranks[r as usize].handle_failure(dead);
            self.collect(r, 0);
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
        Message::Gather { round, aggregate } => {
            format!("gather r{round} flag {:#x}", aggregate.flag)
        }
        Message::Hold { round } => format!("hold r{round}"),
    }
}

fn set(ranks: &[Rank]) -> RankSet {
    ranks.iter().copied().collect()
}

/// Semantics §2.1 termination, trivial case: one participant decides as soon as it starts.
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

/// Semantics §6 agreement cost: failure-free, 4(n-1) messages and depth 4 × the tree's depth (the
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

/// Semantics §2.1 validity: the flag is the AND of the contributors, failures known at entry are in
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

/// Semantics §3.5: a non-contributor missing from some contributor's L makes agree return
/// ProcFailed.
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

/// Semantics §2.1 termination when the coordinator (index 0) is dead before anyone starts: rank 1
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

/// Semantics §2.1 uniform agreement and termination: the coordinator dies after sending some of its
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

/// Semantics §2.1 termination: the coordinator decides, commits to one child only, and dies; the
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

/// Semantics §2.1 termination: a parent dies while its children wait for it; they re-attach to
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
    net.detect_at(&[0], 4);
    net.run();
    assert!(net.decisions().iter().all(Option::is_none));
    // The children learn: they resend their promises to 0.
    net.detect_at(&[5, 6, 7], 4);
    net.run();
    // 1, 2, 3 decide without ever learning of 4's failure.
    let d = net.agreed();
    assert_eq!(d.failed, set(&[4]));
    assert_eq!(d.non_contributors, set(&[4]));
}

/// Semantics §2.1 termination with a cascade: the coordinators 0, 1, 2 die one after another.
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

/// Semantics §2.1 "a rank that returned keeps answering peers still inside the same call": a
/// decided rank answers a late Promise with a Commit.
#[test]
fn decided_rank_answers_a_late_peer() {
    let participants = Arc::new(Participants::new(2, &RankSet::new()).coordinated_only());
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
    let participants = Arc::new(Participants::new(3, &RankSet::new()).coordinated_only());
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
    let participants = Arc::new(Participants::new(2, &RankSet::new()).coordinated_only());
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
    let participants = Arc::new(Participants::new(6, &excluded).coordinated_only());
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
    let participants = Arc::new(Participants::new(2, &RankSet::new()).coordinated_only());
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
    let participants = Arc::new(Participants::new(3, &RankSet::new()).coordinated_only());
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

// ----- the coordinator-free first round -----

/// Number of dissemination rounds of each pass of the first round.
/// Starts `ranks` in that order, each contributing a flag with every bit but its own.
fn start_without_own_bits(net: &mut Net, ranks: impl Iterator<Item = Rank>) {
    for r in ranks {
        net.start_with(
            r,
            Contribution {
                flag: !(1 << r),
                ..Contribution::default()
            },
        );
    }
}

fn rounds(n: u32) -> usize {
    (u32::BITS - (n - 1).leading_zeros()) as usize
}

/// Semantics §6 agreement cost, first round: failure-free, every rank sends one gather and one hold
/// per round, 2 n ceil(log2 n) messages, and the longest causal chain is 2 ceil(log2 n) (two
/// one-way delays at two ranks, against three for the coordinated ballots); no commit. The
/// decision carries the AND of every contribution's flag at every rank. Above
/// `FAST_ROUND_MAX` participants the coordinated ballots run from the start.
#[test]
fn failure_free_first_round_costs_two_passes_of_dissemination() {
    for n in [2u32, 3, 4, 5, 7, 8, 13, 16, 31, 32] {
        let mut net = Net::fast(n);
        start_without_own_bits(&mut net, (0..n).rev());
        net.run();
        let d = net.agreed();
        assert!(d.failed.is_empty() && d.non_contributors.is_empty());
        assert!(!d.unacknowledged_failure);
        let everyone = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        assert_eq!(d.flag, !everyone);
        assert_eq!(net.sent, 2 * n as usize * rounds(n), "n={n}");
        assert_eq!(net.max_depth, 2 * rounds(n), "n={n}");
        assert!(
            !net.log.iter().any(|l| l.contains("commit")),
            "n={n}: {:?}",
            net.log
        );
    }
    let above = Participants::new(FAST_ROUND_MAX as u32 + 1, &RankSet::new());
    assert!(!above.fast_round());
    let mut net = Net::over(above);
    for r in 0..=FAST_ROUND_MAX as u32 {
        net.start(r);
    }
    net.run();
    net.agreed();
    assert_eq!(net.sent, 4 * FAST_ROUND_MAX);
    // One participant decides alone, at once, with or without the first round.
    assert!(!Participants::new(1, &RankSet::new()).fast_round());
}

/// The exact failure-free story at n = 4: a butterfly, partners i XOR 1 then i XOR 2.
#[test]
fn first_round_story_at_four() {
    let mut net = Net::fast(4);
    for r in 0..4 {
        net.start(r);
    }
    net.run();
    let gathers: Vec<&str> = net.log.iter().take(8).map(String::as_str).collect();
    assert_eq!(
        gathers,
        [
            "0->1 gather r0 flag 0xffffffff",
            "1->0 gather r0 flag 0xffffffff",
            "2->3 gather r0 flag 0xffffffff",
            "3->2 gather r0 flag 0xffffffff",
            "1->3 gather r1 flag 0xffffffff",
            "0->2 gather r1 flag 0xffffffff",
            "3->1 gather r1 flag 0xffffffff",
            "2->0 gather r1 flag 0xffffffff",
        ]
    );
    let holds: Vec<&str> = net.log.iter().skip(8).map(String::as_str).collect();
    assert_eq!(
        holds,
        [
            "3->2 hold r0",
            "2->3 hold r0",
            "1->0 hold r0",
            "0->1 hold r0",
            "2->0 hold r1",
            "3->1 hold r1",
            "0->2 hold r1",
            "1->3 hold r1",
        ]
    );
}

/// The exact failure-free story at n = 3 (not a power of two: dissemination): gathers to i+1
/// then i+2, holds likewise.
#[test]
fn first_round_story_at_three() {
    let mut net = Net::fast(3);
    for r in 0..3 {
        net.start(r);
    }
    net.run();
    assert_eq!(
        net.log,
        [
            "0->1 gather r0 flag 0xffffffff",
            "1->2 gather r0 flag 0xffffffff",
            "2->0 gather r0 flag 0xffffffff",
            "1->0 gather r1 flag 0xffffffff",
            "2->1 gather r1 flag 0xffffffff",
            "0->2 gather r1 flag 0xffffffff",
            "0->1 hold r0",
            "1->2 hold r0",
            "2->0 hold r0",
            "1->0 hold r1",
            "2->1 hold r1",
            "0->2 hold r1",
        ]
    );
}

/// Semantics §2.1 uniform agreement across the two protocols: a rank decides in the first round and
/// dies at once, its last holds lost; the survivors, which had not all decided, finish in the
/// coordinated ballots and must decide what it decided (everyone held that value: the new
/// coordinator's gather reports it), not a fresh value naming the dead rank.
#[test]
fn a_rank_that_decided_in_the_first_round_and_died_decided_what_survivors_decide() {
    for n in [2u32, 3, 4, 8, 13] {
        for victim_rank in 0..n {
            let mut net = Net::fast(n);
            for r in 0..n {
                net.start(r);
            }
            while net.ranks[victim_rank as usize].decision().is_none() {
                assert!(net.step(), "n={n}: {victim_rank} decides");
            }
            let decided = net.ranks[victim_rank as usize].decision().cloned().unwrap();
            let undecided = (0..n)
                .filter(|&r| net.ranks[r as usize].decision().is_none())
                .count();
            net.crash(victim_rank);
            net.run();
            net.detect(victim_rank);
            net.run();
            let d = net.agreed();
            assert_eq!(
                d, decided,
                "n={n} victim={victim_rank} ({undecided} undecided)"
            );
            assert!(d.failed.is_empty());
        }
    }
}

/// `n` participants in host classes `class(index)`, whose agreements begin with the first
/// round over those hosts (when they group anything).
fn over_hosts(n: u32, class: impl Fn(u32) -> u32) -> Participants {
    let classes: Vec<u32> = (0..n).map(class).collect();
    let groups = crate::engine::HostGroups::new(&classes).map(Arc::new);
    Participants::new(n, &RankSet::new()).with_hosts(groups)
}

/// The messages of one pass of the first round over `participants`: one per send of the
/// barrier's plan.
fn pass_messages(participants: &Participants) -> usize {
    let n = participants.len();
    (0..n)
        .map(|i| {
            let mut sends = 0;
            crate::engine::barrier_steps(n, i, participants.hosts(), |step| {
                sends += usize::from(matches!(step, crate::engine::BarrierStep::Send(_)));
                Ok(())
            })
            .unwrap();
            sends
        })
        .sum()
}

/// The first round over hosts: its passes go up to each host's leader, among the leaders and
/// back down (the barrier's plan), so failure-free it sends two passes of that plan's
/// messages, crossing between hosts only between leaders, and decides the AND of every flag,
/// with no commit. A rank that decided there and died decided what the survivors decide, for
/// every victim (a leader or not), as over the butterfly.
#[test]
fn the_first_round_over_hosts_decides_alike_and_a_decided_victim_binds_the_survivors() {
    type Layout = (&'static str, fn(u32) -> u32);
    let layouts: [Layout; 3] = [
        ("blocks of 3", |i| i / 3),
        ("round robin over 2", |i| i % 2),
        ("uneven", |i| if i < 5 { 0 } else { i % 3 + 1 }),
    ];
    for n in [3u32, 4, 6, 8, 9, 13] {
        for (name, class) in layouts {
            let participants = over_hosts(n, class);
            if participants.hosts().is_none() {
                continue;
            }
            let messages = 2 * pass_messages(&participants);
            let mut net = Net::over(participants.clone());
            start_without_own_bits(&mut net, 0..n);
            net.run();
            let d = net.agreed();
            assert_eq!(d.flag, !((1u32 << n) - 1), "n={n} {name}");
            assert_eq!(net.sent, messages, "n={n} {name}");
            assert!(
                !net.log.iter().any(|l| l.contains("commit")),
                "n={n} {name}"
            );
            for victim in 0..n {
                let mut net = Net::over(participants.clone());
                for r in 0..n {
                    net.start(r);
                }
                while net.ranks[victim as usize].decision().is_none() {
                    assert!(net.step(), "n={n} {name}: {victim} decides");
                }
                let decided = net.ranks[victim as usize].decision().cloned().unwrap();
                net.crash(victim);
                net.run();
                net.detect(victim);
                net.run();
                assert_eq!(net.agreed(), decided, "n={n} {name} victim={victim}");
            }
        }
    }
}

/// A peer's first-round message that its plan over hosts does not send to this rank (a rank
/// of another host, or the wrong count of sends before it) is ignored: it neither changes the
/// value nor counts as a hold, before or after the start.
#[test]
fn first_round_messages_off_the_plan_over_hosts_are_ignored() {
    // Hosts of three: leaders 0 and 3; rank 1 is 0's child, rank 4 is on the other host.
    let participants = over_hosts(6, |i| i / 3);
    assert!(participants.hosts().is_some());
    let messages = 2 * pass_messages(&participants);
    let mut net = Net::over(participants);
    let zero = |flag| Message::Gather {
        round: 0,
        aggregate: Contribution {
            flag,
            ..Contribution::default()
        },
    };
    // Before the start: a gather from a rank that never sends to 0, a hold and a gather from
    // its child with a count of sends its child's plan does not have.
    net.ranks[0].handle_message(4, zero(0));
    net.ranks[0].handle_message(1, Message::Hold { round: 3 });
    net.ranks[0].handle_message(
        1,
        Message::Gather {
            round: 2,
            aggregate: Contribution::default(),
        },
    );
    assert_eq!(net.ranks[0].poll_transmit(), None);
    start_without_own_bits(&mut net, 0..6);
    // After the start, the same from the other host's leader, whose plan sends to 0 only once.
    net.ranks[0].handle_message(3, Message::Hold { round: 5 });
    net.ranks[0].handle_message(4, Message::Hold { round: 0 });
    net.run();
    assert_eq!(net.agreed().flag, !0b11_1111);
    assert_eq!(net.sent, messages);
}

/// Semantics §2.1 validity and termination: a rank dies in the middle of the gather pass (before
/// any rank holds a value); the others cannot finish the first round, leave it when they learn of
/// the failure, and decide in the coordinated ballots with the dead rank failed.
#[test]
fn a_death_in_the_gather_pass_ends_in_the_coordinated_ballots() {
    for n in [2u32, 3, 5, 8] {
        for victim in 0..n {
            let mut net = Net::fast(n);
            for r in 0..n {
                if r != victim {
                    net.start(r);
                }
            }
            net.run();
            assert!(
                net.decisions().iter().all(Option::is_none),
                "n={n}: nobody decides without {victim}"
            );
            net.crash(victim);
            net.detect(victim);
            net.run();
            let d = net.agreed();
            assert_eq!(d.failed, set(&[victim]), "n={n}");
            assert_eq!(d.non_contributors, set(&[victim]));
        }
    }
}

/// Liveness without the detector's help: a few ranks learn of a failure and leave the first
/// round; their promises and Prepares (at ballot 0 too) bring the others out, and everybody
/// decides although ranks 1, 2, 4 and 5 never learn (the coordinated ballots need the
/// coordinator and the dead rank's parent in the tree, 6, to learn, as they always did).
#[test]
fn leaving_the_first_round_brings_the_others_along() {
    let n = 8;
    let mut net = Net::fast(n);
    // Rank 7 dies after sending its first gather only.
    for r in 0..n {
        net.start(r);
    }
    net.queue
        .retain(|m| m.from != 7 || m.message.kind() == "gather");
    net.crash(7);
    net.run();
    assert!(net.decisions().iter().all(Option::is_none));
    // Only ranks 3, then 0 (the coordinator) and 6 learn.
    net.detect_at(&[3, 0, 6], 7);
    net.run();
    let d = net.agreed();
    assert_eq!(d.failed, set(&[7]));
}

/// Messages of the first round that arrive before `start` are kept; messages from the wrong
/// partner, of a round that does not exist, or repeated, change nothing.
#[test]
fn first_round_messages_before_start_are_kept_and_strays_ignored() {
    let participants = Arc::new(Participants::new(2, &RankSet::new()));
    let mut zero = Agreement::new(0, participants.clone());
    let mut one = Agreement::new(1, participants.clone());
    one.start(Contribution {
        flag: 6,
        ..Contribution::default()
    });
    let (to, gather) = one.poll_transmit().unwrap();
    assert_eq!((to, gather.kind()), (0, "gather"));
    zero.handle_message(1, gather.clone());
    zero.handle_message(1, Message::Hold { round: 5 });
    zero.handle_message(
        1,
        Message::Gather {
            round: 1,
            aggregate: Contribution::default(),
        },
    );
    assert_eq!(zero.poll_transmit(), None);
    zero.start(Contribution {
        flag: 3,
        ..Contribution::default()
    });
    // Its own gather, then (holding the value) its hold.
    let sent: Vec<_> = std::iter::from_fn(|| zero.poll_transmit()).collect();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].1.kind(), "gather");
    assert_eq!(sent[1].1, Message::Hold { round: 0 });
    // A repeated gather with another flag does not change the held value.
    zero.handle_message(
        1,
        Message::Gather {
            round: 0,
            aggregate: Contribution::default(),
        },
    );
    for (_, m) in sent {
        one.handle_message(0, m);
    }
    let (_, hold) = one.poll_transmit().unwrap();
    zero.handle_message(1, hold);
    assert_eq!(zero.decision().map(|d| d.flag), Some(2));
    assert_eq!(one.decision().map(|d| d.flag), Some(2));
    // A third participant's gather at a two-rank agreement is not a participant's: ignored.
    let mut three = Agreement::new(2, Arc::new(Participants::new(3, &RankSet::new())));
    three.start(Contribution::default());
    three.poll_transmit();
    three.handle_message(
        0,
        Message::Gather {
            round: 0,
            aggregate: Contribution::default(),
        },
    );
    assert_eq!(three.poll_transmit(), None, "0 is not 2's round-0 sender");
}

/// A rank that left the first round answers a first-round message with a `Prepare` (once per
/// sender), so that its sender leaves now rather than when its own detector tells it.
#[test]
fn a_rank_outside_the_first_round_answers_a_gather_with_a_prepare() {
    let participants = Arc::new(Participants::new(4, &RankSet::new()));
    let mut rank1 = Agreement::new(1, participants);
    rank1.start(Contribution::default());
    assert_eq!(
        rank1.poll_transmit().map(|(to, m)| (to, m.kind())),
        Some((0, "gather"))
    );
    rank1.handle_failure(3);
    // It left: its promise goes to its parent, 0; nothing else (0 is alive).
    let sent: Vec<_> = std::iter::from_fn(|| rank1.poll_transmit()).collect();
    assert!(sent
        .iter()
        .all(|(_, m)| m.kind() != "gather" && m.kind() != "hold"));
    rank1.handle_message(
        0,
        Message::Gather {
            round: 0,
            aggregate: Contribution::default(),
        },
    );
    assert_eq!(
        rank1.poll_transmit(),
        Some((0, Message::Prepare { ballot: 0 }))
    );
    rank1.handle_message(0, Message::Hold { round: 0 });
    assert_eq!(rank1.poll_transmit(), None, "once per sender");
}

/// A rank falsely suspected by the others (fenced while alive) may still receive messages of a
/// ballot above its own index, or send first-round messages to a rank at such a ballot: it is
/// never told of that ballot (it would be asked to coordinate a tree that starts above it),
/// and a message of such a ballot changes nothing at it. Found by `simulate_ulfm`'s seed 88
/// with a false suspicion: an arithmetic overflow in the tree walk.
#[test]
fn a_rank_below_the_ballot_takes_no_part_in_it() {
    let participants = Arc::new(Participants::new(4, &RankSet::new()));
    // Rank 2 learns of ballot 1 (index 0 failed, it is told) and leaves the first round.
    let mut rank2 = Agreement::new(2, participants.clone());
    rank2.start(Contribution::default());
    rank2.poll_transmit();
    rank2.handle_message(1, Message::Prepare { ballot: 1 });
    assert_eq!(rank2.ballot(), 1);
    std::iter::from_fn(|| rank2.poll_transmit()).for_each(drop);
    // Rank 0, alive but suspected, sends it a first-round message: no Prepare of ballot 1.
    rank2.handle_message(0, Message::Hold { round: 1 });
    assert_eq!(rank2.poll_transmit(), None);
    // Rank 0 itself, told of ballot 2 by a peer, ignores it (and does not panic).
    let mut rank0 = Agreement::new(0, participants);
    rank0.start(Contribution::default());
    rank0.poll_transmit();
    rank0.handle_message(3, Message::Prepare { ballot: 2 });
    assert_eq!(rank0.ballot(), 0);
    assert_eq!(rank0.poll_transmit(), None);
}

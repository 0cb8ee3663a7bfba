// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated application: a plan of rounds drawn from the seed, deadlock-free by
//! construction, and each rank's program as a resumable state machine over the engine's
//! commands (post, then poll, one command a step), handling failures as semantics §3 says.
//!
//! Rounds: (a) point-to-point messages, each rank sending all its messages of the round (waiting
//! for credit in the engine's queues), then receiving its own in an order that keeps each
//! sender's order (one blocking receive after the other, or all posted first and then polled,
//! as irecvs), then waiting for its queued sends; (b) an all-reduce (sum of one u64) run on
//! the collective commands over the OK ranks of G: gather to participant 0, which sends the sum
//! back (it must succeed unless a participant crashed); (b') one to four non-blocking
//! collectives (`ibarrier`, `ibroadcast`, `iall_reduce`, `igather`, `iscatter`,
//! `iall_gather`, `ialltoall`, `iscan`, `iexscan`: schedules the engine runs by itself)
//! started back to back and waited for in a random order, each result checked against the
//! sequential reference over the OK ranks of G; (c) `validate_local`; (d)
//! `validate_global` (claim, start, poll until decided, install the decided G, end), after
//! which sends, receives and probes naming a rank of G complete as `MPI_PROC_NULL`; (e) `agree`
//! with a random flag per rank; (f) two or three `iagree`s started back to back (each queued
//! behind the undecided one before it), maybe with a blocking `validate_global` or `agree`
//! between them, then waited for in a random order; (g) in some schedules, as the last round,
//! one rank revokes the world while the others wait for a message from it that never comes.
//!
//! Receives that could match more than one message of the plan would make the program's
//! outcome depend on the interleaving (and could leave a receive without a message), so each
//! receive matches exactly its intended message while the senders live: a receive names its
//! sender (with its tag, or `Any` tag when receives go one at a time) and takes each sender's
//! messages in the sender's order, or names `Any` source only with a tag that no other message
//! of the round to that receiver has (tags are distinct between rounds).
//!
//! Failures, as semantics §3.1–3.2 say: `ProcFailed` from a named sender means that message is lost
//! (skipped); `ProcFailedPending` on a wildcard (returned, or reported while it waits) is
//! acknowledged with `validate_local`, then the receive is retried (or kept posted); a wildcard
//! receive whose own sender is acknowledged failed names its sender instead, since no pending
//! failure would stop it any more.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use runthrough_core::engine::{
    verdict, Agreed, AgreementCall, AgreementCallId, Creation, Decided, Engine, Hold, Installed,
    Output, Posted, ReceivePoll, Reduction, Schedule, Started, Verdict, EXCHANGE_OK,
};
use runthrough_core::flow;
use runthrough_core::matching::{SourceSelector, TagSelector};
use runthrough_core::packet::{ContextId, Lane, Outgoing, Packet, Payload, WORLD_CONTEXT};
use runthrough_core::{Error, FailureView, RankSet, Result, WorldRank};

use super::checks::Checker;
use super::run::Trace;

/// The tag of the revocation round's receives: no message of the plan has it.
pub const REVOKE_TAG: i32 = i32::MAX - 1;

/// The most padding bytes an all-reduce's messages carry.
pub const MAX_PAD: usize = 1500;

/// Distinct tags per round: round `r` uses `r * TAGS_PER_ROUND ..`.
const TAGS_PER_ROUND: i32 = 64;

/// One planned point-to-point message; its id is its index in [`Plan::messages`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// World rank of the sender.
    pub sender: u32,
    /// World rank of the receiver.
    pub receiver: u32,
    /// The tag.
    pub tag: i32,
    /// Bytes after the 8-byte head (sender, id).
    pub extra: usize,
    /// The receive names `Any` source (only with a tag unique in its round at the receiver).
    pub any_source: bool,
    /// The receive names `Any` tag (only with an exact source).
    pub any_tag: bool,
}

/// One round of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Round {
    /// Point-to-point messages.
    PointToPoint,
    /// An all-reduce (sum of one u64 each); its messages carry `pad` more bytes, so that
    /// collective traffic meets flow control too.
    AllReduce {
        /// Bytes after the value in every message of the call.
        pad: usize,
    },
    /// `validate_local` at every rank.
    ValidateLocal,
    /// `validate_global` at every rank (blocking): later all-reduces run over the OK ranks
    /// of the new G.
    ValidateGlobal,
    /// `agree` (blocking) with a random flag at every rank.
    Agree,
    /// `iagree`s started back to back (with maybe a blocking `validate_global` or `agree`
    /// between them), then waited for in a random order at each rank.
    IAgrees {
        /// The calls, in order.
        ops: Vec<AgreeOp>,
    },
    /// `dup` of the world at every rank (the creation protocol: a candidate context id, the
    /// creation series' agreement, its verdict, retries), then `free` of the new communicator.
    Dup,
    /// `split` of the world at every rank with the colors and keys given (the creation
    /// protocol as for `Dup`, each color its own candidate context id; `None`: `MPI_UNDEFINED`),
    /// then `free` of the new communicators. The exchange of colors and keys is not
    /// simulated: every participant's table is the plan's, less the ranks of its G at entry,
    /// as when the exchange succeeds everywhere (a failed exchange clears the decision's
    /// exchange bit, the path `Dup` rounds reach through a participant's entry check).
    Split {
        /// Each world rank's color.
        colors: Vec<Option<u32>>,
        /// Each world rank's key.
        keys: Vec<i32>,
    },
    /// `shrink` of the world at every rank (a candidate context id, an agreement of the main
    /// series, the survivors it decides), then `free` of the new communicator.
    Shrink,
    /// Non-blocking collectives started back to back (schedules the engine runs by itself),
    /// then waited for in a random order at each rank.
    Schedules {
        /// The calls, in order.
        ops: Vec<ScheduleOp>,
    },
    /// `by` revokes the world; the others wait for it to reach them (the last round).
    Revoke {
        /// The revoking rank.
        by: u32,
    },
}

/// One call of an [`Round::IAgrees`] round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgreeOp {
    /// `iagree` with a random flag, waited for after the round's last call.
    IAgree,
    /// A blocking `validate_global` (queued behind the pending `iagree`s).
    ValidateGlobal,
    /// A blocking `agree` (queued behind the pending `iagree`s).
    Agree,
}

/// One call of a [`Round::Schedules`] round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleOp {
    /// `iall_reduce`: the sum of one u64 each (the round's contribution plus the call's
    /// index), its messages carrying `pad` more bytes.
    AllReduce {
        /// Bytes after the value.
        pad: usize,
    },
    /// `ibarrier`.
    Barrier,
    /// `ibroadcast` of the root's contribution (plus the call's index) from the participant
    /// at `root` modulo their number.
    Broadcast {
        /// The root's position among the participants (modulo their number).
        root: usize,
    },
    /// `igather` of each participant's value to the participant at `root` (modulo).
    Gather {
        /// The root's position among the participants (modulo their number).
        root: usize,
    },
    /// `iscatter` from the participant at `root` (modulo) of a block per participant.
    Scatter {
        /// The root's position among the participants (modulo their number).
        root: usize,
    },
    /// `iall_gather` of each participant's value.
    AllGather,
    /// `ialltoall`: a block from each participant to each.
    AllToAll,
    /// `iscan` (`exclusive` false) or `iexscan`: the sum of the values of the participants
    /// up to this one (or below it).
    Scan {
        /// Whether this rank's own value is left out.
        exclusive: bool,
    },
}

/// Everything a schedule's programs and faults are, drawn from its seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Number of ranks.
    pub ranks: u32,
    /// The unexpected-bytes cap of every rank.
    pub cap: usize,
    /// The rounds, in order.
    pub rounds: Vec<Round>,
    /// Every point-to-point message, in each sender's order.
    pub messages: Vec<Message>,
    /// By rank, by round: the ids of the messages it sends, in order.
    pub sends: Vec<Vec<Vec<u32>>>,
    /// By rank, by round: the ids of the messages it receives, in order.
    pub receives: Vec<Vec<Vec<u32>>>,
    /// The scheduler steps at which a (random live) rank is killed.
    pub crash_steps: Vec<u64>,
    /// Each survivor's detector reports each crash after 1..=this many steps.
    pub max_detect_delay: u64,
    /// Probability (per mille) that the scheduler delivers rather than steps a rank.
    pub deliver_per_mille: u32,
}

impl Plan {
    /// The plan of `rng`'s seed over `ranks` ranks.
    /// With `any_order`, each receiver takes its messages of a round in any order (each
    /// receive names its message's tag, unique in the round at that receiver).
    pub fn random(rng: &mut ChaCha8Rng, ranks: u32, any_order: bool) -> Self {
        let n = ranks;
        let cap = *[4096usize, 6144, 8192, 16384]
            .choose(rng)
            .expect("not empty");
        let round_count = rng.gen_range(2..=8);
        let mut rounds = Vec::new();
        for _ in 0..round_count {
            let pick = rng.gen_range(0..100);
            if !any_order && pick >= 45 {
                // Agreement rounds (not in `any_order` exploration, whose known stuck seeds
                // are kept as they were).
                rounds.push(if (58..65).contains(&pick) {
                    let count = rng.gen_range(1..=4);
                    let ops = (0..count)
                        .map(|_| match rng.gen_range(0..7) {
                            0 => ScheduleOp::Barrier,
                            1 => ScheduleOp::Broadcast {
                                root: rng.gen_range(0..n as usize),
                            },
                            2 => ScheduleOp::Gather {
                                root: rng.gen_range(0..n as usize),
                            },
                            3 => ScheduleOp::Scatter {
                                root: rng.gen_range(0..n as usize),
                            },
                            4 => ScheduleOp::AllGather,
                            5 => ScheduleOp::AllToAll,
                            6 if rng.gen_bool(0.5) => ScheduleOp::Scan {
                                exclusive: rng.gen_bool(0.5),
                            },
                            _ => ScheduleOp::AllReduce {
                                pad: if rng.gen_bool(0.5) {
                                    0
                                } else {
                                    rng.gen_range(0..MAX_PAD)
                                },
                            },
                        })
                        .collect();
                    Round::Schedules { ops }
                } else if pick < 65 {
                    Round::AllReduce {
                        pad: if rng.gen_bool(0.5) {
                            0
                        } else {
                            rng.gen_range(0..MAX_PAD)
                        },
                    }
                } else if pick < 72 {
                    Round::ValidateLocal
                } else if pick < 82 {
                    Round::ValidateGlobal
                } else if pick < 90 {
                    Round::Agree
                } else if pick < 93 {
                    if rng.gen_bool(0.5) {
                        Round::Dup
                    } else {
                        Round::Split {
                            colors: (0..n)
                                .map(|_| (!rng.gen_bool(0.125)).then(|| rng.gen_range(0..3)))
                                .collect(),
                            keys: (0..n).map(|_| rng.gen_range(-2..3)).collect(),
                        }
                    }
                } else if pick < 96 {
                    Round::Shrink
                } else {
                    let count = rng.gen_range(2..=3);
                    let mut ops = vec![AgreeOp::IAgree; count];
                    match rng.gen_range(0..5) {
                        0 | 1 => ops.insert(rng.gen_range(1..count), AgreeOp::ValidateGlobal),
                        2 => ops.insert(rng.gen_range(1..count), AgreeOp::Agree),
                        _ => {}
                    }
                    Round::IAgrees { ops }
                });
                if matches!(
                    rounds.last(),
                    Some(Round::ValidateGlobal | Round::IAgrees { .. })
                ) && rng.gen_bool(0.5)
                {
                    rounds.push(Round::AllReduce { pad: 0 });
                }
                continue;
            }
            rounds.push(if pick < 60 {
                Round::PointToPoint
            } else if pick < 85 {
                Round::AllReduce {
                    pad: if rng.gen_bool(0.5) {
                        0
                    } else {
                        rng.gen_range(0..MAX_PAD)
                    },
                }
            } else {
                Round::ValidateLocal
            });
        }
        if rng.gen_bool(0.2) {
            rounds.push(Round::Revoke {
                by: rng.gen_range(0..n),
            });
        }
        let mut messages = Vec::new();
        let mut sends = vec![vec![Vec::new(); rounds.len()]; n as usize];
        let mut receives = vec![vec![Vec::new(); rounds.len()]; n as usize];
        for (r, round) in rounds.iter().enumerate() {
            if *round != Round::PointToPoint {
                continue;
            }
            let count = rng
                .gen_range(1..=3 * n as usize)
                .min(TAGS_PER_ROUND as usize);
            let first = messages.len();
            // In any order, what one sender sends one receiver in a round stays within the cap:
            // a receiver holds at most a window plus the cap of one sender's messages (flow
            // control's loans), so a round that needs more held to receive out of order would
            // wait, as documented (`runthrough_core::flow`, "Loans").
            let mut pair_total: std::collections::BTreeMap<(u32, u32), u64> = Default::default();
            for _ in 0..count {
                let sender = rng.gen_range(0..n);
                let receiver = (sender + rng.gen_range(1..n)) % n;
                let mut extra = if rng.gen_bool(0.3) {
                    rng.gen_range(0..3000)
                } else {
                    rng.gen_range(0..64)
                };
                if any_order {
                    let total = pair_total.entry((sender, receiver)).or_default();
                    if *total + flow::charge(8 + extra) > cap as u64 {
                        extra = 0;
                    }
                    if *total + flow::charge(8 + extra) > cap as u64 {
                        continue;
                    }
                    *total += flow::charge(8 + extra);
                }
                let tag = if any_order {
                    r as i32 * TAGS_PER_ROUND + (messages.len() - first) as i32
                } else {
                    r as i32 * TAGS_PER_ROUND + rng.gen_range(0..4)
                };
                let id = messages.len() as u32;
                sends[sender as usize][r].push(id);
                messages.push(Message {
                    sender,
                    receiver,
                    tag,
                    extra,
                    any_source: false,
                    any_tag: false,
                });
            }
            for receiver in 0..n {
                let mine: Vec<u32> = (first..messages.len())
                    .filter(|&id| messages[id].receiver == receiver)
                    .map(|id| id as u32)
                    .collect();
                // Selectors: a unique tag may go with Any source; otherwise maybe Any tag.
                for &id in &mine {
                    let tag = messages[id as usize].tag;
                    let unique = mine
                        .iter()
                        .filter(|&&o| messages[o as usize].tag == tag)
                        .count()
                        == 1;
                    if unique && rng.gen_bool(0.5) {
                        messages[id as usize].any_source = true;
                    } else if !any_order && rng.gen_bool(0.3) {
                        messages[id as usize].any_tag = true;
                    }
                }
                // A random merge of the senders' sequences.
                let mut queues: Vec<std::collections::VecDeque<u32>> =
                    vec![Default::default(); n as usize];
                for &id in &mine {
                    queues[messages[id as usize].sender as usize].push_back(id);
                }
                let mut order = Vec::with_capacity(mine.len());
                while order.len() < mine.len() {
                    let ready: Vec<usize> =
                        (0..n as usize).filter(|&s| !queues[s].is_empty()).collect();
                    let s = *ready.choose(rng).expect("messages remain");
                    order.push(queues[s].pop_front().expect("not empty"));
                }
                if any_order {
                    order.shuffle(rng);
                }
                receives[receiver as usize][r] = order;
            }
        }
        let crashes = match rng.gen_range(0..10) {
            0..=4 => 0,
            5..=7 => 1,
            _ => rng.gen_range(1..n),
        };
        let horizon = 4 * messages.len() as u64 + 6 * u64::from(n) * rounds.len() as u64 + 10;
        let mut crash_steps: Vec<u64> = (0..crashes).map(|_| rng.gen_range(1..horizon)).collect();
        crash_steps.sort_unstable();
        let max_detect_delay = *[3u64, 30, 300, 3000].choose(rng).expect("not empty");
        let deliver_per_mille = rng.gen_range(200..800);
        Plan {
            ranks,
            cap,
            rounds,
            messages,
            sends,
            receives,
            crash_steps,
            max_detect_delay,
            deliver_per_mille,
        }
    }
}

/// The bytes of message `id`: (sender, id) little-endian, then `extra` bytes of a pattern.
pub fn payload_of(plan: &Plan, id: u32) -> Payload {
    let message = &plan.messages[id as usize];
    let mut payload = Vec::with_capacity(8 + message.extra);
    payload.extend_from_slice(&message.sender.to_le_bytes());
    payload.extend_from_slice(&id.to_le_bytes());
    payload.extend((0..message.extra).map(|i| (id as usize * 31 + i) as u8));
    payload
}

/// (sender, id) of a message's bytes.
pub fn decode(payload: &[u8]) -> Option<(u32, u32)> {
    let head = payload.get(..8)?;
    let sender = u32::from_le_bytes(head[..4].try_into().ok()?);
    let id = u32::from_le_bytes(head[4..].try_into().ok()?);
    Some((sender, id))
}

/// What rank `rank` contributes to the all-reduce of round `round`.
pub fn contribution(round: usize, rank: u32) -> u64 {
    (u64::from(rank) + 1) * 1_000_003 + round as u64 * 7919
}

/// What a rank's step sees: its engine, the ledger, where its packets go, the run's randomness.
pub struct Ctx<'a> {
    /// This rank's world rank.
    pub me: u32,
    /// The plan.
    pub plan: &'a Plan,
    /// This rank's engine.
    pub engine: &'a mut Engine,
    /// The ledger.
    pub checker: &'a mut Checker,
    /// Packets this step transmits.
    pub out: &'a mut Outgoing,
    /// The run's randomness (program choices).
    pub rng: &'a mut ChaCha8Rng,
    /// The trace.
    pub trace: &'a mut Trace,
}

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Every round done.
    Completed,
    /// The world was revoked under it.
    Revoked,
    /// It waited in the revocation round for a revoker that failed first.
    RevokerFailed,
}

#[derive(Debug, Clone, Copy)]
enum RecvSlot {
    /// To start (again); `exact`: a wildcard receive falls back to naming its sender (whose
    /// failure it acknowledged).
    Idle { exact: bool },
    /// Posted as receive `rid`.
    Posted {
        rid: u64,
        source: SourceSelector,
        tag: TagSelector,
    },
    /// Finished (a message, or its sender's failure).
    Done,
}

#[derive(Debug)]
enum Phase {
    Begin,
    Send {
        next: usize,
    },
    Receive {
        /// The round's receives, in the program's order.
        slots: Vec<RecvSlot>,
        /// The first receive not started yet.
        next_start: usize,
        /// How many receives may be unfinished at once: 1 (blocking receives, one after the
        /// other) or all of them (irecvs posted in order, then polled).
        window: usize,
    },
    AwaitSends,
    /// A blocking all-reduce: its schedule, which this rank's poll advances (as the
    /// runtime's blocking calls do: `Hold::Caller`).
    Reduce {
        id: u64,
        pad: usize,
    },
    RevokeWait {
        posted: Option<u64>,
    },
    /// An agreement round's calls.
    Agreements {
        ops: Vec<AgreeOp>,
        /// The next call to make.
        next: usize,
        /// The `iagree`s started and not waited for yet (shuffled once all are started).
        pending: Vec<AgreementCallId>,
        /// The blocking call waited for, and its agreement's number.
        blocking: Option<(AgreementCallId, u64, AgreeOp)>,
        shuffled: bool,
    },
    /// A `dup` or `split` round: its creation calls, and G at their start. A `dup` round
    /// runs two dups at once (`MPI_Comm_idup` twice: the second pending behind the first),
    /// polled in an order of the rank's own (odd ranks ask for the second first); a `split`
    /// round runs one.
    Creating {
        /// `None` for a call refused at its start (its outcome is in `ended`).
        calls: Vec<Option<AgreementCallId>>,
        /// Each call's outcome, once it returned.
        ended: Vec<Option<Result<Option<Installed>>>>,
        global: RankSet,
    },
    /// A round of non-blocking collectives: (schedule id, op index) of those started and
    /// not waited for yet (shuffled once all are started).
    Schedules {
        pending: Vec<(u64, usize)>,
        shuffled: bool,
    },
    /// A `shrink` round: the call, and the number of the agreement it waits for.
    Shrinking {
        id: AgreementCallId,
        seq: u64,
    },
    Done(End),
}

/// One rank's program.
#[derive(Debug)]
pub struct Program {
    round: usize,
    phase: Phase,
    /// Point-to-point sends waiting for credit: (send slot, message id).
    queued: Vec<(usize, u32)>,
    /// The failed ranks of its latest `validate_local`: a wildcard receive of a message from
    /// one of them names its sender instead (it would wait for nothing: no failure is
    /// pending any more to stop it).
    acknowledged: RankSet,
    /// The failed ranks of G (its latest `validate_global`'s).
    global: RankSet,
}

type Step = std::result::Result<bool, String>;

impl Default for Program {
    fn default() -> Self {
        Program {
            round: 0,
            phase: Phase::Begin,
            queued: Vec::new(),
            acknowledged: RankSet::new(),
            global: RankSet::new(),
        }
    }
}

impl Program {
    /// How it ended, once it did.
    pub fn end(&self) -> Option<End> {
        match self.phase {
            Phase::Done(end) => Some(end),
            _ => None,
        }
    }

    /// Where it is (for a stuck schedule's report).
    pub fn describe(&self, plan: &Plan, me: u32) -> String {
        let round = plan.rounds.get(self.round);
        let what = match &self.phase {
            Phase::Begin => "starting".to_string(),
            Phase::Send { next } => format!("sending #{next}"),
            Phase::Receive {
                slots, next_start, ..
            } => {
                let ids = &plan.receives[me as usize][self.round];
                let open: Vec<String> = slots
                    .iter()
                    .zip(ids)
                    .take(*next_start)
                    .filter(|(slot, _)| !matches!(slot, RecvSlot::Done))
                    .map(|(slot, &id)| format!("{id} {:?} {slot:?}", plan.messages[id as usize]))
                    .collect();
                format!("receiving (started {next_start}/{}): {open:?}", slots.len())
            }
            Phase::AwaitSends => format!("waiting for queued sends {:?}", self.queued),
            Phase::Reduce { id, .. } => format!("all-reduce (schedule {id})"),
            Phase::RevokeWait { posted } => format!("waiting for the revocation ({posted:?})"),
            Phase::Shrinking { seq, .. } => format!("shrink: waiting for agreement #{seq}"),
            Phase::Creating { calls, ended, .. } => {
                format!("creation: waiting for calls {calls:?} (ended {ended:?})")
            }
            Phase::Agreements {
                next,
                pending,
                blocking,
                ..
            } => {
                format!("agreements: next call {next}, pending {pending:?}, waits for {blocking:?}")
            }
            Phase::Schedules { pending, .. } => {
                format!("non-blocking collectives: waits for {pending:?}")
            }
            Phase::Done(end) => format!("done: {end:?}"),
        };
        format!("round {} {round:?}: {what}", self.round)
    }

    /// One step: transmits what flow control let go, then one command of the program.
    /// Returns whether anything changed (a step that changed nothing changes nothing until a
    /// packet or a detector report reaches this rank).
    ///
    /// # Errors
    /// A violated check.
    pub fn step(&mut self, cx: &mut Ctx) -> Step {
        let mut progress = false;
        let mut transmit = cx.engine.poll_transmit();
        if !transmit.is_empty() {
            cx.out.append(&mut transmit.packets);
            cx.engine.end_transmit(&transmit);
            progress = true;
        }
        progress |= self.act(cx)?;
        cx.engine.flush_flow(cx.out);
        Ok(progress)
    }

    fn finish(&mut self, end: End, cx: &mut Ctx) -> Step {
        cx.trace.note(&[10, u64::from(cx.me), end as u64], || {
            format!("rank {} ends: {end:?}", cx.me)
        });
        self.phase = Phase::Done(end);
        Ok(true)
    }

    fn next_round(&mut self) -> Step {
        self.round += 1;
        self.phase = Phase::Begin;
        Ok(true)
    }

    fn act(&mut self, cx: &mut Ctx) -> Step {
        let me = cx.me;
        match &mut self.phase {
            Phase::Done(_) => Ok(false),
            Phase::Begin => {
                let Some(round) = cx.plan.rounds.get(self.round) else {
                    return self.finish(End::Completed, cx);
                };
                match round {
                    Round::PointToPoint => {
                        self.phase = Phase::Send { next: 0 };
                        Ok(true)
                    }
                    Round::ValidateLocal => {
                        let view = cx
                            .engine
                            .validate_local(WORLD_CONTEXT)
                            .map_err(|e| format!("validate_local at {me}: {e:?}"))?;
                        cx.checker.on_validate(me, &view)?;
                        self.acknowledged = view.failed_set();
                        cx.trace.note(&[11, u64::from(me)], || {
                            format!("rank {me} validate_local: {:?}", view.failed_set())
                        });
                        self.next_round()
                    }
                    &Round::Revoke { by } if by == me => {
                        cx.checker.revoke_issued = true;
                        cx.checker.on_revoke(me);
                        cx.engine.revoke(WORLD_CONTEXT, None, cx.out);
                        cx.trace
                            .note(&[12, u64::from(me)], || format!("rank {me} revokes"));
                        self.finish(End::Revoked, cx)
                    }
                    Round::Revoke { .. } => {
                        self.phase = Phase::RevokeWait { posted: None };
                        Ok(true)
                    }
                    &Round::AllReduce { pad } => self.begin_reduce(pad, cx),
                    Round::Schedules { ops } => {
                        let ops = ops.clone();
                        self.start_schedules(&ops, cx)
                    }
                    Round::Dup | Round::Split { .. } => self.begin_dup(cx),
                    Round::Shrink => self.start_shrink(cx),
                    Round::ValidateGlobal | Round::Agree | Round::IAgrees { .. } => {
                        let ops = match round {
                            Round::ValidateGlobal => vec![AgreeOp::ValidateGlobal],
                            Round::Agree => vec![AgreeOp::Agree],
                            Round::IAgrees { ops } => ops.clone(),
                            _ => unreachable!("an agreement round"),
                        };
                        self.phase = Phase::Agreements {
                            ops,
                            next: 0,
                            pending: Vec::new(),
                            blocking: None,
                            shuffled: false,
                        };
                        Ok(true)
                    }
                }
            }
            Phase::Send { next } => {
                let sends = &cx.plan.sends[me as usize][self.round];
                let Some(&id) = sends.get(*next) else {
                    let count = cx.plan.receives[me as usize][self.round].len();
                    let window = if cx.rng.gen_bool(0.5) {
                        1
                    } else {
                        count.max(1)
                    };
                    self.phase = Phase::Receive {
                        slots: vec![RecvSlot::Idle { exact: false }; count],
                        next_start: 0,
                        window,
                    };
                    return Ok(true);
                };
                *next += 1;
                self.send(id, cx)
            }
            Phase::Receive { .. } => self.receive(cx),
            Phase::Creating { .. } => self.poll_dup(cx),
            &mut Phase::Shrinking { id, seq } => self.poll_shrink(id, seq, cx),
            Phase::AwaitSends => {
                let mut progress = false;
                let mut revoked = false;
                let mut i = 0;
                while i < self.queued.len() {
                    let (slot, id) = self.queued[i];
                    match cx.engine.send_outcome(slot) {
                        None => i += 1,
                        Some(outcome) => {
                            self.queued.swap_remove(i);
                            progress = true;
                            if let Err(error) = outcome {
                                cx.checker.on_error(me, &error)?;
                                cx.trace.note(&[14, u64::from(me), u64::from(id)], || {
                                    format!("rank {me} queued send of {id}: {error:?}")
                                });
                                revoked |= error == Error::Revoked;
                            }
                        }
                    }
                }
                if revoked {
                    return self.finish(End::Revoked, cx);
                }
                if self.queued.is_empty() {
                    return self.next_round();
                }
                Ok(progress)
            }
            Phase::Reduce { .. } => self.reduce(cx),
            Phase::RevokeWait { .. } => self.revoke_wait(cx),
            Phase::Agreements { .. } => self.agreements(cx),
            Phase::Schedules { .. } => self.poll_schedules(cx),
        }
    }

    fn send(&mut self, id: u32, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let message = &cx.plan.messages[id as usize];
        match cx.engine.send_target(WORLD_CONTEXT, message.receiver) {
            Ok(Some(world)) => {
                if world != WorldRank(message.receiver) {
                    return Err(format!(
                        "send_target({}) gave world {world}",
                        message.receiver
                    ));
                }
                let payload = payload_of(cx.plan, id);
                let charge = flow::charge(payload.len());
                let packet = Packet::Data {
                    context: WORLD_CONTEXT,
                    source: me,
                    tag: message.tag,
                    payload,
                };
                if cx.engine.admit(world, Lane::Point, charge) {
                    cx.out.push((world, packet));
                } else {
                    let slot = cx.engine.queue_send(
                        world,
                        Lane::Point,
                        WORLD_CONTEXT,
                        message.receiver,
                        packet,
                        charge,
                    );
                    cx.out.append(&mut cx.engine.take_due());
                    self.queued.push((slot, id));
                    cx.trace.note(&[13, u64::from(me), u64::from(id)], || {
                        format!("rank {me} queues message {id} for credit")
                    });
                }
                Ok(true)
            }
            Ok(None) if self.global.contains(message.receiver) => {
                cx.trace.note(&[23, u64::from(me), u64::from(id)], || {
                    format!("rank {me} send of {id}: MPI_PROC_NULL")
                });
                Ok(true)
            }
            Ok(None) => Err(format!(
                "send to {} completed as MPI_PROC_NULL, G {:?}",
                message.receiver, self.global
            )),
            Err(error) => {
                cx.checker.on_error(me, &error)?;
                cx.trace.note(&[14, u64::from(me), u64::from(id)], || {
                    format!("rank {me} send of {id}: {error:?}")
                });
                if error == Error::Revoked {
                    return self.finish(End::Revoked, cx);
                }
                Ok(true)
            }
        }
    }

    fn receive(&mut self, cx: &mut Ctx) -> Step {
        let Phase::Receive {
            slots,
            next_start,
            window,
        } = &mut self.phase
        else {
            unreachable!("called in the receive phase");
        };
        // A receive to (re)start: one sent back to idle (a failure pending, a fallback to its
        // sender), or the next one while fewer than `window` are unfinished.
        let unfinished = slots[..*next_start]
            .iter()
            .filter(|s| !matches!(s, RecvSlot::Done))
            .count();
        let restart = slots[..*next_start]
            .iter()
            .position(|s| matches!(s, RecvSlot::Idle { .. }));
        let start = match restart {
            Some(at) => Some(at),
            None if *next_start < slots.len() && unfinished < *window => {
                *next_start += 1;
                Some(*next_start - 1)
            }
            None => None,
        };
        if let Some(at) = start {
            return self.start_receive(at, cx);
        }
        if slots.iter().all(|s| matches!(s, RecvSlot::Done)) {
            self.phase = Phase::AwaitSends;
            return Ok(true);
        }
        let posted: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, RecvSlot::Posted { .. }))
            .map(|(at, _)| at)
            .collect();
        let mut progress = false;
        for at in posted {
            progress |= self.poll_slot(at, cx)?;
            if self.end().is_some() {
                break;
            }
        }
        Ok(progress)
    }

    /// The message id and selectors of receive `at` of this round.
    fn selectors(&self, at: usize, exact: bool, cx: &Ctx) -> (u32, SourceSelector, TagSelector) {
        let id = cx.plan.receives[cx.me as usize][self.round][at];
        let message = &cx.plan.messages[id as usize];
        let exact = exact || self.acknowledged.contains(message.sender);
        let source = if message.any_source && !exact {
            SourceSelector::Any
        } else {
            SourceSelector::Rank(message.sender)
        };
        // With several receives posted, a receive restarted after a failure goes to the end of
        // the posted queue: an `Any` tag receive from the same sender posted meanwhile would
        // take its message. So posted-together receives name their tag (then each message is
        // accepted by its own receive only, or by same-tag receives of the same sender, posted
        // in the sender's order and never restarted).
        let tag = if message.any_tag && !self.batch() {
            TagSelector::Any
        } else {
            TagSelector::Value(message.tag)
        };
        (id, source, tag)
    }

    /// Whether this round's receives are posted together.
    fn batch(&self) -> bool {
        matches!(self.phase, Phase::Receive { window, .. } if window > 1)
    }

    fn set_slot(&mut self, at: usize, slot: RecvSlot) {
        if let Phase::Receive { slots, .. } = &mut self.phase {
            slots[at] = slot;
        }
    }

    fn start_receive(&mut self, at: usize, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let exact = match &self.phase {
            Phase::Receive { slots, .. } => matches!(slots[at], RecvSlot::Idle { exact: true }),
            _ => unreachable!("called in the receive phase"),
        };
        let (id, source, tag) = self.selectors(at, exact, cx);
        if cx.rng.gen_bool(0.25) {
            let probed = cx.engine.probe(WORLD_CONTEXT, source, tag);
            cx.checker.on_probe(cx.plan, me, (source, tag), &probed)?;
            cx.trace.note(&[20, u64::from(me), u64::from(id)], || {
                format!("rank {me} probes ({source:?}, {tag:?}): {probed:?}")
            });
        }
        match cx.engine.match_or_post(WORLD_CONTEXT, source, tag) {
            Err(error) => self.received(at, (source, tag), Err(error), None, cx),
            Ok(Posted::Done(outcome)) => self.received(at, (source, tag), outcome, None, cx),
            Ok(Posted::Waiting(rid)) => {
                cx.checker.on_posted(me, rid, source, tag)?;
                self.set_slot(at, RecvSlot::Posted { rid, source, tag });
                Ok(true)
            }
        }
    }

    fn poll_slot(&mut self, at: usize, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let Phase::Receive { slots, .. } = &self.phase else {
            unreachable!("called in the receive phase");
        };
        let RecvSlot::Posted { rid, source, tag } = slots[at] else {
            return Ok(false);
        };
        let id = cx.plan.receives[me as usize][self.round][at];
        let wildcard = source == SourceSelector::Any;
        match cx.engine.poll_receive(WORLD_CONTEXT, rid, wildcard) {
            ReceivePoll::Pending => {
                cx.checker.still_pending(me, source)?;
                Ok(false)
            }
            ReceivePoll::Complete(outcome) => {
                self.received(at, (source, tag), outcome, Some(rid), cx)
            }
            ReceivePoll::FailurePending => {
                cx.checker.on_failure_pending(me, source)?;
                // Either withdraw it (a blocking receive) or keep it (a request that stays
                // pending), acknowledge the failure, and go on; a receive whose own sender
                // failed falls back to naming it.
                let keep = cx.rng.gen_bool(0.5);
                let sender = cx.plan.messages[id as usize].sender;
                let exact = self.acknowledge(sender, cx)?; // withdraws it if `exact`
                if !keep && !exact {
                    cx.engine.cancel_receive(WORLD_CONTEXT, rid);
                    cx.checker.on_cancel(me, rid);
                    self.set_slot(at, RecvSlot::Idle { exact });
                }
                cx.trace.note(&[15, u64::from(me), u64::from(id)], || {
                    format!("rank {me} receive of {id}: failure pending (kept {keep})")
                });
                Ok(true)
            }
        }
    }

    /// One step of an agreement round.
    fn agreements(&mut self, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let Phase::Agreements {
            ops,
            next,
            pending,
            blocking,
            shuffled,
        } = &mut self.phase
        else {
            unreachable!("called in an agreement round");
        };
        if let Some((id, seq, op)) = *blocking {
            let Some(outcome) = poll_call(id, cx)? else {
                return Ok(false);
            };
            if op == AgreeOp::ValidateGlobal {
                let view = match outcome {
                    Ok(Agreed::Global(view)) => view,
                    other => return Err(format!("validate_global at {me}: {other:?}")),
                };
                cx.checker.on_validate_global(me, seq, &view)?;
                self.global = view.failed_set();
                self.acknowledged = view.failed_set();
                cx.trace.note(&[21, u64::from(me), seq], || {
                    format!(
                        "rank {me} validate_global #{seq}: G {:?}",
                        view.failed_set()
                    )
                });
            }
            *blocking = None;
            *next += 1;
            return Ok(true);
        }
        if let Some(&op) = ops.get(*next) {
            let global = op == AgreeOp::ValidateGlobal;
            let flag = if global || cx.rng.gen_bool(0.3) {
                u32::MAX
            } else {
                !(1u32 << cx.rng.gen_range(0..16))
            };
            let call = match op {
                AgreeOp::ValidateGlobal => AgreementCall::ValidateGlobal,
                AgreeOp::Agree | AgreeOp::IAgree => AgreementCall::Agree {
                    flag,
                    holds_series: op == AgreeOp::Agree,
                },
            };
            let (id, seq) = start_call(call, &self.global, cx)?;
            if op == AgreeOp::IAgree {
                pending.push(id);
                *next += 1;
            } else {
                *blocking = Some((id, seq, op));
            }
            return Ok(true);
        }
        if !*shuffled {
            pending.shuffle(cx.rng);
            *shuffled = true;
        }
        let Some(&id) = pending.first() else {
            return self.next_round();
        };
        if poll_call(id, cx)?.is_none() {
            return Ok(false);
        }
        pending.remove(0);
        Ok(true)
    }

    /// `validate_local`, then whether the receive of a message from `sender` must now name
    /// its sender (the sender's failure is acknowledged: a wildcard would wait for nothing).
    fn acknowledge(&mut self, sender: u32, cx: &mut Ctx) -> std::result::Result<bool, String> {
        let me = cx.me;
        let view = cx
            .engine
            .validate_local(WORLD_CONTEXT)
            .map_err(|e| format!("validate_local at {me}: {e:?}"))?;
        cx.checker.on_validate(me, &view)?;
        self.acknowledged = view.failed_set();
        // Other posted wildcard receives whose sender is now acknowledged failed would wait for
        // nothing: withdrawn, to name their sender.
        let round = self.round;
        if let Phase::Receive { slots, .. } = &mut self.phase {
            for (at, slot) in slots.iter_mut().enumerate() {
                let RecvSlot::Posted { rid, source, .. } = *slot else {
                    continue;
                };
                let id = cx.plan.receives[me as usize][round][at];
                let from = cx.plan.messages[id as usize].sender;
                if source == SourceSelector::Any && self.acknowledged.contains(from) {
                    cx.engine.cancel_receive(WORLD_CONTEXT, rid);
                    cx.checker.on_cancel(me, rid);
                    *slot = RecvSlot::Idle { exact: true };
                }
            }
        }
        Ok(view.is_failed(sender))
    }

    /// Receive `at` finished with `outcome`: at once (`rid` is `None`) or as the completion of
    /// its posted receive `rid`.
    fn received(
        &mut self,
        at: usize,
        selectors: (SourceSelector, TagSelector),
        outcome: Result<runthrough_core::engine::Received>,
        rid: Option<u64>,
        cx: &mut Ctx,
    ) -> Step {
        let me = cx.me;
        let id = cx.plan.receives[me as usize][self.round][at];
        match outcome {
            Ok(received) => {
                cx.checker
                    .on_received(cx.plan, me, id, selectors, &received, rid)?;
                cx.trace.note(&[16, u64::from(me), u64::from(id)], || {
                    let got = decode(&received.payload).map(|(_, got)| got);
                    format!("rank {me} receives {got:?} (for {id}, posted {rid:?})")
                });
                self.set_slot(at, RecvSlot::Done);
                Ok(true)
            }
            Err(Error::ProcFailed { rank }) => {
                cx.checker
                    .on_proc_failed(cx.plan, me, selectors, rank, rid.is_none())?;
                cx.trace.note(&[17, u64::from(me), u64::from(id)], || {
                    format!("rank {me} receive of {id}: ProcFailed({rank}), skipped")
                });
                self.set_slot(at, RecvSlot::Done);
                Ok(true)
            }
            Err(Error::ProcFailedPending) => {
                cx.checker.on_failure_pending(me, selectors.0)?;
                let sender = cx.plan.messages[id as usize].sender;
                let exact = self.acknowledge(sender, cx)?;
                cx.trace.note(&[18, u64::from(me), u64::from(id)], || {
                    format!("rank {me} receive of {id}: ProcFailedPending, validated")
                });
                self.set_slot(at, RecvSlot::Idle { exact });
                Ok(true)
            }
            Err(error) => {
                cx.checker.on_error(me, &error)?;
                if error == Error::Revoked {
                    return self.finish(End::Revoked, cx);
                }
                Err(format!("receive at {me}: {error:?}"))
            }
        }
    }

    fn revoke_wait(&mut self, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let Phase::RevokeWait { posted } = self.phase else {
            unreachable!("called in the revocation round");
        };
        let Some(Round::Revoke { by }) = cx.plan.rounds.get(self.round).cloned() else {
            unreachable!("the revocation round");
        };
        let source = SourceSelector::Rank(by);
        let tag = TagSelector::Value(REVOKE_TAG);
        let error = match posted {
            None => match cx.engine.match_or_post(WORLD_CONTEXT, source, tag) {
                Err(error) => error,
                Ok(Posted::Done(Ok(r))) if r.envelope.is_none() && self.global.contains(by) => {
                    return self.finish(End::RevokerFailed, cx);
                }
                Ok(Posted::Done(Ok(_))) => {
                    return Err(format!("rank {me} received a message nobody sent"))
                }
                Ok(Posted::Done(Err(error))) => error,
                Ok(Posted::Waiting(rid)) => {
                    cx.checker.on_posted(me, rid, source, tag)?;
                    self.phase = Phase::RevokeWait { posted: Some(rid) };
                    return Ok(true);
                }
            },
            Some(rid) => match cx.engine.poll_receive(WORLD_CONTEXT, rid, false) {
                ReceivePoll::Pending => {
                    cx.checker.still_pending(me, source)?;
                    return Ok(false);
                }
                ReceivePoll::Complete(Ok(r))
                    if r.envelope.is_none() && self.global.contains(by) =>
                {
                    return self.finish(End::RevokerFailed, cx);
                }
                ReceivePoll::Complete(Ok(_)) => {
                    return Err(format!("rank {me} received a message nobody sent"))
                }
                ReceivePoll::Complete(Err(error)) => error,
                ReceivePoll::FailurePending => {
                    return Err(format!("ProcFailedPending at {me} for a receive from {by}"))
                }
            },
        };
        cx.checker.on_error(me, &error)?;
        match error {
            Error::Revoked => self.finish(End::Revoked, cx),
            _ => self.finish(End::RevokerFailed, cx),
        }
    }

    /// Starts the round's `dup` (two of them, as `Comm::idup` twice) or `split` as the
    /// engine's creation calls, as `Comm::dup`, `idup` and `split` do.
    fn begin_dup(&mut self, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let creations = match self.split_args(cx) {
            Some((color, key)) => vec![Creation::Split { color, key }],
            None => vec![Creation::Dup, Creation::Dup],
        };
        let mut calls = Vec::new();
        let mut ended = Vec::new();
        for creation in creations {
            let call = AgreementCall::Create(creation);
            match cx.engine.start_agreement_call(WORLD_CONTEXT, call, cx.out) {
                Ok(id) => {
                    cx.trace.note(&[30, u64::from(me)], || {
                        format!("rank {me} creation call {id:?} starts")
                    });
                    calls.push(Some(id));
                    ended.push(None);
                }
                // Refused at once (a revoked communicator): its outcome.
                Err(error) => {
                    calls.push(None);
                    ended.push(Some(Err(error)));
                }
            }
        }
        let global = self.global.clone();
        self.phase = Phase::Creating {
            calls,
            ended,
            global,
        };
        Ok(true)
    }

    /// Polls the round's creation calls, in this rank's order; once all returned, checks what
    /// they made.
    fn poll_dup(&mut self, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let Phase::Creating {
            calls,
            ended,
            global,
        } = &self.phase
        else {
            unreachable!("called while creating");
        };
        let (calls, mut ended, global) = (calls.clone(), ended.clone(), global.clone());
        let mut order: Vec<usize> = (0..calls.len()).collect();
        if me % 2 == 1 {
            order.reverse();
        }
        for at in order {
            if let (None, Some(id)) = (&ended[at], calls[at]) {
                ended[at] = self.poll_creation(id, &global, cx)?;
            }
        }
        if cx.engine.declared_failed() {
            return Ok(true); // a decision fenced this rank: it halts (the runner sees to it)
        }
        if ended.iter().any(Option::is_none) {
            self.phase = Phase::Creating {
                calls,
                ended,
                global,
            };
            return Ok(false);
        }
        let outcomes: Vec<_> = ended.into_iter().flatten().collect();
        if self.split_args(cx).is_some() {
            return match outcomes.into_iter().next() {
                Some(Ok(made)) => self.end_split(made, cx),
                Some(Err(error)) => self.end_dup(vec![Err(error)], cx),
                None => Err(format!("rank {me}'s split made no call")),
            };
        }
        let mut contexts = Vec::new();
        for outcome in outcomes {
            contexts.push(match outcome {
                Ok(Some(made)) => {
                    if (made.rank, made.size) != (me, cx.plan.ranks) {
                        return Err(format!(
                            "rank {me}'s dup numbers it {} of {}, not {me} of {}",
                            made.rank, made.size, cx.plan.ranks
                        ));
                    }
                    cx.engine.free_communicator(made.context);
                    cx.out.append(&mut cx.engine.take_due());
                    Ok(made.context)
                }
                Ok(None) => return Err(format!("rank {me}'s dup made no communicator")),
                Err(error) => Err(error),
            });
        }
        self.end_dup(contexts, cx)
    }

    /// Polls creation call `id` once: its outcome when it returned (`None` while pending),
    /// with the test-only corruption of a decision applied.
    fn poll_creation(
        &mut self,
        id: AgreementCallId,
        global: &RankSet,
        cx: &mut Ctx,
    ) -> std::result::Result<Option<Result<Option<Installed>>>, String> {
        let me = cx.me;
        let mut decided = Decided::default();
        let outcome = cx.engine.poll_agreement_call(id, cx.out, &mut decided);
        note_learned(decided.learned, "a creation", cx)?;
        let mut corrupted = None;
        for (seq, decision) in decided.creations {
            if cx.checker.corrupt_creation_at == Some(cx.checker.creation_decisions) {
                // The test-only fault: this rank reads the decision with its exchange bit
                // cleared, and returns what that decision says.
                let mut wrong = decision.clone();
                wrong.flag &= !EXCHANGE_OK;
                let view = FailureView::recognized(cx.plan.ranks, global);
                if let Verdict::Failed(error) = verdict(&wrong, &view) {
                    corrupted = Some(error);
                }
            }
            cx.checker.creation_decisions += 1;
            cx.trace.note(&[31, u64::from(me), seq], || {
                format!("rank {me} creation #{seq} decided {decision:?}")
            });
        }
        let Some(outcome) = outcome else {
            return Ok(None);
        };
        let made = match outcome {
            Ok(Agreed::Created(made)) => Ok(made),
            Ok(other) => return Err(format!("creation at {me}: {other:?}")),
            Err(error) => Err(error),
        };
        Ok(Some(match (corrupted, made) {
            (Some(error), Ok(made)) => {
                if let Some(made) = made {
                    cx.engine.free_communicator(made.context);
                }
                Err(error)
            }
            (_, made) => made,
        }))
    }

    /// Starts the shrink's agreement call, as `Comm::shrink` does.
    fn start_shrink(&mut self, cx: &mut Ctx) -> Step {
        let (id, seq) = start_call(AgreementCall::Shrink, &self.global, cx)?;
        self.phase = Phase::Shrinking { id, seq };
        Ok(true)
    }

    /// Polls the shrink's call; once it returns, checks the survivors' communicator against
    /// the other ranks' (the same context and members everywhere). A shrink whose context id
    /// was taken somewhere enters another agreement, entered in the ledger here.
    fn poll_shrink(&mut self, id: AgreementCallId, seq: u64, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let polled = poll_call(id, cx)?;
        let Some(outcome) = polled else {
            if let Some((now, flag)) = cx.engine.agreement_call_entry(id) {
                if now != seq {
                    cx.checker
                        .on_agreement_start(me, now, false, flag, &self.global)?;
                    self.phase = Phase::Shrinking { id, seq: now };
                    return Ok(true);
                }
            }
            return Ok(false);
        };
        let (context, rank, size) = match outcome {
            Ok(Agreed::Shrunk(made)) => (made.context, made.rank, made.size),
            other => return Err(format!("shrink at {me}: {other:?}")),
        };
        let survivors = cx.engine.members_of(context);
        let position = survivors.iter().position(|&r| r == WorldRank(me));
        if (Some(rank as usize), size as usize) != (position, survivors.len()) {
            return Err(format!(
                "rank {me}'s shrink numbers it {rank} of {size} in {survivors:?}"
            ));
        }
        cx.trace.note(&[34, u64::from(me), seq], || {
            format!("rank {me} shrink returns {context:#x} of {survivors:?}")
        });
        let decision = cx
            .checker
            .decision_of(seq)
            .ok_or_else(|| format!("rank {me}'s shrink returned before agreement {seq} decided"))?;
        cx.checker
            .on_shrink(me, self.round, context, &worlds(&survivors), &decision)?;
        cx.engine.free_communicator(context);
        cx.out.append(&mut cx.engine.take_due());
        self.next_round()
    }

    /// This round's color and key at this rank, if it is a `split` round.
    fn split_args(&self, cx: &Ctx) -> Option<(Option<u32>, i32)> {
        match cx.plan.rounds.get(self.round) {
            Some(Round::Split { colors, keys }) => {
                Some((colors[cx.me as usize], keys[cx.me as usize]))
            }
            _ => None,
        }
    }

    /// The round's `split` returned `made`: its numbering checked here, its members against
    /// the round's colors and keys and the other ranks' outcomes by the checker.
    fn end_split(&mut self, made: Option<Installed>, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let Some(Round::Split { colors, keys }) = cx.plan.rounds.get(self.round).cloned() else {
            unreachable!("called in a split round");
        };
        let mine = match made {
            None if colors[me as usize].is_none() => None,
            None => return Err(format!("rank {me}'s split left it out")),
            Some(made) => {
                let mut members = cx.engine.members_of(made.context);
                if members.len() >= 2 {
                    if cx.checker.corrupt_split_at == Some(cx.checker.split_installs) {
                        members.reverse(); // the test-only fault
                    }
                    cx.checker.split_installs += 1;
                }
                let expected = members
                    .iter()
                    .position(|&w| w == WorldRank(me))
                    .map(|i| i as u32);
                if (Some(made.rank), made.size as usize) != (expected, members.len()) {
                    return Err(format!(
                        "rank {me}'s split numbers it {} of {}, not {expected:?} of {}",
                        made.rank,
                        made.size,
                        members.len()
                    ));
                }
                cx.engine.free_communicator(made.context);
                cx.out.append(&mut cx.engine.take_due());
                Some((made.context, members))
            }
        };
        cx.trace.note(&[35, u64::from(me)], || {
            format!("rank {me} split returns {mine:?}")
        });
        let mine = mine.map(|(context, members)| (context, worlds(&members)));
        cx.checker
            .on_split(me, self.round, &colors, &keys, &Ok(mine))?;
        self.next_round()
    }

    /// The round's creation calls returned with `outcomes` (a split's one error, or each
    /// dup's communicator or error): checked against the other ranks', and the round ends.
    fn end_dup(&mut self, outcomes: Vec<Result<ContextId>>, cx: &mut Ctx) -> Step {
        let me = cx.me;
        if self.split_args(cx).is_some() {
            let outcome = outcomes.into_iter().next();
            cx.trace.note(&[35, u64::from(me)], || {
                format!("rank {me} split returns {outcome:?}")
            });
            let Some(Round::Split { colors, keys }) = cx.plan.rounds.get(self.round).cloned()
            else {
                unreachable!("a split round");
            };
            let error = match outcome {
                Some(Err(error)) => error,
                _ => return Err("a split ended without its communicator".into()),
            };
            cx.checker
                .on_split(me, self.round, &colors, &keys, &Err(error.clone()))?;
            return match error {
                Error::Revoked => self.finish(End::Revoked, cx),
                error => {
                    cx.checker.on_error(me, &error)?;
                    self.next_round()
                }
            };
        }
        let mut revoked = false;
        for (which, outcome) in outcomes.iter().enumerate() {
            cx.trace.note(&[32, u64::from(me), which as u64], || {
                format!("rank {me} dup {which} returns {outcome:?}")
            });
            cx.checker.on_creation(me, self.round, which, outcome)?;
            match outcome {
                Err(Error::Revoked) => revoked = true,
                Err(error) => cx.checker.on_error(me, error)?,
                Ok(_) => {}
            }
        }
        if revoked {
            return self.finish(End::Revoked, cx);
        }
        self.next_round()
    }

    /// The participants of collectives at this rank: the OK ranks of its G.
    fn participants(&self, plan: &Plan) -> Vec<u32> {
        (0..plan.ranks)
            .filter(|&r| !self.global.contains(r))
            .collect()
    }

    /// Starts every call of a [`Round::Schedules`] round, in order: each is numbered and runs
    /// in the engine from then on, whatever this program does.
    fn start_schedules(&mut self, ops: &[ScheduleOp], cx: &mut Ctx) -> Step {
        let me = cx.me;
        let round = self.round;
        let expected = self.participants(cx.plan);
        let mut pending = Vec::new();
        for (k, &op) in ops.iter().enumerate() {
            let mut wrong = None;
            let started = cx.engine.start_schedule(
                WORLD_CONTEXT,
                me,
                |call| {
                    let (p, i) = (&call.participants[..], call.index);
                    if p != &expected[..] || p.get(i) != Some(&me) {
                        wrong = Some(format!(
                            "start_schedule at {me}: participants {p:?}, index {i}"
                        ));
                    }
                    let value = |rank: u32| contribution(round, rank) + k as u64;
                    let pad = |rank: u32| varcount_pad(round, rank);
                    let lens: Vec<usize> = p.iter().map(|&r| 8 + pad(r)).collect();
                    // Odd rounds: the varcount builders (the blocks differ in length).
                    let varcount = round % 2 == 1;
                    Ok(match op {
                        ScheduleOp::Barrier => Schedule::barrier(p, i, call.hosts.as_deref()),
                        ScheduleOp::Broadcast { root } => {
                            let root = root % p.len();
                            let data = if root == i {
                                value_bytes(value(me), 0)
                            } else {
                                Vec::new()
                            };
                            Schedule::broadcast(p, i, root, data)
                        }
                        ScheduleOp::AllReduce { pad } => {
                            Schedule::all_reduce(p, i, value_bytes(value(me), pad), sum_of_values())
                        }
                        ScheduleOp::Gather { root } if varcount => Schedule::gather_varcount(
                            p,
                            i,
                            root % p.len(),
                            value_bytes(value(me), pad(me)),
                            &lens,
                        ),
                        ScheduleOp::Gather { root } => {
                            Schedule::gather(p, i, root % p.len(), value_bytes(value(me), 0))
                        }
                        ScheduleOp::Scatter { root } => {
                            let root = root % p.len();
                            let blocks = if root == i {
                                let v = value(me);
                                p.iter()
                                    .map(|&to| value_bytes(block(v, to), pad(to)))
                                    .collect()
                            } else {
                                Vec::new()
                            };
                            // (Receivers forward their subtree's blocks: the checks
                            // below look at this rank's block.)
                            Schedule::scatter(p, i, root, blocks)
                        }
                        ScheduleOp::AllGather if varcount => Schedule::all_gather_varcount(
                            p,
                            i,
                            value_bytes(value(me), pad(me)),
                            &lens,
                        ),
                        ScheduleOp::AllGather => {
                            Schedule::all_gather(p, i, value_bytes(value(me), 0))
                        }
                        ScheduleOp::Scan { exclusive } => Schedule::scan(
                            p,
                            i,
                            value_bytes(value(me), 0),
                            sum_of_values(),
                            exclusive,
                        ),
                        ScheduleOp::AllToAll => {
                            let v = value(me);
                            let blocks = p
                                .iter()
                                .map(|&to| value_bytes(block(v, to), pad(me)))
                                .collect();
                            if varcount {
                                Schedule::all_to_all_varcount(p, i, blocks, &lens)
                            } else {
                                Schedule::all_to_all(p, i, blocks)
                            }
                        }
                    })
                },
                cx.out,
            );
            if let Some(wrong) = wrong {
                return Err(wrong);
            }
            cx.trace
                .note(&[24, u64::from(me), round as u64, k as u64], || {
                    format!("rank {me} starts {op:?} (round {round} call {k}): {started:?}")
                });
            match started {
                Ok(id) => {
                    if op == ScheduleOp::Barrier {
                        cx.checker.on_barrier_entered(round, k, me);
                    }
                    pending.push((id, k))
                }
                Err(error) => {
                    if let Some(end) = self.schedule_outcome(k, op, Err(error), cx)? {
                        return self.finish(end, cx);
                    }
                }
            }
        }
        self.phase = Phase::Schedules {
            pending,
            shuffled: false,
        };
        Ok(true)
    }

    /// Waits for the round's calls in a random order.
    fn poll_schedules(&mut self, cx: &mut Ctx) -> Step {
        let Phase::Schedules { pending, shuffled } = &mut self.phase else {
            unreachable!("called in a round of non-blocking collectives");
        };
        if !*shuffled {
            pending.shuffle(cx.rng);
            *shuffled = true;
        }
        let Some(&(id, k)) = pending.first() else {
            return self.next_round();
        };
        let Some(outcome) = cx.engine.poll_schedule(WORLD_CONTEXT, id, cx.out) else {
            return Ok(false);
        };
        pending.remove(0);
        let Some(Round::Schedules { ops }) = cx.plan.rounds.get(self.round) else {
            unreachable!("in a round of non-blocking collectives");
        };
        let op = ops[k];
        let outcome = outcome.map(runthrough_core::engine::Output::into_bytes);
        match self.schedule_outcome(k, op, outcome, cx)? {
            Some(end) => self.finish(end, cx),
            None => Ok(true),
        }
    }

    /// Checks call `k` (`op`) of this round's outcome: a result equal to the sequential
    /// reference over the OK ranks of G, or an error only when a participant crashed
    /// (semantics §3.3). Returns how the program ends if it must end now (revoked).
    fn schedule_outcome(
        &mut self,
        k: usize,
        op: ScheduleOp,
        outcome: Result<Vec<u8>>,
        cx: &mut Ctx,
    ) -> std::result::Result<Option<End>, String> {
        let me = cx.me;
        let round = self.round;
        cx.trace
            .note(&[25, u64::from(me), round as u64, k as u64], || {
                format!("rank {me} {op:?} (round {round} call {k}): {outcome:?}")
            });
        let participants = self.participants(cx.plan);
        let value = |rank: u32| contribution(round, rank) + k as u64;
        let pad = |rank: u32| varcount_pad(round, rank);
        match outcome {
            Ok(bytes) => {
                let wrong =
                    |what: String| format!("{op:?} of round {round} (call {k}) at {me}: {what}");
                match op {
                    ScheduleOp::Barrier if !bytes.is_empty() => {
                        return Err(wrong(format!("{} bytes", bytes.len())));
                    }
                    ScheduleOp::Barrier => {
                        cx.checker.on_barrier_left(round, k, me, &participants)?;
                    }
                    ScheduleOp::Broadcast { root } => {
                        let from = participants[root % participants.len()];
                        if from == me {
                            // The root has the bytes: no result there.
                            if !bytes.is_empty() {
                                return Err(wrong(format!("{} bytes at the root", bytes.len())));
                            }
                        } else {
                            let got = value_of(&bytes, 0).map_err(&wrong)?;
                            if got != value(from) {
                                return Err(wrong(format!(
                                    "{got}, root {from} sent {}",
                                    value(from)
                                )));
                            }
                        }
                    }
                    ScheduleOp::Gather { root } => {
                        let at = participants[root % participants.len()];
                        let expected: Vec<u8> = if at == me {
                            participants
                                .iter()
                                .flat_map(|&r| value_bytes(value(r), pad(r)))
                                .collect()
                        } else {
                            Vec::new()
                        };
                        if bytes != expected {
                            return Err(wrong(format!("{bytes:?}, expected {expected:?}")));
                        }
                    }
                    ScheduleOp::Scatter { root } => {
                        let from = participants[root % participants.len()];
                        let expected = value_bytes(block(value(from), me), pad(me));
                        if bytes != expected {
                            return Err(wrong(format!("{bytes:?}, expected {expected:?}")));
                        }
                    }
                    ScheduleOp::AllGather => {
                        let expected: Vec<u8> = participants
                            .iter()
                            .flat_map(|&r| value_bytes(value(r), pad(r)))
                            .collect();
                        if bytes != expected {
                            return Err(wrong(format!("{bytes:?}, expected {expected:?}")));
                        }
                    }
                    ScheduleOp::AllToAll => {
                        let expected: Vec<u8> = participants
                            .iter()
                            .flat_map(|&r| value_bytes(block(value(r), me), pad(r)))
                            .collect();
                        if bytes != expected {
                            return Err(wrong(format!("{bytes:?}, expected {expected:?}")));
                        }
                    }
                    ScheduleOp::Scan { exclusive } => {
                        let lower = participants.iter().filter(|&&r| r < me);
                        let first = participants.first() == Some(&me);
                        let expected = if exclusive && first {
                            Vec::new()
                        } else {
                            let own = (!exclusive).then_some(value(me));
                            let sum = lower
                                .map(|&r| value(r))
                                .chain(own)
                                .fold(0u64, u64::wrapping_add);
                            value_bytes(sum, 0)
                        };
                        if bytes != expected {
                            return Err(wrong(format!("{bytes:?}, expected {expected:?}")));
                        }
                    }
                    ScheduleOp::AllReduce { pad } => {
                        let got = value_of(&bytes, pad).map_err(&wrong)?;
                        let expected = participants
                            .iter()
                            .map(|&r| value(r))
                            .fold(0u64, u64::wrapping_add);
                        if got != expected {
                            return Err(wrong(format!("{got}, expected {expected}")));
                        }
                    }
                }
                Ok(None)
            }
            Err(error) => {
                cx.checker.on_error(me, &error)?;
                if error == Error::Revoked {
                    return Ok(Some(End::Revoked));
                }
                if participants
                    .iter()
                    .all(|&r| !cx.checker.crashed[r as usize])
                {
                    return Err(format!(
                        "{op:?} of round {round} (call {k}) at {me}: {error:?}, but no \
                         participant crashed (G {:?})",
                        self.global
                    ));
                }
                Ok(None)
            }
        }
    }

    /// Starts a blocking all-reduce as the runtime does: the all-reduce schedule, held by
    /// this rank's call (`Hold::Caller`) and advanced by its polls.
    fn begin_reduce(&mut self, pad: usize, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let round = self.round;
        let expected: Vec<u32> = (0..cx.plan.ranks)
            .filter(|&r| !self.global.contains(r))
            .collect();
        let mut wrong = None;
        let started = cx.engine.start_schedule_as(
            WORLD_CONTEXT,
            me,
            Hold::Caller,
            |call| {
                if *call.participants != *expected || call.participants.get(call.index) != Some(&me)
                {
                    wrong = Some(format!(
                        "all-reduce at {me}: participants {:?}, index {}",
                        call.participants, call.index
                    ));
                }
                let data = value_bytes(contribution(round, me), pad);
                Ok(Schedule::all_reduce(
                    &call.participants,
                    call.index,
                    data,
                    sum_of_values(),
                ))
            },
            cx.out,
        );
        if let Some(wrong) = wrong {
            return Err(wrong);
        }
        match started {
            Err(error) => self.end_reduce(Err(error), cx),
            Ok(Started::Done(outcome)) => {
                self.end_reduce_bytes(outcome.map(Output::into_bytes), pad, cx)
            }
            Ok(Started::Running(id)) => {
                self.phase = Phase::Reduce { id, pad };
                Ok(true)
            }
        }
    }

    fn reduce(&mut self, cx: &mut Ctx) -> Step {
        let Phase::Reduce { id, pad } = self.phase else {
            unreachable!("called in the reduce phase");
        };
        match cx.engine.poll_schedule(WORLD_CONTEXT, id, cx.out) {
            None => Ok(false),
            Some(outcome) => self.end_reduce_bytes(outcome.map(Output::into_bytes), pad, cx),
        }
    }

    /// The end of a blocking all-reduce that began: its slot freed (as the runtime's
    /// `CollectiveRequest` does), its bytes read.
    fn end_reduce_bytes(&mut self, outcome: Result<Vec<u8>>, pad: usize, cx: &mut Ctx) -> Step {
        cx.engine.end_collective(WORLD_CONTEXT);
        let result = match outcome {
            Ok(bytes) => Ok(value_of(&bytes, pad)?),
            Err(error) => Err(error),
        };
        self.end_reduce(result, cx)
    }

    /// Checks an all-reduce's outcome (the schedule's poll has turned a success into
    /// ProcFailed when a failure not recognized in G was known by then, semantics §3.3).
    fn end_reduce(&mut self, result: Result<u64>, cx: &mut Ctx) -> Step {
        let me = cx.me;
        let round = self.round;
        cx.trace.note(&[19, u64::from(me), round as u64], || {
            format!("rank {me} all-reduce of round {round}: {result:?}")
        });
        match result {
            Ok(value) => {
                let expected = (0..cx.plan.ranks)
                    .filter(|&r| !self.global.contains(r))
                    .map(|r| contribution(round, r))
                    .fold(0u64, u64::wrapping_add);
                if value != expected {
                    return Err(format!(
                        "all-reduce of round {round} at {me}: {value}, expected {expected}"
                    ));
                }
                self.next_round()
            }
            Err(error) => {
                cx.checker.on_error(me, &error)?;
                if error == Error::Revoked {
                    return self.finish(End::Revoked, cx);
                }
                // Over the OK ranks of G, it fails only if one of them crashed (SPEC §3.3).
                if (0..cx.plan.ranks)
                    .all(|r| self.global.contains(r) || !cx.checker.crashed[r as usize])
                {
                    return Err(format!(
                        "all-reduce of round {round} at {me}: {error:?}, but no participant crashed (G {:?})",
                        self.global
                    ));
                }
                self.next_round()
            }
        }
    }
}

/// The failures this rank's detector learned from a decision of `what`: each must be a crashed
/// (or suspected) rank, and is entered in the ledger as detected.
/// World ranks as the checker numbers them (the world communicator's ranks).
fn worlds(ranks: &[WorldRank]) -> Vec<u32> {
    ranks.iter().map(|w| w.0).collect()
}

fn note_learned(
    learned: Vec<WorldRank>,
    what: &str,
    cx: &mut Ctx,
) -> std::result::Result<(), String> {
    let me = cx.me;
    for WorldRank(dead) in learned {
        if !cx.checker.crashed[dead as usize] {
            return Err(format!(
                "rank {me} learned of {dead}'s failure from {what}, but it lives"
            ));
        }
        cx.checker.on_detect(me, dead);
    }
    Ok(())
}

/// Starts agreement call `call` on the world, entered in the ledger with G `global`; returns
/// it and its agreement's number.
fn start_call(
    call: AgreementCall,
    global: &RankSet,
    cx: &mut Ctx,
) -> std::result::Result<(AgreementCallId, u64), String> {
    let me = cx.me;
    let id = cx
        .engine
        .start_agreement_call(WORLD_CONTEXT, call.clone(), cx.out)
        .map_err(|e| format!("start_agreement_call at {me} for {call:?}: {e:?}"))?;
    let (seq, flag) = cx
        .engine
        .agreement_call_entry(id)
        .ok_or_else(|| format!("agreement call {id:?} at {me} ended at its start"))?;
    let validate = call == AgreementCall::ValidateGlobal;
    cx.checker
        .on_agreement_start(me, seq, validate, flag, global)?;
    cx.trace
        .note(&[20, u64::from(me), seq, u64::from(flag)], || {
            format!("rank {me} starts {call:?} #{seq} with flag {flag:#x}")
        });
    Ok((id, seq))
}

/// The outcome of agreement call `id` at this rank, once it has one; the decisions it took are
/// checked, and the failures they made known to the detector entered in the ledger. `None`
/// too when a decision fenced this rank (it halts before its call returns: the runner sees to
/// it at the end of this step).
fn poll_call(
    id: AgreementCallId,
    cx: &mut Ctx,
) -> std::result::Result<Option<Result<Agreed>>, String> {
    let me = cx.me;
    let mut decided = Decided::default();
    let outcome = cx.engine.poll_agreement_call(id, cx.out, &mut decided);
    note_learned(decided.learned, "an agreement", cx)?;
    for (seq, mut decision) in decided.decisions {
        if cx.checker.corrupt_decision_at == Some(cx.checker.decisions) {
            decision.flag ^= 1; // the test-only fault
        }
        cx.checker.on_decision(me, seq, &decision)?;
        cx.trace.note(&[22, u64::from(me), seq], || {
            format!("rank {me} decides #{seq}: {decision:?}")
        });
    }
    if cx.engine.declared_failed() {
        return Ok(None);
    }
    Ok(outcome)
}

/// The block that a participant whose value is `from` sends rank `to` in a scatter or an
/// all-to-all of the engine simulator's non-blocking rounds.
fn block(from: u64, to: u32) -> u64 {
    from.wrapping_mul(31).wrapping_add(u64::from(to))
}

/// The padding of rank `rank`'s blocks in a gather, scatter, all-gather or all-to-all of round
/// `round`: none in even rounds (the fixed-count builders' case), `rank mod 3` bytes in odd
/// ones, so that blocks differ in length between ranks (the varcount builders, each block
/// checked against its own expected length).
fn varcount_pad(round: usize, rank: u32) -> usize {
    if round % 2 == 1 {
        rank as usize % 3
    } else {
        0
    }
}

/// A collective message's bytes: `value`, then `pad` bytes of 0xA5.
fn value_bytes(value: u64, pad: usize) -> Vec<u8> {
    let mut bytes = value.to_le_bytes().to_vec();
    bytes.resize(8 + pad, 0xA5);
    bytes
}

/// The reduction of the non-blocking all-reduces: the sum of the leading u64s (the padding
/// is kept as it is). The whole message is one element (no ring: it is not cut).
fn sum_of_values() -> Reduction {
    let sum = |input: &[u8], inout: &mut [u8]| {
        let read = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        if input.len() >= 8 && inout.len() >= 8 {
            let sum = read(input).wrapping_add(read(inout));
            inout[..8].copy_from_slice(&sum.to_le_bytes());
        }
    };
    Reduction::new(std::sync::Arc::new(sum), usize::MAX, true)
}

/// The u64 of a collective message (then `pad` bytes of 0xA5).
fn value_of(payload: &[u8], pad: usize) -> std::result::Result<u64, String> {
    let wrong = || format!("a collective message of {} bytes", payload.len());
    if payload.len() != 8 + pad || payload[8..].iter().any(|&b| b != 0xA5) {
        return Err(wrong());
    }
    let bytes: [u8; 8] = payload[..8].try_into().map_err(|_| wrong())?;
    Ok(u64::from_le_bytes(bytes))
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fault-tolerant agreement behind `validate_global`, `agree` and `shrink` (semantics §2.1,
//! §3.5).
//!
//! All participants of one call agree on one [`Decision`]: a set of failed participants and a
//! flag word, with the guarantees of semantics §2.1 (uniform agreement, validity, termination)
//! under the failure model of semantics §1 (fail-stop; the detector is *accurate*: it reports only
//! ranks that really failed or were fenced, and *eventually complete*: every failure is eventually
//! reported to every survivor). [`Agreement`] is one call at one rank, a pure state machine:
//! inputs are [`start`](Agreement::start), [`handle_message`](Agreement::handle_message) and
//! [`handle_failure`](Agreement::handle_failure); outputs are
//! [`poll_transmit`](Agreement::poll_transmit) and [`decision`](Agreement::decision).
//! [`AgreementSeries`] numbers the successive calls of one communicator and keeps them apart.
//! Messages have a compact binary form ([`Message::encode`], [`Message::decode`]).
//!
//! # The protocol
//!
//! It is Paxos in which a "quorum" is *every participant not known failed*, run over trees,
//! preceded (from 2 to [`FAST_ROUND_MAX`] participants) by a coordinator-free first round that
//! decides in two passes of dissemination when nothing fails.
//!
//! ## The first round
//!
//! With `n` participants and `R = ceil(log2 n)`, participant `i` exchanges in round `k` with
//! `i XOR 2^k` when `n` is a power of two (a butterfly: after round `k` it covers its aligned
//! block of `2^(k+1)` indices, and the first rounds stay among neighbours, usually one host),
//! else sends to `i + 2^k` and hears from `i - 2^k`, modulo `n` (dissemination: after round
//! `k` it covers the `2^(k+1)` indices ending at its own); after `R` rounds, what each
//! participant folded in covers all `n`.
//!
//! Where the participants' hosts are known alike at every rank
//! ([`Participants::with_hosts`]), each pass follows the barrier's plan over hosts instead
//! (`crate::engine::barrier_steps`): up a tree of radix 4 to each host's leader, the rounds above
//! among the leaders, and back down. Either plan has the two properties the passes need: at
//! its end every participant has heard, transitively, from every other, and each direction
//! between two participants carries at most one message per pass (so a message is known by its
//! sender and pass; its `round` is the sender's count of sends before it, which the receiver
//! checks against the sender's plan).
//!
//! - **Gather pass.** A started rank sends `Gather` with the aggregate of the contributions it
//!   has folded so far (`Contribution::merge`: union, intersection, AND; order and overlaps do
//!   not matter), and folds in what it hears, step after step. After the pass it holds the
//!   aggregate of *every* participant's contribution, so every rank that gets there computes
//!   the same value `V`: what a coordinator would propose from a complete gather in which all
//!   contributed and nobody had accepted anything. It *accepts* `V` at the ballot
//!   [`Ballot::Fast`], below every coordinated ballot.
//! - **Hold pass.** It then sends `Hold` the same way: a hold says that every participant its
//!   sender has heard of in this pass (the `2^k` ending at the sender, after round `k` of the
//!   butterfly or dissemination) accepted `V`. After the pass every participant has accepted
//!   `V`: the rank decides, and sends no commit (the others decide the same way).
//! - **Leaving.** A rank leaves the first round for good, and runs the coordinated ballots
//!   below from ballot `lowest_alive`, when it knows a participant failed (at entry or later:
//!   the round needs every participant) or when a coordinated ballot's message arrives. A rank
//!   that has left sends `Prepare` at ballot 0 too, so the others leave at once rather than when
//!   their detectors tell them. Its promise reports `(Fast, V)` if it accepted `V`.
//!
//! ## The coordinated ballots
//!
//! - **Ballots.** Participants are numbered by index `0..n` ([`Participants`]). A ballot is the
//!   index of its coordinator. A rank's current ballot is the maximum of the highest ballot it
//!   has seen in a message and the lowest index it does not know failed; ballots only grow.
//!   The coordinator of ballot `b` knows that every index below `b` failed; so does anyone who
//!   sees ballot `b` (the detector is accurate), which is why ranks may adopt higher ballots
//!   from any message.
//! - **The tree of ballot `b`** is a binomial tree over virtual indices `v = i - b` for
//!   `i in b..n`: `parent(v) = v & (v - 1)`, children `v + 2^j` for `2^j` below the lowest set
//!   bit of `v`. Depth at most `log2 n`; computed on the fly, never stored. A rank's *effective
//!   parent* is its nearest ancestor not known failed (the root, the coordinator, is never
//!   known failed at its own ballot). Waiting for its children in a phase, a rank walks its
//!   static children: one whose reply for this (ballot, phase) arrived covers its whole
//!   subtree; one known failed without reply is skipped (in the gather: marked a
//!   non-contributor) and its own children walked; any other is waited for. Replies from ranks
//!   that are not (yet) its effective children are kept: they re-attached because their parent
//!   died, which this rank will learn later.
//! - **Phase 1, promise gather.** A started rank whose children all promised sends `Promise`
//!   with the aggregate of its subtree ([`Summary`]: union of `known_failed`, the
//!   non-contributors, intersection of `acknowledged`, AND of flags, and the highest-ballot
//!   value accepted in the subtree) to its effective parent. Ballot 0 needs no `Prepare`;
//!   ranks at a higher ballot forward `Prepare` down its tree to speed things up, but every
//!   rank also promises on its own as soon as it computes a new ballot.
//! - **Phase 2, accept.** The coordinator, with a complete gather, proposes the highest-ballot
//!   accepted value if any, else a fresh value: `failed = known_failed ∪ non_contributors`
//!   (where the coordinator adds every index below its own as a non-contributor). It sends
//!   `Accept` down; a rank at that ballot or below accepts, forwards it down, and sends
//!   `Accepted` up once its effective children have.
//! - **Phase 3, commit.** The coordinator, with every `Accepted`, decides and sends `Commit`
//!   down. A rank decides on a `Commit` from anyone at any ballot, and returns. A rank that
//!   accepts at ballot `b` when the coordinator of `b` is the only other participant it does
//!   not know failed decides at once (both have accepted `(b, V)`: the value is chosen, as in
//!   invariant 4 below) and sends `Commit` up instead of `Accepted`.
//! - **Repairs.** When a rank's effective parent changes it sends its current up message again
//!   to the new one; when its effective children change it forwards its current down message
//!   to the new ones. A coordinator's failure makes the next lowest live index coordinate a
//!   higher ballot over its own tree.
//! - **Decided ranks** (kept alive by the series after they return) answer any other message
//!   with `Commit`, and send `Commit` to their effective parent and children in their current
//!   tree (recomputed as failures are learned), except to ranks they already exchanged a
//!   commit with. Non-commit messages from ranks known failed, and messages of ballots below
//!   the current one, are ignored.
//!
//! Failure-free the coordinated ballots are four traversals of a tree of depth `log2 n` and
//! `4 (n - 1)` messages (three messages at two ranks); the first round is `2 R` one-way delays
//! and `2 n R` messages (two delays and four messages at two ranks). Above [`FAST_ROUND_MAX`]
//! participants the message count wins over the delays (it is what costs when ranks outnumber
//! cores) and the coordinated ballots run from the start.
//!
//! **Against a non-uniform agreement.** Semantics §6 asks for at least the speed of Open MPI's
//! `MPIX_Comm_agree`, whose early-returning algorithm decides at the root of its tree after one
//! fan-in and sends the decision down: one pass, `2 (n - 1)` messages. Uniform agreement
//! (semantics §2.1) forbids deciding before every live participant holds the value, so failure-free
//! it needs a second pass in which every rank learns that every rank holds it: over hosts
//! ([`Participants::with_hosts`], two hosts) `2 (n - 1)` messages per pass, `4 (n - 1)` in
//! all. Where messages cost about the same in both runtimes (TCP on every pair, ranks
//! outnumbering cores) the target cannot be met without giving up §2.1, which we keep: the
//! reading we hold to is two passes, each of the fewest messages, each measured against
//! Open MPI's whole agreement (docs/src/semantics.md §6, docs/src/performance.md).
//!
//! # Invariants
//!
//! 1. *Accuracy.* Every index in a rank's failed set, every non-contributor and every index
//!    below a ballot some rank has seen has really failed.
//! 2. *Promise.* Once a rank has sent or folded in a promise for ballot `b` it never accepts at
//!    a ballot below `b` (its ballot never decreases and lower-ballot messages are ignored), and
//!    the promise reports the highest-ballot value accepted in the subtree before it.
//! 3. *One value per ballot.* Only the coordinator of `b` proposes at `b`, once.
//! 4. *Coverage.* A complete gather at `b` covers every index: each participant of `b..n` by its
//!    own contribution or as a non-contributor (skipped by the rank waiting for it, which knew it
//!    failed with no reply from it, and ignores its messages from then on), and every index
//!    below `b` as a non-contributor. Likewise a complete set of `Accepted` at `b` means every
//!    participant not known failed by the rank waiting for it accepted `(b, V)`.
//! 5. *One first-round value.* Every rank that accepts at [`Ballot::Fast`] accepts the same
//!    `V` (it folded in all `n` contributions, and folding is order-free), and only before it
//!    leaves the round, hence before it promises any coordinated ballot.
//!
//! # Why it is correct
//!
//! **Uniform agreement, first round.** Say some rank decides `V` in the first round: every
//! participant accepted `(Fast, V)`, each before it left the round (invariant 5). Take any
//! coordinated ballot `c` whose coordinator proposes: its coordinator is a participant, so it
//! accepted `(Fast, V)` before it promised `c`, and its own promise, part of its complete
//! gather, reports an accepted value at `Fast` or higher. The highest accepted ballot `c'` in
//! the gather is then `Fast`, whose value is `V` (invariant 5), or a coordinated ballot below
//! `c`, whose value is `V` by induction over ballots; so `c` proposes `V`, and every
//! coordinated decision is `V`. Conversely, a coordinated decision first and a first-round
//! decision later: the first-round one is still `V`'s, which every coordinated proposal (by the
//! same argument) equals, because the first round's decision needs every participant's
//! acceptance, coordinators included.
//!
//! **Uniform agreement.** Say the coordinator of ballot `b` decides `V`. Take any ballot
//! `c > b` whose coordinator proposes. That coordinator knows index `b` failed, so `b` died
//! before `c` began its ballot, hence after deciding: `c` was alive when `b` decided, was not
//! skipped (invariant 1), and so accepted `(b, V)` before the decision. It had not promised `c`
//! then (invariant 2), so its own promise for `c`, part of its own gather, reports an accepted
//! ballot `>= b`. The highest accepted ballot `c'` it sees is in `b..c`; by induction over
//! ballots the value of every ballot in `b..c` that was proposed is `V` (invariant 3), so `c`
//! proposes `V`. Every decision is a `Commit` of some coordinator's decided value, so every
//! rank that decides, including one that decides and then dies, decides `V`.
//!
//! **Validity.** A value is proposed from a complete gather at some ballot `c`: `failed` is
//! the union of contributed detector knowledge and non-contributors, all failed
//! (invariant 1); every participant not in it contributed in `c`'s gather (invariant 4). A
//! rank that decides was alive when the gather completed, so it was not a non-contributor: its
//! contribution, with its failures known at entry, is in the value. The flag is the AND of the
//! contributors' flags and `unacknowledged_failure` is computed from exactly the contributors'
//! acknowledged sets, so `agree`'s `ProcFailed` rule holds.
//!
//! **Termination.** Failure-free, the first round ends at every rank. Otherwise every live rank
//! learns of the failure (eventual completeness) and leaves it, if it has not decided there;
//! ranks that did decide answer every later message with a commit and push the commit to their
//! tree neighbours once they learn of a failure. From there, after the last failure the
//! detectors converge, and
//! every live rank computes the same ballot, the lowest live index (a ballot seen in a message
//! is never above it: its coordinator knew every index below it failed), and the same tree with
//! the same effective edges, which connect all live ranks. If some live rank has decided, its
//! commit floods that tree (decided ranks push it to every effective neighbour). Otherwise,
//! every rank sends its current up message to its effective parent and its down message to its
//! effective children (repairs resend after every change), a message of a higher ballot makes
//! the receiver adopt it rather than drop it, and messages between live ranks are delivered:
//! the gather completes bottom-up, the accept goes down and its acknowledgements up, and the
//! coordinator decides and commits. Each repair costs O(log n) messages, each new coordinator
//! one more pass of the four traversals: the delay is Δ + O(depth · δ) per failure (semantics §1).
//!
//! # Bounded memory
//!
//! An instance holds its failed set, the replies of its effective children and O(log n)
//! bookkeeping per ballot; [`Participants`] is shared. [`AgreementSeries`] keeps at most two
//! instances per communicator.
//!
//! # Example
//!
//! Three ranks, failure-free, driven by a trivial in-memory network:
//!
//! ```
//! use std::sync::Arc;
//! use runthrough_core::agreement::{Agreement, Contribution, Participants};
//! use runthrough_core::RankSet;
//!
//! let participants = Arc::new(Participants::new(3, &RankSet::new()));
//! let mut ranks: Vec<Agreement> =
//!     (0..3).map(|r| Agreement::new(r, participants.clone())).collect();
//! for r in 0..3 {
//!     ranks[r].start(Contribution { flag: 0b110 | r as u32, ..Contribution::default() });
//! }
//! let mut messages = 0;
//! let mut depth = 0;
//! loop {
//!     let mut sent = Vec::new();
//!     for r in 0..3 {
//!         while let Some((to, message)) = ranks[r].poll_transmit() {
//!             sent.push((r as u32, to, message));
//!         }
//!     }
//!     if sent.is_empty() { break; }
//!     messages += sent.len();
//!     depth += 1;
//!     for (from, to, message) in sent {
//!         ranks[to as usize].handle_message(from, message);
//!     }
//! }
//! // The first round: two passes of two rounds, a message per rank per round.
//! assert_eq!((messages, depth), (2 * 2 * 3, 4));
//! for rank in &ranks {
//!     let decision = rank.decision().unwrap();
//!     assert!(decision.failed.is_empty());
//!     assert_eq!(decision.flag, 0b110);
//! }
//! ```

mod instance;
mod message;
mod participants;
mod series;
mod tree;
mod value;

pub use instance::Agreement;
pub use message::{DecodeError, Message};
pub use participants::{Participants, FAST_ROUND_MAX};
pub use series::AgreementSeries;
pub use value::{Ballot, Contribution, Decision, Summary};

#[cfg(test)]
pub(crate) use message::tests::message as arbitrary_message;
#[cfg(test)]
mod tests;

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Spawning under rtrun (docs/src/semantics.md §8): a parent asks the launcher to start ranks on its
//! control connection and waits for the answer; the launcher tells every rank the address of
//! each rank it started (`joined`), and the parents' verdict lets the new ranks run or has them
//! killed (the protocol: [`runthrough_net::launch`]).
//!
//! World ranks up to the job's universe (`RT_UNIVERSE`) have room in this rank's tables from
//! the start; a spawned rank is *absent* there until the launcher says it joined: nothing is
//! sent to it and it counts toward no majority. Once joined it is a peer like any other,
//! connected on first use (its death is confirmed by the launcher, so no heartbeat overlay is
//! needed for it).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use runthrough_core::{Error, Result, WorldRank};
use runthrough_net::launch::{self, SpawnLine, SpawnWhat};

use super::tcp::{lock, Tcp};
use crate::transport::{Programs, SpawnKey, SpawnRequest};

/// How often a parent waiting for the launcher's answer looks whether it halted meanwhile.
const ANSWER_POLL: Duration = Duration::from_millis(100);

impl Tcp {
    /// Whether world rank `peer` is room for a spawned rank that has not joined.
    pub(super) fn is_absent(&self, peer: u32) -> bool {
        self.peers_get(peer)
            .is_some_and(|p| p.absent.load(Ordering::SeqCst))
    }

    /// `peer`'s published address, waiting up to `wait` for it when it is a spawned rank not
    /// joined yet (its `joined` line may still be on its way on the control connection).
    pub(super) fn address_of(&self, peer: u32, wait: Duration) -> Option<String> {
        let until = Instant::now() + wait;
        let mut table = lock(&self.addresses);
        loop {
            if let Some(address) = table.get(peer as usize).cloned().flatten() {
                return Some(address);
            }
            let now = Instant::now();
            if now >= until || !self.is_absent(peer) {
                return None;
            }
            table = self
                .address_added
                .wait_timeout(table, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The launcher says spawned rank `peer` registered at `address`: it joins this rank's
    /// peers (connected on first use) and its majority.
    pub(crate) fn join_peer(&self, peer: u32, address: String) {
        let Some(p) = self.peers_get(peer) else {
            return;
        };
        {
            let mut table = lock(&self.addresses);
            if table.len() <= peer as usize {
                table.resize(peer as usize + 1, None);
            }
            table[peer as usize] = Some(address);
        }
        self.address_added.notify_all();
        if p.absent.swap(false, Ordering::SeqCst) {
            self.detect(&super::tcp::Cause::Notice, |d, now| {
                d.join(WorldRank(peer), now)
            });
        }
    }

    /// The launcher's answer to a spawn request arrived (or, `None`, the control connection
    /// ended: every waiting spawn fails).
    pub(crate) fn spawn_answered(&self, answer: Option<launch::SpawnReply>) {
        let mut replies = lock(&self.spawn_replies);
        match answer {
            Some((key, outcome)) => {
                replies.insert(key, outcome);
            }
            None => self.control_lost.store(true, Ordering::SeqCst),
        }
        drop(replies);
        self.spawn_replied.notify_all();
    }

    /// A parent's part of a spawn: asks the launcher and waits for its answer (the first world
    /// rank of the new ranks). Every parent of the spawn asks with the same key; the launcher
    /// starts the ranks once and answers each.
    pub(super) fn request_spawn(&self, request: &SpawnRequest) -> Result<(WorldRank, u32)> {
        let refuse = |reason: String| Err(Error::Spawn { reason });
        if lock(&self.control).is_none() {
            return refuse(
                "this rank has no launcher that starts ranks (only rtrun does; Hydra, srun and a \
                 singleton cannot)"
                    .into(),
            );
        }
        let key = (request.key.0, request.key.1 .0);
        let what = match &request.programs {
            Programs::Job => SpawnWhat::Job {
                count: request.count,
                args: request.args.clone(),
            },
            Programs::Root(root) => SpawnWhat::Root(root.0),
            Programs::Given(programs) => SpawnWhat::Programs(programs.clone()),
        };
        let line = SpawnLine {
            context: key.0,
            key_rank: key.1,
            parents: request.parents.iter().map(|w| w.0).collect(),
            what,
        }
        .line();
        if !self.tell_launcher_now(&line) {
            return refuse("the launcher's connection failed".into());
        }
        let mut replies = lock(&self.spawn_replies);
        loop {
            if let Some(outcome) = replies.get(&key) {
                return outcome
                    .clone()
                    .map(|(first, count)| (WorldRank(first), count))
                    .or_else(&refuse);
            }
            if self.control_lost.load(Ordering::SeqCst) || self.is_done() {
                return refuse("the launcher went away".into());
            }
            replies = self
                .spawn_replied
                .wait_timeout(replies, ANSWER_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The parents decided: the launcher lets the new ranks run, or kills them.
    pub(super) fn send_verdict(&self, key: SpawnKey, run: bool) {
        let _ = self.tell_launcher_now(&launch::verdict_line(key.0, key.1 .0, run));
    }
}

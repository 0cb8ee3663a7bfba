// SPDX-License-Identifier: MIT OR Apache-2.0
//! A small network of engines for the engine's tests: it delivers packets in a seeded random
//! order (first in, first out between each pair, as every transport does), runs the combining
//! steps that wait for a thread, and kills ranks.

use std::collections::{BTreeMap, VecDeque};

use super::{Engine, Output, Schedule};
use crate::packet::{Outgoing, Packet, WORLD_CONTEXT};
use crate::{Result, WorldRank};

pub(super) struct Net {
    pub(super) engines: Vec<Engine>,
    pub(super) dead: Vec<bool>,
    wire: BTreeMap<(u32, u32), VecDeque<Packet>>,
    rng: u64,
    /// Collective messages of one pair may overtake each other (two threads of a rank
    /// that run its schedules put their sends on the wire in either order).
    pub(super) shuffle: bool,
}

impl Net {
    pub(super) fn new(n: u32, seed: u64) -> Self {
        Net::with_cap(n, seed, None)
    }

    pub(super) fn with_cap(n: u32, seed: u64, cap: Option<usize>) -> Self {
        let engines = (0..n)
            .map(|r| {
                let mut engine = Engine::new(WorldRank(r), n);
                if let Some(cap) = cap {
                    engine.set_unexpected_cap(cap, n);
                }
                engine
            })
            .collect();
        Net {
            engines,
            dead: vec![false; n as usize],
            wire: BTreeMap::new(),
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            shuffle: false,
        }
    }

    pub(super) fn random(&mut self, below: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng % below as u64) as usize
    }

    pub(super) fn push(&mut self, from: u32, out: Outgoing) {
        for (to, packet) in out {
            self.wire.entry((from, to.0)).or_default().push_back(packet);
        }
    }

    pub(super) fn start(&mut self, rank: u32, schedule: Schedule) -> Result<u64> {
        let mut out = Outgoing::new();
        let id = self.engines[rank as usize].start_schedule(
            WORLD_CONTEXT,
            rank,
            |_| Ok(schedule),
            &mut out,
        );
        self.push(rank, out);
        id
    }

    /// What every live engine wants sent now (flow-control packets, queued messages).
    pub(super) fn flush(&mut self) {
        for rank in 0..self.engines.len() as u32 {
            if self.dead[rank as usize] {
                continue;
            }
            let engine = &mut self.engines[rank as usize];
            let mut out = engine.take_due();
            let transmit = engine.poll_transmit();
            engine.end_transmit(&transmit);
            out.extend(transmit.packets);
            self.push(rank, out);
        }
    }

    /// Delivers one packet, chosen at random among the pairs' heads; false when none is
    /// in flight.
    pub(super) fn step(&mut self) -> bool {
        self.flush();
        self.wire.retain(|_, queue| !queue.is_empty());
        if self.wire.is_empty() {
            return false;
        }
        let pick = self.random(self.wire.len());
        let (&(from, to), queue) = self.wire.iter_mut().nth(pick).expect("in range");
        let collective = |p: &Packet| matches!(p, Packet::Collective { .. });
        let overtakable = queue.iter().take_while(|p| collective(p)).count();
        let at = if self.shuffle && overtakable > 1 {
            (self.rng as usize >> 7) % overtakable
        } else {
            0
        };
        let packet = queue.remove(at).expect("not empty");
        if !self.dead[to as usize] {
            let mut out = Outgoing::new();
            self.engines[to as usize].handle_packet(WorldRank(from), packet, &mut out);
            self.push(to, out);
        }
        true
    }

    pub(super) fn run(&mut self) {
        let mut steps = 0;
        while self.step() {
            steps += 1;
            assert!(steps < 1_000_000, "the network never quiesced");
        }
    }

    pub(super) fn poll(&mut self, rank: u32, id: u64) -> Option<Result<Vec<u8>>> {
        let mut out = Outgoing::new();
        let outcome = self.engines[rank as usize].poll_schedule(WORLD_CONTEXT, id, &mut out);
        self.push(rank, out);
        outcome.map(|outcome| outcome.map(Output::into_bytes))
    }

    /// Delivers packets and runs the combining steps that wait for a thread (every
    /// unlocked one, and the caller's steps of the schedules `callers` names: rank, id,
    /// with `caller` as their function) until nothing moves.
    pub(super) fn settle(&mut self, callers: &[(u32, u64)], caller: fn(&[u8], &mut [u8])) {
        let mut rounds = 0;
        loop {
            let mut moved = self.step();
            for rank in 0..self.engines.len() as u32 {
                if self.dead[rank as usize] {
                    continue;
                }
                let mut out = Outgoing::new();
                let engine = &mut self.engines[rank as usize];
                while let Some(mut combine) = engine.take_unlocked_combine() {
                    combine.run();
                    engine.combined(combine, &mut out);
                    moved = true;
                }
                for &(_, id) in callers.iter().filter(|&&(r, _)| r == rank) {
                    if let Some(mut combine) = engine.take_combine(WORLD_CONTEXT, id) {
                        caller(&combine.input, &mut combine.inout);
                        engine.combined(combine, &mut out);
                        moved = true;
                    }
                }
                self.push(rank, out);
            }
            if !moved {
                return;
            }
            rounds += 1;
            assert!(rounds < 1_000_000, "the network never quiesced");
        }
    }

    /// `rank` dies: it runs no more, and every live rank's detector learns it.
    pub(super) fn kill(&mut self, rank: u32) {
        self.dead[rank as usize] = true;
        for other in 0..self.engines.len() as u32 {
            if !self.dead[other as usize] {
                let mut out = Outgoing::new();
                self.engines[other as usize].handle_peer_failed(WorldRank(rank), &mut out);
                self.push(other, out);
            }
        }
    }
}

impl Net {
    /// Starts agreement call `call` on the world at `rank`.
    pub(super) fn start_call(
        &mut self,
        rank: u32,
        call: super::AgreementCall,
    ) -> Result<super::AgreementCallId> {
        let mut out = Outgoing::new();
        let id = self.engines[rank as usize].start_agreement_call(WORLD_CONTEXT, call, &mut out);
        self.push(rank, out);
        id
    }

    /// Polls agreement call `id` at `rank`: its outcome, if it has one, and the decisions the
    /// poll took.
    pub(super) fn poll_call(
        &mut self,
        rank: u32,
        id: super::AgreementCallId,
    ) -> (Option<Result<super::Agreed>>, super::Decided) {
        let mut out = Outgoing::new();
        let mut decided = super::Decided::default();
        let outcome = self.engines[rank as usize].poll_agreement_call(id, &mut out, &mut decided);
        // As the runtime does: what a pending poll pushed is dropped (the engine sends it with
        // the flow-control packets instead).
        if outcome.is_some() {
            self.push(rank, out);
        }
        (outcome, decided)
    }

    /// Runs the network and polls agreement call `ids[r]` at each live rank `r` until every
    /// one has its outcome.
    pub(super) fn finish_calls(
        &mut self,
        ids: &[(u32, super::AgreementCallId)],
    ) -> Vec<Result<super::Agreed>> {
        let mut outcomes: Vec<Option<Result<super::Agreed>>> = vec![None; ids.len()];
        for _ in 0..1000 {
            self.run();
            for (at, &(rank, id)) in ids.iter().enumerate() {
                if outcomes[at].is_none() {
                    outcomes[at] = self.poll_call(rank, id).0;
                }
            }
            if outcomes.iter().all(Option::is_some) {
                return outcomes.into_iter().flatten().collect();
            }
        }
        panic!("the agreement calls never finished: {outcomes:?}");
    }
}

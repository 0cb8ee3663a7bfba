// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated network: one FIFO queue of packets in flight per ordered pair of ranks (the
//! transports keep per-pair order); the seed picks which pair delivers next.

use std::collections::VecDeque;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use runthrough_core::packet::Packet;

/// Packets in flight between `ranks` ranks.
#[derive(Debug)]
pub struct Network {
    ranks: u32,
    /// Queue of the pair (from, to) at `from * ranks + to`.
    queues: Vec<VecDeque<Packet>>,
    /// The pairs whose queue is not empty, in no particular order ...
    busy: Vec<usize>,
    /// ... and where each pair is in `busy` (`usize::MAX`: not there).
    at: Vec<usize>,
    /// Packets in flight.
    in_flight: usize,
    /// Test-only fault: the `n`-th point-to-point data packet put on the network (0-based) is
    /// silently dropped, so that the checks can be seen to catch a lost message.
    drop_data_at: Option<u64>,
    data_seen: u64,
}

impl Network {
    /// An empty network between `ranks` ranks.
    pub fn new(ranks: u32, drop_data_at: Option<u64>) -> Self {
        let pairs = (ranks * ranks) as usize;
        Network {
            ranks,
            queues: (0..pairs).map(|_| VecDeque::new()).collect(),
            busy: Vec::new(),
            at: vec![usize::MAX; pairs],
            in_flight: 0,
            drop_data_at,
            data_seen: 0,
        }
    }

    /// `from` transmits `packet` to `to`. Returns false when the test-only fault dropped it.
    pub fn send(&mut self, from: u32, to: u32, packet: Packet) -> bool {
        if matches!(packet, Packet::Data { .. }) {
            let index = self.data_seen;
            self.data_seen += 1;
            if self.drop_data_at == Some(index) {
                return false;
            }
        }
        let pair = (from * self.ranks + to) as usize;
        if self.queues[pair].is_empty() {
            self.at[pair] = self.busy.len();
            self.busy.push(pair);
        }
        self.queues[pair].push_back(packet);
        self.in_flight += 1;
        true
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.in_flight == 0
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Takes the head packet of a pair chosen by `rng` among those with packets in flight:
    /// (from, to, packet).
    pub fn take_next(&mut self, rng: &mut ChaCha8Rng) -> Option<(u32, u32, Packet)> {
        if self.busy.is_empty() {
            return None;
        }
        let pair = self.busy[rng.gen_range(0..self.busy.len())];
        let packet = self.queues[pair]
            .pop_front()
            .expect("a busy pair has a packet");
        self.in_flight -= 1;
        if self.queues[pair].is_empty() {
            let at = self.at[pair];
            self.busy.swap_remove(at);
            if let Some(&moved) = self.busy.get(at) {
                self.at[moved] = at;
            }
            self.at[pair] = usize::MAX;
        }
        let (from, to) = (pair as u32 / self.ranks, pair as u32 % self.ranks);
        Some((from, to, packet))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn data(tag: i32) -> Packet {
        Packet::Data {
            context: 0,
            source: 0,
            tag,
            payload: Vec::new(),
        }
    }

    /// Each pair delivers in order, whatever the interleaving of pairs.
    #[test]
    fn pairs_deliver_in_fifo_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut network = Network::new(3, None);
        for tag in 0..20 {
            network.send(0, 1, data(tag));
            network.send(2, 1, data(100 + tag));
            network.send(1, 0, data(200 + tag));
        }
        let mut last = [-1i32; 3];
        while let Some((from, _, packet)) = network.take_next(&mut rng) {
            let Packet::Data { tag, .. } = packet else {
                unreachable!()
            };
            assert!(tag > last[from as usize]);
            last[from as usize] = tag;
        }
        assert!(network.is_empty());
    }
}

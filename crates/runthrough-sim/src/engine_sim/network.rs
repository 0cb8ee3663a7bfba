// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated network: one FIFO queue of packets in flight per ordered pair of ranks (the
//! transports keep per-pair order); the seed picks which pair delivers next. The queues are
//! `runthrough_core::simnet`'s, shared with `runthrough::simulate`.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use runthrough_core::packet::Packet;

/// Packets in flight between `ranks` ranks: the network model of `runthrough_core::simnet`
/// (which `runthrough::simulate` runs programs over too), with this simulator's test-only
/// packet loss.
#[derive(Debug)]
pub struct Network {
    inner: runthrough_core::simnet::Network<Packet>,
    /// Test-only fault: the `n`-th point-to-point data packet put on the network (0-based) is
    /// silently dropped, so that the checks can be seen to catch a lost message.
    drop_data_at: Option<u64>,
    data_seen: u64,
}

impl Network {
    /// An empty network between `ranks` ranks.
    pub fn new(ranks: u32, drop_data_at: Option<u64>) -> Self {
        Network {
            inner: runthrough_core::simnet::Network::new(ranks),
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
        self.inner.send(from, to, packet);
        true
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    /// Takes the head packet of a pair chosen by `rng` among those with packets in flight:
    /// (from, to, packet).
    pub fn take_next(&mut self, rng: &mut ChaCha8Rng) -> Option<(u32, u32, Packet)> {
        if self.inner.busy() == 0 {
            return None;
        }
        let choice = rng.gen_range(0..self.inner.busy());
        self.inner.take(choice)
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

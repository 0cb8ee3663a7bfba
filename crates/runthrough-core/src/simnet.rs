// SPDX-License-Identifier: MIT OR Apache-2.0
//! The simulated network both simulators use (the engine simulator of `runthrough-sim`, and
//! `runthrough::simulate`, which runs a program's own rank code): one FIFO queue of items in
//! flight per ordered pair of ranks, as the transports keep per-pair order, and a choice of the
//! pair that delivers next that the caller makes (with its seeded random numbers: there are none
//! in this crate). An item is whatever the simulator carries: a packet, or the news that the
//! sender died.
//!
//! ```
//! use runthrough_core::simnet::Network;
//! let mut network = Network::new(3);
//! network.send(0, 1, "a");
//! network.send(0, 1, "b");
//! network.send(2, 1, "c");
//! assert_eq!(network.busy(), 2);
//! // The caller picks among the busy pairs (here always the first): per pair, FIFO order.
//! let mut seen = Vec::new();
//! while let Some((from, to, item)) = network.take(0) {
//!     seen.push((from, to, item));
//! }
//! assert_eq!(seen.iter().filter(|s| s.0 == 0).map(|s| s.2).collect::<String>(), "ab");
//! assert!(network.is_empty());
//! ```

use std::collections::VecDeque;

/// Items in flight between `ranks` ranks, queued per ordered pair.
///
/// # Invariants
/// `busy` lists exactly the pairs whose queue is not empty, each once, and `at[pair]` is its
/// position there (`usize::MAX` for an idle pair); `in_flight` is the sum of the queues' lengths.
#[derive(Debug, Clone)]
pub struct Network<T> {
    ranks: u32,
    /// Queue of the pair (from, to) at `from * ranks + to`.
    queues: Vec<VecDeque<T>>,
    /// The pairs whose queue is not empty, in the order [`Network::take`] numbers them.
    busy: Vec<usize>,
    /// Where each pair is in `busy` (`usize::MAX`: not there).
    at: Vec<usize>,
    in_flight: usize,
}

impl<T> Network<T> {
    /// An empty network between `ranks` ranks.
    pub fn new(ranks: u32) -> Self {
        let pairs = (ranks as usize) * (ranks as usize);
        Network {
            ranks,
            queues: (0..pairs).map(|_| VecDeque::new()).collect(),
            busy: Vec::new(),
            at: vec![usize::MAX; pairs],
            in_flight: 0,
        }
    }

    /// Queues `item` from `from` to `to`, behind what that pair already carries.
    ///
    /// # Panics
    /// If `from` or `to` is not a rank of the network.
    pub fn send(&mut self, from: u32, to: u32, item: T) {
        assert!(from < self.ranks && to < self.ranks, "no such pair");
        let pair = (from * self.ranks + to) as usize;
        if self.queues[pair].is_empty() {
            self.at[pair] = self.busy.len();
            self.busy.push(pair);
        }
        self.queues[pair].push_back(item);
        self.in_flight += 1;
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.in_flight == 0
    }

    /// Items in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Pairs with items in flight: [`Network::take`] chooses among `0..busy()`.
    pub fn busy(&self) -> usize {
        self.busy.len()
    }

    /// Takes the first item of the `choice`-th busy pair: (from, to, item); `None` when
    /// `choice` is not below [`Network::busy`].
    pub fn take(&mut self, choice: usize) -> Option<(u32, u32, T)> {
        let pair = *self.busy.get(choice)?;
        let item = self.queues[pair]
            .pop_front()
            .expect("a busy pair has an item");
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
        Some((from, to, item))
    }

    /// Drops everything in flight.
    pub fn clear(&mut self) {
        for &pair in &self.busy {
            self.queues[pair].clear();
            self.at[pair] = usize::MAX;
        }
        self.busy.clear();
        self.in_flight = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the sends and the choices, each pair delivers in the order it was sent,
        /// nothing is lost or duplicated, and the busy list stays exact.
        #[test]
        fn pairs_deliver_in_fifo_order_whatever_the_choices(
            sends in proptest::collection::vec((0u32..4, 0u32..4), 0..200),
            choices in proptest::collection::vec(0usize..16, 0..400),
        ) {
            let mut network = Network::new(4);
            for (i, &(from, to)) in sends.iter().enumerate() {
                network.send(from, to, i);
            }
            let mut last: std::collections::HashMap<(u32, u32), usize> = Default::default();
            let mut taken = 0;
            let mut choices = choices.into_iter().cycle();
            while !network.is_empty() {
                let busy = network.busy();
                prop_assert!(busy > 0);
                let choice = choices.next().unwrap_or(0) % busy;
                let (from, to, i) = network.take(choice).expect("a busy pair");
                prop_assert_eq!(sends[i], (from, to));
                if let Some(&before) = last.get(&(from, to)) {
                    prop_assert!(i > before);
                }
                last.insert((from, to), i);
                taken += 1;
                prop_assert_eq!(network.in_flight(), sends.len() - taken);
            }
            prop_assert_eq!(taken, sends.len());
            prop_assert!(network.take(0).is_none());
        }
    }

    #[test]
    fn clear_drops_everything_and_the_network_works_on() {
        let mut network = Network::new(2);
        network.send(0, 1, 1);
        network.send(1, 0, 2);
        network.clear();
        assert!(network.is_empty() && network.busy() == 0);
        network.send(1, 1, 3);
        assert_eq!(network.take(0), Some((1, 1, 3)));
    }
}

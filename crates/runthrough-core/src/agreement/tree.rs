// SPDX-License-Identifier: MIT OR Apache-2.0
//! The binomial tree of one ballot, over virtual indices, computed on the fly.
//!
//! The tree of ballot `b` spans participant indices `b..n`; participant `i` has virtual index
//! `v = i - b`. `parent(v) = v & (v - 1)` (clear the lowest set bit), and the children of `v` are
//! `v + 2^j` for every `2^j` below the lowest set bit of `v` (for the root: every `2^j < n - b`)
//! that stays below `n - b`. The depth of `v` is its number of set bits: at most `log2(n - b)`.
//! Nothing here allocates per rank: the root of 2^20 ranks has 20 children.

/// The binomial tree of one ballot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tree {
    /// The ballot: participant index of the root.
    pub(crate) base: u32,
    /// Number of nodes: participants with index `>= base`.
    pub(crate) nodes: u32,
}

impl Tree {
    /// The tree of ballot `base` over `participants` participants.
    pub(crate) fn new(base: u32, participants: u32) -> Self {
        Tree {
            base,
            nodes: participants.saturating_sub(base),
        }
    }

    /// Virtual index of participant `index` (which must be `>= base`).
    pub(crate) fn virtual_of(&self, index: u32) -> u32 {
        index - self.base
    }

    /// Participant index of virtual index `v`.
    pub(crate) fn index_of(&self, v: u32) -> u32 {
        self.base + v
    }

    /// The static parent of `v`, or `None` for the root.
    pub(crate) fn parent(v: u32) -> Option<u32> {
        (v != 0).then(|| v & (v - 1))
    }

    /// The static children of `v`, largest subtree first.
    pub(crate) fn children(&self, v: u32) -> Children {
        let nodes = self.nodes as u64;
        let limit = if v == 0 {
            nodes
        } else {
            (v & v.wrapping_neg()) as u64
        };
        // The largest power of two below `limit` (0 when there is none).
        let step = if limit <= 1 {
            0
        } else {
            1u64 << (63 - (limit - 1).leading_zeros())
        };
        Children {
            v: v as u64,
            step,
            nodes,
        }
    }
}

/// Iterator over the static children of a node, largest subtree first.
#[derive(Debug, Clone)]
pub(crate) struct Children {
    v: u64,
    step: u64,
    nodes: u64,
}

impl Iterator for Children {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        while self.step > 0 {
            let child = self.v + self.step;
            self.step >>= 1;
            if child < self.nodes {
                return Some(child as u32);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_and_parent_are_inverse_and_every_node_is_reached_once() {
        for nodes in 0..70u32 {
            let tree = Tree::new(3, nodes + 3);
            let mut seen = vec![0u32; nodes as usize];
            for v in 0..nodes {
                for c in tree.children(v) {
                    assert_eq!(Tree::parent(c), Some(v), "nodes={nodes} v={v} c={c}");
                    seen[c as usize] += 1;
                }
                if let Some(p) = Tree::parent(v) {
                    assert!(tree.children(p).any(|c| c == v));
                }
            }
            for (v, &count) in seen.iter().enumerate() {
                assert_eq!(count, u32::from(v != 0), "nodes={nodes} v={v}");
            }
        }
    }

    #[test]
    fn root_of_a_million_has_twenty_children_largest_first() {
        let tree = Tree::new(0, 1 << 20);
        let children: Vec<u32> = tree.children(0).collect();
        assert_eq!(children.len(), 20);
        assert_eq!(children[0], 1 << 19);
        assert_eq!(*children.last().unwrap(), 1);
        assert_eq!(tree.children(12).collect::<Vec<_>>(), vec![14, 13]);
        assert_eq!(tree.children(7).count(), 0);
    }
}

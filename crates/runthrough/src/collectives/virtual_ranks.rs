// SPDX-License-Identifier: MIT OR Apache-2.0
//! Virtual ranks: positions among a collective's participants, rotated so that a chosen
//! participant (usually the root) is virtual rank 0, and the binomial tree over them.
//!
//! With participants `p₀ < p₁ < … < pₙ₋₁` (the OK ranks of G) and origin `o`, virtual rank `v`
//! is participant `p₍ᵥ₊ₒ₎ ₘₒ𝒹 ₙ`. In the binomial tree rooted at virtual 0, the parent of
//! `v > 0` is `v` without its lowest set bit, and the subtree of `v` is the virtual range
//! `v .. min(v + lowbit(v), n)` (`0 .. n` for the root): so a subtree is contiguous, and the
//! children of `v` in decreasing order of subtree size are `v + m` for `m = lowbit(v)/2, …, 1`.

use runthrough_core::Rank;

use crate::collectives::call::CollectiveCall;

/// The participants of one call, seen from one origin.
#[derive(Debug, Clone, Copy)]
pub(super) struct VirtualRanks<'a> {
    participants: &'a [Rank],
    origin: usize,
    /// The number of participants.
    pub(super) n: usize,
    /// This rank's virtual rank.
    pub(super) me: usize,
}

impl<'a> VirtualRanks<'a> {
    /// Virtual ranks of `call`'s participants with participant index `origin` as virtual 0.
    pub(super) fn new(call: &'a CollectiveCall<'_>, origin: usize) -> Self {
        let n = call.participants.len();
        VirtualRanks {
            participants: &call.participants,
            origin,
            n,
            me: (call.index + n - origin) % n,
        }
    }

    /// The comm rank of virtual rank `v` (taken modulo n).
    pub(super) fn rank(&self, v: usize) -> Rank {
        self.participants[(v % self.n + self.origin) % self.n]
    }

    /// The binomial tree: this rank's parent (None at the root) and the width of its subtree as a
    /// power of two (its lowest set bit; the smallest power of two >= n at the root).
    pub(super) fn binomial(&self) -> (Option<usize>, usize) {
        if self.me == 0 {
            (None, self.n.next_power_of_two())
        } else {
            let low = 1 << self.me.trailing_zeros();
            (Some(self.me - low), low)
        }
    }

    /// This rank's children in the binomial tree, largest subtree first, each with the end of
    /// its virtual range.
    pub(super) fn children(&self) -> Vec<(usize, usize)> {
        let (_, width) = self.binomial();
        let mut children = Vec::new();
        let mut m = width / 2;
        while m > 0 {
            let child = self.me + m;
            if child < self.n {
                children.push((child, (child + m).min(self.n)));
            }
            m /= 2;
        }
        children
    }
}

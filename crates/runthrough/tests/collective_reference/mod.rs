// SPDX-License-Identifier: MIT OR Apache-2.0
//! Every collective run with deterministic inputs and checked against a sequential reference
//! computed over a given participant list (all ranks, or the survivors after `validate_global`):
//! shared by `collectives.rs` and `collectives_failure.rs`.
#![allow(dead_code)] // each test binary uses its own subset

use runthrough::{Comm, Error, Op, Partition, PartitionMut, Rank, UserOp};

/// What an output slot holds before a collective: slots that must stay untouched keep it.
pub const SENTINEL: i64 = -7_777;

/// One kind of collective call, as the tests run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Barrier,
    Broadcast,
    Reduce,
    ReduceWith,
    AllReduce,
    AllReduceLarge,
    AllReduceWith,
    Gather,
    GatherVarcount,
    AllGather,
    Scatter,
    ScatterVarcount,
    AllToAll,
    AllToAllLarge,
    Scan,
    ScanWith,
    Exscan,
    ExscanWith,
}

/// Every kind.
pub const ALL: &[Kind] = &[
    Kind::Barrier,
    Kind::Broadcast,
    Kind::Reduce,
    Kind::ReduceWith,
    Kind::AllReduce,
    Kind::AllReduceLarge,
    Kind::AllReduceWith,
    Kind::Gather,
    Kind::GatherVarcount,
    Kind::AllGather,
    Kind::Scatter,
    Kind::ScatterVarcount,
    Kind::AllToAll,
    Kind::AllToAllLarge,
    Kind::Scan,
    Kind::ScanWith,
    Kind::Exscan,
    Kind::ExscanWith,
];

impl Kind {
    /// Whether the call has a root.
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Kind::Broadcast
                | Kind::Reduce
                | Kind::ReduceWith
                | Kind::Gather
                | Kind::GatherVarcount
                | Kind::Scatter
                | Kind::ScatterVarcount
        )
    }

    /// Whether every participant's result depends on every other participant (so a dead
    /// participant fails the call at every survivor).
    pub fn everyone_depends_on_everyone(self) -> bool {
        matches!(
            self,
            Kind::Barrier
                | Kind::AllReduce
                | Kind::AllReduceLarge
                | Kind::AllReduceWith
                | Kind::AllGather
                | Kind::AllToAll
                | Kind::AllToAllLarge
        )
    }
}

/// Rank `rank`'s i-th input element: small integers, zeros and negatives included.
pub fn value(rank: u64, i: usize) -> i64 {
    ((rank as i64) * 37 + (i as i64) * 11 + 3) % 101 - 50
}

fn values(rank: u64, count: usize) -> Vec<i64> {
    (0..count).map(|i| value(rank, i)).collect()
}

/// The predefined operations checked on integers.
pub const INTEGER_OPS: &[Op] = &[
    Op::Sum,
    Op::Product,
    Op::Min,
    Op::Max,
    Op::LogicalAnd,
    Op::LogicalOr,
    Op::LogicalXor,
    Op::BitAnd,
    Op::BitOr,
    Op::BitXor,
];

/// The predefined operations checked on floats (integer-valued, so exact in any order).
pub const FLOAT_OPS: &[Op] = &[
    Op::Sum,
    Op::Min,
    Op::Max,
    Op::LogicalAnd,
    Op::LogicalOr,
    Op::LogicalXor,
];

/// The sequential meaning of `op` on integers: `a op b`.
pub fn apply_i64(op: Op, a: i64, b: i64) -> i64 {
    match op {
        Op::Sum => a.wrapping_add(b),
        Op::Product => a.wrapping_mul(b),
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::LogicalAnd => i64::from(a != 0 && b != 0),
        Op::LogicalOr => i64::from(a != 0 || b != 0),
        Op::LogicalXor => i64::from((a != 0) != (b != 0)),
        Op::BitAnd => a & b,
        Op::BitOr => a | b,
        Op::BitXor => a ^ b,
    }
}

/// The sequential meaning of `op` on floats.
pub fn apply_f64(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Sum => a + b,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::LogicalAnd => f64::from(u8::from(a != 0.0 && b != 0.0)),
        Op::LogicalOr => f64::from(u8::from(a != 0.0 || b != 0.0)),
        Op::LogicalXor => f64::from(u8::from((a != 0.0) != (b != 0.0))),
        _ => unreachable!("not checked on floats"),
    }
}

/// Folds `items` in order with `f(acc, next)`.
fn fold<T: Clone>(items: &[T], f: impl Fn(&T, &T) -> T) -> Option<T> {
    let (first, rest) = items.split_first()?;
    Some(rest.iter().fold(first.clone(), |acc, x| f(&acc, x)))
}

/// Elementwise reference of a reduction over `ranks` in rank order.
fn reference_i64(op: Op, ranks: &[Rank], count: usize) -> Vec<i64> {
    (0..count)
        .map(|i| {
            let column: Vec<i64> = ranks.iter().map(|&r| value(r.into(), i)).collect();
            fold(&column, |&a, &b| apply_i64(op, a, b)).expect("a participant")
        })
        .collect()
}

fn reference_f64(op: Op, ranks: &[Rank], count: usize) -> Vec<f64> {
    (0..count)
        .map(|i| {
            let column: Vec<f64> = ranks.iter().map(|&r| value(r.into(), i) as f64).collect();
            fold(&column, |&a, &b| apply_f64(op, a, b)).expect("a participant")
        })
        .collect()
}

/// A 2x2 matrix of wrapping u64: the product is associative and not commutative.
pub type Matrix = [u64; 4];

/// `inout = input · inout` for 2x2 matrices, wrapping.
pub fn matrix_product(input: &[Matrix], inout: &mut [Matrix]) {
    for (b, a) in inout.iter_mut().zip(input) {
        let m = |x: u64, y: u64| x.wrapping_mul(y);
        *b = [
            m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
            m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
            m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
            m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
        ];
    }
}

/// Rank `rank`'s i-th matrix.
pub fn matrix(rank: Rank, i: usize) -> Matrix {
    let r = u64::from(rank);
    let i = i as u64;
    [r % 3 + 1, r + 2 + i, 1 + i, r % 2]
}

/// An affine map x -> a·x + b over floats, as [a, b], with a = ±1 and small integer b: the
/// composition is associative, not commutative, and exact in f64.
pub type Affine = [f64; 2];

/// `inout = input ∘ inout` (apply inout first, then input).
pub fn affine_compose(input: &[Affine], inout: &mut [Affine]) {
    for (g, f) in inout.iter_mut().zip(input) {
        *g = [f[0] * g[0], f[0] * g[1] + f[1]];
    }
}

/// Rank `rank`'s i-th affine map.
pub fn affine(rank: Rank, i: usize) -> Affine {
    let a = if matches!((rank + i as u32) % 3, 0) {
        -1.0
    } else {
        1.0
    };
    [a, f64::from(rank) - 5.0 + i as f64]
}

/// The rank-ordered combination `x_first ∘ … ∘ x_last` with an `inout = in ∘ inout` function.
fn ordered<T: Copy>(items: &[T], f: fn(&[T], &mut [T])) -> Option<T> {
    fold(items, |&acc, &next| {
        let mut out = [next];
        f(&[acc], &mut out);
        out[0]
    })
}

fn matrices(ranks: &[Rank], count: usize) -> Vec<Matrix> {
    (0..count)
        .map(|i| {
            let column: Vec<Matrix> = ranks.iter().map(|&r| matrix(r, i)).collect();
            ordered(&column, matrix_product).expect("a participant")
        })
        .collect()
}

fn affines(ranks: &[Rank], count: usize) -> Vec<Affine> {
    (0..count)
        .map(|i| {
            let column: Vec<Affine> = ranks.iter().map(|&r| affine(r, i)).collect();
            ordered(&column, affine_compose).expect("a participant")
        })
        .collect()
}

/// gatherv / scatterv layout: rank r has r % 4 elements, blocks placed in decreasing rank
/// order with one unused element before each.
pub fn varcount_layout(size: u32) -> (Vec<usize>, Vec<usize>, usize) {
    let counts: Vec<usize> = (0..size).map(|r| (r % 4) as usize).collect();
    let mut displacements = vec![0; size as usize];
    let mut next = 0;
    for r in (0..size as usize).rev() {
        next += 1;
        displacements[r] = next;
        next += counts[r];
    }
    (counts, displacements, next)
}

/// Runs one `kind` call with `root` and checks its results against the sequential reference
/// over `participants` (the OK ranks of G, in order). Returns the call's error, if any, without
/// checking anything.
pub fn check(world: &Comm, kind: Kind, root: Rank, participants: &[Rank]) -> Result<(), Error> {
    let me = world.rank();
    let size = world.size();
    let n = size as usize;
    let is_participant = |r: Rank| participants.contains(&r);
    match kind {
        Kind::Barrier => world.barrier(),
        Kind::Broadcast => {
            let count = 5;
            let mut buf = if me == root {
                values(root.into(), count)
            } else {
                vec![SENTINEL; count]
            };
            world.broadcast(&mut buf, root)?;
            assert_eq!(buf, values(root.into(), count), "broadcast at {me}");
            Ok(())
        }
        Kind::Reduce => {
            let count = 4;
            for &op in INTEGER_OPS {
                let mut recv = vec![SENTINEL; count];
                world.reduce(&values(me.into(), count), Some(&mut recv), op, root)?;
                if me == root {
                    assert_eq!(recv, reference_i64(op, participants, count), "{op:?}");
                } else {
                    assert_eq!(recv, vec![SENTINEL; count], "non-root buffer untouched");
                }
            }
            for &op in FLOAT_OPS {
                let send: Vec<f64> = values(me.into(), count).iter().map(|&v| v as f64).collect();
                let mut recv = vec![0.5; count];
                world.reduce(&send, (me == root).then_some(&mut recv[..]), op, root)?;
                if me == root {
                    assert_eq!(recv, reference_f64(op, participants, count), "{op:?}");
                }
            }
            Ok(())
        }
        Kind::ReduceWith => {
            let count = 3;
            let product = UserOp::new(matrix_product, false);
            let send: Vec<Matrix> = (0..count).map(|i| matrix(me, i)).collect();
            let mut recv = vec![[0; 4]; count];
            world.reduce_with(&send, Some(&mut recv), &product, root)?;
            if me == root {
                assert_eq!(recv, matrices(participants, count), "matrix product");
            }
            let compose = UserOp::new(affine_compose, false);
            let send: Vec<Affine> = (0..count).map(|i| affine(me, i)).collect();
            let mut recv = vec![[0.0; 2]; count];
            world.reduce_with(&send, Some(&mut recv), &compose, root)?;
            if me == root {
                assert_eq!(recv, affines(participants, count), "affine composition");
            }
            let sum = UserOp::new(
                |input: &[u64], inout: &mut [u64]| {
                    for (b, a) in inout.iter_mut().zip(input) {
                        *b = b.wrapping_add(*a);
                    }
                },
                true,
            );
            let mut recv = [0u64];
            world.reduce_with(&[u64::from(me) + 1], Some(&mut recv), &sum, root)?;
            if me == root {
                let expected: u64 = participants.iter().map(|&r| u64::from(r) + 1).sum();
                assert_eq!(recv[0], expected, "commutative user sum");
            }
            Ok(())
        }
        Kind::AllReduce => {
            let count = 4;
            for &op in INTEGER_OPS {
                let mut recv = vec![SENTINEL; count];
                world.all_reduce(&values(me.into(), count), &mut recv, op)?;
                assert_eq!(
                    recv,
                    reference_i64(op, participants, count),
                    "{op:?} at {me}"
                );
            }
            for &op in FLOAT_OPS {
                let send: Vec<f64> = values(me.into(), count).iter().map(|&v| v as f64).collect();
                let mut recv = vec![0.5; count];
                world.all_reduce(&send, &mut recv, op)?;
                assert_eq!(
                    recv,
                    reference_f64(op, participants, count),
                    "{op:?} at {me}"
                );
            }
            let mut one = [0u8];
            world.all_reduce(&[1u8], &mut one, Op::Sum)?;
            assert_eq!(usize::from(one[0]), participants.len() % 256);
            Ok(())
        }
        Kind::AllReduceLarge => {
            // 80 KB per rank: the ring algorithm.
            let count = 10_000;
            for op in [Op::Sum, Op::Max, Op::BitXor] {
                let mut recv = vec![SENTINEL; count];
                world.all_reduce(&values(me.into(), count), &mut recv, op)?;
                assert_eq!(
                    recv,
                    reference_i64(op, participants, count),
                    "{op:?} at {me}"
                );
            }
            let send: Vec<f64> = values(me.into(), count).iter().map(|&v| v as f64).collect();
            let mut recv = vec![0.5; count];
            world.all_reduce(&send, &mut recv, Op::Sum)?;
            assert_eq!(recv, reference_f64(Op::Sum, participants, count));
            // A large non-commutative one: recursive doubling, in rank order.
            let count = 3_000;
            let product = UserOp::new(matrix_product, false);
            let send: Vec<Matrix> = (0..count).map(|i| matrix(me, i)).collect();
            let mut recv = vec![[0; 4]; count];
            world.all_reduce_with(&send, &mut recv, &product)?;
            assert_eq!(recv, matrices(participants, count), "large matrix product");
            Ok(())
        }
        Kind::AllReduceWith => {
            let count = 3;
            let product = UserOp::new(matrix_product, false);
            let send: Vec<Matrix> = (0..count).map(|i| matrix(me, i)).collect();
            let mut recv = vec![[0; 4]; count];
            world.all_reduce_with(&send, &mut recv, &product)?;
            assert_eq!(
                recv,
                matrices(participants, count),
                "matrix product at {me}"
            );
            let compose = UserOp::new(affine_compose, false);
            let send: Vec<Affine> = (0..count).map(|i| affine(me, i)).collect();
            let mut recv = vec![[0.0; 2]; count];
            world.all_reduce_with(&send, &mut recv, &compose)?;
            assert_eq!(recv, affines(participants, count), "affine at {me}");
            Ok(())
        }
        Kind::Gather => {
            let count = 3;
            let mut recv = vec![SENTINEL; n * count];
            world.gather(&values(me.into(), count), Some(&mut recv), root)?;
            if me == root {
                for r in 0..size {
                    let slot = &recv[r as usize * count..(r as usize + 1) * count];
                    if is_participant(r) {
                        assert_eq!(slot, values(r.into(), count), "slot {r}");
                    } else {
                        assert_eq!(slot, vec![SENTINEL; count], "NULL slot {r} untouched");
                    }
                }
            }
            Ok(())
        }
        Kind::GatherVarcount => {
            let (counts, displacements, len) = varcount_layout(size);
            let mut recv = vec![SENTINEL; len];
            let send = values(me.into(), counts[me as usize]);
            world.gather_varcount(
                &send,
                Some(PartitionMut::new(&mut recv, &counts, &displacements)),
                root,
            )?;
            if me == root {
                let mut expected = vec![SENTINEL; len];
                for &r in participants {
                    let at = displacements[r as usize];
                    let count = counts[r as usize];
                    expected[at..at + count].copy_from_slice(&values(r.into(), count));
                }
                assert_eq!(recv, expected, "gatherv");
            }
            Ok(())
        }
        Kind::AllGather => {
            let count = 2;
            let mut recv = vec![SENTINEL; n * count];
            world.all_gather(&values(me.into(), count), &mut recv)?;
            let mut expected = vec![SENTINEL; n * count];
            for &r in participants {
                let at = r as usize * count;
                expected[at..at + count].copy_from_slice(&values(r.into(), count));
            }
            assert_eq!(recv, expected, "all_gather at {me}");
            Ok(())
        }
        Kind::Scatter => {
            let count = 3;
            let send: Vec<i64> = (0..size).flat_map(|r| values(r.into(), count)).collect();
            let mut recv = vec![SENTINEL; count];
            world.scatter((me == root).then_some(&send[..]), &mut recv, root)?;
            assert_eq!(recv, values(me.into(), count), "scatter at {me}");
            Ok(())
        }
        Kind::ScatterVarcount => {
            let (counts, displacements, len) = varcount_layout(size);
            let mut send = vec![SENTINEL; len];
            for r in 0..size as usize {
                let at = displacements[r];
                send[at..at + counts[r]].copy_from_slice(&values(r as u64, counts[r]));
            }
            let mut recv = vec![SENTINEL; counts[me as usize]];
            let partition = Partition::new(&send, &counts, &displacements);
            world.scatter_varcount((me == root).then_some(partition), &mut recv, root)?;
            assert_eq!(
                recv,
                values(me.into(), counts[me as usize]),
                "scatterv at {me}"
            );
            Ok(())
        }
        Kind::AllToAll | Kind::AllToAllLarge => {
            // 2 elements (Bruck) or 200 (1600 bytes per block: pairwise exchange).
            let count = if kind == Kind::AllToAll { 2 } else { 200 };
            let block =
                |from: Rank, to: Rank| values(u64::from(from) * 1000 + u64::from(to), count);
            let send: Vec<i64> = (0..size).flat_map(|to| block(me, to)).collect();
            let mut recv = vec![SENTINEL; n * count];
            world.all_to_all(&send, &mut recv)?;
            for from in 0..size {
                let slot = &recv[from as usize * count..(from as usize + 1) * count];
                if is_participant(from) {
                    assert_eq!(slot, block(from, me), "all_to_all at {me} from {from}");
                } else {
                    assert_eq!(slot, vec![SENTINEL; count], "NULL slot {from} untouched");
                }
            }
            Ok(())
        }
        Kind::Scan | Kind::Exscan => {
            let count = 3;
            let below: Vec<Rank> = participants.iter().copied().filter(|&r| r < me).collect();
            let upto: Vec<Rank> = participants.iter().copied().filter(|&r| r <= me).collect();
            for op in [Op::Sum, Op::Max, Op::BitXor, Op::LogicalOr] {
                let mut recv = vec![SENTINEL; count];
                if kind == Kind::Scan {
                    world.scan(&values(me.into(), count), &mut recv, op)?;
                    assert_eq!(recv, reference_i64(op, &upto, count), "scan {op:?} at {me}");
                } else {
                    world.exscan(&values(me.into(), count), &mut recv, op)?;
                    let expected = if below.is_empty() {
                        vec![SENTINEL; count]
                    } else {
                        reference_i64(op, &below, count)
                    };
                    assert_eq!(recv, expected, "exscan {op:?} at {me}");
                }
            }
            let send: Vec<f64> = values(me.into(), count).iter().map(|&v| v as f64).collect();
            let mut recv = vec![0.5; count];
            if kind == Kind::Scan {
                world.scan(&send, &mut recv, Op::Sum)?;
                assert_eq!(recv, reference_f64(Op::Sum, &upto, count));
            } else {
                world.exscan(&send, &mut recv, Op::Sum)?;
                if !below.is_empty() {
                    assert_eq!(recv, reference_f64(Op::Sum, &below, count));
                }
            }
            Ok(())
        }
        Kind::ScanWith | Kind::ExscanWith => {
            let count = 2;
            let below: Vec<Rank> = participants.iter().copied().filter(|&r| r < me).collect();
            let upto: Vec<Rank> = participants.iter().copied().filter(|&r| r <= me).collect();
            let ranks = if kind == Kind::ScanWith {
                &upto
            } else {
                &below
            };
            let product = UserOp::new(matrix_product, false);
            let send: Vec<Matrix> = (0..count).map(|i| matrix(me, i)).collect();
            let mut recv = vec![[9; 4]; count];
            let compose = UserOp::new(affine_compose, false);
            let send_affine: Vec<Affine> = (0..count).map(|i| affine(me, i)).collect();
            let mut recv_affine = vec![[9.0; 2]; count];
            if kind == Kind::ScanWith {
                world.scan_with(&send, &mut recv, &product)?;
                world.scan_with(&send_affine, &mut recv_affine, &compose)?;
            } else {
                world.exscan_with(&send, &mut recv, &product)?;
                world.exscan_with(&send_affine, &mut recv_affine, &compose)?;
            }
            if ranks.is_empty() {
                assert_eq!(recv, vec![[9; 4]; count], "exscan at the first participant");
                assert_eq!(recv_affine, vec![[9.0; 2]; count]);
            } else {
                assert_eq!(recv, matrices(ranks, count), "{kind:?} matrices at {me}");
                assert_eq!(
                    recv_affine,
                    affines(ranks, count),
                    "{kind:?} affine at {me}"
                );
            }
            Ok(())
        }
    }
}

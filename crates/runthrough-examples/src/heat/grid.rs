// SPDX-License-Identifier: MIT OR Apache-2.0
//! The numerical part of the heat solver: the grid, its fixed decomposition into blocks, one
//! block's Jacobi sweep, and the sequential reference.
//!
//! The global field is `(n + 2) x (n + 2)` values, row-major: an `n x n` interior and a fixed
//! boundary ring. Every interior cell is updated with the same expression in the same order
//! ([`stencil`]) by the distributed solver and by [`reference`], so the two agree bit for bit.

use std::ops::Range;

/// One Jacobi update: the mean of the four neighbours, always summed as
/// `(north + south) + (west + east)`.
#[inline]
pub fn stencil(north: f64, south: f64, west: f64, east: f64) -> f64 {
    0.25 * ((north + south) + (west + east))
}

/// The initial field of an `n x n` problem, boundary included: a hot top edge, a left edge that
/// warms linearly from bottom to top, a lukewarm right edge, a cold bottom edge, and a
/// pseudo-random interior (so that every cell's history is different).
pub fn initial_field(n: usize) -> Vec<f64> {
    let width = n + 2;
    (0..width * width)
        .map(|at| initial_value(n, at / width, at % width))
        .collect()
}

/// One value of [`initial_field`]: `row` and `col` count from 0 at the boundary.
pub fn initial_value(n: usize, row: usize, col: usize) -> f64 {
    let width = n + 2;
    if row == 0 {
        1.0
    } else if row == width - 1 {
        0.0
    } else if col == 0 {
        1.0 - row as f64 / (width - 1) as f64
    } else if col == width - 1 {
        0.25
    } else {
        unit_noise((row * width + col) as u64)
    }
}

/// A deterministic value in `[0, 0.5)` from a cell index.
fn unit_noise(index: u64) -> f64 {
    let mut x = index.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64 * 0.5
}

/// The failure-free answer, computed sequentially: `iterations` Jacobi sweeps of the whole field.
pub fn reference(n: usize, iterations: u64) -> Vec<f64> {
    let width = n + 2;
    let mut old = initial_field(n);
    let mut new = old.clone();
    for _ in 0..iterations {
        for row in 1..=n {
            for col in 1..=n {
                let at = row * width + col;
                new[at] = stencil(old[at - width], old[at + width], old[at - 1], old[at + 1]);
            }
        }
        std::mem::swap(&mut old, &mut new);
    }
    old
}

/// A side of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// Towards row 0.
    North,
    /// Towards the last row.
    South,
    /// Towards column 0.
    West,
    /// Towards the last column.
    East,
}

impl Side {
    /// All four sides, in the order used for message tags.
    pub const ALL: [Side; 4] = [Side::North, Side::South, Side::West, Side::East];

    /// The side facing this one from the neighbour.
    pub fn opposite(self) -> Side {
        match self {
            Side::North => Side::South,
            Side::South => Side::North,
            Side::West => Side::East,
            Side::East => Side::West,
        }
    }

    /// 0..4, for message tags.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The fixed logical decomposition of the interior into `columns x rows` blocks, numbered
/// row-major. It never changes: failures move the ownership of blocks, not their shape.
#[derive(Debug, Clone)]
pub struct Decomposition {
    n: usize,
    columns: usize,
    rows: usize,
    column_bounds: Vec<usize>,
    row_bounds: Vec<usize>,
}

impl Decomposition {
    /// Splits an `n x n` interior into `blocks` blocks, as square a grid of blocks as `blocks`
    /// allows (`columns` the largest divisor not above its square root).
    ///
    /// # Errors
    /// When `blocks` is 0 or the grid is too small to give every block at least one cell.
    pub fn new(n: usize, blocks: usize) -> Result<Self, String> {
        if blocks == 0 {
            return Err("at least one block is needed".into());
        }
        let columns = (1..=blocks)
            .take_while(|c| c * c <= blocks)
            .filter(|c| blocks.is_multiple_of(*c))
            .last()
            .unwrap_or(1);
        let rows = blocks / columns;
        if n < rows {
            return Err(format!(
                "a {n} x {n} grid cannot be split into {columns} x {rows} blocks: use --size {rows} or more"
            ));
        }
        let bounds = |parts: usize| (0..=parts).map(|i| i * n / parts).collect::<Vec<_>>();
        Ok(Decomposition {
            n,
            columns,
            rows,
            column_bounds: bounds(columns),
            row_bounds: bounds(rows),
        })
    }

    /// The interior's side length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// How many blocks.
    pub fn blocks(&self) -> usize {
        self.columns * self.rows
    }

    /// The block grid's shape, `(columns, rows)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.columns, self.rows)
    }

    /// The interior rows of `block` (0-based interior coordinates).
    pub fn rows_of(&self, block: usize) -> Range<usize> {
        let r = block / self.columns;
        self.row_bounds[r]..self.row_bounds[r + 1]
    }

    /// The interior columns of `block`.
    pub fn columns_of(&self, block: usize) -> Range<usize> {
        let c = block % self.columns;
        self.column_bounds[c]..self.column_bounds[c + 1]
    }

    /// The block across `side` of `block`, if any (none at the domain's boundary).
    pub fn neighbor(&self, block: usize, side: Side) -> Option<usize> {
        let (c, r) = (block % self.columns, block / self.columns);
        match side {
            Side::North => (r > 0).then(|| block - self.columns),
            Side::South => (r + 1 < self.rows).then(|| block + self.columns),
            Side::West => (c > 0).then(|| block - 1),
            Side::East => (c + 1 < self.columns).then(|| block + 1),
        }
    }

    /// The initial state of `block`, cut out of [`initial_field`].
    pub fn initial_block(&self, block: usize) -> Block {
        let (rows, columns) = (self.rows_of(block), self.columns_of(block));
        let cells = (rows.start..rows.end + 2)
            .flat_map(|row| {
                (columns.start..columns.end + 2).map(move |col| initial_value(self.n, row, col))
            })
            .collect();
        Block::from_cells(rows.len(), columns.len(), cells)
    }

    /// `block` cut out of a global field, with a ring of ghost cells.
    pub fn cut(&self, block: usize, field: &[f64]) -> Block {
        let (rows, columns) = (self.rows_of(block), self.columns_of(block));
        let (height, width) = (rows.len(), columns.len());
        let global_width = self.n + 2;
        let mut cells = Vec::with_capacity((height + 2) * (width + 2));
        for row in rows.start..rows.end + 2 {
            let start = row * global_width + columns.start;
            cells.extend_from_slice(&field[start..start + width + 2]);
        }
        Block::from_cells(height, width, cells)
    }

    /// `block` from checkpointed cells, ghosts included.
    ///
    /// # Panics
    /// When `cells` does not have the block's length.
    pub fn block_from_cells(&self, block: usize, cells: Vec<f64>) -> Block {
        Block::from_cells(
            self.rows_of(block).len(),
            self.columns_of(block).len(),
            cells,
        )
    }

    /// How many values `block` holds, ghosts included.
    pub fn cells_len(&self, block: usize) -> usize {
        (self.rows_of(block).len() + 2) * (self.columns_of(block).len() + 2)
    }

    /// Writes `block`'s interior into a global field.
    pub fn paste(&self, block: usize, cells: &[f64], field: &mut [f64]) {
        let (rows, columns) = (self.rows_of(block), self.columns_of(block));
        let width = columns.len();
        let global_width = self.n + 2;
        for (i, row) in rows.enumerate() {
            let from = (i + 1) * (width + 2) + 1;
            let to = (row + 1) * global_width + columns.start + 1;
            field[to..to + width].copy_from_slice(&cells[from..from + width]);
        }
    }
}

/// One block's state: `height x width` interior cells inside a ring of ghost cells (the
/// neighbours' edges, or the fixed boundary), row-major.
#[derive(Debug, Clone)]
pub struct Block {
    height: usize,
    width: usize,
    cells: Vec<f64>,
    scratch: Vec<f64>,
}

impl Block {
    /// A block from its cells, ghosts included (`(height + 2) * (width + 2)` values).
    ///
    /// # Panics
    /// When `cells` has the wrong length.
    pub fn from_cells(height: usize, width: usize, cells: Vec<f64>) -> Self {
        assert_eq!(cells.len(), (height + 2) * (width + 2), "block cell count");
        Block {
            height,
            width,
            scratch: cells.clone(),
            cells,
        }
    }

    /// All cells, ghosts included: what a checkpoint keeps.
    pub fn cells(&self) -> &[f64] {
        &self.cells
    }

    /// The interior cells along `side`: what the neighbour across `side` needs.
    pub fn edge(&self, side: Side) -> Vec<f64> {
        let stride = self.width + 2;
        match side {
            Side::North => self.cells[stride + 1..stride + 1 + self.width].to_vec(),
            Side::South => {
                let start = self.height * stride + 1;
                self.cells[start..start + self.width].to_vec()
            }
            Side::West => (1..=self.height)
                .map(|r| self.cells[r * stride + 1])
                .collect(),
            Side::East => (1..=self.height)
                .map(|r| self.cells[r * stride + self.width])
                .collect(),
        }
    }

    /// How many values the edge (and the ghost row or column) on `side` holds.
    pub fn edge_len(&self, side: Side) -> usize {
        match side {
            Side::North | Side::South => self.width,
            Side::West | Side::East => self.height,
        }
    }

    /// Fills the ghost cells on `side` with the neighbour's edge.
    ///
    /// # Panics
    /// When `values` is not [`Block::edge_len`] long.
    pub fn set_ghost(&mut self, side: Side, values: &[f64]) {
        assert_eq!(values.len(), self.edge_len(side), "ghost length");
        let stride = self.width + 2;
        match side {
            Side::North => self.cells[1..1 + self.width].copy_from_slice(values),
            Side::South => {
                let start = (self.height + 1) * stride + 1;
                self.cells[start..start + self.width].copy_from_slice(values)
            }
            Side::West => {
                for (r, v) in values.iter().enumerate() {
                    self.cells[(r + 1) * stride] = *v;
                }
            }
            Side::East => {
                for (r, v) in values.iter().enumerate() {
                    self.cells[(r + 1) * stride + self.width + 1] = *v;
                }
            }
        }
    }

    /// One Jacobi sweep of the interior from the current cells and ghosts.
    pub fn sweep(&mut self) {
        let stride = self.width + 2;
        // The ghosts carry over (the fixed boundary lives there); the interior is recomputed.
        self.scratch.copy_from_slice(&self.cells);
        for row in 1..=self.height {
            for col in 1..=self.width {
                let at = row * stride + col;
                let c = &self.cells;
                self.scratch[at] = stencil(c[at - stride], c[at + stride], c[at - 1], c[at + 1]);
            }
        }
        std::mem::swap(&mut self.cells, &mut self.scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sweeping blocks with exchanged ghosts gives the sequential answer bit for bit.
    #[test]
    fn blocks_with_exchanged_ghosts_match_the_reference() {
        let n = 13;
        let decomposition = Decomposition::new(n, 6).unwrap();
        let mut blocks: Vec<Block> = (0..6).map(|b| decomposition.initial_block(b)).collect();
        for _ in 0..7 {
            let edges: Vec<Vec<(Side, Vec<f64>)>> = (0..6)
                .map(|b| Side::ALL.iter().map(|&s| (s, blocks[b].edge(s))).collect())
                .collect();
            for (b, block_edges) in edges.iter().enumerate() {
                for (side, edge) in block_edges {
                    if let Some(nb) = decomposition.neighbor(b, *side) {
                        blocks[nb].set_ghost(side.opposite(), edge);
                    }
                }
            }
            blocks.iter_mut().for_each(Block::sweep);
        }
        let mut field = initial_field(n);
        for (b, block) in blocks.iter().enumerate() {
            decomposition.paste(b, block.cells(), &mut field);
        }
        let want = reference(n, 7);
        assert!(field
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn initial_blocks_are_cut_from_the_initial_field() {
        let decomposition = Decomposition::new(10, 4).unwrap();
        let field = initial_field(10);
        for b in 0..4 {
            assert_eq!(
                decomposition.initial_block(b).cells(),
                decomposition.cut(b, &field).cells()
            );
        }
    }

    #[test]
    fn decomposition_is_as_square_as_possible() {
        assert_eq!(Decomposition::new(64, 8).unwrap().shape(), (2, 4));
        assert_eq!(Decomposition::new(64, 9).unwrap().shape(), (3, 3));
        assert_eq!(Decomposition::new(64, 7).unwrap().shape(), (1, 7));
        assert!(Decomposition::new(3, 7).is_err());
    }
}

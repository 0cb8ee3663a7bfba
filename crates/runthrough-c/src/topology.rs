// SPDX-License-Identifier: MIT OR Apache-2.0
//! Process topologies (MPI-4.0 chapter 8): `MPI_Dims_create`, Cartesian communicators
//! (`MPI_Cart_create`, `_coords`, `_rank`, `_shift`, `_get`, `_sub`, `MPI_Cartdim_get`) and
//! `MPI_Topo_test`; graph and distributed-graph communicators are in `crate::graph`.
//!
//! A Cartesian communicator is an ordinary communicator (made by the runtime's split, so with
//! its failure semantics) whose table entry carries the grid ([`Cart`]). Ranks are never
//! reordered (`reorder` is accepted and ignored, as MPI allows): grid coordinates follow the
//! rank in row-major order. The grid is local knowledge: `MPI_Cart_shift` returns a neighbour
//! that has failed like any other; its failure shows when the program communicates with it.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::point_to_point::array;
use crate::runtime::{agreement_comm_of, comm_of, with_runtime};

/// The Cartesian grid of a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cart {
    dims: Vec<c_int>,
    periods: Vec<bool>,
}

impl Cart {
    /// The grid coordinates of `rank` (row-major: the last dimension varies fastest).
    fn coords(&self, rank: c_int) -> Vec<c_int> {
        let mut rest = rank;
        let mut coords = vec![0; self.dims.len()];
        for (coord, &dim) in coords.iter_mut().zip(&self.dims).rev() {
            *coord = rest % dim;
            rest /= dim;
        }
        coords
    }

    /// The rank at `coords`; a coordinate out of range wraps in a periodic dimension.
    ///
    /// # Errors
    /// `MPI_ERR_ARG` for a coordinate out of range in a non-periodic dimension.
    fn rank(&self, coords: &[c_int]) -> Result<c_int, Failure> {
        let mut rank: i64 = 0;
        for (i, ((&coord, &dim), &periodic)) in
            coords.iter().zip(&self.dims).zip(&self.periods).enumerate()
        {
            let coord = match self.wrap(i64::from(coord), dim, periodic) {
                Some(c) => c,
                None => {
                    return Err(Failure::new(
                        MPI_ERR_ARG,
                        format!(
                            "coordinate {coord} is outside dimension {i} (0..{dim}, not periodic)"
                        ),
                    ))
                }
            };
            rank = rank * i64::from(dim) + coord;
        }
        Ok(rank as c_int)
    }

    /// `coord` in `0..dim`, wrapped when `periodic`; `None` when out of range otherwise.
    fn wrap(&self, coord: i64, dim: c_int, periodic: bool) -> Option<i64> {
        let dim = i64::from(dim);
        if periodic {
            Some(coord.rem_euclid(dim))
        } else {
            (0..dim).contains(&coord).then_some(coord)
        }
    }

    fn size(&self) -> i64 {
        self.dims.iter().map(|&d| i64::from(d)).product()
    }
}

/// The topology of a communicator's table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Topology {
    Cart(Cart),
    Graph(crate::graph::Graph),
    DistGraph(crate::graph::DistGraph),
}

/// A rank's neighbours: its sources, its destinations, and the order in which its receive
/// blocks pair with a repeated neighbour's blocks ([`Topology::neighbors`]).
pub(crate) type Neighbors = (Vec<c_int>, Vec<c_int>, Vec<usize>);

impl Topology {
    /// Rank `me`'s neighbours, (sources, destinations), in the order the neighbourhood
    /// collectives number their blocks: in a grid, for each dimension the rank one step down
    /// then the one one step up (`MPI_PROC_NULL` past a non-periodic edge), the same list both
    /// ways; in a graph, its neighbours both ways; in a distributed graph, its in- and
    /// out-neighbours. And the order in which the receive blocks pair with
    /// the blocks a rank named several times sends (a permutation of the sources'
    /// positions): the list order in a graph; in a grid, for each dimension the block from
    /// one step up first, then the one from one step down. A block sent one step up arrives
    /// as the block from one step down, as in a grid of at least three ranks; in a periodic
    /// dimension of one or two ranks, where one rank is both neighbours, this keeps it so
    /// (the sender sends its step-down block first, which is the receiver's block from one
    /// step up).
    pub(crate) fn neighbors(&self, me: c_int) -> Neighbors {
        let (sources, destinations) = self.lists(me);
        let order = match self {
            Topology::Cart(_) => (0..sources.len()).map(|i| i ^ 1).collect(),
            _ => (0..sources.len()).collect(),
        };
        (sources, destinations, order)
    }

    fn lists(&self, me: c_int) -> (Vec<c_int>, Vec<c_int>) {
        match self {
            Topology::Cart(cart) => {
                let at = cart.coords(me);
                let mut list = Vec::with_capacity(2 * at.len());
                for d in 0..at.len() {
                    for step in [-1i64, 1] {
                        let coord = i64::from(at[d]) + step;
                        let rank = match cart.wrap(coord, cart.dims[d], cart.periods[d]) {
                            None => MPI_PROC_NULL,
                            Some(c) => {
                                let mut there = at.clone();
                                there[d] = c as c_int;
                                cart.rank(&there).unwrap_or(MPI_PROC_NULL)
                            }
                        };
                        list.push(rank);
                    }
                }
                (list.clone(), list)
            }
            Topology::Graph(graph) => {
                let list = graph.neighbor_list(me);
                (list.clone(), list)
            }
            Topology::DistGraph(graph) => graph.neighbor_lists(),
        }
    }
}

/// The grid of communicator `comm`.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle, `MPI_ERR_TOPOLOGY` for a communicator without a
/// Cartesian topology.
fn cart_of(comm: c_int) -> Result<Cart, Failure> {
    match topology_of(comm).as_deref() {
        Some(Topology::Cart(cart)) => Ok(cart.clone()),
        _ => Err(missing(comm, "Cartesian")),
    }
}

/// The error of a call on `comm` that needs a topology of `kind` it lacks: `MPI_ERR_COMM` for
/// an invalid handle, else `MPI_ERR_TOPOLOGY`.
pub(crate) fn missing(comm: c_int, kind: &str) -> Failure {
    match with_runtime(|runtime| runtime.comm(comm).map(drop)) {
        Err(failure) => failure,
        Ok(()) => Failure::new(
            MPI_ERR_TOPOLOGY,
            format!("communicator {comm} has no {kind} topology"),
        ),
    }
}

/// Registers `made` (a communicator made from `parent`) with `topology` and writes its handle.
pub(crate) fn register_with(
    parent: c_int,
    made: runthrough::Comm,
    topology: Topology,
    newcomm: &crate::errors::Out<c_int>,
) -> Result<(), Failure> {
    let handle = with_runtime(|runtime| {
        let handle = runtime.add_comm(made, parent);
        runtime.comm_mut(handle)?.topology = Some(Arc::new(topology));
        Ok(handle)
    })?;
    newcomm.write(handle);
    Ok(())
}

/// Checks that a communicator made for a grid holds a rank for every point of it: a rank that
/// failed and is recognized in G takes part in no creation, so the grid would have a hole.
fn check_complete(made: &runthrough::Comm, cart: &Cart) -> Result<(), Failure> {
    if i64::from(made.size()) != cart.size() {
        return Err(Failure::new(
            MPIX_ERR_PROC_FAILED,
            format!(
                "the grid has {} points and only {} live ranks for them (a rank of the grid \
                 failed)",
                cart.size(),
                made.size()
            ),
        ));
    }
    Ok(())
}

/// The dimensions of a grid (`ndims` of them at `dims`) and its number of points, checked as
/// `MPI_Cart_create` and `MPI_Cart_map` check them.
///
/// # Safety
/// `dims` is NULL or points at `ndims` readable ints, valid for `'a`.
///
/// # Errors
/// `MPI_ERR_DIMS` for `ndims < 0` or an entry < 1; `MPI_ERR_ARG` for a NULL `dims` with
/// `ndims > 0`.
unsafe fn grid<'a>(ndims: c_int, dims: *const c_int) -> Result<(&'a [c_int], i64), Failure> {
    if ndims < 0 {
        return Err(Failure::new(
            MPI_ERR_DIMS,
            format!("ndims {ndims} is negative"),
        ));
    }
    // SAFETY: forwarded contract; only read.
    let dims = unsafe { array(dims.cast_mut(), ndims, "dims")? };
    if let Some(bad) = dims.iter().find(|&&d| d < 1) {
        return Err(Failure::new(
            MPI_ERR_DIMS,
            format!("dimension {bad} is not positive"),
        ));
    }
    let points = dims
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(i64::from(d)))
        .unwrap_or(i64::MAX);
    Ok((dims, points))
}

/// `MPI_ERR_DIMS` when a grid of `points` does not fit a communicator of `size` ranks.
pub(crate) fn fits(points: i64, size: u32) -> Result<(), Failure> {
    if points > i64::from(size) {
        return Err(Failure::new(
            MPI_ERR_DIMS,
            format!("the grid has {points} points and the communicator {size} ranks"),
        ));
    }
    Ok(())
}

/// `MPI_Cart_map` (MPI-4.0 §8.5.8): the rank this process would have in a grid of `dims` made
/// from `comm` by `MPI_Cart_create` (the same ranks, no reordering: its own rank), or
/// `MPI_UNDEFINED` when the grid leaves it out. Local.
///
/// # Errors
/// `MPI_ERR_DIMS` for `ndims < 0`, an entry of `dims` < 1, or a grid larger than `comm`;
/// `MPI_ERR_ARG` for a NULL array (with `ndims > 0`) or `newrank`.
///
/// # Safety
/// `dims` and `periods` are NULL or point at `ndims` readable ints; `newrank` is NULL or points
/// at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newrank = unsafe { out(newrank, "newrank")? };
        // SAFETY: forwarded contract.
        let (_, points) = unsafe { grid(ndims, dims)? };
        // SAFETY: forwarded contract; only read.
        unsafe { array(periods.cast_mut(), ndims, "periods")? };
        let comm_box = comm_of(comm)?;
        let parent = comm_box.get();
        fits(points, parent.size())?;
        let rank = parent.rank();
        newrank.write(if i64::from(rank) < points {
            rank as c_int
        } else {
            MPI_UNDEFINED
        });
        Ok(())
    })
}

/// `MPI_Cart_create` (MPI-4.0 §8.5.1): a communicator of the first `dims[0]·…·dims[ndims-1]`
/// ranks of `comm_old`, in their order, with that grid; the other ranks get `MPI_COMM_NULL`.
/// Collective over `comm_old` (an `MPI_Comm_split` underneath). `reorder` is ignored.
///
/// # Errors
/// `MPI_ERR_DIMS` for `ndims < 0`, an entry of `dims` < 1, or a grid larger than `comm_old`;
/// `MPI_ERR_ARG` for a NULL array (with `ndims > 0`) or a NULL `comm_cart`;
/// `MPIX_ERR_PROC_FAILED` when a rank of the grid failed (recognized or not).
///
/// # Safety
/// `dims` and `periods` are NULL or point at `ndims` readable ints; `comm_cart` is NULL or
/// points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm_old: c_int,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut c_int,
) -> c_int {
    boundary(comm_old, || {
        // SAFETY: checked for NULL by `out`.
        let comm_cart = unsafe { out(comm_cart, "comm_cart")? };
        // SAFETY: forwarded contract.
        let (dims, points) = unsafe { grid(ndims, dims)? };
        // SAFETY: forwarded contract; only read.
        let periods = unsafe { array(periods.cast_mut(), ndims, "periods")? };
        let cart = Cart {
            periods: periods.iter().map(|&p| p != 0).collect(),
            dims: dims.to_vec(),
        };
        let comm_box = agreement_comm_of(comm_old)?;
        let parent = comm_box.get();
        fits(points, parent.size())?;
        let rank = parent.rank();
        let color = (i64::from(rank) < points).then_some(0);
        match parent.split(color, rank as i32)? {
            None => {
                comm_cart.write(MPI_COMM_NULL);
                Ok(())
            }
            Some(made) => {
                check_complete(&made, &cart)?;
                register_with(comm_old, made, Topology::Cart(cart), &comm_cart)
            }
        }
    })
}

/// `MPI_Cartdim_get`: the number of dimensions.
///
/// # Safety
/// `ndims` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: c_int, ndims: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let ndims = unsafe { out(ndims, "ndims")? };
        ndims.write(cart_of(comm)?.dims.len() as c_int);
        Ok(())
    })
}

/// `MPI_Topo_test`: `MPI_CART`, `MPI_GRAPH` or `MPI_DIST_GRAPH` for a communicator with that
/// topology, `MPI_UNDEFINED` for one without.
///
/// # Safety
/// `status` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: c_int, status: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let status = unsafe { out(status, "status")? };
        let topology = with_runtime(|runtime| Ok(runtime.comm(comm)?.topology.clone()))?;
        status.write(match topology.as_deref() {
            Some(Topology::Cart(_)) => MPI_CART,
            Some(Topology::Graph(_)) => MPI_GRAPH,
            Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
            None => MPI_UNDEFINED,
        });
        Ok(())
    })
}

/// The first `maxdims` entries of a C array of a grid's `ndims` values.
///
/// # Safety
/// `pointer` is NULL or points at `maxdims` writable ints.
unsafe fn grid_array<'a>(
    pointer: *mut c_int,
    maxdims: c_int,
    ndims: usize,
    what: &str,
) -> Result<&'a mut [c_int], Failure> {
    if usize::try_from(maxdims).map_or(true, |m| m < ndims) {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("maxdims {maxdims} is smaller than the grid's {ndims} dimensions"),
        ));
    }
    // SAFETY: forwarded contract.
    let all = unsafe { array(pointer, maxdims, what)? };
    Ok(&mut all[..ndims])
}

/// `MPI_Cart_get`: the grid's dimensions and periodicity, and this rank's coordinates.
///
/// # Errors
/// `MPI_ERR_TOPOLOGY` on a communicator without a grid; `MPI_ERR_ARG` for `maxdims` below the
/// number of dimensions or a NULL array.
///
/// # Safety
/// `dims`, `periods` and `coords` are NULL or point at `maxdims` writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: c_int,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let cart = cart_of(comm)?;
        let n = cart.dims.len();
        // SAFETY: forwarded contract.
        let dims = unsafe { grid_array(dims, maxdims, n, "dims")? };
        // SAFETY: forwarded contract.
        let periods = unsafe { grid_array(periods, maxdims, n, "periods")? };
        // SAFETY: forwarded contract.
        let coords = unsafe { grid_array(coords, maxdims, n, "coords")? };
        let rank = comm_of(comm)?.get().rank() as c_int;
        dims.copy_from_slice(&cart.dims);
        for (out, &p) in periods.iter_mut().zip(&cart.periods) {
            *out = c_int::from(p);
        }
        coords.copy_from_slice(&cart.coords(rank));
        Ok(())
    })
}

/// `MPI_Cart_coords`: the coordinates of `rank`.
///
/// # Errors
/// `MPI_ERR_TOPOLOGY` on a communicator without a grid; `MPI_ERR_RANK` for a rank outside it;
/// `MPI_ERR_ARG` for `maxdims` below the number of dimensions or a NULL `coords`.
///
/// # Safety
/// `coords` is NULL or points at `maxdims` writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: c_int,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let cart = cart_of(comm)?;
        if !(0..cart.size()).contains(&i64::from(rank)) {
            return Err(Failure::new(
                MPI_ERR_RANK,
                format!("rank {rank} is not in the grid of {} ranks", cart.size()),
            ));
        }
        // SAFETY: forwarded contract.
        let coords = unsafe { grid_array(coords, maxdims, cart.dims.len(), "coords")? };
        coords.copy_from_slice(&cart.coords(rank));
        Ok(())
    })
}

/// `MPI_Cart_rank`: the rank at `coords` (wrapped in periodic dimensions).
///
/// # Errors
/// `MPI_ERR_TOPOLOGY` on a communicator without a grid; `MPI_ERR_ARG` for a coordinate out of
/// range in a non-periodic dimension or a NULL pointer.
///
/// # Safety
/// `coords` is NULL or points at as many readable ints as the grid has dimensions; `rank` is
/// NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(
    comm: c_int,
    coords: *const c_int,
    rank: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let cart = cart_of(comm)?;
        // SAFETY: checked for NULL by `out`.
        let rank = unsafe { out(rank, "rank")? };
        // SAFETY: forwarded contract; only read.
        let coords = unsafe { array(coords.cast_mut(), cart.dims.len() as c_int, "coords")? };
        rank.write(cart.rank(coords)?);
        Ok(())
    })
}

/// `MPI_Cart_shift` (MPI-4.0 §8.5.6): the ranks `disp` steps back (`rank_source`) and forward
/// (`rank_dest`) along `direction`; `MPI_PROC_NULL` past the edge of a non-periodic dimension.
/// Local: a neighbour that failed is returned like any other.
///
/// # Errors
/// `MPI_ERR_TOPOLOGY` on a communicator without a grid; `MPI_ERR_ARG` for a direction outside
/// `0..ndims` or a NULL pointer.
///
/// # Safety
/// `rank_source` and `rank_dest` are NULL or point at writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: c_int,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let rank_source = unsafe { out(rank_source, "rank_source")? };
        // SAFETY: checked for NULL by `out`.
        let rank_dest = unsafe { out(rank_dest, "rank_dest")? };
        let cart = cart_of(comm)?;
        let d = usize::try_from(direction)
            .ok()
            .filter(|&d| d < cart.dims.len())
            .ok_or_else(|| {
                Failure::new(
                    MPI_ERR_ARG,
                    format!(
                        "direction {direction} is not a dimension of the grid (0..{})",
                        cart.dims.len()
                    ),
                )
            })?;
        let me = cart.coords(comm_of(comm)?.get().rank() as c_int);
        let neighbour = |step: i64| {
            let coord = i64::from(me[d]) + step;
            match cart.wrap(coord, cart.dims[d], cart.periods[d]) {
                None => MPI_PROC_NULL,
                Some(c) => {
                    let mut at = me.clone();
                    at[d] = c as c_int;
                    cart.rank(&at).unwrap_or(MPI_PROC_NULL)
                }
            }
        };
        rank_source.write(neighbour(-i64::from(disp)));
        rank_dest.write(neighbour(i64::from(disp)));
        Ok(())
    })
}

/// `MPI_Cart_sub` (MPI-4.0 §8.5.7): splits the grid into sub-grids of the dimensions whose
/// `remain_dims` entry is true; each rank gets the communicator of its sub-grid, with that grid
/// (no dimension kept: a communicator of one rank, with a grid of 0 dimensions). Collective.
///
/// # Errors
/// `MPI_ERR_TOPOLOGY` on a communicator without a grid; `MPI_ERR_ARG` for a NULL pointer;
/// `MPIX_ERR_PROC_FAILED` when a rank of the sub-grid failed.
///
/// # Safety
/// `remain_dims` is NULL or points at as many readable ints as the grid has dimensions;
/// `newcomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(
    comm: c_int,
    remain_dims: *const c_int,
    newcomm: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(newcomm, "newcomm")? };
        let cart = cart_of(comm)?;
        // SAFETY: forwarded contract; only read.
        let remain = unsafe {
            array(
                remain_dims.cast_mut(),
                cart.dims.len() as c_int,
                "remain_dims",
            )?
        };
        let comm_box = agreement_comm_of(comm)?;
        let parent = comm_box.get();
        let me = cart.coords(parent.rank() as c_int);
        let mut color: u32 = 0;
        let mut sub = Cart {
            dims: Vec::new(),
            periods: Vec::new(),
        };
        for (i, &keep) in remain.iter().enumerate() {
            if keep != 0 {
                sub.dims.push(cart.dims[i]);
                sub.periods.push(cart.periods[i]);
            } else {
                color = color * cart.dims[i] as u32 + me[i] as u32;
            }
        }
        let made = parent
            .split(Some(color), parent.rank() as i32)?
            .ok_or_else(|| {
                Failure::new(MPI_ERR_INTERN, "a split with a color gave no communicator")
            })?;
        check_complete(&made, &sub)?;
        register_with(comm, made, Topology::Cart(sub), &newcomm)
    })
}

/// The grid of `comm`, for `MPI_Comm_dup` to copy (MPI: a duplicate keeps the topology).
pub(crate) fn topology_of(comm: c_int) -> Option<Arc<Topology>> {
    with_runtime(|runtime| Ok(runtime.comm(comm)?.topology.clone()))
        .ok()
        .flatten()
}

/// `MPI_Dims_create` (MPI-4.0 §8.5.2): fills the zero entries of `dims` so that the product of
/// all entries is `nnodes`, the filled ones as close to each other as possible and in
/// non-increasing order; positive entries are kept. Local; needs no `MPI_Init`.
///
/// # Errors
/// `MPI_ERR_DIMS` for `ndims < 0`, a negative entry, or positive entries whose product does not
/// divide `nnodes` (or, with no zero entry, is not `nnodes`); `MPI_ERR_ARG` for `nnodes < 1` or
/// a NULL `dims` with `ndims > 0`.
///
/// # Safety
/// `dims` is NULL or points at `ndims` readable and writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if ndims < 0 {
            return Err(Failure::new(
                MPI_ERR_DIMS,
                format!("ndims {ndims} is negative"),
            ));
        }
        if nnodes < 1 {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("nnodes {nnodes} is not positive"),
            ));
        }
        // SAFETY: forwarded contract.
        let dims = unsafe { array(dims, ndims, "dims")? };
        let filled = balanced(nnodes as u64, dims)?;
        dims.copy_from_slice(&filled);
        Ok(())
    })
}

/// The entries of `dims` with its zeros filled (see `MPI_Dims_create`).
fn balanced(nnodes: u64, dims: &[c_int]) -> Result<Vec<c_int>, Failure> {
    let mut fixed = 1u64;
    for &d in dims {
        if d < 0 {
            return Err(Failure::new(
                MPI_ERR_DIMS,
                format!("dimension {d} is negative"),
            ));
        }
        if d > 0 {
            fixed = fixed.saturating_mul(d as u64);
        }
    }
    let free = dims.iter().filter(|&&d| d == 0).count();
    if !nnodes.is_multiple_of(fixed) || (free == 0 && fixed != nnodes) {
        return Err(Failure::new(
            MPI_ERR_DIMS,
            format!("the given dimensions (product {fixed}) do not fit {nnodes} nodes"),
        ));
    }
    let mut best = None;
    search(nnodes / fixed, free, u64::MAX, &mut Vec::new(), &mut best);
    let mut chosen = best.map(|(_, f)| f).unwrap_or_default().into_iter();
    Ok(dims
        .iter()
        .map(|&d| match d {
            0 => chosen.next().unwrap_or(1) as c_int,
            d => d,
        })
        .collect())
}

/// How balanced a factorization is, the smaller the better: its spread (largest minus
/// smallest factor); among equal spreads, the larger smallest factor, then the larger second
/// smallest, and so on (21 x 16 x 15 before 20 x 18 x 14, 13 x 9 x 8 x 6 before
/// 13 x 12 x 6 x 6). MPICH chooses so.
type Balance = (u64, std::cmp::Reverse<Vec<u64>>);

/// Finds the factorization of `rest` into `slots` non-increasing factors, each at most `cap`,
/// that extends `prefix` most balanced ([`Balance`]).
fn search(
    rest: u64,
    slots: usize,
    cap: u64,
    prefix: &mut Vec<u64>,
    best: &mut Option<(Balance, Vec<u64>)>,
) {
    if slots == 0 {
        if rest == 1 {
            let spread = match (prefix.first(), prefix.last()) {
                (Some(first), Some(last)) => first - last,
                _ => 0,
            };
            let ascending = prefix.iter().rev().copied().collect();
            let balance = (spread, std::cmp::Reverse(ascending));
            if best.as_ref().is_none_or(|(b, _)| balance < *b) {
                *best = Some((balance, prefix.clone()));
            }
        }
        return;
    }
    if rest == 1 {
        // Every factor left is 1: no search (and no recursion per slot: `slots` is the
        // caller's ndims).
        let filled = prefix.len();
        prefix.resize(filled + slots, 1);
        search(1, 0, cap, prefix, best);
        prefix.truncate(filled);
        return;
    }
    // The divisors of `rest` up to `cap`, largest first: found up to √rest, so that a large
    // prime `nnodes` costs √nnodes steps, not nnodes.
    let mut divisors = Vec::new();
    let mut d = 1;
    while d * d <= rest {
        if rest.is_multiple_of(d) {
            divisors.extend([d, rest / d]);
        }
        d += 1;
    }
    divisors.sort_unstable_by(|a, b| b.cmp(a));
    divisors.dedup();
    // The largest remaining factor is at least the `slots`-th root of `rest`.
    for d in divisors.into_iter().filter(|&d| d <= cap) {
        let below_root = u32::try_from(slots)
            .ok()
            .and_then(|slots| u128::from(d).checked_pow(slots))
            .is_some_and(|power| power < u128::from(rest));
        if below_root {
            break;
        }
        if let (Some(first), Some(((spread, ..), _))) = (prefix.first(), best.as_ref()) {
            if first - d > *spread {
                continue;
            }
        }
        prefix.push(d);
        search(rest / d, slots - 1, d, prefix, best);
        prefix.pop();
    }
}

// The `PMPI_` names of this module's functions.
profiling_names!("topology.rs");

#[cfg(test)]
mod tests {
    use super::balanced;

    #[test]
    fn dims_are_balanced_and_non_increasing() {
        let cases: [(u64, &[i32], &[i32]); 12] = [
            (5616, &[0, 0, 0, 0], &[13, 9, 8, 6]),
            (5040, &[0, 0, 0], &[21, 16, 15]),
            (98784, &[0, 0, 0, 0, 0], &[14, 14, 9, 8, 7]),
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (6, &[0, 3, 0], &[2, 3, 1]),
            (12, &[0, 0, 0], &[3, 2, 2]),
            (16, &[0, 0], &[4, 4]),
            (24, &[0, 0, 0], &[4, 3, 2]),
            (1, &[0, 0, 0], &[1, 1, 1]),
            (36, &[0, 0], &[6, 6]),
            (8, &[2, 0, 2], &[2, 2, 2]),
        ];
        for (nnodes, dims, want) in cases {
            assert_eq!(balanced(nnodes, dims).unwrap(), want, "{nnodes} {dims:?}");
        }
        // Inputs a C caller can give that used to overflow, recurse per dimension or loop
        // nnodes times.
        let many = balanced(6, &[0; 200]).unwrap();
        assert_eq!(&many[..2], &[3, 2]);
        assert!(many[2..].iter().all(|&d| d == 1));
        assert!(balanced(1, &[0; 100_000]).unwrap().iter().all(|&d| d == 1));
        assert_eq!(
            balanced(2_147_483_647, &[0, 0]).unwrap(),
            [2_147_483_647, 1]
        );
        assert_eq!(balanced(1 << 30, &[0, 0]).unwrap(), [1 << 15, 1 << 15]);
        assert!(balanced(7, &[2, 0]).is_err());
        assert!(balanced(6, &[2, 2]).is_err());
        assert!(balanced(6, &[-1, 0]).is_err());
        assert_eq!(
            balanced(6, &[]).map_err(|f| f.class),
            Err(super::MPI_ERR_DIMS)
        );
    }
}

// SPDX-License-Identifier: MIT OR Apache-2.0
//! Graph and distributed-graph topologies (MPI-4.0 §8.5.3-8.5.5): `MPI_Graph_create`,
//! `_get`, `_neighbors(_count)`, `_map`, `MPI_Graphdims_get`, `MPI_Dist_graph_create`,
//! `_create_adjacent`, `_neighbors(_count)`.
//!
//! As for Cartesian grids (`crate::topology`), a graph communicator is an ordinary communicator
//! made by the runtime's fault-tolerant creation (a split for `MPI_Graph_create`, a dup for the
//! distributed graphs) whose table entry carries the graph; ranks are never reordered. The
//! graph is local knowledge: a neighbour that failed is listed like any other. The
//! neighbourhood collectives are not offered.
//!
//! `MPI_Dist_graph_create`, whose edges any rank may give, gathers every rank's edges over the
//! old communicator and agrees there that every rank has them before the dup: every rank gets
//! the graph communicator, or the same error.

use std::os::raw::c_int;

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::point_to_point::array;
use crate::runtime::agreement_comm_of;
use crate::topology::{fits, missing, register_with as register, topology_of, Topology};

/// What `MPI_UNWEIGHTED` points at: an address no program array has (mpi.h takes it).
#[no_mangle]
pub static rt_unweighted: c_int = 0;
/// What `MPI_WEIGHTS_EMPTY` points at.
#[no_mangle]
pub static rt_weights_empty: c_int = 0;

/// The addresses of `MPI_UNWEIGHTED` and `MPI_WEIGHTS_EMPTY`.
fn unweighted_address() -> usize {
    std::ptr::addr_of!(rt_unweighted).addr()
}
fn weights_empty_address() -> usize {
    std::ptr::addr_of!(rt_weights_empty).addr()
}

/// A graph (`MPI_Graph_create`): node i's neighbours are `edges[index[i-1]..index[i]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Graph {
    index: Vec<c_int>,
    edges: Vec<c_int>,
}

impl Graph {
    /// The neighbours of node `rank`, as a list.
    pub(crate) fn neighbor_list(&self, rank: c_int) -> Vec<c_int> {
        self.neighbors(rank as usize).to_vec()
    }

    /// The neighbours of node `rank`.
    fn neighbors(&self, rank: usize) -> &[c_int] {
        let start = if rank == 0 {
            0
        } else {
            self.index[rank - 1] as usize
        };
        &self.edges[start..self.index[rank] as usize]
    }
}

/// This rank's part of a distributed graph: its in- and out-neighbours, with their weights
/// when the graph has weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DistGraph {
    sources: Vec<c_int>,
    source_weights: Vec<c_int>,
    destinations: Vec<c_int>,
    destination_weights: Vec<c_int>,
    weighted: bool,
}

impl DistGraph {
    /// This rank's (in-neighbours, out-neighbours).
    pub(crate) fn neighbor_lists(&self) -> (Vec<c_int>, Vec<c_int>) {
        (self.sources.clone(), self.destinations.clone())
    }
}

/// Whether a weights argument says the graph has none (`MPI_UNWEIGHTED`).
fn unweighted(weights: *const c_int) -> bool {
    weights.addr() == unweighted_address()
}

/// `n` weights at `weights` (`MPI_UNWEIGHTED`: none; `MPI_WEIGHTS_EMPTY`: `n` must be 0).
///
/// # Safety
/// `weights` is one of the two constants, or NULL, or points at `n` readable ints.
unsafe fn weights_at(weights: *const c_int, n: c_int, what: &str) -> Result<Vec<c_int>, Failure> {
    let empty = weights.addr() == weights_empty_address();
    if unweighted(weights) || n == 0 {
        return Ok(vec![1; n.max(0) as usize]);
    }
    if empty {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("MPI_WEIGHTS_EMPTY for {n} {what}"),
        ));
    }
    // SAFETY: forwarded contract; only read.
    Ok(unsafe { array(weights.cast_mut(), n, what) }?.to_vec())
}

/// The graph of `comm`, or `MPI_ERR_TOPOLOGY`.
fn graph_of(comm: c_int) -> Result<Graph, Failure> {
    match topology_of(comm).as_deref() {
        Some(Topology::Graph(graph)) => Ok(graph.clone()),
        _ => Err(missing(comm, "graph")),
    }
}

/// The distributed graph of `comm`, or `MPI_ERR_TOPOLOGY`.
fn dist_graph_of(comm: c_int) -> Result<DistGraph, Failure> {
    match topology_of(comm).as_deref() {
        Some(Topology::DistGraph(graph)) => Ok(graph.clone()),
        _ => Err(missing(comm, "distributed-graph")),
    }
}

/// The graph of `nnodes` nodes given by `index` and `edges`, checked.
///
/// # Safety
/// `index` points at `nnodes` readable ints, `edges` at `index[nnodes-1]`.
unsafe fn graph_at(
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> Result<Graph, Failure> {
    if nnodes < 0 {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("nnodes {nnodes} is negative"),
        ));
    }
    // SAFETY: forwarded contract; only read.
    let index = unsafe { array(index.cast_mut(), nnodes, "index") }?.to_vec();
    if index.windows(2).any(|w| w[1] < w[0]) || index.first().is_some_and(|&i| i < 0) {
        return Err(Failure::new(
            MPI_ERR_ARG,
            "index is not a non-decreasing list of edge counts",
        ));
    }
    let nedges = index.last().copied().unwrap_or(0);
    // SAFETY: forwarded contract; only read.
    let edges = unsafe { array(edges.cast_mut(), nedges, "edges") }?.to_vec();
    if let Some(&bad) = edges.iter().find(|&&e| e < 0 || e >= nnodes) {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("edge to {bad}, not a node of the graph (0..{nnodes})"),
        ));
    }
    Ok(Graph { index, edges })
}

/// `MPI_Graph_create` (MPI-4.0 §8.5.3): a communicator of the first `nnodes` ranks of
/// `comm_old`, in their order, with the graph; the other ranks get `MPI_COMM_NULL`. Collective
/// over `comm_old` (an `MPI_Comm_split` underneath). `reorder` is ignored.
///
/// # Errors
/// `MPI_ERR_ARG` for a negative `nnodes`, a decreasing `index`, an edge to no node or a NULL
/// pointer; `MPI_ERR_DIMS` for more nodes than ranks; `MPIX_ERR_PROC_FAILED` when a rank of
/// the graph failed.
///
/// # Safety
/// `index` points at `nnodes` readable ints, `edges` at `index[nnodes-1]`; `comm_graph` is
/// NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_create(
    comm_old: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut c_int,
) -> c_int {
    boundary(comm_old, || {
        // SAFETY: checked for NULL by `out`.
        let comm_graph = unsafe { out(comm_graph, "comm_graph")? };
        // SAFETY: forwarded contract.
        let graph = unsafe { graph_at(nnodes, index, edges)? };
        let comm_box = agreement_comm_of(comm_old)?;
        let parent = comm_box.get();
        fits(i64::from(nnodes), parent.size())?;
        let rank = parent.rank();
        let color = (rank < nnodes as u32).then_some(0);
        match parent.split(color, rank as i32)? {
            None => {
                comm_graph.write(MPI_COMM_NULL);
                Ok(())
            }
            Some(made) if made.size() != nnodes as u32 => Err(Failure::new(
                MPIX_ERR_PROC_FAILED,
                format!(
                    "the graph has {nnodes} nodes and only {} live ranks for them",
                    made.size()
                ),
            )),
            Some(made) => register(comm_old, made, Topology::Graph(graph), &comm_graph),
        }
    })
}

/// `MPI_Graph_map`: the rank this process would have in such a graph (its own, or
/// `MPI_UNDEFINED` beyond `nnodes`).
///
/// # Safety
/// As `MPI_Graph_create`; `newrank` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: c_int,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let newrank = unsafe { out(newrank, "newrank")? };
        // SAFETY: forwarded contract.
        unsafe { graph_at(nnodes, index, edges)? };
        let comm_box = crate::runtime::comm_of(comm)?;
        let parent = comm_box.get();
        fits(i64::from(nnodes), parent.size())?;
        let rank = parent.rank() as c_int;
        newrank.write(if rank < nnodes { rank } else { MPI_UNDEFINED });
        Ok(())
    })
}

/// `MPI_Graphdims_get`: the numbers of nodes and edges.
///
/// # Safety
/// `nnodes` and `nedges` are NULL or point at writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graphdims_get(
    comm: c_int,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let (nnodes, nedges) = unsafe { (out(nnodes, "nnodes")?, out(nedges, "nedges")?) };
        let graph = graph_of(comm)?;
        nnodes.write(graph.index.len() as c_int);
        nedges.write(graph.edges.len() as c_int);
        Ok(())
    })
}

/// `MPI_Graph_get`: the graph's `index` and `edges` arrays.
///
/// # Safety
/// `index` points at `maxindex` and `edges` at `maxedges` writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_get(
    comm: c_int,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let graph = graph_of(comm)?;
        if (maxindex as usize) < graph.index.len() || (maxedges as usize) < graph.edges.len() {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!(
                    "maxindex {maxindex} / maxedges {maxedges}: the graph has {} nodes and {} \
                     edges",
                    graph.index.len(),
                    graph.edges.len()
                ),
            ));
        }
        // SAFETY: forwarded contract.
        let (index, edges) = unsafe {
            (
                array(index, graph.index.len() as c_int, "index")?,
                array(edges, graph.edges.len() as c_int, "edges")?,
            )
        };
        index.copy_from_slice(&graph.index);
        edges.copy_from_slice(&graph.edges);
        Ok(())
    })
}

/// The node `rank` of `comm`'s graph, checked.
fn node(graph: &Graph, rank: c_int) -> Result<usize, Failure> {
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < graph.index.len())
        .ok_or_else(|| {
            Failure::new(
                MPI_ERR_RANK,
                format!("rank {rank} is not a node of the graph"),
            )
        })
}

/// `MPI_Graph_neighbors_count`: the number of neighbours of node `rank`.
///
/// # Safety
/// `nneighbors` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors_count(
    comm: c_int,
    rank: c_int,
    nneighbors: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let nneighbors = unsafe { out(nneighbors, "nneighbors")? };
        let graph = graph_of(comm)?;
        nneighbors.write(graph.neighbors(node(&graph, rank)?).len() as c_int);
        Ok(())
    })
}

/// `MPI_Graph_neighbors`: the neighbours of node `rank` (at most `maxneighbors` written).
///
/// # Safety
/// `neighbors` points at `maxneighbors` writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors(
    comm: c_int,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let graph = graph_of(comm)?;
        let theirs = graph.neighbors(node(&graph, rank)?);
        let n = theirs.len().min(maxneighbors.max(0) as usize);
        // SAFETY: forwarded contract.
        let out = unsafe { array(neighbors, n as c_int, "neighbors")? };
        out.copy_from_slice(&theirs[..n]);
        Ok(())
    })
}

/// `MPI_Dist_graph_create_adjacent` (MPI-4.0 §8.5.4): a communicator of every rank of
/// `comm_old` (a dup: collective, with its failure semantics) where this rank's in- and
/// out-neighbours are the ones it gives. `MPI_UNWEIGHTED` makes the graph unweighted; the info
/// is checked and its hints ignored, as is `reorder`.
///
/// # Safety
/// The arrays hold `indegree` / `outdegree` readable ints (the weights may be
/// `MPI_UNWEIGHTED` or, for a degree of 0, `MPI_WEIGHTS_EMPTY`); `comm_dist_graph` is NULL or
/// points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm_old: c_int,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    boundary(comm_old, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(comm_dist_graph, "comm_dist_graph")? };
        crate::info::check_handle(info, true)?;
        let size = crate::runtime::comm_of(comm_old)?.get().size() as c_int;
        let ranks =
            |values: &[c_int], what: &str| match values.iter().find(|&&r| r < 0 || r >= size) {
                Some(bad) => Err(Failure::new(
                    MPI_ERR_RANK,
                    format!("{what} {bad} is not a rank of the communicator"),
                )),
                None => Ok(values.to_vec()),
            };
        // SAFETY: forwarded contract; only read.
        let graph = unsafe {
            DistGraph {
                sources: ranks(array(sources.cast_mut(), indegree, "sources")?, "source")?,
                source_weights: weights_at(sourceweights, indegree, "sources")?,
                destinations: ranks(
                    array(destinations.cast_mut(), outdegree, "destinations")?,
                    "destination",
                )?,
                destination_weights: weights_at(destweights, outdegree, "destinations")?,
                weighted: !unweighted(sourceweights) && !unweighted(destweights),
            }
        };
        let made = agreement_comm_of(comm_old)?.get().dup()?;
        register(comm_old, made, Topology::DistGraph(graph), &newcomm)
    })
}

/// `MPI_Dist_graph_create` (MPI-4.0 §8.5.4): as `_adjacent`, the edges given by any rank: this
/// rank gives, for each of its `n` sources, `degrees[i]` edges to `destinations` (with
/// `weights`). Every rank's edges are gathered over `comm_old` and agreed on there before the
/// dup, so every rank gets the communicator or the same error. Each rank's neighbours are in
/// the order of the ranks that gave the edges, then of the edges each gave.
///
/// # Safety
/// `sources` and `degrees` hold `n` readable ints, `destinations` (and `weights`, unless
/// `MPI_UNWEIGHTED`) the sum of the degrees; `comm_dist_graph` is NULL or points at a writable
/// `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm_old: c_int,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights: *const c_int,
    info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    boundary(comm_old, || {
        // SAFETY: checked for NULL by `out`.
        let newcomm = unsafe { out(comm_dist_graph, "comm_dist_graph")? };
        crate::info::check_handle(info, true)?;
        let comm_box = agreement_comm_of(comm_old)?;
        let comm = comm_box.get();
        let size = comm.size() as c_int;
        // This rank's edges, (source, destination, weight) each. Wrong arguments are refused
        // at every rank, not here alone (the others would wait for this rank's edges).
        let edges_given = || -> Result<Vec<c_int>, Failure> {
            // SAFETY: forwarded contract; only read.
            let (sources, degrees) = unsafe {
                (
                    array(sources.cast_mut(), n, "sources")?.to_vec(),
                    array(degrees.cast_mut(), n, "degrees")?.to_vec(),
                )
            };
            if degrees.iter().any(|&d| d < 0) {
                return Err(Failure::new(MPI_ERR_ARG, "a negative degree"));
            }
            let total: c_int = degrees.iter().sum();
            // SAFETY: forwarded contract; only read.
            let (targets, edge_weights) = unsafe {
                (
                    array(destinations.cast_mut(), total, "destinations")?.to_vec(),
                    weights_at(weights, total, "edges")?,
                )
            };
            let mut mine = Vec::with_capacity(3 * total as usize);
            let mut at = 0;
            for (&source, &degree) in sources.iter().zip(&degrees) {
                for _ in 0..degree {
                    mine.extend([source, targets[at], edge_weights[at]]);
                    at += 1;
                }
            }
            if let Some(bad) = mine
                .chunks(3)
                .flat_map(|edge| [edge[0], edge[1]])
                .find(|&r| r < 0 || r >= size)
            {
                return Err(Failure::new(
                    MPI_ERR_RANK,
                    format!("{bad} is not a rank of the communicator"),
                ));
            }
            Ok(mine)
        };
        let (mine, refused) = match edges_given() {
            Ok(mine) => (mine, None),
            Err(failure) => (Vec::new(), Some(failure)),
        };
        // Every rank's edges, gathered: the counts, then the edges padded to the largest.
        let gathered = gather_edges(comm, &mine);
        // Bit 0: the edges reached this rank; bit 1: its arguments were fine.
        let flag = u32::from(gathered.is_ok()) | (u32::from(refused.is_none()) << 1);
        match comm.agree(flag) {
            Ok(0b11) => {}
            Ok(flag) if flag & 0b10 == 0 => {
                return Err(refused.unwrap_or_else(|| {
                    Failure::new(MPI_ERR_ARG, "another rank refused its edges")
                }))
            }
            Ok(_) | Err(runthrough::Error::AgreeProcFailed { .. }) => {
                return Err(Failure::new(
                    MPIX_ERR_PROC_FAILED,
                    "MPI_Dist_graph_create: a rank failed before the edges were exchanged",
                ))
            }
            Err(error) => return Err(error.into()),
        }
        let edges = gathered?;
        let me = comm.rank() as c_int;
        let mut graph = DistGraph {
            sources: Vec::new(),
            source_weights: Vec::new(),
            destinations: Vec::new(),
            destination_weights: Vec::new(),
            weighted: !unweighted(weights),
        };
        for edge in edges.chunks(3) {
            if edge[1] == me {
                graph.sources.push(edge[0]);
                graph.source_weights.push(edge[2]);
            }
            if edge[0] == me {
                graph.destinations.push(edge[1]);
                graph.destination_weights.push(edge[2]);
            }
        }
        let made = comm.dup()?;
        register(comm_old, made, Topology::DistGraph(graph), &newcomm)
    })
}

/// Every rank's `(source, destination, weight)` triples, in rank order.
fn gather_edges(comm: &runthrough::Comm, mine: &[c_int]) -> Result<Vec<c_int>, Failure> {
    let size = comm.size() as usize;
    let mut counts = vec![0u32; size];
    comm.all_gather(&[mine.len() as u32], &mut counts)?;
    let widest = counts.iter().copied().max().unwrap_or(0) as usize;
    let mut padded = mine.to_vec();
    padded.resize(widest, 0);
    let mut all = vec![0 as c_int; widest * size];
    if widest > 0 {
        comm.all_gather(&padded, &mut all)?;
    }
    Ok(all
        .chunks(widest.max(1))
        .zip(&counts)
        .flat_map(|(block, &count)| block[..count as usize].to_vec())
        .collect())
}

/// `MPI_Dist_graph_neighbors_count`: this rank's numbers of in- and out-neighbours, and
/// whether the graph has weights.
///
/// # Safety
/// The three pointers are NULL or point at writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: c_int,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let (indegree, outdegree, weighted) = unsafe {
            (
                out(indegree, "indegree")?,
                out(outdegree, "outdegree")?,
                out(weighted, "weighted")?,
            )
        };
        let graph = dist_graph_of(comm)?;
        indegree.write(graph.sources.len() as c_int);
        outdegree.write(graph.destinations.len() as c_int);
        weighted.write(c_int::from(graph.weighted));
        Ok(())
    })
}

/// `MPI_Dist_graph_neighbors`: this rank's in- and out-neighbours (at most `maxindegree` /
/// `maxoutdegree` of each), and their weights unless the weights arguments are
/// `MPI_UNWEIGHTED`.
///
/// # Safety
/// `sources` (and `sourceweights`) point at `maxindegree` writable ints, `destinations` (and
/// `destweights`) at `maxoutdegree`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: c_int,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    boundary(comm, || {
        let graph = dist_graph_of(comm)?;
        let fill = |values: &[c_int], max: c_int, to: *mut c_int, what: &str| {
            if unweighted(to) {
                return Ok(());
            }
            let n = values.len().min(max.max(0) as usize);
            // SAFETY: forwarded contract.
            let out = unsafe { array(to, n as c_int, what)? };
            out.copy_from_slice(&values[..n]);
            Ok::<(), Failure>(())
        };
        fill(&graph.sources, maxindegree, sources, "sources")?;
        fill(
            &graph.source_weights,
            maxindegree,
            sourceweights,
            "sourceweights",
        )?;
        fill(
            &graph.destinations,
            maxoutdegree,
            destinations,
            "destinations",
        )?;
        fill(
            &graph.destination_weights,
            maxoutdegree,
            destweights,
            "destweights",
        )?;
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("graph.rs");

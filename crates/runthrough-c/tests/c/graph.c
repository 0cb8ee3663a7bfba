/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Graph and distributed-graph topologies on 4 ranks: MPI_Graph_create of a 3-node ring (rank 3
 * gets MPI_COMM_NULL) with its queries (MPI_Graphdims_get, MPI_Graph_get, _neighbors_count,
 * _neighbors, MPI_Topo_test, MPI_Graph_map), kept by MPI_Comm_dup; MPI_Dist_graph_create_adjacent
 * (a weighted ring) and MPI_Dist_graph_create (every rank gives the edges of rank 0 to all the
 * others, unweighted) with MPI_Dist_graph_neighbors(_count); traffic along the edges; wrong use
 * (an edge to no node, a bad rank, which every rank of MPI_Dist_graph_create reports). Then rank
 * 3 dies: MPI_Dist_graph_create fails with MPIX_ERR_PROC_FAILED at every survivor. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, status, n, e, flag;
    MPI_Comm graph, twin, dist, star;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");

    /* A ring of 3 nodes: 0-1, 1-2, 2-0. */
    int index[3] = {2, 4, 6}, edges[6] = {1, 2, 0, 2, 0, 1};
    OK(MPI_Graph_create(MPI_COMM_WORLD, 3, index, edges, 0, &graph));
    CHECK((graph == MPI_COMM_NULL) == (rank == 3), "rank %d in the graph: %d", rank, graph);
    OK(MPI_Graph_map(MPI_COMM_WORLD, 3, index, edges, &n));
    CHECK(n == (rank < 3 ? rank : MPI_UNDEFINED), "MPI_Graph_map %d", n);
    if (graph != MPI_COMM_NULL) {
        OK(MPI_Topo_test(graph, &status));
        CHECK(status == MPI_GRAPH, "MPI_Topo_test %d", status);
        OK(MPI_Graphdims_get(graph, &n, &e));
        CHECK(n == 3 && e == 6, "dims %d %d", n, e);
        int got_index[3], got_edges[6];
        OK(MPI_Graph_get(graph, 3, 6, got_index, got_edges));
        for (int i = 0; i < 6; i++)
            CHECK(got_edges[i] == edges[i] && (i >= 3 || got_index[i] == index[i]), "get %d", i);
        int neighbors[2];
        OK(MPI_Graph_neighbors_count(graph, rank, &n));
        OK(MPI_Graph_neighbors(graph, rank, 2, neighbors));
        CHECK(n == 2 && neighbors[0] == edges[2 * rank] && neighbors[1] == edges[2 * rank + 1],
              "neighbours of %d", rank);
        /* One message to each neighbour, one from each. */
        int out[2] = {rank, rank}, in[2] = {-1, -1};
        MPI_Request reqs[4];
        for (int i = 0; i < 2; i++) {
            OK(MPI_Irecv(&in[i], 1, MPI_INT, neighbors[i], 0, graph, &reqs[i]));
            OK(MPI_Isend(&out[i], 1, MPI_INT, neighbors[i], 0, graph, &reqs[2 + i]));
        }
        OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
        CHECK(in[0] == neighbors[0] && in[1] == neighbors[1], "graph traffic");
        OK(MPI_Comm_dup(graph, &twin));
        OK(MPI_Topo_test(twin, &status));
        OK(MPI_Graphdims_get(twin, &n, &e));
        CHECK(status == MPI_GRAPH && n == 3 && e == 6, "a dup keeps the graph");
        EXPECT(MPI_Graph_neighbors(graph, 7, 2, neighbors), MPI_ERR_RANK);
        EXPECT(MPI_Dist_graph_neighbors_count(graph, &n, &e, &flag), MPI_ERR_TOPOLOGY);
        OK(MPI_Comm_free(&twin));
        OK(MPI_Comm_free(&graph));
    }
    EXPECT(MPI_Graphdims_get(MPI_COMM_WORLD, &n, &e), MPI_ERR_TOPOLOGY);
    int bad_edges[6] = {1, 2, 0, 2, 0, 9};
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, 3, index, bad_edges, 0, &graph), MPI_ERR_ARG);

    /* A weighted ring, each rank giving its own neighbours. */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int srcw[1] = {10 + left}, dstw[1] = {10 + rank};
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, srcw, 1, &right, dstw,
                                      MPI_INFO_NULL, 0, &dist));
    OK(MPI_Topo_test(dist, &status));
    CHECK(status == MPI_DIST_GRAPH, "dist graph status %d", status);
    int indeg, outdeg, weighted, s[4], sw[4], d[4], dw[4];
    OK(MPI_Dist_graph_neighbors_count(dist, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted == 1, "adjacent counts");
    OK(MPI_Dist_graph_neighbors(dist, 1, s, sw, 1, d, dw));
    CHECK(s[0] == left && sw[0] == 10 + left && d[0] == right && dw[0] == 10 + rank,
          "adjacent neighbours");
    int token = rank, got = -1;
    OK(MPI_Sendrecv(&token, 1, MPI_INT, d[0], 1, &got, 1, MPI_INT, s[0], 1, dist,
                    MPI_STATUS_IGNORE));
    CHECK(got == left, "ring traffic %d", got);
    OK(MPI_Comm_free(&dist));

    /* A star given by everyone: each rank gives the edge 0 -> itself (rank 0 gives none). */
    int zero = 0, one = 1, me = rank;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 0 : 1, &zero, &one, &me,
                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &star));
    OK(MPI_Dist_graph_neighbors_count(star, &indeg, &outdeg, &weighted));
    if (rank == 0) {
        CHECK(indeg == 0 && outdeg == 3 && weighted == 0, "star centre %d %d %d", indeg, outdeg,
              weighted);
        OK(MPI_Dist_graph_neighbors(star, 0, s, MPI_UNWEIGHTED, 4, d, MPI_UNWEIGHTED));
        CHECK(d[0] == 1 && d[1] == 2 && d[2] == 3, "star spokes %d %d %d", d[0], d[1], d[2]);
    } else {
        CHECK(indeg == 1 && outdeg == 0 && weighted == 0, "star spoke %d %d", indeg, outdeg);
        OK(MPI_Dist_graph_neighbors(star, 1, s, MPI_UNWEIGHTED, 0, d, MPI_UNWEIGHTED));
        CHECK(s[0] == 0, "a spoke's source %d", s[0]);
    }
    OK(MPI_Comm_free(&star));
    /* Rank 2 gives an edge to a rank that does not exist: refused at every rank. */
    int nowhere = rank == 2 ? 17 : rank;
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &one, &nowhere, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &star),
           rank == 2 ? MPI_ERR_RANK : MPI_ERR_ARG);

    /* Rank 3 dies: the exchange of edges finds it at every survivor. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, &zero, &one, &me, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &star),
           MPIX_ERR_PROC_FAILED);
    return ft_finish();
}

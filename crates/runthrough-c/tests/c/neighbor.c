/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Neighbourhood collectives on 4 ranks. A periodic ring (a 1-D grid): MPI_Neighbor_allgather,
 * _alltoall and _alltoallv (a strided vector type on the send side) and their non-blocking
 * forms, checked against the ring's left / right neighbours; rings of 2 and 1, where one rank
 * is both neighbours. A non-periodic line: the edges
 * past its ends (MPI_PROC_NULL) move nothing, their receive blocks untouched. A distributed
 * graph with a repeated edge: _allgatherv and _alltoallw pair blocks in list order (blocking and
 * not). Wrong use:
 * a communicator without a topology, MPI_IN_PLACE. Then rank 3 dies: the ring exchange fails
 * with MPIX_ERR_PROC_FAILED at its neighbours (and at any survivor, never a hang); after
 * MPI_Comm_validate_global the survivors exchange again, the dead rank's blocks left as they
 * were. */
#include "ft_common.h"

static int left_of(int r, int n) { return (r + n - 1) % n; }
static int right_of(int r, int n) { return (r + 1) % n; }

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    int left = left_of(rank, size), right = right_of(rank, size);

    MPI_Comm ring, line, dist;
    int dims[1] = {size}, periodic[1] = {1}, open[1] = {0};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periodic, 0, &ring));
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, open, 0, &line));

    /* All-gather on the ring: from the left neighbour, then the right one. */
    int mine = 100 + rank, got[2] = {-1, -1};
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring));
    CHECK(got[0] == 100 + left && got[1] == 100 + right, "allgather %d %d", got[0], got[1]);

    /* All-to-all: block 0 goes left, block 1 right; the left neighbour's block 1 arrives in
     * slot 0, the right one's block 0 in slot 1. */
    int out[2] = {10 * rank, 10 * rank + 1}, in[2] = {-1, -1};
    OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring));
    CHECK(in[0] == 10 * left + 1 && in[1] == 10 * right, "alltoall %d %d", in[0], in[1]);

    /* All-to-all-v with a strided send type (every other int) and different counts: two
     * elements to the left, one to the right. */
    MPI_Datatype every_other;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int wide[6] = {rank, -7, rank + 1, -7, rank + 2, -7};
    int scounts[2] = {1, 0}, sdispls[2] = {0, 0};
    int rcounts[2] = {0, 2}, rdispls[2] = {0, 0}, pair[2] = {-1, -1};
    /* Left gets one vector (2 ints: rank, rank + 1); nothing goes right. So each rank hears
     * from its right neighbour only. */
    OK(MPI_Neighbor_alltoallv(wide, scounts, sdispls, every_other, pair, rcounts, rdispls,
                              MPI_INT, ring));
    CHECK(pair[0] == right && pair[1] == right + 1, "alltoallv %d %d", pair[0], pair[1]);

    /* The non-blocking forms, two outstanding at once. */
    MPI_Request reqs[2];
    int got2[2] = {-1, -1}, in2[2] = {-1, -1};
    OK(MPI_Ineighbor_allgather(&mine, 1, MPI_INT, got2, 1, MPI_INT, ring, &reqs[0]));
    OK(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in2, 1, MPI_INT, ring, &reqs[1]));
    OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    CHECK(got2[0] == 100 + left && got2[1] == 100 + right, "iallgather");
    CHECK(in2[0] == 10 * left + 1 && in2[1] == 10 * right, "ialltoall");

    /* The open line: rank 0 has no left neighbour, rank 3 no right one. */
    int edge[2] = {-5, -5};
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, edge, 1, MPI_INT, line));
    CHECK(edge[0] == (rank == 0 ? -5 : 100 + rank - 1), "line left %d", edge[0]);
    CHECK(edge[1] == (rank == size - 1 ? -5 : 100 + rank + 1), "line right %d", edge[1]);

    /* A distributed graph: rank r sends to r + 1 twice (a repeated edge), receives from
     * r - 1 twice. */
    int prev = left, next = right, twice_next[2] = {next, next}, twice_prev[2] = {prev, prev};
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, twice_prev, MPI_UNWEIGHTED, 2,
                                      twice_next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist));
    int counts[2] = {1, 2}, displs[2] = {0, 1}, three[3] = {-1, -1, -1};
    /* Allgatherv: the same one int each time, received into blocks of 1 and... the count must
     * match what is sent: both blocks one int, at 0 and 2. */
    counts[1] = 1;
    displs[1] = 2;
    OK(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, three, counts, displs, MPI_INT, dist));
    CHECK(three[0] == 100 + prev && three[1] == -1 && three[2] == 100 + prev, "allgatherv");
    /* Alltoallw: first block an int, second a double, in list order. */
    struct {
        int i;
        double d;
    } sendw = {rank, rank + 0.5}, recvw = {-1, -1.0};
    int wcounts[2] = {1, 1};
    MPI_Aint wdispls[2] = {0, (MPI_Aint)((char *)&sendw.d - (char *)&sendw)};
    MPI_Aint rdisplsw[2] = {0, (MPI_Aint)((char *)&recvw.d - (char *)&recvw)};
    MPI_Datatype wtypes[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Neighbor_alltoallw(&sendw, wcounts, wdispls, wtypes, &recvw, wcounts, rdisplsw, wtypes,
                              dist));
    CHECK(recvw.i == prev && recvw.d == prev + 0.5, "alltoallw %d %f", recvw.i, recvw.d);

    /* The same three as non-blocking calls, outstanding together. */
    MPI_Request more[3];
    int three2[3] = {-1, -1, -1}, pair2[2] = {-1, -1};
    recvw.i = -1;
    recvw.d = -1.0;
    OK(MPI_Ineighbor_allgatherv(&mine, 1, MPI_INT, three2, counts, displs, MPI_INT, dist,
                                &more[0]));
    OK(MPI_Ineighbor_alltoallv(wide, scounts, sdispls, every_other, pair2, rcounts, rdispls,
                               MPI_INT, ring, &more[1]));
    OK(MPI_Ineighbor_alltoallw(&sendw, wcounts, wdispls, wtypes, &recvw, wcounts, rdisplsw,
                               wtypes, dist, &more[2]));
    OK(MPI_Waitall(3, more, MPI_STATUSES_IGNORE));
    CHECK(three2[0] == 100 + prev && three2[1] == -1 && three2[2] == 100 + prev, "iallgatherv");
    CHECK(pair2[0] == right && pair2[1] == right + 1, "ialltoallv %d %d", pair2[0], pair2[1]);
    CHECK(recvw.i == prev && recvw.d == prev + 0.5, "ialltoallw %d %f", recvw.i, recvw.d);

    /* Periodic rings of 2 (pairs of ranks) and of 1 (MPI_COMM_SELF), where one rank is both
     * neighbours: the block sent one step down still arrives as the block from one step up,
     * as on a longer ring. */
    MPI_Comm halves, pair_ring, self_ring;
    int two[1] = {2}, one[1] = {1};
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &halves));
    OK(MPI_Cart_create(halves, 1, two, periodic, 0, &pair_ring));
    OK(MPI_Cart_create(MPI_COMM_SELF, 1, one, periodic, 0, &self_ring));
    int down_up[2] = {-1, 1}, landed[2] = {0, 0};
    OK(MPI_Neighbor_alltoall(down_up, 1, MPI_INT, landed, 1, MPI_INT, pair_ring));
    CHECK(landed[0] == 1 && landed[1] == -1, "ring of 2: %d %d", landed[0], landed[1]);
    landed[0] = landed[1] = 0;
    OK(MPI_Neighbor_alltoall(down_up, 1, MPI_INT, landed, 1, MPI_INT, self_ring));
    CHECK(landed[0] == 1 && landed[1] == -1, "ring of 1: %d %d", landed[0], landed[1]);
    OK(MPI_Comm_free(&pair_ring));
    OK(MPI_Comm_free(&self_ring));
    OK(MPI_Comm_free(&halves));

    /* Wrong use: no topology on MPI_COMM_WORLD (reported by the wait of the blocking form);
     * MPI_IN_PLACE. */
    EXPECT(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, in, 1, MPI_INT, ring), MPI_ERR_ARG);

    /* Rank 3 dies: the exchange fails at every survivor (its neighbours 0 and 2 through the
     * dead edge; rank 1 because the failure disables collectives once known), never a hang. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(ring, 3);
    int err = MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring);
    int class = MPI_SUCCESS;
    MPI_Error_class(err, &class);
    CHECK(class == MPIX_ERR_PROC_FAILED, "rank %d: allgather after the death: %d", rank, class);
    int failed = 0;
    OK(MPI_Comm_validate_global(ring, &failed));
    CHECK(failed == 1, "one failure recognized: %d", failed);
    got[0] = got[1] = -9;
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring));
    CHECK(got[0] == (left == 3 ? -9 : 100 + left) && got[1] == (right == 3 ? -9 : 100 + right),
          "rank %d after validation: %d %d", rank, got[0], got[1]);
    OK(MPI_Type_free(&every_other));
    return ft_finish();
}

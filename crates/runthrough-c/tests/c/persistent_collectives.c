/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Persistent collectives on 4 ranks: each _init call made once and started several times,
 * with the buffers' contents changed between starts (each start reads them anew), alone and
 * by MPI_Startall; the gathers, scatters, all-gathers, all-to-alls and reduce-scatters with
 * their v / w forms; wrong use (a negative root or count or a bad info at the init call, a
 * root beyond the communicator at completion as for MPI_Ibcast, MPI_Start of an active
 * request, freeing an active one). Then rank 3 dies: a started all-reduce completes
 * with MPIX_ERR_PROC_FAILED at every survivor, and after MPI_Comm_validate_global the same
 * request runs over the survivors. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    MPI_Request reqs[8], req;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");

    /* Barrier, broadcast, all-reduce, reduce: three rounds of starts. */
    int value = 0, mine = 0, sum = -1, product = -1, scanned = -1, exscanned = -1;
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]));
    OK(MPI_Bcast_init(&value, 1, MPI_INT, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
    OK(MPI_Allreduce_init(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &reqs[2]));
    OK(MPI_Reduce_init(&mine, &product, 1, MPI_INT, MPI_PROD, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &reqs[3]));
    OK(MPI_Scan_init(&mine, &scanned, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                     &reqs[4]));
    OK(MPI_Exscan_init(&mine, &exscanned, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &reqs[5]));
    for (int round = 1; round <= 3; round++) {
        value = rank == 2 ? 100 * round : -1;
        mine = rank + round;
        OK(MPI_Start(&reqs[0]));
        OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        CHECK(reqs[0] != MPI_REQUEST_NULL, "a persistent request stays allocated");
        OK(MPI_Startall(5, &reqs[1]));
        OK(MPI_Waitall(5, &reqs[1], MPI_STATUSES_IGNORE));
        CHECK(value == 100 * round, "round %d broadcast %d", round, value);
        CHECK(sum == 6 + 4 * round, "round %d sum %d", round, sum);
        if (rank == 0)
            CHECK(product == round * (1 + round) * (2 + round) * (3 + round),
                  "round %d product %d", round, product);
        CHECK(scanned == rank * (rank + 1) / 2 + (rank + 1) * round, "round %d scan %d", round,
              scanned);
        if (rank > 0)
            CHECK(exscanned == (rank - 1) * rank / 2 + rank * round, "round %d exscan %d",
                  round, exscanned);
    }

    /* Gathers, scatters, all-gathers, all-to-alls, reduce-scatters. */
    int one = 0, all[4], gathered[4], scattered = -1, to_all[4], from_all[4], block = -1;
    int counts[4] = {1, 1, 1, 1}, displs[4] = {3, 2, 1, 0}, types[4];
    for (int i = 0; i < 4; i++)
        types[i] = MPI_INT;
    OK(MPI_Gatherv_init(&one, 1, MPI_INT, gathered, counts, displs, MPI_INT, 1, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &reqs[0]));
    OK(MPI_Scatter_init(all, 1, MPI_INT, &scattered, 1, MPI_INT, 3, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &reqs[1]));
    OK(MPI_Allgather_init(&one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &reqs[2]));
    OK(MPI_Alltoallw_init(to_all, counts, (int[]){0, 4, 8, 12}, types, from_all, counts,
                          (int[]){0, 4, 8, 12}, types, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[3]));
    OK(MPI_Reduce_scatter_block_init(to_all, &block, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &reqs[4]));
    for (int round = 1; round <= 2; round++) {
        one = 10 * round + rank;
        for (int i = 0; i < 4; i++) {
            all[i] = 1000 * round + i; /* the root's scatter blocks */
            to_all[i] = 100 * rank + i + round;
        }
        OK(MPI_Startall(2, reqs));
        OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        if (rank == 1)
            for (int r = 0; r < 4; r++)
                CHECK(gathered[displs[r]] == 10 * round + r, "gatherv block %d", r);
        CHECK(scattered == 1000 * round + rank, "scatter %d", scattered);
        OK(MPI_Startall(3, &reqs[2]));
        OK(MPI_Waitall(3, &reqs[2], MPI_STATUSES_IGNORE));
        for (int r = 0; r < 4; r++) {
            CHECK(all[r] == 10 * round + r, "allgather %d: %d", r, all[r]);
            CHECK(from_all[r] == 100 * r + rank + round, "alltoallw from %d: %d", r,
                  from_all[r]);
        }
        CHECK(block == 300 + rank + round, "reduce_scatter_block %d", block);
    }
    for (int i = 0; i < 5; i++)
        OK(MPI_Request_free(&reqs[i]));

    /* The other forms, one start each: the blocks of rank r are 10 * r + i. */
    int src[4], dst[4], gather_out[4], scatter_in = -1, ones[4] = {1, 1, 1, 1};
    int zero_to_three[4] = {0, 1, 2, 3}, reduced = -1;
    for (int i = 0; i < 4; i++)
        src[i] = 10 * rank + i;
    OK(MPI_Gather_init(&src[0], 1, MPI_INT, gather_out, 1, MPI_INT, 0, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &reqs[0]));
    OK(MPI_Scatterv_init(src, ones, zero_to_three, MPI_INT, &scatter_in, 1, MPI_INT, 1,
                         MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
    OK(MPI_Alltoall_init(src, 1, MPI_INT, dst, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                         &reqs[2]));
    OK(MPI_Startall(3, reqs));
    OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    if (rank == 0)
        for (int r = 0; r < 4; r++)
            CHECK(gather_out[r] == 10 * r, "gather %d: %d", r, gather_out[r]);
    CHECK(scatter_in == 10 + rank, "scatterv %d", scatter_in);
    for (int r = 0; r < 4; r++)
        CHECK(dst[r] == 10 * r + rank, "alltoall from %d: %d", r, dst[r]);
    OK(MPI_Allgatherv_init(&src[1], 1, MPI_INT, dst, ones, zero_to_three, MPI_INT,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[3]));
    OK(MPI_Alltoallv_init(src, ones, zero_to_three, MPI_INT, gather_out, ones, zero_to_three,
                          MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[4]));
    OK(MPI_Reduce_scatter_init(src, &reduced, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &reqs[5]));
    /* The init calls copied the count and displacement arrays: changing them now changes
     * nothing (a binding may release its temporary arrays after the init call). */
    for (int i = 0; i < 4; i++) {
        ones[i] = 99;
        zero_to_three[i] = -7;
    }
    OK(MPI_Startall(3, &reqs[3]));
    OK(MPI_Waitall(3, &reqs[3], MPI_STATUSES_IGNORE));
    for (int r = 0; r < 4; r++) {
        CHECK(dst[r] == 10 * r + 1, "allgatherv %d: %d", r, dst[r]);
        CHECK(gather_out[r] == 10 * r + rank, "alltoallv from %d: %d", r, gather_out[r]);
    }
    CHECK(reduced == 60 + 4 * rank, "reduce_scatter %d", reduced);
    for (int i = 0; i < 6; i++)
        OK(MPI_Request_free(&reqs[i]));

    /* A derived datatype freed right after the init call: the request keeps its own copy. */
    MPI_Datatype two;
    int pair[2], pairs[8];
    OK(MPI_Type_contiguous(2, MPI_INT, &two));
    OK(MPI_Type_commit(&two));
    OK(MPI_Allgather_init(pair, 1, two, pairs, 1, two, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    OK(MPI_Type_free(&two));
    for (int round = 0; round < 2; round++) {
        pair[0] = rank;
        pair[1] = round;
        OK(MPI_Start(&req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < 4; r++)
            CHECK(pairs[2 * r] == r && pairs[2 * r + 1] == round, "freed type, round %d", round);
    }
    OK(MPI_Request_free(&req));

    /* Wrong use. */
    /* A root beyond the communicator, as for MPI_Ibcast: reported by the completion. */
    OK(MPI_Bcast_init(&value, 1, MPI_INT, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    OK(MPI_Start(&req));
    EXPECT(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_ROOT);
    OK(MPI_Request_free(&req));
    EXPECT(MPI_Bcast_init(&value, 1, MPI_INT, -4, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
           MPI_ERR_ROOT);
    EXPECT(MPI_Allreduce_init(&mine, &sum, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &req),
           MPI_ERR_COUNT);
    EXPECT(MPI_Barrier_init(MPI_COMM_WORLD, 4242, &req), MPI_ERR_INFO);
    EXPECT(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    OK(MPI_Start(&req));
    EXPECT(MPI_Start(&req), MPI_ERR_REQUEST);
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST);
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "freed");

    /* Rank 3 dies: the all-reduce fails everywhere, then runs over the survivors. */
    OK(MPI_Allreduce_init(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    mine = rank;
    OK(MPI_Start(&req));
    EXPECT(MPI_Wait(&req, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    int failed = 0;
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "validated %d", failed);
    OK(MPI_Start(&req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum == 0 + 1 + 2, "all-reduce over the survivors %d", sum);
    OK(MPI_Request_free(&req));
    return ft_finish();
}

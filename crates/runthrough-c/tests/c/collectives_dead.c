/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Rank 1 dies before MPI_Allgather, MPI_Gatherv, MPI_Scatterv, MPI_Alltoall, MPI_Scan and
 * MPI_Exscan. Once a survivor's detector knows of the death (and before
 * MPI_Comm_validate_global recognizes it), each of them returns MPIX_ERR_PROC_FAILED at every
 * survivor, whatever its role (docs/src/semantics.md §3.3). After MPI_Comm_validate_global they run
 * over the survivors: the dead rank's slots are left untouched, it contributes nothing to the
 * scans, and a v-collective rooted at it returns MPIX_ERR_PROC_FAILED everywhere. */
#include "ft_common.h"

#define N 8

int main(int argc, char **argv) {
    int rank, size, failed;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    ft_wait_detected(MPI_COMM_WORLD, 1);

    int mine[2] = {rank, 10 * rank}, all[2 * N], counts[N], displs[N];
    int send[N], recv[N], v = rank + 1, s = -1;
    for (int r = 0; r < size; r++) {
        counts[r] = 2;
        displs[r] = 2 * r;
        send[r] = 100 * rank + r;
    }
    EXPECT(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Gatherv(mine, 2, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Scatterv(all, counts, displs, MPI_INT, mine, 2, MPI_INT, 3, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);

    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);

    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    OK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        int want0 = r == 1 ? -1 : r, want1 = r == 1 ? -1 : 10 * r;
        CHECK(all[2 * r] == want0 && all[2 * r + 1] == want1, "allgather slot %d: %d %d", r,
              all[2 * r], all[2 * r + 1]);
    }

    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    OK(MPI_Gatherv(mine, 2, MPI_INT, all, counts, displs, MPI_INT, 2, MPI_COMM_WORLD));
    if (rank == 2)
        for (int r = 0; r < size; r++)
            CHECK(all[2 * r] == (r == 1 ? -1 : r), "gatherv slot %d: %d", r, all[2 * r]);

    int blocks[2 * N], got[2] = {-1, -1};
    for (int i = 0; i < 2 * size; i++)
        blocks[i] = 7 * i;
    OK(MPI_Scatterv(blocks, counts, displs, MPI_INT, got, 2, MPI_INT, 3, MPI_COMM_WORLD));
    CHECK(got[0] == 14 * rank && got[1] == 14 * rank + 7, "scatterv: %d %d", got[0], got[1]);

    for (int r = 0; r < size; r++)
        recv[r] = -1;
    OK(MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(recv[r] == (r == 1 ? -1 : 100 * r + rank), "alltoall from %d: %d", r, recv[r]);

    /* The prefixes over the survivors 0, 2, 3 of v = rank + 1: 1, 1 + 3, 1 + 3 + 4. */
    OK(MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s == (rank == 0 ? 1 : rank == 2 ? 4 : 8), "scan: %d", s);
    s = -1;
    OK(MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s == (rank == 0 ? -1 : rank == 2 ? 1 : 4), "exscan: %d", s);

    /* A root recognized as failed. */
    EXPECT(MPI_Gatherv(mine, 2, MPI_INT, all, counts, displs, MPI_INT, 1, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Scatterv(blocks, counts, displs, MPI_INT, got, 2, MPI_INT, 1, MPI_COMM_WORLD),
           MPIX_ERR_PROC_FAILED);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    return ft_finish();
}

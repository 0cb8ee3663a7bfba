/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/bcast.c: rank 1 dies; MPI_Bcast from rank 0; every rank that does not get
 * an error must have the right data.
 * Run-through: the same rule for the first broadcast (a rank may return MPI_SUCCESS or
 * MPIX_ERR_PROC_FAILED, not uniformly); after MPI_Comm_validate_global the broadcast runs over
 * the OK ranks and every survivor gets the data. */
#include "ft_common.h"

#define N 1000

int main(int argc, char **argv) {
    int rank, size, failed, rc;
    static int buf[N];
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? i : -1;
    rc = MPI_Bcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED, "rank %d: %d", rank, rc);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == i, "buf[%d] = %d after a successful broadcast", i, buf[i]);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int i = 0; i < N; i++)
        buf[i] = rank == 0 ? 2 * i : -1;
    OK(MPI_Bcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(buf[i] == 2 * i, "buf[%d] = %d", i, buf[i]);
    /* A root recognized as failed. */
    EXPECT(MPI_Bcast(buf, N, MPI_INT, 1, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    return ft_finish();
}

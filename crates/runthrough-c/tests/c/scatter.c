/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/scatter.c: rank 1 dies; MPI_Scatter from rank 0; ranks that do not get an
 * error must have their block.
 * Run-through: the same rule for the first scatter; after MPI_Comm_validate_global the scatter
 * runs over the OK ranks: every survivor gets its block (the dead rank's block is not sent). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, rc, send[64], block[2];
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    for (int i = 0; i < 2 * size; i++)
        send[i] = i;
    block[0] = block[1] = -1;
    rc = MPI_Scatter(send, 2, MPI_INT, block, 2, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED, "rank %d: %d", rank, rc);
    if (rc == MPI_SUCCESS)
        CHECK(block[0] == 2 * rank && block[1] == 2 * rank + 1, "block %d %d", block[0],
              block[1]);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    block[0] = block[1] = -1;
    OK(MPI_Scatter(send, 2, MPI_INT, block, 2, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(block[0] == 2 * rank && block[1] == 2 * rank + 1, "block %d %d", block[0], block[1]);
    if (rank == 0)
        OK(MPI_Scatter(send, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, 0, MPI_COMM_WORLD));
    else
        OK(MPI_Scatter(NULL, 0, MPI_INT, block, 2, MPI_INT, 0, MPI_COMM_WORLD));
    return ft_finish();
}

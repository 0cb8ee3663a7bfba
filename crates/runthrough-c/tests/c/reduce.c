/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/reduce.c: rank 1 dies; MPI_Reduce to rank 0 reports the failure.
 * Run-through: the root gets MPIX_ERR_PROC_FAILED; others may succeed or fail (not uniform).
 * After MPI_Comm_validate_global the reduction runs over the OK ranks: the dead rank
 * contributes nothing (sum of the survivors' ranks), for MPI_Reduce and MPI_Allreduce, with
 * ints and doubles, and with MPI_IN_PLACE. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, rc, sum = -1, expected = 0;
    double dmax = 0;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    rc = MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rc == MPIX_ERR_PROC_FAILED, "root: %d", rc);
    else
        CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED, "rank %d: %d", rank, rc);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int r = 0; r < size; r++)
        if (r != 1)
            expected += r;
    OK(MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(sum == expected, "sum %d, expected %d", sum, expected);
    sum = rank;
    OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == expected, "all-reduce sum %d, expected %d", sum, expected);
    double d = rank + 0.5;
    OK(MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dmax == size - 1 + 0.5, "max %g", dmax);
    return ft_finish();
}

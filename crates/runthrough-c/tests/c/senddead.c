/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/senddead.c: a send to a dead rank returns an error of class
 * MPIX_ERR_PROC_FAILED.
 * Run-through: once the detector knows (here: after a receive from the dead rank reported it),
 * MPI_Send to it returns MPIX_ERR_PROC_FAILED, as long as it is FAILED (not in G). After
 * MPI_Comm_validate_global recognizes it (NULL), a send to it completes at once, as to
 * MPI_PROC_NULL. (MPICH's test expects the error forever: ULFM has no recognition.) */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, value = 5;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        EXPECT(MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Ssend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    if (rank == 0)
        OK(MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    return ft_finish();
}

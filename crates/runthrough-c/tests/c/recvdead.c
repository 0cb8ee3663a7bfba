/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/recvdead.c: a receive from a dead rank returns MPIX_ERR_PROC_FAILED.
 * Run-through: the receive blocks until the detector learns of the failure, then returns
 * MPIX_ERR_PROC_FAILED (FAILED, not in G). After MPI_Comm_validate_global the rank is NULL and a
 * receive from it completes at once as from MPI_PROC_NULL: source MPI_PROC_NULL, tag
 * MPI_ANY_TAG, count 0, buffer untouched. A message the rank sent before dying is still
 * received first (SPEC §1: complete messages of a failed rank stay receivable). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, value = -1, count = -1;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    if (rank == 1) {
        int last = 77;
        OK(MPI_Send(&last, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        OK(MPI_Recv(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &status));
        CHECK(value == 77 && status.MPI_SOURCE == 1, "the dead rank's last message: %d", value);
        EXPECT(MPI_Recv(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &status), MPIX_ERR_PROC_FAILED);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    if (rank == 0) {
        value = -1;
        OK(MPI_Recv(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG && count == 0,
              "status %d %d %d", status.MPI_SOURCE, status.MPI_TAG, count);
        CHECK(value == -1, "buffer touched");
    }
    return ft_finish();
}

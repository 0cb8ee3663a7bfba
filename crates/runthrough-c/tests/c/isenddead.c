/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/isenddead.c: a non-blocking send to a dead rank reports
 * MPIX_ERR_PROC_FAILED.
 * Run-through: MPI_Isend returns MPI_SUCCESS (arguments are fine) and MPI_Wait reports
 * MPIX_ERR_PROC_FAILED while the rank is FAILED; after MPI_Comm_validate_global the same
 * sequence succeeds (the rank is NULL: MPI_PROC_NULL behaviour). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, value = 5;
    MPI_Request request;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        OK(MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request));
        EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
        CHECK(request == MPI_REQUEST_NULL, "a failed request is complete");
        OK(MPI_Issend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request));
        EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    if (rank == 0) {
        OK(MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    return ft_finish();
}

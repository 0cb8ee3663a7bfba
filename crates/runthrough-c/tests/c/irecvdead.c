/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/irecvdead.c: a non-blocking receive from a rank that dies reports
 * MPIX_ERR_PROC_FAILED.
 * Run-through: the request, posted while the rank was alive, evaluates the peer's state when it
 * completes (SPEC §3.1): MPI_Wait returns MPIX_ERR_PROC_FAILED. After MPI_Comm_validate_global a
 * new MPI_Irecv from the rank completes as from MPI_PROC_NULL. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, value = -1;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    if (rank == 0)
        OK(MPI_Irecv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request));
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        /* A call that completes one operation returns the error and leaves the status's
         * MPI_ERROR as the program set it (MPI-4.0 §3.2.5). */
        status.MPI_ERROR = 12345;
        EXPECT(MPI_Wait(&request, &status), MPIX_ERR_PROC_FAILED);
        CHECK(status.MPI_ERROR == 12345, "status.MPI_ERROR %d", status.MPI_ERROR);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    if (rank == 0) {
        OK(MPI_Irecv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request));
        OK(MPI_Wait(&request, &status));
        CHECK(status.MPI_SOURCE == MPI_PROC_NULL && value == -1, "not a PROC_NULL completion");
    }
    return ft_finish();
}

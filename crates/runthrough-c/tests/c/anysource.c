/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/anysource.c: rank 1 dies; an MPI_ANY_SOURCE receive at rank 0 reports the
 * failure, and after the failure is acknowledged wildcard receives work again.
 * The blocking wildcard receive returns MPIX_ERR_PROC_FAILED, as in MPICH and Open MPI ULFM
 * (nothing is consumed), as long as the failure is known but not in L;
 * MPI_Comm_validate_local puts it in L (acknowledges it: MPIX_Comm_failure_ack does the same)
 * and the next wildcard receive gets rank 2's message. No MPI_Comm_validate_global is needed
 * for point-to-point. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value = -1, go = 1, failed = -1;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        OK(MPI_Comm_validate_local(MPI_COMM_WORLD, &failed));
        CHECK(failed == 1, "L holds %d failures", failed);
        OK(MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD));
        OK(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status));
        CHECK(value == 42 && status.MPI_SOURCE == 2, "got %d from %d", value, status.MPI_SOURCE);
    } else if (rank == 2) {
        int answer = 42;
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    return ft_finish();
}

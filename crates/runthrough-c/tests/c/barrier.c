/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/barrier.c: rank 1 dies; MPI_Barrier returns an error at the survivors.
 * Run-through: the victim never enters the barrier, so no survivor can complete it: every one
 * gets MPIX_ERR_PROC_FAILED (collectives are disabled by an unrecognized failure). After
 * MPI_Comm_validate_global the barrier runs over the OK ranks of G and succeeds; so does
 * MPI_Ibarrier. (ULFM instead needs MPIX_Comm_shrink to get a working communicator.) */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed;
    MPI_Request request;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    /* Still disabled: the failure is known and not in G. */
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(request == MPI_REQUEST_NULL, "the request was not freed");
    return ft_finish();
}

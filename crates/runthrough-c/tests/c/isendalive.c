/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/isendalive.c: rank 1 dies; non-blocking sends between live ranks work.
 * Run-through: the same, with MPI_Isend / MPI_Irecv / MPI_Wait. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        double value = 3.25;
        MPI_Request request;
        ft_wait_detected(MPI_COMM_WORLD, 1);
        OK(MPI_Isend(&value, 1, MPI_DOUBLE, 2, 7, MPI_COMM_WORLD, &request));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        CHECK(request == MPI_REQUEST_NULL, "the request was not freed");
    } else if (rank == 2) {
        double value = 0;
        MPI_Request request;
        MPI_Status status;
        int flag = 0;
        OK(MPI_Irecv(&value, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &request));
        while (!flag)
            OK(MPI_Test(&request, &flag, &status));
        CHECK(value == 3.25 && status.MPI_SOURCE == 0, "value %g", value);
        CHECK(request == MPI_REQUEST_NULL, "the request was not freed");
    }
    return ft_finish();
}

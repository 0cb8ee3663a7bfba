/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/sendalive.c: rank 1 dies; sends between live ranks still work.
 * Run-through: the same, with no validate at all (a failure does not disturb point-to-point
 * traffic between live ranks); a large message too. */
#include "ft_common.h"

#define N 100000

int main(int argc, char **argv) {
    int rank, size;
    static int buf[N];
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        for (int i = 0; i < N; i++)
            buf[i] = i;
        OK(MPI_Send(buf, N, MPI_INT, 2, 0, MPI_COMM_WORLD));
        OK(MPI_Send("No Errors", 10, MPI_CHAR, 2, 1, MPI_COMM_WORLD));
    } else if (rank == 2) {
        char text[10];
        MPI_Status status;
        int count = -1;
        OK(MPI_Recv(buf, N, MPI_INT, 0, 0, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(count == N && status.MPI_SOURCE == 0 && status.MPI_TAG == 0, "status");
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == i, "buf[%d] = %d", i, buf[i]);
        OK(MPI_Recv(text, 10, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(text[9] == 0 && text[0] == 'N', "text");
    }
    return ft_finish();
}

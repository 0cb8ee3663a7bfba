/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The program tests/profiling.rs runs under the profiling tool of tests/c/profiling_tool.c
 * (built in, or preloaded as a shared library), on 3 ranks. Rank 0 sends rank 1 three
 * messages; ranks 1 and 2 exchange one with MPI_Sendrecv (not a call the tool counts: the
 * library's own work inside it must not reach the tool's MPI_Send or MPI_Recv); every rank
 * runs two all-reductions and one agreement. With the argument "kill", rank 2 dies before the
 * all-reductions: the first returns MPIX_ERR_PROC_FAILED through the tool's wrappers, the
 * survivors acknowledge the failure, agree, shrink, and the second all-reduction runs on the
 * shrunken communicator. The test reads the tool's counts. */
#include "ft_common.h"

#include <string.h>

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    int kill = argc > 1 && strcmp(argv[1], "kill") == 0;

    for (int i = 0; i < 3; i++) {
        int value = 10 * i;
        if (rank == 0)
            OK(MPI_Send(&value, 1, MPI_INT, 1, i, MPI_COMM_WORLD));
        else if (rank == 1) {
            int got = -1;
            OK(MPI_Recv(&got, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(got == value, "message %d: got %d", i, got);
        }
    }
    if (rank > 0) {
        int mine = rank, theirs = -1, peer = 3 - rank;
        OK(MPI_Sendrecv(&mine, 1, MPI_INT, peer, 7, &theirs, 1, MPI_INT, peer, 7, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        CHECK(theirs == peer, "sendrecv: got %d", theirs);
    }

    MPI_Comm comm = MPI_COMM_WORLD;
    int sum = -1;
    if (kill) {
        if (rank == 2)
            DIE();
        EXPECT(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm), MPIX_ERR_PROC_FAILED);
        OK(MPIX_Comm_failure_ack(comm));
        int flag = 1;
        OK(MPIX_Comm_agree(comm, &flag));
        CHECK(flag == 1, "agree: flag %d", flag);
        OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &comm));
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == 1, "all-reduce over the survivors: %d", sum);
        OK(MPI_Comm_free(&comm));
    } else {
        for (int i = 0; i < 2; i++) {
            OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
            CHECK(sum == 3, "all-reduce %d: %d", i, sum);
        }
        int flag = rank + 1;
        OK(MPIX_Comm_agree(comm, &flag));
        CHECK(flag == 0, "agree: flag %d (1 & 2 & 3)", flag);
    }
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

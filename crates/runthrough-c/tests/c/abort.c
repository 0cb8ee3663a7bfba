/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Abort ends the whole job: rank 2 calls MPI_Abort(MPI_COMM_WORLD, 3) (or the code given
 * as the first argument, on the communicator named by the second: "world", "self" or "split")
 * once every rank is past a barrier, while the others wait in receives that nothing will ever
 * match. Under rtrun every rank ends and the job's exit status is the code. Nothing is ever
 * printed after the abort: a rank that got past its receive would print "ran on". */
#include "ft_common.h"
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, value = 0, code = argc > 1 ? atoi(argv[1]) : 3;
    const char *which = argc > 2 ? argv[2] : "world";
    ft_init(&argc, &argv, &rank, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (strcmp(which, "self") == 0)
        comm = MPI_COMM_SELF;
    else if (strcmp(which, "split") == 0)
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &comm));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 2) {
        MPI_Abort(comm, code);
        FAIL("MPI_Abort returned");
    }
    /* Blocks until the job is ended: rank 2 never sends. */
    MPI_Recv(&value, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("ran on\n");
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Every complete line a rank printed before it died reaches the launcher (issue 14, item 4):
 * rank 1 prints a line and raises SIGKILL before MPI_Init, rank 2 after it, neither
 * flushing: stdout is a pipe, so only the library's line buffering (set when it loads) gets
 * the lines out. The survivors agree that ranks 1 and 2 failed. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *launched_as = getenv("RT_RANK");
    if (launched_as && strcmp(launched_as, "1") == 0) {
        printf("rank 1: a line before MPI_Init, then SIGKILL\n");
        raise(SIGKILL);
    }
    int rank, size, failed = -1;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 2) {
        printf("rank 2: a line after MPI_Init, then SIGKILL\n");
        raise(SIGKILL);
    }
    /* Until both deaths are known: validate_global returns how many failed. */
    do {
        if (MPI_Comm_validate_global(MPI_COMM_WORLD, &failed) != MPI_SUCCESS)
            failed = -1;
    } while (failed < 2);
    if (failed != 2) {
        fprintf(stderr, "[%d] num_failed = %d\n", rank, failed);
        return 1;
    }
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

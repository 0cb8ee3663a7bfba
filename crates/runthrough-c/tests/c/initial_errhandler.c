/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The initial error handler (MPI-4.0 §9.3): argv[1] is the one the job was started with
 * (`rtrun --initial-errhandler NAME`, which sets RT_INITIAL_ERRHANDLER; none: the default,
 * mpi_errors_are_fatal). MPI_INFO_ENV says it as mpi_initial_errhandler, MPI_COMM_WORLD and
 * MPI_COMM_SELF start with it, and with mpi_errors_return a bad call returns its class instead
 * of ending the process. Written without ft_common.h's ft_init, which sets the handler. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                                                              \
    do {                                                                                       \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fprintf(stderr, "\n");                                                                 \
        exit(1);                                                                               \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *want = argc > 1 ? argv[1] : "mpi_errors_are_fatal";
    char value[MPI_MAX_INFO_VAL] = "unread";
    int flag = 0, rank;
    MPI_Info_get(MPI_INFO_ENV, "mpi_initial_errhandler", MPI_MAX_INFO_VAL - 1, value, &flag);
    if (!flag || strcmp(value, want) != 0)
        FAIL("MPI_INFO_ENV{mpi_initial_errhandler}: flag %d, %s; want %s", flag, value, want);
    MPI_Errhandler handler;
    MPI_Errhandler expected = strcmp(want, "mpi_errors_return") == 0  ? MPI_ERRORS_RETURN
                              : strcmp(want, "mpi_errors_abort") == 0 ? MPI_ERRORS_ABORT
                                                                      : MPI_ERRORS_ARE_FATAL;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        MPI_Comm_get_errhandler(comms[i], &handler);
        if (handler != expected)
            FAIL("communicator %d starts with handler %d, want %d", i, handler, expected);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (expected == MPI_ERRORS_RETURN) {
        int rc = MPI_Send(&rank, 1, MPI_INT, 1 << 20, 0, MPI_COMM_WORLD);
        if (rc != MPI_ERR_RANK)
            FAIL("a send to a rank that does not exist returned %d", rc);
    }
    MPI_Finalize();
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}

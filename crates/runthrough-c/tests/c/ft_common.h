/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Helpers shared by the C fault-tolerance scenarios (run by tests/c_programs.rs under rtrun).
 * Every scenario checks its results and exits non-zero when one is wrong; rank 0 prints
 * "No Errors" at the end (the MPICH test suite's convention). */
#ifndef FT_COMMON_H
#define FT_COMMON_H

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* Open MPI keeps the ULFM names there */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ft_rank = -1;

/* Fails the scenario at this rank. */
#define FAIL(...)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "[%d] %s:%d: ", ft_rank, __FILE__, __LINE__);                          \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fprintf(stderr, "\n");                                                                 \
        fflush(stderr);                                                                        \
        exit(1);                                                                               \
    } while (0)

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond))                                                                           \
            FAIL(__VA_ARGS__);                                                                 \
    } while (0)

/* A call's error class must be `want`. */
#define EXPECT(call, want)                                                                     \
    do {                                                                                       \
        int ft_rc_ = (call);                                                                   \
        int ft_class_ = -1;                                                                    \
        MPI_Error_class(ft_rc_, &ft_class_);                                                   \
        if (ft_class_ != (want)) {                                                             \
            char ft_text_[MPI_MAX_ERROR_STRING];                                               \
            int ft_len_ = 0;                                                                   \
            MPI_Error_string(ft_rc_, ft_text_, &ft_len_);                                      \
            FAIL("%s returned %d (%s), expected %d", #call, ft_rc_, ft_text_, (want));         \
        }                                                                                      \
    } while (0)

#define OK(call) EXPECT(call, MPI_SUCCESS)

/* Fail-stop: the process dies at once, without cleaning up (SIGKILL cannot be caught). */
#define DIE()                                                                                  \
    do {                                                                                       \
        fflush(stdout);                                                                        \
        fflush(stderr);                                                                        \
        raise(SIGKILL);                                                                        \
    } while (0)

/* MPI_Init, MPI_ERRORS_RETURN on MPI_COMM_WORLD, and this rank's number and the size. */
static inline void ft_init(int *argc, char ***argv, int *rank, int *size) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        exit(1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    ft_rank = *rank;
}

/* Waits until this rank's detector knows that `rank` failed, without acknowledging anything:
 * a receive from a failed rank that is not recognized returns MPIX_ERR_PROC_FAILED once the
 * failure is known (nobody sends on this tag). */
static inline void ft_wait_detected(MPI_Comm comm, int rank) {
    int dummy;
    EXPECT(MPI_Recv(&dummy, 1, MPI_INT, rank, 9999, comm, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
}

/* Rank `victim` dies once every other rank is past a barrier: each one tells the victim it
 * left the barrier (sends are eager, so they go on at once), and the victim dies after hearing
 * from all. (Dying right after a barrier could catch a slower rank still inside it, and a
 * pending collective returns MPIX_ERR_PROC_FAILED once the failure is known: SPEC §3.3.) */
static inline void ft_sync_then_die(MPI_Comm comm, int victim) {
    int rank, size, token = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    OK(MPI_Barrier(comm));
    if (rank != victim) {
        OK(MPI_Send(&token, 1, MPI_INT, victim, 9998, comm));
        return;
    }
    for (int r = 0; r < size; r++)
        if (r != victim)
            OK(MPI_Recv(&token, 1, MPI_INT, r, 9998, comm, MPI_STATUS_IGNORE));
    DIE();
}

/* MPI_Finalize, and rank 0's "No Errors". */
static inline int ft_finish(void) {
    OK(MPI_Finalize());
    if (ft_rank == 0) {
        printf("No Errors\n");
        fflush(stdout);
    }
    return 0;
}

#endif

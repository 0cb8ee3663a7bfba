/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * allreduce_ft.c: a fault-tolerant loop of all-reduces, the README's C quick start.
 *
 * Every round, each rank adds rank + 1 into an all-reduce, then all ranks call
 * MPI_Comm_validate_global. Its count of failed ranks is the same at every rank, so every rank
 * takes the same decision: when the count grew, a rank died around this round and the round is
 * redone over the survivors (a rank known failed contributes nothing); otherwise the round is
 * kept. At the end each survivor checks that the last sum is the sum over the survivors and
 * prints it. Exit status 0 only when the result is right.
 *
 *   target/release/rtcc examples/c/allreduce_ft.c -o allreduce_ft
 *   target/release/rtrun -n 4 --strict-faults --kill 1@call:8 ./allreduce_ft
 *
 * Semantics: docs/src/semantics.md §2 (the views), §3.3 (collectives under failure).
 */
#include <mpi.h>
#include <stdio.h>

#define ROUNDS 20

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    /* Errors come back as return codes instead of ending the program. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int known_failed = 0, redone = 0;
    long sum = 0;
    for (int round = 0; round < ROUNDS;) {
        long mine = rank + 1;
        int rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        int failed = 0;
        if (MPI_Comm_validate_global(MPI_COMM_WORLD, &failed) != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: validate_global failed\n", rank);
            return 1;
        }
        if (failed != known_failed) {
            known_failed = failed; /* the same decision at every survivor */
            redone++;
            continue;
        }
        if (rc != MPI_SUCCESS) {
            /* A failure this rank saw is in G by now, so this cannot happen. */
            fprintf(stderr, "rank %d: round %d failed with no new failure in G\n", rank, round);
            return 1;
        }
        round++;
    }

    /* The sum over the survivors: every rank minus the failed ones, as G lists them. */
    long expected = 0;
    for (int r = 0; r < size; r++) {
        expected += r + 1;
    }
    MPI_Rank_info infos[64];
    int count = 0;
    if (known_failed > 0) {
        MPI_Comm_get_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_NULL, 64, &count, infos);
        for (int i = 0; i < count; i++) {
            expected -= infos[i].rank + 1;
        }
    }
    printf("rank %d: %d rounds (%d redone), sum %ld, %d failed\n", rank, ROUNDS, redone, sum,
           known_failed);
    MPI_Finalize();
    return sum == expected ? 0 : 1;
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* rtrun kills rank 1 inside its third call of one collective (argv[1]: allgather, alltoall,
 * alltoallw, scan or exscan; c_programs.rs gives the matching --kill 1@COLLECTIVE:3:1, before
 * rank 1's first message of that call; MPI_Alltoallw runs an all-reduce of the largest block,
 * then an all-to-all, and is killed in either). Every survivor loops over the collective: each call that
 * succeeds has the right values, and the call rank 1 died in (or an earlier one, if the death
 * is detected while it is pending) returns MPIX_ERR_PROC_FAILED, never hangs (docs/src/semantics.md
 * §3.3). After MPI_Comm_validate_global the collective runs over the survivors. */
#include "ft_common.h"

#include <stdlib.h>
#include <string.h>

#define N 8

enum op { ALLGATHER, ALLTOALL, ALLTOALLW, SCAN, EXSCAN };

/* One call of the collective in round `round`; checks the values when it succeeds. `dead`
 * is the rank recognized as failed (-1 for none): its slots must be left untouched and it
 * contributes nothing. */
static int run(enum op op, int round, int rank, int size, int dead) {
    int send[N], recv[N], rc;
    for (int r = 0; r < size; r++) {
        send[r] = 1000 * round + 10 * rank + r;
        recv[r] = -1;
    }
    switch (op) {
    case ALLGATHER:
        rc = MPI_Allgather(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            for (int r = 0; r < size; r++)
                CHECK(recv[r] == (r == dead ? -1 : 1000 * round + 10 * r), "round %d slot %d: %d",
                      round, r, recv[r]);
        return rc;
    case ALLTOALL:
        rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            for (int r = 0; r < size; r++)
                CHECK(recv[r] == (r == dead ? -1 : 1000 * round + 10 * r + rank),
                      "round %d from %d: %d", round, r, recv[r]);
        return rc;
    case ALLTOALLW: {
        /* One int to and from each rank, at byte displacements in reverse rank order. */
        int counts[N], sdispls[N], rdispls[N], types[N];
        for (int r = 0; r < size; r++) {
            counts[r] = 1;
            types[r] = MPI_INT;
            sdispls[r] = r * (int)sizeof(int);
            rdispls[r] = (size - 1 - r) * (int)sizeof(int);
        }
        rc = MPI_Alltoallw(send, counts, sdispls, types, recv, counts, rdispls, types,
                           MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            for (int r = 0; r < size; r++)
                CHECK(recv[size - 1 - r] == (r == dead ? -1 : 1000 * round + 10 * r + rank),
                      "round %d from %d: %d", round, r, recv[size - 1 - r]);
        return rc;
    }
    case SCAN:
    case EXSCAN: {
        int v = round + rank, want = 0, got = -1;
        if (op == SCAN)
            rc = MPI_Scan(&v, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            rc = MPI_Exscan(&v, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        int last = op == SCAN ? rank : rank - 1;
        for (int r = 0; r <= last; r++)
            if (r != dead)
                want += round + r;
        int first = dead == 0 ? 1 : 0;
        if (op == EXSCAN && rank == first)
            want = -1; /* the first participant's buffer is left as it was */
        if (rc == MPI_SUCCESS)
            CHECK(got == want, "round %d: %d, want %d", round, got, want);
        return rc;
    }
    }
    return MPI_ERR_ARG;
}

int main(int argc, char **argv) {
    int rank, size, failed, round;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(argc == 2 || argc == 3,
          "usage: collectives_kill allgather|alltoall|alltoallw|scan|exscan [LATEST]");
    /* The latest round whose call may fail: the third, unless rank 1 sent part of its third
     * call before it died (argv[2]), so that a survivor whose blocks from it came relayed by
     * others could finish that call; its next call then fails. */
    int latest = argc == 3 ? atoi(argv[2]) : 3;
    CHECK(size >= 3 && size <= N, "size %d", size);
    enum op op;
    if (strcmp(argv[1], "allgather") == 0)
        op = ALLGATHER;
    else if (strcmp(argv[1], "alltoall") == 0)
        op = ALLTOALL;
    else if (strcmp(argv[1], "alltoallw") == 0)
        op = ALLTOALLW;
    else if (strcmp(argv[1], "scan") == 0)
        op = SCAN;
    else if (strcmp(argv[1], "exscan") == 0)
        op = EXSCAN;
    else
        FAIL("unknown collective %s", argv[1]);
    for (round = 1; round <= 10; round++) {
        int rc = run(op, round, rank, size, -1);
        if (rc != MPI_SUCCESS) {
            EXPECT(rc, MPIX_ERR_PROC_FAILED);
            break;
        }
    }
    CHECK(rank != 1, "rank 1 was not killed");
    /* Rank 1 never contributes (wholly) to its third call: no survivor can finish it (or the
     * next one). */
    CHECK(round <= latest, "the failure was reported in round %d", round);
    printf("rank %d: %s failed in round %d\n", rank, argv[1], round);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int again = 11; again <= 13; again++)
        OK(run(op, again, rank, size, 1));
    return ft_finish();
}

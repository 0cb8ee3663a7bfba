/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The ULFM names of <mpi-ext.h>, as an Open MPI ULFM program uses them, on 5 ranks.
 * - MPIX_FT is defined, and is an attribute whose value is 1; MPIX_Comm_iagree: the AND of the flags, progressed while the program
 *   does point-to-point, completed by MPI_Wait or MPI_Test; a barrier runs while it is
 *   pending, even when rank 0 starts the iagree before the barrier and the others after it
 *   (as mpi4py's test_ulfm testIAgree does: its agreement never waits for collectives).
 * - Rank 3 dies: an MPIX_Comm_iagree that no survivor acknowledged it for returns
 *   MPIX_ERR_PROC_FAILED at every survivor, with the agreed flag of the contributors.
 * - Rank 1 dies next (told by rank 0 once rank 0 knows of rank 3): MPIX_Comm_get_failed at
 *   rank 0 lists 3 then 1 (the order rank 0 learned of them, not rank order);
 *   MPIX_Comm_ack_failed(comm, 1) acknowledges rank 3 only (MPIX_Comm_failure_get_acked is {3},
 *   a wildcard receive still reports MPIX_ERR_PROC_FAILED_PENDING), then (comm, 2) both.
 * - With both failures acknowledged everywhere, MPIX_Comm_iagree succeeds over the survivors.
 * - Bad input: MPI_COMM_NULL is MPI_ERR_COMM, NULL pointers and a negative count MPI_ERR_ARG. */
#include "ft_common.h"
#include <mpi-ext.h>

#ifndef MPIX_FT
#error "MPIX_FT is not defined"
#endif

/* Every rank's flag has all low 8 bits but its own. */
#define FLAG_OF(rank) (0xff & ~(1 << (rank)))

static int group_rank_in_world(MPI_Group group, int index) {
    MPI_Group world_group;
    int in_world = -1;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Group_translate_ranks(group, 1, &index, world_group, &in_world));
    OK(MPI_Group_free(&world_group));
    return in_world;
}

int main(int argc, char **argv) {
    int rank, size, flag, n = -1, value = -1, token = 1;
    MPI_Request request;
    MPI_Status status;
    MPI_Group group;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 5, "run on 5 ranks, not %d", size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* MPIX_FT is also an attribute: this library tolerates failures (as Open MPI says). */
    int *ft = NULL;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag));
    CHECK(flag == 1 && ft != NULL && *ft == 1, "MPIX_FT attribute: flag %d, value %d", flag,
          ft ? *ft : -1);

    /* Overlap: the agreement is pending while the ring goes round. */
    flag = FLAG_OF(rank);
    OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 0, &value, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(value == prev, "ring during iagree: %d", value);
    int done = 0;
    while (!done)
        OK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    CHECK(request == MPI_REQUEST_NULL && flag == 0xe0, "iagree by MPI_Test: flag %#x", flag);
    /* A collective while an iagree is pending; MPI_Wait then reports it. */
    flag = FLAG_OF(rank) | 0x100;
    OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Wait(&request, &status));
    CHECK(request == MPI_REQUEST_NULL && flag == 0x1e0, "iagree then barrier: flag %#x", flag);
    /* Rank 0 starts its iagree before a barrier and an all-reduce, the others after them. */
    flag = FLAG_OF(rank) | 0x200;
    int sum = 0;
    if (rank == 0)
        OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "all-reduce while rank 0's iagree is pending: %d", sum);
    if (rank != 0)
        OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    OK(MPI_Wait(&request, &status));
    CHECK(request == MPI_REQUEST_NULL && flag == 0x2e0, "iagree across collectives: flag %#x",
          flag);

    /* Bad input. */
    EXPECT(MPIX_Comm_iagree(MPI_COMM_NULL, &flag, &request), MPI_ERR_COMM);
    EXPECT(MPIX_Comm_iagree(MPI_COMM_WORLD, NULL, &request), MPI_ERR_ARG);
    EXPECT(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, NULL), MPI_ERR_ARG);
    EXPECT(MPIX_Comm_get_failed(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPIX_Comm_get_failed(MPI_COMM_NULL, &group), MPI_ERR_COMM);
    EXPECT(MPIX_Comm_ack_failed(MPI_COMM_WORLD, -1, &n), MPI_ERR_ARG);
    EXPECT(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, NULL), MPI_ERR_ARG);
    OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &group));
    OK(MPI_Group_size(group, &n));
    CHECK(n == 0, "%d failures before any", n);
    OK(MPI_Group_free(&group));

    /* Rank 3 dies; nobody acknowledges it before the agreement. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    flag = FLAG_OF(rank);
    OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    CHECK(flag == (0xff & ~0x17), "agreed flag with rank 3 dead: %#x", flag);

    /* Rank 1 dies once rank 0 knows of rank 3. */
    if (rank == 0)
        OK(MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
    if (rank == 1) {
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        DIE();
    }
    ft_wait_detected(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &group));
        OK(MPI_Group_size(group, &n));
        CHECK(n == 2, "get_failed: %d ranks", n);
        CHECK(group_rank_in_world(group, 0) == 3 && group_rank_in_world(group, 1) == 1,
              "get_failed: not 3 then 1");
        OK(MPI_Group_free(&group));
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 0, &n));
        CHECK(n == 0, "acked %d with 0", n);
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &n));
        CHECK(n == 1, "acked %d with 1", n);
        OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &group));
        OK(MPI_Group_size(group, &n));
        CHECK(n == 1 && group_rank_in_world(group, 0) == 3, "acked group after 1: %d", n);
        OK(MPI_Group_free(&group));
        EXPECT(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &request),
               MPI_SUCCESS);
        EXPECT(MPI_Wait(&request, &status), MPIX_ERR_PROC_FAILED_PENDING);
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 5, &n));
        CHECK(n == 2, "acked %d with 5", n);
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 0, &n));
        CHECK(n == 2, "an acknowledgement was taken back: %d", n);
        OK(MPI_Send(&token, 1, MPI_INT, 2, 3, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, &status));
        CHECK(value == 42 && status.MPI_SOURCE == 2, "wildcard after the acks: %d from %d",
              value, status.MPI_SOURCE);
    } else if (rank == 2) {
        int answer = 42;
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
    }

    /* Every survivor acknowledges both: the agreement succeeds over 0, 2 and 4. */
    OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = FLAG_OF(rank);
    OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(flag == (0xff & ~0x15), "agreed flag of the survivors: %#x", flag);
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A member dies while a non-blocking collective is pending. rtrun kills rank 1 inside its
 * third all-reduce (c_programs.rs gives --kill 1@all_reduce:3:1, before rank 1's first message
 * of that call), the engine's schedule of its third MPI_Iallreduce, started together with an
 * MPI_Ibcast. Every survivor: rounds 1 and 2 complete with the right values (round 2
 * may instead fail with MPIX_ERR_PROC_FAILED, if the death is detected while it is pending);
 * round 3's all-reduce, which rank 1 never contributes to, completes with MPIX_ERR_PROC_FAILED
 * from MPI_Wait at the latest, never hangs; a non-blocking collective started after
 * the failure is known and before it is recognized fails too; after MPI_Comm_validate_global
 * they run over the survivors (rank 1 contributes nothing). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, round, rc = MPI_SUCCESS;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 3, "size %d", size);
    for (round = 1; round <= 10; round++) {
        int one = rank + round, sum = -1, word = rank == 0 ? round : -1;
        MPI_Request req[2];
        OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]));
        OK(MPI_Ibcast(&word, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[1]));
        rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        int rc_bcast = MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        /* Either may fail once the death is known (the broadcast of the round before rank
         * 1's death too, if it is detected while that one is pending): never hang. */
        if (rc != MPI_SUCCESS)
            EXPECT(rc, MPIX_ERR_PROC_FAILED);
        else
            CHECK(sum == size * (size - 1) / 2 + size * round, "round %d: sum %d", round, sum);
        if (rc_bcast != MPI_SUCCESS)
            EXPECT(rc_bcast, MPIX_ERR_PROC_FAILED);
        else
            CHECK(word == round, "round %d: broadcast %d", round, word);
        if (rc != MPI_SUCCESS || rc_bcast != MPI_SUCCESS)
            break;
    }
    CHECK(rank != 1, "rank 1 was not killed");
    CHECK(round == 2 || round == 3, "the failure was reported in round %d", round);
    printf("rank %d: iallreduce failed in round %d\n", rank, round);

    /* Known, not recognized: a new one fails at every survivor. */
    int v = 1, s = -1;
    MPI_Request r;
    OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);

    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int again = 0; again < 3; again++) {
        s = -1;
        OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(s == size - 1, "after validate_global: %d", s);
    }
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    return ft_finish();
}

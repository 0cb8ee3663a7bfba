/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A member dies inside a non-blocking collective that the engine runs itself. rtrun kills
 * rank 2 in its second broadcast, before its first message (c_programs.rs gives --kill
 * 2@broadcast:2:1): it would have forwarded the root's data to rank 3 (a binomial tree from
 * rank 0 over 4 ranks: 0 -> 2 -> 3, 0 -> 1). Each round is a broadcast of a strided datatype
 * (packed at the root, unpacked where it arrives), then an MPI_Iscan and an MPI_Ibarrier
 * pending together. Every survivor: round 1's broadcast completes with the right values; in
 * round 2
 * nothing hangs, rank 3's broadcast fails with MPIX_ERR_PROC_FAILED and leaves its buffer as
 * it was (nothing unpacked from data that never came); calls started after the failure is
 * known and before it is recognized fail; after MPI_Comm_validate_global the same calls run
 * over the survivors, rank 2 contributing nothing. */
#include "ft_common.h"

#define P 4

int main(int argc, char **argv) {
    int rank, size, failed, round;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == P, "run on %d ranks", P);
    MPI_Datatype every_other;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));

    int failed_bcast = 0;
    for (round = 1; round <= 2; round++) {
        /* The broadcast alone, waited for before the round's barrier starts (so round 1's
         * ends at every rank before rank 2 can die), then the scan and the barrier together. */
        int data[3] = {rank == 0 ? 10 * round : -1, -5, rank == 0 ? 10 * round + 2 : -1};
        int term = rank + round, prefix = -1, rc[3];
        MPI_Request req[3];
        OK(MPI_Ibcast(data, 1, every_other, 0, MPI_COMM_WORLD, &req[0]));
        rc[0] = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        OK(MPI_Iscan(&term, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]));
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[2]));
        for (int i = 1; i < 3; i++)
            rc[i] = MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        /* Round 1's broadcast ends at every rank before rank 2 leaves round 1's barrier; its
         * scan and barrier may end at a slow rank after rank 2 died: MPIX_ERR_PROC_FAILED. */
        if (round == 1)
            CHECK(rc[0] == MPI_SUCCESS, "round 1: broadcast failed (%d)", rc[0]);
        for (int i = 0; i < 3; i++)
            if (rc[i] != MPI_SUCCESS)
                EXPECT(rc[i], MPIX_ERR_PROC_FAILED);
        if (rc[0] == MPI_SUCCESS)
            CHECK(data[0] == 10 * round && data[1] == -5 && data[2] == 10 * round + 2,
                  "round %d: broadcast %d %d %d", round, data[0], data[1], data[2]);
        else {
            failed_bcast = 1;
            CHECK(data[0] == -1 && data[1] == -5 && data[2] == -1,
                  "round %d: a failed broadcast wrote %d %d %d", round, data[0], data[1],
                  data[2]);
        }
        if (rc[1] == MPI_SUCCESS && round == 1) {
            int want = 0;
            for (int r = 0; r <= rank; r++)
                want += r + round;
            CHECK(prefix == want, "round %d: scan %d, want %d", round, prefix, want);
        }
    }
    CHECK(rank != 2, "rank 2 was not killed");
    if (rank == 3)
        CHECK(failed_bcast, "rank 3's broadcast, whose data never came, did not fail");
    ft_wait_detected(MPI_COMM_WORLD, 2);

    /* Known, not recognized: new ones fail at every survivor. */
    int term = 1, prefix = -1, data[3] = {-1, -5, -1};
    MPI_Request r;
    OK(MPI_Iscan(&term, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    OK(MPI_Ibcast(data, 1, every_other, 0, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);

    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int again = 0; again < 3; again++) {
        int bc[3] = {rank == 3 ? 70 + again : -1, -5, rank == 3 ? 72 + again : -1};
        int max = -1;
        MPI_Request q[4];
        prefix = -1;
        OK(MPI_Ibcast(bc, 1, every_other, 3, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Iscan(&term, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Ireduce(&rank, &max, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &q[2]));
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &q[3]));
        OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        CHECK(bc[0] == 70 + again && bc[1] == -5 && bc[2] == 72 + again,
              "after validate_global: broadcast %d %d %d", bc[0], bc[1], bc[2]);
        /* The OK ranks up to this one: rank 2 counts no more. */
        int want = rank < 2 ? rank + 1 : rank;
        CHECK(prefix == want, "after validate_global: scan %d, want %d", prefix, want);
        if (rank == 0)
            CHECK(max == 3, "after validate_global: reduce MAX %d", max);
    }
    OK(MPI_Type_free(&every_other));
    return ft_finish();
}

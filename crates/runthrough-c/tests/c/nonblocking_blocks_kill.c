/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A member dies inside a non-blocking gather that the engine runs itself. rtrun kills rank 2
 * in its second gather, before its block leaves (c_programs.rs gives --kill 2@gather:2:1).
 * Each round: an MPI_Igatherv to rank 0 received as strided vectors (a scratch buffer unpacked
 * when the call succeeds), waited for, then an MPI_Iallgatherv of ints. Every survivor: round
 * 1 is right; in round 2 nothing hangs, rank 0's gather fails with MPIX_ERR_PROC_FAILED and
 * leaves its buffer as it was (nothing unpacked from a block that never came), the others'
 * gathers (which only send) succeed or fail with MPIX_ERR_PROC_FAILED; new calls fail until
 * MPI_Comm_validate_global, after which they run over the survivors and rank 2's slots are
 * left untouched. */
#include "ft_common.h"

#define P 4

int main(int argc, char **argv) {
    int rank, size, failed;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == P, "run on %d ranks", P);
    MPI_Datatype every_other;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other)); /* extent: 3 ints */
    OK(MPI_Type_commit(&every_other));
    int counts[P] = {1, 1, 1, 1}, displs[P] = {3, 2, 1, 0}, mine[2], all[3 * P], row[P];

    for (int round = 1; round <= 3; round++) {
        mine[0] = 10 * rank + round;
        mine[1] = -(10 * rank + round);
        for (int k = 0; k < 3 * P; k++)
            all[k] = -7;
        MPI_Request r;
        OK(MPI_Igatherv(mine, 2, MPI_INT, all, counts, displs, every_other, 0, MPI_COMM_WORLD,
                        &r));
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (round == 1)
            CHECK(rc == MPI_SUCCESS, "round 1: gather failed (%d)", rc);
        if (rc != MPI_SUCCESS) {
            EXPECT(rc, MPIX_ERR_PROC_FAILED);
            if (rank == 0)
                for (int k = 0; k < 3 * P; k++)
                    CHECK(all[k] == -7, "round %d: a failed gather wrote [%d] = %d", round, k,
                          all[k]);
            break;
        }
        CHECK(rank != 0 || round == 1, "round %d: rank 0's gather succeeded without rank 2",
              round);
        if (rank == 0)
            for (int p = 0; p < P; p++) {
                int *at = all + 3 * displs[p];
                CHECK(at[0] == 10 * p + round && at[1] == -7 && at[2] == -(10 * p + round),
                      "round %d: block of %d: %d %d %d", round, p, at[0], at[1], at[2]);
            }
        for (int p = 0; p < P; p++)
            row[p] = -7;
        OK(MPI_Iallgatherv(&mine[0], 1, MPI_INT, row, counts, displs, MPI_INT, MPI_COMM_WORLD,
                           &r));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            EXPECT(rc, MPIX_ERR_PROC_FAILED);
            break;
        }
    }
    CHECK(rank != 2, "rank 2 was not killed");
    ft_wait_detected(MPI_COMM_WORLD, 2);

    /* Known, not recognized: a new one fails. */
    MPI_Request r;
    OK(MPI_Iallgatherv(&mine[0], 1, MPI_INT, row, counts, displs, MPI_INT, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);

    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int again = 0; again < 2; again++) {
        mine[0] = 100 + rank;
        mine[1] = -(100 + rank);
        for (int k = 0; k < 3 * P; k++)
            all[k] = -7;
        for (int p = 0; p < P; p++)
            row[p] = -7;
        MPI_Request q[2];
        OK(MPI_Igatherv(mine, 2, MPI_INT, all, counts, displs, every_other, 0, MPI_COMM_WORLD,
                        &q[0]));
        OK(MPI_Iallgatherv(&mine[0], 1, MPI_INT, row, counts, displs, MPI_INT, MPI_COMM_WORLD,
                           &q[1]));
        OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int p = 0; p < P; p++) {
            int want = p == 2 ? -7 : 100 + p;
            CHECK(row[displs[p]] == want, "after validate_global: row[%d] = %d", displs[p],
                  row[displs[p]]);
            if (rank == 0) {
                int *at = all + 3 * displs[p];
                CHECK(at[0] == want && at[1] == -7 && at[2] == (p == 2 ? -7 : -want),
                      "after validate_global: block of %d: %d %d %d", p, at[0], at[1], at[2]);
            }
        }
    }
    OK(MPI_Type_free(&every_other));
    return ft_finish();
}

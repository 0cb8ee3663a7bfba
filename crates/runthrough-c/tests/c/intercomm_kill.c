/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Intercommunicators under failure, on 4 ranks: an intercommunicator between the even ranks
 * {0, 2} and the odd ranks {1, 3} of MPI_COMM_WORLD; then rank 3 (remote rank 1 of the even
 * group) dies.
 * - A receive from it and (once its failure is known) a send to it are MPIX_ERR_PROC_FAILED;
 *   ranks 0 and 1 still talk across the intercommunicator.
 * - A blocking MPI_ANY_SOURCE receive on it returns MPIX_ERR_PROC_FAILED at every survivor.
 * - MPI_Intercomm_merge returns MPIX_ERR_PROC_FAILED at every survivor (nobody acknowledged
 *   the failure); so does a new MPI_Intercomm_create over the old groups (the odd group's
 *   local communicator holds the dead rank), at every survivor, without a hang.
 * - MPIX_Comm_agree on it: MPIX_ERR_PROC_FAILED at every survivor until all acknowledged the
 *   failure (MPIX_Comm_failure_ack), with the AND of the remote group's survivors; after the
 *   acknowledgement a wildcard receive works again.
 * - After MPI_Comm_validate_global on MPI_COMM_WORLD, new groups ({0, 2} and {1}) make a
 *   working intercommunicator, which merges. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "needs 4 ranks");
    int even = rank % 2 == 0, lrank = rank / 2, victim = 3;
    MPI_Comm local, inter, merged = MPI_COMM_NULL, again = MPI_COMM_NULL;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 5, &inter));
    int got = -1;
    if (even)
        OK(MPI_Send(&rank, 1, MPI_INT, lrank, 1, inter));
    else
        OK(MPI_Recv(&got, 1, MPI_INT, lrank, 1, inter, MPI_STATUS_IGNORE));

    ft_sync_then_die(MPI_COMM_WORLD, victim);

    if (rank == 0) {
        EXPECT(MPI_Recv(&got, 1, MPI_INT, 1, 2, inter, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    } else if (rank == 2) {
        ft_wait_detected(MPI_COMM_WORLD, victim);
        EXPECT(MPI_Send(&rank, 1, MPI_INT, 1, 2, inter), MPIX_ERR_PROC_FAILED);
    }
    /* Ranks 0 and 1 (remote rank 0 of each other) still talk. */
    if (rank == 0 || rank == 1) {
        got = -1;
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, inter,
                        MPI_STATUS_IGNORE));
        CHECK(got == 1 - rank, "ping after the failure: %d", got);
    }

    /* A blocking wildcard receive meets the unacknowledged failure (in the remote group for
     * the even ranks, in the local group for rank 1). */
    if (rank == 1)
        ft_wait_detected(MPI_COMM_WORLD, victim);
    EXPECT(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, MPI_STATUS_IGNORE),
           MPIX_ERR_PROC_FAILED);

    EXPECT(MPI_Intercomm_merge(inter, 0, &merged), MPIX_ERR_PROC_FAILED);
    CHECK(merged == MPI_COMM_NULL, "a failed merge wrote a handle");
    EXPECT(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 6, &again),
           MPIX_ERR_PROC_FAILED);
    CHECK(again == MPI_COMM_NULL, "a failed creation wrote a handle");

    /* MPIX_Comm_agree: MPIX_ERR_PROC_FAILED at every survivor with the AND over the remote
     * group's contributors; after MPIX_Comm_failure_ack at all, no error; and a wildcard
     * receive works again. */
    int want = even ? ~(1 << 1) : ~((1 << 0) | (1 << 2)), agreed = ~(1 << rank);
    EXPECT(MPIX_Comm_agree(inter, &agreed), MPIX_ERR_PROC_FAILED);
    CHECK(agreed == want, "agree with a failure: %x, want %x", (unsigned)agreed, (unsigned)want);
    OK(MPIX_Comm_failure_ack(inter));
    agreed = ~(1 << rank);
    OK(MPIX_Comm_agree(inter, &agreed));
    CHECK(agreed == want, "agree after the ack: %x, want %x", (unsigned)agreed, (unsigned)want);
    if (rank == 0)
        OK(MPI_Send(&rank, 1, MPI_INT, 0, 10, inter));
    if (rank == 1) {
        MPI_Status status;
        OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 10, inter, &status));
        CHECK(got == 0 && status.MPI_SOURCE == 0, "wildcard after the ack: %d from %d", got,
              status.MPI_SOURCE);
    }
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&local));

    /* Recovery: recognize the failure, make new groups and a new intercommunicator. */
    int failed = -1;
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "%d failed in G", failed);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 7, &inter));
    int n = -1;
    OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == (even ? 1 : 2), "remote size %d", n);
    OK(MPI_Comm_size(inter, &n));
    CHECK(n == (even ? 2 : 1), "local size %d", n);
    if (rank == 1) {
        for (int r = 0; r < 2; r++) {
            OK(MPI_Recv(&got, 1, MPI_INT, r, 8, inter, MPI_STATUS_IGNORE));
            CHECK(got == 2 * r, "from remote %d: %d", r, got);
        }
    } else {
        OK(MPI_Send(&rank, 1, MPI_INT, 0, 8, inter));
    }
    OK(MPI_Intercomm_merge(inter, !even, &merged));
    int order[3] = {-1, -1, -1};
    OK(MPI_Comm_size(merged, &n));
    CHECK(n == 3, "merged size %d", n);
    OK(MPI_Allgather(&rank, 1, MPI_INT, order, 1, MPI_INT, merged));
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 1, "merged order %d %d %d", order[0],
          order[1], order[2]);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&local));
    return ft_finish();
}

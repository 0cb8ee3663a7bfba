/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A blocking MPI_ANY_SOURCE call that is waiting when a peer dies returns MPIX_ERR_PROC_FAILED
 * (never hangs). On 5 ranks, rtrun kills rank 1 (--kill 1@0.5) and then rank 3 (3@2) by
 * time, while both wait in a receive that nothing matches.
 * - Rank 0 waits in MPI_Recv(MPI_ANY_SOURCE): MPIX_ERR_PROC_FAILED once rank 1's death is
 *   known. It acknowledges that failure only (MPIX_Comm_ack_failed(comm, 1)), then waits in
 *   MPI_Sendrecv(to rank 2, from MPI_ANY_SOURCE): MPIX_ERR_PROC_FAILED once rank 3's is known.
 * - With both acknowledged, wildcard receives work again: told to, ranks 2 and 4 each send one
 *   message.
 * Every survivor then finds ranks 1 and 3 in G. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value = -1, failed = -1, acked = -1;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 5, "run on 5 ranks, not %d", size);
    if (rank == 1 || rank == 3) {
        MPI_Recv(&value, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        FAIL("rank %d was to be killed by rtrun", rank);
    }
    if (rank == 0) {
        int out = 7, got[2] = {0, 0};
        EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &acked));
        CHECK(acked == 1, "acknowledged %d", acked);
        EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, 2, 7, &value, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                            MPI_COMM_WORLD, &status), MPIX_ERR_PROC_FAILED);
        OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 2, &acked));
        CHECK(acked == 2, "acknowledged %d", acked);
        OK(MPI_Send(&out, 1, MPI_INT, 2, 8, MPI_COMM_WORLD));
        OK(MPI_Send(&out, 1, MPI_INT, 4, 8, MPI_COMM_WORLD));
        for (int i = 0; i < 2; i++) {
            OK(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status));
            CHECK(value == status.MPI_SOURCE * 10, "got %d from %d", value, status.MPI_SOURCE);
            got[status.MPI_SOURCE / 2 - 1]++;
        }
        CHECK(got[0] == 1 && got[1] == 1, "messages from 2: %d, from 4: %d", got[0], got[1]);
    } else {
        int answer = rank * 10;
        if (rank == 2) /* the send half of rank 0's MPI_Sendrecv */
            OK(MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 2, "G holds %d failures", failed);
    return ft_finish();
}

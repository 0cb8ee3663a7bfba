/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Sendrecv and MPI_Sendrecv_replace with a peer that died before the call.
 * Rank 1 dies once everyone is past a barrier; rank 0 waits until its detector knows.
 * - Dead peer on both sides, on the receive side only, on the send side only: each returns
 *   MPIX_ERR_PROC_FAILED. A send to the dead rank fails before the receive is posted, so the
 *   live sender's message is not consumed (rank 0 receives it afterwards); the replace
 *   variant leaves the buffer as it was.
 * - After MPI_Comm_validate_global recognizes rank 1 (NULL in G), it acts as MPI_PROC_NULL on
 *   either side: success, status source MPI_PROC_NULL, buffer untouched. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed = -1;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        int out = 5, in = -1, block = 77;
        ft_wait_detected(MPI_COMM_WORLD, 1);
        EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, 1, 0, &in, 1, MPI_INT, 1, 0, MPI_COMM_WORLD,
                            &status), MPIX_ERR_PROC_FAILED);
        /* Receive side dead: rank 2 gets the message that was sent. */
        EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, 2, 1, &in, 1, MPI_INT, 1, 1, MPI_COMM_WORLD,
                            &status), MPIX_ERR_PROC_FAILED);
        /* Send side dead: rank 2's message to rank 0 stays receivable. */
        EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, 1, 2, &in, 1, MPI_INT, 2, 2, MPI_COMM_WORLD,
                            &status), MPIX_ERR_PROC_FAILED);
        CHECK(in == -1, "a receive was done: %d", in);
        OK(MPI_Recv(&in, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, &status));
        CHECK(in == 22, "rank 2's message: %d", in);
        EXPECT(MPI_Sendrecv_replace(&block, 1, MPI_INT, 1, 3, 1, 3, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Sendrecv_replace(&block, 1, MPI_INT, 1, 3, 2, 3, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        CHECK(block == 77, "the replace buffer changed: %d", block);
        OK(MPI_Send(&out, 1, MPI_INT, 2, 9, MPI_COMM_WORLD)); /* rank 2 may go on */
    } else if (rank == 2) {
        int in = -1, answer = 22, go;
        OK(MPI_Recv(&in, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == 5, "rank 0's message: %d", in);
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    if (rank != 1) {
        int out = 8, in = -3, block = 99;
        OK(MPI_Sendrecv(&out, 1, MPI_INT, 1, 4, &in, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &status));
        CHECK(in == -3 && status.MPI_SOURCE == MPI_PROC_NULL, "recognized: in %d, source %d", in,
              status.MPI_SOURCE);
        OK(MPI_Sendrecv_replace(&block, 1, MPI_INT, 1, 4, 1, 4, MPI_COMM_WORLD, &status));
        CHECK(block == 99 && status.MPI_SOURCE == MPI_PROC_NULL, "recognized replace: %d", block);
        /* A live ring over the survivors 0 -> 2 -> 3 -> 0, skipping the dead rank's place. */
        int next = rank == 0 ? 2 : rank == 2 ? 3 : 0;
        int prev = rank == 0 ? 3 : rank == 2 ? 0 : 2;
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 5, &in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status));
        CHECK(in == prev, "survivor ring: %d from %d", in, prev);
    }
    return ft_finish();
}

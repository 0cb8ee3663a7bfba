/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A synchronous send whose destination dies before matching it fails, without a hang.
 * - Rank 0's MPI_Issend to rank 1 is on its way (rank 1 took rank 0's next message, so the
 *   synchronous one arrived first) when rank 1 dies without receiving it: MPI_Wait returns
 *   MPIX_ERR_PROC_FAILED.
 * - Rank 2's blocking MPI_Ssend to rank 1, started before the death is known, returns
 *   MPIX_ERR_PROC_FAILED.
 * - A synchronous message that rank 1 sent just before it died is still received by rank 0.
 * - Between live ranks MPI_Ssend still completes; after MPI_Comm_validate_global the dead
 *   rank is MPI_PROC_NULL to a synchronous send too. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value = 7, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "needs 3 ranks");
    MPI_Request request;
    if (rank == 0) {
        OK(MPI_Issend(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &request));
        OK(MPI_Send(&value, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
        EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
        /* Rank 1's synchronous message, sent before it died, is still received (and its
         * acknowledgement goes nowhere, harmlessly). */
        int last = -1;
        OK(MPI_Recv(&last, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(last == 11, "the dead rank's synchronous message: %d", last);
    } else if (rank == 1) {
        OK(MPI_Recv(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int last = 11;
        OK(MPI_Issend(&last, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &request));
        DIE();
    } else if (rank == 2) {
        EXPECT(MPI_Ssend(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    }
    /* Live ranks 0 and 2 exchange by synchronous sends (each receive is posted first). */
    if (rank == 0 || rank == 2) {
        int other = 2 - rank, got = -1;
        OK(MPI_Irecv(&got, 1, MPI_INT, other, 4, MPI_COMM_WORLD, &request));
        OK(MPI_Ssend(&rank, 1, MPI_INT, other, 4, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        CHECK(got == other, "exchange: %d from %d", got, other);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    if (rank == 0)
        OK(MPI_Ssend(&value, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    return ft_finish();
}

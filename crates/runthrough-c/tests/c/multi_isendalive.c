/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/multi_isendalive.c: rank 0 isends to everyone, round after round; rank 1
 * dies after the first round; sends to the live ranks keep working.
 * Run-through: in the second round the send to the dead rank (known, not yet in G) fails with
 * MPIX_ERR_PROC_FAILED (reported by MPI_Waitall as MPI_ERR_IN_STATUS, in that request's status)
 * while the others succeed; after MPI_Comm_validate_global the dead rank is recognized and a
 * send to it completes as to MPI_PROC_NULL (third round: every request succeeds). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    for (int round = 0; round < 3; round++) {
        if (round == 1 && rank == 1)
            DIE();
        if (round == 2) {
            int failed = -1;
            OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
            CHECK(failed == 1, "num_failed = %d", failed);
        }
        if (rank == 0) {
            int values[16];
            MPI_Request requests[16];
            MPI_Status statuses[16];
            if (round == 1)
                ft_wait_detected(MPI_COMM_WORLD, 1);
            for (int dest = 1; dest < size; dest++) {
                values[dest] = 100 * round + dest;
                OK(MPI_Isend(&values[dest], 1, MPI_INT, dest, round, MPI_COMM_WORLD,
                             &requests[dest - 1]));
            }
            int rc = MPI_Waitall(size - 1, requests, statuses);
            if (round == 1) {
                CHECK(rc == MPI_ERR_IN_STATUS, "Waitall returned %d", rc);
                CHECK(statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED, "status of rank 1: %d",
                      statuses[0].MPI_ERROR);
                for (int i = 1; i < size - 1; i++)
                    CHECK(statuses[i].MPI_ERROR == MPI_SUCCESS, "status %d: %d", i,
                          statuses[i].MPI_ERROR);
            } else {
                CHECK(rc == MPI_SUCCESS, "round %d: Waitall returned %d", round, rc);
            }
            for (int i = 0; i < size - 1; i++)
                CHECK(requests[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        } else {
            int value = -1;
            OK(MPI_Recv(&value, 1, MPI_INT, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(value == 100 * round + rank, "round %d: got %d", round, value);
        }
    }
    return ft_finish();
}

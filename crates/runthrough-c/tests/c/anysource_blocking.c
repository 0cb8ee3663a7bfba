/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Every blocking call that receives from MPI_ANY_SOURCE, when this rank knows of a failure it
 * has not acknowledged: MPIX_ERR_PROC_FAILED (as ULFM programs expect) and nothing received;
 * the non-blocking receive reports MPIX_ERR_PROC_FAILED_PENDING and stays pending.
 * Rank 1 dies once every rank is past a barrier; rank 0 waits until it knows.
 * - MPI_Recv, MPI_Probe, MPI_Sendrecv (its send half is done: rank 2 gets the message) and
 *   MPI_Sendrecv_replace (buffer untouched) from MPI_ANY_SOURCE: MPIX_ERR_PROC_FAILED.
 * - MPI_Irecv from MPI_ANY_SOURCE: MPI_Test gives flag 0 or MPIX_ERR_PROC_FAILED_PENDING and
 *   MPI_Wait MPIX_ERR_PROC_FAILED_PENDING, the request kept.
 * - After MPIX_Comm_failure_ack, rank 2's messages arrive in order: the kept request gets the
 *   first, a blocking wildcard MPI_Recv the second (so nothing was consumed before). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value = -1, go = 1;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        MPI_Request request;
        int out = 5, block = 77, flag = 1;
        ft_wait_detected(MPI_COMM_WORLD, 1);
        EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status),
               MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Probe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status), MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, 2, 5, &value, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                            MPI_COMM_WORLD, &status), MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Sendrecv_replace(&block, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_ANY_SOURCE, 0,
                                    MPI_COMM_WORLD, &status), MPIX_ERR_PROC_FAILED);
        CHECK(value == -1 && block == 77, "a wildcard call received: %d, %d", value, block);

        OK(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &request));
        int rc = MPI_Test(&request, &flag, &status), class_ = -1;
        MPI_Error_class(rc, &class_);
        CHECK((rc == MPI_SUCCESS && !flag) || class_ == MPIX_ERR_PROC_FAILED_PENDING,
              "MPI_Test: rc %d, flag %d", rc, flag);
        CHECK(request != MPI_REQUEST_NULL, "MPI_Test freed a pending request");
        EXPECT(MPI_Wait(&request, &status), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(request != MPI_REQUEST_NULL, "MPI_Wait freed a pending request");

        OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        OK(MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, &status));
        CHECK(value == 42 && status.MPI_SOURCE == 2, "kept request: %d from %d", value,
              status.MPI_SOURCE);
        OK(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status));
        CHECK(value == 43 && status.MPI_SOURCE == 2, "blocking: %d from %d", value,
              status.MPI_SOURCE);
    } else if (rank == 2) {
        int answers[2] = {42, 43};
        OK(MPI_Recv(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(value == 5, "the send half of the wildcard MPI_Sendrecv: %d", value);
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answers[0], 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
        OK(MPI_Send(&answers[1], 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    return ft_finish();
}

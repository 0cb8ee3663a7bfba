/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Request_get_status on 3 ranks: it says whether a request is complete without freeing it
 * or making it inactive, and the call that completes the request afterwards gives the same
 * status. A receive (flag 0 before its message is sent, then 1 with the sender and tag, the
 * handle unchanged, then MPI_Wait frees it), MPI_REQUEST_NULL, a persistent receive (complete,
 * then inactive after MPI_Wait, still allocated), an MPI_Ibarrier request; then rank 2 dies: a
 * receive from it is complete with MPIX_ERR_PROC_FAILED (returned by get_status and again by
 * MPI_Wait), a wildcard receive is not complete (MPIX_ERR_PROC_FAILED_PENDING) and keeps its
 * handle. MPI_Status_set_elements / _set_cancelled. Bad input: NULL flag MPI_ERR_ARG, an
 * unknown handle MPI_ERR_REQUEST. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, flag = -1, value = -1, token = 7;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    MPI_Status status;
    if (rank == 2) {
        MPI_Comm mine;
        OK(MPI_Comm_split(MPI_COMM_WORLD, 1, rank, &mine)); /* alone in its half */
        ft_sync_then_die(MPI_COMM_WORLD, 2);
        return 1;
    }
    if (rank == 0) {
        MPI_Request r;
        OK(MPI_Irecv(&value, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r));
        OK(MPI_Request_get_status(r, &flag, &status));
        CHECK(flag == 0, "complete before the message was sent");
        OK(MPI_Send(&token, 1, MPI_INT, 1, 4, MPI_COMM_WORLD)); /* go */
        MPI_Request kept = r;
        do {
            OK(MPI_Request_get_status(r, &flag, &status));
        } while (!flag);
        CHECK(r == kept && status.MPI_SOURCE == 1 && status.MPI_TAG == 5 && value == 42,
              "get_status: source %d tag %d value %d", status.MPI_SOURCE, status.MPI_TAG, value);
        OK(MPI_Request_get_status(r, &flag, &status)); /* again: the same */
        CHECK(flag == 1 && status.MPI_SOURCE == 1, "a second look");
        OK(MPI_Wait(&r, &status));
        CHECK(r == MPI_REQUEST_NULL && status.MPI_SOURCE == 1 && status.MPI_TAG == 5,
              "MPI_Wait after get_status: %d %d", status.MPI_SOURCE, status.MPI_TAG);
        OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &status));
        CHECK(flag == 1, "MPI_REQUEST_NULL is complete");

        /* Persistent: complete, then inactive and still allocated. */
        MPI_Request p;
        OK(MPI_Recv_init(&value, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &p));
        OK(MPI_Start(&p));
        OK(MPI_Send(&token, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
        do {
            OK(MPI_Request_get_status(p, &flag, &status));
        } while (!flag);
        CHECK(status.MPI_TAG == 6 && value == 43, "persistent: tag %d value %d", status.MPI_TAG,
              value);
        OK(MPI_Wait(&p, &status));
        CHECK(p != MPI_REQUEST_NULL && status.MPI_TAG == 6, "persistent after Wait");
        OK(MPI_Request_get_status(p, &flag, &status));
        CHECK(flag == 1, "an inactive persistent request is complete");
        OK(MPI_Request_free(&p));

        /* A status set by hand (generalized requests, mpi4py's pickle-5 helpers). */
        MPI_Status made;
        int n = -1;
        OK(MPI_Status_set_elements(&made, MPI_INT, 3));
        OK(MPI_Get_count(&made, MPI_INT, &n));
        CHECK(n == 3, "MPI_Get_count after set_elements: %d", n);
        OK(MPI_Get_elements(&made, MPI_BYTE, &n));
        CHECK(n == 3 * (int)sizeof(int), "MPI_Get_elements in bytes: %d", n);
        OK(MPI_Status_set_cancelled(&made, 1));
        OK(MPI_Test_cancelled(&made, &n));
        CHECK(n == 1, "MPI_Test_cancelled after set_cancelled: %d", n);
        EXPECT(MPI_Status_set_elements(&made, MPI_INT, -1), MPI_ERR_COUNT);
        EXPECT(MPI_Status_set_elements(NULL, MPI_INT, 1), MPI_ERR_ARG);
        EXPECT(MPI_Request_get_status(r, NULL, &status), MPI_ERR_ARG);
        EXPECT(MPI_Request_get_status(123456, &flag, &status), MPI_ERR_REQUEST);
    } else {
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int answer = 42;
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        answer = 43;
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
    }

    /* Ranks 0 and 1 alone, for a non-blocking collective at the end. */
    MPI_Request barrier;
    MPI_Comm pair;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair));

    /* Rank 2 dies. */
    ft_sync_then_die(MPI_COMM_WORLD, 2);
    if (rank == 0) {
        MPI_Request dead, any;
        OK(MPI_Irecv(&value, 1, MPI_INT, 2, 8, MPI_COMM_WORLD, &dead));
        int rc;
        do {
            rc = MPI_Request_get_status(dead, &flag, &status);
        } while (!flag && rc == MPI_SUCCESS);
        CHECK(rc == MPIX_ERR_PROC_FAILED && flag == 1 && dead != MPI_REQUEST_NULL,
              "a receive from the dead rank: rc %d flag %d", rc, flag);
        EXPECT(MPI_Wait(&dead, &status), MPIX_ERR_PROC_FAILED);
        CHECK(dead == MPI_REQUEST_NULL, "freed by MPI_Wait");
        OK(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &any));
        EXPECT(MPI_Request_get_status(any, &flag, &status), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(flag == 0 && any != MPI_REQUEST_NULL, "a wildcard receive: flag %d", flag);
        OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        OK(MPI_Send(&token, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
        OK(MPI_Wait(&any, &status));
        CHECK(status.MPI_SOURCE == 1 && value == 44, "the wildcard receive after the ack");
    } else {
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int answer = 44;
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }
    OK(MPI_Ibarrier(pair, &barrier));
    do {
        OK(MPI_Request_get_status(barrier, &flag, &status));
    } while (!flag);
    OK(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
    CHECK(barrier == MPI_REQUEST_NULL, "the Ibarrier request freed by MPI_Wait");
    OK(MPI_Comm_free(&pair));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Testall, MPI_Testany, MPI_Waitsome, MPI_Testsome and MPI_Request_free, with and without
 * failures, on 4 ranks. Rank 0 posts receives from ranks 2 and 3, which send only when told
 * to ("go"), so rank 0 knows what can be complete when.
 * - Before the go: Testall flag 0 with the requests untouched, Testany flag 0 with index
 *   MPI_UNDEFINED, Testsome outcount 0. After it, each call completes them with the right
 *   data, sources and indices; on inactive requests Testall/Testany give flag 1, Waitsome and
 *   Testsome MPI_UNDEFINED.
 * - MPI_Request_free: of a send (the message still arrives), of a pending receive (its message
 *   still lands in the buffer); of an MPI_Ibarrier request MPI_ERR_REQUEST.
 * - Bad input: a negative count MPI_ERR_COUNT, NULL arguments MPI_ERR_ARG, an unknown handle
 *   MPI_ERR_REQUEST (nothing touched).
 * - Rank 1 dies: a receive from it is done with MPIX_ERR_PROC_FAILED in its status
 *   (MPI_ERR_IN_STATUS) in Testall and Waitsome, the other requests unaffected; an
 *   MPI_ANY_SOURCE receive is reported MPIX_ERR_PROC_FAILED_PENDING by Testany and Testsome
 *   and keeps its handle, and completes after MPIX_Comm_failure_ack. */
#include "ft_common.h"

static void go(int to, int tag) {
    int token = 1;
    OK(MPI_Send(&token, 1, MPI_INT, to, tag, MPI_COMM_WORLD));
}

static void serve(int rank, int tag) {
    int token, answer = rank * 10 + tag;
    OK(MPI_Recv(&token, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Send(&answer, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
}

static void post_two(int values[2], MPI_Request requests[2], int tag) {
    values[0] = values[1] = -1;
    OK(MPI_Irecv(&values[0], 1, MPI_INT, 2, tag, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Irecv(&values[1], 1, MPI_INT, 3, tag, MPI_COMM_WORLD, &requests[1]));
}

static void check_two(const int values[2], int tag) {
    CHECK(values[0] == 20 + tag && values[1] == 30 + tag, "tag %d: got %d, %d", tag, values[0],
          values[1]);
}

static void rank0_without_failures(void) {
    int values[2], flag = -1, index = -1, outcount = -1, indices[2];
    MPI_Request requests[2];
    MPI_Status statuses[2], status;

    /* Testall */
    post_two(values, requests, 1);
    OK(MPI_Testall(2, requests, &flag, statuses));
    CHECK(flag == 0 && requests[0] != MPI_REQUEST_NULL && requests[1] != MPI_REQUEST_NULL,
          "Testall before the go: flag %d", flag);
    go(2, 1);
    go(3, 1);
    for (flag = 0; !flag;)
        OK(MPI_Testall(2, requests, &flag, statuses));
    check_two(values, 1);
    CHECK(statuses[0].MPI_SOURCE == 2 && statuses[1].MPI_SOURCE == 3, "Testall sources");
    CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL, "Testall freed");
    OK(MPI_Testall(2, requests, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1, "Testall of inactive requests: flag %d", flag);

    /* Testany */
    post_two(values, requests, 2);
    OK(MPI_Testany(2, requests, &index, &flag, &status));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "Testany before the go: %d, %d", flag, index);
    go(3, 2);
    for (flag = 0; !flag;)
        OK(MPI_Testany(2, requests, &index, &flag, &status));
    CHECK(index == 1 && status.MPI_SOURCE == 3 && requests[1] == MPI_REQUEST_NULL,
          "Testany: index %d", index);
    go(2, 2);
    for (flag = 0; !flag;)
        OK(MPI_Testany(2, requests, &index, &flag, &status));
    CHECK(index == 0 && status.MPI_SOURCE == 2, "Testany: index %d", index);
    check_two(values, 2);
    OK(MPI_Testany(2, requests, &index, &flag, &status));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany of inactive: %d, %d", flag, index);

    /* Testsome, then Waitsome */
    post_two(values, requests, 3);
    OK(MPI_Testsome(2, requests, &outcount, indices, statuses));
    CHECK(outcount == 0, "Testsome before the go: %d", outcount);
    go(2, 3);
    for (outcount = 0; outcount == 0;)
        OK(MPI_Testsome(2, requests, &outcount, indices, statuses));
    CHECK(outcount == 1 && indices[0] == 0 && statuses[0].MPI_SOURCE == 2, "Testsome: %d",
          outcount);
    go(3, 3);
    OK(MPI_Waitsome(2, requests, &outcount, indices, statuses));
    CHECK(outcount == 1 && indices[0] == 1 && statuses[0].MPI_SOURCE == 3, "Waitsome: %d",
          outcount);
    check_two(values, 3);
    OK(MPI_Waitsome(2, requests, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome of inactive: %d", outcount);
    OK(MPI_Testsome(2, requests, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "Testsome of inactive: %d", outcount);

    /* Request_free: a send, a pending receive, a collective's request. */
    MPI_Request request;
    int out = 99;
    OK(MPI_Isend(&out, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, &request));
    OK(MPI_Request_free(&request));
    CHECK(request == MPI_REQUEST_NULL, "Request_free did not reset the handle");
    volatile int landed = -1;
    OK(MPI_Irecv((void *)&landed, 1, MPI_INT, 3, 4, MPI_COMM_WORLD, &request));
    OK(MPI_Request_free(&request));
    go(3, 4);
    double deadline = MPI_Wtime() + 20;
    while (landed == -1 && MPI_Wtime() < deadline)
        usleep(1000);
    CHECK(landed == 34, "the freed receive's message: %d", landed);
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
    EXPECT(MPI_Request_free(&request), MPI_ERR_REQUEST);
    CHECK(request != MPI_REQUEST_NULL, "a collective's request was freed");
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));

    /* Bad input. */
    MPI_Request bogus[2] = {MPI_REQUEST_NULL, 12345};
    EXPECT(MPI_Testall(-1, requests, &flag, statuses), MPI_ERR_COUNT);
    EXPECT(MPI_Testall(2, NULL, &flag, statuses), MPI_ERR_ARG);
    EXPECT(MPI_Testall(2, requests, NULL, statuses), MPI_ERR_ARG);
    EXPECT(MPI_Testall(2, bogus, &flag, statuses), MPI_ERR_REQUEST);
    EXPECT(MPI_Testany(2, requests, NULL, &flag, &status), MPI_ERR_ARG);
    EXPECT(MPI_Testany(2, bogus, &index, &flag, &status), MPI_ERR_REQUEST);
    EXPECT(MPI_Waitsome(2, requests, NULL, indices, statuses), MPI_ERR_ARG);
    EXPECT(MPI_Waitsome(2, requests, &outcount, NULL, statuses), MPI_ERR_ARG);
    EXPECT(MPI_Waitsome(2, bogus, &outcount, indices, statuses), MPI_ERR_REQUEST);
    EXPECT(MPI_Testsome(-3, requests, &outcount, indices, statuses), MPI_ERR_COUNT);
    CHECK(bogus[1] == 12345, "a bad handle was touched");
    EXPECT(MPI_Request_free(NULL), MPI_ERR_ARG);
    request = MPI_REQUEST_NULL;
    EXPECT(MPI_Request_free(&request), MPI_ERR_REQUEST);
    request = 12345;
    EXPECT(MPI_Request_free(&request), MPI_ERR_REQUEST);
}

static void rank0_with_a_failure(void) {
    int values[2] = {-1, -1}, flag = -1, index = -1, outcount = -1, indices[2];
    MPI_Request requests[2];
    MPI_Status statuses[2], status;
    ft_wait_detected(MPI_COMM_WORLD, 1);

    /* A receive from the dead rank is done, with its error in its status. */
    OK(MPI_Irecv(&values[0], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Irecv(&values[1], 1, MPI_INT, 2, 5, MPI_COMM_WORLD, &requests[1]));
    EXPECT(MPI_Waitsome(2, requests, &outcount, indices, statuses), MPI_ERR_IN_STATUS);
    CHECK(outcount == 1 && indices[0] == 0 && statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED,
          "Waitsome: %d done, error %d", outcount, statuses[0].MPI_ERROR);
    CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] != MPI_REQUEST_NULL, "Waitsome handles");
    go(2, 5);
    OK(MPI_Waitsome(2, requests, &outcount, indices, statuses));
    CHECK(outcount == 1 && indices[0] == 1 && values[1] == 25, "Waitsome: %d", values[1]);

    OK(MPI_Irecv(&values[0], 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &requests[0]));
    for (flag = 0; !flag;)
        EXPECT(MPI_Testall(1, requests, &flag, statuses), MPI_ERR_IN_STATUS);
    CHECK(statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED && requests[0] == MPI_REQUEST_NULL,
          "Testall: error %d", statuses[0].MPI_ERROR);

    /* A wildcard receive: reported, kept, completed after the acknowledgement. */
    values[0] = -1;
    OK(MPI_Irecv(&values[0], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &requests[0]));
    EXPECT(MPI_Testany(1, requests, &index, &flag, &status), MPIX_ERR_PROC_FAILED_PENDING);
    CHECK(index == 0 && flag == 0 && requests[0] != MPI_REQUEST_NULL, "Testany: %d, %d", index,
          flag);
    EXPECT(MPI_Testsome(1, requests, &outcount, indices, statuses), MPI_ERR_IN_STATUS);
    CHECK(outcount == 1 && statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED_PENDING &&
              requests[0] != MPI_REQUEST_NULL,
          "Testsome: %d, error %d", outcount, statuses[0].MPI_ERROR);
    OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    go(2, 7);
    OK(MPI_Waitsome(1, requests, &outcount, indices, statuses));
    CHECK(outcount == 1 && values[0] == 27 && statuses[0].MPI_SOURCE == 2, "after the ack: %d",
          values[0]);
}

int main(int argc, char **argv) {
    int rank, size, value;
    ft_init(&argc, &argv, &rank, &size);
    if (rank == 0) {
        rank0_without_failures();
    } else if (rank == 2 || rank == 3) {
        for (int tag = 1; tag <= 3; tag++)
            serve(rank, tag);
        if (rank == 2)
            OK(MPI_Recv(&value, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        else
            serve(rank, 4);
    }
    if (rank != 0) { /* rank 0's is in rank0_without_failures */
        MPI_Request request;
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &request));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0)
        rank0_with_a_failure();
    if (rank == 2) {
        serve(rank, 5);
        serve(rank, 7);
    }
    return ft_finish();
}

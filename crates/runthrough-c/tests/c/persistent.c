/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Persistent requests, buffered and ready sends, on a ring of 4 ranks (left = rank - 1,
 * right = rank + 1). No failures (persistent_kill.c has them).
 * - Halo exchange: MPI_Recv_init from both neighbours, MPI_Send_init to the right and
 *   MPI_Bsend_init to the left, then 20 iterations of MPI_Startall + MPI_Waitall; each
 *   iteration checks the values and statuses, and that the handles stay valid (not
 *   MPI_REQUEST_NULL) between iterations.
 * - An inactive persistent request: MPI_Test gives flag 1 and an empty status, MPI_Wait an
 *   empty status, both keep the handle; MPI_Waitany over inactive persistent requests and an
 *   active MPI_Irecv gives the active one, then MPI_UNDEFINED; Testany / Testall / Waitsome /
 *   Testsome treat inactive persistent requests as MPI_REQUEST_NULL.
 * - MPI_Start of an active request, and of a non-persistent one: MPI_ERR_REQUEST; MPI_Startall
 *   with an active request among them starts none.
 * - MPI_Request_free of an inactive and of an active persistent request (the active receive
 *   still gets its message; the active send still arrives).
 * - MPI_Ssend_init: the operation completes only once matched (rank 1 posts its receive after
 *   a message rank 0 sends after testing); started twice.
 * - MPI_Cancel of a started persistent receive, then the same request started again receives.
 * - MPI_Rsend_init, and persistent requests to / from MPI_PROC_NULL.
 * - A persistent receive of a strided (vector) type, started twice.
 * - MPI_Bsend, MPI_Ibsend, MPI_Rsend, MPI_Irsend; MPI_Buffer_attach / _detach (a second attach
 *   is MPI_ERR_BUFFER, the detach returns the same pointer and size, an empty detach NULL / 0,
 *   a negative size MPI_ERR_BUFFER).
 * - Bad input: a NULL request (MPI_ERR_ARG), an invalid rank (MPI_ERR_RANK) or tag
 *   (MPI_ERR_TAG) at the init call. */
#include "ft_common.h"

#include <string.h>

#define ITERATIONS 20

static int rank, size, left, right;

static void check_empty(const MPI_Status *status, const char *what) {
    int count = -1;
    OK(MPI_Get_count(status, MPI_INT, &count));
    CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG &&
              status->MPI_ERROR == MPI_SUCCESS && count == 0,
          "%s: not an empty status (source %d, tag %d, error %d, count %d)", what,
          status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, count);
}

static void halo_exchange(void) {
    int send_right = -1, send_left = -1, from_left = -1, from_right = -1;
    MPI_Request requests[4];
    MPI_Status statuses[4];
    OK(MPI_Recv_init(&from_left, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Recv_init(&from_right, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Send_init(&send_right, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[2]));
    OK(MPI_Bsend_init(&send_left, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &requests[3]));
    MPI_Request handles[4];
    memcpy(handles, requests, sizeof handles);
    for (int it = 0; it < ITERATIONS; it++) {
        send_right = 1000 * rank + it;
        send_left = -(1000 * rank + it);
        from_left = from_right = -1;
        OK(MPI_Startall(4, requests));
        OK(MPI_Waitall(4, requests, statuses));
        CHECK(from_left == 1000 * left + it && from_right == -(1000 * right + it),
              "iteration %d: from left %d, from right %d", it, from_left, from_right);
        CHECK(statuses[0].MPI_SOURCE == left && statuses[0].MPI_TAG == 1 &&
                  statuses[1].MPI_SOURCE == right && statuses[1].MPI_TAG == 2,
              "iteration %d: statuses %d/%d %d/%d", it, statuses[0].MPI_SOURCE,
              statuses[0].MPI_TAG, statuses[1].MPI_SOURCE, statuses[1].MPI_TAG);
        for (int k = 0; k < 4; k++)
            CHECK(requests[k] != MPI_REQUEST_NULL && requests[k] == handles[k],
                  "iteration %d: request %d became %d", it, k, requests[k]);
    }
    for (int k = 0; k < 4; k++) {
        OK(MPI_Request_free(&requests[k]));
        CHECK(requests[k] == MPI_REQUEST_NULL, "Request_free left %d", requests[k]);
    }
}

/* Inactive persistent requests in every completion call. */
static void inactive(void) {
    int value = -1, other = -1, got = -1, flag = -1, index = -1, outcount = -1, indices[3];
    MPI_Request persistent[2], mixed[3];
    MPI_Status status, statuses[3];
    OK(MPI_Recv_init(&value, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &persistent[0]));
    OK(MPI_Send_init(&other, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &persistent[1]));
    MPI_Request kept = persistent[0];

    OK(MPI_Test(&persistent[0], &flag, &status));
    CHECK(flag == 1 && persistent[0] == kept, "Test of an inactive request: flag %d", flag);
    check_empty(&status, "Test of an inactive request");
    OK(MPI_Wait(&persistent[0], &status));
    CHECK(persistent[0] == kept, "Wait of an inactive request freed it");
    check_empty(&status, "Wait of an inactive request");

    /* Waitany: the active receive among inactive persistent requests. */
    mixed[0] = persistent[0];
    OK(MPI_Irecv(&got, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &mixed[1]));
    mixed[2] = persistent[1];
    int token = 100 + rank;
    OK(MPI_Send(&token, 1, MPI_INT, left, 4, MPI_COMM_WORLD));
    OK(MPI_Waitany(3, mixed, &index, &status));
    CHECK(index == 1 && got == 100 + right && status.MPI_SOURCE == right,
          "Waitany: index %d, got %d", index, got);
    CHECK(mixed[0] == persistent[0] && mixed[1] == MPI_REQUEST_NULL && mixed[2] == persistent[1],
          "Waitany changed the handles");
    OK(MPI_Waitany(3, mixed, &index, &status));
    CHECK(index == MPI_UNDEFINED, "Waitany of inactive requests: index %d", index);
    check_empty(&status, "Waitany of inactive requests");
    OK(MPI_Testany(3, mixed, &index, &flag, &status));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany of inactive: flag %d index %d", flag,
          index);
    OK(MPI_Testall(3, mixed, &flag, statuses));
    CHECK(flag == 1 && mixed[0] == persistent[0] && mixed[2] == persistent[1],
          "Testall of inactive: flag %d", flag);
    check_empty(&statuses[0], "Testall of an inactive persistent request");
    OK(MPI_Waitsome(3, mixed, &outcount, indices, statuses));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome of inactive: outcount %d", outcount);
    OK(MPI_Testsome(3, mixed, &outcount, indices, statuses));
    CHECK(outcount == MPI_UNDEFINED, "Testsome of inactive: outcount %d", outcount);

    /* Started: the persistent pair through Waitsome / Testany, handles kept. */
    other = 200 + rank;
    OK(MPI_Startall(2, persistent));
    int done = 0;
    while (done < 2) {
        OK(MPI_Waitsome(2, persistent, &outcount, indices, statuses));
        CHECK(outcount >= 1 && outcount <= 2, "Waitsome: outcount %d", outcount);
        done += outcount;
    }
    CHECK(value == 200 + left && persistent[0] == kept, "Waitsome: %d", value);
    OK(MPI_Waitsome(2, persistent, &outcount, indices, statuses));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome after completion: outcount %d", outcount);
    other = 300 + rank;
    OK(MPI_Startall(2, persistent));
    for (done = 0; done < 2;) {
        OK(MPI_Testany(2, persistent, &index, &flag, &status));
        if (flag) {
            CHECK(index != MPI_UNDEFINED, "Testany: no index, %d done", done);
            done++;
        }
    }
    CHECK(value == 300 + left, "Testany: %d", value);
    OK(MPI_Testany(2, persistent, &index, &flag, &status));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany after completion: %d %d", flag, index);

    /* MPI_Start of an active request; of a non-persistent one; Startall with an active one. */
    OK(MPI_Start(&persistent[0]));
    EXPECT(MPI_Start(&persistent[0]), MPI_ERR_REQUEST);
    MPI_Request plain;
    OK(MPI_Isend(&token, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &plain));
    EXPECT(MPI_Start(&plain), MPI_ERR_REQUEST);
    OK(MPI_Recv(&got, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    MPI_Request pair[2] = {persistent[1], persistent[0]};
    EXPECT(MPI_Startall(2, pair), MPI_ERR_REQUEST);
    /* The send was not started: the neighbour gets exactly one message on tag 3. */
    other = 400 + rank;
    OK(MPI_Start(&persistent[1]));
    OK(MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE));
    CHECK(value == 400 + left, "after Startall refused: %d", value);
    OK(MPI_Iprobe(left, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "MPI_Startall started a request before refusing");

    /* Request_free: inactive, then active. */
    OK(MPI_Request_free(&persistent[1]));
    CHECK(persistent[1] == MPI_REQUEST_NULL, "Request_free of an inactive request");
    EXPECT(MPI_Start(&persistent[1]), MPI_ERR_REQUEST);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    volatile int *landing = &value;
    value = -1;
    OK(MPI_Start(&persistent[0]));
    OK(MPI_Request_free(&persistent[0]));
    CHECK(persistent[0] == MPI_REQUEST_NULL, "Request_free of an active request");
    MPI_Request send;
    other = 500 + rank;
    OK(MPI_Send_init(&other, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &send));
    OK(MPI_Start(&send));
    OK(MPI_Request_free(&send));
    for (int k = 0; k < 10000 && *landing != 500 + left; k++)
        usleep(1000);
    CHECK(*landing == 500 + left, "the freed receive got %d", *landing);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_Ssend_init from 0 to 1: complete only once matched. */
static void synchronous(void) {
    int data = 42, got = -1, go = 1, flag = -1;
    MPI_Request request;
    if (rank == 0) {
        OK(MPI_Ssend_init(&data, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &request));
        for (int round = 0; round < 2; round++) {
            data = 42 + round;
            OK(MPI_Start(&request));
            for (int k = 0; k < 100; k++) {
                OK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "round %d: Ssend_init complete before rank 1 posted (test %d)",
                      round, k);
            }
            OK(MPI_Send(&go, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
            OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
            CHECK(request != MPI_REQUEST_NULL, "Ssend_init request freed by Wait");
        }
        OK(MPI_Request_free(&request));
    } else if (rank == 1) {
        for (int round = 0; round < 2; round++) {
            OK(MPI_Recv(&go, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Recv(&got, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(got == 42 + round, "round %d: Ssend_init data %d", round, got);
        }
    }
}

/* MPI_Cancel of a started persistent receive; the request is then started again. */
static void cancel(void) {
    int value = -1, flag = -1, token;
    MPI_Request request;
    MPI_Status status;
    OK(MPI_Recv_init(&value, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &request));
    OK(MPI_Start(&request));
    OK(MPI_Cancel(&request));
    OK(MPI_Wait(&request, &status));
    OK(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 1 && value == -1 && request != MPI_REQUEST_NULL,
          "cancelled: flag %d, value %d", flag, value);
    OK(MPI_Cancel(&request)); /* inactive: nothing to cancel */
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone cancelled before anything is sent */
    OK(MPI_Start(&request));
    token = 600 + rank;
    OK(MPI_Send(&token, 1, MPI_INT, left, 8, MPI_COMM_WORLD));
    OK(MPI_Wait(&request, &status));
    OK(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 0 && value == 600 + right && status.MPI_SOURCE == right,
          "restarted: flag %d, value %d", flag, value);
    OK(MPI_Request_free(&request));
}

/* MPI_Rsend_init with the receive posted first; persistent requests with MPI_PROC_NULL. */
static void ready_and_proc_null(void) {
    int value = -1, data = 700 + rank, posted = 1, null_data = 1, null_value = 5;
    MPI_Request send, receive, requests[2];
    MPI_Status statuses[2];
    OK(MPI_Rsend_init(&data, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &send));
    OK(MPI_Recv_init(&value, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &receive));
    for (int round = 0; round < 3; round++) {
        OK(MPI_Start(&receive));
        OK(MPI_Send(&posted, 1, MPI_INT, left, 10, MPI_COMM_WORLD));
        OK(MPI_Recv(&posted, 1, MPI_INT, right, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Start(&send));
        OK(MPI_Wait(&send, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&receive, MPI_STATUS_IGNORE));
        CHECK(value == 700 + left, "round %d: Rsend_init gave %d", round, value);
    }
    OK(MPI_Request_free(&send));
    OK(MPI_Request_free(&receive));

    OK(MPI_Send_init(&null_data, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Recv_init(&null_value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Startall(2, requests));
    OK(MPI_Waitall(2, requests, statuses));
    CHECK(statuses[1].MPI_SOURCE == MPI_PROC_NULL && null_value == 5,
          "MPI_PROC_NULL receive: source %d, value %d", statuses[1].MPI_SOURCE, null_value);
    OK(MPI_Request_free(&requests[0]));
    OK(MPI_Request_free(&requests[1]));
}

/* A persistent receive of a strided type (unpacked at each completion), twice. */
static void strided(void) {
    int data[3], grid[6];
    MPI_Datatype column;
    MPI_Request requests[2];
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &column));
    OK(MPI_Type_commit(&column));
    OK(MPI_Send_init(data, 3, MPI_INT, right, 16, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Recv_init(grid, 1, column, left, 16, MPI_COMM_WORLD, &requests[1]));
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 3; k++)
            data[k] = 10 * rank + k + round;
        for (int k = 0; k < 6; k++)
            grid[k] = -1;
        OK(MPI_Startall(2, requests));
        OK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 6; k++)
            CHECK(grid[k] == (k % 2 ? -1 : 10 * left + k / 2 + round),
                  "round %d: strided element %d is %d", round, k, grid[k]);
    }
    OK(MPI_Request_free(&requests[0]));
    OK(MPI_Request_free(&requests[1]));
    OK(MPI_Type_free(&column));
}

static void buffered(void) {
    int size_bytes = 4 * (int)sizeof(int) + 4 * MPI_BSEND_OVERHEAD;
    char *buffer = malloc(size_bytes), *other = malloc(16);
    void *detached = NULL;
    int detached_size = -1, data[4], got = -1, posted = 1;
    MPI_Request request;
    CHECK(buffer && other, "malloc");
    OK(MPI_Buffer_attach(buffer, size_bytes));
    EXPECT(MPI_Buffer_attach(other, 16), MPI_ERR_BUFFER);

    data[0] = 800 + rank;
    OK(MPI_Bsend(&data[0], 1, MPI_INT, right, 11, MPI_COMM_WORLD));
    data[1] = 900 + rank;
    OK(MPI_Ibsend(&data[1], 1, MPI_INT, right, 12, MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    OK(MPI_Recv(&got, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 800 + left, "Bsend: %d", got);
    OK(MPI_Recv(&got, 1, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 900 + left, "Ibsend: %d", got);

    /* Ready sends: each rank posts its receives, says so, and sends once told. */
    MPI_Request receives[2];
    int values[2] = {-1, -1};
    OK(MPI_Irecv(&values[0], 1, MPI_INT, left, 13, MPI_COMM_WORLD, &receives[0]));
    OK(MPI_Irecv(&values[1], 1, MPI_INT, left, 14, MPI_COMM_WORLD, &receives[1]));
    OK(MPI_Send(&posted, 1, MPI_INT, left, 15, MPI_COMM_WORLD));
    OK(MPI_Recv(&posted, 1, MPI_INT, right, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    data[2] = 1100 + rank;
    OK(MPI_Rsend(&data[2], 1, MPI_INT, right, 13, MPI_COMM_WORLD));
    data[3] = 1200 + rank;
    OK(MPI_Irsend(&data[3], 1, MPI_INT, right, 14, MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    OK(MPI_Waitall(2, receives, MPI_STATUSES_IGNORE));
    CHECK(values[0] == 1100 + left && values[1] == 1200 + left, "Rsend / Irsend: %d %d",
          values[0], values[1]);

    OK(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == buffer && detached_size == size_bytes, "detach gave %p, %d (not %p, %d)",
          detached, detached_size, (void *)buffer, size_bytes);
    OK(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == NULL && detached_size == 0, "empty detach gave %p, %d", detached,
          detached_size);
    EXPECT(MPI_Buffer_attach(other, -1), MPI_ERR_BUFFER);
    OK(MPI_Buffer_attach(other, 16));
    OK(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == other && detached_size == 16, "second detach");
    EXPECT(MPI_Buffer_detach(NULL, &detached_size), MPI_ERR_ARG);
    free(buffer);
    free(other);
}

static void bad_input(void) {
    int value = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    EXPECT(MPI_Send_init(&value, 1, MPI_INT, right, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Recv_init(&value, 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Send_init(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &request), MPI_ERR_RANK);
    EXPECT(MPI_Ssend_init(&value, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &request), MPI_ERR_RANK);
    EXPECT(MPI_Recv_init(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &request), MPI_ERR_RANK);
    EXPECT(MPI_Send_init(&value, 1, MPI_INT, right, -3, MPI_COMM_WORLD, &request), MPI_ERR_TAG);
    EXPECT(MPI_Recv_init(&value, 1, MPI_INT, left, -3, MPI_COMM_WORLD, &request), MPI_ERR_TAG);
    EXPECT(MPI_Rsend_init(&value, -1, MPI_INT, right, 0, MPI_COMM_WORLD, &request),
           MPI_ERR_COUNT);
    EXPECT(MPI_Recv_init(&value, 1, MPI_INT, left, 0, 12345, &request), MPI_ERR_COMM);
    CHECK(request == MPI_REQUEST_NULL, "a refused init wrote a request");
    EXPECT(MPI_Start(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Start(&request), MPI_ERR_REQUEST); /* MPI_REQUEST_NULL */
    OK(MPI_Startall(0, NULL));
    EXPECT(MPI_Startall(1, NULL), MPI_ERR_ARG);
    /* A request given twice to Startall. */
    OK(MPI_Recv_init(&value, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &request));
    MPI_Request twice[2] = {request, request};
    EXPECT(MPI_Startall(2, twice), MPI_ERR_REQUEST);
    OK(MPI_Request_free(&request));
}

/* A derived datatype freed right after the init calls: the requests keep using it, round after
 * round, and freeing them frees their copies. */
static void freed_type(void) {
    MPI_Datatype pair;
    MPI_Request requests[2];
    int out[2], in[2] = {-1, -1};
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Send_init(out, 1, pair, right, 21, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Recv_init(in, 1, pair, left, 21, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Type_free(&pair));
    for (int round = 0; round < 3; round++) {
        out[0] = rank;
        out[1] = round;
        OK(MPI_Startall(2, requests));
        OK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
        CHECK(in[0] == left && in[1] == round, "freed type, round %d: %d %d", round, in[0],
              in[1]);
    }
    OK(MPI_Request_free(&requests[0]));
    OK(MPI_Request_free(&requests[1]));
}

int main(int argc, char **argv) {
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 2, "needs 2 ranks or more");
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    halo_exchange();
    inactive();
    synchronous();
    cancel();
    ready_and_proc_null();
    strided();
    buffered();
    bad_input();
    freed_type();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Generalized requests: MPI_Grequest_start, then MPI_Test is false until
 * MPI_Grequest_complete; the completion calls query_fn (its status: source, tag, elements)
 * then free_fn once; MPI_Cancel calls cancel_fn with whether it completed; MPI_Wait sleeps
 * until a thread of the program completes it; MPI_Request_get_status queries without freeing;
 * MPI_Waitall over a generalized request and a receive; MPI_Request_free before the completion
 * leaves free_fn to MPI_Grequest_complete; query_fn's error is the completion's; NULL
 * functions leave the status empty. Wrong use: completing a handle that is no generalized
 * request, or twice (MPI_ERR_REQUEST). */
#include "ft_common.h"

#include <pthread.h>
#include <string.h>

struct work {
    int queried, freed, cancelled, cancel_complete, error;
    MPI_Request request;
};

static int query(void *extra, MPI_Status *status) {
    struct work *w = extra;
    w->queried++;
    status->MPI_SOURCE = 3;
    status->MPI_TAG = 7;
    MPI_Status_set_elements(status, MPI_INT, 5);
    MPI_Status_set_cancelled(status, 0);
    return w->error;
}

static int release(void *extra) {
    ((struct work *)extra)->freed++;
    return MPI_SUCCESS;
}

static int cancel(void *extra, int complete) {
    struct work *w = extra;
    w->cancelled++;
    w->cancel_complete = complete;
    return MPI_SUCCESS;
}

static void *finisher(void *arg) {
    struct work *w = arg;
    /* The main thread is in MPI_Wait (or about to be): completing wakes it. */
    if (MPI_Grequest_complete(w->request) != MPI_SUCCESS)
        FAIL("MPI_Grequest_complete from a thread");
    return NULL;
}

int main(int argc, char **argv) {
    int rank, size, flag = -1, count = -1;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ft_rank = rank;
    MPI_Status status;

    /* Test, cancel before and after the completion, test again: query then free, once. */
    struct work a = {0};
    OK(MPI_Grequest_start(query, release, cancel, &a, &a.request));
    OK(MPI_Test(&a.request, &flag, &status));
    CHECK(flag == 0 && a.queried == 0, "tested complete before MPI_Grequest_complete");
    OK(MPI_Cancel(&a.request));
    CHECK(a.cancelled == 1 && a.cancel_complete == 0, "cancel_fn before the completion");
    OK(MPI_Grequest_complete(a.request));
    EXPECT(MPI_Grequest_complete(a.request), MPI_ERR_REQUEST);
    OK(MPI_Cancel(&a.request));
    CHECK(a.cancelled == 2 && a.cancel_complete == 1, "cancel_fn after the completion");
    OK(MPI_Request_get_status(a.request, &flag, &status));
    CHECK(flag == 1 && a.queried == 1 && a.freed == 0, "get_status: query without free");
    OK(MPI_Test(&a.request, &flag, &status));
    CHECK(flag == 1 && a.request == MPI_REQUEST_NULL, "test after the completion");
    CHECK(a.queried == 2 && a.freed == 1, "queried %d freed %d", a.queried, a.freed);
    CHECK(status.MPI_SOURCE == 3 && status.MPI_TAG == 7, "status %d %d", status.MPI_SOURCE,
          status.MPI_TAG);
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == 5, "count %d", count);

    /* MPI_Wait until another thread completes it. */
    struct work b = {0};
    OK(MPI_Grequest_start(query, release, cancel, &b, &b.request));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, finisher, &b) == 0, "pthread_create");
    OK(MPI_Wait(&b.request, &status));
    pthread_join(thread, NULL);
    CHECK(b.queried == 1 && b.freed == 1 && b.request == MPI_REQUEST_NULL, "wait");

    /* MPI_Waitall over a generalized request and a self message. */
    struct work c = {0};
    MPI_Request both[2];
    int got = 0, sent = 42;
    OK(MPI_Grequest_start(query, release, NULL, &c, &both[0]));
    OK(MPI_Irecv(&got, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &both[1]));
    OK(MPI_Send(&sent, 1, MPI_INT, rank, 5, MPI_COMM_WORLD));
    OK(MPI_Grequest_complete(both[0]));
    MPI_Status statuses[2];
    OK(MPI_Waitall(2, both, statuses));
    CHECK(got == 42 && c.freed == 1 && statuses[0].MPI_TAG == 7, "waitall");

    /* Freed before the completion: free_fn at MPI_Grequest_complete, no query. */
    struct work d = {0};
    MPI_Request kept;
    OK(MPI_Grequest_start(query, release, cancel, &d, &d.request));
    kept = d.request;
    OK(MPI_Request_free(&d.request));
    CHECK(d.request == MPI_REQUEST_NULL && d.freed == 0, "freed early");
    OK(MPI_Grequest_complete(kept));
    CHECK(d.freed == 1 && d.queried == 0, "free_fn at the completion");
    EXPECT(MPI_Grequest_complete(kept), MPI_ERR_REQUEST);

    /* query_fn's error is the completion's. */
    struct work e = {.error = MPI_ERR_BUFFER};
    OK(MPI_Grequest_start(query, release, cancel, &e, &e.request));
    OK(MPI_Grequest_complete(e.request));
    EXPECT(MPI_Wait(&e.request, &status), MPI_ERR_BUFFER);
    CHECK(e.freed == 1, "freed after a failed query");

    /* No functions: an empty status. */
    MPI_Request plain;
    OK(MPI_Grequest_start(NULL, NULL, NULL, NULL, &plain));
    OK(MPI_Cancel(&plain));
    OK(MPI_Grequest_complete(plain));
    memset(&status, 0x55, sizeof status);
    OK(MPI_Wait(&plain, &status));
    CHECK(status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG, "empty status");
    OK(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 0, "cancelled");

    EXPECT(MPI_Grequest_complete(12345), MPI_ERR_REQUEST);
    EXPECT(MPI_Grequest_start(query, release, cancel, &a, NULL), MPI_ERR_ARG);
    (void)size;
    return ft_finish();
}

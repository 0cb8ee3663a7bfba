/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Query_thread and MPI_Is_thread_main before MPI_Init (MPI_ERR_OTHER), on the main thread
 * and on other threads. MPI_Init_thread: bad arguments leave the library uninitialized; MPI_THREAD_SERIALIZED
 * required, MPI_THREAD_MULTIPLE provided; a second initialization is MPI_ERR_OTHER. Then
 * MPI_THREAD_MULTIPLE at work: on each rank, THREADS threads at once pass tokens around the
 * ring, each on its own tag (blocking Sendrecv and Isend/Irecv/Waitall), and every token comes
 * back with the sum of the ranks. */
#include "ft_common.h"

#include <pthread.h>

#define THREADS 4
#define ROUNDS 50

static int world_rank, world_size;

static void *ring(void *arg) {
    int tag = (int)(long)arg;
    int main_flag = -1, level = -1;
    OK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag == 0, "thread %d: MPI_Is_thread_main says it is the main thread", tag);
    OK(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "thread %d: MPI_Query_thread gave %d", tag, level);
    int right = (world_rank + 1) % world_size, left = (world_rank + world_size - 1) % world_size;
    for (int round = 0; round < ROUNDS; round++) {
        /* A token that collects every rank's number on its way around. */
        int token = world_rank == 0 ? tag * 1000 + round : -1, got = -1;
        if (world_rank == 0) {
            OK(MPI_Send(&token, 1, MPI_INT, right, tag, MPI_COMM_WORLD));
            OK(MPI_Recv(&got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int want = tag * 1000 + round + world_size * (world_size - 1) / 2;
            CHECK(got == want, "thread %d round %d: token %d, want %d", tag, round, got, want);
        } else {
            OK(MPI_Recv(&got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            got += world_rank;
            OK(MPI_Send(&got, 1, MPI_INT, right, tag, MPI_COMM_WORLD));
        }
        /* Both directions at once, non-blocking. */
        int out[2] = {world_rank * 100 + tag, round}, in[4] = {-1, -1, -1, -1};
        MPI_Request requests[4];
        OK(MPI_Irecv(&in[0], 2, MPI_INT, left, 100 + tag, MPI_COMM_WORLD, &requests[0]));
        OK(MPI_Irecv(&in[2], 2, MPI_INT, right, 200 + tag, MPI_COMM_WORLD, &requests[1]));
        OK(MPI_Isend(out, 2, MPI_INT, right, 100 + tag, MPI_COMM_WORLD, &requests[2]));
        OK(MPI_Isend(out, 2, MPI_INT, left, 200 + tag, MPI_COMM_WORLD, &requests[3]));
        MPI_Status statuses[4];
        OK(MPI_Waitall(4, requests, statuses));
        CHECK(in[0] == left * 100 + tag && in[1] == round && in[2] == right * 100 + tag &&
                  in[3] == round,
              "thread %d round %d: got %d %d %d %d", tag, round, in[0], in[1], in[2], in[3]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = -1, flag = -1;
    CHECK(MPI_Query_thread(&provided) == MPI_ERR_OTHER && provided == -1,
          "MPI_Query_thread before MPI_Init");
    CHECK(MPI_Is_thread_main(&flag) == MPI_ERR_OTHER && flag == -1,
          "MPI_Is_thread_main before MPI_Init");
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, NULL) == MPI_ERR_ARG,
          "MPI_Init_thread without provided");
    CHECK(MPI_Init_thread(&argc, &argv, 17, &provided) == MPI_ERR_ARG && provided == -1,
          "MPI_Init_thread with required = 17");
    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0, "a refused init initialized");
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) == MPI_SUCCESS,
          "MPI_Init_thread");
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    ft_rank = world_rank;
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "not initialized");
    EXPECT(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided), MPI_ERR_OTHER);
    provided = -1;
    OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Query_thread gave %d", provided);
    flag = -1;
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag == 1, "MPI_Is_thread_main is false on the thread that initialized");
    EXPECT(MPI_Query_thread(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Is_thread_main(NULL), MPI_ERR_ARG);

    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, ring, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join");

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (world_rank == 0) {
        printf("No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

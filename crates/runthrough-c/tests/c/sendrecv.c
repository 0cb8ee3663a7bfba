/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Sendrecv and MPI_Sendrecv_replace without failures, and their bad input.
 * - A ring shift (each rank sends to the next and receives from the previous) and a shift in
 *   the other direction with wildcards on the receive side (status names the sender and tag).
 * - A non-periodic shift: the ends use MPI_PROC_NULL (status source MPI_PROC_NULL, count 0,
 *   receive buffer untouched).
 * - MPI_Sendrecv_replace rotates a block once around the ring: each rank gets its own back.
 * - A send-receive with oneself.
 * - Bad input: each returns its error class at once and leaves nothing behind (the ring still
 *   works after it): MPI_ERR_COUNT, _TYPE, _RANK, _TAG (send and receive side), _BUFFER,
 *   _COMM; a message longer than the receive buffer is MPI_ERR_TRUNCATE. */
#include "ft_common.h"
#include <string.h>

#define N 8

int main(int argc, char **argv) {
    int rank, size, count = -1;
    int out[N], in[N];
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    for (int i = 0; i < N; i++)
        out[i] = rank * 100 + i;
    OK(MPI_Sendrecv(out, N, MPI_INT, next, 1, in, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &status));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == prev * 100 + i, "ring: in[%d] = %d", i, in[i]);
    CHECK(status.MPI_SOURCE == prev && status.MPI_TAG == 1, "ring: status %d/%d",
          status.MPI_SOURCE, status.MPI_TAG);
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == N, "ring: count %d", count);

    /* The other way round, with wildcards on the receive side. */
    OK(MPI_Sendrecv(out, 3, MPI_INT, prev, 10 + rank, in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, &status));
    CHECK(status.MPI_SOURCE == next && status.MPI_TAG == 10 + next, "wildcards: status %d/%d",
          status.MPI_SOURCE, status.MPI_TAG);
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == 3 && in[0] == next * 100, "wildcards: count %d, in[0] %d", count, in[0]);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* no later message may match that wildcard receive */

    /* Non-periodic: rank 0 has no left neighbour, the last rank no right one. */
    int left = rank == 0 ? MPI_PROC_NULL : rank - 1;
    int right = rank == size - 1 ? MPI_PROC_NULL : rank + 1;
    in[0] = -7;
    OK(MPI_Sendrecv(out, 1, MPI_INT, right, 2, in, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &status));
    if (left == MPI_PROC_NULL) {
        CHECK(status.MPI_SOURCE == MPI_PROC_NULL, "no left neighbour: source %d",
              status.MPI_SOURCE);
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(count == 0 && in[0] == -7, "MPI_PROC_NULL: count %d, buffer %d", count, in[0]);
    } else {
        CHECK(in[0] == left * 100, "from the left: %d", in[0]);
    }

    /* A block goes once around the ring, one hop per call. */
    int block[N];
    for (int i = 0; i < N; i++)
        block[i] = rank * 1000 + i;
    for (int hop = 0; hop < size; hop++) {
        OK(MPI_Sendrecv_replace(block, N, MPI_INT, next, 3, prev, 3, MPI_COMM_WORLD, &status));
        int from = (rank + size - 1 - hop % size + size) % size;
        CHECK(block[0] == from * 1000 && block[N - 1] == from * 1000 + N - 1,
              "replace hop %d: %d", hop, block[0]);
        CHECK(status.MPI_SOURCE == prev, "replace: source %d", status.MPI_SOURCE);
    }
    CHECK(block[0] == rank * 1000, "the block did not come back: %d", block[0]);

    /* With oneself. */
    int mine = 42 + rank, got = 0;
    OK(MPI_Sendrecv(&mine, 1, MPI_INT, rank, 4, &got, 1, MPI_INT, rank, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(got == mine, "self: %d", got);
    OK(MPI_Sendrecv_replace(&mine, 1, MPI_INT, MPI_PROC_NULL, 4, MPI_PROC_NULL, 4,
                            MPI_COMM_WORLD, &status));
    CHECK(mine == 42 + rank && status.MPI_SOURCE == MPI_PROC_NULL, "replace with MPI_PROC_NULL");

    /* Bad input. */
    EXPECT(MPI_Sendrecv(out, -1, MPI_INT, next, 5, in, N, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_COUNT);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, 5, in, -2, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_COUNT);
    EXPECT(MPI_Sendrecv(out, 1, MPI_DATATYPE_NULL, next, 5, in, 1, MPI_INT, prev, 5,
                        MPI_COMM_WORLD, &status), MPI_ERR_TYPE);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, size, 5, in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_RANK);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, 5, in, 1, MPI_INT, -5, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_RANK);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, MPI_ANY_TAG, in, 1, MPI_INT, prev, 5,
                        MPI_COMM_WORLD, &status), MPI_ERR_TAG);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, 5, in, 1, MPI_INT, prev, -5, MPI_COMM_WORLD,
                        &status), MPI_ERR_TAG);
    EXPECT(MPI_Sendrecv(NULL, 1, MPI_INT, next, 5, in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_BUFFER);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, 5, NULL, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                        &status), MPI_ERR_BUFFER);
    EXPECT(MPI_Sendrecv_replace(NULL, 1, MPI_INT, next, 5, prev, 5, MPI_COMM_WORLD, &status),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Sendrecv_replace(block, -1, MPI_INT, next, 5, prev, 5, MPI_COMM_WORLD, &status),
           MPI_ERR_COUNT);
    EXPECT(MPI_Sendrecv_replace(block, 1, MPI_INT, next, -1, prev, 5, MPI_COMM_WORLD, &status),
           MPI_ERR_TAG);
    EXPECT(MPI_Sendrecv(out, 1, MPI_INT, next, 5, in, 1, MPI_INT, prev, 5, MPI_COMM_NULL,
                        &status), MPI_ERR_COMM);

    /* Truncation: N ints into a buffer of 2; the message is consumed. */
    EXPECT(MPI_Sendrecv(out, N, MPI_INT, next, 6, in, 2, MPI_INT, prev, 6, MPI_COMM_WORLD,
                        &status), MPI_ERR_TRUNCATE);

    /* Nothing was left behind: the ring still works. */
    OK(MPI_Sendrecv(out, N, MPI_INT, next, 7, in, N, MPI_INT, prev, 7, MPI_COMM_WORLD, &status));
    CHECK(in[N - 1] == prev * 100 + N - 1 && status.MPI_TAG == 7, "after bad input: %d",
          in[N - 1]);
    int probe_flag = 1;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &probe_flag, MPI_STATUS_IGNORE));
    CHECK(!probe_flag, "a message was left behind");
    return ft_finish();
}

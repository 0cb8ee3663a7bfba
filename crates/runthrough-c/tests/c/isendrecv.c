/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0).
 * - A ring shift with MPI_Isendrecv completed by MPI_Wait, and a shift the other way with
 *   MPI_Isendrecv_replace completed by an MPI_Test loop: the data and statuses are right, and
 *   the replace buffer held the data sent until the call (the receive replaced it after).
 * - Two exchanges outstanding at once, completed out of order with MPI_Waitall.
 * - MPI_PROC_NULL on either side skips that side: status source MPI_PROC_NULL, buffer
 *   untouched.
 * - Rank 1 dies (after a barrier): at rank 0, an MPI_Isendrecv whose send goes to rank 1 fails
 *   at the call or from MPI_Wait with MPIX_ERR_PROC_FAILED, and one that receives from rank 1
 *   fails from MPI_Wait the same way; after MPI_Comm_validate_global, rank 1 acts as
 *   MPI_PROC_NULL on both sides.
 * - Bad input: a NULL request is MPI_ERR_ARG, a negative send tag MPI_ERR_TAG. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed = -1, done = 0;
    MPI_Status status;
    MPI_Request request, pair[2];
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks, not %d", size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    int in = -1;
    OK(MPI_Isendrecv(&rank, 1, MPI_INT, next, 7, &in, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     &request));
    OK(MPI_Wait(&request, &status));
    CHECK(in == prev && status.MPI_SOURCE == prev && status.MPI_TAG == 7,
          "isendrecv shift: %d from %d tag %d", in, status.MPI_SOURCE, status.MPI_TAG);
    CHECK(request == MPI_REQUEST_NULL, "request not reset");

    int block[3] = {rank, rank * 10, rank * 100};
    OK(MPI_Isendrecv_replace(block, 3, MPI_INT, prev, 8, next, 8, MPI_COMM_WORLD, &request));
    while (!done)
        OK(MPI_Test(&request, &done, &status));
    CHECK(block[0] == next && block[1] == next * 10 && block[2] == next * 100,
          "isendrecv_replace: %d %d %d", block[0], block[1], block[2]);
    int count = -1;
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == 3 && status.MPI_SOURCE == next, "replace status: count %d from %d", count,
          status.MPI_SOURCE);

    int a = -1, b = -1, mine_a = rank + 1000, mine_b = rank + 2000;
    OK(MPI_Isendrecv(&mine_a, 1, MPI_INT, next, 10, &a, 1, MPI_INT, prev, 10, MPI_COMM_WORLD,
                     &pair[0]));
    OK(MPI_Isendrecv(&mine_b, 1, MPI_INT, prev, 11, &b, 1, MPI_INT, next, 11, MPI_COMM_WORLD,
                     &pair[1]));
    MPI_Status statuses[2];
    OK(MPI_Waitall(2, pair, statuses));
    CHECK(a == prev + 1000 && b == next + 2000, "two outstanding: %d %d", a, b);

    int untouched = -5;
    OK(MPI_Isendrecv(&rank, 1, MPI_INT, MPI_PROC_NULL, 12, &untouched, 1, MPI_INT, MPI_PROC_NULL,
                     12, MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, &status));
    CHECK(untouched == -5 && status.MPI_SOURCE == MPI_PROC_NULL, "proc null: %d from %d",
          untouched, status.MPI_SOURCE);

    EXPECT(MPI_Isendrecv(&rank, 1, MPI_INT, next, 0, &in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                         NULL), MPI_ERR_ARG);
    EXPECT(MPI_Isendrecv(&rank, 1, MPI_INT, next, -3, &in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                         &request), MPI_ERR_TAG);

    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        int out = 5;
        ft_wait_detected(MPI_COMM_WORLD, 1);
        int code = MPI_Isendrecv(&out, 1, MPI_INT, 1, 20, &in, 1, MPI_INT, 2, 20, MPI_COMM_WORLD,
                                 &request);
        if (code == MPI_SUCCESS)
            code = MPI_Wait(&request, &status);
        int class = -1;
        MPI_Error_class(code, &class);
        CHECK(class == MPIX_ERR_PROC_FAILED, "send side dead: %d", code);
        in = -1;
        OK(MPI_Isendrecv(&out, 1, MPI_INT, 2, 21, &in, 1, MPI_INT, 1, 21, MPI_COMM_WORLD,
                         &request));
        EXPECT(MPI_Wait(&request, &status), MPIX_ERR_PROC_FAILED);
        CHECK(in == -1, "receive side dead: buffer %d", in);
    } else if (rank == 2) {
        OK(MPI_Recv(&in, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in == 5, "rank 0's message: %d", in);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    if (rank != 1) {
        in = -3;
        OK(MPI_Isendrecv(&rank, 1, MPI_INT, 1, 22, &in, 1, MPI_INT, 1, 22, MPI_COMM_WORLD,
                         &request));
        OK(MPI_Wait(&request, &status));
        CHECK(in == -3 && status.MPI_SOURCE == MPI_PROC_NULL, "recognized: %d from %d", in,
              status.MPI_SOURCE);
    }
    return ft_finish();
}

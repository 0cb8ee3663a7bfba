/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Synchronous sends complete only once the receiver matched the message; no sleeps.
 * - MPI_Issend from 0 to 1: MPI_Test reports it pending, and must, because rank 1 posts its
 *   receive only after a 'go' message that rank 0 sends after the tests; then MPI_Wait
 *   completes it.
 * - MPI_Ssend from 0 to 2: once rank 2 sees the message arrive (MPI_Probe: arrived, not
 *   matched; the status counts the data only), rank 0's next message (sent after its MPI_Ssend
 *   returns) cannot be there (MPI_Iprobe says no); rank 2 then receives both, the first by
 *   MPI_ANY_SOURCE / MPI_ANY_TAG with the sender's tag.
 * - A receive posted before the synchronous message arrives matches it on arrival (rank 1
 *   posts MPI_Irecv, says so, and rank 0's MPI_Ssend returns while rank 1 waits for nothing
 *   else).
 * - MPI_Issend to oneself completes after the matching MPI_Recv; to MPI_PROC_NULL at once.
 * - Ordinary and synchronous messages keep their order (non-overtaking). */
#include "ft_common.h"

#define N 4

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 3, "needs 3 ranks");
    int data[N] = {1, 2, 3, 4}, got[N] = {0}, go = 1, flag = -1, count = -1;
    MPI_Request request;
    MPI_Status status;

    /* Issend + Test before the receiver can have matched. */
    if (rank == 0) {
        OK(MPI_Issend(data, N, MPI_INT, 1, 10, MPI_COMM_WORLD, &request));
        for (int k = 0; k < 100; k++) {
            OK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "MPI_Issend complete before rank 1 posted its receive (test %d)", k);
        }
        OK(MPI_Send(&go, 1, MPI_INT, 1, 11, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        CHECK(request == MPI_REQUEST_NULL, "completed request not freed");
    } else if (rank == 1) {
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(got, N, MPI_INT, 0, 10, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(count == N && got[0] == 1 && got[3] == 4 && status.MPI_TAG == 10,
              "Issend data: count %d, %d..%d, tag %d", count, got[0], got[3], status.MPI_TAG);
    }

    /* Blocking Ssend: the sender's next message cannot overtake the match. */
    if (rank == 0) {
        int after = 99;
        OK(MPI_Ssend(data, N, MPI_INT, 2, 20, MPI_COMM_WORLD));
        OK(MPI_Send(&after, 1, MPI_INT, 2, 21, MPI_COMM_WORLD));
    } else if (rank == 2) {
        OK(MPI_Probe(0, 20, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(count == N && status.MPI_TAG == 20, "probe: count %d tag %d", count,
              status.MPI_TAG);
        OK(MPI_Iprobe(0, 21, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "rank 0 sent after its MPI_Ssend before rank 2 matched it");
        OK(MPI_Recv(got, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
        CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == 20 && got[1] == 2,
              "Ssend data: from %d tag %d, %d", status.MPI_SOURCE, status.MPI_TAG, got[1]);
        int after = -1;
        OK(MPI_Recv(&after, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(after == 99, "after: %d", after);
    }

    /* A receive posted first matches the synchronous message on arrival. */
    if (rank == 1) {
        OK(MPI_Irecv(got, N, MPI_INT, 0, 30, MPI_COMM_WORLD, &request));
        OK(MPI_Send(&go, 1, MPI_INT, 0, 31, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, &status));
        CHECK(got[2] == 3 && status.MPI_TAG == 30, "posted receive: %d tag %d", got[2],
              status.MPI_TAG);
    } else if (rank == 0) {
        OK(MPI_Recv(&go, 1, MPI_INT, 1, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Ssend(data, N, MPI_INT, 1, 30, MPI_COMM_WORLD));
    }

    /* Order: an ordinary message, a synchronous one and an ordinary one, same tag; and one
     * received by a wildcard tag. */
    if (rank == 0) {
        int a = 1, b = 2, c = 3;
        OK(MPI_Send(&a, 1, MPI_INT, 2, 40, MPI_COMM_WORLD));
        OK(MPI_Issend(&b, 1, MPI_INT, 2, 40, MPI_COMM_WORLD, &request));
        OK(MPI_Send(&c, 1, MPI_INT, 2, 40, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    } else if (rank == 2) {
        for (int want = 1; want <= 3; want++) {
            int v = -1;
            OK(MPI_Recv(&v, 1, MPI_INT, 0, want == 2 ? MPI_ANY_TAG : 40, MPI_COMM_WORLD,
                        &status));
            CHECK(v == want && status.MPI_TAG == 40, "order: got %d (tag %d), want %d", v,
                  status.MPI_TAG, want);
        }
    }

    /* To oneself and to MPI_PROC_NULL. */
    OK(MPI_Issend(&rank, 1, MPI_INT, rank, 50, MPI_COMM_WORLD, &request));
    OK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "MPI_Issend to oneself complete before the receive");
    int mine = -1;
    OK(MPI_Recv(&mine, 1, MPI_INT, rank, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(mine == rank, "self: %d", mine);
    OK(MPI_Ssend(&rank, 1, MPI_INT, MPI_PROC_NULL, 51, MPI_COMM_WORLD));
    OK(MPI_Issend(&rank, 1, MPI_INT, MPI_PROC_NULL, 51, MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    EXPECT(MPI_Ssend(&rank, 1, MPI_INT, size, 52, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Ssend(&rank, 1, MPI_INT, 0, -4, MPI_COMM_WORLD), MPI_ERR_TAG);

    return ft_finish();
}

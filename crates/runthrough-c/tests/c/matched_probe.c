/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Matched probes and cancelled receives on 3 ranks (rank 2 dies at the end).
 * Ranks 0 and 1: MPI_Mprobe takes its message out of matching (a later MPI_Recv with the same
 * source and tag gets the next message, MPI_Mrecv the probed one); MPI_Improbe finds nothing
 * before the sender sends, then the message, which MPI_Imrecv receives; a truncated MPI_Mrecv
 * consumes its message; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC; bad handles. MPI_Cancel
 * withdraws a receive that nothing matched (MPI_Test_cancelled says 1, the message sent later
 * goes to the next receive), leaves a matched receive and a send to complete (says 0), and
 * refuses a non-blocking collective's request. Then rank 2 dies: a matched probe of it returns
 * MPIX_ERR_PROC_FAILED (never waits for ever), a wildcard one MPIX_ERR_PROC_FAILED (blocking)
 * or _PENDING (MPI_Improbe); after MPI_Comm_validate_global the probe gives
 * MPI_MESSAGE_NO_PROC. */
#include "ft_common.h"

#define GO 1000

int main(int argc, char **argv) {
    int rank, size, flag, count, failed;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    if (rank == 2) {
        MPI_Request coll;
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &coll));
        OK(MPI_Wait(&coll, MPI_STATUS_IGNORE));
        ft_sync_then_die(MPI_COMM_WORLD, 2);
        return 1;
    }
    MPI_Status st;
    MPI_Message msg;

    if (rank == 0) {
        int a[2] = {1, 11}, b = 2, c[3] = {7, 8, 9}, go;
        OK(MPI_Send(a, 2, MPI_INT, 1, 5, MPI_COMM_WORLD));
        OK(MPI_Send(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        OK(MPI_Recv(&go, 1, MPI_INT, 1, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(c, 3, MPI_INT, 1, 6, MPI_COMM_WORLD));
        OK(MPI_Send(c, 3, MPI_INT, 1, 7, MPI_COMM_WORLD));
        /* Cancellation: tag 9 only after rank 1 cancelled its receive; tag 3 before GO. */
        OK(MPI_Recv(&go, 1, MPI_INT, 1, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int v = 42, w = 43;
        OK(MPI_Send(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Send(&w, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
        MPI_Request send;
        OK(MPI_Isend(&go, 1, MPI_INT, 1, GO, MPI_COMM_WORLD, &send));
        OK(MPI_Cancel(&send));
        OK(MPI_Wait(&send, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "a send was cancelled");
    } else {
        OK(MPI_Mprobe(0, 5, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "message %d", msg);
        OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 5 && count == 2, "probed %d %d %d",
              st.MPI_SOURCE, st.MPI_TAG, count);
        int next = -1, got[2] = {-1, -1};
        OK(MPI_Recv(&next, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(next == 2, "the receive took the probed message: %d", next);
        OK(MPI_Mrecv(got, 2, MPI_INT, &msg, &st));
        CHECK(got[0] == 1 && got[1] == 11, "Mrecv %d %d", got[0], got[1]);
        CHECK(msg == MPI_MESSAGE_NULL, "the message handle is %d after MPI_Mrecv", msg);
        EXPECT(MPI_Mrecv(got, 2, MPI_INT, &msg, &st), MPI_ERR_REQUEST);

        OK(MPI_Improbe(0, 6, MPI_COMM_WORLD, &flag, &msg, &st));
        CHECK(flag == 0, "Improbe found a message not sent yet");
        int go = 1;
        OK(MPI_Send(&go, 1, MPI_INT, 0, GO, MPI_COMM_WORLD));
        do {
            OK(MPI_Improbe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &msg, &st));
        } while (!flag);
        int three[3] = {0, 0, 0};
        MPI_Request r;
        OK(MPI_Imrecv(three, 3, MPI_INT, &msg, &r));
        CHECK(msg == MPI_MESSAGE_NULL, "the message handle after MPI_Imrecv");
        OK(MPI_Wait(&r, &st));
        CHECK(three[0] == 7 && three[2] == 9 && st.MPI_TAG == 6, "Imrecv");
        /* Too small: MPI_ERR_TRUNCATE, and the message is gone. */
        OK(MPI_Mprobe(0, 7, MPI_COMM_WORLD, &msg, &st));
        EXPECT(MPI_Mrecv(got, 2, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
        CHECK(msg == MPI_MESSAGE_NULL, "a truncated message handle");
        OK(MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 0, "the truncated message is still there");

        OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "no-proc probe");
        OK(MPI_Mrecv(got, 2, MPI_INT, &msg, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NULL, "no-proc receive");
        EXPECT(MPI_Mprobe(0, -5, MPI_COMM_WORLD, &msg, &st), MPI_ERR_TAG);
        EXPECT(MPI_Mprobe(0, 0, MPI_COMM_WORLD, NULL, &st), MPI_ERR_ARG);
        EXPECT(MPI_Mprobe(0, 0, 12345, &msg, &st), MPI_ERR_COMM);

        /* Cancellation. */
        int cancelled = -1, matched = -1;
        OK(MPI_Irecv(&cancelled, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &r));
        OK(MPI_Cancel(&r));
        OK(MPI_Wait(&r, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1 && cancelled == -1, "cancel: flag %d, buffer %d", flag, cancelled);
        MPI_Request late;
        OK(MPI_Irecv(&matched, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &late));
        OK(MPI_Send(&go, 1, MPI_INT, 0, GO, MPI_COMM_WORLD));
        int nine = -1;
        OK(MPI_Recv(&nine, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(nine == 42, "the cancelled receive took the message: %d", nine);
        OK(MPI_Recv(&go, 1, MPI_INT, 0, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* Tag 3 was sent before GO: it has completed the posted receive. */
        OK(MPI_Cancel(&late));
        OK(MPI_Wait(&late, &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0 && matched == 43, "a matched receive: flag %d, buffer %d", flag,
              matched);
    }
    MPI_Request coll, none = MPI_REQUEST_NULL;
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &coll));
    EXPECT(MPI_Cancel(&coll), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(&none), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(NULL), MPI_ERR_ARG);
    OK(MPI_Wait(&coll, MPI_STATUS_IGNORE));

    /* Rank 2 dies. */
    ft_sync_then_die(MPI_COMM_WORLD, 2);
    EXPECT(MPI_Mprobe(2, 4, MPI_COMM_WORLD, &msg, &st), MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Improbe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &flag, &msg, &st),
           MPIX_ERR_PROC_FAILED_PENDING);
    EXPECT(MPI_Mprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &msg, &st), MPIX_ERR_PROC_FAILED);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed %d", failed);
    OK(MPI_Mprobe(2, 4, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "probe of a dead rank");
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Persistent requests through a failure, on 3 ranks: every rank exchanges a value with every
 * other through MPI_Recv_init / MPI_Send_init requests, MPI_Startall and MPI_Waitall, each
 * iteration. After 3 iterations rank 1 dies (ft_sync_then_die: the others are past a barrier).
 * - In the next iteration the survivors' MPI_Waitall returns MPI_ERR_IN_STATUS: the receive
 *   from rank 1 has MPIX_ERR_PROC_FAILED in its status (the send to it succeeded or failed the
 *   same way), the exchange with the other survivor succeeded (MPI_SUCCESS, its value right).
 * - Every request stays allocated (not MPI_REQUEST_NULL) and inactive: MPI_Test gives flag 1
 *   and an empty status.
 * - A persistent MPI_ANY_SOURCE receive started then reports MPIX_ERR_PROC_FAILED_PENDING and
 *   stays active (MPI_Start refused) until MPIX_Comm_failure_ack; then it completes.
 * - After MPI_Comm_validate_global (1 failure), the same requests started again complete: the
 *   receive from rank 1 as from MPI_PROC_NULL (source MPI_PROC_NULL, count 0, buffer
 *   untouched), the send to it at once; an MPI_Ssend_init to rank 1 completes too. */
#include "ft_common.h"

#define BEFORE 3
#define VICTIM 1

static int rank, size;
static int sent[8], received[8];
static MPI_Request requests[16];
static MPI_Status statuses[16];

/* requests[2p] receives from p, requests[2p + 1] sends to p (MPI_REQUEST_NULL for p = rank). */
static void prepare(void) {
    for (int p = 0; p < size; p++) {
        if (p == rank) {
            requests[2 * p] = requests[2 * p + 1] = MPI_REQUEST_NULL;
            continue;
        }
        OK(MPI_Recv_init(&received[p], 1, MPI_INT, p, 1, MPI_COMM_WORLD, &requests[2 * p]));
        OK(MPI_Send_init(&sent[p], 1, MPI_INT, p, 1, MPI_COMM_WORLD, &requests[2 * p + 1]));
    }
}

/* Starts every request of one iteration (the MPI_REQUEST_NULL ones skipped). */
static void start(int it) {
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        sent[p] = 100 * rank + it;
        received[p] = -1;
        OK(MPI_Startall(2, &requests[2 * p]));
    }
}

static void check_kept(const char *when) {
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        for (int k = 2 * p; k <= 2 * p + 1; k++) {
            int flag = -1, count = -1;
            MPI_Status status;
            CHECK(requests[k] != MPI_REQUEST_NULL, "%s: request %d freed", when, k);
            OK(MPI_Test(&requests[k], &flag, &status));
            OK(MPI_Get_count(&status, MPI_INT, &count));
            CHECK(flag == 1 && requests[k] != MPI_REQUEST_NULL &&
                      status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG &&
                      status.MPI_ERROR == MPI_SUCCESS && count == 0,
                  "%s: request %d not inactive (flag %d, source %d, error %d)", when, k, flag,
                  status.MPI_SOURCE, status.MPI_ERROR);
        }
    }
}

int main(int argc, char **argv) {
    int failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "needs 3 ranks");
    prepare();
    for (int it = 0; it < BEFORE; it++) {
        start(it);
        OK(MPI_Waitall(2 * size, requests, statuses));
        for (int p = 0; p < size; p++)
            CHECK(p == rank || received[p] == 100 * p + it, "iteration %d: from %d got %d", it,
                  p, received[p]);
        check_kept("before the failure");
    }
    ft_sync_then_die(MPI_COMM_WORLD, VICTIM); /* rank 1 does not return */

    /* The survivors: an iteration that meets the failure. */
    int other = rank == 0 ? 2 : 0;
    start(BEFORE);
    EXPECT(MPI_Waitall(2 * size, requests, statuses), MPI_ERR_IN_STATUS);
    CHECK(statuses[2 * VICTIM].MPI_ERROR == MPIX_ERR_PROC_FAILED,
          "receive from the dead rank: error %d", statuses[2 * VICTIM].MPI_ERROR);
    CHECK(statuses[2 * VICTIM + 1].MPI_ERROR == MPI_SUCCESS ||
              statuses[2 * VICTIM + 1].MPI_ERROR == MPIX_ERR_PROC_FAILED,
          "send to the dead rank: error %d", statuses[2 * VICTIM + 1].MPI_ERROR);
    CHECK(statuses[2 * other].MPI_ERROR == MPI_SUCCESS &&
              statuses[2 * other + 1].MPI_ERROR == MPI_SUCCESS &&
              received[other] == 100 * other + BEFORE,
          "the exchange with rank %d: errors %d %d, got %d", other,
          statuses[2 * other].MPI_ERROR, statuses[2 * other + 1].MPI_ERROR, received[other]);
    check_kept("after the failure");

    /* A persistent MPI_ANY_SOURCE receive while the failure is not acknowledged: Wait reports
     * MPIX_ERR_PROC_FAILED_PENDING and the request stays active (Start refused); after
     * MPIX_Comm_failure_ack it completes with the other survivor's message, sent only then. */
    int any = -1, go = 1;
    MPI_Request wildcard;
    MPI_Status status;
    OK(MPI_Recv_init(&any, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &wildcard));
    OK(MPI_Start(&wildcard));
    EXPECT(MPI_Wait(&wildcard, &status), MPIX_ERR_PROC_FAILED_PENDING);
    CHECK(wildcard != MPI_REQUEST_NULL, "the pending wildcard receive was freed");
    EXPECT(MPI_Start(&wildcard), MPI_ERR_REQUEST);
    OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    OK(MPI_Send(&go, 1, MPI_INT, other, 4, MPI_COMM_WORLD));
    OK(MPI_Recv(&go, 1, MPI_INT, other, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int mine = 300 + rank;
    OK(MPI_Send(&mine, 1, MPI_INT, other, 3, MPI_COMM_WORLD));
    OK(MPI_Wait(&wildcard, &status));
    CHECK(any == 300 + other && status.MPI_SOURCE == other && wildcard != MPI_REQUEST_NULL,
          "wildcard receive after the acknowledgement: %d from %d", any, status.MPI_SOURCE);
    OK(MPI_Request_free(&wildcard));

    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "validate_global: %d failures", failed);

    /* The same requests again: the recognized rank acts as MPI_PROC_NULL. */
    for (int it = BEFORE + 1; it < BEFORE + 4; it++) {
        start(it);
        OK(MPI_Waitall(2 * size, requests, statuses));
        int count = -1;
        OK(MPI_Get_count(&statuses[2 * VICTIM], MPI_INT, &count));
        CHECK(statuses[2 * VICTIM].MPI_SOURCE == MPI_PROC_NULL && count == 0 &&
                  received[VICTIM] == -1,
              "iteration %d: receive from the recognized rank: source %d, count %d, value %d",
              it, statuses[2 * VICTIM].MPI_SOURCE, count, received[VICTIM]);
        CHECK(received[other] == 100 * other + it, "iteration %d: from %d got %d", it, other,
              received[other]);
        check_kept("after validate_global");
    }

    MPI_Request sync;
    int data = 7;
    OK(MPI_Ssend_init(&data, 1, MPI_INT, VICTIM, 2, MPI_COMM_WORLD, &sync));
    OK(MPI_Start(&sync));
    OK(MPI_Wait(&sync, MPI_STATUS_IGNORE));
    CHECK(sync != MPI_REQUEST_NULL, "Ssend_init request freed");
    OK(MPI_Request_free(&sync));

    for (int k = 0; k < 2 * size; k++)
        if (requests[k] != MPI_REQUEST_NULL)
            OK(MPI_Request_free(&requests[k]));
    return ft_finish();
}

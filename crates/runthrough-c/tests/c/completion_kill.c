/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Waitsome and MPI_Testall waiting when a peer dies: rtrun kills rank 1 by time
 * (--kill 1@0.5) while it waits in a receive nothing matches. Rank 0 waits in MPI_Waitsome on
 * a receive from rank 1 and one from rank 2 (which sends only when told): it returns with the
 * first done, MPIX_ERR_PROC_FAILED in its status (MPI_ERR_IN_STATUS), the other still active;
 * then the other completes. A MPI_Testall loop over a receive from rank 1 then ends with
 * MPI_ERR_IN_STATUS at once, its user error handler called with MPIX_ERR_PROC_FAILED. */
#include "ft_common.h"

static int handled = 0, handled_code = -1;

static void record(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    handled++;
    handled_code = *code;
}

int main(int argc, char **argv) {
    int rank, size, value = -1, token = 1, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    if (rank == 1) {
        MPI_Recv(&value, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        FAIL("rank 1 was to be killed by rtrun");
    }
    if (rank == 0) {
        int values[2] = {-1, -1}, outcount = -1, indices[2], flag = 0;
        MPI_Request requests[2];
        MPI_Status statuses[2];
        OK(MPI_Irecv(&values[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]));
        OK(MPI_Irecv(&values[1], 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &requests[1]));
        EXPECT(MPI_Waitsome(2, requests, &outcount, indices, statuses), MPI_ERR_IN_STATUS);
        CHECK(outcount == 1 && indices[0] == 0 && statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED,
              "Waitsome: %d done, error %d", outcount, statuses[0].MPI_ERROR);
        CHECK(requests[1] != MPI_REQUEST_NULL, "the live receive was completed");
        OK(MPI_Send(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD));
        OK(MPI_Waitsome(2, requests, &outcount, indices, statuses));
        CHECK(outcount == 1 && indices[0] == 1 && values[1] == 2, "then: %d", values[1]);
        /* A user error handler gets the failed request's own class (as Open MPI passes it),
         * the call still returns MPI_ERR_IN_STATUS. */
        MPI_Errhandler recording;
        OK(MPI_Comm_create_errhandler(record, &recording));
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, recording));
        OK(MPI_Irecv(&values[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]));
        int rc = MPI_SUCCESS;
        while (!flag)
            rc = MPI_Testall(1, requests, &flag, statuses);
        CHECK(rc == MPI_ERR_IN_STATUS && statuses[0].MPI_ERROR == MPIX_ERR_PROC_FAILED,
              "Testall: rc %d, error %d", rc, statuses[0].MPI_ERROR);
        CHECK(handled == 1 && handled_code == MPIX_ERR_PROC_FAILED, "handler: %d calls, code %d",
              handled, handled_code);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        OK(MPI_Errhandler_free(&recording));
    } else if (rank == 2) {
        int answer = 2;
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    return ft_finish();
}

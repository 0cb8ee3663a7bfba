/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test failure_ack: MPIX_Comm_failure_ack / MPIX_Comm_failure_get_acked, and a pending
 * MPI_ANY_SOURCE request through MPIX_ERR_PROC_FAILED_PENDING.
 * Run-through: failure_ack is MPI_Comm_validate_local (L := G + known failures) and get_acked
 * is the group of L's failed ranks. Before the ack the acked group is empty and a wildcard
 * MPI_Irecv's MPI_Wait returns MPIX_ERR_PROC_FAILED_PENDING with the request kept (not
 * MPI_REQUEST_NULL); after the ack the same request completes with a live rank's message. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value = -1, go = 1, n = -1;
    MPI_Group acked, world_group;
    MPI_Request request;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked));
        OK(MPI_Group_size(acked, &n));
        CHECK(n == 0, "%d acked before the ack", n);
        OK(MPI_Group_free(&acked));
        CHECK(acked == MPI_GROUP_NULL, "group handle not reset");

        OK(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &request));
        EXPECT(MPI_Wait(&request, &status), MPIX_ERR_PROC_FAILED_PENDING);
        CHECK(request != MPI_REQUEST_NULL, "a pending request was freed");

        OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked));
        OK(MPI_Group_size(acked, &n));
        CHECK(n == 1, "%d acked", n);
        int first = 0, in_world = -1;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
        OK(MPI_Group_translate_ranks(acked, 1, &first, world_group, &in_world));
        CHECK(in_world == 1, "acked rank %d", in_world);
        OK(MPI_Group_free(&acked));
        OK(MPI_Group_free(&world_group));

        OK(MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD));
        OK(MPI_Wait(&request, &status));
        CHECK(value == 42 && status.MPI_SOURCE == 2, "got %d from %d", value, status.MPI_SOURCE);
        CHECK(request == MPI_REQUEST_NULL, "request not freed");
    } else if (rank == 2) {
        int answer = 42;
        OK(MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(&answer, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_COMM_SELF: a real communicator of the calling rank alone (size 1, rank 0), apart from
 * MPI_COMM_WORLD.
 * - Point-to-point with oneself (blocking, non-blocking, MPI_Sendrecv, MPI_ANY_SOURCE), the
 *   collectives, MPI_Comm_dup and MPI_Comm_group (its one member is this rank of the world).
 * - Bad input: rank 1 of MPI_COMM_SELF is MPI_ERR_RANK; freeing it is MPI_ERR_COMM.
 * - Rank 2 dies: on MPI_COMM_WORLD, collectives and a blocking wildcard receive return
 *   MPIX_ERR_PROC_FAILED until the failure is handled, but MPI_COMM_SELF holds
 *   no failed rank, so everything on it keeps working, wildcards included. */
#include "ft_common.h"

static void exercise_self(int world_rank) {
    int rank = -1, size = -1, value = world_rank + 10, got = -1, sum = -1;
    MPI_Status status;
    MPI_Request request;
    OK(MPI_Comm_rank(MPI_COMM_SELF, &rank));
    OK(MPI_Comm_size(MPI_COMM_SELF, &size));
    CHECK(rank == 0 && size == 1, "MPI_COMM_SELF: rank %d of %d", rank, size);

    OK(MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_SELF));
    OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &status));
    CHECK(got == value && status.MPI_SOURCE == 0 && status.MPI_TAG == 1, "self send: %d", got);
    got = -1;
    OK(MPI_Irecv(&got, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &request));
    OK(MPI_Send(&value, 1, MPI_INT, 0, 2, MPI_COMM_SELF));
    OK(MPI_Wait(&request, &status));
    CHECK(got == value, "self irecv: %d", got);
    got = -1;
    OK(MPI_Sendrecv(&value, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &status));
    CHECK(got == value, "self sendrecv: %d", got);

    OK(MPI_Barrier(MPI_COMM_SELF));
    OK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(sum == value, "self allreduce: %d", sum);
    got = value;
    OK(MPI_Bcast(&got, 1, MPI_INT, 0, MPI_COMM_SELF));
    CHECK(got == value, "self bcast: %d", got);

    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
    OK(MPI_Comm_size(dup, &size));
    CHECK(size == 1, "dup of MPI_COMM_SELF: size %d", size);
    OK(MPI_Comm_free(&dup));

    MPI_Group self_group, world_group;
    int zero = 0, in_world = -1;
    OK(MPI_Comm_group(MPI_COMM_SELF, &self_group));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Group_translate_ranks(self_group, 1, &zero, world_group, &in_world));
    CHECK(in_world == world_rank, "MPI_COMM_SELF's member is world rank %d", in_world);
    OK(MPI_Group_free(&self_group));
    OK(MPI_Group_free(&world_group));

    EXPECT(MPI_Send(&value, 1, MPI_INT, 1, 4, MPI_COMM_SELF), MPI_ERR_RANK);
    MPI_Comm self = MPI_COMM_SELF;
    EXPECT(MPI_Comm_free(&self), MPI_ERR_COMM);
    CHECK(self == MPI_COMM_SELF, "a failed free changed the handle");
}

int main(int argc, char **argv) {
    int rank, size, value = 0;
    ft_init(&argc, &argv, &rank, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(MPI_COMM_SELF != MPI_COMM_WORLD, "MPI_COMM_SELF is MPI_COMM_WORLD");
    exercise_self(rank);
    ft_sync_then_die(MPI_COMM_WORLD, 2);
    ft_wait_detected(MPI_COMM_WORLD, 2);
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPIX_ERR_PROC_FAILED);
    exercise_self(rank);
    return ft_finish();
}

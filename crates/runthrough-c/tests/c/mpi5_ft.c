/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The MPI-5 names of the fault-tolerance calls (docs/src/semantics.md §3.5, §5), with a kill:
 * rtrun kills rank 1 as it enters its second MPI_Barrier (c_programs.rs: --kill 1@barrier:2).
 * The survivors' second barrier returns MPI_ERR_PROC_FAILED; a wildcard receive posted before
 * the failure is acknowledged reports MPI_ERR_PROC_FAILED_PENDING and stays pending;
 * MPI_Comm_get_failed is the group {1}; MPI_Comm_agree before the acknowledgement returns
 * MPI_ERR_PROC_FAILED with the agreed flag, after MPI_Comm_ack_failed it succeeds;
 * MPI_Comm_iagree, MPI_Comm_ishrink (and MPIX_Comm_ishrink) complete through MPI_Wait; after
 * MPI_Comm_revoke every other survivor's receive returns MPI_ERR_REVOKED, MPI_Comm_is_revoked
 * says so, and MPI_Comm_shrink still works. Wrong use: a NULL newcomm, a freed ishrink request. */
#include "ft_common.h"

_Static_assert(MPI_ERR_PROC_FAILED == MPIX_ERR_PROC_FAILED, "MPI-5 class");
_Static_assert(MPI_ERR_PROC_FAILED_PENDING == MPIX_ERR_PROC_FAILED_PENDING, "MPI-5 class");
_Static_assert(MPI_ERR_REVOKED == MPIX_ERR_REVOKED, "MPI-5 class");

/* A shrunk communicator of the 3 survivors: ranks 0, 1, 2 = old ranks 0, 2, 3. */
static void check_shrunk(MPI_Comm shrunk, int rank) {
    int size, me, sum = 0, one = 1;
    OK(MPI_Comm_size(shrunk, &size));
    OK(MPI_Comm_rank(shrunk, &me));
    CHECK(size == 3, "shrunk size %d", size);
    CHECK(me == (rank == 0 ? 0 : rank - 1), "rank %d became %d", rank, me);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == 3, "sum %d over the shrunk communicator", sum);
}

int main(int argc, char **argv) {
    int rank, size, flag, value = 0, token = 7;
    MPI_Comm comm, shrunk, shrunk2, shrunk3;
    MPI_Group failed, world_group;
    MPI_Request pending = MPI_REQUEST_NULL, req;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    /* Rank 0 posts its wildcard receive while nothing has failed. */
    if (rank == 0)
        OK(MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 5, comm, &pending));
    OK(MPI_Barrier(comm));
    /* Rank 1 enters its second barrier (and dies there) only once every other rank has left
     * the first one: a pending collective fails once the death is known. */
    if (rank == 1) {
        for (int r = 0; r < size; r++)
            if (r != 1)
                OK(MPI_Recv(&token, 1, MPI_INT, r, 4, comm, MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Send(&token, 1, MPI_INT, 1, 4, comm));
    }

    /* Rank 1 dies as it enters this barrier. */
    EXPECT(MPI_Barrier(comm), MPI_ERR_PROC_FAILED);
    ft_wait_detected(comm, 1);
    if (rank == 0) {
        EXPECT(MPI_Wait(&pending, &status), MPI_ERR_PROC_FAILED_PENDING);
        CHECK(pending != MPI_REQUEST_NULL, "the pending wildcard receive was freed");
    }

    OK(MPI_Comm_is_revoked(comm, &flag));
    CHECK(flag == 0, "revoked before MPI_Comm_revoke");

    /* The failure is known and not acknowledged: the agreement reports it. */
    flag = rank == 2 ? 0x6 : 0x7;
    EXPECT(MPI_Comm_agree(comm, &flag), MPI_ERR_PROC_FAILED);
    CHECK(flag == 0x6, "agreed flag %#x after MPI_ERR_PROC_FAILED", flag);

    OK(MPI_Comm_get_failed(comm, &failed));
    int nfailed = -1, one = 1, translated = -1;
    OK(MPI_Group_size(failed, &nfailed));
    CHECK(nfailed == 1, "MPI_Comm_get_failed: %d ranks", nfailed);
    OK(MPI_Comm_group(comm, &world_group));
    int zero = 0;
    OK(MPI_Group_translate_ranks(failed, 1, &zero, world_group, &translated));
    CHECK(translated == one, "the failed rank is %d", translated);
    int acked = -1;
    EXPECT(MPI_Comm_ack_failed(comm, -1, &acked), MPI_ERR_ARG);
    OK(MPI_Comm_ack_failed(comm, 1, &acked));
    CHECK(acked == 1, "acknowledged %d", acked);
    OK(MPI_Group_free(&failed));
    OK(MPI_Group_free(&world_group));

    /* Everyone acknowledged: the agreement succeeds, blocking and not. */
    flag = rank == 3 ? 0x5 : 0x7;
    OK(MPI_Comm_agree(comm, &flag));
    CHECK(flag == 0x5, "agreed flag %#x", flag);
    flag = 0x3;
    OK(MPI_Comm_iagree(comm, &flag, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(flag == 0x3 && req == MPI_REQUEST_NULL, "iagree: flag %#x", flag);

    /* The acknowledged wildcard receive completes with a live sender's message. */
    if (rank == 2)
        OK(MPI_Send(&token, 1, MPI_INT, 0, 5, comm));
    if (rank == 0) {
        OK(MPI_Wait(&pending, &status));
        CHECK(value == 7 && status.MPI_SOURCE == 2, "got %d from %d", value, status.MPI_SOURCE);
    }

    /* Non-blocking shrink, and its wrong uses. */
    EXPECT(MPI_Comm_ishrink(comm, NULL, &req), MPI_ERR_ARG);
    OK(MPI_Comm_ishrink(comm, &shrunk, &req));
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST);
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_shrunk(shrunk, rank);

    /* Revoke: rank 0 revokes, the others are released from a receive nobody sends to. */
    if (rank == 0) {
        OK(MPI_Comm_revoke(comm));
    } else {
        EXPECT(MPI_Recv(&value, 1, MPI_INT, 0, 6, comm, MPI_STATUS_IGNORE), MPI_ERR_REVOKED);
    }
    OK(MPI_Comm_is_revoked(comm, &flag));
    CHECK(flag == 1, "not revoked after MPI_Comm_revoke");
    EXPECT(MPI_Barrier(comm), MPI_ERR_REVOKED);
    OK(MPI_Comm_shrink(comm, &shrunk2));
    check_shrunk(shrunk2, rank);

    /* The MPIX_ name of the non-blocking shrink, on the shrunk (failure-free) communicator. */
    OK(MPIX_Comm_ishrink(shrunk2, &shrunk3, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Comm_size(shrunk3, &size));
    CHECK(size == 3, "shrunk again: size %d", size);

    OK(MPI_Comm_free(&shrunk3));
    OK(MPI_Comm_free(&shrunk2));
    OK(MPI_Comm_free(&shrunk));
    OK(MPI_Comm_free(&comm));
    return ft_finish();
}

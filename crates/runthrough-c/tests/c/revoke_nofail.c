/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test revoke_nofail: no failure; rank 0 revokes a communicator while the others
 * wait in a receive on it.
 * Run-through: the same as ULFM: the pending receives return MPIX_ERR_REVOKED, later
 * point-to-point (MPI_PROC_NULL as the peer included) and collectives on it too; local calls (MPI_Comm_validate_local, the
 * accessors, MPIX_Comm_is_revoked) keep working, and MPIX_Comm_agree and MPIX_Comm_shrink work
 * on the revoked communicator (agree: the AND of every rank's flag; shrink: every rank). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value, flag, failed, count;
    MPI_Comm comm, shrunk;
    ft_init(&argc, &argv, &rank, &size);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (rank == 0) {
        usleep(100000);
        OK(MPIX_Comm_revoke(comm));
        OK(MPIX_Comm_revoke(comm)); /* twice: nothing more */
    } else {
        EXPECT(MPI_Recv(&value, 1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    }
    OK(MPIX_Comm_is_revoked(comm, &flag));
    CHECK(flag == 1, "not revoked");
    EXPECT(MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 0, comm), MPIX_ERR_REVOKED);
    EXPECT(MPI_Barrier(comm), MPIX_ERR_REVOKED);
    /* MPI_PROC_NULL as the peer too (as in ULFM: mpi4py's test_ulfm testRevoke). */
    EXPECT(MPI_Send(&rank, 1, MPI_INT, MPI_PROC_NULL, 0, comm), MPIX_ERR_REVOKED);
    EXPECT(MPI_Recv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, comm, MPI_STATUS_IGNORE),
           MPIX_ERR_REVOKED);
    MPI_Request request;
    EXPECT(MPI_Isend(&rank, 1, MPI_INT, MPI_PROC_NULL, 0, comm, &request), MPIX_ERR_REVOKED);
    /* ... but not on a communicator that is not revoked. */
    OK(MPI_Send(&rank, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Comm_validate_local(comm, &failed));
    CHECK(failed == 0, "num_failed %d", failed);
    OK(MPI_Comm_get_num_state_local(comm, MPI_RANK_STATE_OK, &count));
    CHECK(count == size, "OK count %d", count);
    flag = rank == 2 ? 0x3 : 0x7;
    OK(MPIX_Comm_agree(comm, &flag));
    CHECK(flag == 0x3, "agreed %#x", flag);
    OK(MPIX_Comm_shrink(comm, &shrunk));
    OK(MPI_Comm_size(shrunk, &count));
    CHECK(count == size, "shrunk size %d", count);
    OK(MPI_Barrier(shrunk));
    OK(MPIX_Comm_is_revoked(shrunk, &flag));
    CHECK(flag == 0, "the shrunk communicator is revoked");
    /* The world is not affected. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Comm_free(&shrunk));
    OK(MPI_Comm_free(&comm));
    CHECK(comm == MPI_COMM_NULL, "handle not reset");
    return ft_finish();
}

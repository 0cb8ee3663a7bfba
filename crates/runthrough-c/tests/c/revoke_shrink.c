/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test revoke_shrink: rank 1 dies; the rank that notices revokes the communicator,
 * which releases the others from their waits; everyone shrinks and goes on.
 * Run-through: as ULFM. Ranks 2 and 3 wait for a message from rank 0 that never comes; rank 0
 * learns of the failure, revokes; they get MPIX_ERR_REVOKED; all shrink; the shrunk
 * communicator works and the revoked one still refuses collectives. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, value, newsize;
    MPI_Comm comm, shrunk;
    ft_init(&argc, &argv, &rank, &size);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    ft_sync_then_die(comm, 1);
    if (rank == 0) {
        ft_wait_detected(comm, 1);
        OK(MPIX_Comm_revoke(comm));
    } else {
        EXPECT(MPI_Recv(&value, 1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    }
    OK(MPIX_Comm_shrink(comm, &shrunk));
    OK(MPI_Comm_size(shrunk, &newsize));
    CHECK(newsize == size - 1, "size %d", newsize);
    OK(MPI_Barrier(shrunk));
    EXPECT(MPI_Barrier(comm), MPIX_ERR_REVOKED);
    OK(MPI_Comm_free(&comm));
    OK(MPI_Comm_free(&shrunk));
    return ft_finish();
}

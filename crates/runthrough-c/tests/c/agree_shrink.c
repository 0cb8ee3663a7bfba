/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test agree_shrink: after a failure, agree (on whether to go on) and shrink.
 * Run-through: as ULFM; the survivors acknowledge, agree, shrink, and agree again on the
 * shrunk communicator (no failure there: MPI_SUCCESS without acknowledgement). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, flag, newsize;
    MPI_Comm shrunk;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    ft_wait_detected(MPI_COMM_WORLD, 1);
    OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = 1;
    OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == 1, "agreed %d", flag);
    OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    OK(MPI_Comm_size(shrunk, &newsize));
    CHECK(newsize == size - 1, "size %d", newsize);
    flag = rank == 0 ? 2 : 3;
    OK(MPIX_Comm_agree(shrunk, &flag));
    CHECK(flag == 2, "agreed %d on the shrunk communicator", flag);
    OK(MPI_Comm_free(&shrunk));
    return ft_finish();
}

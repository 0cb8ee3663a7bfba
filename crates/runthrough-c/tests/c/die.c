/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/die.c: rank 1 dies; the others finalize.
 * Run-through: the same. MPI_Finalize is a fault-tolerant agreement, so it neither blocks on
 * nor reports the dead rank; afterwards the survivors' G holds it. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    if (rank == 1)
        DIE();
    ft_wait_detected(MPI_COMM_WORLD, 1);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPICH test/mpi/ft/gather.c: rank 1 dies; MPI_Gather to rank 0 reports the failure.
 * Run-through: the root cannot complete (the victim's block never comes): it gets
 * MPIX_ERR_PROC_FAILED; other ranks may return MPI_SUCCESS (they sent their part before the
 * failure mattered) or the error: results need not be uniform. After
 * MPI_Comm_validate_global the gather succeeds over the OK ranks: every survivor's block
 * arrives and the dead rank's slot is left untouched. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, failed, rc;
    int mine[2], all[64];
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    mine[0] = rank;
    mine[1] = 10 * rank;
    rc = MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rc == MPIX_ERR_PROC_FAILED, "root: %d", rc);
    else
        CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED, "rank %d: %d", rank, rc);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    OK(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            int want0 = r == 1 ? -1 : r, want1 = r == 1 ? -1 : 10 * r;
            CHECK(all[2 * r] == want0 && all[2 * r + 1] == want1, "slot %d: %d %d", r,
                  all[2 * r], all[2 * r + 1]);
        }
        /* MPI_IN_PLACE at the root. */
        all[0] = 5;
        all[1] = 6;
        OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK(all[0] == 5 && all[1] == 6 && all[4] == 2, "in place");
    } else {
        OK(MPI_Gather(mine, 2, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    }
    return ft_finish();
}

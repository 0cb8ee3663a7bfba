/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Sendrecv with a peer that dies during the exchange: rtrun kills rank 1 at one of its
 * calls (--kill 1@call:K) while ranks 0 and 1 exchange in a loop, and ranks 2 and 3 in
 * another. Rank 0's MPI_Sendrecv returns MPIX_ERR_PROC_FAILED (it never hangs), and every
 * exchange before it carried the right data; ranks 2 and 3 finish their loop unaffected;
 * every survivor then finds one failure in G (rank 1: the test checks rtrun's report). */
#include "ft_common.h"

#define ROUNDS 2000

int main(int argc, char **argv) {
    int rank, size, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    int peer = rank ^ 1, round, rc = MPI_SUCCESS;
    for (round = 0; round < ROUNDS; round++) {
        int out[2] = {rank, round}, in[2] = {-1, -1};
        rc = MPI_Sendrecv(out, 2, MPI_INT, peer, 0, in, 2, MPI_INT, peer, 0, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            break;
        CHECK(in[0] == peer && in[1] == round, "round %d: got %d/%d", round, in[0], in[1]);
    }
    if (rank == 0) {
        int class_ = -1;
        MPI_Error_class(rc, &class_);
        CHECK(class_ == MPIX_ERR_PROC_FAILED, "round %d: error class %d", round, class_);
        printf("rank 1 failed during round %d\n", round);
    } else {
        CHECK(rc == MPI_SUCCESS && round == ROUNDS, "rank %d stopped at round %d (%d)", rank,
              round, rc);
    }
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    return ft_finish();
}

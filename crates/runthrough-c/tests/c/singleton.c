/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Started without any launcher, a program runs as a singleton: MPI_COMM_WORLD has one rank,
 * rank 0, and every call works on it (point-to-point with oneself, collectives, the
 * fault-tolerance calls). Run directly by tests/c_programs.rs; with a broken launcher
 * environment instead, MPI_Init must not return (the test checks that this program prints
 * nothing and exits non-zero). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank = -1, size = -1, value = 5, got = -1, sum = -1, flag = 6, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    printf("MPI_Init returned: rank %d of %d\n", rank, size);
    CHECK(rank == 0 && size == 1, "a singleton is rank 0 of 1, not %d of %d", rank, size);
    OK(MPI_Sendrecv(&value, 1, MPI_INT, 0, 0, &got, 1, MPI_INT, MPI_ANY_SOURCE, 0,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == value, "self exchange: %d", got);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == value, "allreduce: %d", sum);
    OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == 6, "agree: %d", flag);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 0, "validate_global: %d failed", failed);
    return ft_finish();
}

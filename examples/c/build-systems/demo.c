/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* demo.c: the program the autotools, CMake and pkg-config projects build (an all-reduce of
 * the ranks' numbers, checked); crates/runthrough-c/tests/build_systems.rs builds and runs it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        printf("rank %d: sum %d\n", rank, sum);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

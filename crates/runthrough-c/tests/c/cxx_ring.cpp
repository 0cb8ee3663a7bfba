// SPDX-License-Identifier: MIT OR Apache-2.0
// A C++ program (compiled with `RTCC_CC=c++ rtcc`): <mpi.h> and <mpi-ext.h> declare the library
// inside extern "C", so the calls link. A Sendrecv ring, MPI_COMM_SELF, an agreement and the
// version calls; rank 0 prints "No Errors".
#include <mpi.h>
#include <mpi-ext.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "C++ check failed: %s\n", what);
        std::exit(1);
    }
}

int main(int argc, char **argv) {
    check(MPI_Init(&argc, &argv) == MPI_SUCCESS, "MPI_Init");
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> out(4, rank), in(4, -1);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    check(MPI_Sendrecv(out.data(), 4, MPI_INT, next, 0, in.data(), 4, MPI_INT, prev, 0,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "MPI_Sendrecv");
    check(in[3] == prev, "ring data");
    int self_size = 0;
    MPI_Comm_size(MPI_COMM_SELF, &self_size);
    check(self_size == 1, "MPI_COMM_SELF size");
    int flag = ~(1 << rank);
    check(MPIX_Comm_agree(MPI_COMM_WORLD, &flag) == MPI_SUCCESS, "MPIX_Comm_agree");
    check(flag == ~((1 << size) - 1), "agreed flag");
    int version = 0, subversion = 0;
    MPI_Get_version(&version, &subversion);
    check(version == MPI_VERSION, "MPI_Get_version");
    check(MPI_Finalize() == MPI_SUCCESS, "MPI_Finalize");
    if (rank == 0) {
        std::printf("No Errors\n");
    }
    return 0;
}

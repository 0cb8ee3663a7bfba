/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A profiling tool as MPI tools are written (the profiling interface): it defines MPI_Send,
 * MPI_Recv, MPI_Allreduce and MPIX_Comm_agree, counts the calls and the errors they return,
 * and reaches the library through their PMPI_ / PMPIX_ names; its MPI_Finalize prints the
 * counts, then calls PMPI_Finalize. tests/profiling.rs builds it into a program
 * (tests/c/profiling.c) and, as a shared library, preloads it under an unchanged program. */
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* Open MPI keeps the ULFM names there */
#endif
#include <stdio.h>

static int sends, receives, allreduces, agrees, errors;

static int counted(int rc) {
    if (rc != MPI_SUCCESS)
        errors++;
    return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
    sends++;
    return counted(PMPI_Send(buf, count, datatype, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    receives++;
    return counted(PMPI_Recv(buf, count, datatype, source, tag, comm, status));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
    allreduces++;
    return counted(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

int MPIX_Comm_agree(MPI_Comm comm, int *flag) {
    agrees++;
    return counted(PMPIX_Comm_agree(comm, flag));
}

int MPI_Finalize(void) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("tool: rank %d send %d recv %d allreduce %d agree %d errors %d\n", rank, sends,
           receives, allreduces, agrees, errors);
    fflush(stdout);
    return PMPI_Finalize();
}

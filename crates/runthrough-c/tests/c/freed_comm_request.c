/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A request outlives its communicator, on 3 ranks: rank 0 posts a receive from rank 2 on a
 * duplicate of MPI_COMM_WORLD with an error handler of its own, frees the duplicate, and
 * rank 2 dies without sending. MPI_Wait then returns MPIX_ERR_PROC_FAILED through the freed
 * communicator's handler (the operations of a freed communicator complete normally), not
 * MPI_COMM_WORLD's; a later call given the freed handle is MPI_ERR_COMM through MPI_COMM_WORLD's
 * handler. Recovery libraries (Fenix) test their pre-failure requests this way after freeing
 * the communicators a failure broke. */
#include "ft_common.h"

static int dup_calls, world_calls, dup_class = -1;

static void on_dup(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    dup_calls++;
    MPI_Error_class(*code, &dup_class);
}

static void on_world(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    world_calls++;
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    MPI_Errhandler dup_handler, world_handler;
    OK(MPI_Comm_create_errhandler(on_dup, &dup_handler));
    OK(MPI_Comm_create_errhandler(on_world, &world_handler));
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_set_errhandler(dup, dup_handler));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler));

    if (rank == 2)
        DIE();
    if (rank == 0) {
        int value = -1;
        MPI_Request request;
        MPI_Comm freed = dup;
        OK(MPI_Irecv(&value, 1, MPI_INT, 2, 5, dup, &request));
        OK(MPI_Comm_free(&dup));
        CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free sets MPI_COMM_NULL");
        EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
        CHECK(dup_calls == 1 && dup_class == MPIX_ERR_PROC_FAILED,
              "the freed communicator's handler: %d calls, class %d", dup_calls, dup_class);
        CHECK(world_calls == 0, "MPI_COMM_WORLD's handler called %d times", world_calls);
        EXPECT(MPI_Send(&value, 1, MPI_INT, 1, 0, freed), MPI_ERR_COMM);
        CHECK(world_calls == 1 && dup_calls == 1, "a freed handle: world %d, dup %d",
              world_calls, dup_calls);
    } else {
        OK(MPI_Comm_free(&dup));
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&dup_handler));
    OK(MPI_Errhandler_free(&world_handler));
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

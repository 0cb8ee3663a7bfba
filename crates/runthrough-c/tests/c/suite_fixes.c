/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Behaviours mpi4py's own test suite relies on (python/mpi4py-suite):
 * - Error handler references: MPI_Comm_get_errhandler gives a new reference that
 *   MPI_Errhandler_free releases, predefined handlers included (freed as references, they stay
 *   predefined); a user handler goes with its last reference; freeing a freed or NULL handle is
 *   MPI_ERR_ARG; a handler a communicator still uses is given back by MPI_Comm_get_errhandler.
 * - The counts and displacements of non-blocking vector collectives (MPI_Iallgatherv,
 *   MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv, MPI_Ireduce_scatter) are read when the call
 *   starts: the arrays are overwritten and freed before MPI_Wait.
 * - MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED splits as MPI_COMM_TYPE_SHARED under the
 *   info hint mpi_hw_resource_type = mpi_shared_memory, and gives MPI_COMM_NULL without it or
 *   with another value; ranks passing MPI_UNDEFINED get MPI_COMM_NULL. */
#include "ft_common.h"

#include <string.h>

static int handler_calls = 0;
static void count_errors(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    handler_calls++;
}

static void errhandler_references(void) {
    MPI_Errhandler got[3];
    for (int i = 0; i < 3; i++)
        OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got[i]));
    CHECK(got[0] == MPI_ERRORS_RETURN, "world's handler %d", got[0]);
    for (int i = 0; i < 3; i++) {
        OK(MPI_Errhandler_free(&got[i]));
        CHECK(got[i] == MPI_ERRHANDLER_NULL, "freed handle %d", got[i]);
    }
    /* Still the predefined handler: errors return. */
    EXPECT(MPI_Send(NULL, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Errhandler fatal = MPI_ERRORS_ARE_FATAL;
    OK(MPI_Errhandler_free(&fatal));
    EXPECT(MPI_Errhandler_free(&fatal), MPI_ERR_ARG); /* MPI_ERRHANDLER_NULL */

    MPI_Comm dup;
    MPI_Errhandler mine, again, third;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_create_errhandler(count_errors, &mine));
    OK(MPI_Comm_set_errhandler(dup, mine));
    OK(MPI_Comm_get_errhandler(dup, &again));
    CHECK(again == mine, "got %d, set %d", again, mine);
    MPI_Errhandler copy = mine;
    OK(MPI_Errhandler_free(&mine)); /* one reference left */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, again));
    OK(MPI_Errhandler_free(&again)); /* the last one: gone */
    MPI_Errhandler stale = copy;
    EXPECT(MPI_Errhandler_free(&stale), MPI_ERR_ARG);
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy), MPI_ERR_ARG);
    /* The communicators keep it, and give it back. */
    MPI_Send(NULL, -1, MPI_INT, 0, 0, dup);
    CHECK(handler_calls == 1, "handler called %d times", handler_calls);
    OK(MPI_Comm_get_errhandler(dup, &third));
    CHECK(third == copy, "given back as %d, was %d", third, copy);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, third));
    MPI_Send(NULL, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK(handler_calls == 2, "handler called %d times", handler_calls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&third));
    OK(MPI_Comm_free(&dup));
}

/* An array of n ints set to `value`, on the heap. */
static int *filled(int n, int value) {
    int *a = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        a[i] = value;
    return a;
}

static int *steps(int n, int step) {
    int *a = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        a[i] = i * step;
    return a;
}

/* Overwrites and frees an array the call should have copied. */
static void spoil(int *a, int n) {
    for (int i = 0; i < n; i++)
        a[i] = -7;
    free(a);
}

static void vector_counts_copied(int rank, int size) {
    MPI_Request r;
    int *counts, *displs, *scounts, *sdispls;
    int mine[2] = {rank, rank + 100};
    int *all = filled(2 * size, -1);

    counts = filled(size, 2);
    displs = steps(size, 2);
    OK(MPI_Iallgatherv(mine, 2, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &r));
    spoil(counts, size);
    spoil(displs, size);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++)
        CHECK(all[2 * i] == i && all[2 * i + 1] == i + 100, "iallgatherv slot %d", i);

    int root = size - 1;
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    counts = filled(size, 2);
    displs = steps(size, 2);
    OK(MPI_Igatherv(mine, 2, MPI_INT, all, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &r));
    spoil(counts, size);
    spoil(displs, size);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (rank == root)
        for (int i = 0; i < size; i++)
            CHECK(all[2 * i] == i && all[2 * i + 1] == i + 100, "igatherv slot %d", i);

    int back[2] = {-1, -1};
    counts = filled(size, 2);
    displs = steps(size, 2);
    OK(MPI_Iscatterv(all, counts, displs, MPI_INT, back, 2, MPI_INT, root, MPI_COMM_WORLD, &r));
    spoil(counts, size);
    spoil(displs, size);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(back[0] == rank && back[1] == rank + 100, "iscatterv got %d %d", back[0], back[1]);

    int *out = steps(size, 1), *in = filled(size, -1);
    for (int i = 0; i < size; i++)
        out[i] = rank * 10 + i;
    scounts = filled(size, 1);
    sdispls = steps(size, 1);
    counts = filled(size, 1);
    displs = steps(size, 1);
    OK(MPI_Ialltoallv(out, scounts, sdispls, MPI_INT, in, counts, displs, MPI_INT, MPI_COMM_WORLD,
                      &r));
    spoil(scounts, size);
    spoil(sdispls, size);
    spoil(counts, size);
    spoil(displs, size);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++)
        CHECK(in[i] == i * 10 + rank, "ialltoallv from %d: %d", i, in[i]);

    int *ones = filled(2 * size, rank + 1), got[2] = {0, 0};
    counts = filled(size, 2);
    OK(MPI_Ireduce_scatter(ones, got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    spoil(counts, size);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int want = size * (size + 1) / 2;
    CHECK(got[0] == want && got[1] == want, "ireduce_scatter %d %d, want %d", got[0], got[1], want);
    free(ones);
    free(out);
    free(in);
    free(all);
}

static void hw_guided(int rank, int size) {
    MPI_Comm shared, guided;
    MPI_Info info;
    int n = 0, m = 0;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &guided));
    CHECK(guided == MPI_COMM_NULL, "HW_GUIDED without the hint");
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-level"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided));
    CHECK(guided == MPI_COMM_NULL, "HW_GUIDED with an unknown level");
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided));
    CHECK(guided != MPI_COMM_NULL, "HW_GUIDED with mpi_shared_memory");
    OK(MPI_Comm_size(shared, &n));
    OK(MPI_Comm_size(guided, &m));
    CHECK(n == m && n == size, "one host: shared %d, guided %d, world %d", n, m, size);
    OK(MPI_Comm_free(&guided));
    /* Only rank 1 asks for the level; the others pass MPI_UNDEFINED. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 1 ? MPI_COMM_TYPE_HW_GUIDED : MPI_UNDEFINED, 0,
                           info, &guided));
    if (rank == 1) {
        CHECK(guided != MPI_COMM_NULL, "rank 1's level");
        OK(MPI_Comm_size(guided, &m));
        CHECK(m == 1, "rank 1 alone: %d", m);
        OK(MPI_Comm_free(&guided));
    } else {
        CHECK(guided == MPI_COMM_NULL, "MPI_UNDEFINED");
    }
    OK(MPI_Comm_free(&shared));
    OK(MPI_Info_free(&info));
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    errhandler_references();
    vector_counts_copied(rank, size);
    hw_guided(rank, size);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

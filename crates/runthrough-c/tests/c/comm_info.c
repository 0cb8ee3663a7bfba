/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The small local calls: MPI_Initialized / MPI_Finalized (before MPI_Init, while running, after
 * MPI_Finalize), MPI_Wtick / MPI_Wtime, MPI_Get_processor_name, MPI_Comm_compare,
 * MPI_Comm_set_name / MPI_Comm_get_name, MPI_Comm_get_attr (MPI_TAG_UB, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE) and MPI_Dims_create, with bad input; and that they keep working at the
 * survivors while rank 2's death is known and not handled (they touch no peer). */
#include "ft_common.h"

#include <string.h>

static void check_dims(int nnodes, int ndims, const int *given, const int *want) {
    int dims[8];
    memcpy(dims, given, sizeof(int) * ndims);
    OK(MPI_Dims_create(nnodes, ndims, dims));
    for (int i = 0; i < ndims; i++)
        CHECK(dims[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, want %d", nnodes, ndims,
              i, dims[i], want[i]);
}

static void check_local_calls(int rank, int size) {
    /* Comm_compare. */
    int result = -1;
    MPI_Comm dup, reversed, half;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_IDENT, "world vs world: %d", result);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT, "world vs dup: %d", result);
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed));
    OK(MPI_Comm_compare(reversed, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_SIMILAR, "world vs reversed: %d", result);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, half, &result));
    CHECK(result == MPI_UNEQUAL, "world vs half: %d", result);
    OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_UNEQUAL, "self vs world: %d", result);
    EXPECT(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &result), MPI_ERR_COMM);
    EXPECT(MPI_Comm_compare(4242, MPI_COMM_WORLD, &result), MPI_ERR_COMM);
    EXPECT(MPI_Comm_compare(MPI_COMM_WORLD, dup, NULL), MPI_ERR_ARG);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world's name: %s (%d)", name, len);
    OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0 && len == 13, "self's name: %s (%d)", name, len);
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(name[0] == '\0' && len == 0, "a new communicator's name: %s (%d)", name, len);
    OK(MPI_Comm_set_name(dup, "the duplicate"));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "the duplicate") == 0 && len == 13, "dup's name: %s (%d)", name, len);
    OK(MPI_Comm_set_name(MPI_COMM_WORLD, "world"));
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "world") == 0, "renamed world: %s", name);
    char long_name[300];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    OK(MPI_Comm_set_name(dup, long_name));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(name) == (size_t)len, "truncated: %d", len);
    EXPECT(MPI_Comm_set_name(dup, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_name(dup, NULL, &len), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_name(dup, name, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM);

    /* Attributes. */
    int *value = NULL, flag = -1;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag));
    CHECK(flag == 1 && value && *value == MPI_TAG_UB_VALUE && *value >= 32767, "MPI_TAG_UB");
    OK(MPI_Comm_get_attr(dup, MPI_WTIME_IS_GLOBAL, &value, &flag));
    CHECK(flag == 1 && value && (*value == 0 || *value == 1), "MPI_WTIME_IS_GLOBAL");
    OK(MPI_Comm_get_attr(half, MPI_UNIVERSE_SIZE, &value, &flag));
    /* The job's universe: rtrun's --universe-size (RT_UNIVERSE), else the world's size. */
    int universe = getenv("RT_UNIVERSE") ? atoi(getenv("RT_UNIVERSE")) : size;
    CHECK(universe >= size, "RT_UNIVERSE %d", universe);
    CHECK(flag == 1 && value && *value == universe, "MPI_UNIVERSE_SIZE: %d", value ? *value : -1);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &value, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &value, &flag), MPI_ERR_COMM);

    /* A freed communicator. */
    MPI_Comm gone = dup;
    OK(MPI_Comm_free(&dup));
    EXPECT(MPI_Comm_get_name(gone, name, &len), MPI_ERR_COMM);
    EXPECT(MPI_Comm_compare(gone, MPI_COMM_WORLD, &result), MPI_ERR_COMM);
    OK(MPI_Comm_free(&reversed));
    OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv) {
    int flag = -1, rank, size;
    /* Before MPI_Init. */
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "initialized before MPI_Init: %d", flag);
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "finalized before MPI_Init: %d", flag);
    check_dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "initialized: %d", flag);
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "finalized while running: %d", flag);
    EXPECT(MPI_Initialized(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Finalized(NULL), MPI_ERR_ARG);

    /* The clock. */
    double tick = MPI_Wtick(), t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(tick > 0.0 && tick <= 1e-3, "MPI_Wtick: %g", tick);
    CHECK(t0 > 0.0 && t1 >= t0, "MPI_Wtime: %f %f", t0, t1);

    /* The processor name: this host's, the same at every rank here. */
    char host[MPI_MAX_PROCESSOR_NAME], mine[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    OK(MPI_Get_processor_name(host, &len));
    CHECK(len > 0 && (size_t)len == strlen(host), "processor name %s (%d)", host, len);
    CHECK(gethostname(mine, sizeof mine) == 0 && strcmp(mine, host) == 0, "%s vs %s", host,
          mine);
    EXPECT(MPI_Get_processor_name(NULL, &len), MPI_ERR_ARG);
    EXPECT(MPI_Get_processor_name(host, NULL), MPI_ERR_ARG);

    /* Dims_create. */
    check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    check_dims(16, 2, (int[]){0, 0}, (int[]){4, 4});
    check_dims(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    check_dims(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    check_dims(8, 3, (int[]){2, 2, 2}, (int[]){2, 2, 2});
    check_dims(1, 0, (int[]){0}, (int[]){0});
    int dims[3] = {0, 0, 0};
    EXPECT(MPI_Dims_create(7, 2, (int[]){2, 0}), MPI_ERR_DIMS);
    EXPECT(MPI_Dims_create(6, 2, (int[]){2, 2}), MPI_ERR_DIMS);
    EXPECT(MPI_Dims_create(6, 2, (int[]){-1, 0}), MPI_ERR_DIMS);
    EXPECT(MPI_Dims_create(6, -1, dims), MPI_ERR_DIMS);
    EXPECT(MPI_Dims_create(0, 2, dims), MPI_ERR_ARG);
    EXPECT(MPI_Dims_create(6, 2, NULL), MPI_ERR_ARG);

    check_local_calls(rank, size);

    /* Rank 2 dies; while its failure is known and not handled, the local calls still work. */
    ft_sync_then_die(MPI_COMM_WORLD, 2);
    ft_wait_detected(MPI_COMM_WORLD, 2);
    int result = -1, *value = NULL;
    MPI_Comm dup;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &result));
    CHECK(result == MPI_UNEQUAL, "compare after the failure: %d", result);
    OK(MPI_Comm_set_name(MPI_COMM_WORLD, "after"));
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "after") == 0, "name after the failure: %s", name);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value, &flag));
    int universe_now = getenv("RT_UNIVERSE") ? atoi(getenv("RT_UNIVERSE")) : size;
    CHECK(flag == 1 && *value == universe_now, "universe size after the failure");
    /* A collective is disabled, as always; after validate_global, dup keeps the numbering. */
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPIX_ERR_PROC_FAILED);
    int failed;
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK(result == MPI_CONGRUENT, "dup after the failure: %d", result);
    OK(MPI_Comm_free(&dup));

    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1, "finalized after MPI_Finalize: %d", flag);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "initialized after MPI_Finalize: %d", flag);
    check_dims(4, 2, (int[]){0, 0}, (int[]){2, 2});
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}

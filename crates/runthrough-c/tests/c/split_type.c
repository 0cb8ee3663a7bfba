/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Comm_split_type. Without arguments (every rank on this host): MPI_COMM_TYPE_SHARED gives
 * one communicator of every rank, numbered by key, whose members share a processor name;
 * MPI_UNDEFINED and the hardware types give MPI_COMM_NULL; it works on MPI_COMM_SELF and on a
 * sub-communicator, with an info; bad input returns error classes. With the argument "kill":
 * rtrun kills rank 1 (--kill 1@0.5) while it waits in a receive nothing matches, before the
 * call; the survivors get MPIX_ERR_PROC_FAILED from it as from MPI_Comm_split until
 * MPI_Comm_validate_global, then a communicator of the survivors. With "during": every rank
 * calls it and rtrun kills rank 1 inside it (in the all-gather of host identities or in the
 * agreement on its outcome): every survivor gets MPIX_ERR_PROC_FAILED, none a communicator. */
#include "ft_common.h"

#include <string.h>

/* `comm`'s members all have this rank's processor name. */
static void check_one_host(MPI_Comm comm) {
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0, n = 0;
    OK(MPI_Get_processor_name(mine, &len));
    OK(MPI_Comm_size(comm, &n));
    char *all = calloc((size_t)n, MPI_MAX_PROCESSOR_NAME);
    CHECK(all != NULL, "calloc");
    OK(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                     MPI_CHAR, comm));
    for (int i = 0; i < n; i++)
        CHECK(strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine) == 0,
              "member %d runs on %s, not %s", i, all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine);
    free(all);
}

static void expect_shape(MPI_Comm comm, int want_rank, int want_size, const char *what) {
    int r = -1, n = -1;
    CHECK(comm != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    OK(MPI_Comm_rank(comm, &r));
    OK(MPI_Comm_size(comm, &n));
    CHECK(r == want_rank && n == want_size, "%s: rank %d of %d, want %d of %d", what, r, n,
          want_rank, want_size);
}

static void healthy(int rank, int size) {
    MPI_Comm node, reversed, partial, none, self_node, half, half_node;
    int result = -1, sum = 0, one = 1;

    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    expect_shape(node, rank, size, "shared, key = rank");
    OK(MPI_Comm_compare(node, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "shared vs world: %d", result);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, node));
    CHECK(sum == size, "allreduce over the host: %d", sum);
    check_one_host(node);

    /* Keys order the ranks. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_ENV,
                           &reversed));
    expect_shape(reversed, size - 1 - rank, size, "shared, reversed keys");
    OK(MPI_Comm_compare(reversed, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_SIMILAR, "reversed vs world: %d", result);

    /* MPI_UNDEFINED at rank 0 only: it takes part and gets MPI_COMM_NULL. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                           MPI_INFO_NULL, &partial));
    if (rank == 0)
        CHECK(partial == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    else
        expect_shape(partial, rank - 1, size - 1, "shared without rank 0");

    /* MPI_COMM_TYPE_HW_GUIDED with mpi_hw_resource_type = mpi_shared_memory is the shared
     * split (MPI-4.0 §7.4.2): every rank here shares this host. Other resource names and the
     * other hardware types: no level below the host, MPI_COMM_NULL everywhere. */
    MPI_Info hints;
    OK(MPI_Info_create(&hints));
    OK(MPI_Info_set(hints, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_Comm guided;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hints, &guided));
    expect_shape(guided, rank, size, "hw_guided mpi_shared_memory");
    OK(MPI_Comm_free(&guided));
    MPI_Info socket;
    OK(MPI_Info_create(&socket));
    OK(MPI_Info_set(socket, "mpi_hw_resource_type", "socket"));
    none = 12345;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, socket, &none));
    CHECK(none == MPI_COMM_NULL, "hw_guided socket gave %d", none);
    OK(MPI_Info_free(&socket));
    int types[] = {MPI_COMM_TYPE_HW_UNGUIDED,
#ifdef MPI_COMM_TYPE_RESOURCE_GUIDED /* MPI-4.1 */
                   MPI_COMM_TYPE_RESOURCE_GUIDED,
#endif
    };
    for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++) {
        none = 12345;
        OK(MPI_Comm_split_type(MPI_COMM_WORLD, types[i], rank, hints, &none));
        CHECK(none == MPI_COMM_NULL, "split type %d gave %d", types[i], none);
    }

    /* On MPI_COMM_SELF and on a sub-communicator. */
    OK(MPI_Comm_split_type(MPI_COMM_SELF, MPI_COMM_TYPE_SHARED, 0, hints, &self_node));
    expect_shape(self_node, 0, 1, "shared of MPI_COMM_SELF");
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Comm_split_type(half, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &half_node));
    OK(MPI_Comm_compare(half, half_node, &result));
    CHECK(result == MPI_CONGRUENT, "shared of a half vs the half: %d", result);

    /* Bad input, at every rank alike (no rank enters the collective). */
    MPI_Comm bad = 777;
    MPI_Info stale;
    OK(MPI_Info_create(&stale));
    MPI_Info freed = stale;
    OK(MPI_Info_free(&stale));
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &bad), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, -5, 0, MPI_INFO_NULL, &bad), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL),
           MPI_ERR_ARG);
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, freed, &bad),
           MPI_ERR_INFO);
    EXPECT(MPI_Comm_split_type(MPI_COMM_NULL, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &bad),
           MPI_ERR_COMM);
    CHECK(bad == 777, "a refused call wrote newcomm: %d", bad);

    /* Still collective-consistent after the refused calls. */
    OK(MPI_Barrier(node));
    OK(MPI_Info_free(&hints));
    OK(MPI_Comm_free(&node));
    OK(MPI_Comm_free(&reversed));
    if (partial != MPI_COMM_NULL)
        OK(MPI_Comm_free(&partial));
    OK(MPI_Comm_free(&self_node));
    OK(MPI_Comm_free(&half_node));
    OK(MPI_Comm_free(&half));
}

/* `during`: rank 1 is killed inside the call (rtrun's kill point), else before it. */
static void after_a_kill(int rank, int size, int during) {
    MPI_Comm node = 777, split = 777;
    if (during) {
        EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                   &node),
               MPIX_ERR_PROC_FAILED);
        CHECK(rank != 1, "rank 1 was to be killed by rtrun in MPI_Comm_split_type");
    } else if (rank == 1) {
        int value;
        MPI_Recv(&value, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        FAIL("rank 1 was to be killed by rtrun");
    } else {
        ft_wait_detected(MPI_COMM_WORLD, 1);
        EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                   &node),
               MPIX_ERR_PROC_FAILED);
        EXPECT(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split), MPIX_ERR_PROC_FAILED);
    }
    CHECK(node == 777 && split == 777, "a failed call wrote its newcomm");
    int failed = -1;
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "validate_global: %d failed", failed);

    /* The survivors, numbered by key; as MPI_Comm_split would number them. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    expect_shape(node, rank == 0 ? 0 : rank - 1, size - 1, "shared after the kill");
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split));
    int result = -1, sum = 0;
    OK(MPI_Comm_compare(node, split, &result));
    CHECK(result == MPI_CONGRUENT, "shared vs split after the kill: %d", result);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, node));
    CHECK(sum == size * (size - 1) / 2 - 1, "sum of the survivors' ranks: %d", sum);
    check_one_host(node);

    /* MPI_UNDEFINED at the last rank. */
    MPI_Comm partial = 777;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED,
                           0, MPI_INFO_NULL, &partial));
    if (rank == size - 1)
        CHECK(partial == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    else
        expect_shape(partial, rank == 0 ? 0 : rank - 1, size - 2, "shared without the last");
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    if (argc > 1 && strcmp(argv[1], "kill") == 0)
        after_a_kill(rank, size, 0);
    else if (argc > 1 && strcmp(argv[1], "during") == 0)
        after_a_kill(rank, size, 1);
    else
        healthy(rank, size);
    if (rank == 0) {
        printf("No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

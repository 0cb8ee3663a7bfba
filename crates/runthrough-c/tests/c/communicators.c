/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Communicators and groups from C (SPEC §3.4): split, create, create_group, dup after a
 * failure, group algebra, error handler inheritance, probe and waitany. Rank 3 of 4 dies
 * halfway: creations then hold only survivors; MPI_Comm_create_group works with the group of
 * every survivor, and over a group's members only (the evens), and fails at every member of a
 * group with the dead rank in it (the odds). */
#include "ft_common.h"

static int inherited_calls = 0;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    inherited_calls++;
}

int main(int argc, char **argv) {
    int rank, size, value, count, result, failed;
    MPI_Comm half, made, dup, survivors_comm;
    MPI_Group world_group, evens, odds, all, none, survivors;
    MPI_Errhandler handler;
    MPI_Status status;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");

    /* Split by parity, numbered by decreasing rank. */
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    OK(MPI_Comm_rank(half, &value));
    OK(MPI_Comm_size(half, &count));
    CHECK(count == 2 && value == (rank < 2 ? 1 : 0), "split: rank %d of %d", value, count);
    int sum = -1;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
    CHECK(sum == (rank % 2 ? 4 : 2), "split sum %d", sum);
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &half));
    CHECK((rank == 0) == (half != MPI_COMM_NULL), "MPI_UNDEFINED color");
    if (half != MPI_COMM_NULL)
        OK(MPI_Comm_free(&half));
    EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &half), MPI_ERR_ARG);

    /* Groups. */
    int even_ranks[] = {0, 2};
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Group_incl(world_group, 2, even_ranks, &evens));
    OK(MPI_Group_excl(world_group, 2, even_ranks, &odds));
    OK(MPI_Group_union(evens, odds, &all));
    OK(MPI_Group_compare(all, world_group, &result));
    CHECK(result == MPI_SIMILAR, "union compare %d", result);
    OK(MPI_Group_intersection(evens, odds, &none));
    OK(MPI_Group_size(none, &count));
    CHECK(count == 0, "intersection size %d", count);
    OK(MPI_Group_free(&none));
    OK(MPI_Group_difference(world_group, evens, &none));
    OK(MPI_Group_compare(none, odds, &result));
    CHECK(result == MPI_IDENT, "difference compare %d", result);
    OK(MPI_Group_free(&none));
    int translated[2] = {-1, -1};
    OK(MPI_Group_translate_ranks(odds, 2, (int[]){1, MPI_PROC_NULL}, world_group, translated));
    CHECK(translated[0] == 3 && translated[1] == MPI_PROC_NULL, "translate");
    OK(MPI_Group_translate_ranks(world_group, 1, (int[]){1}, evens, translated));
    CHECK(translated[0] == MPI_UNDEFINED, "translate to a non-member");
    EXPECT(MPI_Group_translate_ranks(evens, 1, (int[]){5}, world_group, translated), MPI_ERR_RANK);
    OK(MPI_Group_rank(odds, &value));
    CHECK(value == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "group rank %d", value);
    EXPECT(MPI_Group_incl(world_group, 2, (int[]){1, 1}, &none), MPI_ERR_ARG);
    /* Ranges: (0, 3, 2) names the evens, its exclusion the odds; (3, 0, -1) the world backwards. */
    MPI_Group ranged;
    int evens_range[1][3] = {{0, size - 1, 2}}, backwards[1][3] = {{size - 1, 0, -1}};
    OK(MPI_Group_range_incl(world_group, 1, evens_range, &ranged));
    OK(MPI_Group_compare(ranged, evens, &result));
    CHECK(result == MPI_IDENT, "range_incl compare %d", result);
    OK(MPI_Group_free(&ranged));
    OK(MPI_Group_range_excl(world_group, 1, evens_range, &ranged));
    OK(MPI_Group_compare(ranged, odds, &result));
    CHECK(result == MPI_IDENT, "range_excl compare %d", result);
    OK(MPI_Group_free(&ranged));
    OK(MPI_Group_range_incl(world_group, 1, backwards, &ranged));
    OK(MPI_Group_compare(ranged, world_group, &result));
    CHECK(result == MPI_SIMILAR, "backwards compare %d", result);
    OK(MPI_Group_free(&ranged));
    EXPECT(MPI_Group_range_incl(world_group, 1, (int[][3]){{0, 2, 0}}, &ranged), MPI_ERR_ARG);
    EXPECT(MPI_Group_range_incl(world_group, 1, (int[][3]){{3, 0, 1}}, &ranged), MPI_ERR_ARG);
    EXPECT(MPI_Group_range_incl(world_group, 1, (int[][3]){{0, 9, 1}}, &ranged), MPI_ERR_RANK);
    EXPECT(MPI_Group_range_excl(world_group, 1, NULL, &ranged), MPI_ERR_ARG);

    /* create: the odd ranks, in the group's order; the others get MPI_COMM_NULL. */
    OK(MPI_Comm_create(MPI_COMM_WORLD, odds, &made));
    CHECK((rank % 2 == 1) == (made != MPI_COMM_NULL), "create membership");
    if (made != MPI_COMM_NULL) {
        OK(MPI_Comm_rank(made, &value));
        CHECK(value == rank / 2, "create rank %d", value);
        OK(MPI_Comm_free(&made));
    }

    /* Error handlers are inherited by new communicators. */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_create_errhandler(count_errors, &handler));
    OK(MPI_Comm_set_errhandler(dup, handler));
    OK(MPI_Comm_dup(dup, &made));
    MPI_Errhandler got;
    OK(MPI_Comm_get_errhandler(made, &got));
    CHECK(got == handler, "inherited handler %d", got);
    EXPECT(MPI_Send(&rank, 1, MPI_INT, 0, -2, made), MPI_ERR_TAG);
    CHECK(inherited_calls == 1, "the inherited handler was called %d times", inherited_calls);
    OK(MPI_Comm_free(&made));
    OK(MPI_Errhandler_free(&handler));

    /* Probe, Iprobe, Waitany. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, flag = 0;
    OK(MPI_Send(&rank, 1, MPI_INT, next, 4, MPI_COMM_WORLD));
    OK(MPI_Probe(prev, 4, MPI_COMM_WORLD, &status));
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(status.MPI_SOURCE == prev && count == 1, "probe");
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status));
    CHECK(flag == 1 && status.MPI_TAG == 4, "iprobe");
    MPI_Request requests[2];
    int got_values[2] = {-1, -1}, index = -1;
    OK(MPI_Irecv(&got_values[0], 1, MPI_INT, prev, 99, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Irecv(&got_values[1], 1, MPI_INT, prev, 4, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Waitany(2, requests, &index, &status));
    CHECK(index == 1 && got_values[1] == prev, "waitany index %d", index);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody sends tag 99 before everyone's first Waitany */
    OK(MPI_Send(&rank, 1, MPI_INT, next, 99, MPI_COMM_WORLD));
    OK(MPI_Waitany(2, requests, &index, &status));
    CHECK(index == 0 && got_values[0] == prev, "waitany index %d", index);
    OK(MPI_Waitany(2, requests, &index, &status));
    CHECK(index == MPI_UNDEFINED, "waitany on inactive requests");

    /* Rank 3 dies; the survivors validate; creations hold only survivors. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed %d", failed);
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half));
    OK(MPI_Comm_size(half, &count));
    CHECK(count == 3, "split after the failure: size %d", count);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &made));
    OK(MPI_Comm_size(made, &count));
    CHECK(count == 4, "dup keeps the size: %d", count);
    OK(MPI_Comm_get_state_global(made, MPI_RANK_STATE_NULL, 1, &count, (MPI_Rank_info[1]){0}));
    OK(MPI_Comm_free(&made));
    OK(MPI_Group_excl(world_group, 1, (int[]){3}, &survivors));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, survivors, 0, &survivors_comm));
    OK(MPI_Comm_size(survivors_comm, &count));
    CHECK(count == 3, "create_group size %d", count);
    OK(MPI_Barrier(survivors_comm));
    /* Over its members only: the evens make theirs while rank 1 tries the odds, whose rank 3
     * is dead: every member of a group gets the same outcome. */
    if (rank % 2 == 0) {
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &made));
        OK(MPI_Comm_size(made, &count));
        CHECK(count == 2, "evens' create_group size %d", count);
        OK(MPI_Barrier(made));
        OK(MPI_Comm_free(&made));
    } else {
        made = MPI_COMM_NULL;
        EXPECT(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 5, &made), MPIX_ERR_PROC_FAILED);
        CHECK(made == MPI_COMM_NULL, "a failed create_group wrote a handle");
    }
    EXPECT(MPI_Comm_create_group(MPI_COMM_WORLD, evens, -1, &made), MPI_ERR_TAG);
    OK(MPI_Comm_free(&survivors_comm));
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Group_free(&survivors));
    OK(MPI_Group_free(&world_group));
    OK(MPI_Group_free(&evens));
    OK(MPI_Group_free(&odds));
    OK(MPI_Group_free(&all));
    return ft_finish();
}

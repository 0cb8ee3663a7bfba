/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test shrink: rank 1 dies; MPIX_Comm_shrink gives a communicator of the survivors in
 * their old order, on which collectives work.
 * Run-through: the same; shrink needs no prior acknowledgement or validate, and the parent's
 * views are unchanged by it (the failure is still not in its G). The new communicator has
 * empty views, and its group is the parent's without rank 1. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, newrank, newsize, sum = -1, result, count;
    MPI_Comm shrunk;
    MPI_Group world_group, survivors, shrunk_group;
    ft_init(&argc, &argv, &rank, &size);
    ft_sync_then_die(MPI_COMM_WORLD, 1);
    OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    OK(MPI_Comm_rank(shrunk, &newrank));
    OK(MPI_Comm_size(shrunk, &newsize));
    CHECK(newsize == size - 1, "size %d", newsize);
    CHECK(newrank == (rank == 0 ? 0 : rank - 1), "rank %d became %d", rank, newrank);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size * (size - 1) / 2 - 1, "sum %d", sum);
    OK(MPI_Comm_get_num_state_global(shrunk, MPI_RANK_STATE_NULL, &count));
    CHECK(count == 0, "the shrunk G holds %d", count);
    OK(MPI_Comm_get_num_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_NULL, &count));
    CHECK(count == 0, "shrink changed the parent's G");
    int dead = 1;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Group_excl(world_group, 1, &dead, &survivors));
    OK(MPI_Comm_group(shrunk, &shrunk_group));
    OK(MPI_Group_compare(survivors, shrunk_group, &result));
    CHECK(result == MPI_IDENT, "compare %d", result);
    OK(MPI_Group_compare(world_group, shrunk_group, &result));
    CHECK(result == MPI_UNEQUAL, "compare %d", result);
    OK(MPI_Group_free(&world_group));
    OK(MPI_Group_free(&survivors));
    OK(MPI_Group_free(&shrunk_group));
    OK(MPI_Comm_free(&shrunk));
    return ft_finish();
}

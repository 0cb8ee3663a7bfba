/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Comm_split, MPI_Comm_split_type and MPI_Comm_create on an intercommunicator between the
 * even and the odd ranks of 6: each group splits its own members (ordered by key), a color only one group has
 * and MPI_UNDEFINED give MPI_COMM_NULL; create takes a subset of the local group in its order,
 * an empty subset on one side gives MPI_COMM_NULL everywhere; the new intercommunicators carry
 * traffic between the right processes; a group with a process of the other group is
 * MPI_ERR_GROUP at that rank and MPI_ERR_ARG at every other. Then rank 5 dies: a split fails
 * with MPIX_ERR_PROC_FAILED at every survivor. */
#include "ft_common.h"

/* The MPI_COMM_WORLD ranks of `comm`'s remote group, in its order. */
static void remote_world(MPI_Comm comm, int *out, int n) {
    MPI_Group world, remote;
    int ranks[8];
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Comm_remote_group(comm, &remote));
    OK(MPI_Group_translate_ranks(remote, n, ranks, world, out));
    OK(MPI_Group_free(&remote));
    OK(MPI_Group_free(&world));
}

/* Local rank r sends its world rank to remote rank r (when there is one) and receives from
 * remote rank r what it sent: returns it (-1 when there is no such remote rank). */
static int exchange(MPI_Comm inter, int world_rank) {
    int me, remote_size, got = -1;
    OK(MPI_Comm_rank(inter, &me));
    OK(MPI_Comm_remote_size(inter, &remote_size));
    if (me >= remote_size)
        return -1;
    OK(MPI_Sendrecv(&world_rank, 1, MPI_INT, me, 4, &got, 1, MPI_INT, me, 4, inter,
                    MPI_STATUS_IGNORE));
    return got;
}

int main(int argc, char **argv) {
    int rank, size, local_rank, n, remote[8], flag;
    MPI_Comm half, inter, made;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 6, "run on 6 ranks");
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 11, &inter));
    OK(MPI_Comm_rank(inter, &local_rank)); /* rank / 2 */

    /* Split by local rank parity, keys reversed: color 0 holds local ranks 2 and 0, in that
     * order, in both groups (world 4, 0 and 5, 1); color 1 local rank 1 (world 2 and 3). */
    OK(MPI_Comm_split(inter, local_rank % 2, -local_rank, &made));
    OK(MPI_Comm_test_inter(made, &flag));
    CHECK(flag == 1, "a split of an intercommunicator is one");
    OK(MPI_Comm_size(made, &n));
    int me;
    OK(MPI_Comm_rank(made, &me));
    if (local_rank % 2 == 0) {
        CHECK(n == 2 && me == (local_rank == 2 ? 0 : 1), "color 0: rank %d of %d", me, n);
        OK(MPI_Comm_remote_size(made, &n));
        CHECK(n == 2, "color 0 remote size %d", n);
        remote_world(made, remote, 2);
        int even = rank % 2 == 0; /* then the remote group is the odds' */
        CHECK(remote[0] == (even ? 5 : 4) && remote[1] == (even ? 1 : 0), "color 0 remote %d %d",
              remote[0], remote[1]);
    } else {
        CHECK(n == 1 && me == 0, "color 1: rank %d of %d", me, n);
        remote_world(made, remote, 1);
        CHECK(remote[0] == (rank == 2 ? 3 : 2), "color 1 remote %d", remote[0]);
    }
    int partner = rank % 2 ? rank - 1 : rank + 1;
    int got = exchange(made, rank);
    CHECK(got == partner, "split traffic: %d from %d", got, partner);
    OK(MPI_Comm_free(&made));

    /* A color only the evens have, and MPI_UNDEFINED: MPI_COMM_NULL. */
    OK(MPI_Comm_split(inter, rank % 2 ? MPI_UNDEFINED : 7, 0, &made));
    CHECK(made == MPI_COMM_NULL, "a color of one group only");

    /* Create: the evens take local ranks 1 and 2 (in the order 2, 1), the odds local rank 0. */
    MPI_Group local, subset;
    OK(MPI_Comm_group(inter, &local));
    int evens_pick[] = {2, 1}, odds_pick[] = {0};
    OK(MPI_Group_incl(local, rank % 2 ? 1 : 2, rank % 2 ? odds_pick : evens_pick, &subset));
    OK(MPI_Comm_create(inter, subset, &made));
    OK(MPI_Group_free(&subset));
    int in_subset = rank % 2 ? local_rank == 0 : local_rank >= 1;
    CHECK((made != MPI_COMM_NULL) == in_subset, "create: member %d", in_subset);
    if (made != MPI_COMM_NULL) {
        OK(MPI_Comm_size(made, &n));
        OK(MPI_Comm_rank(made, &me));
        if (rank % 2 == 0) {
            CHECK(n == 2 && me == (local_rank == 2 ? 0 : 1), "create: rank %d of %d", me, n);
            remote_world(made, remote, 1);
            CHECK(remote[0] == 1, "create: the odds' member %d", remote[0]);
        } else {
            CHECK(n == 1 && me == 0, "create: odd rank %d of %d", me, n);
            remote_world(made, remote, 2);
            CHECK(remote[0] == 4 && remote[1] == 2, "create: the evens' %d %d", remote[0],
                  remote[1]);
        }
        /* The odd member and the evens' rank 0 (world 4) exchange. */
        got = exchange(made, rank);
        CHECK(got == (rank == 1 ? 4 : rank == 4 ? 1 : -1), "create traffic: %d", got);
        OK(MPI_Comm_free(&made));
    }
    /* An empty subset on one side: MPI_COMM_NULL everywhere. */
    subset = MPI_GROUP_EMPTY;
    if (rank % 2 == 0)
        OK(MPI_Group_incl(local, 1, evens_pick, &subset));
    OK(MPI_Comm_create(inter, subset, &made));
    CHECK(made == MPI_COMM_NULL, "create with an empty side");
    if (rank % 2 == 0)
        OK(MPI_Group_free(&subset));
    OK(MPI_Group_free(&local));

    /* Split by host: every rank here is on one host, so both groups stay whole. */
    OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &made));
    OK(MPI_Comm_test_inter(made, &flag));
    OK(MPI_Comm_size(made, &n));
    int remote_n = -1;
    OK(MPI_Comm_remote_size(made, &remote_n));
    CHECK(flag == 1 && n == 3 && remote_n == 3, "split_type: inter %d, %d and %d", flag, n,
          remote_n);
    CHECK(exchange(made, rank) == partner, "split_type traffic");
    OK(MPI_Comm_free(&made));
    OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &made));
    CHECK(made == MPI_COMM_NULL, "split_type MPI_UNDEFINED");

    /* Wrong use: world rank 1 (an odd) in the group rank 0 passes. */
    MPI_Group world_group;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int wrong[] = {rank == 0 ? 1 : rank};
    OK(MPI_Group_incl(world_group, 1, wrong, &subset));
    EXPECT(MPI_Comm_create(inter, subset, &made), rank == 0 ? MPI_ERR_GROUP : MPI_ERR_ARG);
    OK(MPI_Group_free(&subset));
    OK(MPI_Group_free(&world_group));
    EXPECT(MPI_Comm_split(inter, 0, 0, NULL), MPI_ERR_ARG);

    /* Rank 5 dies: the exchange of colors finds it at every survivor. */
    ft_sync_then_die(MPI_COMM_WORLD, 5);
    ft_wait_detected(MPI_COMM_WORLD, 5);
    made = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_split(inter, 0, 0, &made), MPIX_ERR_PROC_FAILED);
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Intercommunicators: MPI_Intercomm_create between the even and the odd ranks of
 * MPI_COMM_WORLD (the odd group's other members pass MPI_COMM_NULL as peer_comm, which MPI
 * reads only at the leaders), its local queries (size, rank and group are the local group's;
 * MPI_Comm_remote_size / _remote_group; MPI_Comm_compare), point-to-point across it (ranks
 * name the remote group: blocking, non-blocking, MPI_ANY_SOURCE, Sendrecv, Probe / Iprobe,
 * with statuses in remote ranks), MPIX_Comm_agree (the AND over the remote group),
 * MPIX_Comm_revoke, MPI_Intercomm_merge with either group high, and
 * MPI_Comm_free. Errors: a rank outside the remote group (MPI_ERR_RANK), MPI_Scan on an
 * intercommunicator and the remote queries on an intracommunicator (MPI_ERR_COMM). Needs an
 * even number of ranks (>= 4). */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 4 && size % 2 == 0, "needs an even number of ranks >= 4");
    int even = rank % 2 == 0, half = size / 2, lrank = rank / 2;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    /* Leaders: world 0 (even) and 1 (odd). */
    MPI_Comm peer = (even || rank == 1) ? MPI_COMM_WORLD : MPI_COMM_NULL;
    OK(MPI_Intercomm_create(local, 0, peer, even ? 1 : 0, 77, &inter));

    int n = -1, flag0 = 0;
    OK(MPI_Comm_size(inter, &n));
    CHECK(n == half, "intercomm size %d, want the local group's %d", n, half);
    OK(MPI_Comm_rank(inter, &n));
    CHECK(n == lrank, "intercomm rank %d, want %d", n, lrank);
    OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == half, "remote size %d", n);
    OK(MPI_Comm_test_inter(inter, &flag0));
    CHECK(flag0 == 1, "MPI_Comm_test_inter says %d on an intercommunicator", flag0);
    OK(MPI_Comm_test_inter(local, &flag0));
    CHECK(flag0 == 0, "MPI_Comm_test_inter says %d on an intracommunicator", flag0);
    flag0 = 0;
    MPI_Group remote, local_group, world_group, inter_group;
    OK(MPI_Comm_remote_group(inter, &remote));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int ranks[64], world_of[64];
    for (int i = 0; i < half; i++)
        ranks[i] = i;
    OK(MPI_Group_translate_ranks(remote, half, ranks, world_group, world_of));
    for (int i = 0; i < half; i++)
        CHECK(world_of[i] == 2 * i + (even ? 1 : 0), "remote rank %d is world %d", i,
              world_of[i]);
    OK(MPI_Comm_group(local, &local_group));
    OK(MPI_Comm_group(inter, &inter_group));
    OK(MPI_Group_compare(local_group, inter_group, &n));
    CHECK(n == MPI_IDENT, "the intercomm's group is not the local group (%d)", n);
    OK(MPI_Comm_compare(inter, inter, &n));
    CHECK(n == MPI_IDENT, "compare with itself: %d", n);
    OK(MPI_Comm_compare(inter, local, &n));
    CHECK(n == MPI_UNEQUAL, "compare with the local comm: %d", n);
    OK(MPI_Comm_compare(MPI_COMM_WORLD, inter, &n));
    CHECK(n == MPI_UNEQUAL, "compare with MPI_COMM_WORLD: %d", n);

    /* Names, attributes and error handlers work on it as on any communicator. */
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Comm_set_name(inter, "evens-odds"));
    OK(MPI_Comm_get_name(inter, name, &n));
    CHECK(n == 10 && name[0] == 'e', "name %s (%d)", name, n);
    int *tag_ub = NULL;
    OK(MPI_Comm_get_attr(inter, MPI_TAG_UB, &tag_ub, &flag0));
    CHECK(flag0 && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB on the intercommunicator");
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    OK(MPI_Comm_get_errhandler(inter, &handler));
    CHECK(handler == MPI_ERRORS_RETURN, "the intercommunicator's handler is %d", handler);

    /* Ping: local rank i and remote rank i exchange world ranks, blocking. */
    int got = -1;
    MPI_Status status;
    if (even) {
        OK(MPI_Send(&rank, 1, MPI_INT, lrank, 1, inter));
        OK(MPI_Recv(&got, 1, MPI_INT, lrank, 2, inter, &status));
    } else {
        OK(MPI_Recv(&got, 1, MPI_INT, lrank, 1, inter, &status));
        OK(MPI_Send(&rank, 1, MPI_INT, lrank, 2, inter));
    }
    int partner = even ? rank + 1 : rank - 1;
    CHECK(got == partner && status.MPI_SOURCE == lrank, "ping: got %d from %d, want %d from %d",
          got, status.MPI_SOURCE, partner, lrank);

    /* Everyone sends to remote rank 0; each group's rank 0 takes them with MPI_ANY_SOURCE. */
    MPI_Request request;
    OK(MPI_Isend(&rank, 1, MPI_INT, 0, 3, inter, &request));
    if (lrank == 0) {
        int seen[64] = {0};
        for (int k = 0; k < half; k++) {
            OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &status));
            int from = status.MPI_SOURCE;
            CHECK(from >= 0 && from < half && !seen[from], "source %d", from);
            seen[from] = 1;
            CHECK(got == 2 * from + (even ? 1 : 0), "from remote %d: %d", from, got);
        }
    }
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));

    /* Sendrecv with the partner, and probes. */
    int back = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, lrank, 4, &back, 1, MPI_INT, lrank, 4, inter, &status));
    CHECK(back == partner && status.MPI_SOURCE == lrank, "Sendrecv: %d from %d", back,
          status.MPI_SOURCE);
    OK(MPI_Send(&rank, 1, MPI_INT, lrank, 5, inter));
    OK(MPI_Probe(lrank, 5, inter, &status));
    CHECK(status.MPI_SOURCE == lrank && status.MPI_TAG == 5, "Probe: %d/%d", status.MPI_SOURCE,
          status.MPI_TAG);
    int flag = 0;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, 5, inter, &flag, &status));
    CHECK(flag && status.MPI_SOURCE == lrank, "Iprobe: %d from %d", flag, status.MPI_SOURCE);
    OK(MPI_Irecv(&back, 1, MPI_INT, lrank, 5, inter, &request));
    OK(MPI_Wait(&request, &status));
    CHECK(back == partner && status.MPI_SOURCE == lrank, "Irecv: %d from %d", back,
          status.MPI_SOURCE);

    /* Wrong use. */
    EXPECT(MPI_Send(&rank, 1, MPI_INT, half, 6, inter), MPI_ERR_RANK);
    EXPECT(MPI_Recv(&got, 1, MPI_INT, half + 3, 6, inter, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT(MPI_Isend(&rank, 1, MPI_INT, -5, 6, inter, &request), MPI_ERR_RANK);
    OK(MPI_Barrier(inter)); /* both groups (the other collectives: intercomm_collectives.c) */
    EXPECT(MPI_Scan(&rank, &got, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM); /* no scan there */
    MPI_Comm unused = MPI_COMM_NULL;
    EXPECT(MPI_Cart_create(inter, 1, (int[]){half}, (int[]){0}, 0, &unused), MPI_ERR_COMM);
    EXPECT(MPIX_Comm_shrink(inter, &unused), MPI_ERR_COMM);
    EXPECT(MPI_Comm_validate_local(inter, &n), MPI_ERR_COMM);
    MPI_Group failed_group;
    EXPECT(MPIX_Comm_get_failed(inter, &failed_group), MPI_ERR_COMM);
    EXPECT(MPI_Comm_remote_size(local, &n), MPI_ERR_COMM);
    EXPECT(MPI_Comm_remote_group(MPI_COMM_WORLD, &remote), MPI_ERR_COMM);
    EXPECT(MPI_Intercomm_merge(local, 0, &unused), MPI_ERR_COMM);
    EXPECT(MPI_Comm_remote_size(inter, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1, -3, &unused), MPI_ERR_TAG);
    EXPECT(MPI_Intercomm_create(local, half, MPI_COMM_WORLD, 1, 7, &unused), MPI_ERR_RANK);
    CHECK(unused == MPI_COMM_NULL, "a refused call wrote a handle");

    /* A second intercommunicator of the same groups is congruent to the first. */
    MPI_Comm twin;
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 78, &twin));
    OK(MPI_Comm_compare(inter, twin, &n));
    CHECK(n == MPI_CONGRUENT, "compare with a twin: %d", n);
    OK(MPI_Comm_free(&twin));

    /* Leaders with a remote_leader outside peer_comm: they get MPI_ERR_RANK, their groups
     * MPI_ERR_ARG, and nobody waits. */
    EXPECT(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, size + 5, 79, &unused),
           lrank == 0 ? MPI_ERR_RANK : MPI_ERR_ARG);
    CHECK(unused == MPI_COMM_NULL, "a refused creation wrote a handle");

    /* Groups that leave out ranks of peer_comm: MPI_ERR_ARG at every member (the runtime
     * creates communicators over every participant of the parent). World ranks 0 and 1 each
     * form a group of one; the others take no part. */
    MPI_Comm single;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? rank : 2, 0, &single));
    if (rank < 2)
        EXPECT(MPI_Intercomm_create(single, 0, MPI_COMM_WORLD, 1 - rank, 80, &unused),
               MPI_ERR_ARG);
    CHECK(unused == MPI_COMM_NULL, "a refused creation wrote a handle");
    OK(MPI_Comm_free(&single));

    /* Merge with the even group high: the odd group comes first. */
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, even, &merged));
    int mrank = -1, msize = -1;
    OK(MPI_Comm_size(merged, &msize));
    OK(MPI_Comm_rank(merged, &mrank));
    CHECK(msize == size, "merged size %d", msize);
    CHECK(mrank == (even ? half + lrank : lrank), "high even: merged rank %d", mrank);
    int order[64];
    OK(MPI_Allgather(&rank, 1, MPI_INT, order, 1, MPI_INT, merged));
    for (int i = 0; i < size; i++)
        CHECK(order[i] == (i < half ? 2 * i + 1 : 2 * (i - half)), "merged[%d] = world %d", i,
              order[i]);
    OK(MPI_Comm_free(&merged));
    /* Both low: the group of world rank 0 first, so the world's order by parity. */
    OK(MPI_Intercomm_merge(inter, 0, &merged));
    OK(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == (even ? lrank : half + lrank), "both low: merged rank %d", mrank);
    int sum = 0;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == size * (size - 1) / 2, "merged sum %d", sum);
    OK(MPI_Comm_free(&merged));

    /* MPIX_Comm_agree on an intercommunicator: the AND over the remote group's flags. */
    int agreed = ~(1 << rank), want = ~0;
    for (int r = even ? 1 : 0; r < size; r += 2)
        want &= ~(1 << r);
    OK(MPIX_Comm_agree(inter, &agreed));
    CHECK(agreed == want, "agree: %x, want %x", (unsigned)agreed, (unsigned)want);
    OK(MPIX_Comm_failure_ack(inter));

    /* Revocation: world rank 0 revokes; the others, waiting in a receive that nothing
     * matches, see MPIX_ERR_REVOKED, and every rank then sees the intercommunicator revoked. */
    flag = 0;
    if (rank == 0) {
        OK(MPIX_Comm_revoke(inter));
        OK(MPIX_Comm_is_revoked(inter, &flag));
        CHECK(flag, "not revoked where it was revoked");
        EXPECT(MPI_Send(&rank, 1, MPI_INT, 0, 9, inter), MPIX_ERR_REVOKED);
    } else {
        EXPECT(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, inter, MPI_STATUS_IGNORE),
               MPIX_ERR_REVOKED);
        OK(MPIX_Comm_is_revoked(inter, &flag));
        CHECK(flag, "a receive returned MPIX_ERR_REVOKED but the comm is not revoked");
    }
    EXPECT(MPIX_Comm_is_revoked(local + 1000, &flag), MPI_ERR_COMM);
    /* Collectives are not offered on intercommunicators, but a revoked one says it is revoked
     * (as ULFM's tests expect). */
    EXPECT(MPI_Barrier(inter), MPIX_ERR_REVOKED);

    /* Free. */
    MPI_Comm stale = inter;
    OK(MPI_Comm_free(&inter));
    CHECK(inter == MPI_COMM_NULL, "freed handle not reset");
    EXPECT(MPI_Comm_size(stale, &n), MPI_ERR_COMM);
    EXPECT(MPI_Send(&rank, 1, MPI_INT, 0, 8, stale), MPI_ERR_COMM);

    OK(MPI_Group_free(&remote));
    OK(MPI_Group_free(&world_group));
    OK(MPI_Group_free(&local_group));
    OK(MPI_Group_free(&inter_group));
    OK(MPI_Comm_free(&local));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Comm_idup and MPI_Comm_idup_with_info on 4 ranks: two pending on one communicator beside
 * a non-blocking all-reduce, a blocking MPI_Comm_dup and point-to-point traffic, completed in
 * different orders at different ranks (each request gives the same communicator everywhere:
 * what is sent on the first arrives on the first); attributes copied by their callbacks, and a
 * failing copy callback (the request fails, *newcomm is MPI_COMM_NULL); the dup of an
 * intercommunicator (blocking and not), with its groups and traffic; wrong use (NULL
 * arguments, a bad info, freeing or cancelling the request). Then rank 3 dies: an idup fails
 * with MPIX_ERR_PROC_FAILED at every survivor until the failure is validated, then works. */
#include "ft_common.h"

#include <string.h>

static int bomb_calls = 0;

static int failing_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag) {
    (void)comm;
    (void)key;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    bomb_calls++;
    return MPI_ERR_OTHER;
}

/* Each rank sends `base + rank` to the next rank on `comm` (tag 0); returns what the previous
 * rank sent. */
static int ring(MPI_Comm comm, int base) {
    int rank, size, got = -1, mine;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mine = base + rank;
    OK(MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 0, comm, MPI_STATUS_IGNORE));
    return got;
}

int main(int argc, char **argv) {
    int rank, size, flag, result;
    MPI_Comm first, second, third, copy, half, inter, inter_dup, inter_idup;
    MPI_Request reqs[3], req;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    int previous = (rank + size - 1) % size;

    /* Two pending idups, an iallreduce and a blocking dup beside them. */
    int one = 1, sum = 0;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &first, &reqs[0]));
    OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &second, &reqs[1]));
    OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[2]));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &third));
    CHECK(ring(MPI_COMM_WORLD, 500) == 500 + previous, "world traffic while pending");
    if (rank % 2) {
        OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
        OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
        OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    }
    CHECK(sum == size, "iallreduce beside the idups: %d", sum);
    CHECK(first != MPI_COMM_NULL && second != MPI_COMM_NULL && first != second, "handles");
    OK(MPI_Comm_compare(first, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_CONGRUENT, "idup compares congruent: %d", result);
    /* Messages in flight on all three at once: each arrives on its own communicator. */
    int mine[3] = {100 + rank, 200 + rank, 300 + rank}, got[3] = {-1, -1, -1};
    MPI_Comm comms[3] = {first, second, third};
    MPI_Request sends[3], recvs[3];
    for (int i = 0; i < 3; i++)
        OK(MPI_Isend(&mine[i], 1, MPI_INT, (rank + 1) % size, 0, comms[i], &sends[i]));
    for (int i = 2; i >= 0; i--)
        OK(MPI_Irecv(&got[i], 1, MPI_INT, previous, 0, comms[i], &recvs[i]));
    OK(MPI_Waitall(3, sends, MPI_STATUSES_IGNORE));
    OK(MPI_Waitall(3, recvs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK(got[i] == 100 * (i + 1) + previous, "communicator %d got %d", i, got[i]);
    OK(MPI_Comm_free(&third));
    OK(MPI_Comm_free(&second));

    /* Attributes: MPI_COMM_DUP_FN copies the value; a failing callback fails the request. */
    int key_dup, key_bomb;
    void *value;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL));
    OK(MPI_Comm_set_attr(first, key_dup, (void *)42));
    OK(MPI_Comm_idup(first, &copy, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Comm_get_attr(copy, key_dup, &value, &flag));
    CHECK(flag == 1 && value == (void *)42, "attribute copied: %d %p", flag, value);
    OK(MPI_Comm_free(&copy));
    OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &key_bomb, NULL));
    OK(MPI_Comm_set_attr(first, key_bomb, (void *)7));
    copy = MPI_COMM_WORLD;
    OK(MPI_Comm_idup(first, &copy, &req));
    EXPECT(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
    CHECK(copy == MPI_COMM_NULL && bomb_calls == 1, "failing copy: %d, %d calls", copy,
          bomb_calls);
    OK(MPI_Comm_delete_attr(first, key_bomb));
    OK(MPI_Comm_free_keyval(&key_bomb));
    OK(MPI_Comm_free_keyval(&key_dup));

    /* Wrong use. */
    EXPECT(MPI_Comm_idup(first, NULL, &req), MPI_ERR_ARG);
    EXPECT(MPI_Comm_idup(first, &copy, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_idup_with_info(first, 12345, &copy, &req), MPI_ERR_INFO);
    EXPECT(MPI_Comm_idup(MPI_COMM_NULL, &copy, &req), MPI_ERR_COMM);
    OK(MPI_Comm_idup(first, &copy, &req));
    MPI_Request kept = req;
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(&kept), MPI_ERR_REQUEST);
    OK(MPI_Wait(&kept, MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&copy));
    OK(MPI_Comm_free(&first));

    /* An intercommunicator between the even and the odd ranks, duplicated two ways. */
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
    OK(MPI_Comm_dup(inter, &inter_dup));
    OK(MPI_Comm_idup(inter, &inter_idup, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Comm inters[2] = {inter_dup, inter_idup};
    for (int i = 0; i < 2; i++) {
        int local, remote, me;
        OK(MPI_Comm_test_inter(inters[i], &flag));
        OK(MPI_Comm_size(inters[i], &local));
        OK(MPI_Comm_remote_size(inters[i], &remote));
        OK(MPI_Comm_rank(inters[i], &me));
        CHECK(flag == 1 && local == 2 && remote == 2 && me == rank / 2, "inter dup %d", i);
        OK(MPI_Comm_compare(inters[i], inter, &result));
        CHECK(result == MPI_CONGRUENT, "inter dup %d compares %d", i, result);
    }
    /* Local rank r sends to remote rank r on each; the one on the other dup arrives there. */
    int out[2] = {10 + rank, 20 + rank}, in[2] = {-1, -1};
    for (int i = 0; i < 2; i++)
        OK(MPI_Isend(&out[i], 1, MPI_INT, rank / 2, 3, inters[i], &sends[i]));
    for (int i = 1; i >= 0; i--)
        OK(MPI_Irecv(&in[i], 1, MPI_INT, rank / 2, 3, inters[i], &recvs[i]));
    OK(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
    OK(MPI_Waitall(2, recvs, MPI_STATUSES_IGNORE));
    int partner = rank % 2 ? rank - 1 : rank + 1;
    CHECK(in[0] == 10 + partner && in[1] == 20 + partner, "inter traffic %d %d", in[0], in[1]);
    OK(MPI_Comm_free(&inter_idup));
    OK(MPI_Comm_free(&inter_dup));
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));

    /* Rank 3 dies; until it is validated an idup fails everywhere, then it works. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    copy = MPI_COMM_WORLD;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &copy, &req));
    EXPECT(MPI_Wait(&req, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    CHECK(copy == MPI_COMM_NULL, "a failed idup gives MPI_COMM_NULL");
    int failed = 0;
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "validated %d failures", failed);
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &copy, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int total = 0, me = rank;
    OK(MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, copy));
    CHECK(total == 0 + 1 + 2, "all-reduce on the idup after the failure: %d", total);
    OK(MPI_Comm_free(&copy));
    return ft_finish();
}

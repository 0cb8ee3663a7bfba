/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Non-blocking collectives that the rank's engine runs itself (MPI_Ibarrier, and MPI_Ibcast,
 * MPI_Ireduce, MPI_Iallreduce, MPI_Iscan, MPI_Iexscan on basic datatypes; the gathers,
 * scatters and all-to-alls are tested in nonblocking_blocks.c), on 3 ranks:
 * - buffers at every misalignment (doubles at byte offsets 1..7 of a char array), with and
 *   without MPI_IN_PLACE, results checked bit for bit and the bytes around them untouched;
 * - a broadcast of a strided datatype (packed at the root, unpacked elsewhere);
 * - call order kept when they mix with all-reduces with a user operation (whose function runs
 *   outside the engine, on a thread inside the library): ranks 1 and 2 start two such calls,
 *   whose first waits for rank 0, then an MPI_Iallreduce, then an MPI_Ibarrier; rank 0 starts
 *   the same four only after rank 1 has started them, and completes its first two before its
 *   all-reduce. Each call must receive its own messages only (the calls are numbered in the
 *   order they start, at every rank alike);
 * - the same beside a 64 KiB all-reduce (the ring, several messages along each pair), and
 *   where ranks start an MPIX_Comm_iagree at different places (below);
 * - a user operation's step runs while its rank is blocked in another call (MPI_Recv);
 * - MPI_Test until done, and MPI_Request_free and MPI_Cancel refused on a pending one. */
#include "ft_common.h"

#include <string.h>

#define P 3
#define N 5

/* Element i of rank r's vector. */
static double value(int r, int i) { return 0.25 * (r + 1) + 1000.0 * i; }

/* A user operation (a sum of ints): its function runs outside the engine. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* A 64 KiB all-reduce's buffers: a ring as a blocking call, recursive doubling as a schedule. */
enum { BIG = 16384 };
static int big[BIG], big_sum[BIG];

static void fill_big(int rank) {
    for (int i = 0; i < BIG; i++) {
        big[i] = rank + i;
        big_sum[i] = -1;
    }
}

static void check_big(const char *what) {
    for (int i = 0; i < BIG; i++)
        CHECK(big_sum[i] == 3 + 3 * i, "64 KiB Iallreduce %s [%d] = %d", what, i, big_sum[i]);
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == P, "run on %d ranks", P);

    /* Every misalignment, both buffers, in place or not. */
    for (int offset = 0; offset < 8; offset++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            unsigned char send[8 + N * sizeof(double) + 8], recv[8 + N * sizeof(double) + 8];
            memset(send, 0xA5, sizeof send);
            memset(recv, 0x5A, sizeof recv);
            for (int i = 0; i < N; i++) {
                double v = value(rank, i);
                memcpy((in_place ? recv : send) + offset + i * sizeof(double), &v, sizeof v);
            }
            MPI_Request r;
            OK(MPI_Iallreduce(in_place ? MPI_IN_PLACE : (void *)(send + offset), recv + offset,
                              N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(r == MPI_REQUEST_NULL, "request not released");
            for (int i = 0; i < N; i++) {
                double got, want = (value(0, i) + value(1, i)) + value(2, i);
                memcpy(&got, recv + offset + i * sizeof(double), sizeof got);
                CHECK(got == want, "offset %d in place %d: sum[%d] = %.17g, want %.17g", offset,
                      in_place, i, got, want);
            }
            for (int b = 0; b < offset; b++)
                CHECK(recv[b] == 0x5A, "offset %d: byte %d before the buffer written", offset, b);
            for (size_t b = offset + N * sizeof(double); b < sizeof recv; b++)
                CHECK(recv[b] == 0x5A, "offset %d: byte %zu after the buffer written", offset,
                      b);

            /* A reduce to rank 1 (in place there), MAX of int64. */
            long long mine = 10 * rank + offset, top = -1;
            unsigned char out[8 + sizeof top];
            memset(out, 0x5A, sizeof out);
            memcpy(out + offset, rank == 1 && in_place ? &mine : &top, sizeof top);
            OK(MPI_Ireduce(rank == 1 && in_place ? MPI_IN_PLACE : (void *)&mine, out + offset, 1,
                           MPI_LONG_LONG, MPI_MAX, 1, MPI_COMM_WORLD, &r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            memcpy(&top, out + offset, sizeof top);
            if (rank == 1)
                CHECK(top == 20 + offset, "Ireduce MAX %lld", top);
            else
                CHECK(top == -1, "Ireduce wrote a non-root's buffer: %lld", top);

            /* Inclusive and exclusive prefix sums of int64 (in place or not). */
            for (int exclusive = 0; exclusive < 2; exclusive++) {
                long long term = 100 + rank, prefix;
                unsigned char at[8 + sizeof prefix];
                memset(at, 0x5A, sizeof at);
                memcpy(at + offset, in_place ? &term : &top, sizeof term);
                void *send = in_place ? MPI_IN_PLACE : (void *)&term;
                if (exclusive)
                    OK(MPI_Iexscan(send, at + offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD,
                                   &r));
                else
                    OK(MPI_Iscan(send, at + offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD,
                                 &r));
                OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                memcpy(&prefix, at + offset, sizeof prefix);
                long long want = 0;
                for (int q = 0; q < rank + !exclusive; q++)
                    want += 100 + q;
                if (exclusive && rank == 0)
                    want = in_place ? term : top; /* left as it was */
                CHECK(prefix == want, "offset %d in place %d exclusive %d: prefix %lld, want %lld",
                      offset, in_place, exclusive, prefix, want);
                for (int b = 0; b < offset; b++)
                    CHECK(at[b] == 0x5A, "prefix: byte %d before the buffer written", b);
            }

            /* A broadcast of doubles from rank 2. */
            unsigned char bc[8 + N * sizeof(double)];
            memset(bc, 0x5A, sizeof bc);
            if (rank == 2)
                for (int i = 0; i < N; i++) {
                    double v = value(7, i);
                    memcpy(bc + offset + i * sizeof(double), &v, sizeof v);
                }
            OK(MPI_Ibcast(bc + offset, N, MPI_DOUBLE, 2, MPI_COMM_WORLD, &r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int i = 0; i < N; i++) {
                double got;
                memcpy(&got, bc + offset + i * sizeof(double), sizeof got);
                CHECK(got == value(7, i), "Ibcast[%d] = %g", i, got);
            }
        }
    }

    /* A broadcast of a strided datatype: packed at the root, unpacked elsewhere, the gaps
     * left as they were. */
    MPI_Datatype every_other;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int strided[3] = {rank == 1 ? 100 : -1, -5, rank == 1 ? 102 : -1};
    MPI_Request sb;
    OK(MPI_Ibcast(strided, 1, every_other, 1, MPI_COMM_WORLD, &sb));
    OK(MPI_Wait(&sb, MPI_STATUS_IGNORE));
    CHECK(strided[0] == 100 && strided[1] == -5 && strided[2] == 102,
          "strided broadcast %d %d %d", strided[0], strided[1], strided[2]);
    OK(MPI_Type_free(&every_other));

    /* Pair and derived datatypes with predefined operations, run by the engine too: each
     * result equal to the blocking call's. MINLOC / MAXLOC of (double, int) and (int, int)
     * pairs, ties going to the smaller index; sums of a strided vector of doubles (its gaps
     * left as they were), inclusive and exclusive, in place or not. */
    {
        struct {
            double value;
            int index;
        } mine_p[2], lo[2], lo_blocking[2];
        for (int k = 0; k < 2; k++) {
            mine_p[k].value = k == 0 ? (double)(rank % 2) : -0.5 * rank;
            mine_p[k].index = 10 * rank + k;
            lo[k] = lo_blocking[k] = mine_p[k];
        }
        MPI_Request q;
        OK(MPI_Iallreduce(MPI_IN_PLACE, lo, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Allreduce(MPI_IN_PLACE, lo_blocking, 2, MPI_DOUBLE_INT, MPI_MINLOC,
                         MPI_COMM_WORLD));
        for (int k = 0; k < 2; k++)
            CHECK(lo[k].value == lo_blocking[k].value && lo[k].index == lo_blocking[k].index,
                  "Iallreduce MINLOC[%d]: %g %d", k, lo[k].value, lo[k].index);
        /* Ties at value 0 (ranks 0 and 2): the smaller index. */
        CHECK(lo[0].value == 0.0 && lo[0].index == 0, "MINLOC tie: %g %d", lo[0].value,
              lo[0].index);
        CHECK(lo[1].value == -1.0 && lo[1].index == 21, "MINLOC: %g %d", lo[1].value,
              lo[1].index);

        int pair_in[2] = {rank == 1 ? 5 : 3 * rank, rank}, top[2] = {-1, -1};
        OK(MPI_Ireduce(pair_in, top, 1, MPI_2INT, MPI_MAXLOC, 1, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (rank == 1)
            CHECK(top[0] == 6 && top[1] == 2, "Ireduce MAXLOC: %d %d", top[0], top[1]);
        else
            CHECK(top[0] == -1 && top[1] == -1, "Ireduce wrote a non-root's pair");

        MPI_Datatype strided_doubles;
        OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided_doubles));
        OK(MPI_Type_commit(&strided_doubles));
        for (int exclusive = 0; exclusive < 2; exclusive++)
            for (int in_place = 0; in_place < 2; in_place++) {
                double send_d[5], got[5], want[5];
                for (int k = 0; k < 5; k++) {
                    send_d[k] = k % 2 ? -9.0 : rank + 0.5 * k;
                    got[k] = want[k] = in_place ? send_d[k] : -7.0;
                }
                const void *send = in_place ? MPI_IN_PLACE : (const void *)send_d;
                if (exclusive) {
                    OK(MPI_Iexscan(send, got, 1, strided_doubles, MPI_SUM, MPI_COMM_WORLD, &q));
                    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
                    OK(MPI_Exscan(send, want, 1, strided_doubles, MPI_SUM, MPI_COMM_WORLD));
                } else {
                    OK(MPI_Iscan(send, got, 1, strided_doubles, MPI_SUM, MPI_COMM_WORLD, &q));
                    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
                    OK(MPI_Scan(send, want, 1, strided_doubles, MPI_SUM, MPI_COMM_WORLD));
                }
                for (int k = 0; k < 5; k++)
                    CHECK(got[k] == want[k], "exclusive %d in place %d: [%d] %g, blocking %g",
                          exclusive, in_place, k, got[k], want[k]);
                CHECK(got[1] == (in_place ? -9.0 : -7.0), "a gap was written: %g", got[1]);
                if (!exclusive)
                    CHECK(got[2] == (rank + 1) * (rank + 2) / 2.0 - (rank + 1) + (rank + 1) * 1.0,
                          "Iscan [2] = %g", got[2]);
            }
        OK(MPI_Type_free(&strided_doubles));
    }

    /* An exclusive scan whose rank 0 passes no receive buffer (MPI does not look at it
     * there), blocking and not, of ints and of pairs: rank 0 must take part as the others do
     * (a rank that refused the NULL buffer would leave the others waiting). */
    {
        int term = rank + 1, below = -1;
        int *at = rank == 0 ? NULL : &below;
        MPI_Request q;
        OK(MPI_Iexscan(&term, at, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (rank > 0)
            CHECK(below == rank * (rank + 1) / 2, "Iexscan with NULL at rank 0: %d", below);
        below = -1;
        OK(MPI_Exscan(&term, at, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (rank > 0)
            CHECK(below == rank * (rank + 1) / 2, "Exscan with NULL at rank 0: %d", below);
        int pair[2] = {10 - rank, rank}, low[2] = {-1, -1};
        OK(MPI_Iexscan(pair, rank == 0 ? NULL : low, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD,
                       &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (rank > 0)
            CHECK(low[0] == 11 - rank && low[1] == rank - 1, "Iexscan MINLOC: %d %d", low[0],
                  low[1]);
    }

    /* The reduce-scatters: ints with blocks of one length; counts 1, 0, 2 in place; a strided
     * vector of doubles; (double, int) pairs with MAXLOC. Each equal to the blocking call. */
    {
        MPI_Request q;
        int whole[2 * P], block[2], block_blocking[2];
        for (int k = 0; k < 2 * P; k++)
            whole[k] = 10 * k + rank;
        OK(MPI_Ireduce_scatter_block(whole, block, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Reduce_scatter_block(whole, block_blocking, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(block[0] == block_blocking[0] && block[1] == block_blocking[1] &&
                  block[0] == 30 * 2 * rank + 3,
              "Ireduce_scatter_block: %d %d", block[0], block[1]);

        int rs_counts[P] = {1, 0, 2};
        long in_place[3], in_place_blocking[3];
        for (int k = 0; k < 3; k++)
            in_place[k] = in_place_blocking[k] = 100 * k + rank;
        OK(MPI_Ireduce_scatter(MPI_IN_PLACE, in_place, rs_counts, MPI_LONG, MPI_MAX,
                               MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Reduce_scatter(MPI_IN_PLACE, in_place_blocking, rs_counts, MPI_LONG, MPI_MAX,
                              MPI_COMM_WORLD));
        for (int k = 0; k < rs_counts[rank]; k++)
            CHECK(in_place[k] == in_place_blocking[k], "Ireduce_scatter in place [%d]: %ld %ld",
                  k, in_place[k], in_place_blocking[k]);
        if (rank == 2)
            CHECK(in_place[0] == 102 && in_place[1] == 202, "Ireduce_scatter MAX: %ld %ld",
                  in_place[0], in_place[1]);

        MPI_Datatype gapped;
        OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &gapped)); /* extent: 3 doubles */
        OK(MPI_Type_commit(&gapped));
        double dsend[3 * P], dgot[3], dwant[3];
        for (int k = 0; k < 3 * P; k++)
            dsend[k] = k % 3 == 1 ? -9.0 : k + 0.5 * rank;
        for (int k = 0; k < 3; k++)
            dgot[k] = dwant[k] = -7.0;
        OK(MPI_Ireduce_scatter_block(dsend, dgot, 1, gapped, MPI_SUM, MPI_COMM_WORLD, &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Reduce_scatter_block(dsend, dwant, 1, gapped, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < 3; k++)
            CHECK(dgot[k] == dwant[k], "strided Ireduce_scatter_block [%d]: %g %g", k, dgot[k],
                  dwant[k]);
        CHECK(dgot[1] == -7.0 && dgot[0] == 3 * (3 * rank) + 1.5, "strided: %g %g", dgot[0],
              dgot[1]);
        OK(MPI_Type_free(&gapped));

        struct {
            double value;
            int index;
        } pairs[P], top, top_blocking;
        for (int k = 0; k < P; k++) {
            pairs[k].value = (double)((k + rank) % P);
            pairs[k].index = rank;
        }
        OK(MPI_Ireduce_scatter_block(pairs, &top, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD,
                                     &q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Reduce_scatter_block(pairs, &top_blocking, 1, MPI_DOUBLE_INT, MPI_MAXLOC,
                                    MPI_COMM_WORLD));
        CHECK(top.value == top_blocking.value && top.index == top_blocking.index &&
                  top.value == P - 1 && top.index == (2 * P - 1 - rank) % P,
              "Ireduce_scatter_block MAXLOC: %g %d", top.value, top.index);
    }

    /* Order with all-reduces with a user operation. */
    MPI_Op user_op_sum;
    OK(MPI_Op_create(user_sum, 1, &user_op_sum));
    int first = -1, second = -1;
    int mine_v = 7 * rank, one = rank + 1, sum = -1, token = 7;
    MPI_Request req[4];
    if (rank == 0) {
        /* Its two user-operation calls are done before its all-reduce starts. */
        OK(MPI_Recv(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Iallreduce(&mine_v, &first, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &req[0]));
        OK(MPI_Iallreduce(&one, &second, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &req[1]));
        OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]));
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[3]));
        OK(MPI_Waitall(2, req + 2, MPI_STATUSES_IGNORE));
    } else {
        /* The first waits for rank 0, which waits for rank 1's token: both are pending when
         * the all-reduce and the barrier start. */
        OK(MPI_Iallreduce(&mine_v, &first, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &req[0]));
        OK(MPI_Iallreduce(&one, &second, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &req[1]));
        OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]));
        OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[3]));
        if (rank == 1)
            OK(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        OK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    }
    CHECK(first == 7 * (0 + 1 + 2) && second == 1 + 2 + 3, "user-op all-reduces: %d %d", first,
          second);
    CHECK(sum == P * (P + 1) / 2, "Iallreduce after the user-op calls: %d", sum);

    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Ranks 1 and 2 start an all-reduce with a user operation, which waits for rank 0, then
     * a 64 KiB all-reduce (the ring: several messages along each pair); rank 0 starts them
     * only after rank 1 did, and its user-op all-reduce has completed when it starts its
     * all-reduce. */
    {
        fill_big(rank);
        int all_v = -1;
        MPI_Request c[2];
        if (rank == 0) {
            OK(MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Iallreduce(&mine_v, &all_v, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &c[0]));
            OK(MPI_Wait(&c[0], MPI_STATUS_IGNORE));
            OK(MPI_Iallreduce(big, big_sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &c[1]));
            OK(MPI_Wait(&c[1], MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Iallreduce(&mine_v, &all_v, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &c[0]));
            OK(MPI_Iallreduce(big, big_sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &c[1]));
            if (rank == 1)
                OK(MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            OK(MPI_Waitall(2, c, MPI_STATUSES_IGNORE));
        }
        CHECK(all_v == 21, "user-op all-reduce: %d", all_v);
        check_big("beside user-op calls");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* An agreement, which ranks may start at different places among the collectives: all
     * ranks start an all-reduce with a user operation, then rank 0 starts an MPIX_Comm_iagree
     * before its 64 KiB all-reduce and the others after theirs. */
    {
        fill_big(rank);
        int all_v = -1, flag = 1;
        MPI_Request a[3];
        OK(MPI_Iallreduce(&mine_v, &all_v, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &a[0]));
        if (rank == 0) {
            OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &a[1]));
            OK(MPI_Iallreduce(big, big_sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &a[2]));
        } else {
            OK(MPI_Iallreduce(big, big_sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &a[2]));
            OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &a[1]));
        }
        OK(MPI_Waitall(3, a, MPI_STATUSES_IGNORE));
        CHECK(flag == 1, "iagree gave %d", flag);
        CHECK(all_v == 21, "user-op all-reduce before an iagree: %d", all_v);
        check_big("around an iagree");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* A user operation's step progresses while its rank waits for something else: at 3
     * ranks, rank 1 combines rank 0's contribution before it exchanges with rank 2. Rank 1
     * then blocks in MPI_Recv for a message that rank 2 sends only once its all-reduce is
     * done: the combine must run inside that MPI_Recv (the test hangs otherwise). */
    {
        int all_v = -1;
        MPI_Request u;
        OK(MPI_Iallreduce(&mine_v, &all_v, 1, MPI_INT, user_op_sum, MPI_COMM_WORLD, &u));
        if (rank == 1) {
            OK(MPI_Recv(&token, 1, MPI_INT, 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Wait(&u, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Wait(&u, MPI_STATUS_IGNORE));
            if (rank == 2)
                OK(MPI_Send(&token, 1, MPI_INT, 1, 8, MPI_COMM_WORLD));
        }
        CHECK(all_v == 21, "user-op all-reduce beside a blocked receive: %d", all_v);
    }
    OK(MPI_Op_free(&user_op_sum));

    /* MPI_Test until done; freeing or cancelling a pending one is refused. Rank 0 enters the
     * barrier only once both others have tried, so theirs is pending while they do. */
    MPI_Request b;
    if (rank == 0) {
        OK(MPI_Recv(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&token, 1, MPI_INT, 2, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &b));
    if (rank != 0) {
        int flag = 1;
        OK(MPI_Test(&b, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a barrier completed before rank 0 entered it");
        MPI_Request copy = b;
        EXPECT(MPI_Request_free(&copy), MPI_ERR_REQUEST);
        EXPECT(MPI_Cancel(&b), MPI_ERR_REQUEST);
        OK(MPI_Send(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
    }
    int done = 0;
    while (!done)
        OK(MPI_Test(&b, &done, MPI_STATUS_IGNORE));
    CHECK(b == MPI_REQUEST_NULL, "a completed barrier's request not released");
    return ft_finish();
}

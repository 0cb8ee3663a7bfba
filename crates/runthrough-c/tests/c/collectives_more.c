/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Allgather, MPI_Gatherv, MPI_Scatterv, MPI_Alltoall, MPI_Scan, MPI_Exscan without
 * failures: the values, MPI_IN_PLACE wherever MPI allows it (also for Allreduce, Reduce and
 * Gather at the root), several datatypes and roots, and bad input (the same at every rank, so
 * that no rank is left waiting): NULL buffers with count > 0, negative counts, a bad root, a bad
 * communicator, a bad datatype or operation, negative displacements. */
#include "ft_common.h"

#include <string.h>

#define MAXR 16

static void check_allgather(int rank, int size) {
    int mine[2] = {rank, 100 + rank}, all[2 * MAXR];
    for (int i = 0; i < 2 * size; i++)
        all[i] = -1;
    OK(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(all[2 * r] == r && all[2 * r + 1] == 100 + r, "allgather slot %d: %d %d", r,
              all[2 * r], all[2 * r + 1]);
    /* In place: each rank's block is already in its slot. */
    double d[MAXR];
    for (int r = 0; r < size; r++)
        d[r] = r == rank ? 0.5 * rank : -1.0;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, d, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(d[r] == 0.5 * r, "allgather in place slot %d: %g", r, d[r]);
    /* Bytes as chars: a send block of 4 chars is a receive block of one int's size in bytes. */
    char c[4] = {'a', 'b', 'c', (char)('0' + rank)}, cs[4 * MAXR];
    OK(MPI_Allgather(c, 4, MPI_CHAR, cs, 4, MPI_BYTE, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        CHECK(memcmp(cs + 4 * r, "abc", 3) == 0 && cs[4 * r + 3] == '0' + r, "bytes %d", r);
    /* Zero-sized blocks. */
    OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    /* Bad input. */
    EXPECT(MPI_Allgather(NULL, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Allgather(mine, 2, MPI_INT, NULL, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Allgather(mine, -1, MPI_INT, all, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Allgather(mine, 2, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Allgather(mine, 2, 999, all, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, 12345), MPI_ERR_COMM);
}

static void check_gather_in_place(int rank, int size) {
    int all[MAXR];
    if (rank == 2) {
        for (int r = 0; r < size; r++)
            all[r] = r == 2 ? 42 : -1;
        OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, all, 1, MPI_INT, 2, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            CHECK(all[r] == (r == 2 ? 42 : 10 * r), "gather in place slot %d: %d", r, all[r]);
    } else {
        int mine = 10 * rank;
        OK(MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_INT, 2, MPI_COMM_WORLD));
    }
}

static void check_gatherv(int rank, int size) {
    /* Rank r sends r + 1 ints valued 1000·r + i; the root lays them out backwards with gaps. */
    int counts[MAXR], displs[MAXR], mine[MAXR], all[MAXR * MAXR];
    int n = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = r + 1;
        displs[r] = n + 1; /* one slot of gap before each block */
        n += r + 2;
    }
    for (int i = 0; i <= rank; i++)
        mine[i] = 1000 * rank + i;
    for (int root = 0; root < size; root += 3) {
        for (int i = 0; i < n; i++)
            all[i] = -7;
        OK(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, root,
                       MPI_COMM_WORLD));
        if (rank == root) {
            for (int r = 0; r < size; r++) {
                CHECK(all[displs[r] - 1] == -7, "gatherv gap before %d touched", r);
                for (int i = 0; i <= r; i++)
                    CHECK(all[displs[r] + i] == 1000 * r + i, "gatherv root %d rank %d [%d]: %d",
                          root, r, i, all[displs[r] + i]);
            }
        }
    }
    /* In place at the root (rank 1): its block is already at displs[1]. */
    for (int i = 0; i < n; i++)
        all[i] = -7;
    if (rank == 1) {
        all[displs[1]] = 77;
        all[displs[1] + 1] = 78;
        OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, all, counts, displs, MPI_INT, 1,
                       MPI_COMM_WORLD));
        CHECK(all[displs[1]] == 77 && all[displs[1] + 1] == 78, "gatherv in place kept");
        CHECK(all[displs[0]] == 0 && all[displs[size - 1]] == 1000 * (size - 1),
              "gatherv in place others");
    } else {
        /* Elsewhere the receive arguments are ignored. */
        OK(MPI_Gatherv(mine, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 1, MPI_COMM_WORLD));
    }
    /* Zero counts at some ranks. */
    int zero_counts[MAXR], zero_displs[MAXR];
    for (int r = 0; r < size; r++) {
        zero_counts[r] = r % 2;
        zero_displs[r] = r;
    }
    for (int i = 0; i < n; i++)
        all[i] = -7;
    OK(MPI_Gatherv(mine, rank % 2, MPI_INT, all, zero_counts, zero_displs, MPI_INT, 0,
                   MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            CHECK(all[r] == (r % 2 ? 1000 * r : -7), "gatherv zero counts %d: %d", r, all[r]);
    /* Bad input, the same at every rank. */
    EXPECT(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, size,
                       MPI_COMM_WORLD),
           MPI_ERR_ROOT);
    EXPECT(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, -3,
                       MPI_COMM_WORLD),
           MPI_ERR_ROOT);
    EXPECT(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_NULL),
           MPI_ERR_COMM);
    if (rank == 0) {
        /* Only the root reads the arrays, so bad ones fail at the root alone: tried on
         * MPI_COMM_SELF, where no other rank takes part. */
        EXPECT(MPI_Gatherv(mine, 1, MPI_INT, all, NULL, displs, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_ARG);
        EXPECT(MPI_Gatherv(mine, 1, MPI_INT, all, counts, NULL, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_ARG);
        int neg[1] = {-1}, one[1] = {1}, zero[1] = {0};
        EXPECT(MPI_Gatherv(mine, 1, MPI_INT, all, neg, zero, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_COUNT);
        /* A negative displacement is MPI: the block lies before the buffer pointer. */
        int before[3] = {-7, -7, -7}, own = 4242;
        OK(MPI_Gatherv(&own, 1, MPI_INT, before + 2, one, neg, MPI_INT, 0, MPI_COMM_SELF));
        CHECK(before[0] == -7 && before[1] == 4242 && before[2] == -7,
              "gatherv at displacement -1: %d %d %d", before[0], before[1], before[2]);
        EXPECT(MPI_Gatherv(mine, 1, MPI_INT, NULL, one, zero, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_BUFFER);
        EXPECT(MPI_Gatherv(NULL, 1, MPI_INT, all, one, zero, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_BUFFER);
        /* A block that does not fit its count. */
        EXPECT(MPI_Gatherv(mine, 1, MPI_INT, all, zero, zero, MPI_INT, 0, MPI_COMM_SELF),
               MPI_ERR_COUNT);
        /* And the same call right works on MPI_COMM_SELF. */
        all[3] = -1;
        OK(MPI_Gatherv(mine, 1, MPI_INT, all, one, (int[]){3}, MPI_INT, 0, MPI_COMM_SELF));
        CHECK(all[3] == mine[0], "gatherv on self: %d", all[3]);
    }
}

static void check_scatterv(int rank, int size) {
    /* The root holds blocks of r + 1 doubles for rank r, in reverse order. */
    int counts[MAXR], displs[MAXR], n = 0;
    double all[MAXR * MAXR], mine[MAXR];
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = r + 1;
        displs[r] = n;
        for (int i = 0; i <= r; i++)
            all[n + i] = 10.0 * r + i;
        n += r + 1;
    }
    for (int root = size - 1; root >= 0; root -= 2) {
        for (int i = 0; i < MAXR; i++)
            mine[i] = -1.0;
        OK(MPI_Scatterv(rank == root ? all : NULL, counts, displs, MPI_DOUBLE, mine, rank + 1,
                        MPI_DOUBLE, root, MPI_COMM_WORLD));
        for (int i = 0; i <= rank; i++)
            CHECK(mine[i] == 10.0 * rank + i, "scatterv root %d [%d]: %g", root, i, mine[i]);
        CHECK(mine[rank + 1] == -1.0, "scatterv wrote past the block");
    }
    /* In place at the root: it receives nothing. */
    if (rank == 0) {
        OK(MPI_Scatterv(all, counts, displs, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DOUBLE, 0,
                        MPI_COMM_WORLD));
        CHECK(all[displs[0]] == 0.0 && all[displs[size - 1]] == 10.0 * (size - 1),
              "scatterv in place changed the send buffer");
    } else {
        OK(MPI_Scatterv(NULL, NULL, NULL, MPI_DOUBLE, mine, rank + 1, MPI_DOUBLE, 0,
                        MPI_COMM_WORLD));
        CHECK(mine[rank] == 10.0 * rank + rank, "scatterv (in place root) %d", rank);
    }
    /* Bad input, the same at every rank. */
    EXPECT(MPI_Scatterv(all, counts, displs, MPI_DOUBLE, mine, rank + 1, MPI_DOUBLE, size,
                        MPI_COMM_WORLD),
           MPI_ERR_ROOT);
    EXPECT(MPI_Scatterv(all, counts, displs, MPI_DOUBLE, mine, rank + 1, MPI_DOUBLE, 0, 777),
           MPI_ERR_COMM);
    if (rank == 0) {
        int neg[1] = {-1}, one[1] = {1}, zero[1] = {0};
        EXPECT(MPI_Scatterv(all, NULL, zero, MPI_DOUBLE, mine, 1, MPI_DOUBLE, 0, MPI_COMM_SELF),
               MPI_ERR_ARG);
        /* A negative displacement is MPI: the block lies before the buffer pointer. */
        double from[2] = {1.5, 2.5}, got = -1.0;
        OK(MPI_Scatterv(from + 1, one, neg, MPI_DOUBLE, &got, 1, MPI_DOUBLE, 0, MPI_COMM_SELF));
        CHECK(got == 1.5, "scatterv from displacement -1: %g", got);
        EXPECT(MPI_Scatterv(all, neg, zero, MPI_DOUBLE, mine, 1, MPI_DOUBLE, 0, MPI_COMM_SELF),
               MPI_ERR_COUNT);
        EXPECT(MPI_Scatterv(NULL, one, zero, MPI_DOUBLE, mine, 1, MPI_DOUBLE, 0, MPI_COMM_SELF),
               MPI_ERR_BUFFER);
        EXPECT(MPI_Scatterv(all, one, zero, MPI_DOUBLE, NULL, 1, MPI_DOUBLE, 0, MPI_COMM_SELF),
               MPI_ERR_BUFFER);
        EXPECT(MPI_Scatterv(all, one, zero, 999, mine, 1, MPI_DOUBLE, 0, MPI_COMM_SELF),
               MPI_ERR_TYPE);
        OK(MPI_Scatterv(all, one, (int[]){2}, MPI_DOUBLE, mine, 1, MPI_DOUBLE, 0,
                        MPI_COMM_SELF));
        CHECK(mine[0] == all[2], "scatterv on self");
    }
}

static void check_alltoall(int rank, int size) {
    /* Block for rank r from rank s: {100·s + r, -(100·s + r)}. */
    long send[2 * MAXR], recv[2 * MAXR];
    for (int r = 0; r < size; r++) {
        send[2 * r] = 100 * rank + r;
        send[2 * r + 1] = -(100 * rank + r);
        recv[2 * r] = recv[2 * r + 1] = -1;
    }
    OK(MPI_Alltoall(send, 2, MPI_LONG, recv, 2, MPI_LONG, MPI_COMM_WORLD));
    for (int s = 0; s < size; s++)
        CHECK(recv[2 * s] == 100 * s + rank && recv[2 * s + 1] == -(100 * s + rank),
              "alltoall from %d: %ld %ld", s, recv[2 * s], recv[2 * s + 1]);
    /* In place. */
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, 2, MPI_LONG, MPI_COMM_WORLD));
    for (int s = 0; s < size; s++)
        CHECK(send[2 * s] == 100 * s + rank, "alltoall in place from %d: %ld", s, send[2 * s]);
    /* Large blocks (the pairwise algorithm). */
    enum { BIG = 600 };
    static int big_send[BIG * MAXR], big_recv[BIG * MAXR];
    for (int r = 0; r < size; r++)
        for (int i = 0; i < BIG; i++)
            big_send[BIG * r + i] = rank * 1000000 + r * 1000 + i;
    OK(MPI_Alltoall(big_send, BIG, MPI_INT, big_recv, BIG, MPI_INT, MPI_COMM_WORLD));
    for (int s = 0; s < size; s++)
        for (int i = 0; i < BIG; i++)
            CHECK(big_recv[BIG * s + i] == s * 1000000 + rank * 1000 + i, "big alltoall %d %d",
                  s, i);
    EXPECT(MPI_Alltoall(NULL, 2, MPI_LONG, recv, 2, MPI_LONG, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoall(send, 2, MPI_LONG, NULL, 2, MPI_LONG, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoall(send, 2, MPI_LONG, recv, 3, MPI_LONG, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoall(send, -2, MPI_LONG, recv, -2, MPI_LONG, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoall(send, 2, MPI_LONG, recv, 2, MPI_LONG, MPI_COMM_NULL), MPI_ERR_COMM);
}

static void check_scans(int rank, int size) {
    int v[2] = {rank + 1, 2}, s[2] = {-1, -1};
    OK(MPI_Scan(v, s, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s[0] == (rank + 1) * (rank + 2) / 2 && s[1] == 2 * (rank + 1), "scan sum: %d %d",
          s[0], s[1]);
    long long p = rank + 1, pp = 0;
    OK(MPI_Scan(&p, &pp, 1, MPI_LONG_LONG, MPI_PROD, MPI_COMM_WORLD));
    long long fact = 1;
    for (int i = 2; i <= rank + 1; i++)
        fact *= i;
    CHECK(pp == fact, "scan prod: %lld", pp);
    /* In place. */
    double d = rank == 0 ? 5.0 : (double)rank;
    OK(MPI_Scan(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(d == (rank <= 5 ? 5.0 : (double)rank), "scan max in place: %g", d);
    /* Exscan: rank 0's receive buffer is left as it was. */
    int e[2] = {-9, -9};
    OK(MPI_Exscan(v, e, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(e[0] == -9 && e[1] == -9, "exscan at rank 0 wrote %d %d", e[0], e[1]);
    else
        CHECK(e[0] == rank * (rank + 1) / 2 && e[1] == 2 * rank, "exscan sum: %d %d", e[0],
              e[1]);
    unsigned bits = 1u << rank;
    OK(MPI_Exscan(MPI_IN_PLACE, &bits, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(bits == 1u, "exscan in place at rank 0: %u", bits);
    else
        CHECK(bits == (1u << rank) - 1, "exscan bor in place: %u", bits);
    /* Bad input. */
    EXPECT(MPI_Scan(NULL, s, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Scan(v, NULL, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Scan(v, s, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Scan(v, s, 2, MPI_INT, 99, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Scan(v, s, 2, 999, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* (A NULL receive buffer is no error at rank 0 of an exclusive scan, where MPI does not
     * look at it: nonblocking_engine.c runs one.) */
    EXPECT(MPI_Exscan(v, e, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Exscan(v, e, 2, MPI_INT, MPI_SUM, 4242), MPI_ERR_COMM);
    EXPECT(MPI_Exscan(v, e, 2, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
}

static void check_reduce_in_place(int rank, int size) {
    int x[2] = {rank, 1};
    OK(MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(x[0] == size * (size - 1) / 2 && x[1] == size, "allreduce in place: %d %d", x[0],
          x[1]);
    float f = (float)rank;
    if (rank == size - 1) {
        OK(MPI_Reduce(MPI_IN_PLACE, &f, 1, MPI_FLOAT, MPI_MIN, size - 1, MPI_COMM_WORLD));
        CHECK(f == 0.0f, "reduce in place: %g", f);
    } else {
        OK(MPI_Reduce(&f, NULL, 1, MPI_FLOAT, MPI_MIN, size - 1, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 2 && size <= MAXR, "size %d", size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    check_allgather(rank, size);
    check_gather_in_place(rank, size);
    check_gatherv(rank, size);
    check_scatterv(rank, size);
    check_alltoall(rank, size);
    check_scans(rank, size);
    check_reduce_in_place(rank, size);
    /* Everything on a communicator of one rank, too. */
    int one = 3, got = 0;
    OK(MPI_Allgather(&one, 1, MPI_INT, &got, 1, MPI_INT, MPI_COMM_SELF));
    CHECK(got == 3, "allgather on self");
    got = 0;
    OK(MPI_Alltoall(&one, 1, MPI_INT, &got, 1, MPI_INT, MPI_COMM_SELF));
    CHECK(got == 3, "alltoall on self");
    got = 0;
    OK(MPI_Scan(&one, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(got == 3, "scan on self");
    got = 8;
    OK(MPI_Exscan(&one, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(got == 8, "exscan on self");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    return ft_finish();
}

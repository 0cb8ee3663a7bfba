/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Allgatherv, MPI_Alltoallv, MPI_Reduce_scatter_block and MPI_Reduce_scatter: MPI's
 * values with uneven counts (zeros included), displacements out of order and with gaps,
 * MPI_IN_PLACE, pair types with MPI_MINLOC in a reduce-scatter, and bad input. Then rank 3
 * dies: each call returns MPIX_ERR_PROC_FAILED at every survivor until MPI_Comm_validate_global,
 * and afterwards runs over the survivors (rank 3's slots untouched, no contribution from it);
 * a strided receive from it fails without writing, then acts as from MPI_PROC_NULL.
 * Run on 4 ranks. */
#include "ft_common.h"

#include <string.h>

#define SENTINEL (-777)

/* Rank r sends r+1 ints (rank 2 sends none): r*100 + i. */
static int count_of(int r) { return r == 2 ? 0 : r + 1; }

/* The blocks in reverse rank order with a gap of 2 after each. */
static void layout(int size, int *counts, int *displs, int *total) {
    int at = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = count_of(r);
        displs[r] = at;
        at += counts[r] + 2;
    }
    *total = at;
}

static void allgatherv(int rank, int size, int dead, int expect) {
    int counts[8], displs[8], total, send[8], recv[64];
    layout(size, counts, displs, &total);
    for (int i = 0; i < count_of(rank); i++)
        send[i] = rank * 100 + i;
    for (int i = 0; i < 64; i++)
        recv[i] = SENTINEL;
    int rc = MPI_Allgatherv(send, count_of(rank), MPI_INT, recv, counts, displs, MPI_INT,
                            MPI_COMM_WORLD);
    EXPECT(rc, expect);
    if (expect != MPI_SUCCESS)
        return;
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < counts[r]; i++)
            CHECK(recv[displs[r] + i] == (r == dead ? SENTINEL : r * 100 + i),
                  "allgatherv slot %d/%d: %d", r, i, recv[displs[r] + i]);
        CHECK(recv[displs[r] + counts[r]] == SENTINEL, "gap after %d written", r);
    }
    /* In place: each rank's block is already in its slot. */
    for (int i = 0; i < 64; i++)
        recv[i] = SENTINEL;
    for (int i = 0; i < count_of(rank); i++)
        recv[displs[rank] + i] = rank * 100 + i;
    OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT,
                      MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK(recv[displs[r] + i] == (r == dead ? SENTINEL : r * 100 + i),
                  "in-place allgatherv %d/%d", r, i);
}

/* Rank s sends (s + d) % 3 doubles to rank d: value s*1000 + d*10 + i. */
static int a2a_count(int s, int d) { return (s + d) % 3; }

static void alltoallv(int rank, int size, int dead, int expect) {
    int scounts[8], sdispls[8], rcounts[8], rdispls[8], at = 0;
    double send[64], recv[64];
    for (int d = 0; d < size; d++) { /* send blocks in rank order */
        scounts[d] = a2a_count(rank, d);
        sdispls[d] = at;
        for (int i = 0; i < scounts[d]; i++)
            send[at + i] = rank * 1000 + d * 10 + i;
        at += scounts[d];
    }
    at = 1;
    for (int s = size - 1; s >= 0; s--) { /* receive blocks in reverse, after one spare */
        rcounts[s] = a2a_count(s, rank);
        rdispls[s] = at;
        at += rcounts[s] + 1;
    }
    for (int i = 0; i < 64; i++)
        recv[i] = SENTINEL;
    EXPECT(MPI_Alltoallv(send, scounts, sdispls, MPI_DOUBLE, recv, rcounts, rdispls, MPI_DOUBLE,
                         MPI_COMM_WORLD),
           expect);
    if (expect != MPI_SUCCESS)
        return;
    CHECK(recv[0] == SENTINEL, "spare written");
    for (int s = 0; s < size; s++)
        for (int i = 0; i < rcounts[s]; i++)
            CHECK(recv[rdispls[s] + i] == (s == dead ? SENTINEL : s * 1000 + rank * 10 + i),
                  "alltoallv from %d [%d]: %g", s, i, recv[rdispls[s] + i]);
    /* In place: the blocks to send are where the blocks received go (counts symmetric). */
    int counts[8], displs[8];
    at = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = 2;
        displs[r] = at;
        recv[at] = rank * 10 + r;
        recv[at + 1] = -(rank * 10 + r);
        at += 2;
    }
    OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, counts, displs,
                     MPI_DOUBLE, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        if (r != dead)
            CHECK(recv[2 * r] == r * 10 + rank && recv[2 * r + 1] == -(r * 10 + rank),
                  "in-place alltoallv from %d", r);
}

static void reduce_scatters(int rank, int size, int dead, int expect) {
    /* Block: 3 longs per rank; element k of the vector is rank + k at every rank. */
    long send[64], recv[64];
    for (int k = 0; k < 3 * size; k++)
        send[k] = rank + k;
    long live_sum = 0; /* the sum of the contributing ranks' numbers */
    int live = 0;
    for (int r = 0; r < size; r++)
        if (r != dead) {
            live_sum += r;
            live++;
        }
    EXPECT(MPI_Reduce_scatter_block(send, recv, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), expect);
    if (expect != MPI_SUCCESS)
        return;
    for (int i = 0; i < 3; i++) {
        long k = 3 * rank + i;
        CHECK(recv[i] == live_sum + live * k, "reduce_scatter_block[%d] = %ld", i, recv[i]);
    }
    /* In place, with MAX. */
    for (int k = 0; k < 3 * size; k++)
        recv[k] = (rank * 7 + k) % 5;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, 3, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) {
        long k = 3 * rank + i, want = -1;
        for (int r = 0; r < size; r++)
            if (r != dead && (r * 7 + k) % 5 > want)
                want = (r * 7 + k) % 5;
        CHECK(recv[i] == want, "in-place reduce_scatter_block max[%d] = %ld", i, recv[i]);
    }
    /* Uneven blocks: rank r gets count_of(r) elements. */
    int counts[8], total = 0, before = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = count_of(r);
        if (r < rank)
            before += counts[r];
        total += counts[r];
    }
    for (int k = 0; k < total; k++)
        send[k] = rank + k;
    for (int i = 0; i < 8; i++)
        recv[i] = SENTINEL;
    OK(MPI_Reduce_scatter(send, recv, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < counts[rank]; i++)
        CHECK(recv[i] == live_sum + live * (before + i), "reduce_scatter[%d] = %ld", i, recv[i]);
    CHECK(recv[counts[rank]] == SENTINEL, "reduce_scatter wrote past its block");
    /* Pair types: MINLOC of (value, owner) pairs, 2 per rank. */
    struct {
        double value;
        int index;
    } pairs[16], mine[2];
    for (int k = 0; k < 2 * size; k++) {
        pairs[k].value = (double)((rank + k) % 3);
        pairs[k].index = rank;
    }
    OK(MPI_Reduce_scatter_block(pairs, mine, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    for (int i = 0; i < 2; i++) {
        int k = 2 * rank + i, owner = -1;
        double want = 1e9;
        for (int r = 0; r < size; r++)
            if (r != dead && (r + k) % 3 < want) {
                want = (r + k) % 3;
                owner = r;
            }
        CHECK(mine[i].value == want && mine[i].index == owner, "minloc scatter[%d]: %g@%d", i,
              mine[i].value, mine[i].index);
    }
}

static void bad_input(int rank, int size) {
    int counts[8], displs[8], total, buf[64];
    layout(size, counts, displs, &total);
    /* A send count that is not this rank's receive count (every rank checks its own). */
    EXPECT(MPI_Allgatherv(buf, count_of(rank) + 1, MPI_INT, buf, counts, displs, MPI_INT,
                          MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    EXPECT(MPI_Allgatherv(buf, 1, MPI_INT, buf, NULL, displs, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_ARG);
    int negative[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    negative[1] = -1;
    EXPECT(MPI_Allgatherv(buf, 0, MPI_INT, buf, negative, displs, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    /* A negative displacement is no error (the block lies before the buffer pointer, here
     * still in the array; nonblocking_blocks.c checks where such blocks land). */
    int ones[8], back[8], forward[8];
    for (int q = 0; q < size; q++) {
        ones[q] = 1;
        back[q] = q - 4;
        forward[q] = q;
        buf[q] = 100 * rank + q;
    }
    OK(MPI_Alltoallv(buf + 4, ones, back, MPI_INT, buf + 32, ones, forward, MPI_INT,
                     MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK(buf[32 + q] == 100 * q + rank, "alltoallv from displacement %d: %d", back[rank],
              buf[32 + q]);
    EXPECT(MPI_Alltoallv(buf, counts, displs, MPI_INT, NULL, counts, displs, MPI_INT,
                         MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_scatter_block(buf, buf + 32, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    EXPECT(MPI_Reduce_scatter_block(buf, buf + 32, 1, MPI_INT, 99, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce_scatter_block(buf, buf + 32, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_OP);
    EXPECT(MPI_Reduce_scatter_block(buf, buf + 32, 1, 4242, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    EXPECT(MPI_Reduce_scatter(buf, buf + 32, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_ARG);
    EXPECT(MPI_Reduce_scatter(buf, buf + 32, negative, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    EXPECT(MPI_Reduce_scatter_block(buf, buf + 32, 1, MPI_INT, MPI_SUM, 12345), MPI_ERR_COMM);
}

int main(int argc, char **argv) {
    int rank, size, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");

    allgatherv(rank, size, -1, MPI_SUCCESS);
    alltoallv(rank, size, -1, MPI_SUCCESS);
    reduce_scatters(rank, size, -1, MPI_SUCCESS);
    bad_input(rank, size);

    /* Rank 3 dies; the survivors wait until they know it. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    /* A strided receive from the dead rank: MPIX_ERR_PROC_FAILED (at the post or at the wait),
     * nothing unpacked; once it is recognized, MPI_PROC_NULL. */
    MPI_Datatype every_other;
    int cells[4] = {-1, -1, -1, -1}, rc;
    MPI_Request request;
    MPI_Status status;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    rc = MPI_Irecv(cells, 1, every_other, 3, 0, MPI_COMM_WORLD, &request);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    EXPECT(rc, MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Recv(cells, 1, every_other, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Sendrecv(cells, 1, every_other, 3, 0, cells, 1, every_other, 3, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE),
           MPIX_ERR_PROC_FAILED);
    for (int i = 0; i < 4; i++)
        CHECK(cells[i] == -1, "cell %d written", i);
    allgatherv(rank, size, 3, MPIX_ERR_PROC_FAILED);
    alltoallv(rank, size, 3, MPIX_ERR_PROC_FAILED);
    reduce_scatters(rank, size, 3, MPIX_ERR_PROC_FAILED);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    OK(MPI_Recv(cells, 1, every_other, 3, 0, MPI_COMM_WORLD, &status));
    CHECK(status.MPI_SOURCE == MPI_PROC_NULL && cells[0] == -1, "recognized: MPI_PROC_NULL");
    OK(MPI_Type_free(&every_other));
    allgatherv(rank, size, 3, MPI_SUCCESS);
    alltoallv(rank, size, 3, MPI_SUCCESS);
    reduce_scatters(rank, size, 3, MPI_SUCCESS);
    return ft_finish();
}

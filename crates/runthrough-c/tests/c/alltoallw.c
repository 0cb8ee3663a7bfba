/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI_Alltoallw, MPI_Ialltoallw and MPI_BOTTOM.
 * - Each block has its own type on each side (plain ints, or a vector that takes every other
 *   int) and a byte displacement, blocks out of order with gaps: MPI's values, gaps untouched.
 * - MPI_IN_PLACE: the blocks to send are where the received ones land.
 * - MPI_BOTTOM: struct types whose one block is at an absolute address (MPI_Get_address), in
 *   MPI_Alltoallw, MPI_Ialltoallw, MPI_Sendrecv, MPI_Isend / MPI_Irecv, MPI_Bcast,
 *   MPI_Allreduce and MPI_Reduce (in place at the root), and MPI_Pack / MPI_Unpack.
 * - Bad input: a negative byte displacement (MPI_ERR_ARG), a NULL array (MPI_ERR_ARG), an
 *   invalid or uncommitted type (MPI_ERR_TYPE), MPI_BOTTOM with a type that does not place its
 *   data at an address (MPI_ERR_BUFFER), blocks longer than the receiver expects
 *   (MPI_ERR_COUNT at every rank).
 * - Rank 3 dies: MPI_Alltoallw and MPI_Ialltoallw return MPIX_ERR_PROC_FAILED at every
 *   survivor until MPI_Comm_validate_global, then run over the survivors, rank 3's blocks
 *   untouched.
 * Run on 4 ranks. */
#include "ft_common.h"

#include <string.h>

#define SENTINEL (-777)
#define INTS 256

/* Rank s sends c(s, d) ints to rank d: s*1000 + d*10 + i. Always even (the vector type moves
 * pairs). */
static int c_of(int s, int d) { return 2 * ((s + d) % 2 + 1); }

static MPI_Datatype every_other; /* 2 ints, one apart: extent 3 ints */

/* Where int i of a block lies, in ints from the block's start, for the plain or the vector
 * type; and the count of elements of that type the block's c ints make. */
static int int_at(int strided, int i) { return strided ? (i / 2) * 3 + (i % 2) * 2 : i; }
static int elements(int strided, int c) { return strided ? c / 2 : c; }

/* The send side uses the vector type toward odd ranks, the receive side from even ones. */
static void alltoallw(int rank, int size, int dead, int expect, int nonblocking) {
    int send[INTS], recv[INTS];
    int scounts[8], sdispls[8], stypes[8], rcounts[8], rdispls[8], rtypes[8];
    for (int i = 0; i < INTS; i++) {
        send[i] = -1;
        recv[i] = SENTINEL;
    }
    int at = 0; /* in ints; blocks in rank order, one spare int after each */
    for (int d = 0; d < size; d++) {
        int strided = d % 2;
        scounts[d] = elements(strided, c_of(rank, d));
        stypes[d] = strided ? every_other : MPI_INT;
        sdispls[d] = at * (int)sizeof(int);
        for (int i = 0; i < c_of(rank, d); i++)
            send[at + int_at(strided, i)] = rank * 1000 + d * 10 + i;
        at += int_at(strided, c_of(rank, d) - 1) + 2;
    }
    at = 1; /* receive blocks in reverse rank order, after a spare int */
    for (int s = size - 1; s >= 0; s--) {
        int strided = s % 2 == 0;
        rcounts[s] = elements(strided, c_of(s, rank));
        rtypes[s] = strided ? every_other : MPI_INT;
        rdispls[s] = at * (int)sizeof(int);
        at += int_at(strided, c_of(s, rank) - 1) + 2;
    }
    if (nonblocking) {
        MPI_Request request;
        int rc = MPI_Ialltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes,
                                MPI_COMM_WORLD, &request);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
        EXPECT(rc, expect);
    } else {
        EXPECT(MPI_Alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes,
                             MPI_COMM_WORLD),
               expect);
    }
    if (expect != MPI_SUCCESS)
        return;
    CHECK(recv[0] == SENTINEL, "spare written");
    for (int s = 0; s < size; s++) {
        int strided = s % 2 == 0, base = rdispls[s] / (int)sizeof(int);
        for (int i = 0; i < c_of(s, rank); i++) {
            int got = recv[base + int_at(strided, i)];
            CHECK(got == (s == dead ? SENTINEL : s * 1000 + rank * 10 + i),
                  "alltoallw from %d [%d]: %d", s, i, got);
        }
        if (strided)
            CHECK(recv[base + 1] == SENTINEL, "gap inside the block from %d written", s);
        CHECK(recv[base + int_at(strided, c_of(s, rank) - 1) + 1] == SENTINEL,
              "gap after the block from %d written", s);
    }
}

/* In place: block r (2 ints, plain toward even ranks, the vector type toward odd ones) goes
 * to rank r and the one from rank r replaces it. */
static void in_place(int rank, int size, int dead) {
    int buf[INTS], counts[8], displs[8], types[8];
    for (int i = 0; i < INTS; i++)
        buf[i] = SENTINEL;
    for (int r = 0; r < size; r++) {
        int strided = r % 2;
        counts[r] = elements(strided, 2);
        types[r] = strided ? every_other : MPI_INT;
        displs[r] = 4 * r * (int)sizeof(int);
        buf[4 * r + int_at(strided, 0)] = rank * 10 + r;
        buf[4 * r + int_at(strided, 1)] = -(rank * 10 + r);
    }
    OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types,
                     MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        int strided = r % 2;
        int a = buf[4 * r + int_at(strided, 0)], b = buf[4 * r + int_at(strided, 1)];
        if (r == dead)
            CHECK(a == rank * 10 + r && b == -(rank * 10 + r), "in-place slot of the dead rank");
        else
            CHECK(a == r * 10 + rank && b == -(r * 10 + rank), "in-place alltoallw from %d: %d %d",
                  r, a, b);
    }
}

/* The displacement (an absolute address) of the type `add_pairs` combines. */
static MPI_Aint pair_at;

/* A user operation on one struct type at an absolute address: it finds the data where the
 * type's displacement says, from the buffers it is handed (as MPI_BOTTOM would be). */
static void add_pairs(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const int *a = (const int *)((const char *)in + pair_at);
    int *b = (int *)((char *)inout + pair_at);
    for (int i = 0; i < 2 * *len; i++)
        b[i] += a[i];
}

/* A struct type of n ints at the absolute address of `where`. */
static MPI_Datatype at_address(const int *where, int n) {
    MPI_Aint address;
    MPI_Datatype type;
    int one = n, basic = MPI_INT;
    OK(MPI_Get_address(where, &address));
    OK(MPI_Type_create_struct(1, &one, &address, &basic, &type));
    OK(MPI_Type_commit(&type));
    return type;
}

static void bottom(int rank, int size, int dead) {
    int send[INTS], recv[INTS], ones[8], zeros[8], stypes[8], rtypes[8];
    for (int i = 0; i < INTS; i++) {
        send[i] = rank * 100 + i;
        recv[i] = SENTINEL;
    }
    for (int r = 0; r < size; r++) {
        ones[r] = 1;
        zeros[r] = 0;
        stypes[r] = at_address(&send[2 * r], 2);     /* ints 2r, 2r+1 go to rank r */
        rtypes[r] = at_address(&recv[3 * r + 1], 2); /* those from r land at 3r+1, 3r+2 */
    }
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < INTS; i++)
            recv[i] = SENTINEL;
        if (round == 0) {
            OK(MPI_Alltoallw(MPI_BOTTOM, ones, zeros, stypes, MPI_BOTTOM, ones, zeros, rtypes,
                             MPI_COMM_WORLD));
        } else {
            MPI_Request request;
            OK(MPI_Ialltoallw(MPI_BOTTOM, ones, zeros, stypes, MPI_BOTTOM, ones, zeros, rtypes,
                              MPI_COMM_WORLD, &request));
            OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        }
        for (int r = 0; r < size; r++) {
            CHECK(recv[3 * r] == SENTINEL, "bottom: gap before the block from %d", r);
            for (int i = 0; i < 2; i++) {
                int want = r == dead ? SENTINEL : r * 100 + 2 * rank + i;
                CHECK(recv[3 * r + 1 + i] == want, "bottom round %d from %d [%d]: %d", round, r,
                      i, recv[3 * r + 1 + i]);
            }
        }
    }
    /* Point-to-point around the ring of the live ranks, from and into MPI_BOTTOM. */
    int live[8], n = 0, me = 0;
    for (int r = 0; r < size; r++)
        if (r != dead) {
            if (r == rank)
                me = n;
            live[n++] = r;
        }
    int right = live[(me + 1) % n], left = live[(me + n - 1) % n];
    for (int i = 0; i < INTS; i++)
        recv[i] = SENTINEL;
    OK(MPI_Sendrecv(MPI_BOTTOM, 1, stypes[right], right, 7, MPI_BOTTOM, 1, rtypes[left], left, 7,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* The left neighbour sends its ints 2·rank and 2·rank + 1 (its stypes[rank]). */
    CHECK(recv[3 * left + 1] == left * 100 + 2 * rank &&
              recv[3 * left + 2] == left * 100 + 2 * rank + 1 && recv[3 * left] == SENTINEL,
          "bottom sendrecv from %d", left);
    MPI_Request requests[2];
    recv[3 * left + 1] = recv[3 * left + 2] = SENTINEL;
    OK(MPI_Irecv(MPI_BOTTOM, 1, rtypes[left], left, 8, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Isend(MPI_BOTTOM, 1, stypes[right], right, 8, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    CHECK(recv[3 * left + 1] == left * 100 + 2 * rank, "bottom irecv from %d", left);
    /* A broadcast into MPI_BOTTOM: rank 0's ints 0 and 1 land at every rank's 1 and 2. */
    int cast[4] = {rank == 0 ? 11 : SENTINEL, rank == 0 ? 12 : SENTINEL, SENTINEL, SENTINEL};
    MPI_Datatype from = at_address(&cast[0], 2), into = at_address(&cast[1], 2);
    if (rank == 0) {
        OK(MPI_Bcast(MPI_BOTTOM, 1, from, 0, MPI_COMM_WORLD));
    } else {
        OK(MPI_Bcast(MPI_BOTTOM, 1, into, 0, MPI_COMM_WORLD));
        CHECK(cast[0] == SENTINEL && cast[1] == 11 && cast[2] == 12 && cast[3] == SENTINEL,
              "bottom bcast: %d %d %d %d", cast[0], cast[1], cast[2], cast[3]);
    }
    OK(MPI_Type_free(&from));
    OK(MPI_Type_free(&into));
    /* Reductions in MPI_BOTTOM (one type describes both buffers, so in place): the sum and
     * the maximum over the live ranks of (rank, 2·rank), at an address. */
    int mine[3] = {SENTINEL, rank, 2 * rank}, want = 0, top = dead == size - 1 ? size - 2 : size - 1;
    for (int r = 0; r < size; r++)
        if (r != dead)
            want += r;
    MPI_Datatype pair = at_address(&mine[1], 2);
    OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, pair, MPI_SUM, MPI_COMM_WORLD));
    CHECK(mine[0] == SENTINEL && mine[1] == want && mine[2] == 2 * want,
          "allreduce in MPI_BOTTOM: %d %d %d", mine[0], mine[1], mine[2]);
    mine[1] = rank;
    mine[2] = 2 * rank;
    OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, pair, MPI_MAX, MPI_COMM_WORLD));
    CHECK(mine[1] == top && mine[2] == 2 * top, "max in MPI_BOTTOM: %d %d", mine[1], mine[2]);
    mine[1] = rank;
    mine[2] = 2 * rank;
    /* MPI_Reduce: the root in place, the others send from MPI_BOTTOM. */
    OK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : MPI_BOTTOM, MPI_BOTTOM, 1, pair, MPI_SUM, 0,
                  MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(mine[1] == want && mine[2] == 2 * want, "reduce into MPI_BOTTOM: %d %d", mine[1],
              mine[2]);
    else
        CHECK(mine[1] == rank && mine[2] == 2 * rank, "reduce wrote a sender's data");
    /* A user operation on the type at an address, in MPI_BOTTOM. */
    MPI_Op add;
    OK(MPI_Get_address(&mine[1], &pair_at));
    OK(MPI_Op_create(add_pairs, 1, &add));
    mine[1] = rank;
    mine[2] = 2 * rank;
    OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, pair, add, MPI_COMM_WORLD));
    CHECK(mine[0] == SENTINEL && mine[1] == want && mine[2] == 2 * want,
          "user op in MPI_BOTTOM: %d %d %d", mine[0], mine[1], mine[2]);
    OK(MPI_Op_free(&add));
    /* A plain type from MPI_BOTTOM: the same error at every rank, before any message. */
    EXPECT(MPI_Allreduce(MPI_BOTTOM, &mine[1], 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    OK(MPI_Type_free(&pair));
    /* MPI_Pack from MPI_BOTTOM and MPI_Unpack into it. */
    int source[3] = {7, 8, 9}, sink[3] = {SENTINEL, SENTINEL, SENTINEL}, position = 0;
    char packed[64];
    MPI_Datatype source_type = at_address(&source[1], 2), sink_type = at_address(&sink[0], 2);
    OK(MPI_Pack(MPI_BOTTOM, 1, source_type, packed, sizeof packed, &position, MPI_COMM_WORLD));
    CHECK(position == 2 * (int)sizeof(int), "packed %d bytes", position);
    position = 0;
    OK(MPI_Unpack(packed, sizeof packed, &position, MPI_BOTTOM, 1, sink_type, MPI_COMM_WORLD));
    CHECK(sink[0] == 8 && sink[1] == 9 && sink[2] == SENTINEL, "unpacked %d %d %d", sink[0],
          sink[1], sink[2]);
    OK(MPI_Type_free(&source_type));
    OK(MPI_Type_free(&sink_type));
    for (int r = 0; r < size; r++) {
        OK(MPI_Type_free(&stypes[r]));
        OK(MPI_Type_free(&rtypes[r]));
    }
}

static void bad_input(int rank, int size) {
    int buf[INTS] = {0}, counts[8], displs[8], types[8];
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = r * (int)sizeof(int);
        types[r] = MPI_INT;
    }
    int back[8];
    memcpy(back, displs, sizeof back);
    /* A negative byte displacement is no error (the block lies before the buffer pointer,
     * here still in the array). */
    back[2] = -4;
    OK(MPI_Alltoallw(buf + 1, counts, back, types, buf + 32, counts, displs, types,
                     MPI_COMM_WORLD));
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, buf + 32, counts, displs, NULL,
                         MPI_COMM_WORLD),
           MPI_ERR_ARG);
    int wrong[8];
    memcpy(wrong, types, sizeof wrong);
    wrong[1] = 4242;
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, buf + 32, counts, displs, wrong,
                         MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    MPI_Datatype uncommitted;
    OK(MPI_Type_contiguous(1, MPI_INT, &uncommitted));
    wrong[1] = uncommitted;
    EXPECT(MPI_Alltoallw(buf, counts, displs, wrong, buf + 32, counts, displs, types,
                         MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    OK(MPI_Type_free(&uncommitted));
    /* MPI_BOTTOM with plain ints: there is no address in the type. */
    EXPECT(MPI_Alltoallw(MPI_BOTTOM, counts, displs, types, buf + 32, counts, displs, types,
                         MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Send(MPI_BOTTOM, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    /* Every rank sends two ints where one is expected: MPI_ERR_COUNT everywhere. */
    int twos[8];
    for (int r = 0; r < size; r++)
        twos[r] = 2;
    for (int r = 0; r < size; r++)
        displs[r] = 2 * r * (int)sizeof(int);
    EXPECT(MPI_Alltoallw(buf, twos, displs, types, buf + 32, counts, displs, types,
                         MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, buf + 32, counts, displs, types, 12345),
           MPI_ERR_COMM);
}

int main(int argc, char **argv) {
    int rank, size, failed = -1;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));

    alltoallw(rank, size, -1, MPI_SUCCESS, 0);
    alltoallw(rank, size, -1, MPI_SUCCESS, 1);
    in_place(rank, size, -1);
    bottom(rank, size, -1);
    bad_input(rank, size);

    /* Rank 3 dies; the survivors wait until they know it. */
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    alltoallw(rank, size, 3, MPIX_ERR_PROC_FAILED, 0);
    alltoallw(rank, size, 3, MPIX_ERR_PROC_FAILED, 1);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G holds %d failures", failed);
    alltoallw(rank, size, 3, MPI_SUCCESS, 0);
    alltoallw(rank, size, 3, MPI_SUCCESS, 1);
    in_place(rank, size, 3);
    bottom(rank, size, 3);
    OK(MPI_Type_free(&every_other));
    return ft_finish();
}

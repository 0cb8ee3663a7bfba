/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Derived datatypes with negative lower bounds, displacements, strides and extents (MPI-4.0
 * §5.1): a buffer pointer points at offset 0 of the first element, element k lies k extents
 * from it, and data may lie before the pointer.
 * - Bounds: MPI_Type_get_extent / MPI_Type_get_true_extent (and the _x forms) of
 *   resized(MPI_INT, 0, -4) (a negative extent), resized(MPI_INT, -8, 16) (a negative lower
 *   bound), vector(4, 1, -1, MPI_INT) (a negative stride: an array reversed), an hindexed type
 *   with a negative displacement, contiguous(3, resized(MPI_INT, 0, -4)) (the least lb and the
 *   greatest ub of the copies), a struct with a negative displacement.
 * - Point to point around the ring (MPI_Send / MPI_Recv, MPI_Isend / MPI_Irecv, MPI_Sendrecv):
 *   each of those types on either side, every value checked, bytes outside the typemap
 *   untouched.
 * - MPI_Bcast of the reversing vector and of the hindexed type; MPI_Gather into a receive
 *   type of negative extent (rank r's block lands r extents, so 4r bytes, before the
 *   pointer); MPI_Allgather of the reversing vector.
 * - In this library, which takes predefined operations on derived types made of one basic
 *   type: MPI_Allreduce and MPI_Reduce (MPI_SUM) of the reversing vector, a contiguous type
 *   of it and the negative-extent int, MPI_IN_PLACE too; MPI_Reduce_scatter_block (in place
 *   too) and MPI_Reduce_scatter.
 * - MPI_Pack / MPI_Unpack / MPI_Pack_size of the reversing vector and the hindexed type.
 * - Bounds that overflow an MPI_Aint are an error class, not a crash (this library:
 *   MPI_ERR_COUNT).
 * Run on 3 ranks. Without the library's own parts (#if), the program passes under MPICH
 * 4.0.2 as well (mpicc, mpiexec -n 3). */
#include "ft_common.h"

#include <limits.h>
#include <string.h>

#define M 16   /* ints in each test buffer */
#define SKIP (-7777) /* a value no typemap writes */

static int rank, size;

static void fill(int *buf, int seed) {
    for (int i = 0; i < M; i++)
        buf[i] = seed * 100 + i;
}

static void blank(int *buf) {
    for (int i = 0; i < M; i++)
        buf[i] = SKIP;
}

static void bounds(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb,
                   MPI_Aint true_extent, const char *what) {
    MPI_Aint l = -1, e = -1, tl = -1, te = -1;
    OK(MPI_Type_get_extent(t, &l, &e));
    OK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, want %ld %ld", what, (long)l, (long)e,
          (long)lb, (long)extent);
    CHECK(tl == true_lb && te == true_extent, "%s: true lb %ld true extent %ld, want %ld %ld",
          what, (long)tl, (long)te, (long)true_lb, (long)true_extent);
    MPI_Count cl = -1, ce = -1, ctl = -1, cte = -1;
    OK(MPI_Type_get_extent_x(t, &cl, &ce));
    OK(MPI_Type_get_true_extent_x(t, &ctl, &cte));
    CHECK(cl == lb && ce == extent && ctl == true_lb && cte == true_extent, "%s: the _x forms",
          what);
}

/* buf[i] holds want[i] where want[i] != SKIP and SKIP elsewhere. */
static void expect(const int *buf, const int *want, const char *what) {
    for (int i = 0; i < M; i++)
        CHECK(buf[i] == want[i], "%s: element %d is %d, want %d", what, i, buf[i], want[i]);
}

/* The types, all committed. */
static MPI_Datatype rev;       /* resized(MPI_INT, 0, -4): element k at -4k */
static MPI_Datatype shifted;   /* resized(MPI_INT, -8, 16): lb -8, ub 8, data at 0 */
static MPI_Datatype backwards; /* vector(4, 1, -1, MPI_INT): ints at 0, -4, -8, -12 */
static MPI_Datatype hidx;      /* hindexed {1 int at -8, 2 ints at 4}: lb -8, ub 12 */
static MPI_Datatype rev3;      /* contiguous(3, rev) */
static MPI_Datatype two_back;  /* contiguous(2, backwards): 8 ints, reversed by halves */

static void make_types(void) {
    OK(MPI_Type_create_resized(MPI_INT, 0, -4, &rev));
    OK(MPI_Type_create_resized(MPI_INT, -8, 16, &shifted));
    OK(MPI_Type_vector(4, 1, -1, MPI_INT, &backwards));
    int lens[2] = {1, 2};
    MPI_Aint displs[2] = {-8, 4};
    OK(MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &hidx));
    OK(MPI_Type_contiguous(3, rev, &rev3));
    OK(MPI_Type_contiguous(2, backwards, &two_back));
    MPI_Datatype *all[6] = {&rev, &shifted, &backwards, &hidx, &rev3, &two_back};
    for (int i = 0; i < 6; i++)
        OK(MPI_Type_commit(all[i]));
    int isize = (int)sizeof(int);
    bounds(rev, 0, -4, 0, 4, "resized(MPI_INT, 0, -4)");
    bounds(shifted, -8, 16, 0, 4, "resized(MPI_INT, -8, 16)");
    bounds(backwards, -12, 16, -12, 16, "vector(4, 1, -1, MPI_INT)");
    bounds(hidx, -8, 20, -8, 20, "hindexed {-8, 4}");
    /* lb markers at 0, -4, -8 and ub markers at -4, -8, -12: lb -8, ub -4. */
    bounds(rev3, -8, 4, -8, 12, "contiguous(3, resized(MPI_INT, 0, -4))");
    /* Two reversed quadruples, the second one extent (16 bytes) on: ints -12 .. 16. */
    bounds(two_back, -12, 32, -12, 32, "contiguous(2, vector(4, 1, -1))");
    int size_ = 0;
    OK(MPI_Type_size(rev3, &size_));
    CHECK(size_ == 3 * isize, "size of rev3 %d", size_);
    /* A struct: an int at 0, a double at -8, 3 chars at 16: lb -8, ub 19 padded to 24. */
    int blocklens[3] = {1, 1, 3};
    MPI_Aint sdispls[3] = {0, -8, 16};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s;
    OK(MPI_Type_create_struct(3, blocklens, sdispls, types, &s));
    bounds(s, -8, 32, -8, 27, "struct {0, -8, 16}");
    OK(MPI_Type_free(&s));
    /* A resized type with a negative lower bound and a negative extent. */
    OK(MPI_Type_create_resized(backwards, -4, -20, &s));
    bounds(s, -4, -20, -12, 16, "resized(vector(4, 1, -1), -4, -20)");
    OK(MPI_Type_free(&s));
}

/* Each type around the ring: sent from `a` at `at`, received at `at` of `b`. */
static void point_to_point(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int a[M], b[M], want[M], got[M];
    fill(a, rank);

    /* Three of rev from a[5]: a[5], a[4], a[3]; received as 3 ints, then as 3 of rev. */
    blank(got);
    OK(MPI_Sendrecv(a + 5, 3, rev, next, 1, got, 3, MPI_INT, prev, 1, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(got[0] == prev * 100 + 5 && got[1] == prev * 100 + 4 && got[2] == prev * 100 + 3,
          "rev sent: %d %d %d", got[0], got[1], got[2]);
    blank(b);
    OK(MPI_Sendrecv(a + 1, 3, MPI_INT, next, 2, b + 10, 3, rev, prev, 2, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    blank(want);
    want[10] = prev * 100 + 1, want[9] = prev * 100 + 2, want[8] = prev * 100 + 3;
    expect(b, want, "3 ints received as rev");
    MPI_Status status;
    int count = -1;
    /* And contiguous(3, rev) to itself: ints 6, 5, 4 at both ends. (Two of it would
     * overlap, element 1 lying one extent, 4 bytes, on: erroneous in a receive.) */
    blank(b);
    if (rank % 2 == 0) {
        OK(MPI_Send(a + 6, 1, rev3, next, 3, MPI_COMM_WORLD));
        OK(MPI_Recv(b + 6, 1, rev3, prev, 3, MPI_COMM_WORLD, &status));
    } else {
        OK(MPI_Recv(b + 6, 1, rev3, prev, 3, MPI_COMM_WORLD, &status));
        OK(MPI_Send(a + 6, 1, rev3, next, 3, MPI_COMM_WORLD));
    }
    OK(MPI_Get_count(&status, rev3, &count));
    CHECK(count == 1, "MPI_Get_count of rev3: %d", count);
    OK(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == 3, "MPI_Get_count of rev3 as ints: %d", count);
    blank(want);
    for (int i = 4; i <= 6; i++)
        want[i] = prev * 100 + i;
    expect(b, want, "contiguous(3, rev)");

    /* Two of shifted from a: ints 0 and 4 (element 1 one extent, 16 bytes, on). */
    blank(b);
    OK(MPI_Sendrecv(a, 2, shifted, next, 4, b, 2, shifted, prev, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    blank(want);
    want[0] = prev * 100, want[4] = prev * 100 + 4;
    expect(b, want, "2 of resized(MPI_INT, -8, 16)");

    /* The reversing vector from a[3]: a[3], a[2], a[1], a[0]. */
    blank(got);
    OK(MPI_Sendrecv(a + 3, 1, backwards, next, 5, got, 4, MPI_INT, prev, 5, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == prev * 100 + 3 - i, "backwards sent: got[%d] = %d", i, got[i]);
    /* Eight ints received as 2 of it at b[11]: b[11..8] then (16 bytes on) b[15..12]. */
    blank(b);
    MPI_Request requests[2];
    OK(MPI_Irecv(b + 11, 2, backwards, prev, 6, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Isend(a, 8, MPI_INT, next, 6, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    blank(want);
    for (int i = 0; i < 4; i++) {
        want[11 - i] = prev * 100 + i;
        want[15 - i] = prev * 100 + 4 + i;
    }
    expect(b, want, "8 ints received as 2 of backwards");

    /* The hindexed type, 2 of it from a[4]: a[2], a[5], a[6], then 20 bytes on a[7], a[10],
     * a[11]; to hindexed at b[4] (the same places) and to ints. */
    blank(b);
    OK(MPI_Sendrecv(a + 4, 2, hidx, next, 7, b + 4, 2, hidx, prev, 7, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    blank(want);
    int places[6] = {2, 5, 6, 7, 10, 11};
    for (int i = 0; i < 6; i++)
        want[places[i]] = prev * 100 + places[i];
    expect(b, want, "2 of hindexed {-8, 4}");
    blank(got);
    OK(MPI_Sendrecv(a + 4, 2, hidx, next, 8, got, 6, MPI_INT, prev, 8, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == prev * 100 + places[i], "hindexed sent: got[%d] = %d", i, got[i]);
}

static void collectives(void) {
    int buf[M], want[M], send[M], recv[M];
    int root = size - 1;

    /* MPI_Bcast of two_back at buf[3] (8 ints, buf[0..8)): every rank ends with the root's. */
    if (rank == root)
        fill(buf, root);
    else
        blank(buf);
    OK(MPI_Bcast(buf + 3, 1, two_back, root, MPI_COMM_WORLD));
    blank(want);
    for (int i = 0; i < 8; i++)
        want[i] = root * 100 + i;
    if (rank != root)
        expect(buf, want, "MPI_Bcast of contiguous(2, backwards)");
    /* Of hidx at buf[8], 2 elements: ints 6, 9, 10, 11, 14, 15; the rest untouched. */
    if (rank == root)
        fill(buf, root);
    else
        blank(buf);
    OK(MPI_Bcast(buf + 8, 2, hidx, root, MPI_COMM_WORLD));
    if (rank != root) {
        blank(want);
        int places[6] = {6, 9, 10, 11, 14, 15};
        for (int i = 0; i < 6; i++)
            want[places[i]] = root * 100 + places[i];
        expect(buf, want, "MPI_Bcast of 2 of hindexed");
    }

#if !defined(OPEN_MPI) && !defined(MPICH_VERSION)
    /* Reductions with a predefined operation on derived types made of one basic type are this
     * library's extension (MPICH 4.0.2, for one, refuses MPI_SUM on a vector of ints:
     * MPI_ERR_OP); the rest of this program runs under MPICH too, with the same results. */
    /* MPI_Allreduce, MPI_SUM, 2 of the reversing vector at [3]: every one of ints 0..8 is the
     * sum over the ranks of r * 100 + i. */
    int ranks_sum = size * (size - 1) / 2;
    fill(send, rank);
    blank(recv);
    OK(MPI_Allreduce(send + 3, recv + 3, 2, backwards, MPI_SUM, MPI_COMM_WORLD));
    blank(want);
    for (int i = 0; i < 8; i++)
        want[i] = ranks_sum * 100 + size * i;
    expect(recv, want, "MPI_Allreduce of 2 of backwards");
    /* The same in place, as contiguous(2, backwards). */
    fill(recv, rank);
    for (int i = 8; i < M; i++)
        recv[i] = SKIP;
    OK(MPI_Allreduce(MPI_IN_PLACE, recv + 3, 1, two_back, MPI_SUM, MPI_COMM_WORLD));
    expect(recv, want, "MPI_Allreduce in place of contiguous(2, backwards)");
    /* 5 of rev (ints 12, 11, 10, 9, 8 from [12]), to the root by MPI_Reduce. */
    blank(recv);
    OK(MPI_Reduce(send + 12, recv + 12, 5, rev, MPI_SUM, root, MPI_COMM_WORLD));
    if (rank == root) {
        blank(want);
        for (int i = 8; i <= 12; i++)
            want[i] = ranks_sum * 100 + size * i;
        expect(recv, want, "MPI_Reduce of 5 of rev");
    }

    /* MPI_Reduce_scatter_block of the reversing vector, one per rank, from [3] of 4 · size
     * ints: rank r gets the sum of element r (ints 4r .. 4r + 4, reversed), which lands
     * reversed again at its own [3]: [j] is the sum of the ranks' [4r + j]. In place too. */
    fill(send, rank);
    blank(recv);
    OK(MPI_Reduce_scatter_block(send + 3, recv + 3, 1, backwards, MPI_SUM, MPI_COMM_WORLD));
    blank(want);
    for (int j = 0; j < 4; j++)
        want[j] = ranks_sum * 100 + size * (4 * rank + j);
    expect(recv, want, "MPI_Reduce_scatter_block of backwards");
    fill(recv, rank);
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, recv + 3, 1, backwards, MPI_SUM,
                                MPI_COMM_WORLD));
    for (int j = 0; j < 4; j++)
        CHECK(recv[j] == want[j], "in-place MPI_Reduce_scatter_block: [%d] = %d, want %d", j,
              recv[j], want[j]);
    /* MPI_Reduce_scatter of rev (extent -4), one per rank, from [size - 1]: element k is
     * [size - 1 - k], so rank r gets the sum of the ranks' [size - 1 - r]. */
    int counts[16], result = SKIP;
    for (int r = 0; r < size; r++)
        counts[r] = 1;
    OK(MPI_Reduce_scatter(send + size - 1, &result, counts, rev, MPI_SUM, MPI_COMM_WORLD));
    CHECK(result == ranks_sum * 100 + size * (size - 1 - rank), "MPI_Reduce_scatter of rev: %d",
          result);

#endif

    /* MPI_Gather of one int per rank into rev at the root's [M - 1]: rank r's lands r extents
     * (-4r bytes) from the pointer, at [M - 1 - r]. */
    int mine = 1000 + rank;
    blank(recv);
    OK(MPI_Gather(&mine, 1, MPI_INT, recv + M - 1, 1, rev, root, MPI_COMM_WORLD));
    if (rank == root) {
        blank(want);
        for (int r = 0; r < size; r++)
            want[M - 1 - r] = 1000 + r;
        expect(recv, want, "MPI_Gather into rev");
    }
    /* MPI_Allgather of the reversing vector into ints: rank r's a[3..0] at [4r .. 4r + 4). */
    fill(send, rank);
    blank(recv);
    OK(MPI_Allgather(send + 3, 1, backwards, recv, 4, MPI_INT, MPI_COMM_WORLD));
    blank(want);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++)
            want[4 * r + i] = r * 100 + 3 - i;
    expect(recv, want, "MPI_Allgather of backwards");
}

static void packing(void) {
    int a[M], b[M], want[M], psize = 0, position = 0;
    char packed[256];
    fill(a, rank);
    int one = 0, two = 0;
    OK(MPI_Pack_size(1, backwards, MPI_COMM_WORLD, &one));
    OK(MPI_Pack_size(2, hidx, MPI_COMM_WORLD, &two));
    CHECK(one >= 16 && two >= 24, "MPI_Pack_size %d %d", one, two);
    OK(MPI_Pack(a + 3, 1, backwards, packed, (int)sizeof packed, &position, MPI_COMM_WORLD));
    OK(MPI_Pack(a + 8, 2, hidx, packed, (int)sizeof packed, &position, MPI_COMM_WORLD));
    psize = position;
    /* Unpacked as plain ints: a[3], a[2], a[1], a[0], then a[6], a[9], a[10], a[11], a[14],
     * a[15]. */
    int got[10], order[10] = {3, 2, 1, 0, 6, 9, 10, 11, 14, 15};
    position = 0;
    OK(MPI_Unpack(packed, psize, &position, got, 10, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++)
        CHECK(got[i] == rank * 100 + order[i], "packed int %d is %d", i, got[i]);
    /* Unpacked with the same types at other places: the reversing vector at b[7] (into
     * b[7], b[6], b[5], b[4]), then one element of hidx at b[10] (b[8], b[11], b[12]). */
    blank(b);
    position = 0;
    OK(MPI_Unpack(packed, psize, &position, b + 7, 1, backwards, MPI_COMM_WORLD));
    OK(MPI_Unpack(packed, psize, &position, b + 10, 1, hidx, MPI_COMM_WORLD));
    blank(want);
    for (int i = 0; i < 4; i++)
        want[7 - i] = rank * 100 + 3 - i;
    want[8] = rank * 100 + 6, want[11] = rank * 100 + 9, want[12] = rank * 100 + 10;
    expect(b, want, "MPI_Unpack into backwards and hidx");
}

static void errors(void) {
#if !defined(OPEN_MPI) && !defined(MPICH_VERSION)
    /* Bounds beyond an MPI_Aint: an error class, not a crash. */
    MPI_Datatype t;
    EXPECT(MPI_Type_create_resized(MPI_INT, LONG_MAX - 2, 8, &t), MPI_ERR_COUNT);
    int lens[2] = {1, 1};
    MPI_Aint far[2] = {LONG_MIN, LONG_MAX - 8};
    EXPECT(MPI_Type_create_hindexed(2, lens, far, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_hvector(3, 1, LONG_MIN / 2, MPI_INT, &t), MPI_ERR_COUNT);
    /* A type whose elements span more than the address space: refused when used. */
    OK(MPI_Type_create_resized(MPI_INT, 0, LONG_MIN / 2, &t));
    OK(MPI_Type_commit(&t));
    int x[4] = {0};
    EXPECT(MPI_Send(x, 4, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    OK(MPI_Type_free(&t));
    /* Data before address 1 from MPI_BOTTOM is no address. */
    EXPECT(MPI_Send(MPI_BOTTOM, 1, backwards, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
#endif
}

int main(int argc, char **argv) {
    ft_init(&argc, &argv, &rank, &size);
    make_types();
    point_to_point();
    collectives();
    packing();
    errors();
    MPI_Datatype *all[6] = {&rev, &shifted, &backwards, &hidx, &rev3, &two_back};
    for (int i = 0; i < 6; i++)
        OK(MPI_Type_free(all[i]));
    return ft_finish();
}

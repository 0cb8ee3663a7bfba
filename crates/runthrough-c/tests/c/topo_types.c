/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Cartesian topologies and derived datatypes beyond the stencil's use: edge cases (a grid
 * smaller than the communicator, zero dimensions, MPI_Cart_sub keeping nothing, MPI_Comm_dup
 * keeping the grid, shifts larger than a dimension), the data a derived type moves (nested
 * types, hvector, types built from a freed type, short messages, truncation, MPI_Irecv of a
 * strided type completed by MPI_Test, MPI_Bcast of a strided type, reductions of a strided
 * type, subarray and resized types in MPI_Gather(v) / MPI_Scatter(v) / MPI_Allgather(v) /
 * MPI_Alltoall(v), indexed types and their bounds), and bad input to every new call: bad dims,
 * NULL pointers, a communicator without a grid, uncommitted and freed types, operations that
 * do not apply; MPI_Pack / MPI_Unpack / MPI_Pack_size with MPI_PACKED messages. Run on 3
 * ranks. */
#include "ft_common.h"

#include <string.h>

static void grid_errors(MPI_Comm cart) {
    int dims[2] = {1, 3}, periods[2] = {0, 0}, coords[2], r, src, dst;
    MPI_Comm c;
    /* MPI_Cart_create. */
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c), MPI_ERR_DIMS);
    int zero[2] = {0, 3}, big[2] = {2, 3};
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, periods, 0, &c), MPI_ERR_ARG);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, NULL, 0, &c), MPI_ERR_ARG);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_create(12345, 2, dims, periods, 0, &c), MPI_ERR_COMM);
    /* MPI_Cart_map: the rank MPI_Cart_create would give (3 ranks here). */
    int world_rank, mapped = -7, two[1] = {2};
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &mapped));
    CHECK(mapped == world_rank, "Cart_map of the whole world: %d", mapped);
    OK(MPI_Cart_map(MPI_COMM_WORLD, 1, two, periods, &mapped));
    CHECK(mapped == (world_rank < 2 ? world_rank : MPI_UNDEFINED), "Cart_map of 2: %d", mapped);
    EXPECT(MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, &mapped), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_map(MPI_COMM_WORLD, 2, zero, periods, &mapped), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, NULL), MPI_ERR_ARG);
    /* A communicator without a grid. */
    EXPECT(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_rank(MPI_COMM_WORLD, coords, &r), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_get(MPI_COMM_WORLD, 2, dims, periods, coords), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cartdim_get(MPI_COMM_WORLD, &r), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_sub(MPI_COMM_WORLD, periods, &c), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_coords(12345, 0, 2, coords), MPI_ERR_COMM);
    /* Bad arguments on a grid (cart: 1 x 3, periodic in y only). */
    EXPECT(MPI_Cart_coords(cart, 3, 2, coords), MPI_ERR_RANK);
    EXPECT(MPI_Cart_coords(cart, -1, 2, coords), MPI_ERR_RANK);
    EXPECT(MPI_Cart_coords(cart, 0, 1, coords), MPI_ERR_ARG);
    EXPECT(MPI_Cart_coords(cart, 0, 2, NULL), MPI_ERR_ARG);
    int outside[2] = {1, 0}, wrapped[2] = {0, -4};
    EXPECT(MPI_Cart_rank(cart, outside, &r), MPI_ERR_ARG);
    OK(MPI_Cart_rank(cart, wrapped, &r));
    CHECK(r == 2, "(0,-4) wraps to rank %d", r);
    EXPECT(MPI_Cart_rank(cart, NULL, &r), MPI_ERR_ARG);
    EXPECT(MPI_Cart_rank(cart, wrapped, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    EXPECT(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);
    EXPECT(MPI_Cart_shift(cart, 0, 1, NULL, &dst), MPI_ERR_ARG);
    EXPECT(MPI_Cart_shift(cart, 0, 1, &src, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_get(cart, 1, dims, periods, coords), MPI_ERR_ARG);
    EXPECT(MPI_Cart_get(cart, 2, NULL, periods, coords), MPI_ERR_ARG);
    EXPECT(MPI_Cart_get(cart, -1, dims, periods, coords), MPI_ERR_ARG);
    EXPECT(MPI_Cartdim_get(cart, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_sub(cart, NULL, &c), MPI_ERR_ARG);
    EXPECT(MPI_Cart_sub(cart, periods, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Topo_test(cart, NULL), MPI_ERR_ARG);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    OK(MPI_Error_string(MPI_ERR_TOPOLOGY, text, &len));
    CHECK(strstr(text, "MPI_ERR_TOPOLOGY") != NULL, "%s", text);
}

static void type_errors(int rank) {
    MPI_Datatype t, v;
    int size;
    MPI_Aint lb, extent;
    double buf[16] = {0};
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_contiguous(2, 12345, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_vector(-1, 1, 2, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(2, -1, 2, MPI_INT, &t), MPI_ERR_COUNT);
    /* A negative stride is MPI (blocks before the first): ints at 0 and -8 bytes. */
    OK(MPI_Type_vector(2, 1, -2, MPI_INT, &t));
    OK(MPI_Type_get_extent(t, &lb, &extent));
    CHECK(lb == -8 && extent == 12, "vector stride -2: lb %ld extent %ld", (long)lb,
          (long)extent);
    OK(MPI_Type_free(&t));
    EXPECT(MPI_Type_vector(2, 1, 2, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_vector(1 << 30, 1 << 30, 1 << 30, MPI_DOUBLE, &t), MPI_ERR_COUNT);
    OK(MPI_Type_create_hvector(2, 1, -8, MPI_INT, &t));
    OK(MPI_Type_free(&t));
    EXPECT(MPI_Type_commit(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_free(NULL), MPI_ERR_ARG);
    MPI_Datatype predefined = MPI_INT;
    EXPECT(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    CHECK(predefined == MPI_INT, "a predefined handle is left alone");
    OK(MPI_Type_commit(&predefined));
    EXPECT(MPI_Type_get_extent(MPI_INT, NULL, &extent), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_extent(MPI_INT, &lb, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_extent(777, &lb, &extent), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(777, &size), MPI_ERR_TYPE);

    /* Uncommitted: sizes are known, communication is refused. */
    OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 24, "size %d", size);
    EXPECT(MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Recv(buf, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    EXPECT(MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_commit(&t)); /* twice is fine */
    /* MPI_Bcast takes derived types: the root's strided data, the gaps left alone. */
    for (int i = 0; i < 6; i++)
        buf[i] = rank == 1 ? 50 + i : -1;
    OK(MPI_Bcast(buf, 1, t, 1, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++)
        CHECK(buf[i] == (i % 2 == 0 || rank == 1 ? 50 + i : -1), "bcast[%d] = %g", i, buf[i]);
    /* Reductions of a type made of one basic type: element by element, gaps left alone. */
    {
        double in[15], res[16];
        for (int i = 0; i < 15; i++)
            in[i] = rank * 10 + i;
        for (int i = 0; i < 16; i++)
            res[i] = -1;
        OK(MPI_Allreduce(in, res, 1, t, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 6; i++)
            CHECK(res[i] == (i % 2 == 0 && i < 5 ? 30 + 3 * i : -1), "allreduce[%d] = %g", i,
                  res[i]);
        OK(MPI_Reduce(in, res, 1, t, MPI_MAX, 2, MPI_COMM_WORLD));
        if (rank == 2)
            CHECK(res[0] == 20 && res[2] == 22 && res[4] == 24 && res[1] == -1, "reduce max");
        OK(MPI_Scan(in, res, 1, t, MPI_SUM, MPI_COMM_WORLD));
        {
            double tens = 10.0 * rank * (rank + 1) / 2, n = rank + 1;
            CHECK(res[0] == tens && res[2] == tens + 2 * n && res[4] == tens + 4 * n, "scan");
        }
        for (int i = 0; i < 16; i++)
            res[i] = in[i < 15 ? i : 0];
        OK(MPI_Allreduce(MPI_IN_PLACE, res, 1, t, MPI_MIN, MPI_COMM_WORLD));
        CHECK(res[0] == 0 && res[2] == 2 && res[1] == rank * 10 + 1, "in-place allreduce min");
        /* Reduce-scatter: element k of t lies at 5k doubles; rank r gets element r. */
        for (int i = 0; i < 16; i++)
            res[i] = -1;
        double big[15];
        for (int i = 0; i < 15; i++)
            big[i] = rank * 100 + i;
        OK(MPI_Reduce_scatter_block(big, res, 1, t, MPI_SUM, MPI_COMM_WORLD));
        for (int j = 0; j < 5; j += 2)
            CHECK(res[j] == 300 + 3 * (5 * rank + j), "reduce_scatter[%d] = %g", j, res[j]);
        CHECK(res[1] == -1 && res[3] == -1, "reduce_scatter wrote a gap");
        EXPECT(MPI_Allreduce(in, res, 1, t, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(in, res, 1, t, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(in, res, 2, MPI_DOUBLE, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Reduce(in, res, 2, MPI_FLOAT, MPI_BOR, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    }
    EXPECT(MPI_Exscan(buf, buf + 8, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    /* Freed: the handle becomes MPI_DATATYPE_NULL and the old value is refused everywhere. */
    MPI_Datatype stale = t;
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "freed handle %d", t);
    EXPECT(MPI_Send(buf, 1, stale, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Sendrecv(buf, 1, MPI_DOUBLE, rank, 0, buf + 8, 1, stale, rank, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE),
           MPI_ERR_TYPE);
    MPI_Request req;
    EXPECT(MPI_Irecv(buf, 1, stale, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    EXPECT(MPI_Isend(buf, 1, stale, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    EXPECT(MPI_Type_free(&stale), MPI_ERR_TYPE);
    EXPECT(MPI_Type_commit(&stale), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(stale, &size), MPI_ERR_TYPE);
    EXPECT(MPI_Type_get_extent(stale, &lb, &extent), MPI_ERR_TYPE);
    EXPECT(MPI_Type_vector(2, 1, 2, stale, &v), MPI_ERR_TYPE);
    int count;
    MPI_Status st = {0};
    EXPECT(MPI_Get_count(&st, stale, &count), MPI_ERR_TYPE);
    /* A NULL buffer with data. */
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &t));
    OK(MPI_Type_commit(&t));
    EXPECT(MPI_Send(NULL, 1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Recv(NULL, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
    EXPECT(MPI_Irecv(NULL, 1, t, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    EXPECT(MPI_Send(buf, -1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    OK(MPI_Send(NULL, 0, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Type_free(&t));
}

/* Sends `n` doubles to itself in `sendtype` and receives them in `recvtype`. */
static void self_exchange(int rank, const double *out, int scount, MPI_Datatype stype, double *in,
                          int rcount, MPI_Datatype rtype, MPI_Status *st) {
    OK(MPI_Sendrecv(out, scount, stype, rank, 11, in, rcount, rtype, rank, 11, MPI_COMM_WORLD,
                    st));
}

static void type_data(int rank) {
    double out[24], in[24];
    for (int i = 0; i < 24; i++)
        out[i] = i;
    MPI_Status st;
    int count;
    MPI_Aint lb, extent;

    /* Two elements of a vector of 2 blocks of 2, stride 3: extent 5 doubles, so element 1
     * starts at out[5]: data 0 1 3 4 | 5 6 8 9. */
    MPI_Datatype v, c, h, pair_vec;
    OK(MPI_Type_vector(2, 2, 3, MPI_DOUBLE, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_get_extent(v, &lb, &extent));
    CHECK(extent == 5 * sizeof(double), "vector extent %ld", (long)extent);
    memset(in, 0, sizeof in);
    self_exchange(rank, out, 2, v, in, 8, MPI_DOUBLE, &st);
    double want[8] = {0, 1, 3, 4, 5, 6, 8, 9};
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == want[i], "packed[%d] = %g", i, in[i]);
    OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == 8, "count %d", count);
    /* And back into the strided layout: the gaps are left alone. */
    for (int i = 0; i < 24; i++)
        in[i] = -1;
    self_exchange(rank, want, 8, MPI_DOUBLE, in, 2, v, &st);
    for (int i = 0; i < 10; i++) {
        int gap = i == 2 || i == 7;
        CHECK(in[i] == (gap ? -1 : i), "unpacked[%d] = %g", i, in[i]);
    }
    OK(MPI_Get_count(&st, v, &count));
    CHECK(count == 2, "count %d", count);
    /* A short message: Get_count in the derived type is MPI_UNDEFINED; a prefix is filled. */
    for (int i = 0; i < 24; i++)
        in[i] = -1;
    self_exchange(rank, want, 3, MPI_DOUBLE, in, 2, v, &st);
    CHECK(in[0] == 0 && in[1] == 1 && in[3] == 3 && in[4] == -1, "short message");
    OK(MPI_Get_count(&st, v, &count));
    CHECK(count == MPI_UNDEFINED, "count %d", count);
    /* Too long a message: MPI_ERR_TRUNCATE. */
    EXPECT(MPI_Sendrecv(out, 9, MPI_DOUBLE, rank, 12, in, 2, v, rank, 12, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE),
           MPI_ERR_TRUNCATE);

    /* A contiguous type of the vector, built, then the vector freed: it still works. */
    OK(MPI_Type_contiguous(2, v, &c));
    OK(MPI_Type_free(&v));
    OK(MPI_Type_commit(&c));
    int size;
    OK(MPI_Type_size(c, &size));
    OK(MPI_Type_get_extent(c, &lb, &extent));
    CHECK(size == 8 * sizeof(double) && extent == 10 * sizeof(double), "nested %d %ld", size,
          (long)extent);
    memset(in, 0, sizeof in);
    self_exchange(rank, out, 1, c, in, 8, MPI_DOUBLE, &st);
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == want[i], "nested packed[%d] = %g", i, in[i]);

    /* An hvector with a byte stride: every fourth double. */
    OK(MPI_Type_create_hvector(3, 1, 4 * sizeof(double), MPI_DOUBLE, &h));
    OK(MPI_Type_commit(&h));
    memset(in, 0, sizeof in);
    self_exchange(rank, out, 1, h, in, 3, MPI_DOUBLE, &st);
    CHECK(in[0] == 0 && in[1] == 4 && in[2] == 8, "hvector %g %g %g", in[0], in[1], in[2]);

    /* A vector of pair types (padding inside each pair and between blocks). */
    struct {
        double d;
        int i;
    } pairs[4] = {{1.5, 1}, {2.5, 2}, {3.5, 3}, {4.5, 4}}, got[4];
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE_INT, &pair_vec));
    OK(MPI_Type_commit(&pair_vec));
    OK(MPI_Type_size(MPI_DOUBLE_INT, &size));
    OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent));
    CHECK(size == 12 && extent == sizeof pairs[0], "double_int %d %ld", size, (long)extent);
    memset(got, 0, sizeof got);
    OK(MPI_Sendrecv(pairs, 1, pair_vec, rank, 13, got, 2, MPI_DOUBLE_INT, rank, 13,
                    MPI_COMM_WORLD, &st));
    CHECK(got[0].d == 1.5 && got[0].i == 1 && got[1].d == 3.5 && got[1].i == 3, "pair vector");
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &count));
    CHECK(count == 2, "pairs %d", count);

    /* MPI_Irecv of a strided type, completed by MPI_Test; MPI_Sendrecv_replace with one. */
    MPI_Request req;
    int flag = 0;
    OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &v));
    OK(MPI_Type_commit(&v));
    for (int i = 0; i < 24; i++)
        in[i] = -1;
    OK(MPI_Irecv(in, 1, v, rank, 14, MPI_COMM_WORLD, &req));
    OK(MPI_Send(out + 10, 4, MPI_DOUBLE, rank, 14, MPI_COMM_WORLD));
    while (!flag)
        OK(MPI_Test(&req, &flag, &st));
    CHECK(req == MPI_REQUEST_NULL, "completed");
    for (int i = 0; i < 12; i++)
        CHECK(in[i] == (i % 3 == 0 ? 10 + i / 3 : -1), "irecv[%d] = %g", i, in[i]);
    double ring[12];
    for (int i = 0; i < 12; i++)
        ring[i] = 100 * rank + i;
    int size_;
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    int next = (rank + 1) % size_, prev = (rank + size_ - 1) % size_;
    OK(MPI_Sendrecv_replace(ring, 1, v, next, 15, prev, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 12; i++)
        CHECK(ring[i] == (i % 3 == 0 ? 100 * prev + i : 100 * rank + i), "replace[%d] = %g", i,
              ring[i]);
    /* A strided MPI_Isend to a peer, received contiguously. */
    OK(MPI_Isend(out, 1, v, next, 16, MPI_COMM_WORLD, &req));
    OK(MPI_Recv(in, 4, MPI_DOUBLE, prev, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(in[0] == 0 && in[1] == 3 && in[2] == 6 && in[3] == 9, "isend");
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&c));
    OK(MPI_Type_free(&h));
    OK(MPI_Type_free(&pair_vec));
}

/* Gather and scatter of derived types: a 2 x 6 array of doubles at rank 1 made of the 2 x 2
 * blocks of the three ranks (a subarray resized to 2 doubles, so that block r starts at
 * column 2r), with MPI_Gatherv, MPI_Gather (also in place), MPI_Scatterv and MPI_Scatter;
 * a strided receive type at the non-roots; pair types. */
static void rooted_types(int rank) {
    const int root = 1;
    double mine[4], global[12];
    MPI_Datatype block, column_block, strided;
    int sizes[2] = {2, 6}, subsizes[2] = {2, 2}, starts[2] = {0, 0};
    OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &block));
    OK(MPI_Type_create_resized(block, 0, 2 * sizeof(double), &column_block));
    OK(MPI_Type_commit(&column_block));
    MPI_Aint lb, extent;
    int size;
    OK(MPI_Type_get_extent(block, &lb, &extent));
    CHECK(extent == 12 * sizeof(double), "subarray extent %ld", (long)extent);
    OK(MPI_Type_get_extent(column_block, &lb, &extent));
    OK(MPI_Type_size(column_block, &size));
    CHECK(extent == 2 * sizeof(double) && size == 4 * sizeof(double), "resized %ld %d",
          (long)extent, size);
    OK(MPI_Type_free(&block));
    /* Fortran order: the first index varies fastest. In a 4 x 6 array (element (i, j) at
     * i + 4j), the 2 x 3 block at (1, 2) holds elements 9 10 13 14 17 18. */
    {
        int fsizes[2] = {4, 6}, fsub[2] = {2, 3}, fstarts[2] = {1, 2};
        double a[24], packed[6];
        MPI_Datatype fortran;
        for (int i = 0; i < 24; i++)
            a[i] = i;
        OK(MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_DOUBLE,
                                    &fortran));
        OK(MPI_Type_commit(&fortran));
        OK(MPI_Sendrecv(a, 1, fortran, rank, 21, packed, 6, MPI_DOUBLE, rank, 21, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        double want[6] = {9, 10, 13, 14, 17, 18};
        for (int i = 0; i < 6; i++)
            CHECK(packed[i] == want[i], "fortran subarray[%d] = %g", i, packed[i]);
        OK(MPI_Type_free(&fortran));
        int bad_sub[2] = {5, 1};
        EXPECT(MPI_Type_create_subarray(2, fsizes, bad_sub, fstarts, MPI_ORDER_C, MPI_DOUBLE,
                                        &fortran),
               MPI_ERR_ARG);
        EXPECT(MPI_Type_create_subarray(2, fsizes, fsub, fstarts, 3, MPI_DOUBLE, &fortran),
               MPI_ERR_ARG);
        EXPECT(MPI_Type_create_subarray(0, fsizes, fsub, fstarts, MPI_ORDER_C, MPI_DOUBLE,
                                        &fortran),
               MPI_ERR_ARG);
        EXPECT(MPI_Type_create_subarray(2, NULL, fsub, fstarts, MPI_ORDER_C, MPI_DOUBLE,
                                        &fortran),
               MPI_ERR_ARG);
        /* A negative extent is MPI: the upper bound below the lower one. */
        MPI_Aint lb, extent;
        OK(MPI_Type_create_resized(MPI_DOUBLE, 0, -8, &fortran));
        OK(MPI_Type_get_extent(fortran, &lb, &extent));
        CHECK(lb == 0 && extent == -8, "resized(0, -8): lb %ld extent %ld", (long)lb,
              (long)extent);
        OK(MPI_Type_free(&fortran));
    }
    for (int i = 0; i < 4; i++)
        mine[i] = rank * 10 + i; /* row-major 2 x 2: (0,0) (0,1) (1,0) (1,1) */
    int counts[3] = {1, 1, 1}, displs[3] = {0, 1, 2};
    for (int i = 0; i < 12; i++)
        global[i] = -1;
    OK(MPI_Gatherv(mine, 4, MPI_DOUBLE, global, counts, displs, column_block, root,
                   MPI_COMM_WORLD));
    if (rank == root)
        for (int row = 0; row < 2; row++)
            for (int col = 0; col < 6; col++)
                CHECK(global[row * 6 + col] == (col / 2) * 10 + row * 2 + col % 2,
                      "gatherv (%d,%d) = %g", row, col, global[row * 6 + col]);
    /* The same by MPI_Gather, then in place at the root. */
    for (int i = 0; i < 12; i++)
        global[i] = -1;
    OK(MPI_Gather(mine, 4, MPI_DOUBLE, global, 1, column_block, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int row = 0; row < 2; row++)
            for (int col = 0; col < 6; col++)
                CHECK(global[row * 6 + col] == (col / 2) * 10 + row * 2 + col % 2, "gather");
        for (int i = 0; i < 12; i++)
            global[i] = -1;
        global[2] = 99; /* the root's own block, in place */
        OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, global, 1, column_block, root,
                      MPI_COMM_WORLD));
        CHECK(global[0] == 0 && global[2] == 99 && global[3] == -1 && global[4] == 20,
              "in-place gather %g %g %g %g", global[0], global[2], global[3], global[4]);
    } else {
        OK(MPI_Gather(mine, 4, MPI_DOUBLE, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
    }
    /* Scatter the blocks back: each rank gets its 2 x 2 block, transposed by a strided
     * receive type (a vector of 2 blocks of 1, stride 2, twice: column-major). */
    for (int i = 0; i < 12; i++)
        global[i] = rank == root ? 100 + i : -1;
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &strided));
    MPI_Datatype transposed;
    OK(MPI_Type_create_resized(strided, 0, sizeof(double), &transposed));
    OK(MPI_Type_commit(&transposed));
    double got[4] = {-1, -1, -1, -1};
    OK(MPI_Scatterv(global, counts, displs, column_block, got, 2, transposed, root,
                    MPI_COMM_WORLD));
    /* Row-major block of rank r: 100 + {2r, 2r+1, 6+2r, 7+2r}; received transposed. */
    CHECK(got[0] == 100 + 2 * rank && got[2] == 101 + 2 * rank && got[1] == 106 + 2 * rank &&
              got[3] == 107 + 2 * rank,
          "scatterv %g %g %g %g", got[0], got[1], got[2], got[3]);
    double flat[4] = {-1, -1, -1, -1};
    OK(MPI_Scatter(global, 1, column_block, flat, 4, MPI_DOUBLE, root, MPI_COMM_WORLD));
    CHECK(flat[0] == 100 + 2 * rank && flat[3] == 107 + 2 * rank, "scatter %g %g", flat[0],
          flat[3]);
    if (rank == root) {
        OK(MPI_Scatter(global, 1, column_block, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                       MPI_COMM_WORLD));
        CHECK(global[0] == 100 && global[2] == 102, "in-place scatter left the root's data");
    } else {
        OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, flat, 4, MPI_DOUBLE, root, MPI_COMM_WORLD));
    }
    /* Every rank gets the whole array: MPI_Allgather, MPI_Allgatherv, in place. */
    for (int variant = 0; variant < 3; variant++) {
        for (int i = 0; i < 12; i++)
            global[i] = -1;
        if (variant == 0)
            OK(MPI_Allgather(mine, 4, MPI_DOUBLE, global, 1, column_block, MPI_COMM_WORLD));
        else if (variant == 1)
            OK(MPI_Allgatherv(mine, 4, MPI_DOUBLE, global, counts, displs, column_block,
                              MPI_COMM_WORLD));
        else {
            for (int i = 0; i < 4; i++)
                global[(i / 2) * 6 + 2 * rank + i % 2] = mine[i];
            OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, global, 1, column_block,
                             MPI_COMM_WORLD));
        }
        for (int row = 0; row < 2; row++)
            for (int col = 0; col < 6; col++)
                CHECK(global[row * 6 + col] == (col / 2) * 10 + row * 2 + col % 2,
                      "allgather variant %d (%d,%d) = %g", variant, row, col,
                      global[row * 6 + col]);
    }
    /* A derived send type: each rank sends its block column-major (2 of the resized vector). */
    OK(MPI_Allgather(mine, 2, transposed, global, 4, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int r = 0; r < 3; r++)
        CHECK(global[4 * r] == r * 10 && global[4 * r + 1] == r * 10 + 2 &&
                  global[4 * r + 2] == r * 10 + 1 && global[4 * r + 3] == r * 10 + 3,
              "allgather of a derived send type from %d", r);
    EXPECT(MPI_Allgather(mine, 1, transposed, global, 4, MPI_DOUBLE, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    /* All-to-all with an interleaved type: the block for rank r is elements r and r + 3 (a
     * vector of 2, stride 3, resized to one double). */
    {
        MPI_Datatype pick, interleaved;
        double sendbuf[6], recvbuf[6];
        int ones[3] = {1, 1, 1}, at[3] = {0, 1, 2}, twos[3] = {2, 2, 2}, even[3] = {0, 2, 4};
        OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &pick));
        OK(MPI_Type_create_resized(pick, 0, sizeof(double), &interleaved));
        OK(MPI_Type_commit(&interleaved));
        OK(MPI_Type_free(&pick));
        for (int variant = 0; variant < 2; variant++) {
            for (int i = 0; i < 6; i++) {
                sendbuf[i] = rank * 100 + i;
                recvbuf[i] = -1;
            }
            if (variant == 0)
                OK(MPI_Alltoall(sendbuf, 1, interleaved, recvbuf, 2, MPI_DOUBLE,
                                MPI_COMM_WORLD));
            else
                OK(MPI_Alltoallv(sendbuf, ones, at, interleaved, recvbuf, twos, even, MPI_DOUBLE,
                                 MPI_COMM_WORLD));
            for (int s = 0; s < 3; s++)
                CHECK(recvbuf[2 * s] == s * 100 + rank && recvbuf[2 * s + 1] == s * 100 + rank + 3,
                      "alltoall%s from %d: %g %g", variant ? "v" : "", s, recvbuf[2 * s],
                      recvbuf[2 * s + 1]);
        }
        /* The interleaved type on the receive side, and in place. */
        for (int r = 0; r < 3; r++) {
            sendbuf[2 * r] = rank * 100 + 10 * r;
            sendbuf[2 * r + 1] = rank * 100 + 10 * r + 1;
        }
        for (int i = 0; i < 6; i++)
            recvbuf[i] = -1;
        OK(MPI_Alltoall(sendbuf, 2, MPI_DOUBLE, recvbuf, 1, interleaved, MPI_COMM_WORLD));
        for (int s = 0; s < 3; s++)
            CHECK(recvbuf[s] == s * 100 + 10 * rank && recvbuf[s + 3] == s * 100 + 10 * rank + 1,
                  "alltoall into the interleaved type from %d", s);
        for (int r = 0; r < 3; r++) {
            recvbuf[r] = rank * 100 + 10 * r;
            recvbuf[r + 3] = rank * 100 + 10 * r + 1;
        }
        OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recvbuf, ones, at,
                         interleaved, MPI_COMM_WORLD));
        for (int s = 0; s < 3; s++)
            CHECK(recvbuf[s] == s * 100 + 10 * rank && recvbuf[s + 3] == s * 100 + 10 * rank + 1,
                  "in-place alltoallv of the interleaved type from %d", s);
        OK(MPI_Type_free(&interleaved));
    }
    /* Pair types: the root gathers one (value, rank) pair from each. */
    struct {
        double value;
        int index;
    } pair = {rank * 0.5, rank}, pairs[3];
    memset(pairs, 0, sizeof pairs);
    OK(MPI_Gather(&pair, 1, MPI_DOUBLE_INT, pairs, 1, MPI_DOUBLE_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < 3; r++)
            CHECK(pairs[r].value == r * 0.5 && pairs[r].index == r, "pair gather %d", r);
    /* Bad input on the derived path: no displacements. */
    if (rank == root) {
        EXPECT(MPI_Scatterv(global, counts, NULL, column_block, got, 2, transposed, root,
                            MPI_COMM_WORLD),
               MPI_ERR_ARG);
    }
    OK(MPI_Type_free(&strided));
    OK(MPI_Type_free(&transposed));
    OK(MPI_Type_free(&column_block));
}

/* Indexed types: the upper triangle of a 4 x 4 matrix (MPI_Type_indexed), every third int
 * (indexed_block), byte displacements (hindexed); their bounds; a resized lower bound. */
static void indexed_types(int rank) {
    double m[16], packed[10], back[16];
    MPI_Datatype upper, thirds, bytes, shifted;
    MPI_Aint lb, extent;
    int blocklens[4] = {4, 3, 2, 1}, displs[4] = {0, 5, 10, 15}, size;
    for (int i = 0; i < 16; i++)
        m[i] = rank * 100 + i;
    OK(MPI_Type_indexed(4, blocklens, displs, MPI_DOUBLE, &upper));
    OK(MPI_Type_commit(&upper));
    OK(MPI_Type_size(upper, &size));
    OK(MPI_Type_get_extent(upper, &lb, &extent));
    CHECK(size == 10 * (int)sizeof(double) && lb == 0 && extent == 16 * sizeof(double),
          "upper: size %d lb %ld extent %ld", size, (long)lb, (long)extent);
    OK(MPI_Sendrecv(m, 1, upper, rank, 41, packed, 10, MPI_DOUBLE, rank, 41, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    int want[10] = {0, 1, 2, 3, 5, 6, 7, 10, 11, 15};
    for (int i = 0; i < 10; i++)
        CHECK(packed[i] == rank * 100 + want[i], "upper[%d] = %g", i, packed[i]);
    /* Into the triangle of another matrix, the rest untouched; by MPI_Bcast too. */
    for (int i = 0; i < 16; i++)
        back[i] = -1;
    OK(MPI_Sendrecv(packed, 10, MPI_DOUBLE, rank, 42, back, 1, upper, rank, 42, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++)
        CHECK(back[i] == (i / 4 <= i % 4 ? rank * 100 + i : -1), "triangle[%d] = %g", i, back[i]);
    for (int i = 0; i < 16; i++)
        back[i] = rank == 0 ? i : -1;
    OK(MPI_Bcast(back, 1, upper, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 16; i++)
        CHECK(back[i] == (i / 4 <= i % 4 || rank == 0 ? i : -1), "bcast triangle[%d]", i);

    /* Every third int from the second: lb = 1 int, extent = 7 ints - 1. */
    int ints[12], got[8], third_displs[2] = {1, 4};
    for (int i = 0; i < 12; i++)
        ints[i] = 10 * rank + i;
    OK(MPI_Type_create_indexed_block(2, 2, third_displs, MPI_INT, &thirds));
    OK(MPI_Type_commit(&thirds));
    OK(MPI_Type_get_extent(thirds, &lb, &extent));
    CHECK(lb == sizeof(int) && extent == 5 * sizeof(int), "indexed_block lb %ld extent %ld",
          (long)lb, (long)extent);
    /* Two elements: the second starts one extent (5 ints) later: ints 1 2 4 5 | 6 7 9 10. */
    OK(MPI_Sendrecv(ints, 2, thirds, rank, 43, got, 8, MPI_INT, rank, 43, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    int want_thirds[8] = {1, 2, 4, 5, 6, 7, 9, 10};
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == 10 * rank + want_thirds[i], "indexed_block[%d] = %d", i, got[i]);

    /* Byte displacements: doubles 3 and 1, in that order. */
    int ones[2] = {1, 1};
    MPI_Aint byte_displs[2] = {3 * sizeof(double), sizeof(double)};
    OK(MPI_Type_create_hindexed(2, ones, byte_displs, MPI_DOUBLE, &bytes));
    OK(MPI_Type_commit(&bytes));
    OK(MPI_Sendrecv(m, 1, bytes, rank, 44, packed, 2, MPI_DOUBLE, rank, 44, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(packed[0] == rank * 100 + 3 && packed[1] == rank * 100 + 1, "hindexed order");
    OK(MPI_Type_get_extent(bytes, &lb, &extent));
    CHECK(lb == sizeof(double) && extent == 3 * sizeof(double), "hindexed bounds");

    /* A resized lower bound is reported; the data stays where it was. */
    OK(MPI_Type_create_resized(MPI_INT, 4, 12, &shifted));
    OK(MPI_Type_get_extent(shifted, &lb, &extent));
    CHECK(lb == 4 && extent == 12, "resized lb %ld extent %ld", (long)lb, (long)extent);
    OK(MPI_Type_free(&shifted));

    /* Bad input. */
    int negative[2] = {0, -1}, bad_len[2] = {1, -2};
    /* Negative displacements and lower bounds are MPI (data before the buffer pointer). */
    OK(MPI_Type_indexed(2, ones, negative, MPI_INT, &shifted));
    OK(MPI_Type_get_extent(shifted, &lb, &extent));
    CHECK(lb == -4 && extent == 8, "indexed {0, -1}: lb %ld extent %ld", (long)lb, (long)extent);
    OK(MPI_Type_free(&shifted));
    EXPECT(MPI_Type_indexed(2, bad_len, third_displs, MPI_INT, &shifted), MPI_ERR_COUNT);
    EXPECT(MPI_Type_indexed(-1, ones, third_displs, MPI_INT, &shifted), MPI_ERR_COUNT);
    EXPECT(MPI_Type_indexed(2, NULL, third_displs, MPI_INT, &shifted), MPI_ERR_ARG);
    EXPECT(MPI_Type_indexed(2, ones, third_displs, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_indexed(2, ones, third_displs, 999, &shifted), MPI_ERR_TYPE);
    EXPECT(MPI_Type_create_indexed_block(2, -1, third_displs, MPI_INT, &shifted), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_indexed_block(2, 1, NULL, MPI_INT, &shifted), MPI_ERR_ARG);
    MPI_Aint back_bytes[2] = {0, -8};
    OK(MPI_Type_create_hindexed(2, ones, back_bytes, MPI_INT, &shifted));
    OK(MPI_Type_get_extent(shifted, &lb, &extent));
    CHECK(lb == -8 && extent == 12, "hindexed {0, -8}: lb %ld extent %ld", (long)lb,
          (long)extent);
    OK(MPI_Type_free(&shifted));
    OK(MPI_Type_create_resized(MPI_INT, -4, 8, &shifted));
    OK(MPI_Type_get_extent(shifted, &lb, &extent));
    CHECK(lb == -4 && extent == 8, "resized(-4, 8): lb %ld extent %ld", (long)lb, (long)extent);
    OK(MPI_Type_free(&shifted));
    OK(MPI_Type_free(&upper));
    OK(MPI_Type_free(&thirds));
    OK(MPI_Type_free(&bytes));
}

/* MPI_Pack / MPI_Unpack / MPI_Pack_size: a message of an int, a strided vector and a pair,
 * packed, sent around the ring as MPI_PACKED and unpacked; bad input. */
static void packing(int rank) {
    int size_, psize, position = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    int next = (rank + 1) % size_, prev = (rank + size_ - 1) % size_;
    MPI_Datatype every_other;
    OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &every_other));
    OK(MPI_Type_commit(&every_other));
    struct {
        double value;
        int index;
    } pair = {rank + 0.25, rank}, got_pair;
    double six[6] = {rank, -1, rank + 1, -1, rank + 2, -1}, back[6] = {0, 7, 0, 7, 0, 7};
    int n = rank * 11, got_n;
    OK(MPI_Pack_size(1, every_other, MPI_COMM_WORLD, &psize));
    CHECK(psize == 24, "pack size of the vector %d", psize);
    OK(MPI_Pack_size(2, MPI_DOUBLE_INT, MPI_COMM_WORLD, &psize));
    CHECK(psize == 24, "pack size of two pairs %d", psize);
    char packed[64];
    OK(MPI_Pack(&n, 1, MPI_INT, packed, sizeof packed, &position, MPI_COMM_WORLD));
    OK(MPI_Pack(six, 1, every_other, packed, sizeof packed, &position, MPI_COMM_WORLD));
    OK(MPI_Pack(&pair, 1, MPI_DOUBLE_INT, packed, sizeof packed, &position, MPI_COMM_WORLD));
    CHECK(position == 4 + 24 + 12, "position %d", position);
    char received[64];
    MPI_Status st;
    OK(MPI_Sendrecv(packed, position, MPI_PACKED, next, 31, received, sizeof received,
                    MPI_PACKED, prev, 31, MPI_COMM_WORLD, &st));
    int len;
    OK(MPI_Get_count(&st, MPI_PACKED, &len));
    CHECK(len == 40, "received %d packed bytes", len);
    position = 0;
    OK(MPI_Unpack(received, len, &position, &got_n, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(received, len, &position, back, 1, every_other, MPI_COMM_WORLD));
    OK(MPI_Unpack(received, len, &position, &got_pair, 1, MPI_DOUBLE_INT, MPI_COMM_WORLD));
    CHECK(position == 40, "unpacked to %d", position);
    CHECK(got_n == prev * 11, "int %d", got_n);
    CHECK(back[0] == prev && back[2] == prev + 1 && back[4] == prev + 2 && back[1] == 7 &&
              back[3] == 7 && back[5] == 7,
          "vector %g %g %g %g", back[0], back[1], back[2], back[3]);
    CHECK(got_pair.value == prev + 0.25 && got_pair.index == prev, "pair");
    /* Bad input. */
    position = 30;
    EXPECT(MPI_Pack(six, 1, every_other, packed, 40, &position, MPI_COMM_WORLD),
           MPI_ERR_TRUNCATE);
    CHECK(position == 30, "a failed pack moved the position to %d", position);
    position = -1;
    EXPECT(MPI_Pack(&n, 1, MPI_INT, packed, 40, &position, MPI_COMM_WORLD), MPI_ERR_ARG);
    position = 0;
    EXPECT(MPI_Pack(&n, 1, MPI_INT, packed, 40, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    EXPECT(MPI_Pack(&n, -1, MPI_INT, packed, 40, &position, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Pack(&n, 1, 4321, packed, 40, &position, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Pack(&n, 1, MPI_INT, NULL, 40, &position, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Pack(&n, 1, MPI_INT, packed, 40, &position, 12345), MPI_ERR_COMM);
    position = 36;
    EXPECT(MPI_Unpack(received, 40, &position, back, 1, every_other, MPI_COMM_WORLD),
           MPI_ERR_TRUNCATE);
    EXPECT(MPI_Unpack(received, -4, &position, &got_n, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
    EXPECT(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
    EXPECT(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Pack_size(1 << 30, MPI_DOUBLE, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
    OK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");

    /* A 1 x 3 grid, periodic in y. */
    int dims[2] = {1, 3}, periods[2] = {0, 1}, src, dst;
    MPI_Comm cart, dup, small, line, none, point;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    OK(MPI_Cart_shift(cart, 1, 4, &src, &dst)); /* 4 steps around 3 ranks: one step */
    CHECK(dst == (rank + 1) % 3 && src == (rank + 2) % 3, "shift by 4: %d %d", src, dst);
    OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "a dimension of 1, not periodic");
    OK(MPI_Cart_shift(cart, 1, 0, &src, &dst));
    CHECK(src == rank && dst == rank, "shift by 0");
    /* A duplicate keeps the grid; a split does not. */
    int ndims, status_;
    OK(MPI_Comm_dup(cart, &dup));
    OK(MPI_Cartdim_get(dup, &ndims));
    CHECK(ndims == 2, "dup ndims %d", ndims);
    OK(MPI_Comm_split(cart, 0, rank, &line));
    OK(MPI_Topo_test(line, &status_));
    CHECK(status_ == MPI_UNDEFINED, "a split has no grid");
    /* Keep nothing: a communicator of one rank with 0 dimensions. */
    int keep_none[2] = {0, 0};
    OK(MPI_Cart_sub(cart, keep_none, &point));
    OK(MPI_Comm_size(point, &size));
    OK(MPI_Cartdim_get(point, &ndims));
    CHECK(size == 1 && ndims == 0, "keep nothing: size %d, ndims %d", size, ndims);
    /* A grid smaller than the communicator: the rest get MPI_COMM_NULL. */
    int two[1] = {2}, open_[1] = {0};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, two, open_, 0, &small));
    CHECK((rank < 2) == (small != MPI_COMM_NULL), "rank %d in the 2-grid: %d", rank,
          small != MPI_COMM_NULL);
    if (small != MPI_COMM_NULL) {
        OK(MPI_Cart_shift(small, 0, 1, &src, &dst));
        CHECK(src == (rank == 0 ? MPI_PROC_NULL : 0) && dst == (rank == 0 ? 1 : MPI_PROC_NULL),
              "line shift %d %d", src, dst);
        OK(MPI_Comm_free(&small));
    }
    /* Zero dimensions: a grid of one point. */
    OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &none));
    CHECK((rank == 0) == (none != MPI_COMM_NULL), "0-d grid at rank %d", rank);
    if (none != MPI_COMM_NULL)
        OK(MPI_Comm_free(&none));

    grid_errors(cart);
    type_errors(rank);
    type_data(rank);
    rooted_types(rank);
    packing(rank);
    indexed_types(rank);

    OK(MPI_Comm_free(&point));
    OK(MPI_Comm_free(&line));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&cart));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* User reduction operations (MPI_Op_create, MPI_Op_free, MPI_Op_commutative) and
 * MPI_Get_elements, on 4 ranks (at least 3).
 * - A non-commutative operation, the 2x2 integer matrix product on a contiguous type of 4 ints,
 *   through MPI_Allreduce, MPI_Reduce (root not 0), MPI_Scan, MPI_Exscan, MPI_Iallreduce, with
 *   MPI_IN_PLACE where MPI allows it; each result is checked against the product computed here
 *   in rank order (M0 M1 ... Mn-1). The function calls MPI_Type_size on its datatype: it runs
 *   without the library's lock.
 * - Another one on MPI_INT, decimal concatenation (12 op 3 = 123), through
 *   MPI_Reduce_scatter_block (and in place) and MPI_Reduce_scatter, and on a strided vector
 *   type (the gaps of the receive buffer stay as they were).
 * - A commutative one (a sum written by the program), on 3 ints and on 40000;
 *   MPI_Op_commutative of each and of MPI_SUM.
 * - MPI_REPLACE and MPI_NO_OP exist (for naming; reductions refuse them with MPI_ERR_OP;
 *   MPI_Op_commutative says 0).
 * - Bad input: MPI_Op_free of MPI_SUM, of MPI_OP_NULL and of a freed operation, a freed
 *   operation in a reduction and in MPI_Op_commutative (MPI_ERR_OP), a NULL function (MPI_ERR_ARG).
 * - MPI_Get_elements on messages of the contiguous type, a whole number of elements and not.
 * - Rank 2 dies: a user-operation all-reduce returns MPIX_ERR_PROC_FAILED at every survivor
 *   until MPI_Comm_validate_global, then gives the survivors' product in rank order (MPI_Allreduce,
 *   MPI_Scan, MPI_Reduce). */
#include "ft_common.h"
#include <string.h>

#define VICTIM 2

static MPI_Datatype mat; /* 4 ints: a 2x2 matrix, row-major */
static int matmul_calls;

/* out = a b (out may be b). */
static void product(const int *a, const int *b, int *out) {
    int p[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(out, p, sizeof p);
}

/* inout = in inout, matrix by matrix. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    int size = -1;
    CHECK(*datatype == mat, "matmul called with datatype %d", *datatype);
    OK(MPI_Type_size(*datatype, &size));
    CHECK(size == 4 * (int)sizeof(int), "MPI_Type_size in the user function: %d", size);
    for (int i = 0; i < *len; i++)
        product((int *)in + 4 * i, (int *)inout + 4 * i, (int *)inout + 4 * i);
    matmul_calls++;
}

/* Decimal concatenation of positive ints: associative, not commutative. */
static int concat(int a, int b) {
    int shift = 1;
    while (shift <= b)
        shift *= 10;
    return a * shift + b;
}

static void concat_fn(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    (void)datatype;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = concat(((int *)in)[i], ((int *)inout)[i]);
}

/* Concatenation on a vector type: element k's data is ints 3k and 3k+2 (a gap at 3k+1). */
static void concat_vector_fn(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    (void)datatype;
    for (int i = 0; i < *len; i++) {
        int *a = (int *)in + 3 * i, *b = (int *)inout + 3 * i;
        b[0] = concat(a[0], b[0]);
        b[2] = concat(a[2], b[2]);
    }
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    CHECK(*datatype == MPI_INT, "sum_fn: datatype %d", *datatype);
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Rank r's matrix number k (of 2): neither commutes with the others in general. */
static void matrix_of(int r, int k, int *m) {
    if (k == 0) {
        m[0] = r + 1, m[1] = 1, m[2] = 1, m[3] = 0;
    } else {
        m[0] = 1, m[1] = r + 2, m[2] = r, m[3] = 1;
    }
}

static int alive(int r, int dead) { return r != dead; }

/* The product M_lo ... M_hi (ranks other than `dead`) of both matrices into want[8]; 0 if no
 * rank contributes. */
static int ordered_product(int lo, int hi, int dead, int *want) {
    int any = 0;
    for (int r = lo; r <= hi; r++) {
        if (!alive(r, dead))
            continue;
        for (int k = 0; k < 2; k++) {
            int m[4];
            matrix_of(r, k, m);
            if (any)
                product(want + 4 * k, m, want + 4 * k);
            else
                memcpy(want + 4 * k, m, sizeof m);
        }
        any = 1;
    }
    return any;
}

static void check_matrices(const char *what, const int *got, const int *want) {
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == want[i], "%s: entry %d is %d, expected %d", what, i, got[i], want[i]);
}

static void mine(int rank, int *m) {
    matrix_of(rank, 0, m);
    matrix_of(rank, 1, m + 4);
}

/* The non-commutative product through each reduction; `dead` is a recognized dead rank or -1. */
static void matrix_reductions(MPI_Op op, int rank, int size, int dead) {
    int send[8], got[8], want[8];
    mine(rank, send);

    /* MPI_Allreduce, and in place. */
    memset(got, 0, sizeof got);
    OK(MPI_Allreduce(send, got, 2, mat, op, MPI_COMM_WORLD));
    ordered_product(0, size - 1, dead, want);
    check_matrices("allreduce", got, want);
    mine(rank, got);
    OK(MPI_Allreduce(MPI_IN_PLACE, got, 2, mat, op, MPI_COMM_WORLD));
    check_matrices("allreduce in place", got, want);

    /* MPI_Reduce to the last rank, then in place at rank 1. */
    int root = size - 1;
    memset(got, 0, sizeof got);
    OK(MPI_Reduce(send, rank == root ? got : NULL, 2, mat, op, root, MPI_COMM_WORLD));
    if (rank == root)
        check_matrices("reduce", got, want);
    if (rank == 1) {
        mine(rank, got);
        OK(MPI_Reduce(MPI_IN_PLACE, got, 2, mat, op, 1, MPI_COMM_WORLD));
        check_matrices("reduce in place", got, want);
    } else {
        OK(MPI_Reduce(send, NULL, 2, mat, op, 1, MPI_COMM_WORLD));
    }

    /* MPI_Scan, and in place. */
    ordered_product(0, rank, dead, want);
    memset(got, 0, sizeof got);
    OK(MPI_Scan(send, got, 2, mat, op, MPI_COMM_WORLD));
    check_matrices("scan", got, want);
    mine(rank, got);
    OK(MPI_Scan(MPI_IN_PLACE, got, 2, mat, op, MPI_COMM_WORLD));
    check_matrices("scan in place", got, want);

    /* MPI_Exscan: the first contributing rank's buffer is left as it was. */
    for (int i = 0; i < 8; i++)
        got[i] = -7;
    OK(MPI_Exscan(send, got, 2, mat, op, MPI_COMM_WORLD));
    if (ordered_product(0, rank - 1, dead, want)) {
        check_matrices("exscan", got, want);
    } else {
        for (int i = 0; i < 8; i++)
            CHECK(got[i] == -7, "exscan at the first rank wrote entry %d: %d", i, got[i]);
    }

    /* MPI_Iallreduce. */
    MPI_Request request;
    memset(got, 0, sizeof got);
    OK(MPI_Iallreduce(send, got, 2, mat, op, MPI_COMM_WORLD, &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    ordered_product(0, size - 1, dead, want);
    check_matrices("iallreduce", got, want);
}

int main(int argc, char **argv) {
    int rank, size, failed, flag = -1;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 3 && size <= 9, "size %d", size);
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));

    MPI_Op matop, concat_op, sum_op;
    OK(MPI_Op_create(matmul, 0, &matop));
    OK(MPI_Op_create(concat_fn, 0, &concat_op));
    OK(MPI_Op_create(sum_fn, 1, &sum_op));
    OK(MPI_Op_commutative(matop, &flag));
    CHECK(flag == 0, "matop commutative: %d", flag);
    OK(MPI_Op_commutative(sum_op, &flag));
    CHECK(flag == 1, "sum_op commutative: %d", flag);
    OK(MPI_Op_commutative(MPI_SUM, &flag));
    CHECK(flag == 1, "MPI_SUM commutative: %d", flag);

    /* MPI_Reduce_local: inout = in op inout, on this rank alone. */
    {
        int a[8] = {1, 2, 3, 4, 0, 1, 1, 0}, b[8] = {2, 0, 1, 3, 5, 6, 7, 8}, want[8];
        product(a, b, want);
        product(a + 4, b + 4, want + 4);
        OK(MPI_Reduce_local(a, b, 2, mat, matop));
        check_matrices("Reduce_local matop", b, want);
        int x[3] = {1, 5, -2}, y[3] = {10, 1, 4};
        OK(MPI_Reduce_local(x, y, 3, MPI_INT, MPI_SUM));
        CHECK(y[0] == 11 && y[1] == 6 && y[2] == 2, "Reduce_local SUM %d %d %d", y[0], y[1],
              y[2]);
        double d = 2.5, e = 1.0;
        OK(MPI_Reduce_local(&d, &e, 1, MPI_DOUBLE, MPI_MAX));
        CHECK(e == 2.5, "Reduce_local MAX %g", e);
        float f = 1, g = 2;
        EXPECT(MPI_Reduce_local(&f, &g, 1, MPI_FLOAT, MPI_BAND), MPI_ERR_OP);
        EXPECT(MPI_Reduce_local(a, b, 1, mat, MPI_SUM), MPI_ERR_TYPE);
        EXPECT(MPI_Reduce_local(x, y, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
        EXPECT(MPI_Reduce_local(x, y, 1, MPI_INT, 9999), MPI_ERR_OP);
        OK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
    }

    matrix_reductions(matop, rank, size, -1);
    CHECK(matmul_calls > 0 || rank == 0, "rank %d never combined", rank);

    /* Concatenation on MPI_INT: MPI_Reduce_scatter_block, in place, and MPI_Reduce_scatter. */
    int send[18], got[18], want;
    for (int i = 0; i < 2 * size; i++)
        send[i] = (rank + i) % 9 + 1;
    memset(got, 0, sizeof got);
    OK(MPI_Reduce_scatter_block(send, got, 2, MPI_INT, concat_op, MPI_COMM_WORLD));
    for (int j = 0; j < 2; j++) {
        int i = 2 * rank + j;
        want = 0;
        for (int r = 0; r < size; r++)
            want = r == 0 ? (r + i) % 9 + 1 : concat(want, (r + i) % 9 + 1);
        CHECK(got[j] == want, "reduce_scatter_block: element %d is %d, expected %d", j, got[j],
              want);
    }
    memcpy(got, send, sizeof send);
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, got, 2, MPI_INT, concat_op, MPI_COMM_WORLD));
    for (int j = 0; j < 2; j++) {
        int i = 2 * rank + j;
        want = 0;
        for (int r = 0; r < size; r++)
            want = r == 0 ? (r + i) % 9 + 1 : concat(want, (r + i) % 9 + 1);
        CHECK(got[j] == want, "reduce_scatter_block in place: %d, expected %d", got[j], want);
    }
    int counts[9], before = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r % 2 + 1; /* 1, 2, 1, 2, ... */
        if (r < rank)
            before += counts[r];
    }
    memset(got, 0, sizeof got);
    OK(MPI_Reduce_scatter(send, got, counts, MPI_INT, concat_op, MPI_COMM_WORLD));
    for (int j = 0; j < counts[rank]; j++) {
        int i = before + j;
        want = 0;
        for (int r = 0; r < size; r++)
            want = r == 0 ? (r + i) % 9 + 1 : concat(want, (r + i) % 9 + 1);
        CHECK(got[j] == want, "reduce_scatter: element %d is %d, expected %d", j, got[j], want);
    }

    /* Concatenation on a strided type (2 ints with a gap: extent 3 ints), the gap of the result
     * untouched. */
    MPI_Datatype strided;
    MPI_Op concat_vector;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    OK(MPI_Op_create(concat_vector_fn, 0, &concat_vector));
    int vsend[6], vgot[6];
    for (int k = 0; k < 2; k++) {
        vsend[3 * k] = rank + 1, vsend[3 * k + 1] = -1, vsend[3 * k + 2] = size - rank;
        vgot[3 * k] = 0, vgot[3 * k + 1] = 55, vgot[3 * k + 2] = 0;
    }
    OK(MPI_Allreduce(vsend, vgot, 2, strided, concat_vector, MPI_COMM_WORLD));
    int up = 0, down = 0;
    for (int r = 0; r < size; r++) {
        up = r == 0 ? 1 : concat(up, r + 1);
        down = r == 0 ? size : concat(down, size - r);
    }
    for (int k = 0; k < 2; k++) {
        CHECK(vgot[3 * k] == up && vgot[3 * k + 2] == down, "strided: %d %d, expected %d %d",
              vgot[3 * k], vgot[3 * k + 2], up, down);
        CHECK(vgot[3 * k + 1] == 55, "strided: the gap was written: %d", vgot[3 * k + 1]);
    }
    OK(MPI_Op_free(&concat_vector));
    OK(MPI_Type_free(&strided));

    /* A commutative user operation. */
    int one[3] = {rank, 1, -rank}, total[3];
    OK(MPI_Allreduce(one, total, 3, MPI_INT, sum_op, MPI_COMM_WORLD));
    CHECK(total[0] == size * (size - 1) / 2 && total[1] == size &&
              total[2] == -size * (size - 1) / 2,
          "user sum: %d %d %d", total[0], total[1], total[2]);

    /* A large vector (past the size where the runtime's commutative all-reduce would cut it in
     * chunks): whole elements still reach the function. */
    enum { BIG = 40000 };
    static int big[BIG], big_sum[BIG];
    for (int i = 0; i < BIG; i++)
        big[i] = rank * BIG + i;
    OK(MPI_Allreduce(big, big_sum, BIG, MPI_INT, sum_op, MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++)
        CHECK(big_sum[i] == BIG * size * (size - 1) / 2 + size * i, "big sum %d: %d", i,
              big_sum[i]);

    /* Bad input. */
    MPI_Op op = MPI_SUM, freed;
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    CHECK(op == MPI_SUM, "a refused MPI_Op_free changed the handle");
    op = MPI_OP_NULL;
    EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    EXPECT(MPI_Op_free(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    EXPECT(MPI_Op_create(sum_fn, 1, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Op_commutative(MPI_OP_NULL, &flag), MPI_ERR_OP);
    /* The one-sided operations are named, distinct, and no reduction takes them. */
    CHECK(MPI_REPLACE != MPI_OP_NULL && MPI_NO_OP != MPI_OP_NULL && MPI_REPLACE != MPI_NO_OP,
          "MPI_REPLACE %d, MPI_NO_OP %d", MPI_REPLACE, MPI_NO_OP);
    {
        int x = 1, y = 0;
        EXPECT(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_NO_OP), MPI_ERR_OP);
        OK(MPI_Op_commutative(MPI_REPLACE, &flag));
        CHECK(flag == 0, "MPI_REPLACE commutative: %d", flag);
        OK(MPI_Op_commutative(MPI_NO_OP, &flag));
        CHECK(flag == 0, "MPI_NO_OP commutative: %d", flag);
    }
    EXPECT(MPI_Op_commutative(sum_op, NULL), MPI_ERR_ARG);
    OK(MPI_Op_create(sum_fn, 1, &op));
    freed = op;
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free left %d", op);
    EXPECT(MPI_Op_free(&freed), MPI_ERR_OP);
    EXPECT(MPI_Op_commutative(freed, &flag), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(one, total, 3, MPI_INT, freed, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce(one, total, 3, MPI_INT, freed, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(one, total, 3, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);

    /* MPI_Get_elements: 3 matrices, then 6 ints received as matrices (1.5 of them). */
    if (rank == 0) {
        int data[12];
        for (int i = 0; i < 12; i++)
            data[i] = i;
        OK(MPI_Send(data, 3, mat, 1, 5, MPI_COMM_WORLD));
        OK(MPI_Send(data, 6, MPI_INT, 1, 6, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int data[12], count = -1;
        MPI_Status status;
        OK(MPI_Recv(data, 3, mat, 0, 5, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, mat, &count));
        CHECK(count == 3, "MPI_Get_count of 3 matrices: %d", count);
        OK(MPI_Get_elements(&status, mat, &count));
        CHECK(count == 12, "MPI_Get_elements of 3 matrices: %d", count);
        OK(MPI_Get_elements(&status, MPI_INT, &count));
        CHECK(count == 12, "MPI_Get_elements as MPI_INT: %d", count);
        OK(MPI_Recv(data, 3, mat, 0, 6, MPI_COMM_WORLD, &status));
        OK(MPI_Get_count(&status, mat, &count));
        CHECK(count == MPI_UNDEFINED, "MPI_Get_count of 1.5 matrices: %d", count);
        OK(MPI_Get_elements(&status, mat, &count));
        CHECK(count == 6, "MPI_Get_elements of 1.5 matrices: %d", count);
        OK(MPI_Get_elements(&status, MPI_DOUBLE, &count));
        CHECK(count == 3, "MPI_Get_elements of 24 bytes as MPI_DOUBLE: %d", count);
        OK(MPI_Get_elements(&status, MPI_2INT, &count));
        CHECK(count == 6, "MPI_Get_elements of 24 bytes as MPI_2INT: %d", count);
        CHECK(data[5] == 5, "received %d", data[5]);
        EXPECT(MPI_Get_elements(&status, mat, NULL), MPI_ERR_ARG);
    }

    /* Rank VICTIM dies: MPIX_ERR_PROC_FAILED at every survivor until validate_global, then
     * the survivors' product in rank order. */
    ft_sync_then_die(MPI_COMM_WORLD, VICTIM);
    ft_wait_detected(MPI_COMM_WORLD, VICTIM);
    int msend[8], mgot[8];
    mine(rank, msend);
    EXPECT(MPI_Allreduce(msend, mgot, 2, mat, matop, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    MPI_Request request;
    OK(MPI_Iallreduce(msend, mgot, 2, mat, matop, MPI_COMM_WORLD, &request));
    EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "num_failed = %d", failed);
    matrix_reductions(matop, rank, size, VICTIM);
    printf("rank %d: user operations over the survivors\n", rank);

    OK(MPI_Op_free(&matop));
    OK(MPI_Op_free(&concat_op));
    OK(MPI_Op_free(&sum_op));
    OK(MPI_Type_free(&mat));
    return ft_finish();
}

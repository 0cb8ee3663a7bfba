/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A 2D Jacobi heat stencil on a Cartesian communicator, as an application writes it:
 * MPI_Dims_create + MPI_Cart_create (periodic in y, fixed walls in x), neighbours from
 * MPI_Cart_shift, row halos as an MPI_Type_contiguous and column halos as an MPI_Type_vector
 * (a strided column of the local array), exchanged with MPI_Sendrecv on even iterations and
 * MPI_Irecv / MPI_Isend / MPI_Waitall on odd ones (always MPI_Sendrecv with "kill"), and the residual by MPI_Allreduce.
 *
 * Every rank also runs the same iterations sequentially on the whole grid and checks that its
 * block equals that reference exactly (the update is the same arithmetic in the same order),
 * and that the residual matches. It checks the grid queries (MPI_Cart_get, _coords, _rank,
 * MPI_Cartdim_get, MPI_Topo_test), row and column communicators from MPI_Cart_sub, the
 * datatypes' extents and sizes, and rank 0's copy of the whole grid, collected by MPI_Gatherv
 * with each rank's interior sent as an MPI_Type_create_subarray of its local array.
 *
 * With argument "kill", it iterates long enough for rtrun to kill a rank inside the loop
 * (--kill R@call:K): the rank that sees the failure revokes the communicator (the ULFM
 * pattern), so every survivor leaves the loop with MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED,
 * never hangs; they then agree on the failure with MPI_Comm_validate_global, find the grid
 * unchanged (MPI_Cart_shift still returns the failed neighbour) and shrink. */
#include "ft_common.h"

#include <string.h>

#define NX 25 /* global interior rows (x), fixed walls above and below */
#define NY 14 /* global columns (y), periodic */
#define TOP 1.0
#define BOTTOM 0.25

static double initial(int i, int j) { return (double)((i * 7 + j * 3) % 11) / 10.0; }

/* First row of block `c` of `n` rows split over `parts` (the first n % parts get one more). */
static int block_start(int n, int parts, int c) {
    int base = n / parts, extra = n % parts;
    return c * base + (c < extra ? c : extra);
}

static int block_len(int n, int parts, int c) { return n / parts + (c < n % parts ? 1 : 0); }

/* The sequential reference: `iters` Jacobi steps on the whole grid; returns the last step's
 * residual (sum of squared changes). g holds (NX+2) x NY values, rows 0 and NX+1 the walls. */
static double reference(double *g, int iters) {
    double *next = malloc(sizeof(double) * (NX + 2) * NY);
    double residual = 0;
    memcpy(next, g, sizeof(double) * (NX + 2) * NY);
    for (int it = 0; it < iters; it++) {
        residual = 0;
        for (int i = 1; i <= NX; i++)
            for (int j = 0; j < NY; j++) {
                double left = g[i * NY + (j + NY - 1) % NY], right = g[i * NY + (j + 1) % NY];
                double v = 0.25 * (g[(i - 1) * NY + j] + g[(i + 1) * NY + j] + left + right);
                residual += (v - g[i * NY + j]) * (v - g[i * NY + j]);
                next[i * NY + j] = v;
            }
        memcpy(g, next, sizeof(double) * (NX + 2) * NY);
    }
    free(next);
    return residual;
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    int kill_mode = argc > 1 && strcmp(argv[1], "kill") == 0;
    int iters = kill_mode ? 3000 : 60;

    int dims[2] = {0, 0}, periods[2] = {0, 1};
    OK(MPI_Dims_create(size, 2, dims));
    MPI_Comm cart;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    CHECK(cart != MPI_COMM_NULL, "every rank is in the grid");
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);

    /* The grid queries. */
    int me, status_, ndims, gdims[2], gperiods[2], coords[2], back;
    OK(MPI_Comm_rank(cart, &me));
    OK(MPI_Topo_test(cart, &status_));
    CHECK(status_ == MPI_CART, "topo_test %d", status_);
    OK(MPI_Topo_test(MPI_COMM_WORLD, &status_));
    CHECK(status_ == MPI_UNDEFINED, "world topo_test %d", status_);
    OK(MPI_Cartdim_get(cart, &ndims));
    CHECK(ndims == 2, "ndims %d", ndims);
    OK(MPI_Cart_get(cart, 2, gdims, gperiods, coords));
    CHECK(gdims[0] == dims[0] && gdims[1] == dims[1], "dims %dx%d", gdims[0], gdims[1]);
    CHECK(gperiods[0] == 0 && gperiods[1] == 1, "periods %d %d", gperiods[0], gperiods[1]);
    CHECK(coords[0] == me / dims[1] && coords[1] == me % dims[1], "row-major coords");
    for (int r = 0; r < size; r++) {
        int c[2];
        OK(MPI_Cart_coords(cart, r, 2, c));
        OK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == r, "rank %d -> (%d,%d) -> %d", r, c[0], c[1], back);
    }
    int wrapped[2] = {coords[0], coords[1] + dims[1]}; /* periodic in y: wraps to me */
    OK(MPI_Cart_rank(cart, wrapped, &back));
    CHECK(back == me, "wrapped coords give %d", back);

    int up, down, left, right;
    OK(MPI_Cart_shift(cart, 0, 1, &up, &down));
    OK(MPI_Cart_shift(cart, 1, 1, &left, &right));
    CHECK((coords[0] == 0) == (up == MPI_PROC_NULL), "up %d at row %d", up, coords[0]);
    CHECK((coords[0] == dims[0] - 1) == (down == MPI_PROC_NULL), "down %d", down);
    CHECK(left != MPI_PROC_NULL && right != MPI_PROC_NULL, "y is periodic");
    {
        int c[2];
        OK(MPI_Cart_coords(cart, right, 2, c));
        CHECK(c[0] == coords[0] && c[1] == (coords[1] + 1) % dims[1], "right neighbour");
    }

    /* Row and column communicators. */
    MPI_Comm row, column;
    int keep_y[2] = {0, 1}, keep_x[2] = {1, 0}, rsize, csize, rrank, sub_dims[2], sub_periods[2],
        sub_coords[2];
    OK(MPI_Cart_sub(cart, keep_y, &row));
    OK(MPI_Cart_sub(cart, keep_x, &column));
    OK(MPI_Comm_size(row, &rsize));
    OK(MPI_Comm_size(column, &csize));
    OK(MPI_Comm_rank(row, &rrank));
    CHECK(rsize == dims[1] && csize == dims[0], "sub sizes %d %d", rsize, csize);
    CHECK(rrank == coords[1], "row rank %d", rrank);
    OK(MPI_Cartdim_get(row, &ndims));
    CHECK(ndims == 1, "row ndims %d", ndims);
    OK(MPI_Cart_get(row, 2, sub_dims, sub_periods, sub_coords));
    CHECK(sub_dims[0] == dims[1] && sub_periods[0] == 1 && sub_coords[0] == coords[1],
          "row grid %d %d %d", sub_dims[0], sub_periods[0], sub_coords[0]);
    int sum = 0;
    OK(MPI_Allreduce(&coords[1], &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(sum == dims[1] * (dims[1] - 1) / 2, "row sum %d", sum);
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, column));
    {
        int want = 0;
        for (int r = 0; r < dims[0]; r++)
            want += r * dims[1] + coords[1];
        CHECK(sum == want, "column sum %d, want %d", sum, want);
    }
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&column));

    /* The local block, with a halo of one cell on each side. */
    int nx = block_len(NX, dims[0], coords[0]), ny = block_len(NY, dims[1], coords[1]);
    int x0 = block_start(NX, dims[0], coords[0]), y0 = block_start(NY, dims[1], coords[1]);
    int w = ny + 2;
    double *u = calloc((size_t)(nx + 2) * w, sizeof(double));
    double *v = calloc((size_t)(nx + 2) * w, sizeof(double));
#define U(a, i, j) (a)[(i) * w + (j)]
    for (int i = 0; i < nx + 2; i++)
        for (int j = 1; j <= ny; j++) {
            int gi = x0 + i; /* global row, walls at 0 and NX+1 */
            double value = gi == 0 ? TOP : gi == NX + 1 ? BOTTOM : initial(gi, y0 + j - 1);
            U(u, i, j) = U(v, i, j) = value;
        }

    MPI_Datatype row_type, column_type;
    OK(MPI_Type_contiguous(ny, MPI_DOUBLE, &row_type));
    OK(MPI_Type_vector(nx, 1, w, MPI_DOUBLE, &column_type));
    OK(MPI_Type_commit(&row_type));
    OK(MPI_Type_commit(&column_type));
    int tsize;
    MPI_Aint lb, extent;
    OK(MPI_Type_size(column_type, &tsize));
    CHECK(tsize == nx * (int)sizeof(double), "column size %d", tsize);
    OK(MPI_Type_get_extent(column_type, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)(((nx - 1) * w + 1) * sizeof(double)),
          "column extent %ld", (long)extent);
    OK(MPI_Type_get_extent(row_type, &lb, &extent));
    CHECK(extent == (MPI_Aint)(ny * sizeof(double)), "row extent %ld", (long)extent);

    double residual = 0;
    int it, rc = MPI_SUCCESS;
    for (it = 0; it < iters; it++) {
        MPI_Status st;
        if (it % 2 == 0 || kill_mode) {
            /* Rows: my first row goes up, the row below comes into the bottom halo. */
            rc = MPI_Sendrecv(&U(u, 1, 1), 1, row_type, up, 0, &U(u, nx + 1, 1), 1, row_type, down,
                              0, cart, &st);
            if (rc == MPI_SUCCESS)
                rc = MPI_Sendrecv(&U(u, nx, 1), 1, row_type, down, 1, &U(u, 0, 1), 1, row_type,
                                  up, 1, cart, MPI_STATUS_IGNORE);
            /* Columns: strided, one vector element each. */
            if (rc == MPI_SUCCESS)
                rc = MPI_Sendrecv(&U(u, 1, 1), 1, column_type, left, 2, &U(u, 1, ny + 1), 1,
                                  column_type, right, 2, cart, &st);
            if (rc == MPI_SUCCESS) {
                int n = -1;
                OK(MPI_Get_count(&st, column_type, &n));
                CHECK(n == 1, "got %d columns", n);
                OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
                CHECK(n == nx, "got %d doubles", n);
                rc = MPI_Sendrecv(&U(u, 1, ny), 1, column_type, right, 3, &U(u, 1, 0), 1,
                                  column_type, left, 3, cart, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Request reqs[8];
            OK(MPI_Irecv(&U(u, nx + 1, 1), 1, row_type, down, 0, cart, &reqs[0]));
            OK(MPI_Irecv(&U(u, 0, 1), 1, row_type, up, 1, cart, &reqs[1]));
            OK(MPI_Irecv(&U(u, 1, ny + 1), 1, column_type, right, 2, cart, &reqs[2]));
            OK(MPI_Irecv(&U(u, 1, 0), 1, column_type, left, 3, cart, &reqs[3]));
            OK(MPI_Isend(&U(u, 1, 1), 1, row_type, up, 0, cart, &reqs[4]));
            OK(MPI_Isend(&U(u, nx, 1), 1, row_type, down, 1, cart, &reqs[5]));
            OK(MPI_Isend(&U(u, 1, 1), 1, column_type, left, 2, cart, &reqs[6]));
            OK(MPI_Isend(&U(u, 1, ny), 1, column_type, right, 3, cart, &reqs[7]));
            rc = MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);
        }
        if (rc != MPI_SUCCESS)
            break;
        double local = 0;
        for (int i = 1; i <= nx; i++)
            for (int j = 1; j <= ny; j++) {
                double value = 0.25 * (U(u, i - 1, j) + U(u, i + 1, j) + U(u, i, j - 1) +
                                       U(u, i, j + 1));
                local += (value - U(u, i, j)) * (value - U(u, i, j));
                U(v, i, j) = value;
            }
        double *t = u;
        u = v;
        v = t;
        rc = MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
        if (rc != MPI_SUCCESS)
            break;
    }

    if (kill_mode) {
        int class_ = -1, failed = -1;
        MPI_Error_class(rc, &class_);
        CHECK(class_ == MPIX_ERR_PROC_FAILED || class_ == MPIX_ERR_REVOKED,
              "iteration %d: error class %d", it, class_);
        /* The ULFM pattern: whoever sees the failure revokes, so that no survivor waits in an
         * exchange with a rank that has left the loop. */
        MPIX_Comm_revoke(cart);
        printf("rank %d: stopped in iteration %d with %s\n", rank, it,
               class_ == MPIX_ERR_PROC_FAILED ? "MPIX_ERR_PROC_FAILED" : "MPIX_ERR_REVOKED");
        OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
        CHECK(failed == 1, "G holds %d failures", failed);
        /* The grid is local knowledge: the failed rank keeps its place and is still returned
         * as a neighbour (the failure shows when one communicates with it). */
        int up2, down2, left2, right2, c[2];
        OK(MPI_Cart_shift(cart, 0, 1, &up2, &down2));
        OK(MPI_Cart_shift(cart, 1, 1, &left2, &right2));
        CHECK(up2 == up && down2 == down && left2 == left && right2 == right,
              "neighbours changed after the failure");
        OK(MPI_Cart_coords(cart, 1, 2, c));
        CHECK(c[0] == 1 / dims[1] && c[1] == 1 % dims[1], "the failed rank's coordinates");
        MPI_Comm survivors;
        int ssize;
        OK(MPIX_Comm_shrink(cart, &survivors));
        OK(MPI_Comm_size(survivors, &ssize));
        CHECK(ssize == size - 1, "shrunk to %d", ssize);
        OK(MPI_Comm_free(&survivors));
    } else {
        OK(rc);
        /* Compare with the sequential reference. */
        double *g = malloc(sizeof(double) * (NX + 2) * NY);
        for (int j = 0; j < NY; j++) {
            g[j] = TOP;
            g[(NX + 1) * NY + j] = BOTTOM;
            for (int i = 1; i <= NX; i++)
                g[i * NY + j] = initial(i, j);
        }
        double want = reference(g, iters);
        for (int i = 1; i <= nx; i++)
            for (int j = 1; j <= ny; j++)
                CHECK(U(u, i, j) == g[(x0 + i) * NY + (y0 + j - 1)],
                      "cell (%d,%d) is %.17g, the reference %.17g", x0 + i, y0 + j - 1,
                      U(u, i, j), g[(x0 + i) * NY + (y0 + j - 1)]);
        CHECK((residual > want ? residual - want : want - residual) <= 1e-12 * want, "residual %.17g, reference %.17g", residual,
              want);
        /* Rank 0 collects the whole grid: each rank sends its interior as a subarray of its
         * local array (halos left out), received as plain doubles, block after block. */
        MPI_Datatype interior;
        int sizes[2] = {nx + 2, w}, subsizes[2] = {nx, ny}, starts[2] = {1, 1};
        OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE,
                                    &interior));
        OK(MPI_Type_commit(&interior));
        int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
        double *all = malloc(sizeof(double) * NX * NY);
        for (int r = 0, at = 0; r < size; r++) {
            int c[2];
            OK(MPI_Cart_coords(cart, r, 2, c));
            counts[r] = block_len(NX, dims[0], c[0]) * block_len(NY, dims[1], c[1]);
            displs[r] = at;
            at += counts[r];
        }
        OK(MPI_Gatherv(u, 1, interior, all, counts, displs, MPI_DOUBLE, 0, cart));
        if (rank == 0)
            for (int r = 0; r < size; r++) {
                int c[2];
                OK(MPI_Cart_coords(cart, r, 2, c));
                int rx = block_start(NX, dims[0], c[0]), ry = block_start(NY, dims[1], c[1]);
                int rny = block_len(NY, dims[1], c[1]);
                for (int k = 0; k < counts[r]; k++) {
                    int gi = rx + 1 + k / rny, gj = ry + k % rny;
                    CHECK(all[displs[r] + k] == g[gi * NY + gj], "gathered (%d,%d) from %d", gi,
                          gj, r);
                }
            }
        OK(MPI_Type_free(&interior));
        free(counts);
        free(displs);
        free(all);
        if (rank == 0)
            printf("grid %dx%d, %d iterations, residual %.6e matches the reference\n", dims[0],
                   dims[1], iters, residual);
        free(g);
    }

    OK(MPI_Type_free(&row_type));
    OK(MPI_Type_free(&column_type));
    CHECK(row_type == MPI_DATATYPE_NULL, "a freed type's handle is MPI_DATATYPE_NULL");
    free(u);
    free(v);
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* long double, its pair type and the complex types on 3 ranks: their sizes and extents as C
 * lays them out; point-to-point; the reductions MPI defines on them (MPI_MAX, MPI_MIN,
 * MPI_SUM, MPI_PROD on long double, MPI_SUM and MPI_PROD on the complex types, MPI_MAXLOC /
 * MPI_MINLOC on MPI_LONG_DOUBLE_INT), blocking, non-blocking and MPI_Reduce_local; an
 * operation MPI does not define on them is MPI_ERR_OP at every rank; MPI_WCHAR and
 * MPI_CXX_BOOL move as wchar_t and a byte. */
#include "ft_common.h"

#include <complex.h>
#include <wchar.h>

int main(int argc, char **argv) {
    int rank, size, n;
    MPI_Aint lb, extent;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");

    struct {
        long double value;
        int index;
    } pairs[2], pairs_out[2];
    OK(MPI_Type_size(MPI_LONG_DOUBLE, &n));
    CHECK(n == (int)sizeof(long double), "long double size %d", n);
    OK(MPI_Type_size(MPI_C_FLOAT_COMPLEX, &n));
    CHECK(n == (int)sizeof(float _Complex), "float complex size %d", n);
    OK(MPI_Type_size(MPI_C_LONG_DOUBLE_COMPLEX, &n));
    CHECK(n == (int)sizeof(long double _Complex), "long double complex size %d", n);
    OK(MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &extent));
    CHECK(extent == (MPI_Aint)sizeof pairs[0], "MPI_LONG_DOUBLE_INT extent %ld", (long)extent);
    /* In a struct, a complex number is aligned as its parts are. */
    struct {
        char c;
        float _Complex z;
    } holder;
    MPI_Datatype with_complex;
    MPI_Aint displs[2] = {0, (char *)&holder.z - (char *)&holder};
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, displs,
                              (MPI_Datatype[]){MPI_CHAR, MPI_C_FLOAT_COMPLEX}, &with_complex));
    OK(MPI_Type_get_extent(with_complex, &lb, &extent));
    CHECK(extent == (MPI_Aint)sizeof holder, "struct with a complex: extent %ld, sizeof %zu",
          (long)extent, sizeof holder);
    OK(MPI_Type_free(&with_complex));
    OK(MPI_Type_size(MPI_WCHAR, &n));
    CHECK(n == (int)sizeof(wchar_t), "wchar size %d", n);
    OK(MPI_Type_size(MPI_CXX_BOOL, &n));
    CHECK(n == 1, "C++ bool size %d", n);

    /* Point-to-point around the ring. */
    long double ld[2] = {rank + 0.25L, -rank * 1e300L * 1e10L}, ld_in[2];
    double _Complex z = rank + 2.0 * I, z_in;
    wchar_t w[2] = {L'a' + rank, 0x1F600}, w_in[2];
    int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    OK(MPI_Sendrecv(ld, 2, MPI_LONG_DOUBLE, next, 1, ld_in, 2, MPI_LONG_DOUBLE, previous, 1,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(ld_in[0] == previous + 0.25L && ld_in[1] == -previous * 1e300L * 1e10L,
          "long double received");
    OK(MPI_Sendrecv(&z, 1, MPI_C_DOUBLE_COMPLEX, next, 2, &z_in, 1, MPI_C_DOUBLE_COMPLEX,
                    previous, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(creal(z_in) == previous && cimag(z_in) == 2.0, "complex received");
    OK(MPI_Sendrecv(w, 2, MPI_WCHAR, next, 3, w_in, 2, MPI_WCHAR, previous, 3, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(w_in[0] == (wchar_t)(L'a' + previous) && w_in[1] == 0x1F600, "wchar received");

    /* Reductions on long double: values beyond double's range. */
    long double big = (rank + 1) * 1e4000L, out = 0;
    OK(MPI_Allreduce(&big, &out, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out == 6e4000L, "long double sum");
    OK(MPI_Allreduce(&big, &out, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(out == 3e4000L, "long double max");
    OK(MPI_Allreduce(&big, &out, 1, MPI_LONG_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    CHECK(out == 1e4000L, "long double min");
    long double factor = rank + 2, product = 0;
    OK(MPI_Reduce(&factor, &product, 1, MPI_LONG_DOUBLE, MPI_PROD, 1, MPI_COMM_WORLD));
    CHECK(rank != 1 || product == 24.0L, "long double product at the root");
    EXPECT(MPI_Allreduce(&big, &out, 1, MPI_LONG_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);

    /* Complex sums and products: (1 + i)(2 + i)(3 + i) = 10i. */
    float _Complex fz = (rank + 1) + 1.0f * I, fz_out;
    OK(MPI_Allreduce(&fz, &fz_out, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    CHECK(crealf(fz_out) == 0.0f && cimagf(fz_out) == 10.0f, "float complex product %g%+gi",
          crealf(fz_out), cimagf(fz_out));
    double _Complex dz = (rank + 1) + 1.0 * I, dz_out;
    OK(MPI_Allreduce(&dz, &dz_out, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(creal(dz_out) == 6.0 && cimag(dz_out) == 3.0, "double complex sum");
    long double _Complex lz = (rank + 1) + 1.0L * I, lz_out;
    MPI_Request request;
    OK(MPI_Iallreduce(&lz, &lz_out, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD,
                      &request));
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(creall(lz_out) == 0.0L && cimagl(lz_out) == 10.0L, "long double complex product");
    EXPECT(MPI_Allreduce(&dz, &dz_out, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD),
           MPI_ERR_OP);
    float _Complex local_in = 2.0f + 1.0f * I, local_inout = 3.0f - 1.0f * I;
    OK(MPI_Reduce_local(&local_in, &local_inout, 1, MPI_COMPLEX, MPI_PROD));
    CHECK(crealf(local_inout) == 7.0f && cimagf(local_inout) == 1.0f, "Reduce_local complex");

    /* MPI_MAXLOC / MPI_MINLOC on long double pairs: a tie keeps the smaller index. */
    pairs[0].value = rank == 2 ? 5.0L : 1.0L;
    pairs[0].index = rank;
    pairs[1].value = 7.0L;
    pairs[1].index = 10 - rank;
    OK(MPI_Allreduce(pairs, pairs_out, 2, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(pairs_out[0].value == 5.0L && pairs_out[0].index == 2, "maxloc");
    CHECK(pairs_out[1].value == 7.0L && pairs_out[1].index == 8, "maxloc tie");
    OK(MPI_Allreduce(pairs, pairs_out, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(pairs_out[0].value == 1.0L && pairs_out[0].index == 0, "minloc");
    return ft_finish();
}

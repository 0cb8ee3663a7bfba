/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Arithmetic on long double, which Rust has no type for: the predefined reductions of
 * MPI_LONG_DOUBLE and MPI_C_LONG_DOUBLE_COMPLEX, and the comparison of MPI_LONG_DOUBLE_INT's
 * values. Elements are packed (no alignment): they are copied in and out. The operation codes
 * are mpi.h's (MPI_MAX 1, MPI_MIN 2, MPI_SUM 3, MPI_PROD 4). */
#include <complex.h>
#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(long double) == 16, "long double is 16 bytes on the supported targets");

void rt_long_double_combine(int op, const unsigned char *in, unsigned char *inout, size_t n) {
    for (size_t i = 0; i < n; i++) {
        long double a, b, r;
        memcpy(&a, in + i * sizeof a, sizeof a);
        memcpy(&b, inout + i * sizeof b, sizeof b);
        switch (op) {
        case 1:
            r = a > b ? a : b;
            break;
        case 2:
            r = a < b ? a : b;
            break;
        case 3:
            r = a + b;
            break;
        default:
            r = a * b;
            break;
        }
        memcpy(inout + i * sizeof r, &r, sizeof r);
    }
}

void rt_long_double_complex_combine(int op, const unsigned char *in, unsigned char *inout,
                                    size_t n) {
    for (size_t i = 0; i < n; i++) {
        long double _Complex a, b, r;
        memcpy(&a, in + i * sizeof a, sizeof a);
        memcpy(&b, inout + i * sizeof b, sizeof b);
        r = op == 3 ? a + b : a * b;
        memcpy(inout + i * sizeof r, &r, sizeof r);
    }
}

/* -1, 0 or 1 as the long double at `a` is less than, equal to (or unordered with) or greater
 * than the one at `b`. */
int rt_long_double_compare(const unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x < y ? -1 : x > y ? 1 : 0;
}

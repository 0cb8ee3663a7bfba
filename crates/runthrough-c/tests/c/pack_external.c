/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The portable "external32" representation: MPI_Pack_external writes each basic element
 * big-endian at its external32 size (int 4, short 2, double 8, C long 4, long double as IEEE
 * binary128, complex as two parts, a pair type as value then int), gapless in typemap order
 * for a derived type; MPI_Unpack_external reads it back into a strided buffer without touching
 * the gaps; MPI_Pack_external_size gives the bytes; positions advance call after call. Wrong
 * use: another data representation (MPI_ERR_ARG), a unit too small to pack into or to unpack
 * from (MPI_ERR_TRUNCATE, position unchanged), a long beyond 32 bits (MPI_ERR_CONVERSION),
 * a NULL position (MPI_ERR_ARG), an invalid datatype (MPI_ERR_TYPE). */
#include "ft_common.h"

#include <string.h>

static const unsigned char *bytes_of(const unsigned char *buf, MPI_Aint at) { return buf + at; }

#define SAME_BYTES(buf, at, ...)                                                               \
    do {                                                                                       \
        const unsigned char want_[] = {__VA_ARGS__};                                           \
        if (memcmp(bytes_of(buf, at), want_, sizeof want_) != 0) {                             \
            fprintf(stderr, "bytes at %ld:", (long)(at));                                      \
            for (size_t i_ = 0; i_ < sizeof want_; i_++)                                       \
                fprintf(stderr, " %02x", bytes_of(buf, at)[i_]);                               \
            FAIL("not the external32 bytes expected");                                         \
        }                                                                                      \
    } while (0)

static MPI_Aint size_of(int count, MPI_Datatype type) {
    MPI_Aint size = -1;
    OK(MPI_Pack_external_size("external32", count, type, &size));
    return size;
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);

    CHECK(size_of(1, MPI_INT) == 4, "int");
    CHECK(size_of(3, MPI_SHORT) == 6, "short");
    CHECK(size_of(1, MPI_LONG) == 4, "long: 4 bytes in external32");
    CHECK(size_of(2, MPI_DOUBLE) == 16, "double");
    CHECK(size_of(1, MPI_LONG_DOUBLE) == 16, "long double");
    CHECK(size_of(1, MPI_DOUBLE_INT) == 12, "double_int: no padding");
    CHECK(size_of(1, MPI_C_FLOAT_COMPLEX) == 8, "float complex");

    unsigned char buf[256];
    MPI_Aint pos = 0;
    int i = 0x01020304;
    OK(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof buf, &pos));
    CHECK(pos == 4, "position %ld", (long)pos);
    SAME_BYTES(buf, 0, 0x01, 0x02, 0x03, 0x04);
    short s = 0x0506;
    OK(MPI_Pack_external("external32", &s, 1, MPI_SHORT, buf, sizeof buf, &pos));
    SAME_BYTES(buf, 4, 0x05, 0x06);
    double d = 1.0;
    OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    SAME_BYTES(buf, 6, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0);
    long l = -2;
    OK(MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof buf, &pos));
    SAME_BYTES(buf, 14, 0xff, 0xff, 0xff, 0xfe);
    long double ld = 1.5L;
    OK(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    SAME_BYTES(buf, 18, 0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    struct { double value; int index; } pair = {2.0, 7};
    OK(MPI_Pack_external("external32", &pair, 1, MPI_DOUBLE_INT, buf, sizeof buf, &pos));
    SAME_BYTES(buf, 34, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7);
    float complex_parts[2] = {1.0f, -1.0f};
    OK(MPI_Pack_external("external32", complex_parts, 1, MPI_C_FLOAT_COMPLEX, buf, sizeof buf,
                         &pos));
    SAME_BYTES(buf, 46, 0x3f, 0x80, 0, 0, 0xbf, 0x80, 0, 0);
    CHECK(pos == 54, "position %ld", (long)pos);

    /* Everything back, in order. */
    MPI_Aint in = 0;
    int i2;
    short s2;
    double d2;
    long l2;
    long double ld2;
    struct { double value; int index; } pair2;
    float parts2[2];
    OK(MPI_Unpack_external("external32", buf, pos, &in, &i2, 1, MPI_INT));
    OK(MPI_Unpack_external("external32", buf, pos, &in, &s2, 1, MPI_SHORT));
    OK(MPI_Unpack_external("external32", buf, pos, &in, &d2, 1, MPI_DOUBLE));
    OK(MPI_Unpack_external("external32", buf, pos, &in, &l2, 1, MPI_LONG));
    OK(MPI_Unpack_external("external32", buf, pos, &in, &ld2, 1, MPI_LONG_DOUBLE));
    OK(MPI_Unpack_external("external32", buf, pos, &in, &pair2, 1, MPI_DOUBLE_INT));
    OK(MPI_Unpack_external("external32", buf, pos, &in, parts2, 1, MPI_C_FLOAT_COMPLEX));
    CHECK(in == pos, "unpacked to %ld of %ld", (long)in, (long)pos);
    CHECK(i2 == i && s2 == s && d2 == d && l2 == l && ld2 == ld, "values back");
    CHECK(pair2.value == 2.0 && pair2.index == 7, "pair back");
    CHECK(parts2[0] == 1.0f && parts2[1] == -1.0f, "complex back");

    /* A vector of 3 blocks of 2 ints, stride 3: 6 ints gapless, big-endian. */
    MPI_Datatype vec;
    OK(MPI_Type_vector(3, 2, 3, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    CHECK(size_of(2, vec) == 48, "two vectors");
    int strided[9], landed[9];
    for (int k = 0; k < 9; k++) {
        strided[k] = 0x10 + k;
        landed[k] = -1;
    }
    pos = 0;
    OK(MPI_Pack_external("external32", strided, 1, vec, buf, sizeof buf, &pos));
    CHECK(pos == 24, "vector position %ld", (long)pos);
    SAME_BYTES(buf, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x11, 0, 0, 0, 0x13, 0, 0, 0, 0x14, 0, 0, 0, 0x16,
               0, 0, 0, 0x17);
    in = 0;
    OK(MPI_Unpack_external("external32", buf, pos, &in, landed, 1, vec));
    for (int k = 0; k < 9; k++) {
        int want = k % 3 == 2 ? -1 : 0x10 + k;
        CHECK(landed[k] == want, "landed[%d] = %d, not %d", k, landed[k], want);
    }

    /* Wrong use. */
    pos = 0;
    EXPECT(MPI_Pack_external("native", &i, 1, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    EXPECT(MPI_Pack_external_size("internal", 1, MPI_INT, &pos), MPI_ERR_ARG);
    pos = 2;
    EXPECT(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, 4, &pos), MPI_ERR_TRUNCATE);
    CHECK(pos == 2, "position moved on a refused pack: %ld", (long)pos);
    in = 0;
    EXPECT(MPI_Unpack_external("external32", buf, 3, &in, &i2, 1, MPI_INT), MPI_ERR_TRUNCATE);
    CHECK(in == 0, "position moved on a refused unpack");
    long big = 1L << 40;
    pos = 0;
    EXPECT(MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos),
           MPI_ERR_CONVERSION);
    CHECK(pos == 0, "position moved on a refused conversion");
    EXPECT(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof buf, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Pack_external_size("external32", 1, 123456, &pos), MPI_ERR_TYPE);
    EXPECT(MPI_Pack_external_size("external32", -1, MPI_INT, &pos), MPI_ERR_COUNT);
    OK(MPI_Type_free(&vec));
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The environment calls and constants a C program uses around its communication.
 * - MPI_Get_version and MPI_Get_library_version work before MPI_Init and after MPI_Finalize
 *   and agree with MPI_VERSION / MPI_SUBVERSION; NULL arguments are MPI_ERR_ARG.
 * - The C names of the Fortran types: MPI_INTEGER is int, MPI_REAL float, MPI_DOUBLE_PRECISION
 *   double, in sizes, reductions and point-to-point.
 * - MPI_Query_thread after MPI_Init is MPI_THREAD_MULTIPLE, MPI_Is_thread_main true on the
 *   thread that called it; after MPI_Finalize, MPI_ERR_OTHER.
 * - MPI_INFO_NULL, MPI_ERRCODES_IGNORE and MPI_ARGV_NULL exist with their types.
 * - MPI_Pcontrol (variadic) accepts every level, with and without extra arguments. */
#include "ft_common.h"
#include <string.h>

/* Before MPI_Init and after MPI_Finalize only these two calls may be made: return codes are
 * compared with MPI_SUCCESS directly. */
static void check_versions(void) {
    int version = -1, subversion = -1, len = -1;
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK(MPI_Get_version(&version, &subversion) == MPI_SUCCESS, "MPI_Get_version failed");
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION, "version %d.%d", version,
          subversion);
    CHECK(version >= 3, "MPI version %d", version);
    CHECK(MPI_Get_library_version(library, &len) == MPI_SUCCESS, "MPI_Get_library_version");
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(library) == len,
          "library version of length %d: %s", len, library);
}

int main(int argc, char **argv) {
    int rank, size;
    check_versions();
    ft_init(&argc, &argv, &rank, &size);
    check_versions();
    int version;
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    EXPECT(MPI_Get_version(NULL, &version), MPI_ERR_ARG);
    EXPECT(MPI_Get_library_version(library, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Get_library_version(NULL, &version), MPI_ERR_ARG);

    /* MPI_Init (not _thread) provides MPI_THREAD_MULTIPLE too, on this, the main thread. */
    int level = -1, is_main = -1;
    OK(MPI_Pcontrol(2));
    OK(MPI_Pcontrol(0, "extra", 1.5));
    OK(MPI_Pcontrol(1));
    OK(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread after MPI_Init: %d", level);
    OK(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 1, "MPI_Is_thread_main after MPI_Init: %d", is_main);

    MPI_Info info = MPI_INFO_NULL;
    int *errcodes = MPI_ERRCODES_IGNORE;
    char **argv_null = MPI_ARGV_NULL;
    CHECK(errcodes == NULL && argv_null == NULL, "MPI_ERRCODES_IGNORE / MPI_ARGV_NULL not NULL");
    (void)info;

    int type_size = -1;
    OK(MPI_Type_size(MPI_INTEGER, &type_size));
    CHECK(type_size == (int)sizeof(int), "MPI_INTEGER: %d bytes", type_size);
    OK(MPI_Type_size(MPI_REAL, &type_size));
    CHECK(type_size == (int)sizeof(float), "MPI_REAL: %d bytes", type_size);
    OK(MPI_Type_size(MPI_DOUBLE_PRECISION, &type_size));
    CHECK(type_size == (int)sizeof(double), "MPI_DOUBLE_PRECISION: %d bytes", type_size);

    int one = rank + 1, total = 0;
    OK(MPI_Allreduce(&one, &total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size * (size + 1) / 2, "MPI_INTEGER sum: %d", total);
    double x = 0.5 * rank, largest = -1;
    OK(MPI_Allreduce(&x, &largest, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD));
    CHECK(largest == 0.5 * (size - 1), "MPI_DOUBLE_PRECISION max: %g", largest);
    float out = 1.5f * rank, in = -1;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, count = -1;
    MPI_Status status;
    OK(MPI_Sendrecv(&out, 1, MPI_REAL, next, 0, &in, 1, MPI_REAL, prev, 0, MPI_COMM_WORLD,
                    &status));
    OK(MPI_Get_count(&status, MPI_REAL, &count));
    CHECK(in == 1.5f * prev && count == 1, "MPI_REAL: %g (%d)", in, count);

    ft_finish();
    check_versions();
    level = -1;
    CHECK(MPI_Query_thread(&level) == MPI_ERR_OTHER && level == -1,
          "MPI_Query_thread after MPI_Finalize");
    return 0;
}

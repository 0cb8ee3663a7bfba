/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI-1's names of the error handler calls, which MPI-3 removed and programs still use:
 * MPI_Errhandler_get returns the communicator's handler as MPI_Comm_get_errhandler does, and
 * MPI_Errhandler_set installs one as MPI_Comm_set_errhandler does; wrong use is refused as
 * with the new names. (Open MPI 5 no longer has these names.) */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    MPI_Errhandler handler;
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &handler));
    CHECK(handler == MPI_ERRORS_RETURN, "MPI_Errhandler_get %d", handler);
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
    CHECK(handler == MPI_ERRORS_ARE_FATAL, "MPI_Errhandler_set %d", handler);
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &handler));
    CHECK(handler == MPI_ERRORS_RETURN, "MPI_Errhandler_set back %d", handler);
    EXPECT(MPI_Errhandler_get(MPI_COMM_NULL, &handler), MPI_ERR_COMM);
    EXPECT(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    return ft_finish();
}

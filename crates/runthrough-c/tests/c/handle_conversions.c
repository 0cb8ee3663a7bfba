/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The handle conversions between C and Fortran (MPI_<Kind>_c2f / _f2c) on 2 ranks, as Rust's
 * `mpi` crate uses them: every handle type, predefined, created and null handles, converted to
 * an MPI_Fint and back gives the same handle; a handle that went through an MPI_Fint array
 * works in the calls (a communicator, a datatype and an operation in MPI_Allreduce, an error
 * handler set and got back, a group compared, an info read, a matched-probe message received,
 * a request waited for); MPI_File and MPI_Win have their null handles. The conversions work
 * before MPI_Init too. Portable: builds with other MPIs' wrappers. */
#include "ft_common.h"

#include <string.h>

/* Sums ints, whatever the datatype holds of them. */
static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *type) {
    int bytes = 0;
    MPI_Type_size(*type, &bytes);
    int n = *len * (bytes / (int)sizeof(int));
    for (int i = 0; i < n; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv) {
    int rank, size, result, flag;
    /* Before MPI_Init: a predefined handle converts and comes back. */
    MPI_Fint early = MPI_Comm_c2f(MPI_COMM_WORLD);
    CHECK(MPI_Comm_f2c(early) == MPI_COMM_WORLD, "MPI_COMM_WORLD before MPI_Init");
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "run on 2 ranks");

    /* Null handles of every type come back null. */
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "comm null");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL)) == MPI_ERRHANDLER_NULL,
          "errhandler null");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "file null");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_NULL)) == MPI_GROUP_NULL, "group null");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "info null");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "message null");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_OP_NULL)) == MPI_OP_NULL, "op null");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
          "request null");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL, "datatype null");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "win null");

    /* Created handles, kept as Fortran integers and used through their C handles again. */
    MPI_Comm dup;
    MPI_Datatype pair;
    MPI_Op op;
    MPI_Errhandler handler;
    MPI_Group world_group;
    MPI_Info info;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Op_create(sum_ints, 1, &op));
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "key", "value"));
    MPI_Fint fortran[8] = {
        MPI_Comm_c2f(dup),      MPI_Type_c2f(pair),         MPI_Op_c2f(op),
        MPI_Type_c2f(MPI_INT),  MPI_Errhandler_c2f(handler), MPI_Group_c2f(world_group),
        MPI_Info_c2f(info),     MPI_Op_c2f(MPI_SUM),
    };
    MPI_Comm comm = MPI_Comm_f2c(fortran[0]);
    CHECK(comm == dup, "dup came back");
    CHECK(MPI_Type_f2c(fortran[1]) == pair && MPI_Op_f2c(fortran[2]) == op, "type, op");
    CHECK(MPI_Type_f2c(fortran[3]) == MPI_INT && MPI_Op_f2c(fortran[7]) == MPI_SUM,
          "MPI_INT, MPI_SUM");
    int mine[2] = {rank + 1, 10 * (rank + 1)}, sums[2] = {0, 0};
    OK(MPI_Allreduce(mine, sums, 1, MPI_Type_f2c(fortran[1]), MPI_Op_f2c(fortran[2]), comm));
    CHECK(sums[0] == 3 && sums[1] == 30, "user op sums %d %d", sums[0], sums[1]);
    OK(MPI_Allreduce(&rank, &result, 1, MPI_Type_f2c(fortran[3]), MPI_Op_f2c(fortran[7]),
                     comm));
    CHECK(result == 1, "MPI_SUM over ranks %d", result);

    MPI_Errhandler back;
    OK(MPI_Comm_set_errhandler(comm, MPI_Errhandler_f2c(fortran[4])));
    OK(MPI_Comm_get_errhandler(comm, &back));
    CHECK(MPI_Errhandler_c2f(back) == fortran[4], "errhandler round trip");
    OK(MPI_Errhandler_free(&back));

    MPI_Group comm_group;
    OK(MPI_Comm_group(comm, &comm_group));
    OK(MPI_Group_compare(MPI_Group_f2c(fortran[5]), comm_group, &result));
    CHECK(result == MPI_IDENT, "groups %d", result);

    char value[16] = "";
    OK(MPI_Info_get(MPI_Info_f2c(fortran[6]), "key", (int)sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "value") == 0, "info value '%s'", value);

    /* A message and a request, each through an MPI_Fint. */
    int got = -1, sent = 42;
    if (rank == 1) {
        OK(MPI_Send(&sent, 1, MPI_INT, 0, 7, comm));
        MPI_Request request;
        OK(MPI_Irecv(&got, 1, MPI_INT, 0, 8, comm, &request));
        MPI_Fint as_fint = MPI_Request_c2f(request);
        MPI_Request again = MPI_Request_f2c(as_fint);
        CHECK(again == request, "request came back");
        OK(MPI_Wait(&again, MPI_STATUS_IGNORE));
        CHECK(got == 43 && again == MPI_REQUEST_NULL, "request got %d", got);
    } else {
        MPI_Message message;
        OK(MPI_Mprobe(1, 7, comm, &message, MPI_STATUS_IGNORE));
        MPI_Fint as_fint = MPI_Message_c2f(message);
        MPI_Message again = MPI_Message_f2c(as_fint);
        CHECK(again == message, "message came back");
        OK(MPI_Mrecv(&got, 1, MPI_INT, &again, MPI_STATUS_IGNORE));
        CHECK(got == 42 && again == MPI_MESSAGE_NULL, "message got %d", got);
        sent = 43;
        OK(MPI_Send(&sent, 1, MPI_INT, 1, 8, comm));
    }

    OK(MPI_Group_free(&comm_group));
    OK(MPI_Group_free(&world_group));
    OK(MPI_Info_free(&info));
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&pair));
    OK(MPI_Comm_free(&dup));
    return ft_finish();
}

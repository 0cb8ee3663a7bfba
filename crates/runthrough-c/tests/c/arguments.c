/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Wrong use from C returns an error class and never crashes (SPEC §5): NULL pointers, a freed
 * communicator, negative counts, unknown handles; the accessors' incount rules (incount = 0
 * with NULL rank_infos, MPI_ERR_SIZE with outcount = incount); error handlers (a user handler
 * is called with the communicator and the code; MPI_ERRORS_RETURN returns it). Rank 2 dies so
 * that the views have a failure. */
#include "ft_common.h"

static int handler_calls = 0, handler_code = 0;
static MPI_Comm handler_comm = MPI_COMM_NULL;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    handler_calls++;
    handler_comm = *comm;
    handler_code = *code;
}

int main(int argc, char **argv) {
    int rank, size, value = 0, count, outcount, failed, flag, class;
    MPI_Comm comm, stale;
    MPI_Group group;
    MPI_Request request;
    MPI_Errhandler handler;
    MPI_Rank_info infos[8];
    char text[MPI_MAX_ERROR_STRING];

    /* Before MPI_Init: an error class, no crash. */
    EXPECT(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_ERR_OTHER);
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 3, "run on 3 ranks");
    EXPECT(MPI_Init(&argc, &argv), MPI_ERR_OTHER);

    /* NULL pointers. */
    EXPECT(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_validate_local(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_validate_global(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_state_local(MPI_COMM_WORLD, MPI_RANK_STATE_OK, 0, NULL, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_OK, 2, &outcount, NULL),
           MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_num_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_OK, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Recv(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
    EXPECT(MPI_Irecv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Wait(NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT(MPI_Comm_free(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPIX_Comm_agree(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(MPI_ERR_ARG, NULL, &count), MPI_ERR_ARG);
    /* A zero-length send needs no buffer. */
    OK(MPI_Send(NULL, 0, MPI_INT, rank, 5, MPI_COMM_WORLD));
    OK(MPI_Recv(NULL, 0, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    /* Negative counts, bad ranks, tags, datatypes, ops. */
    EXPECT(MPI_Send(&value, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Recv(&value, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(&value, -3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Comm_get_state_local(MPI_COMM_WORLD, MPI_RANK_STATE_OK, -1, &outcount, infos),
           MPI_ERR_COUNT);
    EXPECT(MPI_Waitall(-1, &request, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
    EXPECT(MPI_Group_incl(MPI_GROUP_EMPTY, -1, &value, &group), MPI_ERR_COUNT);
    EXPECT(MPI_Send(&value, 1, MPI_INT, 99, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&value, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(&value, 1, 12345, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allreduce(&value, &count, 1, MPI_INT, 999, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Bcast(&value, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Comm_get_num_state_local(MPI_COMM_WORLD, 1 << 20, &count), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_num_state_local(MPI_COMM_WORLD, -1, &count), MPI_ERR_ARG);

    /* Unknown and freed handles. */
    EXPECT(MPI_Comm_rank(12345, &value), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &value), MPI_ERR_COMM);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    stale = comm;
    OK(MPI_Comm_free(&comm));
    CHECK(comm == MPI_COMM_NULL, "handle not reset");
    EXPECT(MPI_Comm_rank(stale, &value), MPI_ERR_COMM);
    EXPECT(MPI_Send(&value, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM);
    EXPECT(MPI_Barrier(stale), MPI_ERR_COMM);
    EXPECT(MPI_Comm_validate_local(stale, &failed), MPI_ERR_COMM);
    EXPECT(MPI_Comm_validate_global(stale, &failed), MPI_ERR_COMM);
    EXPECT(MPI_Comm_get_state_global(stale, MPI_RANK_STATE_OK, 0, &outcount, NULL), MPI_ERR_COMM);
    EXPECT(MPIX_Comm_revoke(stale), MPI_ERR_COMM);
    EXPECT(MPI_Comm_free(&stale), MPI_ERR_COMM);
    comm = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_free(&comm), MPI_ERR_COMM);
    request = 4242;
    EXPECT(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    request = MPI_REQUEST_NULL;
    OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    EXPECT(MPI_Group_size(777, &value), MPI_ERR_GROUP);
    /* No data of no type (with MPI_PROC_NULL, as programs write it); data of no type is wrong. */
    OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    EXPECT(MPI_Send(&value, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    /* A group of no process is MPI_GROUP_EMPTY; freeing it only resets the handle. */
    MPI_Group world_group;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    OK(MPI_Group_incl(world_group, 0, &value, &group));
    CHECK(group == MPI_GROUP_EMPTY, "MPI_Group_incl of no rank: %d", group);
    int everyone[3] = {0, 1, 2};
    OK(MPI_Group_excl(world_group, 3, everyone, &group));
    CHECK(group == MPI_GROUP_EMPTY, "MPI_Group_excl of every rank: %d", group);
    OK(MPI_Group_free(&group));
    CHECK(group == MPI_GROUP_NULL, "MPI_GROUP_EMPTY freed: %d", group);
    OK(MPI_Group_free(&world_group));
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, 31337), MPI_ERR_ARG);
    EXPECT(MPI_Error_class(-5, &class), MPI_ERR_ARG);
    OK(MPI_Error_string(MPIX_ERR_PROC_FAILED, text, &count));
    CHECK(count > 0 && text[count] == 0, "error string");

    /* A user error handler is called with the communicator and the code. */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_create_errhandler(count_errors, &handler));
    OK(MPI_Comm_set_errhandler(comm, handler));
    OK(MPI_Errhandler_free(&handler));
    CHECK(handler == MPI_ERRHANDLER_NULL, "handler not reset");
    EXPECT(MPI_Send(&value, 1, MPI_INT, 0, -1, comm), MPI_ERR_TAG);
    CHECK(handler_calls == 1 && handler_comm == comm && handler_code == MPI_ERR_TAG,
          "handler calls %d comm %d code %d", handler_calls, handler_comm, handler_code);
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));

    /* The accessors' incount rules, with rank 2 dead and recognized. */
    ft_sync_then_die(MPI_COMM_WORLD, 2);
    ft_wait_detected(MPI_COMM_WORLD, 2);
    OK(MPI_Comm_validate_local(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "L: %d", failed);
    OK(MPI_Comm_get_state_local(MPI_COMM_WORLD, MPI_RANK_STATE_FAILED, 8, &outcount, infos));
    CHECK(outcount == 1 && infos[0].rank == 2 &&
          infos[0].state == (MPI_RANK_STATE_FAILED | MPI_RANK_STATE_MOD_NEW), "L entry");
    OK(MPI_Comm_validate_global(MPI_COMM_WORLD, &failed));
    CHECK(failed == 1, "G: %d", failed);
    OK(MPI_Comm_get_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_OK | MPI_RANK_STATE_NULL, 0,
                                 &outcount, NULL));
    CHECK(outcount == 3, "matches %d", outcount);
    infos[2].rank = -9;
    EXPECT(MPI_Comm_get_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_OK | MPI_RANK_STATE_NULL, 2,
                                     &outcount, infos),
           MPI_ERR_SIZE);
    CHECK(outcount == 2, "outcount %d on MPI_ERR_SIZE", outcount);
    CHECK(infos[0].rank == 0 && infos[0].state == MPI_RANK_STATE_OK && infos[1].rank == 1 &&
          infos[2].rank == -9, "the first incount entries");
    OK(MPI_Comm_get_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_OK | MPI_RANK_STATE_NULL, 8,
                                 &outcount, infos));
    CHECK(outcount == 3 && infos[2].rank == 2 &&
          infos[2].state == (MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_NEW), "all entries");
    /* A query with no state bit means FAILED | NULL. */
    OK(MPI_Comm_get_num_state_global(MPI_COMM_WORLD, MPI_RANK_STATE_MOD_NEW, &count));
    CHECK(count == 1, "NEW count %d", count);
    OK(MPI_Comm_validate_local_flag(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "validate_local after validate_global found new failures");
    OK(MPI_Comm_validate_local_count(MPI_COMM_WORLD, MPI_RANK_STATE_NULL, &count));
    CHECK(count == 1, "NULL count %d", count);
    /* dup keeps G: its ranks NULL|OLD. */
    OK(MPI_Comm_get_num_state_global(comm, MPI_RANK_STATE_NULL, &count));
    CHECK(count == 0, "the dup made before the failure has its own G");
    MPI_Comm dup2;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
    OK(MPI_Comm_get_num_state_global(dup2, MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_OLD, &count));
    CHECK(count == 1, "dup's G: %d NULL|OLD", count);
    OK(MPI_Comm_free(&dup2));
    OK(MPI_Comm_free(&comm));
    return ft_finish();
}

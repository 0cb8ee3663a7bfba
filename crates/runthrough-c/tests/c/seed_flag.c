/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The seed's flag snippet, nearly verbatim: validate_global returning a new-failures flag
 * (here MPI_Comm_validate_global_flag, the thread's variant under its own name), then
 * MPI_Comm_get_num_state_global to size the array, and MPI_Comm_get_state_global.
 * Run under rtrun with rank argv[1] killed during the work: every survivor must find exactly
 * that rank NULL|NEW. It also checks the thread's count variant (MPI_Comm_validate_global_count)
 * and that a later validate turns the rank NULL|OLD. */
#include "ft_common.h"

static void do_work(MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < 200; i++) {
        /* A ring exchange, then a barrier: a failure of either ends the work. */
        int token = rank, got = -1;
        MPI_Request request;
        if (MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, i, comm, &request) != MPI_SUCCESS)
            return;
        if (MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, i, comm) != MPI_SUCCESS)
            return;
        if (MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        if (got != (rank + size - 1) % size)
            FAIL("ring got %d", got);
        if (MPI_Barrier(comm) != MPI_SUCCESS)
            return;
        usleep(2000);
    }
}

int main(int argc, char **argv) {
    int rank, size, victim;
    MPI_Comm comm = MPI_COMM_WORLD;
    int new_failures, num_failed_end = -1, incount, outcount = -1, count = -1;
    MPI_Rank_info *rank_infos = NULL;

    ft_init(&argc, &argv, &rank, &size);
    CHECK(argc == 2, "usage: seed_flag VICTIM");
    victim = atoi(argv[1]);

    OK(MPI_Comm_validate_global_flag(comm, &new_failures));
    CHECK(new_failures == 0, "failures before the work");
    /* Do work */
    do_work(comm);
    OK(MPI_Comm_validate_global_flag(comm, &new_failures));

    if( new_failures ) { /* something failed */
      OK(MPI_Comm_get_num_state_global(comm, MPI_RANK_STATE_NULL|MPI_RANK_STATE_MOD_NEW, &num_failed_end));
      incount = num_failed_end;
      rank_infos = malloc(sizeof(MPI_Rank_info) * incount);
      OK(MPI_Comm_get_state_global(comm,
         MPI_RANK_STATE_NULL|MPI_RANK_STATE_MOD_NEW,
         incount, &outcount, rank_infos));
    }

    CHECK(new_failures == 1, "no new failure seen");
    CHECK(num_failed_end == 1 && outcount == 1, "num_failed_end = %d, outcount = %d",
          num_failed_end, outcount);
    CHECK(rank_infos[0].rank == victim, "found rank %d, victim %d", rank_infos[0].rank, victim);
    CHECK(rank_infos[0].state == (MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_NEW),
          "state %d", rank_infos[0].state);
    /* The local view is a copy of G. */
    OK(MPI_Comm_get_num_state_local(comm, MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_NEW, &count));
    CHECK(count == 1, "L has %d NULL|NEW ranks", count);
    /* The count variant: nothing new now, the victim is NULL|OLD. */
    OK(MPI_Comm_validate_global_count(comm, MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_OLD, &count));
    CHECK(count == 1, "validate_global_count(NULL|OLD) = %d", count);
    OK(MPI_Comm_get_num_state_global(comm, MPI_RANK_STATE_MOD_NEW, &count));
    CHECK(count == 0, "%d NEW ranks after a quiet validate", count);
    OK(MPI_Comm_get_num_state_global(comm, MPI_RANK_STATE_OK, &count));
    CHECK(count == size - 1, "%d OK ranks", count);
    printf("found failed rank %d NULL|NEW\n", rank_infos[0].rank);
    free(rank_infos);
    return ft_finish();
}

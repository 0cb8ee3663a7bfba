/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The seed's first application snippet, nearly verbatim ("[Mpi3-ft] MPI_Comm_validate
 * parameters", Feb 28 2011): validate_global, work, validate_global, and if the failure count
 * grew, size an array with incount = 0 and fetch the NULL|NEW ranks of G.
 * Run under rtrun with rank argv[1] killed during the work (--kill 2@call:6, or by time with
 * argv[2] = how long the work lasts at least, in seconds): every survivor
 * must find exactly that rank, as MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_NEW. */
#include "ft_common.h"

/* Work: all-reduces until one fails (the victim dies inside one); a failure ends the work.
 * It lasts 200 rounds, or at least `work_seconds` when given (for a kill by time). */
static double work_seconds = 0.0;

static void do_work(MPI_Comm comm) {
    double start = MPI_Wtime();
    for (int i = 0; i < 200 || MPI_Wtime() - start < work_seconds; i++) {
        int mine = i, sum = 0;
        if (MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS)
            return;
        usleep(2000);
    }
}

int main(int argc, char **argv) {
    int rank, size, victim;
    MPI_Comm comm = MPI_COMM_WORLD;
    int num_failed_start, num_failed_end, incount, outcount = -1;
    MPI_Rank_info *rank_infos = NULL;

    ft_init(&argc, &argv, &rank, &size);
    CHECK(argc == 2 || argc == 3, "usage: seed_count VICTIM [WORK_SECONDS]");
    victim = atoi(argv[1]);
    if (argc == 3)
        work_seconds = atof(argv[2]);

    OK(MPI_Comm_validate_global(comm, &num_failed_start));
    /* Do work */
    do_work(comm);
    OK(MPI_Comm_validate_global(comm, &num_failed_end));

    if( num_failed_start < num_failed_end ) { /* something failed */
    incount = 0;
    OK(MPI_Comm_get_state_global(comm,
     MPI_RANK_STATE_NULL|MPI_RANK_STATE_MOD_NEW,
     incount, &outcount, NULL));
    rank_infos = malloc(sizeof(MPI_Rank_info) * outcount);
    incount = outcount;
    OK(MPI_Comm_get_state_global(comm,
     MPI_RANK_STATE_NULL|MPI_RANK_STATE_MOD_NEW,
     incount, &outcount, rank_infos));
    }

    CHECK(num_failed_start == 0, "num_failed_start = %d", num_failed_start);
    CHECK(num_failed_end == 1, "num_failed_end = %d", num_failed_end);
    CHECK(rank_infos != NULL && outcount == 1, "outcount = %d", outcount);
    CHECK(rank_infos[0].rank == victim, "found rank %d, victim %d", rank_infos[0].rank, victim);
    CHECK(rank_infos[0].state == (MPI_RANK_STATE_NULL | MPI_RANK_STATE_MOD_NEW),
          "state %d", rank_infos[0].state);
    printf("found failed rank %d NULL|NEW\n", rank_infos[0].rank);
    free(rank_infos);
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The ULFM "respawn" recovery, as ULFM programs write it: rank 2 of 5 dies; an all-reduce
 * fails at the ranks that notice, which revoke the communicator; everyone shrinks; the
 * survivors find the dead ranks (the group difference), MPI_Comm_spawn as many processes of
 * this program as died, tell each the number it replaces, MPI_Intercomm_merge, and
 * MPI_Comm_split with the old numbers as keys; the replacement does its side after
 * MPI_Comm_get_parent. The repaired communicator has 5 ranks again, each survivor its number
 * and the replacement rank 2: an all-reduce over it gives 0 + 1 + 2 + 3 + 4. Both sides
 * disconnect last, so nobody leaves while the others still compute. */
#include "ft_common.h"
#include <string.h>

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    MPI_Comm parent, repaired, merged;
    OK(MPI_Comm_get_parent(&parent));
    if (parent == MPI_COMM_NULL) {
        CHECK(size == 5, "needs 5 ranks");
        MPI_Comm work, shrunk, inter;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &work));
        MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
        ft_sync_then_die(work, 2);
        int one = 1, sum = 0;
        if (MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, work) != MPI_SUCCESS)
            OK(MPIX_Comm_revoke(work));
        OK(MPIX_Comm_shrink(work, &shrunk));
        MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
        /* Who died: the ranks of work missing from shrunk. */
        MPI_Group work_group, shrunk_group, dead_group;
        OK(MPI_Comm_group(work, &work_group));
        OK(MPI_Comm_group(shrunk, &shrunk_group));
        OK(MPI_Group_difference(work_group, shrunk_group, &dead_group));
        int dead_count = 0;
        OK(MPI_Group_size(dead_group, &dead_count));
        CHECK(dead_count == 1, "%d dead", dead_count);
        int zero = 0, dead = -1;
        OK(MPI_Group_translate_ranks(dead_group, 1, &zero, work_group, &dead));
        CHECK(dead == 2, "rank %d died", dead);
        char *replacement_argv[] = {"replacement", NULL};
        int code = -1;
        OK(MPI_Comm_spawn(argv[0], replacement_argv, dead_count, MPI_INFO_NULL, 0, shrunk, &inter,
                          &code));
        CHECK(code == MPI_SUCCESS, "code %d", code);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        int shrunk_rank;
        OK(MPI_Comm_rank(shrunk, &shrunk_rank));
        if (shrunk_rank == 0)
            OK(MPI_Send(&dead, 1, MPI_INT, 0, 1, inter));
        OK(MPI_Intercomm_merge(inter, 0, &merged));
        OK(MPI_Comm_split(merged, 0, rank, &repaired));
        parent = inter;
        OK(MPI_Group_free(&work_group));
        OK(MPI_Group_free(&shrunk_group));
        OK(MPI_Group_free(&dead_group));
        OK(MPI_Comm_free(&shrunk));
        OK(MPI_Comm_free(&work));
    } else {
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        char *role = argc > 1 ? argv[1] : "";
        CHECK(strcmp(role, "replacement") == 0, "argument %s", role);
        OK(MPI_Recv(&rank, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE));
        OK(MPI_Intercomm_merge(parent, 1, &merged));
        OK(MPI_Comm_split(merged, 0, rank, &repaired));
        printf("replacement of rank %d\n", rank);
    }
    MPI_Comm_set_errhandler(repaired, MPI_ERRORS_RETURN);
    int new_rank = -1, new_size = -1, sum = 0;
    OK(MPI_Comm_rank(repaired, &new_rank));
    OK(MPI_Comm_size(repaired, &new_size));
    CHECK(new_size == 5 && new_rank == rank, "rank %d of %d, want %d of 5", new_rank, new_size,
          rank);
    OK(MPI_Allreduce(&new_rank, &sum, 1, MPI_INT, MPI_SUM, repaired));
    CHECK(sum == 10, "sum %d", sum);
    OK(MPI_Comm_free(&repaired));
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&parent));
    if (rank == 0)
        printf("repaired: 5 ranks\n");
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Process creation under rtrun: the job (4 ranks) spawns 2 processes of this program with the
 * argument "child" and info wdir=/tmp (MPI_Comm_spawn, root 1); the children check their
 * arguments, directory and parent intercommunicator (MPI_Comm_get_parent), send their rank to
 * parent 0, and both sides merge (MPI_Intercomm_merge) and all-reduce over 6 ranks; the
 * children disconnect from their parents. Then errors: maxprocs 0 at the root (MPI_ERR_ARG
 * there, MPI_ERR_SPAWN at the others), a program that does not exist and a spawn beyond the
 * universe (MPI_ERR_SPAWN everywhere, with the root's error codes), and
 * MPI_Comm_spawn_multiple of two programs (this one twice, 1 + 1 processes). */
#include "ft_common.h"
#include <string.h>

static void child(int argc, char **argv, int expected_parents) {
    MPI_Comm parent = MPI_COMM_NULL;
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "a spawned process without a parent");
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/tmp") == 0, "working directory %s", cwd);
    CHECK(argc == 2, "argc %d", argc);
    int rank, size, remote, inter = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_remote_size(parent, &remote));
    OK(MPI_Comm_test_inter(parent, &inter));
    CHECK(inter == 1 && remote == expected_parents, "remote size %d", remote);
    OK(MPI_Send(&rank, 1, MPI_INT, 0, 5, parent));
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(parent, 1, &merged));
    int merged_size, mine, sum = 0;
    OK(MPI_Comm_size(merged, &merged_size));
    OK(MPI_Comm_rank(merged, &mine));
    CHECK(merged_size == expected_parents + size && mine == expected_parents + rank,
          "merged: rank %d of %d", mine, merged_size);
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == merged_size * (merged_size - 1) / 2, "merged sum %d", sum);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect leaves the handle");
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a parent after disconnect");
    if (strcmp(argv[1], "child") == 0)
        printf("child %d of %d\n", rank, size);
    else
        printf("%s %d of %d\n", argv[1], rank, size);
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        child(argc, argv, 4);
        MPI_Finalize();
        return 0;
    }
    CHECK(size == 4, "needs 4 ranks");
    int *universe = NULL, flag = 0;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
    CHECK(flag && *universe == 12, "MPI_UNIVERSE_SIZE %d (run with --universe-size 12)", *universe);

    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "wdir", "/tmp"));
    OK(MPI_Info_set(info, "host", "ignored"));
    char *child_argv[] = {"child", NULL};
    int codes[2] = {-1, -1};
    MPI_Comm inter;
    OK(MPI_Comm_spawn(argv[0], child_argv, 2, info, 1, MPI_COMM_WORLD, &inter, codes));
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS, "codes %d %d", codes[0], codes[1]);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int remote = 0;
    OK(MPI_Comm_remote_size(inter, &remote));
    CHECK(remote == 2, "remote size %d", remote);
    if (rank == 0) {
        int got[2], seen = 0;
        for (int i = 0; i < 2; i++) {
            MPI_Status status;
            OK(MPI_Recv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &status));
            CHECK(status.MPI_SOURCE == got[i], "source %d sent %d", status.MPI_SOURCE, got[i]);
            seen |= 1 << got[i];
        }
        CHECK(seen == 3, "children sent %d %d", got[0], got[1]);
    }
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, 0, &merged));
    int merged_size, mine, sum = 0;
    OK(MPI_Comm_size(merged, &merged_size));
    OK(MPI_Comm_rank(merged, &mine));
    CHECK(merged_size == 6 && mine == rank, "merged: rank %d of %d", mine, merged_size);
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == 15, "merged sum %d", sum);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect leaves the handle");

    /* maxprocs 0 at the root: MPI_ERR_ARG there, MPI_ERR_SPAWN at the others. */
    EXPECT(MPI_Comm_spawn(argv[0], child_argv, 0, MPI_INFO_NULL, 1, MPI_COMM_WORLD, &inter,
                          MPI_ERRCODES_IGNORE),
           rank == 1 ? MPI_ERR_ARG : MPI_ERR_SPAWN);
    CHECK(inter == MPI_COMM_NULL, "an intercommunicator after a failed spawn");
    /* A program that does not exist (1 process: it takes world rank 6). */
    codes[0] = -1;
    EXPECT(MPI_Comm_spawn("/nonexistent/spawn-child", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                          MPI_COMM_WORLD, &inter, codes),
           MPI_ERR_SPAWN);
    CHECK(rank != 0 || codes[0] == MPI_ERR_SPAWN, "code %d", codes[0]);
    /* Beyond the universe (12: 4 + 2 + 1 taken). */
    EXPECT(MPI_Comm_spawn(argv[0], child_argv, 6, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                          MPI_ERRCODES_IGNORE),
           MPI_ERR_SPAWN);
    /* Two programs in one spawn: 1 + 1 processes, "multiple" as their argument. */
    char *commands[2] = {argv[0], argv[0]};
    char *multiple_argv[] = {"multiple", NULL};
    char **argvs[2] = {multiple_argv, multiple_argv};
    int maxprocs[2] = {1, 1};
    MPI_Info infos[2] = {info, info};
    int multiple_codes[2] = {-1, -1};
    OK(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 2, MPI_COMM_WORLD, &inter,
                               multiple_codes));
    CHECK(multiple_codes[0] == MPI_SUCCESS && multiple_codes[1] == MPI_SUCCESS, "codes");
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    if (rank == 0) {
        for (int i = 0; i < 2; i++) {
            int got;
            OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, MPI_STATUS_IGNORE));
        }
    }
    OK(MPI_Intercomm_merge(inter, 0, &merged));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == 15, "merged sum over 6 ranks %d", sum);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&inter));
    OK(MPI_Info_free(&info));
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

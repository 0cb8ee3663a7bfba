/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Info objects: create / set / get / get_string / get_valuelen / get_nkeys / get_nthkey /
 * delete / dup / free, before MPI_Init and while running; MPI_INFO_ENV and
 * MPI_Info_create_env (run with the arguments "alpha beta"); the communicator calls that take
 * an info; and bad input (NULL pointers, freed handles, keys and values too long, a missing
 * key, changes to MPI_INFO_ENV). */
#include "ft_common.h"

#include <string.h>

/* The value of `key` in `info`, which must be there, as MPI_Info_get gives it. */
static void expect_value(MPI_Info info, const char *key, const char *want) {
    char value[MPI_MAX_INFO_VAL];
    int flag = -1, len = -1;
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 1, "%s: no such key", key);
    CHECK(len == (int)strlen(want), "%s: valuelen %d, want %d", key, len, (int)strlen(want));
    OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag));
    CHECK(flag == 1 && strcmp(value, want) == 0, "%s = \"%s\", want \"%s\"", key, value, want);
}

static void expect_absent(MPI_Info info, const char *key) {
    char value[16] = "untouched";
    int flag = -1, len = -7;
    OK(MPI_Info_get(info, key, sizeof value - 1, value, &flag));
    CHECK(flag == 0 && strcmp(value, "untouched") == 0, "%s: present (%s)", key, value);
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 0 && len == -7, "%s: valuelen says present", key);
}

/* The pairs of an info made by the program, with every reading call. */
static void check_pairs(void) {
    MPI_Info info, copy;
    int nkeys = -1, flag = -1;
    OK(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL && info != MPI_INFO_ENV, "a new info is %d", info);
    OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 0, "a new info has %d keys", nkeys);
    OK(MPI_Info_set(info, "color", "red"));
    OK(MPI_Info_set(info, "shape", "a long thin rectangle"));
    OK(MPI_Info_set(info, "empty", ""));
    OK(MPI_Info_set(info, "color", "blue")); /* replaces, keeps its place */
    OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 3, "%d keys, want 3", nkeys);
    const char *order[] = {"color", "shape", "empty"};
    for (int i = 0; i < 3; i++) {
        char key[MPI_MAX_INFO_KEY];
        OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0, "key %d is %s, want %s", i, key, order[i]);
    }
    expect_value(info, "color", "blue");
    expect_value(info, "shape", "a long thin rectangle");
    expect_value(info, "empty", "");
    expect_absent(info, "Color"); /* keys are case-sensitive */

    /* Truncation: MPI_Info_get writes valuelen bytes and a NUL. */
    char small[7];
    memset(small, '#', sizeof small);
    OK(MPI_Info_get(info, "shape", 5, small, &flag));
    CHECK(flag == 1 && strcmp(small, "a lon") == 0 && small[6] == '#', "truncated to \"%s\"",
          small);

    /* MPI_Info_get_string: the length with the NUL, then the value. */
    char big[64] = "untouched";
    int buflen = 0; /* asks for the length only: nothing is written */
    OK(MPI_Info_get_string(info, "shape", &buflen, big, &flag));
    CHECK(flag == 1 && buflen == 22 && strcmp(big, "untouched") == 0, "get_string length %d",
          buflen);
    buflen = sizeof big;
    OK(MPI_Info_get_string(info, "color", &buflen, big, &flag));
    CHECK(flag == 1 && buflen == 5 && strcmp(big, "blue") == 0, "get_string: %s (%d)", big,
          buflen);
    buflen = 3;
    OK(MPI_Info_get_string(info, "color", &buflen, big, &flag));
    CHECK(flag == 1 && buflen == 5 && strcmp(big, "bl") == 0, "get_string short: %s", big);
    buflen = 9;
    OK(MPI_Info_get_string(info, "missing", &buflen, big, &flag));
    CHECK(flag == 0 && buflen == 9, "get_string of a missing key: %d %d", flag, buflen);

    /* Dup: same pairs, same order, independent of the original. */
    OK(MPI_Info_dup(info, &copy));
    CHECK(copy != info, "dup returned the same handle");
    OK(MPI_Info_delete(info, "color"));
    OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 2, "after delete: %d keys", nkeys);
    expect_absent(info, "color");
    char key[MPI_MAX_INFO_KEY];
    OK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "shape") == 0, "after delete key 0 is %s", key);
    expect_value(copy, "color", "blue");
    OK(MPI_Info_get_nkeys(copy, &nkeys));
    CHECK(nkeys == 3, "the copy has %d keys", nkeys);
    OK(MPI_Info_get_nthkey(copy, 2, key));
    CHECK(strcmp(key, "empty") == 0, "copy's key 2 is %s", key);

    /* Longest key and value accepted, one more byte refused. */
    char long_key[MPI_MAX_INFO_KEY + 1], long_value[MPI_MAX_INFO_VAL + 1];
    memset(long_key, 'k', MPI_MAX_INFO_KEY);
    long_key[MPI_MAX_INFO_KEY - 1] = '\0';
    memset(long_value, 'v', MPI_MAX_INFO_VAL);
    long_value[MPI_MAX_INFO_VAL - 1] = '\0';
    OK(MPI_Info_set(info, long_key, long_value));
    int len = -1;
    OK(MPI_Info_get_valuelen(info, long_key, &len, &flag));
    CHECK(flag == 1 && len == MPI_MAX_INFO_VAL - 1, "longest value: %d", len);
    long_key[MPI_MAX_INFO_KEY - 1] = 'k';
    long_key[MPI_MAX_INFO_KEY] = '\0';
    EXPECT(MPI_Info_set(info, long_key, "x"), MPI_ERR_INFO_KEY);
    EXPECT(MPI_Info_get(info, long_key, 4, small, &flag), MPI_ERR_INFO_KEY);
    long_value[MPI_MAX_INFO_VAL - 1] = 'v';
    long_value[MPI_MAX_INFO_VAL] = '\0';
    EXPECT(MPI_Info_set(info, "k", long_value), MPI_ERR_INFO_VALUE);
    EXPECT(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);

    /* Bad input. */
    EXPECT(MPI_Info_delete(info, "never set"), MPI_ERR_INFO_NOKEY);
    EXPECT(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);
    EXPECT(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    EXPECT(MPI_Info_get_nthkey(info, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_get(info, "shape", -1, small, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_get(info, "shape", 4, NULL, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_get(info, "shape", 4, small, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_get(info, NULL, 4, small, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_set(info, NULL, "x"), MPI_ERR_ARG);
    EXPECT(MPI_Info_set(info, "k", NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_get_valuelen(info, "shape", NULL, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG);
    buflen = -1;
    EXPECT(MPI_Info_get_string(info, "shape", &buflen, big, &flag), MPI_ERR_ARG);
    buflen = 4;
    EXPECT(MPI_Info_get_string(info, "shape", &buflen, NULL, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_get_string(info, "shape", NULL, big, &flag), MPI_ERR_ARG);
    EXPECT(MPI_Info_create(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_dup(info, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_free(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
    EXPECT(MPI_Info_get_nkeys(MPI_INFO_NULL, &nkeys), MPI_ERR_INFO);
    EXPECT(MPI_Info_get_nkeys(4242, &nkeys), MPI_ERR_INFO);

    /* Free: the handle becomes MPI_INFO_NULL, the old one is stale. */
    MPI_Info stale = info;
    OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "free left %d", info);
    EXPECT(MPI_Info_get_nkeys(stale, &nkeys), MPI_ERR_INFO);
    EXPECT(MPI_Info_set(stale, "k", "v"), MPI_ERR_INFO);
    EXPECT(MPI_Info_dup(stale, &info), MPI_ERR_INFO);
    EXPECT(MPI_Info_free(&stale), MPI_ERR_INFO);
    EXPECT(MPI_Info_free(&info), MPI_ERR_INFO); /* MPI_INFO_NULL */
    OK(MPI_Info_free(&copy));
}

/* MPI_INFO_ENV and MPI_Info_create_env, after MPI_Init (maxprocs is then known). */
static void check_env(int argc, char **argv, int size) {
    MPI_Info made;
    OK(MPI_Info_create_env(argc, argv, &made));
    MPI_Info infos[2] = {MPI_INFO_ENV, made};
    for (int i = 0; i < 2; i++) {
        MPI_Info env = infos[i];
        char value[MPI_MAX_INFO_VAL], want[MPI_MAX_INFO_VAL];
        int flag = -1, len = 0;
        OK(MPI_Info_get(env, "command", MPI_MAX_INFO_VAL - 1, value, &flag));
        CHECK(flag == 1 && strcmp(value, argv[0]) == 0, "command = %s, want %s", value, argv[0]);
        expect_value(env, "argv", "alpha beta");
        snprintf(want, sizeof want, "%d", size);
        expect_value(env, "maxprocs", want);
        OK(MPI_Get_processor_name(want, &len));
        expect_value(env, "host", want);
        CHECK(getcwd(want, sizeof want) != NULL, "getcwd");
        expect_value(env, "wdir", want);
        expect_value(env, "thread_level", "MPI_THREAD_MULTIPLE");
        OK(MPI_Info_get_valuelen(env, "arch", &len, &flag));
        CHECK(flag == 1 && len > 0, "arch: flag %d, length %d", flag, len);
        expect_value(env, "mpi_initial_errhandler", "mpi_errors_are_fatal");
        expect_absent(env, "file");
        int nkeys = -1;
        OK(MPI_Info_get_nkeys(env, &nkeys));
        CHECK(nkeys == 8, "MPI_INFO_ENV has %d keys", nkeys);
        char key[MPI_MAX_INFO_KEY];
        OK(MPI_Info_get_nthkey(env, 0, key));
        CHECK(strcmp(key, "command") == 0, "first key %s", key);
    }
    /* The program's own copy can change; MPI_INFO_ENV cannot. */
    OK(MPI_Info_set(made, "command", "changed"));
    expect_value(made, "command", "changed");
    EXPECT(MPI_Info_set(MPI_INFO_ENV, "command", "x"), MPI_ERR_INFO);
    EXPECT(MPI_Info_delete(MPI_INFO_ENV, "command"), MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    EXPECT(MPI_Info_free(&env), MPI_ERR_INFO);
    CHECK(env == MPI_INFO_ENV, "a refused free changed the handle");
    OK(MPI_Info_free(&made));
    EXPECT(MPI_Info_create_env(0, NULL, NULL), MPI_ERR_ARG);
}

/* The communicator calls that take an info: it is checked, and its hints ignored. */
static void check_comm_calls(int rank, int size) {
    MPI_Info hints, used;
    MPI_Comm dup;
    OK(MPI_Info_create(&hints));
    OK(MPI_Info_set(hints, "mpi_assert_no_any_source", "true"));
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &dup));
    int dup_rank = -1, dup_size = -1;
    OK(MPI_Comm_rank(dup, &dup_rank));
    OK(MPI_Comm_size(dup, &dup_size));
    CHECK(dup_rank == rank && dup_size == size, "dup_with_info: %d of %d", dup_rank, dup_size);
    int sum = 0, one = 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size, "allreduce on the dup: %d", sum);
    OK(MPI_Comm_set_info(dup, hints));
    OK(MPI_Comm_set_info(dup, MPI_INFO_NULL));
    OK(MPI_Comm_get_info(dup, &used));
    int nkeys = -1;
    OK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys == 0, "the hints in use: %d keys", nkeys);
    OK(MPI_Info_free(&used));
    MPI_Comm dup2;
    OK(MPI_Comm_dup_with_info(dup, MPI_INFO_NULL, &dup2));
    OK(MPI_Comm_free(&dup2));

    MPI_Info freed;
    OK(MPI_Info_create(&freed));
    MPI_Info stale = freed;
    OK(MPI_Info_free(&freed));
    EXPECT(MPI_Comm_set_info(dup, stale), MPI_ERR_INFO);
    EXPECT(MPI_Comm_set_info(MPI_COMM_NULL, hints), MPI_ERR_COMM);
    EXPECT(MPI_Comm_get_info(dup, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
    /* Every rank gives the same bad argument: none enters the collective. */
    EXPECT(MPI_Comm_dup_with_info(MPI_COMM_WORLD, stale, &dup2), MPI_ERR_INFO);
    EXPECT(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, NULL), MPI_ERR_ARG);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Info_free(&hints));
}

int main(int argc, char **argv) {
    int rank, size;
    CHECK(argc == 3, "run with the arguments alpha beta (%d arguments)", argc);
    /* Info calls before MPI_Init (MPI-4): return codes compared directly. */
    MPI_Info early;
    int flag = -1;
    char value[8];
    CHECK(MPI_Info_create(&early) == MPI_SUCCESS, "MPI_Info_create before MPI_Init");
    CHECK(MPI_Info_set(early, "when", "early") == MPI_SUCCESS, "MPI_Info_set before MPI_Init");
    /* The environment before MPI_Init: maxprocs is the launcher's count already. */
    MPI_Info early_env;
    char early_procs[16] = "";
    CHECK(MPI_Info_create_env(argc, argv, &early_env) == MPI_SUCCESS, "create_env early");
    CHECK(MPI_Info_get(early_env, "maxprocs", sizeof early_procs - 1, early_procs, &flag) ==
                  MPI_SUCCESS &&
              flag == 1,
          "maxprocs before MPI_Init");
    ft_init(&argc, &argv, &rank, &size);
    CHECK(atoi(early_procs) == size, "maxprocs before MPI_Init: %s", early_procs);
    OK(MPI_Info_free(&early_env));
    OK(MPI_Info_get(early, "when", sizeof value - 1, value, &flag));
    CHECK(flag == 1 && strcmp(value, "early") == 0, "an info made before MPI_Init: %s", value);
    OK(MPI_Info_free(&early));

    check_pairs();
    check_env(argc, argv, size);
    check_comm_calls(rank, size);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    /* And after MPI_Finalize. */
    MPI_Info late;
    CHECK(MPI_Info_create(&late) == MPI_SUCCESS && MPI_Info_free(&late) == MPI_SUCCESS,
          "info calls after MPI_Finalize");
    return 0;
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* One-sided communication from C, on 4 ranks.
 * - Fence epochs on a window over the program's memory (MPI_Win_create, disp_unit 4): puts of
 *   ints, a strided put (vector type at the target), gets into a strided origin buffer,
 *   MPI_SUM accumulates from every rank, MPI_REPLACE; the predefined attributes and the name.
 * - Passive target on MPI_Win_allocate's memory: exclusive-lock read-modify-write and
 *   MPI_Fetch_and_op under MPI_Win_lock_all from every rank lose no increment;
 *   MPI_Compare_and_swap, MPI_Get_accumulate with MPI_NO_OP, flushes.
 * - Post / start / complete / wait and test.
 * - Attributes on windows (keys of MPI_Win_create_keyval), MPI_Alloc_mem / MPI_Free_mem.
 * - Wrong use: an operation outside an epoch (MPI_ERR_RMA_SYNC), past the end of the target's
 *   window (MPI_ERR_RMA_RANGE, target unchanged), a bad rank, an unknown window, an unlock
 *   without a lock, MPI_Free_mem of other memory.
 * - Failures: rank 3 dies; MPI_Win_fence returns MPIX_ERR_PROC_FAILED, a lock on it too;
 *   MPIX_Win_get_failed names it; after MPIX_Win_revoke every call returns MPIX_ERR_REVOKED;
 *   a window made over MPIX_Comm_shrink's communicator carries on. */
#include "ft_common.h"

#include <string.h>

#define N 4

static int handled = 0;
static MPI_Win handled_win = MPI_WIN_NULL;
static void count_errors(MPI_Win *win, int *code, ...) {
    (void)code;
    handled += 1;
    handled_win = *win;
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == N, "run on %d ranks", N);

    /* Fence epochs over the program's memory. */
    int mem[3 * N];
    for (int i = 0; i < 3 * N; i++)
        mem[i] = -1;
    MPI_Win win;
    OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_name(win, "fence window"));
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "fence window") == 0 && len == 12, "name %s", name);
    void *attr;
    int flag = 0;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &attr, &flag));
    CHECK(flag && attr == (void *)mem, "MPI_WIN_BASE");
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &attr, &flag));
    CHECK(flag && *(MPI_Aint *)attr == (MPI_Aint)sizeof mem, "MPI_WIN_SIZE");
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &attr, &flag));
    CHECK(flag && *(int *)attr == (int)sizeof(int), "MPI_WIN_DISP_UNIT");
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &attr, &flag));
    CHECK(flag && *(int *)attr == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &attr, &flag));
    CHECK(flag && *(int *)attr == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    MPI_Group wgroup;
    int gsize = 0;
    OK(MPI_Win_get_group(win, &wgroup));
    OK(MPI_Group_size(wgroup, &gsize));
    CHECK(gsize == N, "window group of %d", gsize);
    OK(MPI_Group_free(&wgroup));

    /* No epoch yet. */
    int one = 1;
    EXPECT(MPI_Put(&one, 1, MPI_INT, (rank + 1) % N, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock((rank + 1) % N, win), MPI_ERR_RMA_SYNC);

    OK(MPI_Win_fence(0, win));
    /* Slot `rank` of every rank gets rank * 10; slot N + 0 accumulates 1 + ... + N. */
    int mine = rank * 10, plus = rank + 1;
    for (int t = 0; t < N; t++) {
        OK(MPI_Put(&mine, 1, MPI_INT, t, rank, 1, MPI_INT, win));
        OK(MPI_Accumulate(&plus, 1, MPI_INT, t, N, 1, MPI_INT, MPI_SUM, win));
    }
    /* A strided target: rank 0 writes 2 ints to slots 2N and 2N + 2 of rank 1. */
    MPI_Datatype every_other;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int pair[2] = {77, 88};
    if (rank == 0)
        OK(MPI_Put(pair, 2, MPI_INT, 1, 2 * N, 1, every_other, win));
    /* Outside the target's window: refused at the call, the target unchanged. */
    EXPECT(MPI_Put(pair, 2, MPI_INT, (rank + 1) % N, 3 * N - 1, 2, MPI_INT, win),
           MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(pair, 2, MPI_INT, N, 0, 2, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(pair, 2, MPI_INT, 0, 0, 2, MPI_INT, 424242), MPI_ERR_WIN);
    OK(MPI_Win_fence(0, win));
    for (int r = 0; r < N; r++)
        CHECK(mem[r] == r * 10, "slot %d holds %d", r, mem[r]);
    CHECK(mem[N] == -1 + N * (N + 1) / 2, "the sum slot holds %d", mem[N]);
    if (rank == 1)
        CHECK(mem[2 * N] == 77 && mem[2 * N + 1] == -1 && mem[2 * N + 2] == 88,
              "strided put: %d %d %d", mem[2 * N], mem[2 * N + 1], mem[2 * N + 2]);
    CHECK(mem[3 * N - 1] == -1, "the refused put changed nothing");
    /* Local reads of the window end before the next epoch's operations reach it. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* A get into a strided origin buffer, and MPI_REPLACE. */
    int got[3] = {0, 0, 0};
    OK(MPI_Get(got, 1, every_other, (rank + 1) % N, 0, 2, MPI_INT, win));
    CHECK(got[0] == 0 && got[1] == 0 && got[2] == 10, "strided get: %d %d %d", got[0], got[1],
          got[2]);
    OK(MPI_Accumulate(&mine, 1, MPI_INT, (rank + 1) % N, 3 * N - 1, 1, MPI_INT, MPI_REPLACE, win));
    OK(MPI_Win_fence(0, win));
    CHECK(mem[3 * N - 1] == ((rank + N - 1) % N) * 10, "replaced: %d", mem[3 * N - 1]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The request-based forms: complete when they return. */
    MPI_Request requests[4];
    int got_r = -1, twice = 2, old_r = -1;
    OK(MPI_Rput(&mine, 1, MPI_INT, (rank + 1) % N, 2 * N + 1, 1, MPI_INT, win, &requests[0]));
    OK(MPI_Rget(&got_r, 1, MPI_INT, (rank + 1) % N, 0, 1, MPI_INT, win, &requests[1]));
    OK(MPI_Raccumulate(&twice, 1, MPI_INT, (rank + 1) % N, 3 * N - 1, 1, MPI_INT, MPI_SUM, win,
                       &requests[2]));
    OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, &old_r, 1, MPI_INT, (rank + 1) % N, 0, 1, MPI_INT,
                           MPI_NO_OP, win, &requests[3]));
    OK(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE));
    CHECK(got_r == 0 && old_r == 0, "request-based gets: %d %d", got_r, old_r);
    OK(MPI_Win_fence(0, win));
    CHECK(mem[2 * N + 1] == ((rank + N - 1) % N) * 10, "Rput: %d", mem[2 * N + 1]);
    CHECK(mem[3 * N - 1] == ((rank + N - 1) % N) * 10 + 2, "Raccumulate: %d", mem[3 * N - 1]);
    OK(MPI_Type_free(&every_other));

    /* Attributes on windows. */
    int key = MPI_KEYVAL_INVALID;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Win_set_attr(win, key, (void *)42));
    OK(MPI_Win_get_attr(win, key, &attr, &flag));
    CHECK(flag && attr == (void *)42, "a user attribute");
    OK(MPI_Win_delete_attr(win, key));
    OK(MPI_Win_get_attr(win, key, &attr, &flag));
    CHECK(!flag, "deleted");
    OK(MPI_Win_free_keyval(&key));
    /* A window's own error handler: called with the window's handle. */
    MPI_Errhandler eh, got_eh;
    OK(MPI_Win_create_errhandler(count_errors, &eh));
    OK(MPI_Win_set_errhandler(win, eh));
    OK(MPI_Win_get_errhandler(win, &got_eh));
    CHECK(got_eh == eh, "the window's handler");
    EXPECT(MPI_Put(&one, 1, MPI_INT, 0, 3 * N, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handled == 2 && handled_win == win, "the handler ran %d times", handled);
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Errhandler_free(&got_eh));
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");

    /* Passive target on the library's memory. */
    long *counter = NULL;
    OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                        &win));
    CHECK(counter[0] == 0 && counter[1] == 0, "allocated memory is zeroed");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 20; i++) {
        long value;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        value += 1;
        OK(MPI_Put(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(0, win));
    }
    long inc = 1, before = -1;
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < 20; i++)
        OK(MPI_Fetch_and_op(&inc, &before, MPI_LONG, 0, 1, MPI_SUM, win));
    OK(MPI_Win_flush(0, win));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Win_flush_local(0, win));
    OK(MPI_Win_flush_local_all(win));
    OK(MPI_Win_sync(win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(counter[0] == 20 * N && counter[1] == 20 * N, "counters %ld %ld", counter[0],
              counter[1]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Compare-and-swap: exactly one rank swaps 0 -> its rank + 1 in slot 0 of rank 1. */
    long zero = 0, me1 = rank + 1, old = -1, seen = -1;
    if (rank == 1)
        counter[0] = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
    OK(MPI_Compare_and_swap(&me1, &zero, &old, MPI_LONG, 1, 0, win));
    OK(MPI_Win_unlock(1, win));
    int swapped = old == 0, swaps = 0;
    OK(MPI_Allreduce(&swapped, &swaps, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(swaps == 1, "%d ranks swapped", swaps);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, &seen, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_NO_OP,
                          win));
    OK(MPI_Win_unlock(1, win));
    CHECK(seen >= 1 && seen <= N, "atomic read %ld", seen);
    OK(MPI_Win_free(&win));

    /* Post / start / complete / wait: ranks 1..N-1 put into rank 0. */
    int slots[N] = {0};
    OK(MPI_Win_create(slots, sizeof slots, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world_group, others, root;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int zero_rank = 0;
    OK(MPI_Group_excl(world_group, 1, &zero_rank, &others));
    OK(MPI_Group_incl(world_group, 1, &zero_rank, &root));
    if (rank == 0) {
        OK(MPI_Win_post(others, 0, win));
        OK(MPI_Win_wait(win));
        for (int r = 1; r < N; r++)
            CHECK(slots[r] == r + 100, "slot %d: %d", r, slots[r]);
        OK(MPI_Win_post(others, 0, win));
        int done = 0;
        while (!done)
            OK(MPI_Win_test(win, &done));
    } else {
        for (int round = 0; round < 2; round++) {
            int value = rank + 100 + round;
            OK(MPI_Win_start(root, 0, win));
            OK(MPI_Put(&value, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
            OK(MPI_Win_complete(win));
        }
    }
    OK(MPI_Win_free(&win));
    OK(MPI_Group_free(&others));
    OK(MPI_Group_free(&root));

    /* A dynamic window: rank r attaches an array and sends its address to rank r - 1, which
     * puts into it; bytes outside the attached region are refused. */
    long region[4] = {0, 0, 0, 0};
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_attach(win, region, sizeof region));
    EXPECT(MPI_Win_attach(win, &region[1], sizeof(long)), MPI_ERR_ARG);
    MPI_Aint mine_at, theirs_at = 0;
    OK(MPI_Get_address(region, &mine_at));
    OK(MPI_Sendrecv(&mine_at, 1, MPI_AINT, (rank + N - 1) % N, 6, &theirs_at, 1, MPI_AINT,
                    (rank + 1) % N, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &attr, &flag));
    CHECK(flag && *(int *)attr == MPI_WIN_FLAVOR_DYNAMIC, "a dynamic window's flavor");
    OK(MPI_Win_fence(0, win));
    long lr = rank + 1000;
    OK(MPI_Put(&lr, 1, MPI_LONG, (rank + 1) % N, MPI_Aint_add(theirs_at, 2 * sizeof(long)), 1,
               MPI_LONG, win));
    EXPECT(MPI_Put(&lr, 1, MPI_LONG, (rank + 1) % N, MPI_Aint_add(theirs_at, 4 * sizeof(long)),
                   1, MPI_LONG, win),
           MPI_SUCCESS);
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_RMA_RANGE);
    CHECK(region[2] == ((rank + N - 1) % N) + 1000 && region[3] == 0, "dynamic put: %ld %ld",
          region[2], region[3]);
    CHECK(MPI_Aint_diff(MPI_Aint_add(mine_at, 16), mine_at) == 16, "MPI_Aint_diff");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_detach(win, region));
    EXPECT(MPI_Win_detach(win, region), MPI_ERR_ARG);
    /* Two regions attached end to end take an operation that spans both. */
    long halves[4] = {0, 0, 0, 0}, pair_out[2] = {rank + 1, rank + 2};
    OK(MPI_Win_attach(win, halves, 2 * sizeof(long)));
    OK(MPI_Win_attach(win, &halves[2], 2 * sizeof(long)));
    OK(MPI_Get_address(halves, &mine_at));
    OK(MPI_Sendrecv(&mine_at, 1, MPI_AINT, (rank + N - 1) % N, 7, &theirs_at, 1, MPI_AINT,
                    (rank + 1) % N, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(pair_out, 2, MPI_LONG, (rank + 1) % N, MPI_Aint_add(theirs_at, sizeof(long)), 2,
               MPI_LONG, win));
    OK(MPI_Win_fence(0, win));
    int left_rank = (rank + N - 1) % N;
    CHECK(halves[0] == 0 && halves[1] == left_rank + 1 && halves[2] == left_rank + 2 &&
              halves[3] == 0,
          "a put across two regions: %ld %ld %ld %ld", halves[0], halves[1], halves[2],
          halves[3]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_detach(win, halves));
    OK(MPI_Win_detach(win, &halves[2]));
    OK(MPI_Win_free(&win));

    /* Pair types accumulate with MPI_MINLOC / MPI_MAXLOC (another operation is refused by the
     * target and reported at the fence, the target unchanged). */
    int pairs[2] = {1000, -1}, mine_pair[2] = {(rank * 7) % 5, rank};
    MPI_Win pw;
    OK(MPI_Win_create(pairs, sizeof pairs, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pw));
    OK(MPI_Win_fence(0, pw));
    OK(MPI_Accumulate(mine_pair, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MINLOC, pw));
    if (rank == 1) {
        OK(MPI_Accumulate(mine_pair, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_SUM, pw));
        EXPECT(MPI_Win_fence(0, pw), MPI_ERR_RMA_RANGE);
    } else {
        OK(MPI_Win_fence(0, pw));
    }
    if (rank == 0)
        CHECK(pairs[0] == 0 && pairs[1] == 0, "MPI_MINLOC: %d at %d", pairs[0], pairs[1]);
    OK(MPI_Win_free(&pw));

    /* MPI_Alloc_mem. */
    double *buf = NULL;
    OK(MPI_Alloc_mem(16 * sizeof(double), MPI_INFO_NULL, &buf));
    buf[15] = 1.5;
    EXPECT(MPI_Free_mem(mem), MPI_ERR_BASE);
    OK(MPI_Free_mem(buf));

    /* Failures: rank 3 dies with a window open. */
    long cell[2] = {0, 0};
    OK(MPI_Win_create(cell, sizeof cell, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    ft_sync_then_die(MPI_COMM_WORLD, 3);
    ft_wait_detected(MPI_COMM_WORLD, 3);
    EXPECT(MPI_Win_fence(0, win), MPIX_ERR_PROC_FAILED);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 3, 0, win), MPIX_ERR_PROC_FAILED);
    MPI_Group failed;
    OK(MPIX_Win_get_failed(win, &failed));
    int nfailed = 0;
    OK(MPI_Group_size(failed, &nfailed));
    CHECK(nfailed == 1, "%d failed", nfailed);
    OK(MPI_Group_free(&failed));
    /* Rank 0 revokes once the others are past their checks (told by a message each); the
     * revocation travels ahead of rank 0's next message, so everyone sees it. */
    int token = 0;
    if (rank == 0) {
        OK(MPI_Recv(&token, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&token, 1, MPI_INT, 2, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPIX_Win_revoke(win));
        OK(MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        OK(MPI_Send(&token, 1, MPI_INT, 2, 5, MPI_COMM_WORLD));
    } else {
        OK(MPI_Send(&token, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPIX_ERR_REVOKED);
    EXPECT(MPI_Win_fence(0, win), MPIX_ERR_REVOKED);
    EXPECT(MPI_Win_free(&win), MPIX_ERR_REVOKED);
    MPI_Comm survivors;
    OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors));
    MPI_Win again;
    long total = 0;
    OK(MPI_Win_create(&total, sizeof total, sizeof(long), MPI_INFO_NULL, survivors, &again));
    OK(MPI_Win_fence(0, again));
    long add = rank + 1;
    OK(MPI_Accumulate(&add, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, again));
    OK(MPI_Win_fence(0, again));
    if (rank == 0)
        CHECK(total == 1 + 2 + 3, "the rebuilt window's sum is %ld", total);
    OK(MPI_Win_free(&again));
    OK(MPI_Comm_free(&survivors));
    OK(MPI_Group_free(&world_group));
    return ft_finish();
}

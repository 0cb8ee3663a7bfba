/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The resilience library from C (RTX_Store_*), on 4 ranks: every rank checkpoints its slot (1000
 * ints) with one copy on the next rank, changes its data, and rank 2 dies. The survivors shrink
 * MPI_COMM_WORLD and recover over the shrunk communicator: rank 3 now owns slots 2 and 3, every
 * slot comes back as it was checkpointed (not as changed), and a checkpoint on the new owners
 * commits. Wrong use: an unknown store, a negative count, a buffer too small for a slot. */
#include "ft_common.h"

#include <string.h>

#define N 1000

static void fill(int *data, int slot, int step) {
    for (int i = 0; i < N; i++)
        data[i] = slot * 100000 + step * 1000 + i;
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 4, "run on 4 ranks");
    RTX_Store store = RTX_STORE_NULL;
    OK(RTX_Store_create(MPI_COMM_WORLD, 1, &store));
    int owned[4], count = -1;
    OK(RTX_Store_owned(store, 4, owned, &count));
    CHECK(count == 1 && owned[0] == rank, "owns its slot: %d slots, first %d", count, owned[0]);

    static int data[N];
    fill(data, rank, 1);
    const void *parts[1] = {data};
    MPI_Aint sizes[1] = {sizeof data};
    OK(RTX_Store_checkpoint(store, 1, &rank, parts, sizes));
    fill(data, rank, 2); /* changed after the checkpoint: a recovery goes back to step 1 */

    /* Wrong use, local: nothing collective starts. */
    EXPECT(RTX_Store_owned(store + 1000, 0, NULL, &count), MPI_ERR_ARG);
    EXPECT(RTX_Store_checkpoint(store, -1, NULL, NULL, NULL), MPI_ERR_COUNT);

    if (rank == 2)
        DIE();
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    MPI_Comm shrunk;
    OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    OK(RTX_Store_recover(store, shrunk));
    OK(RTX_Store_owned(store, 4, owned, &count));
    int want = rank == 3 ? 2 : 1;
    CHECK(count == want, "owns %d slots, not %d", count, want);
    static int restored[2][N], expected[N];
    for (int k = 0; k < count; k++) {
        MPI_Aint length = -1;
        OK(RTX_Store_restored(store, owned[k], NULL, 0, &length));
        CHECK(length == (MPI_Aint)sizeof data, "slot %d: %ld bytes", owned[k], (long)length);
        EXPECT(RTX_Store_restored(store, owned[k], restored[k], 8, &length), MPI_ERR_TRUNCATE);
        OK(RTX_Store_restored(store, owned[k], restored[k], sizeof restored[k], &length));
        fill(expected, owned[k], 1);
        CHECK(memcmp(restored[k], expected, sizeof expected) == 0, "slot %d restored", owned[k]);
        parts[0] = restored[k];
    }
    if (rank == 3)
        CHECK(owned[0] == 2 && owned[1] == 3, "rank 3 took slot 2: %d %d", owned[0], owned[1]);
    const void *both[2] = {restored[0], restored[1]};
    MPI_Aint both_sizes[2] = {sizeof data, sizeof data};
    OK(RTX_Store_checkpoint(store, count, owned, both, both_sizes));
    OK(RTX_Store_free(&store));
    CHECK(store == RTX_STORE_NULL, "freed");
    OK(MPI_Comm_free(&shrunk));
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

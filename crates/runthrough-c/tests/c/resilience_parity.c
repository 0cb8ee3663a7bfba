/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The resilience library's parity from C (RTX_Store_create_parity), on 6 ranks: two stores of
 * the same slots (slot s holds 100 * (s + 1) ints, so blocks have different lengths), one with
 * XOR parity over groups of 3 ({0, 1, 2} and {3, 4, 5}), one with Reed-Solomon parity of 2 over
 * one group of 6. Ranks 1 and 4 die after the checkpoints (one in each XOR group, two in the
 * Reed-Solomon group). The survivors shrink (again while a death shows only later) and recover
 * both stores: rank 2 rebuilds slot 1 and rank 5 slot 4 in each, every slot as checkpointed, and
 * a checkpoint on the new owners commits. Wrong use: groups of 1, a negative parity. */
#include "ft_common.h"

#include <string.h>

#define N 100

static void fill(int *data, int slot, int step) {
    for (int i = 0; i < N * (slot + 1); i++)
        data[i] = slot * 100000 + step * 1000 + i;
}

static int slot_data[6][N * 6], restored[6][N * 6], expected[N * 6];

/* Checks the slots `store` gave this rank back (rank 2 owns slots 1 and 2, rank 5 slots 4 and
 * 5, the others their own) and checkpoints them. */
static void check_restored(RTX_Store store, int rank) {
    int owned[6], count = -1;
    OK(RTX_Store_owned(store, 6, owned, &count));
    int want = rank == 2 || rank == 5 ? 2 : 1;
    CHECK(count == want, "owns %d slots, not %d", count, want);
    if (want == 2)
        CHECK(owned[0] == rank - 1 && owned[1] == rank, "took slot %d: %d", rank - 1, owned[0]);
    const void *parts[2];
    MPI_Aint sizes[2];
    for (int k = 0; k < count; k++) {
        int slot = owned[k];
        MPI_Aint length = -1;
        OK(RTX_Store_restored(store, slot, restored[k], sizeof restored[k], &length));
        CHECK(length == (MPI_Aint)(N * (slot + 1) * sizeof(int)), "slot %d: %ld bytes", slot,
              (long)length);
        fill(expected, slot, 1);
        CHECK(memcmp(restored[k], expected, length) == 0, "slot %d restored bit for bit", slot);
        parts[k] = restored[k];
        sizes[k] = length;
    }
    OK(RTX_Store_checkpoint(store, count, owned, parts, sizes));
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 6, "run on 6 ranks");

    RTX_Store wrong = RTX_STORE_NULL;
    EXPECT(RTX_Store_create_parity(MPI_COMM_WORLD, 1, 1, &wrong), MPI_ERR_ARG);
    EXPECT(RTX_Store_create_parity(MPI_COMM_WORLD, 3, -1, &wrong), MPI_ERR_ARG);
    CHECK(wrong == RTX_STORE_NULL, "no store made");

    RTX_Store xor_store = RTX_STORE_NULL, rs_store = RTX_STORE_NULL;
    OK(RTX_Store_create_parity(MPI_COMM_WORLD, 3, 1, &xor_store));
    OK(RTX_Store_create_parity(MPI_COMM_WORLD, 6, 2, &rs_store));
    fill(slot_data[rank], rank, 1);
    const void *parts[1] = {slot_data[rank]};
    MPI_Aint sizes[1] = {(MPI_Aint)(N * (rank + 1) * sizeof(int))};
    OK(RTX_Store_checkpoint(xor_store, 1, &rank, parts, sizes));
    OK(RTX_Store_checkpoint(rs_store, 1, &rank, parts, sizes));
    fill(slot_data[rank], rank, 2); /* changed after the checkpoint: recoveries go back */

    if (rank == 1 || rank == 4)
        DIE();
    EXPECT(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED);
    MPI_Comm comm = MPI_COMM_WORLD, shrunk = MPI_COMM_NULL;
    for (int attempt = 0;; attempt++) {
        OK(MPIX_Comm_shrink(comm, &shrunk));
        if (comm != MPI_COMM_WORLD)
            OK(MPI_Comm_free(&comm));
        comm = shrunk;
        int rc = RTX_Store_recover(xor_store, comm), class = -1;
        if (rc == MPI_SUCCESS)
            break;
        MPI_Error_class(rc, &class);
        CHECK(attempt < 3 && (class == RTX_ERR_NOT_COMMITTED || class == MPIX_ERR_PROC_FAILED),
              "recovery attempt %d: class %d", attempt, class);
    }
    check_restored(xor_store, rank);
    OK(RTX_Store_recover(rs_store, comm));
    check_restored(rs_store, rank);
    OK(RTX_Store_free(&xor_store));
    OK(RTX_Store_free(&rs_store));
    OK(MPI_Comm_free(&comm));
    if (rank == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return 0;
}

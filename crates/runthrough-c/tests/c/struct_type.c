/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Struct datatypes (MPI_Type_create_struct, MPI_Type_struct, MPI_Get_address).
 * - A type for struct { int; double; char[3]; } built with offsetof: its size is the data
 *   (15 bytes), its extent sizeof the struct (trailing padding included), its true extent the
 *   span of the data; the same type built from MPI_Get_address differences and by the MPI-1
 *   name MPI_Type_struct.
 * - Arrays of the struct move right, padding untouched, in MPI_Send / MPI_Recv (with
 *   MPI_Get_count), MPI_Isend / MPI_Irecv, MPI_Sendrecv, MPI_Bcast, MPI_Gather, MPI_Allgather
 *   and MPI_Pack / MPI_Unpack, and nested in a contiguous type.
 * - A struct of ints only (with a gap) reduces element by element (MPI_Allreduce).
 * - Bad input gives an error class: negative count or block length (MPI_ERR_COUNT), NULL
 *   arrays or newtype (MPI_ERR_ARG), a freed or null
 *   member type (MPI_ERR_TYPE), an uncommitted type in a send (MPI_ERR_TYPE), a reduction of a
 *   struct of mixed types (MPI_ERR_TYPE).
 * - The last rank dies: a receive of the struct from it is MPIX_ERR_PROC_FAILED and leaves the
 *   buffer untouched. */
#include "ft_common.h"
#include <stddef.h>
#include <string.h>

typedef struct {
    int i;
    double d;
    char c[3];
} item;

#define N 5
#define PAD 0x5a

static void fill(item *items, int n, int seed) {
    memset(items, PAD, sizeof(item) * n);
    for (int k = 0; k < n; k++) {
        items[k].i = seed * 1000 + k;
        items[k].d = seed + k * 0.25;
        items[k].c[0] = (char)('a' + k);
        items[k].c[1] = (char)('A' + seed % 26);
        items[k].c[2] = (char)k;
    }
}

/* The items carry seed's values and, where the receiver prefilled with PAD, padding untouched. */
static void check(const item *items, int n, int seed, const char *what) {
    for (int k = 0; k < n; k++) {
        CHECK(items[k].i == seed * 1000 + k && items[k].d == seed + k * 0.25 &&
                  items[k].c[0] == 'a' + k && items[k].c[1] == 'A' + seed % 26 &&
                  items[k].c[2] == k,
              "%s: item %d of seed %d is {%d, %g, %d %d %d}", what, k, seed, items[k].i,
              items[k].d, items[k].c[0], items[k].c[1], items[k].c[2]);
        const unsigned char *bytes = (const unsigned char *)&items[k];
        for (size_t b = offsetof(item, i) + sizeof(int); b < offsetof(item, d); b++)
            CHECK(bytes[b] == PAD, "%s: item %d: padding byte %zu written", what, k, b);
        for (size_t b = offsetof(item, c) + 3; b < sizeof(item); b++)
            CHECK(bytes[b] == PAD, "%s: item %d: trailing byte %zu written", what, k, b);
    }
}

static void prefill(item *items, int n) { memset(items, PAD, sizeof(item) * n); }

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 3, "needs 3 ranks");
    int victim = size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int blocklens[3] = {1, 1, 3};
    MPI_Aint displs[3] = {offsetof(item, i), offsetof(item, d), offsetof(item, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype item_type, by_address, old_name;
    OK(MPI_Type_create_struct(3, blocklens, displs, types, &item_type));
    /* Not committed yet: communicating with it is an error. */
    item one[1];
    fill(one, 1, rank);
    EXPECT(MPI_Send(one, 1, item_type, rank, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&item_type));

    int type_size = -1;
    MPI_Aint lb = -1, extent = -1, true_lb = -1, true_extent = -1;
    OK(MPI_Type_size(item_type, &type_size));
    OK(MPI_Type_get_extent(item_type, &lb, &extent));
    OK(MPI_Type_get_true_extent(item_type, &true_lb, &true_extent));
    CHECK(type_size == (int)(sizeof(int) + sizeof(double) + 3), "size %d", type_size);
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(item), "lb %td extent %td, sizeof %zu", lb,
          extent, sizeof(item));
    CHECK(true_lb == 0 && true_extent == (MPI_Aint)(offsetof(item, c) + 3),
          "true lb %td true extent %td", true_lb, true_extent);
    OK(MPI_Type_get_true_extent(MPI_INT, &true_lb, &true_extent));
    CHECK(true_lb == 0 && true_extent == (MPI_Aint)sizeof(int), "MPI_INT true extent %td",
          true_extent);

    /* The same type from addresses, and by MPI-1's name. */
    item probe[2];
    MPI_Aint base, addrs[3];
    OK(MPI_Get_address(&probe[0], &base));
    OK(MPI_Get_address(&probe[0].i, &addrs[0]));
    OK(MPI_Get_address(&probe[0].d, &addrs[1]));
    OK(MPI_Get_address(probe[0].c, &addrs[2]));
    for (int b = 0; b < 3; b++)
        addrs[b] -= base;
    CHECK(addrs[0] == displs[0] && addrs[1] == displs[1] && addrs[2] == displs[2],
          "MPI_Get_address differences %td %td %td", addrs[0], addrs[1], addrs[2]);
    MPI_Aint second;
    OK(MPI_Get_address(&probe[1], &second));
    CHECK(second - base == (MPI_Aint)sizeof(item), "MPI_Get_address of the next item");
    OK(MPI_Type_create_struct(3, blocklens, addrs, types, &by_address));
    OK(MPI_Type_commit(&by_address));
#if !defined(OPEN_MPI) /* MPI-1's name, gone since MPI-3: Open MPI 5 no longer has it */
    OK(MPI_Type_struct(3, blocklens, displs, types, &old_name));
#else
    OK(MPI_Type_create_struct(3, blocklens, displs, types, &old_name));
#endif
    OK(MPI_Type_commit(&old_name));
    OK(MPI_Type_get_extent(old_name, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(item), "MPI_Type_struct extent %td", extent);

    /* Point-to-point between ranks 0 and 1: blocking, with the count in elements. */
    item items[N], got[N];
    if (rank == 0) {
        fill(items, N, 7);
        OK(MPI_Send(items, N, item_type, 1, 1, MPI_COMM_WORLD));
        prefill(got, N);
        MPI_Status status;
        OK(MPI_Recv(got, N, by_address, 1, 2, MPI_COMM_WORLD, &status));
        check(got, N, 8, "MPI_Recv from 1");
        int count = -1;
        OK(MPI_Get_count(&status, item_type, &count));
        CHECK(count == N, "MPI_Get_count %d", count);
    } else if (rank == 1) {
        prefill(got, N);
        MPI_Status status;
        OK(MPI_Recv(got, N, old_name, 0, 1, MPI_COMM_WORLD, &status));
        check(got, N, 7, "MPI_Recv from 0");
        int count = -1;
        OK(MPI_Get_count(&status, item_type, &count));
        CHECK(count == N, "MPI_Get_count %d", count);
        fill(items, N, 8);
        OK(MPI_Send(items, N, item_type, 0, 2, MPI_COMM_WORLD));
    }

    /* Non-blocking, and Sendrecv, around the ring. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request requests[2];
    fill(items, N, rank);
    prefill(got, N);
    OK(MPI_Irecv(got, N, item_type, prev, 3, MPI_COMM_WORLD, &requests[0]));
    OK(MPI_Isend(items, N, item_type, next, 3, MPI_COMM_WORLD, &requests[1]));
    OK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    check(got, N, prev, "MPI_Irecv");
    prefill(got, N);
    OK(MPI_Sendrecv(items, N, item_type, next, 4, got, N, item_type, prev, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    check(got, N, prev, "MPI_Sendrecv");

    /* Nested: a contiguous type of N items. */
    MPI_Datatype row;
    OK(MPI_Type_contiguous(N, item_type, &row));
    OK(MPI_Type_commit(&row));
    OK(MPI_Type_get_extent(row, &lb, &extent));
    CHECK(extent == (MPI_Aint)(N * sizeof(item)), "row extent %td", extent);
    if (rank == 0)
        fill(items, N, 42);
    else
        prefill(items, N);
    OK(MPI_Bcast(items, 1, row, 0, MPI_COMM_WORLD));
    check(items, N, 42, "MPI_Bcast");

    /* Gather and Allgather: one item per rank. */
    item mine[1], all[16];
    CHECK(size <= 16, "at most 16 ranks");
    fill(mine, 1, rank);
    prefill(all, size);
    OK(MPI_Gather(mine, 1, item_type, all, 1, item_type, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            check(&all[r], 1, r, "MPI_Gather");
    prefill(all, size);
    OK(MPI_Allgather(mine, 1, item_type, all, 1, item_type, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        check(&all[r], 1, r, "MPI_Allgather");

    /* Pack and unpack. */
    char packed[256];
    int position = 0, pack_size = -1;
    OK(MPI_Pack_size(N, item_type, MPI_COMM_WORLD, &pack_size));
    CHECK(pack_size >= N * type_size && pack_size <= (int)sizeof packed, "pack size %d",
          pack_size);
    fill(items, N, 3);
    OK(MPI_Pack(items, N, item_type, packed, sizeof packed, &position, MPI_COMM_WORLD));
    CHECK(position == N * type_size, "packed %d bytes", position);
    prefill(got, N);
    int at = 0;
    OK(MPI_Unpack(packed, position, &at, got, N, item_type, MPI_COMM_WORLD));
    check(got, N, 3, "MPI_Unpack");

    /* Bad input. */
    MPI_Datatype bad = MPI_DATATYPE_NULL, freed = MPI_DATATYPE_NULL;
    EXPECT(MPI_Type_create_struct(-1, blocklens, displs, types, &bad), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_struct(3, NULL, displs, types, &bad), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_struct(3, blocklens, NULL, types, &bad), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_struct(3, blocklens, displs, NULL, &bad), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_struct(3, blocklens, displs, types, NULL), MPI_ERR_ARG);
#if !defined(OPEN_MPI)
    EXPECT(MPI_Type_struct(-4, blocklens, displs, types, &bad), MPI_ERR_COUNT);
#endif
    int negative_len[3] = {1, -1, 3};
    EXPECT(MPI_Type_create_struct(3, negative_len, displs, types, &bad), MPI_ERR_COUNT);
    /* A negative displacement is MPI: lb -8, ub 16 + 3 rounded up to a multiple of 8. */
    MPI_Aint negative_displ[3] = {0, -8, 16}, neg_lb, neg_extent;
    OK(MPI_Type_create_struct(3, blocklens, negative_displ, types, &bad));
    OK(MPI_Type_get_extent(bad, &neg_lb, &neg_extent));
    CHECK(neg_lb == -8 && neg_extent == 32, "struct {0, -8, 16}: lb %ld extent %ld",
          (long)neg_lb, (long)neg_extent);
    OK(MPI_Type_free(&bad));
    OK(MPI_Type_contiguous(2, MPI_INT, &freed));
    MPI_Datatype stale = freed;
    OK(MPI_Type_free(&freed));
    MPI_Datatype bad_types[3] = {MPI_INT, stale, MPI_CHAR};
    EXPECT(MPI_Type_create_struct(3, blocklens, displs, bad_types, &bad), MPI_ERR_TYPE);
    bad_types[1] = MPI_DATATYPE_NULL;
    EXPECT(MPI_Type_create_struct(3, blocklens, displs, bad_types, &bad), MPI_ERR_TYPE);
    CHECK(bad == MPI_DATATYPE_NULL, "a refused constructor wrote a handle");
    EXPECT(MPI_Type_get_true_extent(item_type, NULL, &true_extent), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_true_extent(stale, &true_lb, &true_extent), MPI_ERR_TYPE);
    EXPECT(MPI_Get_address(items, NULL), MPI_ERR_ARG);
    /* No blocks: an empty type, with NULL arrays allowed. */
    MPI_Datatype empty;
    OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &empty));
    OK(MPI_Type_size(empty, &type_size));
    CHECK(type_size == 0, "empty struct size %d", type_size);
    OK(MPI_Type_free(&empty));
    /* A reduction cannot combine a struct of mixed types. */
    EXPECT(MPI_Allreduce(items, got, 1, item_type, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);

    /* A struct type made of one basic type reduces element by element; the gap is left. */
    typedef struct {
        int a;
        double skipped;
        int b;
    } pair_of_ints;
    MPI_Datatype ints_type;
    int two[2] = {1, 1};
    MPI_Aint int_displs[2] = {offsetof(pair_of_ints, a), offsetof(pair_of_ints, b)};
    MPI_Datatype int_types[2] = {MPI_INT, MPI_INT};
    OK(MPI_Type_create_struct(2, two, int_displs, int_types, &ints_type));
    OK(MPI_Type_commit(&ints_type));
    OK(MPI_Type_get_extent(ints_type, &lb, &extent));
    CHECK(extent == (MPI_Aint)(offsetof(pair_of_ints, b) + sizeof(int)), "ints extent %td",
          extent);
    pair_of_ints mine_pair = {rank, -1.0, 2 * rank}, sum_pair = {-7, 4.5, -7};
    OK(MPI_Allreduce(&mine_pair, &sum_pair, 1, ints_type, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum_pair.a == size * (size - 1) / 2 && sum_pair.b == size * (size - 1) &&
              sum_pair.skipped == 4.5,
          "struct reduction: %d %d %g", sum_pair.a, sum_pair.b, sum_pair.skipped);
    OK(MPI_Type_free(&ints_type));

    /* A struct from a dead rank. */
    ft_sync_then_die(MPI_COMM_WORLD, victim);
    if (rank == 0) {
        prefill(got, N);
        EXPECT(MPI_Recv(got, N, item_type, victim, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               MPIX_ERR_PROC_FAILED);
        const unsigned char *bytes = (const unsigned char *)got;
        for (size_t b = 0; b < sizeof got; b++)
            CHECK(bytes[b] == PAD, "a failed receive wrote byte %zu", b);
    }

    OK(MPI_Type_free(&row));
    OK(MPI_Type_free(&old_name));
    OK(MPI_Type_free(&by_address));
    OK(MPI_Type_free(&item_type));
    CHECK(item_type == MPI_DATATYPE_NULL, "freed handle not reset");
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Collectives on an intercommunicator between group A (world ranks 0 and 1) and group B (the
 * others, at least 2): data goes from one group to the other. Rooted calls (the root passes
 * MPI_ROOT, its group's other members MPI_PROC_NULL, the other group the root's rank):
 * MPI_Bcast both ways (into a strided type at the receivers), MPI_Reduce with MPI_SUM and with
 * a non-commutative user operation (combined in the other group's rank order), MPI_Gather,
 * MPI_Gatherv (blocks in reverse order), MPI_Scatter, MPI_Scatterv (rank r gets r + 1
 * elements). All-to-all calls (each group gets the other's data): MPI_Allreduce,
 * MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw. Wrong use,
 * refused at every rank before any message: a root outside the other group (MPI_ERR_ROOT), MPI_IN_PLACE
 * (MPI_ERR_BUFFER), MPI_Scan (MPI_ERR_COMM).
 * With the argument "kill": the last rank dies before an MPI_Allreduce, which returns
 * MPIX_ERR_PROC_FAILED at every member of A (their result needs its contribution) and
 * MPI_SUCCESS or MPIX_ERR_PROC_FAILED at the members of B; then an MPI_Bcast from A's rank 0
 * (a leaf that succeeds has the data) and an MPI_Reduce at it (MPIX_ERR_PROC_FAILED at the
 * root); none hangs. */
#include "ft_common.h"

#include <string.h>

/* Concatenation of decimal digits: associative, not commutative. */
static int digits(int v) {
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n *= 10;
    }
    return n * 10;
}

static void concat(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = a[i] * digits(b[i]) + b[i];
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 4, "needs at least 4 ranks");
    int in_a = rank < 2, g = in_a ? 0 : 1;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, g, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 2 : 0, 41, &inter));
    int l, nl, nr;
    OK(MPI_Comm_rank(inter, &l));
    OK(MPI_Comm_size(inter, &nl));
    OK(MPI_Comm_remote_size(inter, &nr));

    if (argc > 1 && strcmp(argv[1], "kill") == 0) {
        if (rank == size - 1)
            DIE();
        int one = 1, sum = 0, class = -1;
        int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
        MPI_Error_class(rc, &class);
        if (in_a)
            CHECK(class == MPIX_ERR_PROC_FAILED, "A: allreduce class %d", class);
        else
            CHECK(class == MPI_SUCCESS || class == MPIX_ERR_PROC_FAILED, "B: class %d", class);
        /* Rooted at A's rank 0: a broadcast reaches a live leaf whole or fails there, and a
         * reduction cannot complete at the root without the dead rank's contribution. */
        int word = in_a ? 77 : -1, root = in_a ? (l == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        rc = MPI_Bcast(&word, 1, MPI_INT, root, inter);
        MPI_Error_class(rc, &class);
        CHECK(class == MPI_SUCCESS || class == MPIX_ERR_PROC_FAILED, "bcast class %d", class);
        if (!in_a && class == MPI_SUCCESS)
            CHECK(word == 77, "bcast delivered %d", word);
        rc = MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, root, inter);
        MPI_Error_class(rc, &class);
        if (root == MPI_ROOT)
            CHECK(class == MPIX_ERR_PROC_FAILED, "reduce at the root: class %d", class);
        else
            CHECK(class == MPI_SUCCESS || class == MPIX_ERR_PROC_FAILED, "reduce class %d", class);
        return ft_finish();
    }

    /* MPI_Bcast from A's rank 1 to B; B lands it in every other int. */
    int word[3] = {0, 0, 0};
    MPI_Datatype every_other;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int landed[6] = {-1, -1, -1, -1, -1, -1};
    if (in_a) {
        if (l == 1) {
            int data[3] = {100, 101, 102};
            OK(MPI_Bcast(data, 3, MPI_INT, MPI_ROOT, inter));
        } else {
            OK(MPI_Bcast(NULL, 0, MPI_INT, MPI_PROC_NULL, inter));
        }
    } else {
        OK(MPI_Bcast(landed, 1, every_other, 1, inter));
        for (int k = 0; k < 6; k++) {
            int want = k % 2 ? -1 : 100 + k / 2;
            CHECK(landed[k] == want, "bcast landed[%d] = %d, not %d", k, landed[k], want);
        }
    }
    /* And from B's rank 1 to A. */
    if (in_a) {
        OK(MPI_Bcast(word, 3, MPI_INT, 1, inter));
        CHECK(word[0] == 7 && word[2] == 9, "bcast to A: %d %d", word[0], word[2]);
    } else {
        int data[3] = {7, 8, 9};
        OK(MPI_Bcast(data, 3, MPI_INT, l == 1 ? MPI_ROOT : MPI_PROC_NULL, inter));
    }

    /* MPI_Reduce of B's contributions at A's rank 0: a sum, then concatenation in rank order. */
    MPI_Op cat;
    OK(MPI_Op_create(concat, 0, &cat));
    int pair[2] = {l + 1, 10 * (l + 1)}, got[2] = {0, 0}, series = 0;
    if (in_a) {
        int root = l == 0 ? MPI_ROOT : MPI_PROC_NULL;
        OK(MPI_Reduce(NULL, got, 2, MPI_INT, MPI_SUM, root, inter));
        OK(MPI_Reduce(NULL, &series, 1, MPI_INT, cat, root, inter));
        if (l == 0) {
            int want = nr * (nr + 1) / 2, cat_want = 0;
            for (int r = 1; r <= nr; r++) cat_want = cat_want * 10 + r;
            CHECK(got[0] == want && got[1] == 10 * want, "reduce %d %d", got[0], got[1]);
            CHECK(series == cat_want, "ordered reduce %d, not %d", series, cat_want);
        }
    } else {
        OK(MPI_Reduce(pair, NULL, 2, MPI_INT, MPI_SUM, 0, inter));
        OK(MPI_Reduce(&pair[0], NULL, 1, MPI_INT, cat, 0, inter));
    }
    OK(MPI_Op_free(&cat));

    /* MPI_Allreduce: each group gets the sum of the other's ranks + 1. */
    int mine = l + 1, total = 0;
    OK(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, inter));
    CHECK(total == nr * (nr + 1) / 2, "allreduce %d", total);

    /* MPI_Gather of A's values at B's rank 0; MPI_Gatherv with the blocks reversed. */
    int from_a[2] = {-1, -1};
    int counts[8], displs[8];
    if (in_a) {
        int v = 10 + l;
        OK(MPI_Gather(&v, 1, MPI_INT, NULL, 0, MPI_INT, 0, inter));
        OK(MPI_Gatherv(&v, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter));
    } else if (l == 0) {
        OK(MPI_Gather(NULL, 0, MPI_INT, from_a, 1, MPI_INT, MPI_ROOT, inter));
        CHECK(from_a[0] == 10 && from_a[1] == 11, "gather %d %d", from_a[0], from_a[1]);
        for (int r = 0; r < nr; r++) {
            counts[r] = 1;
            displs[r] = nr - 1 - r;
        }
        OK(MPI_Gatherv(NULL, 0, MPI_INT, from_a, counts, displs, MPI_INT, MPI_ROOT, inter));
        CHECK(from_a[0] == 11 && from_a[1] == 10, "gatherv %d %d", from_a[0], from_a[1]);
    } else {
        OK(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_PROC_NULL, inter));
        OK(MPI_Gatherv(NULL, 0, MPI_INT, NULL, NULL, NULL, MPI_INT, MPI_PROC_NULL, inter));
    }

    /* MPI_Scatter from A's rank 0 to B; MPI_Scatterv from B's rank 1 to A (rank r: r + 1). */
    int part = -1, parts[2] = {-1, -1};
    if (in_a) {
        int all[16];
        for (int r = 0; r < nr; r++) all[r] = 50 + r;
        OK(MPI_Scatter(all, 1, MPI_INT, NULL, 0, MPI_INT, l == 0 ? MPI_ROOT : MPI_PROC_NULL,
                       inter));
        OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, parts, l + 1, MPI_INT, 1, inter));
        for (int k = 0; k <= l; k++)
            CHECK(parts[k] == 60 + l * 10 + k, "scatterv [%d] = %d", k, parts[k]);
    } else {
        OK(MPI_Scatter(NULL, 0, MPI_INT, &part, 1, MPI_INT, 0, inter));
        CHECK(part == 50 + l, "scatter got %d", part);
        int blocks[4] = {60, 70, 71, -1};
        counts[0] = 1, counts[1] = 2, displs[0] = 0, displs[1] = 1;
        OK(MPI_Scatterv(blocks, counts, displs, MPI_INT, NULL, 0, MPI_INT,
                        l == 1 ? MPI_ROOT : MPI_PROC_NULL, inter));
    }

    /* MPI_Allgather / MPI_Allgatherv (reversed): the other group's g * 100 + rank. */
    int me = g * 100 + l, theirs[16];
    OK(MPI_Allgather(&me, 1, MPI_INT, theirs, 1, MPI_INT, inter));
    for (int r = 0; r < nr; r++)
        CHECK(theirs[r] == (1 - g) * 100 + r, "allgather [%d] = %d", r, theirs[r]);
    for (int r = 0; r < nr; r++) {
        counts[r] = 1;
        displs[r] = nr - 1 - r;
    }
    OK(MPI_Allgatherv(&me, 1, MPI_INT, theirs, counts, displs, MPI_INT, inter));
    for (int r = 0; r < nr; r++)
        CHECK(theirs[nr - 1 - r] == (1 - g) * 100 + r, "allgatherv [%d]", r);

    /* MPI_Alltoall: to rank j of the other group g * 1000 + l * 10 + j. */
    int out[16], in[16];
    for (int j = 0; j < nr; j++) out[j] = g * 1000 + l * 10 + j;
    OK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter));
    for (int j = 0; j < nr; j++)
        CHECK(in[j] == (1 - g) * 1000 + j * 10 + l, "alltoall [%d] = %d", j, in[j]);
    /* MPI_Alltoallv: the same blocks, received in reverse order. */
    int scounts[16], sdispls[16], rcounts[16], rdispls[16];
    for (int j = 0; j < nr; j++) {
        scounts[j] = rcounts[j] = 1;
        sdispls[j] = j;
        rdispls[j] = nr - 1 - j;
    }
    OK(MPI_Alltoallv(out, scounts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT, inter));
    for (int j = 0; j < nr; j++)
        CHECK(in[nr - 1 - j] == (1 - g) * 1000 + j * 10 + l, "alltoallv [%d]", j);

    /* MPI_Alltoallw: the same, byte displacements and a datatype per block. */
    int types[16];
    for (int j = 0; j < nr; j++) {
        sdispls[j] = j * (int)sizeof(int);
        rdispls[j] = (nr - 1 - j) * (int)sizeof(int);
        types[j] = MPI_INT;
        in[j] = -1;
    }
    OK(MPI_Alltoallw(out, scounts, sdispls, types, in, rcounts, rdispls, types, inter));
    for (int j = 0; j < nr; j++)
        CHECK(in[nr - 1 - j] == (1 - g) * 1000 + j * 10 + l, "alltoallw [%d]", j);

    /* Wrong use, refused before any message. */
    EXPECT(MPI_Bcast(word, 1, MPI_INT, 99, inter), MPI_ERR_ROOT);
    EXPECT(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    EXPECT(MPI_Scan(&mine, &total, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);

    OK(MPI_Type_free(&every_other));
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&local));
    return ft_finish();
}

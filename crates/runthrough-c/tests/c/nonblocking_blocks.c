/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The non-blocking gathers, scatters, all-gathers and all-to-alls, which the rank's engine runs
 * itself whatever their datatypes, on 4 ranks. Each result is compared, byte for byte, with
 * what the blocking call gives for the same arguments (and the gaps between and inside blocks
 * left as they were):
 * - MPI_Igatherv to rank 2: ranks send 2(r + 1) MPI_INTs, the root receives r + 1 elements of
 *   a strided vector (two ints with a gap), blocks in reverse rank order with a gap between;
 *   then again with MPI_IN_PLACE at the root;
 * - MPI_Iscatterv from rank 1: contiguous ints at the root, with gaps between blocks, received
 *   as strided vectors elsewhere, MPI_IN_PLACE at the root;
 * - MPI_Iallgatherv of doubles in place, blocks in reverse rank order;
 * - MPI_Ialltoallv of varying counts; MPI_Ialltoallw with a type per rank (pairs of ints from
 *   the even ranks, strided vectors from the odd ones); MPI_Ialltoall in place;
 * - an MPI_Igather whose datatypes differ between ranks (a contiguous type of two ints at the
 *   root, two MPI_INTs elsewhere) pending with a 64 KiB MPI_Iallreduce and an MPI_Ialltoall,
 *   completed in reverse order. */
#include "ft_common.h"

#include <string.h>

#define P 4

static int same(const void *a, const void *b, size_t len) { return memcmp(a, b, len) == 0; }

enum { BIG = 16384 };
static int big[BIG], big_sum[BIG];

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == P, "run on %d ranks", P);
    MPI_Datatype every_other, two_ints;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other)); /* extent: 3 ints */
    OK(MPI_Type_commit(&every_other));
    OK(MPI_Type_contiguous(2, MPI_INT, &two_ints));
    OK(MPI_Type_commit(&two_ints));
    MPI_Request r;

    /* Blocks of r + 1 vectors (extent 3 ints), in reverse rank order, a gap of one extent
     * before each. */
    int counts[P], displs[P], at = 0;
    for (int q = P - 1; q >= 0; q--) {
        counts[q] = q + 1;
        displs[q] = at + 1;
        at += 1 + counts[q];
    }
    enum { EXTENTS = 1 + 4 + 1 + 3 + 1 + 2 + 1 + 1, INTS = 3 * EXTENTS };
    int mine[2 * P], theirs[INTS], blocking[INTS];
    for (int k = 0; k < 2 * P; k++)
        mine[k] = 100 * rank + k;

    /* MPI_Igatherv: ints in, vectors out at the root. */
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int k = 0; k < INTS; k++)
            theirs[k] = blocking[k] = -1;
        if (in_place && rank == 2) {
            /* The root's own block where it belongs. */
            for (int e = 0; e < counts[2]; e++) {
                theirs[3 * (displs[2] + e)] = blocking[3 * (displs[2] + e)] = mine[2 * e];
                theirs[3 * (displs[2] + e) + 2] = blocking[3 * (displs[2] + e) + 2] =
                    mine[2 * e + 1];
            }
        }
        const void *send = in_place && rank == 2 ? MPI_IN_PLACE : (const void *)mine;
        OK(MPI_Igatherv(send, 2 * (rank + 1), MPI_INT, theirs, counts, displs, every_other, 2,
                        MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Gatherv(send, 2 * (rank + 1), MPI_INT, blocking, counts, displs, every_other, 2,
                       MPI_COMM_WORLD));
        CHECK(same(theirs, blocking, sizeof theirs), "Igatherv in place %d differs", in_place);
        if (rank == 2) {
            CHECK(theirs[3 * displs[0]] == 0 && theirs[3 * displs[0] + 1] == -1 &&
                      theirs[3 * displs[0] + 2] == 1,
                  "Igatherv block 0: %d %d %d", theirs[3 * displs[0]],
                  theirs[3 * displs[0] + 1], theirs[3 * displs[0] + 2]);
            CHECK(theirs[3 * displs[3] + 3 * 3 + 2] == 307, "Igatherv block 3's last int %d",
                  theirs[3 * displs[3] + 3 * 3 + 2]);
        } else
            for (int k = 0; k < INTS; k++)
                CHECK(theirs[k] == -1, "Igatherv wrote a non-root's buffer at %d", k);
    }

    /* MPI_Iscatterv: ints with gaps at the root (in place there), vectors elsewhere. */
    {
        int table[INTS], sdispls[P], scounts[P];
        for (int k = 0; k < INTS; k++)
            table[k] = 1000 + k;
        for (int q = 0; q < P; q++) {
            scounts[q] = 2 * counts[q];
            sdispls[q] = 3 * displs[q];
        }
        int got[3 * P], want[3 * P];
        for (int k = 0; k < 3 * P; k++)
            got[k] = want[k] = -1;
        void *recv = rank == 1 ? MPI_IN_PLACE : (void *)got;
        void *recv_blocking = rank == 1 ? MPI_IN_PLACE : (void *)want;
        OK(MPI_Iscatterv(table, scounts, sdispls, MPI_INT, recv, rank + 1, every_other, 1,
                         MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Scatterv(table, scounts, sdispls, MPI_INT, recv_blocking, rank + 1, every_other, 1,
                        MPI_COMM_WORLD));
        CHECK(same(got, want, sizeof got), "Iscatterv differs");
        if (rank != 1)
            CHECK(got[0] == 1000 + 3 * displs[rank] && got[1] == -1 &&
                      got[2] == 1001 + 3 * displs[rank],
                  "Iscatterv: %d %d %d", got[0], got[1], got[2]);
    }

    /* MPI_Iallgatherv of doubles in place, reverse order. */
    {
        int dcounts[P], ddispls[P], end = 0;
        for (int q = P - 1; q >= 0; q--) {
            dcounts[q] = q;
            ddispls[q] = end;
            end += q + 1;
        }
        double all[16], all_blocking[16];
        for (int k = 0; k < 16; k++)
            all[k] = all_blocking[k] = -0.5;
        for (int k = 0; k < dcounts[rank]; k++)
            all[ddispls[rank] + k] = all_blocking[ddispls[rank] + k] = rank + 0.125 * k;
        OK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, dcounts, ddispls, MPI_DOUBLE,
                           MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all_blocking, dcounts, ddispls,
                          MPI_DOUBLE, MPI_COMM_WORLD));
        CHECK(same(all, all_blocking, sizeof all), "Iallgatherv differs");
        CHECK(all[ddispls[3] + 2] == 3.25, "Iallgatherv: %g", all[ddispls[3] + 2]);
    }

    /* MPI_Ialltoallv: rank r sends j + 1 ints to rank j. */
    {
        int scounts[P], sdispls[P], rcounts[P], rdispls[P], out[16], in[16], in_blocking[16];
        for (int q = 0; q < P; q++) {
            scounts[q] = q + 1;
            sdispls[q] = q * (q + 1) / 2;
            rcounts[q] = rank + 1;
            rdispls[q] = (P - 1 - q) * (rank + 1); /* reverse order */
        }
        for (int k = 0; k < 16; k++) {
            out[k] = 10 * rank + k;
            in[k] = in_blocking[k] = -1;
        }
        OK(MPI_Ialltoallv(out, scounts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT,
                          MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Alltoallv(out, scounts, sdispls, MPI_INT, in_blocking, rcounts, rdispls, MPI_INT,
                         MPI_COMM_WORLD));
        CHECK(same(in, in_blocking, sizeof in), "Ialltoallv differs");
        CHECK(in[rdispls[0]] == sdispls[rank], "Ialltoallv from 0: %d", in[rdispls[0]]);
    }

    /* MPI_Ialltoallw: two ints to each rank; received as a pair from even ranks, as a strided
     * vector from odd ones (byte displacements, 3 ints apart). */
    {
        int scounts[P], sdispls[P], stypes[P], rcounts[P], rdispls[P], rtypes[P];
        int out[2 * P], in[3 * P], in_blocking[3 * P];
        for (int q = 0; q < P; q++) {
            scounts[q] = 2;
            sdispls[q] = 2 * q * (int)sizeof(int);
            stypes[q] = MPI_INT;
            rcounts[q] = 1;
            rdispls[q] = 3 * q * (int)sizeof(int);
            rtypes[q] = q % 2 ? every_other : two_ints;
            out[2 * q] = 1000 * rank + 10 * q;
            out[2 * q + 1] = 1000 * rank + 10 * q + 1;
        }
        for (int k = 0; k < 3 * P; k++)
            in[k] = in_blocking[k] = -1;
        OK(MPI_Ialltoallw(out, scounts, sdispls, stypes, in, rcounts, rdispls, rtypes,
                          MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Alltoallw(out, scounts, sdispls, stypes, in_blocking, rcounts, rdispls, rtypes,
                         MPI_COMM_WORLD));
        CHECK(same(in, in_blocking, sizeof in), "Ialltoallw differs");
        CHECK(in[3] == 1000 + 10 * rank && in[4] == -1 && in[5] == 1000 + 10 * rank + 1,
              "Ialltoallw from 1: %d %d %d", in[3], in[4], in[5]);
        CHECK(in[0] == 10 * rank && in[1] == 10 * rank + 1 && in[2] == -1,
              "Ialltoallw from 0: %d %d %d", in[0], in[1], in[2]);
    }

    /* MPI_Ialltoall in place, a pair of ints per rank. */
    {
        int both[2 * P], both_blocking[2 * P];
        for (int k = 0; k < 2 * P; k++)
            both[k] = both_blocking[k] = 100 * rank + k;
        OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, both, 1, two_ints, MPI_COMM_WORLD,
                         &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, both_blocking, 1, two_ints,
                        MPI_COMM_WORLD));
        CHECK(same(both, both_blocking, sizeof both), "Ialltoall in place differs");
        CHECK(both[2 * 3 + 1] == 300 + 2 * rank + 1, "Ialltoall from 3: %d", both[7]);
    }

    /* Two gathers pending at once into interleaved blocks of one array (even slots, odd
     * slots), and a block without data at a displacement far past the array (not looked at):
     * each call writes its own blocks only. */
    {
        int both[2 * P], even_d[P], ones[P], far[P];
        for (int k = 0; k < 2 * P; k++)
            both[k] = -1;
        for (int q = 0; q < P; q++) {
            even_d[q] = 2 * q;
            ones[q] = q == 1 ? 0 : 1;
            far[q] = q == 1 ? 1 << 28 : 2 * q + 1;
        }
        MPI_Request g[2];
        int a = 10 + rank, b = 20 + rank;
        OK(MPI_Igatherv(&a, rank == 1 ? 0 : 1, MPI_INT, both, ones, even_d, MPI_INT, 0,
                        MPI_COMM_WORLD, &g[0]));
        OK(MPI_Igatherv(&b, rank == 1 ? 0 : 1, MPI_INT, both, ones, far, MPI_INT, 0,
                        MPI_COMM_WORLD, &g[1]));
        OK(MPI_Waitall(2, g, MPI_STATUSES_IGNORE));
        if (rank == 0)
            for (int q = 0; q < P; q++) {
                CHECK(both[2 * q] == (q == 1 ? -1 : 10 + q), "even slot %d: %d", q, both[2 * q]);
                CHECK(both[2 * q + 1] == (q == 1 ? -1 : 20 + q), "odd slot %d: %d", q,
                      both[2 * q + 1]);
            }
    }

    /* Negative displacements (MPI allows them: a block before the buffer pointer), blocking
     * and not, of ints and of a strided vector: the buffer pointer in the middle of an array,
     * rank r's block at displacement r - 2. */
    {
        int nd[P], ones[P], mid[2 * P + 2], mid_blocking[2 * P + 2], vec_all[3 * P + 6];
        for (int q = 0; q < P; q++) {
            nd[q] = q - 2;
            ones[q] = 1;
        }
        for (int k = 0; k < 2 * P + 2; k++)
            mid[k] = mid_blocking[k] = -1;
        int v = 70 + rank;
        MPI_Request g;
        OK(MPI_Iallgatherv(&v, 1, MPI_INT, mid + 4, ones, nd, MPI_INT, MPI_COMM_WORLD, &g));
        OK(MPI_Wait(&g, MPI_STATUS_IGNORE));
        OK(MPI_Allgatherv(&v, 1, MPI_INT, mid_blocking + 4, ones, nd, MPI_INT, MPI_COMM_WORLD));
        CHECK(same(mid, mid_blocking, sizeof mid), "negative displacements differ");
        for (int q = 0; q < P; q++)
            CHECK(mid[2 + q] == 70 + q, "negative displacement %d: %d", nd[q], mid[2 + q]);
        CHECK(mid[1] == -1 && mid[2 + P] == -1, "around the blocks: %d %d", mid[1], mid[2 + P]);
        /* Strided vectors (extent 3 ints) gathered at rank 0, blocks at -2 .. 1 extents. */
        for (int k = 0; k < 3 * P + 6; k++)
            vec_all[k] = -1;
        int pair[2] = {rank, -rank};
        OK(MPI_Igatherv(pair, 2, MPI_INT, vec_all + 6, ones, nd, every_other, 0, MPI_COMM_WORLD,
                        &g));
        OK(MPI_Wait(&g, MPI_STATUS_IGNORE));
        if (rank == 0)
            for (int q = 0; q < P; q++) {
                int *at = vec_all + 6 + 3 * nd[q];
                CHECK(at[0] == q && at[1] == -1 && at[2] == -q, "strided block of %d: %d %d %d",
                      q, at[0], at[1], at[2]);
            }
    }

    /* Types that differ between ranks, pending together with a 64 KiB all-reduce and an
     * all-to-all, completed in reverse order. */
    for (int round = 0; round < 3; round++) {
        int two[2] = {rank + round, -rank}, gathered[2 * P], a2a_out[P], a2a_in[P];
        for (int k = 0; k < BIG; k++) {
            big[k] = rank + k;
            big_sum[k] = -1;
        }
        for (int k = 0; k < 2 * P; k++)
            gathered[k] = -1;
        for (int q = 0; q < P; q++) {
            a2a_out[q] = 10 * rank + q;
            a2a_in[q] = -1;
        }
        MPI_Request q[3];
        if (rank == 3)
            OK(MPI_Igather(two, 2, MPI_INT, gathered, 1, two_ints, 3, MPI_COMM_WORLD, &q[0]));
        else
            OK(MPI_Igather(two, 2, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 3, MPI_COMM_WORLD,
                           &q[0]));
        OK(MPI_Iallreduce(big, big_sum, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD, &q[2]));
        for (int k = 2; k >= 0; k--)
            OK(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
        if (rank == 3)
            for (int p = 0; p < P; p++)
                CHECK(gathered[2 * p] == p + round && gathered[2 * p + 1] == -p,
                      "round %d: Igather from %d: %d %d", round, p, gathered[2 * p],
                      gathered[2 * p + 1]);
        for (int k = 0; k < BIG; k++)
            CHECK(big_sum[k] == 6 + 4 * k, "round %d: Iallreduce[%d] = %d", round, k,
                  big_sum[k]);
        for (int p = 0; p < P; p++)
            CHECK(a2a_in[p] == 10 * p + rank, "round %d: Ialltoall from %d: %d", round, p,
                  a2a_in[p]);
    }

    OK(MPI_Type_free(&every_other));
    OK(MPI_Type_free(&two_ints));
    return ft_finish();
}

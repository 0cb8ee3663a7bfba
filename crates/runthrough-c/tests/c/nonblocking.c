/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The non-blocking collectives, failure-free on 4 ranks: all fifteen pending at once and
 * completed by one MPI_Waitall, each result checked; two pending while point-to-point traffic
 * that one rank needs before it starts them goes on (a start never waits for an earlier
 * collective); a blocking collective after pending ones; MPI_Test until done; and bad input:
 * the communicator and request arguments refused by the starting call, the others (datatype,
 * op, root, count) by the call that completes the request, through the error handler there;
 * MPI_Request_free of a pending one refused. */
#include "ft_common.h"

#include <string.h>

#define P 4

static int handled = 0, handled_class = -1;

static void count_errors(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    handled++;
    MPI_Error_class(*code, &handled_class);
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == P, "run on %d ranks", P);

    /* Everything at once. */
    MPI_Request req[15];
    int bc[5], one = rank + 1, all_sum = -1, max_at_1 = -1, scan = -1, exscan = -7;
    for (int i = 0; i < 5; i++)
        bc[i] = rank == 2 ? 100 + i : -1;
    int mine[2] = {10 * rank, 10 * rank + 1}, gathered[2 * P], scattered[2] = {-1, -1};
    int root_data[2 * P];
    for (int i = 0; i < 2 * P; i++) {
        gathered[i] = -1;
        root_data[i] = 1000 + i;
    }
    /* v-forms: rank r contributes r + 1 ints. */
    int vcounts[P], vdispls[P], vsend[P], vgather[10], vscatter[P], vall[10];
    for (int r = 0, at = 0; r < P; r++) {
        vcounts[r] = r + 1;
        vdispls[r] = at;
        at += r + 1;
    }
    for (int i = 0; i <= rank; i++)
        vsend[i] = 100 * rank + i;
    for (int i = 0; i < 10; i++)
        vgather[i] = vall[i] = -1;
    int vroot[10];
    for (int i = 0; i < 10; i++)
        vroot[i] = 500 + i;
    for (int i = 0; i < P; i++)
        vscatter[i] = -1;
    int allg[2 * P], a2a_send[P], a2a_recv[P];
    for (int r = 0; r < P; r++) {
        a2a_send[r] = 10 * rank + r;
        a2a_recv[r] = -1;
    }
    /* Alltoallv: one int to each rank (counts 1, displacements r). */
    int ones[P], displs[P], v2v_send[P], v2v_recv[P];
    for (int r = 0; r < P; r++) {
        ones[r] = 1;
        displs[r] = r;
        v2v_send[r] = 100 * rank + r;
        v2v_recv[r] = -1;
    }
    /* Reduce-scatters: element i of every rank's vector is rank + i. */
    int rs_send[P], rs_block = -1, rs_counts[P], rs_recv = -1;
    for (int i = 0; i < P; i++) {
        rs_send[i] = rank + i;
        rs_counts[i] = 1;
    }
    OK(MPI_Ibcast(bc, 5, MPI_INT, 2, MPI_COMM_WORLD, &req[0]));
    OK(MPI_Iallreduce(&one, &all_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]));
    OK(MPI_Ireduce(&one, &max_at_1, 1, MPI_INT, MPI_MAX, 1, MPI_COMM_WORLD, &req[2]));
    OK(MPI_Iscan(&one, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[3]));
    OK(MPI_Iexscan(&one, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[4]));
    OK(MPI_Igather(mine, 2, MPI_INT, gathered, 2, MPI_INT, 3, MPI_COMM_WORLD, &req[5]));
    OK(MPI_Iscatter(root_data, 2, MPI_INT, scattered, 2, MPI_INT, 0, MPI_COMM_WORLD, &req[6]));
    OK(MPI_Igatherv(vsend, rank + 1, MPI_INT, vgather, vcounts, vdispls, MPI_INT, 0,
                    MPI_COMM_WORLD, &req[7]));
    OK(MPI_Iscatterv(vroot, vcounts, vdispls, MPI_INT, vscatter, rank + 1, MPI_INT, 1,
                     MPI_COMM_WORLD, &req[8]));
    OK(MPI_Iallgather(mine, 2, MPI_INT, allg, 2, MPI_INT, MPI_COMM_WORLD, &req[9]));
    OK(MPI_Ialltoall(a2a_send, 1, MPI_INT, a2a_recv, 1, MPI_INT, MPI_COMM_WORLD, &req[10]));
    OK(MPI_Iallgatherv(vsend, rank + 1, MPI_INT, vall, vcounts, vdispls, MPI_INT,
                       MPI_COMM_WORLD, &req[11]));
    OK(MPI_Ialltoallv(v2v_send, ones, displs, MPI_INT, v2v_recv, ones, displs, MPI_INT,
                      MPI_COMM_WORLD, &req[12]));
    OK(MPI_Ireduce_scatter_block(rs_send, &rs_block, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                 &req[13]));
    OK(MPI_Ireduce_scatter(rs_send, &rs_recv, rs_counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                           &req[14]));
    OK(MPI_Waitall(15, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 15; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not released", i);

    for (int i = 0; i < 5; i++)
        CHECK(bc[i] == 100 + i, "Ibcast[%d] = %d", i, bc[i]);
    CHECK(all_sum == P * (P + 1) / 2, "Iallreduce %d", all_sum);
    if (rank == 1)
        CHECK(max_at_1 == P, "Ireduce MAX %d", max_at_1);
    else
        CHECK(max_at_1 == -1, "Ireduce wrote a non-root's buffer: %d", max_at_1);
    CHECK(scan == (rank + 1) * (rank + 2) / 2, "Iscan %d", scan);
    if (rank == 0)
        CHECK(exscan == -7, "Iexscan wrote rank 0's buffer: %d", exscan);
    else
        CHECK(exscan == rank * (rank + 1) / 2, "Iexscan %d", exscan);
    for (int r = 0; r < P; r++) {
        if (rank == 3) {
            CHECK(gathered[2 * r] == 10 * r && gathered[2 * r + 1] == 10 * r + 1, "Igather %d", r);
        }
        CHECK(allg[2 * r] == 10 * r && allg[2 * r + 1] == 10 * r + 1, "Iallgather %d", r);
        CHECK(a2a_recv[r] == 10 * r + rank, "Ialltoall from %d: %d", r, a2a_recv[r]);
        CHECK(v2v_recv[r] == 100 * r + rank, "Ialltoallv from %d: %d", r, v2v_recv[r]);
        for (int i = 0; i <= r; i++) {
            CHECK(vall[vdispls[r] + i] == 100 * r + i, "Iallgatherv %d.%d", r, i);
            if (rank == 0)
                CHECK(vgather[vdispls[r] + i] == 100 * r + i, "Igatherv %d.%d", r, i);
        }
    }
    if (rank != 3)
        CHECK(gathered[0] == -1, "Igather wrote a non-root's buffer");
    CHECK(scattered[0] == 1000 + 2 * rank && scattered[1] == 1001 + 2 * rank, "Iscatter %d %d",
          scattered[0], scattered[1]);
    for (int i = 0; i <= rank; i++)
        CHECK(vscatter[i] == 500 + vdispls[rank] + i, "Iscatterv %d: %d", i, vscatter[i]);
    /* Element `rank` summed over the ranks: sum_r (r + rank). */
    int want_rs = P * (P - 1) / 2 + P * rank;
    CHECK(rs_block == want_rs, "Ireduce_scatter_block %d, want %d", rs_block, want_rs);
    CHECK(rs_recv == want_rs, "Ireduce_scatter %d, want %d", rs_recv, want_rs);

    /* Pending collectives never hold up point-to-point: rank 1 needs rank 0's message before
     * it starts them, and rank 0 sends it only after starting both. */
    int a = rank, b = 2 * rank, sa = -1, sb = -1, token = -1;
    MPI_Request two[2];
    if (rank == 1)
        OK(MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[1]));
    if (rank == 0) {
        token = 42;
        OK(MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
    }
    /* A blocking collective waits for the pending ones (collectives are ordered). */
    int c = 1, sc = -1;
    OK(MPI_Allreduce(&c, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sc == P, "Allreduce after pending ones: %d", sc);
    OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK(sa == P * (P - 1) / 2 && sb == P * (P - 1), "ordered pair: %d %d", sa, sb);
    if (rank == 1)
        CHECK(token == 42, "token %d", token);

    /* Completed out of order: the later one waited for first (it runs the earlier one too),
     * each with its own result. */
    int x = rank, y = 10 * rank, sx = -1, sy = -1;
    MPI_Request first, second;
    OK(MPI_Iallreduce(&x, &sx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &first));
    OK(MPI_Iallreduce(&y, &sy, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &second));
    OK(MPI_Wait(&second, MPI_STATUS_IGNORE));
    CHECK(sy == 10 * P * (P - 1) / 2, "second, waited for first: %d", sy);
    int done = 0;
    OK(MPI_Test(&first, &done, MPI_STATUS_IGNORE));
    CHECK(done && sx == P - 1, "the first is done once the second is: %d, %d", done, sx);

    /* MPI_Test until done; an Ibarrier on a communicator of our own. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Request r;
    OK(MPI_Ibarrier(dup, &r));
    int flag = 0;
    while (!flag)
        OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL, "tested request not released");
    /* Freed while pending: the collective still runs on it. */
    int v = rank, s = -1;
    OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, dup, &r));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(s == P * (P - 1) / 2, "Iallreduce on a freed communicator: %d", s);

    /* Bad input. */
    EXPECT(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Ibcast(&v, 1, MPI_INT, 0, 12345, &r), MPI_ERR_COMM);
    EXPECT(MPI_Ibarrier(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    OK(MPI_Iallreduce(&v, &s, 1, 4242, MPI_SUM, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    CHECK(r == MPI_REQUEST_NULL, "failed request not released");
    OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, 4242, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OP);
    OK(MPI_Ibcast(&v, 1, MPI_INT, -5, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_ROOT);
    OK(MPI_Ibcast(&v, -1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    /* The error handler runs in the call that completes the request, not in the start. */
    MPI_Errhandler counting;
    OK(MPI_Comm_create_errhandler(count_errors, &counting));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting));
    OK(MPI_Iallreduce(&v, &s, 1, 4242, MPI_SUM, MPI_COMM_WORLD, &r));
    CHECK(handled == 0, "the handler ran in the start");
    EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    CHECK(handled == 1 && handled_class == MPI_ERR_TYPE, "handler: %d calls, class %d", handled,
          handled_class);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&counting));
    /* A call with invalid arguments fails at its start and takes no place among the
     * communicator's collectives: made at rank 0 alone, the next call still matches. */
    if (rank == 0) {
        OK(MPI_Ibcast(&v, -1, MPI_INT, 0, MPI_COMM_WORLD, &r));
        EXPECT(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    }
    s = -1;
    OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(s == P * (P - 1) / 2, "Iallreduce after a refused Ibcast at rank 0: %d", s);
    s = rank == 0 ? 77 : -1;
    OK(MPI_Ibcast(&s, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
    EXPECT(MPI_Request_free(&r), MPI_ERR_REQUEST);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(s == 77, "Ibcast after a refused free: %d", s);
    return ft_finish();
}

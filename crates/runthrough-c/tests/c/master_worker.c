/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A master-worker code as applications write it: rank 0 hands out NTASKS tasks one at a time,
 * keeps one receive posted per worker, and finds the next finished worker alternately with
 * MPI_Waitany and with an MPI_Testsome polling loop; the workers compute and send back
 * (task, value) as one element of a contiguous derived type. At the end the master collects
 * every worker's list of tasks with MPI_Gather + MPI_Gatherv and checks that each task was
 * done once, by the worker it was given to, with the right value; and the ranks find the
 * largest and smallest values and their owners with MPI_MAXLOC / MPI_MINLOC on MPI_DOUBLE_INT
 * (MPI_Allreduce, MPI_Reduce, MPI_IN_PLACE), and check the other pair types (MPI_2INT with
 * ties, MPI_FLOAT_INT, MPI_LONG_INT, MPI_SHORT_INT), several pairs per call, MPI_Scan, and the
 * error classes of a wrong operation or type. */
#include "ft_common.h"

#include <string.h>

#define NTASKS 57
#define TAG_TASK 1
#define TAG_STOP 2
#define TAG_RESULT 3

/* The work: deterministic, a little uneven. */
static double work(int task) {
    double v = 0;
    int n = 200 + (task * 37) % 300;
    for (int k = 1; k <= n; k++)
        v += 1.0 / ((double)k * k + task);
    return v * (1 + task % 7);
}

struct double_int {
    double value;
    int rank;
};

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size >= 3, "needs a master and two workers");

    MPI_Datatype result_type;
    OK(MPI_Type_contiguous(2, MPI_DOUBLE, &result_type));
    OK(MPI_Type_commit(&result_type));

    int mine[NTASKS], nmine = 0;
    double my_values[NTASKS];
    int assigned[NTASKS];
    double master_values[NTASKS];

    if (rank == 0) {
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * size);
        double(*results)[2] = malloc(sizeof(double[2]) * size);
        int *indices = malloc(sizeof(int) * size);
        MPI_Status *statuses = malloc(sizeof(MPI_Status) * size);
        int next = 0, active = 0, done = 0, polls = 0, by_waitany = 0, by_testsome = 0;
        for (int t = 0; t < NTASKS; t++)
            assigned[t] = -1;
        reqs[0] = MPI_REQUEST_NULL;
        for (int w = 1; w < size; w++) {
            int task = next < NTASKS ? next++ : -1;
            if (task < 0) {
                OK(MPI_Send(&task, 1, MPI_INT, w, TAG_STOP, MPI_COMM_WORLD));
                reqs[w] = MPI_REQUEST_NULL;
                continue;
            }
            assigned[task] = w;
            OK(MPI_Send(&task, 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
            OK(MPI_Irecv(results[w], 1, result_type, w, TAG_RESULT, MPI_COMM_WORLD, &reqs[w]));
            active++;
        }
        while (active > 0) {
            int finished[64], nfinished = 0;
            if (done % 2 == 0) {
                int index = -1;
                MPI_Status st;
                OK(MPI_Waitany(size, reqs, &index, &st));
                CHECK(index >= 1 && index < size, "waitany index %d", index);
                CHECK(st.MPI_SOURCE == index && st.MPI_TAG == TAG_RESULT, "status %d/%d",
                      st.MPI_SOURCE, st.MPI_TAG);
                int n = -1;
                OK(MPI_Get_count(&st, result_type, &n));
                CHECK(n == 1, "count %d", n);
                finished[nfinished++] = index;
                by_waitany++;
            } else {
                int outcount = 0;
                while (outcount == 0) {
                    OK(MPI_Testsome(size, reqs, &outcount, indices, statuses));
                    CHECK(outcount != MPI_UNDEFINED, "requests are active");
                    polls++;
                }
                for (int k = 0; k < outcount; k++) {
                    CHECK(statuses[k].MPI_SOURCE == indices[k], "testsome status");
                    CHECK(reqs[indices[k]] == MPI_REQUEST_NULL, "a done request is freed");
                    finished[nfinished++] = indices[k];
                }
                by_testsome += outcount;
            }
            for (int k = 0; k < nfinished; k++) {
                int w = finished[k];
                int task = (int)results[w][0];
                CHECK(task >= 0 && task < NTASKS && assigned[task] == w, "task %d from %d", task,
                      w);
                master_values[task] = results[w][1];
                done++;
                if (next < NTASKS) {
                    task = next++;
                    assigned[task] = w;
                    OK(MPI_Send(&task, 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD));
                    OK(MPI_Irecv(results[w], 1, result_type, w, TAG_RESULT, MPI_COMM_WORLD,
                                 &reqs[w]));
                } else {
                    OK(MPI_Send(&task, 1, MPI_INT, w, TAG_STOP, MPI_COMM_WORLD));
                    active--;
                }
            }
        }
        CHECK(done == NTASKS, "%d tasks done", done);
        CHECK(by_waitany > 0 && by_testsome > 0, "waitany %d, testsome %d", by_waitany,
              by_testsome);
        /* Every request is inactive now. */
        int outcount = 0, index = 0;
        OK(MPI_Testsome(size, reqs, &outcount, indices, statuses));
        CHECK(outcount == MPI_UNDEFINED, "testsome of inactive requests: %d", outcount);
        OK(MPI_Waitany(size, reqs, &index, MPI_STATUS_IGNORE));
        CHECK(index == MPI_UNDEFINED, "waitany of inactive requests: %d", index);
        printf("master: %d tasks, %d by MPI_Waitany, %d by MPI_Testsome (%d polls)\n", done,
               by_waitany, by_testsome, polls);
        free(reqs);
        free(results);
        free(indices);
        free(statuses);
    } else {
        for (;;) {
            int task;
            MPI_Status st;
            OK(MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_TAG == TAG_STOP)
                break;
            CHECK(st.MPI_TAG == TAG_TASK, "tag %d", st.MPI_TAG);
            double result[2] = {task, work(task)};
            mine[nmine] = task;
            my_values[nmine++] = result[1];
            OK(MPI_Send(result, 1, result_type, 0, TAG_RESULT, MPI_COMM_WORLD));
        }
    }

    /* Who did what: the counts, then the task lists and values by MPI_Gatherv. */
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int all_tasks[NTASKS + 1];
    double all_values[NTASKS + 1];
    OK(MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int total = 0;
        for (int r = 0; r < size; r++) {
            displs[r] = total;
            total += counts[r];
        }
        CHECK(counts[0] == 0 && total == NTASKS, "counts: master %d, total %d", counts[0],
              total);
    }
    OK(MPI_Gatherv(mine, nmine, MPI_INT, all_tasks, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Gatherv(my_values, nmine, MPI_DOUBLE, all_values, counts, displs, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD));
    if (rank == 0) {
        int seen[NTASKS] = {0};
        for (int r = 1; r < size; r++)
            for (int k = 0; k < counts[r]; k++) {
                int task = all_tasks[displs[r] + k];
                CHECK(task >= 0 && task < NTASKS && !seen[task], "task %d twice", task);
                seen[task] = 1;
                CHECK(assigned[task] == r, "task %d done by %d, given to %d", task, r,
                      assigned[task]);
                CHECK(all_values[displs[r] + k] == work(task) &&
                          master_values[task] == work(task),
                      "task %d value", task);
            }
    }

    /* The largest and smallest task values and their owners: MAXLOC / MINLOC. */
    struct double_int local_max = {-1e300, rank}, local_min = {1e300, rank}, gmax, gmin;
    for (int k = 0; k < nmine; k++) {
        if (my_values[k] > local_max.value)
            local_max.value = my_values[k];
        if (my_values[k] < local_min.value)
            local_min.value = my_values[k];
    }
    OK(MPI_Allreduce(&local_max, &gmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    gmin = local_min;
    OK(MPI_Allreduce(MPI_IN_PLACE, &gmin, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    struct double_int at_root = {0, -7};
    OK(MPI_Reduce(&local_max, &at_root, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        double best = -1e300, least = 1e300;
        int best_owner = -1, least_owner = -1;
        for (int t = 0; t < NTASKS; t++) {
            double v = work(t);
            if (v > best || (v == best && assigned[t] < best_owner)) {
                best = v;
                best_owner = assigned[t];
            }
            if (v < least || (v == least && assigned[t] < least_owner)) {
                least = v;
                least_owner = assigned[t];
            }
        }
        CHECK(gmax.value == best && gmax.rank == best_owner, "maxloc %g@%d, want %g@%d",
              gmax.value, gmax.rank, best, best_owner);
        CHECK(gmin.value == least && gmin.rank == least_owner, "minloc %g@%d, want %g@%d",
              gmin.value, gmin.rank, least, least_owner);
        CHECK(at_root.value == best && at_root.rank == best_owner, "reduce maxloc");
        printf("largest value %.6f by rank %d, smallest %.6f by rank %d\n", best, best_owner,
               least, least_owner);
    }
    /* Every rank has the same answer. */
    double check[2] = {gmax.value, gmin.value}, check_max[2];
    OK(MPI_Allreduce(check, check_max, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(check_max[0] == gmax.value && check_max[1] == gmin.value, "all ranks agree");

    /* MPI_2INT, several pairs, ties broken by the smaller index. */
    int pairs[3][2] = {{rank % 2, rank}, {size - rank, rank}, {7, rank}}, out[3][2];
    OK(MPI_Allreduce(pairs, out, 3, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out[0][0] == 1 && out[0][1] == 1, "2int maxloc tie: %d@%d", out[0][0], out[0][1]);
    CHECK(out[1][0] == size && out[1][1] == 0, "2int maxloc: %d@%d", out[1][0], out[1][1]);
    CHECK(out[2][0] == 7 && out[2][1] == 0, "2int all equal: %d@%d", out[2][0], out[2][1]);
    OK(MPI_Allreduce(pairs, out, 3, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out[0][0] == 0 && out[0][1] == 0, "2int minloc tie");
    CHECK(out[1][0] == 1 && out[1][1] == size - 1, "2int minloc");
    /* The other pair types, with the C layout of their structs. */
    struct {
        float value;
        int index;
    } f = {(float)(rank * 1.5), rank}, fo;
    OK(MPI_Allreduce(&f, &fo, 1, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(fo.value == (float)((size - 1) * 1.5) && fo.index == size - 1, "float_int");
    struct {
        long value;
        int index;
    } l = {-(long)rank * 100000000L, rank}, lo;
    OK(MPI_Allreduce(&l, &lo, 1, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(lo.value == -(long)(size - 1) * 100000000L && lo.index == size - 1, "long_int");
    struct {
        short value;
        int index;
    } sh[2] = {{(short)(rank == 2 ? -5 : 3), rank}, {(short)rank, 10 + rank}}, sho[2];
    OK(MPI_Allreduce(sh, sho, 2, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(sho[0].value == -5 && sho[0].index == 2, "short_int %d@%d", sho[0].value,
          sho[0].index);
    CHECK(sho[1].value == 0 && sho[1].index == 10, "short_int second pair");
    /* A running maximum with its owner. */
    struct double_int running = {(double)((rank * 5) % 3), rank}, upto;
    OK(MPI_Scan(&running, &upto, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    {
        double want = -1;
        int owner = -1;
        for (int r = 0; r <= rank; r++)
            if ((r * 5) % 3 > want) {
                want = (r * 5) % 3;
                owner = r;
            }
        CHECK(upto.value == want && upto.rank == owner, "scan maxloc %g@%d", upto.value,
              upto.rank);
    }
    /* Wrong combinations: a pair type with another operation, MAXLOC on a basic type, a
     * derived type that mixes basic types (pairs of double and int) in a reduction. */
    EXPECT(MPI_Allreduce(&local_max, &gmax, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_OP);
    EXPECT(MPI_Allreduce(check, check_max, 2, MPI_DOUBLE, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_OP);
    MPI_Datatype two_pairs;
    struct double_int pairs_in[2] = {{1, 1}, {2, 2}}, pairs_out[2];
    OK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two_pairs));
    OK(MPI_Type_commit(&two_pairs));
    EXPECT(MPI_Allreduce(pairs_in, pairs_out, 1, two_pairs, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    EXPECT(MPI_Allreduce(pairs_in, pairs_out, 1, two_pairs, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_TYPE);
    OK(MPI_Type_free(&two_pairs));
    /* A derived type of one basic type reduces element by element: (task count, value sum)
     * as a contiguous pair of doubles. */
    double mine_sum[2] = {nmine, 0}, all_sum[2];
    for (int k = 0; k < nmine; k++)
        mine_sum[1] += my_values[k];
    OK(MPI_Reduce(mine_sum, all_sum, 1, result_type, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        double want = 0;
        for (int t = 0; t < NTASKS; t++)
            want += work(t);
        CHECK(all_sum[0] == NTASKS, "%g tasks summed", all_sum[0]);
        CHECK(all_sum[1] > want * (1 - 1e-12) && all_sum[1] < want * (1 + 1e-12),
              "value sum %.17g, want %.17g", all_sum[1], want);
    }
    EXPECT(MPI_Allreduce(&local_max, &gmax, -1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
    EXPECT(MPI_Allreduce(&local_max, NULL, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    /* Pair types in point-to-point: a ring shift of two pairs. */
    struct double_int ring_out[2] = {{rank + 0.5, rank}, {-rank, 2 * rank}}, ring_in[2];
    memset(ring_in, 0, sizeof ring_in);
    OK(MPI_Sendrecv(ring_out, 2, MPI_DOUBLE_INT, (rank + 1) % size, 5, ring_in, 2, MPI_DOUBLE_INT,
                    (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    {
        int left = (rank + size - 1) % size;
        CHECK(ring_in[0].value == left + 0.5 && ring_in[0].rank == left &&
                  ring_in[1].value == -left && ring_in[1].rank == 2 * left,
              "pairs around the ring");
    }

    OK(MPI_Type_free(&result_type));
    free(counts);
    free(displs);
    return ft_finish();
}

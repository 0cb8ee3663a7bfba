/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* MPI's progress rule across processes: rank 0 posts 40 MPI_Isends of 64 KiB to rank 1 with
 * tags 0..39 (2.5 MiB, more than its share of rank 1's unexpected cap when the job runs with
 * RT_UNEXPECTED_CAP=2M, but within that share plus the cap, which loans may reach), and rank 1 receives them last tag first, with MPI_Recv (the first 20)
 * and MPI_Irecv + MPI_Wait (the rest). The last message is queued at rank 0 behind messages
 * that fill its window at rank 1: the receiver must lend the sender credit, or both wait for
 * ever. Each payload arrives once, with its tag. Then the same with the receives posted in
 * reverse order first (MPI_Irecv) and completed with MPI_Waitall, with MPI_Probe (then
 * MPI_Iprobe in a loop) before each receive, and with MPI_Mprobe / MPI_Improbe and MPI_Mrecv.
 * Run on 2 ranks. */
#include "ft_common.h"

#define COUNT 40
#define WORDS (64 * 1024 / 4)

static int send_buffers[COUNT][WORDS];
static int receive_buffer[WORDS];
static int receive_buffers[COUNT][WORDS];

static void check_payload(const int *words, int tag) {
    CHECK(words[0] == tag && words[WORDS / 2] == tag * 7 && words[WORDS - 1] == -tag,
          "payload of tag %d: %d %d %d", tag, words[0], words[WORDS / 2], words[WORDS - 1]);
}

enum { BLOCKING, POSTED_FIRST, PROBED, MPROBED };

static void round_trip(int rank, int how) {
    if (rank == 0) {
        MPI_Request requests[COUNT];
        for (int tag = 0; tag < COUNT; tag++) {
            send_buffers[tag][0] = tag;
            send_buffers[tag][WORDS / 2] = tag * 7;
            send_buffers[tag][WORDS - 1] = -tag;
            OK(MPI_Isend(send_buffers[tag], WORDS, MPI_INT, 1, tag, MPI_COMM_WORLD,
                         &requests[tag]));
        }
        OK(MPI_Waitall(COUNT, requests, MPI_STATUSES_IGNORE));
    } else if (how == MPROBED) {
        /* MPI_Mprobe for the odd tags, an MPI_Improbe loop for the even ones, then MPI_Mrecv. */
        for (int tag = COUNT - 1; tag >= 0; tag--) {
            MPI_Message message;
            MPI_Status status;
            if (tag % 2 == 1) {
                OK(MPI_Mprobe(0, tag, MPI_COMM_WORLD, &message, &status));
            } else {
                int flag = 0;
                while (!flag)
                    OK(MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &message, &status));
            }
            OK(MPI_Mrecv(receive_buffer, WORDS, MPI_INT, &message, &status));
            CHECK(status.MPI_TAG == tag, "mprobed tag %d", status.MPI_TAG);
            check_payload(receive_buffer, tag);
        }
    } else if (how == POSTED_FIRST) {
        MPI_Request requests[COUNT];
        for (int tag = COUNT - 1; tag >= 0; tag--)
            OK(MPI_Irecv(receive_buffers[tag], WORDS, MPI_INT, 0, tag, MPI_COMM_WORLD,
                         &requests[tag]));
        OK(MPI_Waitall(COUNT, requests, MPI_STATUSES_IGNORE));
        for (int tag = 0; tag < COUNT; tag++)
            check_payload(receive_buffers[tag], tag);
    } else {
        for (int tag = COUNT - 1; tag >= 0; tag--) {
            MPI_Status status;
            if (how == PROBED && tag % 2 == 1) {
                OK(MPI_Probe(0, tag, MPI_COMM_WORLD, &status));
                CHECK(status.MPI_TAG == tag, "probed tag %d", status.MPI_TAG);
            } else if (how == PROBED) {
                int flag = 0;
                while (!flag)
                    OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &status));
                CHECK(status.MPI_TAG == tag, "iprobed tag %d", status.MPI_TAG);
            }
            if (tag >= COUNT / 2) {
                OK(MPI_Recv(receive_buffer, WORDS, MPI_INT, 0, tag, MPI_COMM_WORLD, &status));
            } else {
                MPI_Request request;
                OK(MPI_Irecv(receive_buffer, WORDS, MPI_INT, 0, tag, MPI_COMM_WORLD, &request));
                OK(MPI_Wait(&request, &status));
            }
            CHECK(status.MPI_TAG == tag && status.MPI_SOURCE == 0, "status of tag %d", tag);
            check_payload(receive_buffer, tag);
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    int rank, size;
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "run on 2 ranks");
    round_trip(rank, BLOCKING);
    round_trip(rank, POSTED_FIRST);
    round_trip(rank, PROBED);
    round_trip(rank, MPROBED);
    return ft_finish();
}

// SPDX-License-Identifier: MIT OR Apache-2.0
// The one C source of `runthrough-bench --compare`, built by Open MPI's mpicc and by rtcc and
// run by each runtime's launcher (crates/runthrough-bench/src/compare.rs), timed as
// runthrough's multi-process worker (crates/runthrough-bench/src/mp.rs) times its rows: one
// JSON row per line on rank 0's standard output (the driver labels each with its runtime).
//
//   LAUNCHER -n N ompi_bench collectives REPS TARGET_US
//       p2p_latency and p2p_bandwidth at 8 B, 64 B, ... 1 MiB (N = 2 only), barrier, ibarrier_wait
//       (MPI_Ibarrier then MPI_Wait), all_reduce 8 B and 1 MiB, iall_reduce_wait 8 B,
//       broadcast 8 B, all_gather 8 B per rank,
//       agree (MPIX_Comm_agree), shrink (MPIX_Comm_shrink + MPI_Comm_free).
//   LAUNCHER -n N ompi_bench fault STAMP_FILE
//       The last rank SIGKILLs itself (its CLOCK_REALTIME stamp written to STAMP_FILE just
//       before); every survivor is blocked in MPI_Recv from it. Rank 0 reports detection (kill
//       to MPI_ERR_PROC_FAILED), recovery (kill to failure_ack + agree + shrink done) and
//       recovery_after_detection (the ack + agree + shrink alone), one sample each.
//
// Each repetition of a failure-free operation runs ITERS iterations between barriers and
// divides; ITERS is calibrated by rank 0 so a repetition takes about TARGET_US.

#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static double mono_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double wall_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void row(const char *op, long bytes, double *samples, int n) {
  qsort(samples, n, sizeof *samples, cmp_double);
  printf("{\"op\":\"%s\",\"ranks\":%d,\"transport\":\"launcher\",\"bytes\":%ld,\"median_us\":%.4f,"
         "\"min_us\":%.4f,\"max_us\":%.4f,\"impl\":\"c\"}\n",
         op, size, bytes, samples[n / 2], samples[0], samples[n - 1]);
  fflush(stdout);
}

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "ompi_bench: rank %d: %s: %s\n", rank, what, text);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static char *buf;
static double *vec_in, *vec_out;
enum { WINDOW = 64, MIB = 1 << 20 };
// The message sizes of the point-to-point rows (runthrough-bench's SIZES), and the current one.
static const int SIZES[] = {8, 64, 512, 4096, 32768, 262144, MIB};
static int msg_bytes = 8;

static void step_ping_pong(void) {
  if (rank == 0) {
    check(MPI_Send(buf, msg_bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD), "send");
    check(MPI_Recv(buf, msg_bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
  } else if (rank == 1) {
    check(MPI_Recv(buf, msg_bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
    check(MPI_Send(buf, msg_bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD), "send");
  }
}

static void step_stream(void) {
  char ack = 0;
  for (int i = 0; i < WINDOW; i++) {
    if (rank == 0)
      check(MPI_Send(buf, msg_bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD), "send");
    else if (rank == 1)
      check(MPI_Recv(buf, msg_bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
  }
  if (rank == 0)
    check(MPI_Recv(&ack, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv ack");
  else if (rank == 1)
    check(MPI_Send(&ack, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD), "send ack");
}

static void step_barrier(void) { check(MPI_Barrier(MPI_COMM_WORLD), "barrier"); }

static void step_allreduce_8(void) {
  unsigned long in = (unsigned long)rank, out = 0;
  check(MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD), "allreduce");
}

static void step_ibarrier_wait(void) {
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "ibarrier");
  check(MPI_Wait(&request, MPI_STATUS_IGNORE), "ibarrier wait");
}

static void step_iallreduce_wait_8(void) {
  unsigned long in = (unsigned long)rank, out = 0;
  MPI_Request request;
  check(MPI_Iallreduce(&in, &out, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD, &request),
        "iallreduce");
  check(MPI_Wait(&request, MPI_STATUS_IGNORE), "iallreduce wait");
}

static void step_bcast_8(void) {
  unsigned long word = 7;
  check(MPI_Bcast(&word, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD), "bcast");
}

static void step_allgather_8(void) {
  unsigned long in = (unsigned long)rank;
  check(MPI_Allgather(&in, 1, MPI_UNSIGNED_LONG, vec_out, 1, MPI_UNSIGNED_LONG, MPI_COMM_WORLD),
        "allgather");
}

static void step_allreduce_1m(void) {
  check(MPI_Allreduce(vec_in, vec_out, MIB / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "allreduce 1 MiB");
}

static void step_agree(void) {
  int flag = 1;
  check(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), "MPIX_Comm_agree");
}

static void step_shrink(void) {
  MPI_Comm shrunk;
  check(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk), "MPIX_Comm_shrink");
  check(MPI_Comm_free(&shrunk), "MPI_Comm_free");
}

static void bench(const char *op, long bytes, void (*step)(void), double divide, int reps,
                  double target_us) {
  for (int i = 0; i < 5; i++) step();
  check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
  double start = mono_us();
  for (int i = 0; i < 5; i++) step();
  double per = (mono_us() - start) / 5;
  long iters = per > 0 ? (long)(target_us / per) : 100000;
  if (iters < 3) iters = 3;
  if (iters > 100000) iters = 100000;
  check(MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD), "bcast");
  double *samples = malloc(sizeof(double) * reps);
  for (int r = 0; r < reps; r++) {
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    double t = mono_us();
    for (long i = 0; i < iters; i++) step();
    samples[r] = (mono_us() - t) / (double)iters / divide;
  }
  if (rank == 0) row(op, bytes, samples, reps);
  free(samples);
}

static int collectives(int reps, double target_us) {
  buf = calloc(MIB, 1);
  vec_in = calloc(MIB / 8, sizeof(double));
  vec_out = calloc(MIB / 8, sizeof(double));
  if (size == 2) {
    for (size_t i = 0; i < sizeof SIZES / sizeof *SIZES; i++) {
      msg_bytes = SIZES[i];
      bench("p2p_latency", msg_bytes, step_ping_pong, 2.0, reps, target_us);
    }
    for (size_t i = 0; i < sizeof SIZES / sizeof *SIZES; i++) {
      msg_bytes = SIZES[i];
      bench("p2p_bandwidth", msg_bytes, step_stream, WINDOW, reps, target_us);
    }
  }
  bench("barrier", 0, step_barrier, 1.0, reps, target_us);
  bench("ibarrier_wait", 0, step_ibarrier_wait, 1.0, reps, target_us);
  bench("all_reduce", 8, step_allreduce_8, 1.0, reps, target_us);
  bench("iall_reduce_wait", 8, step_iallreduce_wait_8, 1.0, reps, target_us);
  bench("broadcast", 8, step_bcast_8, 1.0, reps, target_us);
  bench("all_gather", 8, step_allgather_8, 1.0, reps, target_us);
  bench("all_reduce", MIB, step_allreduce_1m, 1.0, reps, target_us);
  bench("agree", 0, step_agree, 1.0, reps, target_us);
  bench("shrink", 0, step_shrink, 1.0, reps, target_us);
  return 0;
}

static int fault(const char *stamp_file) {
  int victim = size - 1;
  char byte = 1;
  // Every survivor is out of the barrier before the victim dies: they tell rank 0, which only
  // then tells the victim to die (as the runthrough worker does).
  check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
  if (rank == 0) {
    for (int i = 1; i < victim; i++)
      check(MPI_Recv(&byte, 1, MPI_BYTE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "recv ready");
  } else if (rank != victim) {
    check(MPI_Send(&byte, 1, MPI_BYTE, 0, 6, MPI_COMM_WORLD), "send ready");
  }
  if (rank == victim) {
    check(MPI_Recv(&byte, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv go");
    FILE *f = fopen(stamp_file, "w");
    if (!f) {
      perror(stamp_file);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fprintf(f, "%.3f\n", wall_us());
    fclose(f);
    kill(getpid(), SIGKILL);
    pause();
  }
  if (rank == 0)
    check(MPI_Send(&byte, 1, MPI_BYTE, victim, 7, MPI_COMM_WORLD), "send go");
  int rc = MPI_Recv(&byte, 1, MPI_BYTE, victim, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double detected = wall_us();
  int class = MPI_SUCCESS;
  MPI_Error_class(rc, &class);
  if (class != MPIX_ERR_PROC_FAILED) {
    fprintf(stderr, "ompi_bench: rank %d: recv from the killed rank gave class %d\n", rank, class);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  check(MPIX_Comm_failure_ack(MPI_COMM_WORLD), "MPIX_Comm_failure_ack");
  int flag = 1;
  rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
  MPI_Error_class(rc, &class);
  if (rc != MPI_SUCCESS && class != MPIX_ERR_PROC_FAILED) check(rc, "MPIX_Comm_agree");
  MPI_Comm shrunk;
  check(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk), "MPIX_Comm_shrink");
  double done = wall_us();
  int shrunk_size = 0;
  MPI_Comm_size(shrunk, &shrunk_size);
  if (shrunk_size != size - 1) {
    fprintf(stderr, "ompi_bench: shrink gave %d ranks of %d\n", shrunk_size, size);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (rank == 0) {
    double killed = 0;
    FILE *f = fopen(stamp_file, "r");
    if (!f || fscanf(f, "%lf", &killed) != 1) {
      fprintf(stderr, "ompi_bench: no stamp in %s\n", stamp_file);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fclose(f);
    double detection = detected - killed, recovery = done - killed, after = done - detected;
    row("detection", 0, &detection, 1);
    row("recovery", 0, &recovery, 1);
    row("recovery_after_detection", 0, &after, 1);
  }
  MPI_Barrier(shrunk);
  MPI_Comm_free(&shrunk);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 2;
  if (argc == 4 && strcmp(argv[1], "collectives") == 0) {
    rc = collectives(atoi(argv[2]), atof(argv[3]));
  } else if (argc == 3 && strcmp(argv[1], "fault") == 0 && size >= 2) {
    rc = fault(argv[2]);
  } else if (rank == 0) {
    fprintf(stderr, "usage: ompi_bench collectives REPS TARGET_US | fault STAMP_FILE\n");
  }
  MPI_Finalize();
  return rc;
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ULFM api test agree: MPIX_Comm_agree computes the AND of the flags, fault-tolerantly.
 * Run-through: as ULFM. Failure-free, it returns the AND. With rank 1 dead and not
 * acknowledged everywhere it returns MPIX_ERR_PROC_FAILED at every survivor, still with the
 * agreed value (the AND over the contributors) in the flag; once every survivor has
 * acknowledged the failure (MPIX_Comm_failure_ack), it returns MPI_SUCCESS. */
#include "ft_common.h"

int main(int argc, char **argv) {
    int rank, size, flag;
    ft_init(&argc, &argv, &rank, &size);
    flag = ~(1 << rank);
    OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == ~((1 << size) - 1), "failure-free agreed %#x", flag);
    if (rank == 1)
        DIE();
    ft_wait_detected(MPI_COMM_WORLD, 1);
    flag = rank == 2 ? 0x5 : 0xf;
    EXPECT(MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPIX_ERR_PROC_FAILED);
    CHECK(flag == 0x5, "agreed %#x with a failure", flag);
    OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = rank == 3 ? 0x6 : 0xf;
    OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0x6, "agreed %#x after the ack", flag);
    return ft_finish();
}

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * mpi-ext.h: the ULFM fault-tolerance names of runthrough, where Open MPI programs with ULFM
 * look for them (`#include <mpi-ext.h>` after <mpi.h>; <mpi.h> includes this header too).
 * MPIX_FT is defined, so a program can test `#ifdef MPIX_FT`.
 *
 * Semantics (as Open MPI's ULFM, with run-through's rules once a program calls the
 * MPI_Comm_validate_* calls of <mpi.h>; the guide, docs/src/c.md, describes both):
 * - A failed peer: MPIX_ERR_PROC_FAILED. A revoked communicator: MPIX_ERR_REVOKED for every
 *   non-local call on it except MPIX_Comm_agree, _iagree, _shrink and MPI_Comm_validate_global.
 * - MPIX_Comm_get_failed: the group of the failures this rank knows in the communicator, in the
 *   order this rank learned of them (a later call only appends to it).
 *   MPIX_Comm_ack_failed(comm, k, &acked) acknowledges the first k of them (puts them in the
 *   local view L, so MPI_ANY_SOURCE receives no longer report them) and sets acked to the
 *   number of acknowledged failures; acknowledgements are never taken back.
 *   MPIX_Comm_failure_ack acknowledges every failure known now; MPIX_Comm_failure_get_acked is
 *   the group of the acknowledged ones, in rank order.
 * - MPIX_Comm_agree / MPIX_Comm_iagree: the bitwise AND of the flags over the contributors, the
 *   same at every rank that returns; MPIX_ERR_PROC_FAILED (with the agreed flag written) when a
 *   participant failed before contributing and not every contributor had acknowledged it. An
 *   MPIX_Comm_iagree request is progressed by the library (no helper thread); the flag is
 *   written when the request completes (MPI_Wait, MPI_Test). While it is pending, a later
 *   collective call on the communicator waits for it first (collectives are ordered).
 * - MPIX_Comm_shrink: a new communicator of the survivors, in their old order.
 *   MPIX_Comm_ishrink: the same as a request, progressed by the library (no helper thread);
 *   *newcomm is written when the request completes. While it is pending, another collective
 *   call on the communicator fails (MPI_ERR_OTHER). Its request cannot be freed with
 *   MPI_Request_free (MPI_ERR_REQUEST).
 * - The MPI-5 names (MPI_Comm_revoke, _is_revoked, _shrink, _ishrink, _agree, _iagree,
 *   _get_failed, _ack_failed and the classes MPI_ERR_PROC_FAILED, _PROC_FAILED_PENDING,
 *   MPI_ERR_REVOKED) are declared in <mpi.h> and behave as these.
 * docs/src/semantics.md describes the failure rules.
 */
#ifndef RUNTHROUGH_MPI_EXT_H
#define RUNTHROUGH_MPI_EXT_H

#include "mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An attribute key too, as in Open MPI: MPI_Comm_get_attr(comm, MPIX_FT, &value, &flag) gives
 * flag 1 and a pointer to an int 1 (this library tolerates failures). */
#define MPIX_FT 8

#define MPIX_ERR_PROC_FAILED 75
#define MPIX_ERR_PROC_FAILED_PENDING 76
#define MPIX_ERR_REVOKED 77

int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int MPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);
/* Windows: MPIX_Win_revoke makes every pending and later operation and synchronization on the
 * window return MPIX_ERR_REVOKED at every rank (not collective); MPIX_Win_get_failed gives the
 * group of the window's ranks this rank knows failed (local; it acknowledges nothing). A new
 * window over MPIX_Comm_shrink's communicator carries on. */
int MPIX_Win_revoke(MPI_Win win);
int MPIX_Win_get_failed(MPI_Win win, MPI_Group *failedgrp);

/* runthrough's resilience library (the guide's "Recovering the application's data"): in-memory
 * checkpoints of the application's data with copies on other ranks, or parity.
 * - The data is cut into slots, one per rank of the communicator the store is created on (slot i
 *   first owned by rank i); RTX_Store_owned lists the slots this rank owns now.
 * - RTX_Store_checkpoint (collective): each owned slot goes to the next `copies` ranks; all
 *   ranks agree whether every copy arrived. Committed at every rank at once, or
 *   RTX_ERR_NOT_COMMITTED / MPIX_ERR_PROC_FAILED at every rank and the previous checkpoint
 *   stands.
 * - After a failure, repair the communicator (MPIX_Comm_shrink, or one with replacements or spare
 *   ranks), then RTX_Store_recover at the survivors and RTX_Store_join at the newcomers
 *   (collective over the repaired communicator): every rank owns its slots again, as they were
 *   at the last committed checkpoint (a dead rank's go to the newcomer in its place, else to the
 *   first surviving rank with a copy); RTX_Store_restored copies them out. The restored state is
 *   checkpointed again before the call returns. RTX_ERR_DATA_LOST at every rank when a slot's
 *   owner and every copy's holder died. Errors of RTX_Store_checkpoint go to the error handler
 *   of the communicator of the store's creation or last recovery.
 * - RTX_Store_create_parity / RTX_Store_join_parity: the same store with parity over consecutive
 *   groups of `group` ranks instead of copies, surviving `parity` failures per group (XOR parity
 *   for 1, Reed-Solomon above) for parity / (group - parity) of the data in memory; the other
 *   calls are the same. RTX_ERR_DATA_LOST when more ranks of one group died. */
#define RTX_ERR_NOT_COMMITTED 80
#define RTX_ERR_DATA_LOST 81
typedef int RTX_Store;
#define RTX_STORE_NULL 0
int RTX_Store_create(MPI_Comm comm, int copies, RTX_Store *store);
int RTX_Store_free(RTX_Store *store);
int RTX_Store_owned(RTX_Store store, int max, int *slots, int *count);
int RTX_Store_checkpoint(RTX_Store store, int count, const int slots[], const void *const data[],
                         const MPI_Aint sizes[]);
int RTX_Store_recover(RTX_Store store, MPI_Comm comm);
int RTX_Store_join(MPI_Comm comm, int copies, RTX_Store *store);
int RTX_Store_restored(RTX_Store store, int slot, void *buf, MPI_Aint size, MPI_Aint *length);
int RTX_Store_create_parity(MPI_Comm comm, int group, int parity, RTX_Store *store);
int RTX_Store_join_parity(MPI_Comm comm, int group, int parity, RTX_Store *store);

/* The profiling interface (generated by crates/runthrough-c/tests/header.rs from the
 * declarations above; `RT_UPDATE_README=1 cargo test -p runthrough-c --test header` rewrites it):
 * every function under its PMPI_ name, for a tool that defines an MPI_ function itself and
 * calls the library's through this name. */
int PMPIX_Comm_revoke(MPI_Comm comm);
int PMPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int PMPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int PMPIX_Comm_agree(MPI_Comm comm, int *flag);
int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int PMPIX_Comm_failure_ack(MPI_Comm comm);
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);
int PMPIX_Win_revoke(MPI_Win win);
int PMPIX_Win_get_failed(MPI_Win win, MPI_Group *failedgrp);
/* The profiling interface: end. */

#ifdef __cplusplus
}
#endif

#endif /* RUNTHROUGH_MPI_EXT_H */

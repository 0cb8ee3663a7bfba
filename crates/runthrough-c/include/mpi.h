/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * mpi.h: the C interface of runthrough (see the guide's chapter docs/src/c.md).
 *
 * An MPI subset with the run-through stabilization calls of the MPI Forum's 2011
 * fault-tolerance proposal (MPI_Comm_validate_*, MPI_Comm_get_state_*, MPI_Comm_get_num_state_*)
 * and the ULFM calls, declared in <mpi-ext.h> as Open MPI ships them (this header includes it,
 * so programs that include only <mpi.h> see them too), implemented by the Rust runtime (crate
 * runthrough-c). Compile with `rtcc prog.c -o prog` (C++: `rtcxx`), run with
 * `rtrun -n 4 ./prog` (or under Hydra's mpiexec or srun); started without a launcher, a program runs as a singleton (a world
 * of one rank). MPI_Init that cannot bootstrap (a launcher's variables or an RT_* setting that
 * do not parse, a launcher that cannot be reached) prints one line and exits with status 1,
 * as under MPI_ERRORS_ARE_FATAL.
 *
 * Every function is also declared (at the end of this header and of <mpi-ext.h>) and exported
 * under its profiling name, PMPI_ for MPI_ and PMPIX_ for MPIX_, for tools that define an MPI_
 * function themselves (the guide's C chapter, "The profiling interface").
 *
 * Conventions
 * - Handles (MPI_Comm, MPI_Group, MPI_Request, MPI_Errhandler, MPI_Datatype, MPI_Op) are ints
 *   indexing tables of the library; a handle is never reused after it is freed, so a stale handle
 *   is reported (MPI_ERR_COMM, MPI_ERR_GROUP, MPI_ERR_REQUEST, ...), never misused.
 * - Error codes are error classes: MPI_Error_class(code) == code (but for codes the program
 *   adds with MPI_Add_error_code).
 * - Wrong use (a NULL pointer, a freed or unknown handle, a negative count) returns an error
 *   class through the communicator's error handler; the library never crashes on it. As in MPI,
 *   the default handler of MPI_COMM_WORLD is MPI_ERRORS_ARE_FATAL (it prints the error and exits
 *   the process with status 1); fault-tolerant programs set MPI_ERRORS_RETURN. Errors on an
 *   invalid communicator handle go to MPI_COMM_WORLD's handler. New communicators inherit the
 *   parent's handler.
 * - Calls before MPI_Init or after MPI_Finalize return MPI_ERR_OTHER (but MPI_Get_version,
 *   MPI_Get_library_version, MPI_Initialized, MPI_Finalized, the MPI_Info_* calls,
 *   MPI_Error_class, MPI_Error_string and MPI_Add_error_* work then).
 *
 * Run-through semantics, where they differ from MPI / ULFM
 * - Each communicator has a local failure view L (updated by MPI_Comm_validate_local and
 *   MPIX_Comm_failure_ack) and an agreed global view G (MPI_Comm_validate_global). Ranks are never
 *   renumbered (except by MPIX_Comm_shrink).
 * - Point-to-point with a rank that failed and is not yet in G: MPIX_ERR_PROC_FAILED. With a
 *   rank recognized in G (MPI_RANK_STATE_NULL): behaves as MPI_PROC_NULL (a send completes at
 *   once, a receive completes at once with source MPI_PROC_NULL and count 0).
 * - While a failure is known but not acknowledged (not in L), a blocking call that receives
 *   from MPI_ANY_SOURCE (MPI_Recv, MPI_Probe, MPI_Sendrecv, MPI_Sendrecv_replace) returns
 *   MPIX_ERR_PROC_FAILED and receives nothing, as in ULFM; a non-blocking receive's MPI_Wait /
 *   MPI_Test returns MPIX_ERR_PROC_FAILED_PENDING and the request stays pending (not freed),
 *   so it can still complete after MPIX_Comm_failure_ack (or MPI_Comm_validate_local).
 * - Collectives run over the OK ranks of G; an unrecognized failure disables them
 *   (MPIX_ERR_PROC_FAILED) until MPI_Comm_validate_global (docs/src/semantics.md §3.3).
 *   A NULL rank contributes nothing (to reductions and scans) and its slots in gather(v) / scatter(v) /
 *   allgather(v) / alltoall(v) buffers are left untouched. MPI_IN_PLACE is accepted by Reduce
 *   and Gather(v) at the root, Scatter(v) at the root (as recvbuf), Allreduce, Allgather(v),
 *   Alltoall(v), Reduce_scatter(_block), Scan and Exscan. The v-collectives take displacements
 *   >= 0 only (MPI_ERR_ARG).
 *
 * - MPI_Ssend / MPI_Issend are synchronous: the call (the request) completes once a receive
 *   at the destination has matched the message (the destination's runtime acknowledges it when
 *   a receive takes it, even before the receiver waits for that receive; ordinary messages carry
 *   nothing for this). A destination that fails before it matches the message, or before its
 *   acknowledgement arrives, makes the send MPIX_ERR_PROC_FAILED; one recognized in G completes
 *   it (MPI_PROC_NULL). A destination that frees the communicator, or finalizes, without
 *   receiving the message leaves the send pending, as in MPI.
 *
 * Where the runtime has no exact counterpart (the closest sound reading)
 * - Multiple completion (MPI_Waitall, _Waitany, _Waitsome, MPI_Testall, _Testany, _Testsome):
 *   a request that failed is done, like one that succeeded; a wildcard receive reporting
 *   MPIX_ERR_PROC_FAILED_PENDING is done for these calls but keeps its handle. The calls with
 *   statuses return MPI_ERR_IN_STATUS with each status's MPI_ERROR; a user error handler is
 *   called with the first failed request's own class (as Open MPI does), not MPI_ERR_IN_STATUS.
 * - MPI_Request_free of a pending receive or of a send waiting for credit: the operation goes
 *   on (a helper thread completes it); the request of a non-blocking collective cannot be
 *   freed (MPI_ERR_REQUEST, as MPI says it is erroneous).
 * - Persistent requests (MPI_Send_init, _Ssend_init, _Bsend_init, _Rsend_init, MPI_Recv_init):
 *   the init call checks the arguments (MPI_ERR_RANK, MPI_ERR_TAG, ... at once); MPI_Start /
 *   MPI_Startall start the operation exactly as MPI_Isend / MPI_Issend / MPI_Irecv would, so
 *   it fails as they do (a peer that failed: MPIX_ERR_PROC_FAILED at completion; a peer
 *   recognized in G: completes as MPI_PROC_NULL). Every completion call leaves the request
 *   inactive and allocated, also when it failed; completing an inactive one returns at once
 *   with an empty status, and the Waitany/Testany/Waitsome/Testsome calls skip it as they skip
 *   MPI_REQUEST_NULL. MPI_Start of an active request is MPI_ERR_REQUEST. MPI_Request_free of
 *   an active one lets its operation go on, as for a non-persistent request; MPI_Cancel of an
 *   active receive withdraws it as for MPI_Irecv.
 * - Buffered and ready sends (MPI_Bsend, _Ibsend, _Bsend_init, MPI_Rsend, _Irsend,
 *   _Rsend_init) are standard sends: the library buffers every message itself (eager, with
 *   the flow control below), and a standard send is a valid ready send. MPI_Buffer_attach
 *   only records the buffer (MPI_ERR_BUFFER if one is attached or the size is negative) and
 *   MPI_Buffer_detach returns it (NULL and 0 when none is attached, as MPICH does); the
 *   attached buffer is never used, so a program that expects MPI_ERR_BUFFER from a buffered
 *   send that does not fit in it will not get it.
 * - Flow control: each sender may have a share of the destination's buffer for unexpected
 *   messages (RT_UNEXPECTED_CAP, default 64 MiB, divided among the ranks) in flight; beyond it
 *   MPI_Send waits until the destination has received earlier messages, and an MPI_Isend
 *   request stays pending until its message goes (while the rank waits in MPI_Wait, MPI_Test or
 *   another blocking call). A send waiting so on a rank that fails returns
 *   MPIX_ERR_PROC_FAILED.
 * - Non-blocking collectives (MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce, ... and
 *   MPIX_Comm_ishrink, MPI_Comm_idup) run in the order they were started, by the rank's engine as their
 *   messages arrive, with no thread of their own, whatever their datatypes (data of a type
 *   with gaps is packed where it leaves and unpacked into the buffer when the call succeeds).
 *   A user op's function (MPI_Op_create) is called, when a step of the call needs it, by a
 *   thread of the process that is inside an MPI call (the one that waits for the request, or
 *   any other that waits in the library), never while the library's lock is held. A call
 *   whose arguments are invalid fails at its start. Errors of the communicator and
 *   request arguments come from the starting call; every other error (datatype, count, root,
 *   op, a failed peer) from the call that completes the request (MPI_Wait, MPI_Test, ...),
 *   through the communicator's error handler there. The buffers, datatypes and ops must stay
 *   valid until the request completes. Their requests cannot be freed with MPI_Request_free
 *   (MPI_ERR_REQUEST).
 * - MPI_Comm_create_group is collective over the group's members only (a rank outside the
 *   group that calls it gets MPI_COMM_NULL); every member gets the communicator, or every member
 *   MPIX_ERR_PROC_FAILED when a member failed (a validate_global on the new communicator decides).
 *   Members that make several calls with the same group and tag make them in the same order.
 * - MPI_Abort ends every rank of the job, whatever the communicator, with the error code as
 *   the job's exit status (1 when the code is not in 1..=255). Under rtrun every rank is ended
 *   and rtrun exits with the code. Under Hydra's mpiexec or srun only the calling rank ends,
 *   with that exit status (which those launchers report as the job's); the other ranks see it
 *   fail and, run-through, carry on.
 * - MPI_Finalize is a fault-tolerant agreement over MPI_COMM_WORLD (it never blocks on a failed
 *   rank); calls after it return MPI_ERR_OTHER.
 * - Datatypes: the basic ones, the pair types with MPI_MINLOC / MPI_MAXLOC, and derived
 *   contiguous / vector / hvector / indexed / struct / subarray / resized types (see "Derived
 *   datatypes" below).
 * - User reduction operations (MPI_Op_create) work in MPI_Reduce, _Allreduce, _Scan, _Exscan,
 *   _Reduce_scatter(_block) and their non-blocking forms, on any datatype (basic, pair or
 *   derived, mixed basic types included). They fail as the predefined ones do (an unrecognized
 *   failure: MPIX_ERR_PROC_FAILED; after MPI_Comm_validate_global a recognized rank contributes
 *   nothing). Every user operation is applied in rank order (v0 op v1 op ... over the
 *   contributing ranks), whether or not it was declared commutative, so every rank of an
 *   all-reduce gets the same result. The function is called with the data in the datatype's
 *   layout, in scratch buffers of the library (aligned for any basic type; the gaps of a strided
 *   type hold zeros, and what the function writes there is dropped), possibly several times per
 *   call and on any rank, never with the library's lock held: it may call MPI_Type_size and the
 *   other local calls, not communicate.
 * - Accessors compare incount with the number of matches m of the query, not with |L| or |G|:
 *   incount = 0 gives outcount = m (rank_infos may be NULL); incount >= m writes m entries; 0 < incount < m writes the first incount, sets outcount = incount and returns
 *   MPI_ERR_SIZE.
 */
#ifndef RUNTHROUGH_MPI_H
#define RUNTHROUGH_MPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Errhandler;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Info;
/* File handles are declared for the handle conversions below (and for bindings such as Rust's
 * `mpi` crate that name them): no MPI-IO call is provided, so the only one is MPI_FILE_NULL.
 * Windows are those of the one-sided calls (MPI_Win_create, ...). */
typedef int MPI_File;
typedef int MPI_Win;
/* A Fortran INTEGER, the type of the handles of MPI's Fortran interface (MPI_Comm_c2f, ...). */
typedef int MPI_Fint;
/* An address-sized integer (byte displacements and extents). */
typedef ptrdiff_t MPI_Aint;
/* File offsets and large counts (MPI-4's _c calls are not provided: counts are ints). */
typedef long long MPI_Offset;
typedef long long MPI_Count;

/* MPI_ERROR is set by the calls that complete several operations (MPI_Waitall, _Testall,
 * _Waitsome, _Testsome); a call that completes one (MPI_Recv, MPI_Wait, MPI_Mrecv, MPI_Probe,
 * ...) returns its error and leaves the field as the program set it, as MPI says. */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int rt_count_bytes; /* read with MPI_Get_count */
    int rt_cancelled;
} MPI_Status;

/* One rank and its state in a failure view: state = state bit | modifier bit. */
typedef struct MPI_Rank_info {
    int rank;
    int state;
} MPI_Rank_info;

typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code, ...);
/* A user reduction (MPI_Op_create): inoutvec[i] = invec[i] op inoutvec[i], i < *len. */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out,
                                        int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                          void *extra_state);
/* The predefined attribute callbacks (functions of the library). */
int rt_comm_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *);
int rt_comm_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
int rt_comm_null_delete_fn(MPI_Comm, int, void *, void *);
#define MPI_COMM_NULL_COPY_FN rt_comm_null_copy_fn
#define MPI_COMM_DUP_FN rt_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN rt_comm_null_delete_fn
/* The MPI-1 names of the attribute callback types and predefined callbacks. */
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
#define MPI_NULL_COPY_FN rt_comm_null_copy_fn
#define MPI_DUP_FN rt_comm_dup_fn
#define MPI_NULL_DELETE_FN rt_comm_null_delete_fn
/* Datatype attribute callbacks: the same shapes (handles are ints), the same predefined ones. */
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out,
                                        int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
#define MPI_TYPE_NULL_COPY_FN rt_comm_null_copy_fn
#define MPI_TYPE_DUP_FN rt_comm_dup_fn
#define MPI_TYPE_NULL_DELETE_FN rt_comm_null_delete_fn
/* Window attribute callbacks: the same shapes, the same predefined ones. */
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out,
                                       int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
#define MPI_WIN_NULL_COPY_FN rt_comm_null_copy_fn
#define MPI_WIN_DUP_FN rt_comm_dup_fn
#define MPI_WIN_NULL_DELETE_FN rt_comm_null_delete_fn

/* Error classes (the values of runthrough_core::ErrorClass). */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_ARG 12
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_SIZE 51
#define MPI_ERR_SPAWN 42
#define MPI_ERR_PROC_FAILED 75
#define MPI_ERR_PROC_FAILED_PENDING 76
#define MPI_ERR_REVOKED 77
#define MPI_ERR_DIMS 11
#define MPI_ERR_KEYVAL 48
/* Windows and memory: an unknown window, MPI_Free_mem of other memory, memory that could not be
 * allocated, a one-sided call out of epoch order, an operation outside the target's window. */
#define MPI_ERR_WIN 45
#define MPI_ERR_BASE 46
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_RMA_SYNC 50
#define MPI_ERR_RMA_RANGE 55
/* A value the external32 representation cannot hold (a C long beyond 32 bits). */
#define MPI_ERR_CONVERSION 23
#define MPI_ERR_TOPOLOGY 13
#define MPI_ERR_INFO 28
#define MPI_ERR_INFO_KEY 29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_LASTCODE 100

/* Rank states and modifiers: distinct nonzero bits (the values of runthrough::RankState). */
#define MPI_RANK_STATE_OK 1
#define MPI_RANK_STATE_FAILED 2
#define MPI_RANK_STATE_NULL 4
#define MPI_RANK_STATE_MOD_NEW 8
#define MPI_RANK_STATE_MOD_OLD 16

/* Predefined handles. */
#define MPI_COMM_NULL 0
#define MPI_COMM_WORLD 1
/* MPI_COMM_SELF: a communicator of this rank alone. */
#define MPI_COMM_SELF 2
#define MPI_INFO_NULL 0
/* MPI_INFO_ENV: read-only (set, delete, free: MPI_ERR_INFO); see "Info objects" below. */
#define MPI_INFO_ENV 1
#define MPI_GROUP_NULL 0
#define MPI_GROUP_EMPTY 1
#define MPI_REQUEST_NULL 0
#define MPI_MESSAGE_NULL 0
#define MPI_FILE_NULL 0
#define MPI_WIN_NULL 0
/* The message of a matched probe of MPI_PROC_NULL or of a rank recognized as failed. */
#define MPI_MESSAGE_NO_PROC 1
#define MPI_ERRHANDLER_NULL 0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN 2
/* MPI-4's: ends the calling process, as MPI_ERRORS_ARE_FATAL does here (the other ranks see it
 * fail and run on). */
#define MPI_ERRORS_ABORT 3

#define MPI_DATATYPE_NULL 0
#define MPI_CHAR 1
#define MPI_SIGNED_CHAR 2
#define MPI_UNSIGNED_CHAR 3
#define MPI_BYTE 4
#define MPI_SHORT 5
#define MPI_UNSIGNED_SHORT 6
#define MPI_INT 7
#define MPI_UNSIGNED 8
#define MPI_LONG 9
#define MPI_UNSIGNED_LONG 10
#define MPI_LONG_LONG 11
#define MPI_LONG_LONG_INT 11
#define MPI_UNSIGNED_LONG_LONG 12
#define MPI_FLOAT 13
#define MPI_DOUBLE 14
#define MPI_INT8_T 15
#define MPI_INT16_T 16
#define MPI_INT32_T 17
#define MPI_INT64_T 18
#define MPI_UINT8_T 19
#define MPI_UINT16_T 20
#define MPI_UINT32_T 21
#define MPI_UINT64_T 22
#define MPI_C_BOOL 23
/* The C names of Fortran types, as C programs use them (INTEGER is int, REAL float). */
#define MPI_INTEGER 24
#define MPI_REAL 25
#define MPI_DOUBLE_PRECISION 26
/* The pair types of MPI_MINLOC / MPI_MAXLOC, laid out as C lays out struct { value; int; }. */
#define MPI_FLOAT_INT 27
#define MPI_DOUBLE_INT 28
#define MPI_LONG_INT 29
#define MPI_2INT 30
#define MPI_SHORT_INT 31
/* The bytes of MPI_Pack (as MPI_BYTE). */
#define MPI_PACKED 32
/* The datatypes of MPI_Aint, MPI_Offset and MPI_Count (64-bit integers). */
#define MPI_AINT 40
#define MPI_OFFSET 41
#define MPI_COUNT 42
/* long double and its pair type; the complex types (MPI_SUM and MPI_PROD only; long double's
 * MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, and MPI_MINLOC / MPI_MAXLOC on MPI_LONG_DOUBLE_INT).
 * A derived type made of them is reduced only by a user operation. */
#define MPI_LONG_DOUBLE 33
#define MPI_LONG_DOUBLE_INT 34
#define MPI_C_FLOAT_COMPLEX 35
#define MPI_C_COMPLEX 35
#define MPI_C_DOUBLE_COMPLEX 36
#define MPI_C_LONG_DOUBLE_COMPLEX 37
#define MPI_CXX_FLOAT_COMPLEX 43
#define MPI_CXX_DOUBLE_COMPLEX 44
#define MPI_CXX_LONG_DOUBLE_COMPLEX 45
/* wchar_t (a 32-bit int here) and C++'s bool (one byte). */
#define MPI_WCHAR 38
#define MPI_CXX_BOOL 39
/* More Fortran types by their C counterparts: COMPLEX is float _Complex, DOUBLE COMPLEX
 * double _Complex, LOGICAL int, CHARACTER char. */
#define MPI_COMPLEX 46
#define MPI_DOUBLE_COMPLEX 47
#define MPI_LOGICAL 48
#define MPI_CHARACTER 49

#define MPI_OP_NULL 0
#define MPI_MAX 1
#define MPI_MIN 2
#define MPI_SUM 3
#define MPI_PROD 4
#define MPI_LAND 5
#define MPI_BAND 6
#define MPI_LOR 7
#define MPI_BOR 8
#define MPI_LXOR 9
#define MPI_BXOR 10
/* On the pair types only: the extreme value and the smallest index that holds it. */
#define MPI_MAXLOC 11
#define MPI_MINLOC 12
/* For one-sided accumulates in MPI; there are no windows here, so a reduction with them is
 * MPI_ERR_OP. Defined so that programs (and mpi4py) can name them. */
#define MPI_REPLACE 13
#define MPI_NO_OP 14

/* Datatype combiners (MPI_Type_get_envelope). */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR 5
#define MPI_COMBINER_INDEXED 6
#define MPI_COMBINER_HINDEXED 7
#define MPI_COMBINER_INDEXED_BLOCK 8
#define MPI_COMBINER_HINDEXED_BLOCK 9
#define MPI_COMBINER_STRUCT 10
#define MPI_COMBINER_SUBARRAY 11
#define MPI_COMBINER_DARRAY 12
#define MPI_COMBINER_F90_REAL 13
#define MPI_COMBINER_F90_COMPLEX 14
#define MPI_COMBINER_F90_INTEGER 15
#define MPI_COMBINER_RESIZED 16
#define MPI_COMBINER_VALUE_INDEX 17

/* Array orders (MPI_Type_create_subarray). */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

/* Split types (MPI_Comm_split_type). */
#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3
#define MPI_COMM_TYPE_RESOURCE_GUIDED 4

/* Topology kinds (MPI_Topo_test); only Cartesian topologies are built. */
#define MPI_CART 1
#define MPI_GRAPH 2
#define MPI_DIST_GRAPH 3

/* Special values. */
#define MPI_PROC_NULL (-1)
#define MPI_ANY_SOURCE (-2)
/* The root's own root argument in a rooted collective on an intercommunicator (the other
 * members of its group pass MPI_PROC_NULL, the other group the root's rank). */
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_TAG_UB_VALUE 2147483647
/* Per-message bytes to add to MPI_Buffer_attach's size (the attached buffer is not used). */
#define MPI_BSEND_OVERHEAD 128
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3
#define MPI_VERSION 4
#define MPI_SUBVERSION 0
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
/* Predefined attribute keys (MPI_Comm_get_attr; on every communicator). */
#define MPI_TAG_UB 1
#define MPI_WTIME_IS_GLOBAL 2
#define MPI_UNIVERSE_SIZE 3
#define MPI_LASTUSEDCODE 4
#define MPI_HOST 5
#define MPI_IO 6
/* MPI_APPNUM: 0 at the ranks the launcher started (one program); not set at spawned ranks. */
#define MPI_APPNUM 7
/* What MPI_Comm_free_keyval leaves in the key; keys of MPI_Comm_create_keyval start at 64. */
#define MPI_KEYVAL_INVALID (-1)

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_IN_PLACE ((void *)-1)
/* The buffer argument for data a type places at absolute addresses (struct types whose
 * displacements are MPI_Get_address results); see the notes on derived datatypes. */
#define MPI_BOTTOM ((void *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)

/* Environment. */
int MPI_Init(int *argc, char ***argv);
/* The library is thread-safe: MPI_Init_thread provides MPI_THREAD_MULTIPLE whatever is
 * required, and MPI_Query_thread returns MPI_THREAD_MULTIPLE after MPI_Init too.
 * MPI_Is_thread_main is true on the thread that called MPI_Init / MPI_Init_thread. */
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Finalize(void);
int MPI_Abort(MPI_Comm comm, int errorcode);
double MPI_Wtime(void);
/* Profiling control: no profiling library is attached, so it changes nothing (MPI_SUCCESS). */
int MPI_Pcontrol(const int level, ...);
double MPI_Wtick(void);
int MPI_Get_processor_name(char *name, int *resultlen);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);

/* Error handling. */
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
/* MPI-1's names of the two calls above (removed from MPI-3.0, kept for old programs). */
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
                               MPI_Errhandler *errhandler);
/* MPI_Comm_get_errhandler gives a new reference, MPI_Errhandler_free releases one (a
 * predefined handler, as MPI_Comm_get_errhandler returns it, included); a user handler goes
 * with its last reference, and communicators that use it keep it. */
int MPI_Errhandler_free(MPI_Errhandler *errhandler);
int MPI_Error_class(int errorcode, int *errorclass);
/* Reports errorcode through comm's error handler; MPI_SUCCESS when the handler returns. */
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Error_string(int errorcode, char *string, int *resultlen);
/* Added classes and codes are numbered from MPI_ERR_LASTCODE + 1 up (the MPI_LASTUSEDCODE
 * attribute is the largest); they are local to the process. MPI_Error_string gives an added
 * one's string, or "" until MPI_Add_error_string sets it. */
int MPI_Add_error_class(int *errorclass);
int MPI_Add_error_code(int errorclass, int *errorcode);
int MPI_Add_error_string(int errorcode, const char *string);

/* Communicators. */
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
/* MPI_Comm_idup: a rank's part is made when it starts, or as soon as the creations it started
 * before on the communicator ended there: creations on a communicator end in the order each rank
 * starts them, whatever order their requests complete in, and progress while the rank waits in
 * any call. Collectives, point-to-point and other creations may run on the communicator while it
 * is pending. *newcomm is written when the request completes (MPI_COMM_NULL on an error); the
 * request cannot be freed or cancelled. MPI_Comm_dup is MPI_Comm_idup waited for at once. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                            MPI_Request *request);
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
/* MPI_Comm_split_type: MPI_COMM_TYPE_SHARED groups the ranks of one host, a host being a
 * kernel boot (/proc/sys/kernel/random/boot_id) with a host name: each rank learns the others'
 * by an all-gather of that identity over comm and an agreement on its outcome (it fails at
 * every rank or at none), then the call is MPI_Comm_split with the lowest rank of the host as
 * the color. Under failure it behaves as MPI_Comm_split: MPIX_ERR_PROC_FAILED while a failure
 * is not recognized, and a rank recognized as failed takes no part. MPI_COMM_TYPE_HW_GUIDED
 * with the info hint mpi_hw_resource_type = mpi_shared_memory splits as MPI_COMM_TYPE_SHARED
 * among the ranks that pass it. MPI_UNDEFINED and the other hardware types and levels
 * (MPI_COMM_TYPE_HW_GUIDED without that hint, _HW_UNGUIDED, _RESOURCE_GUIDED: no level below
 * the host is known) take part in the call and get MPI_COMM_NULL; other types are MPI_ERR_ARG.
 * The info is checked (MPI_ERR_INFO) and its other hints ignored. */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
/* Attributes (MPI-4.0 §7.7): MPI_Comm_get_attr reads the predefined keys (a pointer to the int
 * value) and the keys of MPI_Comm_create_keyval (the value stored by MPI_Comm_set_attr; *flag 0
 * when the communicator has none). MPI_Comm_dup runs each key's copy callback, MPI_Comm_free
 * each delete callback, and MPI_Finalize deletes MPI_COMM_SELF's attributes first. NULL
 * callbacks act as MPI_COMM_NULL_COPY_FN / MPI_COMM_NULL_DELETE_FN. Unknown keys: MPI_ERR_KEYVAL.
 * A callback that returns an error fails the call with that error: a failed delete leaves the
 * value in place (MPI_Comm_delete_attr, MPI_Comm_set_attr over it), a failed copy makes
 * MPI_Comm_dup free the duplicate and return MPI_COMM_NULL. */
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state);
int MPI_Comm_free_keyval(int *comm_keyval);
int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
/* The MPI-1 names of the attribute calls (removed from MPI-4, kept for older programs): each
 * behaves as its MPI_Comm_ counterpart above. */
int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state);
int MPI_Keyval_free(int *keyval);
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int MPI_Attr_delete(MPI_Comm comm, int keyval);
/* *flag is 1 for an intercommunicator (MPI_Intercomm_create, MPI_Comm_spawn), else 0. */
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);

/* Intercommunicators. MPI_Intercomm_create is collective over both groups: the leaders
 * exchange their groups over peer_comm (with the tag), each broadcasts the other group to its
 * own, then an agreement over peer_comm and two splits of it (the fault-tolerant creation)
 * make the communicators that carry its traffic: every rank gets the intercommunicator, or
 * every rank the same error (MPIX_ERR_PROC_FAILED when a member or a leader failed first).
 * Because those splits are collective over every participant of peer_comm, the participants of
 * peer_comm (its OK ranks in G) must be exactly the
 * two groups (MPI_ERR_ARG at every rank otherwise), and every rank uses peer_comm, not only
 * the leaders: when the leaders pass MPI_COMM_WORLD, the other ranks use it whatever they
 * pass; otherwise they must pass the same communicator. A leader whose peer_comm or
 * remote_leader is wrong returns that error (MPI_ERR_COMM, MPI_ERR_RANK) and the other members
 * of its group MPI_ERR_ARG.
 * On an intercommunicator MPI_Comm_size, _rank and _group are the local group's; the ranks of
 * point-to-point calls (and statuses' MPI_SOURCE) name the remote group (MPI_ERR_RANK outside
 * it), and a remote rank that failed is MPIX_ERR_PROC_FAILED (MPI_PROC_NULL once recognized)
 * as with any peer; MPI_ANY_SOURCE matches the remote group's messages only, but reports
 * MPIX_ERR_PROC_FAILED for an unacknowledged failure in either group. MPI_Comm_dup and
 * MPI_Comm_idup duplicate it (the same groups: a dup of each communicator that carries its
 * traffic, so every member of both groups takes part). MPI_Comm_split splits each group by
 * color (a color the other group lacks gives MPI_COMM_NULL), MPI_Comm_split_type by host and MPI_Comm_create takes a subset
 * of the local group (an empty one on either side gives MPI_COMM_NULL): the colors are
 * exchanged, agreed on, then both communicators split, so every rank gets the same
 * intercommunicator or the same error. The blocking collectives MPI defines on an
 * intercommunicator work there: MPI_Barrier over both groups; MPI_Bcast, MPI_Reduce,
 * MPI_Gather(v), MPI_Scatter(v) from or to a root of one group (MPI_ROOT at the root,
 * MPI_PROC_NULL at its group's other members, the root's rank in the other group);
 * MPI_Allreduce, MPI_Allgather(v), MPI_Alltoall(v/w), each group receiving what the other sent
 * (a reduction combines the other group's contributions in its rank order where the result
 * goes: its cost grows with that group's size); MPI_IN_PLACE is MPI_ERR_BUFFER there. The
 * non-blocking and persistent collectives, scans and reduce-scatters, the other communicator
 * constructors (Cart_create, ...), the validate calls and the ULFM calls other than
 * MPIX_Comm_revoke, MPIX_Comm_is_revoked, MPIX_Comm_failure_ack and MPIX_Comm_agree
 * (MPIX_Comm_iagree, _shrink, _get_failed, _ack_failed, _failure_get_acked included), and
 * MPI_Pack on an intercommunicator return MPI_ERR_COMM (only intracommunicators have them
 * here), or MPIX_ERR_REVOKED once it is revoked (a collective waiting when it is revoked
 * returns MPIX_ERR_REVOKED too). MPI_Intercomm_merge (collective over both groups:
 * an agreement then a split, so every rank gets the same result) puts the group that passes
 * high = 0 first (when both pass the same value, the group whose first member has the lower
 * MPI_COMM_WORLD rank);
 * a member's failure that not every member acknowledged makes it MPIX_ERR_PROC_FAILED at every
 * rank. MPI_Comm_compare of two intercommunicators compares both groups. MPIX_Comm_revoke and
 * MPIX_Comm_is_revoked revoke, and look at, both groups' traffic; MPIX_Comm_failure_ack
 * acknowledges the failures known in both groups; MPIX_Comm_agree gives, as in ULFM, the AND
 * of the remote group's flags, and MPIX_ERR_PROC_FAILED at every rank of both groups when a
 * member failed and not every member acknowledged it (two agreements over both groups). */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm);
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int MPI_Comm_remote_size(MPI_Comm comm, int *size);
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);

/* Process creation (docs/src/semantics.md section 8). Under rtrun, MPI_Comm_spawn starts
 * maxprocs new processes of command (looked up on PATH unless it holds a '/') with argv (MPI_ARGV_NULL:
 * none) and returns an intercommunicator to them (the parents are its first group); the new
 * processes get world ranks from the job's size up, at most rtrun --universe-size in all
 * (MPI_UNIVERSE_SIZE), and their own MPI_COMM_WORLD. It is collective over comm and
 * fault-tolerant: every parent gets the intercommunicator, or every parent an error
 * (MPI_ERR_SPAWN when the processes cannot be started or the universe is full,
 * MPIX_ERR_PROC_FAILED when a parent died during the call; MPI_ERR_ARG at the root for a bad
 * command, argv or maxprocs, MPI_ERR_SPAWN at the others), and then no new process runs any
 * of its program. command, argv, maxprocs and info matter at root only. Info keys: "wdir" is
 * the new processes' working directory; "host", "arch", "path", "file", "soft" and any other
 * key are ignored. array_of_errcodes (or MPI_ERRCODES_IGNORE) gets MPI_SUCCESS per new
 * process, or the error class for each one asked for (at the root). MPI_Comm_spawn_multiple
 * starts several programs in one spawn, numbered in their order (array_of_argv may be
 * MPI_ARGVS_NULL). A spawned process makes its side of the intercommunicator in MPI_Init
 * (MPI_Comm_get_parent returns it; MPI_COMM_NULL in a process the job started) and sees its
 * parents fail like any peer. MPI_Comm_disconnect is collective over the communicator (both
 * groups of an intercommunicator): it waits until every live member disconnects (a
 * fault-tolerant agreement, so a member that exits as soon as it returns makes nobody fail),
 * so no member finalizes and exits while the others still use it, then frees it (as
 * MPI_Comm_free) and sets it to MPI_COMM_NULL (MPIX_ERR_REVOKED on a revoked one, freed all the
 * same); MPI_Comm_get_parent returns MPI_COMM_NULL after the parent intercommunicator is
 * freed. A spawned process that finalizes without disconnecting first may end while its
 * parents still communicate with it: they then see it fail. Under Hydra's mpiexec, srun and
 * a singleton nothing can be spawned: MPI_ERR_SPAWN at every parent. */
int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]);
int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[],
                            int root, MPI_Comm comm, MPI_Comm *intercomm,
                            int array_of_errcodes[]);
int MPI_Comm_get_parent(MPI_Comm *parent);
int MPI_Comm_disconnect(MPI_Comm *comm);

/* Info objects. Keys are 1 to MPI_MAX_INFO_KEY - 1 bytes (MPI_ERR_INFO_KEY otherwise), values
 * at most MPI_MAX_INFO_VAL - 1 (MPI_ERR_INFO_VALUE); keys are numbered in the order they were
 * first set. The info calls work before MPI_Init and after MPI_Finalize too (MPI-4). An invalid
 * or freed handle is MPI_ERR_INFO; deleting a key that is not there, MPI_ERR_INFO_NOKEY.
 * MPI_INFO_ENV holds the keys this process knows: command, argv (the arguments after the
 * command, separated by spaces), maxprocs (the size of MPI_COMM_WORLD, once initialized), host,
 * arch, wdir and thread_level; never file or soft. The library uses no hints: the calls that
 * take an info (MPI_Comm_dup_with_info, MPI_Comm_set_info, MPI_Comm_split_type) check the
 * handle (MPI_INFO_NULL is accepted) and ignore the pairs; MPI_Comm_get_info returns a new,
 * empty info. */
int MPI_Info_create(MPI_Info *info);
int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info);
int MPI_Info_set(MPI_Info info, const char *key, const char *value);
int MPI_Info_delete(MPI_Info info, const char *key);
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag);
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int MPI_Info_free(MPI_Info *info);

/* Topologies. A Cartesian communicator is an ordinary one (made by a split of comm_old, with
 * its failure semantics) that carries its grid; ranks are not reordered (reorder is ignored);
 * MPI_Comm_dup keeps the grid. MPI_Cart_shift is local: a failed neighbour is returned like any
 * other, and its failure shows when the program communicates with it. Errors: MPI_ERR_DIMS for
 * ndims < 0, a dimension < 1 or a grid larger than comm_old; MPI_ERR_TOPOLOGY for a
 * communicator without a grid; MPI_ERR_ARG for a direction outside 0..ndims-1, a coordinate
 * out of range in a non-periodic dimension, maxdims below ndims; MPIX_ERR_PROC_FAILED from
 * MPI_Cart_create / MPI_Cart_sub when a rank of the (sub-)grid has failed. */
int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart);
/* The rank MPI_Cart_create would give this process (no reordering: its own), or MPI_UNDEFINED. */
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank);
int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int MPI_Topo_test(MPI_Comm comm, int *status);
/* Graph and distributed-graph topologies: ordinary communicators (a split of the first nnodes
 * ranks for MPI_Graph_create, a dup for the distributed graphs: the runtime's fault-tolerant
 * creation) that carry the graph; ranks are never reordered, infos' hints are ignored.
 * MPI_Dist_graph_create gathers every rank's edges over comm_old and agrees there before the
 * dup, so every rank gets the communicator or the same error; each rank's neighbours come in
 * the order of the ranks that gave the edges. The neighbourhood collectives are not offered. */
extern const int rt_unweighted, rt_weights_empty;
#define MPI_UNWEIGHTED ((int *)&rt_unweighted)
#define MPI_WEIGHTS_EMPTY ((int *)&rt_weights_empty)
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph);
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                  int *newrank);
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted);
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]);

/* Neighbourhood collectives over a communicator's topology (a grid: for each dimension the
 * rank one step down, then one step up, MPI_PROC_NULL past a non-periodic edge; a graph: its
 * neighbours; a distributed graph: its sources and destinations). One message per edge; a
 * neighbour that failed ends the call with MPIX_ERR_PROC_FAILED, one recognized as failed
 * (MPI_Comm_validate_global) is skipped and its receive block left as it was. The
 * blocking forms are the non-blocking ones waited for; MPI_IN_PLACE is not allowed. In a grid,
 * the block sent one step down arrives as the block from one step up, also in a periodic
 * dimension of 1 or 2 ranks, where one rank is both neighbours; in a graph, the blocks of a
 * repeated edge pair in list order. */
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm);
int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request);
int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request);

/* Derived datatypes: contiguous, vector, hvector, indexed, hindexed, indexed_block, struct,
 * subarray and resized, with MPI_Type_commit / _free / _get_extent(_x) / _get_true_extent(_x) /
 * _size. As in MPI-4.0 §5.1, strides, displacements and lower bounds may be negative, and so
 * may a resized type's extent (its upper bound lb + extent then lies below lb): the buffer
 * pointer points at offset 0 of the first element, element k lies k extents from it, and data
 * may lie before the pointer. Bounds follow MPI (the least lb and the greatest ub of the old
 * types' copies; resized bounds carry into the types made from them); a type whose bounds
 * overflow an MPI_Aint is MPI_ERR_COUNT. Struct displacements are offsets from the buffer
 * pointer (offsetof, or differences of MPI_Get_address
 * results, or absolute addresses used with MPI_BOTTOM as the buffer: point-to-point,
 * MPI_Bcast, the gathers, scatters and all-to-alls, the reductions (reduce, allreduce, scan,
 * exscan; MPI_IN_PLACE where both buffers are MPI_BOTTOM) and MPI_Pack / MPI_Unpack take
 * MPI_BOTTOM so, the reduce-scatters do not; MPI_BOTTOM with a type that places no data at
 * an address, at offset 0 or below, is MPI_ERR_BUFFER). The extent of a struct type is rounded up to a multiple of
 * the alignment of its most aligned basic type (a basic type of n bytes aligns on the largest
 * power of two dividing n), so a type that describes a C struct member by member has the
 * struct's sizeof as its extent (unless a member has bounds set by MPI_Type_create_resized:
 * those bounds are the struct's, unrounded); the other constructors do not round. They are
 * accepted by the
 * point-to-point calls (MPI_Send, MPI_Ssend, MPI_Isend, MPI_Issend, MPI_Recv, MPI_Irecv,
 * MPI_Sendrecv, MPI_Sendrecv_replace, the buffered, ready and persistent forms), MPI_Get_count and every collective: the data is packed
 * before it is sent and unpacked where it is received (a type whose data is one contiguous run
 * moves without a copy; a v-collective's displacements count extents of its type, as in MPI).
 * The reductions (reduce, allreduce, scan, exscan, the reduce-scatters) with a predefined
 * operation take a derived type made of one basic type and combine it element by element
 * (MPI_ERR_TYPE for one that mixes types), with a user operation (MPI_Op_create) any type;
 * the pair types (MPI_DOUBLE_INT, ...) go with MPI_MINLOC / MPI_MAXLOC or a user operation
 * (MPI_ERR_OP for another predefined one), and are accepted wherever derived types are. A bitwise operation on a
 * floating-point type is MPI_ERR_OP. A derived type must be committed before it is used to
 * communicate (MPI_ERR_TYPE otherwise); a freed handle is MPI_ERR_TYPE. */
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype *newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
/* MPI-1's name of MPI_Type_create_struct (removed from MPI-3.0; kept for old programs). */
int MPI_Type_struct(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                    MPI_Datatype *newtype);
int MPI_Get_address(const void *location, MPI_Aint *address);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int MPI_Type_commit(MPI_Datatype *datatype);
int MPI_Type_free(MPI_Datatype *datatype);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent);
/* Decoding: every derived type keeps its constructor's arguments (the datatypes among them as
 * they were, so a type can be decoded after its parts were freed); a derived type that
 * MPI_Type_get_contents returns is a new handle the program frees. Predefined types are
 * MPI_COMBINER_NAMED (MPI_Type_get_contents on one: MPI_ERR_TYPE). */
int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int *array_of_integers,
                          MPI_Aint *array_of_addresses, MPI_Datatype *array_of_datatypes);
/* MPI_Type_dup: committed if the old type is; attributes copied by their copy callbacks. */
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
/* The predefined pair type of a value type and MPI_INT (MPI_FLOAT_INT, ...), or
 * MPI_DATATYPE_NULL. */
int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                             MPI_Datatype *pair_type);
/* Names: a predefined type's is its MPI name until MPI_Type_set_name changes it. */
int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);
/* Attributes on datatypes, as on communicators (their keys apart: a communicator's key on a
 * datatype, or the other way round, is MPI_ERR_KEYVAL). */
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                           void *extra_state);
int MPI_Type_free_keyval(int *type_keyval);
int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val);
int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag);
int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
/* One-sided communication. A window (MPI_Win_create over the program's memory, MPI_Win_allocate
 * over memory the library allocates; collective) exposes each rank's bytes to the others' puts,
 * gets and accumulates, applied by the target's library whether or not the target is inside a
 * call. Epochs: between fences, while holding the target's lock (MPI_Win_lock, _lock_all), or
 * between MPI_Win_start and MPI_Win_complete naming the target (after its MPI_Win_post);
 * elsewhere an operation is MPI_ERR_RMA_SYNC. A put or accumulate is complete at its target when
 * the call ending its epoch (or a flush) returns; MPI_Get, MPI_Get_accumulate, MPI_Fetch_and_op
 * and MPI_Compare_and_swap fill their result buffers before they return. Accumulates (predefined
 * operations, MPI_REPLACE, MPI_NO_OP, on datatypes of one basic type) are atomic with respect to
 * each other at a target. A range outside the target's window is MPI_ERR_RMA_RANGE, at the call
 * when the origin can tell, else at the completing call; the target is never changed by it.
 * Failures: an operation whose target failed completes with MPIX_ERR_PROC_FAILED at the call
 * that completes it; a lock held by a failed rank is released; MPI_Win_start / MPI_Win_wait
 * return MPIX_ERR_PROC_FAILED when a rank they wait for failed; MPI_Win_fence follows
 * MPI_Barrier's rule. Errors go through the error handler of the communicator the window was
 * made on until MPI_Win_set_errhandler gives the window one of its own. Assertions
 * (MPI_MODE_*) are hints and ignored; the memory model is unified (MPI_Win_sync does
 * nothing). A dynamic window (MPI_Win_create_dynamic) reaches the regions each rank attaches,
 * at their addresses (MPI_Get_address at the target). Not provided yet: MPI_Win_allocate_shared
 * and MPI_Win_shared_query. */
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win);
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win);
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
int MPI_Win_detach(MPI_Win win, const void *base);
int MPI_Win_free(MPI_Win *win);
int MPI_Win_get_group(MPI_Win win, MPI_Group *group);
int MPI_Win_set_name(MPI_Win win, const char *win_name);
int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen);
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                          void *extra_state);
int MPI_Win_free_keyval(int *win_keyval);
int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag);
int MPI_Win_delete_attr(MPI_Win win, int win_keyval);
int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win);
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win);
int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void *result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win);
/* The request-based forms complete when the call returns (their data is copied or written by
 * then); completion at the target still waits for the epoch's end or a flush. */
int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request *request);
int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request);
int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, void *result_addr, int result_count,
                        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request *request);
int MPI_Win_fence(int assert, MPI_Win win);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);
int MPI_Win_flush(int rank, MPI_Win win);
int MPI_Win_flush_all(MPI_Win win);
int MPI_Win_flush_local(int rank, MPI_Win win);
int MPI_Win_flush_local_all(MPI_Win win);
int MPI_Win_sync(MPI_Win win);
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_complete(MPI_Win win);
int MPI_Win_wait(MPI_Win win);
int MPI_Win_test(MPI_Win win, int *flag);
int MPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                              MPI_Errhandler *errhandler);
int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
int MPI_Win_call_errhandler(MPI_Win win, int errorcode);
/* MPI_Pack's format is the data without gaps, in the machine's representation (one machine
 * kind per job); a unit too small for the data is MPI_ERR_TRUNCATE. */
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm);
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);
/* The portable "external32" representation (datarep must be "external32"): each basic element
 * big-endian at its external32 size (a C long in 4 bytes: MPI_ERR_CONVERSION beyond 32 bits;
 * long double as IEEE binary128, rounded toward zero when read back). */
int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                      MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position);
int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                        MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype);
int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint *size);

/* Groups. */
int MPI_Group_size(MPI_Group group, int *size);
int MPI_Group_rank(MPI_Group group, int *rank);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int MPI_Group_free(MPI_Group *group);

/* Point-to-point. */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request);
/* Buffered and ready sends are standard sends (the library buffers every message); the buffer
 * of MPI_Buffer_attach is recorded and returned by MPI_Buffer_detach, never used. */
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);
/* Persistent requests: created inactive; MPI_Start starts the operation as MPI_Isend,
 * MPI_Issend or MPI_Irecv would; completion leaves them inactive (not MPI_REQUEST_NULL)
 * until MPI_Request_free. */
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                  MPI_Comm comm, MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request requests[]);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status);
/* MPI 4.0: both halves as one request; its status is the receive's. */
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request *request);
int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
/* Matched probes: the probed message is taken out of matching; MPI_Imrecv completes at once. */
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
              MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request);
/* Cancels a receive that no message has matched yet; a send is never cancelled (it completes
 * as it would have: MPI_Test_cancelled says 0). */
int MPI_Cancel(MPI_Request *request);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);
/* Whether a request is complete, and its status, without freeing it or making it inactive: the
 * call that completes it afterwards gives the same status and error. */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
/* What MPI_Get_elements / MPI_Get_count and MPI_Test_cancelled then read from a status. */
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
int MPI_Type_size(MPI_Datatype datatype, int *size);
/* The basic elements received: MPI_Get_count for a basic type; for a derived type those of
 * the whole elements and of a partial last one (MPI_UNDEFINED if the data ends inside one). */
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]);
int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]);
int MPI_Request_free(MPI_Request *request);
/* Generalized requests: an operation the program runs itself, complete once it calls
 * MPI_Grequest_complete. The completion calls then call query_fn (to fill the status, which
 * starts empty; its return value is the request's error) and free_fn; MPI_Cancel calls
 * cancel_fn with whether it completed; MPI_Request_free before the completion leaves free_fn
 * to MPI_Grequest_complete. The functions may be NULL, and may call the library. */
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                       MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                       MPI_Request *request);
int MPI_Grequest_complete(MPI_Request request);

/* Collectives. */
int MPI_Barrier(MPI_Comm comm);
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm);
/* Built on the runtime's collectives: Allgatherv on an all-gather of blocks padded to the
 * largest count; Alltoallv on an all-reduce of the largest block then an all-to-all of padded
 * blocks (a block whose length is not the receive count is MPI_ERR_COUNT); the reduce-scatters
 * on an all-reduce of the whole vector, of which each rank keeps its block. */
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
/* Alltoallw as Alltoallv, each block with its own datatype and a displacement in bytes; the
 * blocks must match byte for byte of their data (MPI_ERR_COUNT otherwise). */
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/* User reduction operations, accepted by every reduction above and below (see the notes at
 * the top of this file). MPI_Op_free of a predefined operation is MPI_ERR_OP; a NULL function
 * is MPI_ERR_ARG. */
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);
/* inoutbuf = inbuf op inoutbuf on this rank alone: a user operation on any datatype, a
 * predefined one on the basic types. */
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op);
/* Non-blocking collectives: run by the engine, in order (see the notes at the top of
 * this file). The counts and displacement arrays of the vector forms are copied
 * when the call starts (the buffers must stay valid until completion). */
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request);
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request);
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request);
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request);
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request);
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request);
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request);
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
/* Persistent collectives: each MPI_Start starts what the non-blocking call with the same
 * arguments starts (its failure rules too); the init call checks the arguments, copies the
 * count, displacement and datatype arrays and the derived datatypes, sends nothing, and takes
 * an info (a live handle, MPI_INFO_ENV or MPI_INFO_NULL; no hint is used). Unlike MPI, which
 * matches them by the order of the init calls, a start takes its place among the
 * communicator's collectives when it is made: the ranks must start them in the same order.
 * An active request cannot be freed (MPI_ERR_REQUEST); an inactive one can. */
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request);
int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request);
int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request);
int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request);
int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request);
int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request);
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request);

/* Run-through stabilization (the calls of the MPI Forum's 2011 proposal). */
int MPI_Comm_validate_local(MPI_Comm comm, int *num_failed);
int MPI_Comm_validate_global(MPI_Comm comm, int *num_failed);
int MPI_Comm_get_state_local(MPI_Comm comm, int type, int incount, int *outcount,
                             MPI_Rank_info rank_infos[]);
int MPI_Comm_get_state_global(MPI_Comm comm, int type, int incount, int *outcount,
                              MPI_Rank_info rank_infos[]);
int MPI_Comm_get_num_state_local(MPI_Comm comm, int type, int *count);
int MPI_Comm_get_num_state_global(MPI_Comm comm, int type, int *count);
/* The thread's two variants: a validate that returns whether the update brought new failures
 * (any rank MOD_NEW), and one that returns the count of the given type in the new view. */
int MPI_Comm_validate_local_flag(MPI_Comm comm, int *new_failures);
int MPI_Comm_validate_global_flag(MPI_Comm comm, int *new_failures);
int MPI_Comm_validate_local_count(MPI_Comm comm, int type, int *count);
int MPI_Comm_validate_global_count(MPI_Comm comm, int type, int *count);

/* Fault tolerance under the MPI-5 names (the FT chapter of MPI 5.0): the same calls as the
 * MPIX_ ones of <mpi-ext.h>, with the same behaviour (docs/src/semantics.md §3.5, §5), and the
 * error classes MPI_ERR_PROC_FAILED, MPI_ERR_PROC_FAILED_PENDING and MPI_ERR_REVOKED above,
 * equal to MPIX_ERR_PROC_FAILED, _PENDING and MPIX_ERR_REVOKED. */
int MPI_Comm_revoke(MPI_Comm comm);
int MPI_Comm_is_revoked(MPI_Comm comm, int *flag);
int MPI_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int MPI_Comm_agree(MPI_Comm comm, int *flag);
int MPI_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int MPI_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int MPI_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

/* Handle conversions between C and Fortran (MPI 4.1 §19.3.4): the C handles are ints already,
 * so each conversion returns its argument unchanged; they are local, and work before MPI_Init
 * and after MPI_Finalize. A handle converted back is the same handle (a freed or unknown one
 * stays invalid and is reported by the calls that use it). */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_File_c2f(MPI_File file);
MPI_File MPI_File_f2c(MPI_Fint file);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Win_c2f(MPI_Win win);
MPI_Win MPI_Win_f2c(MPI_Fint win);

/* The profiling interface (generated by crates/runthrough-c/tests/header.rs from the
 * declarations above; `RT_UPDATE_README=1 cargo test -p runthrough-c --test header` rewrites it):
 * every function under its PMPI_ name, for a tool that defines an MPI_ function itself and
 * calls the library's through this name. */
int PMPI_Init(int *argc, char ***argv);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int PMPI_Query_thread(int *provided);
int PMPI_Is_thread_main(int *flag);
int PMPI_Initialized(int *flag);
int PMPI_Finalized(int *flag);
int PMPI_Finalize(void);
int PMPI_Abort(MPI_Comm comm, int errorcode);
double PMPI_Wtime(void);
int PMPI_Pcontrol(const int level, ...);
double PMPI_Wtick(void);
int PMPI_Get_processor_name(char *name, int *resultlen);
int PMPI_Get_version(int *version, int *subversion);
int PMPI_Get_library_version(char *version, int *resultlen);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
                                MPI_Errhandler *errhandler);
int PMPI_Errhandler_free(MPI_Errhandler *errhandler);
int PMPI_Error_class(int errorcode, int *errorclass);
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int PMPI_Error_string(int errorcode, char *string, int *resultlen);
int PMPI_Add_error_class(int *errorclass);
int PMPI_Add_error_code(int errorclass, int *errorcode);
int PMPI_Add_error_string(int errorcode, const char *string);
int PMPI_Comm_rank(MPI_Comm comm, int *rank);
int PMPI_Comm_size(MPI_Comm comm, int *size);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request);
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
int PMPI_Comm_free(MPI_Comm *comm);
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state);
int PMPI_Comm_free_keyval(int *comm_keyval);
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state);
int PMPI_Keyval_free(int *keyval);
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int PMPI_Attr_delete(MPI_Comm comm, int keyval);
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag);
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm);
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int PMPI_Comm_remote_size(MPI_Comm comm, int *size);
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]);
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[]);
int PMPI_Comm_get_parent(MPI_Comm *parent);
int PMPI_Comm_disconnect(MPI_Comm *comm);
int PMPI_Info_create(MPI_Info *info);
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info);
int PMPI_Info_set(MPI_Info info, const char *key, const char *value);
int PMPI_Info_delete(MPI_Info info, const char *key);
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag);
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int PMPI_Info_free(MPI_Info *info);
int PMPI_Dims_create(int nnodes, int ndims, int dims[]);
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart);
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank);
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims);
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int PMPI_Topo_test(MPI_Comm comm, int *status);
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph);
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank);
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph);
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted);
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]);
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm);
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request);
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request);
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request);
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request);
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype);
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype);
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype);
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype);
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype);
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int PMPI_Type_struct(int count, const int array_of_blocklengths[],
                     const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                     MPI_Datatype *newtype);
int PMPI_Get_address(const void *location, MPI_Aint *address);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype);
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype);
int PMPI_Type_commit(MPI_Datatype *datatype);
int PMPI_Type_free(MPI_Datatype *datatype);
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent);
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent);
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype);
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner);
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int *array_of_integers, MPI_Aint *array_of_addresses,
                           MPI_Datatype *array_of_datatypes);
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type);
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state);
int PMPI_Type_free_keyval(int *type_keyval);
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val);
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag);
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int PMPI_Free_mem(void *base);
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win);
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
int PMPI_Win_detach(MPI_Win win, const void *base);
int PMPI_Win_free(MPI_Win *win);
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group);
int PMPI_Win_set_name(MPI_Win win, const char *win_name);
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen);
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state);
int PMPI_Win_free_keyval(int *win_keyval);
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag);
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval);
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win);
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win);
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win);
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request);
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request);
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request);
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request);
int PMPI_Win_fence(int assert, MPI_Win win);
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int PMPI_Win_unlock(int rank, MPI_Win win);
int PMPI_Win_lock_all(int assert, MPI_Win win);
int PMPI_Win_unlock_all(MPI_Win win);
int PMPI_Win_flush(int rank, MPI_Win win);
int PMPI_Win_flush_all(MPI_Win win);
int PMPI_Win_flush_local(int rank, MPI_Win win);
int PMPI_Win_flush_local_all(MPI_Win win);
int PMPI_Win_sync(MPI_Win win);
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int PMPI_Win_complete(MPI_Win win);
int PMPI_Win_wait(MPI_Win win);
int PMPI_Win_test(MPI_Win win, int *flag);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler);
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode);
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm);
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm);
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position);
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype);
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size);
int PMPI_Group_size(MPI_Group group, int *size);
int PMPI_Group_rank(MPI_Group group, int *rank);
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]);
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int PMPI_Group_free(MPI_Group *group);
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm);
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status);
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request);
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm);
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm);
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Buffer_attach(void *buffer, int size);
int PMPI_Buffer_detach(void *buffer_addr, int *size);
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request);
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request);
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request);
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request);
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request);
int PMPI_Start(MPI_Request *request);
int PMPI_Startall(int count, MPI_Request requests[]);
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status);
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request);
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status);
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status);
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request);
int PMPI_Cancel(MPI_Request *request);
int PMPI_Test_cancelled(const MPI_Status *status, int *flag);
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
int PMPI_Status_set_cancelled(MPI_Status *status, int flag);
int PMPI_Type_size(MPI_Datatype datatype, int *size);
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
int PMPI_Wait(MPI_Request *request, MPI_Status *status);
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int PMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[]);
int PMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]);
int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status);
int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[]);
int PMPI_Request_free(MPI_Request *request);
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request);
int PMPI_Grequest_complete(MPI_Request request);
int PMPI_Barrier(MPI_Comm comm);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm);
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm);
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm);
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm);
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm);
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm);
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm);
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int PMPI_Op_free(MPI_Op *op);
int PMPI_Op_commutative(MPI_Op op, int *commute);
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op);
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request);
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request);
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request);
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request);
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request);
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request);
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request);
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request);
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request);
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request);
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request);
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request);
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request);
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request);
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request);
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request);
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request);
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request);
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request);
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request);
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request);
int PMPI_Comm_validate_local(MPI_Comm comm, int *num_failed);
int PMPI_Comm_validate_global(MPI_Comm comm, int *num_failed);
int PMPI_Comm_get_state_local(MPI_Comm comm, int type, int incount, int *outcount,
                              MPI_Rank_info rank_infos[]);
int PMPI_Comm_get_state_global(MPI_Comm comm, int type, int incount, int *outcount,
                               MPI_Rank_info rank_infos[]);
int PMPI_Comm_get_num_state_local(MPI_Comm comm, int type, int *count);
int PMPI_Comm_get_num_state_global(MPI_Comm comm, int type, int *count);
int PMPI_Comm_validate_local_flag(MPI_Comm comm, int *new_failures);
int PMPI_Comm_validate_global_flag(MPI_Comm comm, int *new_failures);
int PMPI_Comm_validate_local_count(MPI_Comm comm, int type, int *count);
int PMPI_Comm_validate_global_count(MPI_Comm comm, int type, int *count);
int PMPI_Comm_revoke(MPI_Comm comm);
int PMPI_Comm_is_revoked(MPI_Comm comm, int *flag);
int PMPI_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int PMPI_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
int PMPI_Comm_agree(MPI_Comm comm, int *flag);
int PMPI_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int PMPI_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int PMPI_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);
MPI_Fint PMPI_Comm_c2f(MPI_Comm comm);
MPI_Comm PMPI_Comm_f2c(MPI_Fint comm);
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint PMPI_File_c2f(MPI_File file);
MPI_File PMPI_File_f2c(MPI_Fint file);
MPI_Fint PMPI_Group_c2f(MPI_Group group);
MPI_Group PMPI_Group_f2c(MPI_Fint group);
MPI_Fint PMPI_Info_c2f(MPI_Info info);
MPI_Info PMPI_Info_f2c(MPI_Fint info);
MPI_Fint PMPI_Message_c2f(MPI_Message message);
MPI_Message PMPI_Message_f2c(MPI_Fint message);
MPI_Fint PMPI_Op_c2f(MPI_Op op);
MPI_Op PMPI_Op_f2c(MPI_Fint op);
MPI_Fint PMPI_Request_c2f(MPI_Request request);
MPI_Request PMPI_Request_f2c(MPI_Fint request);
MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype);
MPI_Fint PMPI_Win_c2f(MPI_Win win);
MPI_Win PMPI_Win_f2c(MPI_Fint win);
/* The profiling interface: end. */

#ifdef __cplusplus
}
#endif

/* The ULFM names (MPIX_*), for programs that include only <mpi.h>. */
#include "mpi-ext.h"

#endif /* RUNTHROUGH_MPI_H */

# SPDX-License-Identifier: MIT OR Apache-2.0
"""mpi4py's fault-tolerance methods (the MPI-5 calls of the C library) through a kill, on 4
ranks: rtrun kills rank 1 as it enters its first barrier, once the others have told it they
are past their last collective. The survivors: a blocking receive from rank 1 raises
ERR_PROC_FAILED; a barrier raises ERR_PROC_FAILED; Get_failed is {1}; Agree raises
ERR_PROC_FAILED before Ack_failed and succeeds after it; Ishrink and Shrink give the 3
survivors; after Revoke, a receive raises ERR_REVOKED and Is_revoked is true. Rank 0 prints
"No Errors".

    rtrun -n 4 --kill 1@barrier:1 python ulfm.py
"""

import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD.Dup()
rank, size = comm.Get_rank(), comm.Get_size()
assert size == 4, size


def expect_error(call, error_class):
    try:
        call()
    except MPI.Exception as error:
        assert error.Get_error_class() == error_class, (error.Get_error_class(), str(error))
        return
    raise AssertionError(f"no error, expected class {error_class}")


token = array("i", [0])
if rank == 1:
    for r in (0, 2, 3):
        comm.Recv(token, source=r, tag=1)
    comm.Barrier()
    raise AssertionError("rank 1 should have died entering its first barrier")
comm.Send(token, dest=1, tag=1)
expect_error(lambda: comm.Recv(token, source=1, tag=2), MPI.ERR_PROC_FAILED)
expect_error(comm.Barrier, MPI.ERR_PROC_FAILED)
assert MPI.ERR_PROC_FAILED != MPI.ERR_REVOKED != MPI.ERR_PROC_FAILED_PENDING

failed = comm.Get_failed()
assert failed.Get_size() == 1
assert MPI.Group.Translate_ranks(failed, [0], comm.Get_group()) == [1]
expect_error(lambda: comm.Agree(1), MPI.ERR_PROC_FAILED)
assert comm.Ack_failed() == 1
assert comm.Agree(0b11 if rank != 3 else 0b01) == 0b01

shrunk, request = comm.Ishrink()
request.Wait()
assert shrunk.Get_size() == 3 and shrunk.Get_rank() == (0 if rank == 0 else rank - 1)
assert shrunk.allreduce(1) == 3  # a fresh communicator of survivors: pickled collectives too

if rank == 0:
    comm.Revoke()
else:
    expect_error(lambda: comm.Recv(token, source=0, tag=3), MPI.ERR_REVOKED)
assert comm.Is_revoked()
shrunk2 = comm.Shrink()
assert shrunk2.Get_size() == 3
shrunk2.Barrier()

if rank == 0:
    print("No Errors", flush=True)
sys.exit(0)

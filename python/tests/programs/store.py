# SPDX-License-Identifier: MIT OR Apache-2.0
"""The resilience library from Python (runthrough.Store) through a kill, on 4 ranks: every rank
checkpoints its slot with one copy on the next rank and changes its data; rtrun kills rank 2 as
it enters its first barrier. The survivors shrink and recover: rank 3 owns slots 2 and 3, every
slot as it was checkpointed; a checkpoint on the new owners commits. Rank 0 prints "No Errors".

    rtrun -n 4 --kill 2@barrier:1 python store.py
"""

from mpi4py import MPI

import runthrough

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert size == 4, size


def data(slot, step):
    return bytes((slot * 31 + step * 7 + i) % 256 for i in range(4096))


store = runthrough.Store(comm, copies=1)
assert store.owned() == [rank], store.owned()
store.checkpoint({rank: data(rank, 1)})
try:
    comm.Barrier()  # rank 2 dies entering it
    raise AssertionError("the barrier should fail: rank 2 is dead")
except MPI.Exception as error:
    assert error.Get_error_class() == MPI.ERR_PROC_FAILED, error
shrunk = comm.Shrink()
restored = store.recover(shrunk)
want = [2, 3] if rank == 3 else [rank]
assert sorted(restored) == want, restored
for slot, value in restored.items():
    assert value == data(slot, 1), slot
store.checkpoint({slot: data(slot, 2) for slot in want})
store.free()
if rank == 0:
    print("No Errors")

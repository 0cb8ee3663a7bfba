# SPDX-License-Identifier: MIT OR Apache-2.0
"""The views from Python, with two kills by rtrun (run on 4 ranks):

    rtrun -n 4 --kill 2@validate_global:2 --kill 3@barrier:1 python views.py

Rank 2 dies inside its second validate_global, before its first message of it: the survivors'
call agrees on G = {2} (NULL|NEW). Rank 3 dies as it enters its first barrier (no other rank
calls it) while ranks 0 and 1 wait for a message from it: they get MPI_ERR_PROC_FAILED, then
validate_local shows rank 3 FAILED|NEW in L while G is unchanged, and the next validate_global
makes it NULL|NEW (rank 2 NULL|OLD). Also: SizeError with the entries that fitted, incount=0,
bad queries, and collectives over the survivors after validate_global. Rank 0 prints
"No Errors" at the end; any failed check raises, and the rank exits non-zero.
"""

import sys
from array import array

from mpi4py import MPI

import runthrough as rt

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
assert size == 4, f"run on 4 ranks, not {size}"


def expect_error(call, error_class):
    try:
        call()
    except MPI.Exception as error:
        assert error.Get_error_class() == error_class, (
            f"error class {error.Get_error_class()} ({error}), expected {error_class}"
        )
        return error
    raise AssertionError(f"no error, expected class {error_class}")


# The constants are distinct bits; the aliases are the MPI_RANK_STATE_* names.
bits = [rt.OK, rt.FAILED, rt.NULL, rt.NEW, rt.OLD]
assert all(b and b & (b - 1) == 0 for b in bits) and len(set(bits)) == 5, bits
assert (rt.RANK_STATE_OK, rt.RANK_STATE_MOD_NEW) == (rt.OK, rt.NEW)

# 1. Failure-free: G is empty, every rank OK.
assert rt.validate_global(world) == 0
assert rt.get_num_state_global(world, rt.OK) == 4
assert rt.get_state_global(world, rt.OK) == [rt.RankInfo(r, rt.OK) for r in range(4)]
assert rt.get_state_global(world, rt.NULL) == []
assert rt.get_state_local(world, rt.FAILED | rt.NULL) == []
expect_error(lambda: rt.get_num_state_global(world, 1 << 20), MPI.ERR_ARG)
expect_error(lambda: rt.validate_local(MPI.COMM_NULL), MPI.ERR_COMM)

# 2. Rank 2 dies inside this call; the survivors agree on it.
num_failed = rt.validate_global(world)
assert rank != 2, "rank 2 should have died inside its second validate_global"
assert num_failed == 1, num_failed
assert rt.get_state_global(world, rt.NULL | rt.NEW) == [rt.RankInfo(2, rt.NULL | rt.NEW)]
assert rt.get_state_global(world, 0) == [rt.RankInfo(2, rt.NULL | rt.NEW)]  # no state bit
assert rt.get_state_global(world, rt.OLD) == []
# L is a copy of G: rank 2 NULL|NEW there too; validate_local finds nothing new (OLD now).
assert rt.get_state_local(world, rt.NULL | rt.NEW) == [rt.RankInfo(2, rt.NULL | rt.NEW)]
assert rt.validate_local_flag(world) is False
assert rt.get_state_local(world, rt.NULL | rt.OLD) == [rt.RankInfo(2, rt.NULL | rt.OLD)]
assert rt.get_state_local(world, rt.FAILED) == []

# MPI_ERR_SIZE: incount below the matches writes the first incount entries.
error = expect_error(lambda: rt.get_state_global(world, rt.OK, incount=1), rt.ERR_SIZE)
assert isinstance(error, rt.SizeError)
assert error.entries == [rt.RankInfo(0, rt.OK)] and error.needed == 3, (error.entries, error.needed)
assert rt.get_state_global(world, rt.OK, incount=0) == []
assert rt.get_state_global(world, rt.OK, incount=8) == [rt.RankInfo(r, rt.OK) for r in (0, 1, 3)]

# Collectives run over the survivors after validate_global (a NULL rank contributes nothing).
# The buffer forms: mpi4py's pickled allreduce / reduce run over point-to-point messages, where
# a NULL rank acts as MPI.PROC_NULL (docs/src/semantics.md §3.1), so they would combine a None, and
# its pickled gathers read the NULL rank's untouched count (docs/src/python.md).
total = array("i", [0])
world.Allreduce(array("i", [rank]), total, op=MPI.SUM)
assert total[0] == 0 + 1 + 3, total[0]
slots = array("i", [-1] * 4)
world.Allgather(array("i", [rank * 10]), slots)
assert slots.tolist() == [0, 10, -1, 30], slots  # rank 2's slot is left untouched

# 3. Rank 3 dies as it enters a barrier nobody else calls; 0 and 1 wait for it.
# Rank 3 enters it only once 0 and 1 have left the Allgather (a pending collective fails
# once a death is known, docs/src/semantics.md §3.3): they tell it so.
if rank == 3:
    for r in (0, 1):
        world.Recv([bytearray(1), MPI.BYTE], source=r, tag=98)
    world.Barrier()
    raise AssertionError("rank 3 should have died entering its first barrier")
world.Send([bytearray(1), MPI.BYTE], dest=3, tag=98)
expect_error(lambda: world.Recv([bytearray(4), MPI.BYTE], source=3, tag=99), MPI.ERR_PROC_FAILED)
assert rt.validate_local(world) == 2
assert rt.get_state_local(world, rt.FAILED | rt.NEW) == [rt.RankInfo(3, rt.FAILED | rt.NEW)]
assert rt.get_state_local(world, rt.NULL) == [rt.RankInfo(2, rt.NULL | rt.OLD)]
assert rt.get_num_state_global(world, rt.NULL) == 1  # G is unchanged until validate_global
assert rt.get_num_state_local(world, rt.OK) == 2
# A collective is disabled by the unrecognized failure until validate_global.
expect_error(lambda: world.Barrier(), MPI.ERR_PROC_FAILED)

assert rt.validate_global_count(world, rt.NULL | rt.NEW) == 1
assert rt.get_state_global(world, 0) == [
    rt.RankInfo(2, rt.NULL | rt.OLD),
    rt.RankInfo(3, rt.NULL | rt.NEW),
]
assert rt.get_num_state_global(world, rt.FAILED | rt.NULL) == 2
world.Allreduce(array("i", [1]), total, op=MPI.SUM)
assert total[0] == 2, total[0]
assert rt.validate_global_flag(world) is False  # nothing new since

if rank == 0:
    print("No Errors", flush=True)
sys.exit(0)

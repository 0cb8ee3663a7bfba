# SPDX-License-Identifier: MIT OR Apache-2.0
"""mpi4py's basic paths on runthrough, failure-free, on any number of ranks (1, 2, 4):
pickled and buffer point-to-point and collectives, MPI.IN_PLACE, Dup / Split / Free,
attributes, error handlers, Wtime, Get_processor_name, the MPI-5 fault-tolerance calls on a
communicator without failures, non-blocking collectives, matched probes, cancelled receives and
user reduction operations, one-sided windows; and the parts not offered (MPI-IO, sessions) raise
NotImplementedError at once. Every check raises on a wrong value; rank 0 prints "No Errors"."""

import sys
from array import array

from mpi4py import MPI

import runthrough as rt

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

# Environment.
assert MPI.Is_initialized() and not MPI.Is_finalized()
assert isinstance(MPI.Get_processor_name(), str) and MPI.Get_processor_name()
t0 = MPI.Wtime()
assert t0 > 0 and MPI.Wtick() > 0
assert MPI.Get_version() >= (4, 0)
assert "runthrough" in MPI.Get_library_version()
assert comm.Get_errhandler() == MPI.ERRORS_RETURN  # set by mpi4py at start-up
assert not comm.Is_inter() and comm.Is_intra()
assert comm.Get_attr(MPI.TAG_UB) >= 32767

# Point-to-point: pickled and buffers.
right, left = (rank + 1) % size, (rank - 1) % size
assert comm.sendrecv({"from": rank}, dest=right, source=left) == {"from": left}
if size > 1:
    if rank == 0:
        comm.send(["hello", 1], dest=1, tag=7)
        data = array("d", [1.5, 2.5, 3.5])
        comm.Send(data, dest=1, tag=8)
        assert comm.recv(source=MPI.ANY_SOURCE, tag=9) == "back"
    elif rank == 1:
        status = MPI.Status()
        assert comm.recv(source=0, tag=7, status=status) == ["hello", 1]
        assert status.Get_source() == 0 and status.Get_tag() == 7
        data = array("d", [0.0] * 3)
        comm.Recv(data, source=0, tag=8, status=status)
        assert data.tolist() == [1.5, 2.5, 3.5] and status.Get_count(MPI.DOUBLE) == 3
        comm.send("back", dest=0, tag=9)
request = comm.isend(rank * 10, dest=right, tag=11)
assert comm.irecv(source=left, tag=11).wait() == left * 10
request.wait()

# Collectives: pickled.
comm.Barrier()
assert comm.bcast({"root": 0} if rank == 0 else None, root=0) == {"root": 0}
assert comm.allreduce(rank) == size * (size - 1) // 2
assert comm.allreduce(rank, op=MPI.MAX) == size - 1
assert comm.reduce(1, root=0) == (size if rank == 0 else None)
assert comm.allgather(rank) == list(range(size))
assert comm.gather(rank * 2, root=0) == ([2 * r for r in range(size)] if rank == 0 else None)
assert comm.scatter([r * 3 for r in range(size)] if rank == 0 else None, root=0) == rank * 3
assert comm.alltoall([(rank, r) for r in range(size)]) == [(r, rank) for r in range(size)]

# Collectives: buffers, MPI.IN_PLACE.
send, recv = array("i", [rank, 1]), array("i", [0, 0])
comm.Allreduce(send, recv, op=MPI.SUM)
assert recv.tolist() == [size * (size - 1) // 2, size]
inplace = array("d", [float(rank), 2.0])
comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.MAX)
assert inplace.tolist() == [float(size - 1), 2.0]
buf = array("i", [42 if rank == 0 else -1] * 3)
comm.Bcast(buf, root=0)
assert buf.tolist() == [42] * 3
gathered = array("i", [0] * size)
comm.Allgather(array("i", [rank]), gathered)
assert gathered.tolist() == list(range(size))
scanned = array("i", [0])
comm.Scan(array("i", [1]), scanned)
assert scanned[0] == rank + 1

# Communicators, attributes, error handlers.
dup = comm.Dup()
assert dup.Get_size() == size and dup.Get_errhandler() == MPI.ERRORS_RETURN
key = MPI.Comm.Create_keyval(copy_fn=lambda c, k, v: v + 1)
dup.Set_attr(key, 5)
assert dup.Get_attr(key) == 5
dup2 = dup.Dup()
assert dup2.Get_attr(key) == 6
dup2.Delete_attr(key)
assert dup2.Get_attr(key) is None
dup2.Free()
half = comm.Split(rank % 2, rank)
assert half.Get_size() == (size + 1 - rank % 2) // 2
half.Free()
dup.Free()
MPI.Comm.Free_keyval(key)
try:
    comm.Send(array("i", [0]), dest=size + 5)
    raise AssertionError("a send to a rank outside the communicator succeeded")
except MPI.Exception as error:
    assert error.Get_error_class() == MPI.ERR_RANK, error

# The MPI-5 fault-tolerance calls, failure-free.
ft = comm.Dup()
assert not ft.Is_revoked()
assert ft.Agree(0b101 if rank == 0 else 0b111) == 0b101
assert ft.Get_failed().Get_size() == 0
assert ft.Ack_failed() == 0
shrunk = ft.Shrink()
assert shrunk.Get_size() == size
shrunk.Free()
shrunk, request = ft.Ishrink()
request.Wait()
assert shrunk.Get_size() == size
shrunk.Free()
flag = array("i", [0b110 if rank == 0 else 0b011])
ft.Iagree(flag).Wait()
assert flag[0] == (0b010 if size > 1 else 0b110), flag[0]
assert rt.validate_global(ft) == 0 and rt.validate_local(ft) == 0
ft.Revoke()
assert ft.Is_revoked()
ft.Free()

# Non-blocking collectives (two pending at once), matched probes, cancelled receives, user
# reduction operations (mpi4py finds these calls in the library when it is built).
# (Send buffers named: mpi4py keeps no reference to a non-blocking collective's send buffer, and
# the library reads it until the request completes.)
mine, total = array("i", [rank + 1]), array("i", [0])
word = array("i", [41 if rank == 0 else 0])
requests = [
    comm.Iallreduce(mine, total, op=MPI.SUM),
    comm.Ibcast(word, root=0),
]
MPI.Request.Waitall(requests)
assert total[0] == size * (size + 1) // 2 and word[0] == 41, (total[0], word[0])
comm.send(("probed", rank), dest=right, tag=21)
message = comm.mprobe(source=left, tag=21)
assert message.recv() == ("probed", left)
pending = comm.Irecv(array("i", [0]), source=left, tag=22)
pending.Cancel()
status = MPI.Status()
pending.Wait(status)
assert status.Is_cancelled()


def concatenate(a, b, datatype):
    # Decimal concatenation, associative, not commutative: (value, 10 ** digits) pairs, the
    # left operand (lower ranks) in `a`, the result in `b`.
    a, b = memoryview(a).cast("i"), memoryview(b).cast("i")
    b[0], b[1] = a[0] * b[1] + b[0], a[1] * b[1]


concat = MPI.Op.Create(concatenate, commute=False)
assert not concat.Is_commutative()
ordered = array("i", [0, 0])
comm.Allreduce(array("i", [rank + 1, 10]), ordered, op=concat)
want = int("".join(str(r + 1) for r in range(size)))
assert ordered[0] == want, (ordered[0], want)
concat.Free()

# One-sided windows: every rank adds rank + 1 to rank 0's counter between fences, and puts
# its rank into its slot of the next rank's array.
window = MPI.Win.Allocate(8 * (size + 1), disp_unit=8, comm=comm)
window.Fence()
window.Accumulate(array("q", [rank + 1]), 0, target=(0, 1, MPI.INT64_T), op=MPI.SUM)
window.Put(array("q", [rank]), (rank + 1) % size, target=(1 + rank, 1, MPI.INT64_T))
window.Fence()
mine = array("q", bytes(window.tomemory()))
if rank == 0:
    assert mine[0] == size * (size + 1) // 2, mine[0]
left = (rank + size - 1) % size
assert mine[1 + left] == left, (mine, left)
window.Free()

# Not offered: MPI-IO and sessions raise NotImplementedError at once.
for name, call in [
    ("MPI.File.Open", lambda: MPI.File.Open(comm, "/nonexistent/runthrough-test")),
    ("MPI.Session.Init", lambda: MPI.Session.Init()),
]:
    try:
        call()
        raise AssertionError(f"{name} did not fail")
    except NotImplementedError:
        pass

comm.Barrier()
if rank == 0:
    print("No Errors", flush=True)
sys.exit(0)

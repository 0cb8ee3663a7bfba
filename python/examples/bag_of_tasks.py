# SPDX-License-Identifier: MIT OR Apache-2.0
"""A fault-tolerant bag of tasks in Python: mpi4py for the messages, runthrough's package for
run-through stabilization (docs/src/semantics.md §2, §3.2).

    target/release/rtrun -n 6 --strict-faults --kill 2@call:9 --kill 4@call:11 \\
        target/py/venv/bin/python python/examples/bag_of_tasks.py --tasks 200

Rank 0 is the master; it hands out tasks one at a time and collects results with a wildcard
receive. When a worker dies, the master's blocking MPI.ANY_SOURCE receive raises
MPI_ERR_PROC_FAILED (the failure is known but not acknowledged); the master calls
runthrough.validate_local, which acknowledges it, reads the newly failed workers from the local
view (FAILED|NEW), puts their tasks back in the bag and goes on. At the end every survivor calls
runthrough.validate_global, and the master checks that G holds every worker it saw die,
and that the sum of the results equals the one computed without MPI. Exit status 0 only if both
hold.
"""

import argparse
import sys
import time

from mpi4py import MPI

import runthrough as rt

TASK, RESULT, STOP = 1, 2, 3


def work(task: int) -> int:
    """The task's result: deterministic, a little arithmetic."""
    value = task
    for _ in range(2000):
        value = (value * 1103515245 + 12345) % 2147483648
    return value


def master(comm, tasks: int) -> int:
    start = time.monotonic()
    size = comm.Get_size()
    bag = list(range(tasks - 1, -1, -1))  # pop() hands out task 0 first
    in_flight = {}  # worker -> task
    alive = set(range(1, size))
    results = {}
    per_worker = {w: 0 for w in alive}
    dead_seen = set()

    def lost(workers, why):
        back = []
        for worker in sorted(workers):
            alive.discard(worker)
            dead_seen.add(worker)
            if worker in in_flight:
                task = in_flight.pop(worker)
                if task not in results:
                    bag.append(task)
                    back.append(task)
        print(
            f"master: after {len(results)} results, {why}: workers {sorted(workers)} failed; "
            f"tasks {back} back in the bag",
            flush=True,
        )

    def acknowledge(why):
        rt.validate_local(comm)
        newly = {info.rank for info in rt.get_state_local(comm, rt.FAILED | rt.NEW)}
        lost(newly, why)

    def hand_out(worker):
        while bag and worker in alive:
            task = bag.pop()
            try:
                comm.send(task, dest=worker, tag=TASK)
                in_flight[worker] = task
                return
            except MPI.Exception as error:
                if error.Get_error_class() != MPI.ERR_PROC_FAILED:
                    raise
                bag.append(task)
                acknowledge(f"send to {worker}: {error.Get_error_string()}")

    for worker in sorted(alive):
        hand_out(worker)
    status = MPI.Status()
    while len(results) < tasks:
        if not alive:
            print("master: no worker left", flush=True)
            return 2
        try:
            task, value = comm.recv(source=MPI.ANY_SOURCE, tag=RESULT, status=status)
        except MPI.Exception as error:
            if error.Get_error_class() != MPI.ERR_PROC_FAILED:
                raise
            acknowledge("MPI_ERR_PROC_FAILED from the wildcard receive")
            for worker in sorted(alive - set(in_flight)):
                hand_out(worker)
            continue
        worker = status.Get_source()
        if task not in results:
            results[task] = value
            per_worker[worker] += 1
        in_flight.pop(worker, None)
        hand_out(worker)
    for worker in sorted(alive):
        try:
            comm.send(None, dest=worker, tag=STOP)
        except MPI.Exception as error:
            if error.Get_error_class() != MPI.ERR_PROC_FAILED:
                raise
            dead_seen.add(worker)
    num_failed = rt.validate_global(comm)
    agreed = {info.rank for info in rt.get_state_global(comm, rt.NULL)}
    total = sum(results.values()) % 2**64
    expected = sum(work(t) for t in range(tasks)) % 2**64
    print(
        f"master: validate_global: {num_failed} failed, G = {sorted(agreed)}; "
        f"failures the master saw: {sorted(dead_seen)}",
        flush=True,
    )
    print(f"master: results per worker {per_worker}; {time.monotonic() - start:.3f} s", flush=True)
    print(f"master: checksum {total:#x}, without MPI {expected:#x}: "
          f"{'equal' if total == expected else 'DIFFERENT'}", flush=True)
    # G holds every failure the master saw (validity), and perhaps a worker that died after
    # its last result, unseen.
    return 0 if total == expected and dead_seen <= agreed else 1


def worker(comm) -> int:
    status = MPI.Status()
    while True:
        task = comm.recv(source=0, tag=MPI.ANY_TAG, status=status)
        if status.Get_tag() == STOP:
            break
        comm.send((task, work(task)), dest=0, tag=RESULT)
    rt.validate_global(comm)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD.Dup()  # inherits MPI.ERRORS_RETURN from COMM_WORLD
    if comm.Get_size() < 2:
        print("run on at least 2 ranks", file=sys.stderr)
        return 2
    return master(comm, args.tasks) if comm.Get_rank() == 0 else worker(comm)


if __name__ == "__main__":
    sys.exit(main())

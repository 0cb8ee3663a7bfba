# SPDX-License-Identifier: MIT OR Apache-2.0
"""The run-through stabilization calls of runthrough on mpi4py communicators.

Each function calls the C function of the same name in runthrough's C library
(``MPI_Comm_validate_local`` and so on), through cffi in ABI mode, on the communicator's C
handle. mpi4py must be built against that library (``MPICC=target/release/rtcc``): this
module uses the very library mpi4py loaded, so both see the same communicators.

Semantics (docs/src/semantics.md §2, §5): every communicator keeps a local view L of the failures
this rank knows (updated by :func:`validate_local`) and a global view G agreed by all survivors
(updated by :func:`validate_global`, collective and fault-tolerant). Each rank has a state in a
view (``OK``; ``FAILED``: in L, not in G; ``NULL``: in G) and each failed rank a modifier (``NEW``:
entered the view at its latest update; ``OLD``). A query is an OR of those bits; one without a
state bit means ``FAILED | NULL``.

Errors raise ``mpi4py.MPI.Exception`` carrying the library's error class (so the
communicator's error handler must return errors: mpi4py sets ``MPI.ERRORS_RETURN`` on the
predefined communicators, and new ones inherit their parent's). ``MPI_ERR_SIZE`` raises
:class:`SizeError`, with the entries that fitted.
"""

from __future__ import annotations

import os
from typing import List, NamedTuple, Optional

from cffi import FFI
from mpi4py import MPI

__all__ = [
    "OK",
    "FAILED",
    "NULL",
    "NEW",
    "OLD",
    "RANK_STATE_OK",
    "RANK_STATE_FAILED",
    "RANK_STATE_NULL",
    "RANK_STATE_MOD_NEW",
    "RANK_STATE_MOD_OLD",
    "ERR_SIZE",
    "RankInfo",
    "SizeError",
    "library_path",
    "validate_local",
    "validate_global",
    "validate_local_flag",
    "validate_global_flag",
    "validate_local_count",
    "validate_global_count",
    "get_num_state_local",
    "get_num_state_global",
    "get_state_local",
    "get_state_global",
    "ERR_NOT_COMMITTED",
    "ERR_DATA_LOST",
    "Store",
]

_CDEF = """
typedef int MPI_Comm;
typedef struct MPI_Rank_info { int rank; int state; } MPI_Rank_info;

#define MPI_RANK_STATE_OK 1
#define MPI_RANK_STATE_FAILED 2
#define MPI_RANK_STATE_NULL 4
#define MPI_RANK_STATE_MOD_NEW 8
#define MPI_RANK_STATE_MOD_OLD 16
#define MPI_ERR_SIZE 51

int MPI_Comm_validate_local(MPI_Comm comm, int *num_failed);
int MPI_Comm_validate_global(MPI_Comm comm, int *num_failed);
int MPI_Comm_get_state_local(MPI_Comm comm, int type, int incount, int *outcount,
                             MPI_Rank_info rank_infos[]);
int MPI_Comm_get_state_global(MPI_Comm comm, int type, int incount, int *outcount,
                              MPI_Rank_info rank_infos[]);
int MPI_Comm_get_num_state_local(MPI_Comm comm, int type, int *count);
int MPI_Comm_get_num_state_global(MPI_Comm comm, int type, int *count);
int MPI_Comm_validate_local_flag(MPI_Comm comm, int *new_failures);
int MPI_Comm_validate_global_flag(MPI_Comm comm, int *new_failures);
int MPI_Comm_validate_local_count(MPI_Comm comm, int type, int *count);
int MPI_Comm_validate_global_count(MPI_Comm comm, int type, int *count);

typedef int RTX_Store;
typedef long MPI_Aint;
#define RTX_ERR_NOT_COMMITTED 80
#define RTX_ERR_DATA_LOST 81
int RTX_Store_create(MPI_Comm comm, int copies, RTX_Store *store);
int RTX_Store_free(RTX_Store *store);
int RTX_Store_owned(RTX_Store store, int max, int *slots, int *count);
int RTX_Store_checkpoint(RTX_Store store, int count, const int slots[], const void *const data[],
                         const MPI_Aint sizes[]);
int RTX_Store_recover(RTX_Store store, MPI_Comm comm);
int RTX_Store_join(MPI_Comm comm, int copies, RTX_Store *store);
int RTX_Store_restored(RTX_Store store, int slot, void *buf, MPI_Aint size, MPI_Aint *length);
"""

_LIBRARY_NAME = "librunthrough_c.so"


def _loaded_library() -> str:
    """The path of the runthrough C library this process has mapped (the one mpi4py uses)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(None, 5)[-1] if line.strip() else ""
                if os.path.basename(path) == _LIBRARY_NAME:
                    return path
    except OSError as error:  # not Linux: nothing to read the mappings from
        raise ImportError(f"runthrough: cannot read /proc/self/maps: {error}") from error
    raise ImportError(
        "runthrough: mpi4py is not linked with runthrough's C library "
        f"({_LIBRARY_NAME} is not loaded in this process): build mpi4py with "
        "MPICC=target/release/rtcc (see python/README.md and docs/src/semantics.md §5)"
    )


_ffi = FFI()
_ffi.cdef(_CDEF)
library_path: str = _loaded_library()
_lib = _ffi.dlopen(library_path)

RANK_STATE_OK: int = _lib.MPI_RANK_STATE_OK
RANK_STATE_FAILED: int = _lib.MPI_RANK_STATE_FAILED
RANK_STATE_NULL: int = _lib.MPI_RANK_STATE_NULL
RANK_STATE_MOD_NEW: int = _lib.MPI_RANK_STATE_MOD_NEW
RANK_STATE_MOD_OLD: int = _lib.MPI_RANK_STATE_MOD_OLD
OK, FAILED, NULL, NEW, OLD = (
    RANK_STATE_OK,
    RANK_STATE_FAILED,
    RANK_STATE_NULL,
    RANK_STATE_MOD_NEW,
    RANK_STATE_MOD_OLD,
)
ERR_SIZE: int = _lib.MPI_ERR_SIZE
ERR_NOT_COMMITTED: int = _lib.RTX_ERR_NOT_COMMITTED
ERR_DATA_LOST: int = _lib.RTX_ERR_DATA_LOST


class RankInfo(NamedTuple):
    """One rank of a view and its state (a state bit | a modifier bit for a failed rank)."""

    rank: int
    state: int


class SizeError(MPI.Exception):
    """``MPI_ERR_SIZE`` from an accessor: ``incount`` was below the number of matches.

    ``entries`` holds the first ``incount`` matches (as the C call writes them) and ``needed``
    the number of matches."""

    def __init__(self, ierr: int, entries: List[RankInfo], needed: int):
        super().__init__(ierr)
        self.entries = entries
        self.needed = needed


def _handle(comm) -> int:
    """The C handle of an mpi4py communicator (or a handle given as an int)."""
    if isinstance(comm, int):
        return comm
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"expected an mpi4py communicator, got {type(comm).__name__}")
    return MPI._handleof(comm)


def _check(ierr: int) -> None:
    if ierr != 0:
        raise MPI.Exception(ierr)


def _out_int(call, comm, *args) -> int:
    value = _ffi.new("int *")
    _check(call(_handle(comm), *args, value))
    return value[0]


def validate_local(comm) -> int:
    """L := G ∪ the failures this rank's detector knows now; returns |L|. Local; it also
    acknowledges those failures for ``MPI.ANY_SOURCE`` receives."""
    return _out_int(_lib.MPI_Comm_validate_local, comm)


def validate_global(comm) -> int:
    """All survivors agree on the failed ranks: G := the agreed set, L := G; returns |G|.
    Collective over the OK ranks of G, fault-tolerant; it enables collectives again."""
    return _out_int(_lib.MPI_Comm_validate_global, comm)


def validate_local_flag(comm) -> bool:
    """:func:`validate_local`, returning whether any rank is NEW in the new L."""
    return bool(_out_int(_lib.MPI_Comm_validate_local_flag, comm))


def validate_global_flag(comm) -> bool:
    """:func:`validate_global`, returning whether any rank is NEW in the new G."""
    return bool(_out_int(_lib.MPI_Comm_validate_global_flag, comm))


def validate_local_count(comm, query: int) -> int:
    """:func:`validate_local`, returning how many ranks of the new L match ``query``."""
    return _out_int(_lib.MPI_Comm_validate_local_count, comm, query)


def validate_global_count(comm, query: int) -> int:
    """:func:`validate_global`, returning how many ranks of the new G match ``query``."""
    return _out_int(_lib.MPI_Comm_validate_global_count, comm, query)


def get_num_state_local(comm, query: int) -> int:
    """How many ranks of L (as the last update left it) match ``query``."""
    return _out_int(_lib.MPI_Comm_get_num_state_local, comm, query)


def get_num_state_global(comm, query: int) -> int:
    """How many ranks of G (as the last update left it) match ``query``."""
    return _out_int(_lib.MPI_Comm_get_num_state_global, comm, query)


def _get_state(call, count_call, comm, query: int, incount: Optional[int]) -> List[RankInfo]:
    handle = _handle(comm)
    if incount is None:
        incount = _out_int(count_call, handle, query)
    if incount < 0:
        raise ValueError(f"incount {incount} is negative")
    infos = _ffi.new("MPI_Rank_info[]", max(incount, 1))
    outcount = _ffi.new("int *")
    ierr = call(handle, query, incount, outcount, infos if incount else _ffi.NULL)
    entries = [RankInfo(infos[i].rank, infos[i].state) for i in range(outcount[0] if incount else 0)]
    if ierr == ERR_SIZE:
        raise SizeError(ierr, entries, _out_int(count_call, handle, query))
    _check(ierr)
    return entries


def get_state_local(comm, query: int, incount: Optional[int] = None) -> List[RankInfo]:
    """The ranks of L that match ``query``, in rank order. With ``incount`` given, as the C
    call: at most that many entries, and :class:`SizeError` (with the first ``incount``) when
    more match; ``incount=0`` returns []."""
    return _get_state(
        _lib.MPI_Comm_get_state_local, _lib.MPI_Comm_get_num_state_local, comm, query, incount
    )


def get_state_global(comm, query: int, incount: Optional[int] = None) -> List[RankInfo]:
    """The ranks of G that match ``query``, in rank order (see :func:`get_state_local`)."""
    return _get_state(
        _lib.MPI_Comm_get_state_global, _lib.MPI_Comm_get_num_state_global, comm, query, incount
    )


class Store:
    """In-memory checkpoints of the application's data with copies on other ranks (the C
    library's ``RTX_Store_*``; the guide's "Recovering the application's data").

    The data is cut into slots, one per rank of ``comm`` (slot i first owned by rank i), each a
    ``bytes``. :meth:`checkpoint` (collective) sends every slot this rank owns to the next
    ``copies`` ranks, and all ranks agree whether every copy arrived: committed everywhere at
    once, or ``MPI.Exception`` (class :data:`ERR_NOT_COMMITTED` or ``MPI.ERR_PROC_FAILED``) at
    every rank, the previous checkpoint standing. After a failure, repair the communicator
    (``comm.Shrink()``, or one with replacement or spare ranks) and call :meth:`recover` at the
    survivors and :meth:`join` at the newcomers: every rank gets back the slots it owns now, as
    they were at the last committed checkpoint; :data:`ERR_DATA_LOST` at every rank when a slot's
    owner and every copy's holder died."""

    def __init__(self, comm, copies: int = 1):
        """A store of ``comm``'s slots with ``copies`` copies of each. Collective."""
        handle = _ffi.new("RTX_Store *")
        _check(_lib.RTX_Store_create(_handle(comm), copies, handle))
        self._store = handle[0]

    @classmethod
    def join(cls, comm, copies: int = 1) -> "Store":
        """A newcomer's part of :meth:`recover` on the repaired ``comm``: a store holding this
        rank's slots of the restored checkpoint (read them with :meth:`restored`)."""
        handle = _ffi.new("RTX_Store *")
        _check(_lib.RTX_Store_join(_handle(comm), copies, handle))
        store = cls.__new__(cls)
        store._store = handle[0]
        return store

    def owned(self) -> List[int]:
        """The slots this rank owns now, ascending."""
        count = _ffi.new("int *")
        _check(_lib.RTX_Store_owned(self._store, 0, _ffi.NULL, count))
        slots = _ffi.new("int[]", max(count[0], 1))
        _check(_lib.RTX_Store_owned(self._store, count[0], slots, count))
        return list(slots[0 : count[0]])

    def checkpoint(self, slots: dict) -> None:
        """Checkpoints this rank's slots: ``slots`` maps each slot of :meth:`owned` to its
        bytes. Collective."""
        numbers = list(slots)
        buffers = [_ffi.from_buffer(bytes(slots[n])) for n in numbers]
        data = _ffi.new("void *[]", [_ffi.cast("void *", b) for b in buffers] or [_ffi.NULL])
        sizes = _ffi.new("MPI_Aint[]", [len(b) for b in buffers] or [0])
        ints = _ffi.new("int[]", numbers or [0])
        _check(_lib.RTX_Store_checkpoint(self._store, len(numbers), ints, data, sizes))

    def recover(self, comm) -> dict:
        """At a survivor: restores the slots over the repaired ``comm`` (whose newcomers call
        :meth:`join`); returns this rank's slots as they were at the last committed
        checkpoint. Collective."""
        _check(_lib.RTX_Store_recover(self._store, _handle(comm)))
        return self.restored()

    def restored(self) -> dict:
        """The slots the last :meth:`recover` or :meth:`join` gave this rank, by number."""
        out = {}
        length = _ffi.new("MPI_Aint *")
        for slot in self.owned():
            _check(_lib.RTX_Store_restored(self._store, slot, _ffi.NULL, 0, length))
            buf = _ffi.new("char[]", max(length[0], 1))
            _check(_lib.RTX_Store_restored(self._store, slot, buf, length[0], length))
            out[slot] = bytes(_ffi.buffer(buf, length[0]))
        return out

    def free(self) -> None:
        """Frees the store (local)."""
        handle = _ffi.new("RTX_Store *", self._store)
        _check(_lib.RTX_Store_free(handle))

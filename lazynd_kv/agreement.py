"""Checking that every worker is about to run the same collective operation.

MPI matches collectives by their order alone: if rank 0 reduces key ``'a'`` while
rank 1 reduces key ``'b'``, MPI sums the two buffers (or mismatched parts of them)
and both ranks carry on with garbage.  So before each collective the store runs a
tiny one of its own: every worker contributes a 62-bit digest ``h`` of a text that
names the collective (its kind, keys, dtype and size), as the pair ``(h, -h)``
reduced by ``MAX``; the workers agree exactly when ``max(h) == min(h)``.  The pair
is 16 bytes, and since it completes only when every worker has joined, it is also
the moment the data can flow: it is waited for patiently (see
:meth:`lazynd_kv.watchdog.Watchdog.wait_patiently`), the data at full speed.

On a disagreement every worker learns it from the same reduction, gathers the
others' texts, and raises the same :class:`~lazynd.errors.LazyNDError` naming what
each rank was about to run; no collective runs on that store after it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from lazynd.errors import LazyNDError

from .watchdog import Watchdog

MAX_TEXT_BYTES = 400  # of each rank's description in the error message


def digest(text: str) -> int:
    """A stable 62-bit digest of ``text`` (Python's ``hash`` differs between processes).

    Examples
    --------
    >>> digest("the barrier") == digest("the barrier") != digest("the Allreduce of key 0")
    True
    """
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 2


class Agreement:
    """The check run before each collective of one store on ``comm``."""

    def __init__(self, mpi: Any, comm: Any, watchdog: Watchdog, store: str) -> None:
        self._mpi = mpi
        self._comm = comm
        self._watchdog = watchdog
        self._store = store
        self.failure: str | None = None  # the message, once the workers have disagreed

    def check(self, what: str, detail: str = "", bounded: bool = True) -> None:
        """Wait until every worker is about to run ``what`` (with ``detail``: dtype, sizes); raise if not.

        ``bounded=False`` waits for the other workers without the watchdog's timeout.
        """
        if self.failure is not None:
            raise LazyNDError(self.failure)
        description = f"{what} ({detail})" if detail else what
        code = digest(description)
        votes = np.array([code, -code], np.int64)
        request = self._comm.Iallreduce(self._mpi.IN_PLACE, votes, op=self._mpi.MAX)
        self._watchdog.wait_patiently([request], what, bounded)
        if votes[0] == -votes[1]:
            return
        self.failure = self._message(self._gather(description, what))
        raise LazyNDError(self.failure)

    def _gather(self, text: str, what: str) -> list[str]:
        """Every rank's ``text`` (cut to ``MAX_TEXT_BYTES``), in rank order."""
        mpi, comm = self._mpi, self._comm
        data = np.frombuffer(text.encode()[:MAX_TEXT_BYTES], np.uint8)
        sizes = np.zeros(comm.Get_size(), np.int64)
        self._watchdog.wait_patiently([comm.Iallgather(np.array([data.size], np.int64), sizes)], what)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        gathered = np.zeros(int(sizes.sum()), np.uint8)
        counts = [int(s) for s in sizes]
        request = comm.Iallgatherv([data, mpi.BYTE], [gathered, (counts, [int(o) for o in offsets]), mpi.BYTE])
        self._watchdog.wait_requests([request], what)
        raw = gathered.tobytes()
        return [raw[o : o + s].decode(errors="replace") for o, s in zip(offsets, counts, strict=True)]

    def _message(self, texts: list[str]) -> str:
        ranks_of: dict[str, list[int]] = {}
        for rank, text in enumerate(texts):
            ranks_of.setdefault(text, []).append(rank)
        parts = []
        for text, ranks in ranks_of.items():
            who = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {', '.join(map(str, ranks))}"
            parts.append(f"{who} {'is' if len(ranks) == 1 else 'are'} about to run {text}")
        return (
            f"KVStore {self._store}: the workers disagree on the next collective operation: {'; '.join(parts)}. "
            "Every worker must init and push the same keys, with the same shapes and dtypes, in the same "
            "order (the order of the keys within one call does not matter); this store can no longer be used"
        )

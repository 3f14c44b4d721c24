"""An out-of-place MPI Allreduce that writes the sum without first copying the input.

MPICH's ``Allreduce(send, recv)`` copies ``send`` into ``recv`` and then runs the
in-place algorithm: for 16 MB on 2 ranks that copy costs about as much as half
the reduction (7.2 ms against 4.5 ms in place).  A KVStore cannot reduce in place
in the pushed array (it belongs to the caller), so this module folds the copy
into the reduction instead:

1. reduce-scatter, pairwise: at step ``s`` rank ``r`` sends its block for rank
   ``r + s`` and receives rank ``r - s``'s contribution to its own block; the
   first contribution lands straight in ``recv`` and is summed there with the
   local block (``np.add(recv, send, out=recv)``: the copy and the first sum in
   one pass); later ones go through one ``scratch`` block;
2. ``Allgatherv`` in place hands every rank the other blocks.

With ``send is recv`` the same steps sum in place, the first contribution going
through ``scratch`` too.  The KVStore reduces every large key this way, in place
or not, so the ranks exchange the same messages whatever each summed locally
first (MPICH's in-place ``Allreduce`` would not match this protocol on a rank
that reduces out of place).

Each step is one set of non-blocking requests that the caller waits for (under
the KVStore's watchdog), so a dead peer cannot hang it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_TAG = 0x6B76  # 'kv': our point-to-point messages on the store's own communicator


def block_layout(size: int, num_ranks: int) -> tuple[list[int], list[int]]:
    """Counts and offsets of the ``num_ranks`` blocks of a flat buffer of ``size`` elements.

    Examples
    --------
    >>> block_layout(10, 3)
    ([4, 3, 3], [0, 4, 7])
    """
    counts = [size // num_ranks + (i < size % num_ranks) for i in range(num_ranks)]
    offsets = [0] * num_ranks
    for i in range(1, num_ranks):
        offsets[i] = offsets[i - 1] + counts[i - 1]
    return counts, offsets


def allreduce_into(
    comm: Any,
    mpi: Any,
    send: np.ndarray,
    recv: np.ndarray,
    scratch: Callable[[int], np.ndarray],
    wait: Callable[[list[Any]], None],
) -> None:
    """Sum ``send`` over the ranks of ``comm`` into ``recv`` (both C-contiguous, same shape and dtype).

    Parameters
    ----------
    comm, mpi
        The communicator and the ``mpi4py.MPI`` module.
    send, recv
        This rank's contribution (left unchanged) and the buffer for the sum: the same array
        (summed in place) or arrays that do not overlap.
    scratch
        ``scratch(n)`` returns a buffer of at least ``n`` elements of ``send``'s dtype, needed
        from 3 ranks on, or in place; the caller keeps it between calls.
    wait
        Waits for a list of MPI requests (the caller's watchdog bounds the wait).
    """
    rank, num_ranks = comm.Get_rank(), comm.Get_size()
    flat_send, flat_recv = send.reshape(-1), recv.reshape(-1)
    in_place = send is recv
    if num_ranks == 1:
        if not in_place:
            np.copyto(flat_recv, flat_send)
        return
    counts, offsets = block_layout(flat_send.size, num_ranks)

    def block(flat: np.ndarray, i: int) -> np.ndarray:
        return flat[offsets[i] : offsets[i] + counts[i]]

    mine = block(flat_recv, rank)
    for step in range(1, num_ranks):
        dest, source = (rank + step) % num_ranks, (rank - step) % num_ranks
        into = mine if step == 1 and not in_place else scratch(counts[rank])[: counts[rank]]
        wait([comm.Irecv(into, source, _TAG), comm.Isend(block(flat_send, dest), dest, _TAG)])
        if into is mine:
            np.add(mine, block(flat_send, rank), out=mine)
        else:
            mine += into
    wait([comm.Iallgatherv(mpi.IN_PLACE, [flat_recv, (counts, offsets)])])

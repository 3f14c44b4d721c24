"""Memory planning: reference-count entries, share storage in place, reuse freed blocks.

Every entry computed by the graph gets a storage id; entries that live in arrays the
executor is given (arguments, gradients, auxiliary states) are marked external (-1)
and are never handed to another entry.  Graph outputs are kept for their lifetime.
The outputs of ``optional_outputs`` operators that no node reads and no one sees
(:func:`_unread_optional_outputs`) are never computed: the executor plans them no storage.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Sequence, Set

import numpy as np

from ..graph import IndexedGraph

EXTERNAL = -1
# a freed block serves a request of at most this many times less bytes
MATCH_RANGE = 4


def entry_bytes(shape: Sequence[int] | None, dtype: str | None) -> int:
    # asked of every entry at bind (twice: here and when the executor cuts its blocks): math.prod
    # of Python ints, a fraction of np.prod's cost on a short tuple, and exact for any size
    if shape is None:
        return 0
    return math.prod(shape) * np.dtype(dtype or "float32").itemsize


class _FreeBlocks:
    """The free blocks, found by bisection: each context's blocks sorted by (size, order freed).

    A request takes the smallest block that fits, and of blocks of one size the one freed
    first; blocks still holding a ``keep_values`` entry's value are a separate pool, asked only
    when no other block fits.  A linear scan of one list made the same choice, but a graph of
    ``n`` entries (a 1000-step loop has tens of thousands) then cost ``n**2`` comparisons.
    A block's pool is fixed while it is free: it changes only when an entry is given the block.
    """

    def __init__(self) -> None:
        self._pools: dict[tuple[object, bool], list[tuple[int, int, int]]] = {}
        self._freed = 0  # how many blocks were freed so far: the order among blocks of one size

    def add(self, sid: int, size: int, where: object, keeps_value: bool) -> None:
        insort(self._pools.setdefault((where, keeps_value), []), (size, self._freed, sid))
        self._freed += 1

    def _index(self, need: int, where: object, keeps_value: bool) -> tuple[list, int] | None:
        pool = self._pools.get((where, keeps_value), [])
        k = bisect_left(pool, (need,))  # the first block of at least ``need`` bytes
        return (pool, k) if k < len(pool) and pool[k][0] <= need * MATCH_RANGE else None

    def fits(self, need: int, where: object) -> bool:
        """Whether a free block that keeps no value serves ``need`` bytes."""
        return self._index(need, where, keeps_value=False) is not None

    def take(self, need: int, where: object) -> int | None:
        """Remove and return the best block for ``need`` bytes in ``where``; None when none fits."""
        found = self._index(need, where, keeps_value=False) or self._index(need, where, keeps_value=True)
        if found is None:
            return None
        pool, k = found
        return pool.pop(k)[2]


def plan_memory(
    graph: IndexedGraph,
    order: Sequence[int],
    external: set[int],
    keep_values: Set[int] = frozenset(),
    released_heads: Set[int] = frozenset(),
) -> list[int]:
    """Storage id of every entry, stored with block sizes in ``graph.attrs``.

    ``order`` lists the operator nodes in execution order; ``external`` the entries held
    in caller-given arrays; ``keep_values`` entries whose values should outlive their last
    reader where that costs no memory (the forward values a backward pass reads, so that it
    can run again): once such an entry is freed, its block goes to a later entry, in place or
    not, only when no other free block fits.  A graph head lives to the end, unless it is one of
    ``released_heads``: a head whose value the step producing it hands on at once (an 'add'
    gradient, added into its array by that step) is freed after its last reader like any entry.  When ``graph.attrs['context']`` gives each node a context
    (device placement), a block only ever serves entries of one context, recorded in
    ``graph.attrs['storage_context']``.  Sets ``graph.attrs['storage_id']``, ``['storage_bytes']``,
    ``['inplace']`` (entry -> entry it overwrote) and ``['naive_bytes']``.

    Examples
    --------
    >>> import lazynd_sym as sym
    >>> from lazynd_sym.graph import IndexedGraph
    >>> from lazynd_sym.passes.infer_shape import infer_shape
    >>> from lazynd_sym.passes.infer_type import infer_type
    >>> g = IndexedGraph(((sym.Variable("x") * 2) + 1)._outputs)
    >>> _ = infer_shape(g, {0: (4,)}), infer_type(g, {0: "float32"})
    >>> plan_memory(g, [1, 2], {0})
    [-1, 0, 0]
    """
    shapes, dtypes = graph.attrs["shape"], graph.attrs["dtype"]
    nbytes = [entry_bytes(s, t) for s, t in zip(shapes, dtypes, strict=False)]
    readers = [0] * graph.num_entries
    for i in order:
        for e in graph.input_entries(i):
            readers[e] += 1
    pinned_entries = set(graph.heads) - set(released_heads)
    storage = [EXTERNAL] * graph.num_entries
    sizes: list[int] = []
    live: list[int] = []  # live entries sharing each block
    pinned_blocks: set[int] = set()
    # blocks still holding the value of a ``keep_values`` entry: the last choice for a new entry
    keeping: set[int] = set()
    free = _FreeBlocks()
    inplace: dict[int, int] = {}
    node_context = graph.attrs.get("context")
    block_context: list = []

    def allocate(need: int, where: object = None) -> int:
        sid = free.take(need, where)
        if sid is None:
            sizes.append(need)
            live.append(0)
            block_context.append(where)
            return len(sizes) - 1
        return sid

    def release(e: int) -> None:
        sid = storage[e]
        if sid < 0:
            return
        live[sid] -= 1
        if live[sid] == 0 and sid not in pinned_blocks:
            free.add(sid, sizes[sid], block_context[sid], sid in keeping)

    for i in order:
        node = graph.nodes[i]
        ins = graph.input_entries(i)
        where = node_context[i] if node_context is not None else None
        taken: set[int] = set()
        for k in range(node.num_outputs()):
            out = graph.entry(i, k)
            if out in external:
                continue
            sid = None
            for in_index, out_index in node.opdef.inplace:
                if out_index != k or in_index >= len(ins):
                    continue
                src = ins[in_index]
                s = storage[src]
                if (
                    s >= 0
                    and src not in external
                    and readers[src] == 1
                    and ins.count(src) == 1
                    and live[s] == 1
                    and s not in pinned_blocks
                    and s not in taken
                    and nbytes[src] == nbytes[out]
                    and not (s in keeping and free.fits(nbytes[out], where))
                ):
                    sid = s
                    inplace[out] = src
                    break
            if sid is None:
                sid = allocate(nbytes[out], where)
            taken.add(sid)
            storage[out] = sid
            keeping.discard(sid)  # overwritten now: the block is as good as any other
            if out in keep_values:
                keeping.add(sid)
            live[sid] += 1
            if out in pinned_entries:
                pinned_blocks.add(sid)
        for e in ins:
            readers[e] -= 1
            if readers[e] == 0 and e not in pinned_entries:
                release(e)
        for k in range(node.num_outputs()):
            out = graph.entry(i, k)
            if readers[out] == 0 and out not in pinned_entries:
                release(out)
    graph.attrs["storage_id"] = storage
    graph.attrs["storage_bytes"] = sizes
    graph.attrs["storage_context"] = block_context
    graph.attrs["inplace"] = inplace
    computed = {graph.entry(i, k) for i in order for k in range(graph.nodes[i].num_outputs())}
    graph.attrs["naive_bytes"] = sum(nbytes[e] for e in computed)
    graph.attrs["planned_bytes"] = sum(sizes)
    return storage


def _unread_optional_outputs(graph: IndexedGraph, order: list[int], keep: set[int]) -> set[int]:
    """Outputs of ``optional_outputs`` operators that no node reads and no one sees: never computed."""
    read = {e for i in order for e in graph.input_entries(i)}
    keep = read | keep | set(graph.heads)
    unread: set[int] = set()
    for i in order:
        node = graph.nodes[i]
        if node.opdef.optional_outputs:
            unread.update(e for e in range(graph.entry(i), graph.entry(i + 1)) if e not in keep)
    return unread

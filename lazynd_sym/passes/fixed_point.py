"""Sweeps of every operator's rule over a graph until nothing changes: the loop the shape and type
passes share.

A sweep runs the rule of each operator node, forward on even sweeps and backward on odd ones (so
what a known output tells reaches the inputs), until a sweep changes nothing.

A node whose entries (inputs, auxiliary states, outputs) are all known once its rule has run is
*settled*, and later sweeps skip it: a known entry can no longer change (a merge keeps it or
raises), so the rule would be asked the same question again and give the same answer.  Without
this, the last sweep, which only confirms the fixed point, reran every rule of the graph: half of
each pass, and on a 1000-step loop written out at bind (about 10,000 nodes) a second of the bind.
"""

from __future__ import annotations

from collections.abc import Callable


def sweep_to_fixed_point(
    op_nodes: list[int],
    apply: Callable[[int], tuple[bool, bool]],
    after_sweep: Callable[[], bool],
    max_sweeps: int,
) -> None:
    """Run ``apply(i)`` (returning ``(changed, settled)``) on the nodes ``op_nodes`` sweep after
    sweep, then ``after_sweep()`` (returning whether it changed anything), until a sweep changes
    nothing or ``max_sweeps`` have run; settled nodes are not applied again.

    Examples
    --------
    >>> runs, known = [], set()
    >>> def apply(i):
    ...     runs.append(i)
    ...     new = i not in known
    ...     known.add(i)
    ...     return new, True
    >>> sweep_to_fixed_point([0, 1, 2], apply, lambda: False, 10)
    >>> runs
    [0, 1, 2]
    """
    settled: set[int] = set()
    for sweep in range(max_sweeps):
        changed = False
        for i in op_nodes if sweep % 2 == 0 else reversed(op_nodes):
            if i in settled:
                continue
            node_changed, node_settled = apply(i)
            changed |= node_changed
            if node_settled:
                settled.add(i)
        changed |= after_sweep()
        if not changed:
            return

"""The text of :meth:`Executor.debug_str <lazynd_sym.executor.Executor.debug_str>`: what a bound
graph computes, where each value is stored, and the memory plan's totals."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def plan_report(graph: Any, passes: Iterable[tuple[str, list[int]]], skipped: set[int]) -> str:
    """Each pass's nodes in order, each output with its shape, inputs and storage (``skipped``:
    entries nothing reads, so never computed), then the planned and naive totals and MXNet's two
    closing lines, ``Total <n> MB allocated`` and ``Total <k> TempSpace resource requested``, in
    MXNet's order: programs pick the first by position (``debug_str().split('\\n')[-3]``). Kernels
    here allocate their own temporaries, so no operator requests a TempSpace resource: k is 0."""
    storage = graph.attrs["storage_id"]
    inplace = graph.attrs["inplace"]
    lines = []
    for title, order in passes:
        lines.append(f"== {title} ==")
        for i in order:
            node = graph.nodes[i]
            ins = ", ".join(graph.entry_name(e) for e in graph.input_entries(i))
            for k in range(node.num_outputs()):
                eid = graph.entry(i, k)
                sid = storage[eid]
                where = "external" if sid < 0 else f"storage {sid}"
                if eid in skipped:
                    where = "not computed (unread)"
                note = f" (in place of {graph.entry_name(inplace[eid])})" if eid in inplace else ""
                if "members" in node.attrs:  # a fused elementwise chain
                    note += f" [fused: {' -> '.join(node.attrs['members'])}]"
                lines.append(
                    f"{node.opdef.name} {node.output_name(k)} {graph.attrs['shape'][eid]} <- [{ins}]: {where}{note}"
                )
    planned, naive = graph.attrs["planned_bytes"], graph.attrs["naive_bytes"]
    lines.append(f"Total planned {planned / 2**20:.3f} MB (naive {naive / 2**20:.3f} MB)")
    lines.append(f"planned_bytes={planned} naive_bytes={naive}")
    lines.append(f"Total {planned >> 20} MB allocated")  # MXNet's line, whole MB
    lines.append("Total 0 TempSpace resource requested")
    return "\n".join(lines) + "\n"

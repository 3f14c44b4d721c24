"""The steps of an executor's pass that are not operators, and how its steps are named.

A pass is a list of steps ``(kernel, kctx, attrs, inputs, outputs, aux, node)`` run in order (see
:mod:`.run`).  Besides the operators' kernels it may hold copies in front (the arguments given to
``forward(**kwargs)``, the head gradients given to ``backward``) and a tail that copies, adds or
zeroes the gradients no step wrote or added in place (see :mod:`.accumulate`).  A failed step is reported naming its node and
operator, and a step pushed as an engine operation of its own is named ``executor:<node>`` (its
operator's name for the profiler's tables, as MXNet's rows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.engine import OperationName, StepFailure

_PASS_NAMES: dict[str, OperationName] = {}  # the names of passes and tails, made once (every pass push asks)


def operation_name(step: tuple | None, name: str) -> OperationName:
    """The engine name of one step of a pass: ``executor:<node>`` on every device, as the profiler's
    'symbolic' mode and its trace expect, grouped under the node's operator in the profiler's tables
    (MXNet's row names); ``name`` itself for what is not a step (a pass, its tail), in the tables'
    'executor' category, apart from the operators it holds."""
    if step is None:
        made = _PASS_NAMES.get(name)
        if made is None:
            made = _PASS_NAMES[name] = OperationName(name, name, "executor")
        return made
    op = getattr(step[6], "op", None)
    if op is None:  # a copy in front of the kernels: the executor's bookkeeping, not a graph operator
        return OperationName("executor:" + name, "executor:" + name, "executor")
    return OperationName("executor:" + name, op.name)


def step_failure(node: Any, err: Exception) -> StepFailure:
    """The error of a failed step, naming its node and operator (the engine reports it at a wait)."""
    if node is None:
        return StepFailure("executor", err)
    op = getattr(node, "op", None)
    return StepFailure(node.name, err, op.name if op is not None else "")


def finish_kernel(finish: list[tuple]) -> Callable[[], None]:
    """The tail of a backward pass: copy, add or zero the gradients no step wrote or added itself."""

    def run() -> None:
        for req, src, dst in finish:
            if req == "write":
                dst[...] = src
            elif req == "add":
                dst += src
            else:
                dst[...] = 0

    return run


def copy_kernel(kctx: Any, attrs: Any, ins: list, outs: list, aux: list) -> None:
    for src, dst in zip(ins, outs, strict=False):
        dst[...] = src


class CopyNode:
    """The node of a copy step a pass adds in front of its kernels (no outputs a monitor sees)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def num_visible_outputs(self) -> int:
        return 0


HEAD_GRAD_COPIES = CopyNode("head_grads")
ARGUMENT_COPIES = CopyNode("argument_copies")

"""The steps of an executor's pass that are not operators, and how its steps are named.

A pass is a list of steps ``(kernel, kctx, attrs, inputs, outputs, aux, node)`` run in order (see
:mod:`.run`).  Besides the operators' kernels it may hold copies in front (the arguments given to
``forward(**kwargs)``, the head gradients given to ``backward``) and a tail that copies, adds or
zeroes the gradients not written in place.  A failed step is reported naming its node and
operator, and a step pushed as an engine operation of its own is named ``executor:<node>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lazynd.engine import StepFailure


def operation_name(step: tuple | None, name: str) -> str:
    """The engine name of one operation of a pass pushed operator by operator: ``executor:<node>``
    on every device, as the profiler's 'symbolic' mode and its trace expect (``name`` for the tail)."""
    return "executor:" + name if step is not None else name


def step_failure(node: Any, err: Exception) -> StepFailure:
    """The error of a failed step, naming its node and operator (the engine reports it at a wait)."""
    if node is None:
        return StepFailure("executor", err)
    op = getattr(node, "op", None)
    return StepFailure(node.name, err, op.name if op is not None else "")


def finish_kernel(finish: list[tuple]) -> Callable[[], None]:
    """The tail of a backward pass: copy, add or zero the gradients not written in place."""

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

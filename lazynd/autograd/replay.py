"""Replaying a backward pass: the same gradient work for the same graph, as one engine operation.

A training loop records the same graph at every step: the same operators on arrays of the
same shapes, wired the same way, with new arrays each time.  The first :func:`backward` of
such a graph runs each node's gradient rule (:mod:`.backward`) and notes the graph's
structure; the second runs them again while a
:class:`~lazynd.runtime.capture.PushCapture` records what the rules push; from that record a
:class:`~.replay_program.BackwardProgram` is built (:mod:`.replay_program`): the kernels in
order, each argument either an array of the graph (a node's input or output, a variable's
gradient buffer, a head gradient), found again by its position in the next graph, or a
buffer of the pass itself (a gradient on its way), allocated again for each run as the
rules' operations would allocate it.
Every later backward of a graph with the same :class:`Structure` pushes the program as one
operation (as an executor pushes a bulked pass), instead of calling the rules and pushing
each of their operations: the same kernels on the same arrays in the same order, so the
same results.

What makes two graphs the same (:func:`structure`): the training mode; for each node, in the
order backward visits them, its call plan (operator, parameters, input shapes and dtypes:
:class:`lazynd.runtime.CallPlan`, shared by equal calls) and where each input comes from (a
constant, a variable and its ``grad_req``, another node's output); the variables' gradient
buffers' signatures; the heads and whether each has a head gradient; and which of the graph's
arrays share a buffer or an engine var (a constant read twice, an output written into an
array that another node reads, a view of a variable's gradient buffer read by the graph).
An input recorded as another node's output is that output's array, and a variable's input
is the array marked, at every use: their buffers and vars follow from the walk.

Only what can be replayed exactly is: a ``backward()`` (not ``grad()``, whose results are
new arrays, nor ``create_graph``) of a graph on one device (the CPU, or one GPU) whose nodes
are all registered operator calls, while the profiler does not record, whose rules pushed
only registered kernels (random ones excepted) and copies on that device, on arrays of the
graph or of the pass, none of which pushed operations of its own (a Custom operator's Python
calling ``mx.nd``).  Any
other graph runs its rules every time.  ``LAZYND_AUTOGRAD_REPLAY=0`` (read at import; or
:data:`ENABLED` set to False) runs every pass's rules, for debugging or comparison.

A step that fails gives its error only to the gradients computed from it, as the rules'
operations would: the pass runs the steps that do not read what it would have written, and
names the vars it reached (:class:`~lazynd.engine.StepFailure`'s ``reaches``).  One difference
remains, in failure only: a replayed pass is one operation, so an error on an array it reads
reaches every array the pass writes, where the rules' operations give it only to the gradients
computed from that array.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from .. import engine as engine_module
from ..context import Context
from ..environment import flag_setting
from ..runtime.capture import PushCapture
from .graph import Leaf, Node
from .replay_program import BackwardProgram

ENABLED = flag_setting("LAZYND_AUTOGRAD_REPLAY", default=True)
_MAX_PROGRAMS = 64  # structures kept (a program of ever-new graphs starts the table again)
NOT_REPLAYABLE: Any = "not replayable"  # a structure whose rules push what a program cannot hold
SEEN: Any = "seen once"  # a structure met once: the next pass of it is captured
CAPTURE: Any = "capture"  # lookup(): run the rules under a capture and build the program
_programs: dict[tuple, Any] = {}  # Structure.key -> BackwardProgram, NOT_REPLAYABLE or SEEN
_lock = threading.Lock()


class Structure:
    """What a backward pass over one graph depends on, and the graph's arrays by position.

    ``key`` is hashable and equal for graphs whose backward pushes the same work (see the
    module docstring); ``buffers`` and ``vars`` are the graph's distinct array buffers and
    engine vars, numbered in the order :func:`structure` meets them.
    """

    __slots__ = ("key", "buffers", "vars", "ctx")

    def __init__(self, key: tuple, buffers: list, vars_: list, ctx: Context) -> None:
        self.key = key
        self.buffers = buffers
        self.vars = vars_
        self.ctx = ctx  # the one device of every node (their plans say it: so does the key)


# an array's buffer and var, read from NDArray's slots as the dispatcher reads them: the public
# properties cost a Python call each (NDArray's __getattr__ keeps attribute reads unspecialised),
# and the walk reads both of every array of the graph
_buffer_of = attrgetter("_data")
_var_of = attrgetter("_var")


def structure(order: list[Node], heads: Sequence[Any], head_grads: Sequence[Any], train_mode: bool) -> Structure | None:
    """The :class:`Structure` of the backward of ``heads`` over ``order`` (the nodes, each after those it
    reads), with ``head_grads`` (None for a head: its default); None when it cannot be replayed.

    ``head_grads`` holds the head gradients the pass will use: None for a loss operator's head,
    the shared default ones already put in for the others (see
    :meth:`.backward_pass._Backward._default_head_gradient`).

    The graph's arrays are numbered in the order the walk meets them: a constant, or a variable
    at its first use, where a node reads it; a node's outputs after its inputs; then the
    variables' gradient buffers and the head gradients.  The key's first part is one flat
    tuple, with no tuple made per input: the training mode; for each node its plan, then for
    each input None (a constant: a new number) or the number of its array (a variable: a new
    number at its first use, the same one at every other; a node's output: the number of that
    array); then each variable's ``grad_req`` and gradient buffer's signature; then each head's
    number and head gradient's signature.  The rest says how many arrays there are, and which
    share a buffer or a var.
    """
    if not order or order[0].plan is None:
        return None
    ctx = order[0].plan.ctx
    if ctx.device_type not in ("cpu", "gpu"):
        return None
    parts: list[Any] = [bool(train_mode)]
    arrays: list[Any] = []  # the arrays in the order of their numbers
    # a node or a variable -> the number of its first array (keyed by the object: both hash by
    # identity, and an id() call per input is a fifth of the walk)
    first: dict[Any, int] = {}
    leaves: list[Leaf] = []
    for node in order:
        plan = node.plan
        if plan is None or node.rule is None or (plan.ctx is not ctx and plan.ctx != ctx):
            return None
        parts.append(plan)
        k = -1  # the input's index (a counter, not zip(): this loop is the walk's cost)
        for entry in node.entries:
            k += 1
            if entry is None:  # a constant: any array
                parts.append(None)
                arrays.append(node.inputs[k])
                continue
            owner = entry[0]
            number = first.get(owner)
            if number is None:  # a variable met for the first time: the array marked, the same at every use
                if owner.__class__ is not Leaf:
                    return None  # an output of a node not walked before this one: no order of the walk
                number = first[owner] = len(arrays)
                leaves.append(owner)
                arrays.append(node.inputs[k])
            parts.append(number + entry[1])  # a node's output i: the array i after its first
        first[node] = len(arrays)
        arrays += node.outputs
    for leaf in leaves:
        grad = leaf.grad
        parts.append(leaf.grad_req)
        if grad is None:
            parts.append(None)
        else:
            parts.append(grad.signature)
            arrays.append(grad)
    for head, head_grad in zip(heads, head_grads, strict=True):
        owner, i = head._ag
        if owner.__class__ is not Node:
            return None  # a variable as a head: rare enough to run its rules
        parts.append(first[owner] + i)
        if head_grad is None:
            parts.append(None)
        else:
            parts.append(head_grad.signature)
            arrays.append(head_grad)
    # which positions share a buffer or a var: none, commonly; else each numbered by its first position
    buffers = list(map(_buffer_of, arrays))
    vars_ = list(map(_var_of, arrays))
    n = len(arrays)
    if len(set(vars_)) == n and len(set(map(id, buffers))) == n:  # a var hashes by identity, a buffer cannot
        return Structure((tuple(parts), n), buffers, vars_, ctx)
    key = (tuple(parts), _sharing(buffers), _sharing(vars_))
    return Structure(key, _first(buffers), _first(vars_), ctx)


def _sharing(objects: list) -> tuple[int, ...]:
    """Each of ``objects`` numbered by the first position of the same object."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(id(o), k) for k, o in enumerate(objects))


def _first(objects: list) -> list:
    """``objects`` without repeats (by identity), in order."""
    seen: set[int] = set()
    out = []
    for o in objects:
        if id(o) not in seen:
            seen.add(id(o))
            out.append(o)
    return out


def lookup(shape: Structure) -> Any:
    """What a pass of ``shape``'s structure does: the :class:`BackwardProgram` to replay;
    :data:`CAPTURE` the second time the structure is met (run the rules under :func:`capture`,
    then :func:`remember`); None the first time, or for a structure that cannot be replayed (run
    the rules).  A structure met once is not captured: a program of graphs that never repeat
    pays for the walk only."""
    program = _programs.get(shape.key)
    if program is None:
        _keep(shape.key, SEEN)
        return None
    if program is SEEN:
        return CAPTURE
    return None if program is NOT_REPLAYABLE else program


def _keep(key: tuple, value: Any) -> None:
    with _lock:
        if len(_programs) >= _MAX_PROGRAMS and key not in _programs:
            _programs.clear()
        _programs[key] = value


def replay_enabled() -> bool:
    """Whether a backward pass may be replayed or captured now (not while the profiler records:
    it shows each gradient operation)."""
    return ENABLED and not engine_module.recording


def capture() -> PushCapture:
    """A capture for the rules of a backward pass (see :mod:`lazynd.runtime.capture`)."""
    return PushCapture()


def remember(shape: Structure, captured: PushCapture, checked: list[int]) -> None:
    """Build the program of a pass whose rules ran under ``captured``, for ``shape``'s key.

    ``checked``: the positions of the nodes whose arrays the pass checked for in-place
    writes, in the order it checked them.
    """
    if not captured.complete:
        return  # another capture was open: nothing was recorded
    program = None if captured.nested else BackwardProgram.build(shape, captured.pushes, checked)
    _keep(shape.key, NOT_REPLAYABLE if program is None else program)


def forget_programs() -> None:
    """Forget every structure met and every program built (the next passes start again)."""
    with _lock:
        _programs.clear()

"""The program of a replayed backward pass: the kernels its rules pushed, pushed again as one operation.

:mod:`.replay` decides when a pass is captured and when it is replayed; this module holds what
a capture becomes.  :meth:`BackwardProgram.build` turns the pushes a
:class:`~lazynd.runtime.capture.PushCapture` recorded into steps over numbered buffers (the
graph's arrays, by their position in a :class:`~.replay.Structure`, and the pass's own buffers,
allocated again for each run), refusing any push it cannot replay exactly: a kernel that is not
a registered operator's, one that draws random numbers, a copy between devices, an array that is
neither the graph's nor made by an earlier step.  :meth:`BackwardProgram.replay` pushes the
steps on a later graph of the same structure as one engine operation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backend import blas, cpu_backend, get_backend
from ..backend.fperr import run_quietly
from ..engine import StepFailure
from ..engine.var import Var
from ..ops import registry
from ..ops.registry import KernelContext
from ..runtime import push

if TYPE_CHECKING:
    from .graph import Node
    from .replay import Structure

_version_of = attrgetter("version")  # an engine var's version (the in-place checks of a replayed pass)


# the copies a program can replay, by the name they are pushed under: between CPU arrays, and
# within one GPU (lazynd.ndarray.copying); a copy between the host and a GPU is never a step
_COPIES = ("_copyto", "_copyto_d2d")


def _copy_step(copy: Callable[[Any, Any], None]) -> Callable[..., None]:
    """A captured copy ``copy(source, target)`` on one device as a kernel step's function."""

    def run(kctx: Any, attrs: Any, ins: list, outs: list, aux: list) -> None:
        copy(ins[0], outs[0])

    return run


class BackwardProgram:
    """The kernels a backward pass pushed, over numbered buffers, pushed again as one operation.

    Buffer table of a run: ``[None, the graph's buffers (Structure.buffers)..., the pass's own]``;
    each step is ``(fn, kctx, attrs, ins, outs, aux, name)`` with table indices for the
    arrays (0: an output the kernel skips).  The pass's own buffers (``own``: their shapes and
    dtypes; gradients whose uses do not overlap share one, see :func:`_share_own_buffers`) are
    taken from the pool when a run starts and given back when it ends: a program
    holds no memory between runs, and runs of one program on different graphs (other threads'
    passes, a pass pushed while an earlier one still waits for its inputs) do not wait for each
    other, as their rules' operations would not.  On a GPU the run is one operation on the
    device's compute stream, its own buffers from the device's pool (reused by later work on
    that stream only after this run's kernels, as every GPU temporary is).
    """

    def __init__(
        self,
        steps: list[tuple],
        own: list[tuple[tuple[int, ...], np.dtype]],
        reads: list[int],
        writes: list[int],
        extra_writes: list[Var],
        checked: list[int],
        backend: Any,
        work: int,
        quiet: bool = False,
        step_writes: list[list[int]] | None = None,
    ) -> None:
        self.steps = steps
        # the numbers of the graph's vars each step writes: what a failed step's error reaches
        self.step_writes = step_writes if step_writes is not None else [list(writes)] * len(steps)
        self.own = own  # (shape, dtype) of each buffer of the pass itself (gradients on their way)
        # numbers of the graph's vars a step reads before any step writes them: the operation
        # inherits their errors, as the rules' operations reading them would (an 'add' gradient
        # is read before it is written), and is ordered after their pending writes
        self.reads = reads
        self.writes = writes  # numbers of the graph's vars the steps write
        self.extra_writes = extra_writes  # the host BLAS's var, where a step wrote it
        self.checked = checked
        self.backend = backend  # the device's: where a run takes its own buffers
        self.work = work  # the elements the steps touch (the pushed operation's work)
        self.quiet = quiet  # the steps' kernels are raw, to run inside one switch of NumPy's warnings

    @classmethod
    def build(cls, shape: Structure, pushes: list[tuple], checked: list[int]) -> BackwardProgram | None:
        """The program of ``pushes`` over ``shape``'s arrays; None when one of them cannot be replayed."""
        index = {id(b): k + 1 for k, b in enumerate(shape.buffers)}
        n_graph = len(shape.buffers)
        var_index = {id(v): k for k, v in enumerate(shape.vars)}
        own: list[tuple[tuple[int, ...], np.dtype]] = []
        steps: list[tuple] = []
        read_vars: list[int] = []
        written_vars: list[int] = []
        extra: list[Var] = []
        step_writes: list[list[int]] = []  # the numbers of the graph's vars each step writes
        blas_var = blas.BLAS_VAR  # the host BLAS's var (None while it runs on one thread)
        device = shape.ctx
        backend = cpu_backend if device.device_type == "cpu" else get_backend(device)
        for ctx, fn, args, reads, writes, name in pushes:
            if ctx != device:
                return None
            step = _kernel_step(fn, args, name)
            if step is None:
                return None
            fn, kctx, attrs, ins, outs, aux = step

            in_index, aux_index = _numbers(index, ins), _numbers(index, aux)
            if in_index is None or aux_index is None:
                return None  # reads an array that is neither the graph's nor made by an earlier step
            out_index = []
            for o in outs:
                if o is None:
                    out_index.append(0)
                    continue
                k = index.get(id(o))
                if k is None:  # a buffer of the pass: allocated by each run
                    if not isinstance(o, backend.xp.ndarray):
                        return None
                    k = index[id(o)] = n_graph + 1 + len(own)
                    own.append((o.shape, o.dtype))
                out_index.append(k)
            for var in reads:  # before the step's writes: an in-place step reads first
                v = var_index.get(id(var))
                if v is not None and v not in read_vars and v not in written_vars:
                    read_vars.append(v)
            for var in writes:
                v = var_index.get(id(var))
                if v is not None:
                    if v not in written_vars:
                        written_vars.append(v)
                elif blas_var is not None and var is blas_var and blas_var not in extra:
                    extra.append(blas_var)
            steps.append((fn, kctx, attrs, in_index, out_index, aux_index, name))
            step_writes.append([var_index[id(var)] for var in writes if id(var) in var_index])
        if not steps:
            return None
        steps, step_writes = _live_steps(steps, step_writes, n_graph)
        steps, own = _share_own_buffers(steps, own, n_graph)
        # on the host, a program of quiet kernels runs inside one switch of NumPy's warnings, its
        # kernels without their own (lazynd.backend.fperr)
        quiet = device.device_type == "cpu" and all(name in _COPIES or registry.get(name).quiet for *_, name in steps)
        if quiet:
            steps = [step if step[6] in _COPIES else (registry.get(step[6]).raw_forward, *step[1:]) for step in steps]
        # the elements the steps touch, each buffer once: the engine's measure of the pass (see
        # lazynd.runtime.device_push.SMALL_INLINE_MAX)
        used = {k for step in steps for k in (*step[3], *step[4], *step[5]) if 0 < k <= n_graph}
        work = sum(int(shape.buffers[k - 1].size) for k in used) + sum(math.prod(s) for s, _ in own)
        return cls(steps, own, read_vars, written_vars, extra, checked, backend, work, quiet, step_writes)

    def replay(self, shape: Structure, order: list[Node]) -> None:
        """Push the program on ``shape``'s arrays (after the in-place checks the pass would make)."""
        for k in self.checked:
            node = order[k]
            if list(map(_version_of, node.watched)) != node.versions:  # the check itself says which array
                node.check_unmodified()
        vars_ = shape.vars
        reads = [vars_[v] for v in self.reads]
        writes = [vars_[v] for v in self.writes]
        writes += self.extra_writes
        push(shape.ctx, self._run, ([None, *shape.buffers], vars_), reads, writes, "autograd_backward", self.work)

    def _run(self, table: list, vars_: list[Var]) -> None:
        """Run the steps on ``table`` (None and the graph's buffers) and buffers of the pass's own;
        ``vars_`` are the graph's vars, which a failed step's error reaches."""
        empty = self.backend.empty
        for shape, dtype in self.own:
            table.append(empty(shape, dtype))
        if self.quiet:
            run_quietly(self._run_steps, table, vars_)
        else:
            self._run_steps(table, vars_)

    def _run_steps(self, table: list, vars_: list[Var]) -> None:
        """Run the steps in order.  A step that fails is skipped, and so is every later step that
        reads what a skipped step would have written; the others run, as the rules' operations
        would.  The first failure is raised once they have run, reaching only the vars that skipped
        steps write (:class:`~lazynd.engine.StepFailure`'s ``reaches``): the other gradients are
        computed.  A var that a skipped step writes stays failed even where a later step writes it again."""
        first: Exception | None = None
        failed_name = "autograd_backward"
        broken: set[int] = set()  # table numbers of what skipped steps would have written
        failed: set[int] = set()  # numbers of the graph's vars that skipped steps write
        for k, (fn, kctx, attrs, ins, outs, aux, name) in enumerate(self.steps):
            if not broken or (broken.isdisjoint(ins) and broken.isdisjoint(aux)):
                aux_arrays = [table[i] for i in aux] if aux else []  # commonly none
                try:
                    fn(kctx, attrs, [table[i] for i in ins], [table[i] for i in outs], aux_arrays)
                except Exception as err:  # noqa: BLE001 - raised below, once the independent steps ran
                    if first is None:
                        first, failed_name = err, name
                else:
                    if broken:
                        broken.difference_update(outs)  # written afresh
                    continue
            broken.update(outs)
            broken.update(aux)
            broken.discard(0)  # an output the kernel skips
            failed.update(self.step_writes[k])
        if first is not None:
            raise StepFailure(failed_name, first, reaches=[vars_[v] for v in sorted(failed)]) from first


def _live_steps(steps: list[tuple], step_writes: list[list[int]], n_graph: int) -> tuple[list[tuple], list[list[int]]]:
    """``steps`` (and their written vars, ``step_writes``) less those whose work reaches no gradient.

    A rule written with ``F`` computes the gradient of each input of its node, and a pass keeps
    those that flow to a variable: the rule of ``x * w`` also computes the gradient of a data ``x``
    that takes none.  A step is live when it writes an array of the graph (a
    gradient buffer) or a buffer of the pass that a later live step reads; a program runs only
    those, as an executor's pass computes only the gradients its ``grad_req`` asks for.  Worked
    out once per program, from the last step back.
    """
    needed: set[int] = set()  # buffers of the pass that a live step reads
    live: list[int] = []
    for k in range(len(steps) - 1, -1, -1):
        _fn, _kctx, _attrs, ins, outs, aux, _name = steps[k]
        if any(0 < i <= n_graph or i in needed for i in (*outs, *aux)):
            live.append(k)
            needed.update(i for i in (*ins, *aux) if i > n_graph)
    if len(live) == len(steps):
        return steps, step_writes
    live.reverse()
    return [steps[k] for k in live], [step_writes[k] for k in live]


def _share_own_buffers(steps: list[tuple], own: list[tuple], n_graph: int) -> tuple[list[tuple], list[tuple]]:
    """``steps`` and ``own`` with the pass's own buffers shared where their uses do not overlap.

    A buffer of the pass (a gradient on its way) is live from the step that first writes it to
    the last step that reads or writes it; a later buffer of the same shape and dtype first
    written by a step after that one takes its place (as an executor's memory plan reuses a
    freed block), so a run allocates fewer buffers.  Not by the step that last uses it: a
    kernel may read an input while it writes its outputs.  Worked out once per program.
    """
    first = n_graph + 1  # table numbers from here on are the pass's own
    last_use: dict[int, int] = {}
    for j, step in enumerate(steps):
        for k in (*step[3], *step[4], *step[5]):
            if k >= first:
                last_use[k] = j
    slot_of: dict[int, int] = {}  # own buffer (table number) -> the slot that holds it
    slots: list[tuple] = []  # (shape, dtype) of each slot
    free: dict[tuple, list[int]] = {}  # (shape, dtype) -> slots no longer used
    for j, step in enumerate(steps):
        for k in step[4]:
            if k >= first and k not in slot_of:
                spec = own[k - first]
                spare = free.get(spec)
                if spare:
                    slot_of[k] = spare.pop()
                else:
                    slot_of[k] = len(slots)
                    slots.append(spec)
        for k in {*step[3], *step[4], *step[5]}:
            if k >= first and last_use[k] == j:
                free.setdefault(own[k - first], []).append(slot_of[k])
    if len(slots) == len(own):
        return steps, own

    def renumber(numbers: list[int]) -> list[int]:
        return [first + slot_of[k] if k >= first else k for k in numbers]

    shared = [
        (fn, kctx, attrs, renumber(ins), renumber(outs), renumber(aux), name)
        for fn, kctx, attrs, ins, outs, aux, name in steps
    ]
    return shared, slots


def _numbers(index: dict[int, int], arrays: list) -> list[int] | None:
    """The table numbers of ``arrays`` by ``index`` (``id`` -> number); None if one has none."""
    found = []
    for a in arrays:
        k = index.get(id(a))
        if k is None:
            return None
        found.append(k)
    return found


def _kernel_step(fn: Callable[..., Any], args: tuple, name: str) -> tuple | None:
    """``(fn, kctx, attrs, ins, outs, aux)`` of a captured push that a program can replay, else None.

    A registered operator's kernel (``args`` are ``(kctx, attrs, ins, outs, aux)``; its GPU
    kernel where it has one), with the kernel that fills its outputs where the push used the one for zero-filled fresh outputs
    (a program's own buffers are reused); or a copy ``(source, target)`` on one device.  Not a kernel
    that draws random numbers: its generator is the call's.
    """
    if len(args) == 2 and name in _COPIES:
        return _copy_step(fn), None, None, [args[0]], [args[1]], []
    if len(args) != 5 or args[0].__class__ is not KernelContext or not registry.exists(name):
        return None
    kctx, attrs, ins, outs, aux = args
    if kctx.rng is not None or not isinstance(ins, list) or not isinstance(outs, list):
        return None
    op = registry.get(name)
    if fn is op.forward_into_zeros and fn is not None:
        fn = op.forward
    elif fn is not op.forward and (fn is not op.forward_gpu or fn is None):
        return None
    return fn, kctx, attrs, ins, outs, aux

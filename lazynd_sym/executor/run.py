"""Running an executor's compiled passes: pushing them to the engine and calling their kernels.

Bulk execution (MXNet's term): on a CPU context each pass is pushed to the engine as ONE
operation, a "segment" that reads every argument and auxiliary state and writes every
output and gradient, and whose function calls the precomputed kernels in order.  Each
kernel then costs a Python call instead of an engine push with its own var bookkeeping
and, possibly, a hand-off to a worker thread.  What stays per operator:

- an exception names the failing operator: ``EngineError: operator 'fc1'
  (FullyConnected, in 'executor_forward') failed: ...``, raised at the next wait as
  for any operation;
- a monitor (:meth:`Executor.set_monitor_callback`) is called after each operator of the
  pass, with a private copy of each output (no copies while its ``active`` predicate says no);
- while the profiler records, a pass stays one operation and times each of its operators
  for the profiler as ``executor:<node>``: in the trace they nest inside the pass's own
  event (``executor_forward``, ``executor_backward``) on the same thread;
- ``LAZYND_EXEC_BULK=0`` (read when an executor is bound, see :mod:`.bulking`; MXNet's
  ``MXNET_EXEC_BULK_EXEC_TRAIN=0`` / ``MXNET_EXEC_BULK_EXEC_INFERENCE=0`` do the same for
  executors with / without gradients) pushes one operation per operator always, for
  debugging or comparison.

On a GPU a bulked pass is one operation too: its kernels launch one after another on the
device's compute stream, with one wait for its inputs' events before the first and one event
recorded after the last.  Launches are asynchronous either way; what bulking saves there is
the host's cost per operation (an engine push, its stream setup and an event), which at
MNIST's batch sizes is most of a training step (the H100's MLP epoch went from an operation
per operator to one per pass).  Placed executors (several devices) push one operation per
operator.

A bulked executor on one GPU replays each pass as a CUDA graph from its second run on
(:mod:`lazynd.backend.cuda.graphs`): one launch instead of one per kernel (LeNet's training step
on an H100: 0.56 ms a batch against 2.83 eager).  ``LAZYND_CUDA_GRAPHS=0`` (read when an executor
is bound) keeps every pass eager.  Passes that draw random numbers or call a Python
operator (``Custom``) stay eager, as does any pass while a monitor records or the profiler
runs; copies of arguments given to ``forward`` and of head gradients run eagerly before the
graph.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from time import perf_counter_ns
from typing import Any

import numpy as np

import lazynd.engine as engine_module
import lazynd.ndarray as nd
from lazynd.backend import get_backend
from lazynd.backend.fperr import run_quietly
from lazynd.context import Context
from lazynd.engine import get_engine
from lazynd.engine.var import Var
from lazynd.errors import ArgumentTypeError, LazyNDError, ShapeError
from lazynd.runtime import elements_touched, push

from .access import copies_access
from .bulking import bulk_enabled, graphs_enabled
from .monitoring import run_monitored
from .steps import ARGUMENT_COPIES, HEAD_GRAD_COPIES, copy_kernel, operation_name, step_failure

# the settings read at bind are handed on from .bulking, where programs and tests found them here
__all__ = ["PassRunner", "bulk_enabled", "graphs_enabled"]


def _run_kernels(steps: list[tuple]) -> None:
    """Call the kernels of ``steps`` in order; a failure names the step's node and operator."""
    node = None  # the step running: the except clause names it
    try:
        for fn, kctx, attrs, ins, outs, aux, node in steps:  # noqa: B007 - node: see above
            fn(kctx, attrs, ins, outs, aux)
    except Exception as err:
        raise step_failure(node, err) from err


class PassRunner:
    """The run-time half of :class:`~lazynd_sym.executor.Executor`: its passes pushed and run.

    The executor compiles, at bind, what these methods read: the steps
    ``(fn, kctx, attrs, ins, outs, aux, node)`` of each pass, the buffers they use, and
    the vars each pass reads and writes.
    """

    arg_names: list[str]
    output_names: list[str]
    arg_arrays: list
    grad_arrays: list
    aux_arrays: list
    outputs: list
    _ctx: Context
    _arg_index: dict[str, int]
    _monitor: Callable[[str, Any], None] | None
    _monitor_active: Callable[[], bool] | None
    _monitor_all = False
    _bulk: bool
    _internal: Var
    _buffers: list[Any]
    _steps: dict[bool, list[tuple]]
    _backward_steps: list[tuple]
    _forward_vars: dict[bool, tuple[list[Var], list[Var]]]
    _copies_access: dict[tuple, tuple[list[Var], list[Var], list[Any], int]]  # see access.copies_access
    _backward_vars: tuple[list[Var], list[Var]]
    _head_grads: list[tuple[int, int]]
    _grad_entry: dict[int, int]
    _finish_grads: list[tuple]
    # a forward value the backward pass reads and, in this memory plan, a backward step
    # overwrites (named at bind; None: none), and whether a backward ran since the last forward
    _overwritten_forward: str | None = None
    _backward_since_forward = False
    # a forward value the backward pass reads, named with its reader (None: it reads none, so its
    # gradients do not depend on a forward having run), and whether a forward has run since bind
    _forward_value_read: str | None = None
    _forward_ran = False
    _finish: Callable[[], None] | None
    # the CUDA graphs of this executor's passes, a :class:`lazynd.backend.cuda.graphs.LaunchGraphs`
    # (None: its passes run eagerly)
    _graphs: Any = None
    _works: dict[str | None, int] | None = None  # see _pass_work
    # the steps' kernels are raw, to run inside one switch of NumPy's warnings (see _run_steps)
    _raw_kernels = False

    def set_monitor_callback(
        self,
        callback: Callable[[str, Any], None] | None,
        monitor_all: bool = False,
        active: Callable[[], bool] | None = None,
    ) -> None:
        """Call ``callback(name, array)`` with every operator output as it is computed.

        ``array`` is a private copy of the output (the planned buffer is reused by later
        operators).  ``active``, when given, is asked before each pass (before each operator
        when operators are pushed one by one): while it returns False
        the executor neither copies outputs nor calls ``callback`` (``mx.mon.Monitor`` passes
        its activation, so the batches it does not record cost nothing).  With ``monitor_all``
        each operator's inputs are reported too, before it runs (MXNet's ``monitor_all``).
        ``None`` removes the callback.  ``monitor_all`` comes second, as in MXNet's
        ``set_monitor_callback(callback, monitor_all=False)``; ``active`` is lazynd's own.
        """
        if callback is not None and not callable(callback):
            raise LazyNDError(f"set_monitor_callback: callback must be callable, got {type(callback).__name__}")
        if active is not None and not callable(active):
            raise LazyNDError(f"set_monitor_callback: active must be callable, got {type(active).__name__}")
        self._monitor = callback
        self._monitor_active = active if callback is not None else None
        self._monitor_all = bool(monitor_all) and callback is not None

    def _monitor_now(self) -> Callable[[str, Any], None] | None:
        """The monitor callback, if one is installed and its ``active`` predicate (if any) says yes now."""
        monitor = self._monitor
        if monitor is not None and self._monitor_active is not None and not self._monitor_active():
            return None
        return monitor

    def _run_steps(self, steps: list[tuple]) -> None:
        monitor = self._monitor_now()
        if monitor is None:
            if self._raw_kernels:
                run_quietly(_run_kernels, steps)
            else:
                _run_kernels(steps)
            return
        node = None  # the step running: the except clause names it
        try:
            for step in steps:
                node = step[6]
                if self._raw_kernels:  # the kernel inside the switch, the monitor's callback outside it
                    step = (partial(run_quietly, step[0]), *step[1:])
                run_monitored(step, monitor, self._ctx, self._monitor_all)
        except Exception as err:
            raise step_failure(node, err) from err

    def _run_bulk(
        self,
        steps: list[tuple],
        tail: Callable[[], None] | None = None,
        key: str | None = None,
        prefix: list[tuple] | None = None,
    ) -> None:
        """Run a bulked pass (one engine operation): the copies of ``prefix``, then ``steps``, then
        ``tail``; ``steps`` and ``tail`` as the CUDA graph ``key`` where this executor has graphs.

        While the profiler records, each step is timed and handed to the engine's profiler
        hook as ``executor:<node>``, so the trace shows every operator without the pass being
        split into an engine operation per operator (that split cost the MLP epoch 25%).
        """
        hook = get_engine().profiler_hook if engine_module.recording else None
        graphs = self._graphs
        if hook is None and graphs is not None and key is not None and self._monitor_now() is None:
            if prefix:
                self._run_steps(prefix)
            graphs.run(key, lambda: self._run_pass(steps, tail))
            return
        if prefix:
            steps = [*prefix, *steps]
        if hook is None:
            self._run_steps(steps)
        else:
            marked = self._step_marker()
            for step in steps:
                start = perf_counter_ns()
                self._run_steps([step])
                hook(operation_name(step, step[6].name), self._ctx, marked(), start, perf_counter_ns())
        if tail is not None:
            tail()

    def _run_pass(self, steps: list[tuple], tail: Callable[[], None] | None) -> None:
        self._run_steps(steps)
        if tail is not None:
            tail()

    def _step_marker(self) -> Callable[[], tuple[Var, ...]]:
        """What the profiler hook gets as the vars a step of a bulked pass wrote: nothing on the
        host; on a GPU a var with an event recorded on the compute stream after the step's
        kernels, which the profiler reads for the step's device time and stream row (the host
        times of a launch say nothing of when its kernels ran)."""
        if self._ctx.device_type != "gpu":
            return tuple
        backend: Any = get_backend(self._ctx)

        def marked() -> tuple[Var, ...]:
            var = Var()
            backend.record_done(backend.compute_stream, (), (var,))
            return (var,)

        return marked

    def _bulk_now(self) -> bool:
        """Push a pass as one operation (see the module docstring)?"""
        return self._bulk

    def _push(
        self,
        steps: list[tuple],
        reads: list,
        writes: list,
        name: str,
        tail: Callable[[], None] | None = None,
        key: str | None = None,
        prefix: list[tuple] | None = None,
        prefix_work: int | None = None,
    ) -> None:
        """Push a pass: the copy steps ``prefix`` (which change from call to call; ``prefix_work``:
        the elements they touch, if known), then the executor's own ``steps`` (the pass ``key``, the
        same at every call), then ``tail``."""
        if self._bulk_now():
            work = self._pass_work(key, steps)
            if prefix:
                work += sum(_step_work(step) for step in prefix) if prefix_work is None else prefix_work
            push(self._ctx, self._run_bulk, (steps, tail, key, prefix), reads, writes, operation_name(None, name), work)
            return
        if prefix:
            steps = [*prefix, *steps]
        # one operation per operator; each one writes the executor's internal var, so they run in
        # order, and all but the first read it too, so they inherit the error of an earlier step
        # of this pass (and are skipped) as the rest of a bulked pass would be, instead of clearing
        # it with their own success
        chained = [*reads, self._internal]
        for k, step in enumerate(steps):
            self._push_step(step, self._run_steps, ([step],), chained if k else reads, writes, step[6].name)
        if tail is not None:
            self._push_step(None, tail, (), chained if steps else reads, writes, name + "_grads")

    def _push_step(
        self, step: tuple | None, fn: Callable[..., Any], args: tuple, reads: list, writes: list, name: str
    ) -> None:
        """Push one operation of a pass run operator by operator (``step`` is None for the tail)."""
        push(self._ctx, fn, args, reads, writes, operation_name(step, name), None if step is None else _step_work(step))

    def _pass_work(self, key: str | None, steps: list[tuple]) -> int:
        """The elements the kernels of the pass ``key`` touch, each buffer once: the work by which
        the engine decides whether the pass may run on the pushing thread (see
        :data:`lazynd.runtime.device_push.SMALL_INLINE_MAX`).  Worked out at the pass's first push."""
        works = self._works
        if works is None:
            works = self._works = {}
        work = works.get(key)
        if work is None:
            work = works[key] = elements_touched(a for step in steps for a in _step_arrays(step))
        return work

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[Any]:
        """Push the forward pass (after copying ``kwargs`` into the named arguments); return ``outputs``.

        In a bulked pass the copies of NDArray arguments on the executor's host are the
        first steps of the pass itself rather than engine operations of their own.
        """
        is_train = bool(is_train)
        self._backward_since_forward = False
        self._forward_ran = True
        reads, writes = self._forward_vars[is_train]
        prefix: list[tuple] | None = None
        copy_work = None
        if kwargs:
            copies = self._copy_arguments(kwargs)
            if copies:
                reads, writes, targets, copy_work = copies_access(self, is_train, [dst for _, dst in copies])
                reads = reads + [src.var for src, _ in copies]
                sources = [src.data_array for src, _ in copies]
                prefix = [(copy_kernel, None, None, sources, targets, [], ARGUMENT_COPIES)]
        key = "forward_train" if is_train else "forward"
        self._push(self._steps[is_train], reads, writes, "executor_forward", None, key, prefix, copy_work)
        return self.outputs

    def _copy_arguments(self, kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
        """Copy ``kwargs`` into the named arguments; return the ``(source, target)`` copies left to the pass."""
        fold = self._bulk_now()
        left = []
        for key, value in kwargs.items():
            index = self._arg_index.get(key)
            if index is None:
                # (a TypeError, as MXNet's "Unknown argument")
                raise ArgumentTypeError(f"forward: {key!r} is not an argument; arguments are {self.arg_names}")
            target = self.arg_arrays[index]
            if isinstance(value, nd.NDArray):
                if value.data_array.shape != target.data_array.shape:
                    raise ShapeError(
                        f"forward: {key!r} has shape {value.shape}, the executor was bound with {target.shape}"
                    )
                same_ctx = value.context is target.context or value.context == target.context
                if fold and same_ctx:
                    if value.var is not target.var or value.data_array is not target.data_array:
                        left.append((value, target))
                else:
                    value.copyto(target)
            else:
                # MXNet refuses a host array of another shape: assigning it would broadcast silently
                if np.shape(value) != tuple(target.shape):
                    raise ShapeError(
                        f"forward: {key!r} has shape {np.shape(value)}, the executor was bound with {target.shape}"
                    )
                target[:] = value
        return left

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Push the backward pass; ``out_grads`` feed the outputs that are not losses.

        ``is_train`` is MXNet's; the backward pass is the gradient of the training forward, so
        only ``True`` is accepted.
        """
        if not is_train:
            raise LazyNDError(
                "backward: is_train=False (a backward pass in inference mode) is not supported; "
                "the gradients are those of the training forward (forward(is_train=True))"
            )
        if not self._grad_entry and not self._finish_grads:
            return
        if not self._forward_ran and self._forward_value_read is not None:
            # MXNet runs it on whatever the unwritten buffers hold: gradients of garbage
            raise LazyNDError(
                "backward: no forward has run on this executor, and the backward pass reads the forward value "
                f"{self._forward_value_read}; call forward(is_train=True) first"
            )
        if self._backward_since_forward and self._overwritten_forward is not None:
            raise LazyNDError(
                "backward: a second backward after one forward would read a forward value that the first one "
                f"overwrote: {self._overwritten_forward} (this graph's memory plan reuses its storage during "
                "backward); run forward again first"
            )
        if out_grads is None:
            given: list[Any] = []
        elif isinstance(out_grads, (nd.NDArray, np.ndarray)):
            given = [out_grads]  # one head gradient, not a list of its rows
        else:
            given = list(out_grads)
        for k, g in enumerate(given):
            if g is not None and not isinstance(g, nd.NDArray):
                raise LazyNDError(f"backward: out_grads[{k}] is a {type(g).__name__}, expected an NDArray")
        reads, writes = self._backward_vars
        head_copies = []
        for k, eid in self._head_grads:
            if k < len(given) and given[k] is not None:
                g = given[k]
                if tuple(g.shape) != tuple(self._buffers[eid].shape):
                    raise ShapeError(
                        f"backward: out_grads[{k}] has shape {g.shape}, expected {self._buffers[eid].shape}"
                    )
                head_copies.append((self._buffers[eid], g.data_array))
                reads = [*reads, g.var]
            elif self._head_grads:
                raise LazyNDError(f"backward: output {self.output_names[k]!r} is not a loss and needs out_grads[{k}]")
        prefix: list[tuple] | None = None
        if head_copies:
            sources, targets = [src for _, src in head_copies], [dst for dst, _ in head_copies]
            prefix = [(copy_kernel, None, None, sources, targets, [], HEAD_GRAD_COPIES)]
        self._push(self._backward_steps, reads, writes, "executor_backward", self._finish, "backward", prefix)
        self._backward_since_forward = True


def _step_arrays(step: tuple) -> list[Any]:
    """The arrays a step reads and writes (``None`` where an output is not computed)."""
    _fn, _kctx, _attrs, ins, outs, aux, _node = step
    return [*ins, *outs, *aux]


def _step_work(step: tuple) -> int:
    """The elements one step touches (its ``work`` when pushed alone)."""
    return elements_touched(_step_arrays(step))

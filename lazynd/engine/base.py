"""What every engine shares: its interface, running an operation, errors, and device sync.

An exception raised by an operation is wrapped in an :class:`~lazynd.errors.EngineError`,
recorded on the vars it writes (operations that read them are skipped and inherit it), and
raised at the next wait that touches one of them, or at ``waitall``.  A var keeps the error
until an operation writes it again: its value is garbage.  Except where a skipped operation
written a var that held a value (``w -= lr * grad`` or ``w[:] = w - lr * grad`` with a failed
``grad``): ``w`` keeps its value (:attr:`Var.value_kept <lazynd.engine.var.Var.value_kept>`),
and its error counts (at waits,
and for the operations that read it) only until a wait has reported it once (a skip after
that report makes it unreported again: those kept values are news).  Otherwise one
failed training batch would fail every later batch: the next forward reads the weights the
skipped update marked, its update marks them again, and so on for ever.

The engine knows no device.  A backend whose work runs asynchronously (GPU streams) registers
a callable with :func:`register_device_sync`; every engine calls it when a wait for all pushed
work ends, after the engine's own work (a GPU launch made on the pushing thread never passes
through the engine's queues, and may still run on its stream).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from time import perf_counter_ns
from typing import Any

from ..errors import EngineError
from . import interrupts
from .completion import Completion
from .operation import Operation
from .unreported import UnreportedErrors, keep_no_frames
from .var import Var

# how often Engine.wait_for_pushed (before a fork) counts the completions
PUSHED_POLL_S = 0.005

# called, in order, when a wait for all pushed work ends (see the module docstring)
_device_syncs: list[Callable[[], None]] = []


def register_device_sync(sync: Callable[[], None]) -> None:
    """Have every engine call ``sync()`` when a wait for all pushed work ends (once per callable).

    For a backend whose operations finish after they return (kernels queued on GPU streams):
    ``sync`` blocks until all of that backend's work is done.
    """
    if sync not in _device_syncs:
        _device_syncs.append(sync)


def synchronize_devices() -> None:
    """Call each registered device sync (see :func:`register_device_sync`)."""
    for sync in _device_syncs:
        sync()


def _raised_copy(exc: BaseException) -> BaseException:
    """A copy of the error ``exc`` kept on vars, for a wait to raise.

    Each wait raises a copy: a raised exception takes the traceback of the frames it passes,
    and every frame keeps its caller's, so the error kept on a var would keep the locals of the
    last wait's callers (a training step's batch) for as long as the var lives; and a traceback
    kept from an earlier raise would grow by a wait's frames every time.  The operator's own
    exception is the copy's cause, as it is the kept one's.
    """
    fresh = copy.copy(exc)
    fresh.__cause__ = exc.__cause__
    notes = getattr(exc, "__notes__", None)
    if notes is not None:  # a list of its own: a note the caller adds stays on the copy it caught
        fresh.__notes__ = list(notes)
    return fresh


class _NotReady:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_READY"


NOT_READY: Any = _NotReady()


def _reached(err: BaseException, writes: Sequence[Var]) -> Sequence[Var]:
    """The vars of ``writes`` that the failure ``err`` made garbage: ``writes`` itself unless it is a
    :class:`StepFailure` naming the ones it reaches."""
    if not isinstance(err, StepFailure) or err.reaches is None:
        return writes
    named = {id(v) for v in err.reaches}
    return [v for v in writes if id(v) in named]


class StepFailure(Exception):
    """Raised by an operation that runs several steps (an executor's bulked pass) when one fails.

    The engine reports the step, not the whole operation: the error raised at the wait
    names ``step`` (its ``kind``, e.g. the operator, and the operation it ran in) and
    chains the step's own exception.  ``reaches``, when given, are the operation's written vars
    that the failure made garbage (a replayed backward pass runs the steps that do not depend on
    the failed one): the engine records the error on those alone and the other writes as done.
    None: every var the operation writes.
    """

    def __init__(self, step: str, cause: BaseException, kind: str = "", reaches: Sequence[Var] | None = None) -> None:
        super().__init__(step, cause)
        self.step = step
        self.cause = cause
        self.kind = kind
        self.reaches = reaches


class OperationName(str):
    """An operation's name that also says which operator it runs and how the profiler's tables group
    it: an executor's step is ``executor:<node>`` in the trace and in errors, and its operator's name
    (``FullyConnected``, ``_backward_FullyConnected``) in the ``'operator'`` table, as MXNet's rows;
    a pass (``executor_forward``) counts in a table of its own (``category``), as it holds its steps.
    It is the plain name everywhere else (comparisons, ``startswith``, JSON)."""

    operator: str
    category: str

    def __new__(cls, name: str, operator: str, category: str = "operator") -> OperationName:
        made = super().__new__(cls, name)
        made.operator = operator
        made.category = category
        return made


class Engine:
    """Common part of the engines: error bookkeeping and the profiler hook.

    Subclasses implement :meth:`push`, :meth:`wait_for_var`, :meth:`wait_idle` and
    :meth:`num_pending`.
    """

    name = "base"
    # operations pushed and completed (wait markers included; those run at push excluded)
    completed = 0
    # whether operations may run on worker threads rather than the pushing one (a pusher holding
    # the GIL can then starve them; see lazynd.image's push loop)
    has_workers = False

    def __init__(self) -> None:
        self._unreported = UnreportedErrors()
        # set by lazynd.profiler while it runs: called after each successful operation as
        # hook(name, device, writes, start_ns, end_ns), times from time.perf_counter_ns
        self.profiler_hook: Callable[[str, Any, Sequence[Var], int, int], None] | None = None

    # -- interface -----------------------------------------------------------------------------
    def push(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str = "op",
        device: Any = None,
        inline_ok: bool = False,
    ) -> None:
        raise NotImplementedError

    def wait_for_var(self, var: Var, for_write: bool = False) -> None:
        raise NotImplementedError

    def wait_idle(self) -> None:
        """Block until every pushed operation has completed, device work included (see
        :func:`register_device_sync`); raise nothing (see :meth:`waitall`)."""
        raise NotImplementedError

    def num_pending(self) -> int:
        """Operations pushed and not yet completed (those run at push excluded)."""
        raise NotImplementedError

    def wait_for_pushed(self, stall_s: float | None = None) -> bool:
        """Block until as many operations have completed as are pending now, then every device
        is done; raise nothing.  Those, most likely (in whatever order they complete): unlike
        :meth:`wait_idle`, other threads that push on meanwhile do not prolong the wait.  The
        calling thread runs none of them (the workers do).

        With ``stall_s``, give up once none has completed for that long (an operation blocked
        for ever, on something the calling thread would do after the wait): False then.
        """
        target = self.completed + self.num_pending()
        seen, since = self.completed, time.monotonic()
        while self.num_pending() and self.completed < target:
            time.sleep(PUSHED_POLL_S)
            if self.completed != seen:
                seen, since = self.completed, time.monotonic()
            elif stall_s is not None and time.monotonic() - since > stall_s:
                return False
        synchronize_devices()
        return True

    def waitall(self) -> None:
        """Block until every pushed operation has completed, then raise the first unreported error."""
        self.wait_idle()
        self._raise_unreported()

    def take_unreported(self) -> tuple[list[BaseException], int]:
        """The errors no wait has reported yet, oldest first, and how many more operations failed
        whose errors were let go (see :mod:`.unreported`); they count as reported from now on."""
        return self._unreported.take()

    def shutdown(self) -> None:
        """Finish pending work and release the engine's threads; the engine is not used after."""
        self.waitall()

    def run_if_free(
        self,
        fn: Callable[..., Any],
        args: tuple,
        reads: Sequence[Var],
        writes: Sequence[Var],
        name: str = "op",
        device: Any = None,
    ) -> bool:
        """Run ``fn(*args)`` on this thread now, as a pushed operation, if its vars are free; else do nothing.

        True when it ran: every var in ``reads`` and ``writes`` could be claimed at once (no
        pending operation uses them) and the scheduling policy lets the calling thread run
        operations; its outcome is recorded as a push's is (an error reaches the next wait).
        False when nothing ran and nothing was pushed.  For an operation that must see its
        arguments as they are at the call (a NumPy array the caller may change afterwards):
        when it cannot run now, the caller snapshots them and pushes.
        """
        return False

    def run_now(self, fn: Callable[..., Any], args: tuple, reads: Sequence[Var]) -> Any:
        """Run the pure function ``fn(*args)`` on this thread if its inputs are ready.

        For operations that only read ``reads`` and return a *new* array (so they write no
        existing var): when every var in ``reads`` has its value ready (:meth:`Var.values_ready`:
        no claimed or queued write, no error), the result is computed at once, with no
        bookkeeping, and returned; otherwise (or while the profiler records, or if ``fn``
        raises) :data:`NOT_READY` is returned and the caller pushes the operation as usual, so
        errors still surface at a wait.
        """
        if self.profiler_hook is not None:
            return NOT_READY
        if not Var.values_ready(reads):
            return NOT_READY
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - pushed again by the caller: the error reaches a wait
            return NOT_READY

    # -- shared helpers ------------------------------------------------------------------------
    def _run(self, op: Operation) -> Completion | None:
        """Run ``op`` as :meth:`_run_call` runs a call (a merged one through :meth:`_run_parts`).

        Returns the :class:`Completion` of an operation that ends later, for the engine to
        complete it when it finishes.
        """
        if op.parts is None:
            return self._run_call(op.fn, op.args, op.checks, op.writes, op.name, op.device)  # type: ignore[arg-type]
        self._run_parts(op)
        return None

    def _run_parts(self, op: Operation, stop: Callable[[], bool] | None = None) -> bool:
        """Run the parts of a merged operation (:mod:`lazynd.engine.merging`); True when all ran.

        Only an engine that merges operations has any: it overrides this.
        """
        raise NotImplementedError(f"the {self.name} engine merges no operations")

    def _run_call(
        self,
        fn: Callable[..., Any],
        args: tuple,
        checks: Sequence[Var],
        writes: Sequence[Var],
        name: str,
        device: Any,
    ) -> Completion | None:
        """Run ``fn(*args)`` unless a var in ``checks`` failed; record the outcome on ``writes``.

        An input's error passes on to the outputs (the call is skipped; see the module docstring
        for what an in-place update keeps); the call's own failure is wrapped by
        :meth:`_make_error`; a success clears the outputs' errors.
        When ``fn`` returns a :class:`Completion`, the call is not over: nothing is recorded
        and the completion is returned (its outcome goes to :meth:`_record_outcome`).
        """
        exc = None
        for v in checks:
            if v.exc is not None and self._counts(v):
                exc = v.exc
                break
        if exc is not None:  # skipped: the outputs inherit the error
            for v in writes:
                v.skipped_write(exc, v in checks)
            kept = [v for v in writes if v.value_kept]
            if kept:  # news if reported before this skip; kept while these vars live
                self._unreported.add(exc, kept)
            return None
        hook = self.profiler_hook
        try:
            if hook is None:
                result = fn(*args)
            else:
                start = perf_counter_ns()
                result = fn(*args)
                hook(name, device, writes, start, perf_counter_ns())
            if result.__class__ is Completion:
                return result
        except BaseException as err:  # noqa: BLE001 - every failure must reach a wait
            reached = _reached(err, writes)
            exc = self._make_error(name, err, reached)
            if not isinstance(err, Exception):  # Ctrl-C, sys.exit(): for this thread (see .interrupts)
                interrupts.note(self, err, exc)
            for v in reached:
                v.failed_write(exc)
            if reached is not writes:  # the failure reached some outputs only: the others were written
                failed = {id(v) for v in reached}
                for v in writes:
                    if id(v) not in failed:
                        v.written()
            return None
        for v in writes:  # (Var.written, inlined: this runs for every output of every operation)
            v.exc = None
            v.holds_value = True
        return None

    def _record_outcome(self, name: str, writes: Sequence[Var], error: BaseException | None) -> None:
        """Record on ``writes`` how an operation that ended later went (``error`` None: it succeeded)."""
        if error is None:
            for v in writes:
                v.written()
            return
        exc = self._make_error(name, error, writes)
        for v in writes:
            v.failed_write(exc)

    def _counts(self, var: Var) -> bool:
        """Whether the error on ``var`` still counts: always for a garbage value, and for a kept
        one (see the module docstring) until a wait has reported it."""
        return not var.value_kept or id(var.exc) in self._unreported  # (a dict lookup: no lock)

    def _make_error(self, name: str, err: BaseException, writes: Sequence[Var]) -> EngineError:
        """Wrap an operator's exception (chained, without frames: see :mod:`.unreported`) and
        remember it, as the error of ``writes``, until a wait reports it."""
        if isinstance(err, StepFailure):  # one step of a bulked operation: name that step
            where = f"{err.kind}, in '{name}'" if err.kind else f"in '{name}'"
            label, name, err = f"'{err.step}' ({where})", err.step, err.cause
        else:
            label = f"'{name}'"
        keep_no_frames(err)
        exc = EngineError(f"operator {label} failed: {type(err).__name__}: {err}", name)
        exc.__cause__ = err
        self._unreported.add(exc, writes)
        return exc

    def forget_unreported(self, exc: BaseException) -> None:
        """Count ``exc`` as reported (it reached the user another way: see :mod:`.interrupts`)."""
        self._unreported.forget(exc)

    def _raise_for_var(self, var: Var) -> None:
        exc = var.exc
        if exc is not None and self._counts(var):
            self._unreported.forget(exc)
            raise _raised_copy(exc)

    def _raise_unreported(self) -> None:
        errors, let_go = self.take_unreported()
        if not errors:
            return
        first = errors[0]
        if len(errors) + let_go > 1:
            first.add_note(f"{len(errors) + let_go - 1} more operator(s) failed since the last wait")
        raise _raised_copy(first)

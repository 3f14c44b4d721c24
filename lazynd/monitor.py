"""``Monitor`` (``mx.mon.Monitor``): statistics of outputs, weights and gradients while training.

A monitor is installed on executors (``install``), which then hand it every
operator output they compute.  It records only during the batches it is
activated for — one in every ``interval``, opened by ``tic()`` before the
forward pass and closed by ``toc()`` after the update — so the other batches
pay nothing but a test (the executor asks before each pass and copies no output
for them).  ``toc()`` adds the arguments (weights) and the auxiliary states of
the executors that ran while it recorded (of every installed one when none did;
gradients are the backward outputs, ``fc1_backward_output1``), applies
``stat_func`` to everything recorded whose name matches ``pattern`` and returns
``(batch, name, text)`` rows; ``toc_print()`` logs them.

The executor calls the monitor from an engine worker, with a private copy of
each output; the monitor only stores that copy there, and computes the
statistics in the caller's thread at ``toc()``.
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

from . import ndarray as nd
from .errors import LazyNDError
from .log import get_logger
from .ndarray import NDArray

# the operator functions are generated at import time, so type checkers cannot see them
_nd_ops: Any = nd
_log = get_logger(__name__)

__all__ = ["Monitor", "mean_abs_norm"]


def mean_abs_norm(array: NDArray) -> NDArray:
    """The default statistic: ``norm(x) / sqrt(x.size)``, the root mean square of ``x``.

    Examples
    --------
    >>> import lazynd as mx
    >>> float(mean_abs_norm(mx.nd.ones((2, 8)) * 3).asscalar())
    3.0
    """
    return _nd_ops.norm(array) / math.sqrt(max(array.size, 1))


class Monitor:
    """Record a statistic of every output, weight and gradient once every ``interval`` batches.

    Parameters
    ----------
    interval : int
        Record during one batch in every ``interval`` (the first one, then every ``interval``-th).
    stat_func : callable, optional
        ``stat_func(NDArray) -> NDArray`` (or a list of them); default :func:`mean_abs_norm`.
    pattern : str
        A regular expression; only names it matches (from the start, as ``re.match``) are recorded.
    sort : bool
        Sort the rows of ``toc()`` by name.
    monitor_all : bool
        Record every operator's inputs too, not only its outputs (as MXNet 1.9.1's ``monitor_all``).

    Examples
    --------
    >>> import lazynd as mx, lazynd_sym as sym
    >>> net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    >>> ex = net.simple_bind(mx.cpu(), data=(1, 3))
    >>> ex.arg_dict["fc_weight"][:] = 1.0
    >>> mon = mx.mon.Monitor(1, pattern="fc_(output|weight)$", sort=True)
    >>> mon.install(ex)
    >>> mon.tic()
    >>> _ = ex.forward(data=mx.nd.ones((1, 3)))
    >>> [(step, name) for step, name, _ in mon.toc()]
    [(1, 'fc_output'), (1, 'fc_weight')]
    """

    def __init__(
        self,
        interval: int,
        stat_func: Callable[[NDArray], Any] | None = None,
        pattern: str = ".*",
        sort: bool = False,
        monitor_all: bool = False,
    ) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
            raise LazyNDError(f"Monitor: interval must be a positive int, got {interval!r}")
        if stat_func is not None and not callable(stat_func):
            raise LazyNDError(f"Monitor: stat_func must be callable, got {type(stat_func).__name__}")
        try:
            self.re_prog = re.compile(pattern)
        except (re.error, TypeError) as err:
            raise LazyNDError(f"Monitor: pattern {pattern!r} is not a regular expression: {err}") from err
        self.interval = interval
        self.stat_func = stat_func if stat_func is not None else mean_abs_norm
        self.sort = sort
        self.monitor_all = bool(monitor_all)
        self.step = 0
        self.activated = False
        self._exes: list[weakref.ref] = []  # see the exes property
        # the installed executors that ran a pass since tic(): a module keeps the executors of
        # each set of input shapes it has seen, all installed, but only the current ones ran
        self._ran: set[weakref.ref] = set()
        self.queue: list[tuple[int, str, NDArray]] = []
        self._lock = threading.Lock()

    def stat_helper(self, name: str, array: NDArray) -> None:
        """The executor's callback: keep ``array`` (already a private copy) when recording and ``name`` matches."""
        if not self.activated or not self.re_prog.match(name):
            return
        with self._lock:
            self.queue.append((self.step, name, array))

    def install(self, exe: Any) -> None:
        """Have executor ``exe`` report its outputs to this monitor (and its arrays at ``toc``)."""
        if not callable(getattr(exe, "set_monitor_callback", None)):
            raise LazyNDError(f"Monitor.install: expected an Executor, got {type(exe).__name__}")
        ref = weakref.ref(exe)
        # the executor asks whether this batch is recorded before it copies any output
        exe.set_monitor_callback(self.stat_helper, active=partial(self._active, ref), monitor_all=self.monitor_all)
        self._exes = [known for known in self._exes if known() is not None] + [ref]

    @property
    def exes(self) -> list[Any]:
        """The installed executors still in use.  The monitor holds them weakly: each holds the
        monitor (its callback), so a strong list would keep every executor a monitor ever watched
        alive until Python's cyclic collector ran."""
        return [exe for exe in (ref() for ref in self._exes) if exe is not None]

    def _active(self, exe: weakref.ref) -> bool:
        # asked by executor ``exe`` before each of its passes
        if self.activated:
            with self._lock:
                self._ran.add(exe)
        return self.activated

    def tic(self) -> None:
        """Call before each forward pass: starts recording on every ``interval``-th batch."""
        if self.step % self.interval == 0:
            self._wait_for_executors()  # outputs of earlier batches must not land in this one
            with self._lock:
                self.queue = []
                self._ran = set()
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """Call after the update: end recording and return ``(batch, name, statistic as text)`` rows."""
        if not self.activated:
            return []
        self._wait_for_executors()
        self.activated = False
        with self._lock:
            recorded, self.queue = self.queue, []
            ran, self._ran = self._ran, set()
        # as MXNet's module, whose monitor watches the executors of its current shapes only:
        # not the arrays of executors (other shapes, other buckets) that this batch did not use
        exes = [exe for exe in self.exes if weakref.ref(exe) in ran] or self.exes
        for exe in exes:
            arrays = list(zip(exe.arg_names, exe.arg_arrays, strict=False))
            arrays += list(zip(exe.aux_names, exe.aux_arrays, strict=False))
            recorded += [(self.step, name, array) for name, array in arrays if self.re_prog.match(name)]
        if self.sort:
            recorded.sort(key=lambda row: row[1])
        return [(step, name, self._format(self.stat_func(array))) for step, name, array in recorded]

    def toc_print(self) -> None:
        """``toc()``, each row logged at INFO level."""
        for step, name, text in self.toc():
            _log.info("Batch: %7d %-30s %s", step, name, text)

    def _wait_for_executors(self) -> None:
        for exe in self.exes:
            for array in [*exe.arg_arrays, *(g for g in exe.grad_arrays if g is not None), *exe.outputs]:
                array.wait_to_read()

    @staticmethod
    def _format(stats: Any) -> str:
        values = stats if isinstance(stats, (list, tuple)) else [stats]
        texts = []
        for value in values:
            if not isinstance(value, NDArray):
                raise LazyNDError(
                    f"Monitor: stat_func must return an NDArray or a list of them, got {type(value).__name__}"
                )
            # MXNet's text: a (1,)-shaped value as a scalar, any other as its array; each ends in a tab
            texts.append((str(value.asscalar()) if value.shape == (1,) else str(value.asnumpy())) + "\t")
        return "".join(texts)

"""Checks of operator inputs made on the GPU, raised on the host at its next wait.

Some inputs can only be checked by looking at their values: a class label within the classes, an
index within its axis.  On the host the operator checks them and raises at once.  On a GPU,
reading the values back would make the host wait for the device at every call, and would keep an
executor's pass from being captured into a CUDA graph (:mod:`.graphs`).  Instead the operator
launches a check (:meth:`DeviceChecks.check_range`, ``checks.cu``), which counts the values out of
range into a small report array on the device and notes the first one.  The host reads the report
whenever it waits for the device anyway -- ``asnumpy``/``asscalar`` (:meth:`CupyBackend.to_numpy`)
and ``waitall`` (:meth:`CupyBackend.synchronize`) -- and raises an
:class:`~lazynd.errors.OperatorError` naming the operator, the argument, the value and the range.
So a bad label is an error on both devices; on a GPU it surfaces at the next wait rather than at
the call, as the engine's other errors do.

A kernel that reads the values anyway may make the check itself, with no launch of its own
(``softmax.cu``'s SoftmaxOutput gradient): :meth:`DeviceChecks.report_for` gives it the report and
the check's number, and ``checks.cuh`` the range test and the writing of a finding that
``checks.cu``'s kernel uses too, so the host reads and words every finding the same way.

The report is read only on a device where a check was ever launched: other programs pay nothing.
The report array is made once per device and never freed, since a captured graph holds its
address; a check's identity (operator, argument, range) is a number the kernel writes, the same at
every call with those, so a graph's replays report as its eager runs did.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..base import out_of_range
from .sources import dtype_name, launch_config, load_file

_SOURCE = load_file("checks.cu")
_CHECKED_DTYPES = ("float32", "float64", "int32", "int64")


class DeviceChecks:
    """The range checks of one device and their report (see the module docstring)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._report: Any = None  # float64[4] on the device: count, check, value, position
        self._checks: dict[tuple, int] = {}  # (op, argument, low, high) -> its number
        self._described: list[tuple] = []
        self._lock = threading.Lock()

    def report_for(self, op: str, argument: str, low: float, high: float, inclusive: bool = False) -> tuple[Any, float]:
        """The report array (float64[4] on the device) and the number of the check that values lie in
        ``[low, high)`` (``[low, high]`` when ``inclusive``), for a kernel that checks the values it
        reads itself and writes a finding as ``checks.cuh`` does; made on first use, then the same
        at every call with these arguments (a captured graph holds both)."""
        key = (op, argument, float(low), float(high), inclusive)
        number = self._checks.get(key)
        report = self._report
        if number is None or report is None:
            with self._lock:
                number = self._checks.get(key)
                if number is None:
                    number = self._checks[key] = len(self._described)
                    self._described.append(key)
                if self._report is None:
                    with self._backend.device, self._backend.compute_stream:
                        self._report = self._backend.cupy.zeros(4, self._backend.cupy.float64)  # kept for good
                report = self._report
        return report, float(number)

    def check_range(
        self, op: str, argument: str, values: Any, low: float, high: float, inclusive: bool = False
    ) -> None:
        """Launch, on the current stream, the check that every element of ``values`` (a device
        array) lies in ``[low, high)`` (``[low, high]`` when ``inclusive``); one that does not
        raises at the host's next wait."""
        if values.size == 0:
            return
        cupy = self._backend.cupy
        kind = dtype_name(values.dtype)
        if kind not in _CHECKED_DTYPES:
            values, kind = values.astype(cupy.float64), "float64"
        values = cupy.ascontiguousarray(values)
        report, number = self.report_for(op, argument, low, high, inclusive)
        kernel = _SOURCE.function(self._backend.device_id, f"lazynd_check_range_{kind}")
        grid, block = launch_config(values.size)
        kernel(
            grid,
            block,
            (
                values,
                np.int64(values.size),
                np.float64(low),
                np.float64(high),
                np.int32(inclusive),
                np.float64(number),
                report,
            ),
        )

    def raise_found(self) -> None:
        """Raise what the checks launched so far found (the caller has waited for them); the report
        is cleared first, so each finding is raised once."""
        report = self._report
        if report is None:
            return
        # read on the compute stream: after every check launched so far (a wait for the device's
        # queued work, as PyTorch's reads of a value make; only where checks were launched)
        with self._backend.device, self._backend.compute_stream:
            found = report.get(stream=self._backend.compute_stream)
            if not found[0]:
                return
            report.fill(0)  # ordered before any later check, on the same stream
        op, argument, low, high, inclusive = self._described[int(found[1])]
        where = f"; found by a check on gpu({self._backend.device_id}) and raised at this wait"
        raise out_of_range(op, argument, float(found[2]), int(found[3]), int(found[0]), low, high, inclusive, where)

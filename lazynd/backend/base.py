"""The small interface the engine and the operators need from one kind of device."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from ..engine.var import Var
from ..errors import OperatorError


class Backend:
    """One device kind.  ``xp`` is its array module (NumPy or CuPy).

    Kernels receive backend arrays and write into the output buffers they are
    given; everything device-specific (streams, events, pools) stays here.
    """

    name = "base"
    xp: Any = np

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        raise NotImplementedError

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        raise NotImplementedError

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any) -> Any:
        raise NotImplementedError

    def new_var(self, data: Any) -> Var:
        """The engine var of ``data``, an array fresh from :meth:`empty`."""
        return Var()

    def var_written_now(self, data: Any) -> Var:
        """The var of ``data``, an array fresh from the allocator that work launched just now wrote
        (called inside a running operation, e.g. a private copy of an output): a later operation or
        host read of it is ordered after that work.  On the host the work is already done."""
        return self.new_var(data)

    def to_numpy(self, array: Any) -> np.ndarray:
        """A host copy (or the array itself on the CPU); the caller has waited."""
        raise NotImplementedError

    def wrap(
        self, fn: Callable[..., Any], reads: Sequence[Any], writes: Sequence[Any], kind: str = "compute"
    ) -> Callable[..., Any]:
        """Return the callable the engine runs for ``fn`` on this device.

        On the GPU this selects the stream for ``kind`` ('compute', 'h2d', 'd2h'),
        waits for the events of the vars read and written, runs ``fn`` and records
        the event of the vars written.  On the CPU it is ``fn`` itself.
        """
        return fn

    def scatter_add(self, target: Any, index: Any, values: Any) -> None:
        """``target[index] += values`` with repeated indices summed (``np.add.at``)."""
        np.add.at(target, index, values)

    def matmul(self, a: Any, b: Any, out: Any) -> None:
        """``out[...] = a @ b`` (``np.matmul``'s rules), the route every operator's GEMM takes."""
        self.xp.matmul(a, b, out=out)

    def constant(self, key: Hashable, make: Callable[[], np.ndarray], dtype: Any) -> Any:
        """The values ``make()`` gives, as an array of ``dtype`` on this device, made once per
        ``(key, dtype)`` and kept for the program's life: tables a kernel reads at every call
        (interpolation weights, per-channel constants), which a CUDA graph of a pass may hold by
        address.  Shared by every caller, so never to be written (NumPy's are read-only)."""
        table = self.__dict__.setdefault("_constants", {})
        found = table.get((key, np.dtype(dtype)))
        if found is None:
            found = self.xp.array(make(), dtype=dtype)  # a copy of its own, whatever make() gave
            if self.xp is np:
                found.flags.writeable = False
            found = table.setdefault((key, np.dtype(dtype)), found)
        return found

    def check_range(
        self, op: str, argument: str, values: Any, low: float, high: float, inclusive: bool = False
    ) -> None:
        """Check that every element of ``values`` lies in ``[low, high)`` (``[low, high]`` when
        ``inclusive``; NaN never does): on the
        host an :class:`~lazynd.errors.OperatorError` at once, naming ``op``, ``argument`` and the
        first value out of range; on a GPU at the next wait (:mod:`lazynd.backend.cuda.checks`)."""
        flat = np.asarray(values).reshape(-1)
        bad = ~((flat >= low) & ((flat <= high) if inclusive else (flat < high)))
        if flat.size and bad.any():
            position = int(np.argmax(bad))
            raise out_of_range(op, argument, float(flat[position]), position, int(bad.sum()), low, high, inclusive)

    def launch_graphs(self) -> Any:
        """A recorder of launch sequences replayed as graphs (:class:`lazynd.backend.cuda.graphs.LaunchGraphs`),
        or None where this device has none (the CPU)."""
        return None

    def synchronize(self) -> None:
        """Wait for all work queued on this device."""

    def empty_cache(self) -> None:
        """Return cached memory to the system."""


def out_of_range(
    op: str,
    argument: str,
    value: float,
    position: int,
    count: int,
    low: float,
    high: float,
    inclusive: bool = False,
    where: str = "",
) -> OperatorError:
    """The error of :meth:`Backend.check_range`: the first value out of range, where it was and how
    many others were; ``where`` adds how it was found (a device's check)."""

    def shown(x: float) -> int | float:
        return int(x) if float(x).is_integer() else float(x)

    others = f" (and {count - 1} other value(s))" if count > 1 else ""
    interval = f"[{shown(low)}, {shown(high)}{']' if inclusive else ')'}"
    return OperatorError(
        f"{op}: {argument} out of range: {shown(value)} at position {position}{others}, "
        f"expected a value in {interval}{where}"
    )

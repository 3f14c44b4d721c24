"""``mx.engine.set_bulk_size`` and ``mx.engine.bulk``: how many operations the engine may run as one.

MXNet's imperative bulking bundles up to ``size`` consecutive operations into one engine
operation.  lazynd's engine does the same by merging a dependent CPU operation into the one
pushed just before it (:mod:`.merging`); the bulk size is the most parts such a merged operation
may hold, :data:`~lazynd.engine.merging.MAX_PARTS` (8) by default.  A size of 1 or less turns
merging off: every operation runs on its own.  Results are the same at every size; only the
engine's bookkeeping changes.

The size holds for the whole process (MXNet keeps one per thread), because the operation a
push merges into is the engine's last one, whichever thread pushed it.  The naive engine, which
runs each operation at push, never merges.
"""

from __future__ import annotations

import operator
from types import TracebackType

from ..errors import LazyNDError
from . import merging


def set_bulk_size(size: int) -> int:
    """Let a merged operation hold at most ``size`` operations (1 or less: none are merged); return the previous size.

    Examples
    --------
    >>> import lazynd as mx
    >>> previous = mx.engine.set_bulk_size(1)  # every operation on its own
    >>> mx.engine.set_bulk_size(previous)
    1
    """
    try:
        size = operator.index(size)
    except TypeError:
        raise LazyNDError(f"engine.set_bulk_size: 'size' must be an integer, got {type(size).__name__}") from None
    previous = merging.max_parts
    merging.max_parts = size
    return previous


class bulk:  # noqa: N801 - MXNet's name: mx.engine.bulk(size)
    """A ``with`` block in which the bulk size is ``size``; the previous size comes back at its end.

    Examples
    --------
    >>> import lazynd as mx
    >>> with mx.engine.bulk(16):
    ...     x = mx.nd.zeros((1,))
    ...     for _ in range(100):
    ...         x += 1
    >>> x.asnumpy().tolist()
    [100.0]
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._previous: int | None = None

    def __enter__(self) -> bulk:
        self._previous = set_bulk_size(self._size)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._previous is not None:
            set_bulk_size(self._previous)
            self._previous = None

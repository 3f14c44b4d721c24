"""``mx.util``: the names MXNet 1.x programs import from ``mxnet.util``.

``getenv``/``setenv`` are the ones of :mod:`lazynd.testing_environment` (lazynd reads its settings
from :data:`os.environ`; MXNet's set its C runtime's environment).

The NumPy-shape switch (``mx.np_shape``, ``mx.use_np_shape``, ``mx.is_np_shape``): MXNet 1.x reads
``()`` as "unknown shape" and ``0`` as "unknown dimension" unless a program turns NumPy shape
semantics on.  lazynd's NDArrays always have NumPy's semantics (``()`` is a scalar, ``0`` a
zero-size dimension: every NDArray call infers its shapes with the switch on).  Symbols keep
MXNet's legacy reading of ``0`` as unknown; with the switch on, a ``Variable`` also takes ``-1``
for an unknown size and ``infer_shape_partial`` reports unknown sizes as ``-1`` and unknown
shapes as ``None``, as MXNet does.  Like MXNet's, the switch's state belongs to the calling thread.

Examples:
    >>> import lazynd as mx
    >>> mx.util.setenv("LAZYND_EXAMPLE", "3"); mx.util.getenv("LAZYND_EXAMPLE")
    '3'
    >>> mx.util.setenv("LAZYND_EXAMPLE", None)
    >>> with mx.np_shape():
    ...     mx.is_np_shape()
    True
    >>> mx.is_np_shape()
    False
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .testing_environment import getenv, setenv

__all__ = ["getenv", "setenv", "is_np_shape", "set_np_shape", "np_shape", "use_np_shape"]

_F = TypeVar("_F", bound=Callable[..., Any])
_state = threading.local()


def is_np_shape() -> bool:
    """Whether the calling thread has NumPy shape semantics switched on."""
    return bool(getattr(_state, "active", False))


def set_np_shape(active: bool) -> bool:
    """Switch NumPy shape semantics on or off for the calling thread; returns the previous state."""
    previous = is_np_shape()
    _state.active = bool(active)
    return previous


@contextmanager
def np_shape(active: bool = True) -> Iterator[None]:
    """Run a block with NumPy shape semantics on (or off), restoring the previous state after.

    Examples:
        >>> import lazynd as mx
        >>> with mx.np_shape(active=False):
        ...     mx.is_np_shape()
        False
    """
    previous = set_np_shape(active)
    try:
        yield
    finally:
        set_np_shape(previous)


def use_np_shape(func: _F) -> _F:
    """Decorate a function so that it runs with NumPy shape semantics on.

    The wrapper keeps the function's name and docstring.

    Examples:
        >>> import lazynd as mx
        >>> @mx.use_np_shape
        ... def scalar_one():
        ...     return mx.nd.ones(shape=())
        >>> scalar_one().shape
        ()
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with np_shape(active=True):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

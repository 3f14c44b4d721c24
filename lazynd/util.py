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

from .errors import UnsupportedError
from .testing_environment import get_cuda_compute_capability, getenv, setenv

__all__ = [
    "getenv", "setenv", "is_np_shape", "set_np_shape", "np_shape", "use_np_shape", "is_np_array",
    "get_gpu_count", "get_gpu_memory", "get_cuda_compute_capability",
]  # fmt: skip

# MXNet's switches and wrappers of its NumPy *array* semantics (mx.np arrays in place of NDArrays):
# the mx.np face they serve is not part of lazynd, so naming one refuses, as mx.np does
NP_ARRAY_NAMES = (
    "set_np", "reset_np", "use_np", "use_np_array", "np_array", "np_ufunc_legal_option",
    "wrap_np_unary_func", "wrap_np_binary_func",
)  # fmt: skip

_F = TypeVar("_F", bound=Callable[..., Any])


class _NpShapeState(threading.local):
    """Whether NumPy shape semantics are on, per thread; the class attribute is the default, so
    reading it never raises inside (``getattr`` with a default on a plain ``threading.local``
    raises and catches AttributeError: 0.35 us of every shape check)."""

    active = False


_state = _NpShapeState()


def is_np_shape() -> bool:
    """Whether the calling thread has NumPy shape semantics switched on."""
    return _state.active


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


def is_np_array() -> bool:
    """Whether MXNet's NumPy array semantics (``mx.np`` arrays in place of NDArrays) are on: never in
    lazynd, which has no ``mx.np`` face, so code that asks takes its NDArray path.

    Examples:
        >>> import lazynd as mx
        >>> mx.util.is_np_array()
        False
    """
    return False


def get_gpu_count() -> int:
    """Number of GPUs (0 without CuPy or a driver), as ``mx.context.num_gpus()``.

    Examples:
        >>> import lazynd as mx
        >>> mx.util.get_gpu_count() == mx.context.num_gpus()
        True
    """
    from .context import num_gpus

    return num_gpus()


def get_gpu_memory(gpu_dev_id: int) -> tuple[int, int]:
    """``(free, total)`` bytes of ``gpu(gpu_dev_id)``'s memory, as ``mx.context.gpu_memory_info``;
    a :class:`~lazynd.ContextError` without that GPU."""
    from .context import gpu_memory_info

    return gpu_memory_info(gpu_dev_id)


def np_array_refusal(name: str) -> UnsupportedError:
    """The error for one of :data:`NP_ARRAY_NAMES`, looked up as ``mx.util.<name>`` or ``mx.<name>``."""
    return UnsupportedError(
        f"mx.util.{name}: MXNet's NumPy array semantics (mx.np arrays, switched on by set_np/use_np) are not "
        "part of lazynd; mx.nd NDArrays already follow NumPy's shape rules (mx.util.np_shape)"
    )


def __getattr__(name: str) -> Any:
    if name in NP_ARRAY_NAMES:
        raise np_array_refusal(name)
    raise AttributeError(f"module 'lazynd.util' has no attribute {name!r}")

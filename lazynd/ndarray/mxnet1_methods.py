"""NDArray methods of MXNet 1.x's Python class: in-place slice assignment and the switch
between legacy and ``mx.np`` arrays.

``slice_assign(rhs, begin, end, step)`` and ``slice_assign_scalar(value, begin, end, step)``
write into ``self[begin:end:step]`` (``None`` entries take the axis' default, a negative step
walks backwards, as ``slice``) through the ``_slice_assign`` operators with ``out=self``, so the
write is one engine operation on the array's own storage, and return ``self``.  lazynd has no
``mx.np`` arrays: ``as_nd_ndarray()`` returns the array itself and ``as_np_ndarray()`` refuses.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError
from .dispatch import invoke_by_name


def slice_assign(self: Any, rhs: Any, begin: Any, end: Any, step: Any) -> Any:
    """Write ``rhs`` into ``self[begin:end:step]`` in place and return ``self``.

    ``rhs`` has the region's shape (and ``self``'s dtype and device); ``begin``, ``end`` and
    ``step`` are tuples as ``slice`` takes them, ``None`` for an axis' default.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.zeros((2, 3))
    >>> x.slice_assign(mx.nd.array([[1, 2]]), (1, None), (2, None), (None, -2)) is x
    True
    >>> x.asnumpy()
    array([[0., 0., 0.],
           [2., 0., 1.]], dtype=float32)
    """
    invoke_by_name("_slice_assign", (self, rhs), {"begin": begin, "end": end, "step": step}, out=self)
    return self


def slice_assign_scalar(self: Any, value: Any, begin: Any, end: Any, step: Any) -> Any:
    """Write ``value`` (cast to ``self``'s dtype) into ``self[begin:end:step]`` in place and return ``self``.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.zeros((2, 4))
    >>> x.slice_assign_scalar(7, (1, None), (2, None), (None, 2)).asnumpy()
    array([[0., 0., 0., 0.],
           [7., 0., 7., 0.]], dtype=float32)
    """
    invoke_by_name(
        "_slice_assign_scalar", (self,), {"scalar": float(value), "begin": begin, "end": end, "step": step}, out=self
    )
    return self


def as_nd_ndarray(self: Any) -> Any:
    """The array as a legacy ``mx.nd`` NDArray: itself, the only kind lazynd has.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.ones(2)
    >>> x.as_nd_ndarray() is x
    True
    """
    return self


def as_np_ndarray(self: Any) -> Any:
    """Refused: lazynd has no ``mx.np`` arrays (an :class:`~lazynd.errors.UnsupportedError`)."""
    raise UnsupportedError(
        "NDArray.as_np_ndarray: MXNet's NumPy arrays (mx.np) are not part of lazynd; mx.nd NDArrays already "
        "follow NumPy's shape rules (mx.util.np_shape), and as_nd_ndarray() gives the array itself"
    )

"""MXNet's symbol functions that are not single operators: ``pow``, ``maximum``, ``minimum``,
``hypot`` (symbols or numbers), and ``zeros``, ``ones``, ``full``, ``arange``, ``eye``, ``linspace`` (graph
nodes that fill), ``histogram`` and ``split_v2``, with MXNet's signatures (their parameters by position too).

Examples
--------
>>> import lazynd_sym as sym
>>> sym.pow(2, 3)
8
>>> sym.maximum(sym.Variable("x"), 0).list_arguments()
['x']
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from lazynd.errors import OperatorError
from lazynd.ndarray.zipfian import sample_zipfian

from .creation import invoke
from .symbol import Symbol

# name -> (symbol-symbol operator, symbol-number operator, number-symbol operator, numbers)
_TABLE: dict[str, tuple[str, str, str, Callable[[Any, Any], Any]]] = {
    "pow": ("_power", "_power_scalar", "_rpower_scalar", lambda x, y: x**y),
    "maximum": ("_maximum", "_maximum_scalar", "_maximum_scalar", max),
    "minimum": ("_minimum", "_minimum_scalar", "_minimum_scalar", min),
    "hypot": ("_hypot", "_hypot_scalar", "_hypot_scalar", lambda x, y: (x * x + y * y) ** 0.5),
}


def _operator(name: str) -> Callable[..., Symbol]:
    """A function applying the registered operator ``name``, its nodes named as MXNet's functions
    name theirs: by :func:`~.creation.name_hint` (``_power_scalar`` -> ``_powerscalar0``)."""

    def function(*args: Any, **kwargs: Any) -> Symbol:
        return invoke(name, args, kwargs)

    return function


def _apply(name: str, left: Any, right: Any) -> Any:
    both, scalar, reflected, python = _TABLE[name]
    for side, value in (("left", left), ("right", right)):
        if not isinstance(value, (Symbol, numbers.Number)):
            raise OperatorError(f"{name}: {side} must be a Symbol or a number, got {type(value).__name__}")
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return _operator(both)(left, right)
    if isinstance(left, Symbol):
        return _operator(scalar)(left, scalar=right)
    if isinstance(right, Symbol):
        return _operator(reflected)(right, scalar=left)
    return python(left, right)


def pow(base: Any, exp: Any) -> Any:  # noqa: A001 - MXNet's name
    """``base ** exp`` for symbols and numbers."""
    return _apply("pow", base, exp)


power = pow  # MXNet 1.x's name for the same function


def maximum(left: Any, right: Any) -> Any:
    """The elementwise maximum of symbols and numbers."""
    return _apply("maximum", left, right)


def minimum(left: Any, right: Any) -> Any:
    """The elementwise minimum of symbols and numbers."""
    return _apply("minimum", left, right)


def hypot(left: Any, right: Any) -> Any:
    """``sqrt(left**2 + right**2)`` for symbols and numbers."""
    return _apply("hypot", left, right)


def _dtype_or_default(dtype: Any) -> Any:
    """MXNet's default dtype, float32, where none is given (only None: another value, an array
    included, is the operator's ``dtype`` parameter to parse and refuse by name)."""
    return "float32" if dtype is None else dtype


def zeros(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A graph node producing zeros of ``shape``."""
    return _operator("_zeros")(shape=shape, dtype=_dtype_or_default(dtype), **kwargs)


def ones(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A graph node producing ones of ``shape``."""
    return _operator("_ones")(shape=shape, dtype=_dtype_or_default(dtype), **kwargs)


def full(shape: Any, val: float, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A graph node producing ``val`` everywhere in ``shape``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.sym.full((2,), 3).eval()[0].asnumpy()
    array([3., 3.], dtype=float32)
    """
    value = float(val) if isinstance(val, numbers.Real) else val  # MXNet's text: '3.0' (others: the parser names them)
    return _operator("_full")(shape=shape, value=value, dtype=_dtype_or_default(dtype), **kwargs)


def split_v2(ary: Symbol, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Symbol:
    """Split along ``axis`` into equal sections (an int: the ``split`` operator) or at indices (``slice_axis``).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.sym.split_v2(mx.sym.var("x"), (1, 3)).infer_shape(x=(6, 2))[1]
    [(1, 2), (2, 2), (3, 2)]
    """
    from lazynd.ndarray.splitting import section_bounds

    from .creation import Group

    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        return _operator("split")(ary, num_outputs=indices_or_sections, axis=axis, squeeze_axis=squeeze_axis)
    pieces = [
        _operator("slice_axis")(ary, axis=axis, begin=b, end=e) for b, e in section_bounds(None, indices_or_sections)
    ]
    if squeeze_axis:
        pieces = [_operator("squeeze")(piece, axis=axis) for piece in pieces]
    return pieces[0] if len(pieces) == 1 else Group(pieces)


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1.0,
    repeat: int = 1,
    infer_range: bool = False,
    name: str | None = None,
    dtype: Any = None,
) -> Symbol:
    """A graph node producing ``start, start + step, ...`` below ``stop``, each value ``repeat`` times.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.sym.arange(0, 5, 2, 2).eval()[0].asnumpy()
    array([0., 0., 2., 2., 4., 4.], dtype=float32)
    """
    return _operator("_arange")(
        start=start,
        stop=stop,
        step=step,
        repeat=repeat,
        infer_range=infer_range,
        name=name,
        dtype=_dtype_or_default(dtype),
    )


def eye(N: int, M: int = 0, k: int = 0, dtype: Any = None, **kwargs: Any) -> Symbol:  # noqa: N803 - MXNet's names
    """A graph node producing an N x M matrix (M = 0: N x N) with ones on diagonal ``k``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.sym.eye(2, 3, 1, "int32").eval()[0].asnumpy()
    array([[0, 1, 0],
           [0, 0, 1]], dtype=int32)
    """
    return _operator("_eye")(N=N, M=M, k=k, dtype=_dtype_or_default(dtype), **kwargs)


def linspace(
    start: float, stop: float, num: int, endpoint: bool = True, name: str | None = None, dtype: Any = None
) -> Symbol:
    """A graph node producing ``num`` evenly spaced values from ``start`` to ``stop`` (included with ``endpoint``).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.sym.linspace(0, 1, 5, False).eval()[0].asnumpy()
    array([0. , 0.2, 0.4, 0.6, 0.8], dtype=float32)
    """
    return _operator("_linspace")(
        start=start, stop=stop, num=num, endpoint=endpoint, name=name, dtype=_dtype_or_default(dtype)
    )


def histogram(a: Symbol, bins: Any = 10, range: Any = None, **kwargs: Any) -> Symbol:  # noqa: A002 - MXNet's name
    """The histogram of ``a`` as a graph node with outputs ``(counts, edges)``, as MXNet 1.x's
    ``mx.sym.histogram``: ``bins`` is a symbol of rising edges, or a number of equal bins over
    ``range``, which a graph needs given (the data's extent is not known when the graph is built).

    Examples
    --------
    >>> import lazynd as mx
    >>> h = mx.sym.histogram(mx.sym.var("x"), bins=2, range=(0, 4))
    >>> [o.asnumpy().tolist() for o in h.eval(x=mx.nd.array([1, 3, 3]))]
    [[1, 2], [0.0, 2.0, 4.0]]
    """
    if isinstance(bins, Symbol):
        if range is not None:
            raise OperatorError("histogram: range is taken with a number of bins, not with a symbol of edges")
        return _operator("_histogram")(a, bins, **kwargs)
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise OperatorError(f"histogram: bins must be an int or a Symbol of edges, got {type(bins).__name__}")
    if range is None:
        raise OperatorError("histogram: a graph needs range=(low, high) with a number of bins")
    return _operator("_histogram")(a, bin_cnt=bins, range=range, **kwargs)


def rand_zipfian(true_classes: Symbol, num_sampled: int, range_max: int) -> tuple[Symbol, Symbol, Symbol]:
    """``mx.sym.contrib.rand_zipfian``: nodes drawing ``num_sampled`` log-uniform classes of
    ``[0, range_max)`` (int64), with the expected counts of ``true_classes`` and of the samples
    (float64); see :mod:`lazynd.ndarray.zipfian`."""
    import lazynd_sym

    return sample_zipfian(lazynd_sym, true_classes, num_sampled, range_max)

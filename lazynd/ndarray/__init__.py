"""``lazynd.nd``: the NDArray, its creation functions, save/load, and one function per operator."""

from __future__ import annotations

import builtins
import importlib
from typing import Any

import numpy

from .. import ops as _ops  # noqa: F401 - registers every operator
from .. import random as random  # mx.nd.random.uniform(...): MXNet's samplers (the same module as mx.random)
from ..engine import waitall
from ..errors import OperatorError, ShapeError
from ..ops import registry as _registry
from . import _internal as _internal  # mx.nd._internal, MXNet's module of underscore operators
from . import sparse as sparse  # mx.nd.sparse: refused by name (lazynd arrays are all dense)
from .contrib_updates import contrib_update_functions as _contrib_update_functions
from .control_flow import FUNCTIONS as _CONTROL_FLOW
from .creation import (
    arange,
    array,
    concatenate,
    empty,
    from_dlpack,
    from_numpy,
    full,
    ones,
    to_dlpack_for_read,
    to_dlpack_for_write,
    zeros,
)
from .functions import install_methods as _install_methods
from .functions import make_function as _make_function
from .legacy import imdecode, onehot_encode
from .masking import boolean_mask as _contrib_boolean_mask  # noqa: F401 - mx.nd.contrib.boolean_mask (imperative only)
from .namespaces import OperatorNamespace as _OperatorNamespace
from .ndarray import NDArray
from .serialization import load, load_frombuffer, save
from .ufuncs import (
    add,
    divide,
    equal,
    greater,
    greater_equal,
    lesser,
    lesser_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    modulo,
    multiply,
    not_equal,
    power,
    subtract,
    true_divide,
)
from .zipfian import rand_zipfian as _rand_zipfian

__all__ = [
    "NDArray",
    "arange",
    "array",
    "concatenate",
    "empty",
    "from_dlpack",
    "from_numpy",
    "full",
    "ones",
    "zeros",
    "load",
    "load_frombuffer",
    "save",
    "waitall",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
    "moveaxis",
    "split_v2",
    "histogram",
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "modulo",
    "power",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "lesser",
    "lesser_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "imdecode",
    "onehot_encode",
]


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """Move axes (an int or a sequence of ints, negatives from the end) to new positions (a transpose).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.moveaxis(mx.nd.zeros((3, 4, 5)), 0, -1).shape
    (4, 5, 3)
    >>> mx.nd.moveaxis(mx.nd.zeros((3, 4, 5)), [0, 1], [-1, -2]).shape
    (5, 4, 3)
    """
    sources = _moveaxis_axes("source", source, tensor.ndim)
    destinations = _moveaxis_axes("destination", destination, tensor.ndim)
    if len(sources) != len(destinations):
        raise ShapeError(f"moveaxis: source {source} and destination {destination} must have as many axes")
    rest = [axis for axis in range(tensor.ndim) if axis not in sources]
    for place, axis in sorted(zip(destinations, sources, strict=True)):
        rest.insert(place, axis)
    return transpose(tensor, axes=tuple(rest))  # type: ignore[name-defined]  # noqa: F821


def _moveaxis_axes(param: str, value: Any, ndim: int) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ints) as distinct axes in ``[0, ndim)``; ShapeError naming ``param``."""
    from ..ops.params import parse_int
    from ..ops.shape import normalize_axis

    given = value if isinstance(value, (list, tuple, range)) else (value,)  # ranges too, as NumPy's
    try:
        numbers = [parse_int(axis) for axis in given]
    except ValueError:
        raise ShapeError(f"moveaxis: {param} must be an int or a sequence of ints, got {value!r}") from None
    axes = tuple(normalize_axis("moveaxis", axis, ndim, param) for axis in numbers)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"moveaxis: {param}={value} repeats an axis")
    return axes


def split_v2(ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
    """Split ``ary`` along ``axis`` into equal sections (an int) or at indices (a tuple), as ``numpy.split``.

    Examples
    --------
    >>> import lazynd as mx
    >>> [p.shape for p in mx.nd.split_v2(mx.nd.zeros((6, 2)), (1, 3))]
    [(1, 2), (2, 2), (3, 2)]
    """
    from .splitting import split_v2 as split

    if not -ary.ndim <= axis < ary.ndim:
        raise ShapeError(
            f"split_v2: axis={axis} is out of range for a {ary.ndim}-D input {ary.shape} "
            f"(allowed {-ary.ndim}..{ary.ndim - 1})"
        )
    axis %= ary.ndim
    length = ary.shape[axis]

    def piece(data: NDArray, axis: int, begin: int, end: int) -> NDArray:
        if begin == end:  # an empty piece, as numpy.split and MXNet give (slice_axis refuses one)
            # (``slice`` here is the operator: Python's is builtins.slice)
            return data[(builtins.slice(None),) * axis + (builtins.slice(begin, end),)]
        return slice_axis(data, axis=axis, begin=begin, end=end)  # type: ignore[name-defined]  # noqa: F821

    def drop_axis(data: NDArray, axis: int) -> NDArray:
        # a reshape, not ``squeeze``: a 1-D input's pieces are 0-d, as MXNet's (squeeze keeps (1,))
        return data.reshape(data.shape[:axis] + data.shape[axis + 1 :])

    return split(ary, length, indices_or_sections, axis, squeeze_axis, piece, drop_axis)


def histogram(a: NDArray, bins: Any = 10, range: Any = None) -> tuple[NDArray, NDArray]:  # noqa: A002 - MXNet's name
    """The histogram of ``a`` (flattened): ``(counts, edges)``, as MXNet 1.x's ``mx.nd.histogram``.

    ``bins`` is a number of equal bins over ``range`` or an NDArray of rising edges: the last bin
    holds its right edge; values outside are not counted (the ``_histogram`` operator; int64 counts).
    Without a ``range``, as in MXNet, NumPy bins the data over its extent (widened by 0.5 each way
    when it is one value) and both arrays come back as float32.

    Examples
    --------
    >>> import lazynd as mx
    >>> counts, edges = mx.nd.histogram(mx.nd.array([0.5, 1, 2, 3]), bins=3, range=(0, 3))
    >>> counts.asnumpy().tolist(), edges.asnumpy().tolist()
    ([1, 1, 2], [0.0, 1.0, 2.0, 3.0])
    """
    if isinstance(bins, NDArray):
        if range is not None:
            raise OperatorError("histogram: range is taken with a number of bins, not with an array of edges")
        return _histogram(a, bins)  # type: ignore[name-defined]  # noqa: F821
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise OperatorError(f"histogram: bins must be an int or an NDArray of edges, got {type(bins).__name__}")
    if range is None:
        # as MXNet 1.9.1, NumPy's histogram of the values read on the host, handed back as float32 arrays
        try:
            counts, edges = numpy.histogram(a.asnumpy(), bins=bins)
        except (ValueError, IndexError, MemoryError) as err:
            # bins < 1, NaN or infinite values (no extent to split); more bins than an array holds
            # (IndexError from NumPy for 2**63; MemoryError for 2**40)
            raise OperatorError(f"histogram: cannot make {bins} bins spanning the data without a range: {err}") from err
        return array(counts, ctx=a.context), array(edges, ctx=a.context)
    return _histogram(a, bin_cnt=bins, range=range)  # type: ignore[name-defined]  # noqa: F821


def _install_operator_functions() -> None:
    namespace = globals()
    for public_name, op in _registry.all_names().items():
        if public_name not in namespace or public_name in ("uniform", "normal"):
            namespace[public_name] = _make_function(op, public_name)


_install_operator_functions()
_install_methods(NDArray)  # x.sum(axis=1), x.exp(): every public operator not defined by NDArray itself


def _operator_function(name: str) -> Any:
    return globals()[name] if name in globals() else _make_function(_registry.get(name), name)


# mx.nd.linalg.gemm2, mx.nd.contrib.<op>, mx.nd.image.<op>, mx.nd.op.<op>: MXNet's sub-namespaces
op = _OperatorNamespace("mx.nd", "op", _operator_function)


def _scale_input(value: Any, like: NDArray) -> NDArray:
    """``rescale_grad`` of the contrib updates as a (1,) array on ``like``'s device."""
    if isinstance(value, NDArray):
        return value.as_in_context(like.context)
    return full((1,), value, ctx=like.context)


# + foreach, while_loop, cond, rand_zipfian and the list-taking optimizer updates (adamw_update, multi_lamb_update...)
_CONTRIB_FUNCTIONS = {
    **_CONTROL_FLOW,
    "rand_zipfian": _rand_zipfian,
    **_contrib_update_functions(_operator_function, _scale_input),
}
contrib = _OperatorNamespace("mx.nd", "contrib", _operator_function, _CONTRIB_FUNCTIONS)
linalg = _OperatorNamespace("mx.nd", "linalg", _operator_function)
image = _OperatorNamespace("mx.nd", "image", _operator_function)


def CachedOp(sym: Any, flags: Any = ()) -> Any:  # noqa: N802 - MXNet's name
    """MXNet's ``mx.nd.CachedOp(sym, flags)``: ``sym`` called as an imperative function of its inputs.

    It runs a symbol, so it is lazynd_sym's (:class:`lazynd_sym.cached_op.CachedOp`), imported on
    first use as ``mx.sym`` is.
    """
    return importlib.import_module("lazynd_sym.cached_op").CachedOp(sym, flags)

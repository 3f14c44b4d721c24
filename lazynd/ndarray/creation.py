"""Creating NDArrays: empty, zeros, ones, full, array, arange, concatenate.

Arrays that share memory with NumPy or through DLPack are made in :mod:`.memory_sharing`,
whose functions this module also hands on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arguments import flag
from ..backend import get_backend
from ..backend.cuda.sources import dtype_name
from ..context import Context, as_context, current_context
from ..engine.var import Var
from ..errors import OperatorError, ShapeError
from ..log import warn_from_user_code
from ..ops import registry
from ..ops.init_ops import arange_length, arange_values
from ..ops.params import parse_dtype, parse_int
from ..runtime import push
from . import dispatch
from .copying import element_of, elements_of, numbers_of_objects
from .dispatch import new_array
from .memory_sharing import dlpack_capsule, from_dlpack, from_numpy, to_dlpack_for_read, to_dlpack_for_write
from .sparse import check_dense

__all__ = [
    "arange",
    "array",
    "as_dtype",
    "concatenate",
    "dlpack_capsule",
    "empty",
    "from_dlpack",
    "from_numpy",
    "full",
    "ones",
    "to_dlpack_for_read",
    "to_dlpack_for_write",
    "zeros",
]

DEFAULT_DTYPE = "float32"


def as_dtype(dtype: Any, default: Any = DEFAULT_DTYPE) -> np.dtype:
    """``dtype`` (``default`` for None) as a NumPy dtype among lazynd's, or an :class:`OperatorError`."""
    if dtype is None:
        dtype = default
    try:
        return np.dtype(parse_dtype(dtype))
    except ValueError as err:
        raise OperatorError(f"unsupported dtype {dtype!r}: {err}") from None


def astype(arr: Any, dtype: Any, copy: Any) -> Any:
    """``NDArray.astype``: ``arr`` itself where ``copy`` is false and ``dtype`` is its own, else a ``Cast``."""
    dtype = as_dtype(dtype)  # None: MXNet's mx_real_t; a name lazynd lacks: an OperatorError
    if copy is not True and not flag("NDArray.astype", "copy", copy) and dtype == arr._data.dtype:
        return arr
    return dispatch.invoke_by_name("Cast", [arr], {"dtype": dtype_name(dtype)})


def _shape(shape: Any) -> tuple[int, ...]:
    if shape.__class__ is tuple:  # the common form, answered by class checks (the parsing below: 1.5 us)
        for d in shape:
            if d.__class__ is not int or d < 0:
                break
        else:
            return shape
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        shape = tuple(parse_int(d) for d in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"shape must not have negative dimensions, got {shape}")
    return shape


def _ctx(ctx: Context | None) -> Context:
    if ctx is None:
        return current_context()
    return as_context(ctx)


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None) -> Any:
    """A new array whose values are undefined.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.empty((2, 3)).shape
    (2, 3)
    """
    check_dense(stype, "nd.empty")
    return new_array(_shape(shape), as_dtype(dtype), _ctx(ctx))


def _fill(data: Any, value: Any) -> None:
    data.fill(value)


def full(shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None, out: Any = None) -> Any:
    """A new array (or ``out``) filled with ``val``.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.full((2,), 7).asnumpy()
    array([7., 7.], dtype=float32)
    """
    return _fill_new_or_out("nd.full", shape, val, ctx, dtype, out)


def _fill_new_or_out(op: str, shape: Any, val: Any, ctx: Context | None, dtype: Any, out: Any) -> Any:
    """``out`` (whose shape must be ``shape``), or a new array, filled with ``val``; ``op`` names the caller.

    The fill is the engine operation of MXNet's operator for ``op`` (``nd.ones`` pushes ``_ones``,
    ``nd.zeros`` ``_zeros``, ``nd.full`` ``_full``), the name the profiler's trace and ``dumps()`` show.
    """
    if out is None:
        out = new_array(_shape(shape), as_dtype(dtype), _ctx(ctx))
    elif _shape(shape) != out.shape:
        raise ShapeError(f"{op}: shape={_shape(shape)} does not match the shape of out, {out.shape}")
    val = element_of(out._data.dtype, val, "full")  # a value no element can hold is refused here
    # ``out`` a view of part of its storage keeps the storage's error (see NDArray)
    push(
        out._ctx,
        _fill,
        (out._data, val),
        [out._var] if out._partial else [],
        [out._var],
        "_" + op.removeprefix("nd."),
        out.size,
    )
    return out


def _check_creation_keywords(op: str, kwargs: dict[str, Any]) -> None:
    """Refuse keywords MXNet's creation operators do not take (``name`` is accepted and unused, as in MXNet)."""
    if not kwargs:  # the common call, without the set arithmetic below
        return
    unknown = sorted(set(kwargs) - {"name"})
    if unknown:
        raise OperatorError(
            f"{op}: unknown argument(s) {', '.join(map(repr, unknown))} (allowed: shape, ctx, dtype, stype, out, name)"
        )


def zeros(
    shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None, out: Any = None, **kwargs: Any
) -> Any:
    """A new array of zeros, or ``out`` filled with zeros.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.zeros((2, 2), dtype='int32').asnumpy()
    array([[0, 0],
           [0, 0]], dtype=int32)
    >>> out = mx.nd.ones((2,))
    >>> mx.nd.zeros((2,), out=out) is out, out.asnumpy()
    (True, array([0., 0.], dtype=float32))
    """
    check_dense(stype, "nd.zeros")
    _check_creation_keywords("nd.zeros", kwargs)
    if out is not None:
        return _fill_new_or_out("nd.zeros", shape, 0, ctx, dtype, out)
    ctx = _ctx(ctx)
    if ctx.device_type != "gpu":  # cpu, or cpu_pinned (page-locked memory)
        return dispatch.NDArray(get_backend(ctx).zeros(_shape(shape), as_dtype(dtype)), Var(holds_value=True), ctx)
    return _fill_new_or_out("nd.zeros", shape, 0, ctx, dtype, None)


def ones(
    shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None, out: Any = None, **kwargs: Any
) -> Any:
    """A new array of ones, or ``out`` filled with ones.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.ones((3,)).asnumpy()
    array([1., 1., 1.], dtype=float32)
    """
    check_dense(stype, "nd.ones")
    _check_creation_keywords("nd.ones", kwargs)
    return _fill_new_or_out("nd.ones", shape, 1, ctx, dtype, out)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None) -> Any:
    """An array holding a copy of ``source_array`` (NumPy array, list, NDArray, scalar).

    The dtype defaults to ``source.dtype`` for an NDArray and to float32 otherwise,
    as in MXNet.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.array([[1, 2], [3, 4]]).asnumpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    check_dense(stype, "nd.array")
    source = source_array
    if isinstance(source, dispatch.NDArray):
        target = new_array(source.shape, as_dtype(dtype, source._data.dtype), _ctx(ctx) if ctx else source._ctx)
        return source.copyto(target)
    if (
        hasattr(source, "__cuda_array_interface__")
        or hasattr(source, "__dlpack__")
        and not isinstance(source, np.ndarray)
    ):
        try:
            source = source.get() if hasattr(source, "get") else np.from_dlpack(source)
        except Exception:
            source = np.asarray(source)
    try:
        host = np.asarray(source)
    except (ValueError, TypeError) as err:
        raise OperatorError(f"array: cannot convert {type(source).__name__} to an array: {err}") from None
    if host.dtype == object:
        # numbers held as objects (pandas, Fraction or Decimal lists, dtype=object), as MXNet converts them
        converted = numbers_of_objects(host)
        if converted is None:
            raise OperatorError(f"array: source is ragged or holds non-numbers ({type(source).__name__})")
        host = converted
    dt = as_dtype(dtype)
    ctx = _ctx(ctx)
    if not isinstance(source, np.ndarray):  # a list or a scalar converts as MXNet's list does
        host = elements_of(dt, host, "array")
    if host.dtype.kind in "SU":  # text: numbers written out ('1.5') convert, anything else is refused here
        try:
            host = host.astype(dt)
        except ValueError as err:
            raise OperatorError(f"array: cannot convert {type(source).__name__} to numbers: {err}") from None
    if ctx.device_type != "gpu":  # cpu, or cpu_pinned (page-locked memory)
        data = get_backend(ctx).empty(host.shape, dt)
        np.copyto(data, host, casting="unsafe")  # a snapshot: the caller may change source later
        return dispatch.NDArray(data, Var(holds_value=True), ctx)
    out = new_array(host.shape, dt, ctx)
    backend: Any = get_backend(ctx)  # the CUDA backend: the snapshot lands in page-locked memory
    staged = dispatch.NDArray(backend.snapshot_for_device(host, dt), Var(), Context("cpu", 0))
    return staged.copyto(out)


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1.0,
    repeat: int = 1,
    infer_range: bool | None = None,
    ctx: Context | None = None,
    dtype: Any = None,
) -> Any:
    """Evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times.

    ``infer_range`` is taken in MXNet 1.x's place (before ``ctx``) and, deprecated there, ignored
    with a ``DeprecationWarning`` as there.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.arange(0, 3, repeat=2).asnumpy()
    array([0., 0., 1., 1., 2., 2.], dtype=float32)
    """
    if infer_range is not None:
        warn_from_user_code("arange: `infer_range` is deprecated and ignored", DeprecationWarning)
    # the operator's parameters parse them: a clear error naming the one that is not a number
    given = {"start": start, "stop": stop, "step": step, "repeat": repeat}
    if dtype is not None:
        given["dtype"] = dtype
    attrs = registry.get("_arange").parse(given)
    start, stop, step, repeat = attrs["start"], attrs["stop"], attrs["step"], attrs["repeat"]
    if repeat < 1:
        raise OperatorError(f"arange: repeat must be >= 1, got {repeat}")
    if step == 0:
        raise OperatorError("arange: step must not be 0")
    count = arange_length(start, stop, step, repeat) // repeat  # checks the bounds and the size
    first = 0.0 if stop is None else start
    values = arange_values(np, first, step, count, np.float64 if dtype is None else parse_dtype(dtype))
    if repeat > 1:
        values = np.repeat(values, repeat)
    if dtype is not None:
        values = values.astype(parse_dtype(dtype))  # an integer dtype wraps, as MXNet's cast does
    return array(values, ctx=ctx, dtype=dtype)


def _concat(xp: Any, arrays: Sequence[Any], out: Any, axis: int) -> None:
    xp.concatenate(arrays, axis=axis, out=out)


def concatenate(arrays: Sequence[Any], axis: int = 0, always_copy: bool = True) -> Any:
    """Join arrays along an existing axis, on the first array's context (the others are copied there).

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.nd.concatenate([mx.nd.ones((1, 2)), mx.nd.zeros((1, 2))]).shape
    (2, 2)
    """
    arrays = list(arrays)
    if not arrays:
        raise OperatorError("concatenate: needs at least one array")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    first = arrays[0]
    ndim = first.ndim
    if not -ndim <= axis < ndim:
        raise OperatorError(f"concatenate: axis {axis} is out of range for {ndim}-D arrays")
    axis %= ndim
    for i, a in enumerate(arrays):
        if a.ndim != ndim or any(a.shape[d] != first.shape[d] for d in range(ndim) if d != axis):
            raise ShapeError(
                f"concatenate: array {i} has shape {a.shape}, incompatible with {first.shape} on axis {axis}"
            )
    # as in MXNet, the result lives on the first array's context, and the others are copied there
    # (a multi-device loop joins its devices' outputs this way)
    arrays = [a if a._ctx == first._ctx else a.as_in_context(first._ctx) for a in arrays]
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    dtype = np.result_type(*[a._data.dtype for a in arrays])
    out = new_array(tuple(shape), dtype, first._ctx)
    push(
        first._ctx,
        _concat,
        (get_backend(first._ctx).xp, [a._data for a in arrays], out._data, axis),
        [a._var for a in arrays],
        [out._var],
        "concatenate",
        out.size,
    )
    if dispatch.recorder is not None:  # some thread records (lazynd.autograd)
        dispatch.recorder.concatenated(arrays, out, axis)
    return out

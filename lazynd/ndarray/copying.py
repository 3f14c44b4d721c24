"""Copies between arrays and devices, reshaped views (the ``flatten``, ``squeeze`` and ``expand_dims``
methods with MXNet's ``inplace`` flag), and scalars stored as elements, all through the engine.

Indexing (``x[key]`` and ``x[key] = value``) is in :mod:`lazynd.ndarray.indexing`.
"""

from __future__ import annotations

import decimal
import numbers
from typing import Any

import numpy as np

from ..backend import get_backend
from ..backend.fperr import quietly
from ..context import Context
from ..errors import ArgumentTypeError, OperatorError, ShapeError
from ..ops import registry
from ..ops.host_arithmetic import scalar_as, values_as
from ..ops.params import parse_bool, parse_shape
from ..ops.reshape_codes import reshape_shape
from ..runtime import push, push_to_device
from ..util import np_shape
from . import dispatch
from .dispatch import new_array


def _copy_cpu(src: np.ndarray, dst: np.ndarray) -> None:
    dst[...] = src  # (assignment casts as copyto(casting="unsafe") does, with less call overhead)


# a copy into another dtype casts NaN, inf or a value past the target's range as MXNet does,
# silently, as every CPU kernel runs (lazynd.backend.fperr)
_cast_cpu = quietly(_copy_cpu)


def copy_into(src: Any, dst: Any) -> Any:
    """Push a copy of NDArray ``src`` into NDArray ``dst`` (any devices; dtype converted)."""
    source, target = src._data, dst._data
    if source.shape != target.shape:
        raise ShapeError(f"copyto: source has shape {src.shape}, destination has shape {dst.shape}")
    recorder = dispatch.recorder
    if recorder is not None:  # some thread records (lazynd.autograd): a copy is differentiable
        recorder.check_write(dst, "copyto")
    sctx, dctx = src._ctx, dst._ctx
    # a destination that is part of its storage keeps the storage's error (see NDArray)
    reads, writes = [src._var, dst._var] if dst._partial else [src._var], [dst._var]
    if sctx.device_type != "gpu" and dctx.device_type != "gpu":
        copy = _copy_cpu if source.dtype == target.dtype else _cast_cpu
        push(dctx, copy, (source, target), reads, writes, "_copyto", target.size)
    elif sctx.device_type != "gpu":
        backend: Any = get_backend(dctx)
        args = (src._data, dst._data)
        if sctx.device_type == "cpu_pinned":
            # DMA from the array itself: the copy ends at launch (the stream orders the
            # destination's readers after it) and a hold on the h2d stream, reading the source
            # and ordered after the copy through the destination, ends when the device has read
            # it, so a write into the source waits for that
            push_to_device(dctx, backend.copy_from_pinned_host, args, reads, writes, "_copyto_h2d", "h2d")
            held = [src._var, dst._var]
            push_to_device(dctx, backend.hold_until_done, (), held, [], "_copyto_h2d_hold", "h2d")
        else:
            push_to_device(dctx, backend.copy_from_host, args, reads, writes, "_copyto_h2d", "h2d")
    elif dctx.device_type != "gpu":
        backend = get_backend(sctx)
        args = (src._data, dst._data)
        push_to_device(sctx, backend.copy_to_host, args, reads, writes, "_copyto_d2h", "d2h", inline_ok=False)
    else:
        backend = get_backend(dctx)
        push_to_device(dctx, backend.copy_between_devices, (src._data, dst._data), reads, writes, "_copyto_d2d")
    if recorder is not None:
        recorder.copied(src, dst)
    return dst


def copyto(src: Any, other: Any) -> Any:
    if isinstance(other, Context):
        return copy_into(src, new_array(src.shape, src._data.dtype, other))
    if isinstance(other, dispatch.NDArray):
        if other._var is src._var and other._data is src._data:
            return other
        return copy_into(src, other)
    # a TypeError too, as MXNet's ("copyto does not support type <class 'str'>")
    raise ArgumentTypeError(f"copyto: target must be an NDArray or a Context, got {type(other).__name__}")


def shape_argument(shape: Any) -> tuple[int, ...]:
    """The ``shape`` given to ``reshape`` as a tuple of ints (NumPy integers and whole floats are
    taken), or an :class:`OperatorError` naming what is not an int."""
    if shape.__class__ is tuple and all(d.__class__ is int for d in shape):
        return shape  # the common call, checked in a few hundred nanoseconds
    try:
        return parse_shape(shape)
    except ValueError:
        raise OperatorError(f"reshape: shape must be a tuple of ints, got {shape!r}") from None


def view(arr: Any, shape: tuple[int, ...]) -> Any:
    """A view with a new shape sharing ``arr``'s storage and var."""
    shape = shape_argument(shape)
    if shape and min(shape) < -1:  # NumPy reads any negative dim as -1: (-5, 6) would give (1, 6)
        raise ShapeError(
            f"reshape: invalid dim {min(shape)} in shape {shape} (expected positive dims, one -1, or MXNet's codes "
            "0, -2, -3, -4)"
        )
    data = arr._data
    try:
        if data.__class__ is np.ndarray:
            # the method, not np.reshape (no array-function dispatch); a C-contiguous array always
            # reshapes to a view, so it needs no copy=False keyword to parse
            new = data.reshape(shape) if data.flags.c_contiguous else data.reshape(shape, copy=False)
        else:
            new = data.view()
            new.shape = shape
    except (ValueError, AttributeError) as err:
        text = str(err)
        if "copy" in text or "in-place" in text or "incompatible" in text.lower():
            # the layout does not allow a view (e.g. a strided slice): reshape a copy
            return view(arr.copy(), shape)
        raise ShapeError(f"reshape: cannot reshape array of shape {arr.shape} into {tuple(shape)}") from None
    result = dispatch.NDArray(new, arr._var, arr._ctx)
    result._partial = arr._partial
    if dispatch.recorder is not None:  # some thread records (lazynd.autograd)
        dispatch.recorder.reshaped(arr, result)
    return result


def flag_argument(op: str, name: str, value: Any) -> bool:
    """A method's boolean keyword (``inplace``, ``reverse``), or an :class:`OperatorError` naming it."""
    try:
        return parse_bool(value)
    except ValueError as err:
        raise OperatorError(f"{op}: invalid value {value!r} for '{name}': {err}") from None


def shape_method(op_name: str, doc: str) -> Any:
    """The NDArray method of a shape-only operator (``squeeze``, ``expand_dims``) with MXNet 1.x's
    ``inplace`` flag: ``False`` runs the operator (a copy), ``True`` returns a view of the array with
    the shape the operator's own rule gives, so its checks and errors are the operator's."""

    def method(self: Any, *args: Any, inplace: bool = False, out: Any = None, **kwargs: Any) -> Any:
        if not flag_argument(op_name, "inplace", inplace):
            return dispatch.invoke_by_name(op_name, [self], _method_params(op_name, args, kwargs), out)
        op = registry.get(op_name)
        attrs = op.parse(_method_params(op_name, args, kwargs))
        return view(self, tuple(op.infer_shape(attrs, [self.shape])[1][0]))

    method.__name__ = op_name
    method.__doc__ = doc
    return method


def _method_params(op_name: str, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The operator's parameters from a method call: ``axis`` by position or by keyword."""
    if len(args) > 1 or (args and "axis" in kwargs):
        raise OperatorError(f"{op_name}: takes one positional parameter (axis), got {len(args)} and {sorted(kwargs)}")
    return {"axis": args[0], **kwargs} if args else dict(kwargs)


def flatten_method(self: Any, inplace: bool = False) -> Any:
    """``(shape[0], -1)``: a copy, as MXNet 1.x's method gives; with ``inplace=True`` a view."""
    flat = self.reshape(self.shape[0] if self.ndim else 1, -1)
    return flat if flag_argument("flatten", "inplace", inplace) else flat.copy()


def reshape_by_operator(arr: Any, shape: tuple[int, ...], kwargs: dict[str, Any]) -> Any:
    """``arr.reshape(shape, **kwargs)`` beyond a plain shape: MXNet's codes (0, -2, -3, -4) and
    ``reverse`` follow the ``Reshape`` operator's rule (:func:`lazynd.ops.reshape_codes.reshape_shape`, the
    one both faces follow), and the result is a view sharing ``arr``'s memory, as MXNet's is; the
    operator's legacy keywords (``target_shape``, ``keep_highest``) run the operator."""
    if "shape" in kwargs and shape:
        # (MXNet 1.9.1 silently takes the positional one)
        raise OperatorError(f"reshape: the shape is given twice, as {tuple(shape)} and as shape={kwargs['shape']}")
    shape = shape_argument(kwargs.pop("shape") if "shape" in kwargs else shape)
    reverse = kwargs.pop("reverse", False)
    if kwargs:
        return dispatch.invoke_by_name("Reshape", [arr], {"shape": shape, "reverse": reverse, **kwargs})
    reverse = flag_argument("reshape", "reverse", reverse)
    if reverse or 0 in shape or -2 in shape or -3 in shape or -4 in shape:
        with np_shape():  # as the operator's imperative call: every dim of the array is a size
            shape = reshape_shape(tuple(shape), arr.shape, reverse)
    return view(arr, shape)


def element_of(dtype: np.dtype, value: Any, op: str) -> Any:
    """The scalar ``value`` as an element of ``dtype``, converted once when the call is made.

    As MXNet's ``static_cast`` (see :func:`lazynd.ops.host_arithmetic.scalar_as`): toward zero and
    wrapped for an integer dtype (300 -> 44 for uint8), where NumPy 2 refuses an out-of-range
    Python integer.  A value no element can hold (NaN for an integer dtype, a string) is refused here.
    """
    try:
        if value is None:  # (NumPy makes a float NaN of it)
            raise TypeError("None is not a number")
        return scalar_as(dtype, value)
    except (ValueError, TypeError, OverflowError) as err:
        raise OperatorError(
            f"{op}: cannot store {value!r} in an array of dtype {np.dtype(dtype).name}: {err}"
        ) from None


def numbers_of_objects(host: np.ndarray) -> np.ndarray | None:
    """The numbers of an object array as int64 (all integers within int64's range: exact past 2**53)
    or float64; None when one of them is no real number (``None``, which NumPy's own cast would make
    NaN, text, a complex number, a nested sequence).

    Object arrays of numbers come from pandas, ``Fraction`` or ``Decimal`` lists and
    ``np.array(..., dtype=object)``; ``nd.array`` and ``x[key] = value`` take them by this one rule.

    Examples
    --------
    >>> from fractions import Fraction
    >>> numbers_of_objects(np.array([1, 2**60], dtype=object)).dtype
    dtype('int64')
    >>> numbers_of_objects(np.array([Fraction(1, 2), 2], dtype=object)).tolist()
    [0.5, 2.0]
    >>> numbers_of_objects(np.array([1, None], dtype=object)) is None
    True
    """
    values = host.ravel().tolist()
    if not all(isinstance(v, (numbers.Real, decimal.Decimal)) for v in values):
        return None
    if all(isinstance(v, numbers.Integral) for v in values):
        try:
            return host.astype(np.int64)
        except OverflowError:
            pass  # past int64: as floats, as NumPy would take them
    return host.astype(np.float64)


def elements_of(dtype: np.dtype, values: np.ndarray, op: str) -> np.ndarray:
    """NumPy ``values`` (a list's, an array's) ready to cast to ``dtype``, each converted as
    :func:`element_of` converts a scalar (:func:`lazynd.ops.host_arithmetic.values_as`).

    Toward zero, then wrapped to an integer dtype's width (``[1e10]`` in int32 is 1410065408, as
    MXNet 1.9.1's ``nd.array`` of a list gives, not the ``INT_MIN`` of a C cast); true where not zero
    for bool; NaN, an infinity, a value past int64 or a complex value is refused, naming ``op``.
    """
    try:
        return values_as(dtype, values)
    except ValueError as err:
        raise OperatorError(f"{op}: {err}") from None

"""Indexing an NDArray through the engine: ``x[key]`` and ``x[key] = value``.

Basic indexing (integers, slices, ``None``, ``...``) reads a view sharing the array's storage and
var; index arrays (a boolean mask, integer positions, MXNet's float positions) are checked on the
host and gather into a copy.  Assignment takes a scalar, an NDArray or an array-like, in NumPy's
and MXNet 0.9's shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import get_backend
from ..errors import ArgumentTypeError, IndexingError, OperatorError, ShapeError
from ..runtime import push, run_if_free
from ..util import is_np_shape
from . import dispatch
from .copying import copy_into, element_of, elements_of, numbers_of_objects
from .dispatch import new_array

_BASIC = (int, np.integer, slice, type(Ellipsis), type(None))


def _is_basic(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in key)
    return isinstance(key, _BASIC) and not isinstance(key, bool)


def _normalize_key(arr: Any, key: Any) -> Any:
    """The key with its index arrays on the host, checked: see :func:`_index_array`."""
    index_arrays = (dispatch.NDArray, np.ndarray, list)  # (NDArray is bound after this module loads)
    if isinstance(key, tuple):
        return tuple(_index_array(k, arr.shape) if isinstance(k, index_arrays) else k for k in key)
    if isinstance(key, index_arrays):
        return _index_array(key, arr.shape)
    return key


def _index_array(index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """An index array as NumPy reads it: a boolean array is a mask, an integer array positions.

    An NDArray index is read (this waits for it).  Floating-point positions (NDArrays are float32
    by default: ``x[labels]``) are truncated toward zero, as MXNet reads them; except that a float
    array of 0s and 1s shaped as the indexed array (``a > 2`` is such an array in MXNet) is
    refused: read as positions it would select rows 0 and 1 again and again, silently, where
    the caller most likely meant a mask.
    """
    if isinstance(index, dispatch.NDArray):
        values = index.asnumpy()
    else:
        values = np.asarray(index)
        if values.size == 0 and isinstance(index, list):
            values = values.astype(np.int64)  # ``a[[]]``: no positions, as in NumPy
    kind = values.dtype.kind
    if kind == "b":
        return values
    if kind in "iu":
        return values.astype(np.int64, copy=False)
    if kind == "f":
        if values.shape == tuple(shape) and values.size and np.isin(values, (0.0, 1.0)).all():
            raise OperatorError(
                f"index: a float index array of 0s and 1s shaped as the array ({values.shape}) reads as positions 0 "
                "and 1, not as a mask (comparisons give 0/1 floats as in MXNet): use .astype('bool') for a mask, or "
                "an integer dtype (.astype('int64')) for positions"
            )
        if not np.isfinite(values).all():
            raise OperatorError(f"index: a float index array holds NaN or infinity (shape {values.shape})")
        positions = np.trunc(values)
        if positions.size and np.abs(positions).max() >= 2.0**63:  # past int64: the cast would wrap
            raise OperatorError(
                f"index: a float index array holds {np.abs(positions).max():g}, past any position (shape {values.shape})"
            )
        return positions.astype(np.int64)
    raise OperatorError(
        f"index: an index array of dtype {values.dtype} (shape {values.shape}) is neither a mask nor positions: "
        "use a boolean mask or integer positions"
    )


def getitem(arr: Any, key: Any) -> Any:
    """Basic indexing gives a view sharing memory (writes go through); advanced indexing a copy."""
    key = _normalize_key(arr, key)
    _check_steps(key)
    data = arr._data
    if _is_basic(key):
        if data.ndim == 0 and (key == _WHOLE or key == ()):
            # ``x[:]`` and ``x[()]`` of a 0-d array are the array, as in MXNet (NumPy refuses the
            # first and gives a scalar, not a view, for the second)
            key = Ellipsis
        try:
            sub = data[key]
        except (IndexError, OverflowError) as err:  # OverflowError: an int past int64 (2**63)
            raise IndexingError(f"index {key!r} is out of bounds for shape {arr.shape}: {err}") from None
        except TypeError as err:
            raise _key_type_error("index", key, arr.shape, err) from None
        if getattr(sub, "ndim", 0) == 0 and data.ndim:
            # a single element: a (1,)-shaped view, as MXNet does (a new last axis of length 1: the key
            # may hold an Ellipsis anywhere, so no key member can stand for the last axis); with NumPy
            # shapes on, an integer for every axis gives a 0-d view, as MXNet 1.9.1 does (a key with
            # ``...`` or ``None`` still gives (1,) there).  ``x[()]`` of a 0-d array is that array.
            members = key if isinstance(key, tuple) else (key,)
            key = (*members, Ellipsis) if _zero_dim_element(members, data.ndim) else (*members, None)
            sub = data[key]
        result = dispatch.NDArray(sub, arr._var, arr._ctx)
        result._partial = arr._partial or sub.size != data.size  # (basic indexing never selects an element twice)
        if dispatch.recorder is not None:  # some thread records (lazynd.autograd)
            dispatch.recorder.view(arr, result, key)
        return result
    if dispatch.recorder is not None and dispatch.recorder.is_recorded(arr):
        return _recorded_gather(arr, key)
    xp = get_backend(arr._ctx).xp
    try:
        probe = np.broadcast_to(np.empty((), data.dtype), arr.shape)[_host_key(key)]
    except (IndexError, OverflowError) as err:  # OverflowError: an int past int64 (2**63)
        raise IndexingError(f"index does not fit shape {arr.shape}: {err}") from None
    except TypeError as err:
        raise _key_type_error("index", key, arr.shape, err) from None
    out = new_array(probe.shape, data.dtype, arr._ctx)
    host_key = _snapshot(key)

    def gather(src: Any, dst: Any) -> None:
        # index arrays reach the device inside the operation: on its stream and its device
        dst[...] = src[_device_key(host_key, xp)]

    push(arr._ctx, gather, (data, out._data), [arr._var], [out._var], "_getitem", out.size)
    return out


def _zero_dim_element(members: tuple, ndim: int) -> bool:
    """Whether a key of ``members`` reads one element as a 0-d array: under NumPy shapes, when it
    holds an integer for every axis (and nothing else), as MXNet 1.9.1 reads it."""
    return is_np_shape() and len(members) == ndim and all(isinstance(k, (int, np.integer)) for k in members)


def _check_steps(key: Any) -> None:
    """Refuse a slice with a zero step by name (NumPy's ValueError does not say which index)."""
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, slice) and k.step is not None and k.step == 0:
            raise OperatorError(f"index: slice {k!r} has step 0; a slice's step must be nonzero")


def _flat_positions(shape: tuple[int, ...], key: Any) -> np.ndarray:
    """The C-order flat positions in an array of ``shape`` of the elements ``key`` selects,
    shaped as the selection (negative positions and masks resolved as NumPy resolves them).

    Built one axis at a time from broadcast views of ``arange``, so it holds a few arrays of the
    selection's size, never one of the indexed array's.
    """

    def selected(coordinates: Any) -> np.ndarray:
        try:
            return np.broadcast_to(coordinates, shape)[key]
        except IndexError as err:
            raise IndexingError(f"index does not fit shape {shape}: {err}") from None

    positions = selected(np.int64(0)).astype(np.int64)
    stride = 1
    for axis in reversed(range(len(shape))):
        along = np.arange(shape[axis], dtype=np.int64).reshape((-1,) + (1,) * (len(shape) - axis - 1))
        positions += selected(along) * stride
        stride *= shape[axis]
    return positions


def _recorded_gather(arr: Any, key: Any) -> Any:
    """``arr[key]`` by index arrays, for a recorded ``arr``: recorded as ``take`` of the selected
    flat positions from ``arr.reshape(-1)``, so its gradient is ``take``'s (the output gradient
    scattered back and summed where a position is selected more than once)."""
    from .creation import array

    positions = array(_flat_positions(arr.shape, key), ctx=arr._ctx, dtype=np.int64)
    return dispatch.invoke_by_name("take", (arr.reshape((-1,)), positions), {"axis": 0})


def _host_key(key: Any) -> Any:
    return key


def _snapshot(key: Any) -> Any:
    """``key`` with its NumPy index arrays copied: the caller may change them after the push."""
    if isinstance(key, tuple):
        return tuple(k.copy() if isinstance(k, np.ndarray) else k for k in key)
    return key.copy() if isinstance(key, np.ndarray) else key


def _device_key(key: Any, xp: Any) -> Any:
    if xp is np:
        return key
    if isinstance(key, tuple):
        return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    return xp.asarray(key) if isinstance(key, np.ndarray) else key


_WHOLE = slice(None)


def setitem(arr: Any, key: Any, value: Any) -> None:
    """``arr[key] = value`` with a scalar, NDArray or array-like; lazy, through the engine."""
    recorder = dispatch.recorder
    if recorder is not None:  # some thread records (lazynd.autograd)
        recorder.check_write(arr, "__setitem__")
    if (
        key.__class__ is slice
        and key == _WHOLE
        and value.__class__ is dispatch.NDArray
        and value._data.shape == arr._data.shape
        and (value._ctx is arr._ctx or value._ctx == arr._ctx)
    ):
        copy_into(value, arr)  # the commonest form, ``weight[:] = new``: a plain copy
        return
    data = arr._data
    if key.__class__ is slice and key == _WHOLE:
        # every element (``x[:] = batch``): a key with no index arrays to check or snapshot (of a 0-d
        # array too, as ``x[:]`` reads it: NumPy refuses the slice there, ``...`` means the same)
        host_key, target_shape, every_element = (key if data.ndim else Ellipsis), data.shape, True
    else:
        key = _normalize_key(arr, key)
        host_key = _snapshot(key)
        target_shape, every_element = _assignment_target(arr, key)
    xp = get_backend(arr._ctx).xp
    # a write of every element does not read the old values, so it neither waits on them nor
    # inherits their error: ``x[:] = 1`` recovers an array that inherited one, as a copy does
    # (unless ``arr`` is a view of part of its storage: the rest keeps the error)
    old_values = [] if every_element and not arr._partial else [arr._var]
    if isinstance(value, dispatch.NDArray):
        if value._ctx != arr._ctx:
            value = value.as_in_context(arr._ctx)
        squeezed = _without_integer_axes(key, value.shape, target_shape)
        if squeezed is not None:
            value = value.reshape(squeezed)
        _check_broadcast(value.shape, target_shape)
        if len(value.shape) > len(target_shape):
            value = value.reshape(_without_leading_ones(value.shape, target_shape))

        if recorder is not None and not _is_basic(key):
            recorder.refuse_gather(value, "__setitem__: assigning")

        def assign(dst: Any, src: Any) -> None:
            dst[_device_key(host_key, xp)] = src

        push(arr._ctx, assign, (data, value._data), [value._var, *old_values], [arr._var], "_set_value", arr.size)
        if recorder is not None:
            recorder.assigned(arr, host_key, value)
        return
    if isinstance(value, (complex, np.complexfloating)):
        # (NumPy's cast would keep the real part, silently; MXNet refuses it with a TypeError)
        raise ArgumentTypeError(
            f"__setitem__: cannot store the complex number {value!r} in an array of dtype {data.dtype}"
        )
    if isinstance(value, (int, float, bool, np.generic)):
        scalar = element_of(data.dtype, value, "__setitem__")

        def fill(dst: Any) -> None:
            dst[_device_key(host_key, xp)] = scalar

        push(arr._ctx, fill, (data,), old_values, [arr._var], "_set_value", arr.size)
        return
    # a numeric NumPy array as it is (the assignment casts it); anything else converted now, so a
    # value that does not convert fails here (into memory of our own, unless it already has the dtype)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        host = value
    else:
        host = _numbers_of(value)
    # each value converted as a scalar value is: toward zero and wrapped into an integer dtype, true
    # where not zero into bool; NaN, an infinity or a complex value refused by name (not INT_MIN)
    host = elements_of(data.dtype, host, "__setitem__")
    squeezed = _without_integer_axes(key, host.shape, target_shape)
    if squeezed is not None:
        host = host.reshape(squeezed)  # a view: the caller's array is not changed
    _check_broadcast(host.shape, target_shape)
    if host.ndim > len(target_shape):
        host = host.reshape(_without_leading_ones(host.shape, target_shape))
    if xp is not np:
        from .creation import array

        setitem(arr, key, array(host, ctx=arr._ctx, dtype=data.dtype))  # (snapshots it into staging memory)
        return
    if host is value or host.base is not None:
        # the caller's memory, which it may change once this returns: copied now, straight into
        # ``arr`` when nothing pending uses ``arr`` (``x[:] = batch`` in a loop), else snapshot
        if run_if_free(arr._ctx, _assign_host, (data, host_key, host), old_values, [arr._var], "_set_value"):
            return
        host = np.array(host, dtype=data.dtype, copy=True)
    push(arr._ctx, _assign_host, (data, host_key, host), old_values, [arr._var], "_set_value", arr.size)


def _numbers_of(value: Any) -> np.ndarray:
    """The array-like ``value`` (a list, a nested sequence) as a numeric NumPy array, or a clear error."""
    try:
        host = np.asarray(value)
        if host.dtype.kind == "O":
            # numbers held as objects (an object array, Decimals), as nd.array takes them; None is
            # refused (NumPy's own cast would make it a NaN)
            converted = numbers_of_objects(host)
            if converted is None:
                raise TypeError("it holds something that is no real number")
            host = converted
    except (ValueError, TypeError) as err:
        raise OperatorError(
            f"__setitem__: cannot convert the value ({type(value).__name__}) to an array of numbers: {err}"
        ) from None
    if host.dtype.kind not in "biufc":
        raise OperatorError(
            f"__setitem__: the value must be a number, an array or a sequence of numbers, "
            f"got {type(value).__name__} (as an array: dtype {host.dtype})"
        )
    return host


def _assign_host(dst: np.ndarray, key: Any, host: np.ndarray) -> None:
    dst[key] = host


def _assignment_target(arr: Any, key: Any) -> tuple[tuple[int, ...], bool]:
    """The shape ``arr[key]`` selects, and whether it selects every element of ``arr``."""
    data = arr._data
    _check_steps(key)
    try:
        if _is_basic(key):
            target = data[key]
            # basic indexing never selects an element twice: as many elements as ``arr`` is all of it
            shape = target.shape if not isinstance(key, (int, np.integer)) or data.ndim > 1 else ()
            return shape, int(getattr(target, "size", 1)) == data.size
        return np.broadcast_to(np.empty((), data.dtype), arr.shape)[key].shape, False
    except (IndexError, OverflowError) as err:  # OverflowError: an int past int64 (2**63)
        raise IndexingError(f"__setitem__: index {key!r} does not fit shape {arr.shape}: {err}") from None
    except TypeError as err:
        raise _key_type_error("__setitem__", key, arr.shape, err) from None


def _key_type_error(where: str, key: Any, shape: tuple[int, ...], err: TypeError) -> ArgumentTypeError:
    """A key member of a type no index takes (a slice with a float or string bound): NumPy's
    TypeError, named as ours (an ``ArgumentTypeError`` is a ``TypeError`` too, as MXNet raises)."""
    return ArgumentTypeError(
        f"{where}: index {key!r} for shape {shape}: {err} (slice bounds and steps must be integers or None)"
    )


def _without_integer_axes(key: Any, value_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> tuple | None:
    """The value's shape without the axes that integers index, when MXNet's form needs it; else None.

    MXNet 0.9 assigns through a crop that keeps an integer-indexed axis with length 1:
    ``x[:, 1:3, 1] = v`` takes ``v`` of shape (3, 2, 1), where NumPy wants (3, 2).
    Both are accepted: a value that already fits is left alone.
    """
    if not isinstance(key, tuple) or len(value_shape) <= len(target_shape):
        return None
    if not all(isinstance(k, (int, np.integer, slice)) and not isinstance(k, bool) for k in key):
        return None  # with an Ellipsis or a new axis, key positions are not the value's axes
    integer_axes = [i for i, k in enumerate(key) if isinstance(k, (int, np.integer))]
    if not integer_axes or len(value_shape) != len(target_shape) + len(integer_axes):
        return None
    if any(value_shape[i] != 1 for i in integer_axes):
        return None
    return tuple(d for i, d in enumerate(value_shape) if i not in integer_axes)


def _without_leading_ones(value_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> tuple[int, ...]:
    """A value's shape without the leading axes of length 1 that the target lacks: NumPy refuses a
    (1,)-shaped value for a single element (``x[0, 1] = nd.array([5])``, which MXNet takes)."""
    return tuple(value_shape[len(value_shape) - len(target_shape) :])


def _check_broadcast(value_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> None:
    if value_shape == target_shape:  # the commonest assignment (``x[:] = batch``): nothing broadcasts
        return
    try:
        np.broadcast_shapes(value_shape, target_shape)
        if len(value_shape) > len(target_shape) and any(
            d != 1 for d in value_shape[: len(value_shape) - len(target_shape)]
        ):
            raise ValueError
    except ValueError:
        raise ShapeError(
            f"__setitem__: cannot assign a value of shape {value_shape} to a target of shape {target_shape}"
        ) from None
    if np.broadcast_shapes(value_shape, target_shape) != tuple(target_shape) and len(target_shape) >= len(value_shape):
        raise ShapeError(
            f"__setitem__: cannot assign a value of shape {value_shape} to a target of shape {target_shape}"
        )

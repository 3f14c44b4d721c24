"""Python's arithmetic operators on NDArrays (``a + b``, ``a * 2.0``): the shortest paths to the kernels.

Floating-point arithmetic between two small, ready, same-shape CPU arrays (or one and a
Python scalar) is computed at once on the calling thread with no engine bookkeeping;
same-shape CPU float arithmetic otherwise is pushed straight to its ufunc kernel; every
other case (broadcasting, other dtypes, devices) goes through :func:`.dispatch.invoke`.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from .. import engine as _engine_mod
from ..backend import cpu_backend
from ..backend.fperr import quietly
from ..engine import get_engine
from ..engine.var import Var
from ..errors import ShapeError
from ..ops import registry
from . import dispatch as _dispatch
from .dispatch import invoke

NDArray: Any = None  # bound by ndarray.py (circular import)

# kind -> (same-shape op, broadcast op, scalar op, reflected scalar op)
BINARY_OPS = {
    "add": ("_plus", "broadcast_add", "_plus_scalar", "_plus_scalar"),
    "sub": ("_minus", "broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "mul": ("_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "div": ("_div", "broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": ("_mod", "broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "power": ("_power", "broadcast_power", "_power_scalar", "_rpower_scalar"),
    "equal": ("_equal", "broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("_not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("_greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("_greater_equal", "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lesser": ("_lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "lesser_equal": ("_lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}

from ..ops.elemwise_binary import FAST_KERNELS as CPU_FAST_KERNELS  # noqa: E402 - next to the tables that use it

_float_kinds = frozenset("fc")


# Python's operators reach the same ufuncs as CPU_FAST_KERNELS, a little sooner; on two C-contiguous
# inputs (or one and a scalar) they return a fresh C-contiguous array of the inputs' dtype
_RUN_NOW_KERNELS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": quietly(operator.truediv),
    "mod": quietly(operator.mod),
    "power": quietly(operator.pow),
}


def fast_key(arr: Any) -> Any:
    """The array's interned signature (:func:`.dispatch.signature`) when the fast path applies to it, else ``False``.

    It applies to arrays that are C-contiguous, floating-point, of at least one dimension, on
    the CPU and of at most ``dispatch.INLINE_MAX_ELEMENTS`` elements; two such arrays can then be
    added at once exactly when their keys are the same object (same shape, dtype and device).
    Computed once per array and kept in its ``_fast`` slot: an NDArray's ``_data`` never changes.
    (So a change to ``dispatch.INLINE_MAX_ELEMENTS`` applies to arrays made after it.)
    """
    data = arr._data
    key: Any = False
    if (
        arr._ctx.device_type == "cpu"
        and data.ndim
        and data.size <= _dispatch.INLINE_MAX_ELEMENTS
        and data.dtype.kind in _float_kinds
        and data.flags.c_contiguous
    ):
        sig = arr._sig
        key = sig if sig is not None else _dispatch.signature(arr)
    arr._fast = key
    return key


_new_object = object.__new__


def binary_method(kind: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    """``NDArray.__add__`` and friends: ``binary(kind, ...)`` with a shortcut for the commonest cases.

    Floating-point arithmetic on the CPU between two same-shape C-contiguous arrays, or between
    such an array and a Python scalar, whose inputs are idle and small runs at once on the
    calling thread, into a fresh array, with no engine bookkeeping at all.  This is
    :meth:`lazynd.engine.Engine.run_now` written out in place (:meth:`Var.value_ready` included)
    because it is the path of ``c = a + b`` in a user's loop, where every line costs.
    Otherwise, or when the kernel raises, the op is pushed as usual and errors reach a wait.
    """
    run_kernel = _RUN_NOW_KERNELS.get(kind)
    # the closures below are chosen only when there is a kernel (see ``chosen``)
    kernel = cast(Callable[[Any, Any], Any], run_kernel)
    scalar_ops = (registry.get(BINARY_OPS[kind][2]), registry.get(BINARY_OPS[kind][3]))  # array op s, s op array

    def method(lhs: Any, rhs: Any) -> Any:
        return binary(kind, lhs, rhs, reflected)

    def forward(lhs: Any, rhs: Any) -> Any:
        key = lhs._fast
        cls = rhs.__class__
        if cls is NDArray:
            if key is not rhs._fast or key is None:
                key = fast_key(lhs) if key is None else key
                if (rhs._fast if rhs._fast is not None else fast_key(rhs)) is not key:
                    key = False
            vx = lhs._var
            vy = rhs._var
            if (
                key
                and vx.value_ready()
                and vy.value_ready()
                and not _engine_mod.recording
            ):
                try:
                    data = kernel(lhs._data, rhs._data)
                except Exception:  # noqa: BLE001, S110 - pushed below: the error reaches a wait
                    pass
                else:
                    res = _new_object(NDArray)  # NDArray.__init__'s work, minus its defaults
                    res._data = data
                    res._var = Var()
                    res._ctx = lhs._ctx
                    res._fast = key
                    res._sig = key  # a result has its operand's shape, dtype and device
                    return res
        elif cls is float or cls is int:
            return with_scalar(lhs, rhs, False)
        return binary(kind, lhs, rhs, False)

    def with_scalar(lhs: Any, rhs: Any, reflected: bool) -> Any:  # array op scalar, scalar op array
        key = lhs._fast
        if key is None:
            key = fast_key(lhs)
        vx = lhs._var
        if key and vx.value_ready() and not _engine_mod.recording:
            scalar = key.dtype.type(rhs)  # MXNet casts the scalar to the array's dtype
            try:
                data = kernel(scalar, lhs._data) if reflected else kernel(lhs._data, scalar)
            except Exception:  # noqa: BLE001, S110 - pushed below: the error reaches a wait
                pass
            else:
                res = _new_object(NDArray)
                res._data = data
                res._var = Var()
                res._ctx = lhs._ctx
                res._fast = key
                res._sig = key  # a result has its operand's shape, dtype and device
                return res
        return invoke(scalar_ops[reflected], [lhs], {"scalar": rhs})

    def backward(lhs: Any, rhs: Any) -> Any:  # scalar - array (NDArray - NDArray never comes here)
        cls = rhs.__class__
        if cls is float or cls is int:
            return with_scalar(lhs, rhs, True)
        return binary(kind, lhs, rhs, True)

    chosen = method if run_kernel is None else backward if reflected else forward
    chosen.__name__ = f"__{'r' if reflected else ''}{kind}__"
    return chosen


def binary(kind: str, lhs: Any, rhs: Any, reflected: bool = False, out: Any = None) -> Any:
    if rhs.__class__ is NDArray:
        ld = lhs._data
        rd = rhs._data
        ctx = lhs._ctx
        shape = ld.shape
        dtype = ld.dtype
        if (
            shape == rd.shape
            and dtype is rd.dtype
            and dtype.kind in _float_kinds
            and ctx.device_type == "cpu"
            and (ctx is rhs._ctx or ctx == rhs._ctx)
        ):
            size = ld.size
            if out is None:
                data = np.empty(shape, dtype) if size < 16384 else cpu_backend.empty(shape, dtype)
                res = NDArray(data, Var(), ctx)
            else:
                if out._data.shape != shape:
                    raise ShapeError(f"{BINARY_OPS[kind][0]}: out has shape {out.shape}, expected {shape}")
                res = out
            get_engine().push(
                CPU_FAST_KERNELS[kind],
                (ld, rd, res._data),
                (lhs._var, rhs._var),
                (res._var,),
                BINARY_OPS[kind][0],
                ctx,
                size <= _dispatch.INLINE_MAX_ELEMENTS,
            )
            return res
        names = BINARY_OPS[kind]
        op_name = names[0] if ld.shape == rd.shape else names[1]
        return invoke(registry.get(op_name), [lhs, rhs], {}, out)
    if isinstance(rhs, (numbers.Number, np.generic)):
        names = BINARY_OPS[kind]
        return invoke(registry.get(names[3] if reflected else names[2]), [lhs], {"scalar": rhs}, out)
    if isinstance(rhs, (np.ndarray, list, tuple)):
        from .creation import array

        other = array(rhs, ctx=lhs._ctx, dtype=lhs._data.dtype)
        if reflected:
            return binary(kind, other, lhs, out=out)
        return binary(kind, lhs, other, out=out)
    return NotImplemented

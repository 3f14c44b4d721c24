"""How NDArray calls reach kernels: operator invocation and its call plans.

``invoke`` is the one imperative path for every registered operator: parse
parameters, infer output shapes and types, allocate the outputs, and push the
kernel to the engine with the vars it reads and writes.  What a call needs beyond
its arrays is planned once per call signature (:class:`_Plan`).  The public
``nd.<Op>`` functions that lead here are made in :mod:`.functions`; Python's
arithmetic operators take the shorter paths of :mod:`.arithmetic`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import engine as _engine_mod
from ..backend import blas, cpu_backend, get_backend
from ..backend.pool import MIN_POOLED_BYTES, aligned_zeros, size_class
from ..context import Context, current_context
from ..engine import get_engine
from ..engine.var import Var
from ..errors import OperatorError, ShapeError
from ..ops import registry
from ..ops.registry import KernelContext, OpDef

NDArray: Any = None  # bound by ndarray.py (circular import)

_pool_take = cpu_backend.pool.take

# CPU operations this small run on the pushing thread when their inputs are ready
INLINE_MAX_ELEMENTS = int(os.environ.get("LAZYND_INLINE_MAX", "32768"))

_kernel_contexts: dict[tuple[Context, bool], KernelContext] = {}


def kernel_context(ctx: Context, is_train: bool = False) -> KernelContext:
    key = (ctx, is_train)
    kctx = _kernel_contexts.get(key)
    if kctx is None:
        backend = get_backend(ctx)
        kctx = KernelContext(backend.xp, backend, ctx.device_id, is_train)
        _kernel_contexts[key] = kctx
    return kctx


def push_kernel(
    ctx: Context,
    fn: Callable[..., Any],
    args: tuple,
    reads: Sequence[Var],
    writes: Sequence[Var],
    name: str,
    work: int,
    kind: str = "compute",
) -> None:
    """Push ``fn(*args)`` on ``ctx``'s device; GPU work is wrapped with stream/event handling."""
    if ctx.device_type == "gpu":
        fn = get_backend(ctx).wrap(fn, reads, writes, kind)
        get_engine().push(fn, args, reads, writes, name, ctx, inline_ok=True)
    else:
        get_engine().push(fn, args, reads, writes, name, ctx, inline_ok=work <= INLINE_MAX_ELEMENTS)


def new_array(shape: tuple[int, ...], dtype: Any, ctx: Context) -> Any:
    if ctx.device_type != "gpu":
        return NDArray(cpu_backend.empty(shape, dtype), Var(), ctx)
    backend = get_backend(ctx)
    data = backend.empty(shape, dtype)
    return NDArray(data, backend.new_var(data), ctx)


# -- generic operator invocation -----------------------------------------------------------------
def _context_of(op: OpDef, inputs: Sequence[Any], attrs: dict) -> Context:
    if inputs:
        ctx = inputs[0]._ctx
        for i, x in enumerate(inputs[1:], 1):
            if x._ctx != ctx:
                raise OperatorError(f"{op.name}: input {i} is on {x._ctx}, expected {ctx} like input 0")
        return ctx
    ctx = attrs.get("ctx")
    return ctx if ctx is not None else current_context()


class _Plan:
    """What one imperative call needs beyond its arrays; the same for every call with the same
    operator, parameters and input shapes, dtypes and contexts (see :func:`invoke`)."""

    __slots__ = (
        "attrs",
        "n_in",
        "out_shapes",
        "out_types",
        "ctx",
        "fn",
        "into_zeros",
        "fresh_fn",
        "backend",
        "kctx",
        "n_visible",
        "work",
        "plain",
        "mutated",
        "pooled",
        "small",
        "zeroed",
        "blas_var",
    )

    def __init__(self, op: OpDef, inputs: Sequence[Any], kwargs: dict[str, Any], is_train: bool) -> None:
        attrs = op.parse(kwargs)
        if op.variadic and attrs.get("num_args") is None:
            attrs["num_args"] = len(inputs) - len(op.aux)
        names = op.input_names(attrs)
        n_in = len(names)
        if len(inputs) != n_in + len(op.aux):
            expected = ", ".join(names + list(op.aux))
            raise OperatorError(f"{op.name}: expected {n_in + len(op.aux)} input(s) ({expected}), got {len(inputs)}")
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                label = (names + list(op.aux))[i]
                raise OperatorError(f"{op.name}: input '{label}' must be an NDArray, got {type(x).__name__}")
        data_inputs, aux_inputs = inputs[:n_in], inputs[n_in:]
        ctx = _context_of(op, inputs, attrs)

        in_shapes = [x.shape for x in data_inputs]
        new_in, out_shapes, _ = op.infer_shape(attrs, list(in_shapes), [x.shape for x in aux_inputs])
        for name, given, inferred in zip(names, in_shapes, new_in, strict=False):
            if inferred is not None and tuple(inferred) != tuple(given):
                raise ShapeError(f"{op.name}: shape of '{name}' is {given}, expected {tuple(inferred)}")
        for shape in out_shapes:
            if shape is None or any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
                raise ShapeError(f"{op.name}: cannot infer the output shape from inputs {in_shapes} (got {shape})")
        in_types = [x._data.dtype.name for x in data_inputs]
        _, out_types, _ = op.infer_type(attrs, in_types, [x._data.dtype.name for x in aux_inputs])

        self.attrs = attrs
        self.n_in = n_in
        self.out_shapes = [tuple(int(d) for d in s) for s in out_shapes]
        self.out_types = [t or "float32" for t in out_types]
        self.ctx = ctx
        on_gpu = ctx.device_type == "gpu"
        self.fn = op.forward_gpu if (on_gpu and op.forward_gpu is not None) else op.forward
        # outputs of its own allocation: zero-filled ones where the operator has a kernel for them
        # (on the CPU the allocator's fresh zeroed pages are cheaper than filling a buffer)
        self.into_zeros = not on_gpu and op.forward_into_zeros is not None
        self.fresh_fn = op.forward_into_zeros if op.forward_into_zeros is not None and self.into_zeros else self.fn
        self.backend = get_backend(ctx) if on_gpu else cpu_backend
        self.kctx = kernel_context(ctx, is_train)
        self.n_visible = op.num_visible_outputs(attrs)
        self.mutated = op.mutated_inputs(attrs)
        self.work = sum(x._data.size for x in inputs) + sum(int(np.prod(s)) for s in self.out_shapes)
        # a GEMM-heavy kernel under a multi-threaded host BLAS also writes the BLAS var
        # (lazynd.backend.blas); ``plain``: only the arrays' own vars are read and written (no
        # mutated inputs, aux states, generator or BLAS var)
        self.blas_var = blas.BLAS_VAR if op.blas_heavy and not on_gpu else None
        self.plain = not (
            self.mutated
            or op.needs_random
            or (is_train and op.aux and op.writes_aux_in_train)
            or self.blas_var is not None
        )
        # fresh CPU outputs all large enough for the pool: (shape, dtype, size class) of each, so a
        # call takes its buffers with no arithmetic (see ``invoke``); None otherwise
        self.pooled: list[tuple[tuple[int, ...], np.dtype, int]] | None = None
        # fresh CPU outputs all too small for the pool: (shape, dtype) of each, for NumPy's own
        # allocator directly (the backend's ``empty`` works out the dtype and size on every call,
        # 2.4 us right after a 1M-element kernel has emptied the caches); None otherwise
        self.small: list[tuple[tuple[int, ...], np.dtype]] | None = None
        # zero-filled CPU outputs all large enough to be page-aligned: (shape, dtype, bytes) of each
        self.zeroed: list[tuple[tuple[int, ...], np.dtype, int]] | None = None
        if not on_gpu:
            specs = [(s, np.dtype(t)) for s, t in zip(self.out_shapes, self.out_types, strict=True)]
            sizes = [math.prod(s) * t.itemsize for s, t in specs]
            if all(n < MIN_POOLED_BYTES for n in sizes):
                self.small = specs  # zero-filled or not, NumPy's allocator serves them
            elif all(n >= MIN_POOLED_BYTES for n in sizes):
                if self.into_zeros:
                    self.zeroed = [(s, t, n) for (s, t), n in zip(specs, sizes, strict=True)]
                else:
                    self.pooled = [(s, t, size_class(n)) for (s, t), n in zip(specs, sizes, strict=True)]


# plans by (operator, is_train, parameters with their types, input signatures)
_plans: dict[tuple, _Plan] = {}
_MAX_PLANS = 4096


class _Signature:
    """An array's (shape, dtype, device type, device id), interned: equal signatures are one object.

    The plan cache keys on signatures by identity, so a key of many inputs (a multi-parameter
    update has a dozen) hashes a pointer per input instead of a shape tuple and a dtype.  The
    arithmetic fast path uses them too (:func:`.arithmetic.fast_key`): two arrays may be added
    at once when they share one.
    """

    __slots__ = ("spec", "dtype", "plans")

    def __init__(self, spec: tuple) -> None:
        self.spec = spec
        self.dtype = spec[1]
        # plans of the operators called on an array of this signature alone, with no parameters
        # (``nd.exp(x)``, ``nd.norm(x)``): found by one lookup keyed on the operator
        self.plans: dict[OpDef, _Plan] = {}


_signatures: dict[tuple, _Signature] = {}


def signature(arr: Any) -> _Signature:
    """The array's interned :class:`_Signature`, computed once and kept in its ``_sig`` slot.

    An NDArray's ``_data`` never changes, so neither does its signature.  When the table is
    emptied (a program with ever-new shapes), arrays keep their old signature objects: their
    plans are still right, only no longer shared with arrays signed after.
    """
    data = arr._data
    ctx = arr._ctx
    spec = (data.shape, data.dtype, ctx.device_type, ctx.device_id)
    sig = _signatures.get(spec)
    if sig is None:
        if len(_signatures) >= _MAX_PLANS:
            _signatures.clear()
        sig = _signatures.setdefault(spec, _Signature(spec))
    arr._sig = sig
    return sig


def _plan_for(op: OpDef, inputs: Sequence[Any], kwargs: dict[str, Any], is_train: bool) -> _Plan:
    if not inputs:  # creation operators: the context may come from a ``with`` scope
        return _Plan(op, inputs, kwargs, is_train)
    if not kwargs and not is_train and len(inputs) == 1:
        # one array, no parameters: the plan hangs on the array's signature (no key to build,
        # a lookup that stays cheap when a large kernel has just emptied the caches)
        x = inputs[0]
        if x.__class__ is NDArray:
            sig = x._sig
            if sig is None:
                sig = signature(x)
            plan = sig.plans.get(op)
            if plan is None:
                plan = sig.plans[op] = _Plan(op, inputs, kwargs, is_train)
            return plan
    key: list[Any] = [op, is_train]
    for k, v in kwargs.items():
        key += (k, v.__class__, v)  # the type too: 1 and 1.0 may parse differently
    for x in inputs:
        if x.__class__ is not NDArray:
            return _Plan(op, inputs, kwargs, is_train)  # raises the clear error, or a subclass
        sig = x._sig
        key.append(sig if sig is not None else signature(x))
    frozen = tuple(key)
    try:
        plan = _plans.get(frozen)
    except TypeError:  # an unhashable parameter value (a list): plan this call alone
        return _Plan(op, inputs, kwargs, is_train)
    if plan is None:
        plan = _Plan(op, inputs, kwargs, is_train)
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[frozen] = plan
    return plan


def invoke(
    op: OpDef,
    inputs: Sequence[Any],
    kwargs: dict[str, Any],
    out: Any = None,
    is_train: bool = False,
) -> Any:
    """Run operator ``op`` imperatively; return its visible output(s).

    Parsing, validation and shape/type inference are done once per distinct call signature
    and cached (:class:`_Plan`); a repeated call only allocates its outputs and pushes.
    """
    plan = _plan_for(op, inputs, kwargs, is_train)
    ctx = plan.ctx
    n_in = plan.n_in
    # the common calls are written out: each step saved is felt on 1M-element arrays too, where
    # this Python runs with caches the previous kernel has just emptied
    if out is None:
        fn = plan.fresh_fn
        pooled = plan.pooled
        if pooled is not None and len(pooled) == 1:
            shape, dtype, size = pooled[0]
            outputs = [NDArray(_pool_take(shape, dtype, size), Var(), ctx)]
        elif pooled is not None:
            outputs = [NDArray(_pool_take(shape, dtype, size), Var(), ctx) for shape, dtype, size in pooled]
        elif plan.small is not None:
            new = np.zeros if plan.into_zeros else np.empty
            outputs = [NDArray(new(shape, dtype), Var(), ctx) for shape, dtype in plan.small]
        elif plan.zeroed is not None:
            outputs = [NDArray(aligned_zeros(shape, dtype, n), Var(), ctx) for shape, dtype, n in plan.zeroed]
        else:
            backend = plan.backend
            alloc = backend.zeros if plan.into_zeros else backend.empty
            fresh = [alloc(s, t) for s, t in zip(plan.out_shapes, plan.out_types, strict=True)]
            outputs = [NDArray(data, backend.new_var(data), ctx) for data in fresh]
    else:
        fn = plan.fn
        outputs = _prepare_outputs(op, out, plan.out_shapes, plan.out_types, ctx, len(plan.out_shapes))

    kctx = plan.kctx
    args: tuple
    if plan.plain and n_in == len(inputs) and n_in == 1 and len(outputs) == 1:
        x = inputs[0]
        o = outputs[0]
        args = (kctx, plan.attrs, [x._data], [o._data], [])
        reads = [x._var]
        writes = [o._var]
    elif plan.plain and n_in == len(inputs):
        args = (kctx, plan.attrs, [x._data for x in inputs], [o._data for o in outputs], [])
        reads = [x._var for x in inputs]
        writes = [o._var for o in outputs]
    else:
        reads = [x._var for x in inputs]
        writes = [o._var for o in outputs]
        if plan.mutated:
            writes += [inputs[i]._var for i in plan.mutated]
        if is_train and op.aux and op.writes_aux_in_train:
            writes += [a._var for a in inputs[n_in:]]
        if plan.blas_var is not None:
            writes.append(plan.blas_var)
        if op.needs_random:
            from ..random import generator_for

            state = generator_for(ctx)
            kctx = KernelContext(kctx.xp, kctx.backend, kctx.device_id, is_train, state.generator)
            writes.append(state.var)
        args = (
            kctx,
            plan.attrs,
            [x._data for x in inputs[:n_in]],
            [o._data for o in outputs],
            [a._data for a in inputs[n_in:]],
        )
    if ctx.device_type == "gpu":
        push_kernel(ctx, fn, args, reads, writes, op.name, plan.work)
    else:
        (_engine_mod._engine or get_engine()).push(fn, args, reads, writes, op.name, ctx, plan.work <= INLINE_MAX_ELEMENTS)

    if out is not None:
        return out
    return outputs[0] if plan.n_visible == 1 else outputs[: plan.n_visible]


def _prepare_outputs(op: OpDef, out: Any, shapes: list, types: list, ctx: Context, n_out: int) -> list:
    if out is None:
        for shape in shapes:
            if shape is None or any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
                raise ShapeError(f"{op.name}: cannot infer the output shape (got {shape})")
        return [new_array(tuple(s), t or "float32", ctx) for s, t in zip(shapes, types, strict=True)]
    if out.__class__ is NDArray and n_out == 1 and out._data.shape == tuple(shapes[0]) and out._ctx == ctx:
        return [out]  # the common ``out=weight`` of an update: one check of shape and device
    if out.__class__ is list and len(out) == n_out:
        # ``out=weights`` of a multi-parameter update: every array in place, on the device, of its shape
        for o, shape in zip(out, shapes, strict=False):
            if o.__class__ is not NDArray or o._data.shape != tuple(shape) or (o._ctx is not ctx and o._ctx != ctx):
                break
        else:
            return list(out)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) > n_out:
        raise OperatorError(f"{op.name}: {len(outs)} out arrays given, the operator has {n_out} output(s)")
    # outputs the caller did not ask for (e.g. BatchNorm's saved mean) get fresh buffers
    outs += [new_array(tuple(s), t or "float32", ctx) for s, t in zip(shapes[len(outs) :], types[len(outs) :], strict=True)]
    for i, (o, shape) in enumerate(zip(outs, shapes, strict=True)):
        if not isinstance(o, NDArray):
            raise OperatorError(f"{op.name}: out must be an NDArray, got {type(o).__name__}")
        if tuple(o.shape) != tuple(shape):
            raise ShapeError(f"{op.name}: out[{i}] has shape {o.shape}, expected {tuple(shape)}")
        if o._ctx != ctx:
            raise OperatorError(f"{op.name}: out[{i}] is on {o._ctx}, expected {ctx}")
    return outs


def invoke_by_name(name: str, inputs: Sequence[Any], kwargs: dict[str, Any], out: Any = None) -> Any:
    return invoke(registry.get(name), inputs, kwargs, out)

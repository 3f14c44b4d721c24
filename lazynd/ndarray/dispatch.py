"""How NDArray calls reach kernels: operator invocation, arithmetic fast paths, copies.

``invoke`` is the one imperative path for every registered operator: parse
parameters, infer output shapes and types, allocate the outputs, and push the
kernel to the engine with the vars it reads and writes.  Elementwise arithmetic
between same-shaped CPU arrays (``a + b``) takes a shorter path to the same
kernels, because it is the most common call in user code.
"""

from __future__ import annotations

import math
import numbers
import operator
import os
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from .. import engine as _engine_mod
from ..backend import cpu_backend, get_backend
from ..backend.fperr import quietly
from ..backend.pool import MIN_POOLED_BYTES, size_class
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
    backend = cpu_backend if ctx.device_type != "gpu" else get_backend(ctx)
    return NDArray(backend.empty(shape, dtype), Var(), ctx)


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
        # only the arrays' own vars are read and written: no mutated inputs, aux states or generator
        self.plain = not (self.mutated or op.needs_random or (is_train and op.aux and op.writes_aux_in_train))
        # fresh CPU outputs all large enough for the pool: (shape, dtype, size class) of each, so a
        # call takes its buffers with no arithmetic (see ``invoke``); None otherwise
        self.pooled: list[tuple[tuple[int, ...], np.dtype, int]] | None = None
        if not on_gpu and not self.into_zeros:
            specs = [(s, np.dtype(t)) for s, t in zip(self.out_shapes, self.out_types, strict=True)]
            sizes = [math.prod(s) * t.itemsize for s, t in specs]
            if all(n >= MIN_POOLED_BYTES for n in sizes):
                self.pooled = [(s, t, size_class(n)) for (s, t), n in zip(specs, sizes, strict=True)]


# plans by (operator, is_train, parameters with their types, input signatures)
_plans: dict[tuple, _Plan] = {}
_MAX_PLANS = 4096


class _Signature:
    """An array's (shape, dtype, device type, device id), interned: equal signatures are one object.

    The plan cache keys on signatures by identity, so a key of many inputs (a multi-parameter
    update has a dozen) hashes a pointer per input instead of a shape tuple and a dtype.
    """

    __slots__ = ("spec",)

    def __init__(self, spec: tuple) -> None:
        self.spec = spec


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
        else:
            alloc = plan.backend.zeros if plan.into_zeros else plan.backend.empty
            outputs = [NDArray(alloc(s, t), Var(), ctx) for s, t in zip(plan.out_shapes, plan.out_types, strict=True)]
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


def make_function(op: OpDef, public_name: str) -> Callable[..., Any]:
    """The ``lazynd.nd.<name>`` function of an operator."""
    param_names = list(op.params)
    # input names that do not depend on parameters (most operators): computed once
    static_names = None if (op.variadic or callable(op._inputs)) else list(op._inputs)
    # keywords that the common call never uses: naming an input, or asking for training mode
    special = None if static_names is None else frozenset((*static_names, *op.aux, "is_train"))
    # operators whose inputs depend on their parameters (multi_sgd_update...): keywords that are
    # all parameters name no input either
    param_set = frozenset(op.params)

    def function(*args: Any, out: Any = None, name: str | None = None, **kwargs: Any) -> Any:
        if special.isdisjoint(kwargs) if special is not None else (not op.variadic and param_set.issuperset(kwargs)):
            # the common call, ``f(x, y, param=value)``: arrays by position, parameters by name
            for a in args:
                if a.__class__ is not NDArray:
                    break
            else:
                return invoke(op, args, kwargs, out)
        is_train = bool(kwargs.pop("is_train", False))
        attrs_given: dict[str, Any] = {}
        inputs: list[Any] = []
        positional_params: list[Any] = []
        for a in args:
            if isinstance(a, NDArray) and not positional_params:
                inputs.append(a)
            elif isinstance(a, (list, tuple)) and a and all(isinstance(v, NDArray) for v in a) and op.variadic:
                inputs.extend(a)
            else:
                positional_params.append(a)
        if static_names is not None:
            names = static_names
        elif all(key in op.params for key in kwargs):
            names = []  # no keyword can name an input: no parse needed to find the input names
        else:
            probe = {k: v for k, v in kwargs.items() if k in op.params}
            try:
                names = op.input_names(op.parse(probe)) if not op.variadic else []
            except OperatorError:
                names = op.input_names({k: p.default for k, p in op.params.items()}) if not op.variadic else []
        named_inputs = {}
        for key in list(kwargs):
            if key in names or key in op.aux:
                named_inputs[key] = kwargs.pop(key)
        for key, value in kwargs.items():
            attrs_given[key] = value
        free_params = [p for p in param_names if p not in attrs_given and p != "num_args"]
        if len(positional_params) > len(free_params):
            raise OperatorError(f"{op.name}: too many positional arguments ({len(args)})")
        for key, value in zip(free_params, positional_params, strict=False):
            attrs_given[key] = value
        if named_inputs:
            if not op.variadic:
                ordered = list(inputs)
                for key in names + list(op.aux):
                    if key in named_inputs:
                        ordered.append(named_inputs[key])
                inputs = ordered
        return invoke(op, inputs, attrs_given, out, is_train)

    function.__name__ = public_name
    function.__qualname__ = public_name
    function.__doc__ = _function_doc(op)
    return function


def _function_doc(op: OpDef) -> str:
    lines = [op.doc.strip() or f"The {op.name} operator.", "", "Parameters", "----------"]
    for name in op.input_names({k: p.default for k, p in op.params.items()}) if not op.variadic else ["*data"]:
        lines.append(f"{name} : NDArray")
    for name, p in op.params.items():
        default = "required" if p.required else f"default {p.default!r}"
        lines.append(f"{name} : {getattr(p.parser, '__name__', 'value')}, {default}")
        if p.doc:
            lines.append(f"    {p.doc}")
    lines.append("out : NDArray, optional\n    Write the result here instead of a new array.")
    return "\n".join(lines)


_functions: dict[str, Callable[..., Any]] = {}


def method(name: str) -> Callable[..., Any] | None:
    """The registered operator ``name`` as an NDArray method (``x.sum(axis=1)``), if any."""
    fn = _functions.get(name)
    if fn is None and not name.startswith("_") and registry.exists(name):
        fn = make_function(registry.get(name), name)
        _functions[name] = fn
    return fn


# -- arithmetic fast path ------------------------------------------------------------------------
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

from ..ops.elemwise_binary import FAST_KERNELS as CPU_FAST_KERNELS  # noqa: E402 - next to the fast-path tables that use it

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


class _FastKey:
    """What the arithmetic fast path needs to know of an array, shared by every array alike.

    Arrays that are C-contiguous, floating-point, of at least one dimension, on the CPU and of
    at most ``INLINE_MAX_ELEMENTS`` elements get the one key interned for their (context, shape,
    dtype); two arrays can then be added at once exactly when their keys are the same object.
    """

    __slots__ = ("dtype",)

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype


_fast_keys: dict[tuple[Any, ...], _FastKey] = {}


def fast_key(arr: Any) -> Any:
    """The array's :class:`_FastKey`, or ``False`` when the fast path does not apply to it.

    Computed once per array and kept in its ``_fast`` slot: an NDArray's ``_data`` never changes.
    (So a change to ``INLINE_MAX_ELEMENTS`` applies to arrays made after it.)
    """
    data = arr._data
    ctx = arr._ctx
    key: Any = False
    if (
        ctx.device_type == "cpu"
        and data.ndim
        and data.size <= INLINE_MAX_ELEMENTS
        and data.dtype.kind in _float_kinds
        and data.flags.c_contiguous
    ):
        spec = (ctx, data.shape, data.dtype)
        key = _fast_keys.get(spec)
        if key is None:
            if len(_fast_keys) > 4096:  # programs with ever-new shapes: keep the table small
                _fast_keys.clear()
            key = _fast_keys.setdefault(spec, _FastKey(data.dtype))
    arr._fast = key
    return key


_new_object = object.__new__


def binary_method(kind: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    """``NDArray.__add__`` and friends: ``binary(kind, ...)`` with a shortcut for the commonest cases.

    Floating-point arithmetic on the CPU between two same-shape C-contiguous arrays, or between
    such an array and a Python scalar, whose inputs are idle and small runs at once on the
    calling thread, into a fresh array, with no engine bookkeeping at all.  This is
    :meth:`lazynd.engine.Engine.run_now` written out in place (``var.idle``'s test included)
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
                and not (vx.queue or vx.writing or vx.exc is not None)
                and not (vy.queue or vy.writing or vy.exc is not None)
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
                    res._sig = None
                    return res
        elif cls is float or cls is int:
            return with_scalar(lhs, rhs, False)
        return binary(kind, lhs, rhs, False)

    def with_scalar(lhs: Any, rhs: Any, reflected: bool) -> Any:  # array op scalar, scalar op array
        key = lhs._fast
        if key is None:
            key = fast_key(lhs)
        vx = lhs._var
        if key and not (vx.queue or vx.writing or vx.exc is not None) and not _engine_mod.recording:
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
                res._sig = None
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
                size <= INLINE_MAX_ELEMENTS,
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

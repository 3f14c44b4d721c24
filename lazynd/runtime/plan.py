"""Call plans: what an operator call needs beyond its arrays, worked out once per call signature.

A :class:`CallPlan` holds the parsed parameters, the output shapes and types, the kernel
chosen for the device, how the outputs are allocated, and the call's :class:`VarAccess`:
every engine var it reads and writes besides its inputs and outputs (inputs the kernel
mutates, auxiliary states in training, the host BLAS's var, the random generator's var).
Imperative calls (``nd.<Op>``, ``a + b``) and the symbolic executor take that access from
here, so both order an operator's work by the same rule.

Plans take arrays' public surface (``shape``, ``dtype``, ``context``, ``signature``) and are
cached by (operator, training flag, parameters, input signatures).
"""

from __future__ import annotations

import itertools
import marshal
import math
from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

import numpy as np

from ..backend import blas, cpu_backend, get_backend
from ..backend.pool import MIN_POOLED_BYTES, aligned_zeros, size_class
from ..context import Context, current_context, share_memory
from ..engine.var import Var
from ..errors import OperatorError, ShapeError
from ..ops.registry import OpDef
from ..util import np_shape
from .device_push import kernel_context
from .random_state import generator_for

_pool_take = cpu_backend.pool.take
_MAX_PLANS = 4096
_MAX_SIGNATURE_PLANS = 256  # plans kept on one signature (see plan_for)


class VarAccess:
    """The vars an operator call writes besides its outputs, by the operator's declarations.

    ``mutated``: indices of inputs the kernel updates in place (``filled``: those of them it
    overwrites with a constant, which autograd lets a recorded call write); ``aux_written``: auxiliary
    states are updated (a call of an operator that says so for its mode: training, or predicting too); ``blas_var``: the host
    BLAS's var, for a GEMM-heavy kernel on the CPU while the BLAS has threads of its own
    (:mod:`lazynd.backend.blas`); ``random``: the kernel draws from its context's generator.
    ``plain`` is true when there is none of these.
    """

    __slots__ = ("mutated", "filled", "aux_written", "blas_var", "random", "plain")

    def __init__(self, op: OpDef, attrs: dict, ctx: Context, is_train: bool) -> None:
        self.mutated = op.mutated_inputs(attrs)
        self.filled = op.filled_inputs(attrs)
        self.aux_written = bool(op.aux and (op.writes_aux_in_train if is_train else op.writes_aux_in_predict))
        self.blas_var: Var | None = blas.BLAS_VAR if op.blas_heavy and ctx.device_type != "gpu" else None
        self.random = op.draws_random(attrs)
        self.plain = not (self.mutated or self.aux_written or self.blas_var is not None or self.random)

    def extra_writes(self, ctx: Context) -> list[Var]:
        """The vars written that belong to no array: the BLAS var and the generator's var."""
        extra = [] if self.blas_var is None else [self.blas_var]
        if self.random:
            extra.append(generator_for(ctx).var)
        return extra

    def written_inputs(self, data_inputs: Sequence[Any], aux_inputs: Sequence[Any]) -> list[Any]:
        """The members of ``data_inputs`` the kernel mutates, and ``aux_inputs`` when they are
        updated (given as vars, or as whatever stands for them: an executor passes graph entries)."""
        written = [data_inputs[i] for i in self.mutated]
        if self.aux_written:
            written += aux_inputs
        return written

    def writes(self, data_vars: Sequence[Var], aux_vars: Sequence[Var], ctx: Context) -> list[Var]:
        """Every var written besides the outputs': :meth:`written_inputs` and :meth:`extra_writes`."""
        return self.written_inputs(data_vars, aux_vars) + self.extra_writes(ctx)


def _write_nothing(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    """The kernel of a call whose outputs are all empty."""


def kernel_for(op: OpDef, ctx: Context, raw: bool = False) -> Callable[..., Any]:
    """The kernel of ``op`` for ``ctx``'s device: the GPU one where there is one, else the CPU one
    (``raw``: without its own switch of NumPy's warnings, for a caller that runs it inside
    :func:`lazynd.backend.fperr.run_quietly`)."""
    if ctx.device_type == "gpu" and op.forward_gpu is not None:
        return op.forward_gpu
    return op.raw_forward if raw else op.forward


class Signature:
    """An array's (shape, dtype, device type, device id), interned: equal signatures are one object.

    The plan cache keys on signatures by identity, so a key of many inputs (a multi-parameter
    update has a dozen) hashes a pointer per input instead of a shape tuple and a dtype.
    """

    __slots__ = ("spec", "dtype", "plans")

    def __init__(self, spec: tuple) -> None:
        self.spec = spec
        self.dtype = spec[1]
        # plans of calls on at most three inputs and with at most one parameter whose first input
        # has this signature: keyed by the operator for one input and no parameter, else by
        # (operator, the other inputs' signatures or None[, parameter, its type, value]), in a
        # pair with a mark for training mode (see plan_for)
        self.plans: dict[Any, CallPlan] = {}


_signatures: dict[tuple, Signature] = {}


def signature_of(shape: tuple[int, ...], dtype: np.dtype, ctx: Context) -> Signature:
    """The interned :class:`Signature` of an array of ``shape`` and ``dtype`` on ``ctx``.

    When the table is emptied (a program with ever-new shapes), arrays keep their old
    signature objects: their plans are still right, only no longer shared.
    """
    spec = (shape, dtype, ctx.device_type, ctx.device_id)
    sig = _signatures.get(spec)
    if sig is None:
        if len(_signatures) >= _MAX_PLANS:
            _signatures.clear()
        sig = _signatures.setdefault(spec, Signature(spec))
    return sig


def _context_of(op: OpDef, inputs: Sequence[Any], attrs: dict) -> Context:
    """The context of a call: its first input's; every input must be there, except that host
    arrays mix (``cpu(n)`` and ``cpu_pinned(n)`` of any id, as in MXNet 1.x: see share_memory)."""
    if inputs:
        ctx = inputs[0].context
        for i, x in enumerate(inputs[1:], 1):
            if not share_memory(x.context, ctx):
                raise OperatorError(f"{op.name}: input {i} is on {x.context}, expected {ctx} like input 0")
        return ctx
    ctx = attrs.get("ctx")
    return ctx if ctx is not None else current_context()


class CallPlan:
    """What one imperative call needs beyond its arrays; the same for every call with the same
    operator, parameters and input shapes, dtypes and contexts (see :func:`plan_for`)."""

    __slots__ = (
        "op", "attrs", "n_in", "out_shapes", "out_types", "ctx", "fn", "into_zeros", "fresh_fn", "backend",
        "kctx", "n_visible", "work", "access", "pooled", "small", "zeroed", "fresh_alloc", "out_signatures",
    )  # fmt: skip

    def __init__(self, op: OpDef, inputs: Sequence[Any], kwargs: dict[str, Any], is_train: bool) -> None:
        attrs = op.parse(kwargs)
        if op.variadic:
            count = len(inputs) - len(op.aux)
            if attrs.get("num_args") is None:
                attrs["num_args"] = count
            elif attrs["num_args"] != count:  # checked before naming num_args inputs (2**31 of them...)
                raise OperatorError(f"{op.name}: num_args={attrs['num_args']}, but {count} input(s) were given")
        names = op.input_names(attrs)
        n_in = len(names)
        if len(inputs) != n_in + len(op.aux):
            expected = ", ".join(names + list(op.aux))
            raise OperatorError(f"{op.name}: expected {n_in + len(op.aux)} input(s) ({expected}), got {len(inputs)}")
        for i, x in enumerate(inputs):
            if not hasattr(x, "signature") or not hasattr(x, "context"):
                label = (names + list(op.aux))[i]
                raise OperatorError(f"{op.name}: input '{label}' must be an NDArray, got {type(x).__name__}")
        data_inputs, aux_inputs = inputs[:n_in], inputs[n_in:]
        ctx = _context_of(op, inputs, attrs)

        in_shapes = [tuple(x.shape) for x in data_inputs]
        # an NDArray's shape is complete: a 0 in it is a zero-size dimension, never an unknown one
        with np_shape():
            new_in, out_shapes, _ = op.infer_shape(attrs, list(in_shapes), [tuple(x.shape) for x in aux_inputs])
        for name, given, inferred in zip(names, in_shapes, new_in, strict=False):
            if inferred is not None and tuple(inferred) != tuple(given):
                raise ShapeError(f"{op.name}: shape of '{name}' is {given}, expected {tuple(inferred)}")
        for shape in out_shapes:
            if shape is None or any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
                raise ShapeError(f"{op.name}: cannot infer the output shape from inputs {in_shapes} (got {shape})")
        in_types = [np.dtype(x.dtype).name for x in data_inputs]
        _, out_types, _ = op.infer_type(attrs, in_types, [np.dtype(x.dtype).name for x in aux_inputs])

        self.op = op
        self.attrs = attrs
        self.n_in = n_in
        self.out_shapes = [tuple(int(d) for d in s) for s in out_shapes]
        self.out_types = [t or "float32" for t in out_types]
        self.ctx = ctx
        on_gpu = ctx.device_type == "gpu"
        self.fn = kernel_for(op, ctx)
        # outputs of its own allocation: zero-filled ones where the operator has a kernel for them
        # (on the CPU the allocator's fresh zeroed pages are cheaper than filling a buffer)
        self.into_zeros = not on_gpu and op.forward_into_zeros is not None
        self.fresh_fn: Callable[..., Any] = (
            op.forward_into_zeros if op.forward_into_zeros is not None and self.into_zeros else self.fn
        )
        # a GPU's backend, the CPU's, or cpu_pinned's (page-locked memory; the CPU's kernels)
        self.backend = get_backend(ctx)
        self.kctx = kernel_context(ctx, is_train)
        self.n_visible = op.num_visible_outputs(attrs)
        self.access = VarAccess(op, attrs, ctx, is_train)
        access = self.access
        if self.out_shapes and all(0 in s for s in self.out_shapes) and not (access.mutated or access.aux_written):
            # every output is empty and no input or state is updated: there is nothing to compute,
            # and kernels need not handle an empty batch (``Convolution`` of a (0, C, H, W) input)
            self.fn = self.fresh_fn = _write_nothing
        # what the engine's inline rule weighs (lazynd.runtime.device_push): the elements read and
        # written, or a product's multiply-adds (OpDef ``macs``)
        self.work = sum(int(x.size) for x in inputs) + sum(math.prod(s) for s in self.out_shapes)
        if op.macs is not None:
            self.work = max(self.work, op.macs(attrs, [tuple(x.shape) for x in inputs], self.out_shapes))
        # the signatures of fresh outputs, so that a call reading them needs no lookup
        self.out_signatures = [
            signature_of(s, np.dtype(t), ctx) for s, t in zip(self.out_shapes, self.out_types, strict=True)
        ]
        self._plan_allocation()

    def _plan_allocation(self) -> None:
        # fresh CPU outputs all large enough for the pool: (shape, dtype, size class) of each, so a
        # call takes its buffers with no arithmetic; all too small for it: (shape, dtype) for
        # NumPy's own allocator; zero-filled and large: (shape, dtype, bytes), page-aligned
        self.pooled: list[tuple[tuple[int, ...], np.dtype, int]] | None = None
        self.small: list[tuple[tuple[int, ...], np.dtype]] | None = None
        self.zeroed: list[tuple[tuple[int, ...], np.dtype, int]] | None = None
        # the allocator of the output of a call that writes nothing else (no aux states either)
        # when it is one CPU buffer that need not start zeroed (``a + b``, ``g * lr``); else None
        self.fresh_alloc: Callable[[], np.ndarray] | None = None
        if self.backend is not cpu_backend:  # a GPU, or cpu_pinned: the backend allocates
            return
        specs = [(s, np.dtype(t)) for s, t in zip(self.out_shapes, self.out_types, strict=True)]
        sizes = [math.prod(s) * t.itemsize for s, t in specs]
        if all(n < MIN_POOLED_BYTES for n in sizes):
            self.small = specs
        elif all(n >= MIN_POOLED_BYTES for n in sizes):
            if self.into_zeros:
                self.zeroed = [(s, t, n) for (s, t), n in zip(specs, sizes, strict=True)]
            else:
                self.pooled = [(s, t, size_class(n)) for (s, t), n in zip(specs, sizes, strict=True)]
        if len(specs) == 1 and not self.into_zeros and self.access.plain and not self.op.aux:
            if self.small is not None:
                self.fresh_alloc = partial(np.empty, *specs[0])
            elif self.pooled is not None:
                self.fresh_alloc = partial(_pool_take, *self.pooled[0])

    def allocate(self) -> list[Any]:
        """Fresh buffers for the outputs (zero-filled when :attr:`fresh_fn` expects them so)."""
        pooled = self.pooled
        if pooled is not None:
            return [_pool_take(shape, dtype, size) for shape, dtype, size in pooled]
        if self.small is not None:
            new = np.zeros if self.into_zeros else np.empty
            return [new(shape, dtype) for shape, dtype in self.small]
        if self.zeroed is not None:
            return [aligned_zeros(shape, dtype, n) for shape, dtype, n in self.zeroed]
        backend = self.backend
        alloc = backend.zeros if self.into_zeros else backend.empty
        return [alloc(s, t) for s, t in zip(self.out_shapes, self.out_types, strict=True)]

    def new_var(self, data: Any) -> Var:
        """The var of a fresh output buffer (a GPU backend may attach its event bookkeeping)."""
        return Var() if self.backend is cpu_backend else self.backend.new_var(data)


_plans: dict[tuple, CallPlan] = {}  # by (operator, is_train, parameters and their types, signatures)
_FLOAT_TYPES = (float, np.float64, np.float32, np.float16)
_NEGATIVE_ZERO = ("-0.0",)  # stands for a -0.0 parameter in a plan key
_TRAINING = ("is_train",)  # marks a short plan key (see plan_for) of a call in training mode
_FLAT = ("tuple of numbers",)  # marks the flat key of a tuple of numbers (see _param_key)
_ONES = itertools.repeat(1.0)  # copysign(1.0, v): the sign of each member of such a tuple
_array_signature = attrgetter("signature")


def _param_key(value: Any) -> Any:
    """A parameter value as it goes into a plan key (next to its type): itself, except -0.0 and tuples.

    0.0 and -0.0 are one key to a dict (equal, with one hash), but not one parameter
    (``x * -0.0`` is -0.0 where ``x * 0.0`` is 0.0).  A tuple's members go in with their types,
    as a parameter's own value does: ``(1,)`` and ``(True,)`` are equal, but a parser may take
    one and refuse the other (``axis``).  A tuple of numbers (``lrs=(0.1, 0.1)``, ``shape=(2, 3)``)
    is keyed flat, by its members' types and signs next to it, in C loops; any other by
    its members' keys.
    """
    cls = value.__class__
    if cls in _FLOAT_TYPES:
        return _NEGATIVE_ZERO if value == 0 and math.copysign(1.0, value) < 0 else value
    if cls is tuple:
        try:
            return (_FLAT, tuple(map(type, value)), value, tuple(map(math.copysign, _ONES, value)))
        except (TypeError, OverflowError):  # a member that is no real number (a tuple, a string)
            return tuple((v.__class__, _param_key(v)) for v in value)
    return value


# the types marshal writes with their type and a float's sign bit (see _plain_params)
_PLAIN = frozenset((float, int, bool, str, type(None)))


def _plain_params(kwargs: dict[str, Any]) -> bytes | None:
    """The parameters as :mod:`marshal` writes them (a plan key's part) when every value is a plain
    Python number, string, None or a tuple of those, else None (:func:`_param_key` keys them then).

    Equal bytes are parameters no parser can tell apart: each value is written with its type (``1``,
    ``1.0``, ``True`` differ), a float with its bits (``-0.0`` is not ``0.0``).  Nothing else is:
    marshal writes a buffer (a NumPy scalar) as bare bytes, with no type.  Equal parameters may give
    other bytes (a string interned or not, another keyword order): a plan is then made, as for a new call.
    """
    plain = _PLAIN
    for v in kwargs.values():
        cls = v.__class__
        if cls is tuple:
            if not plain.issuperset(map(type, v)):
                return None
        elif cls not in plain:
            return None
    return marshal.dumps(kwargs, 2)


def plan_for(op: OpDef, inputs: Sequence[Any], kwargs: dict[str, Any], is_train: bool = False) -> CallPlan:
    """The cached :class:`CallPlan` of calling ``op`` on ``inputs`` with ``kwargs``."""
    n = len(inputs)
    if not n:
        # a creation operator (``_random_uniform``, ``_zeros``): without a ``ctx`` (left out, or
        # None) its context comes from a ``with`` scope, and the call is planned alone; with one,
        # the parameters are the whole key (lazynd.random's functions always give it: planning a
        # draw took 25 us)
        if kwargs.get("ctx") is None:
            return CallPlan(op, inputs, kwargs, is_train)
    elif n <= 3 and len(kwargs) <= 1:
        # the commonest calls (``a + b``, ``g * lr``, ``sgd_update(w, g, lr=lr)``,
        # ``FullyConnected(x, w, b, num_hidden=n)``, and in training mode ``relu(x)`` or its
        # gradient in autograd): the plan hangs on the first input's signature, under a short key
        # (no parameters, one input, prediction mode: the op); ``other`` stands for the other
        # inputs: None, the second one's signature, or the second and third ones' signatures
        try:
            sig = inputs[0].signature
            if n == 2:
                other: Any = inputs[1].signature
            elif n == 1:
                other = None
            else:
                other = (inputs[1].signature, inputs[2].signature)
        except AttributeError:
            return CallPlan(op, inputs, kwargs, is_train)  # raises the clear error
        if kwargs:
            ((name, value),) = kwargs.items()
            key: Any = (op, other, name, value.__class__, _param_key(value))  # the type too: see below
        else:
            key = op if other is None else (op, other)
        if is_train:
            key = (key, _TRAINING)
        plans = sig.plans
        try:
            plan = plans.get(key)
        except TypeError:  # an unhashable parameter value (a list): plan this call alone
            return CallPlan(op, inputs, kwargs, is_train)
        if plan is None:
            plan = CallPlan(op, inputs, kwargs, is_train)
            if len(plans) >= _MAX_SIGNATURE_PLANS:  # a parameter of ever-new values (a decaying lr)
                plans.clear()
            plans[key] = plan
        return plan
    plain = _plain_params(kwargs)
    if plain is not None:
        head: tuple = (op, is_train, plain)
    else:
        parts: list[Any] = [op, is_train]
        for k, v in kwargs.items():
            parts += (k, v.__class__, _param_key(v))  # the type too: 1 and 1.0 may parse differently
        head = tuple(parts)
    try:
        key = (*head, *map(_array_signature, inputs))
    except AttributeError:
        return CallPlan(op, inputs, kwargs, is_train)  # raises the clear error
    try:
        plan = _plans.get(key)
    except TypeError:  # an unhashable parameter value (a list): plan this call alone
        return CallPlan(op, inputs, kwargs, is_train)
    if plan is None:
        plan = CallPlan(op, inputs, kwargs, is_train)
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    return plan


def clear_plans() -> None:
    """Forget every cached plan and signature (arrays keep the signatures they have)."""
    _plans.clear()
    _signatures.clear()


def cached_plans() -> int:
    """How many plans the cache holds (those keyed by parameters and several inputs)."""
    return len(_plans)

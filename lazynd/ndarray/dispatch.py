"""How NDArray calls reach kernels: ``invoke``, the one imperative path for every registered operator.

Everything a call needs beyond its arrays comes from the runtime's call plan
(:func:`lazynd.runtime.plan_for`: parameters, shapes, types, kernel, allocation and the
vars read and written); ``invoke`` wraps the fresh buffers as NDArrays and pushes the
kernel through the runtime's push.  The public ``nd.<Op>`` functions that lead here are
made in :mod:`.functions`; Python's operators (``a + b``) come here through :mod:`.arithmetic`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ..backend import cpu_backend, get_backend
from ..context import Context, share_memory
from ..engine.var import Var
from ..errors import OperatorError, ShapeError
from ..ops import registry
from ..ops.registry import OpDef
from ..runtime import CallPlan, generator_for, plan_for, push, with_generator

NDArray: Any = None  # bound by ndarray.py (circular import)
# lazynd.autograd's recorder (:mod:`lazynd.autograd.recording`) while some thread records or trains,
# else None: the one check an imperative call pays for autograd (set by lazynd.autograd.state)
recorder: Any = None
_new_object = object.__new__
_NO_AUX: list[Any] = []  # the aux list of a call without auxiliary states (never written)
# an array's buffer and var from NDArray's slots, for C loops over a call's many arrays
_data_of = attrgetter("_data")
_var_of = attrgetter("_var")
# the positional arguments of lazynd.runtime.push: context, kernel, its arguments, reads, writes, name, work
PushArgs = tuple[Context, Callable[..., Any], tuple, list[Var], list[Var], str, int | None]


def new_array(shape: tuple[int, ...], dtype: Any, ctx: Context) -> Any:
    """An uninitialised NDArray of ``shape`` and ``dtype`` on ``ctx``."""
    if ctx.device_type == "cpu":
        return NDArray(cpu_backend.empty(shape, dtype), Var(), ctx)
    backend = get_backend(ctx)  # a GPU's, or cpu_pinned's page-locked memory
    data = backend.empty(shape, dtype)
    return NDArray(data, backend.new_var(data), ctx)


def invoke(
    op: OpDef,
    inputs: Sequence[Any],
    kwargs: dict[str, Any],
    out: Any = None,
    is_train: bool = False,
    unrecorded: bool = False,
    plan: CallPlan | None = None,
) -> Any:
    """Run operator ``op`` imperatively; return its visible output(s).

    Parsing, validation and shape/type inference are done once per distinct call signature
    and cached (:class:`lazynd.runtime.CallPlan`); a repeated call only allocates its
    outputs and pushes.  While some thread records or trains (:mod:`lazynd.autograd`), the
    call goes to the autograd recorder, which comes back here with ``unrecorded`` (and the
    ``plan`` it looked up) or runs it through :func:`run_plan`.
    """
    if recorder is not None and not unrecorded:
        return recorder.invoke(op, inputs, kwargs, out, is_train)
    if plan is None:
        plan = plan_for(op, inputs, kwargs, is_train)
    ctx = plan.ctx
    # the inputs' buffers and vars (written out for one and two inputs, the common calls: at a
    # few microseconds a call, a list comprehension's function call shows; C loops for more)
    n = len(inputs)
    if n == 2:
        x, y = inputs
        datas, reads = [x._data, y._data], [x._var, y._var]
    elif n == 1:
        x = inputs[0]
        datas, reads = [x._data], [x._var]
    else:
        datas, reads = list(map(_data_of, inputs)), list(map(_var_of, inputs))
    alloc = plan.fresh_alloc
    if alloc is not None and out is None:
        # the commonest call (``a + b``, ``g * lr``): one fresh output, nothing written but it;
        # its signature is the plan's, so a later call on it needs no lookup
        data = alloc()
        var = Var()
        o = _new_object(NDArray)
        o._data, o._var, o._ctx, o.signature = data, var, ctx, plan.out_signatures[0]
        o._partial, o._ag = False, None
        push(
            ctx,
            plan.fresh_fn,
            (plan.kctx, plan.attrs, datas, [data], _NO_AUX),
            reads,
            [var],
            op.name,
            plan.work,
            fresh=True,
        )
        return o
    if out is not None and plan.access.plain and plan.n_in == n:
        planned = _planned_outputs(plan, out)
        if planned is not None:
            # the commonest calls with ``out=`` (``sgd_update(w, g, lr=lr, out=w)``, ``x += y``,
            # ``multi_sgd_update(..., out=weights)``): every output given, whole and of its planned
            # shape, dtype and device, nothing else written; what call_parts would give for them,
            # without its general lists and checks
            out_datas, writes = planned
            push(ctx, plan.fn, (plan.kctx, plan.attrs, datas, out_datas, _NO_AUX), reads, writes, op.name, plan.work)
            return out
    return visible_outputs(plan, run_plan(plan, datas, reads, out), out)


def _planned_outputs(plan: CallPlan, out: Any) -> tuple[list[Any], list[Var]] | None:
    """The buffers and vars of ``out`` when it gives every output of the call, each an NDArray of
    the planned signature that is no part of another array's storage; else None (the general
    path of :func:`call_parts` checks it, or refuses it with a clear error)."""
    signatures = plan.out_signatures
    if out.__class__ is NDArray:
        if len(signatures) == 1 and out.signature is signatures[0] and not out._partial:
            return [out._data], [out._var]
        return None
    if (out.__class__ is not list and out.__class__ is not tuple) or len(out) != len(signatures):
        return None
    for o, sig in zip(out, signatures):  # noqa: B905 - the lengths are equal
        if o.__class__ is not NDArray or o.signature is not sig or o._partial:
            return None
    return list(map(_data_of, out)), list(map(_var_of, out))


def visible_outputs(plan: CallPlan, outputs: list[Any], out: Any) -> Any:
    """What a call returns: ``out`` when given, else its one visible output or the list of them."""
    if out is not None:
        return out
    return outputs[0] if plan.n_visible == 1 else outputs[: plan.n_visible]


def run_plan(plan: CallPlan, datas: list[Any], reads: list[Var], out: Any = None) -> list[Any]:
    """Push the call ``plan`` describes on the inputs' buffers ``datas`` and vars ``reads`` (into
    ``out`` if given); return every output, hidden ones included (the general path of :func:`invoke`)."""
    outputs, push_args, fresh = call_parts(plan, datas, reads, out)
    push(*push_args, fresh=fresh)
    return outputs


def call_parts(plan: CallPlan, datas: list[Any], reads: list[Var], out: Any = None) -> tuple[list[Any], PushArgs, bool]:
    """What :func:`run_plan` pushes: every output (``out``'s arrays, checked, or fresh ones), the
    positional arguments of :func:`lazynd.runtime.push` and its ``fresh`` flag.

    Kept apart so that a call repeated on the same arrays (:class:`.prepared.PreparedCall`)
    works them out once; they hold the random generator of the moment for an operator that
    draws random numbers, which such a caller must not keep.
    """
    op, ctx = plan.op, plan.ctx
    n = len(datas)
    if out is None:
        fn = plan.fresh_fn
        on_cpu = plan.backend is cpu_backend
        outputs = []
        for data, sig in zip(plan.allocate(), plan.out_signatures):  # noqa: B905 - one per output
            o = _new_object(NDArray)
            o._data, o._var, o._ctx, o.signature = data, Var() if on_cpu else plan.new_var(data), ctx, sig
            o._partial, o._ag = False, None
            outputs.append(o)
    else:
        fn = plan.fn
        outputs = _prepare_outputs(plan, out)
    out_datas: list[Any] = []
    writes: list[Var] = []
    for o in outputs:
        if o is None:  # an output left out of ``out=`` (an ``optional_outputs`` operator): not computed
            out_datas.append(None)
            continue
        out_datas.append(o._data)
        writes.append(o._var)
    access = plan.access
    n_in = plan.n_in
    args: tuple
    if access.plain and n_in == n:
        args = (plan.kctx, plan.attrs, datas, out_datas, _NO_AUX)
    else:
        kctx = plan.kctx
        if access.random:
            kctx = with_generator(kctx, generator_for(ctx).generator)
        writes += access.writes(reads[:n_in], reads[n_in:], ctx)
        args = (kctx, plan.attrs, datas[:n_in], out_datas, datas[n_in:])
    if out is not None:
        for o in outputs:
            if o is not None and o._partial:  # part of its storage: keeps the storage's error (see NDArray)
                reads = [*reads, o._var]
    # fresh: outputs allocated here, read by no one yet, and nothing else written
    return outputs, (ctx, fn, args, reads, writes, op.name, plan.work), out is None and access.plain


def _prepare_outputs(plan: CallPlan, out: Any) -> list:
    """The output arrays of a call with ``out=``: each checked against the plan's shape, dtype and
    device (MXNet's type inference refuses an ``out`` of another dtype too); hidden outputs the
    caller left out (BatchNorm's saved mean) get fresh buffers."""
    op, ctx, shapes, types = plan.op, plan.ctx, plan.out_shapes, plan.out_types
    n_out = len(shapes)
    if out.__class__ is NDArray and n_out == 1 and out.signature is plan.out_signatures[0]:
        return [out]  # the common ``out=weight`` of an update: its interned shape, dtype and device match
    if out.__class__ is list and len(out) == n_out:
        # ``out=weights`` of a multi-parameter update: every array in place, on the device, of its shape
        skips = op.optional_outputs  # None: an output the kernel skips (autograd's unneeded gradients)
        for o, sig in zip(out, plan.out_signatures, strict=False):
            if o is None and skips:
                continue
            if o.__class__ is not NDArray or o.signature is not sig:
                break
        else:
            return list(out)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) not in (n_out, plan.n_visible):
        counts = f"{plan.n_visible} (visible) or {n_out} (all)" if plan.n_visible != n_out else str(n_out)
        raise OperatorError(f"{op.name}: {len(outs)} out array(s) given, expected {counts}")
    outs += [
        new_array(tuple(s), t or "float32", ctx) for s, t in zip(shapes[len(outs) :], types[len(outs) :], strict=True)
    ]
    for i, (o, shape, dtype) in enumerate(zip(outs, shapes, types, strict=True)):
        if o is None and op.optional_outputs:
            continue  # the kernel skips it (MXNet's kNullOp)
        if not isinstance(o, NDArray):
            raise OperatorError(f"{op.name}: out must be an NDArray, got {type(o).__name__}")
        if tuple(o.shape) != tuple(shape):
            raise ShapeError(f"{op.name}: out[{i}] has shape {o.shape}, expected {tuple(shape)}")
        if o.dtype != np.dtype(dtype):
            raise OperatorError(f"{op.name}: out[{i}] has dtype {np.dtype(o.dtype).name}, expected {dtype}")
        if not share_memory(o._ctx, ctx):
            raise OperatorError(f"{op.name}: out[{i}] is on {o._ctx}, expected {ctx}")
    return outs


def invoke_by_name(name: str, inputs: Sequence[Any], kwargs: dict[str, Any], out: Any = None) -> Any:
    return invoke(registry.get(name), inputs, kwargs, out)

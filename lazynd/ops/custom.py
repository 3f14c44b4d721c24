"""The ``Custom`` operator: operators written in Python (:mod:`lazynd.operator`) run by the engine.

A user registers a :class:`lazynd.operator.CustomOpProp` subclass under an ``op_type``;
``nd.Custom(x, op_type=...)`` and ``sym.Custom(x, op_type=...)`` then name it.  Every other
keyword is handed to the property class's constructor as a string, as MXNet does, so
``Custom`` accepts any keyword (:class:`AnyStringParams`).

Which inputs, outputs and auxiliary states a ``Custom`` node has, and whether it is a loss
(``need_top_grad() == False``), depend on its parameters.  :meth:`CustomOpDef.specialize` gives
one :class:`~lazynd.ops.registry.OpDef` per (``op_type``, keywords) with that structure fixed;
symbols hold it.  The registered ``Custom`` itself works out the structure on each plan, for
imperative calls, where auxiliary states are passed after the inputs.

The kernel is one engine operation that reads the inputs and writes the outputs.  It calls the
user's ``forward``/``backward`` with NDArrays that wrap the operation's buffers under *fresh*
engine vars: the user's ``mx.nd`` calls on them are pushed like any other, and never wait on
the vars this operation holds (that would deadlock).  Before returning, the kernel waits for
every read and write of those fresh vars, so the user's NDArray work is done (and its errors
raised, naming ``Custom``) when the operation completes, as MXNet runs custom operators
synchronously.  A wait from inside an operation runs ready CPU work itself; on a GPU the
user's calls launch at once on the pushing thread, since their vars are free.

The parameters, the property objects and the structure they give (names, shapes, dtypes, each
checked) are in :mod:`lazynd.ops._custom_structure`; this module holds the kernels, the CustomOp
objects of the calls, and the definitions.
"""

from __future__ import annotations

import contextlib
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import OperatorError
from ..profiler_annotations import custom_operator
from ._custom_structure import (
    MAX_CONFIGURATIONS,
    PROPERTIES,
    AnyStringParams,
    _backward_layout,
    _cache_lock,
    _config,
    _custom_params,
    _declared,
    _infer_shape,
    _infer_type,
    _names,
    _prop_cache,
    ask,
    properties,
)
from .registry import OpDef, register

__all__ = ["PROPERTIES", "AnyStringParams", "CustomOpDef", "forget", "operator_for", "properties"]

# (op_type, keywords, context, input shapes, input dtypes, the input and output buffers' identities)
# -> the CustomOp object that runs forward and then backward of one call: MXNet makes one per
# executor node (whose buffers stay the same from pass to pass) and one per imperative call, and an
# operator that keeps state from forward for backward (``self.mask = ...``) must find its own again.
# The backward always receives the forward's inputs and outputs (see _backward_layout), the same
# buffers, so it finds the object its forward used; the outputs tell apart two calls on the same
# inputs (y1 = Custom(x), y2 = Custom(x)), whose forwards keep different state.  An object is kept
# while the call's first output buffer lives (a recorded graph or an executor holds it until its
# backward; once it is freed, its identity may be reused), and at most _MAX_OPERATORS are kept,
# least recently used first (for buffers without weak references, or an object holding its own).
_operator_cache: OrderedDict[tuple, Any] = OrderedDict()
_MAX_OPERATORS = 4096


def forget(op_type: str) -> None:
    """Drop what was made from ``op_type`` (it was registered again)."""
    with _cache_lock:
        for cache in (_prop_cache, _operator_cache, _specialized):
            for key in [k for k in cache if k[0] == op_type]:
                del cache[key]


# -- kernels --------------------------------------------------------------------------------------
def _context(kctx: Any) -> Any:
    from ..context import Context

    return Context("gpu" if kctx.backend.name == "gpu" else "cpu", kctx.device_id)


def _wrap(arrays: Sequence[Any], ctx: Any, kctx: Any) -> list:
    """NDArrays over the operation's buffers, each under a fresh var (see the module docstring).

    On a GPU the work that wrote the inputs may still be running on the compute stream when this
    operation runs on the host: each var is marked as written by it (``var_written_now``), so
    that the user's reads (``asnumpy`` on the copy stream, a NumpyOp's host copies) wait for it."""
    from ..ndarray import NDArray

    return [None if a is None else NDArray(a, kctx.backend.var_written_now(a), ctx) for a in arrays]


def _finish(arrays: Sequence[Any]) -> None:
    """Wait for every read and write the user pushed on ``arrays``; raise the first failure."""
    from ..engine import get_engine

    engine = get_engine()
    for a in arrays:
        if a is not None:
            engine.wait_for_var(a.var, for_write=True)


def _run_user(attrs: dict, method: str, call: Callable[[], None], arrays: Sequence[Any]) -> None:
    """Run the user's ``forward``/``backward`` (``call``), then wait for its work on ``arrays``.

    What it raises, or its NDArray work raises, is re-raised naming the op_type; the work it
    pushed is waited for even then, so none of it still touches the buffers afterwards.  While
    the profiler runs, the call is timed in its "Custom Operator" category, as in MXNet.
    """
    op_type = attrs["op_type"]
    try:
        with custom_operator(op_type if method == "forward" else f"_backward_{op_type}", op_type):
            call()
    except Exception as err:
        try:
            _finish(arrays)
        except Exception:  # noqa: BLE001, S110 - the user's own error is the one to report
            pass
        raise OperatorError(f"Custom ({attrs['op_type']}): {method} raised {type(err).__name__}: {err}") from err
    try:
        _finish(arrays)
    except Exception as err:
        raise OperatorError(f"Custom ({attrs['op_type']}): the NDArray work of {method} failed: {err}") from err


def operator_for(attrs: dict, ctx: Any, inputs: list, outputs: list, aux: Sequence[Any] = ()) -> Any:
    """The CustomOp object of the call (or executor node) from the buffers ``inputs`` (with the
    auxiliary states ``aux``) to the buffers ``outputs`` on ``ctx`` (``create_operator`` at its
    first forward; see ``_operator_cache``).  As in MXNet, ``create_operator`` is given the shapes
    and dtypes of the inputs followed by those of the auxiliary states."""
    shapes, dtypes = [a.shape for a in [*inputs, *aux]], [a.dtype for a in [*inputs, *aux]]
    identities = tuple(map(id, [*inputs, *outputs]))
    key = (*_config(attrs), ctx, tuple(tuple(s) for s in shapes), tuple(dtypes), identities)
    with _cache_lock:
        op = _operator_cache.get(key)
        if op is not None:
            _operator_cache.move_to_end(key)
    if op is None:
        from ..formats.ndarray_record import DTYPE_TO_FLAG

        # MXNet hands dtypes over as its type codes (float32 0, float64 1, float16 2...)
        codes = [DTYPE_TO_FLAG.get(np.dtype(t), -1) for t in dtypes]
        op = ask(attrs, "create_operator", ctx, [list(s) for s in shapes], codes)
        if not (callable(getattr(op, "forward", None)) and callable(getattr(op, "backward", None))):
            raise OperatorError(
                f"Custom ({attrs['op_type']}): create_operator returned {op!r}, expected a CustomOp "
                "(an object with forward and backward methods)"
            )
        with _cache_lock:
            if key in _operator_cache:  # another thread made it first
                return _operator_cache[key]
            _operator_cache[key] = op
            with contextlib.suppress(TypeError):  # a buffer without weak references: only the bound
                weakref.finalize([*outputs, *inputs][0], _forget, key)
            while len(_operator_cache) > _MAX_OPERATORS:
                _operator_cache.popitem(last=False)
    return op


def _forget(key: tuple) -> None:
    """Drop the CustomOp object of ``key`` (its buffer was freed)."""
    with _cache_lock:
        _operator_cache.pop(key, None)


def _custom_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    n_args = len(_names(attrs, "list_arguments"))
    if not aux and len(inputs) > n_args:  # an imperative call: auxiliary states follow the inputs
        inputs, aux = inputs[:n_args], inputs[n_args:]
    ctx = _context(kctx)
    op = operator_for(attrs, ctx, inputs, outputs, aux)
    in_data, out_data, aux_data = (_wrap(group, ctx, kctx) for group in (inputs, outputs, aux))
    _run_user(
        attrs,
        "forward",
        lambda: op.forward(
            is_train=kctx.is_train, req=["write"] * len(outputs), in_data=in_data, out_data=out_data, aux=aux_data
        ),
        [*in_data, *out_data, *aux_data],
    )


def _custom_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    deps, n_out, n_in, n_aux = _backward_layout(attrs)
    given = dict(zip(deps, inputs[: len(deps)], strict=True))
    aux = list(inputs[len(deps) :])
    ctx = _context(kctx)
    # the inputs and outputs are always among the dependencies (see _backward_layout): all given
    arguments = [given[i] for i in range(n_out, n_out + n_in)]
    results = [given[i] for i in range(n_out + n_in, 2 * n_out + n_in)]
    op = operator_for(attrs, ctx, arguments, results, aux)
    # the user's backward sees the outputs only where it declared them
    declared = _declared(attrs)[0]
    slots = [given.get(i) if i < n_out + n_in or i in declared else None for i in range(2 * n_out + n_in)]
    wrapped = _wrap(slots, ctx, kctx)
    # a gradient the user's backward leaves unwritten (it skipped the input, or assigned with
    # req 'null') is zero, as in MXNet, whose in_grad is the zeroed gradient buffer
    for grad in outputs:
        grad[...] = 0
    in_grad, aux_data = _wrap(outputs, ctx, kctx), _wrap(aux, ctx, kctx)
    _run_user(
        attrs,
        "backward",
        lambda: op.backward(
            req=["write"] * len(outputs),
            out_grad=wrapped[:n_out],
            in_data=wrapped[n_out : n_out + n_in],
            out_data=wrapped[n_out + n_in :],
            in_grad=in_grad,
            aux=aux_data,
        ),
        [*wrapped, *in_grad, *aux_data],
    )
    # out_grad, in_data and out_data are read-only, as in MXNet: their buffers are other
    # operations' too (one head gradient may feed several terms), so a write would change them
    for group, first, count in (("out_grad", 0, n_out), ("in_data", n_out, n_in), ("out_data", n_out + n_in, n_out)):
        for k, array in enumerate(wrapped[first : first + count]):
            if array is not None and array.var.version:
                raise OperatorError(
                    f"Custom ({attrs['op_type']}): backward wrote into {group}[{k}], which is read-only; "
                    "write the gradients into in_grad (with self.assign)"
                )


def _custom_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    deps, n_out, n_in, n_aux = _backward_layout(attrs)
    # an imperative call records its auxiliary states after the inputs; a symbol's node holds them apart
    arguments, aux = list(inputs[:n_in]), list(inputs[n_in:])
    sources = list(out_grads) + arguments + list(outputs[:n_out])
    chosen = []
    for d in deps:
        if sources[d] is None:  # an output nobody differentiates: its gradient is zero
            chosen.append(F._mul_scalar(outputs[d], scalar=0.0))
        else:
            chosen.append(sources[d])
    if n_aux and not aux:
        children = outputs[0].get_children()
        aux = [children[i] for i in range(n_in, n_in + n_aux)]
    chosen += aux
    grads = F._backward_Custom(*chosen, **attrs)
    # no gradient for an imperative call's auxiliary states
    return (list(grads) if n_in > 1 else [grads]) + [None] * (len(inputs) - n_in)


# -- definitions ----------------------------------------------------------------------------------
_specialized: dict[tuple, OpDef] = {}


class CustomOpDef(OpDef):
    """``Custom`` or ``_backward_Custom``: specialised per configuration for symbols."""

    def __init__(self, name: str, backward: bool) -> None:
        self.backward = backward
        self._init(name, backward)
        self.params = _custom_params()  # OpDef copies its params into a plain dict

    def _init(self, name: str, backward: bool) -> None:
        if backward:
            super().__init__(
                name,
                _custom_backward,
                inputs=self._backward_inputs,
                outputs=lambda attrs: [f"{n}_grad" for n in _names(attrs, "list_arguments")],
                mutates=self._backward_aux_positions,
                infer_shape=self._backward_shapes,
                infer_type=self._backward_types,
                doc="Gradients of a Custom operator: calls the user's backward.",
                quiet=False,  # the user's Python, under the user's NumPy settings
            )
        else:
            super().__init__(
                name,
                _custom_forward,
                inputs=self._forward_inputs,
                positional_params=False,  # MXNet's Custom(*data, **kwargs)
                outputs=lambda attrs: _names(attrs, "list_outputs"),
                infer_shape=lambda attrs, s, a: _infer_shape(attrs, s, a, with_aux=True),
                infer_type=lambda attrs, t, a: _infer_type(attrs, t, a, with_aux=True),
                mutates=self._aux_positions,
                gradient=_custom_gradient,
                doc="An operator written in Python: a CustomOpProp registered as ``op_type`` "
                "(see lazynd.operator); other keywords reach its constructor as strings.",
                quiet=False,  # the user's Python, under the user's NumPy settings
            )

    @staticmethod
    def _forward_inputs(attrs: dict) -> list[str]:
        if not isinstance(attrs.get("op_type"), str):  # the documentation's generic signature
            return []
        return _names(attrs, "list_arguments") + _names(attrs, "list_auxiliary_states")

    @staticmethod
    def _aux_positions(attrs: dict) -> tuple[int, ...]:
        n_args = len(_names(attrs, "list_arguments"))
        return tuple(range(n_args, n_args + len(_names(attrs, "list_auxiliary_states"))))

    @staticmethod
    def _backward_inputs(attrs: dict) -> list[str]:
        if not isinstance(attrs.get("op_type"), str):  # the documentation's generic signature
            return []
        deps, n_out, n_in, _ = _backward_layout(attrs)
        outs, args = _names(attrs, "list_outputs"), _names(attrs, "list_arguments")
        labels = [f"{o}_grad" for o in outs] + args + outs
        return [labels[d] for d in deps] + _names(attrs, "list_auxiliary_states")

    @staticmethod
    def _backward_aux_positions(attrs: dict) -> tuple[int, ...]:
        # the user's backward may assign into its auxiliary states, which follow the dependencies
        if not isinstance(attrs.get("op_type"), str):  # the documentation's generic signature
            return ()
        deps, _, _, n_aux = _backward_layout(attrs)
        return tuple(range(len(deps), len(deps) + n_aux))

    @staticmethod
    def _backward_shapes(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        deps, n_out, n_in, _ = _backward_layout(attrs)
        by_slot = dict(zip(deps, in_shapes, strict=False))  # the gradient of input j has its shape
        return list(in_shapes), [by_slot.get(n_out + j) for j in range(n_in)], list(aux_shapes)

    @staticmethod
    def _backward_types(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        deps, n_out, n_in, _ = _backward_layout(attrs)
        by_slot = dict(zip(deps, in_types, strict=False))
        known = next((t for t in in_types if t is not None), None)
        return list(in_types), [by_slot.get(n_out + j) or known for j in range(n_in)], list(aux_types)

    def specialize(self, attrs: dict) -> OpDef:
        """An OpDef whose inputs, outputs, auxiliary states and loss flag are those of ``attrs``."""
        key = (*_config(attrs), self.backward)
        op = _specialized.get(key)
        if op is not None:
            return op
        prop = properties(attrs)
        aux = _names(attrs, "list_auxiliary_states")
        if self.backward:
            op = OpDef(
                self.name,
                _custom_backward,
                inputs=self._backward_inputs(attrs),
                outputs=self.output_names(attrs),
                mutates=self._backward_aux_positions(attrs),
                infer_shape=self._backward_shapes,
                infer_type=self._backward_types,
                doc=self.doc,
                quiet=False,  # the user's Python, under the user's NumPy settings
            )
        else:
            op = OpDef(
                self.name,
                _custom_forward,
                inputs=_names(attrs, "list_arguments"),
                outputs=_names(attrs, "list_outputs"),
                aux=aux,
                writes_aux_in_predict=True,  # the user's forward may assign them whatever the mode
                infer_shape=lambda attrs, s, a: _infer_shape(attrs, s, a, with_aux=False),
                infer_type=lambda attrs, t, a: _infer_type(attrs, t, a, with_aux=False),
                gradient=_custom_gradient,
                is_loss=not prop.need_top_grad(),
                doc=self.doc,
                quiet=False,  # the user's Python, under the user's NumPy settings
            )
        op.params = _custom_params()
        with _cache_lock:
            if len(_specialized) >= MAX_CONFIGURATIONS:
                _specialized.clear()
            return _specialized.setdefault(key, op)


register(CustomOpDef("Custom", backward=False))
register(CustomOpDef("_backward_Custom", backward=True))

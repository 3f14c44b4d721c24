"""Identities with a side effect on the graph: ``_identity_with_attr_like_rhs`` (its output
takes the second input's shape, which lets shape inference run backwards through it),
``cast_storage`` (MXNet's change of storage type: lazynd has the dense type only, so it is a
copy, and a sparse type is refused by name) and ``IdentityAttachKLSparseReg`` (a
KL-divergence sparsity penalty added to the gradient).

IdentityAttachKLSparseReg keeps the moving average of each unit's mean activation in an
auxiliary state.  MXNet updates it during the backward pass; here the training forward
updates it and hands the updated average to the gradient through a hidden output, so the
gradient rule stays a function of the forward's results.  A forward and backward in
training give MXNet's values.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from .params import FRACTION, Param, parse_float
from .registry import OpDef, merge_shape, register


# -- _identity_with_attr_like_rhs ----------------------------------------------------------------------
def _copy(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if outputs[0] is not inputs[0]:
        outputs[0][...] = inputs[0]


register(
    OpDef(
        "_identity_with_attr_like_rhs",
        _copy,
        inputs=("lhs", "rhs"),
        # no shape rule of its own: the same-shape rule ties lhs, rhs and the output both ways, so
        # a shape known on any of them (the consumer of the output included) reaches the others
        infer_type=lambda attrs, t, a: ([t[0], t[1]], [t[0]], a),
        gradient=lambda F, attrs, inputs, outputs, og: [og[0], None],
        inplace=((0, 0),),
        doc="``lhs`` unchanged; lhs, rhs and the output share one shape (inference flows either way).",
    )
)


# -- cast_storage -------------------------------------------------------------------------------------
_SPARSE_TYPES = ("csr", "row_sparse")


def _parse_stype(value: Any) -> str:
    text = str(value)
    if text in _SPARSE_TYPES:
        raise ValueError("sparse storage is not supported; lazynd arrays are all dense (stype 'default')")
    if text != "default":
        raise ValueError("expected one of 'default', 'csr', 'row_sparse'")
    return text


register(
    OpDef(
        "cast_storage",
        _copy,
        params={"stype": Param(_parse_stype, doc="the storage type of the output: 'default' (dense), the only one")},
        gradient=lambda F, attrs, inputs, outputs, og: [og[0]],
        inplace=((0, 0),),
        doc="``data`` as storage type ``stype``; lazynd's arrays are all dense, so only 'default' (a copy).",
    )
)


# -- IdentityAttachKLSparseReg -------------------------------------------------------------------------
_KL_PARAMS = {
    "sparseness_target": Param(FRACTION, 0.1, "the target mean activation of each unit"),
    "penalty": Param(parse_float, 0.001, "weight of the KL penalty's gradient"),
    "momentum": Param(FRACTION, 0.9, "momentum of the moving average of the mean activation"),
}


def _batch_axes(x: Any) -> tuple[int, ...]:
    """The axes a unit's mean activation averages over: every axis but axis 1 (the units)."""
    return tuple(i for i in range(x.ndim) if i != 1)


def _unit_view(values: Any, ndim: int) -> Any:
    return values.reshape((1, -1) + (1,) * (ndim - 2))


def _kl_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    data = inputs[0]
    out, average = outputs
    moving = aux[0]
    if out is not data:
        out[...] = data
    if kctx.is_train:
        m = attrs["momentum"]
        moving *= m
        moving += (1 - m) * data.mean(axis=_batch_axes(data))
    average[...] = moving


def _kl_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out_grad, average = inputs
    target = attrs["sparseness_target"]
    # d/d(rho_hat) of KL(target || rho_hat), per unit
    penalty = attrs["penalty"] * (-target / average + (1 - target) / (1 - average))
    kctx.xp.add(out_grad, _unit_view(penalty, out_grad.ndim), out=outputs[0])


def _kl_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None, aux_shapes[0]], aux_shapes
    if len(data) < 2:
        raise ShapeError(f"IdentityAttachKLSparseReg: data must be (batch, units, ...), got {tuple(data)}")
    # data[1] is the data's own dim: a zero-size one is a size under NumPy shape semantics
    units = merge_shape("IdentityAttachKLSparseReg", "moving_avg", aux_shapes[0], (data[1],), complete=True)
    return in_shapes, [tuple(data), units], [units]


register(
    OpDef(
        "IdentityAttachKLSparseReg",
        _kl_forward,
        outputs=("output", "moving_avg_used"),
        aux=("moving_avg",),
        positional_inputs=("data",),  # MXNet's legacy operator lists no auxiliary state by position
        num_visible_outputs=1,
        params=dict(_KL_PARAMS),
        infer_shape=_kl_infer,
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_IdentityAttachKLSparseReg(og[0], outputs[1], **attrs)
        ],
        doc="``data`` unchanged; the gradient adds the KL sparsity penalty of each unit's (axis 1) "
        "moving-average activation against ``sparseness_target``.",
    )
)
register(
    OpDef(
        "_backward_IdentityAttachKLSparseReg",
        _kl_backward,
        inputs=("out_grad", "moving_avg"),
        params=dict(_KL_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[0]], a),
        infer_type=lambda attrs, t, a: (t, [t[0]], a),
        doc="Gradient of IdentityAttachKLSparseReg: the output gradient plus the KL penalty per unit.",
    )
)

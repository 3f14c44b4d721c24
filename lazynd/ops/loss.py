"""Output layers and losses with MXNet's gradient semantics: regression outputs, MakeLoss, BlockGrad.

``SoftmaxOutput`` (in :mod:`~lazynd.ops.softmax_output`), the regression outputs
and ``MakeLoss`` are *loss heads*: their gradient does not use the incoming head
gradient (a graph ending in them needs none), it is computed from the output and
the label alone, e.g. ``(softmax(data) - one_hot(label)) * grad_scale`` for
``SoftmaxOutput``.  Each gradient is a registered ``_backward_<Op>`` operator, so
the same rule serves NDArray and Symbol.  ``BlockGrad`` passes values through and
stops gradients.  The normalization parameter and the label type rule here serve
every loss head.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..log import warn_from_user_code
from .params import Param, enum, parse_float
from .registry import OpDef, merge_shape, register, shape_is_known

_NORMALIZATION = Param(
    enum("null", "batch", "valid"),
    "null",
    "divide the gradient by nothing, the rows of the data seen as 2-D (MXNet's batch) or the valid count",
)


def _label_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = in_types[0]
    if dtype is None:  # as MXNet's: nothing to go on until the data's type is known
        return in_types, [None], aux_types
    label = in_types[1] if len(in_types) > 1 and in_types[1] is not None else dtype
    rest = [dtype] * (len(in_types) - 2)  # a head gradient (SoftmaxOutput's backward with out_grad)
    return [dtype, label, *rest][: len(in_types)], [dtype], aux_types


def _passthrough_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [None] * len(inputs)


# -- regression outputs ------------------------------------------------------------------------------
def _same_rows_and_size(data: tuple, label: tuple) -> bool:
    """Whether fully known ``data`` and ``label`` shapes share their first axis and element count."""
    if not (data and label and shape_is_known(data) and shape_is_known(label)):
        return False
    return data[0] == label[0] and int(np.prod(data)) == int(np.prod(label))


def _regression_shape(name: str) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data, label = in_shapes
        if data is None:
            data = label
        if data is None:
            return in_shapes, [None], aux_shapes
        data = tuple(data)
        if label is not None and _same_rows_and_size(data, tuple(label)):
            # MXNet's rule: any label with the data's rows and element count, e.g. (n, k) for (n, k, 1)
            return [data, tuple(label)], [data], aux_shapes
        if len(data) == 2 and data[1] == 1 and (label is None or len(label) == 1):
            # MXNet's convention: an (n, 1) output takes (n,) labels, and infers them when unknown
            return [data, merge_shape(name, "label", label, data[:1])], [data], aux_shapes
        return [data, merge_shape(name, "label", label, data)], [data], aux_shapes

    return infer


def _make_regression(name: str, activation: Any, residual: Any, doc: str) -> None:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        activation(kctx.xp, inputs[0], outputs[0])

    def backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        out, label = inputs
        grad = outputs[0]
        per_row = label.size // label.shape[0] if label.ndim and label.shape[0] else 1
        kctx.xp.subtract(out, label.reshape(out.shape), out=grad)
        residual(kctx.xp, grad)
        grad *= attrs["grad_scale"] / per_row

    params = {"grad_scale": Param(parse_float, 1.0, "scale of the gradient")}
    register(
        OpDef(
            name,
            forward,
            inputs=("data", "label"),
            params=params,
            infer_shape=_regression_shape(name),
            infer_type=_label_type,
            float_data=True,
            gradient=lambda F, attrs, inputs, outputs, og: [
                getattr(F, f"_backward_{name}")(outputs[0], inputs[1], **attrs),
                None,
            ],
            is_loss=True,
            doc=doc,
        )
    )
    register(
        OpDef(
            f"_backward_{name}",
            backward,
            inputs=("output", "label"),
            params=dict(params),
            infer_shape=lambda attrs, s, a: (s, [s[0]], a),
            infer_type=_label_type,
            doc=f"Gradient of {name} with respect to its data.",
        )
    )


def _identity(xp: Any, x: Any, out: Any) -> None:
    out[...] = x


def _sigmoid(xp: Any, x: Any, out: Any) -> None:
    # 1 / (1 + exp(-x)) written in place; exp overflow to inf gives the right limit 0
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    xp.reciprocal(out, out=out)


_make_regression(
    "LinearRegressionOutput",
    _identity,
    lambda xp, g: None,
    "Identity; gradient (out - label) * grad_scale / outputs per row.",
)
_make_regression(
    "LogisticRegressionOutput",
    _sigmoid,
    lambda xp, g: None,
    "Sigmoid; gradient (out - label) * grad_scale / outputs per row.",
)


def _minus_one_unless_positive(xp: Any, residual: Any) -> None:
    # MXNet's MAE gradient is (out > label ? 1 : -1): -1 where out == label, not sign()'s 0
    residual[...] = xp.where(residual > 0, 1, -1)


_make_regression(
    "MAERegressionOutput",
    _identity,
    _minus_one_unless_positive,
    "Identity; gradient (1 where out > label, else -1) * grad_scale / outputs per row, as MXNet.",
)


# -- MakeLoss and BlockGrad ---------------------------------------------------------------------------
def _copy_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if outputs[0] is not inputs[0]:
        outputs[0][...] = inputs[0]


def _make_loss_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out, grad = inputs[0], outputs[0]
    scale = attrs["grad_scale"]
    if attrs["normalization"] == "valid":
        # counted on the device, as the division in float64: a host read of the count would keep
        # a GPU's backward pass out of a CUDA graph
        count = kctx.xp.maximum((out > attrs["valid_thresh"]).sum(), 1)
        grad[...] = kctx.xp.true_divide(scale, count)
        return
    if attrs["normalization"] == "batch":
        # MXNet's batch is the rows of the data seen as 2-D (all axes but the last): a vector
        # of per-sample losses is one row, so its gradient is not divided
        scale /= max(int(np.prod(out.shape[:-1], dtype=np.int64)), 1)
    grad.fill(scale)


_MAKE_LOSS_PARAMS = {
    "grad_scale": Param(parse_float, 1.0, "the gradient of every element"),
    "valid_thresh": Param(parse_float, 0.0, "elements above this count as valid for normalization='valid'"),
    "normalization": _NORMALIZATION,
}


def _make_loss_gradient(F: Any, attrs: dict, inputs: list, outputs: list, og: list) -> list:
    return [F._backward_MakeLoss(outputs[0], **attrs)]


def _ones_gradient(F: Any, attrs: dict, inputs: list, outputs: list, og: list) -> list:
    # MXNet 1.x's make_loss takes MakeLoss's parameters (its symbol files may hold them) and ignores them
    ignored = {k: v for k, v in attrs.items() if k in _MAKE_LOSS_PARAMS and v != _MAKE_LOSS_PARAMS[k].default}
    if ignored:
        warn_from_user_code(
            f"make_loss: {ignored} change nothing, as in MXNet 1.x, whose make_loss has a gradient of ones; "
            "MakeLoss scales and normalises its gradient",
        )
    return [F._backward_MakeLoss(outputs[0])]


def _register_make_loss(name: str, output: str, gradient: Any, doc: str) -> None:
    register(
        OpDef(
            name,
            _copy_forward,
            outputs=(output,),
            params=_MAKE_LOSS_PARAMS,
            gradient=gradient,
            is_loss=True,
            inplace=((0, 0),),
            doc=doc,
        )
    )


_register_make_loss(
    "MakeLoss",
    "output",
    _make_loss_gradient,
    "Mark ``data`` as a loss: its gradient is grad_scale (normalised), whatever the head gradient.",
)
# MXNet 1.x's make_loss: its own operator, whose output is '<name>_loss' and whose gradient is ones
_register_make_loss(
    "make_loss",
    "loss",
    _ones_gradient,
    "Mark ``data`` as a loss: its gradient is ones, whatever the head gradient; MakeLoss's parameters are "
    "accepted and change nothing, as in MXNet 1.x.",
)
register(
    OpDef(
        "_backward_MakeLoss",
        _make_loss_backward,
        inputs=("output",),
        params=_MAKE_LOSS_PARAMS,
        # only normalization='valid' counts the output's values; otherwise its shape places the gradient
        shape_only_inputs=lambda attrs: () if attrs["normalization"] == "valid" else (0,),
        doc="Gradient of MakeLoss with respect to its data.",
    )
)
register(
    OpDef(
        "BlockGrad",
        _copy_forward,
        gradient=_passthrough_gradient,
        is_loss=True,
        inplace=((0, 0),),
        aliases=("stop_gradient",),
        doc="Pass ``data`` through unchanged; no gradient flows back to it.",
    )
)

"""Dense layers: FullyConnected, Dropout, Embedding.

FullyConnected is one GEMM written straight into the output (it dominates MLP
training); its backward op runs three GEMM/reductions into its outputs.  The forward
GEMM is ``x @ W.T`` on the weight as stored: the BLAS reads the transposed operand
itself.  (A transposed copy of the weight per call, made by OpenCV, was measured on
the MNIST MLP's first layer, Intel Xeon, 2 cores: 227 against 220 us with one BLAS
thread, 319 against 163 us with the default two, where the copy's fresh 400 KB
buffer and OpenCV's thread pool meet the BLAS's threads.)
Activation and LeakyReLU are in :mod:`~lazynd.ops.activation`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from .host_reduce import column_sum_into
from .label_classes import checked_classes
from .params import (
    FRACTION,
    Param,
    enum,
    optional,
    parse_bool,
    parse_dtype,
    parse_positive_int,
    parse_shape,
)
from .registry import BackwardOpGradient, OpDef, merge_shape, register

# -- FullyConnected ------------------------------------------------------------------------------
FC_PARAMS = {
    "num_hidden": Param(parse_positive_int, doc="number of output units"),
    "no_bias": Param(parse_bool, False, "leave out the bias"),
    "flatten": Param(parse_bool, True, "flatten all axes after the first (else apply to the last axis)"),
}


def _fc_inputs(attrs: dict) -> tuple[str, ...]:
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _as_2d(x: Any, flatten: bool) -> Any:
    """``x`` of any rank but 2 as the ``(batch, features)`` matrix FullyConnected multiplies.

    A 2-D array is that matrix already, either way: the kernels take it as it is, without this call
    or a view (a view costs a tenth of a small layer's product).
    """
    # sizes written out, not -1: a batch of 0 rows has no size to infer a -1 from
    if flatten:
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _fc_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out = inputs[0], outputs[0]
    x2d = x if x.ndim == 2 else _as_2d(x, attrs["flatten"])
    # a copy when out's layout has no such view (a strided out=); out itself when 2-D (its shape is that one)
    out2d = out if out.ndim == 2 else out.reshape(x2d.shape[0], attrs["num_hidden"])
    kctx.backend.matmul(x2d, inputs[1].T, out2d)
    if not attrs["no_bias"]:
        out2d += inputs[2]
    if out2d is not out and not out.flags.c_contiguous:  # reshape may have copied: write the result back
        out[...] = out2d.reshape(out.shape)


def _fc_infer(
    attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None
) -> tuple[list, list, list]:
    hidden = attrs["num_hidden"]  # at least 1: its parser's bound
    data = in_shapes[0]
    out_known = out_shapes[0] if out_shapes else None
    if data is not None and len(data) > 1 and not data[0] and out_known:
        # the batch from the output, as MXNet's rule (an RNN cell's begin state is zeros of shape (0, H))
        data = in_shapes[0] = (out_known[0], *data[1:])
    in_dim = 0
    if data is not None:
        if len(data) == 0:
            raise ShapeError("FullyConnected: data must have at least one axis, got shape ()")
        rest = data[1:] if attrs["flatten"] else data[-1:]
        in_dim = int(np.prod(rest)) if all(rest) else 0
    in_shapes[1] = merge_shape("FullyConnected", "weight", in_shapes[1], (hidden, in_dim), complete=True)
    if not attrs["no_bias"]:
        in_shapes[2] = merge_shape("FullyConnected", "bias", in_shapes[2], (hidden,))
    if data is None:
        return in_shapes, [None], aux_shapes
    out = (data[0], hidden) if attrs["flatten"] else (*data[:-1], hidden)
    return in_shapes, [out], aux_shapes


def _fc_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # an executor passes None for a gradient nobody reads (the data gradient of a first layer)
    matmul = kctx.backend.matmul
    out_grad, data, weight = inputs
    x2d = data if data.ndim == 2 else _as_2d(data, attrs["flatten"])
    g2d = out_grad if out_grad.ndim == 2 else out_grad.reshape(x2d.shape[0], attrs["num_hidden"])
    data_grad = outputs[0]
    if data_grad is not None:
        # a copy when the buffer's layout has no such view; itself when 2-D (data's shape)
        grad2d = data_grad if data_grad.ndim == 2 else data_grad.reshape(x2d.shape)
        matmul(g2d, weight, grad2d)
        if grad2d is not data_grad and not data_grad.flags.c_contiguous:
            data_grad[...] = grad2d.reshape(data_grad.shape)
    if outputs[1] is not None:
        matmul(g2d.T, x2d, outputs[1])
    if not attrs["no_bias"] and outputs[2] is not None:
        column_sum_into(g2d, outputs[2])


def _fc_backward_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    """The gradient of FullyConnected's backward (second-order gradients through a dense layer).

    With ``g`` the output gradient, ``x`` the data and ``W`` the weight as matrices, the backward
    computes ``dx = g W``, ``dW = g^T x`` and ``db = sum of g's rows``; for the gradients ``A``,
    ``B``, ``C`` of those: ``g`` gets ``A W^T + x B^T + C`` (on every row), ``x`` gets ``g B``
    and ``W`` gets ``g^T A``.
    """
    out_grad, data, weight = inputs
    hidden = attrs["num_hidden"]
    rows = data.shape[0] if attrs["flatten"] else math.prod(data.shape[:-1])
    x2d = F.reshape(data, shape=(rows, -1))
    g2d = F.reshape(out_grad, shape=(rows, hidden))
    a2d = F.reshape(out_grads[0], shape=(rows, -1))
    b = out_grads[1]
    g_grad = F.dot(a2d, weight, transpose_b=True) + F.dot(x2d, b, transpose_b=True)
    if not attrs["no_bias"]:
        g_grad = F.broadcast_add(g_grad, F.reshape(out_grads[2], shape=(1, hidden)))
    return [
        F.reshape(g_grad, shape=out_grad.shape),
        F.reshape(F.dot(g2d, b), shape=data.shape),
        F.dot(g2d, a2d, transpose_a=True),
    ]


def _grad_names(attrs: dict) -> tuple[str, ...]:
    return ("data_grad", "weight_grad") if attrs["no_bias"] else ("data_grad", "weight_grad", "bias_grad")


def _fc_backward_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    outs = [in_shapes[1], in_shapes[2]] + ([] if attrs["no_bias"] else [(attrs["num_hidden"],)])
    return in_shapes, outs, aux_shapes


register(
    OpDef(
        "FullyConnected",
        _fc_forward,
        inputs=_fc_inputs,
        params=dict(FC_PARAMS),
        infer_shape=_fc_infer,
        gradient=BackwardOpGradient("_backward_FullyConnected", 2),
        doc="Dense layer: ``data @ weight.T + bias``.",
    )
)
register(
    OpDef(
        "_backward_FullyConnected",
        _fc_backward,
        inputs=("out_grad", "data", "weight"),
        outputs=_grad_names,
        params=dict(FC_PARAMS),
        infer_shape=_fc_backward_infer,
        optional_outputs=True,
        gradient=_fc_backward_gradient,
        doc="Gradients of FullyConnected with respect to data, weight and bias.",
    )
)


# -- Dropout -------------------------------------------------------------------------------------
def _dropout_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, out, mask = inputs[0], outputs[0], outputs[1]
    p = attrs["p"]
    if not (kctx.is_train or attrs["mode"] == "always") or p == 0:
        mask[...] = 1
        out[...] = x
        return
    if p >= 1:
        mask[...] = 0
    else:
        # the mask holds the kept units already scaled by 1/(1-p), so backward is one multiply;
        # along ``axes`` one draw is shared (MXNet's variational dropout)
        drawn = tuple(1 if axis in attrs["axes"] else n for axis, n in enumerate(x.shape))
        keep = kctx.rng.uniform(0.0, 1.0, drawn) >= p
        mask[...] = keep * (1.0 / (1.0 - p))
    kctx.xp.multiply(x, mask, out=out)


def _dropout_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is not None and any(not 0 <= axis < len(data) for axis in attrs["axes"]):
        raise ShapeError(f"Dropout: axes={attrs['axes']} must be axes of the {len(data)}-D input (0..{len(data) - 1})")
    return in_shapes, [in_shapes[0], in_shapes[0]], aux_shapes


register(
    OpDef(
        "Dropout",
        _dropout_forward,
        outputs=("output", "mask"),
        num_visible_outputs=1,
        params={
            "p": Param(FRACTION, 0.5, "fraction of units dropped in training"),
            "mode": Param(enum("training", "always"), "training", "drop only in training, or always"),
            "axes": Param(parse_shape, (), "axes along which one draw is shared (variational dropout)"),
            "cudnn_off": Param(optional(parse_bool), False, "accepted for MXNet compatibility"),
        },
        infer_shape=_dropout_infer,
        gradient=lambda F, attrs, i, o, og: [F._mul(og[0], o[1])],
        needs_random=True,
        doc="Zero a random fraction p of the units in training (scaling the rest by 1/(1-p)); identity otherwise.",
    )
)


# -- Embedding -----------------------------------------------------------------------------------
EMBED_PARAMS = {
    "input_dim": Param(parse_positive_int, doc="vocabulary size"),
    "output_dim": Param(parse_positive_int, doc="embedding size"),
    "dtype": Param(parse_dtype, "float32", "dtype of the weight"),
    # MXNet gives a row_sparse gradient, which its optimizers update lazily (only the batch's rows);
    # lazynd's gradient is dense, so weight decay and momentum reach every row (the training loops
    # say so: lazynd_sym/model/sparse_grads.py)
    "sparse_grad": Param(parse_bool, False, "accepted for MXNet compatibility; the gradient stays dense"),
}


def _indices(kctx: Any, data: Any, input_dim: int) -> Any:
    # out-of-range indices are clipped, as MXNet does, as numbers (converting 2**63 is undefined);
    # NaN names no row and is refused (:func:`checked_classes`)
    return checked_classes(kctx.backend, "Embedding", "data", data, input_dim, mode="clip")


def _embed_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    idx = _indices(kctx, inputs[0], attrs["input_dim"]).reshape(-1)
    out = outputs[0]
    rows = out.reshape(idx.size, attrs["output_dim"])  # a copy when out's layout has no such view (a strided out=)
    xp.take(inputs[1], idx, axis=0, out=rows)
    if not out.flags.c_contiguous:  # reshape may have copied: write the result back
        out[...] = rows.reshape(out.shape)


def _embed_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    in_dim, out_dim = attrs["input_dim"], attrs["output_dim"]  # at least 1: their parser's bound
    in_shapes[1] = merge_shape("Embedding", "weight", in_shapes[1], (in_dim, out_dim))
    data = in_shapes[0]
    return in_shapes, [None if data is None else (*data, out_dim)], aux_shapes


def _embed_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the indices' gradient is zero (they are not differentiable); the weight's sums each row's
    # gradients; either is left out (None) where nothing needs it
    dy, data = inputs
    data_grad, grad = outputs
    if data_grad is not None:
        data_grad[...] = 0
    if grad is None:
        return
    idx = _indices(kctx, data, attrs["input_dim"]).reshape(-1)
    grad[...] = 0
    rows = dy.reshape(idx.size, attrs["output_dim"])
    kctx.backend.scatter_add(grad, idx, rows)


register(
    OpDef(
        "Embedding",
        _embed_forward,
        inputs=("data", "weight"),
        params=dict(EMBED_PARAMS),
        infer_shape=_embed_infer,
        infer_type=lambda attrs, t, a: ([t[0], t[1] or attrs["dtype"]], [t[1] or attrs["dtype"]], a),
        # one backward operator: autograd writes the weight's gradient into its buffer (a vocabulary-sized
        # array: a copy of it cost as much as the scatter) and leaves out the indices'
        gradient=BackwardOpGradient("_backward_Embedding", 1),
        doc="Look up rows of ``weight`` (input_dim, output_dim) for the integer indices in ``data``.",
    )
)
register(
    OpDef(
        "_backward_Embedding",
        _embed_backward,
        inputs=("out_grad", "data"),
        outputs=("data_grad", "weight_grad"),
        params=dict(EMBED_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1], (attrs["input_dim"], attrs["output_dim"])], a),
        infer_type=lambda attrs, t, a: (t, [t[1], t[0]], a),
        optional_outputs=True,
        doc="Gradients of Embedding: zeros for its indices, and its weight's (rows summed per index).",
    )
)

"""Classifier losses: the ``SVMOutput`` loss head and ``softmax_cross_entropy``.

``SVMOutput`` is a loss head like ``SoftmaxOutput`` (its forward passes the scores on,
its gradient ignores the head gradient): the hinge-loss gradient, squared (L2-SVM, the
default) or linear (L1-SVM).  ``softmax_cross_entropy`` is an ordinary operator
returning the summed cross entropy as a (1,) array; its gradient scales
``softmax - one_hot(label)`` by the head gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from .label_classes import checked_classes
from .loss import _label_type
from .params import Param, parse_bool, parse_float
from .registry import OpDef, merge_shape, register


def _scores(x: Any) -> Any:
    """(batch, classes) view of the scores: every axis after the first is a class axis (named, not
    ``-1``: an empty batch has no size to infer it from)."""
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))


def _label_infer(op: str) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data, label = in_shapes
        if data is None:
            return in_shapes, [None], aux_shapes
        if len(data) < 2:
            raise ShapeError(f"{op}: data must be (batch, classes), got {tuple(data)}")
        label = merge_shape(op, "label", label, (data[0],), complete=True)
        out = tuple(data) if op == "SVMOutput" else (1,)
        return [tuple(data), label], [out], aux_shapes

    return infer


# -- SVMOutput -----------------------------------------------------------------------------------------
_SVM_PARAMS = {
    "margin": Param(parse_float, 1.0, "the margin of the hinge"),
    "regularization_coefficient": Param(parse_float, 1.0, "scale of the gradient"),
    "use_linear": Param(parse_bool, False, "L1-SVM (linear hinge) instead of L2-SVM (squared hinge)"),
}


def _svm_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if outputs[0] is not inputs[0]:
        outputs[0][...] = inputs[0]


def _svm_labels(kctx: Any, label: Any, classes: int) -> Any:
    """The labels as int64 class indices, checked as given (:func:`checked_classes`): on the host at
    once, on a GPU at the next wait, with no host read that would keep the backward pass out of a
    CUDA graph; meanwhile such a label reads -1, which matches no class."""
    return checked_classes(kctx.backend, "SVMOutput", "label", label, classes, fallback=-1)


def _svm_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    scores = _scores(inputs[0])
    labels = _svm_labels(kctx, inputs[1], scores.shape[1])
    margin, coefficient = attrs["margin"], attrs["regularization_coefficient"]
    is_label = xp.arange(scores.shape[1])[None, :] == labels[:, None]
    # the true class is pushed above +margin, every other class below -margin
    signed = xp.where(is_label, -scores, scores)
    slack = xp.maximum(margin + signed, 0)
    active = slack if not attrs["use_linear"] else (slack > 0).astype(scores.dtype)
    scale = coefficient if attrs["use_linear"] else 2 * coefficient
    grad = xp.where(is_label, -active, active) * scale
    outputs[0][...] = grad.reshape(outputs[0].shape)


register(
    OpDef(
        "SVMOutput",
        _svm_forward,
        inputs=("data", "label"),
        params=dict(_SVM_PARAMS),
        infer_shape=_label_infer("SVMOutput"),
        infer_type=_label_type,
        gradient=lambda F, attrs, inputs, outputs, og: [F._backward_SVMOutput(inputs[0], inputs[1], **attrs), None],
        is_loss=True,
        inplace=((0, 0),),
        doc="Pass the class scores on; the gradient is the hinge loss's (L2-SVM, or L1-SVM with use_linear).",
    )
)
register(
    OpDef(
        "_backward_SVMOutput",
        _svm_backward,
        inputs=("data", "label"),
        params=dict(_SVM_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[0]], a),
        infer_type=_label_type,
        doc="Gradient of SVMOutput with respect to its data.",
    )
)


# -- softmax_cross_entropy -----------------------------------------------------------------------------
def _log_softmax(xp: Any, scores: Any) -> Any:
    shifted = scores - scores.max(axis=1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


def _cross_entropy_labels(kctx: Any, label: Any, classes: int) -> tuple[Any, Any]:
    """The labels as int64 class indices, and where they are in range (None: all are).

    Checked as given (:func:`checked_classes`): on the host a label out of range (NaN too) is an
    :class:`OperatorError` at once.  On a GPU reading the labels back would make the host wait for
    the device at every call and keep an executor's pass from being captured into a CUDA graph: a
    device check raises it at the next wait instead, and meanwhile the label reads class 0 and its
    sample's loss and gradient row are NaN."""
    labels = checked_classes(kctx.backend, "softmax_cross_entropy", "label", label, classes, fallback=-1)
    if kctx.xp is np:
        return labels, None
    valid = labels >= 0
    return kctx.xp.where(valid, labels, 0), valid


def _cross_entropy_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    scores = _scores(inputs[0])
    labels, valid = _cross_entropy_labels(kctx, inputs[1], scores.shape[1])
    picked = _log_softmax(xp, scores)[xp.arange(scores.shape[0]), labels]
    if valid is not None:
        picked = xp.where(valid, picked, scores.dtype.type(np.nan))
    outputs[0][...] = -picked.sum()


def _cross_entropy_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    out_grad, data, label = inputs
    scores = _scores(data)
    labels, valid = _cross_entropy_labels(kctx, label, scores.shape[1])
    grad = xp.exp(_log_softmax(xp, scores))
    grad[xp.arange(scores.shape[0]), labels] -= 1
    if valid is not None:
        grad = xp.where(valid[:, None], grad, scores.dtype.type(np.nan))
    grad *= out_grad.reshape(())
    outputs[0][...] = grad.reshape(outputs[0].shape)


register(
    OpDef(
        "softmax_cross_entropy",
        _cross_entropy_forward,
        inputs=("data", "label"),
        takes_bool=False,
        infer_shape=_label_infer("softmax_cross_entropy"),
        infer_type=_label_type,
        gradient=lambda F, attrs, inputs, outputs, og: [
            F._backward_softmax_cross_entropy(og[0], inputs[0], inputs[1]),
            None,
        ],
        doc="Cross entropy of softmax(data) against integer labels, summed over the batch: a (1,) array.",
    )
)
register(
    OpDef(
        "_backward_softmax_cross_entropy",
        _cross_entropy_backward,
        inputs=("out_grad", "data", "label"),
        takes_bool=False,
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        infer_type=lambda attrs, t, a: (t, [t[1]], a),
        doc="Gradient of softmax_cross_entropy: (softmax(data) - one_hot(label)) * out_grad.",
    )
)

"""Matrix products: ``dot`` (1-D to N-D, optional transposes) and ``batch_dot``; cuBLAS on the GPU."""

from __future__ import annotations

import math
from typing import Any

from ..errors import ShapeError
from .params import Param, enum, optional, parse_bool
from .registry import OpDef, dim_is_known, dims_differ, merge_shape, register

_TRANSPOSE_PARAMS = {
    "transpose_a": Param(parse_bool, False, "use the transpose of lhs"),
    "transpose_b": Param(parse_bool, False, "use the transpose of rhs"),
}


# MXNet 1.x's output storage type: lazynd's arrays are dense, so only the default is taken
_PRODUCT_PARAMS = {
    **_TRANSPOSE_PARAMS,
    "forward_stype": Param(optional(enum("default")), None, "output storage type (dense only)"),
}


def _as_matrix(x: Any, transpose: bool, lhs: bool) -> Any:
    """MXNet's dot: lhs is (prod(shape[:-1]), shape[-1]); rhs is (shape[0], prod(shape[1:])).

    A transposed N-D operand is, as in MXNet, the transpose of the other matrix view: lhs of
    (shape[0], prod(shape[1:])), rhs of (prod(shape[:-1]), shape[-1]), so ``transpose_a``
    contracts lhs's first axis and ``transpose_b`` rhs's last (not a reversal of every axis).
    """
    if x.ndim == 1:
        # a vector is its own transpose (MXNet 1.9.1: dot(v, m, transpose_a=True) is dot(v, m))
        return x.reshape(1, -1) if lhs else x.reshape(-1, 1)
    # sizes, not -1: a -1 cannot be inferred beside a 0 (an empty contraction, K = 0)
    first, last = (x.shape[0], math.prod(x.shape[1:])), (math.prod(x.shape[:-1]), x.shape[-1])
    if lhs:
        return x.reshape(first).T if transpose else x.reshape(last)
    return x.reshape(last).T if transpose else x.reshape(first)


def _dot_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    a = _as_matrix(inputs[0], attrs["transpose_a"], True)
    b = _as_matrix(inputs[1], attrs["transpose_b"], False)
    out = outputs[0]
    if out.flags.c_contiguous:
        kctx.backend.matmul(a, b, out.reshape(a.shape[0], b.shape[1]))
    else:
        out[...] = kctx.xp.matmul(a, b).reshape(out.shape)


def _dims(shape: tuple, transpose: bool, lhs: bool) -> tuple:
    """The dims of an operand as the product sees it (see :func:`_as_matrix`)."""
    shape = tuple(shape)
    if not transpose or len(shape) < 2:
        return shape
    return shape[1:] + shape[:1] if lhs else shape[-1:] + shape[:-1]


def _dot_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, [None], aux_shapes
    if not lhs or not rhs:
        raise ShapeError(f"dot: lhs {tuple(lhs)} and rhs {tuple(rhs)} must have at least one dim each")
    if len(lhs) == 1 and len(rhs) == 1 and (attrs["transpose_a"] or attrs["transpose_b"]):
        raise ShapeError(
            f"dot: cannot transpose vectors: lhs {tuple(lhs)} and rhs {tuple(rhs)} with "
            f"transpose_a={attrs['transpose_a']}, transpose_b={attrs['transpose_b']} (as MXNet)"
        )
    a = _dims(lhs, attrs["transpose_a"], lhs=True)
    b = _dims(rhs, attrs["transpose_b"], lhs=False)
    k_a = a[-1]
    k_b = b[0]
    if k_a != k_b and dim_is_known(k_a) and dim_is_known(k_b):
        raise ShapeError(
            f"dot: inner dimensions differ: lhs {tuple(lhs)} (transpose_a={attrs['transpose_a']}) "
            f"and rhs {tuple(rhs)} (transpose_b={attrs['transpose_b']})"
        )
    out = a[:-1] + b[1:]
    return in_shapes, [out if out else (1,)], aux_shapes


def _dot_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    a, b = inputs
    og = out_grads[0]
    return [F._dot_backward_lhs(og, b, a, **attrs), F._dot_backward_rhs(og, a, b, **attrs)]


def _dot_macs(attrs: dict, in_shapes: list, out_shapes: list) -> int:
    """``dot``'s multiply-adds: each output element sums over the contracted axis (lhs's last,
    its first when transposed)."""
    lhs = in_shapes[0]
    k = (lhs[0] if attrs["transpose_a"] else lhs[-1]) if lhs else 1
    return math.prod(out_shapes[0]) * k


register(
    OpDef(
        "dot",
        _dot_forward,
        inputs=("lhs", "rhs"),
        params=dict(_PRODUCT_PARAMS),
        infer_shape=_dot_infer,
        gradient=_dot_gradient,
        macs=_dot_macs,
        doc="Matrix product of two arrays (MXNet's ``dot``: contracts lhs's last axis with rhs's first).",
    )
)


def _matrix_grad_forward(which: str) -> Any:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        og, other, like = inputs
        out = outputs[0]
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        # out_grad as the product's matrix, sized from the operands (a -1 cannot be inferred beside a 0)
        if which == "lhs":
            # C = A' B'  with A' = op(A): dA' = dC B'^T
            bm = _as_matrix(other, tb, False)
            g = og.reshape(_as_matrix(like, ta, True).shape[0], bm.shape[1])
            da = kctx.backend.empty((g.shape[0], bm.shape[0]), og.dtype)
            kctx.backend.matmul(g, bm.T, da)
            out[...] = (da.T if ta else da).reshape(like.shape)
        else:
            am = _as_matrix(other, ta, True)
            g = og.reshape(am.shape[0], _as_matrix(like, tb, False).shape[1])
            db = kctx.backend.empty((am.shape[1], g.shape[1]), og.dtype)
            kctx.backend.matmul(am.T, g, db)
            out[...] = (db.T if tb else db).reshape(like.shape)

    return forward


def _matrix_grad_infer(which: str) -> Any:
    """The gradient has the shape of ``like``; ``out_grad`` must have the shape of the product."""
    op = f"_dot_backward_{which}"

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        out_grad, other, like = in_shapes
        if out_grad is not None and other is not None and like is not None:
            operands = [like, other] if which == "lhs" else [other, like]
            product = _dot_infer(attrs, operands, [])[1][0]
            merge_shape(op, "out_grad", out_grad, product, complete=True)
        return in_shapes, [like], aux_shapes

    return infer


for _which in ("lhs", "rhs"):
    register(
        OpDef(
            f"_dot_backward_{_which}",
            _matrix_grad_forward(_which),
            inputs=("out_grad", "other", "like"),
            params=dict(_PRODUCT_PARAMS),
            infer_shape=_matrix_grad_infer(_which),
            doc=f"Gradient of ``dot`` with respect to its {_which}.",
        )
    )


# -- batch_dot -----------------------------------------------------------------------------------
def _batch_dot_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    a, b = inputs
    if attrs["transpose_a"]:
        a = xp.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = xp.swapaxes(b, -1, -2)
    kctx.backend.matmul(a, b, outputs[0])


def _batch_dot_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    """Matrices in the last two axes, one per index of the leading (batch) axes, which must agree
    (N-D as in MXNet 1.x; 0.9 took 3-D only)."""
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return in_shapes, [None], aux_shapes
    if len(lhs) < 3 or len(lhs) != len(rhs):
        raise ShapeError(
            f"batch_dot: inputs must have one number of dims, at least 3, got {tuple(lhs)} and {tuple(rhs)}"
        )
    a = (*lhs[:-2], lhs[-1], lhs[-2]) if attrs["transpose_a"] else tuple(lhs)
    b = (*rhs[:-2], rhs[-1], rhs[-2]) if attrs["transpose_b"] else tuple(rhs)
    pairs = list(zip(a[:-2], b[:-2], strict=True))
    if any(dims_differ(x, y) for x, y in pairs) or dims_differ(a[-1], b[-2]):
        raise ShapeError(f"batch_dot: incompatible shapes {tuple(lhs)} and {tuple(rhs)} (after transposes {a}, {b})")
    return in_shapes, [(*(x or y for x, y in pairs), a[-2], b[-1])], aux_shapes


def _batch_dot_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    a, b = inputs
    og = out_grads[0]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    # C = op(A) op(B): d op(A) = dC op(B)^T, d op(B) = op(A)^T dC
    if not ta:
        ga = F.batch_dot(og, b, transpose_a=False, transpose_b=not tb)
    else:
        ga = F.batch_dot(b, og, transpose_a=tb, transpose_b=True)
    if not tb:
        gb = F.batch_dot(a, og, transpose_a=not ta, transpose_b=False)
    else:
        gb = F.batch_dot(og, a, transpose_a=True, transpose_b=ta)
    return [ga, gb]


def _batch_dot_macs(attrs: dict, in_shapes: list, out_shapes: list) -> int:
    """``batch_dot``'s multiply-adds: each output element sums over lhs's last axis (its second
    last when transposed)."""
    lhs = in_shapes[0]
    return math.prod(out_shapes[0]) * (lhs[-2] if attrs["transpose_a"] else lhs[-1])


register(
    OpDef(
        "batch_dot",
        _batch_dot_forward,
        inputs=("lhs", "rhs"),
        params=dict(_PRODUCT_PARAMS),
        infer_shape=_batch_dot_infer,
        gradient=_batch_dot_gradient,
        macs=_batch_dot_macs,
        doc="Batched matrix product of two N-D arrays (N >= 3) over their last two axes.",
    )
)

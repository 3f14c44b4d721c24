"""Matrix products: ``dot`` (1-D to N-D, optional transposes) and ``batch_dot``; cuBLAS on the GPU."""

from __future__ import annotations

import math
from typing import Any

from ..errors import ShapeError
from .params import Param, enum, optional, parse_bool
from .registry import BackwardOpGradient, OpDef, dim_is_known, dims_differ, merge_shape, register

_TRANSPOSE_PARAMS = {
    "transpose_a": Param(parse_bool, False, "use the transpose of lhs"),
    "transpose_b": Param(parse_bool, False, "use the transpose of rhs"),
}


# MXNet 1.x's output storage type: lazynd's arrays are dense, so only the default is taken
_PRODUCT_PARAMS = {
    **_TRANSPOSE_PARAMS,
    "forward_stype": Param(optional(enum("default")), None, "output storage type (dense only)"),
}


def _register_product_backward(product: str, kernel: Any, product_infer: Any) -> None:
    """Register ``_backward_<product>`` (MXNet's name): the gradients of both operands from the
    product's, either left out where nothing needs it (``optional_outputs``), ``kernel`` computing
    them; ``out_grad`` must have the shape ``product_infer`` gives the operands' product."""
    name = f"_backward_{product}"

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        out_grad, lhs, rhs = in_shapes
        if out_grad is not None and lhs is not None and rhs is not None:
            merge_shape(name, "out_grad", out_grad, product_infer(attrs, [lhs, rhs], [])[1][0], complete=True)
        return in_shapes, [lhs, rhs], aux_shapes

    register(
        OpDef(
            name,
            kernel,
            inputs=("out_grad", "lhs", "rhs"),
            outputs=("lhs_grad", "rhs_grad"),
            params=dict(_PRODUCT_PARAMS),
            infer_shape=infer,
            optional_outputs=True,
            doc=f"Gradients of ``{product}`` with respect to lhs and rhs (either left out where not needed).",
        )
    )


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


# dot's gradient is one backward operator (MXNet's ``_backward_dot``) whose two outputs are optional:
# autograd and executors leave out the gradient of an operand that takes none (a data batch: a
# product as large as the layer's own) and hand it the variables' gradient buffers to write
_dot_gradient = BackwardOpGradient("_backward_dot", 2)


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


def _operand_grad_into(kctx: Any, attrs: dict, which: str, og: Any, other: Any, like: Any, out: Any) -> None:
    """Write the gradient of the operand ``which`` (its array ``like``; ``other`` is the other operand)
    into ``out``, from the product's gradient ``og``.

    With ``A' = op(A)``, ``B' = op(B)`` and ``C = A' B'``: ``dA' = dC B'^T`` and ``dB' = A'^T dC``.  A
    transposed operand's gradient is the transpose of that, computed as the product in the other
    order (``dA = B' dC^T``, ``dB = dC^T A'``), so each lands in the operand's own layout with no
    transposed copy."""
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if which == "lhs":
        bm = _as_matrix(other, tb, False)
        g = og.reshape(_as_matrix(like, ta, True).shape[0], bm.shape[1])
        left, right = (bm, g.T) if ta and like.ndim > 1 else (g, bm.T)
    else:
        am = _as_matrix(other, ta, True)
        g = og.reshape(am.shape[0], _as_matrix(like, tb, False).shape[1])
        left, right = (g.T, am) if tb and like.ndim > 1 else (am.T, g)
    shape = (left.shape[0], right.shape[1])
    if out.flags.c_contiguous:
        kctx.backend.matmul(left, right, out.reshape(shape))
    else:  # a strided out has no such view: the product into a buffer, then copied
        product = kctx.backend.empty(shape, og.dtype)
        kctx.backend.matmul(left, right, product)
        out[...] = product.reshape(out.shape)


def _dot_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    og, lhs, rhs = inputs
    if outputs[0] is not None:
        _operand_grad_into(kctx, attrs, "lhs", og, rhs, lhs, outputs[0])
    if outputs[1] is not None:
        _operand_grad_into(kctx, attrs, "rhs", og, lhs, rhs, outputs[1])


_register_product_backward("dot", _dot_backward, _dot_infer)


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


# batch_dot's gradient is one backward operator too (MXNet's ``_backward_batch_dot``), as dot's
_batch_dot_gradient = BackwardOpGradient("_backward_batch_dot", 2)


def _batch_dot_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    """C = op(A) op(B): dA = dC op(B)^T (op(B) dC^T where A is transposed), dB = op(A)^T dC (dC^T op(A)
    where B is), each a batched product straight into the operand's layout."""
    xp, matmul = kctx.xp, kctx.backend.matmul
    og, a, b = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    op_a = xp.swapaxes(a, -1, -2) if ta else a
    op_b = xp.swapaxes(b, -1, -2) if tb else b
    if outputs[0] is not None:
        if ta:
            matmul(op_b, xp.swapaxes(og, -1, -2), outputs[0])
        else:
            matmul(og, xp.swapaxes(op_b, -1, -2), outputs[0])
    if outputs[1] is not None:
        if tb:
            matmul(xp.swapaxes(og, -1, -2), op_a, outputs[1])
        else:
            matmul(xp.swapaxes(op_a, -1, -2), og, outputs[1])


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
_register_product_backward("batch_dot", _batch_dot_backward, _batch_dot_infer)

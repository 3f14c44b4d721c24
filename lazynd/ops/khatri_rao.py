"""khatri_rao (MXNet 1.x): the column-wise Kronecker product of matrices.

For matrices ``A_0 (r_0, K), ..., A_{n-1} (r_{n-1}, K)`` the result has ``r_0 * ... * r_{n-1}``
rows; row ``(i_0, ..., i_{n-1})`` (the last index fastest) is the elementwise product of rows
``A_0[i_0], ..., A_{n-1}[i_{n-1}]``.  MXNet 1.9.1 registers no gradient for it; lazynd gives one
(``_backward_khatri_rao``), so programs that differentiate through it run here too.  The kernels
are broadcasts written once against ``kctx.xp`` (NumPy and CuPy).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import OperatorError, ShapeError
from .registry import OpDef, register


def _infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if not in_shapes:
        raise OperatorError("khatri_rao: no input matrices given, expected at least one")
    columns = 0
    for i, shape in enumerate(in_shapes):
        if shape is None:
            continue
        if len(shape) != 2:
            raise ShapeError(f"khatri_rao: input {i} has shape {tuple(shape)}, expected a matrix (rows, columns)")
        if columns and shape[1] and shape[1] != columns:
            raise ShapeError(
                f"khatri_rao: input {i} has {shape[1]} columns, expected {columns} like the inputs before it"
            )
        columns = columns or shape[1]
    if any(s is None or not s[0] for s in in_shapes) or not columns:
        return in_shapes, [None], aux_shapes
    in_shapes = [(s[0], columns) for s in in_shapes]
    return in_shapes, [(math.prod(s[0] for s in in_shapes), columns)], aux_shapes


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    product = inputs[0]
    for matrix in inputs[1:]:
        product = (product[:, None, :] * matrix[None, :, :]).reshape(-1, matrix.shape[1])
    outputs[0][...] = product


def _backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    # the output gradient seen as (r_0, ..., r_{n-1}, K): the gradient of A_i is its product with
    # every other factor, summed over the other factors' row axes
    out_grad, matrices = inputs[0], inputs[1:]
    n = len(matrices)
    rows = [m.shape[0] for m in matrices]
    grid = out_grad.reshape(*rows, out_grad.shape[1])
    for i, grad in enumerate(outputs):
        if grad is None:
            continue
        term = grid
        for j, other in enumerate(matrices):
            if j != i:
                term = term * other.reshape((1,) * j + (rows[j],) + (1,) * (n - j - 1) + (other.shape[1],))
        grad[...] = term.sum(axis=tuple(j for j in range(n) if j != i))


def _gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    n = len(inputs)
    grads = F._backward_khatri_rao(out_grads[0], *inputs, num_args=n + 1)
    return [grads] if n == 1 else [grads[i] for i in range(n)]


register(
    OpDef(
        "khatri_rao",
        _forward,
        variadic=True,
        infer_shape=_infer,
        gradient=_gradient,
        doc="Column-wise Kronecker product of matrices with the same number of columns: "
        "(r_0, K), ..., (r_{n-1}, K) -> (r_0 * ... * r_{n-1}, K).",
    )
)
register(
    OpDef(
        "_backward_khatri_rao",
        _backward,
        variadic=True,
        outputs=lambda attrs: [f"grad{i}" for i in range((attrs.get("num_args") or 1) - 1)],
        optional_outputs=True,
        infer_shape=lambda attrs, s, a: (s, list(s[1:]), a),
        infer_type=lambda attrs, t, a: (t, [t[0]] * (len(t) - 1), a),
        doc="Gradients of khatri_rao (inputs: the output gradient, then the forward's matrices).",
    )
)

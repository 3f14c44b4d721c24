"""MXNet 1.x's batched matrix products: ``linalg_gemm``, ``linalg_gemm2``, ``linalg_trmm``,
``linalg_trsm`` (a triangular solve) and ``linalg_syrk``.

Matrices are the last two axes (for gemm and gemm2, ``axis`` names the row axis instead); the
other leading axes are a batch.  Triangular operands use only their ``lower`` (or upper)
triangle, as LAPACK does.

BLAS's rule for the scales, which MXNet follows: ``alpha = 0`` reads neither A nor B (the product,
and its gradients, are zero even where they hold NaN or Inf, or a singular A for trsm), and
``beta = 0`` does not read C.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ._linalg_batch import check_matrices, check_same_batch, register_linalg, transposed, triangle
from .params import Param, parse_bool, parse_float, parse_int
from .products import product
from .registry import dims_differ
from .shape import normalize_axis

_GEMM_PARAMS = {
    "transpose_a": Param(parse_bool, False, "use the transpose of A"),
    "transpose_b": Param(parse_bool, False, "use the transpose of B"),
    "alpha": Param(parse_float, 1.0, "scale of the product"),
    "axis": Param(parse_int, -2, "the axis of the matrix rows (the last axis holds the columns)"),
}
_TRIANGULAR_PARAMS = {
    "transpose": Param(parse_bool, False, "use the transpose of the triangular matrix A"),
    "rightside": Param(parse_bool, False, "A multiplies from the right"),
    "lower": Param(parse_bool, True, "A is lower (else upper) triangular"),
    "alpha": Param(parse_float, 1.0, "scale of the result"),
}


# -- gemm, gemm2 ------------------------------------------------------------------------------------
def _row_axis(op: str, attrs: dict, ndim: int) -> int:
    axis = normalize_axis(op, attrs["axis"], ndim)
    if axis == ndim - 1:
        raise ShapeError(f"{op}: axis={attrs['axis']} names the last axis, which holds the columns")
    return axis


def _rows_last(shape: tuple, axis: int) -> tuple:
    """``shape`` with its row axis moved next to the last (MXNet's ``axis`` undone)."""
    rest = [d for i, d in enumerate(shape) if i != axis]
    return tuple(rest[:-1]) + (shape[axis], shape[-1])


def _rows_back(shape: tuple, axis: int) -> tuple:
    """The inverse of :func:`_rows_last`."""
    batch, rows, cols = list(shape[:-2]), shape[-2], shape[-1]
    batch.insert(axis, rows)
    return tuple(batch) + (cols,)


def _gemm_product(kctx: Any, attrs: dict, a: Any, b: Any) -> Any:
    xp = kctx.xp
    axis = normalize_axis("gemm", attrs["axis"], a.ndim)
    a, b = xp.moveaxis(a, axis, -2), xp.moveaxis(b, axis, -2)
    if attrs["transpose_a"]:
        a = transposed(xp, a)
    if attrs["transpose_b"]:
        b = transposed(xp, b)
    if not attrs["alpha"]:
        scaled = xp.zeros(a.shape[:-1] + b.shape[-1:], dtype=a.dtype)
    else:
        scaled = product(kctx, a, b) * attrs["alpha"]
    return xp.moveaxis(scaled, -2, axis)


def _gemm_out_shape(op: str, attrs: dict, a: tuple, b: tuple) -> tuple:
    check_matrices(op, "A", a)
    check_matrices(op, "B", b)
    if len(a) != len(b):
        raise ShapeError(f"{op}: A {tuple(a)} and B {tuple(b)} must have the same number of dims")
    axis = _row_axis(op, attrs, len(a))
    ma, mb = _rows_last(tuple(a), axis), _rows_last(tuple(b), axis)
    if attrs["transpose_a"]:
        ma = ma[:-2] + (ma[-1], ma[-2])
    if attrs["transpose_b"]:
        mb = mb[:-2] + (mb[-1], mb[-2])
    check_same_batch(op, a, b, ma[:-2], mb[:-2])
    if dims_differ(ma[-1], mb[-2]):
        raise ShapeError(
            f"{op}: incompatible matrices A {tuple(a)} and B {tuple(b)} (transpose_a={attrs['transpose_a']}, "
            f"transpose_b={attrs['transpose_b']}, axis={attrs['axis']})"
        )
    batch = tuple(x or y for x, y in zip(ma[:-2], mb[:-2], strict=True))
    return _rows_back(batch + (ma[-2], mb[-1]), axis)


def _gemm2_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a, b = in_shapes
    if a is None or b is None:
        return in_shapes, [None], aux_shapes
    return in_shapes, [_gemm_out_shape("linalg_gemm2", attrs, a, b)], aux_shapes


def _gemm_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a, b, c = in_shapes
    out = None if a is None or b is None else _gemm_out_shape("linalg_gemm", attrs, a, b)
    if out is not None and c is not None and tuple(c) != out:
        raise ShapeError(f"linalg_gemm: C has shape {tuple(c)}, expected {out} (the shape of the product)")
    out = out or (tuple(c) if c is not None else None)
    return [a, b, out], [out], aux_shapes


def _product_gradients(F: Any, attrs: dict, a: Any, b: Any, og: Any) -> list:
    """The gradients of ``alpha * op(A) op(B)`` with respect to A and B, as gemm2 products."""
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    common = {"alpha": attrs["alpha"], "axis": attrs["axis"]}
    if ta:
        ga = F.linalg_gemm2(b, og, transpose_a=tb, transpose_b=True, **common)
    else:
        ga = F.linalg_gemm2(og, b, transpose_a=False, transpose_b=not tb, **common)
    if tb:
        gb = F.linalg_gemm2(og, a, transpose_a=True, transpose_b=ta, **common)
    else:
        gb = F.linalg_gemm2(a, og, transpose_a=not ta, transpose_b=False, **common)
    return [ga, gb]


def _gemm(kctx: Any, attrs: dict, ins: list) -> Any:
    scaled = _gemm_product(kctx, attrs, ins[0], ins[1])
    # beta = 0 does not read C, so a NaN or Inf there is not kept (the module's BLAS rule)
    return scaled + attrs["beta"] * ins[2] if attrs["beta"] else scaled


register_linalg(
    "gemm2",
    lambda kctx, attrs, ins: [_gemm_product(kctx, attrs, ins[0], ins[1])],
    inputs=("A", "B"),
    params=dict(_GEMM_PARAMS),
    infer_shape=_gemm2_infer,
    gradient=lambda F, attrs, ins, outs, og: _product_gradients(F, attrs, ins[0], ins[1], og[0]),
    gradient_is_rule=True,
    kernel_context=True,
    doc="``alpha * op(A) op(B)`` over a batch of matrices.",
)
register_linalg(
    "gemm",
    lambda kctx, attrs, ins: [_gemm(kctx, attrs, ins)],
    inputs=("A", "B", "C"),
    params={  # MXNet's order (its generated functions read them positionally)
        **{name: _GEMM_PARAMS[name] for name in ("transpose_a", "transpose_b", "alpha")},
        "beta": Param(parse_float, 1.0, "scale of C"),
        "axis": _GEMM_PARAMS["axis"],
    },
    infer_shape=_gemm_infer,
    gradient=lambda F, attrs, ins, outs, og: [
        *_product_gradients(F, attrs, ins[0], ins[1], og[0]),
        F._mul_scalar(og[0], scalar=attrs["beta"]),
    ],
    gradient_is_rule=True,
    kernel_context=True,
    doc="``alpha * op(A) op(B) + beta * C`` over a batch of matrices.",
)


# -- trmm, trsm -------------------------------------------------------------------------------------
def _op_triangle(xp: Any, attrs: dict, a: Any) -> Any:
    t = triangle(xp, a, attrs["lower"])
    return transposed(xp, t) if attrs["transpose"] else t


def _triangle_grad(xp: Any, attrs: dict, d_op: Any) -> Any:
    """The gradient of A from that of ``op(triangle(A))``."""
    return triangle(xp, transposed(xp, d_op) if attrs["transpose"] else d_op, attrs["lower"])


def _triangular_infer(op: str) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        a, b = in_shapes
        check_matrices(op, "A", a, square=True)
        check_matrices(op, "B", b)
        if a is not None and b is not None:
            check_same_batch(op, a, b, a[:-2], b[:-2])
            n = b[-1] if attrs["rightside"] else b[-2]
            if dims_differ(a[-1], n):
                raise ShapeError(
                    f"{op}: A {tuple(a)} does not fit B {tuple(b)} (rightside={attrs['rightside']}): A must be "
                    f"(..., n, n) with n B's {'last' if attrs['rightside'] else 'second-to-last'} dim"
                )
        return in_shapes, [b], aux_shapes

    return infer


def _trmm(xp: Any, attrs: dict, ins: list) -> list:
    if not attrs["alpha"]:
        return [xp.zeros_like(ins[1])]
    t, b = _op_triangle(xp, attrs, ins[0]), ins[1]
    product = xp.matmul(b, t) if attrs["rightside"] else xp.matmul(t, b)
    return [attrs["alpha"] * product]


def _trmm_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    if not attrs["alpha"]:
        return [xp.zeros_like(ins[0]), xp.zeros_like(ins[1])]
    t, b, g, alpha = _op_triangle(xp, attrs, ins[0]), ins[1], og[0], attrs["alpha"]
    if attrs["rightside"]:  # out = alpha B T
        return [
            _triangle_grad(xp, attrs, alpha * xp.matmul(transposed(xp, b), g)),
            alpha * xp.matmul(g, transposed(xp, t)),
        ]
    return [_triangle_grad(xp, attrs, alpha * xp.matmul(g, transposed(xp, b))), alpha * xp.matmul(transposed(xp, t), g)]


def _trsm(xp: Any, attrs: dict, ins: list) -> list:
    if not attrs["alpha"]:
        return [xp.zeros_like(ins[1])]
    t, b = _op_triangle(xp, attrs, ins[0]), attrs["alpha"] * ins[1]
    if attrs["rightside"]:  # X T = alpha B  <=>  T^T X^T = alpha B^T
        return [transposed(xp, xp.linalg.solve(transposed(xp, t), transposed(xp, b)))]
    return [xp.linalg.solve(t, b)]


def _trsm_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    if not attrs["alpha"]:
        return [xp.zeros_like(ins[0]), xp.zeros_like(ins[1])]
    t, x, g, alpha = _op_triangle(xp, attrs, ins[0]), outs[0], og[0], attrs["alpha"]
    if attrs["rightside"]:  # X = alpha B T^-1: G = og T^-T
        solved = transposed(xp, xp.linalg.solve(t, transposed(xp, g)))
        d_op = -xp.matmul(transposed(xp, x), solved)
    else:  # X = alpha T^-1 B: G = T^-T og
        solved = xp.linalg.solve(transposed(xp, t), g)
        d_op = -xp.matmul(solved, transposed(xp, x))
    return [_triangle_grad(xp, attrs, d_op), alpha * solved]


register_linalg(
    "trmm",
    _trmm,
    inputs=("A", "B"),
    params=dict(_TRIANGULAR_PARAMS),
    infer_shape=_triangular_infer("linalg_trmm"),
    gradient=_trmm_gradient,
    doc="``alpha * op(A) B`` (or ``alpha * B op(A)``) for triangular A.",
)
register_linalg(
    "trsm",
    _trsm,
    inputs=("A", "B"),
    params=dict(_TRIANGULAR_PARAMS),
    infer_shape=_triangular_infer("linalg_trsm"),
    gradient=_trsm_gradient,
    doc="Solves ``op(A) X = alpha B`` (or ``X op(A) = alpha B``) for triangular A.",
)


# -- syrk -------------------------------------------------------------------------------------------
def _syrk(xp: Any, attrs: dict, ins: list) -> list:
    a = ins[0]
    at = transposed(xp, a)
    if not attrs["alpha"]:
        n = a.shape[-1] if attrs["transpose"] else a.shape[-2]
        return [xp.zeros(a.shape[:-2] + (n, n), dtype=a.dtype)]
    return [attrs["alpha"] * (xp.matmul(at, a) if attrs["transpose"] else xp.matmul(a, at))]


def _syrk_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    if not attrs["alpha"]:
        return [xp.zeros_like(ins[0])]
    g = og[0] + transposed(xp, og[0])
    a = ins[0]
    return [attrs["alpha"] * (xp.matmul(a, g) if attrs["transpose"] else xp.matmul(g, a))]


def _syrk_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a = in_shapes[0]
    check_matrices("linalg_syrk", "A", a)
    if a is None:
        return in_shapes, [None], aux_shapes
    n = a[-1] if attrs["transpose"] else a[-2]
    return in_shapes, [tuple(a[:-2]) + (n, n)], aux_shapes


register_linalg(
    "syrk",
    _syrk,
    params={
        "transpose": Param(parse_bool, False, "compute A^T A instead of A A^T"),
        "alpha": Param(parse_float, 1.0, "scale of the result"),
    },
    infer_shape=_syrk_infer,
    gradient=_syrk_gradient,
    doc="``alpha * A A^T`` (or ``alpha * A^T A``) over a batch of matrices.",
)

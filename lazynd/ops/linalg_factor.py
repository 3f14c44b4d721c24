"""MXNet 1.x's batched factorisations and what follows from them: ``linalg_potrf`` (Cholesky),
``linalg_potri`` (the inverse from a Cholesky factor), ``linalg_sumlogdiag``, ``linalg_gelqf`` (LQ),
``linalg_inverse``, ``linalg_det`` and ``linalg_slogdet``.

A single matrix's scalar results (det, sumlogdiag) have shape ``(1,)``, a batch's the batch shape,
as in MXNet.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ._linalg_batch import batch_scalar_shape, check_matrices, register_linalg, transposed
from .params import Param, parse_bool
from .registry import dim_is_known


def _square_infer(op: str, scalar: bool = False, num_outputs: int = 1) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        a = in_shapes[0]
        check_matrices(op, "A", a, square=True)
        if a is None:
            return in_shapes, [None] * num_outputs, aux_shapes
        out = batch_scalar_shape(tuple(a)) if scalar else tuple(a)
        return in_shapes, [out] * num_outputs, aux_shapes

    return infer


def _diagonal(xp: Any, a: Any) -> Any:
    return xp.diagonal(a, axis1=-2, axis2=-1)


def _diag_matrix(xp: Any, d: Any) -> Any:
    """Matrices with ``d``'s last axis on their diagonal."""
    n = d.shape[-1]
    return d[..., :, None] * xp.eye(n, dtype=d.dtype)


def _inverse_t(xp: Any, a: Any) -> Any:
    return transposed(xp, xp.linalg.inv(a))


def _symmetric_from_lower(xp: Any, m: Any) -> Any:
    """The symmetric matrix whose lower triangle is ``m``'s."""
    return xp.tril(m) + transposed(xp, xp.tril(m, -1))


# -- potrf, potri -----------------------------------------------------------------------------------
# MXNet's ``lower=False`` works with the upper factor U = L^T (``A = U^T U``); both ops are written
# for L and the upper case transposes the factor on its way in or out.
_CHOLESKY_PARAMS = {"lower": Param(parse_bool, True, "the Cholesky factor is lower (else upper) triangular")}


def _as_lower(xp: Any, attrs: dict, factor: Any) -> Any:
    """The lower factor L from ``factor``: itself, or its transpose where ``lower=False``."""
    return factor if attrs["lower"] else transposed(xp, factor)


def _potrf(xp: Any, attrs: dict, ins: list) -> list:
    # LAPACK reads one triangle of A: the lower one, or the upper one (A^T's lower) with lower=False
    return [_as_lower(xp, attrs, xp.linalg.cholesky(_as_lower(xp, attrs, ins[0])))]


def _potrf_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    # L = chol(A): dA = 1/2 L^-T sym(L^T dL) L^-1, symmetric as A is
    low, g = _as_lower(xp, attrs, outs[0]), _as_lower(xp, attrs, og[0])
    inv = xp.linalg.inv(low)
    phi = _symmetric_from_lower(xp, xp.matmul(transposed(xp, low), g))
    return [0.5 * xp.matmul(xp.matmul(transposed(xp, inv), phi), inv)]


register_linalg(
    "potrf",
    _potrf,
    params=dict(_CHOLESKY_PARAMS),
    infer_shape=_square_infer("linalg_potrf"),
    gradient=_potrf_gradient,
    doc="The Cholesky factor of symmetric positive-definite A: lower L with ``A = L L^T`` "
    "(or, with ``lower=False``, upper U with ``A = U^T U``).",
)


def _potri(xp: Any, attrs: dict, ins: list) -> list:
    inv = xp.linalg.inv(xp.tril(_as_lower(xp, attrs, ins[0])))
    return [xp.matmul(transposed(xp, inv), inv)]


def _potri_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    # out = (L L^T)^-1: dL = -out (og + og^T) out L, on L's triangle
    out, g = outs[0], og[0]
    g = g + transposed(xp, g)
    low = xp.tril(_as_lower(xp, attrs, ins[0]))
    return [_as_lower(xp, attrs, xp.tril(-xp.matmul(xp.matmul(xp.matmul(out, g), out), low)))]


register_linalg(
    "potri",
    _potri,
    params=dict(_CHOLESKY_PARAMS),
    infer_shape=_square_infer("linalg_potri"),
    gradient=_potri_gradient,
    doc="``(L L^T)^-1`` from the lower Cholesky factor L of a matrix (or ``(U^T U)^-1`` from the upper "
    "factor U with ``lower=False``): that matrix's inverse.",
)


# -- sumlogdiag -------------------------------------------------------------------------------------
register_linalg(
    "sumlogdiag",
    lambda xp, attrs, ins: [xp.log(_diagonal(xp, ins[0])).sum(axis=-1)],
    infer_shape=_square_infer("linalg_sumlogdiag", scalar=True),
    gradient=lambda xp, attrs, og, ins, outs: [
        _diag_matrix(xp, og[0].reshape(ins[0].shape[:-2] + (1,)) / _diagonal(xp, ins[0]))
    ],
    doc="The sum of the logarithms of each matrix's diagonal.",
)


# -- gelqf ------------------------------------------------------------------------------------------
def _gelqf(xp: Any, attrs: dict, ins: list) -> list:
    # A = L Q from the QR factorisation of A^T = Q' R: Q = Q'^T, L = R^T
    q, r = xp.linalg.qr(transposed(xp, ins[0]))
    return [transposed(xp, q), transposed(xp, r)]


def _gelqf_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    # dA = L^-T (dQ + sym(M) Q) with M = L^T dL - dQ Q^T
    q, low = outs
    dq, dl = og
    m = xp.matmul(transposed(xp, low), dl) - xp.matmul(dq, transposed(xp, q))
    return [xp.matmul(_inverse_t(xp, low), dq + xp.matmul(_symmetric_from_lower(xp, m), q))]


def _gelqf_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    a = in_shapes[0]
    check_matrices("linalg_gelqf", "A", a)
    if a is None:
        return in_shapes, [None, None], aux_shapes
    if dim_is_known(a[-2]) and dim_is_known(a[-1]) and a[-2] > a[-1]:
        raise ShapeError(f"linalg_gelqf: A {tuple(a)} must have at least as many columns as rows")
    return in_shapes, [tuple(a), tuple(a[:-1]) + (a[-2],)], aux_shapes


register_linalg(
    "gelqf",
    _gelqf,
    outputs=("output0", "output1"),
    infer_shape=_gelqf_infer,
    gradient=_gelqf_gradient,
    doc="The LQ factorisation ``A = L Q`` of a wide matrix: Q with orthonormal rows, L lower triangular.",
)


# -- inverse, det, slogdet --------------------------------------------------------------------------
register_linalg(
    "inverse",
    lambda xp, attrs, ins: [xp.linalg.inv(ins[0])],
    infer_shape=_square_infer("linalg_inverse"),
    gradient=lambda xp, attrs, og, ins, outs: [
        -xp.matmul(xp.matmul(transposed(xp, outs[0]), og[0]), transposed(xp, outs[0]))
    ],
    doc="The inverse of each matrix.",
)


def _scalar_grad(g: Any, a: Any) -> Any:
    """One gradient value per matrix, shaped to broadcast over the matrix."""
    return g.reshape(a.shape[:-2] + (1, 1))


def _cofactors(xp: Any, a: Any) -> Any:
    """The cofactor matrix of each matrix of ``a`` (``det(A) A^-T`` where A is invertible), from the SVD
    ``A = U diag(s) V^T``: ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``, finite for singular A too."""
    u, s, vt = xp.linalg.svd(a)
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, axis=-1)[..., :-1]], axis=-1), axis=-1), axis=-1)
    sign = (xp.linalg.det(u) * xp.linalg.det(vt))[..., None, None]
    return sign * xp.matmul(u * (before * after)[..., None, :], vt)


register_linalg(
    "det",
    lambda xp, attrs, ins: [xp.linalg.det(ins[0])],
    infer_shape=_square_infer("linalg_det", scalar=True),
    # the cofactors rather than det(A) A^-T: a singular A has a gradient too (MXNet's is 0 there)
    gradient=lambda xp, attrs, og, ins, outs: [_scalar_grad(og[0], ins[0]) * _cofactors(xp, ins[0])],
    doc="The determinant of each matrix.",
)
register_linalg(
    "slogdet",
    lambda xp, attrs, ins: list(xp.linalg.slogdet(ins[0])),
    outputs=("output0", "output1"),
    infer_shape=_square_infer("linalg_slogdet", scalar=True, num_outputs=2),
    gradient=lambda xp, attrs, og, ins, outs: [_scalar_grad(og[1], ins[0]) * _inverse_t(xp, ins[0])],
    doc="The sign and the log of the absolute value of each matrix's determinant.",
)


# -- syevd ------------------------------------------------------------------------------------------
def _syevd(xp: Any, attrs: dict, ins: list) -> list:
    # A = U^T diag(L) U, eigenvalues ascending; each eigenvector (a row of U) signed so that its
    # entry of largest magnitude is positive, as MXNet's
    values, vectors = xp.linalg.eigh(ins[0])
    rows = transposed(xp, vectors)
    largest = xp.take_along_axis(rows, xp.abs(rows).argmax(axis=-1)[..., None], axis=-1)
    return [rows * xp.where(largest < 0, -1.0, 1.0).astype(rows.dtype), values]


def _syevd_gradient(xp: Any, attrs: dict, og: list, ins: list, outs: list) -> list:
    # dA = U^T (diag(dL) + F o (U dU^T)) U, F[i, j] = 1 / (L[j] - L[i]) off the diagonal, made symmetric;
    # F is 0 between equal eigenvalues, so a gradient through L alone stays U^T diag(dL) U (MXNet's)
    # instead of 0 * inf = NaN
    rows, values = outs
    d_rows, d_values = og
    gap = values[..., None, :] - values[..., :, None]
    n = values.shape[-1]
    off = ~xp.eye(n, dtype=bool) & (gap != 0)
    inverse_gap = xp.where(off, 1.0 / xp.where(off, gap, 1.0), 0.0)
    inner = inverse_gap * xp.matmul(rows, transposed(xp, d_rows)) + _diag_matrix(xp, d_values)
    grad = xp.matmul(xp.matmul(transposed(xp, rows), inner), rows)
    return [0.5 * (grad + transposed(xp, grad))]


register_linalg(
    "syevd",
    _syevd,
    outputs=("output0", "output1"),
    infer_shape=lambda attrs, s, a: (
        _square_infer("linalg_syevd")(attrs, s, a)[0],
        [None, None] if s[0] is None else [tuple(s[0]), tuple(s[0][:-1])],
        a,
    ),
    gradient=_syevd_gradient,
    doc="The eigendecomposition ``A = U^T diag(L) U`` of symmetric A: eigenvectors in U's rows, L ascending.",
)

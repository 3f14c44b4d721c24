"""MXNet 1.x's linalg products (gemm, gemm2, trmm, trsm, syrk): the parameters the sweep leaves at
their defaults, against MXNet 1.9.1's values (literals), and the shapes it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError

T = [[2.0, 5.0], [1.0, 4.0]]
B = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def _f64(values) -> mx.nd.NDArray:
    return mx.nd.array(np.asarray(values, dtype=np.float64), dtype="float64")


def test_gemm2_row_axis_batches_over_the_other_axes():
    a = _f64(np.arange(24).reshape(3, 2, 4))
    b = _f64(np.arange(40).reshape(4, 2, 5) / 10)
    out = mx.nd.linalg_gemm2(a, b, axis=0)
    assert out.shape == (3, 2, 5)
    np.testing.assert_allclose(out.asnumpy()[:, 1, :2], [[49.0, 51.2], [113.0, 118.4], [177.0, 185.6]])


def test_gemm_with_beta_zero_does_not_read_c():
    # BLAS's rule, as MXNet 1.9.1: C may hold NaN or Inf (an uninitialised buffer) when beta is 0
    c = _f64([[np.nan, 1.0], [1.0, np.inf]])
    out = mx.nd.linalg.gemm(_f64(T), _f64(T), c, beta=0.0)
    np.testing.assert_allclose(out.asnumpy(), np.asarray(T) @ np.asarray(T))


def test_trsm_rightside_transposed_upper_and_trmm_transposed_upper_as_mxnet():
    got = mx.nd.linalg_trsm(_f64(T), _f64(B).T, rightside=True, transpose=True, lower=False, alpha=2)
    np.testing.assert_allclose(got.asnumpy(), [[-4.0, 2.0], [-4.25, 2.5], [-4.5, 3.0]])
    got = mx.nd.linalg_trmm(_f64(T), _f64(B), transpose=True, lower=False, alpha=0.5)
    np.testing.assert_allclose(got.asnumpy(), [[1.0, 2.0, 3.0], [10.5, 15.0, 19.5]])


_POISONED = [[np.nan, 1.0], [np.inf, 0.0]]  # NaN and Inf, and singular as a lower triangle


@pytest.mark.parametrize(
    "name,inputs,params,expected",
    [
        ("linalg_gemm2", [_POISONED, T], {}, np.zeros((2, 2))),
        ("linalg_gemm2", [T, _POISONED], {"transpose_b": True, "axis": -2}, np.zeros((2, 2))),
        ("linalg_gemm", [_POISONED, T, T], {"beta": 0.5}, 0.5 * np.asarray(T)),
        ("linalg_trmm", [_POISONED, B], {}, np.zeros((2, 3))),
        ("linalg_trmm", [T, [[np.inf, 1.0, 2.0], [3.0, np.nan, 4.0]]], {"rightside": False}, np.zeros((2, 3))),
        ("linalg_trsm", [_POISONED, B], {"transpose": True}, np.zeros((2, 3))),
        ("linalg_trsm", [T, np.asarray(_POISONED).T], {"rightside": True}, np.zeros((2, 2))),
        ("linalg_syrk", [_POISONED], {"transpose": True}, np.zeros((2, 2))),
    ],
    ids=["gemm2-A", "gemm2-B", "gemm", "trmm-A", "trmm-B", "trsm-singular-A", "trsm-B", "syrk"],
)
def test_alpha_zero_reads_neither_matrix_and_its_gradients_are_zero(name, inputs, params, expected):
    # BLAS's rule, as MXNet 1.9.1: with alpha = 0 the product is not computed, so NaN, Inf or a
    # singular triangle in A or B leaves no trace (IEEE arithmetic would give NaN: 0 * Inf)
    arrays = [_f64(x) for x in inputs]
    for x in arrays:
        x.attach_grad()
    with mx.autograd.record():
        out = getattr(mx.nd, name)(*arrays, alpha=0.0, **params)
    out.backward(mx.nd.ones(out.shape, dtype="float64"))
    np.testing.assert_array_equal(out.asnumpy(), expected)
    for x in arrays[:2]:
        np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros(x.shape))


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_gemm_gradients_of_every_transpose_match_central_differences(transpose_a, transpose_b):
    from lazynd.testing import check_gradient

    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 4, 3) if transpose_a else (2, 3, 4))
    b = rng.normal(size=(2, 5, 4) if transpose_b else (2, 4, 5))
    c = rng.normal(size=(2, 3, 5))
    params = {"transpose_a": transpose_a, "transpose_b": transpose_b, "alpha": 0.5, "beta": 3.0}
    check_gradient("linalg_gemm", [a, b, c], params, ctx=mx.cpu(), wrt=[0, 1, 2])


@pytest.mark.parametrize("name", ["linalg_trsm", "linalg_trmm"])
@pytest.mark.parametrize("rightside", [False, True])
def test_triangular_gradients_on_the_side_and_triangle_used_match_central_differences(name, rightside):
    from lazynd.testing import check_gradient

    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 3, 3)) + 4 * np.eye(3)
    b = rng.normal(size=(2, 4, 3) if rightside else (2, 3, 4))
    for lower, transpose in ((True, True), (False, False)):
        params = {"rightside": rightside, "lower": lower, "transpose": transpose, "alpha": 1.5}
        check_gradient(name, [a, b], params, ctx=mx.cpu(), wrt=[0, 1])


def test_syrk_transposed_and_its_gradient():
    from lazynd.testing import check_gradient

    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    np.testing.assert_allclose(mx.nd.linalg_syrk(_f64(a), transpose=True).asnumpy(), a.T @ a)
    check_gradient("linalg_syrk", [a], {"transpose": True, "alpha": 0.3}, ctx=mx.cpu(), wrt=[0])


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((4, 5))), "linalg_gemm2: incompatible matrices"),
        (lambda: mx.nd.linalg_gemm2(mx.nd.ones((2, 3)), mx.nd.ones((3, 5)), axis=-1), "names the last axis"),
        (
            lambda: mx.nd.linalg_gemm(mx.nd.ones((2, 3)), mx.nd.ones((3, 5)), mx.nd.ones((2, 3))),
            r"linalg_gemm: C has shape \(2, 3\), expected \(2, 5\)",
        ),
        (lambda: mx.nd.linalg_trsm(mx.nd.ones((2, 3)), mx.nd.ones((2, 3))), "'A' must hold square matrices"),
        (lambda: mx.nd.linalg_trmm(mx.nd.ones((3, 3)), mx.nd.ones((2, 3))), "linalg_trmm: A .* does not fit B"),
        (lambda: mx.nd.linalg_syrk(mx.nd.ones((3,))), "'A' must have at least 2 dims"),
        (
            lambda: mx.nd.linalg_gemm2(mx.nd.ones((1, 3, 4)), mx.nd.ones((2, 4, 5))),
            r"linalg_gemm2: A \(1, 3, 4\) and B \(2, 4, 5\) have different batch dims \(1,\) and \(2,\)",
        ),
        (
            lambda: mx.nd.linalg_trsm(mx.nd.ones((2, 3, 3)), mx.nd.ones((3, 3, 2))),
            r"linalg_trsm: A .* and B .* have different batch dims \(2,\) and \(3,\)",
        ),
        (
            lambda: mx.nd.linalg_trmm(mx.nd.ones((3, 3)), mx.nd.ones((2, 3, 2))),
            r"linalg_trmm: A .* and B .* have different batch dims \(\) and \(2,\)",
        ),
    ],
    ids=[
        "gemm2-inner",
        "gemm2-axis",
        "gemm-C",
        "trsm-square",
        "trmm-fit",
        "syrk-1d",
        "gemm2-batch",
        "trsm-batch",
        "trmm-ndim",
    ],
)
def test_bad_shapes_fail_at_the_call_naming_the_operator(call, message):
    with pytest.raises(ShapeError, match=message):
        call()


def test_integer_matrices_are_refused_as_mxnet_does():
    with pytest.raises(OperatorError, match="_linalg_gemm2: inputs have dtype int32, expected float32 or float64"):
        mx.nd.linalg_gemm2(mx.nd.ones((2, 2), dtype="int32"), mx.nd.ones((2, 2), dtype="int32"))

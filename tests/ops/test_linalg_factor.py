"""MXNet 1.x's linalg factorisations (potrf, potri, gelqf, sumlogdiag, inverse, det, slogdet) against
MXNet 1.9.1's values (literals): the gradient rules the numerical check cannot see, the output
shapes, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, OperatorError, ShapeError


def _f64(values) -> mx.nd.NDArray:
    return mx.nd.array(np.asarray(values, dtype=np.float64), dtype="float64")


def test_potrf_gradient_is_mxnets_symmetric_one():
    # the central differences see only the lower triangle LAPACK reads: MXNet's rule is symmetric
    a = _f64([[4, 2], [2, 3]])
    a.attach_grad()
    with mx.autograd.record():
        low = mx.nd.linalg_potrf(a)
    low.backward(_f64([[1, 2], [3, 4]]))
    np.testing.assert_allclose(low.asnumpy(), [[2.0, 0.0], [1.0, np.sqrt(2.0)]])
    np.testing.assert_allclose(
        a.grad.asnumpy(), [[0.22855339059327373, 0.04289321881345256], [0.04289321881345254, 1.414213562373095]]
    )


def test_potrf_lower_false_gives_the_upper_factor_and_its_gradient():
    # MXNet 1.9.1's values: U with A = U^T U; the gradient rule is the lower one seen through U^T
    a = _f64([[4, 2], [2, 3]])
    a.attach_grad()
    with mx.autograd.record():
        upper = mx.nd.linalg.potrf(a, lower=False)
    upper.backward(_f64([[1, 2], [3, 4]]))
    np.testing.assert_allclose(upper.asnumpy(), [[2.0, 1.0], [0.0, np.sqrt(2.0)]])
    np.testing.assert_allclose(
        a.grad.asnumpy(), [[0.35355339059327373, -0.20710678118654746], [-0.20710678118654746, 1.414213562373095]]
    )


def test_potrf_reads_only_the_triangle_it_factors():
    # MXNet 1.9.1 (LAPACK): lower=False reads A's upper triangle, the lower one is never looked at
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    upper = mx.nd.linalg.potrf(_f64(a + np.tril(np.full((2, 2), 100.0), -1)), lower=False)
    lower = mx.nd.linalg.potrf(_f64(a + np.triu(np.full((2, 2), 100.0), 1)))
    np.testing.assert_allclose(upper.asnumpy(), [[2.0, 1.0], [0.0, np.sqrt(2.0)]])
    np.testing.assert_allclose(lower.asnumpy(), [[2.0, 0.0], [1.0, np.sqrt(2.0)]])


def test_potri_lower_false_reads_the_upper_factor():
    # MXNet 1.9.1's values: (U^T U)^-1 from the upper triangle; the gradient stays on that triangle
    factor = _f64([[2, 1], [0, 3]])
    factor.attach_grad()
    with mx.autograd.record():
        inverse = mx.nd.linalg.potri(factor, lower=False)
    inverse.backward(_f64([[1, 2], [3, 4]]))
    np.testing.assert_allclose(inverse.asnumpy(), [[5 / 18, -1 / 18], [-1 / 18, 1 / 9]])
    np.testing.assert_allclose(factor.grad.asnumpy(), [[-5 / 36, -2 / 9], [0.0, -0.12962962962962965]])


def test_syevd_eigenvalue_gradient_of_repeated_eigenvalues_is_finite():
    # MXNet 1.9.1: U^T diag(dL) U; the eigenvector term's 1 / (L[j] - L[i]) made it 0 * inf = NaN here
    a = _f64(np.diag([2.0, 2.0, 3.0]))
    a.attach_grad()
    with mx.autograd.record():
        _, values = mx.nd.linalg.syevd(a)
        loss = (values * _f64([1, 2, 3])).sum()
    loss.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), np.diag([1.0, 2.0, 3.0]))


def test_det_gradient_is_the_cofactor_matrix_singular_matrices_included():
    # d det(A) / dA = cof(A); a singular A used to fail in the backward (A^-1); MXNet 1.9.1 gives 0 there,
    # which is wrong for rank n - 1
    for values, cofactors in [([[3, 1], [2, 5]], [[5, -2], [-1, 3]]), ([[1, 2], [2, 4]], [[4, -2], [-2, 1]])]:
        a = _f64(values)
        a.attach_grad()
        with mx.autograd.record():
            det = mx.nd.linalg.det(a)
        det.backward()
        np.testing.assert_allclose(a.grad.asnumpy(), cofactors, atol=1e-12)


def test_gelqf_gives_q_then_l_with_lapacks_signs():
    q, low = mx.nd.linalg_gelqf(_f64([[1, 2, 3], [4, 5, 6]]))
    np.testing.assert_allclose(
        q.asnumpy(),
        [
            [-0.2672612419124243, -0.5345224838248488, -0.8017837257372732],
            [0.8728715609439696, 0.2182178902359924, -0.4364357804719846],
        ],
    )
    np.testing.assert_allclose(low.asnumpy(), [[-3.7416573867739413, 0.0], [-8.55235974119758, 1.963961012123933]])


def test_scalar_results_are_one_per_matrix():
    sign, logabs = mx.nd.linalg_slogdet(mx.nd.array([[[1, 2], [3, 4]], [[2, 0], [0, 3]]]))
    np.testing.assert_allclose(sign.asnumpy(), [-1.0, 1.0])
    np.testing.assert_allclose(logabs.asnumpy(), [0.6931472, 1.7917595], rtol=1e-6)
    assert mx.nd.linalg_det(mx.nd.ones((2, 2))).shape == (1,)
    assert mx.nd.linalg_sumlogdiag(mx.nd.ones((4, 3, 3))).shape == (4,)
    assert mx.nd.linalg_det(mx.nd.array([[1, 2], [2, 4]])).asnumpy()[0] == 0


@pytest.mark.parametrize(
    "call,error,message",
    [
        (lambda: mx.nd.linalg_potrf(mx.nd.ones((2, 3))), ShapeError, "linalg_potrf: input 'A' must hold square"),
        (lambda: mx.nd.linalg_det(mx.nd.ones((3,))), ShapeError, "linalg_det: input 'A' must have at least 2 dims"),
        (lambda: mx.nd.linalg_gelqf(mx.nd.ones((3, 2))), ShapeError, "at least as many columns as rows"),
        (lambda: mx.nd.linalg_inverse(mx.nd.ones((2, 2), dtype="float16")), OperatorError, "float32 or float64"),
    ],
    ids=["potrf-square", "det-1d", "gelqf-tall", "float16"],
)
def test_bad_inputs_fail_at_the_call_naming_the_operator(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: mx.nd.linalg_inverse(mx.nd.array([[1, 2], [2, 4]])), "_linalg_inverse: Singular matrix"),
        (lambda: mx.nd.linalg_potrf(mx.nd.array([[1, 2], [2, 1]])), "_linalg_potrf: Matrix is not positive definite"),
    ],
    ids=["inverse-singular", "potrf-indefinite"],
)
def test_lapack_failures_name_the_operator(call, message):
    with pytest.raises(LazyNDError, match=message):
        call().asnumpy()


def test_syevd_signs_and_gradient_are_mxnets():
    a = _f64([[2, 1], [1, 3]])
    a.attach_grad()
    with mx.autograd.record():
        u, eig = mx.nd.linalg_syevd(a)
    mx.autograd.backward([u, eig], [_f64([[1, 0], [0, 0]]), _f64([1, 2])])
    # MXNet 1.9.1: each eigenvector's largest entry positive, eigenvalues ascending
    np.testing.assert_allclose(
        u.asnumpy(), [[0.8506508083520399, -0.5257311121191335], [0.5257311121191335, 0.8506508083520399]]
    )
    np.testing.assert_allclose(eig.asnumpy(), [1.381966011250105, 3.618033988749895])
    np.testing.assert_allclose(
        a.grad.asnumpy(), [[1.171246979826194, 0.3946404842880444], [0.39464048428804444, 1.8287530201738054]]
    )

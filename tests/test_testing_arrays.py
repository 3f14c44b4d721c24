"""mx.test_utils' test arrays: matrices with known eigenvalues, the large-tensor fixtures, NumPy references.

Dtypes and values are MXNet 1.9.1's (read from its ``mx.test_utils`` and pasted here).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import test_utils
from lazynd.errors import LazyNDError


def test_matrices_have_real_eigenvalues_in_range():
    np.random.seed(1)
    a = test_utils.new_matrix_with_real_eigvals_2d(4)
    eigenvalues = np.linalg.eigvals(a)
    assert np.allclose(eigenvalues.imag, 0, atol=1e-8) and np.all(np.abs(eigenvalues.real) < 10)
    batch = test_utils.new_matrix_with_real_eigvals_nd((2, 3, 3, 3))
    assert batch.shape == (2, 3, 3, 3)
    sym = test_utils.new_sym_matrix_with_real_eigvals_nd((2, 3, 3))
    assert np.allclose(sym, np.swapaxes(sym, -1, -2))
    q = test_utils.new_orthonormal_matrix_2d(5)
    assert np.allclose(q.T @ q, np.eye(5))
    assert test_utils.new_sym_matrix_with_real_eigvals_2d(3).shape == (3, 3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: test_utils.new_matrix_with_real_eigvals_2d(0),
            "new_matrix_with_real_eigvals_2d: n must be a positive int, got 0",
        ),
        (lambda: test_utils.new_sym_matrix_with_real_eigvals_nd((2, 3)), r"must end in two equal sides.*\(2, 3\)"),
        (lambda: test_utils.collapse_sum_like(np.ones((2, 3)), (2,)), r"shape \(2,\) does not broadcast"),
        (lambda: test_utils.collapse_sum_like(np.ones((3,)), (1, 3)), "has more axes"),
        (lambda: test_utils.assign_each2(np.ones(2), np.ones(3), max), r"input1 has shape \(2,\), input2 \(3,\)"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(LazyNDError, match=message):
        call()


def test_large_tensor_fixtures_as_mxnet():
    vector = test_utils.create_vector(4)
    assert vector.dtype == np.int64 and vector.asnumpy().tolist() == [0, 1, 2, 3]
    tensor = test_utils.create_2d_tensor(3, 2)
    assert tensor.asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]] and tensor.dtype == np.int64
    identity = test_utils.get_identity_mat(3)
    assert identity.dtype == np.float32 and np.array_equal(identity.asnumpy(), np.eye(3))
    assert test_utils.get_identity_mat_batch(3).shape == (2, 3, 3)


def test_collapse_sum_like_sums_the_broadcast_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(test_utils.collapse_sum_like(a, (3, 1)), a.sum(axis=(0, 2)).reshape(3, 1))
    assert test_utils.collapse_sum_like(np.ones((0, 3)), (1, 3)).tolist() == [[0.0, 0.0, 0.0]]


def test_assign_each_maps_elements_into_float64():
    x = np.array([[1, 2], [3, 4]], dtype=np.int32)
    doubled = test_utils.assign_each(x, lambda v: v * 2)
    assert doubled.dtype == np.float64 and doubled.tolist() == [[2, 4], [6, 8]]
    assert test_utils.assign_each(x, None).dtype == np.int32
    assert test_utils.assign_each2(x, x + 1, lambda u, v: u * v).tolist() == [[2, 6], [12, 20]]
    assert isinstance(mx.nd.array(doubled), mx.nd.NDArray)

"""mx.test_utils' tolerance tables and the comparisons on them, as MXNet 1.9.1 has them.

The expected values were read from MXNet 1.9.1's ``mx.test_utils`` and pasted here.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import test_utils
from lazynd.errors import LazyNDError


def test_tables_are_mxnets():
    assert test_utils.default_rtols()[np.dtype(np.float16)] == 1e-2
    assert test_utils.default_rtols()[np.dtype(np.float32)] == 1e-4
    assert test_utils.default_atols()[np.dtype(np.float64)] == 1e-20
    assert test_utils.default_atols()[np.dtype(np.int32)] == 0
    assert test_utils.default_numeric_eps() == {
        np.dtype(np.float16): 1 / 64,
        np.dtype(np.float32): 1 / 512,
        np.dtype(np.float64): 1 / 16384,
    }


def test_getters_default_to_float64_and_pass_given_values_through():
    assert (test_utils.get_rtol(), test_utils.get_atol(), test_utils.get_etol()) == (1e-5, 1e-20, 0)
    assert test_utils.get_rtol(dtype=np.dtype(np.float16)) == 1e-2
    assert (test_utils.get_rtol(0.5), test_utils.get_atol(0.25), test_utils.get_etol(0.1)) == (0.5, 0.25, 0.1)


def test_get_tolerance_prefers_a_number_then_the_callers_table_then_the_default():
    x = mx.nd.zeros((2,), dtype=np.float16)
    assert test_utils.effective_dtype(x) == np.dtype(np.float16)
    assert test_utils.get_tolerance(x, 0.3, test_utils.default_rtols()) == 0.3
    assert test_utils.get_tolerance(x, {np.dtype(np.float16): 0.2}, test_utils.default_rtols()) == 0.2
    assert test_utils.get_tolerance(x, None, test_utils.default_rtols()) == 1e-2
    assert test_utils.get_tols(np.zeros(1, np.float32), 1.0, None, None) == (1e-4, 1e-3)  # float32 vs float64


def test_get_tolerance_names_a_dtype_without_a_default():
    with pytest.raises(LazyNDError, match="get_tolerance: no tolerance for dtype int16"):
        test_utils.get_tolerance(np.zeros(1, np.int16), None, test_utils.default_rtols())


def test_assert_almost_equal_with_err_lets_a_fraction_of_elements_miss():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0])
    test_utils.assert_almost_equal_with_err(a, b, etol=0.25)  # one element of four, as MXNet 1.9.1 allows
    with pytest.raises(AssertionError, match=r"25\.00% of the elements, more than etol=20\.00%"):
        test_utils.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal_with_err(a, b)  # etol 0: every element must match
    test_utils.assert_almost_equal_with_err(mx.nd.array(a), mx.nd.array(a), etol=0.1)


def test_compare_ndarray_tuple_walks_nested_states():
    one = mx.nd.ones((2,))
    test_utils.compare_ndarray_tuple((one, (one, None)), (one.copy(), (one.copy(), one)))
    with pytest.raises(AssertionError):
        test_utils.compare_ndarray_tuple((one,), (one * 2,))


def test_compare_optimizer_agrees_with_itself_and_finds_a_different_update():
    sgd = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    test_utils.compare_optimizer(sgd, mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    test_utils.compare_optimizer(mx.optimizer.Adam(), mx.optimizer.Adam(), [(2,), (3, 2)], np.float32, ntensors=2)
    with pytest.raises(AssertionError):
        test_utils.compare_optimizer(
            mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2), (3,), np.float32
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"w_stype": "row_sparse"}, "w_stype 'row_sparse': lazynd has dense storage only"),
        ({"ntensors": 2}, r"ntensors 2 needs a list of 2 shapes"),
    ],
)
def test_compare_optimizer_refuses_what_it_cannot_do(kwargs, message):
    with pytest.raises(LazyNDError, match=message):
        test_utils.compare_optimizer(mx.optimizer.SGD(), mx.optimizer.SGD(), (3,), np.float32, **kwargs)


def test_assert_almost_equal_defaults_are_mxnets_tables():
    # MXNet 1.9.1 passes these: float32 atol 1e-3, float16 rtol 1e-2 / atol 1e-1, the larger of mixed dtypes
    ones32 = np.ones(3, np.float32)
    test_utils.assert_almost_equal(mx.nd.array(ones32), ones32 + 5e-4)
    test_utils.assert_almost_equal(np.ones(2, np.float16), np.ones(2, np.float16) * 1.05)
    test_utils.assert_almost_equal(np.ones(2, np.float32), np.ones(2) + 5e-4)
    # ... and refuses this: float64's atol is 1e-20
    with pytest.raises(AssertionError, match="atol=1e-20"):
        test_utils.assert_almost_equal(np.zeros(2), np.array([0.0, 1e-15]))


def test_assert_almost_equal_takes_tolerance_dicts_by_dtype():
    ones32 = np.ones(3, np.float32)
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    test_utils.assert_almost_equal(ones32, ones32 + 5e-3, rtol={f32: 1e-2}, atol={f32: 1e-3})
    # a dict without the arrays' dtype falls back to the table
    with pytest.raises(AssertionError, match=r"rtol=0\.0001, atol=0\.001"):
        test_utils.assert_almost_equal(ones32, ones32 + 5e-3, rtol={f64: 1e-2})

"""multi_sum_sq, all_finite, multi_all_finite and reset_arrays, against MXNet 1.9.1's results."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError
from lazynd.testing import assert_almost_equal


def test_multi_sum_sq_gives_each_arrays_sum_of_squares_as_float32(ctx):
    result = mx.nd.multi_sum_sq(mx.nd.array([1, 2, 3], ctx=ctx), mx.nd.array([[1, 1]], ctx=ctx), num_arrays=2)
    assert result.dtype == np.float32 and result.shape == (2,)
    assert_almost_equal(result.asnumpy(), np.array([14.0, 2.0], np.float32))


def test_multi_sum_sq_accumulates_float16_in_float32(ctx):
    # 4096 squares of 1.0: a float16 accumulator would stop at 2048
    data = mx.nd.ones((4096,), ctx=ctx, dtype="float16")
    assert mx.nd.multi_sum_sq(data, num_arrays=1).asnumpy().tolist() == [4096.0]


def test_multi_sum_sq_in_a_bound_executor():
    net = sym.multi_sum_sq(sym.Variable("a"), sym.Variable("b"), num_arrays=2)
    assert net.list_arguments() == ["a", "b"]
    _, out_shapes, _ = net.infer_shape(a=(2, 3), b=(4,))
    assert out_shapes == [(2,)]
    _, out_types, _ = net.infer_type(a="float16", b="float16")
    assert [np.dtype(t) for t in out_types] == [np.float32]
    exe = net.bind(mx.cpu(), args={"a": mx.nd.ones((2, 3)) * 2, "b": mx.nd.ones((4,))}, grad_req="null")
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [24.0, 4.0]


def test_multi_sum_sq_refuses_mixed_dtypes_naming_the_array():
    with pytest.raises(OperatorError, match=r"multi_sum_sq: input 'array_1' has dtype float16, expected float32"):
        mx.nd.multi_sum_sq(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float16"), num_arrays=2)


def test_multi_sum_sq_refuses_integer_data():
    with pytest.raises(OperatorError, match=r"multi_sum_sq: input 'array_0' has dtype int32, expected one of"):
        mx.nd.multi_sum_sq(mx.nd.ones((2,), dtype="int32"), num_arrays=1)


def test_multi_sum_sq_needs_num_arrays_matching_its_inputs():
    with pytest.raises(OperatorError, match=r"multi_sum_sq: expected 2 input"):
        mx.nd.multi_sum_sq(mx.nd.ones((2,)), num_arrays=2)


@pytest.mark.parametrize(
    ("values", "dtype", "flag"),
    [([1, 2, 3], "float32", 1.0), ([1, np.inf, 3], "float32", 0.0), ([1, np.nan], "float16", 0.0)],
)
def test_all_finite_flags_nan_and_infinity(ctx, values, dtype, flag):
    result = mx.nd.all_finite(mx.nd.array(values, ctx=ctx, dtype=dtype))
    assert result.dtype == np.float32 and result.shape == (1,)
    assert result.asnumpy().tolist() == [flag]


@pytest.mark.parametrize(("values", "expected"), [([1.0, 2.0], 5.0), ([1.0, np.inf], 0.0)])
def test_all_finite_without_init_output_only_drops_the_flag(ctx, values, expected):
    flag = mx.nd.ones((1,), ctx=ctx) * 5
    mx.nd.all_finite(mx.nd.array(values, ctx=ctx), init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [expected]  # MXNet 1.9.1 leaves 5 or writes 0


def test_multi_all_finite_checks_every_array_of_any_float_dtype(ctx):
    good = [mx.nd.array([1, 2, 3], ctx=ctx), mx.nd.array([1], ctx=ctx, dtype="float16")]
    assert mx.nd.multi_all_finite(*good, num_arrays=2).asnumpy().tolist() == [1.0]
    bad = [mx.nd.array([1, 2, 3], ctx=ctx), mx.nd.array([np.nan], ctx=ctx, dtype="float64")]
    assert mx.nd.multi_all_finite(*bad, num_arrays=2).asnumpy().tolist() == [0.0]


def test_multi_all_finite_accumulates_over_calls_into_one_flag():
    flag = mx.nd.zeros((1,))
    mx.nd.multi_all_finite(mx.nd.ones((3,)), num_arrays=1, init_output=True, out=flag)
    mx.nd.multi_all_finite(mx.nd.array([np.inf]), num_arrays=1, init_output=False, out=flag)
    mx.nd.multi_all_finite(mx.nd.ones((3,)), num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [0.0]


def test_all_finite_in_a_bound_executor():
    net = sym.multi_all_finite(sym.Variable("a"), sym.Variable("b"), num_arrays=2)
    args = {"a": mx.nd.ones((2, 3)), "b": mx.nd.array([1.0, np.nan])}
    exe = net.bind(mx.cpu(), args=args, grad_req="null")
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [0.0]
    exe = sym.all_finite(sym.Variable("a")).bind(mx.cpu(), args={"a": mx.nd.ones((2, 3))}, grad_req="null")
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [1.0]


def test_all_finite_refuses_integer_data():
    with pytest.raises(OperatorError, match=r"all_finite: input 'data' has dtype int32"):
        mx.nd.all_finite(mx.nd.ones((2,), dtype="int32"))
    with pytest.raises(OperatorError, match=r"multi_all_finite: input 'array_1' has dtype int64"):
        mx.nd.multi_all_finite(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="int64"), num_arrays=2)


def test_reset_arrays_zeroes_every_array_in_place(ctx):
    a, b = mx.nd.ones((2, 3), ctx=ctx), mx.nd.ones((4,), ctx=ctx, dtype="float16")
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert a.asnumpy().tolist() == [[0.0] * 3] * 2
    assert b.asnumpy().tolist() == [0.0] * 4 and b.dtype == np.float16


def test_a_read_after_reset_arrays_sees_the_zeros():
    a = mx.nd.ones((1000,))
    b = a * 3
    mx.nd.reset_arrays(b, num_arrays=1)
    assert float((b + 1).sum().asscalar()) == 1000.0


def test_reset_arrays_refuses_integer_data():
    with pytest.raises(OperatorError, match=r"reset_arrays: input 'array_0' has dtype int32"):
        mx.nd.reset_arrays(mx.nd.ones((2,), dtype="int32"), num_arrays=1)


def test_reset_arrays_as_a_symbol_is_refused():
    # no outputs: an executor would never run it (binding one crashes MXNet 1.9.1)
    with pytest.raises(OperatorError, match="reset_arrays: the operator has no outputs"):
        sym.reset_arrays(sym.Variable("a"), num_arrays=1)

"""NDArray arithmetic: broadcasting, scalars, in-place operators, integer rules and dtypes kept as MXNet does."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx


def test_arithmetic_with_broadcasting_and_scalars_on_both_sides(ctx: mx.Context) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    y = np.array([1, 2, 4], dtype=np.float32)
    a, b = mx.nd.array(x, ctx), mx.nd.array(y, ctx)
    cases = {
        "a+b": (a + b, x + y),
        "a-b": (a - b, x - y),
        "a*b": (a * b, x * y),
        "a/b": (a / b, x / y),
        "2-a": (2 - a, 2 - x),
        "2/a": (2 / a, 2 / x),
        "a**2": (a**2, x**2),
        "2**a": (2**a, 2**x),
        "a%3": (a % 3, x % 3),
        "-a": (-a, -x),
        "abs": (abs(-a), x),
        "a>b": (a > b, (x > y).astype(np.float32)),
        "a==3": (a == 3, (x == 3).astype(np.float32)),
        "a<=a": (a <= a, np.ones_like(x)),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, err_msg=name)


def test_integer_division_truncates_like_mxnet() -> None:
    a = mx.nd.array([7, -7], dtype="int32")
    assert (a / 2).asnumpy().tolist() == [3, -3]


def test_integer_power_by_a_negative_exponent_truncates_like_mxnet() -> None:
    # 1 / a ** -b toward zero, as on the GPU and in MXNet (NumPy refuses negative integer powers)
    a = mx.nd.array([1, 2, 3, -1, -1, 0], dtype="int32")
    assert (a**-1).asnumpy().tolist() == [1, 0, 0, -1, -1, 0]
    assert (a ** mx.nd.array([-2, -1, 2, -3, -2, 1], dtype="int32")).asnumpy().tolist() == [1, 0, 9, -1, 1, 0]
    assert (2 ** mx.nd.array([-1, 0, 3], dtype="int64")).asnumpy().tolist() == [0, 1, 8]
    rows = mx.nd.broadcast_power(mx.nd.array([[1], [-1], [3]], dtype="int8"), mx.nd.array([-1, -2, 2], dtype="int8"))
    assert rows.asnumpy().tolist() == [[1, 1, 1], [-1, 1, 1], [0, 0, 9]]


def test_inplace_operators_mutate_the_array_and_its_views() -> None:
    a = mx.nd.zeros((4, 2))
    view = a[1:3]
    a += 1
    a *= 3
    a -= mx.nd.ones((4, 2))
    a /= 2
    assert view.asnumpy().tolist() == [[1, 1], [1, 1]]
    view += 10
    assert a.asnumpy()[:, 0].tolist() == [1, 11, 11, 1]


def test_dot_matches_numpy() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(mx.nd.dot(mx.nd.array(x), mx.nd.array(y)).asnumpy(), x @ y, rtol=1e-5)
    np.testing.assert_allclose(
        mx.nd.dot(mx.nd.array(y), mx.nd.array(x), transpose_a=True, transpose_b=True).asnumpy(), y.T @ x.T, rtol=1e-5
    )
    with pytest.raises(mx.ShapeError, match="dot"):
        mx.nd.dot(mx.nd.array(x), mx.nd.array(x))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_scalar_arithmetic_keeps_the_array_dtype_on_both_sides(dtype: str) -> None:
    x_np = np.linspace(0.5, 3.0, 8).astype(dtype).reshape(2, 4)
    x = mx.nd.array(x_np, dtype=dtype)
    s = x_np.dtype.type
    cases = {
        "x * 0.1": (x * 0.1, x_np * s(0.1)),
        "2 - x": (2 - x, s(2) - x_np),
        "1.5 / x": (1.5 / x, s(1.5) / x_np),
        "x ** 2": (x**2, x_np ** s(2)),
        "3.0 % x": (3.0 % x, np.mod(s(3.0), x_np)),
    }
    for label, (got, expected) in cases.items():
        assert got.dtype == x_np.dtype, label
        np.testing.assert_array_equal(got.asnumpy(), expected, err_msg=label)


def test_power_by_two_equals_numpy_power_exactly():
    # the square fast path must give numpy.power's results bit for bit, overflow and signs included
    x = np.array([-3.5, -0.0, 0.0, 1e-30, 2.5, 1e20, -1e20, np.inf, np.nan], dtype=np.float32)
    got = (mx.nd.array(x) ** 2.0).asnumpy()
    with np.errstate(over="ignore"):
        want = np.power(x, np.float32(2.0))
    np.testing.assert_array_equal(got, want)
    ints = np.array([-3, 0, 7], dtype=np.int32)
    np.testing.assert_array_equal((mx.nd.array(ints, dtype="int32") ** 2).asnumpy(), ints**2)


@pytest.mark.parametrize("flag", [True, np.bool_(True)])
def test_bool_scalar_operands_count_as_one_as_in_mxnet(flag: bool) -> None:
    x_np = np.array([1.0, -2.0, 4.0], np.float32)
    x = mx.nd.array(x_np)
    cases = {
        "x + flag": (x + flag, x_np + 1),
        "flag - x": (flag - x, 1 - x_np),
        "x * flag": (x * flag, x_np),
        "x / flag": (x / flag, x_np),
        "x == flag": (x == flag, (x_np == 1).astype(np.float32)),
        "x > flag": (x > flag, (x_np > 1).astype(np.float32)),
    }
    for label, (got, expected) in cases.items():
        assert got.dtype == np.float32, label
        np.testing.assert_array_equal(got.asnumpy(), expected, err_msg=label)
    x += flag
    np.testing.assert_array_equal(x.asnumpy(), x_np + 1)


def test_a_complex_scalar_is_refused_as_not_a_real_number() -> None:
    # lazynd's dtypes are real, as MXNet's (which raises TypeError "type complex not supported")
    with pytest.raises(mx.OperatorError, match=r"_plus_scalar: invalid value 1j .*expected a real number"):
        mx.nd.ones((2,)) + 1j


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_a_list_or_numpy_operand_on_an_integer_array_converts_as_scalars_do(dtype: str) -> None:
    # toward zero, then wrapped to the dtype's width, as x + scalar (MXNet refuses list operands)
    x = mx.nd.array([1, 2, 3, 4], dtype=dtype)
    values = [1.5, -1.5, 2.0**40, 300.0]
    by_scalar = np.stack([(x[i : i + 1] + v).asnumpy()[0] for i, v in enumerate(values)])
    np.testing.assert_array_equal((x + values).asnumpy(), by_scalar)
    np.testing.assert_array_equal((np.array(values) + x).asnumpy(), by_scalar)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1e30])
def test_a_list_or_numpy_operand_no_integer_holds_is_refused_by_name(bad: float) -> None:
    # as the scalar is; it gave INT_MIN (MXNet refuses any list operand)
    x = mx.nd.array([1, 2], dtype="int32")
    with pytest.raises(
        mx.OperatorError, match=rf"broadcast_add: the list operand: the value {re.escape(str(bad))} has no value"
    ):
        x + [bad, 1]
    with pytest.raises(mx.OperatorError, match="broadcast_greater: the ndarray operand"):
        _ = np.array([1.0, bad]) > x


def test_a_complex_numpy_operand_is_refused_not_cut_to_its_real_part() -> None:
    with pytest.raises(mx.OperatorError, match=r"complex values have no value in an array of float32"):
        mx.nd.ones((2,)) * np.array([1 + 1j, 2])

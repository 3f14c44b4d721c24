"""Binary elementwise operators on integers: C's truncating division, and the cases C leaves
undefined (a zero divisor, ``MIN / -1``) given one answer on both devices."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError
from lazynd.testing import assert_almost_equal

INTEGER_DTYPES = ["int8", "uint8", "int32", "int64"]


def _pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    signed = info.min < 0
    lhs = [5, 0, info.max, 7, info.min, 9, 8]
    rhs = [0, 0, 0, 2, -1 if signed else 1, -2 if signed else 2, 3]
    return np.array(lhs, np.int64).astype(dtype), np.array(rhs, np.int64).astype(dtype)


def _truncated(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """C's quotient, exactly, with 0 for a zero divisor and MIN / -1 wrapped to MIN."""
    info = np.iinfo(lhs.dtype)
    span = info.max - info.min + 1
    values = []
    for a, b in zip(lhs.tolist(), rhs.tolist(), strict=True):
        exact = 0 if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        values.append((exact - info.min) % span + info.min)  # wrapped to the dtype's range
    return np.array(values, lhs.dtype)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_integer_division_truncates_and_gives_zero_for_a_zero_divisor(ctx, dtype):
    lhs, rhs = _pairs(dtype)
    a = mx.nd.array(lhs, ctx=ctx, dtype=dtype)
    b = mx.nd.array(rhs, ctx=ctx, dtype=dtype)
    expected = _truncated(lhs, rhs)
    np.testing.assert_array_equal((a / b).asnumpy(), expected)
    np.testing.assert_array_equal(mx.nd.broadcast_div(a, b).asnumpy(), expected)
    np.testing.assert_array_equal((a / 0).asnumpy(), np.zeros_like(lhs))
    np.testing.assert_array_equal((0 / b).asnumpy(), np.zeros_like(lhs))


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_integer_modulo_by_zero_or_minus_one_is_zero(ctx, dtype):
    lhs, rhs = _pairs(dtype)
    a = mx.nd.array(lhs, ctx=ctx, dtype=dtype)
    b = mx.nd.array(rhs, ctx=ctx, dtype=dtype)
    with np.errstate(all="ignore"):
        expected = np.mod(lhs, rhs)  # NumPy's: 0 for a zero divisor, the divisor's sign otherwise
    np.testing.assert_array_equal((a % b).asnumpy(), expected)
    np.testing.assert_array_equal((a % 0).asnumpy(), np.zeros_like(lhs))
    np.testing.assert_array_equal((5 % mx.nd.zeros((3,), ctx=ctx, dtype=dtype)).asnumpy(), np.zeros(3, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_modulo_by_zero_is_zero_as_in_mxnet(ctx, dtype):
    a = mx.nd.array([5.0, 7.0, -9.0], ctx=ctx, dtype=dtype)
    b = mx.nd.array([0.0, 2.0, 0.0], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal((a % b).asnumpy(), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(mx.nd.broadcast_mod(a, b.reshape((1, 3))).asnumpy(), [[0.0, 1.0, 0.0]])
    np.testing.assert_array_equal((a % 0).asnumpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal((4 % b).asnumpy(), [0.0, 0.0, 0.0])


def test_int64_division_is_exact_beyond_float64_precision(ctx):
    values = np.array([2**60 + 1, -(2**60) - 3], np.int64)
    quotient = (mx.nd.array(values, ctx=ctx, dtype="int64") / 3).asnumpy()
    np.testing.assert_array_equal(quotient, [(2**60 + 1) // 3, -((2**60 + 3) // 3)])


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_integer_to_a_negative_scalar_power_truncates_toward_zero(ctx, dtype):
    # 1 / x ** n toward zero, as MXNet 1.9.1 gives; an unsigned array took -3 cast to its dtype
    # (253 for uint8) and gave 3 ** 253 wrapped (19)
    x = mx.nd.array([1, 2, 3, 5], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal((x**-3).asnumpy(), np.array([1, 0, 0, 0], dtype))
    np.testing.assert_array_equal(mx.nd.power(x, -1).asnumpy(), np.array([1, 0, 0, 0], dtype))
    np.testing.assert_array_equal((x**-0.5).asnumpy(), np.ones(4, dtype))  # -0.5 truncates to 0


@pytest.mark.parametrize("scalar", [float("inf"), float("nan")])
def test_a_non_finite_scalar_with_an_integer_array_is_refused_at_the_call(scalar, ctx):
    # MXNet 1.9.1 computes with garbage (INT_MIN); before, the refusal came only at the wait
    x = mx.nd.array([1, 2], ctx=ctx, dtype="int32")
    with pytest.raises(OperatorError, match=f"_plus_scalar: the scalar {scalar} has no value in an array of int32"):
        x + scalar
    with pytest.raises(OperatorError, match=f"_rminus_scalar: the scalar {scalar} has no value in an array of int32"):
        scalar - x
    with pytest.raises(OperatorError, match="_greater_scalar: .* in an array of bool"):
        mx.nd.greater(mx.nd.array([1, 0], ctx=ctx, dtype="bool"), scalar)
    assert not np.isfinite((mx.nd.array([1.0], ctx=ctx) * scalar).asnumpy()).any()  # float arrays take it


@pytest.mark.parametrize("scalar", [10**20, 1e30, -1e19])
def test_a_scalar_past_int64_with_an_integer_array_is_refused_at_the_call(scalar, ctx):
    # the kernel's cast to int64 raised Python's OverflowError inside an EngineError at the wait (MXNet
    # 1.9.1 computes with INT_MIN); a scalar within int64 still wraps to the array's width
    x = mx.nd.array([1, 2], ctx=ctx, dtype="int32")
    with pytest.raises(OperatorError, match=r"_plus_scalar: the scalar .* has no value in an array of int32"):
        _ = x + scalar
    with pytest.raises(OperatorError, match=r"_greater_scalar: the scalar .* within int64's range"):
        mx.nd.greater(x, scalar)
    with pytest.raises(OperatorError, match=r"__setitem__: cannot store .* in an array of dtype int32"):
        x[0] = scalar
    np.testing.assert_array_equal((x + 2**32).asnumpy(), [1, 2])


def test_a_scalar_past_float16s_range_is_inf_without_a_warning(ctx):
    # the scalar's cast to float16 warned (NumPy's RuntimeWarning reached the user; MXNet is silent)
    x = mx.nd.array([1, 2], ctx=ctx, dtype="float16")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = (x + 1e10).asnumpy()
        x[0] = 1e10
        stored = x.asnumpy()
    assert np.isinf(total).all() and np.isinf(stored[0]) and stored[1] == 2


# -- logical operators: MXNet 1.9.1's values (any value but 0 is true, NaN included) ----------------
LOGICAL_LHS = [0, 1, np.nan, -2]
LOGICAL_RHS = [1, 0, 0, 3]
LOGICAL_VALUES = {"and": [0, 0, 0, 1], "or": [1, 1, 1, 1], "xor": [1, 1, 1, 0]}
LOGICAL_WITH_ZERO = {"and": [0, 0, 0, 0], "or": [0, 1, 1, 1], "xor": [0, 1, 1, 1]}


@pytest.mark.parametrize("kind", sorted(LOGICAL_VALUES))
def test_logical_operators_give_mxnets_values(kind, ctx):
    lhs, rhs = mx.nd.array(LOGICAL_LHS, ctx=ctx), mx.nd.array(LOGICAL_RHS, ctx=ctx)
    expected = np.array(LOGICAL_VALUES[kind], dtype=np.float32)
    assert_almost_equal(getattr(mx.nd, f"_logical_{kind}")(lhs, rhs).asnumpy(), expected)
    assert_almost_equal(getattr(mx.nd, f"broadcast_logical_{kind}")(lhs, rhs).asnumpy(), expected)
    with_zero = getattr(mx.nd, f"_logical_{kind}_scalar")(lhs, scalar=0)
    assert_almost_equal(with_zero.asnumpy(), np.array(LOGICAL_WITH_ZERO[kind], dtype=np.float32))


def test_broadcast_logical_and_broadcasts_and_keeps_int32():
    lhs = mx.nd.array([[0, 1, 2, -3]], dtype="int32")
    rhs = mx.nd.array([[1], [0]], dtype="int32")
    out = mx.nd.broadcast_logical_and(lhs, rhs)
    assert out.dtype == np.int32
    assert_almost_equal(out.asnumpy(), np.array([[0, 1, 1, 1], [0, 0, 0, 0]], dtype=np.int32))


def test_logical_operators_pass_no_gradient():
    x = mx.nd.array([0.5, 0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.broadcast_logical_or(x, mx.nd.array([1, 1]))
    y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.zeros(2, dtype=np.float32))


@pytest.mark.parametrize(
    "expression, expected",
    [
        (lambda m: m + 2, [3, 2, 3]),
        (lambda m: m - 1, [0, -1, 0]),  # NumPy refuses to subtract bools: it ran late as an engine error
        (lambda m: 3 - m, [2, 3, 2]),
        (lambda m: m * 2.5, [2, 0, 2]),  # the scalar counts as int64 too: 2.5 -> 2
        (lambda m: m**2, [1, 0, 1]),
        (lambda m: m > 0.5, [1, 0, 1]),
        (lambda m: m == True, [1, 0, 1]),  # noqa: E712 - MXNet's elementwise comparison
    ],
)
def test_bool_array_and_scalar_count_as_int64_as_in_mxnet(ctx, expression, expected):
    result = expression(mx.nd.array([True, False, True], ctx=ctx, dtype="bool"))
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result.asnumpy(), expected)


def test_bool_symbol_and_scalar_infer_int64():
    x = mx.sym.Variable("x")
    _, out_types, _ = (x - 1).infer_type(x="bool")
    assert out_types == [np.int64]


@pytest.mark.parametrize("op", ["-", "+", "*", "/", "==", "broadcast_add", "logical_and", "maximum"])
def test_binary_operators_refuse_bool_arrays_at_the_call_as_in_mxnet(op) -> None:
    # MXNet 1.9.1: "Operator ... does not support boolean type"; before, mask - mask failed only at the
    # wait and mask / mask quietly gave bools
    mask = mx.nd.array([1, 0, 1], dtype="bool")
    call = {
        "-": lambda: mask - mask,
        "+": lambda: mask + mask,
        "*": lambda: mask * mask,
        "/": lambda: mask / mask,
        "==": lambda: mask == mask,
        "broadcast_add": lambda: mx.nd.broadcast_add(mask, mask.reshape((1, 3))),
        "logical_and": lambda: mx.nd.logical_and(mask, mask),
        "maximum": lambda: mx.nd.maximum(mask, mask),
    }[op]
    with pytest.raises(OperatorError, match=r"input 'lhs' is a bool array, which binary operators do not take"):
        call()
    with pytest.raises(OperatorError, match="is a bool array"):
        mx.sym.broadcast_add(mx.sym.var("a", dtype="bool"), mx.sym.var("b")).infer_type(a="bool")


# -- out= one of the inputs: the CPU kernels read every input value they need before writing ------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_modulo_into_its_own_divisor_is_still_zero_for_a_zero_divisor(ctx, dtype):
    y = mx.nd.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0], ctx=ctx, dtype=dtype)
    y %= y  # 0 % 0 is 0 in MXNet, like every modulo by zero
    np.testing.assert_array_equal(y.asnumpy(), np.zeros(6, dtype))
    a, b = mx.nd.array([1.0, 3.0, 5.0], ctx=ctx, dtype=dtype), mx.nd.array([0.0, 2.0, 0.0], ctx=ctx, dtype=dtype)
    mx.nd.broadcast_mod(a, b, out=b)
    np.testing.assert_array_equal(b.asnumpy(), np.array([0.0, 1.0, 0.0], dtype))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_power_into_one_of_its_inputs_truncates_negative_exponents(ctx, dtype):
    base = [-2, -1, 0, 1, 2, 3]
    y = mx.nd.array(base, ctx=ctx, dtype=dtype)
    mx.nd._power(y, y, out=y)
    np.testing.assert_array_equal(y.asnumpy(), np.array([0, -1, 1, 1, 4, 27], dtype))
    x = mx.nd.array(base, ctx=ctx, dtype=dtype)
    e = mx.nd.array([-2, -1, -1, -1, -3, 2], ctx=ctx, dtype=dtype)
    mx.nd.broadcast_power(x, e, out=e)
    np.testing.assert_array_equal(e.asnumpy(), np.array([0, -1, 0, 1, 0, 9], dtype))

"""Unary elementwise operators: forward vs NumPy, gradients vs central differences, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops._special import erf
from lazynd.testing import assert_almost_equal, check_consistency, check_forward, check_gradient

_gamma = np.vectorize(math.gamma)
_lgamma = np.vectorize(math.lgamma)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# name -> (NumPy reference, (low, high) of the test inputs)
REFERENCES = {
    "abs": (np.abs, (-2, 2)),
    "sign": (np.sign, (-2, 2)),
    "round": (_round_half_away, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "rint": (np.rint, (-3, 3)),
    "fix": (np.trunc, (-3, 3)),
    "square": (np.square, (-2, 2)),
    "sqrt": (np.sqrt, (0.1, 4)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)),
    "exp": (np.exp, (-2, 2)),
    "log": (np.log, (0.1, 4)),
    "log10": (np.log10, (0.1, 4)),
    "log2": (np.log2, (0.1, 4)),
    "log1p": (np.log1p, (-0.5, 3)),
    "expm1": (np.expm1, (-2, 2)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1.2, 1.2)),
    "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)),
    "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-2, 2)),
    "cosh": (np.cosh, (-2, 2)),
    "tanh": (np.tanh, (-2, 2)),
    "arcsinh": (np.arcsinh, (-3, 3)),
    "arccosh": (np.arccosh, (1.1, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)),
    "degrees": (np.degrees, (-3, 3)),
    "radians": (np.radians, (-200, 200)),
    "negative": (np.negative, (-2, 2)),
    "identity": (lambda x: x, (-2, 2)),
    "relu": (lambda x: np.maximum(x, 0), (-2, 2)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-4, 4)),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-4, 4)),
    "gamma": (_gamma, (-2.5, 5)),
    "gammaln": (_lgamma, (-2.5, 5)),
}
# rounding steps and sign have zero or undefined derivatives; their rules are not checked numerically
NOT_DIFFERENTIABLE = {"round", "ceil", "floor", "rint", "fix", "sign"}


def _inputs(name: str, shape=(3, 5), seed: int = 0) -> np.ndarray:
    low, high = REFERENCES[name][1]
    x = np.random.default_rng(seed).uniform(low, high, size=shape)
    if name in ("gamma", "gammaln"):
        x[np.abs(x - np.round(x)) < 0.1] += 0.3  # stay off the poles at 0, -1, -2
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_unary_forward_matches_numpy(name, dtype, ctx):
    x = _inputs(name).astype(dtype)
    reference = REFERENCES[name][0]
    check_forward(
        name,
        [x],
        {},
        lambda v: reference(v.astype(np.float64)).astype(dtype),
        ctx=ctx,
        rtol=1e-4 if dtype == "float32" else 1e-10,
        atol=1e-5,
    )


@pytest.mark.parametrize("name", sorted(set(REFERENCES) - NOT_DIFFERENTIABLE))
def test_unary_gradient_matches_numeric(name, ctx):
    check_gradient(name, [_inputs(name, shape=(2, 3), seed=1)], ctx=ctx)


@pytest.mark.parametrize("name", ["exp", "sigmoid", "relu", "gamma", "floor"])
def test_unary_float16_is_computed_at_half_precision(name, ctx):
    x = _inputs(name).astype(np.float16)
    reference = REFERENCES[name][0]
    check_forward(name, [x], {}, lambda v: reference(v.astype(np.float64)), ctx=ctx, rtol=2e-3, atol=2e-3)


def test_round_takes_halves_away_from_zero():
    out = mx.nd.round(mx.nd.array([0.5, -0.5, 1.5, 2.5, -2.5]))
    assert_almost_equal(out, np.array([1, -1, 2, 3, -3], dtype=np.float32))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_round_of_the_float_just_below_a_half_is_zero(dtype):
    # |x| + 0.5 rounds up to 1 at the dtype's precision; MXNet's C round gives 0
    below_half = np.nextafter(np.array(0.5, dtype=dtype), np.array(0, dtype=dtype))
    below_two_and_a_half = np.nextafter(np.array(2.5, dtype=dtype), np.array(0, dtype=dtype))
    x = np.array([below_half, -below_half, below_two_and_a_half], dtype=dtype)
    out = mx.nd.round(mx.nd.array(x, dtype=dtype)).asnumpy()
    np.testing.assert_array_equal(out, np.array([0, -0.0, 2], dtype=dtype))
    assert np.signbit(out[1])
    assert mx.nd.array(x, dtype=dtype).round().asnumpy().tolist() == out.tolist()


@pytest.mark.parametrize("name", ["abs", "negative", "square", "relu", "floor", "round", "sign"])
def test_integer_inputs_stay_integers(name, ctx):
    x = np.array([[-3, 0, 2], [5, -1, 7]], dtype=np.int32)
    out = check_forward(name, [x], {}, lambda v: REFERENCES[name][0](v).astype(np.int32), ctx=ctx)
    assert out[0].dtype == np.int32


def test_float_functions_of_integers_truncate_like_mxnet():
    assert_almost_equal(mx.nd.sqrt(mx.nd.array([4, 10], dtype="int32")), np.array([2, 3], dtype=np.int32))


@pytest.mark.parametrize("name", ["sqrt", "exp", "sigmoid", "log1p", "gamma"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_float_functions_of_integers_truncate_like_mxnet_on_every_context(name, dtype, ctx):
    # MXNet 1.9.1 computes these in floating point and stores the result truncated, on either device
    values = np.array([[1, 4, 5], [2, 3, 5]], dtype=dtype)
    out = getattr(mx.nd, name)(mx.nd.array(values, ctx=ctx, dtype=dtype)).asnumpy()
    assert out.dtype == np.dtype(dtype)
    expected = np.trunc(REFERENCES[name][0](values.astype(np.float64)))
    np.testing.assert_array_equal(out, expected.astype(dtype))


def test_gamma_at_integers_is_factorial():
    out = mx.nd.gamma(mx.nd.array([1, 2, 3, 4, 5, 6], dtype="float64"))
    assert_almost_equal(out, np.array([1, 1, 2, 6, 24, 120], dtype=np.float64), rtol=1e-12)


def test_gamma_of_integers_is_the_exact_factorial():
    out = mx.nd.gamma(mx.nd.array(list(range(1, 13)), dtype="int32")).asnumpy()
    # values from MXNet 1.9.1 (C's tgamma); the approximation gave 23.999... -> 23 for gamma(5)
    np.testing.assert_array_equal(out, [1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800, 39916800])


def test_gammaln_is_log_gamma_for_large_arguments():
    x = np.array([20.5, 100.0, 171.3])
    assert_almost_equal(mx.nd.gammaln(mx.nd.array(x, dtype="float64")), _lgamma(x), rtol=1e-12)


@pytest.mark.parametrize("sigma", [1.0, 2.0, 0.5])
def test_smooth_l1_forward_and_gradient(sigma, ctx):
    x = np.linspace(-3, 3, 14) + 0.013
    s2 = sigma * sigma

    def reference(v):
        return np.where(np.abs(v) < 1 / s2, 0.5 * s2 * v * v, np.abs(v) - 0.5 / s2)

    check_forward("smooth_l1", [x.astype(np.float32)], {"scalar": sigma}, reference, ctx=ctx)
    check_gradient("smooth_l1", [x], {"scalar": sigma}, ctx=ctx)


def test_smooth_l1_with_sigma_zero_is_its_quadratic_part_everywhere(ctx):
    # 1 / sigma**2 is infinite: 0.5 * 0 * x**2 = 0 and a zero slope, as MXNet 1.9.1 and our GPU kernels
    # compute it; the host's Python float division raised ZeroDivisionError inside the kernel
    x = mx.nd.array([-2.0, 0.1, 3.0, -0.0], ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.smooth_l1(x, scalar=0.0)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [0, 0, 0, 0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0, 0])


def test_smooth_l1_of_integers_is_the_exact_value_truncated(ctx):
    # |-128| and the squares wrapped in int8 (smooth_l1(-128) gave 0; MXNet 1.9.1 gives 127 there), and
    # the GPU kernels, float-only, refused integers at the wait
    x = mx.nd.array([-128, 100, 1, 0, 127], ctx=ctx, dtype="int8")
    out = mx.nd.smooth_l1(x, scalar=1.0)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out.asnumpy(), [127, 99, 0, 0, 126])
    small = mx.nd.array([200, 1], ctx=ctx, dtype="uint8")
    np.testing.assert_array_equal(mx.nd.smooth_l1(small, scalar=0.5).asnumpy(), [198, 0])


def test_clip_forward_gradient_and_string_params(ctx):
    x = np.linspace(-3, 3, 12) + 0.01
    check_forward("clip", [x.astype(np.float32)], {"a_min": "-1", "a_max": "2"}, lambda v: np.clip(v, -1, 2), ctx=ctx)
    check_gradient("clip", [x], {"a_min": -1.0, "a_max": 2.0}, ctx=ctx)


@pytest.mark.parametrize(
    ("dtype", "low", "high", "expected"), [("uint8", -1, 2, [0, 1, 2, 2]), ("int8", -2.5, 300, [0, 1, 2, 3])]
)
def test_clip_bounds_beyond_an_integer_dtype_hold_to_its_range(dtype, low, high, expected, ctx):
    # a bound no element can pass (MXNet 1.9.1 gives these values; an OverflowError from inside before)
    x = mx.nd.array([0, 1, 2, 3], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal(mx.nd.clip(x, low, high).asnumpy(), np.array(expected, dtype))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_clip_infinite_bounds_of_integers_clip_nothing(dtype, ctx):
    # as in MXNet 1.9.1 (an OverflowError from inside the kernel before)
    x = mx.nd.array([1, 2, 3, 6], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal(mx.nd.clip(x, -np.inf, 3).asnumpy(), np.array([1, 2, 3, 3], dtype))
    np.testing.assert_array_equal(mx.nd.clip(x, 2, np.inf).asnumpy(), np.array([2, 2, 3, 6], dtype))


@pytest.mark.parametrize("bounds", [(np.nan, 4.0), (2.0, np.nan)])
def test_clip_refuses_a_nan_bound_by_name(bounds):
    # MXNet 1.9.1 ignores it on floats and reads it as INT_MIN on integers; lazynd gave NaNs
    name = "a_min" if np.isnan(bounds[0]) else "a_max"
    with pytest.raises(mx.OperatorError, match=f"clip: {name}=nan is not a bound"):
        mx.nd.clip(mx.nd.ones((2,)), *bounds)


def test_clip_rejects_inverted_bounds():
    with pytest.raises(mx.OperatorError, match="a_min=3.0 is greater than a_max=1.0"):
        mx.nd.clip(mx.nd.ones((2,)), a_min=3, a_max=1)


def test_clip_requires_its_bounds():
    with pytest.raises(mx.OperatorError, match="a_max"):
        mx.nd.clip(mx.nd.ones((2,)), a_min=0)


def test_unary_writes_into_out():
    x = mx.nd.array([1.0, 4.0])
    out = mx.nd.zeros((2,))
    result = mx.nd.sqrt(x, out=out)
    assert result is out
    assert_almost_equal(out, np.array([1.0, 2.0], dtype=np.float32))


# MXNet 1.9.1 refuses a bool array in every unary operator but the copy ("Unknown type enum 7");
# before, negative, sign and relu failed only at the wait and the others quietly computed in bools
@pytest.mark.parametrize("name", [n for n in mx.ops.elemwise_unary.UNARY if n != "identity"])
def test_unary_operators_refuse_bool_arrays_at_the_call_as_in_mxnet(name, ctx):
    mask = mx.nd.array([1, 0, 1], dtype="bool", ctx=ctx)
    with pytest.raises(mx.OperatorError, match=rf"{name}: input 'data' is a bool array, which unary operators"):
        getattr(mx.nd, name)(mask)


def test_negating_a_bool_array_gives_int64_as_in_mxnet(ctx):
    # MXNet 1.9.1 computes -x as x * -1: [-1, 0, -1] in int64 for a mask; copies keep bool
    mask = mx.nd.array([True, False, True], dtype="bool", ctx=ctx)
    negated = -mask
    assert negated.dtype == np.int64 and negated.asnumpy().tolist() == [-1, 0, -1]
    assert mx.nd.identity(mask).asnumpy().tolist() == [True, False, True] and mask.copy().dtype == np.bool_
    with pytest.raises(mx.OperatorError, match="abs: input 'data' is a bool array"):
        abs(mask)
    with pytest.raises(mx.OperatorError, match="is a bool array"):
        mx.sym.exp(mx.sym.var("m")).infer_type(m="bool")


def test_negation_keeps_signed_zeros_and_integer_wrapping(ctx):
    x = mx.nd.array([0.0, -1.5, 2.0], ctx=ctx)
    assert np.signbit((-x).asnumpy()).tolist() == [True, False, True]
    assert (-mx.nd.array([1, 0, 255], dtype="uint8", ctx=ctx)).asnumpy().tolist() == [255, 0, 1]


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "gamma", "log1p", "round"])
def test_unary_cpu_and_gpu_agree(name):
    results = check_consistency(name, [_inputs(name).astype(np.float32)], rtol=1e-4, atol=1e-5)
    assert results[0][0].shape == (3, 5)


def test_cast_gradient_has_the_input_dtype_imperatively():
    x = mx.nd.array(np.array([[0.5, -1.25], [2.0, 3.5]]), dtype="float16")
    y = mx.nd.Cast(x, dtype="float32")
    head = mx.nd.array(np.array([[1.5, -2.0], [0.25, 4.0]]), dtype="float32")
    op = mx.ops.registry.get("Cast")
    (grad,) = op.gradient(mx.nd, op.parse({"dtype": "float32"}), [x], [y], [head])
    assert y.dtype == np.float32
    assert grad.dtype == np.float16
    np.testing.assert_array_equal(grad.asnumpy(), head.asnumpy().astype(np.float16))


def test_cast_gradient_matches_numeric_in_float64():
    rng = np.random.default_rng(3)
    (grad,) = check_gradient("Cast", [rng.standard_normal((3, 4))], {"dtype": "float64"})
    assert grad.dtype == np.float64


def test_cast_gradient_has_the_input_dtype_in_a_graph():
    import lazynd_sym as sym

    data = sym.Variable("x")
    out = sym.Cast(data, dtype="float32")
    exe = out.simple_bind(mx.cpu(), type_dict={"x": "float16"}, x=(2, 3))
    exe.arg_dict["x"][:] = np.arange(6, dtype=np.float16).reshape(2, 3)
    exe.forward(is_train=True)
    assert exe.outputs[0].dtype == np.float32
    head = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    exe.backward([mx.nd.array(head)])
    grad = exe.grad_dict["x"]
    assert grad.dtype == np.float16
    np.testing.assert_array_equal(grad.asnumpy(), head.astype(np.float16))


def test_rint_rounds_halves_down_as_mxnet(ctx):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6, 3.0], dtype=np.float32)
    out = mx.nd.rint(mx.nd.array(x, ctx=ctx)).asnumpy()
    np.testing.assert_array_equal(out, [-3, -2, -1, 0, 1, 2, 3, -3, 3])  # MXNet 1.9.1's values


@pytest.mark.parametrize(
    "op, params, expected",
    [
        ("rint", {}, [[1, 3, 2], [4, 0, 9]]),
        ("clip", {"a_min": 1, "a_max": 3}, [[1, 3, 2], [3, 1, 3]]),
    ],
)
def test_rint_and_clip_work_on_int32(op, params, expected, ctx):
    x = mx.nd.array([[1, 3, 2], [4, 0, 9]], ctx=ctx, dtype="int32")
    out = getattr(mx.nd, op)(x, **params)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), expected)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_casts_out_of_range_and_nan_into_integers_are_silent_as_in_mxnet():
    # values from MXNet 1.9.1; NumPy's "invalid value / overflow encountered in cast" warned
    cast = mx.nd.Cast(mx.nd.array([300.2, 1e6]), dtype="uint8").asnumpy()
    np.testing.assert_array_equal(cast, [44, 64])
    assert np.isinf(mx.nd.Cast(mx.nd.array([70000.0]), dtype="float16").asnumpy()[0])
    assert mx.nd.gamma(mx.nd.array([-1, 3], dtype="int32")).asnumpy()[1] == 2


def test_erf_matches_math_erf_to_the_last_bits():
    x = np.concatenate([np.linspace(-7, 7, 4001), [0.0, -1e-12, 2.5, np.inf, -np.inf]])
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(np, x), want, rtol=4e-15, atol=2e-15)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sign_of_nan_is_nan(dtype, ctx):
    x = mx.nd.array([np.nan, -2.0, 0.0, 3.0], ctx=ctx, dtype=dtype)
    np.testing.assert_array_equal(mx.nd.sign(x).asnumpy(), [np.nan, -1, 0, 1])


@pytest.mark.parametrize("name", ["gamma", "gammaln"])
def test_gamma_functions_of_infinity_are_infinite(name, ctx):
    x = mx.nd.array([np.inf, np.nan, 2.0], ctx=ctx, dtype="float64")
    out = getattr(mx.nd, name)(x).asnumpy()
    np.testing.assert_array_equal(out, [np.inf, np.nan, 1.0 if name == "gamma" else 0.0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_abs_of_negative_zero_is_positive_zero(dtype, ctx):
    out = mx.nd.abs(mx.nd.array([-0.0, -1.5, np.nan], ctx=ctx, dtype=dtype)).asnumpy()
    np.testing.assert_array_equal(out, [0.0, 1.5, np.nan])
    assert not np.signbit(out[0])

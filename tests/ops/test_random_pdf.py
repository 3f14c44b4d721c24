"""random_pdf_*: densities, log-densities and gradients against MXNet 1.9.1's; shapes refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import assert_almost_equal, check_gradient

PARAMS = {
    "uniform": {"low": [0.0, 0.5], "high": [1.0, 2.5]},
    "normal": {"mu": [0.0, 1.0], "sigma": [1.0, 2.0]},
    "gamma": {"alpha": [2.0, 3.0], "beta": [1.0, 0.5]},
    "exponential": {"lam": [1.0, 2.0]},
    "poisson": {"lam": [1.0, 2.0]},
    "negative_binomial": {"k": [3.0, 4.0], "p": [0.4, 0.6]},
    "generalized_negative_binomial": {"mu": [2.0, 3.0], "alpha": [0.5, 0.2]},
}
CONTINUOUS = [[0.2, 0.5, 0.9], [1.0, 2.0, 2.5]]
COUNTS = [[0, 1, 2], [1, 2, 3]]
DISCRETE = ("poisson", "negative_binomial", "generalized_negative_binomial")

# MXNet 1.9.1 on the samples above: (density, log-density, [gradient of the density's sum for the
# sample and each parameter])
MXNET = {
    "uniform": (
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.5],
        [-0.0, -0.0, -0.0, -0.6931472, -0.6931472, -0.6931472],
        [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [3.0, 0.75], [-3.0, -0.75]],
    ),
    "normal": (
        [0.3910427, 0.3520653, 0.2660853, 0.1994711, 0.1760327, 0.1505687],
        [-0.9389386, -1.043939, -1.323938, -1.612086, -1.737086, -1.893336],
        [
            [-0.07820854, -0.1760327, -0.2394767, 0.0, -0.04400817, -0.05646326],
            [0.4937179, 0.1004714],
            [-0.6900062, -0.1986847],
        ],
    ),
    "gamma": (
        [0.1637462, 0.3032653, 0.3659127, 0.03790817, 0.09196986, 0.1119159],
        [-1.809438, -1.193147, -1.00536, -3.272589, -2.386294, -2.190007],
        [
            [0.6549847, 0.3032653, 0.04065699, 0.05686225, 0.04598493, 0.03357478],
            [-0.8644469, -0.2244263],
            [1.152145, 0.9491261],
        ],
    ),
    "exponential": (
        [0.8187308, 0.6065307, 0.4065697, 0.2706706, 0.03663128, 0.01347589],
        [-0.2, -0.5, -0.9, -1.306853, -3.306853, -4.306853],
        [[-0.8187308, -0.6065307, -0.4065697, -0.5413411, -0.07326256, -0.02695179], [0.998907, -0.217234]],
    ),
    "poisson": (
        [0.3678795, 0.3678795, 0.1839397, 0.2706706, 0.2706706, 0.180447],
        [-1.0, -1.0, -1.693147, -1.306853, -1.306853, -1.712318],
        [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.1839397, -0.04511176]],
    ),
    "negative_binomial": (
        [0.06400001, 0.1152, 0.13824, 0.20736, 0.20736, 0.165888],
        [-2.748872, -2.161085, -1.978764, -1.573299, -1.573299, -1.796443],
        [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.1718273, -0.04913973], [1.728, 1.07136]],
    ),
    "generalized_negative_binomial": (
        [0.25, 0.25, 0.1875, 0.1788139, 0.2011657, 0.17602],
        [-1.386294, -1.386294, -1.673976, -1.721409, -1.603626, -1.737158],
        [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.1875, -0.1164153], [0.03115472, -0.1934328]],
    ),
}


def _call(name, ctx, is_log=False, record=False):
    sample = COUNTS if name in DISCRETE else CONTINUOUS
    args = [mx.nd.array(sample, ctx=ctx)] + [mx.nd.array(v, ctx=ctx) for v in PARAMS[name].values()]
    fn = getattr(mx.nd, f"random_pdf_{name}")
    if not record:
        return fn(*args, is_log=is_log), args
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = fn(*args, is_log=is_log)
    y.backward()
    return y, args


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_density_and_log_density_match_mxnet(ctx, name):
    density, log_density, _ = MXNET[name]
    y, _ = _call(name, ctx)
    assert y.shape == (2, 3) and y.dtype == np.float32
    assert_almost_equal(y.asnumpy().ravel(), np.array(density), rtol=1e-5, atol=1e-6)
    assert_almost_equal(_call(name, ctx, is_log=True)[0].asnumpy().ravel(), np.array(log_density), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_gradients_match_mxnet(ctx, name):
    _, _, grads = MXNET[name]
    _, args = _call(name, ctx, record=True)
    for arg, expected in zip(args, grads, strict=True):
        assert_almost_equal(arg.grad.asnumpy().ravel(), np.array(expected), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "inputs", "wrt"),
    [
        ("normal", [np.random.default_rng(0).standard_normal((2, 3)), [0.1, -0.2], [0.8, 1.5]], None),
        ("gamma", [[[0.5, 1.5], [2.0, 0.7]], [2.0, 3.5], [1.5, 0.7]], None),
        ("exponential", [[[0.5, 1.5], [2.0, 0.7]], [1.2, 0.4]], None),
        ("uniform", [[[0.5, 0.7], [1.0, 1.5]], [0.1, 0.4], [1.2, 1.9]], [1, 2]),
        ("poisson", [[[0.0, 1.0], [2.0, 3.0]], [1.2, 2.5]], [1]),
        ("negative_binomial", [[[0.0, 1.0], [2.0, 3.0]], [2.5, 4.0], [0.3, 0.6]], [1, 2]),
        ("generalized_negative_binomial", [[[0.0, 1.0], [2.0, 3.0]], [2.0, 1.5], [0.5, 0.3]], [1, 2]),
        ("dirichlet", [[[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]], [1.5, 2.0, 3.0]], None),
    ],
)
@pytest.mark.parametrize("is_log", [False, True])
def test_gradients_agree_with_finite_differences(name, inputs, wrt, is_log):
    arrays = [np.asarray(v, dtype=np.float64) for v in inputs]
    if name == "dirichlet":
        arrays[1] = arrays[1].reshape(1, 3)
        arrays[0] = arrays[0].reshape(1, 2, 3)
    check_gradient(f"random_pdf_{name}", arrays, {"is_log": is_log}, wrt=wrt)


def test_dirichlet_matches_mxnet(ctx):
    x = mx.nd.array([[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], [[0.3, 0.3, 0.4], [0.5, 0.25, 0.25]]], ctx=ctx)
    alpha = mx.nd.array([[1.0, 2.0, 3.0], [0.5, 1.0, 2.0]], ctx=ctx)
    x.attach_grad()
    alpha.attach_grad()
    with mx.autograd.record():
        y = mx.nd.random_pdf_dirichlet(x, alpha)
    y.backward()
    # MXNet 1.9.1's values
    assert_almost_equal(y.asnumpy(), np.array([[4.5, 3.84], [1.3693064, 0.6629126]]), rtol=1e-5)
    log_y = mx.nd.random_pdf_dirichlet(x, alpha, is_log=True).asnumpy()
    assert_almost_equal(log_y, np.array([[1.5040774, 1.3454723], [0.3143044, -0.4111121]]), rtol=1e-5)
    expected_alpha_grad = [[2.9586043, -3.5568023, 2.5569682], [4.1240368, 0.8472853, -0.7910089]]
    assert_almost_equal(alpha.grad.asnumpy(), np.array(expected_alpha_grad), rtol=1e-4)
    assert_almost_equal(x.grad.asnumpy()[0, 0], np.array([0.0, 15.0, 18.0]), rtol=1e-5)


def test_parameters_spread_over_trailing_sample_axes():
    sample = np.random.default_rng(1).standard_normal((2, 3, 4))
    y = mx.nd.random_pdf_normal(mx.nd.array(sample), mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 2.0]))
    mu, sigma = np.array([0.0, 1.0])[:, None, None], np.array([1.0, 2.0])[:, None, None]
    expected = np.exp(-0.5 * ((sample - mu) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
    assert_almost_equal(y.asnumpy(), expected, rtol=1e-5)


def test_outside_the_support_the_density_is_zero():
    # MXNet 1.9.1 gives 1 for the first (its formula), e for the second, nan for the third
    assert mx.nd.random_pdf_uniform(
        mx.nd.array([[2.0, 0.5]]), mx.nd.array([0.0]), mx.nd.array([1.0])
    ).asnumpy().tolist() == [[0.0, 1.0]]
    assert mx.nd.random_pdf_exponential(mx.nd.array([[-1.0]]), mx.nd.array([1.0])).asnumpy().tolist() == [[0.0]]
    log_gamma = mx.nd.random_pdf_gamma(mx.nd.array([[-1.0]]), mx.nd.array([1.0]), mx.nd.array([1.0]), is_log=True)
    assert log_gamma.asnumpy().tolist() == [[-np.inf]]
    assert mx.nd.random_pdf_poisson(mx.nd.array([[-1.0]]), mx.nd.array([1.0])).asnumpy().tolist() == [[0.0]]


def test_in_a_bound_executor_with_gradients():
    net = sym.random_pdf_gamma(sym.Variable("x"), sym.Variable("alpha"), sym.Variable("beta"))
    assert net.list_arguments() == ["x", "alpha", "beta"]
    _, out_shapes, _ = net.infer_shape(x=(2, 3), alpha=(2,), beta=(2,))
    assert out_shapes == [(2, 3)]
    args = {"x": mx.nd.array(CONTINUOUS), "alpha": mx.nd.array([2.0, 3.0]), "beta": mx.nd.array([1.0, 0.5])}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = net.bind(mx.cpu(), args=args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2, 3)))
    density, _, expected = MXNET["gamma"]
    assert_almost_equal(exe.outputs[0].asnumpy().ravel(), np.array(density), rtol=1e-5)
    for key, values in zip(("x", "alpha", "beta"), expected, strict=True):
        assert_almost_equal(grads[key].asnumpy().ravel(), np.array(values), rtol=1e-4, atol=1e-6)


def test_parameters_of_different_shapes_are_refused():
    with pytest.raises(ShapeError, match=r"random_pdf_normal: shape of 'sigma' is \(3,\), expected \(2,\)"):
        mx.nd.random_pdf_normal(mx.nd.ones((2, 3)), mx.nd.ones((2,)), mx.nd.ones((3,)))


def test_a_sample_not_extending_the_parameters_shape_is_refused():
    with pytest.raises(ShapeError, match=r"random_pdf_normal: shape of 'sample' is \(2, 3\), expected P \+ M"):
        mx.nd.random_pdf_normal(mx.nd.ones((2, 3)), mx.nd.ones((3,)), mx.nd.ones((3,)))
    with pytest.raises(
        ShapeError, match=r"random_pdf_dirichlet: shape of 'sample' is \(2, 4\), expected P \+ M \+ \(K,\)"
    ):
        mx.nd.random_pdf_dirichlet(mx.nd.ones((2, 4)), mx.nd.ones((3,)))


def test_integer_samples_are_refused():
    with pytest.raises(OperatorError, match=r"random_pdf_poisson: input 'sample' has dtype int32"):
        mx.nd.random_pdf_poisson(mx.nd.ones((2, 3), dtype="int32"), mx.nd.ones((2,)))

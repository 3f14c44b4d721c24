"""Pooling's MXNet 1.x modes against MXNet 1.9.1: ``count_include_pad`` for average pooling and
``pool_type='lp'`` with ``p_value`` (both were unknown parameters)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient


def pool_reference(x, kernel, stride, pad, mode, p=None, include_pad=True, full=False):
    """Naive pooling of (N, C, *spatial) data as MXNet 1.9.1's (checked against it to 1e-15 on the
    cases below): the output, and a function giving the data gradient for a head gradient."""
    spatial, everything = x.shape[2:], (slice(None), slice(None))
    outs = [(-(-(s + 2 * q - k) // st) if full else (s + 2 * q - k) // st) + 1 for s, k, st, q in
            zip(spatial, kernel, stride, pad, strict=True)]  # fmt: skip
    y = np.zeros(x.shape[:2] + tuple(outs))
    windows = {}
    for o in itertools.product(*[range(n) for n in outs]):
        low = [i * st - q for i, st, q in zip(o, stride, pad, strict=True)]
        real = tuple(slice(max(lo, 0), min(lo + k, s)) for lo, k, s in zip(low, kernel, spatial, strict=True))
        window = x[everything + real]
        if mode == "avg":
            # the padding counts, but not the full convention's extra rows past it
            padded = np.prod([min(lo + k, s + q) - lo for lo, k, s, q in zip(low, kernel, spatial, pad, strict=True)])
            count = padded if include_pad else window[0, 0].size
            y[everything + o] = window.sum(axis=tuple(range(2, x.ndim))) / count
        else:
            total = (window**p).sum(axis=tuple(range(2, x.ndim)))
            y[everything + o] = np.cbrt(total) if p == 3 else total ** (1.0 / p)
        windows[o] = (real, count if mode == "avg" else None)

    def gradient(head):
        dx = np.zeros_like(x)
        for o, (real, count) in windows.items():
            h = head[everything + o].reshape(head.shape[:2] + (1,) * len(spatial))
            if mode == "avg":
                dx[everything + real] += h / count
            else:
                dx[everything + real] += h * (x[everything + real] / y[everything + o].reshape(h.shape)) ** (p - 1)
        return dx

    return y, gradient


CASES = [
    ((1, 2, 4, 5), {"pool_type": "avg", "kernel": (3, 3), "pad": (1, 1), "count_include_pad": False}),
    (
        (1, 2, 5, 5),
        {
            "pool_type": "avg",
            "kernel": (3, 3),
            "pad": (1, 1),
            "stride": (2, 2),
            "pooling_convention": "full",
            "count_include_pad": False,
        },
    ),  # fmt: skip
    (
        (1, 2, 5, 5),
        {"pool_type": "avg", "kernel": (3, 3), "pad": (1, 1), "stride": (2, 2), "pooling_convention": "full"},
    ),
    ((2, 1, 6), {"pool_type": "avg", "kernel": (3,), "pad": (1,), "count_include_pad": False}),
    (
        (1, 1, 3, 4, 4),
        {"pool_type": "avg", "kernel": (2, 2, 2), "pad": (1, 1, 1), "stride": (2, 2, 2), "count_include_pad": False},
    ),  # fmt: skip
    ((1, 2, 4, 4), {"pool_type": "lp", "kernel": (2, 2), "p_value": 1}),
    ((1, 2, 4, 5), {"pool_type": "lp", "kernel": (2, 2), "p_value": 2, "pad": (1, 1)}),
    ((1, 2, 4, 4), {"pool_type": "lp", "kernel": (3, 3), "p_value": 3}),
    ((2, 1, 6), {"pool_type": "lp", "kernel": (3,), "stride": (2,), "p_value": 2}),
]


def _reference(shape, params, x):
    nd = len(shape) - 2
    return pool_reference(
        x,
        params["kernel"],
        params.get("stride", (1,) * nd),
        params.get("pad", (0,) * nd),
        params["pool_type"],
        params.get("p_value"),
        params.get("count_include_pad", True),
        params.get("pooling_convention") == "full",
    )


@pytest.mark.parametrize("shape,params", CASES)
def test_pooling_forward_and_gradient_match_mxnet(shape, params, ctx):
    rng = np.random.default_rng(0)
    x_np = rng.uniform(0.5, 2, shape)
    x = mx.nd.array(x_np, ctx=ctx, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, **params)
    head = rng.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(head, ctx=ctx, dtype="float64"))
    want, gradient = _reference(shape, params, x_np)
    np.testing.assert_allclose(y.asnumpy(), want, 1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), gradient(head), 1e-12, 1e-14)


def test_count_include_pad_false_matches_mxnets_values():
    # MXNet 1.9.1: Pooling(arange(16).reshape(1, 1, 4, 4) - 6, avg, kernel 3, pad 1, count_include_pad=False)
    x = mx.nd.array(np.arange(16).reshape(1, 1, 4, 4) - 6.0)
    y = mx.nd.Pooling(x, pool_type="avg", kernel=(3, 3), pad=(1, 1), count_include_pad=False)
    np.testing.assert_allclose(y.asnumpy().ravel()[:5], [-3.5, -3, -2, -1.5, -1.5])
    assert mx.nd.Pooling(x, pool_type="avg", kernel=(3, 3), pad=(1, 1)).asnumpy()[0, 0, 0, 0] == pytest.approx(-14 / 9)


def test_lp_pooling_matches_mxnets_values():
    # MXNet 1.9.1: p = 1 is the plain (signed) sum, p = 3 the signed cube root of the sum of cubes
    x = mx.nd.array(np.arange(16).reshape(1, 1, 4, 4) - 6.0)
    np.testing.assert_allclose(
        mx.nd.Pooling(x, pool_type="lp", kernel=(2, 2), p_value=1).asnumpy().ravel()[:3], [-14, -10, -6]
    )
    lp3 = mx.nd.Pooling(x, pool_type="lp", kernel=(2, 2), p_value=3).asnumpy().ravel()[:3]
    np.testing.assert_allclose(lp3, [-7.0472984, -5.748897, -4.481405], 1e-6)
    assert mx.nd.Pooling(x, pool_type="lp", global_pool=True, p_value=2).asnumpy().item() == pytest.approx(
        19.39072, 1e-6
    )


def test_count_include_pad_false_with_channels_last_layout():
    rng = np.random.default_rng(3)
    x_np = rng.uniform(0.5, 2, (1, 4, 5, 2))
    params = {"pool_type": "avg", "kernel": (3, 3), "pad": (1, 1), "count_include_pad": False}
    y = mx.nd.Pooling(mx.nd.array(x_np, dtype="float64"), layout="NHWC", **params)
    want, _ = pool_reference(x_np.transpose(0, 3, 1, 2), (3, 3), (1, 1), (1, 1), "avg", include_pad=False)
    np.testing.assert_allclose(y.asnumpy(), want.transpose(0, 2, 3, 1), 1e-12)


@pytest.mark.parametrize("shape,params", [CASES[0], CASES[1], CASES[6], CASES[7]])
def test_pooling_modes_numerical_gradient(shape, params):
    check_gradient("Pooling", [np.random.default_rng(4).uniform(0.5, 2, shape)], params, rtol=1e-4, atol=1e-6)


def test_pooling_modes_run_through_an_executor():
    net = sym.Pooling(sym.Variable("x"), pool_type="lp", p_value=2, kernel=(2, 2), stride=(2, 2))
    ex = net.simple_bind(mx.cpu(), x=(1, 1, 4, 4))
    ex.arg_dict["x"][:] = np.arange(16).reshape(1, 1, 4, 4)
    ex.forward()
    np.testing.assert_allclose(ex.outputs[0].asnumpy().ravel()[0], np.sqrt(0 + 1 + 16 + 25), 1e-6)


@pytest.mark.parametrize("params", [{}, {"p_value": 4}, {"p_value": 0}])
def test_lp_pooling_without_a_supported_p_value_is_a_clear_error(params):
    with pytest.raises(LazyNDError, match="Pooling: pool_type='lp' needs p_value in"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), pool_type="lp", kernel=(2, 2), **params)


def test_count_include_pad_bad_value_is_a_clear_error():
    with pytest.raises(LazyNDError, match="count_include_pad"):
        mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), pool_type="avg", kernel=(2, 2), count_include_pad="sometimes")


@pytest.mark.parametrize("p_value", [2, 3])
@pytest.mark.parametrize("params", [{"kernel": (2,), "stride": (1,)}, {"global_pool": True, "kernel": (1,)}])
def test_float16_lp_pooling_keeps_norms_whose_powers_overflow(p_value, params):
    # 50 ** 3 and 500 ** 2 are past float16's 65504; the norms are not (MXNet 1.9.1 gives 50 and 500)
    x = np.array([[[50.0, 1.0, 2.0, 3.0]]], dtype=np.float16)
    for data in (x, x * 10):
        a = mx.nd.array(data, dtype="float16")
        a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(a, pool_type="lp", p_value=p_value, **params)
        y.backward(mx.nd.ones(y.shape, dtype="float16"))
        wide = data.astype(np.float64)
        windows = [wide[..., :2], wide[..., 1:3], wide[..., 2:]] if "stride" in params else [wide]
        norms = [np.sum(np.abs(w) ** p_value, axis=-1, keepdims=True) ** (1 / p_value) for w in windows]
        np.testing.assert_allclose(y.asnumpy(), np.concatenate(norms, axis=-1), rtol=2e-3)
        assert np.isfinite(a.grad.asnumpy()).all()


def test_float16_lp_gradient_is_as_precise_as_float32_rounded():
    # overlapping windows with padding: a window whose cubes nearly cancel made the float16 gradient
    # wrong by half its size (its powers and quotients rounded to float16); float32 inside, MXNet's way
    x = np.random.default_rng(2).standard_normal((2, 3, 3, 3)).astype(np.float16)
    params = {"pool_type": "lp", "p_value": 3, "kernel": (3, 3), "pad": (1, 1)}
    grads = {}
    for dtype in ("float16", "float64"):
        a = mx.nd.array(x.astype(dtype), dtype=dtype)
        a.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(a, **params)
        y.backward(mx.nd.array(np.linspace(-1, 1, y.size).reshape(y.shape), dtype=dtype))
        grads[dtype] = a.grad.asnumpy().astype(np.float64)
    scale = np.abs(grads["float64"]).max()
    assert np.abs(grads["float16"] - grads["float64"]).max() < 2e-3 * scale

"""depth_to_space and space_to_depth against MXNet 1.9.1 (neither was registered)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient


# MXNet 1.9.1's layouts, checked against it on (1, 8, 2, 2), (2, 18, 2, 3) and (2, 2, 6, 3)
def depth_to_space(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(x: np.ndarray, b: int) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


def test_depth_to_space_matches_mxnets_values():
    # MXNet 1.9.1: mx.nd.depth_to_space(arange(32).reshape(1, 8, 2, 2), 2), first row
    y = mx.nd.depth_to_space(mx.nd.array(np.arange(32).reshape(1, 8, 2, 2)), block_size=2)
    assert y.shape == (1, 2, 4, 4)
    np.testing.assert_array_equal(y.asnumpy()[0, 0, 0], [0, 8, 1, 9])


def test_space_to_depth_matches_mxnets_values():
    y = mx.nd.space_to_depth(mx.nd.array(np.arange(32).reshape(1, 2, 4, 4)), block_size=2)
    assert y.shape == (1, 8, 2, 2)
    np.testing.assert_array_equal(y.asnumpy()[0, :2].ravel(), [0, 2, 8, 10, 16, 18, 24, 26])


@pytest.mark.parametrize(
    "name,shape,block,reference,inverse",
    [
        ("depth_to_space", (2, 18, 2, 3), 3, depth_to_space, space_to_depth),
        ("depth_to_space", (1, 8, 2, 2), 2, depth_to_space, space_to_depth),
        ("space_to_depth", (2, 2, 6, 3), 3, space_to_depth, depth_to_space),
    ],
)
def test_forward_and_gradient_match_mxnet(name, shape, block, reference, inverse, ctx):
    rng = np.random.default_rng(0)
    x_np = rng.uniform(-1, 1, shape)
    x = mx.nd.array(x_np, ctx=ctx, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x, block_size=block)
    head = rng.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(head, ctx=ctx, dtype="float64"))
    np.testing.assert_array_equal(y.asnumpy(), reference(x_np, block))
    np.testing.assert_array_equal(x.grad.asnumpy(), inverse(head, block))  # MXNet's gradient: the inverse move


@pytest.mark.parametrize("name,shape", [("depth_to_space", (1, 8, 1, 2)), ("space_to_depth", (1, 2, 2, 4))])
def test_numerical_gradient(name, shape):
    check_gradient(name, [np.random.default_rng(1).uniform(-1, 1, shape)], {"block_size": 2})


def test_symbols_infer_shapes_both_ways_round():
    net = sym.space_to_depth(sym.depth_to_space(sym.Variable("x"), block_size=2), block_size=2)
    _, out_shapes, _ = net.infer_shape(x=(2, 12, 3, 5))
    assert out_shapes == [(2, 12, 3, 5)]


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: mx.nd.depth_to_space(mx.nd.ones((1, 6, 2, 2)), block_size=2), "6 channels.*multiple of"),
        (lambda: mx.nd.space_to_depth(mx.nd.ones((1, 2, 3, 4)), block_size=2), "height 3.*multiples of"),
        (lambda: mx.nd.depth_to_space(mx.nd.ones((6, 2, 2)), block_size=2), "expected 4-D"),
        (lambda: mx.nd.space_to_depth(mx.nd.ones((1, 4, 2, 2)), block_size=0), "block_size=0"),
        (lambda: mx.nd.depth_to_space(mx.nd.ones((1, 4, 2, 2))), "block_size"),
    ],
)
def test_bad_input_is_a_clear_error(call, match):
    with pytest.raises(LazyNDError, match=match):
        call()

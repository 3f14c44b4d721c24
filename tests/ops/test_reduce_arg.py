"""Index reductions: argmax, argmin and argmax_channel against NumPy, their dtypes, no gradient, empty inputs."""

from __future__ import annotations

import numpy as np
import pytest
from reduce_inputs import reduce_data

import lazynd as mx
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal, check_forward


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_arg_reductions_match_numpy(name, axis, ctx):
    x = reduce_data("float32")
    fn = getattr(np, name)
    out = check_forward(name, [x], {"axis": axis}, lambda v: fn(v, axis=axis).astype(np.float32), ctx=ctx)
    assert out[0].dtype == np.float32


def test_argmax_without_axis_searches_the_flat_array():
    x = reduce_data("float32")
    assert_almost_equal(mx.nd.argmax(mx.nd.array(x)), np.array([np.argmax(x)], dtype=np.float32))
    assert mx.nd.argmin(mx.nd.array(x), axis=1, keepdims=True).shape == (2, 1, 4)


def test_argmax_channel_reduces_the_last_axis(ctx):
    x = reduce_data("float32", shape=(4, 5))
    check_forward("argmax_channel", [x], {}, lambda v: np.argmax(v, axis=-1).astype(np.float32), ctx=ctx)


def test_argmax_channel_reduces_axis_1_of_a_3d_input(ctx):
    x = reduce_data("float32", shape=(2, 3, 4))
    out = check_forward("argmax_channel", [x], {}, lambda v: np.argmax(v, axis=1).astype(np.float32), ctx=ctx)
    assert out[0].shape == (2, 4)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_of_integers_give_indices_in_the_input_dtype(name, ctx):
    x = np.array([[1, 3, 2], [4, 0, 9]], dtype=np.int32)
    out = getattr(mx.nd, name)(mx.nd.array(x, ctx=ctx, dtype="int32"), axis=1)
    assert out.dtype == np.int32  # as MXNet 1.9.1 (and 0.9's same-dtype rule)
    np.testing.assert_array_equal(out.asnumpy(), getattr(np, name)(x, axis=1))


def test_arg_reductions_have_no_gradient():
    assert mx.nd.argmax  # registered

    assert registry.get("argmax").gradient(mx.nd, {}, [None], [None], [None]) == [None]


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_of_an_array_empty_along_another_axis_is_empty(name):
    # NumPy's rule: only an empty reduced axis has no answer
    out = getattr(mx.nd, name)(mx.nd.ones((0, 3)), axis=1)
    assert out.shape == (0,) and out.asnumpy().shape == (0,)
    assert getattr(mx.nd, name)(mx.nd.ones((2, 0, 3)), axis=-1).asnumpy().shape == (2, 0)


@pytest.mark.parametrize(("shape", "axis", "message"), [((0, 3), 0, "along axis 0"), ((0,), None, "empty array")])
def test_arg_reduction_over_an_empty_axis_raises_naming_it(shape, axis, message):
    with pytest.raises(mx.LazyNDError, match=message):
        mx.nd.argmax(mx.nd.ones(shape), axis=axis).wait_to_read()


@pytest.mark.parametrize("name", ["argmax", "argmin", "argmax_channel"])
def test_arg_reductions_of_no_elements_raise_at_the_call(ctx, name):
    # as max and min: a program that never waits on the result still hears of it
    empty = mx.nd.zeros((5, 0), ctx=ctx)
    with pytest.raises(mx.OperatorError, match=rf"{name}: cannot take the {name} along axis 1"):
        getattr(mx.nd, name)(empty) if name == "argmax_channel" else getattr(mx.nd, name)(empty, axis=1)
    assert mx.nd.argmax(empty, axis=0).shape == (0,)

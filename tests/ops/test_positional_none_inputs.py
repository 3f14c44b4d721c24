"""A None given by position where MXNet's generated functions list an input is an input left out."""

from __future__ import annotations

import numpy as np

import lazynd as mx
import lazynd_sym as sym


def test_symbol_none_for_an_input_the_mode_does_not_take():
    data = sym.Variable("data")
    resized = sym.contrib.BilinearResize2D(data, None, scale_height=0.5, scale_width=0.5, mode="odd_scale")
    assert resized.list_arguments() == ["data"]
    _, out_shapes, _ = resized.infer_shape(data=(1, 1, 4, 4))
    assert out_shapes == [(1, 1, 2, 2)]


def test_symbol_none_for_a_taken_input_makes_its_variable():
    net = sym.FullyConnected(sym.Variable("data"), None, None, num_hidden=3, name="fc")
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias"]


def test_ndarray_none_for_an_input_the_mode_does_not_take(ctx):
    x = mx.nd.array(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4), ctx=ctx)
    out = mx.nd.contrib.BilinearResize2D(x, None, scale_height=0.5, scale_width=0.5, mode="odd_scale")
    expected = mx.nd.contrib.BilinearResize2D(x, scale_height=0.5, scale_width=0.5, mode="odd_scale")
    np.testing.assert_array_equal(out.asnumpy(), expected.asnumpy())


def test_ndarray_none_for_a_left_out_bias(ctx):
    x, w = mx.nd.ones((2, 3), ctx=ctx), mx.nd.ones((4, 3), ctx=ctx)
    out = mx.nd.FullyConnected(x, w, None, num_hidden=4, no_bias=True)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 4), 3.0))


def test_none_after_the_inputs_is_still_a_parameter():
    x = mx.nd.ones((2, 3))
    assert mx.nd.sum(x, None).shape == (1,)
    assert sym.sum(sym.Variable("x"), None).list_arguments() == ["x"]

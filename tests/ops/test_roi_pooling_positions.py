"""ROIPooling's hidden positions of the maxima: integers, so that a float16 map past 2048 cells
sends each gradient to its own cell (MXNet 1.9.1 keeps them in the data's type and rounds them)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError
from lazynd.ops import registry

# one channel of -1 with a peak in each bin of the lower right quadrant of a 64 x 64 map, at
# odd cells past 2048 (float16 holds only even integers there: 2147 would become 2148)
PEAKS = [(33, 35), (40, 57), (55, 39), (63, 63)]
ROIS = np.array([[0, 32, 32, 63, 63], [0, 0, 0, 63, 63]], np.float32)
PARAMS = {"pooled_size": (2, 2), "spatial_scale": 1.0}


def _data() -> np.ndarray:
    """(1, 2, 64, 64) float16: channel 0 the peaks, channel 1 random values."""
    data = np.full((1, 2, 64, 64), -1, np.float16)
    for value, (row, col) in enumerate(PEAKS, start=1):
        data[0, 0, row, col] = value
    assert min(row * 64 + col for row, col in PEAKS) > 2048
    data[0, 1] = np.random.default_rng(3).standard_normal((64, 64))
    return data


def _expected() -> np.ndarray:
    """The data gradient of a head gradient of ones, computed in float32 with the same values."""
    data = mx.nd.array(_data().astype(np.float32))
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.ROIPooling(data, mx.nd.array(ROIS), **PARAMS)
    out.backward(mx.nd.ones_like(out))
    return data.grad.asnumpy()


def test_float32_reference_puts_the_gradient_on_the_peaks():
    grad = _expected()
    # the first region's bins hold one peak each; the second's 2 x 2 bins of 32 x 32 cells: only
    # its lower right bin reaches the quadrant, where the greatest peak (63, 63) wins
    for row, col in PEAKS:
        assert grad[0, 0, row, col] == (2 if (row, col) == (63, 63) else 1)
    assert grad[0, 0].sum() == 8


def test_hidden_positions_are_int32_whatever_the_data_type():
    op = registry.get("ROIPooling")
    for dtype in ("float16", "float32", "float64"):
        _, out_types, _ = op.infer_type({}, [dtype, dtype], [])
        assert out_types == [dtype, "int32"]
    _, out_types, _ = op.infer_type({}, [None, "float16"], [])
    assert out_types == ["float16", "int32"]


def test_float16_gradient_lands_on_the_cells_of_the_maxima(ctx):
    # the first pass runs the gradient rules, the second is captured, the third replayed (one op)
    expected = _expected()
    data = mx.nd.array(_data(), ctx=ctx, dtype="float16")
    data.attach_grad()
    rois = mx.nd.array(ROIS, ctx=ctx, dtype="float16")
    for _ in range(3):
        with mx.autograd.record():
            out = mx.nd.ROIPooling(data, rois, **PARAMS)
        out.backward(mx.nd.ones_like(out))
        np.testing.assert_array_equal(data.grad.asnumpy(), expected)


def test_float16_executor_gradient_lands_on_the_cells_of_the_maxima(ctx):
    net = sym.ROIPooling(sym.Variable("data"), sym.Variable("rois"), **PARAMS)
    shapes = {"data": (1, 2, 64, 64), "rois": ROIS.shape}
    exe = net.simple_bind(
        ctx, grad_req={"data": "write", "rois": "null"}, type_dict=dict.fromkeys(shapes, "float16"), **shapes
    )
    exe.forward(is_train=True, data=mx.nd.array(_data(), dtype="float16"), rois=mx.nd.array(ROIS, dtype="float16"))
    exe.backward(mx.nd.ones(exe.outputs[0].shape, ctx=ctx, dtype="float16"))
    assert exe.grad_dict["data"].dtype == np.float16
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), _expected())


def test_hidden_output_leaves_the_json_unchanged():
    # MXNet reads our JSON: the positions' type is a property of the operator, never written there
    net = sym.ROIPooling(sym.Variable("data"), sym.Variable("rois"), **PARAMS)
    text = net.tojson()
    assert "int32" not in text and "maxidx" not in text
    assert sym.load_json(text).tojson() == text


def test_a_map_of_more_cells_than_int32_counts_is_refused():
    net = sym.ROIPooling(sym.Variable("data"), sym.Variable("rois"), **PARAMS)
    with pytest.raises(ShapeError, match="ROIPooling: data's map of 65536 x 32768 cells has more than"):
        net.infer_shape(data=(1, 1, 65536, 32768), rois=(1, 5))
    _, outs, _ = net.infer_shape(data=(1, 1, 65536, 32767), rois=(1, 5))
    assert outs == [(1, 1, 2, 2)]

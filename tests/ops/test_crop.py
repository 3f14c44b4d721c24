"""Crop (h_w, offset, center_crop, crop_like) and the slice assignments _crop_assign / _crop_assign_scalar."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)
IMAGE = np.arange(2 * 1 * 5 * 6, dtype=np.float32).reshape(2, 1, 5, 6)


def test_crop_to_h_w_at_offset(ctx):
    # values from MXNet 1.9.1: rows 1-2, columns 2-4
    params = {"num_args": 1, "h_w": (2, 3), "offset": (1, 2)}
    out = check_forward("Crop", [IMAGE], params, lambda x: x[:, :, 1:3, 2:5], ctx=ctx)[0]
    np.testing.assert_array_equal(out[0, 0], [[8, 9, 10], [14, 15, 16]])


def test_center_crop_rounds_the_offset_down(ctx):
    params = {"num_args": 1, "h_w": (2, 3), "center_crop": True}
    check_forward("Crop", [IMAGE], params, lambda x: x[:, :, 1:3, 1:4], ctx=ctx)


def test_crop_like_takes_the_second_inputs_spatial_size(ctx):
    like = np.zeros((1, 1, 3, 3), np.float32)
    params = {"num_args": 2, "center_crop": True}
    check_forward("Crop", [IMAGE, like], params, lambda x, y: x[:, :, 1:4, 1:4], ctx=ctx)


def test_crop_gradient_pads_with_zeros_and_gives_crop_like_none(ctx):
    grads = check_gradient(
        "Crop", [rng.standard_normal((1, 2, 4, 4)), np.zeros((1, 1, 2, 2))], {"num_args": 2, "offset": (1, 2)}, ctx=ctx
    )
    assert grads[1] is None
    check_gradient("Crop", [rng.standard_normal((1, 2, 4, 5))], {"num_args": 1, "h_w": (3, 2), "center_crop": True})


def test_crop_symbol_arguments_and_shapes():
    s = sym.Crop(sym.Variable("a"), sym.Variable("b"), num_args=2)
    assert s.list_arguments() == ["a", "b"]
    _, outs, _ = s.infer_shape(a=(2, 3, 10, 10), b=(2, 5, 4, 6))
    assert outs == [(2, 3, 4, 6)]


def test_crop_rejects_a_crop_that_does_not_fit():
    with pytest.raises(ShapeError, match="Crop: a 4x3 crop at offset \\(2, 0\\) does not fit"):
        mx.nd.Crop(mx.nd.zeros((1, 1, 5, 6)), num_args=1, h_w=(4, 3), offset=(2, 0))
    with pytest.raises(ShapeError, match="4-D"):
        mx.nd.Crop(mx.nd.zeros((5, 6)), num_args=1, h_w=(1, 1))


def test_crop_counts_its_inputs_when_num_args_is_left_out(ctx):
    # MXNet 1.9.1 fills num_args from the inputs given by position, in mx.nd and mx.sym alike
    data = mx.nd.array(IMAGE, ctx=ctx)
    np.testing.assert_array_equal(mx.nd.Crop(data, h_w=(2, 3), offset=(1, 2)).asnumpy(), IMAGE[:, :, 1:3, 2:5])
    like = mx.nd.zeros((1, 1, 3, 3), ctx=ctx)
    np.testing.assert_array_equal(mx.nd.Crop(data, like, center_crop=True).asnumpy(), IMAGE[:, :, 1:4, 1:4])
    s = sym.Crop(sym.Variable("a"), sym.Variable("b"))
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3, 10, 10), b=(2, 5, 4, 6))[1] == [(2, 3, 4, 6)]
    assert sym.Crop(sym.Variable("a"), h_w=(2, 2)).infer_shape(a=(1, 1, 4, 4))[1] == [(1, 1, 2, 2)]
    with pytest.raises(OperatorError, match="Crop: num_args must be 1 or 2, got 3"):
        mx.nd.Crop(data, like, like)


def test_crop_assign_writes_rhs_into_the_region(ctx):
    lhs = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = lhs.copy()
    expected[0:2, 1:3] = 1  # MXNet 1.9.1 gives the same
    check_forward(
        "_crop_assign",
        [lhs, np.ones((2, 2), np.float32)],
        {"begin": (0, 1), "end": (2, 3)},
        lambda a, b: expected,
        ctx=ctx,
    )


def test_crop_assign_scalar_fills_the_region(ctx):
    lhs = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = lhs.copy()
    expected[1:2] = 7
    check_forward("_crop_assign_scalar", [lhs], {"begin": (1,), "end": (2,), "scalar": 7}, lambda a: expected, ctx=ctx)


def test_crop_assign_gradients(ctx):
    params = {"begin": (0, 1), "end": (2, None), "step": (1, 2)}
    check_gradient("_crop_assign", [rng.standard_normal((3, 5)), rng.standard_normal((2, 2))], params, ctx=ctx)
    check_gradient("_crop_assign_scalar", [rng.standard_normal((3, 5))], {**params, "scalar": 2.0}, ctx=ctx)


def test_crop_assign_rejects_rhs_of_the_wrong_shape():
    with pytest.raises(ShapeError, match="_crop_assign.*rhs"):
        mx.nd._crop_assign(mx.nd.zeros((3, 4)), mx.nd.zeros((2, 3)), begin=(0, 1), end=(2, 3))
    with pytest.raises(ShapeError, match="_crop_assign_scalar: slice"):
        mx.nd._crop_assign_scalar(mx.nd.zeros((3, 4)), begin=(0, 1, 2), end=(2, 3, 4))


def test_slice_assign_names_are_aliases():
    assert mx.ops.registry.get("_slice_assign").name == "_crop_assign"
    assert mx.ops.registry.get("_slice_assign_scalar").name == "_crop_assign_scalar"

"""pick and MXNet 0.9's choose_element_0index, fill_element_0index, onehot_encode."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ShapeError
from lazynd.testing import check_forward, check_gradient

rng = np.random.default_rng(0)


def np_pick(data, index, axis=-1, keepdims=False, mode="clip"):
    n = data.shape[axis]
    idx = index.astype(np.int64) % n if mode == "wrap" else np.clip(index.astype(np.int64), 0, n - 1)
    idx = np.expand_dims(idx.reshape(np.delete(data.shape, axis % data.ndim)), axis)
    picked = np.take_along_axis(data, idx, axis)
    return picked if keepdims else picked.squeeze(axis)


@pytest.mark.parametrize("axis,keepdims", [(-1, False), (0, False), (1, True), (2, False)])
def test_pick_matches_numpy(ctx, axis, keepdims):
    data = rng.standard_normal((3, 4, 5)).astype(np.float32)
    shape = list(data.shape)
    shape[axis] = 1
    index = rng.integers(0, data.shape[axis], size=shape).astype(np.float32)
    index = index if keepdims else index.squeeze(axis)
    check_forward(
        "pick",
        [data, index],
        {"axis": axis, "keepdims": keepdims},
        lambda d, i: np_pick(d, i, axis, keepdims),
        ctx=ctx,
    )


def test_pick_clips_or_wraps_out_of_range_indices(ctx):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    index = np.array([-1, 5, 1], np.float32)
    # values from MXNet 1.9.1
    check_forward("pick", [data, index], {"axis": 1}, lambda d, i: np.array([0, 7, 9]), ctx=ctx)
    check_forward("pick", [data, index], {"axis": 1, "mode": "wrap"}, lambda d, i: np.array([3, 5, 9]), ctx=ctx)


def test_pick_gradient(ctx):
    data = rng.standard_normal((3, 4))
    check_gradient("pick", [data, np.array([0.0, 3.0, 3.0])], {"axis": 1}, ctx=ctx, wrt=[0])
    check_gradient("pick", [data, np.array([[0.0, 2.0, 1.0, 1.0]])], {"axis": 0, "keepdims": True}, ctx=ctx, wrt=[0])


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick_gradient_goes_to_the_clipped_or_wrapped_position(mode, ctx):
    data, index = mx.nd.zeros((3, 4), ctx=ctx), mx.nd.array([-1, 5, 1], ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pick(data, index, axis=-1, mode=mode)
    y.backward(mx.nd.array([1.0, 2.0, 3.0], ctx=ctx))
    expected = np.zeros((3, 4), np.float32)
    columns = [3, 1, 1] if mode == "wrap" else [0, 3, 1]  # MXNet 1.9.1's positions (see above)
    expected[[0, 1, 2], columns] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(data.grad.asnumpy(), expected)


def test_pick_infers_index_shape_and_rejects_a_wrong_one():
    x = sym.pick(sym.Variable("data"), sym.Variable("index"), axis=1)
    args, outs, _ = x.infer_shape(data=(2, 5, 3))
    assert args == [(2, 5, 3), (2, 3)] and outs == [(2, 3)]
    with pytest.raises(ShapeError, match="index"):
        mx.nd.pick(mx.nd.zeros((2, 5)), mx.nd.zeros((3,)), axis=1)


def test_choose_element_0index_picks_one_per_row(ctx):
    lhs = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mx.nd.choose_element_0index(mx.nd.array(lhs, ctx=ctx), mx.nd.array([0, 3, 1], ctx=ctx))
    np.testing.assert_array_equal(out.asnumpy(), [0, 7, 9])
    check_gradient("choose_element_0index", [rng.standard_normal((3, 4)), np.array([0.0, 3.0, 1.0])], ctx=ctx, wrt=[0])


def test_fill_element_0index_writes_one_per_row(ctx):
    lhs = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = mx.nd.fill_element_0index(
        mx.nd.array(lhs, ctx=ctx), mx.nd.array([10, 20, 30], ctx=ctx), mx.nd.array([0, 3, 1], ctx=ctx)
    )
    expected = lhs.copy()
    expected[[0, 1, 2], [0, 3, 1]] = [10, 20, 30]
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_fill_element_0index_gradient(ctx):
    inputs = [rng.standard_normal((3, 4)), rng.standard_normal(3), np.array([2.0, 0.0, 3.0])]
    check_gradient("fill_element_0index", inputs, ctx=ctx, wrt=[0, 1])


def test_fill_element_0index_in_place_with_out(ctx):
    lhs = mx.nd.zeros((2, 3), ctx=ctx)
    mx.nd.fill_element_0index(lhs, mx.nd.array([1, 2], ctx=ctx), mx.nd.array([2, 0], ctx=ctx), out=lhs)
    np.testing.assert_array_equal(lhs.asnumpy(), [[0, 0, 1], [2, 0, 0]])


def test_onehot_encode_writes_into_out_and_returns_it(ctx):
    out = mx.nd.zeros((3, 5), ctx=ctx) + 7
    result = mx.nd.onehot_encode(mx.nd.array([1, 4, 0], ctx=ctx), out)
    np.testing.assert_array_equal(out.asnumpy(), np.eye(5)[[1, 4, 0]])
    np.testing.assert_array_equal(result.asnumpy(), np.eye(5)[[1, 4, 0]])


def test_onehot_encode_takes_its_target_by_the_keyword_out_as_mxnet_09(ctx):
    out = mx.nd.zeros((3, 5), ctx=ctx) + 7
    assert mx.nd.onehot_encode(mx.nd.array([1, 4, 0], ctx=ctx), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(5)[[1, 4, 0]])


def test_row_functions_reject_non_matrices():
    with pytest.raises(ShapeError, match="choose_element_0index.*2-D"):
        mx.nd.choose_element_0index(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2,)))
    with pytest.raises(ShapeError, match="rhs"):
        mx.nd.fill_element_0index(mx.nd.zeros((2, 3)), mx.nd.zeros((2,)), mx.nd.zeros((4,)))


def test_pick_takes_the_index_with_the_axis_kept_or_dropped_whatever_keepdims_says(ctx):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    # values from MXNet 1.9.1, which accepts both index shapes in either mode
    check_forward(
        "pick",
        [data, np.array([0, 3, 1], np.float32)],
        {"axis": 1, "keepdims": True},
        lambda d, i: np.array([[0], [7], [9]]),
        ctx=ctx,
    )
    check_forward(
        "pick", [data, np.array([[0], [3], [1]], np.float32)], {"axis": 1}, lambda d, i: np.array([0, 7, 9]), ctx=ctx
    )
    x = sym.pick(sym.Variable("data"), sym.Variable("index"), axis=1, keepdims=True)
    assert x.infer_shape(data=(3, 4), index=(3,))[1] == [(3, 1)]
    with pytest.raises(ShapeError, match="index"):
        mx.nd.pick(mx.nd.zeros((3, 4)), mx.nd.zeros((1, 3)), axis=1)


def test_pick_infers_an_unknown_index_without_the_picked_axis_whatever_keepdims():
    # MXNet 1.9.1 infers (2,) and (3,) here; the index was inferred (2, 1) with keepdims, so
    # simple_bind allocated a label an iterator's (batch,) labels could not be copied into
    for axis, expected in [(1, (2,)), (0, (3,))]:
        x = sym.pick(sym.Variable("data"), sym.Variable("index"), axis=axis, keepdims=True)
        args, outs, _ = x.infer_shape_partial(data=(2, 3))
        assert args[1] == expected and outs[0] == tuple(1 if a == axis else n for a, n in enumerate((2, 3)))
    x = sym.pick(sym.Variable("data"), sym.Variable("index"), axis=1, keepdims=True)
    executor = x.simple_bind(mx.cpu(), data=(2, 3))
    out = executor.forward(data=mx.nd.array(np.arange(6).reshape(2, 3)), index=mx.nd.array([2, 0]))[0]
    assert out.asnumpy().tolist() == [[2.0], [3.0]]


def test_pick_gradient_with_a_dropped_index_axis_and_keepdims(ctx):
    data = rng.standard_normal((3, 4))
    check_gradient("pick", [data, np.array([2.0, 0.0, 3.0])], {"axis": 1, "keepdims": True}, ctx=ctx, wrt=[0])


def test_pick_from_a_vector_gives_shape_one_as_mxnet():
    # MXNet 1.9.1 has no 0-d arrays: one element picked from a 1-D array has shape (1,)
    data = mx.nd.array([10.0, 11.0, 12.0, 13.0, 14.0])
    picked = mx.nd.pick(data, mx.nd.array([6.0]), axis=0, mode="wrap")
    assert picked.shape == (1,) and picked.asnumpy().tolist() == [11.0]
    _, outs, _ = sym.pick(sym.Variable("data"), sym.Variable("index"), axis=0).infer_shape(data=(5,))
    assert outs == [(1,)]
    # a 0-d index picks the same one element
    picked = mx.nd.pick(data, mx.nd.array(np.array(7.0)), axis=0)
    assert picked.shape == (1,) and picked.asnumpy().tolist() == [14.0]

"""mx.nd.contrib box operators against MXNet 1.9.1: box_iou, box_nms, bipartite_matching,
box_encode, box_decode (they were missing: mx.nd.contrib.<op> raised)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

LHS = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [0, 0, 0, 0]], np.float32)
RHS = np.array([[0, 0, 2, 2], [5, 5, 6, 6], [1, 1, 1, 1]], np.float32)
# rows: id, score, xmin, ymin, xmax, ymax, extra
ROWS = np.array(
    [
        [0, 0.5, 0.1, 0.1, 0.2, 0.2, 7],
        [1, 0.4, 0.1, 0.1, 0.2, 0.2, 8],
        [0, 0.3, 0.1, 0.1, 0.2, 0.2, 9],
        [0, 0.6, 0.5, 0.5, 0.7, 0.8, 1],
        [1, 0.5, 0.1, 0.1, 0.2, 0.2, 5],
        [0, 0.0, 0, 0, 1, 1, 0],
    ],
    np.float32,
)
NONE = [-1.0] * 7


def test_box_iou_matches_mxnet_in_both_formats(ctx):
    lhs, rhs = mx.nd.array(LHS, ctx=ctx), mx.nd.array(RHS, ctx=ctx)
    # a zero-area box overlaps nothing, itself included
    np.testing.assert_allclose(
        mx.nd.contrib.box_iou(lhs, rhs).asnumpy(), [[1, 0, 0], [1 / 7, 0, 0], [0, 0, 0]], rtol=1e-6
    )
    np.testing.assert_allclose(
        mx.nd.contrib.box_iou(lhs, rhs, format="center").asnumpy(),
        [[1, 0, 0.05263158], [0.20930232, 0.00558659, 0.11111111], [0, 0, 0]],
        rtol=1e-6,
    )


def test_box_iou_shape_joins_the_leading_axes_and_its_gradient_is_zero():
    assert mx.nd.contrib.box_iou(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((5, 4))).shape == (2, 3, 5)
    lhs = mx.nd.array(LHS)
    lhs.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_iou(lhs, mx.nd.array(RHS))
    y.backward()
    assert not lhs.grad.asnumpy().any()


def test_box_iou_refuses_rows_that_are_not_boxes_and_unknown_formats():
    with pytest.raises(LazyNDError, match="box_iou.*'lhs'.*4"):
        mx.nd.contrib.box_iou(mx.nd.zeros((2, 3)), mx.nd.array(RHS))
    with pytest.raises(LazyNDError, match="box_iou.*format"):
        mx.nd.contrib.box_iou(mx.nd.array(LHS), mx.nd.array(RHS), format="x")


@pytest.mark.parametrize(
    "params,kept",
    [
        ({}, [3, 0]),  # row 4 ties row 0 (score 0.5): the earlier row goes first
        ({"id_index": 0}, [3, 0, 4]),  # another class is not suppressed
        ({"id_index": 0, "force_suppress": True, "topk": 2}, [3, 0]),
        ({"id_index": 0, "background_id": 1}, [3, 0]),
        ({"valid_thresh": 0.5}, [3]),  # a score equal to valid_thresh is dropped
    ],
)
def test_box_nms_keeps_the_rows_mxnet_keeps(params, kept, ctx):
    out = mx.nd.contrib.box_nms(mx.nd.array(ROWS, ctx=ctx), **params).asnumpy()
    np.testing.assert_array_equal(out, [ROWS[k] for k in kept] + [NONE] * (6 - len(kept)))


def test_box_nms_with_classes_drops_the_default_background_id_minus_one(ctx):
    # MXNet 1.9.1: with id_index >= 0, rows of class -1 (background_id's default; GluonCV's padding)
    # are dropped, even with force_suppress; other negative ids stay
    rows = np.array(
        [[-1, 0.9, 0, 0, 1, 1], [0, 0.8, 0, 0, 1, 1], [1, 0.7, 5, 5, 6, 6], [-2, 0.6, 8, 8, 9, 9]], np.float32
    )
    for params in ({"id_index": 0}, {"id_index": 0, "force_suppress": True}):
        out = mx.nd.contrib.box_nms(mx.nd.array(rows, ctx=ctx), **params).asnumpy()
        np.testing.assert_array_equal(out, [*rows[[1, 2, 3]], [-1] * 6])
    out = mx.nd.contrib.box_nms(mx.nd.array(rows, ctx=ctx)).asnumpy()  # no classes: nothing is background
    np.testing.assert_array_equal(out, [*rows[[0, 2, 3]], [-1] * 6])


def test_box_nms_converts_the_boxes_to_out_format():
    out = mx.nd.contrib.box_nms(mx.nd.array(ROWS), valid_thresh=0.5, out_format="center").asnumpy()
    np.testing.assert_allclose(out[0], [0, 0.6, 0.6, 0.65, 0.2, 0.3, 1], rtol=1e-6)
    rows = np.array([[0, 0.5, 0, 0, 1, 1], [0, 0.5, 0, 0, 2, 1], [0, 0.5, 5, 5, 6, 6]], np.float32)
    out = mx.nd.contrib.box_nms(mx.nd.array(rows[None]), in_format="center").asnumpy()
    np.testing.assert_allclose(out[0, :, 2:], [[-0.5, -0.5, 0.5, 0.5], [-1, -0.5, 1, 0.5], [2, 2, 8, 8]])


def test_box_nms_converts_boxes_left_of_or_above_the_origin_too():
    # a box's first coordinate below 0 is a box like another (MXNet 1.9.1 reads it as a row of -1
    # and writes the box unconverted: [-2, -1, 2, 3] stays so in 'center', [-1, 2, 2, 2] in 'corner')
    rows = np.array([[[0, 0.9, -2, -1, 2, 3], [0, 0.8, 5, 5, 6, 6]]], np.float32)
    out = mx.nd.contrib.box_nms(mx.nd.array(rows), out_format="center").asnumpy()
    np.testing.assert_array_equal(out[0, :, 2:], [[0, 1, 4, 4], [5.5, 5.5, 1, 1]])
    rows = np.array([[[0, 0.9, -1, 2, 2, 2]]], np.float32)
    out = mx.nd.contrib.box_nms(mx.nd.array(rows), in_format="center").asnumpy()
    np.testing.assert_array_equal(out[0, :, 2:], [[-2, 1, 0, 3]])


def test_box_nms_suppresses_only_overlaps_above_the_threshold_and_keeps_zero_area_boxes():
    rows = np.array(
        [[0, 0.5, 0, 0, 1, 1], [0, 0.5, 0, 0, 2, 1], [0, 0.7, 0, 0, 0, 0], [0, 0.7, 0, 0, 0, 0]], np.float32
    )
    # the overlap of the first two is exactly 0.5; identical boxes of zero area do not overlap
    out = mx.nd.contrib.box_nms(mx.nd.array(rows)).asnumpy()
    np.testing.assert_array_equal(out, rows[[2, 3, 0, 1]])
    out = mx.nd.contrib.box_nms(mx.nd.array(rows), overlap_thresh=0.499).asnumpy()
    np.testing.assert_array_equal(out, [*rows[[2, 3, 0]], [-1] * 6])


def test_box_nms_with_nothing_valid_is_all_minus_one_and_batches_are_separate():
    out = mx.nd.contrib.box_nms(mx.nd.array(ROWS), valid_thresh=0.9).asnumpy()
    assert (out == -1).all()
    batch = np.stack([ROWS, ROWS[::-1]])
    out = mx.nd.contrib.box_non_maximum_suppression(mx.nd.array(batch)).asnumpy()
    np.testing.assert_array_equal(out[1, :2], ROWS[[3, 4]])  # reversed: the 0.5 tie now goes to row 4


def test_box_nms_gradient_goes_back_to_the_kept_rows(ctx):
    data = mx.nd.array(ROWS, ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_nms(data)
    y.backward(mx.nd.array(np.arange(42).reshape(6, 7), ctx=ctx))
    expected = np.zeros((6, 7))
    expected[3], expected[0] = np.arange(7), np.arange(7, 14)
    np.testing.assert_array_equal(data.grad.asnumpy(), expected)


def test_box_nms_symbol_runs_and_its_gradient_matches():
    net = sym.contrib.box_nms(sym.Variable("data"), id_index=0)
    ex = net.simple_bind(mx.cpu(), data=(6, 7))
    ex.arg_dict["data"][:] = ROWS
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy()[:3], ROWS[[3, 0, 4]])
    ex.backward(mx.nd.ones((6, 7)))
    np.testing.assert_array_equal(ex.grad_dict["data"].asnumpy()[:, 0], [1, 0, 0, 1, 1, 0])


def test_box_nms_topk_zero_passes_data_through_as_mxnet(ctx):
    # MXNet 1.9.1's fast path: no sorting, thresholds or format change; the gradient is the identity
    data = mx.nd.array(ROWS, ctx=ctx)
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.box_nms(data, topk=0, valid_thresh=0.45, out_format="center")
    y.backward(mx.nd.array(np.arange(42).reshape(6, 7), ctx=ctx))
    np.testing.assert_array_equal(y.asnumpy(), ROWS)
    np.testing.assert_array_equal(data.grad.asnumpy(), np.arange(42).reshape(6, 7))


def test_box_nms_refuses_columns_outside_the_rows():
    with pytest.raises(LazyNDError, match="box_nms.*coord_start 4"):
        mx.nd.contrib.box_nms(mx.nd.array(ROWS), coord_start=4)
    with pytest.raises(LazyNDError, match="box_nms.*score_index 7"):
        mx.nd.contrib.box_nms(mx.nd.array(ROWS), score_index=7)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"score_index": 2}, "score_index 2 falls among the box columns 2..5"),
        ({"score_index": 0, "coord_start": 0}, "score_index 0 falls among the box columns 0..3"),
        ({"id_index": 5}, "id_index 5 falls among the box columns 2..5"),
        ({"id_index": 1}, "id_index 1 is the score_index"),
    ],
)
def test_box_nms_refuses_a_column_read_as_two_things(params, match):
    # MXNet 1.9.1 refuses them; they ran, reading a coordinate as the score or the class id
    with pytest.raises(LazyNDError, match=f"box_nms: {match}, expected a column of its own"):
        mx.nd.contrib.box_nms(mx.nd.array(ROWS), **params)


def test_box_nms_needs_rows_of_a_score_and_a_box():
    # MXNet 1.9.1 refuses rows narrower than 5 values, where the score would sit on a coordinate
    with pytest.raises(LazyNDError, match="box_nms: rows of 'data' have 4 values, expected at least 5"):
        mx.nd.contrib.box_nms(mx.nd.zeros((3, 4)), coord_start=0, score_index=0)


def test_box_nms_of_no_boxes_is_empty():
    # it failed inside the kernel (a NumPy reshape error)
    assert mx.nd.contrib.box_nms(mx.nd.zeros((2, 0, 6))).asnumpy().shape == (2, 0, 6)


SCORES = np.array([[0.5, 0.6], [0.1, 0.3], [0.6, 0.6]], np.float32)


@pytest.mark.parametrize(
    "params,rows,cols",
    [
        ({"threshold": 1e-12}, [1, -1, 0], [2, 0]),  # ties at 0.6 in row-major order
        ({"threshold": 0.6}, [-1, -1, -1], [-1, -1]),  # strictly above
        ({"threshold": 0.35, "is_ascend": True}, [-1, 0, -1], [1, -1]),
        ({"threshold": 0.1, "is_ascend": True}, [-1, -1, -1], [-1, -1]),
    ],
)
def test_bipartite_matching_matches_mxnet(params, rows, cols, ctx):
    row, col = mx.nd.contrib.bipartite_matching(mx.nd.array(SCORES, ctx=ctx), **params)
    np.testing.assert_array_equal(row.asnumpy(), rows)
    np.testing.assert_array_equal(col.asnumpy(), cols)


def test_bipartite_matching_topk_stops_after_topk_plus_one_matches_as_mxnet():
    scores = np.random.RandomState(0).rand(5, 4).astype(np.float32)
    expected = {1: [-1, -1, 0, 1, -1], 2: [-1, 3, 0, 1, -1], 3: [-1, 3, 0, 1, 2], -1: [-1, 3, 0, 1, 2]}
    for topk, rows in expected.items():
        row, _ = mx.nd.contrib.bipartite_matching(mx.nd.array(scores[None]), threshold=0.0, topk=topk)
        np.testing.assert_array_equal(row.asnumpy(), [rows])


def test_bipartite_matching_needs_a_threshold():
    with pytest.raises(LazyNDError, match="bipartite_matching.*threshold"):
        mx.nd.contrib.bipartite_matching(mx.nd.array(SCORES))


ANCHORS = np.array([[[0, 0, 2, 2], [1, 1, 3, 4], [0, 0, 1, 1], [2, 2, 3, 3]]], np.float32)
REFS = np.array([[[0, 0, 1, 1], [0.5, 0.5, 2.5, 2], [2, 1, 4, 3]]], np.float32)
OFFSETS = np.array([[[0.1, 0.2, 0.3, -0.4], [0, 0, 0, 0], [1, 1, 5, 5], [0.5, -0.5, 0.1, 0.1]]], np.float32)


def test_box_encode_matches_mxnet(ctx):
    def nd(a):
        return mx.nd.array(a, ctx=ctx)

    targets, masks = mx.nd.contrib.box_encode(
        nd([[1, -1, 0, 1]]), nd([[1, 0, 0, 2]]), nd(ANCHORS), nd(REFS), nd([0.1, 0.2, 0.3, 0.4]), nd([1, 2, 3, 4])
    )
    np.testing.assert_allclose(
        targets.asnumpy(),
        [[[0.15, -0.0375, -0.1, -0.17192052], [0] * 4, [0] * 4, [0.4, -0.35, 0.13104905, 0.07328679]]],
        rtol=1e-5,
    )
    np.testing.assert_array_equal(masks.asnumpy(), [[[1] * 4, [0] * 4, [0] * 4, [1] * 4]])


def test_box_encode_refuses_matches_outside_the_references():
    with pytest.raises(LazyNDError, match="box_encode.*'matches'.*\\[0, 2\\]"):
        mx.nd.contrib.box_encode(
            *(mx.nd.array(a) for a in ([[1, 1, 1, 1]], [[0, 3, 0, 0]], ANCHORS, REFS, [0] * 4, [1] * 4))
        )[0].asnumpy()


def test_box_decode_matches_mxnet(ctx):
    data, anchors = mx.nd.array(OFFSETS, ctx=ctx), mx.nd.array(ANCHORS, ctx=ctx)
    np.testing.assert_allclose(
        mx.nd.contrib.box_decode(data, anchors, 0.1, 0.1, 0.2, 0.2, clip=1.0, format="corner").asnumpy(),
        [
            [
                [-0.04183662, 0.11688364, 2.0818367, 1.9631163],
                [1, 1, 3, 4],
                [-0.75914085, -0.75914085, 1.9591409, 1.9591409],
                [2.0398993, 1.9398994, 3.0601006, 2.9601007],
            ]
        ],
        rtol=1e-5,
    )
    # default: center anchors, no scaling, no clip
    np.testing.assert_allclose(
        mx.nd.contrib.box_decode(data, anchors).asnumpy()[0, :2],
        [[-1.1498588, -0.27032003, 1.5498589, 1.07032], [-0.5, -1, 2.5, 3]],
        rtol=1e-5,
    )


def test_box_decode_refuses_anchors_of_another_count():
    with pytest.raises(LazyNDError, match="box_decode.*'anchors'"):
        mx.nd.contrib.box_decode(mx.nd.array(OFFSETS), mx.nd.zeros((1, 3, 4)))


@pytest.mark.parametrize("batch", [2, 3])
def test_box_decode_refuses_anchors_of_more_than_one_item(batch):
    # MXNet 1.9.1 refuses them; a batch of 3 against 'data's 2 failed inside the kernel (a NumPy broadcast)
    data = mx.nd.array(np.concatenate([OFFSETS, OFFSETS]))
    with pytest.raises(
        LazyNDError, match=rf"box_decode: 'anchors' must be \(1, anchors, 4\), got shape \({batch}, 4, 4\)"
    ):
        mx.nd.contrib.box_decode(data, mx.nd.zeros((batch, 4, 4))).wait_to_read()


@pytest.mark.parametrize("batch,anchors", [(0, 3), (2, 0)])
def test_box_encode_of_a_zero_size_batch_is_empty(batch, anchors):
    # it raised "cannot infer the output shape" (a 0 was taken for an unknown dim); MXNet 1.9.1
    # under NumPy shape semantics gives empty targets and masks
    zeros = mx.nd.zeros
    targets, masks = mx.nd.contrib.box_encode(
        zeros((batch, anchors)),
        zeros((batch, anchors)),
        zeros((batch, anchors, 4)),
        zeros((batch, 2, 4)),
        zeros(4),
        mx.nd.ones(4),
    )
    assert targets.asnumpy().shape == masks.asnumpy().shape == (batch, anchors, 4)

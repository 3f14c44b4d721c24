"""SSD's MultiBoxPrior, MultiBoxTarget and MultiBoxDetection against MXNet 1.9.1 (they were
missing: mx.nd.contrib.MultiBox* raised)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError

# MXNet 1.9.1's MultiBoxPrior(zeros((1, 3, 2, 3)), sizes=(0.5, 0.25), ratios=(1, 2, 0.5)), first cell
FIRST_CELL = [
    [0.0, 0.0, 0.33333334, 0.5],
    [0.08333334, 0.125, 0.25, 0.375],
    [-0.06903559, 0.07322331, 0.40236893, 0.4267767],
    [0.04881554, -0.10355338, 0.2845178, 0.6035534],
]


def test_multibox_prior_matches_mxnet(ctx):
    out = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 3, 2, 3), ctx=ctx), sizes=(0.5, 0.25), ratios=(1, 2, 0.5))
    assert out.shape == (1, 24, 4)
    np.testing.assert_allclose(out.asnumpy()[0, :4], FIRST_CELL, rtol=1e-6)
    # the last cell: row 1, column 2
    np.testing.assert_allclose(out.asnumpy()[0, 20], [0.6666667, 0.5, 1.0, 1.0], rtol=1e-6)


def test_multibox_prior_steps_offsets_and_clip():
    out = mx.nd.contrib.MultiBoxPrior(
        mx.nd.zeros((1, 3, 2, 3)), sizes=(0.5,), ratios=(1,), clip=True, steps=(0.4, 0.3), offsets=(0.2, 0.7)
    ).asnumpy()
    np.testing.assert_allclose(
        out[0, [0, 4]], [[0.04333334, 0.0, 0.37666667, 0.33], [0.34333336, 0.23000002, 0.67666674, 0.73]], rtol=1e-6
    )


def test_multibox_prior_symbol_infers_its_shape_and_has_no_gradient():
    net = sym.contrib.MultiBoxPrior(sym.Variable("d"), sizes=(0.5, 0.25), ratios=(1, 2, 0.5))
    assert net.infer_shape(d=(2, 3, 4, 5))[1] == [(1, 80, 4)]
    x = mx.nd.zeros((1, 1, 2, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.MultiBoxPrior(x)
    y.backward()
    assert not x.grad.asnumpy().any()


@pytest.mark.parametrize("steps", [(0, 0.3), (0.2, 0), (-1, 0.3), (0.25, -1)])
def test_multibox_prior_refuses_one_step_without_the_other(steps):
    # MXNet 1.9.1 refuses (-1, 0.3) ("Must specify both step_y and step_x") but takes (0, 0.3) and
    # drops its 0.3 for one cell each way; lazynd took one axis's step and filled in the other's
    with pytest.raises(LazyNDError, match=r"MultiBoxPrior: 'steps' must give both steps \(y, x\) or neither"):
        mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 3)), sizes=(0.2,), steps=steps)
    with pytest.raises(LazyNDError, match="MultiBoxPrior: 'steps'"):
        sym.contrib.MultiBoxPrior(sym.Variable("data"), sizes=(0.2,), steps=steps).infer_shape(data=(1, 1, 2, 3))


def test_multibox_prior_steps_left_out_together_are_one_cell():
    data = mx.nd.zeros((1, 1, 2, 3))
    auto = mx.nd.contrib.MultiBoxPrior(data, sizes=(0.2,)).asnumpy()
    np.testing.assert_array_equal(mx.nd.contrib.MultiBoxPrior(data, sizes=(0.2,), steps=(0, -2)).asnumpy(), auto)
    np.testing.assert_allclose(auto[0, 4], [0.43333334, 0.65, 0.56666666, 0.85], rtol=1e-6)  # MXNet 1.9.1's


def test_multibox_prior_refuses_empty_sizes():
    with pytest.raises(LazyNDError, match="MultiBoxPrior.*'sizes'"):
        mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2)), sizes=())


ANCHORS = np.array([[[0, 0, 0.5, 0.5], [0.1, 0.1, 0.6, 0.6], [0.5, 0.5, 1, 1], [0.2, 0.3, 0.4, 0.9]]], np.float32)
LABELS = np.array([[[1, 0, 0, 0.5, 0.55], [0, 0.5, 0.5, 0.9, 1], [-1, -1, -1, -1, -1]]], np.float32)


def test_multibox_target_matches_mxnet(ctx):
    cls_pred = mx.nd.array(np.random.RandomState(0).randn(1, 3, 4), ctx=ctx)
    loc, mask, cls = mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS, ctx=ctx), mx.nd.array(LABELS, ctx=ctx), cls_pred)
    np.testing.assert_allclose(
        loc.asnumpy(),
        [[0, 0.5000001, 0, 0.47655103, -2.0000005, -1.5000004, 0, 0.47655103, -1.0000002, 0, -1.115718, 0, 0, 0, 0, 0]],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_array_equal(mask.asnumpy(), [[1] * 12 + [0] * 4])
    np.testing.assert_array_equal(cls.asnumpy(), [[2, 2, 1, 0]])


def test_multibox_target_of_an_image_without_objects_ignores_every_anchor():
    outs = mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), -mx.nd.ones((1, 2, 5)), mx.nd.zeros((1, 3, 4)))
    assert not outs[0].asnumpy().any() and not outs[1].asnumpy().any()
    np.testing.assert_array_equal(outs[2].asnumpy(), [[-1, -1, -1, -1]])


def test_multibox_target_mines_the_hardest_negatives():
    # one object matched by anchor 0; ratio 1 keeps one negative: the lowest background probability
    labels = np.array([[[0, 0, 0, 0.5, 0.5]]], np.float32)
    scores = np.zeros((1, 2, 4), np.float32)
    scores[0, 1] = [0, 1, 3, 2]  # anchor 2 is the least likely background
    cls = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(ANCHORS), mx.nd.array(labels), mx.nd.array(scores), negative_mining_ratio=1, ignore_label=-3
    )[2]
    np.testing.assert_array_equal(cls.asnumpy(), [[1, -3, 0, -3]])


@pytest.mark.parametrize("overlap_threshold", [0.0, 0.6])
def test_multibox_target_mines_no_negative_overlapping_an_object_at_any_overlap_threshold(overlap_threshold):
    # anchor 1 overlaps the object (matched by anchor 0) by 0.5 and is the least likely background:
    # at negative_mining_thresh 0.5 it is no negative, whatever overlap_threshold (MXNet 1.9.1:
    # [[1, -1, 0, 0]]); with overlap_threshold 0 it was mined, the anchors' overlaps left unread
    anchors = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.25], [0.6, 0.6, 1, 1], [0.7, 0.7, 1, 1]]], np.float32)
    labels = np.array([[[0, 0, 0, 0.5, 0.5]]], np.float32)
    scores = np.zeros((1, 2, 4), np.float32)
    scores[0, 1] = [0, 5, 2, 1]
    cls = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(anchors),
        mx.nd.array(labels),
        mx.nd.array(scores),
        overlap_threshold=overlap_threshold,
        negative_mining_ratio=2,
        negative_mining_thresh=0.5,
    )[2]
    np.testing.assert_array_equal(cls.asnumpy(), [[1, -1, 0, 0]])


@pytest.mark.parametrize("thresh", [0.0, -0.5])
def test_multibox_target_refuses_negative_mining_without_a_positive_threshold(thresh):
    # MXNet 1.9.1 refuses it; it ran, mining among no anchors
    with pytest.raises(
        LazyNDError, match=rf"MultiBoxTarget: negative mining .* needs negative_mining_thresh above 0, got {thresh}"
    ):
        mx.nd.contrib.MultiBoxTarget(
            mx.nd.array(ANCHORS),
            mx.nd.array(LABELS),
            mx.nd.zeros((1, 3, 4)),
            negative_mining_ratio=3,
            negative_mining_thresh=thresh,
        )
    # without mining, the threshold is not read (MXNet takes it too)
    mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(ANCHORS), mx.nd.array(LABELS), mx.nd.zeros((1, 3, 4)), negative_mining_thresh=thresh
    )[2].wait_to_read()


def test_multibox_target_refuses_a_class_minus_one_row_holding_a_box():
    # class -1 ends an image's objects as padding; MXNet 1.9.1 refuses one whose box is not -1,
    # where it ran, dropping that object and every one after it
    labels = LABELS.copy()
    labels[0, 1, 0] = -1
    with pytest.raises(
        LazyNDError,
        match=r"MultiBoxTarget: row 1 of an image's 'label' is of class -1.*box \[0.5, 0.5, 0.9, 1\]; expected",
    ):
        mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(labels), mx.nd.zeros((1, 3, 4)))[2].asnumpy()


CLS_PROB = np.array([[[0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.4, 0.5, 0.2]]], np.float32)
BOXES = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5], [0, 0, 1, 0.5]]], np.float32)


def test_multibox_detection_matches_mxnet(ctx):
    def nd(a):
        return mx.nd.array(a, ctx=ctx)

    out = mx.nd.contrib.MultiBoxDetection(nd(CLS_PROB), nd(np.zeros((1, 12))), nd(BOXES)).asnumpy()
    # ties in order; an overlap equal to nms_threshold suppresses (the class becomes -1, the row stays)
    np.testing.assert_allclose(out, [[[0, 0.5, 0, 0, 0.5, 0.5], [1, 0.5, 0, 0, 0.5, 0.5], [-1, 0.2, 0, 0, 1, 0.5]]])
    out = mx.nd.contrib.MultiBoxDetection(nd(CLS_PROB), nd(np.zeros((1, 12))), nd(BOXES), force_suppress=True)
    np.testing.assert_array_equal(out.asnumpy()[0, :, 0], [0, -1, -1])


def test_multibox_detection_decodes_with_variances_and_drops_low_scores():
    rng = np.random.RandomState(0)
    logits = rng.randn(1, 3, 4)
    cls = mx.nd.softmax(mx.nd.array(logits), axis=1)
    loc = mx.nd.array(rng.randn(1, 16) * 0.1)
    anchors = mx.nd.array(ANCHORS)
    out = mx.nd.contrib.MultiBoxDetection(cls, loc, anchors, threshold=0.3, nms_threshold=0.1, force_suppress=True)
    # MXNet 1.9.1's values (the fourth detection is below the threshold: a row of -1)
    np.testing.assert_allclose(
        out.asnumpy()[0],
        [
            [0, 0.48995122, 0.00157601, 0, 0.5060344, 0.5022823],
            [-1, 0.44658452, 0.10590017, 0.10320844, 0.6090407, 0.59474003],
            [0, 0.4039286, 0.48287532, 0.5069516, 0.9915948, 0.9995847],
            [-1] * 6,
        ],
        rtol=1e-5,
        atol=1e-6,
    )


def test_multibox_detection_of_a_huge_size_offset_is_an_infinite_box_without_a_warning():
    # an untrained SSD head (ApexAI/mxnet-ssd's object_detector on fresh weights) predicts such offsets
    cls = mx.nd.array([[[0.1, 0.2], [0.9, 0.8]]])
    loc = mx.nd.array([[0, 0, 1000, 0, 0, 0, 0, 0]])
    anchors = mx.nd.array([[[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.9]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        unclipped = mx.nd.contrib.MultiBoxDetection(cls, loc, anchors, clip=False).asnumpy()[0]
        clipped = mx.nd.contrib.MultiBoxDetection(cls, loc, anchors).asnumpy()[0]
    # MXNet 1.9.1's values
    np.testing.assert_allclose(unclipped[0], [0, 0.9, -np.inf, 0.1, np.inf, 0.3], rtol=1e-6)
    np.testing.assert_allclose(clipped[0], [0, 0.9, 0, 0.1, 1, 0.3], rtol=1e-6)
    np.testing.assert_allclose(clipped[1], [0, 0.8, 0.5, 0.5, 0.9, 0.9], rtol=1e-6)


def test_multibox_detection_rows_past_nms_topk_are_in_anchor_order_as_mxnet():
    cls = mx.nd.array(np.array([[[0, 0, 0], [0.2, 0.9, 0.5]]], np.float32))
    boxes = np.array([[[0, 0, 0.1, 0.1], [0.3, 0.3, 0.4, 0.4], [0.6, 0.6, 0.7, 0.7]]], np.float32)
    out = mx.nd.contrib.MultiBoxDetection(cls, mx.nd.zeros((1, 12)), mx.nd.array(boxes), nms_topk=1).asnumpy()
    np.testing.assert_allclose(out[0, :, :2], [[0, 0.9], [-1, 0.9], [-1, 0.5]])


@pytest.mark.parametrize("nms_threshold", [0.0, -0.5])
def test_multibox_detection_without_a_positive_nms_threshold_lists_detections_in_anchor_order(nms_threshold):
    # MXNet 1.9.1 sorts, cuts to nms_topk and suppresses only for nms_threshold > 0; it suppressed
    # every overlap here (and sorted)
    out = mx.nd.contrib.MultiBoxDetection(
        mx.nd.array(CLS_PROB), mx.nd.zeros((1, 12)), mx.nd.array(BOXES), nms_threshold=nms_threshold, nms_topk=1
    ).asnumpy()
    np.testing.assert_allclose(out[0, :, :2], [[0, 0.5], [1, 0.5], [1, 0.2]])  # MXNet 1.9.1


def test_multibox_ssd_head_runs_as_a_symbol():
    data, label = sym.Variable("data"), sym.Variable("label")
    anchors = sym.contrib.MultiBoxPrior(data, sizes=(0.5,), ratios=(1, 2))
    cls_pred = sym.Variable("cls_pred")
    target = sym.contrib.MultiBoxTarget(anchors, label, cls_pred)
    detection = sym.contrib.MultiBoxDetection(sym.softmax(cls_pred, axis=1), sym.Variable("loc_pred"), anchors)
    net = sym.Group([*target, detection])
    ex = net.simple_bind(mx.cpu(), data=(1, 1, 2, 2), label=(1, 2, 5), cls_pred=(1, 3, 8), loc_pred=(1, 32))
    ex.arg_dict["label"][:] = np.array([[[1, 0, 0, 0.5, 0.5], [-1] * 5]])
    outs = [o.asnumpy() for o in ex.forward()]
    assert [o.shape for o in outs] == [(1, 32), (1, 32), (1, 8), (1, 8, 6)]
    assert outs[2][0, 0] == 2  # the first anchor covers the object exactly


def test_multibox_bad_shapes_are_clear_errors():
    with pytest.raises(LazyNDError, match="MultiBoxDetection.*'anchor'"):
        mx.nd.contrib.MultiBoxDetection(mx.nd.array(CLS_PROB), mx.nd.zeros((1, 12)), mx.nd.zeros((1, 3, 5)))
    with pytest.raises(LazyNDError, match="MultiBoxTarget.*'label'"):
        mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.zeros((1, 2, 3)), mx.nd.zeros((1, 3, 4)))

"""mx.nd.contrib Proposal and MultiProposal (Faster R-CNN's RPN) against MXNet 1.9.1 (they were
missing: mx.nd.contrib.<op> raised).  The expected values were computed with MXNet 1.9.1's CPU
operators on the inputs made by ``_inputs`` and pasted here."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError


def _inputs(batch: int, anchors: int, height: int, width: int, spread: float, seed: int) -> tuple:
    rng = np.random.RandomState(seed)
    cls_prob = rng.rand(batch, 2 * anchors, height, width).astype(np.float32)
    bbox_pred = (rng.randn(batch, 4 * anchors, height, width) * spread).astype(np.float32)
    return cls_prob, bbox_pred


def test_proposal_matches_mxnet(ctx):
    cls_prob, bbox_pred = _inputs(1, 2, 3, 4, 0.3, 0)
    rois, score = mx.nd.contrib.Proposal(
        mx.nd.array(cls_prob, ctx=ctx),
        mx.nd.array(bbox_pred, ctx=ctx),
        mx.nd.array([[22, 30, 1.0]], ctx=ctx),
        feature_stride=8,
        scales=(1.5,),
        ratios=(0.5, 2),
        rpn_pre_nms_top_n=10,
        rpn_post_nms_top_n=8,
        threshold=0.5,
        rpn_min_size=6,
        output_score=True,
    )
    expected = [
        [0, 15.551907, 2.622622, 25.37247, 15.910293],
        [0, 0, 9.007057, 6.761329, 14.352137],
        [0, 10.341397, 12.325343, 17.932453, 21],
        [0, 1.45196, 6.920372, 17.211103, 17.712976],
        [0, 0, 0, 9.541341, 15.676334],
        [0, 3.531607, 5.112658, 23.06572, 14.462004],
        [0, 6.495039, 0, 15.612886, 7.022369],
        [0, 0, 0, 6.510689, 5.086262],
    ]
    np.testing.assert_allclose(rois.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        score.asnumpy().ravel(),
        [0.697631, 0.521848, 0.437032, 0.414662, 0.359508, 0.264556, 0.143353, 0.118274],
        rtol=1e-5,
    )


def test_multi_proposal_with_iou_loss_matches_mxnet_per_image(ctx):
    # image 1 is half the scale: its last box is below the minimum size and scores -1
    cls_prob, bbox_pred = _inputs(2, 1, 2, 3, 2.0, 1)
    rois, score = mx.nd.contrib.MultiProposal(
        mx.nd.array(cls_prob, ctx=ctx),
        mx.nd.array(bbox_pred, ctx=ctx),
        mx.nd.array([[16, 20, 1.0], [12, 24, 0.5]], ctx=ctx),
        feature_stride=8,
        scales=(1.0,),
        ratios=(1.0,),
        rpn_post_nms_top_n=4,
        threshold=0.3,
        rpn_min_size=2,
        iou_loss=True,
        output_score=True,
    )
    expected = [
        [0, 1.16563, 6.632545, 6.206493, 15],
        [0, 5.798761, 7.75422, 13.625654, 15],
        [0, 6.244283, 1.004989, 16.06071, 6.974671],
        [0, 0, 1.803181, 6.464224, 5.657508],
        [1, 14.505684, 0.240318, 22.582212, 5.491204],
        [1, 6.224742, 4.200511, 14.301314, 8.770283],
        [1, 0, 0.381831, 4.714964, 7.571175],
        [1, 3.384909, 9.234406, 8.173246, 11],
    ]
    np.testing.assert_allclose(rois.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        score.asnumpy().ravel(),
        [0.538817, 0.419195, 0.345561, 0.18626, 0.800745, 0.198101, 0.140387, -1],
        rtol=1e-5,
    )


def test_proposal_repeats_the_survivors_to_fill_the_output():
    # every anchor covers the whole 16 x 16 image: suppression keeps the best one only
    cls_prob = np.zeros((1, 2, 2, 2), np.float32)
    cls_prob[0, 1] = [[0.1, 0.9], [0.3, 0.2]]
    rois = mx.nd.contrib.Proposal(
        mx.nd.array(cls_prob),
        mx.nd.zeros((1, 4, 2, 2)),
        mx.nd.array([[16, 16, 1]]),
        feature_stride=8,
        scales=(4.0,),
        ratios=(1.0,),
        rpn_post_nms_top_n=3,
        rpn_min_size=1,
        threshold=0.1,
    )
    np.testing.assert_array_equal(rois.asnumpy(), [[0, 0, 0, 15, 15]] * 3)


def test_proposal_shows_its_score_only_with_output_score():
    assert sym.contrib.Proposal(name="p").list_outputs() == ["p_output"]
    assert sym.contrib.Proposal(name="p", output_score=True).list_outputs() == ["p_output", "p_score"]
    assert sym.contrib.MultiProposal(name="p").list_arguments() == ["p_cls_prob", "p_bbox_pred", "p_im_info"]
    net = sym.contrib.MultiProposal(name="p", rpn_post_nms_top_n=7)
    _, out_shapes, _ = net.infer_shape(p_cls_prob=(3, 24, 5, 5))
    assert out_shapes == [(21, 5)]


def test_proposal_gives_zero_gradients():
    cls_prob, bbox_pred = (mx.nd.array(x) for x in _inputs(1, 1, 2, 2, 0.3, 2))
    for x in (cls_prob, bbox_pred):
        x.attach_grad()
    with mx.autograd.record():
        rois = mx.nd.contrib.Proposal(cls_prob, bbox_pred, mx.nd.array([[32, 32, 1]]), scales=(1.0,), ratios=(1.0,))
    rois.backward()
    assert not cls_prob.grad.asnumpy().any() and not bbox_pred.grad.asnumpy().any()


def _proposal_net() -> sym.Symbol:
    inputs = {name: sym.Variable(name) for name in ("cls_prob", "bbox_pred", "im_info")}
    return sym.contrib.Proposal(
        **inputs, scales=(2.0,), ratios=(1.0,), feature_stride=4, rpn_pre_nms_top_n=10, rpn_post_nms_top_n=3,
        rpn_min_size=1, threshold=0.5, name="p",
    )  # fmt: skip


def test_proposal_shapes_are_one_images_whatever_the_batch_inferred_as_in_mxnet():
    # mx-rcnn's train_end2end infers the whole batch's shapes, then gives each device one image
    _, out_shapes, _ = _proposal_net().infer_shape(cls_prob=(2, 2, 4, 4))
    assert out_shapes == [(3, 5)]


def test_proposal_runs_one_image_per_device_of_a_module():
    rng = np.random.RandomState(0)
    cls_prob = rng.uniform(size=(2, 2, 4, 4)).astype("f")
    bbox_pred = rng.normal(0, 0.1, (2, 4, 4, 4)).astype("f")
    im_info = np.array([[16, 16, 1], [12, 16, 1]], "f")
    module = mx.mod.Module(_proposal_net(), ["cls_prob", "bbox_pred", "im_info"], None, context=[mx.cpu(0), mx.cpu(1)])
    module.bind([("cls_prob", (2, 2, 4, 4)), ("bbox_pred", (2, 4, 4, 4)), ("im_info", (2, 3))], for_training=False)
    module.init_params()
    module.forward(mx.io.DataBatch([mx.nd.array(x) for x in (cls_prob, bbox_pred, im_info)]), is_train=False)
    rois = module.get_outputs()[0].asnumpy()
    assert rois.shape == (6, 5)
    for image in range(2):
        alone = mx.nd.contrib.Proposal(
            *(mx.nd.array(x[image : image + 1]) for x in (cls_prob, bbox_pred, im_info)),
            scales=(2.0,), ratios=(1.0,), feature_stride=4, rpn_pre_nms_top_n=10, rpn_post_nms_top_n=3,
            rpn_min_size=1, threshold=0.5,
        )  # fmt: skip
        np.testing.assert_allclose(rois[3 * image : 3 * image + 3], alone.asnumpy(), rtol=1e-6)


def test_proposal_refuses_a_batch_and_mismatched_inputs():
    rois = mx.nd.contrib.Proposal(mx.nd.zeros((2, 24, 3, 3)), mx.nd.zeros((2, 48, 3, 3)), mx.nd.zeros((2, 3)))
    assert rois.shape == (300, 5)
    with pytest.raises(LazyNDError, match=r"Proposal: runs on one image per device \(batch 1\), got a batch of 2"):
        rois.asnumpy()
    with pytest.raises(
        LazyNDError, match=r"'bbox_pred' must be \(1, 48, 3, 3\) for 12 anchors.*got shape \(1, 40, 3, 3\)"
    ):
        mx.nd.contrib.Proposal(mx.nd.zeros((1, 24, 3, 3)), mx.nd.zeros((1, 40, 3, 3)), mx.nd.zeros((1, 3)))
    with pytest.raises(LazyNDError, match=r"'cls_prob' must be \(2, 2, 3, 3\)"):
        mx.nd.contrib.MultiProposal(
            mx.nd.zeros((2, 3, 3, 3)), mx.nd.zeros((2, 4, 3, 3)), mx.nd.zeros((2, 3)), scales=(1,), ratios=(1,)
        )
    with pytest.raises(LazyNDError, match="scales and ratios must be non-empty"):
        mx.nd.contrib.MultiProposal(
            mx.nd.zeros((1, 2, 3, 3)), mx.nd.zeros((1, 4, 3, 3)), mx.nd.zeros((1, 3)), scales=(), ratios=(1,)
        )


@pytest.mark.parametrize(
    "op,im_info,cells",
    [
        ("Proposal", [[48, 48, 1]], "3 x 3"),
        ("Proposal", [[32, 64, 1]], "2 x 4"),
        ("MultiProposal", [[32, 48, 1], [32, 64, 1]], "2 x 4"),
    ],
)
def test_proposal_refuses_an_image_beyond_the_feature_map(op, im_info, cells):
    # MXNet 1.9.1 refuses it (Proposal raises, MultiProposal aborts the process); it ran, as if the
    # feature map covered the whole image
    batch = len(im_info)
    cls_prob, bbox_pred = _inputs(batch, 1, 2, 3, 0.1, 0)
    rois = getattr(mx.nd.contrib, op)(
        mx.nd.array(cls_prob), mx.nd.array(bbox_pred), mx.nd.array(im_info), scales=(8,), ratios=(1,)
    )
    image = batch - 1
    with pytest.raises(
        LazyNDError,
        match=rf"{op}: image {image}'s im_info .* spans {cells} cells of feature_stride 16, expected at most the feature map's 2 x 3",
    ):
        rois.asnumpy()
    # an image within it (47.9 rows: 2 whole cells) runs
    fits = getattr(mx.nd.contrib, op)(
        mx.nd.array(cls_prob), mx.nd.array(bbox_pred), mx.nd.array([[47.9, 63.9, 1]] * batch), scales=(8,), ratios=(1,)
    )
    fits.asnumpy()


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_proposal_refuses_a_non_finite_im_info(value):
    # it failed inside the kernel with NumPy's "cannot convert float infinity (NaN) to integer"
    cls_prob, bbox_pred = _inputs(1, 1, 2, 3, 0.1, 0)
    rois = mx.nd.contrib.Proposal(
        mx.nd.array(cls_prob), mx.nd.array(bbox_pred), mx.nd.array([[value, 48, 1]]), scales=(8,), ratios=(1,)
    )
    with pytest.raises(
        LazyNDError, match=rf"Proposal: image 0's im_info \[{value}, 48.0, 1.0\] holds a non-finite value"
    ):
        rois.asnumpy()

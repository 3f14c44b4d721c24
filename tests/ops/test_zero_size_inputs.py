"""Zero-size and 0-d inputs reach a shape rule or a kernel that knows what to do with them.

In an imperative call a 0 in a shape is a size (NumPy shape semantics), so a parameter whose shape is
read from the data must match it exactly; before, the shape rules took such a 0 as an unknown dim
and the kernel failed inside the engine (a NumPy broadcast error, an IndexError).  Kernels that can
answer an empty input answer it as MXNet 1.9.1 does under ``set_np_shape(True)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ShapeError


def _batch_norm_inputs(data_shape: tuple, stats: tuple = (3,)) -> list:
    return [mx.nd.ones(data_shape), mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.ones(stats), mx.nd.ones((3,))]


@pytest.mark.parametrize(
    ("op", "extra"), [("BatchNorm", {}), ("BatchNorm_v1", {}), ("_contrib_SyncBatchNorm", {"key": "k"})]
)
def test_batch_norm_of_data_with_no_channels_refuses_gamma_of_three(op: str, extra: dict) -> None:
    with pytest.raises(ShapeError, match=rf"{op}: shape of 'gamma' is \(3,\), expected \(0,\)"):
        getattr(mx.nd, op)(*_batch_norm_inputs((3, 0)), **extra)


def test_batch_norm_refuses_empty_moving_statistics_for_three_channels() -> None:
    with pytest.raises(ShapeError, match=r"BatchNorm: shape of 'moving_mean' is \(0,\), expected \(3,\)"):
        mx.nd.BatchNorm(*_batch_norm_inputs((2, 3), stats=(0,)))


def test_batch_norm_of_an_empty_batch_is_empty() -> None:
    assert mx.nd.BatchNorm(*_batch_norm_inputs((0, 3))).shape == (0, 3)


def test_kl_sparse_reg_refuses_an_empty_moving_average_for_four_units() -> None:
    with pytest.raises(ShapeError, match=r"IdentityAttachKLSparseReg: shape of 'moving_avg' is \(0,\)"):
        mx.nd.IdentityAttachKLSparseReg(mx.nd.ones((3, 4)), mx.nd.ones((0,)))


def test_multibox_target_refuses_labels_and_anchors_of_width_zero() -> None:
    anchors, scores = mx.nd.ones((1, 3, 4)) * 0.5, mx.nd.ones((1, 3, 3))
    with pytest.raises(ShapeError, match=r"'label' must be \(batch, objects, 5 or more\), got shape \(1, 2, 0\)"):
        mx.nd.contrib.MultiBoxTarget(anchors, mx.nd.ones((1, 2, 0)), scores)
    with pytest.raises(ShapeError, match=r"'anchor' must be \(1, anchors, 4\), got shape \(1, 3, 0\)"):
        mx.nd.contrib.MultiBoxTarget(mx.nd.ones((1, 3, 0)), mx.nd.ones((1, 2, 5)), scores)


def test_multibox_target_symbol_still_takes_an_unknown_label_width() -> None:
    net = mx.sym.contrib.MultiBoxTarget(mx.sym.var("anchor"), mx.sym.var("label"), mx.sym.var("cls_pred"))
    _, outs, _ = net.infer_shape_partial(anchor=(1, 3, 4), label=(1, 2, 0), cls_pred=(1, 3, 3))
    assert outs == [(1, 12), (1, 12), (1, 3)]


def test_softmax_activation_refuses_a_0d_input() -> None:
    # MXNet 1.9.1 refuses it at shape inference; lazynd's kernel read an axis it did not have
    with pytest.raises(mx.OperatorError, match="SoftmaxActivation: mode='instance' needs an input with at least 1"):
        mx.nd.SoftmaxActivation(mx.nd.array(0.5))


@pytest.mark.parametrize("lengths", [None, [0, 0]])
def test_ctc_loss_of_labels_of_width_zero_is_the_loss_of_empty_labels(lengths: list | None) -> None:
    # every label is empty: the same loss as labels of padding only (argmax of no columns failed)
    data = mx.nd.array(np.random.RandomState(0).randn(4, 2, 5))
    extra = {} if lengths is None else {"use_label_lengths": True, "label_lengths": mx.nd.array(lengths)}
    loss = mx.nd.CTCLoss(data, mx.nd.ones((2, 0)), **extra).asnumpy()
    padding_only = mx.nd.CTCLoss(data, mx.nd.zeros((2, 3))).asnumpy()
    np.testing.assert_allclose(loss, padding_only, rtol=1e-6)


def test_bilinear_sampler_reads_zeros_from_an_empty_image() -> None:
    # MXNet 1.9.1 (np shape semantics): every point lies outside the image and reads 0
    data, grid = mx.nd.ones((1, 2, 0, 3)), mx.nd.ones((1, 2, 3, 3)) * 0.1
    data.attach_grad()
    grid.attach_grad()
    with mx.autograd.record():
        out = mx.nd.BilinearSampler(data, grid)
    out.backward()
    assert out.shape == (1, 2, 3, 3) and not out.asnumpy().any()
    assert data.grad.shape == (1, 2, 0, 3) and not grid.grad.asnumpy().any()


def test_multibox_target_with_an_infinite_mining_ratio_takes_every_negative() -> None:
    # int() of positives * inf raised OverflowError inside the kernel; an unbounded ratio asks for
    # every other anchor, as any ratio past their count does (MXNet 1.9.1's int conversion overflows)
    anchors = mx.nd.array([[[0, 0, 0.5, 0.5], [0.25, 0.25, 0.75, 1], [0.1, 0, 0.4, 0.25], [0.5, 0.5, 0.75, 0.75]]])
    labels = mx.nd.array([[[1, 0, 0, 0.5, 0.5], [-1, -1, -1, -1, -1]]])
    scores = mx.nd.array(np.random.RandomState(0).rand(1, 3, 4))

    def classes(ratio: float) -> np.ndarray:
        out = mx.nd.contrib.MultiBoxTarget(
            anchors, labels, scores, negative_mining_ratio=ratio, negative_mining_thresh=0.5
        )
        return out[2].asnumpy()

    np.testing.assert_array_equal(classes(float("inf")), classes(1e6))
    np.testing.assert_array_equal(classes(float("inf")), [[2, 0, 0, 0]])


@pytest.mark.parametrize(("data", "anchors"), [((1, 2, 4), (1, 2, 0)), ((1, 2, 0), (1, 2, 4))])
def test_box_decode_refuses_boxes_of_width_zero(data: tuple, anchors: tuple) -> None:
    # MXNet 1.9.1: "last dimension of anchors must be 4"; lazynd's kernel read column 2 of nothing
    with pytest.raises(ShapeError, match=r"_contrib_box_decode: '(data|anchors)' must be"):
        mx.nd.contrib.box_decode(mx.nd.ones(data), mx.nd.ones(anchors))


def test_box_decode_leaves_a_zero_dim_unknown_in_a_symbol() -> None:
    # in a symbol's shapes a 0 is still an unknown dim: the anchors' width comes from the bound array
    out = mx.sym.contrib.box_decode(mx.sym.var("data"), mx.sym.var("anchors"))
    _, shapes, _ = out.infer_shape_partial(data=(1, 2, 4), anchors=(1, 2, 0))
    assert shapes == [(1, 2, 4)]

"""In an imperative call every shape is complete, so a 0 is a zero-size axis, never an unknown
dimension: shape rules refuse zero-size inputs that do not fit at the call, naming the operator,
instead of handing a kernel shapes it fails on at the wait, and keep computing the ones that fit."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

MISFITS = [
    ("broadcast_add", [(3, 0), (1, 4)], {}, "cannot be broadcast together"),
    ("broadcast_mul", [(0, 4), (3, 4)], {}, "cannot be broadcast together"),
    ("broadcast_to", [(0, 4)], {"shape": (3, 4)}, "cannot broadcast axis 0 of size 0 to 3"),
    ("dot", [(3, 0), (4, 5)], {}, "inner dimensions differ"),
    ("dot", [(), (3,)], {}, "must have at least one dim"),
    ("Reshape", [(0, 4)], {"shape": (2, 6)}, "with 12 elements, expected 0"),
    ("Reshape", [(0, 4)], {"target_shape": (2, 6)}, "with 12 elements, expected 0"),
    ("slice_like", [(0, 4, 1), (2, 4, 1)], {}, "has size 2, more than data's 0"),
    ("take", [(0, 4), (3,)], {}, r"axis 0 of 'a' \(0, 4\) has size 0, nothing to take 3"),
    ("take", [(3, 0), (3,)], {"axis": 1}, "axis 1 of 'a' .* has size 0"),
    ("pick", [(0, 4), (3,)], {}, r"shape of 'index' is \(3,\), expected \(0,\)"),
    ("pick", [(3, 0), (3,)], {}, "axis 1 of 'data' .* has size 0"),
    ("batch_take", [(0, 4), (3,)], {}, r"shape of 'indices' is \(3,\), expected \(0,\)"),
    ("batch_take", [(3, 0), (3,)], {}, "axis 1 of 'a' .* has size 0"),
    ("choose_element_0index", [(0, 4), (3,)], {}, r"shape of 'rhs' is \(3,\), expected \(0,\)"),
    ("fill_element_0index", [(3, 0), (3,), (3,)], {}, "axis 1 of 'lhs' .* has size 0"),
    ("FullyConnected", [(3, 0), (5, 4), (5,)], {"num_hidden": 5}, r"'weight' is \(5, 4\), expected \(5, 0\)"),
    ("LayerNorm", [(2, 3, 0), (4,), (4,)], {}, r"'gamma' is \(4,\), expected \(0,\)"),
    (
        "Convolution",
        [(1, 0, 5, 5), (2, 1, 3, 3), (2,)],
        {"kernel": (3, 3), "num_filter": 2},
        r"'weight' is \(2, 1, 3, 3\), expected \(2, 0, 3, 3\)",
    ),
    # two input dims that must be equal (``dims_differ``): a 0 is a size, not an unknown
    ("batch_dot", [(0, 3, 4), (2, 4, 5)], {}, "incompatible shapes"),
    ("batch_dot", [(2, 3, 0), (2, 4, 5)], {}, "incompatible shapes"),
    ("linalg_gemm", [(0, 3, 4), (2, 4, 3), (2, 3, 3)], {}, "different batch dims"),
    ("linalg_gemm", [(2, 3, 0), (2, 4, 3), (2, 3, 3)], {}, "incompatible matrices"),
    ("linalg_gemm2", [(3, 0), (4, 3)], {}, "incompatible matrices"),
    ("linalg_trmm", [(0, 3), (3, 4)], {}, r"'A' must hold square matrices, got shape \(0, 3\)"),
    ("linalg_trmm", [(3, 0), (3, 4)], {}, r"'A' must hold square matrices, got shape \(3, 0\)"),
    ("linalg_potrf", [(3, 0)], {}, "must hold square matrices"),
    ("linalg_extracttrian", [(0, 3)], {}, "must hold square matrices"),
    ("broadcast_like", [(0, 4), (3, 4)], {}, r"lhs \(0, 4\) cannot be broadcast to rhs \(3, 4\)"),
    ("broadcast_like", [(1, 0), (3, 4)], {}, r"lhs \(1, 0\) cannot be broadcast"),
    # shapes taken from another input: a 0 counts in sizes and broadcasts
    ("reshape_like", [(0, 6), (3, 4)], {}, r"lhs \(0, 6\) has 0 elements, rhs \(3, 4\) has 12"),
    ("reshape_like", [(2, 0), (3, 4)], {}, "has 0 elements"),
    ("broadcast_axis", [(3, 0)], {"axis": 1, "size": 4}, r"axis 1 of the input \(3, 0\) has size 0, expected 1"),
    ("_reduce_to_like", [(3, 0), (1, 4)], {}, r"like \(1, 4\) cannot be broadcast to data \(3, 0\)"),
    ("_reduce_to_like", [(), (1, 4)], {}, r"like \(1, 4\) cannot be broadcast to data \(\)"),
    # shapes a rule builds from input dims (merge_shape(complete=True)) or a fixed size
    ("softmax_cross_entropy", [(0, 4), (3,)], {}, r"shape of 'label' is \(3,\), expected \(0,\)"),
    ("SVMOutput", [(0, 4), (3,)], {}, r"shape of 'label' is \(3,\), expected \(0,\)"),
    ("_contrib_count_sketch", [(2, 0), (1, 3), (1, 3)], {"out_dim": 3}, r"'h' is \(1, 3\), expected \(1, 0\)"),
    (
        "_contrib_interleaved_matmul_selfatt_valatt",
        [(0, 1, 12), (2, 3, 3)],
        {"heads": 2},
        r"'attention' is \(2, 3, 3\), expected \(2, 3, 0\)",
    ),
    (
        "_contrib_interleaved_matmul_encdec_valatt",
        [(0, 1, 8), (2, 3, 2)],
        {"heads": 2},
        r"'attention' is \(2, 3, 2\), expected \(2, 3, 0\)",
    ),
    ("_contrib_box_iou", [(3, 0), (2, 4)], {}, r"last axis of 'lhs' must be 4 \(a box\), got shape \(3, 0\)"),
    # dot's gradients: out_grad must have the shape of the product of lhs and rhs
    ("_backward_dot", [(0, 5), (3, 4), (4, 5)], {}, r"'out_grad' is \(0, 5\), expected \(3, 5\)"),
    ("_backward_dot", [(), (3, 4), (4, 5)], {}, r"'out_grad' is \(\), expected \(3, 5\)"),
    ("_backward_dot", [(5, 3), (4, 3), (4, 5)], {"transpose_a": True}, r"'out_grad' is \(5, 3\), expected \(3, 5\)"),
]


def _op(name: str):
    return getattr(mx.nd, name, None) or getattr(mx.nd._internal, name)


@pytest.mark.parametrize(("name", "shapes", "params", "message"), MISFITS, ids=[f"{m[0]}-{m[1]}" for m in MISFITS])
def test_zero_size_inputs_that_do_not_fit_are_refused_at_the_call(name, shapes, params, message):
    inputs = [mx.nd.zeros(shape) for shape in shapes]
    with pytest.raises(mx.LazyNDError, match=message) as info:
        _op(name)(*inputs, **params)  # no wait: the shape rule raises
    assert isinstance(info.value, mx.LazyNDError)
    assert name in str(info.value)


FITS = [
    ("broadcast_add", [(3, 0), (1, 1)], {}, (3, 0)),
    ("broadcast_to", [(0, 1)], {"shape": (0, 4)}, (0, 4)),
    ("dot", [(3, 0), (0, 5)], {}, (3, 5)),
    ("Reshape", [(0, 3)], {"shape": (3, -1)}, (3, 0)),
    ("slice_like", [(2, 4, 1), (0, 4, 1)], {}, (0, 4, 1)),
    ("take", [(0, 4), (0,)], {}, (0, 4)),
    ("pick", [(0, 4), (0,)], {}, (0,)),
    ("batch_take", [(0, 4), (0,)], {}, (0,)),
    # an empty batch: every output is empty, so the call computes nothing (no kernel sees it)
    ("Convolution", [(0, 1, 5, 5), (2, 1, 3, 3), (2,)], {"kernel": (3, 3), "num_filter": 2}, (0, 2, 3, 3)),
    ("FullyConnected", [(0, 4), (5, 4), (5,)], {"num_hidden": 5}, (0, 5)),
    ("batch_dot", [(0, 3, 4), (0, 4, 5)], {}, (0, 3, 5)),
    ("batch_dot", [(2, 3, 0), (2, 0, 5)], {}, (2, 3, 5)),
    ("linalg_gemm2", [(3, 0), (0, 4)], {}, (3, 4)),
    ("linalg_trmm", [(0, 0), (0, 4)], {}, (0, 4)),
    ("broadcast_like", [(1, 4), (0, 4)], {}, (0, 4)),
    ("reshape_like", [(0, 6), (3, 0)], {}, (3, 0)),
    ("broadcast_axis", [(3, 1)], {"axis": 1, "size": 0}, (3, 0)),
    ("_reduce_to_like", [(3, 0), (1, 0)], {}, (1, 0)),
    ("_reduce_to_like", [(0, 4), (1, 4)], {}, (1, 4)),
    ("_contrib_box_iou", [(0, 4), (2, 4)], {}, (0, 2)),
    ("_contrib_count_sketch", [(0, 3), (1, 3), (1, 3)], {"out_dim": 2}, (0, 2)),
    ("GroupNorm", [(0, 4, 3), (2,), (2,)], {"num_groups": 2}, (0, 4, 3)),
    ("_contrib_interleaved_matmul_selfatt_qk", [(2, 0, 24)], {"heads": 2}, (0, 2, 2)),
    # these took the 0 for an unknown dim ("cannot infer the output shape"); MXNet 1.9.1 computes them
    ("_contrib_BilinearResize2D", [(0, 2, 4, 4)], {"height": 3, "width": 5}, (0, 2, 3, 5)),
    ("_contrib_AdaptiveAvgPooling2D", [(0, 2, 4, 4)], {"output_size": 2}, (0, 2, 2, 2)),
    ("_contrib_MultiBoxDetection", [(0, 3, 4), (0, 16), (1, 4, 4)], {}, (0, 4, 6)),
]


@pytest.mark.parametrize(("name", "shapes", "params", "expected"), FITS, ids=[f"{m[0]}-{m[1]}" for m in FITS])
def test_zero_size_inputs_that_fit_are_computed(name, shapes, params, expected):
    inputs = [mx.nd.zeros(shape) for shape in shapes]
    got = _op(name)(*inputs, **params).asnumpy()
    assert got.shape == expected
    np.testing.assert_array_equal(got, np.zeros(expected, np.float32))  # dot over k = 0 sums nothing


@pytest.mark.parametrize(
    ("shapes", "params"),
    [
        ([(3, 5), (3, 4), (4, 5)], {}),
        ([(0, 5), (0, 4), (4, 5)], {}),  # an empty batch: the rhs gradient sums nothing
        ([(3, 0), (3, 4), (4, 0)], {}),  # an empty product: the lhs gradient sums nothing
        ([(3, 0), (3, 4), (0, 4)], {"transpose_b": True}),
    ],
)
def test_dots_gradients_of_empty_products_are_zeros_of_the_operands_shapes(shapes, params):
    inputs = [mx.nd.zeros(shape) for shape in shapes]
    lhs_grad, rhs_grad = mx.nd._internal._backward_dot(*inputs, **params)
    assert lhs_grad.shape == shapes[1] and rhs_grad.shape == shapes[2]
    assert not lhs_grad.asnumpy().any() and not rhs_grad.asnumpy().any()


def test_multibox_target_of_an_empty_batch_is_empty():
    # it took the 0 for an unknown dim ("cannot infer the output shape"); MXNet 1.9.1 computes it
    outs = mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((1, 4, 4)), -mx.nd.ones((0, 2, 5)), mx.nd.zeros((0, 3, 4)))
    assert [out.asnumpy().shape for out in outs] == [(0, 16), (0, 16), (0, 4)]


EMPTY_BATCH_LAYERS = {
    "Convolution": lambda x, w: mx.nd.Convolution(x, w, mx.nd.ones(2), kernel=(3, 3), num_filter=2),
    "Deconvolution": lambda x, w: mx.nd.Deconvolution(x, w, kernel=(3, 3), num_filter=2, no_bias=True),
    "DeformableConvolution": lambda x, w: mx.nd.contrib.DeformableConvolution(
        x, mx.nd.zeros((0, 18, 3, 3)), w, kernel=(3, 3), num_filter=2, no_bias=True
    ),
    "UpSampling": lambda x, w: mx.nd.UpSampling(x, w[:, :1], scale=2, sample_type="bilinear", num_filter=2),
}


@pytest.mark.parametrize("name", sorted(EMPTY_BATCH_LAYERS))
def test_gradients_of_an_empty_batch_are_zero(name):
    # the backward kernels failed at the wait (NumPy: "cannot reshape array of size 0"); MXNet 1.9.1
    # gives zero gradients
    x, w = mx.nd.zeros((0, 2, 5, 5)), mx.nd.ones((2, 2, 3, 3) if name != "UpSampling" else (2, 2, 4, 4))
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = EMPTY_BATCH_LAYERS[name](x, w)
    y.backward()
    assert y.shape[0] == 0 and x.grad.asnumpy().shape == (0, 2, 5, 5)
    assert not w.grad.asnumpy().any()


@pytest.mark.parametrize("spec", [(0, -1), (0, -1, 4), (-2, -1)])
def test_reshape_cannot_infer_minus_one_beside_a_zero_size_dim(spec):
    # any size fits there: NumPy refuses, MXNet 1.9.1 dies of a division by zero; lazynd gave (0, 0)
    a = mx.nd.zeros((0, 3, 4))
    with pytest.raises(mx.base.MXNetError, match=r"cannot infer -1 beside a zero-size dim: the input \(0, 3, 4\)"):
        a.reshape(spec)
    with pytest.raises(mx.base.MXNetError, match="cannot infer -1 beside a zero-size dim"):
        mx.nd.reshape(a, shape=spec)
    assert a.reshape((0, 12)).shape == (0, 12)
    assert a.reshape((-1, 12)).shape == (0, 12)
    assert a.reshape((-1, 0)).shape == (0, 3)  # the 0 copies the input's 3, and -1 is 0 // 3


def _layer_without_positions(name, x, w, b, stride):
    """``name``'s output (bias b) of data ``x`` whose spatial size holds a 0, 3x3, pad 1, ``stride``."""
    params = {"kernel": (3, 3), "stride": stride, "pad": (1, 1), "num_filter": 2}
    if name == "Deconvolution":
        return mx.nd.Deconvolution(x, w, b, no_bias=False, **params)
    out = [(s + 2 - 3) // st + 1 if s else 0 for s, st in zip(x.shape[2:], stride, strict=True)]
    offset = mx.nd.zeros((x.shape[0], 18, *out))
    if name == "DeformableConvolution":
        return mx.nd.contrib.DeformableConvolution(x, offset, w, b, **params)
    mask = mx.nd.ones((x.shape[0], 9, *out))
    return mx.nd.contrib.ModulatedDeformableConvolution(x, offset, mask, w, b, **params)


@pytest.mark.parametrize("name", ["Deconvolution", "DeformableConvolution", "ModulatedDeformableConvolution"])
@pytest.mark.parametrize("shape", [(2, 2, 0, 5), (2, 2, 5, 0), (0, 2, 5, 5)])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2)])
def test_gradients_of_a_layer_without_output_positions_are_zero(name, shape, stride):
    # a spatial size of 0 gives an output of none, every term of every gradient holding an element of
    # it: the backward kernels failed at the wait ("window shape cannot be larger than input array
    # shape", "cannot reshape array of size 0"), as Convolution's did
    x, w, b = mx.nd.zeros(shape), mx.nd.ones((2, 2, 3, 3)), mx.nd.ones(2)
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = _layer_without_positions(name, x, w, b, stride)
    y.backward()
    assert y.size == 0 and x.grad.asnumpy().shape == shape
    assert not w.grad.asnumpy().any() and not b.grad.asnumpy().any()

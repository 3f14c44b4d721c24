"""Shape inference running backwards: an output's known shape fills the unknown (0) dims of inputs."""

from __future__ import annotations

import pytest

import lazynd_sym as sym
from lazynd.errors import ShapeError


def _arg_shapes(net: sym.Symbol, **shapes: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    args, _, _ = net.infer_shape(**shapes)
    assert args is not None, "inference left shapes unknown"
    return dict(zip(net.list_arguments(), args, strict=True))


def test_convolution_data_takes_batch_and_stride_one_sizes_from_the_output():
    data = sym.Variable("data", shape=(0, 10, 0, 0))
    conv = sym.Convolution(data, num_filter=21, kernel=(3, 5), dilate=(2, 1), pad=(0, 1), name="conv")
    shapes = _arg_shapes(conv + sym.Variable("peer", shape=(5, 21, 30, 32)))
    # in = out + dilate * (kernel - 1) - 2 * pad
    assert shapes["data"] == (5, 10, 34, 34)
    assert shapes["conv_weight"] == (21, 10, 3, 5)


def test_convolution_keeps_a_strided_axis_unknown():
    data = sym.Variable("data", shape=(0, 3, 0, 8))
    conv = sym.Convolution(data, num_filter=4, kernel=(3, 3), stride=(2, 1), pad=(1, 1), name="conv")
    args, outs, _ = (conv + sym.Variable("peer", shape=(2, 4, 6, 8))).infer_shape_partial()
    assert args[0] == (2, 3, 0, 8)  # several input heights give height 6 at stride 2


def test_slice_channel_input_fills_unknown_dims_from_a_piece():
    data = sym.Variable("data", shape=(0, 10))
    pieces = sym.SliceChannel(data, num_outputs=10, axis=1, squeeze_axis=True)
    assert _arg_shapes(pieces[1] + sym.Variable("peer", shape=(5,)))["data"] == (5, 10)

    data = sym.Variable("data", shape=(0, 15, 0))
    pieces = sym.SliceChannel(data, num_outputs=3, squeeze_axis=False)
    assert _arg_shapes(pieces[1] + sym.Variable("peer", shape=(3, 5, 2)))["data"] == (3, 15, 2)


def test_identity_with_attr_like_rhs_passes_a_shape_back_to_both_inputs():
    weight = sym.Variable("weight")
    shifted = sym.broadcast_add(weight, sym.Variable("shift", shape=(1,)))
    tied = sym._internal._identity_with_attr_like_rhs(shifted, weight)
    net = sym.FullyConnected(sym.Variable("data"), weight=tied, num_hidden=11, no_bias=True)
    assert _arg_shapes(net, data=(7, 100))["weight"] == (11, 100)


def test_same_shape_operators_fill_a_partial_input_from_their_output_as_mxnet():
    # MXNet 1.9.1's ElemwiseShape infers both ways: y + relu(x) gives x's unknown dims
    for make in (
        sym.relu,
        sym.exp,
        lambda x: sym.Activation(x, act_type="tanh"),
        lambda x: sym.Cast(x, dtype="float32"),
        lambda x: x * 2,
        lambda x: sym.elemwise_add(x, x),
    ):
        net = sym.Variable("y", shape=(2, 3)) + make(sym.Variable("x", shape=(0, 3)))
        assert _arg_shapes(net)["x"] == (2, 3)


def test_a_same_shape_operator_refuses_an_output_its_input_cannot_have():
    net = sym.Variable("y", shape=(2, 3)) + sym.relu(sym.Variable("x", shape=(4, 0)))
    with pytest.raises(ShapeError, match=r"is \(4, 0\), expected \(2, 3\)"):
        net.infer_shape()


def test_clip_softmax_flip_and_expand_dims_fill_a_partial_input_from_their_output_as_mxnet():
    for make, given, out, expected in (
        (lambda x: sym.clip(x, 0, 1), (0, 3), (2, 3), (2, 3)),
        (sym.log_softmax, (0, 0), (2, 3), (2, 3)),
        (sym.SoftmaxActivation, (2, 0), (2, 3), (2, 3)),
        (lambda x: sym.reverse(x, axis=0), (0, 0), (2, 3), (2, 3)),
        (lambda x: sym.expand_dims(x, axis=1), (0, 0), (2, 1, 3), (2, 3)),
        (lambda x: sym.expand_dims(x, axis=-1), (4, 0), (4, 5, 1), (4, 5)),
    ):
        net = sym.Variable("y", shape=out) + make(sym.Variable("x", shape=given))
        assert _arg_shapes(net)["x"] == expected


@pytest.mark.parametrize(
    "unary",
    [sym.BlockGrad, sym.identity, sym.relu, sym.square, lambda x: sym.Activation(x, act_type="tanh")],
    ids=["BlockGrad", "identity", "relu", "square", "Activation"],
)
def test_a_same_shape_operator_completes_its_inputs_unknown_dims_from_its_output(unary):
    # as MXNet 1.9.1: relu(data) - v with data=(0, 3) (batch unknown) and v=(4, 3) gives data (4, 3)
    data, v = sym.Variable("data"), sym.Variable("v")
    arg_shapes, out_shapes, _ = (unary(data) - v).infer_shape(data=(0, 3), v=(4, 3))
    assert arg_shapes == [(4, 3), (4, 3)] and out_shapes == [(4, 3)]

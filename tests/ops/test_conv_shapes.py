"""Convolution and Deconvolution shapes: weight, bias and batch inferred, and clear errors for bad weights, kernels,
strides, groups and pads.
"""

from __future__ import annotations

import pytest

import lazynd
from lazynd.errors import ShapeError
from lazynd.ops import registry


def test_convolution_infers_weight_and_bias_shapes():
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(5, 5), num_filter=20, stride=(2, 2)))
    ins, outs, _ = op.infer_shape(attrs, [(128, 3, 28, 28), None, None])
    assert ins[1:] == [(20, 3, 5, 5), (20,)]
    assert outs == [(128, 20, 12, 12)]


def test_convolution_takes_the_data_batch_from_a_known_output():
    # MXNet's rule: a convolutional RNN cell's begin state is zeros of batch 0, resolved from the output
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(3, 3), pad=(1, 1), num_filter=4))
    ins, outs, _ = op.infer_shape(attrs, [(0, 4, 5, 5), None, None], [], [(2, 4, 5, 5)])
    assert ins[0] == (2, 4, 5, 5) and outs == [(2, 4, 5, 5)]


def test_convolution_rejects_mismatched_weight():
    x, w = lazynd.nd.zeros((1, 3, 8, 8)), lazynd.nd.zeros((4, 2, 3, 3))
    with pytest.raises(ShapeError, match="weight"):
        lazynd.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)


def test_convolution_rejects_kernel_larger_than_input():
    with pytest.raises(ShapeError, match="smaller than kernel"):
        lazynd.nd.Convolution(
            lazynd.nd.zeros((1, 1, 2, 2)), lazynd.nd.zeros((1, 1, 3, 3)), kernel=(3, 3), num_filter=1, no_bias=True
        )


@pytest.mark.parametrize("op_name", ["Convolution", "Deconvolution"])
@pytest.mark.parametrize(
    ("data", "params", "message"),
    [
        ((1, 4, 8, 8), dict(num_filter=3, num_group=2), "num_filter 3 must be a positive multiple of num_group 2"),
        ((4, 8, 8), dict(num_filter=2), r"data must be 4-D for kernel \(3, 3\), got shape \(4, 8, 8\)"),
        ((1, 3, 8, 8), dict(num_filter=2, num_group=2), "data has 3 channels, not a multiple of num_group 2"),
    ],
)
def test_convolutions_reject_bad_groups_and_data_rank_naming_the_operator(op_name, data, params, message):
    op = registry.get(op_name)
    attrs = op.parse(dict(kernel=(3, 3), **params))
    with pytest.raises(lazynd.LazyNDError, match=f"^{op_name}: {message}"):
        op.infer_shape(attrs, [data, None, None])


@pytest.mark.parametrize("option", [{"stride": (0, 1)}, {"dilate": (1, 0)}, {"pad": (-1, 0)}], ids=str)
def test_zero_stride_or_dilate_names_the_values_given(option):
    x, w = lazynd.nd.ones((1, 1, 4, 4)), lazynd.nd.ones((1, 1, 2, 2))
    value = next(iter(option.values()))
    with pytest.raises(lazynd.LazyNDError, match=rf"Convolution: .*\({value[0]}, {value[1]}\)"):
        lazynd.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True, **option).asnumpy()


def test_zero_kernel_is_an_operator_error():
    with pytest.raises(lazynd.LazyNDError, match=r"Convolution: kernel .*\(0, 0\)"):
        lazynd.nd.Convolution(
            lazynd.nd.ones((1, 1, 4, 4)), lazynd.nd.ones((1, 1, 1, 1)), kernel=(0, 0), num_filter=1, no_bias=True
        )


def test_deconvolution_rejects_a_pad_that_leaves_no_output(ctx):
    # (3 - 1) * 1 + 2 - 2 * 2 = 0 output columns
    data = lazynd.nd.ones((1, 2, 3), ctx=ctx)
    with pytest.raises(ShapeError, match="leaves no output"):
        lazynd.nd.Deconvolution(data, lazynd.nd.ones((2, 2, 2), ctx=ctx), kernel=(2,), pad=(2,), num_filter=2)

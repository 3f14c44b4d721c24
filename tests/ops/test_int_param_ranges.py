"""Integer parameters take the range of the C type MXNet 1.9.1 parses them into: ``int`` parameters
C ints, ``long`` ones (``eye``'s ``k``, ``randint``'s bounds, a convolution's ``workspace``) and a
shape's dims int64s.  MXNet's parser refuses a value past that range; lazynd took any Python int and
sized a loop or an allocation by it (``ROIAlign(sample_ratio=2**40)`` ran without end)."""

from __future__ import annotations

import pytest

import lazynd as mx
from lazynd.ops.params import describe_param, parse_int, parse_long, parse_shape, parse_workspace
from lazynd.ops.registry import get


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 2**40, "2147483648"])
def test_an_int_parameter_past_c_int_is_refused_by_name(value: object) -> None:
    with pytest.raises(mx.OperatorError, match=r"one_hot: invalid value .* for parameter 'depth': .*2147483647\]"):
        mx.nd.one_hot(mx.nd.array([0, 1]), depth=value)


def test_a_sample_count_past_c_int_is_refused_at_the_call() -> None:
    # it was taken, and the kernel's loop over 2**40 x 2**40 points per bin never ended
    data, rois = mx.nd.ones((1, 1, 4, 4)), mx.nd.array([[0, 0, 0, 2, 2]])
    with pytest.raises(
        mx.OperatorError, match="_contrib_ROIAlign: invalid value 1099511627776 for parameter 'sample_ratio'"
    ):
        mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2**40)


def test_the_ends_of_c_int_are_taken() -> None:
    assert parse_int(2**31 - 1) == 2**31 - 1
    assert parse_int(-(2**31)) == -(2**31)
    assert mx.nd.softmax(mx.nd.ones((2, 2)), axis=-1).shape == (2, 2)


def test_a_long_parameter_takes_int64_and_refuses_past_it() -> None:
    # MXNet 1.9.1: eye(2, k=2**40) is all zeros; k=2**63 is refused by its parser
    assert mx.nd.eye(2, k=2**40).asnumpy().sum() == 0
    assert parse_long(2**63 - 1) == 2**63 - 1
    with pytest.raises(mx.OperatorError, match=r"_eye: invalid value 9223372036854775808 for parameter 'k'"):
        mx.nd.eye(2, k=2**63)


def test_a_shape_dim_is_an_int64() -> None:
    assert parse_shape((2**40, 1)) == (2**40, 1)
    with pytest.raises(ValueError, match="expected an integer in"):
        parse_shape((2**63, 1))


@pytest.mark.parametrize("value", [-1, 2**64])
def test_a_convolution_workspace_is_a_non_negative_int64(value: int) -> None:
    data, weight = mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 1, 1, 1))
    with pytest.raises(mx.OperatorError, match=r"Convolution: invalid value .* for parameter 'workspace'"):
        mx.nd.Convolution(data, weight, kernel=(1, 1), num_filter=1, no_bias=True, workspace=value)
    out = mx.nd.Convolution(data, weight, kernel=(1, 1), num_filter=1, no_bias=True, workspace=2**40)
    assert out.shape == (1, 1, 3, 3)


def test_long_parameters_are_described_as_mxnet_describes_them() -> None:
    assert parse_workspace(0) == 0
    assert describe_param(get("Convolution").params["workspace"]) == "long (non-negative), optional, default=1024"
    assert describe_param(get("_eye").params["k"]) == "long, optional, default=0"

"""Operators that take no integer data refuse it at the call, as MXNet does."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError

nd = mx.nd
MATRIX = np.array([[1, 2, 3], [4, 5, 6]])
IMAGE = np.arange(24).reshape(1, 2, 3, 4)
LABELS = np.array([0, 1])
BOXES = np.array([[0, 0, 2, 2], [1, 1, 3, 4]])
SCORED = np.array([[0, 9, 0, 0, 2, 2], [0, 5, 1, 1, 3, 4]])

# each failed inside its kernel with NumPy's "Cannot cast ufunc ... output" at the next wait;
# MXNet 1.9.1 refuses them all ("This operation only support floating point types")
CALLS = {
    "softmax": lambda x: nd.softmax(x(MATRIX)),
    "log_softmax": lambda x: nd.log_softmax(x(MATRIX)),
    "SoftmaxActivation": lambda x: nd.SoftmaxActivation(x(MATRIX)),
    "SoftmaxOutput": lambda x: nd.SoftmaxOutput(x(MATRIX), x(LABELS)),
    "Activation": lambda x: nd.Activation(x(MATRIX), act_type="sigmoid"),
    "BatchNorm": lambda x: nd.BatchNorm(x(IMAGE), *[x(np.ones(2))] * 4),
    "Pooling": lambda x: nd.Pooling(x(IMAGE), kernel=(2, 2), pool_type="avg"),
    "LogisticRegressionOutput": lambda x: nd.LogisticRegressionOutput(x(MATRIX), x(MATRIX)),
    "LinearRegressionOutput": lambda x: nd.LinearRegressionOutput(x(MATRIX), x(MATRIX)),
    # these took integers quietly (and failed inside NumPy on bools)
    "Correlation": lambda x: nd.Correlation(x(IMAGE), x(IMAGE)),
    "_contrib_box_iou": lambda x: nd.contrib.box_iou(x(BOXES), x(BOXES)),
    "_contrib_box_nms": lambda x: nd.contrib.box_nms(x(SCORED)),
    "_contrib_box_encode": lambda x: nd.contrib.box_encode(
        x([[1, 0]]), x([[0, 1]]), x(BOXES[None]), x(BOXES[None]), x(np.zeros(4)), x(np.ones(4))
    )[0],
    # these computed in floating point and truncated quietly (anchors of 0, a warp grid of INT_MIN),
    # or failed inside the kernel (ROIPooling: NumPy's OverflowError)
    "_contrib_MultiBoxPrior": lambda x: nd.contrib.MultiBoxPrior(x(IMAGE), sizes=(0.5,)),
    "_contrib_box_decode": lambda x: nd.contrib.box_decode(x(BOXES[None]), x(BOXES[None])),
    "BilinearSampler": lambda x: nd.BilinearSampler(x(IMAGE), x(np.zeros((1, 2, 2, 2)))),
    "GridGenerator": lambda x: nd.GridGenerator(x(np.zeros((1, 2, 2, 2))), transform_type="warp"),
    "SpatialTransformer": lambda x: nd.SpatialTransformer(
        x(IMAGE), x([[1, 0, 0, 0, 1, 0]]), target_shape=(2, 2), transform_type="affine", sampler_type="bilinear"
    ),
    "ROIPooling": lambda x: nd.ROIPooling(x(IMAGE), x([[0, 0, 0, 2, 2]]), pooled_size=(2, 2), spatial_scale=1.0),
    "UpSampling": lambda x: nd.UpSampling(
        x(IMAGE), x(np.ones((2, 1, 4, 4))), scale=2, sample_type="bilinear", num_filter=2
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_integer_data_is_refused_at_the_call_naming_the_operator(name):
    with pytest.raises(OperatorError, match=rf"^{name}: input '\w+' has dtype int32, expected one of float16"):
        CALLS[name](lambda a: nd.array(a, dtype="int32"))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_floating_point_data_still_runs(name):
    out = CALLS[name](lambda a: nd.array(a, dtype="float64"))
    assert out.dtype == np.float64
    out.asnumpy()


def test_symbolic_type_inference_refuses_integer_data_too():
    with pytest.raises(OperatorError, match="softmax: input 'data' has dtype int32"):
        sym.softmax(sym.Variable("x")).infer_type(x="int32")


def test_max_pooling_keeps_integer_data():
    # a maximum is an element: lazynd keeps taking integers there (MXNet refuses them)
    out = nd.Pooling(nd.array(IMAGE, dtype="int32"), kernel=(2, 2), pool_type="max")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy()[0, 0], [[5, 6, 7], [9, 10, 11]])


def test_element_copying_detection_operators_keep_integer_data():
    # nearest UpSampling copies elements and bipartite_matching compares them: lazynd keeps taking
    # integers there (MXNet refuses them)
    out = nd.UpSampling(nd.array(IMAGE, dtype="int32"), scale=2, sample_type="nearest")
    assert out.dtype == np.int32 and out.asnumpy()[0, 0, 0, :4].tolist() == [0, 0, 1, 1]
    rows, _ = nd.contrib.bipartite_matching(nd.array([[1, 2], [3, 0]], dtype="int32"), threshold=0)
    assert rows.asnumpy().tolist() == [1, 0]

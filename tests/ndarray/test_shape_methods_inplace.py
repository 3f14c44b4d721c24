"""The ``squeeze``, ``expand_dims`` and ``flatten`` methods take MXNet 1.x's ``inplace`` flag.

``inplace=False`` (the default) gives a copy; ``inplace=True`` a view that shares the array's
memory, with the operator's shape rule and its errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def test_squeeze_inplace_is_a_view_and_the_default_a_copy():
    data = mx.nd.array(np.arange(3).reshape(1, 3, 1))
    copy = data.squeeze(axis=0)
    view = data.squeeze(axis=(0, 2), inplace=True)
    assert copy.shape == (3, 1) and view.shape == (3,)
    data[0, 1, 0] = -1
    assert copy.asnumpy()[1, 0] == 1
    assert view.asnumpy()[1] == -1


def test_squeeze_inplace_of_all_ones_keeps_one_axis_as_mxnet():
    assert mx.nd.zeros((1, 1, 1)).squeeze(inplace=True).shape == (1,)


def test_expand_dims_inplace_is_a_view():
    data = mx.nd.zeros((2, 3))
    view = data.expand_dims(-1, inplace=True)
    copy = data.expand_dims(axis=0)
    assert view.shape == (2, 3, 1) and copy.shape == (1, 2, 3)
    data[1] = 7
    assert (view.asnumpy()[1] == 7).all()
    assert (copy.asnumpy() == 0).all()


def test_inplace_views_refuse_what_the_operator_refuses():
    data = mx.nd.zeros((1, 3, 1))
    with pytest.raises(mx.ShapeError, match="squeeze: axis 1"):
        data.squeeze(axis=1, inplace=True)
    with pytest.raises(mx.ShapeError, match="expand_dims: axis=5"):
        data.expand_dims(5, inplace=True)


def test_inplace_view_carries_the_gradient():
    data = mx.nd.array([[1.0, 2.0, 3.0]])
    data.attach_grad()
    with mx.autograd.record():
        out = (data.squeeze(inplace=True) * mx.nd.array([1.0, 2.0, 3.0])).sum()
    out.backward()
    assert data.grad.asnumpy().tolist() == [[1.0, 2.0, 3.0]]


def test_flatten_inplace_is_a_view():
    data = mx.nd.zeros((2, 3, 4))
    view = data.flatten(inplace=True)
    data[0] = 1
    assert view.shape == (2, 12) and view.asnumpy()[0].sum() == 12

"""dot and batch_dot: MXNet 1.x's parameters."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError


@pytest.mark.parametrize("name,shapes", [("dot", [(2, 3), (3, 4)]), ("batch_dot", [(2, 2, 3), (2, 3, 4)])])
def test_products_take_the_default_forward_stype_with_their_gradient(name, shapes):
    a, b = (mx.nd.array(np.arange(np.prod(s), dtype=np.float32).reshape(s)) for s in shapes)
    a.attach_grad()
    # MXNet 1.x writes forward_stype (None or 'default' on dense arrays); it was an 'unknown parameter'
    with mx.autograd.record():
        y = getattr(mx.nd, name)(a, b, forward_stype="default")
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), getattr(mx.nd, name)(a, b).asnumpy())
    assert a.grad.shape == a.shape


def test_a_sparse_forward_stype_is_refused_by_name():
    with pytest.raises(OperatorError, match="dot: invalid value 'csr' for parameter 'forward_stype'"):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)), forward_stype="csr")

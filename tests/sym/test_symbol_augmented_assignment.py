"""``net += x`` on a symbol: a new symbol ``net + x``, the old one unchanged (README: where lazynd and
MXNet 1.9.1 part). MXNet's Inception-ResNet-v2 example sums its residual towers this way."""

from __future__ import annotations

import numpy as np

import lazynd as mx


def test_residual_sum_by_augmented_assignment_builds_a_new_symbol() -> None:
    net = mx.sym.Variable("x")
    before = net
    tower = mx.sym.FullyConnected(net, num_hidden=3, no_bias=True, name="tower")
    net += 0.5 * tower
    assert before.list_outputs() == ["x"]
    assert net.list_arguments() == ["x", "tower_weight"]
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    w = np.eye(3, dtype=np.float32)
    out = net.bind(mx.cpu(), {"x": mx.nd.array(x), "tower_weight": mx.nd.array(w)}).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), x * 1.5)

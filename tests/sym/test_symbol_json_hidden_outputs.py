"""Hidden operator outputs count in symbol JSON as in MXNet 1.9.1 (its ``node_row_ptr``).

MXNet's ``LRN`` keeps the scale it divides by as a second, hidden output (``tmp_norm``), so
the JSON of AlexNet (two LRN layers) counts two entries for each; a file written by lazynd
must give the same numbers, or entry ids read by other tools land on the wrong node.
"""

from __future__ import annotations

import json

import numpy as np

import lazynd as mx
import lazynd_sym as sym

# node_row_ptr MXNet 1.9.1 writes for data -> LRN -> Flatten -> FullyConnected (weight, bias)
MXNET_ROW_PTR = [0, 1, 3, 4, 5, 6, 7]


def _lrn_net() -> sym.Symbol:
    data = sym.Variable("data")
    lrn = sym.LRN(data, alpha=0.0001, beta=0.75, knorm=1, nsize=5, name="lrn1")
    return sym.FullyConnected(sym.Flatten(lrn, name="flat"), num_hidden=2, name="fc")


def test_lrn_counts_its_hidden_scale_output_in_node_row_ptr():
    doc = json.loads(_lrn_net().tojson())
    assert doc["node_row_ptr"] == MXNET_ROW_PTR


def test_lrn_shows_one_output_and_loads_back_from_mxnet_row_ptr():
    net = _lrn_net()
    lrn = net.get_internals()["lrn1_output"]
    assert lrn.list_outputs() == ["lrn1_output"]
    loaded = sym.load_json(net.tojson())
    assert loaded.tojson() == net.tojson()
    assert loaded.infer_shape(data=(2, 6, 3, 3))[1] == [(2, 2)]


def test_lrn_output_and_gradient_unchanged_by_the_hidden_output():
    rng = np.random.RandomState(0)
    x = rng.uniform(-2, 2, (2, 6, 3, 3))
    alpha, beta, knorm, nsize = 0.3, 0.75, 1.0, 5
    padded = np.pad(x * x, ((0, 0), (2, 2), (0, 0), (0, 0)))
    scale = knorm + alpha / nsize * sum(padded[:, i : i + 6] for i in range(nsize))
    y = mx.nd.LRN(mx.nd.array(x), alpha=alpha, beta=beta, knorm=knorm, nsize=nsize)
    np.testing.assert_allclose(y.asnumpy(), x * scale**-beta, rtol=1e-5)
    net = sym.LRN(sym.Variable("x"), alpha=alpha, beta=beta, knorm=knorm, nsize=nsize)
    ex = net.bind(mx.cpu(), {"x": mx.nd.array(x)}, args_grad={"x": mx.nd.zeros(x.shape)})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(x.shape))
    assert np.isfinite(ex.grad_dict["x"].asnumpy()).all()
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), x * scale**-beta, rtol=1e-5)

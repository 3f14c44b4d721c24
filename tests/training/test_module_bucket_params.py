"""BucketingModule's parameters across buckets and rebinds, as MXNet 1.9.1 keeps them.

Found by running the same programs under MXNet 1.9.1 and lazynd: a bucket whose symbol has a
parameter the default bucket lacks got zeros silently (MXNet's bind fails), and a
``bind(force_rebind=True)`` (from training to prediction) dropped the trained weights.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataValueError


def _sym_gen(key: int):
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    if key == 8:  # this bucket alone has a layer of its own
        net = sym.FullyConnected(net, num_hidden=2, name="extra")
    return sym.LinearRegressionOutput(net, name="lro"), ("data",), ("lro_label",)


def _batch(key: int, rows: int = 2) -> mx.io.DataBatch:
    return mx.io.DataBatch(
        [mx.nd.ones((rows, 3))],
        [mx.nd.ones((rows, 2))],
        bucket_key=key,
        provide_data=[mx.io.DataDesc("data", (rows, 3))],
        provide_label=[mx.io.DataDesc("lro_label", (rows, 2))],
    )


def _bound(for_training: bool = True) -> mx.mod.BucketingModule:
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=3)
    mod.bind([("data", (2, 3))], [("lro_label", (2, 2))], for_training=for_training)
    mod.init_params(mx.init.Constant(0.1))
    return mod


def test_bucket_with_a_parameter_the_default_bucket_lacks_is_refused_by_name():
    mod = _bound()
    with pytest.raises(DataValueError, match=r"\['extra_weight', 'extra_bias'\] are not in shared_module"):
        mod.forward(_batch(8), is_train=False)
    assert mod._curr_bucket_key == 3  # the module stays on the bucket it was on
    mod.forward(_batch(3), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.full((2, 2), 0.3), rtol=1e-6)


def test_module_bound_with_a_shared_module_lacking_its_parameter_is_refused():
    lender = mx.mod.Module(_sym_gen(3)[0], label_names=["lro_label"])
    lender.bind([("data", (2, 3))], [("lro_label", (2, 2))])
    lender.init_params()
    borrower = mx.mod.Module(_sym_gen(8)[0], label_names=["lro_label"])
    with pytest.raises(DataValueError, match="extra_weight"):
        borrower.bind([("data", (2, 3))], [("lro_label", (2, 2))], shared_module=lender)


def test_force_rebind_keeps_the_trained_parameters():
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    mod.forward(_batch(3), is_train=True)
    mod.backward()
    mod.update()
    trained = {name: array.asnumpy() for name, array in mod.get_params()[0].items()}
    mod.bind([("data", (2, 3))], [("lro_label", (2, 2))], for_training=False, force_rebind=True)
    assert mod.params_initialized and not mod.optimizer_initialized
    for name, array in mod.get_params()[0].items():
        np.testing.assert_allclose(array.asnumpy(), trained[name], rtol=1e-6)
    mod.forward(_batch(3), is_train=False)
    expected = np.ones((2, 3)) @ trained["fc_weight"].T + trained["fc_bias"]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected, rtol=1e-5)

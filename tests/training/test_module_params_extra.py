"""``set_params`` with names the module lacks: refused or ignored where MXNet 1.x refuses or ignores them;
a second ``init_params``: ignored, with MXNet's warning."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, ParameterError


def _bound_module() -> mx.mod.Module:
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (1, 3))])
    mod.init_params()
    return mod


def _params(**extra: mx.NDArray) -> dict[str, mx.NDArray]:
    return {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,)), **extra}


def test_an_unknown_name_with_allow_missing_is_refused_by_name_unless_allow_extra() -> None:
    mod = _bound_module()
    with pytest.raises(ParameterError, match=r"set_params: arg_params names 'fc2_weight'.*allow_extra=True"):
        mod.set_params(_params(fc2_weight=mx.nd.ones((2,))), {}, allow_missing=True)
    with pytest.raises(ValueError):  # what MXNet code catches there
        mod.set_params({}, {"bn_moving_mean": mx.nd.ones((2,))}, allow_missing=True)


def test_allow_extra_ignores_unknown_names_and_copies_the_known_ones() -> None:
    mod = _bound_module()
    mod.set_params(_params(fc2_weight=mx.nd.ones((2,))), {}, allow_missing=True, allow_extra=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), np.ones((2, 3)))


def test_without_allow_missing_a_missing_name_is_reported_before_unknown_ones() -> None:
    mod = _bound_module()
    with pytest.raises(DataError, match="'fc_bias' is not in the given parameters"):
        mod.set_params({"fc2_weight": mx.nd.ones((2,)), "fc_weight": mx.nd.ones((2, 3))}, {})
    mod.set_params(_params(fc2_weight=mx.nd.ones((2,))), {})  # MXNet ignores extras on this path


def test_a_bucketing_module_passes_allow_extra_to_its_buckets() -> None:
    def sym_gen(key: int):
        net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
        return net, ("data",), ()

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=3, context=mx.cpu())
    mod.bind(data_shapes=[("data", (1, 3))], for_training=False)
    mod.init_params()
    mod.set_params(_params(fc2_weight=mx.nd.ones((2,))), {}, allow_missing=True, allow_extra=True)
    with pytest.raises(ParameterError, match="fc2_weight"):
        mod.set_params(_params(fc2_weight=mx.nd.ones((2,))), {}, allow_missing=True)


def test_a_second_init_params_without_force_init_warns_that_it_is_ignored() -> None:
    # users call init_params twice with two initializers and expect the second to count: MXNet warns
    mod = _bound_module()
    before = mod.get_params()[0]["fc_weight"].asnumpy()
    with pytest.warns(UserWarning, match=r"init_params: already initialized and force_init=False; ignored"):
        mod.init_params(initializer=mx.init.Constant(3.0))
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), before)
    mod.init_params(initializer=mx.init.Constant(3.0), force_init=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), np.full((2, 3), 3.0))

"""``Module._sync_params_from_devices``: MXNet 1.x's private method that programs call after ``update``
to read the trained weights through ``mod._arg_params`` (MXNet's parallel_actor_critic example does)."""

from __future__ import annotations

import numpy as np
import pytest
from module_by_hand import host_values, trained_by_hand

import lazynd as mx
from lazynd.errors import LazyNDError


def test_sync_writes_the_devices_parameters_into_the_module_s_dicts() -> None:
    mod = trained_by_hand([mx.cpu(0), mx.cpu(1)])
    before = host_values(mod._arg_params)
    mod._sync_params_from_devices()
    after = host_values(mod._arg_params)
    on_device = mod._exec_group.execs[0].arg_dict["fc1_weight"].asnumpy()
    assert not np.allclose(before["fc1_weight"], after["fc1_weight"])  # the dicts lag until a sync
    np.testing.assert_allclose(after["fc1_weight"], on_device, rtol=1e-6)
    np.testing.assert_allclose(after["fc2_bias"], host_values(mod.get_params()[0])["fc2_bias"])


def test_sync_before_bind_is_refused_by_name() -> None:
    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc"), label_names=None)
    with pytest.raises(LazyNDError, match="_sync_params_from_devices"):
        mod._sync_params_from_devices()

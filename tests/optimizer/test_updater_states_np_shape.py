"""Optimizer-state pickles under ``mx.np_shape``: the NDArray records MXNet 1.9.1 writes there (V3).

MXNet 1.9.1's ``Updater.get_states`` pickles each state as an NDArray record: V2 (magic 0xF993FAC9)
outside its NumPy-shape mode, V3 (0xF993FACA) in it, and its ``set_states`` loads each only in the
mode that wrote it.  The records below were written by MXNet 1.9.1: SGD with momentum 0.9 and
learning rate 0.1, after one update of key 0 (weight [1, 2, 3], gradient [.1, .2, .3]) and one of
key 1 (a (2, 2) weight, gradient of ones).
"""

from __future__ import annotations

import os

import numpy as np

import lazynd as mx
from lazynd import optimizer

_STATE_0 = (
    " 01000000 0300000000000000 01000000 00000000 00000000 0bd723bc0bd7a3bc90c2f5bc"  # ndim, dims, ctx, dtype, data
)
MXNET_V2_RECORD = bytes.fromhex("c9fa93f900000000" + _STATE_0)
MXNET_V3_RECORD = bytes.fromhex("cafa93f900000000" + _STATE_0)
MXNET_NP_SHAPE_PICKLE = bytes.fromhex(
    "800495d8000000000000007d94284b008c156d786e65742e6e6461727261792e6e646172726179948c074e44417272"
    "61799493944e859452947d948c0668616e646c65948c086275696c74696e73948c09627974656172726179949394432c"
    "cafa93f9000000000100000003000000000000000100000000000000000000000bd723bc0bd7a3bc90c2f5bc94859452"
    "9473624b016803680452947d946807680a4338cafa93f900000000020000000200000000000000020000000000000001"
    "0000000000000000000000cdccccbdcdccccbdcdccccbdcdccccbd94859452947362752e"
)


def _updated_sgd():
    updater = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    updater(0, mx.nd.array([0.1, 0.2, 0.3]), mx.nd.array([1.0, 2.0, 3.0]))
    updater(1, mx.nd.ones((2, 2)), mx.nd.array([[1.0, 2.0], [3.0, 4.0]]))
    return updater


def test_get_states_under_np_shape_writes_mxnets_v3_records():
    with mx.np_shape():
        saved = _updated_sgd().get_states()
    assert MXNET_V3_RECORD in saved and MXNET_V2_RECORD not in saved


def test_get_states_outside_np_shape_keeps_v2_records():
    saved = _updated_sgd().get_states()
    assert MXNET_V2_RECORD in saved and MXNET_V3_RECORD not in saved


def test_a_0d_state_under_np_shape_is_pickled_in_mxnets_layout():
    # outside np_shape MXNet cannot keep a 0-d array, so such a state is pickled as a NumPy array there
    updater = optimizer.get_updater(optimizer.create("sgd"))
    updater.states = {0: mx.nd.array(np.float32(5.0))}
    with mx.np_shape():
        saved = updater.get_states()
    assert bytes.fromhex("cafa93f9 00000000 00000000 01000000 00000000 00000000 0000a040") in saved
    assert b"numpy" not in saved
    restored = optimizer.get_updater(optimizer.create("sgd"))
    restored.set_states(saved)
    assert restored.states[0].shape == () and restored.states[0].asnumpy() == 5.0


def test_mxnets_np_shape_pickle_loads_in_either_mode():
    for np_shape in (True, False):
        restored = optimizer.get_updater(optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
        with mx.np_shape(np_shape):
            restored.set_states(MXNET_NP_SHAPE_PICKLE)
        np.testing.assert_allclose(restored.states[0].asnumpy(), [-0.01, -0.02, -0.03], rtol=1e-6)
        np.testing.assert_allclose(restored.states[1].asnumpy(), np.full((2, 2), -0.1), rtol=1e-6)


def test_kvstore_optimizer_states_file_under_np_shape_holds_v3_records(tmp_path):
    kv = mx.kv.create("local")
    kv.set_optimizer(optimizer.create("sgd", learning_rate=0.1, momentum=0.9))
    kv.init(0, mx.nd.array([1.0, 2.0, 3.0]))
    kv.push(0, mx.nd.array([0.1, 0.2, 0.3]))
    path = os.path.join(tmp_path, "sgd.states")
    with mx.np_shape():
        kv.save_optimizer_states(path)
    with open(path, "rb") as saved:
        assert MXNET_V3_RECORD in saved.read()

"""Output names of multi-output operators match MXNet 1.9.1's ``list_outputs()``.

The expected names are literals taken from MXNet 1.9.1: an operator whose kernel has several
outputs (visible or hidden) names them ``output0``, ``output1``...; one with a single output
names it ``output``; a few (BatchNorm, LayerNorm, RNN) declare their own names.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

sym = mx.sym


def _data() -> mx.sym.Symbol:
    return sym.Variable("data")


MXNET_NAMES = [
    (lambda: sym.topk(_data(), k=2, ret_typ="both", name="t"), ["t_output0", "t_output1"]),
    (lambda: sym.topk(_data(), k=2, ret_typ="value", name="t"), ["t_output0"]),
    (lambda: sym.topk(_data(), k=2, ret_typ="indices", name="t"), ["t_output"]),
    (lambda: sym.topk(_data(), k=2, ret_typ="mask", name="t"), ["t_output"]),
    (lambda: sym.sort(_data(), name="s"), ["s_output0"]),
    (lambda: sym.argsort(_data(), name="a"), ["a_output"]),
    (lambda: sym.sample_multinomial(_data(), get_prob=True, name="m"), ["m_output0", "m_output1"]),
    (lambda: sym.sample_multinomial(_data(), name="m"), ["m_output"]),
    (lambda: sym.random.multinomial(_data(), get_prob=True, name="m"), ["m_output0", "m_output1"]),
    (lambda: sym.split(_data(), num_outputs=3, name="sp"), ["sp_output0", "sp_output1", "sp_output2"]),
    (lambda: sym.SliceChannel(_data(), num_outputs=1, name="sp"), ["sp_output0"]),
    (lambda: sym.BatchNorm(_data(), output_mean_var=True, name="bn"), ["bn_output", "bn_mean", "bn_var"]),
    (lambda: sym.moments(_data(), axes=(0,), name="mo"), ["mo_output0", "mo_output1"]),
    (lambda: sym.LayerNorm(_data(), output_mean_var=True, name="ln"), ["ln_output", "ln_mean", "ln_std"]),
    (
        lambda: sym.RNN(_data(), state_size=4, num_layers=1, mode="lstm", state_outputs=True, name="r"),
        ["r_output", "r_state_output", "r_statecell_output"],
    ),
    (
        lambda: sym.RNN(_data(), state_size=4, num_layers=1, mode="gru", state_outputs=True, name="r"),
        ["r_output", "r_state_output"],
    ),
    (lambda: sym.linalg.slogdet(_data(), name="l"), ["l_output0", "l_output1"]),
    (lambda: sym.linalg.gelqf(_data(), name="l"), ["l_output0", "l_output1"]),
    (lambda: sym.linalg.syevd(_data(), name="l"), ["l_output0", "l_output1"]),
]


@pytest.mark.parametrize(("make", "expected"), MXNET_NAMES)
def test_list_outputs_match_mxnet(make, expected):
    assert make().list_outputs() == expected


def test_topk_value_internal_name_matches_mxnet():
    net = sym.topk(_data(), k=2, ret_typ="value", name="t")
    assert net.get_internals().list_outputs() == ["data", "t_output0"]


@pytest.mark.parametrize(("make", "expected"), MXNET_NAMES)
def test_json_round_trip_keeps_output_names(make, expected):
    assert sym.load_json(make().tojson()).list_outputs() == expected


def test_output_selected_by_mxnet_name():
    net = sym.topk(_data(), k=2, ret_typ="both", name="t")
    values, indices = net["t_output0"], net["t_output1"]
    assert values.list_outputs() == ["t_output0"] and indices.list_outputs() == ["t_output1"]


def test_executor_output_dict_uses_mxnet_names():
    net = sym.topk(_data(), k=2, ret_typ="both", name="t")
    exe = net.simple_bind(mx.cpu(), data=(2, 5), grad_req="null")
    x = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], dtype=np.float32)
    exe.arg_dict["data"][:] = x
    exe.forward()
    out = exe.output_dict
    assert sorted(out) == ["t_output0", "t_output1"]
    np.testing.assert_array_equal(out["t_output0"].asnumpy(), [[5, 4], [9, 6]])
    np.testing.assert_array_equal(out["t_output1"].asnumpy(), [[4, 2], [0, 2]])


def test_module_output_names_use_mxnet_names():
    net = sym.sort(sym.FullyConnected(_data(), num_hidden=3, name="fc"), name="s")
    mod = mx.mod.Module(net, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))], for_training=False)
    mod.init_params()
    mod.forward(mx.io.DataBatch([mx.nd.ones((2, 4))]), is_train=False)
    assert mod.output_names == ["s_output0"]
    out = mod.get_outputs()[0].asnumpy()
    assert np.all(np.diff(out, axis=1) >= 0)


def test_output_lookup_errors_are_mxnet_kinds() -> None:
    # MXNet 1.9.1: a position past the outputs is an IndexError, an unknown or repeated name a
    # ValueError, an index of another type a TypeError; all stay LazyNDErrors
    fc = sym.FullyConnected(_data(), num_hidden=2, name="fc")
    with pytest.raises(IndexError, match="out of range"):
        fc[1]
    with pytest.raises(IndexError):
        fc[-2]
    with pytest.raises(ValueError, match="no output named"):
        fc.get_internals()["fc_nothing"]
    with pytest.raises(ValueError, match="2 outputs named"):
        sym.Group([fc, fc])["fc_output"]
    with pytest.raises(TypeError, match="not float"):
        fc[1.5]
    with pytest.raises(mx.LazyNDError):
        fc[1]
    assert fc[-1].list_outputs() == ["fc_output"]

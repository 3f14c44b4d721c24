"""Module(..., state_names=...): state inputs set by the user, kept between batches, no gradient."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import DataError, LazyNDError, ShapeError


def _net():
    """``loss = sum((fc(data) + h)**2)`` with ``h`` a state of the output's shape; also outputs ``fc(data) + h``."""
    out = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc") + sym.Variable("h")
    return sym.Group([sym.MakeLoss(sym.sum(out * out)), sym.BlockGrad(out)])


def _module(contexts=None, batch=4):
    mod = mx.mod.Module(_net(), data_names=["data"], label_names=None, state_names=["h"], context=contexts)
    mod.bind(data_shapes=[("data", (batch, 3))])
    mod.init_params(mx.init.One())
    return mod


def _batch(n=4):
    return mx.io.DataBatch([mx.nd.ones((n, 3))], None)


def test_states_are_not_parameters_and_start_at_zero():
    mod = _module()
    assert sorted(mod.get_params()[0]) == ["fc_bias", "fc_weight"]
    (h,) = mod.get_states()
    assert h.shape == (4, 2)
    assert (h.asnumpy() == 0).all()


def test_set_states_by_value_and_by_arrays_feeds_forward():
    mod = _module()
    mod.set_states(value=2)
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.full((4, 2), 2))
    mod.set_states(states=[[mx.nd.full((4, 2), 7)]])
    mod.forward(_batch(), is_train=True)
    np.testing.assert_array_equal(mod.get_outputs()[1].asnumpy(), np.full((4, 2), 3 + 0 + 7))  # 3 ones + zero bias + h


def test_states_keep_their_value_between_batches_and_get_no_gradient():
    mod = _module()
    mod.set_states(value=1)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    for _ in range(2):
        mod.forward_backward(_batch())
        mod.update()
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.ones((4, 2)))
    assert mod._exec_group.execs[0].grad_dict["h"] is None  # no gradient array is bound for a state


def test_states_on_two_devices_are_split_like_the_batch():
    mod = _module([mx.cpu(0), mx.cpu(1)])
    parts = mod.get_states(merge_multi_context=False)
    assert [[a.shape for a in p] for p in parts] == [[(2, 2), (2, 2)]]
    whole = np.arange(8, dtype=np.float32).reshape(4, 2)
    mod.set_states(states=[mx.nd.array(whole)])  # one array: split over the devices
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), whole)
    mod.set_states(states=[[mx.nd.ones((2, 2)), mx.nd.zeros((2, 2))]])
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), [[1, 1], [1, 1], [0, 0], [0, 0]])


def test_a_state_whose_batch_axis_is_not_the_first_is_split_and_joined_along_it():
    # h of shape (2, batch): transpose(fc(data)) + h; each device holds (2, batch / 2)
    out = sym.transpose(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")) + sym.Variable("h")
    mod = mx.mod.Module(out, data_names=["data"], label_names=None, state_names=["h"], context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 3))], for_training=False)
    mod.init_params(mx.init.One())
    assert [a.shape for a in mod.get_states(merge_multi_context=False)[0]] == [(2, 2), (2, 2)]
    h = np.arange(8, dtype=np.float32).reshape(2, 4)
    mod.set_states(states=[mx.nd.array(h)])
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), h)
    parts = mod.get_states(merge_multi_context=False)[0]
    np.testing.assert_array_equal(parts[1].asnumpy(), h[:, 2:])


def test_set_states_needs_exactly_one_of_states_and_value():
    mod = _module()
    with pytest.raises(DataError, match="exactly one of states and value"):
        mod.set_states()
    with pytest.raises(DataError, match="exactly one of states and value"):
        mod.set_states(states=[[mx.nd.ones((4, 2))]], value=1)


def test_states_of_the_wrong_shape_or_count_are_refused():
    mod = _module()
    with pytest.raises(ShapeError, match=r"state 'h' has shape \(4, 2\), given \(2, 2\)"):
        mod.set_states(states=[[mx.nd.ones((2, 2))]])
    with pytest.raises(DataError, match="2 states given"):
        mod.set_states(states=[[mx.nd.ones((4, 2))], [mx.nd.ones((4, 2))]])


def test_a_state_name_that_is_no_argument_is_refused():
    with pytest.raises(DataError, match=r"state_names \['zz'\] are not arguments"):
        mx.mod.Module(_net(), label_names=None, state_names=["zz"])


def test_states_need_bind_and_init_params():
    mod = mx.mod.Module(_net(), label_names=None, state_names=["h"])
    with pytest.raises(LazyNDError, match="get_states: call bind"):
        mod.get_states()
    mod.bind(data_shapes=[("data", (4, 3))])
    with pytest.raises(LazyNDError, match="set_states: call init_params"):
        mod.set_states(value=1)


def test_a_module_without_states_has_none():
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc"), name="softmax")
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    assert mod.get_states() == []
    mod.set_states(value=1)  # nothing to fill, as MXNet's


def test_a_sequential_module_has_no_states():
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=2, name="fc")
    seq = mx.mod.SequentialModule().add(mx.mod.Module(net, label_names=None))
    seq.bind(data_shapes=[("data", (4, 3))], for_training=False)
    seq.init_params()
    assert seq.get_states() == []
    with pytest.raises(DataError, match="SequentialModule has no state inputs"):
        seq.set_states(value=1)


def test_bucketing_module_passes_states_and_buckets_of_one_shape_share_them():
    def gen(key):
        data = sym.Variable("data")  # (4, key, 3): the state does not depend on the key
        out = sym.FullyConnected(sym.mean(data, axis=1), num_hidden=2, name="fc") + sym.Variable("h")
        return sym.MakeLoss(sym.sum(out * out)), ("data",), None

    mod = mx.mod.BucketingModule(gen, default_bucket_key=5, state_names=["h"])
    mod.bind(data_shapes=[("data", (4, 5, 3))])
    mod.init_params()
    mod.set_states(value=5)
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3, 3))], None, bucket_key=3, provide_data=[("data", (4, 3, 3))]))
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.full((4, 2), 5))

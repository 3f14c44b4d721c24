"""Device placement with ``group2ctx``: arrays on their group's context, copies across, same results."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import ContextError
from lazynd_sym.executor import PlacedExecutor

HAS_GPU = mx.num_gpus() > 0


def two_stage_mlp():
    with sym.AttrScope(ctx_group="dev1"):
        data = sym.Variable("data")
        hidden = sym.Activation(sym.FullyConnected(data, name="fc1", num_hidden=8), act_type="tanh", name="act1")
    with sym.AttrScope(ctx_group="dev2"):
        logits = sym.FullyConnected(hidden, name="fc2", num_hidden=3)
    return sym.SoftmaxOutput(logits, name="softmax")


def fill_same(executors, seed=0):
    rng = np.random.default_rng(seed)
    for name, arr in executors[0].arg_dict.items():
        value = rng.integers(0, 3, arr.shape) if name == "softmax_label" else rng.standard_normal(arr.shape)
        for ex in executors:
            ex.arg_dict[name][:] = value.astype(np.float32)


def train_step(ex):
    ex.forward(is_train=True)
    ex.backward()
    return ex.outputs[0].asnumpy(), {k: v.asnumpy() for k, v in ex.grad_dict.items()}


def test_simple_bind_allocates_each_group_on_its_context():
    ctx1, ctx2 = mx.cpu(0), mx.cpu(1)
    ex = two_stage_mlp().simple_bind(mx.cpu(0), group2ctx={"dev1": ctx1, "dev2": ctx2}, data=(4, 5))
    assert isinstance(ex, PlacedExecutor)
    where = {name: arr.context for name, arr in ex.arg_dict.items()}
    assert where == {
        "data": ctx1, "fc1_weight": ctx1, "fc1_bias": ctx1,
        "fc2_weight": ctx2, "fc2_bias": ctx2, "softmax_label": ctx2,
    }  # fmt: skip
    assert {name: g.context for name, g in ex.grad_dict.items()} == where
    # the loss has no group: it runs where its input runs
    assert ex.outputs[0].context == ctx2


def test_group2ctx_forward_and_gradients_match_one_context():
    net = two_stage_mlp()
    placed = net.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)}, data=(4, 5))
    single = net.simple_bind(mx.cpu(0), data=(4, 5))
    assert type(single) is not PlacedExecutor
    fill_same([placed, single])
    out_p, grads_p = train_step(placed)
    out_s, grads_s = train_step(single)
    np.testing.assert_array_equal(out_p, out_s)
    assert grads_p.keys() == grads_s.keys()
    for name in grads_s:
        np.testing.assert_array_equal(grads_p[name], grads_s[name])


def test_copies_are_inserted_on_crossing_edges_forward_and_backward():
    ex = two_stage_mlp().simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)}, data=(4, 5))
    text = ex.debug_str()
    forward, backward = text.split("== backward ==")
    assert forward.count("_CrossDeviceCopy") == 1  # act1 -> fc2
    assert backward.split("== placement ==")[0].count("_CrossDeviceCopy") == 1  # d(act1) back to dev1
    # gradient nodes run beside their forward nodes
    assert "_grad__backward_activation0: cpu(0)" in text
    assert "_grad__backward_softmaxoutput0: cpu(1)" in text


def test_bind_with_arrays_on_other_contexts_copies_inputs_and_gradients():
    a, b = sym.Variable("a"), sym.Variable("b")
    with sym.AttrScope(ctx_group="far"):
        y = sym.exp(a * b, name="y")
    z = y + a
    args = {"a": mx.nd.array([0.5, 1.0, -1.0], ctx=mx.cpu(0)), "b": mx.nd.array([2.0, 3.0, 4.0], ctx=mx.cpu(0))}
    grads = {"a": mx.nd.zeros((3,), ctx=mx.cpu(0)), "b": mx.nd.zeros((3,), ctx=mx.cpu(0))}
    ex = z.bind(mx.cpu(0), args, args_grad=grads, group2ctx={"far": mx.cpu(1)})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((3,)))
    av, bv = np.array([0.5, 1.0, -1.0]), np.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), np.exp(av * bv) + av, rtol=1e-6)
    np.testing.assert_allclose(grads["a"].asnumpy(), np.exp(av * bv) * bv + 1, rtol=1e-6)
    np.testing.assert_allclose(grads["b"].asnumpy(), np.exp(av * bv) * av, rtol=1e-6)
    # an operator without a group runs where its first input is: y + a follows y
    assert grads["a"].context == mx.cpu(0) and ex.outputs[0].context == mx.cpu(1)
    assert "y: cpu(1)" in ex.debug_str()


def test_batchnorm_auxiliary_states_live_with_their_group():
    with sym.AttrScope(ctx_group="dev2"):
        net = sym.BatchNorm(sym.Variable("data"), name="bn")
    ex = net.simple_bind(mx.cpu(0), group2ctx={"dev2": mx.cpu(1)}, data=(4, 3))
    assert all(arr.context == mx.cpu(1) for arr in ex.aux_arrays)


def test_group2ctx_on_the_bind_context_alone_is_a_plain_executor():
    ex = two_stage_mlp().simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(0)}, data=(4, 5))
    assert type(ex) is not PlacedExecutor


def test_group2ctx_values_must_be_contexts():
    with pytest.raises(ContextError, match=r"group2ctx\['dev1'\] must be a Context"):
        two_stage_mlp().simple_bind(mx.cpu(0), group2ctx={"dev1": "gpu0"}, data=(4, 5))


def test_reshape_keeps_the_placement():
    ex = two_stage_mlp().simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)}, data=(4, 5))
    smaller = ex.reshape(data=(2, 5), softmax_label=(2,))
    assert isinstance(smaller, PlacedExecutor)
    assert smaller.arg_dict["fc2_weight"].context == mx.cpu(1)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_group2ctx_cpu_and_gpu_match_one_context():
    net = two_stage_mlp()
    placed = net.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.gpu(0)}, data=(4, 5))
    single = net.simple_bind(mx.cpu(0), data=(4, 5))
    assert placed.arg_dict["fc2_weight"].context == mx.gpu(0)
    fill_same([placed, single])
    out_p, grads_p = train_step(placed)
    out_s, grads_s = train_step(single)
    np.testing.assert_allclose(out_p, out_s, rtol=1e-5, atol=1e-6)
    for name in grads_s:
        np.testing.assert_allclose(grads_p[name], grads_s[name], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("group2ctx", [{"dev1": mx.cpu(1)}, {"dev1": mx.cpu(0), "dev3": mx.cpu(0)}])
def test_a_group_left_out_of_group2ctx_is_refused_by_name(group2ctx):
    # as MXNet ("The device assignment not found for group dev2"), even when no node would move
    net = two_stage_mlp()
    with pytest.raises(ContextError, match=r"simple_bind: group2ctx gives no context to the ctx_group \['dev2'\]"):
        net.simple_bind(mx.cpu(0), data=(4, 5), group2ctx=group2ctx)
    ex = net.simple_bind(mx.cpu(0), data=(4, 5))
    with pytest.raises(ContextError, match=r"bind: group2ctx gives no context to the ctx_group \['dev2'\]"):
        net.bind(mx.cpu(0), ex.arg_dict, aux_states=ex.aux_dict, group2ctx=group2ctx)


def test_an_empty_group2ctx_places_nothing():
    ex = two_stage_mlp().simple_bind(mx.cpu(0), data=(4, 5), group2ctx={})
    assert not isinstance(ex, PlacedExecutor)

"""The executor's per-step path: unread gradients are not computed, and every mode still works."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym

SHAPES = {"data": (8, 12), "softmax_label": (8,)}


def _mlp():
    x = sym.FullyConnected(sym.Variable("data"), num_hidden=6, name="fc1")
    x = sym.FullyConnected(sym.relu(x), num_hidden=4, name="fc2")
    return sym.SoftmaxOutput(x, name="softmax")


def _bind(grad_req):
    ex = _mlp().simple_bind(mx.cpu(), grad_req=grad_req, **SHAPES)
    rng = np.random.default_rng(0)
    for name, arr in ex.arg_dict.items():
        if name == "softmax_label":
            arr[:] = rng.integers(0, 4, arr.shape).astype(np.float32)
        else:
            arr[:] = rng.standard_normal(arr.shape).astype(np.float32)
    return ex


def _weights_only(req="write"):
    return {n: req for n in _mlp().list_arguments() if n not in ("data", "softmax_label")}


def test_unread_data_gradient_of_first_layer_is_not_computed():
    ex = _bind(_weights_only())
    skipped = [line for line in ex.debug_str().splitlines() if "not computed (unread)" in line]
    assert len(skipped) == 1 and "data_grad (8, 12)" in skipped[0]
    full = _bind({n: "write" for n in _mlp().list_arguments() if n != "softmax_label"})
    assert "not computed" not in full.debug_str()


def test_gradients_are_the_same_when_the_data_gradient_is_skipped():
    ex, full = _bind(_weights_only()), _bind({n: "write" for n in _mlp().list_arguments() if n != "softmax_label"})
    for e in (ex, full):
        e.forward(is_train=True)
        e.backward()
    assert full.grad_dict["data"].asnumpy().any()
    for name, grad in ex.grad_dict.items():
        if grad is not None:  # None for an argument bound without a gradient, as in MXNet
            np.testing.assert_allclose(grad.asnumpy(), full.grad_dict[name].asnumpy(), rtol=1e-6)


def test_grad_req_add_accumulates_over_steps_with_skipped_outputs():
    once, twice = _bind(_weights_only()), _bind(_weights_only("add"))
    once.forward(is_train=True)
    once.backward()
    for _ in range(2):
        twice.forward(is_train=True)
        twice.backward()
    for name, grad in twice.grad_dict.items():
        if grad is None:
            continue
        np.testing.assert_allclose(grad.asnumpy(), 2 * once.grad_dict[name].asnumpy(), rtol=1e-5)


def test_monitor_sees_computed_outputs_and_not_the_skipped_one():
    ex = _bind(_weights_only())
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    assert "fc1_output" in seen and "softmax_output" in seen
    skipped = [line.split()[1] for line in ex.debug_str().splitlines() if "not computed" in line]
    assert skipped and not set(skipped) & set(seen)


def test_repeated_steps_match_a_fresh_executor_each_step():
    # the precomputed step lists must see new argument values on every call
    ex = _bind(_weights_only())
    rng = np.random.default_rng(1)
    for _ in range(3):
        batch = rng.standard_normal(SHAPES["data"]).astype(np.float32)
        ex.forward(is_train=True, data=mx.nd.array(batch))
        ex.backward()
        fresh = _bind(_weights_only())
        for name, arr in ex.arg_dict.items():
            arr.copyto(fresh.arg_dict[name])
        fresh.forward(is_train=True)
        fresh.backward()
        np.testing.assert_allclose(ex.outputs[0].asnumpy(), fresh.outputs[0].asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(
            ex.grad_dict["fc1_weight"].asnumpy(), fresh.grad_dict["fc1_weight"].asnumpy(), rtol=1e-6
        )


def test_shared_executor_and_reshape_keep_skipping_the_data_gradient():
    ex = _bind(_weights_only())
    weights = [name for name in ex.arg_dict if name.endswith(("_weight", "_bias"))]
    shared = _mlp().simple_bind(mx.cpu(), grad_req=_weights_only(), shared_arg_names=weights, shared_exec=ex, **SHAPES)
    assert shared.arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]
    small = ex.reshape(data=(4, 12), softmax_label=(4,))
    for e in (shared, small):
        assert "not computed (unread)" in e.debug_str()
        e.forward(is_train=True)
        e.backward()
    assert np.isfinite(small.grad_dict["fc1_weight"].asnumpy()).all()


@pytest.mark.parametrize("normalization", ["null", "batch", "valid"])
def test_softmax_output_gradient_in_an_executor_is_prob_minus_onehot(normalization):
    data = sym.Variable("data")
    net = sym.SoftmaxOutput(data, name="softmax", normalization=normalization, grad_scale=2.0)
    ex = net.simple_bind(mx.cpu(), grad_req={"data": "write"}, data=(5, 3))
    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    label = np.array([0, 2, 1, 1, 0], np.float32)
    ex.forward(is_train=True, data=mx.nd.array(x), softmax_label=mx.nd.array(label))
    ex.backward()
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    expected = (p - np.eye(3)[label.astype(int)]) * 2.0 / (5 if normalization != "null" else 1)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), expected, rtol=1e-5, atol=1e-6)

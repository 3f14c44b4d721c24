"""A monitor sees every operator's output, fused or not (MXNet's monitor knows no fusion)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym


def highway() -> sym.Symbol:
    # cnn_text_classification's highway gate: relu * gate + x * (1 - gate); the first product
    # and the sum fuse, and the exp chain may run in place over the relu it alone reads
    x, w = sym.Variable("x"), sym.Variable("w")
    relu, gate = sym.Activation(x, act_type="relu"), sym.Activation(w, act_type="sigmoid")
    mixed = relu * gate + x * (1 - gate)
    return sym.exp(sym.Activation(mixed, act_type="relu")) * 2 + 1


def monitored(
    net: sym.Symbol, monkeypatch, fuse: bool, ctx: mx.Context, group2ctx: dict | None = None
) -> dict[str, np.ndarray]:
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1" if fuse else "0")
    ex = net.simple_bind(ctx, grad_req="null", group2ctx=group2ctx, x=(3, 4), w=(3, 4))
    seen: dict[str, np.ndarray] = {}
    ex.set_monitor_callback(lambda name, arr: seen.setdefault(name, arr.asnumpy()))
    rng = np.random.default_rng(0)
    ex.forward(is_train=False, x=rng.normal(size=(3, 4)), w=rng.normal(size=(3, 4)))
    ex.outputs[0].wait_to_read()
    return seen


@pytest.mark.parametrize("group2ctx", [None, {"far": mx.cpu(1)}], ids=["one-device", "placed"])
def test_monitor_sees_the_inner_members_of_a_fused_chain(monkeypatch, group2ctx):
    with mx.name.NameManager():
        net = highway()
    fused = monitored(net, monkeypatch, True, mx.cpu(), group2ctx)
    plain = monitored(net, monkeypatch, False, mx.cpu(), group2ctx)
    assert "_mul0_output" in fused and "exp0_output" in fused
    assert sorted(fused) == sorted(plain)
    for name, value in plain.items():
        np.testing.assert_allclose(fused[name], value, rtol=1e-6, err_msg=name)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_monitor_sees_the_inner_members_of_a_fused_chain_on_gpu(monkeypatch):
    net = highway()
    fused = monitored(net, monkeypatch, True, mx.gpu(0))
    plain = monitored(net, monkeypatch, False, mx.cpu())
    assert sorted(fused) == sorted(plain)
    for name, value in plain.items():
        np.testing.assert_allclose(fused[name], value, rtol=1e-5, err_msg=name)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "plain"])
@pytest.mark.parametrize(
    "ctx",
    [
        mx.cpu(),
        pytest.param(
            mx.gpu(),
            marks=[pytest.mark.gpu, pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy")],
        ),
    ],
    ids=["cpu", "gpu"],
)
def test_a_fused_backward_chain_shows_mxnet_backward_names(monkeypatch, fuse, ctx):
    # the backward of exp -> *2 -> tanh is an elementwise chain; each member keeps MXNet's name
    monkeypatch.setenv("LAZYND_SYM_FUSION", "1" if fuse else "0")
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc1")
    net = sym.tanh(sym.exp(net, name="e") * 2, name="t")
    net = sym.SoftmaxOutput(sym.FullyConnected(net, num_hidden=2, name="fc2"), name="softmax")
    ex = net.simple_bind(ctx, data=(2, 4))
    names: list[str] = []
    ex.set_monitor_callback(lambda name, arr: names.append(name))
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    backward = [name for name in names if "_backward_" in name]
    assert backward == [
        "softmax_backward_output0",
        *(f"fc2_backward_output{k}" for k in range(3)),
        "t_backward_output",
        f"{names[2].removesuffix('_output')}_backward_output",  # the *2 node, named by the name manager
        "e_backward_output",
        *(f"fc1_backward_output{k}" for k in range(3)),
    ]
    assert len(backward) == len(names) - 6  # all but the six forward outputs

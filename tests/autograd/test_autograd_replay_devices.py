"""Backward replay on every device: a GPU graph is replayed as a CPU one is (lazynd.autograd.replay).

Each test runs on cpu(0) and, where a GPU is present, on gpu(0) (the ``ctx`` fixture).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.autograd import replay
from lazynd.runtime.capture import PushCapture


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    monkeypatch.setattr(replay, "ENABLED", True)  # whatever LAZYND_AUTOGRAD_REPLAY says
    replay.forget_programs()
    yield
    replay.forget_programs()


def _params(ctx: mx.Context, grad_req: str = "write") -> list:
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in ((12, 8), (8, 5)):
        for shape in ((fan_out, fan_in), (fan_out,)):
            p = mx.nd.array(rng.standard_normal(shape).astype(np.float32), ctx=ctx)
            p.attach_grad(grad_req)
            params.append(p)
    return params


def _loss(params: list, x: np.ndarray, y: np.ndarray, ctx: mx.Context) -> mx.NDArray:
    data, label = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
    with autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(data, params[0], params[1], num_hidden=8))
        # the first weight read a second time: its gradient is a sum of two terms
        h = h + mx.nd.sum(params[0]) * 0.01
        return mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, params[2], params[3], num_hidden=5), label)


def _train(ctx: mx.Context, steps: int, enabled: bool, monkeypatch, grad_req: str = "write") -> list[np.ndarray]:
    monkeypatch.setattr(replay, "ENABLED", enabled)
    rng = np.random.default_rng(1)
    params = _params(ctx, grad_req)
    for _ in range(steps):
        x = rng.standard_normal((4, 12)).astype(np.float32)
        y = rng.integers(0, 5, 4).astype(np.float32)
        _loss(params, x, y, ctx).backward()
        for p in params:
            mx.nd.sgd_update(p, p.grad, lr=0.1, out=p)
    return [p.asnumpy() for p in params] + [p.grad.asnumpy() for p in params]


def test_a_graph_met_a_third_time_is_one_replayed_operation_on_its_device(ctx) -> None:
    params = _params(ctx)
    x, y = np.ones((4, 12), np.float32), np.zeros(4, np.float32)
    _loss(params, x, y, ctx).backward()  # noted
    _loss(params, x, y, ctx).backward()  # captured
    loss = _loss(params, x, y, ctx)
    with PushCapture() as seen:
        loss.backward()
    assert [(c, name) for c, _, _, _, _, name in seen.pushes] == [(ctx, "autograd_backward")]


def test_replayed_training_gives_what_the_rules_give_on_its_device(ctx, monkeypatch) -> None:
    replayed = _train(ctx, 5, True, monkeypatch)
    assert any(isinstance(p, replay.BackwardProgram) for p in replay._programs.values())
    by_rules = _train(ctx, 5, False, monkeypatch)
    for a, b in zip(replayed, by_rules, strict=True):
        np.testing.assert_array_equal(a, b)


def test_grad_req_add_accumulates_across_replayed_passes_on_its_device(ctx, monkeypatch) -> None:
    replayed = _train(ctx, 4, True, monkeypatch, grad_req="add")
    by_rules = _train(ctx, 4, False, monkeypatch, grad_req="add")
    for a, b in zip(replayed, by_rules, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_a_capture_sees_copies_between_host_and_device() -> None:
    # a capture that missed a copy would build a program without it: the copies go through the
    # runtime's device push, which hands every GPU operation to the capture
    host = mx.nd.array([1.0, 2.0])
    with PushCapture() as seen:
        on_gpu = host.copyto(mx.gpu(0))
        again = on_gpu.copyto(mx.gpu(0))
        back = again.copyto(mx.cpu())
    names = [name for *_, name in seen.pushes]
    assert names == ["_copyto_h2d", "_copyto_d2d", "_copyto_d2h"]
    np.testing.assert_array_equal(back.asnumpy(), [1.0, 2.0])


def test_a_graph_with_an_output_nobody_reads_is_replayed(ctx) -> None:
    # split's second half is never used: its zero gradient is made by an operation of the pass, so
    # the pass is replayed like any other (an array made without one could not be)
    x = mx.nd.array(np.arange(8.0).reshape(4, 2), ctx=ctx)
    x.attach_grad()

    def loss() -> mx.NDArray:
        with autograd.record():
            first, _ = mx.nd.split(x, num_outputs=2, axis=0)
            return mx.nd.sum(first * first)

    head = mx.nd.ones((1,), ctx=ctx)  # given, not made by each backward (as a GPU's default ones are)
    loss().backward(head)
    loss().backward(head)
    last = loss()
    with PushCapture() as seen:
        last.backward(head)
    assert [name for *_, name in seen.pushes] == ["autograd_backward"]
    want = np.zeros((4, 2))
    want[:2] = 2 * np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)

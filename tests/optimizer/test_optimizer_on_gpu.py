"""The optimizer paths that reach a GPU, against the same updates on the CPU: SGD's prepared
multi-parameter update (its plan and push arguments kept between calls), LARS stepped in groups,
optimizer states loaded on the host and moved to the weights' GPU, and MXNet's ``'test'``
optimizer and ``'teststore'`` store.

On the CUDA emulator these check the arithmetic and the CuPy calls; on a GPU they also check that
an update pushed again from kept arguments is ordered after the gradients written just before it
on the same and on other streams (host->device copies), which only a GPU's streams can show.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd import lr_scheduler, optimizer

pytestmark = pytest.mark.gpu

SHAPES = [(3, 4), (3,), (2, 3), (5,), (4, 2), (7,)]
NAMES = {0: "a_weight", 1: "a_bias", 2: "b_weight", 3: "b_gamma", 4: "c_weight", 5: "c_bias"}


@pytest.fixture
def gpu():
    if mx.num_gpus() == 0:
        pytest.skip("needs gpu(0) (the CUDA emulator's will do)")
    return mx.gpu(0)


def _trained(ctx: mx.Context, make: Any, steps: int = 4, seed: int = 3) -> tuple[list[np.ndarray], Any]:
    """The weights after ``steps`` list updates (every parameter in one updater call) on ``ctx``,
    each batch's gradients copied in from the host just before its update."""
    rng = np.random.default_rng(seed)
    w0 = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    batches = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]
    opt = make()
    updater = optimizer.get_updater(opt)
    weights = [mx.nd.array(w, ctx=ctx) for w in w0]
    grads = [mx.nd.zeros(s, ctx=ctx) for s in SHAPES]  # the same gradient arrays every step, as a Module's
    indices = list(range(len(SHAPES)))
    for batch in batches:
        for g, host in zip(grads, batch, strict=True):
            g[:] = host
        updater(indices, grads, weights)
    return [w.asnumpy() for w in weights], opt


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_prepared_list_update_on_a_gpu_matches_the_cpu(gpu, momentum):
    def make() -> optimizer.Optimizer:
        opt = optimizer.create(
            "sgd", learning_rate=0.4, momentum=momentum, wd=0.01, rescale_grad=0.5,
            param_idx2name=NAMES, lr_scheduler=lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.4),
        )  # fmt: skip
        opt.set_lr_mult({"b_weight": 0.25})
        return opt

    (on_gpu, opt), (on_cpu, _) = _trained(gpu, make), _trained(mx.cpu(), make)
    assert opt._prepared_calls, "the list update did not take the prepared call"
    for k, (a, b) in enumerate(zip(on_gpu, on_cpu, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"parameter {k}")


def test_lars_groups_on_a_gpu_match_the_cpu(gpu, monkeypatch):
    # six parameters in groups of four and two, the learning rate changing between steps (the
    # momentum correction of the first group)
    monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)

    def make() -> optimizer.Optimizer:
        return optimizer.create(
            "lars", learning_rate=0.3, momentum=0.9, wd=0.001, eta=0.01, momentum_correction=True,
            param_idx2name=NAMES, lr_scheduler=lr_scheduler.FactorScheduler(step=1, factor=0.7, base_lr=0.3),
        )  # fmt: skip

    (on_gpu, _), (on_cpu, _) = _trained(gpu, make), _trained(mx.cpu(), make)
    for k, (a, b) in enumerate(zip(on_gpu, on_cpu, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=f"parameter {k}")


def test_states_loaded_on_the_host_move_to_the_weights_gpu(gpu):
    rng = np.random.default_rng(5)
    w0, g0 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    results = []
    for ctx in (gpu, mx.cpu()):
        first = optimizer.get_updater(optimizer.create("adam", learning_rate=0.1))
        weight, grad = mx.nd.array(w0, ctx=ctx), mx.nd.array(g0, ctx=ctx)
        first(0, grad, weight)
        saved = first.get_states()
        resumed = optimizer.get_updater(optimizer.create("adam", learning_rate=0.1))
        resumed.set_states(saved)  # the states load onto the CPU
        resumed(0, grad, weight)
        assert all(s.context == ctx for s in resumed.states[0]), [s.context for s in resumed.states[0]]
        results.append(weight.asnumpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_the_test_optimizer_and_teststore_sum_on_a_gpu(gpu):
    opt = optimizer.create("test", rescale_grad=0.5)
    weight, grad = mx.nd.ones((2, 3), ctx=gpu), mx.nd.ones((2, 3), ctx=gpu) * 4
    state = opt.create_state(0, weight)
    opt.update(0, weight, grad, state)
    np.testing.assert_array_equal(weight.asnumpy(), np.full((2, 3), 3.0))
    np.testing.assert_array_equal(state.asnumpy(), np.full((2, 3), 3.0))
    store = mx.kv.create("teststore")
    values = [mx.nd.ones((4,), ctx=gpu), mx.nd.ones((4,), ctx=mx.cpu()) * 2, mx.nd.ones((4,), ctx=gpu) * 3]
    store.pushpull("w", values)
    for v in values:
        np.testing.assert_array_equal(v.asnumpy(), np.full((4,), 6.0))
    out = [mx.nd.zeros((4,), ctx=mx.cpu()), mx.nd.zeros((4,), ctx=gpu)]
    store.broadcast("w", mx.nd.ones((4,), ctx=gpu) * 5, out)
    for o in out:
        np.testing.assert_array_equal(o.asnumpy(), np.full((4,), 5.0))

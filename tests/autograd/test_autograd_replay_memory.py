"""The memory of a replayed backward pass (lazynd.autograd.replay_program): the gradients on their
way through the pass share buffers where their uses do not overlap, and the pass computes what
running every rule computes."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.autograd import replay


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    monkeypatch.setattr(replay, "ENABLED", True)
    replay.forget_programs()
    yield
    replay.forget_programs()


def _params(rng: np.random.Generator, sizes: tuple[int, ...]) -> list:
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:], strict=False):
        for shape in ((fan_out, fan_in), (fan_out,)):
            p = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
            p.attach_grad()
            params.append(p)
    return params


def _deep_loss(params: list, x: np.ndarray, y: np.ndarray, branch: bool) -> mx.NDArray:
    """An MLP of equal hidden layers; with ``branch``, the first hidden layer is also read by the
    last one (its gradient is the sum of two terms, one computed long before the other)."""
    data, label = mx.nd.array(x), mx.nd.array(y)
    n_layers = len(params) // 2
    with autograd.record():
        h, first = data, None
        for i in range(n_layers):
            h = mx.nd.FullyConnected(h, params[2 * i], params[2 * i + 1], num_hidden=params[2 * i].shape[0])
            if i < n_layers - 1:
                h = mx.nd.relu(h)
                if first is None:
                    first = h
                elif branch and i == n_layers - 2:
                    h = h + first * 0.5
        return mx.nd.SoftmaxOutput(h, label)


def _program() -> replay.BackwardProgram:
    return next(p for p in replay._programs.values() if isinstance(p, replay.BackwardProgram))


def test_a_deep_graphs_gradients_on_their_way_share_buffers() -> None:
    # 784-8-8-8-10 as the benchmark's MLP: the rules allocate the loss's gradient and, per hidden
    # layer, its data gradient and its relu's gradient; the program allocates one buffer of each
    # shape that is live at once: the loss's, and two (128, 8) ones taking turns
    rng = np.random.default_rng(0)
    params = _params(rng, (6, 8, 8, 8, 10))
    x, y = rng.standard_normal((128, 6)).astype(np.float32), rng.integers(0, 10, 128).astype(np.float32)
    for _ in range(3):
        _deep_loss(params, x, y, branch=False).backward()
    own = _program().own
    assert sorted(shape for shape, _ in own) == [(128, 8), (128, 8), (128, 10)]


@pytest.mark.parametrize("branch", [False, True])
def test_a_replayed_deep_pass_gives_the_gradients_of_its_rules(branch: bool, monkeypatch) -> None:
    def train(enabled: bool) -> list[np.ndarray]:
        monkeypatch.setattr(replay, "ENABLED", enabled)
        replay.forget_programs()
        rng = np.random.default_rng(1)
        params = _params(rng, (6, 8, 8, 8, 8, 10))
        for _ in range(5):
            x = rng.standard_normal((16, 6)).astype(np.float32)
            y = rng.integers(0, 10, 16).astype(np.float32)
            _deep_loss(params, x, y, branch).backward()
            for p in params:
                mx.nd.sgd_update(p, p.grad, lr=0.1, out=p)
        if enabled:
            assert len(_program().own) < 9  # shared: the rules allocate 9 or more on their way
        return [p.asnumpy() for p in params] + [p.grad.asnumpy() for p in params]

    for a, b in zip(train(True), train(False), strict=True):
        np.testing.assert_array_equal(a, b)


def _views_and_shared_uses(x: mx.NDArray, w: mx.NDArray) -> mx.NDArray:
    """Halves of ``x`` read several times, joined again and sliced: gradients summed from several
    uses, made by steps of several outputs (split) and written into parts of a buffer (concat)."""
    a, b = mx.nd.split(x, num_outputs=2, axis=0)
    h = mx.nd.concat(mx.nd.relu(a) * b, a, dim=0)
    h = mx.nd.FullyConnected(h, w, num_hidden=w.shape[0], no_bias=True)
    tail = mx.nd.sum(
        mx.nd.tanh(mx.nd.slice_axis(h, axis=0, begin=1, end=None)) * mx.nd.slice_axis(h, axis=0, begin=0, end=-1)
    )
    return tail + mx.nd.sum(mx.nd.log_softmax(h, axis=0) * mx.nd.sum(mx.nd.slice_axis(x, axis=0, begin=0, end=1)))


def _hidden_outputs(x: mx.NDArray, w: mx.NDArray) -> mx.NDArray:
    """BatchNorm in training (its saved mean and variance) and SoftmaxOutput after a transposed
    product: outputs of the forward pass no gradient reads, beside a softmax along a short axis."""
    h = mx.nd.FullyConnected(x, w, num_hidden=w.shape[0], no_bias=True)
    n = h.shape[1]
    h = mx.nd.BatchNorm(h, mx.nd.ones((n,)), mx.nd.zeros((n,)), mx.nd.zeros((n,)), mx.nd.ones((n,)), fix_gamma=False)
    p = mx.nd.SoftmaxOutput(mx.nd.transpose(h), mx.nd.array(np.arange(n) % 3))
    return mx.nd.sum(p * mx.nd.softmax(mx.nd.transpose(mx.nd.sigmoid(h)), axis=-1)) + mx.nd.mean(mx.nd.max(h, axis=1))


@pytest.mark.parametrize("graph", [_views_and_shared_uses, _hidden_outputs])
def test_replayed_passes_of_branching_graphs_with_head_gradients_give_their_rules_bits(graph, monkeypatch) -> None:
    # found nothing wrong when this was written (a differential fuzz of thousands of graphs): kept
    # as a guard of the shared buffers on graphs the MLP tests above do not make; grad_req 'add',
    # a head gradient (relu's gradient may be written in place: the head's must stay as given),
    # and a second backward of a retained graph, over passes 1 (rules), 2 (capture), 3+ (replay)
    def passes(enabled: bool) -> list[np.ndarray]:
        monkeypatch.setattr(replay, "ENABLED", enabled)
        replay.forget_programs()
        rng = np.random.default_rng(2)
        x, w = mx.nd.zeros((6, 3)), mx.nd.zeros((3, 3))
        x.attach_grad()
        w.attach_grad("add")
        seen = []
        for step in range(5):
            x[:] = rng.standard_normal((6, 3)).astype(np.float32)
            w[:] = rng.standard_normal((3, 3)).astype(np.float32)
            head = mx.nd.array([1.5 + step])
            with autograd.record():
                loss = graph(x, w)
            loss.backward(head, retain_graph=step == 3)
            if step == 3:
                loss.backward(head)
            np.testing.assert_array_equal(head.asnumpy(), [1.5 + step])
            seen += [x.grad.asnumpy(), w.grad.asnumpy()]
        if enabled:
            assert isinstance(_program(), replay.BackwardProgram)
        return seen

    for a, b in zip(passes(True), passes(False), strict=True):
        np.testing.assert_array_equal(a, b)

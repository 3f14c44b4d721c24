"""The work the engine weighs before running an operation on the pushing thread: an executor's
bulked pass and a replayed backward pass count the elements their kernels touch, each buffer once
(lazynd.runtime.elements_touched); a product (``dot``, ``batch_dot``) counts its multiply-adds.

Under a single-threaded host BLAS the engine runs an operation of at most
:data:`~lazynd.runtime.device_push.SMALL_INLINE_MAX` elements on the pushing thread when its vars
are free; a pass pushed without its size counted as one of unknown size and went to the workers,
where a training loop's chain of passes ran 1.1-1.5x slower (bench/user_loops.py with
``OPENBLAS_NUM_THREADS=1``).  A product counted by its elements ran on the pushing thread up to
1M elements, where two independent 512 x 512 products run side by side in half the time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd import autograd
from lazynd.autograd import replay, replay_program
from lazynd.backend import blas
from lazynd.engine import ThreadedEngine
from lazynd.ops import registry
from lazynd.runtime import clear_plans, device_push, elements_touched, plan_for
from lazynd_sym.executor import run as run_module


@pytest.fixture
def single_threaded_blas(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadedEngine]:
    """A threaded engine of its own, with the inline rule of a single-threaded host BLAS."""
    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", None)
    monkeypatch.setattr(blas, "BLAS_VAR", None)
    engine = ThreadedEngine(num_workers=2)
    monkeypatch.setattr(mx.engine, "_engine", engine)
    yield engine
    engine.shutdown()


def _threads_running(monkeypatch: pytest.MonkeyPatch, owner: type, method: str) -> list[str]:
    """The names of the threads that run ``owner.method`` from now on, in order."""
    ran: list[str] = []
    real = getattr(owner, method)

    def recording(self, *args, **kwargs):
        ran.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, method, recording)
    return ran


def _mlp_executor(batch: int, width: int) -> object:
    x = sym.Variable("data")
    h = sym.Activation(sym.FullyConnected(x, num_hidden=width, name="fc1"), act_type="relu")
    net = sym.SoftmaxOutput(sym.FullyConnected(h, num_hidden=3, name="fc2"), name="sm")
    ex = net.simple_bind(mx.cpu(), data=(batch, width), sm_label=(batch,))
    ex.arg_dict["data"][:] = np.random.default_rng(0).standard_normal((batch, width))
    ex.arg_dict["sm_label"][:] = np.arange(batch) % 3
    for name in ("fc1_weight", "fc2_weight"):
        ex.arg_dict[name][:] = 0.1
    mx.nd.waitall()
    return ex


def test_elements_touched_counts_each_array_once() -> None:
    a, b = np.zeros((2, 3)), np.zeros(5)
    assert elements_touched([a, None, b, a]) == 11
    assert elements_touched([]) == 0


def test_a_small_executors_passes_run_on_the_pushing_thread(single_threaded_blas, monkeypatch) -> None:
    ex = _mlp_executor(4, 6)
    ran = _threads_running(monkeypatch, run_module.PassRunner, "_run_bulk")
    ex.forward(is_train=True)
    assert ran == [threading.current_thread().name]  # at the push, before forward() returned
    ex.backward()
    assert ran == [threading.current_thread().name] * 2
    assert np.isfinite(ex.grad_dict["fc1_weight"].asnumpy()).all()


def test_a_pass_over_the_limit_goes_to_the_engine_queue(single_threaded_blas, monkeypatch) -> None:
    ex = _mlp_executor(4, 6)
    ex.forward(is_train=True)
    expected = ex.outputs[0].asnumpy()
    monkeypatch.setattr(device_push, "SMALL_INLINE_MAX", 16)  # below this pass's elements
    ran = _threads_running(monkeypatch, run_module.PassRunner, "_run_bulk")
    ex.forward(is_train=True)
    assert ran == []  # not run at the push
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), expected)
    assert len(ran) == 1


def test_a_replayed_backward_pass_runs_on_the_pushing_thread(single_threaded_blas, monkeypatch) -> None:
    monkeypatch.setattr(replay, "ENABLED", True)
    replay.forget_programs()
    rng = np.random.default_rng(0)
    w = mx.nd.array(rng.standard_normal((3, 5)).astype(np.float32))
    w.attach_grad()
    x, y = mx.nd.array(rng.standard_normal((4, 5))), mx.nd.array([0, 1, 2, 0])

    def step() -> None:
        with autograd.record():
            loss = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(x, w, num_hidden=3, no_bias=True), y)
        loss.backward()

    step()  # noted
    step()  # captured: the program is built
    mx.nd.waitall()
    ran = _threads_running(monkeypatch, replay_program.BackwardProgram, "_run")
    try:
        step()
        assert ran == [threading.current_thread().name]
    finally:
        replay.forget_programs()


def test_a_product_counts_its_multiply_adds() -> None:
    a, b = mx.nd.ones((3, 4)), mx.nd.ones((4, 5))
    assert plan_for(registry.get("dot"), [a, b], {}).work == 3 * 4 * 5
    assert plan_for(registry.get("dot"), [mx.nd.ones((4, 3)), b], {"transpose_a": True}).work == 3 * 4 * 5
    batch = plan_for(registry.get("batch_dot"), [mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 4, 5))], {})
    assert batch.work == 2 * 3 * 4 * 5
    # elements where they are more: a vector dot has one output
    assert plan_for(registry.get("dot"), [mx.nd.ones((7,)), mx.nd.ones((7,))], {}).work == 15


def test_independent_products_run_side_by_side_under_a_single_threaded_blas(single_threaded_blas, monkeypatch) -> None:
    # 512 x 512 products touch fewer elements than the inline limit, but their multiply-adds exceed
    # it: pushed back to back they run at the same time (each kernel waits, bounded, until the
    # other has started: both finish their wait only when the engine runs them side by side)
    op = registry.get("dot")
    started = [threading.Event(), threading.Event()]
    met: list[bool] = []
    real = op.forward

    def rendezvous(kctx, attrs, inputs, outputs, aux):
        mine = 0 if inputs[0] is a.data_array else 1
        started[mine].set()
        met.append(started[1 - mine].wait(10))
        return real(kctx, attrs, inputs, outputs, aux)

    monkeypatch.setattr(op, "forward", rendezvous)
    clear_plans()  # plans made before take the kernel as it was
    rng = np.random.default_rng(0)
    a, b, c = (mx.nd.array(rng.standard_normal((512, 512)).astype(np.float32)) for _ in range(3))
    mx.nd.waitall()
    assert 512 * 512 * 3 < device_push.SMALL_INLINE_MAX  # by elements it would run at the push
    x, y = mx.nd.dot(a, b), mx.nd.dot(c, b)
    x.wait_to_read()
    y.wait_to_read()
    assert met == [True, True]

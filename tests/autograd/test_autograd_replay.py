"""Replayed backward passes (lazynd.autograd.replay): from the third backward of graphs recorded with
the same structure on (the first notes it, the second is captured), a pass pushes one operation,
and computes what running every rule computes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import lazynd as mx
from lazynd import LazyNDError, autograd
from lazynd.autograd import replay
from lazynd.errors import EngineError
from lazynd.runtime.capture import PushCapture


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    monkeypatch.setattr(replay, "ENABLED", True)  # these tests are about replay, whatever LAZYND_AUTOGRAD_REPLAY says
    replay.forget_programs()
    yield
    replay.forget_programs()


def _mlp_params(rng: np.random.Generator, grad_req: str = "write") -> list:
    params = []
    for fan_in, fan_out in ((12, 8), (8, 5)):
        for shape in ((fan_out, fan_in), (fan_out,)):
            p = mx.nd.array(rng.standard_normal(shape).astype(np.float32))
            p.attach_grad(grad_req)
            params.append(p)
    return params


def _mlp_loss(params: list, x: np.ndarray, y: np.ndarray) -> mx.NDArray:
    data, label = mx.nd.array(x), mx.nd.array(y)
    with autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(data, params[0], params[1], num_hidden=8))
        return mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, params[2], params[3], num_hidden=5), label)


def _mlp_step(params: list, x: np.ndarray, y: np.ndarray) -> None:
    _mlp_loss(params, x, y).backward()


def _pushes_of(step) -> list[str]:
    """The names of the operations ``step()`` pushes (its own backward capture aside)."""
    with PushCapture() as seen:
        step()
    assert seen.complete
    return [name for *_, name in seen.pushes]


def _train(steps: int, enabled: bool, monkeypatch, grad_req: str = "write") -> list[np.ndarray]:
    monkeypatch.setattr(replay, "ENABLED", enabled)
    rng = np.random.default_rng(0)
    params = _mlp_params(rng, grad_req)
    for _ in range(steps):
        x = rng.standard_normal((4, 12)).astype(np.float32)
        y = rng.integers(0, 5, 4).astype(np.float32)
        _mlp_step(params, x, y)
        for p in params:
            mx.nd.sgd_update(p, p.grad, lr=0.1, out=p)
    return [p.asnumpy() for p in params] + [p.grad.asnumpy() for p in params]


def test_a_graph_met_a_third_time_is_one_replayed_operation() -> None:
    params = _mlp_params(np.random.default_rng(0))
    x, y = np.ones((4, 12), np.float32), np.zeros(4, np.float32)
    _mlp_step(params, x, y)  # the first: every rule runs, the structure is noted
    _mlp_step(params, x, y)  # the second: every rule runs, captured
    names = _pushes_of(_mlp_loss(params, x, y).backward)
    assert names == ["autograd_backward"]


def test_a_graph_met_once_is_only_noted() -> None:
    # a program whose graphs never repeat pays for the structure walk, not for captures and builds
    params = _mlp_params(np.random.default_rng(0))
    _mlp_step(params, np.ones((4, 12), np.float32), np.zeros(4, np.float32))
    assert list(replay._programs.values()) == [replay.SEEN]
    _mlp_step(params, np.ones((4, 12), np.float32), np.zeros(4, np.float32))
    assert isinstance(next(iter(replay._programs.values())), replay.BackwardProgram)


def test_replayed_training_gives_the_weights_and_gradients_of_rules_run_every_time(monkeypatch) -> None:
    replayed = _train(6, True, monkeypatch)
    assert replay._programs, "the graph was not kept for replay"
    by_rules = _train(6, False, monkeypatch)
    for a, b in zip(replayed, by_rules, strict=True):
        np.testing.assert_array_equal(a, b)


def test_grad_req_add_accumulates_across_replayed_passes(monkeypatch) -> None:
    replayed = _train(4, True, monkeypatch, grad_req="add")
    by_rules = _train(4, False, monkeypatch, grad_req="add")
    for a, b in zip(replayed, by_rules, strict=True):
        np.testing.assert_array_equal(a, b)


def _product_train(steps: int, enabled: bool, monkeypatch) -> tuple[list[np.ndarray], list[str]]:
    # the rule of x * w computes both operands' gradients; the data takes none
    monkeypatch.setattr(replay, "ENABLED", enabled)
    rng = np.random.default_rng(1)
    w = mx.nd.array(rng.standard_normal((4, 3)).astype(np.float32))
    w.attach_grad()
    for _ in range(steps):
        x = mx.nd.array(rng.standard_normal((4, 3)).astype(np.float32))
        with autograd.record():
            loss = mx.nd.sum(mx.nd.square(x * w))
        loss.backward()
        mx.nd.sgd_update(w, w.grad, lr=0.01, out=w)
    programs = [p for p in replay._programs.values() if isinstance(p, replay.BackwardProgram)]
    names = [step[6] for step in programs[0].steps] if programs else []
    return [w.asnumpy(), w.grad.asnumpy()], names


def test_a_replayed_pass_leaves_out_the_steps_whose_gradients_reach_no_variable(monkeypatch) -> None:
    replayed, names = _product_train(5, True, monkeypatch)
    # square's gradient (og * 2x: a _mul_scalar and a _mul), then w's (one _mul); x's is left out
    assert names.count("_mul") == 2, names
    by_rules, _ = _product_train(5, False, monkeypatch)
    for a, b in zip(replayed, by_rules, strict=True):
        np.testing.assert_array_equal(a, b)


def test_retain_graph_replays_the_same_graph_again() -> None:
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad("add")
    with autograd.record():
        y = mx.nd.exp(x) * x
    for _ in range(3):
        y.backward(retain_graph=True)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * (e + e * [1.0, 2.0, 3.0]), rtol=1e-6)


def test_a_constant_read_twice_then_two_constants_are_two_graphs() -> None:
    # the same array at two places makes another graph than two arrays there: a replay that took
    # the second place's array from the first would give x the gradient 2 * c1 instead of c1 + c2
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    c1, c2 = mx.nd.array([3.0, 4.0]), mx.nd.array([10.0, 20.0])
    for a, b in ((c1, c1), (c1, c1), (c1, c2), (c1, c2)):
        with autograd.record():
            y = x * a + x * b
        y.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), a.asnumpy() + b.asnumpy())


def test_new_shapes_make_a_new_program() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for values in ([1.0, 2.0], [1.0, 2.0, 3.0], [4.0, 5.0]):
        x = mx.nd.array(values)
        x.attach_grad()
        with autograd.record():
            y = mx.nd.tanh(x) * 2
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), 2 * (1 - np.tanh(values) ** 2), rtol=1e-5, atol=1e-6)
    assert len(replay._programs) == 2


def test_a_replayed_pass_still_refuses_arrays_written_after_recording() -> None:
    for k in range(3):
        x = mx.nd.array([1.0, 2.0])
        x.attach_grad()
        c = mx.nd.array([3.0, 4.0])
        with autograd.record():
            y = x * c
        if k == 2:
            c += 1  # the rule of y reads c: its gradient would be wrong
            with pytest.raises(LazyNDError, match=r"input 'rhs' of operator '_mul'.*modified in place"):
                y.backward()
        else:
            y.backward()
    assert replay._programs


def test_an_error_in_a_replayed_pass_names_its_operator_at_the_wait() -> None:
    params = _mlp_params(np.random.default_rng(0))
    x = np.ones((4, 12), np.float32)
    _mlp_step(params, x, np.zeros(4, np.float32))
    _mlp_step(params, x, np.zeros(4, np.float32))
    _mlp_step(params, x, np.array([0, 1, 7, 2], np.float32))  # label 7 of 5 classes
    with pytest.raises(EngineError, match=r"SoftmaxOutput.*in 'autograd_backward'.*label"):
        params[0].grad.wait_to_read()


def test_head_gradients_are_read_from_each_pass() -> None:
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for head in ([1.0, 1.0], [2.0, -1.0], [0.5, 3.0]):
        with autograd.record():
            y = mx.nd.sin(x)
        y.backward(mx.nd.array(head))
        np.testing.assert_allclose(x.grad.asnumpy(), np.cos([1.0, 2.0]) * head, rtol=1e-6)


def test_no_replay_while_the_profiler_records(tmp_path) -> None:
    params = _mlp_params(np.random.default_rng(0))
    x, y = np.ones((4, 12), np.float32), np.zeros(4, np.float32)
    _mlp_step(params, x, y)
    _mlp_step(params, x, y)
    mx.profiler.profiler_set_config(filename=str(tmp_path / "trace.json"))
    mx.profiler.profiler_set_state("run")
    try:
        out = _mlp_loss(params, x, y)
        names = _pushes_of(out.backward)
    finally:
        mx.profiler.profiler_set_state("stop")
    assert "autograd_backward" not in names and "_backward_FullyConnected" in names


def test_threads_replaying_their_own_graphs_get_their_own_gradients() -> None:
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def train(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            params = _mlp_params(rng)
            for _ in range(20):
                _mlp_step(params, rng.standard_normal((4, 12)).astype(np.float32), np.zeros(4, np.float32))
                for p in params:
                    mx.nd.sgd_update(p, p.grad, lr=0.1, out=p)
            results[seed] = [p.asnumpy() for p in params]
        except BaseException as err:  # noqa: BLE001 - reported by the test thread
            errors.append(err)

    threads = [threading.Thread(target=train, args=(seed,)) for seed in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    together = dict(results)
    for seed in (1, 2):
        train(seed)  # again, alone
    assert not errors, errors
    for seed in (1, 2):
        for a, b in zip(together[seed], results[seed], strict=True):
            np.testing.assert_array_equal(a, b)


def test_a_replayed_pass_waits_for_pending_writes_to_what_it_reads() -> None:
    # the head gradient is still being written by another thread's operation when backward is
    # called: the replayed pass must run after it, reading its values
    if mx.engine.get_engine().name == "naive":
        pytest.skip("the naive engine runs each operation at its push: nothing is ever pending")
    from lazynd.runtime import push

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    for k in range(3):  # the first pass notes the graph, the second is captured, the third replayed
        head = mx.nd.array([1.0, 1.0])
        with autograd.record():
            y = x * 3
        release = threading.Event()

        def slow_write(data: np.ndarray) -> None:
            release.wait(10)
            data[:] = [5.0, 7.0]

        before = head.var.version
        writer = threading.Thread(
            target=push, args=(head.context, slow_write, (head.data_array,), [], [head.var], "slow")
        )
        writer.start()
        while head.var.version == before:  # not pushed yet
            pass
        y.backward(head)
        release.set()
        writer.join()
        np.testing.assert_array_equal(x.grad.asnumpy(), [15.0, 21.0], err_msg=f"pass {k}")
    assert replay._programs


class _Triple(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 3)  # mx.nd operations inside an operation


@mx.operator.register("replay_test_triple")
class _TripleProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Triple()


def test_an_operation_that_pushes_operations_of_its_own_is_not_replayed(monkeypatch) -> None:
    # a Custom operator's backward calls mx.nd from inside its kernel: a program holding both the
    # kernel and the operations it pushed would run those twice (code accumulating into its
    # gradient would add twice), so such a pass runs its rules every time.  The Custom kernel runs on
    # this thread (the default inline rule); on a worker its pushes are not captured, and a replay
    # of the kernel alone is right
    from lazynd.runtime import device_push

    monkeypatch.setattr(device_push, "INLINE_MAX_ELEMENTS", None)

    def train(enabled: bool) -> tuple[np.ndarray, list[str]]:
        monkeypatch.setattr(replay, "ENABLED", enabled)
        x = mx.nd.array([1.0, 2.0])
        x.attach_grad("add")
        names: list[str] = []
        for k in range(3):
            with autograd.record():
                y = mx.nd.Custom(x, op_type="replay_test_triple") * 2
            if k < 2:
                y.backward()
            else:
                names = _pushes_of(y.backward)
        return x.grad.asnumpy(), names

    grad, names = train(True)
    np.testing.assert_array_equal(grad, [18.0, 18.0])
    assert "autograd_backward" not in names and "_backward_Custom" in names
    np.testing.assert_array_equal(train(False)[0], [18.0, 18.0])


@pytest.mark.parametrize("enabled", [True, False], ids=["replayed", "rules"])
def test_an_error_stays_on_an_accumulated_gradient_in_later_passes(enabled, monkeypatch) -> None:
    # grad_req 'add': a pass that failed left its error on x.grad; the next pass adds to x.grad, so
    # it reads that error and keeps it (its sum would be garbage), replayed as when its rules run
    monkeypatch.setattr(replay, "ENABLED", enabled)
    x = mx.nd.array(np.ones((2, 3), np.float32))
    x.attach_grad("add")
    for label in ([0, 1], [0, 1], [0, 7], [1, 2]):  # noted, captured, then replayed: the third fails
        with autograd.record():
            y = mx.nd.SoftmaxOutput(x * 2, mx.nd.array(label))
        y.backward()
    with pytest.raises(EngineError, match=r"SoftmaxOutput.*label 7"):
        x.grad.wait_to_read()


def test_a_replayed_pass_does_not_wait_for_another_graphs_replay() -> None:
    # two graphs of one structure share a program, not a dependency: the second pass's gradient
    # is ready while the first pass still waits for its head gradient (a pending operation that
    # waits for that gradient), as when the rules run
    if mx.engine.get_engine().name == "naive":
        pytest.skip("the naive engine runs each operation at its push: nothing is ever pending")
    from lazynd.runtime import push

    x1, x2 = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    for x in (x1, x2):
        x.attach_grad()
    for _ in range(2):  # noted, then captured
        with autograd.record():
            y = x1 * 3
        y.backward()
    order: list[str] = []
    release = threading.Event()

    def slow_write(data: np.ndarray) -> None:
        if not release.wait(10):
            order.append("head gradient written after a timeout")
        data[:] = [5.0, 7.0]

    head = mx.nd.array([1.0, 1.0])
    before = head.var.version
    writer = threading.Thread(target=push, args=(head.context, slow_write, (head.data_array,), [], [head.var], "slow"))
    writer.start()
    while head.var.version == before:  # not pushed yet
        pass
    with autograd.record():
        y1, y2 = x1 * 3, x2 * 3
    y1.backward(head)  # replayed: waits for the head gradient
    y2.backward()  # replayed: waits for nothing pending

    def wait_for_x2() -> None:
        x2.grad.wait_to_read()
        order.append("x2.grad ready")
        release.set()

    waiter = threading.Thread(target=wait_for_x2)
    waiter.start()
    waiter.join()
    writer.join()
    assert order == ["x2.grad ready"]
    np.testing.assert_array_equal(x1.grad.asnumpy(), [15.0, 21.0])
    np.testing.assert_array_equal(x2.grad.asnumpy(), [3.0, 3.0])


def test_a_failed_step_reaches_only_the_gradients_that_depend_on_it() -> None:
    a, b = mx.nd.array(np.ones((2, 3), np.float32)), mx.nd.array([1.0, 2.0])
    a.attach_grad()
    b.attach_grad()
    for label in ([0, 1], [0, 1], [0, 7]):  # noted, captured, then replayed with a bad label
        with autograd.record():
            loss, y = mx.nd.SoftmaxOutput(a * 2, mx.nd.array(label)), b * 3
        autograd.backward([loss, y])
    np.testing.assert_array_equal(b.grad.asnumpy(), [3.0, 3.0])  # b's gradient does not read the label
    with pytest.raises(EngineError, match="label 7"):
        a.grad.wait_to_read()


def test_after_a_failed_step_a_replayed_pass_runs_the_steps_that_do_not_read_its_outputs() -> None:
    # a failed loss head's gradient flows into a (through h) and into e; b's does not read it; e's adds
    # the failed head's part to the other head's, so it fails too, where b's is computed
    a, b, e = (mx.nd.array(np.full((2, 3), v, np.float32)) for v in (1.0, 2.0, 3.0))
    for x in (a, b, e):
        x.attach_grad()
    for label in ([0, 1], [0, 1], [0, 9]):  # noted, captured, then replayed with a bad label
        with autograd.record():
            h = a * 2
            loss = mx.nd.SoftmaxOutput(h + e, mx.nd.array(label))
            other = (b * b).sum() + (e * 4).sum()
        autograd.backward([loss, other])
    with pytest.raises(EngineError, match="label 9"):
        a.grad.wait_to_read()
    with pytest.raises(EngineError, match="label 9"):
        e.grad.wait_to_read()  # its gradient adds the failed head's part
    np.testing.assert_array_equal(b.grad.asnumpy(), np.full((2, 3), 4.0))
    mx.nd.waitall()


def test_a_replayed_pass_runs_its_kernels_inside_one_quiet_switch() -> None:
    # raw kernels inside one switch of NumPy's warnings (lazynd.backend.fperr): inf and NaN
    # gradients come silently, as from the rules run one by one, with the user's settings untouched
    import warnings

    x = mx.nd.array([0.0, -1.0, 2.0])
    x.attach_grad()

    def step() -> None:
        with autograd.record():
            y = mx.nd.sqrt(mx.nd.log(x)) * x
        y.backward()

    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(4):
            step()
        grad = x.grad.asnumpy()
        assert np.geterr()["divide"] == "raise"
    program = next(p for p in replay._programs.values() if isinstance(p, replay.BackwardProgram))
    assert program.quiet
    assert all(fn is mx.ops.registry.get(name).raw_forward for fn, *_, name in program.steps if name != "_copyto")
    root = np.sqrt(np.log(2.0))
    np.testing.assert_allclose(grad, [np.nan, np.nan, root + 0.5 / root], rtol=1e-5)

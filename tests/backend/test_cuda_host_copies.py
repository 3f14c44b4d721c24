"""Device->host copies end on the device's waiter thread, and events come from a pool.

These need a GPU (or the CPU emulator, where streams and events do nothing: there they check
results, ordering and the hand-over between threads, not asynchrony).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import Completion, Var, get_engine

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]

GPU = mx.gpu(0)


def _backend() -> Any:
    from lazynd.backend import get_backend

    return get_backend(GPU)


def _gated_waiter(then_instead: Callable[[], None] | None = None) -> Any:
    """An event waiter that holds every operation handed to it until ``gate`` is set."""
    from lazynd.backend.cuda.events import EventWaiter

    class GatedWaiter(EventWaiter):
        def __init__(self) -> None:
            super().__init__("lazynd-test-gated-waiter")
            self.gate = threading.Event()

        def finish_after(self, done: Any, then: Callable[[], None] | None = None) -> Completion:
            def gated() -> None:
                self.gate.wait(30)
                step = then_instead or then
                if step is not None:
                    step()

            return super().finish_after(done, gated)

    return GatedWaiter()


def test_the_device_to_host_copy_function_returns_a_completion_finished_by_the_waiter() -> None:
    values = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024)
    src = mx.nd.array(values, ctx=GPU)
    dst = mx.nd.zeros(values.shape)
    src.wait_to_read()
    backend = _backend()
    run = backend.wrap(backend.copy_to_host, [src.handle], [dst.handle], "d2h")
    late = run(src.data_array, dst.data_array)
    assert isinstance(late, Completion), "the d2h operation ended on the thread that launched it"
    assert late.wait() is None
    np.testing.assert_array_equal(dst.data_array, values)


def test_a_large_device_to_host_copy_does_not_hold_the_device_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    if not get_engine().has_workers:
        pytest.skip("the naive engine ends every operation where it is pushed (LAZYND_ENGINE=naive)")
    values = np.random.default_rng(1).standard_normal((2048, 2048)).astype(np.float32)  # 16 MiB
    src = mx.nd.array(values, ctx=GPU)
    src.wait_to_read()
    waiter = _gated_waiter()
    monkeypatch.setattr(_backend(), "waiter", waiter)
    try:
        dst = src.copyto(mx.cpu())  # to the device thread; its end is held at the gate
        # an operation queued on the device thread behind the copy runs while the copy has not ended
        after, ran = Var(), []
        get_engine().push(lambda: ran.append(True), (), [], [after], "after_the_copy", GPU, inline_ok=False)
        get_engine().wait_for_var(after)
        assert ran == [True]
        assert not dst.handle.ready_for_read(), "the copy ended before its event was waited for"
    finally:
        waiter.gate.set()
    np.testing.assert_array_equal(dst.asnumpy(), values)


def test_a_copy_out_of_cpu_pinned_memory_ends_when_the_device_has_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # the DMA reads the pinned array itself, so a write into it pushed after the copy must wait
    # for the copy's event, not just its launch
    if not get_engine().has_workers:
        pytest.skip("the naive engine ends every operation where it is pushed (LAZYND_ENGINE=naive)")
    from lazynd.backend.cuda import copies

    values = np.arange(1024, dtype=np.float32)
    source = mx.nd.array(values, ctx=mx.cpu_pinned())
    source.wait_to_read()
    # as if page-locked (the CPU emulator has no page-locked memory): the direct path is taken
    monkeypatch.setattr(copies, "pinned_memory_of", lambda array: object())
    waiter = _gated_waiter()
    monkeypatch.setattr(_backend(), "waiter", waiter)
    try:
        on_gpu = source.copyto(GPU)
        source[:] = -1.0  # small: would run at once on this thread if its var were free
        assert not source.handle.ready_for_read(), "the write ran while the copy was still reading"
    finally:
        waiter.gate.set()
    np.testing.assert_array_equal(on_gpu.asnumpy(), values)
    np.testing.assert_array_equal(source.asnumpy(), -1.0)


def test_an_error_after_the_device_part_reaches_the_next_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> None:
        raise RuntimeError("host part of the copy failed")

    waiter = _gated_waiter(then_instead=fail)
    waiter.gate.set()
    monkeypatch.setattr(_backend(), "waiter", waiter)
    dst = mx.nd.ones((8,), ctx=GPU).copyto(mx.cpu())
    derived = dst + 1  # inherits the failure
    with pytest.raises(mx.EngineError, match="_copyto_d2h.*host part of the copy failed"):
        derived.asnumpy()
    monkeypatch.undo()
    assert (mx.nd.ones((8,), ctx=GPU).copyto(mx.cpu()) + 1).asnumpy().tolist() == [2.0] * 8


def test_copies_out_are_ordered_with_the_writes_around_them() -> None:
    n = 1 << 20
    x = mx.nd.zeros((n,), ctx=GPU)
    outs = []
    for step in range(8):
        x[:] = float(step)
        outs.append(x.copyto(mx.cpu()))  # the next write to x waits for this copy's read of it
        outs.append((x * 2).copyto(mx.nd.zeros((n,), dtype="float64")))  # into another dtype
    mx.nd.waitall()
    for step in range(8):
        assert np.all(outs[2 * step].asnumpy() == step)
        assert np.all(outs[2 * step + 1].asnumpy() == 2.0 * step) and outs[2 * step + 1].dtype == np.float64
    middle = mx.nd.arange(12, ctx=GPU).reshape((3, 4))[1:]
    np.testing.assert_array_equal(middle.copyto(mx.cpu()).asnumpy(), np.arange(4, 12).reshape(2, 4))
    assert mx.nd.zeros((0, 3), ctx=GPU).copyto(mx.cpu()).shape == (0, 3)


def test_an_event_comes_back_to_the_pool_when_nothing_can_wait_on_it() -> None:
    from lazynd.backend.cuda.events import event_pool

    backend, pool = _backend(), event_pool(0)
    stream = backend.compute_stream
    with backend.device:
        first = pool.record(stream)
        raw = first.event
        assert raw not in pool.free
        del first
        assert pool.free and pool.free[-1] is raw
        again = pool.record(stream)
    assert again.event is raw and raw not in pool.free


def test_an_event_a_var_still_holds_is_not_recorded_again() -> None:
    from lazynd.backend.cuda.events import event_pool

    x = mx.nd.ones((16,), ctx=GPU) * 2
    x.wait_to_read()
    held = x.handle.event
    for _ in range(50):
        (mx.nd.ones((16,), ctx=GPU) + 1).wait_to_read()
    assert held.event not in event_pool(0).free and x.handle.event is held
    assert x.asnumpy().tolist() == [2.0] * 16


def test_an_operation_failing_in_part_records_its_event_for_the_outputs_it_wrote() -> None:
    from lazynd.engine import StepFailure

    done, failed = mx.nd.zeros((16,), ctx=GPU), mx.nd.zeros((16,), ctx=GPU)
    mx.nd.waitall()
    before = done.handle.event
    backend = _backend()

    def two_steps(out: Any) -> None:
        out += 3  # a kernel launched on the stream; the next step fails on the host
        raise StepFailure("second", ValueError("boom"), reaches=[failed.handle])

    get_engine().push(backend.wrap(two_steps, [], [done.handle, failed.handle]), (done.data_array,), [],
                      [done.handle, failed.handle], "pass", GPU)  # fmt: skip
    assert done.asnumpy().tolist() == [3.0] * 16  # a reader on another stream waits for the kernel
    assert done.handle.event is not before and done.handle.event is not None
    with pytest.raises(mx.EngineError, match="second"):
        failed.wait_to_read()


def test_timed_events_are_not_pooled() -> None:
    from lazynd.backend import set_event_timing
    from lazynd.backend.cuda.events import event_pool

    backend = _backend()
    set_event_timing(True)
    try:
        with backend.device:
            timed = event_pool(0).record(backend.compute_stream)
    finally:
        set_event_timing(False)
    assert timed.pool is None


def test_readers_of_a_copy_out_of_cpu_pinned_memory_do_not_wait_for_its_end_on_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the stream orders the destination's readers after the DMA; only writers of the source
    # wait for the host to hear that the device has read it
    if not get_engine().has_workers:
        pytest.skip("the naive engine ends every operation where it is pushed (LAZYND_ENGINE=naive)")
    from lazynd.backend.cuda import copies

    values = np.arange(1024, dtype=np.float32)
    source = mx.nd.array(values, ctx=mx.cpu_pinned())
    source.wait_to_read()
    monkeypatch.setattr(copies, "pinned_memory_of", lambda array: object())
    waiter = _gated_waiter()
    monkeypatch.setattr(_backend(), "waiter", waiter)
    try:
        doubled = source.copyto(GPU) * 2
        reader = threading.Thread(target=doubled.wait_to_read, daemon=True)
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), "a reader of the copy's destination waited for the source's hold"
        assert not source.handle.ready_for_write(), "the source was free before the device had read it"
    finally:
        waiter.gate.set()
    np.testing.assert_array_equal(doubled.asnumpy(), values * 2)

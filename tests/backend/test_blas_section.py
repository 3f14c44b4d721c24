"""blas_section: GEMM-heavy CPU kernels take turns under a multi-threaded BLAS, run freely otherwise."""

from __future__ import annotations

import threading

import pytest

from lazynd.backend import blas


def _entered_from_another_thread(section, wait_s: float) -> bool:
    """Whether a second thread gets into ``section`` within ``wait_s`` while this thread is inside it."""
    got_in = threading.Event()

    def other() -> None:
        with section:
            got_in.set()

    with section:
        thread = threading.Thread(target=other)
        thread.start()
        entered = got_in.wait(wait_s)
    thread.join()
    return entered


def test_host_blas_threads_takes_openblas_variable_first():
    environ = {"OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "2"}
    assert blas.host_blas_threads(environ) == 2


def test_host_blas_threads_skips_empty_and_zero_values():
    assert blas.host_blas_threads({"OPENBLAS_NUM_THREADS": "0", "GOTO_NUM_THREADS": "", "OMP_NUM_THREADS": "5"}) == 5


def test_host_blas_threads_defaults_to_one_per_core(monkeypatch):
    monkeypatch.setattr(blas.os, "cpu_count", lambda: 6)
    assert blas.host_blas_threads({}) == 6


def test_blas_section_is_exclusive_under_a_threaded_blas(monkeypatch):
    monkeypatch.setattr(blas, "BLAS_THREADS", 2)
    assert not _entered_from_another_thread(blas.blas_section(), wait_s=0.2)


def test_blas_section_lets_kernels_overlap_under_a_single_threaded_blas(monkeypatch):
    monkeypatch.setattr(blas, "BLAS_THREADS", 1)
    assert _entered_from_another_thread(blas.blas_section(), wait_s=30)


def test_blas_section_lets_device_kernels_overlap(monkeypatch):
    monkeypatch.setattr(blas, "BLAS_THREADS", 2)
    assert _entered_from_another_thread(blas.blas_section(on_host=False), wait_s=30)


@pytest.mark.parametrize(
    "route,channels,expected",
    [("im2col_blocks", 2, 8), ("conv_forward_depthwise", 1, 4)],  # one channel, one filter: depthwise
)
def test_convolution_kernels_run_inside_the_section(monkeypatch, route, channels, expected):
    import numpy as np

    from lazynd.backend import cpu_backend
    from lazynd.ops import conv, registry
    from lazynd.ops.registry import KernelContext

    monkeypatch.setattr(blas, "BLAS_THREADS", 2)
    held = []
    original = getattr(conv, route)

    def spy(*args):
        held.append(blas._section_lock.locked())
        return original(*args)

    monkeypatch.setattr(conv, route, spy)
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(2, 2), num_filter=1, no_bias=True))
    out = np.zeros((1, 1, 2, 2), "float32")
    op.forward(
        KernelContext(np, cpu_backend),
        attrs,
        [np.ones((1, channels, 3, 3), "float32"), np.ones((1, channels, 2, 2), "float32")],
        [out],
        [],
    )
    np.testing.assert_array_equal(out, np.full((1, 1, 2, 2), expected, "float32"))
    assert held == [True]
    assert not blas._section_lock.locked()


def _fresh_plans(monkeypatch) -> None:
    """Drop the imperative call plans (each holds the BLAS var it was planned with)."""
    from lazynd.runtime import plan

    monkeypatch.setattr(plan, "_plans", {})
    monkeypatch.setattr(plan, "_signatures", {})


def _convolution_pair() -> tuple:
    """A convolution's forward and its independent backward, pushed back to back, each kernel
    recording the thread it ran on; returns the four outputs.  Large enough not to run inline under a
    single-threaded BLAS (more elements than lazynd.runtime.device_push.SMALL_INLINE_MAX)."""
    import numpy as np

    import lazynd as mx

    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((64, 1, 130, 130)).astype("float32"))
    w = mx.nd.array(rng.standard_normal((3, 1, 3, 3)).astype("float32"))
    b = mx.nd.zeros((3,))
    dy = mx.nd.ones((64, 3, 128, 128))
    mx.nd.waitall()
    y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=3)
    grads = mx.nd._backward_Convolution(dy, x, w, kernel=(3, 3), num_filter=3)
    return (y, *grads)


def _recording_kernels(monkeypatch, names: list[str]) -> None:
    import threading

    from lazynd.ops import registry

    for name in ("Convolution", "_backward_Convolution"):
        op = registry.get(name)
        kernel = op.forward

        def recorded(*args, _kernel=kernel, _name=name):
            names.append((_name, threading.current_thread().name))
            return _kernel(*args)

        monkeypatch.setattr(op, "forward", recorded)


def _kernel_threads(monkeypatch, blas_var) -> list:
    """Push a convolution's forward and backward on a fresh engine without a watcher (only the
    engine's rules decide where they run) with ``BLAS_VAR`` set to ``blas_var``, wait for every
    output; return each kernel's (operator, thread name) in the order they ran."""
    import lazynd as mx
    from lazynd.engine import policy, threaded

    monkeypatch.setattr(policy, "DEFERRED_TICK_S", 600.0)
    monkeypatch.setattr(blas, "BLAS_VAR", blas_var)
    _fresh_plans(monkeypatch)
    engine = threaded.ThreadedEngine(num_workers=2)
    monkeypatch.setattr(mx.engine, "_engine", engine)
    names: list = []
    _recording_kernels(monkeypatch, names)
    try:
        for out in _convolution_pair():
            out.wait_to_read()
    finally:
        engine.shutdown()
    return names


def test_gemm_heavy_operators_run_in_push_order_on_the_waiting_thread_under_a_threaded_blas(monkeypatch):
    import threading

    names = _kernel_threads(monkeypatch, blas.Var())
    me = threading.current_thread().name
    assert names == [("Convolution", me), ("_backward_Convolution", me)]
    assert not blas.BLAS_VAR.writing and not blas.BLAS_VAR.queue


def test_gemm_heavy_operators_still_run_in_parallel_under_a_single_threaded_blas(monkeypatch):
    # each kernel waits (bounded) until the other has started: both finish their wait only when the
    # engine runs them at the same time, whichever threads it picks
    import threading

    from lazynd.ops import registry

    started = {name: threading.Event() for name in ("Convolution", "_backward_Convolution")}
    met: dict[str, bool] = {}
    for name, other in (("Convolution", "_backward_Convolution"), ("_backward_Convolution", "Convolution")):
        op = registry.get(name)

        def rendezvous(*args, _kernel=op.forward, _name=name, _other=other):
            started[_name].set()
            met[_name] = started[_other].wait(10)
            return _kernel(*args)

        monkeypatch.setattr(op, "forward", rendezvous)
    import lazynd as mx
    from lazynd.engine import threaded

    monkeypatch.setattr(blas, "BLAS_VAR", None)
    _fresh_plans(monkeypatch)
    engine = threaded.ThreadedEngine(num_workers=2)
    monkeypatch.setattr(mx.engine, "_engine", engine)
    try:
        for out in _convolution_pair():
            out.wait_to_read()
    finally:
        engine.shutdown()
    assert met == {"Convolution": True, "_backward_Convolution": True}

"""blas_section: GEMM-heavy CPU kernels take turns under a multi-threaded BLAS, run freely otherwise."""

from __future__ import annotations

import threading

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


def test_convolution_kernels_run_inside_the_section(monkeypatch):
    import numpy as np

    from lazynd.ops import conv, registry
    from lazynd.ops.registry import KernelContext

    monkeypatch.setattr(blas, "BLAS_THREADS", 2)
    held = []
    original = conv.im2col

    def spy(*args):
        held.append(blas._section_lock.locked())
        return original(*args)

    monkeypatch.setattr(conv, "im2col", spy)
    op = registry.get("Convolution")
    attrs = op.parse(dict(kernel=(2, 2), num_filter=1, no_bias=True))
    out = np.zeros((1, 1, 2, 2), "float32")
    op.forward(
        KernelContext(np, None), attrs, [np.ones((1, 1, 3, 3), "float32"), np.ones((1, 1, 2, 2), "float32")], [out], []
    )
    np.testing.assert_array_equal(out, np.full((1, 1, 2, 2), 4, "float32"))
    assert held == [True]
    assert not blas._section_lock.locked()

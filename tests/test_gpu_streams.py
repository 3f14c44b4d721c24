"""The GPU path: copies on their own streams, kernels on the compute stream, events between them.

Every test here needs an NVIDIA GPU with CuPy and is skipped without one.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_engine_differential import _run_program

import lazynd as mx

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]


def test_copy_in_compute_copy_out_loop_with_in_place_updates() -> None:
    rng = np.random.default_rng(0)
    host_np = rng.standard_normal((512, 512)).astype(np.float32)
    acc_np = np.zeros_like(host_np)
    acc = mx.nd.zeros((512, 512), ctx=mx.gpu(0))
    staging = mx.nd.zeros((512, 512), ctx=mx.gpu(0))
    for step in range(50):
        batch_np = host_np * np.float32(step % 5)
        mx.nd.array(batch_np).copyto(staging)  # host -> device, h2d stream
        acc += staging * 0.5  # compute stream, after the copy's event
        acc_np += batch_np * np.float32(0.5)
        back = acc.copyto(mx.cpu())  # device -> host, d2h stream
        np.testing.assert_allclose(back.asnumpy(), acc_np, rtol=1e-5, atol=1e-4, err_msg=f"step {step}")


def test_a_copy_into_an_array_waits_for_kernels_still_reading_it() -> None:
    # x is read by long GEMMs on the compute stream; the next host->device write into x runs on
    # the h2d stream and must wait for those reads (an array made by zeros has no write event)
    n = 2048
    for step in range(10):
        x = mx.nd.zeros((n, n), ctx=mx.gpu(0))
        first = mx.nd.array(np.full((n, n), 1.0, np.float32)).copyto(mx.gpu(0))
        x[:] = first
        products = [mx.nd.dot(x, x) for _ in range(4)]
        mx.nd.array(np.full((n, n), 2.0 + step, np.float32)).copyto(x)
        for p in products:
            assert float(p[0, 0].asscalar()) == pytest.approx(n * 1.0)
        assert float(x[1, 1].asscalar()) == 2.0 + step


@pytest.mark.parametrize("chunk", range(2))
def test_random_programs_on_the_gpu_match_numpy(chunk: int) -> None:
    for seed in range(20_000 + chunk * 250, 20_000 + (chunk + 1) * 250):
        _run_program(seed, ctx=mx.gpu(0), other_ctx=mx.cpu(0))
    mx.nd.waitall()


def test_an_error_in_a_gpu_operator_surfaces_at_the_next_wait_and_the_engine_goes_on() -> None:
    from lazynd.engine import get_engine

    x = mx.nd.ones((16,), ctx=mx.gpu(0))

    def fail() -> None:
        raise RuntimeError("simulated launch failure")

    get_engine().push(fail, (), [], [x.handle], "bad_gpu_op", mx.gpu(0))
    y = x * 2
    with pytest.raises(mx.EngineError, match="bad_gpu_op"):
        y.asnumpy()
    z = mx.nd.ones((16,), ctx=mx.gpu(0)) + 1
    assert z.asnumpy().tolist() == [2.0] * 16


def test_out_of_memory_is_a_clear_error() -> None:
    with pytest.raises(mx.LazyNDError):
        huge = mx.nd.empty((1 << 40,), ctx=mx.gpu(0))  # 4 TiB
        huge.wait_to_read()

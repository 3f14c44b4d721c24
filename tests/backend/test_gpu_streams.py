"""The GPU path: copies on their own streams, kernels on the compute stream, events between them.

Every test here needs an NVIDIA GPU with CuPy and is skipped without one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from engine.test_engine_differential import _run_program

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
    with pytest.raises(mx.DeviceMemoryError, match=r"gpu\(0\).*4,398,046,511,104 bytes") as caught:
        huge = mx.nd.empty((1 << 40,), ctx=mx.gpu(0))  # 4 TiB
        huge.wait_to_read()
    assert isinstance(caught.value, MemoryError) and caught.value.nbytes == 1 << 42


# -- ordering across streams that only a real device can break ------------------------------------
N = 4096  # GEMMs of this size keep an H100's compute stream busy for milliseconds each


def _backend() -> Any:
    from lazynd.backend import get_backend

    return get_backend(mx.gpu(0))


def _asynchronous_streams() -> bool:
    """Whether kernels run behind the host here (a real GPU; the CPU emulator runs them at launch).

    Each product keeps an H100 busy about 0.35 ms, several times what its launch costs the host
    even on a slow device machine, so the stream is seen busy right after one: eight 1024^2
    products checked after the last launch once let a slow host see an idle H100 and skip these
    tests on a real GPU.
    """
    a = mx.nd.ones((2048, 2048), ctx=mx.gpu(0))
    mx.nd.waitall()
    products, running = [], False
    for _ in range(4):
        products.append(mx.nd.dot(a, a))
        if not _backend().compute_stream.done:
            running = True
            break
    del products
    mx.nd.waitall()
    return running


needs_async = pytest.mark.skipif(
    mx.num_gpus() == 0 or not _asynchronous_streams(),
    reason="kernels finish at launch here (CPU emulator): a race between streams cannot show",
)


@needs_async
def test_waitall_waits_for_gpu_work_launched_inline() -> None:
    a = mx.nd.ones((N, N), ctx=mx.gpu(0))
    a.wait_to_read()
    products = [mx.nd.dot(a, a) for _ in range(20)]
    mx.nd.waitall()
    backend = _backend()
    assert all(stream.done for stream in backend.streams.values()), "waitall returned with kernels running"
    del products


def _corrupted_products_after_reuse(trials: int = 3) -> int:
    """A is read by long GEMMs; A is dropped and a fresh array of the same size is filled from the
    host at once: the pool may hand out A's block, and the copy must wait for the GEMMs."""
    ones, threes = np.ones((N, N), np.float32), np.full((N, N), 3.0, np.float32)
    corrupted = 0
    for _ in range(trials):
        a = mx.nd.array(ones, ctx=mx.gpu(0))
        a.wait_to_read()
        products = [mx.nd.dot(a, a) for _ in range(30)]
        del a
        b = mx.nd.array(threes, ctx=mx.gpu(0))
        corrupted += sum(int(not np.all(p.asnumpy() == N)) for p in products)
        assert float(b[0, 0].asscalar()) == 3.0
        del products, b
    return corrupted


@needs_async
def test_a_freed_block_is_reused_only_after_its_readers_finish() -> None:
    assert _corrupted_products_after_reuse() == 0


@needs_async
def test_the_reuse_test_detects_a_missing_fence(monkeypatch: pytest.MonkeyPatch) -> None:
    # the ordering of the previous test removed: it must then see corrupted products
    import lazynd.backend.cuda.backend as cuda_backend

    plain_wait = cuda_backend.wait_for_vars
    monkeypatch.setattr(
        cuda_backend, "wait_for_vars", lambda stream, reads, writes, compute=None: plain_wait(stream, reads, writes)
    )
    monkeypatch.setattr(cuda_backend.DeviceVar, "__del__", lambda self: None)
    assert _corrupted_products_after_reuse(trials=4) > 0


@needs_async
def test_a_write_waits_for_reads_on_the_compute_stream_and_the_test_sees_it_when_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lazynd.backend.cuda.backend as cuda_backend

    def run_once() -> int:
        host_two = mx.nd.from_numpy(np.full((N, N), 2.0, np.float32), zero_copy=True)
        x = mx.nd.array(np.ones((N, N), np.float32), ctx=mx.gpu(0))
        x.wait_to_read()
        products = [mx.nd.dot(x, x) for _ in range(30)]
        host_two.copyto(x)  # h2d stream: must wait for the 30 reads
        bad = sum(int(not np.all(p.asnumpy() == N)) for p in products)
        assert float(x[0, 0].asscalar()) == 2.0
        return bad

    assert run_once() == 0

    def no_read_waits(stream: Any, reads: Any, writes: Any, compute: Any = None) -> None:
        for v in [*reads, *writes]:
            if v.event is not None and v.event.stream is not stream:
                stream.wait_event(v.event.event)

    monkeypatch.setattr(cuda_backend, "wait_for_vars", no_read_waits)
    assert sum(run_once() for _ in range(3)) > 0


def test_from_dlpack_waits_for_the_producer_stream() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    for _ in range(3):
        a = torch.ones((N, N), device="cuda")
        b = a
        for _ in range(20):
            b = (b @ a) / float(N)  # stays exactly 1.0; tens of milliseconds on torch's stream
        c = b * 5.0 + 2.0
        got = (mx.nd.from_dlpack(c) * 2).asnumpy()
        assert np.all(got == 14.0), "from_dlpack read the tensor before PyTorch finished writing it"


@needs_async
def test_a_host_to_device_copy_returns_before_the_transfer_ends() -> None:
    from lazynd.backend.cuda.copies import STAGING

    host = np.ones((64 << 20,), np.float32)  # 256 MiB
    target = mx.nd.empty(host.shape, ctx=mx.gpu(0))
    source = mx.nd.from_numpy(host, zero_copy=True)
    source.copyto(target)
    assert STAGING.available, "page-locked staging memory could not be allocated"
    assert not _backend().streams["h2d"].done, "the copy ran synchronously (pageable memory?)"
    assert float(target[-1].asscalar()) == 1.0


@needs_async
def test_an_array_made_from_host_data_is_staged_once_in_page_locked_memory() -> None:
    from lazynd.backend.cuda.copies import STAGING, pinned_memory_of

    host = np.arange(1 << 20, dtype=np.float32)
    snapshot = STAGING.snapshot(host, np.float32)
    assert pinned_memory_of(snapshot) is not None and pinned_memory_of(host) is None
    on_gpu = mx.nd.array(host, ctx=mx.gpu(0))
    host[:] = -1  # the snapshot was taken at the call
    assert float(on_gpu[12345].asscalar()) == 12345.0


def test_each_thread_captures_on_a_stream_of_its_own() -> None:
    # a stream holds one capture at a time: two threads capturing two executors' passes at once
    # must not meet on one stream; neither is ever the compute stream
    import threading

    from lazynd.backend import get_backend

    backend: Any = get_backend(mx.gpu(0))
    mine = backend.capture_stream()
    assert backend.capture_stream() is mine and mine is not backend.compute_stream
    theirs: list[Any] = []
    worker = threading.Thread(target=lambda: theirs.append(backend.capture_stream()))
    worker.start()
    worker.join()
    assert theirs[0] is not mine and theirs[0] is not backend.compute_stream


# -- a Python operator reads its inputs on the host: after the device work that wrote them --------
class _HostDouble(mx.operator.CustomOp):
    """Doubles its input through a host copy (as a NumpyOp's host arrays are made)."""

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        doubled = in_data[0].asnumpy() * 2
        self.assign(out_data[0], req[0], mx.nd.array(doubled, ctx=in_data[0].context))

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("gpu_streams_host_double")
class _HostDoubleProperties(mx.operator.CustomOpProp):
    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def infer_shape(self, in_shape: list) -> tuple:
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx: Any, shapes: list, dtypes: list) -> mx.operator.CustomOp:
        return _HostDouble()


def _custom_host_reads_gone_wrong(trials: int = 4) -> int:
    """The input of a Custom operator is written by long GEMMs still running when the operator's
    Python runs: its host read must wait for them.  Returns how many trials read other values."""
    eye = mx.nd.array(np.eye(N, dtype=np.float32), ctx=mx.gpu(0))
    eye.wait_to_read()
    wrong = 0
    for trial in range(trials):
        x = eye
        for _ in range(10):
            x = mx.nd.dot(x, eye)
        x = x + float(trial)  # row 0: [1 + trial, trial, trial, ...]
        y = mx.nd.Custom(x, op_type="gpu_streams_host_double")
        got = y[0, :3].asnumpy()
        wrong += int(not np.array_equal(got, np.array([2 + 2 * trial, 2 * trial, 2 * trial], np.float32)))
    return wrong


@needs_async
def test_a_custom_operator_reads_its_inputs_after_the_device_wrote_them(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _custom_host_reads_gone_wrong() == 0
    # the ordering removed (fresh vars without the compute stream's event): the test must see it
    import lazynd.ops.custom as custom
    from lazynd.ndarray import NDArray

    def unordered(arrays: Any, ctx: Any, kctx: Any) -> list:
        return [None if a is None else NDArray(a, kctx.backend.new_var(a), ctx) for a in arrays]

    monkeypatch.setattr(custom, "_wrap", unordered)
    assert _custom_host_reads_gone_wrong() > 0

"""lazynd.backend.fperr: NumPy's divide/overflow/invalid warnings off inside kernels (every OpDef's CPU kernel), nothing else changed.

Kernels run on the user's thread (at push, or while it waits) and on engine workers: on each
path they compute MXNet's silent inf/nan, and the user's own error settings survive the calls.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend.fperr import quietly


def test_quietly_silences_divide_overflow_and_invalid() -> None:
    @quietly
    def kernel() -> None:
        assert np.isinf(np.divide(np.float32(1), np.float32(0)))
        assert np.isinf(np.exp(np.float32(1000)))
        assert np.isnan(np.sqrt(np.float32(-1)))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel()
        with pytest.raises(RuntimeWarning):  # and only inside the call
            np.divide(np.float32(1), np.float32(0))


def test_quietly_runs_kernels_under_none_of_the_callers_settings_and_restores_them() -> None:
    # a kernel computes the same on every thread: the caller's underflow and divide settings are
    # not seen inside (a worker would not see them either), and they hold again after the call
    @quietly
    def kernel() -> dict:
        np.multiply(np.float32(1e-30), np.float32(1e-30))  # an underflow, silent as in MXNet
        return np.geterr()

    with np.errstate(under="raise", divide="raise"):
        before = np.geterr()
        inside = kernel()
        assert np.geterr() == before
    assert inside == {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}


def test_a_quiet_kernel_calling_another_quiet_kernel_runs_it_in_place() -> None:
    # a context cannot be entered twice: the inner kernel runs in the outer one's context
    @quietly
    def inner(x: np.ndarray) -> np.ndarray:
        return np.log(x)

    @quietly
    def outer(x: np.ndarray) -> np.ndarray:
        return inner(x) / x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = outer(np.array([0.0, 1.0], np.float32))
    assert np.isneginf(values[0]) and values[1] == 0


def test_an_error_inside_a_quiet_kernel_reaches_the_caller() -> None:
    @quietly
    def failing() -> None:
        raise RuntimeError("the kernel's own error")

    with pytest.raises(RuntimeError, match="the kernel's own error"):
        failing()


def test_quietly_is_per_thread() -> None:
    default = np.geterr()
    seen: list[dict] = []
    entered, leave = threading.Event(), threading.Event()

    @quietly
    def other() -> None:
        entered.set()
        leave.wait(5)

    thread = threading.Thread(target=other)
    thread.start()
    assert entered.wait(5)
    seen.append(np.geterr())  # this thread's state while the other one is inside quiet()
    leave.set()
    thread.join(5)
    assert seen[0] == default == np.geterr()


@pytest.mark.parametrize("size", [3, 100_000])  # the run-now fast path and a pushed kernel
def test_operators_give_inf_and_nan_without_warnings(size: int) -> None:
    a = mx.nd.array(np.resize(np.array([1e30, 0.0, -1.0], np.float32), size))
    zero = mx.nd.zeros((size,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quotient = (a / zero).asnumpy()
        power = (a**3.0).asnumpy()
        log = mx.nd.log(a).asnumpy()
        remainder = (a % zero).asnumpy()
    assert np.isinf(quotient[0]) and np.isnan(quotient[1])
    assert np.isinf(power[0])
    assert np.isnan(log[2]) and np.isinf(log[1])
    assert (remainder == 0).all()  # x % 0 is 0, as in MXNet


def test_quietly_silences_a_decorated_function_only_while_it_runs() -> None:
    @quietly
    def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a / b

    with np.errstate(all="raise"):
        before = np.geterr()
        assert np.isinf(divide(np.ones(2, np.float32), np.zeros(2, np.float32))).all()
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.divide(np.float32(1), np.float32(0))


# where kernels run: on the user's thread (run at push by the default threaded engine's policy;
# every op at push on the naive engine) or on the threaded engine's workers (the plain policy)
ENGINE_PATHS = {"run-at-push": ("threaded", None), "naive": ("naive", None), "workers": ("threaded", "plain")}


@pytest.fixture(params=list(ENGINE_PATHS))
def engine_path(request: pytest.FixtureRequest) -> str:
    name, policy = ENGINE_PATHS[request.param]
    mx.engine.set_engine(name, policy=policy)
    yield request.param
    mx.engine.set_engine("threaded")


def _silent_mxnet_values() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = mx.nd.array([1.0, 0.0, -1.0])
    zero = mx.nd.zeros((3,))
    return (a / zero).asnumpy(), mx.nd.log(a).asnumpy(), (a * 1e38 * 1e38).asnumpy()


def test_log_of_zero_and_zero_over_zero_are_silent_on_every_engine_path(engine_path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quotient, log, product = _silent_mxnet_values()
    assert np.isposinf(quotient[0]) and np.isnan(quotient[1]) and np.isneginf(quotient[2])
    assert np.isneginf(log[1]) and np.isnan(log[2])
    assert np.isposinf(product[0]) and np.isneginf(product[2])


def test_the_users_error_settings_survive_operator_calls(engine_path: str) -> None:
    # "raise" everywhere: a kernel on the user's thread that did not quiet its errors would fail
    old = np.seterr(all="raise")
    try:
        settings = np.geterr()
        quotient, log, _ = _silent_mxnet_values()
        mx.nd.waitall()
        assert np.geterr() == settings
        assert np.isnan(quotient[1]) and np.isneginf(log[1])
        with pytest.raises(FloatingPointError):  # and still in force for the user's own NumPy
            np.divide(np.float32(1), np.float32(0))
    finally:
        np.seterr(**old)


@pytest.mark.gpu
def test_a_cpu_kernel_run_on_gpu_arrays_keeps_the_threads_cupy_device_stream_and_allocator() -> None:
    # an operator without a GPU kernel runs its CPU kernel on CuPy arrays inside the quiet context;
    # CuPy keeps its current device, stream and allocator per thread (threading.local), so the kernel
    # still launches on the device's compute stream, whichever thread runs it (at push, or on an
    # engine worker).  On a GPU a kernel on another stream would race the compute stream's work.
    if mx.num_gpus() == 0:
        pytest.skip("needs gpu(0) (the CUDA emulator's will do)")
    import cupy

    from lazynd.backend import get_backend
    from lazynd.ndarray import dispatch
    from lazynd.ops.opdef import OpDef

    gpu = mx.gpu(0)
    backend = get_backend(gpu)
    seen: list[tuple] = []
    current_allocator = getattr(cupy.cuda, "get_allocator", lambda: None)  # (the emulator's CuPy has none)

    def forward(kctx, attrs, inputs, outputs, aux) -> None:  # noqa: ANN001 - a kernel's signature
        seen.append(
            (
                cupy.cuda.get_current_stream().ptr,
                cupy.cuda.Device().id,
                current_allocator(),
                np.geterr()["divide"],
            )
        )
        outputs[0][...] = inputs[0] * 2

    op = OpDef("_test_stream_probe", forward)
    assert op.forward_gpu is None and op.quiet
    x = mx.nd.ones((4,), ctx=gpu)
    results = [dispatch.invoke(op, [x], {})]

    def from_a_thread() -> None:
        results.append(dispatch.invoke(op, [x], {}))

    thread = threading.Thread(target=from_a_thread)
    thread.start()
    thread.join()
    for r in results:
        np.testing.assert_array_equal(r.asnumpy(), np.full((4,), 2.0))
    with backend.device:
        allocator = current_allocator()
    assert len(seen) == 2
    for stream, device, used_allocator, divide in seen:
        assert stream == backend.compute_stream.ptr and device == 0 and divide == "ignore"
        assert used_allocator == allocator

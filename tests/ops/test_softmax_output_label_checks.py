"""A label out of range in ``SoftmaxOutput``'s common gradient path (one label per row, no ignore
label, no smoothing) is an error on a GPU too, as on the host.

On a GPU the check is a device check (lazynd/backend/cuda/checks.py), raised at the next wait:
float32 and float64 take softmax.cu's one-pass gradient kernel, which makes the check itself as it
reads each row's label (no launch of its own); float16 takes the indexed route and the backend's
range check.  Meanwhile the row of a bad label gets its probabilities (nothing subtracted), and the
finding is raised once.  The message names what the other modes' device check and the host name:
the operator, the argument, the label given (NaN as NaN) and the range.  Through ``nd`` (the
backward operator itself), autograd and an executor whose backward pass is captured into a CUDA
graph (emulated on the CUDA emulator: tests/cuda_capture.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cuda_capture import emulate_capture

import lazynd as mx
import lazynd_sym as sym
from lazynd.backend.cuda import checks
from lazynd.errors import EngineError, OperatorError
from lazynd.testing import assert_almost_equal

needs_gpu = pytest.mark.skipif(not mx.num_gpus(), reason="needs an NVIDIA GPU with CuPy (none visible)")
DTYPES = ["float16", "float32", "float64"]
# below the classes, the classes (3), beyond them, and not a number
BAD = [-1.0, 3.0, 10.0, math.nan]
SCORES = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0], [3.0, 1.0, 0.0]])
TOLERANCE = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}


def _shown(bad: float) -> str:
    return "nan" if math.isnan(bad) else str(int(bad))


def _gpu_message(bad: float) -> str:
    return (
        rf"^SoftmaxOutput: label out of range: {_shown(bad)} at position 1, expected a value in \[0, 3\); "
        r"found by a check on gpu\(0\) and raised at this wait$"
    )


def _probabilities() -> np.ndarray:
    e = np.exp(SCORES - SCORES.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _expected_gradient(p: np.ndarray) -> np.ndarray:
    """p - one_hot([0, bad, 2]): the bad label's row keeps its probabilities."""
    expected = p.copy()
    expected[0, 0] -= 1
    expected[2, 2] -= 1
    return expected


def _labels(bad: float, ctx: mx.Context, dtype: str) -> mx.nd.NDArray:
    return mx.nd.array([0, bad, 2], ctx=ctx, dtype=dtype)


def _assert_raised_once(grad: mx.nd.NDArray, bad: float, dtype: str, p: np.ndarray) -> None:
    with pytest.raises(OperatorError, match=_gpu_message(bad)):
        grad.asnumpy()
    tol = TOLERANCE[dtype]
    assert_almost_equal(grad.asnumpy(), _expected_gradient(p), rtol=tol, atol=tol)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_backward_operator_on_a_gpu_raises_a_label_out_of_range_at_the_next_wait(dtype, bad):
    p = _probabilities().astype(dtype)
    grad = mx.nd._backward_SoftmaxOutput(mx.nd.array(p, ctx=mx.gpu(0), dtype=dtype), _labels(bad, mx.gpu(0), dtype))
    _assert_raised_once(grad, bad, dtype, p.astype(np.float64))


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("dtype", DTYPES)
def test_autograd_on_a_gpu_raises_a_label_out_of_range_at_the_next_wait(dtype, bad):
    data = mx.nd.array(SCORES, ctx=mx.gpu(0), dtype=dtype)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SoftmaxOutput(data, _labels(bad, mx.gpu(0), dtype))
    out.backward()
    _assert_raised_once(data.grad, bad, dtype, _probabilities())


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_host_names_the_same_label_and_range(dtype, bad):
    # the host's wording is its own (raised at the call), but the label and the range are the GPU's
    data = mx.nd.array(SCORES, dtype=dtype)
    data.attach_grad()
    message = rf"SoftmaxOutput: label {_shown(bad)} is out of range for 3 classes \(expected 0\.\.2\)"
    with pytest.raises((OperatorError, EngineError), match=message):
        with mx.autograd.record():
            out = mx.nd.SoftmaxOutput(data, _labels(bad, mx.cpu(), dtype))
        out.backward()
        data.grad.asnumpy()


@pytest.mark.parametrize("params", [{"multi_output": True}, {"use_ignore": True, "ignore_label": 5}])
def test_a_nan_label_is_named_as_nan_on_every_path(params, ctx):
    # converted to an integer first, NaN was named -9223372036854775808 (x86), or could name class 0
    shape = (2, 3, 4) if params.get("multi_output") else (2, 3)
    labels = np.zeros(shape[:1] + shape[2:])
    labels.flat[1] = math.nan
    data = mx.nd.ones(shape, ctx=ctx)
    data.attach_grad()
    with pytest.raises((OperatorError, EngineError), match=r"SoftmaxOutput: label (out of range: )?nan "):
        with mx.autograd.record():
            out = mx.nd.SoftmaxOutput(data, mx.nd.array(labels, ctx=ctx), **params)
        out.backward()
        data.grad.asnumpy()


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_one_pass_kernel_checks_its_labels_without_a_launch_of_its_own(dtype, monkeypatch):
    def launched(*args, **kwargs):
        raise AssertionError("a check kernel of its own was launched")

    monkeypatch.setattr(checks.DeviceChecks, "check_range", launched)
    p = _probabilities().astype(dtype)
    grad = mx.nd._backward_SoftmaxOutput(mx.nd.array(p, ctx=mx.gpu(0), dtype=dtype), _labels(3, mx.gpu(0), dtype))
    _assert_raised_once(grad, 3.0, dtype, p)


@pytest.fixture
def captured_labels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list:
    """The labels of each training step, with executors' CUDA graphs on: eager, then captured (the
    emulator's capture is emulated and a graph's replay runs only on a GPU), then replays on a GPU."""
    if mx.num_gpus() == 0:
        pytest.skip("needs an NVIDIA GPU with CuPy (none visible)")
    import cupy

    from lazynd.backend.cuda.graphs import capture_supported

    bad = request.param
    if hasattr(cupy, "_call"):  # the CUDA emulator's fake CuPy
        emulate_capture(monkeypatch, request.getfixturevalue("cublas_stand_in"))
        return [None, bad]
    if not capture_supported(cupy):
        pytest.skip("this CuPy captures no streams")
    monkeypatch.setenv("LAZYND_CUDA_GRAPHS", "1")
    return [None, bad, None, bad, None]


@pytest.mark.gpu
@pytest.mark.parametrize("captured_labels", BAD, indirect=True)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_captured_backward_pass_reports_a_label_out_of_range_at_every_run(dtype, captured_labels):
    net = sym.SoftmaxOutput(sym.Variable("data"), name="softmax")
    ex = net.simple_bind(mx.gpu(0), data=(3, 3), softmax_label=(3,), type_dict={"data": dtype})
    ex.arg_dict["data"][:] = SCORES.astype(dtype)
    for step, bad in enumerate(captured_labels):
        ex.arg_dict["softmax_label"][:] = np.array([0, 1 if bad is None else bad, 2], dtype)
        ex.forward(is_train=True)
        ex.backward()
        grad = ex.grad_dict["data"]
        if bad is None:
            expected = _expected_gradient(_probabilities())
            expected[1, 1] -= 1
            tol = TOLERANCE[dtype]
            assert_almost_equal(grad.asnumpy(), expected, rtol=tol, atol=tol, names=(f"step {step}", "expected"))
        else:
            _assert_raised_once(grad, bad, dtype, _probabilities())
    assert ex._graphs is not None and ex._graphs.failures == {}, ex._graphs and ex._graphs.failures
    assert ex._graphs.captured("backward")

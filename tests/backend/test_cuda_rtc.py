"""mx.rtc: MXNet 0.9's runtime-compiled CUDA kernels (GPU cases need a GPU or the CUDA emulator)."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ContextError, OperatorError

requires_gpu = pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")

EXP_BODY = """
    __shared__ float s_rec[10];
    s_rec[threadIdx.x] = x[threadIdx.x];
    y[threadIdx.x] = expf(s_rec[threadIdx.x] * 5.0f);
"""


def test_rtc_needs_gpu_arrays():
    x, y = mx.nd.ones((10,)), mx.nd.zeros((10,))
    with pytest.raises(ContextError, match=r"rtc 'abc': 'x' is on cpu\(0\); runtime-compiled kernels run on a GPU"):
        mx.rtc("abc", [("x", x)], [("y", y)], EXP_BODY)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("1abc", [], [], ""), "not a C identifier"),
        (("abc", [("x", np.ones(3))], [], ""), "'x' must be an NDArray"),
        (("abc", [("x y", None)], [], ""), "not a C identifier"),
        (("abc", [], [], ""), "at least one output"),
    ],
)
def test_bad_signatures_are_errors(args, message):
    with pytest.raises(OperatorError, match=message):
        mx.rtc(*args)


@pytest.mark.gpu
@requires_gpu
def test_rtc_kernel_runs_on_the_arrays_gpu():
    ctx = mx.gpu(0)
    x = mx.nd.array(np.linspace(-1, 1, 10, dtype=np.float32), ctx=ctx)
    y = mx.nd.zeros((10,), ctx=ctx)
    kernel = mx.rtc("abc", [("x", x)], [("y", y)], EXP_BODY)
    assert 'extern "C" __global__ void abc(const float* x, float* y)' in kernel.source
    kernel.push([x], [y], (1, 1, 1), (10, 1, 1))
    np.testing.assert_allclose(y.asnumpy(), np.exp(x.asnumpy() * 5.0), rtol=1e-5)


@pytest.mark.gpu
@requires_gpu
def test_rtc_push_orders_after_pending_writes_and_before_later_reads():
    ctx = mx.gpu(0)
    n = 256
    a, out = mx.nd.zeros((n,), ctx=ctx, dtype="float64"), mx.nd.zeros((n,), ctx=ctx, dtype="float64")
    body = "int i = blockIdx.x * blockDim.x + threadIdx.x; out[i] = a[i] + 1.0;"
    kernel = mx.rtc("plus_one", [("a", a)], [("out", out)], body)
    a[:] = 41.0  # pending write the kernel must wait for
    kernel.push([a], [out], (2, 1, 1), (128, 1, 1))
    result = out * 2  # a later read of the output
    np.testing.assert_array_equal(result.asnumpy(), np.full(n, 84.0))
    # in place: one array both read and written
    inplace = mx.rtc("inc", [], [("v", a)], "int i = blockIdx.x * blockDim.x + threadIdx.x; v[i] += 1.0;")
    inplace.push([], [a], (2, 1, 1), (128, 1, 1))
    np.testing.assert_array_equal(a.asnumpy(), np.full(n, 42.0))


@pytest.mark.gpu
@requires_gpu
def test_rtc_push_checks_arrays_and_dims():
    ctx = mx.gpu(0)
    x, y = mx.nd.ones((4,), ctx=ctx), mx.nd.zeros((4,), ctx=ctx)
    kernel = mx.rtc("copy", [("x", x)], [("y", y)], "y[threadIdx.x] = x[threadIdx.x];")
    with pytest.raises(OperatorError, match=r"inputs\[0\] is float64, the kernel takes float32"):
        kernel.push([x.astype("float64")], [y], (1, 1, 1), (4, 1, 1))
    with pytest.raises(OperatorError, match="push got 2 inputs, the kernel takes 1"):
        kernel.push([x, x], [y], (1, 1, 1), (4, 1, 1))
    with pytest.raises(OperatorError, match="block_dims must be 3 positive ints"):
        kernel.push([x], [y], (1, 1, 1), (4, 1))
    with pytest.raises(ContextError, match=r"outputs\[0\]' is on cpu\(0\)"):
        kernel.push([x], [mx.nd.zeros((4,))], (1, 1, 1), (4, 1, 1))

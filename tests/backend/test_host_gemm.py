"""The CPU's GEMM route: MKL where it takes a product, NumPy's BLAS for everything it declines."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend import cpu_backend, host_gemm
from lazynd.runtime import Features

mkl = host_gemm.load_mkl()
needs_mkl = pytest.mark.skipif(mkl is None, reason="MKL's runtime (PyPI's mkl wheel) is not installed here")
rng = np.random.default_rng(7)


def _gemm():
    return host_gemm.MklGemm(mkl, threads=2)


def _matrix(rows: int, cols: int, dtype, transposed: bool, padded: bool = False) -> np.ndarray:
    """A rows x cols matrix stored transposed and/or inside a wider buffer (leading dimension > cols)."""
    shape = (cols, rows) if transposed else (rows, cols)
    full = rng.standard_normal((shape[0], shape[1] + (5 if padded else 0))).astype(dtype)
    stored = full[:, : shape[1]]
    return stored.T if transposed else stored


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_mkl_computes_every_unit_stride_layout(dtype, ta, tb, padded):
    a = _matrix(96, 130, dtype, ta, padded)
    b = _matrix(130, 70, dtype, tb, padded)
    out = np.full((96, 70), np.nan, dtype)
    assert _gemm()(a, b, out) is True
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=tol, atol=tol * 50)


@needs_mkl
def test_mkl_writes_into_a_strided_output_and_broadcasts_batches():
    out_buffer = np.full((64, 90), np.nan, np.float32)
    a, b = _matrix(64, 300, np.float32, False), _matrix(300, 80, np.float32, True)
    assert _gemm()(a, b, out_buffer[:, :80]) is True
    np.testing.assert_allclose(out_buffer[:, :80], a @ b, rtol=1e-4, atol=1e-3)
    assert np.isnan(out_buffer[:, 80:]).all()  # the columns past the view are untouched

    wa = rng.standard_normal((2, 96, 200))  # (groups, filters, k) against (n, groups, k, positions)
    col = rng.standard_normal((3, 2, 200, 64))
    out = np.full((3, 2, 96, 64), np.nan)
    assert _gemm()(wa, col, out) is True
    np.testing.assert_allclose(out, np.matmul(wa, col), rtol=1e-12)
    # a batch of smaller matrices is np.matmul's: it loops over them in C
    assert _gemm()(wa[:, :48], col[..., :32], np.empty((3, 2, 48, 32))) is False


@needs_mkl
@pytest.mark.parametrize(
    "case",
    ["float16", "int32", "mixed dtypes", "small", "strided columns", "transposed output", "overlap", "empty batch"],
)
def test_mkl_declines_what_it_cannot_take_and_the_backend_still_answers(case):
    a = rng.standard_normal((96, 130)).astype(np.float32)
    b = rng.standard_normal((130, 70)).astype(np.float32)
    out = np.empty((96, 70), np.float32)
    if case == "float16":
        a, b, out = a.astype(np.float16), b.astype(np.float16), np.empty(out.shape, np.float16)
    elif case == "int32":
        a, b, out = (a * 10).astype(np.int32), (b * 10).astype(np.int32), np.empty(out.shape, np.int32)
    elif case == "mixed dtypes":
        b = b.astype(np.float64)
    elif case == "small":
        a, b, out = a[:8, :8], b[:8, :8], out[:8, :8]
    elif case == "strided columns":
        a = rng.standard_normal((96, 260)).astype(np.float32)[:, ::2]
    elif case == "transposed output":
        out = np.empty((70, 96), np.float32).T
    elif case == "overlap":
        a = rng.standard_normal((96, 130)).astype(np.float32)
        out = a[:, :70]  # the product written over part of its own operand
    elif case == "empty batch":
        a, b, out = np.empty((0, 96, 130), np.float32), b, np.empty((0, 96, 70), np.float32)
    expected = np.matmul(a, b)
    assert _gemm()(a, b, out) is False
    cpu_backend.matmul(a, b, out)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-3)


@needs_mkl
def test_mkl_leaves_shape_errors_to_numpy():
    a, b = np.ones((96, 130), np.float32), np.ones((131, 70), np.float32)
    out = np.empty((96, 70), np.float32)
    assert _gemm()(a, b, out) is False
    with pytest.raises(ValueError):
        cpu_backend.matmul(a, b, out)


def _library_in_a_fresh_process(setting: str) -> subprocess.CompletedProcess:
    code = "from lazynd.backend.host_gemm import host_gemm_library; print(host_gemm_library())"
    env = {**os.environ, "LAZYND_HOST_BLAS": setting}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_the_setting_picks_the_library():
    assert _library_in_a_fresh_process("").stdout.strip() == "numpy"  # the default: NumPy's BLAS
    assert _library_in_a_fresh_process("numpy").stdout.strip() == "numpy"
    expected = "mkl" if mkl is not None else "numpy"
    assert _library_in_a_fresh_process("auto").stdout.strip() == expected
    if mkl is not None:
        assert _library_in_a_fresh_process("MKL").stdout.strip() == "mkl"
    wrong = _library_in_a_fresh_process("openblass")
    assert wrong.returncode != 0
    assert "LAZYND_HOST_BLAS must be one of numpy, mkl, auto; got 'openblass'" in wrong.stderr


_PRODUCTS = """
import numpy as np
from lazynd.backend import cpu_backend, host_gemm
rng = np.random.default_rng(0)
errors = []
for m, k, n in ((128, 784, 128), (4, 3, 2)):  # MKL takes the first, declines the second
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    out = np.full((m, n), np.nan)
    cpu_backend.matmul(a, b, out)
    errors.append(float(np.abs(out - a @ b).max()))
print(host_gemm.host_product is np.matmul, all(error < 1e-9 for error in errors))  # a NaN left: False
"""


@needs_mkl
@pytest.mark.parametrize("setting", ["numpy", "mkl"])
def test_the_chosen_product_writes_every_product(setting):
    """host_product is np.matmul itself with NumPy's BLAS; with MKL it writes both the products MKL
    takes and those it declines (NumPy's then)."""
    env = {**os.environ, "LAZYND_HOST_BLAS": setting}
    run = subprocess.run([sys.executable, "-c", _PRODUCTS], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(setting == "numpy"), "True"]


def test_runtime_features_name_the_host_gemm_library():
    assert Features().is_enabled("BLAS_MKL") == (host_gemm.host_gemm_library() == "mkl")


def test_operators_take_the_host_gemm_route(monkeypatch):
    import lazynd.backend.cpu as cpu_module

    seen = []

    def spy(a, b, out):
        seen.append((a.shape, b.shape))
        host_gemm.host_product(a, b, out)

    monkeypatch.setattr(cpu_module, "host_product", spy)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((128, 784)).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    got = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=128).asnumpy()
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-4, atol=1e-3)
    assert ((128, 784), (784, 128)) in seen
    assert mx.nd.dot(mx.nd.array(x), mx.nd.array(w), transpose_b=True).asnumpy().shape == (128, 128)
    assert seen[-1] == ((128, 784), (784, 128))

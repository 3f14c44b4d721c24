"""mx.nd.contrib / mx.sym.contrib fft, ifft and count_sketch.  MXNet 1.9.1 runs them on the GPU
only, so the references are NumPy's FFT and MXNet's documented example (count_sketch) and its
source's conventions (interleaved real/imaginary parts; ifft not divided by d)."""

from __future__ import annotations

import numpy as np
import pytest
from sweep_cases import Case, missing_cupy_api

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError
from lazynd.testing import check_gradient

RNG = np.random.default_rng(0)


@pytest.fixture
def fft_ctx(ctx):
    """The contexts whose CuPy has cupy.fft (the CUDA emulator's fake CuPy lacks it)."""
    missing = missing_cupy_api(Case([], gpu_needs=("cupy.fft",))) if ctx.device_type == "gpu" else None
    if missing:
        pytest.skip(f"this CuPy has no {missing}")
    return ctx


@pytest.mark.parametrize("shape", [(3, 4), (2, 1, 3, 5)])
def test_fft_interleaves_real_and_imaginary_parts(shape, fft_ctx):
    x = RNG.normal(size=shape).astype("float32")
    y = mx.nd.contrib.fft(mx.nd.array(x, ctx=fft_ctx), compute_size=2).asnumpy()
    assert y.shape == (*shape[:-1], 2 * shape[-1])
    spectrum = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(y[..., 0::2], spectrum.real, atol=1e-5)
    np.testing.assert_allclose(y[..., 1::2], spectrum.imag, atol=1e-5)


def test_ifft_is_the_real_part_not_divided_by_d(fft_ctx):
    x = RNG.normal(size=(3, 4)).astype("float32")
    back = mx.nd.contrib.ifft(mx.nd.contrib.fft(mx.nd.array(x, ctx=fft_ctx)))
    np.testing.assert_allclose(back.asnumpy(), 4 * x, atol=1e-5)
    z = RNG.normal(size=(2, 6))
    expected = 3 * np.fft.ifft(z[:, 0::2] + 1j * z[:, 1::2]).real
    np.testing.assert_allclose(mx.nd.contrib.ifft(mx.nd.array(z, ctx=fft_ctx)).asnumpy(), expected, atol=1e-5)


def test_fft_and_ifft_gradients_are_each_other():
    check_gradient("_contrib_fft", [RNG.normal(size=(2, 5))])
    check_gradient("_contrib_ifft", [RNG.normal(size=(2, 1, 2, 6))])


def test_fft_refuses_other_ranks_and_ifft_odd_rows():
    with pytest.raises(LazyNDError, match="_contrib_fft: 'data' must be 2-D .* got shape \\(2, 3, 4\\)"):
        mx.nd.contrib.fft(mx.nd.zeros((2, 3, 4)))
    with pytest.raises(LazyNDError, match="_contrib_ifft: .* must be even, got shape \\(2, 5\\)"):
        mx.nd.contrib.ifft(mx.nd.zeros((2, 5)))
    with pytest.raises(LazyNDError, match="_contrib_fft: input 'data' has dtype int32"):
        mx.nd.contrib.fft(mx.nd.zeros((2, 4), dtype="int32"))


def test_fft_symbol_infers_the_interleaved_shape():
    net = sym.contrib.ifft(sym.contrib.fft(sym.Variable("x")))
    assert net.infer_shape(x=(3, 4))[1] == [(3, 4)]


def test_count_sketch_matches_mxnets_example(ctx):
    x = mx.nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]], ctx=ctx)
    h = mx.nd.array([[0, 3, 4]], ctx=ctx)
    s = mx.nd.array([[1, -1, 1]], ctx=ctx)
    y = mx.nd.contrib.count_sketch(x, h, s, out_dim=5)
    np.testing.assert_allclose(y.asnumpy(), [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]], rtol=1e-6)


def test_count_sketch_adds_columns_hashed_together_on_4d_data(ctx):
    x = RNG.normal(size=(2, 1, 2, 4)).astype("float32")
    h, s = np.array([[1, 1, 0, 1]]), np.array([[1, -1, -1, 1]])
    y = mx.nd.contrib.count_sketch(*(mx.nd.array(a, ctx=ctx) for a in (x, h, s)), out_dim=2).asnumpy()
    expected = np.stack([-x[..., 2], x[..., 0] - x[..., 1] + x[..., 3]], axis=-1)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_count_sketch_gradient_reaches_the_data():
    h, s = np.array([[0.0, 2, 2, 1]]), np.array([[1.0, -1, 1, -1]])
    check_gradient("_contrib_count_sketch", [RNG.normal(size=(3, 4)), h, s], {"out_dim": 3}, wrt=[0])


def test_count_sketch_refuses_bad_tables():
    x = mx.nd.zeros((2, 3))
    with pytest.raises(LazyNDError, match="count_sketch: shape of 'h' is \\(1, 2\\), expected \\(1, 3\\)"):
        mx.nd.contrib.count_sketch(x, mx.nd.zeros((1, 2)), mx.nd.ones((1, 3)), out_dim=4)
    with pytest.raises(LazyNDError, match="count_sketch: 'h' must hold whole numbers in \\[0, 3\\]"):
        mx.nd.contrib.count_sketch(x, mx.nd.array([[0, 4, 1]]), mx.nd.ones((1, 3)), out_dim=4).asnumpy()

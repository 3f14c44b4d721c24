"""Softmax along a short last axis of a host array (the MNIST logits' (128, 10)), computed in a
transposed layout (lazynd.ops.softmax._softmax_of_short_rows): the same values as NumPy's
softmax, the same special values as the general path, and the general path for other layouts."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import softmax as softmax_module


def np_softmax(x: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = x.astype(np.float64) / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(128, 10), (4, 8, 10), (64, 2), (16, 32)])
def test_softmax_and_softmax_output_of_short_rows_match_numpy(dtype, shape):
    x = (np.random.default_rng(0).standard_normal(shape) * 30).astype(dtype)  # large: the max must be taken out
    rtol, atol = (1e-2, 2e-3) if dtype == "float16" else (1e-5, 1e-6)  # float16: its own rounding
    for temperature in (1.0, 2.5):
        got = mx.nd.softmax(mx.nd.array(x, dtype=dtype), temperature=temperature).asnumpy()
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, np_softmax(x, temperature), rtol=rtol, atol=atol)
    flat = x.reshape(-1, shape[-1])
    label = mx.nd.zeros((flat.shape[0],), dtype=dtype)
    got = mx.nd.SoftmaxOutput(mx.nd.array(flat, dtype=dtype), label).asnumpy()
    np.testing.assert_allclose(got, np_softmax(flat), rtol=rtol, atol=atol)


def test_special_values_of_short_rows_are_those_of_the_general_path(monkeypatch):
    x = np.random.default_rng(1).standard_normal((32, 10)).astype(np.float32)
    x[0, 3] = np.inf  # inf - inf: NaN, as NumPy
    x[1, :] = -np.inf  # a row of -inf: NaN
    x[2, 4] = -np.inf  # one -inf: probability 0
    x[3, 5] = np.nan
    x[4, :] = 1e30  # equal huge values: uniform
    short = mx.nd.softmax(mx.nd.array(x)).asnumpy()
    monkeypatch.setattr(softmax_module, "_softmax_of_short_rows", lambda x, out, axis: False)
    general = mx.nd.softmax(mx.nd.array(x)).asnumpy()
    np.testing.assert_array_equal(np.isnan(short), np.isnan(general))
    np.testing.assert_allclose(short, general, rtol=1e-6, atol=1e-7)
    assert short[2, 4] == 0.0
    np.testing.assert_allclose(short[4], np.full(10, 0.1, np.float32), rtol=1e-6)


def test_strided_input_and_output_of_short_rows_take_the_general_path():
    base = np.random.default_rng(2).standard_normal((64, 24)).astype(np.float32)
    x = mx.nd.array(base)[:, 2:12]  # a strided (64, 10) view
    out_base = mx.nd.full((64, 11), 7.0)
    out = out_base[:, 0:10]
    mx.nd.softmax(x, out=out)
    np.testing.assert_allclose(out.asnumpy(), np_softmax(base[:, 2:12]), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(out_base.asnumpy()[:, 10], 7.0)

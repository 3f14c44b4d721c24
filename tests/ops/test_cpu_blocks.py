"""The block helpers of the CPU kernels: samples in blocks, and a transposing copy in blocks."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd
from lazynd.ops import conv_columns, cpu_blocks
from lazynd.ops.cpu_blocks import copy_batch_first, sample_blocks


def test_sample_blocks_cover_the_samples_once_in_order(monkeypatch):
    monkeypatch.setattr(cpu_blocks, "BLOCK_ELEMENTS", 10)
    assert list(sample_blocks(7, 3)) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert list(sample_blocks(2, 50)) == [slice(0, 1), slice(1, 2)]  # a sample larger than a block
    assert list(sample_blocks(0, 3)) == []


@pytest.mark.parametrize("block_elements", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("with_bias", [False, True])
def test_copy_batch_first_is_moveaxis_with_bias_added(monkeypatch, block_elements, with_bias):
    monkeypatch.setattr(cpu_blocks, "TRANSPOSE_BLOCK_ELEMENTS", block_elements)
    rng = np.random.default_rng(3)
    source = rng.standard_normal((4, 3, 5, 6)).astype(np.float32)  # (F, *positions, N)
    bias = rng.standard_normal(4).astype(np.float32) if with_bias else None
    out = np.full((6, 4, 3, 5), np.nan, np.float32)
    copy_batch_first(source, out, bias)
    want = np.moveaxis(source, -1, 0)
    if with_bias:
        want = want + bias.reshape(1, 4, 1, 1)
    np.testing.assert_array_equal(out, want)


def test_copy_batch_first_writes_a_strided_target_and_an_empty_one():
    source = np.arange(24.0).reshape(2, 3, 4)
    target = np.zeros((4, 2, 6))[:, :, ::2]  # (4, 2, 3), every other element
    copy_batch_first(source, target, np.array([1.0, -1.0]))
    np.testing.assert_array_equal(target, np.moveaxis(source, -1, 0) + np.array([1.0, -1.0]).reshape(1, 2, 1))
    copy_batch_first(np.zeros((2, 3, 0)), np.zeros((0, 2, 3)))


@pytest.mark.parametrize("layout", [None, "NHWC"])
def test_batch_last_convolution_is_the_same_with_transposes_in_small_blocks(monkeypatch, layout):
    """The batch-last convolution's transposing copies, in blocks of a few elements, give the
    values of one whole copy, bit for bit (forward with its bias, and the data gradient)."""
    monkeypatch.setattr(conv_columns, "BATCH_LAST_MIN_BACKWARD_COLUMN", 0)
    rng = np.random.default_rng(4)
    shape = (8, 6, 5, 7) if layout else (8, 3, 6, 5)
    channels = shape[-1] if layout else shape[1]
    args = [rng.standard_normal(a).astype(np.float32) for a in (shape, (4, channels, 3, 3), (4,))]
    if layout:
        args[1] = np.moveaxis(args[1], 1, -1)
    args = [lazynd.nd.array(a) for a in args]
    params = dict(kernel=(3, 3), pad=(1, 1), num_filter=4, layout=layout)

    def run():
        y = lazynd.nd.Convolution(*args, **params)
        dy = lazynd.nd.array(np.random.default_rng(5).standard_normal(y.shape).astype(np.float32))
        return [y.asnumpy()] + [g.asnumpy() for g in lazynd.nd._backward_Convolution(dy, args[0], args[1], **params)]

    monkeypatch.setattr(cpu_blocks, "TRANSPOSE_BLOCK_ELEMENTS", 1 << 30)
    whole = run()
    monkeypatch.setattr(cpu_blocks, "TRANSPOSE_BLOCK_ELEMENTS", 24)
    for got, want in zip(run(), whole, strict=True):
        np.testing.assert_array_equal(got, want)


FORMULAS = {"_backward_tanh": lambda g, y: g * (1 - y * y), "_backward_sigmoid": lambda g, y: g * (y * (1 - y))}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("into", ["new", "head gradient", "output"])
@pytest.mark.parametrize("name", FORMULAS)
def test_activation_gradients_in_blocks_are_the_whole_formula_bitwise(monkeypatch, name, into, dtype):
    # blocks of 7 elements over 5 x 13 (the last one short), written over an input in place as an
    # executor plans them; non-finite values included
    monkeypatch.setattr(cpu_blocks, "BLOCK_ELEMENTS", 7)
    rng = np.random.default_rng(6)
    g = rng.standard_normal((5, 13)).astype(dtype)
    y = np.tanh(rng.standard_normal((5, 13))).astype(dtype)
    g[0, :3] = [np.inf, -np.inf, np.nan]
    y[1, :3] = [np.nan, 1.0, -1.0]
    want = FORMULAS[name](g, y)
    out = {"new": np.empty_like(g), "head gradient": g, "output": y}[into]
    kernel = lazynd.ops.elemwise_unary.BACKWARD[name][0]
    kernel(g, y, out)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("name", FORMULAS)
def test_activation_gradients_of_strided_or_overlapping_arrays_take_the_whole_formula(monkeypatch, name):
    monkeypatch.setattr(cpu_blocks, "BLOCK_ELEMENTS", 4)
    rng = np.random.default_rng(8)
    base = rng.standard_normal(40).astype(np.float32)
    g, y = base[::2], np.tanh(rng.standard_normal(20)).astype(np.float32)
    want = FORMULAS[name](g, y)
    out = np.empty(20, np.float32)
    lazynd.ops.elemwise_unary.BACKWARD[name][0](g, y, out)
    np.testing.assert_array_equal(out, want)
    # the output one element past the head gradient: a block would read what the one before wrote
    shared = rng.standard_normal(21).astype(np.float32)
    g, out = shared[:20], shared[1:]
    want = FORMULAS[name](g.copy(), y)
    lazynd.ops.elemwise_unary.BACKWARD[name][0](g, y, out)
    np.testing.assert_array_equal(out, want)

"""``out=`` a view that overlaps an input other than element for element (the input shifted by a
row): every kernel must give what it gives into a separate array, as NumPy does.  On the GPU a
kernel that reads its input while other threads write the output got a mix of old and new values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import lazynd as mx

nd = mx.nd


def _shifted_rows(array: mx.nd.NDArray) -> tuple[mx.nd.NDArray, mx.nd.NDArray]:
    """(input, output): all rows but the last, and all rows but the first, of one array."""
    return array[:-1], array[1:]


def _pool(x, **kw):
    """A pooling that keeps the shape, so its output can be the input's rows shifted by one."""
    return nd.Pooling(x, kernel=(3, 3), stride=(1, 1), pad=(1, 1), **kw)


# name -> (function of (x, out=...), shape of the array holding both)
CASES: dict[str, tuple[Callable, tuple[int, ...]]] = {
    "abs": (lambda x, **kw: nd.abs(x, **kw), (6, 5)),
    "relu activation": (lambda x, **kw: nd.Activation(x, act_type="relu", **kw), (6, 5)),
    "times a scalar": (lambda x, **kw: nd._mul_scalar(x, scalar=2.0, **kw), (6, 5)),
    "scalar minus": (lambda x, **kw: nd._rminus_scalar(x, scalar=2.0, **kw), (6, 5)),
    "softmax over rows": (lambda x, **kw: nd.softmax(x, axis=0, **kw), (6, 5)),
    "log_softmax over columns": (lambda x, **kw: nd.log_softmax(x, axis=-1, **kw), (6, 5)),
    "max pooling": (lambda x, **kw: _pool(x, pool_type="max", **kw), (5, 2, 3, 3)),
    "sum pooling": (lambda x, **kw: _pool(x, pool_type="sum", **kw), (5, 2, 3, 3)),
    "sgd_update": (lambda x, **kw: nd.sgd_update(x, x, lr=0.5, **kw), (6, 5)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_out_shifted_over_the_input_gets_the_result_of_a_separate_output(name, ctx):
    fn, shape = CASES[name]
    values = np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32)
    expected = fn(nd.array(values[:-1], ctx=ctx)).asnumpy()
    both = nd.array(values, ctx=ctx)
    source, out = _shifted_rows(both)
    fn(source, out=out)
    np.testing.assert_allclose(both.asnumpy()[1:], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(both.asnumpy()[0], values[0])


def test_a_row_sum_into_a_later_row_reads_every_row_first(ctx):
    values = np.random.default_rng(7).standard_normal((6, 5)).astype(np.float32)
    both = nd.array(values, ctx=ctx)
    nd.sum(both[:5], axis=1, out=both[1:2].reshape((5,)))
    np.testing.assert_allclose(both.asnumpy()[1], values[:5].sum(axis=1), rtol=1e-5)


def test_batchnorm_into_a_shifted_view_of_its_data(ctx):
    values = np.random.default_rng(8).standard_normal((4, 2, 3, 3)).astype(np.float32)
    params = [nd.ones(2, ctx=ctx), nd.zeros(2, ctx=ctx), nd.zeros(2, ctx=ctx), nd.ones(2, ctx=ctx)]
    expected = nd.BatchNorm(nd.array(values[:3], ctx=ctx), *params).asnumpy()
    both = nd.array(values, ctx=ctx)
    nd.BatchNorm(both[:3], *params, out=both[1:])
    np.testing.assert_allclose(both.asnumpy()[1:], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_unpadded_pooling_into_a_view_of_its_data(pool_type, ctx):
    """No padding: the CPU kernel reads its windows from the data itself while accumulating."""
    values = np.random.default_rng(9).standard_normal((4, 2, 4, 4)).astype(np.float32)
    expected = nd.Pooling(nd.array(values[:2], ctx=ctx), kernel=(2, 2), pool_type=pool_type).asnumpy()
    both = nd.array(values, ctx=ctx)
    out = both[1:3].reshape((2, 2, 4, 4))[:, :, :3, :3]
    nd.Pooling(both[:2], kernel=(2, 2), pool_type=pool_type, out=out)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6, atol=1e-6)


def test_pooling_into_its_own_data(ctx):
    """out= the data itself (same layout): a window still reads neighbours another thread writes."""
    values = np.random.default_rng(10).standard_normal((2, 2, 5, 5)).astype(np.float32)
    expected = _pool(nd.array(values, ctx=ctx), pool_type="max").asnumpy()
    data = nd.array(values, ctx=ctx)
    _pool(data, pool_type="max", out=data)
    np.testing.assert_allclose(data.asnumpy(), expected, rtol=1e-6)

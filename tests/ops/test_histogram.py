"""histogram / _histogram: MXNet 1.9.1's counts, edges and dtypes; bad bins refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError

DATA = [0.5, 1, 1.5, 2, 2.5, 3, 10, -1]


def test_equal_bins_over_a_range_match_mxnet(ctx):
    counts, edges = mx.nd.histogram(mx.nd.array(DATA, ctx=ctx), bins=4, range=(0, 3))
    assert counts.dtype == np.int64 and counts.asnumpy().tolist() == [1, 1, 2, 2]  # 3 is in the last bin
    assert edges.dtype == np.float32 and edges.asnumpy().tolist() == [0.0, 0.75, 1.5, 2.25, 3.0]


def test_without_a_range_the_bins_span_the_data_as_numpy_does(ctx):
    counts, edges = mx.nd.histogram(mx.nd.array(DATA, ctx=ctx), bins=4)
    expected_counts, expected_edges = np.histogram(np.array(DATA), bins=4)
    assert counts.asnumpy().tolist() == expected_counts.tolist()
    np.testing.assert_allclose(edges.asnumpy(), expected_edges, rtol=1e-6)
    counts, edges = mx.nd.histogram(mx.nd.ones((3,), ctx=ctx), bins=2)
    assert counts.asnumpy().tolist() == [0, 3] and edges.asnumpy().tolist() == [0.5, 1.0, 1.5]


def test_without_a_range_counts_and_edges_are_float32_as_mxnet():
    # MXNet 1.9.1 hands NumPy's histogram back through mx.nd.array, whatever the data's dtype
    # (values from MXNet 1.9.1: NumPy computes float16 data's edges in float16)
    for dtype, inner_edges in (("float16", [1.6669922, 3.3339844]), ("int32", [1.6666666, 3.3333333])):
        counts, edges = mx.nd.histogram(mx.nd.array([[3, 1, 2], [0, 5, 4]], dtype=dtype), bins=3)
        assert counts.dtype == np.float32 and counts.asnumpy().tolist() == [2, 2, 2]
        assert edges.dtype == np.float32
        np.testing.assert_allclose(edges.asnumpy(), [0, *inner_edges, 5], rtol=1e-6)


def test_without_a_range_nan_data_is_refused_by_name():
    with pytest.raises(OperatorError, match=r"histogram: cannot make 3 bins spanning the data without a range"):
        mx.nd.histogram(mx.nd.array([np.nan, 1.0]), bins=3)


@pytest.mark.parametrize("bins", [2**63, 2**40])
def test_without_a_range_more_bins_than_an_array_holds_are_refused_by_name(bins):
    # NumPy's IndexError 'index -1 is out of bounds' (2**63) or MemoryError (2**40) before
    with pytest.raises(OperatorError, match=f"histogram: cannot make {bins} bins spanning the data without a range"):
        mx.nd.histogram(mx.nd.array([0.0, 1.0]), bins=bins)


def test_edges_given_as_an_array_match_mxnet(ctx):
    counts, edges = mx.nd.histogram(mx.nd.array(DATA, ctx=ctx), bins=mx.nd.array([0, 1, 2, 5], ctx=ctx))
    assert counts.asnumpy().tolist() == [1, 2, 3]
    assert edges.asnumpy().tolist() == [0.0, 1.0, 2.0, 5.0]


def test_integer_data_gives_integer_edges_as_in_mxnet():
    counts, edges = mx.nd.histogram(mx.nd.array([1, 2, 3], dtype="int32"), bins=2, range=(0, 4))
    assert counts.asnumpy().tolist() == [1, 2]
    assert edges.dtype == np.int32 and edges.asnumpy().tolist() == [0, 2, 4]


def test_agrees_with_numpy_on_random_data(ctx):
    data = np.random.default_rng(0).standard_normal((20, 30)).astype(np.float32)
    counts, _ = mx.nd.histogram(mx.nd.array(data, ctx=ctx), bins=7, range=(-2.0, 1.5))
    assert counts.asnumpy().tolist() == np.histogram(data, bins=7, range=(-2.0, 1.5))[0].tolist()


def test_histogram_in_a_bound_executor():
    net = sym._histogram(sym.Variable("data"), sym.Variable("bins"))
    assert net.list_outputs() == ["_histogram0_output0", "_histogram0_output1"]
    _, out_shapes, _ = net.infer_shape(data=(8,), bins=(4,))
    assert out_shapes == [(3,), (4,)]
    args = {"data": mx.nd.array(DATA), "bins": mx.nd.array([0, 1, 2, 5])}
    exe = net.bind(mx.cpu(), args=args, grad_req="null")
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [1, 2, 3]
    uniform = sym._histogram(sym.Variable("data"), bin_cnt=4, range=(0, 3))
    assert uniform.list_arguments() == ["data"]
    exe = uniform.bind(mx.cpu(), args={"data": mx.nd.array(DATA)}, grad_req="null")
    exe.forward()
    assert exe.outputs[0].asnumpy().tolist() == [1, 1, 2, 2]


def test_a_range_falling_is_refused():
    with pytest.raises(OperatorError, match=r"_histogram.*range"):
        mx.nd.histogram(mx.nd.array(DATA), bins=3, range=(2, 1))


def test_zero_bins_are_refused():
    with pytest.raises(OperatorError, match=r"_histogram.*bin_cnt"):
        mx.nd.histogram(mx.nd.array(DATA), bins=0, range=(0, 1))


def test_bin_cnt_without_range_is_refused():
    with pytest.raises(OperatorError, match="_histogram: bin_cnt and range are given together or not at all"):
        mx.nd._histogram(mx.nd.array(DATA), bin_cnt=2)


def test_edges_not_one_dimensional_are_refused():
    with pytest.raises(ShapeError, match=r"_histogram: shape of 'bins' is \(1,\), expected \(n,\) with n >= 2"):
        mx.nd.histogram(mx.nd.array(DATA), bins=mx.nd.array([1.0]))


def test_bins_of_another_kind_are_refused():
    with pytest.raises(OperatorError, match="histogram: bins must be an int or an NDArray of edges, got list"):
        mx.nd.histogram(mx.nd.array(DATA), bins=[0, 1, 2])
    with pytest.raises(OperatorError, match="histogram: range is taken with a number of bins"):
        mx.nd.histogram(mx.nd.array(DATA), bins=mx.nd.array([0, 1]), range=(0, 1))


def test_sym_histogram_takes_mxnets_forms_and_needs_a_range_in_a_graph() -> None:
    x = mx.nd.array([1, 3, 3])
    counted = mx.sym.histogram(mx.sym.var("x"), bins=2, range=(0, 4))
    assert [o.asnumpy().tolist() for o in counted.eval(x=x)] == [[1, 2], [0.0, 2.0, 4.0]]  # MXNet 1.9.1's
    edged = mx.sym.histogram(mx.sym.var("x"), bins=mx.sym.var("b"))
    assert edged.eval(x=x, b=mx.nd.array([0, 2, 4]))[0].asnumpy().tolist() == [1, 2]
    with pytest.raises(mx.LazyNDError, match="range"):
        mx.sym.histogram(mx.sym.var("x"), bins=2)
    with pytest.raises(mx.LazyNDError, match="bins must be"):
        mx.sym.histogram(mx.sym.var("x"), bins=2.5, range=(0, 1))


def test_an_empty_range_is_widened_by_half_each_way_as_mxnet(ctx):
    # MXNet 1.9.1: range=(1, 1) bins over [0.5, 1.5]
    data = mx.nd.array([1.4725, 1.8307, -1.5568, 0.5696, 1.0], ctx=ctx)
    counts, edges = mx.nd.histogram(data, bins=4, range=(1, 1))
    assert counts.asnumpy().tolist() == [1, 0, 1, 1]
    assert edges.asnumpy().tolist() == [0.5, 0.75, 1.0, 1.25, 1.5]


@pytest.mark.parametrize("edges", [[0.0, 4.0, 2.0], [0.0, float("nan"), 2.0]], ids=["falling", "nan"])
def test_edges_that_fall_are_refused_at_the_wait(ctx, edges):
    # NumPy refuses them; MXNet 1.9.1 counts [4, 0] of these data over [0, 4, 2], by no rule
    data = mx.nd.array([0.0, 1, 1, 2, 3, 3, 3, 4], ctx=ctx)
    counts, _ = mx.nd.histogram(data, bins=mx.nd.array(edges, ctx=ctx))
    with pytest.raises(mx.LazyNDError, match=r"_histogram: step between neighbouring edges of 'bins' out of range"):
        counts.asnumpy()


def test_equal_neighbouring_edges_make_an_empty_bin_as_mxnet(ctx):
    data = mx.nd.array([0.0, 1, 1, 2, 3, 3, 3, 4, 5.5, -1], ctx=ctx)
    counts, _ = mx.nd.histogram(data, bins=mx.nd.array([0.0, 2, 2, 4], ctx=ctx))
    assert counts.asnumpy().tolist() == [3, 0, 5]  # MXNet 1.9.1's

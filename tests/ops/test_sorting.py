"""topk, sort, argsort."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError
from lazynd.testing import check_forward, check_gradient


def distinct(*shape: int, seed: int = 3) -> np.ndarray:
    """Values without ties, so every order is unique."""
    rng = np.random.default_rng(seed)
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)


def top_indices(a: np.ndarray, k: int, axis: int, ascend: bool) -> np.ndarray:
    order = np.argsort(a if ascend else -a, axis=axis)
    return np.take(order, np.arange(k), axis=axis)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("ascend", [False, True])
def test_topk_indices_match_numpy(axis, ascend, ctx):
    x = distinct(4, 5, 3)
    params = {"axis": axis, "k": 2, "is_ascend": ascend}
    out = check_forward("topk", [x], params, lambda a: top_indices(a, 2, axis, ascend).astype(np.float32), ctx=ctx)
    assert out[0].dtype == np.float32


def test_topk_defaults_to_largest_index_along_last_axis():
    x = distinct(3, 6)
    out = mx.nd.topk(mx.nd.array(x)).asnumpy()
    np.testing.assert_array_equal(out, np.argmax(x, axis=-1)[:, None])


def test_topk_value_and_both(ctx):
    x = distinct(3, 6)
    values = np.take_along_axis(x, top_indices(x, 3, -1, False), axis=-1)
    check_forward("topk", [x], {"k": 3, "ret_typ": "value"}, lambda a: values, ctx=ctx)
    both = mx.nd.topk(mx.nd.array(x, ctx=ctx), k=3, ret_typ="both", dtype="int32")
    np.testing.assert_array_equal(both[0].asnumpy(), values)
    np.testing.assert_array_equal(both[1].asnumpy(), top_indices(x, 3, -1, False))
    assert both[1].asnumpy().dtype == np.int32


def test_topk_mask_marks_chosen_positions(ctx):
    x = distinct(3, 6)

    def reference(a):
        mask = np.zeros_like(a)
        np.put_along_axis(mask, top_indices(a, 2, 1, False), 1, axis=1)
        return mask

    check_forward("topk", [x], {"k": 2, "ret_typ": "mask", "axis": 1}, reference, ctx=ctx)


def test_topk_axis_none_searches_the_flattened_array():
    x = distinct(3, 4)
    out = mx.nd.topk(mx.nd.array(x), axis=None, k=3, ret_typ="value").asnumpy()
    np.testing.assert_array_equal(out, np.sort(x.ravel())[::-1][:3])


def test_topk_k_below_one_returns_everything_sorted():
    x = distinct(2, 5)
    out = mx.nd.topk(mx.nd.array(x), k=0, ret_typ="value").asnumpy()
    np.testing.assert_array_equal(out, -np.sort(-x, axis=-1))


def test_topk_value_gradient_scatters_to_chosen_positions():
    check_gradient("topk", [distinct(3, 5)], {"k": 2, "ret_typ": "value"})


def test_topk_both_gradient_flows_through_the_values():
    x = mx.nd.array([[1, 4, 3, 0], [2, 7, 5, 6]])
    x.attach_grad()
    with mx.autograd.record():
        values, _ = mx.nd.topk(x, k=2, ret_typ="both")
    values.backward(mx.nd.array([[1, 2], [3, 4]]))
    # values from MXNet 1.9.1; lazynd gave no gradient for ret_typ='both'
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 1, 2, 0], [0, 3, 0, 4]])


def test_topk_rejects_k_larger_than_axis():
    with pytest.raises(OperatorError, match="topk: k=7 is larger than the 5 elements along the axis"):
        mx.nd.topk(mx.nd.array(distinct(2, 5)), k=7)


def test_topk_rejects_unknown_ret_typ():
    with pytest.raises(OperatorError, match="topk: invalid value 'values' for parameter 'ret_typ'"):
        mx.nd.topk(mx.nd.array(distinct(2, 5)), ret_typ="values")


@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("ascend", [True, False])
def test_sort_matches_numpy(axis, ascend, ctx):
    x = distinct(4, 5)

    def reference(a):
        s = np.sort(a, axis=axis)
        return s if ascend else np.flip(s, axis=0 if axis is None else axis)

    check_forward("sort", [x], {"axis": axis, "is_ascend": ascend}, reference, ctx=ctx)


@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("ascend", [True, False])
def test_sort_gradient_goes_back_to_each_value_s_position(axis, ascend):
    grads = check_gradient("sort", [distinct(3, 4)], {"axis": axis, "is_ascend": ascend})
    assert grads[0] is not None and np.abs(grads[0]).sum() > 0


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("ascend", [True, False])
def test_argsort_matches_numpy(axis, ascend, ctx):
    x = distinct(4, 5)
    expected = np.argsort(x if ascend else -x, axis=axis).astype(np.float32)
    check_forward("argsort", [x], {"axis": axis, "is_ascend": ascend}, lambda a: expected, ctx=ctx)


@pytest.mark.parametrize("ascend, expected", [(True, [1, 3, 0, 2]), (False, [0, 2, 1, 3])])
def test_argsort_keeps_ties_in_original_order(ascend, expected):
    x = np.array([2.0, 1.0, 2.0, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(mx.nd.argsort(mx.nd.array(x), is_ascend=ascend).asnumpy(), expected)


def test_topk_breaks_ties_by_first_position():
    x = np.array([[2.0, 1.0, 2.0, 1.0]], dtype=np.float32)
    np.testing.assert_array_equal(mx.nd.topk(mx.nd.array(x), k=4).asnumpy(), [[0, 2, 1, 3]])


def test_argsort_honours_dtype():
    out = mx.nd.argsort(mx.nd.array(distinct(2, 3)), dtype="int64")
    assert out.asnumpy().dtype == np.int64


@pytest.mark.parametrize("op", ["topk", "argsort"])
def test_index_dtypes_are_mxnets_choices(op):
    # MXNet 1.9.1 takes float16/32/64, int32, int64 and uint8 for the indices, and refuses int8 or bool
    assert getattr(mx.nd, op)(mx.nd.array([2.0, 1.0]), dtype="uint8").dtype == np.uint8
    for dtype in ("int8", "bool"):
        with pytest.raises(OperatorError, match=f"{op}: invalid value '{dtype}' for parameter 'dtype'"):
            getattr(mx.nd, op)(mx.nd.array([2.0, 1.0]), dtype=dtype)


def test_sort_rejects_out_of_range_axis():
    with pytest.raises(ShapeError, match="sort: axis=2 is out of range for a 2-D input"):
        mx.nd.sort(mx.nd.array(distinct(2, 3)), axis=2)


def test_sort_works_on_integers():
    x = np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int32)
    out = mx.nd.sort(mx.nd.array(x, dtype="int32"), is_ascend=False).asnumpy()
    np.testing.assert_array_equal(out, [[3, 2, 1], [5, 4, 0]])


def test_topk_mask_refuses_k_beyond_the_axis_at_the_call():
    # as the other ret_typs do (and MXNet); it failed only at the next wait, as an EngineError
    with pytest.raises(OperatorError, match="topk: k=7 is larger than the 4 elements along the axis"):
        mx.nd.topk(mx.nd.ones((2, 4)), k=7, ret_typ="mask")


def stable_top(a: np.ndarray, k: int, axis: int, ascend: bool) -> np.ndarray:
    """The first k of the whole sorted order, ties first-come both ways (NaN last ascending, first descending)."""
    if ascend:
        order = np.argsort(a, axis=axis, kind="stable")
    else:
        backwards = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
        order = a.shape[axis] - 1 - backwards
    return np.take(order, np.arange(k), axis=axis)


def tied_rows(dtype: str, seed: int) -> np.ndarray:
    """Rows of few distinct values (many ties at every k-th value), with NaNs and infinities in the float ones."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, size=(7, 40, 3)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.random(a.shape) < 0.1] = np.nan
        a[rng.random(a.shape) < 0.05] = np.inf
        a[rng.random(a.shape) < 0.05] = -np.inf
        a[0, :, 0] = np.nan  # a row of NaNs only
    a[1, :, 1] = a[1, 0, 1]  # a row of one value
    return a


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "uint8"])
@pytest.mark.parametrize("ascend", [False, True])
@pytest.mark.parametrize("k", [1, 3, 17, 39, 40])
def test_topk_of_a_few_picks_the_first_k_of_the_stable_order_with_ties_and_nans(dtype, ascend, k):
    # topk sorts only the candidates a partition leaves (each row's k-th value and everything on its side)
    a = tied_rows(dtype, seed=k)
    for axis in (1, 0):
        kk = min(k, a.shape[axis])
        got = mx.nd.topk(mx.nd.array(a, dtype=dtype), k=kk, axis=axis, is_ascend=ascend, dtype="int64")
        np.testing.assert_array_equal(got.asnumpy(), stable_top(a, kk, axis, ascend))


@pytest.mark.parametrize("ascend", [False, True])
def test_topk_mask_and_gradient_go_to_the_first_of_tied_values(ascend):
    a = tied_rows("float32", seed=5)[:, :, 2]
    top = stable_top(a, 4, 1, ascend)
    mask = np.zeros_like(a)
    np.put_along_axis(mask, top, 1, axis=1)
    got = mx.nd.topk(mx.nd.array(a), k=4, ret_typ="mask", is_ascend=ascend)
    np.testing.assert_array_equal(got.asnumpy(), mask)
    x = mx.nd.array(a)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.topk(x, k=4, ret_typ="value", is_ascend=ascend)
    y.backward(mx.nd.ones(y.shape) * 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * mask)


@pytest.mark.parametrize("ret_typ", ["value", "indices", "mask", "both"])
@pytest.mark.parametrize(("shape", "axis"), [((3, 0), -1), ((0, 4), 0), ((0, 4), None)])
def test_topk_refuses_k_from_a_zero_size_axis_at_the_call(ret_typ, shape, axis):
    # a zero-size axis is a size in an imperative call: k=1 of it was let through the shape rule,
    # to fail in the kernel at the wait (or, for the mask, to give an empty mask without a word)
    with pytest.raises(OperatorError, match="k=1 is larger than the 0 elements"):
        mx.nd.topk(mx.nd.zeros(shape), k=1, axis=axis, ret_typ=ret_typ)


def test_topk_of_all_of_a_zero_size_axis_is_empty():
    assert mx.nd.topk(mx.nd.zeros((3, 0)), k=0, ret_typ="value").shape == (3, 0)
    assert mx.nd.topk(mx.nd.zeros((0, 4)), k=2).shape == (0, 2)

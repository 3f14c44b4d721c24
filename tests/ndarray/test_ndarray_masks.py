"""Index arrays: a boolean NDArray is a mask and an integer one positions, as in NumPy; a
floating-point one (what comparisons return, as in MXNet) is refused with a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def _grid(ctx: mx.Context) -> tuple[np.ndarray, mx.nd.NDArray]:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    return x, mx.nd.array(x, ctx=ctx)


def test_a_boolean_mask_of_the_same_shape_selects_elements(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    picked = a[(a > 2).astype("bool")]
    np.testing.assert_array_equal(picked.asnumpy(), x[x > 2])
    assert picked.shape == (9,) and picked.context == ctx


def test_a_boolean_mask_on_the_first_axis_selects_rows(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    rows = mx.nd.array([True, False, True], dtype="bool", ctx=ctx)
    np.testing.assert_array_equal(a[rows].asnumpy(), x[[True, False, True]])


def test_a_boolean_mask_inside_a_tuple_selects_columns(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    columns = np.array([False, True, True, False])
    np.testing.assert_array_equal(a[:, mx.nd.array(columns, dtype="bool", ctx=ctx)].asnumpy(), x[:, columns])


def test_assigning_a_scalar_through_a_mask_writes_exactly_the_masked_elements(ctx: mx.Context) -> None:
    values = np.arange(100, dtype=np.float32)
    b = mx.nd.array(values, ctx=ctx)
    b[(b > 50).astype("bool")] = 0
    values[values > 50] = 0
    np.testing.assert_array_equal(b.asnumpy(), values)


def test_assigning_arrays_through_a_mask(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    mask, host_mask = (a > 6).astype("bool"), x > 6
    a[mask] = mx.nd.array(-np.arange(5), ctx=ctx)
    x[host_mask] = -np.arange(5)
    np.testing.assert_array_equal(a.asnumpy(), x)
    a[mask] = [1, 2, 3, 4, 5]  # from the host
    x[host_mask] = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_masks_on_views_read_and_write_the_parent(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    view = a[1:]
    mask = mx.nd.array(x[1:] % 2 == 0, dtype="bool", ctx=ctx)
    np.testing.assert_array_equal(view[mask].asnumpy(), x[1:][x[1:] % 2 == 0])
    view[mask] = 100
    x[1:][x[1:] % 2 == 0] = 100
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_an_integer_ndarray_index_still_gives_positions(ctx: mx.Context) -> None:
    x, a = _grid(ctx)
    positions = mx.nd.array([2, 0, 2], dtype="int32", ctx=ctx)
    np.testing.assert_array_equal(a[positions].asnumpy(), x[[2, 0, 2]])
    a[positions] = 7
    x[[2, 0, 2]] = 7
    np.testing.assert_array_equal(a.asnumpy(), x)


@pytest.mark.parametrize(
    "index",
    [lambda a: a > 2, lambda a: (a > 2,)],  # a comparison: 0/1 floats shaped as the array
    ids=["comparison", "in-tuple"],
)
def test_a_float_comparison_used_as_a_mask_is_refused_clearly(ctx: mx.Context, index) -> None:
    # MXNet reads it as positions 0 and 1, silently; lazynd asks for a bool mask or integer positions
    x, a = _grid(ctx)
    with pytest.raises(mx.LazyNDError, match=r"float.*astype\('bool'\).*integer dtype"):
        a[index(a)]
    with pytest.raises(mx.LazyNDError, match=r"astype\('bool'\)"):
        a[index(a)] = 0
    np.testing.assert_array_equal(a.asnumpy(), x)  # nothing was written


@pytest.mark.parametrize(
    "index, positions",
    [
        (lambda a: (slice(None), mx.nd.array([2, 0], ctx=a.context)), (slice(None), [2, 0])),
        (lambda a: mx.nd.array([2.7, -1.0], ctx=a.context), [2, -1]),  # truncated toward zero, as MXNet
        (lambda a: np.array([0.0, 1.0]), [0, 1]),
        (lambda a: [1.0, 0.0], [1, 0]),
    ],
    ids=["nd-in-tuple", "nd-truncated", "numpy-float", "list-float"],
)
def test_float_positions_index_as_in_mxnet(ctx: mx.Context, index, positions) -> None:
    # NDArrays are float32 by default (x[labels]): MXNet reads float index arrays as positions
    x, a = _grid(ctx)
    np.testing.assert_array_equal(a[index(a)].asnumpy(), x[positions])
    a[index(a)] = 0
    x[positions] = 0
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_a_float_index_of_nan_is_refused() -> None:
    _, a = _grid(mx.cpu())
    with pytest.raises(mx.LazyNDError, match="NaN or infinity"):
        a[mx.nd.array([0.0, float("nan")])]


def test_a_float_index_past_int64_is_refused_naming_it() -> None:
    # cast to int64 it wrapped around (a RuntimeWarning, then "index -9223372036854775808 is out of bounds")
    _, a = _grid(mx.cpu())
    with pytest.raises(mx.LazyNDError, match=r"holds 1e\+30, past any position"):
        a[mx.nd.array([0.0, -1e30])]


def test_a_mask_of_the_wrong_shape_is_refused_clearly(ctx: mx.Context) -> None:
    _, a = _grid(ctx)
    mask = mx.nd.array([True, False], dtype="bool", ctx=ctx)
    with pytest.raises(mx.LazyNDError, match=r"\(3, 4\)"):
        a[mask]
    with pytest.raises(mx.LazyNDError, match=r"\(3, 4\)"):
        a[mask] = 1

"""Reductions: values vs NumPy over axes/keepdims/exclude, MXNet shapes, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal, check_consistency, check_forward, check_gradient, np_reduce

NUMPY = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
}
AXES = [None, 0, 1, -1, (0, 2), (1, 2)]


def _data(dtype="float64", shape=(2, 3, 4), seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=shape).astype(dtype)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_matches_numpy(name, axis, keepdims, ctx):
    x = _data("float32")

    def reference(v):
        out = np_reduce(v.astype(np.float64), axis, keepdims, NUMPY[name])
        return out.reshape(out.shape or (1,))

    check_forward(name, [x], {"axis": axis, "keepdims": keepdims}, reference, ctx=ctx, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("name", ["sum", "max", "mean"])
def test_last_axis_reduction_over_long_rows(name, dtype, ctx):
    # rows longer than one GPU block exercise the row kernel's strided pass and tree
    x = np.random.default_rng(1).uniform(-2, 2, size=(5, 1000)).astype(dtype)
    want = NUMPY[name](x.astype(np.float64), axis=-1)
    got = check_forward(name, [x], {"axis": -1}, None, ctx=ctx)[0]
    tol = {"float16": 5e-2, "float32": 1e-4}.get(dtype, 1e-9)
    assert_almost_equal(got.astype(np.float64), want.astype(x.dtype).astype(np.float64), rtol=tol, atol=tol)


def test_reduce_all_axes_has_shape_one():
    assert mx.nd.sum(mx.nd.ones((2, 3))).shape == (1,)
    assert mx.nd.sum(mx.nd.ones((2, 3)), keepdims=True).shape == (1, 1)


def test_exclude_reduces_the_other_axes(ctx):
    x = _data()
    check_forward("sum", [x], {"axis": 1, "exclude": True}, lambda v: v.sum(axis=(0, 2)), ctx=ctx)


@pytest.mark.parametrize("axis", [None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_exclude_without_axes_still_reduces_every_axis(axis, keepdims):
    # MXNet 1.9.1: no axis (or an empty tuple) reduces all, whatever ``exclude`` says
    x = _data()
    out = mx.nd.sum(mx.nd.array(x), axis=axis, keepdims=keepdims, exclude=True)
    assert out.shape == ((1, 1, 1) if keepdims else (1,))
    assert_almost_equal(out.asnumpy().reshape(-1), np.array([x.sum()]))


def test_axis_given_as_string_like_symbol_json():
    x = _data()
    check_forward("max", [x], {"axis": "(0, 2)", "keepdims": "True"}, lambda v: v.max(axis=(0, 2), keepdims=True))


def test_old_axis_names_are_aliases():
    x = mx.nd.array(_data())
    assert_almost_equal(mx.nd.sum_axis(x, axis=1), mx.nd.sum(x, axis=1))
    assert_almost_equal(mx.nd.max_axis(x, axis=2), mx.nd.max(x, axis=2))
    assert_almost_equal(mx.nd.min_axis(x, axis=0), mx.nd.min(x, axis=0))


def test_reduction_as_ndarray_method():
    x = mx.nd.array(_data())
    assert_almost_equal(x.sum(axis=1), _data().sum(axis=1).astype(np.float32))


def test_nan_reductions_skip_nans():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, 3.0, 4.0]])
    check_forward("nansum", [x], {"axis": 1}, lambda v: np.nansum(v, axis=1))
    check_forward("nanprod", [x], {"axis": 1}, lambda v: np.nanprod(v, axis=1))


@pytest.mark.parametrize("ord", [1, 2])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_norm_matches_numpy(ord, axis, ctx):
    x = _data() - 1.0

    def reference(v):
        out = np_reduce(np.abs(v) ** ord, axis, False, np.sum) ** (1.0 / ord)
        return out.reshape(out.shape or (1,))

    check_forward("norm", [x], {"ord": ord, "axis": axis}, reference, ctx=ctx)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64"])
def test_norm_of_integers_is_the_exact_norm_truncated(dtype, ctx):
    # the squares wrapped in the integer dtype (100 ** 2 is 16 in int8: [16, 100] gave 4); MXNet 1.9.1's
    # integer norm is no better ([3, 4] gives 4, negative int8 data dies of SIGFPE)
    x = mx.nd.array([[16, 100], [3, 4], [1, 2]], ctx=ctx, dtype=dtype)
    got = mx.nd.norm(x, axis=1)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), [101, 5, 2])
    assert mx.nd.norm(x).asnumpy().tolist() == [101]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_a_whole_array(dtype, keepdims):
    # float32/float64 take one BLAS dot; float16 the general path (accumulated in float32)
    x = (_data(seed=3) - 1.0).astype(dtype)
    got = mx.nd.norm(mx.nd.array(x, dtype=dtype), keepdims=keepdims)
    assert got.shape == ((1, 1, 1) if keepdims else (1,)) and got.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.asnumpy().reshape(()), np.linalg.norm(x.astype(np.float64)), rtol=tol)
    whole = mx.nd.norm(mx.nd.array(x, dtype=dtype), axis=(0, 1, 2)).asnumpy()
    np.testing.assert_allclose(got.asnumpy().reshape(()), whole.reshape(()), rtol=tol)
    if dtype != "float16":  # the square root taken in double rounds to the dtype's own, bit for bit
        flat = x.reshape(-1)
        assert got.asnumpy().reshape(()) == np.sqrt(np.dot(flat, flat))


@pytest.mark.parametrize("params", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"axis": 0, "exclude": True}])
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_reduction_gradient_matches_numeric(name, params, ctx):
    check_gradient(name, [_data(seed=2)], params, ctx=ctx)


@pytest.mark.parametrize("ord", [1, 2])
def test_norm_gradient_matches_numeric(ord, ctx):
    check_gradient("norm", [_data(seed=3) - 1.0], {"ord": ord, "axis": 1}, ctx=ctx)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_arg_reductions_match_numpy(name, axis, ctx):
    x = _data("float32")
    fn = getattr(np, name)
    out = check_forward(name, [x], {"axis": axis}, lambda v: fn(v, axis=axis).astype(np.float32), ctx=ctx)
    assert out[0].dtype == np.float32


def test_argmax_without_axis_searches_the_flat_array():
    x = _data("float32")
    assert_almost_equal(mx.nd.argmax(mx.nd.array(x)), np.array([np.argmax(x)], dtype=np.float32))
    assert mx.nd.argmin(mx.nd.array(x), axis=1, keepdims=True).shape == (2, 1, 4)


def test_argmax_channel_reduces_the_last_axis(ctx):
    x = _data("float32", shape=(4, 5))
    check_forward("argmax_channel", [x], {}, lambda v: np.argmax(v, axis=-1).astype(np.float32), ctx=ctx)


def test_argmax_channel_reduces_axis_1_of_a_3d_input(ctx):
    x = _data("float32", shape=(2, 3, 4))
    out = check_forward("argmax_channel", [x], {}, lambda v: np.argmax(v, axis=1).astype(np.float32), ctx=ctx)
    assert out[0].shape == (2, 4)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_of_integers_give_indices_in_the_input_dtype(name, ctx):
    x = np.array([[1, 3, 2], [4, 0, 9]], dtype=np.int32)
    out = getattr(mx.nd, name)(mx.nd.array(x, ctx=ctx, dtype="int32"), axis=1)
    assert out.dtype == np.int32  # as MXNet 1.9.1 (and 0.9's same-dtype rule)
    np.testing.assert_array_equal(out.asnumpy(), getattr(np, name)(x, axis=1))


def test_arg_reductions_have_no_gradient():
    assert mx.nd.argmax  # registered
    from lazynd.ops import registry

    assert registry.get("argmax").gradient(mx.nd, {}, [None], [None], [None]) == [None]


def test_axis_out_of_range_is_a_clear_error():
    with pytest.raises(mx.OperatorError, match="sum: axis 3 is out of range for an input of 2 dims"):
        mx.nd.sum(mx.nd.ones((2, 3)), axis=3)


def test_repeated_axis_is_rejected():
    with pytest.raises(mx.OperatorError, match="names an axis twice"):
        mx.nd.sum(mx.nd.ones((2, 3)), axis=(1, -1))


@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
def test_norm_writes_its_out_dtype_and_the_gradient_keeps_the_inputs(out_dtype, ctx):
    # MXNet 1.x's out_dtype: the output in that dtype, the input's gradient in the input's
    x = mx.nd.array([[3.0, 4.0], [6.0, 8.0]], ctx=ctx, dtype="float16")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(x, axis=1, out_dtype=out_dtype)
    y.backward()
    assert y.dtype == np.dtype(out_dtype)
    np.testing.assert_array_equal(y.asnumpy(), [5.0, 10.0])
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.asnumpy(), [[0.6, 0.8], [0.6, 0.8]], rtol=1e-3)


def test_norm_refuses_an_out_dtype_mxnet_lacks():
    with pytest.raises(mx.LazyNDError, match="norm: invalid value 'uint8' for parameter 'out_dtype'"):
        mx.nd.norm(mx.nd.ones((2,)), out_dtype="uint8")


def test_bad_norm_order_is_rejected():
    with pytest.raises(mx.OperatorError, match="norm: invalid value 3 for parameter 'ord'"):
        mx.nd.norm(mx.nd.ones((2,)), ord=3)


def test_max_of_empty_array_raises():
    with pytest.raises(mx.LazyNDError, match="empty"):
        mx.nd.max(mx.nd.zeros((0, 3)), axis=0).asnumpy()


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize(
    ("shape", "params", "expected"), [((2, 0, 3), {"axis": 0}, (0, 3)), ((0,), {"axis": 0, "exclude": True}, (0,))]
)
def test_max_with_an_empty_result_is_empty(name, shape, params, expected):
    # NumPy's rule, as for argmax: only a reduction over no elements into a non-empty result has no answer
    out = getattr(mx.nd, name)(mx.nd.zeros(shape), **params)
    assert out.shape == expected and out.asnumpy().shape == expected


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "norm"])
def test_reductions_cpu_and_gpu_agree(name):
    check_consistency(name, [_data("float32", shape=(3, 300))], {"axis": -1}, rtol=1e-4, atol=1e-4)
    check_consistency(name, [_data("float32")], {"axis": (0, 2)}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_of_an_array_empty_along_another_axis_is_empty(name):
    # NumPy's rule: only an empty reduced axis has no answer
    out = getattr(mx.nd, name)(mx.nd.ones((0, 3)), axis=1)
    assert out.shape == (0,) and out.asnumpy().shape == (0,)
    assert getattr(mx.nd, name)(mx.nd.ones((2, 0, 3)), axis=-1).asnumpy().shape == (2, 0)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_of_no_elements_raise_at_the_call(ctx, name):
    """As in MXNet, at the call itself: a program that never waits on the result still hears of it."""
    empty = mx.nd.zeros((5, 0), ctx=ctx)
    with pytest.raises(mx.MXNetError, match=rf"{name}: cannot reduce an empty array of shape \(5, 0\)"):
        getattr(empty, name)()
    assert getattr(mx.nd, name)(empty, axis=0).shape == (0,)


@pytest.mark.parametrize(("shape", "axis", "message"), [((0, 3), 0, "along axis 0"), ((0,), None, "empty array")])
def test_arg_reduction_over_an_empty_axis_raises_naming_it(shape, axis, message):
    with pytest.raises(mx.LazyNDError, match=message):
        mx.nd.argmax(mx.nd.ones(shape), axis=axis).wait_to_read()


@pytest.mark.parametrize("name", ["argmax", "argmin", "argmax_channel"])
def test_arg_reductions_of_no_elements_raise_at_the_call(ctx, name):
    # as max and min: a program that never waits on the result still hears of it
    empty = mx.nd.zeros((5, 0), ctx=ctx)
    with pytest.raises(mx.OperatorError, match=rf"{name}: cannot take the {name} along axis 1"):
        getattr(mx.nd, name)(empty) if name == "argmax_channel" else getattr(mx.nd, name)(empty, axis=1)
    assert mx.nd.argmax(empty, axis=0).shape == (0,)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("shape", "axis"), [((3 * 65536 + 7,), None), ((5, 70001), None), ((2, 3, 65537), (0, 1, 2)), ((9, 40003), 1)]
)
def test_large_gpu_reductions_in_pieces_agree_with_numpy(name, dtype, shape, axis):
    """Whole-array reductions of 65,536 elements or more run as pieces, then one row of their
    results (sizes that do not divide evenly leave a shorter last piece); rows reduce with four
    loads in flight per thread."""
    host = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    host.flat[12345] = 40.0  # a maximum inside the first piece, a minimum in the last
    host.flat[-3] = -40.0
    got = getattr(mx.nd, name)(mx.nd.array(host, ctx=mx.gpu(0), dtype=dtype), axis=axis).asnumpy()
    want = getattr(np, name)(host.astype(np.float64), axis=axis)
    np.testing.assert_allclose(
        got, want, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-3 if dtype == "float32" else 1e-9
    )


# -- cumsum: MXNet 1.9.1's mx.nd.cumsum ---------------------------------------------------------------
def test_cumsum_without_axis_sums_the_flattened_array(ctx):
    out = mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]], ctx=ctx))
    assert_almost_equal(out.asnumpy(), np.array([1, 3, 6, 10], dtype=np.float32))


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "float16", "int64"])
def test_cumsum_keeps_the_input_dtype_as_mxnet(dtype):
    out = mx.nd.cumsum(mx.nd.array([1, 2, 3], dtype=dtype))
    assert out.dtype == np.dtype(dtype)
    assert out.asnumpy().tolist() == [1, 3, 6]


def test_cumsum_into_a_dtype_converts_the_input_first():
    assert mx.nd.cumsum(mx.nd.array([1.5, 2, 3]), dtype="int32").asnumpy().tolist() == [1, 3, 6]
    assert mx.nd.cumsum(mx.nd.array([1, 2]), dtype="float64").dtype == np.float64


@pytest.mark.parametrize(
    ("axis", "head", "expected"),
    [
        (1, [[1, 2, 3], [1, 1, 1]], [[6, 5, 3], [3, 2, 1]]),
        (None, [0, 1, 2, 3, 4, 5], [[15, 15, 14], [12, 9, 5]]),
    ],
)
def test_cumsum_gradients_are_mxnets(axis, head, expected):
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(x, axis=axis)
    y.backward(mx.nd.array(head))
    assert_almost_equal(x.grad.asnumpy(), np.array(expected, dtype=np.float32))


def test_cumsum_gradient_with_a_dtype_has_the_input_dtype():
    check_gradient("cumsum", [np.random.default_rng(0).uniform(size=(2, 3))], {"axis": 0, "dtype": "float64"})


def test_cumsum_refuses_an_axis_out_of_range_at_the_call():
    from lazynd.errors import ShapeError

    with pytest.raises(ShapeError, match=r"cumsum: axis=2 is out of range for a 2-D input"):
        mx.nd.cumsum(mx.nd.zeros((2, 3)), axis=2)


def test_cumsum_loads_from_mxnet_symbol_json_as_np_cumsum():
    import json

    import lazynd_sym as sym

    graph = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "_np_cumsum", "name": "cumsum0", "attrs": {"axis": "1"}, "inputs": [[0, 0, 0]]},
        ],
        "arg_nodes": [0],
        "node_row_ptr": [0, 1, 2],
        "heads": [[1, 0, 0]],
    }
    net = sym.load_json(json.dumps(graph))
    out = net.bind(mx.cpu(), {"x": mx.nd.array([[1, 2], [3, 4]])}).forward()[0]
    assert_almost_equal(out.asnumpy(), np.array([[1, 3], [3, 7]], dtype=np.float32))


def test_backward_reduce_reads_only_the_shapes_of_sum_and_mean_inputs():
    # an executor may overwrite a forward value read only for its shape and still run backward again
    op = registry.get("_backward_reduce")
    for reducer, value_inputs in (("sum", [0]), ("mean", [0]), ("nansum", [0, 1]), ("max", [0, 1, 2])):
        attrs = op.parse({"reducer": reducer})
        assert [k for k in range(3) if op.reads_value(attrs, k)] == value_inputs, reducer
    norm1, norm2 = op.parse({"reducer": "norm", "ord": 1}), op.parse({"reducer": "norm", "ord": 2})
    assert [op.reads_value(norm1, k) for k in range(3)] == [True, True, False]
    assert all(op.reads_value(norm2, k) for k in range(3))


@pytest.mark.parametrize("reducer", ["sum", "mean"])
@pytest.mark.parametrize(
    ("axis", "keepdims", "exclude"), [(None, False, False), (1, True, False), ((0, 2), False, True)]
)
def test_backward_reduce_of_sum_and_mean_is_differentiable_in_its_output_gradient(
    reducer, axis, keepdims, exclude, ctx
):
    # second-order gradients through a sum or a mean (a loss's .sum()) go through this rule
    x = _data()
    params = {"reducer": reducer, "axis": axis, "keepdims": keepdims, "exclude": exclude}
    forward = getattr(mx.nd, reducer)(mx.nd.array(x, dtype="float64"), axis=axis, keepdims=keepdims, exclude=exclude)
    out_grad = np.random.default_rng(3).uniform(-1, 1, size=forward.shape)
    grads = check_gradient("_backward_reduce", [out_grad, x, forward.asnumpy()], params, ctx=ctx, wrt=[0])
    assert grads[1] is None and grads[2] is None


def test_second_derivative_through_a_sum_and_a_mean() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0])
    x = mx.nd.array(values)
    x.attach_grad()
    with mx.autograd.record():
        (first,) = mx.autograd.grad(mx.nd.sum(x**3) + mx.nd.mean(mx.nd.tanh(x)), [x], create_graph=True)
        penalty = mx.nd.sum(first * first)
    penalty.backward()
    t = np.tanh(values)
    d1 = 3 * values**2 + (1 - t**2) / 4
    d2 = 6 * values - 2 * t * (1 - t**2) / 4
    np.testing.assert_allclose(first.asnumpy(), d1, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * d1 * d2, rtol=1e-5)


def test_second_derivative_through_a_max_is_refused_by_name() -> None:
    x = mx.nd.array([1.0, 3.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        (first,) = mx.autograd.grad(mx.nd.max(x * x), [x], create_graph=True)
    with pytest.raises(mx.LazyNDError, match="_backward_reduce: the gradient of max's backward is not implemented"):
        first.backward()

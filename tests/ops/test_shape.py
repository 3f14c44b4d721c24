"""Reshape, Flatten, transpose, SwapAxis, expand_dims, reshape_like, flip, tile, repeat, Pad."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import check_forward, check_gradient

RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "spec, reverse, dshape, expected",
    [
        ((0, -1), False, (2, 3, 4), (2, 12)),
        ((-2,), False, (2, 3, 4), (2, 3, 4)),
        ((2, -2), False, (2, 3, 4), (2, 3, 4)),
        ((-3, 4), False, (2, 3, 4), (6, 4)),
        ((-4, 1, 2, -2), False, (2, 3, 4), (1, 2, 3, 4)),
        ((0, -4, -1, 1, 0), False, (2, 3, 4), (2, 3, 1, 4)),
        ((-1, 0), True, (10, 5, 4), (50, 4)),
        ((-1, 0), False, (10, 5, 4), (40, 5)),
        ((6, 1, -1), False, (2, 3, 4), (6, 1, 4)),
    ],
)
def test_reshape_special_codes_give_mxnet_shapes(spec, reverse, dshape, expected, ctx):
    x = rand(*dshape)
    out = check_forward("Reshape", [x], {"shape": spec, "reverse": reverse}, lambda a: a.reshape(expected), ctx=ctx)
    assert out[0].shape == expected


def test_reshape_accepts_string_params_as_symbol_json_stores_them():
    out = mx.nd.Reshape(mx.nd.array(rand(2, 3, 4)), shape="(0, -1)", reverse="False")
    assert out.shape == (2, 12)


def test_reshape_partial_shape_keeps_unknown_dims_unknown():
    _, out, _ = registry.get("Reshape").infer_shape({"shape": (0, -3), "reverse": False}, [(0, 3, 4)])
    assert out == [(0, 12)]
    _, out, _ = registry.get("Reshape").infer_shape({"shape": (0, -1), "reverse": False}, [(0, 3, 4)])
    assert out == [(0, 0)]


@pytest.mark.parametrize(
    ("given", "spec", "reverse", "out", "expected"),
    [
        ((2, 3, 5, 0), (0, -1), False, (2, 75), (2, 3, 5, 5)),
        ((0,), (-4, 16, -1), False, (16, 4), (64,)),
        ((2, 0, 5, 6), (-2, 1, 30), True, (2, 3, 1, 30), (2, 3, 5, 6)),
    ],
)
def test_reshape_infers_one_unknown_input_dim_from_a_known_output(given, spec, reverse, out, expected):
    # MXNet fills the input's one unknown dim (0) from the element count of a known output
    net = sym.elemwise_add(sym.Variable("data").reshape(spec, reverse=reverse), sym.ones(shape=out))
    arg_shapes, out_shapes, _ = net.infer_shape(data=given)
    assert arg_shapes == [expected]
    assert out_shapes == [out]


def test_reshape_refuses_a_known_output_its_partial_input_cannot_hold():
    net = sym.elemwise_add(sym.Variable("data").reshape((0, -1)), sym.Variable("other"))
    with pytest.raises(ShapeError, match=r"Reshape: output \(2, 7\) has 14 elements.*\(2, 3, 5, 0\)"):
        net.infer_shape(data=(2, 3, 5, 0), other=(2, 7))


def test_reshape_rejects_wrong_element_count():
    with pytest.raises(ShapeError, match=r"Reshape: shape=\(5, 5\) on input \(2, 3, 4\).*expected 24"):
        mx.nd.Reshape(mx.nd.array(rand(2, 3, 4)), shape=(5, 5))


def test_reshape_rejects_two_inferred_dims():
    with pytest.raises(ShapeError, match="only one -1"):
        mx.nd.Reshape(mx.nd.array(rand(2, 3, 4)), shape=(-1, -1))


def test_reshape_rejects_unknown_code():
    with pytest.raises(ShapeError, match="invalid code -7"):
        mx.nd.Reshape(mx.nd.array(rand(2, 3)), shape=(-7,))


def test_reshape_rejects_a_split_that_does_not_divide():
    with pytest.raises(ShapeError, match="-4 cannot split dim 6 into"):
        mx.nd.Reshape(mx.nd.array(rand(6, 2)), shape=(-4, 4, -1, 0))


def test_reshape_requires_shape_param():
    with pytest.raises(OperatorError, match=r"Reshape: give shape \(or the older target_shape\), got neither"):
        mx.nd.Reshape(mx.nd.array(rand(2, 3)))


def test_ndarray_reshape_method_with_codes_routes_to_reshape_op():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(mx.nd.array(x).reshape((0, -1)).asnumpy(), x.reshape(2, 12))


def test_reshape_gradient_matches_numeric():
    check_gradient("Reshape", [rand(2, 3, 4)], {"shape": (-3, -1)})


def test_reshape_like_takes_the_shape_of_rhs_and_checks_sizes(ctx):
    a, b = rand(2, 6), rand(3, 4)
    check_forward("reshape_like", [a, b], {}, lambda x, y: x.reshape(y.shape), ctx=ctx)
    with pytest.raises(ShapeError, match=r"reshape_like: lhs \(2, 6\) has 12 elements, rhs \(5,\) has 5"):
        mx.nd.reshape_like(mx.nd.array(a), mx.nd.array(rand(5)))


@pytest.mark.parametrize(
    "rhs_shape,params,expected",
    [  # shapes from MXNet 1.9.1
        ((6, 4), {"lhs_begin": 0, "lhs_end": 2, "rhs_begin": 0, "rhs_end": 1}, (6, 4)),
        ((2, 12), {"lhs_begin": -2, "lhs_end": None, "rhs_begin": 1}, (2, 12)),
        ((2, 3, 2, 2), {"lhs_begin": -2, "rhs_begin": 1}, (2, 3, 2, 2)),
        ((2, 12), {"lhs_begin": 1, "lhs_end": 3, "rhs_begin": 1, "rhs_end": 2}, (2, 12)),
        ((6, 4), {"lhs_begin": -1, "rhs_begin": -1}, (2, 3, 4)),
        ((6, 4), {"lhs_end": -1, "rhs_end": -1}, (6, 4)),
    ],
)
def test_reshape_like_replaces_a_range_of_axes_as_mxnet(rhs_shape, params, expected):
    lhs = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    out = mx.nd.reshape_like(lhs, mx.nd.zeros(rhs_shape), **params)
    assert out.shape == expected
    np.testing.assert_array_equal(out.asnumpy().ravel(), np.arange(24))
    sym = mx.sym.reshape_like(mx.sym.var("lhs"), mx.sym.var("rhs"), **params)
    assert mx.sym.load_json(sym.tojson()).infer_shape(lhs=(2, 3, 4), rhs=rhs_shape)[1] == [expected]


@pytest.mark.parametrize(
    "params,message",
    [
        ({"lhs_begin": 5}, r"lhs_begin=5, lhs_end=None name no axes of the lhs \(2, 3, 4\)"),
        ({"lhs_begin": 2, "lhs_end": 1}, r"lhs_begin=2, lhs_end=1 name no axes"),
        ({"rhs_begin": 1}, r"lhs \(2, 3, 4\) has 24 elements, rhs \(6, 4\) has 4 with the axes it takes \(\(4,\)\)"),
    ],
)
def test_reshape_like_refuses_a_bad_axis_range_by_name(params, message):
    with pytest.raises(ShapeError, match=message):
        mx.nd.reshape_like(mx.nd.zeros((2, 3, 4)), mx.nd.zeros((6, 4)), **params)


def test_flatten_collapses_trailing_axes(ctx):
    check_forward("Flatten", [rand(2, 3, 4)], {}, lambda a: a.reshape(2, 12), ctx=ctx)
    check_gradient("Flatten", [rand(2, 3, 2)])
    assert mx.nd.flatten(mx.nd.array(rand(5))).shape == (5, 1)


@pytest.mark.parametrize("axes", [(), (1, 0, 2), (2, 0, 1), (-1, 0, 1)])
def test_transpose_matches_numpy_and_inverts_in_gradient(axes, ctx):
    x = rand(2, 3, 4)
    check_forward("transpose", [x], {"axes": axes}, lambda a: np.transpose(a, axes or None), ctx=ctx)
    check_gradient("transpose", [x], {"axes": axes})


def test_transpose_rejects_non_permutation():
    with pytest.raises(ShapeError, match=r"transpose: axes=\(0, 0, 1\) is not a permutation"):
        mx.nd.transpose(mx.nd.array(rand(2, 3, 4)), axes=(0, 0, 1))


@pytest.mark.parametrize(
    ("axes", "out", "expected"),
    [((), (2, 3), (3, 2)), ((2, 0, 1), (4, 2, 3), (2, 3, 4)), ((1, 0, 2), (5, 6, 7), (6, 5, 7))],
)
def test_transpose_infers_its_input_from_a_known_output_as_mxnet(axes, out, expected):
    # MXNet 1.9.1: Variable('x', shape=(0,)*n) + a known sum finds x through the transpose
    x = sym.Variable("x", shape=(0,) * len(out))
    y = sym.Variable("y", shape=out)
    arg_shapes, out_shapes, _ = (y + sym.transpose(x, axes=axes)).infer_shape_partial()
    assert arg_shapes == [out, expected] and out_shapes == [out]


def test_transpose_fills_the_unknown_dims_of_a_partial_input_from_its_output():
    x = sym.Variable("x", shape=(3, 0))
    assert (sym.ones(shape=(2, 3)) + sym.transpose(x)).infer_shape() == ([(3, 2)], [(2, 3)], [])


def test_ndarray_transpose_and_T_methods_route_to_transpose():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(mx.nd.array(x).transpose().asnumpy(), x.T)
    np.testing.assert_array_equal(mx.nd.array(x).transpose(axes=(1, 0, 2)).asnumpy(), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(mx.nd.array(x[0]).T.asnumpy(), x[0].T)


def test_T_of_an_nd_array_reverses_every_axis():
    # MXNet 1.x's ``T`` (lazynd refused more than 2 dims, as MXNet 0.9 did)
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(mx.nd.array(x).T.asnumpy(), x.T)


def test_swapaxis_matches_numpy(ctx):
    x = rand(2, 3, 4)
    check_forward("SwapAxis", [x], {"dim1": 0, "dim2": 2}, lambda a: np.swapaxes(a, 0, 2), ctx=ctx)
    check_gradient("swapaxes", [x], {"dim1": 1, "dim2": 2})
    with pytest.raises(ShapeError, match="SwapAxis: dim2=3 is out of range for a 3-D input"):
        mx.nd.SwapAxis(mx.nd.array(x), dim1=0, dim2=3)


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_expand_dims_inserts_axis(axis, ctx):
    x = rand(2, 3, 4)
    check_forward("expand_dims", [x], {"axis": axis}, lambda a: np.expand_dims(a, axis), ctx=ctx)


def test_expand_dims_rejects_out_of_range_axis():
    with pytest.raises(ShapeError, match="expand_dims: axis=4 is out of range"):
        mx.nd.expand_dims(mx.nd.array(rand(2, 3, 4)), axis=4)


@pytest.mark.parametrize("axis", [0, 2, (0, 1)])
def test_flip_matches_numpy(axis, ctx):
    x = rand(2, 3, 4)
    check_forward("flip", [x], {"axis": axis}, lambda a: np.flip(a, axis), ctx=ctx)
    check_gradient("reverse", [x], {"axis": axis})


def test_flip_over_no_axes_copies(ctx):
    # ``axis=()`` reverses nothing, as in MXNet 1.9.1 (it failed inside with a TypeError)
    x = rand(2, 3, 4)
    check_forward("flip", [x], {"axis": ()}, lambda a: a, ctx=ctx)
    check_gradient("reverse", [x], {"axis": ()})


@pytest.mark.parametrize("reps", [(2,), (2, 3), (1, 2, 2)])
def test_tile_matches_numpy_and_sums_in_gradient(reps, ctx):
    x = rand(2, 3)
    check_forward("tile", [x], {"reps": reps}, lambda a: np.tile(a, reps), ctx=ctx)
    check_gradient("tile", [x], {"reps": reps})


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_repeat_matches_numpy_and_sums_in_gradient(axis, ctx):
    x = rand(2, 3)
    check_forward("repeat", [x], {"repeats": 3, "axis": axis}, lambda a: np.repeat(a, 3, axis=axis), ctx=ctx)
    check_gradient("repeat", [x], {"repeats": 2, "axis": axis})


def test_repeat_rejects_negative_repeats():
    with pytest.raises(OperatorError, match="repeat: repeats=-1 must not be negative"):
        mx.nd.repeat(mx.nd.array(rand(2)), repeats=-1)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_matches_numpy(mode, ctx):
    x = rand(1, 2, 3, 4)
    width = (0, 0, 0, 0, 1, 2, 2, 1)
    pairs = [(0, 0), (0, 0), (1, 2), (2, 1)]
    params = {"mode": mode, "pad_width": width, "constant_value": 1.5}
    kwargs = {"constant_values": 1.5} if mode == "constant" else {}
    check_forward("Pad", [x], params, lambda a: np.pad(a, pairs, mode=mode, **kwargs), ctx=ctx)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_gradient_matches_numeric(mode):
    check_gradient("pad", [rand(1, 1, 3, 3)], {"mode": mode, "pad_width": (0, 0, 0, 0, 2, 1, 1, 2)})


def test_pad_rejects_wrong_pad_width_length():
    with pytest.raises(ShapeError, match=r"Pad: pad_width=\(1, 1\) must hold 2 non-negative values per axis.*8 values"):
        mx.nd.Pad(mx.nd.array(rand(1, 1, 2, 2)), pad_width=(1, 1))


def test_pad_rejects_reflection_wider_than_axis():
    with pytest.raises(ShapeError, match="reflect padding"):
        mx.nd.Pad(mx.nd.array(rand(1, 1, 2, 2)), mode="reflect", pad_width=(0, 0, 0, 0, 2, 2, 0, 0))


@pytest.mark.parametrize("mode", ["edge", "reflect"])
def test_pad_refuses_to_copy_values_from_an_empty_axis_at_the_call(mode, ctx):
    # NumPy's pad failed inside the kernel (an EngineError around its ValueError at the wait; MXNet 1.9.1
    # dies of SIGFPE); constant padding and an empty axis left unpadded still work
    x = mx.nd.zeros((1, 2, 0, 4), ctx=ctx)
    with pytest.raises(ShapeError, match=rf"Pad: mode='{mode}' .* axis 2 of the input \(1, 2, 0, 4\) is empty"):
        mx.nd.Pad(x, mode=mode, pad_width=(0, 0, 0, 0, 1, 1, 1, 1))
    assert mx.nd.Pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 1, 1)).shape == (1, 2, 2, 6)
    assert mx.nd.Pad(x, mode=mode, pad_width=(0, 0, 0, 0, 0, 0, 1, 1)).asnumpy().shape == (1, 2, 0, 6)


def test_pad_rejects_unknown_mode():
    with pytest.raises(OperatorError, match="Pad: invalid value 'wrap' for parameter 'mode'"):
        mx.nd.Pad(mx.nd.array(rand(1, 1, 2, 2)), mode="wrap", pad_width=(0,) * 8)


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"target_shape": (0, 12)}, (2, 12)),
        ({"target_shape": (4, 0)}, (4, 6)),
        ({"target_shape": (5, 0, 2), "keep_highest": True}, (2, 6, 2)),
    ],
)
def test_reshape_accepts_the_older_target_shape_and_keep_highest(params, expected):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = mx.nd.Reshape(mx.nd.array(x), **params)
    assert out.shape == expected  # the shapes MXNet 1.9.1 gives
    np.testing.assert_array_equal(out.asnumpy(), x.reshape(expected))


@pytest.mark.parametrize(
    "shape,axis,expected",
    [
        ((1, 3, 1, 2), None, (3, 2)),
        ((1, 3, 1, 2), 0, (3, 1, 2)),
        ((1, 3, 1, 2), (0, 2), (3, 2)),
        ((1, 3, 1, 2), -2, (1, 3, 2)),
    ]
    + [((1, 1), None, (1,)), ((1,), None, (1,))],
)
def test_squeeze_removes_axes_of_length_one_as_mxnet(shape, axis, expected):
    # shapes from MXNet 1.9.1 (squeeze was not registered: mx.nd.squeeze missing, 1.x JSON unloadable)
    x = mx.nd.array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    out = mx.nd.squeeze(x) if axis is None else mx.nd.squeeze(x, axis=axis)
    assert out.shape == expected
    np.testing.assert_array_equal(out.asnumpy().ravel(), x.asnumpy().ravel())


def test_squeeze_with_no_axes_changes_nothing_as_mxnet():
    # MXNet 1.9.1: squeeze(axis=()) keeps every axis (a reduction's axis=() would mean all of them)
    x = mx.nd.ones((1, 3, 1, 2))
    assert mx.nd.squeeze(x, axis=()).shape == (1, 3, 1, 2)
    sym = mx.sym.squeeze(mx.sym.var("x"), axis=())
    assert mx.sym.load_json(sym.tojson()).infer_shape(x=(1, 3, 1, 2))[1] == [(1, 3, 1, 2)]


def test_squeeze_refuses_an_axis_longer_than_one():
    with pytest.raises(ShapeError, match=r"squeeze: axis 1 of the input \(1, 3, 1, 2\) has size 3, expected 1"):
        mx.nd.squeeze(mx.nd.ones((1, 3, 1, 2)), axis=1)


def test_shape_array_and_size_array_are_int64_as_mxnet(ctx):
    x = mx.nd.ones((2, 3, 4), dtype="int32", ctx=ctx)
    shape, size = mx.nd.shape_array(x), mx.nd.size_array(x)
    assert shape.dtype == np.int64 and size.dtype == np.int64
    assert shape.asnumpy().tolist() == [2, 3, 4]
    assert size.asnumpy().tolist() == [24]


def test_shape_array_infers_its_shape_and_type_in_a_graph():
    net = sym.shape_array(sym.var("x"))
    assert net.infer_shape(x=(2, 3))[1] == [(2,)]
    assert net.infer_type(x="float32")[1] == [np.int64]

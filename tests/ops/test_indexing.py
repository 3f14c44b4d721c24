"""Concat, SliceChannel, stack, slice, slice_axis, take, batch_take, one_hot, where."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import EngineError, OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal, check_forward, check_gradient

RNG = np.random.default_rng(11)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_concat_matches_numpy(dim, ctx):
    arrays = [rand(2, 3, 4), rand(2, 3, 4), rand(2, 3, 4)]
    check_forward("Concat", arrays, {"dim": dim}, lambda *a: np.concatenate(a, axis=dim), ctx=ctx)


def test_concat_default_dim_is_one_and_alias_works():
    a, b = rand(2, 3), rand(2, 5)
    out = mx.nd.concat(mx.nd.array(a), mx.nd.array(b))
    np.testing.assert_array_equal(out.asnumpy(), np.concatenate([a, b], axis=1))


def test_concat_gradient_cuts_output_gradient_into_inputs():
    check_gradient("Concat", [rand(2, 3), rand(2, 1), rand(2, 2)], {"dim": 1})


def test_concat_rejects_mismatched_other_axes():
    with pytest.raises(
        ShapeError,
        match=r"Concat: shape of 'arg1' is \(3, 2\), expected \(2, _\) \(inputs must agree on every axis but dim=1\)",
    ):
        mx.nd.Concat(mx.nd.array(rand(2, 3)), mx.nd.array(rand(3, 2)), dim=1)


def test_concat_infers_one_missing_input_size_from_the_output():
    infer = registry.get("Concat")._infer_shape
    in_shapes, out, _ = infer({"dim": 1, "num_args": 2}, [(2, 3), None], [], out_shapes=[(2, 7)])
    assert in_shapes == [(2, 3), (2, 4)] and out == [(2, 7)]


def test_concat_fills_unknown_dims_from_other_inputs():
    in_shapes, out, _ = registry.get("Concat").infer_shape({"dim": 0, "num_args": 2}, [(2, 0), (1, 5)])
    assert in_shapes == [(2, 5), (1, 5)] and out == [(3, 5)]


@pytest.mark.parametrize("axis, squeeze", [(1, False), (0, False), (-1, False), (0, True)])
def test_slice_channel_splits_evenly(axis, squeeze, ctx):
    x = rand(3, 6, 3)
    n = x.shape[axis] if squeeze else 3

    def reference(a):
        parts = np.split(a, n, axis=axis)
        return [p.squeeze(axis) for p in parts] if squeeze else parts

    params = {"num_outputs": n, "axis": axis, "squeeze_axis": squeeze}
    check_forward("SliceChannel", [x], params, reference, ctx=ctx)
    check_gradient("split", [x], params)


def test_slice_channel_rejects_uneven_split():
    with pytest.raises(ShapeError, match=r"SliceChannel: size 5 of axis 1 in \(2, 5\) does not divide into 2 outputs"):
        mx.nd.SliceChannel(mx.nd.array(rand(2, 5)), num_outputs=2)


def test_slice_channel_infers_input_from_outputs():
    infer = registry.get("SliceChannel")._infer_shape
    attrs = {"num_outputs": 3, "axis": 1, "squeeze_axis": False}
    in_shapes, out, _ = infer(attrs, [None], [], out_shapes=[(2, 2), None, None])
    assert in_shapes == [(2, 6)] and out == [(2, 2)] * 3


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_matches_numpy(axis, ctx):
    arrays = [rand(2, 3), rand(2, 3)]
    check_forward("stack", arrays, {"axis": axis}, lambda *a: np.stack(a, axis=axis), ctx=ctx)
    check_gradient("stack", arrays, {"axis": axis})


def test_stack_rejects_different_shapes():
    with pytest.raises(ShapeError, match=r"stack: shape of 'arg1' is \(3, 2\), expected \(2, 3\)"):
        mx.nd.stack(mx.nd.array(rand(2, 3)), mx.nd.array(rand(3, 2)))


@pytest.mark.parametrize(
    "begin, end, step",
    [((1,), (3,), ()), ((0, 1), (2, None), ()), ((None, -1), (None, 0), (1, -1)), ((0, 0), (4, 5), (2, 2))],
)
def test_slice_matches_python_slicing(begin, end, step, ctx):
    x = rand(4, 5, 2)
    index = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step or (None,) * len(begin), strict=True))
    check_forward("slice", [x], {"begin": begin, "end": end, "step": step}, lambda a: a[index], ctx=ctx)
    check_gradient("crop", [x], {"begin": begin, "end": end, "step": step})


def test_slice_rejects_an_empty_selection():
    with pytest.raises(ShapeError, match="slice: begin=3, end=1, step=None selects nothing on axis 0 of size 4"):
        mx.nd.slice(mx.nd.array(rand(4, 5)), begin=(3,), end=(1,))


def test_slice_rejects_mismatched_begin_end():
    with pytest.raises(ShapeError, match="must have one entry per sliced axis"):
        mx.nd.slice(mx.nd.array(rand(4, 5)), begin=(0, 0), end=(1,))


def test_slice_parses_none_from_strings():
    out = mx.nd.slice(mx.nd.array(rand(4, 5)), begin="(1, None)", end="(None, 3)")
    assert out.shape == (3, 3)


@pytest.mark.parametrize("axis, begin, end", [(0, 1, 3), (1, -3, None), (-1, 0, 1)])
def test_slice_axis_matches_numpy(axis, begin, end, ctx):
    x = rand(4, 5, 2)
    index = (slice(None),) * (axis % 3) + (slice(begin, end),)
    params = {"axis": axis, "begin": begin, "end": end}
    check_forward("slice_axis", [x], params, lambda a: a[index], ctx=ctx)
    check_gradient("slice_axis", [x], params)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_matches_numpy(axis, mode, ctx):
    a = rand(4, 5, 3)
    indices = np.array([[0, 2], [7, -1]], dtype=np.float32)
    check_forward(
        "take",
        [a, indices],
        {"axis": axis, "mode": mode},
        lambda x, i: np.take(x, i.astype(np.int64), axis=axis, mode=mode),
        ctx=ctx,
    )


def test_take_gradient_scatter_adds_repeated_indices():
    a = rand(4, 3)
    indices = np.array([1, 1, 3, 0], dtype=np.float64)
    grads = check_gradient("take", [a, indices], {"axis": 0}, wrt=[0])
    assert grads[1] is None


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_backward_is_differentiable_in_its_output_gradient(axis, mode, ctx):
    # a second-order gradient of take (or of x[index_array]) goes through _backward_take
    like = rand(4, 3)
    indices = np.array([[1, 1], [5, -1]], dtype=np.float64)
    out_grad_shape = (2, 2, 3) if axis == 0 else (4, 2, 2)
    grads = check_gradient(
        "_backward_take", [rand(*out_grad_shape), indices, like], {"axis": axis, "mode": mode}, ctx=ctx, wrt=[0]
    )
    assert grads[1] is None and grads[2] is None


def test_take_raise_mode_reports_the_bad_index():
    out = mx.nd.take(mx.nd.array(rand(3, 2)), mx.nd.array([0, 5]), mode="raise")
    with pytest.raises(EngineError) as info:
        out.asnumpy()
    assert "index 5 is out of range for an axis of size 3" in str(info.value.__cause__)


def test_take_raise_mode_checks_a_fractional_index_before_truncating_it_as_mxnet():
    # MXNet 1.9.1 refuses 2.6 and -0.5 on an axis of size 3 (and takes 1.9 as 1)
    a = mx.nd.array(np.arange(6).reshape(3, 2))
    for index in (2.6, -0.5):
        with pytest.raises(EngineError) as info:
            mx.nd.take(a, mx.nd.array([index]), mode="raise").asnumpy()
        assert f"index {index} is out of range for an axis of size 3" in str(info.value.__cause__)
    assert mx.nd.take(a, mx.nd.array([1.9]), mode="raise").asnumpy().tolist() == [[2, 3]]


def test_batch_take_picks_one_element_per_row(ctx):
    a = rand(3, 4)
    idx = np.array([0, 3, 9], dtype=np.float32)
    check_forward("batch_take", [a, idx], {}, lambda x, i: x[np.arange(3), np.clip(i.astype(int), 0, 3)], ctx=ctx)


def test_batch_take_rejects_wrong_indices_length():
    with pytest.raises(ShapeError, match=r"batch_take: shape of 'indices' is \(2,\), expected \(3,\)"):
        mx.nd.batch_take(mx.nd.array(rand(3, 4)), mx.nd.array([0, 1]))


def test_one_hot_encodes_with_on_and_off_values(ctx):
    idx = np.array([[1, 0], [3, -1]], dtype=np.float32)
    params = {"depth": 3, "on_value": 5.0, "off_value": -1.0, "dtype": "int32"}

    def reference(i):
        return np.where(i[..., None].astype(int) == np.arange(3), 5, -1).astype(np.int32)

    out = check_forward("one_hot", [idx], params, reference, ctx=ctx)
    assert out[0].dtype == np.int32


@pytest.mark.parametrize("values", [{"on_value": float("nan")}, {"off_value": 1e20}])
def test_one_hot_refuses_a_value_an_integer_dtype_cannot_hold_at_the_call(values):
    # the kernel's cast refused it inside an EngineError at the wait (MXNet 1.9.1 writes INT_MIN)
    name = next(iter(values))
    with pytest.raises(OperatorError, match=rf"one_hot: {name}=.* with dtype=int32: the scalar .* has no value"):
        mx.nd.one_hot(mx.nd.array([1, 0]), 3, dtype="int32", **values)
    assert mx.nd.one_hot(mx.nd.array([1]), 2, dtype="float32", **values).shape == (1, 2)


def test_one_hot_values_are_cast_to_an_integer_dtype_as_mxnet_casts_them(ctx):
    # MXNet 1.9.1's static_cast: toward zero, wrapped to the width (an OverflowError from inside before)
    out = mx.nd.one_hot(mx.nd.array([1, 0], ctx=ctx), 3, dtype="uint8", on_value=300, off_value=-1)
    np.testing.assert_array_equal(out.asnumpy(), np.array([[255, 44, 255], [44, 255, 255]], np.uint8))
    out = mx.nd.one_hot(mx.nd.array([1], ctx=ctx), 2, dtype="int32", on_value=2.7, off_value=-1.5)
    np.testing.assert_array_equal(out.asnumpy(), np.array([[-1, 2]], np.int32))


def test_one_hot_into_a_given_out_overwrites_every_element(ctx):
    # a call that allocates its output takes it zero-filled and writes only the ones; one given
    # an out= buffer must still write the off values
    idx = mx.nd.array([2, 0, 7], ctx=ctx)
    out = mx.nd.full((3, 4), 9.0, ctx=ctx)
    mx.nd.one_hot(idx, depth=4, out=out)
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    fresh = mx.nd.one_hot(idx, depth=4, off_value=-2.0)
    np.testing.assert_array_equal(fresh.asnumpy(), [[-2, -2, 1, -2], [1, -2, -2, -2], [-2, -2, -2, -2]])


def test_one_hot_of_depth_zero_or_no_indices_is_empty(ctx):
    assert mx.nd.one_hot(mx.nd.array([1, 2], ctx=ctx), 0).shape == (2, 0)
    assert mx.nd.one_hot(mx.nd.zeros((0,), ctx=ctx), 3).asnumpy().shape == (0, 3)


def test_one_hot_of_changing_shapes_and_ranges(engine_name, ctx):
    # the host kernel keeps each (rows, depth)'s row starts; every call must still see its own
    from lazynd.ops import indexing

    calls = [((4,), 5), ((2, 3), 5), ((4,), 7), ((4,), 5), ((6,), 5)]
    rng = np.random.default_rng(3)
    for shape, depth in calls * 2:
        idx = rng.integers(-2, depth + 2, size=shape).astype(np.float32)
        got = mx.nd.one_hot(mx.nd.array(idx, ctx=ctx), depth=depth).asnumpy()
        want = (idx[..., None].astype(int) == np.arange(depth)).astype(np.float32)
        np.testing.assert_array_equal(got, want, err_msg=f"indices {idx.tolist()}, depth {depth}")
        in_range = idx[(idx >= 0) & (idx < depth)]
        assert got.sum() == in_range.size  # an index out of range leaves its row at off_value
    starts = indexing._row_starts(4, 5)
    assert starts.tolist() == [0, 5, 10, 15] and not starts.flags.writeable


def test_one_hot_dtypes_are_mxnets_choices():
    assert mx.nd.one_hot(mx.nd.array([1]), 3, dtype="int8").dtype == np.int8
    with pytest.raises(OperatorError, match="one_hot: invalid value 'bool' for parameter 'dtype'"):
        mx.nd.one_hot(mx.nd.array([1]), 3, dtype="bool")


def test_one_hot_of_depth_zero_is_empty_as_mxnet():
    # MXNet 1.9.1 gives an empty trailing axis; only a negative depth is refused
    out = mx.nd.one_hot(mx.nd.array([[4, 5, 1]]), depth=0, dtype="int32")
    assert out.shape == (1, 3, 0) and out.dtype == np.int32
    with pytest.raises(OperatorError, match="one_hot: depth=-1 must be at least 0"):
        mx.nd.one_hot(mx.nd.array([1]), depth=-1)


def test_where_selects_elementwise_and_by_row(ctx):
    x, y = rand(3, 4), rand(3, 4)
    cond = (rand(3, 4) > 0).astype(np.float32)
    check_forward("where", [cond, x, y], {}, lambda c, a, b: np.where(c != 0, a, b), ctx=ctx)
    rows = np.array([1, 0, 1], dtype=np.float32)
    check_forward("where", [rows, x, y], {}, lambda c, a, b: np.where(c[:, None] != 0, a, b), ctx=ctx)


def test_where_gradient_routes_to_x_or_y():
    cond = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.float64)
    grads = check_gradient("where", [cond, rand(2, 3), rand(2, 3)])
    assert grads[0] is None


def test_where_rejects_mismatched_condition():
    with pytest.raises(ShapeError, match=r"where: shape of 'condition' is \(2, 2\), expected \(3, 4\)"):
        mx.nd.where(mx.nd.array(rand(2, 2)), mx.nd.array(rand(3, 4)), mx.nd.array(rand(3, 4)))


def test_where_infer_type_gives_x_and_y_one_dtype_and_leaves_the_condition_its_own():
    # MXNet 1.9.1: y's dtype decides x's and the output's, never the condition's (it took y's)
    out = mx.sym.where(mx.sym.Variable("c"), mx.sym.Variable("a"), mx.sym.Variable("b"))
    assert out.infer_type(b="int32") == (None, None, None)
    arg_types, out_types, _ = out.infer_type(c="int32", b="float16")
    assert arg_types == [np.int32, np.float16, np.float16] and out_types == [np.float16]


def test_where_refuses_x_and_y_of_different_dtypes():
    # MXNet 1.9.1 refuses them too; the float32 y was written into a float16 output
    with pytest.raises(OperatorError, match="where: input 'y' has dtype float32, expected float16 like input 'x'"):
        mx.nd.where(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,)))


# -- slice_like: MXNet 1.9.1's shapes, values and gradients ------------------------------------------
@pytest.mark.parametrize(
    ("like", "axes", "expected"),
    [
        ((1, 2, 3), (), (1, 2, 3)),
        ((1, 2, 3), (1,), (2, 2, 4)),
        ((1, 2, 3), (0, -1), (1, 3, 3)),
        ((1, 2), (1,), (2, 2, 4)),
        ((2,), (0,), (2, 3, 4)),
    ],
)
def test_slice_like_takes_the_leading_corner_on_the_given_axes(like, axes, expected, ctx):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = mx.nd.slice_like(mx.nd.array(x, ctx=ctx), mx.nd.zeros(like, ctx=ctx), axes=axes)
    assert out.shape == expected
    assert_almost_equal(out.asnumpy(), x[tuple(slice(0, n) for n in expected)])


def test_slice_like_gradient_reaches_data_only():
    x = mx.nd.arange(24).reshape((2, 3, 4))
    like = mx.nd.ones((1, 2, 3), dtype="int32")
    x.attach_grad()
    like.attach_grad()
    with mx.autograd.record():
        y = mx.nd.slice_like(x, like, axes=(1, 2))
    y.backward()
    expected = np.zeros((2, 3, 4), dtype=np.float32)
    expected[:, :2, :3] = 1
    assert_almost_equal(x.grad.asnumpy(), expected)
    assert not like.grad.asnumpy().any()


@pytest.mark.parametrize(
    ("like", "axes", "message"),
    [
        ((3, 1, 1), (), r"slice_like: axis 0 of shape_like \(3, 1, 1\) has size 3, more than data's 2"),
        ((1, 2, 3), (5,), "slice_like: axes=5 is out of range"),
        ((2,), (), "slice_like: with no axes every axis is sliced"),
    ],
)
def test_slice_like_refuses_larger_or_mismatched_shapes_at_the_call(like, axes, message):
    with pytest.raises(ShapeError, match=message):
        mx.nd.slice_like(mx.nd.zeros((2, 3, 4)), mx.nd.zeros(like), axes=axes)


@pytest.mark.parametrize("strided", [False, True])
def test_take_gradient_sums_repeated_indices_into_an_out_array_over_its_old_values(strided):
    # the scatter-add goes straight into a contiguous gradient (zeroed first), through a buffer into a strided one
    rng = np.random.default_rng(1)
    head = rng.standard_normal((4, 5, 2)).astype(np.float32)
    indices = np.array([2, 2, -1, 7, 2], dtype=np.float32)  # wrap: 2, 2, 2, 1, 2
    want = np.zeros((4, 3, 2), np.float32)
    np.add.at(want, (slice(None), np.array([2, 2, 2, 1, 2]), slice(None)), head)
    base = mx.nd.ones((4, 3, 4) if strided else (4, 3, 2))
    out = base[:, :, ::2] if strided else base
    like = mx.nd.zeros((4, 3, 2))
    mx.nd._backward_take(mx.nd.array(head), mx.nd.array(indices), like, axis=1, mode="wrap", out=out)
    np.testing.assert_array_equal(out.asnumpy(), want)
    if strided:  # a view: the gradient lands in every other column of base, the others keep their ones
        np.testing.assert_array_equal(base.asnumpy()[:, :, ::2], want)
        np.testing.assert_array_equal(base.asnumpy()[:, :, 1::2], 1)

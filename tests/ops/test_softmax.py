"""softmax, log_softmax and SoftmaxActivation: forward vs NumPy, numerical gradients, stability."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError
from lazynd.testing import assert_almost_equal, check_forward, check_gradient


def np_softmax(x: np.ndarray, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    z = x / temperature
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_numpy_on_each_axis(ctx, rng, axis):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    check_forward("softmax", [x], {"axis": axis}, lambda a: np_softmax(a, axis), ctx=ctx, rtol=1e-5, atol=1e-6)


def test_softmax_temperature_divides_the_input(ctx, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    check_forward("softmax", [x], {"temperature": 2.5}, lambda a: np_softmax(a, -1, 2.5), ctx=ctx, rtol=1e-5, atol=1e-6)


def test_log_softmax_matches_numpy(ctx, rng):
    x = rng.standard_normal((3, 7)).astype(np.float64)
    check_forward("log_softmax", [x], {"axis": 1}, lambda a: np.log(np_softmax(a, 1)), ctx=ctx, rtol=1e-10, atol=1e-12)


def test_softmax_is_stable_for_huge_inputs(ctx):
    x = mx.nd.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1e30]], ctx=ctx)
    y = mx.nd.softmax(x).asnumpy()
    assert np.isfinite(y).all()
    assert_almost_equal(y, [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], atol=1e-7)
    assert np.isfinite(mx.nd.log_softmax(x).asnumpy()).all()


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_numerical_gradient(ctx, rng, axis):
    check_gradient("softmax", [rng.standard_normal((3, 4))], {"axis": axis}, ctx=ctx)


def test_softmax_numerical_gradient_with_temperature(ctx, rng):
    check_gradient("softmax", [rng.standard_normal((2, 5))], {"temperature": 0.7}, ctx=ctx)


@pytest.mark.parametrize("axis", [-1, 1])
def test_log_softmax_numerical_gradient(ctx, rng, axis):
    check_gradient("log_softmax", [rng.standard_normal((2, 3, 4))], {"axis": axis}, ctx=ctx)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2), (4,)])
def test_softmax_activation_instance_mode_normalises_the_last_axis_as_mxnet(ctx, rng, shape):
    # MXNet 1.9.1 views the data as 2-D (all but the last axis, the last): a (2, 3, 4) input sums to 1
    # over each of its 6 rows of 4, not over each of its 2 instances of 12 (which we computed)
    x = rng.standard_normal(shape).astype(np.float32)
    check_forward(
        "SoftmaxActivation", [x], {"mode": "instance"}, lambda a: np_softmax(a, -1), ctx=ctx, rtol=1e-5, atol=1e-6
    )


def test_softmax_activation_channel_mode_normalises_axis_1(ctx, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    check_forward(
        "SoftmaxActivation", [x], {"mode": "channel"}, lambda a: np_softmax(a, 1), ctx=ctx, rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("mode", ["instance", "channel"])
def test_softmax_activation_numerical_gradient(ctx, rng, mode):
    check_gradient("SoftmaxActivation", [rng.standard_normal((2, 3, 2))], {"mode": mode}, ctx=ctx)


def test_softmax_axis_out_of_range_is_an_error():
    with pytest.raises(OperatorError, match="axis 2 is out of range"):
        mx.nd.softmax(mx.nd.ones((2, 3)), axis=2)


def test_softmax_activation_rejects_an_unknown_mode():
    with pytest.raises(OperatorError, match="mode"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="pixel")


@pytest.mark.parametrize("temperature", [float("nan"), float("inf")])
def test_softmax_rejects_a_non_finite_temperature(temperature):
    # MXNet 1.9.1 refuses these, and takes 0 and negative temperatures (tests/ops/test_float_param_ranges.py)
    with pytest.raises(OperatorError, match="temperature"):
        mx.nd.softmax(mx.nd.ones((2, 3)), temperature=temperature)


def test_softmax_activation_channel_mode_needs_two_dimensions():
    with pytest.raises(OperatorError, match="at least 2 dimensions"):
        mx.nd.SoftmaxActivation(mx.nd.ones((3,)), mode="channel")


# -- the last axis on the GPU: rows held in registers, or long rows cut into pieces ----------------------
# (rows, n): a row shorter than a warp, groups of several rows per block with a partial last block, every
# elements-per-thread kernel (1 to 16), rows read 16 bytes at a time and rows whose length is no multiple
# of 4 (read an element at a time), blocks of 256 threads up to rows of 4096 and one past it, wider groups
# (a block of up to 1024 threads a row), and past the forward pass's register limit (REGISTER_FORWARD_MAX)
# and the gradient's (MAX_ROW_THREADS * MAX_PER_THREAD)
ROW_SHAPES = [
    (70, 10),
    (9, 1),
    (4, 2),
    (5, 33),
    (6, 12),
    (3, 1000),
    (3, 2000),
    (2, 4096),
    (3, 4097),
    (2, 9000),
    (100, 4100),
    (2, 20000),
    (2, 32768),
]


@pytest.mark.parametrize(("rows", "n"), ROW_SHAPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_rows_of_every_length_matches_numpy(ctx, rng, rows, n, log):
    x = (rng.standard_normal((rows, n)) * 4).astype(np.float32)
    want = np_softmax(x.astype(np.float64), -1, 0.5)
    op = mx.nd.log_softmax if log else mx.nd.softmax
    got = op(mx.nd.array(x, ctx=ctx), temperature=0.5).asnumpy()
    assert_almost_equal(got, np.log(want) if log else want, rtol=1e-4, atol=1e-5 if log else 1e-7)


@pytest.mark.parametrize(("rows", "n"), ROW_SHAPES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_gradient_of_rows_of_every_length_matches_the_formula(ctx, rng, rows, n, log):
    x, dy = rng.standard_normal((rows, n)), rng.standard_normal((rows, n))
    y = np.log(np_softmax(x, -1)) if log else np_softmax(x, -1)
    # softmax: dx = y (dy - sum(dy y)) / T;  log: dx = (dy - exp(y) sum(dy)) / T
    if log:
        want = (dy - np.exp(y) * dy.sum(-1, keepdims=True)) / 0.5
    else:
        want = y * (dy - (dy * y).sum(-1, keepdims=True)) / 0.5
    backward = mx.nd._backward_log_softmax if log else mx.nd._backward_softmax
    got = backward(mx.nd.array(dy, ctx=ctx, dtype="float64"), mx.nd.array(y, ctx=ctx, dtype="float64"), temperature=0.5)
    assert_almost_equal(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


def test_every_register_layout_the_host_picks_has_its_forward_kernels():
    # softmax.cu instantiates one forward kernel per (group, elements a thread) and access width: every
    # layout register_layout gives for rows up to the path's limit has them (an element at a time, and
    # 16 bytes at a time where a thread holds enough), and no kernel is left that no layout uses
    import re
    from pathlib import Path

    from lazynd.ops import softmax_gpu as softmax_module

    code = (Path(softmax_module.__file__).parent.parent / "backend/cuda/kernels/softmax.cu").read_text()
    scalar = {
        (int(g), int(k)) for g, k in re.findall(r"LAZYND_SOFTMAX_ROWS_(?:KERNEL|BOTH)\(T, SUFFIX, (\d+), (\d+),", code)
    }
    vector = {(int(g), int(k)) for g, k in re.findall(r"LAZYND_SOFTMAX_ROWS_BOTH\(T, SUFFIX, (\d+), (\d+),", code)}
    limit = softmax_module.REGISTER_FORWARD_MAX
    picked = {softmax_module.register_layout(n) for n in range(1, limit + 1)}
    assert scalar == picked
    assert vector == {(g, k) for g, k in picked if k >= softmax_module.VECTOR_MIN_PER_THREAD}


# every forward kernel: rows of 1 to 8192 (each layout register_layout gives; longer ones a block a row
# or pieces), 16 bytes at a time where
# the length allows and an element at a time one short of it, in both precisions
@pytest.mark.parametrize("n", [2**i for i in range(16)] + [2**i - 1 for i in range(2, 16)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_of_every_register_layout_matches_numpy(ctx, rng, n, dtype):
    x = rng.standard_normal((3, n)) * 4
    x[1, 1::3] = -np.inf  # -inf elements get 0
    want = np_softmax(x, -1, 0.5)
    tolerance = {"rtol": 1e-4, "atol": 1e-7} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-14}
    got = mx.nd.softmax(mx.nd.array(x, ctx=ctx, dtype=dtype), temperature=0.5).asnumpy()
    assert_almost_equal(got, want, **tolerance)
    with np.errstate(divide="ignore"):
        logged = mx.nd.log_softmax(mx.nd.array(x, ctx=ctx, dtype=dtype), temperature=0.5).asnumpy()
        np.testing.assert_allclose(
            logged, np.log(want), rtol=tolerance["rtol"], atol=1e-5 if dtype == "float32" else 1e-12
        )


@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_rows_at_an_address_off_the_16_byte_grid_matches_numpy(ctx, rng, log):
    # a view that starts one element in: its rows cannot be read 16 bytes at a time (vector_width gives 1)
    flat = rng.standard_normal(1 + 12 * 64).astype(np.float32)
    x = mx.nd.array(flat, ctx=ctx)[1:].reshape((12, 64))
    op = mx.nd.log_softmax if log else mx.nd.softmax
    want = np_softmax(flat[1:].reshape(12, 64).astype(np.float64), -1)
    assert_almost_equal(op(x).asnumpy(), np.log(want) if log else want, rtol=1e-4, atol=1e-6)
    dy = mx.nd.array(rng.standard_normal(1 + 12 * 64), ctx=ctx, dtype="float32")[1:].reshape((12, 64))
    y = mx.nd.array(want, ctx=ctx, dtype="float32")
    got = mx.nd._backward_softmax(dy, y).asnumpy()
    d = dy.asnumpy().astype(np.float64)
    assert_almost_equal(got, want * (d - (d * want).sum(-1, keepdims=True)), rtol=1e-4, atol=1e-6)


def _assert_long_rows_forward_matches_numpy(ctx, x, dtype, log):
    """softmax (or log_softmax) of ``x`` at temperature 0.5 on ``ctx`` in ``dtype`` against NumPy's in
    float64; gives NumPy's softmax and the tolerance used."""
    want = np_softmax(x, -1, 0.5)
    op = mx.nd.log_softmax if log else mx.nd.softmax
    got = op(mx.nd.array(x, ctx=ctx, dtype=dtype), temperature=0.5).asnumpy()
    tolerance = {"rtol": 1e-3, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    with np.errstate(divide="ignore"):
        assert_almost_equal(got, np.log(want) if log else want, **tolerance)
    return want, tolerance


# long rows cut into pieces: several a row where the rows are fewer than the GPU's multiprocessors (the
# GPU said to have four); with one, the forward pass takes a block a row and the gradient two pieces
PIECE_CASES = [("float32", 40000, 4), ("float64", 33000, 4), ("float64", 70000, 1)]


@pytest.mark.parametrize(("dtype", "n", "multiprocessors"), PIECE_CASES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_long_rows_in_pieces_matches_numpy(ctx, rng, monkeypatch, dtype, n, multiprocessors, log):
    from lazynd.ops import softmax_gpu as softmax_module

    assert softmax_module.gradient_path(n) == "pieces"
    assert softmax_module.forward_path(n, 3, multiprocessors) == ("pieces" if multiprocessors > 3 else "rows")
    monkeypatch.setattr(softmax_module, "multiprocessor_count", lambda device_id: multiprocessors)
    x, dy = rng.standard_normal((3, n)) * 4, rng.standard_normal((3, n))
    x[1, ::7] = -np.inf  # -inf elements get 0
    want, tolerance = _assert_long_rows_forward_matches_numpy(ctx, x, dtype, log)
    y = np.log(want) if log else want
    if log:
        want_dx = (dy - want * dy.sum(-1, keepdims=True)) / 0.5
    else:
        want_dx = y * (dy - (dy * y).sum(-1, keepdims=True)) / 0.5
    backward = mx.nd._backward_log_softmax if log else mx.nd._backward_softmax
    got_dx = backward(mx.nd.array(dy, ctx=ctx, dtype=dtype), mx.nd.array(y, ctx=ctx, dtype=dtype), temperature=0.5)
    assert_almost_equal(got_dx.asnumpy(), want_dx, **tolerance)


# longer rows, many of them: a block a row, the row read twice (the GPU said to have one
# multiprocessor, so that four rows are "many"); 16 bytes at a time, and an element at a time where
# the length is odd
@pytest.mark.parametrize(
    ("dtype", "n"), [("float32", 32768), ("float32", 16385), ("float64", 40000), ("float64", 20001)]
)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_of_many_long_rows_a_block_each_matches_numpy(ctx, rng, monkeypatch, dtype, n, log):
    from lazynd.ops import softmax_gpu as softmax_module

    monkeypatch.setattr(softmax_module, "multiprocessor_count", lambda device_id: 1)
    rows = 4 * softmax_module.ROW_BLOCKS_PER_MULTIPROCESSOR
    assert softmax_module.forward_path(n, rows, 1) == "rows"
    x = rng.standard_normal((rows, n)) * 4
    x[1, ::7] = -np.inf  # -inf elements get 0
    x[2, n // 2] = 50.0  # one element far above the rest: the running sums rescale
    _assert_long_rows_forward_matches_numpy(ctx, x, dtype, log)


@pytest.mark.parametrize("n", [6, 5000, 40000])
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy's, on the CPU
@pytest.mark.parametrize("multiprocessors", [1, 200])  # long rows: a block a row, or pieces
def test_softmax_rows_with_nan_or_infinities_follow_numpy(ctx, monkeypatch, n, multiprocessors):
    from lazynd.ops import softmax_gpu as softmax_module

    monkeypatch.setattr(softmax_module, "multiprocessor_count", lambda device_id: multiprocessors)
    x = np.zeros((4, n), np.float64)
    x[0, 1] = np.nan  # a NaN poisons its row
    x[1, :] = -np.inf  # a row of -inf has no softmax: NaN
    x[2, ::2] = -np.inf  # -inf elements get 0
    x[3, 0] = 1e300
    with np.errstate(invalid="ignore"):
        want = np_softmax(x, -1)
    got = mx.nd.softmax(mx.nd.array(x, ctx=ctx, dtype="float64")).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_softmax_use_length_normalises_each_line_s_first_positions_as_mxnet(ctx):
    x = mx.nd.array(np.arange(12).reshape(3, 4) / 4, ctx=ctx)
    length = mx.nd.array([2, 0, 4], ctx=ctx, dtype="int32")
    # values from MXNet 1.9.1 (use_length was an 'unknown parameter'); a line of length 0 is all 0
    want = [[0.4378235, 0.5621765, 0, 0], [0, 0, 0, 0], [0.1652962, 0.2122445, 0.2725273, 0.3499320]]
    assert_almost_equal(mx.nd.softmax(x, length, use_length=True).asnumpy(), want, rtol=1e-5, atol=1e-7)
    by_column = mx.nd.softmax(x, mx.nd.array([1, 3, 2, 2], ctx=ctx, dtype="int32"), use_length=True, axis=0)
    want = [[1.0, 0.0900306, 0.2689414, 0.2689414], [0, 0.2447285, 0.7310586, 0.7310586], [0, 0.6652409, 0, 0]]
    assert_almost_equal(by_column.asnumpy(), want, rtol=1e-5, atol=1e-7)


def test_softmax_use_length_gradient_and_checks(ctx):
    x = mx.nd.array(np.arange(12).reshape(3, 4) / 4, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.softmax(x, mx.nd.array([2, 1, 3], ctx=ctx, dtype="int32"), use_length=True)
    y.backward(mx.nd.array(np.arange(12).reshape(3, 4), ctx=ctx))
    want = [[-0.2461341, 0.2461341, 0, 0], [0, 0, 0, 0], [-0.2962192, -0.0538572, 0.350075, 0]]  # MXNet 1.9.1
    assert_almost_equal(x.grad.asnumpy(), want, rtol=1e-4, atol=1e-6)
    with pytest.raises(OperatorError, match="softmax: input 'length' has dtype float32, expected an integer dtype"):
        mx.nd.softmax(x, mx.nd.array([1, 2, 3], ctx=ctx), use_length=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_integers_is_a_clear_error(name, ctx):
    with pytest.raises(OperatorError, match=f"{name}: input 'data' has dtype int32, expected one of float"):
        getattr(mx.nd, name)(mx.nd.array([[1, 2]], ctx=ctx, dtype="int32"))


def test_softmin_with_axis_and_temperature_gives_mxnets_values_and_gradient():
    # MXNet 1.9.1: softmin(x, axis=0, temperature=2), backward with the head below
    x = mx.nd.array([[1, 2, 3], [-1, 0, 5]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.softmin(x, axis=0, temperature=2.0)
    y.backward(mx.nd.array([[1, 2, 3], [0.5, -1, 2]]))
    low, high = 0.26894143, 0.7310586
    assert_almost_equal(y.asnumpy(), np.array([[low, low, high], [high, high, low]], dtype=np.float32), 1e-6)
    expected_grad = np.array([[-0.049152985, -0.2949179, -0.09830596], [0.049152985, 0.2949179, 0.09830596]])
    assert_almost_equal(x.grad.asnumpy(), expected_grad.astype(np.float32), 1e-5, 1e-7)


def test_softmin_defaults_to_the_last_axis():
    out = mx.nd.softmin(mx.nd.array([[1, 2, 3], [-1, 0, 5]]))
    expected = [[0.66524094, 0.24472848, 0.09003057], [0.72973627, 0.26845497, 0.0018088354]]
    assert_almost_equal(out.asnumpy(), np.array(expected, dtype=np.float32), 1e-6)


# MXNet 1.9.1: name(x, dtype='float64', temperature=2) of float32 x, backward with the float64 head below;
# MXNet computes in float32 (the input's dtype), lazynd in float64: equal to float32's precision
_DTYPE_X = [[1, 2, 3.5], [-1, 0, 5]]
_DTYPE_HEAD = [[1, 2, 3], [0.5, -1, 2]]
_DTYPE_MXNET = {
    "softmax": (
        [[0.16289128, 0.26856232, 0.56854641], [0.04398648, 0.07252145, 0.88349205]],
        [[-0.11448449, -0.05447184, 0.16895632], [-0.02675381, -0.09850066, 0.12525447]],
    ),
    "log_softmax": (
        [[-1.81467223, -1.31467223, -0.56467229], [-3.12387300, -2.62387300, -0.12387295]],
        [[0.01132613, 0.19431299, -0.20563930], [0.21701014, -0.55439109, 0.33738095]],
    ),
    "softmin": (
        [[0.52825212, 0.32040113, 0.15134677], [0.60374892, 0.36619222, 0.03005889]],
        [[0.16457555, -0.06038045, -0.10419509], [-0.15220509, 0.18232711, -0.03012201]],
    ),
}


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_dtype_sets_the_output_dtype_and_the_gradient_keeps_the_input_s(ctx, name):
    x = mx.nd.array(_DTYPE_X, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x, dtype="float64", temperature=2.0)
    y.backward(mx.nd.array(_DTYPE_HEAD, ctx=ctx, dtype="float64"))
    want_y, want_grad = _DTYPE_MXNET[name]
    assert y.dtype == np.float64 and x.grad.dtype == np.float32
    assert_almost_equal(y.asnumpy(), np.array(want_y), rtol=1e-6, atol=1e-7)
    assert_almost_equal(x.grad.asnumpy(), np.array(want_grad, np.float32), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("shape", "axis"), [((3, 7), -1), ((2, 5000), -1), ((4, 3, 5), 1)])
@pytest.mark.parametrize(
    ("in_dtype", "out_dtype"), [("float32", "float64"), ("float64", "float32"), ("float32", "float16")]
)
@pytest.mark.parametrize("log", [False, True])
def test_dtype_on_every_kernel_path_matches_numpy(ctx, rng, shape, axis, in_dtype, out_dtype, log):
    # short rows, long rows (cut into pieces on the GPU) and an inner axis: each a kernel of its own
    x = rng.standard_normal(shape).astype(in_dtype)
    head = rng.standard_normal(shape)
    x_nd = mx.nd.array(x, ctx=ctx, dtype=in_dtype)
    x_nd.attach_grad()
    with mx.autograd.record():
        y = (mx.nd.log_softmax if log else mx.nd.softmax)(x_nd, axis=axis, dtype=out_dtype)
    y.backward(mx.nd.array(head, ctx=ctx, dtype=out_dtype))
    probs = np_softmax(x.astype(np.float64), axis)
    head = head.astype(out_dtype).astype(np.float64)
    if log:
        want_y, want_grad = np.log(probs), head - probs * head.sum(axis=axis, keepdims=True)
    else:
        want_y, want_grad = probs, probs * (head - (head * probs).sum(axis=axis, keepdims=True))
    assert y.dtype == np.dtype(out_dtype) and x_nd.grad.dtype == np.dtype(in_dtype)
    tolerance = 2e-3 if "float16" in (in_dtype, out_dtype) else 1e-5
    assert_almost_equal(y.asnumpy().astype(np.float64), want_y, rtol=tolerance, atol=tolerance)
    assert_almost_equal(x_nd.grad.asnumpy().astype(np.float64), want_grad, rtol=tolerance, atol=tolerance)


def test_dtype_with_use_length_gives_mxnets_values(ctx):
    x = mx.nd.array(_DTYPE_X, ctx=ctx)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.softmax(x, mx.nd.array([2, 3], ctx=ctx, dtype="int32"), use_length=True, dtype="float64")
    y.backward(mx.nd.array(_DTYPE_HEAD, ctx=ctx, dtype="float64"))
    assert y.dtype == np.float64 and x.grad.dtype == np.float32
    want_y = [[0.26894143, 0.73105860, 0], [0.00245612, 0.00667641, 0.99086750]]  # MXNet 1.9.1
    want_grad = [[-0.19661194, 0.19661193, 0], [-0.00362593, -0.01987092, 0.02349679]]
    assert_almost_equal(y.asnumpy(), np.array(want_y), rtol=1e-6, atol=1e-7)
    assert_almost_equal(x.grad.asnumpy(), np.array(want_grad, np.float32), rtol=1e-5, atol=1e-7)


def test_dtype_must_be_a_float_dtype():
    with pytest.raises(OperatorError, match="softmax: invalid value 'int32' for parameter 'dtype'"):
        mx.nd.softmax(mx.nd.ones((2, 2)), dtype="int32")


def test_symbolic_softmax_dtype_infers_binds_and_saves(ctx):
    net = mx.sym.log_softmax(mx.sym.var("x"), dtype="float64")
    assert net.infer_type(x="float32")[1] == [np.float64]  # MXNet 1.9.1 too
    assert '"dtype": "float64"' in net.tojson()
    assert mx.sym.load_json(net.tojson()).infer_type(x="float32")[1] == [np.float64]
    exe = net.simple_bind(ctx, x=(2, 3))
    assert exe.arg_arrays[0].dtype == np.float32 and exe.grad_arrays[0].dtype == np.float32
    exe.forward(is_train=True, x=mx.nd.array(_DTYPE_X, ctx=ctx))
    assert exe.outputs[0].dtype == np.float64
    exe.backward(mx.nd.ones((2, 3), ctx=ctx, dtype="float64"))
    probs = np_softmax(np.array(_DTYPE_X, np.float64))
    assert_almost_equal(exe.grad_arrays[0].asnumpy(), (1 - 3 * probs).astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("call", "shape"),
    [
        (lambda x: mx.nd.softmax(x), (3, 0)),
        (lambda x: mx.nd.log_softmax(x), (3, 0)),
        (lambda x: mx.nd.softmin(x, axis=0), (0, 4)),
        (lambda x: mx.nd.SoftmaxActivation(x), (3, 0)),
        (lambda x: mx.nd.SoftmaxOutput(x, mx.nd.zeros((0,))), (0, 4)),
    ],
    ids=["softmax", "log_softmax", "softmin-empty-axis", "SoftmaxActivation", "SoftmaxOutput-empty-batch"],
)
def test_softmax_over_a_zero_size_array_is_an_empty_array(call, shape):
    x = mx.nd.ones(shape)
    x.attach_grad()
    with mx.autograd.record():
        y = call(x)
    y.backward()
    assert y.asnumpy().shape == shape  # a max along an empty axis has no value: nothing to compute
    assert x.grad.asnumpy().shape == shape

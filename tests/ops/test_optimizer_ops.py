"""Fused optimizer updates: in place on weight and states, against NumPy reference formulas."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal

COMMON = {"lr": 0.1, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 1.0}


def clipped(grad: np.ndarray, clip: float) -> np.ndarray:
    return np.clip(grad, -clip, clip) if clip >= 0 else grad


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


def steps(rng: np.random.Generator, shape=(3, 4), n=3) -> tuple[np.ndarray, list[np.ndarray]]:
    return rng.standard_normal(shape).astype(np.float32), [
        rng.standard_normal(shape).astype(np.float32) * 3 for _ in range(n)
    ]


@pytest.mark.parametrize("clip", [1.0, -1.0])
def test_sgd_update_matches_reference_in_place(ctx, rng, clip):
    w0, grads = steps(rng)
    params = dict(COMMON, clip_gradient=clip)
    weight, ref = mx.nd.array(w0, ctx=ctx), w0.astype(np.float64)
    for g in grads:
        result = mx.nd.sgd_update(weight, mx.nd.array(g, ctx=ctx), out=weight, **params)
        ref = (1 - 0.1 * 0.01) * ref - 0.1 * clipped(0.5 * g, clip)
    assert result is weight
    assert_almost_equal(weight.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_sgd_update_without_out_leaves_the_weight_alone(rng):
    w0, grads = steps(rng, n=1)
    weight = mx.nd.array(w0)
    new = mx.nd.sgd_update(weight, mx.nd.array(grads[0]), lr=0.1)
    assert_almost_equal(weight.asnumpy(), w0)
    assert_almost_equal(new.asnumpy(), w0 - 0.1 * grads[0], rtol=1e-6)


def test_sgd_mom_update_updates_weight_and_momentum(ctx, rng):
    w0, grads = steps(rng)
    weight, mom = mx.nd.array(w0, ctx=ctx), mx.nd.zeros(w0.shape, ctx=ctx)
    ref_w, ref_m = w0.astype(np.float64), np.zeros(w0.shape)
    for g in grads:
        mx.nd.sgd_mom_update(weight, mx.nd.array(g, ctx=ctx), mom, out=weight, momentum=0.9, **COMMON)
        ref_m = 0.9 * ref_m - 0.1 * 0.01 * ref_w - 0.1 * clipped(0.5 * g, 1.0)
        ref_w = ref_w + ref_m
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)
    assert_almost_equal(mom.asnumpy(), ref_m, rtol=1e-5, atol=1e-6)


def test_adam_update_updates_weight_mean_and_var(ctx, rng):
    w0, grads = steps(rng)
    weight, mean, var = mx.nd.array(w0, ctx=ctx), mx.nd.zeros(w0.shape, ctx=ctx), mx.nd.zeros(w0.shape, ctx=ctx)
    ref_w, ref_m, ref_v = w0.astype(np.float64), np.zeros(w0.shape), np.zeros(w0.shape)
    for g in grads:
        mx.nd.adam_update(
            weight, mx.nd.array(g, ctx=ctx), mean, var, out=weight, beta1=0.8, beta2=0.99, epsilon=1e-6, **COMMON
        )
        eff = clipped(0.5 * g + 0.01 * ref_w, 1.0)
        ref_m = 0.8 * ref_m + 0.2 * eff
        ref_v = 0.99 * ref_v + 0.01 * eff**2
        ref_w = ref_w - 0.1 * ref_m / (np.sqrt(ref_v) + 1e-6)
    assert_almost_equal(mean.asnumpy(), ref_m, rtol=1e-5, atol=1e-6)
    assert_almost_equal(var.asnumpy(), ref_v, rtol=1e-5, atol=1e-7)
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-4, atol=1e-5)


def test_adam_update_takes_one_minus_beta_in_float32_as_mxnet(ctx):
    # MXNet 1.9.1, three adam_update(lr=0.01) steps of these arrays: its kernel computes 1 - beta
    # in the weight's float32 (1 - 0.999 = 0.00099998713, not 0.001); 1e-5 apart before
    weight, grad = mx.nd.array([0.5, -1.0, 2.0], ctx=ctx), mx.nd.array([0.1, 0.2, -0.3], ctx=ctx)
    mean, var = mx.nd.zeros((3,), ctx=ctx), mx.nd.zeros((3,), ctx=ctx)
    for _ in range(3):
        mx.nd.adam_update(weight, grad, mean, var, lr=0.01, out=weight)
    np.testing.assert_allclose(var.asnumpy(), [2.9969625757e-05, 1.1987850303e-04, 2.6972661726e-04], rtol=2e-7)
    np.testing.assert_allclose(mean.asnumpy(), [0.027100007981, 0.054200015962, -0.081300020218], rtol=2e-7)
    np.testing.assert_allclose(weight.asnumpy(), [0.37637838721, -1.12362170219, 2.12362170219], rtol=2e-7)


@pytest.mark.parametrize("clip_weights", [-1.0, 0.5])
def test_rmsprop_update_updates_weight_and_state(ctx, rng, clip_weights):
    w0, grads = steps(rng)
    weight, state = mx.nd.array(w0, ctx=ctx), mx.nd.zeros(w0.shape, ctx=ctx)
    ref_w, ref_n = w0.astype(np.float64), np.zeros(w0.shape)
    for g in grads:
        mx.nd.rmsprop_update(
            weight,
            mx.nd.array(g, ctx=ctx),
            state,
            out=weight,
            gamma1=0.9,
            epsilon=1e-6,
            clip_weights=clip_weights,
            **COMMON,
        )
        eff = clipped(0.5 * g + 0.01 * ref_w, 1.0)
        ref_n = 0.1 * eff**2 + 0.9 * ref_n
        ref_w = clipped(ref_w - 0.1 * eff / np.sqrt(ref_n + 1e-6), clip_weights)
    assert_almost_equal(state.asnumpy(), ref_n, rtol=1e-5, atol=1e-7)
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-4, atol=1e-5)


def test_float64_parameters_stay_float64(rng):
    w0, grads = steps(rng, n=1)
    weight = mx.nd.array(w0.astype(np.float64), dtype="float64")
    mx.nd.sgd_update(weight, mx.nd.array(grads[0].astype(np.float64), dtype="float64"), out=weight, lr=0.5)
    assert weight.dtype == np.float64
    assert_almost_equal(weight.asnumpy(), w0.astype(np.float64) - 0.5 * grads[0], rtol=1e-7)


@pytest.mark.parametrize(
    ("name", "states"), [("sgd_mom_update", ("mom",)), ("adam_update", ("mean", "var")), ("rmsprop_update", ("n",))]
)
def test_state_inputs_are_declared_as_written(name, states):
    op = registry.get(name)
    names = op.input_names(op.parse({"lr": 0.1}))
    assert [names[i] for i in op.mutates] == list(states)


def test_momentum_update_followed_by_a_read_sees_the_new_state():
    weight, mom = mx.nd.ones((1000,)), mx.nd.zeros((1000,))
    for _ in range(5):
        mx.nd.sgd_mom_update(weight, mx.nd.ones((1000,)), mom, out=weight, lr=0.1, momentum=0.5)
    # with lr=0.1 and momentum 0.5 the velocity approaches -0.2
    assert_almost_equal(mom.asnumpy(), np.full(1000, -0.1 * (1 - 0.5**5) / 0.5))


def test_missing_learning_rate_is_an_error():
    with pytest.raises(OperatorError, match="required parameter 'lr'"):
        mx.nd.sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,)))


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("adam_update", {"beta1": 1.5}, "beta1"),
        ("adam_update", {"epsilon": -1}, "epsilon"),
        ("rmsprop_update", {"gamma1": -0.1}, "gamma1"),
        ("sgd_mom_update", {"momentum": 2}, "momentum"),
        ("sgd_update", {"lr": -0.1}, "lr"),
    ],
)
def test_hyperparameters_outside_the_usual_range_run_as_in_mxnet(name, params, message):
    # MXNet 1.9.1 bounds none of these (tests/ops/test_float_param_ranges.py holds its answers)
    n_inputs = len(registry.get(name).input_names({}))
    arrays = [mx.nd.ones((2,)) for _ in range(n_inputs)]
    out = getattr(mx.nd, name)(*arrays, **{"lr": 0.1, **params})
    assert out.shape == (2,) and message in registry.get(name).params


def test_gradient_of_another_shape_is_an_error():
    with pytest.raises(ShapeError, match="grad"):
        mx.nd.sgd_update(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)), lr=0.1)


def _reference_step(name: str, w: np.ndarray, g: np.ndarray, states: list[np.ndarray], p: dict) -> np.ndarray:
    """One float64 step of ``name`` (MXNet's formulas); updates ``states`` in place, returns the weight."""
    if name == "sgd_update":
        return (1 - p["lr"] * p["wd"]) * w - p["lr"] * clipped(p["rescale_grad"] * g, p["clip_gradient"])
    if name == "sgd_mom_update":
        eff = clipped(p["rescale_grad"] * g, p["clip_gradient"])
        states[0][:] = p["momentum"] * states[0] - p["lr"] * p["wd"] * w - p["lr"] * eff
        return w + states[0]
    eff = clipped(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"])
    if name == "adam_update":
        states[0][:] = 0.9 * states[0] + 0.1 * eff
        states[1][:] = 0.999 * states[1] + 0.001 * eff**2
        return w - p["lr"] * states[0] / (np.sqrt(states[1]) + 1e-8)
    states[0][:] = 0.05 * eff**2 + 0.95 * states[0]
    return w - p["lr"] * eff / np.sqrt(states[0] + 1e-8)


UPDATES = [
    ("sgd_update", 0, {}),
    ("sgd_mom_update", 1, {"momentum": 0.9}),
    ("adam_update", 2, {}),
    ("rmsprop_update", 1, {}),
]


@pytest.mark.parametrize(("name", "n_states", "extra"), UPDATES)
@pytest.mark.parametrize("clip", [0.05, -1.0])
def test_update_of_a_parameter_spanning_several_cpu_blocks_matches_reference(
    rng, monkeypatch, name, n_states, extra, clip
):
    # 2.3 blocks of the CPU kernel: every block, and the short last one, must get the whole update
    # (blocks of 256 KiB here: the arithmetic is the same at any block size, and a smaller array
    # keeps the test quick)
    from lazynd.ops import optimizer_ops

    monkeypatch.setattr(optimizer_ops, "BLOCK_BYTES", 1 << 18)
    size = int(2.3 * optimizer_ops.BLOCK_BYTES / 4)
    w0 = rng.standard_normal(size).astype(np.float32)
    params = {"lr": 0.05, "wd": 0.01, "rescale_grad": 0.25, "clip_gradient": clip, **extra}
    weight = mx.nd.array(w0)
    states = [mx.nd.zeros((size,)) for _ in range(n_states)]
    ref_w, ref_states = w0.astype(np.float64), [np.zeros(size) for _ in range(n_states)]
    for _ in range(3):
        g = rng.standard_normal(size).astype(np.float32)
        getattr(mx.nd, name)(weight, mx.nd.array(g), *states, out=weight, **params)
        ref_w = _reference_step(name, ref_w, g.astype(np.float64), ref_states, params)
    assert weight.dtype == np.float32
    for state, ref in zip(states, ref_states, strict=True):
        assert_almost_equal(state.asnumpy(), ref, rtol=1e-4, atol=1e-6)
    assert_almost_equal(weight.asnumpy(), ref_w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("name", "n_states", "extra"), UPDATES)
def test_update_of_a_strided_view_matches_the_contiguous_update(rng, name, n_states, extra):
    w0, (g0,) = steps(rng, shape=(6, 8), n=1)
    params = {"lr": 0.1, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 1.0, **extra}
    contiguous = [mx.nd.array(w0[:, ::2].copy()), mx.nd.array(g0[:, ::2].copy())]
    contiguous += [mx.nd.zeros((6, 4)) for _ in range(n_states)]
    getattr(mx.nd, name)(*contiguous, out=contiguous[0], **params)
    # the kernel's non-contiguous path, fed NumPy views directly
    op = registry.get(name)
    strided = [w0.copy()[:, ::2], g0.copy()[:, ::2]] + [np.zeros((6, 8), np.float32)[:, ::2] for _ in range(n_states)]
    from lazynd.context import cpu
    from lazynd.runtime import kernel_context

    op.forward(kernel_context(cpu()), op.parse(params), strided, strided[:1], [])
    assert_almost_equal(strided[0], contiguous[0].asnumpy(), rtol=1e-6, atol=1e-7)


def test_cpu_scratch_blocks_start_on_a_page_and_grow_when_needed():
    from lazynd.backend.pool import ALIGN
    from lazynd.ops.optimizer_ops import _cpu_scratch

    for n in (10, 50_000, 300_000):
        g, scratch = _cpu_scratch(np.dtype(np.float32), n)
        assert g.shape == scratch.shape == (n,) and g.dtype == np.float32
        assert g.__array_interface__["data"][0] % ALIGN == 0
        assert scratch.__array_interface__["data"][0] % ALIGN == 0
        assert not np.shares_memory(g, scratch)


@pytest.mark.parametrize("name", ["sgd_update", "sgd_mom_update", "adam_update"])
def test_update_operators_take_mxnet_lazy_update_which_changes_nothing_on_dense_arrays(name):
    # MXNet 1.x passes lazy_update to these (row-sparse only); it was an 'unknown parameter'
    def run(**lazy):
        weight, grad = mx.nd.array([1.0, -2.0, 3.0]), mx.nd.array([0.5, 0.5, -1.0])
        states = [mx.nd.zeros(3) for _ in range({"sgd_update": 0, "sgd_mom_update": 1, "adam_update": 2}[name])]
        getattr(mx.nd, name)(weight, grad, *states, lr=0.1, wd=0.01, out=weight, **lazy)
        return weight.asnumpy()

    np.testing.assert_array_equal(run(lazy_update=True), run())
    np.testing.assert_array_equal(run(lazy_update=False), run())


@pytest.mark.parametrize("shape", [(8, 8), (3, 200_000)], ids=["whole", "blocked"])
@pytest.mark.parametrize("wd", [0.0, 0.01])
def test_sgd_update_and_multi_sgd_update_share_one_host_update(rng, monkeypatch, shape, wd):
    # sgd_update without clipping runs optimizer_ops.sgd_on_host, multi_sgd_update's per weight:
    # bit for bit the blocked walk's arithmetic (one temporary for a weight of one block at most)
    from lazynd.ops import optimizer_ops

    weight = rng.standard_normal(shape).astype(np.float32)
    grad = rng.standard_normal(shape).astype(np.float32)
    blocked = weight.copy()
    params = {"lr": 0.1, "wd": wd, "rescale_grad": 0.5, "clip_gradient": -1.0}
    optimizer_ops._sgd_block(np, params, weight, grad, blocked, np.empty_like(weight), np.empty_like(weight))
    calls = []
    real = optimizer_ops.sgd_on_host
    monkeypatch.setattr(optimizer_ops, "sgd_on_host", lambda *a: calls.append(a[0].shape) or real(*a))
    single = mx.nd.array(weight)
    mx.nd.sgd_update(single, mx.nd.array(grad), lr=0.1, wd=wd, rescale_grad=0.5, out=single)
    multi = [mx.nd.array(weight), mx.nd.array(weight[:1])]
    mx.nd.multi_sgd_update(
        multi[0], mx.nd.array(grad), multi[1], mx.nd.array(grad[:1]), out=multi,
        lrs=(0.1, 0.1), wds=(wd, wd), rescale_grad=0.5, num_weights=2,
    )  # fmt: skip
    np.testing.assert_array_equal(single.asnumpy(), blocked)
    np.testing.assert_array_equal(multi[0].asnumpy(), blocked)
    np.testing.assert_array_equal(multi[1].asnumpy(), blocked[:1])
    assert calls[0] == shape


def _adam_rmsprop_arrays() -> list:
    return [mx.nd.array(v) for v in ([1.0, 2.0, -1.0], [0.1, -0.3, 0.2], [0.1, 0.2, 0.05], [0.1, 0.3, 0.2])]


# MXNet 1.9.1 takes a decay of 1 or more (its kernels have no root of 1 - beta): the weights and
# states it gave on these inputs; lazynd's CPU kernel divided by sqrt(1 - beta) (0, or of a negative)
@pytest.mark.parametrize(
    ("beta2", "weight", "var"),
    [
        (1.0, [0.96837723, 1.9726139, -1.0145345], [0.1, 0.3, 0.2]),
        (1.5, [0.97373873, 1.9764298, -1.0122838], [0.145, 0.405, 0.28]),
    ],
)
def test_adam_takes_a_beta2_of_one_or_more_as_mxnet(beta2: float, weight: list, var: list) -> None:
    w, g, m, v = _adam_rmsprop_arrays()
    mx.nd.adam_update(w, g, m, v, lr=0.1, beta1=0.9, beta2=beta2, out=w)
    assert_almost_equal(w.asnumpy(), np.array(weight), rtol=1e-6, atol=1e-6)
    assert_almost_equal(v.asnumpy(), np.array(var), rtol=1e-6, atol=1e-6)
    assert_almost_equal(m.asnumpy(), np.array([0.1, 0.15, 0.065]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("gamma1", "weight"), [(1.0, [0.96837723, 2.0547724, -1.0447214]), (1.5, [0.97373873, 2.0471404, -1.0377965])]
)
def test_rmsprop_takes_a_gamma1_of_one_or_more_as_mxnet(gamma1: float, weight: list) -> None:
    w, g, _, state = _adam_rmsprop_arrays()
    mx.nd.rmsprop_update(w, g, state, lr=0.1, gamma1=gamma1, out=w)
    assert_almost_equal(w.asnumpy(), np.array(weight), rtol=1e-6, atol=1e-6)

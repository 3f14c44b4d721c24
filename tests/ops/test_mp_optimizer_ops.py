"""Multi-precision updates (mp_*, multi_mp_*) and nag_mom_update, against MXNet 1.9.1's results."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal

W = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
G = np.array([4.0, -1.0, 0.25, -0.5], np.float32)
MOM = np.array([0.1, -0.2, 0.3, 0.0], np.float32)
PARAMS = {"lr": 0.1, "wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 1.0}

# MXNet 1.9.1's results for the call above (float16 weight and gradient; momentum 0.9), out=weight:
# the float32 master weight after the update, and the momentum
MXNET_W32 = {
    "mp_sgd_update": [0.8949999809265137, -1.940000057220459, 0.48500001430511475, 3.010000228881836],
    "mp_sgd_mom_update": [0.9850000143051147, -2.119999885559082, 0.7549999952316284, 3.009999990463257],
    "mp_nag_mom_update": [0.8815000057220459, -2.0480000972747803, 0.7144999504089355, 3.0190000534057617],
}
MXNET_MOM = {
    "mp_sgd_mom_update": [-0.015000008046627045, -0.11999998986721039, 0.2550000250339508, 0.009999999776482582],
    "mp_nag_mom_update": [-0.014407508075237274, -0.11975999176502228, 0.2539274990558624, 0.00990500021725893],
}


def _mp_call(name: str, ctx: mx.Context, weight_dtype: str = "float16") -> tuple:
    weight = mx.nd.array(W, ctx=ctx, dtype=weight_dtype)
    grad = mx.nd.array(G, ctx=ctx, dtype=weight_dtype)
    weight32, mom = mx.nd.array(W, ctx=ctx), mx.nd.array(MOM, ctx=ctx)
    if name == "mp_sgd_update":
        result = mx.nd.mp_sgd_update(weight, grad, weight32, out=weight, **PARAMS)
    else:
        result = getattr(mx.nd, name)(weight, grad, mom, weight32, out=weight, momentum=0.9, **PARAMS)
    return result, weight, weight32, mom


@pytest.mark.parametrize("name", sorted(MXNET_W32))
def test_mp_update_matches_mxnet(ctx, name):
    result, weight, weight32, mom = _mp_call(name, ctx)
    assert result is weight and weight.dtype == np.float16
    assert_almost_equal(weight32.asnumpy(), np.array(MXNET_W32[name], np.float32), rtol=1e-6, atol=1e-7)
    # the float16 weight is the master copy rounded to nearest
    np.testing.assert_array_equal(weight.asnumpy(), weight32.asnumpy().astype(np.float16))
    expected_mom = MXNET_MOM.get(name, MOM)
    assert_almost_equal(mom.asnumpy(), np.array(expected_mom, np.float32), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", sorted(MXNET_W32))
def test_mp_update_of_a_float32_weight_equals_the_plain_update(ctx, name):
    _, weight, weight32, mom = _mp_call(name, ctx, weight_dtype="float32")
    plain_w, plain_mom = mx.nd.array(W, ctx=ctx), mx.nd.array(MOM, ctx=ctx)
    plain = name.removeprefix("mp_")
    if plain == "sgd_update":
        mx.nd.sgd_update(plain_w, mx.nd.array(G, ctx=ctx), out=plain_w, **PARAMS)
    else:
        getattr(mx.nd, plain)(plain_w, mx.nd.array(G, ctx=ctx), plain_mom, out=plain_w, momentum=0.9, **PARAMS)
    assert weight.dtype == np.float32
    assert_almost_equal(weight.asnumpy(), plain_w.asnumpy(), rtol=1e-6, atol=1e-7)
    assert_almost_equal(weight32.asnumpy(), plain_w.asnumpy(), rtol=1e-6, atol=1e-7)
    assert_almost_equal(mom.asnumpy(), plain_mom.asnumpy(), rtol=1e-6, atol=1e-7)


def test_nag_mom_update_matches_mxnet(ctx):
    weight, mom = mx.nd.array(W, ctx=ctx), mx.nd.array(MOM, ctx=ctx)
    mx.nd.nag_mom_update(weight, mx.nd.array(G, ctx=ctx), mom, out=weight, momentum=0.9, **PARAMS)
    assert_almost_equal(weight.asnumpy(), np.array(MXNET_W32["mp_nag_mom_update"], np.float32), rtol=1e-6)
    assert_almost_equal(mom.asnumpy(), np.array(MXNET_MOM["mp_nag_mom_update"], np.float32), rtol=1e-5)


# MXNet 1.9.1's momentum after the same call with an output other than the weight (a new array, or
# out=another array): its kernel reads the weight back after writing out, the given weight here
MXNET_NAG_MOM_NOT_IN_PLACE = [-0.015000000596046448, -0.11999998986721039, 0.2549999952316284, 0.009999999776482582]


@pytest.mark.parametrize("to_new_array", [True, False])
def test_nag_mom_update_into_another_array_decays_the_momentum_by_the_given_weight(ctx, to_new_array):
    weight, mom = mx.nd.array(W, ctx=ctx), mx.nd.array(MOM, ctx=ctx)
    grad = mx.nd.array(G, ctx=ctx)
    if to_new_array:
        out = mx.nd.nag_mom_update(weight, grad, mom, momentum=0.9, **PARAMS)
    else:
        out = mx.nd.zeros((4,), ctx=ctx)
        mx.nd.nag_mom_update(weight, grad, mom, out=out, momentum=0.9, **PARAMS)
    assert_almost_equal(out.asnumpy(), np.array(MXNET_W32["mp_nag_mom_update"], np.float32), rtol=1e-6)
    assert_almost_equal(mom.asnumpy(), np.array(MXNET_NAG_MOM_NOT_IN_PLACE, np.float32), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(weight.asnumpy(), W)


@pytest.mark.parametrize("clip", [0.3, -1.0])
def test_nag_mom_update_matches_the_reference_formula_over_steps(ctx, clip):
    rng = np.random.default_rng(5)
    w, m = rng.standard_normal((3, 5)), np.zeros((3, 5))
    weight, mom = mx.nd.array(w, ctx=ctx), mx.nd.zeros((3, 5), ctx=ctx)
    params = {"lr": 0.05, "momentum": 0.8, "wd": 0.1, "rescale_grad": 0.5, "clip_gradient": clip}
    for _ in range(3):
        g = rng.standard_normal((3, 5)) * 3
        mx.nd.nag_mom_update(weight, mx.nd.array(g, ctx=ctx), mom, out=weight, **params)
        gc = np.clip(0.5 * g, -clip, clip) if clip >= 0 else 0.5 * g
        m = 0.8 * m
        new_w = w + 0.8 * m - 1.8 * 0.05 * (gc + 0.1 * w)
        m, w = m - 0.05 * (gc + 0.1 * new_w), new_w
    assert_almost_equal(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    assert_almost_equal(mom.asnumpy(), m, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum", [None, 0.9])
def test_multi_mp_update_matches_one_mp_update_per_weight(ctx, momentum):
    rng = np.random.default_rng(8)
    shapes, lrs, wds = [(3, 4), (5,), (2, 1, 3)], (0.1, 0.05, 0.2), (0.01, 0.0, 0.1)
    fused, single = [], []
    for shape in shapes:
        w, m = rng.standard_normal(shape), rng.standard_normal(shape)
        for group in (fused, single):
            arrays = [mx.nd.array(w, ctx=ctx, dtype="float16"), mx.nd.array(m, ctx=ctx), mx.nd.array(w, ctx=ctx)]
            group.append(arrays if momentum else [arrays[0], arrays[2]])
    params = {"rescale_grad": 0.5, "clip_gradient": 0.7}
    for _ in range(2):
        grads = [mx.nd.array(rng.standard_normal(s) * 3, ctx=ctx, dtype="float16") for s in shapes]
        flat = [a for states, g in zip(fused, grads, strict=True) for a in (states[0], g, *states[1:])]
        weights = [states[0] for states in fused]
        if momentum:
            mx.nd.multi_mp_sgd_mom_update(
                *flat, out=weights, lrs=lrs, wds=wds, momentum=momentum, num_weights=3, **params
            )
        else:
            mx.nd.multi_mp_sgd_update(*flat, out=weights, lrs=lrs, wds=wds, num_weights=3, **params)
        for states, g, lr, wd in zip(single, grads, lrs, wds, strict=True):
            if momentum:
                mx.nd.mp_sgd_mom_update(
                    states[0], g, *states[1:], out=states[0], lr=lr, wd=wd, momentum=momentum, **params
                )
            else:
                mx.nd.mp_sgd_update(states[0], g, *states[1:], out=states[0], lr=lr, wd=wd, **params)
    for got, expected in zip(fused, single, strict=True):
        for a, b in zip(got, expected, strict=True):
            assert a.dtype == b.dtype
            assert_almost_equal(a.asnumpy(), b.asnumpy(), rtol=0, atol=0)


def test_mp_updates_run_in_a_bound_executor():
    net = sym.mp_sgd_mom_update(
        sym.Variable("w"), sym.Variable("g"), sym.Variable("m"), sym.Variable("w32"), lr=0.1, wd=0.05,
        momentum=0.9, rescale_grad=0.5, clip_gradient=1.0,
    )  # fmt: skip
    assert net.list_arguments() == ["w", "g", "m", "w32"]
    _, out_types, _ = net.infer_type(w="float16")
    assert [np.dtype(t) for t in out_types] == [np.float16]
    args = {
        "w": mx.nd.array(W, dtype="float16"),
        "g": mx.nd.array(G, dtype="float16"),
        "m": mx.nd.array(MOM),
        "w32": mx.nd.array(W),
    }
    exe = net.bind(mx.cpu(), args=args, grad_req="null")
    exe.forward()
    assert exe.outputs[0].dtype == np.float16
    assert_almost_equal(args["w32"].asnumpy(), np.array(MXNET_W32["mp_sgd_mom_update"], np.float32), rtol=1e-6)
    assert_almost_equal(exe.outputs[0].asnumpy(), args["w32"].asnumpy().astype(np.float16), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("name", "states"),
    [
        ("mp_sgd_update", ["weight32"]),
        ("mp_sgd_mom_update", ["mom", "weight32"]),
        ("mp_nag_mom_update", ["mom", "weight32"]),
        ("nag_mom_update", ["mom"]),
    ],
)
def test_states_are_declared_as_written(name, states):
    op = registry.get(name)
    attrs = op.parse({"lr": 0.1})
    assert [op.input_names(attrs)[i] for i in op.mutated_inputs(attrs)] == states


def test_multi_mp_states_are_declared_as_written():
    op = registry.get("multi_mp_sgd_mom_update")
    attrs = op.parse({"lrs": (0.1, 0.1), "wds": (0.0, 0.0), "num_weights": 2})
    names = op.input_names(attrs)
    assert [names[i] for i in op.mutated_inputs(attrs)] == ["mom_0", "weight32_0", "mom_1", "weight32_1"]


def test_a_float16_master_copy_is_refused_naming_it():
    with pytest.raises(OperatorError, match=r"mp_sgd_update: input 'weight32' has dtype float16, expected float32"):
        mx.nd.mp_sgd_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"),
                            mx.nd.ones((2,), dtype="float16"), lr=0.1)  # fmt: skip


def test_a_gradient_of_another_dtype_than_the_weight_is_refused():
    with pytest.raises(OperatorError, match=r"mp_sgd_mom_update: input 'grad' has dtype float32, expected float16"):
        mx.nd.mp_sgd_mom_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,)), mx.nd.ones((2,)),
                                mx.nd.ones((2,)), lr=0.1)  # fmt: skip


def test_a_float16_momentum_of_multi_mp_is_refused_naming_it():
    with pytest.raises(OperatorError, match=r"multi_mp_sgd_mom_update: input 'mom_0' has dtype float16"):
        mx.nd.multi_mp_sgd_mom_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"),
                                      mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,)),
                                      lrs=(0.1,), wds=(0.0,))  # fmt: skip


def test_a_float16_momentum_of_the_preloaded_twin_is_refused_naming_the_twin():
    # the preloaded twin shares its type rule with multi_mp_sgd_mom_update: the error named that one
    half = [mx.nd.ones((2,), dtype="float16") for _ in range(3)]
    rates = [mx.nd.array([0.1]), mx.nd.array([0.0])]
    with pytest.raises(OperatorError, match=r"^preloaded_multi_mp_sgd_mom_update: input 'mom_0' has dtype float16"):
        mx.nd.preloaded_multi_mp_sgd_mom_update(*half, mx.nd.ones((2,)), *rates)


def test_a_master_copy_of_another_shape_is_refused():
    with pytest.raises(ShapeError, match=r"mp_sgd_update: shape of 'weight32' is \(3,\), expected \(2,\)"):
        mx.nd.mp_sgd_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"),
                            mx.nd.ones((3,)), lr=0.1)  # fmt: skip


def test_nag_momentum_is_unbounded_as_in_mxnet():
    # MXNet 1.9.1 takes any momentum (tests/ops/test_float_param_ranges.py): 1.5 runs, 0.5 * 1.5 + 1 each step
    weight, mom = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mx.nd.nag_mom_update(weight, mx.nd.ones((2,)), mom, lr=0.1, momentum=1.5, out=weight)
    assert mx.nd.waitall() is None and weight.shape == (2,)


def test_multi_mp_lrs_of_the_wrong_length_are_refused():
    with pytest.raises(OperatorError, match=r"multi_mp_sgd_update: lrs has 2 value\(s\), expected num_weights=1"):
        mx.nd.multi_mp_sgd_update(mx.nd.ones((2,), dtype="float16"), mx.nd.ones((2,), dtype="float16"),
                                  mx.nd.ones((2,)), lrs=(0.1, 0.2), wds=(0.0,))  # fmt: skip

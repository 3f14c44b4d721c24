"""multi_sgd_update / multi_sgd_mom_update: the per-parameter updates, many parameters in one operation."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError
from lazynd.ops import registry
from lazynd.testing import assert_almost_equal

SHAPES = [(3, 4), (4,), (5, 2, 3), (1,)]
LRS = (0.1, 0.05, 0.2, 0.01)
WDS = (0.01, 0.0, 0.1, 0.5)


def _arrays(rng, ctx, scale=1.0):
    return [mx.nd.array(rng.standard_normal(s).astype(np.float32) * scale, ctx=ctx) for s in SHAPES]


def _copies(arrays):
    return [mx.nd.array(a.asnumpy(), ctx=a.context) for a in arrays]


@pytest.mark.parametrize("clip", [0.3, -1.0])
def test_multi_sgd_update_matches_one_sgd_update_per_weight(ctx, clip):
    rng = np.random.default_rng(3)
    weights = _arrays(rng, ctx)
    singles = _copies(weights)
    for _ in range(3):
        grads = _arrays(rng, ctx, scale=3.0)
        flat = [a for pair in zip(weights, grads, strict=True) for a in pair]
        result = mx.nd.multi_sgd_update(
            *flat, out=weights, lrs=LRS, wds=WDS, rescale_grad=0.5, clip_gradient=clip, num_weights=len(SHAPES)
        )
        for w, g, lr, wd in zip(singles, grads, LRS, WDS, strict=True):
            mx.nd.sgd_update(w, g, out=w, lr=lr, wd=wd, rescale_grad=0.5, clip_gradient=clip)
    assert result is weights
    for fused, single in zip(weights, singles, strict=True):
        assert_almost_equal(fused.asnumpy(), single.asnumpy(), rtol=0, atol=0)


@pytest.mark.parametrize("clip", [0.3, -1.0])
def test_multi_sgd_mom_update_matches_one_sgd_mom_update_per_weight(ctx, clip):
    rng = np.random.default_rng(4)
    weights, moms = _arrays(rng, ctx), [mx.nd.zeros(s, ctx=ctx) for s in SHAPES]
    single_w, single_m = _copies(weights), _copies(moms)
    params = {"rescale_grad": 0.25, "clip_gradient": clip, "momentum": 0.9}
    for _ in range(3):
        grads = _arrays(rng, ctx, scale=3.0)
        flat = [a for group in zip(weights, grads, moms, strict=True) for a in group]
        mx.nd.multi_sgd_mom_update(*flat, out=weights, lrs=LRS, wds=WDS, num_weights=len(SHAPES), **params)
        for w, g, m, lr, wd in zip(single_w, grads, single_m, LRS, WDS, strict=True):
            mx.nd.sgd_mom_update(w, g, m, out=w, lr=lr, wd=wd, **params)
    for got, expected in zip(weights + moms, single_w + single_m, strict=True):
        assert_almost_equal(got.asnumpy(), expected.asnumpy(), rtol=0, atol=0)


def test_multi_sgd_update_matches_the_reference_formula():
    w = np.array([1.0, -2.0, 3.0], np.float32)
    g = np.array([4.0, -1.0, 0.5], np.float32)
    weight = mx.nd.array(w)
    mx.nd.multi_sgd_update(
        weight, mx.nd.array(g), out=[weight], lrs=(0.1,), wds=(0.2,), rescale_grad=0.5, clip_gradient=1.0
    )
    expected = (1 - 0.1 * 0.2) * w - 0.1 * np.clip(0.5 * g, -1.0, 1.0)
    assert_almost_equal(weight.asnumpy(), expected, rtol=1e-6)


def test_multi_sgd_update_without_out_returns_new_weights():
    weights, grads = [mx.nd.ones((2,)), mx.nd.ones((3,))], [mx.nd.ones((2,)), mx.nd.ones((3,))]
    new = mx.nd.multi_sgd_update(weights[0], grads[0], weights[1], grads[1], lrs=(0.5, 0.25), wds=(0, 0), num_weights=2)
    assert [tuple(a.shape) for a in new] == [(2,), (3,)]
    assert_almost_equal(new[1].asnumpy(), np.full(3, 0.75))
    assert_almost_equal(weights[0].asnumpy(), np.ones(2))


def test_momenta_are_scheduled_as_writes():
    op = registry.get("multi_sgd_mom_update")
    attrs = op.parse({"lrs": (0.1,) * 3, "wds": (0.0,) * 3, "num_weights": 3})
    names = op.input_names(attrs)
    assert [names[i] for i in op.mutated_inputs(attrs)] == ["mom_0", "mom_1", "mom_2"]
    assert registry.get("multi_sgd_update").mutated_inputs(op.parse({"lrs": (0.1,), "wds": (0.0,)})) == ()


def test_a_read_after_multi_sgd_mom_update_sees_the_new_momentum():
    weights = [mx.nd.ones((500,)), mx.nd.ones((7,))]
    moms = [mx.nd.zeros((500,)), mx.nd.zeros((7,))]
    for _ in range(4):
        grads = [mx.nd.ones((500,)), mx.nd.ones((7,))]
        flat = [a for group in zip(weights, grads, moms, strict=True) for a in group]
        mx.nd.multi_sgd_mom_update(*flat, out=weights, lrs=(0.1, 0.1), wds=(0, 0), momentum=0.5, num_weights=2)
    for mom in moms:
        assert_almost_equal(mom.asnumpy(), np.full(mom.shape, -0.1 * (1 - 0.5**4) / 0.5))


@pytest.mark.parametrize(("key", "values"), [("lrs", (0.1,)), ("wds", (0.0, 0.0, 0.0))])
def test_lrs_or_wds_of_the_wrong_length_are_errors(key, values):
    params = {"lrs": (0.1, 0.1), "wds": (0.0, 0.0), key: values}
    with pytest.raises(OperatorError, match=f"multi_sgd_update: {key} has {len(values)} value.*num_weights=2"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((3,)), mx.nd.ones((3,)),
                               num_weights=2, **params)  # fmt: skip


def test_a_negative_learning_rate_is_an_error():
    with pytest.raises(OperatorError, match="lrs must be >= 0"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,)), lrs=(-0.1,), wds=(0.0,))


def test_inputs_not_matching_num_weights_are_an_error():
    with pytest.raises(OperatorError, match=r"expected 4 input\(s\) \(weight_0, grad_0, weight_1, grad_1\), got 3"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((3,)),
                               lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)  # fmt: skip


def test_a_gradient_of_another_shape_is_an_error_naming_it():
    with pytest.raises(ShapeError, match=r"multi_sgd_update: shape of 'grad_1' is \(2,\), expected \(3,\)"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((3,)), mx.nd.ones((2,)),
                               lrs=(0.1, 0.1), wds=(0.0, 0.0), num_weights=2)  # fmt: skip


def test_a_momentum_of_another_shape_is_an_error_naming_it():
    with pytest.raises(ShapeError, match="multi_sgd_mom_update: shape of 'mom_0'"):
        mx.nd.multi_sgd_mom_update(mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.ones((4,)),
                                   lrs=(0.1,), wds=(0.0,), momentum=0.9)  # fmt: skip


def test_a_gradient_of_another_dtype_is_an_error_naming_it():
    with pytest.raises(OperatorError, match="weight 0 and its gradient/state differ in dtype"):
        mx.nd.multi_sgd_update(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64"), lrs=(0.1,), wds=(0.0,))


def test_the_preloaded_twin_names_itself_when_dtypes_differ():
    # it shares multi_sgd_update's type rule: the error named multi_sgd_update, not the operator called
    with pytest.raises(OperatorError, match="^preloaded_multi_sgd_update: weight 0 and its gradient/state differ"):
        mx.nd.preloaded_multi_sgd_update(
            mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64"), mx.nd.array([0.1]), mx.nd.array([0.0])
        )


def test_num_weights_below_one_is_an_error():
    with pytest.raises(OperatorError, match="num_weights"):
        mx.nd.multi_sgd_update(lrs=(), wds=(), num_weights=0)


@pytest.mark.parametrize("clip", [0.7, -1.0], ids=["clipped", "unclipped"])
@pytest.mark.parametrize("name", ["multi_sgd_update", "multi_sgd_mom_update"])
def test_small_and_large_parameters_in_one_call_match_the_single_updates(name, clip):
    # under SMALL_BYTES (whole-array path), one CPU block, and 2.3 blocks (the blocked walk)
    from lazynd.ops.multi_optimizer_ops import SMALL_BYTES
    from lazynd.ops.optimizer_ops import BLOCK_BYTES

    sizes = [SMALL_BYTES // 4 - 3, SMALL_BYTES // 4 + 5, int(2.3 * BLOCK_BYTES / 4)]
    rng = np.random.default_rng(8)
    stride = 3 if "mom" in name else 2
    params = {"rescale_grad": 0.5, "clip_gradient": clip, **({"momentum": 0.8} if stride == 3 else {})}
    weights = [mx.nd.array(rng.standard_normal(n).astype(np.float32)) for n in sizes]
    states = [mx.nd.zeros((n,)) for n in sizes] if stride == 3 else []
    single_w, single_s = _copies(weights), _copies(states)
    for _ in range(2):
        grads = [mx.nd.array(rng.standard_normal(n).astype(np.float32) * 2) for n in sizes]
        groups = zip(weights, grads, states, strict=True) if stride == 3 else zip(weights, grads, strict=True)
        flat = [a for group in groups for a in group]
        getattr(mx.nd, name)(*flat, out=weights, lrs=LRS[:3], wds=WDS[:3], num_weights=3, **params)
        single = name.replace("multi_", "")
        for k, (w, g) in enumerate(zip(single_w, grads, strict=True)):
            extra = [single_s[k]] if stride == 3 else []
            getattr(mx.nd, single)(w, g, *extra, out=w, lr=LRS[k], wd=WDS[k], **params)
    for got, expected in zip(weights + states, single_w + single_s, strict=True):
        if clip < 0 and stride == 2:  # the unclipped multi_sgd_update's own path: the same bits
            np.testing.assert_array_equal(got.asnumpy(), expected.asnumpy())
        else:
            assert_almost_equal(got.asnumpy(), expected.asnumpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_preloaded_update_takes_rates_from_arrays(ctx, momentum):
    rng = np.random.default_rng(5)
    shapes = [(3, 4), (5,)]
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [mx.nd.array(rng.standard_normal(s), ctx=ctx) for s in shapes]
    results = []
    for preloaded in (False, True):
        w = [mx.nd.array(x, ctx=ctx) for x in weights]
        moms = [mx.nd.ones(s, ctx=ctx) for s in shapes]
        groups = [[w[i], grads[i], moms[i]] if momentum else [w[i], grads[i]] for i in range(2)]
        flat = [a for group in groups for a in group]
        kwargs = {"rescale_grad": 0.5, "clip_gradient": 0.3, "num_weights": 2}
        if momentum:
            kwargs["momentum"] = momentum
        name = "multi_sgd_mom_update" if momentum else "multi_sgd_update"
        if preloaded:
            rates = [mx.nd.array([0.125, 0.25], ctx=ctx), mx.nd.array([0.0625, 0.0], ctx=ctx)]
            getattr(mx.nd, "preloaded_" + name)(*flat, *rates, out=w, **kwargs)
        else:
            getattr(mx.nd, name)(*flat, out=w, lrs=(0.125, 0.25), wds=(0.0625, 0.0), **kwargs)
        results.append([a.asnumpy() for a in w + moms])
    for plain, preloaded in zip(*results, strict=True):
        np.testing.assert_array_equal(plain, preloaded)


def test_preloaded_update_refuses_rates_of_another_length():
    w = mx.nd.ones((2,))
    with pytest.raises(ShapeError, match="preloaded_multi_sgd_update: shape of 'lrs' is \\(2,\\), expected \\(1,\\)"):
        mx.nd.preloaded_multi_sgd_update(w, w, mx.nd.ones((2,)), mx.nd.ones((1,)), num_weights=1)


def test_preloaded_mp_update_lists_its_rate_inputs():
    sym = mx.sym.preloaded_multi_mp_sgd_mom_update(num_weights=1, name="u")
    assert sym.list_arguments() == ["u_weight_0", "u_grad_0", "u_mom_0", "u_weight32_0", "u_lrs", "u_wds"]

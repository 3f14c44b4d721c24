"""PreparedCall: an operator call on fixed arrays, planned once and pushed at every step."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError, OperatorError, ShapeError
from lazynd.ndarray import dispatch, prepared
from lazynd.ndarray.prepared import PreparedCall


def _arrays(seed: int = 0) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    weights = [mx.nd.array(rng.standard_normal(s)) for s in ((3, 4), (4,))]
    grads = [mx.nd.array(rng.standard_normal(s)) for s in ((3, 4), (4,))]
    return weights, grads


def _multi_sgd(weights: list, grads: list) -> PreparedCall:
    return PreparedCall("multi_sgd_update", [a for pair in zip(weights, grads, strict=True) for a in pair], weights)


def test_prepared_steps_equal_plain_calls_as_the_parameters_change() -> None:
    weights, grads = _arrays()
    expected_w, expected_g = _arrays()
    step = _multi_sgd(weights, grads)
    for lr in (0.1, 0.1, 0.05, 0.05, 0.1):  # a rate that changes, and changes back
        params = {"lrs": (lr, 2 * lr), "wds": (0.01, 0.0), "rescale_grad": 0.5, "num_weights": 2}
        step(**params)
        flat = [a for pair in zip(expected_w, expected_g, strict=True) for a in pair]
        mx.nd.multi_sgd_update(*flat, out=expected_w, **params)
    for got, want in zip(weights, expected_w, strict=True):
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())


def test_a_repeated_step_looks_up_no_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    weights, grads = _arrays()
    step = _multi_sgd(weights, grads)
    params = {"lrs": (0.1, 0.1), "wds": (0.0, 0.0), "num_weights": 2}
    step(**params)
    looked_up = []
    for module in (dispatch, prepared):
        real = module.plan_for
        monkeypatch.setattr(
            module, "plan_for", lambda *a, _real=real, **k: looked_up.append(a[0].name) or _real(*a, **k)
        )
    step(**params)
    mx.nd.waitall()
    assert looked_up == []
    step(**{**params, "lrs": (0.2, 0.1)})  # new parameters: planned again
    assert looked_up == ["multi_sgd_update"]


def test_a_step_orders_with_other_work_and_reports_errors_at_the_wait() -> None:
    weights, grads = _arrays()
    step = _multi_sgd(weights, grads)
    grads[0][:] = 1.0  # pushed before the step: the step must read it
    step(lrs=(1.0, 1.0), wds=(0.0, 0.0), num_weights=2)
    before = _arrays()[0][0].asnumpy()
    np.testing.assert_allclose(weights[0].asnumpy(), before - 1.0, rtol=1e-6)


def test_bad_out_and_inputs_are_refused_by_name() -> None:
    weights, grads = _arrays()
    with pytest.raises(OperatorError, match="sgd_update: input 1 must be an NDArray, got ndarray"):
        PreparedCall("sgd_update", [weights[0], grads[0].asnumpy()], out=weights[0])
    with pytest.raises(OperatorError, match="was not given"):
        PreparedCall("sgd_update", [weights[0], grads[0]], out=None)
    step = PreparedCall("sgd_update", [weights[0], grads[0]], out=weights[1])  # (4,) for a (3, 4) result
    with pytest.raises(ShapeError, match=r"sgd_update: out\[0\] has shape \(4,\), expected \(3, 4\)"):
        step(lr=0.1)
    with pytest.raises(LazyNDError, match="unknown optimizer|not a registered operator|unknown operator"):
        PreparedCall("no_such_update", [weights[0]], out=weights[0])


def test_random_operators_and_recording_take_the_general_route() -> None:
    low, high = mx.nd.zeros((1000,)), mx.nd.ones((1000,))
    out = mx.nd.zeros((1000,))
    draw = PreparedCall("_sample_uniform", [low, high], out=out)
    mx.random.seed(7)
    draw()
    first = out.asnumpy().copy()
    draw()
    assert not np.array_equal(first, out.asnumpy())  # a new draw from the current generator
    mx.random.seed(7)
    draw()
    np.testing.assert_array_equal(first, out.asnumpy())  # the generator of the moment, reseeded

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    y = mx.nd.zeros((2,))
    double = PreparedCall("_mul_scalar", [x], out=y)
    with mx.autograd.record():
        double(scalar=3.0)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])

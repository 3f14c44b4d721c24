"""Gradients of the branches a bound ``cond`` or ``while_loop`` does not take (lazynd_sym.passes.gate_dead_branches).

The expanded graph computes both branches of a ``cond`` and every guarded step of a ``while_loop``;
the backward of the branch not taken must not send ``0 * inf = NaN`` to the inputs it shares. MXNet
1.9.1 (which runs only the branch taken) gives the finite gradients checked here, and so does the
imperative ``mx.nd.contrib`` form, the reference of these tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx

S = mx.sym


def _bound_gradients(out: Any, args: dict[str, np.ndarray]) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """Forward and backward (head gradients of ones) of ``out`` bound on ``args``."""
    arrays = {k: mx.nd.array(v) for k, v in args.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    executor = out.bind(mx.cpu(), args=arrays, args_grad=grads)
    outputs = [o.asnumpy() for o in executor.forward(is_train=True)]
    executor.backward([mx.nd.ones(o.shape) for o in outputs])
    return outputs, {k: g.asnumpy() for k, g in grads.items()}


def _imperative_gradients(make: Callable[..., Any], args: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    arrays = {k: mx.nd.array(v) for k, v in args.items()}
    for array in arrays.values():
        array.attach_grad()
    with mx.autograd.record():
        result = make(mx.nd, **arrays)
    result.backward(mx.nd.ones(result.shape))
    return {k: a.grad.asnumpy() for k, a in arrays.items()}


def _cond_sqrt(F: Any, x: Any) -> Any:
    # at x = 0 the branch not taken has an infinite derivative
    return F.contrib.cond(F.sum(x) > 0, lambda: F.sqrt(x), lambda: x * 3)


def _cond_reciprocal_of_w(F: Any, x: Any, w: Any) -> Any:
    return F.contrib.cond(F.sum(w) != 0, lambda: x / w, lambda: x * 2 + w)


def _while_exp(F: Any, x: Any) -> Any:
    # the steps past the end (the sum reaches 10 at the third) overflow exp to inf
    _, final = F.contrib.while_loop(lambda v: F.sum(v) < 10, lambda v: ([v], [F.exp(v) * 3]), [x], max_iterations=8)
    return final[0]


def _while_dividing(F: Any, i: Any, x: Any) -> Any:
    # the step that would run at i = 3 divides by 0, and only its where-guard drops it
    _, final = F.contrib.while_loop(
        lambda i, v: i < 3, lambda i, v: ([v], [i + 1, F.broadcast_div(v, 3 - i)]), [i, x], max_iterations=5
    )
    return final[1]


@pytest.mark.parametrize(
    "make, args",
    [
        (_cond_sqrt, {"x": np.array([0.0], np.float32)}),
        (_cond_reciprocal_of_w, {"x": np.array([1.0, 2.0], np.float32), "w": np.array([0.0, 0.0], np.float32)}),
        (_while_exp, {"x": np.array([0.5], np.float32)}),
        (_while_dividing, {"i": np.array([0.0], np.float32), "x": np.array([2.0, 3.0], np.float32)}),
    ],
    ids=["cond-sqrt-at-0", "cond-divide-by-0", "while-overflow-past-the-end", "while-divide-past-the-end"],
)
def test_a_branch_not_taken_sends_no_nan_gradient(make: Callable[..., Any], args: dict[str, np.ndarray]) -> None:
    outputs, grads = _bound_gradients(make(S, **{k: S.var(k) for k in args}), args)
    expected = _imperative_gradients(make, args)
    for name in args:
        assert np.isfinite(grads[name]).all(), (name, grads[name])
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-5)
    assert np.isfinite(outputs[0]).all()


def test_a_nested_cond_closes_the_inner_and_the_outer_branch() -> None:
    def make(F: Any, x: Any, w: Any) -> Any:
        return F.contrib.cond(
            F.sum(x) > 0,
            lambda: F.contrib.cond(F.sum(w) > 0, lambda: F.sqrt(x) * w, lambda: x / w),
            lambda: F.contrib.cond(F.sum(w) < 0, lambda: F.log(x) + w, lambda: x * w),
        )

    # every branch has an infinite derivative somewhere among these points but the one taken
    for x, w in ((0.0, 0.0), (4.0, 1.0), (-1.0, -2.0)):
        args = {"x": np.array([x], np.float32), "w": np.array([w], np.float32)}
        _, grads = _bound_gradients(make(S, S.var("x"), S.var("w")), args)
        expected = _imperative_gradients(make, args)
        for name in args:
            np.testing.assert_allclose(grads[name], expected[name], rtol=1e-5)


def test_a_cond_inside_a_foreach_closes_its_branch_at_each_step() -> None:
    def make(F: Any, d: Any, s: Any) -> Any:
        def body(x: Any, states: list) -> tuple:
            y = F.contrib.cond(F.sum(x) > 0, lambda: F.sqrt(x) + states[0], lambda: x * states[0])
            return y, [y]

        out, _ = F.contrib.foreach(body, d, [s])
        return out

    args = {"d": np.array([[0.0, 0.0], [1.0, 4.0], [0.0, -1.0]], np.float32), "s": np.array([1.0, 2.0], np.float32)}
    _, grads = _bound_gradients(make(S, S.var("d"), S.var("s")), args)
    expected = _imperative_gradients(make, args)
    for name in args:
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-5)


def test_closing_a_branch_leaves_the_users_symbol_and_its_values_alone() -> None:
    x = S.var("x")
    taken = S.sqrt(x)
    out = S.contrib.cond(S.sum(x) > 0, lambda: taken * 2, lambda: x * 3)
    before = out.tojson()
    outputs, grads = _bound_gradients(out, {"x": np.array([4.0], np.float32)})
    assert out.tojson() == before
    assert taken.get_children().list_outputs() == ["x"]
    np.testing.assert_allclose(outputs[0], [4.0])
    np.testing.assert_allclose(grads["x"], [0.5])

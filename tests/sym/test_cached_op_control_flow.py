"""mx.nd.CachedOp of a symbol with control flow (foreach, while_loop, cond): it runs the loop written
out for the inputs' shapes, recorded by autograd like any call (it raised UnsupportedError: no
operator _foreach).  Values and gradients are MXNet 1.9.1's for the same programs."""

from __future__ import annotations

import numpy as np

import lazynd as mx

S = mx.sym


def _run(op: mx.nd.CachedOp, *args: mx.nd.NDArray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        outputs = op(*args)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    mx.autograd.backward(outputs)
    return [o.asnumpy() for o in outputs], [a.grad.asnumpy() for a in args]


def test_a_foreach_runs_and_differentiates_through_the_cached_op() -> None:
    out, states = S.contrib.foreach(lambda data, state: (data + 1, [state[0] * 2]), S.var("x"), [S.var("s")])
    op = mx.nd.CachedOp(S.Group([out, *states]))
    (y, final), (x_grad, s_grad) = _run(op, mx.nd.ones((3, 5)) * 2, mx.nd.arange(5))
    np.testing.assert_array_equal(y, np.full((3, 5), 3.0))
    np.testing.assert_array_equal(final, np.arange(5) * 8.0)
    np.testing.assert_array_equal(x_grad, np.ones((3, 5)))
    np.testing.assert_array_equal(s_grad, np.full(5, 8.0))


def test_the_cached_op_writes_each_length_of_the_loop_out_once() -> None:
    out, _ = S.contrib.foreach(lambda data, state: (data * state[0], state), S.var("x"), [S.var("s")])
    op = mx.nd.CachedOp(out)
    for steps in (3, 2, 3):
        (y,), (x_grad, s_grad) = _run(op, mx.nd.ones((steps, 5)) * 2, mx.nd.arange(5))
        np.testing.assert_array_equal(y, np.tile(np.arange(5) * 2.0, (steps, 1)))
        np.testing.assert_array_equal(s_grad, np.full(5, 2.0 * steps))
    assert len(op._expanded) == 2


def test_a_while_loop_and_a_cond_run_through_the_cached_op() -> None:
    outputs, states = S.contrib.while_loop(
        lambda i, a: i < 3, lambda i, a: (a, [i + 1, a * 2]), [S.var("i"), S.var("a")], max_iterations=5
    )
    op = mx.nd.CachedOp(S.Group([outputs, *states]))
    stacked, i, a = op(mx.nd.array([0]), mx.nd.array([1.0]))
    np.testing.assert_array_equal(stacked.asnumpy().ravel(), [1, 2, 4, 0, 0])
    assert (i.asscalar(), a.asscalar()) == (3, 8)
    a = S.var("a")
    op = mx.nd.CachedOp(S.contrib.cond(S.var("p") > 0, lambda: a * 2, lambda: a * 3))
    assert op(mx.nd.array([1]), mx.nd.array([5.0])).asscalar() == 10
    assert op(mx.nd.array([-1]), mx.nd.array([5.0])).asscalar() == 15

"""An executor output that is an argument or aux state itself (a graph that outputs a variable), or
that repeats another output, is the same storage: it carries the same engine var, so reads of the
output wait for writes of the argument (on a GPU the read copies on another stream)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import get_engine


def _slowly_written(ctx: mx.Context, array: mx.nd.NDArray, value: float) -> None:
    # a write that waits for host work taking a while, so that it is still pending at the read
    gate = mx.nd.zeros(array.shape, ctx=ctx)
    get_engine().push(time.sleep, (0.2,), [], [gate.var], name="slow_host_work")
    array[:] = gate + value


def test_an_output_that_is_an_argument_waits_for_the_arguments_writes(ctx: mx.Context) -> None:
    x = mx.sym.Variable("x")
    a = mx.nd.zeros((2, 3), ctx=ctx)
    ex = mx.sym.Group([x, x * 2]).bind(ctx, {"x": a})
    out = ex.forward()[0]
    _slowly_written(ctx, a, 7.0)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 7.0, np.float32))


def test_an_output_given_twice_is_one_array_for_the_engine(ctx: mx.Context) -> None:
    x = mx.sym.Variable("x")
    y = x + 1
    ex = mx.sym.Group([y, y]).bind(ctx, {"x": mx.nd.zeros((2, 3), ctx=ctx)})
    first, second = ex.forward()
    _slowly_written(ctx, first, 5.0)
    np.testing.assert_array_equal(second.asnumpy(), np.full((2, 3), 5.0, np.float32))


def test_an_argument_output_survives_a_forward_and_backward() -> None:
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    a, b = mx.nd.array([[1.0, 2.0]]), mx.nd.array([[3.0, 4.0]])
    ex = mx.sym.Group([x, mx.sym.make_loss(mx.sym.sum(x * w))]).bind(
        mx.cpu(), {"x": a, "w": b}, args_grad={"w": mx.nd.zeros((1, 2))}
    )
    outs = ex.forward(is_train=True)
    ex.backward([mx.nd.zeros((1, 2)), mx.nd.ones((1,))])
    np.testing.assert_array_equal(outs[0].asnumpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(ex.grad_dict["w"].asnumpy(), [[1.0, 2.0]])


def test_a_reshaped_executors_output_is_one_array_with_the_output_whose_storage_it_shares(ctx: mx.Context) -> None:
    # as in MXNet, Executor.reshape takes the original's storage blocks: the smaller output lies
    # at the start of the original's output block
    x = mx.sym.Variable("x")
    ex = mx.sym.FullyConnected(x, num_hidden=3, name="fc").simple_bind(ctx, x=(4, 5))
    smaller = ex.reshape(x=(2, 5))
    ex.forward()
    smaller.forward()
    _slowly_written(ctx, ex.outputs[0], 7.0)
    np.testing.assert_array_equal(smaller.outputs[0].asnumpy(), np.full((2, 3), 7.0, np.float32))
    _slowly_written(ctx, smaller.outputs[0], 4.0)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy()[:2], np.full((2, 3), 4.0, np.float32))


def test_a_reshaped_executor_across_contexts_shares_its_outputs_storage_vars_too() -> None:
    # the executor of group2ctx places each storage block on its context; reshape shares them alike
    with mx.AttrScope(ctx_group="dev1"):
        x = mx.sym.Variable("x")
        hidden = mx.sym.relu(x)
    with mx.AttrScope(ctx_group="dev2"):
        fc = mx.sym.FullyConnected(hidden, num_hidden=3, name="fc")
    ex = mx.sym.Group([fc, hidden]).simple_bind(mx.cpu(0), group2ctx={"dev1": mx.cpu(0), "dev2": mx.cpu(1)}, x=(4, 5))
    smaller = ex.reshape(x=(2, 5))
    ex.forward()
    smaller.forward()
    _slowly_written(mx.cpu(0), ex.outputs[1], 7.0)
    np.testing.assert_array_equal(smaller.outputs[1].asnumpy(), np.full((2, 5), 7.0, np.float32))


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_an_output_given_twice_takes_the_sum_of_both_head_gradients(grad_req: str) -> None:
    # d(sum(2x, axis=1))/dx is 2 per head: 2*1 + 2*10.  MXNet 1.9.1 keeps only the last head's
    # gradient (20), in its executor and its autograd alike (a README departure)
    x = mx.sym.Variable("x")
    y = mx.sym.sum(x * 2, axis=1)
    ex = mx.sym.Group([y, y]).simple_bind(mx.cpu(), grad_req=grad_req, x=(3, 2))
    ex.grad_dict["x"][:] = 0
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((3,)), mx.nd.ones((3,)) * 10])
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), np.full((3, 2), 22.0, np.float32))


def test_an_array_given_twice_to_autograd_backward_takes_the_sum_of_both_head_gradients() -> None:
    x = mx.nd.ones((3, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = (x * 2).sum(axis=1)
    mx.autograd.backward([y, y], [mx.nd.ones((3,)), mx.nd.ones((3,)) * 10])
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((3, 2), 22.0, np.float32))

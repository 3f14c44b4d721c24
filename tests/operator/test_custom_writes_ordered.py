"""A Custom operator's writes into its auxiliary states, in forward and in backward, are claimed.

The user's ``forward`` and ``backward`` may ``self.assign`` into ``aux`` (a counter, a running
statistic); the call must push the write of each aux state's var, or a read of the state
right after the call runs before the user's code has written it (on a GPU the read copies on
another stream).  Each check makes the call wait for slow host work on an array it reads,
then reads the state at once.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import lazynd as mx
from lazynd.engine import get_engine


class _Counting(mx.operator.CustomOp):
    """Doubles its input; counts forward calls by 1 and backward calls by 10 in its aux state."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(aux[0], "write", aux[0] + 1)
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(aux[0], "write", aux[0] + 10)
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("test_counting_aux")
class _CountingProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return [in_shape[0]], [in_shape[0]], [(1,)]

    def create_operator(self, ctx, shapes, dtypes):
        return _Counting()


def _slow_write(array: mx.nd.NDArray) -> None:
    """Host work that takes a while, claimed as a write of ``array`` (its values stay as they are)."""
    get_engine().push(time.sleep, (0.2,), [], [array.var], name="slow_host_work")


def _bound(ctx: mx.Context):
    net = mx.sym.Custom(mx.sym.Variable("x"), op_type="test_counting_aux", name="c")
    ex = net.simple_bind(ctx, x=(2,))
    ex.arg_dict["x"][:] = 1
    ex.aux_dict["c_count"][:] = 0
    mx.nd.waitall()
    return ex


@pytest.mark.parametrize("is_train", [True, False], ids=["training", "predicting"])
def test_an_executors_forward_claims_the_aux_state_it_assigns(ctx: mx.Context, is_train: bool) -> None:
    # the user's forward assigns whatever the mode (MXNet's Custom passes is_train on to it)
    ex = _bound(ctx)
    _slow_write(ex.arg_dict["x"])
    ex.forward(is_train=is_train)
    np.testing.assert_array_equal(ex.aux_dict["c_count"].asnumpy(), [1.0])


def test_an_executors_backward_claims_the_aux_state_it_assigns(ctx: mx.Context) -> None:
    ex = _bound(ctx)
    ex.forward(is_train=True)
    mx.nd.waitall()
    head = mx.nd.ones((2,), ctx=ctx)
    _slow_write(head)
    ex.backward(head)
    np.testing.assert_array_equal(ex.aux_dict["c_count"].asnumpy(), [11.0])


def test_an_imperative_call_and_its_backward_claim_the_aux_state(ctx: mx.Context) -> None:
    x, count = mx.nd.ones((2,), ctx=ctx), mx.nd.zeros((1,), ctx=ctx)
    x.attach_grad()
    mx.nd.waitall()
    _slow_write(x)
    with mx.autograd.record():
        y = mx.nd.Custom(x, count, op_type="test_counting_aux")
    np.testing.assert_array_equal(count.asnumpy(), [1.0])
    head = mx.nd.ones((2,), ctx=ctx)
    _slow_write(head)
    y.backward(head)
    np.testing.assert_array_equal(count.asnumpy(), [11.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])

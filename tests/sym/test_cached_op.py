"""mx.nd.CachedOp: a symbol called as an imperative function of its inputs, recorded by autograd."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def _conv_plus_two() -> tuple[mx.nd.CachedOp, list[mx.nd.NDArray]]:
    op = mx.nd.CachedOp(mx.sym.Convolution(kernel=(3, 3), num_filter=4, name="conv") + 2)
    return op, [mx.nd.ones((2, 3, 5, 5)), mx.nd.ones((4, 3, 3, 3)), mx.nd.ones((4,))]


def test_a_call_runs_the_symbol_on_its_inputs_in_list_inputs_order() -> None:
    op, (data, weight, bias) = _conv_plus_two()
    out = op(data, weight, bias)
    # every output element: 27 ones times ones, plus the bias 1, plus 2
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 4, 3, 3), 30, dtype=np.float32))
    bias[:] = 2
    np.testing.assert_array_equal(op(data, weight, bias).asnumpy(), np.full((2, 4, 3, 3), 31, dtype=np.float32))


def test_out_receives_the_result() -> None:
    op, inputs = _conv_plus_two()
    out = mx.nd.zeros((2, 4, 3, 3))
    assert op(*inputs, out=out) is out
    assert float(out.asnumpy().min()) == 30


def test_autograd_records_through_a_call() -> None:
    x, y = mx.sym.var("x"), mx.sym.var("y")
    op = mx.nd.CachedOp(x * y + x)
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        z = op(a, b) * 2
    z.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [8.0, 10.0])  # 2 * (y + 1)
    np.testing.assert_array_equal(b.grad.asnumpy(), [2.0, 4.0])  # 2 * x


def test_a_grouped_symbol_gives_a_list_of_outputs() -> None:
    x = mx.sym.var("x")
    outputs = mx.nd.CachedOp(mx.sym.Group([x + 1, x * 3]))(mx.nd.array([1.0]))
    assert [o.asnumpy().tolist() for o in outputs] == [[2.0], [3.0]]


def test_the_wrong_number_of_inputs_is_refused_with_their_names() -> None:
    op, inputs = _conv_plus_two()
    with pytest.raises(
        mx.LazyNDError, match=r"CachedOp: expected 3 input\(s\) \['conv_data', 'conv_weight', 'conv_bias'\], got 2"
    ):
        op(*inputs[:2])


def test_an_unknown_flag_is_refused_by_name() -> None:
    with pytest.raises(mx.LazyNDError, match="CachedOp: unknown flag.*'static_aloc'"):
        mx.nd.CachedOp(mx.sym.var("x") + 1, flags=[("static_aloc", True)])
    mx.nd.CachedOp(mx.sym.var("x") + 1, flags=[("static_alloc", True)])  # MXNet's flags are taken

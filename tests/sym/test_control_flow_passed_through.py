"""A loop state that a body returns unchanged, read by no bound output: its variable is still an
argument of the symbol (MXNet 1.9.1 lists it, binds it, infers its shape and gives it a zero
gradient), though the written-out loop no longer reads it.  Binding such a symbol raised a bare
KeyError from the executor's compile step, and simple_bind one from shape inference."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

S = mx.sym


def _data_output_of_a_loop_passing_its_state() -> tuple[S.Symbol, list[S.Symbol]]:
    out, states = S.contrib.foreach(lambda data, state: (data + 1, state), S.var("x"), [S.var("s")])
    return out, states


def test_the_passed_state_is_an_argument_whose_shape_and_type_come_back_as_given() -> None:
    out, _ = _data_output_of_a_loop_passing_its_state()
    assert out.list_arguments() == ["x", "s"]
    assert out.infer_shape(x=(2, 5), s=(5,)) == ([(2, 5), (5,)], [(2, 5)], [])
    assert out.infer_shape_partial(x=(2, 5)) == ([(2, 5), ()], [(2, 5)], [])
    assert out.infer_type(x="float32", s="float32")[0] == [np.float32, np.float32]
    with pytest.warns(UserWarning, match="s: "):
        assert out.infer_shape(x=(2, 5)) == (None, None, None)


@pytest.mark.parametrize("grad_req,expected", [("write", 0.0), ("add", 1.0)])
def test_bind_runs_and_the_passed_state_gets_no_gradient(grad_req: str, expected: float) -> None:
    out, _ = _data_output_of_a_loop_passing_its_state()
    args = {"x": mx.nd.ones((2, 5)), "s": mx.nd.ones((5,))}
    grads = {"x": mx.nd.ones((2, 5)), "s": mx.nd.ones((5,))}
    executor = out.bind(mx.cpu(), args, args_grad=grads, grad_req=grad_req)
    np.testing.assert_array_equal(executor.forward(is_train=True)[0].asnumpy(), np.full((2, 5), 2.0))
    executor.backward(mx.nd.ones((2, 5)))
    np.testing.assert_array_equal(grads["x"].asnumpy(), np.full((2, 5), 1.0 + (grad_req == "add")))
    np.testing.assert_array_equal(grads["s"].asnumpy(), np.full((5,), expected))


def test_simple_bind_allocates_the_passed_state_and_forward_takes_it() -> None:
    out, _ = _data_output_of_a_loop_passing_its_state()
    executor = out.simple_bind(mx.cpu(), x=(2, 5), s=(5,))
    assert executor.arg_dict["s"].shape == (5,)
    executor.forward(is_train=True, x=mx.nd.full((2, 5), 2.0), s=mx.nd.ones((5,)))
    np.testing.assert_array_equal(executor.outputs[0].asnumpy(), np.full((2, 5), 3.0))
    executor.backward(mx.nd.ones((2, 5)))
    np.testing.assert_array_equal(executor.grad_dict["s"].asnumpy(), np.zeros(5))


def test_a_second_loop_over_the_first_ones_outputs_binds() -> None:
    # MXNet's test_uniq_name: two loops whose bodies share their names, the state passed through both
    out1, states1 = _data_output_of_a_loop_passing_its_state()
    out, _ = S.contrib.foreach(lambda data, state: (data + 1, state), out1, states1)
    executor = out.bind(mx.cpu(), {"x": mx.nd.zeros((2, 5)), "s": mx.nd.ones((5,))})
    np.testing.assert_array_equal(executor.forward()[0].asnumpy(), np.full((2, 5), 2.0))


def test_an_executor_placed_on_two_devices_binds_the_passed_state() -> None:
    with mx.AttrScope(ctx_group="dev1"):
        x, s = S.var("x"), S.var("s")
    out, _ = S.contrib.foreach(lambda data, state: (data + 1, state), x, [s])
    executor = out.bind(mx.cpu(0), {"x": mx.nd.ones((2, 5)), "s": mx.nd.ones((5,))}, group2ctx={"dev1": mx.cpu(1)})
    np.testing.assert_array_equal(executor.forward()[0].asnumpy(), np.full((2, 5), 2.0))

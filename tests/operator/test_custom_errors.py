"""Custom operators used wrongly: unknown types, bad properties, errors raised in forward, all named clearly."""

from __future__ import annotations

import numpy as np
import pytest
from custom_scale_op import ScaleOp

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import EngineError, LazyNDError, OperatorError


def test_unknown_op_type_is_a_clear_error():
    with pytest.raises(OperatorError, match="op_type 'no_such_op' is not registered"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="no_such_op")
    with pytest.raises(OperatorError, match="op_type 'no_such_op'"):
        sym.Custom(sym.Variable("x"), op_type="no_such_op")


def test_register_rejects_what_is_not_a_property_class():
    with pytest.raises(LazyNDError, match="CustomOpProp subclass"):
        mx.operator.register("test_bad")(object)


class _Failing(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("broken forward")


@mx.operator.register("test_failing")
class _FailingProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Failing()


def test_an_error_in_forward_is_raised_at_the_wait_naming_custom():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_failing")
    with pytest.raises(EngineError, match="Custom.*broken forward"):
        y.asnumpy()
    # the engine keeps running
    np.testing.assert_allclose((mx.nd.ones((2,)) + 1).asnumpy(), [2, 2])


def test_an_error_in_forward_names_the_op_type():
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="test_failing")
    with pytest.raises(EngineError, match=r"Custom \(test_failing\): forward raised ValueError: broken forward"):
        y.asnumpy()


def _register_odd(op_type: str, **methods) -> None:
    """Register a property class whose ``methods`` return something odd, as ``op_type``."""
    methods.setdefault("create_operator", lambda self, ctx, shapes, dtypes: ScaleOp(2.0))
    mx.operator.register(op_type)(type(f"Odd_{op_type}", (mx.operator.CustomOpProp,), methods))


@pytest.mark.parametrize(
    ("op_type", "methods", "message"),
    [
        ("odd_args_str", {"list_arguments": lambda self: "data"}, r"list_arguments\(\) returned 'data'"),
        ("odd_outputs_none", {"list_outputs": lambda self: None}, r"list_outputs\(\) returned None"),
        ("odd_shape_none", {"infer_shape": lambda self, s: None}, "infer_shape returned None"),
        ("odd_shape_one", {"infer_shape": lambda self, s: (s,)}, "infer_shape returned"),
        ("odd_shape_flat", {"infer_shape": lambda self, s: (s, [3], [])}, "infer_shape returned the shape 3"),
        (
            "odd_shape_count",
            {"infer_shape": lambda self, s: (s, [], [])},
            r"infer_shape returned \[\] as the outputs, expected a list of 1",
        ),
        ("odd_type_one", {"infer_type": lambda self, t: (t,)}, "infer_type returned"),
        ("odd_type_name", {"infer_type": lambda self, t: (t, ["foo"], [])}, "infer_type returned 'foo'"),
    ],
)
def test_odd_property_results_are_clear_errors_naming_the_op_type(op_type, methods, message):
    _register_odd(op_type, **methods)
    with pytest.raises(OperatorError, match=rf"Custom \({op_type}\): {message}"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type=op_type).asnumpy()


def test_odd_backward_dependency_is_a_clear_error():
    _register_odd("odd_dependency", declare_backward_dependency=lambda self, out_grad, in_data, out_data: None)
    x = mx.nd.ones((2,))
    x.attach_grad()
    with pytest.raises(OperatorError, match=r"Custom \(odd_dependency\): declare_backward_dependency returned None"):
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="odd_dependency")
        y.backward()


def test_create_operator_returning_no_operator_is_a_clear_error():
    _register_odd("odd_create", create_operator=lambda self, ctx, shapes, dtypes: None)
    y = mx.nd.Custom(mx.nd.ones((2,)), op_type="odd_create")
    with pytest.raises(EngineError, match=r"Custom \(odd_create\): create_operator returned None"):
        y.asnumpy()
    np.testing.assert_allclose((mx.nd.ones((2,)) + 1).asnumpy(), [2, 2])

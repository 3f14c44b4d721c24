"""What infer_shape/infer_type, symbol arithmetic and mx.sym functions make of inputs given by name or of a wrong type."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, OperatorError


def _two_variables_named_a() -> Any:
    # two separate variables that share the name "a", as MXNet 1.9.1 lets a Group hold them
    return mx.sym.Group(
        [mx.sym.Variable("a") + 1, mx.sym.FullyConnected(mx.sym.Variable("a"), num_hidden=2, name="fc")]
    )


def test_a_shape_given_by_name_reaches_every_variable_of_that_name_as_in_mxnet() -> None:
    group = _two_variables_named_a()
    assert group.list_arguments() == ["a", "a", "fc_weight", "fc_bias"]
    # MXNet 1.9.1: ([(2, 3), (2, 3), (2, 3), (2,)], [(2, 3), (2, 2)], [])
    assert group.infer_shape(a=(2, 3)) == ([(2, 3), (2, 3), (2, 3), (2,)], [(2, 3), (2, 2)], [])


def test_a_type_given_by_name_reaches_every_variable_of_that_name() -> None:
    arg_types, out_types, _ = _two_variables_named_a().infer_type(a="float64")
    assert arg_types == [np.float64] * 4
    assert out_types == [np.float64, np.float64]


@pytest.mark.parametrize("other", [mx.nd.ones(2), "x", None], ids=["NDArray", "str", "None"])
def test_symbol_arithmetic_with_an_operand_of_another_type_is_refused_by_type(other: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="symbol arithmetic: unsupported operand type"):
        mx.sym.Variable("a") + other


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # CenterNet's flip test called mx.symbol.flip on an NDArray (MXNet: "Argument data must be Symbol")
        (lambda: mx.sym.flip(mx.nd.ones((1, 2)), axis=1), "flip: input 'data' must be a Symbol, got lazynd.ndarray"),
        (lambda: mx.sym.flip(data=mx.nd.ones((1, 2)), axis=1), "flip: input 'data' must be a Symbol"),
        (
            lambda: mx.sym.FullyConnected(mx.sym.Variable("x"), np.ones((2, 2)), num_hidden=2),
            "FullyConnected: input 'weight' must be a Symbol, got numpy.ndarray",
        ),
        (lambda: mx.sym.concat(mx.nd.ones(2), mx.nd.ones(2)), "Concat: input '#0' must be a Symbol"),
    ],
)
def test_an_array_given_for_an_input_is_refused_by_the_inputs_name(call: Any, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        call()


def test_numpy_scalars_given_by_position_are_still_parameters() -> None:
    net = mx.sym.FullyConnected(mx.sym.Variable("x"), None, None, np.int64(3))
    assert net.infer_shape(x=(2, 5))[1] == [(2, 3)]


def test_an_input_given_by_position_and_by_keyword_is_named_as_such():
    # before: "relu: unknown input(s) ['data']; inputs are ['data']"
    a = mx.sym.Variable("a")
    with pytest.raises(OperatorError, match="relu: input 'data' is given both by position and by keyword"):
        mx.sym.relu(a, data=a)


def test_a_number_where_the_only_input_goes_names_the_input():
    # before: "relu: 1 parameters given by position, it has 0 more to set ([])"
    with pytest.raises(OperatorError, match="relu: input 'data' must be a Symbol, got int 3"):
        mx.sym.relu(3)


def test_a_number_after_the_parameters_still_names_the_parameters():
    # past the input symbols, too many values are still a count of parameters
    with pytest.raises(OperatorError, match=r"sum: 4 parameters given by position, it has 3 more to set"):
        mx.sym.sum(mx.sym.Variable("a"), 1, True, False, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.sym.relu(mx.sym.Variable("a"), attr="lr_mult"),
        lambda: mx.sym.Variable("v", attr=["ctx_group"]),
    ],
    ids=["operator", "variable"],
)
def test_attributes_that_are_not_a_dict_are_an_argument_type_error(make):
    # before: a bare AttributeError ('str' object has no attribute 'items')
    with pytest.raises(ArgumentTypeError, match=r"(relu|Variable 'v'): attributes must be a dict"):
        make()

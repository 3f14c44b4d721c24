"""What infer_shape/infer_type, symbol arithmetic and mx.sym functions make of inputs given by name or of a wrong type."""

from __future__ import annotations

import json
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
    with pytest.raises(ArgumentTypeError, match=message):
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
    with pytest.raises(ArgumentTypeError, match=r"relu: input 'data' \(position 0\) must be a Symbol, got int 3"):
        mx.sym.relu(3)


def test_a_number_after_the_parameters_still_names_the_parameters():
    # past the input symbols, too many values are still a count of parameters
    with pytest.raises(OperatorError, match=r"sum: 4 parameters given by position, it takes 3 that way"):
        mx.sym.sum(mx.sym.Variable("a"), 1, True, False, 3)


# MXNet 1.9.1's generated functions list every input before the parameters, and refuse a value that
# is not a symbol on an input's place ("Argument weight must be Symbol instances, but got 3"); a
# variadic operator takes only symbols by position ("Positional arguments must be Symbol instances").
@pytest.mark.parametrize(
    ("call", "message"),
    [
        # before: "FullyConnected: invalid value 3 for parameter 'no_bias'"
        (lambda: mx.sym.FullyConnected(3, num_hidden=2), r"FullyConnected: input 'data' \(position 0\)"),
        # before: accepted, 10 read as num_hidden and a weight variable made
        (lambda: mx.sym.FullyConnected(mx.sym.Variable("x"), 10), r"FullyConnected: input 'weight' \(position 1\)"),
        (
            lambda: mx.sym.Convolution(mx.sym.Variable("x"), (3, 3), num_filter=2),
            r"Convolution: input 'weight' \(position 1\) must be a Symbol, got tuple \(3, 3\)",
        ),
        # before: accepted, 3 read as axis
        (lambda: mx.sym.sum(3), r"sum: input 'data' \(position 0\) must be a Symbol, got int 3"),
        (lambda: mx.sym.reshape((2, 3)), r"Reshape: input 'data' \(position 0\)"),
        (lambda: mx.sym.BatchNorm(mx.sym.Variable("x"), 3), r"BatchNorm: input 'gamma' \(position 1\)"),
        (lambda: mx.sym.dot(mx.sym.Variable("x"), 3), r"dot: input 'rhs' \(position 1\)"),
    ],
)
def test_a_number_on_an_input_place_is_refused_by_the_inputs_name(call: Any, message: str) -> None:
    with pytest.raises(ArgumentTypeError, match=message):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.sym.Concat(mx.sym.Variable("a"), 2),  # before: accepted, 2 read as dim
        lambda: mx.sym.Concat(mx.sym.Variable("a"), mx.sym.Variable("b"), 2),
        lambda: mx.sym.stack(mx.sym.Variable("a"), 1),
        lambda: mx.sym.Concat(2),
    ],
    ids=["one-symbol", "two-symbols", "stack", "no-symbol"],
)
def test_a_number_given_by_position_to_a_variadic_operator_is_refused(call: Any) -> None:
    with pytest.raises(ArgumentTypeError, match=r"(Concat|stack): input #\d \(position \d\) must be a Symbol, got int"):
        call()


def test_the_refusal_of_a_number_for_an_input_is_also_a_type_error() -> None:
    with pytest.raises(TypeError):
        mx.sym.FullyConnected(3, num_hidden=2)


@pytest.mark.parametrize(
    ("call", "params"),
    [
        (lambda x, y: mx.sym.sum(x, 1), {"axis": "1"}),
        (lambda x, y: mx.sym.sum(x, None), {"axis": "None"}),
        (lambda x, y: mx.sym.transpose(x, (1, 0)), {"axes": "(1, 0)"}),
        (lambda x, y: mx.sym.reshape(x, (2, 3)), {"shape": "(2, 3)"}),
        (lambda x, y: mx.sym.Concat(x, y, dim=1), {"dim": "1", "num_args": "2"}),
        (lambda x, y: mx.sym.FullyConnected(x, y, mx.sym.Variable("b"), 10), {"num_hidden": "10"}),
        (lambda x, y: mx.sym.FullyConnected(x, None, None, 10), {"num_hidden": "10"}),
        (lambda x, y: mx.sym.dot(x, y, True), {"transpose_a": "True"}),
        (lambda x, y: mx.sym.SoftmaxOutput(x, y, 2.0), {"grad_scale": "2.0"}),
        (lambda x, y: mx.sym.slice_axis(x, 0, 1, 2), {"axis": "0", "begin": "1", "end": "2"}),
        (lambda x, y: mx.sym.eye(3, 4, 1), {"N": "3", "M": "4", "k": "1"}),
        # MXNet's legacy operators list no auxiliary state by position: a parameter follows the data
        (lambda x, y: mx.sym.BatchNorm_v1(x, y, mx.sym.Variable("b"), 0.001), {"eps": "0.001"}),
        (lambda x, y: mx.sym.IdentityAttachKLSparseReg(x, 0.2), {"sparseness_target": "0.2"}),
    ],
)
def test_parameters_by_position_after_every_input_still_work_as_in_mxnet(call: Any, params: dict) -> None:
    attrs = json.loads(call(mx.sym.Variable("x"), mx.sym.Variable("y")).tojson())["nodes"][-1]["attrs"]
    assert {k: attrs[k] for k in params} == params


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

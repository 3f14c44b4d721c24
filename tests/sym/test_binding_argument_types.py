"""bind / simple_bind / copy_params_from refuse arguments of the wrong type by name, as MXNet's TypeError does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError, ContextError, ShapeError


def _sum_of_two() -> Any:
    return mx.sym.Variable("a") + mx.sym.Variable("b")


def _ones() -> Any:
    return mx.nd.ones((2, 3))


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(lambda: [np.ones((2, 3))] * 2, id="numpy-arrays"),
        pytest.param(lambda: [1, 2], id="ints"),
        pytest.param(lambda: "ab", id="string"),
        pytest.param(lambda: 5, id="int"),
        pytest.param(lambda: {"a": _ones(), "b": np.ones((2, 3))}, id="dict-with-numpy"),
    ],
)
def test_bind_refuses_args_that_are_not_ndarrays(args: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="bind: args"):
        _sum_of_two().bind(mx.cpu(), args())


@pytest.mark.parametrize("args_grad", [lambda: [np.ones((2, 3))] * 2, lambda: 5], ids=["numpy-arrays", "int"])
def test_bind_refuses_args_grad_that_are_not_ndarrays(args_grad: Any) -> None:
    with pytest.raises(ArgumentTypeError, match="bind: args_grad"):
        _sum_of_two().bind(mx.cpu(), [_ones(), _ones()], args_grad=args_grad())


def test_bind_refuses_a_gradient_array_of_another_shape_than_its_argument() -> None:
    with pytest.raises(ShapeError, match=r"args_grad\['a'\] has shape \(3, 3\), expected \(2, 3\)"):
        _sum_of_two().bind(mx.cpu(), [_ones(), _ones()], args_grad=[mx.nd.ones((3, 3)), _ones()])


def test_eval_refuses_numpy_arrays() -> None:
    with pytest.raises(ArgumentTypeError, match=r"args\['a'\] must be an NDArray, got ndarray"):
        _sum_of_two().eval(a=np.ones(2), b=np.ones(2))


@pytest.mark.parametrize("bind_call", ["bind", "simple_bind"])
def test_grad_req_of_a_wrong_type_is_refused(bind_call: str) -> None:
    symbol = _sum_of_two()
    with pytest.raises(ArgumentTypeError, match="grad_req must be a string, a list or a dict"):
        if bind_call == "bind":
            symbol.bind(mx.cpu(), [_ones(), _ones()], args_grad=[_ones(), _ones()], grad_req=3)
        else:
            symbol.simple_bind(mx.cpu(), grad_req=3, a=(2, 3), b=(2, 3))


def test_simple_bind_with_grad_req_none_allocates_no_gradients_as_mxnet() -> None:
    executor = _sum_of_two().simple_bind(mx.cpu(), grad_req=None, a=(2, 3), b=(2, 3))
    assert executor.grad_dict == {"a": None, "b": None}
    assert executor.forward()[0].shape == (2, 3)


@pytest.mark.parametrize(
    ("keyword", "value", "error"),
    [
        ("type_dict", "float32", ArgumentTypeError),
        ("stype_dict", "default", ArgumentTypeError),
        ("shared_exec", 5, ArgumentTypeError),
        ("shared_buffer", {"a": 5}, ArgumentTypeError),
        ("group2ctx", [mx.cpu()], ContextError),
    ],
)
def test_simple_bind_refuses_a_keyword_of_the_wrong_type_by_name(keyword: str, value: Any, error: type) -> None:
    with pytest.raises(error, match=keyword):
        _sum_of_two().simple_bind(mx.cpu(), a=(2, 3), b=(2, 3), **{keyword: value})


def test_copy_params_from_refuses_a_list() -> None:
    executor = _sum_of_two().simple_bind(mx.cpu(), a=(2, 3), b=(2, 3))
    with pytest.raises(ArgumentTypeError, match="copy_params_from: arg_params must be a dict"):
        executor.copy_params_from([_ones()])


def test_bind_refuses_a_gradient_array_of_another_dtype_than_its_argument() -> None:
    # as MXNet ("data type do not match"): the gradient would be written in the argument's dtype
    args = {"a": _ones(), "b": _ones()}
    with pytest.raises(ArgumentTypeError, match=r"args_grad\['b'\] has dtype float64, expected float32"):
        _sum_of_two().bind(mx.cpu(), args, args_grad={"b": mx.nd.zeros((2, 3), dtype="float64")})

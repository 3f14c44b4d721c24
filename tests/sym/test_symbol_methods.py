"""Symbol's method forms of operators (``x.reshape((0, -1))``, ``x.sum(axis=1)``), as in MXNet 1.x.

Expected values are MXNet 1.9.1's results for the same graphs.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import ArgumentTypeError


def _forward(symbol: mx.sym.Symbol, x: list) -> np.ndarray:
    executor = symbol.bind(mx.cpu(), {"x": mx.nd.array(x)})
    return executor.forward()[0].asnumpy()


def test_chained_methods_compute_mxnets_values() -> None:
    x = mx.sym.var("x")
    y = (x.reshape((0, -1)).sum(axis=1, keepdims=True) + abs(x).max(axis=(1, 2)).expand_dims(1)).astype("float64")
    out = _forward(y, [[[1, -2], [3, 4]], [[-5, 6], [7, -8]]])
    # MXNet 1.9.1: [[10.0], [8.0]] float64
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[10.0], [8.0]])


def test_positional_parameters_follow_the_operators_order() -> None:
    x = mx.sym.var("x")
    out = _forward(x.slice_axis(1, 0, 2).clip(0, 3), [[1, -2, 9], [3, 4, 5]])
    np.testing.assert_array_equal(out, [[1.0, 0.0], [3.0, 3.0]])  # MXNet 1.9.1
    assert x.sum(1).infer_shape(x=(2, 3))[1] == [(2,)]
    assert x.tile((2, 1)).infer_shape(x=(2, 3))[1] == [(4, 3)]
    assert x.transpose(axes=(1, 0)).flip(0).infer_shape(x=(2, 5))[1] == [(5, 2)]
    assert x.split(3, 1).infer_shape(x=(2, 3))[1] == [(2, 1), (2, 1), (2, 1)]


def test_a_method_takes_further_symbols_as_inputs() -> None:
    x, y = mx.sym.var("x"), mx.sym.var("y")
    z = x.broadcast_like(y)
    assert z.list_arguments() == ["x", "y"]
    assert z.infer_shape(x=(1, 3), y=(2, 3))[1] == [(2, 3)]


def test_infer_type_partial_leaves_unknown_types_none() -> None:
    x, y = mx.sym.var("x"), mx.sym.var("y")
    # MXNet 1.9.1: ([None], [None], []) and ([float16, float16], [float16], [])
    assert x.infer_type_partial() == ([None], [None], [])
    assert (x + y).infer_type_partial(x="float16") == ([np.float16, np.float16], [np.float16], [])


def test_ndarray_only_methods_are_refused_by_name() -> None:
    x = mx.sym.var("x")
    assert hasattr(x, "asnumpy")  # as in MXNet, where calling it raises NotImplementedForSymbol
    with pytest.raises(mx.LazyNDError, match=r"Symbol\.asnumpy: only an NDArray"):
        x.asnumpy()
    with pytest.raises(mx.LazyNDError, match=r"Symbol\.as_in_context"):
        x.as_in_context(mx.cpu())


def test_an_unknown_method_is_still_an_attribute_error() -> None:
    assert not hasattr(mx.sym.var("x"), "no_such_operator")


def test_a_symbol_has_no_truth_value_as_mxnet_says() -> None:
    from lazynd.base import NotImplementedForSymbol

    # MXNet 1.9.1 raises NotImplementedForSymbol, which programs catch by that name
    with pytest.raises(NotImplementedForSymbol, match="no truth value"):
        bool(mx.sym.var("x") > 1)


def test_a_multi_output_symbol_is_named_for_its_node() -> None:
    # MXNet 1.9.1: split(x).name == 'split0'; a group of several nodes has no name
    x = mx.sym.var("x")
    with mx.name.NameManager():
        assert mx.sym.split(x, num_outputs=2).name == "split0"
    assert mx.sym.Group([x, x]).name == "x"
    assert mx.sym.Group([x, mx.sym.var("y")]).name is None


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda x: np.float32(2) * x, [2.0, 4.0]),
        (lambda x: np.float64(1.5) + x, [2.5, 3.5]),
        (lambda x: np.int64(8) / x, [8.0, 4.0]),
        (lambda x: np.float32(2) ** x, [2.0, 4.0]),
        (lambda x: np.float32(1.5) < x, [0.0, 1.0]),
    ],
    ids=["mul", "add", "div", "pow", "compare"],
)
def test_a_numpy_scalar_on_the_left_of_a_symbol_builds_a_symbol(make, expected):
    # MXNet 1.9.1 builds the symbol; NumPy read the symbol as a sequence and failed with a ValueError
    out = make(mx.sym.Variable("x"))
    assert isinstance(out, mx.sym.Symbol)
    np.testing.assert_allclose(out.eval(ctx=mx.cpu(), x=mx.nd.array([1.0, 2.0]))[0].asnumpy(), expected)


def test_a_numpy_array_with_a_symbol_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="symbol arithmetic: unsupported operand type ndarray"):
        np.ones(2) + mx.sym.Variable("x")


def test_a_group_prints_its_nodes_names_and_has_no_attributes_as_mxnets() -> None:
    data = mx.sym.Variable("data", lr_mult=2)
    split = mx.sym.SliceChannel(data, num_outputs=2, name="sl")
    group = mx.sym.Group([data, split[1]])
    assert repr(group) == "<Symbol group [data, sl]>"
    assert group.attr("lr_mult") is None and group.attr("num_outputs") is None
    assert group.list_attr() == data.list_attr()  # the first output's node's
    assert split.attr("num_outputs") == "2" and split.list_attr() == {"num_outputs": "2"}


def test_dir_lists_the_operator_methods_as_mxnet():
    # MXNet's Symbol lists reshape, sum, argmax...; lazynd's come from __getattr__ (every operator an
    # NDArray has as a method), and dir shows them
    listed = dir(mx.sym.Variable("x"))
    for name in ("reshape", "sum", "argmax", "softmax", "transpose", "expand_dims", "astype", "infer_shape"):
        assert name in listed


@pytest.mark.parametrize("key", [None, ["lr_mult"], {"k": 1}, 1.5], ids=repr)
def test_attr_refuses_a_key_that_is_no_name(key) -> None:
    # "unhashable type: 'list'" from inside before (None and numbers were looked up and answered None)
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    with pytest.raises(ArgumentTypeError, match="Symbol.attr: key must be an attribute name"):
        net.attr(key)

"""Symbol functions: pow/maximum/minimum/hypot on symbols and numbers, zeros/ones/arange, sym._internal."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import OperatorError


def _run(net, ctx, **inputs):
    args = {k: mx.nd.array(v, ctx=ctx) for k, v in inputs.items()}
    return net.bind(ctx, args).forward()[0].asnumpy()


@pytest.mark.parametrize(
    ("name", "reference"),
    [("pow", np.power), ("maximum", np.maximum), ("minimum", np.minimum), ("hypot", np.hypot)],
)
def test_binary_functions_of_symbols_and_numbers(ctx, name, reference):
    function = getattr(sym, name)
    x, y = sym.Variable("x"), sym.Variable("y")
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(_run(function(x, y), ctx, x=a, y=b), reference(a, b), rtol=1e-5)
    np.testing.assert_allclose(_run(function(x, 2.0), ctx, x=a), reference(a, 2.0), rtol=1e-5)
    np.testing.assert_allclose(_run(function(2.0, x), ctx, x=a), reference(2.0, a), rtol=1e-5)
    assert function(3.0, 4.0) == pytest.approx(float(reference(3.0, 4.0)))


def test_pow_names_its_node_as_mxnet_does():
    assert sym.pow(sym.Variable("x"), 2).name.startswith("_powerscalar")


def test_wrong_operand_type_is_a_clear_error():
    with pytest.raises(OperatorError, match="maximum: right must be a Symbol or a number"):
        sym.maximum(sym.Variable("x"), "2")


def test_zeros_ones_arange_are_graph_nodes(ctx):
    np.testing.assert_allclose(_run(sym.zeros((2, 3)), ctx), np.zeros((2, 3)))
    np.testing.assert_allclose(_run(sym.ones((2,), dtype="int32"), ctx), [1, 1])
    np.testing.assert_allclose(_run(sym.arange(0, 5, 2, repeat=2), ctx), [0, 0, 2, 2, 4, 4])
    np.testing.assert_allclose(_run(sym.arange(3), ctx), [0, 1, 2])
    x = sym.Variable("x")
    net = x + sym.ones((3,))
    assert net.infer_shape()[1] == [(3,)]
    assert sym.load_json(sym.zeros((2, 2)).tojson()).infer_shape()[1] == [(2, 2)]


def test_arange_with_zero_step_is_a_clear_error():
    with pytest.raises(OperatorError, match="step must not be 0"):
        sym.arange(0, 3, 0).infer_shape()


def test_internal_names_build_symbols():
    net = sym._internal._mul_scalar(sym.Variable("x"), scalar=2)
    np.testing.assert_allclose(_run(net, mx.cpu(), x=np.array([1.0, 2.0])), [2, 4])
    with pytest.raises(AttributeError, match="no such operator"):
        sym._internal._nope  # noqa: B018


def test_creation_functions_take_mxnets_positional_parameters(ctx):
    # MXNet 1.9.1: eye(N, M, k, dtype), linspace(start, stop, num, endpoint, name, dtype),
    # arange(start, stop, step, repeat, infer_range, name, dtype), zeros/ones(shape, dtype), full(shape, val, dtype)
    def value(s):
        return s.bind(ctx, {}).forward()[0].asnumpy()

    eye = value(sym.eye(3, 4, 1, "float64"))
    np.testing.assert_array_equal(eye, np.eye(3, 4, 1))
    assert eye.dtype == np.float64
    np.testing.assert_allclose(value(sym.linspace(0, 1, 5, False)), [0, 0.2, 0.4, 0.6, 0.8], rtol=1e-6)
    spaced = sym.linspace(0, 1, 5, True, "lin", "float64")
    assert spaced.name == "lin"
    np.testing.assert_allclose(value(spaced), np.linspace(0, 1, 5))
    ranged = sym.arange(0, 5, 2, 2, False, "ar", "int32")
    assert ranged.name == "ar"
    np.testing.assert_array_equal(value(ranged), [0, 0, 2, 2, 4, 4])
    assert value(ranged).dtype == np.int32
    assert value(sym.zeros((2, 2), "int32")).dtype == np.int32
    np.testing.assert_array_equal(value(sym.ones((2,), "float64")), [1.0, 1.0])
    np.testing.assert_array_equal(value(sym.full((2, 2), 3, "int32")), np.full((2, 2), 3))


def test_operators_take_parameters_by_position_after_their_inputs():
    # MXNet's generated functions: inputs first, then the parameters in order (sym.sum(x, 1) sums axis 1)
    x = sym.Variable("x")
    assert sym.sum(x, 1).infer_shape(x=(2, 3, 4))[1] == [(2, 4)]
    assert sym.sum(x, 1, True).infer_shape(x=(2, 3, 4))[1] == [(2, 1, 4)]
    assert sym._eye(2, 3, 1).infer_shape()[1] == [(2, 3)]
    assert sym._linspace(0, 1, 7).infer_shape()[1] == [(7,)]
    with pytest.raises(OperatorError, match="by position"):
        sym.sum(x, 1, True, False, 7)  # a string there is the name, as in MXNet
    with pytest.raises(OperatorError, match="before the parameters"):
        sym.sum(x, 1, sym.Variable("y"))


def _last_node_attrs(symbol):
    return json.loads(symbol.tojson())["nodes"][-1]["attrs"]


def test_random_functions_write_mxnets_default_parameters():
    # MXNet 1.9.1 writes the defaults as its functions spell them: 0 and 1, not 0.0 and 1.0
    assert _last_node_attrs(sym.random.uniform(shape=(2,))) == {"low": "0", "high": "1", "shape": "(2,)"}
    assert _last_node_attrs(sym.random.randn(2, 3)) == {"loc": "0", "scale": "1", "shape": "(2, 3)"}
    assert _last_node_attrs(sym.random.poisson(shape=2))["lam"] == "1"
    assert _last_node_attrs(sym.random.gamma(shape=2))["alpha"] == "1"
    assert _last_node_attrs(sym.random.generalized_negative_binomial(shape=2))["mu"] == "1"
    assert _last_node_attrs(sym.random.negative_binomial(shape=2))["p"] == "1"
    assert sym.random.uniform(shape=(3,)).eval()[0].shape == (3,)


def test_full_writes_its_value_as_a_float_as_mxnet():
    assert _last_node_attrs(sym.full((2,), 3))["value"] == "3.0"
    assert sym.full((2,), 3).eval()[0].asnumpy().tolist() == [3.0, 3.0]


@pytest.mark.parametrize("make", [sym.zeros, sym.ones], ids=["zeros", "ones"])
def test_creation_functions_default_to_float32_only_for_no_dtype(make):
    assert make((2,)).infer_type()[1] == [np.float32]
    # 0 or an array is a dtype to parse, refused by name (MXNet 1.9.1 refuses them too), not float32
    for dtype in (0, np.ones(2)):
        with pytest.raises(OperatorError, match="parameter 'dtype'"):
            make((2,), dtype=dtype)

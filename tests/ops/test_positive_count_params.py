"""Counts that MXNet bounds below by 1 (units, filters, pieces, vocabulary) are refused at the call
that gives them, in both faces, as MXNet refuses them when the operator is created."""

from __future__ import annotations

import pytest

import lazynd as mx

COUNTS = [
    ("FullyConnected", "num_hidden", {}),
    ("Convolution", "num_filter", {"kernel": (2, 2)}),
    ("Deconvolution", "num_filter", {"kernel": (2, 2)}),
    ("SliceChannel", "num_outputs", {}),
    ("Embedding", "input_dim", {"output_dim": 3}),
    ("Embedding", "output_dim", {"input_dim": 3}),
]


@pytest.mark.parametrize("value", [0, -3, "0"])
@pytest.mark.parametrize(("op", "param", "others"), COUNTS)
def test_symbol_creation_refuses_a_count_below_one(op: str, param: str, others: dict, value: object) -> None:
    with pytest.raises(
        mx.OperatorError, match=rf"{op}: invalid value .* for parameter '{param}': expected an integer >= 1"
    ):
        getattr(mx.sym, op)(mx.sym.Variable("data"), **{param: value}, **others)


def test_fully_connected_with_no_units_is_refused_by_the_imperative_call_too() -> None:
    with pytest.raises(mx.OperatorError, match="num_hidden"):
        mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((0, 3)), mx.nd.ones((0,)), num_hidden=0)


def test_infer_shape_of_a_symbol_from_json_with_no_units_names_the_parameter() -> None:
    text = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc").tojson()
    with pytest.raises(mx.LazyNDError, match="num_hidden"):
        mx.sym.load_json(text.replace('"num_hidden": "4"', '"num_hidden": "0"'))


COUNTS_OF_INPUTS = [
    ("multi_sum_sq", "num_arrays"),
    ("multi_all_finite", "num_arrays"),
    ("reset_arrays", "num_arrays"),
    ("multi_sgd_update", "num_weights"),
    ("preloaded_multi_sgd_update", "num_weights"),
    ("preloaded_multi_mp_sgd_mom_update", "num_weights"),
]


@pytest.mark.parametrize("value", [2**31, 2**63], ids=["2**31", "2**63"])
@pytest.mark.parametrize(("op", "param"), COUNTS_OF_INPUTS + [(op, param) for op, param, _ in COUNTS])
def test_a_count_past_mxnets_int_is_refused_by_name(op: str, param: str, value: int) -> None:
    # a count of inputs past it had lazynd name that many inputs first: a call that never ended
    with pytest.raises(
        mx.OperatorError,
        match=rf"{op}: invalid value {value} for parameter '{param}': expected an integer <= 2147483647",
    ):
        getattr(mx.nd, op)(mx.nd.ones((2, 3)), **{param: value})

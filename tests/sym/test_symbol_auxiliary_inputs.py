"""Auxiliary states (BatchNorm's running mean and variance) as inputs of a graph: they are
variables, updated in place by their operator, and can be replaced by name when composing."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import FormatError, OperatorError


def test_an_operator_output_is_refused_as_an_auxiliary_state():
    # BatchNorm would write its running mean over sum0's output, which the group also returns
    # (it did: [3, 5, 7] read back as [2.85, 4.75, 6.65]); MXNet: 'Mutation target can only be Variable'
    x = sym.Variable("x")
    with pytest.raises(OperatorError, match=r"BatchNorm 'bn': auxiliary state 'moving_mean' must be a variable"):
        sym.BatchNorm(x, moving_mean=sym.sum(x, axis=0, name="total"), name="bn")


def test_composing_an_operator_output_into_an_auxiliary_state_is_refused():
    bn = sym.BatchNorm(sym.Variable("x"), name="bn")
    with pytest.raises(OperatorError, match=r"auxiliary state 'moving_mean'.*'twice_output'"):
        bn(bn_moving_mean=sym.relu(sym.Variable("q"), name="twice"))


def test_compose_replaces_an_auxiliary_state_by_name_as_mxnet():
    bn = sym.BatchNorm(sym.Variable("x"), name="bn")
    composed = bn(bn_moving_mean=sym.Variable("m"))
    assert composed.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert composed.list_auxiliary_states() == ["m", "bn_moving_var"]
    executor = composed.simple_bind(mx.cpu(), x=(2, 3))
    executor.aux_dict["m"][:] = 5
    out = executor.forward(is_train=False, x=mx.nd.ones((2, 3)))[0].asnumpy()
    # (1 - 5) / sqrt(0 + 1e-3), gamma taken as 1 (fix_gamma) and beta 0: MXNet 1.9.1 gives -126.4911
    np.testing.assert_allclose(out, np.full((2, 3), -4 / np.sqrt(1e-3)), rtol=1e-5)


def test_a_file_with_an_operator_output_as_auxiliary_state_is_refused():
    # MXNet 1.9.1 loads such a file and crashes (segmentation fault) running it
    document = {
        "nodes": [
            {"op": "null", "name": "x", "inputs": []},
            {"op": "sum", "name": "total", "attrs": {"axis": "0"}, "inputs": [[0, 0, 0]]},
            {"op": "BatchNorm", "name": "bn", "inputs": [[0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]]},
        ],
        "arg_nodes": [0],
        "heads": [[2, 0, 0]],
    }
    with pytest.raises(FormatError, match=r"node 2 \('bn'\).*'moving_mean' must be a variable.*'total_output'"):
        sym.load_json(json.dumps(document))

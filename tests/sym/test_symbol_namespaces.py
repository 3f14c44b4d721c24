"""MXNet 1.x's symbolic helpers: ``mx.sym.random``, ``full``, ``power``, ``Symbol.eval`` and the
operator sub-namespaces (``mx.sym.op``, ``contrib``, ``linalg``, ``image``).

Expected values are MXNet 1.9.1's.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx


def test_eval_runs_one_forward_pass_with_named_arguments() -> None:
    x = mx.sym.var("x")
    outputs = (x * 2).eval(ctx=mx.cpu(), x=mx.nd.ones((2,)))
    assert isinstance(outputs, list)  # MXNet 1.9.1: a list of NDArrays, here [[2. 2.]]
    np.testing.assert_array_equal(outputs[0].asnumpy(), [2.0, 2.0])


def test_full_and_power() -> None:
    np.testing.assert_array_equal(mx.sym.full((2,), 3).eval()[0].asnumpy(), [3.0, 3.0])  # MXNet 1.9.1: [3. 3.]
    assert mx.sym.power(2, 3) == 8  # MXNet 1.9.1: 8
    x = mx.sym.var("x")
    np.testing.assert_array_equal(mx.sym.power(x, 2).eval(x=mx.nd.array([1.0, 3.0]))[0].asnumpy(), [1.0, 9.0])


def test_sym_random_samplers_build_random_nodes() -> None:
    node = mx.sym.random.uniform(low=-1, high=1, shape=(2, 3))
    assert node.infer_shape()[1] == [(2, 3)]  # MXNet 1.9.1: [(2, 3)]
    values = node.eval()[0].asnumpy()
    assert ((values >= -1) & (values < 1)).all()
    assert mx.sym.random.normal(shape=(4,), dtype="float64").infer_type()[1] == [np.float64]


def test_operator_sub_namespaces_resolve_registered_operators() -> None:
    data = mx.sym.var("data")
    fc = mx.sym.op.FullyConnected(data, num_hidden=3)
    assert fc.infer_shape(data=(2, 5))[1] == [(2, 3)]


def test_an_unregistered_namespace_operator_is_named() -> None:
    from lazynd.ops import registry

    if registry.exists("_contrib_no_such_op"):
        pytest.skip("registered")
    with pytest.raises(mx.LazyNDError, match=r"mx\.sym\.contrib\.no_such_op: .*_contrib_no_such_op"):
        _ = mx.sym.contrib.no_such_op

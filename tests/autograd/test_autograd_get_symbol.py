"""``mx.autograd.get_symbol``: the recorded computation as a symbol, named as MXNet 1.9.1 names it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import LazyNDError


def _batchnorm_split_graph() -> tuple:
    x = mx.nd.array(np.random.default_rng(0).random((2, 3, 4, 4)))
    x.attach_grad()
    gamma, beta, mean, var = mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,))
    with mx.autograd.record():
        y = mx.nd.BatchNorm(x, gamma, beta, mean, var)
        parts = mx.nd.split(y, num_outputs=2, axis=2)
        z = mx.nd.concat(parts[1], parts[0], dim=2)
        out = z * y
    return x, out


def test_names_follow_mxnet() -> None:
    # MXNet 1.9.1 on the same program: one count for variables and constants, auxiliary states
    # included, in the order a depth-first walk meets them; operators node_0, node_1...
    _, out = _batchnorm_split_graph()
    s = mx.autograd.get_symbol(out)
    assert s.list_arguments() == ["var0", "null1", "null2"]
    assert s.list_auxiliary_states() == ["null3", "null4"]
    assert s.get_internals().list_outputs() == [
        "var0", "null1", "null2", "null3", "null4",
        "node_0_output", "node_1_output0", "node_1_output1", "node_2_output", "node_3_output",
    ]  # fmt: skip


def test_a_constant_read_after_a_chain_is_named_after_the_chain_s_variables() -> None:
    x, w = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.relu(x * w + 1)
        z = mx.nd.FullyConnected(y.reshape((1, 2)), mx.nd.ones((3, 2)), num_hidden=3, no_bias=True)
    s = mx.autograd.get_symbol(z)
    assert s.list_arguments() == ["var0", "var1", "null2"]  # as MXNet 1.9.1
    assert s.list_outputs() == ["node_4_output"]
    got = s.eval(var0=mx.nd.array([1.0, 2.0]), var1=mx.nd.array([3.0, 4.0]), null2=mx.nd.ones((3, 2)))[0]
    np.testing.assert_array_equal(got.asnumpy(), z.asnumpy())


def test_the_symbol_computes_the_recorded_values_and_gradients() -> None:
    rng = np.random.default_rng(1)
    data = mx.nd.array(rng.standard_normal((8, 5)))
    label = mx.nd.array(rng.integers(0, 3, 8).astype(np.float32))
    w1, b1 = mx.nd.array(rng.standard_normal((6, 5))), mx.nd.zeros((6,))
    w2, b2 = mx.nd.array(rng.standard_normal((3, 6))), mx.nd.zeros((3,))
    params = [w1, b1, w2, b2]
    for p in params:
        p.attach_grad()
    with mx.autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(data, w1, b1, num_hidden=6))
        loss = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, w2, b2, num_hidden=3), label)
    s = mx.autograd.get_symbol(loss)
    assert s.list_arguments() == ["null0", "var1", "var2", "var3", "var4", "null5"]
    values = dict(zip(s.list_arguments(), [data, *params, label], strict=True))
    grads = {name: mx.nd.zeros(values[name].shape) for name in ("var1", "var2", "var3", "var4")}
    ex = s.bind(mx.cpu(), args=values, args_grad=grads, grad_req={n: "write" if n in grads else "null" for n in values})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), loss.asnumpy(), rtol=1e-6)
    ex.backward()
    loss.backward()
    for name, p in zip(("var1", "var2", "var3", "var4"), params, strict=True):
        np.testing.assert_allclose(grads[name].asnumpy(), p.grad.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "key",
    [
        0,
        -1,
        slice(1, 2),
        (slice(None), 1),
        (1, slice(0, 2)),
        (slice(None, None, -1),),
        (None, 0),
        (Ellipsis, 1),
        (0, 1, 2),
    ],
)
def test_views_by_basic_indexing_become_slice_and_reshape(key) -> None:
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    x.attach_grad()
    with mx.autograd.record():
        r = x[key] * 2
    s = mx.autograd.get_symbol(r)
    np.testing.assert_array_equal(s.eval(var0=x)[0].asnumpy(), r.asnumpy())


def test_a_long_recorded_chain_needs_no_recursion() -> None:
    x = mx.nd.ones((2,))
    x.attach_grad()
    h = x
    with mx.autograd.record():
        for _ in range(3000):
            h = h + 1
    s = mx.autograd.get_symbol(h)
    assert s.list_outputs() == ["node_2999_output"]
    assert len(s.get_internals().list_outputs()) == 3001


def test_refusals_name_what_is_wrong() -> None:
    with pytest.raises(LazyNDError, match="must be an NDArray, got list"):
        mx.autograd.get_symbol([1.0])
    with pytest.raises(LazyNDError, match=r"x \(shape \(2,\)\) is not in a recorded graph"):
        mx.autograd.get_symbol(mx.nd.ones((2,)))
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = x.reshape((3, 2)) * 2
    y.backward()  # frees the graph, and with it the reshape's shape
    with pytest.raises(LazyNDError, match="was freed by a backward; pass retain_graph=True"):
        mx.autograd.get_symbol(y)
    with mx.autograd.record():
        target = mx.nd.zeros((2, 3))
        target[0] = x[1] * 3
        z = target * 2
    with pytest.raises(LazyNDError, match="holds '_set_value', which has no symbol form"):
        mx.autograd.get_symbol(z)


def test_recorded_copies_become_copy_or_cast_nodes() -> None:
    # a gradient computed with create_graph=True may be such a copy: MXNet's higher-order tests
    # call get_symbol on it to see which variables it reads
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        same = (x * 2).copy()
        into = mx.nd.zeros((2,), dtype="float16")
        (x + 1).copyto(into)
    for array, op, expected in ((same, "_copy", [2.0, 10.0]), (into, "Cast", [2.0, 6.0])):
        s = mx.autograd.get_symbol(array)
        assert [node["op"] for node in json.loads(s.tojson())["nodes"]][-1] == op
        assert s.list_arguments() == ["var0"]
        out = s.eval(var0=mx.nd.array([1.0, 5.0]))[0]
        assert out.asnumpy().tolist() == expected and out.dtype == array.dtype


def test_get_symbol_is_part_of_mx_autograd() -> None:
    assert "get_symbol" in dir(mx.autograd)
    from lazynd_sym.autograd_symbol import get_symbol

    assert mx.autograd.get_symbol is get_symbol

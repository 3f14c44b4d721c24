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


def test_sym_random_multinomial_binds_and_draws(ctx) -> None:
    probs = mx.sym.var("p")
    node = mx.sym.random.multinomial(probs, shape=3)
    # MXNet 1.9.1: get_prob defaults to True in the symbol function, so two outputs, samples int32
    assert len(node.list_outputs()) == 2
    assert node.infer_shape(p=(2, 4))[1] == [(2, 3), (2, 3)]
    assert node.infer_type(p="float32")[1] == [np.int32, np.float32]
    p = np.array([[0, 0, 1, 0], [0.5, 0.5, 0, 0]], np.float32)
    grad = mx.nd.zeros((2, 4), ctx=ctx)
    exe = node.bind(ctx, {"p": mx.nd.array(p, ctx=ctx)}, args_grad={"p": grad})
    samples, log_prob = (o.asnumpy() for o in exe.forward(is_train=True))
    assert (samples[0] == 2).all() and np.isin(samples[1], [0, 1]).all()
    np.testing.assert_allclose(log_prob, np.log(p[np.arange(2)[:, None], samples]), rtol=1e-6)
    # the log-probability's gradient: 1 / p of each drawn category, summed over the draws
    exe.backward([mx.nd.zeros((2, 3), ctx=ctx, dtype="int32"), mx.nd.ones((2, 3), ctx=ctx)])
    expected = np.zeros((2, 4), np.float32)
    for row in range(2):
        for k in samples[row]:
            expected[row, k] += 1 / p[row, k]
    np.testing.assert_allclose(grad.asnumpy(), expected, rtol=1e-6)
    # MXNet's positional order (data, shape, get_prob, dtype)
    single = mx.sym.random.multinomial(probs, (), False, "float32")
    assert len(single.list_outputs()) == 1
    assert single.infer_shape(p=(4,))[1] == [(1,)] and single.infer_type(p="float32")[1] == [np.float32]


def test_sym_random_shuffle_binds_and_permutes_rows(ctx) -> None:
    if ctx.device_type == "gpu":
        import cupy

        if getattr(cupy.random.RandomState, "permutation", None) is None:
            pytest.skip("this CuPy (the CUDA emulator's) has no RandomState.permutation, which shuffle uses")
    node = mx.sym.random.shuffle(mx.sym.var("x"))
    assert node.infer_shape(x=(5, 2))[1] == [(5, 2)]
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = node.bind(ctx, {"x": mx.nd.array(x, ctx=ctx)}).forward()[0].asnumpy()
    assert sorted(map(tuple, out)) == sorted(map(tuple, x))
    assert mx.sym.shuffle(mx.sym.var("x")).infer_shape(x=(3,))[1] == [(3,)]


def test_sym_random_samplers_take_symbols_as_per_element_parameters(ctx) -> None:
    low, high = mx.sym.var("low"), mx.sym.var("high")
    node = mx.sym.random.uniform(low, high, shape=(2,))
    assert node.infer_shape(low=(3,), high=(3,))[1] == [(3, 2)]
    args = {"low": mx.nd.array([0, 10, 20], ctx=ctx), "high": mx.nd.array([1, 11, 21], ctx=ctx)}
    values = node.bind(ctx, args).forward()[0].asnumpy()
    assert ((values >= np.array([[0], [10], [20]])) & (values < np.array([[1], [11], [21]]))).all()
    assert mx.sym.random.exponential(low, shape=4).infer_shape(low=(3,))[1] == [(3, 4)]
    with pytest.raises(mx.LazyNDError, match="all symbols or all numbers"):
        mx.sym.random.normal(low, 1.0)


def test_sym_random_has_mxnets_other_samplers() -> None:
    assert mx.sym.random.randn(2, 3).infer_shape()[1] == [(2, 3)]
    assert mx.sym.random.exponential(2.0, (3,)).infer_shape()[1] == [(3,)]
    assert mx.sym.random.gamma(2.0, 1.0, (4,), "float64").infer_type()[1] == [np.float64]
    assert mx.sym.random.uniform_like(mx.sym.var("x"), 2, 3).infer_shape(x=(2, 5))[1] == [(2, 5)]
    assert mx.sym.random.poisson_like(mx.sym.var("x")).infer_shape(x=(4,))[1] == [(4,)]


def test_automatic_names_follow_the_function_called_as_mxnet() -> None:
    # MXNet 1.9.1 names a node for the (lowercase) name it was called by: an alias, a method,
    # or a sub-namespace's short name; arithmetic keeps its own (_plusscalar, _rpower_scalar)
    x = mx.sym.var("x")
    expected = {
        "split0_output0": lambda: mx.sym.split(x, num_outputs=2),
        "slicechannel0_output0": lambda: mx.sym.SliceChannel(x, num_outputs=2),
        "split1_output0": lambda: x.split(num_outputs=2),
        "swapaxes0_output": lambda: mx.sym.swapaxes(x, 0, 1),
        "swapaxes1_output": lambda: x.swapaxes(0, 1),
        "swapaxis0_output": lambda: mx.sym.SwapAxis(x),
        "gemm20_output": lambda: mx.sym.linalg.gemm2(x, x),
        "linalg_gemm20_output": lambda: mx.sym.linalg_gemm2(x, x),
        "stop_gradient0_output": lambda: mx.sym.stop_gradient(x),
        "blockgrad0_output": lambda: mx.sym.BlockGrad(x),
        "broadcast_plus0_output": lambda: mx.sym.broadcast_plus(x, x),
        "elemwise_add0_output": lambda: mx.sym.elemwise_add(x, x),
        "_plus0_output": lambda: x + x,
        "_plusscalar0_output": lambda: x + 1,
        "_plus_scalar0_output": lambda: mx.sym._internal._plus_scalar(x, scalar=1),
        "_rpower_scalar0_output": lambda: 2**x,
        "_rpowerscalar0_output": lambda: mx.sym.pow(2, x),
        "_powerscalar0_output": lambda: mx.sym.pow(x, 2),
        "uniform0_output": lambda: mx.sym.uniform(),
        "_random_uniform0_output": lambda: mx.sym.random.uniform(),
        "cast0_output": lambda: x.astype("int32"),
        "_eye0_output": lambda: mx.sym.eye(2),
    }
    with mx.name.NameManager():
        got = {name: make().list_outputs()[0] for name, make in expected.items()}
    assert got == {name: name for name in expected}

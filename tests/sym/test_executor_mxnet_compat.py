"""Executors behave as MXNet's where programs notice: unused head gradients, reshape's sharing, binding errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, ShapeError


@pytest.mark.parametrize(
    "make",
    [
        lambda x, y: sym.ceil(x),
        lambda x, y: sym.floor(x),
        lambda x, y: sym.round(x),
        lambda x, y: sym.rint(x),
        lambda x, y: sym.fix(x),
        lambda x, y: x == y,
        lambda x, y: x > y,
    ],
    ids=["ceil", "floor", "round", "rint", "fix", "equal", "greater"],
)
def test_bind_with_gradients_when_no_gradient_reads_the_head_gradient(make):
    x, y = sym.Variable("x"), sym.Variable("y")
    out = make(x, y)
    shapes = {name: (2, 3) for name in out.list_arguments()}
    ex = out.simple_bind(mx.cpu(), **shapes)
    for arr in ex.arg_arrays:
        arr[:] = np.arange(6).reshape(2, 3) * 0.7
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3)))
    for grad in ex.grad_arrays:
        np.testing.assert_array_equal(grad.asnumpy(), np.zeros((2, 3)))
    ex.backward()  # MXNet does not ask for a head gradient no gradient reads
    for grad in ex.grad_arrays:
        np.testing.assert_array_equal(grad.asnumpy(), np.zeros((2, 3)))


def test_batchnorm_with_mean_var_outputs_binds_with_gradients():
    data = sym.Variable("x")
    out = sym.BatchNorm(data, output_mean_var=True, name="bn")
    ex = out.simple_bind(mx.cpu(), x=(4, 3))
    ex.arg_dict["x"][:] = np.arange(12, dtype=np.float32).reshape(4, 3)
    ex.arg_dict["bn_gamma"][:] = 1
    ex.forward(is_train=True)
    head = np.arange(12, dtype=np.float32).reshape(4, 3)
    ex.backward([mx.nd.array(head)])
    # d/dbeta of sum(head * out) is the column sum of head (values MXNet 1.9.1 gives)
    np.testing.assert_allclose(ex.grad_dict["bn_beta"].asnumpy(), [18, 22, 26])
    np.testing.assert_array_equal(ex.grad_dict["bn_gamma"].asnumpy(), [0, 0, 0])


def test_backward_without_out_grads_for_a_non_loss_head_is_a_clear_error():
    x = sym.Variable("x")
    ex = (x * 2).simple_bind(mx.cpu(), x=(2,))
    ex.forward(is_train=True)
    with pytest.raises(LazyNDError, match="out_grads"):
        ex.backward()


def _mlp():
    data = sym.Variable("data")
    hidden = sym.relu(sym.FullyConnected(data, num_hidden=8, name="fc1"))
    return sym.FullyConnected(hidden, num_hidden=3, name="fc2")


def test_reshape_shares_outputs_and_internal_storage_with_the_original():
    ex = _mlp().simple_bind(mx.cpu(), data=(6, 5))
    small = ex.reshape(data=(2, 5))
    original = [block.data for block in ex._blocks]
    assert any(np.shares_memory(small.outputs[0].data_array, block) for block in original)
    # every storage block of the smaller executor is one of the original's: nothing new is allocated
    assert all(any(block.data is old for old in original) for block in small._blocks)


def test_reshape_refuses_a_shape_change_nobody_asked_for_unless_partial_shaping():
    # as MXNet: fc1_weight would be "shared" as a view of its first elements, a label silently cut
    net = sym.SoftmaxOutput(_mlp(), name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(6, 5))
    with pytest.raises(ShapeError, match=r"'fc1_weight' changes from \(8, 5\) to \(8, 4\)"):
        ex.reshape(data=(6, 4))
    with pytest.raises(ShapeError, match=r"'softmax_label' changes from \(6,\) to \(2,\).*partial_shaping=True"):
        ex.reshape(data=(2, 5))
    assert ex.reshape(data=(2, 5), softmax_label=(2,)).arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]
    assert ex.reshape(partial_shaping=True, data=(2, 5)).arg_dict["softmax_label"].shape == (2,)


def test_reshape_passes_over_shapes_of_names_the_symbol_lacks():
    # as MXNet's reshape (and simple_bind): a label's shape given to a net without a label
    ex = _mlp().simple_bind(mx.cpu(), data=(6, 5))
    small = ex.reshape(data=(2, 5), softmax_label=(2,))
    assert [tuple(a.shape) for a in small.arg_arrays] == [(2, 5), (8, 5), (8,), (3, 8), (3,)]
    assert small.arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]


def test_executors_sharing_storage_compute_correct_values_in_turn():
    rng = np.random.default_rng(0)
    ex = _mlp().simple_bind(mx.cpu(), data=(6, 5))
    for arr in ex.arg_arrays:
        arr[:] = rng.standard_normal(arr.shape)
    small = ex.reshape(data=(2, 5))
    x_big, x_small = rng.standard_normal((6, 5)), rng.standard_normal((2, 5))
    w1, b1, w2, b2 = (ex.arg_dict[n].asnumpy() for n in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"))

    def reference(x):
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2

    big_out = ex.forward(is_train=True, data=mx.nd.array(x_big))[0]
    np.testing.assert_allclose(big_out.asnumpy(), reference(x_big), rtol=1e-4, atol=1e-5)
    small_out = small.forward(is_train=True, data=mx.nd.array(x_small))[0]
    np.testing.assert_allclose(small_out.asnumpy(), reference(x_small), rtol=1e-4, atol=1e-5)
    small.backward(mx.nd.ones((2, 3)))
    expected_bias_grad = np.full(3, 2.0)
    np.testing.assert_allclose(small.grad_dict["fc2_bias"].asnumpy(), expected_bias_grad, rtol=1e-6)
    np.testing.assert_allclose(ex.forward(data=mx.nd.array(x_big))[0].asnumpy(), reference(x_big), rtol=1e-4, atol=1e-5)


def test_two_variables_of_one_name_bound_by_position_is_a_clear_error():
    twice = sym.Variable("a") + sym.Variable("a")
    with pytest.raises(LazyNDError, match=r"bind: argument names \['a'\] appear more than once"):
        twice.bind(mx.cpu(), [mx.nd.ones((2,)), mx.nd.ones((2,))])
    with pytest.raises(LazyNDError, match=r"simple_bind: argument names \['a'\] appear more than once"):
        twice.simple_bind(mx.cpu(), a=(2,))


def test_backward_takes_mxnets_is_train() -> None:
    x = mx.sym.var("x")
    executor = (x * x).simple_bind(mx.cpu(), x=(2,))
    executor.forward(is_train=True, x=mx.nd.array([1.0, 3.0]))
    executor.backward(mx.nd.ones((2,)), is_train=True)
    np.testing.assert_array_equal(executor.grad_dict["x"].asnumpy(), [2.0, 6.0])
    with pytest.raises(mx.LazyNDError, match="is_train=False"):
        executor.backward(mx.nd.ones((2,)), is_train=False)


def test_a_grad_req_list_of_the_wrong_length_is_refused():
    # MXNet 1.9.1 refuses it; it was taken, leaving the arguments past its end without a request
    net = sym.FullyConnected(sym.Variable("x"), num_hidden=2, name="fc")
    with pytest.raises(LazyNDError, match=r"simple_bind: grad_req has 2 entries, expected one per argument"):
        net.simple_bind(mx.cpu(), grad_req=["null", "write"], x=(4, 3))


def _fc_loss() -> sym.Symbol:
    fc = sym.FullyConnected(sym.Variable("x"), num_hidden=2, name="fc")
    return sym.MakeLoss(sym.sum(fc * fc))


def test_simple_bind_takes_mxnet_1x_parameters_in_their_order():
    # MXNet 1.9.1's order: ctx, grad_req, type_dict, stype_dict, group2ctx, shared_arg_names, shared_exec, shared_buffer
    ex = _fc_loss().simple_bind(mx.cpu(), "write", None, {"x": "default"}, None, None, None, None, x=(4, 3))
    assert ex.arg_dict["x"].shape == (4, 3)
    with pytest.raises(LazyNDError, match=r"stype_dict\['x'\]: storage type 'csr' is not supported"):
        _fc_loss().simple_bind(mx.cpu(), stype_dict={"x": "csr"}, x=(4, 3))


def test_simple_bind_shares_only_shared_arg_names_of_shared_exec():
    first = _fc_loss().simple_bind(mx.cpu(), x=(4, 3))
    second = _fc_loss().simple_bind(mx.cpu(), shared_arg_names=["fc_weight"], shared_exec=first, x=(4, 3))
    assert second.arg_dict["fc_weight"] is first.arg_dict["fc_weight"]
    assert second.grad_dict["fc_weight"] is first.grad_dict["fc_weight"]
    assert second.arg_dict["fc_bias"] is not first.arg_dict["fc_bias"]


def test_simple_bind_with_shared_exec_but_no_shared_arg_names_shares_no_argument():
    # MXNet 1.9.1: shared_exec alone gives the new executor arrays of its own (a user who binds a
    # second executor "sharing" the first and initialises it must not overwrite the first's weights)
    first = _fc_loss().simple_bind(mx.cpu(), x=(4, 3))
    second = _fc_loss().simple_bind(mx.cpu(), shared_exec=first, x=(4, 3))
    for name in first.arg_dict:
        assert second.arg_dict[name] is not first.arg_dict[name]
    second.arg_dict["fc_weight"][:] = 5.0
    second.grad_dict["fc_weight"][:] = 5.0
    assert first.arg_dict["fc_weight"].asnumpy().sum() == 0.0
    assert first.grad_dict["fc_weight"].asnumpy().sum() == 0.0


def test_simple_bind_fills_and_reuses_shared_buffer_as_mxnet():
    buffer: dict = {}
    first = _fc_loss().simple_bind(mx.cpu(), grad_req={"fc_weight": "write"}, shared_buffer=buffer, x=(4, 3))
    # MXNet 1.9.1 names a gradient's entry 'grad of <argument>'
    assert sorted(buffer) == ["fc_bias", "fc_weight", "grad of fc_weight", "x"]
    assert buffer["x"] is first.arg_dict["x"]
    second = _fc_loss().simple_bind(mx.cpu(), shared_buffer=buffer, x=(2, 3))  # smaller: a view of the buffer
    second.arg_dict["x"][:] = 5.0
    np.testing.assert_array_equal(first.arg_dict["x"].asnumpy()[:2], np.full((2, 3), 5.0, np.float32))
    bigger = _fc_loss().simple_bind(mx.cpu(), shared_buffer=buffer, x=(8, 3))  # larger: a new array, kept
    assert buffer["x"] is bigger.arg_dict["x"] and buffer["x"].shape == (8, 3)
    with pytest.raises(LazyNDError, match="shared_buffer must be a dict"):
        _fc_loss().simple_bind(mx.cpu(), shared_buffer=[], x=(4, 3))


def test_simple_bind_passes_over_shapes_of_names_the_symbol_lacks():
    features = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    executor = features.simple_bind(mx.cpu(), data=(4, 3), softmax_label=(4,))  # as MXNet 1.9.1
    assert sorted(executor.arg_dict) == ["data", "fc_bias", "fc_weight"]
    assert executor.forward()[0].shape == (4, 2)


def test_simple_bind_gives_a_bool_argument_no_gradient():
    # bool * 2 binds, runs forward and backward (MXNet 1.9.1 binds and refuses the backward; the bind
    # failed here, the bool gradient buffer clashing with the int64 gradient)
    mask = sym.Variable("mask", dtype="bool")
    executor = (mask * 2).simple_bind(mx.cpu(), mask=(2,))
    assert executor.grad_dict["mask"] is None
    executor.arg_dict["mask"][:] = mx.nd.array([1, 0], dtype="bool")
    executor.forward(is_train=True)
    assert executor.outputs[0].asnumpy().tolist() == [2, 0] and executor.outputs[0].dtype == np.int64
    executor.backward(mx.nd.ones((2,), dtype="int64"))
    weighted = (sym.Cast(mask, dtype="float32") * sym.Variable("w")).simple_bind(mx.cpu(), mask=(2,), w=(2,))
    assert [n for n, g in weighted.grad_dict.items() if g is not None] == ["w"]


def _allocated_mb(executor) -> int:
    match = re.search(r"Total (\d+) MB allocated", executor.debug_str())
    assert match, "debug_str lacks MXNet's 'Total <n> MB allocated' line"
    return int(match.group(1))


def test_debug_str_ends_with_mxnets_allocated_total_that_stop_gradient_shrinks():
    x = sym.Variable("x")
    net = x
    for _ in range(4):
        net = net * net
    shape = {"x": (4, 256, 256)}  # 1 MB per float32 entry
    trained = _allocated_mb(net.simple_bind(mx.cpu(), **shape))
    inference = _allocated_mb(net.simple_bind(mx.cpu(), grad_req="null", **shape))
    stopped = _allocated_mb(sym.stop_gradient(net).simple_bind(mx.cpu(), **shape))
    assert trained > stopped == inference  # no gradient flows: no backward storage is planned


def test_debug_str_closes_with_mxnets_two_total_lines_in_mxnets_order():
    # memory-cost scripts take the allocated total by position: debug_str().split("\n")[-3]
    x = sym.Variable("x")
    executor = sym.FullyConnected(x, num_hidden=4, name="fc").simple_bind(mx.cpu(), x=(2, 3))
    closing = executor.debug_str().split("\n")[-3:]
    assert re.fullmatch(r"Total \d+ MB allocated", closing[0])
    assert closing[1:] == ["Total 0 TempSpace resource requested", ""]


def test_grad_dict_lists_every_argument_with_none_where_there_is_no_gradient_as_mxnet():
    # MXNet 1.9.1: {'data': None, 'fc_weight': <NDArray 3x4>, 'fc_bias': None}; lazynd left the Nones out
    net = sym.FullyConnected(sym.Variable("data"), num_hidden=3, name="fc")
    executor = net.simple_bind(
        mx.cpu(), data=(2, 4), grad_req={"data": "null", "fc_weight": "write", "fc_bias": "null"}
    )
    grads = executor.grad_dict
    assert list(grads) == ["data", "fc_weight", "fc_bias"]
    assert grads["data"] is None and grads["fc_bias"] is None and grads["fc_weight"].shape == (3, 4)


def _classifier():
    data = sym.Variable("data")
    fc = sym.FullyConnected(data, num_hidden=2, name="fc")
    net = sym.SoftmaxOutput(sym.Activation(fc, act_type="relu", name="r"), name="softmax")
    return fc, net


def test_get_optimized_symbol_is_a_new_symbol_with_the_bound_ones_arguments_outputs_and_json():
    _, net = _classifier()
    optimized = net.simple_bind(mx.cpu(), data=(4, 3)).get_optimized_symbol()
    assert optimized is not net and isinstance(optimized, sym.Symbol)
    assert optimized.list_arguments() == ["data", "fc_weight", "fc_bias", "softmax_label"]  # MXNet 1.9.1's
    assert optimized.list_outputs() == ["softmax_output"]
    assert optimized.name == "softmax"
    assert optimized.tojson() == net.tojson()


def test_get_optimized_symbol_keeps_a_groups_outputs_and_the_auxiliary_states():
    fc, net = _classifier()
    group = sym.Group([fc, net]).simple_bind(mx.cpu(), data=(4, 3))
    assert group.get_optimized_symbol().list_outputs() == ["fc_output", "softmax_output"]
    bn = sym.BatchNorm(sym.Variable("data"), name="bn").simple_bind(mx.cpu(), data=(4, 3))
    assert bn.get_optimized_symbol().list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


def _square_plus(shape: tuple) -> np.ndarray:
    values = np.random.default_rng(3).uniform(1.0, 2.0, size=shape)
    return values + 3 * np.eye(shape[-1]) if shape[-1] == shape[-2] else values


@pytest.mark.parametrize(
    "make,shapes",
    [
        (lambda a, b: sym.linalg.gemm2(a, b), [(3, 4), (4, 2)]),
        (lambda a, b: sym.linalg.trsm(a, b), [(3, 3), (3, 2)]),
        (lambda a, b: sym.Group(list(sym.linalg.gelqf(a))), [(2, 4)]),
        (lambda a, b: sym.linalg.inverse(a), [(3, 3)]),
        (lambda a, b: sym.flip(a, axis=0), [(3, 3)]),
        (lambda a, b: sym.Group(list(sym.moments(a, axes=(0,)))), [(3, 3)]),
        (lambda a, b: sym.cumsum(a, axis=0), [(3, 3)]),
        (lambda a, b: sym.mean(a), [(3, 3)]),
    ],
    ids=["gemm2", "trsm", "gelqf", "inverse", "flip", "moments", "cumsum", "mean"],
)
def test_grad_req_add_adds_where_mxnet_overwrites(make, shapes):
    # a README departure: MXNet 1.9.1's executor overwrites these operators' gradient buffers under
    # grad_req='add' (or gives neither sum); lazynd adds, as for every other operator
    names = ["a", "b"][: len(shapes)]
    net = make(sym.Variable("a"), sym.Variable("b") if len(shapes) == 2 else None)
    args = {n: mx.nd.array(_square_plus(s), dtype="float64") for n, s in zip(names, shapes, strict=True)}
    grads = {}
    for req, start in (("write", 0.0), ("add", 1.0)):
        buffers = {n: mx.nd.full(a.shape, start, dtype="float64") for n, a in args.items()}
        ex = net.bind(mx.cpu(), args=args, args_grad=buffers, grad_req=req)
        outs = ex.forward(is_train=True)
        ex.backward([mx.nd.ones(o.shape, dtype="float64") for o in outs])
        grads[req] = {n: b.asnumpy() for n, b in buffers.items()}
    for n in names:
        np.testing.assert_allclose(grads["add"][n], grads["write"][n] + 1.0, rtol=1e-12)

"""Executors: bind, simple_bind, forward/backward, grad_req, gradients vs numerical ones, memory plan."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.errors import LazyNDError, ShapeError


def _seed():
    a, b = sym.Variable("A"), sym.Variable("B")
    return (a + b) / 10 + 1


def test_seed_example_bind_forward_backward():
    a_np, b_np = np.arange(10, dtype=np.float32), np.ones(10, np.float32)
    grads = {"A": mx.nd.zeros((10,)), "B": mx.nd.zeros((10,))}
    ex = _seed().bind(mx.cpu(), {"A": mx.nd.array(a_np), "B": mx.nd.array(b_np)}, args_grad=grads)
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), (a_np + b_np) / 10 + 1, rtol=1e-6)
    ex.backward(mx.nd.ones((10,)) * 2)
    np.testing.assert_allclose(grads["A"].asnumpy(), np.full(10, 0.2), rtol=1e-6)
    np.testing.assert_allclose(grads["B"].asnumpy(), np.full(10, 0.2), rtol=1e-6)


def test_seed_example_simple_bind():
    ex = _seed().simple_bind(mx.cpu(), A=(10,), B=(10,))
    out = ex.forward(A=mx.nd.ones((10,)), B=mx.nd.ones((10,)))[0]
    np.testing.assert_allclose(out.asnumpy(), np.full(10, 1.2), rtol=1e-6)
    assert sorted(ex.grad_dict) == ["A", "B"]


def _numeric_grad(f, x, eps=1e-3):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f()
        x[i] = old - eps
        down = f()
        x[i] = old
        g[i] = (up - down) / (2 * eps)
    return g


@pytest.mark.parametrize(
    "build",
    [
        lambda a, b: a * b + a,
        lambda a, b: sym.exp(a) / (b * b + 1),
        lambda a, b: sym.relu(sym.dot(a, b)) * 0.5,
    ],
)
def test_gradient_matches_numerical(build):
    rng = np.random.default_rng(0)
    a_np = rng.uniform(0.5, 1.5, (3, 3))
    b_np = rng.uniform(0.5, 1.5, (3, 3))
    head = rng.standard_normal((3, 3))
    net = build(sym.Variable("a"), sym.Variable("b"))
    ex = net.simple_bind(mx.cpu(), type_dict={"a": np.float64, "b": np.float64}, a=(3, 3), b=(3, 3))

    def loss():
        ex.forward(a=mx.nd.array(a_np, dtype=np.float64), b=mx.nd.array(b_np, dtype=np.float64))
        return float((ex.outputs[0].asnumpy() * head).sum())

    loss()
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(head, dtype=np.float64))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), _numeric_grad(loss, a_np), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), _numeric_grad(loss, b_np), rtol=1e-4, atol=1e-6)


def test_reused_entry_gradients_are_summed():
    a = sym.Variable("a")
    ex = (a * a * a).simple_bind(mx.cpu(), a=(4,))
    x = np.array([1.0, 2.0, -1.0, 0.5], np.float32)
    ex.forward(is_train=True, a=mx.nd.array(x))
    ex.backward(mx.nd.ones((4,)))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), 3 * x**2, rtol=1e-6)


def test_grad_req_add_accumulates_and_null_skips():
    a, b = sym.Variable("a"), sym.Variable("b")
    ex = (a * b).simple_bind(mx.cpu(), grad_req={"a": "add", "b": "null"}, a=(2,), b=(2,))
    assert ex.grad_dict["b"] is None  # listed, with no array, as MXNet lists it
    for _ in range(2):
        ex.forward(is_train=True, a=mx.nd.ones((2,)), b=mx.nd.array([3.0, 4.0]))
        ex.backward(mx.nd.ones((2,)))
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), [6.0, 8.0])


@pytest.mark.parametrize("grad_req", ["wirte", {"a": "wirte"}, ["wirte"]])
def test_a_misspelt_grad_req_is_rejected_by_bind_and_simple_bind(grad_req):
    # simple_bind once took it silently and left the gradient at zero
    net = sym.Variable("a") * 2
    with pytest.raises(LazyNDError, match="simple_bind: grad_req of 'a' is 'wirte', expected one of"):
        net.simple_bind(mx.cpu(), grad_req=grad_req, a=(2,))
    with pytest.raises(LazyNDError, match="bind: grad_req of 'a' is 'wirte'"):
        net.bind(mx.cpu(), args=[mx.nd.ones((2,))], args_grad=[mx.nd.zeros((2,))], grad_req=grad_req)


def test_non_loss_output_requires_out_grads():
    ex = (sym.Variable("a") * 2).simple_bind(mx.cpu(), a=(2,))
    ex.forward(is_train=True)
    with pytest.raises(LazyNDError, match="needs out_grads"):
        ex.backward()


def test_out_grads_that_are_not_ndarrays_are_refused_by_name():
    # a NumPy array was taken as a list of its rows, then failed inside the executor
    a = sym.Variable("a")
    ex = sym.Group([a * 2, a * 3]).simple_bind(mx.cpu(), a=(3,))
    ex.forward(is_train=True)
    with pytest.raises(LazyNDError, match=r"out_grads\[0\] is a ndarray, expected an NDArray"):
        ex.backward(np.ones((2, 3), np.float32))
    with pytest.raises(LazyNDError, match=r"out_grads\[1\] is a list"):
        ex.backward([mx.nd.ones((3,)), [1.0, 1.0, 1.0]])


def test_forward_refuses_host_values_of_another_shape():
    # MXNet refuses them; assigning would broadcast a row or a scalar over the whole argument
    ex = (sym.Variable("a") * 2).simple_bind(mx.cpu(), a=(2, 3))
    for value in (np.ones(3, np.float32), 5.0):
        with pytest.raises(ShapeError, match=r"forward: 'a' has shape \(.*\), the executor was bound with \(2, 3\)"):
            ex.forward(a=value)
    out = ex.forward(a=np.arange(6, dtype=np.float32).reshape(2, 3))[0]
    np.testing.assert_allclose(out.asnumpy(), np.arange(6).reshape(2, 3) * 2)


def test_simple_bind_without_shapes_names_the_arguments_it_cannot_infer():
    net = sym.FullyConnected(sym.Variable("a"), num_hidden=2, name="fc")
    with pytest.raises(ShapeError, match=r"cannot infer the shapes of \['a', 'fc_weight', 'fc_bias'\]"):
        net.simple_bind(mx.cpu())


def test_bind_takes_dicts_holding_the_whole_networks_arrays():
    # MXNet's feature extraction: an internal output bound with every parameter of the network
    x = sym.Variable("data")
    fc1 = sym.FullyConnected(x, num_hidden=3, name="fc1")
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.BatchNorm(fc1, name="bn"), num_hidden=2, name="fc2"), name="sm")
    shapes = net.infer_shape(data=(2, 4))[0]
    args = {name: mx.nd.ones(shape) for name, shape in zip(net.list_arguments(), shapes, strict=True)}
    aux = {name: mx.nd.ones((3,)) for name in net.list_auxiliary_states()}
    grads = {"fc1_weight": mx.nd.zeros((3, 4)), "fc2_weight": mx.nd.zeros((2, 3))}
    ex = net.get_internals()["fc1_output"].bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.full((2, 3), 5.0))
    assert sorted(ex.arg_dict) == ["data", "fc1_bias", "fc1_weight"]
    # a ValueError, as MXNet's "key `fc1_bias` is missing in `args`"
    with pytest.raises(ValueError, match=r"bind: args misses \['fc1_bias'\]"):
        fc1.bind(mx.cpu(), {"data": args["data"], "fc1_weight": args["fc1_weight"], "fc2_bias": args["fc2_bias"]})


@pytest.mark.parametrize(
    ("args", "aux", "message"),
    [
        ([mx.nd.ones((2, 3))], None, r"bind: args has 1 arrays, expected 3"),
        (
            {"x": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.ones((3,))},
            None,
            "aux_states misses",
        ),
        (
            {"x": mx.nd.ones((2, 3)), "bn_gamma": mx.nd.ones((3,)), "bn_beta": mx.nd.ones((3,))},
            {"bn_moving_mean": mx.nd.ones((3,))},
            r"aux_states misses \['bn_moving_var'\]",
        ),
    ],
)
def test_bind_without_every_array_raises_a_value_error(args, aux, message):
    # MXNet 1.9.1 raises ValueError for each of these; lazynd's LazyNDError was a RuntimeError only
    net = sym.BatchNorm(sym.Variable("x"), name="bn")
    with pytest.raises(ValueError, match=message):
        net.bind(mx.cpu(), args, aux_states=aux)


def test_loss_output_needs_no_out_grads():
    net = sym.SoftmaxOutput(sym.Variable("data"), name="softmax")
    ex = net.simple_bind(mx.cpu(), grad_req={"data": "write"}, data=(2, 3), softmax_label=(2,))
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    ex.forward(is_train=True, data=mx.nd.array(logits), softmax_label=mx.nd.array([2, 0]))
    ex.backward()
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), p - np.eye(3)[[2, 0]], rtol=1e-5, atol=1e-6)


def _concat_net() -> sym.Symbol:
    hidden = sym.FullyConnected(sym.Variable("x"), num_hidden=6, name="fc1")
    both = sym.Concat(sym.Activation(hidden, act_type="relu"), sym.Activation(hidden, act_type="tanh"), dim=1)
    return sym.exp(sym.FullyConnected(both, num_hidden=4, name="fc2") * 0.5)


@pytest.mark.parametrize("fusion", ["0", "1"])
def test_backward_twice_after_one_forward_is_refused_where_it_would_read_overwritten_values(monkeypatch, fusion):
    # the plan lets a backward step reuse the block of a forward value another backward step
    # reads (the concat fc2 reads): a second backward would compute fc2's weight gradient from
    # what the first one wrote there, so it is refused; a forward makes the values again
    monkeypatch.setenv("LAZYND_SYM_FUSION", fusion)
    rng = np.random.default_rng(1)
    ex = _concat_net().simple_bind(mx.cpu(), x=(3, 5))
    for arr in ex.arg_arrays:
        arr[:] = rng.uniform(-1, 1, arr.shape)
    head = mx.nd.array(rng.uniform(-1, 1, (3, 4)))
    ex.forward(is_train=True)
    ex.backward(head)
    first = {name: grad.asnumpy().copy() for name, grad in ex.grad_dict.items()}
    with pytest.raises(LazyNDError, match="second backward after one forward.*run forward again first"):
        ex.backward(head)
    ex.forward(is_train=True)
    ex.backward(head)
    for name, grad in ex.grad_dict.items():
        np.testing.assert_allclose(grad.asnumpy(), first[name], rtol=1e-6, err_msg=name)


def test_backward_twice_after_one_forward_gives_the_same_gradients_where_nothing_is_overwritten():
    # a backward that reads only the arguments (and the loss output) may run again
    net = sym.SoftmaxOutput(sym.FullyConnected(sym.Variable("x"), num_hidden=3, name="fc"), name="sm")
    ex = net.simple_bind(mx.cpu(), x=(4, 5), sm_label=(4,))
    rng = np.random.default_rng(2)
    for arr in ex.arg_arrays:
        arr[:] = rng.integers(0, 3, arr.shape)
    ex.forward(is_train=True)
    ex.backward()
    first = {name: grad.asnumpy().copy() for name, grad in ex.grad_dict.items()}
    ex.backward()
    for name, grad in ex.grad_dict.items():
        np.testing.assert_array_equal(grad.asnumpy(), first[name], err_msg=name)


def test_memory_plan_shares_storage_in_place_and_is_correct(monkeypatch):
    monkeypatch.setenv("LAZYND_SYM_FUSION", "0")  # fusion would turn the chain into one node
    x = sym.Variable("x")
    net = sym.exp(sym.relu(x * 2 + 1))
    ex = net.simple_bind(mx.cpu(), grad_req="null", x=(64,))
    assert ex.planned_bytes < ex.naive_bytes
    assert "in place of" in ex.debug_str()
    v = np.linspace(-2, 2, 64).astype(np.float32)
    np.testing.assert_allclose(ex.forward(x=mx.nd.array(v))[0].asnumpy(), np.exp(np.maximum(v * 2 + 1, 0)), rtol=1e-5)


def test_shared_arrays_and_imperative_updates_run_in_order():
    w = sym.Variable("w")
    train = (w * 2).simple_bind(mx.cpu(), w=(3,))
    test = (w * 2).bind(mx.cpu(), {"w": train.arg_dict["w"]})
    train.arg_dict["w"][:] = mx.nd.ones((3,))
    train.arg_dict["w"][:] = train.arg_dict["w"] + 1
    np.testing.assert_allclose(test.forward()[0].asnumpy(), [4.0, 4.0, 4.0])


def test_reshape_shares_memory_and_copy_params_from():
    ex = (sym.Variable("x") + sym.Variable("y")).simple_bind(mx.cpu(), x=(4, 2), y=(4, 2))
    ex.copy_params_from({"x": mx.nd.ones((4, 2)), "y": mx.nd.ones((4, 2)) * 2})
    small = ex.reshape(x=(2, 2), y=(2, 2))
    np.testing.assert_allclose(small.forward()[0].asnumpy(), np.full((2, 2), 3.0))
    with pytest.raises(LazyNDError):
        ex.copy_params_from({"z": mx.nd.ones((1,))})


def test_copy_params_from_refuses_an_unknown_name_with_a_value_error_as_mxnet() -> None:
    ex = (sym.Variable("x") * 2).simple_bind(mx.cpu(), x=(2,))
    with pytest.raises(ValueError, match="'z' is not an argument of the executor"):
        ex.copy_params_from({"z": mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="'m' is not an auxiliary state"):
        ex.copy_params_from({}, {"m": mx.nd.ones((1,))})
    ex.copy_params_from({"x": mx.nd.ones((2,)), "z": mx.nd.ones((1,))}, allow_extra_params=True)
    np.testing.assert_array_equal(ex.arg_dict["x"].asnumpy(), [1.0, 1.0])


def test_monitor_callback_sees_every_output():
    seen = []
    ex = sym.relu(sym.Variable("x") * 2, name="act").simple_bind(mx.cpu(), x=(2,))
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.asnumpy().copy())))
    ex.forward(x=mx.nd.array([-1.0, 1.0]))
    mx.nd.waitall()
    assert [n for n, _ in seen][-1] == "act_output"
    np.testing.assert_allclose(seen[-1][1], [0.0, 2.0])


def test_user_pass_runs_at_bind():
    from lazynd_sym import passes

    counts = []
    passes.register("_test_count_nodes", lambda g: counts.append(len(g.nodes)), at_bind=True)
    try:
        (sym.Variable("x") * 2).simple_bind(mx.cpu(), x=(2,))
    finally:
        passes.unregister("_test_count_nodes")
    assert counts and counts[0] >= 2


def test_an_unused_output_of_inf_or_nan_gives_zero_gradient():
    # the gradient pass fills the gradient of an output nobody reads with zeros, not output * 0
    # (inf * 0 and nan * 0 are nan); MXNet 1.9.1 gives [[2, 2, 0, 0]]
    x = sym.Variable("x")
    first, _ = sym.SliceChannel(x, num_outputs=2, axis=1)
    ex = (first * 2).simple_bind(mx.cpu(), x=(1, 4))
    ex.arg_dict["x"][:] = np.array([[1.0, 2.0, np.inf, np.nan]], np.float32)
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((1, 2)))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), [[2.0, 2.0, 0.0, 0.0]])


def test_simple_bind_keeps_type_dict_where_other_arguments_stay_undecided():
    # y's dtype follows from nothing: it takes float32, and x keeps the float64 it was given
    # (all were bound float32 before); z follows x through the addition
    x, y, z = sym.Variable("x"), sym.Variable("y"), sym.Variable("z")
    ex = sym.Group([x + z, y * 2]).simple_bind(mx.cpu(), x=(2,), y=(2,), z=(2,), type_dict={"x": "float64"})
    assert {k: v.dtype for k, v in ex.arg_dict.items()} == {"x": np.float64, "z": np.float64, "y": np.float32}
    ex.arg_dict["x"][:] = 1e-10
    ex.forward()
    assert ex.outputs[0].dtype == np.float64 and ex.outputs[0].asnumpy()[0] == 1e-10

"""mx.sym.contrib.foreach / while_loop / cond: symbolic control flow, bound and run (lazynd_sym.control_flow).

Values and gradients are checked against the imperative ``mx.nd.contrib`` forms under autograd and
against NumPy; names are MXNet 1.9.1's answers for the same programs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import OperatorError, ShapeError

S = mx.sym


def _random(shape: tuple[int, ...], seed: int) -> mx.nd.NDArray:
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape))


def _symbolic_and_imperative(
    make: Callable[..., list], args: dict[str, mx.nd.NDArray], wrt: list[str], grad_req: str = "write"
) -> tuple[list, list, dict, dict]:
    """``make(F, *inputs)`` run bound (forward, backward) and under autograd, with the same head gradients."""
    names = list(args)
    copies = {k: v.copy() for k, v in args.items()}
    for k in wrt:
        copies[k].attach_grad()
    with mx.autograd.record():
        expected = make(mx.nd, *[copies[k] for k in names])
        joined = mx.nd.concat(*[r.reshape(-1) for r in expected], dim=0)
    heads = [_random(r.shape, seed=10 + i) for i, r in enumerate(expected)]
    joined.backward(mx.nd.concat(*[h.reshape(-1) for h in heads], dim=0))
    group = S.Group(make(S, *[S.var(k) for k in names]))
    start = 1.0 if grad_req == "add" else 0.0
    grads = {k: mx.nd.full(args[k].shape, start) for k in wrt}
    executor = group.bind(mx.cpu(), {k: v.copy() for k, v in args.items()}, args_grad=grads, grad_req=grad_req)
    outputs = executor.forward(is_train=True)
    executor.backward(heads)
    sym_grads = {k: executor.grad_dict[k].asnumpy() - start for k in wrt if k in executor.grad_dict}
    imp_grads = {k: copies[k].grad.asnumpy() for k in sym_grads}
    return [o.asnumpy() for o in outputs], [e.asnumpy() for e in expected], sym_grads, imp_grads


def _assert_same(result: tuple[list, list, dict, dict]) -> None:
    outputs, expected, sym_grads, imp_grads = result
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert sym_grads.keys() == imp_grads.keys()
    for k in sym_grads:
        np.testing.assert_allclose(sym_grads[k], imp_grads[k], rtol=1e-5, atol=1e-6, err_msg=k)


def _lstm_like(F: Any, x: Any, x2: Any, h: Any, c: Any, wi: Any, wh: Any, b: Any) -> list:
    def body(d: list, s: list) -> tuple[list, list]:
        z = F.FullyConnected(F.concat(d[0], d[1], dim=1), wi, b, num_hidden=6) + F.FullyConnected(
            s[0], wh, no_bias=True, num_hidden=6
        )
        cell = s[1] * 0.5 + F.tanh(z)
        hidden = F.sigmoid(z) * F.tanh(cell)
        return [hidden, cell * 2], [hidden, cell]

    outs, states = F.contrib.foreach(body, [x, x2], [h, c])
    return outs + states


LSTM_ARGS = {"x": (4, 3, 5), "x2": (4, 3, 2), "h": (3, 6), "c": (3, 6), "wi": (6, 7), "wh": (6, 6), "b": (6,)}


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_foreach_with_several_data_states_and_free_weights_matches_the_imperative_loop(grad_req: str) -> None:
    args = {k: _random(shape, seed=i) for i, (k, shape) in enumerate(LSTM_ARGS.items())}
    _assert_same(_symbolic_and_imperative(_lstm_like, args, list(args), grad_req))


def test_foreach_matches_numpy_and_closes_over_an_outer_expression() -> None:
    x, h, w = (np.random.RandomState(i).uniform(-1, 1, s).astype("f") for i, s in enumerate([(5, 3), (3,), (3,)]))
    wsym = S.var("w")
    scale = wsym * 2 + 1  # built outside the body: computed once, shared by every step
    out, state = S.contrib.foreach(lambda d, s: (d * scale + s, (d * scale + s) * 0.5), S.var("x"), S.var("h"))
    executor = S.Group([out, state]).bind(mx.cpu(), {"x": mx.nd.array(x), "h": mx.nd.array(h), "w": mx.nd.array(w)})
    got_out, got_state = (o.asnumpy() for o in executor.forward())
    rows, s = [], h
    for t in range(5):
        rows.append(x[t] * (w * 2 + 1) + s)
        s = rows[-1] * 0.5
    np.testing.assert_allclose(got_out, np.stack(rows), rtol=1e-6)
    np.testing.assert_allclose(got_state, s, rtol=1e-6)


def test_nested_foreach_and_cond_inside_foreach_match_the_imperative_loops() -> None:
    def nested(F: Any, x: Any, h: Any, w: Any) -> list:
        def inner(e: Any, u: list) -> tuple[Any, list]:
            o = F.tanh(e * w + u[0])
            return o, [o]

        def outer(d: Any, s: list) -> tuple[Any, list]:
            o, t = F.contrib.foreach(inner, d, [s[0]])
            return o * 2, [t[0] + s[0]]

        out, states = F.contrib.foreach(outer, x, [h])
        return [out] + states

    def with_cond(F: Any, x: Any, h: Any) -> list:
        def body(d: Any, s: list) -> tuple[Any, list]:
            o = F.contrib.cond(F.sum(d) > 0, lambda: d * s[0], lambda: d - s[0])
            return o, [o + s[0]]

        out, states = F.contrib.foreach(body, x, [h])
        return [out] + states

    args = {"x": _random((3, 2, 4), 1), "h": _random((4,), 2), "w": _random((4,), 3)}
    _assert_same(_symbolic_and_imperative(nested, args, list(args)))
    args = {"x": _random((6, 3), 4), "h": _random((3,), 5)}
    _assert_same(_symbolic_and_imperative(with_cond, args, list(args)))


def _unchanged_state(d: Any, s: list, w: Any) -> tuple:
    return d * w, s  # the state passes through untouched


def _no_states(d: Any, s: list, w: Any) -> tuple:
    return d + w, []


def _no_outputs(d: Any, s: list, w: Any) -> tuple:
    return [], [d * s[0] * w]


def _one_dimensional(d: Any, s: list, w: Any) -> tuple:
    return [d * s[0]], [s[0] * 2 + w]  # a step of 1-D data has shape (1,), as in MXNet


@pytest.mark.parametrize(
    "step, data, states",
    [
        (_unchanged_state, (3, 2), [(2,)]),
        (_no_states, (3, 2), []),
        (_no_outputs, (3, 2), [(2,)]),
        (_one_dimensional, (3,), [(1,)]),
    ],
)
def test_foreach_edge_bodies_match_the_imperative_loop(step: Callable, data: tuple, states: list) -> None:
    def loop(F: Any, x: Any, w: Any, *init: Any) -> list:
        outs, final = F.contrib.foreach(lambda d, s: step(d, s, w), x, list(init))
        return [o * 2 for o in (outs if isinstance(outs, list) else [outs])] + list(final)

    args = {"x": _random(data, 1), "w": _random(states[0] if states else data[1:], 2)}
    args.update({f"s{i}": _random(shape, 3 + i) for i, shape in enumerate(states)})
    _assert_same(_symbolic_and_imperative(loop, args, list(args)))


def test_nested_foreach_reading_the_outer_states_matches_the_imperative_loop() -> None:
    def loop(F: Any, x: Any, h: Any) -> list:
        def inner(d: Any, s: list) -> tuple:
            return d * 2 + s[0], [d * 2 + s[0]]

        def outer(d: Any, s: list) -> tuple:
            out = F.broadcast_add(F.contrib.foreach(inner, d, s)[0], s[0])
            return out, [F.squeeze(F.slice(out, begin=(0, 0), end=(1, 2)))]

        out, states = F.contrib.foreach(outer, x, [h])
        return [F.broadcast_add(out, states[0])]

    _assert_same(_symbolic_and_imperative(loop, {"x": _random((2, 2, 2), 1), "h": _random((2,), 2)}, ["x", "h"]))


@pytest.mark.parametrize("max_iterations", [3, 7])
def test_while_loop_stops_where_its_condition_fails_and_pads_with_zeros(max_iterations: int) -> None:
    def loop(F: Any, i: Any, s: Any, w: Any) -> list:
        outs, final = F.contrib.while_loop(
            lambda i, s: F.sum(s) < 10, lambda i, s: ([s * w, i * 2], [i + 1, s * w + 1]), [i, s], max_iterations
        )
        return outs + final

    args = {"i": mx.nd.array([1]), "s": mx.nd.array([1, 2]), "w": mx.nd.array([1.5, 1.2])}
    outputs, expected, sym_grads, imp_grads = _symbolic_and_imperative(loop, args, ["s", "w"])
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)  # three steps run; the rest are zero rows
    assert outputs[1].ravel().tolist() == [2, 4, 6] + [0] * (max_iterations - 3)
    for k in sym_grads:
        np.testing.assert_allclose(sym_grads[k], imp_grads[k], rtol=1e-5, err_msg=k)


def test_while_loop_of_integers_with_a_condition_that_is_a_loop_variable() -> None:
    i, s, flag = S.var("i"), S.var("s"), S.var("flag")
    _, final = S.contrib.while_loop(lambda i, s, f: f, lambda i, s, f: (None, (i + 1, s + i, f)), [i, s, flag], 50)
    arrays = {"i": mx.nd.array([1], dtype="int64"), "s": mx.nd.array([0], dtype="int64")}
    for value, expected in ((1, [51, 1275, 1]), (0, [1, 0, 0])):
        arrays["flag"] = mx.nd.array([value], dtype="int64")
        results = S.Group(final).bind(mx.cpu(), arrays).forward()
        assert [int(r.asscalar()) for r in results] == expected
        assert results[0].dtype == np.int64


def test_nested_while_loops_match_the_imperative_loops() -> None:
    def inner_body(i: Any, j: Any, total: Any, sc: Any) -> tuple:
        x = sc.take(j).squeeze(axis=0)
        return (x, x), (i, j + 1, total, sc)

    def outer_body(i: Any, j: Any, total: Any, sc: Any) -> tuple:
        F = S if isinstance(i, S.Symbol) else mx.nd
        outs, (i2, j2, total2, sc2) = F.contrib.while_loop(lambda i, j, t, s: j < 2, inner_body, (i, j, total, sc), 2)
        return outs, (i2 + 1, j2 - 2, total2, sc2)

    def loop(F: Any, i: Any, j: Any, total: Any, sc: Any) -> list:
        (a, b), final = F.contrib.while_loop(lambda i, j, t, s: i < 2, outer_body, (i, j, total, sc), 2)
        return list(final) + [a, b]

    args = {"i": mx.nd.array([0]), "j": mx.nd.array([0]), "total": _random((5, 3), 1), "sc": _random((4, 3, 5, 3), 2)}
    _assert_same(_symbolic_and_imperative(loop, args, ["total", "sc"]))


@pytest.mark.parametrize("flip", [False, True])
def test_cond_selects_a_branch_and_sends_the_gradient_to_it_only(flip: bool) -> None:
    def choose(F: Any, a: Any, b: Any, d: Any) -> list:
        pred = (a * b).sum() < 0.5
        pred = F.logical_not(pred) if flip else pred
        return F.contrib.cond(pred, lambda: [a * b, d * 2], lambda: [a * d, b * 3])

    args = {"a": _random((2, 3), 1), "b": _random((2, 3), 2), "d": _random((2, 3), 3)}
    result = _symbolic_and_imperative(choose, args, list(args))
    _assert_same(result)
    a = args["a"].asnumpy()
    heads = [_random((2, 3), 10).asnumpy(), _random((2, 3), 11).asnumpy()]
    took_then = ((a * args["b"].asnumpy()).sum() < 0.5) != flip
    # d is read by both branches: its gradient comes from the branch taken alone
    expected_d = 2 * heads[1] if took_then else a * heads[0]
    np.testing.assert_allclose(result[2]["d"], expected_d, rtol=1e-6)


def test_names_inputs_and_shapes_answer_as_mxnets_before_binding() -> None:
    x, h, h2, w = S.var("x"), S.var("h"), S.var("h2"), S.var("w")
    with S.NameManager():
        out, states = S.contrib.foreach(lambda d, s: (S.tanh(d * w + s[0]), [d * 2]), x, [h])
        two, more = S.contrib.foreach(lambda d, s: ([d[0] + s[0], d[1] * s[1]], [s[0] + 1, s[1]]), [x, w], [h, h2])
        outs, final = S.contrib.while_loop(lambda i, s: i <= 3, lambda i, s: ([i + s], [i + 1, s + i]), [x, h], 6)
        single = S.contrib.cond(x < 5, lambda: x + 5, lambda: x - 5)
    group = S.Group([out] + states)
    assert group.list_outputs() == ["_foreach0_output0", "_foreach0_output1"]
    assert group.list_arguments() == ["x", "h", "w"]
    assert S.Group(two + more).list_arguments() == ["x", "w", "h", "h2"]
    assert S.Group(outs + final).list_outputs() == [f"_while_loop0_output{i}" for i in range(3)]
    assert single.list_outputs() == ["_cond0_output"] and single.name == "_cond0"
    assert group.infer_shape(x=(3, 2), h=(2,), w=(2,)) == ([(3, 2), (2,), (2,)], [(3, 2), (2,)], [])
    assert S.Group(two + more).infer_shape(x=(3, 2), w=(3, 2), h=(2,), h2=(2,))[1] == [(3, 2), (3, 2), (2,), (2,)]
    assert group.infer_type(x="float64")[1] == [np.float64, np.float64]


def test_one_symbol_binds_for_several_sequence_lengths() -> None:
    out, _ = S.contrib.foreach(lambda d, s: (d + s[0], [s[0] + d]), S.var("x"), [S.var("h")])
    for length in (1, 4):
        executor = out.simple_bind(mx.cpu(), x=(length, 2), h=(2,))
        result = executor.forward(x=mx.nd.ones((length, 2)), h=mx.nd.zeros(2))[0].asnumpy()
        np.testing.assert_allclose(result[:, 0], np.arange(1, length + 1))
    assert out.list_arguments() == ["x", "h"]


def test_bad_bodies_are_refused_naming_the_argument() -> None:
    x, h = S.var("x"), S.var("h")
    with pytest.raises(OperatorError, match="foreach: 'body' must return a pair"):
        S.contrib.foreach(lambda d, s: d, x, [h])
    with pytest.raises(OperatorError, match="'body' returned 2 states, expected 1"):
        S.contrib.foreach(lambda d, s: (d, [s[0], s[0]]), x, [h])
    with pytest.raises(OperatorError, match="'body' does not use 'init_states'"):
        S.contrib.foreach(lambda d, s: (d, [d]), x, [h])
    with pytest.raises(OperatorError, match="while_loop: 'func' returned 1 loop variables, expected 2"):
        S.contrib.while_loop(lambda a, b: a < 1, lambda a, b: (a, [a]), [x, h], 3)
    with pytest.raises(OperatorError, match="'max_iterations' must be given"):
        S.contrib.while_loop(lambda a: a < 1, lambda a: (a, [a]), [x])
    with pytest.raises(OperatorError, match="'then_func' returned 2 outputs and 'else_func' 1"):
        S.contrib.cond(x < 1, lambda: [x, h], lambda: x)


def test_a_state_that_changes_shape_is_refused_at_bind_naming_it() -> None:
    out, states = S.contrib.foreach(lambda d, s: (d, [S.concat(s[0], d, dim=0)]), S.var("x"), [S.var("h")])
    with pytest.raises(ShapeError, match=r"_foreach\d+: 'init_states' item 0 has shape \(2,\) but the body returns"):
        S.Group([out] + states).simple_bind(mx.cpu(), x=(3, 2), h=(2,))
    outs, final = S.contrib.while_loop(
        lambda a, b: a < 3, lambda a, b: ([a], [a + 1, S.concat(b, b, dim=0)]), [S.var("a"), S.var("b")], 4
    )
    with pytest.raises(ShapeError, match=r"_while_loop\d+: 'loop_vars' item 1 has shape \(2,\) but the body"):
        S.Group(outs + final).simple_bind(mx.cpu(), a=(1,), b=(2,))


def test_an_unknown_sequence_length_leaves_the_shapes_unknown_naming_the_data() -> None:
    # as MXNet 1.9.1 answers for a foreach of unknown length: (None, None, None), a warning naming the data
    out, _ = S.contrib.foreach(lambda d, s: (d + s[0], [s[0]]), S.var("x"), [S.var("h")])
    with pytest.warns(UserWarning, match=r"x: \(\)"):
        assert out.infer_shape(h=(2,)) == (None, None, None)

"""mx.nd.contrib.foreach / while_loop / cond: MXNet 1.x's imperative control flow (lazynd.ndarray.control_flow).

Expected numbers are MXNet 1.9.1's answers for the same programs.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx

T, N, H = 3, 2, 4


def _rnn_inputs(ctx: mx.Context) -> tuple[mx.nd.NDArray, mx.nd.NDArray, mx.nd.NDArray]:
    x = mx.nd.array(np.arange(T * N * H).reshape(T, N, H) / 10.0 - 1.0, ctx=ctx)
    w = mx.nd.array(np.linspace(-0.5, 0.5, H * H).reshape(H, H), ctx=ctx)
    h0 = mx.nd.array(np.full((N, H), 0.1), ctx=ctx)
    return x, w, h0


def test_foreach_stacks_nested_outputs_and_gives_the_last_states_with_mxnets_gradients(ctx: mx.Context) -> None:
    x, w, h0 = _rnn_inputs(ctx)
    for a in (x, w, h0):
        a.attach_grad()

    def body(xt: mx.nd.NDArray, states: list) -> tuple[list, list]:
        h = mx.nd.tanh(mx.nd.dot(states[0], w) + xt)
        return [h, h * 2], [h]

    with mx.autograd.record():
        (outs, doubled), states = mx.nd.contrib.foreach(body, x, [h0])
        loss = (outs * outs).sum() + doubled.sum() + states[0].sum()
    loss.backward()
    assert outs.shape == doubled.shape == (T, N, H) and outs.context == ctx
    assert isinstance(states, list) and len(states) == 1
    np.testing.assert_allclose(states[0].asnumpy(), outs[T - 1].asnumpy())
    np.testing.assert_allclose(loss.asnumpy(), [18.768723], rtol=1e-5)
    np.testing.assert_allclose(
        w.grad.asnumpy(),
        [
            [2.9961252, 0.0656444, -2.8188276, -5.5527573],
            [2.6165833, -0.0168824, -2.5947895, -5.020875],
            [2.2113202, -0.0787106, -2.302586, -4.3735685],
            [1.7816472, -0.1184132, -1.9407163, -3.6093793],
        ],
        rtol=1e-5,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        h0.grad.asnumpy(),
        [[-1.2750269, -0.1270773, 1.0208724, 2.168822], [-1.8221204, -0.1181085, 1.5859034, 3.2899153]],
        rtol=1e-5,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        x.grad.asnumpy()[2],
        [[3.1240103, 2.9285839, 2.6812432, 2.4036632], [2.399908, 1.8281734, 1.3189956, 0.9158902]],
        rtol=1e-5,
        atol=1e-5,
    )


def test_foreach_over_a_list_of_arrays_slices_them_together(ctx: mx.Context) -> None:
    data = [mx.nd.array([[1, 2], [3, 4]], ctx=ctx), mx.nd.array([[10, 20], [30, 40]], ctx=ctx)]
    state = mx.nd.array([7], ctx=ctx)
    outs, states = mx.nd.contrib.foreach(lambda d, s: ([d[0] + d[1], [d[0]]], s), data, state)
    assert outs[0].asnumpy().tolist() == [[11, 22], [33, 44]]
    assert outs[1][0].asnumpy().tolist() == [[1, 2], [3, 4]]
    assert states is state  # a single state comes back as the body returned it


def test_while_loop_pads_outputs_to_max_iterations_and_returns_the_final_vars(ctx: mx.Context) -> None:
    v = mx.nd.array([0.5, -0.25], ctx=ctx)
    v.attach_grad()
    with mx.autograd.record():
        outs, (i, s) = mx.nd.contrib.while_loop(
            lambda i, s: i < 3,
            lambda i, s: ([s * s, i], [i + 1, s * v + 1]),
            [mx.nd.array([0], ctx=ctx), v],
            max_iterations=5,
        )
        loss = outs[0][:3].sum() + s.sum()
    loss.backward()
    assert outs[0].shape == (5, 2) and outs[1].shape == (5, 1) and outs[0].context == ctx
    np.testing.assert_allclose(
        outs[0][:3].asnumpy(), [[0.25, 0.0625], [1.5625, 1.12890625], [2.640625, 0.539306640625]]
    )
    assert outs[1][:3].asnumpy().tolist() == [[0.0], [1.0], [2.0]]
    assert outs[0][3:].asnumpy().tolist() == [[0, 0], [0, 0]]  # undefined in MXNet; zeros here
    assert i.asnumpy().tolist() == [3.0] and s.asnumpy().tolist() == [1.8125, 0.81640625]
    np.testing.assert_allclose(v.grad.asnumpy(), [11.6875, 0.6191406], rtol=1e-6)


def test_while_loop_that_never_runs_gives_no_outputs_and_the_vars_as_given(ctx: mx.Context) -> None:
    a = mx.nd.array([1], ctx=ctx)
    outs, final = mx.nd.contrib.while_loop(lambda a: a < 0, lambda a: (a, a), a, max_iterations=3)
    assert outs == [] and final is a


def test_while_loop_stops_at_max_iterations(ctx: mx.Context) -> None:
    outs, final = mx.nd.contrib.while_loop(lambda a: a < 100, lambda a: (a * 1, a + 1), mx.nd.zeros(1, ctx=ctx), 4)
    assert outs.asnumpy().ravel().tolist() == [0, 1, 2, 3] and final.asnumpy().tolist() == [4]


def test_cond_reads_pred_on_the_host_and_runs_one_branch(ctx: mx.Context) -> None:
    a, b = mx.nd.array([1], ctx=ctx), mx.nd.array([2], ctx=ctx)
    ran: list[str] = []

    def then() -> mx.nd.NDArray:
        ran.append("then")
        return (a + 5) * (b + 5)

    def other() -> list:
        ran.append("else")
        return [a, b]

    assert mx.nd.contrib.cond(a * b < 5, then, other).asnumpy().tolist() == [42]
    assert mx.nd.contrib.cond(mx.nd.array([0], ctx=ctx), then, other)[1] is b
    assert ran == ["then", "else"]


def test_cond_records_the_branch_it_runs(ctx: mx.Context) -> None:
    a = mx.nd.array([3.0], ctx=ctx)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.cond(a > 0, lambda: a * a, lambda: -a)
    y.backward()
    assert a.grad.asnumpy().tolist() == [6.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mx.nd.contrib.cond(mx.nd.array([1, 0]), lambda: 1, lambda: 0), "cond: 'pred' must hold exactly one"),
        (lambda: mx.nd.contrib.cond(True, 1, lambda: 0), "cond: 'then_func' must be a Python function"),
        (lambda: mx.nd.contrib.while_loop(lambda a: a < 1, lambda a: (a, a), mx.nd.zeros(1)), "'max_iterations'"),
        (lambda: mx.nd.contrib.while_loop(lambda a: a < 1, lambda a: (a, [a, a]), mx.nd.zeros(1), 2), "2 loop var"),
        (
            lambda: mx.nd.contrib.while_loop(lambda a: a < 1, lambda a: (a, a), mx.nd.zeros(1), float("inf")),
            "'max_iterations' must be a one-element NDArray or a scalar",  # int()'s OverflowError before
        ),
        (lambda: mx.nd.contrib.foreach(lambda d, s: (d, s), mx.nd.zeros((0, 2)), []), "length 0"),
        (lambda: mx.nd.contrib.foreach(lambda d, s: d, mx.nd.zeros((2, 2)), []), "must return a pair"),
        (lambda: mx.nd.contrib.foreach(lambda d, s: (d, s), [mx.nd.zeros(2), mx.nd.zeros(3)], []), "one length"),
        (lambda: mx.nd.contrib.foreach(lambda d, s: (d, s), mx.nd.zeros(2), [1.0]), "'init_states' must be"),
    ],
)
def test_bad_calls_are_refused_by_name(call, message: str) -> None:
    with pytest.raises(mx.LazyNDError, match=message):
        call()


def test_while_loop_refuses_step_outputs_that_change_shape() -> None:
    with pytest.raises(mx.LazyNDError, match="output 0 has shape"):
        mx.nd.contrib.while_loop(
            lambda a: a < 2, lambda a: (mx.nd.zeros(int(a.asscalar()) + 1), a + 1), mx.nd.zeros(1), max_iterations=3
        )


@pytest.mark.parametrize("name", ["foreach", "while_loop", "cond"])
def test_the_symbol_forms_are_lazynd_syms_control_flow(name: str) -> None:
    from lazynd_sym import control_flow  # tests/sym/test_control_flow.py runs them

    assert getattr(mx.sym.contrib, name) is control_flow.FUNCTIONS[name]


def test_the_functions_are_listed_in_the_contrib_namespaces() -> None:
    assert {"foreach", "while_loop", "cond"} <= set(dir(mx.nd.contrib)) & set(dir(mx.sym.contrib))
    assert mx.contrib.nd.foreach is mx.nd.contrib.foreach


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.nd.contrib.foreach(3, mx.nd.ones((2, 2)), [mx.nd.zeros(2)]),
        lambda: mx.nd.contrib.while_loop(lambda a: a < 1, None, [mx.nd.zeros(1)], max_iterations=2),
        lambda: mx.nd.contrib.cond(mx.nd.array([1]), lambda: 1, "else"),
    ],
)
def test_a_body_that_is_not_callable_is_a_type_error_as_in_mxnet(call) -> None:
    with pytest.raises(TypeError, match="must be a Python function"):
        call()

"""The structure key of a replayed backward (lazynd.autograd.replay.structure): graphs with the same
operators on the same shapes but wired differently, or with other gradient requests, are other
graphs; each is captured for itself, and a program is never replayed on a graph it was not built for."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd import autograd
from lazynd.autograd import replay


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    monkeypatch.setattr(replay, "ENABLED", True)  # these tests are about replay, whatever LAZYND_AUTOGRAD_REPLAY says
    replay.forget_programs()
    yield
    replay.forget_programs()


def _variable(values: list[float], grad_req: str = "write") -> mx.NDArray:
    x = mx.nd.array(values)
    x.attach_grad(grad_req)
    return x


def _programs() -> int:
    return sum(isinstance(p, replay.BackwardProgram) for p in replay._programs.values())


def test_a_variable_read_twice_then_two_variables_are_two_graphs() -> None:
    # x * x and x * w: the same operator on the same shapes; a program of the first replayed on the
    # second would read x where w is, and give x the gradient 2 * x instead of w
    for same in (True, True, True, False, False, False, True):
        x, w = _variable([1.0, 2.0]), _variable([5.0, 7.0])
        with autograd.record():
            y = x * (x if same else w)
        y.backward()
        expected = 2 * x.asnumpy() if same else w.asnumpy()
        np.testing.assert_array_equal(x.grad.asnumpy(), expected)
        if not same:
            np.testing.assert_array_equal(w.grad.asnumpy(), x.asnumpy())
    assert _programs() == 2


def test_a_node_reading_another_node_then_a_variable_are_two_graphs() -> None:
    # tanh, tanh, subtraction both times: the second tanh reads the first's output, then the variable
    x_values = np.array([0.5, -1.0], np.float32)
    t = np.tanh(x_values)
    for chained in (True, True, True, False, False, False):
        x = _variable(list(x_values))
        with autograd.record():
            a = mx.nd.tanh(x)
            b = mx.nd.tanh(a if chained else x)
            y = a - b
        y.backward()
        db_dx = (1 - np.tanh(t) ** 2) * (1 - t**2) if chained else 1 - t**2
        np.testing.assert_allclose(x.grad.asnumpy(), (1 - t**2) - db_dx, rtol=1e-5, atol=1e-6)
    assert _programs() == 2


def test_outputs_of_one_node_read_in_another_order_are_another_graph() -> None:
    for swapped in (False, False, False, True, True, True):
        x = _variable([1.0, 2.0, 3.0, 4.0])
        with autograd.record():
            first, second = mx.nd.split(x, num_outputs=2, axis=0)
            y = second - first if swapped else first - second
        y.backward()
        sign = -1.0 if swapped else 1.0
        np.testing.assert_array_equal(x.grad.asnumpy(), sign * np.array([1.0, 1.0, -1.0, -1.0]))
    assert _programs() == 2


def test_another_grad_req_of_a_variable_is_another_graph() -> None:
    # a program that writes x's gradient is not replayed where x's gradient is added to
    x = _variable([1.0, 2.0], "write")
    for _ in range(3):
        with autograd.record():
            y = mx.nd.exp(x)
        y.backward()
    x.attach_grad("add")
    for k in range(1, 5):
        with autograd.record():
            y = mx.nd.exp(x)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), k * np.exp([1.0, 2.0]), rtol=1e-6)
    assert _programs() == 2


def test_a_constant_and_a_variable_trading_places_are_another_graph() -> None:
    # c * x and x * c: the constant at the first, then at the second input
    c = mx.nd.array([3.0, 4.0])
    for constant_first in (True, True, True, False, False, False):
        x = _variable([1.0, 2.0])
        with autograd.record():
            y = mx.nd.elemwise_sub(c, x) if constant_first else mx.nd.elemwise_sub(x, c)
        y.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), [-1.0, -1.0] if constant_first else [1.0, 1.0])
    assert _programs() == 2

"""Where an operator call runs: its first input's context; host arrays of any id mix, as in MXNet 1.x.

MXNet 1.9.1 checks only that an operator's inputs share a device type: ``cpu(1) * cpu(0)``
runs (on ``cpu(1)``), so a program that splits its batches over ``[mx.cpu(0), mx.cpu(1)]``
may sum their gradients or score their outputs together.  Values checked against MXNet 1.9.1.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.context import share_memory


def test_host_arrays_of_two_cpu_ids_mix_and_the_result_takes_the_first_inputs_context() -> None:
    a = mx.nd.array([1, 2], ctx=mx.cpu(1))
    b = mx.nd.array([3, 4], ctx=mx.cpu(0))
    product = a * b
    assert product.context == mx.cpu(1)
    np.testing.assert_array_equal(product.asnumpy(), [3, 8])
    dot = mx.nd.dot(b.reshape((1, 2)), a.reshape((2, 1)))
    assert dot.context == mx.cpu(0) and dot.asscalar() == 11


def test_variadic_operators_take_inputs_from_several_cpu_ids() -> None:
    parts = [mx.nd.ones((2,), ctx=mx.cpu(i)) * (i + 1) for i in range(3)]
    total = mx.nd.add_n(*parts)
    assert total.context == mx.cpu(0)
    np.testing.assert_array_equal(total.asnumpy(), [6, 6])
    joined = mx.nd.concat(parts[2], parts[0], dim=0)
    assert joined.context == mx.cpu(2)
    np.testing.assert_array_equal(joined.asnumpy(), [3, 3, 1, 1])


def test_in_place_arithmetic_and_out_accept_another_cpu_id() -> None:
    a = mx.nd.ones((2,))
    a += mx.nd.ones((2,), ctx=mx.cpu(1))
    np.testing.assert_array_equal(a.asnumpy(), [2, 2])
    out = mx.nd.zeros((2,), ctx=mx.cpu(1))
    assert mx.nd.exp(mx.nd.zeros((2,)), out=out) is out
    assert out.context == mx.cpu(1)
    np.testing.assert_array_equal(out.asnumpy(), [1, 1])


def test_autograd_gives_each_input_its_gradient_on_its_own_context() -> None:
    a = mx.nd.ones((2,), ctx=mx.cpu(1))
    b = mx.nd.array([2, 3], ctx=mx.cpu(0))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        c = a * b
    c.backward()
    assert a.grad.context == mx.cpu(1) and b.grad.context == mx.cpu(0)
    np.testing.assert_array_equal(a.grad.asnumpy(), [2, 3])
    np.testing.assert_array_equal(b.grad.asnumpy(), [1, 1])


def test_an_optimizer_steps_a_weight_with_a_gradient_from_another_cpu_id() -> None:
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    weight = mx.nd.ones((2,), ctx=mx.cpu(1))
    state = opt.create_state(0, weight)
    opt.update(0, weight, mx.nd.ones((2,), ctx=mx.cpu(0)), state)
    np.testing.assert_allclose(weight.asnumpy(), [0.9, 0.9])
    assert weight.context == mx.cpu(1)


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [
        (mx.cpu(0), mx.cpu(3), True),
        (mx.cpu(0), mx.cpu_pinned(1), True),
        (mx.gpu(0), mx.gpu(0), True),
        (mx.gpu(0), mx.gpu(1), False),
        (mx.gpu(0), mx.cpu(0), False),
        (mx.cpu_pinned(0), mx.gpu(0), False),
    ],
)
def test_only_host_memory_is_shared_across_contexts(a, b, shared) -> None:
    # two GPUs, or a GPU and the host, hold separate memory: their arrays are copied first
    assert share_memory(a, b) is shared and share_memory(b, a) is shared

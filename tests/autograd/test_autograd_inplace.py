"""In-place writes and autograd: refused at once on recorded arrays while recording (as MXNet does);
any write, through any alias, into an array a gradient reads is found at backward (MXNet gives a
wrong gradient there) and refused, naming the operator."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lazynd as mx
from lazynd import LazyNDError, autograd

RECORDED_WRITE = "writes into an array in a recorded graph"
MODIFIED = "was modified in place after it was recorded"


def _variable(values, ctx=None) -> mx.NDArray:
    x = mx.nd.array(values, ctx=ctx)
    x.attach_grad()
    return x


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda a: a.__iadd__(1), id="+="),
        pytest.param(lambda a: a.__setitem__(slice(None), 0.0), id="x[:] = scalar"),
        pytest.param(lambda a: a.__setitem__(slice(0, 1), mx.nd.zeros((1,))), id="x[0:1] = array"),
        pytest.param(lambda a: a.__setitem__(slice(None), mx.nd.zeros((2,))), id="x[:] = array"),
        pytest.param(lambda a: mx.nd.relu(mx.nd.ones((2,)), out=a), id="out="),
        pytest.param(lambda a: mx.nd.ones((2,)).copyto(a), id="copyto"),
    ],
)
@pytest.mark.parametrize("which", ["variable", "result"])
def test_writing_into_a_recorded_array_while_recording_is_refused(write, which, ctx) -> None:
    x = _variable([1.0, 2.0], ctx)
    with autograd.record():
        target = x if which == "variable" else x * 2
        before = target.asnumpy()
        with pytest.raises(LazyNDError, match=RECORDED_WRITE):
            write(target)
    np.testing.assert_array_equal(target.asnumpy(), before)  # refused before anything was pushed


def test_writing_into_a_recorded_view_while_recording_is_refused() -> None:
    x = _variable([[1.0, 2.0], [3.0, 4.0]])
    with autograd.record():
        row = x[1:2]
        with pytest.raises(LazyNDError, match=RECORDED_WRITE):
            row += 1


def test_an_update_of_a_recorded_input_while_recording_is_refused() -> None:
    w, g = _variable([1.0, 2.0]), mx.nd.ones((2,))
    with autograd.record(), pytest.raises(LazyNDError, match=r"sgd_update \(out=\)"):
        mx.nd.sgd_update(w, g, lr=0.1, out=w)


def test_writing_into_an_unrecorded_array_while_recording_is_allowed() -> None:
    x = _variable([1.0, 2.0])
    out = mx.nd.zeros((2,))
    with autograd.record():
        mx.nd.elemwise_mul(x, x, out=out)
    out.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


@pytest.mark.parametrize(
    "modify",
    [
        pytest.param(lambda x: x.__setitem__(slice(None), 5.0), id="x[:] = 5"),
        pytest.param(lambda x: x.__iadd__(1), id="x += 1"),
        pytest.param(lambda x: x[0:1].__iadd__(1), id="x[0:1] += 1 (a view)"),
        pytest.param(lambda x: x.reshape((2, 1)).__setitem__(slice(None), 0.0), id="through a reshaped view"),
        pytest.param(lambda x: mx.nd.zeros((2,)).copyto(x), id="copyto"),
        pytest.param(
            lambda x: mx.nd.sgd_update(x, mx.nd.ones((2,), ctx=x.context), lr=0.1, out=x), id="an optimizer update"
        ),
    ],
)
def test_a_variable_modified_before_backward_is_found(modify, ctx) -> None:
    # MXNet 1.9.1 gives x.grad == 2 * the new values here, silently
    x = _variable([1.0, 2.0], ctx)
    with autograd.record():
        y = x * x
    modify(x)
    with pytest.raises(LazyNDError, match=rf"input 'lhs' of operator '_mul' \(shape \(2,\)\) {MODIFIED}"):
        y.backward()


def test_a_constant_input_modified_before_backward_is_found() -> None:
    x, c = _variable([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    with autograd.record():
        y = x * c
    c[:] = 0
    with pytest.raises(LazyNDError, match=f"input 'rhs' of operator '_mul' .* {MODIFIED}"):
        y.backward()


def test_an_input_the_gradient_does_not_read_may_be_modified_before_backward(ctx) -> None:
    # FullyConnected's gradient reads its data and weight, not its bias nor its output: writing
    # those after recording changes no gradient (MXNet accepts it too), so backward takes it;
    # the weight, which the gradient reads, is still watched
    x, w, b = (_variable(v, ctx) for v in ([[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]], [0.5, -0.5]))
    with autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=2)
    b[:] = 100.0
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [[1.0, 2.0], [1.0, 2.0]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[8.0, 10.0]])
    np.testing.assert_array_equal(b.grad.asnumpy(), [1.0, 1.0])
    with autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=2)
    w[:] = 0.0
    with pytest.raises(LazyNDError, match=f"input 'weight' of operator 'FullyConnected' .* {MODIFIED}"):
        y.backward()


def test_a_recorded_result_modified_through_an_unrecorded_view_is_found() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.exp(x)
        with autograd.pause():
            view = y[0:1]  # not recorded: it carries no history
        view[:] = 0  # allowed (view is not in the graph), but it changes y
        z = y * 2
    with pytest.raises(LazyNDError, match=f"output 0 of operator 'exp' .* {MODIFIED}"):
        z.backward()


@pytest.mark.parametrize(
    "write, which",
    [
        (lambda x, c: mx.nd.elemwise_mul(x, c, out=c), "_mul (out=): writes its result into the memory of its input 1"),
        (lambda x, c: c.__iadd__(x * x), "_plus (out=): writes its result into the memory of its input 0"),
        (lambda x, c: mx.nd.elemwise_add(x, c, out=c[0:2]), "_plus (out=): writes its result into the memory of its input 1"),
    ],
    ids=["out=", "+=", "out=view"],
)  # fmt: skip
def test_an_output_written_into_its_own_input_is_refused_when_recorded(write, which) -> None:
    # refused at the call, as MXNet does (the gradient of x needs the old c); it was found only at the
    # backward, as an input "modified after it was recorded", even for c += x, whose rule reads no values
    x, c = _variable([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    with autograd.record():
        with pytest.raises(LazyNDError, match=re.escape(which) + ".* inside autograd.record"):
            write(x, c)
        y = c * x  # the next operation is recorded as usual
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 4.0])


def test_reading_recorded_values_through_a_view_taken_before_they_were_assigned_is_refused() -> None:
    x = _variable([1.0, 2.0])
    buffer = mx.nd.zeros((2, 3))
    stale = buffer[0:1]  # shares buffer's memory, but not its (coming) history
    with autograd.record():
        buffer[:, 1] = x * 2
        with pytest.raises(LazyNDError, match="shares memory with recorded values that were written"):
            stale * 3


def test_reading_recorded_values_through_a_view_taken_before_an_out_write_is_refused() -> None:
    # out= writes recorded values into the caller's array as x[...] = v does: a view taken before
    # had no history, so the gradient through it was silently lost (x.grad was exp(x), not 2 x exp(x))
    x = _variable([1.0, 2.0, 3.0])
    target = mx.nd.zeros((3,))
    stale = target[0:2]
    with autograd.record():
        mx.nd.exp(x, out=target)
        with pytest.raises(LazyNDError, match=r"shares memory with recorded values that were written .*out="):
            stale * x[0:2]
        y = (target * x).sum()  # the array written into carries the history
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([1.0, 2.0, 3.0]) * (1 + np.array([1.0, 2.0, 3.0])), rtol=1e-6)


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda x, target: target.__setitem__(slice(None), x * 2), id="x[...] = v"),
        pytest.param(lambda x, target: mx.nd.elemwise_mul(x, mx.nd.full((3,), 2.0), out=target), id="out="),
    ],
)
def test_a_detach_of_an_array_written_with_recorded_values_is_a_constant(write) -> None:
    # detach() asks for the values without history: it shares the written array's memory object, where
    # a stale view does not, and was refused like one
    x = _variable([1.0, 2.0, 3.0])
    target = mx.nd.zeros((3,))
    with autograd.record():
        write(x, target)
        y = (target.detach() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0])


def test_after_backward_the_arrays_of_the_freed_graph_may_be_written_again() -> None:
    x = _variable([1.0, 2.0])
    for _ in range(2):
        with autograd.record():
            y = x * x
        y.backward()
        with autograd.record():
            y[:] = 0  # y's graph is freed: it is an ordinary array again, as in MXNet
        mx.nd.sgd_update(x, x.grad, lr=0.1, out=x)
    np.testing.assert_allclose(x.asnumpy(), np.array([1.0, 2.0]) * 0.8 * 0.8, rtol=1e-6)


def test_a_write_after_backward_with_retain_graph_is_found_by_the_next_backward() -> None:
    x = _variable([1.0, 2.0])
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    x[:] = 3
    with pytest.raises(LazyNDError, match=MODIFIED):
        y.backward()


def test_batchnorm_fix_gamma_refuses_at_once_a_gamma_whose_recorded_gradient_reads_it() -> None:
    # fix_gamma writes 1 into gamma (as MXNet's kernels do): harmless in a variable (no gradient
    # flows to it), wrong in the result of a recorded operation whose gradient reads it (v * 2
    # watches its output); refused at the call, naming gamma and that operation, instead of at
    # backward as an in-place write the user never made
    x, v = _variable(np.arange(6.0).reshape(2, 3)), _variable([0.5, 2.0, 3.0])
    beta, moving_mean, moving_var = mx.nd.zeros((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,))
    with autograd.record():
        gamma = v * 2
        with pytest.raises(
            LazyNDError, match=r"BatchNorm: input 1 \('gamma'\) is the result of the recorded operation '_mul_scalar'"
        ):
            mx.nd.BatchNorm(x, gamma, beta, moving_mean, moving_var, fix_gamma=True)
    np.testing.assert_array_equal(gamma.asnumpy(), [1.0, 4.0, 6.0])  # left as it was
    with autograd.record():  # without fix_gamma, gamma is read, not written: recorded as usual
        y = mx.nd.BatchNorm(x, v * 2, beta, moving_mean, moving_var, fix_gamma=False)
    y.backward()
    assert v.grad.shape == (3,)


def test_batchnorm_fix_gamma_may_fill_a_recorded_gamma_no_gradient_reads() -> None:
    # FullyConnected's gradient reads its data and weight, not its output: the 1 written into
    # it changes no gradient, and gamma's gradient is 0 (MXNet gives the same)
    x, w = _variable(np.arange(6.0).reshape(2, 3)), _variable(np.ones((3, 2)))
    data = mx.nd.array(np.arange(6.0).reshape(2, 3))
    beta, moving_mean, moving_var = mx.nd.zeros((3,)), mx.nd.zeros((3,)), mx.nd.ones((3,))
    with autograd.record():
        gamma = mx.nd.FullyConnected(x[0:1, 0:2], w, num_hidden=3, no_bias=True).reshape((3,))
        y = mx.nd.BatchNorm(data, gamma, beta, moving_mean, moving_var, fix_gamma=True)
    np.testing.assert_array_equal(gamma.asnumpy(), [1.0, 1.0, 1.0])
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((3, 2)))

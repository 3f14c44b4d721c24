"""``out=`` views and outputs that alias an input, on every context: an operator writes its result
into exactly the view it is given (rows, columns or every other row of a larger array) and
nowhere else, and an output that is one of its inputs (``relu(x, out=x)``,
``elemwise_add(a, b, out=a)``, ``dot(a, b, out=a)``) gets what a separate output would.

Helpers in tests/ops/layouts.py; inputs laid out as views are tests/ops/test_layout_inputs.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from layouts import LAYOUTS, as_list, assert_results_equal, expected_parent, layout_applies, parent_and_view

import lazynd as mx

nd = mx.nd
_RNG = np.random.default_rng(2022)


def _normal(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def _positive(*shape: int) -> np.ndarray:
    return (_RNG.random(shape) + 0.5).astype(np.float32)


A, B = _normal(4, 6), _normal(4, 6)

# name -> (function of the input NDArrays and ``out=``, input values); its result has one output
OUT_CASES: dict[str, tuple[Callable, list[np.ndarray]]] = {
    "abs": (lambda x, **kw: nd.abs(x, **kw), [A]),
    "elemwise_mul": (lambda x, y, **kw: nd.elemwise_mul(x, y, **kw), [A, B]),
    "minus_scalar": (lambda x, **kw: nd._minus_scalar(x, scalar=1.5, **kw), [A]),
    "broadcast_add both sides": (lambda x, y, **kw: nd.broadcast_add(x, y, **kw), [_normal(4, 1), _normal(1, 6)]),
    "cast float16": (lambda x, **kw: nd.cast(x, dtype="float16", **kw), [A]),
    "clip": (lambda x, **kw: nd.clip(x, -0.3, 0.3, **kw), [A]),
    "where": (lambda c, x, y, **kw: nd.where(c, x, y, **kw), [(A > 0).astype(np.float32), A, B]),
    "sum axis 0": (lambda x, **kw: nd.sum(x, axis=0, keepdims=True, **kw), [_normal(5, 6)]),
    "max axis 1": (lambda x, **kw: nd.max(x, axis=1, keepdims=True, **kw), [_normal(4, 7)]),
    "argmax axis 1": (lambda x, **kw: nd.argmax(x, axis=1, keepdims=True, **kw), [_normal(4, 7)]),
    "softmax axis 0": (lambda x, **kw: nd.softmax(x, axis=0, **kw), [A]),
    "log_softmax": (lambda x, **kw: nd.log_softmax(x, **kw), [A]),
    "SoftmaxOutput": (lambda x, label, **kw: nd.SoftmaxOutput(x, label, **kw), [A, np.array([0, 1, 2, 5], np.float32)]),
    "dot": (lambda x, y, **kw: nd.dot(x, y, **kw), [A, _normal(6, 5)]),
    "batch_dot": (lambda x, y, **kw: nd.batch_dot(x, y, **kw), [_normal(2, 4, 5), _normal(2, 5, 3)]),
    "FullyConnected": (
        lambda x, w, **kw: nd.FullyConnected(x, w, no_bias=True, num_hidden=5, **kw),
        [A, _normal(5, 6)],
    ),
    "Convolution": (
        lambda x, w, **kw: nd.Convolution(x, w, kernel=(2, 2), num_filter=2, no_bias=True, **kw),
        [_normal(2, 3, 4, 5), _normal(2, 3, 2, 2)],
    ),
    "avg Pooling": (lambda x, **kw: nd.Pooling(x, kernel=(2, 2), pool_type="avg", **kw), [_normal(2, 3, 4, 5)]),
    "BatchNorm": (
        lambda x, g, b, m, v, **kw: nd.BatchNorm(x, g, b, m, v, **kw),
        [_normal(2, 3, 4, 3), _positive(3), _normal(3), _normal(3), _positive(3)],
    ),
    "LRN": (lambda x, **kw: nd.LRN(x, nsize=3, **kw), [_normal(2, 5, 2, 3)]),
    "Activation tanh": (lambda x, **kw: nd.Activation(x, act_type="tanh", **kw), [A]),
    "take": (lambda x, i, **kw: nd.take(x, i, **kw), [A, np.array([3, 0], np.float32)]),
    "one_hot": (lambda i, **kw: nd.one_hot(i, depth=4, **kw), [np.array([0, 3, 1], np.float32)]),
    "Embedding": (
        lambda i, w, **kw: nd.Embedding(i, w, input_dim=5, output_dim=3, **kw),
        [np.array([4, 0], np.float32), _normal(5, 3)],
    ),
    "concat": (lambda x, y, **kw: nd.concat(x, y, dim=1, **kw), [A, B]),
    "transpose": (lambda x, **kw: nd.transpose(x, **kw), [_normal(3, 5)]),
    "topk values": (lambda x, **kw: nd.topk(x, k=2, ret_typ="value", **kw), [A]),
    "sort": (lambda x, **kw: nd.sort(x, **kw), [A]),
    "UpSampling": (lambda x, **kw: nd.UpSampling(x, scale=2, sample_type="nearest", **kw), [_normal(1, 2, 2, 2)]),
}


def _fresh(values: list[np.ndarray], ctx: mx.Context) -> list[mx.nd.NDArray]:
    return [nd.array(v, ctx=ctx, dtype=v.dtype) for v in values]


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    """Each case's result into a fresh array on the CPU."""
    return {name: fn(*_fresh(inputs, mx.cpu(0))).asnumpy() for name, (fn, inputs) in OUT_CASES.items()}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(OUT_CASES))
def test_out_view_gets_the_result_and_nothing_else_is_written(name, layout, ctx, expected):
    fn, inputs = OUT_CASES[name]
    result = expected[name]
    if not layout_applies(layout, result.shape):
        pytest.skip(f"a {result.ndim}-d result has no {layout} view")
    parent, view = parent_and_view(np.zeros_like(result), layout, ctx)
    fn(*_fresh(inputs, ctx), out=view)
    np.testing.assert_allclose(parent.asnumpy(), expected_parent(result, layout), rtol=1e-4, atol=1e-4)


# name -> (function of the inputs and ``out``, input values): each test passes its first input as ``out``
ALIASED_CASES: dict[str, tuple[Callable, list[np.ndarray]]] = {
    "relu into its input": (lambda x, out: nd.relu(x, out=out), [A]),
    "elemwise_add into its first input": (lambda x, y, out: nd.elemwise_add(x, y, out=out), [A, B]),
    "elemwise_add into its second input": (lambda x, y, out: nd.elemwise_add(y, x, out=out), [A, B]),
    "elemwise_mul of an array by itself": (lambda x, out: nd.elemwise_mul(x, x, out=out), [A]),
    "broadcast_mul into its full-size input": (lambda x, y, out: nd.broadcast_mul(y, x, out=out), [A, _normal(1, 6)]),
    "dot into its first input": (lambda x, y, out: nd.dot(x, y, out=out), [_normal(6, 6), _normal(6, 6)]),
    "dot of an array by its transpose into itself": (
        lambda x, out: nd.dot(x, x, transpose_b=True, out=out),
        [_normal(5, 5)],
    ),
    "batch_dot into its second input": (
        lambda x, y, out: nd.batch_dot(y, x, out=out),
        [_normal(2, 4, 4), _normal(2, 4, 4)],
    ),
    "softmax into its input": (lambda x, out: nd.softmax(x, axis=0, out=out), [A]),
    "log_softmax into its input": (lambda x, out: nd.log_softmax(x, out=out), [A]),
    "transpose of a square array into itself": (lambda x, out: nd.transpose(x, out=out), [_normal(5, 5)]),
    "clip into its input": (lambda x, out: nd.clip(x, -0.2, 0.2, out=out), [A]),
    "sort into its input": (lambda x, out: nd.sort(x, out=out), [A]),
    "where into its second input": (
        lambda x, c, y, out: nd.where(c, x, y, out=out),
        [A, (A > 0).astype(np.float32), B],
    ),
    "sgd_mom_update into the weight": (
        lambda w, g, m, out: nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.01, out=out),
        [A, B, _normal(4, 6)],
    ),
    "adam_update into the weight": (
        lambda w, g, m, v, out: nd.adam_update(w, g, m, v, lr=0.1, clip_gradient=0.3, wd=0.1, out=out),
        [A, B, _normal(4, 6), _positive(4, 6)],
    ),
    "rmsprop_update into the weight": (
        lambda w, g, n, out: nd.rmsprop_update(w, g, n, lr=0.1, out=out),
        [A, B, _positive(4, 6)],
    ),
    "ftrl_update into the weight": (
        lambda w, g, z, n, out: nd.ftrl_update(w, g, z, n, lr=0.1, out=out),
        [A, B, _normal(4, 6), _positive(4, 6)],
    ),
}


@pytest.fixture(scope="module")
def aliased_expected() -> dict[str, list[np.ndarray]]:
    """Each case on fresh CPU arrays into a separate output: [output, the other inputs afterwards]
    (an optimizer update also writes its states)."""
    cpu, results = mx.cpu(0), {}
    for name, (fn, inputs) in ALIASED_CASES.items():
        arrays = _fresh(inputs, cpu)
        out = nd.zeros(inputs[0].shape, ctx=cpu)
        fn(*arrays, out)
        results[name] = as_list([out, *arrays[1:]])
    return results


@pytest.mark.parametrize("layout", [None, "columns", "every other row"])
@pytest.mark.parametrize("name", list(ALIASED_CASES))
def test_output_aliasing_an_input_gets_what_a_separate_output_gets(name, layout, ctx, aliased_expected):
    fn, inputs = ALIASED_CASES[name]
    arrays = [parent_and_view(v, layout, ctx)[1] if layout else nd.array(v, ctx=ctx) for v in inputs]
    fn(*arrays, arrays[0])
    assert_results_equal(as_list(arrays), aliased_expected[name], tol=1e-4)

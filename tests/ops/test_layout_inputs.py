"""Every operator family with a GPU kernel of its own, given views as users hand them: rows of a
larger array, its columns (strided), every other row, the reshape of an offset slice.  Each must
give what it gives on fresh contiguous arrays on the CPU, dtype and shape included.

The cases run on every context; on the GPU they are the check that a kernel honours its inputs'
strides and offsets (helpers in tests/ops/layouts.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from layouts import VIEW_LAYOUTS, as_list, assert_results_equal, layout_applies, parent_and_view

import lazynd as mx

nd = mx.nd
_RNG = np.random.default_rng(22)


def _normal(*shape: int, dtype: str = "float32") -> np.ndarray:
    return _RNG.standard_normal(shape).astype(dtype)


def _positive(*shape: int) -> np.ndarray:
    return (_RNG.random(shape) + 0.5).astype(np.float32)


def _index(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


A, B = _normal(4, 6), _normal(4, 6)
LABELS = _index(0, 1, 2, 5)

# name -> (function of the input NDArrays, input values); every input is laid out as the test asks
CASES: dict[str, tuple[Callable, list[np.ndarray]]] = {
    # elementwise: unary, binary, scalar, and their broadcasts
    "relu": (lambda x: nd.relu(x), [A]),
    "sqrt": (lambda x: nd.sqrt(x), [_positive(4, 6)]),
    "sigmoid": (lambda x: nd.sigmoid(x), [A]),
    "elemwise_add": (lambda x, y: nd.elemwise_add(x, y), [A, B]),
    "maximum": (lambda x, y: nd.maximum(x, y), [A, B]),
    "rpower_scalar": (lambda x: 2**x, [A]),
    "broadcast_add over rows": (lambda x, y: nd.broadcast_add(x, y), [A, _normal(1, 6)]),
    "broadcast_sub over columns": (lambda x, y: nd.broadcast_sub(y, x), [A, _normal(4, 1)]),
    "broadcast_mul both sides": (lambda x, y: nd.broadcast_mul(x, y), [_normal(4, 1, 5), _normal(1, 3, 5)]),
    "broadcast_to": (lambda x: nd.broadcast_to(x, shape=(5, 4, 6)), [_normal(1, 4, 6)]),
    "cast float16": (lambda x: nd.cast(x, dtype="float16"), [A]),
    "cast uint8": (lambda x: nd.cast(x, dtype="uint8"), [np.abs(A) * 10]),
    "clip": (lambda x: nd.clip(x, -0.5, 0.5), [A]),
    "where": (lambda c, x, y: nd.where(c, x, y), [(A > 0).astype(np.float32), A, B]),
    "where by row": (lambda c, x, y: nd.where(c, x, y), [_index(1, 0, 1, 0), A, B]),
    # reductions along each axis
    "sum axis 0": (lambda x: nd.sum(x, axis=0), [A]),
    "sum axis 1": (lambda x: nd.sum(x, axis=1), [A]),
    "sum of all": (lambda x: nd.sum(x), [A]),
    "sum axes 0 and 2": (lambda x: nd.sum(x, axis=(0, 2)), [_normal(3, 4, 5)]),
    "mean axis 1": (lambda x: nd.mean(x, axis=1), [A]),
    "max axis 0": (lambda x: nd.max(x, axis=0), [A]),
    "min axis 1": (lambda x: nd.min(x, axis=1), [A]),
    "prod axis 1": (lambda x: nd.prod(x, axis=1), [A]),
    "norm": (lambda x: nd.norm(x), [A]),
    "norm axis 1": (lambda x: nd.norm(x, axis=1), [A]),
    "argmax axis 0": (lambda x: nd.argmax(x, axis=0), [A]),
    "argmin axis 1": (lambda x: nd.argmin(x, axis=1), [A]),
    # softmax family
    "softmax": (lambda x: nd.softmax(x), [A]),
    "softmax axis 0": (lambda x: nd.softmax(x, axis=0), [A]),
    "log_softmax": (lambda x: nd.log_softmax(x), [A]),
    "SoftmaxOutput": (lambda x, label: nd.SoftmaxOutput(x, label), [A, LABELS]),
    # products
    "dot": (lambda x, y: nd.dot(x, y), [A, _normal(6, 3)]),
    "dot transpose_a": (lambda x, y: nd.dot(x, y, transpose_a=True), [_normal(6, 4), _normal(6, 3)]),
    "batch_dot transposed": (
        lambda x, y: nd.batch_dot(x, y, transpose_a=True, transpose_b=True),
        [_normal(3, 5, 4), _normal(3, 2, 5)],
    ),
    "FullyConnected": (
        lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=3),
        [_normal(2, 3, 4), _normal(3, 12), _normal(3)],
    ),
    # neural-network layers
    "Convolution": (
        lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1)),
        [_normal(2, 3, 5, 6), _normal(4, 3, 3, 3), _normal(4)],
    ),
    "Deconvolution": (
        lambda x, w: nd.Deconvolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True),
        [_normal(2, 3, 4, 5), _normal(3, 4, 3, 3)],
    ),
    "max Pooling": (lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max"), [_normal(2, 3, 4, 6)]),
    "avg Pooling padded": (
        lambda x: nd.Pooling(x, kernel=(3, 3), pad=(1, 1), pool_type="avg"),
        [_normal(2, 3, 4, 6)],
    ),
    "BatchNorm": (
        lambda x, g, b, m, v: nd.BatchNorm(x, g, b, m, v, fix_gamma=False),
        [_normal(2, 3, 4, 5), _positive(3), _normal(3), _normal(3), _positive(3)],
    ),
    "LRN": (lambda x: nd.LRN(x, nsize=3), [_normal(2, 5, 3, 4)]),
    "Activation softrelu": (lambda x: nd.Activation(x, act_type="softrelu"), [A]),
    "Dropout at inference": (lambda x: nd.Dropout(x, p=0.5), [A]),
    "LayerNorm": (lambda x, g, b: nd.LayerNorm(x, g, b), [A, _positive(6), _normal(6)]),
    # gathers
    "take": (lambda x, i: nd.take(x, i), [A, _index(0, 3, 1)]),
    "take axis 1": (lambda x, i: nd.take(x, i, axis=1), [A, np.array([[0, 5], [1, 2]], np.float32)]),
    "pick": (lambda x, i: nd.pick(x, i, axis=1), [A, LABELS]),
    "one_hot": (lambda i: nd.one_hot(i, depth=5), [np.array([[0, 4], [1, 2], [3, 3]], np.float32)]),
    "Embedding": (
        lambda i, w: nd.Embedding(i, w, input_dim=5, output_dim=6),
        [np.array([[0, 4], [1, 2]], np.float32), _normal(5, 6)],
    ),
    # moving data
    "concat": (lambda x, y: nd.concat(x, y, dim=1), [A, B]),
    "stack": (lambda x, y: nd.stack(x, y, axis=1), [A, B]),
    "slice": (lambda x: nd.slice(x, begin=(1, 1), end=(3, 5)), [A]),
    "transpose": (lambda x: nd.transpose(x, axes=(2, 0, 1)), [_normal(3, 4, 5)]),
    # ordering
    "topk both": (lambda x: nd.topk(x, k=2, ret_typ="both", axis=0), [A]),
    "sort descending": (lambda x: nd.sort(x, axis=0, is_ascend=False), [A]),
    "argsort": (lambda x: nd.argsort(x), [A]),
}


@pytest.fixture(scope="module")
def expected() -> dict[str, list[np.ndarray]]:
    """Each case's result on fresh contiguous arrays on the CPU (checked against NumPy by the sweep)."""
    cpu = mx.cpu(0)
    return {
        name: as_list(fn(*[nd.array(a, ctx=cpu, dtype=a.dtype) for a in inputs]))
        for name, (fn, inputs) in CASES.items()
    }


@pytest.mark.parametrize("layout", VIEW_LAYOUTS)
@pytest.mark.parametrize("name", list(CASES))
def test_views_as_inputs_give_the_contiguous_result(name, layout, ctx, expected):
    fn, inputs = CASES[name]
    parents, views = [], []
    for values in inputs:
        placed = layout if layout_applies(layout, values.shape) else "rows"
        parent, view = parent_and_view(values, placed, ctx)
        parents.append(parent)
        views.append(view)
    before = [p.asnumpy() for p in parents]
    assert_results_equal(as_list(fn(*views)), expected[name], tol=1e-4)
    for parent, held in zip(parents, before, strict=True):  # an input is read, never written
        np.testing.assert_array_equal(parent.asnumpy(), held)

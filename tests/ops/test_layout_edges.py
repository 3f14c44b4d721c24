"""Operator families on the arrays at the edges of their kernels' launch arithmetic, on every
context, against the CPU: every dtype an operator takes, zero-size and one-element arrays, 0-d
arrays, very long last and first axes, and broadcasts with size-1 axes on either side.

(On the CUDA emulator a row-wise kernel runs its blocks one after another, so the long first axis
is kept to a few hundred rows.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from layouts import as_list, assert_results_equal

import lazynd as mx

nd = mx.nd

DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")
TOLERANCE = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-9, "int32": 0, "int64": 0, "uint8": 0}


def _values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """Distinct values (no ties for the orderings to break), small enough for uint8 and float16."""
    count = int(np.prod(shape))
    values = np.random.default_rng(seed).permutation(count) % 250 + (1 if dtype == "uint8" else -120)
    if count > 250:  # distinct where the dtype can tell them apart
        values = np.random.default_rng(seed).permutation(count) - count // 2
    return values.reshape(shape).astype(dtype)


# name -> (function of two NDArrays of one shape and dtype, whether it takes integers)
DTYPE_CASES: dict[str, Callable] = {
    "relu": lambda x, y: nd.relu(x),
    "abs": lambda x, y: nd.abs(x),
    "elemwise_sub": lambda x, y: x - y,
    "elemwise_mul": lambda x, y: x * y,
    "mod": lambda x, y: x % (nd.abs(y) + 1),
    "plus_scalar": lambda x, y: x + 3,
    "rminus_scalar": lambda x, y: 3 - x,
    "broadcast_add over rows": lambda x, y: nd.broadcast_add(x, y[:1]),
    "broadcast_maximum over columns": lambda x, y: nd.broadcast_maximum(x, y[:, :1]),
    "broadcast_equal": lambda x, y: nd.broadcast_equal(x, y[:1]),
    "sum axis 0": lambda x, y: nd.sum(x, axis=0),
    "sum axis 1": lambda x, y: nd.sum(x, axis=1),
    "max axis 1": lambda x, y: nd.max(x, axis=1),
    "min axis 0": lambda x, y: nd.min(x, axis=0),
    "argmax axis 1": lambda x, y: nd.argmax(x, axis=1),
    "argmin axis 0": lambda x, y: nd.argmin(x, axis=0),
    "dot": lambda x, y: nd.dot(x, y, transpose_b=True),
    "take": lambda x, y: nd.take(x, nd.array([2, 0], ctx=x.context, dtype=x.dtype)),
    "concat": lambda x, y: nd.concat(x, y, dim=1),
    "stack": lambda x, y: nd.stack(x, y),
    "transpose": lambda x, y: nd.transpose(x),
    "slice": lambda x, y: nd.slice(x, begin=(1, 1), end=(3, 5)),
    "where": lambda x, y: nd.where(x > y, x, y),
    "clip": lambda x, y: nd.clip(x, 1, 5),
    "topk": lambda x, y: nd.topk(x, k=2, ret_typ="both"),
    "sort": lambda x, y: nd.sort(x, is_ascend=False),
    "argsort": lambda x, y: nd.argsort(x, axis=0),
    "cast to float32": lambda x, y: nd.cast(x, dtype="float32"),
    "cast to uint8": lambda x, y: nd.cast(nd.abs(x), dtype="uint8"),
    "cast to float16": lambda x, y: nd.cast(x, dtype="float16"),
}


def _agree(fn: Callable, inputs: list[np.ndarray], ctx: mx.Context, tol: float) -> None:
    """``ctx`` gives the CPU's results, or raises the CPU's error (a reduction over an empty axis)."""

    def run(on: mx.Context) -> list[np.ndarray]:
        return as_list(fn(*[nd.array(v, ctx=on, dtype=v.dtype) for v in inputs]))

    try:
        expected = run(mx.cpu(0))
    except mx.LazyNDError as refusal:
        with pytest.raises(type(refusal)):
            run(ctx)
        return
    assert_results_equal(run(ctx), expected, tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_every_dtype_gives_the_cpu_result(name, dtype, ctx):
    _agree(DTYPE_CASES[name], [_values((4, 6), dtype, 1), _values((4, 6), dtype, 2)], ctx, TOLERANCE[dtype])


SHAPES = {
    "zero rows": (0, 5),
    "zero columns": (3, 0),
    "one element": (1, 1),
    "long last axis": (2, 20000),
    "long first axis": (300, 2),
}

# name -> function of two float32 NDArrays of one shape; every one takes every shape above
SHAPE_CASES: dict[str, Callable] = {
    "exp": lambda x, y: nd.exp(x),
    "elemwise_add": lambda x, y: x + y,
    "times_scalar": lambda x, y: x * 2,
    "broadcast_mul over rows": lambda x, y: nd.broadcast_mul(x, y[:1]),
    "broadcast_sub both sides": lambda x, y: nd.broadcast_sub(x[:, :1], y[:1]),
    "sum": lambda x, y: nd.sum(x),
    "sum axis 0": lambda x, y: nd.sum(x, axis=0),
    "mean axis 1": lambda x, y: nd.mean(x, axis=1, keepdims=True),
    "max axis 1": lambda x, y: nd.max(x, axis=1),
    "prod axis 0": lambda x, y: nd.prod(x, axis=0),
    "norm axis 1": lambda x, y: nd.norm(x, axis=1),
    "softmax": lambda x, y: nd.softmax(x),
    "log_softmax axis 0": lambda x, y: nd.log_softmax(x, axis=0),
    "dot": lambda x, y: nd.dot(x, y[:1], transpose_b=True),
    "concat": lambda x, y: nd.concat(x, y, dim=0),
    "transpose": lambda x, y: nd.transpose(x),
    "where": lambda x, y: nd.where(x > y, x, y),
    "clip": lambda x, y: nd.clip(x, -0.5, 0.5),
    "sort": lambda x, y: nd.sort(x),
    "cast to float16": lambda x, y: nd.cast(x, dtype="float16"),
    "Activation sigmoid": lambda x, y: nd.Activation(x, act_type="sigmoid"),
    "Dropout at inference": lambda x, y: nd.Dropout(x, p=0.3),
    "adam_update": lambda x, y: nd.adam_update(x, y, nd.zeros_like(x), nd.ones_like(x), lr=0.1),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("name", list(SHAPE_CASES))
def test_edge_shapes_give_the_cpu_result(name, shape, ctx):
    size = SHAPES[shape]
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(size).astype(np.float32) for _ in range(2)]
    _agree(SHAPE_CASES[name], inputs, ctx, 1e-4)


ZERO_DIM_CASES: dict[str, Callable] = {
    "relu": lambda x: nd.relu(x),
    "plus_scalar": lambda x: x + 1,
    "elemwise_mul by itself": lambda x: x * x,
    "broadcast_add to a row": lambda x: nd.broadcast_add(x, nd.ones((1, 3), ctx=x.context)),
    "sum": lambda x: nd.sum(x),
    "cast to float64": lambda x: nd.cast(x, dtype="float64"),
    "clip": lambda x: nd.clip(x, 0, 1),
}


@pytest.mark.parametrize("name", list(ZERO_DIM_CASES))
def test_zero_dim_arrays_give_the_cpu_result(name, ctx):
    with mx.util.np_shape(True):
        _agree(ZERO_DIM_CASES[name], [np.array(1.5, np.float32)], ctx, 1e-6)

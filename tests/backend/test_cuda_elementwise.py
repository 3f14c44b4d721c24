"""The generated elementwise kernels' broadcasting: dimension collapsing, the 32-bit path's
magic-number division, the 64-bit path, strided and empty inputs, every dtype.

The ``ctx`` tests run the same broadcast through ``nd`` on the CPU (NumPy) and the GPU (the
``bcast32_`` / ``bcast_`` kernels); the kernel-level tests hand CuPy views straight to the family,
as an operator's GPU kernel does.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend.cuda.elementwise import broadcast_strides, division_magic

needs_gpu = pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")

# (lhs shape, rhs shape): row, column, collapsible and uncollapsible N-d broadcasts, both sides broadcast
SHAPES = [
    ((6, 37), (1, 37)),  # a + row: 2-D after collapsing
    ((6, 37), (6, 1)),  # a + column
    ((3, 4, 5), (1, 4, 1)),  # 3 dimensions that cannot merge
    ((2, 3, 4, 5), (1, 1, 4, 5)),  # the last two merge with each other, the first two with each other
    ((2, 3, 1, 5), (1, 3, 4, 1)),  # both sides broadcast
    ((2, 1, 3, 1, 2, 1), (1, 2, 1, 3, 1, 2)),  # six dimensions, none mergeable
    ((7,), (1,)),  # against a single element: 1-D
    ((0, 5), (1, 5)),  # empty
]


def _values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).uniform(-50, 50, shape)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


def test_division_magic_divides_every_31_bit_index_exactly() -> None:
    chosen = random.Random(0)
    divisors = [*range(1, 300), *(2**k + e for k in range(31) for e in (-1, 0, 1)), 2**31 - 1]
    divisors += [chosen.randrange(1, 2**31) for _ in range(300)]
    for divisor in filter(lambda d: 1 <= d < 2**31, divisors):
        magic, shift = division_magic(divisor)
        assert 0 < magic < 2**32
        top = (2**31 - 1) // divisor * divisor
        for i in (0, 1, divisor - 1, divisor, top - 1, top, 2**31 - 1, chosen.randrange(2**31)):
            if 0 <= i < 2**31:
                assert ((i * magic >> 32) + i) >> shift == i // divisor, (divisor, i)


def test_broadcast_strides_merge_dimensions_that_broadcast_alike() -> None:
    lhs, rhs = np.empty((2, 3, 4, 5)), np.empty((1, 1, 4, 5))
    dims, sa, sb = broadcast_strides(lhs, rhs, (2, 3, 4, 5))
    assert (dims, sa, sb) == ([6, 20], [20, 1], [0, 1])
    # a row and a column stay two dimensions: one division per element
    assert broadcast_strides(np.empty((6, 37)), np.empty((37,)), (6, 37)) == ([6, 37], [37, 1], [0, 1])
    assert broadcast_strides(np.empty((6, 37)), np.empty((6, 1)), (6, 37)) == ([6, 37], [37, 1], [1, 0])


@pytest.mark.parametrize(("lhs_shape", "rhs_shape"), SHAPES)
def test_broadcast_sub_matches_numpy(ctx: mx.Context, lhs_shape: tuple, rhs_shape: tuple) -> None:
    lhs, rhs = _values(lhs_shape, "float32", 1), _values(rhs_shape, "float32", 2)
    got = mx.nd.broadcast_sub(mx.nd.array(lhs, ctx=ctx), mx.nd.array(rhs, ctx=ctx)).asnumpy()
    np.testing.assert_array_equal(got, lhs - rhs)
    # the other way round: the broadcast operand on the left
    got = mx.nd.broadcast_sub(mx.nd.array(rhs, ctx=ctx), mx.nd.array(lhs, ctx=ctx)).asnumpy()
    np.testing.assert_array_equal(got, rhs - lhs)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "int64", "uint8", "int8"])
@pytest.mark.parametrize(("lhs_shape", "rhs_shape"), [SHAPES[0], SHAPES[1], SHAPES[2]])
def test_broadcast_kernels_serve_every_dtype(ctx: mx.Context, dtype: str, lhs_shape: tuple, rhs_shape: tuple) -> None:
    lhs, rhs = _values(lhs_shape, dtype, 3), _values(rhs_shape, dtype, 4)
    got = mx.nd.broadcast_mul(mx.nd.array(lhs, ctx=ctx, dtype=dtype), mx.nd.array(rhs, ctx=ctx, dtype=dtype))
    assert got.dtype == np.dtype(dtype)
    want = (lhs.astype(np.float64) * rhs.astype(np.float64)).astype(dtype)
    if dtype == "float16":
        np.testing.assert_allclose(got.asnumpy().astype(np.float64), want.astype(np.float64), rtol=1e-3)
    else:
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_an_input_overlapping_the_output_is_read_as_it_was(ctx: mx.Context) -> None:
    host = np.arange(20, dtype=np.float32).reshape(5, 4)
    a = mx.nd.array(host, ctx=ctx)
    mx.nd.broadcast_add(a, a[0:1], out=a)  # row 0 is both read by every row and overwritten
    np.testing.assert_array_equal(a.asnumpy(), host + host[0])
    a = mx.nd.array(host, ctx=ctx)
    mx.nd.elemwise_add(a[0:4], a[0:4], out=a[1:5])  # shifted by a row: contiguous, overlapping
    want = host.copy()
    want[1:5] = host[0:4] * 2
    np.testing.assert_array_equal(a.asnumpy(), want)
    a = mx.nd.array(host, ctx=ctx)
    mx.nd.elemwise_add(a, a, out=a)  # the same elements in the same layout: read in place
    np.testing.assert_array_equal(a.asnumpy(), host * 2)


# -- kernel level: CuPy views as operators hand them over ---------------------------------------------


def _family_binary(lhs: np.ndarray, rhs: np.ndarray, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """``lhs - rhs`` through the binary family on gpu(0), from host arrays turned into device views."""
    import cupy

    from lazynd.ops.elemwise_binary import GPU

    out = cupy.empty(shape, dtype)
    GPU.binary(0, "minus", lhs, rhs, out)
    return cupy.asnumpy(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "view",
    [
        pytest.param(lambda x: x.T, id="transposed"),
        pytest.param(lambda x: x[:, ::2], id="every-other-column"),
        pytest.param(lambda x: x[::-1], id="reversed-rows-64-bit-path"),
        pytest.param(lambda x: x[1:, 3:], id="offset-window"),
    ],
)
@pytest.mark.gpu
@needs_gpu
def test_strided_views_are_read_in_place(dtype: str, view: Callable[[Any], Any]) -> None:
    import cupy

    host = _values((8, 10), dtype, 5)
    device = cupy.asarray(host)
    lhs, rhs = view(device), view(device)[:1]
    want = view(host) - view(host)[:1]
    np.testing.assert_array_equal(_family_binary(lhs, rhs, want.shape, dtype), want)
    # same shape on both sides, neither contiguous: the broadcast kernel reads them without a copy
    want = view(host) - view(host)[::-1]
    np.testing.assert_array_equal(_family_binary(view(device), view(device)[::-1], want.shape, dtype), want)


@pytest.mark.gpu
@needs_gpu
def test_an_empty_broadcast_is_a_no_op() -> None:
    import cupy

    lhs, rhs = cupy.ones((0, 4), "float32"), cupy.ones((3, 0, 1), "float32")
    assert _family_binary(lhs, rhs, (3, 0, 4), "float32").shape == (3, 0, 4)


@pytest.mark.gpu
@needs_gpu
def test_a_row_that_is_not_a_multiple_of_the_block_and_unroll_is_covered_to_its_end() -> None:
    import cupy

    host = _values((3, 1031), "float32", 6)
    want = host - host[:1]
    got = _family_binary(cupy.asarray(host), cupy.asarray(host[:1]), want.shape, "float32")
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("n", [1, 5, 255, 1031, 3 * 4 * 64 + 7])
def test_flat_maps_cover_every_element_through_several_grid_steps(n: int) -> None:
    # the launch gives each thread UNROLL elements (flat_launch_config); here two blocks of 64
    # threads take several steps of the grid-stride loop, with a ragged last step
    import cupy

    from lazynd.ops.elemwise_binary import GPU as BINARY
    from lazynd.ops.elemwise_unary import GPU as UNARY

    grid, block = (2,), (64,)
    a, b = _values((n,), "float32", 7), _values((n,), "float32", 8)
    da, db, out = cupy.asarray(a), cupy.asarray(b), cupy.full((n,), -1.0, "float32")
    BINARY._kernel(0, "", "minus", "float32")(grid, block, (da, db, out, n))
    np.testing.assert_array_equal(cupy.asnumpy(out), a - b)
    UNARY._kernel(0, "", "negative", "float32")(grid, block, (da, out, n))
    np.testing.assert_array_equal(cupy.asnumpy(out), -a)
    BINARY._kernel(0, "scalar_", "minus", "float32")(grid, block, (da, np.float32(2.5), out, n))
    np.testing.assert_array_equal(cupy.asnumpy(out), a - np.float32(2.5))
    BINARY._kernel(0, "rscalar_", "minus", "float32")(grid, block, (da, np.float32(2.5), out, n))
    np.testing.assert_array_equal(cupy.asnumpy(out), np.float32(2.5) - a)


@pytest.mark.gpu
@needs_gpu
def test_flat_launches_give_each_thread_unroll_elements() -> None:
    from lazynd.backend.cuda.elementwise import UNROLL, flat_launch_config

    assert flat_launch_config(1 << 20) == (((1 << 20) // UNROLL // 256,), (256,))
    assert flat_launch_config(1) == ((1,), (256,))

"""Operators whose CPU kernels took routes of their own give what their GPU kernels give.

The CPU's ``topk`` sorts only the candidates a partition leaves (a GPU sorts whole rows), its global
pooling is one reduction over the spatial axes (a GPU runs pooling.cu's windows), its scatter-add of
whole rows (``take``'s and ``Embedding``'s gradients) goes through NumPy's one-dimensional
``add.at`` (a GPU's through CuPy's), and LRN keeps its scale as a hidden output on both.  Each side
was tested against NumPy on its own; these tests hold the two devices to each other on the inputs
where the routes differ most: ties, NaNs and infinities, repeated and out-of-range indices, windows
that tie.  Forward and gradient, every float dtype, through :func:`lazynd.testing.check_consistency`
or autograd on both devices.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_sorting import tied_rows  # (7, 40, 3): ties at every k, NaN and +-inf rows

import lazynd as mx
from lazynd.testing import assert_almost_equal, check_consistency

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]

BOTH = [mx.cpu(0), mx.gpu(0)] if mx.num_gpus() else []
FLOATS = ("float16", "float32", "float64")
TOLERANCE = {
    "float16": dict(rtol=2e-2, atol=2e-2),
    "float32": dict(rtol=1e-5, atol=1e-5),
    "float64": dict(rtol=1e-10, atol=1e-12),
}


# -- topk, sort, argsort: ties, NaN and infinities -------------------------------------------------
def _on_both(function) -> list:
    return [function(ctx) for ctx in BOTH]


@pytest.fixture
def stable_device_sort(monkeypatch):
    """CuPy's ``sort`` and ``argsort`` are stable (its documentation: ``kind=None`` is 'stable'), and the
    GPU's ``topk`` counts on it; the CUDA emulator's fake CuPy sorts with NumPy's default quicksort,
    which is not, so there (only) its ``argsort`` is made stable, as CuPy's is."""
    import cupy

    if hasattr(cupy, "_call"):  # the emulator's fake
        argsort = cupy.argsort
        monkeypatch.setattr(cupy, "argsort", lambda a, axis=-1, kind=None: argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8"])
@pytest.mark.parametrize("ascend", [False, True], ids=["descending", "ascending"])
@pytest.mark.parametrize("k", [1, 3, 17, 40])
@pytest.mark.usefixtures("stable_device_sort")
def test_topk_values_and_indices_agree_on_ties_and_nans(dtype, ascend, k):
    a = tied_rows(dtype, seed=k)
    for axis in (1, 0):
        kk = min(k, a.shape[axis])

        def top(ctx, axis=axis, kk=kk):
            values, indices = mx.nd.topk(
                mx.nd.array(a, ctx=ctx, dtype=dtype), k=kk, axis=axis, is_ascend=ascend, ret_typ="both", dtype="int64"
            )
            return values.asnumpy(), indices.asnumpy()

        (cpu_values, cpu_indices), (gpu_values, gpu_indices) = _on_both(top)
        np.testing.assert_array_equal(gpu_indices, cpu_indices, err_msg=f"axis {axis}: indices")
        np.testing.assert_array_equal(gpu_values, cpu_values, err_msg=f"axis {axis}: values")


@pytest.mark.parametrize("ascend", [False, True], ids=["descending", "ascending"])
@pytest.mark.usefixtures("stable_device_sort")
def test_topk_mask_and_value_gradient_agree_on_ties(ascend):
    a = tied_rows("float32", seed=5)[:, :, 2]

    def run(ctx):
        mask = mx.nd.topk(mx.nd.array(a, ctx=ctx), k=4, ret_typ="mask", is_ascend=ascend).asnumpy()
        x = mx.nd.array(a, ctx=ctx)
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.topk(x, k=4, ret_typ="value", is_ascend=ascend)
        y.backward(mx.nd.array(np.arange(y.size, dtype=np.float32).reshape(y.shape), ctx=ctx))
        return mask, x.grad.asnumpy()

    (cpu_mask, cpu_grad), (gpu_mask, gpu_grad) = _on_both(run)
    assert cpu_mask.sum() == 4 * a.shape[0]
    np.testing.assert_array_equal(gpu_mask, cpu_mask)
    np.testing.assert_array_equal(gpu_grad, cpu_grad)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("ascend", [False, True], ids=["descending", "ascending"])
@pytest.mark.usefixtures("stable_device_sort")
def test_sort_and_argsort_agree_on_ties_and_nans(dtype, ascend):
    a = tied_rows(dtype, seed=11)
    for op in ("sort", "argsort"):
        for axis in (1, 0, -1):
            params = {"axis": axis, "is_ascend": ascend}
            cpu, gpu = check_consistency(op, [a], params, ctx_list=BOTH, grad=False, rtol=0, atol=0)
            np.testing.assert_array_equal(gpu[0], cpu[0], err_msg=f"{op} axis {axis}")


# -- global pooling: one reduction on the CPU, pooling.cu's windows on a GPU -----------------------
GLOBAL_CASES = {
    "1-D": ((3, 4, 7), {"global_pool": True}),
    "2-D": ((3, 4, 5, 6), {"global_pool": True}),
    "3-D": ((2, 3, 3, 4, 5), {"global_pool": True}),
    # one window a sample, smaller than the input (the CPU takes the same reduction)
    "one window, smaller than the input": ((3, 2, 5, 6), {"kernel": (3, 4), "stride": (3, 3)}),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("case", list(GLOBAL_CASES))
def test_global_pooling_agrees_with_ties_in_its_windows(case, pool_type, dtype):
    shape, params = GLOBAL_CASES[case]
    params = {**params, "pool_type": pool_type, **({"p_value": 2} if pool_type == "lp" else {})}
    # small integers: every window holds ties of its maximum (its gradient goes to the first, row-major)
    x = np.random.default_rng(3).integers(-3, 4, shape).astype(dtype)
    check_consistency("Pooling", [x], params, ctx_list=BOTH, **TOLERANCE[dtype])


def test_global_max_pooling_of_nan_agrees():
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 4)).astype(np.float32)
    x[0, 1, 2, 3] = x[1, 2, 0, 0] = np.nan
    cpu, gpu = check_consistency("Pooling", [x], {"global_pool": True, "pool_type": "max"}, ctx_list=BOTH)
    assert np.isnan(cpu[0]).sum() == 2
    np.testing.assert_array_equal(gpu[0], cpu[0])


# -- scatter-add of whole rows: take's and Embedding's gradients ------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_and_its_gradient_agree_with_repeated_and_out_of_range_indices(axis, mode, dtype):
    a = np.random.default_rng(5).standard_normal((5, 6, 4)).astype(dtype)
    # repeated rows (their gradients add up), and indices past either end (clipped or wrapped)
    indices = np.array([[2, 2, -1], [7, 0, 2], [2, -8, 3]], np.float32)
    params = {"axis": axis, "mode": mode}
    check_consistency("take", [a, indices], params, ctx_list=BOTH, **TOLERANCE[dtype])


@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_take_gradient_into_an_out_array_agrees(strided):
    # straight into a contiguous gradient (zeroed first); through a buffer into a strided view,
    # whose other columns keep their values
    head = np.random.default_rng(1).standard_normal((4, 5, 2)).astype(np.float32)
    indices = np.array([2, 2, -1, 7, 2], np.float32)

    def run(ctx):
        base = mx.nd.ones((4, 3, 4) if strided else (4, 3, 2), ctx=ctx)
        out = base[:, :, ::2] if strided else base
        like = mx.nd.zeros((4, 3, 2), ctx=ctx)
        mx.nd._backward_take(
            mx.nd.array(head, ctx=ctx), mx.nd.array(indices, ctx=ctx), like, axis=1, mode="wrap", out=out
        )
        return base.asnumpy()

    cpu, gpu = _on_both(run)
    assert_almost_equal(gpu, cpu, rtol=1e-6, atol=1e-6, names=("take gradient on gpu(0)", "on cpu(0)"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_gradient_sums_repeated_ids_alike(dtype):
    ids = np.array([[1, 3, 3, 0], [3, 7, 1, 3]], np.float32)  # 3 four times, 7 past the vocabulary's end
    weight = np.random.default_rng(6).standard_normal((6, 5)).astype(dtype)
    params = {"input_dim": 6, "output_dim": 5, "dtype": dtype}
    check_consistency("Embedding", [ids, weight], params, ctx_list=BOTH, **TOLERANCE[dtype])


# -- LRN: its output, its hidden scale (tmp_norm) and its gradient ----------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_lrn_and_its_gradient_agree(dtype):
    x = np.random.default_rng(7).uniform(-2, 2, (2, 6, 3, 4)).astype(dtype)
    check_consistency("LRN", [x], {"nsize": 5, "alpha": 0.01, "beta": 0.75, "knorm": 1.5}, ctx_list=BOTH)


@pytest.mark.parametrize("dtype", FLOATS)
def test_lrn_hidden_scale_agrees(dtype):
    x = np.random.default_rng(8).uniform(-2, 2, (2, 5, 3, 3)).astype(dtype)

    def run(ctx):
        data = mx.nd.array(x, ctx=ctx, dtype=dtype)
        out = [mx.nd.empty(x.shape, ctx=ctx, dtype=dtype) for _ in range(2)]
        mx.nd.LRN(data, nsize=3, alpha=0.1, out=out)
        return [o.asnumpy() for o in out]

    (cpu_out, cpu_scale), (gpu_out, gpu_scale) = _on_both(run)
    window = np.pad(x.astype(np.float64) ** 2, [(0, 0), (1, 1), (0, 0), (0, 0)])
    want = 2.0 + 0.1 / 3 * (window[:, :-2] + window[:, 1:-1] + window[:, 2:])
    assert_almost_equal(cpu_scale, want, **TOLERANCE[dtype], names=("LRN's hidden scale on cpu(0)", "formula"))
    assert_almost_equal(gpu_scale, cpu_scale, **TOLERANCE[dtype], names=("on gpu(0)", "on cpu(0)"))
    assert_almost_equal(gpu_out, cpu_out, **TOLERANCE[dtype], names=("LRN on gpu(0)", "on cpu(0)"))

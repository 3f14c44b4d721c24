"""The direct cuBLAS route of GPU matrix products (lazynd/backend/cuda/gemm.py), checked on the host.

cuBLAS is column-major and the route passes it the transposed problem with leading dimensions
read off the strides; an error there gives wrong numbers only on a real GPU, where the CPU
emulator (which has no cuBLAS) cannot look.  Here the arrays are host arrays that expose a
``data.ptr`` as CuPy's do, and a column-major GEMM written from cuBLAS's documented contract
reads and writes them through those pointers, so every layout the operators pass is checked
against NumPy's ``a @ b``.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from lazynd.backend.cuda import gemm
from lazynd.errors import LazyNDError


class _Pointer:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        self.id = 0


class HostArray(np.ndarray):
    """A host array with CuPy's ``data.ptr`` (the address of its first element) and ``device``."""

    @property
    def data(self):  # type: ignore[override]
        return _Pointer(self.__array_interface__["data"][0])

    @property
    def device(self):
        return _Pointer(0)


def _strided(base: np.ndarray, ptr: int, rows: int, cols: int, ld: int) -> np.ndarray:
    """The column-major ``rows x cols`` matrix at ``ptr`` with leading dimension ``ld``."""
    item = base.itemsize
    return np.lib.stride_tricks.as_strided(
        np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(np.ctypeslib.as_ctypes_type(base.dtype))), (1,)),
        shape=(rows, cols),
        strides=(item, ld * item),
    )


class ColumnMajorBlas:
    """``C = alpha * op(A) @ op(B) + beta * C``, column-major, as cublas<t>gemm defines it."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def setStream(self, handle, stream):  # noqa: N802 - CuPy's names
        self.stream = stream

    def setPointerMode(self, handle, mode):  # noqa: N802
        assert mode == 0, "alpha and beta are host pointers"

    def _gemm(self, dtype, handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        self.calls.append((ta, tb, m, n, k, lda, ldb, ldc))
        # CuPy's binding takes these as C ints: a wider one is an OverflowError there
        assert all(0 <= v <= 2**31 - 1 for v in (m, n, k, lda, ldb, ldc)), "an int argument overflows"
        probe = np.zeros(1, dtype)
        scalar = ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))
        alpha_v, beta_v = ctypes.cast(alpha, scalar)[0], ctypes.cast(beta, scalar)[0]
        assert lda >= max(1, m if ta == 0 else k) and ldb >= max(1, k if tb == 0 else n) and ldc >= max(1, m)
        op_a = _strided(probe, a, m, k, lda) if ta == 0 else _strided(probe, a, k, m, lda).T
        op_b = _strided(probe, b, k, n, ldb) if tb == 0 else _strided(probe, b, n, k, ldb).T
        out = _strided(probe, c, m, n, ldc)
        out[...] = alpha_v * (op_a.astype(np.float64) @ op_b) + beta_v * (out if beta_v else 0)

    def sgemm(self, *args):
        self._gemm(np.float32, *args)

    def dgemm(self, *args):
        self._gemm(np.float64, *args)

    def _batched(self, dtype, handle, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count):
        item = np.dtype(dtype).itemsize
        for i in range(count):
            self._gemm(
                dtype,
                handle,
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a + i * sa * item,
                lda,
                b + i * sb * item,
                ldb,
                beta,
                c + i * sc * item,
                ldc,
            )

    def sgemmStridedBatched(self, *args):  # noqa: N802
        self._batched(np.float32, *args)

    def dgemmStridedBatched(self, *args):  # noqa: N802
        self._batched(np.float64, *args)


@pytest.fixture
def blas(monkeypatch):
    fake = ColumnMajorBlas()
    monkeypatch.setattr(gemm, "bindings", lambda: gemm.Bindings(fake, lambda: 1, lambda: 7))
    monkeypatch.setattr(gemm, "_fallback", lambda a, b, out: pytest.fail("took the cupy.matmul fallback"))
    monkeypatch.setattr(gemm, "_ones_like", lambda out, rows: np.ones((1, rows), out.dtype).view(HostArray))
    monkeypatch.setattr(gemm, "_empty_like", lambda like, shape: np.empty(shape, like.dtype).view(HostArray))
    gemm._ONES.clear()
    return fake


def _host(x: np.ndarray) -> HostArray:
    return x.view(HostArray)


LAYOUTS = {
    "row-major": lambda rng, r, c, dt: rng.standard_normal((r, c)).astype(dt),
    "transposed": lambda rng, r, c, dt: rng.standard_normal((c, r)).astype(dt).T,
    "row slice": lambda rng, r, c, dt: rng.standard_normal((r, c + 3)).astype(dt)[:, 1 : c + 1],
    "transposed slice": lambda rng, r, c, dt: rng.standard_normal((c, r + 2)).astype(dt)[:, :r].T,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la", list(LAYOUTS))
@pytest.mark.parametrize("lb", list(LAYOUTS))
@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 4, 6), (6, 1, 2), (3, 5, 1), (1, 1, 1)], ids=str)
def test_matmul_takes_every_layout_to_cublas_right(blas, dtype, la, lb, shape):
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = LAYOUTS[la](rng, m, k, dtype), LAYOUTS[lb](rng, k, n, dtype)
    out = _host(np.full((m, n), np.nan, dtype))
    gemm.matmul(_host(a), _host(b), out)
    assert len(blas.calls) == 1
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_matmul_writes_into_a_row_slice_of_a_wider_output(blas):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    wide = np.zeros((4, 5), np.float32)
    gemm.matmul(_host(a), _host(b), _host(wide)[:, 1:3])
    np.testing.assert_allclose(wide[:, 1:3], a @ b, rtol=1e-5)
    assert not wide[:, [0, 3, 4]].any(), "wrote outside the output's columns"


def test_column_sum_is_a_gemm_with_a_row_of_ones(blas):
    x = np.random.default_rng(1).standard_normal((9, 4)).astype(np.float32)
    out = _host(np.zeros(4, np.float32))
    gemm.column_sum(_host(x), out)
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5)
    assert blas.calls, "the column sum did not reach cuBLAS"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channel_sum_is_two_gemms_with_ones(blas, dtype):
    x = np.random.default_rng(2).standard_normal((5, 3, 7)).astype(dtype)
    out = _host(np.zeros(3, dtype))
    gemm.channel_sum(_host(x), out)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=(0, 2)), rtol=1e-5)
    assert len(blas.calls) == 2, "the channel sum did not reach cuBLAS as two GEMMs"


def test_matmul_leaves_what_cublas_cannot_read_to_cupy(monkeypatch):
    fake = ColumnMajorBlas()
    monkeypatch.setattr(gemm, "bindings", lambda: gemm.Bindings(fake, lambda: 1, lambda: 7))
    taken = []
    monkeypatch.setattr(gemm, "_fallback", lambda a, b, out: taken.append(out.shape))
    x = np.ones((4, 4), np.float32)
    gemm.matmul(_host(x), _host(x), _host(x))  # the output is an input
    gemm.matmul(
        _host(np.ones((4, 4), np.float16)), _host(np.ones((4, 4), np.float16)), _host(np.ones((4, 4), np.float16))
    )
    gemm.matmul(_host(x[::2, ::2]), _host(np.ones((2, 2), np.float32)), _host(np.ones((2, 2), np.float32)))
    uneven = np.ones((2, 3, 4, 4), np.float32)[:, :2]  # batch axes that do not step evenly
    gemm.matmul(_host(uneven), _host(x), _host(np.ones((2, 2, 4, 4), np.float32)))
    gemm.matmul(_host(np.ones((0, 4), np.float32)), _host(x), _host(np.ones((0, 4), np.float32)))
    # (3, 1) against (1, 2): neither operand's matrices are an even stride apart over (3, 2)
    gemm.matmul(
        _host(np.ones((3, 1, 4, 5), np.float32)),
        _host(np.ones((1, 2, 5, 6), np.float32)),
        _host(np.ones((3, 2, 4, 6), np.float32)),
    )
    assert len(taken) == 6 and not fake.calls


BATCHED = {
    # a convolution's forward: one weight matrix for every sample, (1, F, K) @ (n, 1, K, P)
    "conv forward": lambda rng: (rng.standard_normal((1, 4, 6)), rng.standard_normal((5, 1, 6, 7))),
    # its data gradient: the weight transposed (a view), (1, K, F) @ (n, 1, F, P)
    "conv data gradient": lambda rng: (
        rng.standard_normal((1, 4, 6)).transpose(0, 2, 1),
        rng.standard_normal((5, 1, 4, 7)),
    ),
    # its weight gradient per sample: (n, 1, F, P) @ (n, 1, P, K) from a transposed view
    "conv weight gradient": lambda rng: (
        rng.standard_normal((5, 1, 4, 7)),
        rng.standard_normal((5, 1, 6, 7)).transpose(0, 1, 3, 2),
    ),
    # one sample (a batch of ones): a GEMM of its one pair of matrices
    "conv forward, one sample": lambda rng: (rng.standard_normal((1, 4, 6)), rng.standard_normal((1, 1, 6, 7))),
    "conv weight gradient, one sample": lambda rng: (
        rng.standard_normal((1, 1, 4, 7)),
        rng.standard_normal((1, 1, 6, 7)).transpose(0, 1, 3, 2),
    ),
    "stack @ matrix": lambda rng: (rng.standard_normal((3, 4, 5)), rng.standard_normal((5, 2))),
    "matrix @ stack": lambda rng: (rng.standard_normal((4, 5)), rng.standard_normal((2, 3, 5, 2))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(BATCHED))
def test_stacks_of_matrices_go_to_strided_batched_gemm_right(blas, dtype, case):
    _check_stack(dtype, case)


def _check_stack(dtype, case):
    """The product of the stacks ``BATCHED[case]`` through :func:`gemm.matmul` against NumPy's."""
    a, b = (x.astype(dtype) for x in BATCHED[case](np.random.default_rng(len(case))))
    want = a.astype(np.float64) @ b
    out = _host(np.full(want.shape, np.nan, dtype))
    gemm.matmul(_host(a), _host(b), out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def _huge_stride(rows: int, cols: int, transposed: bool) -> HostArray:
    """A float32 view whose matrix step is 2**31 elements (it is never read: cuBLAS must not get it)."""
    base = np.zeros(4, np.float32)
    wide = 2**31 * base.itemsize
    strides = (base.itemsize, wide) if transposed else (wide, base.itemsize)
    return _host(np.lib.stride_tricks.as_strided(base, shape=(rows, cols), strides=strides))


@pytest.mark.parametrize("transposed", [False, True], ids=["row step", "column step"])
@pytest.mark.parametrize("operand", ["a", "b", "out"])
def test_a_leading_dimension_past_int32_goes_to_cupy(monkeypatch, transposed, operand):
    fake = ColumnMajorBlas()
    monkeypatch.setattr(gemm, "bindings", lambda: gemm.Bindings(fake, lambda: 1, lambda: 7))
    taken = []
    monkeypatch.setattr(gemm, "_fallback", lambda a, b, out: taken.append(out.shape))
    # the view's extent spans 8 GiB of addresses, which may hold the other arrays: not this check
    monkeypatch.setattr(gemm, "_overlaps", lambda x, out: False)
    args = {"a": _host(np.ones((2, 2), np.float32)), "b": _host(np.ones((2, 2), np.float32))}
    args["out"] = _host(np.zeros((2, 2), np.float32))
    args[operand] = _huge_stride(2, 2, transposed)
    gemm.matmul(args["a"], args["b"], args["out"])
    assert taken == [(2, 2)] and not fake.calls


def test_a_single_row_with_a_huge_step_still_goes_to_cublas(blas, monkeypatch):
    monkeypatch.setattr(gemm, "_overlaps", lambda x, out: False)  # as above
    # one row has no step to read: its leading dimension is its length, whatever its stride
    a = np.lib.stride_tricks.as_strided(np.arange(3, dtype=np.float32), shape=(1, 3), strides=(2**33, 4))
    b = np.random.default_rng(3).standard_normal((3, 2)).astype(np.float32)
    out = _host(np.zeros((1, 2), np.float32))
    gemm.matmul(_host(a), _host(b), out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    assert len(blas.calls) == 1


# -- cuBLAS's C functions through ctypes (gemm.LibraryBlas) -----------------------------------------
# Against the stand-in library of tests/cublas_stand_in.py (cuBLAS's C signatures, built by the C compiler).


@pytest.fixture
def stand_in_library(cublas_stand_in):
    return cublas_stand_in


@pytest.fixture
def library_blas(monkeypatch, stand_in_library):
    functions = gemm.LibraryBlas(stand_in_library)
    monkeypatch.setattr(gemm, "bindings", lambda: gemm.Bindings(functions, lambda: 1, lambda: 7))
    monkeypatch.setattr(gemm, "_fallback", lambda a, b, out: pytest.fail("took the cupy.matmul fallback"))
    stand_in_library.stand_in_calls.restype = ctypes.c_longlong
    return stand_in_library.stand_in_calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("la", "lb"), [("row-major", "transposed"), ("transposed slice", "row slice")])
def test_cublas_c_functions_take_every_layout_right(library_blas, dtype, la, lb):
    rng = np.random.default_rng(4)
    a, b = LAYOUTS[la](rng, 5, 7, dtype), LAYOUTS[lb](rng, 7, 3, dtype)
    out = _host(np.full((5, 3), np.nan, dtype))
    before = library_blas()
    gemm.matmul(_host(a), _host(b), out)
    assert library_blas() == before + 1
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", ["conv forward", "conv weight gradient", "matrix @ stack"])
def test_cublas_c_functions_take_stacks_right(library_blas, dtype, case):
    _check_stack(dtype, case)


def test_a_failing_cublas_c_function_is_a_clear_error(stand_in_library):
    functions = gemm.LibraryBlas(stand_in_library)
    with pytest.raises(LazyNDError, match="cublasSetPointerMode_v2 failed: cuBLAS status 7"):
        functions.setPointerMode(1, 1)


def test_the_cublas_library_is_found_among_those_loaded():
    assert gemm.loaded_library("libc.so") is not None  # every Linux process has the C library
    assert gemm.loaded_library("libno-such-library") is None

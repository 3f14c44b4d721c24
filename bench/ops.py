"""Operators, family by family: lazynd vs the same computation hand-written in NumPy and in PyTorch (CPU).

Run: ``python bench/ops.py [--repeat 15] [--calls 5] [--only conv] [--runs 5]``.  Prints one
table (with ``--runs K``: one per fresh process, then each row's median ratio and range).
Goal (issue 3): lazynd within 1.2x of hand NumPy on 1M-element arrays and on a LeNet-sized
convolution batch; convolution forward+backward within 1.5x of PyTorch CPU.

lazynd is measured as a user runs it: call the operator, then ``wait_to_read()``
its result, on the default ThreadedEngine and again on NaiveEngine (which runs
the kernel on the calling thread: the difference is the hand-off to a worker).
Each timing runs calls back to back, as many as fill about 2 ms (at least ``--calls``, the same
count for every column of a case); the columns are timed in turns,
``--repeat`` rounds, and the table shows each column's best timing, per call.  Before timing, every lazynd result is
checked against the NumPy reference so both columns compute the same thing.
The hand-NumPy references are what a careful NumPy user writes: ``out=`` where
it saves a temporary, views instead of copies, the fastest formulation we found.
PyTorch runs with its default thread count; NumPy's BLAS likewise (both printed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402
from lazynd.backend.blas import BLAS_THREADS  # noqa: E402
from lazynd.backend.pool import aligned_empty  # noqa: E402

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # PyTorch is optional
    torch = None

N = 1000  # 1000 x 1000 = 1M elements
# after a PyTorch timing its worker threads keep spinning for work a little while; the next
# column waits this long so that it does not share the two cores with them
TORCH_SETTLE_S = 0.02
RNG = np.random.default_rng(0)
# each timing runs a case this long (in calls of its NumPy reference), within these bounds
TIMING_S = 0.002
MAX_CALLS = 200
GOAL = 1.2  # issue 3: within 1.2x of hand NumPy


@dataclass
class Case:
    family: str
    name: str
    lazynd: Callable[[], object]  # returns an NDArray or a list of them
    numpy: Callable[[], object]
    torch: Callable[[], object] | None = None
    check: bool = True
    # counted against the 1.2x goal; False for a row with no work on the elements (a view's O(1)
    # Python call against NumPy's C attribute), which is shown for information
    goal: bool = True


def _wait(result: object) -> None:
    for r in result if isinstance(result, (list, tuple)) else [result]:
        r.wait_to_read()


def _sync_for(result: object) -> Callable[[object], None]:
    """How a timing waits for a case's lazynd result: one array's own ``wait_to_read``, else :func:`_wait`.

    The general loop costs 0.25 us a call more than the method, on the lazynd columns only.
    """
    return type(result).wait_to_read if isinstance(result, mx.nd.NDArray) else _wait  # type: ignore[return-value]


def _as_numpy(result: object) -> list[np.ndarray]:
    items = result if isinstance(result, (list, tuple)) else [result]
    return [np.asarray(r.asnumpy() if hasattr(r, "asnumpy") else r) for r in items]


def rand(*shape: int, low: float = -1.0, high: float = 1.0, dtype: str = "float32") -> np.ndarray:
    """Uniform values in an array aligned as lazynd's own large buffers are (on a page).

    malloc gives a large block 16-byte alignment, and OpenBLAS's dot runs 1.5x slower there:
    without this, the ``norm`` row measured the reference array's alignment, not the code.
    """
    return aligned(RNG.uniform(low, high, size=shape).astype(dtype))


def aligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` starting on a page, as every input array of the benchmark does (see :func:`rand`)."""
    copy = aligned_empty(values.shape, values.dtype, values.nbytes)
    copy[...] = values
    return copy


def nd(*arrays: np.ndarray) -> list:
    """lazynd arrays on the very memory of the NumPy references' inputs (as ``torch.from_numpy`` gives PyTorch).

    Every column then reads the same bytes: ``mx.nd.array`` would copy each input to an
    address of its own, and a copy kernel such as ``broadcast_to`` runs 10-30% faster or
    slower with where its source row sits relative to the rows it writes (most likely 4K
    aliasing), so the comparison would measure that placement instead of the operator.
    """
    for v in arrays:
        assert v.flags.c_contiguous and v.__array_interface__["data"][0] % 4096 == 0, "inputs come from rand/aligned"
    return [mx.nd.from_numpy(v, zero_copy=True) for v in arrays]


def _t(a: np.ndarray) -> object:
    """``a`` as a PyTorch tensor on the same memory (None without PyTorch: its column is left out)."""
    return torch.from_numpy(a) if torch is not None else None


def _t_index(a: np.ndarray) -> object:
    """Float indices ``a`` as the int64 tensor PyTorch's indexing takes (None without PyTorch)."""
    return torch.from_numpy(a.astype(np.int64)) if torch is not None else None


def _t_full(n: int, value: float) -> object:
    """A float32 tensor of ``n`` values ``value`` (None without PyTorch)."""
    return torch.full((n,), value) if torch is not None else None


# -- elementwise -------------------------------------------------------------------------------
def unary_cases() -> list[Case]:
    x = rand(N, N)
    xp = rand(N, N, low=0.1, high=2.0)
    a, ap = nd(x, xp)
    tx, txp = _t(x), _t(xp)

    def np_sigmoid() -> np.ndarray:
        out = np.negative(x)
        np.exp(out, out=out)
        out += 1
        return np.reciprocal(out, out=out)

    return [
        Case("unary", "exp", lambda: mx.nd.exp(a), lambda: np.exp(x), lambda: torch.exp(tx)),
        Case("unary", "sqrt", lambda: mx.nd.sqrt(ap), lambda: np.sqrt(xp), lambda: torch.sqrt(txp)),
        Case("unary", "tanh", lambda: mx.nd.tanh(a), lambda: np.tanh(x), lambda: torch.tanh(tx)),
        Case("unary", "sigmoid", lambda: mx.nd.sigmoid(a), np_sigmoid, lambda: torch.sigmoid(tx)),
        Case("unary", "relu", lambda: mx.nd.relu(a), lambda: np.maximum(x, 0), lambda: torch.relu(tx)),
        Case("unary", "abs", lambda: mx.nd.abs(a), lambda: np.abs(x), lambda: torch.abs(tx)),
        Case("unary", "square", lambda: mx.nd.square(a), lambda: np.square(x), lambda: torch.square(tx)),
        Case(
            "unary",
            "clip",
            lambda: mx.nd.clip(a, a_min=-0.5, a_max=0.5),
            lambda: np.clip(x, -0.5, 0.5),
            lambda: torch.clamp(tx, -0.5, 0.5),
        ),
        Case(
            "unary",
            "Cast f32->f16",
            lambda: mx.nd.Cast(a, dtype="float16"),
            lambda: x.astype(np.float16),
            lambda: tx.to(torch.float16),
        ),
    ]


def binary_cases() -> list[Case]:
    x, y = rand(N, N), rand(N, N, low=0.5, high=1.5)
    a, b = nd(x, y)
    tx, ty = _t(x), _t(y)
    return [
        Case("binary", "a + b", lambda: a + b, lambda: x + y, lambda: tx + ty),
        Case("binary", "a * b", lambda: a * b, lambda: x * y, lambda: tx * ty),
        Case("binary", "a / b", lambda: a / b, lambda: x / y, lambda: tx / ty),
        Case("binary", "a + 2 (scalar)", lambda: a + 2.0, lambda: x + np.float32(2.0), lambda: tx + 2.0),
        Case(
            "binary", "maximum", lambda: mx.nd._maximum(a, b), lambda: np.maximum(x, y), lambda: torch.maximum(tx, ty)
        ),
        Case("binary", "a ** 2.0 (scalar)", lambda: a**2.0, lambda: np.square(x), lambda: tx**2.0),
        Case(
            "binary",
            "add_n (3 inputs)",
            lambda: mx.nd.add_n(a, b, a),
            lambda: np.add(np.add(x, y), x, out=None),
            lambda: tx + ty + tx,
        ),
    ]


def broadcast_cases() -> list[Case]:
    x, row, col = rand(N, N), rand(1, N), rand(N, 1)
    a, r, c = nd(x, row, col)
    tx, tr, tc = _t(x), _t(row), _t(col)
    return [
        Case(
            "broadcast",
            "broadcast_add (N,N)+(1,N)",
            lambda: mx.nd.broadcast_add(a, r),
            lambda: x + row,
            lambda: tx + tr,
        ),
        Case(
            "broadcast",
            "broadcast_mul (N,N)*(N,1)",
            lambda: mx.nd.broadcast_mul(a, c),
            lambda: x * col,
            lambda: tx * tc,
        ),
        Case(
            "broadcast",
            "broadcast_to (1,N)->(N,N)",
            lambda: mx.nd.broadcast_to(r, shape=(N, N)),
            lambda: np.broadcast_to(row, (N, N)).copy(),
            lambda: tr.expand(N, N).contiguous(),
        ),
    ]


def reduce_cases() -> list[Case]:
    x = rand(N, N)
    (a,), tx = nd(x), _t(x)
    return [
        Case("reduce", "sum (all)", lambda: mx.nd.sum(a), lambda: x.sum(), lambda: tx.sum()),
        Case("reduce", "sum axis=0", lambda: mx.nd.sum(a, axis=0), lambda: x.sum(axis=0), lambda: tx.sum(0)),
        Case("reduce", "sum axis=1", lambda: mx.nd.sum(a, axis=1), lambda: x.sum(axis=1), lambda: tx.sum(1)),
        Case("reduce", "mean axis=1", lambda: mx.nd.mean(a, axis=1), lambda: x.mean(axis=1), lambda: tx.mean(1)),
        Case("reduce", "max axis=1", lambda: mx.nd.max(a, axis=1), lambda: x.max(axis=1), lambda: tx.amax(1)),
        Case(
            "reduce",
            "argmax axis=1",
            lambda: mx.nd.argmax(a, axis=1),
            lambda: x.argmax(axis=1).astype(np.float32),
            lambda: tx.argmax(1),
        ),
        Case("reduce", "norm", lambda: mx.nd.norm(a), lambda: np.linalg.norm(x), lambda: torch.linalg.vector_norm(tx)),
    ]


def shape_cases() -> list[Case]:
    x = rand(N, N)
    half1, half2 = rand(N, N // 2), rand(N, N // 2)
    idx = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    labels = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    cond = aligned((rand(N, N) > 0).astype(np.float32))
    zeros = aligned(np.zeros((N, N), np.float32))
    a, h1, h2, i, lab, cnd, zs = nd(x, half1, half2, idx, labels, cond, zeros)
    tx, th1, th2, ti, tcond, tzeros = _t(x), _t(half1), _t(half2), _t_index(idx), _t(cond), _t(zeros)

    def np_one_hot() -> np.ndarray:
        out = np.zeros((N, N), np.float32)
        out[np.arange(N), labels.astype(np.int64)] = 1
        return out

    return [
        Case(
            "shape",
            "transpose",
            lambda: mx.nd.transpose(a),
            lambda: np.ascontiguousarray(x.T),
            lambda: tx.t().contiguous(),
        ),
        Case(
            "shape",
            "Reshape op (a copy)",
            lambda: mx.nd.Reshape(a, shape=(-1, 4)),
            lambda: x.reshape(-1, 4).copy(),
            lambda: tx.reshape(-1, 4).clone(),
        ),
        Case(
            "shape",
            "NDArray.reshape (a view)",
            lambda: a.reshape((-1, 4)),
            lambda: x.reshape(-1, 4),
            lambda: tx.reshape(-1, 4),
            goal=False,
        ),
        Case(
            "shape",
            "Concat dim=1",
            lambda: mx.nd.Concat(h1, h2, dim=1),
            lambda: np.concatenate([half1, half2], 1),
            lambda: torch.cat([th1, th2], 1),
        ),
        Case(
            "shape",
            "slice_axis 1/2",
            lambda: mx.nd.slice_axis(a, axis=1, begin=0, end=N // 2),
            lambda: x[:, : N // 2].copy(),
            lambda: tx[:, : N // 2].contiguous(),
        ),
        Case(
            "shape",
            "flip axis=1",
            lambda: mx.nd.flip(a, axis=1),
            lambda: x[:, ::-1].copy(),
            lambda: torch.flip(tx, (1,)),
        ),
        Case(
            "shape",
            "take rows",
            lambda: mx.nd.take(a, i),
            lambda: np.take(x, idx.astype(np.intp), axis=0),
            lambda: tx[ti],
        ),
        Case("shape", "one_hot", lambda: mx.nd.one_hot(lab, depth=N), np_one_hot, lambda: TF.one_hot(ti, N).float()),
        Case(
            "shape",
            "where",
            lambda: mx.nd.where(cnd, a, zs),
            lambda: np.where(cond != 0, x, zeros),
            lambda: torch.where(tcond != 0, tx, tzeros),
            check=True,
        ),
        Case(
            "shape",
            "tile (N,N/2)x(1,2)",
            lambda: mx.nd.tile(h1, reps=(1, 2)),
            lambda: np.tile(half1, (1, 2)),
            lambda: th1.repeat(1, 2),
        ),
        Case("shape", "sort axis=1", lambda: mx.nd.sort(a), lambda: np.sort(x, axis=-1), lambda: torch.sort(tx, -1)[0]),
    ]


def linalg_cases() -> list[Case]:
    x, w = rand(N, N), rand(N, 64)
    bx, by = rand(100, 100, 100), rand(100, 100, 100)
    a, b, ba, bb = nd(x, w, bx, by)
    tx, tw, tbx, tby = _t(x), _t(w), _t(bx), _t(by)
    return [
        Case("linalg", "dot (N,N)x(N,64)", lambda: mx.nd.dot(a, b), lambda: x @ w, lambda: tx @ tw),
        Case(
            "linalg", "dot transpose_a", lambda: mx.nd.dot(a, b, transpose_a=True), lambda: x.T @ w, lambda: tx.t() @ tw
        ),
        Case(
            "linalg",
            "batch_dot 100x(100,100)",
            lambda: mx.nd.batch_dot(ba, bb),
            lambda: np.matmul(bx, by),
            lambda: torch.bmm(tbx, tby),
        ),
    ]


# -- neural network layers ---------------------------------------------------------------------
def nn_cases() -> list[Case]:
    x, w, bias = rand(N, N), rand(256, N), rand(256)
    a, wa, ba = nd(x, w, bias)
    tx, tw, tb = _t(x), _t(w), _t(bias)

    def np_softmax(v: np.ndarray) -> np.ndarray:
        out = v - v.max(axis=-1, keepdims=True)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)
        return out

    def np_log_softmax(v: np.ndarray) -> np.ndarray:
        out = v - v.max(axis=-1, keepdims=True)
        out -= np.log(np.exp(out).sum(axis=-1, keepdims=True))
        return out

    # BatchNorm in training on a LeNet-sized activation (128, 20, 24, 24) = 1.47M elements
    bn_x = rand(128, 20, 24, 24)
    gamma, beta = rand(20, low=0.5, high=1.5), rand(20)
    bnx, bng, bnb = nd(bn_x, gamma, beta)
    mm, mv = mx.nd.zeros((20,)), mx.nd.ones((20,))
    t_bn = (_t(bn_x), _t(gamma), _t(beta), _t_full(20, 0.0), _t_full(20, 1.0))
    eps = 1e-3

    def np_batchnorm() -> np.ndarray:
        mean = bn_x.mean(axis=(0, 2, 3), keepdims=True)
        centered = bn_x - mean
        var = np.square(centered).mean(axis=(0, 2, 3), keepdims=True)
        scale = gamma.reshape(1, -1, 1, 1) / np.sqrt(var + eps)
        centered *= scale
        centered += beta.reshape(1, -1, 1, 1)
        return centered

    # Pooling: max 2x2 stride 2 on (128, 20, 24, 24)
    # non-overlapping 2x2 windows: the four strided slabs combined (faster than reshape + max over two axes)
    slabs = [bn_x[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]

    def np_pool() -> np.ndarray:
        out = np.maximum(slabs[0], slabs[1])
        np.maximum(out, slabs[2], out=out)
        return np.maximum(out, slabs[3], out=out)

    def np_avg_pool() -> np.ndarray:
        out = np.add(slabs[0], slabs[1])
        np.add(out, slabs[2], out=out)
        np.add(out, slabs[3], out=out)
        return np.multiply(out, np.float32(0.25), out=out)

    return [
        Case(
            "nn",
            "FullyConnected 1000->256",
            lambda: mx.nd.FullyConnected(a, wa, ba, num_hidden=256),
            lambda: np.add(x @ w.T, bias),
            lambda: TF.linear(tx, tw, tb),
        ),
        Case(
            "nn",
            "Activation relu",
            lambda: mx.nd.Activation(a, act_type="relu"),
            lambda: np.maximum(x, 0),
            lambda: torch.relu(tx),
        ),
        Case(
            "nn",
            "Activation tanh",
            lambda: mx.nd.Activation(a, act_type="tanh"),
            lambda: np.tanh(x),
            lambda: torch.tanh(tx),
        ),
        Case("nn", "softmax axis=-1", lambda: mx.nd.softmax(a), lambda: np_softmax(x), lambda: torch.softmax(tx, -1)),
        Case(
            "nn",
            "log_softmax",
            lambda: mx.nd.log_softmax(a),
            lambda: np_log_softmax(x),
            lambda: torch.log_softmax(tx, -1),
        ),
        Case(
            "nn",
            "BatchNorm train (128,20,24,24)",
            lambda: mx.nd.BatchNorm(bnx, bng, bnb, mm, mv, fix_gamma=False, is_train=True),
            np_batchnorm,
            lambda: TF.batch_norm(t_bn[0], t_bn[3], t_bn[4], t_bn[1], t_bn[2], training=True, eps=eps),
            check=True,
        ),
        Case(
            "nn",
            "Pooling max 2x2/2",
            lambda: mx.nd.Pooling(bnx, kernel=(2, 2), stride=(2, 2), pool_type="max"),
            np_pool,
            lambda: TF.max_pool2d(t_bn[0], 2, 2),
        ),
        Case(
            "nn",
            "Pooling avg 2x2/2",
            lambda: mx.nd.Pooling(bnx, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
            np_avg_pool,
            lambda: TF.avg_pool2d(t_bn[0], 2, 2),
        ),
    ]


def _np_conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """im2col by a strided view copied once, then one batched GEMM written in NCHW order."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # (n, c, oh, ow, kh, kw)
    col = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)
    out = np.matmul(w.reshape(f, -1), col)  # (n, f, oh*ow)
    out += b.reshape(1, -1, 1)
    return out.reshape(n, f, oh, ow), col


def _np_conv_backward(
    dy: np.ndarray, col: np.ndarray, w: np.ndarray, x_shape: tuple
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, c, h, wd = x_shape
    f, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    dym = dy.reshape(n, f, oh * ow)
    dw = np.matmul(dym, col.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    db = dym.sum(axis=(0, 2))
    dcol = np.matmul(w.reshape(f, -1).T, dym).reshape(n, c, kh, kw, oh, ow)
    dx = np.zeros(x_shape, np.float32)
    for i in range(kh):
        for j in range(kw):
            dx[:, :, i : i + oh, j : j + ow] += dcol[:, :, i, j]
    return dx, dw, db


def conv_cases() -> list[Case]:
    """LeNet's two convolutions: (128,1,28,28) -> 20 filters 5x5; (128,20,12,12) -> 50 filters 5x5."""
    cases = []
    for label, (n, c, s, f) in (
        ("conv1 128x1x28x28 -> 20@5x5", (128, 1, 28, 20)),
        ("conv2 128x20x12x12 -> 50@5x5", (128, 20, 12, 50)),
    ):
        x, w, b = rand(n, c, s, s), rand(f, c, 5, 5, low=-0.1, high=0.1), rand(f)
        o = s - 4
        dy = rand(n, f, o, o)
        xa, wa, ba, dya = nd(x, w, b, dy)
        tx, tw, tb, tdy = _t(x), _t(w), _t(b), _t(dy)
        params = {"kernel": (5, 5), "num_filter": f}

        def lz_fwd(xa=xa, wa=wa, ba=ba, params=params) -> object:
            return mx.nd.Convolution(xa, wa, ba, **params)

        def lz_fwd_bwd(xa=xa, wa=wa, ba=ba, dya=dya, params=params) -> object:
            y = mx.nd.Convolution(xa, wa, ba, **params)
            return [y, *mx.nd._backward_Convolution(dya, xa, wa, **params)]

        def np_fwd(x=x, w=w, b=b) -> object:
            return _np_conv_forward(x, w, b)[0]

        def np_fwd_bwd(x=x, w=w, b=b, dy=dy) -> object:
            y, col = _np_conv_forward(x, w, b)
            return [y, *_np_conv_backward(dy, col, w, x.shape)]

        def torch_fwd(tx=tx, tw=tw, tb=tb) -> object:
            with torch.no_grad():
                return TF.conv2d(tx, tw, tb)

        def torch_fwd_bwd(tx=tx, tw=tw, tb=tb, tdy=tdy) -> object:
            xs, ws, bs = (t.detach().requires_grad_() for t in (tx, tw, tb))
            y = TF.conv2d(xs, ws, bs)
            y.backward(tdy)
            return [y.detach(), xs.grad, ws.grad, bs.grad]

        cases.append(Case("conv", f"{label} fwd", lz_fwd, np_fwd, torch_fwd))
        cases.append(Case("conv", f"{label} fwd+bwd", lz_fwd_bwd, np_fwd_bwd, torch_fwd_bwd))
    return cases


def loss_cases() -> list[Case]:
    x = rand(N, N)
    label = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    target = rand(N, N)
    prob = np.exp(x - x.max(axis=-1, keepdims=True))
    prob = aligned(prob / prob.sum(axis=-1, keepdims=True))
    a, lab, tgt, p = nd(x, label, target, prob)
    rows, cols = np.arange(N), label.astype(np.intp)
    tx, tl, tt, tp = _t(x), _t_index(label), _t(target), _t(prob)

    def np_softmax() -> np.ndarray:
        out = x - x.max(axis=-1, keepdims=True)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)
        return out

    def np_softmax_output_grad() -> np.ndarray:
        grad = prob.copy()
        grad[rows, cols] -= 1
        return grad

    def torch_softmax_output_grad() -> object:
        grad = tp.clone()
        grad[torch.arange(N), tl] -= 1
        return grad

    def np_linreg_grad() -> np.ndarray:
        # MXNet divides by the number of outputs per sample
        grad = x - target
        grad *= np.float32(1.0 / N)
        return grad

    return [
        Case(
            "loss", "SoftmaxOutput fwd", lambda: mx.nd.SoftmaxOutput(a, lab), np_softmax, lambda: torch.softmax(tx, -1)
        ),
        Case(
            "loss",
            "SoftmaxOutput bwd",
            lambda: mx.nd._backward_SoftmaxOutput(p, lab),
            np_softmax_output_grad,
            torch_softmax_output_grad,
        ),
        Case(
            "loss",
            "LinearRegressionOutput bwd",
            lambda: mx.nd._backward_LinearRegressionOutput(a, tgt),
            np_linreg_grad,
            lambda: (tx - tt).mul_(1.0 / N),
        ),
    ]


def optimizer_cases() -> list[Case]:
    lr, mom, wd, rescale = 0.01, 0.9, 1e-4, 1.0 / 128
    w0, g = rand(N, N), rand(N, N)
    # the weights and the momentum are the operators' own state, updated in place: lazynd's copies
    weight, (grad,), state = mx.nd.array(w0), nd(g), mx.nd.zeros((N, N))
    weight2 = mx.nd.array(w0)
    # the references' state on pages too, as lazynd's is (see nd)
    w_np, m_np = aligned(w0), aligned(np.zeros((N, N), np.float32))
    w_np2 = aligned(w0)
    tmp = aligned(np.empty((N, N), np.float32))
    tw, tg, tm = _t(w0.copy()), _t(g), _t(np.zeros((N, N), np.float32))

    def np_sgd() -> np.ndarray:
        # w -= lr * (rescale * g + wd * w): w * (1 - lr * wd) - (lr * rescale) * g, one temporary
        np.multiply(g, np.float32(lr * rescale), out=tmp)
        np.multiply(w_np2, np.float32(1 - lr * wd), out=w_np2)
        return np.subtract(w_np2, tmp, out=w_np2)

    def np_sgd_mom() -> np.ndarray:
        # m = mom * m - lr * (rescale * g + wd * w); w += m
        np.multiply(g, np.float32(lr * rescale), out=tmp)
        np.multiply(m_np, np.float32(mom), out=m_np)
        np.subtract(m_np, tmp, out=m_np)
        np.multiply(w_np, np.float32(lr * wd), out=tmp)
        np.subtract(m_np, tmp, out=m_np)
        return np.add(w_np, m_np, out=w_np)

    def torch_sgd_mom() -> object:
        tm.mul_(mom).sub_(tg * rescale + tw * wd, alpha=lr)
        return tw.add_(tm)

    return [
        Case(
            "optimizer",
            "sgd_update",
            lambda: mx.nd.sgd_update(weight2, grad, out=weight2, lr=lr, wd=wd, rescale_grad=rescale),
            np_sgd,
            lambda: tw.sub_(tg * rescale + tw * wd, alpha=lr),
            check=False,
        ),
        Case(
            "optimizer",
            "sgd_mom_update",
            lambda: mx.nd.sgd_mom_update(
                weight, grad, state, out=weight, lr=lr, momentum=mom, wd=wd, rescale_grad=rescale
            ),
            np_sgd_mom,
            torch_sgd_mom,
            check=False,
        ),
    ]


FAMILIES = {
    "unary": unary_cases,
    "binary": binary_cases,
    "broadcast": broadcast_cases,
    "reduce": reduce_cases,
    "shape": shape_cases,
    "linalg": linalg_cases,
    "nn": nn_cases,
    "conv": conv_cases,
    "loss": loss_cases,
    "optimizer": optimizer_cases,
}


def _timer(fn: Callable[[], object], calls: int, sync: Callable[[object], None] | None) -> Callable[[], None]:
    def run() -> None:
        for _ in range(calls):
            result = fn()
            if sync is not None:
                sync(result)

    return run


def _calls_for(fn: Callable[[], object], at_least: int) -> int:
    """Calls per timing for a case: enough that one timing lasts about ``TIMING_S`` (at least ``at_least``).

    The first call of a timing meets what the previous column left behind (caches, BLAS's
    sleeping threads); over five calls of a 50 us operation that alone adds about 20% to
    whichever column it hits.  Every column of a case gets the same count.
    """
    fn()
    one = best_of(fn, 3)
    return max(at_least, min(MAX_CALLS, int(TIMING_S / max(one, 1e-7))))


def _use(engine: mx.engine.Engine) -> None:
    """Make ``engine`` the process's engine, keeping the other one alive for the next turn."""
    mx.engine.waitall()
    mx.engine._engine = engine


def _check(case: Case) -> None:
    got, want = _as_numpy(case.lazynd()), _as_numpy(case.numpy())
    for g, w in zip(got, want, strict=False):
        # a full reduction is (1,) in MXNet and a 0-d array in NumPy
        g = g.reshape(w.shape) if g.size == w.size == 1 else g
        if g.shape != w.shape or not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3, atol=1e-3):
            raise AssertionError(f"{case.name}: lazynd {g.shape} and the NumPy reference {w.shape} disagree")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=15, help="timings per case and column, taken in turns (best is shown)"
    )
    parser.add_argument("--calls", type=int, default=5, help="calls per timing")
    parser.add_argument("--only", nargs="*", default=None, help=f"families to run, from {list(FAMILIES)}")
    parser.add_argument(
        "--runs", type=int, default=1, help="run the whole table in this many fresh processes; summarise the medians"
    )
    parser.add_argument("--json", default=None, help=argparse.SUPPRESS)  # where a run of --runs leaves its ratios
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    if args.runs > 1:
        summarise_runs(args)
        return

    # one engine of each kind for the whole run, swapped in turn (``set_engine`` would start a
    # new engine's threads each time, and their start-up would land in the timings)
    engines = {"threaded": mx.engine.get_engine(), "naive": mx.engine.NaiveEngine()}
    order = random.Random(0)
    rows = []
    goal_rows: list[tuple[str, float, float]] = []
    for family, make in FAMILIES.items():
        if args.only and family not in args.only:
            continue
        for case in make():
            if case.check:
                _check(case)
            calls = _calls_for(case.numpy, args.calls)
            sync = _sync_for(case.lazynd())
            # the columns are timed in turns, one timing of each per round, so a burst of load
            # on this shared machine hits them alike; each keeps its best
            runs = {
                "threaded": _timer(case.lazynd, calls, sync),
                "naive": _timer(case.lazynd, calls, sync),
                "numpy": _timer(case.numpy, calls, None),
            }
            if torch is not None and case.torch is not None:
                runs["torch"] = _timer(case.torch, calls, None)
            best = dict.fromkeys(runs, float("inf"))
            columns = list(runs)
            for _ in range(args.repeat):
                # a new order each round: what runs right after another column meets the caches
                # (and, after PyTorch, the threads) that column left behind, and no column should
                # always be the one that follows the same neighbour
                order.shuffle(columns)
                for column in columns:
                    run = runs[column]
                    if column in engines:
                        _use(engines[column])
                    best[column] = min(best[column], best_of(run, 1) / calls)
                    if column == "torch":
                        time.sleep(TORCH_SETTLE_S)
            _use(engines["threaded"])
            lz, naive, ref = best["threaded"], best["naive"], best["numpy"]
            if case.goal:
                goal_rows.append((case.name, lz / ref, naive / ref))
            label = case.name if case.goal else case.name + " *"
            row = [family, label, calls, ref * 1e3, lz * 1e3, f"{lz / ref:.2f}", naive * 1e3, f"{naive / ref:.2f}"]
            if "torch" in best:
                pt = best["torch"]
                row += [pt * 1e3, f"{lz / pt:.2f}"]
            else:
                row += ["-", "-"]
            rows.append(row)
    threads = f"NumPy BLAS {BLAS_THREADS} threads, "
    threads += f"torch {torch.__version__} {torch.get_num_threads()} threads" if torch is not None else "no torch"
    print_table(
        f"operators, float32, cpu, best of {args.repeat} timings of 'calls' calls each, ms per call ({threads})",
        [
            "family",
            "op",
            "calls",
            "NumPy ms",
            "lazynd ms",
            "x NumPy",
            "naive ms",
            "x NumPy",
            "torch ms",
            "lazynd x torch",
        ],
        rows,
    )
    print("lazynd: ThreadedEngine (the default); naive: the same calls on NaiveEngine (no hand-off to a worker)")
    print("* no work on the elements (an O(1) view): shown for information, not counted in the goal")
    for column, k in (("ThreadedEngine", 1), ("NaiveEngine", 2)):
        over = [f"{r[0]} {r[k]:.2f}" for r in goal_rows if r[k] > GOAL]
        print(
            f"{column}: {len(goal_rows) - len(over)} of {len(goal_rows)} rows within {GOAL}x of NumPy; over: {', '.join(over) or 'none'}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"op": name, "threaded": t, "naive": n} for name, t, n in goal_rows], f)


def summarise_runs(args: argparse.Namespace) -> None:
    """Run the table in ``args.runs`` fresh processes; print each goal row's median ratio and its range.

    A row's turns all fall within a fraction of a second of one process, so a burst of load,
    or where that process's arrays and NumPy's temporaries happen to land in memory, can move
    a row of a few tens of microseconds by 10-40% in one run; taking turns cannot average that
    out, runs in fresh processes a minute apart do.  Each run's own table is printed as it
    finishes.
    """
    ratios: dict[str, dict[str, list[float]]] = {}
    argv = [a for a in sys.argv[1:] if not a.startswith("--runs")]
    if "--runs" in sys.argv:  # ``--runs K`` as two words
        k = sys.argv.index("--runs")
        argv = sys.argv[1:k] + sys.argv[k + 2 :]
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            path = os.path.join(tmp, f"run{run}.json")
            print(f"\n== run {run + 1} of {args.runs}", flush=True)
            subprocess.run([sys.executable, os.path.abspath(__file__), *argv, "--json", path], check=True)
            with open(path) as f:
                for row in json.load(f):
                    entry = ratios.setdefault(row["op"], {"threaded": [], "naive": []})
                    entry["threaded"].append(row["threaded"])
                    entry["naive"].append(row["naive"])
    table = []
    for op, entry in ratios.items():
        cells: list[object] = [op]
        for column in ("threaded", "naive"):
            values = entry[column]
            cells += [f"{statistics.median(values):.2f}", f"{min(values):.2f}-{max(values):.2f}"]
        table.append(cells)
    print_table(
        f"operators: lazynd / hand NumPy over {args.runs} runs in fresh processes (each run: best of {args.repeat})",
        ["op", "threaded median", "threaded range", "naive median", "naive range"],
        table,
    )
    for column in ("threaded", "naive"):
        medians = {op: statistics.median(entry[column]) for op, entry in ratios.items()}
        over = [f"{op} {m:.2f}" for op, m in medians.items() if m > GOAL]
        ever = sum(1 for entry in ratios.values() if max(entry[column]) > GOAL)
        print(
            f"{column}: {len(medians) - len(over)} of {len(medians)} rows within {GOAL}x of NumPy in the median run; "
            f"over: {', '.join(over) or 'none'} ({ever} rows over in at least one run)"
        )


if __name__ == "__main__":
    main()

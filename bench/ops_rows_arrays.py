"""The operator benchmark's rows on plain arrays: elementwise, broadcast, reduce, shape and linear-algebra operators."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops_case import RNG, TF, Case, N, aligned, nd, rand, torch, torch_index, torch_view  # noqa: E402

import lazynd as mx  # noqa: E402


# -- elementwise -------------------------------------------------------------------------------
def unary_cases() -> list[Case]:
    x = rand(N, N)
    xp = rand(N, N, low=0.1, high=2.0)
    a, ap = nd(x, xp)
    tx, txp = torch_view(x), torch_view(xp)

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
    tx, ty = torch_view(x), torch_view(y)
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
    tx, tr, tc = torch_view(x), torch_view(row), torch_view(col)
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
    (a,), tx = nd(x), torch_view(x)

    def np_topk10() -> np.ndarray:
        # the ten largest of each row: a partition, then a sort of those ten (largest first)
        picked = np.argpartition(x, N - 10, axis=1)[:, N - 10 :]
        order = np.argsort(-np.take_along_axis(x, picked, axis=1), axis=1, kind="stable")
        return np.take_along_axis(picked, order, axis=1).astype(np.float32)

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
        Case("reduce", "topk k=10 axis=1", lambda: mx.nd.topk(a, k=10), np_topk10, lambda: tx.topk(10, 1)[1]),
    ]


def shape_cases() -> list[Case]:
    x = rand(N, N)
    half1, half2 = rand(N, N // 2), rand(N, N // 2)
    idx = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    labels = aligned(RNG.integers(0, N, size=N).astype(np.float32))
    cond = aligned((rand(N, N) > 0).astype(np.float32))
    zeros = aligned(np.zeros((N, N), np.float32))
    a, h1, h2, i, lab, cnd, zs = nd(x, half1, half2, idx, labels, cond, zeros)
    tx, th1, th2, ti, tcond, tzeros = (
        torch_view(x),
        torch_view(half1),
        torch_view(half2),
        torch_index(idx),
        torch_view(cond),
        torch_view(zeros),
    )

    # take's gradient: the rows of a head gradient summed into the rows they were taken from
    head, grad = rand(N, N), aligned(np.zeros((N, N), np.float32))
    rows = idx.astype(np.intp)
    hd, gd = nd(head, grad)
    t_head, t_grad = torch_view(head), torch_view(grad)

    def np_take_grad() -> np.ndarray:
        grad.fill(0)
        np.add.at(grad, rows, head)
        return grad

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
        Case(
            "shape",
            "take rows gradient (scatter-add)",
            lambda: mx.nd._backward_take(hd, i, a, out=gd),
            np_take_grad,
            lambda: t_grad.zero_().index_add_(0, ti, t_head),
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
    tx, tw, tbx, tby = torch_view(x), torch_view(w), torch_view(bx), torch_view(by)
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

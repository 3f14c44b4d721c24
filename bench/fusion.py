"""Elementwise fusion: a chain of 5 elementwise ops on 1M float32 elements, fused vs unfused.

Run: ``PYTHONPATH=. python bench/fusion.py [log2 of the size, default 20]``.  Each row binds the same symbol
(inference, ``grad_req='null'``) with ``LAZYND_SYM_FUSION`` on or off and times
``forward`` + ``wait_to_read``; hand-written NumPy (temporaries per step, and with
``out=`` buffers) is measured in the same run.  Milliseconds, best of N.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402
import lazynd_sym as sym  # noqa: E402

N = 1 << (int(sys.argv[1]) if len(sys.argv) > 1 else 20)
REPEAT = 20


def chain() -> sym.Symbol:
    x = sym.Variable("x")
    return sym.tanh(sym.relu(sym.exp(x * 0.5) - 1) * 3)  # mul_scalar, exp, minus_scalar, relu, mul_scalar, tanh


def cheap_chain() -> sym.Symbol:
    x, y = sym.Variable("x"), sym.Variable("y")
    return sym.relu((x * 0.5 + y) * 3 - 1) + y  # 6 memory-bound ops, no transcendental


def executor(net: sym.Symbol, fuse: bool, ctx: mx.Context) -> object:
    os.environ["LAZYND_SYM_FUSION"] = "1" if fuse else "0"
    ex = net.simple_bind(ctx, grad_req="null", **{name: (N,) for name in net.list_arguments()})
    for arr in ex.arg_dict.values():
        arr[:] = np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32)
    return ex


def numpy_temporaries(v: np.ndarray) -> np.ndarray:
    return np.tanh(np.maximum(np.exp(v * 0.5) - 1, 0) * 3)


def numpy_out(v: np.ndarray, out: np.ndarray) -> np.ndarray:
    np.multiply(v, 0.5, out=out)
    np.exp(out, out=out)
    np.subtract(out, 1, out=out)
    np.maximum(out, 0, out=out)
    np.multiply(out, 3, out=out)
    return np.tanh(out, out=out)


def main() -> None:
    ctxs = [mx.cpu()] + ([mx.gpu(0)] if mx.num_gpus() > 0 else [])
    rows = []
    v = np.random.default_rng(0).uniform(-1, 1, N).astype(np.float32)
    out = np.empty_like(v)
    rows.append(["numpy exp/tanh chain, temporaries", "cpu", 6, best_of(lambda: numpy_temporaries(v), REPEAT) * 1e3])
    rows.append(["numpy exp/tanh chain, out= buffer", "cpu", 6, best_of(lambda: numpy_out(v, out), REPEAT) * 1e3])
    for ctx in ctxs:
        for (label, net), fuse in [(c, f) for c in (("exp/tanh chain", chain()), ("cheap chain", cheap_chain()))
                                   for f in (False, True)]:  # fmt: skip
            ex = executor(net, fuse, ctx)

            def run(ex: object = ex) -> None:
                ex.forward()[0].wait_to_read()

            run()
            rows.append(
                [
                    f"lazynd_sym {label}, {'fused' if fuse else 'unfused'}",
                    str(ctx),
                    len(ex._forward_order),
                    best_of(run, REPEAT) * 1e3,
                    ex.planned_bytes // 2**20,
                ]  # fmt: skip
            )
    for row in rows[:2]:
        row.append("-")
    print_table(
        f"Elementwise chains of 6 ops on {N} float32, forward (inference), best of {REPEAT}",
        ["version", "device", "kernels", "ms", "planned MB"],
        rows,
    )


if __name__ == "__main__":
    main()

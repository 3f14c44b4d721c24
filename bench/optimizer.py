"""Fused optimizer updates vs the same update as separate NDArray ops vs hand-written NumPy.

Run: ``python bench/optimizer.py [--size 1000000] [--repeat 50]``.  Prints one
table; the goal (issue 5) is fused <= 1.1x hand NumPy on a 1M-element parameter.

- "hand NumPy": the update as a careful NumPy user writes it: in place, ufuncs with
  ``out=`` into preallocated temporaries, constants folded, float32 throughout;
  no more NumPy passes than the fused CPU kernel.  This is the baseline.
- "hand NumPy, blocked": the same function applied to cache-sized blocks, as the
  fused kernel does; the best NumPy can do here, shown to separate the kernel's
  blocking gain from the engine's costs.
- "kernel only": the operator's CPU kernel called directly, without the engine.
- "fused ..." pushes the operator through ``lazynd.nd`` and the engine (a 1M-element
  update runs on a worker thread); "via Updater" adds ``Optimizer.update``.
  ``LAZYND_ENGINE=naive`` runs every operator on the calling thread.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np

import lazynd as mx
from lazynd.context import cpu
from lazynd.ops import optimizer_ops, registry
from lazynd.runtime import kernel_context

LR, MOMENTUM, WD, RESCALE = 0.01, 0.9, 1e-4, 1.0 / 128
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


def best_time(fn: Callable[[], None], repeat: int, sync: Callable[[], None] = lambda: None) -> float:
    """Best of ``repeat`` runs of ``fn`` in seconds (one warm-up first)."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def blocked(update: Callable[..., None], arrays: list[np.ndarray], n_temporaries: int) -> Callable[[], None]:
    """``update(*arrays, *temporaries)`` over blocks of the fused kernels' size, reusing block-sized temporaries."""
    step = optimizer_ops.BLOCK_BYTES // arrays[0].itemsize
    size = arrays[0].size
    temporaries = [np.empty(min(step, size), arrays[0].dtype) for _ in range(n_temporaries)]
    blocks = []
    for begin in range(0, size, step):
        n = min(step, size - begin)
        blocks.append([a[begin : begin + n] for a in arrays] + [t[:n] for t in temporaries])

    def run() -> None:
        for block in blocks:
            update(*block)

    return run


def sgd_mom_numpy(w: np.ndarray, g: np.ndarray, m: np.ndarray, tmp: np.ndarray) -> None:
    """6 passes, as the fused kernel: mom = momentum*mom - lr*rescale*g - lr*wd*w; w += mom."""
    np.multiply(g, LR * RESCALE, out=tmp)
    m *= MOMENTUM
    m -= tmp
    np.multiply(w, LR * WD, out=tmp)
    m -= tmp
    w += m


def adam_numpy(
    w: np.ndarray, g: np.ndarray, mean: np.ndarray, var: np.ndarray, eff: np.ndarray, tmp: np.ndarray
) -> None:
    """14 passes, as the fused kernel (eff carries sqrt(1 - beta2), so its square is var's increment)."""
    root = math.sqrt(1 - BETA2)
    np.multiply(g, root * RESCALE, out=eff)
    np.multiply(w, root * WD, out=tmp)
    eff += tmp
    mean *= BETA1
    np.multiply(eff, (1 - BETA1) / root, out=tmp)
    mean += tmp
    np.square(eff, out=eff)
    var *= BETA2
    var += eff
    np.sqrt(var, out=eff)
    eff += EPS
    np.divide(mean, eff, out=eff)
    eff *= LR
    w -= eff


def sgd_mom_cases(size: int) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(0)
    w, g = rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32)
    m, tmp = np.zeros(size, np.float32), np.empty(size, np.float32)
    weight, grad, mom = mx.nd.array(w), mx.nd.array(g), mx.nd.zeros((size,))

    def fused() -> None:
        mx.nd.sgd_mom_update(weight, grad, mom, out=weight, lr=LR, momentum=MOMENTUM, wd=WD, rescale_grad=RESCALE)

    op = registry.get("sgd_mom_update")
    attrs = op.parse({"lr": LR, "momentum": MOMENTUM, "wd": WD, "rescale_grad": RESCALE})
    raw = [weight.data_array, grad.data_array, mom.data_array]

    def kernel_only() -> None:
        op.forward(kernel_context(cpu()), attrs, raw, raw[:1], [])

    updater = mx.optimizer.get_updater(
        mx.optimizer.create("sgd", learning_rate=LR, momentum=MOMENTUM, wd=WD, rescale_grad=RESCALE)
    )
    u_weight, u_grad = mx.nd.array(w), mx.nd.array(g)

    def via_updater() -> None:
        updater(0, u_grad, u_weight)

    def separate() -> None:
        mom[:] = mom * MOMENTUM - (grad * RESCALE + weight * WD) * LR
        weight[:] = weight + mom

    return {
        "hand NumPy": lambda: sgd_mom_numpy(w, g, m, tmp),
        "hand NumPy, blocked": blocked(sgd_mom_numpy, [w, g, m], 1),
        "kernel only": kernel_only,
        "fused sgd_mom_update": fused,
        "fused, via Updater": via_updater,
        "separate NDArray ops": separate,
    }


def adam_cases(size: int) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(1)
    w, g = rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32)
    mean, var = np.zeros(size, np.float32), np.zeros(size, np.float32)
    eff, tmp = np.empty(size, np.float32), np.empty(size, np.float32)
    weight, grad = mx.nd.array(w), mx.nd.array(g)
    nd_mean, nd_var = mx.nd.zeros((size,)), mx.nd.zeros((size,))

    def fused() -> None:
        mx.nd.adam_update(weight, grad, nd_mean, nd_var, out=weight, lr=LR, wd=WD, rescale_grad=RESCALE)

    op = registry.get("adam_update")
    attrs = op.parse({"lr": LR, "wd": WD, "rescale_grad": RESCALE})
    raw = [weight.data_array, grad.data_array, nd_mean.data_array, nd_var.data_array]

    def kernel_only() -> None:
        op.forward(kernel_context(cpu()), attrs, raw, raw[:1], [])

    updater = mx.optimizer.get_updater(mx.optimizer.create("adam", learning_rate=LR, wd=WD, rescale_grad=RESCALE))
    u_weight, u_grad = mx.nd.array(w), mx.nd.array(g)

    def via_updater() -> None:
        updater(0, u_grad, u_weight)

    def separate() -> None:
        eff = grad * RESCALE + weight * WD
        nd_mean[:] = nd_mean * BETA1 + eff * (1 - BETA1)
        nd_var[:] = nd_var * BETA2 + eff * eff * (1 - BETA2)
        weight[:] = weight - nd_mean * LR / (nd_var**0.5 + EPS)

    return {
        "hand NumPy": lambda: adam_numpy(w, g, mean, var, eff, tmp),
        "hand NumPy, blocked": blocked(adam_numpy, [w, g, mean, var], 2),
        "kernel only": kernel_only,
        "fused adam_update": fused,
        "fused, via Updater": via_updater,
        "separate NDArray ops": separate,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    engine = type(mx.engine.get_engine()).__name__
    print(f"parameter of {args.size:,} float32 elements, best of {args.repeat}, cpu, {engine}")
    print(f"{'update':<10} {'implementation':<24} {'ms':>8} {'x NumPy':>8}")
    for label, cases in (("sgd_mom", sgd_mom_cases(args.size)), ("adam", adam_cases(args.size))):
        base = None
        for name, fn in cases.items():
            seconds = best_time(fn, args.repeat, mx.nd.waitall)
            base = base or seconds
            print(f"{label:<10} {name:<24} {seconds * 1e3:8.3f} {seconds / base:8.2f}")


if __name__ == "__main__":
    main()

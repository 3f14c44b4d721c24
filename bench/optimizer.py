"""Fused optimizer updates vs the same update as separate NDArray ops vs hand-written NumPy.

Run: ``python bench/optimizer.py [--size 1000000] [--repeat 50]``.  Prints one
table; the goal (issue 5) is fused <= 1.1x hand NumPy on a 1M-element parameter.
"kernel only" calls the operator's CPU kernel directly, without the engine, to
separate the kernel's cost from the hand-off to a worker thread
(``LAZYND_ENGINE=naive`` runs every operator on the calling thread).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import lazynd as mx
from lazynd.context import cpu
from lazynd.ndarray.dispatch import kernel_context
from lazynd.ops import registry

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


def sgd_mom_cases(size: int) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(0)
    w, g = rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32)
    m = np.zeros(size, np.float32)
    weight, grad, mom = mx.nd.array(w), mx.nd.array(g), mx.nd.zeros((size,))

    def hand_numpy() -> None:
        m[:] *= MOMENTUM
        m[:] -= LR * (RESCALE * g + WD * w)
        w[:] += m

    def fused() -> None:
        mx.nd.sgd_mom_update(weight, grad, mom, out=weight, lr=LR, momentum=MOMENTUM, wd=WD, rescale_grad=RESCALE)

    op = registry.get("sgd_mom_update")
    attrs = op.parse({"lr": LR, "momentum": MOMENTUM, "wd": WD, "rescale_grad": RESCALE})
    raw = [weight._data, grad._data, mom._data]

    def kernel_only() -> None:
        op.forward(kernel_context(cpu()), attrs, raw, raw[:1], [])

    def separate() -> None:
        mom[:] = mom * MOMENTUM - (grad * RESCALE + weight * WD) * LR
        weight[:] = weight + mom

    return {
        "hand NumPy": hand_numpy,
        "fused sgd_mom_update": fused,
        "kernel only": kernel_only,
        "separate NDArray ops": separate,
    }


def adam_cases(size: int) -> dict[str, Callable[[], None]]:
    rng = np.random.default_rng(1)
    w, g = rng.standard_normal(size).astype(np.float32), rng.standard_normal(size).astype(np.float32)
    mean, var = np.zeros(size, np.float32), np.zeros(size, np.float32)
    weight, grad = mx.nd.array(w), mx.nd.array(g)
    nd_mean, nd_var = mx.nd.zeros((size,)), mx.nd.zeros((size,))

    def hand_numpy() -> None:
        eff = RESCALE * g
        eff += WD * w
        mean[:] *= BETA1
        mean[:] += (1 - BETA1) * eff
        var[:] *= BETA2
        np.square(eff, out=eff)
        eff *= 1 - BETA2
        var[:] += eff
        np.sqrt(var, out=eff)
        eff += EPS
        np.divide(mean, eff, out=eff)
        eff *= LR
        w[:] -= eff

    def fused() -> None:
        mx.nd.adam_update(weight, grad, nd_mean, nd_var, out=weight, lr=LR, wd=WD, rescale_grad=RESCALE)

    op = registry.get("adam_update")
    attrs = op.parse({"lr": LR, "wd": WD, "rescale_grad": RESCALE})
    raw = [weight._data, grad._data, nd_mean._data, nd_var._data]

    def kernel_only() -> None:
        op.forward(kernel_context(cpu()), attrs, raw, raw[:1], [])

    def separate() -> None:
        eff = grad * RESCALE + weight * WD
        nd_mean[:] = nd_mean * BETA1 + eff * (1 - BETA1)
        nd_var[:] = nd_var * BETA2 + eff * eff * (1 - BETA2)
        weight[:] = weight - nd_mean * LR / (nd_var**0.5 + EPS)

    return {
        "hand NumPy": hand_numpy,
        "fused adam_update": fused,
        "kernel only": kernel_only,
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

"""``weight[:] = lr * grad`` (a temporary each step) vs the preallocated in-place update, 1,000 steps on (128, 64)."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402

STEPS = 1000
SHAPE = (128, 64)


def main() -> None:
    weight, grad = mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)
    tmp = mx.nd.zeros(SHAPE)
    lr = 0.01

    def with_temporary() -> None:
        for _ in range(STEPS):
            weight[:] = lr * grad
        weight.wait_to_read()

    def preallocated() -> None:
        for _ in range(STEPS):
            mx.nd._mul_scalar(grad, scalar=lr, out=tmp)
            tmp.copyto(weight)
        weight.wait_to_read()

    wn, gn = np.ones(SHAPE, np.float32), np.ones(SHAPE, np.float32)

    def numpy_temporary() -> None:
        for _ in range(STEPS):
            wn[:] = lr * gn

    t_tmp, t_pre, t_np = best_of(with_temporary), best_of(preallocated), best_of(numpy_temporary)
    print_table(
        f"temporary allocation: weight[:] = lr * grad, {STEPS} steps, {SHAPE}",
        ["variant", "us/step", "ratio vs preallocated"],
        [
            ["lazynd, temporary each step", t_tmp / STEPS * 1e6, f"{t_tmp / t_pre:.2f}x"],
            ["lazynd, preallocated (out=)", t_pre / STEPS * 1e6, "1.00x"],
            ["NumPy, temporary each step", t_np / STEPS * 1e6, f"{t_np / t_pre:.2f}x"],
        ],
    )


if __name__ == "__main__":
    main()

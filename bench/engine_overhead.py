"""Per-op cost of ``c = a + b`` on 16-element float32 arrays: 100,000 ops pushed, then one wait.

Compares lazynd (run at push, and every operation through the worker queue), NumPy and PyTorch (when installed).
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402
from lazynd.runtime import device_push  # noqa: E402

N = 100_000


def run_lazynd() -> None:
    a, b = mx.nd.ones((16,)), mx.nd.ones((16,))
    c = a
    for _ in range(N):
        c = a + b
    c.wait_to_read()


def run_numpy() -> None:
    a, b = np.ones(16, np.float32), np.ones(16, np.float32)
    for _ in range(N):
        a + b


def main() -> None:
    rows = []
    t = best_of(run_lazynd)
    rows.append(["lazynd (threaded engine, run at push)", t / N * 1e6])
    saved = device_push.INLINE_MAX_ELEMENTS
    device_push.INLINE_MAX_ELEMENTS = -1
    t = best_of(run_lazynd, 3)
    rows.append(["lazynd (every op through the worker queue)", t / N * 1e6])
    device_push.INLINE_MAX_ELEMENTS = saved
    mx.engine.set_engine("naive")
    rows.append(["lazynd (NaiveEngine)", best_of(run_lazynd) / N * 1e6])
    mx.engine.set_engine("threaded")
    rows.append(["NumPy a + b", best_of(run_numpy) / N * 1e6])
    try:
        import torch

        torch.set_num_threads(1)
        ta, tb = torch.ones(16), torch.ones(16)

        def run_torch() -> None:
            for _ in range(N):
                ta + tb

        rows.append(["PyTorch eager a + b", best_of(run_torch) / N * 1e6])
    except ImportError:
        rows.append(["PyTorch", "not installed"])
    print_table(f"engine overhead: c = a + b, 16 float32, {N:,} ops then one wait", ["variant", "us/op"], rows)


if __name__ == "__main__":
    main()

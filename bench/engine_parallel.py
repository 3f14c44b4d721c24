"""Two independent 1024x1024 float32 dots (BLAS on one thread) pushed lazily, vs run one after the other."""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402

N = 1024


def main() -> None:
    rng = np.random.default_rng(0)
    x = [mx.nd.array(rng.standard_normal((N, N))) for _ in range(4)]
    xn = [a.asnumpy() for a in x]

    def lazy_pair() -> None:
        c1 = mx.nd.dot(x[0], x[1])
        c2 = mx.nd.dot(x[2], x[3])
        c1.wait_to_read()
        c2.wait_to_read()

    def serial_pair() -> None:
        c1 = mx.nd.dot(x[0], x[1])
        c1.wait_to_read()
        c2 = mx.nd.dot(x[2], x[3])
        c2.wait_to_read()

    def numpy_pair() -> None:
        xn[0] @ xn[1]
        xn[2] @ xn[3]

    lazy_pair()
    t_lazy, t_serial, t_np = best_of(lazy_pair), best_of(serial_pair), best_of(numpy_pair)
    print_table(
        f"engine parallelism: two independent {N}x{N} float32 dots, BLAS on one thread, {os.cpu_count()} cores",
        ["variant", "ms", "speed-up vs serial"],
        [
            ["lazynd, both pushed then waited", t_lazy * 1e3, f"{t_serial / t_lazy:.2f}x"],
            ["lazynd, one after the other", t_serial * 1e3, "1.00x"],
            ["NumPy, one after the other", t_np * 1e3, f"{t_serial / t_np:.2f}x"],
        ],
    )


if __name__ == "__main__":
    main()

"""Two independent square float32 dots (BLAS on one thread) pushed lazily, vs run one after the other.

``python bench/engine_parallel.py [--sizes 256,512,1024]``: one row per size (default 1024, the
issue's figure).  A product's multiply-adds decide whether the engine hands it to a worker
(lazynd.runtime.device_push.SMALL_INLINE_MAX), so products from 256 x 256 on run side by side.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _table import best_of, print_table  # noqa: E402

import lazynd as mx  # noqa: E402


def pair_times(n: int) -> tuple[float, float, float]:
    """Best seconds of two independent ``n x n`` dots: pushed together, one after the other, NumPy."""
    rng = np.random.default_rng(0)
    x = [mx.nd.array(rng.standard_normal((n, n))) for _ in range(4)]
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
    return best_of(lazy_pair), best_of(serial_pair), best_of(numpy_pair)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024", help="matrix sizes, comma-separated")
    sizes = [int(v) for v in parser.parse_args().sizes.split(",")]
    rows = []
    for n in sizes:
        t_lazy, t_serial, t_np = pair_times(n)
        rows.append([f"{n}x{n}", t_lazy * 1e3, t_serial * 1e3, t_np * 1e3, f"{t_serial / t_lazy:.2f}x"])
    print_table(
        f"engine parallelism: two independent float32 dots, BLAS on one thread, {os.cpu_count()} cores",
        [
            "size",
            "lazynd, both pushed then waited (ms)",
            "lazynd, one after the other (ms)",
            "NumPy, one after the other (ms)",
            "speed-up",
        ],
        rows,
    )


if __name__ == "__main__":
    main()

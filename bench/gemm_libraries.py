"""The GEMMs of one MNIST MLP training batch: NumPy's BLAS, MKL through lazynd's route, PyTorch's.

The user loops (``user_loops.py``) compare lazynd with hand NumPy and PyTorch eager. Hand NumPy
and, by default, lazynd's kernels run NumPy's BLAS (OpenBLAS in NumPy's wheels); with
``LAZYND_HOST_BLAS=mkl`` lazynd's CPU route hands them to MKL (``lazynd/backend/host_gemm.py``,
the column "MKL" here, with the route's rule for what it declines); PyTorch's CPU wheels run
their own (MKL or oneDNN). This benchmark times the eight products one
batch of the 784-128-64-10 MLP makes (forward, and the data and weight gradients), each library
in its own process (their thread pools would otherwise share the cores), and prints one table.

Run: ``python bench/gemm_libraries.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

BATCH = 128
SIZES = [784, 128, 64, 10]
# each product of one batch as the kernels make it (MXNet's (out, in) weights): the forward
# x W^T, the data gradient g W and the weight gradient g^T x, as (name, stored shapes of the two
# operands, whether each is used transposed); the first layer's data gradient is not needed
PRODUCTS: list[tuple[str, tuple[int, int], tuple[int, int], bool, bool]] = []
for _i in range(3):
    _din, _dout = SIZES[_i], SIZES[_i + 1]
    PRODUCTS.append((f"fc{_i + 1} forward", (BATCH, _din), (_dout, _din), False, True))
for _i in reversed(range(3)):
    _din, _dout = SIZES[_i], SIZES[_i + 1]
    if _i > 0:
        PRODUCTS.append((f"fc{_i + 1} data grad", (BATCH, _dout), (_dout, _din), False, False))
    PRODUCTS.append((f"fc{_i + 1} weight grad", (BATCH, _dout), (BATCH, _din), True, False))


def _best_us(fn, number: int = 200, repeat: int = 15) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


def run_library(library: str) -> dict[str, float]:
    """Best time (us) of each product with ``library`` ('numpy', 'mkl' or 'torch'), in this process."""
    import numpy as np

    rng = np.random.default_rng(0)
    times = {}
    for name, a_shape, b_shape, ta, tb in PRODUCTS:
        a = rng.standard_normal(a_shape, dtype=np.float32)
        b = rng.standard_normal(b_shape, dtype=np.float32)
        a, b = (a.T if ta else a), (b.T if tb else b)
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        if library == "numpy":
            times[name] = _best_us(lambda a=a, b=b, out=out: np.matmul(a, b, out=out))
        elif library == "mkl":
            from lazynd.backend.blas import BLAS_THREADS
            from lazynd.backend.host_gemm import MklGemm, load_mkl

            library_handle = load_mkl()
            if library_handle is None:
                raise SystemExit("MKL is not installed (pip install mkl)")
            gemm = MklGemm(library_handle, BLAS_THREADS)
            times[name] = _best_us(lambda a=a, b=b, out=out: gemm(a, b, out) or np.matmul(a, b, out=out))
        else:
            import torch

            ta_, tb_, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
            times[name] = _best_us(lambda x=ta_, y=tb_, z=tout: torch.mm(x, y, out=z))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both libraries; the table gives minima")
    parser.add_argument("--library", choices=("numpy", "mkl", "torch"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.library:
        print(json.dumps(run_library(opts.library)))
        return
    best: dict[str, dict[str, float]] = {"numpy": {}, "mkl": {}, "torch": {}}
    for _ in range(opts.rounds):
        for library in best:
            command = [sys.executable, __file__, "--library", library]
            result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
            for name, us in result.items():
                best[library][name] = min(best[library].get(name, us), us)
    print(f"GEMMs of one MLP batch {BATCH}, default threads, best of {opts.rounds} rounds (us)")
    print("| product | NumPy's BLAS | MKL (LAZYND_HOST_BLAS=mkl) | PyTorch's | MKL / PyTorch |")
    print("|---|---|---|---|---|")
    for name, *_ in PRODUCTS:
        x, z, y = best["numpy"][name], best["mkl"][name], best["torch"][name]
        print(f"| {name} | {x:.1f} | {z:.1f} | {y:.1f} | {z / y:.2f}x |")
    x, z, y = (sum(best[library].values()) for library in ("numpy", "mkl", "torch"))
    print(f"| one batch | {x:.1f} | {z:.1f} | {y:.1f} | {z / y:.2f}x |")


if __name__ == "__main__":
    main()

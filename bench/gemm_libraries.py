"""The GEMMs of one MNIST MLP training batch: NumPy's BLAS, lazynd's route (OpenBLAS or MKL), PyTorch's.

The user loops (``user_loops.py``) compare lazynd with hand NumPy and PyTorch eager. Hand NumPy
runs NumPy's BLAS (OpenBLAS in NumPy's wheels) on its own threads; lazynd's CPU route runs the
same BLAS, timing each product for stalls (``lazynd/backend/host_threads.py``), or with
``LAZYND_HOST_BLAS=mkl`` hands them to MKL (``lazynd/backend/host_gemm.py``); PyTorch's CPU
wheels run their own (MKL or oneDNN). This benchmark times the eight products one
batch of the 784-128-64-10 MLP makes (forward, and the data and weight gradients), each library
in its own process (their thread pools would otherwise share the cores), and prints one table.

The first column runs hand NumPy's products in its own layout (weights stored ``(in, out)``: the
forward ``x W``), the second the same BLAS on MXNet's layout, as lazynd must (``x W^T``).

Run: ``python bench/gemm_libraries.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
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
# the same products in hand NumPy's layout, weights stored (in, out): the forward x W, the data
# gradient g W^T and the weight gradient x^T g (what MXNet's layout costs shows beside it)
OWN_LAYOUT: dict[str, tuple[tuple[int, int], tuple[int, int], bool, bool]] = {}
for _i in range(3):
    _din, _dout = SIZES[_i], SIZES[_i + 1]
    OWN_LAYOUT[f"fc{_i + 1} forward"] = ((BATCH, _din), (_din, _dout), False, False)
    OWN_LAYOUT[f"fc{_i + 1} data grad"] = ((BATCH, _dout), (_din, _dout), False, True)
    OWN_LAYOUT[f"fc{_i + 1} weight grad"] = ((BATCH, _din), (BATCH, _dout), True, False)


def _best_us(fn, number: int = 200, repeat: int = 15) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


# the columns: (library, the environment of its process)
LIBRARIES = {
    "numpy-own-layout": {},  # hand NumPy's products in its own layout (weights (in, out))
    "numpy": {},  # NumPy's BLAS on its own threads (hand NumPy's products)
    "lazynd": {},  # lazynd's CPU route as it comes: NumPy's BLAS, each product timed for stalls
    "lazynd-mkl": {"LAZYND_HOST_BLAS": "mkl"},  # the same route with MKL computing the products
    "torch": {},
}


def run_library(library: str) -> dict[str, float]:
    """Best time (us) of each product with ``library`` (a key of :data:`LIBRARIES`), in this process."""
    import numpy as np

    rng = np.random.default_rng(0)
    times = {}
    for name, a_shape, b_shape, ta, tb in PRODUCTS:
        if library == "numpy-own-layout":
            a_shape, b_shape, ta, tb = OWN_LAYOUT[name]
        a = rng.standard_normal(a_shape, dtype=np.float32)
        b = rng.standard_normal(b_shape, dtype=np.float32)
        a, b = (a.T if ta else a), (b.T if tb else b)
        out = np.empty((a.shape[0], b.shape[1]), np.float32)
        if library.startswith("numpy"):
            times[name] = _best_us(lambda a=a, b=b, out=out: np.matmul(a, b, out=out))
        elif library.startswith("lazynd"):
            from lazynd.backend import cpu_backend

            times[name] = _best_us(lambda a=a, b=b, out=out: cpu_backend.matmul(a, b, out))
        else:
            import torch

            ta_, tb_, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
            times[name] = _best_us(lambda x=ta_, y=tb_, z=tout: torch.mm(x, y, out=z))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every library; the table gives minima")
    parser.add_argument("--library", choices=tuple(LIBRARIES), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.library:
        print(json.dumps(run_library(opts.library)))
        return
    best: dict[str, dict[str, float]] = {library: {} for library in LIBRARIES}
    for _ in range(opts.rounds):
        for library, env in LIBRARIES.items():
            command = [sys.executable, __file__, "--library", library]
            run = subprocess.run(command, capture_output=True, text=True, check=True, env={**os.environ, **env})
            for name, us in json.loads(run.stdout).items():
                best[library][name] = min(best[library].get(name, us), us)
    print(f"GEMMs of one MLP batch {BATCH}, default threads, best of {opts.rounds} rounds (us)")
    print(
        "| product | NumPy's BLAS, its own layout | NumPy's BLAS | lazynd's route | lazynd's route, MKL | PyTorch's"
        " | lazynd / PyTorch |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = [(name, *(best[library][name] for library in LIBRARIES)) for name, *_ in PRODUCTS]
    rows.append(("one batch", *(sum(best[library].values()) for library in LIBRARIES)))
    for name, own_us, numpy_us, lazynd_us, mkl_us, torch_us in rows:
        print(
            f"| {name} | {own_us:.1f} | {numpy_us:.1f} | {lazynd_us:.1f} | {mkl_us:.1f} | {torch_us:.1f}"
            f" | {lazynd_us / torch_us:.2f}x |"
        )


if __name__ == "__main__":
    main()
